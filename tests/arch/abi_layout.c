/* The layout of every public struct a caller allocates or reads, against
 * tests/arch/abi.txt, recorded for the library's current soversion: a
 * struct that changed size without a new soversion (and, for the option
 * structs, a new *_VERSION) fails here, so a program built against older
 * headers never reads a field that is not there (docs/ARCHITECTURE.md,
 * "ABI"). `abi_layout --write FILE SOVERSION` records the current sizes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctasim/device.h"
#include "ctasim/harness.h"
#include "ctasim/scenario.h"
#include "ctasim/sim.h"
#include "ctasim/tools.h"
#include "ctasim/trace.h"

#define S(T)                                                                                       \
	{                                                                                          \
#T, sizeof(struct T)                                                               \
	}
#define V(M)                                                                                       \
	{                                                                                          \
#M, M                                                                              \
	}
static const struct {
	const char *name;
	size_t value;
} now[] = {S(cta_wave_order),
           S(cta_device_model),
           S(cta_block_resources),
           S(cta_param_desc),
           S(cta_kernel_info),
           S(cta_launch_cfg),
           S(cta_harness_opts),
           S(cta_kernel_def),
           S(cta_arg_field),
           S(cta_scenario_stream),
           S(cta_scenario_kernel),
           S(cta_scenario),
           S(cta_sim_opts),
           S(cta_launch),
           S(cta_ub_report),
           S(cta_kernel_stats),
           S(cta_perfetto_opts),
           S(cta_svg_opts),
           S(cta_cse_opts),
           S(cta_cse_stats),
           S(cta_diff_tol),
           S(cta_diff_coverage),
           S(cta_diff_kernel),
           S(cta_diff_result),
           S(cta_calib_report),
           S(cta_calib_spin),
           S(cta_calib_opts),
           S(cta_trace_rec),
           S(cta_trace_kernel),
           S(cta_trace_header),
           S(cta_trace),
           V(CTA_SIM_OPTS_VERSION),
           V(CTA_HARNESS_OPTS_VERSION),
           V(CTA_SCENARIO_VERSION),
           V(CTA_PERFETTO_OPTS_VERSION),
           V(CTA_SVG_OPTS_VERSION),
           V(CTA_DIFF_TOL_VERSION)};
#define N (sizeof(now) / sizeof(now[0]))

int main(int argc, char **argv)
{
	if (UINTPTR_MAX != 0xffffffffffffffffu) {
		printf("abi_layout: the recorded sizes are those of LP64 targets; skipped\n");
		return 77;
	}
	if (argc == 4 && !strcmp(argv[1], "--write")) {
		FILE *f = fopen(argv[2], "w");
		if (!f) {
			perror(argv[2]);
			return 2;
		}
		fprintf(f, "soversion %s\n", argv[3]);
		for (size_t i = 0; i < N; i++)
			fprintf(f, "%s %zu\n", now[i].name, now[i].value);
		return fclose(f) ? 2 : 0;
	}
	if (argc != 3) {
		fprintf(stderr,
		        "usage: abi_layout ABI.txt SOVERSION | --write ABI.txt SOVERSION\n");
		return 2;
	}
	FILE *f = fopen(argv[1], "r");
	if (!f) {
		perror(argv[1]);
		return 2;
	}
	char name[128], so[32];
	size_t value;
	int bad = 0;
	unsigned seen = 0;
	if (fscanf(f, "soversion %31s", so) != 1) {
		fprintf(stderr, "%s: no 'soversion' line first\n", argv[1]);
		return 2;
	}
	int same_so = !strcmp(so, argv[2]);
	while (fscanf(f, "%127s %zu", name, &value) == 2) {
		size_t i = 0;
		while (i < N && strcmp(now[i].name, name))
			i++;
		if (i == N) {
			printf("%s: %s is no longer checked here\n", argv[1], name);
			bad = 1;
			continue;
		}
		seen++;
		if (now[i].value != value) {
			printf("%s is %zu, %zu as recorded for soversion %s\n", name, now[i].value,
			       value, so);
			bad |= same_so ? 1 : 0;
		}
	}
	fclose(f);
	if (seen != N) {
		printf("%s records %u of the %zu layouts checked\n", argv[1], seen, (size_t)N);
		bad = 1;
	}
	if (!same_so) {
		printf("%s was recorded for soversion %s, the library's is %s\n", argv[1], so,
		       argv[2]);
		bad = 1;
	}
	if (bad) {
		printf(
		    "a public struct's layout changes only with a new soversion (sim/meson.build, "
		    "ctasim_soversion) and, for an option struct, a new *_VERSION; then record "
		    "the sizes: abi_layout --write tests/arch/abi.txt SOVERSION\n");
		return 1;
	}
	printf("abi_layout: %zu layouts as recorded for soversion %s\n", (size_t)N, so);
	return 0;
}
