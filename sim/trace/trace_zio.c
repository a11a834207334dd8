/* Compressed traces: a reader that takes a whole file (or stdin) and
 * undoes gzip (zlib) or zstd (libzstd) compression found by its magic
 * bytes, and the compressor the writer runs on a finished trace whose name
 * ends in .gz or .zst. Builds without either library say so by name. */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef CTA_HAVE_ZLIB
#define CTA_HAVE_ZLIB 0
#endif
#ifndef CTA_HAVE_ZSTD
#define CTA_HAVE_ZSTD 0
#endif

#if CTA_HAVE_ZLIB
#include <zlib.h>
#endif
#if CTA_HAVE_ZSTD
#include <zstd.h>
#endif

#include "trace_internal.h"

static int msgf(char *msg, size_t len, int code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static int msgf(char *msg, size_t len, int code, const char *fmt, ...)
{
	if (msg && len) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, len, fmt, ap);
		va_end(ap);
	}
	return code;
}

int cta__zio_kind_of_name(const char *path)
{
	size_t n = path ? strlen(path) : 0;
	if (n > 3 && !strcmp(path + n - 3, ".gz"))
		return CTA__ZIO_GZIP;
	if (n > 4 && !strcmp(path + n - 4, ".zst"))
		return CTA__ZIO_ZSTD;
	return CTA__ZIO_PLAIN;
}

int cta__zio_kind_of_data(const void *data, size_t len)
{
	const unsigned char *p = data;
	if (len >= 2 && p[0] == 0x1f && p[1] == 0x8b)
		return CTA__ZIO_GZIP;
	if (len >= 4 && p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd)
		return CTA__ZIO_ZSTD;
	return CTA__ZIO_PLAIN;
}

int cta__zio_available(int kind)
{
	switch (kind) {
	case CTA__ZIO_GZIP:
		return CTA_HAVE_ZLIB;
	case CTA__ZIO_ZSTD:
		return CTA_HAVE_ZSTD;
	default:
		return 1;
	}
}

/* A growing output buffer, kept one byte longer than its contents for the
 * NUL the parser wants. */
struct obuf {
	char *p;
	size_t len, cap;
};

static int obuf_room(struct obuf *b, size_t want)
{
	if (b->cap - b->len > want)
		return 0;
	/* A trace (decompressed, too) larger than the documented limit is
	 * refused before memory runs out; so is a compression bomb. */
	if (b->len >= CTA_TRACE_MAX_BYTES)
		return CTA_ERANGE;
	size_t nc = b->cap ? b->cap : 1 << 16;
	while (nc - b->len <= want) {
		if (nc > SIZE_MAX / 2)
			return CTA_ENOMEM;
		nc *= 2;
	}
	char *np = realloc(b->p, nc);
	if (!np)
		return CTA_ENOMEM;
	b->p = np;
	b->cap = nc;
	return 0;
}

static int room_fail(int rc, char *msg, size_t mlen)
{
	if (rc == CTA_ERANGE)
		return msgf(msg, mlen, rc,
		            "larger than the limit of %llu bytes (CTA_TRACE_MAX_BYTES)",
		            (unsigned long long)CTA_TRACE_MAX_BYTES);
	return msgf(msg, mlen, CTA_ENOMEM, "out of memory");
}

static int read_all(int fd, struct obuf *b, char *msg, size_t mlen)
{
	for (;;) {
		int rr = obuf_room(b, 1 << 16);
		if (rr)
			return room_fail(rr, msg, mlen);
		ssize_t n = read(fd, b->p + b->len, b->cap - b->len - 1);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return msgf(msg, mlen, CTA_EIO, "read error: %s", strerror(errno));
		}
		if (n == 0)
			return 0;
		b->len += (size_t)n;
		/* Garbage is refused at its first bytes, not after reading it
		 * all (/dev/zero, /dev/urandom, a binary given by mistake). */
		if (b->len - (size_t)n < 16 && b->len >= 16 &&
		    cta__zio_kind_of_data(b->p, b->len) == CTA__ZIO_PLAIN &&
		    memcmp(b->p, CTA__TRACE_MAGIC, b->len < 13 ? b->len : 13))
			return msgf(msg, mlen, CTA_EPARSE,
			            "not a ctasim trace (it does not start with '" CTA__TRACE_MAGIC
			            "')");
	}
}

#if CTA_HAVE_ZLIB
static int gunzip(const char *in, size_t inlen, struct obuf *b, char *msg, size_t mlen)
{
	z_stream zs;
	memset(&zs, 0, sizeof(zs));
	/* 15 + 16: gzip framing only (the magic said gzip). */
	if (inflateInit2(&zs, 15 + 16) != Z_OK)
		return msgf(msg, mlen, CTA_ENOMEM, "out of memory");
	size_t pos = 0;
	int rc = 0;
	for (;;) {
		if ((rc = obuf_room(b, 1 << 18)) != 0) {
			rc = room_fail(rc, msg, mlen);
			break;
		}
		/* zlib counts in uInt: feed at most 1 GiB at a time. */
		size_t in_left = inlen - pos, out_left = b->cap - b->len - 1;
		zs.next_in = (Bytef *)(uintptr_t)(in + pos);
		zs.avail_in = (uInt)(in_left > (1u << 30) ? 1u << 30 : in_left);
		zs.next_out = (Bytef *)(b->p + b->len);
		zs.avail_out = (uInt)(out_left > (1u << 30) ? 1u << 30 : out_left);
		uInt ai = zs.avail_in, ao = zs.avail_out;
		int z = inflate(&zs, Z_NO_FLUSH);
		pos += ai - zs.avail_in;
		b->len += ao - zs.avail_out;
		if (z == Z_STREAM_END) {
			/* gzip allows several members one after another (what
			 * `cat a.gz b.gz` makes); trailing zeros are padding. */
			size_t k = pos;
			while (k < inlen && in[k] == 0)
				k++;
			if (k == inlen)
				break;
			if (inflateReset(&zs) != Z_OK) {
				rc = msgf(msg, mlen, CTA_EPARSE,
				          "gzip: bad data after the first member");
				break;
			}
			continue;
		}
		if (z == Z_BUF_ERROR && pos == inlen && ao == zs.avail_out) {
			rc = msgf(msg, mlen, CTA_EPARSE,
			          "gzip: truncated (the compressed data ends early)");
			break;
		}
		if (z != Z_OK && z != Z_BUF_ERROR) {
			rc = msgf(msg, mlen, CTA_EPARSE, "gzip: corrupt data (%s)",
			          zs.msg ? zs.msg : "inflate failed");
			break;
		}
	}
	inflateEnd(&zs);
	return rc;
}
#endif

#if CTA_HAVE_ZSTD
static int unzstd(const char *in, size_t inlen, struct obuf *b, char *msg, size_t mlen)
{
	ZSTD_DStream *ds = ZSTD_createDStream();
	if (!ds)
		return msgf(msg, mlen, CTA_ENOMEM, "out of memory");
	ZSTD_inBuffer ib = {in, inlen, 0};
	int rc = 0;
	size_t last = 1;
	while (ib.pos < ib.size) {
		if ((rc = obuf_room(b, 1 << 18)) != 0) {
			rc = room_fail(rc, msg, mlen);
			break;
		}
		ZSTD_outBuffer ob = {b->p + b->len, b->cap - b->len - 1, 0};
		last = ZSTD_decompressStream(ds, &ob, &ib);
		b->len += ob.pos;
		if (ZSTD_isError(last)) {
			rc = msgf(msg, mlen, CTA_EPARSE, "zstd: corrupt data (%s)",
			          ZSTD_getErrorName(last));
			break;
		}
		if (ob.pos == 0 && ib.pos == ib.size)
			break;
	}
	/* Drain what the decoder still holds once the input is consumed. */
	while (!rc && last != 0) {
		if ((rc = obuf_room(b, 1 << 18)) != 0) {
			rc = room_fail(rc, msg, mlen);
			break;
		}
		ZSTD_outBuffer ob = {b->p + b->len, b->cap - b->len - 1, 0};
		last = ZSTD_decompressStream(ds, &ob, &ib);
		b->len += ob.pos;
		if (ZSTD_isError(last)) {
			rc = msgf(msg, mlen, CTA_EPARSE, "zstd: corrupt data (%s)",
			          ZSTD_getErrorName(last));
			break;
		}
		if (ob.pos == 0 && last != 0) {
			rc = msgf(msg, mlen, CTA_EPARSE,
			          "zstd: truncated (the compressed data ends early)");
			break;
		}
	}
	ZSTD_freeDStream(ds);
	return rc;
}
#endif

int cta__zio_read(const char *path, char **out, size_t *out_len, char *msg, size_t mlen)
{
	*out = NULL;
	*out_len = 0;
	int is_stdin = !strcmp(path, "-");
	int fd = is_stdin ? 0 : open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return msgf(msg, mlen, CTA_EIO, "cannot open: %s", strerror(errno));
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		if (!is_stdin)
			close(fd);
		return msgf(msg, mlen, CTA_EINVAL, "is a directory, not a trace file");
	}
	struct obuf raw = {0};
	int rc = read_all(fd, &raw, msg, mlen);
	if (!is_stdin)
		close(fd);
	if (rc) {
		free(raw.p);
		return rc;
	}
	int kind = cta__zio_kind_of_data(raw.p, raw.len);
	if (kind == CTA__ZIO_PLAIN) {
		if (!raw.p && obuf_room(&raw, 1))
			return msgf(msg, mlen, CTA_ENOMEM, "out of memory");
		raw.p[raw.len] = 0;
		*out = raw.p;
		*out_len = raw.len;
		return 0;
	}
	struct obuf dec = {0};
	rc = CTA_EUNSUPPORTED;
	if (kind == CTA__ZIO_GZIP) {
#if CTA_HAVE_ZLIB
		rc = gunzip(raw.p, raw.len, &dec, msg, mlen);
#else
		msgf(msg, mlen, rc, "gzip-compressed, but this ctasim was built without zlib");
#endif
	} else {
#if CTA_HAVE_ZSTD
		rc = unzstd(raw.p, raw.len, &dec, msg, mlen);
#else
		msgf(msg, mlen, rc, "zstd-compressed, but this ctasim was built without libzstd");
#endif
	}
	free(raw.p);
	if (!rc && !dec.p && obuf_room(&dec, 1))
		rc = msgf(msg, mlen, CTA_ENOMEM, "out of memory");
	if (rc) {
		free(dec.p);
		return rc;
	}
	dec.p[dec.len] = 0;
	*out = dec.p;
	*out_len = dec.len;
	return 0;
}

static int write_all(int fd, const void *p, size_t n)
{
	const char *c = p;
	while (n) {
		ssize_t k = write(fd, c, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		c += k;
		n -= (size_t)k;
	}
	return 0;
}

#define ZBUF (1u << 18)

int cta__zio_compress(int in_fd, int out_fd, int kind, char *msg, size_t mlen)
{
	if (lseek(in_fd, 0, SEEK_SET) != 0)
		return msgf(msg, mlen, CTA_EIO, "cannot rewind the temporary file: %s",
		            strerror(errno));
	char *in = malloc(ZBUF), *out = malloc(ZBUF);
	int rc = 0;
	if (!in || !out) {
		rc = msgf(msg, mlen, CTA_ENOMEM, "out of memory");
		goto done;
	}
	if (kind == CTA__ZIO_GZIP) {
#if CTA_HAVE_ZLIB
		z_stream zs;
		memset(&zs, 0, sizeof(zs));
		/* Level 6 is gzip's own default; 15 + 16 asks for gzip framing. */
		if (deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
			rc = msgf(msg, mlen, CTA_ENOMEM, "out of memory");
			goto done;
		}
		int flush = Z_NO_FLUSH;
		while (!rc && flush != Z_FINISH) {
			ssize_t n = read(in_fd, in, ZBUF);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				rc = msgf(msg, mlen, CTA_EIO, "read error: %s", strerror(errno));
				break;
			}
			flush = n == 0 ? Z_FINISH : Z_NO_FLUSH;
			zs.next_in = (Bytef *)in;
			zs.avail_in = (uInt)n;
			do {
				zs.next_out = (Bytef *)out;
				zs.avail_out = ZBUF;
				deflate(&zs, flush);
				if (write_all(out_fd, out, ZBUF - zs.avail_out)) {
					rc = msgf(msg, mlen, CTA_EIO, "write failed: %s",
					          strerror(errno));
					break;
				}
			} while (zs.avail_out == 0);
		}
		deflateEnd(&zs);
#else
		rc = msgf(msg, mlen, CTA_EUNSUPPORTED,
		          "a .gz name asks for gzip, but this ctasim was built without zlib");
#endif
	} else if (kind == CTA__ZIO_ZSTD) {
#if CTA_HAVE_ZSTD
		ZSTD_CCtx *cc = ZSTD_createCCtx();
		if (!cc) {
			rc = msgf(msg, mlen, CTA_ENOMEM, "out of memory");
			goto done;
		}
		ZSTD_CCtx_setParameter(cc, ZSTD_c_compressionLevel, 3);
		ZSTD_CCtx_setParameter(cc, ZSTD_c_checksumFlag, 1);
		int last = 0;
		while (!rc && !last) {
			ssize_t n = read(in_fd, in, ZBUF);
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0) {
				rc = msgf(msg, mlen, CTA_EIO, "read error: %s", strerror(errno));
				break;
			}
			last = n == 0;
			ZSTD_EndDirective mode = last ? ZSTD_e_end : ZSTD_e_continue;
			ZSTD_inBuffer ib = {in, (size_t)n, 0};
			size_t left;
			do {
				ZSTD_outBuffer ob = {out, ZBUF, 0};
				left = ZSTD_compressStream2(cc, &ob, &ib, mode);
				if (ZSTD_isError(left)) {
					rc = msgf(msg, mlen, CTA_EIO, "zstd: %s",
					          ZSTD_getErrorName(left));
					break;
				}
				if (write_all(out_fd, out, ob.pos)) {
					rc = msgf(msg, mlen, CTA_EIO, "write failed: %s",
					          strerror(errno));
					break;
				}
			} while (last ? left != 0 : ib.pos < ib.size);
		}
		ZSTD_freeCCtx(cc);
#else
		rc = msgf(msg, mlen, CTA_EUNSUPPORTED,
		          "a .zst name asks for zstd, but this ctasim was built without libzstd");
#endif
	}
done:
	free(in);
	free(out);
	return rc;
}
