/* The SVG timeline: one lane per SM (split into sub-rows where blocks of
 * that SM overlap), each physical block a rectangle coloured by kernel, the
 * time spent on stolen indices hatched, and markers for failed cancels, UB
 * and warnings, above a legend. The time axis starts at the first block
 * dispatch. Past AGGREGATE_SPANS blocks, or where sub-rows would be too
 * thin to see, each lane shows per pixel column the share of its block
 * slots in use (coloured by the kernel holding most of them), so 2M blocks
 * stay a picture of a few MB; too many SMs for lanes of MIN_LANE_PX share
 * a lane per TPC or GPC. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"
#include "ctasim/tools.h"

/* Kernel colours: blues, greens, purples, browns and greys only, so that no
 * kernel shares a hue with the markers (failed cancel red, UB magenta,
 * warning orange). */
static const char *const palette[] = {
    "#4e79a7", "#59a14f", "#b07aa1", "#76b7b2", "#9c755f",
    "#edc948", "#499894", "#8cd17d", "#79706e", "#a0cbe8",
};
/* The same colours mixed 35% with white, for every other block, so that
 * neighbouring blocks stay distinguishable without an outline. */
static const char *const palette_light[] = {
    "#8aa7c6", "#90c08a", "#cbaac2", "#a3cecb", "#bca498",
    "#f3db84", "#80b7b4", "#b0e0a6", "#a7a09e", "#c0dcf0",
};
#define AGGREGATE_SPANS 20000
#define NPAL            (sizeof(palette) / sizeof(palette[0]))
/* The plot's height budget: a picture read at a glance fits a screen. */
#define PLOT_BUDGET_PX 1200.0
/* Thinner lanes than this are merged (per TPC, then per GPC). */
#define MIN_LANE_PX 5.0
/* Sub-rows thinner than this are not drawn: the lane shows slot shares. */
#define MIN_SUBROW_PX 2.0
/* The narrowest block drawn: a block shorter than that is still a block. */
#define MIN_BLOCK_PX 2.0

struct geo {
	double left, top, plot_w, lane_h;
	uint64_t t0, span;
	const struct cta__layout *l;
	const unsigned *lane_of; /* lane_of[sm] */
	unsigned nlanes, nsm;
	int unit; /* CTA_SVG_LANES_SM, _TPC or _GPC */
};

static double xof(const struct geo *g, uint64_t t)
{
	return g->left + (double)(t - g->t0) * g->plot_w / (double)g->span;
}

static double lane_y(const struct geo *g, uint64_t sm)
{
	return g->top + (double)g->lane_of[sm] * g->lane_h;
}

static double row_y(const struct geo *g, unsigned lane)
{
	return g->top + (double)lane * g->lane_h;
}

/* The inner height of a lane (a 1 px gap separates lanes when there is room). */
static double lane_inner(const struct geo *g)
{
	return g->lane_h >= 6 ? g->lane_h - 1 : g->lane_h;
}

/* A tick step of 1, 2 or 5 times a power of ten giving about n ticks. */
static uint64_t nice_step(uint64_t span, unsigned n)
{
	double raw = (double)span / n;
	if (raw < 1)
		return 1;
	double mag = pow(10, floor(log10(raw)));
	double f = raw / mag;
	double m = f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10;
	return (uint64_t)(m * mag);
}

static void fmt_time(char *buf, size_t n, uint64_t ns, uint64_t unit)
{
	const char *u = unit == 1         ? "ns"
	                : unit == 1000    ? "\xc2\xb5s"
	                : unit == 1000000 ? "ms"
	                                  : "s";
	double v = (double)ns / (double)unit;
	if (v == floor(v))
		snprintf(buf, n, "%.0f %s", v, u);
	else
		snprintf(buf, n, "%g %s", v, u);
}

static uint64_t unit_for(uint64_t span)
{
	if (span < 10000ull)
		return 1;
	if (span < 10000000ull)
		return 1000;
	if (span < 10000000000ull)
		return 1000000;
	return 1000000000ull;
}

static void put_axis(FILE *f, const struct geo *g)
{
	uint64_t step = nice_step(g->span, 10), unit = unit_for(g->span);
	double y0 = g->top, y1 = g->top + g->nlanes * g->lane_h;
	fprintf(f, "<g class=\"axis\">\n");
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"ax\"/>\n",
	        g->left, y0 - 0.5, g->left + g->plot_w, y0 - 0.5);
	for (uint64_t t = 0; t <= g->span; t += step) {
		double x = xof(g, g->t0 + t);
		char lab[48];
		fmt_time(lab, sizeof(lab), t, unit);
		fprintf(f,
		        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"grid\"/>"
		        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"ax\"/>"
		        "<text x=\"%.1f\" y=\"%.1f\" class=\"tick\">%s</text>\n",
		        x, y0, x, y1, x, y0 - 5, x, y0, x, y0 - 8, lab);
		if (g->span - t < step)
			break;
	}
	fprintf(f, "</g>\n");
}

static const char *unit_name(int unit)
{
	return unit == CTA_SVG_LANES_TPC ? "TPC" : unit == CTA_SVG_LANES_GPC ? "GPC" : "SM";
}

static void put_lanes(FILE *f, const struct geo *g)
{
	/* Label often enough to find a lane, rarely enough to stay legible. */
	unsigned every = 1;
	while (every * g->lane_h < 11)
		every *= 2;
	fprintf(f, "<g class=\"lanes\">\n");
	for (unsigned lane = 0; lane < g->nlanes; lane++) {
		double y = row_y(g, lane);
		if (lane % 2)
			fprintf(f,
			        "<rect x=\"%.1f\" y=\"%.2f\" width=\"%.1f\" height=\"%.2f\" "
			        "class=\"stripe\"/>\n",
			        g->left, y, g->plot_w, g->lane_h);
		if (lane % every == 0)
			fprintf(f, "<text x=\"%.1f\" y=\"%.2f\" class=\"sm\">%s %u</text>\n",
			        g->left - 4, y + g->lane_h / 2 + 3.5, unit_name(g->unit), lane);
	}
	fprintf(f, "</g>\n");
}

static void put_blocks(FILE *f, const struct geo *g, const struct cta_trace *t, int titles)
{
	const struct cta__layout *l = g->l;
	fprintf(f, "<g class=\"blocks\">\n");
	for (size_t i = 0; i < l->nspans; i++) {
		const struct cta__span *s = &l->spans[i];
		double rows = l->slots[s->sm];
		double h = lane_inner(g) / rows;
		double y = lane_y(g, s->sm) + s->slot * h;
		double x0 = xof(g, s->t0), x1 = xof(g, s->t1);
		double w = x1 - x0 < MIN_BLOCK_PX ? MIN_BLOCK_PX : x1 - x0;
		unsigned c = (s->kernel % NPAL) * 2 + (unsigned)(s->phys & 1);
		fprintf(f,
		        "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" class=\"c%u\">",
		        x0, y, w, h, c);
		if (titles) {
			fprintf(f,
			        "<title>kernel %u block %" PRIu64 " (phys %" PRIu64 ") SM %" PRIu64
			        ", %" PRIu64 "..%" PRIu64 " ns",
			        s->kernel, s->block, s->phys, s->sm, s->t0, s->t1);
			if (s->steal_count)
				fprintf(f, ", %zu stolen", s->steal_count);
			fputs("</title>", f);
		}
		fputs("</rect>\n", f);
		for (size_t j = 0; j < s->steal_count; j++) {
			const struct cta__steal_seg *st = &l->steals[s->steal_first + j];
			double sx0 = xof(g, st->t0), sx1 = xof(g, st->t1);
			double sw = sx1 - sx0 < 0.5 ? 0.5 : sx1 - sx0;
			fprintf(f,
			        "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" "
			        "class=\"steal\">",
			        sx0, y, sw, h);
			if (titles)
				fprintf(f,
				        "<title>stolen block %" PRIu64 " run by phys %" PRIu64
				        "</title>",
				        st->block, s->phys);
			fputs("</rect>\n", f);
		}
	}
	fprintf(f, "</g>\n");
}

/* Aggregated lanes: per lane (an SM, TPC or GPC) and pixel column, the
 * share of the lane's block slots in use, drawn as a bar of that height in
 * the colour of the kernel that holds most of it; runs of equal columns
 * become one rectangle. A block shorter than MIN_BLOCK_PX counts as that
 * wide, as a rectangle is drawn at least that wide: a run of zero-length
 * blocks must not vanish. */
static int put_aggregate(FILE *f, const struct geo *g)
{
	const struct cta__layout *l = g->l;
	size_t nb = (size_t)ceil(g->plot_w);
	double *busy = calloc(nb, sizeof(*busy)), *best = calloc(nb, sizeof(*best));
	uint32_t *kern = calloc(nb, sizeof(*kern));
	size_t *first = calloc(g->nsm + 1, sizeof(*first));
	if (!busy || !best || !kern || !first) {
		free(busy);
		free(best);
		free(kern);
		free(first);
		return CTA_ENOMEM;
	}
	/* Spans are sorted by SM: first[sm] .. first[sm + 1] are its own. */
	for (size_t i = 0, sm = 0; sm <= g->nsm; sm++) {
		while (i < l->nspans && l->spans[i].sm < sm)
			i++;
		first[sm] = i;
	}
	double ns_per_px = (double)g->span / g->plot_w;
	fprintf(f, "<g class=\"blocks\">\n");
	for (unsigned lane = 0; lane < g->nlanes; lane++) {
		memset(busy, 0, nb * sizeof(*busy));
		memset(best, 0, nb * sizeof(*best));
		double slots = 0;
		for (unsigned sm = 0; sm < g->nsm; sm++) {
			if (g->lane_of[sm] != lane)
				continue;
			/* An SM of the lane that ran nothing still has a slot. */
			slots += l->slots[sm] ? (double)l->slots[sm] : 1;
			for (size_t i = first[sm]; i < first[sm + 1]; i++) {
				const struct cta__span *sp = &l->spans[i];
				uint64_t a = sp->t0 < g->t0 ? g->t0 : sp->t0;
				if (sp->t1 < a)
					continue;
				double x0 = (double)(a - g->t0) / ns_per_px;
				double x1 = (double)(sp->t1 - g->t0) / ns_per_px;
				if (x1 - x0 < MIN_BLOCK_PX) {
					x0 = floor(x0);
					x1 = x0 + MIN_BLOCK_PX;
				}
				for (size_t b = (size_t)x0; b < nb && (double)b < x1; b++) {
					double lo = x0 > (double)b ? x0 : (double)b;
					double hi = x1 < (double)(b + 1) ? x1 : (double)(b + 1);
					double part = hi - lo;
					busy[b] += part;
					if (part > best[b]) {
						best[b] = part;
						kern[b] = sp->kernel;
					}
				}
			}
		}
		if (slots == 0)
			slots = 1;
		double ih = lane_inner(g), y0 = row_y(g, lane);
		size_t b = 0;
		while (b < nb) {
			/* Heights quantised to eighths of the lane, so runs merge. */
			double share = busy[b] / slots;
			int q = (int)ceil((share > 1 ? 1 : share) * 8);
			size_t e = b + 1;
			while (e < nb && kern[e] == kern[b] &&
			       (int)ceil((busy[e] / slots > 1 ? 1 : busy[e] / slots) * 8) == q)
				e++;
			if (q > 0) {
				double h = ih * q / 8.0;
				fprintf(f,
				        "<rect x=\"%.1f\" y=\"%.2f\" width=\"%zu\" height=\"%.2f\" "
				        "class=\"c%u\"/>\n",
				        g->left + (double)b, y0 + ih - h, e - b, h,
				        (kern[b] % (unsigned)NPAL) * 2);
			}
			b = e;
		}
	}
	fprintf(f, "</g>\n");
	free(busy);
	free(best);
	free(kern);
	free(first);
	return 0;
}

static void put_marks(FILE *f, const struct geo *g, const struct cta_trace *t)
{
	double m = g->lane_h < 10 ? 5 : g->lane_h / 2;
	if (m > 8)
		m = 8;
	fprintf(f, "<g class=\"marks\">\n");
	for (size_t i = 0; i < t->count; i++) {
		const struct cta_trace_rec *r = &t->recs[i];
		if (r->sm == CTA_TRACE_NONE || r->sm >= g->l->sm_count)
			continue;
		if (r->t_ns < g->t0)
			continue;
		double x = xof(g, r->t_ns), y = lane_y(g, r->sm);
		if (r->ev == CTA_TEV_CANCEL_DONE && r->code != CTA_CANCEL_SUCCESS) {
			/* Running out of work is how every stealing loop ends, so it is
			 * drawn small and grey; other failures are what people look for. */
			int empty = r->code == CTA_CANCEL_FAIL_EMPTY;
			double mm = empty ? m * 0.6 : m;
			fprintf(f,
			        "<path d=\"M%.2f %.2fl%.2f %.2fl%.2f 0z\" class=\"%s\"><title>"
			        "failed cancel (%s), kernel %u phys %" PRIu64 " at %" PRIu64
			        " ns</title></path>\n",
			        x, y + mm * 1.2, -mm * 0.7, -mm * 1.2, mm * 1.4,
			        empty ? "empty" : "fail", cta_cancel_outcome_name(r->code),
			        r->kernel, r->phys, r->t_ns);
		} else if (r->ev == CTA_TEV_UB || r->ev == CTA_TEV_WARN) {
			double cy = y + g->lane_h / 2;
			fprintf(
			    f,
			    "<path d=\"M%.2f %.2fl%.2f %.2fl%.2f %.2fl%.2f %.2fz\" class=\"%s\">"
			    "<title>%s at %" PRIu64 " ns: ",
			    x, cy - m, m, m, -m, m, -m, -m, r->ev == CTA_TEV_UB ? "ub" : "warn",
			    r->ev == CTA_TEV_UB ? "UB" : "warning", r->t_ns);
			cta__trace_put_xml_str(f, r->text ? r->text : "");
			fputs("</title></path>\n", f);
		}
	}
	fprintf(f, "</g>\n");
}

/* Draws the legend to f and returns its height; with f NULL only measures. */
static double put_legend(FILE *f, const struct cta_trace *t, double x0, double y0, double w,
                         const uint64_t *per_kernel_blocks)
{
	static const char *const extra[] = {"stolen index (work stealing)",
	                                    "cancel failed (priority, injected)",
	                                    "cancel failed (nothing left)", "UB report", "warning"};
	static const char *const ecls[] = {"steal", "fail", "empty", "ub", "warn"};
	const unsigned nextra = sizeof(extra) / sizeof(extra[0]);
	double x = x0, y = y0;
	char lab[160];
	if (f)
		fprintf(f, "<g class=\"legend\">\n");
	for (unsigned k = 0; k < t->header.kernel_count + nextra; k++) {
		const char *cls = NULL;
		if (k < t->header.kernel_count) {
			const struct cta_trace_kernel *tk = &t->header.kernels[k];
			if (tk->priority)
				snprintf(
				    lab, sizeof(lab),
				    "kernel %u: %s (%" PRIu64 " blocks, stream %d, priority %d)", k,
				    tk->name, per_kernel_blocks[k], tk->stream, tk->priority);
			else
				snprintf(lab, sizeof(lab), "kernel %u: %s (%" PRIu64 " blocks)", k,
				         tk->name, per_kernel_blocks[k]);
		} else {
			snprintf(lab, sizeof(lab), "%s", extra[k - t->header.kernel_count]);
			cls = ecls[k - t->header.kernel_count];
		}
		/* 6.6 px a character approximates 12 px sans-serif text. */
		double tw = 30 + 6.6 * (double)strlen(lab);
		if (x + tw > x0 + w && x > x0) {
			x = x0;
			y += 18;
		}
		if (f) {
			if (!cls)
				fprintf(f,
				        "<rect x=\"%.1f\" y=\"%.1f\" width=\"18\" height=\"10\" "
				        "class=\"c%u\"/>",
				        x, y, (k % (unsigned)NPAL) * 2);
			else if (!strcmp(cls, "steal"))
				fprintf(f,
				        "<rect x=\"%.1f\" y=\"%.1f\" width=\"18\" height=\"10\" "
				        "class=\"c0\"/><rect x=\"%.1f\" y=\"%.1f\" width=\"18\" "
				        "height=\"10\" class=\"steal\"/>",
				        x, y, x, y);
			else if (!strcmp(cls, "fail") || !strcmp(cls, "empty"))
				fprintf(f, "<path d=\"M%.1f %.1fl-6 -10l12 0z\" class=\"%s\"/>",
				        x + 9, y + 10, cls);
			else
				fprintf(f, "<path d=\"M%.1f %.1fl6 6l-6 6l-6 -6z\" class=\"%s\"/>",
				        x + 9, y - 1, cls);
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" class=\"leg\">", x + 24, y + 9);
			cta__trace_put_xml_str(f, lab);
			fputs("</text>\n", f);
		}
		x += tw + 16;
	}
	if (f)
		fprintf(f, "</g>\n");
	return y - y0 + 18;
}

int cta_trace_render_svg(const struct cta_trace *t, FILE *f, const struct cta_svg_opts *opts)
{
	return cta__analysis_svg(t, NULL, f, opts);
}

int cta_trace_lean_render_svg(const cta_trace_lean *t, FILE *f, const struct cta_svg_opts *opts)
{
	return cta__analysis_svg(&t->t, &t->l, f, opts);
}

int cta__analysis_svg(const struct cta_trace *t, const struct cta__layout *given, FILE *f,
                      const struct cta_svg_opts *opts)
{
	/* A lean trace (cta_trace_read_lean) brings its layout: its block
	 * records were not kept. */
	struct cta__layout l;
	int owned = !given;
	if (!owned) {
		l = *given;
		if (l.per_kernel)
			return CTA_EINVAL;
	} else {
		int rc = cta__layout_build(&l, t, 0);
		if (rc)
			return rc;
	}
	unsigned width = opts && opts->width ? opts->width : 1600;
	if (width < 400)
		width = 400;
	unsigned nsm = l.sm_count ? (unsigned)l.sm_count : 1;

	/* The axis starts at the first block dispatch (or start): the launch
	 * latency before it would otherwise leave most of the picture empty. */
	uint64_t first_block = l.first_begin, first_launch = UINT64_MAX, last_end = l.last_end;
	for (size_t i = 0; i < t->count; i++)
		if (t->recs[i].ev == CTA_TEV_LAUNCH && t->recs[i].t_ns < first_launch)
			first_launch = t->recs[i].t_ns;
	if (first_block == UINT64_MAX)
		first_block = l.t_min;
	struct geo g = {.left = 64, .top = 72, .l = &l, .t0 = first_block, .nsm = nsm};
	g.plot_w = width - g.left - 24;
	g.span = l.t_max > g.t0 ? l.t_max - g.t0 : 1;

	/* What a lane is: TPCs and GPCs as the device preset the header names
	 * has them (a hardware trace's GPU name finds none: 2 SMs a TPC). */
	const struct cta_device_model *dm = cta_device_find(t->header.device);
	if (dm && dm->sm_count < nsm)
		dm = NULL;
	int lanes = opts && opts->lanes ? opts->lanes : CTA_SVG_LANES_AUTO;
	if (lanes == CTA_SVG_LANES_GPC && !dm) {
		if (owned)
			cta__layout_free(&l);
		return CTA_ENOTFOUND;
	}
	unsigned *lane_of = malloc(nsm * sizeof(*lane_of));
	uint64_t *per_kernel = calloc(t->header.kernel_count + 1, sizeof(*per_kernel));
	if (!per_kernel || !lane_of) {
		free(lane_of);
		free(per_kernel);
		if (owned)
			cta__layout_free(&l);
		return CTA_ENOMEM;
	}
	for (int u = lanes == CTA_SVG_LANES_AUTO ? CTA_SVG_LANES_SM : lanes;; u++) {
		unsigned n = 0;
		for (unsigned sm = 0; sm < nsm; sm++) {
			lane_of[sm] = u == CTA_SVG_LANES_SM    ? sm
			              : u == CTA_SVG_LANES_TPC ? (dm ? dm->tpc_of_sm[sm] : sm / 2)
			                                       : dm->gpc_of_sm[sm];
			if (lane_of[sm] + 1 > n)
				n = lane_of[sm] + 1;
		}
		g.unit = u;
		g.nlanes = n;
		/* Auto: the first unit whose lanes fit the budget at MIN_LANE_PX. */
		if (lanes != CTA_SVG_LANES_AUTO || n * MIN_LANE_PX <= PLOT_BUDGET_PX ||
		    u == CTA_SVG_LANES_GPC || (u == CTA_SVG_LANES_TPC && !dm))
			break;
	}
	unsigned nl = g.nlanes;
	/* Most blocks shorter than a pixel (a kernel with no time cost, a long
	 * run): drawn one by one they would pile up at a few instants, and
	 * zero-length ones share a sub-row; as slot shares each counts a
	 * pixel, and the subtitle says so. */
	size_t short_spans = 0;
	uint64_t px_ns = (uint64_t)((double)g.span / g.plot_w * MIN_BLOCK_PX);
	for (size_t i = 0; i < l.nspans; i++)
		short_spans += l.spans[i].t1 - l.spans[i].t0 <= px_ns;
	int mostly_short = l.nspans && short_spans * 2 > l.nspans;
	/* Blocks are drawn one by one while there are few enough of them and
	 * each overlapping block keeps a sub-row of MIN_SUBROW_PX; else each
	 * lane shows the share of its slots in use. */
	int agg = l.nspans > AGGREGATE_SPANS || g.unit != CTA_SVG_LANES_SM || mostly_short;
	if (opts && opts->lane_height) {
		g.lane_h = opts->lane_height;
		agg = agg || lane_inner(&g) / l.max_slots < MIN_SUBROW_PX;
	} else {
		/* About 3 px per overlapping block, within 6..20 px a lane, and
		 * squeezed to the budget when there are many lanes. */
		double h = 3.0 * l.max_slots + 1;
		h = h < 6 ? 6 : h > 20 ? 20 : h;
		if (h * nl > PLOT_BUDGET_PX)
			h = PLOT_BUDGET_PX / nl < 2 ? 2 : PLOT_BUDGET_PX / nl;
		g.lane_h = h;
		agg = agg || lane_inner(&g) / l.max_slots < MIN_SUBROW_PX;
		if (agg) {
			/* Slot shares need no sub-rows: a lane of 16 px shows
			 * eighths, squeezed to the budget. */
			h = PLOT_BUDGET_PX / nl;
			g.lane_h = h > 16 ? 16 : h < 2 ? 2 : h;
		}
		/* A handful of lanes get taller ones rather than a flat strip. */
		if (g.lane_h * nl < 300)
			g.lane_h = 300.0 / nl > 40 ? 40 : 300.0 / nl;
	}
	g.lane_of = lane_of;
	uint64_t stolen = l.steal_records, fails = 0, ubs = 0, warns = 0;
	for (unsigned k = 0; k < t->header.kernel_count; k++)
		per_kernel[k] = l.kernel_begins[k];
	for (size_t i = 0; i < t->count; i++) {
		const struct cta_trace_rec *r = &t->recs[i];
		fails += r->ev == CTA_TEV_CANCEL_DONE && r->code != CTA_CANCEL_SUCCESS;
		ubs += r->ev == CTA_TEV_UB;
		warns += r->ev == CTA_TEV_WARN;
	}

	double plot_h = nl * g.lane_h;
	/* A dry run of the legend gives its height before anything is drawn. */
	double legend_h = put_legend(NULL, t, g.left, 0, g.plot_w, per_kernel);
	double height = g.top + plot_h + 40 + legend_h;

	fprintf(
	    f,
	    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	    "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" height=\"%.0f\" "
	    "viewBox=\"0 0 %u %.0f\" font-family=\"DejaVu Sans, Helvetica, Arial, sans-serif\">\n",
	    width, height, width, height);
	fputs(
	    "<defs><pattern id=\"hatch\" width=\"4\" height=\"4\" patternUnits=\"userSpaceOnUse\" "
	    "patternTransform=\"rotate(45)\"><rect width=\"4\" height=\"4\" fill=\"none\"/>"
	    "<line x1=\"0\" y1=\"0\" x2=\"0\" y2=\"4\" stroke=\"#000\" stroke-opacity=\"0.55\" "
	    "stroke-width=\"1.2\"/>"
	    "</pattern>\n<style>\n",
	    f);
	for (unsigned i = 0; i < NPAL; i++)
		fprintf(f, ".c%u{fill:%s}.c%u{fill:%s}\n", 2 * i, palette[i], 2 * i + 1,
		        palette_light[i]);
	fputs(".steal{fill:url(#hatch);stroke:#222;stroke-width:0.5}\n"
	      ".empty{fill:#777}\n"
	      ".fail{fill:#d62728;stroke:#fff;stroke-width:0.5}\n"
	      ".ub{fill:#e377c2;stroke:#000;stroke-width:0.8}\n"
	      ".warn{fill:#ff9f1c;stroke:#000;stroke-width:0.6}\n"
	      ".stripe{fill:#f2f2f2}.grid{stroke:#d0d0d0;stroke-width:0.5}"
	      ".ax{stroke:#333;stroke-width:1}\n"
	      ".tick{font-size:11px;text-anchor:middle;fill:#333}"
	      ".sm{font-size:10px;text-anchor:end;fill:#444}"
	      ".leg{font-size:12px;fill:#222}.title{font-size:15px;font-weight:bold;fill:#111}"
	      ".sub{font-size:11px;fill:#555}\n"
	      "</style></defs>\n<rect width=\"100%\" height=\"100%\" fill=\"#fff\"/>\n",
	      f);

	fprintf(f, "<text x=\"%.1f\" y=\"18\" class=\"title\">", g.left);
	if (opts && opts->title) {
		cta__trace_put_xml_str(f, opts->title);
	} else {
		fputs("ctasim trace: ", f);
		cta__trace_put_xml_str(f, t->header.device);
		fprintf(f, " (%s%s)", t->header.backend, t->complete ? "" : ", incomplete");
	}
	uint64_t unit = unit_for(g.span);
	fprintf(f,
	        "</text>\n<text x=\"%.1f\" y=\"34\" class=\"sub\">%zu physical blocks on %u SMs, "
	        "%" PRIu64 " stolen indices, %" PRIu64 " failed cancels, %" PRIu64
	        " UB reports, %" PRIu64 " warnings; tick %g ns",
	        g.left, l.nspans, nsm, stolen, fails, ubs, warns, t->header.tick_ns);
	/* The measures of traces/FORMAT.md, and where the axis starts. */
	char ms[48], bs[48], ll[48];
	if (last_end > first_block)
		fmt_time(bs, sizeof(bs), last_end - first_block, unit);
	if (first_launch != UINT64_MAX && last_end > first_launch && first_block >= first_launch) {
		fmt_time(ms, sizeof(ms), last_end - first_launch, unit);
		fmt_time(ll, sizeof(ll), first_block - first_launch, unit);
		fprintf(f,
		        "; makespan %s, busy span %s; time from the first block dispatch (%s after "
		        "the launch)",
		        ms, last_end > first_block ? bs : "0", ll);
	} else {
		fprintf(f, "; busy span %s; time from the first block dispatch",
		        last_end > first_block ? bs : "0");
	}
	/* How to read the lanes, on a line of its own. */
	fprintf(f, "</text>\n<text x=\"%.1f\" y=\"48\" class=\"sub\">", g.left);
	if (agg)
		fprintf(f, "%zu blocks: each lane shows the share of its slots in use (bar height)",
		        l.nspans);
	else
		fputs("each block a rectangle on its SM's lane, overlapping blocks on sub-rows", f);
	if (g.unit != CTA_SVG_LANES_SM)
		fprintf(f, "; one lane per %s (%u lanes%s)", unit_name(g.unit), nl,
		        g.unit == CTA_SVG_LANES_TPC && !dm ? ", 2 SMs each" : "");
	if (mostly_short) {
		char px[48];
		fmt_time(px, sizeof(px), px_ns, unit);
		fprintf(
		    f,
		    "; %zu of %zu blocks last %s or less, under %.0f px: each drawn %.0f px wide",
		    short_spans, l.nspans, px, MIN_BLOCK_PX, MIN_BLOCK_PX);
	}
	fputs("</text>\n", f);

	put_lanes(f, &g);
	put_axis(f, &g);
	if (agg && put_aggregate(f, &g)) {
		free(lane_of);
		free(per_kernel);
		if (owned)
			cta__layout_free(&l);
		return CTA_ENOMEM;
	}
	if (!agg)
		put_blocks(f, &g, t, 1);
	put_marks(f, &g, t);
	put_legend(f, t, g.left, g.top + plot_h + 22, g.plot_w, per_kernel);
	fputs("</svg>\n", f);
	free(lane_of);
	free(per_kernel);
	if (owned)
		cta__layout_free(&l);
	return ferror(f) ? CTA_EIO : 0;
}
