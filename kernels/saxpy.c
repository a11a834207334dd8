/* Harnesses of the two SAXPY kernels (saxpy_body.h): inputs x[i] = i mod
 * 1000, y[i] = 1, the Pro Tip's launches (<<<4096,256>>> for 1<<20
 * elements, <<<32*numSMs,256>>> for the grid-stride loop), and a check of
 * every element. */
#include <math.h>

#include "kcommon.h"
#include "saxpy_body.h"

/* What verify needs, kept per run (kcommon.h says why). */
struct saxpy_state {
	float *x, *y;
	int n;
	float a;
};

static const struct cta_param_desc saxpy_params[] = {
    {"n", "1048576", "number of elements"},
    {"a", "2.0", "the scalar a"},
    {"ns", "0", "virtual nanoseconds per element (per thread)"},
    {NULL, NULL, NULL},
};

static int saxpy_prepare(struct cta_harness *h, struct saxpy_args *args)
{
	int64_t n = 0;
	int rc = cta__kparam_range(h, "n", 1, INT32_MAX, &n);
	if (rc)
		return rc;
	struct saxpy_state *S = cta__kstate_new(h, sizeof *S);
	if (!S)
		return cta_harness_error(h, CTA_ENOMEM, "cannot allocate the harness state");
	S->n = (int)n;
	S->a = (float)cta_harness_double(h, "a");
	S->x = cta_harness_alloc(h, (size_t)n * sizeof *S->x);
	S->y = cta_harness_alloc(h, (size_t)n * sizeof *S->y);
	if (!S->x || !S->y)
		return cta_harness_error(h, CTA_ENOMEM, "cannot allocate %lld elements",
		                         (long long)n);
	/* Small integers keep a*x + y exact in float whatever the backend
	 * does with fused multiply-adds. */
	for (int i = 0; i < S->n; i++) {
		S->x[i] = (float)(i % 1000);
		S->y[i] = 1.0f;
	}
	args->n = S->n;
	args->a = S->a;
	args->x = cta_harness_dev(h, S->x);
	args->y = cta_harness_dev(h, S->y);
	args->ns = (unsigned long long)cta_harness_int(h, "ns");
	return 0;
}

static int saxpy_setup(struct cta_harness *h)
{
	struct saxpy_args args;
	int rc = saxpy_prepare(h, &args);
	if (rc)
		return rc;
	/* saxpy<<<4096,256>>>(1<<20, ...): one thread per element (of
	 * --block's threads when given). */
	unsigned b[3];
	cta_harness_block(h, (const unsigned[3]){256, 1, 1}, b);
	struct cta_launch_cfg cfg = {
	    .grid = {(unsigned)((args.n + b[0] - 1) / b[0]), 1, 1},
	    .block = {256, 1, 1},
	};
	return cta_harness_launch(h, &saxpy, &cfg, &args, sizeof args);
}

static int saxpy_gridstride_setup(struct cta_harness *h)
{
	struct saxpy_args args;
	int rc = saxpy_prepare(h, &args);
	if (rc)
		return rc;
	/* saxpy<<<32*numSMs, 256>>>: a multiple of the SM count. */
	struct cta_launch_cfg cfg = {
	    .grid = {32 * cta_harness_device(h)->sm_count, 1, 1},
	    .block = {256, 1, 1},
	};
	return cta_harness_launch(h, &saxpy_gridstride, &cfg, &args, sizeof args);
}

static int saxpy_verify(struct cta_harness *h)
{
	const struct saxpy_state *S = cta__kstate(h);
	if (!S)
		return cta_harness_error(h, CTA_ESTATE, "verify without a setup");
	for (int i = 0; i < S->n; i++) {
		float want = S->a * (float)(i % 1000) + 1.0f;
		float got = S->y[i];
		/* Relative tolerance only matters for non-integer a, where a
		 * GPU's FMA rounds once and the host may round twice. */
		if (!(fabsf(got - want) <= 1e-6f * fabsf(want)))
			return cta_harness_fail(h, "y[%d]: expected %g, got %g", i, (double)want,
			                        (double)got);
	}
	return 0;
}

/* Named for `ctasim bench`, which runs a plain loop over the arrays of a
 * prepared launch. */
static const struct cta_arg_field saxpy_fields[] = {
    CTA_ARG_FIELD(struct saxpy_args, n),  CTA_ARG_FIELD(struct saxpy_args, a),
    CTA_ARG_FIELD(struct saxpy_args, x),  CTA_ARG_FIELD(struct saxpy_args, y),
    CTA_ARG_FIELD(struct saxpy_args, ns), {NULL, 0, 0},
};
CTA_KERNEL_ARGS(saxpy, saxpy_fields)
CTA_KERNEL_ARGS(saxpy_gridstride, saxpy_fields)

static const struct cta_kernel_info saxpy_info = {
    .name = "saxpy",
    .summary = "monolithic SAXPY, one thread per element (grid-stride Pro Tip)",
    .params = saxpy_params,
    .setup = saxpy_setup,
    .verify = saxpy_verify,
};
CTA_HARNESS(saxpy_info)

static const struct cta_kernel_info saxpy_gridstride_info = {
    .name = "saxpy_gridstride",
    .summary = "grid-stride SAXPY on 32 blocks per SM (grid-stride Pro Tip)",
    .params = saxpy_params,
    .setup = saxpy_gridstride_setup,
    .verify = saxpy_verify,
};
CTA_HARNESS(saxpy_gridstride_info)
