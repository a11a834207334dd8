/* The occupancy calculator: how many blocks of one shape fit on an SM at
 * once, following the rules of cudaOccupancyMaxActiveBlocksPerMultiprocessor
 * (the algorithm CUDA ships in cuda_occupancy.h), and which resource limits
 * it. */
#include <limits.h>

#include "model_internal.h"

/* Registers are split evenly over the SM's four sub-partitions (one per warp
 * scheduler), and a warp's registers come from one sub-partition, so the
 * register limit is counted per sub-partition. cuda_occupancy.h uses 4 for
 * every compute capability from 7.0 on; the model struct has no field for
 * it because no part we model differs. */
#define REG_SUBPARTITIONS 4u

static unsigned div_up(unsigned long long x, unsigned long long y)
{
	return (unsigned)((x + y - 1) / y);
}

static unsigned long long round_up(unsigned long long x, unsigned long long y)
{
	return (x + y - 1) / y * y;
}

static unsigned cannot_fit(cta_limiter why, cta_limiter *limiter)
{
	if (limiter)
		*limiter = why;
	return 0;
}

/* Blocks that fit by registers, or 0 when one block cannot fit (its
 * registers exceed the per-block limit, or one of its warps cannot find room
 * in a sub-partition). */
static unsigned regs_limit(const struct cta_device_model *m, unsigned warps, unsigned regs)
{
	unsigned long long per_warp =
	    round_up((unsigned long long)regs * m->warp_size, m->reg_alloc_unit);
	unsigned long long per_block = per_warp * warps;
	/* The hardware checks a block against the per-block register limit as
	 * if it took registers from every sub-partition at once, i.e. with its
	 * warp count rounded up to a multiple of the sub-partitions. */
	unsigned long long assumed = per_warp * round_up(warps, REG_SUBPARTITIONS);
	unsigned long long warps_per_part;

	if (per_block > m->max_regs_per_block || assumed > m->max_regs_per_block)
		return 0;
	if (per_warp == 0)
		return UINT_MAX;
	warps_per_part = (m->regs_per_sm / REG_SUBPARTITIONS) / per_warp;
	return (unsigned)(warps_per_part * REG_SUBPARTITIONS / warps);
}

unsigned cta_occupancy_max_blocks(const struct cta_device_model *m,
                                  const struct cta_block_resources *r, cta_limiter *limiter)
{
	unsigned regs, warps, lim[CTA_LIMIT_SMEM + 1];
	unsigned long long smem_used, smem_alloc;
	unsigned best = UINT_MAX;
	cta_limiter why = CTA_LIMIT_NONE;

	if (limiter)
		*limiter = CTA_LIMIT_NONE;
	if (!m || !r || m->warp_size == 0 || m->reg_alloc_unit == 0 || m->smem_alloc_unit == 0)
		return cannot_fit(CTA_LIMIT_NONE, limiter);

	/* Launches that can never run, whatever else is resident. */
	if (r->threads == 0 || r->threads > m->max_threads_per_block)
		return cannot_fit(CTA_LIMIT_THREADS, limiter);
	regs = r->regs_per_thread ? r->regs_per_thread : 32;
	if (regs > m->max_regs_per_thread)
		return cannot_fit(CTA_LIMIT_REGISTERS, limiter);
	smem_used = (unsigned long long)r->smem_static + r->smem_dynamic;
	if (smem_used > m->max_smem_per_block)
		return cannot_fit(CTA_LIMIT_SMEM, limiter);

	warps = div_up(r->threads, m->warp_size);

	lim[CTA_LIMIT_NONE] = UINT_MAX;
	lim[CTA_LIMIT_THREADS] = m->max_threads_per_sm / r->threads;
	/* Warp slots are allocated whole, so a 48-thread block takes two. */
	lim[CTA_LIMIT_WARPS] = m->max_warps_per_sm / warps;
	lim[CTA_LIMIT_BLOCKS] = m->max_blocks_per_sm;
	lim[CTA_LIMIT_REGISTERS] = regs_limit(m, warps, regs);
	/* The system reserves smem_reserved_per_block bytes per resident block
	 * on top of what the kernel asks for; the sum is rounded up to the
	 * allocation unit. */
	smem_alloc = round_up(smem_used + m->smem_reserved_per_block, m->smem_alloc_unit);
	if (smem_alloc > m->smem_per_sm)
		lim[CTA_LIMIT_SMEM] = 0;
	else
		lim[CTA_LIMIT_SMEM] =
		    smem_alloc ? (unsigned)(m->smem_per_sm / smem_alloc) : UINT_MAX;

	/* The tightest limit wins; ties go to the first in enum order, so a
	 * block shape limited equally by threads and warps reports threads. */
	for (int l = CTA_LIMIT_THREADS; l <= CTA_LIMIT_SMEM; l++) {
		if (lim[l] < best) {
			best = lim[l];
			why = (cta_limiter)l;
		}
	}
	if (limiter)
		*limiter = why;
	return best;
}

const char *cta_limiter_name(cta_limiter l)
{
	switch (l) {
	case CTA_LIMIT_NONE:
		return "none";
	case CTA_LIMIT_THREADS:
		return "threads";
	case CTA_LIMIT_WARPS:
		return "warps";
	case CTA_LIMIT_BLOCKS:
		return "blocks";
	case CTA_LIMIT_REGISTERS:
		return "registers";
	case CTA_LIMIT_SMEM:
		return "shared memory";
	}
	return "unknown";
}
