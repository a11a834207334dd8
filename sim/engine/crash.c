/* What the simulator can say when a kernel body crashes the process (an
 * out-of-bounds write, say): which kernel, block and thread was running,
 * and a way to keep the trace written so far, marked incomplete. Both are
 * meant for a fatal-signal handler, which the command line installs: the
 * library itself never installs handlers. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

void cta__trace_writer_emergency_close(cta_trace_writer *w, const char *why);

/* The simulator inside cta_sim_run, if any (one at a time per process is
 * all the command line runs). */
struct cta_sim *volatile cta__running_sim;

static const char *signame(int sig)
{
	switch (sig) {
	case SIGSEGV:
		return "SIGSEGV (invalid memory access)";
	case SIGBUS:
		return "SIGBUS (misaligned or unmapped memory)";
	case SIGFPE:
		return "SIGFPE (arithmetic error, e.g. integer division by zero)";
	case SIGILL:
		return "SIGILL (illegal instruction)";
	case SIGABRT:
		return "SIGABRT (abort)";
	default:
		return "a fatal signal";
	}
}

int cta_sim_crash_describe(char *buf, size_t len, int sig, const void *addr)
{
	struct cta_sim *s = cta__running_sim;
	struct cta__lane *l = cta__cur;
	int n;
	if (!s || !l || !l->unit) {
		n = snprintf(buf, len, "ctasim: crashed with %s outside any kernel body\n",
		             signame(sig));
	} else {
		struct cta__unit *u = l->unit;
		unsigned rank = l->cta_rank < u->nctas ? l->cta_rank : 0;
		struct cta__cta *c = &u->ctas[rank];
		n = snprintf(buf, len,
		             "ctasim: kernel %s crashed: %s at address %p, in block %llu (physical "
		             "block %llu, blockIdx %u,%u,%u)",
		             u->k->label, signame(sig), addr, (unsigned long long)c->steal_current,
		             (unsigned long long)c->logical, c->bid.x, c->bid.y, c->bid.z);
		if (n > 0 && (size_t)n < len && l->vec) {
			/* The lane's tid.x may lag: name the run (x from run_x0
			 * to row_end - 1 in one row of one CTA). */
			n +=
			    snprintf(buf + n, len - (size_t)n,
			             ", one of threads threadIdx %u..%u,%u,%u (run as vector code; "
			             "exact threads name the thread) on SM %u\n",
			             l->run_x0, l->row_end - 1, l->tid.y, l->tid.z, c->sm);
		} else if (n > 0 && (size_t)n < len) {
			unsigned thread = l->tid.x + l->bdim.x * (l->tid.y + l->bdim.y * l->tid.z);
			n += snprintf(buf + n, len - (size_t)n,
			              " thread %u (threadIdx %u,%u,%u) on SM %u at t=%llu ns\n",
			              thread, l->tid.x, l->tid.y, l->tid.z, c->sm,
			              (unsigned long long)l->vtime);
		}
	}
	if (s && s->tw && n > 0 && (size_t)n < len)
		n += snprintf(buf + n, len - (size_t)n,
		              "ctasim: the trace so far is kept, marked incomplete: %s\n",
		              s->o.trace_path);
	return n < 0 ? 0 : (n >= (int)len ? (int)len - 1 : n);
}

int cta_sim_crash_thread_known(void)
{
	struct cta__lane *l = cta__cur;
	return !(cta__running_sim && l && l->unit && l->vec);
}

int cta__exact_threads;

void cta_sim_set_exact_threads(int on)
{
	cta__exact_threads = on != 0;
}

void cta_sim_crash_finish_trace(void)
{
	struct cta_sim *s = cta__running_sim;
	if (s && s->tw) {
		cta__trace_writer_emergency_close(s->tw, "crashed");
		s->tw = NULL;
	}
}
