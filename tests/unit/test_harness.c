/* Unit tests of the kernel and harness registries (sim/host/harness.c):
 * kernel arguments read by name (cta_kernel_describe_args, cta_kernel_arg)
 * from a launch the saxpy harness prepared, and the refusals. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ctasim/harness.h"

/* A launch of the saxpy harness (kernels/saxpy.c) with n=3000, set up but
 * not run. */
static struct cta_harness *saxpy_prepared(struct cta_launch *l)
{
	const struct cta_kernel_info *ki = cta_harness_find("saxpy");
	assert_non_null(ki);
	const char *args[] = {"n=3000", "a=3.5"};
	struct cta_harness_opts o = {.version = CTA_HARNESS_OPTS_VERSION, .args = args, .nargs = 2};
	struct cta_sim_opts so = CTA_SIM_OPTS_INIT;
	char err[256];
	assert_int_equal(cta_device_resolve(&so.device, "H100-SXM", err, sizeof err), 0);
	o.sim = so;
	struct cta_harness *h = NULL;
	assert_int_equal(cta_harness_new(&h, ki, &o), 0);
	assert_int_equal(cta_harness_setup(h), 0);
	assert_int_equal(cta_harness_sim_launch(h, 0, l), 0);
	return h;
}

static void arguments_read_by_name_are_the_launchs(void **state)
{
	(void)state;
	struct cta_launch l;
	struct cta_harness *h = saxpy_prepared(&l);
	int n = 0;
	float a = 0;
	const float *x = NULL;
	float *y = NULL;
	assert_int_equal(cta_kernel_arg(l.kernel, l.args, "n", &n, sizeof n), 0);
	assert_int_equal(cta_kernel_arg(l.kernel, l.args, "a", &a, sizeof a), 0);
	assert_int_equal(cta_kernel_arg(l.kernel, l.args, "x", &x, sizeof x), 0);
	assert_int_equal(cta_kernel_arg(l.kernel, l.args, "y", &y, sizeof y), 0);
	assert_int_equal(n, 3000);
	assert_true(a == 3.5f);
	/* The harness's inputs: x[i] = i mod 1000, y[i] = 1. */
	assert_non_null(x);
	assert_non_null(y);
	assert_true(x[0] == 0.0f && x[1999] == 999.0f && x[2999] == 999.0f);
	assert_true(y[0] == 1.0f && y[2999] == 1.0f);
	cta_harness_free(h);
}

static void unknown_names_and_sizes_are_refused(void **state)
{
	(void)state;
	struct cta_launch l;
	struct cta_harness *h = saxpy_prepared(&l);
	int n = -7;
	long long wide = -7;
	assert_int_equal(cta_kernel_arg(l.kernel, l.args, "m", &n, sizeof n), CTA_ENOTFOUND);
	assert_int_equal(cta_kernel_arg(l.kernel, l.args, "n", &wide, sizeof wide), CTA_EINVAL);
	assert_int_equal(n, -7);
	assert_int_equal(wide, -7);
	assert_int_equal(cta_kernel_arg(l.kernel, l.args, NULL, &n, sizeof n), CTA_EINVAL);
	/* A kernel whose harness names no fields. */
	const struct cta_kernel_def *spin = cta_kernel_find("spin");
	assert_non_null(spin);
	unsigned char buf[512] = {0};
	assert_true(spin->args_size <= sizeof buf);
	assert_int_equal(cta_kernel_arg(spin, buf, "ns", &wide, sizeof wide), CTA_ENOTFOUND);
	cta_harness_free(h);
}

static void a_description_outside_the_arguments_is_refused(void **state)
{
	(void)state;
	static const struct cta_kernel_def k = {"args_test", NULL, 16, __FILE__, __LINE__, NULL};
	static const struct cta_arg_field past[] = {{"a", 8, 8}, {"b", 12, 8}, {NULL, 0, 0}};
	static const struct cta_arg_field huge[] = {{"a", SIZE_MAX, 2}, {NULL, 0, 0}};
	static const struct cta_arg_field ok[] = {{"a", 0, 8}, {"b", 8, 8}, {NULL, 0, 0}};
	assert_int_equal(cta_kernel_describe_args(&k, past), CTA_EINVAL);
	assert_int_equal(cta_kernel_describe_args(&k, huge), CTA_EINVAL);
	long long v = 0;
	const long long args[2] = {11, 22};
	assert_int_equal(cta_kernel_arg(&k, args, "a", &v, sizeof v), CTA_ENOTFOUND);
	assert_int_equal(cta_kernel_describe_args(&k, ok), 0);
	assert_int_equal(cta_kernel_arg(&k, args, "b", &v, sizeof v), 0);
	assert_int_equal(v, 22);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(arguments_read_by_name_are_the_launchs),
	    cmocka_unit_test(unknown_names_and_sizes_are_refused),
	    cmocka_unit_test(a_description_outside_the_arguments_is_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
