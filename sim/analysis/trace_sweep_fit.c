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
	/* Blocks placed right from each start tried since memo_reset (the
	 * searches over the launch before's parameters move only the start,
	 * from which the order is computed once). */
	struct {
		struct cta_sweep_start st;
		uint64_t same;
	} memo[16];
	unsigned nmemo;
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
	ws->w[ws->n++] =
	    (struct wave){.grid = grid, .len = len, .sm = sm, .weight = 1, .cluster = cluster};
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

static void memo_reset(struct waves *ws)
{
	for (size_t i = 0; i < ws->n; i++)
		ws->w[i].nmemo = 0;
}

/* score_of over the one-CTA waves for a search in which, since the last
 * memo_reset, only the fields that make a launch's start (cta_device_sweep
 * _start_clears: sweep_prior_unit, sweep_small_prior, sweep_rotate_prior,
 * sweep_late_prior) change: a wave's blocks placed right are computed
 * once per start it sees. The same figure as score_of. */
static uint64_t score_prior(const struct cta_device_model *m, struct waves *ws, unsigned nsms,
                            unsigned *buf)
{
	uint64_t ok = 0;
	for (size_t i = 0; i < ws->n; i++) {
		struct wave *w = &ws->w[i];
		if (w->cluster)
			continue;
		struct cta_sweep_start st;
		cta_device_sweep_start_clears(m, &w->grid, 1, &st);
		unsigned k = 0;
		while (k < w->nmemo && memcmp(&w->memo[k].st, &st, sizeof st))
			k++;
		uint64_t same = 0;
		if (k < w->nmemo) {
			same = w->memo[k].same;
		} else {
			unsigned len = 0;
			if (cta_device_sweep_order_at(m, nsms, &st, w->len, buf, &len))
				continue;
			for (unsigned b = 0; b < len && b < w->len; b++)
				same += buf[b] == w->sm[b];
			if (w->nmemo < sizeof(w->memo) / sizeof(w->memo[0])) {
				w->memo[w->nmemo].st = st;
				w->memo[w->nmemo++].same = same;
			}
		}
		ok += same * w->weight;
	}
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

/* Placement rule 8: one launch of a run of several, as the hardware
 * placed its first wave after the launch before it. */
struct seqw {
	unsigned *sm; /* first-wave SMs, block order */
	unsigned len;
	uint64_t grid;
	int cluster;
	int first;                 /* the run's first launch (after the record clears) */
	struct cta_sweep_start st; /* its start but the turns */
	unsigned longest;          /* the longest first wave before it */
	uint64_t score[4];         /* blocks placed right with turns 0-3 */
	uint64_t score_rot[CTA_DEVICE_MAX_SWEEP_FIRST]; /* clustered: by
	                                                 * first TPC */
};

struct seqs {
	struct seqw *w;
	size_t n, cap;
};

/* The launches of a run of several, in the order their first blocks
 * started, each placed after the one before had ended (concurrent
 * launches are left out): their first waves, the record clears of the run
 * (kernel id order, the launch order) and what each launch before left. */
static int add_seq(struct seqs *sq, const struct cta_trace *t, const struct cta_device_model *m,
                   unsigned nsms)
{
	unsigned nk = t->header.kernel_count;
	if (nk < 2)
		return 0;
	uint64_t fs[CTA_TRACE_MAX_KERNELS], fe[CTA_TRACE_MAX_KERNELS], le[CTA_TRACE_MAX_KERNELS],
	    grid[CTA_TRACE_MAX_KERNELS];
	unsigned ord[CTA_TRACE_MAX_KERNELS];
	for (unsigned k = 0; k < nk; k++) {
		const struct cta_trace_kernel *kd = &t->header.kernels[k];
		grid[k] = (uint64_t)kd->grid[0] * kd->grid[1] * kd->grid[2];
		fs[k] = fe[k] = UINT64_MAX;
		le[k] = 0;
		ord[k] = k;
	}
	for (size_t i = 0; i < t->count; i++) {
		const struct cta_trace_rec *r = &t->recs[i];
		if (r->kernel >= nk)
			continue;
		if (r->ev == CTA_TEV_START && r->t_ns < fs[r->kernel])
			fs[r->kernel] = r->t_ns;
		if (r->ev == CTA_TEV_END) {
			if (r->t_ns < fe[r->kernel])
				fe[r->kernel] = r->t_ns;
			if (r->t_ns > le[r->kernel])
				le[r->kernel] = r->t_ns;
		}
	}
	for (unsigned a = 1; a < nk; a++)
		for (unsigned b = a; b > 0 && fs[ord[b]] < fs[ord[b - 1]]; b--) {
			unsigned x = ord[b];
			ord[b] = ord[b - 1];
			ord[b - 1] = x;
		}
	struct cta_sweep_start clears;
	cta_device_sweep_start_clears(m, grid, nk, &clears);
	unsigned rot = 0, longest = 0, gpc = clears.gpc0;
	for (unsigned j = 0; j < nk; j++) {
		unsigned k = ord[j];
		if (fs[k] == UINT64_MAX)
			break;
		const struct cta_trace_kernel *kd = &t->header.kernels[k];
		int cluster = kd->cluster[0] * kd->cluster[1] * kd->cluster[2] > 1;
		unsigned cap = grid[k] < (uint64_t)nsms * 64 ? (unsigned)grid[k] : nsms * 64;
		unsigned *sm = malloc((size_t)(cap ? cap : 1) * sizeof *sm);
		if (!sm)
			return CTA_ENOMEM;
		for (unsigned b = 0; b < cap; b++)
			sm[b] = UINT32_MAX;
		/* Its first wave, and the SM of its last block placed outside
		 * the first SMs (blocks are placed in index order). */
		uint64_t lb = 0;
		unsigned last = UINT32_MAX;
		for (size_t i = 0; i < t->count; i++) {
			const struct cta_trace_rec *r = &t->recs[i];
			if (r->ev != CTA_TEV_START || r->sm >= nsms || r->kernel != k)
				continue;
			if (r->block < cap && r->t_ns < fe[k])
				sm[r->block] = (unsigned)r->sm;
			int first = 0;
			for (unsigned f = 0; f < m->sweep_first_len; f++)
				first |= m->sweep_first[f] == r->sm;
			if (!first && (last == UINT32_MAX || r->block >= lb)) {
				lb = r->block;
				last = (unsigned)r->sm;
			}
		}
		unsigned len = 0;
		while (len < cap && sm[len] != UINT32_MAX)
			len++;
		unsigned b0 = len ? sm[0] : UINT32_MAX;
		int alone = 1;
		for (unsigned q = 0; q < j; q++)
			alone &= le[ord[q]] <= fs[k];
		if (len && alone) {
			if (sq->n == sq->cap) {
				size_t nc = sq->cap ? 2 * sq->cap : 32;
				struct seqw *nw = realloc(sq->w, nc * sizeof *nw);
				if (!nw) {
					free(sm);
					return CTA_ENOMEM;
				}
				sq->w = nw;
				sq->cap = nc;
			}
			struct seqw *w = &sq->w[sq->n++];
			memset(w, 0, sizeof *w);
			w->sm = sm;
			w->len = len;
			w->grid = grid[k];
			w->cluster = cluster;
			w->first = j == 0;
			w->longest = longest;
			if (j == 0) {
				w->st = clears;
			} else {
				w->st.gpc0 = gpc;
				w->st.rot = rot;
			}
		} else {
			free(sm);
		}
		if (last != UINT32_MAX && m->gpc_count)
			gpc = (m->gpc_of_sm[last] + 1) % m->gpc_count;
		/* The half it started at, as recorded (its block 0's SM). */
		unsigned half = j ? rot : clears.rot;
		for (unsigned f = 0; f < m->sweep_first_len; f++)
			if (m->sweep_first[f] == b0)
				half = f >= m->sweep_first_len / 2;
		rot = grid[k] >= 2 ? half ^ 1 : half;
		if (len > longest)
			longest = len;
		if (!alone)
			break; /* what a concurrent launch left is not modelled */
	}
	return 0;
}

/* The turns (0-3) the longest first wave before a launch leaves, under
 * thresholds late <= mid <= steady (0: never). */
static unsigned carry_turns(unsigned longest, unsigned late, unsigned mid, unsigned steady)
{
	return steady && longest >= steady ? 3
	       : mid && longest >= mid     ? 2
	       : late && longest >= late   ? 1
	                                   : 0;
}

/* Placement rule 8's parameters: the thresholds of the turns a long first
 * wave leaves and the first TPC of a clustered launch after another
 * launch, searched for the values that place the most recorded first
 * waves of later launches (the lowest on ties); rule 8 is taken when it
 * places more of the runs' first waves than rule 5 alone does. */
static uint64_t placed_right(const struct cta_device_model *b, unsigned nsms, const struct seqw *w,
                             const struct cta_sweep_start *st, unsigned *buf)
{
	unsigned len = 0;
	uint64_t ok = 0;
	if (!(w->cluster ? cta_device_cluster_sweep_order_at(b, nsms, st, w->len, buf, &len)
	                 : cta_device_sweep_order_at(b, nsms, st, w->len, buf, &len)))
		for (unsigned k = 0; k < len && k < w->len; k++)
			ok += buf[k] == w->sm[k];
	return ok;
}

static void fit_carry(struct cta_device_model *b, struct seqs *sq, unsigned nsms, unsigned *buf)
{
	unsigned nft = 0;
	for (unsigned i = 0; i < b->sweep_first_len; i++)
		if (!i || b->tpc_of_sm[b->sweep_first[i]] != b->tpc_of_sm[b->sweep_first[i - 1]])
			nft++;
	if (nft > CTA_DEVICE_MAX_SWEEP_FIRST)
		nft = CTA_DEVICE_MAX_SWEEP_FIRST;
	/* Each launch scored once per setting it can see: the turns of a
	 * later one-CTA launch, the first TPC of a later clustered one; and
	 * under rule 5 alone, from its own clear. */
	uint64_t firsts = 0, rule5 = 0;
	unsigned cand[256], nc = 0;
	for (size_t i = 0; i < sq->n; i++) {
		struct seqw *w = &sq->w[i];
		struct cta_sweep_start o;
		cta_device_sweep_start_clears(b, &w->grid, 1, &o);
		rule5 += placed_right(b, nsms, w, &o, buf);
		if (w->first) {
			firsts += placed_right(b, nsms, w, &w->st, buf);
			continue;
		}
		for (unsigned t = 0; t < 4 && !w->cluster; t++) {
			o = w->st;
			o.late = t == 1;
			o.mid = t == 2;
			o.steady = t == 3;
			w->score[t] = placed_right(b, nsms, w, &o, buf);
		}
		for (unsigned r = 0; r < nft && w->cluster; r++) {
			o = w->st;
			o.cluster_rot = r;
			w->score_rot[r] = placed_right(b, nsms, w, &o, buf);
		}
		unsigned v = w->longest + 1, seen = 0;
		for (unsigned c = 0; c < nc; c++)
			seen |= cand[c] == v;
		if (!seen && nc < 256)
			cand[nc++] = v;
	}
	/* Without a later launch the traces say nothing of rule 8. */
	size_t later = 0;
	for (size_t q = 0; q < sq->n; q++)
		later += !sq->w[q].first;
	if (!later)
		return;
	/* Thresholds: one past a longest wave recorded, or never (index nc),
	 * in ascending order so that ties keep the lowest. */
	for (unsigned a = 1; a < nc; a++)
		for (unsigned c = a; c > 0 && cand[c] < cand[c - 1]; c--) {
			unsigned x = cand[c];
			cand[c] = cand[c - 1];
			cand[c - 1] = x;
		}
	uint64_t best = 0;
	unsigned bl = 0, bm = 0, bs = 0;
	for (unsigned i = 0; i <= nc; i++)
		for (unsigned j = i; j <= nc; j++)
			for (unsigned k = j; k <= nc; k++) {
				unsigned l = i < nc ? cand[i] : 0, mm = j < nc ? cand[j] : 0,
				         st = k < nc ? cand[k] : 0;
				uint64_t sc = 0;
				for (size_t q = 0; q < sq->n; q++) {
					const struct seqw *w = &sq->w[q];
					if (!w->first && !w->cluster)
						sc += w->score[carry_turns(w->longest, l, mm, st)];
				}
				if ((!i && !j && !k) || sc > best) {
					best = sc;
					bl = l;
					bm = mm;
					bs = st;
				}
			}
	/* The first TPC of a clustered launch, for each half the launch
	 * before left. */
	uint64_t bestc = 0;
	unsigned br[2] = {0, 0};
	for (unsigned h = 0; h < 2; h++) {
		uint64_t bh = 0;
		for (unsigned r = 0; r < nft; r++) {
			uint64_t sc = 0;
			for (size_t q = 0; q < sq->n; q++) {
				const struct seqw *w = &sq->w[q];
				if (!w->first && w->cluster && w->st.rot == h)
					sc += w->score_rot[r];
			}
			if (r == 0 || sc > bh) {
				bh = sc;
				br[h] = r;
			}
		}
		bestc += bh;
	}
	if (firsts + best + bestc <= rule5)
		return; /* the runs say nothing rule 5 does not */
	b->sweep_carry = 1;
	b->sweep_carry_late = bl;
	b->sweep_carry_mid = bm;
	b->sweep_carry_steady = bs;
	b->cluster_carry_rot = br[0];
	b->cluster_carry_rot_half = br[1];
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
		memo_reset(&ws);
		for (unsigned u = 0; u <= 1024; u += 16)
			for (unsigned sp = 0; sp <= 4; sp++)
				for (unsigned rp = 0; rp <= 8; rp++) {
					c.sweep_prior_unit = u;
					c.sweep_small_prior = sp;
					c.sweep_rotate_prior = rp;
					uint64_t s = score_prior(&c, &ws, nsms, buf);
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
			uint64_t s = score_prior(&c, &ws, nsms, buf);
			if (s > best) {
				best = s;
				b.sweep_late_prior = lp;
			}
		}
	}
	fit_cluster_prior(&b, &ws, nsms, buf);
	/* Rule 8 from runs of several launches, where the traces have any. */
	struct seqs sq = {0};
	for (size_t i = 0; i < n && !rc; i++)
		if (!(donly && donly[i]))
			rc = add_seq(&sq, traces[i], &b, nsms);
	unsigned *sbuf = NULL;
	if (!rc && sq.n) {
		unsigned most = 0;
		for (size_t i = 0; i < sq.n; i++)
			if (sq.w[i].len > most)
				most = sq.w[i].len;
		sbuf = malloc((size_t)most * sizeof *sbuf);
		if (sbuf)
			fit_carry(&b, &sq, nsms, sbuf);
		else
			rc = CTA_ENOMEM;
	}
	free(sbuf);
	for (size_t i = 0; i < sq.n; i++)
		free(sq.w[i].sm);
	free(sq.w);
	if (rc) {
		free(buf);
		waves_free(&ws);
		return rc;
	}
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
	m->sweep_carry = b.sweep_carry;
	m->sweep_carry_late = b.sweep_carry_late;
	m->sweep_carry_mid = b.sweep_carry_mid;
	m->sweep_carry_steady = b.sweep_carry_steady;
	m->cluster_carry_rot = b.cluster_carry_rot;
	m->cluster_carry_rot_half = b.cluster_carry_rot_half;
	m->cluster_prior_len = b.cluster_prior_len;
	memcpy(m->cluster_prior_rot, b.cluster_prior_rot, sizeof(m->cluster_prior_rot));
	m->placement = CTA_PLACE_SWEEP;
	free(buf);
	waves_free(&ws);
	return 0;
}
