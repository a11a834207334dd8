/* Helpers shared by the subcommands: parsing numbers and dimension lists
 * with messages that name the option, resolving device models, and loading
 * a user's kernels. */
#include "cli_util.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cmd.h"
#include "ctasim/errors.h"
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

int cli_parse_u64(const char *cmd, const char *opt, const char *v, uint64_t *out)
{
	char *end;
	errno = 0;
	if (!v || !*v || *v == '-') {
		fprintf(stderr, "ctasim %s: %s '%s': expected a non-negative integer\n", cmd, opt,
		        v ? v : "");
		return -1;
	}
	unsigned long long x = strtoull(v, &end, 0);
	if (errno || *end) {
		fprintf(stderr, "ctasim %s: %s '%s': expected a non-negative integer\n", cmd, opt,
		        v);
		return -1;
	}
	*out = x;
	return 0;
}

int cli_parse_double(const char *cmd, const char *opt, const char *v, double *out)
{
	char *end;
	errno = 0;
	double x = strtod(v, &end);
	if (errno || end == v || *end) {
		fprintf(stderr, "ctasim %s: %s '%s': expected a number\n", cmd, opt, v);
		return -1;
	}
	*out = x;
	return 0;
}

int cli_parse_dims(const char *cmd, const char *opt, const char *v, unsigned d[3])
{
	d[0] = d[1] = d[2] = 1;
	const char *p = v;
	for (int i = 0; i < 3; i++) {
		char *end;
		errno = 0;
		if (*p == '-' || *p == 0)
			goto bad;
		unsigned long long x = strtoull(p, &end, 10);
		if (errno || end == p || x > 0xffffffffull)
			goto bad;
		d[i] = (unsigned)x;
		if (*end == 0)
			return 0;
		if (*end != ',' && *end != 'x')
			goto bad;
		p = end + 1;
	}
bad:
	fprintf(stderr, "ctasim %s: %s '%s': expected X[,Y[,Z]] with positive integers\n", cmd, opt,
	        v);
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
	return 0;
}

int cli_load(const char *cmd, const char *path)
{
	/* RTLD_GLOBAL is not needed: the object registers its kernels and
	 * harnesses through constructors that call into this executable. */
	void *h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "ctasim %s: --load %s: %s\n", cmd, path, dlerror());
		return -1;
	}
	return 0;
}

int cli_out_open(struct cli_out *o, const char *cmd, const char *path)
{
	if (!*path) {
		fprintf(stderr, "ctasim %s: -o needs a file name\n", cmd);
		return -1;
	}
	struct stat st;
	memset(o, 0, sizeof(*o));
	o->path = path;
	o->to_stdout = !strcmp(path, "-");
	o->direct = !o->to_stdout && stat(path, &st) == 0 && !S_ISREG(st.st_mode);
	o->f = stdout;
	if (o->to_stdout)
		return 0;
	if (o->direct) {
		if (S_ISDIR(st.st_mode)) {
			fprintf(stderr, "ctasim %s: %s: is a directory, not a file\n", cmd, path);
			return -1;
		}
		o->f = fopen(path, "w");
		if (!o->f) {
			fprintf(stderr, "ctasim %s: %s: %s\n", cmd, path, strerror(errno));
			return -1;
		}
		return 0;
	}
	size_t n = strlen(path) + 32;
	o->tmp = malloc(n);
	if (!o->tmp)
		return -1;
	snprintf(o->tmp, n, "%s.tmp.%ld", path, (long)getpid());
	o->f = fopen(o->tmp, "w");
	if (!o->f) {
		/* Named by the file asked for: the temporary is ours. */
		fprintf(stderr, "ctasim %s: %s: cannot create a file there: %s\n", cmd, path,
		        strerror(errno));
		free(o->tmp);
		o->tmp = NULL;
		return -1;
	}
	return 0;
}

int cli_out_close(struct cli_out *o, int rc)
{
	if (o->to_stdout) {
		if (fflush(stdout) && !rc)
			rc = CTA_EIO;
		return rc;
	}
	if (fclose(o->f) && !rc)
		rc = CTA_EIO;
	if (o->tmp) {
		if (!rc && rename(o->tmp, o->path))
			rc = CTA_EIO;
		if (rc)
			remove(o->tmp);
		free(o->tmp);
		o->tmp = NULL;
	}
	return rc;
}

int cli_trace_convert(const char *cmd, const char *in, const char *out, cli_trace_writer w,
                      const void *opts, int note_incomplete)
{
	struct cta_trace t;
	char err[512];
	int rc = cta_trace_read(&t, in, err, sizeof(err));
	if (rc) {
		fprintf(stderr, "ctasim %s: %s\n", cmd, err);
		return CTA_EXIT_USAGE;
	}
	if (note_incomplete && !t.complete)
		fprintf(stderr, "ctasim %s: %s: note: the trace is marked incomplete\n", cmd, in);
	struct cli_out o;
	if (cli_out_open(&o, cmd, out) < 0) {
		cta_trace_free(&t);
		return CTA_EXIT_USAGE;
	}
	rc = w(&t, o.f, opts);
	cta_trace_free(&t);
	rc = cli_out_close(&o, rc);
	if (rc) {
		fprintf(stderr, "ctasim %s: %s: %s\n", cmd, o.to_stdout ? "<stdout>" : out,
		        cta_strerror(rc));
		return CTA_EXIT_USAGE;
	}
	return CTA_EXIT_OK;
}
