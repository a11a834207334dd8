/* The scenario runner: turns a loaded scenario into one harness per kernel
 * and puts all their launches into ONE simulator (streams, priorities,
 * release times), so several kernels share the device and one trace. The
 * CUDA backend provides its own runner (the scenario_exec of host/backend.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctasim/harness.h"
#include "ctasim/scenario.h"
#include "ctasim/sim.h"
#include "ctasim/trace.h"
#include "harness_impl.h"

struct cta_scenario_run {
	struct cta_scenario own; /* the loaded file, for cta_scenario_exec_file */
	const struct cta_scenario *sc;
	struct cta_device_model device;
	struct cta_harness **hs;
	unsigned nh;
	unsigned *first, *count; /* simulator kernel ids of each scenario kernel */
	cta_sim *sim;
};

void cta_scenario_exec_free(cta_scenario_run *x)
{
	if (!x)
		return;
	for (unsigned i = 0; i < x->nh; i++)
		cta_harness_free(x->hs[i]);
	free(x->hs);
	free(x->first);
	free(x->count);
	cta_sim_free(x->sim);
	cta_scenario_free(&x->own);
	free(x);
}

/* Harness options of scenario kernel k: base with the kernel's args and
 * overrides. The argument strings stay owned by the scenario. */
static struct cta_harness_opts kernel_opts(const struct cta_harness_opts *base,
                                           const struct cta_scenario_kernel *k)
{
	struct cta_harness_opts o = *base;
	o.args = (const char *const *)k->args;
	o.nargs = k->nargs;
	o.grid_set = k->grid_set;
	o.block_set = k->block_set;
	memcpy(o.grid, k->grid, sizeof(o.grid));
	memcpy(o.block, k->block, sizeof(o.block));
	return o;
}

/* Puts every harness's launches into one simulator and runs it. */
static int run_sim(cta_scenario_run *x, const struct cta_harness_opts *base, char *err,
                   size_t errlen)
{
	const struct cta_scenario *sc = x->sc;
	unsigned total = 0;
	for (unsigned i = 0; i < sc->nkernels; i++)
		total += cta_harness_launch_count(x->hs[i]);
	/* The trace header describes each kernel; the format has room for
	 * CTA_TRACE_MAX_KERNELS, and a trace that names kernels it does not
	 * describe would not read back. */
	if (base->sim.trace_path && total > CTA_TRACE_MAX_KERNELS) {
		snprintf(err, errlen,
		         "%s: the scenario launches %u kernels; a trace describes at most %d "
		         "(run it without a trace)",
		         sc->path, total, CTA_TRACE_MAX_KERNELS);
		return CTA_ERANGE;
	}
	int rc = cta_sim_new(&x->sim, &base->sim);
	if (rc < 0) {
		snprintf(err, errlen, "%s: cannot create the simulator: %s", sc->path,
		         cta_strerror(rc));
		return rc;
	}
	int *streams = calloc(sc->nstreams ? sc->nstreams : 1, sizeof(*streams));
	if (!streams)
		return CTA_ENOMEM;
	for (unsigned i = 0; i < sc->nstreams; i++) {
		rc = cta_sim_stream_new(x->sim, &streams[i], sc->streams[i].priority);
		if (rc < 0) {
			snprintf(err, errlen, "%s:%d: field 'streams[%u].priority': %s", sc->path,
			         sc->streams[i].priority_line, i, cta_sim_errmsg(x->sim));
			free(streams);
			return rc;
		}
	}
	for (unsigned i = 0; i < sc->nkernels && !rc; i++) {
		const struct cta_scenario_kernel *k = &sc->kernels[i];
		struct cta_harness *h = x->hs[i];
		x->count[i] = cta_harness_launch_count(h);
		for (unsigned j = 0; j < x->count[i]; j++) {
			struct cta_launch l;
			char label[CTA_SCENARIO_LABEL_MAX + 16];
			cta_harness_sim_launch(h, j, &l);
			l.stream =
			    k->stream == CTA_SCENARIO_DEFAULT_STREAM ? 0 : streams[k->stream];
			/* A harness's own launches keep their relative release times. */
			l.release_ns += k->release_ns;
			if (x->count[i] > 1)
				snprintf(label, sizeof(label), "%s.%u", k->label, j);
			else
				snprintf(label, sizeof(label), "%s", k->label);
			l.label = label;
			unsigned id;
			rc = cta_sim_launch(x->sim, &l, &id);
			if (rc < 0) {
				snprintf(err, errlen, "%s:%d: kernel '%s': %s", sc->path, k->line,
				         k->label, cta_sim_errmsg(x->sim));
				break;
			}
			if (j == 0)
				x->first[i] = id;
		}
	}
	free(streams);
	if (rc < 0)
		return rc;
	rc = cta_sim_run(x->sim);
	if (rc < 0)
		snprintf(err, errlen, "%s: %s", sc->path, cta_sim_errmsg(x->sim));
	return rc;
}

/* A kernel's harness refused its setup: the message names the argument's
 * own line and field when the harness says which parameter was wrong,
 * else the kernel's line. */
static void report_setup_error(const struct cta_scenario *sc, unsigned i,
                               const struct cta_harness *h, int rc, char *err, size_t errlen)
{
	const struct cta_scenario_kernel *k = &sc->kernels[i];
	const char *msg = h ? cta_harness_errmsg(h) : cta_strerror(rc);
	const char *name = cta_harness_bad_param(h);
	size_t nl = name ? strlen(name) : 0;
	for (size_t a = 0; name && a < k->nargs; a++)
		if (strncmp(k->args[a], name, nl) == 0 && k->args[a][nl] == '=') {
			snprintf(err, errlen, "%s:%d: field 'kernels[%u].args.%s': kernel '%s': %s",
			         sc->path, k->arg_lines[a], i, name, k->label, msg);
			return;
		}
	snprintf(err, errlen, "%s:%d: kernel '%s': %s", sc->path, k->line, k->label, msg);
}

int cta_scenario_exec(cta_scenario_run **out, const struct cta_scenario *sc,
                      const struct cta_harness_opts *base, char *err, size_t errlen)
{
	*out = NULL;
	if (!sc || !base || base->version != CTA_HARNESS_OPTS_VERSION || !sc->nkernels) {
		snprintf(err, errlen, "invalid arguments");
		return CTA_EINVAL;
	}
	cta_scenario_run *x = calloc(1, sizeof(*x));
	if (!x)
		return CTA_ENOMEM;
	x->sc = sc;
	struct cta_harness_opts o = *base;
	o.args = NULL;
	o.nargs = 0;
	o.grid_set = o.block_set = 0;
	int rc = 0;
	if (sc->device_ref[0]) {
		char derr[512];
		rc = cta_device_resolve(&o.sim.device, sc->device_ref, derr, sizeof(derr));
		if (rc < 0) {
			snprintf(err, errlen, "%s:%d: field 'device': %s", sc->path,
			         sc->device_line, derr);
			cta_scenario_exec_free(x);
			return rc;
		}
	}
	if (o.idle_before)
		o.sim.device.sweep_prior_unit = 0; /* as cta_harness_new */
	x->device = o.sim.device;
	if (sc->has_seed)
		o.sim.seed = sc->seed;
	if (sc->sm_limit)
		o.sim.sm_limit = sc->sm_limit;
	if (sc->timing_only)
		o.sim.timing_only = 1;
	if (o.sim.sm_limit > o.sim.device.sm_count) {
		snprintf(err, errlen, "%s: sm_limit %u: device %s has %u SMs", sc->path,
		         o.sim.sm_limit, o.sim.device.name, o.sim.device.sm_count);
		cta_scenario_exec_free(x);
		return CTA_ERANGE;
	}
	rc = cta_scenario_check_device(sc, &o.sim.device, err, errlen);
	if (!rc)
		rc = cta_scenario_check_harnesses(sc, cta_harness_find, err, errlen);
	if (rc < 0) {
		cta_scenario_exec_free(x);
		return rc;
	}
	x->hs = calloc(sc->nkernels, sizeof(*x->hs));
	x->first = calloc(sc->nkernels, sizeof(*x->first));
	x->count = calloc(sc->nkernels, sizeof(*x->count));
	if (!x->hs || !x->first || !x->count) {
		cta_scenario_exec_free(x);
		return CTA_ENOMEM;
	}
	*out = x;
	for (unsigned i = 0; i < sc->nkernels; i++) {
		const struct cta_scenario_kernel *k = &sc->kernels[i];
		struct cta_harness_opts ko = kernel_opts(&o, k);
		/* Only the simulator writes the run's one trace; a harness
		 * never runs on its own here. */
		rc = cta_harness_new(&x->hs[i], cta_harness_find(k->harness), &ko);
		x->nh = i + 1;
		if (!rc)
			rc = cta_harness_setup(x->hs[i]);
		if (rc < 0) {
			report_setup_error(sc, i, x->hs[i], rc, err, errlen);
			return rc;
		}
	}
	const struct cta__backend *be = cta__backend_of(o.backend);
	if (!be)
		rc = cta__backend_missing(o.backend, err, errlen);
	else if (be->scenario_exec)
		rc = be->scenario_exec(x->hs, x->nh, sc, err, errlen);
	else
		rc = run_sim(x, &o, err, errlen);
	if (rc < 0 && rc != CTA_EUB && rc != CTA_ECOVERAGE && rc != CTA_EDEADLOCK)
		return rc;
	/* A run that hung has no outputs worth checking. */
	if (rc != CTA_EDEADLOCK)
		for (unsigned i = 0; i < x->nh; i++)
			cta_harness_verify(x->hs[i]);
	return rc;
}

int cta_scenario_exec_file(cta_scenario_run **out, const char *path,
                           const struct cta_harness_opts *base, char *err, size_t errlen)
{
	*out = NULL;
	struct cta_scenario sc;
	int rc = cta_scenario_load(&sc, path, err, errlen);
	if (rc < 0)
		return rc;
	/* Move the scenario into the run so it lives as long as the run. */
	rc = cta_scenario_exec(out, &sc, base, err, errlen);
	if (!*out) {
		cta_scenario_free(&sc);
		return rc;
	}
	(*out)->own = sc;
	(*out)->sc = &(*out)->own;
	return rc;
}

const struct cta_device_model *cta_scenario_exec_device(const cta_scenario_run *x)
{
	return &x->device;
}

struct cta_sim *cta_scenario_exec_sim(const cta_scenario_run *x)
{
	return x->sim;
}

const struct cta_scenario *cta_scenario_exec_scenario(const cta_scenario_run *x)
{
	return x->sc;
}

struct cta_harness *cta_scenario_exec_harness(const cta_scenario_run *x, unsigned i)
{
	return i < x->nh ? x->hs[i] : NULL;
}

int cta_scenario_exec_kernels(const cta_scenario_run *x, unsigned i, unsigned *first,
                              unsigned *count)
{
	if (i >= x->nh || !x->sim)
		return CTA_EINVAL;
	*first = x->first[i];
	*count = x->count[i];
	return 0;
}
