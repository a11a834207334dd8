/* `ctasim view TRACE -o FILE.svg`: draws a trace as an SVG timeline, one
 * lane per SM, blocks as rectangles coloured by kernel. */
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
    "usage: ctasim view TRACE -o FILE.svg [--width PX] [--lane-height PX] [--title TEXT]\n"
    "\n"
    "Draws TRACE as an SVG timeline: one lane per SM, blocks as rectangles coloured\n"
    "by kernel, time on stolen indices hatched, failed cancels, UB and warnings\n"
    "marked. Convert to PNG with e.g. 'rsvg-convert -o out.png FILE.svg'.\n"
    "\n"
    "  -o FILE            output file ('-': standard output)\n"
    "  --width PX         picture width, [1, 100000] (default 1600)\n"
    "  --lane-height PX   height of one SM lane, [1, 100000] (default: from the\n"
    "                     SM count)\n"
    "  --title TEXT       title line (default: device and backend)\n";

static int parse_px(const char *opt, const char *s, unsigned *out)
{
	uint64_t v;
	if (cli_parse_u64("view", opt, s, 1, 100000, &v) < 0)
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* cta_trace_render_svg as a cli_trace_writer. */
static int write_view(const struct cta_trace *t, FILE *f, const void *opts)
{
	return cta_trace_render_svg(t, f, opts);
}

int cta_cmd_view(int argc, char **argv)
{
	const char *in = NULL, *out = NULL;
	struct cta_svg_opts opts = CTA_SVG_OPTS_INIT;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			fputs(usage_text, stdout);
			return CTA_EXIT_OK;
		} else if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
			if (++i >= argc)
				goto usage;
			out = argv[i];
		} else if (!strcmp(a, "--width")) {
			if (++i >= argc || parse_px(a, argv[i], &opts.width))
				return CTA_EXIT_USAGE;
		} else if (!strcmp(a, "--lane-height")) {
			if (++i >= argc || parse_px(a, argv[i], &opts.lane_height))
				return CTA_EXIT_USAGE;
		} else if (!strcmp(a, "--title")) {
			if (++i >= argc)
				goto usage;
			opts.title = argv[i];
		} else if (a[0] == '-' && a[1]) {
			fprintf(stderr, "ctasim view: unknown option '%s'\n", a);
			goto usage;
		} else if (!in) {
			in = a;
		} else {
			fprintf(stderr, "ctasim view: more than one trace given\n");
			goto usage;
		}
	}
	if (!in || !out)
		goto usage;

	return cli_trace_convert("view", in, out, write_view, &opts, 0);
usage:
	fputs(usage_text, stderr);
	return CTA_EXIT_USAGE;
}
