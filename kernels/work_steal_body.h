/* The work-stealing queue of "Cooperative Kernels: GPU Multitasking for
 * Blocking Algorithms" (FSE'17, Figure 2; seeds/cooperative-kernels-fse17-
 * excerpt.txt): per-workgroup task queues in global memory, each guarded by a
 * mutex built on atomicCAS; a workgroup pops from its own queue or steals
 * from another, and a task may spawn new tasks into its processor's queue.
 * Compiles as C11 and as CUDA C++.
 *
 * One deliberate change from the paper: a block that finds no task in any
 * queue exits instead of spinning while more_work() is true. Blocks may run
 * one after another on one host thread in the simulator (and, on a GPU,
 * unfair scheduling gives no guarantee either), so spinning on work held by a
 * block that is not running could hang. Exiting is still complete: only the
 * owner pushes into a queue, and an owner checks its own queue before it
 * exits, so a task left in a queue always has a live (or not yet started)
 * owner that will pop it. The mutex spins are bounded in practice: no
 * critical section contains a barrier or a wait, so a holder always runs to
 * its unlock without being suspended. */
#ifndef CTASIM_KERNELS_WORK_STEAL_BODY_H
#define CTASIM_KERNELS_WORK_STEAL_BODY_H

#include "ctasim/kernel.h"
#include "imbalance.h"

/* Orders the queue accesses of a critical section against its lock. */
#define WSQ_FENCE() __threadfence()

/* Tasks form `roots` complete trees of the given fanout and depth, numbered
 * breadth-first within each tree: task t is node t % tree_size of tree
 * t / tree_size, and node j's children are nodes j*fanout + 1 .. j*fanout +
 * fanout. A task spawns its children when it is one of the first `internal`
 * nodes of its tree. */
struct wsq_args {
	int *locks; /* per queue: 0 free, 1 held */
	int *heads; /* per queue: index of the oldest task (thieves take it) */
	int *tails; /* per queue: one past the newest task (the owner pops it) */
	int *slots; /* nqueues rings of cap tasks */
	int nqueues;
	int cap;
	int *remaining;   /* tasks queued or being processed */
	int *overflow;    /* pushes that found a full queue (must stay 0) */
	unsigned *visits; /* per task: threads that processed it */
	int fanout;
	int tree_size;
	int internal;
	unsigned long long ns; /* virtual cost of one task (per thread) */
	int imbalance;         /* KWORK_* pattern over task ids */
};

/* Queue fields are read and written with atomics: a plain load could hit a
 * stale L1 line on a GPU, where the lock does not invalidate caches. */
CTA_DEVICE int wsq_load(int *x)
{
	return atomicAdd(x, 0);
}

CTA_DEVICE void wsq_store(int *x, int v)
{
	atomicExch(x, v);
}

CTA_DEVICE void wsq_lock(const struct wsq_args *p, int q)
{
	while (atomicCAS(&p->locks[q], 0, 1) != 0) {
	}
	WSQ_FENCE();
}

CTA_DEVICE void wsq_unlock(const struct wsq_args *p, int q)
{
	WSQ_FENCE();
	atomicExch(&p->locks[q], 0);
}

CTA_DEVICE bool wsq_more_work(const struct wsq_args *p)
{
	return wsq_load(p->remaining) > 0;
}

/* Pops the newest task of queue `queue_id`, else steals the oldest task of
 * the next non-empty queue; -1 when every queue was empty. */
CTA_DEVICE int wsq_pop_or_steal(const struct wsq_args *p, int queue_id)
{
	for (int k = 0; k < p->nqueues; k++) {
		int q = (queue_id + k) % p->nqueues;
		int task = -1;
		wsq_lock(p, q);
		int head = wsq_load(&p->heads[q]);
		int tail = wsq_load(&p->tails[q]);
		if (tail > head) {
			if (k == 0) {
				tail--;
				task = wsq_load(&p->slots[q * p->cap + tail % p->cap]);
				wsq_store(&p->tails[q], tail);
			} else {
				task = wsq_load(&p->slots[q * p->cap + head % p->cap]);
				wsq_store(&p->heads[q], head + 1);
			}
		}
		wsq_unlock(p, q);
		if (task >= 0)
			return task;
	}
	return -1;
}

CTA_DEVICE void wsq_push(const struct wsq_args *p, int q, int task)
{
	wsq_lock(p, q);
	int head = wsq_load(&p->heads[q]);
	int tail = wsq_load(&p->tails[q]);
	if (tail - head >= p->cap) {
		atomicAdd(p->overflow, 1);
	} else {
		wsq_store(&p->slots[q * p->cap + tail % p->cap], task);
		wsq_store(&p->tails[q], tail + 1);
	}
	wsq_unlock(p, q);
}

/* Every thread of the block works on task t; then thread 0 pushes its
 * children to the block's own queue. */
CTA_DEVICE void wsq_process_task(const struct wsq_args *p, int t, int queue_id)
{
	atomicAdd(&p->visits[t], 1u);
	cta_spin_ns(kwork_cost_ns(p->imbalance, (unsigned long long)t, p->ns));
	// Every thread has read the task before thread 0 fetches the next:
	__syncthreads();
	if (cta_thread_rank() == 0) {
		int node = t % p->tree_size;
		if (node < p->internal) {
			// Count the children before they become visible, so
			// remaining never drops to 0 while work exists.
			atomicAdd(p->remaining, p->fanout);
			for (int j = 1; j <= p->fanout; j++)
				wsq_push(p, queue_id, t - node + node * p->fanout + j);
		}
		atomicAdd(p->remaining, -1);
	}
}

/* (ck.c includes the helpers above without this kernel, which
 * work_steal.c defines.) */
#ifndef WSQ_HELPERS_ONLY
CTA_KERNEL(work_steal_queue, struct wsq_args, p)
{
	CTA_SHARED(int, task);
	int queue_id = blockIdx.x % p->nqueues;
	while (true) {
		// Thread 0 decides for the block, so the loop is uniform:
		if (cta_thread_rank() == 0)
			*task = wsq_more_work(p) ? wsq_pop_or_steal(p, queue_id) : -1;
		__syncthreads();
		int t = *task;
		if (t < 0)
			break; // no work anywhere: exit rather than spin (see top)
		wsq_process_task(p, t, queue_id);
	}
}
#endif

#endif
