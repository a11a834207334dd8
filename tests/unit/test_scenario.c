/* Unit tests of scenario files (sim/host/scenario.c): the example scenarios
 * of tests/golden/scenarios load with the values they say, and every
 * malformed scenario of tests/golden/scenarios/bad is rejected with the
 * message in its .expected file. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ctasim/harness.h"
#include "ctasim/scenario.h"

static char err[1024];

/* A stand-in for the H100 preset: only what the device check reads. */
static struct cta_device_model h100;

/* Stand-ins for the registry's harnesses, with their real parameters, so
 * these tests do not depend on kernels/. */
static const struct cta_param_desc spin_params[] = {
    {"ns", "10000", ""},       {"smem", "0", ""},  {"grid", "65536", ""},
    {"imbalance", "none", ""}, {NULL, NULL, NULL},
};
static const struct cta_param_desc vecscale_params[] = {
    {"n", "1048576", ""},     {"alpha", "2.0", ""},      {"ns", "0", ""},
    {"prologue_ns", "0", ""}, {"imbalance", "none", ""}, {NULL, NULL, NULL},
};
static const struct cta_kernel_info fake_spin = {.name = "spin", .params = spin_params};
static const struct cta_kernel_info fake_vecscale = {.name = "vecscale_clc",
                                                     .params = vecscale_params};

static const struct cta_kernel_info *fake_lookup(const char *name)
{
	if (strcmp(name, "spin") == 0)
		return &fake_spin;
	if (strcmp(name, "vecscale_clc") == 0)
		return &fake_vecscale;
	return NULL;
}

/* The scenario folder: $CTA_SCENARIO_DIR, else found from this file's path
 * as the compiler saw it (relative to the build folder, where meson runs
 * tests). Tests run inside it so messages name "bad/x.json". */
static int enter_scenario_dir(void **state)
{
	(void)state;
	const char *env = getenv("CTA_SCENARIO_DIR");
	char dir[1024];
	if (env) {
		snprintf(dir, sizeof(dir), "%s", env);
	} else {
		const char *file = __FILE__;
		const char *cut = strstr(file, "unit/test_scenario.c");
		assert_non_null(cut);
		snprintf(dir, sizeof(dir), "%.*sgolden/scenarios", (int)(cut - file), file);
	}
	if (chdir(dir) != 0)
		fail_msg("cannot enter %s (set CTA_SCENARIO_DIR)", dir);

	memset(&h100, 0, sizeof(h100));
	snprintf(h100.name, sizeof(h100.name), "H100-SXM");
	h100.sm_count = 132;
	h100.max_threads_per_block = 1024;
	h100.priority_greatest = -5;
	h100.priority_least = 0;
	return 0;
}

/* Load, then the device and harness checks: the whole path a scenario
 * takes before it runs. */
static int load_and_check(struct cta_scenario *s, const char *path)
{
	int rc = cta_scenario_load(s, path, err, sizeof(err));
	if (rc == 0)
		rc = cta_scenario_check_device(s, &h100, err, sizeof(err));
	if (rc == 0)
		rc = cta_scenario_check_harnesses(s, fake_lookup, err, sizeof(err));
	return rc;
}

static void load_ok(struct cta_scenario *s, const char *path)
{
	int rc = load_and_check(s, path);
	if (rc)
		fail_msg("%s: unexpected error %d: %s", path, rc, err);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static void bad_scenarios_report_their_expected_message(void **state)
{
	(void)state;
	DIR *d = opendir("bad");
	assert_non_null(d);
	char *names[256];
	size_t n = 0, expected_files = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		if (len > 9 && strcmp(e->d_name + len - 9, ".expected") == 0)
			expected_files++;
		if (len > 5 && strcmp(e->d_name + len - 5, ".json") == 0) {
			assert_true(n < 256);
			names[n++] = strdup(e->d_name);
		}
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), cmp_str);
	assert_true(n >= 40);
	assert_int_equal(expected_files, n); /* no .expected without its .json */

	int failures = 0;
	for (size_t i = 0; i < n; i++) {
		char path[512], want[1024] = "";
		snprintf(path, sizeof(path), "bad/%s", names[i]);
		snprintf(want, sizeof(want), "bad/%.*s.expected", (int)strlen(names[i]) - 5,
		         names[i]);
		FILE *f = fopen(want, "r");
		if (!f)
			fail_msg("%s has no .expected file", path);
		if (!fgets(want, sizeof(want), f))
			want[0] = '\0';
		fclose(f);
		want[strcspn(want, "\n")] = '\0';

		struct cta_scenario s;
		err[0] = '\0';
		int rc = load_and_check(&s, path);
		if (rc == 0 || strcmp(err, want) != 0) {
			print_error("%s (rc %d)\n got:  %s\n want: %s\n", path, rc, err, want);
			failures++;
		}
		cta_scenario_free(&s);
		free(names[i]);
	}
	assert_int_equal(failures, 0);
}

static void priority_takeover_loads_as_written(void **state)
{
	(void)state;
	struct cta_scenario s;
	load_ok(&s, "priority_takeover.json");
	assert_string_equal(s.path, "priority_takeover.json");
	assert_string_equal(s.device, "H100");
	assert_string_equal(s.device_ref, "H100");
	assert_int_equal(s.device_line, 4);
	assert_int_equal(s.has_seed, 1);
	assert_int_equal(s.seed, 1);
	assert_int_equal(s.sm_limit, 2);
	assert_int_equal(s.timing_only, 0);
	assert_int_equal(s.nstreams, 2);
	assert_string_equal(s.streams[0].name, "low");
	assert_int_equal(s.streams[0].priority, 0);
	assert_string_equal(s.streams[1].name, "high");
	assert_int_equal(s.streams[1].priority, -5);
	assert_int_equal(s.nkernels, 2);

	const struct cta_scenario_kernel *k = &s.kernels[0];
	assert_string_equal(k->harness, "spin");
	assert_string_equal(k->label, "long");
	assert_int_equal(k->stream, 0);
	assert_int_equal(k->release_ns, 0);
	assert_int_equal(k->grid_set, 1);
	assert_int_equal(k->grid[0], 16);
	assert_int_equal(k->grid[1], 1);
	assert_int_equal(k->grid[2], 1);
	assert_int_equal(k->block_set, 0);
	assert_int_equal(k->nargs, 2);
	assert_string_equal(k->args[0], "ns=10000");
	assert_string_equal(k->args[1], "smem=100000");

	k = &s.kernels[1];
	assert_string_equal(k->label, "urgent");
	assert_int_equal(k->stream, 1);
	assert_int_equal(k->release_ns, 15000);
	assert_int_equal(k->grid[0], 4);
	assert_string_equal(k->args[0], "ns=2000");
	assert_int_equal(k->line, 20);
	assert_int_equal(k->harness_line, 23);
	cta_scenario_free(&s);
	assert_int_equal(s.nkernels, 0);
	assert_null(s.kernels);
}

static void example_scenarios_all_load_and_check(void **state)
{
	(void)state;
	static const char *const files[] = {"priority_takeover.json", "fifo_leftover.json",
	                                    "cut_ahead.json", "clc_priority.json",
	                                    "bench_16k6p.json"};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct cta_scenario s;
		load_ok(&s, files[i]);
		assert_true(s.nkernels >= 2);
		cta_scenario_free(&s);
	}
}

static void cut_ahead_puts_the_small_kernel_lowest(void **state)
{
	(void)state;
	struct cta_scenario s;
	load_ok(&s, "cut_ahead.json");
	assert_int_equal(s.nkernels, 3);
	const struct cta_scenario_kernel *filler = &s.kernels[0], *big = &s.kernels[1],
	                                 *small = &s.kernels[2];
	assert_string_equal(big->label, "big");
	assert_true(s.streams[big->stream].priority < s.streams[filler->stream].priority);
	assert_true(s.streams[filler->stream].priority < s.streams[small->stream].priority);
	assert_true(big->release_ns < small->release_ns);
	assert_string_equal(big->args[1], "smem=200000");
	cta_scenario_free(&s);
}

static void clc_scenario_releases_the_urgent_kernel_mid_run(void **state)
{
	(void)state;
	struct cta_scenario s;
	load_ok(&s, "clc_priority.json");
	assert_string_equal(s.device, "B200");
	assert_string_equal(s.kernels[0].harness, "vecscale_clc");
	assert_int_equal(s.kernels[0].grid_set, 0);
	assert_string_equal(s.kernels[0].args[0], "n=16384");
	assert_int_equal(s.kernels[1].release_ns, 2500);
	assert_true(s.streams[s.kernels[1].stream].priority <
	            s.streams[s.kernels[0].stream].priority);
	cta_scenario_free(&s);
}

static void bench_has_16_kernels_6_priorities_and_a_million_blocks(void **state)
{
	(void)state;
	struct cta_scenario s;
	load_ok(&s, "bench_16k6p.json");
	assert_int_equal(s.nkernels, 16);
	assert_int_equal(s.timing_only, 1);
	assert_int_equal(s.sm_limit, 0);
	uint64_t blocks = 0;
	int seen[6] = {0};
	for (unsigned i = 0; i < s.nkernels; i++) {
		const struct cta_scenario_kernel *k = &s.kernels[i];
		assert_string_equal(k->harness, "spin");
		assert_true(k->stream < s.nstreams);
		blocks += (uint64_t)k->grid[0] * k->grid[1] * k->grid[2];
		int p = -s.streams[k->stream].priority;
		assert_true(p >= 0 && p < 6);
		seen[p] = 1;
	}
	assert_int_equal(blocks, 1000000);
	for (int p = 0; p < 6; p++)
		assert_int_equal(seen[p], 1);
	cta_scenario_free(&s);
}

static int parse(struct cta_scenario *s, const char *text)
{
	return cta_scenario_parse(s, text, strlen(text), "mem.json", err, sizeof(err));
}

static int parse_named(struct cta_scenario *s, const char *text, const char *name)
{
	return cta_scenario_parse(s, text, strlen(text), name, err, sizeof(err));
}

static void omitted_fields_take_their_defaults(void **state)
{
	(void)state;
	struct cta_scenario s;
	int rc = parse(&s, "{\"kernels\": [{\"harness\": \"spin\"}, {\"harness\": \"spin\"}, "
	                   "{\"harness\": \"saxpy\"}]}");
	assert_int_equal(rc, 0);
	assert_string_equal(s.device, "");
	assert_int_equal(s.has_seed, 0);
	assert_int_equal(s.sm_limit, 0);
	assert_int_equal(s.nstreams, 0);
	assert_null(s.streams);
	assert_int_equal(s.nkernels, 3);
	/* Unlabelled kernels of one harness get the index to tell them apart. */
	assert_string_equal(s.kernels[0].label, "spin#0");
	assert_string_equal(s.kernels[1].label, "spin#1");
	assert_string_equal(s.kernels[2].label, "saxpy");
	assert_int_equal(s.kernels[0].stream, CTA_SCENARIO_DEFAULT_STREAM);
	assert_int_equal(s.kernels[0].release_ns, 0);
	assert_int_equal(s.kernels[0].grid_set, 0);
	assert_int_equal(s.kernels[0].nargs, 0);
	assert_null(s.kernels[0].args);
	cta_scenario_free(&s);
}

static void stream_priority_defaults_to_zero(void **state)
{
	(void)state;
	struct cta_scenario s;
	assert_int_equal(parse(&s, "{\"streams\": [{\"name\": \"a\"}],\n"
	                           "\"kernels\": [{\"harness\": \"spin\", \"stream\": \"a\"},\n"
	                           "{\"harness\": \"spin\", \"stream\": \"default\"}]}"),
	                 0);
	assert_int_equal(s.streams[0].priority, 0);
	assert_int_equal(s.streams[0].priority_line, 1);
	assert_int_equal(s.kernels[0].stream, 0);
	assert_int_equal(s.kernels[1].stream, CTA_SCENARIO_DEFAULT_STREAM);
	cta_scenario_free(&s);
}

static void arguments_keep_the_text_they_were_written_with(void **state)
{
	(void)state;
	struct cta_scenario s;
	assert_int_equal(parse(&s,
	                       "{\"kernels\": [{\"harness\": \"spin\", \"args\": {\n"
	                       "\"a\": 0.25, \"b\": 1e3, \"c\": -7, \"d\": true, \"e\": false,\n"
	                       "\"f\": \"heavy_tail\", \"g\": \"\", \"h\": "
	                       "18446744073709551615}}]}"),
	                 0);
	const struct cta_scenario_kernel *k = &s.kernels[0];
	static const char *const want[] = {
	    "a=0.25", "b=1e3",        "c=-7", "d=1",
	    "e=0",    "f=heavy_tail", "g=",   "h=18446744073709551615"};
	assert_int_equal(k->nargs, 8);
	for (size_t i = 0; i < 8; i++)
		assert_string_equal(k->args[i], want[i]);
	assert_int_equal(k->arg_lines[0], 2);
	assert_int_equal(k->arg_lines[5], 3);
	cta_scenario_free(&s);
}

static void dimensions_accept_a_number_or_one_to_three_entries(void **state)
{
	(void)state;
	struct cta_scenario s;
	assert_int_equal(parse(&s, "{\"kernels\": [{\"harness\": \"a\", \"grid\": 7, \"block\": "
	                           "[32, 4]},\n{\"harness\": \"b\", \"grid\": [2147483647, "
	                           "65535, 65535], \"block\": [1024]}]}"),
	                 0);
	assert_int_equal(s.kernels[0].grid[0], 7);
	assert_int_equal(s.kernels[0].block[0], 32);
	assert_int_equal(s.kernels[0].block[1], 4);
	assert_int_equal(s.kernels[0].block[2], 1);
	assert_int_equal(s.kernels[0].block_line, 1);
	assert_int_equal(s.kernels[1].grid[0], 2147483647u);
	assert_int_equal(s.kernels[1].grid[2], 65535);
	cta_scenario_free(&s);
}

static void release_times_may_be_written_in_exponent_form(void **state)
{
	(void)state;
	struct cta_scenario s;
	assert_int_equal(
	    parse(&s, "{\"kernels\": [{\"harness\": \"spin\", \"release_ns\": 2.5e6}]}"), 0);
	assert_int_equal(s.kernels[0].release_ns, 2500000);
	cta_scenario_free(&s);
}

static void equal_release_times_on_one_stream_are_in_list_order(void **state)
{
	(void)state;
	struct cta_scenario s;
	/* Equal times keep list order; the default stream is its own stream. */
	assert_int_equal(parse(&s, "{\"streams\": [{\"name\": \"s\"}], \"kernels\": [\n"
	                           "{\"harness\": \"a\", \"stream\": \"s\", \"release_ns\": 5},\n"
	                           "{\"harness\": \"b\", \"release_ns\": 1},\n"
	                           "{\"harness\": \"c\", \"stream\": \"s\", \"release_ns\": 5}]}"),
	                 0);
	cta_scenario_free(&s);
}

static void device_paths_are_relative_to_the_scenario(void **state)
{
	(void)state;
	struct cta_scenario s;
	assert_int_equal(parse_named(&s,
	                             "{\"device\": \"models/gpu.json\", \"kernels\": "
	                             "[{\"harness\": \"spin\"}]}",
	                             "runs/a/s.json"),
	                 0);
	assert_string_equal(s.device, "models/gpu.json");
	assert_string_equal(s.device_ref, "runs/a/models/gpu.json");
	cta_scenario_free(&s);

	assert_int_equal(parse_named(&s,
	                             "{\"device\": \"/abs/gpu.json\", \"kernels\": "
	                             "[{\"harness\": \"spin\"}]}",
	                             "runs/a/s.json"),
	                 0);
	assert_string_equal(s.device_ref, "/abs/gpu.json");
	cta_scenario_free(&s);

	assert_int_equal(parse(&s, "{\"device\": \"B200\", \"kernels\": [{\"harness\": \"x\"}]}"),
	                 0);
	assert_string_equal(s.device_ref, "B200");
	cta_scenario_free(&s);
}

static void a_failed_load_leaves_nothing_to_leak(void **state)
{
	(void)state;
	struct cta_scenario s;
	/* The error comes after arguments and streams were allocated. */
	int rc = parse(&s, "{\"streams\": [{\"name\": \"a\"}], \"kernels\": [\n"
	                   "{\"harness\": \"spin\", \"args\": {\"ns\": 1, \"x\": \"y\"}},\n"
	                   "{\"harness\": \"spin\", \"args\": {\"ns\": 2}, \"grid\": 0}]}");
	assert_int_equal(rc, CTA_ERANGE);
	assert_string_equal(err, "mem.json:3: field 'kernels[1].grid': 0 is out of range [1, "
	                         "2147483647]");
	assert_int_equal(s.nkernels, 0);
	assert_null(s.kernels);
	assert_null(s.streams);
	assert_null(s.path);
	cta_scenario_free(&s); /* harmless on an emptied scenario */
	cta_scenario_free(NULL);
}

static void a_missing_file_is_named(void **state)
{
	(void)state;
	struct cta_scenario s;
	int rc = cta_scenario_load(&s, "no/such/scenario.json", err, sizeof(err));
	assert_int_equal(rc, CTA_ENOTFOUND);
	assert_string_equal(err, "no/such/scenario.json: No such file or directory");
	assert_int_equal(s.nkernels, 0);
}

static void too_many_kernels_are_refused(void **state)
{
	(void)state;
	size_t n = CTA_SCENARIO_MAX_KERNELS + 1;
	size_t cap = n * 20 + 64, len = 0;
	char *t = malloc(cap);
	assert_non_null(t);
	len += (size_t)snprintf(t, cap, "{\"kernels\": [");
	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(t + len, cap - len, "%s{\"harness\": \"s\"}", i ? "," : "");
	len += (size_t)snprintf(t + len, cap - len, "]}");
	struct cta_scenario s;
	assert_int_equal(cta_scenario_parse(&s, t, len, "many.json", err, sizeof(err)), CTA_ERANGE);
	assert_string_equal(err,
	                    "many.json:1: field 'kernels': 4097 kernels, more than the maximum "
	                    "4096");
	free(t);
}

static void device_check_accepts_the_whole_priority_range(void **state)
{
	(void)state;
	struct cta_scenario s;
	assert_int_equal(parse(&s, "{\"sm_limit\": 132, \"streams\": [{\"name\": \"a\", "
	                           "\"priority\": -5}, {\"name\": \"b\", \"priority\": 0}],"
	                           "\"kernels\": [{\"harness\": \"spin\", \"block\": [32, 32]}]}"),
	                 0);
	assert_int_equal(cta_scenario_check_device(&s, &h100, err, sizeof(err)), 0);
	/* A device with a narrower range refuses the same file. */
	struct cta_device_model narrow = h100;
	narrow.priority_greatest = -2;
	snprintf(narrow.name, sizeof(narrow.name), "narrow");
	assert_int_equal(cta_scenario_check_device(&s, &narrow, err, sizeof(err)), CTA_ERANGE);
	assert_string_equal(err, "mem.json:1: field 'streams[0].priority': priority -5 is outside "
	                         "the range of narrow: -2 (greatest) to 0 (least)");
	cta_scenario_free(&s);
}

static void mutated_scenarios_fail_cleanly(void **state)
{
	(void)state;
	/* Byte mutations of a real scenario: each must load or fail with a
	 * message naming the file, and (under ASan) neither leak nor read
	 * out of bounds on the way. */
	FILE *f = fopen("cut_ahead.json", "rb");
	assert_non_null(f);
	static char orig[8192];
	size_t n = fread(orig, 1, sizeof(orig), f);
	fclose(f);
	assert_true(n > 0 && n < sizeof(orig));
	const char alphabet[] = "{}[]\":,\\0123456789-e. tfnu\n";
	uint32_t rng = 99;
	int loaded = 0;
	for (int iter = 0; iter < 3000; iter++) {
		char *t = malloc(n);
		assert_non_null(t);
		memcpy(t, orig, n);
		for (int k = 0; k <= iter % 3; k++) {
			rng = rng * 1103515245u + 12345u;
			size_t pos = (rng >> 8) % n;
			rng = rng * 1103515245u + 12345u;
			t[pos] = alphabet[(rng >> 8) % (sizeof(alphabet) - 1)];
		}
		struct cta_scenario sc;
		err[0] = '\0';
		int rc = cta_scenario_parse(&sc, t, n, "m.json", err, sizeof(err));
		if (rc == 0) {
			loaded++;
			assert_true(sc.nkernels >= 1);
		} else {
			assert_true(strncmp(err, "m.json:", 7) == 0);
			assert_int_equal(sc.nkernels, 0);
		}
		cta_scenario_free(&sc);
		free(t);
	}
	/* Mutations inside descriptions leave the file valid. */
	assert_true(loaded > 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(bad_scenarios_report_their_expected_message),
	    cmocka_unit_test(priority_takeover_loads_as_written),
	    cmocka_unit_test(example_scenarios_all_load_and_check),
	    cmocka_unit_test(cut_ahead_puts_the_small_kernel_lowest),
	    cmocka_unit_test(clc_scenario_releases_the_urgent_kernel_mid_run),
	    cmocka_unit_test(bench_has_16_kernels_6_priorities_and_a_million_blocks),
	    cmocka_unit_test(omitted_fields_take_their_defaults),
	    cmocka_unit_test(stream_priority_defaults_to_zero),
	    cmocka_unit_test(arguments_keep_the_text_they_were_written_with),
	    cmocka_unit_test(dimensions_accept_a_number_or_one_to_three_entries),
	    cmocka_unit_test(release_times_may_be_written_in_exponent_form),
	    cmocka_unit_test(equal_release_times_on_one_stream_are_in_list_order),
	    cmocka_unit_test(device_paths_are_relative_to_the_scenario),
	    cmocka_unit_test(a_failed_load_leaves_nothing_to_leak),
	    cmocka_unit_test(a_missing_file_is_named),
	    cmocka_unit_test(too_many_kernels_are_refused),
	    cmocka_unit_test(device_check_accepts_the_whole_priority_range),
	    cmocka_unit_test(mutated_scenarios_fail_cleanly),
	};
	return cmocka_run_group_tests(tests, enter_scenario_dir, NULL);
}
