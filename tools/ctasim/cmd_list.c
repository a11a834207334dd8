/* `ctasim list`: the kernels this build knows (with their parameters and
 * whether they are expected to fail) and the device-model presets. */
#include <stdio.h>
#include <string.h>

#include "cli_util.h"
#include "cmd.h"
#include "ctasim/device.h"
#include "ctasim/harness.h"
#include "ctasim/sim.h"

int cta_cmd_list(int argc, char **argv)
{
	int verbose = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("usage: ctasim list [--params] [--load LIB.so]\n\n"
			       "Lists kernels and device models. --params also lists each "
			       "kernel's parameters.\n");
			return CTA_EXIT_OK;
		} else if (!strcmp(argv[i], "--params")) {
			verbose = 1;
		} else if (cli_is(argv[i], "--load")) {
			const char *v = cli_value("list", argc, argv, &i, "--load");
			if (!v || cli_load("list", v) < 0)
				return CTA_EXIT_USAGE;
		} else {
			fprintf(stderr, "ctasim list: unexpected argument '%s'\n", argv[i]);
			return CTA_EXIT_USAGE;
		}
	}
	printf("kernels:\n");
	for (size_t i = 0; i < cta_harness_count(); i++) {
		const struct cta_kernel_info *k = cta_harness_at(i);
		char tags[96] = "";
		if (k->flags & CTA_KI_EXPECT_UB)
			snprintf(tags, sizeof(tags), " [expected to fail: %s]",
			         k->expect_ub ? k->expect_ub : "UB");
		else if (k->flags & CTA_KI_CLC)
			snprintf(tags, sizeof(tags), " [clc]");
		/* Bodies the kernel compiler made into region loops. */
		if (cta_kernel_regions(k->name, NULL) == 1)
			snprintf(tags + strlen(tags), sizeof(tags) - strlen(tags), " [regions]");
		printf("  %-34s %s%s\n", k->name, k->summary ? k->summary : "", tags);
		if (verbose)
			for (const struct cta_param_desc *p = k->params; p && p->name; p++)
				printf("      --arg %s=%s  %s\n", p->name, p->def ? p->def : "",
				       p->help ? p->help : "");
	}
	printf("\ndevices:\n");
	for (unsigned i = 0; i < cta_device_preset_count(); i++) {
		const struct cta_device_model *d = cta_device_preset(i);
		printf("  %-12s sm_%u%u, %u SMs in %u GPCs%s; %s%s\n", d->name, d->cc_major,
		       d->cc_minor, d->sm_count, d->gpc_count,
		       d->has_clc ? ", cluster launch control" : "",
		       d->fitted_on[0] ? "fitted on " : "not fitted (estimates)", d->fitted_on);
	}
	return CTA_EXIT_OK;
}
