/* `ctasim import-cse FILE.json... -o X.trace`: turns the JSON logs of
 * cuda_scheduling_examiner (one per benchmark) into a hardware trace, so
 * that results people already measured with that tool can be diffed
 * against the simulator. The conversion is cta_trace_import_cse. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "cmd.h"
#include "ctasim/tools.h"

static const char usage_text[] =
    "usage: ctasim import-cse FILE.json... -o TRACE [--device NAME] [--tick-ns NS]\n"
    "\n"
    "Converts cuda_scheduling_examiner result files (the JSON log each benchmark\n"
    "writes) into one hardware trace (traces/FORMAT.md): each file is a stream,\n"
    "each kernel entry of its \"times\" a kernel with a launch record (its\n"
    "cuda_launch_times[0]), and a start, an end and an SM per block. Times become\n"
    "nanoseconds from the earliest time in the files. Diff it against a\n"
    "simulator run of the same launches (grid = block_count, block = thread_count).\n"
    "\n"
    "  -o TRACE        the trace to write (.gz/.zst compressed, - stdout)\n"
    "  --device NAME   the GPU, for the trace header (default: a generic name)\n"
    "  --tick-ns NS    the timer resolution (default: the smallest step between\n"
    "                  two distinct block times in the files)\n"
    "\n"
    "exit: 0 written, 2 usage or bad input (FILE:LINE: field ...)\n";

int cta_cmd_import_cse(int argc, char **argv)
{
	const char *out = NULL;
	struct cta_cse_opts o = {0};
	const char **files = calloc((size_t)argc, sizeof(*files));
	unsigned n = 0;
	if (!files)
		return CTA_EXIT_FAIL;
	int code = CTA_EXIT_OK;
	for (int i = 1; i < argc && code == CTA_EXIT_OK; i++) {
		const char *a = argv[i], *v;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage_text, stdout);
			free(files);
			return CTA_EXIT_OK;
		} else if (!strcmp(a, "-o")) {
			if (!(v = cli_value("import-cse", argc, argv, &i, "-o")))
				code = CTA_EXIT_USAGE;
			out = v;
		} else if (cli_is(a, "--device")) {
			if (!(v = cli_value("import-cse", argc, argv, &i, "--device")))
				code = CTA_EXIT_USAGE;
			o.device = v;
		} else if (cli_is(a, "--tick-ns")) {
			if (!(v = cli_value("import-cse", argc, argv, &i, "--tick-ns")) ||
			    cli_parse_double("import-cse", "--tick-ns", v, 1e-3, 1e9, &o.tick_ns) <
			        0)
				code = CTA_EXIT_USAGE;
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "ctasim import-cse: unknown option '%s' (see --help)\n", a);
			code = CTA_EXIT_USAGE;
		} else {
			files[n++] = a;
		}
	}
	if (code == CTA_EXIT_OK && (!n || !out)) {
		fputs(usage_text, stderr);
		code = CTA_EXIT_USAGE;
	}
	if (code == CTA_EXIT_OK) {
		char err[1024] = "";
		struct cta_cse_stats st;
		int rc = cta_trace_import_cse(files, n, out, &o, &st, err, sizeof(err));
		if (rc) {
			fprintf(stderr, "ctasim import-cse: %s\n", err);
			code = rc == CTA_EIO || rc == CTA_ENOMEM ? CTA_EXIT_FAIL : CTA_EXIT_USAGE;
		} else {
			/* The report goes to stderr when the trace takes stdout. */
			FILE *rep = strcmp(out, "-") ? stdout : stderr;
			fprintf(rep,
			        "imported    %u file%s: %u kernel%s, %" PRIu64 " blocks, %" PRIu64
			        " records, timer tick %g ns\n",
			        n, n == 1 ? "" : "s", st.kernels, st.kernels == 1 ? "" : "s",
			        st.blocks, st.records, st.tick_ns);
			if (st.launches_dropped)
				fprintf(rep,
				        "note        %u launch time%s later than the kernel's "
				        "first block "
				        "start (clocks that disagree): left out\n",
				        st.launches_dropped,
				        st.launches_dropped == 1 ? " was" : "s were");
			fprintf(rep, "trace       %s\n", out);
		}
	}
	free(files);
	return code;
}
