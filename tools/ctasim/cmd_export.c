/* `ctasim export --perfetto TRACE -o FILE.json`: converts a trace to the
 * Chrome trace-event JSON that ui.perfetto.dev and chrome://tracing open. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_util.h"
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

/* cta_trace_export_perfetto as a cli_trace_writer. */
static int write_export(const cta_trace_lean *t, FILE *f, const void *opts)
{
	return cta_trace_lean_export_perfetto(t, f, opts);
}

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

	return cli_trace_convert("export", in, out, write_export, &opts, 1,
	                         opts.group == CTA_PERFETTO_GROUP_KERNEL);
usage:
	fputs(usage_text, stderr);
	return CTA_EXIT_USAGE;
}
