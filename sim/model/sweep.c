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
 * before left them one visit late. */
static uint64_t first_turn_step(const struct cta_device_model *d, unsigned k, uint64_t passes,
                                int small, int late)
{
	if (k == passes) /* the turn of the last, partial pass: at its start */
		return passes * d->gpc_count;
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

int cta_device_sweep_order(const struct cta_device_model *d, unsigned nsms, uint64_t grid,
                           uint64_t wave, unsigned *out, unsigned *len)
{
	*len = 0;
	if (!d || !out || nsms > d->sm_count || nsms == 0)
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
	/* The launch before this one (the CUDA backend's record-slot clear,
	 * one block per sweep_prior_unit of this grid) leaves the sweep's
	 * state: its blocks took the first SMs' turn and then one GPC each,
	 * so this sweep starts at the GPC after its last; a short one leaves
	 * the turns early, a longer one the first SMs at their second half
	 * (traces/reference/h100: prior_* and the grid classes). One of at
	 * least a block per first SM and GPC ends where it began (grids of
	 * 4096 to 16500 blocks start at GPC 0), and a still longer one leaves
	 * the turns late. The clear runs on the whole device: the count is
	 * the model's first SMs even where fewer SMs are used (--sm-limit). */
	uint64_t prior = d->sweep_prior_unit ? grid / d->sweep_prior_unit : 0;
	int rotated = d->sweep_rotate_prior && prior >= d->sweep_rotate_prior;
	int small = !rotated && prior < d->sweep_small_prior;
	int late = d->sweep_late_prior && prior >= d->sweep_late_prior;
	uint64_t full = (uint64_t)d->sweep_first_len + d->gpc_count;
	unsigned gpc0 =
	    prior > d->sweep_first_len && prior < full ? (unsigned)(prior - d->sweep_first_len) : 0;
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
			       (next_turn == 0
			            ? 0
			            : first_turn_step(d, next_turn, passes, small, late)) <= step) {
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

/* The start of the clustered sweep the launch before leaves (see
 * cta_device_sweep_order): the rotation of the first TPCs and the GPC at
 * which each row of the first pass starts. */
static void cluster_prior(const struct cta_device_model *d, uint64_t grid, unsigned nft,
                          unsigned *rot, unsigned *gpc0)
{
	uint64_t prior = d->sweep_prior_unit ? grid / d->sweep_prior_unit : 0;
	uint64_t full = (uint64_t)d->sweep_first_len + d->gpc_count;
	*rot = prior >= 1 && prior <= d->cluster_prior_len && nft
	           ? d->cluster_prior_rot[prior - 1] % nft
	           : 0;
	*gpc0 =
	    prior > d->sweep_first_len && prior < full ? (unsigned)(prior - d->sweep_first_len) : 0;
}

int cta_device_cluster_sweep_order(const struct cta_device_model *d, unsigned nsms, uint64_t grid,
                                   uint64_t wave, unsigned *out, unsigned *len)
{
	*len = 0;
	if (!d || !out || nsms > d->sm_count || nsms == 0)
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
	unsigned rot, gpc0;
	cluster_prior(d, grid, nft, &rot, &gpc0);
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
