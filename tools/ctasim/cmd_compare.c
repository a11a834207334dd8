/* `ctasim compare`: measures the table of the CUDA guide's section 4.12
 * (fixed work per block, fixed number of blocks, cluster launch control
 * against reduced overheads, preemption and load balancing) by running the
 * three vector-scalar kernels under balanced work, two imbalances, and a
 * higher-priority kernel released mid-run. Nothing is asserted: the table
 * is printed (text, CSV, one SVG timeline per run); docs/COMPARE.md reads it. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_util.h"
#include "cmd.h"
#include "ctasim/harness.h"
#include "ctasim/io.h"
#include "ctasim/scenario.h"
#include "ctasim/sim.h"
#include "ctasim/tools.h"
#include "ctasim/trace.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: ctasim compare [options]\n"
	           "\n"
	           "Runs vecscale_fixed_work, vecscale_fixed_blocks and vecscale_clc (the guide's\n"
	           "three approaches, section 4.12) under balanced work, imbalanced work\n"
	           "(one_in_seven, heavy_tail) and with a priority -5 kernel released at half\n"
	           "of each approach's balanced makespan; prints makespan, SM busy fraction,\n"
	           "prologue executions, blocks per SM and the urgent kernel's start delay and\n"
	           "completion time. docs/COMPARE.md explains the columns.\n"
	           "\n"
	           "  --device NAME|FILE   device model (default H100-SXM)\n"
	           "  --seed N             seed, [0, 2^64-1] (default 1)\n"
	           "  --tiles-per-slot N   tiles (1024-element blocks of work) per resident block\n"
	           "                       slot of the device, [1, 65536] (default 16)\n"
	           "  --ns NS              virtual cost of one tile, [1, 10^9] (default 2000)\n"
	           "  --prologue-ns NS     virtual cost of compute_scalar(), [0, 10^9]\n"
	           "                       (default 2000)\n"
	           "  --urgent-blocks N    blocks of the urgent spin kernel, [0, 2^31-1]\n"
	           "                       (default and 0: SM count)\n"
	           "  --urgent-ns NS       cost of one urgent block, [1, 10^9] (default 2000)\n"
	           "  --full               run every thread and check results (slow); default\n"
	           "                       is timing-only (one thread per block)\n"
	           "  --csv FILE           also write the table as CSV ('-': stdout)\n"
	           "  --svg-dir DIR        write DIR/<case>-<approach>.svg (and .trace)\n"
	           "\n"
	           "exit: 0 success, 1 a run failed (result, coverage, UB), 2 usage\n");
}

static const char *const approaches[3] = {"vecscale_fixed_work", "vecscale_fixed_blocks",
                                          "vecscale_clc"};
static const char *const short_names[3] = {"fixed_work", "fixed_blocks", "clc"};

enum { CASE_BALANCED, CASE_ONE_IN_SEVEN, CASE_HEAVY_TAIL, CASE_PRIORITY, NCASES };
static const char *const case_names[NCASES] = {"balanced", "one_in_seven", "heavy_tail",
                                               "priority"};

struct params {
	struct cta_harness_opts base;
	uint64_t tiles_per_slot, ns, prologue_ns, urgent_blocks, urgent_ns;
	unsigned slots_per_sm, nsms;
	const char *csv, *svg_dir;
};

struct row {
	int ok;
	uint64_t makespan;
	double busy; /* fraction of SM time with at least one resident block */
	double occ;  /* fraction of block-slot time in use */
	uint64_t prologues;
	uint64_t bps_min, bps_max;     /* blocks started per SM */
	uint64_t tiles_min, tiles_max; /* tiles processed per SM (started or stolen) */
	uint64_t cancel_prio;          /* cancels failed for priority */
	uint64_t finish_spread;        /* latest minus earliest last end over SMs */
	int has_urgent;
	uint64_t release, urgent_delay, urgent_done;
};

/* The scenario of one run, as JSON. */
static int scenario_json(char *buf, size_t size, const struct params *p, int a, int c,
                         uint64_t release)
{
	static const char *const imb[NCASES] = {"none", "one_in_seven", "heavy_tail", "none"};
	uint64_t tiles = p->tiles_per_slot * p->slots_per_sm * p->nsms;
	size_t n = 0;
#define PUT(...)                                                                                   \
	n += (size_t)snprintf(buf + (n < size ? n : size), n < size ? size - n : 0, __VA_ARGS__)
	PUT("{\"version\": 1, \"streams\": [{\"name\": \"work\", \"priority\": 0}");
	if (c == CASE_PRIORITY)
		PUT(", {\"name\": \"urgent\", \"priority\": %d}",
		    p->base.sim.device.priority_greatest);
	PUT("], \"kernels\": [{\"label\": \"%s\", \"harness\": \"%s\", \"stream\": \"work\",",
	    short_names[a], approaches[a]);
	/* The fixed number of blocks fills every slot of the device: its SM
	 * count times the blocks of 1024 threads an SM holds (the guide's
	 * "number of SMs ... and the desired occupancy"). */
	if (a == 1)
		PUT(" \"grid\": %u,", p->slots_per_sm * p->nsms);
	PUT(" \"args\": {\"n\": %" PRIu64 ", \"ns\": %" PRIu64 ", \"prologue_ns\": %" PRIu64
	    ", \"imbalance\": \"%s\"}}",
	    tiles * 1024, p->ns, p->prologue_ns, imb[c]);
	if (c == CASE_PRIORITY)
		PUT(", {\"label\": \"urgent\", \"harness\": \"spin\", \"stream\": \"urgent\","
		    " \"release_ns\": %" PRIu64 ", \"grid\": %" PRIu64
		    ", \"args\": {\"ns\": %" PRIu64 "}}",
		    release, p->urgent_blocks, p->urgent_ns);
	PUT("]}");
#undef PUT
	return n < size ? 0 : -1;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* SM busy fraction from the trace: per SM, the union of its blocks'
 * [start, end) intervals (any kernel), over SMs x makespan; and the
 * slot occupancy: the sum of block lengths over slots x makespan. */
static void busy_from_trace(const struct cta_trace *t, const struct params *p, int a,
                            uint64_t makespan, struct row *r)
{
	/* Tiles a block of the grid-stride kernel covers: b, b + G, ... */
	uint64_t ntiles = p->tiles_per_slot * p->slots_per_sm * p->nsms;
	uint64_t grid = (uint64_t)p->slots_per_sm * p->nsms;
	uint64_t last_min = UINT64_MAX, last_max = 0;
	uint64_t *iv = malloc(2 * t->count * sizeof(*iv));
	uint64_t *starts = malloc(t->count * sizeof(*starts));
	uint64_t *tiles = calloc(p->nsms, sizeof(*tiles));
	if (!iv || !starts || !tiles)
		goto out;
	double busy = 0, slot_time = 0;
	for (unsigned sm = 0; sm < p->nsms; sm++) {
		size_t n = 0;
		uint64_t last_end = 0;
		for (size_t i = 0; i < t->count; i++) {
			const struct cta_trace_rec *s = &t->recs[i];
			if (s->sm != sm)
				continue;
			if (s->kernel == 0 && s->ev == CTA_TEV_STEAL)
				tiles[sm]++;
			if (s->kernel == 0 && s->ev == CTA_TEV_START)
				tiles[sm] += a == 1 ? (ntiles - s->block + grid - 1) / grid : 1;
			if (s->ev != CTA_TEV_START)
				continue;
			/* its end: the next END of the same kernel and physical block */
			for (size_t j = i + 1; j < t->count; j++) {
				const struct cta_trace_rec *e = &t->recs[j];
				if (e->ev == CTA_TEV_END && e->kernel == s->kernel &&
				    e->phys == s->phys) {
					if (s->kernel == 0 && e->t_ns > last_end)
						last_end = e->t_ns;
					iv[2 * n] = s->t_ns;
					iv[2 * n + 1] = e->t_ns;
					n++;
					slot_time += (double)(e->t_ns - s->t_ns);
					break;
				}
			}
		}
		/* union of intervals: sort by start (selection via qsort on pairs) */
		for (size_t i = 0; i < n; i++)
			starts[i] = i;
		for (size_t i = 1; i < n; i++) {
			uint64_t a0 = iv[2 * i], a1 = iv[2 * i + 1];
			size_t j = i;
			while (j > 0 && iv[2 * (j - 1)] > a0) {
				iv[2 * j] = iv[2 * (j - 1)];
				iv[2 * j + 1] = iv[2 * (j - 1) + 1];
				j--;
			}
			iv[2 * j] = a0;
			iv[2 * j + 1] = a1;
		}
		uint64_t cur0 = 0, cur1 = 0;
		for (size_t i = 0; i < n; i++) {
			if (i == 0 || iv[2 * i] > cur1) {
				busy += (double)(cur1 - cur0);
				cur0 = iv[2 * i];
				cur1 = iv[2 * i + 1];
			} else if (iv[2 * i + 1] > cur1) {
				cur1 = iv[2 * i + 1];
			}
		}
		busy += (double)(cur1 - cur0);
		if (last_end < last_min)
			last_min = last_end;
		if (last_end > last_max)
			last_max = last_end;
	}
	r->finish_spread = last_max - last_min;
	/* Exactly-once coverage from the trace (the simulator checks it only
	 * in full runs): each tile started or stolen once; the grid-stride
	 * kernel's blocks each started once. */
	uint64_t nlogical = a == 1 ? grid : ntiles;
	unsigned char *seen = calloc(nlogical, 1);
	if (seen) {
		uint64_t bad = 0;
		for (size_t i = 0; i < t->count; i++) {
			const struct cta_trace_rec *s = &t->recs[i];
			if (s->kernel != 0 || (s->ev != CTA_TEV_START && s->ev != CTA_TEV_STEAL))
				continue;
			if (s->block >= nlogical || seen[s->block]++)
				bad++;
		}
		for (uint64_t i = 0; i < nlogical; i++)
			bad += !seen[i];
		if (bad) {
			fprintf(stderr,
			        "ctasim compare: %s: %" PRIu64
			        " tiles lost or processed twice (trace)\n",
			        approaches[a], bad);
			r->ok = 0;
		}
		free(seen);
	}
	r->busy = makespan ? busy / ((double)p->nsms * (double)makespan) : 0;
	r->occ = makespan ? slot_time / ((double)p->nsms * p->slots_per_sm * (double)makespan) : 0;
	qsort(tiles, p->nsms, sizeof(*tiles), cmp_u64);
	r->tiles_min = tiles[0];
	r->tiles_max = tiles[p->nsms - 1];
out:
	free(iv);
	free(starts);
	free(tiles);
}

/* Runs one (approach, case); fills r. Returns 0, or -1 after a message. */
static int run_one(const struct params *p, int a, int c, uint64_t release, struct row *r)
{
	char json[2048], trace[1200], err[1024];
	memset(r, 0, sizeof(*r));
	if (scenario_json(json, sizeof(json), p, a, c, release) < 0)
		return -1;
	if (p->svg_dir)
		snprintf(trace, sizeof(trace), "%s/%s-%s.trace", p->svg_dir, case_names[c],
		         short_names[a]);
	else
		snprintf(trace, sizeof(trace), "%s/ctasim-compare-%d.trace",
		         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid());
	struct cta_harness_opts o = p->base;
	o.sim.trace_path = trace;
	struct cta_scenario sc;
	char name[64];
	snprintf(name, sizeof(name), "%s-%s", case_names[c], short_names[a]);
	if (cta_scenario_parse(&sc, json, strlen(json), name, err, sizeof(err)) < 0) {
		fprintf(stderr, "ctasim compare: %s\n", err);
		return -1;
	}
	cta_scenario_run *x = NULL;
	int rc = cta_scenario_exec(&x, &sc, &o, err, sizeof(err));
	if (rc < 0 && !x) {
		fprintf(stderr, "ctasim compare: %s\n", err);
		cta_scenario_free(&sc);
		return -1;
	}
	r->ok = rc == 0;
	if (rc < 0)
		fprintf(stderr, "ctasim compare: %s: %s\n", name, err);
	for (unsigned i = 0; i < sc.nkernels; i++)
		if (cta_harness_verdict(cta_scenario_exec_harness(x, i)) == CTA_VERDICT_FAIL) {
			fprintf(stderr, "ctasim compare: %s: %s\n", name,
			        cta_harness_errmsg(cta_scenario_exec_harness(x, i)));
			r->ok = 0;
		}
	cta_sim *s = cta_scenario_exec_sim(x);
	if (s) {
		const struct cta_kernel_stats *st = cta_sim_kernel_stats(s, 0);
		r->makespan = cta_sim_makespan_ns(s);
		/* Every block that starts runs compute_scalar() once (the
		 * harness's counter checks this in --full runs); stolen tiles
		 * reuse their block's prologue. */
		r->prologues = st->launched;
		r->bps_min = st->per_sm_min;
		r->bps_max = st->per_sm_max;
		r->cancel_prio = st->cancel_fail[CTA_CANCEL_FAIL_PRIORITY];
		if (c == CASE_PRIORITY && cta_sim_kernel_count(s) > 1) {
			const struct cta_kernel_stats *u = cta_sim_kernel_stats(s, 1);
			r->has_urgent = 1;
			r->release = release;
			r->urgent_delay = u->first_start_ns - release;
			r->urgent_done = u->last_end_ns - release;
		}
	}
	cta_scenario_exec_free(x);
	cta_scenario_free(&sc);
	struct cta_trace t;
	if (cta_trace_read(&t, trace, err, sizeof(err)) == 0) {
		busy_from_trace(&t, p, a, r->makespan, r);
		if (p->svg_dir) {
			char svg[1200], title[200];
			snprintf(svg, sizeof(svg), "%s/%s-%s.svg", p->svg_dir, case_names[c],
			         short_names[a]);
			snprintf(title, sizeof(title), "%s, %s work", approaches[a], case_names[c]);
			struct cta_svg_opts so = CTA_SVG_OPTS_INIT;
			so.title = title;
			struct cli_out out;
			if (cli_out_open(&out, "compare", svg) < 0) {
				r->ok = 0;
			} else {
				int wrc = cli_out_close(&out, cta_trace_render_svg(&t, out.f, &so));
				if (wrc) {
					cli_out_report("compare", &out, wrc);
					r->ok = 0;
				}
			}
		}
		cta_trace_free(&t);
	} else {
		fprintf(stderr, "ctasim compare: %s\n", err);
		r->ok = 0;
	}
	if (!p->svg_dir)
		unlink(trace);
	return 0;
}

static void print_row(FILE *f, int csv, int c, int a, const struct row *r)
{
	if (csv) {
		fprintf(f,
		        "%s,%s,%" PRIu64 ",%.4f,%.4f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
		        ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",",
		        case_names[c], short_names[a], r->makespan, r->busy, r->occ, r->prologues,
		        r->bps_min, r->bps_max, r->tiles_min, r->tiles_max, r->finish_spread,
		        r->cancel_prio);
		if (r->has_urgent)
			fprintf(f, "%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", r->release,
			        r->urgent_delay, r->urgent_done);
		else
			fprintf(f, ",,\n");
		return;
	}
	char bps[32], tiles[32];
	snprintf(bps, sizeof(bps), "%" PRIu64 "-%" PRIu64, r->bps_min, r->bps_max);
	snprintf(tiles, sizeof(tiles), "%" PRIu64 "-%" PRIu64, r->tiles_min, r->tiles_max);
	fprintf(f, "%-13s %-13s %10" PRIu64 " %6.1f%% %6.1f%% %9" PRIu64 " %9s %9s %9" PRIu64,
	        case_names[c], short_names[a], r->makespan, 100 * r->busy, 100 * r->occ,
	        r->prologues, bps, tiles, r->finish_spread);
	if (r->has_urgent)
		fprintf(f, " %9" PRIu64 " %10" PRIu64 " %10" PRIu64 " %5" PRIu64, r->release,
		        r->urgent_delay, r->urgent_done, r->cancel_prio);
	fprintf(f, "%s\n", r->ok ? "" : "  (run FAILED)");
}

static int parse(int argc, char **argv, struct params *p)
{
	const char *device = NULL;
	struct cta_sim_opts so = CTA_SIM_OPTS_INIT;
	memset(p, 0, sizeof(*p));
	p->base.version = CTA_HARNESS_OPTS_VERSION;
	p->tiles_per_slot = 16;
	p->ns = 2000;
	p->prologue_ns = 2000;
	p->urgent_ns = 2000;
	so.timing_only = 1;
	struct {
		const char *opt;
		uint64_t *dst;
		uint64_t min, max;
	} u64s[] = {{"--seed", &so.seed, 0, UINT64_MAX},
	            {"--tiles-per-slot", &p->tiles_per_slot, 1, 65536},
	            {"--ns", &p->ns, 1, 1000000000},
	            {"--prologue-ns", &p->prologue_ns, 0, 1000000000},
	            {"--urgent-blocks", &p->urgent_blocks, 0, 2147483647},
	            {"--urgent-ns", &p->urgent_ns, 1, 1000000000}};
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i], *v;
		if (!strcmp(a, "--help") || !strcmp(a, "-h"))
			return -2;
		if (!strcmp(a, "--full")) {
			so.timing_only = 0;
			continue;
		}
		size_t u = 0;
		while (u < sizeof(u64s) / sizeof(u64s[0]) && !cli_is(a, u64s[u].opt))
			u++;
		if (u < sizeof(u64s) / sizeof(u64s[0])) {
			if (!(v = cli_value("compare", argc, argv, &i, u64s[u].opt)) ||
			    cli_parse_u64("compare", u64s[u].opt, v, u64s[u].min, u64s[u].max,
			                  u64s[u].dst) < 0)
				return -1;
		} else if (cli_is(a, "--device") || cli_is(a, "--csv") || cli_is(a, "--svg-dir")) {
			const char *opt = cli_is(a, "--device") ? "--device"
			                  : cli_is(a, "--csv")  ? "--csv"
			                                        : "--svg-dir";
			if (!(v = cli_value("compare", argc, argv, &i, opt)))
				return -1;
			if (opt[2] == 'd')
				device = v;
			else if (opt[2] == 'c')
				p->csv = v;
			else
				p->svg_dir = v;
		} else {
			fprintf(stderr, "ctasim compare: unknown argument '%s' (see --help)\n", a);
			return -1;
		}
	}
	if (cli_device("compare", device, &so.device) < 0)
		return -1;
	/* The guide's approaches are compared with CLC as the hardware does it
	 * (sm_100), not as the CUDA backend emulates it on an sm_90 GPU. */
	so.device.clc_emulated = 0;
	so.threads = 1;
	p->base.sim = so;
	p->nsms = so.device.sm_count;
	struct cta_block_resources br = {1024, 32, 32, 0};
	cta_limiter lim;
	p->slots_per_sm = cta_occupancy_max_blocks(&so.device, &br, &lim);
	if (!p->slots_per_sm) {
		fprintf(stderr, "ctasim compare: a 1024-thread block fits on no SM of %s\n",
		        so.device.name);
		return -1;
	}
	if (!p->urgent_blocks)
		p->urgent_blocks = p->nsms;
	if (p->svg_dir && mkdir(p->svg_dir, 0777) != 0) {
		struct stat st;
		if (stat(p->svg_dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
			fprintf(stderr, "ctasim compare: --svg-dir %s: cannot create it\n",
			        p->svg_dir);
			return -1;
		}
	}
	return 0;
}

int cta_cmd_compare(int argc, char **argv)
{
	struct params p;
	int rc = parse(argc, argv, &p);
	if (rc == -2) {
		usage(stdout);
		return CTA_EXIT_OK;
	}
	if (rc < 0)
		return CTA_EXIT_USAGE;
	struct row rows[NCASES][3];
	int ok = 1;
	for (int c = 0; c < NCASES; c++)
		for (int a = 0; a < 3; a++) {
			/* The urgent kernel arrives at half of this approach's own
			 * balanced makespan, so it lands mid-run for each. */
			uint64_t release =
			    c == CASE_PRIORITY ? rows[CASE_BALANCED][a].makespan / 2 : 0;
			if (run_one(&p, a, c, release, &rows[c][a]) < 0)
				return CTA_EXIT_FAIL;
			ok &= rows[c][a].ok;
		}
	uint64_t tiles = p.tiles_per_slot * p.slots_per_sm * p.nsms;
	char dev_esc[200]; /* (a model file's name: user text on stdout, escaped) */
	printf("device %s: %u SMs x %u blocks of 1024 threads; %" PRIu64 " tiles of 1024 "
	       "elements, %" PRIu64 " ns per tile, prologue %" PRIu64 " ns; %s\n",
	       cta_escape(dev_esc, sizeof(dev_esc), p.base.sim.device.name, 0), p.nsms,
	       p.slots_per_sm, tiles, p.ns, p.prologue_ns,
	       p.base.sim.timing_only ? "timing-only" : "full runs, results checked");
	printf("urgent kernel (priority case): spin, %" PRIu64 " blocks of %" PRIu64
	       " ns, priority %d, released at half of the approach's balanced makespan\n\n",
	       p.urgent_blocks, p.urgent_ns, p.base.sim.device.priority_greatest);
	printf("%-13s %-13s %10s %7s %7s %9s %9s %9s %9s %9s %10s %10s %5s\n", "case", "approach",
	       "makespan", "SMbusy", "slots", "prologues", "blk/SM", "tiles/SM", "fin.sprd",
	       "release", "urg.delay", "urg.done", "prio");
	for (int c = 0; c < NCASES; c++)
		for (int a = 0; a < 3; a++)
			print_row(stdout, 0, c, a, &rows[c][a]);
	if (p.csv) {
		/* Written whole or not at all (a temporary renamed into place). */
		struct cli_out o;
		if (cli_out_open(&o, "compare", p.csv) < 0)
			return CTA_EXIT_USAGE;
		FILE *f = o.f;
		fprintf(
		    f,
		    "case,approach,makespan_ns,sm_busy,slot_occupancy,prologues,"
		    "blocks_per_sm_min,blocks_per_sm_max,tiles_per_sm_min,tiles_per_sm_max,"
		    "finish_spread_ns,cancel_fail_priority,urgent_release_ns,urgent_start_delay_ns,"
		    "urgent_done_ns\n");
		for (int c = 0; c < NCASES; c++)
			for (int a = 0; a < 3; a++)
				print_row(f, 1, c, a, &rows[c][a]);
		int crc = cli_out_close(&o, 0);
		if (crc) {
			cli_out_report("compare", &o, crc);
			return CTA_EXIT_USAGE;
		}
	}
	return ok ? CTA_EXIT_OK : CTA_EXIT_FAIL;
}
