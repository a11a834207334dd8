/* The one number parser of the command line, kernel arguments (--arg and a
 * scenario's "args") and option values: every overflow is detected, not
 * wrapped, and ranges are checked after suffixes and shifts are applied. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctasim/errors.h"
#include "ctasim/io.h"

static int bad(char *why, size_t n, const char *what)
{
	if (why && n)
		snprintf(why, n, "%s", what);
	return CTA_EPARSE;
}

/* Digits of s (decimal, or hex after 0x) into *mag; returns the end, or
 * NULL on no digits or overflow (then *ovf is set). */
static const char *digits(const char *s, uint64_t *mag, int *ovf)
{
	unsigned base = 10;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		base = 16;
		s += 2;
	}
	uint64_t v = 0;
	const char *p = s;
	for (;; p++) {
		unsigned d;
		if (*p >= '0' && *p <= '9')
			d = (unsigned)(*p - '0');
		else if (base == 16 && *p >= 'a' && *p <= 'f')
			d = (unsigned)(*p - 'a' + 10);
		else if (base == 16 && *p >= 'A' && *p <= 'F')
			d = (unsigned)(*p - 'A' + 10);
		else
			break;
		if (v > (UINT64_MAX - d) / base) {
			*ovf = 1;
			return NULL;
		}
		v = v * base + d;
	}
	if (p == s)
		return NULL;
	*mag = v;
	return p;
}

/* Sign, magnitude and the suffix or shift: *neg and *mag. */
static int parse_mag(const char *s, unsigned flags, int *neg, uint64_t *mag, char *why,
                     size_t whylen)
{
	int ovf = 0;
	if (!s || !*s)
		return bad(why, whylen, "empty, not an integer");
	*neg = 0;
	if (*s == '-' || *s == '+')
		*neg = *s++ == '-';
	const char *p = digits(s, mag, &ovf);
	if (!p) {
		if (ovf) {
			if (why && whylen)
				snprintf(why, whylen, "too large (overflows 64 bits)");
			return CTA_ERANGE;
		}
		return bad(why, whylen, "not an integer");
	}
	if ((flags & CTA_NUM_SHIFT) && p[0] == '<' && p[1] == '<') {
		uint64_t sh;
		const char *q = digits(p + 2, &sh, &ovf);
		if (!q || *q)
			return bad(why, whylen, "not an integer (a shift is A<<B)");
		if (sh > 63 || (sh && (*mag >> (64 - sh)) != 0)) {
			if (why && whylen)
				snprintf(why, whylen, "shift out of range (overflows 64 bits)");
			return CTA_ERANGE;
		}
		*mag <<= sh;
		return 0;
	}
	if ((flags & CTA_NUM_SUFFIX) && *p) {
		unsigned sh = *p == 'k' || *p == 'K' ? 10 : *p == 'M' ? 20 : *p == 'G' ? 30 : 0;
		if (sh) {
			if (*mag > (UINT64_MAX >> sh)) {
				if (why && whylen)
					snprintf(why, whylen, "too large (overflows 64 bits)");
				return CTA_ERANGE;
			}
			*mag <<= sh;
			p++;
		}
	}
	if (*p)
		return bad(why, whylen,
		           flags ? "not an integer (examples: 1000, 0x100, 64K, 1<<20)"
		                 : "not an integer");
	return 0;
}

int cta_parse_uint(const char *s, uint64_t min, uint64_t max, unsigned flags, uint64_t *out,
                   char *why, size_t whylen)
{
	int neg;
	uint64_t mag;
	int rc = parse_mag(s, flags, &neg, &mag, why, whylen);
	if (rc)
		return rc;
	if (neg && mag)
		return bad(why, whylen, "not a non-negative integer");
	if (mag < min || mag > max) {
		if (why && whylen)
			snprintf(why, whylen, "out of range [%llu, %llu]", (unsigned long long)min,
			         (unsigned long long)max);
		return CTA_ERANGE;
	}
	*out = mag;
	return 0;
}

int cta_parse_int(const char *s, int64_t min, int64_t max, unsigned flags, int64_t *out, char *why,
                  size_t whylen)
{
	int neg;
	uint64_t mag;
	int rc = parse_mag(s, flags, &neg, &mag, why, whylen);
	if (rc)
		return rc;
	int64_t v;
	int fits = neg ? mag <= (uint64_t)INT64_MAX + 1 : mag <= (uint64_t)INT64_MAX;
	if (fits)
		v = neg ? (mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag)
		        : (int64_t)mag;
	if (!fits || v < min || v > max) {
		if (why && whylen)
			snprintf(why, whylen, "out of range [%lld, %lld]", (long long)min,
			         (long long)max);
		return CTA_ERANGE;
	}
	*out = v;
	return 0;
}

int cta_parse_real(const char *s, double min, double max, double *out, char *why, size_t whylen)
{
	if (!s || !*s)
		return bad(why, whylen, "empty, not a number");
	/* strtod would take leading spaces, "nan", "inf" and hex floats. */
	const char *p = s;
	if (*p == '-' || *p == '+')
		p++;
	if (!((*p >= '0' && *p <= '9') || (*p == '.' && p[1] >= '0' && p[1] <= '9')))
		return bad(why, whylen, "not a number");
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		return bad(why, whylen, "not a decimal number");
	char *end;
	errno = 0;
	double x = strtod(s, &end);
	if (end == s || *end)
		return bad(why, whylen, "not a number");
	if (errno == ERANGE || !isfinite(x) || x < min || x > max) {
		if (why && whylen)
			snprintf(why, whylen, "out of range [%g, %g]", min, max);
		return CTA_ERANGE;
	}
	*out = x;
	return 0;
}
