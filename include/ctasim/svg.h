/* An SVG timeline of a trace: blocks as rectangles on one lane per SM
 * (or per TPC or GPC on large devices).
 * Works on traces loaded with cta_trace_read() (ctasim/trace.h). */
#ifndef CTASIM_SVG_H
#define CTASIM_SVG_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ctasim/device.h"
#include "ctasim/errors.h"
#include "ctasim/export.h"
#include "ctasim/trace.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CTA_SVG_OPTS_VERSION 1
struct cta_svg_opts {
	unsigned version;
	unsigned width;       /* total width in pixels; 0: 1600 */
	unsigned lane_height; /* pixels per SM lane; 0: chosen from the SM and slot count */
	const char *title;    /* NULL: built from the header */
	/* What a lane is: CTA_SVG_LANES_AUTO (0) one per SM while lanes of at
	 * least 5 px fit in about 1200 px, else per TPC, else per GPC; or one
	 * of SM, TPC, GPC. TPCs and GPCs come from the device preset the
	 * header names (else 2 SMs a TPC, and GPC lanes are refused). */
	int lanes;
};
enum { CTA_SVG_LANES_AUTO, CTA_SVG_LANES_SM, CTA_SVG_LANES_TPC, CTA_SVG_LANES_GPC };
#define CTA_SVG_OPTS_INIT                                                                          \
	{                                                                                          \
		.version = CTA_SVG_OPTS_VERSION                                                    \
	}

/* Writes an SVG timeline of t to f: one lane per SM (split into sub-rows
 * when blocks overlap), blocks as rectangles coloured by kernel, the part
 * of a block spent on a stolen index hatched and outlined, failed cancels,
 * UB and warnings marked, a time axis with ticks and a legend; past 20000
 * blocks, or where blocks would be too thin or short to see, each lane shows
 * the share of its block slots in use, and lanes merge per TPC or GPC as
 * opts->lanes says. opts may be NULL. Returns 0, CTA_EIO, CTA_ERANGE (SM id
 * above 65535), CTA_ENOTFOUND (GPC lanes for a device that is no preset) or
 * CTA_ENOMEM. */
/* The same for a trace read with cta_trace_read_lean(per_kernel_slots 0);
 * CTA_EINVAL for one read with 1. */
CTA_EXPORT int cta_trace_lean_render_svg(const cta_trace_lean *t, FILE *f,
                                         const struct cta_svg_opts *opts);
CTA_EXPORT int cta_trace_render_svg(const struct cta_trace *t, FILE *f,
                                    const struct cta_svg_opts *opts);

#ifdef __cplusplus
}
#endif
#endif
