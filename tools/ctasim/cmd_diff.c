/* `ctasim diff A B`: compares two traces of the same launches (typically
 * the simulator against hardware) and says whether they agree within
 * tolerance; exit 1 when they do not. */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_util.h"
#include "cmd.h"
#include "ctasim/tools.h"
#include "ctasim/trace.h"
#include "progress.h"

static const char usage_text[] =
    "usage: ctasim diff A B [--json] [--tol-NAME VALUE]...\n"
    "\n"
    "Compares trace B against trace A: exactly-once coverage in each, blocks per\n"
    "SM, first-wave placement, start order, makespan, kernel start/end offsets and\n"
    "steals per block (docs/TOOLS.md defines them). Time differences below the\n"
    "coarser timer tick of the two traces are ignored.\n"
    "\n"
    "  --json                      the report as one JSON object\n"
    "  --tol-bps-distance X        max blocks-per-SM distance, [0, 10^9] (default 0.25)\n"
    "  --tol-first-wave X          min first-wave agreement, [0, 1] (default 0.8)\n"
    "  --tol-order X               min Spearman start-order correlation, [0, 1]\n"
    "                              (default 0.9)\n"
    "  --tol-makespan X            max |makespan ratio - 1|, [0, 10^9] (default 0.2)\n"
    "  --tol-offset X              max start/end offset difference over makespan,\n"
    "                              [0, 10^9] (default 0.1)\n"
    "  --tol-steals X              max steals-per-block difference, [0, 10^9]\n"
    "                              (default 0.1)\n"
    "\n"
    "exit: 0 within tolerance, 1 outside tolerance, 2 usage or bad input\n";

struct tol_opt {
	const char *name;
	size_t off;
	double min, max;
};

static const struct tol_opt tol_opts[] = {
    {"--tol-bps-distance", offsetof(struct cta_diff_tol, bps_distance), 0, 1e9},
    {"--tol-first-wave", offsetof(struct cta_diff_tol, first_wave), 0, 1},
    {"--tol-order", offsetof(struct cta_diff_tol, order_rho), 0, 1},
    {"--tol-makespan", offsetof(struct cta_diff_tol, makespan), 0, 1e9},
    {"--tol-offset", offsetof(struct cta_diff_tol, offset), 0, 1e9},
    {"--tol-steals", offsetof(struct cta_diff_tol, steals_per_block), 0, 1e9},
};

int cta_cmd_diff(int argc, char **argv)
{
	const char *path[2] = {NULL, NULL};
	int json = 0, npaths = 0;
	struct cta_diff_tol tol = CTA_DIFF_TOL_INIT;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage_text, stdout);
			return CTA_EXIT_OK;
		}
		if (!strcmp(a, "--json")) {
			json = 1;
			continue;
		}
		const struct tol_opt *t = NULL;
		const char *val = NULL;
		for (size_t j = 0; j < sizeof(tol_opts) / sizeof(tol_opts[0]); j++) {
			size_t l = strlen(tol_opts[j].name);
			if (!strncmp(a, tol_opts[j].name, l) && (a[l] == 0 || a[l] == '=')) {
				t = &tol_opts[j];
				val = a[l] == '=' ? a + l + 1 : NULL;
			}
		}
		if (t) {
			if (!val && ++i < argc)
				val = argv[i];
			double v;
			if (!val) {
				fprintf(stderr, "ctasim diff: option %s needs a value\n", t->name);
				return CTA_EXIT_USAGE;
			}
			if (cli_parse_double("diff", t->name, val, t->min, t->max, &v) < 0)
				return CTA_EXIT_USAGE;
			*(double *)((char *)&tol + t->off) = v;
			continue;
		}
		if (a[0] == '-' && a[1]) {
			fprintf(stderr, "ctasim diff: unknown option '%s'\n", a);
			goto usage;
		}
		if (npaths == 2) {
			fprintf(stderr, "ctasim diff: more than two traces given\n");
			goto usage;
		}
		path[npaths++] = a;
	}
	if (npaths != 2)
		goto usage;

	char err[512];
	/* Streamed: diff keeps a few bytes per block begin, not the records. */
	struct cta_diff_result *r = malloc(sizeof(*r));
	int complete[2] = {1, 1};
	int rc = r ? cta_trace_diff_files(r, path[0], path[1], &tol, complete, err, sizeof(err))
	           : CTA_ENOMEM;
	int read_err = 0;
	for (int s = 0; s < 2 && rc && r; s++) {
		/* A trace that cannot be read: its message starts with its name. */
		const char *nm = strcmp(path[s], "-") ? path[s] : "<stdin>";
		size_t l = strlen(nm);
		read_err |= !strncmp(err, nm, l) && err[l] == ':';
	}
	if (read_err) {
		fprintf(stderr, "ctasim diff: %s\n", err);
		free(r);
		return CTA_EXIT_USAGE;
	}
	for (int s = 0; s < 2 && !rc; s++)
		if (!complete[s])
			fprintf(stderr, "ctasim diff: %s: note: the trace is marked incomplete\n",
			        path[s]);
	if (rc) {
		fprintf(stderr, "ctasim diff: %s vs %s: %s\n", path[0], path[1],
		        r ? err : cta_strerror(rc));
		free(r);
		return CTA_EXIT_USAGE;
	}
	rc = json ? cta_diff_write_json(r, stdout, path[0], path[1])
	          : cta_diff_write_text(r, stdout, path[0], path[1]);
	int within = r->within;
	free(r);
	if (rc || fflush(stdout)) {
		fprintf(stderr, "ctasim diff: <stdout>: %s\n",
		        cli_stdout_err ? strerror(cli_stdout_err) : cta_strerror(CTA_EIO));
		return CTA_EXIT_USAGE;
	}
	return within ? CTA_EXIT_OK : CTA_EXIT_FAIL;
usage:
	fputs(usage_text, stderr);
	return CTA_EXIT_USAGE;
}
