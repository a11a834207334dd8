/* Import of cuda_scheduling_examiner results (its per-benchmark JSON logs)
 * as a ctasim trace, so that measurements taken with that tool can be
 * compared against the simulator with `ctasim diff`. Each file is one
 * benchmark, which becomes one stream; each of its kernel entries ("times"
 * objects with "block_times") becomes one kernel with a launch record, a
 * start and an end per block, and a kernel_end. Times there are seconds;
 * here nanoseconds from the earliest time of all files. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctasim/tools.h"
#include "trace_internal.h"
#include "util/json.h"

/* The logs hold one number per block start and end: 64 MiB of JSON is
 * about a million blocks. */
#define CSE_MAX_BYTES ((size_t)1 << 30)

struct ev {
	double t; /* seconds, as in the file */
	int order;
	struct cta_trace_rec r;
};

struct imp {
	struct ev *ev;
	size_t n, cap;
	struct cta_trace_header h;
	unsigned dropped; /* launch records after their kernel's first block */
	char *err;
	size_t errlen;
};

static int push(struct imp *im, double t, int order, const struct cta_trace_rec *r)
{
	if (im->n == im->cap) {
		size_t nc = im->cap ? im->cap * 2 : 4096;
		struct ev *ne = realloc(im->ev, nc * sizeof(*ne));
		if (!ne) {
			snprintf(im->err, im->errlen, "out of memory");
			return CTA_ENOMEM;
		}
		im->ev = ne;
		im->cap = nc;
	}
	struct ev *e = &im->ev[im->n++];
	e->t = t;
	e->order = order;
	e->r = *r;
	return 0;
}

/* A number >= 0 that is a time in seconds. */
static int want_time(const struct cta__json_ctx *c, const struct cta__json *v, const char *path,
                     double *out)
{
	int rc = cta__json_want_double(c, v, path, out);
	if (rc)
		return rc;
	if (!(*out >= 0) || !isfinite(*out))
		return cta__json_fail(c, CTA_EPARSE, v->line, path,
		                      "a time must be a number of seconds >= 0");
	return 0;
}

static int one_kernel(struct imp *im, const struct cta__json_ctx *c, const struct cta__json *k,
                      const char *path, const char *bench, unsigned stream)
{
	char p[256];
	struct cta_trace_header *h = &im->h;
	if (h->kernel_count == CTA_TRACE_MAX_KERNELS)
		return cta__json_fail(c, CTA_ERANGE, k->line, path,
		                      "a trace describes at most %d kernels",
		                      CTA_TRACE_MAX_KERNELS);
	unsigned id = h->kernel_count;
	struct cta_trace_kernel *tk = &h->kernels[id];
	memset(tk, 0, sizeof(*tk));
	int64_t blocks = 0, threads = 0, smem = 0;
	const struct cta__json *v;
	int rc;
	cta__json_path_member(p, sizeof(p), path, "block_count");
	if ((rc = cta__json_want_int(c, cta__json_get(k, "block_count"), p, 1, INT32_MAX, &blocks)))
		return rc;
	cta__json_path_member(p, sizeof(p), path, "thread_count");
	if ((rc = cta__json_want_int(c, cta__json_get(k, "thread_count"), p, 1, 1024, &threads)))
		return rc;
	if ((v = cta__json_get(k, "shared_memory"))) {
		cta__json_path_member(p, sizeof(p), path, "shared_memory");
		if ((rc = cta__json_want_int(c, v, p, 0, INT32_MAX, &smem)))
			return rc;
	}
	if ((v = cta__json_get(k, "kernel_name"))) {
		cta__json_path_member(p, sizeof(p), path, "kernel_name");
		if ((rc = cta__json_want_string(c, v, p, 0, tk->name, sizeof(tk->name))))
			return rc;
	}
	if (!tk->name[0])
		snprintf(tk->name, sizeof(tk->name), "%s", bench);
	tk->grid[0] = (unsigned)blocks;
	tk->grid[1] = tk->grid[2] = 1;
	tk->block[0] = (unsigned)threads;
	tk->block[1] = tk->block[2] = 1;
	tk->cluster[0] = tk->cluster[1] = tk->cluster[2] = 1;
	tk->smem_bytes = (uint64_t)smem;
	tk->stream = (int)stream;

	const struct cta__json *bt = cta__json_get(k, "block_times");
	const struct cta__json *bs = cta__json_get(k, "block_smids");
	char pt[256], ps[256];
	cta__json_path_member(pt, sizeof(pt), path, "block_times");
	cta__json_path_member(ps, sizeof(ps), path, "block_smids");
	if ((rc = cta__json_want(c, bt, pt, CTA__JSON_ARRAY)) ||
	    (rc = cta__json_want(c, bs, ps, CTA__JSON_ARRAY)))
		return rc;
	if (bt->u.arr.n != 2 * (size_t)blocks)
		return cta__json_fail(c, CTA_EPARSE, bt->line, pt,
		                      "%zu times for %lld blocks (a start and an end per block)",
		                      bt->u.arr.n, (long long)blocks);
	if (bs->u.arr.n != (size_t)blocks)
		return cta__json_fail(c, CTA_EPARSE, bs->line, ps, "%zu SM ids for %lld blocks",
		                      bs->u.arr.n, (long long)blocks);
	h->kernel_count++;
	struct cta_trace_rec r = {.ev = CTA_TEV_LAUNCH,
	                          .kernel = id,
	                          .block = CTA_TRACE_NONE,
	                          .phys = CTA_TRACE_NONE,
	                          .sm = CTA_TRACE_NONE,
	                          .arg = stream};
	double last = 0, first = INFINITY;
	for (int64_t b = 0; b < blocks; b++) {
		double t0, t1;
		int64_t sm;
		cta__json_path_index(p, sizeof(p), pt, (size_t)(2 * b));
		if ((rc = want_time(c, bt->u.arr.items[2 * b], p, &t0)))
			return rc;
		cta__json_path_index(p, sizeof(p), pt, (size_t)(2 * b + 1));
		if ((rc = want_time(c, bt->u.arr.items[2 * b + 1], p, &t1)))
			return rc;
		if (t1 < t0)
			return cta__json_fail(c, CTA_EPARSE, bt->u.arr.items[2 * b + 1]->line, p,
			                      "block %lld ends before it starts", (long long)b);
		cta__json_path_index(p, sizeof(p), ps, (size_t)b);
		if ((rc = cta__json_want_int(c, bs->u.arr.items[b], p, 0, CTA__MAX_SM_ID, &sm)))
			return rc;
		struct cta_trace_rec s = {.ev = CTA_TEV_START,
		                          .kernel = id,
		                          .block = (uint64_t)b,
		                          .phys = (uint64_t)b,
		                          .sm = (uint64_t)sm,
		                          .arg = CTA_TRACE_NONE};
		if ((rc = push(im, t0, 1, &s)))
			return rc;
		s.ev = CTA_TEV_END;
		if ((rc = push(im, t1, 2, &s)))
			return rc;
		last = t1 > last ? t1 : last;
		first = t0 < first ? t0 : first;
	}
	/* The launch is the CPU time just before the launch call, on the same
	 * clock as the blocks; without it the trace has no launch record. */
	const struct cta__json *lt = cta__json_get(k, "cuda_launch_times");
	if (lt) {
		cta__json_path_member(p, sizeof(p), path, "cuda_launch_times");
		if ((rc = cta__json_want(c, lt, p, CTA__JSON_ARRAY)))
			return rc;
		double tl;
		char pi[256];
		cta__json_path_index(pi, sizeof(pi), p, 0);
		if (lt->u.arr.n < 1)
			return cta__json_fail(c, CTA_EPARSE, lt->line, p, "empty");
		if ((rc = want_time(c, lt->u.arr.items[0], pi, &tl)))
			return rc;
		/* A launch stamped after the kernel's first block (clocks that
		 * disagree) would make a negative launch latency: left out, and
		 * counted so the command says so. */
		if (tl > first)
			im->dropped++;
		else if ((rc = push(im, tl, 0, &r)))
			return rc;
	}
	r.ev = CTA_TEV_KERNEL_END;
	r.arg = CTA_TRACE_NONE;
	return push(im, last, 3, &r);
}

static int one_file(struct imp *im, const char *path, unsigned stream)
{
	struct cta__json_doc *d = NULL;
	struct cta__json_limits lim = {.max_bytes = CSE_MAX_BYTES};
	int rc = cta__json_load(&d, path, &lim, im->err, im->errlen);
	if (rc)
		return rc;
	struct cta__json_ctx c = {.file = path, .err = im->err, .errlen = im->errlen};
	const struct cta__json *root = cta__json_root(d);
	char bench[64] = "";
	const struct cta__json *v;
	if ((rc = cta__json_want(&c, root, "(top level)", CTA__JSON_OBJECT)))
		goto out;
	/* A label names the instance best, then the benchmark. */
	if ((v = cta__json_get(root, "label")) && v->type == CTA__JSON_STRING && v->u.str.len)
		rc = cta__json_want_string(&c, v, "label", 0, bench, sizeof(bench));
	else if ((v = cta__json_get(root, "benchmark_name")))
		rc = cta__json_want_string(&c, v, "benchmark_name", 0, bench, sizeof(bench));
	if (rc)
		goto out;
	if (!bench[0])
		snprintf(bench, sizeof(bench), "kernel");
	const struct cta__json *times = cta__json_get(root, "times");
	if ((rc = cta__json_want(&c, times, "times", CTA__JSON_ARRAY)))
		goto out;
	unsigned found = 0;
	for (size_t i = 0; i < times->u.arr.n; i++) {
		const struct cta__json *k = times->u.arr.items[i];
		char p[64];
		cta__json_path_index(p, sizeof(p), "times", i);
		if ((rc = cta__json_want(&c, k, p, CTA__JSON_OBJECT)))
			goto out;
		/* The first entry is empty and CPU-time entries have no blocks. */
		if (!cta__json_get(k, "block_times"))
			continue;
		if ((rc = one_kernel(im, &c, k, p, bench, stream)))
			goto out;
		found++;
	}
	if (!found)
		rc = cta__json_fail(&c, CTA_EPARSE, times->line, "times",
		                    "no kernel entries (objects with \"block_times\"): not a "
		                    "cuda_scheduling_examiner result, or one that did not finish");
out:
	cta__json_free(d);
	return rc;
}

static int ev_cmp(const void *pa, const void *pb)
{
	const struct ev *a = pa, *b = pb;
	if (a->r.t_ns != b->r.t_ns)
		return a->r.t_ns < b->r.t_ns ? -1 : 1;
	if (a->order != b->order)
		return a->order - b->order;
	if (a->r.kernel != b->r.kernel)
		return a->r.kernel < b->r.kernel ? -1 : 1;
	return a->r.block < b->r.block ? -1 : a->r.block > b->r.block;
}

static int u64_cmp(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
	return a < b ? -1 : a > b;
}

int cta_trace_import_cse(const char *const *paths, unsigned npaths, const char *out_path,
                         const struct cta_cse_opts *opts, struct cta_cse_stats *stats, char *err,
                         size_t errlen)
{
	struct imp im;
	memset(&im, 0, sizeof(im));
	im.err = err;
	im.errlen = errlen;
	if (stats)
		memset(stats, 0, sizeof(*stats));
	if (!npaths || !out_path) {
		snprintf(err, errlen, "no input files or no output path");
		return CTA_EINVAL;
	}
	int rc = 0;
	for (unsigned f = 0; f < npaths && !rc; f++)
		rc = one_file(&im, paths[f], f);
	if (rc)
		goto out;
	/* Time zero: the earliest time of all files. */
	double t0 = INFINITY;
	for (size_t i = 0; i < im.n; i++)
		t0 = im.ev[i].t < t0 ? im.ev[i].t : t0;
	for (size_t i = 0; i < im.n; i++)
		im.ev[i].r.t_ns = (uint64_t)llround((im.ev[i].t - t0) * 1e9);
	qsort(im.ev, im.n, sizeof(*im.ev), ev_cmp);

	struct cta_trace_header *h = &im.h;
	h->version = CTA_TRACE_VERSION;
	snprintf(h->backend, sizeof(h->backend), "cuda");
	snprintf(h->device, sizeof(h->device), "%s",
	         opts && opts->device && opts->device[0] ? opts->device
	                                                 : "GPU (cuda_scheduling_examiner)");
	snprintf(h->ctasim_version, sizeof(h->ctasim_version), "%s", CTA_VERSION_STRING);
	snprintf(h->clc, sizeof(h->clc), "none");
	h->deterministic = 0;
	h->tick_ns = opts && opts->tick_ns > 0 ? opts->tick_ns : 0;
	if (h->tick_ns == 0) {
		/* The timer's resolution, as the data shows it: the smallest
		 * step between two distinct block times. */
		uint64_t *ts = malloc((im.n ? im.n : 1) * sizeof(*ts));
		if (!ts) {
			rc = CTA_ENOMEM;
			snprintf(err, errlen, "out of memory");
			goto out;
		}
		size_t m = 0;
		for (size_t i = 0; i < im.n; i++)
			if (im.ev[i].r.ev == CTA_TEV_START || im.ev[i].r.ev == CTA_TEV_END)
				ts[m++] = im.ev[i].r.t_ns;
		qsort(ts, m, sizeof(*ts), u64_cmp);
		uint64_t best = UINT64_MAX;
		for (size_t i = 1; i < m; i++)
			if (ts[i] != ts[i - 1] && ts[i] - ts[i - 1] < best)
				best = ts[i] - ts[i - 1];
		free(ts);
		h->tick_ns = best == UINT64_MAX ? 1 : (double)best;
	}
	cta_trace_writer *w;
	if ((rc = cta_trace_writer_open(&w, out_path, h))) {
		snprintf(err, errlen, "%s", cta_trace_writer_errmsg(NULL));
		goto out;
	}
	for (size_t i = 0; i < im.n && !rc; i++)
		rc = cta_trace_writer_add(w, &im.ev[i].r);
	if (rc)
		snprintf(err, errlen, "%s", cta_trace_writer_errmsg(w));
	int crc = cta_trace_writer_close(w, rc == 0);
	if (!rc && crc) {
		rc = crc;
		snprintf(err, errlen, "%s", cta_trace_writer_errmsg(NULL));
	}
	if (!rc && stats) {
		stats->kernels = h->kernel_count;
		stats->records = im.n;
		stats->tick_ns = h->tick_ns;
		stats->launches_dropped = im.dropped;
		for (unsigned k = 0; k < h->kernel_count; k++)
			stats->blocks += h->kernels[k].grid[0];
	}
out:
	free(im.ev);
	return rc;
}
