/* Internal interface of the CUDA backend's host side (device/cuda_exec.c)
 * for the runner, the self-test and the probes in device/kernels.cu. Not a
 * public header. */
#ifndef CTASIM_DEVICE_CUDA_BACKEND_H
#define CTASIM_DEVICE_CUDA_BACKEND_H

#include <stddef.h>

#define CTA__CUDA_MAX_LAUNCHES 64

/* What the last cta__harness_exec_cuda() measured, for tests and reports. */
struct cta__cuda_stats {
	double tick_ns;                /* smallest %globaltimer step seen */
	unsigned long long tick_steps; /* distinct steps seen while measuring */
	double align_err_ns;           /* bound on the host/GPU clock pairing error */
	int clc;                       /* 0 none, 1 emulated, 2 hardware */
	int sm_major, sm_minor;        /* the GPU's compute capability */
	int binary_version;            /* the SASS the kernels run (90, 100) */
	unsigned nlaunches;
	float launch_ms[CTA__CUDA_MAX_LAUNCHES];            /* GPU time of each launch (events) */
	unsigned long long records, lost_records;           /* instrumentation */
	unsigned long long skipped[CTA__CUDA_MAX_LAUNCHES]; /* blocks exiting: index taken */
	unsigned long long clamped;                         /* records before time 0 */
};
const struct cta__cuda_stats *cta__cuda_last_stats(void);

/* Makes `ordinal` the device that cta__cuda_alloc and the next run use.
 * The runner should call it before a harness's setup allocates. */
int cta__cuda_select_device(int ordinal, char *err, size_t errlen);

/* A device copy of `bytes` on the selected GPU (NULL with a message). */
void *cta__cuda_alloc(size_t bytes, char *err, size_t errlen);
/* Frees a device copy made by cta__cuda_alloc (NULL is fine). */
void cta__cuda_free(void *dev);

/* The backend's entries of sim/host/backend.h (struct cta__backend), which
 * registers them at load time; also called directly by the self-test. */
struct cta_harness;
struct cta_scenario;
int cta__harness_exec_cuda(struct cta_harness *h);
int cta__scenario_exec_cuda(struct cta_harness **hs, unsigned n, const struct cta_scenario *sc,
                            char *err, size_t errlen);

#endif
