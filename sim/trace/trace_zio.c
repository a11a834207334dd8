/* Compressed traces: a streaming reader that undoes gzip (zlib) or zstd
 * (libzstd) compression found by the magic bytes of a file or stdin, a
 * whole-file reader, and the compressor the writer runs on a finished trace
 * whose name ends in .gz or .zst. Builds without either library say so. */
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

/* ---- The streaming reader ------------------------------------------- */

/* Compressed input is read in chunks of this size; the reader above asks
 * for decompressed text in chunks of its own. */
#define ZIN_CHUNK (1u << 18)

struct cta__zin {
	int fd, is_stdin, kind;
	unsigned char *in; /* compressed bytes not yet fed to the decoder */
	size_t in_len, in_pos;
	int in_eof, done;
	uint64_t consumed, size, out_total;
#if CTA_HAVE_ZLIB
	z_stream zs;
	int zs_live;
#endif
#if CTA_HAVE_ZSTD
	ZSTD_DStream *ds;
	size_t zst_last;
#endif
};

static int zin_fill(struct cta__zin *z, char *msg, size_t mlen)
{
	if (z->in_pos < z->in_len || z->in_eof)
		return 0;
	z->in_pos = z->in_len = 0;
	for (;;) {
		ssize_t n = read(z->fd, z->in, ZIN_CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return msgf(msg, mlen, CTA_EIO, "read error: %s", strerror(errno));
		if (n == 0)
			z->in_eof = 1;
		z->in_len = (size_t)n;
		z->consumed += (uint64_t)n;
		return 0;
	}
}

void cta__zin_close(struct cta__zin *z)
{
	if (!z)
		return;
#if CTA_HAVE_ZLIB
	if (z->zs_live)
		inflateEnd(&z->zs);
#endif
#if CTA_HAVE_ZSTD
	if (z->ds)
		ZSTD_freeDStream(z->ds);
#endif
	if (z->fd >= 0 && !z->is_stdin)
		close(z->fd);
	free(z->in);
	free(z);
}

int cta__zin_open(struct cta__zin **out, const char *path, char *msg, size_t mlen)
{
	*out = NULL;
	struct cta__zin *z = calloc(1, sizeof(*z));
	if (!z || !(z->in = malloc(ZIN_CHUNK))) {
		free(z);
		return msgf(msg, mlen, CTA_ENOMEM, "out of memory");
	}
	z->is_stdin = !strcmp(path, "-");
	z->fd = z->is_stdin ? 0 : open(path, O_RDONLY | O_CLOEXEC);
	if (z->fd < 0) {
		int e = errno;
		cta__zin_close(z);
		return msgf(msg, mlen, CTA_EIO, "cannot open: %s", strerror(e));
	}
	struct stat st;
	if (fstat(z->fd, &st) == 0) {
		if (S_ISDIR(st.st_mode)) {
			cta__zin_close(z);
			return msgf(msg, mlen, CTA_EINVAL, "is a directory, not a trace file");
		}
		if (S_ISREG(st.st_mode))
			z->size = (uint64_t)st.st_size;
	}
	/* The first bytes decide the format: at least 16 of them, unless the
	 * file is shorter. */
	while (!z->in_eof && z->in_len < 16) {
		ssize_t n = read(z->fd, z->in + z->in_len, ZIN_CHUNK - z->in_len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			cta__zin_close(z);
			return msgf(msg, mlen, CTA_EIO, "read error: %s", strerror(e));
		}
		if (n == 0)
			z->in_eof = 1;
		z->in_len += (size_t)n;
		z->consumed += (uint64_t)n;
	}
	z->kind = cta__zio_kind_of_data(z->in, z->in_len);
	/* Garbage is refused at its first bytes, not after reading it all
	 * (/dev/zero, /dev/urandom, a binary given by mistake). */
	if (z->kind == CTA__ZIO_PLAIN && z->in_len >= 16 &&
	    memcmp(z->in, CTA__TRACE_MAGIC, strlen(CTA__TRACE_MAGIC))) {
		cta__zin_close(z);
		return msgf(msg, mlen, CTA_EPARSE,
		            "not a ctasim trace (it does not start with '" CTA__TRACE_MAGIC "')");
	}
	int rc = 0;
	if (z->kind == CTA__ZIO_GZIP) {
#if CTA_HAVE_ZLIB
		/* 15 + 16: gzip framing only (the magic said gzip). */
		if (inflateInit2(&z->zs, 15 + 16) != Z_OK)
			rc = msgf(msg, mlen, CTA_ENOMEM, "out of memory");
		else
			z->zs_live = 1;
#else
		rc = msgf(msg, mlen, CTA_EUNSUPPORTED,
		          "gzip-compressed, but this ctasim was built without zlib");
#endif
	} else if (z->kind == CTA__ZIO_ZSTD) {
#if CTA_HAVE_ZSTD
		if (!(z->ds = ZSTD_createDStream()))
			rc = msgf(msg, mlen, CTA_ENOMEM, "out of memory");
		z->zst_last = 1;
#else
		rc = msgf(msg, mlen, CTA_EUNSUPPORTED,
		          "zstd-compressed, but this ctasim was built without libzstd");
#endif
	}
	if (rc) {
		cta__zin_close(z);
		return rc;
	}
	*out = z;
	return 0;
}

void cta__zin_position(const struct cta__zin *z, uint64_t *done, uint64_t *total)
{
	*done = z->consumed - (z->in_len - z->in_pos);
	*total = z->size;
}

#if CTA_HAVE_ZLIB
static int zin_gunzip(struct cta__zin *z, char *buf, size_t cap, size_t *got, char *msg,
                      size_t mlen)
{
	while (*got == 0 && !z->done) {
		int rc = zin_fill(z, msg, mlen);
		if (rc)
			return rc;
		size_t avail = z->in_len - z->in_pos;
		z->zs.next_in = z->in + z->in_pos;
		z->zs.avail_in = (uInt)avail;
		z->zs.next_out = (Bytef *)buf;
		z->zs.avail_out = (uInt)(cap > (1u << 30) ? 1u << 30 : cap);
		uInt ao = z->zs.avail_out;
		int r = inflate(&z->zs, Z_NO_FLUSH);
		z->in_pos += avail - z->zs.avail_in;
		*got = ao - z->zs.avail_out;
		if (r == Z_STREAM_END) {
			/* gzip allows several members one after another (what
			 * `cat a.gz b.gz` makes); trailing zeros are padding. */
			for (;;) {
				while (z->in_pos < z->in_len && z->in[z->in_pos] == 0)
					z->in_pos++;
				if (z->in_pos < z->in_len)
					break;
				if (z->in_eof) {
					z->done = 1;
					return 0;
				}
				if ((rc = zin_fill(z, msg, mlen)) != 0)
					return rc;
			}
			if (inflateReset(&z->zs) != Z_OK)
				return msgf(msg, mlen, CTA_EPARSE,
				            "gzip: bad data after the first member");
			continue;
		}
		if (r == Z_BUF_ERROR && z->in_eof && z->in_pos == z->in_len && *got == 0)
			return msgf(msg, mlen, CTA_EPARSE,
			            "gzip: truncated (the compressed data ends early)");
		if (r != Z_OK && r != Z_BUF_ERROR)
			return msgf(msg, mlen, CTA_EPARSE, "gzip: corrupt data (%s)",
			            z->zs.msg ? z->zs.msg : "inflate failed");
		if (*got == 0 && z->in_eof && z->in_pos == z->in_len)
			return msgf(msg, mlen, CTA_EPARSE,
			            "gzip: truncated (the compressed data ends early)");
	}
	return 0;
}
#endif

#if CTA_HAVE_ZSTD
static int zin_unzstd(struct cta__zin *z, char *buf, size_t cap, size_t *got, char *msg,
                      size_t mlen)
{
	while (*got == 0 && !z->done) {
		int rc = zin_fill(z, msg, mlen);
		if (rc)
			return rc;
		if (z->in_eof && z->in_pos == z->in_len && z->zst_last == 0) {
			/* The input is spent and its last frame ended. */
			z->done = 1;
			break;
		}
		ZSTD_inBuffer ib = {z->in, z->in_len, z->in_pos};
		ZSTD_outBuffer ob = {buf, cap, 0};
		size_t r = ZSTD_decompressStream(z->ds, &ob, &ib);
		int moved = ib.pos != z->in_pos || ob.pos;
		z->in_pos = ib.pos;
		*got = ob.pos;
		if (ZSTD_isError(r))
			return msgf(msg, mlen, CTA_EPARSE, "zstd: corrupt data (%s)",
			            ZSTD_getErrorName(r));
		/* 0 once a frame is whole (and its output flushed); a call that
		 * moved nothing says nothing new. */
		if (moved)
			z->zst_last = r;
		if (*got == 0 && z->in_eof && z->in_pos == z->in_len) {
			/* Every frame ended: done; else the data stops inside one. */
			if (z->zst_last != 0)
				return msgf(msg, mlen, CTA_EPARSE,
				            "zstd: truncated (the compressed data ends early)");
			z->done = 1;
		}
	}
	return 0;
}
#endif

int cta__zin_read(struct cta__zin *z, char *buf, size_t cap, size_t *got, char *msg, size_t mlen)
{
	*got = 0;
	if (z->done || cap == 0)
		return 0;
	int rc = 0;
	if (z->kind == CTA__ZIO_PLAIN) {
		if ((rc = zin_fill(z, msg, mlen)) != 0)
			return rc;
		size_t n = z->in_len - z->in_pos;
		if (n > cap)
			n = cap;
		memcpy(buf, z->in + z->in_pos, n);
		z->in_pos += n;
		*got = n;
		if (n == 0)
			z->done = 1;
	}
#if CTA_HAVE_ZLIB
	else if (z->kind == CTA__ZIO_GZIP)
		rc = zin_gunzip(z, buf, cap, got, msg, mlen);
#endif
#if CTA_HAVE_ZSTD
	else if (z->kind == CTA__ZIO_ZSTD)
		rc = zin_unzstd(z, buf, cap, got, msg, mlen);
#endif
	if (rc)
		return rc;
	/* A trace (decompressed, too) larger than the documented limit is
	 * refused; so is a compression bomb. */
	z->out_total += *got;
	if (z->out_total > CTA_TRACE_MAX_BYTES)
		return msgf(msg, mlen, CTA_ERANGE,
		            "larger than the limit of %llu bytes (CTA_TRACE_MAX_BYTES)",
		            (unsigned long long)CTA_TRACE_MAX_BYTES);
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

int cta_trace_compression_of_name(const char *name)
{
	int kind = cta__zio_kind_of_name(name);
	return cta__zio_available(kind) ? kind : CTA_EUNSUPPORTED;
}

int cta_trace_compress_fd(const char *name, int in_fd, int out_fd, char *msg, size_t mlen)
{
	int kind = cta_trace_compression_of_name(name);
	if (kind < 0)
		return msgf(msg, mlen, kind, "%s asks for %s, but this ctasim was built without it",
		            name,
		            cta__zio_kind_of_name(name) == CTA__ZIO_GZIP ? "gzip (zlib)"
		                                                         : "zstd (libzstd)");
	if (kind == CTA__ZIO_PLAIN)
		return msgf(msg, mlen, CTA_EINVAL, "%s: no .gz or .zst suffix", name);
	return cta__zio_compress(in_fd, out_fd, kind, msg, mlen);
}
