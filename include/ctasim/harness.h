/* Kernel harnesses: how a kernel of kernels/ (or a user's own) makes its
 * inputs from parameters, picks its default launch, and checks its outputs,
 * independently of the backend (simulator or GPU) that runs it. Also the
 * runner the CLI uses to execute a harness on a backend. */
#ifndef CTASIM_HARNESS_H
#define CTASIM_HARNESS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "ctasim/device.h"
#include "ctasim/kernel.h"
#include "ctasim/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

struct cta_harness;

/* A parameter a harness accepts (--arg NAME=VALUE). */
struct cta_param_desc {
	const char *name;
	const char *def; /* default value, as text */
	const char *help;
};

/* Flags of a harness. */
#define CTA_KI_CLC       0x1u /* uses cluster launch control */
#define CTA_KI_EXPECT_UB 0x2u /* expected to fail: demonstrates a UB rule */
#define CTA_KI_TIMING    0x4u /* timing-only kernel: no results to verify */
#define CTA_KI_CLUSTER   0x8u /* launches with clusters */

struct cta_kernel_info {
	const char *name;
	const char *summary;
	unsigned flags;
	const char *expect_ub;               /* CTA_KI_EXPECT_UB: the rule it demonstrates */
	const struct cta_param_desc *params; /* terminated by {NULL, NULL, NULL} */
	/* Reads parameters, allocates buffers, fills inputs, and calls
	 * cta_harness_launch once per kernel launch. Returns 0 or an error
	 * from cta_harness_fail. */
	int (*setup)(struct cta_harness *h);
	/* Checks outputs after the run; 0 when right, else cta_harness_fail. */
	int (*verify)(struct cta_harness *h);
};

/* Registers a harness at load time (from a kernel's .c file, or from a
 * user's shared object loaded with `ctasim run --load LIB.so`). */
CTA_EXPORT void cta_harness_register(const struct cta_kernel_info *ki);
#define CTA_HARNESS(info)                                                                          \
	CTA__CONSTRUCTOR(info##__hreg)                                                             \
	{                                                                                          \
		cta_harness_register(&info);                                                       \
	}

/* Registered harnesses, in name order. */
CTA_EXPORT size_t cta_harness_count(void);
CTA_EXPORT const struct cta_kernel_info *cta_harness_at(size_t i);
CTA_EXPORT const struct cta_kernel_info *cta_harness_find(const char *name);

/* ---- for harness authors ---------------------------------------------- */

/* Parameter values (the --arg value, else the default). A value that does
 * not parse fails the run with a message naming the parameter. */
CTA_EXPORT int64_t cta_harness_int(struct cta_harness *h, const char *name);
CTA_EXPORT double cta_harness_double(struct cta_harness *h, const char *name);
/* The text of a parameter (the --arg value, else the default). */
CTA_EXPORT const char *cta_harness_str(struct cta_harness *h, const char *name);
CTA_EXPORT const struct cta_device_model *cta_harness_device(struct cta_harness *h);
CTA_EXPORT uint64_t cta_harness_seed(struct cta_harness *h);

/* Host buffer of `bytes`, zeroed, owned by the harness. Its contents are
 * copied to the device before the first launch and back after the last. */
CTA_EXPORT void *cta_harness_alloc(struct cta_harness *h, size_t bytes);
/* Frees buffer `host` before the launches run, as cudaFree in host code
 * would (a kernel that still uses it then reads freed memory). Under
 * --sanitize the memory stays allocated, marked freed, until the harness
 * is freed, so memcheck reports such an access. */
CTA_EXPORT void cta_harness_release(struct cta_harness *h, void *host);
/* The sanitizer tool this run uses (CTA_SANITIZE_NONE without one). */
CTA_EXPORT cta_sanitize_tool cta_harness_sanitizer(const struct cta_harness *h);
/* The pointer a kernel argument must hold for host buffer `host`, or for a
 * pointer into one (the same pointer in the simulator, the device copy on a
 * GPU, at the same offset). */
CTA_EXPORT void *cta_harness_dev(struct cta_harness *h, void *host);

/* Launch shape. grid/block/cluster {x,y,z}; zeros in cluster mean none. */
struct cta_launch_cfg {
	unsigned grid[3], block[3], cluster[3];
	size_t smem_static, smem_dynamic;
	unsigned regs_per_thread;
	int stream_priority; /* 0: default stream */
	uint64_t release_ns;
	int cooperative;    /* cudaLaunchCooperativeKernel: the grid must be co-resident */
	unsigned issue_ops; /* cta_launch's: SASS instructions a warp issues per cta_spin_ns call */
	unsigned stream_mem; /* cta_launch's: each call comes with a global store */
};
/* Records a launch. The CLI's --grid/--block override the first launch's
 * shape. args is copied. */
CTA_EXPORT int cta_harness_launch(struct cta_harness *h, const struct cta_kernel_def *k,
                                  const struct cta_launch_cfg *cfg, const void *args,
                                  size_t args_size);
/* The block shape the first launch gets: the CLI's --block when given,
 * else dflt. A setup whose grid covers its elements one thread each sizes
 * the grid from it, as CUDA host code computes ceil(n / threads), so that
 * --block alone keeps every element covered. */
CTA_EXPORT void cta_harness_block(const struct cta_harness *h, const unsigned dflt[3],
                                  unsigned out[3]);
/* The shape actually launched (after overrides), for verify. */
CTA_EXPORT const struct cta_launch_cfg *cta_harness_launched(struct cta_harness *h, unsigned i);

/* Fails setup or verify with a message; returns CTA_EVERIFY (or `code`). */
CTA_EXPORT int cta_harness_fail(struct cta_harness *h, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
CTA_EXPORT int cta_harness_error(struct cta_harness *h, int code, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* Fails setup because parameter `name` has a bad value; the message as for
 * cta_harness_error. Scenario files use the name to point at the line of
 * that argument. */
CTA_EXPORT int cta_harness_param_error(struct cta_harness *h, const char *name, int code,
                                       const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* ---- for the CLI: running a harness ------------------------------------ */

typedef enum cta_backend {
	CTA_BACKEND_SIM = 0,
	CTA_BACKEND_CUDA = 1,
} cta_backend;

typedef enum cta_clc_mode {
	CTA_CLC_AUTO = 0,     /* hardware where the GPU has it, else emulation */
	CTA_CLC_HARDWARE = 1, /* hardware or a clear error */
	CTA_CLC_EMULATE = 2,
} cta_clc_mode;

#define CTA_HARNESS_OPTS_VERSION 17
struct cta_harness_opts {
	unsigned version;
	cta_backend backend;
	struct cta_sim_opts sim; /* device model, seed, trace path, checks */
	const char *const *args; /* "NAME=VALUE" strings */
	size_t nargs;
	int grid_set, block_set;
	unsigned grid[3], block[3];
	cta_clc_mode clc;
	int cuda_device;         /* CUDA device ordinal */
	int cuda_uninstrumented; /* CUDA: no per-block timestamps (overhead baseline) */
	/* Nothing runs on the SMs before a launch: the simulator's sweep starts
	 * where an idle GPU starts it (the device's sweep_prior_unit taken as 0),
	 * and the CUDA backend counts its records instead of clearing per-block
	 * slots, a clear the GPU runs on its SMs (docs/FIDELITY.md, placement
	 * rule 5). 0: every launch follows that clear, as the presets model. */
	int idle_before;
};

typedef enum cta_verdict {
	CTA_VERDICT_PASS = 0,
	CTA_VERDICT_FAIL = 1,    /* wrong result */
	CTA_VERDICT_SKIPPED = 2, /* timing-only run, nothing to check */
} cta_verdict;

CTA_EXPORT int cta_harness_new(struct cta_harness **out, const struct cta_kernel_info *ki,
                               const struct cta_harness_opts *opts);
/* Runs setup, the launches on the chosen backend, and verify. Returns 0
 * when everything ran (see cta_harness_verdict for the result check), or a
 * negative code with the message in cta_harness_errmsg. Rule violations
 * (UB, coverage) return CTA_EUB / CTA_ECOVERAGE after a full run. */
CTA_EXPORT int cta_harness_run(struct cta_harness *h);
CTA_EXPORT cta_verdict cta_harness_verdict(const struct cta_harness *h);

/* The steps of cta_harness_run, for runners that put the launches of
 * several harnesses into one simulator (scenarios): setup records the
 * launches without running them; verify checks the outputs afterwards and
 * sets the verdict (SKIPPED when the run was timing-only). */
CTA_EXPORT int cta_harness_setup(struct cta_harness *h);
CTA_EXPORT unsigned cta_harness_launch_count(const struct cta_harness *h);
/* The i-th recorded launch as a simulator launch (kernel, shape, args).
 * Stream and release time are left for the caller to set. */
CTA_EXPORT int cta_harness_sim_launch(const struct cta_harness *h, unsigned i,
                                      struct cta_launch *out);
CTA_EXPORT int cta_harness_verify(struct cta_harness *h);
CTA_EXPORT const char *cta_harness_errmsg(const struct cta_harness *h);
/* The parameter whose value failed setup (cta_harness_param_error, or a
 * value cta_harness_int/double could not parse), or NULL. */
CTA_EXPORT const char *cta_harness_bad_param(const struct cta_harness *h);
/* After a run on the CUDA backend: the GPU it used, with its compute
 * capability, the CLC mode and the timer tick (as the trace header records
 * them); NULL before such a run or on the simulator. */
CTA_EXPORT const char *cta_harness_gpu(const struct cta_harness *h);
/* The simulator of a sim-backend run (NULL for other backends). */
CTA_EXPORT cta_sim *cta_harness_sim(struct cta_harness *h);
CTA_EXPORT void cta_harness_free(struct cta_harness *h);

#ifdef __cplusplus
}
#endif
#endif
