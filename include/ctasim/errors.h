/* ctasim error codes: every library call returns 0 or one of these negative
 * codes. The table is written once, here; the enum, cta_strerror() and
 * cta_err_name() are all generated from it so they never drift apart. */
#ifndef CTASIM_ERRORS_H
#define CTASIM_ERRORS_H

#include "ctasim/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* X(name, value, text) */
#define CTA_ERRNO_MAP(X)                                                                           \
	X(INVAL, -1, "invalid argument")                                                           \
	X(NOMEM, -2, "out of memory")                                                              \
	X(IO, -3, "input/output error")                                                            \
	X(PARSE, -4, "malformed input")                                                            \
	X(NOTFOUND, -5, "not found")                                                               \
	X(RANGE, -6, "value out of range")                                                         \
	X(RESOURCES, -7, "too many resources requested for launch")                                \
	X(UNSUPPORTED, -8, "not supported by this build or device")                                \
	X(UB, -9, "undefined behaviour detected")                                                  \
	X(COVERAGE, -10, "exactly-once coverage violated")                                         \
	X(DEADLOCK, -11, "deadlock: no thread can make progress")                                  \
	X(VERIFY, -12, "result check failed")                                                      \
	X(CRASH, -13, "kernel body crashed")                                                       \
	X(VERSION, -14, "unsupported format version")                                              \
	X(STATE, -15, "call not valid in this state")                                              \
	X(CUDA, -16, "CUDA runtime error")

typedef enum cta_errno {
	CTA_OK = 0,
#define CTA__ERR_ENUM(name, value, text) CTA_E##name = (value),
	CTA_ERRNO_MAP(CTA__ERR_ENUM)
#undef CTA__ERR_ENUM
} cta_errno;

/* Text of an error code ("invalid argument"); never NULL. */
CTA_EXPORT const char *cta_strerror(int code);
/* Symbolic name of an error code ("CTA_EINVAL"); never NULL. */
CTA_EXPORT const char *cta_err_name(int code);

#ifdef __cplusplus
}
#endif
#endif
