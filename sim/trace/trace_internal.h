/* Internals shared by the trace writer, the reader and the trace tools:
 * event-name lookup, the column line, and the checks on header strings that
 * both sides must agree on. */
#ifndef CTASIM_SIM_TRACE_INTERNAL_H
#define CTASIM_SIM_TRACE_INTERNAL_H

#include <stddef.h>

#include "ctasim/trace.h"

#define CTA__TRACE_MAGIC   "#ctasim-trace"
#define CTA__TRACE_COLUMNS "t_ns,event,kernel,block,phys,sm,arg,code,text"
#define CTA__TRACE_NCOLS   9

/* Kernel column value that prints as '-'. */
#define CTA__TRACE_NO_KERNEL UINT32_MAX

/* Event named by s[0..n), or -1 when there is none. */
int cta__trace_event_parse(const char *s, size_t n);

/* 1 when v is one of the values FORMAT.md allows for the backend or clc key. */
int cta__trace_backend_ok(const char *v);
int cta__trace_clc_ok(const char *v);

/* Writes the shortest decimal form of d that reads back to d (at most 32
 * bytes with the NUL) and returns its length. */
size_t cta__trace_fmt_double(char *buf, size_t len, double d);

#endif
