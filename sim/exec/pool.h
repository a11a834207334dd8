/* Worker pool: runs independent tasks in parallel on pthreads. Results are
 * deterministic as long as task i writes only what belongs to index i; which
 * worker runs which index is not deterministic and must not matter. */
#ifndef CTA_EXEC_POOL_H
#define CTA_EXEC_POOL_H

#include <stddef.h>

struct cta__pool;

/* Creates a pool of `nthreads` workers, the calling thread of each run
 * counting as worker 0 (0: one per online CPU; 1: no threads at all, tasks
 * run inline). Returns 0, CTA_ENOMEM, or CTA_ERESOURCES when a thread
 * cannot be created. */
int cta__pool_new(struct cta__pool **out, unsigned nthreads);

/* Stops and joins the workers. Accepts NULL. Not during a run. */
void cta__pool_free(struct cta__pool *p);

/* Number of workers, the caller included: worker indices are [0, size). */
unsigned cta__pool_size(const struct cta__pool *p);

/* One task. `worker` identifies the worker running it, so that per-worker
 * state (a fiber pool, scratch buffers) can be indexed without locks. */
typedef void (*cta__pool_task_fn)(void *ctx, size_t index, unsigned worker);

/* Runs fn(ctx, i, worker) once for every i in [0, count) and returns when
 * all have returned; everything the tasks wrote is visible to the caller
 * then. Indices are handed out in chunks from an atomic counter. Runs on
 * one pool must not overlap, and a task must not call cta__pool_run on the
 * pool running it. */
void cta__pool_run(struct cta__pool *p, cta__pool_task_fn fn, void *ctx, size_t count);

/* The same with chunks of at most max_chunk indices (0: no bound): tasks
 * that each cost much more than taking an index from the shared counter
 * are best dealt out one by one, so that the last ones even out the
 * workers. */
void cta__pool_run_chunked(struct cta__pool *p, cta__pool_task_fn fn, void *ctx, size_t count,
                           size_t max_chunk);

#endif
