/* A user kernel loaded with `ctasim run --load`: the guide's low-level
 * loop with a bug (a block exits after a successful cancel without doing
 * the stolen block), so exactly-once coverage fails and lists the lost
 * index. Built as a shared module by tests/cli/meson.build for cli_run.sh. */
#include "ctasim/harness.h"

struct lose_args {
	unsigned *done;
};

CTA_KERNEL(cli_lose_index, struct lose_args, p)
{
	CTA_SHARED(cta_clc_result, result);
	CTA_SHARED(uint64_t, bar);
	if (cta_thread_rank() == 0)
		cta_mbarrier_init(bar, 1);
	__syncthreads();
	if (cta_thread_rank() == 0) {
		atomicAdd(&p->done[blockIdx.x], 1u);
		cta_clc_try_cancel(result, bar);
		cta_mbarrier_arrive_expect_tx(bar, sizeof(cta_clc_result));
	}
	while (!cta_mbarrier_try_wait_parity(bar, 0)) {
	}
	/* The bug: success or not, the block exits. */
	(void)cta_clc_query_cancel_is_canceled(result);
}

static const struct cta_param_desc lose_params[] = {
    {"blocks", "2", "blocks in the grid (one fits on the device at a time)"},
    {NULL, NULL, NULL},
};

static int lose_setup(struct cta_harness *h)
{
	int64_t n = cta_harness_int(h, "blocks");
	if (n < 1 || n > 1024)
		return cta_harness_error(h, CTA_EINVAL, "blocks: %lld out of range [1, 1024]",
		                         (long long)n);
	struct lose_args a = {cta_harness_alloc(h, (size_t)n * sizeof(unsigned))};
	if (!a.done)
		return CTA_ENOMEM;
	/* 200000 bytes of shared memory: one block per SM. */
	struct cta_launch_cfg cfg = {.grid = {(unsigned)n, 1, 1},
	                             .block = {32, 1, 1},
	                             .smem_static = 32,
	                             .smem_dynamic = 200000};
	return cta_harness_launch(h, &cli_lose_index, &cfg, &a, sizeof a);
}

static const struct cta_kernel_info lose_info = {
    .name = "cli_lose_index",
    .summary = "test kernel: drops a stolen block index (coverage fails)",
    .flags = CTA_KI_CLC,
    .params = lose_params,
    .setup = lose_setup,
};
CTA_HARNESS(lose_info)
