/* Scenario files: a JSON description of several kernels sharing one device
 * through streams with priorities and release times (docs/SCENARIOS.md).
 * Loading checks everything the file alone can tell; the device and the
 * harness registry are checked by two further calls. */
#ifndef CTASIM_SCENARIO_H
#define CTASIM_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#include "ctasim/device.h"
#include "ctasim/errors.h"
#include "ctasim/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The format version this build reads (the file's optional "version"). */
#define CTA_SCENARIO_VERSION 1

#define CTA_SCENARIO_NAME_MAX    32   /* stream name, with its NUL */
#define CTA_SCENARIO_HARNESS_MAX 64   /* harness name, with its NUL */
#define CTA_SCENARIO_LABEL_MAX   64   /* kernel label, with its NUL */
#define CTA_SCENARIO_DEVICE_MAX  1024 /* device name or model path, with its NUL */
#define CTA_SCENARIO_MAX_STREAMS 256
#define CTA_SCENARIO_MAX_KERNELS 4096
/* Input files larger than this are refused before parsing. */
#define CTA_SCENARIO_MAX_BYTES ((size_t)4 << 20)

/* Kernel stream index of a kernel that names no stream: the simulator's
 * stream 0, at CUDA's default priority 0. */
#define CTA_SCENARIO_DEFAULT_STREAM 0xFFFFFFFFu

struct cta_scenario_stream {
	char name[CTA_SCENARIO_NAME_MAX];
	int priority;      /* lower number = higher priority; 0 when absent */
	int line;          /* of the stream's object */
	int priority_line; /* of its "priority" (the object's line when absent) */
};

struct cta_scenario_kernel {
	char harness[CTA_SCENARIO_HARNESS_MAX]; /* as `ctasim list` names it */
	/* Name in the trace: as written, else the harness name, else (when
	 * several kernels use one harness) "HARNESS#INDEX". Unique. */
	char label[CTA_SCENARIO_LABEL_MAX];
	unsigned stream;     /* index into streams, or CTA_SCENARIO_DEFAULT_STREAM */
	uint64_t release_ns; /* virtual time at which the host launches it */
	int grid_set, block_set;
	unsigned grid[3], block[3]; /* overrides of the harness's first launch */
	char **args;                /* "NAME=VALUE", for cta_harness_opts.args */
	size_t nargs;
	int *arg_lines;   /* line of each argument, for messages */
	int line;         /* of the kernel's object */
	int harness_line; /* of its "harness" */
	int block_line;   /* of its "block" (0 when absent) */
};

struct cta_scenario {
	char *path; /* the file, as given to cta_scenario_load; names it in messages */
	/* "device" as written ("" when absent: the caller's default), and the
	 * string to give cta_device_resolve: a path containing '/' is taken
	 * relative to the scenario file's folder, a bare name is unchanged. */
	char device[CTA_SCENARIO_DEVICE_MAX];
	char device_ref[CTA_SCENARIO_DEVICE_MAX];
	int device_line;
	uint64_t seed;
	int has_seed;
	unsigned sm_limit; /* 0: every SM of the device */
	int sm_limit_line;
	int timing_only; /* 1: run in timing-only mode (cta_sim_opts.timing_only) */
	unsigned nstreams;
	struct cta_scenario_stream *streams;
	unsigned nkernels;
	struct cta_scenario_kernel *kernels; /* in file order */
};

/* Reads and validates a scenario file into *out (which need not be
 * initialised). On error returns a negative code, leaves *out empty (safe
 * to free), and writes "FILE:LINE: field 'PATH': what is wrong" into err
 * (syntax errors: "FILE:LINE:COL: what is wrong"). Checked here: JSON
 * syntax, unknown fields (with the likely intended name), types, required
 * fields, value ranges, duplicate stream names and labels, references to
 * undeclared streams, negative release times, and release times that go
 * backwards within a stream. Returns CTA_EVERSION for a newer format. */
CTA_EXPORT int cta_scenario_load(struct cta_scenario *out, const char *path, char *err,
                                 size_t errlen);

/* The same from memory; name stands for the file in messages and relative
 * device paths. */
CTA_EXPORT int cta_scenario_parse(struct cta_scenario *out, const char *text, size_t len,
                                  const char *name, char *err, size_t errlen);

/* Checks a loaded scenario against the device it will run on: stream
 * priorities within [priority_greatest, priority_least], sm_limit within
 * the SM count, block overrides within max_threads_per_block. Returns 0 or
 * CTA_ERANGE with a message naming the file, line and field. */
CTA_EXPORT int cta_scenario_check_device(const struct cta_scenario *s,
                                         const struct cta_device_model *m, char *err,
                                         size_t errlen);

/* Checks every kernel's harness name, and its argument names against the
 * harness's parameters, using lookup (normally cta_harness_find). Returns 0
 * or CTA_ENOTFOUND with a message naming the file, line and field. */
struct cta_kernel_info; /* ctasim/harness.h */
typedef const struct cta_kernel_info *(*cta_scenario_lookup_fn)(const char *name);
CTA_EXPORT int cta_scenario_check_harnesses(const struct cta_scenario *s,
                                            cta_scenario_lookup_fn lookup, char *err,
                                            size_t errlen);

/* Frees what a load allocated and empties *s; accepts NULL and an empty
 * or failed scenario. */
CTA_EXPORT void cta_scenario_free(struct cta_scenario *s);

/* ---- running a scenario ------------------------------------------------- */

/* A finished (or failed) scenario run: the harnesses, the simulator that
 * ran all their launches, and where each scenario kernel's launches are
 * among the simulator's kernels. */
typedef struct cta_scenario_run cta_scenario_run;
struct cta_harness_opts; /* ctasim/harness.h */
struct cta_harness;
struct cta_sim;

/* Runs a loaded scenario: resolves its device (device_ref, else
 * base->sim.device), checks it against the device and the harness
 * registry, creates one harness per kernel (its args and grid/block
 * overrides on top of base), runs every harness's setup, puts all their
 * launches into ONE simulator -- one stream per scenario stream, the
 * default stream as stream 0, each launch released at the kernel's
 * release_ns plus the launch's own release time -- runs it (one trace for
 * all kernels, base->sim.trace_path), and verifies every harness.
 *
 * base supplies the backend and the simulator options; the scenario's
 * seed, sm_limit and timing_only replace base's when the file sets them.
 * base->args, nargs, grid_set and block_set are ignored.
 *
 * Returns 0 when everything ran (see cta_harness_verdict per kernel);
 * CTA_EUB, CTA_ECOVERAGE or CTA_EDEADLOCK after a run that broke a rule or
 * hung; other negative codes for input errors (*out is then NULL unless
 * the failure came from a harness or the simulator). The message is in err
 * ("FILE:LINE: field ..." for scenario errors). *out must be freed with
 * cta_scenario_exec_free. */
CTA_EXPORT int cta_scenario_exec(cta_scenario_run **out, const struct cta_scenario *sc,
                                 const struct cta_harness_opts *base, char *err, size_t errlen);
/* The same from a file: cta_scenario_load, then cta_scenario_exec. */
CTA_EXPORT int cta_scenario_exec_file(cta_scenario_run **out, const char *path,
                                      const struct cta_harness_opts *base, char *err,
                                      size_t errlen);
/* Accepts NULL. */
CTA_EXPORT void cta_scenario_exec_free(cta_scenario_run *x);
/* The device model the scenario ran on. */
CTA_EXPORT const struct cta_device_model *cta_scenario_exec_device(const cta_scenario_run *x);
/* The simulator (NULL on the CUDA backend or before the run). */
CTA_EXPORT struct cta_sim *cta_scenario_exec_sim(const cta_scenario_run *x);
/* The scenario (owned by x when it came from cta_scenario_exec_file). */
CTA_EXPORT const struct cta_scenario *cta_scenario_exec_scenario(const cta_scenario_run *x);
/* Scenario kernel i: its harness, and the range [*first, *first + *count)
 * of simulator kernel ids holding its launches. */
CTA_EXPORT struct cta_harness *cta_scenario_exec_harness(const cta_scenario_run *x, unsigned i);
CTA_EXPORT int cta_scenario_exec_kernels(const cta_scenario_run *x, unsigned i, unsigned *first,
                                         unsigned *count);

#ifdef __cplusplus
}
#endif
#endif
