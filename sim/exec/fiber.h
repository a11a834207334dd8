/* Fibers: cooperative user-space contexts on pooled, guarded stacks. The
 * executor gives a CUDA thread its own fiber only once it must wait at a
 * barrier, so switches must be cheap and stacks must be recycled. */
#ifndef CTA_EXEC_FIBER_H
#define CTA_EXEC_FIBER_H

#include <stddef.h>
#include <stdint.h>

/* Default usable stack size. Pages are committed by the kernel only when
 * touched, so a large default costs address space, not memory. */
#define CTA__FIBER_STACK_DEFAULT ((size_t)256 * 1024)

struct cta__fiber;
typedef void (*cta__fiber_fn)(void *arg);

/* One pool per host thread; nothing here is thread-safe. A pool may be made
 * on one thread and used on another, and change threads between uses, but
 * only while none of its fibers is suspended mid-run: code on a fiber may
 * have cached the address of its thread's thread-local variables. */
struct cta__fiber_pool;

/* Creates a pool whose fibers get stacks of `stack_bytes` (0: the default),
 * rounded up to whole pages, each with a PROT_NONE guard page below it.
 * Returns 0 or CTA_ENOMEM. */
int cta__fiber_pool_new(struct cta__fiber_pool **out, size_t stack_bytes);

/* Frees the pool and every stack it ever made, live or not. Accepts NULL.
 * Must be called on the host stack, never from inside one of its fibers. */
void cta__fiber_pool_free(struct cta__fiber_pool *p);

/* The fiber standing for the calling OS thread's own stack: switch from it
 * to enter a fiber, and name it as `ret` to come back. Owned by the pool. */
struct cta__fiber *cta__fiber_host(struct cta__fiber_pool *p);

/* Takes a stack from the pool (reusing a finished or released one first)
 * and prepares it so that the first switch to it calls fn(arg). When fn
 * returns, the fiber is finished, its stack goes back to the pool, and
 * control switches to `ret`, which must still be valid then. Returns NULL
 * when no memory is left for a new stack.
 *
 * A fiber handle stays valid, and cta__fiber_finished() keeps answering
 * for it, until the next cta__fiber_start() on the same pool, which may
 * hand out the same handle again. */
struct cta__fiber *cta__fiber_start(struct cta__fiber_pool *p, cta__fiber_fn fn, void *arg,
                                    struct cta__fiber *ret);

/* Saves the current context into `from` (which must be the fiber now
 * running) and resumes `to` (which must be unfinished and not running).
 * Returns when something switches back to `from`. The floating-point
 * control state (rounding mode, exception masks) belongs to the host
 * thread, shared by its fibers as by the functions it calls, with the
 * assembly switch (the ucontext fallback may keep one per fiber). */
void cta__fiber_switch(struct cta__fiber *from, struct cta__fiber *to);

/* Gives back a fiber that was started but will never be resumed (an
 * abandoned run). Nothing on its stack is unwound: whatever its frames
 * own is leaked. Releasing a finished fiber does nothing. */
void cta__fiber_release(struct cta__fiber_pool *p, struct cta__fiber *f);

/* Parking: a fiber whose function loops, waiting for work, is put on its
 * pool's list of parked fibers (by whoever knows it is about to switch away
 * from it for good) and taken back, last parked first, to be resumed with
 * new work. Parking neither switches nor changes the fiber otherwise; a
 * parked fiber must not be resumed before it is unparked. Only for the
 * thread that uses the fiber's pool now. cta__fiber_unpark returns NULL
 * when none is parked. */
void cta__fiber_park(struct cta__fiber *f);
/* A fiber of another thread's pool that is to be parked (its unit moved to
 * this thread) waits on a list of the current thread's until
 * cta__fiber_return_all, called while no pool is in use, parks every fiber
 * of the list in the pool that made it. */
void cta__fiber_defer(struct cta__fiber **list, struct cta__fiber *f);
void cta__fiber_return_all(struct cta__fiber **list);
struct cta__fiber *cta__fiber_unpark(struct cta__fiber_pool *p);

/* Shared stacks: the pools of one simulation make at most this many
 * stacks together (-1: no limit, the sanitizer builds and the ucontext
 * fallback), each pool its share (cta__fiber_pool_share); further fibers
 * take turns on them. A fiber switched to while another is resident on its
 * stack first copies that one's used part (from its saved stack pointer
 * to its first frame, under a kilobyte) out and its own back in. What is
 * kept of the used part is its difference from a reference image of the
 * same length, an earlier eviction's: a bitmap of the words that differ
 * and each one's difference as a varint, 40-50 bytes for a waiting thread
 * of the shipped kernels, in the fiber's own 128 bytes when it fits.
 * Suspended threads so cost bytes, not pages, and nothing is copied
 * while a host thread's fibers fit. Tests set it low to exercise the
 * copies. Set before pools are made; read when they are made. */
extern int cta__fiber_share_after;

/* The least share of a pool, when cta__fiber_share_after is not smaller:
 * the threads of a 256-thread block, each waiting at a barrier, keep a
 * stack each on one host thread. A switch to a fiber whose stack another
 * holds copies its used part in and out (about 1 KiB), 9x the time of a
 * barrier-heavy block whose threads all fit (block_reduce on fibers). */
#define CTA__FIBER_SHARE_FLOOR 256

/* p is one of npools pools that work together (a simulation's host
 * threads): it makes cta__fiber_share_after / npools stacks, at least
 * CTA__FIBER_SHARE_FLOOR (or cta__fiber_share_after, when smaller). Each
 * stack a fiber waited on keeps 2-3 touched pages: 1,024 stacks a host
 * thread were 76 MB at 8 host threads, against 10 MB at one. A new pool
 * counts as one of one; reads cta__fiber_share_after now. */
void cta__fiber_pool_share(struct cta__fiber_pool *p, unsigned npools);

/* Stacks the pool has made (what its share bounds). */
size_t cta__fiber_pool_stacks(const struct cta__fiber_pool *p);

/* Bytes the pool holds beyond its stacks: its fibers, the stashes of
 * suspended ones that did not fit in them, and reference images. */
size_t cta__fiber_pool_held(const struct cta__fiber_pool *p);

/* Nonzero once fn has returned. */
int cta__fiber_finished(const struct cta__fiber *f);
/* Where a started fiber switches when its function returns (a unit resumed
 * on another host thread has a different scheduler context). */
void cta__fiber_set_ret(struct cta__fiber *f, struct cta__fiber *ret);
/* The pool a fiber's stack came from. */
struct cta__fiber_pool *cta__fiber_pool_of(const struct cta__fiber *f);
/* 1 when a body overran the fiber's stack (its canary was overwritten). */
int cta__fiber_overflowed(const struct cta__fiber *f);
/* The word cta__fiber_overflowed reads: f overran its stack once it no
 * longer holds CTA__FIBER_CANARY; NULL for a stack without one. Where
 * it lies moves only while f is suspended (its stack shared). */
#define CTA__FIBER_CANARY 0x5ca1ab1ec0ffee00ull
const uint64_t *cta__fiber_canary(const struct cta__fiber *f);
/* Bytes of f's stack below the caller's frame, f being the fiber running
 * now; 0 for a host thread's own stack. */
size_t cta__fiber_stack_left(const struct cta__fiber *f);

#endif
