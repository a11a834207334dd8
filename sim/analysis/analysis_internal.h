/* Internals of the trace tools (sim/analysis: Perfetto export, SVG
 * timeline, diff, calibration): the renderers over a layout, the one
 * keying and sort of records, and the sweep rule's fit. Not a public
 * header. */
#ifndef CTASIM_SIM_ANALYSIS_INTERNAL_H
#define CTASIM_SIM_ANALYSIS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ctasim/device.h"
#include "ctasim/trace.h"
#include "trace/trace_format.h"

struct cta_svg_opts;
struct cta_perfetto_opts;
/* The renderers over a trace and, for a lean one, its layout (NULL: built
 * from t's records). */
int cta__analysis_svg(const struct cta_trace *t, const struct cta__layout *given, FILE *f,
                      const struct cta_svg_opts *opts);
int cta__analysis_perfetto(const struct cta_trace *t, const struct cta__layout *given, FILE *f,
                           const struct cta_perfetto_opts *opts);

/* Writes the message of a refused input into errbuf (when errlen > 0)
 * and returns CTA_EINVAL (trace_keys.c). */
int cta__analysis_fail(char *errbuf, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* ---- Record keys (trace_keys.c): the analyses' one keying and sort --- */

/* A record referenced by a key, sorted by (a, b, t), then file order
 * (seq: the record's index in the trace's recs). */
struct cta__rec_key {
	uint64_t a, b, t;
	size_t seq;
};
int cta__analysis_rec_key_cmp(const void *pa, const void *pb);
/* Whether record r is kept; if so, sets k->a and k->b (k->t is its time
 * and k->seq its index already; either may be changed). */
typedef int (*cta__rec_key_fn)(const struct cta_trace_rec *r, void *ctx, struct cta__rec_key *k);
/* The keys of the records of t that keep accepts, sorted: *out (freed by
 * the caller) holds *n of them. 0 or CTA_ENOMEM. */
int cta__analysis_rec_keys(struct cta__rec_key **out, size_t *n, const struct cta_trace *t,
                           cta__rec_key_fn keep, void *ctx);

/* Per-kernel facts of one trace: its first and last start and end, and its
 * launch. */
struct cta__kfacts {
	int has_start, has_end, has_launch;
	uint64_t first_start, last_start, first_end, last_end, launch;
};
/* Fills kf[0..CTA_TRACE_MAX_KERNELS) from t's records. */
void cta__analysis_kernel_facts(struct cta__kfacts *kf, const struct cta_trace *t);
/* Adds record r to its kernel's facts f (a record at a time, as diff
 * streams a trace). */
void cta__analysis_kfacts_add(struct cta__kfacts *f, const struct cta_trace_rec *r);

/* ---- Calibration of the sweep rule (trace_sweep_fit.c) ------------ */

/* Fits m's sweep_* parameters (placement = sweep) to the first waves of
 * the idle-device single-kernel launches of the traces (those with
 * donly[i] set are skipped); m's topology is kept. *placed of *total
 * first-wave blocks then land on the recorded SM. */
int cta__analysis_fit_sweep(struct cta_device_model *m, const struct cta_trace *const *traces,
                            size_t n, const unsigned char *donly, uint64_t *placed,
                            uint64_t *total);

#endif
