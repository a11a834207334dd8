/* Blocking algorithms and forward progress (docs/FORWARD_PROGRESS.md):
 * spinning blocks let the others run, deterministically; a grid that
 * cannot be co-resident is a forward_progress report (or, launched
 * cooperatively, a launch error); the watchdog stops what would hang;
 * adversarial scheduling catches a kernel that relies on fairness. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/base.h"
#include "ctasim/harness.h"
#include "ctasim/kernel.h"
#include "ctasim/sim.h"
#include "exec/exec.h"
#include "simtest.h"

/* Runs harness `name` on `sms` SMs of an H100 with grid `grid` (0: the
 * harness's own). */
static unsigned gate_threads; /* the issue gate of run_grid's runs; 0: none */
static int wait_terms;        /* run_grid's runs with the blocking kernels' wait_* */

static int run_grid(struct cta_harness **h, const char *name, unsigned sms, unsigned grid,
                    const char *const *args, unsigned threads, const char *trace)
{
	const struct cta_kernel_info *ki = cta_harness_find(name);
	assert_non_null(ki);
	struct cta_harness_opts ho = {0};
	ho.version = CTA_HARNESS_OPTS_VERSION;
	ho.sim = st_opts("H100-SXM");
	ho.sim.sm_limit = sms;
	ho.sim.device.spin_gate_threads = gate_threads;
	if (wait_terms) {
		ho.sim.device.wait_load_ns = 372;
		ho.sim.device.wait_atomic_ns = 406;
		ho.sim.device.wait_turn_ps = 4130;
		ho.sim.device.wait_sync_ps = 5409;
		ho.sim.device.wait_hit_ns = 150;
		ho.sim.device.wait_poll_ps = 800;
	}
	ho.sim.threads = threads;
	ho.sim.trace_path = trace;
	ho.args = args;
	for (ho.nargs = 0; args && args[ho.nargs]; ho.nargs++)
		;
	if (grid) {
		ho.grid_set = 1;
		ho.grid[0] = grid;
		ho.grid[1] = ho.grid[2] = 1;
	}
	int rc = cta_harness_new(h, ki, &ho);
	if (rc < 0)
		return rc;
	return cta_harness_run(*h);
}

static const char *small_graph[] = {"nodes=512", NULL};

/* 2 SMs x 8 blocks of 256 threads: 16 co-resident blocks. */
static void exactly_co_resident_grid_passes(void **state)
{
	(void)state;
	struct cta_harness *h;
	assert_int_equal(run_grid(&h, "ck_graph_global_barrier", 2, 16, small_graph, 1, NULL), 0);
	assert_int_equal(cta_harness_verdict(h), CTA_VERDICT_PASS);
	assert_int_equal(cta_sim_ub_count(cta_harness_sim(h)), 0);
	cta_harness_free(h);
	assert_int_equal(run_grid(&h, "ck_graph_grid_sync", 2, 16, small_graph, 1, NULL), 0);
	assert_int_equal(cta_harness_verdict(h), CTA_VERDICT_PASS);
	cta_harness_free(h);
}

/* The issue gate (spin_gate_threads 1024) would hold the last three of
 * each SM's eight blocks until one of the first five ends, and those wait
 * at the grid barrier for all sixteen: blocks that wait for one another
 * are never held (a kernel that spun, a cooperative launch), so both
 * kernels still pass, with no report. */
static void the_issue_gate_never_holds_blocks_that_wait_for_each_other(void **state)
{
	(void)state;
	struct cta_harness *h;
	gate_threads = 1024;
	assert_int_equal(run_grid(&h, "ck_graph_global_barrier", 2, 16, small_graph, 1, NULL), 0);
	assert_int_equal(cta_harness_verdict(h), CTA_VERDICT_PASS);
	assert_int_equal(cta_sim_ub_count(cta_harness_sim(h)), 0);
	cta_harness_free(h);
	assert_int_equal(run_grid(&h, "ck_graph_grid_sync", 2, 16, small_graph, 1, NULL), 0);
	assert_int_equal(cta_harness_verdict(h), CTA_VERDICT_PASS);
	assert_int_equal(cta_sim_ub_count(cta_harness_sim(h)), 0);
	cta_harness_free(h);
	gate_threads = 0;
}

static void one_block_more_is_a_forward_progress_report(void **state)
{
	(void)state;
	struct cta_harness *h;
	assert_int_equal(run_grid(&h, "ck_graph_global_barrier", 2, 17, small_graph, 1, NULL),
	                 CTA_EUB);
	cta_sim *s = cta_harness_sim(h);
	/* Every resident block spins, and each is named where it spins. */
	assert_int_equal(st_ub_count(s, "forward_progress"), 16);
	assert_int_equal(cta_sim_ub_count(s), 16);
	const struct cta_ub_report *r = cta_sim_ub_report(s, 0);
	int line = st_find_line("kernels/ck_body.h", "CTA_DEVICE void ck_global_barrier",
	                        "while (cta_ld_volatile(p->bar_gen) == gen)");
	assert_true(st_same_file(r->file, "kernels/ck_body.h"));
	assert_int_equal(r->line, line);
	assert_int_equal(r->thread, 0);
	assert_non_null(strstr(r->cause, "2 SMs x 8 blocks per SM (limited by threads) = 16"));
	assert_non_null(strstr(r->cause, "of a grid of 17"));
	/* The report comes one watchdog period after the last progress. */
	assert_true(r->t_ns > CTA_WATCHDOG_DEFAULT_NS && r->t_ns < 2 * CTA_WATCHDOG_DEFAULT_NS);
	cta_harness_free(h);
}

/* A grid barrier's writes are progress however far apart the writer's
 * yield points fall: a chain of 128 barrier levels (about 540 us) passes
 * under a watchdog of 20 us, which its run of nothing but spinning
 * between two levels never reaches. (A write seen only when it was the
 * last memory access before the spinning check once let the watchdog stop
 * it after 21 us.) */
static void barrier_writes_keep_the_watchdog_away(void **state)
{
	(void)state;
	static const char *chain[] = {"nodes=128", "degree=0", NULL};
	const struct cta_kernel_info *ki = cta_harness_find("ck_graph_global_barrier");
	assert_non_null(ki);
	struct cta_harness_opts ho = {0};
	ho.version = CTA_HARNESS_OPTS_VERSION;
	ho.sim = st_opts("H100-SXM");
	ho.sim.sm_limit = 4;
	ho.sim.watchdog_ns = 20000;
	ho.args = chain;
	ho.nargs = 2;
	ho.grid_set = 1;
	ho.grid[0] = 32;
	ho.grid[1] = ho.grid[2] = 1;
	struct cta_harness *h;
	assert_int_equal(cta_harness_new(&h, ki, &ho), 0);
	assert_int_equal(cta_harness_run(h), 0);
	assert_int_equal(cta_harness_verdict(h), CTA_VERDICT_PASS);
	assert_int_equal(cta_sim_ub_count(cta_harness_sim(h)), 0);
	assert_true(cta_sim_makespan_ns(cta_harness_sim(h)) > 20 * 20000);
	cta_harness_free(h);
}

static void too_large_cooperative_launch_fails_at_launch(void **state)
{
	(void)state;
	struct cta_harness *h;
	int rc = run_grid(&h, "ck_graph_grid_sync", 2, 17, small_graph, 1, NULL);
	assert_int_equal(rc, CTA_ERESOURCES);
	const char *m = cta_harness_errmsg(h);
	assert_non_null(strstr(m, "cooperative launch too large"));
	assert_non_null(strstr(m, "2 SMs x 8 blocks per SM = 16"));
	assert_non_null(strstr(m, "limited by threads"));
	cta_harness_free(h);
}

/* What one block reads of another's writes, and when a spinning one
 * yields, does not depend on host threads: traces are byte-identical,
 * without and with the blocking kernels' wait_* (H100 fitted values). */
static void spinning_kernels_trace_identically_on_any_host_threads(void **state)
{
	(void)state;
	static const char *const kernels[] = {"ck_work_stealing", "ck_graph_global_barrier",
	                                      "ck_graph_grid_sync"};
	static const char *ws[] = {"roots=8", "depth=4", "queues=32", NULL};
	static const unsigned threads[] = {1, 2, 7};
	for (size_t r = 0; r < 6; r++) {
		size_t k = r % 3;
		wait_terms = r >= 3;
		char *first = NULL;
		size_t flen = 0;
		for (size_t t = 0; t < 3; t++) {
			char path[256];
			st_tmpname(path, sizeof(path), "progress");
			struct cta_harness *h;
			/* 4 SMs: 32 co-resident blocks of the graph kernels. */
			int rc = run_grid(&h, kernels[k], 4, k ? 32 : 0, k ? small_graph : ws,
			                  threads[t], path);
			assert_int_equal(rc, 0);
			assert_int_equal(cta_harness_verdict(h), CTA_VERDICT_PASS);
			cta_harness_free(h);
			size_t len = 0;
			char *tr = st_slurp(path, &len);
			remove(path);
			assert_non_null(tr);
			assert_non_null(strstr(tr, "#deterministic 1"));
			if (!first) {
				first = tr;
				flen = len;
				continue;
			}
			if (len != flen || memcmp(first, tr, len))
				fail_msg("%s%s: traces with 1 and %u host threads differ",
				         kernels[k], wait_terms ? " (wait_*)" : "", threads[t]);
			free(tr);
		}
		free(first);
	}
	wait_terms = 0;
}

/* What a blocking kernel's waiting blocks and turns hold, with the wait_*
 * on (docs/PERFORMANCE.md, rss_beyond_arrays_max): a parked block of 256
 * threads keeps its threads at the barrier and those that spin as runs
 * going up or down the ranks (where a 16-byte entry a spinning thread and
 * runs going up only made every park at least 4.3 KB: they reach the
 * barrier in descending rank order), and the turns by address take at
 * most 128 bytes an address (48-byte slots, the table at most 3/4 full and
 * at least 3/8 once grown, where 56-byte slots at most half full took 224
 * bytes an address at 4,096 graph nodes). */
static void waiting_blocks_and_turns_cost_bytes(void **state)
{
	(void)state;
	static const char *graph[] = {"nodes=4096", NULL};
	wait_terms = 1;
	struct cta_harness *h;
	/* The whole H100 (1,056 blocks), as the rss bench runs it: most threads
	 * visit no node at a level (4,096 nodes over 270,336 threads). */
	assert_int_equal(run_grid(&h, "ck_graph_grid_sync", 0, 0, graph, 1, NULL), 0);
	wait_terms = 0;
	assert_int_equal(cta_harness_verdict(h), CTA_VERDICT_PASS);
	cta_sim *s = cta_harness_sim(h);
	size_t addrs = 0, bytes = cta__exec_wait_bytes(s, &addrs);
	/* The level of each of the 4096 nodes, the counts and the grid's. */
	assert_true(addrs >= 4096);
	assert_true(bytes <= 128 * addrs + 64);
	if (s->kernels[0]->kc) {
		assert_true(s->spin_parks > 1056);
		assert_true(s->spin_park_bytes / s->spin_parks <= 2048);
	} else {
		assert_int_equal(s->spin_parks, 0); /* (on fibers) */
	}
	cta_harness_free(h);
}

/* ---- bodies of the tests below -------------------------------------- */

struct prog_args {
	int *flag;
	unsigned *count;
	int rounds;
};

/* Thread 0 of the block waits for a flag nobody sets. */
CTA_KERNEL(prog_spin_forever, struct prog_args, p)
{
	if (threadIdx.x == 0) {
		while (cta_ld_volatile(p->flag) == 0) { // MARK:spin_forever
		}
	}
}

/* A one-shot barrier over the grid built from an atomic count. */
CTA_KERNEL(prog_grid_barrier, struct prog_args, p)
{
	if (threadIdx.x == 0) {
		atomicAdd(p->count, 1u);
		while (cta_ld_volatile(p->count) < gridDim.x) { // MARK:grid_barrier
		}
	}
	__syncthreads();
}

/* Two blocks take turns `rounds` times: each waits until the turn is its
 * own, then hands it over. Needs both blocks to run. */
CTA_KERNEL(prog_ping_pong, struct prog_args, p)
{
	if (threadIdx.x == 0) {
		int me = (int)blockIdx.x;
		for (int r = 0; r < p->rounds; r++) {
			while (cta_ld_volatile(p->flag) != me) {
			}
			cta_st_volatile(p->flag, 1 - me);
		}
	}
}

/* Each thread makes 20 yield points, then reads its clock (the 21st): a
 * thread's own count reaches CTA__POLL_BUDGET once, never twice, so none
 * spins, whichever threads ran on its lane before it. */
struct prog_polls_args {
	unsigned *count;
	unsigned long long *t; /* per thread: its clock at the end */
};
CTA_KERNEL(prog_twenty_polls, struct prog_polls_args, p)
{
	for (int i = 0; i < 20; i++)
		atomicAdd(p->count, 1u);
	p->t[threadIdx.x] = cta_globaltimer_ns();
}

static struct cta_launch launch_of(const struct cta_kernel_def *k, unsigned grid, unsigned block,
                                   const struct prog_args *a)
{
	struct cta_launch l = {0};
	l.kernel = k;
	l.grid[0] = grid;
	l.grid[1] = l.grid[2] = 1;
	l.block[0] = block;
	l.block[1] = l.block[2] = 1;
	l.args = a;
	return l;
}

/* ---- blocking kernels' accesses (device wait_*) ------------------------ */

/* Block 0's thread 0 writes a flag after 20 us of work; block 1's thread
 * 0 polls it and records when it saw it. */
struct prog_seen_args {
	unsigned *flag;
	unsigned long long *seen, *wrote;
};
CTA_KERNEL(prog_flag_after_work, struct prog_seen_args, p)
{
	if (threadIdx.x != 0)
		return;
	if (blockIdx.x == 0) {
		cta_spin_ns(20000);
		*p->wrote = cta_globaltimer_ns();
		cta_st_volatile(p->flag, 1u);
	} else {
		while (!cta_ld_volatile(p->flag)) {
		}
		*p->seen = cta_globaltimer_ns();
	}
}

/* Every thread adds to one count, then records its clock. */
struct prog_turn_args {
	unsigned *count;
	unsigned long long *t;
};
CTA_KERNEL(prog_atomic_turns, struct prog_turn_args, p)
{
	atomicAdd(p->count, 1u);
	p->t[blockIdx.x * blockDim.x + threadIdx.x] = cta_globaltimer_ns();
}

/* Every block crosses one grid.sync(); each thread records its clock. */
CTA_KERNEL(prog_one_grid_sync, struct prog_turn_args, p)
{
	cta_grid_sync();
	p->t[blockIdx.x * blockDim.x + threadIdx.x] = cta_globaltimer_ns();
}

static unsigned coop_hit_ns, coop_poll_ps; /* run_coop's wait_hit_ns, wait_poll_ps */

static cta_sim *run_coop(const struct cta_kernel_def *k, unsigned grid, unsigned block,
                         const void *a, unsigned load_ns, unsigned atomic_ns, unsigned turn_ps,
                         unsigned sync_ps)
{
	struct cta_sim_opts o = st_opts("H100-SXM");
	o.device.wait_load_ns = load_ns;
	o.device.wait_atomic_ns = atomic_ns;
	o.device.wait_turn_ps = turn_ps;
	o.device.wait_sync_ps = sync_ps;
	o.device.wait_hit_ns = coop_hit_ns;
	o.device.wait_poll_ps = coop_poll_ps;
	cta_sim *s;
	assert_int_equal(cta_sim_new(&s, &o), 0);
	struct cta_launch l = {0};
	l.kernel = k;
	l.grid[0] = grid;
	l.grid[1] = l.grid[2] = 1;
	l.block[0] = block;
	l.block[1] = l.block[2] = 1;
	l.args = a;
	l.cooperative = 1;
	assert_int_equal(cta_sim_launch(s, &l, NULL), 0);
	assert_int_equal(cta_sim_run(s), 0);
	return s;
}

/* With the device's wait_* a blocking kernel's thread reads memory at its
 * virtual time: the poller sees the flag once the writer's clock passed
 * 20 us, one poll (wait_load_ns 100) or two after it. Without them block
 * 0 runs to its end on the host before block 1 polls, and block 1 saw a
 * write 20 us before it was made. */
static void a_blocking_kernels_reads_follow_virtual_time(void **state)
{
	(void)state;
	for (int model = 0; model < 2; model++) {
		unsigned flag = 0;
		unsigned long long seen = 0, wrote = 0;
		struct prog_seen_args a = {&flag, &seen, &wrote};
		cta_sim *s = run_coop(&prog_flag_after_work, 2, 32, &a, model ? 100 : 0, 0, 0, 0);
		assert_true(wrote >= 20000);
		if (model) {
			assert_true(seen >= wrote);
			assert_true(seen <= wrote + 2 * 100);
		} else {
			assert_true(seen < wrote - 19000);
		}
		cta_sim_free(s);
	}
}

/* Atomics on one address take turns in virtual-time order (wait_turn_ps
 * 1 us): 8 blocks of 64 threads, 16 warps, each warp's 32 atomics at one
 * time sharing a turn, end 1 us apart one warp from the next, each
 * wait_atomic_ns (500) after its turn. */
static void a_blocking_kernels_atomics_take_turns_on_their_address(void **state)
{
	(void)state;
	enum { B = 8, T = 64, W = B * T / 32 };
	unsigned count = 0;
	unsigned long long t[B * T];
	struct prog_turn_args a = {&count, t};
	cta_sim *s = run_coop(&prog_atomic_turns, B, T, &a, 100, 500, 1000000, 0);
	assert_int_equal(count, B * T);
	unsigned long long w[W];
	for (unsigned i = 0; i < W; i++) {
		w[i] = t[i * 32];
		for (unsigned j = 1; j < 32; j++)
			assert_int_equal(t[i * 32 + j], w[i]);
	}
	/* Sorted, each warp's turn 1 us after the one before it. */
	for (unsigned i = 0; i < W; i++)
		for (unsigned j = i + 1; j < W; j++)
			if (w[j] < w[i]) {
				unsigned long long x = w[i];
				w[i] = w[j];
				w[j] = x;
			}
	for (unsigned i = 1; i < W; i++)
		assert_true(w[i] - w[i - 1] >= 1000);
	assert_true(w[W - 1] - w[0] < (W - 1) * 1000 + 1000);
	cta_sim_free(s);
}

/* Each thread takes 64 turns on one count, each followed by an atomic on
 * a word of its own (16384 words). */
struct prog_spread_args {
	unsigned *count, *own;
	unsigned long long *t;
};
CTA_KERNEL(prog_turns_spread, struct prog_spread_args, p)
{
	unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
	for (unsigned i = 0; i < 64; i++) {
		atomicAdd(p->count, 1u);
		atomicAdd(&p->own[g * 64 + i], 1u);
	}
	p->t[g] = cta_globaltimer_ns();
}

/* The turns on the count are the same wherever the words lie: a table of
 * 4096 slots by address hash, which gave an address's slot to another
 * and lost its turns, made them depend on the arrays' addresses (and the
 * traces of ck_graph_grid_sync on where the host put its arrays). */
static void turns_do_not_depend_on_where_the_arrays_lie(void **state)
{
	(void)state;
	enum { B = 4, T = 64, N = B * T * 64 + 1 };
	static const size_t at[] = {0, N + 7, 2 * N + 1031, 3 * N + 4093};
	unsigned *mem = calloc(4 * N + 8192, sizeof(unsigned));
	assert_non_null(mem);
	unsigned long long t[4][B * T];
	for (size_t r = 0; r < 4; r++) {
		struct prog_spread_args a = {mem + at[r], mem + at[r] + 1, t[r]};
		cta_sim *s = run_coop(&prog_turns_spread, B, T, &a, 100, 500, 1000000, 0);
		assert_int_equal(mem[at[r]], B * T * 64);
		cta_sim_free(s);
		if (r)
			assert_memory_equal(t[r], t[0], sizeof(t[0]));
	}
	/* (64 turns of 1 us for each of 8 warps: the count was contended.) */
	unsigned long long hi = 0;
	for (unsigned i = 0; i < B * T; i++)
		hi = t[0][i] > hi ? t[0][i] : hi;
	assert_true(hi >= 8 * 64 * 1000);
	free(mem);
}

/* One thread: atomics on a, a again, then b, the clock after each; then
 * `n` atomics on n words `stride` apart (stride 0: one word), the clock
 * after them. */
struct prog_hit_args {
	unsigned *w;
	unsigned n, stride;
	unsigned long long *t; /* [5] */
};
CTA_KERNEL(prog_hits, struct prog_hit_args, p)
{
	p->t[0] = cta_globaltimer_ns();
	atomicAdd(&p->w[0], 1u);
	p->t[1] = cta_globaltimer_ns();
	atomicAdd(&p->w[0], 1u);
	p->t[2] = cta_globaltimer_ns();
	atomicAdd(&p->w[1], 1u);
	p->t[3] = cta_globaltimer_ns();
	for (unsigned i = 0; i < p->n; i++)
		atomicAdd(&p->w[2 + i * p->stride], 1u);
	p->t[4] = cta_globaltimer_ns();
}

/* An atomic on an address an atomic took a turn on before costs
 * wait_hit_ns (100), one on a new address wait_atomic_ns (1000); with
 * wait_hit_ns 0 every atomic costs wait_atomic_ns. */
static void an_atomic_on_an_address_seen_before_costs_a_hit(void **state)
{
	(void)state;
	unsigned w[8] = {0};
	for (int hit = 0; hit < 2; hit++) {
		unsigned long long t[5] = {0};
		struct prog_hit_args a = {w, 0, 1, t};
		coop_hit_ns = hit ? 100 : 0;
		cta_sim *s = run_coop(&prog_hits, 1, 1, &a, 50, 1000, 1, 0);
		coop_hit_ns = 0;
		cta_sim_free(s);
		assert_int_equal(t[1] - t[0], 1000);
		assert_int_equal(t[2] - t[1], hit ? 100 : 1000);
		assert_int_equal(t[3] - t[2], 1000);
	}
}

/* A thread's atomics one after another slow down as a poll's do (a
 * round's back-off, CTA__SPIN_RAMP) only on one address: 512 atomics on
 * 512 words cost 512 x wait_atomic_ns, 512 on one word tens of us more. */
static void a_scan_of_many_addresses_is_no_poll(void **state)
{
	(void)state;
	enum { N = 512 };
	unsigned *w = calloc(2 + N, sizeof(unsigned));
	assert_non_null(w);
	unsigned long long took[2];
	for (unsigned stride = 0; stride < 2; stride++) {
		unsigned long long t[5] = {0};
		struct prog_hit_args a = {w, N, stride, t};
		cta_sim *s = run_coop(&prog_hits, 1, 1, &a, 50, 100, 0, 0);
		cta_sim_free(s);
		took[stride] = t[4] - t[3];
	}
	assert_int_equal(w[2], N + 1);
	assert_int_equal(took[1], N * 100);
	assert_true(took[0] > took[1] + 20000);
	free(w);
}

/* Block 0's thread 0 writes a flag after 20 us of work; thread 0 of every
 * other block polls it and records when it saw it. */
CTA_KERNEL(prog_flag_to_many, struct prog_turn_args, p)
{
	if (threadIdx.x != 0)
		return;
	if (blockIdx.x == 0) {
		cta_spin_ns(20000);
		cta_st_volatile(p->count, 1u);
	} else {
		while (!cta_ld_volatile(p->count)) {
		}
		p->t[blockIdx.x] = cta_globaltimer_ns();
	}
}

/* A poll takes its turn on its address (wait_poll_ps 1 us): 15 pollers of
 * one flag, 100 ns a poll, see it one turn after another, over 14 us or
 * more; without the turns all within two polls of one another. */
static void polls_take_turns_on_their_address(void **state)
{
	(void)state;
	enum { B = 16 };
	unsigned long long spread[2];
	for (int turns = 0; turns < 2; turns++) {
		unsigned flag = 0;
		unsigned long long t[B] = {0};
		struct prog_turn_args a = {&flag, t};
		coop_poll_ps = turns ? 1000000 : 0;
		cta_sim *s = run_coop(&prog_flag_to_many, B, 32, &a, 100, 0, 0, 0);
		coop_poll_ps = 0;
		cta_sim_free(s);
		unsigned long long lo = t[1], hi = t[1];
		for (unsigned b = 1; b < B; b++) {
			assert_true(t[b] >= 20000);
			lo = t[b] < lo ? t[b] : lo;
			hi = t[b] > hi ? t[b] : hi;
		}
		spread[turns] = hi - lo;
	}
	assert_true(spread[0] <= 200);
	assert_true(spread[1] >= 14000);
}

/* A grid.sync() arrival takes its turn on the grid's count (wait_sync_ps
 * 200 ns): 64 blocks are let go no earlier than 64 turns after the first
 * arrival, and within a poll (wait_load_ns 100) and the atomic's 300 ns of
 * the last turn. */
static void grid_sync_arrivals_take_turns(void **state)
{
	(void)state;
	enum { B = 64, T = 32 };
	unsigned long long t[B * T], t0[B * T];
	struct prog_turn_args a = {NULL, t0};
	cta_sim *s = run_coop(&prog_one_grid_sync, B, T, &a, 100, 0, 0, 0);
	cta_sim_free(s);
	a.t = t;
	s = run_coop(&prog_one_grid_sync, B, T, &a, 100, 300, 0, 200000);
	unsigned long long lo = t0[0], hi = t[0];
	for (unsigned i = 0; i < B * T; i++) {
		lo = t0[i] < lo ? t0[i] : lo;
		hi = t[i] > hi ? t[i] : hi;
		assert_true(t[i] >= B * 200);
	}
	/* Against the same run without the turns: 64 turns and the atomic
	 * later, within a poll and a block barrier. */
	assert_true(hi - lo >= (B - 1) * 200 + 300);
	assert_true(hi - lo <= B * 200 + 300 + 100 + 200);
	cta_sim_free(s);
}

/* A thread spinning on memory nothing will change is stopped one watchdog
 * period (--watchdog) after it started, named with its block, thread and
 * line; the run ends with the rule broken. */
static void a_thread_spinning_forever_is_stopped_by_the_watchdog(void **state)
{
	(void)state;
	int flag = 0;
	struct prog_args a = {&flag, NULL, 0};
	struct cta_sim_opts o = st_opts("H100-SXM");
	o.watchdog_ns = 50000;
	cta_sim *s;
	assert_int_equal(cta_sim_new(&s, &o), 0);
	struct cta_launch l = launch_of(&prog_spin_forever, 1, 64, &a);
	assert_int_equal(cta_sim_launch(s, &l, NULL), 0);
	assert_int_equal(cta_sim_run(s), CTA_EUB);
	assert_int_equal(cta_sim_ub_count(s), 1);
	const struct cta_ub_report *r = cta_sim_ub_report(s, 0);
	assert_string_equal(r->rule, "watchdog");
	assert_int_equal(r->line,
	                 st_find_line("tests/unit/test_progress.c", "MARK:spin_forever", "MARK"));
	assert_int_equal(r->thread, 0);
	assert_int_equal(r->block, 0);
	assert_true(r->t_ns > 50000 && r->t_ns < 60000);
	assert_non_null(strstr(r->cause, "thread 0 of block (0,0,0)"));
	cta_sim_free(s);
}

/* Yield points are counted per thread from its start (kernel.h's
 * cta__poll): a thread that never makes CTA__POLL_BUDGET of them twice
 * never spins, even on a lane whose earlier threads left a count there
 * (once those counted on, every fourth thread of a run spun, its clock a
 * poll round later). */
static void yield_points_are_counted_per_thread(void **state)
{
	(void)state;
	unsigned count = 0;
	unsigned long long t[64] = {0};
	struct prog_polls_args a = {&count, t};
	struct cta_sim_opts o = st_opts("H100-SXM");
	cta_sim *s;
	assert_int_equal(cta_sim_new(&s, &o), 0);
	struct cta_launch l = {0};
	l.kernel = &prog_twenty_polls;
	l.grid[0] = l.grid[1] = l.grid[2] = 1;
	l.block[0] = 64;
	l.block[1] = l.block[2] = 1;
	l.args = &a;
	assert_int_equal(cta_sim_launch(s, &l, NULL), 0);
	assert_int_equal(cta_sim_run(s), 0);
	assert_int_equal(count, 64 * 20);
	for (int i = 1; i < 64; i++)
		assert_int_equal(t[i], t[0]);
	cta_sim_free(s);
}

/* The paper's multitasking problem: a higher-priority blocking kernel
 * takes the SMs the rest of a running blocking kernel needs. Neither can
 * finish, and the report says why. (A dispatch latency spreads the first
 * kernel's dispatch, so the second arrives half-way through it.) */
static void a_higher_priority_kernel_holding_the_sms_is_forward_progress(void **state)
{
	(void)state;
	unsigned c0 = 0, c1 = 0;
	struct prog_args a0 = {NULL, &c0, 0}, a1 = {NULL, &c1, 0};
	struct cta_sim_opts o = st_opts("H100-SXM");
	o.sm_limit = 2; /* 16 slots for blocks of 256 threads */
	o.device.dispatch_latency_ns = 500;
	o.device.launch_gap_ns = 0; /* the second launch at its release */
	cta_sim *s;
	assert_int_equal(cta_sim_new(&s, &o), 0);
	int hi;
	assert_int_equal(cta_sim_stream_new(s, &hi, o.device.priority_greatest), 0);
	struct cta_launch l0 = launch_of(&prog_grid_barrier, 16, 256, &a0);
	struct cta_launch l1 = launch_of(&prog_grid_barrier, 12, 256, &a1);
	l0.label = "low";
	l1.label = "urgent";
	l1.stream = hi;
	l1.release_ns = 4000;
	assert_int_equal(cta_sim_launch(s, &l0, NULL), 0);
	assert_int_equal(cta_sim_launch(s, &l1, NULL), 0);
	assert_int_equal(cta_sim_run(s), CTA_EUB);
	assert_true(cta_sim_ub_count(s) >= 2);
	const struct cta_ub_report *r = cta_sim_ub_report(s, 0);
	assert_string_equal(r->rule, "forward_progress");
	assert_int_equal(r->line,
	                 st_find_line("tests/unit/test_progress.c", "MARK:grid_barrier", "MARK"));
	assert_non_null(strstr(r->cause, "of kernel low wait to become resident"));
	assert_non_null(strstr(r->cause, "of other kernels (urgent, priority"));
	cta_sim_free(s);
}

/* Two resident blocks taking turns pass under fair scheduling; under
 * adversarial scheduling one of them is starved while the other spins,
 * and the watchdog says the kernel relies on fairness. */
static void adversarial_scheduling_catches_reliance_on_fairness(void **state)
{
	(void)state;
	for (int mode = 0; mode < 2; mode++) {
		int turn = 0;
		struct prog_args a = {&turn, NULL, 6};
		struct cta_sim_opts o = st_opts("H100-SXM");
		o.spin_sched = mode ? CTA_SPIN_ADVERSARIAL : CTA_SPIN_FAIR;
		cta_sim *s;
		assert_int_equal(cta_sim_new(&s, &o), 0);
		struct cta_launch l = launch_of(&prog_ping_pong, 2, 32, &a);
		assert_int_equal(cta_sim_launch(s, &l, NULL), 0);
		int rc = cta_sim_run(s);
		if (!mode) {
			assert_int_equal(rc, 0);
			assert_int_equal(turn, 0); /* six hand-overs */
		} else {
			assert_int_equal(rc, CTA_EUB);
			const struct cta_ub_report *r = cta_sim_ub_report(s, 0);
			assert_string_equal(r->rule, "watchdog");
			assert_non_null(strstr(r->cause, "relies on fair scheduling"));
		}
		cta_sim_free(s);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(exactly_co_resident_grid_passes),
	    cmocka_unit_test(one_block_more_is_a_forward_progress_report),
	    cmocka_unit_test(the_issue_gate_never_holds_blocks_that_wait_for_each_other),
	    cmocka_unit_test(too_large_cooperative_launch_fails_at_launch),
	    cmocka_unit_test(barrier_writes_keep_the_watchdog_away),
	    cmocka_unit_test(spinning_kernels_trace_identically_on_any_host_threads),
	    cmocka_unit_test(a_thread_spinning_forever_is_stopped_by_the_watchdog),
	    cmocka_unit_test(yield_points_are_counted_per_thread),
	    cmocka_unit_test(a_higher_priority_kernel_holding_the_sms_is_forward_progress),
	    cmocka_unit_test(adversarial_scheduling_catches_reliance_on_fairness),
	    cmocka_unit_test(a_blocking_kernels_reads_follow_virtual_time),
	    cmocka_unit_test(a_blocking_kernels_atomics_take_turns_on_their_address),
	    cmocka_unit_test(grid_sync_arrivals_take_turns),
	    cmocka_unit_test(turns_do_not_depend_on_where_the_arrays_lie),
	    cmocka_unit_test(waiting_blocks_and_turns_cost_bytes),
	    cmocka_unit_test(an_atomic_on_an_address_seen_before_costs_a_hit),
	    cmocka_unit_test(a_scan_of_many_addresses_is_no_poll),
	    cmocka_unit_test(polls_take_turns_on_their_address),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
