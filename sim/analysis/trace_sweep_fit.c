/* Calibration of the sweep rule (placement = sweep): the first waves of
 * single-kernel launches on an idle device, and a search for the sweep_*
 * parameters under which cta_device_sweep_order places most of their
 * blocks on the SM the hardware used. The topology (TPCs, GPCs) is the base
 * model's; only the handful of rule parameters is fitted. */
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"
#include "ctasim/tools.h"

/* One measured first wave: block i started on sm[i], i < len. */
struct wave {
	uint64_t grid;
	unsigned len;
	unsigned *sm;
	unsigned weight; /* runs that recorded exactly this wave */
};

struct waves {
	struct wave *w;
	size_t n, cap;
};

static void waves_free(struct waves *ws)
{
	for (size_t i = 0; i < ws->n; i++)
		free(ws->w[i].sm);
	free(ws->w);
}

/* The prefix of kernel k's blocks 0, 1, ... that started before any of its
 * blocks ended, when the kernel ran alone from an idle device (no other
 * kernel's block running or started at its first start). */
static int add_wave(struct waves *ws, const struct cta_trace *t, unsigned k, unsigned nsms,
                    unsigned maxper)
{
	const struct cta_trace_kernel *kd = &t->header.kernels[k];
	if (kd->cluster[0] * kd->cluster[1] * kd->cluster[2] > 1)
		return 0; /* clusters are placed GPC by GPC, not swept */
	uint64_t grid = (uint64_t)kd->grid[0] * kd->grid[1] * kd->grid[2];
	uint64_t first_start = UINT64_MAX, first_end = UINT64_MAX;
	for (size_t i = 0; i < t->count; i++) {
		const struct cta_trace_rec *r = &t->recs[i];
		if (r->kernel != k)
			continue;
		if (r->ev == CTA_TEV_START && r->t_ns < first_start)
			first_start = r->t_ns;
		if (r->ev == CTA_TEV_END && r->t_ns < first_end)
			first_end = r->t_ns;
	}
	if (first_start == UINT64_MAX)
		return 0;
	for (size_t i = 0; i < t->count; i++) {
		const struct cta_trace_rec *r = &t->recs[i];
		if (r->kernel != k && (r->ev == CTA_TEV_START || r->ev == CTA_TEV_STEAL) &&
		    r->t_ns <= first_start)
			return 0; /* another kernel was there first */
	}
	/* A first wave is at most max_blocks_per_sm blocks per SM. */
	uint64_t most = (uint64_t)nsms * (maxper ? maxper : 64);
	unsigned cap = (unsigned)(grid < most ? grid : most);
	unsigned *sm = malloc((size_t)cap * sizeof *sm);
	if (!sm)
		return CTA_ENOMEM;
	for (unsigned b = 0; b < cap; b++)
		sm[b] = UINT32_MAX;
	for (size_t i = 0; i < t->count; i++) {
		const struct cta_trace_rec *r = &t->recs[i];
		if (r->kernel == k && r->ev == CTA_TEV_START && r->block < cap &&
		    r->t_ns < first_end && r->sm < nsms)
			sm[r->block] = (unsigned)r->sm;
	}
	unsigned len = 0;
	while (len < cap && sm[len] != UINT32_MAX)
		len++;
	if (!len) {
		free(sm);
		return 0;
	}
	/* Repeated runs usually record the same wave: it is scored once. */
	for (size_t i = 0; i < ws->n; i++)
		if (ws->w[i].grid == grid && ws->w[i].len == len &&
		    !memcmp(ws->w[i].sm, sm, (size_t)len * sizeof *sm)) {
			ws->w[i].weight++;
			free(sm);
			return 0;
		}
	if (ws->n == ws->cap) {
		size_t nc = ws->cap ? 2 * ws->cap : 64;
		struct wave *nw = realloc(ws->w, nc * sizeof *nw);
		if (!nw) {
			free(sm);
			return CTA_ENOMEM;
		}
		ws->w = nw;
		ws->cap = nc;
	}
	ws->w[ws->n++] = (struct wave){grid, len, sm, 1};
	return 0;
}

/* Blocks of the waves (those with len in [min_len, max_len]) that m's rule
 * places where the hardware did; *total receives their number. */
static uint64_t score(const struct cta_device_model *m, const struct waves *ws, unsigned nsms,
                      unsigned *buf, unsigned min_len, unsigned max_len, uint64_t *total)
{
	uint64_t ok = 0, all = 0;
	for (size_t i = 0; i < ws->n; i++) {
		const struct wave *w = &ws->w[i];
		if (w->len < min_len || w->len > max_len)
			continue;
		unsigned len = 0;
		uint64_t same = 0;
		all += (uint64_t)w->len * w->weight;
		if (cta_device_sweep_order(m, nsms, w->grid, w->len, buf, &len))
			continue;
		for (unsigned b = 0; b < len && b < w->len; b++)
			same += buf[b] == w->sm[b];
		ok += same * w->weight;
	}
	if (total)
		*total = all;
	return ok;
}

int cta__analysis_fit_sweep(struct cta_device_model *m, const struct cta_trace *const *traces,
                            size_t n, const unsigned char *donly, uint64_t *placed, uint64_t *total)
{
	const unsigned nsms = m->sm_count;
	struct waves ws = {0};
	int rc = 0;
	*placed = *total = 0;
	for (size_t i = 0; i < n && !rc; i++)
		for (unsigned k = 0;
		     k < traces[i]->header.kernel_count && !(donly && donly[i]) && !rc; k++)
			rc = add_wave(&ws, traces[i], k, nsms, m->max_blocks_per_sm);
	unsigned longest = 1;
	for (size_t i = 0; i < ws.n; i++)
		if (ws.w[i].len > longest)
			longest = ws.w[i].len;
	unsigned *buf = malloc((size_t)longest * sizeof *buf);
	if (rc || !buf || !ws.n) {
		free(buf);
		waves_free(&ws);
		return rc ? rc : buf ? 0 : CTA_ENOMEM;
	}
	struct cta_device_model c = *m;
	c.placement = CTA_PLACE_SWEEP;
	if (!c.sweep_gap_first)
		c.sweep_gap_first = 3;
	if (!c.sweep_gap_later)
		c.sweep_gap_later = 6;
	/* 1. The SMs that go first: a prefix, in whole TPCs, of the longest
	 * wave of one block per SM, judged on waves of at most one pass. */
	const struct wave *one = NULL;
	for (size_t i = 0; i < ws.n; i++)
		if (ws.w[i].len == nsms && (!one || ws.w[i].grid < one->grid))
			one = &ws.w[i];
	if (one) {
		unsigned per = m->sms_per_tpc ? m->sms_per_tpc : 1, best_len = 0;
		uint64_t best = 0;
		for (unsigned len = 0; len <= CTA_DEVICE_MAX_SWEEP_FIRST && len <= nsms;
		     len += per) {
			c.sweep_first_len = len;
			for (unsigned j = 0; j < len; j++)
				c.sweep_first[j] = (uint16_t)one->sm[j];
			uint64_t s = score(&c, &ws, nsms, buf, 1, nsms, NULL);
			if (s > best || len == 0) {
				best = s;
				best_len = len;
			}
		}
		c.sweep_first_len = best_len;
		for (unsigned j = 0; j < best_len; j++)
			c.sweep_first[j] = (uint16_t)one->sm[j];
	}
	/* 2. The gaps between turns of the first SMs in waves of several
	 * passes, and 3. the launch before (docs/FIDELITY.md: the CUDA
	 * backend's record-slot clear), judged on every wave: how many grid
	 * blocks make one of its blocks (none, or 16 to 1024 by 16), below
	 * how many of them the turns come early and from how many the first
	 * SMs start at their second half, searched together (without waves
	 * where the start moves, only the two thresholds tell the unit).
	 * Each candidate replaces the base's values only where it places
	 * strictly more blocks. */
	struct cta_device_model b = c;
	for (int round = 0; round < 2; round++) {
		uint64_t best = score(&b, &ws, nsms, buf, nsms + 1, UINT32_MAX, NULL);
		for (unsigned g1 = 1; g1 <= 6; g1++)
			for (unsigned g2 = 1; g2 <= 8; g2++)
				for (unsigned sw = 0; sw <= 5; sw++) {
					c = b;
					c.sweep_gap_first = g1;
					c.sweep_gap_later = g2;
					c.sweep_gap_switch = sw;
					uint64_t s =
					    score(&c, &ws, nsms, buf, nsms + 1, UINT32_MAX, NULL);
					if (s > best) {
						best = s;
						b = c;
					}
				}
		best = score(&b, &ws, nsms, buf, 1, UINT32_MAX, NULL);
		c = b; /* only the three fields change: no model copied a try */
		for (unsigned u = 0; u <= 1024; u += 16)
			for (unsigned sp = 0; sp <= 4; sp++)
				for (unsigned rp = 0; rp <= 8; rp++) {
					c.sweep_prior_unit = u;
					c.sweep_small_prior = sp;
					c.sweep_rotate_prior = rp;
					uint64_t s = score(&c, &ws, nsms, buf, 1, UINT32_MAX, NULL);
					if (s > best) {
						best = s;
						b.sweep_prior_unit = u;
						b.sweep_small_prior = sp;
						b.sweep_rotate_prior = rp;
					}
				}
		/* From how many of its blocks the turns come late: never, or
		 * the lowest count that places the most. */
		c = b;
		for (unsigned lp = 0; lp <= 128; lp++) {
			c.sweep_late_prior = lp;
			uint64_t s = score(&c, &ws, nsms, buf, 1, UINT32_MAX, NULL);
			if (s > best) {
				best = s;
				b.sweep_late_prior = lp;
			}
		}
	}
	*placed = score(&b, &ws, nsms, buf, 1, UINT32_MAX, total);
	memcpy(m->sweep_first, b.sweep_first, sizeof(m->sweep_first));
	m->sweep_first_len = b.sweep_first_len;
	m->sweep_gap_first = b.sweep_gap_first;
	m->sweep_gap_later = b.sweep_gap_later;
	m->sweep_gap_switch = b.sweep_gap_switch;
	m->sweep_small_prior = b.sweep_small_prior;
	m->sweep_rotate_prior = b.sweep_rotate_prior;
	m->sweep_late_prior = b.sweep_late_prior;
	m->sweep_prior_unit = b.sweep_prior_unit;
	m->placement = CTA_PLACE_SWEEP;
	free(buf);
	waves_free(&ws);
	return 0;
}
