/* `ctasim export --perfetto TRACE -o FILE.json`: converts a trace to the
 * Chrome trace-event JSON that ui.perfetto.dev and chrome://tracing open. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "ctasim/tools.h"
#include "ctasim/trace.h"

static const char usage_text[] =
    "usage: ctasim export --perfetto TRACE [-o FILE.json] [--group gpu|kernel]\n"
    "\n"
    "Writes TRACE as Chrome trace-event JSON (open it at https://ui.perfetto.dev).\n"
    "Blocks are slices on one track per SM (a track per resident slot), stolen\n"
    "indices nested slices, cancels/UB/warnings instant events.\n"
    "\n"
    "  --perfetto        the output format (the only one so far)\n"
    "  -o FILE           output file; '-' or no -o: standard output\n"
    "  --group gpu       all SM tracks under one \"GPU\" process (default)\n"
    "  --group kernel    one process per kernel, its SM tracks under it\n";

int cta_cmd_export(int argc, char **argv)
{
	const char *in = NULL, *out = "-";
	int perfetto = 0;
	struct cta_perfetto_opts opts = CTA_PERFETTO_OPTS_INIT;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage_text, stdout);
			return CTA_EXIT_OK;
		} else if (!strcmp(a, "--perfetto")) {
			perfetto = 1;
		} else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			if (++i >= argc)
				goto usage;
			out = argv[i];
		} else if (!strcmp(a, "--group")) {
			if (++i >= argc)
				goto usage;
			if (!strcmp(argv[i], "gpu"))
				opts.group = CTA_PERFETTO_GROUP_GPU;
			else if (!strcmp(argv[i], "kernel"))
				opts.group = CTA_PERFETTO_GROUP_KERNEL;
			else {
				fprintf(stderr,
				        "ctasim export: --group must be gpu or kernel, not '%s'\n",
				        argv[i]);
				return CTA_EXIT_USAGE;
			}
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "ctasim export: unknown option '%s'\n", a);
			goto usage;
		} else if (!in) {
			in = a;
		} else {
			fprintf(stderr, "ctasim export: more than one trace given\n");
			goto usage;
		}
	}
	if (!in || !perfetto)
		goto usage;

	struct cta_trace t;
	char err[512];
	int rc = cta_trace_read(&t, in, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "ctasim export: %s\n", err);
		return CTA_EXIT_USAGE;
	}
	if (!t.complete)
		fprintf(stderr, "ctasim export: %s: note: the trace is marked incomplete\n", in);

	/* Written next to the target and renamed, so a failed export never
	 * leaves half a JSON file under the requested name. */
	/* Devices and pipes (-o /dev/stdout, a fifo) are written in place:
	 * renaming a temporary file onto them would replace the node. */
	struct stat st;
	int to_stdout = !strcmp(out, "-");
	int direct = !to_stdout && stat(out, &st) == 0 && !S_ISREG(st.st_mode);
	char *tmp = NULL;
	FILE *f = stdout;
	if (direct) {
		f = fopen(out, "w");
		if (!f) {
			perror(out);
			cta_trace_free(&t);
			return CTA_EXIT_USAGE;
		}
	} else if (!to_stdout) {
		size_t n = strlen(out) + 32;
		tmp = malloc(n);
		if (!tmp) {
			cta_trace_free(&t);
			return CTA_EXIT_USAGE;
		}
		snprintf(tmp, n, "%s.tmp.%ld", out, (long)getpid());
		f = fopen(tmp, "w");
		if (!f) {
			perror(tmp);
			free(tmp);
			cta_trace_free(&t);
			return CTA_EXIT_USAGE;
		}
	}
	rc = cta_trace_export_perfetto(&t, f, &opts);
	cta_trace_free(&t);
	if (direct) {
		if (fclose(f) && !rc)
			rc = CTA_EIO;
	} else if (!to_stdout) {
		if (fclose(f) && !rc)
			rc = CTA_EIO;
		if (!rc && rename(tmp, out))
			rc = CTA_EIO;
		if (rc)
			remove(tmp);
	} else if (fflush(stdout) && !rc) {
		rc = CTA_EIO;
	}
	free(tmp);
	if (rc) {
		fprintf(stderr, "ctasim export: %s: %s\n", to_stdout ? "<stdout>" : out,
		        cta_strerror(rc));
		return CTA_EXIT_USAGE;
	}
	return CTA_EXIT_OK;
usage:
	fputs(usage_text, stderr);
	return CTA_EXIT_USAGE;
}
