/* The trace tools, all of them: Perfetto export, SVG timeline, import of
 * cuda_scheduling_examiner logs, diff and calibration. Each has a header
 * of its own; this one includes them all. */
#ifndef CTASIM_TOOLS_H
#define CTASIM_TOOLS_H

#include "ctasim/calibrate.h"
#include "ctasim/import_cse.h"
#include "ctasim/perfetto.h"
#include "ctasim/svg.h"
#include "ctasim/trace_diff.h"

#endif
