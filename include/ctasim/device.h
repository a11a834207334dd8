/* Device models: the SM hierarchy, per-SM resource limits and scheduler
 * latencies that the simulator runs against, the built-in presets, the
 * model-file loader, and the occupancy calculator. */
#ifndef CTASIM_DEVICE_H
#define CTASIM_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#include "ctasim/errors.h"
#include "ctasim/export.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CTA_DEVICE_MAX_SMS  1024
#define CTA_DEVICE_NAME_MAX 64

/* Placement policies for choosing the SM of the next block. */
typedef enum cta_placement {
	CTA_PLACE_SPREAD = 0,      /* fill every SM once before stacking; most free room first */
	CTA_PLACE_ROUND_ROBIN = 1, /* plain round robin over SMs with room */
	CTA_PLACE_ORDER = 2,       /* replays recorded first waves (wave_order), then spread */
	CTA_PLACE_SWEEP = 3, /* the hardware's rule over the topology (sweep_*), then spread */
} cta_placement;

/* The sweep rule (docs/FIDELITY.md): at most this many SMs go first. */
#define CTA_DEVICE_MAX_SWEEP_FIRST 64
/* ... and the launch before moves a clustered launch's first TPCs for at
 * most this many of its blocks (cluster_prior_rot). */
#define CTA_DEVICE_MAX_CLUSTER_PRIOR 16

/* A measured first wave: the SM that block i of a grid of `grid` blocks
 * started on, for the blocks that started before any ended. Hardware
 * placement depends on the grid size (docs/FIDELITY.md), so a calibrated
 * model keeps one per measured size. */
#define CTA_DEVICE_MAX_WAVE        2048
#define CTA_DEVICE_MAX_WAVE_ORDERS 16
struct cta_wave_order {
	uint64_t grid;
	unsigned len;
	uint16_t sm[CTA_DEVICE_MAX_WAVE];
};

/* Block-duration model: how the time a block asks for with cta_spin_ns
 * stretches with the load of its SM. spin_scale_ppm[r] is the factor, in
 * parts per million of the requested time, for a block that starts with r
 * blocks resident on its SM (itself included), r = 1 .. CTA_DEVICE_MAX_RESIDENT;
 * 0 where not given. Fitted by `ctasim calibrate --block-ns`; presets give
 * none (time is not scaled). docs/DEVICES.md has the lookup rule. */
#define CTA_DEVICE_MAX_RESIDENT   64
#define CTA_DEVICE_SPIN_SCALE_MAX 100000000u /* 100x */
/* The affine part: spin_add_ns[r] ns added to every cta_spin_ns call of a
 * block that starts with r blocks resident, where bit r - 1 of
 * spin_add_mask says it is given (0 ns is a value). Time charged per call:
 * ns * spin_scale / 10^6 + spin_add. */
#define CTA_DEVICE_SPIN_ADD_MAX 1000000000u /* 1 s */

/* Everything the simulator knows of a GPU. Values are plain numbers so a
 * model file can set each of them; see docs/DEVICES.md for every field and
 * the source of each preset value. */
struct cta_device_model {
	char name[CTA_DEVICE_NAME_MAX];
	unsigned cc_major, cc_minor; /* compute capability, e.g. 9.0 */
	unsigned has_clc;            /* cluster launch control in hardware (sm_100+) */

	/* Hierarchy: sm_count SMs, numbered 0..sm_count-1; tpc_of_sm and
	 * gpc_of_sm give the TPC and GPC of each. */
	unsigned sm_count;
	unsigned sms_per_tpc;
	unsigned gpc_count;
	uint16_t gpc_of_sm[CTA_DEVICE_MAX_SMS];
	uint16_t tpc_of_sm[CTA_DEVICE_MAX_SMS];

	/* Per-SM limits. */
	unsigned max_threads_per_sm;
	unsigned max_warps_per_sm;
	unsigned max_blocks_per_sm;
	unsigned max_threads_per_block;
	unsigned warp_size;
	unsigned regs_per_sm; /* 32-bit registers */
	unsigned max_regs_per_thread;
	unsigned max_regs_per_block;
	unsigned reg_alloc_unit;     /* registers are allocated per warp in units of this */
	unsigned smem_per_sm;        /* bytes of shared memory usable by blocks (carveout max) */
	unsigned max_smem_per_block; /* bytes, opt-in maximum */
	unsigned smem_reserved_per_block; /* bytes the system reserves per resident block */
	unsigned smem_alloc_unit;         /* shared memory is allocated in units of this */
	unsigned max_cluster_size;        /* portable maximum CTAs per cluster */

	/* Stream priorities: greatest (numerically lowest) .. least. */
	int priority_greatest, priority_least;

	/* Scheduler latencies in nanoseconds. */
	uint64_t launch_latency_ns;   /* kernel launch to first dispatch */
	uint64_t dispatch_latency_ns; /* dispatch of one block to the next on the same front end */
	uint64_t block_start_ns;      /* dispatch to first instruction of the block */
	uint64_t block_retire_ns;     /* last thread exits to the slot being free */
	uint64_t cancel_latency_ns;   /* try_cancel issue to result in shared memory */
	uint64_t barrier_ns;          /* cost of one __syncthreads crossing */

	/* Placement: policy and, for CTA_PLACE_ORDER, the SM order of the
	 * first wave (placement_order_len entries, each an SM id). */
	cta_placement placement;
	unsigned placement_order_len;
	uint16_t placement_order[CTA_DEVICE_MAX_SMS];

	/* Measured first waves by grid size (placement = order): a launch of
	 * exactly a measured size follows its wave; other sizes use the largest
	 * measured size below theirs, then placement_order, then spread. */
	unsigned wave_order_count;
	/* Emulated CLC (with clc_crowd_units, below): after a completion the
	 * issuer's round trips to the same atomics (its record of the result)
	 * pay clc_crowd_tail_ppm / 1e6 of the request's growth again before
	 * it goes on, in launches without clusters (0: none). Here, in the 4 bytes wave_order's
	 * alignment left free, so that the struct's layout stays that of soversion 3. */
	unsigned clc_crowd_tail_ppm;
	struct cta_wave_order wave_order[CTA_DEVICE_MAX_WAVE_ORDERS];

	/* The sweep rule (placement = sweep, docs/FIDELITY.md). A launch's
	 * first wave is dealt in passes of at most one block per SM: the SMs
	 * sweep_first[] take the first blocks of a pass, in that order; the
	 * other TPCs get one block each, lowest TPC id first, then a second
	 * on their other SM, and are visited GPC by GPC (TPC id order inside
	 * one). After the first pass, sweep_first takes its k-th turn after
	 * sweep_gap_first * k GPC steps of the sweep, and after
	 * sweep_gap_switch turns every sweep_gap_later steps.
	 *
	 * Where the sweep starts is left by the launch before: the CUDA
	 * backend clears its per-block record slots before every launch it
	 * records, a launch of M = grid / sweep_prior_unit blocks (0: none).
	 * Its first blocks take sweep_first's turn and then one GPC each, at
	 * most sweep_first_len + gpc_count of them, so the sweep starts at
	 * GPC M - sweep_first_len where that is positive and M below that
	 * sum, else GPC 0; M below sweep_small_prior leaves every turn of
	 * sweep_first one GPC step earlier (two after the switch); M of at
	 * least sweep_rotate_prior (0: never) starts sweep_first at its
	 * second half; M of at least sweep_late_prior (0: never) leaves every
	 * turn one GPC step later. */
	unsigned sweep_first_len;
	uint16_t sweep_first[CTA_DEVICE_MAX_SWEEP_FIRST];
	unsigned sweep_gap_first, sweep_gap_later, sweep_gap_switch;
	unsigned sweep_small_prior, sweep_rotate_prior, sweep_late_prior;
	unsigned sweep_prior_unit;
	/* Clustered launches (a cluster a TPC) are dealt in passes too: the
	 * TPCs of sweep_first[] first, then every other TPC in id order,
	 * which visits the GPCs in turn (rows of one TPC a GPC). The launch
	 * before (M blocks, as above) starts the first TPCs at their
	 * cluster_prior_rot[M - 1]-th for M of 1 to cluster_prior_len (else
	 * at the first), in every pass, and starts each row of the first
	 * pass at GPC M - sweep_first_len where the sweep above starts
	 * there. */
	unsigned cluster_prior_len;
	uint16_t cluster_prior_rot[CTA_DEVICE_MAX_CLUSTER_PRIOR];

	/* What the model's placement and durations were fitted on (traces,
	 * GPU); empty when they were not fitted. `ctasim list` shows it and a
	 * run on an unfitted model warns. */
	char fitted_on[CTA_DEVICE_NAME_MAX];

	/* Duration model (see CTA_DEVICE_MAX_RESIDENT); index 0 is unused. */
	uint32_t spin_scale_ppm[CTA_DEVICE_MAX_RESIDENT + 1];
	uint32_t spin_add_ns[CTA_DEVICE_MAX_RESIDENT + 1];
	/* (Emulated CLC's clc_late_ppm, described with the CLC keys below,
	 * sits here, in what was padding.) */
	unsigned clc_late_ppm;
	uint64_t spin_add_mask; /* bit r - 1: spin_add_ns[r] is given */
	/* 0: r above is the count of blocks resident when the block starts,
	 * itself included. 1: r is 1 + CTA_DEVICE_SPIN_STEPS x the threads
	 * resident before it / max_threads_per_sm (rounded down), so that
	 * blocks of every size share one fit (for 256-thread blocks on a
	 * 2048-thread SM the two agree). 2: the same rounded up, so that r
	 * counts the steps begun: a block that finds exactly half the SM's
	 * threads taken is at r = 5, one that finds more at r >= 6. */
	unsigned spin_by_threads;
	/* ns added once per block to the start of its work (spin_add is per
	 * cta_spin_ns call): the block's own entry and exit cost, fitted apart
	 * from the per-call cost where the traces have blocks of several
	 * calls (docs/FIDELITY.md). */
	unsigned spin_block_add_ns;
	/* Issue sharing on a crowded SM: a block that starts while more than
	 * spin_gate_threads threads of running blocks are on its SM waits,
	 * resident (its start is recorded), until enough of them end, then
	 * runs its own time; waiting blocks go on in the order they came. On
	 * an H100 the warps already there keep the SM's schedulers busy and a
	 * later block's warps get no issue slots until some end
	 * (docs/FIDELITY.md). 0: no gate. */
	unsigned spin_gate_threads;
	/* 1: cluster launch control runs as the CUDA backend's emulation (a
	 * GPU without it, sm_90; docs/FIDELITY.md): a cancel request is
	 * atomics done by the issuing thread, which spends clc_request_ns in
	 * it (what a request that claims nothing, a failure, costs) and then
	 * has its result, where hardware CLC completes the request
	 * cancel_latency_ns after the issue while the issuer goes on; the
	 * issuer goes on clc_request_tail_ns after the completion (it
	 * records it: one more global atomic). A
	 * success also claims its unit with a compare-and-swap on the word
	 * of the emulation's claim bitmap that holds it (16 units a word),
	 * one winner per round trip: it completes clc_claim_ns after the
	 * request's atomics, or clc_claim_turn_ns after the previous claim
	 * on the same word, whichever is later, and the issuer's own work
	 * after the request waits as long. Every thread that decodes a
	 * success spends clc_steal_ns more (decoding, the loop's barrier and
	 * fences), and one that decodes its block's last request failed
	 * clc_exit_ns (the way out of the loop and of the block). */
	unsigned clc_emulated;
	unsigned clc_request_ns, clc_steal_ns;
	unsigned clc_request_tail_ns, clc_claim_ns, clc_claim_turn_ns, clc_exit_ns;
	/* Emulated CLC, a launch that declares stream_mem (sim.h): every
	 * thread that decodes a success spends clc_drain_ns more, the loop's
	 * release fence (fence.proxy.async release at cluster scope) waiting
	 * for the global stores of the iteration's work to be acknowledged
	 * (docs/FIDELITY.md, *A streaming body in the steal loop*); a
	 * failure leaves the loop before that fence. 0: none. */
	unsigned clc_drain_ns;
	/* (... and clc_drain_first_ns, at the end.) */
	/* Emulated CLC: the GPCs (bit g: GPC g, 0-31) on the far side of the
	 * L2 from the emulation's atomics, whose blocks pay every cost above
	 * times clc_far_ppm / 1e6 (0: none). */
	unsigned clc_far_gpcs, clc_far_ppm;
	/* The register file's gate: a block of a kernel whose occupancy
	 * registers limit, placed once a block of its kernel has ended, waits
	 * (resident, as at the issue gate) while its warps and the running
	 * warps of its SM, dealt evenly over the four sub-partitions (a
	 * quarter of them together, rounded up), would leave fewer than
	 * spin_regs_free warps' registers free in a sub-partition; running
	 * blocks let it go as they end. First-wave blocks, which come
	 * together, never wait. On an H100 a second-wave block of the
	 * register-heavy spin that fills its sub-partitions' registers ran
	 * only once the blocks before it ended (docs/FIDELITY.md). 0: no such
	 * gate. */
	unsigned spin_regs_free;
	/* Emulated CLC: the round trip of the emulation's atomics grows with
	 * the requesters. A request's atomics (clc_request_ns, the issuer
	 * waiting in them) take 1 + (R / clc_crowd_units)^2 times as long, R
	 * the launch's resident units (blocks, or clusters) when it is
	 * resolved (0: no growth). */
	unsigned clc_crowd_units;
	/* (clc_crowd_tail_ppm, the issuer's share of that growth after a
	 * completion, sits after wave_order_count, in what was padding.) */
	/* Issue time: a launch that declares issue_ops (the instructions each
	 * warp issues beside every cta_spin_ns call, sim.h) adds issue_ops x
	 * the warps that share the block's scheduler (a quarter of the SM's
	 * warps at its start, its own included, rounded up) x spin_issue_ps
	 * / 1000 ns to each of its calls but a block's first (whose
	 * arithmetic, before it, is the block's entry): a scheduler issues
	 * one instruction of one warp at a time (docs/FIDELITY.md). 0: not
	 * charged. */
	unsigned spin_issue_ps;
	/* One cta_cluster_sync crossing: the barrier across a cluster's CTAs,
	 * released this long after its last thread arrived (0: barrier_ns, as
	 * a block's). On an H100 the guide's cluster CLC loop takes about half
	 * a microsecond an iteration more than its one-CTA twin
	 * (docs/FIDELITY.md); `ctasim calibrate` fits it from such loops. */
	unsigned cluster_barrier_ns;
	/* Blocks of clustered launches an SM holds at once, whatever their
	 * threads, registers and shared memory would allow (0: no limit). On
	 * an H100 2-CTA clusters of 64 to 192 threads a block ran 8 an SM
	 * (docs/FIDELITY.md); `ctasim calibrate` fits it from clustered
	 * launches that ran fewer than their occupancy. */
	unsigned cluster_max_blocks_per_sm;
	/* The dispatcher state one launch leaves for the next in one run
	 * (placement rule 8, docs/FIDELITY.md; sweep_carry 0: off, every
	 * launch starts from its own record clear as rule 5 says). On: the
	 * run's first launch starts from the record clears of all its
	 * launches, in launch order (the CUDA backend clears every launch's
	 * slots before the first: cta_device_sweep_start_clears); a later one
	 * starts at the GPC after that of the block placed last, with the
	 * first SMs' half flipped by each launch of two or more blocks before
	 * it (a launch of one block takes the first of the first SMs and
	 * leaves their first half), and a clustered one at the first SMs'
	 * cluster_carry_rot-th TPC (cluster_carry_rot_half-th where the launch
	 * before left their second half).
	 * The first SMs' turns come later the longer a first wave of the run
	 * before it was: from sweep_carry_late blocks one GPC visit late,
	 * from sweep_carry_mid the first two late and the second merged into
	 * it, from sweep_carry_steady every sweep_gap_later visits, the first
	 * one visit early (0: never). */
	unsigned sweep_carry;
	unsigned sweep_carry_late, sweep_carry_mid, sweep_carry_steady;
	unsigned cluster_carry_rot, cluster_carry_rot_half;
	/* A kernel whose first wave is dealt while other kernels' blocks hold
	 * its SMs unevenly (placement rule 9, docs/FIDELITY.md; 0: off, its
	 * sweep passes over the SMs without room): on, it is dealt level by
	 * level, the SMs that hold the fewest of its blocks' worth first, each
	 * level a pass of the sweep over those SMs (the first SMs first, then
	 * GPC by GPC from the GPC rule 8 gives, moved on one GPC after a
	 * launch whose last pass gave TPCs one block each and two after one
	 * that gave some TPCs two, not all; a partial pass to the TPCs that
	 * hold the fewest blocks first), the first SMs from the half the
	 * launch before started at. `ctasim calibrate` keeps the base's. */
	unsigned sweep_conc;
	/* The host's time between two launches on different streams: a
	 * launch is issued launch_gap_ns after the one before it in issue
	 * order where their streams differ, or at its release if that is
	 * later (0: every launch at its release). On an H100 the CUDA
	 * backend's launches of two streams released together start their
	 * first blocks about 10 us apart; `ctasim calibrate` fits it from
	 * such launches (docs/FIDELITY.md, *Latencies*). */
	unsigned launch_gap_ns;
	/* Emulated CLC, the issue gate's blocks of a work-stealing launch: a
	 * first-wave block (or cluster, by its first CTA's SM) that the gate
	 * holds, on an SM the launch fills (no further block of it fits by
	 * threads), gets no issue slots until the blocks ahead reach their
	 * first wait: it is let go clc_late_ppm / 1e6 of a call after the
	 * launch's first request (the call its issuer makes after it), where
	 * the gate's other blocks go at that request. On an H100 the sixth to
	 * eighth 256-thread blocks of a full SM reach their first request one
	 * call late, clustered or not (docs/FIDELITY.md, *Late first requests
	 * on a full SM*); `ctasim calibrate` fits it from such first waves.
	 * 0: none, and no cluster is held. */
	/* (clc_late_ppm: beside spin_add_ns, in what was padding.) */
	/* The register file's gate, the longest wait: a block it holds is let
	 * go at the latest this long after its start, whatever runs beside
	 * it (0: only as blocks end). On an H100 a 20 us block of the
	 * register-heavy spin placed with an 80 us one ended with it, 60 us
	 * before the gate alone would have ended it; the wait stands in for
	 * that on such grids (docs/FIDELITY.md). `ctasim calibrate` fits it
	 * from the waits of later-wave blocks. */
	unsigned spin_regs_wait_ns;
	/* Emulated CLC, a launch that declares stream_mem: every thread that
	 * decodes the success of its block's first request (issued while the
	 * block still ran its own index) spends clc_drain_first_ns more than
	 * clc_drain_ns, alike on every GPC (not scaled by clc_far_ppm): a
	 * block's first release fence waits longer (docs/FIDELITY.md, *A
	 * storing body in the steal loop*). 0: none. */
	unsigned clc_drain_first_ns;
	/* Emulated CLC, a clustered launch: a request stores its result into
	 * the shared memory of each CTA it reaches (st.async; a multicast
	 * reaches every CTA of the cluster, a request without multicast its
	 * issuer's), one after the other, before it completes: the request
	 * completes clc_multicast_ns later per CTA reached, after its claim,
	 * and its issuer, which does the stores, goes on that much later.
	 * Not scaled by clc_far_ppm (the stores stay in the cluster's GPC).
	 * `ctasim calibrate` fits it from clustered kernels' failures
	 * against the one-CTA kernels' request rule (docs/FIDELITY.md, *A
	 * clustered request's stores*). 0: none. */
	unsigned clc_multicast_ns;
	/* The register file's late entry: a later-wave block of a kernel
	 * whose occupancy registers limit, placed beside running blocks of
	 * its SM where its warps and theirs, dealt evenly over the four
	 * sub-partitions, would leave at most spin_regs_free warps'
	 * registers free in one (the level the gate lets go), is held too
	 * (resident, as at the gate), at most this long after its start or
	 * until a block ending there frees more. On an H100 a 64- or
	 * 128-thread block of the register-heavy spin that began so took
	 * 2.1-2.6 us beyond its time, one with more registers free 0.7-0.9 us
	 * (docs/FIDELITY.md, *The register file*); `ctasim calibrate` fits
	 * it from the later waves. 0: none. */
	unsigned spin_regs_late_ns;
	/* The register file's end hold: a block of a kernel whose occupancy
	 * registers limit ends no earlier than the blocks of a lower index
	 * placed on its SM with it (one kernel, one start) while those put
	 * this many warps or more on one of its sub-partitions (a block at
	 * place r among them, of w warps, has warps r*w .. r*w+w-1, warp i
	 * on sub-partition i mod 4). On an H100 a 20 us block of the
	 * register-heavy spin beside an 80 us one of a lower index ended
	 * with it where two of that one's warps shared its sub-partitions
	 * (docs/FIDELITY.md, *The register file*); `ctasim calibrate` fits
	 * it from the first waves of such grids. 0: none. */
	unsigned spin_regs_hold_warps;
	/* Emulated CLC, launches without clusters: the emulation's context
	 * (dispatch frontier and cursor, one 32-byte sector that every
	 * block's entry and every request goes to) as a queue. Each block's
	 * entry holds it clc_entry_ps / 1000 ns from the launch's first start
	 * on, each failed request issued while its block runs its own index
	 * clc_sector_ps / 1000 ns after it reaches it (or after the entries
	 * and requests ahead), and such a request completes no sooner than
	 * clc_request_ns after its pass, whatever its crowd rule says
	 * (docs/FIDELITY.md, *Requests in a burst*). 0: none. */
	unsigned clc_entry_ps, clc_sector_ps;
	/* The register file by placement order: a block of a kernel whose
	 * occupancy registers limit takes its SM's sub-partitions in the
	 * order its SM's such blocks were placed (the block's warp i on
	 * sub-partition (n + i) mod 4, n the warps of such blocks placed
	 * there before it, mod 4), and fits only where each of them has
	 * room for its warps; the register file's gate and late entry count
	 * the warps running on its own sub-partitions. `ctasim calibrate`
	 * fits it from the later waves of such grids whose blocks do not
	 * fill the four alike (docs/FIDELITY.md, *The register file*).
	 * 0: the SM's warps dealt evenly. */
	unsigned spin_regs_order;
	/* The register file's gate, the blocks it lets by: of the later-wave
	 * blocks it would hold (not those queued behind held ones) of a
	 * kernel that registers limit to at most spin_regs_pass_blocks blocks
	 * an SM, spin_regs_pass_ppm in a million, drawn from the seed, the
	 * kernel and the block index (the same at any thread count), begin
	 * at once. On an H100 a fifth of such blocks of the register-heavy
	 * spin at two blocks an SM did not wait, and none at four or eight;
	 * an SM whose block passed ends its later waves sooner and takes the
	 * grid's last blocks (docs/FIDELITY.md, *The register file*). `ctasim
	 * calibrate` fits both from the later waves. 0: the gate holds all. */
	unsigned spin_regs_pass_ppm, spin_regs_pass_blocks;
	/* Kernels whose blocks wait for other blocks (docs/FIDELITY.md,
	 * *Blocking kernels*): once a thread of a kernel spun on global
	 * memory, and from the start of a cooperative launch, each global
	 * atomic and volatile access of its threads happens in virtual-time
	 * order (a thread whose clock is ahead of the engine's waits for
	 * it), a volatile load costs its thread wait_load_ns, an atomic
	 * waits for its turn on its address (wait_turn_ps each; a warp's
	 * atomics at one time on one address share a turn) and then costs
	 * wait_atomic_ns, and a cta_grid_sync arrival takes wait_sync_ps on
	 * the grid's count. An atomic on an address an atomic took a turn
	 * on before (still in the table of turns) costs wait_hit_ns instead
	 * of wait_atomic_ns (0: every atomic wait_atomic_ns), and a volatile
	 * load that polls (the third or later of a poll on one address, not
	 * a cta_grid_sync phase's) takes a turn of wait_poll_ps on its
	 * address. `ctasim calibrate` fits them from the traces
	 * marked `fit=wait`. All 0: none of it. */
	unsigned wait_load_ns, wait_atomic_ns, wait_turn_ps, wait_sync_ps, wait_hit_ns,
	    wait_poll_ps;
};
#define CTA_DEVICE_SPIN_STEPS 8

/* Resources one block of a launch asks for. */
struct cta_block_resources {
	unsigned threads; /* threads per block */
	unsigned regs_per_thread;
	size_t smem_static;  /* bytes */
	size_t smem_dynamic; /* bytes */
};

/* Which resource limits occupancy (or makes a launch impossible). */
typedef enum cta_limiter {
	CTA_LIMIT_NONE = 0,
	CTA_LIMIT_THREADS,
	CTA_LIMIT_WARPS,
	CTA_LIMIT_BLOCKS,
	CTA_LIMIT_REGISTERS,
	CTA_LIMIT_SMEM,
} cta_limiter;

/* The first wave that placement = sweep deals for a launch of `grid`
 * blocks (any shape; clusters: the function below) whose first `wave`
 * blocks fit at once on the first nsms SMs of *m (at most sm_count):
 * out[i] is the SM of block i, for i < *len (<= wave; out has room for
 * `wave` entries). Uses the model's topology and sweep_* parameters
 * whatever its placement policy. Returns 0, CTA_EINVAL or CTA_ENOMEM. */
CTA_EXPORT int cta_device_sweep_order(const struct cta_device_model *m, unsigned nsms,
                                      uint64_t grid, uint64_t wave, unsigned *out, unsigned *len);

/* The same for a clustered launch of `grid` blocks (the cluster rule
 * above, one cluster a TPC): out[i] is the SM of block i of its first
 * wave, a cluster's blocks on consecutive entries. Returns 0, CTA_EINVAL
 * or CTA_ENOMEM. */
CTA_EXPORT int cta_device_cluster_sweep_order(const struct cta_device_model *m, unsigned nsms,
                                              uint64_t grid, uint64_t wave, unsigned *out,
                                              unsigned *len);

/* Where a launch's first wave starts: the dispatcher state the launch
 * before it left (placement rules 5 and 8, docs/FIDELITY.md). */
struct cta_sweep_start {
	unsigned gpc0;        /* the GPC the first pass starts at */
	unsigned rot;         /* 1: the first SMs start at their second half */
	unsigned cluster_rot; /* clustered: the first TPC the first SMs' TPCs start at */
	unsigned early; /* every turn of the first SMs one GPC visit early (two after the switch) */
	unsigned late;  /* every turn one GPC visit late */
	unsigned mid;   /* the first turn two visits late, the second merged into it */
	unsigned steady; /* turns every sweep_gap_later visits, the first one visit early */
};

/* The start a record clear of one block per sweep_prior_unit of each of
 * grids[0..n) leaves, cleared in that order (rule 5; with n = 1 the start
 * cta_device_sweep_order uses). */
CTA_EXPORT void cta_device_sweep_start_clears(const struct cta_device_model *m,
                                              const uint64_t *grids, size_t n,
                                              struct cta_sweep_start *out);

/* cta_device_sweep_order and cta_device_cluster_sweep_order from a given
 * start. */
CTA_EXPORT int cta_device_sweep_order_at(const struct cta_device_model *m, unsigned nsms,
                                         const struct cta_sweep_start *st, uint64_t wave,
                                         unsigned *out, unsigned *len);
CTA_EXPORT int cta_device_cluster_sweep_order_at(const struct cta_device_model *m, unsigned nsms,
                                                 const struct cta_sweep_start *st, uint64_t wave,
                                                 unsigned *out, unsigned *len);

/* Number of presets and the i-th one (NULL past the end). */
CTA_EXPORT unsigned cta_device_preset_count(void);
CTA_EXPORT const struct cta_device_model *cta_device_preset(unsigned i);

/* Finds a preset by name, case-insensitively ("H100", "h100-sxm", "B200").
 * Returns NULL when none matches. */
CTA_EXPORT const struct cta_device_model *cta_device_find(const char *name);

/* Input limits of model files: lines of at most 64 KiB, at most 1 MiB in
 * all; a NUL byte ends the load (binary data). cta_device_load refuses
 * larger files with CTA_EPARSE naming the line. */
#define CTA_DEVICE_MODEL_MAX_LINE  65536
#define CTA_DEVICE_MODEL_MAX_BYTES (1 << 20)

/* Loads a model file (format in docs/DEVICES.md) into *out. On error returns
 * a negative code and writes "FILE:LINE: what is wrong" into errbuf. */
CTA_EXPORT int cta_device_load(struct cta_device_model *out, const char *path, char *errbuf,
                               size_t errlen);

/* Writes a model to a file in the format cta_device_load reads. */
CTA_EXPORT int cta_device_save(const struct cta_device_model *m, const char *path, char *errbuf,
                               size_t errlen);

/* Checks a model for internal consistency (non-zero counts, GPC ids in
 * range, ...). Returns 0 or CTA_EINVAL with a message in errbuf. */
CTA_EXPORT int cta_device_validate(const struct cta_device_model *m, char *errbuf, size_t errlen);

/* Resolves NAME-or-FILE: a preset name first, else a model file. */
CTA_EXPORT int cta_device_resolve(struct cta_device_model *out, const char *name_or_path,
                                  char *errbuf, size_t errlen);

/* Maximum resident blocks of this shape per SM, computed the way
 * cudaOccupancyMaxActiveBlocksPerMultiprocessor does. Returns 0 when one
 * block cannot fit at all; *limiter (if not NULL) names the tightest limit. */
CTA_EXPORT unsigned cta_occupancy_max_blocks(const struct cta_device_model *m,
                                             const struct cta_block_resources *r,
                                             cta_limiter *limiter);

/* The duration factor, in parts per million, for a block that starts with
 * `resident` blocks on its SM (itself included): the entry of the largest
 * given count not above `resident`, else the smallest given count's entry.
 * 0 when the model gives none: the time is not scaled. */
CTA_EXPORT uint32_t cta_device_spin_scale_ppm(const struct cta_device_model *m, unsigned resident);

/* The time, in ns, added to each cta_spin_ns call of a block that starts
 * with `resident` blocks on its SM: the spin_add of the largest given count
 * not above `resident`, else the smallest given count's; 0 when none. */
CTA_EXPORT uint32_t cta_device_spin_add_ns(const struct cta_device_model *m, unsigned resident);

/* Human-readable name of a limiter ("shared memory", "registers", ...). */
CTA_EXPORT const char *cta_limiter_name(cta_limiter l);

#ifdef __cplusplus
}
#endif
#endif
