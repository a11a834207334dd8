/* The backend interface of the host layer: what runs a harness's launches.
 * The simulator (sim/host/harness.c) and the CUDA backend
 * (device/cuda_exec.c, which registers itself when its object is linked
 * in) both implement it; the harness runner and the scenario runner call
 * only through it. Not a public header. */
#ifndef CTASIM_HOST_BACKEND_H
#define CTASIM_HOST_BACKEND_H

#include <stddef.h>

#include "ctasim/harness.h"

struct cta_scenario;

struct cta__backend {
	cta_backend kind;
	const char *name;
	/* Makes GPU `ordinal` current and checks there is one, before setup
	 * allocates. NULL: nothing to select (the simulator). */
	int (*select_device)(int ordinal, char *err, size_t errlen);
	/* The device copy of a harness buffer of `bytes` (NULL with a message
	 * on failure), and its release. NULL: the host copy is the device's. */
	void *(*alloc)(size_t bytes, char *err, size_t errlen);
	void (*free)(void *dev);
	/* Runs every recorded launch of h: device copies of every buffer
	 * (bufs[i].dev) copied in, launches in order (streams and priorities
	 * from cfg), copies out, and the trace (opts.sim.trace_path). 0 or a
	 * negative code with h->errmsg set. */
	int (*exec)(struct cta_harness *h);
	/* Runs the launches of the n set-up harnesses hs of scenario sc
	 * (scenario kernel i is hs[i]): one stream per scenario stream at its
	 * priority, each launch issued at its kernel's release_ns plus the
	 * launch's cfg.release_ns after the run's start, every harness's
	 * buffers copied back, one trace for all (hs[0]->opts.sim.trace_path).
	 * 0 or a negative code with a message in err. NULL: the scenario
	 * runner drives the backend itself (the simulator: every kernel on one
	 * cta_sim, sim/host/scenario_run.c). */
	int (*scenario_exec)(struct cta_harness **hs, unsigned n, const struct cta_scenario *sc,
	                     char *err, size_t errlen);
};

/* Makes b the implementation of b->kind; at load time (a constructor of
 * the backend's object), before any harness runs. */
void cta__backend_register(const struct cta__backend *b);
/* The backend of that kind, or NULL when this build has none. */
const struct cta__backend *cta__backend_of(cta_backend kind);
/* The message and code of a backend this build does not have. */
int cta__backend_missing(cta_backend kind, char *err, size_t errlen);

#endif
