/* Internals shared by the trace writer, the reader and the trace tools:
 * event-name lookup, the column line, and the checks on header strings that
 * both sides must agree on. */
#ifndef CTASIM_SIM_TRACE_INTERNAL_H
#define CTASIM_SIM_TRACE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ctasim/device.h"
#include "ctasim/trace.h"

#define CTA__TRACE_MAGIC   "#ctasim-trace"
#define CTA__TRACE_COLUMNS "t_ns,event,kernel,block,phys,sm,arg,code,text"
#define CTA__TRACE_NCOLS   9

/* Kernel column value that prints as '-'. */
#define CTA__TRACE_NO_KERNEL UINT32_MAX

/* Event named by s[0..n), or -1 when there is none. */
int cta__trace_event_parse(const char *s, size_t n);

/* 1 when v is one of the values FORMAT.md allows for the backend or clc key. */
int cta__trace_backend_ok(const char *v);
int cta__trace_clc_ok(const char *v);

/* Writes the shortest decimal form of d that reads back to d (at most 32
 * bytes with the NUL) and returns its length. */
size_t cta__trace_fmt_double(char *buf, size_t len, double d);

/* cta_trace_read() over a buffer instead of a file; name is used in
 * messages. The fuzz target uses it to skip the file system. */
int cta__trace_read_mem(struct cta_trace *out, const char *name, const char *data, size_t len,
                        char *errbuf, size_t errlen);

/* ---- Compressed files (trace_zio.c) -------------------------------- */

enum { CTA__ZIO_PLAIN = 0, CTA__ZIO_GZIP = 1, CTA__ZIO_ZSTD = 2 };

/* The compression a name asks for (".gz", ".zst", else plain). */
int cta__zio_kind_of_name(const char *path);
/* The compression data starts with (gzip or zstd magic bytes, else plain). */
int cta__zio_kind_of_data(const void *data, size_t len);
/* 1 when this build can read and write that kind. */
int cta__zio_available(int kind);
/* Reads path ("-": stdin) as a stream, decompressed when its magic bytes
 * say gzip or zstd: open (garbage refused from its first 16 bytes),
 * read decompressed text in chunks (*got 0 at the end; more than
 * CTA_TRACE_MAX_BYTES in all is CTA_ERANGE), close (accepts NULL).
 * position: compressed bytes consumed and the file's size (0: unknown),
 * for a progress display. On failure a CTA_E* code, and what went wrong
 * (without the path) in msg. */
struct cta__zin;
int cta__zin_open(struct cta__zin **out, const char *path, char *msg, size_t mlen);
int cta__zin_read(struct cta__zin *z, char *buf, size_t cap, size_t *got, char *msg, size_t mlen);
void cta__zin_position(const struct cta__zin *z, uint64_t *done, uint64_t *total);
void cta__zin_close(struct cta__zin *z);
/* Compresses everything in in_fd (from its start) into out_fd. */
int cta__zio_compress(int in_fd, int out_fd, int kind, char *msg, size_t mlen);

/* ---- Block layout shared by the exporters and tools ----------------- */

/* The time a physical block spent processing one stolen index. */
struct cta__steal_seg {
	uint64_t block; /* the stolen logical index */
	uint64_t t0, t1;
};

/* One physical block's residency on an SM, from its start to its end. */
struct cta__span {
	uint32_t kernel;
	uint32_t slot;  /* sub-row of the SM lane, so overlapping blocks never share one */
	uint64_t block; /* logical index it started on */
	uint64_t phys;
	uint64_t sm;
	uint64_t t0, t1;
	int open;           /* no end record: t1 is the end of the trace */
	size_t steal_first; /* its segments are steals[steal_first .. +steal_count) */
	size_t steal_count;
};

#define CTA__MAX_SM_ID 65535

struct cta__layout {
	struct cta__span *spans; /* sorted by SM, then start time */
	size_t nspans;
	struct cta__steal_seg *steals;
	size_t nsteals;
	uint64_t sm_count; /* highest SM id in any record + 1 */
	uint32_t *slots;   /* slots[sm]: sub-rows that SM needs (at least 1) */
	uint32_t max_slots;
	int per_kernel;        /* slots allocated per kernel (see cta__layout_build) */
	uint64_t t_min, t_max; /* over all records */
	/* Over all records, so that a lean trace (no block records) still
	 * knows them: the first dispatch, start or steal (UINT64_MAX: none),
	 * the last end (0: none), start + steal records per kernel
	 * (kernel_begins[k], k < the header's kernel count), steal records. */
	uint64_t first_begin, last_end;
	uint64_t *kernel_begins;
	size_t steal_records;
};

/* Builds the layout; per_kernel=1 allocates slots separately for every
 * kernel (for per-kernel track groups). Returns 0, CTA_ENOMEM, or
 * CTA_ERANGE when an SM id exceeds CTA__MAX_SM_ID; CTA_EINVAL for a lean
 * trace (its layout is t->layout). */
int cta__layout_build(struct cta__layout *l, const struct cta_trace *t, int per_kernel);
struct cta_svg_opts;
struct cta_perfetto_opts;
/* The renderers over a trace and, for a lean one, its layout (NULL: built
 * from t's records). */
int cta__render_svg(const struct cta_trace *t, const struct cta__layout *given, FILE *f,
                    const struct cta_svg_opts *opts);
int cta__export_perfetto(const struct cta_trace *t, const struct cta__layout *given, FILE *f,
                         const struct cta_perfetto_opts *opts);
void cta__layout_free(struct cta__layout *l);
/* A lean trace (cta_trace_read_lean): the kept records and the layout of
 * the others. */
struct cta_trace_lean {
	struct cta_trace t;
	struct cta__layout l;
};

/* The same a record at a time, for a trace that streams in: begin, add
 * every record in file order, then finish (frees the collector) or abort
 * (frees it and the layout). */
struct cta__layout_acc;
int cta__layout_begin(struct cta__layout_acc **out, struct cta__layout *l, uint32_t kernel_count);
int cta__layout_add(struct cta__layout_acc *a, const struct cta_trace_rec *r);
int cta__layout_finish(struct cta__layout_acc *a, int per_kernel);
void cta__layout_abort(struct cta__layout_acc *a);

/* Writes s escaped for a JSON string (without the quotes) or for XML
 * text and attributes; invalid UTF-8 bytes become '?'. */
void cta__put_json_str(FILE *f, const char *s);
void cta__put_xml_str(FILE *f, const char *s);

/* Logical blocks in a kernel's grid. */
uint64_t cta__kernel_blocks(const struct cta_trace_kernel *k);

/* Closes a writer from a fatal-signal handler: flushes, marks the trace
 * "#incomplete records=N WHY", renames; only async-signal-safe calls. */
void cta__trace_writer_emergency_close(cta_trace_writer *w, const char *why);

/* ---- Record keys (trace_keys.c): the analyses' one keying and sort --- */

/* A record referenced by a key, sorted by (a, b, t), then file order
 * (seq: the record's index in the trace's recs). */
struct cta__rec_key {
	uint64_t a, b, t;
	size_t seq;
};
int cta__rec_key_cmp(const void *pa, const void *pb);
/* Whether record r is kept; if so, sets k->a and k->b (k->t is its time
 * and k->seq its index already; either may be changed). */
typedef int (*cta__rec_key_fn)(const struct cta_trace_rec *r, void *ctx, struct cta__rec_key *k);
/* The keys of the records of t that keep accepts, sorted: *out (freed by
 * the caller) holds *n of them. 0 or CTA_ENOMEM. */
int cta__rec_keys(struct cta__rec_key **out, size_t *n, const struct cta_trace *t,
                  cta__rec_key_fn keep, void *ctx);

/* Per-kernel facts of one trace: its first and last start and end, and its
 * launch. */
struct cta__kfacts {
	int has_start, has_end, has_launch;
	uint64_t first_start, last_start, first_end, last_end, launch;
};
/* Fills kf[0..CTA_TRACE_MAX_KERNELS) from t's records. */
void cta__trace_kernel_facts(struct cta__kfacts *kf, const struct cta_trace *t);

/* ---- Calibration of the sweep rule (trace_sweep_fit.c) ------------ */

/* Fits m's sweep_* parameters (placement = sweep) to the first waves of
 * the idle-device single-kernel launches of the traces (those with
 * donly[i] set are skipped); m's topology is kept. *placed of *total
 * first-wave blocks then land on the recorded SM. */
int cta__calib_fit_sweep(struct cta_device_model *m, const struct cta_trace *const *traces,
                         size_t n, const unsigned char *donly, uint64_t *placed, uint64_t *total);

#endif
