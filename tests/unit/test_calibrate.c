/* Tests of the calibration math: synthetic traces made with known latencies
 * and a known SM order must give those values back, and inconsistent input
 * is refused with a message, and a model fitted against a preset passes the
 * model module's validation. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "ctasim/kernel.h"
#include "ctasim/sim.h"
#include "ctasim/tools.h"
#include "test_trace_synth.h"

static void base_model(struct cta_device_model *m)
{
	memset(m, 0, sizeof(*m));
	strcpy(m->name, "BASE");
	m->sm_count = 8;
	m->sms_per_tpc = 2;
	m->gpc_count = 2;
	for (unsigned i = 0; i < 8; i++) {
		m->tpc_of_sm[i] = (uint16_t)(i / 2);
		m->gpc_of_sm[i] = (uint16_t)(i / 4);
	}
	m->launch_latency_ns = 11;
	m->dispatch_latency_ns = 22;
	m->block_start_ns = 33;
	m->block_retire_ns = 44;
	m->cancel_latency_ns = 55;
	m->max_blocks_per_sm = 32;
}

static const uint16_t order8[8] = {0, 2, 4, 6, 1, 3, 5, 7};

static void synthetic_latencies_and_order_are_recovered(void **state)
{
	struct synth s = {.sms = 8,
	                  .slots = 2,
	                  .blocks = 200,
	                  .launch_ns = 4000,
	                  .dispatch_ns = 25,
	                  .retire_ns = 300,
	                  .block_start_ns = 120,
	                  .dispatch_records = 1,
	                  .dur_ns = 5000,
	                  .jitter_ns = 2000,
	                  .order = order8,
	                  .seed = 9,
	                  .t0 = 1000,
	                  .backend = "cuda"};
	struct cta_trace t;
	synth_make(&t, &s);
	const struct cta_trace *ts[1] = {&t};
	struct cta_device_model base, m;
	base_model(&base);
	struct cta_calib_report rep;
	char err[256] = "";
	/* Replaying the recorded wave is an option; the default fits the
	 * sweep rule over the base's topology. */
	struct cta_calib_opts replay = CTA_CALIB_OPTS_INIT;
	replay.replay_waves = 1;
	assert_int_equal(
	    cta_trace_calibrate_opts(&m, &rep, &base, ts, 1, &replay, err, sizeof(err)), 0);
	assert_int_equal(m.placement, CTA_PLACE_ORDER);
	assert_int_equal(m.wave_order_count, 1);
	assert_int_equal(cta_trace_calibrate(&m, &rep, &base, ts, 1, err, sizeof(err)), 0);
	assert_int_equal(m.placement, CTA_PLACE_SWEEP);
	assert_int_equal(m.wave_order_count, 0);
	assert_int_equal(rep.sweep_total, 16); /* two blocks on each of 8 SMs */
	assert_true(rep.sweep_placed <= rep.sweep_total);
	assert_int_equal(m.sm_count, 8);
	assert_int_equal(m.placement_order_len, 8);
	assert_memory_equal(m.placement_order, order8, sizeof(order8));
	/* Launch: first start minus launch minus nothing else. */
	assert_int_equal(m.launch_latency_ns, 4000);
	assert_int_equal(m.dispatch_latency_ns, 25);
	assert_int_equal(m.block_start_ns, 120);
	/* The end-to-start gap is retire + block start; the model adds the
	 * block start itself, so the fitted retire is what the synth used. */
	assert_int_equal(m.block_retire_ns, 300);
	/* No cancels in the trace: the base value stays. */
	assert_int_equal(m.cancel_latency_ns, 55);
	assert_int_equal(rep.n_cancel, 0);
	assert_true(rep.n_retire > 100);
	assert_int_equal(rep.kernels_used, 1);
	assert_string_equal(m.name, "BASE");
	assert_int_equal(m.max_blocks_per_sm, 32);
	synth_free(&t);
}

static void cancel_round_trip_is_recovered_from_stealing_trace(void **state)
{
	struct synth s = {.sms = 8,
	                  .slots = 1,
	                  .blocks = 100,
	                  .steal = 1,
	                  .cancel_ns = 700,
	                  .dur_ns = 3000,
	                  .jitter_ns = 500,
	                  .seed = 4};
	struct cta_trace t;
	synth_make(&t, &s);
	const struct cta_trace *ts[1] = {&t};
	struct cta_device_model base, m;
	base_model(&base);
	struct cta_calib_report rep;
	char err[256];
	assert_int_equal(cta_trace_calibrate(&m, &rep, &base, ts, 1, err, sizeof(err)), 0);
	assert_int_equal(m.cancel_latency_ns, 700);
	assert_int_equal(rep.n_cancel, 100); /* 92 successful steals and 8 final failures */
	synth_free(&t);
}

static void order_is_averaged_over_traces(void **state)
{
	/* Two traces that disagree on the first two SMs: A says 0,1,2,3, B
	 * says 1,0,2,3, a third agrees with A. The average ranks 0 first. */
	static const uint16_t oa[4] = {0, 1, 2, 3}, ob[4] = {1, 0, 2, 3};
	struct synth s = {.sms = 4, .slots = 1, .blocks = 16, .dispatch_ns = 10};
	struct cta_trace a, b, c;
	s.order = oa;
	synth_make(&a, &s);
	synth_make(&c, &s);
	s.order = ob;
	synth_make(&b, &s);
	const struct cta_trace *ts[3] = {&a, &b, &c};
	struct cta_device_model base, m;
	base_model(&base);
	struct cta_calib_report rep;
	char err[256];
	assert_int_equal(cta_trace_calibrate(&m, &rep, &base, ts, 3, err, sizeof(err)), 0);
	assert_int_equal(m.placement_order_len, 4);
	assert_int_equal(m.placement_order[0], 0);
	assert_int_equal(m.placement_order[1], 1);
	assert_int_equal(m.placement_order[2], 2);
	assert_int_equal(m.placement_order[3], 3);
	assert_int_equal(rep.traces, 3);
	assert_int_equal(rep.kernels_used, 3);
	/* 4 SMs seen, the base had 8: sm_count follows the traces, with a note. */
	assert_int_equal(m.sm_count, 4);
	assert_non_null(strstr(rep.note, "4 SMs observed"));
	synth_free(&a);
	synth_free(&b);
	synth_free(&c);
}

static void sms_beyond_the_base_get_topology(void **state)
{
	struct synth s = {.sms = 12, .slots = 1, .blocks = 24};
	struct cta_trace t;
	synth_make(&t, &s);
	const struct cta_trace *ts[1] = {&t};
	struct cta_device_model base, m;
	base_model(&base);
	char err[256];
	assert_int_equal(cta_trace_calibrate(&m, NULL, &base, ts, 1, err, sizeof(err)), 0);
	assert_int_equal(m.sm_count, 12);
	assert_int_equal(m.tpc_of_sm[11], 5);
	assert_int_equal(m.gpc_of_sm[11], 1);
	synth_free(&t);
}

static void sub_tick_latency_is_noted(void **state)
{
	struct synth s = {.sms = 4, .slots = 1, .blocks = 16, .launch_ns = 10, .tick_ns = 32};
	struct cta_trace t;
	synth_make(&t, &s);
	const struct cta_trace *ts[1] = {&t};
	struct cta_device_model base, m;
	base_model(&base);
	struct cta_calib_report rep;
	char err[256];
	assert_int_equal(cta_trace_calibrate(&m, &rep, &base, ts, 1, err, sizeof(err)), 0);
	assert_non_null(strstr(rep.note, "launch latency is below the timer tick (32 ns)"));
	synth_free(&t);
}

/* The fitted model must pass the model module's own checks, so that
 * cta_device_save writes it and `ctasim run --device` loads it. */
static void fit_against_preset(struct cta_device_model *m, struct cta_calib_report *rep,
                               const struct synth *s)
{
	const struct cta_device_model *h100 = cta_device_find("H100");
	assert_non_null(h100);
	struct cta_trace t;
	synth_make(&t, s);
	const struct cta_trace *ts[1] = {&t};
	char err[256] = "";
	assert_int_equal(cta_trace_calibrate(m, rep, h100, ts, 1, err, sizeof(err)), 0);
	if (cta_device_validate(m, err, sizeof(err)) != 0)
		fail_msg("fitted model does not validate: %s", err);
	synth_free(&t);
}

static void full_gpu_trace_gives_a_valid_model(void **state)
{
	struct synth s = {.sms = 132,
	                  .slots = 2,
	                  .blocks = 1000,
	                  .dispatch_ns = 3,
	                  .launch_ns = 2000,
	                  .retire_ns = 300};
	struct cta_device_model m;
	struct cta_calib_report rep;
	fit_against_preset(&m, &rep, &s);
	assert_int_equal(m.sm_count, 132);
	assert_int_equal(m.placement_order_len, 132);
	assert_string_equal(rep.note, "");
}

/* --block-ns: blocks of 1000 ns that asked for 500 give a factor of 2 at
 * one and at two resident blocks; without it no duration model is fitted;
 * a quantile outside 0..1 is refused. */
/* Two requested times at the same counts: blocks of 1300 ns that asked for
 * 1000 and of 4300 ns that asked for 4000 (named per kernel) give scale 1
 * and add 300 at one and two resident blocks; a third trace, duration only,
 * of blocks of 2300 ns that asked for 2000 at three per SM, adds a point on
 * the same line there and is the only time at three: spin_scale comes from
 * the add of the count below. A plain --block-ns on one time writes no
 * spin_add (the model of before). */
static void affine_duration_model_is_fitted(void **state)
{
	(void)state;
	const struct cta_device_model *h100 = cta_device_find("H100");
	struct synth a = {.sms = 4, .slots = 2, .blocks = 8, .dur_ns = 1300, .name = "short"};
	struct synth b = {.sms = 4, .slots = 2, .blocks = 8, .dur_ns = 4300, .name = "long"};
	struct synth c = {.sms = 4, .slots = 3, .blocks = 12, .dur_ns = 2300, .name = "three"};
	struct cta_trace ta, tb, tc;
	synth_make(&ta, &a);
	synth_make(&tb, &b);
	synth_make(&tc, &c);
	const struct cta_trace *ts[3] = {&ta, &tb, &tc};
	struct cta_calib_spin named[] = {{"short", 1000}, {"long", 4000}, {"three", 2000}};
	unsigned char donly[3] = {0, 0, 1};
	struct cta_calib_opts o = CTA_CALIB_OPTS_INIT;
	o.named = named;
	o.n_named = 3;
	o.duration_only = donly;
	struct cta_device_model m;
	struct cta_calib_report rep;
	char err[256] = "";
	assert_int_equal(cta_trace_calibrate_opts(&m, &rep, h100, ts, 3, &o, err, sizeof(err)), 0);
	assert_int_equal(m.spin_scale_ppm[1], 1000000);
	assert_int_equal(m.spin_add_ns[1], 300);
	assert_int_equal(m.spin_scale_ppm[2], 1000000);
	assert_int_equal(m.spin_add_ns[2], 300);
	/* Count 3 only in the third trace, one time: add from count 2, and
	 * (2300 - 300) / 2000 (without the add it would be 1.15). */
	assert_int_equal(rep.n_spin_lengths[1], 3);
	assert_int_equal(rep.n_spin_lengths[3], 1);
	assert_int_equal(m.spin_add_ns[3], 300);
	assert_int_equal(m.spin_scale_ppm[3], 1000000);
	assert_true(m.spin_add_mask == 7);
	/* The duration-only trace's kernel is not a measured wave. */
	for (unsigned w = 0; w < m.wave_order_count; w++)
		assert_true(m.wave_order[w].grid != 12);
	assert_int_equal(cta_device_validate(&m, err, sizeof(err)), 0);
	/* One requested time only: spin_scale alone, as before spin_add. */
	struct cta_calib_opts p = CTA_CALIB_OPTS_INIT;
	p.block_ns = 1000;
	assert_int_equal(cta_trace_calibrate_opts(&m, &rep, h100, ts, 1, &p, err, sizeof(err)), 0);
	assert_int_equal(m.spin_scale_ppm[1], 1300000);
	assert_true(m.spin_add_mask == 0);
	assert_int_equal(m.spin_add_ns[1], 0);
	synth_free(&ta);
	synth_free(&tb);
	synth_free(&tc);
}

/* The per-call add is what one more call costs: one-call blocks of 2000
 * and 5000 ns that asked for 1000 and 4000 fix the sum of the adds (1000);
 * blocks of 2 calls (2000 ns asked) lasting 3100 and of 9 calls (2016
 * asked) lasting 5216 lie on y = D - L = 500 + 300 x calls: the slope,
 * 300, is the per-call add and 1000 - 300 the per-block add. The
 * blocks' own (D - L - sum) / (calls - 1) would say 100 and 275. */
static void per_call_add_is_the_slope_over_call_counts(void **state)
{
	(void)state;
	const struct cta_device_model *h100 = cta_device_find("H100");
	struct synth a = {.sms = 4, .slots = 1, .blocks = 4, .dur_ns = 2000, .name = "short"};
	struct synth b = {.sms = 4, .slots = 1, .blocks = 4, .dur_ns = 5000, .name = "long"};
	struct synth c = {.sms = 4, .slots = 1, .blocks = 4, .dur_ns = 3100, .name = "two"};
	struct synth d = {.sms = 4, .slots = 1, .blocks = 4, .dur_ns = 5216, .name = "nine"};
	struct cta_trace t[4];
	synth_make(&t[0], &a);
	synth_make(&t[1], &b);
	synth_make(&t[2], &c);
	synth_make(&t[3], &d);
	const struct cta_trace *ts[4] = {&t[0], &t[1], &t[2], &t[3]};
	struct cta_calib_spin named[] = {{"short", 1000}, {"long", 4000}};
	uint32_t calls2[4] = {2, 2, 2, 2}, calls9[4] = {9, 9, 9, 9};
	uint64_t ns2[4] = {2000, 2000, 2000, 2000}, ns9[4] = {2016, 2016, 2016, 2016};
	struct cta_calib_work work[4] = {{0, NULL, NULL, NULL},
	                                 {0, NULL, NULL, NULL},
	                                 {4, calls2, ns2, NULL},
	                                 {4, calls9, ns9, NULL}};
	struct cta_calib_opts o = CTA_CALIB_OPTS_INIT;
	o.named = named;
	o.n_named = 2;
	o.work = work;
	struct cta_device_model m;
	struct cta_calib_report rep;
	char err[256] = "";
	assert_int_equal(cta_trace_calibrate_opts(&m, &rep, h100, ts, 4, &o, err, sizeof(err)), 0);
	assert_int_equal(m.spin_scale_ppm[1], 1000000);
	assert_int_equal(rep.n_call_split, 8);
	assert_int_equal(m.spin_add_ns[1], 300);
	assert_int_equal(m.spin_block_add_ns, 700);
	/* One call count only: the blocks' own estimates, at the quantile. */
	const struct cta_trace *ts3[3] = {&t[0], &t[1], &t[2]};
	assert_int_equal(cta_trace_calibrate_opts(&m, &rep, h100, ts3, 3, &o, err, sizeof(err)), 0);
	assert_int_equal(m.spin_add_ns[1], 100);
	assert_int_equal(m.spin_block_add_ns, 900);
	for (int i = 0; i < 4; i++)
		synth_free(&t[i]);
}

static void duration_model_is_fitted_per_resident_count(void **state)
{
	struct synth s = {.sms = 4, .slots = 2, .blocks = 8, .dur_ns = 1000};
	const struct cta_device_model *h100 = cta_device_find("H100");
	struct cta_trace t;
	synth_make(&t, &s);
	const struct cta_trace *ts[1] = {&t};
	struct cta_device_model m;
	struct cta_calib_report rep;
	char err[256] = "";
	/* Without requested times the base's duration model stays. */
	assert_int_equal(cta_trace_calibrate(&m, &rep, h100, ts, 1, err, sizeof(err)), 0);
	for (unsigned r = 0; r <= CTA_DEVICE_MAX_RESIDENT; r++)
		assert_int_equal(m.spin_scale_ppm[r], h100->spin_scale_ppm[r]);
	struct cta_calib_opts o = CTA_CALIB_OPTS_INIT;
	o.block_ns = 500;
	assert_int_equal(cta_trace_calibrate_opts(&m, &rep, h100, ts, 1, &o, err, sizeof(err)), 0);
	assert_int_equal(m.spin_scale_ppm[1], 2000000);
	assert_int_equal(m.spin_scale_ppm[2], 2000000);
	assert_int_equal(m.spin_scale_ppm[3], 0);
	assert_int_equal(rep.n_spin[1], 4);
	assert_int_equal(rep.n_spin[2], 4);
	assert_int_equal(cta_device_validate(&m, err, sizeof(err)), 0);
	o.quantile = 1.5;
	assert_int_equal(cta_trace_calibrate_opts(&m, &rep, h100, ts, 1, &o, err, sizeof(err)),
	                 CTA_EINVAL);
	assert_non_null(strstr(err, "duration quantile 1.5 is not between 0 and 1"));
	synth_free(&t);
}

/* Every block spins ns. */
struct cal_spin_args {
	unsigned long long ns;
};
CTA_KERNEL(cal_spin, struct cal_spin_args, p)
{
	cta_spin_ns(p->ns);
}

/* h100 with its spin model zeroed: a block lasts what it asks for. */
static struct cta_device_model spin_only(const struct cta_device_model *h100)
{
	struct cta_device_model d = *h100;
	memset(d.spin_scale_ppm, 0, sizeof(d.spin_scale_ppm));
	memset(d.spin_add_ns, 0, sizeof(d.spin_add_ns));
	d.spin_add_mask = 0;
	d.spin_block_add_ns = 0;
	return d;
}

/* The trace of `grid` cal_spin blocks of 256 threads (regs registers a
 * thread, 0 for none given), 20 us each, simulated on four SMs of d. */
static void spin_trace(struct cta_trace *t, const struct cta_device_model *d, const char *tag,
                       unsigned grid, unsigned regs)
{
	struct cta_sim_opts so = CTA_SIM_OPTS_INIT;
	so.device = *d;
	so.sm_limit = 4;
	so.threads = 1;
	char path[256];
	snprintf(path, sizeof(path), "%s/ctasim-test-%ld-%s.trace",
	         getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid(),
	         tag);
	so.trace_path = path;
	cta_sim *s;
	assert_int_equal(cta_sim_new(&s, &so), 0);
	struct cal_spin_args a = {20000};
	struct cta_launch l = {0};
	l.kernel = &cal_spin;
	l.grid[0] = grid;
	l.grid[1] = l.grid[2] = 1;
	l.block[0] = 256;
	l.block[1] = l.block[2] = 1;
	l.regs_per_thread = regs;
	l.args = &a;
	assert_int_equal(cta_sim_launch(s, &l, NULL), 0);
	assert_int_equal(cta_sim_run(s), 0);
	cta_sim_free(s);
	char err[256] = "";
	assert_int_equal(cta_trace_read(t, path, err, sizeof(err)), 0);
	remove(path);
}

/* The issue gate comes back from a trace the simulator made with it: 768
 * threads (not the preset's 1024) on four SMs of eight 256-thread blocks,
 * whose last four wait; a trace made without it gives none. The factors
 * then come from the blocks that ran at once: 1. */
static void issue_gate_is_recovered_from_a_simulated_trace(void **state)
{
	(void)state;
	const struct cta_device_model *h100 = cta_device_find("H100");
	for (unsigned gate = 0; gate <= 768; gate += 768) {
		struct cta_device_model d = spin_only(h100);
		d.spin_gate_threads = gate;
		struct cta_trace t;
		char err[256] = "";
		spin_trace(&t, &d, "gate", 32, 0);
		const struct cta_trace *ts[1] = {&t};
		struct cta_calib_opts o = CTA_CALIB_OPTS_INIT;
		o.block_ns = 20000;
		struct cta_device_model m;
		struct cta_calib_report rep;
		assert_int_equal(
		    cta_trace_calibrate_opts(&m, &rep, h100, ts, 1, &o, err, sizeof(err)), 0);
		assert_int_equal(m.spin_gate_threads, gate);
		assert_int_equal(cta_device_spin_scale_ppm(&m, 1), 1000000);
		assert_int_equal(cta_device_spin_scale_ppm(&m, 8), 1000000);
		assert_int_equal(cta_device_validate(&m, err, sizeof(err)), 0);
		cta_trace_free(&t);
	}
}

/* The register file's gate comes back from a trace the simulator made
 * with it: 40 blocks of 256 threads and 108 registers a thread (two an
 * SM by registers) on four SMs, 20 us each; in the later waves a block
 * that comes while another of its SM runs waits for it (level 0: its
 * warps and the running ones fill their sub-partitions). Without the gate
 * none waits, and none is fitted. A kernel that registers do not limit
 * leaves the base's value. */
static void register_gate_is_recovered_from_a_simulated_trace(void **state)
{
	(void)state;
	const struct cta_device_model *h100 = cta_device_find("H100");
	for (unsigned gate = 0; gate <= 2; gate++) {
		struct cta_device_model d = spin_only(h100);
		d.spin_regs_free = gate == 1;
		struct cta_trace t;
		char err[256] = "";
		spin_trace(&t, &d, "regs", 40, gate == 2 ? 0 : 108);
		const struct cta_trace *ts[1] = {&t};
		struct cta_calib_opts o = CTA_CALIB_OPTS_INIT;
		o.block_ns = 20000;
		struct cta_device_model base = *h100, m;
		base.spin_regs_free = 3;
		struct cta_calib_report rep;
		assert_int_equal(
		    cta_trace_calibrate_opts(&m, &rep, &base, ts, 1, &o, err, sizeof(err)), 0);
		assert_int_equal(m.spin_regs_free, gate == 2 ? 3 : gate);
		assert_int_equal(cta_device_validate(&m, err, sizeof(err)), 0);
		cta_trace_free(&t);
	}
}

/* Blocks 0-3 of every eight spin 4 ns, the others ns. */
CTA_KERNEL(cal_pairs, struct cal_spin_args, p)
{
	cta_spin_ns(blockIdx.x % 8 < 4 ? 4 * p->ns : p->ns);
}

/* The trace of `grid` blocks of `block` threads, 108 registers a thread,
 * of cal_spin (20 us) or, with `pairs`, cal_pairs, simulated on four SMs
 * of d. */
static void regs_trace(struct cta_trace *t, const struct cta_device_model *d, const char *tag,
                       unsigned grid, unsigned block, int pairs)
{
	struct cta_sim_opts so = CTA_SIM_OPTS_INIT;
	so.device = *d;
	so.sm_limit = 4;
	so.threads = 1;
	char path[256];
	snprintf(path, sizeof(path), "%s/ctasim-test-%ld-%s.trace",
	         getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid(),
	         tag);
	so.trace_path = path;
	cta_sim *s;
	assert_int_equal(cta_sim_new(&s, &so), 0);
	struct cal_spin_args a = {20000};
	struct cta_launch l = {0};
	l.kernel = pairs ? &cal_pairs : &cal_spin;
	l.grid[0] = grid;
	l.grid[1] = l.grid[2] = 1;
	l.block[0] = block;
	l.block[1] = l.block[2] = 1;
	l.regs_per_thread = 108;
	l.args = &a;
	assert_int_equal(cta_sim_launch(s, &l, NULL), 0);
	assert_int_equal(cta_sim_run(s), 0);
	cta_sim_free(s);
	char err[256] = "";
	assert_int_equal(cta_trace_read(t, path, err, sizeof(err)), 0);
	remove(path);
}

/* The late entry comes back from a trace the simulator made with it (64
 * threads, eight an SM, five waves, 2000 ns): the later blocks that begin
 * at the gate's level (one warp's registers free) outlast their time by
 * it, those with more free by nothing; a trace made without it gives
 * none. */
static void late_entry_is_recovered_from_a_simulated_trace(void **state)
{
	(void)state;
	const struct cta_device_model *h100 = cta_device_find("H100");
	for (unsigned late = 0; late <= 2000; late += 2000) {
		struct cta_device_model d = spin_only(h100);
		d.spin_regs_free = 1;
		d.spin_regs_late_ns = late;
		d.spin_regs_hold_warps = 0;
		struct cta_trace t;
		char err[256] = "";
		regs_trace(&t, &d, "late", 4 * 8 * 5, 64, 0);
		const struct cta_trace *ts[1] = {&t};
		struct cta_calib_opts o = CTA_CALIB_OPTS_INIT;
		o.block_ns = 20000;
		struct cta_device_model m;
		struct cta_calib_report rep;
		assert_int_equal(
		    cta_trace_calibrate_opts(&m, &rep, h100, ts, 1, &o, err, sizeof(err)), 0);
		assert_int_equal(m.spin_regs_free, 1);
		assert_int_equal(m.spin_regs_late_ns, late);
		assert_int_equal(cta_device_validate(&m, err, sizeof(err)), 0);
		cta_trace_free(&t);
	}
}

/* The blocks the gate lets by come back from a trace the simulator made
 * with them (256 threads, two an SM, 30 waves of 20 us on four SMs,
 * 300000 ppm at two blocks an SM): the share of the later blocks at the
 * gate's level that began at once is the draw's within half of it (about
 * a hundred such blocks; 355828 with seed 1), at two blocks an SM; a
 * trace made without them gives none. */
static void gate_passes_are_recovered_from_a_simulated_trace(void **state)
{
	(void)state;
	const struct cta_device_model *h100 = cta_device_find("H100");
	for (unsigned pass = 0; pass <= 300000; pass += 300000) {
		struct cta_device_model d = spin_only(h100);
		d.spin_regs_free = 1;
		d.spin_regs_late_ns = 0;
		d.spin_regs_hold_warps = 0;
		d.spin_regs_pass_ppm = pass;
		d.spin_regs_pass_blocks = 2;
		struct cta_trace t;
		char err[256] = "";
		regs_trace(&t, &d, "pass", 4 * 2 * 30, 256, 0);
		const struct cta_trace *ts[1] = {&t};
		struct cta_calib_opts o = CTA_CALIB_OPTS_INIT;
		o.block_ns = 20000;
		struct cta_device_model m;
		struct cta_calib_report rep;
		assert_int_equal(
		    cta_trace_calibrate_opts(&m, &rep, h100, ts, 1, &o, err, sizeof(err)), 0);
		assert_int_equal(m.spin_regs_free, 1);
		if (pass) {
			assert_int_equal(m.spin_regs_pass_blocks, 2);
			assert_true(m.spin_regs_pass_ppm >= pass / 2 &&
			            m.spin_regs_pass_ppm <= pass / 2 * 3);
		} else {
			assert_int_equal(m.spin_regs_pass_blocks, 0);
			assert_int_equal(m.spin_regs_pass_ppm, 0);
		}
		assert_int_equal(cta_device_validate(&m, err, sizeof(err)), 0);
		cta_trace_free(&t);
	}
}

/* The end hold comes back from a trace the simulator made with it:
 * 256-thread blocks, two an SM, blocks 0-3 of every eight 80 us and the
 * others 20 us (the first wave's SMs hold blocks b and b + 4); a 20 us
 * block of the first wave beside an 80 us one of a lower index (two of
 * its warps on each sub-partition) ends with it.
 * Those blocks alone cannot tell 1 from 2: the fit keeps 2. A trace made
 * without it gives none (no block ended with a longer one). */
static void end_hold_is_recovered_from_a_simulated_trace(void **state)
{
	(void)state;
	const struct cta_device_model *h100 = cta_device_find("H100");
	for (unsigned hold = 0; hold <= 2; hold += 2) {
		struct cta_device_model d = spin_only(h100);
		d.spin_regs_free = 0;
		d.spin_regs_late_ns = 0;
		d.spin_regs_hold_warps = hold;
		struct cta_trace t;
		char err[256] = "";
		regs_trace(&t, &d, "hold", 4 * 2 * 3, 256, 1);
		const struct cta_trace *ts[1] = {&t};
		uint32_t calls[24];
		uint64_t ns[24];
		for (unsigned b = 0; b < 24; b++) {
			calls[b] = 1;
			ns[b] = b % 8 < 4 ? 80000 : 20000;
		}
		struct cta_calib_work work[1] = {{24, calls, ns, NULL}};
		struct cta_calib_opts o = CTA_CALIB_OPTS_INIT;
		o.work = work;
		struct cta_device_model m;
		struct cta_calib_report rep;
		assert_int_equal(
		    cta_trace_calibrate_opts(&m, &rep, h100, ts, 1, &o, err, sizeof(err)), 0);
		assert_int_equal(m.spin_regs_hold_warps, hold);
		assert_int_equal(cta_device_validate(&m, err, sizeof(err)), 0);
		cta_trace_free(&t);
	}
}

/* The sub-partitions by placement order come back from a trace the
 * simulator made with them (64-thread blocks, eight an SM, blocks 0-3 of
 * every eight 80 us and the others 20 us, so that an SM's blocks end out
 * of their placement order): no start there overfills a sub-partition
 * with the blocks' warps taken in start order. A trace made with the
 * SM's warps dealt evenly gives 0, though the base (the H100-SXM preset)
 * has the rule. */
static void register_order_is_recovered_from_a_simulated_trace(void **state)
{
	(void)state;
	enum { G = 4 * 8 * 40 };
	const struct cta_device_model *h100 = cta_device_find("H100");
	assert_int_equal(h100->spin_regs_order, 1);
	static uint32_t calls[G];
	static uint64_t ns[G];
	for (unsigned b = 0; b < G; b++) {
		calls[b] = 1;
		ns[b] = b % 8 < 4 ? 80000 : 20000;
	}
	for (unsigned order = 0; order <= 1; order++) {
		struct cta_device_model d = spin_only(h100);
		d.spin_regs_order = order;
		struct cta_trace t;
		char err[256] = "";
		regs_trace(&t, &d, "order", G, 64, 1);
		const struct cta_trace *ts[1] = {&t};
		struct cta_calib_work work[1] = {{G, calls, ns, NULL}};
		struct cta_calib_opts o = CTA_CALIB_OPTS_INIT;
		o.work = work;
		struct cta_device_model m;
		struct cta_calib_report rep;
		assert_int_equal(
		    cta_trace_calibrate_opts(&m, &rep, h100, ts, 1, &o, err, sizeof(err)), 0);
		assert_int_equal(m.spin_regs_order, order);
		assert_int_equal(cta_device_validate(&m, err, sizeof(err)), 0);
		cta_trace_free(&t);
	}
}

/* The issue time comes from the blocks whose launch declared issue_ops
 * (work.issue: what their calls after the first charge at 1 ns an
 * instruction of a warp), against the blocks of as many calls without:
 * blocks of 2 calls (2000 ns asked) whose arithmetic would take 1000 ns
 * at 1 ns an instruction lasted 3700 where those without lasted 3100,
 * which leaves 600 ns for it: 600 ps an instruction. They are samples of
 * the per-call add too, whose (calls, ns) point is its blocks' median
 * (still 300: the slope over the 2- and 9-call blocks); without them the
 * base's issue time stays. */
static void issue_time_is_fitted_from_declared_arithmetic(void **state)
{
	(void)state;
	const struct cta_device_model *h100 = cta_device_find("H100");
	struct synth sy[5] = {{.sms = 4, .slots = 1, .blocks = 4, .dur_ns = 2000, .name = "short"},
	                      {.sms = 4, .slots = 1, .blocks = 4, .dur_ns = 5000, .name = "long"},
	                      {.sms = 4, .slots = 1, .blocks = 4, .dur_ns = 3100, .name = "two"},
	                      {.sms = 4, .slots = 1, .blocks = 4, .dur_ns = 5216, .name = "nine"},
	                      {.sms = 4, .slots = 1, .blocks = 4, .dur_ns = 3700, .name = "issue"}};
	struct cta_trace t[5];
	const struct cta_trace *ts[5];
	for (int i = 0; i < 5; i++) {
		synth_make(&t[i], &sy[i]);
		ts[i] = &t[i];
	}
	struct cta_calib_spin named[] = {{"short", 1000}, {"long", 4000}};
	uint32_t calls2[4] = {2, 2, 2, 2}, calls9[4] = {9, 9, 9, 9};
	uint64_t ns2[4] = {2000, 2000, 2000, 2000}, ns9[4] = {2016, 2016, 2016, 2016};
	uint64_t issue[4] = {1000, 1000, 1000, 1000};
	struct cta_calib_work work[5] = {{0, NULL, NULL, NULL},
	                                 {0, NULL, NULL, NULL},
	                                 {4, calls2, ns2, NULL},
	                                 {4, calls9, ns9, NULL},
	                                 {4, calls2, ns2, issue}};
	struct cta_calib_opts o = CTA_CALIB_OPTS_INIT;
	o.named = named;
	o.n_named = 2;
	o.work = work;
	struct cta_device_model base = *h100, m;
	base.spin_issue_ps = 7;
	struct cta_calib_report rep;
	char err[256] = "";
	assert_int_equal(cta_trace_calibrate_opts(&m, &rep, &base, ts, 5, &o, err, sizeof(err)), 0);
	assert_int_equal(rep.n_call_split, 12);
	assert_int_equal(m.spin_add_ns[1], 300);
	assert_int_equal(m.spin_block_add_ns, 700);
	assert_int_equal(rep.n_issue, 4);
	assert_int_equal(m.spin_issue_ps, 600);
	assert_int_equal(cta_device_validate(&m, err, sizeof(err)), 0);
	assert_int_equal(cta_trace_calibrate_opts(&m, &rep, &base, ts, 4, &o, err, sizeof(err)), 0);
	assert_int_equal(rep.n_issue, 0);
	assert_int_equal(m.spin_issue_ps, 7);
	for (int i = 0; i < 5; i++)
		synth_free(&t[i]);
}

static void small_kernel_keeps_the_base_sm_count(void **state)
{
	/* 40 blocks, one per SM, no second wave: the other 92 SMs were idle,
	 * not missing. */
	struct synth s = {.sms = 40, .slots = 1, .blocks = 40, .dispatch_ns = 3};
	struct cta_device_model m;
	struct cta_calib_report rep;
	fit_against_preset(&m, &rep, &s);
	assert_int_equal(rep.sm_count, 40);
	assert_int_equal(m.sm_count, 132);
	assert_int_equal(m.placement_order_len, 132);
	for (unsigned i = 0; i < 132; i++)
		assert_int_equal(m.placement_order[i], i); /* seen in order, then unseen by id */
	assert_non_null(strstr(rep.note, "only 40 of the base's 132 SMs"));
}

static void gpu_with_fewer_sms_gets_a_consistent_topology(void **state)
{
	/* 1000 blocks over 114 SMs: the GPU was full, so it has 114 SMs (an
	 * H100 PCIe against the SXM preset). */
	struct synth s = {.sms = 114, .slots = 2, .blocks = 1000, .dispatch_ns = 3};
	struct cta_device_model m;
	struct cta_calib_report rep;
	fit_against_preset(&m, &rep, &s);
	assert_int_equal(m.sm_count, 114);
	assert_int_equal(m.placement_order_len, 114);
	assert_non_null(strstr(rep.note, "114 SMs observed, the base model has 132"));
}

static void inconsistent_input_is_refused(void **state)
{
	struct synth s = {.blocks = 16};
	struct cta_trace a, b;
	synth_make(&a, &s);
	s.device = "OTHER-GPU";
	synth_make(&b, &s);
	const struct cta_trace *ts[2] = {&a, &b};
	struct cta_device_model base, m;
	base_model(&base);
	char err[256];
	assert_int_equal(cta_trace_calibrate(&m, NULL, &base, ts, 2, err, sizeof(err)), CTA_EINVAL);
	assert_non_null(strstr(err, "different devices"));
	assert_int_equal(cta_trace_calibrate(&m, NULL, &base, ts, 0, err, sizeof(err)), CTA_EINVAL);

	/* A trace without a single block start has nothing to fit. */
	size_t keep = a.count;
	a.count = 0;
	assert_int_equal(cta_trace_calibrate(&m, NULL, &base, ts, 1, err, sizeof(err)), CTA_EINVAL);
	assert_non_null(strstr(err, "no block starts"));
	a.count = keep;

	for (size_t i = 0; i < a.count; i++)
		if (a.recs[i].ev == CTA_TEV_START)
			a.recs[i].sm = CTA_DEVICE_MAX_SMS;
	assert_int_equal(cta_trace_calibrate(&m, NULL, &base, ts, 1, err, sizeof(err)), CTA_ERANGE);
	synth_free(&a);
	synth_free(&b);
}

/* The blocking kernels' terms (fit_wait): five traces whose busy spans a
 * linear model of the four terms gives exactly, each with its own slopes
 * (as `ctasim fidelity`'s fit=wait probes measure them), give back the
 * terms the spans were made with; with no probe that moves it, a term
 * keeps the base's, and one whose best value is negative is 0. */
static void blocking_kernels_terms_are_recovered_from_probed_spans(void **state)
{
	(void)state;
	enum { N = 5 };
	static const double want[4] = {240, 610, 5650, 3270};
	static const double g[N][4] = {{20, 40, 0.132, 0},
	                               {24, 48, 0.264, 0},
	                               {10, 30, 1.056, 0},
	                               {30, 20, 0, 0.132},
	                               {28, 22, 0, 1.056}};
	struct cta_trace t[N];
	const struct cta_trace *tp[N];
	struct cta_calib_wait w[N];
	for (int j = 0; j < N; j++) {
		struct synth s = {.sms = 8, .slots = 2, .blocks = 16, .dur_ns = 20000 + 7000 * j};
		synth_make(&t[j], &s);
		tp[j] = &t[j];
		uint64_t t0 = UINT64_MAX, t1 = 0;
		for (size_t i = 0; i < t[j].count; i++) {
			if (t[j].recs[i].ev == CTA_TEV_START && t[j].recs[i].t_ns < t0)
				t0 = t[j].recs[i].t_ns;
			if (t[j].recs[i].ev == CTA_TEV_END && t[j].recs[i].t_ns > t1)
				t1 = t[j].recs[i].t_ns;
		}
		memset(&w[j], 0, sizeof(w[j]));
		double busy0 = (double)(t1 - t0);
		for (int i = 0; i < 4; i++) {
			w[j].at[i] = i < 2 ? 300 : 4000;
			w[j].step[i] = i < 2 ? 100 : 1000;
			busy0 -= g[j][i] * (want[i] - (double)w[j].at[i]);
		}
		w[j].busy0 = (uint64_t)(busy0 + 0.5);
		for (int i = 0; i < 4; i++)
			w[j].busy[i] = (uint64_t)(busy0 + g[j][i] * (double)w[j].step[i] + 0.5);
	}
	struct cta_device_model base, m;
	base_model(&base);
	base.wait_sync_ps = 999;
	struct cta_calib_opts o = CTA_CALIB_OPTS_INIT;
	o.wait = w;
	char err[256];
	assert_int_equal(cta_trace_calibrate_opts(&m, NULL, &base, tp, N, &o, err, sizeof(err)), 0);
	assert_in_range(m.wait_load_ns, 236, 244);
	assert_in_range(m.wait_atomic_ns, 606, 614);
	assert_in_range(m.wait_turn_ps, 5600, 5700);
	assert_in_range(m.wait_sync_ps, 3220, 3320);
	/* Without the grid.sync() probes: wait_sync_ps stays the base's. */
	assert_int_equal(cta_trace_calibrate_opts(&m, NULL, &base, tp, 3, &o, err, sizeof(err)), 0);
	assert_int_equal(m.wait_sync_ps, 999);
	assert_in_range(m.wait_turn_ps, 5600, 5700);
	/* The simulator's spans longer by 8000 ps of turns: the best turn
	 * would be negative. */
	for (int j = 0; j < N; j++) {
		w[j].busy0 += (uint64_t)(g[j][2] * 8000);
		for (int i = 0; i < 4; i++)
			w[j].busy[i] += (uint64_t)(g[j][2] * 8000);
	}
	assert_int_equal(cta_trace_calibrate_opts(&m, NULL, &base, tp, N, &o, err, sizeof(err)), 0);
	assert_int_equal(m.wait_turn_ps, 0);
	/* No probes: the base's terms. */
	o.wait = NULL;
	assert_int_equal(cta_trace_calibrate_opts(&m, NULL, &base, tp, N, &o, err, sizeof(err)), 0);
	assert_int_equal(m.wait_load_ns, 0);
	assert_int_equal(m.wait_sync_ps, 999);
	for (int j = 0; j < N; j++)
		synth_free(&t[j]);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(synthetic_latencies_and_order_are_recovered),
	    cmocka_unit_test(cancel_round_trip_is_recovered_from_stealing_trace),
	    cmocka_unit_test(order_is_averaged_over_traces),
	    cmocka_unit_test(sms_beyond_the_base_get_topology),
	    cmocka_unit_test(sub_tick_latency_is_noted),
	    cmocka_unit_test(full_gpu_trace_gives_a_valid_model),
	    cmocka_unit_test(duration_model_is_fitted_per_resident_count),
	    cmocka_unit_test(affine_duration_model_is_fitted),
	    cmocka_unit_test(per_call_add_is_the_slope_over_call_counts),
	    cmocka_unit_test(issue_time_is_fitted_from_declared_arithmetic),
	    cmocka_unit_test(issue_gate_is_recovered_from_a_simulated_trace),
	    cmocka_unit_test(register_gate_is_recovered_from_a_simulated_trace),
	    cmocka_unit_test(late_entry_is_recovered_from_a_simulated_trace),
	    cmocka_unit_test(gate_passes_are_recovered_from_a_simulated_trace),
	    cmocka_unit_test(end_hold_is_recovered_from_a_simulated_trace),
	    cmocka_unit_test(register_order_is_recovered_from_a_simulated_trace),
	    cmocka_unit_test(small_kernel_keeps_the_base_sm_count),
	    cmocka_unit_test(gpu_with_fewer_sms_gets_a_consistent_topology),
	    cmocka_unit_test(inconsistent_input_is_refused),
	    cmocka_unit_test(blocking_kernels_terms_are_recovered_from_probed_spans),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
