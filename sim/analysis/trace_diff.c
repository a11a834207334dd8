/* The diff of two traces of the same launches (usually the simulator
 * against hardware): exactly-once coverage in each, blocks per SM, first-wave
 * placement, dispatch order, makespan, kernel start/end offsets and steals,
 * each compared against a tolerance. docs/TOOLS.md defines every metric. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis_internal.h"
#include "ctasim/tools.h"

/* What diff keeps of a trace: one compact begin per block start or steal
 * (24 bytes; the records themselves are not kept, so two traces can be
 * compared as they stream in) and a few running aggregates. */
struct beg {
	uint64_t block, t;
	uint32_t seq; /* file order among the kernel's begins */
	uint32_t smf; /* SM id, or BEG_NO_SM; | BEG_STEAL */
};
#define BEG_NO_SM 0x7fffffffu
#define BEG_STEAL 0x80000000u
/* Entries reserved for a kernel before its first begin at most (a header
 * may claim 2^63 blocks): 1.5 GiB of address space, not of memory. */
#define BEG_PRESIZE_MAX ((size_t)1 << 26)

struct side {
	struct beg *b[CTA_TRACE_MAX_KERNELS];
	size_t n[CTA_TRACE_MAX_KERNELS], cap[CTA_TRACE_MAX_KERNELS];
	int bad_sm[CTA_TRACE_MAX_KERNELS]; /* a begin names an SM beyond CTA__MAX_SM_ID */
	struct cta__kfacts kf[CTA_TRACE_MAX_KERNELS];
	/* firsts_of / last_of: over every record */
	uint64_t first_begin, first_launch, first_any, last_any, last_end;
	int has_end;
	int oom;
};

static void side_init(struct side *sd)
{
	memset(sd, 0, sizeof(*sd));
	sd->first_begin = sd->first_launch = sd->first_any = UINT64_MAX;
}

static void side_free(struct side *sd)
{
	for (unsigned k = 0; k < CTA_TRACE_MAX_KERNELS; k++)
		free(sd->b[k]);
}

static void sides_free(struct side *sd[2])
{
	for (int s = 0; s < 2; s++) {
		if (sd[s])
			side_free(sd[s]);
		free(sd[s]);
	}
}

/* One record of a trace with header h, in file order. */
static int side_add(struct side *sd, const struct cta_trace_header *h,
                    const struct cta_trace_rec *r)
{
	const unsigned nkernels = h->kernel_count;
	int begin = r->ev == CTA_TEV_START || r->ev == CTA_TEV_STEAL;
	if (begin && r->t_ns < sd->first_begin)
		sd->first_begin = r->t_ns;
	if (r->ev == CTA_TEV_LAUNCH && r->t_ns < sd->first_launch)
		sd->first_launch = r->t_ns;
	if (r->t_ns < sd->first_any)
		sd->first_any = r->t_ns;
	if (r->t_ns > sd->last_any)
		sd->last_any = r->t_ns;
	if (r->ev == CTA_TEV_END && (!sd->has_end || r->t_ns > sd->last_end)) {
		sd->last_end = r->t_ns;
		sd->has_end = 1;
	}
	if (r->kernel >= nkernels || r->kernel >= CTA_TRACE_MAX_KERNELS)
		return 0;
	unsigned k = r->kernel;
	cta__analysis_kfacts_add(&sd->kf[k], r);
	if (!begin || r->block == CTA_TRACE_NONE)
		return 0;
	if (r->sm != CTA_TRACE_NONE && r->sm > CTA__MAX_SM_ID)
		sd->bad_sm[k] = 1;
	if (sd->n[k] == sd->cap[k]) {
		if (sd->n[k] >= UINT32_MAX)
			return CTA_ERANGE;
		/* First sized for the grid (a block begins once, plus steals
		 * of its index): pages are backed only as entries are written,
		 * and arrays grown by doubling would leave their older copies in
		 * the heap (twice the memory on a 2M-block trace). */
		uint64_t want = cta__trace_kernel_blocks(&h->kernels[k]);
		want += want / 64 + 1024;
		size_t cap = sd->cap[k]               ? sd->cap[k] * 2
		             : want < BEG_PRESIZE_MAX ? (size_t)want
		                                      : BEG_PRESIZE_MAX;
		struct beg *nb = realloc(sd->b[k], cap * sizeof(*nb));
		if (!nb)
			return CTA_ENOMEM;
		sd->b[k] = nb;
		sd->cap[k] = cap;
	}
	struct beg *e = &sd->b[k][sd->n[k]];
	e->block = r->block;
	e->t = r->t_ns;
	e->seq = (uint32_t)sd->n[k];
	e->smf = (r->sm == CTA_TRACE_NONE || r->sm > CTA__MAX_SM_ID ? BEG_NO_SM : (uint32_t)r->sm) |
	         (r->ev == CTA_TEV_STEAL ? BEG_STEAL : 0);
	sd->n[k]++;
	return 0;
}

static int side_rec(void *ctx, const struct cta_trace_header *h, const struct cta_trace_rec *r)
{
	return side_add(ctx, h, r);
}

/* What one trace says about one kernel. */
struct kview {
	/* Its block begins (a start on its own index or a steal), sorted by
	 * block, then time, then file order. */
	const struct beg *begs;
	size_t nbegs;
	uint64_t first_end, last_end, first_begin;
	int has_end, has_begin;
	uint64_t steals;
	uint64_t max_sm; /* highest SM id of a begin, or 0 */
};

static uint64_t beg_sm(const struct kview *v, size_t i)
{
	uint32_t sm = v->begs[i].smf & ~BEG_STEAL;
	return sm == BEG_NO_SM ? CTA_TRACE_NONE : sm;
}

static int beg_steal(const struct kview *v, size_t i)
{
	return (v->begs[i].smf & BEG_STEAL) != 0;
}

static int beg_cmp(const void *pa, const void *pb)
{
	const struct beg *x = pa, *y = pb;
	if (x->block != y->block)
		return x->block < y->block ? -1 : 1;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Kernel k of sd (its begins sorted in place). */
static int kview_build(struct kview *v, struct side *sd, uint32_t k)
{
	memset(v, 0, sizeof(*v));
	if (sd->bad_sm[k])
		return CTA_ERANGE;
	if (sd->n[k])
		qsort(sd->b[k], sd->n[k], sizeof(struct beg), beg_cmp);
	v->begs = sd->b[k];
	v->nbegs = sd->n[k];
	v->has_end = sd->kf[k].has_end;
	v->first_end = sd->kf[k].first_end;
	v->last_end = sd->kf[k].last_end;
	for (size_t i = 0; i < v->nbegs; i++) {
		const struct beg *b = &v->begs[i];
		v->steals += beg_steal(v, i);
		if (!v->has_begin || b->t < v->first_begin)
			v->first_begin = b->t;
		v->has_begin = 1;
		if (beg_sm(v, i) != CTA_TRACE_NONE && beg_sm(v, i) > v->max_sm)
			v->max_sm = beg_sm(v, i);
	}
	return 0;
}

static void coverage(struct cta_diff_coverage *c, const struct kview *v, uint64_t blocks)
{
	memset(c, 0, sizeof(*c));
	c->blocks = blocks;
	uint64_t distinct = 0;
	for (size_t i = 0; i < v->nbegs;) {
		size_t j = i;
		while (j < v->nbegs && v->begs[j].block == v->begs[i].block)
			j++;
		if (v->begs[i].block >= blocks) {
			c->out_of_range += j - i;
		} else {
			distinct++;
			if (j - i > 1)
				c->duplicated++;
		}
		i = j;
	}
	c->lost = blocks - distinct;
	c->ok = !c->lost && !c->duplicated && !c->out_of_range;
}

static int cmp_u64(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
	return a < b ? -1 : a > b;
}

/* Blocks per SM in both traces over sms SMs: summary numbers, the
 * identity-free earth mover's distance of the two distributions (mean
 * absolute difference of the sorted counts, over the mean count) and the
 * total variation distance of the per-SM shares. */
static int blocks_per_sm(struct cta_diff_kernel *d, const struct kview *v[2], unsigned sms)
{
	uint64_t *c[2];
	c[0] = calloc(sms, sizeof(uint64_t));
	c[1] = calloc(sms, sizeof(uint64_t));
	if (!c[0] || !c[1]) {
		free(c[0]);
		free(c[1]);
		return CTA_ENOMEM;
	}
	uint64_t tot[2] = {0, 0};
	for (int s = 0; s < 2; s++)
		for (size_t i = 0; i < v[s]->nbegs; i++)
			if (beg_sm(v[s], i) != CTA_TRACE_NONE) {
				c[s][beg_sm(v[s], i)]++;
				tot[s]++;
			}
	double tv = 0;
	for (unsigned i = 0; i < sms; i++) {
		double pa = tot[0] ? (double)c[0][i] / (double)tot[0] : 0;
		double pb = tot[1] ? (double)c[1][i] / (double)tot[1] : 0;
		tv += fabs(pa - pb);
	}
	d->bps_share_distance = tv / 2;
	for (int s = 0; s < 2; s++) {
		qsort(c[s], sms, sizeof(uint64_t), cmp_u64);
		d->bps_min[s] = sms ? c[s][0] : 0;
		d->bps_max[s] = sms ? c[s][sms - 1] : 0;
		d->bps_mean[s] = sms ? (double)tot[s] / sms : 0;
	}
	double emd = 0;
	for (unsigned i = 0; i < sms; i++)
		emd += fabs((double)c[0][i] - (double)c[1][i]);
	double mean = (d->bps_mean[0] + d->bps_mean[1]) / 2;
	d->bps_distance = sms && mean > 0 ? emd / sms / mean : 0;
	free(c[0]);
	free(c[1]);
	return 0;
}

/* Ranks of x[0..n) with ties given their average rank. */
static int ranks(const uint64_t *x, size_t n, double *out)
{
	/* Sorting (value, index) pairs packed in a scratch copy keeps qsort
	 * free of a global comparison context. */
	struct vi {
		uint64_t v;
		size_t i;
	} *p = malloc((n ? n : 1) * sizeof(*p));
	if (!p)
		return CTA_ENOMEM;
	for (size_t i = 0; i < n; i++)
		p[i] = (struct vi){x[i], i};
	qsort(p, n, sizeof(*p), cmp_u64); /* v is the first member: compares by value */
	for (size_t i = 0; i < n;) {
		size_t j = i;
		while (j < n && p[j].v == p[i].v)
			j++;
		double r = ((double)i + (double)(j - 1)) / 2 + 1;
		for (size_t k = i; k < j; k++)
			out[p[k].i] = r;
		i = j;
	}
	free(p);
	return 0;
}

/* Spearman correlation of the begin order over blocks present in both,
 * times quantised to the tick so that sub-tick differences tie. The last
 * use of the kernel's begins: they are freed once the times are taken, and
 * the ranks take the times' place, so the peak is the begins' memory. */
static int start_order(struct cta_diff_kernel *d, const struct kview *v[2], double tick,
                       struct side *sd[2], unsigned kernel)
{
	size_t n = v[0]->nbegs < v[1]->nbegs ? v[0]->nbegs : v[1]->nbegs;
	uint64_t *q[2];
	double *r[2];
	q[0] = malloc((n ? n : 1) * sizeof(uint64_t));
	q[1] = malloc((n ? n : 1) * sizeof(uint64_t));
	int rc = CTA_ENOMEM;
	if (!q[0] || !q[1])
		goto out;
	size_t m = 0, i = 0, j = 0;
	while (i < v[0]->nbegs && j < v[1]->nbegs) {
		uint64_t a = v[0]->begs[i].block, b = v[1]->begs[j].block;
		if (a < b) {
			i++;
		} else if (b < a) {
			j++;
		} else {
			/* The first begin of a duplicated block counts. */
			q[0][m] = (uint64_t)floor((double)v[0]->begs[i].t / tick);
			q[1][m] = (uint64_t)floor((double)v[1]->begs[j].t / tick);
			m++;
			while (i < v[0]->nbegs && v[0]->begs[i].block == a)
				i++;
			while (j < v[1]->nbegs && v[1]->begs[j].block == b)
				j++;
		}
	}
	for (int s = 0; s < 2; s++) {
		free(sd[s]->b[kernel]);
		sd[s]->b[kernel] = NULL;
		sd[s]->n[kernel] = sd[s]->cap[kernel] = 0;
	}
	r[0] = (double *)(void *)q[0];
	r[1] = (double *)(void *)q[1];
	d->order_n = m;
	d->order_rho = 1;
	if (m >= 2) {
		/* (ranks reads all of x before it writes out: r may be q) */
		if ((rc = ranks(q[0], m, r[0])) || (rc = ranks(q[1], m, r[1])))
			goto out;
		double mean = ((double)m + 1) / 2, sab = 0, saa = 0, sbb = 0;
		for (size_t k = 0; k < m; k++) {
			double a = r[0][k] - mean, b = r[1][k] - mean;
			sab += a * b;
			saa += a * a;
			sbb += b * b;
		}
		/* A trace whose starts all fall in one tick says nothing about
		 * order, which is no evidence of disagreement. */
		if (saa > 0 && sbb > 0)
			d->order_rho = sab / sqrt(saa * sbb);
	}
	rc = 0;
out:
	free(q[0]);
	free(q[1]);
	return rc;
}

/* First wave: blocks that started on their own index before the kernel's
 * first end, i.e. while the device was filling up. */
static void first_wave(struct cta_diff_kernel *d, const struct kview *v[2])
{
	for (int s = 0; s < 2; s++) {
		d->first_wave_n[s] = 0;
		for (size_t i = 0; i < v[s]->nbegs; i++)
			if (!beg_steal(v[s], i) &&
			    (!v[s]->has_end || v[s]->begs[i].t < v[s]->first_end))
				d->first_wave_n[s]++;
	}
	uint64_t same = 0;
	size_t i = 0, j = 0;
	while (i < v[0]->nbegs && j < v[1]->nbegs) {
		const struct beg *a = &v[0]->begs[i], *b = &v[1]->begs[j];
		if (a->block < b->block) {
			i++;
			continue;
		}
		if (b->block < a->block) {
			j++;
			continue;
		}
		int fa = !beg_steal(v[0], i) && (!v[0]->has_end || a->t < v[0]->first_end);
		int fb = !beg_steal(v[1], j) && (!v[1]->has_end || b->t < v[1]->first_end);
		if (fa && fb && beg_sm(v[0], i) == beg_sm(v[1], j))
			same++;
		uint64_t blk = a->block;
		while (i < v[0]->nbegs && v[0]->begs[i].block == blk)
			i++;
		while (j < v[1]->nbegs && v[1]->begs[j].block == blk)
			j++;
	}
	d->first_wave_same = same;
	uint64_t mx =
	    d->first_wave_n[0] > d->first_wave_n[1] ? d->first_wave_n[0] : d->first_wave_n[1];
	d->first_wave = mx ? (double)same / (double)mx : 1;
}

/* The origin of a trace's times: its first block begin, where the kernels'
 * own work starts; without one, the first launch record, or the first
 * record. */
static uint64_t origin_of(const struct side *sd)
{
	return sd->first_begin != UINT64_MAX    ? sd->first_begin
	       : sd->first_launch != UINT64_MAX ? sd->first_launch
	       : sd->first_any != UINT64_MAX    ? sd->first_any
	                                        : 0;
}

/* First launch record to first block begin, or -1 when either is missing. */
static int64_t launch_offset_of(const struct side *sd)
{
	if (sd->first_begin == UINT64_MAX || sd->first_launch == UINT64_MAX)
		return -1;
	return (int64_t)sd->first_begin - (int64_t)sd->first_launch;
}

/* The last block end; without one, the last record. */
static uint64_t last_of(const struct side *sd)
{
	return sd->has_end ? sd->last_end : sd->last_any;
}

static int same_launches(const struct cta_trace_header *ha, const struct cta_trace_header *hb,
                         char *errbuf, size_t errlen)
{
	if (ha->kernel_count != hb->kernel_count)
		return cta__analysis_fail(errbuf, errlen,
		                          "different launches: %u kernels in A, %u in B",
		                          ha->kernel_count, hb->kernel_count);
	for (unsigned k = 0; k < ha->kernel_count; k++) {
		const struct cta_trace_kernel *x = &ha->kernels[k], *y = &hb->kernels[k];
		if (strcmp(x->name, y->name))
			return cta__analysis_fail(
			    errbuf, errlen, "different kernels: kernel %u is '%s' in A, '%s' in B",
			    k, x->name, y->name);
		const unsigned *dx[3] = {x->grid, x->block, x->cluster};
		const unsigned *dy[3] = {y->grid, y->block, y->cluster};
		static const char *const dn[3] = {"grid", "block", "cluster"};
		for (int i = 0; i < 3; i++)
			if (memcmp(dx[i], dy[i], 3 * sizeof(unsigned)))
				return cta__analysis_fail(
				    errbuf, errlen,
				    "different launch configs: kernel %u (%s) %s is %u,%u,%u in A, "
				    "%u,%u,%u in B",
				    k, x->name, dn[i], dx[i][0], dx[i][1], dx[i][2], dy[i][0],
				    dy[i][1], dy[i][2]);
		/* The CUDA backend adds a few shared bytes of its own (instrumentation
		 * and CLC state): differences within 1 KiB are the same launch. */
		uint64_t dsm = x->smem_bytes > y->smem_bytes ? x->smem_bytes - y->smem_bytes
		                                             : y->smem_bytes - x->smem_bytes;
		if (dsm > 1024)
			return cta__analysis_fail(
			    errbuf, errlen,
			    "different launch configs: kernel %u (%s) smem is %" PRIu64
			    " in A, %" PRIu64 " in B",
			    k, x->name, x->smem_bytes, y->smem_bytes);
		if (x->stream != y->stream || x->priority != y->priority)
			return cta__analysis_fail(
			    errbuf, errlen,
			    "different launch configs: kernel %u (%s) stream/priority is %d/%d "
			    "in A, %d/%d in B",
			    k, x->name, x->stream, x->priority, y->stream, y->priority);
	}
	return 0;
}

/* a - b in ns, as 0 when they are within one tick of each other. */
static int64_t tick_diff(int64_t b, int64_t a, double tick)
{
	double d = (double)b - (double)a;
	return fabs(d) <= tick ? 0 : (int64_t)d;
}

/* The diff of two traces' headers and sides (whose begins it sorts). */
static int diff_sides(struct cta_diff_result *out, const struct cta_trace_header *ha,
                      const struct cta_trace_header *hb, struct side *sd[2],
                      const struct cta_diff_tol *tol, char *errbuf, size_t errlen)
{
	static const struct cta_diff_tol defaults = CTA_DIFF_TOL_INIT;
	memset(out, 0, sizeof(*out));
	if (errbuf && errlen)
		errbuf[0] = 0;
	int rc = same_launches(ha, hb, errbuf, errlen);
	if (rc)
		return rc;
	out->tol = tol ? *tol : defaults;
	const struct cta_trace_header *th[2] = {ha, hb};
	double tick = ha->tick_ns > hb->tick_ns ? ha->tick_ns : hb->tick_ns;
	if (!(tick > 0))
		tick = 1;
	out->tick_ns = tick;
	for (int s = 0; s < 2; s++)
		out->side[s] = strcmp(th[s]->backend, "cuda") ? "simulator" : "hardware";
	uint64_t origin[2];
	for (int s = 0; s < 2; s++) {
		origin[s] = origin_of(sd[s]);
		uint64_t last = last_of(sd[s]);
		out->makespan_ns[s] = last > origin[s] ? last - origin[s] : 0;
		out->launch_offset_ns[s] = launch_offset_of(sd[s]);
	}
	double ma = (double)out->makespan_ns[0], mb = (double)out->makespan_ns[1];
	if (fabs(mb - ma) <= tick)
		out->makespan_ratio = 1;
	else
		out->makespan_ratio = ma > 0 ? mb / ma : INFINITY;
	if (!(fabs(out->makespan_ratio - 1) <= out->tol.makespan))
		out->outside |= CTA_DIFF_M_MAKESPAN;

	out->kernel_count = ha->kernel_count;
	for (unsigned k = 0; k < out->kernel_count; k++) {
		struct cta_diff_kernel *d = &out->kernels[k];
		struct kview kv[2];
		const struct kview *v[2] = {&kv[0], &kv[1]};
		snprintf(d->name, sizeof(d->name), "%s", ha->kernels[k].name);
		for (int s = 0; s < 2; s++)
			if ((rc = kview_build(&kv[s], sd[s], k))) {
				cta__analysis_fail(errbuf, errlen, "trace %c: %s", s ? 'B' : 'A',
				                   cta_strerror(rc));
				return rc;
			}
		uint64_t blocks = cta__trace_kernel_blocks(&ha->kernels[k]);
		for (int s = 0; s < 2; s++) {
			coverage(&d->coverage[s], v[s], blocks);
			d->steals_per_block[s] = blocks ? (double)v[s]->steals / (double)blocks : 0;
			d->start_offset_ns[s] =
			    v[s]->has_begin ? (int64_t)v[s]->first_begin - (int64_t)origin[s] : 0;
			d->end_offset_ns[s] =
			    v[s]->has_end ? (int64_t)v[s]->last_end - (int64_t)origin[s] : 0;
		}
		uint64_t max_sm = kv[0].max_sm > kv[1].max_sm ? kv[0].max_sm : kv[1].max_sm;
		d->sms = (kv[0].nbegs || kv[1].nbegs) ? (unsigned)max_sm + 1 : 0;
		if (!rc)
			rc = blocks_per_sm(d, v, d->sms);
		if (!rc)
			first_wave(d, v);
		if (!rc)
			rc = start_order(d, v, tick, sd, k);
		if (rc) {
			cta__analysis_fail(errbuf, errlen, "%s", cta_strerror(rc));
			return rc;
		}
		d->start_diff_ns = tick_diff(d->start_offset_ns[1], d->start_offset_ns[0], tick);
		d->end_diff_ns = tick_diff(d->end_offset_ns[1], d->end_offset_ns[0], tick);

		const struct cta_diff_tol *t = &out->tol;
		if (!d->coverage[0].ok || !d->coverage[1].ok)
			d->outside |= CTA_DIFF_M_COVERAGE;
		if (!(d->bps_distance <= t->bps_distance))
			d->outside |= CTA_DIFF_M_BPS;
		if (!(d->first_wave >= t->first_wave))
			d->outside |= CTA_DIFF_M_FIRST_WAVE;
		if (!(d->order_rho >= t->order_rho))
			d->outside |= CTA_DIFF_M_ORDER;
		double worst = (double)llabs(d->start_diff_ns) > (double)llabs(d->end_diff_ns)
		                   ? (double)llabs(d->start_diff_ns)
		                   : (double)llabs(d->end_diff_ns);
		if (worst > 0 && !(ma > 0 && worst / ma <= t->offset))
			d->outside |= CTA_DIFF_M_OFFSET;
		if (!(fabs(d->steals_per_block[1] - d->steals_per_block[0]) <= t->steals_per_block))
			d->outside |= CTA_DIFF_M_STEALS;
		out->outside |= d->outside;
	}
	out->within = out->outside == 0;
	return 0;
}

int cta_trace_diff(struct cta_diff_result *out, const struct cta_trace *a,
                   const struct cta_trace *b, const struct cta_diff_tol *tol, char *errbuf,
                   size_t errlen)
{
	const struct cta_trace *tr[2] = {a, b};
	struct side *sd[2] = {calloc(1, sizeof(struct side)), calloc(1, sizeof(struct side))};
	int rc = 0;
	if (!sd[0] || !sd[1]) {
		rc = CTA_ENOMEM;
	} else {
		side_init(sd[0]);
		side_init(sd[1]);
		for (int s = 0; s < 2; s++) {
			for (size_t i = 0; i < tr[s]->count && !rc; i++)
				rc = side_add(sd[s], &tr[s]->header, &tr[s]->recs[i]);
		}
	}
	if (rc) {
		memset(out, 0, sizeof(*out));
		cta__analysis_fail(errbuf, errlen, "%s", cta_strerror(rc));
	} else {
		rc = diff_sides(out, &a->header, &b->header, sd, tol, errbuf, errlen);
	}
	sides_free(sd);
	return rc;
}

int cta_trace_diff_files(struct cta_diff_result *out, const char *path_a, const char *path_b,
                         const struct cta_diff_tol *tol, int complete[2], char *errbuf,
                         size_t errlen)
{
	const char *path[2] = {path_a, path_b};
	struct side *sd[2] = {calloc(1, sizeof(struct side)), calloc(1, sizeof(struct side))};
	struct cta_trace t[2];
	memset(t, 0, sizeof(t));
	int rc = 0;
	memset(out, 0, sizeof(*out));
	if (!sd[0] || !sd[1]) {
		rc = CTA_ENOMEM;
		cta__analysis_fail(errbuf, errlen, "%s", cta_strerror(rc));
	}
	for (int s = 0; s < 2 && !rc; s++)
		side_init(sd[s]);
	for (int s = 0; s < 2 && !rc; s++) {
		rc = cta_trace_stream(&t[s], path[s], side_rec, sd[s], errbuf, errlen);
		if (rc && errbuf && errlen && !errbuf[0])
			/* (side_rec's own failure: out of memory) */
			snprintf(errbuf, errlen, "%s: %s", path[s], cta_strerror(rc));
		if (complete)
			complete[s] = t[s].complete;
	}
	if (!rc)
		rc = diff_sides(out, &t[0].header, &t[1].header, sd, tol, errbuf, errlen);
	sides_free(sd);
	return rc;
}

const char *cta_diff_metric_name(unsigned bit)
{
	switch (bit) {
	case CTA_DIFF_M_COVERAGE:
		return "coverage";
	case CTA_DIFF_M_BPS:
		return "blocks_per_sm";
	case CTA_DIFF_M_FIRST_WAVE:
		return "first_wave";
	case CTA_DIFF_M_ORDER:
		return "start_order";
	case CTA_DIFF_M_MAKESPAN:
		return "busy_span";
	case CTA_DIFF_M_OFFSET:
		return "offsets";
	case CTA_DIFF_M_STEALS:
		return "steals_per_block";
	}
	return "?";
}

static const char *okstr(unsigned outside, unsigned bit)
{
	return outside & bit ? "OUTSIDE" : "ok";
}

static void put_names(FILE *f, unsigned outside)
{
	int first = 1;
	for (unsigned bit = 1; bit <= CTA_DIFF_M_STEALS; bit <<= 1)
		if (outside & bit) {
			fprintf(f, "%s%s", first ? "" : ", ", cta_diff_metric_name(bit));
			first = 0;
		}
}

static void put_cov(FILE *f, const struct cta_diff_coverage *c)
{
	if (c->ok)
		fprintf(f, "ok (%" PRIu64 " blocks, each once)", c->blocks);
	else
		fprintf(f,
		        "VIOLATED (%" PRIu64 " lost, %" PRIu64 " duplicated, %" PRIu64
		        " out of range)",
		        c->lost, c->duplicated, c->out_of_range);
}

int cta_diff_write_text(const struct cta_diff_result *r, FILE *f, const char *na, const char *nb)
{
	const struct cta_diff_tol *t = &r->tol;
	na = na ? na : "A";
	nb = nb ? nb : "B";
	const char *sa = r->side[0] ? r->side[0] : "A", *sb = r->side[1] ? r->side[1] : "B";
	/* Which side is which, and every ratio says which over which: the
	 * measures are defined once, in traces/FORMAT.md ("Measures"). */
	fprintf(f, "A: %s (%s)\nB: %s (%s)\n", na, sa, nb, sb);
	fprintf(f, "timer tick %g ns: smaller time differences are not differences\n\n",
	        r->tick_ns);
	fprintf(f,
	        "busy span         A %" PRIu64 " ns, B %" PRIu64
	        " ns, ratio B/A (%s/%s) %.3f (tolerance +-%.2f)  %s\n",
	        r->makespan_ns[0], r->makespan_ns[1], sb, sa, r->makespan_ratio, t->makespan,
	        okstr(r->outside, CTA_DIFF_M_MAKESPAN));
	fprintf(f, "                  (first block start to last block end)\n");
	fprintf(f, "launch latency    A ");
	for (int s = 0; s < 2; s++) {
		if (r->launch_offset_ns[s] < 0)
			fprintf(f, "-");
		else
			fprintf(f, "%" PRId64 " ns", r->launch_offset_ns[s]);
		fprintf(f, s ? " (first launch to first block start; not compared)\n" : ", B ");
	}
	fprintf(f, "makespan          A ");
	for (int s = 0; s < 2; s++) {
		if (r->launch_offset_ns[s] < 0)
			fprintf(f, "-");
		else
			fprintf(f, "%" PRIu64 " ns",
			        (uint64_t)r->launch_offset_ns[s] + r->makespan_ns[s]);
		fprintf(f, s ? " (first launch to last block end; not compared)\n" : ", B ");
	}
	for (unsigned k = 0; k < r->kernel_count; k++) {
		const struct cta_diff_kernel *d = &r->kernels[k];
		fprintf(f, "\nkernel %u: %s\n", k, d->name);
		fprintf(f, "  coverage        A ");
		put_cov(f, &d->coverage[0]);
		fprintf(f, "\n                  B ");
		put_cov(f, &d->coverage[1]);
		fprintf(f, "  %s\n", okstr(d->outside, CTA_DIFF_M_COVERAGE));
		fprintf(f,
		        "  indices per SM  A mean %.2f [%" PRIu64 "..%" PRIu64
		        "], B mean %.2f [%" PRIu64 "..%" PRIu64 "] over %u SMs\n"
		        "                  distance %.3f (max %.3f)  %s; by SM id %.3f\n",
		        d->bps_mean[0], d->bps_min[0], d->bps_max[0], d->bps_mean[1], d->bps_min[1],
		        d->bps_max[1], d->sms, d->bps_distance, t->bps_distance,
		        okstr(d->outside, CTA_DIFF_M_BPS), d->bps_share_distance);
		fprintf(f,
		        "  first wave      A %" PRIu64 ", B %" PRIu64 " blocks, %" PRIu64
		        " on the same SM: %.3f (min %.3f)  %s\n",
		        d->first_wave_n[0], d->first_wave_n[1], d->first_wave_same, d->first_wave,
		        t->first_wave, okstr(d->outside, CTA_DIFF_M_FIRST_WAVE));
		fprintf(
		    f, "  start order     Spearman %.4f over %" PRIu64 " blocks (min %.3f)  %s\n",
		    d->order_rho, d->order_n, t->order_rho, okstr(d->outside, CTA_DIFF_M_ORDER));
		double ma = r->makespan_ns[0] ? (double)r->makespan_ns[0] : 1;
		fprintf(
		    f,
		    "  start offset    A %" PRId64 " ns, B %" PRId64 " ns, B-A (%s-%s) %+" PRId64
		    " ns (%.1f%% of busy span A)\n"
		    "  end offset      A %" PRId64 " ns, B %" PRId64 " ns, B-A (%s-%s) %+" PRId64
		    " ns (%.1f%% of busy span A; max %.1f%%)  %s\n",
		    d->start_offset_ns[0], d->start_offset_ns[1], sb, sa, d->start_diff_ns,
		    100.0 * (double)d->start_diff_ns / ma, d->end_offset_ns[0], d->end_offset_ns[1],
		    sb, sa, d->end_diff_ns, 100.0 * (double)d->end_diff_ns / ma, 100 * t->offset,
		    okstr(d->outside, CTA_DIFF_M_OFFSET));
		fprintf(f, "  steals/block    A %.3f, B %.3f (max difference %.3f)  %s\n",
		        d->steals_per_block[0], d->steals_per_block[1], t->steals_per_block,
		        okstr(d->outside, CTA_DIFF_M_STEALS));
	}
	if (r->within) {
		fprintf(f, "\nverdict: within tolerance\n");
	} else {
		fprintf(f, "\nverdict: OUTSIDE tolerance: ");
		put_names(f, r->outside);
		fputc('\n', f);
	}
	return ferror(f) ? CTA_EIO : 0;
}

/* JSON has no infinity or NaN; a ratio against an empty trace is null. */
static void put_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.6g", v);
	else
		fputs("null", f);
}

static void put_outside(FILE *f, unsigned outside)
{
	fputc('[', f);
	int first = 1;
	for (unsigned bit = 1; bit <= CTA_DIFF_M_STEALS; bit <<= 1)
		if (outside & bit) {
			fprintf(f, "%s\"%s\"", first ? "" : ",", cta_diff_metric_name(bit));
			first = 0;
		}
	fputc(']', f);
}

int cta_diff_write_json(const struct cta_diff_result *r, FILE *f, const char *na, const char *nb)
{
	const struct cta_diff_tol *t = &r->tol;
	fputs("{\"a\":\"", f);
	cta__trace_put_json_str(f, na ? na : "A");
	fputs("\",\"b\":\"", f);
	cta__trace_put_json_str(f, nb ? nb : "B");
	fprintf(f, "\",\"sides\":[\"%s\",\"%s\"]", r->side[0] ? r->side[0] : "A",
	        r->side[1] ? r->side[1] : "B");
	fprintf(f, ",\"within\":%s,\"outside\":", r->within ? "true" : "false");
	put_outside(f, r->outside);
	fputs(",\"tick_ns\":", f);
	put_num(f, r->tick_ns);
	fputs(",\"tolerance\":{\"bps_distance\":", f);
	put_num(f, t->bps_distance);
	fputs(",\"first_wave\":", f);
	put_num(f, t->first_wave);
	fputs(",\"order_rho\":", f);
	put_num(f, t->order_rho);
	fputs(",\"makespan\":", f);
	put_num(f, t->makespan);
	fputs(",\"offset\":", f);
	put_num(f, t->offset);
	fputs(",\"steals_per_block\":", f);
	put_num(f, t->steals_per_block);
	fprintf(f, "},\"makespan_ns\":[%" PRIu64 ",%" PRIu64 "],\"makespan_ratio\":",
	        r->makespan_ns[0], r->makespan_ns[1]);
	put_num(f, r->makespan_ratio);
	/* makespan_ns/_ratio are the busy span, under their older names. */
	fprintf(f, ",\"busy_span_ns\":[%" PRIu64 ",%" PRIu64 "],\"busy_span_ratio\":",
	        r->makespan_ns[0], r->makespan_ns[1]);
	put_num(f, r->makespan_ratio);
	fprintf(f, ",\"launch_offset_ns\":[%" PRId64 ",%" PRId64 "]", r->launch_offset_ns[0],
	        r->launch_offset_ns[1]);
	fputs(",\"kernels\":[", f);
	for (unsigned k = 0; k < r->kernel_count; k++) {
		const struct cta_diff_kernel *d = &r->kernels[k];
		fprintf(f, "%s{\"kernel\":%u,\"name\":\"", k ? "," : "", k);
		cta__trace_put_json_str(f, d->name);
		fputs("\",\"coverage\":[", f);
		for (int s = 0; s < 2; s++) {
			const struct cta_diff_coverage *c = &d->coverage[s];
			fprintf(f,
			        "%s{\"ok\":%s,\"blocks\":%" PRIu64 ",\"lost\":%" PRIu64
			        ",\"duplicated\":%" PRIu64 ",\"out_of_range\":%" PRIu64 "}",
			        s ? "," : "", c->ok ? "true" : "false", c->blocks, c->lost,
			        c->duplicated, c->out_of_range);
		}
		fprintf(f, "],\"sms\":%u,\"bps_mean\":[", d->sms);
		put_num(f, d->bps_mean[0]);
		fputc(',', f);
		put_num(f, d->bps_mean[1]);
		fprintf(f,
		        "],\"bps_min\":[%" PRIu64 ",%" PRIu64 "],\"bps_max\":[%" PRIu64 ",%" PRIu64
		        "],\"bps_distance\":",
		        d->bps_min[0], d->bps_min[1], d->bps_max[0], d->bps_max[1]);
		put_num(f, d->bps_distance);
		fputs(",\"bps_share_distance\":", f);
		put_num(f, d->bps_share_distance);
		fprintf(f,
		        ",\"first_wave_n\":[%" PRIu64 ",%" PRIu64 "],\"first_wave_same\":%" PRIu64
		        ",\"first_wave\":",
		        d->first_wave_n[0], d->first_wave_n[1], d->first_wave_same);
		put_num(f, d->first_wave);
		fprintf(f, ",\"order_n\":%" PRIu64 ",\"order_rho\":", d->order_n);
		put_num(f, d->order_rho);
		fprintf(f,
		        ",\"start_offset_ns\":[%" PRId64 ",%" PRId64 "],\"end_offset_ns\":[%" PRId64
		        ",%" PRId64 "],\"start_diff_ns\":%" PRId64 ",\"end_diff_ns\":%" PRId64
		        ",\"steals_per_block\":[",
		        d->start_offset_ns[0], d->start_offset_ns[1], d->end_offset_ns[0],
		        d->end_offset_ns[1], d->start_diff_ns, d->end_diff_ns);
		put_num(f, d->steals_per_block[0]);
		fputc(',', f);
		put_num(f, d->steals_per_block[1]);
		fputs("],\"outside\":", f);
		put_outside(f, d->outside);
		fputc('}', f);
	}
	fputs("]}\n", f);
	return ferror(f) ? CTA_EIO : 0;
}
