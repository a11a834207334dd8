/* GPU self-test of the CUDA backend: runs the backend's test bodies
 * (device/test_bodies.h) through cta__harness_exec_cuda, checks their
 * results and the exactly-once coverage of the emulated CLC from the
 * trace, measures the timer tick and the instrumentation overhead, and
 * pins the error paths (--clc=hardware on sm_90, overflow, CLC off).
 * Usage: cuda_selftest [OUTDIR [quick]]; exits 77 (skipped) without a GPU. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* As in device/cuda_exec.c: kernel.h's C mapping and the CUDA headers both
 * define uint3/dim3 and the index names; this file needs neither's. */
#define uint3 cta__c_uint3
#define dim3  cta__c_dim3
#include "ctasim/harness.h"
#include "harness_impl.h"
#define CTA_TEST_ARGS_ONLY
#include "test_bodies.h"
#undef uint3
#undef dim3
#undef threadIdx
#undef blockIdx
#undef blockDim
#undef gridDim
#undef __syncthreads

#include <cuda_runtime_api.h>

#include "cuda_backend.h"

static int failures;
static const char *outdir = ".";
static int quick;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);                                \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
			failures++;                                                                \
		}                                                                                  \
	} while (0)

/* Kernel descriptors as the simulator build would define them: only the
 * name and argument size matter to the CUDA backend. */
#define KDEF(n, T)                                                                                 \
	static const struct cta_kernel_def kd_##n = {#n, NULL, sizeof(T), __FILE__, __LINE__, NULL}
KDEF(cta_test_spin, struct cta_test_spin_args);
KDEF(cta_test_vscale, struct cta_test_vscale_args);
KDEF(cta_test_vscale_cluster, struct cta_test_vscale_args);
KDEF(cta_test_foreach, struct cta_test_vadd_args);
KDEF(cta_test_tcb, struct cta_test_vadd_args);
KDEF(cta_test_reduce, struct cta_test_reduce_args);

static const struct cta_kernel_info ki_plain = {"selftest", "", 0, NULL, NULL, NULL, NULL};
static const struct cta_kernel_info ki_clc = {"selftest-clc", "",   CTA_KI_CLC, NULL,
                                              NULL,           NULL, NULL};

static struct cta_harness *hnew(const struct cta_kernel_info *ki, cta_clc_mode clc, int uninstr,
                                const char *trace)
{
	struct cta_harness *h = calloc(1, sizeof *h);
	static char path[4][512];
	static int slot;
	h->ki = ki;
	h->opts.version = CTA_HARNESS_OPTS_VERSION;
	h->opts.backend = CTA_BACKEND_CUDA;
	h->opts.clc = clc;
	h->opts.cuda_uninstrumented = uninstr;
	h->opts.sim.seed = 1;
	if (trace) {
		char *p = path[slot++ % 4];
		snprintf(p, 512, "%s/%s", outdir, trace);
		h->opts.sim.trace_path = p;
	}
	return h;
}

static void *hbuf(struct cta_harness *h, size_t bytes, void **dev)
{
	char err[256];
	struct cta__hbuf *b = &h->bufs[h->nbufs++];
	b->host = calloc(1, bytes);
	b->bytes = bytes;
	b->dev = cta__cuda_alloc(bytes, err, sizeof err);
	if (!b->dev) {
		printf("alloc: %s\n", err);
		exit(1);
	}
	*dev = b->dev;
	return b->host;
}

static void hlaunch(struct cta_harness *h, const struct cta_kernel_def *k, const void *args,
                    size_t size, unsigned grid, unsigned block, unsigned cluster, size_t dyn,
                    int prio, uint64_t release_ns)
{
	struct cta__hlaunch *l = &h->launches[h->nlaunches++];
	memset(l, 0, sizeof *l);
	l->kernel = k;
	l->cfg.grid[0] = grid;
	l->cfg.block[0] = block;
	l->cfg.cluster[0] = cluster;
	l->cfg.smem_dynamic = dyn;
	l->cfg.stream_priority = prio;
	l->cfg.release_ns = release_ns;
	l->args = malloc(size);
	memcpy(l->args, args, size);
	l->args_size = size;
}

static void hfree(struct cta_harness *h)
{
	for (unsigned i = 0; i < h->nbufs; i++) {
		cudaFree(h->bufs[i].dev);
		free(h->bufs[i].host);
	}
	for (unsigned i = 0; i < h->nlaunches; i++)
		free(h->launches[i].args);
	free(h);
}

/* ---- a minimal reader of the records we need from a trace ------------- */
struct tr {
	uint64_t t;
	char ev[16];
	unsigned kernel;
	long long block, phys, sm, arg;
	int code;
};
static long long field(const char *s)
{
	return *s == '-' ? -1 : atoll(s);
}
static size_t read_trace(const char *name, struct tr **out, char *tick, char *clc, int *complete)
{
	char path[600], line[512];
	snprintf(path, sizeof path, "%s/%s", outdir, name);
	FILE *f = fopen(path, "r");
	size_t n = 0, cap = 1024;
	struct tr *v = malloc(cap * sizeof *v);
	*complete = 0;
	if (!f) {
		*out = v;
		return 0;
	}
	while (fgets(line, sizeof line, f)) {
		if (line[0] == '#') {
			if (!strncmp(line, "#tick_ns ", 9))
				sscanf(line + 9, "%31s", tick);
			if (!strncmp(line, "#clc ", 5))
				sscanf(line + 5, "%15s", clc);
			if (!strncmp(line, "#end ", 5))
				*complete = 1;
			continue;
		}
		if (!strncmp(line, "t_ns,", 5))
			continue;
		char *c[9] = {0};
		int k = 0;
		c[k++] = line;
		for (char *p = line; *p && k < 9; p++)
			if (*p == ',') {
				*p = 0;
				c[k++] = p + 1;
			}
		if (k < 8)
			continue;
		if (n == cap)
			v = realloc(v, (cap *= 2) * sizeof *v);
		struct tr *r = &v[n++];
		r->t = strtoull(c[0], NULL, 10);
		snprintf(r->ev, sizeof r->ev, "%s", c[1]);
		r->kernel = (unsigned)atoi(c[2]);
		r->block = field(c[3]);
		r->phys = field(c[4]);
		r->sm = field(c[5]);
		r->arg = field(c[6]);
		r->code = atoi(c[7]);
	}
	fclose(f);
	*out = v;
	return n;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Coverage and CLC counts of kernel k in a trace, checked independently of
 * the backend's own check. */
static void check_trace_coverage(const char *name, unsigned k, unsigned long long blocks,
                                 unsigned cluster, int expect_steals)
{
	struct tr *v;
	char tick[32] = "", clc[16] = "";
	int complete;
	size_t n = read_trace(name, &v, tick, clc, &complete);
	unsigned char *seen = calloc(blocks, 1);
	unsigned long long steals = 0, cancels = 0, ok = 0, fails = 0, starts = 0, bad = 0;
	unsigned long long sms[1024] = {0};
	for (size_t i = 0; i < n; i++) {
		struct tr *r = &v[i];
		if (r->kernel != k)
			continue;
		if (!strcmp(r->ev, "start") || !strcmp(r->ev, "steal")) {
			if (r->block < 0 || (unsigned long long)r->block >= blocks)
				bad++;
			else
				seen[r->block]++;
			if (r->ev[1] == 't' && r->ev[2] == 'a')
				starts++, sms[r->sm & 1023]++;
			else
				steals++;
		}
		if (!strcmp(r->ev, "cancel"))
			cancels++;
		if (!strcmp(r->ev, "cancel_done"))
			r->code == 0 ? ok++ : fails++;
	}
	/* Block durations (start to end of blocks that started on their own). */
	uint64_t *st = calloc(blocks, sizeof *st), *dur = calloc(blocks, sizeof *dur);
	size_t nd = 0;
	for (size_t i = 0; i < n; i++) {
		struct tr *r = &v[i];
		if (r->kernel != k || r->block < 0 || (unsigned long long)r->block >= blocks)
			continue;
		if (!strcmp(r->ev, "start"))
			st[r->block] = r->t + 1;
		else if (!strcmp(r->ev, "end") && st[r->block])
			dur[nd++] = r->t + 1 - st[r->block];
	}
	qsort(dur, nd, sizeof *dur, cmp_u64);
	if (nd)
		printf("  trace %s: block start-to-end ns min %llu median %llu p99 %llu max %llu\n",
		       name, (unsigned long long)dur[0], (unsigned long long)dur[nd / 2],
		       (unsigned long long)dur[nd * 99 / 100], (unsigned long long)dur[nd - 1]);
	free(st);
	free(dur);
	unsigned long long lost = 0, dup = 0, used = 0;
	for (unsigned long long b = 0; b < blocks; b++)
		lost += seen[b] == 0, dup += seen[b] > 1;
	for (int s = 0; s < 1024; s++)
		used += sms[s] != 0;
	printf("  trace %s: %zu records, complete=%d, #tick_ns %s, #clc %s; kernel %u: %llu "
	       "starts on %llu SMs, %llu steals, %llu cancels (%llu ok, %llu failed), lost %llu, "
	       "duplicated %llu\n",
	       name, n, complete, tick, clc, k, starts, used, steals, cancels, ok, fails, lost,
	       dup);
	CHECK(complete, "%s not complete", name);
	CHECK(lost == 0 && dup == 0 && bad == 0, "%s: coverage lost %llu dup %llu bad %llu", name,
	      lost, dup, bad);
	/* A multicast steal hands one index to each CTA of the cluster. */
	CHECK(ok * cluster == steals, "%s: %llu successful cancels but %llu steal records", name,
	      ok, steals);
	if (expect_steals)
		CHECK(steals > 0, "%s: expected some steals", name);
	free(seen);
	free(v);
}

static int cmp_float(const void *a, const void *b)
{
	float x = *(const float *)a, y = *(const float *)b;
	return x < y ? -1 : x > y;
}

/* ---- tests ------------------------------------------------------------ */

/* The argument struct of kernels/spin_body.h (its header defines the kernel
 * with the simulator's mapping in C, so it is mirrored here; the backend
 * checks the size at launch). */
struct spin_args_mirror {
	unsigned long long ns;
	int imbalance;
};
static const struct cta_kernel_def kd_spin = {"spin",   NULL,     sizeof(struct spin_args_mirror),
                                              __FILE__, __LINE__, NULL};

/* GPU time of one launch of kernels/ spin (256 threads per block). */
static float kspin_once(unsigned grid, unsigned long long ns, int imbalance, int uninstr,
                        const char *trace)
{
	struct cta_harness *h = hnew(&ki_plain, CTA_CLC_AUTO, uninstr, trace);
	struct spin_args_mirror a = {ns, imbalance};
	hlaunch(h, &kd_spin, &a, sizeof a, grid, 256, 0, 0, 0, 0);
	int rc = cta__harness_exec_cuda(h);
	CHECK(rc == 0, "spin: rc %d: %s", rc, h->errmsg);
	float ms = cta__cuda_last_stats()->launch_ms[0];
	hfree(h);
	return ms;
}

static float spin_once(unsigned grid, unsigned block, unsigned long long ns, int uninstr,
                       const char *trace)
{
	struct cta_harness *h = hnew(&ki_plain, CTA_CLC_AUTO, uninstr, trace);
	struct cta_test_spin_args a = {ns, 0, 1, NULL, NULL};
	unsigned *hits = hbuf(h, grid * sizeof *hits, (void **)&a.hits);
	hbuf(h, grid * sizeof(unsigned), (void **)&a.sm);
	hlaunch(h, &kd_cta_test_spin, &a, sizeof a, grid, block, 0, 0, 0, 0);
	int rc = cta__harness_exec_cuda(h);
	CHECK(rc == 0, "spin: rc %d: %s", rc, h->errmsg);
	unsigned bad = 0;
	for (unsigned b = 0; b < grid; b++)
		bad += hits[b] != 1;
	CHECK(bad == 0, "spin: %u blocks without exactly one hit", bad);
	float ms = cta__cuda_last_stats()->launch_ms[0];
	hfree(h);
	return ms;
}

/* Instrumentation overhead on kernels/ spin: medians of interleaved runs. */
static void test_kspin_overhead(void)
{
	const struct {
		unsigned grid;
		unsigned long long ns;
		int imbalance;
	} cfgs[] = {{65536, 10000, 0},
	            {65536, 10000, 1},
	            {65536, 2000, 0},
	            {65536, 1000, 0},
	            {1056, 10000, 0}};
	const int reps = 5;
	for (unsigned c = 0; c < sizeof cfgs / sizeof cfgs[0]; c++) {
		float ti[8], tu[8];
		for (int r = 0; r < reps; r++) {
			ti[r] = kspin_once(cfgs[c].grid, cfgs[c].ns, cfgs[c].imbalance, 0,
			                   c == 0 && r == 0 ? "kspin.trace" : NULL);
			tu[r] = kspin_once(cfgs[c].grid, cfgs[c].ns, cfgs[c].imbalance, 1, NULL);
		}
		qsort(ti, reps, sizeof *ti, cmp_float);
		qsort(tu, reps, sizeof *tu, cmp_float);
		float mi = ti[reps / 2], mu = tu[reps / 2];
		printf(
		    "kernels/spin overhead: grid %u x 256, ns=%llu imbalance=%d: instrumented %.3f "
		    "ms [%.3f, %.3f], uninstrumented %.3f ms [%.3f, %.3f]: %+.2f%% (median of "
		    "%d)\n",
		    cfgs[c].grid, cfgs[c].ns, cfgs[c].imbalance, mi, ti[0], ti[reps - 1], mu, tu[0],
		    tu[reps - 1], 100.0 * (mi - mu) / mu, reps);
	}
	check_trace_coverage("kspin.trace", 0, 65536, 1, 0);
}

static void test_spin_overhead(void)
{
	const struct {
		unsigned grid, block;
		unsigned long long ns;
	} cfgs[] = {{1056, 128, 20000}, {8448, 128, 5000}, {8448, 256, 1000}};
	int reps = quick ? 1 : 7;
	for (unsigned c = 0; c < (quick ? 1u : 3u); c++) {
		float ti[16], tu[16];
		for (int r = 0; r < reps; r++) {
			ti[r] = spin_once(cfgs[c].grid, cfgs[c].block, cfgs[c].ns, 0,
			                  r == 0 ? "spin.trace" : NULL);
			tu[r] = spin_once(cfgs[c].grid, cfgs[c].block, cfgs[c].ns, 1, NULL);
		}
		qsort(ti, reps, sizeof *ti, cmp_float);
		qsort(tu, reps, sizeof *tu, cmp_float);
		float mi = ti[reps / 2], mu = tu[reps / 2];
		printf(
		    "spin overhead: grid %u x %u threads, %llu ns per block: instrumented %.3f ms "
		    "(min %.3f max %.3f), uninstrumented %.3f ms (min %.3f max %.3f), overhead "
		    "%+.2f%% (median of %d)\n",
		    cfgs[c].grid, cfgs[c].block, cfgs[c].ns, mi, ti[0], ti[reps - 1], mu, tu[0],
		    tu[reps - 1], 100.0 * (mi - mu) / mu, reps);
		if (c == 0)
			check_trace_coverage("spin.trace", 0, cfgs[0].grid, 1, 0);
	}
}

static void test_vscale(const struct cta_kernel_def *k, unsigned cluster, const char *trace,
                        unsigned heavy_every)
{
	unsigned grid = quick ? 264 : 8448, block = 256;
	int n = (int)(grid * block) - 17;
	struct cta_harness *h = hnew(&ki_clc, CTA_CLC_AUTO, 0, trace);
	struct cta_test_vscale_args a;
	memset(&a, 0, sizeof a);
	a.n = n;
	a.alpha = 2.0f;
	a.spin_ns = quick ? 0 : 4000;
	a.heavy_every = heavy_every;
	a.heavy_factor = 8;
	float *data = hbuf(h, (size_t)n * sizeof(float), (void **)&a.data);
	unsigned *hits = hbuf(h, grid * sizeof(unsigned), (void **)&a.hits);
	for (int i = 0; i < n; i++)
		data[i] = (float)(i % 1000);
	hlaunch(h, k, &a, sizeof a, grid, block, cluster, 0, 0, 0);
	int rc = cta__harness_exec_cuda(h);
	CHECK(rc == 0, "%s: rc %d: %s", k->name, rc, h->errmsg);
	unsigned bad = 0, badh = 0;
	for (int i = 0; i < n; i++)
		bad += data[i] != 2.0f * (float)(i % 1000);
	for (unsigned b = 0; b < grid; b++)
		badh += hits[b] != 1;
	const struct cta__cuda_stats *st = cta__cuda_last_stats();
	printf("%s (cluster %u, heavy every %u): %u wrong values, %u blocks not hit once, %.3f "
	       "ms, %llu physical blocks exited because their index was stolen, clc=%d\n",
	       k->name, cluster, heavy_every, bad, badh, st->launch_ms[0], st->skipped[0], st->clc);
	CHECK(bad == 0 && badh == 0, "%s: wrong results", k->name);
	CHECK(st->clc == 1, "%s: expected emulated CLC on this GPU", k->name);
	hfree(h);
	check_trace_coverage(trace, 0, grid, cluster ? cluster : 1, !quick);
}

static void test_vadd(const struct cta_kernel_def *k, const char *trace)
{
	unsigned grid = quick ? 264 : 4096, block = 128;
	int n = (int)(grid * block);
	struct cta_harness *h = hnew(&ki_clc, CTA_CLC_EMULATE, 0, trace);
	struct cta_test_vadd_args a;
	memset(&a, 0, sizeof a);
	a.n = n;
	a.spin_ns = quick ? 0 : 3000;
	int *ha = hbuf(h, (size_t)n * sizeof(int), (void **)&a.a);
	int *hb = hbuf(h, (size_t)n * sizeof(int), (void **)&a.b);
	int *hc = hbuf(h, (size_t)n * sizeof(int), (void **)&a.c);
	unsigned *hits = hbuf(h, grid * sizeof(unsigned), (void **)&a.hits);
	for (int i = 0; i < n; i++)
		ha[i] = i, hb[i] = 1, hc[i] = 0;
	hlaunch(h, k, &a, sizeof a, grid, block, 0, 0, 0, 0);
	int rc = cta__harness_exec_cuda(h);
	CHECK(rc == 0, "%s: rc %d: %s", k->name, rc, h->errmsg);
	unsigned bad = 0, badh = 0;
	for (int i = 0; i < n; i++)
		bad += hc[i] != i + 1;
	for (unsigned b = 0; b < grid; b++)
		badh += hits[b] != 1;
	printf("%s: %u wrong values, %u blocks not hit once, %llu index-taken exits\n", k->name,
	       bad, badh, cta__cuda_last_stats()->skipped[0]);
	CHECK(bad == 0 && badh == 0, "%s: wrong results", k->name);
	hfree(h);
	check_trace_coverage(trace, 0, grid, 1, !quick);
}

static void test_reduce(void)
{
	unsigned grid = quick ? 64 : 1000, block = 256;
	int n = (int)(grid * block) - 5;
	struct cta_harness *h = hnew(&ki_plain, CTA_CLC_AUTO, 0, "reduce.trace");
	struct cta_test_reduce_args a;
	memset(&a, 0, sizeof a);
	a.n = n;
	int *x = hbuf(h, (size_t)n * sizeof(int), (void **)&a.x);
	unsigned long long *sum = hbuf(h, sizeof *sum, (void **)&a.sum);
	unsigned *hits = hbuf(h, grid * sizeof(unsigned), (void **)&a.hits);
	unsigned long long want = 0;
	for (int i = 0; i < n; i++)
		x[i] = i % 7, want += (unsigned long long)(i % 7);
	hlaunch(h, &kd_cta_test_reduce, &a, sizeof a, grid, block, 0, block * sizeof(int), 0, 0);
	int rc = cta__harness_exec_cuda(h);
	CHECK(rc == 0, "reduce: rc %d: %s", rc, h->errmsg);
	unsigned badh = 0;
	for (unsigned b = 0; b < grid; b++)
		badh += hits[b] != 1;
	printf("reduce: sum %llu (want %llu), %u blocks not hit once\n", *sum, want, badh);
	CHECK(*sum == want && badh == 0, "reduce: wrong result");
	hfree(h);
}

static void test_errors(void)
{
	/* --clc=hardware on a GPU without CLC: a clear error before any launch. */
	struct cta_harness *h = hnew(&ki_clc, CTA_CLC_HARDWARE, 0, "hw.trace");
	struct cta_test_vadd_args a;
	memset(&a, 0, sizeof a);
	hbuf(h, 64 * sizeof(unsigned), (void **)&a.hits);
	hlaunch(h, &kd_cta_test_foreach, &a, sizeof a, 4, 32, 0, 0, 0, 0);
	int rc = cta__harness_exec_cuda(h);
	const struct cta__cuda_stats *st = cta__cuda_last_stats();
	printf("--clc=hardware: rc %d (%s): %s\n", rc, cta_err_name(rc), h->errmsg);
	if (st->sm_major < 10)
		CHECK(rc == CTA_EUNSUPPORTED && strstr(h->errmsg, "sm_90"),
		      "--clc=hardware must fail clearly on sm_%d%d", st->sm_major, st->sm_minor);
	hfree(h);

	/* A CLC kernel whose harness does not declare CTA_KI_CLC. */
	h = hnew(&ki_plain, CTA_CLC_AUTO, 0, NULL);
	memset(&a, 0, sizeof a);
	a.n = 4 * 32;
	hbuf(h, 128 * sizeof(int), (void **)&a.a);
	hbuf(h, 128 * sizeof(int), (void **)&a.b);
	hbuf(h, 128 * sizeof(int), (void **)&a.c);
	hbuf(h, 4 * sizeof(unsigned), (void **)&a.hits);
	hlaunch(h, &kd_cta_test_foreach, &a, sizeof a, 4, 32, 0, 0, 0, 0);
	rc = cta__harness_exec_cuda(h);
	printf("CLC without CTA_KI_CLC: rc %d (%s): %s\n", rc, cta_err_name(rc), h->errmsg);
	CHECK(rc == CTA_EINVAL, "CLC kernel without CTA_KI_CLC must be reported");
	hfree(h);

	/* Instrumentation overflow: reported, trace marked incomplete. */
	setenv("CTASIM_CUDA_RECORD_CAP", "100", 1);
	h = hnew(&ki_plain, CTA_CLC_AUTO, 0, "overflow.trace");
	struct cta_test_spin_args s = {1000, 0, 1, NULL, NULL};
	hbuf(h, 512 * sizeof(unsigned), (void **)&s.hits);
	hbuf(h, 512 * sizeof(unsigned), (void **)&s.sm);
	hlaunch(h, &kd_cta_test_spin, &s, sizeof s, 512, 64, 0, 0, 0, 0);
	rc = cta__harness_exec_cuda(h);
	unsetenv("CTASIM_CUDA_RECORD_CAP");
	printf("overflow: rc %d (%s): %s\n", rc, cta_err_name(rc), h->errmsg);
	CHECK(rc == CTA_ERANGE, "overflow must be reported");
	struct tr *v;
	char tick[32], clc[16];
	int complete = 1;
	size_t n = read_trace("overflow.trace", &v, tick, clc, &complete);
	printf("  overflow.trace: %zu records, complete=%d\n", n, complete);
	CHECK(n > 0 && !complete, "overflow trace must exist and be marked incomplete");
	free(v);
	hfree(h);
}

/* A long low-priority kernel, and a high-priority one released into it. */
static void test_priority(void)
{
	struct cta_harness *h = hnew(&ki_plain, CTA_CLC_AUTO, 0, "priority.trace");
	struct cta_test_spin_args lo = {50000, 0, 1, NULL, NULL}, hi = {20000, 0, 1, NULL, NULL};
	unsigned glo = 4224, ghi = 264;
	unsigned *hl = hbuf(h, glo * sizeof(unsigned), (void **)&lo.hits);
	hbuf(h, glo * sizeof(unsigned), (void **)&lo.sm);
	unsigned *hh = hbuf(h, ghi * sizeof(unsigned), (void **)&hi.hits);
	hbuf(h, ghi * sizeof(unsigned), (void **)&hi.sm);
	hlaunch(h, &kd_cta_test_spin, &lo, sizeof lo, glo, 256, 0, 0, 0, 0);
	hlaunch(h, &kd_cta_test_spin, &hi, sizeof hi, ghi, 256, 0, 0, -5, 150000);
	int rc = cta__harness_exec_cuda(h);
	CHECK(rc == 0, "priority: rc %d: %s", rc, h->errmsg);
	unsigned bad = 0;
	for (unsigned b = 0; b < glo; b++)
		bad += hl[b] != 1;
	for (unsigned b = 0; b < ghi; b++)
		bad += hh[b] != 1;
	CHECK(bad == 0, "priority: %u blocks not hit once", bad);
	hfree(h);
	struct tr *v;
	char tick[32], clc[16];
	int complete;
	size_t n = read_trace("priority.trace", &v, tick, clc, &complete);
	uint64_t hi_launch = 0, hi_first = UINT64_MAX, hi_last = 0, lo_last_start = 0;
	unsigned long long lo_after = 0;
	for (size_t i = 0; i < n; i++) {
		if (v[i].kernel == 1 && !strcmp(v[i].ev, "launch"))
			hi_launch = v[i].t;
		if (v[i].kernel == 1 && !strcmp(v[i].ev, "start")) {
			if (v[i].t < hi_first)
				hi_first = v[i].t;
			if (v[i].t > hi_last)
				hi_last = v[i].t;
		}
		if (v[i].kernel == 0 && !strcmp(v[i].ev, "start") && v[i].t > lo_last_start)
			lo_last_start = v[i].t;
	}
	for (size_t i = 0; i < n; i++)
		if (v[i].kernel == 0 && !strcmp(v[i].ev, "start") && v[i].t > hi_first &&
		    v[i].t < hi_last)
			lo_after++;
	printf("priority: high-priority kernel launched at %llu ns, its blocks started %llu .. "
	       "%llu ns; low-priority blocks starting in that window: %llu; low-priority last "
	       "start %llu ns\n",
	       (unsigned long long)hi_launch, (unsigned long long)hi_first,
	       (unsigned long long)hi_last, lo_after, (unsigned long long)lo_last_start);
	free(v);
}

/* Where the instrumentation's cost goes: kernels/ spin under each
 * variant of CTASIM_CUDA_INSTR_VARIANT against the uninstrumented build. */
static void test_variants(void)
{
	const char *names[] = {"0", "0x100", "0x200", "0x400", "0x800", "0x300", "0x1000"};
	/* The single-wave test spin (1056 x 128 threads, 20 us) first. */
	spin_once(1056, 128, 20000, 0, "single_wave.trace");
	for (int rep = 0; rep < 2; rep++) {
		float tu[5];
		for (int r = 0; r < 5; r++)
			tu[r] = spin_once(1056, 128, 20000, 1, NULL);
		qsort(tu, 5, sizeof *tu, cmp_float);
		for (unsigned v = 0; v < sizeof names / sizeof names[0]; v++) {
			float ti[5];
			setenv("CTASIM_CUDA_INSTR_VARIANT", names[v], 1);
			for (int r = 0; r < 5; r++)
				ti[r] = spin_once(1056, 128, 20000, 0, NULL);
			unsetenv("CTASIM_CUDA_INSTR_VARIANT");
			qsort(ti, 5, sizeof *ti, cmp_float);
			printf("single wave: variant %-6s: instrumented %.3f ms [%.3f %.3f], "
			       "uninstrumented %.3f ms [%.3f %.3f]\n",
			       names[v], ti[2], ti[0], ti[4], tu[2], tu[0], tu[4]);
		}
	}
	const unsigned long long nss[] = {10000, 2000, 1000};
	for (unsigned q = 0; q < 3; q++) {
		float tu[5];
		for (int r = 0; r < 5; r++)
			tu[r] = kspin_once(65536, nss[q], 0, 1, NULL);
		qsort(tu, 5, sizeof *tu, cmp_float);
		for (unsigned v = 0; v < sizeof names / sizeof names[0]; v++) {
			float ti[5];
			setenv("CTASIM_CUDA_INSTR_VARIANT", names[v], 1);
			for (int r = 0; r < 5; r++)
				ti[r] = kspin_once(65536, nss[q], 0, 0, NULL);
			unsetenv("CTASIM_CUDA_INSTR_VARIANT");
			qsort(ti, 5, sizeof *ti, cmp_float);
			printf(
			    "variant %-5s ns=%llu: instrumented %.3f ms, uninstrumented %.3f ms: "
			    "%+.2f%%\n",
			    names[v], nss[q], ti[2], tu[2], 100.0 * (ti[2] - tu[2]) / tu[2]);
		}
	}
}

int main(int argc, char **argv)
{
	int ndev = 0;
	if (cudaGetDeviceCount(&ndev) != cudaSuccess || ndev == 0) {
		printf("no GPU: skipped\n");
		return 77;
	}
	if (argc > 1)
		outdir = argv[1];
	quick = argc > 2 && !strcmp(argv[2], "quick");
	if (argc > 2 && !strcmp(argv[2], "variants")) {
		test_variants();
		return failures ? 1 : 0;
	}
	struct cudaDeviceProp p;
	cudaGetDeviceProperties(&p, 0);
	printf("GPU 0: %s, sm_%d%d, %d SMs\n", p.name, p.major, p.minor, p.multiProcessorCount);

	test_reduce();
	const struct cta__cuda_stats *st = cta__cuda_last_stats();
	printf("timer: tick %.0f ns (%llu distinct steps in 200000 reads), clock alignment error "
	       "<= %.0f ns, SASS sm_%d\n",
	       st->tick_ns, st->tick_steps, st->align_err_ns, st->binary_version);
	test_vscale(&kd_cta_test_vscale, 0, "vscale_balanced.trace", 0);
	if (!quick)
		test_vscale(&kd_cta_test_vscale, 0, "vscale_imbalanced.trace", 7);
	test_vscale(&kd_cta_test_vscale_cluster, 2, "vscale_cluster.trace", 0);
	test_vadd(&kd_cta_test_foreach, "foreach.trace");
	test_vadd(&kd_cta_test_tcb, "tcb.trace");
	test_errors();
	if (!quick) {
		test_priority();
		test_spin_overhead();
		test_kspin_overhead();
	}
	printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
	return failures ? 1 : 0;
}
