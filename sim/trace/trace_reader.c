/* The strict trace reader: parses a trace a line at a time as it streams
 * in (decompressed on the way), keeps its records, and rejects anything
 * FORMAT.md does not allow, naming the file and line, so that a truncated
 * or hand-edited trace is never silently half-read. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_internal.h"

struct rd {
	const char *path;
	char *errbuf;
	size_t errlen;
	unsigned long line;
	cta_trace_progress_fn progress; /* may be NULL */
	void *progress_ctx;
};

#if defined(__GNUC__) || defined(__clang__)
__attribute__((format(printf, 3, 4)))
#endif
static int
err(struct rd *r, int code, const char *fmt, ...)
{
	if (r->errbuf && r->errlen) {
		/* Line 0: the file as a whole (it cannot be opened or read). */
		int n = r->line ? snprintf(r->errbuf, r->errlen, "%s:%lu: ", r->path, r->line)
		                : snprintf(r->errbuf, r->errlen, "%s: ", r->path);
		if (n >= 0 && (size_t)n < r->errlen) {
			va_list ap;
			va_start(ap, fmt);
			vsnprintf(r->errbuf + n, r->errlen - (size_t)n, fmt, ap);
			va_end(ap);
		}
	}
	return code;
}

/* Length of s[0..n) to show in a message: long garbage is cut short. */
static int shown(size_t n)
{
	return n > 40 ? 40 : (int)n;
}

static int parse_u64(const char *s, size_t n, uint64_t *out)
{
	uint64_t v = 0;
	if (n == 0 || n > 20)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned d = (unsigned char)s[i] - '0';
		if (d > 9)
			return -1;
		if (v > (UINT64_MAX - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}

static int parse_i64(const char *s, size_t n, int64_t lo, int64_t hi, int64_t *out)
{
	int neg = n > 0 && s[0] == '-';
	uint64_t v;
	if (parse_u64(s + neg, n - (size_t)neg, &v))
		return -1;
	if (neg ? v > (uint64_t)0 - (uint64_t)lo : v > (uint64_t)hi)
		return -1;
	*out = neg ? (int64_t)((uint64_t)0 - v) : (int64_t)v;
	return 0;
}

/* The header keys that take one value each, in FORMAT.md order. */
enum hkey { HK_BACKEND, HK_DEVICE, HK_SEED, HK_TICK, HK_CLC, HK_DET, HK_VERSION, HK__COUNT };
static const char *const hkey_names[HK__COUNT] = {
    "backend", "device", "seed", "tick_ns", "clc", "deterministic", "ctasim_version",
};

static int copy_value(struct rd *r, char *dst, size_t cap, const char *key, const char *v, size_t n)
{
	if (n == 0)
		return err(r, CTA_EPARSE, "empty value for header key '%s'", key);
	if (n >= cap)
		return err(r, CTA_EPARSE, "value of header key '%s' is longer than %zu bytes", key,
		           cap - 1);
	memcpy(dst, v, n);
	dst[n] = 0;
	return 0;
}

static int header_line(struct rd *r, struct cta_trace_header *h, unsigned *seen, const char *s,
                       size_t n)
{
	const char *sp = memchr(s, ' ', n);
	size_t kl = sp ? (size_t)(sp - s) : n;
	const char *v = sp ? sp + 1 : s + n;
	size_t vn = sp ? n - kl - 1 : 0;
	int k = -1;
	for (int i = 0; i < HK__COUNT; i++)
		if (strlen(hkey_names[i]) == kl && !memcmp(hkey_names[i], s, kl))
			k = i;
	if (k < 0)
		return err(r, CTA_EPARSE, "unknown header key '%.*s'", shown(kl), s);
	if (*seen & (1u << k))
		return err(r, CTA_EPARSE, "duplicate header key '%s'", hkey_names[k]);
	*seen |= 1u << k;
	const char *key = hkey_names[k];
	int rc;
	uint64_t u;
	switch (k) {
	case HK_BACKEND:
		if ((rc = copy_value(r, h->backend, sizeof(h->backend), key, v, vn)))
			return rc;
		if (!cta__trace_backend_ok(h->backend))
			return err(r, CTA_EPARSE, "backend must be sim or cuda, not '%s'",
			           h->backend);
		return 0;
	case HK_DEVICE:
		return copy_value(r, h->device, sizeof(h->device), key, v, vn);
	case HK_VERSION:
		return copy_value(r, h->ctasim_version, sizeof(h->ctasim_version), key, v, vn);
	case HK_CLC:
		if ((rc = copy_value(r, h->clc, sizeof(h->clc), key, v, vn)))
			return rc;
		if (!cta__trace_clc_ok(h->clc))
			return err(r, CTA_EPARSE,
			           "clc must be model, hardware, emulated or none, not '%s'",
			           h->clc);
		return 0;
	case HK_SEED:
		if (parse_u64(v, vn, &h->seed))
			return err(r, CTA_EPARSE, "bad number '%.*s' for seed", shown(vn), v);
		return 0;
	case HK_DET:
		if (parse_u64(v, vn, &u) || u > 1)
			return err(r, CTA_EPARSE, "deterministic must be 0 or 1, not '%.*s'",
			           shown(vn), v);
		h->deterministic = (int)u;
		return 0;
	case HK_TICK: {
		char tmp[40];
		char *end;
		if (vn == 0 || vn >= sizeof(tmp) || !strchr("0123456789.", v[0]))
			return err(r, CTA_EPARSE, "bad number '%.*s' for tick_ns", shown(vn), v);
		memcpy(tmp, v, vn);
		tmp[vn] = 0;
		errno = 0;
		double d = strtod(tmp, &end);
		if (*end || errno || !(d > 0) || d > 1e18)
			return err(r, CTA_EPARSE, "bad number '%s' for tick_ns (must be > 0)", tmp);
		h->tick_ns = d;
		return 0;
	}
	}
	return err(r, CTA_EPARSE, "internal: unhandled header key");
}

/* Reads "x,y,z" into d. */
static int parse_dims(const char *v, size_t n, unsigned d[3])
{
	size_t i = 0;
	for (int j = 0; j < 3; j++) {
		size_t st = i;
		while (i < n && v[i] != ',')
			i++;
		uint64_t u;
		if (parse_u64(v + st, i - st, &u) || u > UINT32_MAX)
			return -1;
		d[j] = (unsigned)u;
		if (j < 2) {
			if (i >= n)
				return -1;
			i++;
		}
	}
	return i == n ? 0 : -1;
}

enum kkey {
	KK_NAME,
	KK_GRID,
	KK_BLOCK,
	KK_CLUSTER,
	KK_SMEM,
	KK_STREAM,
	KK_PRIO,
	KK_REL,
	KK__COUNT
};
static const char *const kkey_names[KK__COUNT] = {
    "name", "grid", "block", "cluster", "smem", "stream", "priority", "release_ns",
};

static int kernel_value(struct rd *r, struct cta_trace_kernel *k, int key, const char *v, size_t vn)
{
	int64_t i;
	switch (key) {
	case KK_GRID:
	case KK_BLOCK:
	case KK_CLUSTER: {
		unsigned *d = key == KK_GRID ? k->grid : key == KK_BLOCK ? k->block : k->cluster;
		if (parse_dims(v, vn, d))
			return err(r, CTA_EPARSE, "bad dimensions '%.*s' for %s (expected x,y,z)",
			           shown(vn), v, kkey_names[key]);
		return 0;
	}
	case KK_SMEM:
	case KK_REL:
		if (parse_u64(v, vn, key == KK_SMEM ? &k->smem_bytes : &k->release_ns))
			return err(r, CTA_EPARSE, "bad number '%.*s' for %s", shown(vn), v,
			           kkey_names[key]);
		return 0;
	case KK_STREAM:
	case KK_PRIO:
		if (parse_i64(v, vn, INT32_MIN, INT32_MAX, &i))
			return err(r, CTA_EPARSE, "bad number '%.*s' for %s", shown(vn), v,
			           kkey_names[key]);
		*(key == KK_STREAM ? &k->stream : &k->priority) = (int)i;
		return 0;
	}
	return 0;
}

/* "#kernel ID key=value ..." with s pointing past "#kernel ". */
static int kernel_line(struct rd *r, struct cta_trace_header *h, const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && s[i] != ' ')
		i++;
	uint64_t id;
	if (parse_u64(s, i, &id))
		return err(r, CTA_EPARSE, "bad kernel id '%.*s'", shown(i), s);
	if (id != h->kernel_count)
		return err(r, CTA_EPARSE, "kernel id %llu out of order (expected %u)",
		           (unsigned long long)id, h->kernel_count);
	if (h->kernel_count >= CTA_TRACE_MAX_KERNELS)
		return err(r, CTA_EPARSE, "more than %d kernels", CTA_TRACE_MAX_KERNELS);
	struct cta_trace_kernel *k = &h->kernels[h->kernel_count];
	memset(k, 0, sizeof(*k));
	unsigned seen = 0;
	while (i < n) {
		if (s[i] != ' ' || i + 1 >= n)
			return err(r, CTA_EPARSE, "kernel line: expected ' key=value'");
		i++;
		size_t ks = i;
		while (i < n && s[i] != '=' && s[i] != ' ')
			i++;
		if (i >= n || s[i] != '=')
			return err(r, CTA_EPARSE, "kernel line: '%.*s' is not key=value",
			           shown(i - ks), s + ks);
		int key = -1;
		for (int j = 0; j < KK__COUNT; j++)
			if (strlen(kkey_names[j]) == i - ks &&
			    !memcmp(kkey_names[j], s + ks, i - ks))
				key = j;
		if (key < 0)
			return err(r, CTA_EPARSE, "unknown kernel key '%.*s'", shown(i - ks),
			           s + ks);
		if (seen & (1u << key))
			return err(r, CTA_EPARSE, "duplicate kernel key '%s'", kkey_names[key]);
		seen |= 1u << key;
		i++;
		if (key == KK_NAME && i < n && s[i] == '"') {
			/* A quoted name: "" is a quote, the closing quote ends it. */
			size_t o = 0;
			for (i++;; i++) {
				if (i >= n)
					return err(r, CTA_EPARSE,
					           "kernel name: unterminated quote");
				if (s[i] == '"') {
					if (i + 1 < n && s[i + 1] == '"')
						i++;
					else
						break;
				}
				if (o + 1 >= sizeof(k->name))
					return err(r, CTA_EPARSE,
					           "kernel name longer than %zu bytes",
					           sizeof(k->name) - 1);
				k->name[o++] = s[i];
			}
			i++;
			k->name[o] = 0;
			if (o == 0)
				return err(r, CTA_EPARSE, "empty kernel name");
			if (i < n && s[i] != ' ')
				return err(r, CTA_EPARSE,
				           "kernel name: text after the closing quote");
			continue;
		}
		size_t vs = i;
		while (i < n && s[i] != ' ')
			i++;
		if (key == KK_NAME) {
			if (i == vs)
				return err(r, CTA_EPARSE, "empty kernel name");
			if (i - vs >= sizeof(k->name))
				return err(r, CTA_EPARSE, "kernel name longer than %zu bytes",
				           sizeof(k->name) - 1);
			memcpy(k->name, s + vs, i - vs);
			k->name[i - vs] = 0;
			continue;
		}
		int rc = kernel_value(r, k, key, s + vs, i - vs);
		if (rc)
			return rc;
	}
	for (int j = 0; j < KK__COUNT; j++)
		if (!(seen & (1u << j)))
			return err(r, CTA_EPARSE, "kernel %u: missing key '%s'", h->kernel_count,
			           kkey_names[j]);
	h->kernel_count++;
	return 0;
}

static const char *const col_names[CTA__TRACE_NCOLS] = {
    "t_ns", "event", "kernel", "block", "phys", "sm", "arg", "code", "text",
};

/* Splits a record into its columns, unquoting the text column in place
 * (an unquoted text is never longer than its quoted form). */
static int record_line(struct rd *r, const struct cta_trace_header *h, char *s, size_t n,
                       struct cta_trace_rec *rec)
{
	const char *col[CTA__TRACE_NCOLS];
	size_t len[CTA__TRACE_NCOLS];
	size_t i = 0;
	int c = 0;
	for (;;) {
		if (c == CTA__TRACE_NCOLS)
			return err(r, CTA_EPARSE, "wrong column count: more than %d columns",
			           CTA__TRACE_NCOLS);
		if (c == CTA__TRACE_NCOLS - 1 && i < n && s[i] == '"') {
			size_t o = i;
			col[c] = s + o;
			for (i++;; i++) {
				if (i >= n)
					return err(r, CTA_EPARSE,
					           "text column: unterminated quote");
				if (s[i] == '"') {
					if (i + 1 < n && s[i + 1] == '"')
						i++;
					else
						break;
				}
				s[o++] = s[i];
			}
			len[c] = o - (size_t)(col[c] - s);
			i++;
			c++;
			if (i < n && s[i] != ',')
				return err(r, CTA_EPARSE,
				           "text column: text after the closing quote");
		} else {
			size_t st = i;
			while (i < n && s[i] != ',' && s[i] != '"')
				i++;
			if (i < n && s[i] == '"')
				return err(
				    r, CTA_EPARSE, "column '%s': stray quote",
				    col_names[c < CTA__TRACE_NCOLS ? c : CTA__TRACE_NCOLS - 1]);
			col[c] = s + st;
			len[c] = i - st;
			c++;
		}
		if (i >= n)
			break;
		i++; /* the comma */
		if (i == n) {
			/* A trailing comma opens one more, empty, column. */
			if (c == CTA__TRACE_NCOLS)
				return err(r, CTA_EPARSE,
				           "wrong column count: more than %d columns",
				           CTA__TRACE_NCOLS);
			col[c] = s + i;
			len[c] = 0;
			c++;
			break;
		}
	}
	if (c != CTA__TRACE_NCOLS)
		return err(r, CTA_EPARSE, "wrong column count: %d columns, expected %d", c,
		           CTA__TRACE_NCOLS);

	if (parse_u64(col[0], len[0], &rec->t_ns))
		return err(r, CTA_EPARSE, "bad number '%.*s' in column 't_ns'", shown(len[0]),
		           col[0]);
	int ev = cta__trace_event_parse(col[1], len[1]);
	if (ev < 0)
		return err(r, CTA_EPARSE, "unknown event '%.*s'", shown(len[1]), col[1]);
	rec->ev = (cta_trace_event)ev;
	uint64_t *opt[5] = {NULL, &rec->block, &rec->phys, &rec->sm, &rec->arg};
	uint64_t kv = 0;
	opt[0] = &kv;
	for (int j = 0; j < 5; j++) {
		int cc = 2 + j;
		if (len[cc] == 1 && col[cc][0] == '-')
			*opt[j] = CTA_TRACE_NONE;
		else if (parse_u64(col[cc], len[cc], opt[j]))
			return err(r, CTA_EPARSE, "bad number '%.*s' in column '%s'",
			           shown(len[cc]), col[cc], col_names[cc]);
	}
	if (kv == CTA_TRACE_NONE) {
		rec->kernel = CTA__TRACE_NO_KERNEL;
	} else if (kv >= h->kernel_count) {
		return err(r, CTA_EPARSE, "kernel %llu not declared in the header",
		           (unsigned long long)kv);
	} else {
		rec->kernel = (uint32_t)kv;
	}
	int64_t code;
	if (parse_i64(col[7], len[7], INT32_MIN, INT32_MAX, &code))
		return err(r, CTA_EPARSE, "bad number '%.*s' in column 'code'", shown(len[7]),
		           col[7]);
	rec->code = (int32_t)code;
	if (rec->ev == CTA_TEV_CANCEL_DONE && (code < 0 || code > CTA_CANCEL_FAIL_INJECTED))
		return err(r, CTA_EPARSE, "cancel_done: unknown outcome %d", rec->code);
	/* The text is terminated in place; parse_line copies it out of the
	 * line buffer. */
	rec->text = len[8] ? col[8] : NULL;
	if (len[8])
		((char *)col[8])[len[8]] = 0;
	return 0;
}

/* Where the text comes from: a (possibly compressed) file read in chunks,
 * or a buffer in memory (the fuzz target). */
struct src {
	struct cta__zin *z; /* NULL: the buffer */
	const char *data;
	size_t len, pos;
};

static int src_read(struct rd *r, struct src *in, char *buf, size_t cap, size_t *got)
{
	if (!in->z) {
		size_t n = in->len - in->pos < cap ? in->len - in->pos : cap;
		if (n)
			memcpy(buf, in->data + in->pos, n);
		in->pos += n;
		*got = n;
		return 0;
	}
	char msg[256];
	int rc = cta__zin_read(in->z, buf, cap, got, msg, sizeof(msg));
	if (rc) {
		unsigned long line = r->line;
		r->line = 0; /* the file as a whole */
		rc = err(r, rc, "%s", msg);
		r->line = line;
	}
	return rc;
}

static void src_position(const struct src *in, uint64_t *done, uint64_t *total)
{
	if (in->z) {
		cta__zin_position(in->z, done, total);
	} else {
		*done = in->pos;
		*total = in->len;
	}
}

enum phase { PH_MAGIC, PH_HEADER, PH_RECORDS, PH_DONE };

struct pstate {
	enum phase ph;
	unsigned seen;
	size_t cap;
	/* Record texts, copied out of the line buffer as they come; recs[i].text
	 * holds offset + 1 into it until the end, since it moves as it grows. */
	char *strings;
	size_t slen, scap;
	/* Streaming (cta_trace_stream): each record goes to on_rec and is not
	 * kept; t->count still counts them for the end marker. */
	cta_trace_record_fn on_rec;
	void *ctx;
};

static int keep_text(struct rd *r, struct pstate *p, struct cta_trace_rec *rec)
{
	size_t l = strlen(rec->text) + 1;
	if (p->scap - p->slen < l) {
		size_t nc = p->scap ? p->scap : 4096;
		while (nc - p->slen < l)
			nc *= 2;
		char *ns = realloc(p->strings, nc);
		if (!ns)
			return err(r, CTA_ENOMEM, "out of memory");
		p->strings = ns;
		p->scap = nc;
	}
	memcpy(p->strings + p->slen, rec->text, l);
	rec->text = (const char *)(uintptr_t)(p->slen + 1);
	p->slen += l;
	return 0;
}

/* One line s[0..n), NUL-terminated at n, without its newline. */
static int parse_line(struct rd *r, struct cta_trace *t, struct pstate *p, char *s, size_t n)
{
	struct cta_trace_header *h = &t->header;
	if (n && s[n - 1] == '\r')
		s[--n] = 0;
	/* The writer never emits control characters (text turns them into
	 * spaces), so a file with one was not written by it. Refusing them
	 * keeps every loadable trace writable again, unchanged. */
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return err(r, CTA_EPARSE, "control character 0x%02x in line",
			           (unsigned)(unsigned char)s[i]);
	if (p->ph == PH_DONE)
		return err(r, CTA_EPARSE, "line after the end marker");
	if (p->ph == PH_MAGIC) {
		size_t ml = strlen(CTA__TRACE_MAGIC);
		if (n < ml + 2 || memcmp(s, CTA__TRACE_MAGIC " ", ml + 1))
			return err(r, CTA_EPARSE, "not a ctasim trace (expected '%s %d')",
			           CTA__TRACE_MAGIC, CTA_TRACE_VERSION);
		uint64_t v;
		if (parse_u64(s + ml + 1, n - ml - 1, &v))
			return err(r, CTA_EPARSE, "bad version '%.*s'", shown(n - ml - 1),
			           s + ml + 1);
		if (v != CTA_TRACE_VERSION)
			return err(r, CTA_EVERSION,
			           "trace format version %llu; this build reads version %d",
			           (unsigned long long)v, CTA_TRACE_VERSION);
		h->version = (int)v;
		p->ph = PH_HEADER;
		return 0;
	}
	if (p->ph == PH_HEADER) {
		if (n >= 8 && !memcmp(s, "#kernel ", 8))
			return kernel_line(r, h, s + 8, n - 8);
		if (n >= 1 && s[0] == '#')
			return h->kernel_count
			           ? err(r, CTA_EPARSE, "header key after the kernel lines")
			           : header_line(r, h, &p->seen, s + 1, n - 1);
		if (n == strlen(CTA__TRACE_COLUMNS) && !memcmp(s, CTA__TRACE_COLUMNS, n)) {
			for (int k = 0; k < HK__COUNT; k++)
				if (!(p->seen & (1u << k)))
					return err(r, CTA_EPARSE, "missing header key '%s'",
					           hkey_names[k]);
			p->ph = PH_RECORDS;
			return 0;
		}
		return err(r, CTA_EPARSE, "expected a header line or the column line '%s'",
		           CTA__TRACE_COLUMNS);
	}
	/* PH_RECORDS */
	if (n >= 1 && s[0] == '#') {
		int inc = n >= 12 && !memcmp(s, "#incomplete ", 12);
		const char *q = inc ? s + 12 : s + 5;
		if (!inc && (n < 5 || memcmp(s, "#end ", 5)))
			return err(r, CTA_EPARSE,
			           "'%.*s' in the records (expected a record or "
			           "'#end records=N')",
			           shown(n), s);
		size_t pl = n - (size_t)(q - s);
		/* "#incomplete records=N REASON": the reason (a crash, say) is
		 * for people; the count is what is checked. */
		if (inc) {
			const char *sp = memchr(q, ' ', pl);
			if (sp)
				pl = (size_t)(sp - q);
		}
		uint64_t marker_count;
		if (pl < 9 || memcmp(q, "records=", 8) || parse_u64(q + 8, pl - 8, &marker_count))
			return err(r, CTA_EPARSE, "bad end marker (expected '#%s records=N')",
			           inc ? "incomplete" : "end");
		if (marker_count != t->count)
			return err(r, CTA_EPARSE,
			           "record count mismatch: end marker says %llu, file has %zu",
			           (unsigned long long)marker_count, t->count);
		t->complete = !inc;
		p->ph = PH_DONE;
		return 0;
	}
	if (p->on_rec) {
		struct cta_trace_rec one;
		memset(&one, 0, sizeof(one));
		int rc = record_line(r, h, s, n, &one);
		if (!rc)
			rc = p->on_rec(p->ctx, h, &one);
		if (rc)
			return rc;
		t->count++;
		return 0;
	}
	if (t->count == p->cap) {
		size_t nc = p->cap ? p->cap * 2 : 1024;
		struct cta_trace_rec *nr = realloc(t->recs, nc * sizeof(*nr));
		if (!nr)
			return err(r, CTA_ENOMEM, "out of memory");
		t->recs = nr;
		p->cap = nc;
	}
	struct cta_trace_rec *rec = &t->recs[t->count];
	memset(rec, 0, sizeof(*rec));
	int rc = record_line(r, h, s, n, rec);
	if (!rc && rec->text)
		rc = keep_text(r, p, rec);
	if (rc)
		return rc;
	t->count++;
	return 0;
}

/* The decompressed text is parsed a line at a time out of a window of
 * this size (plus one line), so a trace costs its records, never its
 * text: 64 bytes a record (struct cta_trace_rec), about 1.6 times the
 * uncompressed file. */
#define RD_WINDOW (1u << 20)

/* Counts the bytes of an over-long line up to its newline (at most this
 * far), for a message that says how long it is. */
#define RD_LONG_LINE_SCAN ((size_t)16 << 20)

static int long_line(struct rd *r, struct src *in, char *buf, size_t cap, const char *s,
                     size_t have)
{
	size_t n = have;
	const char *nl = memchr(s, '\n', have);
	while (!nl && n < RD_LONG_LINE_SCAN) {
		size_t got;
		int rc = src_read(r, in, buf, cap, &got);
		if (rc)
			return rc;
		if (got == 0)
			break;
		nl = memchr(buf, '\n', got);
		n += nl ? (size_t)(nl - buf) : got;
	}
	if (!nl && n >= RD_LONG_LINE_SCAN)
		return err(r, CTA_ERANGE,
		           "line of more than %zu bytes, longer than the limit of %d", n,
		           CTA_TRACE_MAX_LINE);
	if (nl && have > (size_t)(nl - s))
		n = (size_t)(nl - s);
	return err(r, CTA_ERANGE, "line of %zu bytes, longer than the limit of %d", n,
	           CTA_TRACE_MAX_LINE);
}

static int parse(struct rd *r, struct cta_trace *t, struct src *in, cta_trace_record_fn on_rec,
                 void *ctx)
{
	struct pstate p = {.ph = PH_MAGIC, .on_rec = on_rec, .ctx = ctx};
	size_t cap = RD_WINDOW + CTA_TRACE_MAX_LINE + 2;
	char *buf = malloc(cap);
	if (!buf)
		return err(r, CTA_ENOMEM, "out of memory");
	size_t have = 0, start = 0, total = 0;
	int eof = 0, rc = 0;
	r->line = 0;
	for (;;) {
		char *s = buf + start;
		char *nl = memchr(s, '\n', have - start);
		if (!nl) {
			size_t rem = have - start;
			if (rem > CTA_TRACE_MAX_LINE) {
				r->line++;
				rc = long_line(r, in, buf, cap, s, rem);
				break;
			}
			if (eof) {
				if (total == 0) {
					r->line = 1;
					rc = err(r, CTA_EPARSE, "empty file: not a ctasim trace");
				} else if (rem) {
					r->line++;
					rc = err(r, CTA_EPARSE,
					         "truncated: last line has no newline");
				}
				break;
			}
			memmove(buf, s, rem);
			have = rem;
			start = 0;
			size_t got;
			if ((rc = src_read(r, in, buf + have, cap - have - 1, &got)) != 0)
				break;
			eof = got == 0;
			have += got;
			total += got;
			continue;
		}
		r->line++;
		/* Every 2^16 lines: cheap enough to leave in the loop. */
		if (r->progress && !(r->line & 0xffff)) {
			uint64_t done, all;
			src_position(in, &done, &all);
			if (all)
				r->progress(r->progress_ctx, done, all);
		}
		size_t n = (size_t)(nl - s);
		if (n > CTA_TRACE_MAX_LINE) {
			rc = err(r, CTA_ERANGE, "line of %zu bytes, longer than the limit of %d", n,
			         CTA_TRACE_MAX_LINE);
			break;
		}
		start += n + 1;
		*nl = 0;
		if ((rc = parse_line(r, t, &p, s, n)) != 0)
			break;
	}
	free(buf);
	if (!rc && p.ph != PH_DONE)
		rc = p.ph == PH_MAGIC ? err(r, CTA_EPARSE, "not a ctasim trace")
		                      : err(r, CTA_EPARSE, "truncated: no end marker");
	if (!rc && !p.on_rec) {
		/* Give back the unused half of the doubled array; the texts'
		 * offsets become pointers now that their block stays put. */
		if (t->count && t->count < p.cap) {
			struct cta_trace_rec *nr = realloc(t->recs, t->count * sizeof(*nr));
			if (nr)
				t->recs = nr;
		}
		t->strings = p.strings;
		p.strings = NULL;
		for (size_t i = 0; i < t->count; i++)
			if (t->recs[i].text)
				t->recs[i].text = t->strings + ((uintptr_t)t->recs[i].text - 1);
	}
	free(p.strings);
	return rc;
}

int cta__trace_read_mem(struct cta_trace *out, const char *name, const char *data, size_t len,
                        char *errbuf, size_t errlen)
{
	struct rd r = {.path = name, .errbuf = errbuf, .errlen = errlen};
	memset(out, 0, sizeof(*out));
	if (errbuf && errlen)
		errbuf[0] = 0;
	struct src in = {.data = data, .len = len};
	int rc = parse(&r, out, &in, NULL, NULL);
	if (rc)
		cta_trace_free(out);
	return rc;
}

int cta_trace_read(struct cta_trace *out, const char *path, char *errbuf, size_t errlen)
{
	return cta_trace_read_progress(out, path, errbuf, errlen, NULL, NULL);
}

/* Opens path ("-": standard input, named so in messages) and parses it
 * into out, each record also given to fn when there is one. */
static int read_path(struct rd *r, struct cta_trace *out, const char *path, cta_trace_record_fn fn,
                     void *ctx)
{
	if (path && !strcmp(path, "-"))
		r->path = "<stdin>";
	memset(out, 0, sizeof(*out));
	if (r->errbuf && r->errlen)
		r->errbuf[0] = 0;
	char msg[256];
	struct src in = {0};
	int rc = cta__zin_open(&in.z, path, msg, sizeof(msg));
	if (rc)
		return err(r, rc, "%s", msg);
	rc = parse(r, out, &in, fn, ctx);
	cta__zin_close(in.z);
	return rc;
}

int cta_trace_read_progress(struct cta_trace *out, const char *path, char *errbuf, size_t errlen,
                            cta_trace_progress_fn progress, void *ctx)
{
	struct rd r = {.path = path,
	               .errbuf = errbuf,
	               .errlen = errlen,
	               .progress = progress,
	               .progress_ctx = ctx};
	int rc = read_path(&r, out, path, NULL, NULL);
	if (rc)
		cta_trace_free(out);
	return rc;
}

int cta_trace_stream(struct cta_trace *out, const char *path, cta_trace_record_fn fn, void *ctx,
                     char *errbuf, size_t errlen)
{
	struct rd r = {.path = path, .errbuf = errbuf, .errlen = errlen};
	return read_path(&r, out, path, fn, ctx);
}

/* cta_trace_read_lean's collector: every record feeds the layout; the
 * few that are not block records are kept, their texts in one block
 * (offsets + 1 until the end, as the reader's own). */
struct lean {
	struct cta__layout *l;
	struct cta__layout_acc *acc;
	struct cta_trace_rec *recs;
	size_t n, cap;
	char *strings;
	size_t slen, scap;
};

static int lean_rec(void *ctx, const struct cta_trace_header *h, const struct cta_trace_rec *r)
{
	struct lean *x = ctx;
	int rc;
	if (!x->acc && (rc = cta__layout_begin(&x->acc, x->l, h->kernel_count)) != 0)
		return rc;
	if ((rc = cta__layout_add(x->acc, r)) != 0)
		return rc;
	if (r->ev == CTA_TEV_DISPATCH || r->ev == CTA_TEV_START || r->ev == CTA_TEV_END ||
	    r->ev == CTA_TEV_STEAL)
		return 0;
	if (x->n == x->cap) {
		size_t nc = x->cap ? x->cap * 2 : 256;
		struct cta_trace_rec *nr = realloc(x->recs, nc * sizeof(*nr));
		if (!nr)
			return CTA_ENOMEM;
		x->recs = nr;
		x->cap = nc;
	}
	struct cta_trace_rec *k = &x->recs[x->n++];
	*k = *r;
	if (r->text) {
		size_t len = strlen(r->text) + 1;
		if (x->scap - x->slen < len) {
			size_t nc = x->scap ? x->scap : 4096;
			while (nc - x->slen < len)
				nc *= 2;
			char *ns = realloc(x->strings, nc);
			if (!ns)
				return CTA_ENOMEM;
			x->strings = ns;
			x->scap = nc;
		}
		memcpy(x->strings + x->slen, r->text, len);
		k->text = (const char *)(uintptr_t)(x->slen + 1);
		x->slen += len;
	}
	return 0;
}

int cta_trace_read_lean(cta_trace_lean **outp, const char *path, int per_kernel_slots, char *errbuf,
                        size_t errlen, cta_trace_progress_fn progress, void *ctx)
{
	struct rd r = {.path = path,
	               .errbuf = errbuf,
	               .errlen = errlen,
	               .progress = progress,
	               .progress_ctx = ctx};
	if (path && !strcmp(path, "-"))
		r.path = "<stdin>";
	*outp = NULL;
	if (errbuf && errlen)
		errbuf[0] = 0;
	cta_trace_lean *lt = calloc(1, sizeof(*lt));
	if (!lt)
		return err(&r, CTA_ENOMEM, "out of memory");
	struct cta_trace *out = &lt->t;
	struct lean x = {.l = &lt->l};
	char msg[256];
	struct src in = {0};
	int rc = cta__zin_open(&in.z, path, msg, sizeof(msg));
	if (rc) {
		free(lt);
		return err(&r, rc, "%s", msg);
	}
	rc = parse(&r, out, &in, lean_rec, &x);
	cta__zin_close(in.z);
	/* A trace without records still gets its (empty) layout. */
	if (!rc && !x.acc)
		rc = cta__layout_begin(&x.acc, x.l, out->header.kernel_count);
	if (!rc) {
		rc = cta__layout_finish(x.acc, per_kernel_slots);
		x.acc = NULL;
	}
	if (rc && errbuf && errlen && !errbuf[0]) {
		/* The collector's own failures: the reader said nothing yet. */
		unsigned long line = r.line;
		r.line = 0;
		err(&r, rc,
		    rc == CTA_ERANGE ? "an SM id above 65535, or more than 2^32 records"
		                     : "out of memory");
		r.line = line;
	}
	if (rc) {
		if (x.acc)
			cta__layout_abort(x.acc);
		free(x.recs);
		free(x.strings);
		free(lt);
		return rc;
	}
	if (x.n && x.n < x.cap) {
		struct cta_trace_rec *nr = realloc(x.recs, x.n * sizeof(*nr));
		if (nr)
			x.recs = nr;
	}
	out->recs = x.recs;
	out->count = x.n;
	out->strings = x.strings;
	for (size_t i = 0; i < x.n; i++)
		if (x.recs[i].text)
			x.recs[i].text = x.strings + ((uintptr_t)x.recs[i].text - 1);
	*outp = lt;
	return 0;
}

const struct cta_trace *cta_trace_lean_trace(const cta_trace_lean *t)
{
	return &t->t;
}

void cta_trace_lean_free(cta_trace_lean *t)
{
	if (!t)
		return;
	cta_trace_free(&t->t);
	cta__layout_free(&t->l);
	free(t);
}

void cta_trace_free(struct cta_trace *t)
{
	if (!t)
		return;
	free(t->recs);
	free(t->strings);
	t->recs = NULL;
	t->strings = NULL;
	t->count = 0;
}
