/* The CUDA C++ mapping of the portable kernel API (include/ctasim/kernel.h
 * includes this under nvcc). Every call maps to the real instruction; cluster
 * launch control uses the hardware on sm_100 and a faithful emulation built
 * on st.async + mbarrier complete_tx elsewhere (docs/CUDA_BACKEND.md). */
#ifndef CTASIM_KERNEL_CUDA_H
#define CTASIM_KERNEL_CUDA_H

#include <stddef.h>
#include <stdint.h>

/* The backend ABI shared with the host side of the backend. */
#include "ctasim/sys/cuda_abi.h"

#if defined(__CUDACC__)

#include <cooperative_groups.h>

#define CTA_DEVICE      static __device__
#define CTA_HOST_DEVICE static inline __host__ __device__

/* This translation unit's runtime, for the backend (struct cta__cuda_fn_ops). */
static int cta__cuda_op_launch(int device, const void *cfg, const void *fn, void **args)
{
	cudaError_t e = cudaSetDevice(device);
	return (int)(e != cudaSuccess
	                 ? e
	                 : cudaLaunchKernelExC((const cudaLaunchConfig_t *)cfg, fn, args));
}
static int cta__cuda_op_attributes(int device, const void *fn, void *fa)
{
	cudaError_t e = cudaSetDevice(device);
	return (int)(e != cudaSuccess ? e : cudaFuncGetAttributes((cudaFuncAttributes *)fa, fn));
}
static int cta__cuda_op_set(int device, const void *fn, int attr, int value)
{
	cudaError_t e = cudaSetDevice(device);
	return (int)(e != cudaSuccess ? e
	                              : cudaFuncSetAttribute(fn, (cudaFuncAttribute)attr, value));
}
static const struct cta__cuda_fn_ops cta__cuda_ops = {cta__cuda_op_launch, cta__cuda_op_attributes,
                                                      cta__cuda_op_set};

/* ======================================================================
 * Per-block state of the backend. One instance per block (namespace-scope
 * __shared__), set by thread 0 at kernel entry and read by the device calls
 * below, which cannot see the kernel's hidden context parameter.
 * ====================================================================== */
#define CTA__CUDA_DEDUP 4
struct cta__cuda_block {
	struct cta__cuda_ctx *ctx;
	struct cta__cuda_slot *slots; /* ctx->slots, or NULL when this block has none */
	unsigned flags;
	unsigned taken;          /* emulation: this block's index was stolen: exit at once */
	unsigned long long self; /* this block's linear index */
	/* Which cancel results this CTA has already recorded (see
	 * cta__cuda_note_result): shared address + 1, last key, issued here. */
	unsigned tab_addr[CTA__CUDA_DEDUP];
	unsigned tab_issued[CTA__CUDA_DEDUP];
	unsigned long long tab_key[CTA__CUDA_DEDUP];
#if CTA_CUDA_WARP_NOTES
	unsigned char wid[8]; /* CTA__CUDA_F_WARPS: warp w's %warpid */
#endif
};
static __shared__ struct cta__cuda_block cta__blk;
extern __shared__ __align__(16) unsigned char cta__dsmem[];

static __device__ __forceinline__ uint64_t cta_globaltimer_ns(void)
{
	uint64_t t;
	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	return t;
}
static __device__ __forceinline__ unsigned cta_smid(void)
{
	unsigned s;
	asm volatile("mov.u32 %0, %%smid;" : "=r"(s));
	return s;
}
#if CTA_CUDA_WARP_NOTES
static __device__ __forceinline__ unsigned cta__warpid(void)
{
	unsigned w;
	asm volatile("mov.u32 %0, %%warpid;" : "=r"(w));
	return w;
}
#endif
static __device__ __forceinline__ long long cta_clock64(void)
{
	return clock64();
}
/* Busy-waits ns nanoseconds of %globaltimer: the cost annotation of
 * kernel.h. A loop that only reads %globaltimer overshoots badly when an SM
 * is full of spinning warps: on an H200, 10 us spins of 64 warps per SM took
 * 15 us (median) and up to 22 us, the timer reads queueing behind each
 * other. So the wait spins on the SM-local clock64 for rem / 4 cycles
 * between reads: never longer than rem ns at clocks above 250 MHz (an idle
 * H200 starts a kernel at a low clock: rem / 2 made 20 us spins last 40 us
 * there), an eighth of it at 2 GHz, about 40 timer reads for a 10 us spin.
 * Resolution: the timer tick (trace header). */
static __device__ __forceinline__ void cta_spin_ns(uint64_t ns)
{
	uint64_t end = cta_globaltimer_ns() + ns;
	for (;;) {
		uint64_t now = cta_globaltimer_ns();
		if (now >= end)
			return;
		uint64_t rem = end - now;
		if (rem > 64) {
			long long c0 = clock64(), cycles = (long long)(rem / 4);
			while (clock64() - c0 < cycles) {
			}
		}
	}
}

static __device__ __forceinline__ unsigned cta_thread_rank(void)
{
	return threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);
}
static __device__ __forceinline__ unsigned long long cta__linear(unsigned x, unsigned y, unsigned z)
{
	return x + (unsigned long long)gridDim.x * (y + (unsigned long long)gridDim.y * z);
}

/* ---- instrumentation -------------------------------------------------- */
#define CTA__CUDA_NONE 0xffffffffffffffffull

/* Trace event numbers (the order of CTA_TRACE_EVENT_MAP in trace.h). */
#define CTA__EV_START       2
#define CTA__EV_END         3
#define CTA__EV_CANCEL      4
#define CTA__EV_CANCEL_DONE 5
#define CTA__EV_STEAL       6

static __device__ __forceinline__ void cta__cuda_rec(struct cta__cuda_ctx *c, unsigned ev,
                                                     uint64_t t, unsigned long long block,
                                                     unsigned long long arg, int code)
{
	unsigned long long i = atomicAdd(&c->nrec, 1ull), self = cta__blk.self;
	if (i < c->cap) {
		struct cta__cuda_rec r;
		r.t = t;
		r.block = block;
		r.phys = self;
		r.arg = arg;
		r.sm = cta_smid();
		r.ev = (uint16_t)ev;
		r.code = (int16_t)code;
		c->recs[i] = r;
	}
}
#if CTA_CUDA_WARP_NOTES
/* The %warpid of the block's warps (at most 8), 6 bits a warp, as its end
 * slot carries them under CTA__CUDA_F_WARPS (cuda_abi.h); 0 otherwise. */
static __device__ __forceinline__ unsigned long long cta__cuda_wids(unsigned which)
{
	if (which != 1 || !(cta__blk.flags & CTA__CUDA_F_WARPS))
		return 0;
	unsigned nw = (blockDim.x * blockDim.y * blockDim.z + 31) / 32;
	unsigned long long pk = 0;
	for (unsigned w = 0; w < nw && w < 8; w++)
		pk |= (unsigned long long)(cta__blk.wid[w] & 63u) << (6 * w);
	return pk;
}
#endif
/* Start (which 0) or end (1) of this block. Its own slot when it has one:
 * one atomic counter shared by every block serialized at the L2 and cost
 * 60% on 1 us blocks (H200), and a 16-byte slot is a single store. */
static __device__ __forceinline__ void cta__cuda_edge(unsigned which, uint64_t t)
{
	struct cta__cuda_slot *s = cta__blk.slots;
	if (s) {
		ulonglong2 v;
		v.x = t;
#if CTA_CUDA_WARP_NOTES
		unsigned long long pk = cta__cuda_wids(which);
		v.y = ((unsigned long long)cta_smid() | ((pk & 0xffffffull) << 8)) |
		      ((unsigned long long)((CTA__EV_START + which) | ((pk >> 24) << 8)) << 32);
#else
		v.y = (unsigned long long)cta_smid() |
		      ((unsigned long long)(CTA__EV_START + which) << 32);
#endif
		*(ulonglong2 *)&s[2 * cta__blk.self + which] = v;
	} else {
		cta__cuda_rec(cta__blk.ctx, CTA__EV_START + which, t, cta__blk.self, CTA__CUDA_NONE,
		              0);
	}
}

/* ---- shared memory ---------------------------------------------------- */
#define CTA_SHARED(type, name)                                                                     \
	__shared__ type name##__obj;                                                               \
	type *const name = &name##__obj
#define CTA_SHARED_ARRAY(type, name, n)                                                            \
	__shared__ type name##__arr[n];                                                            \
	type *const name = name##__arr
#define CTA_SHARED_DYNAMIC(type, name) type *const name = (type *)cta__dsmem

/* ---- clusters --------------------------------------------------------- */
/* Yield points of kernel.h (blocking algorithms, docs/FORWARD_PROGRESS.md):
 * volatile loads and stores, __nanosleep, and the grid barrier of a
 * cooperative launch. */
template <class T> static __device__ __forceinline__ T cta_ld_volatile(const T *p)
{
	return *(const volatile T *)p;
}
template <class T, class V> static __device__ __forceinline__ void cta_st_volatile(T *p, V v)
{
	*(volatile T *)p = (T)v;
}
static __device__ __forceinline__ void cta_nanosleep(unsigned ns)
{
	__nanosleep(ns);
}
static __device__ __forceinline__ void cta_grid_sync(void)
{
	cooperative_groups::this_grid().sync();
}
static __device__ __forceinline__ void cta_cluster_sync(void)
{
	cooperative_groups::this_cluster().sync();
}
static __device__ __forceinline__ dim3 cta_cluster_dim(void)
{
	unsigned x, y, z;
	asm("mov.u32 %0, %%cluster_nctaid.x;" : "=r"(x));
	asm("mov.u32 %0, %%cluster_nctaid.y;" : "=r"(y));
	asm("mov.u32 %0, %%cluster_nctaid.z;" : "=r"(z));
	return dim3(x, y, z);
}
static __device__ __forceinline__ unsigned cta_cluster_block_rank(void)
{
	unsigned r;
	asm("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
	return r;
}
static __device__ __forceinline__ uint3 cta_cluster_block_index(void)
{
	uint3 r;
	asm("mov.u32 %0, %%cluster_ctaid.x;" : "=r"(r.x));
	asm("mov.u32 %0, %%cluster_ctaid.y;" : "=r"(r.y));
	asm("mov.u32 %0, %%cluster_ctaid.z;" : "=r"(r.z));
	return r;
}
static __device__ __forceinline__ unsigned cta_cluster_thread_rank(void)
{
	return cta_cluster_block_rank() * (blockDim.x * blockDim.y * blockDim.z) +
	       cta_thread_rank();
}

/* ---- mbarrier --------------------------------------------------------
 * Cluster scope throughout: it covers the CTA-scope uses and the multicast
 * cancel, whose result is written from another CTA of the cluster. */
static __device__ __forceinline__ unsigned cta__smem_addr(const void *p)
{
	return (unsigned)__cvta_generic_to_shared(p);
}
static __device__ __forceinline__ void cta_mbarrier_init(uint64_t *bar, unsigned count)
{
	asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(cta__smem_addr(bar)),
	             "r"(count)
	             : "memory");
}
static __device__ __forceinline__ uint64_t cta_mbarrier_arrive_expect_tx(uint64_t *bar,
                                                                         unsigned bytes)
{
	uint64_t st;
	asm volatile("mbarrier.arrive.expect_tx.release.cluster.shared::cta.b64 %0, [%1], %2;"
	             : "=l"(st)
	             : "r"(cta__smem_addr(bar)), "r"(bytes)
	             : "memory");
	return st;
}
static __device__ __forceinline__ uint64_t cta_mbarrier_arrive(uint64_t *bar)
{
	uint64_t st;
	asm volatile("mbarrier.arrive.release.cluster.shared::cta.b64 %0, [%1];"
	             : "=l"(st)
	             : "r"(cta__smem_addr(bar))
	             : "memory");
	return st;
}
static __device__ __forceinline__ bool cta_mbarrier_try_wait_parity(uint64_t *bar, unsigned parity)
{
	unsigned ok;
	asm volatile("{\n\t.reg .pred p;\n\t"
	             "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 p, [%1], %2;\n\t"
	             "selp.b32 %0, 1, 0, p;\n\t}"
	             : "=r"(ok)
	             : "r"(cta__smem_addr(bar)), "r"(parity & 1u)
	             : "memory");
	return ok != 0;
}

/* ---- proxy fences (the guide's work-stealing loop) -------------------- */
static __device__ __forceinline__ void cta_fence_proxy_async_generic_acquire(void)
{
	asm volatile("fence.proxy.async::generic.acquire.sync_restrict::shared::cluster.cluster;" ::
	                 : "memory");
}
static __device__ __forceinline__ void cta_fence_proxy_async_generic_release(void)
{
	asm volatile("fence.proxy.async::generic.release.sync_restrict::shared::cta.cluster;" ::
	                 : "memory");
}
static __device__ __forceinline__ void cta_fence_mbarrier_init_release_cluster(void)
{
	asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

/* ======================================================================
 * Cluster launch control.
 *
 * Hardware (CTA__CUDA_F_CLC_HW, sm_100 code only): the PTX instructions.
 * Emulation (CTA__CUDA_F_CLC_EMU): the grid's units (clusters, or blocks
 * without clusters) each own two bits in ctx->claims: "started" and
 * "stolen". A block sets its unit's started bit at entry and exits at once
 * if the stolen bit was already set; a cancel takes the first unit at or
 * after the dispatch frontier (1 + highest unit that started) whose bits are
 * both clear, setting "stolen" with a CAS. Each unit is therefore handed out
 * exactly once, and once the cursor passes the end every later cancel fails,
 * so a failure is final. In a cluster launch the 16-byte result is written
 * with st.async, which completes 16 transaction bytes on the destination
 * CTA's mbarrier, as the hardware's async-proxy write does; st.async faults
 * without a cluster of two CTAs or more ("Cluster needs to have at least 2
 * blocks", seen on an H100), so there a generic store plus
 * mbarrier.complete_tx does the same.
 * Emulated result layout: w[0] = 1 on success, w[1..3] = first ctaid.
 * ====================================================================== */

static __device__ bool cta__cuda_emu_steal(struct cta__cuda_ctx *c, unsigned long long *unit)
{
	unsigned long long h = atomicAdd(&c->hi, 0ull);
	atomicMax(&c->cursor, h);
	for (;;) {
		unsigned long long u = atomicAdd(&c->cursor, 1ull);
		if (u >= c->units)
			return false;
		unsigned *w = &c->claims[u / 16];
		unsigned sb = 1u << (2 * (u % 16)), tb = sb << 1;
		unsigned old = atomicAdd(w, 0u);
		while (!(old & (sb | tb))) {
			unsigned prev = atomicCAS(w, old, old | tb);
			if (prev == old) {
				*unit = u;
				return true;
			}
			old = prev;
		}
	}
}

/* Records a result the first time this CTA decodes it: a STEAL for the
 * index this CTA will process and, in the CTA that issued a hardware
 * request, its CANCEL_DONE. Successful results are unique per grid (each
 * index is handed out once) and a failure is final, so (address, stolen
 * index) identifies one completion; the atomicExch elects one recorder
 * among the threads that decode it. */
static __device__ void cta__cuda_note_result(const void *result, bool ok, unsigned long long idx,
                                             unsigned long long first)
{
	struct cta__cuda_ctx *c = cta__blk.ctx;
	unsigned a = cta__smem_addr(result) + 1u;
	int e = -1;
	for (int i = 0; i < CTA__CUDA_DEDUP && e < 0; i++) {
		unsigned cur = cta__blk.tab_addr[i];
		if (cur == a)
			e = i;
		else if (cur == 0u) {
			unsigned prev = atomicCAS(&cta__blk.tab_addr[i], 0u, a);
			if (prev == 0u || prev == a)
				e = i;
		}
	}
	if (e < 0)
		return; /* more result buffers than slots: not recorded */
	/* Keys start at 0, so a steal of block 0 is keyed 1. */
	unsigned long long key = ok ? idx + 1 : CTA__CUDA_NONE;
	if (atomicExch(&cta__blk.tab_key[e], key) == key)
		return;
	uint64_t t = cta_globaltimer_ns();
	if (atomicExch(&cta__blk.tab_issued[e], 0u))
		cta__cuda_rec(c, CTA__EV_CANCEL_DONE, t, cta__blk.self, ok ? first : CTA__CUDA_NONE,
		              ok ? 0 : 1);
	if (ok)
		cta__cuda_rec(c, CTA__EV_STEAL, t, idx, CTA__CUDA_NONE, 0);
}

static __device__ void cta__cuda_try_cancel(cta_clc_result *result, uint64_t *bar, int multicast)
{
	struct cta__cuda_ctx *c = cta__blk.ctx;
	unsigned f = cta__blk.flags;
	if (f & CTA__CUDA_F_CLC_HW) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000 && defined(__CUDA_ARCH_FEAT_SM100_ALL)
		if (f & CTA__CUDA_F_INSTR) {
			unsigned a = cta__smem_addr(result) + 1u;
			for (int i = 0; i < CTA__CUDA_DEDUP; i++) {
				unsigned prev = atomicCAS(&cta__blk.tab_addr[i], 0u, a);
				if (prev == 0u || prev == a) {
					atomicExch(&cta__blk.tab_issued[i], 1u);
					break;
				}
			}
			cta__cuda_rec(c, CTA__EV_CANCEL, cta_globaltimer_ns(), cta__blk.self,
			              CTA__CUDA_NONE, 0);
		}
		if (multicast)
			asm volatile(
			    "clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::"
			    "complete_tx::bytes.multicast::cluster::all.b128 [%0], [%1];" ::"r"(
			        cta__smem_addr(result)),
			    "r"(cta__smem_addr(bar))
			    : "memory");
		else
			asm volatile(
			    "clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::"
			    "complete_tx::bytes.b128 [%0], [%1];" ::"r"(cta__smem_addr(result)),
			    "r"(cta__smem_addr(bar))
			    : "memory");
		return;
#else
		atomicOr(&c->errors, CTA__CUDA_ERR_CLC_HW);
		__trap();
#endif
	}
	if (f & CTA__CUDA_F_INSTR)
		cta__cuda_rec(c, CTA__EV_CANCEL, cta_globaltimer_ns(), cta__blk.self,
		              CTA__CUDA_NONE, 0);
	unsigned long long u = 0;
	bool ok = false;
	if (f & CTA__CUDA_F_CLC_EMU)
		ok = cta__cuda_emu_steal(c, &u);
	else
		/* The host launched this kernel without CLC (its harness does not
		 * declare CTA_KI_CLC), so blocks did not claim their indices and
		 * a steal could run a block twice: fail the request (the kernel
		 * still completes) and let the host report the error. */
		atomicOr(&c->errors, CTA__CUDA_ERR_CLC_OFF);
	unsigned w[4] = {ok ? 1u : 0u, 0u, 0u, 0u};
	unsigned long long first = CTA__CUDA_NONE;
	if (ok) {
		unsigned ux = (unsigned)(u % c->ucount[0]);
		unsigned long long r = u / c->ucount[0];
		unsigned uy = (unsigned)(r % c->ucount[1]);
		unsigned uz = (unsigned)(r / c->ucount[1]);
		w[1] = ux * c->cdim[0];
		w[2] = uy * c->cdim[1];
		w[3] = uz * c->cdim[2];
		first = cta__linear(w[1], w[2], w[3]);
	}
	unsigned csize = c->cdim[0] * c->cdim[1] * c->cdim[2];
	if (csize == 1u) {
		/* st.async needs a real cluster (of two CTAs or more): without
		 * one the result is stored in the generic proxy and the 16 bytes
		 * completed with mbarrier.complete_tx, the fence ordering the
		 * store before the completion that the waiter acquires. */
		asm volatile("st.shared.v4.u32 [%0], {%1, %2, %3, %4};\n\t"
		             "fence.acq_rel.cta;\n\t"
		             "mbarrier.complete_tx.relaxed.cta.shared::cta.b64 [%5], 16;" ::"r"(
		                 cta__smem_addr(result)),
		             "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3]), "r"(cta__smem_addr(bar))
		             : "memory");
	}
	unsigned n = csize == 1u ? 0u : multicast ? csize : 1u;
	unsigned self = cta_cluster_block_rank();
	for (unsigned r = 0; r < n; r++) {
		unsigned dst = multicast ? r : self;
		unsigned ra, rb;
		asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
		             : "=r"(ra)
		             : "r"(cta__smem_addr(result)), "r"(dst));
		asm volatile("mapa.shared::cluster.u32 %0, %1, %2;"
		             : "=r"(rb)
		             : "r"(cta__smem_addr(bar)), "r"(dst));
		asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], "
		             "{%1, %2, %3, %4}, [%5];" ::"r"(ra),
		             "r"(w[0]), "r"(w[1]), "r"(w[2]), "r"(w[3]), "r"(rb)
		             : "memory");
	}
	if (f & CTA__CUDA_F_INSTR)
		cta__cuda_rec(c, CTA__EV_CANCEL_DONE, cta_globaltimer_ns(), cta__blk.self, first,
		              ok ? 0 : 1);
}

static __device__ __forceinline__ void cta_clc_try_cancel(cta_clc_result *result, uint64_t *bar)
{
	cta__cuda_try_cancel(result, bar, 0);
}
static __device__ __forceinline__ void cta_clc_try_cancel_multicast(cta_clc_result *result,
                                                                    uint64_t *bar)
{
	cta__cuda_try_cancel(result, bar, 1);
}

/* Decodes a result: success and the first ctaid (all three components). */
static __device__ __forceinline__ bool cta__cuda_decode(const cta_clc_result *result, uint3 *first)
{
	if (cta__blk.flags & CTA__CUDA_F_CLC_HW) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 1000 && defined(__CUDA_ARCH_FEAT_SM100_ALL)
		unsigned ok;
		unsigned long long lo =
		    (unsigned long long)result->w[0] | ((unsigned long long)result->w[1] << 32);
		unsigned long long hi =
		    (unsigned long long)result->w[2] | ((unsigned long long)result->w[3] << 32);
		asm volatile("{\n\t.reg .b128 r;\n\t.reg .pred p;\n\t"
		             "mov.b128 r, {%1, %2};\n\t"
		             "clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 p, r;\n\t"
		             "selp.b32 %0, 1, 0, p;\n\t}"
		             : "=r"(ok)
		             : "l"(lo), "l"(hi));
		if (ok)
			asm volatile(
			    "{\n\t.reg .b128 r;\n\t"
			    "mov.b128 r, {%3, %4};\n\t"
			    "clusterlaunchcontrol.query_cancel.get_first_ctaid.v4.b32.b128 "
			    "{%0, %1, %2, _}, r;\n\t}"
			    : "=r"(first->x), "=r"(first->y), "=r"(first->z)
			    : "l"(lo), "l"(hi));
		return ok != 0;
#else
		__trap();
#endif
	}
	first->x = result->w[1];
	first->y = result->w[2];
	first->z = result->w[3];
	return result->w[0] != 0u;
}

static __device__ bool cta_clc_query_cancel_is_canceled(const cta_clc_result *result)
{
	uint3 f;
	bool ok = cta__cuda_decode(result, &f);
	if (cta__blk.flags & CTA__CUDA_F_INSTR) {
		uint3 l = cta_cluster_block_index();
		unsigned long long first = ok ? cta__linear(f.x, f.y, f.z) : CTA__CUDA_NONE;
		unsigned long long idx =
		    ok ? cta__linear(f.x + l.x, f.y + l.y, f.z + l.z) : CTA__CUDA_NONE;
		cta__cuda_note_result(result, ok, idx, first);
	}
	return ok;
}
static __device__ __forceinline__ int cta__cuda_first_ctaid(const cta_clc_result *result, int d)
{
	uint3 f;
	cta__cuda_decode(result, &f);
	return (int)(d == 0 ? f.x : d == 1 ? f.y : f.z);
}
#define cta_clc_query_cancel_get_first_ctaid_x(result) cta__cuda_first_ctaid((result), 0)
#define cta_clc_query_cancel_get_first_ctaid_y(result) cta__cuda_first_ctaid((result), 1)
#define cta_clc_query_cancel_get_first_ctaid_z(result) cta__cuda_first_ctaid((result), 2)

/* ---- cluster launch control, high level --------------------------------
 * Built on the calls above, so the emulation and the instrumentation apply:
 * the loop of the programming guide (section 4.12.2.1) with one request in
 * flight, issued by the leader. */
typedef void (*cta_block_fn)(dim3 block_idx, void *arg);

static __device__ void cta__cuda_steal_loop(int rank, bool is_leader, cta_block_fn fn, void *arg)
{
	__shared__ cta_clc_result res;
	__shared__ uint64_t bar;
	unsigned phase = 0;
	if (is_leader)
		cta_mbarrier_init(&bar, 1);
	__syncthreads();
	dim3 b(blockIdx.x, rank >= 2 ? blockIdx.y : 0u, rank >= 3 ? blockIdx.z : 0u);
	for (;;) {
		if (is_leader) {
			cta_fence_proxy_async_generic_acquire();
			cta_clc_try_cancel(&res, &bar);
			cta_mbarrier_arrive_expect_tx(&bar, (unsigned)sizeof(cta_clc_result));
		}
		fn(b, arg);
		while (!cta_mbarrier_try_wait_parity(&bar, phase)) {
		}
		phase ^= 1u;
		if (!cta_clc_query_cancel_is_canceled(&res))
			break;
		uint3 f;
		cta__cuda_decode(&res, &f);
		b = dim3(f.x, rank >= 2 ? f.y : 0u, rank >= 3 ? f.z : 0u);
		cta_fence_proxy_async_generic_release();
		/* Every thread has read the result before the leader's next
		 * request overwrites it. */
		__syncthreads();
	}
}
static __device__ __forceinline__ void cta_for_each_canceled_block(int rank, cta_block_fn fn,
                                                                   void *arg)
{
	cta__cuda_steal_loop(rank, cta_thread_rank() == 0, fn, arg);
}
static __device__ __forceinline__ void cta_try_cancel_blocks(int rank, bool is_leader,
                                                             cta_block_fn fn, void *arg)
{
	cta__cuda_steal_loop(rank, is_leader, fn, arg);
}

/* ======================================================================
 * Kernel entry and exit, and CTA_KERNEL.
 * ====================================================================== */

/* Thread 0 publishes the context, claims the block's unit under emulation
 * and records the start; returns false when the block must exit at once
 * because a cancel already took its index. */
template <bool Instr>
static __device__ __forceinline__ bool cta__cuda_enter(struct cta__cuda_ctx *c)
{
	uint64_t t = 0;
	if (cta_thread_rank() == 0) {
		t = Instr ? cta_globaltimer_ns() : 0;
		unsigned f = c->flags;
		unsigned long long self = cta__linear(blockIdx.x, blockIdx.y, blockIdx.z);
		unsigned taken = 0;
		cta__blk.ctx = c;
		cta__blk.flags = Instr ? f : (f & ~CTA__CUDA_F_INSTR);
		cta__blk.self = self;
		cta__blk.slots = Instr && self < c->fixed ? c->slots : NULL;
		for (int i = 0; i < CTA__CUDA_DEDUP; i++) {
			cta__blk.tab_addr[i] = 0u;
			cta__blk.tab_issued[i] = 0u;
			cta__blk.tab_key[i] = 0ull;
		}
		if (f & CTA__CUDA_F_CLC_EMU) {
			unsigned long long u =
			    (blockIdx.x / c->cdim[0]) +
			    (unsigned long long)c->ucount[0] *
			        ((blockIdx.y / c->cdim[1]) +
			         (unsigned long long)c->ucount[1] * (blockIdx.z / c->cdim[2]));
			unsigned sb = 1u << (2 * (u % 16));
			unsigned old = atomicOr(&c->claims[u / 16], sb);
			if (old & (sb << 1)) {
				taken = 1;
				atomicAdd(&c->skipped, 1ull);
			} else if (!(old & sb)) {
				atomicMax(&c->hi, u + 1);
			}
		}
		cta__blk.taken = taken;
		if (Instr && !taken && (f & CTA__CUDA_V_START_EARLY) && !(f & CTA__CUDA_V_NO_START))
			cta__cuda_edge(0, t);
	}
	__syncthreads();
	bool run = !cta__blk.taken;
	/* Recorded after the barrier, so the other warps start their body
	 * without waiting for the store. */
	if (Instr && run && cta_thread_rank() == 0 &&
	    !(cta__blk.flags & (CTA__CUDA_V_NO_START | CTA__CUDA_V_START_EARLY)))
		cta__cuda_edge(0, t);
	return run;
}
template <bool Instr> static __device__ __forceinline__ void cta__cuda_leave(void)
{
	if (Instr) {
		unsigned f = cta__blk.flags;
#if CTA_CUDA_WARP_NOTES
		/* Every warp notes its %warpid before the end barrier, where
		 * neither the block's start nor its waits see it. */
		if ((f & CTA__CUDA_F_WARPS) && (cta_thread_rank() & 31u) == 0 &&
		    cta_thread_rank() < 8 * 32)
			cta__blk.wid[cta_thread_rank() / 32] = (unsigned char)cta__warpid();
#endif
		if (f & CTA__CUDA_V_END_EARLY) {
			uint64_t t = cta_globaltimer_ns();
			if (!(f & CTA__CUDA_V_NO_END_SYNC))
				__syncthreads();
			if (cta_thread_rank() == 0 && !(f & CTA__CUDA_V_NO_END))
				cta__cuda_edge(1, t);
			return;
		}
		if (!(f & CTA__CUDA_V_NO_END_SYNC))
			__syncthreads();
		if (cta_thread_rank() == 0 && !(f & CTA__CUDA_V_NO_END))
			cta__cuda_edge(1, cta_globaltimer_ns());
	}
}

/* Defines the body, a __global__ template taking the argument struct by
 * value (as a __grid_constant__, so `p` points into parameter space without
 * a copy) plus the hidden context, and registers both builds by name. */
#define CTA_KERNEL(name, argtype, argname)                                                         \
	static __device__ void name##__body(const argtype *argname);                               \
	template <bool Instr>                                                                      \
	__global__ void name##__cuda(const __grid_constant__ argtype cta__a,                       \
	                             struct cta__cuda_ctx *cta__c)                                 \
	{                                                                                          \
		if (cta__cuda_enter<Instr>(cta__c)) {                                              \
			name##__body(&cta__a);                                                     \
			cta__cuda_leave<Instr>();                                                  \
		}                                                                                  \
	}                                                                                          \
	static const int name##__cuda_reg =                                                        \
	    cta__cuda_register                                                                     \
	        ? cta__cuda_register(#name, (const void *)name##__cuda<true>,                      \
	                             (const void *)name##__cuda<false>, sizeof(argtype), __FILE__, \
	                             __LINE__, &cta__cuda_ops)                                     \
	        : 0;                                                                               \
	static __device__ void name##__body(const argtype *argname)

#endif /* __CUDACC__ */
#endif
