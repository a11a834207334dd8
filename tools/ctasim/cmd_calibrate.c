/* `ctasim calibrate HWTRACE... -o MODEL`: fits a device model's placement
 * rule (the sweep, or with --replay-waves the recorded waves), scheduler
 * latencies and durations to hardware traces and writes it as a model file
 * that `ctasim run --device MODEL` loads. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli_util.h"
#include "cmd.h"
#include "ctasim/device.h"
#include "ctasim/io.h"
#include "ctasim/tools.h"
#include "ctasim/trace.h"
#include "progress.h"

static const char usage_text[] =
    "usage: ctasim calibrate HWTRACE... -o MODEL [--base DEVICE]\n"
    "                        [--block-ns [KERNEL=]NS]... [--duration-trace TRACE]...\n"
    "                        [--duration-quantile Q] [--replay-waves]\n"
    "\n"
    "Fits a device model to one or more (hardware) traces of one GPU: the SM\n"
    "count, the parameters of the sweep rule of block placement over the base's\n"
    "TPC/GPC topology (placement = sweep, docs/FIDELITY.md) and the launch,\n"
    "dispatch, block start, retire and cancel latencies (docs/TOOLS.md gives the\n"
    "estimators). Everything else comes from the base model.\n"
    "\n"
    "  --replay-waves   instead of the sweep rule, store each recorded first\n"
    "                   wave and replay it for launches of that grid size\n"
    "                   (placement = order): exact on the recorded sizes, a\n"
    "                   guess on others\n"
    "  -o MODEL         model file to write ('-': standard output)\n"
    "  --base DEVICE    preset name or model file to start from\n"
    "                   (default: the device named in the first trace)\n"
    "  --block-ns NS    every block of the traces asked for NS ns (NS in [1, 10^12])\n"
    "                   with one\n"
    "                   cta_spin_ns call (the spin kernel's ns): also fit the\n"
    "                   duration model, spin_scale (and, where blocks asked for\n"
    "                   two or more times, spin_add) per count of blocks\n"
    "                   resident on the SM\n"
    "  --block-ns KERNEL=NS\n"
    "                   the same for the kernels named KERNEL in the trace\n"
    "                   headers only (repeatable; overrides a plain NS)\n"
    "  --duration-trace TRACE\n"
    "                   a trace that feeds the duration model only, not the\n"
    "                   placement or latencies (repeatable)\n"
    "  --duration-quantile Q\n"
    "                   quantile of the block durations behind each spin_scale,\n"
    "                   [0, 1] (default 0.99: the slow blocks set the makespan)\n"
    "  --quiet          no progress line (it is shown only on a terminal)\n";

int cta_cmd_calibrate(int argc, char **argv)
{
	const char *out = NULL, *base_name = NULL;
	const char **paths = calloc((size_t)argc, sizeof(*paths));
	size_t n = 0;
	int ret = CTA_EXIT_USAGE, quiet = 0;
	struct cta_trace *traces = NULL;
	const struct cta_trace **tp = NULL;
	struct cta_device_model *base = NULL, *m = NULL;
	char err[512];
	struct cta_calib_opts opts = CTA_CALIB_OPTS_INIT;
	struct cta_calib_spin *named = calloc((size_t)argc, sizeof(*named));
	unsigned char *donly = calloc((size_t)argc, 1);
	if (!paths || !named || !donly) {
		free(paths);
		free(named);
		free(donly);
		return CTA_EXIT_USAGE;
	}
	opts.named = named;
	opts.duration_only = donly;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage_text, stdout);
			free(paths);
			free(named);
			free(donly);
			return CTA_EXIT_OK;
		} else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			if (++i >= argc)
				goto usage;
			out = argv[i];
		} else if (!strcmp(a, "--block-ns") || !strcmp(a, "--duration-quantile")) {
			if (++i >= argc)
				goto usage;
			if (a[2] == 'b') {
				const char *eq = strchr(argv[i], '=');
				const char *num = eq ? eq + 1 : argv[i];
				uint64_t v;
				if (eq && eq == argv[i]) {
					fprintf(stderr, "ctasim calibrate: --block-ns needs a "
					                "number of ns > 0, or KERNEL=NS\n");
					goto usage;
				}
				char why[96], ev[200];
				if (cta_parse_uint(num, 1, 1000000000000ull, CTA_NUM_SUFFIX, &v,
				                   why, sizeof(why)) < 0) {
					fprintf(stderr,
					        "ctasim calibrate: --block-ns '%s': %s (NS or "
					        "KERNEL=NS, "
					        "NS in [1, 10^12])\n",
					        cta_escape(ev, sizeof(ev), argv[i], 0), why);
					goto done;
				}
				if (eq) {
					/* argv outlives the call: the name ends at '='. */
					char *name = (char *)argv[i];
					name[eq - argv[i]] = 0;
					named[opts.n_named++] = (struct cta_calib_spin){name, v};
				} else {
					opts.block_ns = v;
				}
			} else {
				double q;
				if (cli_parse_double("calibrate", "--duration-quantile", argv[i], 0,
				                     1, &q) < 0)
					goto done;
				opts.quantile = q;
			}
		} else if (!strcmp(a, "--quiet")) {
			quiet = 1;
		} else if (!strcmp(a, "--replay-waves")) {
			opts.replay_waves = 1;
		} else if (!strcmp(a, "--duration-trace")) {
			if (++i >= argc)
				goto usage;
			donly[n] = 1;
			paths[n++] = argv[i];
		} else if (!strcmp(a, "--base")) {
			if (++i >= argc)
				goto usage;
			base_name = argv[i];
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "ctasim calibrate: unknown option '%s'\n", a);
			goto usage;
		} else {
			paths[n++] = a;
		}
	}
	if (!n || !out)
		goto usage;

	traces = calloc(n, sizeof(*traces));
	tp = calloc(n, sizeof(*tp));
	base = malloc(sizeof(*base));
	m = malloc(sizeof(*m));
	if (!traces || !tp || !base || !m) {
		fprintf(stderr, "ctasim calibrate: out of memory\n");
		goto done;
	}
	/* Reading (and decompressing) the traces is most of the time. */
	struct cli_progress pr;
	cli_progress_start(&pr, "traces read", n, quiet);
	for (size_t i = 0; i < n; i++) {
		if (cta_trace_read(&traces[i], paths[i], err, sizeof(err))) {
			cli_progress_end(&pr);
			fprintf(stderr, "ctasim calibrate: %s\n", err);
			goto done;
		}
		cli_progress_step(&pr, i + 1);
		tp[i] = &traces[i];
		if (strcmp(traces[i].header.backend, "cuda"))
			fprintf(stderr,
			        "ctasim calibrate: %s: note: a %s trace, not a hardware one\n",
			        paths[i], traces[i].header.backend);
	}
	cli_progress_end(&pr);
	const char *bn = base_name ? base_name : traces[0].header.device;
	if (cta_device_resolve(base, bn, err, sizeof(err))) {
		fprintf(stderr, "ctasim calibrate: base model '%s': %s%s\n", bn, err,
		        base_name ? "" : " (name one with --base)");
		goto done;
	}
	struct cta_calib_report rep;
	int rc = cta_trace_calibrate_opts(m, &rep, base, tp, n, &opts, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "ctasim calibrate: %s\n", err);
		goto done;
	}
	{
		/* What the fit saw, cut to the field's size. */
		char what[160];
		int w =
		    snprintf(what, sizeof(what), "%zu traces of %s", n, traces[0].header.device);
		size_t len = w < 0 ? 0 : (size_t)w;
		if (len >= sizeof(m->fitted_on))
			len = sizeof(m->fitted_on) - 1;
		memcpy(m->fitted_on, what, len);
		m->fitted_on[len] = 0;
	}
	/* "-o -": the model goes to stdout, and the summary after it to
	 * stderr, so that `calibrate ... -o - > my.model` is a model. */
	fflush(stdout);
	if (cta_device_save(m, out, err, sizeof(err))) {
		fprintf(stderr, "ctasim calibrate: %s\n", err);
		ret = CTA_EXIT_USAGE;
		goto done;
	}
	if (cli_is_stdio(out) && dup2(2, 1) < 0) {
		ret = CTA_EXIT_USAGE;
		goto done;
	}
	printf("calibrated %s from %u trace(s), base %s\n", out, rep.traces, bn);
	printf("  sm_count             %u\n", m->sm_count);
	if (m->placement == CTA_PLACE_SWEEP && rep.sweep_total)
		printf("  placement            sweep: %u SMs first, gaps %u/%u after %u turns, "
		       "launch before: a block per %u, early below %u, rotated from %u, "
		       "late from %u; "
		       "places %" PRIu64 " of %" PRIu64 " first-wave blocks (%.2f%%)\n",
		       m->sweep_first_len, m->sweep_gap_first, m->sweep_gap_later,
		       m->sweep_gap_switch, m->sweep_prior_unit, m->sweep_small_prior,
		       m->sweep_rotate_prior, m->sweep_late_prior, rep.sweep_placed,
		       rep.sweep_total, 100.0 * rep.sweep_placed / rep.sweep_total);
	else
		printf("  placement order      from %u kernel(s) on an idle device%s\n",
		       rep.kernels_used, rep.kernels_used ? "" : " (kept from the base)");
	printf("  launch_latency_ns    %" PRIu64 " (%" PRIu64 " samples)\n", m->launch_latency_ns,
	       rep.n_launch);
	printf("  dispatch_latency_ns  %" PRIu64 " (%" PRIu64 " samples)\n", m->dispatch_latency_ns,
	       rep.n_dispatch);
	printf("  block_start_ns       %" PRIu64 " (%" PRIu64 " samples)\n", m->block_start_ns,
	       rep.n_block_start);
	printf("  block_retire_ns      %" PRIu64 " (%" PRIu64 " samples)\n", m->block_retire_ns,
	       rep.n_retire);
	printf("  cancel_latency_ns    %" PRIu64 " (%" PRIu64 " samples)\n", m->cancel_latency_ns,
	       rep.n_cancel);
	if (rep.n_launch_gap)
		printf("  launch_gap_ns        %u (%" PRIu64 " launches on another stream)\n",
		       m->launch_gap_ns, rep.n_launch_gap);
	for (unsigned r = 1; r <= CTA_DEVICE_MAX_RESIDENT; r++)
		if (rep.n_spin[r]) {
			printf("  spin_scale %-2u        %.4f (%" PRIu64 " blocks with %u resident",
			       r, m->spin_scale_ppm[r] / 1e6, rep.n_spin[r], r);
			if (m->spin_add_mask >> (r - 1) & 1)
				printf(", %u requested time(s))\n  spin_add %-2u          %u ns "
				       "(%s)\n",
				       rep.n_spin_lengths[r], r, m->spin_add_ns[r],
				       rep.n_spin_lengths[r] > 1 ? "fitted"
				                                 : "from a fitted count");
			else
				printf(")\n");
		}
	if (m->placement == CTA_PLACE_SWEEP && m->cluster_prior_len) {
		printf("  cluster_prior_rot   ");
		for (unsigned i = 0; i < m->cluster_prior_len; i++)
			printf(" %u", m->cluster_prior_rot[i]);
		printf(" (clustered launches: the first TPC after a launch before of 1, 2, ... "
		       "blocks)\n");
	}
	if (m->placement == CTA_PLACE_SWEEP && m->sweep_carry)
		printf("  sweep_carry         late %u, mid %u, steady %u, cluster_carry_rot %u %u "
		       "(the state a launch leaves for the next)\n",
		       m->sweep_carry_late, m->sweep_carry_mid, m->sweep_carry_steady,
		       m->cluster_carry_rot, m->cluster_carry_rot_half);
	if (m->cluster_max_blocks_per_sm)
		printf("  cluster_max_blocks_per_sm %u (clustered blocks an SM holds)\n",
		       m->cluster_max_blocks_per_sm);
	if (m->clc_late_ppm)
		printf("  clc_late_ppm         %u (first-wave blocks behind the gate on a full SM: "
		       "their first request late by this share of a call)\n",
		       m->clc_late_ppm);
	if (m->clc_sector_ps)
		printf("  clc_sector_ps        %u, clc_entry_ps %u (the emulation's context as a "
		       "queue: "
		       "a failed first request, a block's entry)\n",
		       m->clc_sector_ps, m->clc_entry_ps);
	if (m->spin_gate_threads)
		printf("  spin_gate_threads    %u (blocks that find more threads running wait)\n",
		       m->spin_gate_threads);
	if (m->spin_regs_free)
		printf("  spin_regs_free       %u (later blocks that would leave fewer warps' "
		       "registers free wait)\n",
		       m->spin_regs_free);
	if (m->spin_regs_wait_ns)
		printf("  spin_regs_wait_ns    %u (the longest such a block waits)\n",
		       m->spin_regs_wait_ns);
	if (m->spin_regs_hold_warps)
		printf("  spin_regs_hold_warps %u (a block ends with longer ones of a lower index "
		       "placed "
		       "with it that put this many warps on one of its sub-partitions)\n",
		       m->spin_regs_hold_warps);
	if (m->spin_regs_order)
		printf(
		    "  spin_regs_order      1 (a later block takes its SM's sub-partitions in its "
		    "placement order)\n");
	if (m->spin_regs_late_ns)
		printf(
		    "  spin_regs_late_ns    %u (the longest the level above the gate holds one)\n",
		    m->spin_regs_late_ns);
	if (m->spin_regs_pass_ppm)
		printf(
		    "  spin_regs_pass_ppm   %u, spin_regs_pass_blocks %u (of the later blocks the "
		    "gate would hold, of kernels of at most that many blocks an SM, these in a "
		    "million begin at once)\n",
		    m->spin_regs_pass_ppm, m->spin_regs_pass_blocks);
	if (m->wait_load_ns | m->wait_atomic_ns | m->wait_turn_ps | m->wait_sync_ps |
	    m->wait_hit_ns | m->wait_poll_ps)
		printf("  wait_load_ns         %u, wait_atomic_ns %u, wait_turn_ps %u, "
		       "wait_sync_ps %u, wait_hit_ns %u, wait_poll_ps %u "
		       "(blocking kernels: a volatile load, an atomic, its turn on its address, a "
		       "grid.sync() arrival's turn, an atomic on an address seen before, a poll's "
		       "turn)\n",
		       m->wait_load_ns, m->wait_atomic_ns, m->wait_turn_ps, m->wait_sync_ps,
		       m->wait_hit_ns, m->wait_poll_ps);
	if (rep.n_issue)
		printf("  spin_issue_ps        %u (%" PRIu64 " blocks of declared arithmetic)\n",
		       m->spin_issue_ps, rep.n_issue);
	if (rep.note[0])
		printf("  note: %s\n", rep.note);
	ret = CTA_EXIT_OK;
	goto done;
usage:
	fputs(usage_text, stderr);
done:
	if (traces)
		for (size_t i = 0; i < n; i++)
			cta_trace_free(&traces[i]);
	free(traces);
	free(tp);
	free(base);
	free(m);
	free(paths);
	free(named);
	free(donly);
	return ret;
}
