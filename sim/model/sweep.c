/* The sweep rule of block placement (placement = sweep): the SM of every
 * block of a launch's first wave, from the device's TPC/GPC topology and
 * a handful of fitted parameters. docs/FIDELITY.md states the rule and the
 * evidence for it. */
#include <stdlib.h>

#include "ctasim/device.h"

/* The step (GPC visits of the sweep, gpc_count per pass) after which the
 * first SMs take their k-th turn (k >= 1) in a first wave of `passes`
 * whole passes; `small`: the launch before left the turns early, one
 * visit until the switch to sweep_gap_later and two after it (an idle
 * dispatcher's, docs/FIDELITY.md, "placement"); `late`: a long launch
 * before left them one visit late; `mid` and `steady`: a long first wave
 * earlier in the run left the first turn two visits late with the second
 * merged into it, or every turn sweep_gap_later visits after the one
 * before (placement rule 8). */
static uint64_t first_turn_step(const struct cta_device_model *d, unsigned k, uint64_t passes,
                                int small, int late, int mid, int steady)
{
	if (k == passes) /* the turn of the last, partial pass: at its start */
		return passes * d->gpc_count;
	if (steady) /* a long launch before: the gap is sweep_gap_later already */
		return d->sweep_gap_later ? (uint64_t)d->sweep_gap_later * k - 1 : k;
	if (mid) /* the first turn two visits late, then the schedule one turn on */
		return k == 1 ? (uint64_t)d->sweep_gap_first + 2
		              : first_turn_step(d, k + 1, passes + 1, small, late, 0, 0);
	uint64_t r = k <= d->sweep_gap_switch
	                 ? (uint64_t)d->sweep_gap_first * k
	                 : (uint64_t)d->sweep_gap_first * d->sweep_gap_switch +
	                       (uint64_t)d->sweep_gap_later * (k - d->sweep_gap_switch);
	if (small) {
		uint64_t early = k > d->sweep_gap_switch ? 2 : 1;
		r = r > early ? r - early : 1;
	}
	return r + (late ? 1 : 0);
}

/* What a record clear of `prior` blocks leaves (rule 5): its blocks took
 * the first SMs' turn and then one GPC each, so the next sweep starts at
 * the GPC after its last; a short one leaves the turns early, a longer one
 * the first SMs at their second half (traces/reference/h100: prior_* and
 * the grid classes). One of at least a block per first SM and GPC ends
 * where it began (grids of 4096 to 16500 blocks start at GPC 0), and a
 * still longer one leaves the turns late. The clear runs on the whole
 * device: the count is the model's first SMs even where fewer SMs are
 * used (--sm-limit). */
static unsigned clear_gpc_step(const struct cta_device_model *d, uint64_t prior)
{
	uint64_t full = (uint64_t)d->sweep_first_len + d->gpc_count;
	return prior > d->sweep_first_len && prior < full ? (unsigned)(prior - d->sweep_first_len)
	                                                  : 0;
}

void cta_device_sweep_start_clears(const struct cta_device_model *d, const uint64_t *grids,
                                   size_t n, struct cta_sweep_start *st)
{
	*st = (struct cta_sweep_start){0};
	if (!d || !n)
		return;
	/* Clears one after the other (the CUDA backend clears the slots of
	 * every launch of a run before its first: placement rule 8): each
	 * that reaches sweep_rotate_prior flips the first SMs' half, the
	 * GPC steps add up, and the last one sets the turns. */
	uint64_t prior = 0;
	unsigned flips = 0, gpc = 0;
	for (size_t i = 0; i < n; i++) {
		prior = d->sweep_prior_unit ? grids[i] / d->sweep_prior_unit : 0;
		flips += d->sweep_rotate_prior && prior >= d->sweep_rotate_prior;
		gpc += clear_gpc_step(d, prior);
	}
	st->rot = flips & 1;
	st->early = !st->rot && prior < d->sweep_small_prior;
	st->late = d->sweep_late_prior && prior >= d->sweep_late_prior;
	st->gpc0 = d->gpc_count ? gpc % d->gpc_count : 0;
	st->cluster_rot =
	    prior >= 1 && prior <= d->cluster_prior_len ? d->cluster_prior_rot[prior - 1] : 0;
}

int cta_device_sweep_order(const struct cta_device_model *d, unsigned nsms, uint64_t grid,
                           uint64_t wave, unsigned *out, unsigned *len)
{
	struct cta_sweep_start st;
	cta_device_sweep_start_clears(d, &grid, 1, &st);
	return cta_device_sweep_order_at(d, nsms, &st, wave, out, len);
}

int cta_device_sweep_order_at(const struct cta_device_model *d, unsigned nsms,
                              const struct cta_sweep_start *st, uint64_t wave, unsigned *out,
                              unsigned *len)
{
	*len = 0;
	if (!d || !st || !out || nsms > d->sm_count || nsms == 0)
		return CTA_EINVAL;
	if (wave == 0 || !d->gpc_count)
		return 0;
	unsigned *first = malloc((size_t)nsms * sizeof *first);
	unsigned char *isfirst = calloc(nsms, 1);
	/* Main TPCs in id order: their SMs (main SMs in id order, grouped). */
	unsigned *msm = malloc((size_t)nsms * sizeof *msm);
	unsigned *tstart = malloc(((size_t)nsms + 1) * sizeof *tstart);
	unsigned *cnt = malloc((size_t)nsms * sizeof *cnt);
	uint64_t *turn = NULL;
	int rc = CTA_ENOMEM;
	if (!first || !isfirst || !msm || !tstart || !cnt)
		goto done;
	unsigned nf = 0;
	for (unsigned i = 0; i < d->sweep_first_len; i++)
		if (d->sweep_first[i] < nsms && !isfirst[d->sweep_first[i]]) {
			first[nf++] = d->sweep_first[i];
			isfirst[d->sweep_first[i]] = 1;
		}
	/* Group the other SMs by TPC, TPCs by increasing id (the presets and
	 * model files number SMs TPC by TPC, so one pass over the SMs does). */
	unsigned ntpc = 0, nm = 0;
	for (unsigned t = 0, i = 0; i < nsms; i++) {
		if (isfirst[i])
			continue;
		if (!nm || d->tpc_of_sm[i] != t) {
			t = d->tpc_of_sm[i];
			tstart[ntpc++] = nm;
		}
		msm[nm++] = i;
	}
	tstart[ntpc] = nm;
	uint64_t passes = wave / nsms, rem = wave % nsms;
	unsigned turns = (unsigned)(passes + (rem > 0));
	turn = malloc(((size_t)turns + 1) * sizeof *turn);
	if (!turn)
		goto done;
	int rotated = (int)st->rot, small = (int)st->early, late = (int)st->late;
	int mid = (int)st->mid, steady = (int)st->steady;
	unsigned gpc0 = st->gpc0 % d->gpc_count;
	/* A launch of one block takes the first of the first SMs, whatever
	 * the launch before left (every such launch recorded on an H100). */
	if (wave == 1 && nf)
		rotated = 0;
	/* Blocks of each turn of the first SMs; the rest go to the sweep. */
	uint64_t left = wave, main_left;
	for (unsigned t = 0; t < turns; t++) {
		uint64_t f = left < nf ? left : nf;
		turn[t] = f;
		left -= f;
	}
	main_left = left;
	unsigned rot = rotated ? nf / 2 : 0;
	uint64_t n = 0, step = 0;
	unsigned next_turn = 0;
	/* Emits turn t of the first SMs. */
#define EMIT_TURN(t)                                                                               \
	do {                                                                                       \
		for (unsigned j_ = 0; j_ < turn[(t)]; j_++)                                        \
			out[n++] = first[(j_ + rot) % nf];                                         \
	} while (0)
	while (main_left || next_turn < turns) {
		uint64_t c = main_left < nm ? main_left : nm;
		main_left -= c;
		/* One pass of c blocks: the lowest TPC ids get a block on their
		 * first SM, then on their second, and so on. */
		for (unsigned t = 0; t < ntpc; t++)
			cnt[t] = 0;
		uint64_t given = 0;
		for (unsigned lvl = 0; given < c; lvl++)
			for (unsigned t = 0; t < ntpc && given < c; t++)
				if (tstart[t + 1] - tstart[t] > lvl) {
					cnt[t]++;
					given++;
				}
		for (unsigned g = 0; g < d->gpc_count; g++, step++) {
			while (next_turn < turns &&
			       (next_turn == 0 ? 0
			                       : first_turn_step(d, next_turn, passes, small, late,
			                                         mid, steady)) <= step) {
				EMIT_TURN(next_turn);
				next_turn++;
			}
			unsigned gg = (g + gpc0) % d->gpc_count;
			for (unsigned t = 0; t < ntpc; t++)
				if (d->gpc_of_sm[msm[tstart[t]]] == gg)
					for (unsigned j = 0; j < cnt[t]; j++)
						out[n++] = msm[tstart[t] + j];
		}
		if (!main_left)
			while (next_turn < turns) {
				EMIT_TURN(next_turn);
				next_turn++;
			}
	}
#undef EMIT_TURN
	*len = (unsigned)n;
	rc = 0;
done:
	free(first);
	free(isfirst);
	free(msm);
	free(tstart);
	free(cnt);
	free(turn);
	return rc;
}

int cta_device_cluster_sweep_order(const struct cta_device_model *d, unsigned nsms, uint64_t grid,
                                   uint64_t wave, unsigned *out, unsigned *len)
{
	struct cta_sweep_start st;
	cta_device_sweep_start_clears(d, &grid, 1, &st);
	return cta_device_cluster_sweep_order_at(d, nsms, &st, wave, out, len);
}

int cta_device_cluster_sweep_order_at(const struct cta_device_model *d, unsigned nsms,
                                      const struct cta_sweep_start *st, uint64_t wave,
                                      unsigned *out, unsigned *len)
{
	*len = 0;
	if (!d || !st || !out || nsms > d->sm_count || nsms == 0)
		return CTA_EINVAL;
	if (wave == 0)
		return 0;
	/* TPCs as runs of SMs: the first SMs' in sweep_first order, the
	 * others in id order; tpc[] holds each TPC's first SM's index in
	 * sms[] (TPC i is sms[tpc[i]] .. sms[tpc[i + 1] - 1]). */
	unsigned *sms = malloc((size_t)nsms * sizeof *sms);
	unsigned *tpc = malloc(((size_t)nsms + 2) * sizeof *tpc);
	unsigned *order = malloc((size_t)nsms * sizeof *order);
	unsigned char *isfirst = calloc(nsms, 1);
	int rc = CTA_ENOMEM;
	if (!sms || !tpc || !order || !isfirst)
		goto done;
	unsigned n = 0, nt = 0;
	for (unsigned i = 0; i < d->sweep_first_len; i++) {
		unsigned sm = d->sweep_first[i];
		if (sm >= nsms || isfirst[sm])
			continue;
		if (!n || d->tpc_of_sm[sm] != d->tpc_of_sm[sms[n - 1]])
			tpc[nt++] = n;
		sms[n++] = sm;
		isfirst[sm] = 1;
	}
	unsigned nft = nt, nfs = n;
	for (unsigned i = 0; i < nsms; i++) {
		if (isfirst[i])
			continue;
		if (n == nfs || d->tpc_of_sm[i] != d->tpc_of_sm[sms[n - 1]])
			tpc[nt++] = n;
		sms[n++] = i;
	}
	tpc[nt] = n;
	/* The launch before starts the first TPCs at their cluster_rot-th
	 * and each row of the first pass at GPC gpc0. */
	unsigned rot = nft ? st->cluster_rot % nft : 0, gpc0 = st->gpc0;
	/* The first pass visits the other TPCs row by row (a row: TPCs of
	 * increasing GPC in id order), each row from GPC gpc0 on. */
	unsigned no = 0;
	for (unsigned r0 = nft; r0 < nt;) {
		unsigned r1 = r0 + 1;
		while (r1 < nt && d->gpc_of_sm[sms[tpc[r1]]] > d->gpc_of_sm[sms[tpc[r1 - 1]]])
			r1++;
		for (unsigned pass = 0; pass < 2; pass++)
			for (unsigned t = r0; t < r1; t++) {
				int late = d->gpc_of_sm[sms[tpc[t]]] < gpc0;
				if (late == (int)pass)
					order[no++] = t;
			}
		r0 = r1;
	}
	uint64_t k = 0;
	for (unsigned pass = 0; k < wave; pass++) {
		for (unsigned i = 0; i < nft && k < wave; i++) {
			unsigned t = (i + rot) % nft;
			for (unsigned j = tpc[t]; j < tpc[t + 1] && k < wave; j++)
				out[k++] = sms[j];
		}
		for (unsigned i = 0; i < no && k < wave; i++) {
			unsigned t = pass ? nft + i : order[i];
			for (unsigned j = tpc[t]; j < tpc[t + 1] && k < wave; j++)
				out[k++] = sms[j];
		}
	}
	*len = (unsigned)k;
	rc = 0;
done:
	free(sms);
	free(tpc);
	free(order);
	free(isfirst);
	return rc;
}
