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

/* Scheduler latencies in nanoseconds. All are estimates (see DEVICES.md). */
struct latencies {
	uint64_t launch, dispatch, block_start, block_retire, cancel, barrier;
};

#define MAX_GPCS 16

struct preset_desc {
	const char *name;
	unsigned cc_major, cc_minor;
	const struct cc_limits *limits;
	unsigned gpc_count;
	unsigned char tpcs_per_gpc[MAX_GPCS]; /* enabled TPCs of each GPC */
	struct latencies lat;
};

/*
 * Layouts. Every part here has 2 SMs per TPC. NVIDIA publishes the full-die
 * shapes and enabled SM counts, not which TPCs a given chip has fused off, so
 * the per-GPC TPC counts below are one realistic harvesting pattern:
 *  - GH100 full die: 8 GPCs x 9 TPCs. H100 SXM5 and H200 enable 66 TPCs;
 *    an SM-to-GPC query on an H100 SXM found 6 GPCs of 16 SMs and 2 of 18,
 *    i.e. TPC counts 9,9,8,8,8,8,8,8.
 *  - H100 PCIe enables 57 TPCs (114 SMs) on 7 or 8 GPCs; we take 8 GPCs,
 *    one of 8 TPCs and seven of 7.
 *  - B200: two dies, each 80 SMs physically with 74 enabled (148 in all).
 *    We take 4 GPCs of 10 TPCs per die, 37 TPCs enabled per die: 10,9,9,9.
 *  - A100 SXM: 7 GPCs, 7 or 8 TPCs each, 54 TPCs (108 SMs): 8,8,8,8,8,7,7.
 */
static const struct preset_desc descs[] = {
    {
        .name = "B200",
        .cc_major = 10,
        .cc_minor = 0,
        .limits = &limits_cc90_100,
        .gpc_count = 8,
        .tpcs_per_gpc = {10, 9, 9, 9, 10, 9, 9, 9},
        .lat = {.launch = 2500,
                .dispatch = 8,
                .block_start = 250,
                .block_retire = 150,
                .cancel = 400,
                .barrier = 20},
    },
    {
        .name = "H100-SXM",
        .cc_major = 9,
        .cc_minor = 0,
        .limits = &limits_cc90_100,
        .gpc_count = 8,
        .tpcs_per_gpc = {9, 9, 8, 8, 8, 8, 8, 8},
        .lat = {.launch = 2500,
                .dispatch = 8,
                .block_start = 250,
                .block_retire = 150,
                .cancel = 600,
                .barrier = 20},
    },
    {
        .name = "H100-PCIe",
        .cc_major = 9,
        .cc_minor = 0,
        .limits = &limits_cc90_100,
        .gpc_count = 8,
        .tpcs_per_gpc = {8, 7, 7, 7, 7, 7, 7, 7},
        .lat = {.launch = 3000,
                .dispatch = 9,
                .block_start = 280,
                .block_retire = 170,
                .cancel = 650,
                .barrier = 23},
    },
    {
        .name = "H200",
        .cc_major = 9,
        .cc_minor = 0,
        .limits = &limits_cc90_100,
        .gpc_count = 8,
        .tpcs_per_gpc = {9, 9, 8, 8, 8, 8, 8, 8},
        .lat = {.launch = 2500,
                .dispatch = 8,
                .block_start = 250,
                .block_retire = 150,
                .cancel = 600,
                .barrier = 20},
    },
    {
        .name = "A100-SXM",
        .cc_major = 8,
        .cc_minor = 0,
        .limits = &limits_cc80,
        .gpc_count = 7,
        .tpcs_per_gpc = {8, 8, 8, 8, 8, 7, 7},
        .lat = {.launch = 3000,
                .dispatch = 10,
                .block_start = 300,
                .block_retire = 180,
                .cancel = 700,
                .barrier = 25},
    },
};

#define NPRESETS (sizeof(descs) / sizeof(descs[0]))

/* Other names people use for the same parts. */
static const struct {
	const char *alias, *name;
} aliases[] = {
    {"H100", "H100-SXM"},      {"H100-SXM5", "H100-SXM"}, {"H100-PCIE", "H100-PCIe"},
    {"H200-SXM", "H200"},      {"B200-SXM", "B200"},      {"A100", "A100-SXM"},
    {"A100-SXM4", "A100-SXM"},
};

/* The models are large (two 1024-entry arrays each) and derived from the
 * compact descriptions above, so they are built once, on first use. */
static struct cta_device_model models[NPRESETS];
static pthread_once_t models_once = PTHREAD_ONCE_INIT;

unsigned cta__device_layout(struct cta_device_model *m, const unsigned char *tpcs,
                            unsigned gpc_count)
{
	unsigned sm = 0, tpc = 0;

	for (unsigned g = 0; g < gpc_count; g++) {
		for (unsigned t = 0; t < tpcs[g]; t++, tpc++) {
			for (unsigned s = 0; s < m->sms_per_tpc && sm < CTA_DEVICE_MAX_SMS; s++) {
				m->gpc_of_sm[sm] = (uint16_t)g;
				m->tpc_of_sm[sm] = (uint16_t)tpc;
				sm++;
			}
		}
	}
	return sm;
}

void cta__device_layout_even(struct cta_device_model *m)
{
	unsigned per_tpc = m->sms_per_tpc ? m->sms_per_tpc : 1;
	unsigned gpcs = m->gpc_count ? m->gpc_count : 1;
	unsigned n = m->sm_count < CTA_DEVICE_MAX_SMS ? m->sm_count : CTA_DEVICE_MAX_SMS;
	unsigned ntpc = (n + per_tpc - 1) / per_tpc;

	for (unsigned i = 0; i < n; i++) {
		unsigned tpc = i / per_tpc;
		/* The first ntpc % gpcs GPCs hold one TPC more than the rest. */
		unsigned base = ntpc / gpcs, extra = ntpc % gpcs;
		unsigned big = extra * (base + 1);
		unsigned gpc =
		    tpc < big ? tpc / (base + 1) : extra + (tpc - big) / (base ? base : 1);

		m->tpc_of_sm[i] = (uint16_t)tpc;
		m->gpc_of_sm[i] = (uint16_t)(gpc < gpcs ? gpc : gpcs - 1);
	}
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
	m->sm_count = cta__device_layout(m, d->tpcs_per_gpc, d->gpc_count);

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

	m->launch_latency_ns = d->lat.launch;
	m->dispatch_latency_ns = d->lat.dispatch;
	m->block_start_ns = d->lat.block_start;
	m->block_retire_ns = d->lat.block_retire;
	m->cancel_latency_ns = d->lat.cancel;
	m->barrier_ns = d->lat.barrier;

	m->placement = CTA_PLACE_SPREAD;
	m->placement_order_len = 0;
}

static void build_all(void)
{
	for (unsigned i = 0; i < NPRESETS; i++)
		build_one(&models[i], &descs[i]);
}

const struct cta_device_model *cta__device_presets(unsigned *count)
{
	pthread_once(&models_once, build_all);
	*count = (unsigned)NPRESETS;
	return models;
}

const char *cta__device_alias(const char *name)
{
	for (size_t i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++)
		if (strcasecmp(aliases[i].alias, name) == 0)
			return aliases[i].name;
	return NULL;
}
