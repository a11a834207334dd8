/* Micro-benchmark, not a test: nanoseconds per fiber switch (host and one
 * fiber ping-ponging) and per start+finish of a short fiber. */
#include <stdio.h>
#include <time.h>

#include "exec/fiber.h"

#define SWITCHES 10000000L
#define STARTS   1000000L

static struct cta__fiber *host, *self;

static void pong(void *arg)
{
	for (;;)
		cta__fiber_switch(self, host);
}

static void nothing(void *arg)
{
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

int main(void)
{
	struct cta__fiber_pool *p;
	if (cta__fiber_pool_new(&p, 0) != 0)
		return 1;
	host = cta__fiber_host(p);
	self = cta__fiber_start(p, pong, NULL, host);
	cta__fiber_switch(host, self); /* warm up */
	double t0 = now();
	for (long i = 0; i < SWITCHES / 2; i++)
		cta__fiber_switch(host, self);
	double t1 = now();
	printf("switch: %.2f ns\n", (t1 - t0) / SWITCHES);
	cta__fiber_release(p, self);

	t0 = now();
	for (long i = 0; i < STARTS; i++) {
		struct cta__fiber *f = cta__fiber_start(p, nothing, NULL, host);
		cta__fiber_switch(host, f);
	}
	t1 = now();
	printf("start+run+finish: %.2f ns\n", (t1 - t0) / STARTS);
	cta__fiber_pool_free(p);
	return 0;
}
