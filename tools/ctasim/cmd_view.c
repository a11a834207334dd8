/* `ctasim view TRACE -o FILE.svg`: draws a trace as an SVG timeline, one
 * lane per SM, blocks as rectangles coloured by kernel. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli_util.h"
#include "cmd.h"
#include "ctasim/device.h"
#include "ctasim/io.h"
#include "ctasim/tools.h"
#include "ctasim/trace.h"

static const char usage_text[] =
    "usage: ctasim view TRACE -o FILE.svg [--width PX] [--lane-height PX] [--title TEXT]\n"
    "                   [--lanes auto|sm|tpc|gpc]\n"
    "\n"
    "Draws TRACE as an SVG timeline: one lane per SM, blocks as rectangles coloured\n"
    "by kernel, time on stolen indices hatched, failed cancels, UB and warnings\n"
    "marked. Past 20000 blocks, or when overlapping or sub-pixel blocks would be\n"
    "too thin to see, each lane shows the share of its block slots in use.\n"
    "Convert to PNG with e.g. 'rsvg-convert -o out.png FILE.svg'.\n"
    "\n"
    "  -o FILE            output file ('-': standard output; FILE.svg.gz and\n"
    "                     FILE.svg.zst are compressed)\n"
    "  --width PX         picture width, [1, 100000] (default 1600)\n"
    "  --lane-height PX   height of one lane, [1, 100000] (default: from the\n"
    "                     lane count, the plot about 1200 px high at most)\n"
    "  --lanes UNIT       one lane per SM, TPC or GPC (as the device preset the\n"
    "                     trace names has them); auto (default): per SM while\n"
    "                     lanes of 5 px fit, else per TPC, else per GPC\n"
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
	const struct cta_svg_opts *o = opts;
	if (o->lanes == CTA_SVG_LANES_GPC && !cta_device_find(t->header.device)) {
		char ev[300];
		fprintf(stderr,
		        "ctasim view: --lanes gpc: the trace's device '%s' is not a device preset, "
		        "so its GPCs are unknown (--lanes tpc takes 2 SMs a TPC)\n",
		        cta_escape(ev, sizeof(ev), t->header.device, 0));
		return CLI_REPORTED;
	}
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
		} else if (!strcmp(a, "--lanes")) {
			static const char *const units[] = {"auto", "sm", "tpc", "gpc"};
			if (++i >= argc)
				goto usage;
			opts.lanes = -1;
			for (int u = 0; u < 4; u++)
				if (!strcmp(argv[i], units[u]))
					opts.lanes = u;
			if (opts.lanes < 0) {
				char ev[200];
				fprintf(
				    stderr,
				    "ctasim view: --lanes '%s': expected auto, sm, tpc or gpc\n",
				    cta_escape(ev, sizeof(ev), argv[i], 0));
				return CTA_EXIT_USAGE;
			}
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
