/* The ctasim command line: dispatches `ctasim VERB ...` to cmd_VERB.c.
 * Every subcommand is built over the public API only. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd.h"
#include "ctasim/export.h"
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

static void usage(FILE *f)
{
	fprintf(f, "usage: ctasim [--help] [--version] COMMAND [ARGS...]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].verb, commands[i].summary);
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

static void on_fatal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	char buf[1024];
	int n = cta_sim_crash_describe(buf, sizeof(buf), sig, si ? si->si_addr : NULL);
	if (!cta_sim_crash_thread_known() && rerun_envp && n > 0) {
		memcpy(first_report + sizeof(FIRST_VAR) - 1, buf, (size_t)n);
		first_report[sizeof(FIRST_VAR) - 1 + (size_t)n] = 0;
		static const char note[] =
		    "ctasim: the crash was in a run of threads executed as vector "
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
	_exit(CTA_EXIT_FAIL);
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

int main(int argc, char **argv)
{
	install_crash_handlers(argv);
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
		if (!strcmp(argv[1], commands[i].verb))
			return rerun_result(commands[i].fn(argc - 1, argv + 1));
	fprintf(stderr, "ctasim: unknown command '%s' (see 'ctasim --help')\n", argv[1]);
	return CTA_EXIT_USAGE;
}
