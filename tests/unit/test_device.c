/* Device-model tests: the presets (shape, limits, validation, lookup by
 * name and alias), model files (round trip of every preset, overrides on a
 * base, and each malformed-file error with its exact FILE:LINE), and
 * resolving NAME-or-FILE. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ctasim/device.h"

static char tmpdir[256];

static int make_tmpdir(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/ctasim-test-device-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int remove_tmpdir(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

/* Writes `text` to a file named `name` in the test directory; returns its path. */
static const char *write_file(const char *name, const char *text)
{
	static char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
	return path;
}

/* Loads `text` as a model file and expects CTA_EPARSE with the message
 * "PATH:LINE: want". */
static void expect_error(const char *text, unsigned line, const char *want)
{
	struct cta_device_model m;
	char err[512], expected[1024];
	const char *path = write_file("bad.model", text);
	int rc = cta_device_load(&m, path, err, sizeof(err));

	snprintf(expected, sizeof(expected), "%s:%u: %s", path, line, want);
	assert_int_equal(rc, CTA_EPARSE);
	assert_string_equal(err, expected);
}

static void assert_models_equal(const struct cta_device_model *a, const struct cta_device_model *b)
{
	assert_string_equal(a->name, b->name);
	assert_int_equal(a->cc_major, b->cc_major);
	assert_int_equal(a->cc_minor, b->cc_minor);
	assert_int_equal(a->has_clc, b->has_clc);
	assert_int_equal(a->sm_count, b->sm_count);
	assert_int_equal(a->sms_per_tpc, b->sms_per_tpc);
	assert_int_equal(a->gpc_count, b->gpc_count);
	assert_memory_equal(a->gpc_of_sm, b->gpc_of_sm, a->sm_count * sizeof(a->gpc_of_sm[0]));
	assert_memory_equal(a->tpc_of_sm, b->tpc_of_sm, a->sm_count * sizeof(a->tpc_of_sm[0]));
	assert_int_equal(a->max_threads_per_sm, b->max_threads_per_sm);
	assert_int_equal(a->max_warps_per_sm, b->max_warps_per_sm);
	assert_int_equal(a->max_blocks_per_sm, b->max_blocks_per_sm);
	assert_int_equal(a->max_threads_per_block, b->max_threads_per_block);
	assert_int_equal(a->warp_size, b->warp_size);
	assert_int_equal(a->regs_per_sm, b->regs_per_sm);
	assert_int_equal(a->max_regs_per_thread, b->max_regs_per_thread);
	assert_int_equal(a->max_regs_per_block, b->max_regs_per_block);
	assert_int_equal(a->reg_alloc_unit, b->reg_alloc_unit);
	assert_int_equal(a->smem_per_sm, b->smem_per_sm);
	assert_int_equal(a->max_smem_per_block, b->max_smem_per_block);
	assert_int_equal(a->smem_reserved_per_block, b->smem_reserved_per_block);
	assert_int_equal(a->smem_alloc_unit, b->smem_alloc_unit);
	assert_int_equal(a->max_cluster_size, b->max_cluster_size);
	assert_int_equal(a->priority_greatest, b->priority_greatest);
	assert_int_equal(a->priority_least, b->priority_least);
	assert_int_equal(a->launch_latency_ns, b->launch_latency_ns);
	assert_int_equal(a->dispatch_latency_ns, b->dispatch_latency_ns);
	assert_int_equal(a->block_start_ns, b->block_start_ns);
	assert_int_equal(a->block_retire_ns, b->block_retire_ns);
	assert_int_equal(a->cancel_latency_ns, b->cancel_latency_ns);
	assert_int_equal(a->barrier_ns, b->barrier_ns);
	assert_int_equal(a->placement, b->placement);
	assert_int_equal(a->placement_order_len, b->placement_order_len);
	assert_memory_equal(a->placement_order, b->placement_order,
	                    a->placement_order_len * sizeof(a->placement_order[0]) + 1);
	assert_memory_equal(a->spin_scale_ppm, b->spin_scale_ppm, sizeof(a->spin_scale_ppm));
	assert_memory_equal(a->spin_add_ns, b->spin_add_ns, sizeof(a->spin_add_ns));
	assert_true(a->spin_add_mask == b->spin_add_mask);
}

/* Saves m under tmpdir/name, loads it back and checks both are equal. */
static void assert_save_round_trip(const struct cta_device_model *m, const char *name)
{
	struct cta_device_model back;
	char path[512], err[256];
	snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
	assert_int_equal(cta_device_save(m, path, err, sizeof(err)), 0);
	assert_int_equal(cta_device_load(&back, path, err, sizeof(err)), 0);
	assert_models_equal(m, &back);
}

/* ---- presets ---- */

static void every_preset_validates(void **state)
{
	char err[256];

	(void)state;
	assert_true(cta_device_preset_count() >= 4);
	for (unsigned i = 0; i < cta_device_preset_count(); i++) {
		const struct cta_device_model *m = cta_device_preset(i);

		assert_non_null(m);
		if (cta_device_validate(m, err, sizeof(err)) != 0)
			fail_msg("preset %s: %s", m->name, err);
	}
	assert_null(cta_device_preset(cta_device_preset_count()));
}

static void presets_have_the_published_sm_counts(void **state)
{
	static const struct {
		const char *name;
		unsigned sms, gpcs, cc_major, has_clc;
	} want[] = {
	    {"B200", 148, 8, 10, 1}, {"H100-SXM", 132, 8, 9, 0}, {"H100-PCIe", 114, 8, 9, 0},
	    {"H200", 132, 8, 9, 0},  {"A100-SXM", 108, 7, 8, 0},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct cta_device_model *m = cta_device_find(want[i].name);

		assert_non_null(m);
		assert_string_equal(m->name, want[i].name);
		assert_int_equal(m->sm_count, want[i].sms);
		assert_int_equal(m->gpc_count, want[i].gpcs);
		assert_int_equal(m->cc_major, want[i].cc_major);
		assert_int_equal(m->has_clc, want[i].has_clc);
		assert_int_equal(m->sms_per_tpc, 2);
		/* The parts with reference traces ship the fitted sweep rule. */
		int fitted = !strcmp(want[i].name, "H100-SXM") || !strcmp(want[i].name, "H200");
		assert_int_equal(m->placement, fitted ? CTA_PLACE_SWEEP : CTA_PLACE_SPREAD);
		assert_int_equal(m->fitted_on[0] != 0, fitted);
		assert_int_equal(m->priority_greatest, -5);
		assert_int_equal(m->priority_least, 0);
		for (unsigned s = 0; s < m->sm_count; s++)
			assert_int_equal(m->tpc_of_sm[s], s / 2);
	}
}

/* Each fitted preset carries the fit on its own GPU's traces: the H200's
 * sweep is the H100's, its durations and emulated-CLC costs its own
 * (far GPCs 1, 3, 4 and 7 against the H100's 1, 2, 3 and 7). */
static void fitted_presets_are_fitted_on_their_own_gpu(void **state)
{
	const struct cta_device_model *h100 = cta_device_find("H100-SXM");
	const struct cta_device_model *h200 = cta_device_find("H200");

	(void)state;
	assert_non_null(strstr(h100->fitted_on, "traces/reference/h100 "));
	assert_non_null(strstr(h200->fitted_on, "traces/reference/h200 "));
	assert_int_equal(h200->sweep_first_len, h100->sweep_first_len);
	assert_memory_equal(h200->sweep_first, h100->sweep_first,
	                    h100->sweep_first_len * sizeof(h100->sweep_first[0]));
	assert_int_equal(h200->sweep_prior_unit, h100->sweep_prior_unit);
	assert_int_equal(h200->sweep_rotate_prior, h100->sweep_rotate_prior);
	assert_int_equal(h200->spin_gate_threads, h100->spin_gate_threads);
	assert_int_equal(h100->clc_far_gpcs, 0x8e);
	assert_int_equal(h200->clc_far_gpcs, 0x9a);
	assert_int_not_equal(h200->spin_block_add_ns, h100->spin_block_add_ns);
	/* Both fits recorded clustered steal loops: a cluster barrier costs
	 * hundreds of ns where a block's costs 15 (docs/FIDELITY.md). */
	assert_true(h100->cluster_barrier_ns > 10 * h100->barrier_ns);
	assert_true(h200->cluster_barrier_ns > 10 * h200->barrier_ns);
}

/* A published H100 SXM SM-to-GPC query found 6 GPCs of 16 SMs and 2 of 18. */
static void h100_gpcs_hold_16_or_18_sms(void **state)
{
	const struct cta_device_model *m = cta_device_find("H100-SXM");
	unsigned per_gpc[8] = {0}, n16 = 0, n18 = 0;

	(void)state;
	for (unsigned s = 0; s < m->sm_count; s++)
		per_gpc[m->gpc_of_sm[s]]++;
	for (unsigned g = 0; g < 8; g++) {
		n16 += per_gpc[g] == 16;
		n18 += per_gpc[g] == 18;
	}
	assert_int_equal(n16, 6);
	assert_int_equal(n18, 2);
}

/* The H100 SXM map measured from cluster co-residence: %smid numbers TPCs
 * round robin over the GPCs. */
static void h100_sm_ids_interleave_gpcs_as_measured(void **state)
{
	const struct cta_device_model *m = cta_device_find("H100-SXM");
	static const struct {
		unsigned sm, gpc;
	} want[] = {
	    {0, 0},   {1, 0},   {2, 1},   {16, 0},  {48, 0},  {64, 1},  {70, 4},
	    {112, 4}, {116, 6}, {120, 6}, {122, 7}, {124, 0}, {131, 0}, {106, 1},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		assert_int_equal(m->gpc_of_sm[want[i].sm], want[i].gpc);
	assert_memory_equal(m->gpc_of_sm, cta_device_find("H200")->gpc_of_sm,
	                    132 * sizeof(m->gpc_of_sm[0]));
}

/* The other parts number their TPCs round robin over per-GPC counts. */
static void b200_tpcs_are_numbered_round_robin_over_gpcs(void **state)
{
	const struct cta_device_model *m = cta_device_find("B200");
	unsigned per_gpc[8] = {0};

	(void)state;
	for (unsigned s = 0; s < m->sm_count; s++)
		per_gpc[m->gpc_of_sm[s]]++;
	assert_int_equal(per_gpc[0], 20);
	assert_int_equal(per_gpc[1], 18);
	assert_int_equal(per_gpc[4], 20);
	assert_int_equal(per_gpc[7], 18);
	assert_int_equal(m->gpc_of_sm[0], 0);
	assert_int_equal(m->gpc_of_sm[2], 1);
	assert_int_equal(m->gpc_of_sm[14], 7);
	assert_int_equal(m->gpc_of_sm[16], 0);
	/* The last round holds only the two GPCs with a tenth TPC. */
	assert_int_equal(m->gpc_of_sm[144], 0);
	assert_int_equal(m->gpc_of_sm[146], 4);
}

static void cc90_and_cc100_limits_match_the_programming_guide(void **state)
{
	const char *names[] = {"H100-SXM", "B200"};

	(void)state;
	for (int i = 0; i < 2; i++) {
		const struct cta_device_model *m = cta_device_find(names[i]);

		assert_int_equal(m->max_threads_per_sm, 2048);
		assert_int_equal(m->max_warps_per_sm, 64);
		assert_int_equal(m->max_blocks_per_sm, 32);
		assert_int_equal(m->max_threads_per_block, 1024);
		assert_int_equal(m->regs_per_sm, 65536);
		assert_int_equal(m->max_regs_per_thread, 255);
		assert_int_equal(m->smem_per_sm, 228 * 1024);
		assert_int_equal(m->max_smem_per_block, 227 * 1024);
		assert_int_equal(m->smem_reserved_per_block, 1024);
		assert_int_equal(m->reg_alloc_unit, 256);
		assert_int_equal(m->smem_alloc_unit, 128);
		assert_int_equal(m->max_cluster_size, 8);
	}
}

static void find_is_case_insensitive_and_knows_aliases(void **state)
{
	(void)state;
	assert_ptr_equal(cta_device_find("h100-sxm"), cta_device_find("H100-SXM"));
	assert_ptr_equal(cta_device_find("H100"), cta_device_find("H100-SXM"));
	assert_ptr_equal(cta_device_find("h100"), cta_device_find("H100-SXM"));
	assert_ptr_equal(cta_device_find("h100-pcie"), cta_device_find("H100-PCIe"));
	assert_ptr_equal(cta_device_find("b200"), cta_device_find("B200"));
	assert_ptr_equal(cta_device_find("A100"), cta_device_find("A100-SXM"));
	/* The CUDA runtime's names, as hardware traces record them. */
	assert_ptr_equal(cta_device_find("NVIDIA H100 80GB HBM3"), cta_device_find("H100-SXM"));
	assert_ptr_equal(cta_device_find("NVIDIA H100 PCIe"), cta_device_find("H100-PCIe"));
	assert_ptr_equal(cta_device_find("NVIDIA B200"), cta_device_find("B200"));
	assert_null(cta_device_find("H101"));
	assert_null(cta_device_find(""));
	assert_null(cta_device_find(NULL));
}

/* ---- validation ---- */

static void validate_rejects_inconsistent_models(void **state)
{
	struct cta_device_model m;
	char err[256];

	(void)state;
	m = *cta_device_find("H100");
	m.sm_count = 0;
	assert_int_equal(cta_device_validate(&m, err, sizeof(err)), CTA_EINVAL);
	assert_string_equal(err, "sm_count must not be 0");

	m = *cta_device_find("H100");
	m.sm_count = CTA_DEVICE_MAX_SMS + 1;
	assert_int_equal(cta_device_validate(&m, err, sizeof(err)), CTA_EINVAL);

	m = *cta_device_find("H100");
	m.gpc_of_sm[5] = 8;
	assert_int_equal(cta_device_validate(&m, err, sizeof(err)), CTA_EINVAL);
	assert_string_equal(err, "gpc_of_sm[5] = 8 is not below gpc_count (8)");

	m = *cta_device_find("H100");
	m.tpc_of_sm[131] = 66;
	assert_int_equal(cta_device_validate(&m, err, sizeof(err)), CTA_EINVAL);

	m = *cta_device_find("H100");
	m.max_threads_per_block = 4096;
	assert_int_equal(cta_device_validate(&m, err, sizeof(err)), CTA_EINVAL);

	m = *cta_device_find("H100");
	m.max_smem_per_block = m.smem_per_sm;
	assert_int_equal(cta_device_validate(&m, err, sizeof(err)), CTA_EINVAL);

	m = *cta_device_find("H100");
	snprintf(m.name, sizeof(m.name), "H100 # lab");
	assert_int_equal(cta_device_validate(&m, err, sizeof(err)), CTA_EINVAL);

	m = *cta_device_find("H100");
	m.priority_greatest = 1;
	assert_int_equal(cta_device_validate(&m, err, sizeof(err)), CTA_EINVAL);
}

static void validate_checks_the_placement_order(void **state)
{
	struct cta_device_model m = *cta_device_find("B200");
	char err[256];

	(void)state;
	m.placement = CTA_PLACE_ORDER;
	assert_int_equal(cta_device_validate(&m, err, sizeof(err)), CTA_EINVAL);
	assert_string_equal(err,
	                    "placement 'order' needs a non-empty placement_order or wave_order");
	m.placement_order_len = 3;
	m.placement_order[0] = 4;
	m.placement_order[1] = 0;
	m.placement_order[2] = 4;
	assert_int_equal(cta_device_validate(&m, err, sizeof(err)), CTA_EINVAL);
	assert_string_equal(err, "placement_order lists SM 4 twice");
	m.placement_order[2] = 148;
	assert_int_equal(cta_device_validate(&m, err, sizeof(err)), CTA_EINVAL);
	m.placement_order[2] = 147;
	assert_int_equal(cta_device_validate(&m, err, sizeof(err)), 0);
}

/* ---- model files ---- */

static void every_preset_round_trips_through_a_file(void **state)
{
	char path[512], err[256];

	(void)state;
	for (unsigned i = 0; i < cta_device_preset_count(); i++) {
		const struct cta_device_model *p = cta_device_preset(i);
		struct cta_device_model back;

		snprintf(path, sizeof(path), "%s/%s.model", tmpdir, p->name);
		assert_int_equal(cta_device_save(p, path, err, sizeof(err)), 0);
		memset(&back, 0xa5, sizeof(back));
		if (cta_device_load(&back, path, err, sizeof(err)) != 0)
			fail_msg("%s", err);
		assert_models_equal(p, &back);
	}
}

static void calibrated_placement_order_round_trips(void **state)
{
	struct cta_device_model m = *cta_device_find("H100-PCIe");

	(void)state;
	m.placement = CTA_PLACE_ORDER;
	m.placement_order_len = m.sm_count;
	for (unsigned i = 0; i < m.sm_count; i++)
		m.placement_order[i] = (uint16_t)((i * 7) % m.sm_count); /* 7 is coprime to 114 */
	m.launch_latency_ns = 1234567890123ull;
	snprintf(m.name, sizeof(m.name), "H100 PCIe calibrated");
	assert_save_round_trip(&m, "calibrated.model");
}

/* The duration model: lines load, save and load back; presets have none. */
static void spin_scale_lines_round_trip_and_look_up(void **state)
{
	struct cta_device_model m;
	char err[256];
	const char *text = "base = H100-SXM\n"
	                   "spin_scale = 2 1050000   # two resident blocks: 5% longer\n"
	                   "spin_scale = 8 1700000\n";

	(void)state;
	/* Presets fitted to traces carry a duration model; the others none. */
	for (unsigned i = 0; cta_device_preset(i); i++)
		for (unsigned r = 0; r <= CTA_DEVICE_MAX_RESIDENT; r++)
			assert_int_equal(cta_device_preset(i)->spin_scale_ppm[r] != 0,
			                 cta_device_preset(i)->fitted_on[0] && r >= 1 && r <= 5);
	assert_int_equal(cta_device_spin_scale_ppm(cta_device_find("B200"), 3), 0);
	/* The H100's slow blocks are the issue gate's (blocks past 1024
	 * threads wait): the factors stay near 1, and above the fitted
	 * indices the last one holds. */
	assert_int_equal(cta_device_find("H100")->spin_gate_threads, 1024);
	assert_int_equal(cta_device_find("B200")->spin_gate_threads, 0);
	assert_true(cta_device_spin_scale_ppm(cta_device_find("H100"), 3) > 950000);
	assert_true(cta_device_spin_scale_ppm(cta_device_find("H100"), 3) < 1050000);
	assert_int_equal(cta_device_spin_scale_ppm(cta_device_find("H100"), 8),
	                 cta_device_spin_scale_ppm(cta_device_find("H100"), 5));
	assert_int_equal(cta_device_load(&m, write_file("spin.model", text), err, sizeof(err)), 0);
	assert_int_equal(m.spin_scale_ppm[2], 1050000);
	assert_int_equal(m.spin_scale_ppm[8], 1700000);
	/* Below the smallest given count: the smallest's; between: the one below;
	 * above the largest: the largest's. */
	assert_int_equal(cta_device_spin_scale_ppm(&m, 1), 1050000);
	assert_int_equal(cta_device_spin_scale_ppm(&m, 2), 1050000);
	assert_int_equal(cta_device_spin_scale_ppm(&m, 7), 1050000);
	assert_int_equal(cta_device_spin_scale_ppm(&m, 8), 1700000);
	assert_int_equal(cta_device_spin_scale_ppm(&m, 1000), 1700000);
	/* A table of its own without spin_gate_threads (fitted before the
	 * gate existed) has no gate; with the key, it keeps it. */
	assert_int_equal(m.spin_gate_threads, 0);
	assert_save_round_trip(&m, "spin_saved.model");
	const char *gated = "base = H100-SXM\n"
	                    "spin_gate_threads = 768\n"
	                    "spin_scale = 2 1050000\n";
	assert_int_equal(cta_device_load(&m, write_file("gate.model", gated), err, sizeof(err)), 0);
	assert_int_equal(m.spin_gate_threads, 768);
	assert_save_round_trip(&m, "gate_saved.model");
	assert_int_equal(cta_device_load(&m,
	                                 write_file("gate_only.model",
	                                            "base = H100-SXM\nspin_gate_threads = 0\n"),
	                                 err, sizeof(err)),
	                 0);
	assert_int_equal(m.spin_gate_threads, 0);
	assert_int_equal(m.spin_scale_ppm[1], cta_device_find("H100")->spin_scale_ppm[1]);
	assert_true(cta_device_load(&m,
	                            write_file("gate_bad.model",
	                                       "base = H100-SXM\nspin_gate_threads = 70000\n"),
	                            err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "spin_gate_threads"));
	/* The register file's gate: the fitted presets carry it (1), a table
	 * of its own without the key has none, the key reads back, and a
	 * value past 64 is refused by name. */
	assert_int_equal(cta_device_find("H100")->spin_regs_free, 1);
	assert_int_equal(cta_device_find("H200")->spin_regs_free, 1);
	assert_int_equal(cta_device_find("B200")->spin_regs_free, 0);
	assert_int_equal(cta_device_load(&m, write_file("spin3.model", text), err, sizeof(err)), 0);
	assert_int_equal(m.spin_regs_free, 0);
	assert_int_equal(
	    cta_device_load(&m, write_file("regs.model", "base = H100-SXM\nspin_regs_free = 2\n"),
	                    err, sizeof(err)),
	    0);
	assert_int_equal(m.spin_regs_free, 2);
	assert_save_round_trip(&m, "regs_saved.model");
	assert_true(cta_device_load(
	                &m, write_file("regs_bad.model", "base = H100-SXM\nspin_regs_free = 65\n"),
	                err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "spin_regs_free"));
	/* Its longest wait: the fitted presets carry it, a table of its own
	 * without the key has none, the key reads back. */
	assert_int_equal(cta_device_find("H100")->spin_regs_wait_ns, 60700);
	assert_int_equal(cta_device_find("H200")->spin_regs_wait_ns, 60600);
	assert_int_equal(cta_device_load(&m, write_file("spin4.model", text), err, sizeof(err)), 0);
	assert_int_equal(m.spin_regs_wait_ns, 0);
	assert_int_equal(cta_device_load(&m,
	                                 write_file("regs_wait.model",
	                                            "base = H100-SXM\nspin_regs_wait_ns = 45000\n"),
	                                 err, sizeof(err)),
	                 0);
	assert_int_equal(m.spin_regs_wait_ns, 45000);
	assert_save_round_trip(&m, "regs_wait_saved.model");
	/* The late entry and the end hold: the presets carry their fits (the
	 * H200's traces have no later-wave block at the gate's level: no
	 * late entry), a table of its own without the keys has neither, the
	 * keys read back, and a hold past 64 warps is refused by name. */
	assert_int_equal(cta_device_find("H100")->spin_regs_late_ns, 1899);
	assert_int_equal(cta_device_find("H200")->spin_regs_late_ns, 0);
	assert_int_equal(cta_device_find("H100")->spin_regs_hold_warps, 2);
	assert_int_equal(cta_device_find("H200")->spin_regs_hold_warps, 2);
	assert_int_equal(cta_device_find("B200")->spin_regs_hold_warps, 0);
	/* The sub-partitions by placement order: fitted on the H100's
	 * 64-thread grids; the H200's traces have none (its fit keeps 0). */
	assert_int_equal(cta_device_find("H100")->spin_regs_order, 1);
	assert_int_equal(cta_device_find("H200")->spin_regs_order, 0);
	/* The blocks the gate lets by: fitted on each GPU's later waves of
	 * two blocks an SM. */
	assert_int_equal(cta_device_find("H100")->spin_regs_pass_ppm, 125316);
	assert_int_equal(cta_device_find("H100")->spin_regs_pass_blocks, 2);
	assert_int_equal(cta_device_find("H200")->spin_regs_pass_ppm, 166030);
	assert_int_equal(cta_device_find("H200")->spin_regs_pass_blocks, 2);
	assert_int_equal(cta_device_find("B200")->spin_regs_pass_ppm, 0);
	assert_int_equal(cta_device_load(&m, write_file("spin5.model", text), err, sizeof(err)), 0);
	assert_int_equal(m.spin_regs_late_ns, 0);
	assert_int_equal(m.spin_regs_hold_warps, 0);
	assert_int_equal(m.spin_regs_order, 0);
	assert_int_equal(m.spin_regs_pass_ppm, 0);
	assert_int_equal(cta_device_load(&m,
	                                 write_file("regs_late.model",
	                                            "base = H100-SXM\nspin_regs_late_ns = 2500\n"
	                                            "spin_regs_hold_warps = 3\n"
	                                            "spin_regs_pass_ppm = 50000\n"
	                                            "spin_regs_pass_blocks = 3\n"),
	                                 err, sizeof(err)),
	                 0);
	assert_int_equal(m.spin_regs_late_ns, 2500);
	assert_int_equal(m.spin_regs_hold_warps, 3);
	assert_int_equal(m.spin_regs_pass_ppm, 50000);
	assert_int_equal(m.spin_regs_pass_blocks, 3);
	assert_save_round_trip(&m, "regs_late_saved.model");
	assert_true(cta_device_load(&m,
	                            write_file("regs_hold_bad.model",
	                                       "base = H100-SXM\nspin_regs_hold_warps = 65\n"),
	                            err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "spin_regs_hold_warps"));
	assert_int_equal(cta_device_load(&m, write_file("spin2.model", text), err, sizeof(err)), 0);
	m.spin_scale_ppm[3] = CTA_DEVICE_SPIN_SCALE_MAX + 1;
	assert_int_equal(cta_device_validate(&m, err, sizeof(err)), CTA_EINVAL);
	assert_non_null(strstr(err, "spin_scale for 3 resident blocks"));
}

/* spin_add: 0 is a value; the lookup is spin_scale's; save and load back. */
static void spin_add_lines_round_trip_and_look_up(void **state)
{
	struct cta_device_model m;
	char err[256];
	const char *text = "base = H100-SXM\n"
	                   "spin_add = 2 1068   # ns per cta_spin_ns call\n"
	                   "spin_add = 5 0\n"
	                   "spin_scale = 2 1000178\n";

	(void)state;
	for (unsigned i = 0; cta_device_preset(i); i++)
		assert_true((cta_device_preset(i)->spin_add_mask == 0) ==
		            !cta_device_preset(i)->fitted_on[0]);
	assert_int_equal(cta_device_spin_add_ns(cta_device_find("B200"), 3), 0);
	assert_int_equal(cta_device_load(&m, write_file("add.model", text), err, sizeof(err)), 0);
	assert_int_equal(m.spin_add_ns[2], 1068);
	assert_int_equal(m.spin_add_ns[5], 0);
	assert_true(m.spin_add_mask == ((1ull << 1) | (1ull << 4)));
	assert_int_equal(cta_device_spin_add_ns(&m, 1), 1068);
	assert_int_equal(cta_device_spin_add_ns(&m, 4), 1068);
	assert_int_equal(cta_device_spin_add_ns(&m, 5), 0);
	assert_int_equal(cta_device_spin_add_ns(&m, 64), 0);
	assert_int_equal(cta_device_spin_add_ns(&m, 1000), 0);
	assert_save_round_trip(&m, "add_saved.model");
	m.spin_add_ns[3] = 7; /* a value without its mask bit */
	assert_int_equal(cta_device_validate(&m, err, sizeof(err)), CTA_EINVAL);
	assert_non_null(strstr(err, "spin_add for 3 resident blocks"));
	m.spin_add_ns[3] = 0;
	m.spin_add_ns[2] = CTA_DEVICE_SPIN_ADD_MAX + 1;
	assert_int_equal(cta_device_validate(&m, err, sizeof(err)), CTA_EINVAL);
}

static void malformed_spin_add_lines_are_reported(void **state)
{
	(void)state;
	expect_error("base = H100\nspin_add = 9\n", 2,
	             "spin_add: expected 'RESIDENT NS' (two numbers), got '9'");
	expect_error("base = H100\nspin_add = 0 100\n", 2,
	             "spin_add: resident count 0 is out of range (1 .. 64)");
	expect_error("base = H100\nspin_add = 65 100\n", 2,
	             "spin_add: resident count 65 is out of range (1 .. 64)");
	expect_error("base = H100\nspin_add = 1 1.5\n", 2,
	             "spin_add: bad time '1.5' (nanoseconds, an integer)");
	expect_error("base = H100\nspin_add = 1 -3\n", 2,
	             "spin_add: bad time '-3' (nanoseconds, an integer)");
	expect_error("base = H100\nspin_add = 1 1000000001\n", 2,
	             "spin_add: 1000000001 ns is out of range (0 .. 1000000000)");
	expect_error("base = H100\nspin_add = 4 10\n\nspin_add = 4 20\n", 4,
	             "second spin_add for 4 resident blocks (first on line 2)");
}

static void malformed_spin_scale_lines_are_reported(void **state)
{
	(void)state;
	expect_error("base = H100\nspin_scale = 9\n", 2,
	             "spin_scale: expected 'RESIDENT PPM' (two numbers), got '9'");
	expect_error("base = H100\nspin_scale = 0 1000000\n", 2,
	             "spin_scale: resident count 0 is out of range (1 .. 64)");
	expect_error("base = H100\nspin_scale = 65 1000000\n", 2,
	             "spin_scale: resident count 65 is out of range (1 .. 64)");
	expect_error("base = H100\nspin_scale = 1 1.05\n", 2,
	             "spin_scale: bad factor '1.05' (parts per million, an integer)");
	expect_error("base = H100\nspin_scale = 1 -5\n", 2,
	             "spin_scale: bad factor '-5' (parts per million, an integer)");
	expect_error("base = H100\nspin_scale = 1 0\n", 2,
	             "spin_scale: factor 0 ppm is out of range (1 .. 100000000; 1000000 is "
	             "unscaled)");
	expect_error("base = H100\n\nspin_scale = 4 1000000\nspin_scale = 4 1200000\n", 4,
	             "second spin_scale for 4 resident blocks (first on line 3)");
	expect_error("spin_scale = 4 1000000\nbase = H100\n", 2,
	             "'base' must come before any other key");
}

static void save_refuses_an_invalid_model(void **state)
{
	struct cta_device_model m = *cta_device_find("H100");
	char path[512], err[256];

	(void)state;
	m.warp_size = 0;
	snprintf(path, sizeof(path), "%s/invalid.model", tmpdir);
	assert_int_equal(cta_device_save(&m, path, err, sizeof(err)), CTA_EINVAL);
	assert_int_equal(access(path, F_OK), -1);
}

static void base_preset_is_overridden_by_later_keys(void **state)
{
	struct cta_device_model m;
	char err[256];
	const char *path = write_file("override.model", "# an H100 with a faster launch\n"
	                                                "\n"
	                                                "base = h100   # alias, any case\n"
	                                                "name = H100 tuned\n"
	                                                "launch_latency_ns = 1800\n"
	                                                "placement = round_robin\n");

	(void)state;
	assert_int_equal(cta_device_load(&m, path, err, sizeof(err)), 0);
	assert_string_equal(m.name, "H100 tuned");
	assert_int_equal(m.launch_latency_ns, 1800);
	assert_int_equal(m.placement, CTA_PLACE_ROUND_ROBIN);
	assert_int_equal(m.sm_count, 132);
	assert_memory_equal(m.gpc_of_sm, cta_device_find("H100")->gpc_of_sm,
	                    132 * sizeof(m.gpc_of_sm[0]));
}

/* Changing the SM count without arrays lays the SMs out evenly. */
static void smaller_sm_count_gets_an_even_layout(void **state)
{
	struct cta_device_model m;
	char err[256];
	const char *path = write_file("half.model", "base = B200\n"
	                                            "sm_count = 66\n"
	                                            "gpc_count = 4\n");
	unsigned per_gpc[4] = {0};

	(void)state;
	assert_int_equal(cta_device_load(&m, path, err, sizeof(err)), 0);
	assert_int_equal(m.sm_count, 66);
	assert_int_equal(m.tpc_of_sm[65], 32);
	for (unsigned s = 0; s < 66; s++)
		per_gpc[m.gpc_of_sm[s]]++;
	/* 33 TPCs over 4 GPCs: 9, 8, 8, 8. */
	assert_int_equal(per_gpc[0], 18);
	assert_int_equal(per_gpc[1], 16);
	assert_int_equal(per_gpc[3], 16);
	assert_int_equal(cta_device_validate(&m, err, sizeof(err)), 0);
}

static void file_without_base_needs_every_scalar_key(void **state)
{
	(void)state;
	expect_error("name = Mine\n"
	             "cc_major = 9\n",
	             2, "missing required key 'cc_minor'");
}

static void unknown_key_suggests_the_nearest(void **state)
{
	(void)state;
	expect_error("base = H100-SXM\n"
	             "# comment\n"
	             "\n"
	             "name = x\n"
	             "cc_major = 9\n"
	             "cc_minor = 0\n"
	             "sm_cont = 66\n",
	             7, "unknown key 'sm_cont' (did you mean 'sm_count'?)");
	expect_error("base = H100-SXM\nfrobnicate = 1\n", 2, "unknown key 'frobnicate'");
}

static void bad_numbers_are_reported(void **state)
{
	(void)state;
	expect_error("base = H100\nsm_count = 12x\n", 2, "bad number '12x' for 'sm_count'");
	expect_error("base = H100\nsm_count = \n", 2, "missing value for 'sm_count'");
	expect_error("base = H100\nregs_per_sm = 0x10000\n", 2,
	             "bad number '0x10000' for 'regs_per_sm'");
	expect_error("base = H100\ngpc_of_sm = 0 0 one\n", 2, "bad number 'one' for 'gpc_of_sm'");
}

static void negative_and_out_of_range_values_are_reported(void **state)
{
	(void)state;
	expect_error("base = H100\nsm_count = -4\n", 2, "'sm_count' must not be negative (-4)");
	expect_error("base = H100\nsm_count = 5000\n", 2,
	             "value 5000 for 'sm_count' is out of range (at most 1024)");
	expect_error("base = H100\nhas_clc = 2\n", 2,
	             "value 2 for 'has_clc' is out of range (at most 1)");
	expect_error("base = H100\nbarrier_ns = 99999999999999999999999\n", 2,
	             "value 99999999999999999999999 for 'barrier_ns' is out of range");
	expect_error("base = H100\nregs_per_sm = 4294967296\n", 2,
	             "value 4294967296 for 'regs_per_sm' is out of range (at most 4294967295)");
}

static void duplicate_keys_are_reported_with_both_lines(void **state)
{
	(void)state;
	expect_error("base = H100\nsm_count = 66\nwarp_size = 32\nsm_count = 64\n", 4,
	             "duplicate key 'sm_count' (first set on line 2)");
	expect_error("base = H100\nbase = B200\n", 2, "duplicate key 'base' (first set on line 1)");
}

static void base_must_come_first_and_exist(void **state)
{
	(void)state;
	expect_error("name = x\nbase = H100\n", 2, "'base' must come before any other key");
	expect_error("base = H300\n", 1,
	             "unknown base preset 'H300' (presets: B200, H100-SXM, H100-PCIe, H200, "
	             "A100-SXM)");
}

static void arrays_must_have_one_entry_per_sm(void **state)
{
	(void)state;
	expect_error("base = H100\n\ngpc_of_sm = 0 0 1\n", 3,
	             "'gpc_of_sm' has 3 entries but sm_count is 132");
	expect_error("base = H100\ntpc_of_sm = 0 0 1 1\nsm_count = 6\n", 2,
	             "'tpc_of_sm' has 4 entries but sm_count is 6");
}

static void lines_need_key_equals_value(void **state)
{
	(void)state;
	expect_error("base = H100\nsm_count 66\n", 2, "expected 'key = value', got 'sm_count 66'");
	expect_error("base = H100\n = 66\n", 2, "missing key before '='");
}

static void placement_must_be_a_known_policy(void **state)
{
	(void)state;
	expect_error("base = H100\nplacement = random\n", 2,
	             "unknown placement 'random' (expected spread, round_robin, order or sweep)");
}

/* Rules that need the whole model point at the key they blame. */
static void inconsistent_file_points_at_the_blamed_key(void **state)
{
	(void)state;
	expect_error("base = B200\nplacement = order\nplacement_order = 3 1 3\n", 3,
	             "placement_order lists SM 3 twice");
	expect_error("base = B200\nplacement = order\n", 2,
	             "placement 'order' needs a non-empty placement_order or wave_order");
	expect_error("base = H100\nwarp_size = 0\n", 2, "warp_size must not be 0");
	expect_error("base = H100\n"
	             "sm_count = 4\n"
	             "gpc_count = 2\n"
	             "gpc_of_sm = 0 0 1 2\n",
	             4, "gpc_of_sm[3] = 2 is not below gpc_count (2)");
}

static void missing_file_is_not_found(void **state)
{
	struct cta_device_model m;
	char err[512], want[600];
	char path[300];

	(void)state;
	snprintf(path, sizeof(path), "%s/no-such.model", tmpdir);
	assert_int_equal(cta_device_load(&m, path, err, sizeof(err)), CTA_ENOTFOUND);
	snprintf(want, sizeof(want), "%s: cannot open: No such file or directory", path);
	assert_string_equal(err, want);
}

/* ---- resolve ---- */

static void resolve_prefers_presets_then_files(void **state)
{
	struct cta_device_model m;
	char err[512];
	const char *path;

	(void)state;
	assert_int_equal(cta_device_resolve(&m, "b200", err, sizeof(err)), 0);
	assert_string_equal(m.name, "B200");
	path = write_file("mine.model", "base = H200\nname = My H200\n");
	assert_int_equal(cta_device_resolve(&m, path, err, sizeof(err)), 0);
	assert_string_equal(m.name, "My H200");
	assert_int_equal(m.sm_count, 132);
}

static void resolve_unknown_name_lists_the_presets(void **state)
{
	struct cta_device_model m;
	char err[512];

	(void)state;
	assert_int_equal(cta_device_resolve(&m, "H300", err, sizeof(err)), CTA_ENOTFOUND);
	assert_string_equal(err, "'H300' is neither a device preset (B200, H100-SXM, H100-PCIe, "
	                         "H200, A100-SXM) nor a model file");
}

static void resolve_reports_a_broken_file(void **state)
{
	struct cta_device_model m;
	char err[512], want[600];
	const char *path = write_file("broken.model", "base = H100\nsm_count = lots\n");

	(void)state;
	assert_int_equal(cta_device_resolve(&m, path, err, sizeof(err)), CTA_EPARSE);
	snprintf(want, sizeof(want), "%s:2: bad number 'lots' for 'sm_count'", path);
	assert_string_equal(err, want);
}

/* The sweep rule against first waves recorded on an H100 80GB HBM3
 * (traces/reference/h100/, every run alike): SMs 124-131 first, one block
 * per TPC on the lowest TPC ids, visited GPC by GPC; both SMs of a TPC
 * once the pass has more blocks than TPCs; SMs 124-131 again after 2
 * (grids below 512 blocks) or 3 GPC steps; from 768 blocks on they start
 * at 128. */
static void sweep_rule_gives_the_recorded_h100_first_waves(void **state)
{
	(void)state;
	const struct cta_device_model *m = cta_device_find("H100");
	static unsigned out[2112];
	unsigned len = 0;
	/* 16 blocks: SMs 124-131, then the first SM of TPCs 0-7 (one per GPC). */
	assert_int_equal(cta_device_sweep_order(m, 132, 16, 16, out, &len), 0);
	assert_int_equal(len, 16);
	for (unsigned i = 0; i < 16; i++)
		assert_int_equal(out[i], i < 8 ? 124 + i : 2 * (i - 8));
	/* 33 blocks: TPCs 0-24 singly, GPC 0's (0, 8, 16, 24) first. */
	const unsigned g33[] = {124, 125, 126, 127, 128, 129, 130, 131,
	                        0,   16,  32,  48,  2,   18,  34,  4};
	assert_int_equal(cta_device_sweep_order(m, 132, 33, 33, out, &len), 0);
	assert_int_equal(len, 33);
	for (unsigned i = 0; i < sizeof(g33) / sizeof(g33[0]); i++)
		assert_int_equal(out[i], g33[i]);
	assert_int_equal(out[32], 46);
	/* 80 blocks: 62 TPCs singly, then the second SM of TPCs 0-9. */
	const unsigned g80[] = {124, 125, 126, 127, 128, 129, 130, 131, 0, 1, 16, 17, 32, 48, 2, 3};
	assert_int_equal(cta_device_sweep_order(m, 132, 80, 80, out, &len), 0);
	for (unsigned i = 0; i < sizeof(g80) / sizeof(g80[0]); i++)
		assert_int_equal(out[i], g80[i]);
	assert_int_equal(out[79], 122);
	/* 264 blocks, two per SM: the second turn of 124-131 after two GPC
	 * steps (8 + 16 blocks). */
	assert_int_equal(cta_device_sweep_order(m, 132, 264, 264, out, &len), 0);
	assert_int_equal(len, 264);
	assert_int_equal(out[31], 107);
	assert_int_equal(out[32], 124);
	assert_int_equal(out[40], 4);
	/* 1056 blocks, eight per SM: turns after 40, 88, 132 and 230 blocks of
	 * the sweep, each starting at SM 128. */
	assert_int_equal(cta_device_sweep_order(m, 132, 1056, 1056, out, &len), 0);
	assert_int_equal(len, 1056);
	const unsigned at[] = {0, 48, 104, 156, 262};
	for (unsigned i = 0; i < sizeof(at) / sizeof(at[0]); i++) {
		assert_int_equal(out[at[i]], 128);
		assert_int_equal(out[at[i] + 4], 124);
	}
	/* Every SM gets eight. */
	unsigned per[132] = {0};
	for (unsigned i = 0; i < len; i++)
		per[out[i]]++;
	for (unsigned i = 0; i < 132; i++)
		assert_int_equal(per[i], 8);
	/* Fewer SMs than the model: only those, none of 124-131. */
	assert_int_equal(cta_device_sweep_order(m, 100, 100, 100, out, &len), 0);
	assert_int_equal(len, 100);
	for (unsigned i = 0; i < len; i++)
		assert_true(out[i] < 100);
	assert_int_equal(cta_device_sweep_order(m, 133, 1, 1, out, &len), CTA_EINVAL);
}

/* Where the sweep starts is left by the launch before (the CUDA
 * backend's record-slot clear, one block per 256 of the grid on the H100,
 * traces/reference/h100/prior_*): its blocks past SMs 124-131 took one GPC
 * each, so a 2500-block grid (9 of them) starts at GPC 1 and deals GPC 0
 * last, as the H100 did (traces/reference/h100-occupancy-holdout); from
 * 33 of them the turns come late; a model with no launch before starts at
 * GPC 0 with the turns early. */
/* Clustered launches (traces/reference/h100/place_cluster_*): a 2-CTA
 * cluster a TPC, SMs 124-131's TPCs first, then the others in id order;
 * a clear of 1 or 2 blocks starts the first TPCs at the second (SM 126), of
 * 3 at the fourth (SM 130), of 4 or more at the first, in every pass; a
 * clear of 9 to 15 blocks starts each row of the first pass at GPC M - 8. */
static void cluster_sweep_starts_where_the_launch_before_left_it(void **state)
{
	(void)state;
	const struct cta_device_model *h100 = cta_device_find("H100");
	static unsigned out[1056];
	unsigned len = 0;
	assert_int_equal(cta_device_cluster_sweep_order(h100, 132, 528, 264, out, &len), 0);
	assert_int_equal(len, 264);
	assert_int_equal(out[0], 126);
	assert_int_equal(out[1], 127);
	assert_int_equal(out[6], 124);
	assert_int_equal(out[8], 0);
	assert_int_equal(out[132], 126); /* the second pass starts there too */
	assert_int_equal(cta_device_cluster_sweep_order(h100, 132, 800, 264, out, &len), 0);
	assert_int_equal(out[0], 130);
	assert_int_equal(out[2], 124);
	assert_int_equal(cta_device_cluster_sweep_order(h100, 132, 1056, 264, out, &len), 0);
	assert_int_equal(out[0], 124);
	assert_int_equal(out[8], 0);
	/* 2640 blocks (10): every row of the first pass from GPC 2, so TPCs
	 * 2-7, 0, 1, then 10-15, 8, 9, ...; 33-38, 32 in the rows of GPCs
	 * 1-7; the second pass in id order. */
	assert_int_equal(cta_device_cluster_sweep_order(h100, 132, 2640, 264, out, &len), 0);
	assert_int_equal(out[0], 124);
	assert_int_equal(out[8], 4);
	assert_int_equal(out[20], 0);
	assert_int_equal(out[24], 20);
	assert_int_equal(out[72], 66); /* TPC 33, the row of GPCs 1-7 */
	assert_int_equal(out[84], 64); /* ... ends at TPC 32 */
	assert_int_equal(out[140], 0);
	/* 256-thread blocks: 528 clusters, the same order pass after pass. */
	assert_int_equal(cta_device_cluster_sweep_order(h100, 132, 2112, 1056, out, &len), 0);
	assert_int_equal(len, 1056);
	for (unsigned i = 0; i < len; i++)
		assert_int_equal(out[i], out[i % 132]);
	/* No launch before: the first TPCs from SM 124, rows from GPC 0. */
	struct cta_device_model idle = *h100;
	idle.sweep_prior_unit = 0;
	assert_int_equal(cta_device_cluster_sweep_order(&idle, 132, 2640, 264, out, &len), 0);
	assert_int_equal(out[0], 124);
	assert_int_equal(out[8], 0);
	assert_int_equal(cta_device_cluster_sweep_order(NULL, 132, 264, 264, out, &len),
	                 CTA_EINVAL);
}

static void sweep_starts_where_the_launch_before_left_it(void **state)
{
	(void)state;
	const struct cta_device_model *h100 = cta_device_find("H100");
	static unsigned out[1320];
	unsigned len = 0;
	assert_int_equal(cta_device_sweep_order(h100, 132, 2500, 1056, out, &len), 0);
	assert_int_equal(len, 1056);
	assert_int_equal(out[0], 128);
	assert_int_equal(out[8], 2);     /* GPC 1's TPC 1 */
	assert_int_equal(out[24], 4);    /* then GPC 2's TPC 2 */
	assert_int_equal(out[140], 0);   /* GPC 0 last in the first pass */
	assert_int_equal(out[1055], 49); /* and last of the wave */
	/* 2640 blocks (10): GPC 2 first; 2112 (8), 5000 (19) and 6450 (25: a
	 * clear of 16 blocks or more ends where it began): GPC 0. */
	assert_int_equal(cta_device_sweep_order(h100, 132, 2640, 1320, out, &len), 0);
	assert_int_equal(out[8], 4);
	assert_int_equal(cta_device_sweep_order(h100, 132, 2112, 1056, out, &len), 0);
	assert_int_equal(out[8], 0);
	assert_int_equal(cta_device_sweep_order(h100, 132, 5000, 1056, out, &len), 0);
	assert_int_equal(out[8], 0);
	assert_int_equal(out[0], 128);
	assert_int_equal(cta_device_sweep_order(h100, 132, 6450, 1056, out, &len), 0);
	assert_int_equal(out[8], 0);
	assert_int_equal(out[48], 128); /* turn after 3 GPC steps */
	/* 8448 blocks (33): the turns one GPC step late, after 4. */
	assert_int_equal(cta_device_sweep_order(h100, 132, 8448, 1056, out, &len), 0);
	assert_int_equal(out[8], 0);
	assert_int_equal(out[48], 6);
	assert_int_equal(out[64], 128);
	/* 500 blocks (one): the turn after two GPC steps, from SM 124; 512
	 * (two): after three (traces/reference/h100-clc-holdout's g512). */
	assert_int_equal(cta_device_sweep_order(h100, 132, 500, 264, out, &len), 0);
	assert_int_equal(out[0], 124);
	assert_int_equal(out[32], 124);
	assert_int_equal(cta_device_sweep_order(h100, 132, 512, 512, out, &len), 0);
	assert_int_equal(out[32], 4);
	assert_int_equal(out[48], 124);
	/* No launch before: GPC 0 first, SM 124 first, turns early (after 2,
	 * 5, 8 and 13 GPC steps, as a launch recorded without the clear). */
	struct cta_device_model idle = *h100;
	idle.sweep_prior_unit = 0;
	assert_int_equal(cta_device_sweep_order(&idle, 132, 2500, 1056, out, &len), 0);
	assert_int_equal(out[0], 124);
	assert_int_equal(out[8], 0);
	assert_int_equal(out[32], 124);
	unsigned turns = 0, steps = 0, last = 0;
	for (unsigned i = 8; i < len && turns < 4; i++) {
		int first = out[i] >= 124;
		if (first && !last)
			turns++;
		if (!first && (!i || out[i - 1] >= 124 ||
		               h100->gpc_of_sm[out[i]] != h100->gpc_of_sm[out[i - 1]]))
			steps++;
		if (turns == 4) {
			assert_int_equal(steps, 13);
			break;
		}
		last = first;
	}
	assert_int_equal(turns, 4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(every_preset_validates),
	    cmocka_unit_test(presets_have_the_published_sm_counts),
	    cmocka_unit_test(fitted_presets_are_fitted_on_their_own_gpu),
	    cmocka_unit_test(sweep_rule_gives_the_recorded_h100_first_waves),
	    cmocka_unit_test(sweep_starts_where_the_launch_before_left_it),
	    cmocka_unit_test(cluster_sweep_starts_where_the_launch_before_left_it),
	    cmocka_unit_test(h100_gpcs_hold_16_or_18_sms),
	    cmocka_unit_test(h100_sm_ids_interleave_gpcs_as_measured),
	    cmocka_unit_test(b200_tpcs_are_numbered_round_robin_over_gpcs),
	    cmocka_unit_test(cc90_and_cc100_limits_match_the_programming_guide),
	    cmocka_unit_test(find_is_case_insensitive_and_knows_aliases),
	    cmocka_unit_test(validate_rejects_inconsistent_models),
	    cmocka_unit_test(validate_checks_the_placement_order),
	    cmocka_unit_test(every_preset_round_trips_through_a_file),
	    cmocka_unit_test(calibrated_placement_order_round_trips),
	    cmocka_unit_test(spin_scale_lines_round_trip_and_look_up),
	    cmocka_unit_test(malformed_spin_scale_lines_are_reported),
	    cmocka_unit_test(save_refuses_an_invalid_model),
	    cmocka_unit_test(base_preset_is_overridden_by_later_keys),
	    cmocka_unit_test(smaller_sm_count_gets_an_even_layout),
	    cmocka_unit_test(file_without_base_needs_every_scalar_key),
	    cmocka_unit_test(unknown_key_suggests_the_nearest),
	    cmocka_unit_test(bad_numbers_are_reported),
	    cmocka_unit_test(negative_and_out_of_range_values_are_reported),
	    cmocka_unit_test(duplicate_keys_are_reported_with_both_lines),
	    cmocka_unit_test(base_must_come_first_and_exist),
	    cmocka_unit_test(arrays_must_have_one_entry_per_sm),
	    cmocka_unit_test(lines_need_key_equals_value),
	    cmocka_unit_test(placement_must_be_a_known_policy),
	    cmocka_unit_test(inconsistent_file_points_at_the_blamed_key),
	    cmocka_unit_test(missing_file_is_not_found),
	    cmocka_unit_test(spin_add_lines_round_trip_and_look_up),
	    cmocka_unit_test(malformed_spin_add_lines_are_reported),
	    cmocka_unit_test(resolve_prefers_presets_then_files),
	    cmocka_unit_test(resolve_unknown_name_lists_the_presets),
	    cmocka_unit_test(resolve_reports_a_broken_file),
	};

	return cmocka_run_group_tests(tests, make_tmpdir, remove_tmpdir);
}
