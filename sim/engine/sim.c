/* The simulator's engine: the public cta_sim_* API, the main event loop in
 * virtual nanoseconds, trace emission, statistics and the end-of-run
 * verdicts (UB counts, exactly-once coverage). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/base.h"
#include "base/upcalls.h"
#include "clc/clc.h"
#include "engine/engine.h"
#include "engine/period.h"
#include "exec/exec.h"
#include "exec/fiber.h"
#include "exec/regions.h"
#include "sanitize/sanitize.h"
#include "sched/sched.h"

#include "exec/pool.h"

void cta__engine_push(struct cta_sim *s, uint64_t t, int type, void *p, uint64_t a)
{
	int rc;
	if (__builtin_expect(s->seal_push != 0, 0)) {
		/* A sealed batch's commit (commit_sealed): its unit's event
		 * takes the sequence number it would have taken when the
		 * batch was sealed. A unit pushes one event there; a second
		 * one would come after events it should precede, and ends
		 * sealing for the run. */
		if (s->seal_push == 1) {
			rc = cta__evq_push_seq(&s->q, t, s->seal_seq, type, p, a);
			s->seal_push = 2;
		} else {
			rc = cta__evq_push(&s->q, t, type, p, a);
			s->seal_off = 1;
		}
	} else {
		rc = cta__evq_push(&s->q, t, type, p, a);
	}
	if (rc < 0) {
		/* Running out of memory for events leaves the run unfinishable;
		 * it ends as hung with a message rather than crashing. */
		cta__base_errf(s, "out of memory for events");
		s->hung = 1;
	}
}

int cta_sim_new(cta_sim **out, const struct cta_sim_opts *opts)
{
	*out = NULL;
	if (!opts || opts->version != CTA_SIM_OPTS_VERSION)
		return CTA_EINVAL;
	char err[256];
	if (cta_device_validate(&opts->device, err, sizeof(err)) < 0)
		return CTA_EINVAL;
	struct cta_sim *s = calloc(1, sizeof(*s));
	if (!s)
		return CTA_ENOMEM;
	s->o = *opts;
	s->checks = opts->ub_mode != CTA_UB_OFF;
	s->dev = opts->device;
	/* The duration model, resolved once per resident count. */
	for (unsigned r = 0; r <= CTA_DEVICE_MAX_RESIDENT; r++) {
		s->spin_ppm[r] = r ? cta_device_spin_scale_ppm(&s->dev, r) : 0;
		s->spin_add[r] = r ? cta_device_spin_add_ns(&s->dev, r) : 0;
		s->has_spin_scale |= s->spin_ppm[r] != 0 || s->spin_add[r] != 0;
	}
	s->has_spin_scale |= s->dev.spin_issue_ps != 0;
	s->rng = opts->seed * 0x2545f4914f6cdd1dull + 1;
	s->watchdog_ns = opts->watchdog_ns ? opts->watchdog_ns : CTA_WATCHDOG_DEFAULT_NS;
	s->deterministic = 1;
	s->nofit_gen = UINT64_MAX;
	cta__evq_init(&s->q);
	s->nsms = s->dev.sm_count;
	if (opts->sm_limit && opts->sm_limit < s->nsms)
		s->nsms = opts->sm_limit;
	s->sms = calloc(s->nsms, sizeof(*s->sms));
	s->streams = calloc(1, sizeof(*s->streams));
	if (!s->sms || !s->streams) {
		cta_sim_free(s);
		return CTA_ENOMEM;
	}
	for (unsigned i = 0; i < s->nsms; i++) {
		s->sms[i].gpc = s->dev.gpc_of_sm[i];
		for (unsigned f = 0; f < s->dev.sweep_first_len; f++)
			s->sms[i].sweep_first |= s->dev.sweep_first[f] == i;
	}
	s->nstreams = 1;
	s->streams[0].priority = s->dev.priority_least;
	if (cta__sched_init(s) < 0) {
		cta_sim_free(s);
		return CTA_ENOMEM;
	}
	if (opts->threads > CTA_SIM_MAX_THREADS) {
		cta_sim_free(s);
		return CTA_EINVAL;
	}
	unsigned nw = opts->threads;
	/* A timing-only run executes one thread per block whose body only
	 * advances a clock: more host threads cannot make that faster. */
	if (opts->timing_only)
		nw = 1;
	/* --sanitize: one host thread, so reports come in one order. */
	if (opts->sanitize) {
		nw = 1;
		if ((unsigned)opts->sanitize > CTA_SANITIZE_INITCHECK || cta__san_sim_new(s) < 0) {
			cta_sim_free(s);
			return (unsigned)opts->sanitize > CTA_SANITIZE_INITCHECK ? CTA_EINVAL
			                                                         : CTA_ENOMEM;
		}
	}
	if (nw == 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		nw = n > 0 ? (unsigned)n : 1;
	}
	if (nw > 1 && cta__pool_new(&s->pool, nw) < 0) {
		cta_sim_free(s);
		return CTA_ENOMEM;
	}
	s->nworkers = s->pool ? cta__pool_size(s->pool) : 1;
	s->workers = aligned_alloc(_Alignof(struct cta__worker), s->nworkers * sizeof(*s->workers));
	if (s->workers)
		memset(s->workers, 0, s->nworkers * sizeof(*s->workers));
	if (!s->workers) {
		cta_sim_free(s);
		return CTA_ENOMEM;
	}
	for (unsigned i = 0; i < s->nworkers; i++) {
		if (cta__fiber_pool_new(&s->workers[i].fpool, CTA__LANE_STACK) < 0) {
			cta_sim_free(s);
			return CTA_ENOMEM;
		}
		cta__fiber_pool_share(s->workers[i].fpool, s->nworkers);
	}
	*out = s;
	return 0;
}

void cta_sim_free(cta_sim *s)
{
	if (!s)
		return;

	if (s->tw)
		cta_trace_writer_close(s->tw, 0);
	for (unsigned i = 0; i < s->nkernels; i++) {
		struct cta__kernel *k = s->kernels[i];
		free(k->args);
		free(k->per_sm);
		free(k->fit);
		free(k->sweep);
		cta__cover_free(&k->cover);
		free(k);
	}
	free(s->kernels);
	free(s->cand);
	free(s->streams);
	for (unsigned i = 0; s->sms && i < s->nsms; i++)
		free(s->sms[i].part);
	free(s->sms);
	free(s->cohorts);
	free(s->cohort_next);
	cta__ub_store_free(&s->ubs);
	cta__san_sim_free(s);
	free(s->bucket);
	free(s->bcount);
	free(s->gpcmask);
	free(s->allmask);
	/* Units of a run that stopped early; their suspended lanes' stacks
	 * go with the fiber pools below. */
	for (size_t i = 0; s->workers && i < s->nunits_made; i++)
		if (s->units[i]->live)
			cta__exec_unit_free(s, s->units[i]);
	for (unsigned i = 0; s->workers && i < s->nworkers; i++)
		cta__exec_lanes_free(&s->workers[i]);
	free(s->batch);
	free(s->skip_tasks);
	free(s->skip_chunk);
	free(s->placed);
	free(s->seals);
	while (s->held_slabs) {
		struct cta__held *v = s->held_slabs;
		s->held_slabs = v[0].next;
		free(v);
	}
	for (size_t n = 0; n < s->nunits_made; n++) {
		struct cta__unit *u = s->units[n];
		for (unsigned i = 0; i < u->cap_ctas; i++)
			cta__exec_cta_release(&u->ctas[i]);
		free(u->ctas);
		free(u->ret);
		free(u->out.recs);
		free(u->out.text);
		free(u->out.ubs);
		free(u->out.ubtext);
		free(u->out.marks);
		free(u);
	}
	free(s->units);
	cta__engine_period_free(s);
	while (s->retiring_slabs) {
		struct cta__retiring *v = s->retiring_slabs;
		s->retiring_slabs = v[0].next;
		free(v);
	}
	for (unsigned i = 0; s->workers && i < s->nworkers; i++)
		cta__fiber_pool_free(s->workers[i].fpool);
	free(s->workers);
	cta__exec_wait_free(s);
	cta__pool_free(s->pool);
	cta__evq_free(&s->q);
	free(s);
}

const char *cta_sim_errmsg(const cta_sim *s)
{
	return s ? s->errmsg : "no simulator";
}

int cta_sim_stream_new(cta_sim *s, int *out_stream, int priority)
{
	if (priority < s->dev.priority_greatest || priority > s->dev.priority_least) {
		cta__base_errf(s, "stream priority %d outside the device's range [%d, %d]",
		               priority, s->dev.priority_greatest, s->dev.priority_least);
		return CTA_ERANGE;
	}
	struct cta__stream *ns = realloc(s->streams, (s->nstreams + 1) * sizeof(*ns));
	if (!ns)
		return CTA_ENOMEM;
	s->streams = ns;
	memset(&ns[s->nstreams], 0, sizeof(*ns));
	ns[s->nstreams].priority = priority;
	*out_stream = (int)s->nstreams++;
	return 0;
}

static int dims_ok(struct cta_sim *s, const char *what, const unsigned d[3], const uint64_t max[3])
{
	static const char axis[] = "xyz";
	for (int i = 0; i < 3; i++) {
		if (d[i] == 0) {
			cta__base_errf(s, "%s.%c is 0: every dimension must be at least 1", what,
			               axis[i]);
			return CTA_EINVAL;
		}
		if (d[i] > max[i]) {
			cta__base_errf(s, "%s.%c is %u: the limit is %" PRIu64, what, axis[i], d[i],
			               max[i]);
			return CTA_ERANGE;
		}
	}
	return 0;
}

int cta_sim_launch(cta_sim *s, const struct cta_launch *l, unsigned *out_kernel)
{
	if (s->ran) {
		cta__base_errf(s, "launch after the run");
		return CTA_ESTATE;
	}
	if (!l || !l->kernel) {
		cta__base_errf(s, "launch without a kernel");
		return CTA_EINVAL;
	}
	static const uint64_t gmax[3] = {2147483647u, 65535, 65535};
	uint64_t bmax[3] = {1024, 1024, 64};
	int rc = dims_ok(s, "grid", l->grid, gmax);
	if (!rc)
		rc = dims_ok(s, "block", l->block, bmax);
	if (rc)
		return rc;
	uint64_t threads = (uint64_t)l->block[0] * l->block[1] * l->block[2];
	if (threads > s->dev.max_threads_per_block) {
		cta__base_errf(s, "block of %" PRIu64 " threads: the limit is %u threads per block",
		               threads, s->dev.max_threads_per_block);
		return CTA_ERANGE;
	}
	unsigned cl[3];
	for (int i = 0; i < 3; i++) {
		cl[i] = l->cluster[i] ? l->cluster[i] : 1;
		if (l->grid[i] % cl[i]) {
			cta__base_errf(s, "grid.%c (%u) is not a multiple of cluster.%c (%u)",
			               "xyz"[i], l -> grid[i], "xyz"[i], cl[i]);
			return CTA_EINVAL;
		}
	}
	unsigned csize = cl[0] * cl[1] * cl[2];
	if (csize > s->dev.max_cluster_size) {
		cta__base_errf(s, "cluster of %u blocks: the limit is %u", csize,
		               s->dev.max_cluster_size);
		return CTA_ERANGE;
	}
	if (l->stream < 0 || (unsigned)l->stream >= s->nstreams) {
		cta__base_errf(s, "unknown stream %d", l->stream);
		return CTA_EINVAL;
	}
	const struct cta_kernel_def *kdef = l->kernel;
	if (s->san && !(kdef = cta__san_kernel(l->kernel))) {
		cta__base_errf(s,
		               "kernel %s has no instrumented build: --sanitize runs the kernels "
		               "built into ctasim (kernels/), not ones loaded with --load",
		               l->kernel->name);
		return CTA_EUNSUPPORTED;
	}
	/* racecheck and initcheck follow shared memory only: a body that the
	 * kernel compiler found never reaches any (CTA__KC_NO_SHARED) has no
	 * access for them to test, and runs its plain build. */
	if (s->san && s->o.sanitize != CTA_SANITIZE_MEMCHECK && cta__regions_no_shared(l->kernel))
		kdef = l->kernel;
	if (s->san && cta__san_launch_ready(s) < 0)
		return CTA_EUNSUPPORTED;
	struct cta__kernel *k = calloc(1, sizeof(*k));
	if (!k)
		return CTA_ENOMEM;
	k->l = *l;
	k->l.kernel = kdef;
	memcpy(k->l.cluster, cl, sizeof(cl));
	k->csize = csize;
	k->id = s->nkernels;
	k->seq = s->nkernels;
	k->stream = l->stream;
	k->priority = s->streams[l->stream].priority;
	snprintf(k->label, sizeof(k->label), "%s", l->label ? l->label : l->kernel->name);
	k->nblocks = (uint64_t)l->grid[0] * l->grid[1] * l->grid[2];
	k->nunits = k->nblocks / csize;
	size_t asz = l->kernel->args_size ? l->kernel->args_size : 1;
	k->args = malloc(asz);
	if (!k->args) {
		free(k);
		return CTA_ENOMEM;
	}
	if (l->args)
		memcpy(k->args, l->args, l->kernel->args_size);
	cta__cover_init(&k->cover);
	rc = cta__sched_kernel_init(s, k);
	if (!rc) {
		k->per_sm = calloc(s->nsms, sizeof(*k->per_sm));
		if (!k->per_sm)
			rc = CTA_ENOMEM;
	}
	if (!rc && s->nkernels == s->kcap) {
		unsigned cap = s->kcap ? s->kcap * 2 : 8;
		struct cta__kernel **nk = realloc(s->kernels, cap * sizeof(*nk));
		struct cta__kernel **nc = nk ? realloc(s->cand, cap * sizeof(*nc)) : NULL;
		if (nk)
			s->kernels = nk;
		if (!nc)
			rc = CTA_ENOMEM;
		else {
			s->cand = nc;
			s->kcap = cap;
		}
	}
	if (rc) {
		free(k->fit);
		free(k->sweep);
		free(k->per_sm);
		free(k->args);
		free(k);
		return rc;
	}
	if (l->cooperative) {
		/* cudaLaunchCooperativeKernel refuses a grid that cannot be
		 * co-resident (cudaErrorCooperativeLaunchTooLarge). */
		uint64_t fit = (uint64_t)k->occupancy * s->nsms;
		if (k->nblocks > fit) {
			cta__base_errf(
			    s,
			    "cooperative launch too large: kernel %s has %" PRIu64
			    " blocks, but only %u SMs x %u blocks per SM = %" PRIu64
			    " can be co-resident (blocks per SM limited by %s: %u threads, "
			    "%zu bytes of shared memory a block)",
			    k->label, k->nblocks, s->nsms, k->occupancy, fit,
			    cta_limiter_name(k->limiter), k->threads,
			    k->l.smem_static + k->l.smem_dynamic);
			free(k->fit);
			free(k->sweep);
			free(k->per_sm);
			free(k->args);
			free(k);
			return CTA_ERESOURCES;
		}
		k->comm_state = 2;
	}
	s->kernels[s->nkernels++] = k;
	k->st.label = k->label;
	k->st.blocks = k->nblocks;
	if (out_kernel)
		*out_kernel = k->id;
	return 0;
}

static int open_trace(struct cta_sim *s)
{
	if (!s->o.trace_path)
		return 0;
	struct cta_trace_header *h = calloc(1, sizeof(*h));
	if (!h)
		return CTA_ENOMEM;
	h->version = CTA_TRACE_VERSION;
	snprintf(h->backend, sizeof(h->backend), "sim");
	snprintf(h->device, sizeof(h->device), "%s", s->dev.name);
	snprintf(h->ctasim_version, sizeof(h->ctasim_version), "%s", CTA_VERSION_STRING);
	h->seed = s->o.seed;
	h->tick_ns = 1;
	snprintf(h->clc, sizeof(h->clc), "model");
	h->deterministic = s->deterministic;
	h->kernel_count = s->nkernels < CTA_TRACE_MAX_KERNELS ? s->nkernels : CTA_TRACE_MAX_KERNELS;
	for (unsigned i = 0; i < h->kernel_count; i++) {
		struct cta__kernel *k = s->kernels[i];
		struct cta_trace_kernel *tk = &h->kernels[i];
		snprintf(tk->name, sizeof(tk->name), "%s", k->label);
		memcpy(tk->grid, k->l.grid, sizeof(tk->grid));
		memcpy(tk->block, k->l.block, sizeof(tk->block));
		memcpy(tk->cluster, k->l.cluster, sizeof(tk->cluster));
		tk->smem_bytes = k->l.smem_static + k->l.smem_dynamic;
		tk->stream = k->stream;
		tk->priority = k->priority;
		tk->release_ns = k->l.release_ns;
	}
	int rc = cta_trace_writer_open(&s->tw, s->o.trace_path, h);
	free(h);
	if (rc < 0) {
		cta__base_errf(s, "%s", cta_trace_writer_errmsg(NULL));
		s->tw = NULL;
	}
	return rc;
}

/* A kernel reaches the head of its stream: it becomes visible to the
 * dispatcher after the launch latency. */
static void stream_append(struct cta_sim *s, struct cta__kernel *k)
{
	struct cta__stream *st = &s->streams[k->stream];
	if (st->tail)
		st->tail->next_in_stream = k;
	else
		st->head = k;
	st->tail = k;
	if (st->head == k)
		cta__engine_push(s, s->now + s->dev.launch_latency_ns, EV_RELEASE, k, 1);
}

void cta__engine_kernel_done(struct cta_sim *s, struct cta__kernel *k)
{
	k->state = K_DONE;
	/* Blocks of skipped periods were not counted one by one into the
	 * coverage set: every block of the grid started, once. */
	if (s->per && s->per->skipped && !s->o.timing_only)
		cta__engine_period_cover_all(k);
	/* last_end_ns is the last block's end (traces/FORMAT.md's makespan), not
	 * this moment, which is later by the retire latency; a kernel that ran
	 * no block ends here. */
	if (k->st.last_end_ns == 0)
		k->st.last_end_ns = s->now;
	cta__base_out_trace(s, s->now, CTA_TEV_KERNEL_END, k->id, CTA_TRACE_NONE, CTA_TRACE_NONE,
	                    CTA_TRACE_NONE, CTA_TRACE_NONE, 0, NULL);
	struct cta__stream *st = &s->streams[k->stream];
	st->head = k->next_in_stream;
	if (!st->head)
		st->tail = NULL;
	else
		cta__engine_push(s, s->now + s->dev.launch_latency_ns, EV_RELEASE, st->head, 1);
}

/* The most bytes an outbox's array keeps once committed. */
#define OUTBOX_KEEP 4096

/* Applies what a segment produced, in the order it produced it. */
static __attribute__((noinline)) void flush_outbox_rest(struct cta_sim *s, struct cta__unit *u);

static inline __attribute__((always_inline)) void flush_outbox(struct cta_sim *s,
                                                               struct cta__unit *u)
{
	struct cta__outbox *o = &u->out;
	s->barrier_crossings += o->crossings;
	o->crossings = 0;
	s->lanes_started += o->lanes;
	o->lanes = 0;
	/* Most outboxes hold only those counts: one test of the first cache
	 * line instead of the walk, inline (every cancel round trip commits
	 * one). */
	if (o->nrecs | o->nubs | o->nmarks | o->ubtotal | o->comm | o->error)
		flush_outbox_rest(s, u);
}

static void flush_outbox_rest(struct cta_sim *s, struct cta__unit *u)
{
	struct cta__outbox *o = &u->out;
	for (size_t i = 0; i < o->nrecs; i++) {
		struct cta_trace_rec *r = &o->recs[i];
		if (r->text)
			r->text = o->text + ((uintptr_t)r->text - 1);
		if (s->tw && !s->io_error && cta_trace_writer_add(s->tw, r) < 0) {
			s->io_error = 1;
			cta__base_errf(s, "%s", cta_trace_writer_errmsg(s->tw));
		}
	}
	o->nrecs = o->ntext = 0;
	if (o->caprecs > OUTBOX_KEEP / sizeof(*o->recs) || o->captext > OUTBOX_KEEP) {
		free(o->recs);
		free(o->text);
		o->recs = NULL;
		o->text = NULL;
		o->caprecs = o->captext = 0;
	}
	/* After an abort, later outboxes of the same batch add nothing. */
	int drop = s->o.ub_mode == CTA_UB_ABORT && s->aborted;
	/* The first CTA__UB_MAX_STORED in commit order are kept (as the runs
	 * of sim/ub/ub.c, the last one cut at the bound), whatever the units
	 * in one batch made before any of them was committed. */
	for (size_t i = 0; i < o->nubs && !drop && s->nubs < CTA__UB_MAX_STORED; i++) {
		const struct cta__ub_rec *r = &o->ubs[i];
		size_t room = CTA__UB_MAX_STORED - s->nubs;
		cta__ub_store_add(s, r, o->ubtext + r->cause,
		                  r->run < room ? r->run : (unsigned)room);
	}
	o->nubs = 0;
	o->ubkept = 0;
	o->nubtext = 0;
	/* A unit keeps its buffers for the next block it runs, but not the
	 * room of a segment that made many reports: each resident unit of a
	 * kernel that reports in every block would keep it. */
	if (o->capubs > OUTBOX_KEEP / sizeof(*o->ubs) || o->capubtext > OUTBOX_KEEP) {
		free(o->ubs);
		free(o->ubtext);
		o->ubs = NULL;
		o->ubtext = NULL;
		o->capubs = o->capubtext = 0;
	}
	/* The watchdog's reports end the run. */
	if (o->ubtotal && (o->ubcount[UB_WATCHDOG] | o->ubcount[UB_FORWARD_PROGRESS]))
		s->stopped = 1;
	for (unsigned r = 0; o->ubtotal && r < UB__ALL; r++) {
		s->ub_counts[r] += drop ? 0 : o->ubcount[r];
		if (o->ubcount[r] && r != UB_BUILTIN_BLOCKIDX_IN_BODY &&
		    s->o.ub_mode == CTA_UB_ABORT)
			s->aborted = 1;
		o->ubcount[r] = 0;
	}
	o->ubtotal = 0;
	for (size_t i = 0; i < o->nmarks; i++)
		cta__cover_mark(&u->k->cover, o->marks[i]);
	o->nmarks = 0;
	if (o->comm && s->pool && u->k->comm_state != 2 && !u->k->l.cooperative &&
	    s->deterministic) {
		/* Blocks communicated through global memory and could run on
		 * several host threads: results stay right, but the order of
		 * their atomics (and so the trace) may differ between runs.
		 * Whether a batch really went to the pool depends on measured
		 * CPU time, so the mark follows what the run allows, not what
		 * the host did, and is the same in every run. */
		s->deterministic = 0;
		if (s->tw)
			cta_trace_writer_set_deterministic(s->tw, 0);
	}
	if (o->error && !s->hung) {
		cta__base_errf(s, "%s", o->errmsg);
		s->hung = 1;
	}
	o->error = 0;
}

/* Adversarial scheduling: the favoured unit stopped spinning, so the
 * starved ones poll again, now, in an order drawn from the seed (the first
 * of them to poll is favoured next). */
static void release_starved(struct cta_sim *s)
{
	s->favored = NULL;
	struct cta__unit *v[64];
	while (s->starved) {
		size_t n = 0;
		while (s->starved && n < 64) {
			v[n++] = s->starved;
			s->starved = s->starved->next_starved;
		}
		for (size_t i = n; i > 1; i--) {
			size_t j = (size_t)(cta__base_rand(s) % i);
			struct cta__unit *t = v[i - 1];
			v[i - 1] = v[j];
			v[j] = t;
		}
		for (size_t i = 0; i < n; i++) {
			v[i]->starved = 0;
			v[i]->poll_queued = 1;
			s->npolls++;
			cta__engine_push(s, s->now, EV_POLL, v[i], 0);
		}
	}
}

/* A unit with spinning lanes polls again at their earliest wake time. */
static void commit_spin(struct cta_sim *s, struct cta__unit *u)
{
	if (u->nspin && !u->poll_queued && !u->starved) {
		u->poll_queued = 1;
		s->npolls++;
		cta__engine_push(s, u->spin_wake > s->now ? u->spin_wake : s->now, EV_POLL, u, 0);
	}
	if (s->favored == u && !u->nspin)
		release_starved(s);
}

/* cta__engine_push for a block's end event at its commit, with the case
 * of a sealed batch's commit inline: every sealed block comes here. */
static inline __attribute__((always_inline)) void push_end(struct cta_sim *s, uint64_t t, int type,
                                                           void *p, uint64_t a)
{
	if (s->seal_push != 1) {
		cta__engine_push(s, t, type, p, a);
		return;
	}
	s->seal_push = 2;
	if (cta__evq_push_seq(&s->q, t, s->seal_seq, type, p, a) < 0) {
		cta__base_errf(s, "out of memory for events");
		s->hung = 1;
	}
}

/* A fresh struct cta__retiring, or NULL when memory ran out (the block
 * then keeps its unit until it retires). */
static struct cta__retiring *retiring_new(struct cta_sim *s)
{
	struct cta__retiring *r = s->free_retiring;
	if (__builtin_expect(!r, 0)) {
		/* A slab: its link to the previous slab, then the records. */
		enum { PER_SLAB = 255 };
		struct cta__retiring *v = malloc((PER_SLAB + 1) * sizeof(*v));
		if (!v)
			return NULL;
		v[0].next = s->retiring_slabs;
		s->retiring_slabs = v;
		for (size_t i = PER_SLAB; i > 1; i--) {
			v[i].next = r;
			r = &v[i];
		}
		s->free_retiring = r;
		return &v[1];
	}
	s->free_retiring = r->next;
	return r;
}

/* Unit u's only CTA is done: unless something still refers to the unit,
 * its retirement is recorded apart and the unit freed now (struct
 * cta__retiring). Nothing observable changes: the EV_RETIRE event takes
 * the EV_END's place in (time, sequence) order and does what it does. */
static inline int retire_early(struct cta_sim *s, struct cta__unit *u, const struct cta__cta *c)
{
	if (u->nctas != 1 || u->clc_objs || u->live_lanes || u->lanes_abandoned || u->watchdog ||
	    s->any_spin)
		return 0;
	struct cta__retiring *r = retiring_new(s);
	if (!r)
		return 0;
	r->k = u->k;
	r->logical = c->logical;
	r->start_t = u->start_t;
	r->end_t = c->end_t;
	r->sm = c->sm;
	push_end(s, c->end_t + s->dev.block_retire_ns, EV_RETIRE, r, 0);
	cta__exec_unit_free(s, u);
	return 1;
}

/* The register file's end hold (spin_regs_hold_warps): CTA c of u, a
 * block of a register-limited kernel whose last thread exited at
 * c->end_t, ends no earlier than the blocks of a lower index placed on
 * its SM with it (its cohort: one kernel, one start) that end more
 * than COHORT_LONGER_NS later (longer blocks: the duration model's
 * factors by index, which end a first wave's blocks a few hundred ns
 * apart, keep their order), while those put spin_regs_hold_warps warps or more on one of its
 * sub-partitions: a block at place r of its cohort (the blocks of a
 * lower index in it before it, by the record of those ended), of w
 * warps, has warp i of r*w .. r*w+w-1 on sub-partition i mod 4. It is
 * recorded in its SM's ring, with that end. A skipped period's blocks
 * (skip_commit) are neither held nor recorded: its repeats of a period
 * in which no end was held hold none. */
#define COHORT_LONGER_NS 3000
static void cohort_hold(struct cta_sim *s, const struct cta__unit *u, struct cta__cta *c)
{
	const struct cta__kernel *k = u->k;
	struct cta__cohort *ring = &s->cohorts[(size_t)c->sm * CTA__COHORT_KEEP];
	struct cta__cohort *b[CTA__COHORT_KEEP];
	unsigned nb = 0, place = 0;
	for (unsigned i = 0; i < CTA__COHORT_KEEP; i++) {
		struct cta__cohort *e = &ring[i];
		if (!e->warps || e->kid != k->id || e->start_t != u->start_t ||
		    e->index >= u->index)
			continue;
		place++;
		if (e->end_t <= c->end_t + COHORT_LONGER_NS)
			continue;
		/* By end, the latest first (ties: the lower index). */
		unsigned j = nb++;
		for (; j && (b[j - 1]->end_t < e->end_t ||
		             (b[j - 1]->end_t == e->end_t && b[j - 1]->index > e->index));
		     j--)
			b[j] = b[j - 1];
		b[j] = e;
	}
	unsigned mine[4] = {0}, cnt[4] = {0};
	for (unsigned w = 0; w < k->warps; w++)
		mine[(place * k->warps + w) % 4] = 1;
	for (unsigned j = 0; j < nb; j++) {
		int held = 0;
		for (unsigned w = 0; w < b[j]->warps; w++) {
			unsigned q = (b[j]->place * b[j]->warps + w) % 4;
			held |= mine[q] && ++cnt[q] >= s->dev.spin_regs_hold_warps;
		}
		if (held) {
			c->end_t = b[j]->end_t;
			/* The period's state does not hold the cohort ring: no
			 * period is cut once an end was held (a period before
			 * held none, nor do its repeats). */
			if (s->per)
				s->per->off = 1;
			break;
		}
	}
	unsigned *next = &s->cohort_next[c->sm];
	ring[*next] = (struct cta__cohort){u->start_t, u->index, c->end_t, k->id, k->warps, place};
	*next = (*next + 1) % CTA__COHORT_KEEP;
}

static inline __attribute__((always_inline)) void commit_unit_inline(struct cta_sim *s,
                                                                     struct cta__unit *u)
{
	flush_outbox(s, u);
	/* New cancel requests are resolved at their issue time (an emulated
	 * one from a far GPC later: cta__clc_arrival), in issue order. */
	for (struct cta__request *r = u->new_reqs; r; r = r->next_new) {
		uint64_t t = r->issue_t < s->now ? s->now : r->issue_t;
		/* (Emulated CLC: a far GPC's request reaches the cursor later.) */
		t += cta__clc_arrival(s, r);
		/* Emulated CLC's cancels interleave (each claim waits for the
		 * claims before it on its bitmap word): the calendar. With a
		 * fixed latency they come in time order, which a ring takes
		 * for less. (A sealed batch's commit numbers its events
		 * apart.) */
		if (!s->dev.clc_emulated || __builtin_expect(s->seal_push != 0, 0))
			cta__engine_push(s, t, EV_CANCEL, r, 0);
		else if (cta__evq_push_near(&s->q, s->now, t, EV_CANCEL, r, 0) < 0) {
			cta__base_errf(s, "out of memory for events");
			s->hung = 1;
		}
	}
	u->new_reqs = u->new_reqs_tail = NULL;
	if (__builtin_expect(s->any_spin, 0))
		commit_spin(s, u);
	for (unsigned i = 0; i < u->nctas; i++) {
		struct cta__cta *c = &u->ctas[i];
		if (c->done == 1) {
			c->done = 2;
			if (c->end_t < s->now)
				c->end_t = s->now;
			if (__builtin_expect(s->cohorts != NULL, 0) && u->k->part_warps &&
			    u->nctas == 1)
				cohort_hold(s, u, c);
			if (retire_early(s, u, c))
				return;
			push_end(s, c->end_t + s->dev.block_retire_ns, EV_END, u, i);
		}
	}
}

/* The out-of-line copy for the engine's own callers. (Calling
 * cta__engine_commit there instead changes gcc's inlining in the engine:
 * 13 more instructions a block in a timing-only run, callgrind.) */
static void commit_unit(struct cta_sim *s, struct cta__unit *u)
{
	commit_unit_inline(s, u);
}

static void run_segments(struct cta_sim *s, struct cta__unit *const *v, size_t n, unsigned worker)
{
	cta__base_seg_worker = &s->workers[worker];
	cta__exec_units_run(s, v, n);
	cta__base_seg_worker = NULL;
}

void cta__engine_commit(struct cta_sim *s, struct cta__unit *u)
{
	commit_unit(s, u);
}

/* Runs on a unit that a resolved cancel resumed. A lane of it that waits
 * for the engine again may commit it and step the engine on itself
 * (lane_engine in sim/exec/exec.c, solo_done): the scheduler then has nothing left to
 * do for it. */
static void run_unit(struct cta_sim *s, struct cta__unit *u)
{
	s->solo = 1;
	s->solo_done = 0;
	/* Through s->solo_unit: the lanes may hand the segment on to the
	 * unit of a later cancel before one comes back here. */
	s->solo_unit = u;
	run_segments(s, &s->solo_unit, 1, 0);
	s->solo = 0;
	if (!s->solo_done)
		commit_unit(s, s->solo_unit);
	s->solo_done = 0;
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* The monotonic clock: read without a system call (the vDSO), where a
 * thread's CPU clock takes one, which cost a block of block_reduce about
 * as much as its body. */
static uint64_t wall_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* One unit of a parallel batch. Its time is added to its worker's own
 * line: one counter for all of them was a line every block of the batch
 * wrote. (Wall time: a worker is not preempted often enough for it to
 * matter to the estimate of a body's cost.) */
static void segment_task(void *ctx, size_t i, unsigned worker)
{
	struct cta_sim *s = ctx;
	if (!s->batch[s->par_base + i])
		return; /* memory for its unit ran out: the run stops as hung */
	uint64_t t0 = wall_ns();
	run_segments(s, &s->batch[s->par_base + i], 1, worker);
	s->workers[worker].busy_ns += wall_ns() - t0;
}

static void on_free(struct cta_sim *s, struct cta__kernel *k, unsigned sm, struct cta__unit *u,
                    uint64_t logical);

/* A unit of the batch starts: its kernel's counts and coverage. */
static inline void unit_started(struct cta_sim *s, struct cta__unit *u)
{
	struct cta__kernel *k = u->k;
	if (__builtin_expect(u->gate == 3, 0)) {
		/* Let go by the issue gate: its start was counted when it came. */
		u->gate = 0;
		return;
	}
	for (unsigned i = 0; i < u->nctas; i++) {
		struct cta__cta *c = &u->ctas[i];
		cta__base_out_trace(s, u->start_t, CTA_TEV_START, k->id, c->logical, c->logical,
		                    c->sm, CTA_TRACE_NONE, 0, NULL);
		if (k->st.launched == 0)
			k->st.first_start_ns = u->start_t;
		k->st.launched++;
		k->per_sm[c->sm]++;
		/* Coverage is checked on full runs only (finish_stats). */
		if (!s->o.timing_only)
			cta__cover_add(&k->cover, c->logical);
	}
}

void cta__engine_unit_started(struct cta_sim *s, struct cta__unit *u)
{
	unit_started(s, u);
}

int cta__engine_early_commits = 1;

/* Makes the unit of batch[i], a block left to be made (struct
 * cta__placed); NULL, the run stopped as hung, when memory ran out. */
static inline __attribute__((always_inline)) struct cta__unit *make_placed_plain(struct cta_sim *s,
                                                                                 size_t i)
{
	const struct cta__placed *p = &s->placed[i];
	struct cta__held *h = p->h;
	struct cta__unit *u;
	if (__builtin_expect(h != NULL, 0)) {
		/* A block the issue gate let go: what cta__exec_gate_open gives
		 * a held unit, from the duration index it was let go at (its
		 * entry was done while it waited: its first call pays in full). */
		u = cta__exec_unit_make(s, p->k, p->index, &p->sm, p->start_t, h->p.spin, h->p.add,
		                        0);
		if (u) {
			u->cursor.t0 = h->rel_t > u->cursor.t0 ? h->rel_t : u->cursor.t0;
			u->ctas[0].end_t = h->rel_t > u->start_t ? h->rel_t : u->start_t;
			/* 3: its start was counted; unit_started, which every
			 * unit made outside a sealed batch meets, says so (a
			 * sealed batch counted its starts when sealed). */
			u->gate = h->state == 3 && !s->sealed_run ? 3 : 0;
			cta__exec_held_free(s, h);
		}
	} else {
		u = cta__exec_unit_make(s, p->k, p->index, &p->sm, p->start_t, p->spin, p->add,
		                        p->first);
	}
	if (!u) {
		cta__base_errf(s, "out of memory for blocks");
		s->hung = 1;
	}
	return s->batch[i] = u;
}

static struct cta__unit *make_placed_per(struct cta_sim *s, size_t i);

static struct cta__unit *make_placed(struct cta_sim *s, size_t i)
{
	if (__builtin_expect(s->per_hook, 0))
		return make_placed_per(s, i);
	return make_placed_plain(s, i);
}

struct cta__unit *cta__engine_unit_at(struct cta_sim *s, size_t i)
{
	i += s->seg_base;
	return s->batch[i] ? s->batch[i] : make_placed(s, i);
}

/* batch[i] is a block the issue gate holds, its batch not run yet. */
static inline int held_waiting(const struct cta_sim *s, size_t i)
{
	return !s->batch[i] && s->placed[i].h && s->placed[i].h->state == 1;
}

/* Makes the units of batch[from, to) that are not made yet, but for those
 * the issue gate holds. */
static void make_units(struct cta_sim *s, size_t from, size_t to)
{
	for (size_t i = from; i < to; i++)
		if (!s->batch[i] && !held_waiting(s, i))
			make_placed(s, i);
}

/* The start of a block left to be made, counted as unit_started counts a
 * unit's; not again for one the issue gate let go (counted when it was
 * set aside). */
static void placed_started(struct cta_sim *s, const struct cta__placed *p)
{
	if (p->h && p->h->state == 3)
		return;
	cta__base_started(s, p->k, p->index, p->sm, p->start_t);
}

/* The kernel of batch[i], made or not. */
static inline struct cta__kernel *batch_kernel(const struct cta_sim *s, size_t i)
{
	return s->batch[i] ? s->batch[i]->k : s->placed[i].k;
}

/* Unit u of a sealed batch, batch[i], commits as it would have when its
 * batch was sealed: at the engine's time then, its event (its end) with
 * the sequence number kept for it. Nothing the engine did since read what
 * the commit writes (seal_ready). */
static __attribute__((noinline)) void commit_sealed(struct cta_sim *s, size_t i,
                                                    struct cta__unit *u)
{
	while (s->seals[s->seal_cur].end <= i)
		s->seal_cur++;
	const struct cta__sealed *g = &s->seals[s->seal_cur];
	size_t begin = s->seal_cur ? s->seals[s->seal_cur - 1].end : 0;
	uint64_t now = s->now;
	s->now = g->now;
	s->seal_seq = g->seq + (i - begin);
	s->seal_push = 1;
	commit_unit_inline(s, u);
	s->seal_push = 0;
	s->now = now;
}

static void commit_per(struct cta_sim *s, size_t i, struct cta__unit *u);

static inline __attribute__((always_inline)) void commit_batch_unit(struct cta_sim *s, size_t i,
                                                                    struct cta__unit *u)
{
	if (__builtin_expect(s->per_hook, 0)) {
		commit_per(s, i, u);
		return;
	}
	if (__builtin_expect(!s->sealed_run, 1))
		commit_unit_inline(s, u);
	else
		commit_sealed(s, i, u);
}

/* Commits the units of the running batch up to index `upto`, whose
 * bodies are done for this batch, when that changes nothing: a unit whose
 * outbox holds trace records, UB reports or an error (the committing of
 * which writes the trace, may abort the run or stop it) ends the early
 * commits of the batch; run_ready commits the rest, in order, as it
 * commits every batch. Bodies read nothing a commit writes but the abort
 * flag (cta__ub), which only UB reports set, and the trace records a
 * commit would write come after the batch's start records either way. */
void cta__engine_commit_early(struct cta_sim *s, size_t upto)
{
	upto += s->seg_base;
	while (s->commit_next <= upto) {
		struct cta__unit *u = s->batch[s->commit_next];
		if (!u) {
			s->commit_next++; /* never made: memory ran out */
			continue;
		}
		const struct cta__outbox *o = &u->out;
		if (o->nrecs | o->nubs | o->ubtotal | o->error) {
			s->early_commit = 0;
			return;
		}
		commit_batch_unit(s, s->commit_next, u);
		s->commit_next++;
	}
}

/* The first units of a kernel run alone on the engine's thread, in
 * dispatch order, before any block of it runs on the pool: a kernel whose
 * blocks wait for one another shows it there (its first block waits for a
 * later one and spins: every such shipped kernel does so in block 0), and
 * a kernel that does not is then run in parallel from its next unit on,
 * not only from its next batch. The probe is also the first measure of
 * what a unit costs. */
#define PROBE_UNITS 4

/* Pool tasks of a parallel batch are dealt out about this much host time
 * at a time: small enough that the last chunks even out the workers
 * (compute_heavy's 400 us blocks go one by one), large enough that cheap
 * blocks do not contend on the pool's counter. */
#define CHUNK_NS 20000.0

/* A measured cost of one segment. A probe's few units, the first of their
 * kernel, pay for its first lanes and pages: its figure only stands in
 * until a batch is measured. */
static void seg_cost(struct cta_sim *s, double per, int probe)
{
	if (s->seg_ns == 0 || s->seg_probed) {
		s->seg_ns = per;
		s->seg_probed = probe;
	} else if (!probe) {
		s->seg_ns = 0.5 * s->seg_ns + 0.5 * per;
	}
}

/* A batch is run on the pool only while that takes less wall time a
 * unit, from its making to its commit, than running it here: the engine's
 * own work a unit (making it, counting its start, committing it: about
 * 800 instructions, on lines another core wrote last when it ran there)
 * stays on this thread, so bodies cheaper than it (block_reduce's, well
 * under a microsecond in the loop form) gain nothing from the pool. Both
 * ways are timed (wall time: what the pool is for), and the way not taken
 * is timed again every POOL_RETRY batches (on a slice of a batch when it
 * is this thread's), so that bodies that grow or shrink move the choice;
 * the choice changes only speed, never results. */
#define POOL_RETRY 64

/* How much of a batch the pool runs is timed here when this thread's way
 * is timed on a slice: about this much host time. */
#define SLICE_NS 200000.0

/* A batch the host stalled (a worker descheduled: one of block_reduce's
 * pooled batches took 5.9 us a unit on the H100 host, among 0.4-0.8)
 * moves the estimate to at most 1.5 times itself, so that one stall does
 * not keep a way untried for POOL_RETRY batches; a way that really got
 * slower wins the comparison after a few. */
static void wall_cost(double *est, double per)
{
	if (*est > 0 && per > 2.0 * *est)
		per = 2.0 * *est;
	*est = *est == 0 ? per : 0.5 * *est + 0.5 * per;
}

/* Whether the pool is the way for a batch that has enough work to wake it:
 * the faster of the two, measured, not guessed. Until both ways are timed,
 * the pool (this thread's way is timed on a slice before it is first
 * woken: run_ready); and its first timed batch pays for its workers'
 * first lanes, runners and pages (block_reduce's first pooled batch took
 * 4.5-7 us a unit on the H100 host, the ones after it 0.4-0.8 us, against
 * 0.6-1.6 us here), so its figure is replaced by its second's. A guess of
 * 2 us of body a unit kept block_reduce's 0.5-1.5 us bodies here without
 * ever timing the pool. */
static int pool_pays(const struct cta_sim *s)
{
	if (!s->pool)
		return 0;
	if (s->seg_ns == 0 || s->par_timed < 2 || s->ser_wall == 0)
		return 1;
	return s->par_wall < s->ser_wall;
}

/* Runs batch[from, to) on this thread, in dispatch order. */
static void run_serial(struct cta_sim *s, size_t from, size_t to, int lazy)
{
	s->seg_base = from;
	s->lazy_start = lazy;
	run_segments(s, s->batch + from, to - from, 0);
	s->lazy_start = 0;
	s->seg_base = 0;
}

/* Runs the bodies of every dispatched unit (the batch), then commits them
 * in dispatch order. On the pool's host threads when there are several;
 * on this one, the segment commits each unit as soon as it is done
 * (cta__engine_commit_early) and, without a trace, counts each unit's start as
 * it comes to it (cta__engine_unit_started): a unit's memory is then touched
 * while it is still in cache, and the batch makes one pass over its units
 * instead of three. A batch may be run as a serial part (a new kernel's
 * probe, PROBE_UNITS) followed by a parallel one. */
/* The units of batch[from, n) that the issue gate holds leave it, their
 * starts recorded (or counted), until gate_release puts them in a batch
 * again; returns the end of the entries that stay. Held units are always made
 * (place_unit), so a block left to be made stays where it is with its
 * placement record. */
static size_t gate_set_aside(struct cta_sim *s, size_t from, size_t n, int lazy)
{
	size_t w = from;
	for (size_t i = from; i < n; i++) {
		struct cta__unit *u = s->batch[i];
		if (u && u->gate == 1) {
			if (lazy)
				unit_started(s, u);
			u->gate = 2;
			continue;
		}
		if (held_waiting(s, i)) {
			if (lazy)
				placed_started(s, &s->placed[i]);
			s->placed[i].h->state = 2;
			continue;
		}
		if (!u)
			s->placed[w] = s->placed[i];
		s->batch[w++] = u;
	}
	return w;
}

/* Blocks the issue gate let go wait for their body's first instruction
 * in one batch while the batch holds fewer units than this: a larger one
 * runs bodies out of cache (made units, not placement records), and
 * block_reduce's barrier regions lose what saxpy gains (ctasim bench: at
 * 128, barrier_regions 10% slower; at 64, as before). */
#define GATE_BATCH 64

/* Queues h, a block held apart (struct cta__held) let go while the open
 * batch is the one it would have joined when placed, where it would stand
 * there: after the pos entries that were in the open batch then, and
 * after the blocks held apart placed before it that were let go into it
 * meanwhile, before those placed after it. As such an entry it runs from
 * its start time. */
static void ready_insert_held(struct cta_sim *s, struct cta__held *h)
{
	size_t j = s->nsealed + h->pos;
	if (s->open_ins) {
		/* Entries inserted so before it shift it on; those after it
		 * stop it. */
		size_t seen = 0;
		for (j = s->nsealed; j < s->nready; j++) {
			const struct cta__held *o = s->batch[j] ? NULL : s->placed[j].h;
			if (o && o->ins == 2 && o->gen == s->open_gen) {
				if (o->pos > h->pos || (o->pos == h->pos && o->ord > h->ord))
					break;
				continue;
			}
			if (seen == h->pos)
				break;
			seen++;
		}
	}
	struct cta__placed p = h->p;
	p.h = h;
	cta__base_ready_placed_from(s, &p, p.start_t);
	size_t last = s->nready - 1;
	if (j < last) {
		memmove(&s->batch[j + 1], &s->batch[j], (last - j) * sizeof(*s->batch));
		memmove(&s->placed[j + 1], &s->placed[j], (last - j) * sizeof(*s->placed));
		s->batch[j] = NULL;
		s->placed[j] = p;
	}
	h->ins = 2;
	s->open_ins++;
	s->open_apart--;
	s->held_inserted++;
}

/* Whether the gates let a held block of k, started at `start`, begin
 * with `running` threads and `warps` warps running on its SM: the late
 * entry (spin_regs_late_ns) holds one the register file's gate would
 * let go with at most spin_regs_free warps' registers free until it
 * waited that long. */
static int gate_lets(const struct cta_sim *s, const struct cta__kernel *k, uint64_t start,
                     unsigned running, unsigned warps, unsigned sm, uint64_t index,
                     const unsigned *lsub)
{
	if (s->dev.spin_gate_threads && running > s->dev.spin_gate_threads)
		return 0;
	/* Only register-limited kernels have a register file's gate. */
	if (!k->part_warps)
		return 1;
	unsigned want[4];
	if (warps && cta__exec_part_of(s, sm, k, index, want)) {
		unsigned f = cta__exec_part_fullest(s, sm, want, 1, lsub);
		return !cta__exec_regs_fills(s, k, f, 0) &&
		       (start + s->dev.spin_regs_late_ns <= s->now ||
		        !cta__exec_regs_fills(s, k, f, 1));
	}
	return !cta__exec_regs_waits(s, k, warps) &&
	       (start + s->dev.spin_regs_late_ns <= s->now || !cta__exec_regs_late(s, k, warps));
}

/* When a block of k held on SM m is let go with every held block at a
 * stealing kernel's first request (late: that time, clc_late_ppm): on an
 * SM that k fills (no further block of it fits by threads) its warps get
 * no issue slots until the blocks ahead reach their first wait, `late`;
 * elsewhere now. */
static uint64_t open_at(const struct cta_sim *s, const struct cta__sm *m,
                        const struct cta__kernel *k, uint64_t late)
{
	return late > s->now && m->threads + k->threads > s->dev.max_threads_per_sm ? late : s->now;
}

/* Whether a block of k held since `start` has waited the register file's
 * gate's longest (spin_regs_wait_ns), with `running` threads running on
 * its SM that the issue gate would let it begin beside. */
static int regs_wait_over(const struct cta_sim *s, const struct cta__kernel *k, uint64_t start,
                          unsigned running)
{
	return s->dev.spin_regs_wait_ns && k->part_warps &&
	       start + s->dev.spin_regs_wait_ns <= s->now &&
	       (!s->dev.spin_gate_threads || running <= s->dev.spin_gate_threads);
}

/* A block of `leaving` threads and `lwarps` warps leaving SM sm (not yet
 * taken off its counts) lets the units the gates hold there begin, oldest
 * first, while the threads running before each are at most
 * spin_gate_threads and the register file's gate lets it, or (`due`) it
 * waited that gate's longest; with `all`, every one, at the time open_at
 * gives for `late` (0: now). */
static void gate_release(struct cta_sim *s, unsigned sm, unsigned leaving, unsigned lwarps, int all,
                         uint64_t late, int due, const unsigned *lsub)
{
	struct cta__sm *m = &s->sms[sm];
	unsigned running = m->threads - leaving - m->gate_threads;
	unsigned warps = m->warps - lwarps - m->gate_warps;
	while (m->gate_head &&
	       (all ||
	        gate_lets(s, m->gate_head->k, m->gate_head->start_t, running, warps, sm,
	                  m->gate_head->ctas[0].logical, lsub) ||
	        (due && regs_wait_over(s, m->gate_head->k, m->gate_head->start_t, running)))) {
		struct cta__unit *u = m->gate_head;
		m->gate_head = u->gate_next;
		if (!m->gate_head)
			m->gate_tail = NULL;
		m->gate_threads -= u->k->threads;
		m->gate_warps -= u->k->warps;
		cta__exec_part_gate(s, sm, u->k, u->ctas[0].logical, 0);
		s->gate_waiting--;
		cta__exec_gate_open(s, u, running, warps, open_at(s, m, u->k, late));
		running += u->k->threads;
		warps += u->k->warps;
		if (u->gate == 1) {
			u->gate = 0; /* its batch has not run yet: it runs there */
			s->open_held--;
		} else {
			/* Its body begins at cursor.t0: the ends and releases
			 * before then do not depend on it, so the blocks let go
			 * meanwhile run as one batch (one batch a block
			 * otherwise), up to GATE_BATCH of them. While blocks
			 * spin, a poll before then may read what it writes, in
			 * host order: it runs at once. With a trace it runs at
			 * once too: the start records of the batch it joins
			 * keep their place among the end records. */
			u->gate = 3;
			int now = all || s->any_spin || s->tw ||
			          s->nready - s->nsealed + s->open_apart >= GATE_BATCH;
			cta__base_ready_from(s, u, now ? u->start_t : u->cursor.t0);
		}
	}
	/* The same for blocks held as records (struct cta__held). */
	while (m->held_head &&
	       (all ||
	        gate_lets(s, m->held_head->p.k, m->held_head->p.start_t, running, warps, sm,
	                  m->held_head->p.index, lsub) ||
	        (due && regs_wait_over(s, m->held_head->p.k, m->held_head->p.start_t, running)))) {
		struct cta__held *h = m->held_head;
		m->held_head = h->next;
		if (!m->held_head)
			m->held_tail = NULL;
		m->gate_threads -= h->p.k->threads;
		m->gate_warps -= h->p.k->warps;
		cta__exec_part_gate(s, sm, h->p.k, h->p.index, 0);
		s->gate_waiting--;
		uint64_t at = open_at(s, m, h->p.k, late);
		cta__exec_gate_open_placed(s, h, running, warps, at);
		running += h->p.k->threads;
		warps += h->p.k->warps;
		if (h->state == 1) {
			h->state = 0;
			s->open_held--;
		} else if (h->ins == 1 && h->gen == s->open_gen) {
			/* Held apart, let go before the batch it would have
			 * joined at its placement was sealed or run: it runs
			 * there, where it would have stood (state 0), its
			 * start counted already (3). */
			h->state = 3;
			ready_insert_held(s, h);
		} else {
			h->state = 3;
			int now = all || s->any_spin || s->tw ||
			          s->nready - s->nsealed + s->open_apart >= GATE_BATCH;
			uint64_t t0 = h->p.start_t + s->dev.spin_block_add_ns;
			t0 = h->rel_t > t0 ? h->rel_t : t0; /* at, or after its entry */
			struct cta__placed p = h->p;
			p.h = h;
			cta__base_ready_placed_from(s, &p, now ? p.start_t : t0);
		}
	}
}

/* Whether the open batch, whose time to run came, may be sealed: left to
 * run later, with its commits as they would have been now (seal_ready).
 * Its blocks' bodies cannot tell when they run; what must stay as it is:
 * the bodies' order (kept: a sealed batch runs before any later one), what
 * the engine reads of their commits until then (nothing, below), the
 * events the commits push (their times are at least seal_h, later than any
 * event the engine handles meanwhile, and their sequence numbers are
 * kept). So no trace (its records are written in commit order with the
 * engine's), no abort at the first UB (the run would stop at the commit),
 * nothing spinning and no cancel (a sanitizer's reports are UB reports in
 * the outbox, and its state follows the bodies, whose order is kept): a
 * spinning block's polls and a cancel request are events its body
 * decides, at any time from its first instruction, and both change what
 * the engine does for other blocks. So a kernel's blocks are sealed only
 * when the kernel compiler found that no call its body can make reaches a
 * spin or poll, a CLC call or a grid, cluster or mbarrier wait
 * (CTA__KC_NO_WAIT, exec/regions.h):
 * what a sealed block does cannot matter to the engine before its commit,
 * whatever its data. Kernels it did not see are never sealed. And only once
 * a batch of the kernel ran at its own time: an error every block of it
 * makes (a launch that declares too little shared memory) then stops the
 * run where a run without sealing stops. */
int cta__engine_seal = 1;

static int can_seal(struct cta_sim *s)
{
	/* (What cannot change during the run is seal_static, set by
	 * cta_sim_run; only the bodies of kernels not known never to wait
	 * can make a CLC call, seal_clc. No body runs during one call of
	 * cta__engine_step, so what the bodies and run_ready can change is
	 * read once a call: seal_known, and seal_k, a kernel found to pass.) */
	if (!s->seal_known) {
		int ok = s->seal_static && !s->seal_off &&
		         !__atomic_load_n(&s->any_spin, __ATOMIC_RELAXED);
		for (unsigned i = 0; ok && s->seal_clc && i < s->nkernels; i++)
			if (__atomic_load_n(&s->kernels[i]->uses_clc, __ATOMIC_RELAXED))
				ok = 0;
		s->seal_known = ok ? 1 : -1;
		s->seal_k = NULL;
	}
	if (s->seal_known < 0)
		return 0;
	for (size_t i = s->nsealed; i < s->nready; i++) {
		const struct cta__kernel *k = batch_kernel(s, i);
		if (k == s->seal_k)
			continue;
		if (!k->never_waits || !k->ran_batch || k->csize != 1 || k->l.cooperative)
			return 0;
		s->seal_k = k;
	}
	return 1;
}

/* Seals the open batch where run_ready would run it: what run_ready does
 * before the bodies (the issue gate's blocks set aside, every start
 * counted, in the same order) is done now, the engine's time and the
 * sequence numbers of the units' end events are kept for their commits,
 * and seal_h becomes the earliest time such an event can have: a block
 * ends no earlier than it was placed or let go (its end_t so far) and
 * retires block_retire_ns later. Blocks let go at one time on many SMs
 * (or placed then) so run as one batch, a wave, not one batch each. */
static void seal_ready(struct cta_sim *s)
{
	size_t from = s->nsealed;
	size_t w = s->open_held ? gate_set_aside(s, from, s->nready, 1) : s->nready;
	s->nready = w;
	uint64_t h = from ? s->seal_h : UINT64_MAX;
	for (size_t i = from; i < w; i++) {
		struct cta__unit *u = s->batch[i];
		uint64_t e;
		if (u) {
			unit_started(s, u);
			e = u->ctas[0].end_t;
		} else {
			const struct cta__placed *p = &s->placed[i];
			e = p->start_t;
			if (!p->h) {
				placed_started(s, p);
			} else {
				if (p->h->state != 3)
					placed_started(s, p);
				if (p->h->rel_t > e) /* let go (state 0 or 3) */
					e = p->h->rel_t;
			}
		}
		e = (e > s->now ? e : s->now) + s->dev.block_retire_ns;
		h = e < h ? e : h;
	}
	s->seal_h = h;
	s->seals = cta__base_grow(s->seals, &s->seals_cap, s->nseals + 1, sizeof(*s->seals));
	s->seals[s->nseals++] = (struct cta__sealed){w, s->now, s->q.seq};
	s->q.seq += w - from;
	s->nsealed = w;
	s->batches_sealed++;
	s->open_gen++;
	s->open_ins = 0;
	s->open_apart = 0;
	s->open_held = 0;
}

static void run_ready(struct cta_sim *s)
{
	/* Sealed batches first, alone: the open batch's time may not have
	 * come yet. */
	int sealed = s->nsealed != 0;
	size_t n = sealed ? s->nsealed : s->nready;
	if (!sealed) {
		s->nready = 0;
		s->open_gen++;
		s->open_ins = 0;
		s->open_apart = 0;
		s->open_held = 0;
	}
	uint64_t b = s->batches++;
	s->commit_next = 0;
	s->early_commit = cta__engine_early_commits;
	/* Start records come first, in dispatch order, for the whole batch:
	 * what a body does cannot change them. Without a trace the serial
	 * parts count their units' starts as they come to them (a sealed
	 * batch counted them when it was sealed). */
	int lazy = !s->tw && cta__engine_early_commits;
	if (sealed) {
		lazy = 0;
		s->sealed_run = 1;
		s->seal_cur = 0;
	} else {
		for (size_t i = 0; i < n; i++)
			batch_kernel(s, i)->ran_batch = 1;
		if (!lazy) {
			make_units(s, 0, n);
			for (size_t i = 0; i < n; i++)
				if (s->batch[i])
					unit_started(s, s->batch[i]);
				else if (held_waiting(s, i))
					placed_started(s, &s->placed[i]);
		}
		if (s->gate_waiting)
			n = gate_set_aside(s, 0, n, lazy);
	}
	/* The wall time of this batch's timed parts (pool_pays): on the
	 * pool, and here, [1] for a probe's units; one slice a batch. */
	uint64_t par_w0 = 0, ser_w[2] = {0, 0};
	size_t par_m = 0, ser_m[2] = {0, 0}, ser_late[2] = {0, 0};
	int sliced = 0;
	for (size_t i = 0; i < n;) {
		/* Waking the pool costs microseconds, and a block whose body
		 * costs less than a couple of microseconds loses more to
		 * moving its memory between cores than it gains: such units
		 * (timing-only grids, tiny kernels) run on this thread. The
		 * estimate of a body's cost is a running average of measured
		 * batches; the choice changes only speed, never results. */
		size_t m = n - i, end = n;
		int enough =
		    s->pool && m > 1 && (s->seg_ns == 0 || s->seg_ns * (double)m > 50000.0);
		int parallel = enough && pool_pays(s);
		/* The way not taken, timed again (POOL_RETRY): this thread's
		 * on a slice of the batch, the rest then going the faster way;
		 * the pool's on the whole batch. */
		int slice = 0;
		if (enough && s->par_wall > 0 && ++s->since_other >= POOL_RETRY) {
			s->since_other = 0;
			if (parallel)
				slice = 1;
			else
				parallel = 1;
		}
		/* A probe's figure pays for a kernel's first lanes and pages:
		 * a slice is timed before the pool is first woken for it (a
		 * microsecond body measured about 2 us so, and its batches then
		 * went to the pool, which timed them slower still). */
		if (parallel &&
		    (s->seg_probed || (s->par_wall > 0 && (s->ser_wall == 0 || s->ser_probed))))
			slice = 1;
		slice &= !sliced;
		/* Blocks that wait for one another run on this thread, in
		 * dispatch order: what a spinning one reads of another's
		 * writes, and when it yields, must not depend on host threads.
		 * A kernel's first units run here (PROBE_UNITS); once a thread
		 * of it spun (cta__spin_poll), or for a cooperative launch, all
		 * of it does. Kernels whose atomics only accumulate
		 * (block_reduce's total) keep running in parallel, their traces
		 * marked '#deterministic 0' when atomics ran on several host
		 * threads. */
		int probe = 0;
		for (size_t j = i; parallel && j < n; j++) {
			int cs = batch_kernel(s, j)->comm_state;
			if (cs == 2)
				parallel = 0;
			else if (cs == 0 && !probe) {
				probe = 1;
				end = n - j > PROBE_UNITS ? j + PROBE_UNITS : n;
			}
		}
		if (slice && !probe) {
			sliced = 1;
			s->slices++;
			double e = s->seg_ns > 0 ? SLICE_NS / s->seg_ns : 16.0;
			end = e < 1.0 ? i + 1 : e < (double)(m / 4) ? i + (size_t)e : i + m / 4;
			end = end > i ? end : i + 1;
		}
		if (!parallel || probe || slice) {
			/* While the estimate keeps batches here, every 64th is
			 * timed to notice when bodies become expensive. */
			int timed = s->pool && (probe || slice || (b & 63) == 1);
			uint64_t t0 = timed ? thread_cpu_ns() : 0, w0 = timed ? wall_ns() : 0;
			run_serial(s, i, end, lazy);
			if (timed) {
				seg_cost(s, (double)(thread_cpu_ns() - t0) / (double)(end - i),
				         probe);
				ser_w[probe] += wall_ns() - w0;
				ser_m[probe] += end - i;
				/* Units left to the commits after the batch. */
				ser_late[probe] += end - (s->commit_next > i ? s->commit_next : i);
			}
			if (s->pool)
				for (size_t j = i; j < end; j++)
					if (!batch_kernel(s, j)->comm_state)
						batch_kernel(s, j)->comm_state = 1;
			i = end;
			continue;
		}
		/* The rest of the batch on the pool. Its units are committed
		 * after it, so the early commits end here. The units are made
		 * here, on this thread, which owns the free list. */
		par_w0 = wall_ns();
		par_m = m;
		make_units(s, i, n);
		if (lazy)
			for (size_t j = i; j < n; j++)
				if (s->batch[j])
					unit_started(s, s->batch[j]);
		s->early_commit = 0;
		/* The pools are idle: runners that finished away from their
		 * maker go home before the workers need them. */
		cta__exec_return_runners(s);
		for (unsigned w = 0; w < s->nworkers; w++)
			s->workers[w].busy_ns = 0;
		s->par_base = i;
		size_t chunk =
		    s->seg_ns > 0 && s->seg_ns < CHUNK_NS ? (size_t)(CHUNK_NS / s->seg_ns) : 1;
		s->in_pool = 1;
		cta__pool_run_chunked(s->pool, segment_task, s, m, chunk);
		s->in_pool = 0;
		s->pool_units += m;
		uint64_t busy = 0;
		for (unsigned w = 0; w < s->nworkers; w++)
			busy += s->workers[w].busy_ns;
		/* (The pool's first batch stands in as a probe's would.) */
		seg_cost(s, (double)busy / (double)m, s->par_timed == 0);
		i = n;
	}
	s->early_commit = 0;
	size_t timed = par_m | ser_m[0] | ser_m[1];
	uint64_t c0 = timed ? wall_ns() : 0;
	size_t from = s->commit_next;
	for (size_t i = from; i < n; i++)
		if (s->batch[i])
			commit_batch_unit(s, i, s->batch[i]);
	if (timed) {
		/* Both ways' units with their commits: the pool's, on lines
		 * its workers wrote, are its cost as much as the hand-off. */
		uint64_t c1 = wall_ns();
		double per = n > from ? (double)(c1 - c0) / (double)(n - from) : 0;
		if (par_m && s->par_timed++ == 1)
			s->par_wall = 0; /* the first batch's figure (pool_pays) */
		if (par_m)
			wall_cost(&s->par_wall,
			          ((double)(c0 - par_w0) + per * (double)par_m) / (double)par_m);
		/* A probe's figure only while there is no other. */
		int pr = ser_m[0] == 0;
		if (ser_m[pr] && (!pr || s->ser_wall == 0 || s->ser_probed)) {
			wall_cost(&s->ser_wall, ((double)ser_w[pr] + per * (double)ser_late[pr]) /
			                            (double)ser_m[pr]);
			s->ser_probed = pr;
		}
	}
	if (!sealed)
		return;
	s->sealed_run = 0;
	/* A sealed block that spun or cancelled, or a commit that stopped
	 * the run, did what the engine should have seen at its batch's time:
	 * no more sealing (docs/PERFORMANCE.md). */
	if (__atomic_load_n(&s->any_spin, __ATOMIC_RELAXED) || s->hung || s->stopped)
		s->seal_off = 1;
	for (unsigned i = 0; i < s->nkernels; i++)
		if (__atomic_load_n(&s->kernels[i]->uses_clc, __ATOMIC_RELAXED))
			s->seal_off = 1;
	/* The open batch moves to the front. */
	size_t m = s->nready - n;
	for (size_t i = 0; i < m; i++) {
		s->batch[i] = s->batch[n + i];
		if (!s->batch[i])
			s->placed[i] = s->placed[n + i];
	}
	s->nready = m;
	s->nsealed = 0;
	s->nseals = 0;
}

/* A CTA's last thread exited at c->end_t; its slot is free once the
 * retire latency has passed, which is when this runs. */
static void on_end(struct cta_sim *s, struct cta__unit *u, unsigned i)
{
	struct cta__cta *c = &u->ctas[i];
	struct cta__kernel *k = u->k;
	cta__base_out_trace(s, c->end_t, CTA_TEV_END, k->id, c->logical, c->logical, c->sm,
	                    CTA_TRACE_NONE, 0, NULL);
	k->st.busy_ns += c->end_t - u->start_t;
	if (c->end_t > k->st.last_end_ns)
		k->st.last_end_ns = c->end_t;
	on_free(s, k, c->sm, u, c->logical);
}

/* The same for a block whose unit was freed at its commit (retire_early). */
static void on_retire(struct cta_sim *s, struct cta__retiring *r)
{
	struct cta__kernel *k = r->k;
	cta__base_out_trace(s, r->end_t, CTA_TEV_END, k->id, r->logical, r->logical, r->sm,
	                    CTA_TRACE_NONE, 0, NULL);
	k->st.busy_ns += r->end_t - r->start_t;
	if (r->end_t > k->st.last_end_ns)
		k->st.last_end_ns = r->end_t;
	unsigned sm = r->sm;
	r->next = s->free_retiring;
	s->free_retiring = r;
	on_free(s, k, sm, NULL, r->logical);
}

/* A CTA of k on SM sm retired; u is its unit, NULL when it was freed
 * already (a unit of one CTA, retire_early). */
static void on_free(struct cta_sim *s, struct cta__kernel *k, unsigned sm, struct cta__unit *u,
                    uint64_t logical)
{
	if (s->gate_waiting && (s->sms[sm].gate_head || s->sms[sm].held_head)) {
		unsigned lsub[4] = {0, 0, 0, 0};
		cta__exec_part_of(s, sm, k, logical, lsub);
		gate_release(s, sm, k->threads, k->warps, 0, 0, 0, lsub);
	}
	/* Most blocks of a grid that fills the GPU hand their slot straight to
	 * the kernel's next block (see cta__sched_can_refill). */
	int refill = cta__sched_can_refill(s, k);
	if (!refill)
		cta__sched_free_cta(s, k, sm, logical);
	if (!u) {
		k->units_done++;
	} else if (++u->ctas_done == u->nctas) {
		k->units_done++;
		cta__exec_unit_free(s, u);
	}
	if (refill) {
		cta__sched_refill(s, k, sm);
		return;
	}
	if (k->next_unit == k->nunits && k->ctas_running == 0 && k->state != K_DONE) {
		cta__engine_kernel_done(s, k);
	}
	cta__sched_request(s);
}

/* ---- the period skip (period.h; docs/PERFORMANCE.md) --------------------
 * Once the state after a batch equals, shifted, the state after an
 * earlier one (cta__engine_period_cut), the engine would do again what it
 * did between the two, one period later, as long as each body ends where
 * its counterpart did, shifted. The bodies of the following periods then
 * run here, in the order the engine would run them, each block made with
 * its counterpart's SM, start, first instruction and duration index
 * shifted (what the engine would give it: they follow from the ends
 * before it), and each checked to end where predicted before the next one
 * is made. Then the state is shifted by the periods that ran as predicted.
 * A body off its prediction ran with what the engine would have given it,
 * so its end is right; the state goes back to the start of its period and
 * the blocks of that period that ran (pre) are handed to the engine as it
 * comes to them, as done, instead of running again. Under --sanitize the
 * skipped bodies are the instrumented ones: a report is a UB record in
 * the outbox, which sends its body back to the engine (skip_check), where
 * it is committed once; the sanitizer's own state (shadow marks, the
 * reports made) follows the bodies, which run once each, in the engine's
 * order, on the SM and at the times the engine would give them. */

/* Run j of the period being skipped (runs made at batch[nready + j]). */
static const struct cta__period_run *skip_run_of(const struct cta__period *p, size_t j)
{
	return &p->run0[j];
}

/* Whether skipped unit u, run j, ended as predicted with nothing in its
 * outbox but counts; checked once. */
static int skip_check(struct cta_sim *s, size_t j, const struct cta__unit *u)
{
	struct cta__period *p = s->per;
	const struct cta__cta *c = &u->ctas[0];
	const struct cta__outbox *o = &u->out;
	uint64_t end = skip_run_of(p, j)->end + p->dt;
	return c->end_t == end && c->exited >= c->nthreads &&
	       !(o->nrecs | o->nubs | o->nmarks | o->ubtotal | o->error);
}

static struct cta__unit *skip_make(struct cta_sim *s, size_t i)
{
	struct cta__period *p = s->per;
	size_t from = s->nready, j = i - from;
	if (p->bad != SIZE_MAX)
		return s->batch[i] = NULL;
	/* The block before ran (its lane moved on, or it settled): a block
	 * made after one off its prediction would run with the wrong SM or
	 * times. */
	if (j > 0 && s->batch[i - 1] && !skip_check(s, j - 1, s->batch[i - 1])) {
		p->bad = j - 1;
		s->skip_last = NULL;
		return s->batch[i] = NULL;
	}
	const struct cta__period_run *r = skip_run_of(p, j);
	s->skip_r = r;
	uint64_t dt = p->dt;
	struct cta__unit *u = cta__exec_unit_make(s, p->k, r->index + p->db, &r->sm,
	                                          r->start_t + dt, r->spin, r->add, 0);
	if (!u) {
		cta__base_errf(s, "out of memory for blocks");
		s->hung = 1;
		p->bad = j;
		s->skip_last = NULL;
		p->failed = 1;
		return s->batch[i] = NULL;
	}
	u->cursor.t0 = r->t0 + dt;
	u->ctas[0].end_t = r->end0 + dt;
	return s->batch[i] = u;
}

static void skip_commit(struct cta_sim *s, size_t i, struct cta__unit *u)
{
	struct cta__period *p = s->per;
	size_t j = i - s->nready;
	if (p->bad == SIZE_MAX && !skip_check(s, j, u)) {
		p->bad = j;
		s->skip_last = NULL;
	}
	if (p->bad == j) {
		/* Off its prediction: kept as it is for the engine (pre). */
		p->pre_cap = p->bad + 1;
		struct cta__period_run *v = realloc(p->pre, p->pre_cap * sizeof(*v));
		if (!v) {
			cta__base_errf(s, "out of memory for blocks");
			s->hung = 1;
			p->failed = 1;
			return;
		}
		p->pre = v;
		v[j] = (struct cta__period_run){.index = u->index, .unit = u};
		return;
	}
	if (u->nctas != 1 || u->clc_objs || u->live_lanes || u->lanes_abandoned || u->watchdog) {
		cta__base_errf(s, "period skip: block %" PRIu64 " of kernel %s left state behind",
		               u->index, u->k->label);
		s->hung = 1;
		p->failed = 1;
		return;
	}
	flush_outbox(s, u);
	cta__exec_unit_free(s, u);
	s->batch[i] = NULL;
}

int cta__engine_skip_next(struct cta_sim *s, struct cta__unit *u, size_t i)
{
	struct cta__period *p = s->per;
	size_t j = i - s->nready;
	if (p->bad != SIZE_MAX || j + 1 >= p->nr)
		return 0;
	const struct cta__period_run *r = skip_run_of(p, j);
	struct cta__cta *c = &u->ctas[0];
	const struct cta__outbox *o = &u->out;
	uint64_t dt = p->dt;
	if (c->end_t != r->end + dt || c->exited < c->nthreads ||
	    (o->nrecs | o->nubs | o->nmarks | o->ubtotal | o->error)) {
		p->bad = j;
		s->skip_last = NULL;
		return 0;
	}
	s->batch[i] = NULL;
	s->commit_next = i + 1;
	s->batch[i + 1] = u;
	s->skip_r = ++r;
	/* Its commit: the counts of its outbox (nothing else is in it). */
	if (__builtin_expect(o->comm, 0)) {
		flush_outbox(s, u);
	} else {
		s->barrier_crossings += o->crossings;
		s->lanes_started += o->lanes;
	}
	cta__exec_unit_retarget(s, u, r->index + p->db, r->sm, r->start_t + dt, r->spin, r->add);
	u->cursor.t0 = r->t0 + dt;
	c->end_t = r->end0 + dt;
	return 1;
}

/* A block the engine comes to that ran while periods were skipped. */
static struct cta__unit *pre_make(struct cta_sim *s, size_t i)
{
	struct cta__period *p = s->per;
	const struct cta__placed *pl = &s->placed[i];
	struct cta__period_run *e = &p->pre[p->pre_pos];
	if (pl->k != p->k || pl->index != e->index) {
		cta__base_errf(s,
		               "period skip: the engine came to block %" PRIu64
		               " where block %" PRIu64 " ran",
		               pl->index, e->index);
		s->hung = 1;
		return s->batch[i] = NULL;
	}
	p->pre_pos++;
	s->per_hook = p->pre_pos < p->npre;
	struct cta__unit *u = e->unit;
	if (u) {
		/* As make_placed_plain gives a block the gate let go. */
		struct cta__held *h = pl->h;
		u->gate = h && h->state == 3 && !s->sealed_run ? 3 : 0;
		if (h)
			cta__exec_held_free(s, h);
		return s->batch[i] = u;
	}
	u = make_placed_plain(s, i);
	if (u) {
		/* Its threads ran: none are left, its end is known. */
		u->cursor.left = 0;
		u->ctas[0].exited = u->ctas[0].nthreads;
		u->ctas[0].end_t = e->end;
	}
	return u;
}

static struct cta__unit *make_placed_per(struct cta_sim *s, size_t i)
{
	struct cta__period *p = s->per;
	if (s->skip_run)
		return skip_make(s, i);
	if (p->pre_pos < p->npre)
		return pre_make(s, i);
	struct cta__unit *u = make_placed_plain(s, i);
	if (u && !p->off && u->k == p->k)
		cta__engine_period_made(s, u);
	return u;
}

static void commit_per(struct cta_sim *s, size_t i, struct cta__unit *u)
{
	if (s->skip_run) {
		skip_commit(s, i, u);
		return;
	}
	if (!s->per->off && u->k == s->per->k)
		cta__engine_period_committed(s, u);
	if (!s->sealed_run)
		commit_unit_inline(s, u);
	else
		commit_sealed(s, i, u);
}

/* Tasks a worker of a chunk on the pool: ranges small enough that the
 * last ones even out the workers. */
#define SKIP_TASKS_PER_WORKER 2

/* A chunk goes to the pool when its bodies' estimated cost (s->seg_ns
 * each) is at least this much host time: waking the pool costs
 * microseconds. */
#define SKIP_PAR_NS 50000.0

/* A skipped period's runs [a, b) on this thread, in order, each block
 * made from its counterpart's run once the one before ended as predicted
 * (skip_make, cta__engine_skip_next). */
static void skip_chunk_serial(struct cta_sim *s, size_t a, size_t b, int quick)
{
	struct cta__period *p = s->per;
	size_t from = s->nready;
	s->skip_r = p->run0 + a;
	s->skip_last = quick ? p->run0 + b - 1 : NULL;
	s->skip_dt = p->dt;
	s->skip_db = p->db;
	s->commit_next = from + a;
	s->early_commit = cta__engine_early_commits;
	run_serial(s, from + a, from + b, 0);
	s->early_commit = 0;
	for (size_t i = s->commit_next; i < from + b; i++)
		if (s->batch[i])
			skip_commit(s, i, s->batch[i]);
}

/* The chunks of the period's n runs (docs/PERFORMANCE.md, "Threads"):
 * skip_chunk[a] is the end of the chunk that begins at run a. A body
 * changes the engine's events from its retirement on, no earlier than
 * its end so far (its CTA's end before the body, or its first
 * instruction: its threads begin there) plus block_retire_ns; a run whose block
 * was placed and began before that bound of every run of its chunk before
 * it depends on no body of the chunk: given the chunk's first placement
 * right, each of its blocks gets its counterpart's placement whatever the
 * others' bodies do. 0 when memory ran out (the skip then runs serially). */
static int skip_chunks(struct cta_sim *s, size_t n)
{
	size_t *c = realloc(s->skip_chunk, n * sizeof(*c));
	if (!c)
		return 0;
	s->skip_chunk = c;
	const struct cta__period_run *r = s->per->run0;
	uint64_t retire = s->dev.block_retire_ns;
	for (size_t a = 0; a < n;) {
		uint64_t bound = UINT64_MAX;
		size_t j = a;
		for (; j < n; j++) {
			uint64_t first = r[j].t0 > r[j].start_t ? r[j].t0 : r[j].start_t;
			if (j > a && first >= bound)
				break;
			uint64_t e = (r[j].end0 > first ? r[j].end0 : first) + retire;
			bound = e < bound ? e : bound;
		}
		c[a] = j;
		a = j;
	}
	return 1;
}

/* Whether chunk [a, b) of the period goes to the pool (s->skip_chunk set). */
static int skip_chunk_pays(const struct cta_sim *s, size_t a, size_t b)
{
	return s->skip_par_ok && b - a >= 2 && (double)(b - a) * s->seg_ns >= SKIP_PAR_NS;
}

/* The unit of run j of the period being skipped, made as skip_make makes
 * it; NULL, the run stopped as hung, when memory ran out. */
static struct cta__unit *skip_unit(struct cta_sim *s, size_t j)
{
	struct cta__period *p = s->per;
	const struct cta__period_run *r = skip_run_of(p, j);
	struct cta__unit *u = cta__exec_unit_make(s, p->k, r->index + p->db, &r->sm,
	                                          r->start_t + p->dt, r->spin, r->add, 0);
	if (!u) {
		cta__base_errf(s, "out of memory for blocks");
		s->hung = 1;
		p->failed = 1;
		return NULL;
	}
	u->cursor.t0 = r->t0 + p->dt;
	u->ctas[0].end_t = r->end0 + p->dt;
	return u;
}

static void skip_task_fn(void *ctx, size_t i, unsigned worker)
{
	struct cta_sim *s = ctx;
	cta__base_seg_worker = &s->workers[worker];
	cta__exec_skip_task_run(s, &s->skip_tasks[i]);
	cta__base_seg_worker = NULL;
}

/* A skipped period's chunk [a, b) on the pool: its runs in ranges, each
 * range's blocks one after the other on one unit (skip_move_par) made
 * here for its first run. A range stops at a block that did not end as
 * predicted or left more than counts in its outbox; its rest then runs
 * here, so that every block of the chunk runs once, each with its
 * counterpart's placement (skip_chunks: right whatever the chunk's bodies
 * do), whichever host threads there are. The units left are then checked
 * and committed in the period's order as skip_commit commits them; every
 * block of the chunk after the first off its prediction is handed back
 * to the engine too (pre), ended, as that one is. */
static void skip_chunk_par(struct cta_sim *s, size_t a, size_t b)
{
	struct cta__period *p = s->per;
	size_t from = s->nready, m = b - a;
	size_t nt = (size_t)s->nworkers * SKIP_TASKS_PER_WORKER;
	nt = nt < m ? nt : m;
	if (nt > s->skip_tasks_cap) {
		struct cta__skip_task *v = aligned_alloc(64, nt * sizeof(*v));
		if (!v) {
			cta__base_errf(s, "out of memory for blocks");
			s->hung = 1;
			p->failed = 1;
			return;
		}
		free(s->skip_tasks);
		s->skip_tasks = v;
		s->skip_tasks_cap = nt;
	}
	struct cta__skip_task *tv = s->skip_tasks;
	for (size_t t = 0; t < nt; t++) {
		size_t ta = a + t * m / nt, tb = a + (t + 1) * m / nt;
		tv[t] = (struct cta__skip_task){.a = ta, .b = tb, .at = ta, .u = skip_unit(s, ta)};
		if (!tv[t].u) {
			while (t-- > 0)
				cta__exec_unit_free(s, tv[t].u);
			return;
		}
	}
	s->skip_r = p->run0;
	s->skip_last = NULL;
	s->skip_dt = p->dt;
	s->skip_db = p->db;
	s->skip_par = 1;
	cta__exec_return_runners(s);
	s->in_pool = 1;
	cta__pool_run_chunked(s->pool, skip_task_fn, s, nt, 1);
	s->in_pool = 0;
	/* Each range's unit stays on its entry; the rest of a range that
	 * stopped runs here. */
	for (size_t t = 0; t < nt; t++) {
		struct cta__skip_task *q = &tv[t];
		for (;;) {
			struct cta__unit *u = q->u;
			u->out.crossings += q->crossings;
			u->out.lanes += q->lanes;
			u->out.comm |= q->comm;
			q->crossings = q->lanes = 0;
			q->comm = 0;
			s->batch[from + q->at] = u;
			if (q->at + 1 >= q->b || p->failed)
				break;
			q->at++;
			if (!(q->u = skip_unit(s, q->at)))
				break;
			cta__base_seg_worker = &s->workers[0];
			cta__exec_skip_task_run(s, q);
			cta__base_seg_worker = NULL;
		}
	}
	s->skip_par = 0;
	for (size_t j = a; j < b; j++) {
		size_t i = from + j;
		struct cta__unit *u = s->batch[i];
		if (p->failed) {
			if (u)
				cta__exec_unit_free(s, u);
			s->batch[i] = NULL;
			continue;
		}
		if (p->bad == SIZE_MAX) {
			if (u)
				skip_commit(s, i, u);
			continue;
		}
		if (p->pre_cap < b) {
			struct cta__period_run *v = realloc(p->pre, b * sizeof(*v));
			if (!v) {
				cta__base_errf(s, "out of memory for blocks");
				s->hung = 1;
				p->failed = 1;
				j--;
				continue;
			}
			p->pre = v;
			p->pre_cap = b;
		}
		const struct cta__period_run *r = skip_run_of(p, j);
		p->pre[j] =
		    u ? (struct cta__period_run){.index = u->index, .unit = u}
		      : (struct cta__period_run){.index = r->index + p->db, .end = r->end + p->dt};
		s->batch[i] = NULL;
	}
	if (p->bad != SIZE_MAX && !p->failed)
		p->pend = b;
}

/* The period was found at this cut: runs the bodies of the periods that
 * fit before the grid's end, then shifts the state past those that ran as
 * predicted. */
static void skip_periods(struct cta_sim *s)
{
	struct cta__period *p = s->per;
	struct cta__kernel *k = p->k;
	p->off = 1;
	uint64_t left = k->nunits - k->next_unit;
	/* Every period's placements leave blocks pending: the dispatcher's
	 * candidates change when the last block is placed. */
	uint64_t periods = left > p->P ? (left - 1) / p->P : 0;
	if (!periods)
		return;
	size_t from = s->nready, n = (size_t)p->nr;
	s->batch = cta__base_grow(s->batch, &s->batch_cap, from + n, sizeof(*s->batch));
	if (!s->batch) {
		cta__base_errf(s, "out of memory for blocks");
		s->hung = 1;
		return;
	}
	s->skip_run = 1;
	p->run0 = &p->runs[p->r0 - p->base];
	/* The common block moves on in skip_move itself (below its run's
	 * bound skip_last; NULL: never): one CTA of one row in a 1-D grid,
	 * and no sanitizer, whose start of a block goes the general way. */
	int quick = k->csize == 1 && k->l.grid[1] == 1 && k->l.grid[2] == 1 &&
	            k->cursor0.ctas == 1 && k->cursor0.left == k->cursor0.idim.x && !s->san;
	uint64_t kk;
	p->bad = SIZE_MAX;
	/* Each block is made from its counterpart's run (skip_make,
	 * cta__engine_skip_next), not from a placement record: the entries
	 * start empty, and a period that ran as predicted leaves them so
	 * (each is emptied as its block moves on or is committed). */
	memset(&s->batch[from], 0, n * sizeof(*s->batch));
	/* With several host threads, chunks of enough work run on the pool
	 * (skip_chunk_par), the rest here. */
	int par = s->pool && !s->san && skip_chunks(s, n);
	s->skip_par_ok = par;
	p->pend = SIZE_MAX;
	for (kk = 1; kk <= periods; kk++) {
		p->kk = kk;
		p->dt = kk * p->D;
		p->db = kk * p->P;
		for (size_t a = 0; a < n && p->bad == SIZE_MAX && !p->failed;) {
			size_t b = par ? s->skip_chunk[a] : n;
			if (skip_chunk_pays(s, a, b)) {
				skip_chunk_par(s, a, b);
			} else {
				/* The chunks that stay here, as one run. */
				while (b < n && !skip_chunk_pays(s, b, s->skip_chunk[b]))
					b = s->skip_chunk[b];
				skip_chunk_serial(s, a, b, quick);
			}
			a = b;
		}
		if (p->bad != SIZE_MAX || p->failed)
			break;
	}
	s->skip_run = 0;
	s->skip_r = s->skip_last = NULL;
	if (p->failed)
		return;
	/* Periods 1 .. kk-1 ran as predicted. */
	cta__engine_period_shift(s, kk - 1);
	p->skipped = kk > 1;
	/* Period kk's blocks up to the one off its prediction ran, and the
	 * rest of its chunk where that ran on the pool. */
	size_t pend = p->pend != SIZE_MAX ? p->pend : p->bad + 1;
	p->blocks = (kk - 1) * p->nr + (p->bad != SIZE_MAX ? pend : 0);
	if (p->bad != SIZE_MAX) {
		/* Period kk's blocks up to the one off its prediction ran. */
		struct cta__period_run *v = p->pre;
		for (size_t j = 0; j < p->bad; j++) {
			const struct cta__period_run *r = skip_run_of(p, j);
			v[j] = (struct cta__period_run){.index = r->index + kk * p->P,
			                                .end = r->end + kk * p->D};
		}
		p->npre = pend;
		p->pre_pos = 0;
		p->skipped = 1;
	}
	s->per_hook = p->pre_pos < p->npre;
}

/* After a batch ran: a cut, and the skip when the period is found. Bodies
 * the pool deals out one at a time (CHUNK_NS or more each: compute_heavy's)
 * keep running there, which evens out the workers better than the skip's
 * ranges of a chunk; cheaper ones skip, their chunks on the pool
 * (skip_chunk_par) or here. */
static void period_step(struct cta_sim *s)
{
	if (!cta__engine_period_cut(s)) {
		s->per_hook = !s->per->off && s->per->logging;
		return;
	}
	if (pool_pays(s) && s->seg_ns >= CHUNK_NS)
		return;
	skip_periods(s);
}

static void finish_stats(struct cta_sim *s)
{
	for (unsigned i = 0; i < s->nkernels; i++) {
		struct cta__kernel *k = s->kernels[i];
		uint64_t *v = malloc(s->nsms * sizeof(*v));
		unsigned used = 0;
		if (!v)
			continue;
		for (unsigned j = 0; j < s->nsms; j++) {
			v[j] = k->per_sm[j];
			used += k->per_sm[j] > 0;
		}
		/* Insertion sort is fine for a few hundred SMs. */
		for (unsigned a = 1; a < s->nsms; a++)
			for (unsigned b = a; b > 0 && v[b - 1] > v[b]; b--) {
				uint64_t tmp = v[b];
				v[b] = v[b - 1];
				v[b - 1] = tmp;
			}
		k->st.sms_used = used;
		k->st.per_sm_min = v[0];
		k->st.per_sm_max = v[s->nsms - 1];
		k->st.per_sm_median = v[s->nsms / 2];
		free(v);
		if (k->uses_clc && !s->o.timing_only) {
			k->st.coverage_checked = 1;
			k->st.lost = cta__cover_lost(&k->cover, k->nblocks, NULL, 0);
			k->st.duplicated = k->cover.dup_total;
			k->st.coverage_ok = !k->st.lost && !k->st.duplicated;
		}
	}
}

/* The events in the queue (every ring and the heap). */
static size_t queued(const struct cta_sim *s)
{
	return cta__evq_size(&s->q);
}

/* Adversarial scheduling (cta_spin_sched): while the favoured unit spins,
 * other spinning units are starved: their polls are held back until it
 * stops (release_starved). Which unit is favoured is drawn from the seed;
 * a unit is never starved when nothing else could run. Returns 1 when u's
 * poll is held back. */
static int adversarial_hold(struct cta_sim *s, struct cta__unit *u)
{
	/* CUDA guarantees a cooperative launch's blocks progress together. */
	if (s->favored == u || u->k->l.cooperative)
		return 0;
	if (!s->favored && (cta__base_rand(s) & 1 || (queued(s) == 0 && !s->nready))) {
		s->favored = u;
		return 0;
	}
	u->starved = 1;
	u->next_starved = s->starved;
	s->starved = u;
	return 1;
}

/* Nothing but polls of spinning threads happened for longer than the
 * watchdog, and nothing but such polls is due: no thread can change what
 * the spinning ones read. The report is forward_progress when blocks of a
 * launched kernel are still waiting to become resident (they may be what
 * the spinning ones wait for), else watchdog. Returns 1 when it stopped the
 * run. */
static int poll_watchdog(struct cta_sim *s, struct cta__unit *u)
{
	uint64_t others = s->events - ++s->polls_done;
	if (others != s->others_mark) {
		/* Something other than a poll happened since the last poll. */
		s->others_mark = others;
		s->mark_t = s->now;
	}
	if (queued(s) != s->npolls || s->nready || s->dispatch_pending)
		return 0;
	uint64_t since = s->mark_t > s->progress_t ? s->mark_t : s->progress_t;
	if (s->now < since || s->now - since <= s->watchdog_ns)
		return 0;
	/* The spinning thread that spun longest (the first in the spinners'
	 * order of those), named by its lane. */
	struct cta__exec_spinner sp, y;
	unsigned at = 0;
	if (!cta__exec_unit_spinner(u, 0, &sp))
		return 0;
	for (unsigned i = 1; cta__exec_unit_spinner(u, i, &y); i++)
		if (y.since < sp.since) {
			sp = y;
			at = i;
		}
	cta__exec_unit_spinner(u, at, &sp);
	struct cta__lane_x *x = sp.x;
	/* Spinning units and waiting kernels, for the message. */
	uint64_t nspinning = 0;
	for (size_t i = 0; i < s->nunits_made; i++)
		nspinning += s->units[i]->live && (s->units[i]->nspin || s->units[i]->starved);
	const struct cta__kernel *pk = NULL;
	for (unsigned i = 0; i < s->nkernels && !pk; i++)
		if (s->kernels[i]->state == K_ACTIVE &&
		    s->kernels[i]->next_unit < s->kernels[i]->nunits)
			pk = s->kernels[i];
	const struct cta__cta *c = x->cta;
	char msg[512];
	int n = snprintf(
	    msg, sizeof(msg),
	    "thread %u of block (%u,%u,%u) has spun on global memory since t=%" PRIu64
	    " ns (%" PRIu64 " ns of virtual time with nothing but spinning: the "
	    "watchdog is %" PRIu64 " ns, --watchdog); %" PRIu64 " resident block%s spin%s",
	    sp.rank, c->bid.x, c->bid.y, c->bid.z, sp.since, s->now - since, s->watchdog_ns,
	    nspinning, nspinning == 1 ? "" : "s", nspinning == 1 ? "s" : "");
	if (n < 0 || (size_t)n >= sizeof(msg))
		n = (int)strlen(msg);
	int rule = UB_WATCHDOG;
	if (pk) {
		/* Why pk's next block cannot become resident. */
		uint64_t own = 0, other = 0;
		const struct cta__kernel *hk = NULL;
		for (unsigned i = 0; i < s->nkernels; i++) {
			const struct cta__kernel *k = s->kernels[i];
			if (k == pk)
				own = k->ctas_running;
			else if (k->ctas_running) {
				other += k->ctas_running;
				if (!hk || k->priority < hk->priority)
					hk = k;
			}
		}
		rule = UB_FORWARD_PROGRESS;
		if (!other)
			snprintf(msg + n, sizeof(msg) - (size_t)n,
			         "; blocks %" PRIu64 "-%" PRIu64
			         " of kernel %s wait to become resident "
			         "but cannot: %u SMs x %u blocks per SM (limited by %s) = %" PRIu64
			         " co-resident blocks, all spinning, of a grid of %" PRIu64
			         " (a kernel that waits for other blocks needs its whole grid "
			         "co-resident: launch at most that many, or cooperatively)",
			         pk->next_unit * pk->csize, pk->nblocks - 1, pk->label, s->nsms,
			         pk->occupancy, cta_limiter_name(pk->limiter),
			         (uint64_t)pk->occupancy * s->nsms, pk->nblocks);
		else
			snprintf(msg + n, sizeof(msg) - (size_t)n,
			         "; blocks %" PRIu64 "-%" PRIu64
			         " of kernel %s wait to become resident "
			         "but cannot: the SMs hold %" PRIu64 " of its blocks and %" PRIu64
			         " of other kernels (%s, priority %d), which are never preempted",
			         pk->next_unit * pk->csize, pk->nblocks - 1, pk->label, own, other,
			         hk ? hk->label : "?", hk ? hk->priority : 0);
	} else if (s->starved) {
		snprintf(msg + n, sizeof(msg) - (size_t)n,
		         "; adversarial scheduling starved the other spinning blocks: the kernel "
		         "relies on fair scheduling among resident blocks");
	}
	cta__exec_watchdog_stop(s, u, x, rule, sp.file, sp.line, msg);
	commit_unit(s, u);
	/* Also name each other spinning block once, where it spins. */
	for (size_t i = 0; rule == UB_FORWARD_PROGRESS && i < s->nunits_made; i++) {
		struct cta__unit *v = s->units[i];
		if (v == u || !v->live || !cta__exec_unit_spinner(v, 0, &y))
			continue;
		cta__ub(s, UB_FORWARD_PROGRESS, v, y.x, y.file, y.line,
		        "block (%u,%u,%u) of kernel %s spins here too, waiting like block "
		        "(%u,%u,%u)",
		        y.x->cta->bid.x, y.x->cta->bid.y, y.x->cta->bid.z, v->k->label, c->bid.x,
		        c->bid.y, c->bid.z);
		commit_unit(s, v);
	}
	return 1;
}

/* One step of the main loop short of running bodies: returns
 * CTA__STEP_READY when dispatched units must run their bodies first,
 * CTA__STEP_RESUME with *resume set when a cancel was resolved and its unit
 * must run on, CTA__STEP_STOP when the run is over, else CTA__STEP_NEXT. */
static inline __attribute__((always_inline)) int engine_step(struct cta_sim *s,
                                                             struct cta__unit **resume)
{
	/* Sealed batches run before the run ends: they would have run before
	 * whatever stopped it. */
	if (s->aborted || s->hung || s->io_error || s->stopped)
		return s->nsealed ? CTA__STEP_READY : CTA__STEP_STOP;
	/* The next thing to happen: the queue's head, or the pending
	 * dispatch when it comes first in (time, sequence) order. */
	const struct cta__event *head;
	struct cta__ring *head_ring = cta__evq_first(&s->q, &head);
	uint64_t next_t = head ? head->t : UINT64_MAX;
	int disp = s->dispatch_pending && (!head || s->fe_free < next_t ||
	                                   (s->fe_free == next_t && s->dispatch_seq < head->seq));
	if (disp)
		next_t = s->fe_free;
	if (s->nsealed && next_t >= s->seal_h)
		return CTA__STEP_READY;
	if ((s->nready > s->nsealed || s->open_apart) && next_t >= s->ready_min) {
		if (!can_seal(s))
			return CTA__STEP_READY;
		seal_ready(s);
		if (next_t >= s->seal_h)
			return CTA__STEP_READY;
	}
	if (disp) {
		s->now = s->fe_free;
		s->dispatch_pending = 0;
		cta__sched_dispatch(s);
		return CTA__STEP_NEXT;
	}
	struct cta__event e;
	if (!head)
		return CTA__STEP_STOP;
	cta__evq_pop_first(&s->q, head_ring, head, &e); /* nothing was pushed since */
	/* Past the place of a dispatch kept back for lack of room: it
	 * would have come and gone, placing nothing. */
	if (s->resv_valid && (e.t > s->resv_t || (e.t == s->resv_t && e.seq > s->resv_seq)))
		s->resv_valid = 0;
	s->now = e.t;
	if (++s->events > s->o.max_events && s->o.max_events) {
		s->hung = 1;
		cta__base_errf(s, "stopped after %" PRIu64 " events at t=%" PRIu64 " ns",
		               s->o.max_events, s->now);
		return CTA__STEP_STOP;
	}
	switch (e.type) {
	case EV_RELEASE: {
		struct cta__kernel *k = e.p;
		if (!e.a) {
			/* The host enqueues the launch now, as a hardware trace's
			 * launch record says; it reaches the dispatcher after the
			 * launch latency (and its stream's predecessors). */
			cta__base_out_trace(s, s->now, CTA_TEV_LAUNCH, k->id, CTA_TRACE_NONE,
			                    CTA_TRACE_NONE, CTA_TRACE_NONE, (uint64_t)k->stream,
			                    k->priority, NULL);
			stream_append(s, k);
		} else {
			k->state = K_ACTIVE;
			cta__sched_release(s, k);
			k->st.launch_ns = s->now;
			s->room_gen++;
			s->cand_valid = 0;
			if (k->nunits == 0)
				cta__engine_kernel_done(s, k);
			cta__sched_request(s);
		}
		break;
	}
	case EV_DISPATCH:
		s->dispatch_pending = 0;
		cta__sched_dispatch(s);
		break;
	case EV_END:
		on_end(s, e.p, (unsigned)e.a);
		break;
	case EV_RETIRE:
		on_retire(s, e.p);
		break;
	case EV_GATE_WAIT: {
		/* A held block waited the register file's gate's longest. */
		unsigned sm = (unsigned)e.a;
		if (s->gate_waiting && (s->sms[sm].gate_head || s->sms[sm].held_head))
			gate_release(s, sm, 0, 0, 0, 0, 1, NULL);
		break;
	}
	case EV_CANCEL: {
		struct cta__request *r = e.p;
		/* Blocks that steal work end only when none is left: a block the
		 * gate held would wait for the end of the grid, where the GPU
		 * runs every resident block of a stealing kernel at once
		 * (docs/FIDELITY.md). The gate holds none of this kernel's
		 * blocks from now on, and lets the held ones go. */
		/* On an SM the kernel fills, the held blocks get no issue slots
		 * until the blocks ahead reach their first wait, the work after
		 * their first request (clc_late_ppm of it, the issuer's of this
		 * first request standing for theirs: the same loop). */
		uint64_t late = 0;
		if (s->gate_waiting && !r->k->steals && s->dev.clc_late_ppm)
			late = s->now + cta__clc_issuer_work(s, r) * s->dev.clc_late_ppm / 1000000;
		r->k->steals = 1;
		for (unsigned sm = 0; s->gate_waiting && sm < s->nsms; sm++)
			if (s->sms[sm].gate_head || s->sms[sm].held_head)
				gate_release(s, sm, 0, 0, 1, late, 0, NULL);
		cta__clc_resolve(s, r);
		*resume = r->unit;
		return CTA__STEP_RESUME;
	}
	case EV_POLL: {
		struct cta__unit *u = e.p;
		/* Blocks wait for one another: the gate holds no more (a held
		 * block may be the one they wait for). */
		for (unsigned sm = 0; s->gate_waiting && sm < s->nsms; sm++)
			if (s->sms[sm].gate_head || s->sms[sm].held_head)
				gate_release(s, sm, 0, 0, 1, 0, 0, NULL);
		s->npolls--;
		u->poll_queued = 0;
		if (poll_watchdog(s, u))
			return CTA__STEP_STOP;
		if (s->o.spin_sched == CTA_SPIN_ADVERSARIAL && adversarial_hold(s, u))
			return CTA__STEP_NEXT;
		cta__exec_unit_poll_wake(u, s->now);
		*resume = u;
		return CTA__STEP_RESUME;
	}
	}
	return CTA__STEP_NEXT;
}

/* Steps the engine until bodies must run (CTA__STEP_READY), a resolved
 * cancel's unit must run on (CTA__STEP_RESUME, *resume set) or the run is
 * over (CTA__STEP_STOP): the events between, most of them block ends, in
 * one loop. The host thread's loop calls it, and so does a lane that waits
 * for the engine in a resumed unit (lane_engine in sim/exec/exec.c), which
 * goes on in its own stack to whatever runs next. */
int cta__engine_commit_step(struct cta_sim *s, struct cta__unit *u, struct cta__unit **resume)
{
	if (u)
		commit_unit_inline(s, u);
	int st;
	s->seal_known = 0; /* (bodies may have run since the last call) */
	do
		st = engine_step(s, resume);
	while (st == CTA__STEP_NEXT);
	return st;
}

int cta__engine_step(struct cta_sim *s, struct cta__unit **resume)
{
	return cta__engine_commit_step(s, NULL, resume);
}

/* Blocks retired / launched, for opts.progress: a cluster unit counts
 * its CTAs. Called every CTA_SIM_PROGRESS_EVENTS events, so the loop over
 * kernels costs nothing measurable. */
static void report_progress(struct cta_sim *s)
{
	uint64_t done = 0, total = 0;
	for (unsigned i = 0; i < s->nkernels; i++) {
		const struct cta__kernel *k = s->kernels[i];
		uint64_t per = k->nunits ? k->nblocks / k->nunits : 1;
		done += k->units_done * per;
		total += k->nblocks;
	}
	s->o.progress(s->o.progress_ctx, done, total);
}

int cta_sim_run(cta_sim *s)
{
	if (s->ran) {
		cta__base_errf(s, "the simulator already ran");
		return CTA_ESTATE;
	}
	s->ran = 1;
	int rc = open_trace(s);
	if (rc < 0)
		return rc;
	cta__engine_running_sim = s;
	/* (Under --sanitize a unit marks its shared memory as it is made,
	 * before any of its threads runs, wherever it is made; the
	 * sanitizer's state names units by their index and start, so a
	 * unit made again on freed memory is a new block to it.) */
	s->lazy_units = 1;
	/* The host issues the launches one after the other, in order of
	 * release (then of launch): one on another stream than the launch
	 * before it goes launch_gap_ns after that one, or at its release if
	 * later (docs/FIDELITY.md, *Latencies*). */
	unsigned *iss = malloc((size_t)s->nkernels * sizeof *iss + 1);
	uint64_t *at = malloc((size_t)s->nkernels * sizeof *at + 1);
	if (!iss || !at) {
		free(iss);
		free(at);
		cta__base_errf(s, "out of memory");
		return CTA_ENOMEM;
	}
	for (unsigned i = 0; i < s->nkernels; i++) {
		unsigned x = i;
		while (x && s->kernels[iss[x - 1]]->l.release_ns > s->kernels[i]->l.release_ns) {
			iss[x] = iss[x - 1];
			x--;
		}
		iss[x] = i;
	}
	for (unsigned j = 0; j < s->nkernels; j++) {
		const struct cta__kernel *k = s->kernels[iss[j]];
		uint64_t t = k->l.release_ns;
		if (j) {
			const struct cta__kernel *p = s->kernels[iss[j - 1]];
			uint64_t after =
			    at[iss[j - 1]] + (p->stream != k->stream ? s->dev.launch_gap_ns : 0);
			if (after > t)
				t = after;
		}
		at[iss[j]] = t;
	}
	for (unsigned i = 0; i < s->nkernels; i++) {
		cta__exec_unit_template(s, s->kernels[i]);
		cta__engine_push(s, at[i], EV_RELEASE, s->kernels[i], 0);
		s->seal_clc |= !s->kernels[i]->never_waits;
	}
	free(iss);
	free(at);
	s->seal_static =
	    cta__engine_seal && !s->tw && s->o.ub_mode != CTA_UB_ABORT && cta__engine_early_commits;
	for (unsigned i = 0; i < s->nkernels && s->dev.spin_regs_hold_warps && !s->cohorts; i++) {
		if (!s->kernels[i]->part_warps)
			continue;
		s->cohorts = calloc((size_t)s->nsms * CTA__COHORT_KEEP, sizeof(*s->cohorts));
		s->cohort_next = calloc(s->nsms, sizeof(*s->cohort_next));
		if (!s->cohorts || !s->cohort_next) {
			cta__base_errf(s, "out of memory");
			return CTA_ENOMEM;
		}
	}
	if (cta__engine_period_new(s) < 0) {
		cta__base_errf(s, "out of memory");
		return CTA_ENOMEM;
	}
	/* The bodies are logged from the first cut with a form on
	 * (period_step). */
	s->per_hook = 0;
	uint64_t progress_at = CTA_SIM_PROGRESS_EVENTS;
	for (;;) {
		struct cta__unit *u;
		int st = cta__engine_step(s, &u);
		if (st == CTA__STEP_STOP)
			break;
		if (s->o.progress && s->events >= progress_at) {
			progress_at = s->events + CTA_SIM_PROGRESS_EVENTS;
			report_progress(s);
		}
		if (st == CTA__STEP_READY) {
			run_ready(s);
			if (s->per && !s->per->off)
				period_step(s);
		} else if (st == CTA__STEP_RESUME)
			run_unit(s, u);
	}
	if (s->o.progress)
		report_progress(s);
	int result = 0;
	if (s->io_error)
		result = CTA_EIO;
	else if (!s->aborted && !s->hung && !s->stopped) {
		for (unsigned i = 0; i < s->nkernels; i++)
			if (s->kernels[i]->state != K_DONE) {
				s->hung = 1;
				cta__base_errf(
				    s,
				    "kernel %s did not finish: %" PRIu64 " of %" PRIu64
				    " units retired (threads wait on something that never happens)",
				    s->kernels[i]->label, s->kernels[i]->units_done,
				    s->kernels[i]->nunits);
				break;
			}
	}
	cta__engine_running_sim = NULL;
	finish_stats(s);
	if (s->hung && !result)
		result = CTA_EDEADLOCK;
	if (!result) {
		size_t hard = 0;
		for (size_t i = 0; i < s->ubs.nruns; i++)
			hard += s->ubs.runs[i].rule != UB_BUILTIN_BLOCKIDX_IN_BODY;
		if (hard || s->aborted)
			result = CTA_EUB;
	}
	if (!result)
		for (unsigned i = 0; i < s->nkernels; i++)
			if (s->kernels[i]->st.coverage_checked && !s->kernels[i]->st.coverage_ok) {
				cta__base_errf(s, "kernel %s: exactly-once coverage violated",
				               s->kernels[i]->label);
				result = CTA_ECOVERAGE;
			}
	if (s->tw) {
		int crc = cta_trace_writer_close(s->tw, !s->io_error && !s->hung && !s->aborted &&
		                                            !s->stopped);
		s->tw = NULL;
		if (crc < 0 && result >= 0) {
			/* "PATH: write failed: No space left on device". */
			cta__base_errf(s, "%s", cta_trace_writer_errmsg(NULL));
			result = CTA_EIO;
		}
	}
	return result;
}

unsigned cta_sim_kernel_count(const cta_sim *s)
{
	return s->nkernels;
}

const struct cta_kernel_stats *cta_sim_kernel_stats(const cta_sim *s, unsigned kernel)
{
	return kernel < s->nkernels ? &s->kernels[kernel]->st : NULL;
}

uint64_t cta_sim_makespan_ns(const cta_sim *s)
{
	uint64_t m = 0;
	for (unsigned i = 0; i < s->nkernels; i++)
		if (s->kernels[i]->st.last_end_ns > m)
			m = s->kernels[i]->st.last_end_ns;
	return m;
}

size_t cta_sim_ub_count(const cta_sim *s)
{
	return s->nubs;
}

uint64_t cta_sim_ub_total(const cta_sim *s, const char *rule)
{
	const char *const *names = cta_ub_rule_names(), *const *snames = cta_sanitize_rule_names();
	uint64_t n = 0;
	for (unsigned r = 0; r < UB__ALL; r++) {
		const char *name = r < UB__COUNT ? names[r] : snames[r - UB__COUNT];
		if (!rule || !strcmp(rule, name))
			n += s->ub_counts[r];
	}
	return n;
}

const struct cta_ub_report *cta_sim_ub_report(const cta_sim *s, size_t i)
{
	/* Spelled out on demand (the store keeps runs, each cause once). */
	return cta__ub_store_at((struct cta_sim *)s, i);
}

size_t cta_sim_coverage_list(const cta_sim *s, unsigned kernel, int which, uint64_t *out,
                             size_t max)
{
	if (kernel >= s->nkernels)
		return 0;
	const struct cta__kernel *k = s->kernels[kernel];
	if (which == 0)
		return (size_t)cta__cover_lost(&k->cover, k->nblocks, out, max);
	for (size_t i = 0; i < max && i < k->cover.ndups; i++)
		out[i] = k->cover.dups[i];
	return (size_t)k->cover.dup_total;
}

uint64_t cta_sim_barrier_crossings(const cta_sim *s)
{
	return s->barrier_crossings;
}

int cta_sim_deterministic(const cta_sim *s)
{
	return s->deterministic;
}

uint64_t cta_sim_blocks_skipped(const cta_sim *s)
{
	return s->per ? s->per->blocks : 0;
}

uint64_t cta_sim_event_count(const cta_sim *s)
{
	return s->events;
}

unsigned cta_sim_sm_count(const cta_sim *s)
{
	return s->nsms;
}
