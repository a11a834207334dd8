/* Harnesses of the sanitizer's planted bugs (san_body.h): each is marked
 * CTA_KI_EXPECT_UB with the report its tool must make. The invalid form runs
 * only under that tool (--sanitize TOOL): unwatched, an out-of-bounds write
 * or a freed buffer would corrupt the host's own memory. --arg valid=1 runs
 * the valid twin, under any tool or none, and checks out[i] == in[i] + 1. */
#include <string.h>

#include "kcommon.h"
#include "san_body.h"

struct san_state {
	const int *in;
	const int *out;
	int n;
	int valid;
	int neighbour; /* san_racecheck_rw: out[i] comes from the next thread's in */
	int quarter;   /* san_racecheck_tree: the first quarter's from a quarter above */
};

static const struct cta_param_desc san_params[] = {
    {"n", "512", "elements (a multiple of 256: blocks of 256 threads)"},
    {"valid", "0", "1: run the valid twin (must not be reported)"},
    {"bug_block", "-1", "the one block that makes the mistake (-1: every block)"},
    {NULL, NULL, NULL},
};
/* (The use after free is the launch's: every block reads the freed input.) */
static const struct cta_param_desc san_params_uaf[] = {
    {"n", "512", "elements (a multiple of 256: blocks of 256 threads)"},
    {"valid", "0", "1: run the valid twin (must not be reported)"},
    {NULL, NULL, NULL},
};
static const struct cta_param_desc san_params_oob[] = {
    {"n", "500", "elements (the grid has one thread more than n)"},
    {"valid", "0", "1: run the valid twin (must not be reported)"},
    {NULL, NULL, NULL},
};

static int san_setup(struct cta_harness *h, const struct cta_kernel_def *k, cta_sanitize_tool tool)
{
	int64_t n = 0, valid = 0, bug_block = -1;
	int oob = k == &san_memcheck_oob;
	int rc = cta__kparam_range(h, "n", 1, 1 << 24, &n);
	if (!rc)
		rc = cta__kparam_range(h, "valid", 0, 1, &valid);
	if (!rc && !oob && k != &san_memcheck_use_after_free)
		rc = cta__kparam_range(h, "bug_block", -1, n / SAN_TILE - 1, &bug_block);
	if (rc)
		return rc;
	if (!valid && cta_harness_sanitizer(h) != tool)
		return cta_harness_error(h, CTA_EINVAL,
		                         "kernel %s plants a bug for --sanitize %s: run it with "
		                         "--sanitize %s (or --arg valid=1 for its valid twin)",
		                         k->name, cta_sanitize_tool_name(tool),
		                         cta_sanitize_tool_name(tool));
	int wide = k == &san_racecheck_wide || k == &san_initcheck_wide || k == &san_racecheck_tree;
	if (!oob && n % SAN_TILE)
		return cta_harness_param_error(h, "n", CTA_EINVAL,
		                               "argument n=%lld: a multiple of %d expected",
		                               (long long)n, SAN_TILE);
	struct san_state *S = cta__kstate_new(h, sizeof *S);
	if (!S)
		return cta_harness_error(h, CTA_ENOMEM, "cannot allocate the harness state");
	int *in = cta_harness_alloc(h, (size_t)n * sizeof *in);
	int *out = cta_harness_alloc(h, (size_t)n * sizeof *out);
	if (!in || !out)
		return cta_harness_error(h, CTA_ENOMEM, "cannot allocate %lld elements",
		                         (long long)n);
	for (int i = 0; i < (int)n; i++)
		in[i] = 3 * i + 1;
	S->in = in;
	S->out = out;
	S->n = (int)n;
	S->valid = (int)valid;
	S->neighbour = k == &san_racecheck_rw || k == &san_racecheck_wide;
	S->quarter = k == &san_racecheck_tree;
	struct san_args args = {.in = cta_harness_dev(h, in),
	                        .out = cta_harness_dev(h, out),
	                        .n = (int)n,
	                        .valid = (int)valid,
	                        .bug_block = (int)bug_block};
	if (k == &san_memcheck_use_after_free && !valid)
		cta_harness_release(h, in); /* The bug: freed before the launch */
	unsigned grid = (unsigned)(oob ? n / SAN_TILE + 1 : n / SAN_TILE);
	struct cta_launch_cfg cfg = {
	    .grid = {grid, 1, 1},
	    .block = {SAN_TILE, 1, 1},
	    .smem_static = SAN_TILE * (wide ? sizeof(unsigned long long) : sizeof(int)),
	};
	rc = cta_harness_launch(h, k, &cfg, &args, sizeof args);
	if (rc)
		return rc;
	/* The kernels index by their thread: another shape would reach past
	 * the buffers in the valid twin too. */
	const struct cta_launch_cfg *l = cta_harness_launched(h, 0);
	if (memcmp(l->grid, cfg.grid, sizeof(cfg.grid)) ||
	    memcmp(l->block, cfg.block, sizeof(cfg.block)))
		return cta_harness_error(h, CTA_EINVAL,
		                         "kernel %s runs on its own grid and blocks of %d "
		                         "threads (set --arg n instead of --grid/--block)",
		                         k->name, SAN_TILE);
	return 0;
}

static int san_verify(struct cta_harness *h)
{
	const struct san_state *S = cta__kstate(h);
	if (!S)
		return cta_harness_error(h, CTA_ESTATE, "verify without a setup");
	/* The invalid forms' outputs are what their bug makes them; the
	 * sanitizer's report is their verdict. */
	if (!S->valid)
		return 0;
	for (int i = 0; i < S->n; i++) {
		int j = S->neighbour ? i / SAN_TILE * SAN_TILE + (i + 1) % SAN_TILE : i;
		if (S->quarter && i % SAN_TILE < SAN_TILE / 4)
			j = i + SAN_TILE / 4;
		if (S->out[i] != S->in[j] + 1)
			return cta_harness_fail(h, "out[%d]: expected %d, got %d", i, S->in[j] + 1,
			                        S->out[i]);
	}
	return 0;
}

#define SAN_HARNESS(kname, rule, tool, params_, summary_)                                          \
	static int kname##_setup(struct cta_harness *h)                                            \
	{                                                                                          \
		return san_setup(h, &kname, tool);                                                 \
	}                                                                                          \
	static const struct cta_kernel_info kname##_info = {                                       \
	    .name = #kname,                                                                        \
	    .summary = summary_,                                                                   \
	    .flags = CTA_KI_EXPECT_UB,                                                             \
	    .expect_ub = rule,                                                                     \
	    .params = params_,                                                                     \
	    .setup = kname##_setup,                                                                \
	    .verify = san_verify,                                                                  \
	};                                                                                         \
	CTA_HARNESS(kname##_info)

SAN_HARNESS(san_memcheck_oob, "memcheck_oob", CTA_SANITIZE_MEMCHECK, san_params_oob,
            "--sanitize memcheck's planted bug: writes one element past a buffer")
SAN_HARNESS(san_memcheck_shared_oob, "memcheck_oob", CTA_SANITIZE_MEMCHECK, san_params,
            "--sanitize memcheck's planted bug: writes one slot past a shared tile")
SAN_HARNESS(san_memcheck_use_after_free, "memcheck_use_after_free", CTA_SANITIZE_MEMCHECK,
            san_params_uaf,
            "--sanitize memcheck's planted bug: reads a buffer freed before the launch")
SAN_HARNESS(san_racecheck_ww, "racecheck_shared_ww", CTA_SANITIZE_RACECHECK, san_params,
            "--sanitize racecheck's planted bug: every thread writes one shared flag")
SAN_HARNESS(san_racecheck_rw, "racecheck_shared_rw", CTA_SANITIZE_RACECHECK, san_params,
            "--sanitize racecheck's planted bug: reads a neighbour's slot with no barrier")
SAN_HARNESS(san_initcheck_shared, "initcheck_shared", CTA_SANITIZE_INITCHECK, san_params,
            "--sanitize initcheck's planted bug: reads a shared slot no thread wrote")
SAN_HARNESS(san_racecheck_wide, "racecheck_shared_rw", CTA_SANITIZE_RACECHECK, san_params,
            "--sanitize racecheck's planted bug on 8-byte slots: a neighbour's slot, no barrier")
SAN_HARNESS(san_initcheck_wide, "initcheck_shared", CTA_SANITIZE_INITCHECK, san_params,
            "--sanitize initcheck's planted bug on 8-byte slots: a slot no thread wrote")
SAN_HARNESS(
    san_racecheck_tree, "racecheck_shared_rw", CTA_SANITIZE_RACECHECK, san_params,
    "--sanitize racecheck's planted bug in a tree step: its bound lets one thread too many write")
