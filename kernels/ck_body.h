/* The two kernels of "Cooperative Kernels: GPU Multitasking for Blocking
 * Algorithms" (FSE'17; seeds/cooperative-kernels-fse17-excerpt.txt) as the
 * paper writes them: Figure 2's work-stealing loop, whose blocks spin while
 * more work remains, and Figure 3's frontier graph traversal with a global
 * barrier, once built from atomics as the paper does and once with a
 * cooperative launch's grid.sync(). Both wait for other blocks, so they are
 * correct only while every block they wait for is resident
 * (docs/FORWARD_PROGRESS.md). Compiles as C11 and as CUDA C++. */
#ifndef CTASIM_KERNELS_CK_BODY_H
#define CTASIM_KERNELS_CK_BODY_H

#include "ctasim/kernel.h"
#include "work_steal_body.h"

/* ---- Figure 2: work stealing ---------------------------------------------
 * The queues, mutexes and tasks of work_steal_body.h; the loop as the paper
 * writes it: while more_work, pop or steal a task and process it. A block
 * with no task while work remains spins (the paper's second spin-wait);
 * with steal = 0 a block only pops its own queue. One thread decides for
 * the block, so the loop stays uniform (a workgroup in the paper). */
struct ck_ws_args {
	struct wsq_args q;
	int steal;
};

/* Pops the newest task of the block's own queue (no stealing); -1 if none. */
CTA_DEVICE int ck_pop_own(const struct wsq_args *p, int q)
{
	int task = -1;
	wsq_lock(p, q);
	int head = wsq_load(&p->heads[q]);
	int tail = wsq_load(&p->tails[q]);
	if (tail > head) {
		tail--;
		task = wsq_load(&p->slots[q * p->cap + tail % p->cap]);
		wsq_store(&p->tails[q], tail);
	}
	wsq_unlock(p, q);
	return task;
}

CTA_KERNEL(ck_work_stealing, struct ck_ws_args, a)
{
	CTA_SHARED(int, task);
	const struct wsq_args *p = &a->q;
	int queue_id = blockIdx.x % p->nqueues;
	for (;;) {
		if (cta_thread_rank() == 0) {
			if (!wsq_more_work(p))
				*task = -2;
			else
				*task = a->steal ? wsq_pop_or_steal(p, queue_id)
				                 : ck_pop_own(p, queue_id);
		}
		__syncthreads();
		int t = *task;
		__syncthreads(); // everyone read it before thread 0 writes the next
		if (t == -2)
			break;
		if (t >= 0)
			wsq_process_task(p, t, queue_id);
	}
}

/* ---- Figure 3: frontier graph traversal ---------------------------------
 * A breadth-first traversal of a graph in CSR form (row[n+1], col[]).
 * nodes[0] and nodes[1] are the two frontiers, size[0] and size[1] their
 * lengths; level[v] is the BFS level of v (-1: not reached). Each level the
 * threads take the in-frontier's nodes with a grid stride, claim
 * unreached neighbours with atomicCAS and push them to the out-frontier;
 * then the frontiers swap, a global barrier, the new out-frontier is reset,
 * a global barrier. */
struct ck_graph_args {
	const int *row;
	const int *col;
	int *level;
	int *nodes[2];
	int *size[2];
	unsigned *bar_count;   /* global barrier: blocks arrived */
	unsigned *bar_gen;     /* global barrier: phase */
	unsigned long long ns; /* virtual cost of one node visit */
};

CTA_DEVICE void ck_process_node(const struct ck_graph_args *p, int u, int out, int level)
{
	cta_spin_ns(p->ns);
	for (int e = p->row[u]; e < p->row[u + 1]; e++) {
		int v = p->col[e];
		if (atomicCAS(&p->level[v], -1, level + 1) == -1) {
			int i = atomicAdd(p->size[out], 1);
			p->nodes[out][i] = v;
		}
	}
}

/* The inter-block barrier of the paper's experiments, built from atomics:
 * the block's threads meet, thread 0 arrives on a global count (the last
 * to arrive resets it and starts the next phase) and spins until the phase
 * changes, and the block's threads meet again. Correct only when every
 * block is resident. */
CTA_DEVICE void ck_global_barrier(const struct ck_graph_args *p)
{
	__syncthreads();
	if (cta_thread_rank() == 0) {
		__threadfence();
		unsigned gen = cta_ld_volatile(p->bar_gen);
		unsigned nblocks = gridDim.x * gridDim.y * gridDim.z;
		if (atomicAdd(p->bar_count, 1u) == nblocks - 1) {
			atomicExch(p->bar_count, 0u);
			__threadfence();
			atomicAdd(p->bar_gen, 1u);
		} else {
			while (cta_ld_volatile(p->bar_gen) == gen) {
			}
		}
		__threadfence();
	}
	__syncthreads();
}

/* Figure 3's loop; `grid_sync` picks the barrier. */
CTA_DEVICE void ck_graph_app(const struct ck_graph_args *p, int grid_sync)
{
	int level = 0;
	int in = 0;
	int tid = (int)(blockIdx.x * blockDim.x + threadIdx.x);
	int stride = (int)(gridDim.x * blockDim.x);
	while (cta_ld_volatile(p->size[in]) > 0) {
		int n = cta_ld_volatile(p->size[in]);
		for (int i = tid; i < n; i += stride)
			ck_process_node(p, p->nodes[in][i], 1 - in, level);
		in = 1 - in; // swap(&in_nodes, &out_nodes)
		if (grid_sync)
			cta_grid_sync();
		else
			ck_global_barrier(p);
		if (tid == 0)
			cta_st_volatile(p->size[1 - in], 0); // reset(out_nodes)
		level++;
		if (grid_sync)
			cta_grid_sync();
		else
			ck_global_barrier(p);
	}
}

CTA_KERNEL(ck_graph_global_barrier, struct ck_graph_args, p)
{
	ck_graph_app(p, 0);
}

CTA_KERNEL(ck_graph_grid_sync, struct ck_graph_args, p)
{
	ck_graph_app(p, 1);
}

#endif
