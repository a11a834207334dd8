/* Device-model API: preset lookup, the consistency check, and resolving a
 * NAME-or-FILE argument. The model-file reader and writer live in
 * model_file.c. */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "model_internal.h"

unsigned cta_device_preset_count(void)
{
	unsigned n;

	cta__model_presets(&n);
	return n;
}

const struct cta_device_model *cta_device_preset(unsigned i)
{
	unsigned n;
	const struct cta_device_model *p = cta__model_presets(&n);

	return i < n ? &p[i] : NULL;
}

const struct cta_device_model *cta_device_find(const char *name)
{
	unsigned n;
	const struct cta_device_model *p = cta__model_presets(&n);
	const char *canon;

	if (!name)
		return NULL;
	canon = cta__model_alias(name);
	if (canon)
		name = canon;
	for (unsigned i = 0; i < n; i++)
		if (strcasecmp(p[i].name, name) == 0)
			return &p[i];
	return NULL;
}

static void msg(char *errbuf, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void msg(char *errbuf, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	if (!errbuf || errlen == 0)
		return;
	va_start(ap, fmt);
	vsnprintf(errbuf, errlen, fmt, ap);
	va_end(ap);
}

/* Fails the check with a message and the key it blames. */
#define FAIL(key, ...)                                                                             \
	do {                                                                                       \
		msg(errbuf, errlen, __VA_ARGS__);                                                  \
		if (blamed_key)                                                                    \
			*blamed_key = (key);                                                       \
		return CTA_EINVAL;                                                                 \
	} while (0)

/* Each limit that must be at least 1 for occupancy to make sense. */
#define NONZERO(field)                                                                             \
	do {                                                                                       \
		if (m->field == 0)                                                                 \
			FAIL(#field, #field " must not be 0");                                     \
	} while (0)

/* Checks the SM/TPC/GPC arrays: ids in range, every GPC used, a TPC never
 * holds more than sms_per_tpc SMs nor spans two GPCs. */
static int check_hierarchy(const struct cta_device_model *m, char *errbuf, size_t errlen,
                           const char **blamed_key)
{
	unsigned ntpc = (m->sm_count + m->sms_per_tpc - 1) / m->sms_per_tpc;
	unsigned short tpc_sms[CTA_DEVICE_MAX_SMS];
	unsigned short tpc_gpc[CTA_DEVICE_MAX_SMS];
	unsigned char gpc_used[CTA_DEVICE_MAX_SMS];

	memset(tpc_sms, 0, sizeof(tpc_sms));
	memset(gpc_used, 0, sizeof(gpc_used));
	for (unsigned i = 0; i < m->sm_count; i++) {
		unsigned g = m->gpc_of_sm[i], t = m->tpc_of_sm[i];

		if (g >= m->gpc_count)
			FAIL("gpc_of_sm", "gpc_of_sm[%u] = %u is not below gpc_count (%u)", i, g,
			     m->gpc_count);
		if (t >= ntpc)
			FAIL("tpc_of_sm",
			     "tpc_of_sm[%u] = %u is not below the TPC count (%u = sm_count / "
			     "sms_per_tpc, rounded up)",
			     i, t, ntpc);
		if (tpc_sms[t]++ == 0)
			tpc_gpc[t] = (unsigned short)g;
		else if (tpc_gpc[t] != g)
			FAIL("gpc_of_sm", "TPC %u spans GPCs %u and %u (SM %u)", t, tpc_gpc[t], g,
			     i);
		if (tpc_sms[t] > m->sms_per_tpc)
			FAIL("tpc_of_sm", "TPC %u holds more than sms_per_tpc (%u) SMs", t,
			     m->sms_per_tpc);
		gpc_used[g] = 1;
	}
	for (unsigned g = 0; g < m->gpc_count; g++)
		if (!gpc_used[g])
			FAIL("gpc_of_sm", "GPC %u has no SM (gpc_count is %u)", g, m->gpc_count);
	return 0;
}

static int check_placement(const struct cta_device_model *m, char *errbuf, size_t errlen,
                           const char **blamed_key)
{
	unsigned char seen[CTA_DEVICE_MAX_SMS];

	if (m->placement != CTA_PLACE_SPREAD && m->placement != CTA_PLACE_ROUND_ROBIN &&
	    m->placement != CTA_PLACE_ORDER && m->placement != CTA_PLACE_SWEEP)
		FAIL("placement", "placement %d is not a known policy", (int)m->placement);
	if (m->sweep_first_len > CTA_DEVICE_MAX_SWEEP_FIRST || m->sweep_first_len > m->sm_count)
		FAIL("sweep_first", "sweep_first has %u entries, more than sm_count (%u) or %d",
		     m->sweep_first_len, m->sm_count, CTA_DEVICE_MAX_SWEEP_FIRST);
	if (m->cluster_prior_len > CTA_DEVICE_MAX_CLUSTER_PRIOR)
		FAIL("cluster_prior_rot", "cluster_prior_rot has %u entries, more than %d",
		     m->cluster_prior_len, CTA_DEVICE_MAX_CLUSTER_PRIOR);
	if (m->placement == CTA_PLACE_SWEEP && (!m->sweep_gap_first || !m->sweep_gap_later))
		FAIL("sweep_gap_first",
		     "placement 'sweep' needs sweep_gap_first and sweep_gap_later of at least 1");
	memset(seen, 0, sizeof(seen));
	for (unsigned i = 0; i < m->sweep_first_len; i++) {
		unsigned sm = m->sweep_first[i];

		if (sm >= m->sm_count)
			FAIL("sweep_first",
			     "sweep_first entry %u is SM %u, not below sm_count (%u)", i, sm,
			     m->sm_count);
		if (seen[sm])
			FAIL("sweep_first", "sweep_first lists SM %u twice", sm);
		seen[sm] = 1;
	}
	if (m->placement_order_len > m->sm_count)
		FAIL("placement_order", "placement_order has %u entries, more than sm_count (%u)",
		     m->placement_order_len, m->sm_count);
	if (m->placement == CTA_PLACE_ORDER && m->placement_order_len == 0 &&
	    m->wave_order_count == 0)
		FAIL("placement",
		     "placement 'order' needs a non-empty placement_order or wave_order");
	if (m->wave_order_count > CTA_DEVICE_MAX_WAVE_ORDERS)
		FAIL("wave_order", "more than %d wave orders", CTA_DEVICE_MAX_WAVE_ORDERS);
	for (unsigned i = 0; i < m->wave_order_count; i++)
		for (unsigned j = 0; j < m->wave_order[i].len; j++)
			if (m->wave_order[i].sm[j] >= m->sm_count)
				FAIL("wave_order",
				     "wave_order for grid %llu: entry %u is SM %u, not below "
				     "sm_count "
				     "(%u)",
				     (unsigned long long)m->wave_order[i].grid, j,
				     m->wave_order[i].sm[j], m->sm_count);
	memset(seen, 0, sizeof(seen));
	for (unsigned i = 0; i < m->placement_order_len; i++) {
		unsigned sm = m->placement_order[i];

		if (sm >= m->sm_count)
			FAIL("placement_order",
			     "placement_order entry %u is SM %u, not below sm_count (%u)", i, sm,
			     m->sm_count);
		if (seen[sm])
			FAIL("placement_order", "placement_order lists SM %u twice", sm);
		seen[sm] = 1;
	}
	return 0;
}

int cta__model_check(const struct cta_device_model *m, char *errbuf, size_t errlen,
                     const char **blamed_key)
{
	int rc;

	if (blamed_key)
		*blamed_key = NULL;
	if (!m) {
		msg(errbuf, errlen, "no device model");
		return CTA_EINVAL;
	}
	if (memchr(m->name, '\0', sizeof(m->name)) == NULL || m->name[0] == '\0')
		FAIL("name", "name must be a non-empty string of at most %d bytes",
		     CTA_DEVICE_NAME_MAX - 1);
	/* A model file stores the name as the rest of a line after "name =",
	 * trimmed and cut at '#', so only such names survive a round trip. */
	{
		size_t len = strlen(m->name);

		if (isspace((unsigned char)m->name[0]) ||
		    isspace((unsigned char)m->name[len - 1]) || strpbrk(m->name, "#\n\r") != NULL)
			FAIL("name",
			     "name must not start or end with whitespace nor contain '#' or a "
			     "line break");
	}
	NONZERO(cc_major);
	if (m->has_clc > 1)
		FAIL("has_clc", "has_clc must be 0 or 1, not %u", m->has_clc);
	NONZERO(sm_count);
	if (m->sm_count > CTA_DEVICE_MAX_SMS)
		FAIL("sm_count", "sm_count %u exceeds the maximum of %d", m->sm_count,
		     CTA_DEVICE_MAX_SMS);
	NONZERO(sms_per_tpc);
	NONZERO(gpc_count);
	if (m->gpc_count > m->sm_count)
		FAIL("gpc_count", "gpc_count (%u) exceeds sm_count (%u)", m->gpc_count,
		     m->sm_count);

	NONZERO(max_threads_per_sm);
	NONZERO(max_warps_per_sm);
	NONZERO(max_blocks_per_sm);
	NONZERO(max_threads_per_block);
	NONZERO(warp_size);
	NONZERO(regs_per_sm);
	NONZERO(max_regs_per_thread);
	NONZERO(max_regs_per_block);
	NONZERO(reg_alloc_unit);
	NONZERO(smem_alloc_unit);
	NONZERO(max_cluster_size);
	if ((uint64_t)m->max_warps_per_sm * m->warp_size < m->max_threads_per_sm)
		FAIL("max_warps_per_sm",
		     "max_warps_per_sm (%u) x warp_size (%u) is less than max_threads_per_sm (%u)",
		     m->max_warps_per_sm, m->warp_size, m->max_threads_per_sm);
	if (m->max_threads_per_block > m->max_threads_per_sm)
		FAIL("max_threads_per_block",
		     "max_threads_per_block (%u) exceeds max_threads_per_sm (%u)",
		     m->max_threads_per_block, m->max_threads_per_sm);
	if (m->max_regs_per_block > m->regs_per_sm)
		FAIL("max_regs_per_block", "max_regs_per_block (%u) exceeds regs_per_sm (%u)",
		     m->max_regs_per_block, m->regs_per_sm);
	if (m->max_regs_per_thread > m->max_regs_per_block)
		FAIL("max_regs_per_thread",
		     "max_regs_per_thread (%u) exceeds max_regs_per_block (%u)",
		     m->max_regs_per_thread, m->max_regs_per_block);
	if ((uint64_t)m->max_smem_per_block + m->smem_reserved_per_block > m->smem_per_sm)
		FAIL("max_smem_per_block",
		     "max_smem_per_block (%u) + smem_reserved_per_block (%u) exceeds "
		     "smem_per_sm (%u)",
		     m->max_smem_per_block, m->smem_reserved_per_block, m->smem_per_sm);
	if (m->priority_greatest > m->priority_least)
		FAIL("priority_greatest",
		     "priority_greatest (%d) must not be above priority_least (%d): lower "
		     "numbers are higher priorities",
		     m->priority_greatest, m->priority_least);

	rc = check_hierarchy(m, errbuf, errlen, blamed_key);
	if (rc)
		return rc;
	for (unsigned r = 1; r <= CTA_DEVICE_MAX_RESIDENT; r++)
		if (m->spin_scale_ppm[r] > CTA_DEVICE_SPIN_SCALE_MAX)
			FAIL("spin_scale", "spin_scale for %u resident blocks is %u ppm, above %u",
			     r, m->spin_scale_ppm[r], CTA_DEVICE_SPIN_SCALE_MAX);
	if (m->spin_scale_ppm[0])
		FAIL("spin_scale", "spin_scale for 0 resident blocks: counts start at 1");
	for (unsigned r = 0; r <= CTA_DEVICE_MAX_RESIDENT; r++)
		if (m->spin_add_ns[r] > CTA_DEVICE_SPIN_ADD_MAX ||
		    (m->spin_add_ns[r] && (r == 0 || !(m->spin_add_mask >> (r - 1) & 1))))
			FAIL("spin_add",
			     "spin_add for %u resident blocks is %u ns: not given, or above %u", r,
			     m->spin_add_ns[r], CTA_DEVICE_SPIN_ADD_MAX);
	return check_placement(m, errbuf, errlen, blamed_key);
}

uint32_t cta_device_spin_scale_ppm(const struct cta_device_model *m, unsigned resident)
{
	if (resident > CTA_DEVICE_MAX_RESIDENT)
		resident = CTA_DEVICE_MAX_RESIDENT;
	for (unsigned r = resident; r >= 1; r--)
		if (m->spin_scale_ppm[r])
			return m->spin_scale_ppm[r];
	for (unsigned r = resident + 1; r <= CTA_DEVICE_MAX_RESIDENT; r++)
		if (m->spin_scale_ppm[r])
			return m->spin_scale_ppm[r];
	return 0;
}

uint32_t cta_device_spin_add_ns(const struct cta_device_model *m, unsigned resident)
{
	if (!m->spin_add_mask)
		return 0;
	if (resident > CTA_DEVICE_MAX_RESIDENT)
		resident = CTA_DEVICE_MAX_RESIDENT;
	for (unsigned r = resident; r >= 1; r--)
		if (m->spin_add_mask >> (r - 1) & 1)
			return m->spin_add_ns[r];
	for (unsigned r = resident + 1; r <= CTA_DEVICE_MAX_RESIDENT; r++)
		if (m->spin_add_mask >> (r - 1) & 1)
			return m->spin_add_ns[r];
	return 0;
}

int cta_device_validate(const struct cta_device_model *m, char *errbuf, size_t errlen)
{
	return cta__model_check(m, errbuf, errlen, NULL);
}

int cta_device_resolve(struct cta_device_model *out, const char *name_or_path, char *errbuf,
                       size_t errlen)
{
	const struct cta_device_model *p;
	struct stat st;
	char list[512];
	size_t used = 0;

	if (!out || !name_or_path || !*name_or_path) {
		msg(errbuf, errlen, "no device name or model file given");
		return CTA_EINVAL;
	}
	p = cta_device_find(name_or_path);
	if (p) {
		*out = *p;
		return 0;
	}
	if (stat(name_or_path, &st) == 0)
		return cta_device_load(out, name_or_path, errbuf, errlen);

	list[0] = '\0';
	for (unsigned i = 0; (p = cta_device_preset(i)) != NULL; i++) {
		int n = snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "", p->name);
		if (n < 0 || (size_t)n >= sizeof(list) - used)
			break;
		used += (size_t)n;
	}
	msg(errbuf, errlen, "'%s' is neither a device preset (%s) nor a model file", name_or_path,
	    list);
	return CTA_ENOTFOUND;
}
