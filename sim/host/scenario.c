/* Scenario files: reads the JSON of docs/SCENARIOS.md into struct
 * cta_scenario, checking every field so that a mistake is reported with the
 * file, line and field it is in, before anything runs. */
#include "ctasim/scenario.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctasim/harness.h"
#include "util/json.h"

#define PATH_BUF 256

static const char *const top_fields[] = {"version", "description", "device",
                                         "seed",    "sm_limit",    "timing_only",
                                         "streams", "kernels",     NULL};
static const char *const stream_fields[] = {"name", "priority", "description", NULL};
static const char *const kernel_fields[] = {"harness", "label", "stream",      "release_ns", "grid",
                                            "block",   "args",  "description", NULL};

/* CUDA's limits on launch dimensions; the device model may be tighter for
 * threads per block, which cta_scenario_check_device checks. */
static const int64_t grid_max[3] = {2147483647, 65535, 65535};
static const int64_t block_max[3] = {1024, 1024, 64};

void cta_scenario_free(struct cta_scenario *s)
{
	if (!s)
		return;
	for (unsigned i = 0; s->kernels && i < s->nkernels; i++) {
		struct cta_scenario_kernel *k = &s->kernels[i];
		for (size_t a = 0; k->args && a < k->nargs; a++)
			free(k->args[a]);
		free(k->args);
		free(k->arg_lines);
	}
	free(s->kernels);
	free(s->streams);
	free(s->path);
	memset(s, 0, sizeof(*s));
}

/* A member that must be there. */
static int require(const struct cta__json_ctx *c, const struct cta__json *obj, const char *path,
                   const char *key, const struct cta__json **out)
{
	*out = cta__json_get(obj, key);
	if (*out)
		return 0;
	char p[PATH_BUF];
	cta__json_path_member(p, sizeof(p), path, key);
	return cta__json_fail(c, CTA_EPARSE, obj->line, p, "required field is missing");
}

/* Labels and stream names end up as fields of text traces and CSV tables,
 * where a space, comma or quote would split or break a column. */
static int check_name(const struct cta__json_ctx *c, const struct cta__json *v, const char *path,
                      const char *name)
{
	for (const char *q = name; *q; q++) {
		unsigned char ch = (unsigned char)*q;
		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
		    (ch >= '0' && ch <= '9') || strchr("_-.:#+@/", ch))
			continue;
		return cta__json_fail(c, CTA_EPARSE, v->line, path,
		                      "'%s' has a character other than letters, digits and "
		                      "_ - . : # + @ /",
		                      name);
	}
	return 0;
}

/* Descriptions are free text for people; they are only type-checked. */
static int want_description(const struct cta__json_ctx *c, const struct cta__json *obj,
                            const char *path)
{
	const struct cta__json *d = cta__json_get(obj, "description");
	if (!d)
		return 0;
	char p[PATH_BUF];
	cta__json_path_member(p, sizeof(p), path, "description");
	return cta__json_want(c, d, p, CTA__JSON_STRING);
}

/* A dimension triple: a number (x) or an array [x], [x, y] or [x, y, z];
 * missing entries are 1. */
static int parse_dims(const struct cta__json_ctx *c, const struct cta__json *v, const char *path,
                      const int64_t max[3], unsigned out[3])
{
	int64_t x;
	out[0] = out[1] = out[2] = 1;
	if (v->type == CTA__JSON_INT || v->type == CTA__JSON_DOUBLE) {
		int rc = cta__json_want_int(c, v, path, 1, max[0], &x);
		if (rc)
			return rc;
		out[0] = (unsigned)x;
		return 0;
	}
	if (v->type != CTA__JSON_ARRAY)
		return cta__json_fail(c, CTA_EPARSE, v->line, path,
		                      "expected a number or an array [x, y, z], got %s",
		                      cta__json_type_name(v->type));
	if (v->u.arr.n < 1 || v->u.arr.n > 3)
		return cta__json_fail(c, CTA_EPARSE, v->line, path,
		                      "expected 1 to 3 dimensions [x, y, z], got %zu", v->u.arr.n);
	for (size_t d = 0; d < v->u.arr.n; d++) {
		char p[PATH_BUF];
		cta__json_path_index(p, sizeof(p), path, d);
		int rc = cta__json_want_int(c, v->u.arr.items[d], p, 1, max[d], &x);
		if (rc)
			return rc;
		out[d] = (unsigned)x;
	}
	return 0;
}

/* "args": {"NAME": value, ...} becomes "NAME=VALUE" strings. Numbers keep
 * the text they were written with, so the harness parses exactly that. */
static int parse_args(const struct cta__json_ctx *c, const struct cta__json *v, const char *path,
                      struct cta_scenario_kernel *k)
{
	int rc = cta__json_want(c, v, path, CTA__JSON_OBJECT);
	if (rc)
		return rc;
	size_t n = v->u.obj.n;
	if (n == 0)
		return 0;
	k->args = calloc(n, sizeof(*k->args));
	k->arg_lines = calloc(n, sizeof(*k->arg_lines));
	if (!k->args || !k->arg_lines)
		return cta__json_fail(c, CTA_ENOMEM, v->line, path, "out of memory");
	for (size_t i = 0; i < n; i++) {
		const struct cta__json_member *m = &v->u.obj.m[i];
		const struct cta__json *val = m->value;
		char p[PATH_BUF];
		cta__json_path_member(p, sizeof(p), path, m->key);
		if (m->keylen == 0 || memchr(m->key, '=', m->keylen) ||
		    memchr(m->key, '\0', m->keylen))
			return cta__json_fail(c, CTA_EPARSE, m->line, p,
			                      "an argument name must be non-empty and contain "
			                      "no '='");
		const char *text;
		switch (val->type) {
		case CTA__JSON_STRING:
			if (memchr(val->u.str.s, '\0', val->u.str.len))
				return cta__json_fail(c, CTA_EPARSE, val->line, p,
				                      "string contains a NUL character (\\u0000)");
			text = val->u.str.s;
			break;
		case CTA__JSON_INT:
		case CTA__JSON_DOUBLE:
			text = val->num_text;
			break;
		case CTA__JSON_BOOL:
			text = val->u.b ? "1" : "0";
			break;
		default:
			return cta__json_fail(c, CTA_EPARSE, val->line, p,
			                      "expected a string, number or boolean, got %s",
			                      cta__json_type_name(val->type));
		}
		size_t len = m->keylen + 1 + strlen(text) + 1;
		char *a = malloc(len);
		if (!a)
			return cta__json_fail(c, CTA_ENOMEM, val->line, p, "out of memory");
		snprintf(a, len, "%s=%s", m->key, text);
		k->args[k->nargs] = a;
		k->arg_lines[k->nargs] = m->line;
		k->nargs++;
	}
	return 0;
}

/* Lists names into buf ("a, b, c"), as far as it fits. */
static void list_names(char *buf, size_t n, const char *const *names, size_t count)
{
	size_t len = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < count && len + 1 < n; i++) {
		int w = snprintf(buf + len, n - len, "%s%s", i ? ", " : "", names[i]);
		if (w < 0 || (size_t)w >= n - len) {
			if (n >= 4)
				memcpy(buf + n - 4, "...", 4);
			return;
		}
		len += (size_t)w;
	}
}

static int parse_streams(const struct cta__json_ctx *c, const struct cta__json *v,
                         struct cta_scenario *s)
{
	int rc = cta__json_want(c, v, "streams", CTA__JSON_ARRAY);
	if (rc)
		return rc;
	if (v->u.arr.n > CTA_SCENARIO_MAX_STREAMS)
		return cta__json_fail(c, CTA_ERANGE, v->line, "streams",
		                      "%zu streams, more than the maximum %d", v->u.arr.n,
		                      CTA_SCENARIO_MAX_STREAMS);
	if (v->u.arr.n == 0)
		return 0;
	s->streams = calloc(v->u.arr.n, sizeof(*s->streams));
	if (!s->streams)
		return cta__json_fail(c, CTA_ENOMEM, v->line, "streams", "out of memory");
	for (size_t i = 0; i < v->u.arr.n; i++) {
		const struct cta__json *o = v->u.arr.items[i];
		struct cta_scenario_stream *st = &s->streams[i];
		char path[PATH_BUF], p[PATH_BUF];
		const struct cta__json *f;
		cta__json_path_index(path, sizeof(path), "streams", i);
		if ((rc = cta__json_want(c, o, path, CTA__JSON_OBJECT)) ||
		    (rc = cta__json_check_fields(c, o, path, stream_fields)) ||
		    (rc = want_description(c, o, path)))
			return rc;
		st->line = o->line;
		st->priority_line = o->line;
		cta__json_path_member(p, sizeof(p), path, "name");
		if ((rc = require(c, o, path, "name", &f)) ||
		    (rc = cta__json_want_string(c, f, p, 0, st->name, sizeof(st->name))) ||
		    (rc = check_name(c, f, p, st->name)))
			return rc;
		if (strcmp(st->name, "default") == 0)
			return cta__json_fail(c, CTA_EPARSE, f->line, p,
			                      "the name 'default' is reserved for the default "
			                      "stream");
		for (size_t j = 0; j < i; j++)
			if (strcmp(s->streams[j].name, st->name) == 0)
				return cta__json_fail(c, CTA_EPARSE, f->line, p,
				                      "duplicate stream name '%s' (first at line "
				                      "%d)",
				                      st->name, s->streams[j].line);
		if ((f = cta__json_get(o, "priority"))) {
			int64_t x;
			cta__json_path_member(p, sizeof(p), path, "priority");
			if ((rc = cta__json_want_int(c, f, p, INT_MIN, INT_MAX, &x)))
				return rc;
			st->priority = (int)x;
			st->priority_line = f->line;
		}
		s->nstreams++;
	}
	return 0;
}

/* Resolves a kernel's "stream" to an index, suggesting the stream that was
 * probably meant when the name is unknown. */
static int find_stream(const struct cta__json_ctx *c, const struct cta__json *f, const char *p,
                       const struct cta_scenario *s, unsigned *out)
{
	char name[CTA_SCENARIO_NAME_MAX + 1];
	/* One byte more than a stream name can hold, so a longer name reads
	 * as unknown rather than as too long. */
	int rc = cta__json_want_string(c, f, p, 0, name, sizeof(name));
	if (rc == CTA_ERANGE)
		return cta__json_fail(c, CTA_EPARSE, f->line, p,
		                      "unknown stream (no stream has a "
		                      "name that long)");
	if (rc)
		return rc;
	if (strcmp(name, "default") == 0) {
		*out = CTA_SCENARIO_DEFAULT_STREAM;
		return 0;
	}
	for (unsigned i = 0; i < s->nstreams; i++) {
		if (strcmp(s->streams[i].name, name) == 0) {
			*out = i;
			return 0;
		}
	}
	if (s->nstreams == 0)
		return cta__json_fail(c, CTA_EPARSE, f->line, p,
		                      "unknown stream '%s' (no streams are declared; add it to "
		                      "\"streams\")",
		                      name);
	const char **names = calloc(s->nstreams + 1, sizeof(*names));
	if (!names)
		return cta__json_fail(c, CTA_ENOMEM, f->line, p, "out of memory");
	for (unsigned i = 0; i < s->nstreams; i++)
		names[i] = s->streams[i].name;
	const char *sugg = cta__json_suggest(name, names);
	if (sugg) {
		rc = cta__json_fail(c, CTA_EPARSE, f->line, p,
		                    "unknown stream '%s' (did you mean '%s'?)", name, sugg);
	} else {
		char list[200];
		list_names(list, sizeof(list), names, s->nstreams);
		rc = cta__json_fail(c, CTA_EPARSE, f->line, p,
		                    "unknown stream '%s' (declared streams: %s)", name, list);
	}
	free(names);
	return rc;
}

static int parse_kernel(const struct cta__json_ctx *c, const struct cta__json *o, const char *path,
                        struct cta_scenario *s, struct cta_scenario_kernel *k, int *label_line)
{
	char p[PATH_BUF];
	const struct cta__json *f;
	int rc;
	if ((rc = cta__json_want(c, o, path, CTA__JSON_OBJECT)) ||
	    (rc = cta__json_check_fields(c, o, path, kernel_fields)) ||
	    (rc = want_description(c, o, path)))
		return rc;
	k->line = o->line;
	k->stream = CTA_SCENARIO_DEFAULT_STREAM;

	cta__json_path_member(p, sizeof(p), path, "harness");
	if ((rc = require(c, o, path, "harness", &f)) ||
	    (rc = cta__json_want_string(c, f, p, 0, k->harness, sizeof(k->harness))))
		return rc;
	k->harness_line = f->line;

	*label_line = 0;
	if ((f = cta__json_get(o, "label"))) {
		cta__json_path_member(p, sizeof(p), path, "label");
		if ((rc = cta__json_want_string(c, f, p, 0, k->label, sizeof(k->label))) ||
		    (rc = check_name(c, f, p, k->label)))
			return rc;
		*label_line = f->line;
	}
	if ((f = cta__json_get(o, "stream"))) {
		cta__json_path_member(p, sizeof(p), path, "stream");
		if ((rc = find_stream(c, f, p, s, &k->stream)))
			return rc;
	}
	if ((f = cta__json_get(o, "release_ns"))) {
		int64_t x;
		cta__json_path_member(p, sizeof(p), path, "release_ns");
		if ((rc = cta__json_want_int(c, f, p, INT64_MIN, INT64_MAX, &x)))
			return rc;
		if (x < 0)
			return cta__json_fail(c, CTA_ERANGE, f->line, p,
			                      "release time must not be negative, got %s",
			                      f->num_text);
		k->release_ns = (uint64_t)x;
	}
	if ((f = cta__json_get(o, "grid"))) {
		cta__json_path_member(p, sizeof(p), path, "grid");
		if ((rc = parse_dims(c, f, p, grid_max, k->grid)))
			return rc;
		k->grid_set = 1;
	}
	if ((f = cta__json_get(o, "block"))) {
		cta__json_path_member(p, sizeof(p), path, "block");
		if ((rc = parse_dims(c, f, p, block_max, k->block)))
			return rc;
		k->block_set = 1;
		k->block_line = f->line;
	}
	if ((f = cta__json_get(o, "args"))) {
		cta__json_path_member(p, sizeof(p), path, "args");
		if ((rc = parse_args(c, f, p, k)))
			return rc;
	}
	return 0;
}

/* Kernels of one stream run in the order they are listed, and the host
 * enqueues each at its release time: a release time earlier than that of a
 * kernel listed before it on the same stream would contradict one of the
 * two orders, so it is refused rather than guessed at. */
static int check_stream_order(const struct cta__json_ctx *c, const struct cta__json *karr,
                              const struct cta_scenario *s)
{
	for (unsigned i = 1; i < s->nkernels; i++) {
		const struct cta_scenario_kernel *k = &s->kernels[i];
		for (unsigned j = i; j-- > 0;) {
			const struct cta_scenario_kernel *prev = &s->kernels[j];
			if (prev->stream != k->stream)
				continue;
			if (k->release_ns < prev->release_ns) {
				const struct cta__json *f =
				    cta__json_get(karr->u.arr.items[i], "release_ns");
				char p[PATH_BUF];
				cta__json_path_index(p, sizeof(p), "kernels", i);
				cta__json_path_member(p, sizeof(p), p, "release_ns");
				return cta__json_fail(
				    c, CTA_EPARSE, f ? f->line : k->line, p,
				    "release time %llu is earlier than the %llu of kernels[%u] "
				    "(line %d) on the same stream '%s'; list a stream's kernels in "
				    "launch order",
				    (unsigned long long)k->release_ns,
				    (unsigned long long)prev->release_ns, j, prev->line,
				    k->stream == CTA_SCENARIO_DEFAULT_STREAM
				        ? "default"
				        : s->streams[k->stream].name);
			}
			break; /* the previous kernel of the stream is enough */
		}
	}
	return 0;
}

/* Fills in default labels and refuses duplicates: labels name kernels in
 * the trace, where two of one name could not be told apart. */
static int finish_labels(const struct cta__json_ctx *c, struct cta_scenario *s,
                         const int *label_lines)
{
	for (unsigned i = 0; i < s->nkernels; i++) {
		struct cta_scenario_kernel *k = &s->kernels[i];
		if (k->label[0])
			continue;
		unsigned uses = 0;
		for (unsigned j = 0; j < s->nkernels; j++)
			uses += strcmp(s->kernels[j].harness, k->harness) == 0;
		if (uses == 1)
			snprintf(k->label, sizeof(k->label), "%s", k->harness);
		else
			snprintf(k->label, sizeof(k->label), "%.50s#%u", k->harness, i);
	}
	for (unsigned i = 1; i < s->nkernels; i++) {
		for (unsigned j = 0; j < i; j++) {
			if (strcmp(s->kernels[i].label, s->kernels[j].label) != 0)
				continue;
			/* Report where a label was written, preferring the later. */
			unsigned at = label_lines[i] ? i : j;
			unsigned other = at == i ? j : i;
			char p[PATH_BUF];
			cta__json_path_index(p, sizeof(p), "kernels", at);
			cta__json_path_member(p, sizeof(p), p, "label");
			return cta__json_fail(
			    c, CTA_EPARSE, label_lines[at] ? label_lines[at] : s->kernels[at].line,
			    p, "duplicate label '%s' (also kernels[%u] at line %d)",
			    s->kernels[i].label, other, s->kernels[other].line);
		}
	}
	return 0;
}

static int parse_kernels(const struct cta__json_ctx *c, const struct cta__json *root,
                         struct cta_scenario *s)
{
	const struct cta__json *v;
	int rc;
	if ((rc = require(c, root, "", "kernels", &v)) ||
	    (rc = cta__json_want(c, v, "kernels", CTA__JSON_ARRAY)))
		return rc;
	if (v->u.arr.n == 0)
		return cta__json_fail(c, CTA_EPARSE, v->line, "kernels",
		                      "a scenario needs at least one kernel");
	if (v->u.arr.n > CTA_SCENARIO_MAX_KERNELS)
		return cta__json_fail(c, CTA_ERANGE, v->line, "kernels",
		                      "%zu kernels, more than the maximum %d", v->u.arr.n,
		                      CTA_SCENARIO_MAX_KERNELS);
	s->kernels = calloc(v->u.arr.n, sizeof(*s->kernels));
	int *label_lines = calloc(v->u.arr.n, sizeof(*label_lines));
	if (!s->kernels || !label_lines) {
		free(label_lines);
		return cta__json_fail(c, CTA_ENOMEM, v->line, "kernels", "out of memory");
	}
	for (size_t i = 0; i < v->u.arr.n && rc == 0; i++) {
		char path[PATH_BUF];
		cta__json_path_index(path, sizeof(path), "kernels", i);
		/* Counted before parsing, so that a failed kernel's arguments
		 * are freed with the rest. */
		s->nkernels++;
		rc = parse_kernel(c, v->u.arr.items[i], path, s, &s->kernels[i], &label_lines[i]);
	}
	if (rc == 0)
		rc = check_stream_order(c, v, s);
	if (rc == 0)
		rc = finish_labels(c, s, label_lines);
	free(label_lines);
	return rc;
}

/* The string to give cta_device_resolve: a relative path is relative to the
 * scenario's folder, so that a scenario and its model file travel together. */
static int device_ref(const struct cta__json_ctx *c, const struct cta__json *f,
                      struct cta_scenario *s)
{
	const char *slash = strrchr(s->path, '/');
	if (!strchr(s->device, '/') || s->device[0] == '/' || !slash) {
		memcpy(s->device_ref, s->device, sizeof(s->device_ref));
		return 0;
	}
	int dirlen = (int)(slash - s->path);
	int n =
	    snprintf(s->device_ref, sizeof(s->device_ref), "%.*s/%s", dirlen, s->path, s->device);
	if (n < 0 || (size_t)n >= sizeof(s->device_ref))
		return cta__json_fail(c, CTA_ERANGE, f->line, "device",
		                      "the path relative to the scenario's folder is too long");
	return 0;
}

static int build(const struct cta__json_ctx *c, const struct cta__json *root,
                 struct cta_scenario *s)
{
	const struct cta__json *f;
	int64_t x;
	int rc;
	if ((rc = cta__json_want(c, root, "", CTA__JSON_OBJECT)))
		return rc;
	/* The version comes first: fields of a newer format would otherwise
	 * be reported as unknown, which hides the real cause. */
	if ((f = cta__json_get(root, "version"))) {
		if ((rc = cta__json_want_int(c, f, "version", INT64_MIN, INT64_MAX, &x)))
			return rc;
		if (x != CTA_SCENARIO_VERSION)
			return cta__json_fail(c, CTA_EVERSION, f->line, "version",
			                      "unsupported scenario version %s (this ctasim reads "
			                      "version %d)",
			                      f->num_text, CTA_SCENARIO_VERSION);
	}
	if ((rc = cta__json_check_fields(c, root, "", top_fields)))
		return rc;
	if ((rc = want_description(c, root, "")))
		return rc;
	if ((f = cta__json_get(root, "device"))) {
		if ((rc = cta__json_want_string(c, f, "device", 0, s->device, sizeof(s->device))) ||
		    (rc = device_ref(c, f, s)))
			return rc;
		s->device_line = f->line;
	}
	if ((f = cta__json_get(root, "seed"))) {
		if ((rc = cta__json_want_int(c, f, "seed", 0, INT64_MAX, &x)))
			return rc;
		s->seed = (uint64_t)x;
		s->has_seed = 1;
	}
	if ((f = cta__json_get(root, "sm_limit"))) {
		if ((rc = cta__json_want_int(c, f, "sm_limit", 1, CTA_DEVICE_MAX_SMS, &x)))
			return rc;
		s->sm_limit = (unsigned)x;
		s->sm_limit_line = f->line;
	}
	if ((f = cta__json_get(root, "timing_only")) &&
	    (rc = cta__json_want_bool(c, f, "timing_only", &s->timing_only)))
		return rc;
	if ((f = cta__json_get(root, "streams")) && (rc = parse_streams(c, f, s)))
		return rc;
	return parse_kernels(c, root, s);
}

static int from_doc(struct cta_scenario *out, struct cta__json_doc *doc, const char *name,
                    char *err, size_t errlen)
{
	struct cta__json_ctx c = {name, err, errlen};
	out->path = strdup(name);
	int rc = out->path ? 0 : CTA_ENOMEM;
	if (rc && err && errlen)
		snprintf(err, errlen, "%s: out of memory", name);
	if (rc == 0)
		rc = build(&c, cta__json_root(doc), out);
	cta__json_free(doc);
	if (rc)
		cta_scenario_free(out);
	return rc;
}

static const struct cta__json_limits limits = {
    .max_bytes = CTA_SCENARIO_MAX_BYTES,
    .max_depth = 16, /* a scenario nests five deep; more is a mistake */
};

int cta_scenario_parse(struct cta_scenario *out, const char *text, size_t len, const char *name,
                       char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (err && errlen)
		err[0] = '\0';
	if (!name)
		name = "<scenario>";
	struct cta__json_doc *doc;
	int rc = cta__json_parse(&doc, text, len, name, &limits, err, errlen);
	if (rc)
		return rc;
	return from_doc(out, doc, name, err, errlen);
}

int cta_scenario_load(struct cta_scenario *out, const char *path, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (err && errlen)
		err[0] = '\0';
	struct cta__json_doc *doc;
	int rc = cta__json_load(&doc, path, &limits, err, errlen);
	if (rc)
		return rc;
	return from_doc(out, doc, path, err, errlen);
}

int cta_scenario_check_device(const struct cta_scenario *s, const struct cta_device_model *m,
                              char *err, size_t errlen)
{
	struct cta__json_ctx c = {s->path ? s->path : "<scenario>", err, errlen};
	char p[PATH_BUF];
	for (unsigned i = 0; i < s->nstreams; i++) {
		const struct cta_scenario_stream *st = &s->streams[i];
		if (st->priority >= m->priority_greatest && st->priority <= m->priority_least)
			continue;
		cta__json_path_index(p, sizeof(p), "streams", i);
		cta__json_path_member(p, sizeof(p), p, "priority");
		return cta__json_fail(&c, CTA_ERANGE, st->priority_line, p,
		                      "priority %d is outside the range of %s: %d (greatest) to "
		                      "%d (least)",
		                      st->priority, m->name, m->priority_greatest,
		                      m->priority_least);
	}
	if (s->sm_limit > m->sm_count)
		return cta__json_fail(&c, CTA_ERANGE, s->sm_limit_line, "sm_limit",
		                      "%u is more than the %u SMs of %s", s->sm_limit, m->sm_count,
		                      m->name);
	for (unsigned i = 0; i < s->nkernels; i++) {
		const struct cta_scenario_kernel *k = &s->kernels[i];
		if (!k->block_set)
			continue;
		/* At most 1024 * 1024 * 64: no overflow. */
		unsigned threads = k->block[0] * k->block[1] * k->block[2];
		if (threads <= m->max_threads_per_block)
			continue;
		cta__json_path_index(p, sizeof(p), "kernels", i);
		cta__json_path_member(p, sizeof(p), p, "block");
		return cta__json_fail(&c, CTA_ERANGE, k->block_line, p,
		                      "a block of %u threads is more than the %u threads per "
		                      "block of %s",
		                      threads, m->max_threads_per_block, m->name);
	}
	return 0;
}

/* Checks one "NAME=VALUE" against the harness's parameters. */
static int check_arg(const struct cta__json_ctx *c, const struct cta_kernel_info *ki,
                     const char *arg, int line, unsigned kernel)
{
	char name[PATH_BUF];
	size_t n = strcspn(arg, "=");
	snprintf(name, sizeof(name), "%.*s", (int)n, arg);
	size_t np = 0;
	for (; ki->params && ki->params[np].name; np++)
		if (strcmp(ki->params[np].name, name) == 0)
			return 0;
	char p[PATH_BUF];
	cta__json_path_index(p, sizeof(p), "kernels", kernel);
	cta__json_path_member(p, sizeof(p), p, "args");
	cta__json_path_member(p, sizeof(p), p, name);
	if (np == 0)
		return cta__json_fail(c, CTA_ENOTFOUND, line, p, "harness '%s' takes no parameters",
		                      ki->name);
	const char **names = calloc(np + 1, sizeof(*names));
	if (!names)
		return cta__json_fail(c, CTA_ENOMEM, line, p, "out of memory");
	for (size_t i = 0; i < np; i++)
		names[i] = ki->params[i].name;
	const char *sugg = cta__json_suggest(name, names);
	int rc;
	if (sugg) {
		rc = cta__json_fail(c, CTA_ENOTFOUND, line, p,
		                    "harness '%s' has no parameter of this name (did you mean "
		                    "'%s'?)",
		                    ki->name, sugg);
	} else {
		char list[200];
		list_names(list, sizeof(list), names, np);
		rc = cta__json_fail(c, CTA_ENOTFOUND, line, p,
		                    "harness '%s' has no parameter of this name (its parameters: "
		                    "%s)",
		                    ki->name, list);
	}
	free(names);
	return rc;
}

int cta_scenario_check_harnesses(const struct cta_scenario *s, cta_scenario_lookup_fn lookup,
                                 char *err, size_t errlen)
{
	struct cta__json_ctx c = {s->path ? s->path : "<scenario>", err, errlen};
	for (unsigned i = 0; i < s->nkernels; i++) {
		const struct cta_scenario_kernel *k = &s->kernels[i];
		const struct cta_kernel_info *ki = lookup(k->harness);
		if (!ki) {
			char p[PATH_BUF];
			cta__json_path_index(p, sizeof(p), "kernels", i);
			cta__json_path_member(p, sizeof(p), p, "harness");
			return cta__json_fail(&c, CTA_ENOTFOUND, k->harness_line, p,
			                      "unknown harness '%s' (`ctasim list` shows them)",
			                      k->harness);
		}
		for (size_t a = 0; a < k->nargs; a++) {
			int rc = check_arg(&c, ki, k->args[a], k->arg_lines[a], i);
			if (rc)
				return rc;
		}
	}
	return 0;
}
