/* `ctasim fidelity DIR`: leave-one-configuration-out cross-validation of
 * the fitted device model over the reference traces of one GPU (DIR's
 * configs.txt names each configuration and the command that made it): for
 * every configuration, a model calibrated on all the others predicts it
 * and `ctasim diff`'s metrics compare prediction and recorded runs.
 * --predict DIR2 also fits on all of DIR and predicts DIR2's traces (another
 * GPU); --device MODEL judges a given model instead of fitted ones. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <dirent.h>

#include "cli_util.h"
#include "cmd.h"
#include "ctasim/device.h"
#include "ctasim/tools.h"
#include "ctasim/trace.h"
#include "progress.h"

extern char **environ;

/* snprintf for messages and paths that may be cut short. */
static void msgf(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void msgf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

static const char usage_text[] =
    "usage: ctasim fidelity DIR [--predict DIR2]... [--device MODEL] [--only NAME]...\n"
    "                       [--duration-quantile Q] [-o MODEL] [--jobs N] [--wait-at TERMS]\n"
    "                       [--check] [--min-placement F] [--max-median-makespan F]\n"
    "                       [--max-worst-makespan F] [--max-predict-makespan F]\n"
    "\n"
    "Cross-validates the fitted device model on the reference traces of one GPU.\n"
    "DIR/configs.txt names each configuration, one a line: `NAME run KERNEL\n"
    "[ctasim run options] [fit=placement|fit=clc-burst|fit=wait]` or `NAME scenario FILE\n"
    "[bins=NS]` (fit=placement: a placement probe, which enters only the sweep\n"
    "rule's fit and whose makespan is shown but not judged; fit=clc-burst: a burst\n"
    "of emulated CLC requests, which enters only the fit of the emulation's queue,\n"
    "clc_entry_ps and clc_sector_ps, and is judged; fit=wait: a blocking kernel\n"
    "whose busy span, against the simulator's at five points, fits the wait_*\n"
    "terms too); its recorded runs are\n"
    "DIR/NAME.rN.trace[.gz|.zst]. For every configuration, `ctasim calibrate` on\n"
    "the runs of all the others (the `spin` kernel's --arg ns gives the duration\n"
    "model its requested times) fits a model, the simulator runs the configuration\n"
    "on it, and each recorded run is compared as `ctasim diff` does: first-wave\n"
    "blocks on the same SM, blocks-per-SM distance, makespan ratio sim/hw; for a\n"
    "scenario with bins=NS, block starts per NS-wide bin. The hardware's own\n"
    "agreement between its runs is shown beside.\n"
    "\n"
    "  --predict DIR2   also fit on every configuration of DIR and predict those\n"
    "                   of DIR2 (another GPU of the same part; repeatable)\n"
    "  --device MODEL   judge this model (preset or file) on every configuration\n"
    "                   instead of fitting (the shipped presets: --device H100)\n"
    "  --only NAME      only this configuration (repeatable)\n"
    "  --jobs N, -j N   predict N configurations at once, each in a process of its\n"
    "                   own (default 1); the output is the same\n"
    "  -o MODEL         also write the model fitted on every configuration of DIR\n"
    "  --wait-at TERMS  where the fit=wait probes linearise the wait_* terms:\n"
    "                   LOAD,ATOMIC,TURN,SYNC,HIT,POLL (wait_load_ns,\n"
    "                   wait_atomic_ns, wait_turn_ps, wait_sync_ps, wait_hit_ns,\n"
    "                   wait_poll_ps; default 300,600,5000,3000,200,500; each\n"
    "                   probe moves one by half)\n"
    "  --duration-quantile Q  as for calibrate (default 0.99)\n"
    "  --quiet, -q      no progress line (shown only when stderr is a terminal)\n"
    "  --check          exit 1 when a target is missed:\n"
    "  --min-placement F          first-wave blocks on the same SM, or the\n"
    "                             hardware runs' own agreement if lower (0.95)\n"
    "  --max-median-makespan F    median |makespan ratio - 1| (0.05)\n"
    "  --max-worst-makespan F     largest |makespan ratio - 1| (0.15)\n"
    "  --max-predict-makespan F   largest for --predict (0.10)\n"
    "  (every bins=NS scenario must match its runs bin for bin)\n";

#define MAX_RUNS 16

struct config {
	char name[128];
	int scenario;
	char **argv; /* the command's words after run/scenario */
	int argc;
	uint64_t spin_ns;   /* requested time of every block (spin, no imbalance), or 0 */
	uint64_t clc_ns;    /* the one call of each steal-loop iteration (below), or 0 */
	int clc_stream;     /* its calls come with a global store (cta_calib_opts) */
	uint64_t bins_ns;   /* scenario start bins to match, or 0 */
	int placement_only; /* fit=placement: its first waves fit, not its durations */
	/* fit=clc-burst: it enters only the emulated CLC context's queue
	 * (clc_entry_ps, clc_sector_ps) */
	int burst_only;
	unsigned nruns;
	struct cta_trace runs[MAX_RUNS];
	char dir[1024];
	/* What each block asked for (probe_work), for the calibrator's split
	 * of per-call and per-block cost; n 0 when not known. */
	struct cta_calib_work work;
	uint32_t *calls;
	uint64_t *wns, *issue;
	/* fit=wait: a blocking kernel whose busy span fits the wait_* terms
	 * (probe_wait's runs; busy0 0 until then). */
	int wait_fit;
	struct cta_calib_wait wait;
};

struct configs {
	struct config *c;
	size_t n;
};

static void configs_free(struct configs *cs)
{
	for (size_t i = 0; i < cs->n; i++) {
		for (unsigned r = 0; r < cs->c[i].nruns; r++)
			cta_trace_free(&cs->c[i].runs[r]);
		for (int a = 0; a < cs->c[i].argc; a++)
			free(cs->c[i].argv[a]);
		free(cs->c[i].argv);
		free(cs->c[i].calls);
		free(cs->c[i].wns);
		free(cs->c[i].issue);
	}
	free(cs->c);
	cs->c = NULL;
	cs->n = 0;
}

/* NAME.rN.trace, .trace.gz or .trace.zst in DIR (NAME may hold a folder). */
static int load_runs(struct config *c, const char *dir, char *err, size_t elen)
{
	char sub[1024], prefix[256];
	const char *slash = strrchr(c->name, '/');
	if (slash) {
		msgf(sub, sizeof(sub), "%s/%.*s", dir, (int)(slash - c->name), c->name);
		msgf(prefix, sizeof(prefix), "%s.r", slash + 1);
	} else {
		msgf(sub, sizeof(sub), "%s", dir);
		msgf(prefix, sizeof(prefix), "%s.r", c->name);
	}
	DIR *d = opendir(sub);
	if (!d) {
		msgf(err, elen, "%s: %s", sub, strerror(errno));
		return -1;
	}
	char names[MAX_RUNS][512];
	unsigned n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t pl = strlen(prefix);
		if (strncmp(e->d_name, prefix, pl))
			continue;
		const char *p = e->d_name + pl;
		if (*p < '0' || *p > '9')
			continue;
		while (*p >= '0' && *p <= '9')
			p++;
		if (strcmp(p, ".trace") && strcmp(p, ".trace.gz") && strcmp(p, ".trace.zst"))
			continue;
		if (n == MAX_RUNS)
			break;
		msgf(names[n++], sizeof(names[0]), "%s/%s", sub, e->d_name);
	}
	closedir(d);
	/* Run order by name: r1, r2, ... (up to r9 sorts right). */
	qsort(names, n, sizeof(names[0]), (int (*)(const void *, const void *))strcmp);
	for (unsigned i = 0; i < n; i++) {
		char terr[512];
		if (cta_trace_read(&c->runs[c->nruns], names[i], terr, sizeof(terr))) {
			msgf(err, elen, "%s", terr);
			return -1;
		}
		c->nruns++;
	}
	if (!n) {
		msgf(err, elen, "%s/%s: no recorded run (%sN.trace[.gz])", sub, prefix, prefix);
		return -1;
	}
	return 0;
}

/* The words of one manifest line (split at blanks; no quoting). */
static int parse_line(struct config *c, char *line, const char *path, unsigned lno, char *err,
                      size_t elen)
{
	char *save = NULL, *w[64];
	int n = 0;
	for (char *t = strtok_r(line, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save)) {
		if (n == 64) {
			msgf(err, elen, "%s:%u: more than 64 words", path, lno);
			return -1;
		}
		w[n++] = t;
	}
	if (n < 3 || (strcmp(w[1], "run") && strcmp(w[1], "scenario"))) {
		msgf(err, elen,
		     "%s:%u: expected `NAME run KERNEL [options]` or `NAME scenario FILE`", path,
		     lno);
		return -1;
	}
	if (strlen(w[0]) >= sizeof(c->name)) {
		msgf(err, elen, "%s:%u: name longer than %zu bytes", path, lno,
		     sizeof(c->name) - 1);
		return -1;
	}
	msgf(c->name, sizeof(c->name), "%s", w[0]);
	c->scenario = !strcmp(w[1], "scenario");
	c->argv = calloc((size_t)n, sizeof(char *));
	if (!c->argv)
		return -1;
	int imbalanced = 0;
	for (int i = 2; i < n; i++) {
		if (c->scenario && !strncmp(w[i], "bins=", 5)) {
			char *end;
			c->bins_ns = strtoull(w[i] + 5, &end, 10);
			if (*end || !c->bins_ns) {
				msgf(err, elen, "%s:%u: bins=NS needs a number of ns > 0", path,
				     lno);
				return -1;
			}
			continue;
		}
		if (!c->scenario && !strcmp(w[i], "fit=placement")) {
			c->placement_only = 1;
			continue;
		}
		if (!c->scenario && !strcmp(w[i], "fit=clc-burst")) {
			c->burst_only = 1;
			continue;
		}
		if (!c->scenario && !strcmp(w[i], "fit=wait")) {
			c->wait_fit = 1;
			continue;
		}
		if (!(c->argv[c->argc++] = strdup(w[i])))
			return -1;
		if (!c->scenario && i > 2 && !strcmp(w[i - 1], "--arg")) {
			if (!strncmp(w[i], "ns=", 3))
				c->spin_ns = strtoull(w[i] + 3, NULL, 10);
			if (!strncmp(w[i], "imbalance=", 10) && strcmp(w[i] + 10, "none"))
				imbalanced = 1;
		}
	}
	/* The steal loops of spin_clc, vecscale_clc, its cluster form and
	 * vec_add_clc make one cta_spin_ns(ns) call an iteration (the
	 * vector-scalar kernels' ns per element, 0 unless given; their
	 * prologue comes before the first request). */
	if (!c->scenario && !imbalanced &&
	    (!strcmp(w[2], "spin_clc") || !strcmp(w[2], "vec_add_clc")))
		c->clc_ns = c->spin_ns;
	if (!c->scenario && !imbalanced &&
	    (!strcmp(w[2], "vecscale_clc") || !strcmp(w[2], "vecscale_clc_cluster")))
		c->clc_ns = c->spin_ns ? c->spin_ns : CTA_CALIB_CLC_NS_ZERO;
	/* vecscale_clc's call stores its element (the launch's stream_mem);
	 * with an imbalance pattern its calls are the usual ns but for the
	 * heavy tiles' few more, enough for clc_drain_ns. Its cluster form's
	 * too: that marks its blocks' first successes apart
	 * (clc_drain_first_ns), where its loop enters only the cluster
	 * barrier's fit. */
	if (!c->scenario && !strcmp(w[2], "vecscale_clc")) {
		c->clc_stream = imbalanced ? 2 : 1;
		if (imbalanced)
			c->clc_ns = c->spin_ns ? c->spin_ns : CTA_CALIB_CLC_NS_ZERO;
	}
	if (!c->scenario && !imbalanced && !strcmp(w[2], "vecscale_clc_cluster"))
		c->clc_stream = 1;
	if (c->scenario || strcmp(w[2], "spin") || imbalanced)
		c->spin_ns = 0;
	if (c->placement_only)
		c->spin_ns = c->clc_ns = c->clc_stream = 0;
	return 0;
}

static int load_configs(struct configs *cs, const char *dir, char *const *only, int nonly,
                        char *err, size_t elen)
{
	char path[1100];
	msgf(path, sizeof(path), "%s/configs.txt", dir);
	FILE *f = fopen(path, "r");
	if (!f) {
		msgf(err, elen, "%s: %s", path, strerror(errno));
		return -1;
	}
	char *line = NULL;
	size_t cap = 0;
	unsigned lno = 0;
	int rc = 0;
	while (!rc && getline(&line, &cap, f) >= 0) {
		lno++;
		char *p = line;
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p == '#' || *p == '\n' || *p == '\r' || !*p)
			continue;
		struct config *nc = realloc(cs->c, (cs->n + 1) * sizeof(*nc));
		if (!nc) {
			rc = -1;
			break;
		}
		cs->c = nc;
		struct config *c = &cs->c[cs->n++];
		memset(c, 0, sizeof(*c));
		msgf(c->dir, sizeof(c->dir), "%s", dir);
		rc = parse_line(c, p, path, lno, err, elen);
		if (!rc && nonly) {
			int keep = 0;
			for (int i = 0; i < nonly; i++)
				keep |= !strcmp(only[i], c->name);
			if (!keep) {
				for (int a = 0; a < c->argc; a++)
					free(c->argv[a]);
				free(c->argv);
				cs->n--;
				continue;
			}
		}
		if (!rc)
			rc = load_runs(c, dir, err, elen);
	}
	free(line);
	fclose(f);
	if (!rc && !cs->n) {
		msgf(err, elen, "%s: no configuration", path);
		rc = -1;
	}
	return rc;
}

/* Fits a model on every run of every configuration but `skip` (SIZE_MAX:
 * none). Placement probes (fit=placement) enter the sweep rule's fit
 * only: the model is fitted on the other runs, and its sweep_* values
 * taken from a second fit on those and the probes (a probe's latencies
 * and retire gaps would move the others). Likewise the bursts of
 * emulated CLC requests (fit=clc-burst) enter only the context's queue:
 * clc_entry_ps and clc_sector_ps from a fit on the other runs and the
 * bursts (their steal loops, latencies and first waves would move the
 * rest). */
static double quantile = 0.99; /* --duration-quantile */

static int fit(struct cta_device_model *m, const struct configs *cs, size_t skip, char *err,
               size_t elen)
{
	size_t n = 0;
	for (size_t i = 0; i < cs->n; i++)
		if (i != skip)
			n += cs->c[i].nruns;
	const struct cta_trace **tp = calloc(n ? n : 1, sizeof(*tp));
	uint64_t *ns = calloc(n ? n : 1, sizeof(*ns));
	struct cta_calib_work *work = calloc(n ? n : 1, sizeof(*work));
	uint64_t *cns = calloc(n ? n : 1, sizeof(*cns));
	unsigned char *cst = calloc(n ? n : 1, 1);
	struct cta_calib_wait *wt = calloc(n ? n : 1, sizeof(*wt));
	struct cta_device_model *base = malloc(sizeof(*base));
	int rc = -1;
	if (!tp || !ns || !work || !cns || !cst || !wt || !base || !n) {
		msgf(err, elen, n ? "out of memory" : "nothing to fit on");
		goto out;
	}
	n = 0;
	/* In order: the main runs, the placement probes, the bursts. */
	size_t nmain = 0, nplace = 0;
	for (int probes = 0; probes < 3; probes++) {
		for (size_t i = 0; i < cs->n; i++)
			for (unsigned r = 0; i != skip &&
			                     (cs->c[i].placement_only ? 1
			                      : cs->c[i].burst_only   ? 2
			                                              : 0) == probes &&
			                     r < cs->c[i].nruns;
			     r++) {
				ns[n] = cs->c[i].spin_ns;
				work[n] = cs->c[i].work;
				cns[n] = cs->c[i].clc_ns;
				cst[n] = (unsigned char)cs->c[i].clc_stream;
				wt[n] = cs->c[i].wait;
				tp[n++] = &cs->c[i].runs[r];
			}
		if (!probes)
			nmain = n;
		if (probes == 1)
			nplace = n;
	}
	if (cta_device_resolve(base, tp[0]->header.device, err, elen))
		goto out;
	struct cta_calib_opts o = CTA_CALIB_OPTS_INIT;
	o.trace_ns = ns;
	o.work = work;
	o.clc_ns = cns;
	o.clc_stream = cst;
	o.wait = wt;
	o.quantile = quantile;
	struct cta_calib_report rep;
	rc = cta_trace_calibrate_opts(m, &rep, base, tp, nmain ? nmain : n, &o, err, elen);
	if (!rc && nmain && nplace < n) {
		/* The main runs and the bursts, side by side. */
		struct cta_device_model *all = malloc(sizeof(*all));
		const struct cta_trace **bt = calloc(n, sizeof(*bt));
		uint64_t *bns = calloc(n, sizeof(*bns)), *bcns = calloc(n, sizeof(*bcns));
		struct cta_calib_work *bwork = calloc(n, sizeof(*bwork));
		unsigned char *bcst = calloc(n, 1);
		rc = -1;
		if (all && bt && bns && bcns && bwork && bcst) {
			size_t k = 0;
			for (size_t j = 0; j < n; j++)
				if (j < nmain || j >= nplace) {
					bt[k] = tp[j];
					bns[k] = ns[j];
					bcns[k] = cns[j];
					bwork[k] = work[j];
					bcst[k++] = cst[j];
				}
			struct cta_calib_opts bo = o;
			bo.wait = NULL;
			bo.trace_ns = bns;
			bo.work = bwork;
			bo.clc_ns = bcns;
			bo.clc_stream = bcst;
			rc = cta_trace_calibrate_opts(all, &rep, base, bt, k, &bo, err, elen);
			if (!rc) {
				m->clc_entry_ps = all->clc_entry_ps;
				m->clc_sector_ps = all->clc_sector_ps;
			}
		} else {
			msgf(err, elen, "out of memory");
		}
		free(all);
		free(bt);
		free(bns);
		free(bcns);
		free(bwork);
		free(bcst);
	}
	if (!rc && nmain && nmain < nplace) {
		struct cta_device_model *all = malloc(sizeof(*all));
		rc =
		    all ? cta_trace_calibrate_opts(all, &rep, base, tp, nplace, &o, err, elen) : -1;
		if (!rc) {
			m->placement = all->placement;
			m->sweep_first_len = all->sweep_first_len;
			memcpy(m->sweep_first, all->sweep_first, sizeof(m->sweep_first));
			m->sweep_gap_first = all->sweep_gap_first;
			m->sweep_gap_later = all->sweep_gap_later;
			m->sweep_gap_switch = all->sweep_gap_switch;
			m->sweep_small_prior = all->sweep_small_prior;
			m->sweep_rotate_prior = all->sweep_rotate_prior;
			m->sweep_late_prior = all->sweep_late_prior;
			m->sweep_prior_unit = all->sweep_prior_unit;
			m->cluster_prior_len = all->cluster_prior_len;
			memcpy(m->cluster_prior_rot, all->cluster_prior_rot,
			       sizeof(m->cluster_prior_rot));
		} else if (!all) {
			msgf(err, elen, "out of memory");
		}
		free(all);
	}
	if (!rc)
		msgf(m->fitted_on, sizeof(m->fitted_on), "%s (%s)", cs->c[0].dir,
		     tp[0]->header.device);
out:
	free(tp);
	free(ns);
	free(work);
	free(cns);
	free(cst);
	free(wt);
	free(base);
	return rc;
}

/* Runs the configuration on model file `model` (this executable, as a
 * child, its report sent to /dev/null) into trace `out`. */
static int simulate(const struct config *c, const char *model, const char *out, char *err,
                    size_t elen)
{
	char scen[2200];
	const char **av = calloc((size_t)c->argc + 12, sizeof(char *));
	if (!av)
		return -1;
	int n = 0;
	av[n++] = "ctasim";
	av[n++] = c->scenario ? "scenario" : "run";
	for (int i = 0; i < c->argc; i++) {
		if (c->scenario && i == 0 && c->argv[0][0] != '/') {
			msgf(scen, sizeof(scen), "%s/%s", c->dir, c->argv[0]);
			av[n++] = scen;
		} else {
			av[n++] = c->argv[i];
		}
	}
	av[n++] = "--device";
	av[n++] = model;
	av[n++] = "--trace";
	av[n++] = out;
	av[n++] = "--quiet";
	av[n++] = "--threads"; /* one configuration at a time, each on one thread */
	av[n++] = "1";
	av[n] = NULL;
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	pid_t pid;
	int rc = posix_spawn(&pid, "/proc/self/exe", &fa, NULL, (char *const *)av, environ);
	posix_spawn_file_actions_destroy(&fa);
	free(av);
	if (rc) {
		msgf(err, elen, "cannot start the simulator: %s", strerror(rc));
		return -1;
	}
	int st = 0;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
	}
	if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		msgf(err, elen, "%s: `ctasim %s` on the model failed (exit %d)", c->name,
		     c->scenario ? "scenario" : "run", WIFEXITED(st) ? WEXITSTATUS(st) : -1);
		return -1;
	}
	return 0;
}

/* Durations (start to end) of kernel 0's blocks in trace t, by block id
 * (UINT64_MAX where a block has no start and end). */
static uint64_t *block_durations(const struct cta_trace *t, uint64_t nb)
{
	uint64_t *d = malloc((nb ? nb : 1) * sizeof(*d)), *s = malloc((nb ? nb : 1) * sizeof(*s));
	if (!d || !s) {
		free(d);
		free(s);
		return NULL;
	}
	for (uint64_t b = 0; b < nb; b++)
		d[b] = s[b] = UINT64_MAX;
	for (size_t i = 0; i < t->count; i++) {
		const struct cta_trace_rec *r = &t->recs[i];
		if (r->kernel != 0 || r->block >= nb)
			continue;
		if (r->ev == CTA_TEV_START)
			s[r->block] = r->t_ns;
		else if (r->ev == CTA_TEV_END && s[r->block] != UINT64_MAX &&
		         r->t_ns >= s[r->block])
			d[r->block] = r->t_ns - s[r->block];
	}
	free(s);
	return d;
}

/* What each block of a single-kernel configuration asks for: the
 * simulator runs it on the recorded GPU's preset with every factor 1 and
 * no adds, then with 1000 ns added to every cta_spin_ns call, then with
 * an issue time of 1 ns (spin_issue_ps 1000) and a per-block add of
 * ISSUE_PROBE_NS that its first call's issue time comes off; the first
 * gives each block's requested time, the difference to the second its
 * calls, to the third (less ISSUE_PROBE_NS) the issue time its calls
 * after the first charge at 1 ns an instruction of a warp (0 where the
 * launch declares no issue_ops). Kernels
 * that steal work (CLC) are left out: how much a block does depends on
 * the timing. */
/* The issue probe's per-block add: more than any first call's issue time
 * at 1 ns an instruction of a warp. */
#define ISSUE_PROBE_NS 1000000u

static int probe_work(struct config *c, const char *tmpdir, char *err, size_t elen)
{
	const struct cta_trace_header *h = &c->runs[0].header;
	if (c->scenario || c->placement_only || h->kernel_count != 1 || strcmp(h->clc, "none"))
		return 0;
	const unsigned *g = h->kernels[0].grid;
	uint64_t nb = (uint64_t)g[0] * g[1] * g[2];
	struct cta_device_model *m = malloc(sizeof(*m));
	uint64_t *d[2] = {NULL, NULL}, *d2 = NULL;
	char model[1200], simt[1200];
	msgf(model, sizeof(model), "%s/probe.model", tmpdir);
	msgf(simt, sizeof(simt), "%s/probe.trace", tmpdir);
	int rc = -1;
	if (!m || cta_device_resolve(m, h->device, err, elen))
		goto out;
	m->spin_by_threads = 0;
	m->spin_block_add_ns = 0;
	m->spin_gate_threads = 0;
	m->spin_regs_free = 0;
	m->spin_regs_wait_ns = 0;
	m->spin_regs_late_ns = 0;
	m->spin_regs_hold_warps = 0;
	m->spin_regs_order = 0;
	m->spin_regs_pass_ppm = 0;
	m->spin_regs_pass_blocks = 0;
	m->clc_emulated = 0;
	m->spin_add_mask = 0;
	for (unsigned r = 1; r <= CTA_DEVICE_MAX_RESIDENT; r++) {
		m->spin_scale_ppm[r] = 1000000;
		m->spin_add_mask |= 1ull << (r - 1);
	}
	for (int p = 0; p < 3; p++) {
		for (unsigned r = 1; r <= CTA_DEVICE_MAX_RESIDENT; r++)
			m->spin_add_ns[r] = p == 1 ? 1000 : 0;
		m->spin_issue_ps = p == 2 ? 1000 : 0;
		m->spin_block_add_ns = p == 2 ? ISSUE_PROBE_NS : 0;
		struct cta_trace t;
		if (cta_device_save(m, model, err, elen) || simulate(c, model, simt, err, elen) ||
		    cta_trace_read(&t, simt, err, elen))
			goto out;
		uint64_t *dp = block_durations(&t, nb);
		cta_trace_free(&t);
		if (!dp)
			goto out;
		if (p < 2)
			d[p] = dp;
		else
			d2 = dp;
	}
	c->calls = malloc(nb * sizeof(*c->calls));
	c->wns = malloc(nb * sizeof(*c->wns));
	c->issue = malloc(nb * sizeof(*c->issue));
	if (!c->calls || !c->wns || !c->issue)
		goto out;
	for (uint64_t b = 0; b < nb; b++) {
		int ok = d[0][b] != UINT64_MAX && d[1][b] != UINT64_MAX && d[1][b] >= d[0][b];
		c->calls[b] = ok ? (uint32_t)((d[1][b] - d[0][b] + 500) / 1000) : 0;
		c->wns[b] = ok ? d[0][b] : 0;
		c->issue[b] = ok && d2[b] != UINT64_MAX && d2[b] >= d[0][b] + ISSUE_PROBE_NS
		                  ? d2[b] - d[0][b] - ISSUE_PROBE_NS
		                  : 0;
	}
	c->work =
	    (struct cta_calib_work){.n = nb, .calls = c->calls, .ns = c->wns, .issue = c->issue};
	rc = 0;
out:
	unlink(model);
	unlink(simt);
	free(d[0]);
	free(d[1]);
	free(d2);
	free(m);
	return rc;
}

/* A blocking kernel's configuration (fit=wait) on the recorded GPU's
 * preset with the wait_* terms (wait_load_ns, wait_atomic_ns,
 * wait_turn_ps, wait_sync_ps, wait_hit_ns, wait_poll_ps) at the linearisation point
 * wait_at, then with each moved by half of it: the busy spans, for the
 * calibrator's fit of the terms (fit_wait in
 * sim/analysis/trace_calibrate.c). --wait-at sets the point (a second
 * point: the terms a fit at the first gave). */
enum { NWAIT = CTA_CALIB_WAIT_TERMS };
static uint64_t wait_at[NWAIT] = {300, 600, 5000, 3000, 200, 500};

static int probe_wait(struct config *c, const char *tmpdir, char *err, size_t elen)
{
	if (!c->wait_fit)
		return 0;
	struct cta_device_model *m = malloc(sizeof(*m));
	char model[1200], simt[1200];
	msgf(model, sizeof(model), "%s/wait.model", tmpdir);
	msgf(simt, sizeof(simt), "%s/wait.trace", tmpdir);
	int rc = -1;
	if (!m || cta_device_resolve(m, c->runs[0].header.device, err, elen))
		goto out;
	uint64_t step[NWAIT];
	for (int i = 0; i < NWAIT; i++)
		step[i] = wait_at[i] / 2 ? wait_at[i] / 2 : 1;
	for (int p = 0; p <= NWAIT; p++) {
		uint64_t v[NWAIT];
		for (int i = 0; i < NWAIT; i++)
			v[i] = wait_at[i] + (p == i + 1 ? step[i] : 0);
		m->wait_load_ns = (unsigned)v[0];
		m->wait_atomic_ns = (unsigned)v[1];
		m->wait_turn_ps = (unsigned)v[2];
		m->wait_sync_ps = (unsigned)v[3];
		m->wait_hit_ns = (unsigned)v[4];
		m->wait_poll_ps = (unsigned)v[5];
		struct cta_trace t;
		if (cta_device_save(m, model, err, elen) || simulate(c, model, simt, err, elen) ||
		    cta_trace_read(&t, simt, err, elen))
			goto out;
		uint64_t t0 = UINT64_MAX, t1 = 0;
		for (size_t i = 0; i < t.count; i++) {
			if (t.recs[i].ev == CTA_TEV_START && t.recs[i].t_ns < t0)
				t0 = t.recs[i].t_ns;
			if (t.recs[i].ev == CTA_TEV_END && t.recs[i].t_ns > t1)
				t1 = t.recs[i].t_ns;
		}
		cta_trace_free(&t);
		uint64_t busy = t0 != UINT64_MAX && t1 > t0 ? t1 - t0 : 0;
		if (!busy) {
			msgf(err, elen, "no block ran");
			goto out;
		}
		if (p)
			c->wait.busy[p - 1] = busy;
		else
			c->wait.busy0 = busy;
	}
	memcpy(c->wait.at, wait_at, sizeof(wait_at));
	memcpy(c->wait.step, step, sizeof(step));
	rc = 0;
out:
	unlink(model);
	unlink(simt);
	free(m);
	return rc;
}

/* Block starts per bin of `ns`, from the trace's first start, per kernel:
 * 1 when a and b agree in every bin of every kernel. */
static int same_bins(const struct cta_trace *a, const struct cta_trace *b, uint64_t ns)
{
	if (a->header.kernel_count != b->header.kernel_count)
		return 0;
	const struct cta_trace *t[2] = {a, b};
	uint64_t t0[2] = {UINT64_MAX, UINT64_MAX}, tmax = 0;
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < t[s]->count; i++)
			if (t[s]->recs[i].ev == CTA_TEV_START && t[s]->recs[i].t_ns < t0[s])
				t0[s] = t[s]->recs[i].t_ns;
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < t[s]->count; i++)
			if (t[s]->recs[i].ev == CTA_TEV_START && t[s]->recs[i].t_ns - t0[s] > tmax)
				tmax = t[s]->recs[i].t_ns - t0[s];
	size_t nb = (size_t)(tmax / ns) + 1;
	unsigned nk = a->header.kernel_count;
	uint64_t *cnt = calloc(2 * nb * nk, sizeof(*cnt));
	if (!cnt)
		return 0;
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < t[s]->count; i++) {
			const struct cta_trace_rec *r = &t[s]->recs[i];
			if (r->ev == CTA_TEV_START && r->kernel < nk)
				cnt[((size_t)s * nk + r->kernel) * nb + (r->t_ns - t0[s]) / ns]++;
		}
	int same = !memcmp(cnt, cnt + nb * nk, nb * nk * sizeof(*cnt));
	free(cnt);
	return same;
}

/* One configuration's figures against its runs. */
struct score {
	uint64_t fw_same, fw_n;   /* first-wave blocks, summed over kernels and runs */
	uint64_t hw_same, hw_n;   /* the same between run 1 and the others */
	double bps;               /* largest blocks-per-SM distance */
	double ratio, rmin, rmax; /* makespan sim/hw: mean, range over runs */
	unsigned bins_ok, bins_n; /* runs matching start bins */
};

static int diff_counts(const struct cta_trace *hw, const struct cta_trace *sim, uint64_t *same,
                       uint64_t *n, double *bps, double *ratio, char *err, size_t elen)
{
	struct cta_diff_result *d = malloc(sizeof(*d));
	if (!d)
		return -1;
	if (cta_trace_diff(d, hw, sim, NULL, err, elen)) {
		free(d);
		return -1;
	}
	for (unsigned k = 0; k < d->kernel_count; k++) {
		const struct cta_diff_kernel *dk = &d->kernels[k];
		uint64_t m = dk->first_wave_n[0] > dk->first_wave_n[1] ? dk->first_wave_n[0]
		                                                       : dk->first_wave_n[1];
		*same += dk->first_wave_same;
		*n += m;
		if (bps && dk->bps_distance > *bps)
			*bps = dk->bps_distance;
	}
	if (ratio)
		*ratio = d->makespan_ratio;
	free(d);
	return 0;
}

static int score_config(struct score *sc, const struct config *c, const struct cta_trace *sim,
                        char *err, size_t elen)
{
	memset(sc, 0, sizeof(*sc));
	sc->rmin = INFINITY;
	sc->rmax = -INFINITY;
	for (unsigned r = 0; r < c->nruns; r++) {
		double ratio = 1;
		char derr[512];
		if (diff_counts(&c->runs[r], sim, &sc->fw_same, &sc->fw_n, &sc->bps, &ratio, derr,
		                sizeof(derr))) {
			msgf(err, elen, "%s run %u: %s", c->name, r + 1, derr);
			return -1;
		}
		sc->ratio += ratio / c->nruns;
		if (ratio < sc->rmin)
			sc->rmin = ratio;
		if (ratio > sc->rmax)
			sc->rmax = ratio;
		if (r > 0)
			diff_counts(&c->runs[r], &c->runs[0], &sc->hw_same, &sc->hw_n, NULL, NULL,
			            derr, sizeof(derr));
		if (c->bins_ns) {
			sc->bins_n++;
			sc->bins_ok += same_bins(&c->runs[r], sim, c->bins_ns);
		}
	}
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

struct targets {
	double placement, median, worst, predict;
};

/* --jobs: configurations predicted at once, each by a process of its own
 * (fork: the fit and the simulator's harness are not shared between
 * threads); the table comes out in configuration order all the same. */
static unsigned jobs = 1;

/* One configuration's prediction: model m (fixed, fitted once, or fitted
 * here on train less configuration i), written to `model`, the simulator's
 * run of it into `simt`, scored against the recorded runs. */
static int predict_one(struct score *sc, struct cta_device_model *m, const struct configs *cs,
                       size_t i, const struct configs *train, int refit, const char *model,
                       const char *simt, char *err, size_t elen)
{
	const struct config *c = &cs->c[i];
	if (refit && fit(m, train, train == cs ? i : SIZE_MAX, err, elen))
		return -1;
	if (cta_device_save(m, model, err, elen) || simulate(c, model, simt, err, elen))
		return -1;
	struct cta_trace sim;
	if (cta_trace_read(&sim, simt, err, elen))
		return -1;
	int rc = score_config(sc, c, &sim, err, elen);
	cta_trace_free(&sim);
	return rc;
}

/* A configuration's outcome, written by the worker that predicted it into
 * memory shared with the parent. */
struct job_result {
	int state; /* 0 pending, 1 done, -1 failed */
	struct score sc;
	char err[512];
};

/* Predicts every configuration of cs with `jobs` worker processes that
 * take the next configuration from a shared counter, into res[]. Returns
 * -1 only where the workers could not be started. */
static int predict_parallel(struct job_result *res, struct cta_device_model *m,
                            const struct configs *cs, const struct configs *train, int refit,
                            const char *tmpdir, struct cli_progress *bar, char *err, size_t elen)
{
	size_t *next =
	    mmap(NULL, sizeof(*next), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (next == MAP_FAILED) {
		msgf(err, elen, "cannot share memory with the workers: %s", strerror(errno));
		return -1;
	}
	*next = 0;
	pid_t *pids = calloc(jobs, sizeof(*pids));
	unsigned started = 0;
	fflush(stdout);
	fflush(stderr);
	for (unsigned w = 0; pids && w < jobs; w++) {
		pid_t pid = fork();
		if (pid < 0)
			break;
		if (!pid) {
			char model[1200], simt[1200];
			msgf(model, sizeof(model), "%s/model.%u", tmpdir, w);
			msgf(simt, sizeof(simt), "%s/sim.%u.trace", tmpdir, w);
			for (;;) {
				size_t i = __atomic_fetch_add(next, 1, __ATOMIC_RELAXED);
				if (i >= cs->n)
					break;
				struct job_result *r = &res[i];
				int rc = predict_one(&r->sc, m, cs, i, train, refit, model, simt,
				                     r->err, sizeof(r->err));
				__atomic_store_n(&r->state, rc ? -1 : 1, __ATOMIC_RELEASE);
				if (rc)
					break;
			}
			unlink(model);
			unlink(simt);
			_exit(0);
		}
		pids[started++] = pid;
	}
	if (!started) {
		msgf(err, elen, "cannot start the workers: %s", strerror(errno));
		free(pids);
		munmap(next, sizeof(*next));
		return -1;
	}
	/* The progress bar follows the finished configurations until every
	 * worker has exited (a worker that failed leaves its rest pending). */
	for (unsigned left = started; left;) {
		size_t done = 0;
		for (size_t i = 0; i < cs->n; i++)
			done += __atomic_load_n(&res[i].state, __ATOMIC_ACQUIRE) != 0;
		cli_progress_step(bar, done);
		pid_t pid = waitpid(-1, NULL, WNOHANG);
		if (pid > 0) {
			for (unsigned w = 0; w < started; w++)
				left -= pids[w] == pid;
		} else if (pid < 0 && errno != EINTR) {
			break;
		} else {
			usleep(100000);
		}
	}
	free(pids);
	munmap(next, sizeof(*next));
	return 0;
}

/* One configuration's probes (probe_work, probe_wait) as a worker of
 * probe_all did them: state 1 done, -1 failed (err), 0 not run; the work
 * per block, when n, in the file probe.I of the scratch folder. */
struct probe_result {
	int state;
	uint64_t n;
	struct cta_calib_wait wait;
	char err[512];
};

static int probe_one(struct config *c, const char *tmpdir, char *err, size_t elen)
{
	if (probe_work(c, tmpdir, err, elen) || probe_wait(c, tmpdir, err, elen)) {
		char what[700];
		msgf(what, sizeof(what), "%s: simulator probes: %s", c->name, err);
		msgf(err, elen, "%s", what);
		return -1;
	}
	return 0;
}

/* The probes of every configuration, `jobs` of them at once, each worker a
 * process in a scratch folder of its own (the probes' runs are the
 * fits' inputs only: the same whatever the jobs). */
static int probe_all(struct configs *cs, const char *tmpdir, char *err, size_t elen)
{
	if (jobs <= 1 || cs->n <= 1) {
		for (size_t i = 0; i < cs->n; i++)
			if (probe_one(&cs->c[i], tmpdir, err, elen))
				return -1;
		return 0;
	}
	size_t sz = sizeof(size_t) + cs->n * sizeof(struct probe_result);
	unsigned char *sh =
	    mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		msgf(err, elen, "cannot share memory with the workers: %s", strerror(errno));
		return -1;
	}
	size_t *next = (size_t *)(void *)sh;
	struct probe_result *res = (struct probe_result *)(void *)(sh + sizeof(size_t));
	*next = 0;
	unsigned started = 0;
	fflush(stdout);
	fflush(stderr);
	for (unsigned w = 0; w < jobs; w++) {
		pid_t pid = fork();
		if (pid < 0)
			break;
		if (pid) {
			started++;
			continue;
		}
		char wdir[1200];
		msgf(wdir, sizeof(wdir), "%s/w%u", tmpdir, w);
		if (mkdir(wdir, 0700))
			_exit(1);
		for (;;) {
			size_t i = __atomic_fetch_add(next, 1, __ATOMIC_RELAXED);
			if (i >= cs->n)
				break;
			struct config *c = &cs->c[i];
			struct probe_result *r = &res[i];
			int rc = probe_one(c, wdir, r->err, sizeof(r->err));
			if (!rc && c->work.n) {
				char path[1200];
				msgf(path, sizeof(path), "%s/probe.%zu", tmpdir, i);
				FILE *f = fopen(path, "wb");
				uint64_t n = c->work.n;
				rc = !f || fwrite(c->calls, sizeof(*c->calls), n, f) != n ||
				     fwrite(c->wns, sizeof(*c->wns), n, f) != n ||
				     fwrite(c->issue, sizeof(*c->issue), n, f) != n;
				if (f && fclose(f))
					rc = 1;
				if (rc)
					msgf(r->err, sizeof(r->err), "%s: cannot write %s", c->name,
					     path);
				r->n = n;
			}
			r->wait = c->wait;
			__atomic_store_n(&r->state, rc ? -1 : 1, __ATOMIC_RELEASE);
		}
		rmdir(wdir);
		_exit(0);
	}
	while (started) {
		pid_t pid = wait(NULL);
		if (pid > 0)
			started--;
		else if (errno != EINTR)
			break;
	}
	int rc = 0;
	for (size_t i = 0; i < cs->n && !rc; i++) {
		struct config *c = &cs->c[i];
		struct probe_result *r = &res[i];
		if (r->state != 1) {
			msgf(err, elen, "%s", r->state ? r->err : "a probe's worker stopped");
			rc = -1;
			break;
		}
		c->wait = r->wait;
		if (!r->n)
			continue;
		char path[1200];
		msgf(path, sizeof(path), "%s/probe.%zu", tmpdir, i);
		uint64_t n = r->n;
		c->calls = malloc(n * sizeof(*c->calls));
		c->wns = malloc(n * sizeof(*c->wns));
		c->issue = malloc(n * sizeof(*c->issue));
		FILE *f = fopen(path, "rb");
		if (!c->calls || !c->wns || !c->issue || !f ||
		    fread(c->calls, sizeof(*c->calls), n, f) != n ||
		    fread(c->wns, sizeof(*c->wns), n, f) != n ||
		    fread(c->issue, sizeof(*c->issue), n, f) != n) {
			msgf(err, elen, "%s: cannot read the probes' %s", c->name, path);
			rc = -1;
		} else {
			c->work = (struct cta_calib_work){
			    .n = n, .calls = c->calls, .ns = c->wns, .issue = c->issue};
		}
		if (f)
			fclose(f);
		unlink(path);
	}
	for (size_t i = 0; i < cs->n; i++) {
		char path[1200];
		msgf(path, sizeof(path), "%s/probe.%zu", tmpdir, i);
		unlink(path);
	}
	munmap(sh, sz);
	return rc;
}

/* Predicts every configuration of cs, each with the model `fixed` or, when
 * NULL, with one fitted on `train` less the configuration itself (train ==
 * cs: leave one out) or on all of train (fitted once). Prints the table and
 * the summary; returns 1 when a target is missed, 0 when met, -1 on error. */
static int evaluate(const char *title, const struct configs *cs, const struct configs *train,
                    const struct cta_device_model *fixed, const char *tmpdir, double worst_max,
                    const struct targets *tg, int quiet, char *err, size_t elen)
{
	char model[1200], simt[1200];
	msgf(model, sizeof(model), "%s/model", tmpdir);
	msgf(simt, sizeof(simt), "%s/sim.trace", tmpdir);
	struct cta_device_model *m = malloc(sizeof(*m));
	double *errs = calloc(cs->n, sizeof(double)), *berrs = calloc(cs->n, sizeof(double));
	struct job_result *res = NULL;
	if (!m || !errs || !berrs) {
		free(m);
		free(errs);
		free(berrs);
		return -1;
	}
	int rc = 0;
	/* Predicting another folder from all of train: one fit serves all. */
	int refit = !fixed && train == cs;
	if (fixed)
		*m = *fixed;
	else if (!refit && fit(m, train, SIZE_MAX, err, elen))
		rc = -1;
	printf("%s\n\n", title);
	printf("%-34s %4s %18s %8s %8s %22s %6s\n", "configuration", "runs", "first wave same SM",
	       "hw runs", "bps", "makespan sim/hw", "bins");
	uint64_t fw_same = 0, fw_n = 0, hw_same = 0, hw_n = 0;
	unsigned bins_bad = 0;
	size_t nerr = 0, nberr = 0, probes = 0;
	struct cli_progress bar;
	cli_progress_start(&bar, "configurations", cs->n, quiet);
	if (!rc && jobs > 1 && cs->n > 1) {
		res = mmap(NULL, cs->n * sizeof(*res), PROT_READ | PROT_WRITE,
		           MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (res == MAP_FAILED) {
			res = NULL;
			msgf(err, elen, "cannot share memory with the workers: %s",
			     strerror(errno));
			rc = -1;
		} else {
			memset(res, 0, cs->n * sizeof(*res));
			rc = predict_parallel(res, m, cs, train, refit, tmpdir, &bar, err, elen);
		}
	}
	for (size_t i = 0; i < cs->n && !rc; i++) {
		const struct config *c = &cs->c[i];
		struct score sc;
		if (res) {
			if (res[i].state != 1) {
				msgf(err, elen, "%s",
				     res[i].state ? res[i].err : "a worker stopped");
				rc = -1;
				break;
			}
			sc = res[i].sc;
		} else {
			cli_progress_step(&bar, i);
			if (predict_one(&sc, m, cs, i, train, refit, model, simt, err, elen)) {
				rc = -1;
				break;
			}
		}
		fw_same += sc.fw_same;
		fw_n += sc.fw_n;
		hw_same += sc.hw_same;
		hw_n += sc.hw_n;
		/* A placement probe's makespan is shown, not judged: its durations
		 * enter no fit (fit=placement). A burst's (fit=clc-burst) is
		 * summed up on a line of its own: its durations enter the
		 * context's queue alone, and the rest of its steal loop (the way
		 * to the first request, the late blocks) is what the other
		 * configurations judge. */
		if (c->burst_only)
			berrs[nberr++] = fabs(sc.ratio - 1);
		else if (!c->placement_only)
			errs[nerr++] = fabs(sc.ratio - 1);
		else
			probes++;
		char fw[32], hw[16] = "-", bins[16] = "-", ms[40], name[160];
		msgf(fw, sizeof(fw), "%" PRIu64 "/%" PRIu64 " %.3f", sc.fw_same, sc.fw_n,
		     sc.fw_n ? (double)sc.fw_same / sc.fw_n : 1.0);
		if (sc.hw_n)
			msgf(hw, sizeof(hw), "%.3f", (double)sc.hw_same / sc.hw_n);
		if (sc.bins_n) {
			msgf(bins, sizeof(bins), "%u/%u", sc.bins_ok, sc.bins_n);
			bins_bad += sc.bins_ok != sc.bins_n;
		}
		msgf(ms, sizeof(ms), "%.3f (%.3f-%.3f)", sc.ratio, sc.rmin, sc.rmax);
		cli_progress_clear(&bar); /* the table's line goes above the bar */
		msgf(name, sizeof(name), "%s%s", c->name,
		     c->placement_only ? " (placement)"
		     : c->burst_only   ? " (clc-burst)"
		                       : "");
		printf("%-34s %4u %18s %8s %8.3f %22s %6s\n", name, c->nruns, fw, hw, sc.bps, ms,
		       bins);
		fflush(stdout);
		cli_progress_step(&bar, i + 1);
	}
	cli_progress_end(&bar);
	if (res)
		munmap(res, cs->n * sizeof(*res));
	int missed = 0;
	if (!rc) {
		qsort(errs, nerr, sizeof(double), cmp_double);
		double med = !nerr      ? 0
		             : nerr % 2 ? errs[nerr / 2]
		                        : (errs[nerr / 2 - 1] + errs[nerr / 2]) / 2;
		double worst = nerr ? errs[nerr - 1] : 0;
		double place = fw_n ? (double)fw_same / fw_n : 1;
		double hwp = hw_n ? (double)hw_same / hw_n : 1;
		double want = tg->placement < hwp ? tg->placement : hwp;
		printf("\nsummary: %zu configurations\n", cs->n);
		printf("  first-wave blocks on the same SM  %" PRIu64 "/%" PRIu64
		       " = %.4f  (hardware runs among themselves %.4f; target %.4f)  %s\n",
		       fw_same, fw_n, place, hwp, want, place >= want ? "met" : "MISSED");
		if (probes)
			printf("  makespan judged on %zu: the other %zu are placement probes "
			       "(fit=placement)\n",
			       nerr, probes);
		if (nberr) {
			qsort(berrs, nberr, sizeof(double), cmp_double);
			printf("  %zu CLC bursts (fit=clc-burst), judged apart: median |makespan "
			       "ratio - "
			       "1| %.4f, largest %.4f\n",
			       nberr,
			       nberr % 2 ? berrs[nberr / 2]
			                 : (berrs[nberr / 2 - 1] + berrs[nberr / 2]) / 2,
			       berrs[nberr - 1]);
		}
		printf("  median |makespan ratio - 1|        %.4f  (target %.4f)  %s\n", med,
		       tg->median, med <= tg->median ? "met" : "MISSED");
		printf("  largest |makespan ratio - 1|       %.4f  (target %.4f)  %s\n", worst,
		       worst_max, worst <= worst_max ? "met" : "MISSED");
		printf("  scenarios with every start bin    %s\n\n", bins_bad ? "MISSED" : "met");
		missed = place < want || med > tg->median || worst > worst_max || bins_bad;
	}
	free(m);
	free(errs);
	free(berrs);
	return rc ? -1 : missed;
}

int cta_cmd_fidelity(int argc, char **argv)
{
	const char *dir = NULL, *device = NULL, *save = NULL;
	const char **predict = calloc((size_t)argc, sizeof(char *));
	char **only = calloc((size_t)argc, sizeof(char *));
	int npredict = 0, nonly = 0, check = 0, quiet = 0;
	struct targets tg = {0.95, 0.05, 0.15, 0.10};
	if (!predict || !only) {
		free(predict);
		free(only);
		return CTA_EXIT_USAGE;
	}
	int ret = CTA_EXIT_USAGE;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		double *t = NULL;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage_text, stdout);
			ret = CTA_EXIT_OK;
			goto out;
		} else if (!strcmp(a, "-o")) {
			if (++i >= argc) {
				fprintf(stderr, "ctasim fidelity: -o needs a file\n");
				goto usage;
			}
			save = argv[i];
		} else if (!strcmp(a, "--predict") || !strcmp(a, "--device") ||
		           !strcmp(a, "--only")) {
			if (++i >= argc) {
				fprintf(stderr, "ctasim fidelity: %s needs a value\n", a);
				goto usage;
			}
			if (a[2] == 'p')
				predict[npredict++] = argv[i];
			else if (a[2] == 'd')
				device = argv[i];
			else
				only[nonly++] = argv[i];
		} else if (!strcmp(a, "--wait-at")) {
			if (++i >= argc) {
				fprintf(stderr, "ctasim fidelity: --wait-at needs a value\n");
				goto usage;
			}
			const char *v = argv[i];
			for (int k = 0; k < NWAIT; k++) {
				char *end;
				errno = 0;
				unsigned long long x = strtoull(v, &end, 10);
				if (end == v || errno || x < 1 || x > 1000000 ||
				    *end != (k + 1 < NWAIT ? ',' : 0)) {
					fprintf(
					    stderr,
					    "ctasim fidelity: --wait-at %s: want %d terms "
					    "LOAD,ATOMIC,TURN,SYNC,HIT,POLL, each 1 to 1000000\n",
					    argv[i], NWAIT);
					goto usage;
				}
				wait_at[k] = x;
				v = end + 1;
			}
		} else if (!strcmp(a, "--jobs") || !strcmp(a, "-j")) {
			double j = 0;
			if (++i >= argc || cli_parse_double("fidelity", a, argv[i], 1, 256, &j) < 0)
				goto usage;
			if (j != (unsigned)j) {
				fprintf(stderr,
				        "ctasim fidelity: %s '%s': a whole number 1 .. 256\n", a,
				        argv[i]);
				goto usage;
			}
			jobs = (unsigned)j;
		} else if (!strcmp(a, "--check")) {
			check = 1;
		} else if (!strcmp(a, "--quiet") || !strcmp(a, "-q")) {
			quiet = 1;
		} else if ((!strcmp(a, "--min-placement") && (t = &tg.placement)) ||
		           (!strcmp(a, "--max-median-makespan") && (t = &tg.median)) ||
		           (!strcmp(a, "--max-worst-makespan") && (t = &tg.worst)) ||
		           (!strcmp(a, "--max-predict-makespan") && (t = &tg.predict)) ||
		           (!strcmp(a, "--duration-quantile") && (t = &quantile))) {
			if (++i >= argc || cli_parse_double("fidelity", a, argv[i], 0, 1e9, t) < 0)
				goto usage;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "ctasim fidelity: unknown option '%s'\n", a);
			goto usage;
		} else if (!dir) {
			dir = a;
		} else {
			fprintf(stderr, "ctasim fidelity: one DIR only ('%s' and '%s')\n", dir, a);
			goto usage;
		}
	}
	if (!dir)
		goto usage;
	char err[1024], tmpdir[] = "/tmp/ctasim-fidelity-XXXXXX";
	struct configs cs = {0};
	struct cta_device_model *fixed = NULL;
	if (load_configs(&cs, dir, only, nonly, err, sizeof(err))) {
		fprintf(stderr, "ctasim fidelity: %s\n", err);
		configs_free(&cs);
		goto out;
	}
	if (device) {
		fixed = malloc(sizeof(*fixed));
		if (!fixed || cta_device_resolve(fixed, device, err, sizeof(err))) {
			fprintf(stderr, "ctasim fidelity: --device %s: %s\n", device,
			        fixed ? err : "out of memory");
			free(fixed);
			configs_free(&cs);
			goto out;
		}
	}
	if (!mkdtemp(tmpdir)) {
		fprintf(stderr, "ctasim fidelity: cannot make a scratch folder: %s\n",
		        strerror(errno));
		free(fixed);
		configs_free(&cs);
		ret = CTA_EXIT_USAGE;
		goto out;
	}
	/* Each configuration's work per block, for the fits (not needed to
	 * judge a given model). */
	if (!fixed && probe_all(&cs, tmpdir, err, sizeof(err))) {
		fprintf(stderr, "ctasim fidelity: %s\n", err);
		configs_free(&cs);
		rmdir(tmpdir);
		goto out;
	}
	if (save) {
		struct cta_device_model *all = malloc(sizeof(*all));
		if (!all || fit(all, &cs, SIZE_MAX, err, sizeof(err)) ||
		    cta_device_save(all, save, err, sizeof(err))) {
			fprintf(stderr, "ctasim fidelity: -o %s: %s\n", save,
			        all ? err : "out of memory");
			free(all);
			free(fixed);
			configs_free(&cs);
			rmdir(tmpdir);
			goto out;
		}
		printf("model fitted on every configuration of %s written to %s\n\n", dir, save);
		free(all);
	}
	char title[1400];
	if (fixed)
		msgf(title, sizeof(title), "%s: every configuration on the model %s", dir, device);
	else
		msgf(title, sizeof(title),
		     "%s: leave one configuration out (each predicted by a model fitted on all "
		     "the others)",
		     dir);
	int rc = evaluate(title, &cs, &cs, fixed, tmpdir, tg.worst, &tg, quiet, err, sizeof(err));
	int missed = rc > 0;
	for (int p = 0; p < npredict && rc >= 0; p++) {
		struct configs other = {0};
		if (load_configs(&other, predict[p], NULL, 0, err, sizeof(err))) {
			rc = -1;
			configs_free(&other);
			break;
		}
		msgf(title, sizeof(title), "%s predicted from %s: %s", predict[p],
		     fixed ? device : dir,
		     fixed ? "the given model" : "a model fitted on all of its configurations");
		rc = evaluate(title, &other, &cs, fixed, tmpdir, tg.predict, &tg, quiet, err,
		              sizeof(err));
		missed |= rc > 0;
		configs_free(&other);
	}
	char path[1200];
	msgf(path, sizeof(path), "%s/model", tmpdir);
	unlink(path);
	msgf(path, sizeof(path), "%s/sim.trace", tmpdir);
	unlink(path);
	rmdir(tmpdir);
	free(fixed);
	configs_free(&cs);
	if (rc < 0) {
		fprintf(stderr, "ctasim fidelity: %s\n", err);
		ret = CTA_EXIT_USAGE;
		goto out;
	}
	ret = check && missed ? CTA_EXIT_FAIL : CTA_EXIT_OK;
	goto out;
usage:
	fputs(usage_text, stderr);
out:
	free(predict);
	free(only);
	return ret;
}
