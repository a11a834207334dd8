/* Harness of compute_heavy (compute_body.h): the result of each element is
 * recomputed on the host and compared exactly (same float operations). */
#include "compute_body.h"
#include "kcommon.h"

#include <string.h>

static const struct cta_param_desc compute_params[] = {
    {"n", "1048576", "number of elements (one thread each)"},
    {"iters", "2000", "map iterations per element"},
    {NULL, NULL, NULL},
};

static int compute_setup(struct cta_harness *h)
{
	int64_t n = 0, iters = 0;
	int rc = cta__kparam_range(h, "n", 1, 1 << 30, &n);
	if (!rc)
		rc = cta__kparam_range(h, "iters", 0, 1 << 24, &iters);
	if (rc)
		return rc;
	float **S = cta__kstate_new(h, sizeof(float *));
	float *out = cta_harness_alloc(h, (size_t)n * sizeof(float));
	if (!S || !out)
		return CTA_ENOMEM;
	*S = out;
	/* NaN in every element: one the kernel never wrote fails the check,
	 * and the array is in memory before the run, as the others' are. */
	memset(out, 0xff, (size_t)n * sizeof(float));
	struct compute_args a = {cta_harness_dev(h, out), (int)n, (int)iters};
	struct cta_launch_cfg cfg = {
	    .grid = {(unsigned)((n + 255) / 256), 1, 1},
	    .block = {256, 1, 1},
	};
	return cta_harness_launch(h, &compute_heavy, &cfg, &a, sizeof a);
}

static int compute_verify(struct cta_harness *h)
{
	int64_t n = cta_harness_int(h, "n"), iters = cta_harness_int(h, "iters");
	const struct cta_launch_cfg *c = cta_harness_launched(h, 0);
	uint64_t covered = (uint64_t)c->grid[0] * c->block[0];
	float *out = *(float **)cta__kstate(h);
	for (int64_t i = 0; i < n && (uint64_t)i < covered; i++) {
		float x = 0.1f + 0.8f * (float)(i % 1000) / 1000.0f;
		for (int k = 0; k < iters; k++)
			x = 3.7f * x * (1.0f - x);
		if (out[i] != x)
			return cta_harness_fail(h, "out[%lld]: expected %.9g, got %.9g",
			                        (long long)i, x, out[i]);
	}
	return 0;
}

static const struct cta_kernel_info compute_info = {
    .name = "compute_heavy",
    .summary = "compute-bound map per thread (the parallel-simulation yardstick)",
    .params = compute_params,
    .setup = compute_setup,
    .verify = compute_verify,
};
CTA_HARNESS(compute_info)
