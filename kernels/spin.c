/* Harnesses of the timing-only spin kernels (spin_body.h). spin has no
 * buffers and nothing to verify; `smem` reserves dynamic shared memory per
 * block so fewer blocks fit on an SM. spin_clc counts each block index it
 * processes, and verify checks every count is one. */
#include "kcommon.h"
#include "spin_body.h"

static const struct cta_param_desc spin_params[] = {
    {"ns", "10000", "virtual nanoseconds per block (before imbalance)"},
    {"smem", "0", "dynamic shared memory per block, bytes (limits blocks per SM)"},
    {"grid", "65536", "blocks (x); --grid overrides"},
    {"regs", "0",
     "1: keep 96 values live in registers across the spin (108 registers a thread on "
     "the GPU: registers limit blocks per SM)"},
    KPARAM_IMBALANCE,
    {NULL, NULL, NULL},
};

static int spin_setup(struct cta_harness *h)
{
	int64_t ns = 0, smem = 0, grid = 0, regs = 0;
	int rc = cta__kparam_range(h, "ns", 0, INT64_MAX, &ns);
	if (!rc)
		rc = cta__kparam_range(h, "smem", 0, (int64_t)1 << 30, &smem);
	if (!rc)
		rc = cta__kparam_range(h, "grid", 1, 0x7fffffff, &grid);
	if (!rc)
		rc = cta__kparam_range(h, "regs", 0, 1, &regs);
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
	if (regs) {
		/* The variant nvcc compiles with SPIN_REGS_PER_THREAD registers;
		 * the simulator is told the same count. */
		struct spin_regs_args r = {
		    .ns = a.ns, .imbalance = a.imbalance, .never = 0x9e3779b9u};
		cfg.regs_per_thread = SPIN_REGS_PER_THREAD;
		return cta_harness_launch(h, &spin_regs, &cfg, &r, sizeof r);
	}
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

static const struct cta_param_desc spin_clc_params[] = {
    {"ns", "1000", "virtual nanoseconds per block index processed (before imbalance)"},
    {"grid", "65536", "blocks (x) and the counters verify checks (a larger --grid fails verify)"},
    {"cluster", "1",
     "2 or 4: clusters of that many CTAs, one cancelling for all (the guide's cluster "
     "loop, spin_clc_cluster); grid must be a multiple of it"},
    KPARAM_IMBALANCE,
    {NULL, NULL, NULL},
};

/* Static shared memory: the 16-byte result and the 8-byte mbarrier, each at
 * a 16-byte boundary. */
#define SPIN_CLC_SMEM 32

struct spin_clc_state {
	unsigned *done;
	unsigned grid;
};

static int spin_clc_setup(struct cta_harness *h)
{
	int64_t ns = 0, grid = 0, cluster = 1;
	int rc = cta__kparam_range(h, "ns", 0, INT64_MAX, &ns);
	if (!rc)
		rc = cta__kparam_range(h, "grid", 1, 0x7fffffff, &grid);
	if (!rc)
		rc = cta__kparam_range(h, "cluster", 1, 4, &cluster);
	if (!rc && cluster == 3)
		return cta_harness_error(h, CTA_EINVAL,
		                         "--arg cluster=3: clusters of 1, 2 or 4 CTAs");
	if (!rc && grid % cluster)
		return cta_harness_error(h, CTA_EINVAL,
		                         "--arg grid=%lld: clusters of %lld need a grid that is "
		                         "a multiple of %lld",
		                         (long long)grid, (long long)cluster, (long long)cluster);
	struct spin_clc_args a = {.ns = (unsigned long long)ns};
	if (!rc)
		rc = cta__kparam_imbalance(h, &a.imbalance);
	if (rc)
		return rc;
	struct spin_clc_state *S = cta__kstate_new(h, sizeof *S);
	if (!S)
		return cta_harness_error(h, CTA_ENOMEM, "cannot allocate the harness state");
	S->grid = (unsigned)grid;
	S->done = cta_harness_alloc(h, (size_t)grid * sizeof *S->done);
	if (!S->done)
		return cta_harness_error(h, CTA_ENOMEM, "cannot allocate %lld counters",
		                         (long long)grid);
	a.done = cta_harness_dev(h, S->done);
	a.ndone = S->grid;
	struct cta_launch_cfg cfg = {
	    .grid = {(unsigned)grid, 1, 1},
	    .block = {1024, 1, 1}, /* the guide's launch, as vecscale_clc */
	    .smem_static = SPIN_CLC_SMEM,
	};
	if (cluster > 1) {
		cfg.cluster[0] = (unsigned)cluster;
		cfg.cluster[1] = cfg.cluster[2] = 1;
		return cta_harness_launch(h, &spin_clc_cluster, &cfg, &a, sizeof a);
	}
	return cta_harness_launch(h, &spin_clc, &cfg, &a, sizeof a);
}

static int spin_clc_verify(struct cta_harness *h)
{
	const struct spin_clc_state *S = cta__kstate(h);
	if (!S)
		return cta_harness_error(h, CTA_ESTATE, "verify without a setup");
	/* The counters are sized by --arg grid; a --grid override with more
	 * blocks, or a 2-D or 3-D one, cannot be checked (the body counts
	 * none past them). */
	const struct cta_launch_cfg *c = cta_harness_launched(h, 0);
	if (c->grid[1] != 1 || c->grid[2] != 1 || c->grid[0] > S->grid)
		return cta_harness_fail(h,
		                        "launch grid %u,%u,%u: spin_clc counts the block indices "
		                        "of a 1-D grid of at most %u blocks (set --arg grid "
		                        "instead of --grid)",
		                        c->grid[0], c->grid[1], c->grid[2], S->grid);
	for (unsigned i = 0; i < S->grid; i++) {
		unsigned want = i < c->grid[0];
		if (S->done[i] != want)
			return cta_harness_fail(h, "block %u processed %u times, expected %u", i,
			                        S->done[i], want);
	}
	return 0;
}

static const struct cta_kernel_info spin_clc_info = {
    .name = "spin_clc",
    .summary =
        "work stealing (guide 4.12.2.1 loop) whose blocks only spin ns: CLC without memory traffic",
    .flags = CTA_KI_CLC,
    .params = spin_clc_params,
    .setup = spin_clc_setup,
    .verify = spin_clc_verify,
};
CTA_HARNESS(spin_clc_info)
