/* Reads and writes device-model files: line-oriented `key = value` text with
 * '#' comments, arrays as space-separated lists, and an optional leading
 * `base = PRESET` to override a preset. docs/DEVICES.md is the format's
 * specification; every error names FILE:LINE. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ctasim/io.h"
#include "model_internal.h"

enum ktype { K_STR, K_UINT, K_INT, K_U64, K_PLACE, K_ARR };

struct key {
	const char *name;
	enum ktype type;
	size_t off;
	unsigned long long max; /* K_UINT, K_U64: largest accepted value */
	int required;           /* required when the file has no base */
};

#define F(field) offsetof(struct cta_device_model, field)
#define UINT(field, max)                                                                           \
	{                                                                                          \
#field, K_UINT, F(field), (max), 1                                                 \
	}
#define U64(field)                                                                                 \
	{                                                                                          \
#field, K_U64, F(field), UINT64_MAX, 1                                             \
	}
/* Keys a file without a base may leave out (0 or empty). */
#define OPT_UINT(field, max)                                                                       \
	{                                                                                          \
#field, K_UINT, F(field), (max), 0                                                 \
	}

/* Every field, in the order cta_device_save writes them. */
static const struct key keys[] = {
    {"name", K_STR, F(name), 0, 1},
    UINT(cc_major, UINT_MAX),
    UINT(cc_minor, UINT_MAX),
    UINT(has_clc, 1),
    UINT(sm_count, CTA_DEVICE_MAX_SMS),
    UINT(sms_per_tpc, UINT_MAX),
    UINT(gpc_count, CTA_DEVICE_MAX_SMS),
    UINT(max_threads_per_sm, UINT_MAX),
    UINT(max_warps_per_sm, UINT_MAX),
    UINT(max_blocks_per_sm, UINT_MAX),
    UINT(max_threads_per_block, UINT_MAX),
    UINT(warp_size, UINT_MAX),
    UINT(regs_per_sm, UINT_MAX),
    UINT(max_regs_per_thread, UINT_MAX),
    UINT(max_regs_per_block, UINT_MAX),
    UINT(reg_alloc_unit, UINT_MAX),
    UINT(smem_per_sm, UINT_MAX),
    UINT(max_smem_per_block, UINT_MAX),
    UINT(smem_reserved_per_block, UINT_MAX),
    UINT(smem_alloc_unit, UINT_MAX),
    UINT(max_cluster_size, UINT_MAX),
    {"priority_greatest", K_INT, F(priority_greatest), 0, 1},
    {"priority_least", K_INT, F(priority_least), 0, 1},
    U64(launch_latency_ns),
    U64(dispatch_latency_ns),
    U64(block_start_ns),
    U64(block_retire_ns),
    U64(cancel_latency_ns),
    U64(barrier_ns),
    {"placement", K_PLACE, F(placement), 0, 0},
    {"placement_order", K_ARR, F(placement_order), 0, 0},
    {"gpc_of_sm", K_ARR, F(gpc_of_sm), 0, 0},
    {"tpc_of_sm", K_ARR, F(tpc_of_sm), 0, 0},
    {"sweep_first", K_ARR, F(sweep_first), 0, 0},
    OPT_UINT(sweep_gap_first, 1024),
    OPT_UINT(sweep_gap_later, 1024),
    OPT_UINT(sweep_gap_switch, 1024),
    OPT_UINT(sweep_small_prior, 1024),
    OPT_UINT(sweep_rotate_prior, 1024),
    OPT_UINT(sweep_late_prior, 1024),
    OPT_UINT(sweep_prior_unit, 1u << 30),
    {"cluster_prior_rot", K_ARR, F(cluster_prior_rot), 0, 0},
    {"fitted_on", K_STR, F(fitted_on), 0, 0},
    OPT_UINT(spin_by_threads, 2),
    OPT_UINT(spin_block_add_ns, CTA_DEVICE_SPIN_ADD_MAX),
    OPT_UINT(spin_gate_threads, 65536),
    OPT_UINT(spin_regs_free, 64),
    OPT_UINT(spin_regs_wait_ns, CTA_DEVICE_SPIN_ADD_MAX),
    OPT_UINT(spin_regs_late_ns, CTA_DEVICE_SPIN_ADD_MAX),
    OPT_UINT(spin_regs_hold_warps, 64),
    OPT_UINT(spin_regs_order, 1),
    OPT_UINT(spin_regs_pass_ppm, 1000000),
    OPT_UINT(spin_regs_pass_blocks, 64),
    OPT_UINT(spin_issue_ps, 1000000),
    OPT_UINT(clc_emulated, 1),
    OPT_UINT(clc_request_ns, CTA_DEVICE_SPIN_ADD_MAX),
    OPT_UINT(clc_steal_ns, CTA_DEVICE_SPIN_ADD_MAX),
    OPT_UINT(clc_request_tail_ns, CTA_DEVICE_SPIN_ADD_MAX),
    OPT_UINT(clc_claim_ns, CTA_DEVICE_SPIN_ADD_MAX),
    OPT_UINT(clc_claim_turn_ns, CTA_DEVICE_SPIN_ADD_MAX),
    OPT_UINT(clc_exit_ns, CTA_DEVICE_SPIN_ADD_MAX),
    OPT_UINT(clc_drain_ns, CTA_DEVICE_SPIN_ADD_MAX),
    OPT_UINT(clc_drain_first_ns, CTA_DEVICE_SPIN_ADD_MAX),
    OPT_UINT(clc_multicast_ns, CTA_DEVICE_SPIN_ADD_MAX),
    OPT_UINT(clc_entry_ps, 1000000),
    OPT_UINT(clc_sector_ps, 1000000),
    OPT_UINT(clc_far_gpcs, 0xffffffffu),
    OPT_UINT(clc_far_ppm, 100000000),
    OPT_UINT(clc_crowd_units, 1000000),
    OPT_UINT(clc_crowd_tail_ppm, 1000000),
    OPT_UINT(cluster_barrier_ns, CTA_DEVICE_SPIN_ADD_MAX),
    OPT_UINT(cluster_max_blocks_per_sm, 1024),
    OPT_UINT(sweep_carry, 1),
    OPT_UINT(sweep_carry_late, 1u << 30),
    OPT_UINT(sweep_carry_mid, 1u << 30),
    OPT_UINT(sweep_carry_steady, 1u << 30),
    OPT_UINT(cluster_carry_rot, CTA_DEVICE_MAX_SWEEP_FIRST),
    OPT_UINT(cluster_carry_rot_half, CTA_DEVICE_MAX_SWEEP_FIRST),
    OPT_UINT(sweep_conc, 1),
    OPT_UINT(launch_gap_ns, 1000000000u),
    OPT_UINT(clc_late_ppm, 2000000),
    OPT_UINT(wait_load_ns, CTA_DEVICE_SPIN_ADD_MAX),
    OPT_UINT(wait_atomic_ns, CTA_DEVICE_SPIN_ADD_MAX),
    OPT_UINT(wait_turn_ps, 1000000),
    OPT_UINT(wait_sync_ps, 1000000),
    OPT_UINT(wait_hit_ns, CTA_DEVICE_SPIN_ADD_MAX),
    OPT_UINT(wait_poll_ps, 1000000),
};

#define NKEYS (sizeof(keys) / sizeof(keys[0]))

static const char *const place_names[] = {"spread", "round_robin", "order", "sweep"};

/* State of one load: the model being built and where each key was set. */
struct loader {
	const char *path;
	struct cta_device_model m;
	unsigned line_of[NKEYS]; /* 0: not set in the file */
	unsigned arr_len[NKEYS]; /* entries read, for K_ARR keys */
	unsigned base_line, last_line;
	unsigned spin_line[CTA_DEVICE_MAX_RESIDENT + 1]; /* line of each spin_scale */
	unsigned add_line[CTA_DEVICE_MAX_RESIDENT + 1];  /* line of each spin_add */
	int any_spin_line, any_add_line; /* the file gave spin_scale / spin_add lines */
	int any_key;
	char *errbuf;
	size_t errlen;
};

static int fail(struct loader *ld, unsigned line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Formats "FILE:LINE: message" and returns CTA_EPARSE. */
static int fail(struct loader *ld, unsigned line, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!ld->errbuf || ld->errlen == 0)
		return CTA_EPARSE;
	n = snprintf(ld->errbuf, ld->errlen, "%s:%u: ", ld->path, line);
	if (n >= 0 && (size_t)n < ld->errlen) {
		va_start(ap, fmt);
		vsnprintf(ld->errbuf + n, ld->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return CTA_EPARSE;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = '\0';
	return s;
}

/* Edit distance, for suggesting the key a typo meant. Keys are short. */
static unsigned edit_distance(const char *a, const char *b)
{
	unsigned row[64];
	size_t la = strlen(a), lb = strlen(b);

	if (lb >= sizeof(row) / sizeof(row[0]) || la >= 64)
		return UINT_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = (unsigned)j;
	for (size_t i = 1; i <= la; i++) {
		unsigned diag = row[0];

		row[0] = (unsigned)i;
		for (size_t j = 1; j <= lb; j++) {
			unsigned up = row[j];
			unsigned best = diag + (tolower((unsigned char)a[i - 1]) !=
			                        tolower((unsigned char)b[j - 1]));

			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

static const char *suggest(const char *word)
{
	const char *best = NULL;
	unsigned best_d = 3; /* suggest only close misspellings */

	for (size_t i = 0; i < NKEYS; i++) {
		unsigned d = edit_distance(word, keys[i].name);

		if (d < best_d) {
			best_d = d;
			best = keys[i].name;
		}
	}
	return best;
}

/* Parses a decimal number of at most `max`; `allow_neg` for signed fields.
 * Returns 0, or fails with a message naming the key. */
static int parse_num(struct loader *ld, unsigned line, const char *key, const char *s,
                     int allow_neg, long long min, unsigned long long max, unsigned long long *uout,
                     long long *sout)
{
	const char *p = s;
	int neg = 0;
	char *end;
	unsigned long long v;

	if (*p == '-' || *p == '+') {
		neg = *p == '-';
		p++;
	}
	if (!isdigit((unsigned char)*p))
		return *s == '\0' ? fail(ld, line, "missing value for '%s'", key)
		                  : fail(ld, line, "bad number '%s' for '%s'", s, key);
	errno = 0;
	v = strtoull(p, &end, 10);
	if (*end != '\0')
		return fail(ld, line, "bad number '%s' for '%s'", s, key);
	if (neg && !allow_neg && v != 0)
		return fail(ld, line, "'%s' must not be negative (%s)", key, s);
	if (errno == ERANGE)
		return fail(ld, line, "value %s for '%s' is out of range", s, key);
	if (allow_neg) {
		long long sv;

		if (v > (unsigned long long)LLONG_MAX)
			return fail(ld, line, "value %s for '%s' is out of range", s, key);
		sv = neg ? -(long long)v : (long long)v;
		if (sv < min || (sv > 0 && (unsigned long long)sv > max))
			return fail(ld, line, "value %s for '%s' is out of range (%lld to %llu)", s,
			            key, min, max);
		*sout = sv;
		return 0;
	}
	if (v > max)
		return fail(ld, line, "value %s for '%s' is out of range (at most %llu)", s, key,
		            max);
	*uout = v;
	return 0;
}

static int parse_array(struct loader *ld, unsigned line, size_t k, char *val)
{
	uint16_t *arr = (uint16_t *)((char *)&ld->m + keys[k].off);
	unsigned n = 0, cap = keys[k].off == F(sweep_first)         ? CTA_DEVICE_MAX_SWEEP_FIRST
	                      : keys[k].off == F(cluster_prior_rot) ? CTA_DEVICE_MAX_CLUSTER_PRIOR
	                                                            : CTA_DEVICE_MAX_SMS;
	char *save = NULL;

	for (char *tok = strtok_r(val, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		unsigned long long v;
		int rc;

		if (n == cap)
			return fail(ld, line, "'%s' has more than %u entries", keys[k].name, cap);
		rc = parse_num(ld, line, keys[k].name, tok, 0, 0, UINT16_MAX, &v, NULL);
		if (rc)
			return rc;
		arr[n++] = (uint16_t)v;
	}
	ld->arr_len[k] = n;
	return 0;
}

static int parse_value(struct loader *ld, unsigned line, size_t k, char *val)
{
	const struct key *key = &keys[k];
	char *field = (char *)&ld->m + key->off;
	unsigned long long u = 0;
	long long s = 0;
	int rc;

	switch (key->type) {
	case K_STR:
		if (*val == '\0')
			return fail(ld, line, "missing value for '%s'", key->name);
		if (strlen(val) >= CTA_DEVICE_NAME_MAX)
			return fail(ld, line, "'%s' is longer than %d bytes", key->name,
			            CTA_DEVICE_NAME_MAX - 1);
		memset(field, 0, CTA_DEVICE_NAME_MAX);
		memcpy(field, val, strlen(val));
		return 0;
	case K_UINT:
		rc = parse_num(ld, line, key->name, val, 0, 0, key->max, &u, NULL);
		if (!rc)
			*(unsigned *)(void *)field = (unsigned)u;
		return rc;
	case K_U64:
		rc = parse_num(ld, line, key->name, val, 0, 0, key->max, &u, NULL);
		if (!rc)
			*(uint64_t *)(void *)field = (uint64_t)u;
		return rc;
	case K_INT:
		rc = parse_num(ld, line, key->name, val, 1, INT_MIN, INT_MAX, NULL, &s);
		if (!rc)
			*(int *)(void *)field = (int)s;
		return rc;
	case K_PLACE:
		for (unsigned i = 0; i < sizeof(place_names) / sizeof(place_names[0]); i++) {
			if (strcasecmp(val, place_names[i]) == 0) {
				ld->m.placement = (cta_placement)i;
				return 0;
			}
		}
		return fail(ld, line,
		            "unknown placement '%s' (expected spread, round_robin, order or sweep)",
		            val);
	case K_ARR:
		return parse_array(ld, line, k, val);
	}
	return fail(ld, line, "internal error: key '%s' has no type", key->name);
}

static size_t key_index(const char *name)
{
	for (size_t i = 0; i < NKEYS; i++)
		if (strcmp(keys[i].name, name) == 0)
			return i;
	return NKEYS;
}

static int parse_base(struct loader *ld, unsigned line, const char *val)
{
	const struct cta_device_model *p;

	if (ld->base_line)
		return fail(ld, line, "duplicate key 'base' (first set on line %u)", ld->base_line);
	if (ld->any_key)
		return fail(ld, line, "'base' must come before any other key");
	p = cta_device_find(val);
	if (!p) {
		char list[256];
		size_t used = 0;

		list[0] = '\0';
		for (unsigned i = 0; (p = cta_device_preset(i)) != NULL; i++) {
			int n = snprintf(list + used, sizeof(list) - used, "%s%s", i ? ", " : "",
			                 p->name);
			if (n < 0 || (size_t)n >= sizeof(list) - used)
				break;
			used += (size_t)n;
		}
		return fail(ld, line, "unknown base preset '%s' (presets: %s)", val, list);
	}
	ld->m = *p;
	ld->base_line = line;
	return 0;
}

/* "wave_order = GRID SM SM ...": one line per measured grid size. */
static int parse_wave(struct loader *ld, unsigned line, char *v)
{
	struct cta_device_model *m = &ld->m;
	if (m->wave_order_count == CTA_DEVICE_MAX_WAVE_ORDERS)
		return fail(ld, line, "more than %d wave_order lines", CTA_DEVICE_MAX_WAVE_ORDERS);
	struct cta_wave_order *w = &m->wave_order[m->wave_order_count];
	char *end;
	errno = 0;
	unsigned long long g = strtoull(v, &end, 10);
	if (errno || end == v || g == 0)
		return fail(ld, line, "wave_order: expected the grid size (blocks) first, got '%s'",
		            v);
	w->grid = g;
	w->len = 0;
	for (char *p = end;;) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		unsigned long sm = strtoul(p, &end, 10);
		if (end == p)
			return fail(ld, line, "wave_order: '%s' is not an SM number", p);
		if (w->len == CTA_DEVICE_MAX_WAVE)
			return fail(ld, line, "wave_order: more than %d entries",
			            CTA_DEVICE_MAX_WAVE);
		if (sm >= CTA_DEVICE_MAX_SMS)
			return fail(ld, line, "wave_order: SM %lu is out of range", sm);
		w->sm[w->len++] = (uint16_t)sm;
		p = end;
	}
	if (!w->len)
		return fail(ld, line, "wave_order for grid %llu lists no SM", g);
	for (unsigned i = 0; i < m->wave_order_count; i++)
		if (m->wave_order[i].grid == g && m->wave_order[i].len == w->len)
			return fail(ld, line, "second wave_order for grid %llu with %u entries", g,
			            w->len);
	m->wave_order_count++;
	return 0;
}

/* The two numbers of a "spin_scale" or "spin_add" line, "RESIDENT VALUE":
 * checks the resident count, and leaves the value's text in *vtext and its
 * number in *val; returns 1 when the value is not a number. */
static int parse_resident_pair(struct loader *ld, unsigned line, char *v, const char *key,
                               const char *what, unsigned long long *r, char **vtext,
                               unsigned long long *val)
{
	char *end;
	errno = 0;
	*r = strtoull(v, &end, 10);
	if (errno || end == v || *v == '-' || (*end != ' ' && *end != '\t'))
		return fail(ld, line, "%s: expected 'RESIDENT %s' (two numbers), got '%s'", key,
		            what, v);
	if (*r < 1 || *r > CTA_DEVICE_MAX_RESIDENT)
		return fail(ld, line, "%s: resident count %llu is out of range (1 .. %d)", key, *r,
		            CTA_DEVICE_MAX_RESIDENT);
	char *p = end;
	while (*p == ' ' || *p == '\t')
		p++;
	*vtext = p;
	errno = 0;
	*val = strtoull(p, &end, 10);
	if (errno || end == p || *p == '-' || *end)
		return 1; /* the caller names what the value should be */
	return 0;
}

/* "spin_scale = RESIDENT PPM": one line per resident-block count. */
static int parse_spin_scale(struct loader *ld, unsigned line, char *v)
{
	unsigned long long r, ppm;
	char *p;
	int rc = parse_resident_pair(ld, line, v, "spin_scale", "PPM", &r, &p, &ppm);
	if (rc == 1)
		return fail(ld, line, "spin_scale: bad factor '%s' (parts per million, an integer)",
		            p);
	if (rc)
		return rc;
	if (ppm < 1 || ppm > CTA_DEVICE_SPIN_SCALE_MAX)
		return fail(ld, line,
		            "spin_scale: factor %llu ppm is out of range (1 .. %u; 1000000 is "
		            "unscaled)",
		            ppm, CTA_DEVICE_SPIN_SCALE_MAX);
	if (ld->spin_line[r])
		return fail(ld, line,
		            "second spin_scale for %llu resident blocks (first on line %u)", r,
		            ld->spin_line[r]);
	if (!ld->any_spin_line) {
		/* A file's spin_scale lines replace the base's whole table, and
		 * its spin_add lines (or none) the base's adds: a duration model
		 * is fitted as one piece. */
		memset(ld->m.spin_scale_ppm, 0, sizeof(ld->m.spin_scale_ppm));
		if (!ld->any_add_line) {
			memset(ld->m.spin_add_ns, 0, sizeof(ld->m.spin_add_ns));
			ld->m.spin_add_mask = 0;
		}
		ld->any_spin_line = 1;
	}
	ld->spin_line[r] = line;
	ld->any_key = 1;
	ld->m.spin_scale_ppm[r] = (uint32_t)ppm;
	return 0;
}

/* "spin_add = RESIDENT NS": one line per resident-block count. */
static int parse_spin_add(struct loader *ld, unsigned line, char *v)
{
	unsigned long long r, ns;
	char *p;
	int rc = parse_resident_pair(ld, line, v, "spin_add", "NS", &r, &p, &ns);
	if (rc == 1)
		return fail(ld, line, "spin_add: bad time '%s' (nanoseconds, an integer)", p);
	if (rc)
		return rc;
	if (ns > CTA_DEVICE_SPIN_ADD_MAX)
		return fail(ld, line, "spin_add: %llu ns is out of range (0 .. %u)", ns,
		            CTA_DEVICE_SPIN_ADD_MAX);
	if (ld->add_line[r])
		return fail(ld, line, "second spin_add for %llu resident blocks (first on line %u)",
		            r, ld->add_line[r]);
	if (!ld->any_add_line) {
		memset(ld->m.spin_add_ns, 0, sizeof(ld->m.spin_add_ns));
		ld->m.spin_add_mask = 0;
		if (!ld->any_spin_line)
			memset(ld->m.spin_scale_ppm, 0, sizeof(ld->m.spin_scale_ppm));
		ld->any_add_line = 1;
	}
	ld->add_line[r] = line;
	ld->any_key = 1;
	ld->m.spin_add_ns[r] = (uint32_t)ns;
	ld->m.spin_add_mask |= 1ull << (r - 1);
	return 0;
}

static int parse_line(struct loader *ld, unsigned line, char *text)
{
	char *hash = strchr(text, '#');
	char *eq, *k, *v;
	size_t ki;

	if (hash)
		*hash = '\0';
	k = trim(text);
	if (*k == '\0')
		return 0;
	eq = strchr(k, '=');
	if (!eq)
		return fail(ld, line, "expected 'key = value', got '%s'", k);
	*eq = '\0';
	v = trim(eq + 1);
	k = trim(k);
	if (*k == '\0')
		return fail(ld, line, "missing key before '='");
	if (strcmp(k, "base") == 0)
		return parse_base(ld, line, v);
	if (strcmp(k, "wave_order") == 0)
		return parse_wave(ld, line, v);
	if (strcmp(k, "spin_scale") == 0)
		return parse_spin_scale(ld, line, v);
	if (strcmp(k, "spin_add") == 0)
		return parse_spin_add(ld, line, v);
	ki = key_index(k);
	if (ki == NKEYS) {
		const char *s = suggest(k);

		if (s)
			return fail(ld, line, "unknown key '%s' (did you mean '%s'?)", k, s);
		return fail(ld, line, "unknown key '%s'", k);
	}
	if (ld->line_of[ki])
		return fail(ld, line, "duplicate key '%s' (first set on line %u)", k,
		            ld->line_of[ki]);
	ld->line_of[ki] = line;
	ld->any_key = 1;
	return parse_value(ld, line, ki, v);
}

/* Cross-key rules that need the whole file: required keys, array lengths,
 * and the SM hierarchy when the file changed its shape without giving it. */
static int finish(struct loader *ld)
{
	size_t i_sm = key_index("sm_count"), i_tpc = key_index("sms_per_tpc");
	size_t i_gpc = key_index("gpc_count"), i_po = key_index("placement_order");
	size_t arrays[2] = {key_index("gpc_of_sm"), key_index("tpc_of_sm")};
	uint16_t saved[2][CTA_DEVICE_MAX_SMS];
	unsigned eof_line = ld->last_line ? ld->last_line : 1;
	int shape_changed, need_layout = 0;

	if (!ld->base_line) {
		for (size_t i = 0; i < NKEYS; i++)
			if (keys[i].required && !ld->line_of[i])
				return fail(ld, eof_line, "missing required key '%s'",
				            keys[i].name);
	}
	for (int a = 0; a < 2; a++) {
		size_t k = arrays[a];

		if (ld->line_of[k] && ld->arr_len[k] != ld->m.sm_count)
			return fail(ld, ld->line_of[k], "'%s' has %u entries but sm_count is %u",
			            keys[k].name, ld->arr_len[k], ld->m.sm_count);
	}
	if (ld->line_of[i_po])
		ld->m.placement_order_len = ld->arr_len[i_po];
	if (ld->line_of[key_index("sweep_first")])
		ld->m.sweep_first_len = ld->arr_len[key_index("sweep_first")];
	if (ld->line_of[key_index("cluster_prior_rot")])
		ld->m.cluster_prior_len = ld->arr_len[key_index("cluster_prior_rot")];

	/* The base's arrays describe the base's shape; a file that changes the
	 * shape without giving the arrays gets an even layout instead. */
	shape_changed =
	    !ld->base_line || ld->line_of[i_sm] || ld->line_of[i_tpc] || ld->line_of[i_gpc];
	for (int a = 0; a < 2; a++)
		if (!ld->line_of[arrays[a]] && shape_changed)
			need_layout = 1;
	if (need_layout && ld->m.sms_per_tpc && ld->m.gpc_count) {
		memcpy(saved[0], ld->m.gpc_of_sm, sizeof(saved[0]));
		memcpy(saved[1], ld->m.tpc_of_sm, sizeof(saved[1]));
		cta__model_layout_even(&ld->m);
		if (ld->line_of[arrays[0]])
			memcpy(ld->m.gpc_of_sm, saved[0], sizeof(saved[0]));
		if (ld->line_of[arrays[1]])
			memcpy(ld->m.tpc_of_sm, saved[1], sizeof(saved[1]));
	}
	if ((ld->any_spin_line || ld->any_add_line) && !ld->line_of[key_index("spin_by_threads")])
		ld->m.spin_by_threads = 0; /* a table of before that key counts blocks */
	/* A table of its own without a per-block add puts all of it per call. */
	if ((ld->any_spin_line || ld->any_add_line) && !ld->line_of[key_index("spin_block_add_ns")])
		ld->m.spin_block_add_ns = 0;
	/* ... and, fitted before the gate existed, has none. */
	if ((ld->any_spin_line || ld->any_add_line) && !ld->line_of[key_index("spin_gate_threads")])
		ld->m.spin_gate_threads = 0;
	if ((ld->any_spin_line || ld->any_add_line) && !ld->line_of[key_index("spin_regs_free")])
		ld->m.spin_regs_free = 0;
	if ((ld->any_spin_line || ld->any_add_line) && !ld->line_of[key_index("spin_regs_wait_ns")])
		ld->m.spin_regs_wait_ns = 0;
	if ((ld->any_spin_line || ld->any_add_line) && !ld->line_of[key_index("spin_regs_late_ns")])
		ld->m.spin_regs_late_ns = 0;
	if ((ld->any_spin_line || ld->any_add_line) &&
	    !ld->line_of[key_index("spin_regs_hold_warps")])
		ld->m.spin_regs_hold_warps = 0;
	if ((ld->any_spin_line || ld->any_add_line) && !ld->line_of[key_index("spin_regs_order")])
		ld->m.spin_regs_order = 0;
	if ((ld->any_spin_line || ld->any_add_line) &&
	    !ld->line_of[key_index("spin_regs_pass_ppm")])
		ld->m.spin_regs_pass_ppm = 0;
	if ((ld->any_spin_line || ld->any_add_line) &&
	    !ld->line_of[key_index("spin_regs_pass_blocks")])
		ld->m.spin_regs_pass_blocks = 0;
	if ((ld->any_spin_line || ld->any_add_line) && !ld->line_of[key_index("spin_issue_ps")])
		ld->m.spin_issue_ps = 0;
	if (ld->base_line && shape_changed && !ld->line_of[key_index("sweep_first")]) {
		/* The base's sweep names SMs of its own shape; its fit does not
		 * carry over to another one. */
		ld->m.sweep_first_len = 0;
		if (!ld->line_of[key_index("fitted_on")])
			ld->m.fitted_on[0] = 0;
	}
	if (ld->base_line && ld->line_of[i_sm] && !ld->line_of[i_po] &&
	    ld->m.placement_order_len > ld->m.sm_count) {
		/* A calibrated order from the base cannot survive fewer SMs. */
		ld->m.placement_order_len = 0;
		if (ld->m.placement == CTA_PLACE_ORDER)
			ld->m.placement = CTA_PLACE_SPREAD;
	}

	{
		char why[256];
		const char *blamed = NULL;
		size_t bk;
		unsigned line;

		if (cta__model_check(&ld->m, why, sizeof(why), &blamed) == 0)
			return 0;
		bk = blamed ? key_index(blamed) : NKEYS;
		line = bk < NKEYS && ld->line_of[bk] ? ld->line_of[bk]
		       : ld->base_line               ? ld->base_line
		                                     : eof_line;
		return fail(ld, line, "%s", why);
	}
}

int cta_device_load(struct cta_device_model *out, const char *path, char *errbuf, size_t errlen)
{
	struct loader *ld;
	FILE *f;
	char *text = NULL;
	int rc = 0;

	if (errbuf && errlen)
		errbuf[0] = '\0';
	if (!out || !path) {
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "no model or path given");
		return CTA_EINVAL;
	}
	f = fopen(path, "r");
	if (!f) {
		int e = errno;

		if (errbuf && errlen)
			snprintf(errbuf, errlen, "%s: cannot open: %s", path, strerror(e));
		return e == ENOENT ? CTA_ENOTFOUND : CTA_EIO;
	}
	struct stat st;
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(f);
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "%s: is a directory, not a device model file",
			         path);
		return CTA_EINVAL;
	}
	/* The loader holds a whole model plus bookkeeping: too big for a
	 * small thread stack, so it lives on the heap. */
	ld = calloc(1, sizeof(*ld));
	if (!ld) {
		fclose(f);
		return CTA_ENOMEM;
	}
	ld->path = path;
	ld->errbuf = errbuf;
	ld->errlen = errlen;
	ld->m.placement = CTA_PLACE_SPREAD;

	/* Bounded input: a model is a few KiB of text, so /dev/zero or a
	 * binary given by mistake is refused at its first bad byte instead of
	 * being read until memory runs out. */
	text = malloc(CTA_DEVICE_MODEL_MAX_LINE + 2);
	if (!text)
		rc = CTA_ENOMEM;
	for (size_t total = 0; !rc;) {
		size_t n = 0;
		int c;
		while ((c = getc(f)) != EOF && c != '\n' && c != 0 &&
		       n <= CTA_DEVICE_MODEL_MAX_LINE)
			text[n++] = (char)c;
		if (c == EOF && n == 0)
			break;
		ld->last_line++;
		total += n + 1;
		if (c == 0) {
			rc = fail(ld, ld->last_line,
			          "NUL byte: binary data, not a device model file");
			break;
		}
		if (n > CTA_DEVICE_MODEL_MAX_LINE) {
			rc = fail(ld, ld->last_line, "line longer than the limit of %d bytes",
			          CTA_DEVICE_MODEL_MAX_LINE);
			break;
		}
		if (total > CTA_DEVICE_MODEL_MAX_BYTES) {
			rc = fail(ld, ld->last_line, "file larger than the limit of %d bytes",
			          CTA_DEVICE_MODEL_MAX_BYTES);
			break;
		}
		text[n++] = '\n';
		text[n] = 0;
		rc = parse_line(ld, ld->last_line, text);
		if (c == EOF)
			break;
	}
	if (!rc && ferror(f)) {
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "%s:%u: read error", path, ld->last_line + 1);
		rc = CTA_EIO;
	}
	if (!rc)
		rc = finish(ld);
	if (!rc)
		*out = ld->m;
	free(text);
	fclose(f);
	free(ld);
	return rc;
}

static void write_array(FILE *f, const char *name, const uint16_t *a, unsigned n)
{
	fprintf(f, "%s =", name);
	for (unsigned i = 0; i < n; i++)
		fprintf(f, " %u", a[i]);
	fputc('\n', f);
}

static void write_model(FILE *f, const struct cta_device_model *m)
{
	fprintf(f, "# ctasim device model (format: docs/DEVICES.md)\n");
	for (size_t i = 0; i < NKEYS; i++) {
		const struct key *k = &keys[i];
		const char *field = (const char *)m + k->off;

		switch (k->type) {
		case K_STR:
			if (*field) /* an empty optional string is left out */
				fprintf(f, "%s = %s\n", k->name, field);
			break;
		case K_UINT:
			fprintf(f, "%s = %u\n", k->name, *(const unsigned *)(const void *)field);
			break;
		case K_U64:
			fprintf(f, "%s = %llu\n", k->name,
			        (unsigned long long)*(const uint64_t *)(const void *)field);
			break;
		case K_INT:
			fprintf(f, "%s = %d\n", k->name, *(const int *)(const void *)field);
			break;
		case K_PLACE:
			fprintf(f, "%s = %s\n", k->name, place_names[m->placement]);
			break;
		case K_ARR:
			if ((k->off == F(sweep_first) && !m->sweep_first_len) ||
			    (k->off == F(cluster_prior_rot) && !m->cluster_prior_len))
				break;
			write_array(f, k->name, (const uint16_t *)(const void *)field,
			            k->off == F(placement_order)     ? m->placement_order_len
			            : k->off == F(sweep_first)       ? m->sweep_first_len
			            : k->off == F(cluster_prior_rot) ? m->cluster_prior_len
			                                             : m->sm_count);
			break;
		}
	}
	for (unsigned i = 0; i < m->wave_order_count; i++) {
		const struct cta_wave_order *w = &m->wave_order[i];
		fprintf(f, "wave_order = %llu", (unsigned long long)w->grid);
		for (unsigned j = 0; j < w->len; j++)
			fprintf(f, " %u", w->sm[j]);
		fprintf(f, "\n");
	}
	for (unsigned r = 1; r <= CTA_DEVICE_MAX_RESIDENT; r++)
		if (m->spin_scale_ppm[r])
			fprintf(f, "spin_scale = %u %u\n", r, m->spin_scale_ppm[r]);
	for (unsigned r = 1; r <= CTA_DEVICE_MAX_RESIDENT; r++)
		if (m->spin_add_mask >> (r - 1) & 1)
			fprintf(f, "spin_add = %u %u\n", r, m->spin_add_ns[r]);
}

int cta_device_save(const struct cta_device_model *m, const char *path, char *errbuf, size_t errlen)
{
	char why[256];
	char *tmp;
	size_t len;
	FILE *f;
	int fd, rc;

	if (!m || !path) {
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "no model or path given");
		return CTA_EINVAL;
	}
	/* A model that would not load back is refused rather than written. */
	rc = cta_device_validate(m, why, sizeof(why));
	if (rc) {
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "%s: not saved: %s", path, why);
		return rc;
	}
	/* "-" is standard output, and a path that exists and is not a
	 * regular file (/dev/null, a pipe) is written in place: renaming a
	 * temporary onto a device node would replace the node itself. */
	struct stat st;
	int direct = !strcmp(path, "-") || (stat(path, &st) == 0 && !S_ISREG(st.st_mode));
	if (direct && strcmp(path, "-") && S_ISDIR(st.st_mode)) {
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "%s: is a directory, not a file", path);
		return CTA_EINVAL;
	}
	if (direct) {
		int dfd =
		    !strcmp(path, "-") ? dup(STDOUT_FILENO) : open(path, O_WRONLY | O_CLOEXEC);
		f = dfd >= 0 ? fdopen(dfd, "w") : NULL;
		if (!f) {
			int e = errno;
			if (dfd >= 0)
				close(dfd);
			if (errbuf && errlen)
				snprintf(errbuf, errlen, "%s: cannot write: %s", path, strerror(e));
			return CTA_EIO;
		}
		write_model(f, m);
		int we = fflush(f) ? errno : ferror(f) ? EIO : 0;
		if (fclose(f) != 0 && !we)
			we = errno;
		if (we) {
			if (errbuf && errlen)
				snprintf(errbuf, errlen, "%s: %s",
				         !strcmp(path, "-") ? "<stdout>" : path, strerror(we));
			return CTA_EIO;
		}
		return 0;
	}
	/* Write beside the target and rename, so that a reader never sees a
	 * half-written model: a private name (O_EXCL | O_NOFOLLOW). */
	(void)len;
	char err[300];
	fd = cta_tmpfile_create(path, &tmp, err, sizeof(err));
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		int e = errno;

		if (fd >= 0) {
			close(fd);
			unlink(tmp);
			free(tmp);
			snprintf(err, sizeof(err), "%s: cannot write: %s", path, strerror(e));
		}
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "%s", err);
		return fd < 0 ? fd : CTA_EIO;
	}
	write_model(f, m);
	/* fflush while errno still says why ("No space left on device"),
	 * and fsync before the rename replaces the old file. */
	int we = fflush(f) ? errno : ferror(f) ? EIO : 0;
	if (!we && fsync(fd) != 0 && errno != EINVAL)
		we = errno;
	if (fclose(f) != 0 && !we)
		we = errno;
	if (we) {
		if (errbuf && errlen)
			snprintf(errbuf, errlen, "%s: %s", path, strerror(we));
		unlink(tmp);
		free(tmp);
		return CTA_EIO;
	}
	if (rename(tmp, path) != 0) {
		int e = errno;

		if (errbuf && errlen)
			snprintf(errbuf, errlen, "%s: cannot rename into place: %s", path,
			         strerror(e));
		unlink(tmp);
		free(tmp);
		return CTA_EIO;
	}
	free(tmp);
	return 0;
}
