/* Work-imbalance patterns shared by the timing kernel (spin) and the
 * vector-scalar family: the virtual cost of one logical block (a tile of
 * blockDim elements) as a function of its index, the same on both backends
 * so `ctasim compare` and hardware runs see the same work. */
#ifndef CTASIM_KERNELS_IMBALANCE_H
#define CTASIM_KERNELS_IMBALANCE_H

#include "ctasim/kernel.h"

#define KWORK_NONE         0 /* every block costs ns */
#define KWORK_ONE_IN_SEVEN 1 /* blocks 0, 7, 14, ... cost 4 * ns */
#define KWORK_HEAVY_TAIL   2 /* Pareto multiplier, see kwork_cost_ns */

/* The heavy tail is a Pareto distribution (shape 1, scale 1) capped at
 * KWORK_TAIL_CAP: median 2x, mean 1 + ln(32) = 4.5x, one block in 32 at the
 * cap. Integer arithmetic only, so the simulator and a GPU agree exactly. */
#define KWORK_TAIL_CAP 32u

/* The SASS instructions a warp issues in kwork_cost_ns beyond what `none`
 * issues, for the launch's issue_ops (ctasim/sim.h), by whether the index
 * is a full 64-bit value (`wide`: vecscale_fixed_blocks' tile) or a 32-bit
 * one widened (blockIdx.x), whose high half the compiler knows is 0:
 * nvcc -arch=sm_90 of one kernel per pattern that stores
 * kwork_cost_ns(pattern, idx, ns), the non-NOP instructions of each
 * kernel's .text against `none`'s (9). A 64-bit `idx % 7` is a
 * multiply-high and a multiply emulated by 32-bit multiply-adds (36); of
 * a widened index, a 32-bit multiply-high (21); the hash, three 64-bit
 * multiplies and a division (54 either way). tools/gpu/kwork-sass-count.sh
 * counts them. */
#define KWORK_ISSUE_ONE_IN_SEVEN    27u
#define KWORK_ISSUE_ONE_IN_SEVEN_32 12u
#define KWORK_ISSUE_HEAVY_TAIL      45u
static inline unsigned kwork_issue_ops(int pattern, int wide)
{
	if (pattern == KWORK_ONE_IN_SEVEN)
		return wide ? KWORK_ISSUE_ONE_IN_SEVEN : KWORK_ISSUE_ONE_IN_SEVEN_32;
	return pattern == KWORK_HEAVY_TAIL ? KWORK_ISSUE_HEAVY_TAIL : 0u;
}

/* Virtual cost of logical block `idx` for a base cost of `ns`. The heavy
 * tail draws from a hash of the index alone, so a block costs the same
 * whichever physical block (or stealing block) processes it. */
CTA_HOST_DEVICE unsigned long long kwork_cost_ns(int pattern, unsigned long long idx,
                                                 unsigned long long ns)
{
	if (pattern == KWORK_ONE_IN_SEVEN)
		return idx % 7 == 0 ? 4 * ns : ns;
	if (pattern == KWORK_HEAVY_TAIL) {
		/* splitmix64 finaliser: a well-mixed 64-bit hash of the index. */
		unsigned long long z = idx + 0x9E3779B97F4A7C15ull;
		z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
		z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
		z ^= z >> 31;
		/* u = u24 / 2^24 in (0, 1]; the multiplier 1/u in 1/64 units. */
		unsigned long long u24 = (z >> 40) + 1;
		unsigned long long f64 = (1ull << 30) / u24;
		if (f64 > 64ull * KWORK_TAIL_CAP)
			f64 = 64ull * KWORK_TAIL_CAP;
		return ns * f64 / 64;
	}
	return ns;
}

#endif
