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

#ifdef __cplusplus
}
#endif
#endif
