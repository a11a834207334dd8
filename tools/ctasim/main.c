/* The ctasim command line: dispatches `ctasim VERB ...` to cmd_VERB.c.
 * Every subcommand is built over the public API only. */
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "cli_util.h"

#include "cmd.h"
#include "ctasim/export.h"
#include "ctasim/io.h"
#include "ctasim/sim.h"

struct command {
	const char *verb;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
#define CTA_CMD(verb, summary) {#verb, cta_cmd_##verb, summary},
#include "commands.def"
#undef CTA_CMD
};

/* A verb's C name spells '-' as '_' (import_cse is `ctasim import-cse`). */
static int verb_is(const char *verb, const char *arg)
{
	for (; *verb && *arg; verb++, arg++)
		if (*verb != *arg && !(*verb == '_' && *arg == '-'))
			return 0;
	return *verb == *arg;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: ctasim [--help] [--version] COMMAND [ARGS...]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		char v[32];
		snprintf(v, sizeof(v), "%s", commands[i].verb);
		for (char *c = v; *c; c++)
			*c = *c == '_' ? '-' : *c;
		fprintf(f, "  %-10s %s\n", v, commands[i].summary);
	}
	fprintf(f,
	        "\n'ctasim COMMAND --help' describes a command.\n"
	        "exit codes: 0 success, 1 wrong result or rule violation, 2 usage or bad input\n");
}

/* A kernel body that faults (an out-of-bounds write, say) must not kill the
 * simulator silently: say which kernel, block and thread it was, keep the
 * trace written so far (marked incomplete), and exit 1. A crash in the
 * vector form of a thread loop is known only to a run of threads: the
 * handler then runs the same command again with exact threads
 * (CTASIM_EXACT_THREADS=1; runs are deterministic, so it crashes at the
 * same place) to name the thread. Everything it needs is prepared before
 * the command starts: a handler may not allocate. */
#define FIRST_VAR "CTASIM_CRASH_FIRST="
static char **saved_argv;
static char **rerun_envp; /* the environment plus the two variables below */
static char first_report[sizeof(FIRST_VAR) + 1024] = FIRST_VAR;

/* Set once a report is on its way out: the exits it makes are the CLI's
 * own, not a body's. */
static volatile sig_atomic_t leaving;

/* Leaves without running anything else: exit_group directly, past the
 * _exit below and any exit handlers. */
static _Noreturn void leave_now(int code)
{
	syscall(SYS_exit_group, code);
	for (;;)
		pause();
}

/* The report of a body that left the process (`what`: how), the trace
 * kept and marked incomplete, exit 1; with vector code, first a re-run by
 * exact threads to name the thread. */
static _Noreturn void body_left(const char *what)
{
	char buf[1024];
	leaving = 1;
	int n = cta_sim_crash_describe_what(buf, sizeof(buf), what);
	if (!cta_sim_crash_thread_known() && rerun_envp && n > 0) {
		memcpy(first_report + sizeof(FIRST_VAR) - 1, buf, (size_t)n);
		first_report[sizeof(FIRST_VAR) - 1 + (size_t)n] = 0;
		static const char note[] =
		    "ctasim: this happened in a run of threads executed as vector "
		    "code; running the command again thread by thread to name "
		    "the thread\n";
		if (write(2, note, sizeof(note) - 1) < 0)
			n = 0;
		cta_sim_crash_finish_trace();
		/* The mask survives execve, and a blocked fault kills outright. */
		sigset_t all;
		sigfillset(&all);
		sigprocmask(SIG_UNBLOCK, &all, NULL);
		execve("/proc/self/exe", saved_argv, rerun_envp);
		/* No re-run: report what is known. */
	}
	if (n > 0 && write(2, buf, (size_t)n) < 0)
		n = 0;
	cta_sim_crash_finish_trace();
	leave_now(CTA_EXIT_FAIL);
}

/* Where code at pc lies: the object and offset that addr2line turns into
 * a source line (kernel bodies are static functions, which dladdr cannot
 * name). */
static void code_place(char *buf, size_t len, const void *pc)
{
	Dl_info di;
	buf[0] = 0;
	if (!pc || !dladdr(pc, &di) || !di.dli_fname)
		return;
	const char *base = strrchr(di.dli_fname, '/');
	base = base ? base + 1 : di.dli_fname;
	unsigned long off = (unsigned long)((uintptr_t)pc - (uintptr_t)di.dli_fbase);
	snprintf(buf, len, ", code at %s+0x%lx (addr2line -f -e %s 0x%lx names the line)", base,
	         off, di.dli_fname, off);
}

static const void *fault_pc(const void *ucp)
{
	const ucontext_t *uc = ucp;
	if (!uc)
		return NULL;
#if defined(__x86_64__)
	return (const void *)uc->uc_mcontext.gregs[REG_RIP];
#elif defined(__aarch64__)
	return (const void *)uc->uc_mcontext.pc;
#else
	return NULL;
#endif
}

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
	char what[600], place[400];
	code_place(place, sizeof(place), fault_pc(uc));
	snprintf(what, sizeof(what), "crashed: %s at address %p%s", cta_sim_signal_name(sig),
	         si ? si->si_addr : NULL, place);
	body_left(what);
}

/* abort(), raise() and kill() of the process's own pid from a body are a
 * body leaving: reported like a crash, exit 1. The same signals from
 * outside (SIGINT from the terminal, SIGTERM from a batch scheduler) end
 * the run as an interruption: the trace so far kept and marked
 * incomplete, the output being written removed, exit 128 + signal. */
static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	int own = si &&
	          (si->si_code == SI_USER || si->si_code == SI_TKILL || si->si_code == SI_QUEUE) &&
	          si->si_pid == getpid();
	int where = cta_sim_crash_in_body();
	int fault = sig == SIGABRT || sig == SIGTRAP || sig == SIGSYS;
	if (!leaving && ((own && where) || (fault && where == 1))) {
		char what[160];
		snprintf(what, sizeof(what), "raised %s", cta_sim_signal_name(sig));
		body_left(what);
	}
	if (fault) {
		/* ctasim's own assertion: keep the trace, then die of it. */
		leaving = 1;
		cta_sim_crash_finish_trace();
		signal(sig, SIG_DFL);
		sigset_t one;
		sigemptyset(&one);
		sigaddset(&one, sig);
		sigprocmask(SIG_UNBLOCK, &one, NULL);
		raise(sig);
		leave_now(128 + sig);
	}
	leaving = 1;
	char why[64], msg[600], path[400];
	const char *name = sig == SIGINT    ? "SIGINT"
	                   : sig == SIGTERM ? "SIGTERM"
	                   : sig == SIGHUP  ? "SIGHUP"
	                   : sig == SIGUSR1 ? "SIGUSR1"
	                   : sig == SIGUSR2 ? "SIGUSR2"
	                                    : "SIGALRM";
	snprintf(why, sizeof(why), "interrupted by %s", name);
	int kept = cta_sim_crash_finish_trace_as(why);
	cli_interrupted_cleanup();
	int n;
	if (kept && cli_trace_path && !cli_is_stdio(cli_trace_path))
		n = snprintf(msg, sizeof(msg),
		             "ctasim: %s; the trace so far is kept, marked incomplete: %s\n", why,
		             cta_escape(path, sizeof(path), cli_trace_path, 0));
	else
		n = snprintf(msg, sizeof(msg), "ctasim: %s\n", why);
	if (n > 0 && write(2, msg, (size_t)n) < 0)
		n = 0;
	leave_now(128 + sig);
}

/* exit() called by a body runs the exit handlers on the body's thread. */
static void on_exit_check(int status, void *arg)
{
	(void)arg;
	if (!leaving && cta_sim_crash_in_body() == 1) {
		char what[64];
		snprintf(what, sizeof(what), "called exit(%d)", status);
		body_left(what);
	}
}

/* _exit and _Exit skip the exit handlers: the executable's own definitions
 * stand in front of libc's (for kernels linked in, and through the
 * exported symbol for those loaded with --load), check, and then end the
 * process as libc's would. glibc's exit() reaches the system call through
 * its internal alias, not through these. */
__attribute__((visibility("default"))) void _exit(int status)
{
	if (!leaving && cta_sim_crash_in_body() == 1) {
		char what[600], place[400];
		code_place(place, sizeof(place), __builtin_return_address(0));
		snprintf(what, sizeof(what), "called _exit(%d)%s", status, place);
		body_left(what);
	}
	leave_now(status);
}

__attribute__((visibility("default"))) void _Exit(int status)
{
	if (!leaving && cta_sim_crash_in_body() == 1) {
		char what[600], place[400];
		code_place(place, sizeof(place), __builtin_return_address(0));
		snprintf(what, sizeof(what), "called _Exit(%d)%s", status, place);
		body_left(what);
	}
	leave_now(status);
}

static void on_quick_exit(void)
{
	if (!leaving && cta_sim_crash_in_body() == 1)
		body_left("called quick_exit()");
}

extern char **environ;

static void install_crash_handlers(char **argv)
{
	if (getenv("CTASIM_EXACT_THREADS")) {
		cta_sim_set_exact_threads(1);
	} else {
		size_t n = 0;
		while (environ[n])
			n++;
		rerun_envp = malloc((n + 3) * sizeof(*rerun_envp));
		if (rerun_envp) {
			memcpy(rerun_envp, environ, n * sizeof(*rerun_envp));
			rerun_envp[n] = "CTASIM_EXACT_THREADS=1";
			rerun_envp[n + 1] = first_report;
			rerun_envp[n + 2] = NULL;
		}
		saved_argv = argv;
	}
	/* An alternate stack, so that a stack overflow can be reported too. */
	static char altstack[64 * 1024];
	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof(altstack)};
	sigaltstack(&ss, NULL);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_fatal;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESETHAND;
	sigemptyset(&sa.sa_mask);
	int sigs[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL};
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigaction(sigs[i], &sa, NULL);
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
	/* One at a time: a second SIGINT while the first is being handled
	 * waits instead of cutting the trace's last lines short. */
	sigfillset(&sa.sa_mask);
	int other[] = {SIGABRT, SIGTRAP, SIGSYS,  SIGINT, SIGTERM,
	               SIGHUP,  SIGUSR1, SIGUSR2, SIGALRM};
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
		sigaction(other[i], &sa, NULL);
	/* Past a file-size limit a write fails with EFBIG, reported like any
	 * other write error, instead of the process being killed. */
	signal(SIGXFSZ, SIG_IGN);
	on_exit(on_exit_check, NULL);
	at_quick_exit(on_quick_exit);
}

/* A re-run after a crash in vector code that finished without crashing
 * (a body whose fault depends on more than its indices): the first
 * report, and exit 1 whatever the re-run said. */
static int rerun_result(int rc)
{
	const char *first = getenv("CTASIM_CRASH_FIRST");
	if (!first)
		return rc;
	fprintf(stderr,
	        "%sctasim: the re-run thread by thread did not crash, so the thread is not known\n",
	        first);
	return CTA_EXIT_FAIL;
}

static int run_main(int argc, char **argv)
{
	/* CTASIM_REGIONS=0 runs every kernel on fibers, even those the kernel
	 * compiler made into regions (tests compare the two paths). */
	const char *regions = getenv("CTASIM_REGIONS");
	if (regions && !strcmp(regions, "0"))
		cta_sim_set_regions(0);
	/* CTASIM_PERIOD=0 simulates every block through the engine (tests
	 * compare the two paths; CTASIM_PERIOD=report says on stderr how many
	 * blocks a run skipped, cli_report). */
	const char *period = getenv("CTASIM_PERIOD");
	if (period && !strcmp(period, "0"))
		cta_sim_set_period_skip(0);
	if (argc < 2) {
		usage(stderr);
		return CTA_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return CTA_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("ctasim %s\n", CTA_VERSION_STRING);
		return CTA_EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (verb_is(commands[i].verb, argv[1]))
			return rerun_result(commands[i].fn(argc - 1, argv + 1));
	fprintf(stderr, "ctasim: unknown command '%s' (see 'ctasim --help')\n", argv[1]);
	return CTA_EXIT_USAGE;
}

int main(int argc, char **argv)
{
	cli_stdio_init();
	install_crash_handlers(argv);
	return cli_stdio_finish(run_main(argc, argv));
}
