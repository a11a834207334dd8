/* `ctasim run`: runs one kernel harness on the simulator (or the GPU) and
 * prints a short summary: blocks, SMs used, blocks per SM, virtual
 * makespan, cancellations, coverage, UB reports and the result check. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_util.h"

/* --jitter's bound: a second of jitter on every latency is already far
 * beyond any GPU's; more only overflows virtual time. */
#define CLI_JITTER_MAX 1000000000ull
#include "cmd.h"
#include "ctasim/harness.h"
#include "ctasim/io.h"
#include "ctasim/sim.h"
#include "progress.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: ctasim run KERNEL [options]\n"
	           "\n"
	           "Runs KERNEL (see 'ctasim list') and checks its result.\n"
	           "\n"
	           "  --device NAME|FILE     device model (default H100-SXM)\n"
	           "  --grid X[,Y,Z]         grid dimensions (default: the kernel's; x in\n"
	           "                         [1, 2^31-1], y and z in [1, 65535])\n"
	           "  --block X[,Y,Z]        block dimensions (default: the kernel's; x and y\n"
	           "                         in [1, 1024], z in [1, 64])\n"
	           "  --arg NAME=VALUE       kernel parameter (repeatable; integers: 1000,\n"
	           "                         0x100, 64K, 1<<20, within 64 bits)\n"
	           "  --seed N               seed for every random choice, [0, 2^64-1]\n"
	           "                         (default 1)\n"
	           "  --trace FILE           write the trace (.gz/.zst: compressed, -: stdout,\n"
	           "                         the summary then goes to stderr)\n"
	           "  --backend sim|cuda     simulator (default) or the GPU\n"
	           "  --clc auto|hardware|emulate   CUDA backend: how to run CLC\n"
	           "  --ub report|abort|off  UB checking (default report)\n"
	           "  --sanitize memcheck|racecheck|initcheck   check the bodies' memory\n"
	           "                         accesses (docs/SANITIZE.md)\n"
	           "  --cancel-fail-rate P   make each cancel fail with probability P in [0, 1]\n"
	           "  --cancel-fail-after N  make every cancel after the first N fail,\n"
	           "                         N in [0, 2^63-1]\n"
	           "  --timing-only          run one thread per block: timing, no results\n"
	           "  --placement spread|round_robin|order   override the model's policy\n"
	           "  --launch-before clear|none   what runs on the SMs before each launch:\n"
	           "                         the CUDA backend's record-slot clear (default,\n"
	           "                         as in the reference traces) or nothing (an idle\n"
	           "                         GPU; the CUDA backend then counts its records)\n"
	           "  --jitter NS            +-NS random jitter on every latency, [0, 10^9]\n"
	           "  --random-tiebreak      break placement ties by the seed\n"
	           "  --sm-limit N           use only the first N SMs, [1, the device's SMs]\n"
	           "  --threads N            host threads for block bodies, [0, 1024]\n"
	           "                         (0: all cores)\n"
	           "  --max-events N         stop as hung after N events, [0, 2^63-1]\n"
	           "                         (0: no limit)\n"
	           "  --watchdog DURATION    stop a body that only spins or loops at barriers\n"
	           "                         for this much virtual time (ns, us, ms, s; from\n"
	           "                         1ns to 2^63 ns; default 1ms): a watchdog or\n"
	           "                         forward_progress report, exit 1\n"
	           "  --spin-sched fair|adversarial   which spinning block runs (default fair)\n"
	           "  --load LIB.so          load a shared object of user kernels first\n"
	           "  --quiet                print only the result line (no progress line:\n"
	           "                         one is shown on a terminal after 1 s)\n"
	           "\n"
	           "exit: 0 success, 1 wrong result or rule violation, 2 usage or bad input\n");
}

/* A virtual duration: an integer with an optional unit ns (default), us, ms
 * or s; from 1 ns to 2^63 ns. Returns 0, or -1 after a message. */
static int parse_duration(const char *cmd, const char *flag, const char *v, uint64_t *out)
{
	uint64_t n = 0;
	const char *p = v;
	if (*p < '0' || *p > '9')
		goto bad;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (n > (UINT64_MAX - 9) / 10)
			goto bad;
		n = n * 10 + (uint64_t)(*p - '0');
	}
	uint64_t mul = 1;
	if (!strcmp(p, "") || !strcmp(p, "ns"))
		mul = 1;
	else if (!strcmp(p, "us"))
		mul = 1000;
	else if (!strcmp(p, "ms"))
		mul = 1000000;
	else if (!strcmp(p, "s"))
		mul = 1000000000;
	else
		goto bad;
	if (n == 0 || n > (UINT64_MAX >> 1) / mul)
		goto bad;
	*out = n * mul;
	return 0;
bad:
	fprintf(stderr,
	        "ctasim %s: %s '%s': expected a duration from 1ns to 2^63 ns (an integer "
	        "with ns, us, ms or s)\n",
	        cmd, flag, v);
	return -1;
}

/* The state of one parse of run's options (cli_run_options), which its
 * stages below fill: the option at argv[i], what goes into the harness
 * options (o) and the simulator's (so), and what is resolved at the end. */
struct run_parse {
	const char *cmd;
	int argc;
	char **argv;
	int i;
	struct cta_harness_opts *o;
	struct cta_sim_opts so;
	const char *device; /* --device, resolved by finish_options */
	int placement;      /* --placement, or -1 for the model's */
	int launch_before;  /* --launch-before: 1 clear (the model's), 0 none */
	const char *args[256];
};

/* The value of option `opt` at argv[i] (--opt=V or --opt V), NULL after a
 * message. */
static const char *opt_value(struct run_parse *p, const char *opt)
{
	return cli_value(p->cmd, p->argc, p->argv, &p->i, opt);
}

/* Option `opt` of value v as one of n keywords: *out = values[k] for
 * names[k]; else -1 after a message that lists the keywords. */
static int keyword(const struct run_parse *p, const char *opt, const char *v, int n,
                   const char *const *names, const int *values, int *out)
{
	for (int k = 0; k < n; k++)
		if (!strcmp(v, names[k])) {
			*out = values[k];
			return 0;
		}
	fprintf(stderr, "ctasim %s: %s '%s': expected ", p->cmd, opt, v);
	for (int k = 0; k < n; k++)
		fprintf(stderr, "%s%s", names[k], k + 2 < n ? ", " : k + 2 == n ? " or " : "\n");
	return -1;
}

/* --trace FILE; "-": the trace takes stdout and the report moves to
 * stderr, so `ctasim run K --trace - | ...` pipes a trace. */
static int trace_option(struct run_parse *p, const char *v)
{
	if (!*v) {
		fprintf(stderr, "ctasim %s: --trace needs a file name\n", p->cmd);
		return -1;
	}
	p->so.trace_path = v;
	cli_trace_path = v;
	if (strcmp(v, "-")) {
		cli_sweep_stale(p->cmd, v);
		return 0;
	}
	static char fdpath[32];
	fflush(stdout);
	int fd = dup(1);
	if (fd < 0 || dup2(2, 1) < 0) {
		fprintf(stderr, "ctasim %s: --trace -: %s\n", p->cmd, strerror(errno));
		return -1;
	}
	snprintf(fdpath, sizeof(fdpath), "/dev/fd/%d", fd);
	p->so.trace_path = fdpath;
	return 0;
}

/* Stage 1 of an option: what runs and where (device, shape, parameters,
 * backend, trace, loaded kernels). 1: taken, 0: not one of these, -1:
 * bad (reported). */
static int launch_option(struct run_parse *p, const char *a)
{
	static const char *const backends[] = {"sim", "cuda"};
	static const int backend_v[] = {CTA_BACKEND_SIM, CTA_BACKEND_CUDA};
	static const char *const clcs[] = {"auto", "hardware", "emulate"};
	static const int clc_v[] = {CTA_CLC_AUTO, CTA_CLC_HARDWARE, CTA_CLC_EMULATE};
	struct cta_harness_opts *o = p->o;
	const char *v;
	int k;
	if (cli_is(a, "--device")) {
		if (!(v = opt_value(p, "--device")))
			return -1;
		p->device = v;
	} else if (cli_is(a, "--grid")) {
		if (!(v = opt_value(p, "--grid")) ||
		    cli_parse_dims(p->cmd, "--grid", v, o->grid) < 0)
			return -1;
		o->grid_set = 1;
	} else if (cli_is(a, "--block")) {
		if (!(v = opt_value(p, "--block")) ||
		    cli_parse_dims(p->cmd, "--block", v, o->block) < 0)
			return -1;
		o->block_set = 1;
	} else if (cli_is(a, "--arg")) {
		if (!(v = opt_value(p, "--arg")))
			return -1;
		if (o->nargs == sizeof(p->args) / sizeof(p->args[0])) {
			fprintf(stderr, "ctasim %s: too many --arg\n", p->cmd);
			return -1;
		}
		p->args[o->nargs++] = v;
	} else if (cli_is(a, "--trace")) {
		if (!(v = opt_value(p, "--trace")) || trace_option(p, v) < 0)
			return -1;
	} else if (cli_is(a, "--backend")) {
		if (!(v = opt_value(p, "--backend")) ||
		    keyword(p, "--backend", v, 2, backends, backend_v, &k) < 0)
			return -1;
		o->backend = (cta_backend)k;
	} else if (cli_is(a, "--clc")) {
		if (!(v = opt_value(p, "--clc")) || keyword(p, "--clc", v, 3, clcs, clc_v, &k) < 0)
			return -1;
		o->clc = (cta_clc_mode)k;
	} else if (cli_is(a, "--load")) {
		if (!(v = opt_value(p, "--load")) || cli_load(p->cmd, v) < 0)
			return -1;
	} else {
		return 0;
	}
	return 1;
}

/* Stage 2: the checks and their limits (UB, sanitizer, cancel failures,
 * event limit, watchdog, timing-only). 1, 0 or -1 as launch_option. */
static int check_option(struct run_parse *p, const char *a)
{
	static const char *const ubs[] = {"report", "abort", "off"};
	static const int ub_v[] = {CTA_UB_REPORT, CTA_UB_ABORT, CTA_UB_OFF};
	struct cta_sim_opts *so = &p->so;
	const char *v;
	uint64_t n;
	int k;
	if (cli_is(a, "--ub")) {
		if (!(v = opt_value(p, "--ub")) || keyword(p, "--ub", v, 3, ubs, ub_v, &k) < 0)
			return -1;
		so->ub_mode = (cta_ub_mode)k;
	} else if (cli_is(a, "--sanitize")) {
		if (!(v = opt_value(p, "--sanitize")))
			return -1;
		int t = cta_sanitize_tool_parse(v);
		if (t <= 0) {
			fprintf(stderr,
			        "ctasim %s: --sanitize '%s': expected memcheck, racecheck or "
			        "initcheck\n",
			        p->cmd, v);
			return -1;
		}
		so->sanitize = (cta_sanitize_tool)t;
	} else if (cli_is(a, "--cancel-fail-rate")) {
		if (!(v = opt_value(p, "--cancel-fail-rate")) ||
		    cli_parse_double(p->cmd, "--cancel-fail-rate", v, 0, 1, &so->cancel_fail_rate) <
		        0)
			return -1;
	} else if (cli_is(a, "--cancel-fail-after")) {
		if (!(v = opt_value(p, "--cancel-fail-after")) ||
		    cli_parse_u64(p->cmd, "--cancel-fail-after", v, 0, INT64_MAX, &n) < 0)
			return -1;
		so->cancel_fail_after = (int64_t)n;
	} else if (cli_is(a, "--max-events")) {
		if (!(v = opt_value(p, "--max-events")) ||
		    cli_parse_u64(p->cmd, "--max-events", v, 0, INT64_MAX, &so->max_events) < 0)
			return -1;
	} else if (cli_is(a, "--watchdog")) {
		if (!(v = opt_value(p, "--watchdog")) ||
		    parse_duration(p->cmd, "--watchdog", v, &so->watchdog_ns) < 0)
			return -1;
	} else if (!strcmp(a, "--timing-only")) {
		so->timing_only = 1;
	} else {
		return 0;
	}
	return 1;
}

/* Stage 3: the schedule (seed, placement, jitter, ties, SMs, host
 * threads, spinning blocks). 1, 0 or -1 as launch_option. */
static int schedule_option(struct run_parse *p, const char *a)
{
	static const char *const places[] = {"spread", "round_robin", "order"};
	static const int place_v[] = {CTA_PLACE_SPREAD, CTA_PLACE_ROUND_ROBIN, CTA_PLACE_ORDER};
	static const char *const spins[] = {"fair", "adversarial"};
	static const char *const befores[] = {"clear", "none"};
	static const int before_v[] = {1, 0};
	static const int spin_v[] = {CTA_SPIN_FAIR, CTA_SPIN_ADVERSARIAL};
	struct cta_sim_opts *so = &p->so;
	const char *v;
	uint64_t n;
	int k;
	if (cli_is(a, "--seed")) {
		if (!(v = opt_value(p, "--seed")) ||
		    cli_parse_u64(p->cmd, "--seed", v, 0, UINT64_MAX, &so->seed) < 0)
			return -1;
	} else if (cli_is(a, "--placement")) {
		if (!(v = opt_value(p, "--placement")) ||
		    keyword(p, "--placement", v, 3, places, place_v, &p->placement) < 0)
			return -1;
	} else if (cli_is(a, "--launch-before")) {
		if (!(v = opt_value(p, "--launch-before")) ||
		    keyword(p, "--launch-before", v, 2, befores, before_v, &p->launch_before) < 0)
			return -1;
	} else if (cli_is(a, "--jitter")) {
		if (!(v = opt_value(p, "--jitter")) ||
		    cli_parse_u64(p->cmd, "--jitter", v, 0, CLI_JITTER_MAX, &so->jitter_ns) < 0)
			return -1;
	} else if (!strcmp(a, "--random-tiebreak")) {
		so->random_tiebreak = 1;
	} else if (cli_is(a, "--sm-limit")) {
		if (!(v = opt_value(p, "--sm-limit")) ||
		    cli_parse_u64(p->cmd, "--sm-limit", v, 1, UINT32_MAX, &n) < 0)
			return -1;
		so->sm_limit = (unsigned)n;
	} else if (cli_is(a, "--threads")) {
		if (!(v = opt_value(p, "--threads")) ||
		    cli_parse_u64(p->cmd, "--threads", v, 0, CTA_SIM_MAX_THREADS, &n) < 0)
			return -1;
		so->threads = (unsigned)n;
	} else if (cli_is(a, "--spin-sched")) {
		if (!(v = opt_value(p, "--spin-sched")) ||
		    keyword(p, "--spin-sched", v, 2, spins, spin_v, &k) < 0)
			return -1;
		so->spin_sched = (cta_spin_sched)k;
	} else {
		return 0;
	}
	return 1;
}

/* The last stage: what needs every option at once (the kernel or file
 * named, the backend against --sanitize, the device with its placement
 * and SM count). 0, or -1 after a message. */
static int finish_options(struct run_parse *p, const char *kernel)
{
	const char *cmd = p->cmd;
	struct cta_sim_opts *so = &p->so;
	if (!kernel) {
		if (strcmp(cmd, "scenario") == 0)
			fprintf(stderr, "ctasim %s: which scenario file? (see docs/SCENARIOS.md)\n",
			        cmd);
		else
			fprintf(stderr, "ctasim %s: which kernel? (see 'ctasim list')\n", cmd);
		return -1;
	}
	if (so->sanitize && p->o->backend == CTA_BACKEND_CUDA) {
		fprintf(stderr,
		        "ctasim %s: --sanitize checks the simulator's run; on a GPU use "
		        "compute-sanitizer (tests/cuda/gpu_sanitize.sh)\n",
		        cmd);
		return -1;
	}
	if (cli_device(cmd, p->device, &so->device) < 0)
		return -1;
	if (p->placement >= 0)
		so->device.placement = (cta_placement)p->placement;
	p->o->idle_before = !p->launch_before;
	/* A scenario file may still name a device that has an order: it checks
	 * once the file's device is resolved. */
	if (p->placement >= 0 && (p->device || strcmp(cmd, "scenario")) &&
	    cli_placement_ok(cmd, &so->device) < 0)
		return -1;
	if (so->sm_limit > so->device.sm_count) {
		fprintf(stderr,
		        "ctasim %s: --sm-limit '%u': out of range [1, %u] (device %s has %u SMs)\n",
		        cmd, so->sm_limit, so->device.sm_count, so->device.name,
		        so->device.sm_count);
		return -1;
	}
	return 0;
}

/* Parses the options shared by run, explore and scenario into o: each
 * argument goes through the stages in turn (launch, checks, schedule),
 * then finish_options. Returns 0, -1 on error (already reported), -2 for
 * --help. */
int cli_run_options(const char *cmd, int argc, char **argv, struct cta_harness_opts *o,
                    const char **kernel, const char ***args, int *quiet);
int cli_run_options(const char *cmd, int argc, char **argv, struct cta_harness_opts *o,
                    const char **kernel, const char ***args, int *quiet)
{
	static struct run_parse p;
	p = (struct run_parse){
	    .cmd = cmd, .argc = argc, .argv = argv, .o = o, .placement = -1, .launch_before = 1};
	p.so = (struct cta_sim_opts)CTA_SIM_OPTS_INIT;
	memset(o, 0, sizeof(*o));
	o->version = CTA_HARNESS_OPTS_VERSION;
	*kernel = NULL;
	*quiet = 0;
	for (p.i = 1; p.i < argc; p.i++) {
		const char *a = argv[p.i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			return -2;
		int r = launch_option(&p, a);
		if (!r)
			r = check_option(&p, a);
		if (!r)
			r = schedule_option(&p, a);
		if (r < 0)
			return -1;
		if (r)
			continue;
		if (!strcmp(a, "--quiet")) {
			*quiet = 1;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "ctasim %s: unknown option '%s' (see 'ctasim %s --help')\n",
			        cmd, a, cmd);
			return -1;
		} else if (!*kernel) {
			*kernel = a;
		} else {
			fprintf(stderr, "ctasim %s: unexpected argument '%s'\n", cmd, a);
			return -1;
		}
	}
	if (finish_options(&p, *kernel) < 0)
		return -1;
	o->sim = p.so;
	o->args = p.args;
	*args = p.args;
	return 0;
}

/* Prints the summary lines of simulator kernel i (its launch shape c may
 * be NULL). */
void cli_report_kernel(cta_sim *s, unsigned i, const struct cta_launch_cfg *c, unsigned sm_count);
void cli_report_kernel(cta_sim *s, unsigned i, const struct cta_launch_cfg *c, unsigned sm_count)
{
	if (cta_sim_sm_count(s) < sm_count)
		sm_count = cta_sim_sm_count(s); /* --sm-limit */
	const struct cta_kernel_stats *st = cta_sim_kernel_stats(s, i);
	printf("kernel      %s", st->label);
	if (c)
		printf("  grid %u,%u,%u  block %u,%u,%u", c->grid[0], c->grid[1], c->grid[2],
		       c->block[0], c->block[1], c->block[2]);
	if (c && c->cluster[0] * (c->cluster[1] ? c->cluster[1] : 1) > 1)
		printf("  cluster %u,%u,%u", c->cluster[0], c->cluster[1], c->cluster[2]);
	printf("\n");
	printf("blocks      %" PRIu64 " (launched %" PRIu64 ", stolen %" PRIu64 ")\n", st->blocks,
	       st->launched, st->stolen);
	printf("SMs used    %u of %u; blocks per SM min %" PRIu64 " / median %" PRIu64
	       " / max %" PRIu64 "\n",
	       st->sms_used, sm_count, st->per_sm_min, st->per_sm_median, st->per_sm_max);
	if (st->cancels)
		printf("cancels     %" PRIu64 ": %" PRIu64 " stole, %" PRIu64
		       " failed empty, %" PRIu64 " failed priority, %" PRIu64 " failed injected\n",
		       st->cancels,
		       st->cancels - st->cancel_fail[1] - st->cancel_fail[2] - st->cancel_fail[3],
		       st->cancel_fail[1], st->cancel_fail[2], st->cancel_fail[3]);
	if (st->coverage_checked) {
		if (st->coverage_ok)
			printf("coverage    every block index processed exactly "
			       "once\n");
		else {
			uint64_t ids[8];
			size_t nl = cta_sim_coverage_list(s, i, 0, ids, 8);
			printf("coverage    VIOLATED: %" PRIu64 " lost", st->lost);
			for (size_t j = 0; j < nl && j < 8; j++)
				printf("%s%" PRIu64, j ? "," : " [", ids[j]);
			printf("%s, %" PRIu64 " duplicated", nl ? "]" : "", st->duplicated);
			size_t nd = cta_sim_coverage_list(s, i, 1, ids, 8);
			for (size_t j = 0; j < nd && j < 8; j++)
				printf("%s%" PRIu64, j ? "," : " [", ids[j]);
			printf("%s\n", nd ? "]" : "");
		}
	}
}

/* Rules that follow from others come after them: a request on a result
 * buffer still in flight makes the reads that follow early, a divergent
 * barrier ends in a deadlock. Unknown rules (the sanitizer's) sit between. */
static int rule_rank(const char *rule)
{
	static const char *const order[] = {
	    "request_after_observed_failure",
	    "result_buffer_in_flight",
	    "multicast_cluster_not_running",
	    "leader_count",
	    "for_each_called_twice",
	    "for_each_not_all_threads",
	    "mbarrier_not_initialised",
	    "read_before_complete",
	    "read_failed_index",
	    "divergent_barrier",
	    "barrier_deadlock",
	    "builtin_blockidx_in_body",
	};
	for (size_t i = 0; i < sizeof(order) / sizeof(order[0]); i++)
		if (!strcmp(order[i], rule))
			return i < 9 ? (int)i : (int)i + 20;
	return 10;
}

static cta_sim *order_sim;

static int cmp_ub(const void *a, const void *b)
{
	size_t i = *(const size_t *)a, j = *(const size_t *)b;
	const struct cta_ub_report *x = cta_sim_ub_report(order_sim, i);
	const struct cta_ub_report *y = cta_sim_ub_report(order_sim, j);
	if (x->t_ns != y->t_ns)
		return x->t_ns < y->t_ns ? -1 : 1;
	int rx = rule_rank(x->rule), ry = rule_rank(y->rule);
	if (rx != ry)
		return rx < ry ? -1 : 1;
	return i < j ? -1 : i > j;
}

size_t cli_ub_order(cta_sim *s, size_t *idx, size_t max)
{
	size_t n = cta_sim_ub_count(s);
	size_t *all = malloc((n ? n : 1) * sizeof(*all));
	if (!all)
		return 0;
	for (size_t i = 0; i < n; i++)
		all[i] = i;
	order_sim = s;
	qsort(all, n, sizeof(*all), cmp_ub);
	if (n > max)
		n = max;
	memcpy(idx, all, n * sizeof(*idx));
	free(all);
	return n;
}

void cli_print_ub(cta_sim *s, size_t show)
{
	size_t nub = cta_sim_ub_count(s);
	size_t *ord = malloc((nub ? nub : 1) * sizeof(*ord));
	size_t no = ord ? cli_ub_order(s, ord, nub) : 0;
	for (size_t j = 0; j < no && j < show; j++) {
		const struct cta_ub_report *u = cta_sim_ub_report(s, ord[j]);
		printf("  %s %s: %s:%d kernel %s block %" PRIu64
		       " (blockIdx %u,%u,%u; physical %" PRIu64
		       ") thread %u (threadIdx %u,%u,%u) t=%" PRIu64 " ns: %s\n",
		       u->warning ? "warning" : "UB", u->rule, u->file, u->line, u->kernel_name,
		       u->block, u->block_idx[0], u->block_idx[1], u->block_idx[2], u->phys,
		       u->thread, u->thread_idx[0], u->thread_idx[1], u->thread_idx[2], u->t_ns,
		       u->cause);
		/* One bug often breaks several rules: say which report came
		 * first in the same block, the likely cause. */
		for (size_t k = 0; k < j; k++) {
			const struct cta_ub_report *c = cta_sim_ub_report(s, ord[k]);
			if (!c->warning && c->kernel == u->kernel && c->block == u->block &&
			    strcmp(c->rule, u->rule)) {
				printf("      (after %s in the same block, above: probably its "
				       "consequence)\n",
				       c->rule);
				break;
			}
		}
	}
	uint64_t total = cta_sim_ub_total(s, NULL);
	if (total > show)
		printf("  ... %" PRIu64 " more (all are in the trace)\n", total - show);
	free(ord);
}

/* Prints the summary of a finished simulator run; returns the exit code. */
int cli_report(const char *cmd, struct cta_harness *h, const struct cta_kernel_info *ki, int rc,
               int quiet);
int cli_report(const char *cmd, struct cta_harness *h, const struct cta_kernel_info *ki, int rc,
               int quiet)
{
	cta_sim *s = cta_harness_sim(h);
	const char *verdict = "PASS";
	int code = CTA_EXIT_OK;
	switch (cta_harness_verdict(h)) {
	case CTA_VERDICT_FAIL:
		verdict = "FAIL";
		code = CTA_EXIT_FAIL;
		break;
	case CTA_VERDICT_SKIPPED:
		verdict = "skipped (timing-only run)";
		break;
	default:
		break;
	}
	if (rc == CTA_EUB || rc == CTA_ECOVERAGE || rc == CTA_EDEADLOCK)
		code = CTA_EXIT_FAIL;
	if (s && !quiet) {
		for (unsigned i = 0; i < cta_sim_kernel_count(s); i++)
			cli_report_kernel(s, i, cta_harness_launched(h, i),
			                  cta_harness_device(h)->sm_count);
		printf("makespan    %" PRIu64 " ns (virtual; first launch to last block end)\n",
		       cta_sim_makespan_ns(s));
		/* Every report the run made, not only the ones kept in full. */
		uint64_t nub = cta_sim_ub_total(s, NULL);
		if (nub) {
			const char *const *names = cta_ub_rule_names();
			printf("UB          %" PRIu64 " report%s:", nub, nub == 1 ? "" : "s");
			for (int r = 0; names[r]; r++) {
				uint64_t n = cta_sim_ub_total(s, names[r]);
				if (n)
					printf(" %s=%" PRIu64, names[r], n);
			}
			const char *const *snames = cta_sanitize_rule_names();
			for (int r = 0; snames[r]; r++) {
				uint64_t n = cta_sim_ub_total(s, snames[r]);
				if (n)
					printf(" %s=%" PRIu64, snames[r], n);
			}
			printf("\n");
			cli_print_ub(s, 5);
		}
	}
	if (rc == CTA_EDEADLOCK || (rc < 0 && rc != CTA_EUB && rc != CTA_ECOVERAGE))
		fprintf(stderr, "ctasim %s: %s\n", cmd, cta_harness_errmsg(h));
	const char *period = getenv("CTASIM_PERIOD");
	if (s && period && !strcmp(period, "report"))
		fprintf(stderr, "period skip: %" PRIu64 " blocks\n", cta_sim_blocks_skipped(s));
	if (cta_harness_verdict(h) == CTA_VERDICT_FAIL) {
		printf("result      FAIL: %s\n", cta_harness_errmsg(h));
	} else if (code == CTA_EXIT_FAIL) {
		/* The results checked out, but a rule was broken: that is a
		 * failure, and the line says which rule. */
		printf("result      FAIL: ");
		if (rc == CTA_EUB) {
			/* Rules in cause order (cli_ub_order), each once. */
			size_t nub = s ? cta_sim_ub_count(s) : 0;
			size_t *ord = nub ? malloc(nub * sizeof(*ord)) : NULL;
			size_t no = ord ? cli_ub_order(s, ord, nub) : 0;
			int listed = 0;
			for (size_t j = 0; j < no; j++) {
				const struct cta_ub_report *u = cta_sim_ub_report(s, ord[j]);
				size_t k = 0;
				while (k < j && strcmp(cta_sim_ub_report(s, ord[k])->rule, u->rule))
					k++;
				if (!u->warning && k == j)
					printf("%s%s", listed++ ? ", " : "broke rule ", u->rule);
			}
			free(ord);
			printf("%s", listed ? "" : "undefined behaviour");
		} else if (rc == CTA_ECOVERAGE) {
			printf("broke rule exactly_once_coverage");
		} else {
			printf("deadlock (the run hung)");
		}
		printf(" (results %s)\n",
		       cta_harness_verdict(h) == CTA_VERDICT_PASS ? "verified" : "not checked");
	} else {
		/* Warnings are reported, not failures (docs/UB.md): say so, so
		 * that a PASS under a screen of warnings is not a surprise. */
		size_t nwarn = 0;
		for (size_t j = 0; s && j < cta_sim_ub_count(s); j++)
			nwarn += cta_sim_ub_report(s, j)->warning != 0;
		if (nwarn && code == CTA_EXIT_OK)
			printf("result      %s (with warnings, which alone do not fail a run)\n",
			       verdict);
		else
			printf("result      %s\n", verdict);
	}
	if (ki->flags & CTA_KI_EXPECT_UB)
		printf("note        %s is expected to fail: it demonstrates rule %s\n", ki->name,
		       ki->expect_ub ? ki->expect_ub : "?");
	return code;
}

int cta_cmd_run(int argc, char **argv)
{
	struct cta_harness_opts o;
	const char *kname, **args;
	int quiet;
	int p = cli_run_options("run", argc, argv, &o, &kname, &args, &quiet);
	if (p == -2) {
		usage(stdout);
		return CTA_EXIT_OK;
	}
	if (p < 0)
		return CTA_EXIT_USAGE;
	const struct cta_kernel_info *ki = cta_harness_find(kname);
	if (!ki) {
		fprintf(stderr, "ctasim run: unknown kernel '%s' (see 'ctasim list')\n", kname);
		return CTA_EXIT_USAGE;
	}
	struct cli_run_progress prog;
	cli_run_progress_attach(&prog, &o.sim, quiet);
	struct cta_harness *h;
	int rc = cta_harness_new(&h, ki, &o);
	if (rc < 0) {
		fprintf(stderr, "ctasim run: %s\n", h ? cta_harness_errmsg(h) : cta_strerror(rc));
		cta_harness_free(h);
		return CTA_EXIT_USAGE;
	}
	/* The GPU that ran is known only after the run: the line names it, not
	 * the simulator's model. */
	int cuda = o.backend == CTA_BACKEND_CUDA;
	char dev_esc[200]; /* (a model file's name: user text on stdout, escaped) */
	if (!quiet && !cuda)
		printf("device      %s (sim backend), seed %" PRIu64 "\n",
		       cta_escape(dev_esc, sizeof(dev_esc), o.sim.device.name, 0), o.sim.seed);
	rc = cta_harness_run(h);
	cli_run_progress_end(&prog);
	if (!quiet && cuda && cta_harness_gpu(h))
		printf("device      %s (cuda backend), seed %" PRIu64 "\n", cta_harness_gpu(h),
		       o.sim.seed);
	int code;
	if (rc < 0 && rc != CTA_EUB && rc != CTA_ECOVERAGE && rc != CTA_EDEADLOCK) {
		fprintf(stderr, "ctasim run: %s\n", cta_harness_errmsg(h));
		/* A file that cannot be written is the environment's fault,
		 * exit 2 like every other I/O error of every command. */
		code = (rc == CTA_ENOMEM || rc == CTA_ECUDA) ? CTA_EXIT_FAIL : CTA_EXIT_USAGE;
	} else {
		code = cli_report("run", h, ki, rc, quiet);
		if (o.sim.trace_path && !quiet) {
			/* User text echoed on stdout: control bytes escaped. */
			char ev[400];
			printf("trace       %s\n", cta_escape(ev, sizeof(ev), o.sim.trace_path, 0));
		}
	}
	cta_harness_free(h);
	return code;
}
