/* A small strict JSON reader that remembers the line and column of every
 * value and key, so that input files (scenarios, models) can be rejected
 * with "FILE:LINE: field 'a.b[2]': what is wrong". Internal, not public. */
#ifndef CTASIM_UTIL_JSON_H
#define CTASIM_UTIL_JSON_H

#include <stddef.h>
#include <stdint.h>

enum cta__json_type {
	CTA__JSON_NULL = 0,
	CTA__JSON_BOOL,
	CTA__JSON_INT,    /* an integer token that fits int64_t exactly */
	CTA__JSON_DOUBLE, /* any other number */
	CTA__JSON_STRING,
	CTA__JSON_ARRAY,
	CTA__JSON_OBJECT,
};

struct cta__json_member;

/* One value. Everything lives in the document's arena and is read-only for
 * users; strings are NUL-terminated copies (len excludes the NUL, and a
 * string may hold "\u0000", which is why len is kept). */
struct cta__json {
	enum cta__json_type type;
	int line, col; /* 1-based; columns count characters, not bytes */
	union {
		int b;     /* BOOL */
		int64_t i; /* INT */
		double d;  /* DOUBLE */
		struct {
			const char *s;
			size_t len;
		} str; /* STRING */
		struct {
			const struct cta__json *const *items;
			size_t n;
		} arr; /* ARRAY */
		struct {
			const struct cta__json_member *m;
			size_t n;
		} obj; /* OBJECT, members in file order */
	} u;
	/* For INT and DOUBLE, the number exactly as written, so that values
	 * can be passed on as text without a round trip through double. */
	const char *num_text;
};

struct cta__json_member {
	const char *key;
	size_t keylen;
	int line, col; /* of the key */
	const struct cta__json *value;
};

/* Limits that keep hostile input from costing more than a bounded amount. */
struct cta__json_limits {
	size_t max_bytes;   /* input size; 0: 16 MiB */
	unsigned max_depth; /* nesting of arrays and objects; 0: 64 */
};

struct cta__json_doc;

/* Parses text[0..len). file names the input in messages. On error returns
 * CTA_EPARSE (or CTA_ERANGE for a limit, CTA_ENOMEM) and writes
 * "FILE:LINE:COL: what is wrong" into err. Duplicate keys are an error. */
int cta__json_parse(struct cta__json_doc **out, const char *text, size_t len, const char *file,
                    const struct cta__json_limits *lim, char *err, size_t errlen);
/* Reads and parses a file (CTA_EIO with "FILE: reason" when unreadable). */
int cta__json_load(struct cta__json_doc **out, const char *path, const struct cta__json_limits *lim,
                   char *err, size_t errlen);
/* Accepts NULL. */
void cta__json_free(struct cta__json_doc *d);
const struct cta__json *cta__json_root(const struct cta__json_doc *d);
const char *cta__json_file(const struct cta__json_doc *d);

/* "a string", "an integer", ... for messages. */
const char *cta__json_type_name(enum cta__json_type t);

/* Member of an object by key (NULL when absent or when obj is not an
 * object). */
const struct cta__json *cta__json_get(const struct cta__json *obj, const char *key);

/* ---- checked access with messages -------------------------------------
 * Every function below writes "FILE:LINE: field 'PATH': what is wrong" into
 * err on failure and returns a negative CTA_E* code. PATH is the field's
 * full name ("kernels[2].priority"), built with cta__json_path_*. */

/* Message context: the file name and the error buffer. */
struct cta__json_ctx {
	const char *file;
	char *err;
	size_t errlen;
};

/* Formats "FILE:LINE: field 'PATH': ..." into ctx->err; returns code. */
int cta__json_fail(const struct cta__json_ctx *c, int code, int line, const char *path,
                   const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

/* Builds "parent.key" (or "key" at the root) and "parent[i]" into buf,
 * replacing unprintable key bytes so messages stay one clean line. */
void cta__json_path_member(char *buf, size_t n, const char *parent, const char *key);
void cta__json_path_index(char *buf, size_t n, const char *parent, size_t i);

/* Type checks: v must be of the type, else "expected X, got Y". */
int cta__json_want(const struct cta__json_ctx *c, const struct cta__json *v, const char *path,
                   enum cta__json_type t);
/* An integer in [min, max]. Integral doubles (1e6) are accepted when they
 * are exact. */
int cta__json_want_int(const struct cta__json_ctx *c, const struct cta__json *v, const char *path,
                       int64_t min, int64_t max, int64_t *out);
/* Any number. */
int cta__json_want_double(const struct cta__json_ctx *c, const struct cta__json *v,
                          const char *path, double *out);
int cta__json_want_bool(const struct cta__json_ctx *c, const struct cta__json *v, const char *path,
                        int *out);
/* A non-empty string without NUL bytes that fits in buf (n bytes with the
 * NUL). allow_empty lets "" through. */
int cta__json_want_string(const struct cta__json_ctx *c, const struct cta__json *v,
                          const char *path, int allow_empty, char *buf, size_t n);

/* Rejects members of obj whose key is not in known (NULL-terminated),
 * naming the first unknown one and, where one is close, the known name
 * that was probably meant. */
int cta__json_check_fields(const struct cta__json_ctx *c, const struct cta__json *obj,
                           const char *path, const char *const *known);

/* The known name closest to name by edit distance, ignoring case, when it
 * is close enough to be a likely typo; else NULL. */
const char *cta__json_suggest(const char *name, const char *const *known);

#endif
