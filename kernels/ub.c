/* Harnesses of the UB kernels (ub_body.h): each is marked CTA_KI_EXPECT_UB
 * with its rule, takes valid=1 for its valid twin, and checks the seeds'
 * vec_add result c[i] == 1 + i (which the valid twins must pass). Default
 * grids are chosen so the violation is deterministic: see each kernel. */
#include "kcommon.h"
#include "ub_body.h"

/* What verify needs, kept per run (kcommon.h says why). */
struct ub_state {
	int *c;
	int n;
};

/* clang-format off */
#define UB_PARAM_VALID {"valid", "0", "1: run the valid twin (must not be flagged)"}
#define UB_PARAM_NS    {"ns", "0", "virtual nanoseconds per tile (per thread)"}
/* clang-format on */

/* One block: a cancellation finds nothing pending and fails. */
static const struct cta_param_desc ub_params_one_block[] = {
    {"n", "256", "elements (256 per block; the default is one block)"},
    UB_PARAM_VALID,
    UB_PARAM_NS,
    {NULL, NULL, NULL},
};
static const struct cta_param_desc ub_params_leaders[] = {
    {"n", "256", "elements (256 per block)"},
    UB_PARAM_VALID,
    {"leaders", "0", "leaders in the invalid form (0 or 2; 1 would be valid)"},
    UB_PARAM_NS,
    {NULL, NULL, NULL},
};
static const struct cta_param_desc ub_params_cluster[] = {
    {"n", "512", "elements (256 per block; the default is one (2,1,1) cluster)"},
    UB_PARAM_VALID,
    {"delay_ns", "10000", "invalid form: CTA 0 waits this long before cancelling"},
    {"after_exit", "0", "invalid form: 1 syncs the cluster first, so only CTA 1's exit is wrong"},
    UB_PARAM_NS,
    {NULL, NULL, NULL},
};
static const struct cta_param_desc ub_params_one_too_many[] = {
    {"n", "0", "elements (256 per block, one block per SM; 0: one block more than the SMs)"},
    UB_PARAM_VALID,
    UB_PARAM_NS,
    {NULL, NULL, NULL},
};
static const struct cta_param_desc ub_params_many_blocks[] = {
    {"n", "2097152", "elements (256 per block; the default is 8192 blocks, so blocks steal)"},
    UB_PARAM_VALID,
    UB_PARAM_NS,
    {NULL, NULL, NULL},
};

/* Fills the seeds' inputs and launches k on ceil(n/256) blocks of 256. */
static int ub_setup(struct cta_harness *h, const struct cta_kernel_def *k, unsigned cluster,
                    size_t smem)
{
	int64_t n = 0, valid = 0;
	int rc = cta__kparam_range(h, "n", k == &ub_forward_progress ? 0 : 1, INT32_MAX, &n);
	if (!rc)
		rc = cta__kparam_range(h, "valid", 0, 1, &valid);
	if (rc)
		return rc;
	if (n == 0) /* ub_forward_progress: one block more than can be resident */
		n = ((int64_t)cta_harness_device(h)->sm_count + 1) * 256;
	struct ub_args args = {.n = (int)n, .valid = (int)valid};
	int64_t v;
	if (k == &ub_leader_count) {
		if ((rc = cta__kparam_range(h, "leaders", 0, 1024, &v)))
			return rc;
		args.leaders = (int)v;
	}
	if (k == &ub_multicast_cluster_not_running) {
		if ((rc = cta__kparam_range(h, "delay_ns", 0, INT64_MAX, &v)))
			return rc;
		args.delay_ns = (unsigned long long)v;
		if ((rc = cta__kparam_range(h, "after_exit", 0, 1, &v)))
			return rc;
		args.after_exit = (int)v;
	}
	args.ns = (unsigned long long)cta_harness_int(h, "ns");

	struct ub_state *S = cta__kstate_new(h, sizeof *S);
	if (!S)
		return cta_harness_error(h, CTA_ENOMEM, "cannot allocate the harness state");
	int *a = cta_harness_alloc(h, (size_t)n * sizeof *a);
	int *b = cta_harness_alloc(h, (size_t)n * sizeof *b);
	S->c = cta_harness_alloc(h, (size_t)n * sizeof *S->c);
	S->n = (int)n;
	if (!a || !b || !S->c)
		return cta_harness_error(h, CTA_ENOMEM, "cannot allocate %d elements", S->n);
	for (int i = 0; i < S->n; ++i) {
		a[i] = i;
		b[i] = 1;
		S->c[i] = 0;
	}
	unsigned *arrived = cta_harness_alloc(h, sizeof *arrived);
	if (!arrived)
		return cta_harness_error(h, CTA_ENOMEM, "cannot allocate the arrival count");
	*arrived = 0;
	args.arrived = cta_harness_dev(h, arrived);
	args.a = cta_harness_dev(h, a);
	args.b = cta_harness_dev(h, b);
	args.c = cta_harness_dev(h, S->c);

	unsigned grid = (unsigned)((n + 255) / 256);
	if (cluster)
		grid = (grid + cluster - 1) / cluster * cluster;
	struct cta_launch_cfg cfg = {
	    .grid = {grid, 1, 1},
	    .block = {256, 1, 1},
	    .cluster = {cluster, cluster ? 1 : 0, cluster ? 1 : 0},
	    .smem_static = smem,
	};
	return cta_harness_launch(h, k, &cfg, &args, sizeof args);
}

static int ub_verify(struct cta_harness *h)
{
	const struct ub_state *S = cta__kstate(h);
	if (!S)
		return cta_harness_error(h, CTA_ESTATE, "verify without a setup");
	for (int i = 0; i < S->n; ++i)
		if (S->c[i] != 1 + i)
			return cta_harness_fail(h, "c[%d]: expected %d, got %d", i, 1 + i, S->c[i]);
	return 0;
}

/* Static shared memory: results are 16 bytes, mbarriers 8, and the simulator
 * places every CTA_SHARED variable at a 16-byte boundary. */
#define SMEM_ONE_REQUEST  32
#define SMEM_TWO_REQUESTS 64

/* Defines the setup function and harness of one UB kernel. */
#define UB_HARNESS(rule, params_, flags_, cluster, smem, summary_)                                 \
	static int ub_##rule##_setup(struct cta_harness *h)                                        \
	{                                                                                          \
		return ub_setup(h, &ub_##rule, cluster, smem);                                     \
	}                                                                                          \
	static const struct cta_kernel_info ub_##rule##_info = {                                   \
	    .name = "ub_" #rule,                                                                   \
	    .summary = summary_,                                                                   \
	    .flags = CTA_KI_EXPECT_UB | (flags_),                                                  \
	    .expect_ub = #rule,                                                                    \
	    .params = params_,                                                                     \
	    .setup = ub_##rule##_setup,                                                            \
	    .verify = ub_verify,                                                                   \
	};                                                                                         \
	CTA_HARNESS(ub_##rule##_info)

UB_HARNESS(request_after_observed_failure, ub_params_one_block, CTA_KI_CLC, 0, SMEM_TWO_REQUESTS,
           "guide's \"Invalid code\": a request after observing a failed one")
UB_HARNESS(read_failed_index, ub_params_one_block, CTA_KI_CLC, 0, SMEM_ONE_REQUEST,
           "decodes the block index of a failed cancellation")
UB_HARNESS(read_before_complete, ub_params_one_block, CTA_KI_CLC, 0, SMEM_ONE_REQUEST,
           "queries a result before its mbarrier phase completed")
UB_HARNESS(result_buffer_in_flight, ub_params_one_block, CTA_KI_CLC, 0, SMEM_TWO_REQUESTS,
           "two in-flight requests share one result buffer")
UB_HARNESS(for_each_called_twice, ub_params_one_block, CTA_KI_CLC, 0, 0,
           "for_each_canceled_block called twice by one block")
UB_HARNESS(for_each_not_all_threads, ub_params_one_block, CTA_KI_CLC, 0, 0,
           "for_each_canceled_block called by half the block")
UB_HARNESS(leader_count, ub_params_leaders, CTA_KI_CLC, 0, 0,
           "try_cancel_blocks with zero (or, leaders=2, two) leaders")
UB_HARNESS(multicast_cluster_not_running, ub_params_cluster, CTA_KI_CLC | CTA_KI_CLUSTER, 2,
           SMEM_ONE_REQUEST, "cluster cancel after a CTA of the cluster exited, no cluster sync")
UB_HARNESS(divergent_barrier, ub_params_one_block, 0, 0, 1024 * sizeof(int),
           "__syncthreads reached by the even threads only")
UB_HARNESS(barrier_deadlock, ub_params_one_block, 0, 0, 16,
           "threads at __syncthreads while one waits on an mbarrier that never completes")
UB_HARNESS(mbarrier_not_initialised, ub_params_one_block, 0, 0, 16,
           "arrives at and waits on an mbarrier nobody initialised")
UB_HARNESS(watchdog, ub_params_one_block, 0, 0, 0,
           "a block that loops at __syncthreads forever: stopped by the watchdog")
UB_HARNESS(forward_progress, ub_params_one_too_many, 0, 0, 120 * 1024,
           "blocks wait for every block of the grid, one more than can be co-resident")
UB_HARNESS(builtin_blockidx_in_body, ub_params_many_blocks, CTA_KI_CLC, 0, 0,
           "stealing body uses blockIdx instead of its block index (warning; wrong result)")
