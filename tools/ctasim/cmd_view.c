/* `ctasim view TRACE -o FILE.svg`: draws a trace as an SVG timeline, one
 * lane per SM, blocks as rectangles coloured by kernel. `view --summary`
 * prints the trace's measures in one streaming pass, in memory that does
 * not grow with the trace. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_util.h"
#include "cmd.h"
#include "ctasim/device.h"
#include "ctasim/io.h"
#include "ctasim/tools.h"
#include "ctasim/trace.h"

static const char usage_text[] =
    "usage: ctasim view TRACE -o FILE.svg [--width PX] [--lane-height PX] [--title TEXT]\n"
    "                   [--lanes auto|sm|tpc|gpc]\n"
    "       ctasim view TRACE --summary\n"
    "\n"
    "--summary prints what the trace holds and its measures (traces/FORMAT.md):\n"
    "records per event, blocks per kernel, makespan, busy span, launch latency,\n"
    "blocks and indices per SM, cancels, UB reports, in one pass whose memory\n"
    "does not grow with the trace.\n"
    "\n"
    "Draws TRACE as an SVG timeline: one lane per SM, blocks as rectangles coloured\n"
    "by kernel, time on stolen indices hatched, failed cancels, UB and warnings\n"
    "marked. Past 20000 blocks, or when overlapping or sub-pixel blocks would be\n"
    "too thin to see, each lane shows the share of its block slots in use.\n"
    "Convert to PNG with e.g. 'rsvg-convert -o out.png FILE.svg'.\n"
    "\n"
    "  -o FILE            output file ('-': standard output; FILE.svg.gz and\n"
    "                     FILE.svg.zst are compressed)\n"
    "  --width PX         picture width, [1, 100000] (default 1600)\n"
    "  --lane-height PX   height of one lane, [1, 100000] (default: from the\n"
    "                     lane count, the plot about 1200 px high at most)\n"
    "  --lanes UNIT       one lane per SM, TPC or GPC (as the device preset the\n"
    "                     trace names has them); auto (default): per SM while\n"
    "                     lanes of 5 px fit, else per TPC, else per GPC\n"
    "  --title TEXT       title line (default: device and backend)\n";

static int parse_px(const char *opt, const char *s, unsigned *out)
{
	uint64_t v;
	if (cli_parse_u64("view", opt, s, 1, 100000, &v) < 0)
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* cta_trace_render_svg as a cli_trace_writer. */
static int write_view(const cta_trace_lean *lt, FILE *f, const void *opts)
{
	const struct cta_svg_opts *o = opts;
	const struct cta_trace *t = cta_trace_lean_trace(lt);
	if (o->lanes == CTA_SVG_LANES_GPC && !cta_device_find(t->header.device)) {
		char ev[300];
		fprintf(stderr,
		        "ctasim view: --lanes gpc: the trace's device '%s' is not a device preset, "
		        "so its GPCs are unknown (--lanes tpc takes 2 SMs a TPC)\n",
		        cta_escape(ev, sizeof(ev), t->header.device, 0));
		return CLI_REPORTED;
	}
	return cta_trace_lean_render_svg(lt, f, opts);
}

/* The measures of one pass over the records; per-SM counts grow with the
 * highest SM id (at most 65536 of them), never with the record count. */
struct summary {
	uint64_t per_ev[CTA_TEV__COUNT];
	uint64_t first_launch, first_begin, last_end;
	uint64_t *starts, *indices; /* per SM */
	size_t nsm;
	uint64_t kstart[CTA_TRACE_MAX_KERNELS], ksteal[CTA_TRACE_MAX_KERNELS];
	uint64_t cancel_fail[CTA_CANCEL_FAIL_INJECTED + 1];
	int bad_sm;
};

static int on_record(void *ctx, const struct cta_trace_header *h, const struct cta_trace_rec *r)
{
	struct summary *m = ctx;
	(void)h;
	m->per_ev[r->ev]++;
	int begin = r->ev == CTA_TEV_START || r->ev == CTA_TEV_STEAL;
	if (r->ev == CTA_TEV_LAUNCH && r->t_ns < m->first_launch)
		m->first_launch = r->t_ns;
	if (begin && r->t_ns < m->first_begin)
		m->first_begin = r->t_ns;
	if (r->ev == CTA_TEV_END && r->t_ns > m->last_end)
		m->last_end = r->t_ns;
	if (r->ev == CTA_TEV_CANCEL_DONE && r->code >= 0 && r->code <= CTA_CANCEL_FAIL_INJECTED)
		m->cancel_fail[r->code]++;
	if (begin && r->kernel < CTA_TRACE_MAX_KERNELS)
		(r->ev == CTA_TEV_START ? m->kstart : m->ksteal)[r->kernel]++;
	if (!begin || r->sm == CTA_TRACE_NONE)
		return 0;
	if (r->sm > 65535) {
		m->bad_sm = 1;
		return CTA_ERANGE;
	}
	if (r->sm >= m->nsm) {
		size_t n = (size_t)r->sm + 1;
		uint64_t *a = realloc(m->starts, n * sizeof(*a));
		if (a)
			m->starts = a;
		uint64_t *b = a ? realloc(m->indices, n * sizeof(*b)) : NULL;
		if (!a || !b)
			return CTA_ENOMEM;
		m->indices = b;
		memset(a + m->nsm, 0, (n - m->nsm) * sizeof(*a));
		memset(b + m->nsm, 0, (n - m->nsm) * sizeof(*b));
		m->nsm = n;
	}
	m->starts[r->sm] += r->ev == CTA_TEV_START;
	m->indices[r->sm]++;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* "min A / median B / max C over N SMs used" of the SMs with v[sm] > 0. */
static void per_sm_line(const char *label, const uint64_t *v, size_t nsm)
{
	uint64_t *u = malloc((nsm ? nsm : 1) * sizeof(*u));
	size_t n = 0;
	for (size_t i = 0; u && i < nsm; i++)
		if (v[i])
			u[n++] = v[i];
	if (!n) {
		printf("%-15sno SM started a block\n", label);
		free(u);
		return;
	}
	qsort(u, n, sizeof(*u), cmp_u64);
	printf("%-15smin %" PRIu64 " / median %" PRIu64 " / max %" PRIu64 " over %zu SMs used\n",
	       label, u[0], u[n / 2], u[n - 1], n);
	free(u);
}

static int summarize(const char *in)
{
	struct summary m;
	memset(&m, 0, sizeof(m));
	m.first_launch = m.first_begin = UINT64_MAX;
	struct cta_trace t;
	char err[512], ev[400];
	int rc = cta_trace_stream(&t, in, on_record, &m, err, sizeof(err));
	if (rc) {
		if (m.bad_sm)
			fprintf(stderr, "ctasim view: %s: an SM id above 65535\n",
			        cta_escape(ev, sizeof(ev), in, 0));
		else if (rc == CTA_ENOMEM)
			fprintf(stderr, "ctasim view: out of memory\n");
		else
			fprintf(stderr, "ctasim view: %s\n", err);
		free(m.starts);
		free(m.indices);
		return CTA_EXIT_USAGE;
	}
	const struct cta_trace_header *h = &t.header;
	printf("trace          %s (%s backend, device ", cta_escape(ev, sizeof(ev), in, 0),
	       h->backend);
	printf("%s, seed %" PRIu64 ", tick %g ns, %s)\n", cta_escape(ev, sizeof(ev), h->device, 0),
	       h->seed, h->tick_ns, t.complete ? "complete" : "marked incomplete");
	printf("records        %zu:", t.count);
	for (int e = 0, first = 1; e < CTA_TEV__COUNT; e++)
		if (m.per_ev[e]) {
			printf("%s %" PRIu64 " %s", first ? "" : ",", m.per_ev[e],
			       cta_trace_event_name((cta_trace_event)e));
			first = 0;
		}
	printf("\n");
	for (unsigned k = 0; k < h->kernel_count; k++) {
		const struct cta_trace_kernel *tk = &h->kernels[k];
		printf("kernel %-7u %s  grid %u,%u,%u  block %u,%u,%u  stream %d  priority %d: "
		       "%" PRIu64 " blocks started, %" PRIu64 " steals\n",
		       k, cta_escape(ev, sizeof(ev), tk->name, 0), tk->grid[0], tk->grid[1],
		       tk->grid[2], tk->block[0], tk->block[1], tk->block[2], tk->stream,
		       tk->priority, m.kstart[k], m.ksteal[k]);
	}
	/* The measures of traces/FORMAT.md, worded as run and diff word them. */
	int have_end = m.last_end > 0 || m.per_ev[CTA_TEV_END];
	if (m.first_launch != UINT64_MAX && have_end && m.last_end >= m.first_launch)
		printf("makespan       %" PRIu64 " ns (first launch to last block end)\n",
		       m.last_end - m.first_launch);
	if (m.first_begin != UINT64_MAX && have_end && m.last_end >= m.first_begin)
		printf("busy span      %" PRIu64 " ns (first block begin to last block end)\n",
		       m.last_end - m.first_begin);
	if (m.first_launch != UINT64_MAX && m.first_begin != UINT64_MAX &&
	    m.first_begin >= m.first_launch)
		printf("launch latency %" PRIu64 " ns (first launch to first block begin)\n",
		       m.first_begin - m.first_launch);
	per_sm_line("blocks per SM", m.starts, m.nsm);
	if (m.per_ev[CTA_TEV_STEAL])
		per_sm_line("indices per SM", m.indices, m.nsm);
	if (m.per_ev[CTA_TEV_CANCEL]) {
		printf("cancels        %" PRIu64 " requests, %" PRIu64 " stole a block",
		       m.per_ev[CTA_TEV_CANCEL], m.cancel_fail[CTA_CANCEL_SUCCESS]);
		for (int c = 1; c <= CTA_CANCEL_FAIL_INJECTED; c++)
			if (m.cancel_fail[c])
				printf(", %" PRIu64 " %s", m.cancel_fail[c],
				       cta_cancel_outcome_name(c));
		printf("\n");
	}
	printf("UB reports     %" PRIu64 ", warnings %" PRIu64 "\n", m.per_ev[CTA_TEV_UB],
	       m.per_ev[CTA_TEV_WARN]);
	free(m.starts);
	free(m.indices);
	return CTA_EXIT_OK;
}

int cta_cmd_view(int argc, char **argv)
{
	const char *in = NULL, *out = NULL;
	int summary = 0;
	struct cta_svg_opts opts = CTA_SVG_OPTS_INIT;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage_text, stdout);
			return CTA_EXIT_OK;
		} else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			if (++i >= argc)
				goto usage;
			out = argv[i];
		} else if (!strcmp(a, "--width")) {
			if (++i >= argc || parse_px(a, argv[i], &opts.width))
				return CTA_EXIT_USAGE;
		} else if (!strcmp(a, "--lane-height")) {
			if (++i >= argc || parse_px(a, argv[i], &opts.lane_height))
				return CTA_EXIT_USAGE;
		} else if (!strcmp(a, "--summary")) {
			summary = 1;
		} else if (!strcmp(a, "--lanes")) {
			static const char *const units[] = {"auto", "sm", "tpc", "gpc"};
			if (++i >= argc)
				goto usage;
			opts.lanes = -1;
			for (int u = 0; u < 4; u++)
				if (!strcmp(argv[i], units[u]))
					opts.lanes = u;
			if (opts.lanes < 0) {
				char ev[200];
				fprintf(
				    stderr,
				    "ctasim view: --lanes '%s': expected auto, sm, tpc or gpc\n",
				    cta_escape(ev, sizeof(ev), argv[i], 0));
				return CTA_EXIT_USAGE;
			}
		} else if (!strcmp(a, "--title")) {
			if (++i >= argc)
				goto usage;
			opts.title = argv[i];
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "ctasim view: unknown option '%s'\n", a);
			goto usage;
		} else if (!in) {
			in = a;
		} else {
			fprintf(stderr, "ctasim view: more than one trace given\n");
			goto usage;
		}
	}
	if (summary && in && !out)
		return summarize(in);
	if (summary) {
		fprintf(stderr, "ctasim view: --summary prints to standard output (no -o)\n");
		goto usage;
	}
	if (!in || !out)
		goto usage;

	return cli_trace_convert("view", in, out, write_view, &opts, 0, 0);
usage:
	fputs(usage_text, stderr);
	return CTA_EXIT_USAGE;
}
