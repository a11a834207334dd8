/* Worker pool: a generation counter wakes the workers for each run, an
 * atomic counter deals out chunks of indices, and a pending count tells the
 * caller when the last worker is done. Idle workers spin briefly before
 * sleeping so that back-to-back small runs do not pay a futex wake each. */
#include "exec/pool.h"

#include <assert.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <unistd.h>

#include "ctasim/errors.h"

/* How long an idle worker (or the waiting caller) polls before sleeping.
 * Short: cores are often shared, and a wake costs only some microseconds. */
#define SPIN_ROUNDS 1000

struct worker {
	struct cta__pool *pool;
	pthread_t thread;
	unsigned index;
};

struct cta__pool {
	unsigned size;
	struct worker *workers; /* size - 1 threads; worker 0 is the caller */

	pthread_mutex_t lock;
	pthread_cond_t wake; /* workers: a new generation or shutdown */
	pthread_cond_t done; /* caller: pending reached 0 */
	atomic_uint generation;
	atomic_int shutdown;

	/* The current run, written before generation is bumped. */
	cta__pool_task_fn fn;
	void *ctx;
	size_t count;
	size_t chunk;
	atomic_size_t next;
	atomic_uint pending; /* threads still working on this run */
	atomic_int running;  /* catches overlapping runs in debug builds */
};

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

static void work(struct cta__pool *p, unsigned worker)
{
	cta__pool_task_fn fn = p->fn;
	void *ctx = p->ctx;
	size_t count = p->count, chunk = p->chunk;
	for (;;) {
		size_t i = atomic_fetch_add_explicit(&p->next, chunk, memory_order_relaxed);
		if (i >= count)
			break;
		size_t end = count - i < chunk ? count : i + chunk;
		for (; i < end; i++)
			fn(ctx, i, worker);
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct cta__pool *p = w->pool;
	unsigned seen = 0;
	for (;;) {
		unsigned gen;
		int spins = 0;
		while ((gen = atomic_load_explicit(&p->generation, memory_order_acquire)) == seen &&
		       !atomic_load_explicit(&p->shutdown, memory_order_acquire)) {
			if (++spins < SPIN_ROUNDS) {
				cpu_relax();
				continue;
			}
			pthread_mutex_lock(&p->lock);
			while (atomic_load_explicit(&p->generation, memory_order_acquire) == seen &&
			       !atomic_load_explicit(&p->shutdown, memory_order_acquire))
				pthread_cond_wait(&p->wake, &p->lock);
			pthread_mutex_unlock(&p->lock);
		}
		if (atomic_load_explicit(&p->shutdown, memory_order_acquire))
			return NULL;
		seen = gen;
		work(p, w->index);
		if (atomic_fetch_sub_explicit(&p->pending, 1, memory_order_acq_rel) == 1) {
			/* Taking the lock orders this signal after the caller's
			 * last check of pending, so the wake cannot be lost. */
			pthread_mutex_lock(&p->lock);
			pthread_cond_signal(&p->done);
			pthread_mutex_unlock(&p->lock);
		}
	}
}

static void stop_workers(struct cta__pool *p, unsigned started)
{
	pthread_mutex_lock(&p->lock);
	atomic_store_explicit(&p->shutdown, 1, memory_order_release);
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);
	for (unsigned i = 0; i < started; i++)
		pthread_join(p->workers[i].thread, NULL);
}

int cta__pool_new(struct cta__pool **out, unsigned nthreads)
{
	*out = NULL;
	if (nthreads == 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		nthreads = n > 0 ? (unsigned)n : 1;
	}
	struct cta__pool *p = calloc(1, sizeof(*p));
	if (!p)
		return CTA_ENOMEM;
	p->size = nthreads;
	if (nthreads == 1) {
		*out = p;
		return 0;
	}
	p->workers = calloc(nthreads - 1, sizeof(*p->workers));
	if (!p->workers) {
		free(p);
		return CTA_ENOMEM;
	}
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->wake, NULL);
	pthread_cond_init(&p->done, NULL);
	for (unsigned i = 0; i < nthreads - 1; i++) {
		p->workers[i].pool = p;
		p->workers[i].index = i + 1;
		if (pthread_create(&p->workers[i].thread, NULL, worker_main, &p->workers[i]) != 0) {
			stop_workers(p, i);
			pthread_cond_destroy(&p->done);
			pthread_cond_destroy(&p->wake);
			pthread_mutex_destroy(&p->lock);
			free(p->workers);
			free(p);
			return CTA_ERESOURCES;
		}
	}
	*out = p;
	return 0;
}

void cta__pool_free(struct cta__pool *p)
{
	if (!p)
		return;
	if (p->size > 1) {
		stop_workers(p, p->size - 1);
		pthread_cond_destroy(&p->done);
		pthread_cond_destroy(&p->wake);
		pthread_mutex_destroy(&p->lock);
	}
	free(p->workers);
	free(p);
}

unsigned cta__pool_size(const struct cta__pool *p)
{
	return p->size;
}

void cta__pool_run(struct cta__pool *p, cta__pool_task_fn fn, void *ctx, size_t count)
{
	cta__pool_run_chunked(p, fn, ctx, count, 0);
}

void cta__pool_run_chunked(struct cta__pool *p, cta__pool_task_fn fn, void *ctx, size_t count,
                           size_t max_chunk)
{
	if (p->size == 1 || count <= 1) {
		for (size_t i = 0; i < count; i++)
			fn(ctx, i, 0);
		return;
	}
	int was_running = atomic_exchange(&p->running, 1);
	assert(!was_running && "overlapping cta__pool_run on one pool");
	(void)was_running;

	/* About eight chunks per worker: coarse enough that the counter is not
	 * contended, fine enough to even out tasks of unequal length. */
	size_t chunk = count / ((size_t)p->size * 8);
	if (max_chunk && chunk > max_chunk)
		chunk = max_chunk;
	p->fn = fn;
	p->ctx = ctx;
	p->count = count;
	p->chunk = chunk ? chunk : 1;
	atomic_store_explicit(&p->next, 0, memory_order_relaxed);
	atomic_store_explicit(&p->pending, p->size - 1, memory_order_relaxed);

	pthread_mutex_lock(&p->lock);
	atomic_fetch_add_explicit(&p->generation, 1, memory_order_release);
	pthread_cond_broadcast(&p->wake);
	pthread_mutex_unlock(&p->lock);

	work(p, 0);

	int spins = 0;
	while (atomic_load_explicit(&p->pending, memory_order_acquire) != 0) {
		if (++spins < SPIN_ROUNDS) {
			cpu_relax();
			continue;
		}
		pthread_mutex_lock(&p->lock);
		while (atomic_load_explicit(&p->pending, memory_order_acquire) != 0)
			pthread_cond_wait(&p->done, &p->lock);
		pthread_mutex_unlock(&p->lock);
	}
	atomic_store(&p->running, 0);
}
