/* The built-in device presets (B200, H100-SXM, H100-PCIe, H200, A100-SXM):
 * per-SM limits from the CUDA programming guide and CCCL's architecture
 * traits, the SM/TPC/GPC layout of each part, and scheduler latencies that
 * are estimates until `ctasim calibrate` measures them. docs/DEVICES.md
 * gives the source of every value. */
#include <pthread.h>
#include <string.h>
#include <strings.h>

#include "model_internal.h"

/* Per-SM limits shared by every part of one compute capability. */
struct cc_limits {
	unsigned max_threads_per_sm, max_warps_per_sm, max_blocks_per_sm;
	unsigned max_threads_per_block, warp_size;
	unsigned regs_per_sm, max_regs_per_thread, max_regs_per_block, reg_alloc_unit;
	unsigned smem_per_sm, max_smem_per_block, smem_reserved_per_block, smem_alloc_unit;
	unsigned max_cluster_size;
};

/* Compute capability 8.0 (A100): 164 KB of shared memory per SM, 163 KB per
 * block after the 1 KB system reservation; no thread-block clusters. */
static const struct cc_limits limits_cc80 = {
    .max_threads_per_sm = 2048,
    .max_warps_per_sm = 64,
    .max_blocks_per_sm = 32,
    .max_threads_per_block = 1024,
    .warp_size = 32,
    .regs_per_sm = 65536,
    .max_regs_per_thread = 255,
    .max_regs_per_block = 65536,
    .reg_alloc_unit = 256,
    .smem_per_sm = 164 * 1024,
    .max_smem_per_block = 163 * 1024,
    .smem_reserved_per_block = 1024,
    .smem_alloc_unit = 128,
    .max_cluster_size = 1,
};

/* Compute capability 9.0 and 10.0 share every per-SM limit: 228 KB of shared
 * memory per SM, 227 KB per block, portable clusters of up to 8 CTAs. */
static const struct cc_limits limits_cc90_100 = {
    .max_threads_per_sm = 2048,
    .max_warps_per_sm = 64,
    .max_blocks_per_sm = 32,
    .max_threads_per_block = 1024,
    .warp_size = 32,
    .regs_per_sm = 65536,
    .max_regs_per_thread = 255,
    .max_regs_per_block = 65536,
    .reg_alloc_unit = 256,
    .smem_per_sm = 228 * 1024,
    .max_smem_per_block = 227 * 1024,
    .smem_reserved_per_block = 1024,
    .smem_alloc_unit = 128,
    .max_cluster_size = 8,
};

/* Scheduler latencies in nanoseconds; `ctasim calibrate` replaces them with
 * a fit to hardware traces. */
struct latencies {
	uint64_t launch, dispatch, block_start, block_retire, cancel, barrier;
};

/* Measured on an H100 80GB HBM3 (SXM, 1.98 GHz) with %globaltimer, whose
 * tick there is 32 ns (docs/DEVICES.md has the method):
 *  - launch: back-to-back empty kernels in one stream ran at 3.93 us each;
 *  - dispatch: a first wave of 132 blocks, one per SM, started within one
 *    32 ns tick, so one block's dispatch costs well under 1 ns: 0;
 *  - block_start + block_retire: a block ending to the next block starting
 *    on the same SM took 172-179 ns; how it splits is not observable, we
 *    give 100 to the start and 75 to the retirement;
 *  - barrier: __syncthreads in a 256-thread block took 28.6 cycles, 14.5 ns;
 *  - cancel: sm_90 has no CLC and the backend emulates it with global
 *    atomics; one dependent global atomicAdd measured 284 cycles (143 ns),
 *    and the result still has to reach shared memory and its mbarrier:
 *    200 is an estimate. */
static const struct latencies lat_h100_sxm = {
    .launch = 3900,
    .dispatch = 0,
    .block_start = 100,
    .block_retire = 75,
    .cancel = 200,
    .barrier = 15,
};

/* Measured the same way on an H200 (1.98 GHz): 3.34 us per back-to-back
 * empty kernel, 181-184 ns same-SM turnover, 14.5 ns per barrier. */
static const struct latencies lat_h200 = {
    .launch = 3300,
    .dispatch = 0,
    .block_start = 105,
    .block_retire = 77,
    .cancel = 200,
    .barrier = 15,
};

/* B200: not measured; the H100 values, with the cancellation a hardware
 * CLC round trip through the work distributor, estimated at about two L2
 * round trips. */
static const struct latencies lat_b200 = {
    .launch = 3900,
    .dispatch = 0,
    .block_start = 100,
    .block_retire = 75,
    .cancel = 300,
    .barrier = 15,
};

/* H100 PCIe (1.755 GHz boost) and A100 (1.41 GHz): not measured; the H100
 * SXM values with the clock-bound ones (start, retire, cancel, barrier)
 * scaled by the clock ratio. */
static const struct latencies lat_h100_pcie = {
    .launch = 3900,
    .dispatch = 0,
    .block_start = 113,
    .block_retire = 85,
    .cancel = 226,
    .barrier = 16,
};

static const struct latencies lat_a100 = {
    .launch = 3900,
    .dispatch = 0,
    .block_start = 140,
    .block_retire = 105,
    .cancel = 281,
    .barrier = 20,
};

#define MAX_GPCS 16

/* The sweep rule's parameters (placement = sweep, docs/FIDELITY.md) as
 * `ctasim calibrate` fits them from the reference traces of one GPU. */
struct sweep_fit {
	unsigned first_lo, first_hi; /* SMs first_lo..first_hi go first */
	unsigned gap_first, gap_later, gap_switch;
	unsigned small_prior, rotate_prior, late_prior; /* the launch before: its blocks */
	unsigned prior_unit;                            /* grid blocks to one of its blocks */
	/* A clustered launch's first TPC after a launch before of 1, 2, ...
	 * blocks (cluster_prior_rot; 0 past the list). */
	unsigned char cluster_rot[CTA_DEVICE_MAX_CLUSTER_PRIOR];
	unsigned cluster_rot_len;
	/* The duration model (spin_by_threads 2): factor in ppm by 1 + the
	 * eighths of the SM's threads taken before the block, rounded up;
	 * the add per cta_spin_ns call and per block. */
	uint32_t spin_scale_ppm[10];
	uint32_t spin_add_ns, block_add_ns;
	unsigned gate_threads;    /* spin_gate_threads: the issue gate */
	unsigned regs_free;       /* spin_regs_free: the register file's gate */
	unsigned regs_wait_ns;    /* spin_regs_wait_ns: its longest wait */
	unsigned regs_late_ns;    /* spin_regs_late_ns: its late entry */
	unsigned regs_hold_warps; /* spin_regs_hold_warps: its end hold */
	unsigned regs_order;      /* spin_regs_order: sub-partitions by placement order */
	unsigned regs_pass_ppm;   /* spin_regs_pass_ppm: blocks the gate lets by */
	unsigned regs_pass_most;  /* spin_regs_pass_blocks: the most blocks an SM */
	unsigned issue_ps;        /* spin_issue_ps: a declared instruction, per warp */
	/* CLC under the CUDA backend's sm_90 emulation (clc_emulated): the
	 * request, the issuer's time after it, the claim of a success and its
	 * turn on a shared claim word, a decoded steal and the way out after
	 * the last failure (cancel_latency_ns stays the hardware-CLC estimate,
	 * for a model with clc_emulated 0). */
	uint64_t clc_request_ns;
	uint32_t clc_steal_ns, clc_request_tail_ns, clc_claim_ns, clc_claim_turn_ns, clc_exit_ns;
	/* ... and a storing body's release fence at each decoded success. */
	uint32_t clc_drain_ns, clc_drain_first_ns;
	/* ... and a clustered request's store into each CTA it reaches. */
	uint32_t clc_multicast_ns;
	/* ... the context's sector as a queue: a block's entry, a request. */
	uint32_t clc_entry_ps, clc_sector_ps;
	/* ... paid times clc_far_ppm / 1e6 by blocks of the GPCs in
	 * clc_far_gpcs (the far side of the L2 from the emulation's atomics). */
	uint32_t clc_far_gpcs, clc_far_ppm;
	/* ... and 1 + (R / clc_crowd_units)^2 times the request with R units
	 * of the launch resident. */
	uint32_t clc_crowd_units;
	/* ... the issuer's share of that growth again after a completion. */
	uint32_t clc_crowd_tail_ppm;
	/* One cluster barrier crossing (cluster_barrier_ns; 0: barrier). */
	uint32_t cluster_barrier_ns;
	/* Clustered blocks an SM holds (cluster_max_blocks_per_sm; 0: any). */
	unsigned cluster_max_per_sm;
	/* The gate's blocks of a stealing launch on a full SM: let go this
	 * share of a call after its first request (clc_late_ppm; 0: none). */
	uint32_t clc_late_ppm;
	/* Blocking kernels (docs/FIDELITY.md, *Blocking kernels*): wait_load_ns,
	 * wait_atomic_ns, wait_turn_ps, wait_sync_ps, wait_hit_ns,
	 * wait_poll_ps, fitted on traces/reference/h100-coop's fit=wait
	 * configurations (`ctasim fidelity traces/reference/h100-coop --only
	 * ... -o MODEL --wait-at ...`). */
	unsigned wait_load_ns, wait_atomic_ns, wait_turn_ps, wait_sync_ps, wait_hit_ns,
	    wait_poll_ps;
	const char *fitted_on;
	/* The state a launch leaves for the next (placement rule 8:
	 * sweep_carry_late, _mid and _steady, cluster_carry_rot and _half;
	 * the first three 0: off),
	 * fitted on traces/reference/h100-launches. */
	unsigned carry_late, carry_mid, carry_steady, cluster_carry_rot, cluster_carry_rot_half;
	/* Concurrent first waves dealt level by level (sweep_conc, placement
	 * rule 9) and the host's gap between launches of two streams
	 * (launch_gap_ns), fitted on traces/reference/h100-conc. */
	unsigned conc, launch_gap_ns;
};

/* Fitted on the 83 configurations of traces/reference/h100/ (H100 80GB
 * HBM3, 2-3 runs each) and its 44 placement probes (prior_*, the launch
 * before; place_cluster_*, the clustered sweep; one run each): `ctasim
 * fidelity traces/reference/h100 -o MODEL` writes these values
 * (docs/FIDELITY.md). */
static const struct sweep_fit sweep_h100 = {
    .first_lo = 124,
    .first_hi = 131,
    .gap_first = 3,
    .gap_later = 6,
    .gap_switch = 3,
    .small_prior = 2,
    .rotate_prior = 3,
    .late_prior = 33,
    .prior_unit = 256,
    .cluster_rot = {1, 1, 3},
    .cluster_rot_len = 3,
    .spin_scale_ppm = {0, 994564, 994687, 980635, 980259, 995694},
    .spin_add_ns = 309,
    .block_add_ns = 1017,
    .gate_threads = 1024,
    .regs_free = 1,
    .regs_wait_ns = 60700,
    .regs_late_ns = 1899,
    .regs_hold_warps = 2,
    .regs_order = 1,
    .regs_pass_ppm = 125316,
    .regs_pass_most = 2,
    .issue_ps = 587,
    .clc_request_ns = 825,
    .clc_steal_ns = 758,
    .clc_request_tail_ns = 736,
    .clc_claim_ns = 485,
    .clc_claim_turn_ns = 422,
    .clc_exit_ns = 548,
    .clc_drain_ns = 676,
    .clc_drain_first_ns = 704,
    .clc_multicast_ns = 111,
    .clc_entry_ps = 4368,
    .clc_sector_ps = 3259,
    .clc_far_gpcs = 0x8e, /* GPCs 1, 2, 3 and 7 */
    .clc_far_ppm = 1312500,
    .clc_crowd_units = 599,
    .clc_crowd_tail_ppm = 505831,
    .cluster_barrier_ns = 499,
    .cluster_max_per_sm = 8,
    .clc_late_ppm = 1075200,
    .wait_load_ns = 353,
    .wait_atomic_ns = 994,
    .wait_turn_ps = 1432,
    .wait_sync_ps = 4378,
    .wait_hit_ns = 182,
    .wait_poll_ps = 2042,
    .fitted_on = "traces/reference/h100 and h100-coop (H100 80GB HBM3)",
    .carry_late = 31,
    .carry_mid = 61,
    .carry_steady = 67,
    .cluster_carry_rot = 1,
    .cluster_carry_rot_half = 0,
    .conc = 1,
    .launch_gap_ns = 10496,
};

/* Fitted on the 84 configurations of traces/reference/h200/ (NVIDIA H200,
 * 2 runs each): `ctasim fidelity traces/reference/h200 -o MODEL`. The
 * same GH100 die: the fit finds the H100's sweep (first SMs, gaps,
 * rotation) and gate; the H200's own are the duration factors and adds
 * and the emulated-CLC costs, whose far GPCs are 1, 3, 4 and 7 (the
 * H100's 1, 2, 3 and 7: which half is far follows the atomics' address,
 * docs/FIDELITY.md). */
static const struct sweep_fit sweep_h200 = {
    .first_lo = 124,
    .first_hi = 131,
    .gap_first = 3,
    .gap_later = 6,
    .gap_switch = 3,
    .small_prior = 2,
    .rotate_prior = 3,
    .late_prior = 33,
    .prior_unit = 256,
    /* Not told by the H200's traces (no clustered grid below 1024
     * blocks, so no clear of 1 to 3 blocks before one): the H100's, as
     * for cluster_max_per_sm below. Every sweep key both traces fit
     * agrees, and the H200's cluster probe found the H100's SM-to-GPC
     * map (docs/FIDELITY.md, *Placement*, rule 7). */
    .cluster_rot = {1, 1, 3},
    .cluster_rot_len = 3,
    .spin_scale_ppm = {0, 995980, 996344, 983743, 986486, 1004162},
    .spin_add_ns = 303,
    .block_add_ns = 854,
    .gate_threads = 1024,
    .regs_free = 1,
    .regs_wait_ns = 60600,
    .regs_hold_warps = 2,
    .regs_pass_ppm = 166030,
    .regs_pass_most = 2,
    .issue_ps = 588,
    .clc_request_ns = 826,
    .clc_steal_ns = 1050,
    .clc_request_tail_ns = 736,
    .clc_claim_ns = 553,
    .clc_claim_turn_ns = 450,
    .clc_exit_ns = 655,
    .clc_drain_ns = 390,
    .clc_drain_first_ns = 736,
    .clc_multicast_ns = 76,
    .clc_entry_ps = 4048,
    .clc_sector_ps = 4095,
    .clc_far_gpcs = 0x9a, /* GPCs 1, 3, 4 and 7 */
    .clc_far_ppm = 1256098,
    .clc_crowd_units = 576,
    .clc_crowd_tail_ppm = 429454,
    .cluster_barrier_ns = 292,
    /* Not told by the H200's traces (no clustered launch there could hold
     * more than 8 blocks an SM): the H100's, the same GH100, which the
     * fit keeps from its base. */
    .cluster_max_per_sm = 8,
    .clc_late_ppm = 1068800,
    /* No blocking kernel was recorded on the H200: the H100's wait_*
     * terms (the same GH100 die and L2). */
    .wait_load_ns = 353,
    .wait_atomic_ns = 994,
    .wait_turn_ps = 1432,
    .wait_sync_ps = 4378,
    .wait_hit_ns = 182,
    .wait_poll_ps = 2042,
    .fitted_on = "traces/reference/h200 (NVIDIA H200)",
};

struct preset_desc {
	const char *name;
	unsigned cc_major, cc_minor;
	const struct cc_limits *limits;
	unsigned gpc_count;
	unsigned char tpcs_per_gpc[MAX_GPCS]; /* enabled TPCs of each GPC */
	const unsigned char *gpc_of_tpc;      /* measured map, or NULL: round robin */
	unsigned tpc_count;                   /* entries of gpc_of_tpc */
	const struct latencies *lat;
	const struct sweep_fit *sweep; /* NULL: not fitted (spread placement) */
};

/*
 * Layouts. Every part here has 2 SMs per TPC, and SM i is in TPC i / 2.
 * NVIDIA publishes the full-die shapes and enabled SM counts, not which TPCs
 * a given chip has fused off nor how %smid numbers them, so:
 *  - H100 SXM5 (GH100: 8 GPCs x 9 TPCs on the full die, 66 TPCs enabled) uses
 *    the map we measured on an H100 80GB HBM3 from thread-block-cluster
 *    co-residence (a cluster never spans GPCs): %smid numbers TPCs round
 *    robin over the GPCs, so neighbouring TPCs are in different GPCs. GPCs
 *    1-5 hold 16 SMs, GPCs 6 and 7 hold 18; SMs 124-131 never shared a
 *    cluster with another TPC and are put in GPC 0, the one GPC left short,
 *    which matches a published SM-to-GPC query (6 GPCs of 16 SMs, 2 of 18).
 *  - H200 is the same GH100 with 132 SMs; the same probe on an H200 found
 *    exactly the same map.
 *  - The other parts take the same round-robin numbering over per-GPC TPC
 *    counts chosen as one realistic harvesting pattern:
 *    H100 PCIe enables 57 TPCs (114 SMs) on 7 or 8 GPCs; we take 8 GPCs, one
 *    of 8 TPCs and seven of 7.
 *    B200 has two dies of 80 SMs each, 74 enabled per die (148 in all); we
 *    take 4 GPCs of 10 TPCs per die with 37 TPCs enabled per die: 10,9,9,9.
 *    A100 SXM: 7 GPCs of 7 or 8 TPCs, 54 TPCs (108 SMs): 8,8,8,8,8,7,7.
 */
static const unsigned char h100_sxm_gpc_of_tpc[66] = {
    /* TPCs 0-31: all eight GPCs in turn. */
    0,
    1,
    2,
    3,
    4,
    5,
    6,
    7,
    0,
    1,
    2,
    3,
    4,
    5,
    6,
    7,
    0,
    1,
    2,
    3,
    4,
    5,
    6,
    7,
    0,
    1,
    2,
    3,
    4,
    5,
    6,
    7,
    /* TPCs 32-59: GPCs 1-7 in turn. */
    1,
    2,
    3,
    4,
    5,
    6,
    7,
    1,
    2,
    3,
    4,
    5,
    6,
    7,
    1,
    2,
    3,
    4,
    5,
    6,
    7,
    1,
    2,
    3,
    4,
    5,
    6,
    7,
    /* TPCs 60-61: the ninth TPC of GPCs 6 and 7; 62-65: see above. */
    6,
    7,
    0,
    0,
    0,
    0,
};

static const struct preset_desc descs[] = {
    {
        .name = "B200",
        .cc_major = 10,
        .cc_minor = 0,
        .limits = &limits_cc90_100,
        .gpc_count = 8,
        .tpcs_per_gpc = {10, 9, 9, 9, 10, 9, 9, 9},
        .lat = &lat_b200,
    },
    {
        .name = "H100-SXM",
        .cc_major = 9,
        .cc_minor = 0,
        .limits = &limits_cc90_100,
        .gpc_count = 8,
        .gpc_of_tpc = h100_sxm_gpc_of_tpc,
        .tpc_count = 66,
        .lat = &lat_h100_sxm,
        .sweep = &sweep_h100,
    },
    {
        .name = "H100-PCIe",
        .cc_major = 9,
        .cc_minor = 0,
        .limits = &limits_cc90_100,
        .gpc_count = 8,
        .tpcs_per_gpc = {8, 7, 7, 7, 7, 7, 7, 7},
        .lat = &lat_h100_pcie,
    },
    {
        .name = "H200",
        .cc_major = 9,
        .cc_minor = 0,
        .limits = &limits_cc90_100,
        .gpc_count = 8,
        .gpc_of_tpc = h100_sxm_gpc_of_tpc,
        .tpc_count = 66,
        .lat = &lat_h200,
        .sweep = &sweep_h200,
    },
    {
        .name = "A100-SXM",
        .cc_major = 8,
        .cc_minor = 0,
        .limits = &limits_cc80,
        .gpc_count = 7,
        .tpcs_per_gpc = {8, 8, 8, 8, 8, 7, 7},
        .lat = &lat_a100,
    },
};

#define NPRESETS (sizeof(descs) / sizeof(descs[0]))

/* Other names people use for the same parts. */
static const struct {
	const char *alias, *name;
} aliases[] = {
    {"H100", "H100-SXM"},
    {"H100-SXM5", "H100-SXM"},
    {"H100-PCIE", "H100-PCIe"},
    {"H200-SXM", "H200"},
    {"B200-SXM", "B200"},
    {"A100", "A100-SXM"},
    {"A100-SXM4", "A100-SXM"},
    /* The names the CUDA runtime reports (cudaDeviceProp.name), which a
     * hardware trace's #device line carries: calibrate starts from them. */
    {"NVIDIA H100 80GB HBM3", "H100-SXM"},
    {"NVIDIA H100 PCIe", "H100-PCIe"},
    {"NVIDIA H200", "H200"},
    {"NVIDIA B200", "B200"},
    {"NVIDIA A100-SXM4-80GB", "A100-SXM"},
    {"NVIDIA A100-SXM4-40GB", "A100-SXM"},
};

/* The models are large (two 1024-entry arrays each) and derived from the
 * compact descriptions above, so they are built once, on first use. */
static struct cta_device_model models[NPRESETS];
static pthread_once_t models_once = PTHREAD_ONCE_INIT;

unsigned cta__model_layout(struct cta_device_model *m, const unsigned char *tpcs,
                           unsigned gpc_count)
{
	unsigned left[CTA_DEVICE_MAX_SMS];
	unsigned sm = 0, tpc = 0, placed = 1;

	for (unsigned g = 0; g < gpc_count; g++)
		left[g] = tpcs[g];
	/* Number TPCs round robin over the GPCs that still have one, as %smid
	 * does on the H100 we measured. */
	while (placed) {
		placed = 0;
		for (unsigned g = 0; g < gpc_count; g++) {
			if (left[g] == 0)
				continue;
			left[g]--;
			placed = 1;
			for (unsigned s = 0; s < m->sms_per_tpc && sm < CTA_DEVICE_MAX_SMS; s++) {
				m->gpc_of_sm[sm] = (uint16_t)g;
				m->tpc_of_sm[sm] = (uint16_t)tpc;
				sm++;
			}
			tpc++;
		}
	}
	return sm;
}

void cta__model_layout_even(struct cta_device_model *m)
{
	unsigned char tpcs[CTA_DEVICE_MAX_SMS];
	unsigned per_tpc = m->sms_per_tpc ? m->sms_per_tpc : 1;
	unsigned gpcs = m->gpc_count ? m->gpc_count : 1;
	unsigned n = m->sm_count < CTA_DEVICE_MAX_SMS ? m->sm_count : CTA_DEVICE_MAX_SMS;
	unsigned ntpc = (n + per_tpc - 1) / per_tpc;

	if (gpcs > CTA_DEVICE_MAX_SMS)
		gpcs = CTA_DEVICE_MAX_SMS;
	/* The first ntpc % gpcs GPCs hold one TPC more than the rest. Only a
	 * model with one GPC and 1 SM per TPC could need more than 255 TPCs per
	 * GPC; such a model must list its arrays. */
	for (unsigned g = 0; g < gpcs; g++) {
		unsigned c = ntpc / gpcs + (g < ntpc % gpcs);
		tpcs[g] = (unsigned char)(c > 255 ? 255 : c);
	}
	cta__model_layout(m, tpcs, gpcs);
}

static void build_one(struct cta_device_model *m, const struct preset_desc *d)
{
	const struct cc_limits *l = d->limits;

	memset(m, 0, sizeof(*m));
	strncpy(m->name, d->name, sizeof(m->name) - 1);
	m->cc_major = d->cc_major;
	m->cc_minor = d->cc_minor;
	/* Cluster launch control is sm_100 hardware; earlier parts emulate it. */
	m->has_clc = d->cc_major >= 10;
	m->sms_per_tpc = 2;
	m->gpc_count = d->gpc_count;
	if (d->gpc_of_tpc) {
		m->sm_count = d->tpc_count * m->sms_per_tpc;
		for (unsigned i = 0; i < m->sm_count; i++) {
			m->tpc_of_sm[i] = (uint16_t)(i / m->sms_per_tpc);
			m->gpc_of_sm[i] = d->gpc_of_tpc[i / m->sms_per_tpc];
		}
	} else {
		m->sm_count = cta__model_layout(m, d->tpcs_per_gpc, d->gpc_count);
	}

	m->max_threads_per_sm = l->max_threads_per_sm;
	m->max_warps_per_sm = l->max_warps_per_sm;
	m->max_blocks_per_sm = l->max_blocks_per_sm;
	m->max_threads_per_block = l->max_threads_per_block;
	m->warp_size = l->warp_size;
	m->regs_per_sm = l->regs_per_sm;
	m->max_regs_per_thread = l->max_regs_per_thread;
	m->max_regs_per_block = l->max_regs_per_block;
	m->reg_alloc_unit = l->reg_alloc_unit;
	m->smem_per_sm = l->smem_per_sm;
	m->max_smem_per_block = l->max_smem_per_block;
	m->smem_reserved_per_block = l->smem_reserved_per_block;
	m->smem_alloc_unit = l->smem_alloc_unit;
	m->max_cluster_size = l->max_cluster_size;

	/* cudaDeviceGetStreamPriorityRange reports [0, -5] on these parts. */
	m->priority_greatest = -5;
	m->priority_least = 0;

	m->launch_latency_ns = d->lat->launch;
	m->dispatch_latency_ns = d->lat->dispatch;
	m->block_start_ns = d->lat->block_start;
	m->block_retire_ns = d->lat->block_retire;
	m->cancel_latency_ns = d->lat->cancel;
	m->barrier_ns = d->lat->barrier;

	m->placement = CTA_PLACE_SPREAD;
	m->placement_order_len = 0;
	if (d->sweep) {
		const struct sweep_fit *f = d->sweep;
		m->placement = CTA_PLACE_SWEEP;
		for (unsigned sm = f->first_lo; sm <= f->first_hi; sm++)
			m->sweep_first[m->sweep_first_len++] = (uint16_t)sm;
		m->sweep_gap_first = f->gap_first;
		m->sweep_gap_later = f->gap_later;
		m->sweep_gap_switch = f->gap_switch;
		m->sweep_small_prior = f->small_prior;
		m->sweep_rotate_prior = f->rotate_prior;
		m->sweep_late_prior = f->late_prior;
		m->sweep_prior_unit = f->prior_unit;
		m->cluster_prior_len = f->cluster_rot_len;
		for (unsigned i = 0; i < f->cluster_rot_len; i++)
			m->cluster_prior_rot[i] = f->cluster_rot[i];
		m->spin_by_threads = 2;
		m->spin_block_add_ns = f->block_add_ns;
		m->spin_gate_threads = f->gate_threads;
		m->spin_regs_free = f->regs_free;
		m->spin_regs_wait_ns = f->regs_wait_ns;
		m->spin_regs_late_ns = f->regs_late_ns;
		m->spin_regs_hold_warps = f->regs_hold_warps;
		m->spin_regs_order = f->regs_order;
		m->spin_regs_pass_ppm = f->regs_pass_ppm;
		m->spin_regs_pass_blocks = f->regs_pass_most;
		m->spin_issue_ps = f->issue_ps;
		m->clc_emulated = 1;
		m->clc_request_ns = (unsigned)f->clc_request_ns;
		m->clc_steal_ns = f->clc_steal_ns;
		m->clc_request_tail_ns = f->clc_request_tail_ns;
		m->clc_claim_ns = f->clc_claim_ns;
		m->clc_claim_turn_ns = f->clc_claim_turn_ns;
		m->clc_exit_ns = f->clc_exit_ns;
		m->clc_drain_ns = f->clc_drain_ns;
		m->clc_drain_first_ns = f->clc_drain_first_ns;
		m->clc_multicast_ns = f->clc_multicast_ns;
		m->clc_entry_ps = f->clc_entry_ps;
		m->clc_sector_ps = f->clc_sector_ps;
		m->clc_far_gpcs = f->clc_far_gpcs;
		m->clc_far_ppm = f->clc_far_ppm;
		m->clc_crowd_units = f->clc_crowd_units;
		m->clc_crowd_tail_ppm = f->clc_crowd_tail_ppm;
		m->cluster_barrier_ns = f->cluster_barrier_ns;
		m->cluster_max_blocks_per_sm = f->cluster_max_per_sm;
		m->sweep_carry = f->carry_late || f->carry_mid || f->carry_steady;
		m->sweep_carry_late = f->carry_late;
		m->sweep_carry_mid = f->carry_mid;
		m->sweep_carry_steady = f->carry_steady;
		m->cluster_carry_rot = f->cluster_carry_rot;
		m->cluster_carry_rot_half = f->cluster_carry_rot_half;
		m->sweep_conc = f->conc;
		m->launch_gap_ns = f->launch_gap_ns;
		m->clc_late_ppm = f->clc_late_ppm;
		m->wait_load_ns = f->wait_load_ns;
		m->wait_atomic_ns = f->wait_atomic_ns;
		m->wait_turn_ps = f->wait_turn_ps;
		m->wait_sync_ps = f->wait_sync_ps;
		m->wait_hit_ns = f->wait_hit_ns;
		m->wait_poll_ps = f->wait_poll_ps;
		for (unsigned r = 1; r <= 9 && f->spin_scale_ppm[r]; r++) {
			m->spin_scale_ppm[r] = f->spin_scale_ppm[r];
			m->spin_add_ns[r] = f->spin_add_ns;
			m->spin_add_mask |= 1ull << (r - 1);
		}
		strncpy(m->fitted_on, f->fitted_on, sizeof(m->fitted_on) - 1);
	}
}

static void build_all(void)
{
	for (unsigned i = 0; i < NPRESETS; i++)
		build_one(&models[i], &descs[i]);
}

const struct cta_device_model *cta__model_presets(unsigned *count)
{
	pthread_once(&models_once, build_all);
	*count = (unsigned)NPRESETS;
	return models;
}

const char *cta__model_alias(const char *name)
{
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (strcasecmp(aliases[i].alias, name) == 0)
			return aliases[i].name;
	return NULL;
}
