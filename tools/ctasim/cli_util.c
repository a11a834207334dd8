/* Helpers shared by the subcommands: parsing numbers and dimension lists
 * with messages that name the option, resolving device models, and loading
 * a user's kernels. */
#include "cli_util.h"
#include "progress.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "ctasim/errors.h"
#include "ctasim/io.h"
#include "ctasim/trace.h"

int cli_is(const char *arg, const char *opt)
{
	size_t n = strlen(opt);
	return !strncmp(arg, opt, n) && (arg[n] == 0 || arg[n] == '=');
}

const char *cli_value(const char *cmd, int argc, char **argv, int *i, const char *opt)
{
	const char *eq = strchr(argv[*i], '=');
	if (eq)
		return eq + 1;
	if (*i + 1 >= argc) {
		fprintf(stderr, "ctasim %s: option %s needs a value\n", cmd, opt);
		return NULL;
	}
	return argv[++*i];
}

/* Every option value goes through the library's one number parser, so the
 * command line, --arg and scenario files accept and refuse the same text. */
int cli_parse_u64(const char *cmd, const char *opt, const char *v, uint64_t min, uint64_t max,
                  uint64_t *out)
{
	char why[96], ev[200];
	if (cta_parse_uint(v, min, max, CTA_NUM_SUFFIX | CTA_NUM_SHIFT, out, why, sizeof(why)) <
	    0) {
		fprintf(stderr, "ctasim %s: %s '%s': %s\n", cmd, opt,
		        cta_escape(ev, sizeof(ev), v ? v : "", 0), why);
		return -1;
	}
	return 0;
}

int cli_parse_double(const char *cmd, const char *opt, const char *v, double min, double max,
                     double *out)
{
	char why[96], ev[200];
	if (cta_parse_real(v, min, max, out, why, sizeof(why)) < 0) {
		fprintf(stderr, "ctasim %s: %s '%s': %s\n", cmd, opt,
		        cta_escape(ev, sizeof(ev), v ? v : "", 0), why);
		return -1;
	}
	return 0;
}

int cli_parse_dims(const char *cmd, const char *opt, const char *v, unsigned d[3])
{
	char ev[200], why[96] = "more than 3 dimensions";
	char axis = 'x';
	d[0] = d[1] = d[2] = 1;
	const char *p = v;
	for (int i = 0; i < 3; i++) {
		char part[32];
		size_t n = strcspn(p, ",x");
		axis = "xyz"[i];
		if (n >= sizeof(part)) {
			snprintf(why, sizeof(why), "too long");
			goto bad;
		}
		memcpy(part, p, n);
		part[n] = 0;
		uint64_t x;
		/* Syntax and 32 bits only: cta_sim_launch checks CUDA's limits
		 * (0 refused as CUDA refuses it, 65535 for y and z, ...) and
		 * names the one broken. */
		if (cta_parse_uint(part, 0, UINT32_MAX, 0, &x, why, sizeof(why)) < 0)
			goto bad;
		d[i] = (unsigned)x;
		if (p[n] == 0)
			return 0;
		p += n + 1;
	}
	axis = 0;
bad:
	if (axis)
		fprintf(stderr,
		        "ctasim %s: %s '%s': expected X[,Y[,Z]] with positive integers (%c: %s)\n",
		        cmd, opt, cta_escape(ev, sizeof(ev), v, 0), axis, why);
	else
		fprintf(stderr,
		        "ctasim %s: %s '%s': expected X[,Y[,Z]] with positive integers (%s)\n", cmd,
		        opt, cta_escape(ev, sizeof(ev), v, 0), why);
	return -1;
}

int cli_device(const char *cmd, const char *name, struct cta_device_model *m)
{
	char err[512];
	int rc = cta_device_resolve(m, name ? name : "H100-SXM", err, sizeof(err));
	if (rc < 0) {
		fprintf(stderr, "ctasim %s: --device: %s\n", cmd, err);
		return -1;
	}
	if (!m->fitted_on[0])
		fprintf(stderr,
		        "ctasim %s: warning: device model %s is not fitted to hardware traces: "
		        "placement and block times are estimates (docs/FIDELITY.md)\n",
		        cmd, m->name);
	return 0;
}

const char *cli_loaded[16];
size_t cli_loaded_count;

int cli_load(const char *cmd, const char *path)
{
	/* RTLD_GLOBAL is not needed: the object registers its kernels and
	 * harnesses through constructors that call into this executable. */
	void *h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "ctasim %s: --load %s: %s\n", cmd, path, dlerror());
		return -1;
	}
	if (cli_loaded_count < sizeof(cli_loaded) / sizeof(cli_loaded[0]))
		cli_loaded[cli_loaded_count++] = path;
	return 0;
}

/* ---- checked streams ------------------------------------------------------
 * stdio forgets why a write failed: by the time ferror() says so, errno is
 * long gone. These streams write through write(2) themselves and keep the
 * first errno, so that every message about a failed write names it
 * ("No space left on device"). stderr's stream also escapes control bytes,
 * so that no message echoing a model file, a scenario or an argument can
 * drive the terminal. */
struct fd_cookie {
	int fd;
	int *err;   /* first failure's errno, or NULL */
	int escape; /* stderr: control bytes escaped */
};

int cli_stdout_err;

static ssize_t write_all(int fd, const char *buf, size_t n)
{
	size_t off = 0;
	while (off < n) {
		ssize_t w = write(fd, buf + off, n - off);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -1;
		off += (size_t)w;
	}
	return (ssize_t)n;
}

static ssize_t cookie_write(void *c, const char *buf, size_t n)
{
	struct fd_cookie *k = c;
	if (k->escape) {
		/* Escaped line by line, in pieces that keep UTF-8 sequences
		 * whole (a message is one write on an unbuffered stream). */
		char in[256], out[1100];
		size_t off = 0;
		while (off < n) {
			size_t m = n - off < sizeof(in) - 1 ? n - off : sizeof(in) - 1;
			while (m < n - off && m > 1 && ((unsigned char)buf[off + m] & 0xc0) == 0x80)
				m--;
			memcpy(in, buf + off, m);
			in[m] = 0;
			/* An embedded NUL ends the piece: skip it. */
			size_t l = strlen(in);
			cta_escape(out, sizeof(out), in, 1);
			if (write_all(k->fd, out, strlen(out)) < 0)
				return (ssize_t)off ? (ssize_t)off : -1;
			off += l ? l : 1;
		}
		return (ssize_t)n;
	}
	if (write_all(k->fd, buf, n) < 0) {
		if (k->err && !*k->err)
			*k->err = errno;
		return -1;
	}
	return (ssize_t)n;
}

static int cookie_close(void *c)
{
	struct fd_cookie *k = c;
	int rc = 0;
	if (k->fd > 2 && close(k->fd) != 0) {
		if (k->err && !*k->err)
			*k->err = errno;
		rc = -1;
	}
	free(k);
	return rc;
}

/* The standard streams' cookies: those streams stay open until exit, and
 * a pointer here keeps LeakSanitizer from calling their cookies leaked. */
static struct fd_cookie *std_cookies[3];

static FILE *fd_stream(int fd, int *err, int escape)
{
	struct fd_cookie *k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	if (fd >= 0 && fd <= 2)
		std_cookies[fd] = k;
	k->fd = fd;
	k->err = err;
	k->escape = escape;
	cookie_io_functions_t io = {.write = cookie_write, .close = cookie_close};
	FILE *f = fopencookie(k, "w", io);
	if (!f)
		free(k);
	return f;
}

FILE *cli_fd_stream(int fd, int *err)
{
	return fd_stream(fd, err, 0);
}

void cli_stdio_init(void)
{
	FILE *o = fd_stream(1, &cli_stdout_err, 0);
	FILE *e = fd_stream(2, NULL, 1);
	if (o) {
		/* A terminal sees each line as it comes, as with the real stdout. */
		if (isatty(1))
			setvbuf(o, NULL, _IOLBF, 0);
		stdout = o;
	}
	if (e) {
		setvbuf(e, NULL, _IONBF, 0);
		stderr = e;
	}
}

int cli_is_stdio(const char *path)
{
	return path && path[0] == '-' && path[1] == 0;
}

/* The temporary of the output being written, for the SIGINT/SIGTERM
 * handler (cli_interrupted) to remove: one output at a time is open. */
static char *volatile pending_tmp;
const char *volatile cli_trace_path;

void cli_sweep_stale(const char *cmd, const char *path)
{
	char first[4200], ev[400];
	if (cli_is_stdio(path))
		return;
	int n = cta_tmpfile_sweep(path, first, sizeof(first));
	if (n > 0)
		fprintf(
		    stderr,
		    "ctasim %s: note: removed %d temporary file%s that a killed run left (%s%s)\n",
		    cmd, n, n == 1 ? "" : "s", cta_escape(ev, sizeof(ev), first, 0),
		    n > 1 ? ", ..." : "");
}

int cli_out_open(struct cli_out *o, const char *cmd, const char *path)
{
	char ev[400];
	memset(o, 0, sizeof(*o));
	if (!*path) {
		fprintf(stderr, "ctasim %s: -o needs a file name\n", cmd);
		return -1;
	}
	struct stat st;
	o->path = path;
	o->to_stdout = cli_is_stdio(path);
	o->direct = !o->to_stdout && stat(path, &st) == 0 && !S_ISREG(st.st_mode);
	o->f = stdout;
	if (o->to_stdout)
		return 0;
	if (o->direct) {
		if (S_ISDIR(st.st_mode)) {
			fprintf(stderr, "ctasim %s: %s: is a directory, not a file\n", cmd,
			        cta_escape(ev, sizeof(ev), path, 0));
			return -1;
		}
		int fd = open(path, O_WRONLY | O_CLOEXEC);
		o->f = fd < 0 ? NULL : cli_fd_stream(fd, &o->err);
		if (!o->f) {
			if (fd >= 0)
				close(fd);
			fprintf(stderr, "ctasim %s: %s: %s\n", cmd,
			        cta_escape(ev, sizeof(ev), path, 0), strerror(errno));
			return -1;
		}
		return 0;
	}
	/* A .gz or .zst name is honoured (compressed at close), or refused
	 * here when this build cannot: never a plain file under that name. */
	o->zkind = cta_trace_compression_of_name(path);
	if (o->zkind < 0) {
		char msg[300];
		int fd0 = -1;
		cta_trace_compress_fd(path, fd0, fd0, msg, sizeof(msg));
		fprintf(stderr, "ctasim %s: %s\n", cmd, cta_escape(ev, sizeof(ev), msg, 0));
		return -1;
	}
	cli_sweep_stale(cmd, path);
	char err[600];
	int fd = cta_tmpfile_create(path, &o->tmp, err, sizeof(err));
	o->fd = fd;
	if (fd < 0 || !(o->f = cli_fd_stream(fd, &o->err))) {
		if (fd >= 0) {
			snprintf(err, sizeof(err), "%s: %s", path, strerror(errno));
			close(fd);
			unlink(o->tmp);
			free(o->tmp);
			o->tmp = NULL;
		}
		fprintf(stderr, "ctasim %s: %s\n", cmd, cta_escape(ev, sizeof(ev), err, 0));
		return -1;
	}
	pending_tmp = o->tmp;
	return 0;
}

/* Replaces o's finished temporary by its compressed form (another
 * temporary beside it), as its name asks. */
static int compress_tmp(struct cli_out *o)
{
	char err[600], *ztmp = NULL;
	int in = open(o->tmp, O_RDONLY | O_CLOEXEC);
	if (in < 0) {
		o->err = errno;
		return CTA_EIO;
	}
	int out = cta_tmpfile_create(o->path, &ztmp, err, sizeof(err));
	if (out < 0) {
		o->err = errno ? errno : EIO;
		close(in);
		return CTA_EIO;
	}
	pending_tmp = ztmp;
	int rc = cta_trace_compress_fd(o->path, in, out, err, sizeof(err));
	if (rc)
		o->err = errno ? errno : EIO;
	else if (fsync(out) && errno != EINVAL)
		o->err = errno, rc = CTA_EIO;
	if (close(out) && !rc)
		o->err = errno, rc = CTA_EIO;
	close(in);
	remove(o->tmp);
	free(o->tmp);
	/* The compressed temporary takes the plain one's place: the caller
	 * renames it, or removes it on failure. */
	o->tmp = ztmp;
	return rc;
}

int cli_out_close(struct cli_out *o, int rc)
{
	if (o->to_stdout) {
		/* stdout's own errors are caught once, at exit (cli_stdio_finish);
		 * flushing here makes them show before anything else is said. */
		fflush(stdout);
		if (cli_stdout_err && !rc) {
			o->err = cli_stdout_err;
			rc = CTA_EIO;
		}
		return rc;
	}
	/* The stream records the first write's errno in o->err; fsync before
	 * the rename, so that a full disk shows here and not after the rename
	 * has replaced the old file with a short one. */
	if (fflush(o->f) && !o->err)
		o->err = errno;
	if (!o->err && o->tmp && fsync(o->fd) && errno != EINVAL)
		o->err = errno;
	if (fclose(o->f) && !o->err)
		o->err = errno ? errno : EIO;
	if (o->err && !rc)
		rc = CTA_EIO;
	if (o->tmp && !rc && o->zkind > 0)
		rc = compress_tmp(o);
	if (o->tmp) {
		if (!rc && rename(o->tmp, o->path)) {
			o->err = errno;
			rc = CTA_EIO;
		}
		if (rc)
			remove(o->tmp);
		pending_tmp = NULL;
		free(o->tmp);
		o->tmp = NULL;
	}
	return rc;
}

void cli_out_report(const char *cmd, const struct cli_out *o, int rc)
{
	char ev[400];
	const char *name = o->to_stdout ? "<stdout>" : cta_escape(ev, sizeof(ev), o->path, 0);
	if (o->err)
		fprintf(stderr, "ctasim %s: %s: %s\n", cmd, name, strerror(o->err));
	else
		fprintf(stderr, "ctasim %s: %s: %s\n", cmd, name, cta_strerror(rc));
}

int cli_stdio_finish(int code)
{
	/* The last chance to learn that the output was lost ("run > /dev/full"):
	 * a command that printed its result to nowhere has not succeeded. */
	if (fflush(stdout) && !cli_stdout_err)
		cli_stdout_err = errno ? errno : EIO;
	if (!cli_stdout_err && close(1) != 0 && errno != EBADF)
		cli_stdout_err = errno;
	if (cli_stdout_err) {
		fprintf(stderr, "ctasim: <stdout>: %s\n", strerror(cli_stdout_err));
		return CTA_EXIT_USAGE;
	}
	return code;
}

void cli_interrupted_cleanup(void)
{
	char *t = pending_tmp;
	if (t)
		unlink(t);
}

int cli_trace_convert(const char *cmd, const char *in, const char *out, cli_trace_writer w,
                      const void *opts, int note_incomplete, int per_kernel_slots)
{
	cta_trace_lean *t;
	char err[512];
	int rc = cli_trace_read_lean(&t, in, per_kernel_slots, err, sizeof(err), 0);
	if (rc) {
		fprintf(stderr, "ctasim %s: %s\n", cmd, err);
		return CTA_EXIT_USAGE;
	}
	if (note_incomplete && !cta_trace_lean_trace(t)->complete)
		fprintf(stderr, "ctasim %s: %s: note: the trace is marked incomplete\n", cmd, in);
	struct cli_out o;
	if (cli_out_open(&o, cmd, out) < 0) {
		cta_trace_lean_free(t);
		return CTA_EXIT_USAGE;
	}
	rc = w(t, o.f, opts);
	cta_trace_lean_free(t);
	int reported = rc == CLI_REPORTED;
	rc = cli_out_close(&o, rc);
	if (rc) {
		if (!reported)
			cli_out_report(cmd, &o, rc);
		return CTA_EXIT_USAGE;
	}
	return CTA_EXIT_OK;
}

int cli_placement_ok(const char *cmd, const struct cta_device_model *d)
{
	if (d->placement != CTA_PLACE_ORDER || d->placement_order_len || d->wave_order_count)
		return 0;
	/* Said here: the simulator would only refuse the model as invalid. */
	char ev[200];
	fprintf(stderr,
	        "ctasim %s: --placement order replays the model's placement_order or "
	        "wave_order, and device %s has neither (give --device a model file with "
	        "one: docs/DEVICES.md)\n",
	        cmd, cta_escape(ev, sizeof(ev), d->name, 0));
	return -1;
}
