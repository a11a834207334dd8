/* What the simulator can say when a kernel body crashes the process (an
 * out-of-bounds write, say): which kernel, block and thread was running,
 * and a way to keep the trace written so far, marked incomplete. Both are
 * meant for a fatal-signal handler, which the command line installs: the
 * library itself never installs handlers. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "base/base.h"
#include "ctasim/io.h"
#include "engine/engine.h"

void cta__trace_writer_emergency_close(cta_trace_writer *w, const char *why);

/* The simulator inside cta_sim_run, if any (one at a time per process is
 * all the command line runs). */
struct cta_sim *volatile cta__engine_running_sim;

static const char *signame(int sig);

const char *cta_sim_signal_name(int sig)
{
	return signame(sig);
}

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
	case SIGTRAP:
		return "SIGTRAP (trap)";
	case SIGSYS:
		return "SIGSYS (bad system call)";
	case SIGTERM:
		return "SIGTERM";
	case SIGINT:
		return "SIGINT";
	case SIGHUP:
		return "SIGHUP";
	case SIGUSR1:
		return "SIGUSR1";
	case SIGUSR2:
		return "SIGUSR2";
	case SIGALRM:
		return "SIGALRM";
	default:
		return "a fatal signal";
	}
}

int cta_sim_crash_in_body(void)
{
	struct cta__lane *l = cta__cur;
	if (!cta__engine_running_sim)
		return 0;
	return l && l->unit ? 1 : 2;
}

int cta_sim_crash_describe_what(char *buf, size_t len, const char *what)
{
	struct cta_sim *s = cta__engine_running_sim;
	struct cta__lane *l = cta__cur;
	int n;
	if (s && (!l || !l->unit)) {
		/* A signal sent to the whole process (kill(getpid(), ...)) may
		 * land on a host thread that runs no body. */
		n = snprintf(buf, len,
		             "ctasim: a kernel body %s (seen on a host thread running no body: "
		             "the block and thread are not known; --threads 1 names them)\n",
		             what);
	} else if (!s || !l || !l->unit) {
		n = snprintf(buf, len, "ctasim: %s outside any kernel body\n", what);
	} else {
		struct cta__unit *u = l->unit;
		unsigned rank = l->cta_rank < u->nctas ? l->cta_rank : 0;
		struct cta__cta *c = &u->ctas[rank];
		n = snprintf(buf, len,
		             "ctasim: kernel %s %s, in block %llu (physical "
		             "block %llu, blockIdx %u,%u,%u)",
		             u->k->label, what, (unsigned long long)c->steal_current,
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
			/* The block's start, not the thread's clock: the body may
			 * keep its clock in a register past the faulting access,
			 * and the lane's then holds what it last ran, which depends
			 * on the host thread (--threads). */
			unsigned thread = l->tid.x + l->bdim.x * (l->tid.y + l->bdim.y * l->tid.z);
			uint64_t t0 = l->cursor ? l->cursor->t0 : u->start_t;
			n += snprintf(
			    buf + n, len - (size_t)n,
			    " thread %u (threadIdx %u,%u,%u) on SM %u; the block started at "
			    "t=%llu ns\n",
			    thread, l->tid.x, l->tid.y, l->tid.z, c->sm, (unsigned long long)t0);
		}
	}
	if (s && s->tw && n > 0 && (size_t)n < len) {
		char path[300];
		n += snprintf(buf + n, len - (size_t)n,
		              "ctasim: the trace so far is kept, marked incomplete: %s\n",
		              cta_escape(path, sizeof(path), s->o.trace_path, 0));
	}
	return n < 0 ? 0 : (n >= (int)len ? (int)len - 1 : n);
}

int cta_sim_crash_describe(char *buf, size_t len, int sig, const void *addr)
{
	char what[160];
	snprintf(what, sizeof(what), "crashed: %s at address %p", signame(sig), addr);
	return cta_sim_crash_describe_what(buf, len, what);
}

int cta_sim_crash_thread_known(void)
{
	struct cta__lane *l = cta__cur;
	return !(cta__engine_running_sim && l && l->unit && l->vec);
}

void cta_sim_set_exact_threads(int on)
{
	cta__base_exact_threads = on != 0;
}

int cta_sim_crash_finish_trace_as(const char *why)
{
	struct cta_sim *s = cta__engine_running_sim;
	if (s && s->tw) {
		cta__trace_writer_emergency_close(s->tw, why);
		s->tw = NULL;
		return 1;
	}
	return 0;
}

void cta_sim_crash_finish_trace(void)
{
	cta_sim_crash_finish_trace_as("crashed");
}
