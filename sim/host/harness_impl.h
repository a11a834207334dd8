/* Internal shape of a harness run, shared by the runner (sim/host) and the
 * backends that execute its launches (the simulator here, the GPU in
 * device/). Not a public header. */
#ifndef CTASIM_HARNESS_IMPL_H
#define CTASIM_HARNESS_IMPL_H

#include "backend.h"
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

/* The simulator's implementation of the backend interface (backend.h)
 * runs every recorded launch on one cta_sim. */
int cta__harness_exec_sim(struct cta_harness *h);

#endif
