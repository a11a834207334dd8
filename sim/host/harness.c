/* The harness runner and the registries: kernels (CTA_KERNEL) and harnesses
 * (CTA_HARNESS) register themselves at load time; a run reads parameters,
 * lets the harness set up buffers and launches, executes them on the chosen
 * backend, and verifies the outputs. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "ctasim/io.h"
#include "host/harness_impl.h"
#include "sanitize/sanitize.h"

/* ---- registries ------------------------------------------------------------ */

static const struct cta_kernel_def **kdefs;
static size_t nkdefs, kdefs_cap;
static const struct cta_kernel_info **infos;
static size_t ninfos, infos_cap;
static int infos_sorted;

void cta_kernel_register(const struct cta_kernel_def *k)
{
	if (nkdefs == kdefs_cap) {
		size_t cap = kdefs_cap ? kdefs_cap * 2 : 64;
		const struct cta_kernel_def **n = realloc(kdefs, cap * sizeof(*n));
		if (!n)
			return;
		kdefs = n;
		kdefs_cap = cap;
	}
	kdefs[nkdefs++] = k;
}

const struct cta_kernel_def *cta_kernel_find(const char *name)
{
	for (size_t i = 0; i < nkdefs; i++)
		if (!strcmp(kdefs[i]->name, name))
			return kdefs[i];
	return NULL;
}

/* Argument fields by kernel (CTA_KERNEL_ARGS); a handful of kernels. */
struct kargs {
	const struct cta_kernel_def *k;
	const struct cta_arg_field *fields;
};
static struct kargs *kargs;
static size_t nkargs;

int cta_kernel_describe_args(const struct cta_kernel_def *k, const struct cta_arg_field *fields)
{
	if (!k || !fields)
		return CTA_EINVAL;
	for (const struct cta_arg_field *f = fields; f->name; f++)
		if (f->offset > k->args_size || f->size > k->args_size - f->offset)
			return CTA_EINVAL;
	for (size_t i = 0; i < nkargs; i++)
		if (kargs[i].k == k) {
			kargs[i].fields = fields;
			return 0;
		}
	struct kargs *n = realloc(kargs, (nkargs + 1) * sizeof(*n));
	if (!n)
		return CTA_ENOMEM;
	kargs = n;
	kargs[nkargs++] = (struct kargs){k, fields};
	return 0;
}

int cta_kernel_arg(const struct cta_kernel_def *k, const void *args, const char *name, void *out,
                   size_t size)
{
	if (!k || !args || !name || !out)
		return CTA_EINVAL;
	for (size_t i = 0; i < nkargs; i++) {
		if (kargs[i].k != k)
			continue;
		for (const struct cta_arg_field *f = kargs[i].fields; f->name; f++) {
			if (strcmp(f->name, name))
				continue;
			if (f->size != size)
				return CTA_EINVAL;
			memcpy(out, (const char *)args + f->offset, size);
			return 0;
		}
	}
	return CTA_ENOTFOUND;
}

void cta_harness_register(const struct cta_kernel_info *ki)
{
	for (size_t i = 0; i < ninfos; i++)
		if (!strcmp(infos[i]->name, ki->name))
			return; /* the first registration of a name wins */
	if (ninfos == infos_cap) {
		size_t cap = infos_cap ? infos_cap * 2 : 64;
		const struct cta_kernel_info **n = realloc(infos, cap * sizeof(*n));
		if (!n)
			return;
		infos = n;
		infos_cap = cap;
	}
	infos[ninfos++] = ki;
	infos_sorted = 0;
}

static int cmp_info(const void *a, const void *b)
{
	return strcmp((*(const struct cta_kernel_info *const *)a)->name,
	              (*(const struct cta_kernel_info *const *)b)->name);
}

size_t cta_harness_count(void)
{
	return ninfos;
}

const struct cta_kernel_info *cta_harness_at(size_t i)
{
	if (!infos_sorted && ninfos) {
		qsort(infos, ninfos, sizeof(*infos), cmp_info);
		infos_sorted = 1;
	}
	return i < ninfos ? infos[i] : NULL;
}

const struct cta_kernel_info *cta_harness_find(const char *name)
{
	for (size_t i = 0; i < ninfos; i++)
		if (!strcmp(infos[i]->name, name))
			return infos[i];
	return NULL;
}

/* ---- messages -------------------------------------------------------------- */

__attribute__((format(printf, 3, 0))) static int vfail(struct cta_harness *h, int code,
                                                       const char *fmt, va_list ap)
{
	/* A parameter that did not parse already said so; a later check of
	 * its placeholder value (0) must not replace that message. */
	if (!h->failed_param)
		vsnprintf(h->errmsg, sizeof(h->errmsg), fmt, ap);
	return code;
}

int cta_harness_fail(struct cta_harness *h, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = vfail(h, CTA_EVERIFY, fmt, ap);
	va_end(ap);
	return rc;
}

int cta_harness_error(struct cta_harness *h, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = vfail(h, code, fmt, ap);
	va_end(ap);
	return rc;
}

static void note_param(struct cta_harness *h, const char *name)
{
	if (!h->bad_param[0])
		snprintf(h->bad_param, sizeof(h->bad_param), "%s", name);
}

int cta_harness_param_error(struct cta_harness *h, const char *name, int code, const char *fmt, ...)
{
	note_param(h, name);
	va_list ap;
	va_start(ap, fmt);
	int rc = vfail(h, code, fmt, ap);
	va_end(ap);
	return rc;
}

const char *cta_harness_gpu(const struct cta_harness *h)
{
	return h && h->gpu[0] ? h->gpu : NULL;
}

const char *cta_harness_bad_param(const struct cta_harness *h)
{
	return h && h->bad_param[0] ? h->bad_param : NULL;
}

const char *cta_harness_errmsg(const struct cta_harness *h)
{
	return h ? h->errmsg : "no harness";
}

/* ---- parameters ---------------------------------------------------------- */

static const struct cta_param_desc *param_desc(const struct cta_kernel_info *ki, const char *name,
                                               size_t len)
{
	for (const struct cta_param_desc *p = ki->params; p && p->name; p++)
		if (strlen(p->name) == len && !strncmp(p->name, name, len))
			return p;
	return NULL;
}

const char *cta_harness_str(struct cta_harness *h, const char *name)
{
	size_t len = strlen(name);
	for (size_t i = h->opts.nargs; i-- > 0;) {
		const char *a = h->opts.args[i];
		if (a && !strncmp(a, name, len) && a[len] == '=')
			return a + len + 1;
	}
	const struct cta_param_desc *p = param_desc(h->ki, name, len);
	if (!p) {
		if (!h->failed_param) {
			h->failed_param = 1;
			snprintf(h->errmsg, sizeof(h->errmsg),
			         "harness %s asks for parameter '%s', which it does not declare",
			         h->ki->name, name);
		}
		return NULL;
	}
	return p->def;
}

int64_t cta_harness_int(struct cta_harness *h, const char *name)
{
	const char *v = cta_harness_str(h, name);
	int64_t x = 0;
	char why[96];
	/* One parser for --arg and scenario args (include/ctasim/io.h):
	 * decimal or 0x hex, K/M/G (powers of 1024), A<<B, every overflow
	 * refused rather than wrapped. */
	if (v && cta_parse_int(v, INT64_MIN, INT64_MAX, CTA_NUM_SUFFIX | CTA_NUM_SHIFT, &x, why,
	                       sizeof(why)) < 0) {
		x = 0;
		if (!h->failed_param) {
			h->failed_param = 1;
			note_param(h, name);
			char ev[200];
			snprintf(h->errmsg, sizeof(h->errmsg), "argument %s=%s: %s", name,
			         cta_escape(ev, sizeof(ev), v, 0), why);
		}
	}
	return x;
}

double cta_harness_double(struct cta_harness *h, const char *name)
{
	const char *v = cta_harness_str(h, name);
	if (!v)
		return 0;
	double x = 0;
	char why[96];
	if (cta_parse_real(v, -HUGE_VAL, HUGE_VAL, &x, why, sizeof(why)) < 0) {
		x = 0;
		if (!h->failed_param) {
			h->failed_param = 1;
			note_param(h, name);
			char ev[200];
			snprintf(h->errmsg, sizeof(h->errmsg), "argument %s=%s: %s", name,
			         cta_escape(ev, sizeof(ev), v, 0), why);
		}
	}
	return x;
}

const struct cta_device_model *cta_harness_device(struct cta_harness *h)
{
	return &h->device;
}

uint64_t cta_harness_seed(struct cta_harness *h)
{
	return h->opts.sim.seed;
}

/* ---- buffers and launches ------------------------------------------------ */

/* Buffers of this size and more are mapped with transparent huge pages
 * asked for: a kernel that touches one element per tile of a large array
 * (every work-stealing vector kernel in timing-only mode) otherwise takes a
 * TLB miss per block, which under a hypervisor's nested page tables cost
 * more than simulating the block. */
#define HUGE_BUFFER_MIN ((size_t)8 << 20)
#define HUGE_PAGE       ((size_t)2 << 20)

/* Zeroed memory for a harness buffer: an anonymous mapping (zero-filled
 * by the kernel) for large ones, calloc otherwise. */
static void *host_alloc(size_t bytes, int *mapped)
{
	*mapped = 0;
#if defined(MAP_ANONYMOUS)
	if (bytes >= HUGE_BUFFER_MIN) {
		size_t len = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
		void *p =
		    mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED) {
#if defined(MADV_HUGEPAGE)
			/* Advice only: without THP the buffer is still right. */
			(void)madvise(p, len, MADV_HUGEPAGE);
#endif
			*mapped = 1;
			return p;
		}
	}
#endif
	return calloc(1, bytes ? bytes : 1);
}

static void host_free(void *p, size_t bytes, int mapped)
{
	if (mapped >= 2) {
		/* A --sanitize buffer between its red zones (cta_harness_alloc),
		 * in memory host_alloc gave: calloc (2) or a mapping (3). */
		cta__san_buffer_forget(p);
		p = (char *)p - CTA__SAN_REDZONE;
		bytes += 2 * CTA__SAN_REDZONE;
		mapped -= 2;
	}
	if (!mapped) {
		free(p);
		return;
	}
#if defined(MAP_ANONYMOUS)
	munmap(p, (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE);
#endif
}

/* ---- backends (host/backend.h) ------------------------------------------ */

static const struct cta__backend sim_backend = {
    .kind = CTA_BACKEND_SIM, .name = "sim", .exec = cta__harness_exec_sim};
static const struct cta__backend *backends[CTA_BACKEND_CUDA + 1] = {&sim_backend};

void cta__backend_register(const struct cta__backend *b)
{
	if (b && (unsigned)b->kind < sizeof(backends) / sizeof(backends[0]))
		backends[b->kind] = b;
}

const struct cta__backend *cta__backend_of(cta_backend kind)
{
	return (unsigned)kind < sizeof(backends) / sizeof(backends[0]) ? backends[kind] : NULL;
}

int cta__backend_missing(cta_backend kind, char *err, size_t errlen)
{
	if (kind == CTA_BACKEND_CUDA)
		snprintf(err, errlen,
		         "this build of ctasim has no CUDA backend (nvcc was not found when it was "
		         "built; rebuild with -Dcuda=enabled on a machine with the CUDA toolkit)");
	else
		snprintf(err, errlen, "no backend %d in this build of ctasim", (int)kind);
	return CTA_EUNSUPPORTED;
}

/* Frees a buffer's device copy through the harness's backend. */
static void dev_free(const struct cta_harness *h, void *dev)
{
	const struct cta__backend *b = cta__backend_of(h->opts.backend);
	if (b && b->free)
		b->free(dev);
}

void *cta_harness_alloc(struct cta_harness *h, size_t bytes)
{
	if (h->nbufs == CTA__HARNESS_MAX_BUFFERS) {
		cta_harness_error(h, CTA_ENOMEM, "harness %s: more than %d buffers", h->ki->name,
		                  CTA__HARNESS_MAX_BUFFERS);
		return NULL;
	}
	int mapped = 0;
	void *p;
	if (h->opts.sim.sanitize && h->opts.backend == CTA_BACKEND_SIM) {
		/* Red zones on both sides, so that memcheck tells an access just
		 * out of bounds from one in another buffer. */
		char *z = host_alloc(bytes + 2 * CTA__SAN_REDZONE, &mapped);
		p = z ? z + CTA__SAN_REDZONE : NULL;
		mapped += 2;
		if (p)
			cta__san_buffer_add(p, bytes, h->ki->name, h->nbufs);
	} else {
		p = host_alloc(bytes, &mapped);
	}
	if (!p) {
		cta_harness_error(h, CTA_ENOMEM, "out of memory allocating %zu bytes", bytes);
		return NULL;
	}
	void *dev = p;
	const struct cta__backend *be = cta__backend_of(h->opts.backend);
	if (!be || be->alloc) {
		dev = be ? be->alloc(bytes, h->errmsg, sizeof(h->errmsg)) : NULL;
		if (!be)
			cta__backend_missing(h->opts.backend, h->errmsg, sizeof(h->errmsg));
		if (!dev) {
			host_free(p, bytes, mapped);
			return NULL;
		}
	}
	h->bufs[h->nbufs].host = p;
	h->bufs[h->nbufs].dev = dev;
	h->bufs[h->nbufs].bytes = bytes;
	h->bufs[h->nbufs].mapped = mapped;
	h->nbufs++;
	return p;
}

void cta_harness_release(struct cta_harness *h, void *host)
{
	for (unsigned i = 0; host && i < h->nbufs; i++) {
		struct cta__hbuf *b = &h->bufs[i];
		if (b->host != host)
			continue;
		if (b->mapped >= 2) {
			/* Kept allocated until the harness is freed: memcheck then
			 * reports a kernel's access instead of it landing in reused
			 * memory. */
			cta__san_buffer_release(host);
			return;
		}
		if (b->dev && b->dev != b->host)
			dev_free(h, b->dev);
		host_free(b->host, b->bytes, b->mapped);
		memmove(b, b + 1, (h->nbufs - i - 1) * sizeof(*b));
		h->nbufs--;
		return;
	}
}

cta_sanitize_tool cta_harness_sanitizer(const struct cta_harness *h)
{
	return h->opts.backend == CTA_BACKEND_SIM ? h->opts.sim.sanitize : CTA_SANITIZE_NONE;
}

void *cta_harness_dev(struct cta_harness *h, void *host)
{
	/* A pointer into a buffer maps to the same offset in its device copy
	 * (&counts[1] as well as counts). */
	for (unsigned i = 0; i < h->nbufs; i++) {
		char *b = h->bufs[i].host;
		if ((char *)host >= b && (char *)host < b + h->bufs[i].bytes)
			return (char *)h->bufs[i].dev + ((char *)host - b);
	}
	return host;
}

int cta_harness_launch(struct cta_harness *h, const struct cta_kernel_def *k,
                       const struct cta_launch_cfg *cfg, const void *args, size_t args_size)
{
	if (!k)
		return cta_harness_error(h, CTA_EINVAL, "harness %s: launch of a NULL kernel",
		                         h->ki->name);
	if (h->nlaunches == CTA__HARNESS_MAX_LAUNCHES)
		return cta_harness_error(h, CTA_EINVAL, "harness %s: more than %d launches",
		                         h->ki->name, CTA__HARNESS_MAX_LAUNCHES);
	if (args_size != k->args_size)
		return cta_harness_error(
		    h, CTA_EINVAL, "harness %s: kernel %s takes %zu bytes of arguments, got %zu",
		    h->ki->name, k->name, k->args_size, args_size);
	struct cta__hlaunch *l = &h->launches[h->nlaunches];
	l->kernel = k;
	l->cfg = *cfg;
	for (int i = 0; i < 3; i++) {
		if (!l->cfg.grid[i])
			l->cfg.grid[i] = 1;
		if (!l->cfg.block[i])
			l->cfg.block[i] = 1;
	}
	if (h->nlaunches == 0) {
		if (h->opts.grid_set)
			memcpy(l->cfg.grid, h->opts.grid, sizeof(l->cfg.grid));
		if (h->opts.block_set)
			memcpy(l->cfg.block, h->opts.block, sizeof(l->cfg.block));
	}
	l->args = malloc(args_size ? args_size : 1);
	if (!l->args)
		return cta_harness_error(h, CTA_ENOMEM, "out of memory");
	memcpy(l->args, args, args_size);
	l->args_size = args_size;
	h->nlaunches++;
	return 0;
}

void cta_harness_block(const struct cta_harness *h, const unsigned dflt[3], unsigned out[3])
{
	for (int i = 0; i < 3; i++)
		out[i] = h->opts.block_set && h->nlaunches == 0 ? h->opts.block[i] : dflt[i];
	for (int i = 0; i < 3; i++)
		out[i] = out[i] ? out[i] : 1;
}

const struct cta_launch_cfg *cta_harness_launched(struct cta_harness *h, unsigned i)
{
	return i < h->nlaunches ? &h->launches[i].cfg : NULL;
}

/* ---- running --------------------------------------------------------------- */

int cta_harness_new(struct cta_harness **out, const struct cta_kernel_info *ki,
                    const struct cta_harness_opts *opts)
{
	*out = NULL;
	if (!ki || !opts || opts->version != CTA_HARNESS_OPTS_VERSION)
		return CTA_EINVAL;
	struct cta_harness *h = calloc(1, sizeof(*h));
	if (!h)
		return CTA_ENOMEM;
	h->ki = ki;
	h->opts = *opts;
	if (opts->idle_before)
		h->opts.sim.device.sweep_prior_unit = 0;
	h->device = h->opts.sim.device;
	*out = h;
	for (size_t i = 0; i < opts->nargs; i++) {
		const char *a = opts->args[i];
		const char *eq = a ? strchr(a, '=') : NULL;
		if (!eq)
			return cta_harness_error(h, CTA_EINVAL,
			                         "argument '%s': expected NAME=VALUE", a ? a : "");
		if (!param_desc(ki, a, (size_t)(eq - a))) {
			char names[256] = "";
			for (const struct cta_param_desc *p = ki->params; p && p->name; p++) {
				size_t n = strlen(names);
				snprintf(names + n, sizeof(names) - n, "%s%s", n ? ", " : "",
				         p->name);
			}
			return cta_harness_error(h, CTA_EINVAL,
			                         "unknown argument '%.*s' for kernel %s (its "
			                         "parameters: %s)",
			                         (int)(eq - a), a, ki->name,
			                         names[0] ? names : "none");
		}
	}
	return 0;
}

int cta__harness_exec_sim(struct cta_harness *h)
{
	int rc = cta_sim_new(&h->sim, &h->opts.sim);
	if (rc < 0)
		return cta_harness_error(h, rc, "cannot create the simulator: %s",
		                         cta_strerror(rc));
	int prio_stream[64] = {0};
	for (unsigned i = 0; i < h->nlaunches; i++) {
		const struct cta__hlaunch *hl = &h->launches[i];
		struct cta_launch l;
		cta_harness_sim_launch(h, i, &l);
		/* One stream per distinct non-default priority. */
		int p = hl->cfg.stream_priority;
		if (p != 0) {
			unsigned slot = (unsigned)(p < 0 ? -p : p) % 64;
			if (!prio_stream[slot]) {
				rc = cta_sim_stream_new(h->sim, &prio_stream[slot], p);
				if (rc < 0)
					return cta_harness_error(h, rc, "%s",
					                         cta_sim_errmsg(h->sim));
			}
			l.stream = prio_stream[slot];
		}
		rc = cta_sim_launch(h->sim, &l, NULL);
		if (rc < 0)
			return cta_harness_error(h, rc, "%s", cta_sim_errmsg(h->sim));
	}
	rc = cta_sim_run(h->sim);
	if (rc < 0 && rc != CTA_EUB && rc != CTA_ECOVERAGE)
		return cta_harness_error(h, rc, "%s", cta_sim_errmsg(h->sim));
	return rc;
}

int cta_harness_setup(struct cta_harness *h)
{
	/* Say "no GPU" (or "no backend") now, not as a failed allocation
	 * inside the harness's setup. */
	const struct cta__backend *be = cta__backend_of(h->opts.backend);
	if (!be)
		return cta__backend_missing(h->opts.backend, h->errmsg, sizeof(h->errmsg));
	if (be->select_device) {
		int rc = be->select_device(h->opts.cuda_device, h->errmsg, sizeof(h->errmsg));
		if (rc < 0)
			return rc;
	}
	int rc = h->ki->setup(h);
	if (h->failed_param)
		return CTA_EINVAL;
	if (rc < 0)
		return rc;
	if (h->nlaunches == 0)
		return cta_harness_error(h, CTA_EINVAL, "harness %s made no launch", h->ki->name);
	return 0;
}

unsigned cta_harness_launch_count(const struct cta_harness *h)
{
	return h->nlaunches;
}

int cta_harness_sim_launch(const struct cta_harness *h, unsigned i, struct cta_launch *l)
{
	if (i >= h->nlaunches)
		return CTA_EINVAL;
	const struct cta__hlaunch *hl = &h->launches[i];
	memset(l, 0, sizeof(*l));
	l->kernel = hl->kernel;
	memcpy(l->grid, hl->cfg.grid, sizeof(l->grid));
	memcpy(l->block, hl->cfg.block, sizeof(l->block));
	memcpy(l->cluster, hl->cfg.cluster, sizeof(l->cluster));
	l->smem_static = hl->cfg.smem_static;
	l->smem_dynamic = hl->cfg.smem_dynamic;
	l->regs_per_thread = hl->cfg.regs_per_thread;
	l->issue_ops = hl->cfg.issue_ops;
	l->stream_mem = hl->cfg.stream_mem;
	l->release_ns = hl->cfg.release_ns;
	l->cooperative = hl->cfg.cooperative;
	l->args = hl->args;
	return 0;
}

int cta_harness_verify(struct cta_harness *h)
{
	if (h->opts.sim.timing_only) {
		h->verdict = CTA_VERDICT_SKIPPED;
		return 0;
	}
	if (!h->ki->verify) {
		h->verdict = CTA_VERDICT_PASS;
		return 0;
	}
	char saved[sizeof(h->errmsg)];
	memcpy(saved, h->errmsg, sizeof(saved));
	int v = h->ki->verify(h);
	h->verdict = v ? CTA_VERDICT_FAIL : CTA_VERDICT_PASS;
	if (!v)
		memcpy(h->errmsg, saved, sizeof(saved));
	return v;
}

int cta_harness_run(struct cta_harness *h)
{
	int rc = cta_harness_setup(h);
	if (rc < 0)
		return rc;
	/* cta_harness_setup found the backend. */
	int exec = cta__backend_of(h->opts.backend)->exec(h);
	if (exec < 0 && exec != CTA_EUB && exec != CTA_ECOVERAGE)
		return exec;
	cta_harness_verify(h);
	return exec;
}

cta_verdict cta_harness_verdict(const struct cta_harness *h)
{
	return h->verdict;
}

cta_sim *cta_harness_sim(struct cta_harness *h)
{
	return h->sim;
}

void cta_harness_free(struct cta_harness *h)
{
	if (!h)
		return;
	for (unsigned i = 0; i < h->nbufs; i++) {
		if (h->bufs[i].dev && h->bufs[i].dev != h->bufs[i].host)
			dev_free(h, h->bufs[i].dev);
		host_free(h->bufs[i].host, h->bufs[i].bytes, h->bufs[i].mapped);
	}
	for (unsigned i = 0; i < h->nlaunches; i++)
		free(h->launches[i].args);
	cta_sim_free(h->sim);
	free(h);
}
