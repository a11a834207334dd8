/* Internals of the trace format (sim/trace), shared by the writer, the
 * reader and the importer: event-name lookup, the column line, the checks
 * on header strings that both sides must agree on, compression. */
#ifndef CTASIM_SIM_TRACE_INTERNAL_H
#define CTASIM_SIM_TRACE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ctasim/device.h"
#include "ctasim/trace.h"
#include "trace/trace_format.h"

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

/* Closes a writer from a fatal-signal handler: flushes, marks the trace
 * "#incomplete records=N WHY", renames; only async-signal-safe calls. */
void cta__trace_writer_emergency_close(cta_trace_writer *w, const char *why);

#endif
