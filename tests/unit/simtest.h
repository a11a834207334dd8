/* Helpers shared by the simulator's unit tests (test_engine, test_exec,
 * test_clc): simulator options for a preset, running a registered harness
 * with --arg style parameters, temporary file names, and reading a file
 * whole. Header-only so each test stays one executable. */
#ifndef CTASIM_TESTS_SIMTEST_H
#define CTASIM_TESTS_SIMTEST_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ctasim/device.h"
#include "ctasim/harness.h"
#include "ctasim/sim.h"

/* ThreadSanitizer runs ten to twenty times slower and its shadow of every
 * waiting thread's stack costs memory: tests pick a smaller size there. */
#if defined(__SANITIZE_THREAD__)
#define ST_TSAN_SMALL(normal, tsan) tsan
#else
#define ST_TSAN_SMALL(normal, tsan) normal
#endif

/* Simulator options for the named preset, everything else default but the
 * host threads: one, so tests that look at the host order of bodies see
 * dispatch order (tests of parallel runs set threads themselves). */
static inline struct cta_sim_opts st_opts(const char *device)
{
	struct cta_sim_opts o = CTA_SIM_OPTS_INIT;
	o.threads = 1;
	const struct cta_device_model *m = cta_device_find(device);
	if (!m) {
		fprintf(stderr, "no device preset %s\n", device);
		abort();
	}
	o.device = *m;
	/* The engine's semantics, not the fitted block times: every block
	 * takes the time its body asks for. */
	memset(o.device.spin_scale_ppm, 0, sizeof(o.device.spin_scale_ppm));
	memset(o.device.spin_add_ns, 0, sizeof(o.device.spin_add_ns));
	o.device.spin_add_mask = 0;
	o.device.spin_by_threads = 0;
	o.device.spin_block_add_ns = 0;
	o.device.spin_gate_threads = 0;
	o.device.clc_emulated = 0;
	return o;
}

/* Runs harness `name` with the NULL-terminated "NAME=VALUE" list `args`
 * under `so`. Returns cta_harness_run's code; *out keeps the harness (and
 * its simulator) for inspection and must be freed by the caller. */
static inline int st_run_harness(struct cta_harness **out, const char *name,
                                 const struct cta_sim_opts *so, const char *const *args)
{
	const struct cta_kernel_info *ki = cta_harness_find(name);
	if (!ki) {
		fprintf(stderr, "no harness %s\n", name);
		abort();
	}
	struct cta_harness_opts ho = {0};
	ho.version = CTA_HARNESS_OPTS_VERSION;
	ho.sim = *so;
	ho.args = args;
	for (ho.nargs = 0; args && args[ho.nargs]; ho.nargs++)
		;
	int rc = cta_harness_new(out, ki, &ho);
	if (rc < 0)
		return rc;
	return cta_harness_run(*out);
}

/* Number of reports of `rule` (counting warnings). */
static inline size_t st_ub_count(const cta_sim *s, const char *rule)
{
	size_t n = 0;
	for (size_t i = 0; i < cta_sim_ub_count(s); i++)
		n += !strcmp(cta_sim_ub_report(s, i)->rule, rule);
	return n;
}

/* A file name in the temporary directory unique to this process. */
static inline void st_tmpname(char *buf, size_t len, const char *tag)
{
	const char *dir = getenv("TMPDIR");
	snprintf(buf, len, "%s/ctasim-test-%ld-%s", dir && *dir ? dir : "/tmp", (long)getpid(),
	         tag);
}

/* Reads a whole file (NUL-terminated); NULL when it cannot. */
static inline char *st_slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	size_t got;
	while (buf && (got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += got;
		if (cap - n - 1 == 0) {
			char *nb = realloc(buf, cap * 2);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap *= 2;
		}
	}
	fclose(f);
	if (buf)
		buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

/* Line number (1-based) of the first line containing `needle` at or after
 * the first line containing `anchor` in the source file `rel` (relative to
 * the source root); 0 when not found. Tests find the line of an offending
 * call this way, so edits above it do not break them. */
static inline int st_find_line(const char *rel, const char *anchor, const char *needle)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", CTASIM_SOURCE_ROOT, rel);
	char *text = st_slurp(path, NULL);
	if (!text)
		return 0;
	int line = 1, found = 0, armed = 0;
	for (char *p = text; *p;) {
		char *nl = strchr(p, '\n');
		if (nl)
			*nl = 0;
		if (!armed && strstr(p, anchor))
			armed = 1;
		if (armed && strstr(p, needle)) {
			found = line;
			break;
		}
		if (!nl)
			break;
		p = nl + 1;
		line++;
	}
	free(text);
	return found;
}

/* 1 when path `file` names source file `rel` (it may carry a prefix such
 * as "../" from the build directory). */
static inline int st_same_file(const char *file, const char *rel)
{
	size_t a = strlen(file), b = strlen(rel);
	return a >= b && !strcmp(file + a - b, rel) && (a == b || file[a - b - 1] == '/');
}

#endif
