/* Micro-benchmark, not a test: wall time of a pool run of 16 tasks of about
 * 10 us each (the small-launch case that must still scale) and of an empty
 * run, for 1, 2, 4, ... workers up to the online CPUs. */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "exec/pool.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void busy_10us(void *ctx, size_t index, unsigned worker)
{
	double t = now();
	while (now() - t < 10000)
		;
}

static void empty(void *ctx, size_t index, unsigned worker)
{
}

int main(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	for (unsigned n = 1; n <= (unsigned)cpus; n *= 2) {
		struct cta__pool *p;
		if (cta__pool_new(&p, n) != 0)
			return 1;
		double t0 = now();
		for (int r = 0; r < 500; r++)
			cta__pool_run(p, busy_10us, NULL, 16);
		double t1 = now();
		for (int r = 0; r < 20000; r++)
			cta__pool_run(p, empty, NULL, n);
		double t2 = now();
		printf("workers %2u: 16 x 10us run %.1f us (ideal %.1f), empty run %.2f us\n", n,
		       (t1 - t0) / 500 / 1000, 10.0 * ((16 + n - 1) / n), (t2 - t1) / 20000 / 1000);
		cta__pool_free(p);
	}
	return 0;
}
