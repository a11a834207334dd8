/* Harnesses of the cooperative-kernels paper's kernels (ck_body.h):
 * ck_work_stealing on the queues of work_steal.c, and the two frontier
 * traversals over a generated graph, whose BFS levels are checked against
 * a BFS on the host. */
#include <stdlib.h>
#include <string.h>

/* work_steal.c defines work_steal_queue. */
#define WSQ_HELPERS_ONLY
#include "ck_body.h"
#include "kcommon.h"

/* ---- ck_work_stealing ------------------------------------------------- */

static const struct cta_param_desc ckws_params[] = {
    {"queues", "0", "task queues = blocks (0: one per SM)"},
    {"roots", "64", "initial tasks (roots of the task trees)"},
    {"root_queues", "1", "queues the roots are dealt to (1: all in queue 0, the rest steal)"},
    {"fanout", "2", "children a task spawns"},
    {"depth", "5", "levels of children below each root"},
    {"ns", "2000", "virtual nanoseconds per task (per thread)"},
    {"steal", "1", "1: pop or steal (Figure 2); 0: pop the block's own queue only"},
    KPARAM_IMBALANCE,
    {NULL, NULL, NULL},
};

static int ckws_setup(struct cta_harness *h)
{
	struct ck_ws_args a;
	memset(&a, 0, sizeof a);
	int64_t steal = 1;
	int rc = cta__kparam_range(h, "steal", 0, 1, &steal);
	if (!rc)
		rc = cta__wsq_build(h, &a.q);
	if (rc)
		return rc;
	a.steal = (int)steal;
	struct cta_launch_cfg cfg = {
	    .grid = {(unsigned)a.q.nqueues, 1, 1},
	    .block = {128, 1, 1},
	    .smem_static = 16,
	};
	return cta_harness_launch(h, &ck_work_stealing, &cfg, &a, sizeof a);
}

static const struct cta_kernel_info ckws_info = {
    .name = "ck_work_stealing",
    .summary = "cooperative-kernels Figure 2 as written: blocks spin while more work "
               "remains (steal=0: no stealing)",
    .params = ckws_params,
    .setup = ckws_setup,
    .verify = cta__wsq_verify,
};
CTA_HARNESS(ckws_info)

/* ---- ck_graph_global_barrier / ck_graph_grid_sync ------------------------ */

static const struct cta_param_desc ckg_params[] = {
    {"nodes", "4096", "graph nodes"},
    {"degree", "4", "random out-edges per node (plus an edge to the next node)"},
    {"graph_seed", "1", "seed of the generated graph"},
    {"blocks", "0", "blocks (0: as many as can be co-resident on the whole device)"},
    {"ns", "200", "virtual nanoseconds per node visit"},
    {NULL, NULL, NULL},
};

/* ck_graph_grid_sync's: the same, and how it is launched. */
static const struct cta_param_desc ckgs_params[] = {
    {"nodes", "4096", "graph nodes"},
    {"degree", "4", "random out-edges per node (plus an edge to the next node)"},
    {"graph_seed", "1", "seed of the generated graph"},
    {"blocks", "0", "blocks (0: as many as can be co-resident on the whole device)"},
    {"ns", "200", "virtual nanoseconds per node visit"},
    {"cooperative", "1",
     "0: an ordinary launch, in which its cta_grid_sync is UB (forward_progress)"},
    {NULL, NULL, NULL},
};

#define CKG_BLOCK 256

struct ckg_state {
	int n;
	int *level;
	int *expect;
};

/* splitmix64, for a graph that depends on graph_seed only. */
static uint64_t ckg_next(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int ckg_setup_kernel(struct cta_harness *h, const struct cta_kernel_def *k, int coop)
{
	int64_t n = 0, degree = 0, gseed = 0, blocks = 0, ns = 0;
	int rc = cta__kparam_range(h, "nodes", 1, 1 << 24, &n);
	if (!rc)
		rc = cta__kparam_range(h, "degree", 0, 64, &degree);
	if (!rc)
		rc = cta__kparam_range(h, "graph_seed", 0, INT64_MAX, &gseed);
	if (!rc)
		rc = cta__kparam_range(h, "blocks", 0, 1 << 24, &blocks);
	if (!rc)
		rc = cta__kparam_range(h, "ns", 0, 1000000000, &ns);
	if (rc)
		return rc;
	int64_t edges = n * (degree + 1);
	/* The expected levels live with the state, which the harness frees. */
	struct ckg_state *S = cta__kstate_new(h, sizeof *S + (size_t)n * sizeof(int));
	int *row = cta_harness_alloc(h, (size_t)(n + 1) * sizeof(int));
	int *col = cta_harness_alloc(h, (size_t)edges * sizeof(int));
	int *level = cta_harness_alloc(h, (size_t)n * sizeof(int));
	int *n0 = cta_harness_alloc(h, (size_t)n * sizeof(int));
	int *n1 = cta_harness_alloc(h, (size_t)n * sizeof(int));
	int *sizes = cta_harness_alloc(h, 2 * sizeof(int));
	unsigned *bar = cta_harness_alloc(h, 2 * sizeof(unsigned));
	int *expect = S ? (int *)(void *)(S + 1) : NULL;
	int *queue = expect ? calloc((size_t)n, sizeof(int)) : NULL;
	if (!S || !row || !col || !level || !n0 || !n1 || !sizes || !bar || !expect || !queue) {
		free(queue);
		return cta_harness_error(h, CTA_ENOMEM, "cannot allocate a graph of %lld nodes",
		                         (long long)n);
	}
	uint64_t x = (uint64_t)gseed;
	for (int64_t u = 0; u < n; u++) {
		row[u] = (int)(u * (degree + 1));
		col[row[u]] = (int)((u + 1) % n);
		for (int64_t j = 1; j <= degree; j++)
			col[row[u] + j] = (int)(ckg_next(&x) % (uint64_t)n);
	}
	row[n] = (int)edges;
	/* The BFS levels the kernel must find, from node 0. */
	for (int64_t u = 0; u < n; u++) {
		level[u] = -1;
		expect[u] = -1;
	}
	expect[0] = 0;
	int qh = 0, qt = 0;
	queue[qt++] = 0;
	while (qh < qt) {
		int u = queue[qh++];
		for (int e = row[u]; e < row[u + 1]; e++)
			if (expect[col[e]] < 0) {
				expect[col[e]] = expect[u] + 1;
				queue[qt++] = col[e];
			}
	}
	free(queue);
	S->n = (int)n;
	S->level = level;
	S->expect = expect;
	level[0] = 0;
	n0[0] = 0;
	sizes[0] = 1;
	sizes[1] = 0;
	if (blocks == 0) {
		const struct cta_device_model *d = cta_harness_device(h);
		struct cta_block_resources r = {CKG_BLOCK, 32, 0, 0};
		blocks = (int64_t)cta_occupancy_max_blocks(d, &r, NULL) * d->sm_count;
	}
	struct ck_graph_args a = {
	    .row = cta_harness_dev(h, row),
	    .col = cta_harness_dev(h, col),
	    .level = cta_harness_dev(h, level),
	    .nodes = {cta_harness_dev(h, n0), cta_harness_dev(h, n1)},
	    .size = {cta_harness_dev(h, &sizes[0]), cta_harness_dev(h, &sizes[1])},
	    .bar_count = cta_harness_dev(h, &bar[0]),
	    .bar_gen = cta_harness_dev(h, &bar[1]),
	    .ns = (unsigned long long)ns,
	};
	struct cta_launch_cfg cfg = {
	    .grid = {(unsigned)blocks, 1, 1},
	    .block = {CKG_BLOCK, 1, 1},
	    .cooperative = coop,
	};
	return cta_harness_launch(h, k, &cfg, &a, sizeof a);
}

static int ckg_setup_barrier(struct cta_harness *h)
{
	return ckg_setup_kernel(h, &ck_graph_global_barrier, 0);
}

static int ckg_setup_grid_sync(struct cta_harness *h)
{
	int64_t coop = 1;
	int rc = cta__kparam_range(h, "cooperative", 0, 1, &coop);
	return rc ? rc : ckg_setup_kernel(h, &ck_graph_grid_sync, (int)coop);
}

static int ckg_verify(struct cta_harness *h)
{
	struct ckg_state *S = cta__kstate(h);
	if (!S)
		return cta_harness_error(h, CTA_ESTATE, "verify without a setup");
	int bad = -1;
	for (int u = 0; u < S->n && bad < 0; u++)
		if (S->level[u] != S->expect[u])
			bad = u;
	if (bad >= 0)
		return cta_harness_fail(h, "node %d: BFS level %d, the host's BFS says %d", bad,
		                        S->level[bad], S->expect[bad]);
	return 0;
}

static const struct cta_kernel_info ckgb_info = {
    .name = "ck_graph_global_barrier",
    .summary = "cooperative-kernels Figure 3: frontier BFS with a global barrier built from "
               "atomics (needs every block co-resident)",
    .params = ckg_params,
    .setup = ckg_setup_barrier,
    .verify = ckg_verify,
};
CTA_HARNESS(ckgb_info)

static const struct cta_kernel_info ckgs_info = {
    .name = "ck_graph_grid_sync",
    .summary = "cooperative-kernels Figure 3 with a cooperative launch and grid.sync()",
    .params = ckgs_params,
    .setup = ckg_setup_grid_sync,
    .verify = ckg_verify,
};
CTA_HARNESS(ckgs_info)
