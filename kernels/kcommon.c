/* Helpers shared by the harnesses of kernels/: string parameters (until
 * harness.h offers one), the imbalance parameter, and range checks. */
#include "kcommon.h"

#include <string.h>

#include "host/harness_impl.h"
#include "imbalance.h"

/* harness.h offers only integer and double accessors, so the text of a
 * parameter comes from the run's options: the last NAME=VALUE wins, as
 * with the numeric accessors, else the default of the parameter table.
 * Replace with a public cta_harness_str() once the harness API has one. */
const char *cta__kparam_str(struct cta_harness *h, const char *name)
{
	size_t len = strlen(name);
	for (size_t i = h->opts.nargs; i-- > 0;) {
		const char *a = h->opts.args[i];
		if (a && strncmp(a, name, len) == 0 && a[len] == '=')
			return a + len + 1;
	}
	for (const struct cta_param_desc *p = h->ki->params; p && p->name; p++)
		if (strcmp(p->name, name) == 0)
			return p->def;
	return NULL;
}

int cta__kparam_imbalance(struct cta_harness *h, int *out)
{
	const char *v = cta__kparam_str(h, "imbalance");
	if (!v || strcmp(v, "none") == 0 || strcmp(v, "0") == 0)
		*out = KWORK_NONE;
	else if (strcmp(v, "one_in_seven") == 0 || strcmp(v, "1") == 0)
		*out = KWORK_ONE_IN_SEVEN;
	else if (strcmp(v, "heavy_tail") == 0 || strcmp(v, "2") == 0)
		*out = KWORK_HEAVY_TAIL;
	else
		return cta_harness_error(h, CTA_EINVAL,
		                         "parameter imbalance: '%s' is not one of none, one_in_seven, "
		                         "heavy_tail",
		                         v);
	return 0;
}

int cta__kparam_range(struct cta_harness *h, const char *name, int64_t lo, int64_t hi,
                      int64_t *out)
{
	int64_t v = cta_harness_int(h, name);
	if (v < lo || v > hi)
		return cta_harness_error(h, CTA_EINVAL,
		                         "parameter %s: %lld is out of range [%lld, %lld]", name,
		                         (long long)v, (long long)lo, (long long)hi);
	*out = v;
	return 0;
}

uint64_t cta__klaunched_blocks(struct cta_harness *h)
{
	const struct cta_launch_cfg *c = cta_harness_launched(h, 0);
	if (!c)
		return 0;
	return (uint64_t)c->grid[0] * c->grid[1] * c->grid[2];
}
