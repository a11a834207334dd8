/* The trace writer: formats records into its own buffer (no stdio per
 * field, so tens of millions of records stay cheap), writes them to a
 * private temporary file, and renames it onto the final path only on close,
 * so an interrupted run never leaves a trace that looks whole. A name
 * ending in .gz or .zst is compressed at close, from that temporary file
 * (the deterministic digit is fixed in place first); "-" is stdout. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctasim/io.h"
#include "trace_internal.h"

/* 1 MiB amortises write(2) calls well; bigger buys nothing measurable. */
#define WBUF_SIZE (1u << 20)
/* A record without its text never exceeds this: 7 numbers of at most 20
 * digits, the longest event name, 8 commas and the newline. */
#define REC_MAX_FIXED 256

struct cta_trace_writer {
	int fd;
	int direct; /* writing straight to a device or pipe: nothing to rename */
	int zkind;  /* CTA__ZIO_*: compression the final name asks for */
	int err;    /* first failure; later calls return it */
	uint64_t records;
	unsigned kernel_count; /* records may name kernels 0 .. kernel_count-1 */
	char *path;
	char *tmp_path;
	size_t len;
	uint64_t flushed; /* bytes already written to fd */
	/* Where the last line written to fd begins, and whether it is still
	 * open (a record cut by a full buffer): a signal's emergency close
	 * cuts it off so that its marker stands on a line of its own. */
	uint64_t line_off;
	int line_open;
	uint64_t det_off; /* file offset of the #deterministic digit */
	int det_header;   /* the digit the header carries */
	int det;          /* the digit it must carry at close */
	char buf[WBUF_SIZE];
	char msg[512];
};

/* Messages of failures that leave no handle to ask (a failed open, or a
 * close, which always frees the handle) are kept per thread and returned by
 * cta_trace_writer_errmsg(NULL). */
static _Thread_local char last_msg[512];

static int fail(cta_trace_writer *w, int code, const char *fmt, const char *a, int e)
{
	char *m = w ? w->msg : last_msg;
	size_t n = w ? sizeof(w->msg) : sizeof(last_msg);
	if (e)
		snprintf(m, n, "%s: %s: %s", a, fmt, strerror(e));
	else
		snprintf(m, n, "%s: %s", a, fmt);
	if (w) {
		if (!w->err)
			w->err = code;
		memcpy(last_msg, w->msg, sizeof(last_msg));
	}
	return code;
}

/* A rejected record: reported, but the file stays good for later ones. */
static int fail_soft(cta_trace_writer *w, const char *what)
{
	snprintf(w->msg, sizeof(w->msg), "%s: %s", w->path, what);
	return CTA_EINVAL;
}

const char *cta_trace_writer_errmsg(const cta_trace_writer *w)
{
	return w ? w->msg : last_msg;
}

/* The file a message names: the one asked for, not our temporary. */
static const char *shown(const cta_trace_writer *w)
{
	return w->path[0] == '-' && !w->path[1] ? "<stdout>" : w->path;
}

static int flush_buf(cta_trace_writer *w)
{
	size_t off = 0;
	while (off < w->len) {
		ssize_t n = write(w->fd, w->buf + off, w->len - off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return fail(w, CTA_EIO, "write failed", shown(w), errno);
		}
		off += (size_t)n;
	}
	size_t i = w->len;
	while (i && w->buf[i - 1] != '\n')
		i--;
	if (i) {
		w->line_off = w->flushed + i;
		w->line_open = i != w->len;
	} else if (w->len) {
		w->line_open = 1;
	}
	w->flushed += w->len;
	w->len = 0;
	return 0;
}

static int put(cta_trace_writer *w, const char *s, size_t n)
{
	while (n) {
		if (w->len == WBUF_SIZE) {
			int rc = flush_buf(w);
			if (rc)
				return rc;
		}
		size_t k = WBUF_SIZE - w->len;
		if (k > n)
			k = n;
		memcpy(w->buf + w->len, s, k);
		w->len += k;
		s += k;
		n -= k;
	}
	return 0;
}

static int puts_(cta_trace_writer *w, const char *s)
{
	return put(w, s, strlen(s));
}

/* Writes v in decimal at p and returns the end; the digits are produced
 * backwards into a scratch array, which beats division-free tricks for
 * clarity and is still several times faster than snprintf. */
static char *fmt_u64(char *p, uint64_t v)
{
	char tmp[20];
	int n = 0;
	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

static char *fmt_opt(char *p, uint64_t v)
{
	if (v == CTA_TRACE_NONE) {
		*p++ = '-';
		return p;
	}
	return fmt_u64(p, v);
}

static char *fmt_i64(char *p, int64_t v)
{
	if (v < 0) {
		*p++ = '-';
		return fmt_u64(p, (uint64_t)0 - (uint64_t)v);
	}
	return fmt_u64(p, (uint64_t)v);
}

/* Writes a CSV text field: quoted when it holds a comma or a quote, with
 * control characters turned into spaces so a record stays on one line. */
static int put_text(cta_trace_writer *w, const char *s)
{
	int quote = strpbrk(s, ",\"") != NULL;
	if (quote && put(w, "\"", 1))
		return w->err;
	for (const char *p = s; *p; p++) {
		char c = *p;
		if ((unsigned char)c < 0x20 || c == 0x7f)
			c = ' ';
		if (c == '"' && put(w, "\"", 1))
			return w->err;
		if (put(w, &c, 1))
			return w->err;
	}
	if (quote && put(w, "\"", 1))
		return w->err;
	return 0;
}

/* Header values run to the end of the line, so they may hold spaces but no
 * line breaks; an empty value would read back as a missing one. */
static int value_ok(const char *v)
{
	if (!v[0])
		return 0;
	for (const char *p = v; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			return 0;
	return 1;
}

static int put_dims(cta_trace_writer *w, const char *key, const unsigned d[3])
{
	char tmp[80], *p = tmp;
	*p++ = ' ';
	size_t kl = strlen(key);
	memcpy(p, key, kl);
	p += kl;
	*p++ = '=';
	for (int i = 0; i < 3; i++) {
		if (i)
			*p++ = ',';
		p = fmt_u64(p, d[i]);
	}
	return put(w, tmp, (size_t)(p - tmp));
}

static int put_kv_num(cta_trace_writer *w, const char *key, int64_t v, int is_signed)
{
	char tmp[64], *p = tmp;
	*p++ = ' ';
	size_t kl = strlen(key);
	memcpy(p, key, kl);
	p += kl;
	*p++ = '=';
	p = is_signed ? fmt_i64(p, v) : fmt_u64(p, (uint64_t)v);
	return put(w, tmp, (size_t)(p - tmp));
}

static int put_kernel(cta_trace_writer *w, unsigned id, const struct cta_trace_kernel *k)
{
	char tmp[32], *p = tmp;
	memcpy(p, "#kernel ", 8);
	p = fmt_u64(p + 8, id);
	memcpy(p, " name=", 6);
	p += 6;
	if (put(w, tmp, (size_t)(p - tmp)))
		return w->err;
	int quote = strpbrk(k->name, " =,\"") != NULL;
	if (quote)
		put(w, "\"", 1);
	for (const char *c = k->name; *c; c++) {
		if (*c == '"')
			put(w, "\"", 1);
		put(w, c, 1);
	}
	if (quote)
		put(w, "\"", 1);
	put_dims(w, "grid", k->grid);
	put_dims(w, "block", k->block);
	put_dims(w, "cluster", k->cluster);
	put_kv_num(w, "smem", (int64_t)k->smem_bytes, 0);
	put_kv_num(w, "stream", k->stream, 1);
	put_kv_num(w, "priority", k->priority, 1);
	put_kv_num(w, "release_ns", (int64_t)k->release_ns, 0);
	put(w, "\n", 1);
	return w->err;
}

static int check_header(const struct cta_trace_header *h, const char **what)
{
	*what = NULL;
	if (!cta__trace_backend_ok(h->backend))
		*what = "backend must be \"sim\" or \"cuda\"";
	else if (!cta__trace_clc_ok(h->clc))
		*what = "clc must be model, hardware, emulated or none";
	else if (!value_ok(h->device))
		*what = "device name is empty or holds a control character";
	else if (!value_ok(h->ctasim_version))
		*what = "ctasim_version is empty or holds a control character";
	else if (!(h->tick_ns > 0) || h->tick_ns > 1e18)
		*what = "tick_ns must be a positive number";
	else if (h->deterministic != 0 && h->deterministic != 1)
		*what = "deterministic must be 0 or 1";
	else if (h->kernel_count > CTA_TRACE_MAX_KERNELS)
		*what = "more kernels than CTA_TRACE_MAX_KERNELS";
	for (unsigned i = 0; !*what && i < h->kernel_count; i++) {
		const char *n = h->kernels[i].name;
		if (!value_ok(n) || !memchr(n, 0, sizeof(h->kernels[i].name)))
			*what = "kernel name is empty or holds a control character";
	}
	return *what ? CTA_EINVAL : 0;
}

static int write_header(cta_trace_writer *w, const struct cta_trace_header *h)
{
	char num[40];
	puts_(w, CTA__TRACE_MAGIC " 1\n#backend ");
	puts_(w, h->backend);
	puts_(w, "\n#device ");
	puts_(w, h->device);
	puts_(w, "\n#seed ");
	put(w, num, (size_t)(fmt_u64(num, h->seed) - num));
	puts_(w, "\n#tick_ns ");
	put(w, num, cta__trace_fmt_double(num, sizeof(num), h->tick_ns));
	puts_(w, "\n#clc ");
	puts_(w, h->clc);
	w->det_off = w->flushed + w->len + strlen("\n#deterministic ");
	w->det_header = w->det = h->deterministic ? 1 : 0;
	puts_(w, h->deterministic ? "\n#deterministic 1\n" : "\n#deterministic 0\n");
	puts_(w, "#ctasim_version ");
	puts_(w, h->ctasim_version);
	puts_(w, "\n");
	for (unsigned i = 0; i < h->kernel_count; i++)
		put_kernel(w, i, &h->kernels[i]);
	puts_(w, CTA__TRACE_COLUMNS "\n");
	return w->err;
}

static void writer_free(cta_trace_writer *w)
{
	free(w->path);
	free(w->tmp_path);
	free(w);
}

int cta_trace_writer_open(cta_trace_writer **out, const char *path,
                          const struct cta_trace_header *h)
{
	const char *what;
	*out = NULL;
	if (!path || !path[0] || !h)
		return fail(NULL, CTA_EINVAL, "no path or header", "trace", 0);
	if (h->version != CTA_TRACE_VERSION)
		return fail(NULL, CTA_EVERSION, "header version is not CTA_TRACE_VERSION", path, 0);
	if (check_header(h, &what))
		return fail(NULL, CTA_EINVAL, what, path, 0);

	cta_trace_writer *w = calloc(1, sizeof(*w));
	size_t pl = strlen(path);
	if (!w || !(w->path = malloc(pl + 1)) || !(w->tmp_path = malloc(pl + 48))) {
		if (w)
			writer_free(w);
		return fail(NULL, CTA_ENOMEM, "out of memory", path, 0);
	}
	memcpy(w->path, path, pl + 1);
	w->kernel_count = h->kernel_count;
	w->zkind = cta__zio_kind_of_name(path);
	if (!cta__zio_available(w->zkind)) {
		int gz = w->zkind == CTA__ZIO_GZIP;
		writer_free(w);
		return fail(
		    NULL, CTA_EUNSUPPORTED,
		    gz ? "the .gz name asks for gzip, but this ctasim was built without zlib"
		       : "the .zst name asks for zstd, but this ctasim was built without libzstd",
		    path, 0);
	}
	/* "-" is standard output and /dev/fd/N an open descriptor: written
	 * through a duplicate (keeping its offset), so close() leaves it open. */
	int pass_fd = -1;
	if (!strcmp(path, "-"))
		pass_fd = 1;
	else if (!strncmp(path, "/dev/fd/", 8) && path[8] >= '0' && path[8] <= '9' &&
	         strlen(path) < 16)
		pass_fd = atoi(path + 8);
	if (pass_fd >= 0) {
		w->direct = 1;
		w->zkind = CTA__ZIO_PLAIN;
		snprintf(w->tmp_path, pl + 48, "%s", pass_fd == 1 ? "<stdout>" : path);
		w->fd = fcntl(pass_fd, F_DUPFD_CLOEXEC, 3);
		if (w->fd < 0) {
			int e = errno;
			fail(NULL, CTA_EIO, "cannot write there", path, e);
			writer_free(w);
			return CTA_EIO;
		}
	}

	/* A path that exists and is not a regular file (/dev/null, a pipe, a
	 * terminal) is written directly: renaming a temporary onto it would
	 * replace the device node itself, and a stream has no "whole file"
	 * to protect anyway. */
	struct stat st;
	if (!w->direct && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		writer_free(w);
		return fail(NULL, CTA_EINVAL, "is a directory", path, 0);
	}
	if (!w->direct && stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		w->direct = 1;
		w->zkind = CTA__ZIO_PLAIN;
		snprintf(w->tmp_path, pl + 48, "%s", path);
		w->fd = open(path, O_WRONLY | O_CLOEXEC);
		if (w->fd < 0) {
			int e = errno;
			fail(NULL, CTA_EIO, "cannot open", path, e);
			writer_free(w);
			return CTA_EIO;
		}
	}

	/* A private name beside the target (O_EXCL | O_NOFOLLOW, drawn at
	 * random): a file or symlink planted there is never used. */
	if (!w->direct) {
		char *tmp;
		w->fd = cta_tmpfile_create(path, &tmp, last_msg, sizeof(last_msg));
		if (w->fd < 0) {
			int code = w->fd;
			writer_free(w);
			return code;
		}
		free(w->tmp_path);
		w->tmp_path = tmp;
	}
	if (write_header(w, h)) {
		int rc = w->err;
		close(w->fd);
		if (!w->direct)
			unlink(w->tmp_path);
		writer_free(w);
		return rc;
	}
	*out = w;
	return 0;
}

int cta_trace_writer_add(cta_trace_writer *w, const struct cta_trace_rec *r)
{
	if (w->err)
		return w->err;
	/* What the reader would reject is refused here, so that every file the
	 * writer finishes loads again. These do not poison the writer. */
	if ((unsigned)r->ev >= CTA_TEV__COUNT)
		return fail_soft(w, "record with an unknown event");
	if (r->kernel != CTA__TRACE_NO_KERNEL && r->kernel >= w->kernel_count)
		return fail_soft(w, "record names a kernel the header does not declare");
	if (r->ev == CTA_TEV_CANCEL_DONE &&
	    (r->code < CTA_CANCEL_SUCCESS || r->code > CTA_CANCEL_FAIL_INJECTED))
		return fail_soft(w, "cancel_done record with an unknown outcome");
	if (WBUF_SIZE - w->len < REC_MAX_FIXED && flush_buf(w))
		return w->err;

	char *p = w->buf + w->len;
	p = fmt_u64(p, r->t_ns);
	*p++ = ',';
	const char *en = cta_trace_event_name(r->ev);
	size_t el = strlen(en);
	memcpy(p, en, el);
	p += el;
	*p++ = ',';
	p = fmt_opt(p, r->kernel == CTA__TRACE_NO_KERNEL ? CTA_TRACE_NONE : r->kernel);
	*p++ = ',';
	p = fmt_opt(p, r->block);
	*p++ = ',';
	p = fmt_opt(p, r->phys);
	*p++ = ',';
	p = fmt_opt(p, r->sm);
	*p++ = ',';
	p = fmt_opt(p, r->arg);
	*p++ = ',';
	p = fmt_i64(p, r->code);
	*p++ = ',';
	w->len = (size_t)(p - w->buf);
	if (r->text && r->text[0] && put_text(w, r->text))
		return w->err;
	if (put(w, "\n", 1))
		return w->err;
	w->records++;
	return 0;
}

void cta_trace_writer_set_deterministic(cta_trace_writer *w, int deterministic)
{
	if (w)
		w->det = deterministic ? 1 : 0;
}

/* Replaces the plain temporary file by its compressed form, under a second
 * private name, so that the rename at close still publishes a whole file. */
static void compress_tmp(cta_trace_writer *w)
{
	size_t n = strlen(w->tmp_path) + 4;
	char *zt = malloc(n);
	if (!zt) {
		fail(w, CTA_ENOMEM, "out of memory", w->path, 0);
		return;
	}
	snprintf(zt, n, "%s.z", w->tmp_path);
	int zfd = open(zt, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (zfd < 0) {
		fail(w, CTA_EIO, "cannot create temporary file", zt, errno);
		free(zt);
		return;
	}
	char msg[256];
	int rc = cta__zio_compress(w->fd, zfd, w->zkind, msg, sizeof(msg));
	if (rc)
		fail(w, rc, msg, zt, 0);
	else if (fsync(zfd) != 0)
		fail(w, CTA_EIO, "fsync failed", zt, errno);
	if (close(zfd) != 0 && !w->err)
		fail(w, CTA_EIO, "close failed", zt, errno);
	if (w->err) {
		unlink(zt);
		free(zt);
		return;
	}
	/* From here the compressed file is the temporary one. */
	unlink(w->tmp_path);
	free(w->tmp_path);
	w->tmp_path = zt;
}

int cta_trace_writer_close(cta_trace_writer *w, int complete)
{
	if (!w)
		return 0;
	int rc = w->err;
	if (!rc) {
		char tail[64], *p = tail;
		const char *m = complete ? "#end records=" : "#incomplete records=";
		size_t ml = strlen(m);
		memcpy(p, m, ml);
		p = fmt_u64(p + ml, w->records);
		*p++ = '\n';
		/* fsync fails with EINVAL on pipes and devices, which have nothing
		 * to make durable. */
		/* The run learnt after the header was written that it was not
		 * reproducible: correct the one digit in place. */
		if (!put(w, tail, (size_t)(p - tail)) && !flush_buf(w) && w->det != w->det_header &&
		    !w->direct && pwrite(w->fd, w->det ? "1" : "0", 1, (off_t)w->det_off) != 1)
			fail(w, CTA_EIO, "cannot update the #deterministic header", w->tmp_path,
			     errno);
		if (!w->err && !w->direct && !w->zkind && fsync(w->fd) != 0)
			fail(w, CTA_EIO, "fsync failed", shown(w), errno);
		if (!w->err && !w->direct && w->zkind)
			compress_tmp(w);
		rc = w->err;
	}
	if (close(w->fd) != 0 && !rc)
		rc = fail(w, CTA_EIO, "close failed", shown(w), errno);
	/* An incomplete trace is still renamed: it is marked as such, and a
	 * failed run is exactly when someone wants to look at it. A trace
	 * whose writing failed is removed, since its end is unknown. */
	if (!rc && !w->direct && rename(w->tmp_path, w->path) != 0)
		rc = fail(w, CTA_EIO, "cannot rename the temporary file onto it", w->path, errno);
	if (rc && !w->direct)
		unlink(w->tmp_path);
	writer_free(w);
	return rc;
}

/* Called from a fatal-signal handler: only write(2), close(2) and rename(2),
 * no allocation. Whatever the buffer holds goes out, then the marker that
 * says the trace stops early, and the file takes its final name. */
void cta__trace_writer_emergency_close(cta_trace_writer *w, const char *why)
{
	if (!w || w->err)
		return;
	const char *m = "#incomplete records=";
	char tail[160], *p = tail;
	size_t ml = strlen(m);
	memcpy(p, m, ml);
	p = fmt_u64(p + ml, w->records);
	*p++ = ' ';
	size_t wl = strlen(why);
	if (wl > 100)
		wl = 100;
	memcpy(p, why, wl);
	p += wl;
	*p++ = '\n';
	/* The signal may have come in the middle of a record: only whole
	 * lines stay, the marker on a line of its own. */
	size_t keep = w->len;
	while (keep && w->buf[keep - 1] != '\n')
		keep--;
	if (!keep && w->line_open &&
	    (ftruncate(w->fd, (off_t)w->line_off) < 0 ||
	     lseek(w->fd, (off_t)w->line_off, SEEK_SET) < 0) &&
	    write(w->fd, "\n", 1) < 0)
		return;
	size_t off = 0;
	while (off < keep) {
		ssize_t n = write(w->fd, w->buf + off, keep - off);
		if (n <= 0)
			return;
		off += (size_t)n;
	}
	if (write(w->fd, tail, (size_t)(p - tail)) < 0)
		return;
	close(w->fd);
	if (!w->direct)
		rename(w->tmp_path, w->path);
}
