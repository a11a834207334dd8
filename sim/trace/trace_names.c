/* Names of trace events and cancel outcomes, generated from the tables in
 * include/ctasim/trace.h, and the small value checks shared by the writer
 * and the reader. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_internal.h"

static const char *const event_names[] = {
#define CTA__TEV_NAME(name, text) text,
    CTA_TRACE_EVENT_MAP(CTA__TEV_NAME)
#undef CTA__TEV_NAME
};

const char *cta_trace_event_name(cta_trace_event ev)
{
	if ((unsigned)ev >= CTA_TEV__COUNT)
		return "?";
	return event_names[ev];
}

const char *cta_cancel_outcome_name(int outcome)
{
	switch (outcome) {
	case CTA_CANCEL_SUCCESS:
		return "success";
	case CTA_CANCEL_FAIL_EMPTY:
		return "fail_empty";
	case CTA_CANCEL_FAIL_PRIORITY:
		return "fail_priority";
	case CTA_CANCEL_FAIL_INJECTED:
		return "fail_injected";
	}
	return "?";
}

int cta__trace_event_parse(const char *s, size_t n)
{
	for (int i = 0; i < CTA_TEV__COUNT; i++)
		if (strlen(event_names[i]) == n && !memcmp(event_names[i], s, n))
			return i;
	return -1;
}

int cta__trace_backend_ok(const char *v)
{
	return !strcmp(v, "sim") || !strcmp(v, "cuda");
}

int cta__trace_clc_ok(const char *v)
{
	return !strcmp(v, "model") || !strcmp(v, "hardware") || !strcmp(v, "emulated") ||
	       !strcmp(v, "none");
}

size_t cta__trace_fmt_double(char *buf, size_t len, double d)
{
	/* Trying precisions upwards gives "1" for 1.0 and "31.25" for 31.25
	 * instead of the 17-digit noise of %.17g, and still round-trips. */
	int n = 0;
	for (int prec = 1; prec <= 17; prec++) {
		n = snprintf(buf, len, "%.*g", prec, d);
		if (strtod(buf, NULL) == d)
			break;
	}
	return n < 0 ? 0 : (size_t)n;
}
