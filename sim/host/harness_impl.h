/* Internal shape of a harness run, shared by the runner (sim/host) and the
 * backends that execute its launches (the simulator here, the GPU in
 * device/). Not a public header. */
#ifndef CTASIM_HARNESS_IMPL_H
#define CTASIM_HARNESS_IMPL_H

#include "ctasim/harness.h"

#define CTA__HARNESS_MAX_LAUNCHES 64
#define CTA__HARNESS_MAX_BUFFERS  64

struct cta__hbuf {
	void *host; /* harness-owned host copy */
	void *dev;  /* device copy (CUDA backend) or == host (simulator) */
	size_t bytes;
	int mapped; /* host is an anonymous mapping (large buffers), not malloc's */
};

struct cta__hlaunch {
	const struct cta_kernel_def *kernel;
	struct cta_launch_cfg cfg;
	void *args; /* copy of the argument struct (device pointers inside) */
	size_t args_size;
};

struct cta_harness {
	const struct cta_kernel_info *ki;
	struct cta_harness_opts opts;
	struct cta_device_model device;
	struct cta__hbuf bufs[CTA__HARNESS_MAX_BUFFERS];
	unsigned nbufs;
	struct cta__hlaunch launches[CTA__HARNESS_MAX_LAUNCHES];
	unsigned nlaunches;
	cta_sim *sim; /* simulator backend */
	cta_verdict verdict;
	char errmsg[512];
	int failed_param;   /* a parameter did not parse */
	char bad_param[64]; /* the parameter a setup error is about ("" if none) */
	char gpu[160]; /* CUDA backend: the GPU the run used ("" before, or on the simulator) */
};

/* Backend entry points: run every recorded launch. Each returns 0 or a
 * negative code with h->errmsg set. */
int cta__harness_exec_sim(struct cta_harness *h);
/* Defined in device/ when the CUDA backend is built; otherwise a weak fallback that
 * says this build has no CUDA backend. Must: allocate device copies of
 * every buffer (filling bufs[i].dev) before setup's pointers are used --
 * see cta__harness_dev_alloc -- copy in, run launches in order (streams
 * and priorities from cfg), copy out, and write the trace (opts.sim.trace_path). */
int cta__harness_exec_cuda(struct cta_harness *h);
/* Allocates the device copy of a buffer for the CUDA backend (called by
 * cta_harness_alloc when opts.backend is CUDA). Returns NULL on failure. */
void *cta__cuda_alloc(size_t bytes, char *err, size_t errlen);
/* Makes GPU `ordinal` current (before setup allocates), checking there is
 * one; and frees a device copy. Weak fallbacks say there is no backend. */
int cta__cuda_select_device(int ordinal, char *err, size_t errlen);
void cta__cuda_free(void *dev);

/* The CUDA backend's scenario runner, defined in device/ when it is built
 * (a weak fallback in sim/host/scenario_run.c says this build has none):
 * runs the launches of the n set-up harnesses hs (scenario kernel i is
 * hs[i]) on the GPU, one CUDA stream per scenario stream at its priority
 * (kernels on the default stream on the legacy/default stream), each launch
 * issued at its kernel's release_ns plus the launch's cfg.release_ns after
 * the run's start, copies every harness's buffers back, and writes one trace
 * for all of them (hs[0]->opts.sim.trace_path). Returns 0 or a negative code
 * with a message in err. */
struct cta_scenario;
int cta__scenario_exec_cuda(struct cta_harness **hs, unsigned n, const struct cta_scenario *sc,
                            char *err, size_t errlen);

#endif
