/* Exactly-once coverage: the set of logical block indices a kernel has
 * processed, kept as sorted disjoint intervals. Blocks are handed out in
 * nearly linear order, so the set stays as small as the number of blocks in
 * flight, whatever the grid size (a 2^31-1-block grid is legal CUDA). */
#include <stdlib.h>
#include <string.h>

#include "base/coverage.h"

void cta__cover_init(struct cta__cover *c)
{
	memset(c, 0, sizeof(*c));
}

void cta__cover_free(struct cta__cover *c)
{
	free(c->iv);
	free(c->dups);
	cta__cover_init(c);
}

static void note_dup(struct cta__cover *c, uint64_t i)
{
	c->dup_total++;
	if (c->ndups == c->dups_cap) {
		if (c->dups_cap >= 1024)
			return; /* the count stays exact; the list keeps the first ones */
		size_t cap = c->dups_cap ? c->dups_cap * 2 : 16;
		uint64_t *d = realloc(c->dups, cap * sizeof(*d));
		if (!d)
			return;
		c->dups = d;
		c->dups_cap = cap;
	}
	c->dups[c->ndups++] = i;
}

int cta__cover_mark(struct cta__cover *c, uint64_t i)
{
	/* Binary search for the last interval starting at or before i. */
	size_t lo = 0, hi = c->n;
	if (c->n && c->iv[c->n - 1][0] <= i)
		lo = c->n; /* the common case: at or past the last interval */
	else
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (c->iv[mid][0] <= i)
				lo = mid + 1;
			else
				hi = mid;
		}
	/* lo is the first interval starting after i; lo-1 may contain i. */
	if (lo > 0 && i < c->iv[lo - 1][1]) {
		note_dup(c, i);
		return 1;
	}
	int join_prev = lo > 0 && c->iv[lo - 1][1] == i;
	int join_next = lo < c->n && c->iv[lo][0] == i + 1;
	if (join_prev && join_next) {
		c->iv[lo - 1][1] = c->iv[lo][1];
		memmove(&c->iv[lo], &c->iv[lo + 1], (c->n - lo - 1) * sizeof(c->iv[0]));
		c->n--;
	} else if (join_prev) {
		c->iv[lo - 1][1] = i + 1;
	} else if (join_next) {
		c->iv[lo][0] = i;
	} else {
		if (c->n == c->cap) {
			size_t cap = c->cap ? c->cap * 2 : 64;
			uint64_t(*iv)[2] = realloc(c->iv, cap * sizeof(c->iv[0]));
			if (!iv)
				return 0; /* out of memory: coverage becomes approximate */
			c->iv = iv;
			c->cap = cap;
		}
		memmove(&c->iv[lo + 1], &c->iv[lo], (c->n - lo) * sizeof(c->iv[0]));
		c->iv[lo][0] = i;
		c->iv[lo][1] = i + 1;
		c->n++;
	}
	return 0;
}

uint64_t cta__cover_lost(const struct cta__cover *c, uint64_t n, uint64_t *out, size_t max)
{
	uint64_t lost = 0, next = 0;
	size_t w = 0;
	for (size_t j = 0; j <= c->n; j++) {
		uint64_t until = j < c->n ? c->iv[j][0] : n;
		if (until > n)
			until = n;
		for (uint64_t i = next; i < until && w < max; i++)
			out[w++] = i;
		if (until > next)
			lost += until - next;
		if (j < c->n)
			next = c->iv[j][1];
	}
	return lost;
}
