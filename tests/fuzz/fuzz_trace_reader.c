/* Fuzz target for the trace reader: any byte string must either load or be
 * rejected with a "NAME:LINE: message" error, never crash; whatever loads is
 * also pushed through the exporters, the diff and the calibration, which
 * trust the reader's output. Built by run.sh with libFuzzer, or with
 * -DCTA_FUZZ_STANDALONE as a plain program that replays files. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctasim/tools.h"
#include "ctasim/trace.h"
#include "trace/trace_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct cta_trace t;
	char err[512];
	int rc = cta__trace_read_mem(&t, "fuzz", (const char *)data, size, err, sizeof(err));
	if (rc) {
		/* A rejection must say where: the name, then a line or a colon. */
		if (strncmp(err, "fuzz:", 5) != 0 || rc >= 0)
			abort();
		if (t.recs || t.strings)
			abort();
		return 0;
	}
	FILE *null = fopen("/dev/null", "w");
	if (!null)
		return 0;
	cta_trace_export_perfetto(&t, null, NULL);
	struct cta_perfetto_opts po = CTA_PERFETTO_OPTS_INIT;
	po.group = CTA_PERFETTO_GROUP_KERNEL;
	cta_trace_export_perfetto(&t, null, &po);
	cta_trace_render_svg(&t, null, NULL);
	struct cta_diff_result *d = malloc(sizeof(*d));
	if (d && cta_trace_diff(d, &t, &t, NULL, err, sizeof(err)) == 0) {
		cta_diff_write_text(d, null, "a", "b");
		cta_diff_write_json(d, null, "a", "b");
	}
	free(d);
	struct cta_device_model *base = calloc(2, sizeof(*base));
	if (base) {
		const struct cta_trace *tp[1] = {&t};
		base[0].sm_count = 4;
		base[0].sms_per_tpc = 2;
		cta_trace_calibrate(&base[1], NULL, &base[0], tp, 1, err, sizeof(err));
	}
	free(base);
	fclose(null);
	cta_trace_free(&t);
	return 0;
}

#ifdef CTA_FUZZ_STANDALONE
#include <dirent.h>
#include <sys/stat.h>

/* Replays one file; returns 0, or -1 when it cannot be read. */
static int replay(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return -1;
	size_t cap = 1 << 16, n = 0;
	uint8_t *buf = malloc(cap);
	while (buf) {
		n += fread(buf + n, 1, cap - n, f);
		if (n < cap)
			break;
		uint8_t *nb = realloc(buf, cap * 2);
		if (!nb)
			free(buf);
		buf = nb;
		cap *= 2;
	}
	fclose(f);
	if (!buf)
		return -1;
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	return 0;
}

/* Usage: fuzz_trace_reader FILE-OR-DIR...; replays every file given and
 * every file directly inside each directory. */
int main(int argc, char **argv)
{
	unsigned files = 0;
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			fprintf(stderr, "%s: cannot stat\n", argv[i]);
			return 1;
		}
		if (!S_ISDIR(st.st_mode)) {
			if (replay(argv[i]))
				return 1;
			files++;
			continue;
		}
		DIR *d = opendir(argv[i]);
		if (!d)
			return 1;
		struct dirent *e;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			char p[4096];
			snprintf(p, sizeof(p), "%s/%s", argv[i], e->d_name);
			if (replay(p)) {
				closedir(d);
				return 1;
			}
			files++;
		}
		closedir(d);
	}
	printf("replayed %u inputs\n", files);
	return files ? 0 : 1;
}
#endif
