/* Harness of the timing-only spin kernel (spin_body.h): no buffers, nothing
 * to verify. `smem` reserves dynamic shared memory per block so fewer
 * blocks fit on an SM. */
#include "kcommon.h"
#include "spin_body.h"

static const struct cta_param_desc spin_params[] = {
    {"ns", "10000", "virtual nanoseconds per block (before imbalance)"},
    {"smem", "0", "dynamic shared memory per block, bytes (limits blocks per SM)"},
    {"grid", "65536", "blocks (x); --grid overrides"},
    KPARAM_IMBALANCE,
    {NULL, NULL, NULL},
};

static int spin_setup(struct cta_harness *h)
{
	int64_t ns = 0, smem = 0, grid = 0;
	int rc = cta__kparam_range(h, "ns", 0, INT64_MAX, &ns);
	if (!rc)
		rc = cta__kparam_range(h, "smem", 0, (int64_t)1 << 30, &smem);
	if (!rc)
		rc = cta__kparam_range(h, "grid", 1, 0x7fffffff, &grid);
	struct spin_args a = {.ns = (unsigned long long)ns};
	if (!rc)
		rc = cta__kparam_imbalance(h, &a.imbalance);
	if (rc)
		return rc;
	struct cta_launch_cfg cfg = {
	    .grid = {(unsigned)grid, 1, 1},
	    .block = {256, 1, 1},
	    .smem_dynamic = (size_t)smem,
	};
	return cta_harness_launch(h, &spin, &cfg, &a, sizeof a);
}

/* Timing-only: the runner reports CTA_VERDICT_SKIPPED; this is here so a
 * runner that calls verify unconditionally finds a valid function. */
static int spin_verify(struct cta_harness *h)
{
	return 0;
}

static const struct cta_kernel_info spin_info = {
    .name = "spin",
    .summary = "timing-only grid: each block spins ns (optionally imbalanced)",
    .flags = CTA_KI_TIMING,
    .params = spin_params,
    .setup = spin_setup,
    .verify = spin_verify,
};
CTA_HARNESS(spin_info)
