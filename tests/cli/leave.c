/* A user kernel loaded with `ctasim run --load` whose thread 5 of block 2
 * leaves the process the ways a body can: exit(0), exit(3), _exit, _Exit,
 * quick_exit, abort(), raise(SIGUSR1), kill(getpid(), SIGTERM). Each must
 * be reported like a crash (kernel, block, thread; exit 1; the trace kept
 * and marked incomplete). Built by tests/cli/meson.build for hardening.sh. */
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
