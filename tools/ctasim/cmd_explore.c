/* `ctasim explore KERNEL --schedules N`: runs the kernel under N distinct
 * schedules — placement tie-breaks drawn from the seed, latency jitter,
 * fewer SMs, injected cancel failures — and reports the first one that
 * breaks a rule or gives a wrong result, with the exact command that
 * reproduces it. A bug that depends on scheduling shows up here instead of
 * as a silent wrong answer on a GPU. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "cmd.h"
#include "ctasim/harness.h"
#include "ctasim/io.h"
#include "ctasim/sim.h"
#include "progress.h"

static void usage(FILE *f)
{
	fprintf(f,
	        "usage: ctasim explore KERNEL [--schedules N] [--shard I/N] [run options]\n"
	        "       ctasim explore --merge FILE...\n"
	        "\n"
	        "Runs KERNEL under N distinct schedules (N in [1, 10^6], default 100):\n"
	        "schedule i uses seed\n"
	        "SEED+i, random placement tie-breaks, and a mix of latency jitter, SM counts\n"
	        "and injected cancel failures (with --spin-sched adversarial, also which\n"
	        "spinning block runs while the others starve). Stops at the first schedule\n"
	        "that breaks a rule (UB, coverage, deadlock, watchdog) or gives a wrong\n"
	        "result, and prints the `ctasim run`\n"
	        "command that reproduces it. Run options as for `ctasim run` (see its --help).\n"
	        "\n"
	        "  --schedules N     schedules 0..N-1 (1 <= N <= 10^6, default 100)\n"
	        "  --shard I/N       run only schedules i with i mod N = I (0 <= I < N <= 10^6),\n"
	        "                    for GNU parallel or a Slurm array; save each shard's stdout\n"
	        "  --merge FILE...   combine the saved outputs of shards 0..N-1 into one report:\n"
	        "                    the first failing schedule overall and its reproducer\n"
	        "  --quiet           no progress line (it is shown only on a terminal)\n"
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

/* Prints one argument for a POSIX shell: as is when it is plain, else in
 * single quotes. */
static void put_shell_arg(const char *a)
{
	int plain = a[0] != 0;
	for (const char *c = a; *c; c++)
		if (!strchr(
		        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./=,:+-@%",
		        *c))
			plain = 0;
	if (plain) {
		printf(" %s", a);
		return;
	}
	printf(" '");
	for (const char *c = a; *c; c++)
		if (*c == '\'')
			printf("'\\''");
		else
			putchar(*c);
	putchar('\'');
}

/* The shortest form of d that reads back as d. */
static void put_double(double d)
{
	char b[40];
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(b, sizeof(b), "%.*g", prec, d);
		if (strtod(b, NULL) == d)
			break;
	}
	printf(" %s", b);
}

/* The options a schedule sets: the user's values of these are replaced. */
static int schedule_option(const char *a, int *takes_value)
{
	static const char *const valued[] = {"--seed", "--jitter", "--sm-limit",
	                                     "--cancel-fail-rate", NULL};
	*takes_value = 0;
	if (!strcmp(a, "--random-tiebreak") || !strcmp(a, "--quiet"))
		return 1;
	for (int k = 0; valued[k]; k++) {
		size_t n = strlen(valued[k]);
		if (!strncmp(a, valued[k], n) && (a[n] == 0 || a[n] == '=')) {
			*takes_value = a[n] == 0;
			return 1;
		}
	}
	return 0;
}

/* The reproducer: the user's own arguments, in order and as typed (so
 * --load, --device FILE, --placement and every other flag survive), with
 * the schedule's seed, jitter, SM count and failure rate in place of
 * theirs. */
static void put_reproducer(char **rest, int nrest, const struct schedule *sc)
{
	printf("reproduce:  ctasim run");
	for (int j = 1; j < nrest; j++) {
		int tv;
		if (schedule_option(rest[j], &tv)) {
			j += tv;
			continue;
		}
		put_shell_arg(rest[j]);
	}
	printf(" --seed %" PRIu64 " --random-tiebreak --jitter %" PRIu64 " --cancel-fail-rate",
	       sc->seed, sc->jitter);
	put_double(sc->fail_rate);
	if (sc->sm_limit)
		printf(" --sm-limit %u", sc->sm_limit);
	printf("\n");
}

static int parse_shard(const char *v, uint64_t *idx, uint64_t *cnt)
{
	/* Both numbers through the one parser: no spaces, signs or overflow. */
	char part[32];
	const char *slash = strchr(v, '/');
	if (!slash || (size_t)(slash - v) >= sizeof(part))
		return -1;
	memcpy(part, v, (size_t)(slash - v));
	part[slash - v] = 0;
	uint64_t i, n;
	if (cta_parse_uint(slash + 1, 1, 1000000, 0, &n, NULL, 0) < 0 ||
	    cta_parse_uint(part, 0, n - 1, 0, &i, NULL, 0) < 0)
		return -1;
	*idx = i;
	*cnt = n;
	return 0;
}

/* ---- --merge ---------------------------------------------------------- */

struct shard_file {
	char kernel[128];
	uint64_t schedules, idx, cnt, explored, failed; /* failed: UINT64_MAX if none */
	char *fail_line, *repro_line;
	uint64_t *prints;
	size_t nprints;
};

static char *dup_line(const char *s)
{
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		n--;
	char *d = malloc(n + 1);
	if (d) {
		memcpy(d, s, n);
		d[n] = 0;
	}
	return d;
}

static int read_shard(const char *path, struct shard_file *sf)
{
	memset(sf, 0, sizeof(*sf));
	sf->failed = UINT64_MAX;
	FILE *f = !strcmp(path, "-") ? stdin : fopen(path, "r");
	if (!f) {
		fprintf(stderr, "ctasim explore: --merge %s: cannot open: %s\n", path,
		        strerror(errno));
		return -1;
	}
	char *line = NULL;
	size_t cap = 0;
	int have = 0, bad = 0;
	unsigned long lineno = 0;
	while (getline(&line, &cap, f) > 0) {
		lineno++;
		if (!strncmp(line, "#explore ", 9)) {
			char fail[32];
			unsigned long long sch, i, n, ex;
			if (sscanf(line + 9,
			           "kernel=%127s schedules=%llu shard=%llu/%llu explored=%llu "
			           "failed=%31s",
			           sf->kernel, &sch, &i, &n, &ex, fail) != 6) {
				fprintf(
				    stderr,
				    "ctasim explore: --merge %s:%lu: malformed '#explore' line\n",
				    path, lineno);
				bad = 1;
				break;
			}
			sf->schedules = sch;
			sf->idx = i;
			sf->cnt = n;
			sf->explored = ex;
			sf->failed = strcmp(fail, "-") ? strtoull(fail, NULL, 10) : UINT64_MAX;
			have = 1;
		} else if (!strncmp(line, "#fingerprints", 13)) {
			for (char *t = strtok(line + 13, " \n"); t; t = strtok(NULL, " \n")) {
				uint64_t *np = realloc(sf->prints, (sf->nprints + 1) * sizeof(*np));
				if (!np)
					break;
				sf->prints = np;
				sf->prints[sf->nprints++] = strtoull(t, NULL, 16);
			}
		} else if (!strncmp(line, "schedule ", 9) && strstr(line, " FAILED: ")) {
			free(sf->fail_line);
			sf->fail_line = dup_line(line);
		} else if (!strncmp(line, "reproduce:", 10)) {
			free(sf->repro_line);
			sf->repro_line = dup_line(line);
		}
	}
	free(line);
	if (f != stdin)
		fclose(f);
	if (!bad && !have) {
		fprintf(
		    stderr,
		    "ctasim explore: --merge %s: not the output of 'ctasim explore --shard' (no "
		    "'#explore' line: did that shard finish?)\n",
		    path);
		bad = 1;
	}
	if (!bad && sf->failed != UINT64_MAX && (!sf->fail_line || !sf->repro_line)) {
		fprintf(stderr,
		        "ctasim explore: --merge %s: schedule %" PRIu64
		        " failed but the file lacks its FAILED or reproduce line\n",
		        path, sf->failed);
		bad = 1;
	}
	return bad ? -1 : 0;
}

static int merge(int argc, char **argv, int first)
{
	int nf = argc - first;
	if (nf < 1) {
		fprintf(stderr, "ctasim explore: --merge needs the shard output files\n");
		return CTA_EXIT_USAGE;
	}
	struct shard_file *sf = calloc((size_t)nf, sizeof(*sf));
	if (!sf)
		return CTA_EXIT_FAIL;
	int code = CTA_EXIT_OK, k;
	for (k = 0; k < nf; k++)
		if (read_shard(argv[first + k], &sf[k]) < 0) {
			code = CTA_EXIT_USAGE;
			break;
		}
	uint64_t cnt = code ? 0 : sf[0].cnt;
	unsigned char *seen = code ? NULL : calloc(cnt, 1);
	for (k = 0; !code && k < nf; k++) {
		if (strcmp(sf[k].kernel, sf[0].kernel) || sf[k].schedules != sf[0].schedules ||
		    sf[k].cnt != cnt) {
			fprintf(stderr,
			        "ctasim explore: --merge %s: explore of %s, %" PRIu64
			        " schedules, %" PRIu64 " shards; %s is of %s, %" PRIu64
			        " schedules, %" PRIu64 " shards\n",
			        argv[first + k], sf[k].kernel, sf[k].schedules, sf[k].cnt,
			        argv[first], sf[0].kernel, sf[0].schedules, cnt);
			code = CTA_EXIT_USAGE;
		} else if (!seen || seen[sf[k].idx]++) {
			fprintf(stderr,
			        "ctasim explore: --merge %s: shard %" PRIu64 "/%" PRIu64
			        " given twice\n",
			        argv[first + k], sf[k].idx, cnt);
			code = CTA_EXIT_USAGE;
		}
	}
	for (uint64_t i = 0; !code && i < cnt; i++)
		if (!seen[i]) {
			fprintf(stderr,
			        "ctasim explore: --merge: shard %" PRIu64 "/%" PRIu64
			        " is missing (give the outputs of shards 0 to %" PRIu64 ")\n",
			        i, cnt, cnt - 1);
			code = CTA_EXIT_USAGE;
		}
	if (!code) {
		/* Every shard ran its schedules in order up to its first failure,
		 * so the smallest failing index is the first failure overall. */
		int worst = -1;
		uint64_t explored = 0;
		for (k = 0; k < nf; k++) {
			explored += sf[k].explored;
			if (sf[k].failed != UINT64_MAX &&
			    (worst < 0 || sf[k].failed < sf[worst].failed))
				worst = k;
		}
		printf("merged      %" PRIu64 " shards of 'ctasim explore %s --schedules %" PRIu64
		       "': %" PRIu64 " schedules explored\n",
		       cnt, sf[0].kernel, sf[0].schedules, explored);
		if (worst >= 0) {
			printf("%s (shard %" PRIu64 "/%" PRIu64
			       "; every schedule before it passed)\n%s\n",
			       sf[worst].fail_line, sf[worst].idx, cnt, sf[worst].repro_line);
			code = CTA_EXIT_FAIL;
		} else {
			size_t distinct = 0, tot = 0;
			for (k = 0; k < nf; k++)
				tot += sf[k].nprints;
			uint64_t *all = malloc((tot ? tot : 1) * sizeof(*all));
			for (k = 0; all && k < nf; k++)
				for (size_t j = 0; j < sf[k].nprints; j++) {
					size_t m = 0;
					while (m < distinct && all[m] != sf[k].prints[j])
						m++;
					if (m == distinct)
						all[distinct++] = sf[k].prints[j];
				}
			free(all);
			printf("%" PRIu64
			       " schedules explored: all passed (%zu distinct outcomes by "
			       "makespan, steals and placement)\n",
			       explored, distinct);
		}
	}
	for (k = 0; k < nf; k++) {
		free(sf[k].fail_line);
		free(sf[k].repro_line);
		free(sf[k].prints);
	}
	free(sf);
	free(seen);
	return code;
}

int cta_cmd_explore(int argc, char **argv)
{
	uint64_t nsched = 100, shard_idx = 0, shard_cnt = 1;
	int sharded = 0;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--merge"))
			return i == 1 ? merge(argc, argv, 2)
			              : (fprintf(stderr,
			                         "ctasim explore: --merge takes only the shard "
			                         "output files (ctasim explore --merge FILE...)\n"),
			                 CTA_EXIT_USAGE);
	/* Take --schedules and --shard out; the rest are run options. */
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
		} else if (cli_is(argv[i], "--shard")) {
			const char *v = cli_value("explore", argc, argv, &i, "--shard");
			if (!v || parse_shard(v, &shard_idx, &shard_cnt) < 0) {
				if (v)
					fprintf(stderr,
					        "ctasim explore: --shard '%s': expected I/N with 0 "
					        "<= I < N <= 1000000 (shard I of N)\n",
					        v);
				free(rest);
				return CTA_EXIT_USAGE;
			}
			sharded = 1;
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
	/* A --sm-limit of the user's bounds the SM counts the schedules try. */
	unsigned sms = base.sim.sm_limit ? base.sim.sm_limit : base.sim.device.sm_count;
	/* Distinct outcomes: a fingerprint of makespan and per-kernel stats.
	 * A few bytes per distinct outcome: memory stays flat in the number of
	 * schedules (every harness and simulator is freed before the next). */
	uint64_t *prints = NULL;
	size_t distinct = 0, pcap = 0;
	uint64_t redrawn = 0;
	uint64_t explored = 0, failed_at = UINT64_MAX;
	int code = CTA_EXIT_OK;
	struct cli_progress pr;
	uint64_t mine = (nsched - shard_idx + shard_cnt - 1) / shard_cnt;
	cli_progress_start(&pr, "schedules", mine, quiet);
	for (uint64_t i = shard_idx; i < nsched; i += shard_cnt) {
		struct schedule sc = schedule_of(base.sim.seed, i, sms, base.sim.cancel_fail_rate);
		if (sc.sm_limit == 0 || sc.sm_limit > sms)
			sc.sm_limit = base.sim.sm_limit;
		struct cta_harness_opts o = base;
		o.sim.seed = sc.seed;
		o.sim.random_tiebreak = 1;
		o.sim.jitter_ns = sc.jitter;
		o.sim.sm_limit = sc.sm_limit;
		o.sim.cancel_fail_rate = sc.fail_rate;
		o.sim.trace_path = NULL;
		struct cta_harness *h;
		int rc, made;
		for (;;) {
			rc = cta_harness_new(&h, ki, &o);
			made = rc >= 0;
			if (!made)
				break;
			rc = cta_harness_run(h);
			/* A drawn SM count that cannot hold the launch (clusters of
			 * 4 blocks that each fill an SM, on 2 SMs) is not a finding:
			 * CUDA would refuse the launch, not run it wrongly. Draw
			 * again with twice the SMs, up to what the user allowed. */
			if (rc != CTA_ERESOURCES || o.sim.sm_limit == base.sim.sm_limit)
				break;
			cta_harness_free(h);
			redrawn++;
			o.sim.sm_limit *= 2;
			if (o.sim.sm_limit >= sms)
				o.sim.sm_limit = base.sim.sm_limit;
			sc.sm_limit = o.sim.sm_limit;
		}
		if (!made || rc == CTA_ERESOURCES) {
			/* Not even every SM allowed holds it: bad input, as in run. */
			cli_progress_end(&pr);
			fprintf(stderr, "ctasim explore: %s\n",
			        h ? cta_harness_errmsg(h) : cta_strerror(rc));
			cta_harness_free(h);
			code = CTA_EXIT_USAGE;
			break;
		}
		explored++;
		int failed = rc < 0 || cta_harness_verdict(h) == CTA_VERDICT_FAIL;
		cta_sim *s = cta_harness_sim(h);
		if (s) {
			uint64_t f = cta_sim_makespan_ns(s) * 1000003u;
			for (unsigned k = 0; k < cta_sim_kernel_count(s); k++) {
				const struct cta_kernel_stats *st = cta_sim_kernel_stats(s, k);
				f = f * 31 + st->stolen * 7 + st->per_sm_max * 13 + st->sms_used;
			}
			size_t j = 0;
			while (j < distinct && prints[j] != f)
				j++;
			if (j == distinct) {
				if (distinct == pcap) {
					size_t nc = pcap ? pcap * 2 : 64;
					uint64_t *np = realloc(prints, nc * sizeof(*np));
					if (np) {
						prints = np;
						pcap = nc;
					}
				}
				if (distinct < pcap)
					prints[distinct++] = f;
			}
		}
		cli_progress_step(&pr, explored);
		if (failed) {
			cli_progress_end(&pr);
			const char *why = cta_harness_errmsg(h);
			if (rc == CTA_EUB && s && cta_sim_ub_count(s)) {
				/* The first report in cause order (cli_ub_order). */
				size_t first = 0;
				cli_ub_order(s, &first, 1);
				const struct cta_ub_report *u = cta_sim_ub_report(s, first);
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
			put_reproducer(rest, nrest, &sc);
			cta_harness_free(h);
			code = CTA_EXIT_FAIL;
			failed_at = i;
			break;
		}
		cta_harness_free(h);
	}
	cli_progress_end(&pr);
	if (code == CTA_EXIT_OK && !sharded) {
		printf("%" PRIu64 " schedules explored: all passed (%zu distinct outcomes by "
		       "makespan, steals and placement)\n",
		       nsched, distinct);
		if (redrawn)
			printf("%" PRIu64
			       " drawn SM counts could not hold the launch and were drawn "
			       "again with more SMs\n",
			       redrawn);
	} else if (code == CTA_EXIT_OK)
		printf("shard %" PRIu64 "/%" PRIu64 ": %" PRIu64 " of %" PRIu64
		       " schedules explored: all passed\n",
		       shard_idx, shard_cnt, explored, nsched);
	/* What `explore --merge` reads back. */
	if (sharded && code != CTA_EXIT_USAGE) {
		printf("#explore kernel=%s schedules=%" PRIu64 " shard=%" PRIu64 "/%" PRIu64
		       " explored=%" PRIu64 " failed=",
		       kname, nsched, shard_idx, shard_cnt, explored);
		if (failed_at == UINT64_MAX)
			printf("-\n");
		else
			printf("%" PRIu64 "\n", failed_at);
		printf("#fingerprints");
		for (size_t j = 0; j < distinct; j++)
			printf(" %" PRIx64, prints[j]);
		printf("\n");
	}
	free(prints);
	free(rest);
	return code;
}
