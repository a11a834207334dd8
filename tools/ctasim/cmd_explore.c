/* `ctasim explore KERNEL --schedules N`: runs the kernel under N distinct
 * schedules — placement tie-breaks drawn from the seed, latency jitter,
 * fewer SMs, injected cancel failures — and reports the first one that
 * breaks a rule or gives a wrong result, with the exact command that
 * reproduces it. A bug that depends on scheduling shows up here instead of
 * as a silent wrong answer on a GPU. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "cmd.h"
#include "ctasim/harness.h"
#include "ctasim/io.h"
#include "ctasim/sim.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: ctasim explore KERNEL [--schedules N] [run options]\n"
	           "\n"
	           "Runs KERNEL under N distinct schedules (N in [1, 10^6], default 100):\n"
	           "schedule i uses seed\n"
	           "SEED+i, random placement tie-breaks, and a mix of latency jitter, SM counts\n"
	           "and injected cancel failures. Stops at the first schedule that breaks a rule\n"
	           "(UB, coverage, deadlock) or gives a wrong result, and prints the `ctasim run`\n"
	           "command that reproduces it. Run options as for `ctasim run` (see its --help).\n"
	           "\n"
	           "exit: 0 every schedule passed, 1 one failed, 2 usage or bad input\n");
}

/* The knobs of schedule i, spread so that neighbouring schedules differ in
 * several at once. */
struct schedule {
	uint64_t seed;
	uint64_t jitter;
	unsigned sm_limit;
	double fail_rate;
};

static struct schedule schedule_of(uint64_t base_seed, uint64_t i, unsigned sm_count,
                                   double user_rate)
{
	static const uint64_t jitters[] = {0, 0, 20, 100, 500, 2000};
	static const double rates[] = {0, 0, 0.1, 0.5, 0.9, 1.0};
	uint64_t h = (i + 1) * 0x9e3779b97f4a7c15ull;
	h ^= h >> 29;
	struct schedule sc;
	sc.seed = base_seed + i;
	sc.jitter = jitters[h % 6];
	unsigned sms[] = {0, 0, 1, 2, 7, sm_count / 2, sm_count > 3 ? sm_count - 3 : 0};
	sc.sm_limit = sms[(h >> 8) % 7];
	sc.fail_rate = user_rate > 0 ? user_rate : rates[(h >> 16) % 6];
	return sc;
}

int cta_cmd_explore(int argc, char **argv)
{
	uint64_t nsched = 100;
	/* Take --schedules out; the rest are run options. */
	char **rest = calloc((size_t)argc + 1, sizeof(char *));
	int nrest = 0;
	if (!rest)
		return CTA_EXIT_FAIL;
	for (int i = 0; i < argc; i++) {
		if (cli_is(argv[i], "--schedules")) {
			const char *v = cli_value("explore", argc, argv, &i, "--schedules");
			int bad = !v || cli_parse_u64("explore", "--schedules", v, 1, 1000000,
			                              &nsched) < 0;
			if (bad) {
				free(rest);
				return CTA_EXIT_USAGE;
			}
		} else {
			rest[nrest++] = argv[i];
		}
	}
	struct cta_harness_opts base;
	const char *kname, **args;
	int quiet;
	int p = cli_run_options("explore", nrest, rest, &base, &kname, &args, &quiet);
	if (p == -2) {
		usage(stdout);
		free(rest);
		return CTA_EXIT_OK;
	}
	if (p < 0) {
		free(rest);
		return CTA_EXIT_USAGE;
	}
	const struct cta_kernel_info *ki = cta_harness_find(kname);
	if (!ki) {
		fprintf(stderr, "ctasim explore: unknown kernel '%s' (see 'ctasim list')\n", kname);
		free(rest);
		return CTA_EXIT_USAGE;
	}
	if (base.backend != CTA_BACKEND_SIM) {
		fprintf(stderr, "ctasim explore: schedules are explored in the simulator only\n");
		free(rest);
		return CTA_EXIT_USAGE;
	}
	/* Distinct outcomes: a fingerprint of makespan and per-kernel stats. */
	uint64_t *prints = calloc(nsched, sizeof(uint64_t));
	uint64_t distinct = 0;
	int code = CTA_EXIT_OK;
	for (uint64_t i = 0; i < nsched; i++) {
		struct schedule sc = schedule_of(base.sim.seed, i, base.sim.device.sm_count,
		                                 base.sim.cancel_fail_rate);
		struct cta_harness_opts o = base;
		o.sim.seed = sc.seed;
		o.sim.random_tiebreak = 1;
		o.sim.jitter_ns = sc.jitter;
		o.sim.sm_limit = sc.sm_limit;
		o.sim.cancel_fail_rate = sc.fail_rate;
		o.sim.trace_path = NULL;
		struct cta_harness *h;
		int rc = cta_harness_new(&h, ki, &o);
		if (rc < 0) {
			fprintf(stderr, "ctasim explore: %s\n", h ? cta_harness_errmsg(h) : "?");
			cta_harness_free(h);
			code = CTA_EXIT_USAGE;
			break;
		}
		rc = cta_harness_run(h);
		int failed = rc < 0 || cta_harness_verdict(h) == CTA_VERDICT_FAIL;
		cta_sim *s = cta_harness_sim(h);
		if (s && prints) {
			uint64_t f = cta_sim_makespan_ns(s) * 1000003u;
			for (unsigned k = 0; k < cta_sim_kernel_count(s); k++) {
				const struct cta_kernel_stats *st = cta_sim_kernel_stats(s, k);
				f = f * 31 + st->stolen * 7 + st->per_sm_max * 13 + st->sms_used;
			}
			uint64_t j = 0;
			while (j < distinct && prints[j] != f)
				j++;
			if (j == distinct)
				prints[distinct++] = f;
		}
		if (failed) {
			const char *why = cta_harness_errmsg(h);
			if (rc == CTA_EUB && s && cta_sim_ub_count(s)) {
				const struct cta_ub_report *u = cta_sim_ub_report(s, 0);
				printf("schedule %" PRIu64 " of %" PRIu64
				       " FAILED: UB %s at %s:%d: %s\n",
				       i, nsched, u->rule, u->file, u->line, u->cause);
			} else {
				printf("schedule %" PRIu64 " of %" PRIu64 " FAILED: %s\n", i,
				       nsched,
				       rc == CTA_ECOVERAGE ? "exactly-once coverage violated"
				       : why[0]            ? why
				                           : cta_strerror(rc));
			}
			printf("reproduce:  ctasim run %s --device '%s' --seed %" PRIu64
			       " --random-tiebreak --jitter %" PRIu64 " --cancel-fail-rate %g",
			       kname, base.sim.device.name, sc.seed, sc.jitter, sc.fail_rate);
			if (sc.sm_limit)
				printf(" --sm-limit %u", sc.sm_limit);
			if (base.sim.timing_only)
				printf(" --timing-only");
			if (base.sim.cancel_fail_after >= 0)
				printf(" --cancel-fail-after %" PRId64, base.sim.cancel_fail_after);
			if (base.grid_set)
				printf(" --grid %u,%u,%u", base.grid[0], base.grid[1],
				       base.grid[2]);
			if (base.block_set)
				printf(" --block %u,%u,%u", base.block[0], base.block[1],
				       base.block[2]);
			for (size_t a = 0; a < base.nargs; a++)
				printf(" --arg '%s'", base.args[a]);
			printf("\n");
			cta_harness_free(h);
			code = CTA_EXIT_FAIL;
			break;
		}
		cta_harness_free(h);
		if (i + 1 == nsched)
			printf("%" PRIu64 " schedules explored: all passed (%" PRIu64
			       " distinct outcomes by makespan, steals and placement)\n",
			       nsched, distinct);
	}
	free(prints);
	free(rest);
	return code;
}
