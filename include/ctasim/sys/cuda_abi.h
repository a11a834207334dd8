/* The CUDA backend's private host-device ABI: the per-launch context and
 * instrumentation records that instrumented kernels (kernel_cuda.h) write
 * and device/cuda_exec.c reads, and the kernel registry's entry point. Not
 * an API: installed only because kernel_cuda.h needs it under nvcc. */
#ifndef CTASIM_SYS_CUDA_ABI_H
#define CTASIM_SYS_CUDA_ABI_H

#include <stddef.h>
#include <stdint.h>

/* ======================================================================
 * Backend ABI: the per-launch context and the instrumentation record, shared
 * with the host side of the backend (device/cuda_exec.c, plain C).
 * Private: the layout changes with the backend, never part of the API.
 * ====================================================================== */

/* One instrumentation record as the GPU writes it (40 bytes). `ev` is a
 * cta_trace_event; `kernel` is filled in by the host. */
struct cta__cuda_rec {
	uint64_t t;     /* %globaltimer, ns */
	uint64_t block; /* logical block, linear, x fastest */
	uint64_t phys;  /* physical block */
	uint64_t arg;   /* CANCEL_DONE: stolen block or UINT64_MAX */
	uint32_t sm;    /* %smid */
	uint16_t ev;
	int16_t code; /* CANCEL_DONE: cta_cancel_outcome */
};

/* The start or end of one physical block below ctx->fixed: one 16-byte
 * store; block and phys are the slot's index / 2. ev 0xffffffff: empty. */
struct cta__cuda_slot {
	uint64_t t;
	uint32_t sm;
	uint32_t ev;
};

/* Context flags. */
#define CTA__CUDA_F_INSTR   0x1u /* write records (the template flag also gates start/end) */
#define CTA__CUDA_F_CLC_HW  0x2u /* cancels go to the hardware (sm_100 code only) */
#define CTA__CUDA_F_CLC_EMU 0x4u /* cancels are emulated; blocks claim their index at start */
/* Each warp of a block of at most 8 warps notes its %warpid before the end
 * barrier, and the block's end slot carries them: 6 bits a warp, warp w at
 * bit 6w, the low 24 bits in bits 8-31 of `sm`, the high 24 in bits 8-31 of
 * `ev` (CTASIM_CUDA_WARPS=1; launches with per-block slots only, and not
 * with CTA__CUDA_V_NO_END_SYNC, which leaves out that barrier). */
#define CTA__CUDA_F_WARPS 0x8u

/* Instrumentation variants, for measuring where its cost goes (set with
 * CTASIM_CUDA_INSTR_VARIANT; 0 in normal runs). */
#define CTA__CUDA_V_NO_START    0x100u  /* no start record */
#define CTA__CUDA_V_NO_END      0x200u  /* no end record */
#define CTA__CUDA_V_NO_END_SYNC 0x400u  /* end: no barrier, thread 0's own end */
#define CTA__CUDA_V_END_EARLY   0x800u  /* end: read the timer before the barrier */
#define CTA__CUDA_V_START_EARLY 0x1000u /* start: store before the entry barrier */

/* Device-side error bits (ctx->errors), turned into messages by the host. */
#define CTA__CUDA_ERR_CLC_OFF 0x1u /* a cancel was issued while CLC was off for the launch */
#define CTA__CUDA_ERR_CLC_HW  0x2u /* hardware CLC requested from code built without it */

/* Per-launch context in device memory. The host fills the first part and
 * zeroes the counters; the kernel's blocks update the counters. */
struct cta__cuda_ctx {
	/* Physical blocks below `fixed` write their start and end into their
	 * own pair of `slots` (no atomics); everything else (cancels, steals,
	 * blocks beyond `fixed`) takes one of the `cap` records of `recs`
	 * through the nrec counter. */
	struct cta__cuda_rec *recs;
	unsigned long long fixed;
	unsigned long long cap;
	struct cta__cuda_slot *slots; /* 2 * fixed start/end slots */
	unsigned int *claims;         /* emulation: 2 bits per unit (started, stolen) */
	unsigned long long units;     /* emulation: clusters (or blocks) in the grid */
	unsigned cdim[3];             /* cluster dims (1,1,1 without clusters) */
	unsigned ucount[3];           /* units per grid dimension */
	unsigned flags;
	unsigned pad_;
	/* Counters, zero at launch. */
	unsigned long long nrec;    /* counted records written or attempted (> cap: overflow) */
	unsigned long long cursor;  /* emulation: next unit a cancel probes */
	unsigned long long hi;      /* emulation: 1 + highest unit that started on its own */
	unsigned long long skipped; /* emulation: physical blocks that found their index taken */
	unsigned int errors;
	unsigned int pad2_;
};

#ifdef __cplusplus
extern "C" {
#endif
/* How the backend reaches the kernels of one nvcc translation unit: through
 * the CUDA runtime that unit is linked with. A user's shared object
 * (ctasim run --backend cuda --load LIB.so) carries a runtime of its own, in
 * which its kernels are registered; launching them through ctasim's would
 * fail. Both runtimes share the device's primary context, so memory and
 * streams pass between them. cfg is a cudaLaunchConfig_t, fa a struct
 * cudaFuncAttributes; the results are cudaError_t values. */
struct cta__cuda_fn_ops {
	int (*launch)(int device, const void *cfg, const void *fn, void **args);
	int (*get_attributes)(int device, const void *fn, void *fa);
	int (*set_attribute)(int device, const void *fn, int attr, int value);
};
/* Kernel registry of the CUDA backend (device/cuda_exec.c). fn_instr and
 * fn_plain are the host handles of the instrumented and uninstrumented
 * builds of one body. Returns a dummy value so it can run as a static
 * initializer. Weak: a shared object of user kernels built with nvcc also
 * loads into a ctasim without the CUDA backend (it then runs on the
 * simulator only). */
#if defined(__GNUC__)
__attribute__((weak))
#endif
int cta__cuda_register(const char *name, const void *fn_instr, const void *fn_plain,
                       size_t args_size, const char *file, int line,
                       const struct cta__cuda_fn_ops *ops);
#ifdef __cplusplus
}
#endif

#endif
