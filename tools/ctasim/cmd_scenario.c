/* `ctasim scenario FILE`: runs a scenario file (docs/SCENARIOS.md), several
 * kernels sharing one device through streams with priorities, writes one
 * trace for all of them and prints a summary per kernel. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli_util.h"
#include "cmd.h"
#include "ctasim/harness.h"
#include "ctasim/io.h"
#include "ctasim/scenario.h"
#include "ctasim/sim.h"
#include "progress.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: ctasim scenario FILE [options]\n"
	           "\n"
	           "Runs the kernels of scenario FILE (docs/SCENARIOS.md) on one simulated\n"
	           "device, writes one trace for all of them and checks each kernel's result.\n"
	           "--device, --placement, --seed and --sm-limit win over the file's device,\n"
	           "seed and sm_limit (a note on stderr says what was replaced).\n"
	           "\n"
	           "  --device NAME|FILE     device model when the file names none (H100-SXM)\n"
	           "  --seed N               seed when the file sets none (default 1)\n"
	           "  --trace FILE           write the trace (.gz/.zst: compressed, -: stdout)\n"
	           "  --timing-only          run one thread per block: timing, no results\n"
	           "  --backend sim|cuda     simulator (default) or the GPU\n"
	           "  --ub report|abort|off, --cancel-fail-rate P, --cancel-fail-after N,\n"
	           "  --placement P, --launch-before clear|none, --jitter NS, --random-tiebreak,\n"
	           "  --sm-limit N,\n"
	           "  --threads N, --max-events N, --load LIB.so, --quiet: as for 'ctasim run'\n"
	           "\n"
	           "exit: 0 success, 1 wrong result or rule violation, 2 usage or bad input\n");
}

static const char *stream_name(const struct cta_scenario *sc, unsigned s, int *prio)
{
	if (s == CTA_SCENARIO_DEFAULT_STREAM) {
		*prio = 0;
		return "default";
	}
	*prio = sc->streams[s].priority;
	return sc->streams[s].name;
}

static void print_ub(cta_sim *s)
{
	size_t nub = cta_sim_ub_count(s);
	if (!nub)
		return;
	printf("UB          %zu report%s\n", nub, nub == 1 ? "" : "s");
	cli_print_ub(s, 5);
}

/* Prints each kernel's summary; returns 1 when some result check failed. */
static int report(cta_scenario_run *x, int quiet)
{
	const struct cta_scenario *sc = cta_scenario_exec_scenario(x);
	cta_sim *s = cta_scenario_exec_sim(x);
	int failed = 0;
	for (unsigned i = 0; i < sc->nkernels; i++) {
		const struct cta_scenario_kernel *k = &sc->kernels[i];
		struct cta_harness *h = cta_scenario_exec_harness(x, i);
		int prio;
		const char *sname = stream_name(sc, k->stream, &prio);
		cta_verdict v = h ? cta_harness_verdict(h) : CTA_VERDICT_FAIL;
		failed |= v == CTA_VERDICT_FAIL;
		if (!quiet) {
			printf("\n[%s] harness %s, stream %s (priority %d), released at %" PRIu64
			       " ns\n",
			       k->label, k->harness, sname, prio, k->release_ns);
			unsigned first, count;
			if (s && !cta_scenario_exec_kernels(x, i, &first, &count))
				for (unsigned j = 0; j < count; j++) {
					const struct cta_kernel_stats *st =
					    cta_sim_kernel_stats(s, first + j);
					cli_report_kernel(s, first + j, cta_harness_launched(h, j),
					                  cta_scenario_exec_device(x)->sm_count);
					if (st->launched)
						printf("time        launched %" PRIu64
						       " ns, first block %" PRIu64
						       " ns, last end %" PRIu64 " ns\n",
						       st->launch_ns, st->first_start_ns,
						       st->last_end_ns);
				}
		}
		if (v == CTA_VERDICT_FAIL)
			printf("result      [%s] FAIL: %s\n", k->label, cta_harness_errmsg(h));
		else if (!quiet)
			printf("result      %s\n",
			       v == CTA_VERDICT_SKIPPED ? "skipped (timing-only run)" : "PASS");
	}
	if (s && !quiet) {
		printf("\nmakespan    %" PRIu64 " ns (virtual; first launch to last block end)\n",
		       cta_sim_makespan_ns(s));
		print_ub(s);
	}
	return failed;
}

/* The value of the last occurrence of option opt in argv, or NULL. */
static const char *given(int argc, char **argv, const char *opt)
{
	const char *v = NULL;
	size_t n = strlen(opt);
	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], opt, n) && argv[i][n] == '=')
			v = argv[i] + n + 1;
		else if (!strcmp(argv[i], opt) && i + 1 < argc)
			v = argv[++i];
	return v;
}

/* A flag on the command line that the file also sets is honoured, never
 * dropped in silence: the command line wins and stderr says what it
 * replaced. The device is resolved here so that --placement applies to the
 * device that runs, the file's or the command line's. */
static int apply_cli_over_file(struct cta_scenario *sc, struct cta_harness_opts *o, int argc,
                               char **argv)
{
	const char *dev = given(argc, argv, "--device"), *seed = given(argc, argv, "--seed");
	const char *sm = given(argc, argv, "--sm-limit"), *pl = given(argc, argv, "--placement");
	if (dev && sc->device_ref[0])
		fprintf(stderr,
		        "ctasim scenario: note: --device %s replaces the file's device %s (line "
		        "%d)\n",
		        dev, sc->device_ref, sc->device_line);
	if (!dev && sc->device_ref[0]) {
		char derr[512];
		cta_placement keep = o->sim.device.placement;
		if (cta_device_resolve(&o->sim.device, sc->device_ref, derr, sizeof(derr)) < 0) {
			fprintf(stderr, "ctasim scenario: %s:%d: field 'device': %s\n", sc->path,
			        sc->device_line, derr);
			return -1;
		}
		if (pl)
			o->sim.device.placement = keep;
	}
	if (pl && cli_placement_ok("scenario", &o->sim.device) < 0)
		return -1;
	sc->device_ref[0] = 0;
	if (seed && sc->has_seed) {
		fprintf(stderr,
		        "ctasim scenario: note: --seed %s replaces the file's seed %" PRIu64 "\n",
		        seed, sc->seed);
		sc->has_seed = 0;
	}
	if (sm && sc->sm_limit) {
		fprintf(
		    stderr,
		    "ctasim scenario: note: --sm-limit %s replaces the file's sm_limit %u (line "
		    "%d)\n",
		    sm, sc->sm_limit, sc->sm_limit_line);
		sc->sm_limit = 0;
	}
	return 0;
}

int cta_cmd_scenario(int argc, char **argv)
{
	struct cta_harness_opts o;
	const char *path, **args;
	int quiet;
	int p = cli_run_options("scenario", argc, argv, &o, &path, &args, &quiet);
	if (p == -2) {
		usage(stdout);
		return CTA_EXIT_OK;
	}
	if (p < 0)
		return CTA_EXIT_USAGE;
	if (o.nargs || o.grid_set || o.block_set) {
		fprintf(stderr, "ctasim scenario: --arg, --grid and --block belong in the scenario "
		                "file (its kernels' \"args\", \"grid\" and \"block\")\n");
		return CTA_EXIT_USAGE;
	}
	char err[1024] = "";
	cta_scenario_run *x = NULL;
	struct cta_scenario sc0;
	int rc = cta_scenario_load(&sc0, path, err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "ctasim scenario: %s\n", err);
		return rc == CTA_EIO || rc == CTA_ENOMEM ? CTA_EXIT_FAIL : CTA_EXIT_USAGE;
	}
	if (apply_cli_over_file(&sc0, &o, argc, argv) < 0) {
		cta_scenario_free(&sc0);
		return CTA_EXIT_USAGE;
	}
	struct cli_run_progress prog;
	cli_run_progress_attach(&prog, &o.sim, quiet);
	rc = cta_scenario_exec(&x, &sc0, &o, err, sizeof(err));
	cli_run_progress_end(&prog);
	if (rc < 0 && rc != CTA_EUB && rc != CTA_ECOVERAGE && rc != CTA_EDEADLOCK) {
		fprintf(stderr, "ctasim scenario: %s\n", err);
		cta_scenario_exec_free(x);
		cta_scenario_free(&sc0);
		return (rc == CTA_ENOMEM || rc == CTA_ECUDA) ? CTA_EXIT_FAIL : CTA_EXIT_USAGE;
	}
	const struct cta_scenario *sc = cta_scenario_exec_scenario(x);
	/* On the GPU the line names the GPU that ran, not the model. */
	const char *gpu = sc->nkernels ? cta_harness_gpu(cta_scenario_exec_harness(x, 0)) : NULL;
	if (!quiet)
		printf("scenario    %s: %u kernel%s, %u stream%s, device %s (%s backend)\n", path,
		       sc->nkernels, sc->nkernels == 1 ? "" : "s", sc->nstreams,
		       sc->nstreams == 1 ? "" : "s", gpu ? gpu : cta_scenario_exec_device(x)->name,
		       o.backend == CTA_BACKEND_CUDA ? "cuda" : "sim");
	int failed = report(x, quiet);
	int code = failed ? CTA_EXIT_FAIL : CTA_EXIT_OK;
	if (rc == CTA_EUB) {
		fprintf(stderr, "ctasim scenario: the run reported undefined behaviour\n");
		code = CTA_EXIT_FAIL;
	} else if (rc < 0) {
		fprintf(stderr, "ctasim scenario: %s\n", err);
		code = CTA_EXIT_FAIL;
	}
	printf("result      %s\n", code == CTA_EXIT_OK ? "PASS" : "FAIL");
	if (o.sim.trace_path && !quiet) {
		/* User text echoed on stdout: control bytes escaped. */
		char ev[400];
		printf("trace       %s\n", cta_escape(ev, sizeof(ev), o.sim.trace_path, 0));
	}
	cta_scenario_exec_free(x);
	cta_scenario_free(&sc0);
	return code;
}
