/* The portable kernel API: one kernel source that compiles as C11 for the
 * simulator and as CUDA C++ under nvcc for the device backend.
 *
 * This header is the specification. Every call below says what it does on
 * both backends, what the simulator checks, and what is undefined behaviour
 * (UB). UB rule names in [brackets] are the stable names the simulator
 * reports (docs/UB.md lists them all).
 *
 * Writing a kernel:
 *
 *     struct saxpy_args { int n; float a; const float *x; float *y; };
 *
 *     CTA_KERNEL(saxpy, struct saxpy_args, p)
 *     {
 *         int i = blockIdx.x * blockDim.x + threadIdx.x;
 *         if (i < p->n)
 *             p->y[i] = p->a * p->x[i] + p->y[i];
 *     }
 *
 * The body runs once per CUDA thread. `p` points to the launch's argument
 * struct, which is passed by value to the GPU: pointers inside it must be
 * device pointers there (the harness, include/ctasim/harness.h, handles
 * that). Helper functions called from bodies are declared CTA_DEVICE.
 */
#ifndef CTASIM_KERNEL_H
#define CTASIM_KERNEL_H

#include <stddef.h>
#include <stdint.h>

#include "ctasim/export.h"

/* Kernel descriptor shared by both backends. The simulator runs `threads`;
 * the CUDA backend launches `cuda_fn` (its host stub). */
struct cta_kernel_def {
	const char *name;
	void (*threads)(const void *args); /* simulator: the lazy per-thread loop */
	size_t args_size;
	const char *file;
	int line;
	const void *cuda_fn; /* CUDA backend: __global__ function, or NULL */
};

/* Scopes for the cluster-aware calls that take one. */
#define CTA_SCOPE_CTA     0
#define CTA_SCOPE_CLUSTER 1

/* The 16-byte result of a cancellation request. Lives in shared memory
 * (declare it with CTA_SHARED). Its content is opaque: decode it only with
 * the cta_clc_query_* calls. */
#ifdef __cplusplus
#define CTA__ALIGN16 alignas(16)
#else
#define CTA__ALIGN16 _Alignas(16)
#endif
typedef struct cta_clc_result {
	CTA__ALIGN16 uint32_t w[4];
} cta_clc_result;

/* ======================================================================
 * CUDA C++ mapping (device backend). Everything maps to the real thing.
 * ====================================================================== */
#if defined(__CUDACC__)
#include "ctasim/sys/kernel_cuda.h"
#else
/* ======================================================================
 * C11 mapping (simulator).
 * ====================================================================== */
#include <stdbool.h>

#include "ctasim/sys/kernel_lane.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct uint3 {
	unsigned x, y, z;
} uint3;
typedef struct dim3 {
	unsigned x, y, z;
} dim3;

#define CTA_DEVICE      static
#define CTA_HOST_DEVICE static inline
#define CTA__LOC        __FILE__, __LINE__

/* ---- internal state the inline fast paths read (do not use directly) ---- */
struct cta__unit;
struct cta__cursor {
	uint3 tid;     /* next thread to hand out */
	dim3 idim;     /* iteration shape: blockDim, or 1x1x1 in timing-only mode */
	unsigned cta;  /* CTA (cluster rank) of the next thread */
	unsigned ctas; /* CTAs in this unit (cluster size) */
	uint64_t left; /* threads not yet handed out */
	uint64_t t0;   /* virtual time at which the bodies start */
	unsigned nret; /* runs handed back by lanes that had to wait */
	int exact;     /* run the exact form of the thread loop (CTA__THREAD_LOOP) */
	uint32_t spin; /* cta_spin_ns scale in ppm (device duration model); 0: none */
	uint32_t add;  /* ns added to each cta_spin_ns call (device duration model) */
};
struct cta__lane {
	uint3 tid;             /* threadIdx */
	uint3 bid;             /* blockIdx (the physical block) */
	dim3 bdim, gdim, cdim; /* blockDim, gridDim, cluster dims */
	unsigned cta_rank;     /* rank of this CTA in its cluster */
	uint64_t vtime;        /* this thread's virtual clock, ns */
	uint16_t steal_depth;  /* > 0 while inside a work-stealing body */
	uint16_t polls;        /* thread poll_x's yield points since its start or its last
	                        * cta__spin_poll (cta__poll) */
	int active;            /* a thread is bound to this lane */
	int comm;              /* 1: a global atomic ran: blocks may communicate; | 2: one
	                        * changed memory since the last cta__spin_poll */
	int vec;               /* in the vector form of the loop: tid.x may lag */
	unsigned row_end;      /* the claimed run is threads tid.x .. row_end-1 of a row */
	unsigned run_x0;       /* first thread of the run not yet counted as exited */
	struct cta__cursor *cursor;
	struct cta__unit *unit;
	unsigned char *smem; /* shared memory of this thread's CTA */
	uint64_t *end_slot;  /* latest thread end of this thread's CTA */
	uint64_t *exited;    /* threads of this CTA that finished their body */
	unsigned poll_x;     /* tid.x of the thread whose yield points `polls` counts (cta__poll);
	                      * a claim clears it to UINT32_MAX */
};
/* What a body reads of its thread's position, kept by the thread loop in
 * its own frame: reading it cannot alias the body's stores, so bodies
 * read locals (see CTA__IN_BODY). */
struct cta__idx {
	uint3 tid;
	uint3 bid;
	dim3 bdim, gdim;
	uint32_t spin, add; /* the unit's cursor->spin and ->add (cta_spin_ns) */
};
/* Names the hidden index parameter of a body; outside bodies it is this
 * int constant, which is how the macros below tell the two apart. */
enum { cta__ix = 0 };
/* body_expr inside a kernel body (where cta__ix is the body's index
 * parameter), helper_expr elsewhere (helpers read the thread-local lane). */
#ifdef __cplusplus
/* C++ has no _Generic: host code that includes this header (through
 * harness.h or sim.h) reads the thread-local lane, as helpers do. */
#define CTA__IX                              ((const struct cta__idx *)0)
#define CTA__IN_BODY(body_expr, helper_expr) (helper_expr)
#else
#define CTA__IX _Generic(cta__ix, int : (const struct cta__idx *)0, default : cta__ix)
#define CTA__IN_BODY(body_expr, helper_expr)                                                       \
	_Generic(cta__ix, int : helper_expr, default : body_expr)
#endif

/* initial-exec: one %fs-relative load per access, instead of a call to
 * __tls_get_addr that -fPIC code would otherwise make. Inside a kernel body
 * the name is shadowed by a parameter holding the same pointer, so the
 * index macros below read a local. */
#ifdef __cplusplus
#define CTA__THREAD_LOCAL thread_local /* C++ host code including harness.h */
#else
#define CTA__THREAD_LOCAL _Thread_local
#endif
extern CTA_EXPORT CTA__THREAD_LOCAL struct cta__lane *cta__cur
    __attribute__((tls_model("initial-exec")));
/* The global access of the yield point that calls cta__spin_poll: its
 * address shifted left by 2, or'ed with its CTA__ACC_* kind (0: a yield
 * point without one). Written only on that slow path. */
extern CTA_EXPORT CTA__THREAD_LOCAL uintptr_t cta__acc __attribute__((tls_model("initial-exec")));
enum { CTA__ACC_NONE, CTA__ACC_LOAD, CTA__ACC_STORE, CTA__ACC_ATOMIC };
CTA_EXPORT void cta__lane_enter_cta(struct cta__lane *l);
CTA_EXPORT int cta__claim_returned(struct cta__lane *l);
CTA_EXPORT int cta__claim_next(struct cta__lane *l);
CTA_EXPORT void cta_kernel_register(const struct cta_kernel_def *k);

/* One named field of a kernel's argument struct (CTA_ARG_FIELD), so that a
 * program without the kernel's argument header (`ctasim bench` runs plain C
 * loops over a prepared launch's arrays) reads a launch's arguments by name. */
struct cta_arg_field {
	const char *name;
	size_t offset, size;
};
/* clang-format off */
#define CTA_ARG_FIELD(argtype, field) {#field, offsetof(argtype, field), sizeof(((argtype *)0)->field)}
/* clang-format on */
/* Names the fields of kernel k's arguments: `fields` ends with {NULL, 0, 0}
 * and is kept, not copied (a static table of the kernel's harness). A
 * later call for the same kernel replaces the table; CTA_EINVAL (and the
 * table not taken) when a field lies outside k's args_size. */
CTA_EXPORT int cta_kernel_describe_args(const struct cta_kernel_def *k,
                                        const struct cta_arg_field *fields);
/* Copies field `name` of `args` (arguments of kernel k, as a recorded
 * launch holds them) to out, which has `size` bytes. CTA_ENOTFOUND when k
 * has no described field of that name, CTA_EINVAL when size is not the
 * field's. */
CTA_EXPORT int cta_kernel_arg(const struct cta_kernel_def *k, const void *args, const char *name,
                              void *out, size_t size);
/* Describes the arguments of kernel NAME (defined by CTA_KERNEL in this
 * program) at load time: CTA_KERNEL_ARGS(saxpy, saxpy_fields). */
#define CTA_KERNEL_ARGS(name, fields)                                                              \
	CTA__CONSTRUCTOR(name##__args)                                                             \
	{                                                                                          \
		cta_kernel_describe_args(&name, fields);                                           \
	}
CTA_EXPORT const uint3 *cta__blockidx_in_body(const char *file, int line);

/* Claims the rest of the cursor's current row of threads (same y, z and
 * CTA) for the calling lane; 0 when none are left. A lane that has to wait
 * in the middle of its run hands the remainder back (cta__claim_returned
 * picks such runs up first), so threads still get a stack of their own only
 * when they wait. When the unit has no threads left, cta__claim_next may
 * move the lane on to the next unit of the same kernel, whose threads it
 * then claims (the loop's copied arguments stay valid: same kernel). */
static inline int cta__claim(struct cta__lane *l)
{
	struct cta__cursor *c = l->cursor;
	if (c->nret)
		return cta__claim_returned(l);
	if (c->left == 0)
		return cta__claim_next(l);
	if (c->cta != l->cta_rank || !l->smem)
		cta__lane_enter_cta(l);
	unsigned n = c->idim.x - c->tid.x;
	l->tid = c->tid;
	l->run_x0 = c->tid.x;
	l->row_end = c->idim.x;
	l->poll_x = UINT32_MAX;
	c->left -= n;
	c->tid.x = 0;
	if (++c->tid.y == c->idim.y) {
		c->tid.y = 0;
		if (++c->tid.z == c->idim.z) {
			c->tid.z = 0;
			c->cta++;
		}
	}
	return 1;
}

/* One thread of either form of CTA__THREAD_LOOP: it starts at the unit's
 * start time, and the run ends with its latest thread. */
#define CTA__ONE_THREAD(body_fn, args, ix)                                                         \
	cta__l->vtime = cta__t0;                                                                   \
	body_fn(args, cta__l, &(ix));                                                              \
	cta__end = cta__l->vtime > cta__end ? cta__l->vtime : cta__end

/* The vector form's step to the next thread (v, its tid.x): the lane's follows.
 * The sanitizer's copies (kernels/sanitized.c) store it where their late
 * instrumentation cannot find it sunk out of the loop. */
#ifndef CTA__VEC_NEXT_THREAD
#define CTA__VEC_NEXT_THREAD(lane, v) ((lane)->tid.x = ++(v))
#endif

/* The sanitizer's copies (kernels/sanitized.c) may hand a run of threads to
 * the plain vector loop, where nothing it accesses needs a test
 * (kernels/sanitized_fast.c): what is declared before the vector form's
 * function, and what it does first. */
#ifndef CTA__VEC_ROW_FAST
#define CTA__VEC_ROW_FAST_DECL(name)
#define CTA__VEC_ROW_FAST(name)
#endif

/* The vector form's run of threads (see CTA__THREAD_LOOP), in a function
 * of its own: gcc 12 expands an AVX-512 masked load as a merge into the
 * destination's old value, which in a function that also makes calls lives
 * on the stack (every vector register is call-clobbered), a 64-byte store
 * and reload per vector. Without calls here it stays in a register. The
 * arguments are copied again: the body's stores must not alias them. */
#define CTA__VEC_ROW(body_fn, argtype, pa)                                                         \
	struct cta__idx cta__v = *cta__xp;                                                         \
	uint64_t cta__end = 0;                                                                     \
	__asm__("" : "+r"(cta__v.bid.x), "+r"(cta__v.bdim.x), "+r"(cta__v.tid.x));                 \
	cta__v.bid.x &= 0xfffffu; /* < 2^20, tested by the caller */                               \
	cta__v.bdim.x &= 0x7ffu;  /* <= 1024 */                                                    \
	cta__v.tid.x &= 0x3ffu;   /* < row_end <= 1024 */                                          \
	if (sizeof(argtype) <= CTA__ARGS_COPY_MAX) {                                               \
		const argtype cta__copy = *(pa);                                                   \
		while (cta__v.tid.x < (cta__l->row_end & 0x7ffu)) {                                \
			CTA__ONE_THREAD(body_fn, &cta__copy, cta__v);                              \
			CTA__VEC_NEXT_THREAD(cta__l, cta__v.tid.x);                                \
		}                                                                                  \
	} else {                                                                                   \
		while (cta__v.tid.x < (cta__l->row_end & 0x7ffu)) {                                \
			CTA__ONE_THREAD(body_fn, pa, cta__v);                                      \
			CTA__VEC_NEXT_THREAD(cta__l, cta__v.tid.x);                                \
		}                                                                                  \
	}                                                                                          \
	return cta__end

/* The loop every kernel runs: threads of a run one after another, each
 * starting at the unit's start time. row_end is read again after each
 * thread: a thread that waits hands the rest of its run back by shortening
 * it. The body reads its indices from cta__ix, a local; out-of-line code
 * (barriers, the CLC calls, helpers) reads the lane's tid, so it is kept
 * current for every call a body makes. Two forms:
 *  - the vector form, for blocks with blockIdx.x < 2^20: the lane's tid.x
 *    is stored after each thread rather than before it, which lets the
 *    compiler keep it in a register through a body that makes no calls
 *    (the store that follows the body's own conditional stores can be sunk
 *    out of the loop), and the indices are masked to ranges they already
 *    have, which tells the compiler that blockIdx.x * blockDim.x +
 *    threadIdx.x cannot wrap: such a body then compiles to vector code
 *    (with -O3 -fno-trapping-math and the x86-64-v4 clone below). It runs
 *    in vrow_fn, a function of its own (CTA__VEC_ROW). lane->vec says that
 *    the lane's tid.x may lag the running thread.
 *  - the exact form, one volatile store of tid.x before each thread: used
 *    for other blocks and when the cursor asks for exact threads (timing-
 *    only runs, with one thread a block, and cta_sim_set_exact_threads:
 *    a crash report then names the thread). */
#define CTA__THREAD_LOOP(body_fn, vrow_fn, args)                                                   \
	struct cta__lane *const cta__l = cta__cur;                                                 \
	struct cta__idx cta__x;                                                                    \
	cta__x.bdim = cta__l->bdim;                                                                \
	cta__x.gdim = cta__l->gdim;                                                                \
	while (cta__claim(cta__l)) {                                                               \
		const uint64_t cta__t0 = cta__l->cursor->t0;                                       \
		cta__x.spin = cta__l->cursor->spin; /* per unit: the claim may move on */          \
		cta__x.add = cta__l->cursor->add;                                                  \
		uint64_t cta__end = 0;                                                             \
		cta__x.bid = cta__l->bid;                                                          \
		cta__x.tid = cta__l->tid;                                                          \
		cta__l->active = 1;                                                                \
		if (cta__x.bid.x < 0x100000u && !cta__l->cursor->exact) {                          \
			*(volatile int *)&cta__l->vec = 1;                                         \
			cta__end = vrow_fn(args, cta__l, &cta__x, cta__t0);                        \
			*(volatile int *)&cta__l->vec = 0;                                         \
		} else {                                                                           \
			for (; cta__x.tid.x < cta__l->row_end; cta__x.tid.x++) {                   \
				*(volatile unsigned *)&cta__l->tid.x = cta__x.tid.x;               \
				CTA__ONE_THREAD(body_fn, args, cta__x);                            \
			}                                                                          \
		}                                                                                  \
		if (cta__end > *cta__l->end_slot)                                                  \
			*cta__l->end_slot = cta__end;                                              \
		*cta__l->exited += cta__l->row_end - cta__l->run_x0;                               \
		cta__l->active = 0;                                                                \
	}

/* Where GCC can build one, each kernel's thread loop also comes as an
 * x86-64-v4 (AVX-512) clone, picked at load time on hosts that have it:
 * AVX-512's masked loads and stores are what let a body's `if (i < n)`
 * compile to vector code. (AVX2's masked stores are microcoded and slower
 * than scalar code on some AMD hosts, so there is no AVX2 clone.) Not
 * under ThreadSanitizer: the clones' resolvers run before its runtime is
 * set up, and crash the program at load. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && __GNUC__ >= 11 &&           \
    !defined(__SANITIZE_THREAD__)
#define CTA__LOOP_CLONES __attribute__((target_clones("default", "arch=x86-64-v4")))
#else
#define CTA__LOOP_CLONES
#endif

/* Arguments no larger than this are copied into the loop's frame, as a GPU
 * gives each thread its parameters: a body's stores through its data
 * pointers then cannot alias them, so the compiler reads them once per run
 * instead of once per thread. */
#define CTA__ARGS_COPY_MAX 256

/* ---- kernel definition ------------------------------------------------ */

#if defined(__GNUC__) || defined(__clang__)
#define CTA__CONSTRUCTOR(fn) __attribute__((constructor)) static void fn(void)
#else
#error "ctasim kernels need a compiler with constructor attributes"
#endif

/* The sanitizer's second build of the kernel bodies (kernels/sanitized.c)
 * defines these to name its copies apart and register them as the
 * instrumented variants. */
#ifndef CTA__KDEF_NAME
#define CTA__KDEF_NAME(name)  name
#define CTA__KDEF_REGISTER(k) cta_kernel_register(k)
#endif

/* Defines kernel NAME whose body sees `const ARGTYPE *ARGNAME`. The body
 * is always inlined into the thread loop, so that its index reads become
 * the loop's registers before the compiler computes their ranges. Also
 * defines `const struct cta_kernel_def NAME`, registered at load time, so
 * the CLI and harnesses find it by name. */
#define CTA_KERNEL(name, argtype, argname)                                                         \
	__attribute__((always_inline)) static inline void name##__body(const argtype *argname,     \
	                                                               CTA__LANE_PARAM);           \
	CTA__VEC_ROW_FAST_DECL(name)                                                               \
	CTA__LOOP_CLONES __attribute__((noinline)) static uint64_t name##__vrow(                   \
	    const argtype *cta__pa, struct cta__lane *cta__l, const struct cta__idx *cta__xp,      \
	    uint64_t cta__t0)                                                                      \
	{                                                                                          \
		CTA__VEC_ROW_FAST(name);                                                           \
		CTA__VEC_ROW(name##__body, argtype, cta__pa);                                      \
	}                                                                                          \
	__attribute__((always_inline)) static inline void name##__rows(const argtype *cta__p)      \
	{                                                                                          \
		CTA__THREAD_LOOP(name##__body, name##__vrow, cta__p);                              \
	}                                                                                          \
	CTA__LOOP_CLONES static void name##__threads(const void *cta__a)                           \
	{                                                                                          \
		if (sizeof(argtype) <= CTA__ARGS_COPY_MAX) {                                       \
			const argtype cta__copy = *(const argtype *)cta__a;                        \
			name##__rows(&cta__copy);                                                  \
		} else {                                                                           \
			name##__rows((const argtype *)cta__a);                                     \
		}                                                                                  \
	}                                                                                          \
	CTA_EXPORT const struct cta_kernel_def CTA__KDEF_NAME(name) = {                            \
	    #name, name##__threads, sizeof(argtype), __FILE__, __LINE__, NULL};                    \
	CTA__CONSTRUCTOR(name##__register)                                                         \
	{                                                                                          \
		CTA__KDEF_REGISTER(&CTA__KDEF_NAME(name));                                         \
	}                                                                                          \
	static inline void name##__body(const argtype *argname, CTA__LANE_PARAM)

/* ---- built-in indices --------------------------------------------------
 * threadIdx, blockIdx, blockDim, gridDim as in CUDA. Inside a
 * work-stealing body (cta_for_each_canceled_block / cta_try_cancel_blocks)
 * reading blockIdx is reported as the warning [builtin_blockidx_in_body]:
 * the stolen index passed to the body must be used instead. (A kernel
 * body itself never runs inside one: there they read the thread loop's
 * copies.) */
#define threadIdx CTA__IN_BODY(CTA__IX->tid, (cta__cur->tid))
#define blockIdx                                                                                   \
	CTA__IN_BODY(CTA__IX->bid, (*(cta__cur->steal_depth ? cta__blockidx_in_body(CTA__LOC)      \
	                                                    : &cta__cur->bid)))
#define blockDim          CTA__IN_BODY(CTA__IX->bdim, (cta__cur->bdim))
#define gridDim           CTA__IN_BODY(CTA__IX->gdim, (cta__cur->gdim))

/* Linear rank of the calling thread in its block (x fastest). */
static inline unsigned cta_thread_rank(void)
{
	struct cta__lane *l = cta__cur;
	return l->tid.x + l->bdim.x * (l->tid.y + l->bdim.y * l->tid.z);
}
static inline unsigned cta__idx_rank(const struct cta__idx *ix)
{
	return ix->tid.x + ix->bdim.x * (ix->tid.y + ix->bdim.y * ix->tid.z);
}
#define cta_thread_rank() CTA__IN_BODY(cta__idx_rank(CTA__IX), cta_thread_rank())

/* ---- barriers ----------------------------------------------------------
 * __syncthreads(): every thread of the block waits until all have arrived;
 * shared-memory writes before it are visible to all threads after it.
 * UB [divergent_barrier]: some threads of the block exited or wait at a
 * different __syncthreads. UB [barrier_deadlock]: the barrier can never
 * complete (for example the missing threads wait on an mbarrier that no
 * one will complete). Costs barrier_ns of virtual time. */
CTA_EXPORT void cta__syncthreads(const char *file, int line);
#define __syncthreads()   cta__syncthreads(CTA__LOC)

/* ---- shared memory -----------------------------------------------------
 * CTA_SHARED(T, name): one T per block; `name` is a `T *` to it.
 * CTA_SHARED_ARRAY(T, name, N): N elements per block; `name` is a `T *`.
 * CTA_SHARED_DYNAMIC(T, name): the launch's dynamic shared memory.
 * Contents start as zero bytes in the simulator (undefined on a GPU;
 * `--sanitize initcheck` reports a read of a byte the block never wrote). */
struct cta__smem_site {
	size_t size, align;
	const char *name;
};
CTA_EXPORT void *cta__shared(const struct cta__smem_site *site);
CTA_EXPORT void *cta__shared_dynamic(void);
#define CTA_SHARED(type, name)                                                                     \
	static const struct cta__smem_site name##__site = {sizeof(type), _Alignof(type), #name};   \
	type *const name = (type *)cta__shared(&name##__site)
#define CTA_SHARED_ARRAY(type, name, n)                                                            \
	static const struct cta__smem_site name##__site = {sizeof(type) * (n), _Alignof(type),     \
	                                                   #name};                                 \
	type *const name = (type *)cta__shared(&name##__site)
#define CTA_SHARED_DYNAMIC(type, name) type *const name = (type *)cta__shared_dynamic()

/* ---- yield points ------------------------------------------------------
 * Every global atomic, __threadfence, __nanosleep, cta_ld_volatile /
 * cta_st_volatile and clock read is a yield point: a thread that makes
 * CTA__POLL_BUDGET of them in a row is asked (cta__spin_poll) whether it
 * spins, and a spinning thread is suspended so that the other resident
 * blocks run, as on a GPU (docs/FORWARD_PROGRESS.md). Below the budget a
 * yield point costs an increment and two compares. */
#define CTA__POLL_BUDGET               16
CTA_EXPORT void cta__spin_poll(const char *file, int line);
/* The count is each thread's own, from its start: a lane's first yield
 * point of a thread other than the one it counted for (poll_x, its tid.x
 * within a claimed run) has cta__poll_thread start the thread's count (0
 * on fibers, where a lane keeps its thread while it waits; the thread's
 * own where one lane runs a compiled block's threads, sim/exec/regions.c).
 * One compare per yield point, nothing per thread. (It reads the lane from
 * cta__cur: a lane passed to a call keeps the kernel compiler's
 * LaneScopePass off the loop form.) */
CTA_EXPORT void cta__poll_thread(void);
static inline void cta__poll(const char *file, int line)
{
	struct cta__lane *l = cta__cur;
	if (__builtin_expect(l->poll_x != l->tid.x, 0))
		cta__poll_thread();
	if (__builtin_expect(++l->polls >= CTA__POLL_BUDGET, 0)) {
		cta__acc = 0;
		cta__spin_poll(file, line);
	}
}
/* A yield point that touches global memory at p (a CTA__ACC_* kind of
 * access): blocks may communicate. */
static inline void cta__poll_mem(const volatile void *p, unsigned kind, const char *file, int line)
{
	struct cta__lane *l = cta__cur;
	l->comm |= 1; /* (a write's 2 stays until cta__spin_poll sees it) */
	if (__builtin_expect(l->poll_x != l->tid.x, 0))
		cta__poll_thread();
	if (__builtin_expect(++l->polls >= CTA__POLL_BUDGET, 0)) {
		cta__acc = (uintptr_t)p << 2 | kind;
		cta__spin_poll(file, line);
	}
}

/* ---- global atomics ----------------------------------------------------
 * atomicAdd/Exch/CAS/Min/Max on int, unsigned, unsigned long long (and
 * atomicAdd on float): return the old value, relaxed device-scope order as
 * on a GPU. atomicCAS(p, compare, val). Each is a yield point. */
#define CTA__WROTE(changed)                                                                        \
	do {                                                                                       \
		if (changed)                                                                       \
			cta__cur->comm = 3;                                                        \
	} while (0)
#define CTA__ATOMIC_INT_OPS(sfx, T)                                                                \
	static inline T cta__atomic_add_##sfx(T *p, T v, const char *file, int line)               \
	{                                                                                          \
		cta__poll_mem(p, CTA__ACC_ATOMIC, file, line);                                     \
		CTA__WROTE(v != 0);                                                                \
		return __atomic_fetch_add(p, v, __ATOMIC_RELAXED);                                 \
	}                                                                                          \
	static inline T cta__atomic_exch_##sfx(T *p, T v, const char *file, int line)              \
	{                                                                                          \
		cta__poll_mem(p, CTA__ACC_ATOMIC, file, line);                                     \
		T old = __atomic_exchange_n(p, v, __ATOMIC_RELAXED);                               \
		CTA__WROTE(old != v);                                                              \
		return old;                                                                        \
	}                                                                                          \
	static inline T cta__atomic_cas_##sfx(T *p, T cmp, T v, const char *file, int line)        \
	{                                                                                          \
		cta__poll_mem(p, CTA__ACC_ATOMIC, file, line);                                     \
		T want = cmp;                                                                      \
		__atomic_compare_exchange_n(p, &cmp, v, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);    \
		CTA__WROTE(cmp == want && want != v);                                              \
		return cmp;                                                                        \
	}                                                                                          \
	static inline T cta__atomic_min_##sfx(T *p, T v, const char *file, int line)               \
	{                                                                                          \
		cta__poll_mem(p, CTA__ACC_ATOMIC, file, line);                                     \
		T old = __atomic_load_n(p, __ATOMIC_RELAXED);                                      \
		while (v < old && !__atomic_compare_exchange_n(p, &old, v, 1, __ATOMIC_RELAXED,    \
		                                               __ATOMIC_RELAXED))                  \
			;                                                                          \
		CTA__WROTE(v < old);                                                               \
		return old;                                                                        \
	}                                                                                          \
	static inline T cta__atomic_max_##sfx(T *p, T v, const char *file, int line)               \
	{                                                                                          \
		cta__poll_mem(p, CTA__ACC_ATOMIC, file, line);                                     \
		T old = __atomic_load_n(p, __ATOMIC_RELAXED);                                      \
		while (v > old && !__atomic_compare_exchange_n(p, &old, v, 1, __ATOMIC_RELAXED,    \
		                                               __ATOMIC_RELAXED))                  \
			;                                                                          \
		CTA__WROTE(v > old);                                                               \
		return old;                                                                        \
	}
CTA__ATOMIC_INT_OPS(i32, int)
CTA__ATOMIC_INT_OPS(u32, unsigned)
CTA__ATOMIC_INT_OPS(u64, unsigned long long)
CTA__ATOMIC_INT_OPS(ul, unsigned long) /* uint64_t on LP64 systems */
static inline float cta__atomic_add_f32(float *p, float v, const char *file, int line)
{
	cta__poll_mem(p, CTA__ACC_ATOMIC, file, line);
	CTA__WROTE(v != 0);
	union {
		float f;
		uint32_t u;
	} o, n;
	o.u = __atomic_load_n((uint32_t *)p, __ATOMIC_RELAXED);
	do {
		n.f = o.f + v;
	} while (!__atomic_compare_exchange_n((uint32_t *)p, &o.u, n.u, 1, __ATOMIC_RELAXED,
	                                      __ATOMIC_RELAXED));
	return o.f;
}
#define CTA__ATOMIC_SEL(op, p)                                                                     \
	_Generic((p), int *: cta__atomic_##op##_i32, unsigned *: cta__atomic_##op##_u32,           \
		 unsigned long long *: cta__atomic_##op##_u64, unsigned long *: cta__atomic_##op##_ul)
#define atomicAdd(p, v)                                                                            \
	_Generic((p), float *: cta__atomic_add_f32, int *: cta__atomic_add_i32,                    \
		 unsigned *: cta__atomic_add_u32, unsigned long long *: cta__atomic_add_u64,         \
		 unsigned long *: cta__atomic_add_ul)(p, v, CTA__LOC)
#define atomicExch(p, v)   CTA__ATOMIC_SEL(exch, p)(p, v, CTA__LOC)
#define atomicCAS(p, c, v) CTA__ATOMIC_SEL(cas, p)(p, c, v, CTA__LOC)
#define atomicMin(p, v)    CTA__ATOMIC_SEL(min, p)(p, v, CTA__LOC)
#define atomicMax(p, v)    CTA__ATOMIC_SEL(max, p)(p, v, CTA__LOC)

/* cta_ld_volatile(p): *p read from global memory, never from a register or
 * a stale cache line (a `volatile` load, ld.volatile on a GPU); the way to
 * poll a flag another block writes. cta_st_volatile(p, v): the matching
 * store. Both are yield points. */
#define cta_ld_volatile(p)                                                                         \
	(cta__poll_mem((p), CTA__ACC_LOAD, CTA__LOC), *(volatile __typeof__(*(p)) *)(p))
#define cta_st_volatile(p, v)                                                                      \
	(cta__poll_mem((p), CTA__ACC_STORE, CTA__LOC), cta__cur->comm = 3,                         \
	 (void)(*(volatile __typeof__(*(p)) *)(p) = (v)))

/* cta_grid_sync(): cg::this_grid().sync(): every thread of the grid waits
 * until all have arrived; global-memory writes before it are visible to
 * all threads after it. Only in a cooperative launch
 * (cta_launch_cfg.cooperative), whose grid the launch checks can be
 * co-resident; elsewhere the run stops with an error, as cg's is_valid()
 * would be false on a GPU. */
CTA_EXPORT void cta__grid_sync(const char *file, int line);
#define cta_grid_sync() cta__grid_sync(CTA__LOC)

/* __threadfence(): this thread's global-memory accesses before it are seen
 * by every thread of the device before those after it. (ThreadSanitizer
 * does not model fences; under it the fence is a sequentially consistent
 * read-modify-write, which it does.) */
#if defined(__SANITIZE_THREAD__)
static inline void cta__threadfence(const char *file, int line)
{
	static int order;
	cta__poll(file, line);
	__atomic_fetch_add(&order, 0, __ATOMIC_SEQ_CST);
}
#else
static inline void cta__threadfence(const char *file, int line)
{
	cta__poll(file, line);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
}
#endif
#define __threadfence()   cta__threadfence(CTA__LOC)

/* __nanosleep(ns) (cta_nanosleep): suspends the thread for about ns
 * nanoseconds; in the simulator, advances its clock by ns. A yield point:
 * the usual back-off of a spin loop. */
static inline void cta__nanosleep(uint64_t ns, const char *file, int line)
{
	cta__cur->vtime += ns;
	cta__poll(file, line);
}
#define __nanosleep(ns)   cta__nanosleep((uint64_t)(ns), CTA__LOC)
#define cta_nanosleep(ns) cta__nanosleep((uint64_t)(ns), CTA__LOC)

/* ---- time, cost and placement -----------------------------------------
 * cta_spin_ns(ns): on a GPU, busy-waits ns nanoseconds on %globaltimer; in
 * the simulator, advances the calling thread's virtual clock by ns (scaled
 * by the device model's spin_scale for the SM's load, plus its spin_add per
 * call, if it has them). This is how a kernel states what its work costs.
 * cta_globaltimer_ns(): %globaltimer on a GPU; the thread's virtual time.
 * cta_clock64(): clock64() on a GPU; virtual time in ns in the simulator.
 * cta_smid(): %smid, the SM the block runs on. */
/* Inside a body the duration model is read from the thread loop's own
 * copy (cta__ix): the loop's per-thread stores could otherwise alias the
 * cursor and force two loads per thread. */
#define cta_spin_ns(ns)                                                                            \
	((void)(cta__cur->vtime +=                                                                 \
	        CTA__IN_BODY(cta__spin_cost_of(CTA__IX->spin, CTA__IX->add, (uint64_t)(ns)),       \
	                     cta__spin_cost(cta__cur, (uint64_t)(ns)))))
static inline uint64_t cta__spin_cost_of(uint64_t p, uint64_t add, uint64_t ns)
{
	/* p: the spin_scale in ppm for the SM's load when the block started. */
	return (p ? ns / 1000000 * p + ns % 1000000 * p / 1000000 : ns) + add;
}
static inline uint64_t cta__spin_cost(const struct cta__lane *l, uint64_t ns)
{
	return cta__spin_cost_of(l->cursor->spin, l->cursor->add, ns);
}
/* Clock reads are yield points: a loop that waits for a time to pass
 * advances it. */
static inline uint64_t cta__globaltimer_ns(const char *file, int line)
{
	cta__poll(file, line);
	return cta__cur->vtime;
}
#define cta_globaltimer_ns()          cta__globaltimer_ns(CTA__LOC)
#define cta_clock64()                 ((long long)cta__globaltimer_ns(CTA__LOC))
CTA_EXPORT unsigned cta_smid(void);

/* ---- clusters ----------------------------------------------------------
 * A launch with cluster dims C groups C.x*C.y*C.z consecutive blocks into a
 * cluster, co-scheduled on one GPC. cta_cluster_sync() is
 * cg::cluster_group::sync(): a barrier over every thread of the cluster. */
CTA_EXPORT void cta__cluster_sync(const char *file, int line);
#define cta_cluster_sync()            cta__cluster_sync(CTA__LOC)
static inline dim3 cta_cluster_dim(void)
{
	return cta__cur->cdim;
}
static inline unsigned cta_cluster_block_rank(void)
{
	return cta__cur->cta_rank;
}
static inline uint3 cta_cluster_block_index(void)
{
	struct cta__lane *l = cta__cur;
	uint3 r = {l->bid.x % l->cdim.x, l->bid.y % l->cdim.y, l->bid.z % l->cdim.z};
	return r;
}
static inline unsigned cta_cluster_thread_rank(void)
{
	struct cta__lane *l = cta__cur;
	return l->cta_rank * (l->bdim.x * l->bdim.y * l->bdim.z) + cta_thread_rank();
}

/* ---- mbarrier (shared-memory barrier, cuda::ptx::mbarrier_*) ----------
 * The barrier is a uint64_t in shared memory (declare with CTA_SHARED).
 * cta_mbarrier_init(bar, count): arrival count per phase; phase 0 starts.
 * cta_mbarrier_arrive_expect_tx(bar, bytes): one arrival and `bytes` more
 *   expected transaction bytes for the current phase.
 * cta_mbarrier_arrive(bar): one arrival.
 * cta_mbarrier_try_wait_parity(bar, parity): true once the phase with that
 *   parity has completed. Like the PTX instruction it may suspend the thread
 *   for a while: the simulator suspends it until the phase completes, so a
 *   `while (!try_wait) {}` loop costs nothing. */
CTA_EXPORT void cta__mbarrier_init(uint64_t *bar, unsigned count, const char *file, int line);
CTA_EXPORT uint64_t cta__mbarrier_arrive_expect_tx(uint64_t *bar, unsigned bytes, const char *file,
                                                   int line);
CTA_EXPORT uint64_t cta__mbarrier_arrive(uint64_t *bar, const char *file, int line);
CTA_EXPORT bool cta__mbarrier_try_wait_parity(uint64_t *bar, unsigned parity, const char *file,
                                              int line);
#define cta_mbarrier_init(bar, count) cta__mbarrier_init((bar), (count), CTA__LOC)
#define cta_mbarrier_arrive_expect_tx(bar, bytes)                                                  \
	cta__mbarrier_arrive_expect_tx((bar), (bytes), CTA__LOC)
#define cta_mbarrier_arrive(bar) cta__mbarrier_arrive((bar), CTA__LOC)
#define cta_mbarrier_try_wait_parity(bar, parity)                                                  \
	cta__mbarrier_try_wait_parity((bar), (parity), CTA__LOC)

/* ---- cluster launch control, low level (cuda::ptx::clusterlaunchcontrol_*)
 * cta_clc_try_cancel(result, bar): asynchronously asks the scheduler to
 *   cancel the launch of a block that has not started and to hand over its
 *   index. The 16-byte result is written to *result and completes
 *   sizeof(cta_clc_result) transaction bytes on *bar (the issuer must
 *   arrive_expect_tx those bytes). Succeeds with the next block not yet
 *   started, in dispatch order; fails when none is pending, when a
 *   higher-priority kernel is waiting, or when a failure is injected.
 *   UB [request_after_observed_failure]: the calling block already observed
 *   a failed result. UB [result_buffer_in_flight]: *result belongs to a
 *   request that has not completed.
 * cta_clc_try_cancel_multicast(result, bar): cluster form. Cancels a whole
 *   cluster; the result is written at the same offset in every CTA of the
 *   calling cluster and completes on each CTA's barrier at the same offset.
 *   UB [multicast_cluster_not_running]: a CTA of the cluster has exited, or
 *   not every CTA has started (sync the cluster first).
 * cta_clc_query_cancel_is_canceled(result): true when the request stole a
 *   block. UB [read_before_complete]: the result's mbarrier phase has not
 *   been observed complete by this thread (or before a barrier it crossed).
 * cta_clc_query_cancel_get_first_ctaid_{x,y,z}(result): the stolen block's
 *   index (for a cluster: its first CTA; add the local CTA index).
 *   UB [read_failed_index]: the result is a failure. */
CTA_EXPORT void cta__clc_try_cancel(cta_clc_result *result, uint64_t *bar, int multicast,
                                    const char *file, int line);
CTA_EXPORT bool cta__clc_is_canceled(const cta_clc_result *result, const char *file, int line);
CTA_EXPORT int cta__clc_first_ctaid(const cta_clc_result *result, int dim, const char *file,
                                    int line);
#define cta_clc_try_cancel(result, bar)                cta__clc_try_cancel((result), (bar), 0, CTA__LOC)
#define cta_clc_try_cancel_multicast(result, bar)      cta__clc_try_cancel((result), (bar), 1, CTA__LOC)
#define cta_clc_query_cancel_is_canceled(result)       cta__clc_is_canceled((result), CTA__LOC)
#define cta_clc_query_cancel_get_first_ctaid_x(result) cta__clc_first_ctaid((result), 0, CTA__LOC)
#define cta_clc_query_cancel_get_first_ctaid_y(result) cta__clc_first_ctaid((result), 1, CTA__LOC)
#define cta_clc_query_cancel_get_first_ctaid_z(result) cta__clc_first_ctaid((result), 2, CTA__LOC)

/* Proxy fences of the guide's loop (fence.proxy.async... acquire/release,
 * fence.mbarrier_init.release.cluster). Ordering only: no effect on the
 * simulator's state, real instructions on a GPU. */
static inline void cta_fence_proxy_async_generic_acquire(void)
{
}
static inline void cta_fence_proxy_async_generic_release(void)
{
}
static inline void cta_fence_mbarrier_init_release_cluster(void)
{
}

/* ---- cluster launch control, high level (cuda::for_each_canceled_block)
 * cta_for_each_canceled_block(rank, fn, arg): calls fn(blockIdx, arg), then
 *   repeatedly cancels another block of the grid and calls fn with its
 *   index, until a cancellation fails. rank (1, 2, 3) is the rank of the
 *   block index the body uses. Every thread of the block must call it
 *   exactly once. UB [for_each_called_twice], [for_each_not_all_threads].
 * cta_try_cancel_blocks(rank, is_leader, fn, arg): the experimental API:
 *   the same, with exactly one thread passing is_leader true.
 *   UB [leader_count]: zero or several leaders. */
typedef void (*cta_block_fn)(dim3 block_idx, void *arg);
CTA_EXPORT void cta__for_each_canceled_block(int rank, cta_block_fn fn, void *arg, const char *file,
                                             int line);
CTA_EXPORT void cta__try_cancel_blocks(int rank, bool is_leader, cta_block_fn fn, void *arg,
                                       const char *file, int line);
#define cta_for_each_canceled_block(rank, fn, arg)                                                 \
	cta__for_each_canceled_block((rank), (fn), (arg), CTA__LOC)
#define cta_try_cancel_blocks(rank, is_leader, fn, arg)                                            \
	cta__try_cancel_blocks((rank), (is_leader), (fn), (arg), CTA__LOC)

#ifdef __cplusplus
}
#endif
#endif /* !__CUDACC__ */
#endif
