/* Harnesses of the vec_add work-stealing kernels (vec_add_body.h): the
 * seeds' inputs a[i] = i, b[i] = 1, c[i] = 0, their launch (<<<ceil_div(N,
 * 256), 256>>> with N = 10000), and the seeds' check c[i] == 1 + i, which
 * also catches a block processed twice or never. */
#include "kcommon.h"
#include "vec_add_body.h"

/* What verify needs, kept per run (kcommon.h says why). */
struct vec_add_state {
	int *c;
	int n;
};

static const struct cta_param_desc vec_add_params[] = {
    {"n", "10000", "number of elements (the seed's N)"},
    {"ns", "0", "virtual nanoseconds per block (per thread)"},
    {NULL, NULL, NULL},
};
static const struct cta_param_desc vec_add_2d_params[] = {
    {"nx", "100", "columns"},
    {"ny", "100", "rows"},
    {"ns", "0", "virtual nanoseconds per block (per thread)"},
    {NULL, NULL, NULL},
};
static const struct cta_param_desc vec_add_3d_params[] = {
    {"nx", "22", "extent of the box along x, in elements"},
    {"ny", "22", "extent of the box along y, in elements"},
    {"nz", "22", "extent of the box along z, in elements"},
    {"ns", "0", "virtual nanoseconds per block (per thread)"},
    {NULL, NULL, NULL},
};

/* Allocates and fills a, b, c for nx * ny * nz elements. */
static int vec_add_prepare(struct cta_harness *h, struct vec_add_args *args, int64_t nx, int64_t ny,
                           int64_t nz)
{
	if (nx * ny * nz > INT32_MAX)
		return cta_harness_error(h, CTA_EINVAL, "%lld elements: at most 2^31-1",
		                         (long long)(nx * ny * nz));
	int n = (int)(nx * ny * nz);
	struct vec_add_state *S = cta__kstate_new(h, sizeof *S);
	if (!S)
		return cta_harness_error(h, CTA_ENOMEM, "cannot allocate the harness state");
	int *a = cta_harness_alloc(h, (size_t)n * sizeof *a);
	int *b = cta_harness_alloc(h, (size_t)n * sizeof *b);
	S->c = cta_harness_alloc(h, (size_t)n * sizeof *S->c);
	S->n = n;
	if (!a || !b || !S->c)
		return cta_harness_error(h, CTA_ENOMEM, "cannot allocate %d elements", n);
	for (int i = 0; i < n; ++i) {
		a[i] = i;
		b[i] = 1;
		S->c[i] = 0;
	}
	args->a = cta_harness_dev(h, a);
	args->b = cta_harness_dev(h, b);
	args->c = cta_harness_dev(h, S->c);
	args->n = n;
	args->nx = (int)nx;
	args->ny = (int)ny;
	args->nz = (int)nz;
	args->ns = (unsigned long long)cta_harness_int(h, "ns");
	return 0;
}

static unsigned ceil_div(int64_t a, unsigned b)
{
	return (unsigned)((a + b - 1) / b);
}

/* Registers a thread of each kernel's CUDA build uses on sm_90, with the
 * trace instrumentation and the CLC emulation (`ptxas -v`), which the
 * harness declares to the simulator so that its occupancy is the GPU's:
 * 256-thread blocks of vec_add_clc fit 6 to an H100 SM (40 registers as
 * allocated), clc_two_requests 5 (48), where 32 registers would fit 8. */
#define REGS_VEC_ADD_CLC       37
#define REGS_VEC_ADD_CLC_2D    38
#define REGS_VEC_ADD_CLC_3D    40
#define REGS_TRY_CANCEL_BLOCKS 37
#define REGS_TWO_REQUESTS      44

/* The 1-D kernels share one launch: threads_per_block = 256,
 * blocks_per_grid = ceil_div(N, threads_per_block), threads_per_block
 * being --block's when given. */
static int setup_1d(struct cta_harness *h, const struct cta_kernel_def *k, size_t smem,
                    unsigned regs)
{
	int64_t n = 0;
	struct vec_add_args args;
	int rc = cta__kparam_range(h, "n", 1, INT32_MAX, &n);
	if (!rc)
		rc = vec_add_prepare(h, &args, n, 1, 1);
	if (rc)
		return rc;
	unsigned b[3];
	cta_harness_block(h, (const unsigned[3]){256, 1, 1}, b);
	struct cta_launch_cfg cfg = {.grid = {ceil_div(n, b[0]), 1, 1},
	                             .block = {256, 1, 1},
	                             .smem_static = smem,
	                             .regs_per_thread = regs};
	return cta_harness_launch(h, k, &cfg, &args, sizeof args);
}

static int vec_add_clc_setup(struct cta_harness *h)
{
	return setup_1d(h, &vec_add_clc, 0, REGS_VEC_ADD_CLC);
}

static int try_cancel_blocks_setup(struct cta_harness *h)
{
	return setup_1d(h, &vec_add_try_cancel_blocks, 0, REGS_TRY_CANCEL_BLOCKS);
}

/* Two 16-byte results and two 8-byte mbarriers; the simulator places each
 * CTA_SHARED variable at a 16-byte boundary, so 4 * 16 bytes. */
static int two_requests_setup(struct cta_harness *h)
{
	return setup_1d(h, &clc_two_requests, 64, REGS_TWO_REQUESTS);
}

static int vec_add_2d_setup(struct cta_harness *h)
{
	int64_t nx = 0, ny = 0;
	struct vec_add_args args;
	int rc = cta__kparam_range(h, "nx", 1, INT32_MAX, &nx);
	if (!rc)
		rc = cta__kparam_range(h, "ny", 1, INT32_MAX, &ny);
	if (!rc)
		rc = vec_add_prepare(h, &args, nx, ny, 1);
	if (rc)
		return rc;
	unsigned b[3];
	cta_harness_block(h, (const unsigned[3]){16, 16, 1}, b);
	struct cta_launch_cfg cfg = {.grid = {ceil_div(nx, b[0]), ceil_div(ny, b[1]), 1},
	                             .block = {16, 16, 1},
	                             .regs_per_thread = REGS_VEC_ADD_CLC_2D};
	return cta_harness_launch(h, &vec_add_clc_2d, &cfg, &args, sizeof args);
}

static int vec_add_3d_setup(struct cta_harness *h)
{
	int64_t nx = 0, ny = 0, nz = 0;
	struct vec_add_args args;
	int rc = cta__kparam_range(h, "nx", 1, INT32_MAX, &nx);
	if (!rc)
		rc = cta__kparam_range(h, "ny", 1, INT32_MAX, &ny);
	if (!rc)
		rc = cta__kparam_range(h, "nz", 1, INT32_MAX, &nz);
	if (!rc)
		rc = vec_add_prepare(h, &args, nx, ny, nz);
	if (rc)
		return rc;
	unsigned b[3];
	cta_harness_block(h, (const unsigned[3]){8, 8, 4}, b);
	struct cta_launch_cfg cfg = {
	    .grid = {ceil_div(nx, b[0]), ceil_div(ny, b[1]), ceil_div(nz, b[2])},
	    .block = {8, 8, 4},
	    .regs_per_thread = REGS_VEC_ADD_CLC_3D};
	return cta_harness_launch(h, &vec_add_clc_3d, &cfg, &args, sizeof args);
}

static int vec_add_verify(struct cta_harness *h)
{
	const struct vec_add_state *S = cta__kstate(h);
	if (!S)
		return cta_harness_error(h, CTA_ESTATE, "verify without a setup");
	for (int i = 0; i < S->n; ++i)
		if (S->c[i] != 1 + i)
			return cta_harness_fail(h, "c[%d]: expected %d, got %d", i, 1 + i, S->c[i]);
	return 0;
}

static const struct cta_kernel_info vec_add_clc_info = {
    .name = "vec_add_clc",
    .summary = "libcu++ for_each_canceled_block vec_add example, rank 1",
    .flags = CTA_KI_CLC,
    .params = vec_add_params,
    .setup = vec_add_clc_setup,
    .verify = vec_add_verify,
};
CTA_HARNESS(vec_add_clc_info)

static const struct cta_kernel_info vec_add_clc_2d_info = {
    .name = "vec_add_clc_2d",
    .summary = "for_each_canceled_block vec_add over a 2-D grid of 16x16 blocks, rank 2",
    .flags = CTA_KI_CLC,
    .params = vec_add_2d_params,
    .setup = vec_add_2d_setup,
    .verify = vec_add_verify,
};
CTA_HARNESS(vec_add_clc_2d_info)

static const struct cta_kernel_info vec_add_clc_3d_info = {
    .name = "vec_add_clc_3d",
    .summary = "for_each_canceled_block vec_add over a 3-D grid of 8x8x4 blocks, rank 3",
    .flags = CTA_KI_CLC,
    .params = vec_add_3d_params,
    .setup = vec_add_3d_setup,
    .verify = vec_add_verify,
};
CTA_HARNESS(vec_add_clc_3d_info)

static const struct cta_kernel_info try_cancel_blocks_info = {
    .name = "vec_add_try_cancel_blocks",
    .summary = "libcu++ experimental try_cancel_blocks vec_add example (thread 0 leads)",
    .flags = CTA_KI_CLC,
    .params = vec_add_params,
    .setup = try_cancel_blocks_setup,
    .verify = vec_add_verify,
};
CTA_HARNESS(try_cancel_blocks_info)

static const struct cta_kernel_info two_requests_info = {
    .name = "clc_two_requests",
    .summary = "guide's \"Valid code\": two requests issued before observing either",
    .flags = CTA_KI_CLC,
    .params = vec_add_params,
    .setup = two_requests_setup,
    .verify = vec_add_verify,
};
CTA_HARNESS(two_requests_info)
