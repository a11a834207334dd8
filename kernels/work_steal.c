/* Harness of work_steal_queue (work_steal_body.h): builds the task forest,
 * seeds the roots into the first root_queues queues, launches one block per
 * queue, and checks that every task was processed exactly once, by every
 * thread of one block. */
#include "kcommon.h"
#include "work_steal_body.h"

/* What verify needs, kept per run (kcommon.h says why). */
struct wsq_state {
	unsigned *visits;
	int *remaining, *overflow;
	int ntasks;
};

static const struct cta_param_desc wsq_params[] = {
    {"queues", "0", "task queues = blocks (0: one per SM)"},
    {"roots", "64", "initial tasks (roots of the task trees)"},
    {"root_queues", "1", "queues the roots are dealt to (1: all in queue 0, the rest steal)"},
    {"fanout", "2", "children a task spawns"},
    {"depth", "5", "levels of children below each root"},
    {"ns", "2000", "virtual nanoseconds per task (per thread)"},
    KPARAM_IMBALANCE,
    {NULL, NULL, NULL},
};

#define WSQ_BLOCK 128

/* Reads the queue parameters and builds the queues and the task forest
 * into *a (device pointers) and the harness state verify reads; the
 * launch is the caller's (work_steal_queue here, ck_work_stealing in
 * ck.c). */
int cta__wsq_build(struct cta_harness *h, struct wsq_args *out)
{
	int64_t queues = 0, roots = 0, root_queues = 0, fanout = 0, depth = 0, ns = 0;
	int rc = cta__kparam_range(h, "queues", 0, 1 << 20, &queues);
	if (!rc)
		rc = cta__kparam_range(h, "roots", 1, 1 << 24, &roots);
	if (!rc)
		rc = cta__kparam_range(h, "root_queues", 1, 1 << 20, &root_queues);
	if (!rc)
		rc = cta__kparam_range(h, "fanout", 1, 64, &fanout);
	if (!rc)
		rc = cta__kparam_range(h, "depth", 0, 64, &depth);
	if (!rc)
		rc = cta__kparam_range(h, "ns", 0, INT64_MAX, &ns);
	struct wsq_args a = {.fanout = (int)fanout, .ns = (unsigned long long)ns};
	if (!rc)
		rc = cta__kparam_imbalance(h, &a.imbalance);
	if (rc)
		return rc;
	if (queues == 0)
		queues = cta_harness_device(h)->sm_count;
	if (root_queues > queues)
		root_queues = queues;

	/* Tree shape: level sizes fanout^d, summed with an overflow guard. */
	int64_t size = 0, internal = 0, level = 1;
	for (int64_t d = 0; d <= depth; d++) {
		size += level;
		if (d < depth)
			internal += level;
		if (size * roots > INT32_MAX)
			return cta_harness_error(h, CTA_EINVAL,
			                         "%lld trees of fanout %lld and depth %lld: more "
			                         "than 2^31-1 tasks",
			                         (long long)roots, (long long)fanout,
			                         (long long)depth);
		/* size <= 2^31 here, so the next level fits in 64 bits. */
		level *= fanout;
	}
	struct wsq_state *S = cta__kstate_new(h, sizeof *S);
	if (!S)
		return cta_harness_error(h, CTA_ENOMEM, "cannot allocate the harness state");
	S->ntasks = (int)(size * roots);
	a.tree_size = (int)size;
	a.internal = (int)internal;
	a.nqueues = (int)queues;
	/* A queue holds its initial roots plus one depth-first path of
	 * siblings: owners pop the newest task, so the stack grows by at most
	 * fanout - 1 per level (see the body). */
	int64_t per_queue = (roots + root_queues - 1) / root_queues;
	a.cap = (int)(per_queue + depth * fanout + 1);

	int *locks = cta_harness_alloc(h, (size_t)queues * sizeof(int));
	int *heads = cta_harness_alloc(h, (size_t)queues * sizeof(int));
	int *tails = cta_harness_alloc(h, (size_t)queues * sizeof(int));
	int *slots = cta_harness_alloc(h, (size_t)queues * (size_t)a.cap * sizeof(int));
	S->remaining = cta_harness_alloc(h, sizeof(int));
	S->overflow = cta_harness_alloc(h, sizeof(int));
	S->visits = cta_harness_alloc(h, (size_t)S->ntasks * sizeof(unsigned));
	if (!locks || !heads || !tails || !slots || !S->remaining || !S->overflow || !S->visits)
		return cta_harness_error(h, CTA_ENOMEM, "cannot allocate queues for %d tasks",
		                         S->ntasks);
	/* Root r is node 0 of tree r, id r * size, dealt round robin. */
	for (int64_t r = 0; r < roots; r++) {
		int q = (int)(r % root_queues);
		slots[q * a.cap + tails[q]++] = (int)(r * size);
	}
	*S->remaining = (int)roots;

	a.locks = cta_harness_dev(h, locks);
	a.heads = cta_harness_dev(h, heads);
	a.tails = cta_harness_dev(h, tails);
	a.slots = cta_harness_dev(h, slots);
	a.remaining = cta_harness_dev(h, S->remaining);
	a.overflow = cta_harness_dev(h, S->overflow);
	a.visits = cta_harness_dev(h, S->visits);
	*out = a;
	return 0;
}

static int wsq_setup(struct cta_harness *h)
{
	struct wsq_args a;
	int rc = cta__wsq_build(h, &a);
	if (rc)
		return rc;
	struct cta_launch_cfg cfg = {
	    .grid = {(unsigned)a.nqueues, 1, 1},
	    .block = {WSQ_BLOCK, 1, 1},
	    .smem_static = 16,
	};
	return cta_harness_launch(h, &work_steal_queue, &cfg, &a, sizeof a);
}

int cta__wsq_verify(struct cta_harness *h)
{
	const struct wsq_state *S = cta__kstate(h);
	if (!S)
		return cta_harness_error(h, CTA_ESTATE, "verify without a setup");
	const struct cta_launch_cfg *c = cta_harness_launched(h, 0);
	unsigned threads = c->block[0] * c->block[1] * c->block[2];
	if (*S->overflow)
		return cta_harness_fail(h, "%d pushes found a full queue (tasks lost)",
		                        *S->overflow);
	for (int t = 0; t < S->ntasks; t++)
		if (S->visits[t] != threads)
			return cta_harness_fail(
			    h,
			    "task %d: expected %u thread visits (processed once), "
			    "got %u",
			    t, threads, S->visits[t]);
	if (*S->remaining != 0)
		return cta_harness_fail(h, "remaining: expected 0, got %d", *S->remaining);
	return 0;
}

static const struct cta_kernel_info wsq_info = {
    .name = "work_steal_queue",
    .summary = "cooperative-kernels work-stealing queue: per-block queues, CAS mutexes, "
               "spawning tasks",
    .params = wsq_params,
    .setup = wsq_setup,
    .verify = cta__wsq_verify,
};
CTA_HARNESS(wsq_info)
