/* The JSON reader behind every ctasim input file. It exists because the
 * well-kept C JSON libraries in Debian (jansson, cJSON, json-c) report a
 * position only for syntax errors, never for values, and our input errors
 * must name the line of the offending field. Strict RFC 8259, no comments. */
#include "util/json.h"

#include <ctype.h>
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "ctasim/errors.h"

#define DEFAULT_MAX_BYTES ((size_t)16 << 20)
#define DEFAULT_MAX_DEPTH 64u

/* ---- arena --------------------------------------------------------------
 * Every node, key and string of a document lives in a few large blocks that
 * are freed together: freeing needs no walk of the tree (no recursion), and
 * a million small values cost a few dozen mallocs. */

#define ARENA_ALIGN       16u
#define ARENA_BLOCK_BYTES ((size_t)64 << 10)

struct arena_block {
	struct arena_block *next;
	size_t used, cap;
	_Alignas(ARENA_ALIGN) unsigned char data[];
};

struct cta__json_doc {
	struct arena_block *blocks;
	const struct cta__json *root;
	char *file;
};

static void *arena_alloc(struct cta__json_doc *d, size_t n)
{
	struct arena_block *b = d->blocks;
	n = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	if (n == 0)
		n = ARENA_ALIGN;
	if (!b || b->cap - b->used < n) {
		size_t cap = n > ARENA_BLOCK_BYTES ? n : ARENA_BLOCK_BYTES;
		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->used = 0;
		b->cap = cap;
		/* A block made for one oversized object goes behind the current
		 * one, so the room left in the current block is not lost. */
		if (d->blocks && n > ARENA_BLOCK_BYTES) {
			b->next = d->blocks->next;
			d->blocks->next = b;
		} else {
			b->next = d->blocks;
			d->blocks = b;
		}
	}
	void *p = b->data + b->used;
	b->used += n;
	return p;
}

static char *arena_strndup(struct cta__json_doc *d, const char *s, size_t n)
{
	char *p = arena_alloc(d, n + 1);
	if (p) {
		memcpy(p, s, n);
		p[n] = '\0';
	}
	return p;
}

void cta__json_free(struct cta__json_doc *d)
{
	if (!d)
		return;
	struct arena_block *b = d->blocks;
	while (b) {
		struct arena_block *next = b->next;
		free(b);
		b = next;
	}
	free(d->file);
	free(d);
}

const struct cta__json *cta__json_root(const struct cta__json_doc *d)
{
	return d->root;
}

const char *cta__json_file(const struct cta__json_doc *d)
{
	return d->file;
}

/* ---- parser ------------------------------------------------------------- */

struct parser {
	const char *p, *end;
	int line, col;
	unsigned depth, max_depth;
	struct cta__json_doc *doc;
	const char *file;
	char *err;
	size_t errlen;
	int code; /* 0 until the first error */
	/* Scratch for decoding strings, reused across strings. */
	char *buf;
	size_t buflen, bufcap;
};

static void perr_at(struct parser *ps, int code, int line, int col, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;

static void perr_at(struct parser *ps, int code, int line, int col, const char *fmt, ...)
{
	if (ps->code)
		return; /* the first error is the one worth reporting */
	ps->code = code;
	if (!ps->err || ps->errlen == 0)
		return;
	int n = snprintf(ps->err, ps->errlen, "%s:%d:%d: ", ps->file, line, col);
	if (n < 0 || (size_t)n >= ps->errlen)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(ps->err + n, ps->errlen - (size_t)n, fmt, ap);
	va_end(ap);
}

#define perr(ps, ...) perr_at((ps), CTA_EPARSE, (ps)->line, (ps)->col, __VA_ARGS__)

static void oom(struct parser *ps)
{
	perr_at(ps, CTA_ENOMEM, ps->line, ps->col, "out of memory");
}

/* Consumes one byte, keeping line and column. Columns count characters:
 * UTF-8 continuation bytes do not move the column. */
static inline void advance(struct parser *ps)
{
	unsigned char c = (unsigned char)*ps->p++;
	if (c == '\n') {
		ps->line++;
		ps->col = 1;
	} else if ((c & 0xC0) != 0x80) {
		ps->col++;
	}
}

static void skip_ws(struct parser *ps)
{
	while (ps->p < ps->end) {
		char c = *ps->p;
		if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			break;
		advance(ps);
	}
}

/* Describes the byte at the cursor for a message: 'x' or byte 0xNN. */
static const char *describe_here(const struct parser *ps, char *buf, size_t n)
{
	if (ps->p >= ps->end)
		return "end of input";
	unsigned char c = (unsigned char)*ps->p;
	if (c >= 0x21 && c < 0x7F)
		snprintf(buf, n, "'%c'", c);
	else if (c == ' ')
		snprintf(buf, n, "a space");
	else
		snprintf(buf, n, "byte 0x%02X", c);
	return buf;
}

static struct cta__json *new_node(struct parser *ps, enum cta__json_type t, int line, int col)
{
	struct cta__json *v = arena_alloc(ps->doc, sizeof(*v));
	if (!v) {
		oom(ps);
		return NULL;
	}
	memset(v, 0, sizeof(*v));
	v->type = t;
	v->line = line;
	v->col = col;
	return v;
}

static int buf_put(struct parser *ps, const char *s, size_t n)
{
	if (ps->bufcap - ps->buflen < n) {
		size_t cap = ps->bufcap ? ps->bufcap : 256;
		while (cap - ps->buflen < n)
			cap *= 2;
		char *nb = realloc(ps->buf, cap);
		if (!nb) {
			oom(ps);
			return -1;
		}
		ps->buf = nb;
		ps->bufcap = cap;
	}
	memcpy(ps->buf + ps->buflen, s, n);
	ps->buflen += n;
	return 0;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Reads the 4 hex digits of a \u escape (the cursor is on the first). */
static long read_hex4(struct parser *ps)
{
	long v = 0;
	for (int i = 0; i < 4; i++) {
		int h = ps->p < ps->end ? hexval(*ps->p) : -1;
		if (h < 0) {
			perr(ps, "expected 4 hex digits after \\u");
			return -1;
		}
		v = v * 16 + h;
		advance(ps);
	}
	return v;
}

static int put_utf8(struct parser *ps, unsigned long cp)
{
	char o[4];
	size_t n;
	if (cp < 0x80) {
		o[0] = (char)cp;
		n = 1;
	} else if (cp < 0x800) {
		o[0] = (char)(0xC0 | (cp >> 6));
		o[1] = (char)(0x80 | (cp & 0x3F));
		n = 2;
	} else if (cp < 0x10000) {
		o[0] = (char)(0xE0 | (cp >> 12));
		o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
		o[2] = (char)(0x80 | (cp & 0x3F));
		n = 3;
	} else {
		o[0] = (char)(0xF0 | (cp >> 18));
		o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
		o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
		o[3] = (char)(0x80 | (cp & 0x3F));
		n = 4;
	}
	return buf_put(ps, o, n);
}

/* Length of the well-formed UTF-8 sequence at p (lead byte >= 0x80), or 0
 * when it is malformed: overlong forms, surrogates and code points past
 * U+10FFFF are rejected as the Unicode standard requires. */
static size_t utf8_seq(const unsigned char *p, const unsigned char *end)
{
	unsigned char c = p[0];
	size_t n;
	unsigned char lo = 0x80, hi = 0xBF;
	if (c >= 0xC2 && c <= 0xDF) {
		n = 2;
	} else if (c >= 0xE0 && c <= 0xEF) {
		n = 3;
		if (c == 0xE0)
			lo = 0xA0;
		else if (c == 0xED)
			hi = 0x9F;
	} else if (c >= 0xF0 && c <= 0xF4) {
		n = 4;
		if (c == 0xF0)
			lo = 0x90;
		else if (c == 0xF4)
			hi = 0x8F;
	} else {
		return 0;
	}
	if ((size_t)(end - p) < n)
		return 0;
	if (p[1] < lo || p[1] > hi)
		return 0;
	for (size_t i = 2; i < n; i++)
		if ((p[i] & 0xC0) != 0x80)
			return 0;
	return n;
}

/* Parses a string at the cursor (on the opening quote) into ps->buf. */
static int parse_string_raw(struct parser *ps)
{
	int sline = ps->line, scol = ps->col;
	advance(ps); /* opening quote */
	ps->buflen = 0;
	for (;;) {
		if (ps->p >= ps->end) {
			perr_at(ps, CTA_EPARSE, sline, scol,
			        "unterminated string (end of input before the closing '\"')");
			return -1;
		}
		unsigned char c = (unsigned char)*ps->p;
		if (c == '"') {
			advance(ps);
			return 0;
		}
		if (c == '\n') {
			perr_at(ps, CTA_EPARSE, sline, scol,
			        "unterminated string (a line break inside a string must be "
			        "written \\n)");
			return -1;
		}
		if (c < 0x20) {
			perr(ps, "control character 0x%02X in a string (write it as \\u%04X)", c,
			     c);
			return -1;
		}
		if (c == '\\') {
			int eline = ps->line, ecol = ps->col;
			advance(ps);
			if (ps->p >= ps->end) {
				perr_at(ps, CTA_EPARSE, sline, scol, "unterminated string");
				return -1;
			}
			char e = *ps->p;
			const char *simple = NULL;
			switch (e) {
			case '"':
				simple = "\"";
				break;
			case '\\':
				simple = "\\";
				break;
			case '/':
				simple = "/";
				break;
			case 'b':
				simple = "\b";
				break;
			case 'f':
				simple = "\f";
				break;
			case 'n':
				simple = "\n";
				break;
			case 'r':
				simple = "\r";
				break;
			case 't':
				simple = "\t";
				break;
			case 'u':
				break;
			default: {
				char d[16];
				perr_at(ps, CTA_EPARSE, eline, ecol,
				        "invalid escape: backslash followed by %s",
				        describe_here(ps, d, sizeof(d)));
				return -1;
			}
			}
			advance(ps);
			if (simple) {
				if (buf_put(ps, simple, 1))
					return -1;
				continue;
			}
			long cp = read_hex4(ps);
			if (cp < 0)
				return -1;
			if (cp >= 0xDC00 && cp <= 0xDFFF) {
				perr_at(
				    ps, CTA_EPARSE, eline, ecol,
				    "\\u%04lX is a low surrogate without a high surrogate before "
				    "it",
				    cp);
				return -1;
			}
			if (cp >= 0xD800 && cp <= 0xDBFF) {
				if (ps->end - ps->p < 2 || ps->p[0] != '\\' || ps->p[1] != 'u') {
					perr_at(ps, CTA_EPARSE, eline, ecol,
					        "\\u%04lX is a high surrogate not followed by a "
					        "\\u low surrogate",
					        cp);
					return -1;
				}
				advance(ps);
				advance(ps);
				long lo = read_hex4(ps);
				if (lo < 0)
					return -1;
				if (lo < 0xDC00 || lo > 0xDFFF) {
					perr_at(ps, CTA_EPARSE, eline, ecol,
					        "\\u%04lX is a high surrogate not followed by a "
					        "low surrogate",
					        cp);
					return -1;
				}
				cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
			}
			if (put_utf8(ps, (unsigned long)cp))
				return -1;
			continue;
		}
		if (c >= 0x80) {
			size_t n =
			    utf8_seq((const unsigned char *)ps->p, (const unsigned char *)ps->end);
			if (n == 0) {
				perr(ps, "invalid UTF-8 byte 0x%02X in a string", c);
				return -1;
			}
			if (buf_put(ps, ps->p, n))
				return -1;
			for (size_t i = 0; i < n; i++)
				advance(ps);
			continue;
		}
		/* A run of plain ASCII is copied at once. */
		const char *s = ps->p;
		while (ps->p < ps->end) {
			unsigned char d = (unsigned char)*ps->p;
			if (d == '"' || d == '\\' || d < 0x20 || d >= 0x80)
				break;
			ps->p++;
			ps->col++;
		}
		if (buf_put(ps, s, (size_t)(ps->p - s)))
			return -1;
	}
}

static const struct cta__json *parse_value(struct parser *ps);

static const struct cta__json *parse_string(struct parser *ps)
{
	struct cta__json *v = new_node(ps, CTA__JSON_STRING, ps->line, ps->col);
	if (!v || parse_string_raw(ps))
		return NULL;
	v->u.str.s = arena_strndup(ps->doc, ps->buf ? ps->buf : "", ps->buflen);
	v->u.str.len = ps->buflen;
	if (!v->u.str.s) {
		oom(ps);
		return NULL;
	}
	return v;
}

static int is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static const struct cta__json *parse_number(struct parser *ps)
{
	int line = ps->line, col = ps->col;
	const char *s = ps->p;
	int neg = 0, integral = 1;
	if (*ps->p == '-') {
		neg = 1;
		advance(ps);
	}
	if (ps->p >= ps->end || !is_digit(*ps->p)) {
		perr(ps, "expected a digit after '-'");
		return NULL;
	}
	if (*ps->p == '0') {
		advance(ps);
		if (ps->p < ps->end && is_digit(*ps->p)) {
			perr_at(ps, CTA_EPARSE, line, col, "numbers must not have leading zeros");
			return NULL;
		}
	} else {
		while (ps->p < ps->end && is_digit(*ps->p))
			advance(ps);
	}
	if (ps->p < ps->end && *ps->p == '.') {
		integral = 0;
		advance(ps);
		if (ps->p >= ps->end || !is_digit(*ps->p)) {
			perr(ps, "expected a digit after '.'");
			return NULL;
		}
		while (ps->p < ps->end && is_digit(*ps->p))
			advance(ps);
	}
	if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
		integral = 0;
		advance(ps);
		if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
			advance(ps);
		if (ps->p >= ps->end || !is_digit(*ps->p)) {
			perr(ps, "expected a digit in the exponent");
			return NULL;
		}
		while (ps->p < ps->end && is_digit(*ps->p))
			advance(ps);
	}
	size_t n = (size_t)(ps->p - s);
	struct cta__json *v = new_node(ps, CTA__JSON_INT, line, col);
	char *text = v ? arena_strndup(ps->doc, s, n) : NULL;
	if (!text) {
		oom(ps);
		return NULL;
	}
	v->num_text = text;
	if (integral) {
		/* Exact int64 when it fits: seeds and nanosecond times must not
		 * pass through a double. */
		uint64_t acc = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
		int fits = 1;
		for (const char *q = text + neg; *q; q++) {
			unsigned dgt = (unsigned)(*q - '0');
			if (acc > (lim - dgt) / 10) {
				fits = 0;
				break;
			}
			acc = acc * 10 + dgt;
		}
		if (fits) {
			v->u.i = neg ? (acc == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)acc)
			             : (int64_t)acc;
			return v;
		}
	}
	v->type = CTA__JSON_DOUBLE;
	/* strtod follows the locale's decimal point; JSON's is always '.'. */
	char *tmp = malloc(n + 1);
	if (!tmp) {
		oom(ps);
		return NULL;
	}
	memcpy(tmp, text, n + 1);
	const char *dp = localeconv()->decimal_point;
	if (dp && dp[0] && dp[0] != '.' && dp[1] == '\0') {
		char *dot = strchr(tmp, '.');
		if (dot)
			*dot = dp[0];
	}
	double d = strtod(tmp, NULL);
	free(tmp);
	if (isinf(d)) {
		perr_at(ps, CTA_EPARSE, line, col, "number %.40s%s is too large", text,
		        n > 40 ? "..." : "");
		return NULL;
	}
	v->u.d = d;
	return v;
}

static const struct cta__json *parse_literal(struct parser *ps)
{
	static const struct {
		const char *word;
		enum cta__json_type t;
		int b;
	} lits[] = {
	    {"true", CTA__JSON_BOOL, 1}, {"false", CTA__JSON_BOOL, 0}, {"null", CTA__JSON_NULL, 0}};
	for (size_t i = 0; i < sizeof(lits) / sizeof(lits[0]); i++) {
		size_t n = strlen(lits[i].word);
		if ((size_t)(ps->end - ps->p) >= n && memcmp(ps->p, lits[i].word, n) == 0 &&
		    ((size_t)(ps->end - ps->p) == n || !isalnum((unsigned char)ps->p[n]))) {
			struct cta__json *v = new_node(ps, lits[i].t, ps->line, ps->col);
			if (!v)
				return NULL;
			v->u.b = lits[i].b;
			for (size_t k = 0; k < n; k++)
				advance(ps);
			return v;
		}
	}
	const char *q = ps->p;
	while (q < ps->end && q - ps->p < 20 && isalnum((unsigned char)*q))
		q++;
	perr(ps,
	     "unexpected word '%.*s' (expected a value: true, false, null, a number, a "
	     "string, an array or an object)",
	     (int)(q - ps->p), ps->p);
	return NULL;
}

/* Growable list of pointers or members, used while a container is open. */
struct vec {
	void *items;
	size_t n, cap, size;
};

static void *vec_push(struct parser *ps, struct vec *v)
{
	if (v->n == v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 8;
		void *ni = realloc(v->items, cap * v->size);
		if (!ni) {
			oom(ps);
			return NULL;
		}
		v->items = ni;
		v->cap = cap;
	}
	return (char *)v->items + v->size * v->n++;
}

static int enter(struct parser *ps)
{
	if (ps->depth >= ps->max_depth) {
		perr_at(ps, CTA_ERANGE, ps->line, ps->col, "nesting deeper than %u levels",
		        ps->max_depth);
		return -1;
	}
	ps->depth++;
	return 0;
}

/* After an array item or object member: 1 at a ',' (more follow), 0 at the
 * container's closing character, -1 (error reported) otherwise. v is the
 * container, whose position the "not closed" error names. */
static int after_item(struct parser *ps, const struct cta__json *v, char close, const char *kind,
                      const char *where)
{
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == ',') {
		advance(ps);
		return 1;
	}
	if (ps->p < ps->end && *ps->p == close) {
		advance(ps);
		return 0;
	}
	if (ps->p >= ps->end) {
		perr_at(ps, CTA_EPARSE, v->line, v->col,
		        "%s is not closed (end of input before its '%c')", kind, close);
	} else if (*ps->p == '/') {
		perr(ps, "comments are not allowed in JSON");
	} else {
		char d[16];
		perr(ps, "expected ',' or '%c' %s, got %s", close, where,
		     describe_here(ps, d, sizeof(d)));
	}
	return -1;
}

static const struct cta__json *parse_array(struct parser *ps)
{
	struct cta__json *v = new_node(ps, CTA__JSON_ARRAY, ps->line, ps->col);
	if (!v || enter(ps))
		return NULL;
	advance(ps); /* '[' */
	struct vec items = {.size = sizeof(const struct cta__json *)};
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == ']') {
		advance(ps);
		goto done;
	}
	for (;;) {
		skip_ws(ps);
		if (ps->p >= ps->end) {
			perr_at(ps, CTA_EPARSE, v->line, v->col,
			        "array is not closed (end of input before its ']')");
			goto fail;
		}
		if (*ps->p == ']') {
			perr(ps, "trailing comma before ']'");
			goto fail;
		}
		const struct cta__json *e = parse_value(ps);
		if (!e)
			goto fail;
		const struct cta__json **slot = vec_push(ps, &items);
		if (!slot)
			goto fail;
		*slot = e;
		int next = after_item(ps, v, ']', "array", "in an array");
		if (next > 0)
			continue;
		if (next == 0)
			break;
		goto fail;
	}
done:
	if (items.n) {
		const struct cta__json **arr = arena_alloc(ps->doc, items.n * items.size);
		if (!arr) {
			oom(ps);
			goto fail;
		}
		memcpy(arr, items.items, items.n * items.size);
		v->u.arr.items = arr;
	}
	v->u.arr.n = items.n;
	free(items.items);
	ps->depth--;
	return v;
fail:
	free(items.items);
	return NULL;
}

struct keyref {
	const struct cta__json_member *m;
	size_t idx;
};

static int keyref_cmp(const void *a, const void *b)
{
	const struct keyref *x = a, *y = b;
	size_t n = x->m->keylen < y->m->keylen ? x->m->keylen : y->m->keylen;
	int c = memcmp(x->m->key, y->m->key, n);
	if (c)
		return c;
	if (x->m->keylen != y->m->keylen)
		return x->m->keylen < y->m->keylen ? -1 : 1;
	return x->idx < y->idx ? -1 : (x->idx > y->idx);
}

static int same_key(const struct cta__json_member *a, const struct cta__json_member *b)
{
	return a->keylen == b->keylen && memcmp(a->key, b->key, a->keylen) == 0;
}

/* Finds the first key (in file order) that repeats an earlier one. Sorting
 * keeps this O(n log n), so an object with a million keys stays cheap. */
static int check_duplicates(struct parser *ps, const struct cta__json_member *m, size_t n)
{
	if (n < 2)
		return 0;
	struct keyref *r = malloc(n * sizeof(*r));
	if (!r) {
		oom(ps);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		r[i].m = &m[i];
		r[i].idx = i;
	}
	qsort(r, n, sizeof(*r), keyref_cmp);
	/* Equal keys are now adjacent, each group in file order: the second of
	 * a group is its first repeat, and the earliest such repeat is the one
	 * to report. */
	size_t dup = n, first = n;
	for (size_t i = 1; i < n; i++) {
		if (!same_key(r[i].m, r[i - 1].m))
			continue;
		if (i >= 2 && same_key(r[i - 1].m, r[i - 2].m))
			continue;
		if (r[i].idx < dup) {
			dup = r[i].idx;
			first = r[i - 1].idx;
		}
	}
	free(r);
	if (dup == n)
		return 0;
	char key[80];
	cta__json_path_member(key, sizeof(key), "", m[dup].key);
	perr_at(ps, CTA_EPARSE, m[dup].line, m[dup].col,
	        "duplicate key '%s' (first at line %d column %d)", key, m[first].line,
	        m[first].col);
	return -1;
}

static const struct cta__json *parse_object(struct parser *ps)
{
	struct cta__json *v = new_node(ps, CTA__JSON_OBJECT, ps->line, ps->col);
	if (!v || enter(ps))
		return NULL;
	advance(ps); /* '{' */
	struct vec mem = {.size = sizeof(struct cta__json_member)};
	skip_ws(ps);
	if (ps->p < ps->end && *ps->p == '}') {
		advance(ps);
		goto done;
	}
	for (;;) {
		skip_ws(ps);
		if (ps->p >= ps->end) {
			perr_at(ps, CTA_EPARSE, v->line, v->col,
			        "object is not closed (end of input before its '}')");
			goto fail;
		}
		if (*ps->p != '"') {
			char d[16];
			if (*ps->p == '}')
				perr(ps, "trailing comma before '}'");
			else if (*ps->p == '/')
				perr(ps, "comments are not allowed in JSON");
			else if (*ps->p == '\'')
				perr(ps, "keys must be in double quotes, not single quotes");
			else
				perr(ps, "expected a key in double quotes, got %s",
				     describe_here(ps, d, sizeof(d)));
			goto fail;
		}
		int kline = ps->line, kcol = ps->col;
		if (parse_string_raw(ps))
			goto fail;
		struct cta__json_member *m = vec_push(ps, &mem);
		if (!m)
			goto fail;
		m->key = arena_strndup(ps->doc, ps->buf ? ps->buf : "", ps->buflen);
		m->keylen = ps->buflen;
		m->line = kline;
		m->col = kcol;
		m->value = NULL;
		if (!m->key) {
			oom(ps);
			goto fail;
		}
		skip_ws(ps);
		if (ps->p >= ps->end || *ps->p != ':') {
			char d[16];
			perr(ps, "expected ':' after a key, got %s",
			     describe_here(ps, d, sizeof(d)));
			goto fail;
		}
		advance(ps);
		const struct cta__json *val = parse_value(ps);
		if (!val)
			goto fail;
		/* vec_push may have moved the array; index the last member anew. */
		((struct cta__json_member *)mem.items)[mem.n - 1].value = val;
		int next = after_item(ps, v, '}', "object", "after an object member");
		if (next > 0)
			continue;
		if (next == 0)
			break;
		goto fail;
	}
done:
	if (mem.n) {
		struct cta__json_member *ms = arena_alloc(ps->doc, mem.n * mem.size);
		if (!ms) {
			oom(ps);
			goto fail;
		}
		memcpy(ms, mem.items, mem.n * mem.size);
		v->u.obj.m = ms;
		if (check_duplicates(ps, ms, mem.n))
			goto fail;
	}
	v->u.obj.n = mem.n;
	free(mem.items);
	ps->depth--;
	return v;
fail:
	free(mem.items);
	return NULL;
}

/* Recursion is bounded by max_depth (two frames per level), so hostile
 * nesting is an error, never a stack overflow. */
static const struct cta__json *parse_value(struct parser *ps)
{
	skip_ws(ps);
	if (ps->p >= ps->end) {
		perr(ps, "unexpected end of input (expected a value)");
		return NULL;
	}
	char c = *ps->p;
	switch (c) {
	case '{':
		return parse_object(ps);
	case '[':
		return parse_array(ps);
	case '"':
		return parse_string(ps);
	case '-':
		return parse_number(ps);
	case '/':
		perr(ps, "comments are not allowed in JSON");
		return NULL;
	case '\'':
		perr(ps, "strings must be in double quotes, not single quotes");
		return NULL;
	default:
		if (is_digit(c))
			return parse_number(ps);
		if (isalpha((unsigned char)c))
			return parse_literal(ps);
		{
			char d[16];
			perr(ps, "unexpected %s (expected a value)",
			     describe_here(ps, d, sizeof(d)));
		}
		return NULL;
	}
}

int cta__json_parse(struct cta__json_doc **out, const char *text, size_t len, const char *file,
                    const struct cta__json_limits *lim, char *err, size_t errlen)
{
	*out = NULL;
	if (err && errlen)
		err[0] = '\0';
	if (!file)
		file = "<input>";
	size_t max_bytes = lim && lim->max_bytes ? lim->max_bytes : DEFAULT_MAX_BYTES;
	struct parser ps = {
	    .p = text,
	    .end = text + len,
	    .line = 1,
	    .col = 1,
	    .max_depth = lim && lim->max_depth ? lim->max_depth : DEFAULT_MAX_DEPTH,
	    .file = file,
	    .err = err,
	    .errlen = errlen,
	};
	if (len > max_bytes) {
		perr_at(&ps, CTA_ERANGE, 1, 1, "input is %zu bytes, more than the limit of %zu",
		        len, max_bytes);
		return ps.code;
	}
	struct cta__json_doc *d = calloc(1, sizeof(*d));
	if (d)
		d->file = strdup(file);
	if (!d || !d->file) {
		cta__json_free(d);
		oom(&ps);
		return ps.code;
	}
	ps.doc = d;
	/* A UTF-8 byte order mark is harmless; editors on some systems add one. */
	if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0)
		ps.p += 3;
	skip_ws(&ps);
	if (ps.p >= ps.end) {
		perr(&ps, "empty input (expected a JSON value)");
	} else {
		const struct cta__json *root = parse_value(&ps);
		if (root) {
			skip_ws(&ps);
			if (ps.p < ps.end) {
				char dsc[16];
				perr(&ps, "unexpected %s after the end of the JSON value",
				     describe_here(&ps, dsc, sizeof(dsc)));
			}
			d->root = root;
		}
	}
	free(ps.buf);
	if (ps.code) {
		cta__json_free(d);
		return ps.code;
	}
	*out = d;
	return 0;
}

int cta__json_load(struct cta__json_doc **out, const char *path, const struct cta__json_limits *lim,
                   char *err, size_t errlen)
{
	*out = NULL;
	size_t max_bytes = lim && lim->max_bytes ? lim->max_bytes : DEFAULT_MAX_BYTES;
	FILE *f = fopen(path, "rb");
	if (!f) {
		if (err && errlen)
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return errno == ENOENT ? CTA_ENOTFOUND : CTA_EIO;
	}
	struct stat st;
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(f);
		if (err && errlen)
			snprintf(err, errlen, "%s: is a directory, not a file", path);
		return CTA_EINVAL;
	}
	/* Read at most one byte past the limit: enough to know it is too big
	 * without reading a file of any size. */
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	int rc = 0;
	while (buf) {
		if (n == cap) {
			size_t ncap = cap * 2;
			if (ncap > max_bytes + 1)
				ncap = max_bytes + 1;
			if (ncap <= cap)
				break;
			char *nb = realloc(buf, ncap);
			if (!nb) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = nb;
			cap = ncap;
		}
		size_t got = fread(buf + n, 1, cap - n, f);
		n += got;
		if (got == 0)
			break;
	}
	if (!buf) {
		rc = CTA_ENOMEM;
		if (err && errlen)
			snprintf(err, errlen, "%s: out of memory", path);
	} else if (ferror(f)) {
		rc = CTA_EIO;
		if (err && errlen)
			snprintf(err, errlen, "%s: read error", path);
	} else if (n > max_bytes) {
		rc = CTA_ERANGE;
		if (err && errlen)
			snprintf(err, errlen, "%s: file is larger than the limit of %zu bytes",
			         path, max_bytes);
	}
	fclose(f);
	if (rc == 0)
		rc = cta__json_parse(out, buf, n, path, lim, err, errlen);
	free(buf);
	return rc;
}

/* ---- access ------------------------------------------------------------- */

const char *cta__json_type_name(enum cta__json_type t)
{
	switch (t) {
	case CTA__JSON_NULL:
		return "null";
	case CTA__JSON_BOOL:
		return "a boolean";
	case CTA__JSON_INT:
		return "an integer";
	case CTA__JSON_DOUBLE:
		return "a number";
	case CTA__JSON_STRING:
		return "a string";
	case CTA__JSON_ARRAY:
		return "an array";
	case CTA__JSON_OBJECT:
		return "an object";
	}
	return "a value";
}

const struct cta__json *cta__json_get(const struct cta__json *obj, const char *key)
{
	if (!obj || obj->type != CTA__JSON_OBJECT)
		return NULL;
	size_t n = strlen(key);
	for (size_t i = 0; i < obj->u.obj.n; i++) {
		const struct cta__json_member *m = &obj->u.obj.m[i];
		if (m->keylen == n && memcmp(m->key, key, n) == 0)
			return m->value;
	}
	return NULL;
}

int cta__json_fail(const struct cta__json_ctx *c, int code, int line, const char *path,
                   const char *fmt, ...)
{
	if (!c->err || c->errlen == 0)
		return code;
	int n;
	if (path && path[0])
		n = snprintf(c->err, c->errlen, "%s:%d: field '%s': ", c->file, line, path);
	else
		n = snprintf(c->err, c->errlen, "%s:%d: ", c->file, line);
	if (n < 0 || (size_t)n >= c->errlen)
		return code;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return code;
}

/* Appends s to buf at *len with unprintable bytes shown as '?', truncating
 * with "..." when it does not fit. */
static void append_clean(char *buf, size_t n, size_t *len, const char *s)
{
	for (; *s; s++) {
		if (*len + 4 >= n) {
			if (n >= 4) {
				memcpy(buf + (n > 4 ? n - 4 : 0), "...", 4);
				*len = n - 1;
			}
			return;
		}
		unsigned char ch = (unsigned char)*s;
		buf[(*len)++] = (ch < 0x20 || ch == 0x7F || ch == '\'') ? '?' : (char)ch;
		buf[*len] = '\0';
	}
}

void cta__json_path_member(char *buf, size_t n, const char *parent, const char *key)
{
	if (n == 0)
		return;
	/* parent may be buf itself: extending a path in place is common. */
	size_t len = 0;
	if (parent == buf) {
		len = strlen(buf);
	} else {
		buf[0] = '\0';
		append_clean(buf, n, &len, parent ? parent : "");
	}
	if (len)
		append_clean(buf, n, &len, ".");
	append_clean(buf, n, &len, key);
}

void cta__json_path_index(char *buf, size_t n, const char *parent, size_t i)
{
	if (n == 0)
		return;
	char idx[32];
	size_t len = 0;
	snprintf(idx, sizeof(idx), "[%zu]", i);
	if (parent == buf) {
		len = strlen(buf);
	} else {
		buf[0] = '\0';
		append_clean(buf, n, &len, parent ? parent : "");
	}
	append_clean(buf, n, &len, idx);
}

static int missing(const struct cta__json_ctx *c, const char *path)
{
	/* Callers pass NULL for a value that is absent; the getters are
	 * meant for present values, so this is the caller's mistake. */
	return cta__json_fail(c, CTA_EINVAL, 0, path, "internal error: no value");
}

int cta__json_want(const struct cta__json_ctx *c, const struct cta__json *v, const char *path,
                   enum cta__json_type t)
{
	if (!v)
		return missing(c, path);
	if (v->type == t)
		return 0;
	return cta__json_fail(c, CTA_EPARSE, v->line, path, "expected %s, got %s",
	                      cta__json_type_name(t), cta__json_type_name(v->type));
}

int cta__json_want_int(const struct cta__json_ctx *c, const struct cta__json *v, const char *path,
                       int64_t min, int64_t max, int64_t *out)
{
	if (!v)
		return missing(c, path);
	int64_t x;
	if (v->type == CTA__JSON_INT) {
		x = v->u.i;
	} else if (v->type == CTA__JSON_DOUBLE) {
		double d = v->u.d;
		/* 1e6 is a fine way to write a million nanoseconds; beyond 2^53
		 * a double no longer holds every integer, so it is refused. */
		if (d != floor(d))
			return cta__json_fail(c, CTA_EPARSE, v->line, path,
			                      "expected an integer, got %s", v->num_text);
		if (fabs(d) > 9007199254740992.0)
			return cta__json_fail(c, CTA_ERANGE, v->line, path,
			                      "%s is too large to be an exact integer",
			                      v->num_text);
		x = (int64_t)d;
	} else {
		return cta__json_fail(c, CTA_EPARSE, v->line, path, "expected an integer, got %s",
		                      cta__json_type_name(v->type));
	}
	if (x < min || x > max) {
		if (max == INT64_MAX)
			return cta__json_fail(c, CTA_ERANGE, v->line, path,
			                      "%s is less than the minimum %lld", v->num_text,
			                      (long long)min);
		if (min == INT64_MIN)
			return cta__json_fail(c, CTA_ERANGE, v->line, path,
			                      "%s is more than the maximum %lld", v->num_text,
			                      (long long)max);
		return cta__json_fail(c, CTA_ERANGE, v->line, path,
		                      "%s is out of range [%lld, %lld]", v->num_text,
		                      (long long)min, (long long)max);
	}
	*out = x;
	return 0;
}

int cta__json_want_double(const struct cta__json_ctx *c, const struct cta__json *v,
                          const char *path, double *out)
{
	if (!v)
		return missing(c, path);
	if (v->type == CTA__JSON_DOUBLE)
		*out = v->u.d;
	else if (v->type == CTA__JSON_INT)
		*out = (double)v->u.i;
	else
		return cta__json_fail(c, CTA_EPARSE, v->line, path, "expected a number, got %s",
		                      cta__json_type_name(v->type));
	return 0;
}

int cta__json_want_bool(const struct cta__json_ctx *c, const struct cta__json *v, const char *path,
                        int *out)
{
	int rc = cta__json_want(c, v, path, CTA__JSON_BOOL);
	if (rc == 0)
		*out = v->u.b;
	return rc;
}

int cta__json_want_string(const struct cta__json_ctx *c, const struct cta__json *v,
                          const char *path, int allow_empty, char *buf, size_t n)
{
	int rc = cta__json_want(c, v, path, CTA__JSON_STRING);
	if (rc)
		return rc;
	if (memchr(v->u.str.s, '\0', v->u.str.len))
		return cta__json_fail(c, CTA_EPARSE, v->line, path,
		                      "string contains a NUL character (\\u0000)");
	if (!allow_empty && v->u.str.len == 0)
		return cta__json_fail(c, CTA_EPARSE, v->line, path, "must not be empty");
	if (v->u.str.len >= n)
		return cta__json_fail(c, CTA_ERANGE, v->line, path,
		                      "string is %zu bytes long, more than the maximum %zu",
		                      v->u.str.len, n - 1);
	memcpy(buf, v->u.str.s, v->u.str.len + 1);
	return 0;
}

/* Edit distance ignoring ASCII case, counting a swap of two neighbours as
 * one edit (optimal string alignment), or a value > cap once it exceeds
 * cap. Names longer than 63 bytes are not typos worth suggesting for. */
static unsigned edit_distance(const char *a, const char *b, unsigned cap)
{
	size_t na = strlen(a), nb = strlen(b);
	if (na > 63 || nb > 63)
		return cap + 1;
	unsigned rows[3][64];
	unsigned *pp = rows[0], *prev = rows[1], *row = rows[2];
	for (size_t j = 0; j <= nb; j++)
		prev[j] = (unsigned)j;
	for (size_t i = 1; i <= na; i++) {
		int ca = tolower((unsigned char)a[i - 1]);
		row[0] = (unsigned)i;
		unsigned best = row[0];
		for (size_t j = 1; j <= nb; j++) {
			int cb = tolower((unsigned char)b[j - 1]);
			unsigned x = prev[j - 1] + (ca != cb);
			if (prev[j] + 1 < x)
				x = prev[j] + 1;
			if (row[j - 1] + 1 < x)
				x = row[j - 1] + 1;
			if (i > 1 && j > 1 && ca == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == cb && pp[j - 2] + 1 < x)
				x = pp[j - 2] + 1;
			row[j] = x;
			if (x < best)
				best = x;
		}
		if (best > cap)
			return cap + 1;
		unsigned *t = pp;
		pp = prev;
		prev = row;
		row = t;
	}
	return prev[nb];
}

const char *cta__json_suggest(const char *name, const char *const *known)
{
	/* Two edits catch the usual slips (a dropped or doubled letter, a
	 * transposition); for short names one edit is already a different
	 * word, so the allowance shrinks with the length. */
	size_t len = strlen(name);
	unsigned cap = len >= 6 ? 2 : len >= 3 ? 1 : 0;
	const char *best = NULL;
	unsigned bestd = cap + 1;
	for (size_t i = 0; known && known[i]; i++) {
		unsigned d = edit_distance(name, known[i], cap);
		if (d < bestd) {
			bestd = d;
			best = known[i];
		}
	}
	return best;
}

int cta__json_check_fields(const struct cta__json_ctx *c, const struct cta__json *obj,
                           const char *path, const char *const *known)
{
	if (!obj || obj->type != CTA__JSON_OBJECT)
		return 0;
	for (size_t i = 0; i < obj->u.obj.n; i++) {
		const struct cta__json_member *m = &obj->u.obj.m[i];
		int found = 0;
		for (size_t k = 0; known[k]; k++) {
			if (m->keylen == strlen(known[k]) &&
			    memcmp(m->key, known[k], m->keylen) == 0) {
				found = 1;
				break;
			}
		}
		if (found)
			continue;
		char p[256];
		cta__json_path_member(p, sizeof(p), path, m->key);
		const char *s =
		    memchr(m->key, '\0', m->keylen) ? NULL : cta__json_suggest(m->key, known);
		if (s)
			return cta__json_fail(c, CTA_EPARSE, m->line, p,
			                      "unknown field (did you mean '%s'?)", s);
		/* No close match: list what is allowed, as far as it fits. */
		char list[256];
		size_t len = 0;
		list[0] = '\0';
		for (size_t k = 0; known[k]; k++) {
			if (k)
				append_clean(list, sizeof(list), &len, ", ");
			append_clean(list, sizeof(list), &len, known[k]);
		}
		return cta__json_fail(c, CTA_EPARSE, m->line, p, "unknown field (known: %s)", list);
	}
	return 0;
}
