/* Tests of body execution (sim/exec): every thread of every block runs
 * once, __syncthreads and shared memory behave as on a GPU, barrier-free
 * blocks run as a plain loop without per-thread fibers, and divergent or
 * deadlocked barriers are reported with their location while the run still
 * ends. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/upcalls.h"
#include "clc/clc.h"
#include "ctasim/trace.h"
#include "engine/engine.h"
#include "exec/exec.h"
#include "exec/regions.h"
#include "sched/sched.h"
#include "simtest.h"

#define THIS_FILE "tests/unit/test_exec.c"

/* ---- test kernels --------------------------------------------------------- */

/* Counts each global thread once and checks the built-in indices against
 * the dimensions. */
struct ex_hits_args {
	unsigned *hits;
	unsigned *bad;
	unsigned long long ns;
};
CTA_KERNEL(ex_hits, struct ex_hits_args, p)
{
	unsigned long long blk =
	    blockIdx.x + (unsigned long long)gridDim.x *
	                     (blockIdx.y + (unsigned long long)gridDim.y * blockIdx.z);
	unsigned bsize = blockDim.x * blockDim.y * blockDim.z;
	if (threadIdx.x >= blockDim.x || threadIdx.y >= blockDim.y || threadIdx.z >= blockDim.z ||
	    blockIdx.x >= gridDim.x || blockIdx.y >= gridDim.y || blockIdx.z >= gridDim.z)
		atomicAdd(p->bad, 1u);
	atomicAdd(&p->hits[blk * bsize + cta_thread_rank()], 1u);
	cta_spin_ns(p->ns);
}

/* Reverses each block's slice through shared memory, twice over two
 * barriers, and records each thread's virtual time after the barrier. */
struct ex_rev_args {
	const int *in;
	int *out;
	unsigned long long *t_after; /* per global thread */
	unsigned long long *t_start; /* per block */
};
CTA_KERNEL(ex_rev, struct ex_rev_args, p)
{
	CTA_SHARED_ARRAY(int, s, 256);
	unsigned t = threadIdx.x, n = blockDim.x;
	unsigned g = blockIdx.x * n + t;
	if (t == 0)
		p->t_start[blockIdx.x] = cta_globaltimer_ns();
	/* Threads reach the barrier at different virtual times. */
	cta_spin_ns(10 * (unsigned long long)t);
	s[t] = p->in[g];
	__syncthreads();
	p->t_after[g] = cta_globaltimer_ns();
	int v = s[n - 1 - t];
	__syncthreads();
	s[t] = v + 1000 * (int)blockIdx.x;
	__syncthreads();
	p->out[g] = s[(t + 1) % n];
}

/* Odd threads return before the barrier the even ones wait at. */
struct ex_div_args {
	int *out;
};
CTA_KERNEL(ex_div_exit, struct ex_div_args, p)
{
	unsigned t = threadIdx.x;
	if (t % 2)
		return;
	__syncthreads(); /* MARK:div_exit */
	p->out[blockIdx.x * blockDim.x + t] = 1;
}

/* Odd and even threads wait at two different __syncthreads. */
CTA_KERNEL(ex_div_sites, struct ex_div_args, p)
{
	unsigned t = threadIdx.x;
	if (t % 2 == 0) {
		__syncthreads(); /* MARK:div_even */
	} else {
		__syncthreads(); /* MARK:div_odd */
	}
	p->out[blockIdx.x * blockDim.x + t] = 1;
}

/* Thread 0 waits on an mbarrier that expects two arrivals and gets one;
 * the others wait for it at __syncthreads. */
struct ex_dead_args {
	int *after;
};
CTA_KERNEL(ex_deadlock, struct ex_dead_args, p)
{
	CTA_SHARED(uint64_t, bar);
	if (cta_thread_rank() == 0)
		cta_mbarrier_init(bar, 2);
	__syncthreads();
	if (cta_thread_rank() == 0) {
		cta_mbarrier_arrive(bar);
		while (!cta_mbarrier_try_wait_parity(bar, 0)) { /* MARK:dead_mbar */
		}
	}
	__syncthreads(); /* MARK:dead_sync */
	atomicAdd(p->after, 1);
}

/* Every thread waits on an mbarrier no one arrives at. */
CTA_KERNEL(ex_mbar_forever, struct ex_dead_args, p)
{
	CTA_SHARED(uint64_t, bar);
	if (cta_thread_rank() == 0)
		cta_mbarrier_init(bar, 1);
	__syncthreads();
	while (!cta_mbarrier_try_wait_parity(bar, 0)) { /* MARK:forever */
	}
	atomicAdd(p->after, 1);
}

/* Declares more shared memory than its launch provides. */
CTA_KERNEL(ex_smem_overflow, struct ex_dead_args, p)
{
	CTA_SHARED_ARRAY(int, big, 4096);
	big[threadIdx.x] = 1;
	atomicAdd(p->after, big[threadIdx.x]);
}

/* mbarrier producer/consumer inside a block: thread 0 arrives after
 * spending 500 ns, the others wait for the phase and see its time. */
struct ex_mbar_args {
	unsigned long long *t_seen;
};
CTA_KERNEL(ex_mbar_phase, struct ex_mbar_args, p)
{
	CTA_SHARED(uint64_t, bar);
	if (cta_thread_rank() == 0)
		cta_mbarrier_init(bar, 1);
	__syncthreads();
	unsigned long long t0 = cta_globaltimer_ns();
	if (cta_thread_rank() == 0) {
		cta_spin_ns(500);
		cta_mbarrier_arrive(bar);
	}
	while (!cta_mbarrier_try_wait_parity(bar, 0)) {
	}
	p->t_seen[cta_thread_rank()] = cta_globaltimer_ns() - t0;
}

/* Many shared variables, each holding its own number. */
struct ex_sites_args {
	int *sum;
};
#define EX_S(n)                                                                                    \
	CTA_SHARED(int, v##n);                                                                     \
	*v##n = n
#define EX_S8(a)                                                                                   \
	EX_S(a##0);                                                                                \
	EX_S(a##1);                                                                                \
	EX_S(a##2);                                                                                \
	EX_S(a##3);                                                                                \
	EX_S(a##4);                                                                                \
	EX_S(a##5);                                                                                \
	EX_S(a##6);                                                                                \
	EX_S(a##7)
CTA_KERNEL(ex_sites_17, struct ex_sites_args, p)
{
	EX_S8(1);
	EX_S8(2);
	EX_S(30);
	__syncthreads();
	if (cta_thread_rank() == 0)
		atomicAdd(p->sum, *v10 + *v17 + *v20 + *v27 + *v30);
}
CTA_KERNEL(ex_sites_65, struct ex_sites_args, p)
{
	EX_S8(1);
	EX_S8(2);
	EX_S8(3);
	EX_S8(4);
	EX_S8(5);
	EX_S8(6);
	EX_S8(7);
	EX_S8(8);
	EX_S(90);
	if (cta_thread_rank() == 0)
		atomicAdd(p->sum, *v10 + *v90);
}

/* CTA r of each cluster spends r microseconds before the cluster barrier;
 * every thread records when it left the barrier and its cluster rank. */
struct ex_cl_args {
	unsigned long long *t_after; /* per global thread */
	unsigned long long *t_start; /* per block */
	unsigned *rank;              /* per block */
};
CTA_KERNEL(ex_cluster_sync, struct ex_cl_args, p)
{
	unsigned blk = blockIdx.x;
	if (cta_thread_rank() == 0) {
		p->t_start[blk] = cta_globaltimer_ns();
		p->rank[blk] = cta_cluster_block_rank();
	}
	cta_spin_ns(1000ull * cta_cluster_block_rank());
	cta_cluster_sync();
	p->t_after[blk * blockDim.x + threadIdx.x] = cta_globaltimer_ns();
}

/* ---- helpers -------------------------------------------------------------- */

static cta_sim *run_launch(const struct cta_sim_opts *o, const struct cta_kernel_def *k,
                           const void *args, const unsigned grid[3], const unsigned block[3],
                           size_t smem, int *rc)
{
	cta_sim *s;
	assert_int_equal(cta_sim_new(&s, o), 0);
	struct cta_launch l = {0};
	l.kernel = k;
	memcpy(l.grid, grid, sizeof(l.grid));
	memcpy(l.block, block, sizeof(l.block));
	l.smem_static = smem;
	l.args = args;
	assert_int_equal(cta_sim_launch(s, &l, NULL), 0);
	*rc = cta_sim_run(s);
	return s;
}

/* Records what thread 0 finds in a static shared variable and in the
 * dynamic shared memory on entry, then leaves both dirty. With `use` 0 the
 * body touches no shared memory at all. */
struct ex_fresh_args {
	unsigned *seen; /* per block: nonzero bytes found */
	int use;
	unsigned dyn; /* dynamic shared bytes */
};
CTA_KERNEL(ex_smem_fresh, struct ex_fresh_args, p)
{
	if (!p->use || cta_thread_rank() != 0)
		return;
	CTA_SHARED_ARRAY(unsigned char, stat, 48);
	CTA_SHARED_DYNAMIC(unsigned char, dyn);
	unsigned bad = 0;
	for (int i = 0; i < 48; i++) {
		bad += stat[i] != 0;
		stat[i] = 0xa5;
	}
	for (unsigned i = 0; i < p->dyn; i++) {
		bad += dyn[i] != 0;
		dyn[i] = 0x5a;
	}
	p->seen[blockIdx.x] = bad;
}

/* ---- functional execution --------------------------------------------------- */

static void every_thread_of_every_block_runs_exactly_once(void **state)
{
	(void)state;
	struct cta_sim_opts o = st_opts("H100-SXM");
	const unsigned grid[3] = {3, 2, 2}, block[3] = {8, 4, 2};
	unsigned total = 12 * 64, bad = 0;
	unsigned *hits = calloc(total, sizeof(*hits));
	struct ex_hits_args a = {hits, &bad, 7};
	int rc;
	cta_sim *s = run_launch(&o, &ex_hits, &a, grid, block, 0, &rc);
	assert_int_equal(rc, 0);
	for (unsigned i = 0; i < total; i++)
		assert_int_equal(hits[i], 1);
	assert_int_equal(bad, 0);
	const struct cta_kernel_stats *st = cta_sim_kernel_stats(s, 0);
	assert_int_equal(st->blocks, 12);
	assert_int_equal(st->launched, 12);
	assert_int_equal(cta_sim_ub_count(s), 0);
	cta_sim_free(s);
	free(hits);
}

/* Each thread records when its spin ended. */
struct ex_when_args {
	unsigned long long *t_end; /* per global thread */
	unsigned *hits;
	unsigned long long ns;
};
CTA_KERNEL(ex_when, struct ex_when_args, p)
{
	unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
	cta_spin_ns(p->ns + 7 * (unsigned long long)(blockIdx.x % 5));
	p->t_end[g] = cta_globaltimer_ns();
	p->hits[g]++;
}

/* A lane that finishes a block moves on to the next block of its batch
 * (cta__claim_next) instead of returning to its runner: the blocks of one
 * batch start at different SM loads, so their cta_spin_ns cost differs
 * (a device whose spin scale grows with the load), and each must still
 * be charged its own. Every thread's end time matches a run in which
 * lanes never move on, and the durations do differ. */
static void lane_moving_on_keeps_each_block_its_own_duration(void **state)
{
	(void)state;
	struct cta_sim_opts o = st_opts("H100-SXM");
	o.sm_limit = 4;
	for (unsigned r = 1; r <= CTA_DEVICE_MAX_RESIDENT; r++)
		o.device.spin_scale_ppm[r] = 1000000 + 250000 * (r - 1);
	enum { G = 40, T = 96 };
	const unsigned grid[3] = {G, 1, 1}, block[3] = {T, 1, 1};
	unsigned long long *t[2];
	unsigned *hits[2];
	uint64_t lanes[2];
	for (int run = 0; run < 2; run++) {
		t[run] = calloc(G * T, sizeof(**t));
		hits[run] = calloc(G * T, sizeof(**hits));
		struct ex_when_args a = {t[run], hits[run], 1000};
		cta__exec_lane_moves = run == 0;
		int rc;
		cta_sim *s = run_launch(&o, &ex_when, &a, grid, block, 0, &rc);
		cta__exec_lane_moves = 1;
		assert_int_equal(rc, 0);
		lanes[run] = s->lanes_started;
		cta_sim_free(s);
	}
	unsigned long long dmin = ~0ull, dmax = 0;
	for (unsigned i = 0; i < G * T; i++) {
		assert_int_equal(hits[0][i], 1);
		assert_int_equal(hits[1][i], 1);
		assert_int_equal(t[0][i], t[1][i]);
		if (i % T == 0) {
			unsigned long long d = t[0][i]; /* blocks of one wave start together */
			dmin = d < dmin ? d : dmin;
			dmax = d > dmax ? d : dmax;
		}
	}
	assert_true(dmax > dmin + 500);
	/* One lane per block either way: a lane moving on counts as the
	 * next block's. */
	assert_int_equal(lanes[0], G);
	assert_int_equal(lanes[1], G);
	for (int run = 0; run < 2; run++) {
		free(t[run]);
		free(hits[run]);
	}
}

/* When each block's work began and ended (thread 0): one cta_spin_ns of
 * ns, four times as long in block 0. */
struct ex_gate_args {
	unsigned long long *t0, *t1;
	unsigned long long ns;
};
CTA_KERNEL(ex_gate, struct ex_gate_args, p)
{
	unsigned long long a = cta_globaltimer_ns();
	cta_spin_ns(blockIdx.x == 0 ? 4 * p->ns : p->ns);
	if (cta_thread_rank() == 0) {
		p->t0[blockIdx.x] = a;
		p->t1[blockIdx.x] = cta_globaltimer_ns();
	}
}

/* The issue gate (spin_gate_threads 1024): eight 256-thread blocks on one
 * SM all start (their start records at one time), the first five begin
 * their work at once, and the last three, which found more than 1024
 * threads running, begin theirs when the 20 us blocks end, then run
 * their own 20 us; the 80 us block is not stretched. Without the gate all
 * eight begin at once. */
static void issue_gate_holds_blocks_past_it_until_running_ones_end(void **state)
{
	(void)state;
	enum { G = 8, T = 256, NS = 20000 };
	const unsigned grid[3] = {G, 1, 1}, block[3] = {T, 1, 1};
	for (unsigned gate = 0; gate <= 1024; gate += 1024) {
		struct cta_sim_opts o = st_opts("H100-SXM");
		o.sm_limit = 1;
		o.device.spin_gate_threads = gate;
		char path[256];
		st_tmpname(path, sizeof(path), "gate.trace");
		o.trace_path = path;
		unsigned long long t0[G], t1[G];
		struct ex_gate_args a = {t0, t1, NS};
		int rc;
		cta_sim *s = run_launch(&o, &ex_gate, &a, grid, block, 0, &rc);
		assert_int_equal(rc, 0);
		cta_sim_free(s);
		struct cta_trace t;
		char err[256];
		assert_int_equal(cta_trace_read(&t, path, err, sizeof(err)), 0);
		remove(path);
		uint64_t first = UINT64_MAX, last = 0;
		unsigned starts = 0;
		for (size_t i = 0; i < t.count; i++)
			if (t.recs[i].ev == CTA_TEV_START) {
				starts++;
				first = t.recs[i].t_ns < first ? t.recs[i].t_ns : first;
				last = t.recs[i].t_ns > last ? t.recs[i].t_ns : last;
			}
		cta_trace_free(&t);
		assert_int_equal(starts, G);
		assert_true(first == last);
		for (unsigned b = 0; b < G; b++) {
			assert_int_equal(t1[b] - t0[b], b == 0 ? 4 * NS : NS);
			if (!gate || b < 5)
				assert_int_equal(t0[b], t0[0]);
			else
				assert_true(t0[b] >= t1[1] && t0[b] < t1[1] + 1000);
		}
	}
}

/* The register file's gate and its count by sub-partition, on one SM of
 * the H100-SXM preset with 108 registers a thread (112 allocated: four
 * warps a sub-partition). 256-thread blocks, two an SM: block 0 (80 us)
 * and block 1 (20 us) begin together; block 2 comes when block 1 ends
 * and, with spin_regs_free 1, its warps and block 0's fill their
 * sub-partitions: it begins its work when block 0 ends. Without the gate
 * it begins at once. 64-thread blocks: eight fit an SM (nine would by
 * its 65536 registers, not by its sub-partitions'), so the ninth starts
 * when one of the first eight ends. */
static cta_sim *run_regs(const struct cta_sim_opts *o, const void *args, unsigned grid,
                         unsigned block, int *rc)
{
	cta_sim *s;
	assert_int_equal(cta_sim_new(&s, o), 0);
	struct cta_launch l = {0};
	l.kernel = &ex_gate;
	l.grid[0] = grid;
	l.grid[1] = l.grid[2] = 1;
	l.block[0] = block;
	l.block[1] = l.block[2] = 1;
	l.regs_per_thread = 108;
	l.args = args;
	assert_int_equal(cta_sim_launch(s, &l, NULL), 0);
	*rc = cta_sim_run(s);
	return s;
}

static void register_gate_holds_later_blocks_that_fill_their_sub_partitions(void **state)
{
	(void)state;
	enum { NS = 20000 };
	for (unsigned gate = 0; gate <= 1; gate++) {
		struct cta_sim_opts o = st_opts("H100-SXM");
		o.sm_limit = 1;
		o.device.spin_regs_free = gate;
		/* (The end hold would end block 1 with block 0.) */
		o.device.spin_regs_hold_warps = 0;
		unsigned long long t0[9], t1[9];
		struct ex_gate_args a = {t0, t1, NS};
		int rc;
		cta_sim *s = run_regs(&o, &a, 3, 256, &rc);
		assert_int_equal(rc, 0);
		cta_sim_free(s);
		assert_int_equal(t0[1], t0[0]);
		assert_int_equal(t1[0] - t0[0], 4 * NS);
		assert_int_equal(t1[2] - t0[2], NS);
		if (gate)
			assert_true(t0[2] >= t1[0] && t0[2] < t1[0] + 1000);
		else
			assert_true(t0[2] >= t1[1] && t0[2] < t1[1] + 1000);
		/* Nine 64-thread blocks: the ninth waits for room. */
		s = run_regs(&o, &a, 9, 64, &rc);
		assert_int_equal(rc, 0);
		cta_sim_free(s);
		for (unsigned b = 1; b < 8; b++)
			assert_int_equal(t0[b], t0[1]);
		assert_true(t0[8] > t0[1] + NS);
	}
}

/* The blocks the register file's gate lets by (spin_regs_pass_ppm,
 * spin_regs_pass_blocks): the 256-thread setup above (two an SM), where
 * block 2 would wait behind the 80 us block 0, with every block drawn to
 * pass: at two blocks an SM or more it begins when block 1 ends; at one
 * it waits as before. The 64-thread setup of
 * register_gate_deals_the_sms_warps_evenly_over_sub_partitions (eight an
 * SM) is not let by at two: blocks 13 and 14 still wait. */
static void register_gate_lets_drawn_blocks_by_on_sms_of_few_blocks(void **state)
{
	(void)state;
	enum { NS = 20000, G = 15 };
	for (unsigned most = 1; most <= 2; most++) {
		struct cta_sim_opts o = st_opts("H100-SXM");
		o.sm_limit = 1;
		o.device.spin_regs_free = 1;
		o.device.spin_regs_hold_warps = 0;
		o.device.spin_regs_pass_ppm = 1000000;
		o.device.spin_regs_pass_blocks = most;
		unsigned long long t0[G], t1[G];
		struct ex_gate_args a = {t0, t1, NS};
		int rc;
		cta_sim *s = run_regs(&o, &a, 3, 256, &rc);
		assert_int_equal(rc, 0);
		cta_sim_free(s);
		assert_int_equal(t1[0] - t0[0], 4 * NS);
		assert_int_equal(t1[2] - t0[2], NS);
		if (most == 2)
			assert_true(t0[2] >= t1[1] && t0[2] < t1[1] + 1000);
		else
			assert_true(t0[2] >= t1[0] && t0[2] < t1[0] + 1000);
	}
	struct cta_sim_opts o = st_opts("H100-SXM");
	o.sm_limit = 1;
	o.device.spin_regs_free = 1;
	o.device.spin_regs_late_ns = 0;
	o.device.spin_regs_order = 0;
	o.device.spin_regs_pass_ppm = 1000000;
	o.device.spin_regs_pass_blocks = 2;
	unsigned long long t0[G], t1[G];
	struct ex_gate_args a = {t0, t1, NS};
	int rc;
	cta_sim *s = run_regs(&o, &a, G, 64, &rc);
	assert_int_equal(rc, 0);
	cta_sim_free(s);
	for (unsigned b = 13; b < G; b++)
		assert_true(t0[b] >= t1[8] && t0[b] < t1[8] + 1000);
}

/* Four calls of ns each; thread 0 records its block's end of work. */
struct ex_calls_args {
	unsigned long long *t1;
	unsigned long long ns;
};
CTA_KERNEL(ex_calls, struct ex_calls_args, p)
{
	for (int i = 0; i < 4; i++)
		cta_spin_ns(p->ns);
	if (cta_thread_rank() == 0)
		p->t1[blockIdx.x] = cta_globaltimer_ns();
}

/* A launch's declared issue_ops cost issue_ops x the warps sharing the
 * block's scheduler (a quarter of its SM's warps at its start, rounded up)
 * x spin_issue_ps on every call but the block's first: two 256-thread
 * blocks on one SM of the H100-SXM preset with spin_issue_ps 1500 and 10
 * instructions declared end 3 x 10 x 2 x 1.5 = 90 ns (block 0: 8 warps,
 * 2 a scheduler) and 3 x 10 x 4 x 1.5 = 180 ns (block 1: 16 warps) later
 * than with none declared; a model without spin_issue_ps charges nothing. */
static void declared_issue_ops_cost_each_call_after_the_first_by_warps_per_scheduler(void **state)
{
	(void)state;
	enum { NS = 5000 };
	unsigned long long end[3][2];
	for (int run = 0; run < 3; run++) {
		struct cta_sim_opts o = st_opts("H100-SXM");
		o.sm_limit = 1;
		o.device.spin_issue_ps = run == 2 ? 0 : 1500;
		o.device.spin_block_add_ns = 1000; /* the first call's issue comes off it */
		struct ex_calls_args a = {end[run], NS};
		cta_sim *s;
		assert_int_equal(cta_sim_new(&s, &o), 0);
		struct cta_launch l = {0};
		l.kernel = &ex_calls;
		l.grid[0] = 2;
		l.grid[1] = l.grid[2] = 1;
		l.block[0] = 256;
		l.block[1] = l.block[2] = 1;
		l.issue_ops = run == 0 ? 0 : 10;
		l.args = &a;
		assert_int_equal(cta_sim_launch(s, &l, NULL), 0);
		assert_int_equal(cta_sim_run(s), 0);
		cta_sim_free(s);
	}
	assert_int_equal(end[1][0] - end[0][0], 90);
	assert_int_equal(end[1][1] - end[0][1], 180);
	assert_int_equal(end[2][0], end[0][0]);
	assert_int_equal(end[2][1], end[0][1]);
}

/* The register file's gate's longest wait (spin_regs_wait_ns): on one SM
 * of the H100-SXM preset, block 2 of three 256-thread blocks comes when
 * the 20 us block 1 ends and waits behind the 80 us block 0; with a
 * longest wait of 30 us it begins its work 30 us after its start, while
 * block 0 still runs, and runs its 20 us; with none (0) it begins when
 * block 0 ends. */
/* The sub-partitions by placement order (spin_regs_order), the gates off:
 * on one SM, eight 64-thread blocks of 108 registers a thread (four
 * warps a sub-partition); block 0 (80 us, warps on sub-partitions 0 and
 * 1) outlasts the other seven. When they end, the next blocks take the
 * sub-partitions in turn from 0: blocks 8, 10 and 12 fill 0 and 1 beside
 * block 0, so block 14, whose turn is 0 and 1 again, waits for one of
 * them to end although 2 and 3 have room; counted over the whole SM it
 * starts with the others. */
static void register_order_places_a_block_on_its_own_sub_partitions(void **state)
{
	(void)state;
	enum { NS = 20000, G = 15 };
	for (unsigned order = 0; order <= 1; order++) {
		struct cta_sim_opts o = st_opts("H100-SXM");
		o.sm_limit = 1;
		o.device.spin_regs_free = 0;
		o.device.spin_regs_late_ns = 0;
		o.device.spin_regs_hold_warps = 0;
		o.device.spin_regs_order = order;
		unsigned long long t0[G], t1[G];
		struct ex_gate_args a = {t0, t1, NS};
		int rc;
		cta_sim *s = run_regs(&o, &a, G, 64, &rc);
		assert_int_equal(rc, 0);
		cta_sim_free(s);
		for (unsigned b = 8; b < 14; b++)
			assert_true(t0[b] >= t1[1] && t0[b] < t1[1] + 1000);
		if (order)
			assert_true(t0[14] >= t1[8] && t0[14] < t1[8] + 1000);
		else
			assert_true(t0[14] >= t1[1] && t0[14] < t1[1] + 1000);
	}
}

/* The entry after the wait (open_entry in sim/exec/exec.c): the setup of
 * register_gate_deals_the_sms_warps_evenly_over_sub_partitions with a
 * per-block add of 1 us. The blocks of the second wave that the register
 * file's gate holds begin their work when the first of the blocks that
 * ran at once ends; with spin_regs_order 0 at once (their entry was done
 * while they waited), with spin_regs_order 1, where a 2-warp block takes
 * its sub-partitions by placement order, 1 us later (they do their entry
 * once let go). */
static void register_gate_held_block_does_its_entry_once_let_go(void **state)
{
	(void)state;
	enum { NS = 20000, G = 15, ADD = 1000 };
	for (unsigned order = 0; order <= 1; order++) {
		struct cta_sim_opts o = st_opts("H100-SXM");
		o.sm_limit = 1;
		o.device.spin_regs_free = 1;
		o.device.spin_regs_late_ns = 0;
		o.device.spin_regs_hold_warps = 0;
		o.device.spin_regs_order = order;
		o.device.spin_block_add_ns = ADD;
		unsigned long long t0[G], t1[G];
		struct ex_gate_args a = {t0, t1, NS};
		int rc;
		cta_sim *s = run_regs(&o, &a, G, 64, &rc);
		assert_int_equal(rc, 0);
		cta_sim_free(s);
		unsigned long long first = ~0ull;
		for (unsigned b = 8; b < G; b++)
			if (t0[b] < t1[1] + NS / 4 && t1[b] < first)
				first = t1[b];
		unsigned held = 0;
		for (unsigned b = 8; b < G; b++) {
			if (t0[b] < t1[1] + NS / 4)
				continue;
			held++;
			assert_true(t0[b] >= first);
			if (order)
				assert_true(t0[b] >= first + ADD && t0[b] < first + ADD + 1000);
			else
				assert_true(t0[b] < first + 1000);
		}
		assert_true(held >= 1);
	}
}

static void register_gate_lets_a_block_go_after_its_longest_wait(void **state)
{
	(void)state;
	enum { NS = 20000, WAIT = 30000 };
	for (unsigned w = 0; w <= 1; w++) {
		struct cta_sim_opts o = st_opts("H100-SXM");
		o.sm_limit = 1;
		o.device.spin_regs_free = 1;
		o.device.spin_regs_wait_ns = w ? WAIT : 0;
		o.device.spin_regs_hold_warps = 0;
		unsigned long long t0[3], t1[3];
		struct ex_gate_args a = {t0, t1, NS};
		int rc;
		cta_sim *s = run_regs(&o, &a, 3, 256, &rc);
		assert_int_equal(rc, 0);
		cta_sim_free(s);
		assert_int_equal(t1[2] - t0[2], NS);
		if (w) {
			assert_true(t0[2] >= t1[1] + WAIT && t0[2] < t1[1] + WAIT + 2000);
			assert_true(t0[2] < t1[0]);
		} else {
			assert_true(t0[2] >= t1[0] && t0[2] < t1[0] + 1000);
		}
	}
}

/* The register file's gate counts the SM's warps together, dealt evenly
 * over the four sub-partitions (four warps each at 108 registers a
 * thread), not each block's rounded up apart: fifteen 64-thread (2-warp)
 * blocks on one SM with no duration factors, block 0 80 us and the others
 * 20 us. Blocks 1-7 end together and blocks 8-14 come at once beside
 * block 0: with spin_regs_free 1, blocks 8-12 begin at once (block 12
 * finds 10 warps running: 12 with its own, three a sub-partition, one
 * warp's registers free in each), 13 and 14 (14 and 16 warps: a quarter
 * full) wait for the first of them to end. Counting a block's 2 warps as
 * one in every sub-partition would hold block 12 too. (No late entry:
 * it would hold blocks 11 and 12, register_late_entry_holds_the_level_
 * the_gate_lets_go.) */
static void register_gate_deals_the_sms_warps_evenly_over_sub_partitions(void **state)
{
	(void)state;
	enum { NS = 20000, G = 15 };
	struct cta_sim_opts o = st_opts("H100-SXM");
	o.sm_limit = 1;
	o.device.spin_regs_free = 1;
	o.device.spin_regs_late_ns = 0;
	o.device.spin_regs_order = 0;
	unsigned long long t0[G], t1[G];
	struct ex_gate_args a = {t0, t1, NS};
	int rc;
	cta_sim *s = run_regs(&o, &a, G, 64, &rc);
	assert_int_equal(rc, 0);
	cta_sim_free(s);
	for (unsigned b = 2; b < 8; b++)
		assert_int_equal(t1[b], t1[1]);
	for (unsigned b = 8; b < 13; b++)
		assert_true(t0[b] >= t1[1] && t0[b] < t1[1] + 1000);
	for (unsigned b = 13; b < G; b++) {
		assert_true(t0[b] >= t1[8] && t0[b] < t1[8] + 1000);
		assert_int_equal(t1[b] - t0[b], NS);
	}
}

/* The late entry (spin_regs_late_ns): the setup above, blocks 8-14
 * placed at once beside block 0. Blocks 8-10 leave two warps' registers
 * free or more in each sub-partition and begin at once; blocks 11 and 12
 * (8 and 10 warps running, 10 and 12 with their own: three a
 * sub-partition) leave one, the level the gate lets go, and begin
 * spin_regs_late_ns after their start unless a block ends first; 13 and
 * 14 wait for the first of them to end, as before. Without it 11 and 12
 * begin at once. */
static void register_late_entry_holds_the_level_the_gate_lets_go(void **state)
{
	(void)state;
	enum { NS = 20000, G = 15, LATE = 3000 };
	for (unsigned late = 0; late <= LATE; late += LATE) {
		struct cta_sim_opts o = st_opts("H100-SXM");
		o.sm_limit = 1;
		o.device.spin_regs_free = 1;
		o.device.spin_regs_late_ns = late;
		o.device.spin_regs_order = 0;
		unsigned long long t0[G], t1[G];
		struct ex_gate_args a = {t0, t1, NS};
		int rc;
		cta_sim *s = run_regs(&o, &a, G, 64, &rc);
		assert_int_equal(rc, 0);
		cta_sim_free(s);
		for (unsigned b = 8; b < 11; b++)
			assert_true(t0[b] >= t1[1] && t0[b] < t1[1] + 1000);
		for (unsigned b = 11; b < 13; b++) {
			assert_true(t0[b] >= t1[1] + late && t0[b] < t1[1] + late + 1000);
			assert_int_equal(t1[b] - t0[b], NS);
		}
		for (unsigned b = 13; b < G; b++)
			assert_true(t0[b] >= t1[8] && t0[b] < t1[8] + 1000);
	}
}

/* The end hold (spin_regs_hold_warps 2): first-wave blocks of a lower
 * index that run longer hold a block's end while they put two warps on
 * one of its sub-partitions. 256-thread blocks (two warps a
 * sub-partition each), two an SM: block 1 (20 us) ends with block 0 (80
 * us), so block 2 starts only then; without the hold at once. 128-thread
 * blocks (one warp a sub-partition), four an SM: block 0 alone puts one
 * warp on each, so blocks 1-3 end at their own time and block 4 starts
 * then, held or not. (No register file's gate: it would hold block 2
 * behind block 0 whatever ends.) */
static void register_end_hold_ends_a_block_with_longer_ones_placed_with_it(void **state)
{
	(void)state;
	enum { NS = 20000 };
	for (unsigned hold = 0; hold <= 2; hold += 2) {
		for (unsigned wide = 0; wide <= 1; wide++) {
			unsigned block = wide ? 256 : 128, g = wide ? 3 : 5;
			struct cta_sim_opts o = st_opts("H100-SXM");
			o.sm_limit = 1;
			o.device.spin_regs_free = 0;
			o.device.spin_regs_late_ns = 0;
			o.device.spin_regs_hold_warps = hold;
			unsigned long long t0[5], t1[5];
			struct ex_gate_args a = {t0, t1, NS};
			int rc;
			cta_sim *s = run_regs(&o, &a, g, block, &rc);
			assert_int_equal(rc, 0);
			cta_sim_free(s);
			unsigned last = g - 1;
			assert_int_equal(t1[last] - t0[last], NS);
			if (hold && wide)
				assert_true(t0[last] >= t1[0] && t0[last] < t1[0] + 2000);
			else
				assert_true(t0[last] >= t1[1] && t0[last] < t1[1] + 2000);
		}
	}
}

/* early_mix's grid and block. */
enum { EARLY_G = 24, EARLY_T = 64 };

/* What a run of early_mix produced. */
struct early_out {
	int rc;
	uint64_t makespan;
	size_t nubs;
	struct cta_kernel_stats st[3];
	unsigned long long *t_end; /* the barrier-free kernels' threads */
	char *trace;
	size_t trace_len;
};

/* Three kernels released together on two SMs, so that batches hold blocks
 * of all three: two barrier-free ones whose blocks end together (so the
 * order of their commits is the order of their ends) and, in a third
 * stream, one with barriers, or (`ub`) one whose blocks each hit a
 * divergent barrier, in abort mode. */
static void early_mix(int ub, int trace, struct early_out *out)
{
	enum { G = EARLY_G, T = EARLY_T };
	struct cta_sim_opts o = st_opts("H100-SXM");
	o.sm_limit = 2;
	o.ub_mode = ub ? CTA_UB_ABORT : CTA_UB_REPORT;
	char path[256];
	st_tmpname(path, sizeof(path), "early.trace");
	o.trace_path = trace ? path : NULL;
	cta_sim *s;
	assert_int_equal(cta_sim_new(&s, &o), 0);
	int st1, st2;
	assert_int_equal(cta_sim_stream_new(s, &st1, 0), 0);
	assert_int_equal(cta_sim_stream_new(s, &st2, 0), 0);
	out->t_end = calloc(2 * G * T, sizeof(*out->t_end));
	unsigned *hits = calloc(2 * G * T, sizeof(*hits));
	int *in = calloc(G * T, sizeof(int)), *res = calloc(G * T, sizeof(int));
	unsigned long long *t_after = calloc(G * T, sizeof(*t_after));
	unsigned long long t_start[G];
	struct ex_when_args w0 = {out->t_end, hits, 1000},
	                    w1 = {out->t_end + G * T, hits + G * T, 1000};
	struct ex_rev_args rv = {in, res, t_after, t_start};
	struct ex_div_args dv = {res};
	struct cta_launch l = {0};
	l.grid[0] = G;
	l.grid[1] = l.grid[2] = 1;
	l.block[0] = T;
	l.block[1] = l.block[2] = 1;
	l.kernel = &ex_when;
	l.args = &w0;
	assert_int_equal(cta_sim_launch(s, &l, NULL), 0);
	l.args = &w1;
	l.stream = st1;
	assert_int_equal(cta_sim_launch(s, &l, NULL), 0);
	l.kernel = ub ? &ex_div_exit : &ex_rev;
	l.args = ub ? (const void *)&dv : (const void *)&rv;
	l.smem_static = ub ? 0 : 256 * sizeof(int);
	l.stream = st2;
	assert_int_equal(cta_sim_launch(s, &l, NULL), 0);
	out->rc = cta_sim_run(s);
	out->makespan = cta_sim_makespan_ns(s);
	out->nubs = cta_sim_ub_count(s);
	for (unsigned k = 0; k < 3; k++)
		out->st[k] = *cta_sim_kernel_stats(s, k);
	cta_sim_free(s);
	out->trace = trace ? st_slurp(path, &out->trace_len) : NULL;
	if (trace)
		remove(path);
	free(hits);
	free(in);
	free(res);
	free(t_after);
}

/* Asserts that two runs of early_mix agree (exit code want_rc, makespan,
 * reports, each kernel's statistics, every barrier-free thread's end and
 * the trace when written), then frees them. */
static void early_mix_same(struct early_out r[2], int want_rc)
{
	assert_int_equal(r[0].rc, want_rc);
	assert_int_equal(r[1].rc, want_rc);
	assert_int_equal(r[1].makespan, r[0].makespan);
	assert_int_equal(r[1].nubs, r[0].nubs);
	for (unsigned k = 0; k < 3; k++) {
		assert_int_equal(r[1].st[k].launched, r[0].st[k].launched);
		assert_int_equal(r[1].st[k].first_start_ns, r[0].st[k].first_start_ns);
		assert_int_equal(r[1].st[k].last_end_ns, r[0].st[k].last_end_ns);
		assert_int_equal(r[1].st[k].busy_ns, r[0].st[k].busy_ns);
		assert_int_equal(r[1].st[k].per_sm_max, r[0].st[k].per_sm_max);
	}
	assert_memory_equal(r[1].t_end, r[0].t_end, 2 * EARLY_G * EARLY_T * sizeof(*r[0].t_end));
	assert_int_equal(r[1].trace != NULL, r[0].trace != NULL);
	if (r[0].trace) {
		assert_true(r[0].trace_len > 1000);
		assert_int_equal(r[1].trace_len, r[0].trace_len);
		assert_memory_equal(r[1].trace, r[0].trace, r[0].trace_len);
	}
	for (int run = 0; run < 2; run++) {
		free(r[run].t_end);
		free(r[run].trace);
	}
}

/* A batch run on the engine's thread commits each unit as soon as its
 * body is done, in dispatch order, unless its outbox holds trace records,
 * UB reports or an error, and without a trace counts each block's start
 * as it comes to it (cta__engine_commit_early, cta__engine_unit_started). Nothing may
 * change: outcomes, stats, UB reports (one in abort mode) and the trace
 * are those of a run that commits after the batch. */
static void early_commits_change_nothing(void **state)
{
	(void)state;
	for (int ub = 0; ub < 2; ub++) {
		for (int trace = 0; trace < 2; trace++) {
			struct early_out r[2];
			for (int run = 0; run < 2; run++) {
				cta__engine_early_commits = run;
				early_mix(ub, trace, &r[run]);
				cta__engine_early_commits = 1;
			}
			if (trace)
				assert_non_null(r[0].trace);
			early_mix_same(r, ub ? CTA_EUB : 0);
			if (ub)
				assert_int_equal(r[0].nubs, 1);
		}
	}
}

/* What the kernel compiler registers for a body it found never waits
 * (CTA__KC_NO_WAIT, compiler/regions_pass.cpp's neverWaits), for the test
 * kernels here, which gcc compiles: left on the thread loop (why). */
static void claim_never_waits(const struct cta_kernel_def *k)
{
	struct cta__kc_def *d = calloc(1, sizeof(*d));
	assert_non_null(d);
	*d = (struct cta__kc_def){.name = k->name,
	                          .why = "a test's claim",
	                          .file = k->file,
	                          .line = k->line,
	                          .flags = CTA__KC_NO_WAIT};
	cta__kc_register(d); /* (registered for the process, as the pass's are) */
}

/* The grid's first blocks run plain; from block `half` on, thread 0 of each
 * odd block spins until the block after it wrote its flag, as in a
 * decoupled look-back where only some blocks wait. A rule that sealed a
 * kernel once a batch of it ran without spinning sealed 12,557 of its
 * batches, and the run ended at 31,122 ns after 21,018 events, against
 * 31,630 ns and 21,125 unsealed. */
struct ex_late_spin_args {
	unsigned long long *t_end;
	unsigned *flag;
	unsigned half;
};
CTA_KERNEL(ex_late_spin, struct ex_late_spin_args, p)
{
	unsigned g = blockIdx.x * blockDim.x + threadIdx.x;
	cta_spin_ns(500 + 13 * (unsigned long long)(blockIdx.x % 7));
	if (blockIdx.x >= p->half && (blockIdx.x & 1) && blockIdx.x + 1 < gridDim.x &&
	    threadIdx.x == 0)
		while (!cta_ld_volatile(&p->flag[blockIdx.x + 1]))
			cta_spin_ns(20);
	if (threadIdx.x == 0)
		cta_st_volatile(&p->flag[blockIdx.x], 1u);
	p->t_end[g] = cta_globaltimer_ns();
}

/* What the kernel compiler found of the shipped bodies (none in a build
 * without it): those that call nothing that waits are sealed, those whose
 * only waits are yield points (atomics, volatile loads) outside loops only
 * in region form, where such a yield point never spins; those with yield
 * points in loops (whose threads spin in region form too), and those that
 * cancel or sync the grid, never. */
static void shipped_kernels_carry_what_their_bodies_can_do(void **state)
{
	(void)state;
	static const struct {
		const char *name;
		unsigned flags;
	} want[] = {{"saxpy", CTA__KC_NO_WAIT},
	            {"compute_heavy", CTA__KC_NO_WAIT},
	            {"spin", CTA__KC_NO_WAIT},
	            {"block_reduce", CTA__KC_POLLS_ONLY},
	            /* (its threads spin in region form too: never sealed) */
	            {"ck_work_stealing", 0},
	            {"ck_graph_grid_sync", 0},
	            {"spin_clc", 0},
	            {"vec_add_clc", 0}};
	/* (The test kernels' claims here are not the pass's.) */
	int kc = 0;
	for (size_t j = 0; j < cta__regions_count(); j++)
		kc = kc || strcmp(cta__regions_at(j)->why ? cta__regions_at(j)->why : "",
		                  "a test's claim");
	if (!kc)
		skip();
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct cta__kc_def *d = NULL;
		for (size_t j = 0; j < cta__regions_count() && !d; j++)
			if (!strcmp(cta__regions_at(j)->name, want[i].name))
				d = cta__regions_at(j);
		assert_non_null(d);
		assert_int_equal(d->flags & (CTA__KC_NO_WAIT | CTA__KC_POLLS_ONLY), want[i].flags);
	}
}

/* A kernel whose later blocks spin is never sealed: what its first blocks
 * did says nothing of them. Sealed or not, the run ends the same. */
static void kernel_that_may_spin_is_never_sealed(void **state)
{
	(void)state;
	enum { G = 20000, T = 64 };
	const unsigned grid[3] = {G, 1, 1}, block[3] = {T, 1, 1};
	unsigned long long *t[2];
	uint64_t sealed[2], events[2], makespan[2];
	for (int run = 0; run < 2; run++) {
		struct cta_sim_opts o = st_opts("H100-SXM");
		o.device = *cta_device_find("H100-SXM");
		/* (Sealing alone: without the blocking kernels' wait_* terms,
		 * under which a kernel that spun runs on the engine's thread
		 * and each of its accesses waits for its time.) */
		o.device.wait_load_ns = o.device.wait_atomic_ns = o.device.wait_turn_ps = 0;
		o.device.wait_sync_ps = o.device.wait_hit_ns = o.device.wait_poll_ps = 0;
		t[run] = calloc(G * T, sizeof(*t[run]));
		unsigned *flag = calloc(G, sizeof(*flag));
		assert_non_null(t[run]);
		assert_non_null(flag);
		struct ex_late_spin_args a = {t[run], flag, G - 3000};
		cta__engine_seal = run;
		int rc;
		cta_sim *s = run_launch(&o, &ex_late_spin, &a, grid, block, 0, &rc);
		cta__engine_seal = 1;
		assert_int_equal(rc, 0);
		sealed[run] = s->batches_sealed;
		events[run] = cta_sim_event_count(s);
		makespan[run] = cta_sim_makespan_ns(s);
		for (unsigned b = 0; b < G; b++)
			assert_int_equal(flag[b], 1);
		cta_sim_free(s);
		free(flag);
	}
	assert_int_equal(sealed[1], 0);
	assert_int_equal(events[1], events[0]);
	assert_int_equal(makespan[1], makespan[0]);
	assert_memory_equal(t[1], t[0], G * T * sizeof(*t[0]));
	free(t[0]);
	free(t[1]);
}

/* A batch whose time to run came is sealed and runs later, with the
 * batches sealed after it, when nothing the engine does meanwhile can
 * depend on its bodies (seal_ready in sim/engine/sim.c): the blocks the
 * issue gate lets go at one time on many SMs run as one batch, not one
 * batch each. Nothing may change: every thread's end time, the kernel's
 * statistics, the makespan and the number of events, with blocks of five
 * lengths over three waves (their releases at many times): on the preset;
 * with blocks shorter than the retire latency (a sealed commit clamps an
 * end to the engine's time then, not now) and a dispatch latency that
 * puts dispatches at the times of sealed blocks' end events (their order
 * is their sequence numbers'); and with three kernels in three streams
 * on two SMs, whose blocks share batches. */
static void sealed_batches_change_nothing(void **state)
{
	(void)state;
	static int claimed;
	if (!claimed) {
		claim_never_waits(&ex_when);
		claim_never_waits(&ex_rev);
		claimed = 1;
	}
	enum { G = 3000, T = 256 };
	const unsigned grid[3] = {G, 1, 1}, block[3] = {T, 1, 1};
	for (int variant = 0; variant < 2; variant++) {
		unsigned long long *t[2];
		unsigned *hits[2];
		uint64_t batches[2], sealed[2], events[2], makespan[2];
		struct cta_kernel_stats st[2];
		for (int run = 0; run < 2; run++) {
			/* The preset's model: the gate and the fitted durations. */
			struct cta_sim_opts o = st_opts("H100-SXM");
			o.device = *cta_device_find("H100-SXM");
			if (variant) {
				memset(o.device.spin_add_ns, 0, sizeof(o.device.spin_add_ns));
				o.device.spin_add_mask = 0;
				o.device.spin_block_add_ns = 0;
				o.device.dispatch_latency_ns = 1;
				o.device.block_retire_ns = 5000;
			}
			t[run] = calloc(G * T, sizeof(*t[run]));
			hits[run] = calloc(G * T, sizeof(*hits[run]));
			assert_non_null(t[run]);
			assert_non_null(hits[run]);
			/* variant 1: 11 to 39 ns, ends 75 ns later (25: a dispatch's time) */
			struct ex_when_args a = {t[run], hits[run], variant ? 11 : 1000};
			cta__engine_seal = run;
			int rc;
			cta_sim *s = run_launch(&o, &ex_when, &a, grid, block, 0, &rc);
			cta__engine_seal = 1;
			assert_int_equal(rc, 0);
			batches[run] = s->batches;
			sealed[run] = s->batches_sealed;
			events[run] = cta_sim_event_count(s);
			makespan[run] = cta_sim_makespan_ns(s);
			st[run] = *cta_sim_kernel_stats(s, 0);
			cta_sim_free(s);
		}
		assert_int_equal(sealed[0], 0);
		assert_true(sealed[1] > 100);
		if (!variant)
			assert_true(batches[1] * 10 < batches[0]);
		assert_int_equal(events[1], events[0]);
		assert_int_equal(makespan[1], makespan[0]);
		assert_int_equal(st[1].launched, G);
		assert_int_equal(st[0].launched, G);
		assert_int_equal(st[1].first_start_ns, st[0].first_start_ns);
		assert_int_equal(st[1].last_end_ns, st[0].last_end_ns);
		assert_int_equal(st[1].busy_ns, st[0].busy_ns);
		assert_int_equal(st[1].per_sm_min, st[0].per_sm_min);
		assert_int_equal(st[1].per_sm_max, st[0].per_sm_max);
		for (unsigned i = 0; i < G * T; i++) {
			assert_int_equal(hits[0][i], 1);
			assert_int_equal(hits[1][i], 1);
		}
		assert_memory_equal(t[1], t[0], G * T * sizeof(*t[0]));
		for (int run = 0; run < 2; run++) {
			free(t[run]);
			free(hits[run]);
		}
	}

	struct early_out r[2];
	for (int run = 0; run < 2; run++) {
		cta__engine_seal = run;
		early_mix(0, 0, &r[run]);
		cta__engine_seal = 1;
	}
	early_mix_same(r, 0);
}

/* A block the issue gate holds as a record stays out of the ready batch
 * until it is let go, its start counted when placed (cta__base_hold_apart,
 * struct cta__held); one let go before the batch it would have joined was
 * sealed or run takes its place there. Nothing may change: every thread's
 * end time, the statistics, the makespan and the number of events, with
 * and without sealing, on the runs of sealed_batches_change_nothing (the
 * preset; blocks shorter than the retire latency with a dispatch latency,
 * where a block may be let go before the batch it would have joined
 * ran), with jittered latencies on one SM, where some are, and on three
 * kernels in three streams on two SMs. */
static void blocks_held_apart_change_nothing(void **state)
{
	(void)state;
	static int claimed;
	if (!claimed) {
		claim_never_waits(&ex_when);
		claim_never_waits(&ex_rev);
		claimed = 1;
	}
	enum { G = 3000, T = 256 };
	const unsigned grid[3] = {G, 1, 1}, block[3] = {T, 1, 1};
	uint64_t inserted = 0;
	for (int variant = 0; variant < 6; variant++) {
		unsigned long long *t[2];
		unsigned *hits[2];
		uint64_t events[2], makespan[2], held[2], batches[2], sealed[2];
		struct cta_kernel_stats st[2];
		for (int run = 0; run < 2; run++) {
			struct cta_sim_opts o = st_opts("H100-SXM");
			o.device = *cta_device_find("H100-SXM");
			if (variant & 1) {
				memset(o.device.spin_add_ns, 0, sizeof(o.device.spin_add_ns));
				o.device.spin_add_mask = 0;
				o.device.spin_block_add_ns = 0;
				o.device.dispatch_latency_ns = 1;
				o.device.block_retire_ns = 5000;
			}
			t[run] = calloc(G * T, sizeof(*t[run]));
			hits[run] = calloc(G * T, sizeof(*hits[run]));
			assert_non_null(t[run]);
			assert_non_null(hits[run]);
			if (variant >= 4) {
				/* Latencies jittered on one SM: blocks let go
				 * before the batch they would have joined ran. */
				o.jitter_ns = 300;
				o.sm_limit = 1;
			}
			struct ex_when_args a = {t[run], hits[run],
			                         variant >= 4    ? 1
			                         : (variant & 1) ? 11
			                                         : 1000};
			cta__base_held_apart = run;
			cta__engine_seal = variant < 2 || variant == 4;
			int rc;
			cta_sim *s = run_launch(&o, &ex_when, &a, grid, block, 0, &rc);
			cta__base_held_apart = 1;
			cta__engine_seal = 1;
			assert_int_equal(rc, 0);
			events[run] = cta_sim_event_count(s);
			makespan[run] = cta_sim_makespan_ns(s);
			st[run] = *cta_sim_kernel_stats(s, 0);
			held[run] = s->held_ord;
			inserted += s->held_inserted;
			batches[run] = s->batches;
			sealed[run] = s->batches_sealed;
			cta_sim_free(s);
		}
		assert_int_equal(held[0], 0);
		assert_true(held[1] > G / 4);
		/* Batches are sealed and run when they were. */
		assert_int_equal(batches[1], batches[0]);
		assert_int_equal(sealed[1], sealed[0]);
		assert_int_equal(events[1], events[0]);
		assert_int_equal(makespan[1], makespan[0]);
		assert_int_equal(st[1].launched, G);
		assert_int_equal(st[0].launched, G);
		assert_int_equal(st[1].first_start_ns, st[0].first_start_ns);
		assert_int_equal(st[1].last_end_ns, st[0].last_end_ns);
		assert_int_equal(st[1].busy_ns, st[0].busy_ns);
		assert_int_equal(st[1].per_sm_min, st[0].per_sm_min);
		assert_int_equal(st[1].per_sm_max, st[0].per_sm_max);
		for (unsigned i = 0; i < G * T; i++) {
			assert_int_equal(hits[0][i], 1);
			assert_int_equal(hits[1][i], 1);
		}
		assert_memory_equal(t[1], t[0], G * T * sizeof(*t[0]));
		for (int run = 0; run < 2; run++) {
			free(t[run]);
			free(hits[run]);
		}
	}
	assert_true(inserted > 0);

	struct early_out r[2];
	for (int run = 0; run < 2; run++) {
		cta__base_held_apart = run;
		early_mix(0, 0, &r[run]);
		cta__base_held_apart = 1;
	}
	early_mix_same(r, 0);
}

static void timing_only_runs_one_thread_per_block(void **state)
{
	(void)state;
	struct cta_sim_opts o = st_opts("H100-SXM");
	o.timing_only = 1;
	const unsigned grid[3] = {4, 1, 1}, block[3] = {128, 1, 1};
	unsigned bad = 0;
	unsigned *hits = calloc(4 * 128, sizeof(*hits));
	struct ex_hits_args a = {hits, &bad, 0};
	int rc;
	cta_sim *s = run_launch(&o, &ex_hits, &a, grid, block, 0, &rc);
	assert_int_equal(rc, 0);
	unsigned sum = 0;
	for (unsigned i = 0; i < 4 * 128; i++)
		sum += hits[i];
	assert_int_equal(sum, 4);
	for (unsigned b = 0; b < 4; b++)
		assert_int_equal(hits[b * 128], 1);
	cta_sim_free(s);
	free(hits);
}

/* A timing-only run takes the one-thread path whatever --threads says: no
 * pool, one worker. That is what "no slower at 16 threads" rests on; the
 * bench's ratio of the two only measures the host's noise. */
static void timing_only_runs_on_one_host_thread_whatever_threads_says(void **state)
{
	(void)state;
	struct cta_sim_opts o = st_opts("H100-SXM");
	o.threads = 16;
	cta_sim *s;
	assert_int_equal(cta_sim_new(&s, &o), 0);
	assert_int_equal(s->nworkers, 16);
	assert_non_null(s->pool);
	cta_sim_free(s);
	o.timing_only = 1;
	assert_int_equal(cta_sim_new(&s, &o), 0);
	assert_int_equal(s->nworkers, 1);
	assert_null(s->pool);
	cta_sim_free(s);
}

/* A kernel's first units run on the engine's thread (the probe, whose
 * blocks show whether they wait for one another, then a timed slice:
 * the probe's figure pays for the first lanes); one whose threads did
 * not spin runs on the pool from there on, the rest of its first wave
 * included. (Its second batch goes the way its timed wall cost says: on
 * a loaded machine that may be this thread.) A kernel whose threads spin
 * never leaves the engine's thread. */
static void a_kernel_runs_on_the_pool_after_its_first_units(void **state)
{
	(void)state;
	struct cta_sim_opts o = st_opts("H100-SXM");
	o.threads = 2;
	/* 1,172 blocks of 256 threads, each block tens of microseconds of
	 * host arithmetic: a first wave of 1,056 and a second of 116. */
	const char *const args[] = {"n=300000", ST_TSAN_SMALL("iters=200", "iters=50"), NULL};
	struct cta_harness *h;
	assert_int_equal(st_run_harness(&h, "compute_heavy", &o, args), 0);
	cta_sim *s = cta_harness_sim(h);
	assert_int_equal(s->batches, 2);
	/* The slice is at most a quarter of what is left of the wave. */
	assert_true(s->pool_units >= (1056 - 4) * 3 / 4);
	assert_true(s->pool_units <= 1172 - 4 - 1);
	assert_true(s->par_wall > 0);
	assert_true(s->ser_wall > 0);
	assert_false(s->ser_probed);
	/* One slice before the pool first ran it, one when the probe's
	 * figure was replaced: at most one a batch. */
	assert_true(s->slices >= 1);
	assert_true(s->slices <= 2);
	cta_harness_free(h);

	const char *const ck[] = {NULL};
	assert_int_equal(st_run_harness(&h, "ck_work_stealing", &o, ck), 0);
	s = cta_harness_sim(h);
	assert_int_equal(s->pool_units, 0);
	assert_int_equal(s->kernels[0]->comm_state, 2);
	cta_harness_free(h);
}

/* Bodies about as cheap as the engine's own work a block (block_reduce's:
 * about a microsecond in the loop form) are still timed on the pool,
 * twice (its first batch pays for its workers' first lanes), before the
 * faster way is kept: the choice is measured, not guessed from the
 * body's cost. Its batches (250-660 blocks) are large enough to wake the
 * pool on a machine several times faster than the development one. The
 * period skip takes such a run as it takes a run on one host thread, its
 * chunks on the pool or here. The skip needs the body as the kernel
 * compiler builds it (CTA__KC_NO_WAIT: its batches are sealed); a build
 * without the kernel compiler runs it on fibers and never skips, so the
 * test is skipped there. */
static void cheap_bodies_are_timed_on_the_pool_and_skip(void **state)
{
	(void)state;
	struct cta_sim_opts o = st_opts("H100-SXM");
	o.threads = 2;
	const char *const args[] = {"n=4194304", NULL};
	struct cta_harness *h;
	assert_int_equal(st_run_harness(&h, "block_reduce", &o, args), 0);
	cta_sim *s = cta_harness_sim(h);
	if (!s->kernels[0]->never_waits) {
		print_message("block_reduce's body is not compiled by the kernel compiler (a "
		              "build without llvm-config-16): no period skip to test\n");
		cta_harness_free(h);
		skip();
	}
	assert_true(s->seg_ns > 0);
	assert_false(s->seg_probed);
	assert_true(s->par_timed >= 2);
	assert_true(s->pool_units > 0);
	assert_true(s->ser_wall > 0);
	/* (An instrumented build's bodies may cost more than that, and then
	 * keep their batches on the pool: period_step.) */
	if (s->seg_ns < 20000.0)
		assert_true(cta_sim_blocks_skipped(s) > 0);
	cta_harness_free(h);
}

/* Blocks of one CTA take turns on the units that earlier blocks freed at
 * their commit (struct cta__placed, struct cta__retiring): a saxpy of
 * 4,096 blocks, four waves of 1,056 on an H100, makes two units where it
 * made one per resident block. A traced run, which makes the units of a
 * batch before it runs, keeps one per block of a wave; both end with the
 * same verdict, statistics and makespan. */
static void blocks_of_a_wave_take_turns_on_a_few_units(void **state)
{
	(void)state;
	char path[256];
	st_tmpname(path, sizeof(path), "turns.trace");
	size_t made[2];
	uint64_t makespan[2];
	struct cta_kernel_stats st[2];
	for (int trace = 0; trace < 2; trace++) {
		struct cta_sim_opts o = st_opts("H100-SXM");
		o.trace_path = trace ? path : NULL;
		const char *const args[] = {"n=1048576", NULL};
		struct cta_harness *h;
		assert_int_equal(st_run_harness(&h, "saxpy", &o, args), 0);
		cta_sim *s = cta_harness_sim(h);
		made[trace] = s->nunits_made;
		makespan[trace] = cta_sim_makespan_ns(s);
		st[trace] = *cta_sim_kernel_stats(s, 0);
		cta_harness_free(h);
	}
	remove(path);
	assert_true(made[0] <= 4);
	assert_true(made[1] >= 1056);
	assert_int_equal(makespan[1], makespan[0]);
	assert_int_equal(st[0].launched, 4096);
	assert_int_equal(st[1].launched, st[0].launched);
	assert_int_equal(st[1].first_start_ns, st[0].first_start_ns);
	assert_int_equal(st[1].last_end_ns, st[0].last_end_ns);
	assert_int_equal(st[1].busy_ns, st[0].busy_ns);
	assert_int_equal(st[1].per_sm_min, st[0].per_sm_min);
	assert_int_equal(st[1].per_sm_max, st[0].per_sm_max);
}

/* The same with the issue gate (the H100-SXM preset), which holds three
 * of every SM's eight blocks: a held block waits as a placement record
 * (struct cta__held) and gets its unit when its batch runs, so the run
 * still takes turns on a few units (it made one per held block, 396 a
 * wave); a traced run, which makes a batch's units before running it,
 * ends with the same statistics and makespan. */
static void blocks_the_gate_holds_wait_as_records(void **state)
{
	(void)state;
	char path[256];
	st_tmpname(path, sizeof(path), "held.trace");
	size_t made[2];
	uint64_t makespan[2];
	struct cta_kernel_stats st[2];
	for (int trace = 0; trace < 2; trace++) {
		struct cta_sim_opts o = st_opts("H100-SXM");
		o.device = *cta_device_find("H100-SXM");
		o.trace_path = trace ? path : NULL;
		const char *const args[] = {"n=1048576", NULL};
		struct cta_harness *h;
		assert_int_equal(st_run_harness(&h, "saxpy", &o, args), 0);
		cta_sim *s = cta_harness_sim(h);
		made[trace] = s->nunits_made;
		makespan[trace] = cta_sim_makespan_ns(s);
		st[trace] = *cta_sim_kernel_stats(s, 0);
		assert_int_equal(s->gate_waiting, 0);
		cta_harness_free(h);
	}
	remove(path);
	assert_true(made[0] <= 8);
	assert_int_equal(makespan[1], makespan[0]);
	assert_int_equal(st[0].launched, 4096);
	assert_int_equal(st[1].launched, st[0].launched);
	assert_int_equal(st[1].first_start_ns, st[0].first_start_ns);
	assert_int_equal(st[1].last_end_ns, st[0].last_end_ns);
	assert_int_equal(st[1].busy_ns, st[0].busy_ns);
	assert_int_equal(st[1].per_sm_min, st[0].per_sm_min);
	assert_int_equal(st[1].per_sm_max, st[0].per_sm_max);
}

static void syncthreads_makes_shared_memory_writes_visible_to_the_block(void **state)
{
	(void)state;
	struct cta_sim_opts o = st_opts("H100-SXM");
	enum { B = 5, T = 256 };
	int *in = malloc(B * T * sizeof(int)), *out = calloc(B * T, sizeof(int));
	unsigned long long *t_after = calloc(B * T, sizeof(*t_after));
	unsigned long long t_start[B];
	for (int i = 0; i < B * T; i++)
		in[i] = i * 3 + 1;
	struct ex_rev_args a = {in, out, t_after, t_start};
	const unsigned grid[3] = {B, 1, 1}, block[3] = {T, 1, 1};
	int rc;
	cta_sim *s = run_launch(&o, &ex_rev, &a, grid, block, T * sizeof(int), &rc);
	assert_int_equal(rc, 0);
	assert_int_equal(cta_sim_ub_count(s), 0);
	for (int b = 0; b < B; b++)
		for (int t = 0; t < T; t++) {
			/* out[t] = s2[(t+1)%T], s2[u] = in[T-1-u] + 1000 b */
			int u = (t + 1) % T;
			assert_int_equal(out[b * T + t], in[b * T + (T - 1 - u)] + 1000 * b);
			/* Everyone leaves the barrier at the latest arrival plus
			 * the barrier's cost. */
			assert_int_equal(t_after[b * T + t],
			                 t_start[b] + 10 * (T - 1) + o.device.barrier_ns);
		}
	/* Three barriers per thread. */
	assert_int_equal(cta_sim_barrier_crossings(s), (uint64_t)B * T * 3);
	cta_sim_free(s);
	free(in);
	free(out);
	free(t_after);
}

/* Shared memory starts as zero bytes in every block (kernel.h), also on a
 * block that reuses the memory of one that wrote it, after blocks that
 * used none, and when the next kernel declares more. Few SMs, many blocks:
 * the simulator's block storage is reused. */
static void shared_memory_starts_zeroed_in_every_block(void **state)
{
	(void)state;
	struct cta_sim_opts o = st_opts("H100-SXM");
	o.sm_limit = 2;
	enum { G = 200 };
	unsigned *seen[4];
	struct ex_fresh_args a[4] = {{NULL, 1, 64}, {NULL, 0, 0}, {NULL, 1, 2048}, {NULL, 1, 16}};
	cta_sim *s;
	assert_int_equal(cta_sim_new(&s, &o), 0);
	for (int k = 0; k < 4; k++) {
		seen[k] = calloc(G, sizeof(unsigned));
		for (int b = 0; b < G; b++)
			seen[k][b] = 1000; /* overwritten by every block that looks */
		a[k].seen = seen[k];
		struct cta_launch l = {0};
		l.kernel = &ex_smem_fresh;
		l.grid[0] = G;
		l.grid[1] = l.grid[2] = 1;
		l.block[0] = 64;
		l.block[1] = l.block[2] = 1;
		l.smem_static = 48;
		l.smem_dynamic = a[k].dyn;
		l.args = &a[k];
		assert_int_equal(cta_sim_launch(s, &l, NULL), 0);
	}
	assert_int_equal(cta_sim_run(s), 0);
	for (int k = 0; k < 4; k++) {
		for (int b = 0; b < G; b++)
			assert_int_equal(seen[k][b], a[k].use ? 0 : 1000);
		free(seen[k]);
	}
	cta_sim_free(s);
}

static void block_reduce_kernel_sums_correctly(void **state)
{
	(void)state;
	struct cta_sim_opts o = st_opts("H100-SXM");
	const char *args[] = {"n=100003", NULL};
	struct cta_harness *h;
	assert_int_equal(st_run_harness(&h, "block_reduce", &o, args), 0);
	assert_int_equal(cta_harness_verdict(h), CTA_VERDICT_PASS);
	cta_sim *s = cta_harness_sim(h);
	assert_int_equal(cta_sim_ub_count(s), 0);
	assert_true(cta_sim_barrier_crossings(s) > 0);
	cta_harness_free(h);
}

static void mbarrier_waiters_continue_at_the_phase_completion_time(void **state)
{
	(void)state;
	struct cta_sim_opts o = st_opts("H100-SXM");
	unsigned long long seen[64];
	struct ex_mbar_args a = {seen};
	const unsigned grid[3] = {1, 1, 1}, block[3] = {64, 1, 1};
	int rc;
	cta_sim *s = run_launch(&o, &ex_mbar_phase, &a, grid, block, 8, &rc);
	assert_int_equal(rc, 0);
	for (int t = 0; t < 64; t++)
		assert_int_equal(seen[t], 500);
	cta_sim_free(s);
}

/* ---- lazy fibers ------------------------------------------------------------ */

static void barrier_free_blocks_run_on_one_lane_each(void **state)
{
	(void)state;
	struct cta_sim_opts o = st_opts("H100-SXM");
	const unsigned grid[3] = {8, 1, 1}, block[3] = {256, 1, 1};
	unsigned bad = 0;
	unsigned *hits = calloc(8 * 256, sizeof(*hits));
	struct ex_hits_args a = {hits, &bad, 3};
	int rc;
	cta_sim *s = run_launch(&o, &ex_hits, &a, grid, block, 0, &rc);
	assert_int_equal(rc, 0);
	/* 2048 threads, no waits: one fiber per block, no context switch
	 * per thread. */
	assert_int_equal(s->lanes_started, 8);
	assert_int_equal(cta_sim_barrier_crossings(s), 0);
	cta_sim_free(s);
	free(hits);
}

static void threads_get_their_own_lane_only_once_they_wait(void **state)
{
	(void)state;
	struct cta_sim_opts o = st_opts("H100-SXM");
	enum { B = 4, T = 64 };
	int in[B * T], out[B * T];
	unsigned long long t_after[B * T], t_start[B];
	for (int i = 0; i < B * T; i++)
		in[i] = i;
	struct ex_rev_args a = {in, out, t_after, t_start};
	const unsigned grid[3] = {B, 1, 1}, block[3] = {T, 1, 1};
	int rc;
	cta_sim *s = run_launch(&o, &ex_rev, &a, grid, block, 256 * sizeof(int), &rc);
	assert_int_equal(rc, 0);
	/* Every thread but the last to arrive waits at the first barrier,
	 * so each needs a stack of its own: T lanes per block, no more (the
	 * later barriers reuse them). */
	assert_int_equal(s->lanes_started, (uint64_t)B * T);
	cta_sim_free(s);
}

/* ---- divergent and deadlocked barriers ---------------------------------------- */

static void barrier_skipped_by_exited_threads_is_reported_where_it_waits(void **state)
{
	(void)state;
	struct cta_sim_opts o = st_opts("H100-SXM");
	int out[3 * 64] = {0};
	struct ex_div_args a = {out};
	const unsigned grid[3] = {3, 1, 1}, block[3] = {64, 1, 1};
	int rc;
	cta_sim *s = run_launch(&o, &ex_div_exit, &a, grid, block, 0, &rc);
	assert_int_equal(rc, CTA_EUB);
	int line = st_find_line(THIS_FILE, "MARK:div_exit", "__syncthreads()");
	assert_true(line > 0);
	/* One report per block, at the barrier, naming the exited threads. */
	assert_int_equal(cta_sim_ub_count(s), 3);
	for (size_t i = 0; i < 3; i++) {
		const struct cta_ub_report *r = cta_sim_ub_report(s, i);
		assert_string_equal(r->rule, "divergent_barrier");
		assert_false(r->warning);
		assert_true(st_same_file(r->file, THIS_FILE));
		assert_int_equal(r->line, line);
		assert_int_equal(r->kernel, 0);
		assert_true(r->block < 3);
		assert_non_null(strstr(r->cause, "32 of the block's 64 threads exited"));
	}
	/* The waiting threads were released and finished. */
	for (int b = 0; b < 3; b++)
		for (int t = 0; t < 64; t++)
			assert_int_equal(out[b * 64 + t], t % 2 == 0);
	cta_sim_free(s);
}

static void threads_at_different_syncthreads_are_reported_with_both_sites(void **state)
{
	(void)state;
	struct cta_sim_opts o = st_opts("H100-SXM");
	int out[64] = {0};
	struct ex_div_args a = {out};
	const unsigned grid[3] = {1, 1, 1}, block[3] = {64, 1, 1};
	int rc;
	cta_sim *s = run_launch(&o, &ex_div_sites, &a, grid, block, 0, &rc);
	assert_int_equal(rc, CTA_EUB);
	int even = st_find_line(THIS_FILE, "MARK:div_even", "__syncthreads()");
	int odd = st_find_line(THIS_FILE, "MARK:div_odd", "__syncthreads()");
	assert_true(even > 0 && odd > 0);
	assert_int_equal(cta_sim_ub_count(s), 1);
	const struct cta_ub_report *r = cta_sim_ub_report(s, 0);
	assert_string_equal(r->rule, "divergent_barrier");
	assert_true(st_same_file(r->file, THIS_FILE));
	/* Thread 0 (even) arrives first; thread 1 (odd) is the divergent one. */
	assert_int_equal(r->line, odd);
	assert_int_equal(r->thread, 1);
	char where[64];
	snprintf(where, sizeof(where), "test_exec.c:%d", even);
	assert_non_null(strstr(r->cause, where));
	cta_sim_free(s);
}

static void barrier_that_can_never_complete_is_reported_and_the_run_ends(void **state)
{
	(void)state;
	struct cta_sim_opts o = st_opts("H100-SXM");
	int after = 0;
	struct ex_dead_args a = {&after};
	const unsigned grid[3] = {3, 1, 1}, block[3] = {32, 1, 1};
	int rc;
	cta_sim *s = run_launch(&o, &ex_deadlock, &a, grid, block, 8, &rc);
	assert_int_equal(rc, CTA_EUB);
	int sync = st_find_line(THIS_FILE, "MARK:dead_sync", "__syncthreads()");
	int mbar = st_find_line(THIS_FILE, "MARK:dead_mbar", "try_wait_parity");
	assert_true(sync > 0 && mbar > 0);
	assert_int_equal(st_ub_count(s, "barrier_deadlock"), 3);
	assert_int_equal(cta_sim_ub_count(s), 3);
	for (size_t i = 0; i < 3; i++) {
		const struct cta_ub_report *r = cta_sim_ub_report(s, i);
		assert_true(st_same_file(r->file, THIS_FILE));
		/* Reported at one of the two waits, naming the other. */
		char other[64];
		snprintf(other, sizeof(other), "test_exec.c:%d", r->line == sync ? mbar : sync);
		assert_true(r->line == sync || r->line == mbar);
		assert_non_null(strstr(r->cause, other));
		assert_non_null(strstr(r->cause, "32 threads can never continue"));
	}
	/* No thread got past the deadlock, yet every block retired and the
	 * kernel finished. */
	assert_int_equal(after, 0);
	const struct cta_kernel_stats *st = cta_sim_kernel_stats(s, 0);
	assert_int_equal(st->launched, 3);
	assert_int_equal(s->kernels[0]->state, K_DONE);
	assert_int_equal(s->kernels[0]->units_done, 3);
	cta_sim_free(s);
}

static void mbarrier_no_one_arrives_at_is_a_deadlock(void **state)
{
	(void)state;
	struct cta_sim_opts o = st_opts("H100-SXM");
	int after = 0;
	struct ex_dead_args a = {&after};
	const unsigned grid[3] = {2, 1, 1}, block[3] = {16, 1, 1};
	int rc;
	cta_sim *s = run_launch(&o, &ex_mbar_forever, &a, grid, block, 8, &rc);
	assert_int_equal(rc, CTA_EUB);
	int line = st_find_line(THIS_FILE, "MARK:forever", "try_wait_parity");
	assert_int_equal(cta_sim_ub_count(s), 2);
	for (size_t i = 0; i < 2; i++) {
		const struct cta_ub_report *r = cta_sim_ub_report(s, i);
		assert_string_equal(r->rule, "barrier_deadlock");
		assert_int_equal(r->line, line);
	}
	assert_int_equal(after, 0);
	assert_int_equal(s->kernels[0]->state, K_DONE);
	cta_sim_free(s);
}

static void deadlock_is_reported_even_with_checking_off(void **state)
{
	(void)state;
	struct cta_sim_opts o = st_opts("H100-SXM");
	o.ub_mode = CTA_UB_OFF;
	int after = 0;
	struct ex_dead_args a = {&after};
	const unsigned grid[3] = {1, 1, 1}, block[3] = {16, 1, 1};
	int rc;
	cta_sim *s = run_launch(&o, &ex_mbar_forever, &a, grid, block, 8, &rc);
	/* A hang is never silent: the run still ends and says why. */
	assert_int_not_equal(rc, 0);
	assert_int_equal(st_ub_count(s, "barrier_deadlock"), 1);
	assert_int_equal(s->kernels[0]->state, K_DONE);
	cta_sim_free(s);
}

static void body_using_more_shared_memory_than_declared_stops_with_a_message(void **state)
{
	(void)state;
	struct cta_sim_opts o = st_opts("H100-SXM");
	int after = 0;
	struct ex_dead_args a = {&after};
	const unsigned grid[3] = {1, 1, 1}, block[3] = {32, 1, 1};
	int rc;
	cta_sim *s = run_launch(&o, &ex_smem_overflow, &a, grid, block, 64, &rc);
	assert_true(rc < 0);
	assert_non_null(strstr(cta_sim_errmsg(s), "'big'"));
	assert_non_null(strstr(cta_sim_errmsg(s), "does not fit"));
	cta_sim_free(s);
}

/* An error every block of a kernel makes stops the run where it stops
 * without sealing: a kernel's first batch is never sealed. (The claim
 * stands for a body the pass found never waits.) */
static void error_every_block_makes_stops_as_without_sealing(void **state)
{
	(void)state;
	static int claimed;
	if (!claimed) {
		claim_never_waits(&ex_smem_overflow);
		claimed = 1;
	}
	const unsigned grid[3] = {20000, 1, 1}, block[3] = {32, 1, 1};
	uint64_t events[2], makespan[2], launched[2];
	for (int run = 0; run < 2; run++) {
		struct cta_sim_opts o = st_opts("H100-SXM");
		o.device = *cta_device_find("H100-SXM");
		/* Dispatches 1 ns apart and a long retire: the engine would
		 * handle 41 more batches' dispatches (4,200 blocks launched
		 * against 100) before a sealed first batch's commit. */
		o.device.dispatch_latency_ns = 1;
		o.device.block_retire_ns = 5000;
		int after = 0;
		struct ex_dead_args a = {&after};
		cta__engine_seal = run;
		int rc;
		cta_sim *s = run_launch(&o, &ex_smem_overflow, &a, grid, block, 64, &rc);
		cta__engine_seal = 1;
		assert_true(rc < 0);
		assert_non_null(strstr(cta_sim_errmsg(s), "does not fit"));
		events[run] = cta_sim_event_count(s);
		makespan[run] = cta_sim_makespan_ns(s);
		launched[run] = cta_sim_kernel_stats(s, 0)->launched;
		cta_sim_free(s);
	}
	assert_int_equal(events[1], events[0]);
	assert_int_equal(makespan[1], makespan[0]);
	assert_int_equal(launched[1], launched[0]);
}

static void blocks_may_declare_many_shared_variables(void **state)
{
	(void)state;
	struct cta_sim_opts o = st_opts("H100-SXM");
	int sum = 0;
	struct ex_sites_args a = {&sum};
	const unsigned grid[3] = {3, 1, 1}, block[3] = {32, 1, 1};
	int rc;
	/* 17 declarations: more than the 16 an earlier version allowed. */
	cta_sim *s = run_launch(&o, &ex_sites_17, &a, grid, block, 17 * sizeof(int), &rc);
	if (rc)
		fail_msg("rc %d: %s", rc, cta_sim_errmsg(s));
	assert_int_equal(sum, 3 * (10 + 17 + 20 + 27 + 30));
	cta_sim_free(s);
	/* Past the simulator's limit the message says so, rather than that
	 * 4 bytes do not fit. */
	s = run_launch(&o, &ex_sites_65, &a, grid, block, 4096, &rc);
	assert_true(rc < 0);
	assert_non_null(strstr(cta_sim_errmsg(s), "shared-memory declarations"));
	assert_null(strstr(cta_sim_errmsg(s), "does not fit"));
	cta_sim_free(s);
}

/* Runs ex_cluster_sync (8 blocks of 32 threads in clusters of 4, block r
 * of a cluster arriving 1000 ns x r late) with the given cluster barrier
 * cost and checks that every thread of a cluster leaves the barrier when
 * the last arrives plus `cost`. */
static void cluster_sync_with(unsigned cluster_barrier_ns, uint64_t cost_if_zero)
{
	struct cta_sim_opts o = st_opts("H100-SXM");
	o.device.cluster_barrier_ns = cluster_barrier_ns;
	uint64_t cost = cluster_barrier_ns ? cluster_barrier_ns : cost_if_zero;
	enum { B = 8, T = 32, C = 4 };
	unsigned long long t_after[B * T], t_start[B];
	unsigned rank[B];
	struct ex_cl_args a = {t_after, t_start, rank};
	cta_sim *s;
	assert_int_equal(cta_sim_new(&s, &o), 0);
	struct cta_launch l = {0};
	l.kernel = &ex_cluster_sync;
	l.grid[0] = B;
	l.grid[1] = l.grid[2] = 1;
	l.block[0] = T;
	l.block[1] = l.block[2] = 1;
	l.cluster[0] = C;
	l.cluster[1] = l.cluster[2] = 1;
	l.args = &a;
	assert_int_equal(cta_sim_launch(s, &l, NULL), 0);
	assert_int_equal(cta_sim_run(s), 0);
	assert_int_equal(cta_sim_ub_count(s), 0);
	for (unsigned b = 0; b < B; b++) {
		assert_int_equal(rank[b], b % C);
		unsigned first = b - b % C;
		assert_int_equal(t_start[b], t_start[first]); /* co-scheduled */
		for (unsigned t = 0; t < T; t++)
			assert_int_equal(t_after[b * T + t],
			                 t_start[first] + 1000 * (C - 1) + cost);
	}
	cta_sim_free(s);
}

static void cluster_sync_releases_every_thread_of_the_cluster_together(void **state)
{
	(void)state;
	struct cta_sim_opts o = st_opts("H100-SXM");
	/* Unfitted (0): a cluster barrier costs what a block's does. */
	cluster_sync_with(0, o.device.barrier_ns);
}

/* The fitted cluster barrier (cluster_barrier_ns, docs/FIDELITY.md)
 * replaces barrier_ns at a cluster barrier, for every CTA of it. */
static void cluster_sync_costs_the_fitted_cluster_barrier(void **state)
{
	(void)state;
	cluster_sync_with(700, 0);
	cluster_sync_with(1, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(every_thread_of_every_block_runs_exactly_once),
	    cmocka_unit_test(timing_only_runs_one_thread_per_block),
	    cmocka_unit_test(timing_only_runs_on_one_host_thread_whatever_threads_says),
	    cmocka_unit_test(a_kernel_runs_on_the_pool_after_its_first_units),
	    cmocka_unit_test(cheap_bodies_are_timed_on_the_pool_and_skip),
	    cmocka_unit_test(blocks_of_a_wave_take_turns_on_a_few_units),
	    cmocka_unit_test(blocks_the_gate_holds_wait_as_records),
	    cmocka_unit_test(syncthreads_makes_shared_memory_writes_visible_to_the_block),
	    cmocka_unit_test(shared_memory_starts_zeroed_in_every_block),
	    cmocka_unit_test(block_reduce_kernel_sums_correctly),
	    cmocka_unit_test(mbarrier_waiters_continue_at_the_phase_completion_time),
	    cmocka_unit_test(cluster_sync_releases_every_thread_of_the_cluster_together),
	    cmocka_unit_test(cluster_sync_costs_the_fitted_cluster_barrier),
	    cmocka_unit_test(barrier_free_blocks_run_on_one_lane_each),
	    cmocka_unit_test(lane_moving_on_keeps_each_block_its_own_duration),
	    cmocka_unit_test(issue_gate_holds_blocks_past_it_until_running_ones_end),
	    cmocka_unit_test(register_gate_holds_later_blocks_that_fill_their_sub_partitions),
	    cmocka_unit_test(register_gate_deals_the_sms_warps_evenly_over_sub_partitions),
	    cmocka_unit_test(register_gate_lets_drawn_blocks_by_on_sms_of_few_blocks),
	    cmocka_unit_test(register_order_places_a_block_on_its_own_sub_partitions),
	    cmocka_unit_test(register_gate_held_block_does_its_entry_once_let_go),
	    cmocka_unit_test(register_gate_lets_a_block_go_after_its_longest_wait),
	    cmocka_unit_test(register_late_entry_holds_the_level_the_gate_lets_go),
	    cmocka_unit_test(register_end_hold_ends_a_block_with_longer_ones_placed_with_it),
	    cmocka_unit_test(
	        declared_issue_ops_cost_each_call_after_the_first_by_warps_per_scheduler),
	    cmocka_unit_test(early_commits_change_nothing),
	    cmocka_unit_test(sealed_batches_change_nothing),
	    cmocka_unit_test(blocks_held_apart_change_nothing),
	    cmocka_unit_test(kernel_that_may_spin_is_never_sealed),
	    cmocka_unit_test(shipped_kernels_carry_what_their_bodies_can_do),
	    cmocka_unit_test(threads_get_their_own_lane_only_once_they_wait),
	    cmocka_unit_test(barrier_skipped_by_exited_threads_is_reported_where_it_waits),
	    cmocka_unit_test(threads_at_different_syncthreads_are_reported_with_both_sites),
	    cmocka_unit_test(barrier_that_can_never_complete_is_reported_and_the_run_ends),
	    cmocka_unit_test(mbarrier_no_one_arrives_at_is_a_deadlock),
	    cmocka_unit_test(deadlock_is_reported_even_with_checking_off),
	    cmocka_unit_test(body_using_more_shared_memory_than_declared_stops_with_a_message),
	    cmocka_unit_test(error_every_block_makes_stops_as_without_sealing),
	    cmocka_unit_test(blocks_may_declare_many_shared_variables),
	};
	/* CMOCKA_TEST_FILTER=pattern runs only the matching tests. */
	if (getenv("CMOCKA_TEST_FILTER"))
		cmocka_set_test_filter(getenv("CMOCKA_TEST_FILTER"));
	return cmocka_run_group_tests(tests, NULL, NULL);
}
