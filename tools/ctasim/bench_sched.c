/* The scheduler benchmark: a million timing-only blocks spread over 16
 * kernels on 6 priorities (tests/golden/scenarios/bench_16k6p.json) against
 * the same million blocks in one kernel, both on one host thread, so the
 * ratio shows what streams, priorities and the dispatcher's candidate
 * choice cost per block. The one kernel runs every block through the
 * engine (no period skip, which a run of several kernels never takes), so
 * both sides pay the same per-block engine work. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_sched.h"
#include "ctasim/harness.h"
#include "ctasim/scenario.h"
#include "ctasim/sim.h"

#define BENCH_KERNELS 16
#define BENCH_GRID    62500 /* 16 x 62500 = 1e6 blocks */
#define BENCH_NS      5000

/* CPU time of the calling thread, which runs everything here (one host
 * thread), as the other single-core figures are measured. */
static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int cta_bench_scenario_json(char *buf, unsigned long size)
{
	static const char *const imb[3] = {"none", "one_in_seven", "heavy_tail"};
	size_t n = 0;
#define PUT(...)                                                                                   \
	n += (size_t)snprintf(buf + (n < size ? n : size), n < size ? size - n : 0, __VA_ARGS__)
	PUT("{\"version\": 1, \"device\": \"H100\", \"seed\": 1, \"timing_only\": true,"
	    " \"streams\": [");
	for (int p = 0; p < 6; p++)
		PUT("%s{\"name\": \"p%d\", \"priority\": %d}", p ? ", " : "", p, -p);
	PUT("], \"kernels\": [");
	for (int k = 0; k < BENCH_KERNELS; k++)
		PUT("%s{\"label\": \"k%02d\", \"harness\": \"spin\", \"stream\": \"p%d\","
		    " \"release_ns\": %d, \"grid\": %d, \"args\": {\"ns\": %d, \"imbalance\": "
		    "\"%s\"}}",
		    k ? ", " : "", k, k % 6, 50000 * k, BENCH_GRID, BENCH_NS, imb[k % 3]);
	PUT("]}");
#undef PUT
	return (int)n;
}

static struct cta_harness_opts bench_opts(void)
{
	struct cta_harness_opts o;
	memset(&o, 0, sizeof(o));
	o.version = CTA_HARNESS_OPTS_VERSION;
	struct cta_sim_opts so = CTA_SIM_OPTS_INIT;
	char err[256];
	if (cta_device_resolve(&so.device, "H100", err, sizeof(err)) < 0)
		fprintf(stderr, "ctasim bench: %s\n", err);
	so.timing_only = 1;
	so.threads = 1;
	o.sim = so;
	return o;
}

static int bench_multi(double *bps)
{
	static char json[8192];
	int len = cta_bench_scenario_json(json, sizeof(json));
	if (len < 0 || (size_t)len >= sizeof(json))
		return CTA_ENOMEM;
	char err[1024];
	struct cta_scenario sc;
	int rc = cta_scenario_parse(&sc, json, (size_t)len, "bench_16k6p", err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "ctasim bench: %s\n", err);
		return rc;
	}
	struct cta_harness_opts o = bench_opts();
	cta_scenario_run *x = NULL;
	double t0 = now_s();
	rc = cta_scenario_exec(&x, &sc, &o, err, sizeof(err));
	double t1 = now_s();
	if (rc < 0)
		fprintf(stderr, "ctasim bench: %s\n", err);
	else {
		uint64_t blocks = 0;
		cta_sim *s = cta_scenario_exec_sim(x);
		for (unsigned i = 0; i < cta_sim_kernel_count(s); i++)
			blocks += cta_sim_kernel_stats(s, i)->launched;
		*bps = (double)blocks / (t1 - t0);
	}
	cta_scenario_exec_free(x);
	cta_scenario_free(&sc);
	return rc;
}

static int bench_single(double *bps)
{
	const struct cta_kernel_info *ki = cta_harness_find("spin");
	if (!ki)
		return CTA_ENOTFOUND;
	static const char *args[] = {"ns=5000"};
	struct cta_harness_opts o = bench_opts();
	o.args = args;
	o.nargs = 1;
	o.grid_set = 1;
	o.grid[0] = BENCH_KERNELS * BENCH_GRID;
	o.grid[1] = o.grid[2] = 1;
	struct cta_harness *h;
	int rc = cta_harness_new(&h, ki, &o);
	const char *period = getenv("CTASIM_PERIOD");
	cta_sim_set_period_skip(0);
	double t0 = now_s();
	if (!rc)
		rc = cta_harness_run(h);
	double t1 = now_s();
	cta_sim_set_period_skip(!(period && !strcmp(period, "0")));
	if (rc < 0)
		fprintf(stderr, "ctasim bench: %s\n", h ? cta_harness_errmsg(h) : cta_strerror(rc));
	else
		*bps = (double)cta_sim_kernel_stats(cta_harness_sim(h), 0)->launched / (t1 - t0);
	cta_harness_free(h);
	return rc;
}

int cta_bench_scenario(double *multi_bps, double *single_bps)
{
	/* The best of three alternating runs of each: one run of each on a
	 * shared machine can land on either side of the target by noise
	 * alone (seen: 2.06 beside 1.64-1.65 in the runs around it). */
	*multi_bps = *single_bps = 0;
	int rc = 0;
	for (int rep = 0; rep < 3 && !rc; rep++) {
		double single = 0, multi = 0;
		rc = bench_single(&single);
		if (!rc)
			rc = bench_multi(&multi);
		*single_bps = single > *single_bps ? single : *single_bps;
		*multi_bps = multi > *multi_bps ? multi : *multi_bps;
	}
	return rc;
}
