/* Host side of the CUDA backend: the kernel registry, device buffers, and
 * running a harness's launches on a GPU (clusters, stream priorities,
 * release delays), choosing hardware or emulated CLC, measuring the timer
 * tick, aligning %globaltimer with host time, and writing the trace. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* kernel.h's C mapping (pulled in by the harness headers) defines uint3,
 * dim3 and the index macros that the CUDA headers define too. This file
 * uses none of them: rename the types and drop the macros before the CUDA
 * runtime header comes in. */
#define uint3 cta__c_uint3
#define dim3  cta__c_dim3
#include "ctasim/scenario.h"
#include "ctasim/trace.h"
#include "harness_impl.h"
#undef uint3
#undef dim3
#undef threadIdx
#undef blockIdx
#undef blockDim
#undef gridDim
#undef __syncthreads

#include "ctasim/sys/cuda_abi.h"

#include <cuda_runtime_api.h>

#include "cuda_backend.h"

int cta__cuda_launch_tick_probe(unsigned long long *dev_out, unsigned iters);
int cta__cuda_launch_clock_probe(unsigned long long *dev_flag, cudaStream_t s);

/* ---- kernel registry -------------------------------------------------- */

struct cuda_kernel {
	const char *name;
	const void *fn[2];                  /* [0] instrumented, [1] uninstrumented */
	const struct cta__cuda_fn_ops *ops; /* the runtime its unit is linked with */
	size_t args_size;
	const char *file;
	int line;
};

#define MAX_KERNELS 512
static struct cuda_kernel registry[MAX_KERNELS];
static unsigned nregistry;

/* Exported from the ctasim executable: shared objects of user kernels
 * register theirs when --load opens them. */
CTA_EXPORT int cta__cuda_register(const char *name, const void *fn_instr, const void *fn_plain,
                                  size_t args_size, const char *file, int line,
                                  const struct cta__cuda_fn_ops *ops)
{
	/* Static initializers run before main: nothing to report to yet, so a
	 * full table is reported when a kernel is not found. */
	if (nregistry < MAX_KERNELS) {
		struct cuda_kernel *k = &registry[nregistry++];
		k->name = name;
		k->fn[0] = fn_instr;
		k->fn[1] = fn_plain;
		k->ops = ops;
		k->args_size = args_size;
		k->file = file;
		k->line = line;
	}
	return 0;
}

static const struct cuda_kernel *find_kernel(const char *name)
{
	for (unsigned i = 0; i < nregistry; i++)
		if (strcmp(registry[i].name, name) == 0)
			return &registry[i];
	return NULL;
}

/* ---- small helpers ---------------------------------------------------- */

static struct cta__cuda_stats stats;

const struct cta__cuda_stats *cta__cuda_last_stats(void)
{
	return &stats;
}

static uint64_t host_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void wait_until(uint64_t t)
{
	for (;;) {
		uint64_t now = host_ns();
		if (now >= t)
			return;
		/* Sleep while far away, spin for the last 100 us. */
		if (t - now > 200000) {
			struct timespec ts = {0, (long)(t - now - 100000)};
			nanosleep(&ts, NULL);
		}
	}
}

/* Where a run's error message goes: a harness's errmsg, or the scenario
 * runner's buffer. */
struct errbuf {
	char *buf;
	size_t len;
};

static int fail(struct errbuf *eb, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static int fail(struct errbuf *eb, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(eb->buf, eb->len, fmt, ap);
	va_end(ap);
	return code;
}

#define CK(call)                                                                                   \
	do {                                                                                       \
		cudaError_t e_ = (call);                                                           \
		if (e_ != cudaSuccess) {                                                           \
			rc = fail(eb, CTA_ECUDA, "CUDA backend: %s failed: %s (%s)", #call,        \
			          cudaGetErrorString(e_), cudaGetErrorName(e_));                   \
			goto out;                                                                  \
		}                                                                                  \
	} while (0)

int cta__cuda_select_device(int ordinal, char *err, size_t errlen)
{
	/* No GPU, no driver, or a driver older than the runtime: the machine
	 * lacks what the command needs (exit 2), which is not a failed run. */
	int ndev = 0;
	cudaError_t de = cudaGetDeviceCount(&ndev);
	if (de != cudaSuccess || ndev == 0) {
		snprintf(err, errlen, "no CUDA GPU found (%s)",
		         de != cudaSuccess ? cudaGetErrorString(de) : "no devices");
		return CTA_EUNSUPPORTED;
	}
	cudaError_t e = cudaSetDevice(ordinal);
	if (e != cudaSuccess) {
		snprintf(err, errlen, "CUDA device %d: %s", ordinal, cudaGetErrorString(e));
		return e == cudaErrorInvalidDevice ? CTA_ENOTFOUND : CTA_ECUDA;
	}
	return 0;
}

void *cta__cuda_alloc(size_t bytes, char *err, size_t errlen)
{
	void *p = NULL;
	/* Plain device memory: managed memory can hang a shared GPU when
	 * oversubscribed, and it would hide copy costs from the timings. */
	cudaError_t e = cudaMalloc(&p, bytes ? bytes : 1);
	if (e != cudaSuccess) {
		snprintf(err, errlen, "cudaMalloc(%zu bytes): %s", bytes, cudaGetErrorString(e));
		return NULL;
	}
	return p;
}

void cta__cuda_free(void *dev)
{
	if (dev)
		cudaFree(dev);
}

/* ---- timer probes ----------------------------------------------------- */

static int measure_tick(struct errbuf *eb)
{
	int rc = 0;
	unsigned long long *d = NULL, out[2] = {0, 0};
	CK(cudaMalloc((void **)&d, sizeof out));
	CK((cudaError_t)cta__cuda_launch_tick_probe(d, 200000));
	CK(cudaMemcpy(out, d, sizeof out, cudaMemcpyDeviceToHost));
	if (out[1] == 0) {
		rc = fail(eb, CTA_ECUDA,
		          "CUDA backend: %%globaltimer did not advance in 200000 reads");
		goto out;
	}
	stats.tick_ns = (double)out[0];
	stats.tick_steps = out[1];
out:
	cudaFree(d);
	return rc;
}

/* Pairs host CLOCK_MONOTONIC with %globaltimer: a one-thread kernel keeps
 * writing the timer into mapped host memory; the host reads it many times
 * between two clock reads. The value read was written before the host's
 * second read, so gpu - host_after is a lower bound of the offset; the
 * largest bound over all samples is the tightest. The error is the PCIe
 * write latency plus one tick. */
static int align_clocks(struct errbuf *eb, int64_t *offset)
{
	int rc = 0;
	volatile unsigned long long *flag = NULL;
	unsigned long long *dflag = NULL;
	cudaStream_t s = NULL;
	CK(cudaHostAlloc((void **)&flag, 2 * sizeof *flag, cudaHostAllocMapped));
	flag[0] = 0;
	flag[1] = 0;
	CK(cudaHostGetDevicePointer((void **)&dflag, (void *)flag, 0));
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK((cudaError_t)cta__cuda_launch_clock_probe(dflag, s));
	uint64_t deadline = host_ns() + 5000000000ull;
	while (flag[0] == 0) {
		if (host_ns() > deadline) {
			flag[1] = 1;
			rc = fail(eb, CTA_ECUDA, "CUDA backend: clock probe kernel did not start");
			goto out;
		}
	}
	int64_t best = INT64_MIN, best_span = 0;
	for (int i = 0; i < 4000; i++) {
		uint64_t h0 = host_ns();
		unsigned long long g = flag[0];
		uint64_t h1 = host_ns();
		int64_t o = (int64_t)(g - h1);
		if (o > best) {
			best = o;
			best_span = (int64_t)(h1 - h0);
		}
	}
	flag[1] = 1;
	CK(cudaStreamSynchronize(s));
	*offset = best;
	stats.align_err_ns = (double)best_span + stats.tick_ns + 2000.0;
out:
	if (s)
		cudaStreamDestroy(s);
	if (flag)
		cudaFreeHost((void *)flag);
	return rc;
}

/* ---- the run ---------------------------------------------------------- */

struct launch_state {
	const struct cuda_kernel *k;
	struct cta__cuda_ctx hctx; /* host copy of the context */
	struct cta__cuda_ctx *dctx;
	struct cta__cuda_rec *drecs;
	struct cta__cuda_slot *dslots;
	unsigned int *dclaims;
	cudaEvent_t ev0, ev1;
	uint64_t host_launch; /* host time of the launch call */
	int stream, priority;
	unsigned long long blocks;
	size_t smem_static;
	int clc;
	unsigned nwarps; /* warps a block */
	float ms;        /* GPU time of the launch (events) */
};

/* A block's %warpid notes (CTA__CUDA_F_WARPS, 6 bits a warp) as its start
 * record's `arg`: a mask of the warp slots its warps took (traces/FORMAT.md). */
static uint64_t warp_mask(uint64_t pk, unsigned nwarps)
{
	uint64_t m = 0;
	for (unsigned w = 0; w < nwarps && w < 8; w++)
		m |= 1ull << ((pk >> (6 * w)) & 63u);
	return m;
}

struct trec {
	struct cta_trace_rec r;
	uint64_t seq;
};

static int trec_cmp(const void *a, const void *b)
{
	const struct trec *x = a, *y = b;
	if (x->r.t_ns != y->r.t_ns)
		return x->r.t_ns < y->r.t_ns ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static unsigned dim_or_1(unsigned v)
{
	return v ? v : 1u;
}

/* Sizes the record buffer of a launch: start/end slots for every block
 * when the grid is at most 2^24 blocks (1.3 GB of records), plus counted
 * records: per stolen index a cancel, its result and a steal, and each
 * block's final failed cancel and its result. The slots are cleared on the
 * GPU before the launch, which moves where its dispatcher starts
 * (docs/FIDELITY.md, placement rule 5): idle (idle_before) counts every
 * record instead, so nothing runs on the SMs before the launch. */
static void record_sizes(unsigned long long blocks, int clc, int idle, unsigned long long *fixed,
                         unsigned long long *cap)
{
	const char *env = getenv("CTASIM_CUDA_RECORD_CAP"); /* test knob: force overflow */
	if (env && *env) {
		*fixed = 0;
		*cap = strtoull(env, NULL, 10);
		return;
	}
	*fixed = !idle && blocks <= (1ull << 24) ? blocks : 0;
	unsigned long long c = (*fixed ? 0 : 2 * blocks) + (clc ? 5 * blocks : 0) + 4096;
	*cap = c > (1ull << 25) ? (1ull << 25) : c;
}

/* One launch of a run: which harness and launch, its name in the trace,
 * its stream slot and when to issue it. A run's trace kernel ids are the
 * indexes of its jobs. */
struct cuda_job {
	const struct cta_harness *h; /* whose kernel info (CLC) applies */
	const struct cta__hlaunch *l;
	const char *name;
	unsigned slot;       /* index into cuda_run.slots; the trace's stream id */
	uint64_t release_ns; /* host delay from the run's origin */
};

/* A stream of a run: a new non-blocking stream at priority `want`
 * (clamped to the GPU's range), or the legacy default stream. */
struct cuda_slot {
	int want;
	int legacy;
	cudaStream_t s; /* set by run_make_streams */
	int prio;       /* the priority it runs at; set by run_make_streams */
};

/* Everything a run needs: the options (GPU, CLC mode, instrumentation,
 * trace path and seed) come from one harness; the buffers of every harness
 * in hs are copied in before and out after. */
struct cuda_run {
	const struct cta_harness_opts *opts;
	struct cta_harness *const *hs;
	unsigned nh;
	const struct cuda_job *jobs;
	unsigned njobs;
	const unsigned *order; /* issue order of the jobs; NULL: as listed */
	struct cuda_slot *slots;
	unsigned nslots;
	int notes; /* print a note when a priority is clamped */
	char *err;
	size_t errlen;
};

/* A run in progress: what its stages share. run_free releases it. */
struct run_state {
	const struct cuda_run *r;
	struct errbuf eb;
	struct launch_state *ls; /* one per job */
	unsigned nstreams;       /* slots whose stream has been created */
	struct trec *all;        /* the run's records, sorted by time */
	size_t nall;
	int instr; /* the instrumented build runs */
	int hw_clc, any_clc;
	struct cudaDeviceProp prop;
	int64_t offset;  /* %globaltimer minus host time */
	uint64_t origin; /* host time of the run's start */
};

/* CK for the stages: returns the failure instead of jumping. */
#define CKR(call)                                                                                  \
	do {                                                                                       \
		cudaError_t e_ = (call);                                                           \
		if (e_ != cudaSuccess)                                                             \
			return fail(eb, CTA_ECUDA, "CUDA backend: %s failed: %s (%s)", #call,      \
			            cudaGetErrorString(e_), cudaGetErrorName(e_));                 \
	} while (0)

/* The GPU of the run, current, and its properties. */
static int run_open_device(struct run_state *st)
{
	const struct cuda_run *r = st->r;
	struct errbuf *eb = &st->eb;
	int ndev = 0;
	cudaError_t de = cudaGetDeviceCount(&ndev);
	if (de != cudaSuccess || ndev == 0)
		return fail(eb, CTA_EUNSUPPORTED, "no CUDA GPU found (%s)",
		            de != cudaSuccess ? cudaGetErrorString(de) : "no devices");
	if (r->opts->cuda_device < 0 || r->opts->cuda_device >= ndev)
		return fail(eb, CTA_ENOTFOUND, "CUDA backend: device %d does not exist (%d found)",
		            r->opts->cuda_device, ndev);
	CKR(cudaSetDevice(r->opts->cuda_device));
	CKR(cudaGetDeviceProperties(&st->prop, r->opts->cuda_device));
	stats.sm_major = st->prop.major;
	stats.sm_minor = st->prop.minor;
	return 0;
}

/* Each job's kernel in the registry, and which code the driver loaded for
 * this GPU: hardware CLC or its emulation. */
static int run_resolve_kernels(struct run_state *st)
{
	const struct cuda_run *r = st->r;
	struct errbuf *eb = &st->eb;
	struct launch_state *ls = st->ls;
	const int instr = st->instr;
	/* Resolve kernels, and which code the driver loaded for this GPU: the
	 * hardware CLC path exists only in the sm_100a SASS. */
	for (unsigned i = 0; i < r->njobs; i++) {
		const struct cta__hlaunch *l = r->jobs[i].l;
		ls[i].k = find_kernel(l->kernel->name);
		if (!ls[i].k)
			return fail(
			    eb, CTA_ENOTFOUND,
			    "CUDA backend: kernel '%s' is not built into this binary (add its "
			    "*_body.h to device/kernels.cu)%s",
			    l->kernel->name,
			    nregistry == MAX_KERNELS ? "; the registry is full" : "");
		if (ls[i].k->args_size != l->args_size)
			return fail(
			    eb, CTA_EINVAL,
			    "CUDA backend: kernel '%s' takes %zu argument bytes, launch gave %zu",
			    l->kernel->name, ls[i].k->args_size, l->args_size);
		struct cudaFuncAttributes fa;
		CKR((cudaError_t)ls[i].k->ops->get_attributes(r->opts->cuda_device,
		                                              ls[i].k->fn[instr ? 0 : 1], &fa));
		stats.binary_version = fa.binaryVersion;
		ls[i].smem_static = fa.sharedSizeBytes;
	}
	st->hw_clc = stats.binary_version >= 100;
	if (r->opts->clc == CTA_CLC_HARDWARE && !st->hw_clc)
		return fail(
		    eb, CTA_EUNSUPPORTED,
		    "--clc=hardware: GPU %d (%s) is sm_%d%d, which has no cluster launch "
		    "control (it needs sm_100, Blackwell, running this build's sm_100a code; "
		    "the code loaded here is sm_%d); use --clc=emulate or --clc=auto",
		    r->opts->cuda_device, st->prop.name, st->prop.major, st->prop.minor,
		    stats.binary_version);
	if (r->opts->clc == CTA_CLC_EMULATE)
		st->hw_clc = 0;
	for (unsigned i = 0; i < r->njobs; i++) {
		const struct cta_harness *h = r->jobs[i].h;
		ls[i].clc = h->ki && (h->ki->flags & CTA_KI_CLC);
		st->any_clc |= ls[i].clc;
	}
	stats.clc = st->any_clc ? (st->hw_clc ? 2 : 1) : 0;
	return 0;
}

/* The timer tick (the trace header needs it), the pairing of %globaltimer
 * with host time, and the GPU line each harness reports. */
static int run_clocks(struct run_state *st)
{
	const struct cuda_run *r = st->r;
	struct errbuf *eb = &st->eb;
	/* Timer tick first (the trace header needs it), then the clock pairing. */
	int rc = measure_tick(eb);
	if (rc < 0)
		return rc;
	rc = align_clocks(eb, &st->offset);
	if (rc < 0)
		return rc;

	for (unsigned hi = 0; hi < r->nh; hi++)
		snprintf(r->hs[hi]->gpu, sizeof r->hs[hi]->gpu,
		         "%.63s (GPU %d, sm_%d%d), CLC %s, timer tick %.0f ns", st->prop.name,
		         r->opts->cuda_device, st->prop.major, st->prop.minor,
		         stats.clc == 2   ? "hardware"
		         : stats.clc == 1 ? "emulated"
		                          : "not used",
		         stats.tick_ns);
	return 0;
}

/* Every harness buffer copied to its device copy. */
static int run_copy_in(struct run_state *st)
{
	const struct cuda_run *r = st->r;
	struct errbuf *eb = &st->eb;
	/* Buffers in. They were allocated during setup, on the device current
	 * then: it must be the one this run uses. */
	for (unsigned hi = 0; hi < r->nh; hi++) {
		struct cta_harness *h = r->hs[hi];
		for (unsigned i = 0; i < h->nbufs; i++) {
			struct cudaPointerAttributes pa;
			if (!h->bufs[i].dev)
				return fail(
				    eb, CTA_ESTATE,
				    "CUDA backend: harness %s: buffer %u has no device copy",
				    h->ki->name, i);
			if (cudaPointerGetAttributes(&pa, h->bufs[i].dev) == cudaSuccess &&
			    pa.type == cudaMemoryTypeDevice && pa.device != r->opts->cuda_device)
				return fail(
				    eb, CTA_ESTATE,
				    "CUDA backend: harness %s: buffer %u lives on device %d, but "
				    "the run uses device %d (call cta__cuda_select_device before "
				    "the harness's setup)",
				    h->ki->name, i, pa.device, r->opts->cuda_device);
			CKR(cudaMemcpy(h->bufs[i].dev, h->bufs[i].host, h->bufs[i].bytes,
			               cudaMemcpyHostToDevice));
		}
	}
	return 0;
}

/* One CUDA stream per slot at its priority, clamped to the GPU's range. */
static int run_make_streams(struct run_state *st)
{
	const struct cuda_run *r = st->r;
	struct errbuf *eb = &st->eb;
	struct launch_state *ls = st->ls;
	/* Streams: one per slot, non-blocking so that they never serialize
	 * with the legacy default stream (which a "legacy" slot uses). */
	int least = 0, greatest = 0;
	CKR(cudaDeviceGetStreamPriorityRange(&least, &greatest));
	for (unsigned s = 0; s < r->nslots; s++) {
		struct cuda_slot *sl = &r->slots[s];
		int want = sl->want;
		sl->prio = want < greatest ? greatest : want > least ? least : want;
		if (sl->legacy) {
			sl->s = cudaStreamLegacy;
			sl->prio = 0;
		} else {
			CKR(cudaStreamCreateWithPriority(&sl->s, cudaStreamNonBlocking, sl->prio));
		}
		st->nstreams = s + 1;
		if (r->notes && sl->prio != want)
			fprintf(stderr,
			        "ctasim: note: CUDA backend: stream %u asks for priority %d; this "
			        "GPU's range is [%d, %d] (lower is higher), so it runs at %d\n",
			        s, want, greatest, least, sl->prio);
	}
	for (unsigned i = 0; i < r->njobs; i++) {
		ls[i].stream = (int)r->jobs[i].slot;
		ls[i].priority = r->slots[r->jobs[i].slot].prio;
	}
	return 0;
}

/* Contexts, claim maps and record buffers of every job, all before the
 * first launch so that no allocation lands between released launches. */
static int run_prepare_launches(struct run_state *st)
{
	const struct cuda_run *r = st->r;
	struct errbuf *eb = &st->eb;
	struct launch_state *ls = st->ls;
	const int instr = st->instr;
	/* Contexts, claim maps and record buffers, all before the first launch
	 * so that no allocation lands between released launches. */
	for (unsigned i = 0; i < r->njobs; i++) {
		const struct cta__hlaunch *l = r->jobs[i].l;
		struct launch_state *s = &ls[i];
		struct cta__cuda_ctx *c = &s->hctx;
		unsigned cd[3];
		memset(c, 0, sizeof *c);
		s->blocks = 1;
		for (int d = 0; d < 3; d++) {
			unsigned g = dim_or_1(l->cfg.grid[d]);
			cd[d] = dim_or_1(l->cfg.cluster[d]);
			if (g % cd[d]) {
				return fail(
				    eb, CTA_EINVAL,
				    "CUDA backend: launch %u of '%s': grid %u is not a multiple of "
				    "cluster %u in dimension %c",
				    i, l->kernel->name, g, cd[d], "xyz"[d]);
			}
			c->cdim[d] = cd[d];
			c->ucount[d] = g / cd[d];
			s->blocks *= g;
		}
		c->units = (unsigned long long)c->ucount[0] * c->ucount[1] * c->ucount[2];
		c->flags = (instr ? CTA__CUDA_F_INSTR : 0) |
		           (s->clc ? (st->hw_clc ? CTA__CUDA_F_CLC_HW : CTA__CUDA_F_CLC_EMU) : 0);
		unsigned bt = dim_or_1(l->cfg.block[0]) * dim_or_1(l->cfg.block[1]) *
		              dim_or_1(l->cfg.block[2]);
		s->nwarps = (bt + 31) / 32;
		if (instr) {
			const char *var = getenv("CTASIM_CUDA_INSTR_VARIANT");
			if (var && *var)
				c->flags |= (unsigned)strtoul(var, NULL, 0) & 0x1f00u;
			record_sizes(s->blocks, s->clc, r->opts->idle_before, &c->fixed, &c->cap);
			const char *wv = getenv("CTASIM_CUDA_WARPS");
			if (wv && *wv && strcmp(wv, "0") != 0) {
#if CTA_CUDA_WARP_NOTES
				if (s->nwarps <= 8 && c->fixed)
					c->flags |= CTA__CUDA_F_WARPS;
#else
				/* The notes' code moves later waves even when off
				 * (docs/CUDA_BACKEND.md): only a build that asks for it
				 * has it. */
				return fail(eb, CTA_EINVAL,
				            "CUDA backend: CTASIM_CUDA_WARPS=%s needs a build "
				            "configured with -Drecorder_warp_notes=true (this one "
				            "records no warp notes)",
				            wv);
#endif
			}
			CKR(cudaMalloc((void **)&s->drecs,
			               (c->cap ? c->cap : 1) * sizeof *s->drecs));
			c->recs = s->drecs;
			if (c->fixed) {
				size_t sb = (size_t)(2 * c->fixed) * sizeof *s->dslots;
				CKR(cudaMalloc((void **)&s->dslots, sb));
				/* 0xff bytes: an unwritten slot reads as ev 0xffffffff. */
				CKR(cudaMemset(s->dslots, 0xff, sb));
				c->slots = s->dslots;
			}
		}
		if (c->flags & CTA__CUDA_F_CLC_EMU) {
			size_t words = (size_t)((c->units + 15) / 16);
			CKR(cudaMalloc((void **)&s->dclaims, words * sizeof(unsigned)));
			CKR(cudaMemset(s->dclaims, 0, words * sizeof(unsigned)));
			c->claims = s->dclaims;
		}
		CKR(cudaMalloc((void **)&s->dctx, sizeof *s->dctx));
		CKR(cudaMemcpy(s->dctx, c, sizeof *c, cudaMemcpyHostToDevice));
		CKR(cudaEventCreate(&s->ev0));
		CKR(cudaEventCreate(&s->ev1));
		const void *fn = s->k->fn[instr ? 0 : 1];
		if (l->cfg.smem_dynamic > 48 * 1024)
			CKR((cudaError_t)s->k->ops->set_attribute(
			    r->opts->cuda_device, fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
			    (int)l->cfg.smem_dynamic));
		if (cd[0] * cd[1] * cd[2] > 8)
			CKR((cudaError_t)s->k->ops->set_attribute(
			    r->opts->cuda_device, fn,
			    cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
	}
	CKR(cudaDeviceSynchronize());
	return 0;
}

/* Each job launched in issue order at its release time, then the GPU
 * drained. */
static int run_issue(struct run_state *st)
{
	const struct cuda_run *r = st->r;
	struct errbuf *eb = &st->eb;
	struct launch_state *ls = st->ls;
	const int instr = st->instr;
	/* Launch in issue order; release_ns is a host-side delay from the
	 * origin. */
	st->origin = host_ns();
	for (unsigned oi = 0; oi < r->njobs; oi++) {
		const unsigned i = r->order ? r->order[oi] : oi;
		const struct cta__hlaunch *l = r->jobs[i].l;
		struct launch_state *s = &ls[i];
		cudaLaunchConfig_t cfg;
		cudaLaunchAttribute at[2];
		memset(&cfg, 0, sizeof cfg);
		memset(at, 0, sizeof at);
		cfg.gridDim.x = dim_or_1(l->cfg.grid[0]);
		cfg.gridDim.y = dim_or_1(l->cfg.grid[1]);
		cfg.gridDim.z = dim_or_1(l->cfg.grid[2]);
		cfg.blockDim.x = dim_or_1(l->cfg.block[0]);
		cfg.blockDim.y = dim_or_1(l->cfg.block[1]);
		cfg.blockDim.z = dim_or_1(l->cfg.block[2]);
		cfg.dynamicSmemBytes = l->cfg.smem_dynamic;
		cfg.stream = r->slots[s->stream].s;
		if (s->hctx.cdim[0] * s->hctx.cdim[1] * s->hctx.cdim[2] > 1) {
			at[0].id = cudaLaunchAttributeClusterDimension;
			at[0].val.clusterDim.x = s->hctx.cdim[0];
			at[0].val.clusterDim.y = s->hctx.cdim[1];
			at[0].val.clusterDim.z = s->hctx.cdim[2];
			cfg.attrs = at;
			cfg.numAttrs = 1;
		}
		if (l->cfg.cooperative) {
			/* cudaLaunchCooperativeKernel: grid.sync() is valid, and
			 * a grid that cannot be co-resident is refused. */
			at[cfg.numAttrs].id = cudaLaunchAttributeCooperative;
			at[cfg.numAttrs].val.cooperative = 1;
			cfg.attrs = at;
			cfg.numAttrs++;
		}
		void *args[2] = {l->args, &s->dctx};
		if (r->jobs[i].release_ns)
			wait_until(st->origin + r->jobs[i].release_ns);
		CKR(cudaEventRecord(s->ev0, cfg.stream));
		s->host_launch = host_ns();
		cudaError_t e = (cudaError_t)s->k->ops->launch(r->opts->cuda_device, &cfg,
		                                               s->k->fn[instr ? 0 : 1], args);
		if (e != cudaSuccess) {
			return fail(eb,
			            e == cudaErrorInvalidConfiguration ||
			                    e == cudaErrorInvalidValue ||
			                    e == cudaErrorCooperativeLaunchTooLarge
			                ? CTA_EINVAL
			                : CTA_ECUDA,
			            "CUDA backend: launch %u of '%s' (grid %u,%u,%u block %u,%u,%u "
			            "cluster %u,%u,%u): %s",
			            i, l->kernel->name, cfg.gridDim.x, cfg.gridDim.y, cfg.gridDim.z,
			            cfg.blockDim.x, cfg.blockDim.y, cfg.blockDim.z, s->hctx.cdim[0],
			            s->hctx.cdim[1], s->hctx.cdim[2], cudaGetErrorString(e));
		}
		CKR(cudaEventRecord(s->ev1, cfg.stream));
	}
	{
		cudaError_t e = cudaDeviceSynchronize();
		if (e != cudaSuccess) {
			return fail(eb, CTA_ECUDA,
			            "CUDA backend: a kernel of this run failed on %s: %s",
			            st->prop.name, cudaGetErrorString(e));
		}
	}
	return 0;
}

/* Every harness buffer copied back. */
static int run_copy_out(struct run_state *st)
{
	const struct cuda_run *r = st->r;
	struct errbuf *eb = &st->eb;
	/* Buffers out. */
	for (unsigned hi = 0; hi < r->nh; hi++) {
		struct cta_harness *hv = r->hs[hi];
		for (unsigned i = 0; i < hv->nbufs; i++)
			CKR(cudaMemcpy(hv->bufs[i].host, hv->bufs[i].dev, hv->bufs[i].bytes,
			               cudaMemcpyDeviceToHost));
	}
	return 0;
}

/* The counters and records of every job back from the GPU, as trace
 * records sorted by time (ties in the order they were read). */
/* Job i's records as trace records at the end of st->all: its launch,
 * the counted records, the start/end slots, its kernel_end. */
static int read_job_records(struct run_state *st, unsigned i, uint64_t gpu_origin)
{
	struct errbuf *eb = &st->eb;
	struct trec *all = st->all;
	struct launch_state *s = &st->ls[i];
	unsigned long long got = s->hctx.nrec < s->hctx.cap ? s->hctx.nrec : s->hctx.cap;
	uint64_t launch_t = s->host_launch - st->origin, kend = launch_t;
	struct trec *lr = &all[st->nall++];
	lr->r = (struct cta_trace_rec){launch_t,
	                               CTA_TEV_LAUNCH,
	                               i,
	                               CTA_TRACE_NONE,
	                               CTA_TRACE_NONE,
	                               CTA_TRACE_NONE,
	                               (uint64_t)s->stream,
	                               s->priority,
	                               NULL};
	lr->seq = st->nall;
	if (got) {
		struct cta__cuda_rec *hr = malloc(got * sizeof *hr);
		if (!hr) {
			return fail(eb, CTA_ENOMEM, "CUDA backend: no memory for records");
		}
		cudaError_t e = cudaMemcpy(hr, s->drecs, got * sizeof *hr, cudaMemcpyDeviceToHost);
		if (e != cudaSuccess) {
			free(hr);
			CKR(e);
		}
		for (unsigned long long k = 0; k < got; k++) {
			struct trec *t = &all[st->nall++];
			int64_t rel = (int64_t)(hr[k].t - gpu_origin);
			if (rel < 0) {
				stats.clamped++;
				rel = 0;
			}
			t->r.t_ns = (uint64_t)rel;
			t->r.ev = (cta_trace_event)hr[k].ev;
			t->r.kernel = i;
			t->r.block = hr[k].block;
			t->r.phys = hr[k].phys;
			t->r.sm = hr[k].sm;
			t->r.arg = hr[k].arg;
			t->r.code = hr[k].code;
			t->r.text = NULL;
			t->seq = st->nall;
			if (t->r.ev == CTA_TEV_END && t->r.t_ns > kend)
				kend = t->r.t_ns;
		}
		free(hr);
	}
	if (s->hctx.fixed) {
		size_t ns = (size_t)(2 * s->hctx.fixed);
		struct cta__cuda_slot *hs = malloc(ns * sizeof *hs);
		if (!hs) {
			return fail(eb, CTA_ENOMEM, "CUDA backend: no memory for records");
		}
		cudaError_t e = cudaMemcpy(hs, s->dslots, ns * sizeof *hs, cudaMemcpyDeviceToHost);
		if (e != cudaSuccess) {
			free(hs);
			CKR(e);
		}
		for (size_t k = 0; k < ns; k++) {
			if (hs[k].ev == 0xffffffffu)
				continue; /* a block that exited at once: no start, no end
				           */
			struct trec *t = &all[st->nall++];
			int64_t rel = (int64_t)(hs[k].t - gpu_origin);
			if (rel < 0) {
				stats.clamped++;
				rel = 0;
			}
			uint32_t ev = hs[k].ev & 0xffu, sm = hs[k].sm;
			uint64_t arg = CTA_TRACE_NONE;
			if (s->hctx.flags & CTA__CUDA_F_WARPS) {
				/* The end slot's notes go to the start record. */
				const struct cta__cuda_slot *end = &hs[k | 1];
				if (ev == CTA_TEV_START && end->ev != 0xffffffffu)
					arg = warp_mask((uint64_t)(end->sm >> 8) |
					                    ((uint64_t)(end->ev >> 8) << 24),
					                s->nwarps);
				sm &= 0xffu;
			}
			t->r = (struct cta_trace_rec){
			    (uint64_t)rel, (cta_trace_event)ev, i, k / 2, k / 2, sm, arg, 0, NULL};
			t->seq = st->nall;
			if (t->r.ev == CTA_TEV_END && t->r.t_ns > kend)
				kend = t->r.t_ns;
		}
		free(hs);
	}
	if (!got && !s->hctx.fixed)
		kend = launch_t + (uint64_t)(s->ms * 1e6);
	struct trec *ke = &all[st->nall++];
	ke->r = (struct cta_trace_rec){kend,
	                               CTA_TEV_KERNEL_END,
	                               i,
	                               CTA_TRACE_NONE,
	                               CTA_TRACE_NONE,
	                               CTA_TRACE_NONE,
	                               CTA_TRACE_NONE,
	                               0,
	                               NULL};
	ke->seq = st->nall;
	return 0;
}

static int run_collect_records(struct run_state *st)
{
	const struct cuda_run *r = st->r;
	struct errbuf *eb = &st->eb;
	struct launch_state *ls = st->ls;
	/* Counters and records back; build the trace. */
	stats.nlaunches = r->njobs;
	size_t total = 0;
	for (unsigned i = 0; i < r->njobs; i++) {
		struct launch_state *s = &ls[i];
		struct cta__cuda_ctx back;
		CKR(cudaMemcpy(&back, s->dctx, sizeof back, cudaMemcpyDeviceToHost));
		CKR(cudaEventElapsedTime(&s->ms, s->ev0, s->ev1));
		s->hctx.nrec = back.nrec;
		s->hctx.errors = back.errors;
		if (i < CTA__CUDA_MAX_LAUNCHES) {
			stats.launch_ms[i] = s->ms;
			stats.skipped[i] = back.skipped;
		}
		if (back.errors & CTA__CUDA_ERR_CLC_OFF) {
			return fail(
			    eb, CTA_EINVAL,
			    "CUDA backend: kernel '%s' issued a cancel, but its harness does not "
			    "declare CTA_KI_CLC, so it ran without CLC (cancels failed)",
			    r->jobs[i].l->kernel->name);
		}
		unsigned long long got = back.nrec < s->hctx.cap ? back.nrec : s->hctx.cap;
		stats.records += back.nrec + 2 * s->hctx.fixed;
		stats.lost_records += back.nrec - got;
		total += (size_t)(2 * s->hctx.fixed + got) + 2;
	}
	struct trec *all = st->all = calloc(total ? total : 1, sizeof *all);
	if (!all) {
		return fail(eb, CTA_ENOMEM, "CUDA backend: no memory for %zu trace records", total);
	}
	const uint64_t gpu_origin = (uint64_t)((int64_t)st->origin + st->offset);
	for (unsigned i = 0; i < r->njobs; i++) {
		int rc = read_job_records(st, i, gpu_origin);
		if (rc < 0)
			return rc;
	}
	qsort(all, st->nall, sizeof *all, trec_cmp);
	return 0;
}

/* Exactly-once coverage of the CLC jobs, from the records: every logical
 * index in exactly one start or steal. CTA_ECOVERAGE with a message on a
 * violation (the run goes on: the trace shows what happened). */
static int run_check_coverage(struct run_state *st)
{
	const struct cuda_run *r = st->r;
	struct errbuf *eb = &st->eb;
	struct launch_state *ls = st->ls;
	unsigned char *seen = NULL;
	int rc = 0;
	/* Exactly-once coverage of CLC kernels, from the records: every
	 * logical index in exactly one start or steal. */
	if (st->any_clc && st->instr && stats.lost_records == 0) {
		for (unsigned i = 0; i < r->njobs; i++) {
			if (!ls[i].clc)
				continue;
			unsigned long long n = ls[i].blocks, lost = 0, dup = 0, first_bad = 0;
			if (n > (1ull << 30))
				continue;
			free(seen);
			seen = calloc((size_t)n, 1);
			if (!seen)
				return fail(eb, CTA_ENOMEM, "CUDA backend: no memory for coverage");
			for (size_t k = 0; k < st->nall; k++) {
				const struct cta_trace_rec *tr = &st->all[k].r;
				if (tr->kernel == i &&
				    (tr->ev == CTA_TEV_START || tr->ev == CTA_TEV_STEAL) &&
				    tr->block < n && seen[tr->block] < 255)
					seen[tr->block]++;
			}
			for (unsigned long long b = 0; b < n; b++) {
				if (seen[b] != 1 && !lost && !dup)
					first_bad = b;
				lost += seen[b] == 0;
				dup += seen[b] > 1;
			}
			if (lost || dup) {
				rc = fail(eb, CTA_ECOVERAGE,
				          "CUDA backend: kernel %u ('%s'): %llu logical blocks "
				          "never ran, "
				          "%llu ran more than once (first: block %llu)",
				          i, r->jobs[i].l->kernel->name, lost, dup, first_bad);
				/* Keep going: the trace shows what happened. */
			}
		}
	}
	free(seen);
	return rc;
}

/* One trace of every job, when the options ask for one; marked incomplete
 * when records were lost. */
static int run_write_trace(struct run_state *st)
{
	const struct cuda_run *r = st->r;
	struct errbuf *eb = &st->eb;
	struct launch_state *ls = st->ls;
	cta_trace_writer *w = NULL;
	if (r->opts->sim.trace_path) {
		struct cta_trace_header th;
		memset(&th, 0, sizeof th);
		th.version = CTA_TRACE_VERSION;
		snprintf(th.backend, sizeof th.backend, "cuda");
		snprintf(th.device, sizeof th.device, "%.63s", st->prop.name);
		snprintf(th.ctasim_version, sizeof th.ctasim_version, "%s", CTA_VERSION_STRING);
		th.seed = r->opts->sim.seed;
		th.tick_ns = stats.tick_ns;
		snprintf(th.clc, sizeof th.clc, "%s",
		         stats.clc == 2   ? "hardware"
		         : stats.clc == 1 ? "emulated"
		                          : "none");
		th.deterministic = 0;
		th.kernel_count = r->njobs;
		for (unsigned i = 0; i < r->njobs && i < CTA_TRACE_MAX_KERNELS; i++) {
			const struct cta__hlaunch *l = r->jobs[i].l;
			struct cta_trace_kernel *tk = &th.kernels[i];
			snprintf(tk->name, sizeof tk->name, "%.63s", r->jobs[i].name);
			for (int d = 0; d < 3; d++) {
				tk->grid[d] = dim_or_1(l->cfg.grid[d]);
				tk->block[d] = dim_or_1(l->cfg.block[d]);
				tk->cluster[d] = ls[i].hctx.cdim[d];
			}
			tk->smem_bytes = ls[i].smem_static + l->cfg.smem_dynamic;
			tk->stream = ls[i].stream;
			tk->priority = ls[i].priority;
			tk->release_ns = r->jobs[i].release_ns;
		}
		int wrc = cta_trace_writer_open(&w, r->opts->sim.trace_path, &th);
		if (wrc < 0) {
			/* The writer's message (NULL: the thread's last, which names
			 * the path and the reason, e.g. a missing directory). */
			return fail(eb, wrc, "CUDA backend: %s", cta_trace_writer_errmsg(w));
		}
		for (size_t k = 0; k < st->nall && wrc >= 0; k++)
			wrc = cta_trace_writer_add(w, &st->all[k].r);
		int complete = wrc >= 0 && stats.lost_records == 0;
		int crc = cta_trace_writer_close(w, complete);
		if (wrc >= 0)
			wrc = crc;
		if (wrc < 0) {
			return fail(eb, wrc, "CUDA backend: writing trace %s failed",
			            r->opts->sim.trace_path);
		}
	}
	return 0;
}

/* What a run holds on the GPU and the host. */
static void run_free(struct run_state *st)
{
	const struct cuda_run *r = st->r;
	for (unsigned i = 0; st->ls && i < r->njobs; i++) {
		struct launch_state *s = &st->ls[i];
		cudaFree(s->dctx);
		cudaFree(s->drecs);
		cudaFree(s->dslots);
		cudaFree(s->dclaims);
		if (s->ev0)
			cudaEventDestroy(s->ev0);
		if (s->ev1)
			cudaEventDestroy(s->ev1);
	}
	for (unsigned s = 0; s < st->nstreams; s++)
		if (!r->slots[s].legacy && r->slots[s].s)
			cudaStreamDestroy(r->slots[s].s);
	free(st->ls);
	free(st->all);
}

/* Runs the jobs on the GPU: copies buffers in, launches each job at its
 * release time on its slot's stream, instrumented unless the options say
 * otherwise, copies buffers out, checks CLC coverage and writes one trace
 * for all jobs. Returns 0 or a negative code with the message in r->err. */
static int exec_run(const struct cuda_run *r)
{
	struct run_state st = {.r = r, .eb = {r->err, r->errlen}};
	st.instr = !r->opts->cuda_uninstrumented;
	memset(&stats, 0, sizeof stats);
	/* The trace header describes each kernel, and a trace that names
	 * kernels it does not describe would not read back. */
	if (r->opts->sim.trace_path && r->njobs > CTA_TRACE_MAX_KERNELS)
		return fail(&st.eb, CTA_ERANGE,
		            "CUDA backend: the run launches %u kernels; a trace describes at "
		            "most %d (run it without a trace)",
		            r->njobs, CTA_TRACE_MAX_KERNELS);
	st.ls = calloc(r->njobs ? r->njobs : 1, sizeof *st.ls);
	if (!st.ls)
		return fail(&st.eb, CTA_ENOMEM, "CUDA backend: no memory for %u launches",
		            r->njobs);
	int (*const stages[])(struct run_state *) = {
	    run_open_device, run_resolve_kernels, run_clocks,
	    run_copy_in,     run_make_streams,    run_prepare_launches,
	    run_issue,       run_copy_out,        run_collect_records};
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < sizeof(stages) / sizeof(stages[0]); i++)
		rc = stages[i](&st);
	if (rc == 0) {
		rc = run_check_coverage(&st);
		if (rc == 0 || rc == CTA_ECOVERAGE) {
			int trc = run_write_trace(&st);
			if (trc < 0)
				rc = trc;
		}
	}
	if (rc == 0 && stats.lost_records)
		rc = fail(&st.eb, CTA_ERANGE,
		          "CUDA backend: the instrumentation buffer overflowed: %llu of %llu "
		          "records lost; the trace is marked incomplete",
		          stats.lost_records, stats.records);
	run_free(&st);
	return rc;
}

int cta__harness_exec_cuda(struct cta_harness *h)
{
	struct cuda_job jobs[CTA__HARNESS_MAX_LAUNCHES];
	struct cuda_slot slots[CTA__HARNESS_MAX_LAUNCHES];
	unsigned nslots = 0;
	struct errbuf ebuf = {h->errmsg, sizeof h->errmsg};
	if (h->nlaunches > CTA__CUDA_MAX_LAUNCHES || h->nlaunches > CTA__HARNESS_MAX_LAUNCHES)
		return fail(&ebuf, CTA_ERANGE, "CUDA backend: %u launches (at most %d)",
		            h->nlaunches, CTA__CUDA_MAX_LAUNCHES);
	/* One stream per distinct priority, in order of first use. */
	memset(slots, 0, sizeof slots);
	for (unsigned i = 0; i < h->nlaunches; i++) {
		const struct cta__hlaunch *l = &h->launches[i];
		unsigned s;
		for (s = 0; s < nslots; s++)
			if (slots[s].want == l->cfg.stream_priority)
				break;
		if (s == nslots)
			slots[nslots++].want = l->cfg.stream_priority;
		jobs[i] = (struct cuda_job){h, l, l->kernel->name, s, l->cfg.release_ns};
	}
	struct cta_harness *const hs[1] = {h};
	const struct cuda_run r = {.opts = &h->opts,
	                           .hs = hs,
	                           .nh = 1,
	                           .jobs = jobs,
	                           .njobs = h->nlaunches,
	                           .slots = slots,
	                           .nslots = nslots,
	                           .err = h->errmsg,
	                           .errlen = sizeof h->errmsg};
	return exec_run(&r);
}

/* Issue order of a scenario's jobs: by release time, file order on ties. */
struct issue {
	uint64_t release_ns;
	unsigned job;
};

static int issue_cmp(const void *a, const void *b)
{
	const struct issue *x = a, *y = b;
	if (x->release_ns != y->release_ns)
		return x->release_ns < y->release_ns ? -1 : 1;
	return x->job < y->job ? -1 : x->job > y->job;
}

int cta__scenario_exec_cuda(struct cta_harness **hs, unsigned n, const struct cta_scenario *sc,
                            char *err, size_t errlen)
{
	if (!hs || !n || !sc || n != sc->nkernels) {
		snprintf(err, errlen, "CUDA backend: invalid scenario run");
		return CTA_EINVAL;
	}
	const struct cta_harness_opts *o = &hs[0]->opts;
	/* What the GPU cannot do, said rather than silently ignored. */
	if (sc->sm_limit)
		fprintf(stderr,
		        "ctasim: note: %s: the CUDA backend ignores sm_limit %u: the kernels "
		        "run on every SM of the GPU\n",
		        sc->path, sc->sm_limit);
	if (sc->device[0])
		fprintf(stderr,
		        "ctasim: note: %s: device '%s' is the simulator's model; the CUDA "
		        "backend runs on GPU %d (only its priority range and block limits "
		        "were checked against the model)\n",
		        sc->path, sc->device, o->cuda_device);
	if (sc->timing_only)
		fprintf(stderr,
		        "ctasim: note: %s: timing_only: the GPU runs the kernels in full; "
		        "their results are not checked\n",
		        sc->path);

	unsigned total = 0;
	for (unsigned i = 0; i < n; i++)
		total += hs[i]->nlaunches;
	int rc = 0;
	struct cuda_slot *slots = calloc(sc->nstreams + 1, sizeof *slots);
	struct cuda_job *jobs = calloc(total ? total : 1, sizeof *jobs);
	unsigned *order = calloc(total ? total : 1, sizeof *order);
	struct issue *iss = calloc(total ? total : 1, sizeof *iss);
	char(*names)[CTA_SCENARIO_LABEL_MAX + 16] = calloc(total ? total : 1, sizeof *names);
	if (!slots || !jobs || !order || !iss || !names) {
		snprintf(err, errlen, "CUDA backend: out of memory");
		rc = CTA_ENOMEM;
		goto out;
	}
	/* Slot 0 is the default stream (the legacy stream, priority 0), slot
	 * s + 1 scenario stream s: the simulator's stream numbering. */
	slots[0].legacy = 1;
	for (unsigned s = 0; s < sc->nstreams; s++)
		slots[s + 1].want = sc->streams[s].priority;
	unsigned nj = 0;
	for (unsigned i = 0; i < n; i++) {
		const struct cta_scenario_kernel *k = &sc->kernels[i];
		for (unsigned j = 0; j < hs[i]->nlaunches; j++, nj++) {
			const struct cta__hlaunch *l = &hs[i]->launches[j];
			if (hs[i]->nlaunches > 1)
				snprintf(names[nj], sizeof names[nj], "%s.%u", k->label, j);
			else
				snprintf(names[nj], sizeof names[nj], "%s", k->label);
			jobs[nj] = (struct cuda_job){
			    hs[i], l, names[nj],
			    k->stream == CTA_SCENARIO_DEFAULT_STREAM ? 0 : k->stream + 1,
			    k->release_ns + l->cfg.release_ns};
			iss[nj] = (struct issue){jobs[nj].release_ns, nj};
		}
	}
	qsort(iss, nj, sizeof *iss, issue_cmp);
	for (unsigned i = 0; i < nj; i++)
		order[i] = iss[i].job;
	const struct cuda_run r = {.opts = o,
	                           .hs = hs,
	                           .nh = n,
	                           .jobs = jobs,
	                           .njobs = nj,
	                           .order = order,
	                           .slots = slots,
	                           .nslots = sc->nstreams + 1,
	                           .notes = 1,
	                           .err = err,
	                           .errlen = errlen};
	rc = exec_run(&r);
	if (rc < 0) {
		/* Prefix the scenario file, as the simulator's messages do. */
		char msg[512];
		snprintf(msg, sizeof msg, "%s", err);
		snprintf(err, errlen, "%s: %s", sc->path, msg);
	}
out:
	free(slots);
	free(jobs);
	free(order);
	free(iss);
	free(names);
	return rc;
}

/* ---- the backend interface (sim/host/backend.h) ------------------------ */

static const struct cta__backend cuda_backend = {
    .kind = CTA_BACKEND_CUDA,
    .name = "cuda",
    .select_device = cta__cuda_select_device,
    .alloc = cta__cuda_alloc,
    .free = cta__cuda_free,
    .exec = cta__harness_exec_cuda,
    .scenario_exec = cta__scenario_exec_cuda,
};

/* At load time: the object is linked whole into the programs that have the
 * CUDA backend (cuda_dep), and only there. */
__attribute__((constructor)) static void cuda_backend_register(void)
{
	cta__backend_register(&cuda_backend);
}
