/* The sanitizer for kernel bodies (--sanitize memcheck|racecheck|initcheck),
 * as compute-sanitizer is on a GPU. gcc's kernel-address instrumentation
 * (kernels/sanitized.c) turns every load and store of the kernels' second
 * build into a call of __asan_{load,store}N_noabort(addr); ctasim defines
 * those here: an address in the running block's shared memory or in a
 * harness buffer (or its red zones) is checked, anything else (the stack,
 * the argument copy, the simulator's own state) is left alone. Reports go
 * through the UB checker (sim/ub/ub.c), one per instruction (per pair of
 * instructions for a race), with thread, block, source place and buffer.
 * docs/SANITIZE.md is the reference. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <link.h>
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/base.h"
#include "exec/exec.h"
#include "exec/regions.h"
#include "sanitize/sanitize.h"

extern char **environ;

/* ---- the instrumented kernels ---------------------------------------- */

static const struct cta_kernel_def **san_defs;
static size_t nsan, capsan;

void cta__san_kernel_register(const struct cta_kernel_def *k)
{
	if (nsan == capsan) {
		size_t cap = capsan ? capsan * 2 : 64;
		const struct cta_kernel_def **n = realloc(san_defs, cap * sizeof(*n));
		if (!n)
			return; /* at load time: that kernel then has no sanitized build */
		san_defs = n;
		capsan = cap;
	}
	san_defs[nsan++] = k;
}

const struct cta_kernel_def *cta__san_kernel(const struct cta_kernel_def *k)
{
	/* Name, file and line: a user kernel of the same name (--load) is not
	 * ours. */
	for (size_t i = 0; k && i < nsan; i++)
		if (!strcmp(san_defs[i]->name, k->name) && san_defs[i]->line == k->line &&
		    !strcmp(san_defs[i]->file, k->file))
			return san_defs[i];
	return NULL;
}

int cta_sanitize_available(const struct cta_kernel_def *k)
{
	return cta__san_kernel(k) != NULL;
}

static const char *const tool_names[] = {"none", "memcheck", "racecheck", "initcheck"};

const char *cta_sanitize_tool_name(cta_sanitize_tool t)
{
	return (unsigned)t < 4 ? tool_names[t] : "?";
}

int cta_sanitize_tool_parse(const char *name)
{
	for (int i = 0; name && i < 4; i++)
		if (!strcmp(name, tool_names[i]))
			return i;
	return -1;
}

/* ---- the shadow ---------------------------------------------------------
 * Where the instrumented kernels check inline (the build's default on
 * x86-64 Linux), gcc puts before each load and store of n bytes at a the
 * test of ASan's shadow byte, *(signed char *)((a >> 3) + OFFSET): 0 lets
 * the access go with no call, anything else calls the report builtin, which
 * ends in check() below. So only the bytes that need a look are marked:
 * the red zones and released bodies of harness buffers, and shared
 * memory (all of it for racecheck and initcheck, which follow every
 * access; past the launch's declared bytes for memcheck). The shadow of
 * the whole user address space (2^47 bytes: 16 TiB of reserved, unbacked
 * memory) is mapped once, at the fixed address the kernels were compiled
 * for; pages of it never marked read as zeros and cost nothing. Builds
 * whose kernels call for every access (ThreadSanitizer builds: the
 * address is inside TSan's own shadow) register offset 0 and map none. */
#define SHADOW_SIZE ((uintptr_t)1 << 44)
#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000 /* (Linux's value; glibc < 2.28 lacks it) */
#endif
enum {
	SH_PARTIAL_MAX = 7, /* 1-7: only that many leading bytes of the 8 are valid */
	SH_SHARED = 0xf8,   /* shared memory: every access is looked at */
	SH_REDZONE = 0xfa,  /* a harness buffer's red zone */
	SH_FREED = 0xfd,    /* a buffer the harness released */
};
static uintptr_t shadow_off; /* the kernels' -fasan-shadow-offset; 0: calls only */
static int shadow_state;     /* 0: not mapped yet, 1: mapped, -1: could not be */
static int shadow_errno;
static pthread_mutex_t shadow_lock = PTHREAD_MUTEX_INITIALIZER;

void cta__san_shadow_offset(uintptr_t off)
{
	shadow_off = off;
}

/* 1 when the shadow is there to mark, 0 when the kernels need none, -1
 * (errno in shadow_errno) when it could not be mapped. A raw system call:
 * under AddressSanitizer the mmap interceptor would walk ASan's own
 * shadow of 16 TiB. */
static int shadow_ready(void)
{
	if (!shadow_off)
		return 0;
	/* (Once mapped it stays so: every block's start asks, with no lock.) */
	if (__atomic_load_n(&shadow_state, __ATOMIC_ACQUIRE) == 1)
		return 1;
	pthread_mutex_lock(&shadow_lock);
	if (!shadow_state) {
		long r = syscall(SYS_mmap, shadow_off, SHADOW_SIZE, PROT_READ | PROT_WRITE,
		                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE,
		                 -1, 0);
		if (r == -1 || (uintptr_t)r != shadow_off) {
			/* (A kernel older than 4.17 takes the address as a hint.) */
			shadow_errno = r == -1 ? errno : EEXIST;
			if (r != -1)
				syscall(SYS_munmap, r, SHADOW_SIZE);
			shadow_state = -1;
		} else {
			/* Marks are sparse: a huge page per write would cost 2 MiB. */
			(void)madvise((void *)shadow_off, SHADOW_SIZE, MADV_NOHUGEPAGE);
			__atomic_store_n(&shadow_state, 1, __ATOMIC_RELEASE);
		}
	}
	int st = shadow_state;
	pthread_mutex_unlock(&shadow_lock);
	return st;
}

/* Marks the shadow of every granule [lo, hi) touches (lo 8-aligned) with
 * v. */
static void shadow_mark(uintptr_t lo, uintptr_t hi, unsigned char v)
{
	if (hi <= lo || shadow_ready() <= 0)
		return;
	unsigned char *s = (unsigned char *)((lo >> 3) + shadow_off);
	size_t n = ((hi - lo) + 7) >> 3;
	if (v) {
		memset(s, v, n);
		return;
	}
	/* Clearing: only what is marked. Writing zeros over the rest would
	 * back its pages (the shadow of a 16 MiB buffer is 2 MiB), where
	 * reads now share the kernel's zero page, which stays in the cache. */
	size_t i = 0;
	for (; i < n && ((uintptr_t)(s + i) & 7); i++)
		if (s[i])
			s[i] = 0;
	for (; i + 8 <= n; i += 8)
		if (*(const uint64_t *)(const void *)(s + i))
			memset(s + i, 0, 8);
	for (; i < n; i++)
		if (s[i])
			s[i] = 0;
}

/* [lo, hi) valid (lo 8-aligned): a last partial granule holds its count of
 * valid bytes, which the inline test compares with the access's end. */
static void shadow_valid(uintptr_t lo, uintptr_t hi)
{
	shadow_mark(lo, hi & ~(uintptr_t)7, 0);
	if ((hi & 7) && hi > lo)
		shadow_mark(hi & ~(uintptr_t)7, hi, (unsigned char)(hi & 7));
}

/* ---- harness buffers ---------------------------------------------------
 * Process-wide, sorted by address: buffers belong to harnesses, which know
 * nothing of the simulator that runs them. Changed only by harness setup
 * and teardown; read by the checks, which run on one host thread. */
struct sbuf {
	uintptr_t lo, hi; /* the buffer; [lo - RZ, hi + RZ) is its own */
	int freed;
	unsigned index;
	char owner[48];
};
static struct sbuf *bufs;
static size_t nbufs, capbufs;
static uintptr_t bufs_lo = UINTPTR_MAX, bufs_hi; /* span of every [lo - RZ, hi + RZ) */
static pthread_mutex_t bufs_lock = PTHREAD_MUTEX_INITIALIZER;

/* The valid bytes of the last two live buffers memcheck found an access
 * in (saxpy's x and y): most accesses of a kernel land there, and need no
 * search. Per host thread, valid while bufs_epoch has not moved (every
 * change of the buffers moves it). */
static uint64_t bufs_epoch = 1;
static _Thread_local uintptr_t hit_lo[2] __attribute__((tls_model("initial-exec")));
static _Thread_local uintptr_t hit_len[2] __attribute__((tls_model("initial-exec")));
static _Thread_local uint64_t hit_epoch __attribute__((tls_model("initial-exec")));

static void bufs_span(void)
{
	__atomic_store_n(&bufs_epoch, bufs_epoch + 1, __ATOMIC_RELAXED);
	bufs_lo = UINTPTR_MAX;
	bufs_hi = 0;
	for (size_t i = 0; i < nbufs; i++) {
		if (bufs[i].lo - CTA__SAN_REDZONE < bufs_lo)
			bufs_lo = bufs[i].lo - CTA__SAN_REDZONE;
		if (bufs[i].hi + CTA__SAN_REDZONE > bufs_hi)
			bufs_hi = bufs[i].hi + CTA__SAN_REDZONE;
	}
}

void cta__san_buffer_add(const void *p, size_t bytes, const char *owner, unsigned index)
{
	pthread_mutex_lock(&bufs_lock);
	if (nbufs == capbufs) {
		size_t cap = capbufs ? capbufs * 2 : 16;
		struct sbuf *n = realloc(bufs, cap * sizeof(*n));
		if (!n) {
			pthread_mutex_unlock(&bufs_lock);
			return; /* unchecked, not wrong */
		}
		bufs = n;
		capbufs = cap;
	}
	uintptr_t lo = (uintptr_t)p;
	size_t i = nbufs;
	while (i > 0 && bufs[i - 1].lo > lo) {
		bufs[i] = bufs[i - 1];
		i--;
	}
	struct sbuf *b = &bufs[i];
	memset(b, 0, sizeof(*b));
	b->lo = lo;
	b->hi = lo + bytes;
	b->index = index;
	snprintf(b->owner, sizeof(b->owner), "%s", owner ? owner : "?");
	nbufs++;
	bufs_span();
	pthread_mutex_unlock(&bufs_lock);
	/* (cta_harness_alloc's buffers start 16-aligned after a red zone.) */
	shadow_mark(lo - CTA__SAN_REDZONE, lo, SH_REDZONE);
	shadow_valid(lo, lo + bytes);
	shadow_mark((lo + bytes + 7) & ~(uintptr_t)7, lo + bytes + CTA__SAN_REDZONE, SH_REDZONE);
}

static struct sbuf *buf_at(uintptr_t a)
{
	size_t lo = 0, hi = nbufs;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (bufs[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* bufs[lo - 1] starts at or below a; the next one may own a through
	 * its leading red zone. */
	if (lo < nbufs && a >= bufs[lo].lo - CTA__SAN_REDZONE)
		return &bufs[lo];
	if (lo > 0 && a < bufs[lo - 1].hi + CTA__SAN_REDZONE)
		return &bufs[lo - 1];
	return NULL;
}

void cta__san_buffer_release(const void *p)
{
	pthread_mutex_lock(&bufs_lock);
	struct sbuf *b = buf_at((uintptr_t)p);
	if (b && b->lo == (uintptr_t)p) {
		b->freed = 1;
		shadow_mark(b->lo, b->hi, SH_FREED);
	}
	bufs_span();
	pthread_mutex_unlock(&bufs_lock);
}

void cta__san_buffer_forget(const void *p)
{
	pthread_mutex_lock(&bufs_lock);
	for (size_t i = 0; i < nbufs; i++)
		if (bufs[i].lo == (uintptr_t)p) {
			/* The body's shadow was written only if it was released:
			 * clearing it otherwise would back its pages for nothing. */
			uintptr_t lo = bufs[i].lo, hi = bufs[i].hi;
			shadow_mark(lo - CTA__SAN_REDZONE, bufs[i].freed ? hi : lo, 0);
			shadow_mark(hi & ~(uintptr_t)7, hi + CTA__SAN_REDZONE, 0);
			memmove(&bufs[i], &bufs[i + 1], (nbufs - i - 1) * sizeof(*bufs));
			nbufs--;
			break;
		}
	bufs_span();
	pthread_mutex_unlock(&bufs_lock);
}

/* ---- per-simulator state ---------------------------------------------- */

/* What racecheck and initcheck keep per byte of a block's shared memory:
 * one word, so that an access of 8 bytes reads one cache line of it (the
 * blocks resident at once each have an arena, and a new block's first
 * touches miss the cache). Epochs count barrier intervals on the arena,
 * across its blocks: a block starts above every epoch an earlier one used,
 * so an older word reads as never touched and a new block clears nothing.
 * Threads are linear ranks in the block (MANY_READERS: more than one);
 * the instructions, as indices of the sanitizer's table of PCs, sit in a
 * word of their own per byte, read only to write a report. */
#define EP_BITS      21
#define EP_MAX       ((1u << EP_BITS) - 1)
#define T_BITS       11
#define MANY_READERS ((1u << T_BITS) - 1)
#define W_EP(v)      ((uint32_t)(v)&EP_MAX)
#define W_T(v)       ((uint32_t)((v) >> EP_BITS) & MANY_READERS)
#define R_EP(v)      ((uint32_t)((v) >> 32) & EP_MAX)
#define R_T(v)       ((uint32_t)((v) >> (32 + EP_BITS)))
#define WORD(wep, wt, rep, rt)                                                                     \
	((uint64_t)(wep) | (uint64_t)(wt) << EP_BITS | (uint64_t)(rep) << 32 |                     \
	 (uint64_t)(rt) << (32 + EP_BITS))
/* A granule whose bytes have words of their own (its epoch, EP_MAX, is
 * never one a block uses). */
#define SPLIT (~(uint64_t)0)
/* racecheck's granule: the epoch of its last accesses and their thread
 * (MANY_READERS: several read it), whether that thread wrote it, and the
 * instruction that is the other side of a race with it: the write, else
 * the last read. Bytes whose words hold what this cannot (a write and
 * another thread's read in one epoch) stay split. compiler/san_pass.h
 * tests and writes this layout inline. */
#define G_LO(v)   ((uint32_t)(v))
#define G_WRITTEN ((uint64_t)1 << 32)
#define G_PC(v)   ((uint32_t)((v) >> 48))
#define G(ep, t)  ((uint64_t)(ep) | (uint64_t)(t) << EP_BITS)

/* The words of one running block. A block needs them only while its
 * threads run: a finished block's go to the next block that starts, so
 * blocks that run one after another (the region form runs a block from
 * its first thread to its last) reuse the same few, warm in the cache,
 * rather than each of the hundreds of resident blocks' arenas having its
 * own, cold by the time the arena's next block starts. */
struct recs {
	size_t cap;   /* bytes (a multiple of 8) */
	uint32_t top; /* the highest epoch used in these words */
	/* Per 8-byte granule, the state of its 8 bytes when they have one
	 * (what an access of 8 aligned bytes decides on, and all the
	 * instrumented loop form tests inline), else SPLIT and the bytes' own
	 * words in w and pcs. initcheck: the bytes' word. racecheck: G_*. */
	uint64_t *g;
	uint64_t *w;   /* per byte: WORD(write epoch, writer, read epoch, readers) */
	uint32_t *pcs; /* per byte: write PC index << 16 | read PC index */
	struct shadow *owner;
	struct recs *next_free;
};

/* The shadow of one CTA's arena, and the block it belongs to. */
struct shadow {
	const unsigned char *arena;
	size_t marked; /* bytes of the arena marked in the shadow (SH_SHARED) */
	/* What the last block's start marked, [mfrom, mto), while nothing
	 * changed those marks since (mkept; initcheck's open_written clears
	 * it): a next block with the same bytes finds them marked. */
	size_t mfrom, mto;
	int mkept;
	struct cta__unit *unit;
	const struct cta__kernel *k;
	uint64_t index;
	uint64_t start_t;
	unsigned rank;
	uint32_t base; /* the block's first epoch: older words are other blocks' */
	/* initcheck: the block (its base) whose first region writes its
	 * first `whole` bytes whole (cta__san_region) */
	uint32_t wbase;
	size_t whole;
	uint64_t bar0; /* the block's barrier count at epoch base */
	struct recs *r;
};

struct place {
	uintptr_t pc;
	const char *file;
	int line;
};

struct cta__san {
	cta_sanitize_tool tool;
	struct cta__san_fast fast; /* what cta__san_region hands the loop form */
	struct shadow *sh;         /* open addressing by arena address */
	size_t nsh, capsh;
	struct shadow *last;
	struct recs **recs; /* every one made, and those no block holds */
	size_t nrecs, caprecs;
	struct recs *free_recs;
	struct recs *hot; /* the words a block last took */
	uint64_t *seen;   /* reports made: (rule, pc, other pc) keys, open addressing */
	size_t nseen, capseen;
	struct place *places; /* symbolised PCs */
	size_t nplaces, capplaces;
};

/* Interned file names of every report (reports keep the pointer). */
static char **files;
static size_t nfiles, capfiles;

/* CTASIM_SAN_ALL_TESTED set: every thread loop of the instrumented loop
 * form runs its tested copy (cta__san_span says no), for comparing the
 * outputs of both routes (tests/cli/sanitize.sh). */
static int all_tested;

int cta__san_sim_new(struct cta_sim *s)
{
	all_tested = getenv("CTASIM_SAN_ALL_TESTED") != NULL;
	s->san = calloc(1, sizeof(*s->san));
	if (!s->san)
		return CTA_ENOMEM;
	s->san->tool = s->o.sanitize;
	return 0;
}

void cta__san_sim_free(struct cta_sim *s)
{
	struct cta__san *z = s->san;
	if (!z)
		return;
	for (size_t i = 0; i < z->capsh; i++) {
		/* The arenas go back to malloc: their marks would send other
		 * memory's accesses through check(). */
		if (z->sh[i].marked)
			shadow_mark((uintptr_t)z->sh[i].arena,
			            (uintptr_t)z->sh[i].arena + z->sh[i].marked, 0);
	}
	for (size_t i = 0; i < z->nrecs; i++) {
		free(z->recs[i]->g);
		free(z->recs[i]->w);
		free(z->recs[i]->pcs);
		free(z->recs[i]);
	}
	free(z->recs);
	free(z->sh);
	free(z->seen);
	free(z->places);
	free(z);
	s->san = NULL;
}

int cta__san_launch_ready(struct cta_sim *s)
{
	if (shadow_ready() >= 0)
		return 0;
	cta__base_errf(s,
	               "--sanitize: cannot map the shadow memory the instrumented kernels test (16 "
	               "TiB of address space, unbacked, at 0x%" PRIxPTR "): %s",
	               shadow_off, strerror(shadow_errno));
	return CTA_EUNSUPPORTED;
}

/* PCs are kept as 32-bit offsets from here: the instrumented kernels are
 * linked into the same program. */
static void pc_anchor(void)
{
}
#define PC_BASE ((uintptr_t)&pc_anchor)

/* ---- source places ------------------------------------------------------
 * A report names the source line of the instruction: addr2line reads it
 * from the program's debug information (the instrumented kernels are built
 * with -g). Only on the report path, and once per instruction. */
static const char *intern(const char *f)
{
	for (size_t i = 0; i < nfiles; i++)
		if (!strcmp(files[i], f))
			return files[i];
	if (nfiles == capfiles) {
		size_t cap = capfiles ? capfiles * 2 : 16;
		char **n = realloc(files, cap * sizeof(*n));
		if (!n)
			return "?";
		files = n;
		capfiles = cap;
	}
	char *d = strdup(f);
	if (!d)
		return "?";
	files[nfiles++] = d;
	return d;
}

/* "a/b/../c" -> "a/c", and the current directory's prefix dropped. */
static void tidy_path(char *p)
{
	char *q;
	while ((q = strstr(p, "/../")) != NULL) {
		char *start = q;
		while (start > p && start[-1] != '/')
			start--;
		if (start == q)
			break;
		memmove(start, q + 4, strlen(q + 4) + 1);
	}
	char cwd[1024];
	if (getcwd(cwd, sizeof(cwd))) {
		size_t n = strlen(cwd);
		if (!strncmp(p, cwd, n) && p[n] == '/')
			memmove(p, p + n + 1, strlen(p + n + 1) + 1);
	}
}

static int addr2line(const char *obj, uintptr_t addr, char *out, size_t len)
{
	int fd[2];
	if (pipe(fd) < 0)
		return -1;
	char a[32];
	snprintf(a, sizeof(a), "0x%" PRIxPTR, addr);
	char *argv[] = {"addr2line", "-i", "-e", (char *)obj, a, NULL};
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fd[1], 1);
	posix_spawn_file_actions_addclose(&fa, fd[0]);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", 1 /* O_WRONLY */, 0);
	pid_t pid;
	int rc = posix_spawnp(&pid, "addr2line", &fa, NULL, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fd[1]);
	size_t n = 0;
	if (!rc) {
		ssize_t r;
		while (n + 1 < len && (r = read(fd[0], out + n, len - 1 - n)) > 0)
			n += (size_t)r;
		int st;
		while (waitpid(pid, &st, 0) < 0)
			;
	}
	close(fd[0]);
	out[n] = 0;
	return rc ? -1 : 0;
}

static void symbolize(struct cta__san *z, uintptr_t pc, const char **file, int *line)
{
	for (size_t i = 0; i < z->nplaces; i++)
		if (z->places[i].pc == pc) {
			*file = z->places[i].file;
			*line = z->places[i].line;
			return;
		}
	*file = "?";
	*line = 0;
	Dl_info di;
	if (dladdr((void *)pc, &di) && di.dli_fbase) {
		const ElfW(Ehdr) *eh = di.dli_fbase;
		uintptr_t addr = pc - 1; /* the call, not the return address */
		if (eh->e_type == ET_DYN)
			addr -= (uintptr_t)di.dli_fbase;
		const char *obj = di.dli_fname && di.dli_fname[0] && access(di.dli_fname, R_OK) == 0
		                      ? di.dli_fname
		                      : "/proc/self/exe";
		char buf[2048];
		if (addr2line(obj, addr, buf, sizeof(buf)) == 0 && buf[0] && buf[0] != '?') {
			/* The first line is the innermost (inlined) place. */
			char *nl = strchr(buf, '\n');
			if (nl)
				*nl = 0;
			char *sp = strstr(buf, " (discriminator");
			if (sp)
				*sp = 0;
			char *colon = strrchr(buf, ':');
			if (colon) {
				*colon = 0;
				*line = atoi(colon + 1);
				tidy_path(buf);
				*file = intern(buf);
			}
		}
	}
	if (z->nplaces == z->capplaces) {
		size_t cap = z->capplaces ? z->capplaces * 2 : 16;
		struct place *n = realloc(z->places, cap * sizeof(*n));
		if (!n)
			return;
		z->places = n;
		z->capplaces = cap;
	}
	z->places[z->nplaces++] = (struct place){pc, *file, *line};
}

/* 1 the first time (rule, pc, other) is seen: one report per instruction
 * (per pair for races), as compute-sanitizer groups its hazards. */
static int first_time(struct cta__san *z, unsigned rule, uintptr_t pc, uintptr_t other)
{
	uint64_t key = ((uint64_t)rule << 58) ^ ((uint64_t)(pc - PC_BASE) << 29) ^
	               (uint64_t)(other ? other - PC_BASE : 0) ^ 1;
	if (2 * (z->nseen + 1) > z->capseen) {
		size_t cap = z->capseen ? z->capseen * 2 : 64;
		uint64_t *n = calloc(cap, sizeof(*n));
		if (!n)
			return 0;
		for (size_t i = 0; i < z->capseen; i++)
			if (z->seen[i]) {
				size_t j = (size_t)(z->seen[i] * 0x9e3779b97f4a7c15ull) & (cap - 1);
				while (n[j])
					j = (j + 1) & (cap - 1);
				n[j] = z->seen[i];
			}
		free(z->seen);
		z->seen = n;
		z->capseen = cap;
	}
	size_t j = (size_t)(key * 0x9e3779b97f4a7c15ull) & (z->capseen - 1);
	while (z->seen[j]) {
		if (z->seen[j] == key)
			return 0;
		j = (j + 1) & (z->capseen - 1);
	}
	z->seen[j] = key;
	z->nseen++;
	return 1;
}

/* ---- shared memory ------------------------------------------------------ */

/* "variable 'name' + off" for an offset of c's arena. */
static void smem_name(const struct cta__cta *c, const struct cta__kernel *k, size_t off, char *buf,
                      size_t len)
{
	if (off < k->l.smem_dynamic) {
		snprintf(buf, len, "dynamic shared memory + %zu", off);
		return;
	}
	for (unsigned i = 0; i < c->nsites; i++) {
		const struct cta__smem_site *site = c->sites[i];
		if (off >= c->site_off[i] && off < c->site_off[i] + site->size) {
			snprintf(buf, len, "shared variable '%s' + %zu (%zu bytes)", site->name,
			         off - c->site_off[i], site->size);
			return;
		}
	}
	snprintf(buf, len, "shared memory offset %zu", off);
}

/* The entry of arena in z's table, made if new; NULL without memory. */
static struct shadow *shadow_slot(struct cta__san *z, const unsigned char *arena)
{
	if (z->last && z->last->arena == arena)
		return z->last; /* (a block's start and its loops ask again) */
	if (2 * (z->nsh + 1) > z->capsh) {
		size_t cap = z->capsh ? z->capsh * 2 : 64;
		struct shadow *n = calloc(cap, sizeof(*n));
		if (!n)
			return NULL;
		for (size_t i = 0; i < z->capsh; i++)
			if (z->sh[i].arena) {
				size_t j = ((uintptr_t)z->sh[i].arena >> 6) & (cap - 1);
				while (n[j].arena)
					j = (j + 1) & (cap - 1);
				n[j] = z->sh[i];
				if (n[j].r)
					n[j].r->owner = &n[j]; /* (it moved) */
			}
		free(z->sh);
		z->sh = n;
		z->capsh = cap;
		z->last = NULL;
	}
	size_t j = ((uintptr_t)arena >> 6) & (z->capsh - 1);
	while (z->sh[j].arena && z->sh[j].arena != arena)
		j = (j + 1) & (z->capsh - 1);
	struct shadow *h = &z->sh[j];
	if (!h->arena) {
		h->arena = arena;
		z->nsh++;
	}
	z->last = h;
	return h;
}

/* Whether the block h last saw has no thread left to run (its unit moved
 * on to another block, or every thread of its CTA exited). */
static int block_done(const struct shadow *h)
{
	const struct cta__unit *u = h->unit;
	if (!u || !u->live || u->k != h->k || u->index != h->index || u->start_t != h->start_t ||
	    h->rank >= u->nctas)
		return 1;
	const struct cta__cta *c = &u->ctas[h->rank];
	return c->exited >= c->nthreads;
}

/* r, which no block holds, grown to words for an arena of cap bytes; 0
 * without memory (r is then kept, empty, among the free ones). */
static int recs_fit(struct cta__san *z, struct recs *r, size_t cap)
{
	cap = (cap + 7) & ~(size_t)7;
	if (r->cap < cap) {
		free(r->g);
		free(r->w);
		free(r->pcs);
		r->g = calloc(cap / 8, sizeof(*r->g));
		r->w = calloc(cap, sizeof(*r->w));
		r->pcs = calloc(cap, sizeof(*r->pcs));
		r->cap = r->g && r->w && r->pcs ? cap : 0;
		r->top = 0;
		if (!r->cap) {
			r->next_free = z->free_recs;
			z->free_recs = r;
			return 0;
		}
	}
	return 1;
}

/* Words for a new block of an arena of cap bytes: a free set, else one a
 * finished block holds, else a new one. */
static struct recs *take_recs(struct cta__san *z, size_t cap)
{
	struct recs *r = z->free_recs;
	if (r) {
		z->free_recs = r->next_free;
	} else {
		for (size_t i = 0; i < z->nrecs && !r; i++)
			if (z->recs[i]->owner && block_done(z->recs[i]->owner)) {
				r = z->recs[i];
				r->owner->r = NULL;
				r->owner = NULL;
			}
	}
	if (!r) {
		if (z->nrecs == z->caprecs) {
			size_t c = z->caprecs ? z->caprecs * 2 : 16;
			struct recs **n = realloc(z->recs, c * sizeof(*n));
			if (!n)
				return NULL;
			z->recs = n;
			z->caprecs = c;
		}
		r = calloc(1, sizeof(*r));
		if (!r)
			return NULL;
		z->recs[z->nrecs++] = r;
	}
	return recs_fit(z, r, cap) ? r : NULL;
}

static struct shadow *shadow_of(struct cta__san *z, struct cta__lane_x *x)
{
	const struct cta__cta *c = x->cta;
	const struct cta__unit *u = x->l.unit;
	struct shadow *h = z->last;
	if (!h || h->arena != c->smem) {
		h = shadow_slot(z, c->smem);
		if (!h)
			return NULL;
		z->last = h;
	}
	unsigned rank = x->l.cta_rank;
	const uint64_t bars = x->cta->bar_gen + u->cbar_gen;
	if (h->unit != u || h->k != u->k || h->index != u->index || h->start_t != u->start_t ||
	    h->rank != rank || !h->r) {
		/* A new block on this memory: everything it holds is older. */
		if (h->r) {
			h->r->owner = NULL;
			h->r->next_free = z->free_recs;
			z->free_recs = h->r;
		}
		h->r = NULL;
		/* The words the last block used, when it is done: warm in the
		 * cache, where this arena's own last ones (hundreds of blocks
		 * ago) are not. */
		struct recs *r = z->hot;
		if (r && r->owner && r->owner != h && block_done(r->owner)) {
			r->owner->r = NULL;
			r->owner = NULL;
			if (!recs_fit(z, r, u->cap_smem))
				r = NULL;
		} else {
			r = NULL;
		}
		if (!r)
			r = take_recs(z, u->cap_smem);
		if (!r)
			return NULL;
		r->owner = h;
		h->r = r;
		z->hot = r;
		h->unit = (struct cta__unit *)u;
		h->k = u->k;
		h->index = u->index;
		h->start_t = u->start_t;
		h->rank = rank;
		if (r->top >= EP_MAX - 2) {
			memset(r->g, 0, r->cap / 8 * sizeof(*r->g));
			memset(r->w, 0, r->cap * sizeof(*r->w));
			r->top = 0;
		}
		h->base = r->top + 1;
		h->bar0 = bars;
	} else if (bars - h->bar0 >= EP_MAX - h->base) {
		/* This block ran out of epochs (EP_MAX is SPLIT's): keep only
		 * what a later epoch needs (which bytes it wrote), as epoch 1,
		 * and go on from 2. */
		struct recs *r = h->r;
		for (size_t i = 0; i < r->cap / 8; i++)
			if (r->g[i] != SPLIT)
				r->g[i] =
				    z->tool == CTA_SANITIZE_INITCHECK && W_EP(r->g[i]) >= h->base
				        ? WORD(1, 0, 0, 0)
				        : 0;
		for (size_t i = 0; i < r->cap; i++)
			r->w[i] = W_EP(r->w[i]) >= h->base ? WORD(1, 0, 0, 0) : 0;
		h->base = 1;
		h->bar0 = bars - 1;
		r->top = 1;
	}
	return h;
}

/* racecheck's PCs, process-wide: index -> offset from PC_BASE (0: none),
 * and the lookup by PC (open addressing). Process-wide because the
 * instrumented loop form (compiler/san_pass.h) keeps each access's index
 * in a variable of its own once the runtime has given it one. Inserted
 * under a lock; an index, once given, never changes. The PCs looked up
 * last are direct-mapped by address per host thread: a loop's few
 * instructions alternate, and each must not cost a probe. */
#define PC_MAX 65536
static int32_t pcv[PC_MAX];
static uint16_t pch[2 * PC_MAX];
static size_t npcv = 1; /* index 0: none */
static pthread_mutex_t pc_lock = PTHREAD_MUTEX_INITIALIZER;
static _Thread_local struct {
	uintptr_t pc;
	uint16_t i;
} pcc[64] __attribute__((tls_model("initial-exec")));

/* Whether k's accesses to its declared shared bytes are tested by its
 * code (the kernel compiler's instrumented loop form, compiler/san_pass.h)
 * rather than through the shadow. */
static int tests_inline(const struct cta__kernel *k)
{
	return k->kc && k->kc->fis;
}

/* The index of pc in racecheck's table (0 when it is full). */
static uint16_t pc_index(uintptr_t pc)
{
	const size_t ci = (pc >> 1) & 63;
	if (pcc[ci].pc == pc)
		return pcc[ci].i;
	pthread_mutex_lock(&pc_lock);
	int32_t off = (int32_t)(pc - PC_BASE);
	size_t j = ((size_t)off * 0x9e3779b1u) & (2 * PC_MAX - 1);
	while (pch[j] && pcv[pch[j]] != off)
		j = (j + 1) & (2 * PC_MAX - 1);
	uint16_t i = pch[j];
	if (!i && npcv < PC_MAX) {
		pcv[npcv] = off;
		i = (uint16_t)npcv;
		pch[j] = i;
		__atomic_store_n(&npcv, npcv + 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&pc_lock);
	if (i) {
		pcc[ci].pc = pc;
		pcc[ci].i = i;
	}
	return i;
}

/* Marks arena for a block of u (see cta__san_unit_start); -1 when it
 * cannot (no memory for its entry), and the block then goes unchecked. */
static int mark_arena(struct cta__san *z, const struct cta__unit *u, const unsigned char *arena)
{
	const int inl = z->tool == CTA_SANITIZE_MEMCHECK || tests_inline(u->k);
	size_t from = inl ? u->k->smem_bytes : 0;
	uintptr_t a = (uintptr_t)arena;
	struct shadow *h = shadow_slot(z, arena);
	if (!h)
		return -1;
	if (h->mkept && h->mfrom == from && h->mto == u->cap_smem)
		return 0;
	if (from)
		shadow_valid(a, a + from);
	shadow_mark((a + from + 7) & ~(uintptr_t)7, a + u->cap_smem, SH_SHARED);
	h->mkept = 1; /* (until open_written changes a mark) */
	h->mfrom = from;
	h->mto = u->cap_smem;
	if (u->cap_smem > h->marked)
		h->marked = u->cap_smem;
	return 0;
}

void cta__san_unit_start(struct cta_sim *s, const struct cta__unit *u)
{
	struct cta__san *z = s->san;
	if (shadow_ready() <= 0)
		return;
	/* memcheck follows the accesses past the launch's bytes only; the
	 * other two every access. The arenas outlive their blocks (a unit
	 * keeps its own): marked again for a block that needs other marks
	 * (another kernel's) or after initcheck opened written bytes; else
	 * the last block's marks stand, and a block's start costs a lookup. */
	for (unsigned i = 0; i < u->nctas; i++)
		(void)mark_arena(z, u, u->ctas[i].smem);
}

int cta__san_arena(struct cta_sim *s, const struct cta__unit *u, const unsigned char *arena)
{
	if (shadow_ready() <= 0)
		return shadow_ready() == 0 ? 0 : -1;
	return mark_arena(s->san, u, arena);
}

/* The library writes some shared memory itself (results of cancellation
 * requests, mbarriers): bytes a body never stored but may read. */
static int library_bytes(const struct cta__cta *c, size_t off)
{
	for (unsigned i = 0; i < c->nrslots && i < 8; i++)
		if (off >= c->rslots[i].off && off < c->rslots[i].off + sizeof(cta_clc_result))
			return 1;
	for (const struct cta__mbar *m = c->mbars; m; m = m->next)
		if ((const unsigned char *)m->addr <= c->smem + off &&
		    c->smem + off < (const unsigned char *)(m->addr + 1))
			return 1;
	return 0;
}

static unsigned rank_of(const struct cta__lane *l)
{
	return l->tid.x + l->bdim.x * (l->tid.y + l->bdim.y * l->tid.z);
}

static void report(struct cta__san *z, enum cta__ub_rule rule, struct cta__lane_x *x, uintptr_t pc,
                   uintptr_t other, const char *fmt, ...) __attribute__((format(printf, 6, 7)));
static void report(struct cta__san *z, enum cta__ub_rule rule, struct cta__lane_x *x, uintptr_t pc,
                   uintptr_t other, const char *fmt, ...)
{
	if (!first_time(z, rule, pc, other))
		return;
	const char *file;
	int line;
	symbolize(z, pc, &file, &line);
	char cause[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cause, sizeof(cause), fmt, ap);
	va_end(ap);
	struct cta__unit *u = x->l.unit;
	/* The vector form's loop may keep a thread's virtual time in a
	 * register until the loop ends; its threads all start at the run's
	 * start time, which the report names at least. */
	const uint64_t vt = x->l.vtime;
	if (x->l.vec && x->l.cursor && vt < x->l.cursor->t0)
		x->l.vtime = x->l.cursor->t0;
	cta__ub(u->sim, rule, u, x, file, line, "%s", cause);
	x->l.vtime = vt;
}

/* The PC of racecheck's index i (0 when the table was full). */
static uintptr_t pc_at(const struct cta__san *z, uint32_t i)
{
	(void)z;
	return i && i < __atomic_load_n(&npcv, __ATOMIC_ACQUIRE)
	           ? PC_BASE + (uintptr_t)(intptr_t)pcv[i]
	           : 0;
}

static const char *other_place(struct cta__san *z, uint32_t i, char *buf, size_t len)
{
	const char *file = "?";
	int line = 0;
	if (pc_at(z, i))
		symbolize(z, pc_at(z, i), &file, &line);
	snprintf(buf, len, "%s:%d", file, line);
	return buf;
}

/* initcheck: a byte, once written, stays initialised for the rest of its
 * block, so no later access to it needs a look. The shadow of each granule
 * the access touched is cleared as far as its leading bytes are written
 * (a partial granule's count of valid leading bytes, as for the end of a
 * buffer): the inline tests then let those accesses go without a call.
 * cta__san_unit_start marks the arena again for its next block. */
static void open_written(const struct cta__cta *c, struct shadow *h, size_t off, size_t n)
{
	if (shadow_state != 1)
		return;
	const uint64_t *w = h->r->w;
	for (size_t g = off & ~(size_t)7; g < off + n; g += 8) {
		unsigned k = 0;
		if (h->r->g[g / 8] != SPLIT)
			k = W_EP(h->r->g[g / 8]) >= h->base ? 8 : 0;
		else
			while (k < 8 && W_EP(w[g + k]) >= h->base)
				k++;
		signed char *sh = (signed char *)((((uintptr_t)c->smem + g) >> 3) + shadow_off);
		/* (Bytes the shadow lets go already, as where the loop form
		 * tests them itself, stay so.) */
		if (k == 0 || *sh == 0 || (*sh > 0 && *sh >= (signed char)k))
			continue;
		*sh = (signed char)(k == 8 ? 0 : k);
		h->mkept = 0;
	}
}

static void bytes_access(struct cta__san *z, struct cta__lane_x *x, struct shadow *h, size_t off,
                         size_t n, int write, uintptr_t pc);

static void shared_access(struct cta__san *z, struct cta__lane_x *x, size_t off, size_t n,
                          int write, uintptr_t pc)
{
	const struct cta__cta *c = x->cta;
	const struct cta__kernel *k = x->l.unit->k;
	const char *what = write ? "write" : "read";
	if (off + n > k->smem_bytes) {
		if (z->tool == CTA_SANITIZE_MEMCHECK) {
			/* Name the variable the access runs off, if it follows one. */
			char last[200] = "";
			for (unsigned i = 0; i < c->nsites; i++) {
				const struct cta__smem_site *site = c->sites[i];
				size_t end = c->site_off[i] + site->size;
				if (end <= off + n && end + 64 > off)
					snprintf(last, sizeof(last),
					         "; shared variable '%s' ends at %zu", site->name,
					         end);
			}
			report(
			    z, UB_MEMCHECK_OOB, x, pc, 0,
			    "%s of %zu bytes at shared memory offset %zu, past the %zu bytes the "
			    "launch declares (smem_static + smem_dynamic)%s",
			    what, n, off, k->smem_bytes, last);
		}
		return;
	}
	if (z->tool == CTA_SANITIZE_MEMCHECK)
		return;
	struct shadow *h = shadow_of(z, x);
	if (!h)
		return;
	struct recs *r = h->r;
	const int race = z->tool == CTA_SANITIZE_RACECHECK;
	const uint32_t ep = h->base + (uint32_t)(c->bar_gen + x->l.unit->cbar_gen - h->bar0);
	/* The granules the access touches get words per byte for the test
	 * below, and one again where their bytes end up alike (only where the
	 * loop form tests granules inline: elsewhere they stay split). */
	const size_t g0 = off / 8, g1 = (off + n - 1) / 8;
	for (size_t g = g0; g <= g1; g++) {
		const uint64_t v = r->g[g];
		if (v == SPLIT)
			continue;
		uint64_t bw = v;
		uint32_t bp = 0;
		if (race) {
			const uint32_t lo = G_LO(v);
			bw = 0;
			if (W_EP(lo) == ep && (v & G_WRITTEN)) {
				bw = WORD(ep, W_T(lo), 0, 0);
				bp = G_PC(v) << 16;
			} else if (W_EP(lo) == ep) {
				bw = WORD(0, 0, ep, W_T(lo));
				bp = G_PC(v);
			}
		}
		for (size_t i = 0; i < 8; i++) {
			r->w[8 * g + i] = bw;
			r->pcs[8 * g + i] = bp;
		}
		r->g[g] = SPLIT;
	}
	bytes_access(z, x, h, off, n, write, pc);
	if (!tests_inline(k))
		return;
	for (size_t g = g0; g <= g1; g++) {
		const uint64_t *w = &r->w[8 * g];
		const uint32_t *p = &r->pcs[8 * g];
		uint64_t d = 0;
		for (size_t i = 1; i < 8; i++)
			d |= (w[i] ^ w[0]) | (p[i] ^ p[0]);
		if (d)
			continue;
		if (!race) {
			r->g[g] = w[0];
			continue;
		}
		const uint64_t v = w[0];
		if (W_EP(v) == ep && (R_EP(v) != ep || R_T(v) == W_T(v)))
			r->g[g] = G(ep, W_T(v)) | G_WRITTEN | (uint64_t)(p[0] >> 16) << 48;
		else if (W_EP(v) != ep && R_EP(v) == ep)
			r->g[g] = G(ep, R_T(v)) | (uint64_t)(p[0] & 0xffff) << 48;
		else if (W_EP(v) != ep)
			r->g[g] = 0;
	}
}

/* racecheck and initcheck of an access in the declared bytes, on the
 * words of its bytes. */
static void bytes_access(struct cta__san *z, struct cta__lane_x *x, struct shadow *h, size_t off,
                         size_t n, int write, uintptr_t pc)
{
	const struct cta__cta *c = x->cta;
	const struct cta__kernel *k = x->l.unit->k;
	char name[200];
	struct recs *r = h->r;
	const uint32_t ep = h->base + (uint32_t)(c->bar_gen + x->l.unit->cbar_gen - h->bar0);
	if (ep > r->top)
		r->top = ep;
	const unsigned t = rank_of(&x->l);
	/* (A block has at most 1024 threads on every GPU the models know.) */
	const uint32_t tt = t < MANY_READERS ? t : MANY_READERS - 1;
	uint64_t *w = &r->w[off];
	/* The bytes of an access have almost always one word (the last access
	 * to them was of the same size): one decision for all of them. */
	uint64_t diff = 0;
	for (size_t i = 1; i < n; i++)
		diff |= w[i] ^ w[0];
	if (z->tool == CTA_SANITIZE_INITCHECK) {
		if (!diff && (write || W_EP(w[0]) >= h->base)) {
			const uint64_t nw = WORD(ep, 0, 0, 0);
			for (size_t i = 0; i < n; i++)
				w[i] = nw;
			open_written(c, h, off, n);
			return;
		}
		for (size_t i = 0; i < n; i++) {
			if (write || W_EP(w[i]) >= h->base) {
				w[i] = WORD(ep, 0, 0, 0);
				continue;
			}
			if (!library_bytes(c, off + i)) {
				smem_name(c, k, off + i, name, sizeof(name));
				report(z, UB_INITCHECK_SHARED, x, pc, 0,
				       "read of %zu bytes of %s, which no thread of this block has "
				       "written (shared memory is not initialised on a GPU; the "
				       "simulator's zeros hide this)",
				       n, name);
			}
			w[i] = WORD(ep, 0, 0, 0); /* reported once */
		}
		open_written(c, h, off, n);
		return;
	}
	/* racecheck */
	const uint32_t mypc = pc_index(pc);
	uint32_t *pcs = &r->pcs[off];
	char where[300];
	if (!diff) {
		/* The same test as below, for all n bytes at once, where it finds
		 * no race. */
		const uint64_t v = w[0];
		const uint32_t wep = W_EP(v), wt = W_T(v), rep = R_EP(v), rt = R_T(v);
		uint32_t p0 = pcs[0], pd = 0;
		for (size_t i = 1; i < n; i++)
			pd |= pcs[i] ^ p0;
		if (!pd && !(wep == ep && wt != tt) && !(write && rep == ep && rt != tt)) {
			uint64_t nw;
			uint32_t np;
			if (write) {
				nw = WORD(ep, tt, rep, rt);
				np = mypc << 16 | (p0 & 0xffff);
			} else {
				nw = WORD(wep, wt, ep, rep == ep && rt != tt ? MANY_READERS : tt);
				np = (p0 & 0xffff0000u) | mypc;
			}
			for (size_t i = 0; i < n; i++) {
				w[i] = nw;
				pcs[i] = np;
			}
			return;
		}
	}
	for (size_t i = 0; i < n; i++) {
		const uint64_t v = w[i];
		const uint32_t wep = W_EP(v), wt = W_T(v), rep = R_EP(v), rt = R_T(v);
		const uint32_t wpc = pcs[i] >> 16, rpc = pcs[i] & 0xffff;
		if (write) {
			if (wep == ep && wt != tt) {
				smem_name(c, k, off + i, name, sizeof(name));
				report(
				    z, UB_RACECHECK_SHARED_WW, x, pc, pc_at(z, wpc),
				    "write of %s by thread %u races with the write by thread %u at "
				    "%s: no __syncthreads between them",
				    name, t, wt, other_place(z, wpc, where, sizeof(where)));
			} else if (rep == ep && rt != tt) {
				smem_name(c, k, off + i, name, sizeof(name));
				char rts[32];
				if (rt == MANY_READERS)
					snprintf(rts, sizeof(rts), "other threads");
				else
					snprintf(rts, sizeof(rts), "thread %u", rt);
				report(z, UB_RACECHECK_SHARED_RW, x, pc, pc_at(z, rpc),
				       "write of %s by thread %u races with the read by %s at %s: "
				       "no __syncthreads between them",
				       name, t, rts, other_place(z, rpc, where, sizeof(where)));
			}
			w[i] = WORD(ep, tt, rep, rt);
			pcs[i] = mypc << 16 | rpc;
		} else {
			if (wep == ep && wt != tt) {
				smem_name(c, k, off + i, name, sizeof(name));
				report(
				    z, UB_RACECHECK_SHARED_RW, x, pc, pc_at(z, wpc),
				    "read of %s by thread %u races with the write by thread %u at "
				    "%s: no __syncthreads between them",
				    name, t, wt, other_place(z, wpc, where, sizeof(where)));
			}
			const uint32_t nrt = rep == ep && rt != tt ? MANY_READERS : tt;
			w[i] = WORD(wep, wt, ep, nrt);
			pcs[i] = wpc << 16 | mypc;
		}
	}
}

/* ---- global memory (harness buffers) ------------------------------------ */

static void global_access(struct cta__san *z, struct cta__lane_x *x, uintptr_t a, size_t n,
                          int write, uintptr_t pc)
{
	struct sbuf *b = buf_at(a);
	if (!b)
		return;
	if (!b->freed && a >= b->lo && a + n <= b->hi) {
		uint64_t e = __atomic_load_n(&bufs_epoch, __ATOMIC_RELAXED);
		if (hit_epoch != e) {
			hit_len[0] = hit_len[1] = 0;
			hit_epoch = e;
		}
		hit_lo[1] = hit_lo[0];
		hit_len[1] = hit_len[0];
		hit_lo[0] = b->lo;
		hit_len[0] = b->hi - b->lo;
		return;
	}
	const char *what = write ? "write" : "read";
	size_t bytes = b->hi - b->lo;
	if (b->freed) {
		report(z, UB_MEMCHECK_USE_AFTER_FREE, x, pc, 0,
		       "%s of %zu bytes at offset %" PRIdPTR " of harness buffer #%u of %s (%zu "
		       "bytes), which the harness released before the launch",
		       what, n, (intptr_t)(a - b->lo), b->index, b->owner, bytes);
		return;
	}
	if (a < b->lo)
		report(z, UB_MEMCHECK_OOB, x, pc, 0,
		       "%s of %zu bytes %zu bytes before harness buffer #%u of %s (%zu bytes)",
		       what, n, (size_t)(b->lo - a), b->index, b->owner, bytes);
	else if (a + n > b->hi)
		report(z, UB_MEMCHECK_OOB, x, pc, 0,
		       "%s of %zu bytes at offset %zu of harness buffer #%u of %s (%zu bytes): "
		       "%zu bytes past its end",
		       what, n, (size_t)(a - b->lo), b->index, b->owner, bytes,
		       (size_t)(a + n - b->hi));
}

/* ---- the instrumentation's entry points --------------------------------- */

static inline void check(uintptr_t a, size_t n, int write, uintptr_t pc)
{
	if (((a - hit_lo[0] < hit_len[0] && a - hit_lo[0] + n <= hit_len[0]) ||
	     (a - hit_lo[1] < hit_len[1] && a - hit_lo[1] + n <= hit_len[1])) &&
	    hit_epoch == __atomic_load_n(&bufs_epoch, __ATOMIC_RELAXED))
		return;
	struct cta__lane *l = cta__cur;
	if (__builtin_expect(!l, 0))
		return;
	struct cta__unit *u = l->unit;
	struct cta__san *z = u->sim->san;
	if (__builtin_expect(!z, 0))
		return;
	struct cta__lane_x *x = (struct cta__lane_x *)l;
	/* The thread loop reads its lane before a thread enters its CTA. */
	uintptr_t sm = (uintptr_t)l->smem;
	if (a - sm < u->cap_smem && sm && x->cta) {
		shared_access(z, x, a - sm, n, write, pc);
		return;
	}
	if (z->tool == CTA_SANITIZE_MEMCHECK && a - bufs_lo < bufs_hi - bufs_lo)
		global_access(z, x, a, n, write, pc);
}

/* The instrumented regions of compiler/ (kc_kernel.h) call this. */
void cta__san_access(uintptr_t a, size_t n, int write, uintptr_t pc)
{
	check(a, n, write, pc);
}

#define RET_PC ((uintptr_t)__builtin_return_address(0))
/* What gcc's -fsanitize=kernel-address calls (__asan_loadN_noabort and
 * friends), under the names kernels/sanitized.c gives them with asm
 * labels: a program that also links an ASan runtime keeps its own. */
#define SAN_ENTRY(n)                                                                               \
	CTA_EXPORT void cta__san_load##n(uintptr_t a);                                             \
	CTA_EXPORT void cta__san_store##n(uintptr_t a);                                            \
	void cta__san_load##n(uintptr_t a)                                                         \
	{                                                                                          \
		check(a, n, 0, RET_PC);                                                            \
	}                                                                                          \
	void cta__san_store##n(uintptr_t a)                                                        \
	{                                                                                          \
		check(a, n, 1, RET_PC);                                                            \
	}
SAN_ENTRY(1)
SAN_ENTRY(2)
SAN_ENTRY(4)
SAN_ENTRY(8)
SAN_ENTRY(16)

/* The inline tests' report builtins (__asan_report_load4_noabort and
 * friends), called when an access's shadow is marked. */
#define SAN_REPORT(n)                                                                              \
	CTA_EXPORT void cta__san_report_load##n(uintptr_t a);                                      \
	CTA_EXPORT void cta__san_report_store##n(uintptr_t a);                                     \
	void cta__san_report_load##n(uintptr_t a)                                                  \
	{                                                                                          \
		check(a, n, 0, RET_PC);                                                            \
	}                                                                                          \
	void cta__san_report_store##n(uintptr_t a)                                                 \
	{                                                                                          \
		check(a, n, 1, RET_PC);                                                            \
	}
SAN_REPORT(1)
SAN_REPORT(2)
SAN_REPORT(4)
SAN_REPORT(8)
SAN_REPORT(16)

CTA_EXPORT void cta__san_loadN(uintptr_t a, size_t n);
CTA_EXPORT void cta__san_storeN(uintptr_t a, size_t n);
CTA_EXPORT void cta__san_no_return(void);
void cta__san_loadN(uintptr_t a, size_t n)
{
	check(a, n, 0, RET_PC);
}
void cta__san_storeN(uintptr_t a, size_t n)
{
	check(a, n, 1, RET_PC);
}
void cta__san_no_return(void)
{
}
CTA_EXPORT void cta__san_report_loadN(uintptr_t a, size_t n);
CTA_EXPORT void cta__san_report_storeN(uintptr_t a, size_t n);
void cta__san_report_loadN(uintptr_t a, size_t n)
{
	check(a, n, 0, RET_PC);
}
void cta__san_report_storeN(uintptr_t a, size_t n)
{
	check(a, n, 1, RET_PC);
}

/* ---- the probes of barrier-free bodies (compiler/san_probe.h) -----------
 * 1 when every byte of [first, last + n) has a clear shadow byte: no
 * inline test of an access there calls anything. 0 for a range out of
 * order (an address that wrapped), one past the shadowed address space or
 * of more than a few pages, and where the kernels test through calls. */
int cta__san_clear(uintptr_t first, uintptr_t last, uint64_t n)
{
	if (!shadow_off || __atomic_load_n(&shadow_state, __ATOMIC_ACQUIRE) != 1 || first > last ||
	    !n || last - first > ((uintptr_t)1 << 24) || last + n > ((uintptr_t)1 << 47))
		return 0;
	const unsigned char *p = (const unsigned char *)(shadow_off + (first >> 3));
	const unsigned char *e = (const unsigned char *)(shadow_off + ((last + n - 1) >> 3) + 1);
	uint64_t any = 0;
	for (; p < e && ((uintptr_t)p & 7); p++)
		any |= *p;
	for (; p + 8 <= e; p += 8) {
		uint64_t w;
		memcpy(&w, p, 8);
		any |= w;
	}
	for (; p < e; p++)
		any |= *p;
	return any == 0;
}

/* ---- the instrumented loop form (compiler/san_pass.h) -------------------
 * Each run of a region's loop asks for the block's granule words and the
 * current epoch once, and then tests its accesses of 8 aligned bytes of
 * the declared shared memory itself: racecheck's word and instruction of
 * the granule, initcheck's word; only a conflict, a split granule, another
 * size or an instruction without its index yet comes here. */
static _Thread_local struct cta__san_fast no_fast; /* cap 0: nothing tested inline */

/* How many leading bytes of x's block's shared memory its first region
 * writes whole: the kernel compiler's cover (struct cta__kc_cover: every
 * thread of rank t stores size bytes at site + t * size before its first
 * barrier or its end), at the offsets this block's declarations got. */
static size_t written_whole(const struct cta__unit *u, const struct cta__lane_x *x)
{
	const struct cta__kc_def *d = u->k->kc;
	const struct cta__cta *c = x->cta;
	if (!d || !(d->flags & CTA__KC_LOCAL_SMEM) || !d->ncover)
		return 0;
	const uint64_t n = (uint64_t)x->l.bdim.x * x->l.bdim.y * x->l.bdim.z;
	size_t at = 0;
	for (int grew = 1; grew && at < u->k->smem_bytes;) {
		grew = 0;
		for (uint32_t i = 0; i < d->ncover; i++)
			for (unsigned k = 0; k < c->nsites; k++)
				if (c->sites[k] == d->cover[i].site) {
					size_t a = c->site_off[k], e = a + n * d->cover[i].size;
					if (a <= at && e > at) {
						at = e;
						grew = 1;
					}
					break;
				}
	}
	return at < u->k->smem_bytes ? at : u->k->smem_bytes;
}

struct cta__san_fast *cta__san_region(struct cta__lane *l)
{
	struct cta__lane_x *x = (struct cta__lane_x *)l;
	struct cta__unit *u = l->unit;
	struct cta__san *z = u->sim->san;
	no_fast.shadow = shadow_off;
	if (!z || !x->cta)
		return &no_fast;
	if (z->tool == CTA_SANITIZE_MEMCHECK) {
		/* The declared bytes: valid, nothing to follow. */
		struct cta__san_fast *f = &z->fast;
		f->smem = (uintptr_t)x->cta->smem;
		f->cap = u->k->smem_bytes & ~(uint64_t)7;
		f->shadow = shadow_off;
		f->tool = (uint32_t)z->tool;
		return f;
	}
	struct shadow *h = shadow_of(z, x);
	if (!h)
		return &no_fast;
	struct recs *r = h->r;
	const uint32_t ep = h->base + (uint32_t)(x->cta->bar_gen + u->cbar_gen - h->bar0);
	if (ep > r->top)
		r->top = ep;
	struct cta__san_fast *f = &z->fast;
	f->smem = (uintptr_t)x->cta->smem;
	f->cap = u->k->smem_bytes & ~(uint64_t)7;
	f->g = r->g;
	f->shadow = shadow_off;
	f->ep = ep;
	f->base = h->base;
	f->tool = (uint32_t)z->tool;
	/* initcheck, for a body whose first region writes the leading
	 * declared bytes whole (every thread its slot, on every path) and
	 * reads no shared memory (struct cta__kc_cover): a read of them
	 * passes once that region ran, and no write to them changes what a
	 * later read of this block finds, so the loop form tests none of
	 * them, in any region. Counted from the sites the block placed so
	 * far; once a block, once past its first barrier. */
	f->free = 0;
	if (z->tool == CTA_SANITIZE_INITCHECK) {
		if (h->wbase != h->base) {
			f->free = written_whole(u, x);
			if (ep > h->base) {
				h->wbase = h->base;
				h->whole = f->free;
			}
		} else {
			f->free = h->whole;
		}
	}
	return f;
}

int cta__san_span(struct cta__san_fast *f, struct cta__lane *l, uintptr_t first, uintptr_t last,
                  uint64_t nk)
{
	const uint64_t n = nk >> 2;
	if (all_tested || !n || first > last || last > UINTPTR_MAX - n)
		return 0;
	const uintptr_t end = last + n;
	if (f->cap && f->tool != CTA_SANITIZE_MEMCHECK && first >= f->smem &&
	    end - f->smem <= f->cap) {
		if (f->tool == CTA_SANITIZE_RACECHECK)
			return (nk & 2) != 0;
		const uint64_t a = first - f->smem, e = end - f->smem;
		if (e <= f->free)
			return 1;
		/* A write the block's first region makes whole (every thread its
		 * slot, on every path, and no read of shared memory in that
		 * region): its bytes are all written once the region ran, and
		 * nothing reads them before; the words say so as the tested
		 * writes would have. */
		struct cta__lane_x *x = (struct cta__lane_x *)l;
		if (!(nk & 1) || (a & 7) || (e & 7) || !x->cta || e > written_whole(l->unit, x))
			return 0;
		for (uint64_t g = a / 8; g < e / 8; g++)
			f->g[g] = f->ep;
		return 1;
	}
	/* (memcheck's declared shared bytes have a clear shadow.) */
	return cta__san_clear(first, last, n);
}

void cta__san_slow(uintptr_t a, uint64_t nw, uint32_t *site)
{
	check(a, nw >> 1, nw & 1, RET_PC);
	if (!*site)
		*site = pc_index(RET_PC);
}
