/* Fibers: stack pool, first-switch frames and sanitizer bookkeeping. The
 * register switch itself is in fiber_<arch>.S; other architectures fall
 * back to ucontext, which is correct but makes a signal-mask syscall. */
#include "exec/fiber.h"

#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ctasim/errors.h"

#if defined(__SANITIZE_ADDRESS__)
#define CTA__FIBER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CTA__FIBER_ASAN 1
#endif
#endif
/* ThreadSanitizer: a fiber runs as the host thread that switched to it,
 * with no TSan fiber of its own. Each simulated thread that waits is a
 * fiber, and a cluster-launch-control run keeps tens of thousands waiting
 * at once: as TSan fibers they exceed gcc 12's runtime (8128 threads, fibers
 * counted) and clang 14's (a 512 KiB shadow stack mapping each). What a TSan
 * fiber keeps apart is the shadow call stack, which the switch below would
 * otherwise tear; TSan builds instrument no function entry or exit
 * (meson.build), so nothing pushes onto it across a switch. Races between
 * host threads are still found: a fiber resumed on another host thread is
 * handed over through the pool's locks, which TSan sees. Reports show the
 * racing accesses' places without their callers. */

#ifdef CTA__FIBER_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif

#if !defined(CTA__FIBER_ASM)
#include <ucontext.h>
#endif

/* A reference image: the used part of a fiber's stack as one eviction
 * found it, against which later evictions of the same length are
 * encoded. Immutable; freed with its last user (the fibers encoded
 * against it, and the pool's table while it is there). */
struct ref {
	uint32_t users;
	uint32_t words;
	uint32_t base_len; /* bytes of the first encoding against it (0: none yet) */
	uint64_t top;      /* the address the image ended at (its stack's frame top) */
	uint64_t w[];
};

/* Bytes of an evicted fiber's encoded frames kept in the fiber itself;
 * longer encodings go to the heap. A waiting thread's frames differ from
 * the previous one's in a dozen words or so: 40-50 bytes encoded. */
#define STASH_IN 56

/* 128 bytes (plus the sanitizer fields): a fiber stands for every waiting
 * thread of a run on the fiber path, 270,336 of them on a full H100. */
struct cta__fiber {
#if defined(CTA__FIBER_ASM)
	void *sp; /* saved stack pointer; the registers lie just above it */
#endif
	/* Read with sp at every switch (cta__fiber_switch's assertion): in
	 * its cache line, or each switch to a cold fiber misses twice. */
	unsigned char finished;
	unsigned char in_pool; /* on the free list: not running and not resumable */
	unsigned char away;    /* its frames are in its stash, another fiber's on its stack */
	/* The pool's stack this fiber runs on (NO_SLOT: a stack of its own,
	 * the host's or the trampoline's). Past the first
	 * cta__fiber_share_after stacks, fibers share them: one at a time is
	 * resident, the others keep the used part of theirs as a stash. */
	uint32_t slot;
	struct cta__fiber_pool *pool;
	struct cta__fiber *ret;
	struct cta__fiber *next_free;
	cta__fiber_fn fn;
	void *arg;
	/* The stash, while away: the image of img_words words ending at the
	 * top of the first frame, as `ref` with the encoded differences
	 * (stash_len bytes; none: the image is ref itself), or, with ref
	 * NULL, the raw image. In `in` when it fits, else on the heap. */
	struct ref *ref;
	uint32_t stash_len, img_words;
	union {
		unsigned char in[STASH_IN];
		unsigned char *heap;
	} st;
#ifdef CTA__FIBER_ASAN
	void *asan_fake; /* this fiber's fake stack while it is switched out */
	const void *asan_bottom;
	size_t asan_size;
#endif
#if !defined(CTA__FIBER_ASM)
	ucontext_t uc;
#endif
} __attribute__((aligned(64)));

/* Fibers and pools are written on every switch (saved stack pointers,
 * free lists); those of different host threads must not share a cache
 * line, or every switch makes the other core reload it. */
static void *calloc_lines(size_t size)
{
	size_t n = (size + 63) / 64 * 64;
	void *q = aligned_alloc(64, n);
	if (q)
		memset(q, 0, n);
	return q;
}

struct slab {
	void *map;
	size_t len;
	struct slab *next;
};

/* Fibers are made SLAB_FIBERS at a time and freed only with their pool. */
#define SLAB_FIBERS 64
struct fiber_slab {
	struct fiber_slab *next;
	struct cta__fiber f[SLAB_FIBERS];
};

#define SLAB_STACKS 64
#define NO_SLOT     UINT32_MAX
/* Parked runners kept once stacks are shared (cta__fiber_park). */
#define PARK_KEEP 64
#define CANARY    CTA__FIBER_CANARY
/* Reference images a pool keeps, one per image length: a fiber waiting
 * at each of a body's wait points, in each of the few frames above it
 * (a barrier, an mbarrier wait, the engine's step). */
#define NREFS 8
/* Longer images are kept raw: deep frames are rare, and an encoding
 * against them would cost time for little. */
#define REF_MAX_WORDS 512

struct cta__fiber_pool {
	struct cta__fiber host;
	struct cta__fiber *free_list;
	struct cta__fiber *parked; /* suspended fibers waiting to be handed work */
	struct fiber_slab *fslabs; /* the newest first */
	unsigned fslab_used;       /* fibers taken from fslabs (the newest) */
	size_t stack_sz;
	size_t page;
	/* Stacks are carved from slabs of SLAB_STACKS: one mapping each, so a
	 * simulation with hundreds of thousands of waiting threads stays well
	 * under the kernel's limit on mappings (vm.max_map_count). */
	size_t nstacks; /* made so far: picks each one's colour */
	char *slab_next;
	size_t slab_left;
	struct slab *slabs;
	/* Stacks (slots) and the fiber resident on each. */
	struct slot {
		char *lo;
		/* The word an overflow of the stack would reach first (new_stack
		 * says where). */
		uint64_t *canary;
		unsigned color;
		struct cta__fiber *resident;
	} * slots;
	size_t nslots, slots_cap;
	size_t next_share; /* round robin over the slots for new fibers */
	/* Switches between two fibers of one slot go through this fiber, on
	 * a stack of its own: the one leaving must be copied out before the
	 * other is copied in. */
	struct cta__fiber *tramp;
	struct cta__fiber *tramp_from, *tramp_to;
	char *tramp_map;
	size_t tramp_len;
	size_t nparked;
	/* Stacks this pool makes before its fibers share them (SIZE_MAX: no
	 * limit): cta__fiber_share_after split over the pools that work
	 * together (cta__fiber_pool_share). */
	size_t share;
	/* Evictions' reference images (struct ref), by length, and the
	 * buffer an eviction encodes into. */
	struct ref *refs[NREFS];
	unsigned next_ref;
	unsigned char *scratch;
	size_t scratch_cap;
	size_t held; /* bytes of fibers, stashes on the heap and reference images */
};

#if defined(CTA__FIBER_ASM)
/* Saves callee-saved state on the current stack, stores the stack pointer
 * in *save_sp, then loads new_sp and restores the state found there. */
void cta__fiber_swap(void **save_sp, void *new_sp);
/* First code a new fiber runs: calls the function in the frame's second
 * register slot with the first slot as its argument (see prepare()). */
void cta__fiber_entry(void);
#endif

#ifdef CTA__FIBER_ASAN
/* The fiber this thread is switching away from, for the fiber it switches
 * to to credit the stack it left: per host thread, since a unit's fibers may
 * be resumed on another thread than their pool's. */
static _Thread_local struct cta__fiber *asan_switching_from;
#endif

/* Both halves of the sanitizer protocol: before_switch() runs on the fiber
 * being left, after_switch() on the fiber that resumes. */
static inline void before_switch(struct cta__fiber *from, struct cta__fiber *to, int dying)
{
#ifdef CTA__FIBER_ASAN
	asan_switching_from = from;
	__sanitizer_start_switch_fiber(dying ? NULL : &from->asan_fake, to->asan_bottom,
	                               to->asan_size);
#endif
	(void)from;
	(void)to;
	(void)dying;
}

static inline void after_switch(struct cta__fiber *self)
{
#ifdef CTA__FIBER_ASAN
	/* Records the bounds of the stack just left: this is how the host
	 * fiber's bounds become known before anything switches back to it. */
	struct cta__fiber *prev = asan_switching_from;
	__sanitizer_finish_switch_fiber(self->asan_fake, &prev->asan_bottom, &prev->asan_size);
#endif
	(void)self;
}

static inline void raw_switch(struct cta__fiber *from, struct cta__fiber *to)
{
#if defined(CTA__FIBER_ASM)
	cta__fiber_swap(&from->sp, to->sp);
#else
	if (swapcontext(&from->uc, &to->uc) != 0)
		abort();
#endif
}

#if defined(__SANITIZE_THREAD__)
#define CTA__FIBER_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CTA__FIBER_TSAN 1
#endif
#endif
#if defined(CTA__FIBER_ASM) && !defined(CTA__FIBER_ASAN) && !defined(CTA__FIBER_TSAN)
/* Shared stacks need the saved stack pointer (the assembly switch); under
 * the sanitizers every fiber keeps a stack of its own (their shadow memory
 * would describe a stack's previous fiber). */
int cta__fiber_share_after = 1024;
#else
int cta__fiber_share_after = -1;
#endif

/* f's usable stack: its slot's, or the trampoline's own; NULL for the
 * host thread's stack. */
static char *stack_lo(const struct cta__fiber *f, size_t *sz, unsigned *color)
{
	const struct cta__fiber_pool *p = f->pool;
	if (f->slot != NO_SLOT) {
		*sz = p->stack_sz;
		*color = p->slots[f->slot].color;
		return p->slots[f->slot].lo;
	}
	*color = 0;
	if (f == p->tramp) {
		*sz = p->tramp_len - p->page;
		return p->tramp_map + p->page;
	}
	*sz = 0;
	return NULL;
}

/* Top of f's first frame: nothing above it is ever written. */
static char *frame_top(const struct cta__fiber *f)
{
	size_t sz;
	unsigned color;
	char *lo = stack_lo(f, &sz, &color);
	return (char *)((uintptr_t)(lo + sz - color) & ~(uintptr_t)15);
}

static int resident(const struct cta__fiber *f)
{
	return f->slot == NO_SLOT || f->pool->slots[f->slot].resident == f;
}

/* The stash's bytes. */
static unsigned char *stash_bytes(struct cta__fiber *f)
{
	return f->stash_len > STASH_IN ? f->st.heap : f->st.in;
}

static void ref_drop(struct cta__fiber_pool *p, struct ref *r)
{
	if (r && !--r->users) {
		p->held -= sizeof(*r) + (size_t)r->words * 8;
		free(r);
	}
}

/* Forgets f's stash (f resident again, or never to be resumed). */
static void stash_drop(struct cta__fiber *f)
{
	if (f->stash_len > STASH_IN) {
		f->pool->held -= f->stash_len;
		free(f->st.heap);
	}
	ref_drop(f->pool, f->ref);
	f->ref = NULL;
	f->stash_len = 0;
	f->img_words = 0;
}

/* Room for n bytes in the pool's scratch buffer. */
static unsigned char *scratch(struct cta__fiber_pool *p, size_t n)
{
	if (p->scratch_cap < n) {
		size_t cap = n < 4096 ? 4096 : n;
		free(p->scratch);
		p->scratch = malloc(cap);
		if (!p->scratch)
			abort(); /* a few KiB once; nothing sensible without them */
		p->scratch_cap = cap;
	}
	return p->scratch;
}

/* What word i of an image ending at top is predicted to be: r's word,
 * moved by the distance between the two stacks when it points into r's
 * (a saved frame pointer, the address of a local): fibers of different
 * slots then differ only where their threads do. */
static inline uint64_t predict(const struct ref *r, size_t i, uint64_t shift, uint64_t span)
{
	uint64_t v = r->w[i];
	return v - (r->top - span) < span ? v + shift : v;
}

/* Encodes img (n words, ending at top) against r into out: a bitmap of
 * the words that differ from their prediction, then each one's
 * difference as a zigzag varint (a pointer into a neighbour's lane
 * differs in its low bits only). Returns the bytes written, or 0 when
 * that passes `limit` (out must hold limit + 10 + the bitmap). */
static size_t encode(const struct ref *r, const uint64_t *img, size_t n, uint64_t top,
                     uint64_t span, unsigned char *out, size_t limit)
{
	size_t nb = (n + 7) / 8, o = nb;
	uint64_t shift = top - r->top;
	memset(out, 0, nb);
	for (size_t i = 0; i < n; i++) {
		uint64_t d = img[i] - predict(r, i, shift, span);
		if (!d)
			continue;
		out[i / 8] |= (unsigned char)(1u << (i % 8));
		uint64_t z = (d << 1) ^ (uint64_t) - (int64_t)(d >> 63);
		do {
			out[o++] = (unsigned char)(z & 0x7f) | (z > 0x7f ? 0x80 : 0);
			z >>= 7;
		} while (z);
		if (o > limit)
			return 0;
	}
	return o;
}

/* Writes the image encode() made (len bytes against r) to img, n words
 * ending at top. */
static void decode(const struct ref *r, uint64_t *img, size_t n, uint64_t top, uint64_t span,
                   const unsigned char *in, size_t len)
{
	uint64_t shift = top - r->top;
	if (!shift)
		memcpy(img, r->w, n * 8);
	else
		for (size_t i = 0; i < n; i++)
			img[i] = predict(r, i, shift, span);
	size_t nb = (n + 7) / 8, o = nb;
	for (size_t b = 0; b < nb && o < len; b++) {
		for (unsigned m = in[b]; m; m &= m - 1) {
			size_t i = b * 8 + (size_t)__builtin_ctz(m);
			uint64_t z = 0;
			unsigned sh = 0;
			unsigned char c;
			do {
				c = in[o++];
				z |= (uint64_t)(c & 0x7f) << sh;
				sh += 7;
			} while (c & 0x80);
			img[i] += (z >> 1) ^ (uint64_t) - (int64_t)(z & 1);
		}
	}
}

/* Keeps img (n words, the used part of f's stack, ending at top) in f's
 * stash: as its differences from the pool's reference image of that
 * length, or as a new reference image that later evictions are encoded
 * against, when there is none, when the differences pass a byte a word,
 * or when they no longer fit in the fiber and have grown past the first
 * encoding against the reference (the threads evicted now are of another
 * block than the reference's: a reference per block and its neighbours'
 * differences, 30-50 bytes, cost less than differences that keep
 * growing). */
static void stash_put(struct cta__fiber *f, const uint64_t *img, size_t n, char *top)
{
	struct cta__fiber_pool *p = f->pool;
	size_t len = 0;
	const unsigned char *src = NULL;
	struct ref *r = NULL;
	if (n <= REF_MAX_WORDS) {
		unsigned k = NREFS;
		for (unsigned i = 0; i < NREFS; i++)
			if (p->refs[i] && p->refs[i]->words == n) {
				k = i;
				break;
			}
		size_t limit = n > 32 ? n : 32;
		unsigned char *out = scratch(p, limit + 10 + (n + 7) / 8);
		if (k < NREFS && (len = encode(p->refs[k], img, n, (uintptr_t)top, p->stack_sz, out,
		                               limit)) != 0) {
			r = p->refs[k];
			src = out;
			if (!r->base_len)
				r->base_len = (uint32_t)len;
			else if (len > STASH_IN && len > r->base_len + 8)
				r = NULL;
		}
		if (!r) {
			r = malloc(sizeof(*r) + n * 8);
			if (!r)
				abort(); /* as for a stash */
			p->held += sizeof(*r) + n * 8;
			r->users = 1; /* the pool's table */
			r->words = (uint32_t)n;
			r->base_len = 0;
			r->top = (uintptr_t)top;
			memcpy(r->w, img, n * 8);
			if (k == NREFS)
				k = p->next_ref++ % NREFS;
			ref_drop(p, p->refs[k]);
			p->refs[k] = r;
			len = 0; /* the image is r */
		}
		r->users++;
	} else {
		len = n * 8;
		src = (const unsigned char *)img;
	}
	f->ref = r;
	f->img_words = (uint32_t)n;
	f->stash_len = (uint32_t)len;
	if (len > STASH_IN) {
		f->st.heap = malloc(len);
		if (!f->st.heap)
			abort(); /* a few bytes (a few KiB for a deep frame) */
		p->held += len;
	}
	if (len)
		memcpy(stash_bytes(f), src, len);
}

/* Writes f's stash back to its stack, whose used part ends at top. */
static void stash_get(struct cta__fiber *f, char *top)
{
	uint64_t *img = (uint64_t *)(void *)(top - (size_t)f->img_words * 8);
	if (f->ref) {
		decode(f->ref, img, f->img_words, (uintptr_t)top, f->pool->stack_sz, stash_bytes(f),
		       f->stash_len);
	} else {
		memcpy(img, stash_bytes(f), (size_t)f->img_words * 8);
	}
	stash_drop(f);
}

/* Copies the used part of o's stack (o suspended on its slot) out. The
 * sanitizer builds never share stacks (ASan's and TSan's view of a frame
 * would be another fiber's). */
static void evict(struct cta__fiber *o)
{
#if defined(CTA__FIBER_ASM)
	char *sp = o->sp, *top = frame_top(o);
	assert(sp >= top - o->pool->stack_sz && sp < top && !o->ref && !o->stash_len);
	stash_put(o, (const uint64_t *)(void *)sp, (size_t)(top - sp) / 8, top);
	o->away = 1;
#endif
	o->pool->slots[o->slot].resident = NULL;
}

/* Makes f resident on its slot; whoever is resident there must not be
 * running. */
static void load(struct cta__fiber *f)
{
	struct slot *sl = &f->pool->slots[f->slot];
	struct cta__fiber *o = sl->resident;
	if (o && !o->finished && !o->in_pool)
		evict(o);
	stash_get(f, frame_top(f));
	f->away = 0;
	sl->resident = f;
}

static struct cta__fiber *tramp_of(struct cta__fiber_pool *p);

static void tramp_main(void *arg)
{
	struct cta__fiber_pool *p = arg;
	for (;;) {
		struct cta__fiber *from = p->tramp_from, *to = p->tramp_to;
		/* from is suspended now (or finished: NULL); to takes its
		 * slot. */
		if (from)
			evict(from);
		load(to);
		before_switch(p->tramp, to, 0);
		raw_switch(p->tramp, to);
		after_switch(p->tramp);
	}
}

static void fiber_main(void *p)
{
	struct cta__fiber *f = p;
	after_switch(f);
	f->fn(f->arg);
	f->finished = 1;
	/* The stack goes back to the pool while still in use: safe, because the
	 * pool is single-threaded and nothing can start on it before the switch
	 * below leaves it for good. */
	f->in_pool = 1;
	f->next_free = f->pool->free_list;
	f->pool->free_list = f;
	struct cta__fiber *ret = f->ret;
	assert(ret && ret != f && !ret->in_pool);
	if (ret->away) {
		struct cta__fiber_pool *rp = ret->pool;
		if (rp->slots[ret->slot].resident != f) {
			load(ret);
		} else {
			/* f's frames, still running, are where ret's go: the
			 * trampoline copies (f, finished, has nothing to keep). */
			rp->tramp_from = NULL;
			rp->tramp_to = ret;
			struct cta__fiber *t = tramp_of(rp);
			before_switch(f, t, 1);
			raw_switch(f, t);
			abort();
		}
	}
	before_switch(f, ret, 1);
	raw_switch(f, ret);
	abort(); /* nothing resumes a finished fiber */
}

#if !defined(CTA__FIBER_ASM)
static void uc_entry(unsigned lo, unsigned hi)
{
	fiber_main((void *)(((uintptr_t)hi << 16 << 16) | (uintptr_t)lo));
}
#endif

/* Lays out a frame that the switch code will "restore" into a call of
 * fiber_main(f) at the top of f's stack. */
static int prepare(struct cta__fiber *f)
{
	char *top = frame_top(f);
	/* A fiber not resident on its slot gets the frame in its stash: the
	 * switch that makes it resident copies it into place. */
	uint64_t frame[20];
	char *at = resident(f) ? top : (char *)frame + sizeof(frame);
#if defined(CTA__FIBER_ASM) && defined(__x86_64__)
	/* Slots from sp: padding, r15, r14, r13, r12, rbx, rbp, return. The
	 * entry expects r12 = argument and r13 = function; after the final
	 * ret pops the last slot, rsp is 16-byte aligned at the entry, so its
	 * call gives fiber_main the ABI's alignment. */
	size_t words = 8;
	uint64_t *s = (uint64_t *)(void *)(at - 8 * 8);
	memset(s, 0, 8 * 8);
	s[3] = (uint64_t)(uintptr_t)fiber_main;
	s[4] = (uint64_t)(uintptr_t)f;
	s[7] = (uint64_t)(uintptr_t)cta__fiber_entry;
	f->sp = top - 8 * 8;
#elif defined(CTA__FIBER_ASM) && defined(__aarch64__)
	/* Slots from sp: x19..x28, x29, x30, d8..d15 (20 of 8 bytes). The
	 * entry expects x19 = argument and x20 = function; x30 is where the
	 * switch's ret lands. */
	size_t words = 20;
	uint64_t *s = (uint64_t *)(void *)(at - 20 * 8);
	memset(s, 0, 20 * 8);
	s[0] = (uint64_t)(uintptr_t)f;
	s[1] = (uint64_t)(uintptr_t)fiber_main;
	s[11] = (uint64_t)(uintptr_t)cta__fiber_entry;
	f->sp = top - 20 * 8;
#elif defined(CTA__FIBER_ASM)
#error "CTA__FIBER_ASM set for an architecture without a switch routine"
#else
	if (getcontext(&f->uc) != 0)
		return CTA_ENOMEM;
	size_t sz;
	unsigned color;
	f->uc.uc_stack.ss_sp = stack_lo(f, &sz, &color);
	f->uc.uc_stack.ss_size = sz - color;
	f->uc.uc_link = NULL;
	uintptr_t v = (uintptr_t)f;
	makecontext(&f->uc, (void (*)(void))uc_entry, 2, (unsigned)(v & 0xffffffffu),
	            (unsigned)(v >> 16 >> 16));
	(void)top;
	(void)at;
	(void)frame;
#endif
#if defined(CTA__FIBER_ASM)
	f->away = at != top;
	if (at != top)
		stash_put(f, s, words, top);
#endif
	return 0;
}

size_t cta__fiber_stack_left(const struct cta__fiber *f)
{
	const char *sp = __builtin_frame_address(0);
	if (__builtin_expect(f->slot != NO_SLOT, 1)) {
		/* A pool's stack, the usual case (every waiting lane of a CLC
		 * round trip asks): below its slot's base, the difference wraps
		 * past the stack's size. */
		size_t d = (size_t)((uintptr_t)sp - (uintptr_t)f->pool->slots[f->slot].lo);
		return d < f->pool->stack_sz ? d : 0;
	}
	size_t sz;
	unsigned color;
	const char *lo = stack_lo(f, &sz, &color);
	if (!lo || sp < lo || sp >= lo + sz)
		return 0;
	return (size_t)(sp - lo);
}

const uint64_t *cta__fiber_canary(const struct cta__fiber *f)
{
	if (f->slot != NO_SLOT)
		return f->pool->slots[f->slot].canary;
	size_t sz;
	unsigned color;
	const char *lo = stack_lo(f, &sz, &color);
	return (const uint64_t *)(const void *)lo;
}

int cta__fiber_overflowed(const struct cta__fiber *f)
{
	const uint64_t *w = cta__fiber_canary(f);
	return w && *w != CANARY;
}

int cta__fiber_pool_new(struct cta__fiber_pool **out, size_t stack_bytes)
{
	*out = NULL;
	struct cta__fiber_pool *p = calloc_lines(sizeof(*p));
	if (!p)
		return CTA_ENOMEM;
	long pg = sysconf(_SC_PAGESIZE);
	p->page = pg > 0 ? (size_t)pg : 4096;
	if (stack_bytes == 0)
		stack_bytes = CTA__FIBER_STACK_DEFAULT;
	/* One page more than asked, for the stack's colour (new_stack). */
	p->stack_sz = ((stack_bytes + p->page - 1) & ~(p->page - 1)) + p->page;
	p->host.pool = p;
	p->host.slot = NO_SLOT;
	cta__fiber_pool_share(p, 1);
	*out = p;
	return 0;
}

void cta__fiber_pool_free(struct cta__fiber_pool *p)
{
	if (!p)
		return;
	for (unsigned n = p->fslab_used; p->fslabs; n = SLAB_FIBERS) {
		struct fiber_slab *fs = p->fslabs;
		p->fslabs = fs->next;
		for (unsigned i = 0; i < n; i++)
			stash_drop(&fs->f[i]);
		free(fs);
	}
	for (unsigned i = 0; i < NREFS; i++)
		ref_drop(p, p->refs[i]);
	free(p->scratch);
	while (p->slabs) {
		struct slab *sl = p->slabs;
		p->slabs = sl->next;
#ifdef CTA__FIBER_ASAN
		/* Fibers still suspended (parked or abandoned) leave their
		 * frames' redzones poisoned: clear them before the memory can
		 * be mapped again for something else. */
		ASAN_UNPOISON_MEMORY_REGION(sl->map, sl->len);
#endif
		munmap(sl->map, sl->len);
		free(sl);
	}
	free(p->slots);
	if (p->tramp) {
		free(p->tramp);
		munmap(p->tramp_map, p->tramp_len);
	}
	free(p);
}

struct cta__fiber *cta__fiber_host(struct cta__fiber_pool *p)
{
	return &p->host;
}

/* A new fiber of p, zeroed, from the pool's slabs of fibers. */
static struct cta__fiber *fiber_new(struct cta__fiber_pool *p)
{
	if (!p->fslabs || p->fslab_used == SLAB_FIBERS) {
		struct fiber_slab *fs = aligned_alloc(64, sizeof(*fs));
		if (!fs)
			return NULL;
		fs->next = p->fslabs;
		p->fslabs = fs;
		p->fslab_used = 0;
		p->held += sizeof(*fs);
	}
	struct cta__fiber *f = &p->fslabs->f[p->fslab_used++];
	memset(f, 0, sizeof(*f));
	f->pool = p;
	return f;
}

/* A new fiber on a slot of the pool's (round robin), skipping the slot
 * of the fiber running now, whose frames are in use. */
static struct cta__fiber *shared_stack(struct cta__fiber_pool *p)
{
	const char *here = __builtin_frame_address(0);
	size_t i = p->next_share++ % p->nslots;
	if (here >= p->slots[i].lo && here < p->slots[i].lo + p->stack_sz)
		i = p->next_share++ % p->nslots;
	struct cta__fiber *f = fiber_new(p);
	if (!f)
		return NULL;
	f->slot = (uint32_t)i;
	return f;
}

void cta__fiber_pool_share(struct cta__fiber_pool *p, unsigned npools)
{
	if (cta__fiber_share_after < 0) {
		p->share = SIZE_MAX;
		return;
	}
	size_t all = (size_t)cta__fiber_share_after, floor = CTA__FIBER_SHARE_FLOOR;
	if (floor > all)
		floor = all;
	size_t each = all / (npools ? npools : 1);
	p->share = each > floor ? each : floor;
}

static struct cta__fiber *new_stack(struct cta__fiber_pool *p)
{
	if (p->nslots >= p->share && p->nslots >= 2)
		return shared_stack(p);
	if (p->nslots == p->slots_cap) {
		size_t cap = p->slots_cap ? p->slots_cap * 2 : 64;
		struct slot *n = realloc(p->slots, cap * sizeof(*n));
		if (!n)
			return NULL;
		p->slots = n;
		p->slots_cap = cap;
	}
	if (!p->slab_left) {
		struct slab *sl = calloc(1, sizeof(*sl));
		if (!sl)
			return NULL;
		sl->len = p->stack_sz * SLAB_STACKS + p->page;
		int flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
#ifdef MAP_STACK
		flags |= MAP_STACK;
#endif
		void *m = mmap(NULL, sl->len, PROT_READ | PROT_WRITE, flags, -1, 0);
		if (m == MAP_FAILED) {
			free(sl);
			return NULL;
		}
		/* One guard page below the slab turns an overflow of its lowest
		 * stack into a fault; the others carry a canary that is checked
		 * when their fiber finishes (cta__fiber_overflowed). */
		mprotect(m, p->page, PROT_NONE);
		sl->map = m;
		sl->next = p->slabs;
		p->slabs = sl;
		p->slab_next = (char *)m + p->page;
		p->slab_left = SLAB_STACKS;
	}
	struct cta__fiber *f = fiber_new(p);
	if (!f)
		return NULL;
	struct slot *sl = &p->slots[p->nslots];
	sl->lo = p->slab_next;
	/* Stacks are a power of two apart, so without a colour the tops of
	 * all stacks, where a switch saves and restores registers, would
	 * fall in the same cache sets: hundreds of waiting threads would
	 * then evict each other's lines on every switch. Each stack starts
	 * a different number of cache lines below its top, at least one. */
	sl->color = (unsigned)(p->nstacks++ % 63 + 1) * 64;
	/* The canary sits just below the stack: in the colour of the stack
	 * beneath, which its fibers never write and whose top page they
	 * touch anyway, or, for a slab's first stack, in its lowest word.
	 * A canary in each stack's own lowest page cost that page: a third
	 * of what a stack a thread waited on keeps resident. */
	sl->canary = (uint64_t *)(void *)sl->lo - (p->slab_left < SLAB_STACKS ? 1 : 0);
	sl->resident = f;
	p->slab_next += p->stack_sz;
	p->slab_left--;
	*sl->canary = CANARY;
	f->slot = (uint32_t)p->nslots++;
	return f;
}

struct cta__fiber *cta__fiber_start(struct cta__fiber_pool *p, cta__fiber_fn fn, void *arg,
                                    struct cta__fiber *ret)
{
	assert(fn && ret);
	struct cta__fiber *f = p->free_list;
	size_t sz;
	unsigned color;
	if (f) {
		p->free_list = f->next_free;
		/* (An abandoned fiber's frames were dropped with it.) */
		assert(!f->ref && !f->stash_len);
#ifdef CTA__FIBER_ASAN
		/* An abandoned run can leave poisoned redzones anywhere on the
		 * stack; the next user must start from clean shadow memory. */
		char *lo = stack_lo(f, &sz, &color);
		ASAN_UNPOISON_MEMORY_REGION(lo, sz);
#endif
	} else {
		f = new_stack(p);
		if (!f)
			return NULL;
	}
	f->fn = fn;
	f->arg = arg;
	f->ret = ret;
	f->finished = 0;
	f->in_pool = 0;
	f->next_free = NULL;
#ifdef CTA__FIBER_ASAN
	f->asan_fake = NULL;
	f->asan_bottom = stack_lo(f, &sz, &color);
	f->asan_size = sz; /* (set by the call above) */
#endif
	(void)sz;
	(void)color;
	if (prepare(f) != 0) {
		f->in_pool = 1;
		f->next_free = p->free_list;
		p->free_list = f;
		return NULL;
	}
	return f;
}

/* The trampoline of p, made on first use. */
static struct cta__fiber *tramp_of(struct cta__fiber_pool *p)
{
	if (p->tramp)
		return p->tramp;
	struct cta__fiber *t = calloc_lines(sizeof(*t));
	size_t len = 16 * p->page;
	char *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!t || m == MAP_FAILED)
		abort(); /* a few pages, once per host thread */
	mprotect(m, p->page, PROT_NONE);
	*(uint64_t *)(void *)(m + p->page) = CANARY;
	t->pool = p;
	t->slot = NO_SLOT;
	t->fn = tramp_main;
	t->arg = p;
	t->ret = &p->host;
	/* (Before prepare, which finds the stack through them.) */
	p->tramp = t;
	p->tramp_map = m;
	p->tramp_len = len;
	prepare(t);
	return t;
}

/* to is not resident: makes it so, through the trampoline when the
 * fiber leaving (from) is the one resident on to's slot. Returns 1 when
 * from left that way and has been resumed since. */
__attribute__((noinline)) static int bring_in(struct cta__fiber *from, struct cta__fiber *to)
{
	struct cta__fiber_pool *p = to->pool;
	if (p->slots[to->slot].resident != from) {
		load(to);
		return 0;
	}
	struct cta__fiber *t = tramp_of(p);
	p->tramp_from = from;
	p->tramp_to = to;
	before_switch(from, t, 0);
	raw_switch(from, t);
	after_switch(from);
	return 1;
}

void cta__fiber_switch(struct cta__fiber *from, struct cta__fiber *to)
{
	assert(from != to && !to->finished && !to->in_pool);
	if (__builtin_expect(to->away, 0) && bring_in(from, to))
		return;
	before_switch(from, to, 0);
	raw_switch(from, to);
	after_switch(from);
}

void cta__fiber_release(struct cta__fiber_pool *p, struct cta__fiber *f)
{
	if (!f || f->in_pool)
		return;
	assert(f != &p->host && f->pool == p);
	stash_drop(f);
	f->in_pool = 1;
	f->next_free = p->free_list;
	p->free_list = f;
}

void cta__fiber_park(struct cta__fiber *f)
{
	struct cta__fiber_pool *p = f->pool;
	assert(f != &p->host && !f->finished && !f->in_pool);
	if (p->nparked >= PARK_KEEP && p->nslots >= p->share) {
		/* Enough runners wait for work: the last one parked goes to
		 * the free list instead, abandoned as cta__fiber_release
		 * abandons a fiber (nothing on its stack owns anything), with
		 * the bytes it had stashed. A unit of a work-stealing kernel
		 * that ends parks every runner its threads waited on, and
		 * nothing may want them again. */
		struct cta__fiber *v = p->parked;
		p->parked = v->next_free;
		p->nparked--;
		stash_drop(v);
		v->in_pool = 1;
		v->next_free = p->free_list;
		p->free_list = v;
	}
	f->next_free = p->parked;
	p->parked = f;
	p->nparked++;
}

void cta__fiber_defer(struct cta__fiber **list, struct cta__fiber *f)
{
	assert(!f->finished && !f->in_pool);
	f->next_free = *list;
	*list = f;
}

void cta__fiber_return_all(struct cta__fiber **list)
{
	while (*list) {
		struct cta__fiber *f = *list;
		*list = f->next_free;
		cta__fiber_park(f);
	}
}

struct cta__fiber *cta__fiber_unpark(struct cta__fiber_pool *p)
{
	struct cta__fiber *f = p->parked;
	if (f) {
		p->parked = f->next_free;
		p->nparked--;
		f->next_free = NULL;
	}
	return f;
}

void cta__fiber_set_ret(struct cta__fiber *f, struct cta__fiber *ret)
{
	f->ret = ret;
}

struct cta__fiber_pool *cta__fiber_pool_of(const struct cta__fiber *f)
{
	return f->pool;
}

size_t cta__fiber_pool_stacks(const struct cta__fiber_pool *p)
{
	return p->nslots;
}

size_t cta__fiber_pool_held(const struct cta__fiber_pool *p)
{
	return p->held;
}

int cta__fiber_finished(const struct cta__fiber *f)
{
	return f->finished;
}
