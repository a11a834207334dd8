/* Output temporaries created safely beside their target, the sweep of
 * temporaries that killed runs left, and the escaping of user text in
 * messages (include/ctasim/io.h). */
#include "ctasim/io.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ctasim/errors.h"

/* Random bits for temporary names: unpredictable names mean nobody can
 * plant a file there in advance, O_EXCL | O_NOFOLLOW mean a planted one is
 * never used anyway. getrandom can fail in a restricted sandbox; the clock,
 * pid and a counter still give names that differ per attempt. */
static uint64_t name_bits(void)
{
	static _Atomic uint64_t counter;
	uint64_t r = 0;
	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) != (ssize_t)sizeof(r)) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		r = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ (uint64_t)getpid() << 40;
	}
	r += ++counter * 0x9e3779b97f4a7c15ull;
	r ^= r >> 31;
	r *= 0xbf58476d1ce4e5b9ull;
	return r ^ (r >> 29);
}

int cta_tmpfile_create(const char *path, char **tmp_out, char *err, size_t errlen)
{
	static const char alnum[] =
	    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	*tmp_out = NULL;
	size_t n = strlen(path) + 48;
	char *tmp = malloc(n);
	if (!tmp) {
		snprintf(err, errlen, "%s: out of memory", path);
		return CTA_ENOMEM;
	}
	long pid = (long)getpid();
	for (int attempt = 0;; attempt++) {
		uint64_t r = name_bits();
		char sfx[7];
		for (int i = 0; i < 6; i++, r /= 62)
			sfx[i] = alnum[r % 62];
		sfx[6] = 0;
		snprintf(tmp, n, "%s.tmp.%ld.%s", path, pid, sfx);
		int fd = open(tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
		if (fd >= 0) {
			*tmp_out = tmp;
			return fd;
		}
		int e = errno;
		if ((e == EEXIST || e == ELOOP) && attempt < 100)
			continue;
		/* A folder that is missing or not ours is the caller's mistake,
		 * not an I/O failure. */
		int code = e == ENOENT || e == ENOTDIR || e == EACCES || e == EROFS || e == EPERM
		               ? CTA_EINVAL
		               : CTA_EIO;
		snprintf(err, errlen, "%s: cannot create a file there: %s", path, strerror(e));
		free(tmp);
		return code;
	}
}

/* The pid in "<pid>" or "<pid>.<rest>" or "<pid>-<n>" (the names earlier
 * versions used), or 0 when s is not such a name. */
static long name_pid(const char *s)
{
	long pid = 0;
	const char *p = s;
	while (*p >= '0' && *p <= '9' && p - s < 10)
		pid = pid * 10 + (*p++ - '0');
	if (p == s || (*p && *p != '.' && *p != '-'))
		return 0;
	return pid;
}

int cta_tmpfile_sweep(const char *path, char *first, size_t firstlen)
{
	if (first && firstlen)
		first[0] = 0;
	const char *slash = strrchr(path, '/');
	const char *base = slash ? slash + 1 : path;
	size_t dl = slash ? (size_t)(slash - path) : 0;
	char dir[4096];
	if (dl + 1 >= sizeof(dir))
		return 0;
	if (slash) {
		memcpy(dir, path, dl ? dl : 1);
		dir[dl ? dl : 1] = 0;
	} else {
		strcpy(dir, ".");
	}
	size_t bl = strlen(base);
	if (!bl)
		return 0;
	DIR *d = opendir(dir);
	if (!d)
		return 0;
	int removed = 0;
	long self = (long)getpid();
	struct dirent *e;
	while ((e = readdir(d))) {
		const char *nm = e->d_name;
		if (strncmp(nm, base, bl) || strncmp(nm + bl, ".tmp.", 5))
			continue;
		long pid = name_pid(nm + bl + 5);
		if (pid <= 0 || pid == self)
			continue;
		/* Alive (or not ours to ask about): its writer may still finish. */
		if (kill((pid_t)pid, 0) == 0 || errno != ESRCH)
			continue;
		struct stat st;
		if (fstatat(dirfd(d), nm, &st, AT_SYMLINK_NOFOLLOW) || !S_ISREG(st.st_mode) ||
		    st.st_uid != geteuid())
			continue;
		if (unlinkat(dirfd(d), nm, 0) == 0) {
			if (!removed && first && firstlen)
				snprintf(first, firstlen, "%s/%s", dir, nm);
			removed++;
		}
	}
	closedir(d);
	return removed;
}

char *cta_escape(char *buf, size_t len, const char *s, int keep_lines)
{
	static const char hex[] = "0123456789abcdef";
	size_t o = 0;
	if (!len)
		return buf;
	const unsigned char *p = (const unsigned char *)s;
	while (*p) {
		char e[16];
		size_t el = 0, take = 1;
		unsigned c = *p;
		if ((c == '\n' || c == '\t') && keep_lines) {
			e[el++] = (char)c;
		} else if (c < 0x20 || c == 0x7f) {
			const char *named = c == 0x1b   ? "\\e"
			                    : c == '\a' ? "\\a"
			                    : c == '\b' ? "\\b"
			                    : c == '\n' ? "\\n"
			                    : c == '\r' ? "\\r"
			                    : c == '\t' ? "\\t"
			                                : NULL;
			if (named) {
				el = strlen(named);
				memcpy(e, named, el);
			} else {
				e[el++] = '\\', e[el++] = 'x', e[el++] = hex[c >> 4],
				e[el++] = hex[c & 15];
			}
		} else if (c < 0x80) {
			e[el++] = (char)c;
		} else {
			/* A valid UTF-8 sequence passes unless it encodes a C1
			 * control (U+0080..U+009F, which terminals obey like ESC
			 * sequences); any other byte >= 0x80 is escaped. */
			size_t need = c >= 0xc2 && c <= 0xdf   ? 2
			              : c >= 0xe0 && c <= 0xef ? 3
			              : c >= 0xf0 && c <= 0xf4 ? 4
			                                       : 0;
			size_t k = 1;
			while (k < need && (p[k] & 0xc0) == 0x80)
				k++;
			int ok = need && k == need && !(c == 0xc2 && p[1] < 0xa0) &&
			         !(c == 0xe0 && p[1] < 0xa0) && !(c == 0xf0 && p[1] < 0x90) &&
			         !(c == 0xf4 && p[1] > 0x8f) && !(c == 0xed && p[1] > 0x9f);
			if (ok) {
				take = need;
				memcpy(e, p, need);
				el = need;
			} else {
				e[el++] = '\\', e[el++] = 'x', e[el++] = hex[c >> 4],
				e[el++] = hex[c & 15];
			}
		}
		if (o + el >= len)
			break;
		memcpy(buf + o, e, el);
		o += el;
		p += take;
	}
	buf[o] = 0;
	return buf;
}
