/* The simulator's host API: create a simulator for a device model, launch
 * kernels on streams, run to completion, and read statistics, UB reports
 * and the coverage verdict. */
#ifndef CTASIM_SIM_H
#define CTASIM_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "ctasim/device.h"
#include "ctasim/errors.h"
#include "ctasim/export.h"
#include "ctasim/kernel.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cta_sim cta_sim;

typedef enum cta_ub_mode {
	CTA_UB_REPORT = 0, /* report every UB, run to the end */
	CTA_UB_ABORT = 1,  /* stop the run at the first UB */
	CTA_UB_OFF = 2,    /* no checking, no bookkeeping for it (measures the checker's cost);
	                    * a barrier deadlock is still reported */
} cta_ub_mode;

/* The sanitizer for kernel bodies (docs/SANITIZE.md), one tool a run as
 * compute-sanitizer has: the kernels built into ctasim run their second,
 * instrumented build, one thread at a time on one host thread. */
typedef enum cta_sanitize_tool {
	CTA_SANITIZE_NONE = 0,
	CTA_SANITIZE_MEMCHECK = 1,  /* out of bounds, use after free */
	CTA_SANITIZE_RACECHECK = 2, /* shared-memory races between two barriers */
	CTA_SANITIZE_INITCHECK = 3, /* reads of shared memory the block never wrote */
} cta_sanitize_tool;
/* How spinning blocks share the device (docs/FORWARD_PROGRESS.md). */
typedef enum cta_spin_sched {
	CTA_SPIN_FAIR = 0,        /* every spinning block polls again in virtual-time order */
	CTA_SPIN_ADVERSARIAL = 1, /* one spinning block, drawn from the seed, keeps running
	                           * while the others are starved until it stops spinning */
} cta_spin_sched;

#define CTA_SIM_OPTS_VERSION 16
/* The most host threads a simulator takes (cta_sim_opts.threads). */
#define CTA_SIM_MAX_THREADS 1024

struct cta_sim_opts {
	unsigned version;
	struct cta_device_model device;
	uint64_t seed;
	const char *trace_path; /* NULL: no trace */
	cta_ub_mode ub_mode;
	double cancel_fail_rate;   /* probability a cancel that could succeed fails (injected) */
	int64_t cancel_fail_after; /* -1: off; else every cancel after the first N fails */
	unsigned threads;          /* host threads executing bodies; 0: all cores; at most
	                            * CTA_SIM_MAX_THREADS */
	int timing_only;           /* run thread 0 of each block only: timing, no results */
	uint64_t jitter_ns;        /* uniform +-jitter on every latency, drawn from seed */
	int random_tiebreak;       /* break placement ties by seed instead of by SM id */
	unsigned sm_limit;         /* 0: all SMs of the model; else use the first N */
	uint64_t max_events;       /* 0: no limit; else stop as hung after this many */
	/* CTA_SANITIZE_NONE: the plain kernels; else the tool (docs/SANITIZE.md) */
	cta_sanitize_tool sanitize;
	/* Virtual ns during which nothing but spinning threads (or a block
	 * crossing barriers with no work between them) may run before the run
	 * is stopped with a watchdog or forward_progress report; 0: the
	 * default, CTA_WATCHDOG_DEFAULT_NS. */
	uint64_t watchdog_ns;
	/* Which spinning block runs next (docs/FORWARD_PROGRESS.md). */
	cta_spin_sched spin_sched;
	/* NULL, or called from cta_sim_run's thread every
	 * CTA_SIM_PROGRESS_EVENTS events or so with the blocks retired and
	 * launched so far (all kernels), for a progress display. It must not
	 * call back into the simulator. */
	void (*progress)(void *ctx, uint64_t blocks_done, uint64_t blocks_total);
	void *progress_ctx;
};
#define CTA_SIM_PROGRESS_EVENTS 16384u
#define CTA_WATCHDOG_DEFAULT_NS 1000000u
#define CTA_SIM_OPTS_INIT                                                                          \
	{                                                                                          \
		.version = CTA_SIM_OPTS_VERSION, .seed = 1, .cancel_fail_after = -1                \
	}

/* One kernel launch. Dimensions are {x, y, z}; zero entries mean 1 for
 * cluster. smem_static is what the kernel declares with CTA_SHARED (the
 * simulator checks the body stays within it). */
struct cta_launch {
	const struct cta_kernel_def *kernel;
	unsigned grid[3], block[3], cluster[3];
	size_t smem_static, smem_dynamic;
	unsigned regs_per_thread; /* 0: 32 */
	int stream;               /* from cta_sim_stream_new; 0 is the default stream */
	uint64_t release_ns;      /* virtual time at which the host enqueues it */
	const void *args;         /* copied */
	const char *label;        /* name in the trace; NULL: the kernel's name */
	/* cudaLaunchCooperativeKernel: the whole grid must be co-resident
	 * (else cta_sim_launch fails with CTA_ERESOURCES); cta_grid_sync is
	 * allowed. */
	int cooperative;
	/* Instructions each warp issues beside every cta_spin_ns call: the
	 * body's arithmetic between its calls that the simulator does not
	 * see, as the GPU's SASS counts it (0: none declared). The duration
	 * model charges them by the warps that share a scheduler
	 * (spin_issue_ps, device.h). */
	unsigned issue_ops;
	/* Whether each cta_spin_ns call of the body comes with a store to
	 * global memory (a streaming body, such as the vector-scalar
	 * kernels' v[i] *= alpha): in an emulated steal loop the release
	 * fence after a success waits for it (clc_drain_ns, device.h). */
	unsigned stream_mem;
};

/* UB reports. */
struct cta_ub_report {
	const char *rule; /* stable name, e.g. "request_after_observed_failure" */
	int warning;      /* 1 for warnings (not UB) */
	const char *file;
	int line;
	unsigned kernel;
	uint64_t block;  /* logical block the thread was processing */
	uint64_t phys;   /* physical block */
	unsigned thread; /* linear thread rank in block */
	uint64_t t_ns;
	char cause[512]; /* the earlier event that made it UB, with its location */
	const char *kernel_name;
	unsigned block_idx[3];  /* blockIdx of `block` */
	unsigned thread_idx[3]; /* threadIdx of `thread` */
};

/* Per-kernel results. */
struct cta_kernel_stats {
	const char *label;
	uint64_t blocks;                  /* logical blocks in the grid */
	uint64_t launched;                /* blocks that started on their own */
	uint64_t stolen;                  /* blocks handed out by a successful cancel */
	uint64_t cancels, cancel_fail[4]; /* by cta_cancel_outcome */
	uint64_t launch_ns, first_start_ns, last_end_ns;
	unsigned sms_used;
	uint64_t per_sm_min, per_sm_median, per_sm_max; /* blocks started per SM */
	uint64_t busy_ns;                               /* sum over blocks of (end - start) */
	int coverage_checked; /* 1 when the kernel used CLC and coverage was checked */
	int coverage_ok;
	uint64_t lost, duplicated; /* counts; lists in cta_sim_coverage_list */
};

CTA_EXPORT int cta_sim_new(cta_sim **out, const struct cta_sim_opts *opts);
/* Frees everything; accepts NULL. */
CTA_EXPORT void cta_sim_free(cta_sim *s);

/* Creates a stream with a priority in [device.priority_greatest,
 * device.priority_least] (lower number = higher priority). */
CTA_EXPORT int cta_sim_stream_new(cta_sim *s, int *out_stream, int priority);

/* Validates and enqueues a launch. Input errors (zero or over-limit
 * dimensions, a block that fits on no SM) return a negative code and leave
 * the message in cta_sim_errmsg. *out_kernel receives the kernel id. */
CTA_EXPORT int cta_sim_launch(cta_sim *s, const struct cta_launch *l, unsigned *out_kernel);

/* Runs every launch to completion. Returns 0; CTA_EUB / CTA_ECOVERAGE when
 * the run broke a rule (with ub_mode REPORT it still ran to the end);
 * CTA_EDEADLOCK when it hung; other codes for input or I/O errors. */
CTA_EXPORT int cta_sim_run(cta_sim *s);

CTA_EXPORT const char *cta_sim_errmsg(const cta_sim *s);
CTA_EXPORT unsigned cta_sim_kernel_count(const cta_sim *s);
CTA_EXPORT const struct cta_kernel_stats *cta_sim_kernel_stats(const cta_sim *s, unsigned kernel);
CTA_EXPORT uint64_t cta_sim_makespan_ns(const cta_sim *s);
/* Reports kept in full (the first 4096 in the engine's commit order), and
 * report i of them (NULL past them). The run keeps them compactly and
 * spells a report out when it is first asked for; the pointer stays valid
 * until cta_sim_free. Not to be called from two threads at once. */
CTA_EXPORT size_t cta_sim_ub_count(const cta_sim *s);
CTA_EXPORT const struct cta_ub_report *cta_sim_ub_report(const cta_sim *s, size_t i);
/* Reports of rule `rule` (a name of cta_ub_rule_names or
 * cta_sanitize_rule_names; NULL: every rule) the run made, kept or not. */
CTA_EXPORT uint64_t cta_sim_ub_total(const cta_sim *s, const char *rule);
/* Lost (which=0) or duplicated (which=1) logical blocks of a kernel, up to
 * max entries; returns how many there are in all. */
CTA_EXPORT size_t cta_sim_coverage_list(const cta_sim *s, unsigned kernel, int which, uint64_t *out,
                                        size_t max);
/* Number of thread-barrier crossings executed (for the benchmark). */
CTA_EXPORT uint64_t cta_sim_barrier_crossings(const cta_sim *s);
/* 1 when the run is reproducible byte for byte for any --threads. */
CTA_EXPORT int cta_sim_deterministic(const cta_sim *s);
/* Events the engine processed (for benchmarks and tests). */
CTA_EXPORT uint64_t cta_sim_event_count(const cta_sim *s);
/* Blocks whose bodies ran while the engine skipped periods of a schedule
 * that repeats (cta_sim_set_period_skip); 0 when none did. */
CTA_EXPORT uint64_t cta_sim_blocks_skipped(const cta_sim *s);
/* SMs the run uses (the model's, or fewer with sm_limit). */
CTA_EXPORT unsigned cta_sim_sm_count(const cta_sim *s);

/* For a fatal-signal handler (the library installs none): describes the
 * kernel, block and thread whose body was running on the calling thread
 * into buf (a line for stderr), and closes the running simulator's trace
 * as incomplete. Only for the crash path: nothing may run afterwards. */
CTA_EXPORT int cta_sim_crash_describe(char *buf, size_t len, int sig, const void *addr);
CTA_EXPORT void cta_sim_crash_finish_trace(void);
/* The same for a body that leaves the process another way: `what` says
 * how ("called exit(0)", "raised SIGABRT (abort)"); the trace's incomplete
 * marker says `why` ("crashed", "interrupted by SIGINT"). */
CTA_EXPORT int cta_sim_crash_describe_what(char *buf, size_t len, const char *what);
CTA_EXPORT int cta_sim_crash_finish_trace_as(const char *why); /* 1: a trace was closed */
/* 1 when the calling thread is running a kernel body of a simulator
 * inside cta_sim_run; 2 when a simulator runs but the calling thread runs
 * no body; 0 outside cta_sim_run. */
CTA_EXPORT int cta_sim_crash_in_body(void);
/* "SIGSEGV (invalid memory access)", ... for the signals above. */
CTA_EXPORT const char *cta_sim_signal_name(int sig);
/* 0 when the crash that cta_sim_crash_describe describes happened in the
 * vector form of a thread loop (blocks with blockIdx.x < 2^20, unless exact
 * threads are on), where the description names the run of threads but not
 * the thread: the same run with exact threads on names it. 1 otherwise. */
CTA_EXPORT int cta_sim_crash_thread_known(void);
/* Process-wide, for simulators created afterwards: 1 runs every thread
 * loop in its exact form, one thread at a time with its index stored
 * before it starts (slower for barrier-free bodies, which otherwise run as
 * vector code where the compiler can make it). Results and traces are the
 * same either way. */
CTA_EXPORT void cta_sim_set_exact_threads(int on);
/* Process-wide, for launches made afterwards: 0 runs every kernel on the
 * thread loop and fibers, even where the kernel compiler (compiler/) made
 * a region form of its body; 1 (the default) uses that form. Results,
 * traces and UB reports are the same either way. */
CTA_EXPORT void cta_sim_set_regions(int on);
/* Process-wide, for runs started afterwards: 0 simulates every block
 * through the engine; 1 (the default) lets a run whose schedule repeats
 * run the bodies of later periods without the engine and shift its state
 * past them (docs/PERFORMANCE.md, "The period skip"). Results, statistics
 * and every printed line are the same either way. */
CTA_EXPORT void cta_sim_set_period_skip(int on);
/* Whether kernel `name` runs as compiled region loops (1), was left on
 * fibers by the kernel compiler (0; *why, when why is not NULL, says why),
 * or is unknown to it (-1: a build without the kernel compiler, or a kernel
 * loaded with --load). */
CTA_EXPORT int cta_kernel_regions(const char *name, const char **why);

/* Kernel registry: every CTA_KERNEL registers itself here. */
CTA_EXPORT const struct cta_kernel_def *cta_kernel_find(const char *name);

/* All UB rule names (NULL-terminated), for docs and the CLI. */
CTA_EXPORT const char *const *cta_ub_rule_names(void);
/* The sanitizer's report names (NULL-terminated): memcheck_oob, ... */
CTA_EXPORT const char *const *cta_sanitize_rule_names(void);
/* The tool's name ("memcheck", ...), and the tool of a name (-1: none). */
CTA_EXPORT const char *cta_sanitize_tool_name(cta_sanitize_tool t);
CTA_EXPORT int cta_sanitize_tool_parse(const char *name);
/* 1 when kernel k has an instrumented build (every kernel of kernels/). */
CTA_EXPORT int cta_sanitize_available(const struct cta_kernel_def *k);

#ifdef __cplusplus
}
#endif
#endif
