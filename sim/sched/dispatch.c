/* The block dispatcher: which kernel's pending block goes next (priority
 * first, then launch order, a later kernel getting only the room the
 * earlier ones cannot use), and on which SM (the placement policy). Also the
 * per-SM resource accounting. Running blocks are never preempted. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "exec/exec.h"
#include "sched/sched.h"

static unsigned round_up(unsigned v, unsigned unit)
{
	return unit ? (v + unit - 1) / unit * unit : v;
}

/* Placement rule 8 (sweep_carry): where k's sweep starts, from the
 * state the launch before it left: the record clears of every launch of
 * the run for the first (the CUDA backend clears them all before it),
 * else the GPC after that of the last block placed outside the first
 * SMs (the start before, where there is none), the first SMs' other half
 * after a launch of two or more blocks (their first half after one of one
 * block), and turns as late as the longest
 * first wave dealt before it makes them. */
static int carried_start(struct cta_sim *s, const struct cta__kernel *k, struct cta_sweep_start *st)
{
	const struct cta_device_model *d = &s->dev;
	const struct cta__kernel *x = s->carry_prev;
	if (!x) {
		uint64_t *g = malloc((size_t)s->nkernels * sizeof *g);
		if (!g)
			return CTA_ENOMEM;
		for (unsigned i = 0; i < s->nkernels; i++)
			g[i] = s->kernels[i]->nblocks;
		cta_device_sweep_start_clears(d, g, s->nkernels, st);
		free(g);
		return 0;
	}
	(void)k;
	unsigned gpc0 = x->sweep_gpc0;
	*st = (struct cta_sweep_start){0};
	/* Blocks on the first SMs leave the GPC where it was. */
	st->gpc0 = s->carry_gpc && d->gpc_count ? s->carry_gpc % d->gpc_count : gpc0;
	/* A launch of one block took the first of the first SMs and leaves
	 * their first half next; a longer one the half it did not start at;
	 * a clustered launch starts the first TPCs at the one that half
	 * leaves. */
	st->rot = x->nblocks >= 2 ? x->sweep_rot ^ 1 : x->sweep_rot;
	st->cluster_rot = st->rot ? d->cluster_carry_rot_half : d->cluster_carry_rot;
	st->late = s->carry_turns == 1;
	st->mid = s->carry_turns == 2;
	st->steady = s->carry_turns == 3;
	return 0;
}

static int part_on(const struct cta_sim *s, const struct cta__kernel *k);
static int fits(const struct cta_sim *s, const struct cta__sm *m, const struct cta__kernel *k);
static void take(struct cta__sm *m, const struct cta__kernel *k);

/* The TPCs outside the first SMs (rule 2's passes deal them). */
static unsigned main_tpcs(const struct cta_sim *s)
{
	const struct cta_device_model *d = &s->dev;
	unsigned n = 0, last = UINT32_MAX;
	for (unsigned i = 0; i < s->nsms; i++)
		if (!s->sms[i].sweep_first && d->tpc_of_sm[i] != last) {
			last = d->tpc_of_sm[i];
			n++;
		}
	return n;
}

/* Placement rule 9 (sweep_conc): how many more of k's blocks (one-CTA)
 * fit on m, at most its occupancy. */
static unsigned room_for(const struct cta_sim *s, const struct cta__sm *m,
                         const struct cta__kernel *k)
{
	const struct cta_device_model *d = &s->dev;
	if (part_on(s, k)) {
		struct cta__sm c = *m;
		unsigned n = 0;
		while (n < k->occupancy && fits(s, &c, k)) {
			take(&c, k);
			n++;
		}
		return n;
	}
	if (m->blocks >= d->max_blocks_per_sm || m->threads > d->max_threads_per_sm ||
	    m->warps > d->max_warps_per_sm || m->regs > k->regs_usable || m->smem > d->smem_per_sm)
		return 0;
	unsigned n = d->max_blocks_per_sm - m->blocks;
#define ROOM_MIN(free_, need_)                                                                     \
	do {                                                                                       \
		if ((need_) && (free_) / (need_) < n)                                              \
			n = (free_) / (need_);                                                     \
	} while (0)
	ROOM_MIN(d->max_threads_per_sm - m->threads, k->threads);
	ROOM_MIN(d->max_warps_per_sm - m->warps, k->warps);
	ROOM_MIN(k->regs_usable - m->regs, k->regs);
	ROOM_MIN(d->smem_per_sm - m->smem, k->smem);
#undef ROOM_MIN
	return n < k->occupancy ? n : k->occupancy;
}

/* Placement rule 9 (sweep_conc): k's first wave dealt level by level
 * over the room the kernels before it left, where that room is uneven:
 * an SM's level is the number of k's blocks its residents stand for
 * (k's occupancy less the blocks of k that still fit). Each round takes
 * the SMs of the lowest level: the first SMs from half `rot`, then the
 * other SMs GPC by GPC from gpc0, a TPC's SMs one after the other; a
 * round with fewer blocks left than SMs gives its TPCs one block each,
 * those holding the fewest blocks first (then the lowest TPC id), then
 * second SMs in the same order. *outp is NULL where the room is even
 * (the sweep of rules 1-8 applies) and on no memory (returns
 * CTA_ENOMEM). */
static int conc_deal(struct cta_sim *s, const struct cta__kernel *k, unsigned gpc0, unsigned rot,
                     unsigned **outp, unsigned *lenp, unsigned *stepp)
{
	const struct cta_device_model *d = &s->dev;
	const unsigned n = s->nsms;
	*outp = NULL;
	*lenp = 0;
	unsigned *room = malloc((size_t)n * sizeof *room);
	unsigned *lvl = malloc((size_t)n * sizeof *lvl);
	unsigned *ord = malloc((size_t)n * sizeof *ord);       /* main SMs, GPC order */
	unsigned *tst = malloc(((size_t)n + 1) * sizeof *tst); /* TPC starts in ord */
	unsigned *give = calloc((size_t)n + 1, sizeof *give);
	unsigned *rank = malloc(((size_t)n + 1) * sizeof *rank);
	unsigned *key = malloc(((size_t)n + 1) * sizeof *key);
	unsigned *out = NULL;
	int rc = CTA_ENOMEM;
	if (!room || !lvl || !ord || !tst || !give || !rank || !key)
		goto done;
	uint64_t total = 0;
	unsigned lo = UINT32_MAX, hi = 0;
	for (unsigned i = 0; i < n; i++) {
		room[i] = room_for(s, &s->sms[i], k);
		lvl[i] = k->occupancy - room[i];
		total += room[i];
		if (room[i]) {
			lo = lvl[i] < lo ? lvl[i] : lo;
			hi = lvl[i] > hi ? lvl[i] : hi;
		}
	}
	rc = 0;
	if (!total || lo == hi || !d->gpc_count)
		goto done;
	uint64_t r = k->nblocks - k->next_unit;
	if (r > total)
		r = total;
	out = malloc((size_t)r * sizeof *out);
	if (!out) {
		rc = CTA_ENOMEM;
		goto done;
	}
	unsigned nm = 0, nt = 0;
	for (unsigned g = 0; g < d->gpc_count; g++) {
		unsigned gg = (gpc0 + g) % d->gpc_count;
		for (unsigned i = 0; i < n; i++) {
			if (s->sms[i].sweep_first || d->gpc_of_sm[i] != gg)
				continue;
			if (!nm || d->tpc_of_sm[i] != d->tpc_of_sm[ord[nm - 1]])
				tst[nt++] = nm;
			ord[nm++] = i;
		}
	}
	tst[nt] = nm;
	unsigned len = 0, step = 0;
#define CONC_EMIT(sm_)                                                                             \
	do {                                                                                       \
		out[len++] = (sm_);                                                                \
		room[(sm_)]--;                                                                     \
		lvl[(sm_)]++;                                                                      \
		r--;                                                                               \
	} while (0)
	while (r) {
		unsigned lm = UINT32_MAX;
		for (unsigned i = 0; i < n; i++)
			if (room[i] && lvl[i] < lm)
				lm = lvl[i];
		for (unsigned j = 0; j < d->sweep_first_len && r; j++) {
			unsigned sm = d->sweep_first[(j + (rot ? d->sweep_first_len / 2 : 0)) %
			                             d->sweep_first_len];
			if (sm < n && room[sm] && lvl[sm] == lm)
				CONC_EMIT(sm);
		}
		unsigned tot = 0, ntp = 0;
		for (unsigned t = 0; t < nt; t++) {
			unsigned e = 0;
			for (unsigned j = tst[t]; j < tst[t + 1]; j++)
				e += room[ord[j]] && lvl[ord[j]] == lm;
			give[t] = e; /* eligible SMs, for now */
			tot += e;
			ntp += e > 0;
		}
		if (!r)
			break;
		if (r >= tot) {
			for (unsigned j = 0; j < nm; j++)
				if (room[ord[j]] && lvl[ord[j]] == lm)
					CONC_EMIT(ord[j]);
			step = 0;
			continue;
		}
		step = r <= ntp ? 1 : 2;
		/* TPCs by the blocks they hold (levels), then by id. */
		unsigned nr = 0;
		for (unsigned t = 0; t < nt; t++) {
			if (!give[t])
				continue;
			unsigned ld = 0;
			for (unsigned j = tst[t]; j < tst[t + 1]; j++)
				ld += lvl[ord[j]];
			unsigned x = nr++;
			while (x && (key[x - 1] > ld ||
			             (key[x - 1] == ld && d->tpc_of_sm[ord[tst[rank[x - 1]]]] >
			                                      d->tpc_of_sm[ord[tst[t]]]))) {
				key[x] = key[x - 1];
				rank[x] = rank[x - 1];
				x--;
			}
			key[x] = ld;
			rank[x] = t;
		}
		unsigned *cnt = key; /* reused: blocks each ranked TPC gets */
		for (unsigned x = 0; x < nr; x++)
			cnt[x] = 0;
		uint64_t left = r;
		for (unsigned round = 0; left; round++)
			for (unsigned x = 0; x < nr && left; x++)
				if (give[rank[x]] > round) {
					cnt[x]++;
					left--;
				}
		for (unsigned t = 0; t < nt; t++)
			give[t] = 0;
		for (unsigned x = 0; x < nr; x++)
			give[rank[x]] = cnt[x];
		for (unsigned t = 0; t < nt; t++)
			for (unsigned j = tst[t]; j < tst[t + 1] && give[t]; j++)
				if (room[ord[j]] && lvl[ord[j]] == lm) {
					give[t]--;
					CONC_EMIT(ord[j]);
				}
	}
#undef CONC_EMIT
	*outp = out;
	*lenp = len;
	*stepp = step;
	out = NULL;
done:
	free(room);
	free(lvl);
	free(ord);
	free(tst);
	free(give);
	free(rank);
	free(key);
	free(out);
	return rc;
}

/* placement = sweep: the SMs of the launch's first wave, block by block
 * (cta_device_sweep_order), computed once per launch; blocks past it
 * follow retire order (spread). */
static int build_sweep(struct cta_sim *s, struct cta__kernel *k)
{
	k->sweep_built = 1;
	uint64_t wave = (uint64_t)k->occupancy * s->nsms;
	if (wave > k->nblocks)
		wave = k->nblocks;
	struct cta_sweep_start st;
	if (s->dev.sweep_carry) {
		const struct cta_device_model *d = &s->dev;
		struct cta__kernel *prev = s->carry_prev;
		int rc = carried_start(s, k, &st);
		if (rc)
			return rc;
		if (d->sweep_conc && prev && k->csize == 1 && d->gpc_count) {
			/* Rule 9: room left uneven by the kernels before. */
			unsigned *co, clen, step;
			rc = conc_deal(s, k, (st.gpc0 + prev->conc_step) % d->gpc_count,
			               prev->sweep_rot, &co, &clen, &step);
			if (rc)
				return rc;
			if (co) {
				k->sweep = co;
				k->sweep_len = clen;
				k->sweep_pos = 0;
				k->sweep_rot = prev->sweep_rot;
				k->sweep_gpc0 = st.gpc0;
				k->conc_step = step;
				s->carry_prev = k;
				return 0;
			}
		}
		k->sweep_rot = st.rot;
		k->sweep_gpc0 = st.gpc0;
		s->carry_prev = k;
		/* The longest first wave so far sets the turns of the next. */
		unsigned t = d->sweep_carry_steady && wave >= d->sweep_carry_steady ? 3
		             : d->sweep_carry_mid && wave >= d->sweep_carry_mid     ? 2
		             : d->sweep_carry_late && wave >= d->sweep_carry_late   ? 1
		                                                                    : 0;
		if (t > s->carry_turns)
			s->carry_turns = t;
	} else {
		uint64_t grid = k->nblocks;
		cta_device_sweep_start_clears(&s->dev, &grid, 1, &st);
	}
	if (wave == 0)
		return 0;
	unsigned *out = malloc((size_t)wave * sizeof *out);
	if (!out)
		return CTA_ENOMEM;
	/* Clusters (an H100's of two CTAs took one TPC each) have a rule of
	 * their own. */
	unsigned len = 0;
	int rc = k->csize > 1
	             ? cta_device_cluster_sweep_order_at(&s->dev, s->nsms, &st, wave, out, &len)
	             : cta_device_sweep_order_at(&s->dev, s->nsms, &st, wave, out, &len);
	if (rc) {
		free(out);
		return rc;
	}
	k->sweep = out;
	k->sweep_len = len;
	k->sweep_pos = 0;
	/* What its last pass leaves for a concurrent kernel's (rule 9). */
	{
		uint64_t rem = wave % s->nsms, nf = 0;
		for (unsigned i = 0; i < s->dev.sweep_first_len; i++)
			nf += s->dev.sweep_first[i] < s->nsms;
		uint64_t last = rem > nf ? rem - nf : 0;
		k->conc_step = !rem ? 0 : last <= main_tpcs(s) ? 1 : 2;
	}
	/* The half of the first SMs it started at (rule 8). */
	for (unsigned i = 0; len && i < s->dev.sweep_first_len; i++)
		if (s->dev.sweep_first[i] == out[0])
			k->sweep_rot = i >= s->dev.sweep_first_len / 2;
	return 0;
}

int cta__sched_kernel_init(struct cta_sim *s, struct cta__kernel *k)
{
	const struct cta_device_model *d = &s->dev;
	unsigned regs = k->l.regs_per_thread ? k->l.regs_per_thread : 32;
	struct cta_block_resources r = {k->l.block[0] * k->l.block[1] * k->l.block[2], regs,
	                                k->l.smem_static, k->l.smem_dynamic};
	cta_limiter lim = CTA_LIMIT_NONE;
	k->occupancy = cta_occupancy_max_blocks(d, &r, &lim);
	k->limiter = lim;
	/* A clustered launch holds fewer on an H100 (cluster_max_blocks_per_sm). */
	if (k->csize > 1 && d->cluster_max_blocks_per_sm &&
	    k->occupancy > d->cluster_max_blocks_per_sm)
		k->occupancy = d->cluster_max_blocks_per_sm;
	if (k->occupancy == 0) {
		cta__base_errf(s,
		               "too many resources requested for launch: kernel %s, block of %u "
		               "threads, %u registers per thread, %zu bytes of shared memory: the "
		               "limiting resource is %s",
		               k->label, r.threads, regs, k->l.smem_static + k->l.smem_dynamic,
		               cta_limiter_name(lim));
		return CTA_ERESOURCES;
	}
	k->threads = r.threads;
	k->warps = (r.threads + d->warp_size - 1) / d->warp_size;
	k->regs = k->warps * round_up(regs * d->warp_size, d->reg_alloc_unit);
	/* Four sub-partitions, as the occupancy calculator counts them: of
	 * each, the whole warps of this kernel's size (fits). */
	unsigned per_warp = k->warps ? k->regs / k->warps : 0;
	k->regs_usable = per_warp ? d->regs_per_sm / 4 / per_warp * per_warp * 4 : d->regs_per_sm;
	k->part_warps = lim == CTA_LIMIT_REGISTERS && per_warp ? d->regs_per_sm / 4 / per_warp : 0;
	k->smem =
	    round_up((unsigned)(k->l.smem_static + k->l.smem_dynamic) + d->smem_reserved_per_block,
	             d->smem_alloc_unit);
	k->smem_bytes = k->l.smem_static + k->l.smem_dynamic;
	k->fit = calloc((s->nsms + 63) / 64, sizeof(uint64_t));
	if (!k->fit)
		return CTA_ENOMEM;
	/* With the carried state (rule 8) the sweep waits for the kernel's
	 * first dispatch, when the launch before it has been dealt. */
	if (d->placement == CTA_PLACE_SWEEP && !d->sweep_carry) {
		int rc = build_sweep(s, k);
		if (rc)
			return rc;
	}
	/* Clusters must fit on one GPC at once. */
	if (k->csize > 1) {
		unsigned best = 0;
		for (unsigned g = 0; g < d->gpc_count; g++) {
			unsigned n = 0;
			for (unsigned i = 0; i < s->nsms; i++)
				n += (d->gpc_of_sm[i] == g) * k->occupancy;
			if (n > best)
				best = n;
		}
		if (best < k->csize) {
			cta__base_errf(
			    s,
			    "kernel %s: a cluster of %u blocks cannot be co-scheduled on one "
			    "GPC (at most %u such blocks fit on a GPC)",
			    k->label, k->csize, best);
			return CTA_ERESOURCES;
		}
	}
	return 0;
}

/* The sub-partitions by placement order (spin_regs_order): the blocks of
 * one CTA of a register-limited kernel take their SM's sub-partitions in
 * the order they are placed there, warp after warp (of the 64-thread
 * register-heavy grids of traces/reference/h100, 944 of 167294 starts
 * would overfill a sub-partition so, 1790 of 5000 by block index in one
 * of them: docs/FIDELITY.md, *The register file*). Such a block fits only
 * where its own sub-partitions have room for its warps, and never takes
 * a slot by refill (cta__sched_can_refill), which skips that test. Blocks
 * of 4k warps take every sub-partition alike: the rule leaves them be. */
static int part_on(const struct cta_sim *s, const struct cta__kernel *k)
{
	return s->dev.spin_regs_order && k->part_warps && k->csize == 1 && k->warps % 4;
}

/* spin_regs_order: whether k's next block finds room for its warps on the
 * sub-partitions its SM's placement order gives it. */
static int part_fits(const struct cta__sm *m, const struct cta__kernel *k)
{
	unsigned need[4] = {0, 0, 0, 0};
	for (unsigned i = 0; i < k->warps; i++)
		need[(m->part_next + i) % 4]++;
	for (unsigned q = 0; q < 4; q++)
		if (m->part_w[q] + need[q] > k->part_warps)
			return 0;
	return 1;
}

/* Registers are counted per sub-partition, as the occupancy calculator
 * does: a warp's registers come from one of the four, so of each quarter
 * of the SM's registers only whole warps of k's size are usable (with 112
 * registers a thread, 4 warps of 3584 in 16384: 8 blocks of 64 threads
 * fit an H100's SM, not the 9 its 65536 registers would hold). The blocks
 * there are counted at their own sizes (regs_usable, cta__sched_kernel_init). */
static int fits(const struct cta_sim *s, const struct cta__sm *m, const struct cta__kernel *k)
{
	const struct cta_device_model *d = &s->dev;
	return (!part_on(s, k) || part_fits(m, k)) && m->blocks + 1 <= d->max_blocks_per_sm &&
	       (k->csize == 1 || !d->cluster_max_blocks_per_sm ||
	        m->cblocks + 1 <= d->cluster_max_blocks_per_sm) &&
	       m->threads + k->threads <= d->max_threads_per_sm &&
	       m->warps + k->warps <= d->max_warps_per_sm && m->regs + k->regs <= k->regs_usable &&
	       m->smem + k->smem <= d->smem_per_sm;
}

static void take(struct cta__sm *m, const struct cta__kernel *k)
{
	m->blocks++;
	m->cblocks += k->csize > 1;
	m->threads += k->threads;
	m->warps += k->warps;
	m->regs += k->regs;
	m->smem += k->smem;
}

static void bucket_move(struct cta_sim *s, unsigned sm, unsigned from, unsigned to)
{
	uint64_t bit = 1ull << (sm % 64);
	s->bucket[(size_t)from * s->bwords + sm / 64] &= ~bit;
	s->bucket[(size_t)to * s->bwords + sm / 64] |= bit;
	s->bcount[from]--;
	s->bcount[to]++;
	if (to < s->bmin)
		s->bmin = to;
	while (s->bmin + 1 < s->nbuckets && !s->bcount[s->bmin])
		s->bmin++;
}

int cta__sched_init(struct cta_sim *s)
{
	/* What cta__sched_can_refill needs of the run as a whole. */
	s->refill_ok =
	    !s->dev.dispatch_latency_ns && !s->o.jitter_ns && !s->o.random_tiebreak &&
	    (s->dev.placement == CTA_PLACE_SPREAD || s->dev.placement == CTA_PLACE_SWEEP);
	for (unsigned i = 0; i < s->nsms && s->dev.spin_regs_order; i++)
		if (!(s->sms[i].part = calloc(s->dev.max_blocks_per_sm, sizeof(*s->sms[i].part))))
			return CTA_ENOMEM;
	s->bwords = (s->nsms + 63) / 64;
	s->nbuckets = s->dev.max_blocks_per_sm + 1;
	s->bucket = calloc((size_t)s->nbuckets * s->bwords, sizeof(uint64_t));
	s->gpcmask = calloc((size_t)(s->dev.gpc_count + 1) * s->bwords, sizeof(uint64_t));
	s->bcount = calloc(s->nbuckets, sizeof(unsigned));
	s->allmask = malloc(s->bwords * sizeof(uint64_t));
	if (!s->bucket || !s->gpcmask || !s->bcount || !s->allmask)
		return CTA_ENOMEM;
	for (unsigned w = 0; w < s->bwords; w++)
		s->allmask[w] = ~0ull;
	s->bcount[0] = s->nsms;
	s->bmin = 0;
	for (unsigned i = 0; i < s->nsms; i++) {
		s->bucket[i / 64] |= 1ull << (i % 64);
		unsigned g = s->sms[i].gpc <= s->dev.gpc_count ? s->sms[i].gpc : s->dev.gpc_count;
		s->gpcmask[(size_t)g * s->bwords + i / 64] |= 1ull << (i % 64);
	}
	return 0;
}

static void build_candidates(struct cta_sim *s);

/* Keeps every candidate kernel's fit bitmap true for SM sm. */
static void refit(struct cta_sim *s, unsigned sm)
{
	if (!s->cand_valid)
		build_candidates(s);
	uint64_t bit = 1ull << (sm % 64);
	for (unsigned i = 0; i < s->ncand; i++) {
		struct cta__kernel *k = s->cand[i];
		if (fits(s, &s->sms[sm], k))
			k->fit[sm / 64] |= bit;
		else
			k->fit[sm / 64] &= ~bit;
	}
}

/* Recomputes a kernel's whole fit bitmap (when it becomes a candidate). */
static void refit_kernel(struct cta_sim *s, struct cta__kernel *k)
{
	for (unsigned w = 0; w < s->bwords; w++)
		k->fit[w] = 0;
	for (unsigned i = 0; i < s->nsms; i++)
		if (fits(s, &s->sms[i], k))
			k->fit[i / 64] |= 1ull << (i % 64);
}

/* spin_regs_order: block `index` of k takes its sub-partitions on sm. */
static void part_take(struct cta_sim *s, unsigned sm, const struct cta__kernel *k, uint64_t index)
{
	struct cta__sm *m = &s->sms[sm];
	if (!part_on(s, k))
		return;
	m->part[m->npart++] = (struct cta__part){index, k->id, m->part_next};
	for (unsigned i = 0; i < k->warps; i++)
		m->part_w[(m->part_next + i) % 4]++;
	m->part_next = (m->part_next + k->warps) % 4;
}

/* ... and gives them back when it leaves. */
static void part_free(struct cta_sim *s, unsigned sm, const struct cta__kernel *k, uint64_t index)
{
	struct cta__sm *m = &s->sms[sm];
	if (!part_on(s, k))
		return;
	for (unsigned j = 0; j < m->npart; j++) {
		if (m->part[j].index != index || m->part[j].kid != k->id)
			continue;
		for (unsigned i = 0; i < k->warps; i++)
			m->part_w[(m->part[j].base + i) % 4]--;
		m->part[j] = m->part[--m->npart];
		return;
	}
}

static void sm_take(struct cta_sim *s, unsigned sm, const struct cta__kernel *k)
{
	struct cta__sm *m = &s->sms[sm];
	bucket_move(s, sm, m->blocks, m->blocks + 1);
	take(m, k);
	refit(s, sm);
}

/* The usual end of a block of a grid that fills the GPU: its kernel is the
 * dispatcher's first candidate, no candidate fits on any SM, the front end
 * is idle and costs nothing, and placement is spread-first without random
 * ties. Freeing the block's room makes its SM the only one where the kernel
 * fits, so the dispatch that follows places the kernel's next block there;
 * taking the room back leaves every SM, bucket and fit bitmap as it was,
 * so the dispatch's next search finds nothing. cta__sched_refill does
 * exactly that without undoing and redoing the accounting; the trace, the
 * order of events and the random numbers drawn are those of
 * cta__sched_free_cta followed by cta__sched_request. */
static int place_unit(struct cta_sim *s, struct cta__kernel *k, const unsigned *sms, int take_sm);
static int nothing_fits(struct cta_sim *s);

int cta__sched_can_refill(struct cta_sim *s, const struct cta__kernel *k)
{
	/* (With cand_valid, nothing_fits reads the list as it is; when no
	 * room was freed since nothing last fitted, it is known without the
	 * scan, as dispatch_one knows it.) */
	return s->refill_ok && !part_on(s, k) && s->cand_valid && s->ncand && s->cand[0] == k &&
	       k->csize == 1 && k->sweep_pos >= k->sweep_len && k->next_unit < k->nunits &&
	       !s->dispatch_pending && !s->in_dispatch && !s->resv_valid && s->fe_free <= s->now &&
	       (s->nofit_gen == s->room_gen || nothing_fits(s));
}

/* A block of k on SM sm ended and cta__sched_can_refill said yes: its room
 * is released (room_gen) and k's next block placed on sm. */
void cta__sched_refill(struct cta_sim *s, struct cta__kernel *k, unsigned sm)
{
	k->ctas_running--;
	s->room_gen++;
	if (!place_unit(s, k, &sm, 0))
		return;
	s->fe_free = s->now; /* no dispatch latency, no jitter */
	/* The SM is full again, so nothing fits anywhere (the same conclusion
	 * cta__sched_dispatch reaches with nothing_fits). */
	s->nofit_gen = s->room_gen;
}

void cta__sched_free_cta(struct cta_sim *s, struct cta__kernel *k, unsigned sm, uint64_t index)
{
	struct cta__sm *m = &s->sms[sm];
	part_free(s, sm, k, index);
	bucket_move(s, sm, m->blocks, m->blocks - 1);
	m->blocks--;
	m->cblocks -= k->csize > 1;
	m->threads -= k->threads;
	m->warps -= k->warps;
	m->regs -= k->regs;
	m->smem -= k->smem;
	k->ctas_running--;
	s->room_gen++;
	refit(s, sm);
}

/* Spread-first: the SM with the fewest resident blocks that fits; ties go
 * to the lowest SM id, or are broken by the seed when exploring. The
 * buckets make this a scan of a few words, not of every SM. */
static int pick_spread(struct cta_sim *s, const struct cta__kernel *k, int gpc)
{
	/* Without a GPC restriction the mask is all ones (s->allmask). */
	const uint64_t *mask = gpc >= 0 ? &s->gpcmask[(size_t)gpc * s->bwords] : s->allmask;
	const unsigned nw = s->bwords;
	uint64_t anyfit = 0;
	for (unsigned w = 0; w < nw; w++)
		anyfit |= k->fit[w] & mask[w];
	if (!anyfit)
		return -1;
	for (unsigned b = s->bmin; b < s->nbuckets; b++) {
		if (!s->bcount[b])
			continue;
		const uint64_t *row = &s->bucket[(size_t)b * nw];
		int chosen = -1;
		unsigned nties = 0;
		for (unsigned w = 0; w < nw; w++) {
			uint64_t bits = row[w] & k->fit[w] & mask[w];
			while (bits) {
				unsigned i = w * 64 + (unsigned)__builtin_ctzll(bits);
				bits &= bits - 1;
				if (!s->o.random_tiebreak)
					return (int)i;
				if (cta__base_rand(s) % ++nties == 0)
					chosen = (int)i;
			}
		}
		if (chosen >= 0)
			return chosen;
	}
	return -1;
}

static int pick_round_robin(struct cta_sim *s, const struct cta__kernel *k)
{
	for (unsigned n = 0; n < s->nsms; n++) {
		unsigned i = (s->rr_next + n) % s->nsms;
		if (fits(s, &s->sms[i], k)) {
			s->rr_next = (i + 1) % s->nsms;
			return (int)i;
		}
	}
	return -1;
}

/* A calibrated order: the i-th block of a kernel's first wave goes to
 * placement_order[i] when it fits there; later blocks spread. */
static int pick_order(struct cta_sim *s, const struct cta__kernel *k)
{
	uint64_t i = k->next_unit;
	/* A measured first wave of this grid size (or the largest below it). */
	/* The first wave's length tells launches of one grid size apart that
	 * fit differently (one block per SM, or eight): prefer that match. */
	uint64_t wave = (uint64_t)k->occupancy * s->nsms;
	if (wave > k->nblocks)
		wave = k->nblocks;
	const struct cta_wave_order *w = NULL;
	for (unsigned j = 0; j < s->dev.wave_order_count; j++) {
		const struct cta_wave_order *c = &s->dev.wave_order[j];
		if (c->grid > k->nblocks)
			continue;
		if (!w || c->grid > w->grid ||
		    (c->grid == w->grid && c->len == wave && w->len != wave))
			w = c;
	}
	if (w) {
		if (i < w->len) {
			unsigned sm = w->sm[i];
			if (sm < s->nsms && fits(s, &s->sms[sm], k))
				return (int)sm;
		}
		return pick_spread(s, k, -1);
	}
	if (i < s->dev.placement_order_len) {
		unsigned sm = s->dev.placement_order[i];
		if (sm < s->nsms && fits(s, &s->sms[sm], k))
			return (int)sm;
	}
	return pick_spread(s, k, -1);
}

/* placement = sweep: the next SM of the launch's first wave that has room
 * (one taken by another kernel is passed over), then retire order. */
static int pick_sweep(struct cta_sim *s, struct cta__kernel *k)
{
	while (k->sweep_pos < k->sweep_len) {
		unsigned sm = k->sweep[k->sweep_pos++];
		if (fits(s, &s->sms[sm], k))
			return (int)sm;
	}
	return pick_spread(s, k, -1);
}

static int pick_sm(struct cta_sim *s, struct cta__kernel *k)
{
	switch (s->dev.placement) {
	case CTA_PLACE_SWEEP:
		return pick_sweep(s, k);
	case CTA_PLACE_ROUND_ROBIN:
		return pick_round_robin(s, k);
	case CTA_PLACE_ORDER:
		return pick_order(s, k);
	default:
		return pick_spread(s, k, -1);
	}
}

/* A cluster: the least loaded GPC that can hold all its CTAs at once, and
 * spread placement inside it. Returns 0 and fills sms[], or -1. */
static int pick_cluster(struct cta_sim *s, const struct cta__kernel *k, unsigned *sms)
{
	int best_gpc = -1;
	unsigned best_load = UINT32_MAX;
	for (unsigned g = 0; g < s->dev.gpc_count; g++) {
		unsigned room = 0, load = 0;
		for (unsigned i = 0; i < s->nsms; i++) {
			const struct cta__sm *m = &s->sms[i];
			if (m->gpc != g)
				continue;
			load += m->blocks;
			struct cta__sm t = *m;
			while (room < k->csize && fits(s, &t, k)) {
				take(&t, k);
				room++;
			}
		}
		if (room >= k->csize && load < best_load) {
			best_gpc = (int)g;
			best_load = load;
		}
	}
	if (best_gpc < 0)
		return -1;
	for (unsigned r = 0; r < k->csize; r++) {
		int sm = pick_spread(s, k, best_gpc);
		if (sm < 0)
			return -1; /* cannot happen: room was counted above */
		sms[r] = (unsigned)sm;
		sm_take(s, (unsigned)sm, k);
	}
	return 0;
}

/* placement = sweep: the next csize SMs of the kernel's sweep, when each
 * has room and all are in one GPC; they are taken. Returns 0, or -1 (the
 * cluster is then placed by pick_cluster). */
static int pick_cluster_sweep(struct cta_sim *s, struct cta__kernel *k, unsigned *sms)
{
	if (s->dev.placement != CTA_PLACE_SWEEP || k->sweep_pos + k->csize > k->sweep_len)
		return -1;
	const unsigned *c = &k->sweep[k->sweep_pos];
	for (unsigned r = 0; r < k->csize; r++) {
		if (!fits(s, &s->sms[c[r]], k) || s->sms[c[r]].gpc != s->sms[c[0]].gpc)
			return -1;
		for (unsigned q = 0; q < r; q++)
			if (c[q] == c[r])
				return -1;
	}
	for (unsigned r = 0; r < k->csize; r++) {
		sms[r] = c[r];
		sm_take(s, c[r], k);
	}
	k->sweep_pos += k->csize;
	return 0;
}

int cta__sched_higher_waiting(struct cta_sim *s, const struct cta__kernel *k)
{
	if (s->nkernels == 1)
		return 0; /* k is the only kernel */
	for (unsigned i = 0; i < s->nkernels; i++) {
		const struct cta__kernel *o = s->kernels[i];
		if (o->state == K_ACTIVE && o->priority < k->priority && o->next_unit < o->nunits)
			return 1;
	}
	return 0;
}

/* k became visible to the dispatcher. Its FIFO key among equal priorities
 * is the order in which kernels became visible, not the order of the
 * cta_sim_launch calls: a kernel launched first but released later must not
 * cut in front of one that is already being dispatched. */
void cta__sched_release(struct cta_sim *s, struct cta__kernel *k)
{
	k->seq = s->activations++;
	s->cand_valid = 0;
}

/* Kernels in dispatch preference: priority, then activation order. The list of
 * active kernels with pending units is rebuilt only when it can have
 * changed (a kernel activated, finished dispatching, or finished). */
static void build_candidates(struct cta_sim *s)
{
	unsigned n = 0;
	for (unsigned i = 0; i < s->nkernels; i++) {
		struct cta__kernel *k = s->kernels[i];
		if (k->state != K_ACTIVE || k->next_unit >= k->nunits)
			continue;
		unsigned j = n++;
		while (j > 0 && (s->cand[j - 1]->priority > k->priority ||
		                 (s->cand[j - 1]->priority == k->priority &&
		                  s->cand[j - 1]->seq > k->seq))) {
			s->cand[j] = s->cand[j - 1];
			j--;
		}
		s->cand[j] = k;
	}
	s->ncand = n;
	s->cand_valid = 1;
	for (unsigned i = 0; i < n; i++)
		if (!s->cand[i]->fit_valid) {
			refit_kernel(s, s->cand[i]);
			s->cand[i]->fit_valid = 1;
		}
}

static struct cta__kernel *next_candidate(struct cta_sim *s, struct cta__kernel *after, int *cursor)
{
	(void)after;
	if (!s->cand_valid)
		build_candidates(s);
	while ((unsigned)*cursor < s->ncand) {
		struct cta__kernel *k = s->cand[(*cursor)++];
		if (k->state == K_ACTIVE && k->next_unit < k->nunits)
			return k;
	}
	return NULL;
}

static uint64_t jitter(struct cta_sim *s, uint64_t v)
{
	if (!s->o.jitter_ns)
		return v;
	uint64_t j = s->o.jitter_ns;
	int64_t d = (int64_t)(cta__base_rand(s) % (2 * j + 1)) - (int64_t)j;
	return (int64_t)v + d < 0 ? 0 : (uint64_t)((int64_t)v + d);
}

/* No candidate kernel fits on any SM (its fit bitmap, kept current for
 * every candidate, is empty), so a dispatch now would place nothing. */
static int nothing_fits(struct cta_sim *s)
{
	if (!s->cand_valid)
		build_candidates(s);
	for (unsigned i = 0; i < s->ncand; i++) {
		const struct cta__kernel *k = s->cand[i];
		if (k->state != K_ACTIVE || k->next_unit >= k->nunits)
			continue;
		for (unsigned w = 0; w < s->bwords; w++)
			if (k->fit[w])
				return 0;
	}
	return 1;
}

/* Some candidate kernel has units still to dispatch. */
static int any_pending(struct cta_sim *s)
{
	if (!s->cand_valid)
		build_candidates(s);
	for (unsigned i = 0; i < s->ncand; i++)
		if (s->cand[i]->state == K_ACTIVE && s->cand[i]->next_unit < s->cand[i]->nunits)
			return 1;
	return 0;
}

/* A block of a register-limited kernel that the gates hold is let go at
 * the latest spin_regs_wait_ns after its start, and one that only the
 * late entry holds spin_regs_late_ns after it (EV_GATE_WAIT: the engine
 * lets go the blocks of its SM that waited so long, oldest first). */
static int regs_wait_timer(struct cta_sim *s, const struct cta__kernel *k, unsigned sm,
                           uint64_t start)
{
	if (!k->part_warps)
		return 0;
	if ((s->dev.spin_regs_wait_ns &&
	     cta__evq_push(&s->q, start + s->dev.spin_regs_wait_ns, EV_GATE_WAIT, NULL, sm)) ||
	    (s->dev.spin_regs_late_ns &&
	     cta__evq_push(&s->q, start + s->dev.spin_regs_late_ns, EV_GATE_WAIT, NULL, sm))) {
		cta__base_errf(s, "out of memory for events");
		s->hung = 1;
		return -1;
	}
	return 0;
}

/* Starts k's next pending unit on sms[] (one per CTA), taking the SM's
 * room first when `take_sm` (clusters took theirs while being placed);
 * returns 1, or 0 with the run stopped when memory ran out. */
static int place_unit(struct cta_sim *s, struct cta__kernel *k, const unsigned *sms, int take_sm)
{
	uint64_t unit = k->next_unit++;
	if (k->next_unit == k->nunits)
		s->cand_valid = 0;
	if (!s->sms[sms[k->csize - 1]].sweep_first)
		s->carry_gpc = s->sms[sms[k->csize - 1]].gpc + 1;
	uint64_t start = s->now + jitter(s, s->dev.block_start_ns);
	if (take_sm) {
		part_take(s, sms[0], k, unit);
		sm_take(s, sms[0], k);
	}
	/* A block the issue gate holds waits apart until it is let go: as a
	 * record where units are made lazily, else as its unit, made now. */
	int hold = cta__exec_gate_holds(s, k, sms[0], unit);
	if (k->csize == 1 && s->lazy_units) {
		/* Its unit is made when its batch comes to it; one the gate
		 * holds waits as a record too (struct cta__held). */
		struct cta__placed p = {k, unit, start, sms[0], 0, 0, 0, NULL};
		/* A held block's duration index is the one it is let go at
		 * (cta__exec_gate_open_placed): none is taken now. */
		if (!hold) {
			cta__exec_unit_spin(s, k, sms, &p.spin, &p.add, &p.first);
		} else {
			p.h = cta__exec_held_new(s);
			if (!p.h) {
				cta__base_errf(s, "out of memory for blocks");
				s->hung = 1;
				return 0;
			}
			p.h->p = p;
			p.h->p.h = NULL;
			cta__exec_gate_hold_placed(s, p.h);
			if (regs_wait_timer(s, k, sms[0], start))
				return 0;
			if (cta__base_hold_apart(s, k)) {
				/* Out of the batch until let go (gate_release). */
				struct cta__held *h = p.h;
				h->state = 2;
				h->gen = s->open_gen;
				h->pos = (uint32_t)(s->nready - s->nsealed - s->open_ins);
				h->ord = s->held_ord++;
				h->ins = 1;
				cta__base_ready_apart(s, start);
				k->ctas_running++;
				cta__base_out_trace(s, s->now, CTA_TEV_DISPATCH, k->id, unit, unit,
				                    sms[0], CTA_TRACE_NONE, 0, NULL);
				cta__base_started(s, k, unit, sms[0], start);
				return 1;
			}
			s->open_held++;
		}
		k->ctas_running++;
		cta__base_out_trace(s, s->now, CTA_TEV_DISPATCH, k->id, unit, unit, sms[0],
		                    CTA_TRACE_NONE, 0, NULL);
		cta__base_ready_placed(s, &p);
		return 1;
	}
	struct cta__unit *u = cta__exec_unit_new(s, k, unit, sms, start);
	if (!u) {
		cta__base_errf(s, "out of memory for blocks");
		s->hung = 1;
		return 0;
	}
	for (unsigned r = 0; r < k->csize; r++) {
		k->ctas_running++;
		cta__base_out_trace(s, s->now, CTA_TEV_DISPATCH, k->id, u->ctas[r].logical,
		                    u->ctas[r].logical, sms[r], CTA_TRACE_NONE, 0, NULL);
	}
	if (hold) {
		cta__exec_gate_hold(s, u);
		s->open_held++;
		if (regs_wait_timer(s, k, sms[0], u->start_t))
			return 0;
	}
	cta__base_ready(s, u);
	return 1;
}

/* Dispatches one unit if any fits; returns 1 when it did. */
static int dispatch_one(struct cta_sim *s)
{
	/* Nothing fitted at the last try and no room was freed since. */
	if (s->nofit_gen == s->room_gen)
		return 0;
	int cursor = 0;
	for (;;) {
		struct cta__kernel *k = next_candidate(s, NULL, &cursor);
		if (!k) {
			s->nofit_gen = s->room_gen;
			return 0;
		}
		if (!k->sweep_built && s->dev.placement == CTA_PLACE_SWEEP) {
			int rc = build_sweep(s, k);
			if (rc) {
				cta__base_errf(s, "out of memory for the sweep of kernel %s",
				               k->label);
				s->hung = 1;
				return 0;
			}
		}
		unsigned one, *sms = &one, buf[64];
		if (k->csize > 1) {
			sms = k->csize <= 64 ? buf : malloc(k->csize * sizeof(unsigned));
			if (sms && pick_cluster_sweep(s, k, sms) == 0) {
				int ok = place_unit(s, k, sms, 0);
				if (sms != buf)
					free(sms);
				return ok;
			}
			if (!sms || pick_cluster(s, k, sms) < 0) {
				if (sms != buf)
					free(sms);
				continue;
			}
		} else {
			int sm = pick_sm(s, k);
			if (sm < 0)
				continue;
			one = (unsigned)sm;
		}
		int ok = place_unit(s, k, sms, k->csize == 1);
		if (sms != &one && sms != buf)
			free(sms);
		return ok;
	}
}

void cta__sched_dispatch(struct cta_sim *s)
{
	if (s->fe_free > s->now) {
		cta__sched_request(s);
		return;
	}
	/* One block per front-end slot; with no dispatch latency, every block
	 * that fits goes now. A dispatch that finds no room stops here: the
	 * next retiring block asks again. */
	do {
		if (!dispatch_one(s))
			return;
		s->fe_free = s->now + jitter(s, s->dev.dispatch_latency_ns);
		/* The usual end of a refill: the block just placed took the last
		 * room. Known from the fit bitmaps, without a failing search. */
		if (s->fe_free <= s->now && nothing_fits(s)) {
			s->nofit_gen = s->room_gen;
			return;
		}
	} while (s->fe_free <= s->now);
	/* The front end is busy for a while: come back when it is free (a
	 * pseudo-event, see cta__sched_request). Called from that function,
	 * which guards against recursion, so it is done here directly. */
	if (!s->dispatch_pending) {
		if (any_pending(s)) {
			uint64_t seq = s->q.seq++;
			if (nothing_fits(s)) {
				/* It would find no room when it comes: keep its
				 * place for the request that frees some. */
				s->resv_valid = 1;
				s->resv_t = s->fe_free;
				s->resv_seq = seq;
			} else {
				s->dispatch_pending = 1;
				s->dispatch_seq = seq;
			}
		}
	}
}

/* Asks for a dispatch: at once when the front end is free (a slot that
 * frees is refilled in the same instant, before later events), otherwise
 * as an event when the front end becomes free. */
void cta__sched_request(struct cta_sim *s)
{
	if (s->dispatch_pending || s->in_dispatch)
		return;
	if (s->cand_valid && s->nofit_gen == s->room_gen && !s->resv_valid &&
	    s->fe_free <= s->now) {
		/* Nothing fitted at the last try and no room was freed since:
		 * the dispatch below would stop at once (dispatch_one). A valid
		 * candidate list holds only kernels with pending units, so it is
		 * empty exactly when the search below would find none. Every
		 * successful cancel asks, with the GPU usually full. */
		if (!s->ncand)
			s->cand_valid = 0;
		return;
	}
	if (!any_pending(s)) {
		s->cand_valid = 0;
		return;
	}
	if (s->resv_valid) {
		/* The dispatch kept back in cta__sched_dispatch: its (time,
		 * sequence) place is still ahead of the engine. */
		s->resv_valid = 0;
		s->dispatch_pending = 1;
		s->dispatch_seq = s->resv_seq;
		return;
	}
	if (s->fe_free <= s->now) {
		s->in_dispatch = 1;
		cta__sched_dispatch(s);
		s->in_dispatch = 0;
		return;
	}
	/* A pseudo-event: it takes a sequence number as a queued event would,
	 * and the engine runs it in (time, sequence) order, without the cost
	 * of the heap. */
	s->dispatch_pending = 1;
	s->dispatch_seq = s->q.seq++;
}
