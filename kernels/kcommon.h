/* Helpers shared by the harnesses of kernels/ (host side, C only): the
 * imbalance parameter, range-checked integers, the launched grid size. Not
 * part of any kernel body, so the CUDA backend never sees this file. */
#ifndef CTASIM_KERNELS_KCOMMON_H
#define CTASIM_KERNELS_KCOMMON_H

#include "ctasim/harness.h"

/* The parameter-table row every imbalance-aware harness lists. */
/* clang-format off */
#define KPARAM_IMBALANCE                                                                           \
	{"imbalance", "none",                                                                      \
	 "work per logical block: none | one_in_seven (every 7th block 4x) | heavy_tail "          \
	 "(Pareto, capped at 32x)"}
/* clang-format on */

/* Reads the `imbalance` parameter into *out (a KWORK_* value). Returns 0,
 * or a CTA_EINVAL failure naming the accepted values. */
int cta__kparam_imbalance(struct cta_harness *h, int *out);

/* Reads an integer parameter that must lie in [lo, hi]; fails the setup
 * with a message naming it otherwise. */
int cta__kparam_range(struct cta_harness *h, const char *name, int64_t lo, int64_t hi,
                      int64_t *out);

/* Per-run state of a harness (host pointers verify needs), `bytes` zeroed
 * bytes owned by the harness h. harness.h has no user-data pointer, and a
 * scenario may set up several harnesses of one family before verifying
 * any, so state cannot live in file-scope variables: setup creates it with
 * cta__kstate_new and verify finds it again with cta__kstate. */
void *cta__kstate_new(struct cta_harness *h, size_t bytes);
void *cta__kstate(struct cta_harness *h);

/* The work-stealing queues of work_steal.c, shared with ck.c: builds the
 * queues and tasks from the harness parameters (wsq_params) into *args
 * (a struct wsq_args), and checks that every task ran exactly once. */
struct wsq_args;
int cta__wsq_build(struct cta_harness *h, struct wsq_args *args);
int cta__wsq_verify(struct cta_harness *h);

/* Total blocks of launch 0 as actually launched (after --grid overrides). */
uint64_t cta__klaunched_blocks(struct cta_harness *h);

#endif
