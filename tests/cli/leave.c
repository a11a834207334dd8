/* User kernels for hardening.sh, loaded with `ctasim run --load`.
 * cli_leave: thread 5 of block 2 leaves the process the ways a body can:
 * exit(0), exit(3), _exit, _Exit, quick_exit, abort(), raise(SIGUSR1),
 * kill(getpid(), SIGTERM). Each must be reported like a crash (kernel,
 * block, thread; exit 1; the trace kept and marked incomplete).
 * cli_cluster4: a valid kernel of clusters of 4 blocks that each fill an
 * SM, so that it cannot run on fewer than 4 SMs of one GPC (explore must
 * not draw such schedules). Built by tests/cli/meson.build. */
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "ctasim/harness.h"

struct leave_args {
	int how;
	int *out;
};

CTA_KERNEL(cli_leave, struct leave_args, p)
{
	p->out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
	if (blockIdx.x != 2 || threadIdx.x != 5)
		return;
	switch (p->how) {
	case 0:
		exit(0);
	case 1:
		exit(3);
	case 2:
		_exit(0);
	case 3:
		_Exit(0);
	case 4:
		quick_exit(0);
	case 5:
		abort();
	case 6:
		raise(SIGUSR1);
		break;
	case 7:
		kill(getpid(), SIGTERM);
		break;
	default:
		break;
	}
}

static const struct cta_param_desc leave_params[] = {
    {"how", "0",
     "0 exit(0), 1 exit(3), 2 _exit, 3 _Exit, 4 quick_exit, 5 abort, "
     "6 raise(SIGUSR1), 7 kill(getpid(), SIGTERM), 8 stay"},
    {NULL, NULL, NULL},
};

static int leave_setup(struct cta_harness *h)
{
	struct leave_args a = {(int)cta_harness_int(h, "how"),
	                       cta_harness_alloc(h, 4 * 64 * sizeof(int))};
	if (!a.out)
		return CTA_ENOMEM;
	struct cta_launch_cfg cfg = {.grid = {4, 1, 1}, .block = {64, 1, 1}};
	return cta_harness_launch(h, &cli_leave, &cfg, &a, sizeof a);
}

static const struct cta_kernel_info leave_info = {
    .name = "cli_leave",
    .summary = "test kernel: one thread leaves the process (exit, abort, a signal)",
    .params = leave_params,
    .setup = leave_setup,
};
CTA_HARNESS(leave_info)

struct cluster4_args {
	unsigned *done;
};

/* One harness at a time runs in a process. */
static unsigned *cluster4_done;

CTA_KERNEL(cli_cluster4, struct cluster4_args, p)
{
	if (threadIdx.x == 0)
		atomicAdd(&p->done[blockIdx.x], 1u);
}

static const struct cta_param_desc cluster4_params[] = {
    {"blocks", "32", "blocks in the grid (a multiple of 4)"},
    {NULL, NULL, NULL},
};

static int cluster4_setup(struct cta_harness *h)
{
	int64_t n = cta_harness_int(h, "blocks");
	if (n < 4 || n > 4096 || n % 4)
		return cta_harness_error(h, CTA_EINVAL,
		                         "blocks: %lld is not a multiple of 4 in [4, 4096]",
		                         (long long)n);
	struct cluster4_args a = {cta_harness_alloc(h, (size_t)n * sizeof(unsigned))};
	if (!a.done)
		return CTA_ENOMEM;
	cluster4_done = a.done;
	/* 1024 threads and 200000 bytes of shared memory: one block per SM. */
	struct cta_launch_cfg cfg = {.grid = {(unsigned)n, 1, 1},
	                             .block = {1024, 1, 1},
	                             .cluster = {4, 1, 1},
	                             .smem_dynamic = 200000};
	return cta_harness_launch(h, &cli_cluster4, &cfg, &a, sizeof a);
}

static int cluster4_verify(struct cta_harness *h)
{
	const struct cta_launch_cfg *c = cta_harness_launched(h, 0);
	const unsigned *done = cluster4_done;
	for (unsigned i = 0; done && i < c->grid[0]; i++)
		if (done[i] != 1)
			return cta_harness_fail(h, "block %u ran %u times", i, done[i]);
	return 0;
}

static const struct cta_kernel_info cluster4_info = {
    .name = "cli_cluster4",
    .summary = "test kernel: clusters of 4 blocks that each fill an SM",
    .flags = CTA_KI_CLUSTER,
    .params = cluster4_params,
    .setup = cluster4_setup,
    .verify = cluster4_verify,
};
CTA_HARNESS(cluster4_info)

/* cli_multicast_issuer: clusters of 2; after a cluster sync CTA 1 exits
 * at once while thread 37 of CTA 0 spins, then issues a multicast cancel
 * that writes into the exited CTA: multicast_cluster_not_running, broken
 * by thread 37 of the first block of each cluster. */
struct mc_args {
	unsigned ns;
};

CTA_KERNEL(cli_multicast_issuer, struct mc_args, p)
{
	CTA_SHARED(cta_clc_result, result);
	CTA_SHARED(uint64_t, bar);
	if (cta_thread_rank() == 0)
		cta_mbarrier_init(bar, 1);
	cta_cluster_sync();
	if (cta_cluster_block_rank() != 0)
		return;
	if (cta_thread_rank() == 37) {
		cta_spin_ns(p->ns);
		cta_clc_try_cancel_multicast(result, bar);
	}
	if (cta_thread_rank() == 0)
		cta_mbarrier_arrive_expect_tx(bar, sizeof(cta_clc_result));
	while (!cta_mbarrier_try_wait_parity(bar, 0)) {
	}
}

static int mc_setup(struct cta_harness *h)
{
	struct mc_args a = {10000};
	struct cta_launch_cfg cfg = {
	    .grid = {4, 1, 1}, .block = {64, 1, 1}, .cluster = {2, 1, 1}, .smem_static = 64};
	return cta_harness_launch(h, &cli_multicast_issuer, &cfg, &a, sizeof a);
}

static const struct cta_kernel_info mc_info = {
    .name = "cli_multicast_issuer",
    .summary = "test kernel: a multicast cancel after the other CTA of the cluster exited",
    .flags = CTA_KI_CLC | CTA_KI_CLUSTER,
    .setup = mc_setup,
};
CTA_HARNESS(mc_info)

/* cli_uninit_mbarrier: a 2-D grid of 2-D blocks where thread (3,1) of
 * block (2,1) waits on an mbarrier nobody initialised (how=0), arrives at
 * one (how=1), or issues a cancel completing on one (how=2); how=3
 * initialises it first (valid). */
struct um_args {
	int how;
};

CTA_KERNEL(cli_uninit_mbarrier, struct um_args, p)
{
	CTA_SHARED(cta_clc_result, result);
	CTA_SHARED(uint64_t, bar);
	int me = blockIdx.x == 2 && blockIdx.y == 1 && threadIdx.x == 3 && threadIdx.y == 1;
	if (p->how == 3 && me)
		cta_mbarrier_init(bar, 1);
	if (!me)
		return;
	if (p->how == 0 || p->how == 3) {
		if (p->how == 3)
			cta_mbarrier_arrive(bar);
		(void)cta_mbarrier_try_wait_parity(bar, 0);
	} else if (p->how == 1) {
		cta_mbarrier_arrive(bar);
	} else {
		cta_clc_try_cancel(result, bar);
	}
}

static const struct cta_param_desc um_params[] = {
    {"how", "0", "0 wait, 1 arrive, 2 try_cancel on an uninitialised mbarrier, 3 valid"},
    {NULL, NULL, NULL},
};

static int um_setup(struct cta_harness *h)
{
	struct um_args a = {(int)cta_harness_int(h, "how")};
	struct cta_launch_cfg cfg = {.grid = {3, 2, 1}, .block = {8, 4, 1}, .smem_static = 64};
	return cta_harness_launch(h, &cli_uninit_mbarrier, &cfg, &a, sizeof a);
}

static const struct cta_kernel_info um_info = {
    .name = "cli_uninit_mbarrier",
    .summary = "test kernel: an mbarrier used without cta_mbarrier_init",
    .flags = CTA_KI_CLC,
    .params = um_params,
    .setup = um_setup,
};
CTA_HARNESS(um_info)
