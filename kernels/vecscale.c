/* Harnesses of the vector-scalar family (vecscale_body.h): v[i] = i mod 4096,
 * the guide's launches, and a check of every element and of the number of
 * block prologues. The prologue counter is the harness's FIRST buffer (one
 * unsigned long long), so `ctasim compare` can read prologue executions. */
#include <string.h>

#include "kcommon.h"
#include "vecscale_body.h"

/* What verify needs, kept per run (kcommon.h says why). */
struct vecscale_state {
	unsigned long long *prologue_count;
	float *data;
	int n;
	float alpha;
	int clc; /* blocks may be stolen: fewer prologues than blocks */
};

static const struct cta_param_desc vecscale_params[] = {
    {"n", "1048576", "number of elements"},
    {"alpha", "2.0", "the scalar alpha"},
    {"ns", "0", "virtual nanoseconds per element (per thread), scaled by imbalance"},
    {"prologue_ns", "0", "virtual nanoseconds of compute_scalar(), once per block"},
    KPARAM_IMBALANCE,
    {NULL, NULL, NULL},
};

/* Block size of every launch: the guide launches 1024 threads per block
 * (its <<<1024, (n + 1023) / 1024>>> lists the two numbers in swapped
 * order; the grid is the one derived from n). */
#define VECSCALE_BLOCK 1024

static int vecscale_prepare(struct cta_harness *h, struct vecscale_args *a, int clc)
{
	int64_t n = 0;
	int rc = cta__kparam_range(h, "n", 1, INT32_MAX, &n);
	if (rc)
		return rc;
	memset(a, 0, sizeof *a);
	rc = cta__kparam_imbalance(h, &a->imbalance);
	if (rc)
		return rc;
	/* The counter first: buffer 0 is where tools look for it. */
	unsigned long long *count = cta_harness_alloc(h, sizeof *count);
	struct vecscale_state *S = cta__kstate_new(h, sizeof *S);
	if (!count || !S)
		return cta_harness_error(h, CTA_ENOMEM, "cannot allocate the harness state");
	S->prologue_count = count;
	S->n = (int)n;
	S->alpha = (float)cta_harness_double(h, "alpha");
	S->clc = clc;
	S->data = cta_harness_alloc(h, (size_t)n * sizeof *S->data);
	if (!S->data)
		return cta_harness_error(h, CTA_ENOMEM, "cannot allocate %lld elements",
		                         (long long)n);
	for (int i = 0; i < S->n; i++)
		S->data[i] = (float)(i % 4096);
	a->data = cta_harness_dev(h, S->data);
	a->n = S->n;
	a->alpha = S->alpha;
	a->ns = (unsigned long long)cta_harness_int(h, "ns");
	a->prologue_ns = (unsigned long long)cta_harness_int(h, "prologue_ns");
	a->prologue_count = cta_harness_dev(h, S->prologue_count);
	return 0;
}

/* Blocks of one thread an element: VECSCALE_BLOCK threads, or --block's. */
static unsigned tiles(struct cta_harness *h, const struct vecscale_args *a)
{
	unsigned b[3];
	cta_harness_block(h, (const unsigned[3]){VECSCALE_BLOCK, 1, 1}, b);
	return (unsigned)((a->n + b[0] - 1) / b[0]);
}

static int fixed_work_setup(struct cta_harness *h)
{
	struct vecscale_args a;
	int rc = vecscale_prepare(h, &a, 0);
	if (rc)
		return rc;
	struct cta_launch_cfg cfg = {.grid = {tiles(h, &a), 1, 1},
	                             .block = {VECSCALE_BLOCK, 1, 1},
	                             .issue_ops = kwork_issue_ops(a.imbalance, 0)};
	return cta_harness_launch(h, &vecscale_fixed_work, &cfg, &a, sizeof a);
}

static int fixed_blocks_setup(struct cta_harness *h)
{
	struct vecscale_args a;
	int rc = vecscale_prepare(h, &a, 0);
	if (rc)
		return rc;
	/* kernel_fixed_blocks: SM_COUNT blocks of 1024 threads. */
	struct cta_launch_cfg cfg = {.grid = {cta_harness_device(h)->sm_count, 1, 1},
	                             .block = {VECSCALE_BLOCK, 1, 1},
	                             .issue_ops = kwork_issue_ops(a.imbalance, 1)};
	return cta_harness_launch(h, &vecscale_fixed_blocks, &cfg, &a, sizeof a);
}

/* Static shared memory of the CLC kernels: a 16-byte result and an 8-byte
 * mbarrier, each at a 16-byte boundary as the simulator places them. */
#define VECSCALE_CLC_SMEM 32

static int clc_setup(struct cta_harness *h)
{
	struct vecscale_args a;
	int rc = vecscale_prepare(h, &a, 1);
	if (rc)
		return rc;
	struct cta_launch_cfg cfg = {.grid = {tiles(h, &a), 1, 1},
	                             .block = {VECSCALE_BLOCK, 1, 1},
	                             .smem_static = VECSCALE_CLC_SMEM,
	                             .issue_ops = kwork_issue_ops(a.imbalance, 0),
	                             .stream_mem = 1};
	return cta_harness_launch(h, &vecscale_clc, &cfg, &a, sizeof a);
}

static int clc_cluster_setup(struct cta_harness *h)
{
	struct vecscale_args a;
	int rc = vecscale_prepare(h, &a, 1);
	if (rc)
		return rc;
	/* The grid must be a whole number of (2,1,1) clusters; the extra
	 * block of an odd tile count finds i >= n everywhere. */
	unsigned grid = (tiles(h, &a) + 1) & ~1u;
	struct cta_launch_cfg cfg = {.grid = {grid, 1, 1},
	                             .block = {VECSCALE_BLOCK, 1, 1},
	                             .cluster = {2, 1, 1},
	                             .smem_static = VECSCALE_CLC_SMEM,
	                             .issue_ops = kwork_issue_ops(a.imbalance, 0),
	                             .stream_mem = 1};
	return cta_harness_launch(h, &vecscale_clc_cluster, &cfg, &a, sizeof a);
}

static int vecscale_verify(struct cta_harness *h)
{
	const struct vecscale_state *S = cta__kstate(h);
	if (!S)
		return cta_harness_error(h, CTA_ESTATE, "verify without a setup");
	for (int i = 0; i < S->n; i++) {
		float want = (float)(i % 4096) * S->alpha;
		if (S->data[i] != want)
			return cta_harness_fail(h, "data[%d]: expected %g, got %g", i, (double)want,
			                        (double)S->data[i]);
	}
	/* Every block that started ran the prologue once; with CLC, stolen
	 * blocks never start, so there may be fewer (at least one). */
	unsigned long long blocks = cta__klaunched_blocks(h);
	unsigned long long got = *S->prologue_count;
	if (S->clc ? (got < 1 || got > blocks) : got != blocks)
		return cta_harness_fail(h, "prologue executions: expected %s%llu, got %llu",
		                        S->clc ? "1 to " : "", blocks, got);
	return 0;
}

static const struct cta_kernel_info fixed_work_info = {
    .name = "vecscale_fixed_work",
    .summary = "v := alpha*v, fixed work per block (guide 4.12.2.1)",
    .params = vecscale_params,
    .setup = fixed_work_setup,
    .verify = vecscale_verify,
};
CTA_HARNESS(fixed_work_info)

static const struct cta_kernel_info fixed_blocks_info = {
    .name = "vecscale_fixed_blocks",
    .summary = "v := alpha*v, fixed number of blocks (SM count), grid-stride (guide 4.12.2.1)",
    .params = vecscale_params,
    .setup = fixed_blocks_setup,
    .verify = vecscale_verify,
};
CTA_HARNESS(fixed_blocks_info)

static const struct cta_kernel_info clc_info = {
    .name = "vecscale_clc",
    .summary = "v := alpha*v, work stealing with low-level cluster launch control (guide 4.12.2.1)",
    .flags = CTA_KI_CLC,
    .params = vecscale_params,
    .setup = clc_setup,
    .verify = vecscale_verify,
};
CTA_HARNESS(clc_info)

static const struct cta_kernel_info clc_cluster_info = {
    .name = "vecscale_clc_cluster",
    .summary = "v := alpha*v, CLC with (2,1,1) clusters and multicast (guide 4.12.2.2)",
    .flags = CTA_KI_CLC | CTA_KI_CLUSTER,
    .params = vecscale_params,
    .setup = clc_cluster_setup,
    .verify = vecscale_verify,
};
CTA_HARNESS(clc_cluster_info)
