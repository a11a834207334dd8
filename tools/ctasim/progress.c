/* The progress line of long commands: "[#####.....] 120/2000 schedules
 * 45.2/s ETA 41 s", redrawn in place with \r on stderr. Nothing is written
 * where stderr is not a terminal, so logs and pipes stay clean. */
#include "progress.h"

#include "ctasim/sim.h"
#include "ctasim/trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CTASIM_PROGRESS=1 forces the line, =0 (or any other value) turns it
 * off, unset leaves it to isatty. Returns 1 forced, 0 terminal, -1 off. */
static int progress_mode(void)
{
	const char *force = getenv("CTASIM_PROGRESS");
	if (force && force[0])
		return !strcmp(force, "1") ? 1 : -1;
	return isatty(2) == 1 ? 0 : -1;
}

void cli_progress_start(struct cli_progress *p, const char *what, uint64_t total, int quiet)
{
	memset(p, 0, sizeof(*p));
	p->on = !quiet && total > 0 && progress_mode() >= 0;
	p->what = what;
	p->total = total;
	p->t0 = p->last = now_s();
}

static void put_duration(char *buf, size_t n, double s)
{
	if (s < 60)
		snprintf(buf, n, "%.0f s", s);
	else if (s < 3600)
		snprintf(buf, n, "%.0f min %02.0f s", (double)(long)(s / 60),
		         s - 60 * (long)(s / 60));
	else
		snprintf(buf, n, "%.1f h", s / 3600);
}

static void draw(struct cli_progress *p, double t)
{
	enum { W = 24 };
	char bar[W + 1];
	unsigned fill = (unsigned)(p->done * W / p->total);
	for (unsigned i = 0; i < W; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[W] = 0;
	double el = t - p->t0, rate = el > 0 ? (double)p->done / el : 0;
	char eta[32] = "?";
	if (rate > 0)
		put_duration(eta, sizeof(eta), (double)(p->total - p->done) / rate);
	/* Millions of blocks a second read better as 1.13M/s. */
	char rs[32];
	if (rate >= 1e6)
		snprintf(rs, sizeof(rs), "%.2fM", rate / 1e6);
	else if (rate >= 1e4)
		snprintf(rs, sizeof(rs), "%.1fk", rate / 1e3);
	else
		snprintf(rs, sizeof(rs), "%.1f", rate);
	fprintf(stderr, "\r[%s] %llu/%llu %s  %s/s  ETA %s\033[K", bar, (unsigned long long)p->done,
	        (unsigned long long)p->total, p->what, rs, eta);
	fflush(stderr);
	p->drawn = 1;
}

void cli_progress_step(struct cli_progress *p, uint64_t done)
{
	if (!p->on)
		return;
	p->done = done > p->total ? p->total : done;
	double t = now_s();
	/* The first step is drawn at once, later ones about ten times a second. */
	if (p->drawn && t - p->last < 0.1 && p->done < p->total)
		return;
	p->last = t;
	draw(p, t);
}

void cli_progress_clear(struct cli_progress *p)
{
	if (p->on && p->drawn) {
		fprintf(stderr, "\r\033[K");
		fflush(stderr);
		p->drawn = 0;
	}
}

void cli_progress_end(struct cli_progress *p)
{
	if (p->on && p->drawn) {
		fprintf(stderr, "\r\033[K");
		fflush(stderr);
	}
	p->on = 0;
}

struct read_prog {
	struct cli_progress p;
	int quiet, started;
};

static void on_read(void *ctx, uint64_t done, uint64_t total)
{
	struct read_prog *rp = ctx;
	if (!rp->started) {
		cli_progress_start(&rp->p, "MiB parsed", (total >> 20) + 1, rp->quiet);
		rp->started = 1;
	}
	cli_progress_step(&rp->p, done >> 20);
}

int cli_trace_read_lean(struct cta_trace_lean **t, const char *path, int per_kernel_slots,
                        char *err, size_t errlen, int quiet)
{
	struct read_prog rp = {.quiet = quiet};
	int rc = cta_trace_read_lean(t, path, per_kernel_slots, err, errlen, on_read, &rp);
	if (rp.started)
		cli_progress_end(&rp.p);
	return rc;
}

int cli_trace_read(struct cta_trace *t, const char *path, char *err, size_t errlen, int quiet)
{
	struct read_prog rp = {.quiet = quiet};
	int rc = cta_trace_read_progress(t, path, err, errlen, on_read, &rp);
	if (rp.started)
		cli_progress_end(&rp.p);
	return rc;
}

/* A run shorter than this shows no line: it would only flicker.
 * CTASIM_PROGRESS_DELAY_MS changes it (tests set 0). */
#define RUN_PROGRESS_DELAY_S 1.0

static double run_delay_s(void)
{
	const char *v = getenv("CTASIM_PROGRESS_DELAY_MS");
	char *end;
	if (!v || !v[0])
		return RUN_PROGRESS_DELAY_S;
	unsigned long ms = strtoul(v, &end, 10);
	return *end || ms > 3600000ul ? RUN_PROGRESS_DELAY_S : (double)ms / 1000.0;
}

static void on_sim(void *ctx, uint64_t done, uint64_t total)
{
	struct cli_run_progress *rp = ctx;
	if (!rp->started) {
		if (!rp->forced && now_s() - rp->t0 < rp->delay_s)
			return;
		cli_progress_start(&rp->p, "blocks", total, rp->quiet);
		/* The rate counts from the run's start, not the line's. */
		rp->p.t0 = rp->t0;
		rp->started = 1;
	}
	/* Launches released later in virtual time raise the total. */
	rp->p.total = total;
	cli_progress_step(&rp->p, done);
}

void cli_run_progress_attach(struct cli_run_progress *rp, struct cta_sim_opts *o, int quiet)
{
	memset(rp, 0, sizeof(*rp));
	int mode = progress_mode();
	if (quiet || mode < 0)
		return;
	rp->forced = mode == 1;
	rp->delay_s = run_delay_s();
	rp->t0 = now_s();
	o->progress = on_sim;
	o->progress_ctx = rp;
}

void cli_run_progress_end(struct cli_run_progress *rp)
{
	if (rp->started)
		cli_progress_end(&rp->p);
	rp->started = 0;
}
