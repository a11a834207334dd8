/* Helpers shared by the harnesses of kernels/: the imbalance parameter,
 * range-checked integer parameters, and the launched grid size. */
#include "kcommon.h"

#include <pthread.h>
#include <string.h>

#include "imbalance.h"

int cta__kparam_imbalance(struct cta_harness *h, int *out)
{
	const char *v = cta_harness_str(h, "imbalance");
	if (!v || strcmp(v, "none") == 0 || strcmp(v, "0") == 0)
		*out = KWORK_NONE;
	else if (strcmp(v, "one_in_seven") == 0 || strcmp(v, "1") == 0)
		*out = KWORK_ONE_IN_SEVEN;
	else if (strcmp(v, "heavy_tail") == 0 || strcmp(v, "2") == 0)
		*out = KWORK_HEAVY_TAIL;
	else
		return cta_harness_param_error(
		    h, "imbalance", CTA_EINVAL,
		    "parameter imbalance: '%s' is not one of none, one_in_seven, "
		    "heavy_tail",
		    v);
	return 0;
}

int cta__kparam_range(struct cta_harness *h, const char *name, int64_t lo, int64_t hi, int64_t *out)
{
	int64_t v = cta_harness_int(h, name);
	if (v < lo || v > hi)
		return cta_harness_param_error(h, name, CTA_EINVAL,
		                               "parameter %s: %lld is out of range [%lld, %lld]",
		                               name, (long long)v, (long long)lo, (long long)hi);
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

/* Harness -> state map. Harnesses are never unregistered here (there is no
 * hook for their end), so slots are reused round robin; a harness only
 * needs its entry from its setup to its verify, and far fewer than
 * KSTATE_SLOTS harnesses are ever set up in between. */
#define KSTATE_SLOTS 4096
static struct {
	struct cta_harness *h;
	void *state;
} kstate[KSTATE_SLOTS];
static unsigned kstate_next;
static pthread_mutex_t kstate_lock = PTHREAD_MUTEX_INITIALIZER;

void *cta__kstate_new(struct cta_harness *h, size_t bytes)
{
	/* Harness-owned, so it lives exactly as long as the run. On the CUDA
	 * backend it is also copied to the GPU and back, unchanged. */
	void *state = cta_harness_alloc(h, bytes);
	if (!state)
		return NULL;
	pthread_mutex_lock(&kstate_lock);
	unsigned slot = kstate_next;
	for (unsigned i = 0; i < KSTATE_SLOTS; i++)
		if (kstate[i].h == h) {
			slot = i;
			break;
		}
	if (slot == kstate_next)
		kstate_next = (kstate_next + 1) % KSTATE_SLOTS;
	kstate[slot].h = h;
	kstate[slot].state = state;
	pthread_mutex_unlock(&kstate_lock);
	return state;
}

void *cta__kstate(struct cta_harness *h)
{
	void *state = NULL;
	pthread_mutex_lock(&kstate_lock);
	for (unsigned i = 0; i < KSTATE_SLOTS && !state; i++)
		if (kstate[i].h == h)
			state = kstate[i].state;
	pthread_mutex_unlock(&kstate_lock);
	return state;
}
