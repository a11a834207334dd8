/* The period skip (docs/PERFORMANCE.md, "The period skip"): the engine's
 * state after a batch ran, in a canonical form (times relative to the
 * engine's, block indices to the kernel's next, sequence numbers to the
 * queue's), the bodies that ran since, and the shift of the live state by
 * whole periods once two such forms are equal. */
#ifndef CTASIM_ENGINE_PERIOD_H
#define CTASIM_ENGINE_PERIOD_H

#include "base/state.h"

/* 0: never skip (tests compare both ways); 1 by default. */
extern int cta__engine_period;
/* Tests only: 1 shifts the state one nanosecond too far, so a comparison
 * of the two paths must fail. */
extern int cta__engine_period_fault;

#define CTA__PERIOD_CUTS  16
#define CTA__PERIOD_SIGS  64
#define CTA__PERIOD_TRIES 256
#define CTA__PERIOD_DUE   8

/* The state after a batch ran (a cut), and the counts a period adds. */
struct cta__period_cut {
	int valid;
	uint64_t hash;
	uint64_t *canon;
	size_t len, cap;
	uint64_t run; /* runs logged before it */
	uint64_t now, seq, next_unit, events, batches, sealed, held_inserted, launched, units_done,
	    busy;
	uint64_t *per_sm;
	/* The retiring blocks' indices, relative to the kernel's next, in the
	 * form's order of their events (not in the form: period.c,
	 * retiring_ran_since). */
	uint64_t *labels;
	size_t nlabels, labels_cap;
};

struct cta__period {
	struct cta__kernel *k;
	int off;         /* no more cuts: a skip was made or cannot be */
	int skipped;     /* periods were skipped */
	int logging;     /* bodies are logged: from the first cut with a form on */
	uint64_t blocks; /* blocks whose bodies ran while they were */
	/* The run log: runs[i] is the (base + i)-th body run. */
	struct cta__period_run *runs;
	uint64_t base;
	size_t n, cap;
	uint64_t committed; /* runs whose end is known */
	unsigned forms;     /* canonical forms built */
	/* The signatures of the latest cuts, and the kernel's next block then. */
	uint64_t sigs[CTA__PERIOD_SIGS], sig_unit[CTA__PERIOD_SIGS];
	unsigned next_sig;
	/* Where a form is due whatever the signature says: one signature's
	 * distance after a cut whose form a repeated signature asked for (the
	 * kernel's next block then). */
	uint64_t due[CTA__PERIOD_DUE];
	unsigned ndue;
	struct cta__period_cut cuts[CTA__PERIOD_CUTS];
	unsigned next_cut;
	struct cta__event *ev;
	size_t ev_cap;
	uint64_t *tmp;
	size_t tmp_cap;
	/* The period found: between cuts `from` and the latest, P blocks, D
	 * ns, E sequence numbers, runs [r0, r0 + nr). */
	const struct cta__period_cut *from, *to;
	uint64_t P, D, E, r0, nr;
	/* While skipped bodies run (skip_run): period number kk, the first
	 * run off its prediction (bad), and the blocks that ran before the
	 * state is handed back (pre, from pre_pos on still to come). */
	uint64_t kk, dt, db;                /* dt = kk * D, db = kk * P */
	const struct cta__period_run *run0; /* &runs[r0 - base] */
	size_t bad;
	int failed;
	struct cta__period_run *pre;
	size_t npre, pre_pos, pre_cap;
	size_t pend; /* pre's end where a chunk ran on the pool, else SIZE_MAX */
};

/* Makes s->per when the run may skip (one kernel of one-block units
 * whose body never waits, no trace, jitter, random ties, abort mode or
 * event limit; --sanitize may skip: its reports go to the outbox, so a
 * body that reports is handed back as one off its prediction); returns 0
 * or CTA_ENOMEM. */
int cta__engine_period_new(struct cta_sim *s);
void cta__engine_period_free(struct cta_sim *s);
/* Logs the body run of unit u, made to run in a batch. */
void cta__engine_period_made(struct cta_sim *s, const struct cta__unit *u);
/* Logs the end of u's body at its commit. */
void cta__engine_period_committed(struct cta_sim *s, const struct cta__unit *u);
/* At a cut: stores its canonical form; 1 when it equals an earlier cut's
 * (the period is set), else 0. */
int cta__engine_period_cut(struct cta_sim *s);
/* Shifts the live state by n periods: times, block indices, sequence
 * numbers and the counts of statistics. */
void cta__engine_period_shift(struct cta_sim *s, uint64_t n);
/* k's coverage set once every block of it started: its whole grid. */
void cta__engine_period_cover_all(struct cta__kernel *k);

#endif
