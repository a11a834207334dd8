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
#include <unistd.h>

#include "ctasim/tools.h"
#include "ctasim/trace.h"
#include "trace/trace_internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int same_text(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* Whatever the reader accepts, the writer must write back so that it reads
 * the same. Done on tmpfs, where the writer's fsync costs nothing. */
static void round_trip(const struct cta_trace *t)
{
	static char path[64];
	if (!path[0])
		snprintf(path, sizeof(path), "/dev/shm/ctasim-fuzz-%ld.trace", (long)getpid());
	cta_trace_writer *w;
	if (cta_trace_writer_open(&w, path, &t->header) != 0) {
		if (access("/dev/shm", W_OK) == 0)
			abort(); /* a header the reader took but the writer refuses */
		return;
	}
	for (size_t i = 0; i < t->count; i++)
		if (cta_trace_writer_add(w, &t->recs[i]) != 0)
			abort();
	if (cta_trace_writer_close(w, t->complete) != 0)
		abort();
	struct cta_trace u;
	char err[512];
	if (cta_trace_read(&u, path, err, sizeof(err)) != 0)
		abort();
	unlink(path);
	if (memcmp(&u.header, &t->header, sizeof(u.header)) != 0 || u.count != t->count ||
	    u.complete != t->complete)
		abort();
	for (size_t i = 0; i < t->count; i++) {
		const struct cta_trace_rec *a = &t->recs[i], *b = &u.recs[i];
		if (a->t_ns != b->t_ns || a->ev != b->ev || a->kernel != b->kernel ||
		    a->block != b->block || a->phys != b->phys || a->sm != b->sm ||
		    a->arg != b->arg || a->code != b->code || !same_text(a->text, b->text))
			abort();
	}
	cta_trace_free(&u);
}

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
	round_trip(&t);
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
#include "replay.h"
#endif
