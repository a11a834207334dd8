/* The progress line of long commands: "[#####.....] 120/2000 schedules
 * 45.2/s ETA 41 s", redrawn in place with \r on stderr. Nothing is written
 * where stderr is not a terminal, so logs and pipes stay clean. */
#include "progress.h"

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

void cli_progress_start(struct cli_progress *p, const char *what, uint64_t total, int quiet)
{
	memset(p, 0, sizeof(*p));
	const char *force = getenv("CTASIM_PROGRESS");
	p->on = !quiet && total > 0 && (force && force[0] ? !strcmp(force, "1") : isatty(2) == 1);
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
	fprintf(stderr, "\r[%s] %llu/%llu %s  %.1f/s  ETA %s\033[K", bar,
	        (unsigned long long)p->done, (unsigned long long)p->total, p->what, rate, eta);
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

int cli_trace_read(struct cta_trace *t, const char *path, char *err, size_t errlen, int quiet)
{
	struct read_prog rp = {.quiet = quiet};
	int rc = cta_trace_read_progress(t, path, err, errlen, on_read, &rp);
	if (rp.started)
		cli_progress_end(&rp.p);
	return rc;
}
