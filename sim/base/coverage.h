/* The exactly-once coverage set: the logical block indices a kernel has
 * processed, as sorted disjoint intervals (sim/base/coverage.c). A base
 * service: the engine counts block starts into it, clc marks stolen indices. */
#ifndef CTASIM_BASE_COVERAGE_H
#define CTASIM_BASE_COVERAGE_H

#include <stddef.h>
#include <stdint.h>

struct cta__cover {
	uint64_t (*iv)[2]; /* disjoint [lo, hi) intervals, sorted */
	size_t n, cap;
	uint64_t *dups; /* duplicated indices (first few) */
	size_t ndups, dups_cap;
	uint64_t dup_total;
};
void cta__cover_init(struct cta__cover *c);
void cta__cover_free(struct cta__cover *c);
/* Marks index i processed; returns 1 if it already was (a duplicate). */
int cta__cover_mark(struct cta__cover *c, uint64_t i);
/* cta__cover_mark, inline where i extends the last interval: blocks start
 * in dispatch order, so nearly every block's start does. */
static inline int cta__cover_add(struct cta__cover *c, uint64_t i)
{
	if (c->n && c->iv[c->n - 1][1] == i) {
		c->iv[c->n - 1][1] = i + 1;
		return 0;
	}
	return cta__cover_mark(c, i);
}
/* Lost indices in [0, n): writes up to max of them, returns how many. */
uint64_t cta__cover_lost(const struct cta__cover *c, uint64_t n, uint64_t *out, size_t max);

#endif
