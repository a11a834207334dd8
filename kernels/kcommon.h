/* Helpers shared by the harnesses of kernels/ (host side, C only): string
 * parameters, the imbalance parameter, and result-check messages. Not part
 * of any kernel body, so the CUDA backend never sees this file. */
#ifndef CTASIM_KERNELS_KCOMMON_H
#define CTASIM_KERNELS_KCOMMON_H

#include "ctasim/harness.h"

/* The parameter-table row every imbalance-aware harness lists. */
#define KPARAM_IMBALANCE                                                                           \
	{"imbalance", "none",                                                                      \
	 "work per logical block: none | one_in_seven (every 7th block 4x) | heavy_tail "          \
	 "(Pareto, capped at 32x)"}

/* The text of parameter `name`: the last --arg NAME=VALUE, else the
 * harness's default. harness.h has no string accessor yet, so this reads
 * the run's options directly (see kcommon.c). */
const char *cta__kparam_str(struct cta_harness *h, const char *name);

/* Reads the `imbalance` parameter into *out (a KWORK_* value). Returns 0,
 * or a CTA_EINVAL failure naming the accepted values. */
int cta__kparam_imbalance(struct cta_harness *h, int *out);

/* Reads an integer parameter that must lie in [lo, hi]; fails the setup
 * with a message naming it otherwise. */
int cta__kparam_range(struct cta_harness *h, const char *name, int64_t lo, int64_t hi,
                      int64_t *out);

/* Total blocks of launch 0 as actually launched (after --grid overrides). */
uint64_t cta__klaunched_blocks(struct cta_harness *h);

#endif
