/* Calibration: fits the placement order and the scheduler latencies of a
 * device model to hardware traces. Every estimator is a median or an
 * average over many blocks, so a few disturbed samples (a block delayed by
 * the host, a clock step) do not move the result; docs/TOOLS.md lists them. */
#include <assert.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"
#include "ctasim/tools.h"

struct samples {
	uint64_t *v;
	size_t n, cap;
};

static int push(struct samples *s, uint64_t x)
{
	if (s->n == s->cap) {
		size_t nc = s->cap ? s->cap * 2 : 64;
		uint64_t *nv = realloc(s->v, nc * sizeof(*nv));
		if (!nv)
			return CTA_ENOMEM;
		s->v = nv;
		s->cap = nc;
	}
	s->v[s->n++] = x;
	return 0;
}

static int cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
	return a < b ? -1 : a > b;
}

/* The lower median: a value that was actually observed. */
static uint64_t median(struct samples *s)
{
	qsort(s->v, s->n, sizeof(*s->v), cmp_u64);
	return s->v[(s->n - 1) / 2];
}

/* A kernel saw an idle device when no other kernel was still running at
 * its first start; only such kernels show the placement order. */
static int on_idle_device(const struct cta__kfacts *kf, unsigned nk, unsigned k)
{
	if (!kf[k].has_start)
		return 0;
	for (unsigned j = 0; j < nk; j++) {
		if (j == k || !kf[j].has_start)
			continue;
		if (kf[j].first_start <= kf[k].first_start &&
		    (!kf[j].has_end || kf[j].last_end > kf[k].first_start))
			return 0;
	}
	return 1;
}

struct fit {
	double *pos_sum; /* per SM: sum of first-appearance positions */
	unsigned observations;
	/* A kernel filled the GPU: it stacked a second block on an SM in its
	 * first wave, or had blocks wait for room. Under the spread-first
	 * placement hardware uses, every SM then ran a block, so the SMs seen
	 * are all the GPU has. */
	int filled;
	struct samples launch, dispatch, block_start, retire, cancel;
	struct samples launch_gap; /* first start to first start, two streams */
	/* The largest first wave: its start spread and its size - 1. */
	uint64_t wave_spread, wave_gaps;
	struct samples spin[CTA_DEVICE_MAX_RESIDENT + 1]; /* block durations by resident count */
	struct samples spin_len[CTA_DEVICE_MAX_RESIDENT + 1]; /* the time each asked for */
	/* First-wave blocks of known work (cta_calib_opts.work) with two or
	 * more calls: duration, requested ns, calls, index. */
	struct samples call_d, call_ns, call_n, call_r, call_tb, call_u;
	/* First-wave blocks of one call: duration, requested ns, the blocks
	 * resident before them (itself included) and their threads; sorted
	 * into spin / spin_len once the issue gate is fitted (fit_gate). */
	struct samples one_d, one_ns, one_res, one_tb;
	/* Per SM of each single-kernel trace of known one-call work: its
	 * first wave's blocks, how many of them ran at once (GATE_FAST_NS)
	 * and the threads of each. */
	struct samples wave_n, wave_fast, wave_thr;
	/* Emulated CLC (#clc emulated): cancel to cancel_done of failed and
	 * of successful requests, and the time from a successful request to
	 * the block's next one with the ns its loop asked for in between. */
	struct samples clc_fail, clc_succ;
	/* ... and the claim queue (uncontended claims, turns of a word), the
	 * issuer's time after a completion, and from a known loop's success
	 * to its next request and from its last failure to the block's end. */
	struct samples clc_solo, clc_turn, clc_tail, clc_post, clc_exit;
	/* ... beside each clc_post kernel, its block's threads; and the
	 * clustered kernels' (time, ns, threads; push3), whose iteration
	 * crosses a cluster barrier where the others cross a block barrier
	 * (cluster_barrier_ns). */
	struct samples clc_post_threads, clc_post_cluster;
	/* ... and beside each clc_post kernel, its cta_calib_opts.clc_stream
	 * (0: its body stores nothing to global memory; such loops fit
	 * clc_steal_ns, the others clc_drain_ns; 2: its post enters nothing
	 * else). */
	struct samples clc_post_stream;
	/* ... and per storing loop (clc_stream), its blocks' first success
	 * to the next request less the same over all of its successes
	 * (medians): one vote for clc_drain_first_ns. */
	struct samples clc_drain_first;
	struct samples clc_fail_kernel; /* per kernel: its median failure */
	/* Per clustered kernel: its median failure on the near GPCs' scale,
	 * its requesters (clusters resident) and its CTAs a cluster, three
	 * values a kernel (clc_multicast_ns). */
	struct samples clc_multicast;
	/* ... and beside each, the kernel's requesters: its units resident at
	 * once (clc_units_resident). */
	struct samples clc_fail_units;
	/* ... and beside each clc_exit kernel, its requesters
	 * (clc_crowd_tail_ppm). */
	struct samples clc_exit_units;
	/* Per kernel with failures on two GPCs or more: its far GPCs' median
	 * failure / its near GPCs' (ppm), and per GPC how many kernels found
	 * it far (clc_far_kernel). */
	struct samples clc_far;
	unsigned clc_far_votes[32];
	/* Per kernel with late first-wave blocks on full SMs: their median
	 * lateness, in ppm of the loop's call (clc_late_samples). */
	struct samples clc_late;
	/* Per kernel without clusters whose first wave's first requests
	 * failed in a burst that the emulation's context took one at a time
	 * (clc_burst): its completions' spacing (ps, clc_sector_ps), and
	 * (three values a kernel) its first completion after its first start,
	 * its requests, and its first completion after its first issue
	 * (clc_entry_ps). */
	struct samples clc_sector, clc_entry;
	int clc_emulated;
	/* The register file's gate (fit_regs_gate): later-wave blocks of
	 * register-limited kernels that found running blocks on their SM, by
	 * the warps' registers a sub-partition would have left free with
	 * them (REGS_LEVELS at most), and how many of those waited. */
	uint64_t regs_n[16], regs_waited[16];
	/* ... the same by the kernel's blocks an SM (fit_regs_pass; REGS_OCC
	 * and more counted at REGS_OCC - 1). */
	uint64_t regs_occ_n[33][16], regs_occ_waited[33][16];
	int regs_seen;
	/* ... and per such block (fit_regs_wait) its level, the time from
	 * its start to the first end of those running blocks and how long
	 * it waited (outlasted its time), three values a block. */
	struct samples regs_wait;
	/* The end hold (fit_regs_hold): first-wave blocks with blocks of a
	 * lower index on their SM that asked for more than GATE_FAST_NS
	 * longer, by the most warps those put on one of their
	 * sub-partitions, and how many of those ended with them. */
	uint64_t hold_n[16], hold_held[16];
	/* The sub-partitions by placement order (fit_regs_order): blocks of
	 * register-limited kernels whose warps do not fill the four
	 * sub-partitions alike, started on an SM, and of them those whose
	 * sub-partitions would then hold more warps than a quarter's
	 * registers allow with the blocks' warps taken in their SM's start
	 * order, and with them taken by block index instead. */
	uint64_t order_n, order_over, order_over_index;
};
#define REGS_LEVELS 16
#define REGS_OCC    33

/* Kernel k's starts on a known SM before its first end, keyed (0, 0). */
struct wave_sel {
	const struct cta__kfacts *f;
	unsigned k;
};

static int wave_start(const struct cta_trace_rec *r, void *ctx, struct cta__rec_key *key)
{
	const struct wave_sel *sel = ctx;
	(void)key;
	return r->kernel == sel->k && r->ev == CTA_TEV_START && r->sm != CTA_TRACE_NONE &&
	       (!sel->f->has_end || r->t_ns < sel->f->first_end);
}

/* First wave of kernel k: its starts before its first end, in time order.
 * Adds each SM's first-appearance position, and one dispatch-interval
 * sample: the first wave's spread over its size. */
static int first_wave(struct fit *fit, const struct cta_trace *t, const struct cta__kfacts *f,
                      unsigned k, unsigned sm_count, uint8_t *seen)
{
	struct cta__rec_key *ks;
	size_t n;
	struct wave_sel sel = {f, k};
	if (cta__analysis_rec_keys(&ks, &n, t, wave_start, &sel)) /* by time, then file order */
		return CTA_ENOMEM;
	int rc = 0;
	if (n >= 2) {
		rc = push(&fit->dispatch, (ks[n - 1].t - ks[0].t) / (n - 1));
		/* Its spread without the last 5% of its starts: on an H100 a
		 * wave of 32 64-thread blocks per SM starts all but 69 of its
		 * 4224 blocks within 1 us and those up to 15 us later, a tail
		 * that a per-block dispatch cost would spread over every
		 * block of every wave. */
		size_t m = n - n / 20;
		if (m - 1 > fit->wave_gaps) {
			fit->wave_spread = ks[m - 1].t - ks[0].t;
			fit->wave_gaps = m - 1;
		}
	}
	memset(seen, 0, sm_count);
	unsigned pos = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t sm = t->recs[ks[i].seq].sm;
		if (seen[sm]) {
			fit->filled = 1;
			continue;
		}
		seen[sm] = 1;
		fit->pos_sum[sm] += pos++;
	}
	/* SMs the kernel never reached rank after every one it did. */
	for (unsigned s = 0; s < sm_count; s++)
		if (!seen[s])
			fit->pos_sum[s] += sm_count;
	fit->observations++;
	free(ks);
	return rc;
}

/* Records of the two kinds evs[0], evs[1] on a known physical block, keyed
 * (kernel, phys). */
static int by_phys(const struct cta_trace_rec *r, void *ctx, struct cta__rec_key *k)
{
	const cta_trace_event *evs = ctx;
	if ((r->ev != evs[0] && r->ev != evs[1]) || r->phys == CTA_TRACE_NONE)
		return 0;
	k->a = r->kernel;
	k->b = r->phys;
	return 1;
}

/* Pairs events of one kind with the next event of another on the same key:
 * dispatch->start and cancel->cancel_done by (kernel, phys). */
static int pair_latency(struct samples *out, const struct cta_trace *t, cta_trace_event from,
                        cta_trace_event to)
{
	struct cta__rec_key *ks;
	size_t n;
	cta_trace_event evs[2] = {from, to};
	if (cta__analysis_rec_keys(&ks, &n, t, by_phys, evs))
		return CTA_ENOMEM;
	int rc = 0;
	for (size_t i = 0; i + 1 < n && !rc; i++) {
		const struct cta__rec_key *x = &ks[i], *y = &ks[i + 1];
		if (x->a == y->a && x->b == y->b && t->recs[x->seq].ev == from &&
		    t->recs[y->seq].ev == to) {
			rc = push(out, y->t - x->t);
			i++;
		}
	}
	free(ks);
	return rc;
}

/* Emulated CLC: per physical block, its records in time order. Each
 * request is paired with the next cancel_done: failures give the request's
 * own cost; a success is also kept with its claim-bitmap word (for the
 * claim queue, clc_claims). A request issued straight after the block's
 * previous one completed (no steal decoded between, as in the guide's two
 * requests) gives the issuer's time after a completion; where the loop's
 * work per iteration is known (iter_ns: one cta_spin_ns call of that many
 * ns), the time from a success's completion to the next request and from
 * the last, failed one's to the block's end are kept with it. */
struct clc_claim_rec {
	uint64_t word, issue, done;
	double scale; /* 1, or 1 / the kernel's far ratio for a far GPC's claim */
};

static int clc_keep(const struct cta_trace_rec *r, void *ctx, struct cta__rec_key *k)
{
	(void)ctx;
	if (r->phys == CTA_TRACE_NONE || (r->ev != CTA_TEV_CANCEL && r->ev != CTA_TEV_CANCEL_DONE &&
	                                  r->ev != CTA_TEV_STEAL && r->ev != CTA_TEV_END))
		return 0;
	k->a = r->kernel;
	k->b = r->phys;
	return 1;
}

/* The claim-bitmap word of the unit whose first block is `first` (linear,
 * x fastest): units are clusters (or blocks) numbered x fastest, 16 to a
 * word (include/ctasim/sys/kernel_cuda.h). */
static uint64_t claim_word(const struct cta_trace_kernel *kh, uint64_t first)
{
	uint64_t g[3], c[3], u[3], i[3];
	for (int d = 0; d < 3; d++) {
		g[d] = kh->grid[d] ? kh->grid[d] : 1;
		c[d] = kh->cluster[d] ? kh->cluster[d] : 1;
		u[d] = (g[d] + c[d] - 1) / c[d];
	}
	i[0] = first % g[0];
	i[1] = first / g[0] % g[1];
	i[2] = first / g[0] / g[1];
	return (i[0] / c[0] + u[0] * (i[1] / c[1] + u[1] * (i[2] / c[2]))) / 16;
}

static int cmp_claim(const void *pa, const void *pb)
{
	const struct clc_claim_rec *a = pa, *b = pb;
	if (a->word != b->word)
		return a->word < b->word ? -1 : 1;
	return a->done < b->done ? -1 : a->done > b->done;
}

/* A sample of a loop of known work: the time and the loop's ns, side by
 * side (even index, odd index). */
static int push2(struct samples *s, uint64_t v, uint64_t ns)
{
	int rc = push(s, v);
	return rc ? rc : push(s, ns);
}

/* The median of a push2 list's times, each less the loop's one call
 * (ns x f + add) and `less`. */
static double median_less_call_of(const struct samples *s, const struct samples *flags, int stream,
                                  double f, double add, double less)
{
	struct samples r = {0};
	for (size_t i = 0; i + 1 < s->n; i += 2) {
		/* (flags: only the kernels that store, or not, as stream.) */
		if (flags && (i / 2 >= flags->n || (flags->v[i / 2] != 0) != stream))
			continue;
		double v = (double)s->v[i] - (double)s->v[i + 1] * f - add - less;
		if (push(&r, v > 0 ? (uint64_t)v : 0))
			break;
	}
	double m = r.n ? (double)median(&r) : 0;
	free(r.v);
	return m;
}

static double median_less_call(const struct samples *s, double f, double add, double less)
{
	return median_less_call_of(s, NULL, 0, f, add, less);
}

/* One kernel's requests: the claim queue of its successes (on each word,
 * in completion order, a claim issued before the previous one completed
 * waited for it: the gap between the two completions is one turn of the
 * word's compare-and-swap; one issued after it did not: its time, less the
 * kernel's median failure and the loop's work, is the uncontended claim),
 * and the median of its failures. */
static int clc_kernel(struct fit *fit, struct clc_claim_rec *c, size_t n, struct samples *fails,
                      int known, uint64_t iter_ns, uint64_t units, int burst)
{
	int rc = 0;
	uint64_t fail = 0;
	if (fails->n) {
		fail = median(fails);
		/* (A burst's failures waited in the context's queue, which
		 * clc_sector_ps and clc_entry_ps give: not the crowd's vote.) */
		if (!burst)
			rc = push(&fit->clc_fail_kernel, fail);
		if (!rc && !burst)
			rc = push(&fit->clc_fail_units, units);
	}
	struct samples solo = {0};
	qsort(c, n, sizeof(*c), cmp_claim);
	for (size_t i = 0; i < n && !rc; i++) {
		if (i && c[i - 1].word == c[i].word && c[i].issue < c[i - 1].done)
			rc = push(
			    &fit->clc_turn,
			    (uint64_t)((double)(c[i].done - c[i - 1].done) * c[i].scale + 0.5));
		else if (known && fails->n &&
		         (double)(c[i].done - c[i].issue) * c[i].scale > (double)fail)
			rc = push(&solo, (uint64_t)((double)(c[i].done - c[i].issue) * c[i].scale -
			                            (double)fail + 0.5));
	}
	if (!rc && solo.n)
		rc = push2(&fit->clc_solo, median(&solo), iter_ns);
	free(solo.v);
	fails->n = 0;
	return rc;
}

/* The requesters of kernel `kernel` of trace t (clc_crowd_units): its
 * units (blocks, or clusters of kh's shape) that started before the first
 * of its blocks ended, the first wave, which is what is resident when its
 * blocks request. */
static uint64_t clc_units_resident(const struct cta_trace *t, uint32_t kernel,
                                   const struct cta_trace_kernel *kh)
{
	uint64_t first_end = UINT64_MAX, n = 0;
	for (size_t i = 0; i < t->count; i++) {
		const struct cta_trace_rec *r = &t->recs[i];
		if (r->kernel == kernel && r->ev == CTA_TEV_END && r->t_ns < first_end)
			first_end = r->t_ns;
	}
	for (size_t i = 0; i < t->count; i++) {
		const struct cta_trace_rec *r = &t->recs[i];
		if (r->kernel == kernel && r->ev == CTA_TEV_START && r->t_ns < first_end)
			n++;
	}
	uint64_t csize = 1;
	for (int d = 0; kh && d < 3; d++)
		csize *= kh->cluster[d] ? kh->cluster[d] : 1;
	return n / csize;
}

/* The GPC of SM sm under the base model, or -1. */
/* Emulated CLC, kernel `kernel` of trace t, without clusters: its first
 * wave's blocks (started before its first end) and the first request of
 * each, issued at its start. Where nine in ten of those requests failed,
 * 64 or more of them, and their completions (10th to 90th percentile) are
 * spread more than twice as wide as their issues, the emulation's context
 * took them one at a time: the spread over the requests between the two
 * percentiles is a vote for clc_sector_ps, and the kernel's first
 * completion after its first start, its requests and its first completion
 * after its first issue a point for clc_entry_ps (fit_clc). *burst says
 * so (its failures then stay out of the crowd's vote). */
static int clc_burst(struct fit *fit, const struct cta_trace *t, uint32_t kernel, int *burst)
{
	*burst = 0;
	uint64_t first_end = UINT64_MAX, first_start = UINT64_MAX, nphys = 0;
	for (size_t i = 0; i < t->count; i++) {
		const struct cta_trace_rec *r = &t->recs[i];
		if (r->kernel != kernel || r->phys == CTA_TRACE_NONE)
			continue;
		if (r->ev == CTA_TEV_END && r->t_ns < first_end)
			first_end = r->t_ns;
		if (r->ev == CTA_TEV_START && r->t_ns < first_start)
			first_start = r->t_ns;
		if (r->phys + 1 > nphys)
			nphys = r->phys + 1;
	}
	if (!nphys || nphys > (1u << 24))
		return 0;
	/* Per physical block: started in the first wave, its first issue and
	 * its first completion (+1; 0: none), whether that one failed. */
	uint64_t *iss = calloc(nphys * 3, sizeof(*iss));
	unsigned char *st = calloc(nphys, 2);
	if (!iss || !st) {
		free(iss);
		free(st);
		return CTA_ENOMEM;
	}
	uint64_t *dn = iss + nphys, *sorted = iss + 2 * nphys;
	for (size_t i = 0; i < t->count; i++) {
		const struct cta_trace_rec *r = &t->recs[i];
		if (r->kernel != kernel || r->phys == CTA_TRACE_NONE)
			continue;
		uint64_t p = r->phys;
		if (r->ev == CTA_TEV_START && r->t_ns < first_end)
			st[p] = 1;
		else if (r->ev == CTA_TEV_CANCEL && (!iss[p] || r->t_ns + 1 < iss[p]))
			iss[p] = r->t_ns + 1;
		else if (r->ev == CTA_TEV_CANCEL_DONE && (!dn[p] || r->t_ns + 1 < dn[p])) {
			dn[p] = r->t_ns + 1;
			st[nphys + p] = r->code != CTA_CANCEL_SUCCESS;
		}
	}
	size_t n = 0, nfail = 0;
	for (uint64_t p = 0; p < nphys; p++)
		if (st[p] && iss[p] && dn[p] >= iss[p]) {
			iss[n] = iss[p] - 1; /* (n <= p: compacted in place) */
			sorted[n] = dn[p] - 1;
			nfail += st[nphys + p];
			n++;
		}
	int rc = 0;
	if (n >= 64 && nfail * 10 >= n * 9) {
		qsort(iss, n, sizeof(*iss), cmp_u64);
		qsort(sorted, n, sizeof(*sorted), cmp_u64);
		size_t a = n / 10, b = n * 9 / 10;
		uint64_t ri = iss[b] - iss[a], rd = sorted[b] - sorted[a];
		if (rd > 2 * ri && b > a) {
			*burst = 1;
			rc = push(&fit->clc_sector,
			          (uint64_t)((double)rd * 1000 / (double)(b - a) + 0.5));
			if (!rc)
				rc = push(&fit->clc_entry, sorted[0] - first_start);
			if (!rc)
				rc = push(&fit->clc_entry, n);
			if (!rc)
				rc = push(&fit->clc_entry, sorted[0] - iss[0]);
		}
	}
	free(iss);
	free(st);
	return rc;
}

static int gpc_of(const struct cta_device_model *base, uint64_t sm)
{
	if (sm == CTA_TRACE_NONE || sm >= base->sm_count || base->gpc_of_sm[sm] >= 32)
		return -1;
	return base->gpc_of_sm[sm];
}

/* The far GPCs of one kernel's emulated atomics (clc_far_gpcs): its
 * failures (cancel to cancel_done, nothing claimed) grouped by the GPC of
 * the issuing block; the upper half of the GPCs by median failure are its
 * far ones (far[g] = 1), and *ratio is the median failure of their blocks
 * over that of the others'. The records are ks[i0..i1), one kernel's,
 * grouped by block. *ratio = 1 and no far GPC with failures on fewer than
 * two GPCs. */
static int clc_far_kernel(const struct cta_trace *t, const struct cta__rec_key *ks, size_t i0,
                          size_t i1, const struct cta_device_model *base, unsigned char *far,
                          double *ratio)
{
	struct samples by[32] = {{0}}, lo = {0}, hi = {0};
	uint64_t med[32];
	int rc = 0, gs[32], ng = 0;
	memset(far, 0, 32);
	*ratio = 1;
	uint64_t issue = 0;
	int open = 0;
	for (size_t k = i0; k < i1 && !rc; k++) {
		const struct cta_trace_rec *r = &t->recs[ks[k].seq];
		if (k > i0 && ks[k].b != ks[k - 1].b)
			open = 0;
		if (r->ev == CTA_TEV_CANCEL) {
			issue = r->t_ns;
			open = 1;
		} else if (r->ev == CTA_TEV_CANCEL_DONE && open && r->t_ns >= issue) {
			open = 0;
			int g = gpc_of(base, r->sm);
			if (g >= 0 && r->code != CTA_CANCEL_SUCCESS)
				rc = push(&by[g], r->t_ns - issue);
		}
	}
	for (int g = 0; g < 32 && !rc; g++)
		if (by[g].n) {
			med[g] = median(&by[g]);
			gs[ng++] = g;
		}
	if (!rc && ng >= 2) {
		/* GPCs by median failure, the slowest last (insertion sort: 32 at most). */
		for (int a = 1; a < ng; a++)
			for (int b = a; b > 0 && med[gs[b - 1]] > med[gs[b]]; b--) {
				int x = gs[b];
				gs[b] = gs[b - 1];
				gs[b - 1] = x;
			}
		for (int a = 0; a < ng && !rc; a++) {
			struct samples *d = a >= ng - ng / 2 ? &hi : &lo;
			if (a >= ng - ng / 2)
				far[gs[a]] = 1;
			for (size_t v = 0; v < by[gs[a]].n && !rc; v++)
				rc = push(d, by[gs[a]].v[v]);
		}
		if (!rc && lo.n && hi.n) {
			uint64_t l = median(&lo), h = median(&hi);
			if (l)
				*ratio = (double)h / (double)l;
		}
	}
	for (int g = 0; g < 32; g++)
		free(by[g].v);
	free(lo.v);
	free(hi.v);
	return rc;
}

/* A sample of a far GPC's block brought to the near GPCs' scale: the part
 * beyond the loop's work (ns) divided by the kernel's ratio. */
static uint64_t near_scale(uint64_t v, uint64_t ns, double scale)
{
	if (scale == 1 || v <= ns)
		return v;
	return ns + (uint64_t)((double)(v - ns) * scale + 0.5);
}

/* The threads of a block of kernel kh (0: not known). */
static uint64_t block_threads(const struct cta_trace_kernel *kh)
{
	uint64_t n = 1;
	for (int d = 0; kh && d < 3; d++)
		n *= kh->block[d] ? kh->block[d] : 1;
	return kh ? n : 0;
}

/* The CTAs of kernel kh's clusters (1 without clusters). */
static uint64_t cluster_ctas(const struct cta_trace_kernel *kh)
{
	uint64_t c = 1;
	for (int d = 0; kh && d < 3; d++)
		c *= kh->cluster[d] ? kh->cluster[d] : 1;
	return c;
}

/* Whether kernel kh launches clusters of two CTAs or more. */
static int clustered(const struct cta_trace_kernel *kh)
{
	return cluster_ctas(kh) > 1;
}

/* One clustered launch's blocks on an SM at once: +1 at a start, -1 at an
 * end (ends first at one instant). */
struct occ_ev {
	uint64_t t;
	int d;
	unsigned sm;
};

static int cmp_occ(const void *pa, const void *pb)
{
	const struct occ_ev *a = pa, *b = pb;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	return a->d - b->d;
}

/* cluster_max_blocks_per_sm: the most blocks of a clustered launch that
 * were on one SM at once, where that is fewer than its threads, warps and
 * the SM's block limit allow and its grid had more blocks than that many
 * on every SM (the only kernel of its run). The largest such count over
 * the launches; the base's where none ran below its occupancy. */
static int fit_cluster_slots(struct cta_device_model *out, const struct cta_trace *const *traces,
                             size_t n, unsigned nsm)
{
	unsigned best = 0;
	int seen = 0;
	unsigned *cur = calloc(nsm ? nsm : 1, sizeof *cur);
	if (!cur)
		return CTA_ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct cta_trace *t = traces[i];
		if (t->header.kernel_count != 1 || !clustered(&t->header.kernels[0]))
			continue;
		const struct cta_trace_kernel *kh = &t->header.kernels[0];
		/* A model without a warp size (a fuzzed or partial base) has no
		 * warp limit to apply. */
		uint64_t thr = block_threads(kh),
		         warps = out->warp_size ? (thr + out->warp_size - 1) / out->warp_size : 0;
		uint64_t allow = out->max_blocks_per_sm;
		if (thr && out->max_threads_per_sm / thr < allow)
			allow = out->max_threads_per_sm / thr;
		if (warps && out->max_warps_per_sm / warps < allow)
			allow = out->max_warps_per_sm / warps;
		size_t ne = 0;
		for (size_t r = 0; r < t->count; r++)
			ne += t->recs[r].ev == CTA_TEV_START || t->recs[r].ev == CTA_TEV_END;
		struct occ_ev *ev = malloc((ne ? ne : 1) * sizeof *ev);
		if (!ev) {
			free(cur);
			return CTA_ENOMEM;
		}
		ne = 0;
		for (size_t r = 0; r < t->count; r++) {
			const struct cta_trace_rec *x = &t->recs[r];
			if ((x->ev == CTA_TEV_START || x->ev == CTA_TEV_END) && x->sm < nsm)
				ev[ne++] = (struct occ_ev){x->t_ns, x->ev == CTA_TEV_START ? 1 : -1,
				                           (unsigned)x->sm};
		}
		qsort(ev, ne, sizeof *ev, cmp_occ);
		memset(cur, 0, nsm * sizeof *cur);
		unsigned most = 0;
		for (size_t e = 0; e < ne; e++) {
			cur[ev[e].sm] = ev[e].d > 0     ? cur[ev[e].sm] + 1
			                : cur[ev[e].sm] ? cur[ev[e].sm] - 1
			                                : 0;
			if (cur[ev[e].sm] > most)
				most = cur[ev[e].sm];
		}
		free(ev);
		uint64_t grid = (uint64_t)kh->grid[0] * kh->grid[1] * kh->grid[2];
		if (most && most < allow && grid > (uint64_t)most * out->sm_count) {
			seen = 1;
			best = most > best ? most : best;
		}
	}
	free(cur);
	if (seen)
		out->cluster_max_blocks_per_sm = best;
	return 0;
}

static int clc_samples(struct fit *fit, const struct cta_trace *t, uint64_t loop_ns, int stream,
                       const struct cta_device_model *base)
{
	/* The loop's call (cta_calib_opts.clc_ns): 0 not known. */
	int known = loop_ns != 0;
	uint64_t iter_ns = loop_ns == CTA_CALIB_CLC_NS_ZERO ? 0 : loop_ns;
	struct cta__rec_key *ks;
	size_t n;
	if (cta__analysis_rec_keys(&ks, &n, t, clc_keep, NULL))
		return CTA_ENOMEM;
	int rc = 0;
	struct clc_claim_rec *cl = malloc((n ? n : 1) * sizeof(*cl));
	if (!cl) {
		free(ks);
		return CTA_ENOMEM;
	}
	size_t ncl = 0;
	struct samples fails = {0}, tails = {0}, posts = {0}, exits = {0}, firsts = {0}, all = {0};
	struct samples mfails = {0}; /* a clustered kernel's failures */
	unsigned char far[32] = {0};
	double ratio = 1;
	uint64_t units = 0;
	int burst = 0;
	for (size_t i = 0; i < n && !rc;) {
		size_t j = i;
		while (j < n && ks[j].a == ks[i].a && ks[j].b == ks[i].b)
			j++;
		const struct cta_trace_kernel *kh =
		    ks[i].a < t->header.kernel_count ? &t->header.kernels[ks[i].a] : NULL;
		/* A clustered kernel's request also stores its result into every
		 * CTA of the cluster before it completes (the multicast), and its
		 * claims and way out reach them too: only its time from a success
		 * to the next request is used, for the cluster barrier; its far
		 * GPCs bring that to the near GPCs' scale. */
		int multi = clustered(kh);
		/* A kernel's first block: its far GPCs, from all of its blocks. */
		if (!i || ks[i - 1].a != ks[i].a) {
			size_t e = i;
			while (e < n && ks[e].a == ks[i].a)
				e++;
			rc = clc_far_kernel(t, ks, i, e, base, far, &ratio);
			units = clc_units_resident(t, ks[i].a, kh);
			burst = 0;
			if (!rc && !multi)
				rc = clc_burst(fit, t, (uint32_t)ks[i].a, &burst);
			if (!rc && ratio > 1 && !multi) {
				rc = push(&fit->clc_far, (uint64_t)(ratio * 1e6 + 0.5));
				for (int g = 0; g < 32; g++)
					fit->clc_far_votes[g] += far[g];
			}
		}
		/* The block's samples on the near GPCs' scale. */
		int g = gpc_of(base, t->recs[ks[i].seq].sm);
		double sc = g >= 0 && far[g] && ratio > 1 ? 1 / ratio : 1;
		/* issue: the open request's; done/ok: the last completion, and
		 * whether a steal was decoded since. */
		uint64_t issue = 0, done = 0;
		int open = 0, have_done = 0, ok = 0, stole = 0, succs = 0;
		for (size_t k = i; k < j && !rc; k++) {
			const struct cta_trace_rec *r = &t->recs[ks[k].seq];
			switch (r->ev) {
			case CTA_TEV_CANCEL:
				if (have_done && !stole && !multi)
					rc = push(&tails, near_scale(r->t_ns - done, 0, sc));
				else if (have_done && ok && known && !rc) {
					rc = push(&posts, near_scale(r->t_ns - done, iter_ns, sc));
					/* A storing loop's, as taken (the first
					 * success's extra is alike on every GPC):
					 * every success, and its blocks' first
					 * (clc_drain_first_ns). */
					if (!rc && stream)
						rc = push(&all, r->t_ns - done);
					if (!rc && stream && succs == 1)
						rc = push(&firsts, r->t_ns - done);
				}
				issue = r->t_ns;
				open = 1;
				have_done = 0;
				break;
			case CTA_TEV_CANCEL_DONE:
				if (!open || r->t_ns < issue)
					break;
				open = 0;
				have_done = 1;
				stole = 0;
				done = r->t_ns;
				ok = r->code == CTA_CANCEL_SUCCESS;
				succs += ok;
				if (multi && !ok)
					rc = push(&mfails, near_scale(done - issue, 0, sc));
				if (multi)
					break;
				rc = push(ok ? &fit->clc_succ : &fit->clc_fail,
				          near_scale(done - issue, 0, sc));
				if (!rc && !ok)
					rc = push(&fails, near_scale(done - issue, 0, sc));
				if (!rc && ok && kh && r->arg != CTA_TRACE_NONE)
					cl[ncl++] =
					    (struct clc_claim_rec){.word = claim_word(kh, r->arg),
					                           .issue = issue,
					                           .done = done,
					                           .scale = sc};
				break;
			case CTA_TEV_STEAL:
				stole = 1;
				break;
			default: /* END */
				if (have_done && !ok && known && !multi)
					rc = push(&exits, near_scale(r->t_ns - done, iter_ns, sc));
				have_done = 0;
				break;
			}
		}
		/* One kernel's claims at a time: the next group is another
		 * kernel's, or the same kernel's next block. */
		if (!rc && (j == n || ks[j].a != ks[i].a)) {
			/* (A loop whose call varies, stream 2, gives no claims.) */
			rc = clc_kernel(fit, cl, ncl, &fails, known && !multi && stream != 2,
			                iter_ns, units, burst);
			if (!rc && tails.n)
				rc = push(&fit->clc_tail, median(&tails));
			if (!rc && posts.n && multi) {
				rc = push2(&fit->clc_post_cluster, median(&posts), iter_ns);
				if (!rc)
					rc = push(&fit->clc_post_cluster, block_threads(kh));
			} else if (!rc && posts.n) {
				rc = push2(&fit->clc_post, median(&posts), iter_ns);
				if (!rc)
					rc = push(&fit->clc_post_threads, block_threads(kh));
				if (!rc)
					rc = push(&fit->clc_post_stream, (uint64_t)stream);
			}
			/* (Its requesters beside it, under the same test: the
			 * share pairs the two lists by index.) */
			if (!rc && exits.n && stream != 2) {
				rc = push2(&fit->clc_exit, median(&exits), iter_ns);
				if (!rc)
					rc = push(&fit->clc_exit_units, units);
			}
			/* A storing loop's blocks' first successes against
			 * all of its successes, whose median the drain (or
			 * the cluster barrier) takes. */
			if (!rc && firsts.n && stream) {
				uint64_t a = median(&all), f1 = median(&firsts);
				rc = push(&fit->clc_drain_first, f1 > a ? f1 - a : 0);
			}
			/* A clustered kernel's median failure, its requesters
			 * and CTAs a cluster (clc_multicast_ns). */
			if (!rc && mfails.n) {
				rc = push(&fit->clc_multicast, median(&mfails));
				if (!rc)
					rc = push(&fit->clc_multicast, units);
				if (!rc)
					rc = push(&fit->clc_multicast, cluster_ctas(kh));
			}
			tails.n = posts.n = exits.n = firsts.n = all.n = mfails.n = 0;
			ncl = 0;
		}
		i = j;
	}
	free(fails.v);
	free(tails.v);
	free(posts.v);
	free(exits.v);
	free(firsts.v);
	free(all.v);
	free(mfails.v);
	free(cl);
	free(ks);
	return rc;
}

static uint64_t mean(const struct samples *s)
{
	double sum = 0;
	for (size_t i = 0; i < s->n; i++)
		sum += (double)s->v[i];
	return s->n ? (uint64_t)(sum / (double)s->n + 0.5) : 0;
}

static unsigned clamp_add(double v)
{
	return v <= 0 ? 0 : v > CTA_DEVICE_SPIN_ADD_MAX ? CTA_DEVICE_SPIN_ADD_MAX : (unsigned)v;
}

/* The emulated round trip's growth with r requesters (clc_crowd_units
 * r0; 0: none). */
static double crowd(uint64_t r, unsigned r0)
{
	double x = r0 ? (double)r / r0 : 0;
	return 1 + x * x;
}

/* clc_crowd_units and the uncrowded request: the r0 whose
 * request x crowd(units, r0), the request the median of the kernels'
 * failures each divided by its crowd factor, puts the kernels' median
 * failures closest (least squares of the logarithms); 0 where no r0 does
 * better by a tenth than none (the kernels' requesters alike, or the
 * failures not growing with them). */
static unsigned fit_crowd(const struct fit *fit, uint64_t *request)
{
	const struct samples *f = &fit->clc_fail_kernel, *u = &fit->clc_fail_units;
	struct samples d = {0};
	double best_err = -1, none_err = -1;
	uint64_t none_req = 0;
	unsigned best = 0;
	/* r0 = 0 first (no growth), then 32 .. about 100000 in steps of 2%;
	 * one kernel is no evidence of growth. (median sorts: d, a copy.) */
	for (double r0 = 0; r0 < 1e5 && (f->n >= 2 || !r0); r0 = r0 ? r0 * 1.02 : 32) {
		d.n = 0;
		for (size_t i = 0; i < f->n; i++)
			if (push(&d,
			         (uint64_t)((double)f->v[i] / crowd(u->v[i], (unsigned)r0) + 0.5)))
				goto out;
		double req = (double)median(&d), err = 0;
		if (req <= 0)
			continue;
		for (size_t i = 0; i < f->n; i++) {
			double e = log((double)f->v[i] / (req * crowd(u->v[i], (unsigned)r0)));
			err += e * e;
		}
		if (!r0) {
			none_err = err;
			none_req = (uint64_t)req;
		}
		if (best_err < 0 || err < best_err) {
			best_err = err;
			best = (unsigned)r0;
			*request = (uint64_t)req;
		}
	}
out:
	if (best && !(best_err < 0.9 * none_err)) {
		best = 0;
		*request = none_req;
	}
	free(d.v);
	return best;
}

/* clc_crowd_tail_ppm: after a completion the issuer records it (one more
 * round trip to the emulation's atomics) before it goes on, and that round
 * trip grows with the crowd as the request's do. Each kernel whose way out
 * was measured (the last failure's completion to its block's end, less
 * the loop's call) is a point (the request's growth at its requesters, its
 * way out); the share is the least-squares slope of the way out on the
 * growth, in [0, 1]; 0 where the kernels' growths do not differ by a
 * request at least (nothing to tell a slope from). */
static unsigned fit_crowd_tail(const struct fit *fit, double f, double add, double request,
                               unsigned r0)
{
	const struct samples *e = &fit->clc_exit, *u = &fit->clc_exit_units;
	assert(u->n == e->n / 2);
	if (!r0 || e->n / 2 < 2)
		return 0;
	double sx = 0, sy = 0, sxx = 0, sxy = 0, lo = -1, hi = 0;
	size_t n = e->n / 2;
	for (size_t i = 0; i < n; i++) {
		double x = request * (crowd(u->v[i], r0) - 1);
		double y = (double)e->v[2 * i] - (double)e->v[2 * i + 1] * f - add;
		sx += x;
		sy += y;
		sxx += x * x;
		sxy += x * y;
		lo = lo < 0 || x < lo ? x : lo;
		hi = x > hi ? x : hi;
	}
	double den = (double)n * sxx - sx * sx;
	if (hi - lo < request || den <= 0)
		return 0;
	double a = ((double)n * sxy - sx * sy) / den;
	return a <= 0 ? 0 : a >= 1 ? 1000000 : (unsigned)(a * 1e6 + 0.5);
}

/* Whether a one-CTA steal loop of blocks of thr threads was recorded. */
static int one_cta_loop_of(const struct fit *fit, uint64_t thr)
{
	for (size_t k = 0; k < fit->clc_post_threads.n; k++)
		if (fit->clc_post_threads.v[k] == thr &&
		    !(k < fit->clc_post_stream.n && fit->clc_post_stream.v[k] == 2))
			return 1;
	return 0;
}

/* cluster_barrier_ns: a clustered steal loop's iteration is a one-CTA
 * loop's with the cluster barrier in place of the block's (barrier_ns).
 * Each clustered kernel votes its success-to-request time less its loop's
 * work (ns x f) less the median of the same over the one-CTA kernels of
 * its block size, plus the block's barrier: blocks of one size share their
 * SM alike, where the loops of other sizes differ by their SM's crowd. Only
 * where no clustered kernel has a one-CTA twin of its size do all one-CTA
 * kernels stand in. The median vote; 0 (a block's barrier) where no
 * clustered loop was recorded. */
static unsigned fit_cluster_barrier(const struct fit *fit, double f, double barrier)
{
	const struct samples *c = &fit->clc_post_cluster, *o = &fit->clc_post;
	struct samples votes = {0}, ref = {0};
	unsigned r = 0;
	int any_twin = 0;
	for (size_t i = 0; i + 2 < c->n; i += 3)
		any_twin |= one_cta_loop_of(fit, c->v[i + 2]);
	for (size_t i = 0; i + 2 < c->n && o->n; i += 3) {
		uint64_t thr = c->v[i + 2];
		int same = one_cta_loop_of(fit, thr);
		if (any_twin && !same)
			continue;
		ref.n = 0;
		for (size_t k = 0; k + 1 < o->n; k += 2) {
			if (same && fit->clc_post_threads.v[k / 2] != thr)
				continue;
			if (k / 2 < fit->clc_post_stream.n && fit->clc_post_stream.v[k / 2] == 2)
				continue;
			double y = (double)o->v[k] - (double)o->v[k + 1] * f;
			if (push(&ref, y > 0 ? (uint64_t)y : 0))
				goto out;
		}
		double x =
		    (double)c->v[i] - (double)c->v[i + 1] * f - (double)median(&ref) + barrier;
		if (push(&votes, x > 0 ? (uint64_t)(x + 0.5) : 0))
			goto out;
	}
	if (votes.n)
		r = clamp_add((double)median(&votes));
out:
	free(votes.v);
	free(ref.v);
	return r;
}

/* The emulated CLC's costs (clc_emulated, docs/FIDELITY.md):
 * clc_request_ns, the median cancel to cancel_done of failures (of every
 * request when none failed); clc_request_tail_ns, the median time from a
 * completion to a request issued straight after it; clc_claim_ns, the
 * median time of the claims that found their word free, less the request;
 * clc_claim_turn_ns, the mean gap between queued claims of one word (the
 * queue's rate, which a median would overstate); clc_steal_ns and
 * clc_exit_ns, the medians of a success's completion to the next request
 * and of the last failure's to the block's end, less the tail, the loop's
 * one call (ns x the factor at index 1 + the per-call add) and, for the
 * steal, the loop's barrier. */
/* A first-wave block of a stealing kernel: its start and its first
 * request (0: none seen). */
struct late_blk {
	uint64_t sm, phys, start, done;
};

static int cmp_late_phys(const void *pa, const void *pb)
{
	const struct late_blk *a = pa, *b = pb;
	return (a->phys > b->phys) - (a->phys < b->phys);
}

static int cmp_late_sm(const void *pa, const void *pb)
{
	const struct late_blk *a = pa, *b = pb;
	if (a->sm != b->sm)
		return (a->sm > b->sm) - (a->sm < b->sm);
	return (a->phys > b->phys) - (a->phys < b->phys);
}

/* clc_late_ppm: on an SM that a stealing kernel's first wave fills (no
 * further block of it fits by threads), the blocks placed behind the
 * issue gate (more than the base's spin_gate_threads ahead of them in
 * block order) reach their first request about one call of the loop late
 * (docs/FIDELITY.md). Per kernel of a known loop (loop_ns, 1 us or
 * more: shorter calls hide in the entry's spread), the first request
 * after the block's start, less the median of the same over the first
 * block of every SM (never late), is a block's lateness; such a block
 * later than half a call is late, and the kernel's vote is its late
 * blocks' median lateness over the call. */
static int clc_late_samples(struct fit *fit, const struct cta_trace *t, uint64_t loop_ns,
                            const struct cta_device_model *base)
{
	if (loop_ns < 1000 || loop_ns == CTA_CALIB_CLC_NS_ZERO || !base->max_threads_per_sm ||
	    !base->spin_gate_threads)
		return 0;
	struct late_blk *b = malloc((t->count ? t->count : 1) * sizeof(*b));
	struct samples late = {0}, first = {0};
	int rc = b ? 0 : CTA_ENOMEM;
	for (uint32_t k = 0; k < t->header.kernel_count && !rc; k++) {
		uint64_t first_end = UINT64_MAX;
		for (size_t i = 0; i < t->count; i++)
			if (t->recs[i].kernel == k && t->recs[i].ev == CTA_TEV_END &&
			    t->recs[i].t_ns < first_end)
				first_end = t->recs[i].t_ns;
		size_t n = 0;
		for (size_t i = 0; i < t->count; i++) {
			const struct cta_trace_rec *r = &t->recs[i];
			if (r->kernel == k && r->ev == CTA_TEV_START && r->t_ns < first_end &&
			    r->sm != CTA_TRACE_NONE && r->phys != CTA_TRACE_NONE)
				b[n++] = (struct late_blk){r->sm, r->phys, r->t_ns, 0};
		}
		qsort(b, n, sizeof(*b), cmp_late_phys);
		for (size_t i = 0; i < t->count; i++) {
			const struct cta_trace_rec *r = &t->recs[i];
			if (r->kernel != k || r->ev != CTA_TEV_CANCEL)
				continue;
			struct late_blk key = {.phys = r->phys};
			struct late_blk *h = bsearch(&key, b, n, sizeof(*b), cmp_late_phys);
			if (h && r->t_ns >= h->start && (!h->done || r->t_ns < h->done))
				h->done = r->t_ns;
		}
		qsort(b, n, sizeof(*b), cmp_late_sm);
		unsigned thr = (unsigned)block_threads(&t->header.kernels[k]);
		first.n = late.n = 0;
		for (size_t i = 0; i < n && !rc; i++)
			if ((!i || b[i].sm != b[i - 1].sm) && b[i].done)
				rc = push(&first, b[i].done - b[i].start);
		if (rc || !first.n || !thr)
			continue;
		uint64_t m0 = median(&first);
		for (size_t i = 0; i < n && !rc;) {
			size_t j = i;
			while (j < n && b[j].sm == b[i].sm)
				j++;
			int full = (j - i) * thr + thr > base->max_threads_per_sm;
			for (size_t q = i + 1; full && q < j && !rc; q++)
				if ((q - i) * thr > base->spin_gate_threads && b[q].done &&
				    b[q].done - b[q].start > m0 + loop_ns / 2)
					rc = push(&late, (b[q].done - b[q].start - m0) * 1000000 /
					                     loop_ns);
			i = j;
		}
		if (!rc && late.n)
			rc = push(&fit->clc_late, median(&late));
	}
	free(late.v);
	free(first.v);
	free(b);
	return rc;
}

/* clc_sector_ps: the median of the bursts' votes (clc_burst); 0 without
 * one. clc_entry_ps: of the bursts whose first completion came more than
 * 1.5 requests after their first issue (the queue held it, not the
 * request's own round trip), each votes its first completion after its
 * first start, less one request and one pass, over its requests (the
 * entries ahead of it: every block of the wave); the median, or 0. */
static void fit_sector(struct cta_device_model *out, const struct fit *fit)
{
	out->clc_sector_ps = out->clc_entry_ps = 0;
	if (!fit->clc_sector.n)
		return;
	struct samples v = {0};
	for (size_t i = 0; i < fit->clc_sector.n; i++)
		if (push(&v, fit->clc_sector.v[i]))
			goto out;
	uint64_t sector = median(&v);
	out->clc_sector_ps = sector > 1000000 ? 1000000 : (unsigned)sector;
	v.n = 0;
	double req = (double)out->clc_request_ns;
	for (size_t i = 0; i + 2 < fit->clc_entry.n; i += 3) {
		const uint64_t *e = &fit->clc_entry.v[i];
		if ((double)e[2] <= 1.5 * req || !e[1])
			continue;
		double ps = ((double)e[0] - req) * 1000 - (double)sector;
		if (ps > 0 && push(&v, (uint64_t)(ps / (double)e[1] + 0.5)))
			goto out;
	}
	if (v.n) {
		uint64_t entry = median(&v);
		out->clc_entry_ps = entry > 1000000 ? 1000000 : (unsigned)entry;
	}
out:
	free(v.v);
}

/* clc_multicast_ns: a clustered kernel's request stores its result into
 * every CTA of its cluster (the guide's cluster loop multicasts) before it
 * completes, which a one-CTA kernel's does not. Each clustered kernel
 * votes what its median failure takes beyond the one-CTA kernels' rule
 * at its requesters (the request times crowd(clusters resident)), over
 * its CTAs a cluster; the median vote, 0 where it is negative or no
 * kernel is clustered. */
static unsigned fit_multicast(const struct fit *fit, const struct cta_device_model *out)
{
	const struct samples *m = &fit->clc_multicast;
	struct samples v = {0};
	unsigned ns = 0;
	for (size_t i = 0; i + 2 < m->n; i += 3) {
		double beyond = (double)m->v[i] - (double)out->clc_request_ns *
		                                      crowd(m->v[i + 1], out->clc_crowd_units);
		if (push(&v, beyond > 0 ? (uint64_t)(beyond / (double)m->v[i + 2] + 0.5) : 0))
			goto out;
	}
	ns = v.n ? clamp_add((double)median(&v)) : 0;
out:
	free(v.v);
	return ns;
}

static void fit_clc(struct cta_device_model *out, struct fit *fit)
{
	if (!fit->clc_emulated || !(fit->clc_fail.n || fit->clc_succ.n))
		return;
	out->clc_emulated = 1;
	/* The far GPCs: the half of the GPCs that the most kernels found far
	 * (ties: the lower GPC), at the median kernel's ratio. The costs
	 * below were fitted on the near GPCs' scale. */
	out->clc_far_gpcs = out->clc_far_ppm = 0;
	unsigned ngpc = out->gpc_count < 32 ? out->gpc_count : 32;
	if (fit->clc_far.n && ngpc >= 2) {
		out->clc_far_ppm = (unsigned)median(&fit->clc_far);
		for (unsigned taken = 0; taken < ngpc / 2; taken++) {
			unsigned best = 32;
			for (unsigned g = 0; g < ngpc; g++)
				if (!(out->clc_far_gpcs >> g & 1) && fit->clc_far_votes[g] &&
				    (best == 32 ||
				     fit->clc_far_votes[g] > fit->clc_far_votes[best]))
					best = g;
			if (best == 32)
				break;
			out->clc_far_gpcs |= 1u << best;
		}
		if (!out->clc_far_gpcs)
			out->clc_far_ppm = 0;
	}
	/* Each kernel one vote (its median): the grids of many blocks would
	 * outvote the others. The request is the uncrowded one; a kernel's
	 * failures take crowd(its requesters) times as long. */
	uint64_t fail = 0;
	out->clc_crowd_units = 0;
	if (fit->clc_fail_kernel.n)
		out->clc_crowd_units = fit_crowd(fit, &fail);
	else if (fit->clc_fail.n) /* (bursts alone: their failures) */
		fail = median(&fit->clc_fail);
	else
		fail = median(&fit->clc_succ);
	out->clc_request_ns = clamp_add((double)fail);
	out->clc_claim_turn_ns = clamp_add((double)mean(&fit->clc_turn));
	/* Without back-to-back requests in the traces, the tail is taken as
	 * what it is, one more round trip to the same global atomics: a turn
	 * of a claim. */
	double tail = fit->clc_tail.n ? (double)median(&fit->clc_tail) : out->clc_claim_turn_ns;
	out->clc_request_tail_ns = clamp_add(tail);
	uint32_t ppm = cta_device_spin_scale_ppm(out, 1);
	double f = ppm ? ppm / 1e6 : 1, add = cta_device_spin_add_ns(out, 1);
	out->clc_claim_ns = clamp_add(median_less_call(&fit->clc_solo, f, add, 0));
	/* The steal and the way out from the loops whose body does not store
	 * to global memory; a storing body's loop spends clc_drain_ns more
	 * at each decode of a success (its release fence waits for the
	 * stores; the way out leaves before it, so its exits are not used):
	 * the median over its kernels' success-to-request times of what they
	 * take beyond the steal (0 without both kinds of loop). */
	int plain = 0, stores = 0;
	for (size_t i = 0; i < fit->clc_post_stream.n; i++)
		fit->clc_post_stream.v[i] ? stores++ : plain++;
	const struct samples *flags = plain && stores ? &fit->clc_post_stream : NULL;
	double steal_less = tail + (double)out->barrier_ns;
	out->clc_steal_ns =
	    clamp_add(median_less_call_of(&fit->clc_post, flags, 0, f, add, steal_less));
	out->clc_exit_ns = clamp_add(median_less_call(&fit->clc_exit, f, add, tail));
	/* (The steal and the way out stay the kernels' medians: most kernels
	 * are uncrowded, and a median is what the crowded few do not move.) */
	out->clc_crowd_tail_ppm =
	    fit_crowd_tail(fit, f, add, (double)out->clc_request_ns, out->clc_crowd_units);
	out->clc_drain_ns = 0;
	if (flags)
		out->clc_drain_ns = clamp_add(median_less_call_of(&fit->clc_post, flags, 1, f, add,
		                                                  steal_less + out->clc_steal_ns));
	/* A storing loop's block's first success: each such kernel votes
	 * how much longer it takes to the next request than its later ones
	 * (0: none marked). */
	out->clc_drain_first_ns =
	    fit->clc_drain_first.n ? clamp_add((double)median(&fit->clc_drain_first)) : 0;
	out->cluster_barrier_ns = fit_cluster_barrier(fit, f, (double)out->barrier_ns);
	out->clc_multicast_ns = fit_multicast(fit, out);
	/* Each kernel one vote: the median. */
	out->clc_late_ppm = fit->clc_late.n ? (unsigned)median(&fit->clc_late) : 0;
	fit_sector(out, fit);
}

/* The starts and ends of a trace's known kernels that the fits pair up,
 * keyed (sm, kernel) for retire gaps (by_sm) or (kernel, phys) for block
 * durations; records without that SM or physical block are left out. */
struct ends_sel {
	const struct cta_trace *t;
	int by_sm;
};

static int start_or_end(const struct cta_trace_rec *r, void *ctx, struct cta__rec_key *k)
{
	const struct ends_sel *sel = ctx;
	if ((r->ev != CTA_TEV_START && r->ev != CTA_TEV_END) ||
	    r->kernel >= sel->t->header.kernel_count ||
	    (sel->by_sm ? r->sm : r->phys) == CTA_TRACE_NONE)
		return 0;
	k->a = sel->by_sm ? r->sm : r->kernel;
	k->b = sel->by_sm ? r->kernel : r->phys;
	return 1;
}

/* Retire-to-next-start: on each SM, every start of a kernel after its first
 * end is paired with the oldest earlier end of that kernel on that SM not
 * yet paired, since the block that left made the room. */
static int retire_gaps(struct samples *out, const struct cta_trace *t, const struct cta__kfacts *kf)
{
	struct cta__rec_key *ks;
	size_t n;
	struct ends_sel sel = {t, 1};
	if (cta__analysis_rec_keys(&ks, &n, t, start_or_end, &sel))
		return CTA_ENOMEM;
	uint64_t *fifo = malloc((n ? n : 1) * sizeof(*fifo));
	if (!fifo) {
		free(ks);
		return CTA_ENOMEM;
	}
	int rc = 0;
	for (size_t i = 0; i < n && !rc;) {
		size_t j = i, head = 0, tail = 0;
		while (j < n && ks[j].a == ks[i].a && ks[j].b == ks[i].b)
			j++;
		const struct cta__kfacts *f = &kf[ks[i].b];
		for (size_t k = i; k < j && !rc; k++) {
			const struct cta_trace_rec *r = &t->recs[ks[k].seq];
			if (r->ev == CTA_TEV_END)
				fifo[tail++] = r->t_ns;
			else if (f->has_end && r->t_ns >= f->first_end && head < tail)
				rc = push(out, r->t_ns - fifo[head++]);
		}
		i = j;
	}
	free(ks);
	free(fifo);
	return rc;
}

static void free_fit(struct fit *f)
{
	free(f->pos_sum);
	free(f->launch.v);
	free(f->launch_gap.v);
	free(f->dispatch.v);
	free(f->block_start.v);
	free(f->retire.v);
	free(f->cancel.v);
	for (unsigned r = 0; r <= CTA_DEVICE_MAX_RESIDENT; r++) {
		free(f->spin[r].v);
		free(f->spin_len[r].v);
	}
	free(f->clc_fail.v);
	free(f->clc_succ.v);
	free(f->clc_solo.v);
	free(f->clc_turn.v);
	free(f->clc_tail.v);
	free(f->clc_post.v);
	free(f->clc_post_cluster.v);
	free(f->clc_post_threads.v);
	free(f->clc_post_stream.v);
	free(f->clc_drain_first.v);
	free(f->clc_exit.v);
	free(f->clc_exit_units.v);
	free(f->clc_far.v);
	free(f->clc_late.v);
	free(f->clc_sector.v);
	free(f->clc_entry.v);
	free(f->regs_wait.v);
	free(f->clc_fail_kernel.v);
	free(f->clc_multicast.v);
	free(f->clc_fail_units.v);
	free(f->call_d.v);
	free(f->call_ns.v);
	free(f->call_n.v);
	free(f->call_r.v);
	free(f->call_tb.v);
	free(f->call_u.v);
	free(f->one_d.v);
	free(f->one_ns.v);
	free(f->one_res.v);
	free(f->one_tb.v);
	free(f->wave_n.v);
	free(f->wave_fast.v);
	free(f->wave_thr.v);
}

struct order_ent {
	double pos;
	unsigned sm;
};

static int cmp_order(const void *pa, const void *pb)
{
	const struct order_ent *a = pa, *b = pb;
	if (a->pos != b->pos)
		return a->pos < b->pos ? -1 : 1;
	return a->sm < b->sm ? -1 : a->sm > b->sm;
}

static void note(struct cta_calib_report *rep, const char *text)
{
	size_t l = strlen(rep->note);
	snprintf(rep->note + l, sizeof(rep->note) - l, "%s%s", l ? "; " : "", text);
}

/* One block of a trace, start to end, for the duration model. */
struct blk {
	uint64_t sm, kernel, block, s, e;
};

static int cmp_blk(const void *pa, const void *pb)
{
	const struct blk *a = pa, *b = pb;
	if (a->sm != b->sm)
		return a->sm < b->sm ? -1 : 1;
	if (a->s != b->s)
		return a->s < b->s ? -1 : 1;
	if (a->kernel != b->kernel)
		return a->kernel < b->kernel ? -1 : 1;
	return a->block < b->block ? -1 : a->block > b->block;
}

/* c was dispatched before b: within a kernel the dispatcher issues blocks in
 * index order (the hardware's start stamps of blocks dispatched together
 * differ by up to a microsecond in either order); across kernels, the
 * earlier start. */
static int before(const struct blk *c, const struct blk *b)
{
	if (c->kernel == b->kernel)
		return c->block < b->block;
	return c->s < b->s;
}

/* Duration samples by resident count: every block that started on its own
 * index in its kernel's first wave (before the kernel's first end), with
 * r = 1 + the blocks on its SM dispatched before it whose run overlaps its
 * own. That is the count the simulator sees when it starts the block.
 * kns[k] is the time kernel k's blocks asked for; 0 leaves them out (but
 * they still count as resident). */
static unsigned kthreads(const struct cta_trace *t, unsigned k)
{
	const unsigned *b = t->header.kernels[k].block;
	return b[0] * b[1] * b[2];
}

/* A block that lasted at most its requested time and this ran at once:
 * the issue gate's fit (fit_gate). */
#define GATE_FAST_NS 3000

/* The duration model's index of a block that found `res` blocks resident
 * (itself included) and `tb` threads before it: res, or with maxthr
 * (spin_by_threads 2) 1 + the eighths of maxthr threads, rounded up. */
static unsigned spin_res(unsigned res, uint64_t tb, unsigned maxthr)
{
	if (maxthr)
		res = 1 + (unsigned)((tb * CTA_DEVICE_SPIN_STEPS + maxthr - 1) / maxthr);
	return res < CTA_DEVICE_MAX_RESIDENT ? res : CTA_DEVICE_MAX_RESIDENT;
}

/* Block durations by the duration model's index: the blocks resident at
 * the block's start, itself included, or with maxthr (spin_by_threads 2)
 * 1 + the eighths of maxthr threads resident before it, rounded up. Blocks
 * of kernel 0 with known work `w` of two or more calls go to fit's call
 * samples instead. */
static int regs_samples(struct fit *fit, const struct cta_trace *t, const struct cta__kfacts *kf,
                        const uint64_t *kns, const struct cta_calib_work *w,
                        const struct cta_device_model *base, const struct blk *bs, size_t nb);

static int spin_samples(struct fit *fit, const struct cta_trace *t, const struct cta__kfacts *kf,
                        const uint64_t *kns, const struct cta_device_model *base,
                        const struct cta_calib_work *w)
{
	unsigned maxthr = base->max_threads_per_sm;
	struct cta__rec_key *ks;
	size_t n;
	struct ends_sel sel = {t, 0};
	if (cta__analysis_rec_keys(&ks, &n, t, start_or_end, &sel))
		return CTA_ENOMEM;
	struct blk *bs = malloc((n ? n : 1) * sizeof(*bs));
	if (!bs) {
		free(ks);
		return CTA_ENOMEM;
	}
	size_t nb = 0;
	for (size_t i = 0; i + 1 < n; i++) {
		const struct cta_trace_rec *x = &t->recs[ks[i].seq], *y = &t->recs[ks[i + 1].seq];
		if (ks[i].a == ks[i + 1].a && ks[i].b == ks[i + 1].b && x->ev == CTA_TEV_START &&
		    y->ev == CTA_TEV_END && x->sm != CTA_TRACE_NONE && x->block == x->phys) {
			bs[nb++] = (struct blk){.sm = x->sm,
			                        .kernel = x->kernel,
			                        .block = x->block,
			                        .s = x->t_ns,
			                        .e = y->t_ns};
			i++;
		}
	}
	free(ks);
	qsort(bs, nb, sizeof(*bs), cmp_blk);
	int rc = 0;
	for (size_t i = 0; i < nb && !rc;) {
		size_t j = i;
		uint64_t longest = 0;
		while (j < nb && bs[j].sm == bs[i].sm) {
			if (bs[j].e - bs[j].s > longest)
				longest = bs[j].e - bs[j].s;
			j++;
		}
		uint64_t wn = 0, wfast = 0;
		for (size_t b = i; b < j && t->header.kernel_count == 1 && kns[0]; b++) {
			const struct blk *x = &bs[b];
			if (kf[0].has_end && x->s >= kf[0].first_end)
				continue;
			wn++;
			wfast += x->e - x->s <= kns[0] + GATE_FAST_NS;
		}
		if (wn) {
			rc = push(&fit->wave_n, wn);
			if (!rc)
				rc = push(&fit->wave_fast, wfast);
			if (!rc)
				rc = push(&fit->wave_thr, kthreads(t, 0));
		}
		for (size_t b = i; b < j && !rc; b++) {
			const struct blk *x = &bs[b];
			const struct cta__kfacts *f = &kf[x->kernel];
			int known = w && w->calls && x->kernel == 0 && x->block < w->n &&
			            w->calls[x->block] >= 2;
			if ((f->has_end && x->s >= f->first_end) || (!kns[x->kernel] && !known))
				continue;
			unsigned res = 1;
			uint64_t tb = 0; /* threads of the blocks counted in res */
			/* Blocks that overlap x: started before x ended, and ended
			 * after x started (so started at most `longest` before it). */
			for (size_t c = b; c-- > i && bs[c].s + longest >= x->s;)
				if (bs[c].e > x->s && before(&bs[c], x)) {
					res++;
					tb += kthreads(t, bs[c].kernel);
				}
			for (size_t c = b + 1; c < j && bs[c].s < x->e; c++)
				if (before(&bs[c], x)) {
					res++;
					tb += kthreads(t, bs[c].kernel);
				}
			if (known) {
				rc = push(&fit->call_d, x->e - x->s);
				if (!rc)
					rc = push(&fit->call_ns, w->ns[x->block]);
				if (!rc)
					rc = push(&fit->call_n, w->calls[x->block]);
				if (!rc)
					rc = push(&fit->call_r, spin_res(res, tb, maxthr));
				if (!rc)
					rc = push(&fit->call_tb, tb);
				if (!rc)
					rc = push(&fit->call_u, w->issue ? w->issue[x->block] : 0);
				continue;
			}
			rc = push(&fit->one_d, x->e - x->s);
			if (!rc)
				rc = push(&fit->one_ns, kns[x->kernel]);
			if (!rc)
				rc = push(&fit->one_res, res);
			if (!rc)
				rc = push(&fit->one_tb, tb);
		}
		i = j;
	}
	if (!rc)
		rc = regs_samples(fit, t, kf, kns, w, base, bs, nb);
	free(bs);
	return rc;
}

/* What block b of a single-kernel trace asked for: the kernel's one-call
 * time, or its known work of one call; 0 when not known. */
static uint64_t one_call_ns(const uint64_t *kns, const struct cta_calib_work *w, uint64_t b)
{
	if (kns[0])
		return kns[0];
	if (w && w->calls && b < w->n && w->calls[b] == 1)
		return w->ns[b];
	return 0;
}

/* The end hold's sample (fit_regs_hold) of first-wave block x = sm[b] of
 * an SM's blocks sm[0, n) (by start), of `warps` warps: at place r among
 * the SM's first-wave blocks by index, its warps r*w .. r*w+w-1 on
 * sub-partitions i mod 4, as each other block's; the most warps that
 * the first-wave blocks of a lower index that asked for more than
 * GATE_FAST_NS longer put on one of its sub-partitions, and whether it
 * ended with them (no more than GATE_FAST_NS before the first of them
 * ended; one slowed a few us beside them did not). */
static void hold_sample(struct fit *fit, const struct blk *sm, size_t n, size_t b,
                        uint64_t first_end, const uint64_t *kns, const struct cta_calib_work *w,
                        unsigned warps)
{
	const struct blk *x = &sm[b];
	uint64_t len = one_call_ns(kns, w, x->block);
	unsigned place = 0, cnt[4] = {0}, mine[4] = {0}, most = 0;
	uint64_t first = UINT64_MAX; /* the first end of those longer blocks */
	for (size_t c = 0; c < n; c++)
		place += sm[c].s < first_end && sm[c].block < x->block;
	for (unsigned i = 0; i < warps; i++)
		mine[(place * warps + i) % 4] = 1;
	for (size_t c = 0; c < n; c++) {
		const struct blk *y = &sm[c];
		uint64_t ylen = one_call_ns(kns, w, y->block);
		if (y->s >= first_end || y->block >= x->block || ylen <= len + GATE_FAST_NS)
			continue;
		first = y->e < first ? y->e : first;
		unsigned yplace = 0;
		for (size_t d = 0; d < n; d++)
			yplace += sm[d].s < first_end && sm[d].block < y->block;
		for (unsigned i = 0; i < warps; i++) {
			unsigned q = (yplace * warps + i) % 4;
			if (mine[q] && ++cnt[q] > most)
				most = cnt[q];
		}
	}
	if (!most || most >= 16)
		return;
	fit->hold_n[most]++;
	fit->hold_held[most] += x->e + GATE_FAST_NS >= first;
}

/* The register file's gate's samples (fit_regs_gate) from a single-kernel
 * trace, its blocks bs[0, nb) sorted by SM then start. The kernel's
 * occupancy is what its first wave stacked on one SM, once the grid had
 * more blocks than that wave; registers limited it when the base's
 * calculator allows more by threads, blocks and shared memory (the trace
 * does not carry registers). A sub-partition then holds part = its
 * warps at that occupancy, a quarter rounded up. For each block that
 * started after the kernel's first end and found blocks running on its SM
 * (that had begun their work and ran on past GATE_FAST_NS after its
 * start), the level is part less a quarter of its warps and theirs
 * together, rounded up (dealt evenly over the four sub-partitions, as
 * the simulator's gate counts them); it waited when it outlasted its
 * time by GATE_FAST_NS. */
static void order_sample(struct fit *fit, const struct blk *bs, size_t n, unsigned warps,
                         unsigned part);

static int regs_samples(struct fit *fit, const struct cta_trace *t, const struct cta__kfacts *kf,
                        const uint64_t *kns, const struct cta_calib_work *w,
                        const struct cta_device_model *base, const struct blk *bs, size_t nb)
{
	const struct cta_trace_kernel *tk = &t->header.kernels[0];
	if (t->header.kernel_count != 1 || !kf[0].has_end || !strcmp(t->header.clc, "emulated") ||
	    tk->cluster[0] * tk->cluster[1] * tk->cluster[2] > 1 || !base->warp_size)
		return 0;
	unsigned threads = kthreads(t, 0);
	unsigned warps = (threads + base->warp_size - 1) / base->warp_size;
	uint64_t grid = (uint64_t)tk->grid[0] * tk->grid[1] * tk->grid[2];
	unsigned occ = 0, sms = 0;
	for (size_t i = 0; i < nb;) {
		size_t j = i;
		unsigned first = 0;
		for (; j < nb && bs[j].sm == bs[i].sm; j++)
			first += bs[j].s < kf[0].first_end;
		occ = first > occ ? first : occ;
		sms++;
		i = j;
	}
	struct cta_block_resources r = {threads, 0, (size_t)tk->smem_bytes, 0};
	if (!occ || grid <= (uint64_t)occ * sms || cta_occupancy_max_blocks(base, &r, NULL) <= occ)
		return 0;
	unsigned part = (occ * warps + 3) / 4;
	fit->regs_seen = 1;
	for (size_t i = 0; i < nb;) {
		size_t j = i;
		while (j < nb && bs[j].sm == bs[i].sm)
			j++;
		if (warps % 4)
			order_sample(fit, bs + i, j - i, warps, part);
		for (size_t b = i; b < j; b++) {
			const struct blk *x = &bs[b];
			uint64_t len = one_call_ns(kns, w, x->block);
			if (!len)
				continue;
			if (x->s < kf[0].first_end) {
				hold_sample(fit, bs + i, j - i, b - i, kf[0].first_end, kns, w,
				            warps);
				continue;
			}
			unsigned old = 0;
			uint64_t first_end = UINT64_MAX;
			for (size_t c = i; c < j && bs[c].s < x->s; c++) {
				uint64_t clen = one_call_ns(kns, w, bs[c].block);
				if (bs[c].e > x->s + GATE_FAST_NS &&
				    (!clen || bs[c].e <= x->s + clen + GATE_FAST_NS)) {
					old += warps;
					first_end = bs[c].e < first_end ? bs[c].e : first_end;
				}
			}
			if (!old)
				continue;
			unsigned used = (old + warps + 3) / 4;
			unsigned level = used < part ? part - used : 0;
			if (level >= REGS_LEVELS)
				continue;
			fit->regs_n[level]++;
			fit->regs_waited[level] += x->e - x->s > len + GATE_FAST_NS;
			unsigned o = occ < REGS_OCC ? occ : REGS_OCC - 1;
			fit->regs_occ_n[o][level]++;
			fit->regs_occ_waited[o][level] += x->e - x->s > len + GATE_FAST_NS;
			uint64_t waited = x->e - x->s > len ? x->e - x->s - len : 0;
			int rc = push(&fit->regs_wait, level);
			if (!rc)
				rc = push2(&fit->regs_wait, first_end - x->s, waited);
			if (rc)
				return rc;
		}
		i = j;
	}
	return 0;
}

/* The order sample (fit_regs_order) of one SM's blocks bs[0..n), in
 * start order: each block, with the warps of the blocks started before it
 * and still resident (ended after its start) on the sub-partitions the
 * start order gives them (the p-th block's warp i on (p * warps + i) mod
 * 4), and on those its index gives them ((block * warps + i) mod 4). */
static void order_sample(struct fit *fit, const struct blk *bs, size_t n, unsigned warps,
                         unsigned part)
{
	for (size_t b = 0; b < n; b++) {
		unsigned by_order[4] = {0, 0, 0, 0}, by_index[4] = {0, 0, 0, 0};
		for (size_t c = 0; c <= b; c++) {
			if (c < b && bs[c].e <= bs[b].s)
				continue;
			for (unsigned i = 0; i < warps; i++) {
				by_order[(c * warps + i) % 4]++;
				by_index[(bs[c].block * warps + i) % 4]++;
			}
		}
		int over = 0, over_index = 0;
		for (unsigned q = 0; q < 4; q++) {
			over |= by_order[q] > part;
			over_index |= by_index[q] > part;
		}
		fit->order_n++;
		fit->order_over += over;
		fit->order_over_index += over_index;
	}
}

/* The sub-partitions by placement order (spin_regs_order): 1 where the
 * traces hold ORDER_MIN or more starts of blocks that do not fill the
 * sub-partitions alike and the start order overfills a sub-partition for
 * fewer than a tenth as many of them as the block index does (on
 * traces/reference/h100, 944 of 167294 against 1790 of 5000 in
 * prior_regs_b64_g5000 alone); the base's where the traces hold fewer. */
#define ORDER_MIN 1000
static void fit_regs_order(struct cta_device_model *out, const struct fit *fit)
{
	if (fit->order_n < ORDER_MIN)
		return;
	out->spin_regs_order = fit->order_over * 10 < fit->order_over_index;
}

/* The register file's gate (spin_regs_free): a later block waits where
 * its sub-partitions would have fewer warps' registers free than the
 * gate. The gate is the value that predicts, for the most recorded
 * later-wave blocks, whether they waited (ties: the smallest): 0 (none)
 * when no level has a majority of waits; the base's when no
 * register-limited kernel had a later wave. */
static void fit_regs_gate(struct cta_device_model *out, const struct fit *fit)
{
	if (!fit->regs_seen)
		return;
	unsigned gate = 0;
	uint64_t best = 0;
	for (unsigned g = 0; g <= REGS_LEVELS; g++) {
		uint64_t agree = 0;
		for (unsigned l = 0; l < REGS_LEVELS; l++)
			agree += l < g ? fit->regs_waited[l] : fit->regs_n[l] - fit->regs_waited[l];
		if (g == 0 || agree > best) {
			best = agree;
			gate = g;
		}
	}
	out->spin_regs_free = gate;
}

/* The blocks the register file's gate lets by (spin_regs_pass_ppm,
 * spin_regs_pass_blocks): of the recorded later-wave blocks the fitted
 * gate holds (level below it), by their kernel's blocks an SM, the share
 * that did not wait (outlasted their time by at most GATE_FAST_NS).
 * spin_regs_pass_blocks is the most blocks an SM whose share is a
 * twentieth or more, spin_regs_pass_ppm the share of the blocks of that
 * many an SM and fewer; both 0 where no such share is (on
 * traces/reference/h100 two blocks an SM, none of the blocks at four or
 * eight passed). */
static void fit_regs_pass(struct cta_device_model *out, const struct fit *fit)
{
	if (!fit->regs_seen)
		return;
	out->spin_regs_pass_ppm = out->spin_regs_pass_blocks = 0;
	unsigned most = 0;
	for (unsigned o = 1; o < REGS_OCC; o++) {
		uint64_t n = 0, waited = 0;
		for (unsigned l = 0; l < REGS_LEVELS && l < out->spin_regs_free; l++) {
			n += fit->regs_occ_n[o][l];
			waited += fit->regs_occ_waited[o][l];
		}
		if (n && (n - waited) * 20 >= n)
			most = o;
	}
	uint64_t n = 0, waited = 0;
	for (unsigned o = 1; o <= most; o++)
		for (unsigned l = 0; l < REGS_LEVELS && l < out->spin_regs_free; l++) {
			n += fit->regs_occ_n[o][l];
			waited += fit->regs_occ_waited[o][l];
		}
	if (!n)
		return;
	out->spin_regs_pass_blocks = most;
	out->spin_regs_pass_ppm = (unsigned)((n - waited) * 1000000 / n);
}

/* The register file's gate's longest wait (spin_regs_wait_ns): over the
 * recorded later-wave blocks the fitted gate holds (level below it),
 * the gate lets each go at the first end of the blocks running beside it
 * (P after its start), or at the wait W if that comes first; W is the
 * waited time of one of them that makes the sum of |min(P, W) - waited|
 * the smallest, 0 (no longest wait) where that sum is not a tenth below
 * the one without: blocks held only behind blocks as short as the wait
 * cannot tell it (on an H200, fitted without its mixed-cost grid, the
 * 20 us blocks' early releases gave a wait of 20.5 us and 0.1% less). */
static int fit_regs_wait(struct cta_device_model *out, const struct fit *fit)
{
	if (!fit->regs_seen)
		return 0;
	out->spin_regs_wait_ns = 0;
	const struct samples *r = &fit->regs_wait;
	size_t n = 0;
	uint64_t(*v)[2] = malloc((r->n / 3 + 1) * sizeof(*v));
	struct samples cand = {0};
	if (!v)
		return CTA_ENOMEM;
	for (size_t i = 0; i + 2 < r->n; i += 3) {
		if (r->v[i] >= out->spin_regs_free)
			continue;
		v[n][0] = r->v[i + 1];
		v[n][1] = r->v[i + 2];
		/* The candidates: the blocks' waits, to the 100 ns. */
		if (v[n][1] >= GATE_FAST_NS && push(&cand, v[n][1] / 100 * 100)) {
			free(cand.v);
			free(v);
			return CTA_ENOMEM;
		}
		n++;
	}
	if (cand.n)
		qsort(cand.v, cand.n, sizeof(*cand.v), cmp_u64);
	uint64_t best = UINT64_MAX, none = 0;
	for (size_t c = 0; c <= cand.n; c++) {
		if (c && c < cand.n && cand.v[c] == cand.v[c - 1])
			continue;
		uint64_t wmax = c < cand.n ? cand.v[c] : UINT64_MAX, cost = 0;
		for (size_t i = 0; i < n; i++) {
			uint64_t p = v[i][0] < wmax ? v[i][0] : wmax;
			cost += p > v[i][1] ? p - v[i][1] : v[i][1] - p;
		}
		if (c == cand.n)
			none = cost;
		else if (cost < best) {
			best = cost;
			out->spin_regs_wait_ns = (unsigned)wmax;
		}
	}
	if (best >= none - none / 10)
		out->spin_regs_wait_ns = 0;
	free(cand.v);
	free(v);
	return 0;
}

/* The register file's end hold (spin_regs_hold_warps): the warps H that
 * predicts for the most first-wave blocks beside longer blocks of a
 * lower index whether they ended with those (those whose longer
 * neighbours put H or more warps on one of their sub-partitions; ties:
 * the largest, which holds only where the traces saw it: a fit on
 * 256-thread blocks alone, whose longer neighbour puts two warps on each
 * sub-partition, cannot tell 1 from 2); 0 (none) where none did. */
static void fit_regs_hold(struct cta_device_model *out, const struct fit *fit)
{
	if (!fit->regs_seen)
		return;
	unsigned hold = 0;
	uint64_t best = 0, held = 0;
	for (unsigned m = 1; m < 16; m++)
		held += fit->hold_held[m];
	for (unsigned h = 1; h <= 16 && held; h++) {
		uint64_t agree = 0;
		for (unsigned m = 1; m < 16; m++)
			agree += m >= h ? fit->hold_held[m] : fit->hold_n[m] - fit->hold_held[m];
		if (agree >= best) {
			best = agree;
			hold = h;
		}
	}
	out->spin_regs_hold_warps = hold;
}

/* The register file's late entry (spin_regs_late_ns): the recorded
 * later-wave blocks that did not wait (outlasted their time by at most
 * GATE_FAST_NS) at the level the fitted gate lets go take E more than
 * their time (the median); where E is more than a block that begins at
 * once costs beyond its time (the fitted per-block add and the per-call
 * add at index 1), the model holds such a block E less the per-call add
 * (a held block let go after its entry begins its call at once), else
 * none. */
static int fit_regs_late(struct cta_device_model *out, const struct fit *fit)
{
	if (!fit->regs_seen)
		return 0;
	out->spin_regs_late_ns = 0;
	const struct samples *r = &fit->regs_wait;
	struct samples at = {0};
	int rc = 0;
	for (size_t i = 0; i + 2 < r->n && !rc; i += 3)
		if (r->v[i + 2] <= GATE_FAST_NS && r->v[i] == out->spin_regs_free)
			rc = push(&at, r->v[i + 2]);
	if (!rc && at.n) {
		uint64_t add = cta_device_spin_add_ns(out, 1), e = median(&at);
		if (e > add + out->spin_block_add_ns)
			out->spin_regs_late_ns = (unsigned)(e - add);
	}
	free(at.v);
	return rc;
}

/* One requested time at one resident count: the quantile of its blocks. */
struct len_point {
	double len, d, df; /* df: at the factors' quantile */
};

struct len_dur {
	uint64_t len, d;
};

static int cmp_len_dur(const void *pa, const void *pb)
{
	const struct len_dur *a = pa, *b = pb;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return a->d < b->d ? -1 : a->d > b->d;
}

static uint32_t clamp_ppm(double ppm)
{
	ppm = floor(ppm + 0.5);
	if (ppm < 1)
		ppm = 1;
	if (ppm > CTA_DEVICE_SPIN_SCALE_MAX)
		ppm = CTA_DEVICE_SPIN_SCALE_MAX;
	return (uint32_t)ppm;
}

static int cmp_dbl(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;
	return a < b ? -1 : a > b;
}

/* The issue gate (spin_gate_threads). With a gate of G threads, an SM's
 * first wave of n blocks of T threads each runs min(n, 1 + G / T) of them
 * at once and holds the rest until some end. A recorded block ran at once
 * when it lasted at most its requested time L + GATE_FAST_NS (one that
 * waited for another lasted about L more; 5 us blocks that ran at once
 * took up to 6.4 us on an H100, 20 us ones 21.7 us). The gate is the
 * multiple of a warp that predicts the count of every recorded SM's
 * first wave exactly for the most SMs (ties: the smallest); none (0)
 * when that gate holds back no recorded block. The one-call blocks that
 * ran at once, at or below the gate, then give the factors by index. */
static int fit_gate(struct cta_device_model *out, struct fit *fit, unsigned maxthr)
{
	unsigned gate = 0;
	if (maxthr && fit->wave_n.n) {
		uint64_t best = 0;
		for (unsigned g = 32; g <= maxthr; g += 32) {
			uint64_t agree = 0;
			for (size_t i = 0; i < fit->wave_n.n; i++) {
				uint64_t n = fit->wave_n.v[i], run = 1 + g / fit->wave_thr.v[i];
				agree += (run < n ? run : n) == fit->wave_fast.v[i];
			}
			if (agree > best) {
				best = agree;
				gate = g;
			}
		}
		/* A gate that holds no recorded block back is not seen. */
		int holds = 0;
		for (size_t i = 0; i < fit->wave_n.n && gate; i++)
			holds |= 1 + gate / fit->wave_thr.v[i] < fit->wave_n.v[i];
		if (!holds)
			gate = 0;
	}
	out->spin_gate_threads = gate;
	for (size_t i = 0; i < fit->one_d.n; i++) {
		if (gate &&
		    (fit->one_tb.v[i] > gate || fit->one_d.v[i] > fit->one_ns.v[i] + GATE_FAST_NS))
			continue;
		unsigned r = spin_res((unsigned)fit->one_res.v[i], fit->one_tb.v[i], maxthr);
		int rc = push(&fit->spin[r], fit->one_d.v[i]);
		if (!rc)
			rc = push(&fit->spin_len[r], fit->one_ns.v[i]);
		if (rc)
			return rc;
	}
	return 0;
}

/* A block of several calls: its call count, requested time and time
 * beyond what it asked for (D - L x factor). */
struct call_pt {
	uint64_t calls, len;
	double y;
};

static int cmp_call_pt(const void *pa, const void *pb)
{
	const struct call_pt *a = pa, *b = pb;
	if (a->calls != b->calls)
		return a->calls < b->calls ? -1 : 1;
	if (a->len != b->len)
		return a->len < b->len ? -1 : 1;
	return a->y < b->y ? -1 : a->y > b->y;
}

/* Call sample i's y = D - L x factor (below) into *y; 0 where it is no
 * sample: its index's factor is 1.1 or more or, with a thread count, half
 * the SM's threads or more were taken before it (the SM crowded). */
static int beyond_spin(const struct cta_device_model *out, const struct fit *fit, size_t i,
                       double *y)
{
	uint32_t ppm = cta_device_spin_scale_ppm(out, (unsigned)fit->call_r.v[i]);
	double f = ppm ? ppm / 1e6 : 1;
	unsigned maxthr = out->spin_by_threads ? out->max_threads_per_sm : 0;
	if (maxthr ? 2 * fit->call_tb.v[i] >= maxthr : f >= 1.1)
		return 0;
	*y = (double)fit->call_d.v[i] - (double)fit->call_ns.v[i] * f;
	return 1;
}

/* The issue time (spin_issue_ps), from the blocks whose launch declared
 * issue_ops (the body's arithmetic between calls that the simulator does
 * not see; work->issue: what their calls after the first charge at 1 ns
 * an instruction of each warp sharing the scheduler, u). Each such
 * sample of the per-call add's (beyond_spin) leaves r for its arithmetic:
 * its y less the median y of the samples of as many calls without
 * declared arithmetic (the same loop without it: on an H100 the
 * grid-stride loop with one tile in seven 4x longer takes about 115 ns
 * more a tile than the balanced one, the 27 SASS instructions of its
 * `idx % 7` for each of a scheduler's 8 warps), or where there are none,
 * less the adds (a + c x (calls - 1)). The issue time is the sum of r
 * over the sum of u (in ps an instruction of a warp), so that a block
 * weighs by its declared issue: a grid-stride loop's 8 calls of 27
 * instructions for 8 warps say more than one call of 12. With none, the
 * base's stays. Those blocks stay samples of the per-call add's slope
 * (split_add), as before the issue time: on the reference traces they
 * move it by 2 ns a call, and the CLC costs fitted less it with it. */
static int fit_issue(struct cta_device_model *out, struct cta_calib_report *rep,
                     const struct fit *fit, double a, double c)
{
	size_t n = fit->call_d.n, k = 0;
	struct call_pt *plain = malloc((n ? n : 1) * sizeof(*plain));
	if (!plain)
		return CTA_ENOMEM;
	size_t np = 0;
	for (size_t i = 0; i < n; i++) {
		double y;
		if (!fit->call_u.v[i] && beyond_spin(out, fit, i, &y))
			plain[np++] = (struct call_pt){fit->call_n.v[i], 0, y};
	}
	qsort(plain, np, sizeof(*plain), cmp_call_pt);
	double sr = 0, su = 0;
	for (size_t i = 0; i < n; i++) {
		double y;
		if (!fit->call_u.v[i] || !beyond_spin(out, fit, i, &y))
			continue;
		/* The median of the plain samples of this call count. */
		size_t lo = 0, hi;
		while (lo < np && plain[lo].calls < fit->call_n.v[i])
			lo++;
		for (hi = lo; hi < np && plain[hi].calls == fit->call_n.v[i];)
			hi++;
		double base = hi > lo ? plain[lo + (hi - lo - 1) / 2].y
		                      : a + c * (double)(fit->call_n.v[i] - 1);
		sr += y - base;
		su += (double)fit->call_u.v[i];
		k++;
	}
	free(plain);
	rep->n_issue = k;
	if (k) {
		double ps = floor(sr / su * 1000 + 0.5);
		out->spin_issue_ps = ps > 0 ? (ps < 1e6 ? (unsigned)ps : 1000000u) : 0;
	}
	return 0;
}

/* The per-call add against the per-block one. The one-call blocks of the
 * spin fit give their sum A, the add at index 1. A block of c >= 2 calls
 * that asked for L ns in all and lasted D at an index whose factor is
 * below 1.1 (its SM not yet crowded; with a thread count, less than half
 * the SM's threads taken before it) is one sample of y = D - L x factor.
 * The blocks of each (c, L) give one point, their median y; the per-call
 * add C is the least-squares slope of y against c over those points, each
 * weighing the same: what one more call costs. A grid-stride loop's
 * iterations carry a global load and store that the body's spin does not
 * hide (docs/FIDELITY.md, the grid-stride loop): on an H100 y grows by
 * about 300 ns a call from 2 to 17 calls whatever the spin (0 to 200 ns),
 * where a block's first call costs its entry. C is clamped to 0..A and
 * A - C becomes the per-block add, so that a one-call block still costs
 * A. With one call count only, the slope is not seen: C is the quantile q
 * of (D - L x factor - A) / (c - 1) over the blocks, as A was fitted. */
static int split_add(struct cta_device_model *out, struct cta_calib_report *rep,
                     const struct fit *fit, double q)
{
	if (!fit->call_d.n || !(out->spin_add_mask & 1))
		return 0;
	double a = out->spin_add_ns[1];
	struct call_pt *pt = malloc(fit->call_d.n * sizeof(*pt));
	if (!pt)
		return CTA_ENOMEM;
	size_t m = 0;
	for (size_t i = 0; i < fit->call_d.n; i++) {
		double y;
		if (beyond_spin(out, fit, i, &y))
			pt[m++] = (struct call_pt){fit->call_n.v[i], fit->call_ns.v[i], y};
	}
	rep->n_call_split = m;
	if (!m) {
		free(pt);
		return 0;
	}
	qsort(pt, m, sizeof(*pt), cmp_call_pt);
	/* The groups' medians, written over the front of pt. */
	size_t np = 0;
	for (size_t i = 0; i < m;) {
		size_t j = i;
		while (j < m && pt[j].calls == pt[i].calls && pt[j].len == pt[i].len)
			j++;
		pt[np++] = (struct call_pt){pt[i].calls, pt[i].len, pt[i + (j - i - 1) / 2].y};
		i = j;
	}
	double c, sx = 0, sy = 0, sxx = 0, sxy = 0;
	for (size_t i = 0; i < np; i++) {
		double x = (double)pt[i].calls;
		sx += x;
		sy += pt[i].y;
		sxx += x * x;
		sxy += x * pt[i].y;
	}
	double den = (double)np * sxx - sx * sx;
	if (np >= 2 && den > 0.5) {
		c = ((double)np * sxy - sx * sy) / den;
	} else {
		double *est = malloc(m * sizeof(*est));
		if (!est) {
			free(pt);
			return CTA_ENOMEM;
		}
		/* pt was reduced to its medians: the samples again. */
		size_t k = 0;
		for (size_t i = 0; i < fit->call_d.n; i++) {
			double y;
			if (beyond_spin(out, fit, i, &y))
				est[k++] = (y - a) / (double)(fit->call_n.v[i] - 1);
		}
		qsort(est, k, sizeof(*est), cmp_dbl);
		c = est[(size_t)floor(q * (double)(k - 1))];
		free(est);
	}
	free(pt);
	if (!(c > 0))
		c = 0;
	if (c > a)
		c = a;
	c = floor(c + 0.5);
	for (unsigned r = 1; r <= CTA_DEVICE_MAX_RESIDENT; r++)
		if (out->spin_add_mask >> (r - 1) & 1)
			out->spin_add_ns[r] = (uint32_t)c;
	out->spin_block_add_ns = (unsigned)(a - c);
	return fit_issue(out, rep, fit, a, c);
}

/* The duration model. Per resident count r, each distinct requested time
 * L gives one point (L, D): the quantile q of its blocks' durations. With
 * two or more points, the least-squares line D = add + scale * L through
 * them (each time weighing the same, however many blocks it has) gives
 * spin_scale and spin_add at r; a negative intercept gives add 0 and the
 * line through the origin. With one point, spin_add comes from the fitted
 * counts by the model's own lookup rule (the largest fitted count below r,
 * else the smallest above) and spin_scale is (D - add) / L; with no fitted
 * count at all, no spin_add is written and spin_scale is D / L, as before
 * spin_add existed. */
static int fit_durations(struct cta_device_model *out, struct cta_calib_report *rep,
                         struct fit *fit, double q)
{
	memset(out->spin_scale_ppm, 0, sizeof(out->spin_scale_ppm));
	memset(out->spin_add_ns, 0, sizeof(out->spin_add_ns));
	out->spin_add_mask = 0;
	struct len_point one[CTA_DEVICE_MAX_RESIDENT + 1] = {{0, 0, 0}};
	/* With the issue gate the slow blocks are the gate's: the factors
	 * describe a block that runs at once, its median; the adds stay at q. */
	double qf = out->spin_gate_threads ? 0.5 : q;
	uint64_t fitted = 0; /* bit r - 1: spin_add fitted at r */
	int any_spin = 0, add_known = 0;
	double add0 = 0;
	for (unsigned r = 1; r <= CTA_DEVICE_MAX_RESIDENT; r++) {
		size_t n = fit->spin[r].n;
		if (!(rep->n_spin[r] = n))
			continue;
		struct len_dur *v = malloc(n * sizeof(*v));
		struct len_point *pt = malloc(n * sizeof(*pt));
		if (!v || !pt) {
			free(v);
			free(pt);
			return CTA_ENOMEM;
		}
		for (size_t i = 0; i < n; i++)
			v[i] = (struct len_dur){fit->spin_len[r].v[i], fit->spin[r].v[i]};
		qsort(v, n, sizeof(*v), cmp_len_dur);
		size_t np = 0;
		for (size_t i = 0; i < n;) {
			size_t j = i;
			while (j < n && v[j].len == v[i].len)
				j++;
			size_t m = j - i;
			pt[np++] = (struct len_point){
			    (double)v[i].len, (double)v[i + (size_t)floor(q * (double)(m - 1))].d,
			    (double)v[i + (size_t)floor(qf * (double)(m - 1))].d};
			i = j;
		}
		free(v);
		rep->n_spin_lengths[r] = (unsigned)np;
		any_spin = 1;
		if (np == 1) {
			one[r] = pt[0];
			free(pt);
			continue;
		}
		/* One per-call add for every count: the lowest count with two or
		 * more times fixes it (there blocks run alone, and the overshoot
		 * is the call's own cost); higher counts, whose slow blocks mix
		 * two populations, fit only their factor through it. */
		if (!add_known) {
			double ml = 0, md = 0, sxx = 0, sxy = 0;
			for (size_t i = 0; i < np; i++) {
				ml += pt[i].len / (double)np;
				md += pt[i].d / (double)np;
			}
			for (size_t i = 0; i < np; i++) {
				sxx += (pt[i].len - ml) * (pt[i].len - ml);
				sxy += (pt[i].len - ml) * (pt[i].d - md);
			}
			double sc = sxy / sxx;
			add0 = sc > 0 ? md - sc * ml : 0;
			if (!(add0 > 0))
				add0 = 0;
			add0 = floor(add0 + 0.5);
			if (add0 > CTA_DEVICE_SPIN_ADD_MAX)
				add0 = CTA_DEVICE_SPIN_ADD_MAX;
			add_known = 1;
		}
		double sll = 0, sld = 0;
		for (size_t i = 0; i < np; i++) {
			sll += pt[i].len * pt[i].len;
			sld += pt[i].len * (pt[i].df - add0);
		}
		free(pt);
		double scale = sld / sll, add = add0;
		if (!(scale > 0)) {
			scale = 1e-6;
		}
		out->spin_scale_ppm[r] = clamp_ppm(scale * 1e6);
		out->spin_add_ns[r] = (uint32_t)add;
		fitted |= 1ull << (r - 1);
	}
	if (!any_spin) {
		note(rep, "no block with a start and an end: no duration model fitted");
		return 0;
	}
	/* Counts with one requested time. */
	out->spin_add_mask = fitted;
	out->spin_block_add_ns = 0;
	for (unsigned r = 1; r <= CTA_DEVICE_MAX_RESIDENT; r++) {
		if (!rep->n_spin[r] || fitted >> (r - 1) & 1)
			continue;
		double add = fitted ? (double)cta_device_spin_add_ns(out, r) : 0;
		if (add >= one[r].df)
			add = 0;
		out->spin_scale_ppm[r] = clamp_ppm((one[r].df - add) * 1e6 / one[r].len);
		if (fitted) {
			out->spin_add_ns[r] = (uint32_t)add;
			out->spin_add_mask |= 1ull << (r - 1);
		}
	}
	return split_add(out, rep, fit, q);
}

int cta_trace_calibrate(struct cta_device_model *out, struct cta_calib_report *report,
                        const struct cta_device_model *base, const struct cta_trace *const *traces,
                        size_t n, char *errbuf, size_t errlen)
{
	return cta_trace_calibrate_opts(out, report, base, traces, n, NULL, errbuf, errlen);
}

/* ---- cta_trace_calibrate_opts, in stages --------------------------------- */

static int check_inputs(const struct cta_trace *const *traces, size_t n,
                        const struct cta_calib_opts *opts, char *errbuf, size_t errlen)
{
	if (!n)
		return cta__analysis_fail(errbuf, errlen, "no traces to calibrate from");
	if (!(opts->quantile >= 0 && opts->quantile <= 1))
		return cta__analysis_fail(
		    errbuf, errlen, "duration quantile %g is not between 0 and 1", opts->quantile);
	for (size_t i = 1; i < n; i++)
		if (strcmp(traces[i]->header.device, traces[0]->header.device))
			return cta__analysis_fail(
			    errbuf, errlen,
			    "traces of different devices: '%s' (trace 1) and '%s' (trace %zu)",
			    traces[0]->header.device, traces[i]->header.device, i + 1);
	return 0;
}

/* The number of SMs the traces show (highest SM id that started a block,
 * plus one), over the traces not marked duration-only. */
static int observed_sms(const struct cta_trace *const *traces, size_t n, const unsigned char *donly,
                        unsigned *sm_count, char *errbuf, size_t errlen)
{
	uint64_t max_sm = 0;
	int any = 0;
	for (size_t i = 0; i < n; i++)
		for (size_t j = 0; !(donly && donly[i]) && j < traces[i]->count; j++) {
			const struct cta_trace_rec *r = &traces[i]->recs[j];
			if (r->ev != CTA_TEV_START || r->sm == CTA_TRACE_NONE)
				continue;
			if (r->sm >= CTA_DEVICE_MAX_SMS) {
				cta__analysis_fail(errbuf, errlen,
				                   "SM id %" PRIu64
				                   " exceeds the %d SMs a model can describe",
				                   r->sm, CTA_DEVICE_MAX_SMS);
				return CTA_ERANGE;
			}
			if (r->sm > max_sm)
				max_sm = r->sm;
			any = 1;
		}
	if (!any)
		return cta__analysis_fail(errbuf, errlen, "the traces hold no block starts");
	*sm_count = (unsigned)max_sm + 1;
	return 0;
}

/* Every sample the fits use, trace by trace: block durations (when asked
 * for), launch latency and first waves of kernels that found the device
 * idle, dispatch-to-start, cancel round trips, emulated CLC costs and the
 * gaps between a block's end and the next start on its SM. */
static int gather(struct fit *fit, struct cta_calib_report *rep,
                  const struct cta_device_model *base, const struct cta_trace *const *traces,
                  size_t n, const struct cta_calib_opts *opts, int want_spin, unsigned nsm)
{
	const unsigned char *donly = opts->duration_only;
	uint8_t *seen = malloc(nsm);
	fit->pos_sum = calloc(nsm, sizeof(double));
	struct cta__kfacts *kf = malloc(CTA_TRACE_MAX_KERNELS * sizeof(*kf));
	int rc = (!seen || !fit->pos_sum || !kf) ? CTA_ENOMEM : 0;
	for (size_t i = 0; i < n && !rc; i++) {
		const struct cta_trace *t = traces[i];
		if (want_spin) {
			uint64_t kns[CTA_TRACE_MAX_KERNELS];
			for (unsigned k = 0; k < t->header.kernel_count; k++) {
				kns[k] = opts->trace_ns && opts->trace_ns[i] ? opts->trace_ns[i]
				                                             : opts->block_ns;
				for (size_t j = 0; j < opts->n_named; j++)
					if (!strcmp(opts->named[j].name, t->header.kernels[k].name))
						kns[k] = opts->named[j].ns;
			}
			cta__analysis_kernel_facts(kf, t);
			rc =
			    spin_samples(fit, t, kf, kns, base, opts->work ? &opts->work[i] : NULL);
		}
		if (rc || (donly && donly[i]))
			continue;
		double tick = t->header.tick_ns;
		if (tick > rep->tick_ns)
			rep->tick_ns = tick;
		cta__analysis_kernel_facts(kf, t);
		for (unsigned k = 1; k < t->header.kernel_count && !rc; k++) {
			/* launch_gap_ns: a launch on another stream than the one
			 * before it, released with it, that found room at once
			 * (its first block before the first end of the one
			 * before): its first blocks start the host's gap later. */
			const struct cta_trace_kernel *a = &t->header.kernels[k - 1],
			                              *b = &t->header.kernels[k];
			if (a->stream != b->stream && a->release_ns == b->release_ns &&
			    kf[k - 1].has_start && kf[k].has_start && kf[k - 1].has_end &&
			    kf[k].first_start >= kf[k - 1].first_start &&
			    kf[k].first_start < kf[k - 1].first_end)
				rc = push(&fit->launch_gap,
				          kf[k].first_start - kf[k - 1].first_start);
		}
		for (unsigned k = 0; k < t->header.kernel_count && !rc; k++) {
			/* A kernel launched behind a busy one waits for room, which
			 * says nothing about launch latency: only idle-device
			 * kernels give samples. */
			if (!on_idle_device(kf, t->header.kernel_count, k))
				continue;
			if (kf[k].has_launch && kf[k].first_start >= kf[k].launch)
				rc = push(&fit->launch, kf[k].first_start - kf[k].launch);
			if (kf[k].has_end && kf[k].last_start >= kf[k].first_end)
				fit->filled = 1;
			if (!rc) {
				rc = first_wave(fit, t, &kf[k], k, nsm, seen);
				rep->kernels_used++;
			}
		}
		if (!rc)
			rc = pair_latency(&fit->block_start, t, CTA_TEV_DISPATCH, CTA_TEV_START);
		if (!rc)
			rc = pair_latency(&fit->cancel, t, CTA_TEV_CANCEL, CTA_TEV_CANCEL_DONE);
		if (!rc && !strcmp(t->header.clc, "emulated")) {
			fit->clc_emulated = 1;
			rc = clc_samples(fit, t, opts->clc_ns ? opts->clc_ns[i] : 0,
			                 opts->clc_stream ? opts->clc_stream[i] : 0, base);
			if (!rc)
				rc = clc_late_samples(fit, t, opts->clc_ns ? opts->clc_ns[i] : 0,
				                      base);
		}
		if (!rc)
			rc = retire_gaps(&fit->retire, t, kf);
	}
	free(seen);
	free(kf);
	return rc;
}

/* The SM count and topology of the result: the base's, unless the traces
 * show another count. Returns the SM count the model keeps. */
static unsigned fit_topology(struct cta_device_model *out, struct cta_calib_report *rep,
                             const struct cta_device_model *base, unsigned sm_count, int filled)
{
	if (sm_count < base->sm_count && !filled) {
		/* A small kernel that never reached every SM says nothing about
		 * the SMs it missed: the base's count and topology stay. */
		char msg[200];
		snprintf(
		    msg, sizeof(msg),
		    "only %u of the base's %u SMs started a block and no kernel filled the GPU: "
		    "sm_count kept, unseen SMs placed last",
		    sm_count, base->sm_count);
		note(rep, msg);
		return base->sm_count;
	}
	if (sm_count != base->sm_count) {
		/* The base's TPC/GPC map describes another SM count and cannot be
		 * cut or stretched consistently: a plain one is built instead
		 * (TPCs of consecutive SMs, TPCs dealt to GPCs in turn). */
		unsigned per_tpc = base->sms_per_tpc ? base->sms_per_tpc : 2;
		unsigned ntpc = (sm_count + per_tpc - 1) / per_tpc;
		unsigned g = base->gpc_count ? base->gpc_count : 1;
		if (g > ntpc)
			g = ntpc;
		out->sms_per_tpc = per_tpc;
		out->gpc_count = g;
		memset(out->tpc_of_sm, 0, sizeof(out->tpc_of_sm));
		memset(out->gpc_of_sm, 0, sizeof(out->gpc_of_sm));
		for (unsigned s = 0; s < sm_count; s++) {
			out->tpc_of_sm[s] = (uint16_t)(s / per_tpc);
			out->gpc_of_sm[s] = (uint16_t)((s / per_tpc) % g);
		}
		/* The base's sweep names SMs of its own topology. */
		out->sweep_first_len = 0;
		if (out->placement == CTA_PLACE_SWEEP)
			out->placement = CTA_PLACE_SPREAD;
		char msg[200];
		snprintf(
		    msg, sizeof(msg),
		    "%u SMs observed, the base model has %u: SM topology rebuilt (TPC = SM / %u, "
		    "%u GPCs in turn); measure the real one for this GPU",
		    sm_count, base->sm_count, per_tpc, g);
		note(rep, msg);
	}
	return sm_count;
}

/* SMs in order of their mean position in the first waves (the order
 * placement, which the sweep rule then replaces where it can). */
static int fit_mean_order(struct cta_device_model *out, struct cta_calib_report *rep,
                          const struct fit *fit, unsigned final_sm)
{
	if (!fit->observations) {
		note(rep, "no kernel started on an idle device: placement kept from the base");
		return 0;
	}
	struct order_ent *ord = malloc(final_sm * sizeof(*ord));
	if (!ord)
		return CTA_ENOMEM;
	for (unsigned s = 0; s < final_sm; s++)
		ord[s] = (struct order_ent){fit->pos_sum[s] / fit->observations, s};
	qsort(ord, final_sm, sizeof(*ord), cmp_order);
	out->placement = CTA_PLACE_ORDER;
	out->placement_order_len = final_sm;
	for (unsigned s = 0; s < final_sm; s++)
		out->placement_order[s] = (uint16_t)ord[s].sm;
	free(ord);
	return 0;
}

/* With replay_waves, the measured first waves by grid size: block i of
 * the grid started on wave[i], for the prefix of blocks that started
 * before any block of the kernel ended. */
static void replay_waves(struct cta_device_model *out, const struct cta_trace *const *traces,
                         size_t n, const unsigned char *donly, unsigned final_sm)
{
	for (size_t ti = 0; ti < n; ti++) {
		const struct cta_trace *t = traces[ti];
		for (unsigned kk = 0; kk < t->header.kernel_count && !(donly && donly[ti]); kk++) {
			const struct cta_trace_kernel *kd = &t->header.kernels[kk];
			uint64_t grid = (uint64_t)kd->grid[0] * kd->grid[1] * kd->grid[2];
			if (out->wave_order_count == CTA_DEVICE_MAX_WAVE_ORDERS)
				continue;
			uint64_t first_end = UINT64_MAX;
			for (size_t r = 0; r < t->count; r++)
				if (t->recs[r].ev == CTA_TEV_END && t->recs[r].kernel == kk &&
				    t->recs[r].t_ns < first_end)
					first_end = t->recs[r].t_ns;
			struct cta_wave_order *w = &out->wave_order[out->wave_order_count];
			unsigned cap =
			    grid < CTA_DEVICE_MAX_WAVE ? (unsigned)grid : CTA_DEVICE_MAX_WAVE;
			int *sm = malloc(cap * sizeof(int));
			if (!sm)
				continue;
			for (unsigned b = 0; b < cap; b++)
				sm[b] = -1;
			for (size_t r = 0; r < t->count; r++) {
				const struct cta_trace_rec *rec = &t->recs[r];
				if (rec->ev == CTA_TEV_START && rec->kernel == kk &&
				    rec->block < cap && rec->t_ns < first_end && rec->sm < final_sm)
					sm[rec->block] = (int)rec->sm;
			}
			unsigned len = 0;
			while (len < cap && sm[len] >= 0) {
				w->sm[len] = (uint16_t)sm[len];
				len++;
			}
			free(sm);
			int have = 0; /* one wave per (grid size, wave length) */
			for (unsigned o = 0; o < out->wave_order_count; o++)
				have |= out->wave_order[o].grid == grid &&
				        out->wave_order[o].len == len;
			if (len && !have) {
				w->grid = grid;
				w->len = len;
				out->wave_order_count++;
				out->placement = CTA_PLACE_ORDER;
			}
		}
	}
}

/* Launch, dispatch, block start, retire and cancel latencies from their
 * samples; a latency without samples keeps the base's value. */
static void fit_latencies(struct cta_device_model *out, struct cta_calib_report *rep,
                          struct fit *fit)
{
	if ((rep->n_launch = fit->launch.n))
		out->launch_latency_ns = median(&fit->launch);
	if ((rep->n_launch_gap = fit->launch_gap.n))
		out->launch_gap_ns = (unsigned)median(&fit->launch_gap);
	/* From the largest first wave: on an H100 every first wave, of 16 or of
	 * 1056 blocks, starts within about 300 ns, so a small wave's spread
	 * over its size overstates the per-block cost that a large wave pays. */
	if ((rep->n_dispatch = fit->dispatch.n))
		out->dispatch_latency_ns = (fit->wave_spread + fit->wave_gaps / 2) / fit->wave_gaps;
	if ((rep->n_block_start = fit->block_start.n))
		out->block_start_ns = median(&fit->block_start);
	if ((rep->n_retire = fit->retire.n)) {
		/* The gap also holds the dispatch-to-start time that the model
		 * adds on its own. */
		uint64_t g = median(&fit->retire);
		out->block_retire_ns = g > out->block_start_ns ? g - out->block_start_ns : 0;
	}
	if ((rep->n_cancel = fit->cancel.n))
		out->cancel_latency_ns = median(&fit->cancel);
}

static void note_below_tick(const struct cta_device_model *out, struct cta_calib_report *rep)
{
	const struct {
		uint64_t n, v;
		const char *name;
	} fitted[] = {
	    {rep->n_launch, out->launch_latency_ns, "launch"},
	    {rep->n_dispatch, out->dispatch_latency_ns, "dispatch"},
	    {rep->n_block_start, out->block_start_ns, "block start"},
	    {rep->n_retire, out->block_retire_ns, "retire"},
	    {rep->n_cancel, out->cancel_latency_ns, "cancel"},
	};
	for (size_t i = 0; i < sizeof(fitted) / sizeof(fitted[0]); i++)
		if (fitted[i].n && (double)fitted[i].v < rep->tick_ns) {
			char msg[96];
			snprintf(msg, sizeof(msg), "%s latency is below the timer tick (%g ns)",
			         fitted[i].name, rep->tick_ns);
			note(rep, msg);
		}
}

/* First block start to last block end of trace t, ns (0: none). */
static uint64_t busy_span(const struct cta_trace *t)
{
	uint64_t t0 = UINT64_MAX, t1 = 0;
	for (size_t i = 0; i < t->count; i++) {
		const struct cta_trace_rec *r = &t->recs[i];
		if (r->ev == CTA_TEV_START && r->t_ns < t0)
			t0 = r->t_ns;
		if (r->ev == CTA_TEV_END && r->t_ns > t1)
			t1 = r->t_ns;
	}
	return t0 != UINT64_MAX && t1 > t0 ? t1 - t0 : 0;
}

/* The blocking kernels' terms (wait_load_ns, wait_atomic_ns,
 * wait_turn_ps, wait_sync_ps, wait_hit_ns, wait_poll_ps): each probed trace j gives its busy span
 * H_j and the simulator's, S_j(p) ~ busy0_j + sum_i (p_i - at_i) g_ij
 * with g_ij its slope in term i; p minimises sum_j (S_j(p) / H_j - 1)^2,
 * a term none of the probes moves kept from the base, a term that comes
 * out negative set to 0 and the others fitted again. */
static void fit_wait(struct cta_device_model *out, const struct cta_trace *const *traces, size_t n,
                     const struct cta_calib_wait *w)
{
	enum { K = CTA_CALIB_WAIT_TERMS };
	double a[K][K] = {{0}}, b[K] = {0};
	int any = 0;
	for (size_t j = 0; w && j < n; j++) {
		uint64_t h = w[j].busy0 ? busy_span(traces[j]) : 0;
		if (!h)
			continue;
		any = 1;
		double g[K], r = (double)w[j].busy0 / (double)h - 1;
		for (int i = 0; i < K; i++) {
			g[i] = w[j].step[i] ? ((double)w[j].busy[i] - (double)w[j].busy0) /
			                          (double)w[j].step[i] / (double)h
			                    : 0;
			r -= g[i] * (double)w[j].at[i];
		}
		/* Its residual S/H - 1 is r + sum_i g_i p_i. */
		for (int i = 0; i < K; i++) {
			for (int k = 0; k < K; k++)
				a[i][k] += g[i] * g[k];
			b[i] -= g[i] * r;
		}
	}
	if (!any)
		return;
	unsigned *term[K] = {&out->wait_load_ns, &out->wait_atomic_ns, &out->wait_turn_ps,
	                     &out->wait_sync_ps, &out->wait_hit_ns,    &out->wait_poll_ps};
	int fixed[K];
	double p[K];
	for (int i = 0; i < K; i++) {
		fixed[i] = a[i][i] <= 1e-30;
		p[i] = fixed[i] ? (double)*term[i] : 0;
	}
	for (int round = 0; round <= K; round++) {
		/* The free terms' normal equations, the fixed ones moved right. */
		double m[K][K + 1];
		for (int i = 0; i < K; i++) {
			for (int k = 0; k < K; k++)
				m[i][k] = fixed[i] ? (i == k) : fixed[k] ? 0 : a[i][k];
			m[i][K] = fixed[i] ? p[i] : b[i];
			for (int k = 0; k < K; k++)
				if (!fixed[i] && fixed[k])
					m[i][K] -= a[i][k] * p[k];
		}
		for (int c = 0; c < K; c++) {
			int piv = c;
			for (int r = c + 1; r < K; r++)
				if (fabs(m[r][c]) > fabs(m[piv][c]))
					piv = r;
			if (fabs(m[piv][c]) < 1e-30)
				return; /* the probes cannot tell the terms apart: the base's */
			for (int k = 0; k <= K; k++) {
				double t = m[c][k];
				m[c][k] = m[piv][k];
				m[piv][k] = t;
			}
			for (int r = 0; r < K; r++)
				if (r != c) {
					double f = m[r][c] / m[c][c];
					for (int k = c; k <= K; k++)
						m[r][k] -= f * m[c][k];
				}
		}
		int neg = 0;
		for (int i = 0; i < K; i++) {
			p[i] = m[i][K] / m[i][i];
			if (!fixed[i] && p[i] < 0) {
				fixed[i] = 1;
				p[i] = 0;
				neg = 1;
			}
		}
		if (!neg)
			break;
	}
	for (int i = 0; i < K; i++)
		*term[i] = p[i] < 0 ? 0 : p[i] > 1e6 ? 1000000u : (unsigned)(p[i] + 0.5);
}

/* Checks the inputs, gathers every sample, then fits in order: topology,
 * placement (mean order, then the sweep rule or the replayed waves),
 * latencies, durations, emulated CLC, blocking kernels. */
int cta_trace_calibrate_opts(struct cta_device_model *out, struct cta_calib_report *report,
                             const struct cta_device_model *base,
                             const struct cta_trace *const *traces, size_t n,
                             const struct cta_calib_opts *opts, char *errbuf, size_t errlen)
{
	static const struct cta_calib_opts default_opts = CTA_CALIB_OPTS_INIT;
	if (!opts)
		opts = &default_opts;
	struct cta_calib_report local;
	struct cta_calib_report *rep = report ? report : &local;
	memset(rep, 0, sizeof(*rep));
	if (errbuf && errlen)
		errbuf[0] = 0;
	int rc = check_inputs(traces, n, opts, errbuf, errlen);
	if (rc)
		return rc;
	const unsigned char *donly = opts->duration_only;
	int want_spin = opts->block_ns || opts->n_named;
	for (size_t i = 0; opts->trace_ns && i < n; i++)
		want_spin |= opts->trace_ns[i] != 0;
	for (size_t i = 0; opts->work && i < n; i++)
		want_spin |= opts->work[i].n != 0;
	unsigned sm_count = 0;
	if ((rc = observed_sms(traces, n, donly, &sm_count, errbuf, errlen)))
		return rc;
	/* Positions are kept for the base's SMs too, in case it has more. */
	unsigned nsm = sm_count > base->sm_count ? sm_count : base->sm_count;
	if (nsm > CTA_DEVICE_MAX_SMS)
		nsm = CTA_DEVICE_MAX_SMS;

	struct fit fit = {0};
	if ((rc = gather(&fit, rep, base, traces, n, opts, want_spin, nsm)))
		goto fail;

	*out = *base;
	rep->traces = (unsigned)n;
	rep->sm_count = sm_count;
	unsigned final_sm = fit_topology(out, rep, base, sm_count, fit.filled);
	out->sm_count = final_sm;
	if ((rc = fit_mean_order(out, rep, &fit, final_sm))) {
		free_fit(&fit);
		return rc;
	}

	/* The sweep rule over the base's topology, unless the recorded waves
	 * are to be replayed or the topology had to be rebuilt. */
	out->wave_order_count = 0;
	int sweep = !opts->replay_waves && final_sm == base->sm_count && base->gpc_count;
	if (sweep) {
		if ((rc = cta__analysis_fit_sweep(out, traces, n, donly, &rep->sweep_placed,
		                                  &rep->sweep_total)))
			goto fail;
		if (!rep->sweep_total) {
			note(rep,
			     "no single kernel started on an idle device: sweep rule kept from "
			     "the base");
			out->placement = base->placement;
		}
	} else {
		replay_waves(out, traces, n, donly, final_sm);
	}

	if ((rc = fit_cluster_slots(out, traces, n, nsm)))
		goto fail;
	fit_latencies(out, rep, &fit);
	if (want_spin)
		out->spin_by_threads = base->max_threads_per_sm ? 2 : 0;
	/* CLC recorded under the CUDA backend's emulation is modelled as it
	 * (after the durations: its fit uses the per-call add). */
	if (want_spin && ((rc = fit_gate(out, &fit, base->max_threads_per_sm)) ||
	                  (rc = fit_durations(out, rep, &fit, opts->quantile))))
		goto fail;
	if (want_spin) {
		fit_regs_gate(out, &fit);
		fit_regs_pass(out, &fit);
		fit_regs_order(out, &fit);
		if ((rc = fit_regs_wait(out, &fit)) || (rc = fit_regs_late(out, &fit)))
			goto fail;
		fit_regs_hold(out, &fit);
	}
	fit_clc(out, &fit);
	fit_wait(out, traces, n, opts->wait);
	note_below_tick(out, rep);
	free_fit(&fit);
	return 0;
fail:
	free_fit(&fit);
	cta__analysis_fail(errbuf, errlen, "%s", cta_strerror(rc));
	return rc;
}
