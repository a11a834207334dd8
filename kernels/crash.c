/* Harness of crash_oob (crash_body.h): expected to crash; exists for the
 * crash report and its test. */
#include "crash_body.h"
#include "kcommon.h"

static const struct cta_param_desc crash_params[] = {
    {"blocks", "64", "blocks of 128 threads"},
    {"block", "37", "the block whose thread writes through a wild pointer"},
    {"thread", "5", "the thread that does"},
    {NULL, NULL, NULL},
};

static int crash_setup(struct cta_harness *h)
{
	int64_t blocks = 0, block = 0, thread = 0;
	int rc = cta__kparam_range(h, "blocks", 1, 1 << 20, &blocks);
	if (!rc)
		rc = cta__kparam_range(h, "block", 0, INT32_MAX, &block);
	if (!rc)
		rc = cta__kparam_range(h, "thread", 0, 127, &thread);
	if (rc)
		return rc;
	int *data = cta_harness_alloc(h, (size_t)blocks * 128 * sizeof(int));
	if (!data)
		return CTA_ENOMEM;
	struct crash_args a = {cta_harness_dev(h, data), (unsigned)block, (unsigned)thread, 1000};
	struct cta_launch_cfg cfg = {.grid = {(unsigned)blocks, 1, 1}, .block = {128, 1, 1}};
	return cta_harness_launch(h, &crash_oob, &cfg, &a, sizeof a);
}

static const struct cta_kernel_info crash_info = {
    .name = "crash_oob",
    .summary = "writes through a wild pointer in one thread: shows the crash report",
    .flags = CTA_KI_EXPECT_UB,
    .expect_ub = "crash (SIGSEGV)",
    .params = crash_params,
    .setup = crash_setup,
};
CTA_HARNESS(crash_info)
