/* The whole public API of ctasim in one include: the kernel API, device
 * models, the simulator, harnesses and scenarios, traces and the trace
 * tools, error codes. Each concern also has a header of its own; backend
 * ABI (ctasim/sys/) is not part of it. */
#ifndef CTASIM_CTASIM_H
#define CTASIM_CTASIM_H

#include "ctasim/calibrate.h"
#include "ctasim/device.h"
#include "ctasim/errors.h"
#include "ctasim/export.h"
#include "ctasim/harness.h"
#include "ctasim/import_cse.h"
#include "ctasim/io.h"
#include "ctasim/kernel.h"
#include "ctasim/perfetto.h"
#include "ctasim/scenario.h"
#include "ctasim/sim.h"
#include "ctasim/svg.h"
#include "ctasim/trace.h"
#include "ctasim/trace_diff.h"

#endif
