/* Traces: the one event format both backends write (specified in
 * traces/FORMAT.md), the atomic writer, and the reader that reports
 * malformed input with its line number. */
#ifndef CTASIM_TRACE_H
#define CTASIM_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "ctasim/errors.h"
#include "ctasim/export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CTA_TRACE_VERSION 1

/* Event kinds. The text name of each is the second column of a record. */
#define CTA_TRACE_EVENT_MAP(X)                                                                     \
	X(LAUNCH, "launch")           /* the host enqueued a kernel (launch call) */               \
	X(DISPATCH, "dispatch")       /* the scheduler chose an SM for a block */                  \
	X(START, "start")             /* first instruction of a block */                           \
	X(END, "end")                 /* last thread of a block exited */                          \
	X(CANCEL, "cancel")           /* a try_cancel request was issued */                        \
	X(CANCEL_DONE, "cancel_done") /* its result reached shared memory */                       \
	X(STEAL, "steal")             /* a block began processing a stolen index */                \
	X(UB, "ub")                   /* an undefined-behaviour report */                          \
	X(WARN, "warn")               /* a warning (not UB) */                                     \
	X(KERNEL_END, "kernel_end")   /* the last block of a kernel retired */

typedef enum cta_trace_event {
#define CTA__TEV_ENUM(name, text) CTA_TEV_##name,
	CTA_TRACE_EVENT_MAP(CTA__TEV_ENUM)
#undef CTA__TEV_ENUM
	    CTA_TEV__COUNT
} cta_trace_event;

/* Outcome/reason of a cancel (CANCEL_DONE records). */
typedef enum cta_cancel_outcome {
	CTA_CANCEL_SUCCESS = 0,
	CTA_CANCEL_FAIL_EMPTY = 1,    /* nothing left pending */
	CTA_CANCEL_FAIL_PRIORITY = 2, /* a higher-priority kernel has blocks waiting */
	CTA_CANCEL_FAIL_INJECTED = 3, /* forced by --cancel-fail-rate/--cancel-fail-after */
} cta_cancel_outcome;

/* One record. Unused fields are CTA_TRACE_NONE and print as "-". */
#define CTA_TRACE_NONE UINT64_MAX
struct cta_trace_rec {
	uint64_t t_ns; /* virtual time (simulator) or aligned GPU time (hardware) */
	cta_trace_event ev;
	uint32_t kernel; /* kernel instance within the run, 0-based */
	uint64_t block;  /* logical block index, linear, x fastest */
	uint64_t phys;   /* physical block that ran it (differs after a steal) */
	uint64_t sm;
	uint64_t arg;     /* CANCEL_DONE: stolen block or NONE; UB: thread; LAUNCH: stream */
	int32_t code;     /* CANCEL_DONE: cta_cancel_outcome; LAUNCH: priority */
	const char *text; /* UB/WARN: rule name and details; may be NULL */
};

/* Per-kernel description in the header. */
struct cta_trace_kernel {
	char name[64];
	unsigned grid[3], block[3], cluster[3];
	uint64_t smem_bytes;
	int stream, priority;
	uint64_t release_ns;
};

#define CTA_TRACE_MAX_KERNELS 64
/* Input limits of the reader: a trace (after decompression) of at most
 * 2 GiB, lines of at most 64 KiB. Larger files are refused with
 * CTA_ERANGE; a file whose first bytes are not the magic line is refused
 * at once (CTA_EPARSE), whatever its size. The reader streams the text (a
 * 1 MiB window, decompressed on the way) and keeps only the records:
 * sizeof(struct cta_trace_rec) = 64 bytes each, about 1.6 times the
 * uncompressed text, so at most about 3.4 GB for a 2 GiB trace. */
#define CTA_TRACE_MAX_BYTES ((size_t)2 << 30)
#define CTA_TRACE_MAX_LINE  65536
struct cta_trace_header {
	int version;
	char backend[16]; /* "sim" or "cuda" */
	char device[64];
	char ctasim_version[16];
	uint64_t seed;
	double tick_ns;    /* timer resolution: 1 in the simulator, measured on hardware */
	char clc[16];      /* "model", "hardware", "emulated" or "none" */
	int deterministic; /* 1 when the trace is reproducible byte for byte */
	unsigned kernel_count;
	struct cta_trace_kernel kernels[CTA_TRACE_MAX_KERNELS];
};

/* Writer: records go to PATH.tmp and the file is renamed to PATH only by a
 * successful cta_trace_writer_close(); a run that stops early leaves no file
 * at PATH that looks whole. */
typedef struct cta_trace_writer cta_trace_writer;
CTA_EXPORT int cta_trace_writer_open(cta_trace_writer **out, const char *path,
                                     const struct cta_trace_header *h);
CTA_EXPORT int cta_trace_writer_add(cta_trace_writer *w, const struct cta_trace_rec *r);
/* Changes the header's #deterministic value (fixed in place at close): a
 * run can learn only while running that it was not reproducible. */
CTA_EXPORT void cta_trace_writer_set_deterministic(cta_trace_writer *w, int deterministic);
/* Finishes the file. complete=0 keeps what was written, marked incomplete. */
CTA_EXPORT int cta_trace_writer_close(cta_trace_writer *w, int complete);
CTA_EXPORT const char *cta_trace_writer_errmsg(const cta_trace_writer *w);

/* An in-memory trace as the reader returns it. */
struct cta_trace {
	struct cta_trace_header header;
	struct cta_trace_rec *recs;
	size_t count;
	int complete;  /* the end marker was present and matched */
	char *strings; /* storage behind recs[i].text */
};

/* Reads a whole trace. On malformed input returns CTA_EPARSE (or
 * CTA_EVERSION) and writes "FILE:LINE: what is wrong" into errbuf. */
CTA_EXPORT int cta_trace_read(struct cta_trace *out, const char *path, char *errbuf, size_t errlen);
/* The same, calling progress(ctx, done, total) now and then while parsing
 * (bytes of the decompressed text), for a progress display of big traces. */
typedef void (*cta_trace_progress_fn)(void *ctx, uint64_t done, uint64_t total);
CTA_EXPORT int cta_trace_read_progress(struct cta_trace *out, const char *path, char *errbuf,
                                       size_t errlen, cta_trace_progress_fn progress, void *ctx);
CTA_EXPORT void cta_trace_free(struct cta_trace *t);
/* A trace read for drawing or export only, in less memory: the dispatch,
 * start, end and steal records, nearly all of a big trace, become the
 * block layout as they stream in and are not kept. per_kernel_slots: 1 for
 * cta_trace_lean_export_perfetto with CTA_PERFETTO_GROUP_KERNEL, else 0.
 * cta_trace_lean_trace gives its header and the records it kept (launch,
 * cancel, cancel_done, ub, warn, kernel_end); other tools (diff,
 * calibrate) need cta_trace_read. */
typedef struct cta_trace_lean cta_trace_lean;
CTA_EXPORT int cta_trace_read_lean(cta_trace_lean **out, const char *path, int per_kernel_slots,
                                   char *errbuf, size_t errlen, cta_trace_progress_fn progress,
                                   void *ctx);
CTA_EXPORT const struct cta_trace *cta_trace_lean_trace(const cta_trace_lean *t);
/* Accepts NULL. */
CTA_EXPORT void cta_trace_lean_free(cta_trace_lean *t);
/* Reads a trace as a stream, for a pass over its records in bounded
 * memory: checks it as cta_trace_read does, calls fn(ctx, header, record)
 * for each record in file order (the record and its text valid during the
 * call only), and keeps none. out receives the header, the record count
 * and the complete flag; out->recs stays NULL (nothing to free). A
 * non-zero return of fn stops the reading and is returned; a malformed
 * line found after some records were passed on still fails the call. */
typedef int (*cta_trace_record_fn)(void *ctx, const struct cta_trace_header *h,
                                   const struct cta_trace_rec *r);
CTA_EXPORT int cta_trace_stream(struct cta_trace *out, const char *path, cta_trace_record_fn fn,
                                void *ctx, char *errbuf, size_t errlen);

/* The compression a file name asks for, as the trace writer applies it:
 * 1 gzip (".gz"), 2 zstd (".zst"), 0 none; CTA_EUNSUPPORTED when this build
 * lacks the library for it. The tools compress their other outputs
 * (export -o x.json.gz, view -o x.svg.gz) the same way. */
CTA_EXPORT int cta_trace_compression_of_name(const char *name);
/* Compresses everything in in_fd (from its start) into out_fd as name
 * asks (see above). Returns 0, or a CTA_E* code with the reason in msg. */
CTA_EXPORT int cta_trace_compress_fd(const char *name, int in_fd, int out_fd, char *msg,
                                     size_t mlen);

CTA_EXPORT const char *cta_trace_event_name(cta_trace_event ev);
CTA_EXPORT const char *cta_cancel_outcome_name(int outcome);

#ifdef __cplusplus
}
#endif
#endif
