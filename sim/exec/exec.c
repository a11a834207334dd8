/* Execution of kernel bodies. A unit (one block, or every block of a
 * cluster) runs its threads as a plain loop on one fiber; a thread gets a
 * stack of its own only when it must wait (barrier, mbarrier), at which
 * point the loop continues on a fresh fiber. Waits are resolved here;
 * __syncthreads divergence and barriers that can never complete are
 * reported as UB. */
#include <assert.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "base/base.h"
#include "base/upcalls.h"
#include "exec/exec.h"
#include "exec/fiber.h"
#include "exec/regions.h"

_Thread_local struct cta__lane *cta__cur __attribute__((tls_model("initial-exec")));
_Thread_local uintptr_t cta__acc __attribute__((tls_model("initial-exec")));

struct cta__lane_x *cta__exec_lane_self(void)
{
	return (struct cta__lane_x *)cta__cur;
}

struct cta__cta *cta__exec_lane_cta(struct cta__lane_x *x)
{
	return x->cta;
}

struct cta__obs *cta__exec_lane_obs_more(struct cta__lane_x *x)
{
	assert(!x->obs_more);
	x->obs_more = malloc((CTA__OBS_MAX - CTA__OBS_IN) * sizeof(*x->obs_more));
	if (!x->obs_more)
		return NULL;
	for (int i = 0; i < CTA__OBS_MAX - CTA__OBS_IN; i++) {
		x->obs_more[i].bar = NULL;
		x->obs_more[i].tseq = UINT64_MAX;
	}
	return x->obs_more;
}

/* Lanes, LANE_SLAB to a slab: each on cache lines of its own (LANE_STRIDE
 * bytes apart), the slab's link after them. */
#define LANE_SLAB   64
#define LANE_STRIDE ((sizeof(struct cta__lane_x) + 63) / 64 * 64)
struct cta__lane_slab;

static struct cta__lane_slab **slab_next(struct cta__lane_slab *sl)
{
	return (struct cta__lane_slab **)(void *)((char *)sl + LANE_SLAB * LANE_STRIDE);
}

/* A new lane of worker w, zeroed; NULL when out of memory. */
static struct cta__lane_x *lane_alloc(struct cta__worker *w)
{
	if (!w->lane_slabs || w->lane_slab_used == LANE_SLAB) {
		struct cta__lane_slab *sl =
		    cta__exec_calloc_lines(1, LANE_SLAB * LANE_STRIDE + sizeof(void *));
		if (!sl)
			return NULL;
		*slab_next(sl) = w->lane_slabs;
		w->lane_slabs = sl;
		w->lane_slab_used = 0;
	}
	return (struct cta__lane_x *)(void *)((char *)w->lane_slabs +
	                                      w->lane_slab_used++ * LANE_STRIDE);
}

/* A lane's spinning state, SPIN_SLAB to a slab of the host thread's that
 * first needs one for it; kept with the lane, freed with the sim. */
#define SPIN_SLAB 64
struct cta__spin_slab {
	struct cta__spin_slab *next;
	struct cta__lane_spin s[SPIN_SLAB];
};

static struct cta__lane_spin *spin_alloc(struct cta__worker *w)
{
	if (!w->spin_slabs || w->spin_slab_used == SPIN_SLAB) {
		struct cta__spin_slab *sl = calloc(1, sizeof(*sl));
		if (!sl)
			abort(); /* 4 KiB, once per 64 lanes that poll */
		sl->next = w->spin_slabs;
		w->spin_slabs = sl;
		w->spin_slab_used = 0;
	}
	return &w->spin_slabs->s[w->spin_slab_used++];
}

void cta__exec_lanes_free(struct cta__worker *w)
{
	for (struct cta__lane_x *x = w->free_lanes; x; x = x->next_all)
		free(x->obs_more);
	w->free_lanes = NULL;
	while (w->spin_slabs) {
		struct cta__spin_slab *sl = w->spin_slabs;
		w->spin_slabs = sl->next;
		free(sl);
	}
	while (w->lane_slabs) {
		struct cta__lane_slab *sl = w->lane_slabs;
		w->lane_slabs = *slab_next(sl);
		free(sl);
	}
}

/* Block index of CTA r of unit (cluster) u: clusters are numbered x
 * fastest over the grid of clusters, CTAs x fastest inside a cluster. */
static uint3 unit_cta_bid(const struct cta__kernel *k, uint64_t unit, unsigned r)
{
	const unsigned *c = k->l.cluster;
	uint64_t cgx = k->l.grid[0] / c[0], cgy = k->l.grid[1] / c[1];
	uint3 b;
	b.x = (unsigned)((unit % cgx) * c[0] + r % c[0]);
	b.y = (unsigned)(((unit / cgx) % cgy) * c[1] + (r / c[0]) % c[1]);
	b.z = (unsigned)((unit / (cgx * cgy)) * c[2] + r / (c[0] * c[1]));
	return b;
}

uint64_t cta__exec_unit_logical(const struct cta__kernel *k, uint64_t unit, unsigned r);
uint64_t cta__exec_unit_logical(const struct cta__kernel *k, uint64_t unit, unsigned r)
{
	if (k->csize == 1)
		return unit;
	return cta__base_logical_of_bid(k, unit_cta_bid(k, unit, r));
}

/* Clears memory through the C library: gcc turns a fixed-size memset of a
 * few hundred bytes into `rep stos`, whose start-up cost dominated the
 * creation of a block; libc's vector stores are several times faster. */
__attribute__((noinline)) static void zero(void *p, size_t n)
{
	memset(p, 0, n);
}

/* Clears a unit's or a CTA's header, a few hundred bytes known at compile
 * time, with inline 16-byte stores: about 17 instructions where a call to
 * zero() costs about 29 (callgrind). The asm keeps gcc from turning the
 * loop back into a memset. */
static inline void zero_header(void *p, size_t n)
{
#if defined(__SSE2__)
	unsigned char *b = p;
	size_t i = 0;
	for (; i + 16 <= n; i += 16) {
		_mm_storeu_si128((__m128i *)(void *)(b + i), _mm_setzero_si128());
		__asm__("" ::: "memory");
	}
	if (n - i >= 8) {
		const uint64_t z = 0;
		memcpy(b + i, &z, 8);
		i += 8;
	}
	for (; i < n; i++)
		b[i] = 0;
#else
	memset(p, 0, n);
#endif
}

/* Units, their CTAs and shared memory run on different host threads side
 * by side: each allocation gets whole cache lines, so that one thread's
 * writes (shared memory, barrier counts) never invalidate another's. */
void *cta__exec_calloc_lines(size_t n, size_t size)
{
	size_t bytes = (n * size + 63) / 64 * 64;
	void *p = aligned_alloc(64, bytes);
	if (p)
		memset(p, 0, bytes);
	return p;
}

/* The duration model's index of a block of k just placed on SM sm (its
 * room taken): the blocks resident, itself included, or with
 * spin_by_threads 1 + the eighths of the SM's threads taken before it
 * (2: the eighths begun). */
static unsigned spin_index_of(const struct cta_sim *s, unsigned blocks, unsigned before)
{
	if (!s->dev.spin_by_threads || !s->dev.max_threads_per_sm)
		return blocks;
	uint64_t up = s->dev.spin_by_threads == 2 ? s->dev.max_threads_per_sm - 1 : 0;
	return 1 + (unsigned)(((uint64_t)before * CTA_DEVICE_SPIN_STEPS + up) /
	                      s->dev.max_threads_per_sm);
}

/* The issue time of one call of a block of k with `warps` warps running
 * on its SM, its own included: the instructions its launch declares
 * beside each call (issue_ops), which each warp sharing its scheduler (a
 * quarter of the SM's, rounded up) issues in turn, spin_issue_ps each. */
static uint32_t issue_ns(const struct cta_sim *s, const struct cta__kernel *k, unsigned warps)
{
	if (!k->l.issue_ops || !s->dev.spin_issue_ps)
		return 0;
	uint64_t ns = (uint64_t)k->l.issue_ops * ((warps + 3) / 4) * s->dev.spin_issue_ps / 1000;
	return ns < UINT32_MAX / 2 ? (uint32_t)ns : UINT32_MAX / 2;
}

/* The per-call add of such a block at the duration model's index res:
 * the model's spin_add there and the issue time. */
static uint32_t call_add(const struct cta_sim *s, const struct cta__kernel *k, unsigned res,
                         unsigned warps)
{
	uint64_t add = (uint64_t)s->spin_add[res] + issue_ns(s, k, warps);
	return add < UINT32_MAX ? (uint32_t)add : UINT32_MAX;
}

/* Threads of the blocks running on m before one of k placed there (its
 * room taken): blocks the issue gate holds do not count. */
static unsigned running_before(const struct cta__sm *m, const struct cta__kernel *k)
{
	unsigned other = m->threads > k->threads ? m->threads - k->threads : 0;
	return other > m->gate_threads ? other - m->gate_threads : 0;
}

static unsigned spin_index(const struct cta_sim *s, const struct cta__kernel *k, unsigned sm)
{
	const struct cta__sm *m = &s->sms[sm];
	return spin_index_of(s, m->blocks, running_before(m, k));
}

/* The register file's gate (spin_regs_free): whether a block of k waits
 * with `running` warps of other blocks running on its SM. The SM's warps,
 * its own with the others, are dealt evenly over the four sub-partitions,
 * so the fullest holds a quarter of them rounded up: a 2-warp block that
 * finds 10 warps running fills no quarter (3 of 4 warps each), one that
 * finds 12 does (as admission pools them: regs_usable). A block alone on
 * its SM never waits, nor does one of its kernel's first wave (its blocks
 * come together). */
int cta__exec_regs_waits(const struct cta_sim *s, const struct cta__kernel *k, unsigned running)
{
	if (!s->dev.spin_regs_free || !k->part_warps || !k->units_done || !running)
		return 0;
	return (running + k->warps + 3) / 4 + s->dev.spin_regs_free > k->part_warps;
}

/* The register file's late entry (spin_regs_late_ns): whether a later
 * block of k that finds `running` warps of other blocks running on its
 * SM would leave at most spin_regs_free warps' registers free in its
 * fullest sub-partition (counted as cta__exec_regs_waits counts them):
 * such a block is held too, at most spin_regs_late_ns where the gate
 * alone would let it go. */
int cta__exec_regs_late(const struct cta_sim *s, const struct cta__kernel *k, unsigned running)
{
	if (!s->dev.spin_regs_late_ns || !k->part_warps || !k->units_done || !running)
		return 0;
	return (running + k->warps + 3) / 4 + s->dev.spin_regs_free >= k->part_warps;
}

int cta__exec_part_of(const struct cta_sim *s, unsigned sm, const struct cta__kernel *k,
                      uint64_t index, unsigned want[4])
{
	const struct cta__sm *m = &s->sms[sm];
	if (!s->dev.spin_regs_order || !k->part_warps || k->csize != 1 || !(k->warps % 4))
		return 0;
	for (unsigned j = 0; j < m->npart; j++) {
		if (m->part[j].index != index || m->part[j].kid != k->id)
			continue;
		want[0] = want[1] = want[2] = want[3] = 0;
		for (unsigned i = 0; i < k->warps; i++)
			want[(m->part[j].base + i) % 4]++;
		return 1;
	}
	return 0;
}

unsigned cta__exec_part_fullest(const struct cta_sim *s, unsigned sm, const unsigned want[4],
                                int own_held, const unsigned *lsub)
{
	const struct cta__sm *m = &s->sms[sm];
	unsigned most = 0;
	for (unsigned q = 0; q < 4; q++) {
		if (!want[q])
			continue;
		/* Running there: resident less held less the leaving block's;
		 * the block's own warps once, held or not. */
		unsigned run = m->part_w[q] - m->part_g[q] - (lsub ? lsub[q] : 0);
		run += own_held ? want[q] : 0;
		most = run > most ? run : most;
	}
	return most;
}

/* Whether a later block of k whose fullest sub-partition would hold
 * `fullest` warps with its own waits at the gate (late: is held by the
 * late entry). */
int cta__exec_regs_fills(const struct cta_sim *s, const struct cta__kernel *k, unsigned fullest,
                         int late)
{
	if (!k->part_warps || !k->units_done)
		return 0;
	if (late)
		return s->dev.spin_regs_late_ns && fullest + s->dev.spin_regs_free >= k->part_warps;
	return s->dev.spin_regs_free && fullest + s->dev.spin_regs_free > k->part_warps;
}

/* The register file's draw for block `index` of k, in [0, 10^6): from
 * the seed, the kernel, the index and `salt` alone, so the same at any
 * thread count and in any engine order. */
unsigned cta__exec_regs_draw(const struct cta_sim *s, const struct cta__kernel *k, uint64_t index,
                             unsigned salt)
{
	uint64_t z = s->o.seed * 0x9e3779b97f4a7c15ull ^ ((uint64_t)k->id << 48) ^
	             ((uint64_t)salt << 40) ^ index;
	z += 0x9e3779b97f4a7c15ull;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	z ^= z >> 31;
	return (unsigned)(z % 1000000);
}

/* The gate lets block `index` of k by (spin_regs_pass_ppm). */
static int regs_pass(const struct cta_sim *s, const struct cta__kernel *k, uint64_t index)
{
	/* Its SM holds at most spin_regs_pass_blocks such blocks (a
	 * sub-partition's warps, four of them, over the block's). */
	return s->dev.spin_regs_pass_ppm &&
	       4 * k->part_warps < (s->dev.spin_regs_pass_blocks + 1) * k->warps &&
	       cta__exec_regs_draw(s, k, index, 0) < s->dev.spin_regs_pass_ppm;
}

/* The issue gate (spin_gate_threads): a block of one CTA that finds more
 * than that many threads running on its SM, or blocks already waiting
 * there, waits (resident) until the engine lets it go; the register
 * file's gate holds it the same way. Blocks that may wait for one another
 * (cooperative launches, kernels that spun: any_spin) are never held, so
 * the gate cannot deadlock them, nor are the blocks of a kernel that
 * steals work (steals: its blocks end only when no work is left). A
 * cluster is held by its first CTA's SM where the model has the late
 * first requests of a stealing kernel's first wave (clc_late_ppm): on an
 * H100 clustered blocks behind the gate were as late as single ones
 * (docs/FIDELITY.md). */
int cta__exec_gate_holds(const struct cta_sim *s, const struct cta__kernel *k, unsigned sm,
                         uint64_t index)
{
	if ((!s->dev.spin_gate_threads && !s->dev.spin_regs_free) ||
	    (k->csize != 1 && !s->dev.clc_late_ppm) || k->l.cooperative || k->steals ||
	    __atomic_load_n(&s->any_spin, __ATOMIC_RELAXED))
		return 0;
	const struct cta__sm *m = &s->sms[sm];
	if (m->gate_head || m->held_head)
		return 1;
	if (s->dev.spin_gate_threads && running_before(m, k) > s->dev.spin_gate_threads)
		return 1;
	if (!k->part_warps)
		return 0;
	unsigned other = m->warps > k->warps ? m->warps - k->warps : 0;
	other = other > m->gate_warps ? other - m->gate_warps : 0;
	unsigned want[4];
	/* A block the gate would hold that the draw lets by begins at once
	 * (not held by the late entry either). */
	if (other && cta__exec_part_of(s, sm, k, index, want)) {
		unsigned f = cta__exec_part_fullest(s, sm, want, 0, NULL);
		if (cta__exec_regs_fills(s, k, f, 0))
			return !regs_pass(s, k, index);
		return cta__exec_regs_fills(s, k, f, 1);
	}
	if (cta__exec_regs_waits(s, k, other))
		return !regs_pass(s, k, index);
	return cta__exec_regs_late(s, k, other);
}

struct cta__held *cta__exec_held_new(struct cta_sim *s)
{
	struct cta__held *h = s->free_held;
	if (__builtin_expect(!h, 0)) {
		/* A slab: its link to the previous slab, then the records. */
		enum { PER_SLAB = 255 };
		struct cta__held *v = malloc((PER_SLAB + 1) * sizeof(*v));
		if (!v)
			return NULL;
		v[0].next = s->held_slabs;
		s->held_slabs = v;
		for (size_t i = PER_SLAB; i > 1; i--) {
			v[i].next = h;
			h = &v[i];
		}
		s->free_held = h;
		return &v[1];
	}
	s->free_held = h->next;
	return h;
}

void cta__exec_held_free(struct cta_sim *s, struct cta__held *h)
{
	h->next = s->free_held;
	s->free_held = h;
}

void cta__exec_part_gate(struct cta_sim *s, unsigned sm, const struct cta__kernel *k,
                         uint64_t index, int held)
{
	unsigned want[4];
	if (!cta__exec_part_of(s, sm, k, index, want))
		return;
	for (unsigned q = 0; q < 4; q++)
		s->sms[sm].part_g[q] =
		    (unsigned char)(s->sms[sm].part_g[q] + (held ? (int)want[q] : -(int)want[q]));
}

void cta__exec_gate_hold_placed(struct cta_sim *s, struct cta__held *h)
{
	struct cta__sm *m = &s->sms[h->p.sm];
	h->state = 1;
	h->rel_t = 0;
	h->next = NULL;
	h->ins = 0;
	if (m->held_tail)
		m->held_tail->next = h;
	else
		m->held_head = h;
	m->held_tail = h;
	m->gate_threads += h->p.k->threads;
	m->gate_warps += h->p.k->warps;
	cta__exec_part_gate(s, h->p.sm, h->p.k, h->p.index, 1);
	s->gate_waiting++;
}

void cta__exec_gate_hold(struct cta_sim *s, struct cta__unit *u)
{
	struct cta__sm *m = &s->sms[u->ctas[0].sm];
	u->gate = 1;
	u->gate_next = NULL;
	if (m->gate_tail)
		m->gate_tail->gate_next = u;
	else
		m->gate_head = u;
	m->gate_tail = u;
	m->gate_threads += u->k->threads;
	m->gate_warps += u->k->warps;
	cta__exec_part_gate(s, u->ctas[0].sm, u->k, u->ctas[0].logical, 1);
	s->gate_waiting++;
}

/* When a block let go at t begins its calls. Its entry (the per-block
 * add) was done while it waited (on an H100, a 20 us block the issue gate
 * let go ended 20.3 to 20.7 us later, one that ran at once lasted 20.9 to
 * 21.1 us), except where the gates held a block of a register-limited
 * kernel whose warps take the sub-partitions by placement order
 * (spin_regs_order, blocks not of 4k warps): such a block waits before
 * its entry and does it once let go (docs/FIDELITY.md, *The entry after
 * the wait*). */
static uint64_t open_entry(const struct cta_sim *s, const struct cta__kernel *k, uint64_t t)
{
	return s->dev.spin_regs_order && k->part_warps && k->csize == 1 && k->warps % 4
	           ? t + s->dev.spin_block_add_ns
	           : t;
}

void cta__exec_gate_open(struct cta_sim *s, struct cta__unit *u, unsigned before, unsigned bwarps,
                         uint64_t t)
{
	t = open_entry(s, u->k, t);
	u->cursor.t0 = t > u->cursor.t0 ? t : u->cursor.t0;
	for (unsigned r = 0; r < u->nctas; r++)
		u->ctas[r].end_t = t > u->start_t ? t : u->start_t;
	if (s->has_spin_scale) {
		unsigned res = spin_index_of(s, s->sms[u->ctas[0].sm].blocks, before);
		res = res < CTA_DEVICE_MAX_RESIDENT ? res : CTA_DEVICE_MAX_RESIDENT;
		u->cursor.spin = s->spin_ppm[res];
		u->cursor.add = call_add(s, u->k, res, bwarps + u->k->warps);
	}
}

void cta__exec_gate_open_placed(struct cta_sim *s, struct cta__held *h, unsigned before,
                                unsigned bwarps, uint64_t t)
{
	/* As cta__exec_gate_open, applied when its unit is made. */
	h->rel_t = open_entry(s, h->p.k, t);
	if (s->has_spin_scale) {
		unsigned res = spin_index_of(s, s->sms[h->p.sm].blocks, before);
		res = res < CTA_DEVICE_MAX_RESIDENT ? res : CTA_DEVICE_MAX_RESIDENT;
		h->p.spin = s->spin_ppm[res];
		h->p.add = call_add(s, h->p.k, res, bwarps + h->p.k->warps);
	}
}

void cta__exec_unit_spin(const struct cta_sim *s, const struct cta__kernel *k, const unsigned *sms,
                         uint32_t *spin, uint32_t *add, uint32_t *first)
{
	*spin = *add = *first = 0;
	if (!s->has_spin_scale)
		return;
	/* The duration model's index and the warps sharing a scheduler: of
	 * the unit's most loaded SM. */
	unsigned res = 0, warps = 0;
	for (unsigned r = 0; r < k->csize; r++) {
		const struct cta__sm *m = &s->sms[sms[r]];
		unsigned ri = spin_index(s, k, sms[r]);
		unsigned wi = m->warps > m->gate_warps ? m->warps - m->gate_warps : 0;
		res = ri > res ? ri : res;
		warps = wi > warps ? wi : warps;
	}
	res = res < CTA_DEVICE_MAX_RESIDENT ? res : CTA_DEVICE_MAX_RESIDENT;
	*spin = s->spin_ppm[res];
	*add = call_add(s, k, res, warps);
	*first = issue_ns(s, k, warps);
}

struct cta__unit *cta__exec_unit_new(struct cta_sim *s, struct cta__kernel *k, uint64_t index,
                                     const unsigned *sms, uint64_t t)
{
	uint32_t spin, add, first;
	cta__exec_unit_spin(s, k, sms, &spin, &add, &first);
	return cta__exec_unit_make(s, k, index, sms, t, spin, add, first);
}

struct cta__unit *cta__exec_unit_make(struct cta_sim *s, struct cta__kernel *k, uint64_t index,
                                      const unsigned *sms, uint64_t t, uint32_t spin, uint32_t add,
                                      uint32_t first)
{
	struct cta__unit *u = s->free_units;
	if (u) {
		s->free_units = u->next_free;
	} else {
		if (s->nunits_made == s->units_cap) {
			size_t cap = s->units_cap ? s->units_cap * 2 : 256;
			struct cta__unit **n = realloc(s->units, cap * sizeof(*n));
			if (!n)
				return NULL;
			s->units = n;
			s->units_cap = cap;
		}
		u = cta__exec_calloc_lines(1, sizeof(*u));
		if (!u)
			return NULL;
		s->units[s->nunits_made++] = u;
	}
	struct cta__cta *ctas = u->ctas;
	unsigned cap = u->cap_ctas;
	size_t smem_cap = u->cap_smem;
	size_t need = cta__base_smem_need(k);
	if (cap < k->csize || smem_cap < need) {
		for (unsigned i = 0; i < cap; i++)
			cta__exec_cta_release(&ctas[i]);
		free(ctas);
		cap = k->csize > cap ? k->csize : cap;
		smem_cap = need > smem_cap ? need : smem_cap;
		ctas = cta__exec_calloc_lines(cap, sizeof(*ctas));
		for (unsigned i = 0; ctas && i < cap; i++) {
			/* Zeroed when a block first asks for it (smem_handed_out),
			 * as an arena an earlier block wrote: the pages of one no
			 * block asks for are never touched (ub_forward_progress
			 * declares 120 KB a block to stay alone on its SM). */
			ctas[i].smem = aligned_alloc(64, (smem_cap + 63) / 64 * 64);
			ctas[i].smem_dirty = (unsigned)smem_cap | CTA__SMEM_STALE;
			if (!ctas[i].smem) {
				for (unsigned j = 0; j < i; j++)
					free(ctas[j].smem);
				free(ctas);
				ctas = NULL;
			}
		}
		if (!ctas) {
			/* Back to the free list, empty (s->units keeps it). */
			u->ctas = NULL;
			u->cap_ctas = 0;
			u->cap_smem = 0;
			u->next_free = s->free_units;
			s->free_units = u;
			return NULL;
		}
	} else {
		for (unsigned i = 0; i < k->csize; i++) {
			unsigned char *m = ctas[i].smem;
			/* The arena is cleared when the block first asks for it
			 * (smem_handed_out), on the host thread that runs the
			 * block: here, on the engine's thread, it would be
			 * serial work on memory another core wrote last. */
			unsigned dirty = ctas[i].smem_dirty;
			const size_t cold = offsetof(struct cta__cta, observed_failure_t),
			             end = offsetof(struct cta__cta, rslots);
			int cold_dirty = ctas[i].cold_dirty;
			zero_header(&ctas[i], cold);
			if (cold_dirty)
				zero_header((char *)&ctas[i] + cold, end - cold);
			ctas[i].smem = m;
			ctas[i].smem_dirty = dirty ? dirty | CTA__SMEM_STALE : 0;
		}
	}
	/* Clear the per-unit state; the buffers after it are kept, and the
	 * outbox, emptied by the engine at every commit, is emptied again in
	 * case the unit was freed without one (its counts fill its first
	 * line). */
	zero_header(u, offsetof(struct cta__unit, ret));
	struct cta__outbox *o = &u->out;
	if (o->ubtotal)
		memset(o->ubcount, 0, sizeof(o->ubcount));
	zero_header(o, offsetof(struct cta__outbox, recs));
	u->ctas = ctas;
	u->cap_ctas = cap;
	u->cap_smem = smem_cap;
	u->live = 1;
	s->nunits_live++;
	u->k = k;
	u->sim = s;
	u->index = index;
	u->start_t = t;
	u->nctas = k->csize;
	/* Everything of the cursor but its start time is the kernel's; the
	 * duration model's per-block cost delays the block's first
	 * instruction. */
	u->cursor = k->cursor0;
	u->cursor.t0 = t + s->dev.spin_block_add_ns -
	               (first < s->dev.spin_block_add_ns ? first : s->dev.spin_block_add_ns);
	u->cursor.spin = spin;
	u->cursor.add = add;
	if (k->csize == 1) {
		/* A unit of one block: its index is the block's. */
		struct cta__cta *c = &ctas[0];
		c->bid = cta__base_bid_of_logical(k, index);
		c->logical = index;
		c->steal_current = index;
		c->sm = sms[0];
		c->nthreads = k->cursor0.left;
		c->end_t = t;
		c->smem_top = k->l.smem_dynamic;

	} else {
		uint64_t per = k->cursor0.left / k->csize;
		for (unsigned r = 0; r < k->csize; r++) {
			struct cta__cta *c = &ctas[r];
			c->bid = unit_cta_bid(k, index, r);
			c->logical = cta__base_logical_of_bid(k, c->bid);
			c->steal_current = c->logical;
			c->sm = sms[r];
			c->nthreads = per;
			c->end_t = t;
			c->smem_top = k->l.smem_dynamic;
		}
	}
	if (s->san)
		cta__san_unit_start(s, u);
	return u;
}

void cta__exec_unit_retarget(struct cta_sim *s, struct cta__unit *u, uint64_t index, unsigned sm,
                             uint64_t t, uint32_t spin, uint32_t add)
{
	const struct cta__kernel *k = u->k;
	struct cta__cta *c = &u->ctas[0];
	/* As cta__exec_unit_make clears a CTA and the outbox. A block that
	 * crossed no barrier, placed no shared variable and made no CLC
	 * object left only the fields written below. */
	unsigned dirty = c->smem_dirty;
	if (__builtin_expect(cta__exec_cta_dirty(c), 0)) {
		unsigned char *m = c->smem;
		const size_t cold = offsetof(struct cta__cta, observed_failure_t),
		             end = offsetof(struct cta__cta, rslots);
		int cold_dirty = c->cold_dirty;
		zero_header(c, cold);
		if (cold_dirty)
			zero_header((char *)c + cold, end - cold);
		c->smem = m;
	} else {
		c->exited = 0;
		c->done = 0;
	}
	c->smem_dirty = dirty ? dirty | CTA__SMEM_STALE : 0;
	struct cta__outbox *o = &u->out;
	if (o->ubtotal)
		memset(o->ubcount, 0, sizeof(o->ubcount));
	zero_header(o, offsetof(struct cta__outbox, recs));
	o->lanes = 1; /* its lane, as lane_bind counts it */
	u->index = index;
	u->start_t = t;
	/* k->cursor0 but for its start: the rest of it (shape, CTAs, form)
	 * is already the unit's, and no run was handed back (skip_move). */
	u->cursor.tid = k->cursor0.tid;
	u->cursor.cta = 0;
	u->cursor.left = k->cursor0.left;
	u->cursor.t0 = t;
	u->cursor.spin = spin;
	u->cursor.add = add;
	c->bid = cta__base_bid_of_logical(k, index);
	c->logical = index;
	c->steal_current = index;
	c->sm = sm;
	c->nthreads = k->cursor0.left;
	c->end_t = t;
	c->smem_top = k->l.smem_dynamic;
	/* A new block to the sanitizer, as cta__exec_unit_make's: its arena
	 * marked again where initcheck opened the last block's writes. */
	if (s->san)
		cta__san_unit_start(s, u);
}

void cta__exec_unit_template(struct cta_sim *s, struct cta__kernel *k)
{
	struct cta__cursor *cur = &k->cursor0;
	memset(cur, 0, sizeof(*cur));
	uint64_t per = s->o.timing_only ? 1 : k->threads;
	if (s->o.timing_only) {
		cur->idim.x = cur->idim.y = cur->idim.z = 1;
	} else {
		cur->idim.x = k->l.block[0];
		cur->idim.y = k->l.block[1];
		cur->idim.z = k->l.block[2];
	}
	/* One thread a block in timing-only mode: nothing to vectorise. */
	cur->exact = cta__base_exact_threads || s->o.timing_only;
	cur->ctas = k->csize;
	cur->left = per * k->csize;
	k->kc = cta__regions_for(s, k);
	k->never_waits = cta__regions_never_waits(k);
}

void cta__exec_unit_free(struct cta_sim *s, struct cta__unit *u)
{
	s->nunits_live -= u->live != 0;
	u->live = 0;
	struct cta__lane_x *x = u->all;
	if (x && !u->lanes_mixed && !u->lanes_abandoned && !u->live_lanes) {
		/* Every lane finished (their fibers went on to other lanes) and
		 * one worker made them all: hand the whole list back at once.
		 * Walking it would read each lane, a cache line the worker's
		 * core wrote last: with many host threads that walk was a large
		 * share of the engine's serial time. */
		u->all_tail->next_all = s->workers[u->lane_worker].free_lanes;
		s->workers[u->lane_worker].free_lanes = x;
		x = NULL;
	}
	while (x) {
		struct cta__lane_x *n = x->next_all;
		/* Only abandoned lanes still own their stack: a finished lane's
		 * runner fiber went on to other lanes. */
		if (x->abandoned && x->fiber)
			cta__fiber_release(cta__fiber_pool_of(x->fiber), x->fiber);
		x->fiber = NULL;
		if (x->kc_park)
			cta__regions_park_free(x);
		/* Back to the worker that made it (the pool is idle while units
		 * are freed): a barrier-heavy block needs a lane per thread, and
		 * fresh memory on every block would cost more than the block. */
		x->next_all = s->workers[x->worker].free_lanes;
		s->workers[x->worker].free_lanes = x;
		x = n;
	}
	/* Only CLC calls give a CTA mbarriers, requests or fe_bits. */
	for (unsigned i = 0; u->clc_objs && i < u->nctas; i++) {
		struct cta__cta *c = &u->ctas[i];
		/* Kept for the next block on this memory: no malloc and free
		 * per block, and lines that stay where they were. */
		while (c->mbars) {
			struct cta__mbar *b = c->mbars;
			c->mbars = b->next;
			b->next = c->spare_mbars;
			c->spare_mbars = b;
		}
		while (c->reqs) {
			struct cta__request *r = c->reqs;
			c->reqs = r->next;
			r->next = c->spare_reqs;
			c->spare_reqs = r;
		}
		if (c->fe_bits) {
			free(c->fe_bits); /* still set when the CTA never ended */
			c->fe_bits = NULL;
		}
	}
	u->all = NULL;
	u->next_free = s->free_units;
	s->free_units = u;
}

void cta__exec_cta_release(struct cta__cta *c)
{
	free(c->smem);
	while (c->spare_mbars) {
		struct cta__mbar *b = c->spare_mbars;
		c->spare_mbars = b->next;
		free(b);
	}
	while (c->spare_reqs) {
		struct cta__request *r = c->spare_reqs;
		c->spare_reqs = r->next;
		free(r);
	}
}

static void enter_cta(struct cta__lane *l, unsigned rank)
{
	struct cta__lane_x *x = (struct cta__lane_x *)l;
	struct cta__unit *u = l->unit;
	struct cta__cta *c = &u->ctas[rank];
	l->cta_rank = rank;
	x->cta = c;
	l->bid = c->bid;
	l->smem = c->smem;
	l->end_slot = &c->end_t;
	l->exited = &c->exited;
	l->steal_depth = 0;
	x->bar_gen = c->bar_gen;
}

void cta__lane_enter_cta(struct cta__lane *l)
{
	enter_cta(l, l->cursor->cta);
}

int cta__claim_returned(struct cta__lane *l)
{
	struct cta__unit *u = l->unit;
	struct cta__run *r = &u->ret[--l->cursor->nret];
	if (r->cta != l->cta_rank || !l->smem)
		enter_cta(l, r->cta);
	l->tid = r->tid;
	l->run_x0 = r->tid.x;
	l->row_end = r->end;
	l->poll_x = UINT32_MAX;
	return 1;
}

/* The lane must wait in the middle of its run: the threads after it go
 * back to the unit, for a fresh lane to run while this one waits. */
/* Counts the threads of the lane's run that finished before the current
 * one (the run loop counts them only when the run ends). */
static void flush_progress(struct cta__lane *l)
{
	/* (Tested first: the count's line is not otherwise touched while a
	 * block of one thread waits, which is every timing-only block.) */
	if (l->tid.x != l->run_x0) {
		*l->exited += l->tid.x - l->run_x0;
		l->run_x0 = l->tid.x;
	}
}

/* Hands the rest of the waiting lane's run back to the cursor, its
 * progress already flushed. */
static inline void hand_back_rest(struct cta__lane_x *x)
{
	struct cta__lane *l = &x->l;
	if (l->tid.x + 1 >= l->row_end)
		return;
	struct cta__unit *u = l->unit;
	if (l->cursor->nret == u->ret_cap) {
		unsigned cap = u->ret_cap ? u->ret_cap * 2 : 16;
		struct cta__run *n = realloc(u->ret, cap * sizeof(*n));
		if (!n)
			abort(); /* a few bytes per waiting lane; nothing sensible without them */
		u->ret = n;
		u->ret_cap = cap;
	}
	struct cta__run *r = &u->ret[l->cursor->nret++];
	r->cta = l->cta_rank;
	r->tid = l->tid;
	r->tid.x++;
	r->end = l->row_end;
	l->row_end = l->tid.x + 1;
}

static void hand_back_run(struct cta__lane_x *x)
{
	flush_progress(&x->l);
	hand_back_rest(x);
}

/* Runner fibers. A runner runs lanes one after another and never returns:
 * whoever switches to it has set cta__cur to the lane it is to run. When
 * its lane's threads are all done it hands itself on (lane_leave): to the
 * next new lane, without a switch, or to its pool's parked list. A lane
 * therefore costs a fiber start only when no runner is parked, and a wait
 * one switch, straight to the next lane. */
static void lane_leave(struct cta__lane_x *x);

static void lane_leave_slow(struct cta__lane_x *x);

static void runner_main(void *arg)
{
	(void)arg;
	for (;;) {
		struct cta__lane_x *x = (struct cta__lane_x *)cta__cur;
		const struct cta__kernel *k = x->l.unit->k;
		/* A body the kernel compiler made into regions runs its block
		 * as loops over threads, without a lane per waiting thread. */
		int kc = k->kc ? cta__regions_threads(x) : 0;
		if (kc == CTA__KC_PARKED) {
			/* The block waits as a whole, its state on the heap:
			 * this runner goes on as a done lane's does, and the lane
			 * gets one again once woken (lane_runner). */
			if (x->l.comm)
				x->l.unit->out.comm = 1;
			lane_leave_slow(x);
			continue;
		}
		if (!kc)
			k->l.kernel->threads(k->args);
		x->state = L_DONE;
		lane_leave(x);
	}
}

/* A woken lane whose block waited without a fiber (kc_park) gets a runner,
 * which resumes the block (runner_main). */
static inline void lane_runner(struct cta__lane_x *x)
{
	if (__builtin_expect(x->fiber != NULL, 1))
		return;
	struct cta__worker *w = cta__base_seg_worker;
	x->fiber = cta__fiber_unpark(w->fpool);
	if (!x->fiber)
		x->fiber = cta__fiber_start(w->fpool, runner_main, NULL, x->l.unit->host);
	if (!x->fiber)
		abort(); /* as for any fiber that cannot be made mid-run */
}

/* What a lane taken from the spare list (or moving on to another unit)
 * reads before writing: cleared. */
static inline void lane_clear(struct cta__lane_x *x)
{
	x->l.steal_depth = 0;
	x->l.active = 0;
	x->l.smem = NULL;
	x->abandoned = 0;
	x->bar_gen = 0;
	x->kc_park = NULL;
	if (x->obs_used) {
		x->obs_used = 0;
		for (unsigned i = 0; i < CTA__OBS_MAX; i++) {
			struct cta__obs *o = cta__base_lane_obs(x, i);
			if (!o)
				break;
			o->bar = NULL;
			o->tseq = UINT64_MAX;
		}
	}
}

/* Makes x a lane of unit u (its dimensions are already u's kernel's). */
static inline void lane_bind(struct cta__unit *u, struct cta__lane_x *x)
{
	x->l.cursor = &u->cursor;
	x->l.unit = u;
	x->l.cta_rank = UINT32_MAX;
	x->cta = NULL;
	if (!u->all) {
		u->all_tail = x;
		u->lane_worker = x->worker;
	} else if (x->worker != u->lane_worker) {
		u->lanes_mixed = 1;
	}
	x->next_all = u->all;
	u->all = x;
	u->live_lanes++;
	u->out.lanes++;
}

/* A lane for unit u (not yet bound to it), from the host thread's spare
 * list or new; NULL when out of memory. */
static struct cta__lane_x *lane_take(struct cta_sim *s, struct cta__unit *u)
{
	struct cta__worker *w = cta__base_seg_worker;
	struct cta__lane_x *x = w->free_lanes;
	if (x) {
		w->free_lanes = x->next_all;
		lane_clear(x);
	} else {
		x = lane_alloc(w);
		if (!x)
			return NULL;
		for (int i = 0; i < CTA__OBS_IN; i++)
			x->obs[i].tseq = UINT64_MAX;
	}
	const struct cta__kernel *k = u->k;
	if (x->dims_k != k) {
		/* A lane mostly runs the kernel it ran last: its dimensions
		 * are already there (nothing else writes them). */
		x->dims_k = k;
		x->l.bdim.x = k->l.block[0];
		x->l.bdim.y = k->l.block[1];
		x->l.bdim.z = k->l.block[2];
		x->l.gdim.x = k->l.grid[0];
		x->l.gdim.y = k->l.grid[1];
		x->l.gdim.z = k->l.grid[2];
		x->l.cdim.x = k->l.cluster[0];
		x->l.cdim.y = k->l.cluster[1];
		x->l.cdim.z = k->l.cluster[2];
	}
	x->worker = (unsigned)(w - s->workers);
	return x;
}

/* A new lane for the unit's remaining threads, run by `spare` when given
 * (the calling runner, whose lane is done), else by a parked runner or a
 * fresh one. */
static struct cta__lane_x *lane_new(struct cta_sim *s, struct cta__unit *u,
                                    struct cta__fiber *spare)
{
	struct cta__worker *w = cta__base_seg_worker;
	struct cta__lane_x *x = lane_take(s, u);
	if (!x)
		return NULL;
	x->fiber = spare;
	if (!x->fiber)
		x->fiber = cta__fiber_unpark(w->fpool);
	if (!x->fiber)
		x->fiber = cta__fiber_start(w->fpool, runner_main, NULL, u->host);
	if (!x->fiber) {
		x->next_all = w->free_lanes;
		w->free_lanes = x;
		return NULL;
	}
	lane_bind(u, x);
	return x;
}

struct cta__lane_x *cta__exec_lane_aux(struct cta__unit *u)
{
	struct cta__lane_x *x = lane_take(u->sim, u);
	if (x) {
		x->fiber = NULL;
		lane_bind(u, x);
	}
	return x;
}

void cta__exec_lane_enter(struct cta__lane_x *x, unsigned rank)
{
	enter_cta(&x->l, rank);
}

void cta__exec_lane_retire(struct cta__lane_x *x)
{
	x->state = L_DONE;
	x->l.active = 0;
	x->l.unit->live_lanes--;
}

static int settle_barriers(struct cta_sim *s, struct cta__unit *u);

void cta__exec_return_runners(struct cta_sim *s)
{
	for (unsigned i = 0; i < s->nworkers; i++)
		cta__fiber_return_all(&s->workers[i].foreign);
}

/* What runs next in the unit: a lane woken from a wait first, then a new
 * lane for threads not yet run; NULL when neither is left (the scheduler
 * then decides whether the unit is done, waits, or is deadlocked), or
 * `fail` when no lane could be made. */
static struct cta__lane_x pick_failed;
/* The segment's thread-locals are initial-exec, as cta__cur: a static
 * library's code is position-independent, where the default model reaches
 * them through a call of __tls_get_addr that the linker turns into a load
 * afterwards, but around which the compiler has already saved the
 * registers a call clobbers (skip_move pushed six for it). */
#define SEG_TLS __attribute__((tls_model("initial-exec")))
/* Set when a lane found that no lane could be made, for cta__exec_units_run. */
static _Thread_local int seg_failed SEG_TLS;
/* The units cta__exec_units_run is running on this host thread, in order, and
 * the one running now: a runner whose unit finished without leaving a
 * waiting lane goes straight on to the next (lane_leave_slow). */
static _Thread_local struct cta__unit *const *seg_v SEG_TLS;
static _Thread_local size_t seg_i SEG_TLS, seg_n SEG_TLS;
/* Unit i of the segment: made now when the engine left it to be made
 * (a serial batch on the engine's thread, struct cta__placed); NULL when
 * memory for it ran out (the run then stops as hung). */
static inline struct cta__unit *seg_unit(struct cta_sim *s, size_t i)
{
	struct cta__unit *u = seg_v[i];
	return u ? u : cta__engine_unit_at(s, i);
}
/* The segment comes to unit u (seg_v[seg_i]), scheduled from host. */
static inline void seg_enter(struct cta_sim *s, struct cta__unit *u, struct cta__fiber *host)
{
	cta__base_seg_unit = u;
	u->host = host;
	if (s->lazy_start)
		cta__engine_unit_started(s, u);
}
/* The segment moves past unit seg_i, settled. */
static inline void seg_leave(struct cta_sim *s)
{
	if (s->early_commit)
		cta__engine_commit_early(s, seg_i);
}
/* CTA c of unit u is done once all its threads exited. */
static inline void cta_settle(struct cta_sim *s, struct cta__unit *u, struct cta__cta *c)
{
	if (!c->done && c->exited >= c->nthreads) {
		c->done = 1;
		/* Only clusters and work-stealing loops leave CLC checks (a
		 * loop's callers are counted with fe_bits, which set clc_objs:
		 * tested first, it spares other blocks the CTA's cold lines). */
		if (u->nctas > 1 || (u->clc_objs && (c->foreach_calls || c->fe_bits)))
			cta__clc_cta_end(s, u, c);
	}
}
static inline __attribute__((always_inline)) void unit_settle(struct cta_sim *s,
                                                              struct cta__unit *u);
static inline struct cta__lane_x *pick_slow(struct cta_sim *s, struct cta__unit *u,
                                            struct cta__fiber *spare)
{
	for (;;) {
		struct cta__lane_x *x = u->runq;
		if (x) {
			u->runq = x->next_run;
			if (!u->runq)
				u->runq_tail = NULL;
		} else if (u->cursor.left || u->cursor.nret) {
			x = lane_new(s, u, spare);
			if (!x) {
				cta__base_out_error(u, "out of memory for thread stacks");
				return &pick_failed;
			}
		} else if ((u->cbar_arrived || u->nctas > 1 || u->ctas[0].bar_arrived) &&
		           settle_barriers(s, u)) {
			/* (Only a barrier someone waits at can settle.) */
			continue;
		} else {
			return NULL;
		}
		x->state = L_RUN;
		return x;
	}
}

static inline __attribute__((always_inline)) struct cta__lane_x *
pick_next(struct cta_sim *s, struct cta__unit *u, struct cta__fiber *spare)
{
	struct cta__lane_x *x = u->runq;
	if (!x)
		return pick_slow(s, u, spare);
	u->runq = x->next_run;
	if (!u->runq)
		u->runq_tail = NULL;
	x->state = L_RUN;
	return x;
}

/* A unit whose threads all finished, none of them waiting, needs its lanes
 * no more: when this host thread made them all, they go back to its spare
 * list now, so that the next unit's lane is the one just used (still in
 * cache) rather than one freed with a unit long ago. */
static void lanes_recycle(struct cta__unit *u)
{
	struct cta__worker *w = cta__base_seg_worker;
	if (!u->all || u->lanes_mixed || u->lanes_abandoned || u->live_lanes ||
	    u->lane_worker != (unsigned)(w - u->sim->workers))
		return;
	u->all_tail->next_all = w->free_lanes;
	w->free_lanes = u->all;
	u->all = NULL;
}

/* Stack a waiting lane must have left to step the engine on itself. An
 * engine step measured 330-630 bytes deep (spin_clc, the UB kernels with a
 * trace); messages formatted with vsnprintf take a few KiB more. */
#define LANE_ENGINE_STACK (16 * 1024)

/* x waits, nothing else of its unit u can run, and u runs alone because a
 * resolved cancel resumed it (sim->solo). Rather than switch back to the
 * scheduler, which would settle and commit u, step the engine to the next
 * resolved cancel and switch to that unit's lane, x does all of that on
 * its own stack, and switches straight to that lane (or returns, when the
 * lane is x). Two lanes waiting at the same call switch symmetrically, and
 * the returns after the switch predict; through the scheduler it is two
 * switches, and the returns after each mispredict. Anything else the
 * engine meets (bodies to run, the end of the run) goes back to the
 * scheduler, with solo_done telling it that u is committed. Same steps in
 * the same order as the scheduler's: the results do not change. */
static inline __attribute__((always_inline)) void
lane_engine_settled(struct cta_sim *s, struct cta__lane_x *x, struct cta__unit *u)
{
	struct cta__fiber *host = u->host;
	/* seg_failed is 0 (the quick wait's test, lane_engine's store), and
	 * only lanes read seg_v and seg_n, which are set again before one
	 * runs; the unit's trace records go to the writer from here on. */
	cta__base_seg_unit = NULL;
	for (struct cta__unit *cu = u;;) {
		/* (Only unit_settle abandons lanes, never the commit: the test
		 * may come first.) */
		if (x->abandoned) {
			cta__engine_commit(s, cu);
			break;
		}
		/* The unit's commit and the engine's steps in one call: a call
		 * and its saved registers less a request. */
		if (cta__engine_commit_step(s, cu, &cu) != CTA__STEP_RESUME)
			break;
		cu->host = host;
		s->solo_unit = cu;
		seg_v = &s->solo_unit;
		seg_n = 1;
		seg_i = 0;
		cta__base_seg_unit = cu;
		struct cta__lane_x *first = pick_next(s, cu, NULL);
		if (first && first != &pick_failed) {
			lane_runner(first);
			cta__cur = &first->l;
			if (first != x)
				cta__fiber_switch(x->fiber, first->fiber);
			return;
		}
		if (!first)
			unit_settle(s, cu);
		seg_v = NULL;
		seg_n = 0;
		cta__base_seg_unit = NULL;
	}
	s->solo_done = 1;
	cta__fiber_switch(x->fiber, host);
}

static void lane_engine(struct cta_sim *s, struct cta__lane_x *x, struct cta__unit *u)
{
	if (!seg_failed)
		unit_settle(s, u);
	seg_failed = 0;
	lane_engine_settled(s, x, u);
}

/* A lane of u that ran on runner f is done: its stack's canary must be
 * intact. */
static inline void check_stack(struct cta__unit *u, const struct cta__fiber *f)
{
	if (cta__fiber_overflowed(f))
		cta__base_out_error(u,
		                    "kernel %s: a thread overflowed its %zu KiB stack (large local "
		                    "arrays or deep recursion in the body)",
		                    u->k->label, (size_t)CTA__LANE_STACK / 1024);
}

/* lane_leave for a lane that is done, or when no woken lane is ready. */
static inline void skip_sync(struct cta_sim *s, struct cta__unit *u);

__attribute__((noinline)) static void lane_leave_slow(struct cta__lane_x *x)
{
	struct cta__unit *u = x->l.unit;
	struct cta__fiber *self = x->fiber;
	if (__builtin_expect(u->sim->skip_moved != 0, 0))
		skip_sync(u->sim, u);
	/* A block of one CTA whose one running thread waits on its own cancel
	 * request (x->state L_MBAR: lane_leave came here because nothing
	 * else of the unit is ready) in a resumed unit: nothing is left to
	 * start or settle (the general path's pick_next finds no lane, and
	 * unit_settle finds the unit waiting for the engine and the CTA's
	 * threads not all exited), so it steps the engine at once. */
	if (x->state == L_MBAR && u->new_reqs && u->nctas == 1 && !u->cursor.left &&
	    !u->cursor.nret && !u->cbar_arrived && !u->ctas[0].bar_arrived && !x->kc_park &&
	    u->sim->solo && !seg_failed && cta__exec_quick_waits &&
	    cta__fiber_stack_left(self) >= LANE_ENGINE_STACK) {
		u->sim->quick_waits++;
		cta__cur = NULL;
		lane_engine_settled(u->sim, x, u);
		return;
	}
	struct cta__fiber *spare = NULL;
	if (x->state == L_DONE || x->kc_park) {
		if (x->state == L_DONE) {
			u->live_lanes--;
			check_stack(u, self);
		}
		x->fiber = NULL;
		spare = self;
	}
	struct cta__lane_x *n = pick_next(u->sim, u, spare);
	/* The unit is done and no lane of it waits: settle it here and take
	 * the next unit of the run on this runner, without the two switches
	 * through the scheduler (most blocks never wait). */
	while (!n && spare && !u->live_lanes && seg_i + 1 < seg_n) {
		struct cta_sim *s = u->sim;
		struct cta__fiber *host = u->host;
		unit_settle(s, u);
		/* (Before the commit, which may free u.) */
		lanes_recycle(u);
		seg_leave(s);
		if (!(u = seg_unit(s, ++seg_i))) {
			seg_failed = 1;
			/* Back to the scheduler, which goes on past it. */
			u = x->l.unit;
			break;
		}
		seg_enter(s, u, host);
		n = pick_next(s, u, spare);
	}
	if (n == &pick_failed) {
		seg_failed = 1;
		n = NULL;
	}
	if (n && !n->fiber) {
		/* A block that waited without a fiber: this runner, if free. */
		if (spare)
			n->fiber = spare;
		else
			lane_runner(n);
	}
	if (n && n->fiber == self) {
		/* x itself (a wait that completed at once), or a new lane taking
		 * over x's runner. */
		cta__cur = &n->l;
		return;
	}
	if (spare) {
		/* Nothing new to run here: park. A runner of another host
		 * thread's pool (its unit moved here, as units do when a cancel
		 * resumes them on the engine thread) would race with that
		 * thread on its pool's list: it goes back there when the pools
		 * are idle (cta__exec_return_runners). Left unparked, it would
		 * keep a stack per thread of every such block until the run
		 * ends, while its maker kept starting new ones. */
		if (cta__fiber_pool_of(self) == cta__base_seg_worker->fpool)
			cta__fiber_park(self);
		else
			cta__fiber_defer(&cta__base_seg_worker->foreign, self);
	}
	if (n) {
		cta__cur = &n->l;
		cta__fiber_switch(self, n->fiber);
	} else if (u->sim->solo && !spare && cta__fiber_stack_left(self) >= LANE_ENGINE_STACK) {
		cta__cur = NULL;
		lane_engine(u->sim, x, u);
	} else {
		cta__cur = NULL;
		cta__fiber_switch(self, u->host);
	}
	/* Resumed, with cta__cur set to the lane to run. */
}

int cta__exec_lane_moves = 1;
int cta__exec_quick_waits = 1;

/* cta__exec_lane_block(x, L_MBAR) for a thread that waits on an mbarrier:
 * the quick wait of lane_leave_slow tested here at once, where the general
 * path's steps before it do nothing (no progress to flush, no run to hand
 * back, no woken lane of the unit to switch to, no skipped period to bring
 * up to date), so a CLC round trip takes none of their calls. The same
 * tests and stores in the same order: results do not change. */
void cta__exec_lane_wait_mbar(struct cta__lane_x *x)
{
	struct cta__unit *u = x->l.unit;
	struct cta_sim *s = u->sim;
	if (x->l.tid.x == x->l.run_x0 && x->l.tid.x + 1 >= x->l.row_end && !u->runq &&
	    !s->skip_moved && u->new_reqs && u->nctas == 1 && !u->cursor.left && !u->cursor.nret &&
	    !u->cbar_arrived && !u->ctas[0].bar_arrived && !x->kc_park && s->solo && !seg_failed &&
	    cta__exec_quick_waits && cta__fiber_stack_left(x->fiber) >= LANE_ENGINE_STACK) {
		x->state = L_MBAR;
		if (x->l.comm)
			u->out.comm = 1;
		s->quick_waits++;
		cta__cur = NULL;
		lane_engine_settled(s, x, u);
		return;
	}
	cta__exec_lane_block(x, L_MBAR);
}

/* The calling lane's unit has no threads left to hand out. When that lane
 * is the unit's only one (so nothing of the unit waits) and the next unit
 * of this host thread's run belongs to the same kernel, the unit is
 * settled as lane_leave_slow would settle it and the lane moves on to the
 * next unit, whose first threads it claims: the kernel's thread loop goes
 * on without returning to its runner, and the lane is not handed back and
 * taken again (most blocks never wait). Same steps in the same order as
 * that path: results do not change. Otherwise 0, as a claim with nothing
 * left. */
static int skip_move(struct cta__lane *l);

int cta__claim_next(struct cta__lane *l)
{
	const struct cta__unit *u = l->unit;
	if (__builtin_expect(u->sim->skip_run, 0) && !u->k->kc) {
		int rc = skip_move(l);
		return rc == 2 || (rc && cta__claim(l));
	}
	return cta__exec_lane_move_next(l) && cta__claim(l);
}

/* cta__exec_lane_move_next while the bodies of skipped periods run: the
 * lane stays on its unit, which the engine makes the next block's
 * (cta__engine_skip_next) as it would have made a unit for it, where the
 * lane would have moved. 2 when the lane claimed the new block's one row
 * of threads too, as cta__claim would. */
static int skip_move_slow(struct cta__lane *l);

/* The batch's entries and the lanes' count after s->skip_moved blocks
 * moved on in skip_move: the unit u is entry seg_base + seg_i's (the
 * entry the run of them began at empty again), the next to commit, and
 * each of them started a lane. Done where the lane leaves that run
 * (skip_move_slow, lane_leave_slow), before anything reads them. */
static inline void skip_sync(struct cta_sim *s, struct cta__unit *u)
{
	size_t m = s->skip_moved;
	if (m) {
		size_t i = s->seg_base + seg_i;
		s->batch[i - m] = NULL;
		s->batch[i] = u;
		s->commit_next = i;
		s->lanes_started += m;
		s->skip_moved = 0;
	}
}

static int skip_move(struct cta__lane *l)
{
	struct cta__lane_x *x = (struct cta__lane_x *)l;
	struct cta__unit *u = l->unit;
	struct cta_sim *s = u->sim;
	struct cta__cta *c = &u->ctas[0];
	const struct cta__period_run *r = s->skip_r;
	const struct cta__outbox *o = &u->out;
	size_t *const psi = &seg_i, si = *psi;
	/* The common block: as predicted, its outbox holding its lane's
	 * count alone (one lane ever started: u->all is x alone, nothing
	 * waits on the run queue), its CTA left as it found it, one CTA of
	 * one row in a 1-D grid, no sanitizer (below s->skip_last, NULL
	 * otherwise) and the claim at the end of
	 * that row (no run handed back), a block before the period's last
	 * (the segment is the period's batch: s->skip_r is the run of entry
	 * seg_i). cta__engine_skip_next in a few
	 * stores: the unit becomes the next block's in place (as cta__exec_unit_retarget,
	 * the outbox left as it is), its one row claimed as cta__claim
	 * would claim it (the cursor as the last claim left it); the batch's
	 * entry and the lanes' count follow once the lane leaves the run of
	 * such blocks (skip_sync). */
	if (__builtin_expect(r < s->skip_last && !l->comm, 1) && c->end_t == r->end + s->skip_dt &&
	    c->exited >= c->nthreads &&
	    !((o->lanes ^ 1) | o->nrecs | o->ntext | o->nubs | o->nmarks | o->ubtotal | o->error |
	      o->comm | o->crossings) &&
	    !u->clc_objs && !cta__exec_cta_dirty(c)) {
		if (s->skip_lane != x) {
			s->skip_canary = cta__fiber_canary(x->fiber);
			s->skip_lane = x;
		}
		const uint64_t *w = s->skip_canary;
		if (__builtin_expect(!w || *w == CTA__FIBER_CANARY, 1)) {
			*psi = si + 1;
			s->skip_moved++;
			s->skip_r = ++r;
			uint64_t dt = s->skip_dt, index = r->index + s->skip_db;
			if (c->smem_dirty)
				c->smem_dirty |= CTA__SMEM_STALE;
			c->exited = 0;
			u->index = index;
			u->start_t = r->start_t + dt;
			u->cursor.t0 = r->t0 + dt;
			u->cursor.spin = r->spin;
			u->cursor.add = r->add;
			c->bid.x = (unsigned)index;
			c->logical = index;
			c->steal_current = index;
			c->sm = r->sm;
			c->end_t = r->end0 + dt;
			l->bid.x = (unsigned)index;
			l->tid.x = 0;
			l->run_x0 = 0;
			l->poll_x = UINT32_MAX;
			l->row_end = u->cursor.idim.x;
			return 2;
		}
	}
	return skip_move_slow(l);
}

/* The task of a skipped period's chunk this host thread runs (s->skip_par). */
static _Thread_local struct cta__skip_task *skip_task SEG_TLS;

/* The block on lane l settled for moving on in place, unless `last` or
 * it cannot (more than its one CTA, blocks retiring, CLC objects, other
 * lanes on its unit): then the lane stops (0). Shared by the pool's ranges
 * and the engine's thread. */
static inline int skip_settle(struct cta__lane *l, int last)
{
	struct cta__lane_x *x = (struct cta__lane_x *)l;
	struct cta__unit *u = l->unit;
	struct cta__cta *c = &u->ctas[0];
	if (last || u->all != x || x->next_all || u->runq || u->cursor.nret || u->nctas != 1 ||
	    u->clc_objs || x->cta != c) {
		l->active = 0;
		return 0;
	}
	if (l->comm)
		u->out.comm = 1;
	check_stack(u, x->fiber);
	if (!c->done && c->exited >= c->nthreads)
		c->done = 1; /* cta_settle: a block of one CTA without CLC objects */
	return 1;
}

/* skip_move while a chunk runs on the pool (s->skip_par, where
 * s->skip_last is NULL): the lane stays on its task's unit, which becomes
 * the next block of the task's range in place, as cta__engine_skip_next
 * makes it, when the block ended as predicted with nothing in its outbox
 * but counts; the counts go to the task, which the engine's thread adds
 * once the chunk ran. Anything else stops the task on that block (its
 * unit kept for the engine's thread, which runs the rest of the range).
 * Touches nothing but the unit, its lane and the task. */
static int skip_move_par(struct cta__lane *l)
{
	struct cta__lane_x *x = (struct cta__lane_x *)l;
	struct cta__unit *u = l->unit;
	struct cta_sim *s = u->sim;
	struct cta__cta *c = &u->ctas[0];
	struct cta__skip_task *t = skip_task;
	if (!skip_settle(l, t->at + 1 >= t->b))
		return 0;
	const struct cta__period_run *r = s->skip_r + t->at;
	struct cta__outbox *o = &u->out;
	uint64_t dt = s->skip_dt;
	if (c->end_t != r->end + dt || c->exited < c->nthreads ||
	    (o->nrecs | o->nubs | o->nmarks | o->ubtotal | o->error)) {
		l->active = 0;
		return 0;
	}
	t->crossings += o->crossings;
	t->lanes += o->lanes;
	t->comm |= o->comm;
	t->at++;
	r++;
	cta__exec_unit_retarget(s, u, r->index + s->skip_db, r->sm, r->start_t + dt, r->spin,
	                        r->add);
	u->cursor.t0 = r->t0 + dt;
	c->end_t = r->end0 + dt;
	/* enter_cta on the same CTA: only its index and barrier count moved. */
	l->bid = c->bid;
	l->steal_depth = 0;
	x->bar_gen = c->bar_gen;
	return 1;
}

void cta__exec_skip_task_run(struct cta_sim *s, struct cta__skip_task *t)
{
	skip_task = t;
	cta__exec_units_run(s, &t->u, 1);
	skip_task = NULL;
}

/* skip_move for any other block. */
__attribute__((noinline)) static int skip_move_slow(struct cta__lane *l)
{
	struct cta__lane_x *x = (struct cta__lane_x *)l;
	struct cta__unit *u = l->unit;
	struct cta_sim *s = u->sim;
	struct cta__cta *c = &u->ctas[0];
	if (__builtin_expect(s->skip_par, 0))
		return skip_move_par(l);
	skip_sync(s, u);
	s->skip_lane = NULL;
	if (!skip_settle(l, seg_i + 1 >= seg_n))
		return 0;
	if (!cta__engine_skip_next(s, u, s->seg_base + seg_i)) {
		l->active = 0;
		return 0;
	}
	seg_i++;
	/* enter_cta on the same CTA: only its index and barrier count moved. */
	l->bid = c->bid;
	l->steal_depth = 0;
	x->bar_gen = c->bar_gen;
	return 1;
}

/* cta__claim_next without the claim: 1 when the lane moved on. */
int cta__exec_lane_move_next(struct cta__lane *l)
{
	struct cta__lane_x *x = (struct cta__lane_x *)l;
	struct cta__unit *u = l->unit;
	struct cta__unit *v;
	if (__builtin_expect(u->sim->skip_run, 0))
		return u->k->kc ? skip_move_slow(l) : skip_move(l);
	if (seg_i + 1 >= seg_n || !cta__exec_lane_moves || u->all != x || x->next_all || u->runq ||
	    !(v = seg_unit(u->sim, seg_i + 1)) || v->k != u->k || v->all) {
		l->active = 0;
		return 0;
	}
	/* lane_leave and lane_leave_slow for a lane that is done... */
	if (l->comm)
		u->out.comm = 1;
	u->live_lanes--;
	check_stack(u, x->fiber);
	/* ... its unit settled (no lane of it is left: unit_settle's CTA
	 * part, the lane's CTA being a one-block unit's only one), then the
	 * next unit's first lane: this one. */
	if (u->nctas == 1)
		cta_settle(u->sim, u, x->cta);
	else
		unit_settle(u->sim, u);
	/* (Before the commit, which may free u, lanes and all: x goes on.) */
	u->all = NULL;
	struct cta__fiber *host = u->host;
	seg_leave(u->sim);
	seg_i++;
	seg_enter(v->sim, v, host);
	lane_clear(x);
	lane_bind(v, x);
	if (!v->cursor.nret)
		enter_cta(l, v->cursor.cta); /* what the claim would call */
	return 1;
}

/* The running lane x stops, because it waits (x->state says for what) or
 * because it is done: runs whatever comes next in the unit, on x's runner
 * when x is done and a new lane comes next, else by switching to that
 * lane's runner, or back to the scheduler when nothing can run. A waiting
 * lane returns from here once woken and resumed; a done lane's runner
 * returns with cta__cur set to its next lane. */
static inline void lane_leave(struct cta__lane_x *x)
{
	struct cta__unit *u = x->l.unit;
	if (x->l.comm)
		u->out.comm = 1;
	struct cta__lane_x *n = u->runq;
	if (x->state == L_DONE && n && n->fiber && !u->sim->skip_moved &&
	    cta__fiber_pool_of(x->fiber) == cta__base_seg_worker->fpool) {
		/* A done lane while a woken one is ready (the threads of a
		 * block after its last barrier, each ending in turn):
		 * lane_leave_slow's steps for it, without its other cases. The
		 * runner parks and switches to the woken lane's. */
		struct cta__fiber *self = x->fiber;
		u->live_lanes--;
		check_stack(u, self);
		x->fiber = NULL;
		u->runq = n->next_run;
		if (!u->runq)
			u->runq_tail = NULL;
		n->state = L_RUN;
		cta__fiber_park(self);
		cta__cur = &n->l;
		cta__fiber_switch(self, n->fiber);
		return;
	}
	if (!n || x->state == L_DONE) {
		lane_leave_slow(x);
		return;
	}
	/* A waiting lane, and a woken one to run (never x: it is not woken
	 * before it has waited). */
	u->runq = n->next_run;
	if (!u->runq)
		u->runq_tail = NULL;
	n->state = L_RUN;
	lane_runner(n);
	cta__cur = &n->l;
	cta__fiber_switch(x->fiber, n->fiber);
}

static inline void lane_wake(struct cta__unit *u, struct cta__lane_x *x)
{
	x->state = L_RUN;
	x->next_run = NULL;
	if (u->runq_tail)
		u->runq_tail->next_run = x;
	else
		u->runq = x;
	u->runq_tail = x;
}

void cta__exec_lane_wake(struct cta__unit *u, struct cta__lane_x *x)
{
	lane_wake(u, x);
}

void cta__exec_lane_block(struct cta__lane_x *x, enum lstate st)
{
	hand_back_run(x);
	x->state = st;
	lane_leave(x);
	/* Resumed once woken, with cta__cur set back to us. */
}

/* cta__exec_lane_block for the barriers, which flushed x's progress already. */
static inline void lane_block_flushed(struct cta__lane_x *x, enum lstate st)
{
	hand_back_rest(x);
	x->state = st;
	lane_leave(x);
}

/* Completes the CTA barrier: every waiter continues at the latest arrival
 * plus the barrier's cost. */
static void barrier_release(struct cta_sim *s, struct cta__unit *u, struct cta__cta *c,
                            struct cta__lane_x *self)
{
	uint64_t t = c->bar_max_t + s->dev.barrier_ns;
	c->bar_rel_t = t;
	c->bar_gen++;
	/* The waiters, linked as the run queue links its lanes, join its end
	 * as one list, in their order (lane_wake each, but for the links). */
	struct cta__lane_x *w = c->bar_waiters;
	if (w) {
		for (struct cta__lane_x *v = w; v; v = v->next_run) {
			v->l.vtime = t;
			v->bar_gen = c->bar_gen;
			v->state = L_RUN;
		}
		if (u->runq_tail)
			u->runq_tail->next_run = w;
		else
			u->runq = w;
		u->runq_tail = c->bar_waiters_tail;
	}
	c->bar_waiters = c->bar_waiters_tail = NULL;
	if (self) {
		self->l.vtime = t;
		self->bar_gen = c->bar_gen;
	}
	c->bar_arrived = 0;
	c->bar_max_t = 0;
	c->bar_file = NULL;
	c->bar_divergent_reported = 0;
}

/* The watchdog's view of a barrier about to complete: when no thread of
 * the CTA did any work since the last crossing (every arrival at that
 * crossing's release time), the crossing is idle time; a CTA idle for
 * longer than the watchdog loops at barriers and nothing else
 * (`for (;;) __syncthreads();`), which on a GPU hangs. */
int cta__exec_bar_idle(struct cta_sim *s, struct cta__cta *c)
{
	if (c->bar_max_t != c->bar_rel_t) {
		c->bar_idle_ns = 0;
		return 0;
	}
	c->bar_idle_ns += s->dev.barrier_ns;
	return c->bar_idle_ns > s->watchdog_ns;
}

void cta__exec_watchdog_stop(struct cta_sim *s, struct cta__unit *u, struct cta__lane_x *x,
                             int rule, const char *file, int line, const char *msg)
{
	cta__ub(s, (enum cta__ub_rule)rule, u, x, file, line, "%s", msg);
	u->watchdog = 1;
}

/* The CTA looped at barriers with nothing between them for longer than
 * the watchdog: reported, and x parked for good (the unit then settles as
 * given up, and the run stops at its commit). */
void cta__exec_bar_watchdog_report(struct cta__unit *u, struct cta__lane_x *x, struct cta__cta *c,
                                   const char *file, int line, uint64_t idle_ns)
{
	struct cta_sim *s = u->sim;
	char msg[256];
	snprintf(msg, sizeof(msg),
	         "block (%u,%u,%u) crossed barriers for %" PRIu64
	         " ns of virtual time with no work between them (the watchdog is %" PRIu64
	         " ns, --watchdog): the body loops at __syncthreads and would hang a GPU",
	         c->bid.x, c->bid.y, c->bid.z, idle_ns, s->watchdog_ns);
	cta__exec_watchdog_stop(s, u, x, UB_WATCHDOG, file, line, msg);
}

/* The CTA looped at barriers with nothing between them for longer than
 * the watchdog: reported, and x parked for good (the unit then settles as
 * given up, and the run stops at its commit). */
__attribute__((noinline, cold)) static void barrier_watchdog(struct cta__lane_x *x,
                                                             struct cta__unit *u,
                                                             struct cta__cta *c, const char *file,
                                                             int line, uint64_t idle_ns)
{
	cta__exec_bar_watchdog_report(u, x, c, file, line, idle_ns);
	x->wait_file = file;
	x->wait_line = line;
	hand_back_rest(x);
	x->state = L_BARRIER;
	lane_leave(x);
	/* Never resumed. */
}

/* ---- Kernels whose blocks wait for other blocks (device wait_*) ----
 * Once a thread of a kernel spun on global memory (its comm_state 2), and
 * from the start of a cooperative launch, its blocks run on the engine's
 * thread (run_ready) and every yield point of its threads comes here
 * (their poll count kept one short of the budget): a global atomic or
 * volatile store happens at the thread's virtual time, the thread waiting
 * on its unit's spinners until the engine's clock reaches its own (an
 * EV_POLL at that time wakes it, and no timed lane of the unit before its
 * time), and so does a volatile load from the third of a poll on (loads
 * with nothing between them), so that a thread reads what other blocks
 * wrote before it in virtual time, never what they write later, whatever
 * order the host ran them in. Then its cost: a volatile load
 * wait_load_ns, an atomic its turn on its address (wait_turn_ps a turn,
 * from the time its address is free; a warp's atomics on one address at
 * one time share a turn; the atomic takes effect at its turn, the thread
 * waiting for it) and wait_atomic_ns. Not on the worker pool (a batch
 * there started before a thread spun), not for the loop form (the
 * compiled bodies: cta__exec_unit_template keeps such kernels on fibers),
 * not under adversarial spin scheduling. */
struct cta__wait_slot {
	uintptr_t addr;      /* the address << 2, or 0: a free slot */
	uint64_t free_ps;    /* when its next turn can start */
	uint64_t at_ps;      /* the last atomic's arrival, ... */
	uint64_t warp_block; /* ... its warp: block (bid.x, y, z packed), */
	unsigned warp_k;     /* kernel (its id + 1; 0: no turn yet) and warp, */
	unsigned warp;
	unsigned turn_ps; /* ... and its turn's length (its start: free_ps - turn_ps) */
};

/* The turns by address: an exact table (open addressing), never an
 * address's turns lost to another's. A table that dropped an address
 * whose slot another took made the turns depend on where the host put
 * the arrays: traces differed between runs
 * (`turns_do_not_depend_on_where_the_arrays_lie`, test_progress). Past
 * WAIT_PRUNE addresses, those whose turns ended before the engine's clock
 * are dropped when the table would grow (a thread behind the engine may
 * then start its turn earlier than with them): decided by the table's
 * contents and the engine's clock alone, never by where they lie. When it
 * "would grow" is kept as it was decided when the slots were also the
 * table's room (grow: a capacity doubled at half full, from WAIT_MIN), so
 * that the prunes, and so the turns, stay where they were; the slots
 * themselves are kept up to 3/4 full (cap), a 48-byte slot each. */
#define WAIT_MIN   1024u
#define WAIT_PRUNE 65536u
struct cta__wait_table {
	struct cta__wait_slot *slot;
	size_t cap, n; /* cap a power of 2 */
	size_t grow;   /* when it prunes (above) */
};

static size_t wait_hash(uintptr_t a, size_t cap)
{
	return (size_t)((a * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

static void wait_place(struct cta__wait_slot *slot, size_t cap, const struct cta__wait_slot *w)
{
	size_t i = wait_hash(w->addr, cap);
	while (slot[i].addr)
		i = (i + 1) & (cap - 1);
	slot[i] = *w;
}

/* The table rebuilt with the slots free_ps <= past dropped, in the fewest
 * slots (a power of 2, at least WAIT_MIN / 2) that hold them and `more`
 * more at most 3/4 full. */
static void wait_rebuild(struct cta__wait_table *t, uint64_t past, size_t more)
{
	size_t kept = 0;
	for (size_t i = 0; i < t->cap; i++)
		kept += t->slot[i].addr && t->slot[i].free_ps > past;
	size_t cap = WAIT_MIN / 2;
	while (4 * (kept + more) > 3 * cap)
		cap *= 2;
	struct cta__wait_slot *n = calloc(cap, sizeof(*n));
	if (!n)
		abort(); /* (as every allocation of the engine's state) */
	for (size_t i = 0; i < t->cap; i++) {
		const struct cta__wait_slot *w = &t->slot[i];
		if (w->addr && w->free_ps > past)
			wait_place(n, cap, w);
	}
	free(t->slot);
	t->slot = n;
	t->cap = cap;
	t->n = kept;
}

/* Address a's slot, made (all 0 but its address) if it has none; *seen
 * 1 when it had one. */
static struct cta__wait_slot *wait_slot(struct cta_sim *s, uintptr_t a, unsigned *seen)
{
	struct cta__wait_table *t = s->wait_slots;
	if (!t) {
		t = s->wait_slots = calloc(1, sizeof(*t));
		if (!t)
			abort();
		t->grow = WAIT_MIN;
		wait_rebuild(t, 0, 0);
	}
	size_t i = wait_hash(a, t->cap);
	*seen = 1;
	for (; t->slot[i].addr; i = (i + 1) & (t->cap - 1))
		if (t->slot[i].addr == a)
			return &t->slot[i];
	*seen = 0;
	int moved = 0;
	if (2 * (t->n + 1) > t->grow) {
		if (t->n >= WAIT_PRUNE) {
			wait_rebuild(t, s->now * 1000, 1);
			moved = 1;
		}
		if (2 * (t->n + 1) > t->grow / 2)
			t->grow *= 2;
	}
	if (4 * (t->n + 1) > 3 * t->cap) {
		wait_rebuild(t, 0, 1);
		moved = 1;
	}
	if (moved) {
		i = wait_hash(a, t->cap);
		while (t->slot[i].addr)
			i = (i + 1) & (t->cap - 1);
	}
	t->n++;
	memset(&t->slot[i], 0, sizeof(t->slot[i]));
	t->slot[i].addr = a;
	return &t->slot[i];
}

size_t cta__exec_wait_bytes(const struct cta_sim *s, size_t *addresses)
{
	const struct cta__wait_table *t = s->wait_slots;
	if (addresses)
		*addresses = t ? t->n : 0;
	return t ? sizeof(*t) + t->cap * sizeof(*t->slot) : 0;
}

void cta__exec_wait_free(struct cta_sim *s)
{
	struct cta__wait_table *t = s->wait_slots;
	if (t)
		free(t->slot);
	free(t);
	s->wait_slots = NULL;
}

int cta__exec_wait_model(const struct cta_sim *s, const struct cta__kernel *k)
{
	const struct cta_device_model *d = &s->dev;
	return (d->wait_load_ns | d->wait_atomic_ns | d->wait_turn_ps | d->wait_sync_ps |
	        d->wait_hit_ns | d->wait_poll_ps) &&
	       (!k->kc || (k->kc->flags & CTA__KC_SPIN)) &&
	       s->o.spin_sched != CTA_SPIN_ADVERSARIAL && !s->in_pool &&
	       (k->l.cooperative || __atomic_load_n(&k->comm_state, __ATOMIC_RELAXED) == 2);
}

/* x's spinning state, started for its current thread. */
static struct cta__lane_spin *spin_of(struct cta__lane_x *x)
{
	struct cta__lane *l = &x->l;
	struct cta__lane_spin *sp = x->spin;
	if (!sp)
		sp = x->spin = spin_alloc(cta__base_seg_worker);
	if (sp->poll_unit != l->unit || sp->poll_tid.x != l->tid.x || sp->poll_tid.y != l->tid.y ||
	    sp->poll_tid.z != l->tid.z || sp->poll_bid.x != l->bid.x ||
	    sp->poll_bid.y != l->bid.y || sp->poll_bid.z != l->bid.z) {
		sp->poll_unit = l->unit;
		sp->poll_tid = l->tid;
		sp->poll_bid = l->bid;
		sp->spin_since = l->vtime;
		sp->spin_rounds = 0;
		sp->acc_end = l->vtime;
		sp->acc_idle = 0;
		sp->acc_addr = 0;
	}
	return sp;
}

/* x waits on its unit's spinners until the engine's clock reaches its
 * own. */
static void wait_for_time(struct cta__lane_x *x, struct cta__lane_spin *sp, const char *file,
                          int line)
{
	struct cta__lane *l = &x->l;
	struct cta__unit *u = l->unit;
	struct cta_sim *s = u->sim;
	while (l->vtime > s->now) {
		x->wait_file = file;
		x->wait_line = line;
		flush_progress(l);
		hand_back_rest(x);
		if (!u->nspin || l->vtime < u->spin_wake)
			u->spin_wake = l->vtime;
		__atomic_store_n(&s->any_spin, 1, __ATOMIC_RELAXED);
		sp->timed = 1;
		x->next_wait = u->spinners;
		u->spinners = x;
		u->nspin++;
		x->state = L_SPIN;
		lane_leave(x);
		/* Woken by an EV_POLL at its time (cta__exec_unit_poll_wake). */
		sp->timed = 0;
	}
}

/* The turn of an atomic of x on address a (<< 2) at x's clock, turn_ps a
 * turn: x's clock moved to its start; *seen 1 when an atomic took a turn
 * on the address before (it is in the table). */
uint64_t cta__exec_wait_turn(struct cta_sim *s, const struct cta__kernel *k, uint3 bid,
                             unsigned cta_rank, unsigned rank, uintptr_t a, uint64_t vtime,
                             unsigned turn_ps, unsigned *seen)
{
	struct cta__wait_slot *w = wait_slot(s, a, seen);
	uint64_t t = vtime * 1000, start;
	unsigned warp = (cta_rank << 16) + (rank >> 5);
	uint64_t block = (uint64_t)bid.x | (uint64_t)bid.y << 32 | (uint64_t)bid.z << 48;
	if (w->at_ps == t && w->warp_k == k->id + 1 && w->warp_block == block && w->warp == warp) {
		start = w->free_ps - w->turn_ps; /* a warp's atomics at one time: one turn */
	} else {
		start = t > w->free_ps ? t : w->free_ps;
		w->free_ps = start + turn_ps;
		w->turn_ps = turn_ps;
		w->at_ps = t;
		w->warp_k = k->id + 1;
		w->warp_block = block;
		w->warp = warp;
	}
	return (start + 999) / 1000;
}

/* x's atomic on a (<< 2) takes its turn (turn_ps) if the device has
 * turns or hits: what it then costs x (wait_atomic_ns, or wait_hit_ns on
 * an address an atomic took a turn on before). */
static uint64_t wait_turn(struct cta__lane_x *x, uintptr_t a, unsigned turn_ps)
{
	struct cta__lane *l = &x->l;
	const struct cta_device_model *d = &l->unit->sim->dev;
	if (!turn_ps && !d->wait_hit_ns)
		return d->wait_atomic_ns;
	unsigned rank = (l->tid.z * l->bdim.y + l->tid.y) * l->bdim.x + l->tid.x, seen;
	l->vtime = cta__exec_wait_turn(l->unit->sim, l->unit->k, l->bid, l->cta_rank, rank, a,
	                               l->vtime, turn_ps, &seen);
	return cta__exec_wait_cost(d, seen);
}

uint64_t cta__exec_wait_cost(const struct cta_device_model *d, unsigned seen)
{
	return seen && d->wait_hit_ns ? d->wait_hit_ns : d->wait_atomic_ns;
}

int cta__exec_wait_polls(unsigned kind, uint64_t acc, int same, unsigned idle,
                         const struct cta__kernel *k)
{
	return kind == CTA__ACC_LOAD && same && idle >= 2 &&
	       (uintptr_t)(acc >> 2) != (uintptr_t)&k->gsync_gen;
}

/* A yield point of a thread of a kernel cta__exec_wait_model covers:
 * acc is its access (kernel.h's cta__acc). */
static void wait_access(struct cta__lane_x *x, uintptr_t acc, const char *file, int line)
{
	struct cta__lane *l = &x->l;
	struct cta__unit *u = l->unit;
	const struct cta_device_model *d = &u->sim->dev;
	l->polls = CTA__POLL_BUDGET - 1;
	struct cta__lane_spin *sp = spin_of(x);
	unsigned kind = (unsigned)(acc & 3);
	/* Yield points with nothing between them (the clock where the last
	 * one left it): a thread that polls. Every CTA__POLL_BUDGET of them
	 * it spins a round: past CTA__SPIN_RAMP rounds on one address its
	 * polls slow down as in cta__spin_poll (a scan of many addresses,
	 * as a work-stealing loop's over its queues, does not: it is no
	 * poll), and a loop of yield points without an access (which cost
	 * nothing) moves its clock a round each time. */
	if (l->vtime != sp->acc_end) {
		sp->acc_idle = 0;
		sp->spin_rounds = 0;
	} else {
		sp->acc_idle++;
	}
	int same = (acc >> 2) == sp->acc_addr;
	if (kind != CTA__ACC_NONE) {
		if (!same)
			sp->spin_rounds = 0;
		sp->acc_addr = acc >> 2;
	}
	int wait = kind == CTA__ACC_ATOMIC || kind == CTA__ACC_STORE;
	int poll = cta__exec_wait_polls(kind, acc, same, sp->acc_idle, u->k);
	if (sp->acc_idle && !(sp->acc_idle % CTA__POLL_BUDGET)) {
		sp->spin_rounds++;
		uint64_t mult = sp->spin_rounds / CTA__SPIN_RAMP;
		mult = mult < 1 ? 1 : mult > CTA__SPIN_MAX ? CTA__SPIN_MAX : mult;
		const uint64_t round = (uint64_t)CTA__POLL_BUDGET * CTA__POLL_NS;
		l->vtime += kind == CTA__ACC_NONE ? round * mult : round * (mult - 1);
		sp->spin_file = file;
		sp->spin_line = line;
		wait = 1;
	}
	/* Writes happen at their time, so a read never sees a later one; a
	 * load that is the third of a poll waits for its time too, so that
	 * a polling thread sees what was written before it in virtual time
	 * (the first two, read at the engine's time, may miss what was
	 * written since). */
	if (wait || (kind == CTA__ACC_LOAD && sp->acc_idle >= 2))
		wait_for_time(x, sp, file, line);
	if (kind == CTA__ACC_ATOMIC) {
		uint64_t cost = wait_turn(x, acc >> 2, d->wait_turn_ps);
		wait_for_time(x, sp, file, line);
		l->vtime += cost;
	} else if (kind == CTA__ACC_LOAD) {
		if (poll && d->wait_poll_ps) {
			wait_turn(x, acc >> 2, d->wait_poll_ps);
			wait_for_time(x, sp, file, line);
		}
		l->vtime += d->wait_load_ns;
	}
	sp->acc_end = l->vtime;
}

/* A thread made CTA__POLL_BUDGET yield points in a row (kernel.h, counted
 * from its start). The first time that happens to a thread only starts
 * its spinning state (the lane's may be a thread's it ran before); the
 * second time it spins: its lane is suspended, CTA__POLL_BUDGET polls
 * later in virtual time, and the engine resumes it with an EV_POLL in
 * virtual-time order, after whatever else is due before (other blocks,
 * new blocks, ends). */
void cta__spin_poll(const char *file, int line)
{
	struct cta__lane_x *x = cta__exec_lane_self();
	struct cta__lane *l = &x->l;
	struct cta__unit *u = l->unit;
	struct cta_sim *s = u->sim;
	l->polls = 0;
	struct cta__lane_spin *sp = x->spin;
	if (l->comm & 2) {
		/* A write another thread may wait for: progress. */
		l->comm = 1;
		if (sp)
			sp->spin_since = l->vtime;
		if (l->vtime > __atomic_load_n(&s->progress_t, __ATOMIC_RELAXED))
			__atomic_store_n(&s->progress_t, l->vtime, __ATOMIC_RELAXED);
	}
	/* The region form runs threads as resumptions on one lane, and the
	 * kernel compiler keeps bodies with loops of yield points on fibers:
	 * a thread there never spins. */
	if (u->k->kc)
		return;
	if (cta__exec_wait_model(s, u->k)) {
		wait_access(x, cta__acc, file, line);
		return;
	}
	if (!sp)
		sp = x->spin = spin_alloc(cta__base_seg_worker);
	if (sp->poll_unit != u || sp->poll_tid.x != l->tid.x || sp->poll_tid.y != l->tid.y ||
	    sp->poll_tid.z != l->tid.z || sp->poll_bid.x != l->bid.x ||
	    sp->poll_bid.y != l->bid.y || sp->poll_bid.z != l->bid.z) {
		sp->poll_unit = u;
		sp->poll_tid = l->tid;
		sp->poll_bid = l->bid;
		sp->spin_since = l->vtime;
		sp->spin_rounds = 0;
		return;
	}
	cta__exec_spin_backoff(&l->vtime, sp->spin_resume_t, &sp->spin_rounds);
	sp->spin_file = file;
	sp->spin_line = line;
	x->wait_file = file;
	x->wait_line = line;
	flush_progress(l);
	hand_back_rest(x);
	if (!u->nspin || l->vtime < u->spin_wake)
		u->spin_wake = l->vtime;
	__atomic_store_n(&s->any_spin, 1, __ATOMIC_RELAXED);
	/* Its blocks wait for one another: from now on they run on the
	 * engine's thread (run_ready). */
	__atomic_store_n(&u->k->comm_state, 2, __ATOMIC_RELAXED);
	x->next_wait = u->spinners;
	u->spinners = x;
	u->nspin++;
	x->state = L_SPIN;
	lane_leave(x);
	/* Resumed by an EV_POLL (cta__units_poll_wake), cta__cur set back. */
}

/* A lane's first yield point of a thread other than the one its count is
 * for (kernel.h's cta__poll): the thread's count starts. On fibers a lane
 * keeps its thread while the thread waits, so the count of a thread the
 * lane has not counted for starts at 0; a lane that runs a compiled
 * block's threads keeps each thread's count (sim/exec/regions.c). */
void cta__poll_thread(void)
{
	struct cta__lane *l = cta__cur;
	if (__builtin_expect(l->unit->k->kc != NULL, 0) && cta__regions_poll_thread(l))
		return;
	l->poll_x = l->tid.x;
	/* (A blocking kernel's thread: every yield point to cta__spin_poll.) */
	l->polls = __builtin_expect(l->unit->k->comm_state != 0, 0) &&
	                   cta__exec_wait_model(l->unit->sim, l->unit->k)
	               ? CTA__POLL_BUDGET - 1
	               : 0;
}

void cta__exec_grid_sync_stop(struct cta__unit *u, struct cta__lane_x *x, const char *file,
                              int line)
{
	char msg[256];
	snprintf(msg, sizeof(msg),
	         "cta_grid_sync in a launch that is not cooperative (on a GPU "
	         "this_grid().is_valid() is false and sync() is undefined): launch it "
	         "with cta_launch_cfg.cooperative, as cudaLaunchCooperativeKernel");
	cta__exec_watchdog_stop(u->sim, u, x, UB_FORWARD_PROGRESS, file, line, msg);
}

/* cg::this_grid().sync() as cooperative groups builds it: a block barrier,
 * thread 0 of each block arrives on a grid-wide count and spins until the
 * last block's arrival starts the next phase, a block barrier. */
void cta__grid_sync(const char *file, int line)
{
	struct cta__lane_x *x = cta__exec_lane_self();
	struct cta__unit *u = x->l.unit;
	struct cta__kernel *k = u->k;
	if (!k->l.cooperative) {
		cta__exec_grid_sync_stop(u, x, file, line);
		hand_back_run(x);
		x->state = L_BARRIER;
		lane_leave(x);
		return; /* never */
	}
	cta__syncthreads(file, line);
	if (cta_thread_rank() == 0) {
		uint64_t gen = k->gsync_gen;
		x->l.comm = 3;
		/* (The device's wait_*: the arrival takes its turn on the
		 * grid's count, each poll of the phase is a load.) */
		int model = cta__exec_wait_model(u->sim, k);
		if (model) {
			struct cta__lane_spin *sp = spin_of(x);
			wait_for_time(x, sp, file, line);
			uint64_t cost =
			    wait_turn(x, (uintptr_t)&k->gsync_count, u->sim->dev.wait_sync_ps);
			wait_for_time(x, sp, file, line);
			x->l.vtime += cost;
			sp->acc_end = x->l.vtime;
		}
		if (++k->gsync_count == k->nblocks) {
			k->gsync_count = 0;
			k->gsync_gen++;
		} else {
			while (k->gsync_gen == gen) {
				if (model)
					wait_access(x,
					            (uintptr_t)&k->gsync_gen << 2 | CTA__ACC_LOAD,
					            file, line);
				else
					cta__poll(file, line);
			}
		}
	}
	cta__syncthreads(file, line);
}

/* An EV_POLL for u is due: its spinning lanes run again (at no earlier
 * time than now). */
void cta__exec_unit_poll_wake(struct cta__unit *u, uint64_t now)
{
	struct cta__lane_x *x = u->spinners;
	u->spinners = NULL;
	u->nspin = 0;
	struct cta__lane_x *keep = NULL, **keep_tail = &keep;
	unsigned nkeep = 0;
	uint64_t wake = 0;
	while (x) {
		struct cta__lane_x *n = x->next_wait;
		uint64_t kept_t = x->l.vtime;
		if (x->kc_park ? cta__regions_spin_kept(x, now, &kept_t)
		               : x->spin && x->spin->timed && x->l.vtime > now) {
			/* A blocking kernel's access whose time has not come
			 * (wait_for_time; a compiled block all of whose spinning
			 * threads wait so, run_spin): it stays. */
			if (!nkeep || kept_t < wake)
				wake = kept_t;
			x->next_wait = NULL;
			*keep_tail = x;
			keep_tail = &x->next_wait;
			nkeep++;
			x = n;
			continue;
		}
		if (x->kc_park) {
			/* A compiled block: its spinning threads go on (run_spin). */
			cta__regions_spin_wake(x, now);
		} else {
			if (x->l.vtime < now)
				x->l.vtime = now;
			x->spin->spin_resume_t = x->l.vtime;
		}
		lane_wake(u, x);
		x = n;
	}
	u->spinners = keep;
	u->nspin = nkeep;
	if (nkeep)
		u->spin_wake = wake;
}

static unsigned lane_rank(const struct cta__lane_x *x);

int cta__exec_unit_spinner(struct cta__unit *u, unsigned i, struct cta__exec_spinner *sp)
{
	for (struct cta__lane_x *x = u->spinners; x; x = x->next_wait) {
		unsigned m = x->kc_park ? cta__regions_nspin(x) : 1;
		if (i >= m) {
			i -= m;
			continue;
		}
		sp->x = x;
		if (x->kc_park)
			return cta__regions_spinner(x, i, &sp->rank, &sp->since, &sp->file,
			                            &sp->line);
		sp->rank = lane_rank(x);
		sp->since = x->spin->spin_since;
		sp->file = x->spin->spin_file;
		sp->line = x->spin->spin_line;
		return 1;
	}
	return 0;
}

/* A CTA of one thread (every CTA of a timing-only run): the barrier
 * completes as this thread arrives. */
static inline void one_thread_barrier(struct cta__lane_x *x, struct cta__unit *u,
                                      struct cta__cta *c, const char *file, int line)
{
	struct cta_sim *s = u->sim;
	flush_progress(&x->l);
	u->out.crossings++;
	c->bar_gen++;
	/* (The watchdog: see cta__exec_bar_idle; kept in the lane, the CTA's only
	 * thread, so as not to dirty the CTA's cold lines.) */
	if (x->l.vtime != x->bar_rel_t)
		x->bar_idle_ns = 0;
	else if ((x->bar_idle_ns += s->dev.barrier_ns) > s->watchdog_ns)
		barrier_watchdog(x, u, c, file, line, x->bar_idle_ns);
	x->l.vtime += s->dev.barrier_ns;
	x->bar_rel_t = x->l.vtime;
	x->bar_gen = c->bar_gen;
}

__attribute__((noinline)) void cta__syncthreads_rule(const char *file, int line, int rule);
/* The one-thread case returns here, without the registers the waiting
 * code saves; the rest goes on (as a tail call) to the full barrier.
 *
 * So does the common arrival on fibers: a thread that is neither the
 * first nor the last to arrive at the barrier the others wait at, with
 * no progress of its run to count and no run to hand back, while a woken
 * thread of its unit is ready (the threads released by the last crossing,
 * each going on to this one). It joins the waiters and switches straight
 * to that thread, with the stores of cta__syncthreads_rule, lane_leave
 * and lane_runner in their order, and in few enough registers that none
 * is saved besides the switch's own (the full path saves six around it):
 * results do not change. */
void cta__syncthreads(const char *file, int line)
{
	struct cta__lane_x *x = cta__exec_lane_self();
	struct cta__cta *c = cta__exec_lane_cta(x);
	if (c->nthreads == 1) {
		one_thread_barrier(x, x->l.unit, c, file, line);
		return;
	}
	struct cta__unit *u = x->l.unit;
	struct cta__lane_x *n = u->runq;
	if (__builtin_expect(n != NULL, 1) && c->bar_arrived && c->bar_file == file &&
	    c->bar_line == line && c->bar_arrived + 1 + c->exited < c->nthreads &&
	    x->l.tid.x == x->l.run_x0 && x->l.tid.x + 1 >= x->l.row_end && n->fiber &&
	    c->bar_waiters_tail) {
		u->out.crossings++;
		c->cold_dirty = 1;
		c->bar_arrived++;
		if (x->l.vtime > c->bar_max_t)
			c->bar_max_t = x->l.vtime;
		x->next_run = NULL;
		c->bar_waiters_tail->next_run = x;
		c->bar_waiters_tail = x;
		x->wait_file = file;
		x->wait_line = line;
		x->state = L_BARRIER;
		if (x->l.comm)
			u->out.comm = 1;
		u->runq = n->next_run;
		if (!u->runq)
			u->runq_tail = NULL;
		n->state = L_RUN;
		cta__cur = &n->l;
		cta__fiber_switch(x->fiber, n->fiber);
		return;
	}
	cta__syncthreads_rule(file, line, UB_DIVERGENT_BARRIER);
}

/* The reports of cta__syncthreads_rule, out of its way. */
__attribute__((noinline, cold)) static void
report_other_barrier(struct cta_sim *s, struct cta__unit *u, struct cta__cta *c,
                     struct cta__lane_x *x, const char *file, int line)
{
	c->bar_divergent_reported = 1;
	/* Threads at two different barriers are a divergent barrier
	 * whichever of them is a work-stealing loop's own: a thread
	 * only reaches the loop's barriers after calling the loop, so
	 * this is not a missing caller (those are reported when the
	 * block ends) but, say, a __syncthreads in the body that part
	 * of the block skips. */
	cta__ub(s, UB_DIVERGENT_BARRIER, u, x, file, line,
	        "other threads of the block wait at the __syncthreads at %s:%d", c->bar_file,
	        c->bar_line);
}

__attribute__((noinline, cold)) static void report_exited(struct cta_sim *s, struct cta__unit *u,
                                                          struct cta__cta *c, struct cta__lane_x *x,
                                                          const char *file, int line)
{
	cta__ub(s, UB_DIVERGENT_BARRIER, u, x, file, line,
	        "%" PRIu64 " of the block's %" PRIu64
	        " threads exited without reaching this barrier",
	        c->exited, (uint64_t)c->nthreads);
}

/* __syncthreads, reporting divergence under `rule` (the work-stealing
 * loops report threads that skipped them as their own rule). */
void cta__syncthreads_rule(const char *file, int line, int rule)
{
	struct cta__lane_x *x = cta__exec_lane_self();
	struct cta__unit *u = x->l.unit;
	struct cta__cta *c = cta__exec_lane_cta(x);
	if (c->nthreads == 1) {
		one_thread_barrier(x, u, c, file, line);
		return;
	}
	flush_progress(&x->l);
	u->out.crossings++;
	c->cold_dirty = 1;
	if (c->bar_arrived == 0) {
		c->bar_file = file;
		c->bar_line = line;
	} else if ((c->bar_line != line || (c->bar_file != file && strcmp(c->bar_file, file))) &&
	           !c->bar_divergent_reported) {
		report_other_barrier(u->sim, u, c, x, file, line);
	}
	c->bar_arrived++;
	if (x->l.vtime > c->bar_max_t)
		c->bar_max_t = x->l.vtime;
	if (c->bar_arrived + c->exited == c->nthreads) {
		if (c->exited && !c->bar_divergent_reported && rule == UB_DIVERGENT_BARRIER)
			report_exited(u->sim, u, c, x, file, line);
		if (cta__exec_bar_idle(u->sim, c)) {
			barrier_watchdog(x, u, c, file, line, c->bar_idle_ns);
			return;
		}
		barrier_release(u->sim, u, c, x);
		return;
	}
	x->next_run = NULL;
	if (c->bar_waiters_tail)
		c->bar_waiters_tail->next_run = x;
	else
		c->bar_waiters = x;
	c->bar_waiters_tail = x;
	x->wait_file = file;
	x->wait_line = line;
	lane_block_flushed(x, L_BARRIER);
}

static uint64_t unit_exited(const struct cta__unit *u)
{
	uint64_t e = 0;
	for (unsigned i = 0; i < u->nctas; i++)
		e += u->ctas[i].exited;
	return e;
}

static void cluster_release(struct cta_sim *s, struct cta__unit *u, struct cta__lane_x *self)
{
	uint64_t t = u->cbar_max_t +
	             (s->dev.cluster_barrier_ns ? s->dev.cluster_barrier_ns : s->dev.barrier_ns);
	u->cbar_gen++;
	struct cta__lane_x *w = u->cbar_waiters;
	u->cbar_waiters = u->cbar_waiters_tail = NULL;
	while (w) {
		struct cta__lane_x *n = w->next_wait;
		w->l.vtime = t;
		lane_wake(u, w);
		w = n;
	}
	if (self)
		self->l.vtime = t;
	u->cbar_arrived = 0;
	u->cbar_max_t = 0;
}

void cta__cluster_sync(const char *file, int line)
{
	struct cta__lane_x *x = cta__exec_lane_self();
	struct cta__unit *u = x->l.unit;
	struct cta_sim *s = u->sim;
	flush_progress(&x->l);
	u->out.crossings++;
	u->cbar_arrived++;
	if (x->l.vtime > u->cbar_max_t)
		u->cbar_max_t = x->l.vtime;
	uint64_t total = u->ctas[0].nthreads * u->nctas;
	uint64_t exited = unit_exited(u);
	if (u->cbar_arrived + exited == total) {
		if (exited)
			cta__ub(s, UB_DIVERGENT_BARRIER, u, x, file, line,
			        "%" PRIu64 " threads of the cluster exited without reaching this "
			        "cluster barrier",
			        exited);
		cluster_release(s, u, x);
		return;
	}
	x->next_wait = NULL;
	if (u->cbar_waiters_tail)
		u->cbar_waiters_tail->next_wait = x;
	else
		u->cbar_waiters = x;
	u->cbar_waiters_tail = x;
	x->wait_file = file;
	x->wait_line = line;
	lane_block_flushed(x, L_CBARRIER);
}

/* Barriers whose missing threads have exited can complete now (divergent). */
static int settle_barriers(struct cta_sim *s, struct cta__unit *u)
{
	int woke = 0;
	if (u->watchdog)
		return 0; /* its barriers stay where the watchdog stopped them */
	for (unsigned i = 0; i < u->nctas; i++) {
		struct cta__cta *c = &u->ctas[i];
		if (c->bar_arrived && c->bar_arrived + c->exited == c->nthreads) {
			struct cta__lane_x *w = c->bar_waiters;
			if (!c->bar_divergent_reported && !c->foreach_calls)
				cta__ub(s, UB_DIVERGENT_BARRIER, u, w, w ? w->wait_file : NULL,
				        w ? w->wait_line : 0,
				        "%" PRIu64 " of the block's %" PRIu64
				        " threads exited without reaching this barrier",
				        c->exited, (uint64_t)c->nthreads);
			barrier_release(s, u, c, NULL);
			woke = 1;
		}
	}
	uint64_t total = u->ctas[0].nthreads * u->nctas;
	uint64_t exited = u->cbar_arrived ? unit_exited(u) : 0;
	if (u->cbar_arrived && u->cbar_arrived + exited == total) {
		struct cta__lane_x *w = u->cbar_waiters;
		cta__ub(s, UB_DIVERGENT_BARRIER, u, w, w ? w->wait_file : NULL,
		        w ? w->wait_line : 0,
		        "%" PRIu64 " threads of the cluster exited without reaching this cluster "
		        "barrier",
		        exited);
		cluster_release(s, u, NULL);
		woke = 1;
	}
	return woke;
}

static int unit_waits_for_engine(const struct cta__unit *u)
{
	if (u->new_reqs || u->nspin)
		return 1;
	for (unsigned i = 0; i < u->nctas; i++)
		for (const struct cta__mbar *b = u->ctas[i].mbars; b; b = b->next)
			if (b->unresolved && b->waiters)
				return 1;
	return 0;
}

static const char *state_name(enum lstate st)
{
	switch (st) {
	case L_BARRIER:
		return "__syncthreads";
	case L_CBARRIER:
		return "the cluster barrier";
	case L_MBAR:
		return "an mbarrier that no pending arrival or transaction can complete";
	case L_SPIN:
		return "a spin on global memory";
	default:
		return "something";
	}
}

static unsigned lane_rank(const struct cta__lane_x *x)
{
	const struct cta__lane *l = &x->l;
	return l->tid.x + l->bdim.x * (l->tid.y + l->bdim.y * l->tid.z);
}

/* Every remaining lane waits for something that cannot happen: report it,
 * then retire the unit so the run can go on. */
static void unit_deadlock(struct cta_sim *s, struct cta__unit *u)
{
	struct cta__lane_x *first = NULL, *other = NULL;
	unsigned waiting = 0;
	for (struct cta__lane_x *x = u->all; x; x = x->next_all) {
		if (x->state == L_DONE || !x->l.active)
			continue;
		/* (A compiled block waiting as a whole stands for its threads.) */
		waiting += x->kc_park ? cta__regions_park_waiting(x) : 1;
		if (!first)
			first = x;
		else if (!other && x->state != first->state)
			other = x;
	}
	if (first && !u->watchdog) {
		if (other)
			cta__ub(s, UB_BARRIER_DEADLOCK, u, first, first->wait_file,
			        first->wait_line,
			        "%u threads can never continue: this one waits at %s while thread "
			        "%u waits at %s (%s:%d)",
			        waiting, state_name(first->state), lane_rank(other),
			        state_name(other->state), other->wait_file ? other->wait_file : "?",
			        other->wait_line);
		else
			cta__ub(s, UB_BARRIER_DEADLOCK, u, first, first->wait_file,
			        first->wait_line, "%u threads can never continue: they wait at %s",
			        waiting, state_name(first->state));
	}
	uint64_t tmax = u->start_t;
	for (struct cta__lane_x *x = u->all; x; x = x->next_all)
		if (x->l.vtime > tmax)
			tmax = x->l.vtime;
	for (unsigned i = 0; i < u->nctas; i++) {
		struct cta__cta *c = &u->ctas[i];
		if (!c->done) {
			c->exited = c->nthreads;
			if (tmax > c->end_t)
				c->end_t = tmax;
		}
	}
	u->cursor.left = 0;
	u->cursor.nret = 0;
	for (struct cta__lane_x *x = u->all; x; x = x->next_all)
		if (x->state != L_DONE) {
			x->state = L_DONE;
			x->abandoned = 1;
			u->lanes_abandoned = 1;
			u->live_lanes--;
		}
}

/* What the scheduler does once a unit's segment ends: a unit whose lanes
 * all wait for something no engine event can bring is deadlocked; CTAs
 * whose threads all exited are done. */
static inline __attribute__((always_inline)) void unit_settle(struct cta_sim *s,
                                                              struct cta__unit *u)
{
	if (u->live_lanes && !unit_waits_for_engine(u)) {
		int any_active = 0;
		for (struct cta__lane_x *x = u->all; x; x = x->next_all)
			any_active |= x->state != L_DONE;
		if (any_active)
			unit_deadlock(s, u);
	}
	for (unsigned i = 0; i < u->nctas; i++)
		cta_settle(s, u, &u->ctas[i]);
}

void cta__exec_units_run(struct cta_sim *s, struct cta__unit *const *v, size_t n)
{
	/* The scheduler context is this host thread's; lanes left waiting by
	 * an earlier segment (possibly on another thread) return here now. */
	struct cta__fiber *host = cta__fiber_host(cta__base_seg_worker->fpool);
	seg_v = v;
	seg_n = n;
	/* (Skipped periods run on the engine's thread alone: the workers of
	 * a parallel batch leave it be.) */
	if (s->skip_run && !s->skip_par)
		s->skip_lane = NULL;
	for (seg_i = 0; seg_i < n; seg_i++) {
		struct cta__unit *u = seg_unit(s, seg_i);
		if (!u)
			continue;
		seg_enter(s, u, host);
		struct cta__lane_x *first = pick_next(s, u, NULL);
		if (first == &pick_failed)
			continue;
		if (first) {
			lane_runner(first);
			/* Lanes then pass control among themselves (lane_leave),
			 * runners going on to the following units, and come back
			 * here once nothing of the unit now running can run. */
			seg_failed = 0;
			cta__cur = &first->l;
			cta__fiber_switch(host, first->fiber);
			cta__cur = NULL;
			/* A lane of this solo unit committed it and stepped
			 * the engine on (lane_engine). */
			if (s->solo_done)
				break;
			u = v[seg_i];
			if (seg_failed)
				continue;
		}
		unit_settle(s, u);
		/* Its lanes back to this host thread's spare list now, not at
		 * the commit: a parallel batch commits after its last unit, and
		 * a wave's units on fibers held a lane per thread until then
		 * (70 MB for block_reduce on fibers at two host threads). */
		lanes_recycle(u);
		seg_leave(s);
	}
	seg_v = NULL;
	seg_n = 0;
	cta__base_seg_unit = NULL;
}

/* The body gets a pointer into c's shared memory: the next block on this
 * CTA's arena must find it zeroed again (as far as this block can have
 * written: the kernel's lines are in cache, the unit's allocation size
 * may not be). */
static inline void smem_handed_out(struct cta__unit *u, struct cta__cta *c)
{
	if (__builtin_expect(c->smem_dirty & CTA__SMEM_STALE, 0))
		zero(c->smem, c->smem_dirty & ~CTA__SMEM_STALE);
	c->smem_dirty =
	    (unsigned)cta__base_smem_need(u->k); /* at most the SM's shared memory + 80 */
}

void cta__exec_smem_handed_out(struct cta__unit *u, struct cta__cta *c)
{
	smem_handed_out(u, c);
}

/* Shared memory: each declaration site gets an offset in the CTA's arena
 * the first time any thread of the CTA reaches it. */
void *cta__shared(const struct cta__smem_site *site)
{
	struct cta__lane_x *x = cta__exec_lane_self();
	struct cta__cta *c = cta__exec_lane_cta(x);
	smem_handed_out(x->l.unit, c);
	for (unsigned i = 0; i < c->nsites; i++)
		if (c->sites[i] == site)
			return c->smem + c->site_off[i];
	struct cta__kernel *k = x->l.unit->k;
	size_t align = site->align ? site->align : 1;
	size_t off = (c->smem_top + align - 1) & ~(align - 1);
	if (c->nsites == sizeof(c->sites) / sizeof(c->sites[0]) ||
	    off + site->size > k->smem_bytes) {
		/* The launch declared less static shared memory than the body
		 * uses: this is an input error of the harness, stop cleanly. */
		if (c->nsites == sizeof(c->sites) / sizeof(c->sites[0]))
			cta__base_out_error(
			    x->l.unit,
			    "kernel %s: shared variable '%s': more than %zu shared-memory "
			    "declarations in one block (the simulator's limit)",
			    k->label, site->name, sizeof(c->sites) / sizeof(c->sites[0]));
		else
			cta__base_out_error(
			    x->l.unit,
			    "kernel %s: shared variable '%s' (%zu bytes) does not fit in the "
			    "%zu bytes of shared memory its launch declares (smem_static + "
			    "smem_dynamic)",
			    k->label, site->name, site->size, k->smem_bytes);
		static _Thread_local unsigned char scratch[1 << 16] __attribute__((aligned(64)));
		return site->size <= sizeof(scratch) ? scratch : NULL;
	}
	c->sites[c->nsites] = site;
	c->site_off[c->nsites++] = off;
	c->smem_top = off + site->size;
	return c->smem + off;
}

void *cta__shared_dynamic(void)
{
	struct cta__lane_x *x = cta__exec_lane_self();
	struct cta__cta *c = cta__exec_lane_cta(x);
	smem_handed_out(x->l.unit, c);
	return c->smem;
}

unsigned cta_smid(void)
{
	struct cta__lane_x *x = cta__exec_lane_self();
	return cta__exec_lane_cta(x)->sm;
}

const uint3 *cta__blockidx_in_body(const char *file, int line)
{
	struct cta__lane_x *x = cta__exec_lane_self();
	struct cta__unit *u = x->l.unit;
	cta__ub(u->sim, UB_BUILTIN_BLOCKIDX_IN_BODY, u, x, file, line,
	        "blockIdx is the physical block (%u,%u,%u); the work-stealing body was called "
	        "with a stolen index that must be used instead",
	        x->l.bid.x, x->l.bid.y, x->l.bid.z);
	return &x->l.bid;
}
