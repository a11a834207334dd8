/* Calibration of the sweep rule (placement = sweep): the first waves of
 * single-kernel launches on an idle device, and a search for the sweep_*
 * parameters under which cta_device_sweep_order places most of their
 * blocks on the SM the hardware used (clustered launches:
 * cta_device_cluster_sweep_order and cluster_prior_rot). The topology (TPCs, GPCs) is the base
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
	int cluster;     /* a clustered launch's */
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
	int cluster = kd->cluster[0] * kd->cluster[1] * kd->cluster[2] > 1;
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
		if (ws->w[i].grid == grid && ws->w[i].len == len && ws->w[i].cluster == cluster &&
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
	ws->w[ws->n++] = (struct wave){grid, len, sm, 1, cluster};
	return 0;
}

/* Blocks of the waves (those with len in [min_len, max_len]; of clustered
 * launches when `cluster` is 1, of the others when 0, both when 2) that
 * m's rule places where the hardware did; *total receives their number. */
static uint64_t score_of(const struct cta_device_model *m, const struct waves *ws, unsigned nsms,
                         unsigned *buf, unsigned min_len, unsigned max_len, int cluster,
                         uint64_t *total)
{
	uint64_t ok = 0, all = 0;
	for (size_t i = 0; i < ws->n; i++) {
		const struct wave *w = &ws->w[i];
		if (w->len < min_len || w->len > max_len || (cluster < 2 && w->cluster != cluster))
			continue;
		unsigned len = 0;
		uint64_t same = 0;
		all += (uint64_t)w->len * w->weight;
		if (w->cluster ? cta_device_cluster_sweep_order(m, nsms, w->grid, w->len, buf, &len)
		               : cta_device_sweep_order(m, nsms, w->grid, w->len, buf, &len))
			continue;
		for (unsigned b = 0; b < len && b < w->len; b++)
			same += buf[b] == w->sm[b];
		ok += same * w->weight;
	}
	if (total)
		*total = all;
	return ok;
}

static uint64_t score(const struct cta_device_model *m, const struct waves *ws, unsigned nsms,
                      unsigned *buf, unsigned min_len, unsigned max_len, uint64_t *total)
{
	return score_of(m, ws, nsms, buf, min_len, max_len, 0, total);
}

/* cluster_prior_rot: for each size M of the launch before that clustered
 * waves were recorded after, the turn of the first TPCs at which they
 * start that places the most of their blocks (the first where none does
 * better); none where no wave says (an idle dispatcher's start). */
static void fit_cluster_prior(struct cta_device_model *b, const struct waves *ws, unsigned nsms,
                              unsigned *buf)
{
	unsigned nft = 0;
	for (unsigned i = 0; i < b->sweep_first_len; i++)
		if (!i || b->tpc_of_sm[b->sweep_first[i]] != b->tpc_of_sm[b->sweep_first[i - 1]])
			nft++;
	b->cluster_prior_len = 0;
	memset(b->cluster_prior_rot, 0, sizeof(b->cluster_prior_rot));
	if (!b->sweep_prior_unit || !nft)
		return;
	struct waves one = {0};
	for (unsigned m = 1; m <= CTA_DEVICE_MAX_CLUSTER_PRIOR; m++) {
		one.n = 0;
		for (size_t i = 0; i < ws->n; i++)
			if (ws->w[i].cluster && ws->w[i].grid / b->sweep_prior_unit == m) {
				if (one.n == one.cap) {
					size_t nc = one.cap ? 2 * one.cap : 16;
					struct wave *nw = realloc(one.w, nc * sizeof *nw);
					if (!nw)
						break;
					one.w = nw;
					one.cap = nc;
				}
				one.w[one.n++] = ws->w[i];
			}
		if (!one.n)
			continue;
		struct cta_device_model c = *b;
		c.cluster_prior_len = m;
		uint64_t best = 0;
		unsigned best_r = 0;
		for (unsigned r = 0; r < nft; r++) {
			c.cluster_prior_rot[m - 1] = (uint16_t)r;
			uint64_t sc = score_of(&c, &one, nsms, buf, 1, UINT32_MAX, 1, NULL);
			if (r == 0 || sc > best) {
				best = sc;
				best_r = r;
			}
		}
		b->cluster_prior_rot[m - 1] = (uint16_t)best_r;
		if (best_r)
			b->cluster_prior_len = m;
	}
	free(one.w);
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
		if (ws.w[i].len == nsms && !ws.w[i].cluster && (!one || ws.w[i].grid < one->grid))
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
	fit_cluster_prior(&b, &ws, nsms, buf);
	*placed = score_of(&b, &ws, nsms, buf, 1, UINT32_MAX, 2, total);
	memcpy(m->sweep_first, b.sweep_first, sizeof(m->sweep_first));
	m->sweep_first_len = b.sweep_first_len;
	m->sweep_gap_first = b.sweep_gap_first;
	m->sweep_gap_later = b.sweep_gap_later;
	m->sweep_gap_switch = b.sweep_gap_switch;
	m->sweep_small_prior = b.sweep_small_prior;
	m->sweep_rotate_prior = b.sweep_rotate_prior;
	m->sweep_late_prior = b.sweep_late_prior;
	m->sweep_prior_unit = b.sweep_prior_unit;
	m->cluster_prior_len = b.cluster_prior_len;
	memcpy(m->cluster_prior_rot, b.cluster_prior_rot, sizeof(m->cluster_prior_rot));
	m->placement = CTA_PLACE_SWEEP;
	free(buf);
	waves_free(&ws);
	return 0;
}
