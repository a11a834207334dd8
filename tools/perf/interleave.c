/* Does other work between blocks slow a streaming thread loop down?
 * A stand-alone measurement behind docs/NOTES.md (saxpy's gap):
 * saxpy over 2^24 floats (huge pages, as the harness maps its buffers),
 * once as a plain loop and once block by block through a loop shaped
 * like ctasim's vector thread loop, optionally with JUNK read-modify-
 * writes of a TABLE-byte table between blocks (standing in for the
 * engine's per-block work), and the junk alone.
 *
 *   cc -std=c11 -O3 -march=x86-64-v4 -fno-trapping-math \
 *      tools/perf/interleave.c -o interleave
 *   ./interleave [BLOCK [JUNK [TABLE]]]      e.g. ./interleave 256 20 131072
 *
 * Prints best-of-three CPU times in ms: plain, blocks (with junk), junk
 * alone. Not built by meson: it measures the host, not ctasim. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>

struct args {
	int n;
	float a;
	const float *x;
	float *y;
};
struct lane {
	unsigned tid, row_end;
	uint64_t vtime;
};

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static float *alloc(size_t bytes)
{
	size_t len = (bytes + (2u << 20) - 1) / (2u << 20) * (2u << 20);
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	(void)madvise(p, len, MADV_HUGEPAGE);
	return p;
}

__attribute__((noinline)) static void plain(int n, float a, const float *x, float *y)
{
	for (int i = 0; i < n; i++)
		y[i] = a * x[i] + y[i];
}

/* One block, the way the vector form runs it: indices masked to their
 * ranges behind an empty asm, the lane's tid stored after each thread. */
__attribute__((noinline)) static uint64_t block(const struct args *a0, struct lane *l, unsigned bid,
                                                unsigned bdim, uint64_t t0)
{
	const struct args a = *a0;
	uint64_t end = 0;
	unsigned tid = l->tid;
	__asm__("" : "+r"(bid), "+r"(bdim), "+r"(tid));
	bid &= 0xfffffu;
	bdim &= 0x7ffu;
	tid &= 0x3ffu;
	while (tid < (l->row_end & 0x7ffu)) {
		l->vtime = t0;
		int i = (int)(bid * bdim + tid);
		if (i < a.n) {
			a.y[i] = a.a * a.x[i] + a.y[i];
			l->vtime += 1;
		}
		if (l->vtime > end)
			end = l->vtime;
		l->tid = ++tid;
	}
	return end;
}

static uint64_t h = 1;

static void junk(uint64_t *table, size_t mask, int n)
{
	for (int k = 0; k < n; k++) {
		h = h * 6364136223846793005ull + 1442695040888963407ull;
		table[(h >> 40) & mask]++;
	}
}

int main(int argc, char **argv)
{
	int n = 1 << 24;
	unsigned bs = argc > 1 ? (unsigned)atoi(argv[1]) : 256;
	int nj = argc > 2 ? atoi(argv[2]) : 0;
	size_t tb = argc > 3 ? (size_t)atoll(argv[3]) : 131072;
	if (bs == 0 || bs > 1024 || n % bs || tb < 8 || (tb & (tb - 1))) {
		fprintf(stderr, "usage: interleave [BLOCK<=1024 [JUNK [TABLE, a power of 2]]]\n");
		return 2;
	}
	float *x = alloc((size_t)n * 4), *y = alloc((size_t)n * 4);
	uint64_t *table = calloc(tb / 8, 8);
	if (!x || !y || !table)
		return 1;
	for (int i = 0; i < n; i++)
		x[i] = (float)i, y[i] = 1.0f;
	struct args a = {n, 2.0f, x, y};
	double bp = 1e9, bb = 1e9, bj = 1e9;
	uint64_t sink = 0;
	for (int r = 0; r < 3; r++) {
		double t = now();
		plain(n, 2.0f, x, y);
		t = now() - t;
		bp = t < bp ? t : bp;
		t = now();
		for (unsigned b = 0; b < (unsigned)n / bs; b++) {
			struct lane l = {0, bs, 0};
			sink += block(&a, &l, b, bs, 5);
			junk(table, tb / 8 - 1, nj);
		}
		t = now() - t;
		bb = t < bb ? t : bb;
		t = now();
		for (unsigned b = 0; b < (unsigned)n / bs; b++)
			junk(table, tb / 8 - 1, nj);
		t = now() - t;
		bj = t < bj ? t : bj;
	}
	printf("plain %.2f ms  blocks%s %.2f ms  junk alone %.2f ms  (%llu)\n", bp * 1e3,
	       nj ? " with junk" : "", bb * 1e3, bj * 1e3, (unsigned long long)(sink & 1));
	return 0;
}
