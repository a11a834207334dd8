/* Files, numbers and text handled one way by the library and the command
 * line: output files created privately beside their target and renamed into
 * place, temporaries left by killed runs, overflow-checked number parsing,
 * and escaping of user text echoed in messages. */
#ifndef CTASIM_IO_H
#define CTASIM_IO_H

#include <stddef.h>
#include <stdint.h>

#include "ctasim/export.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Creates a private temporary for the file at `path`, in path's folder:
 * PATH.tmp.<pid>.<six random characters>, opened for reading and writing
 * with O_CREAT | O_EXCL |
 * O_NOFOLLOW (a name planted in advance, a symlink included, is never
 * followed or reused: another name is drawn), mode 0666 less the umask.
 * Stores the malloc'd name in *tmp_out. Returns the open descriptor (>= 0),
 * CTA_EINVAL when the folder is missing or not writable, CTA_EIO for other
 * failures, CTA_ENOMEM; err gets "PATH: why: strerror". */
CTA_EXPORT int cta_tmpfile_create(const char *path, char **tmp_out, char *err, size_t errlen);

/* Removes the temporaries of `path` (PATH.tmp.<pid>...) that processes no
 * longer running left behind (a run killed by SIGKILL, a power loss): only
 * regular files of this user whose pid is not alive. Returns how many were
 * removed; the first one's name goes to `first` (may be NULL). */
CTA_EXPORT int cta_tmpfile_sweep(const char *path, char *first, size_t firstlen);

/* Number syntax accepted by cta_parse_int/cta_parse_uint. Decimal (a
 * leading zero is not octal) or 0x hex, no spaces anywhere. */
enum {
	CTA_NUM_SUFFIX = 1, /* K, M, G: times 1024, 1024^2, 1024^3 */
	CTA_NUM_SHIFT = 2,  /* A<<B, the form the CUDA samples use (1<<20) */
};

/* Parses s as an integer in [min, max]. Returns 0, CTA_EPARSE (not an
 * integer: junk, a sign where none may be, empty) or CTA_ERANGE (overflows,
 * or outside [min, max]); why gets the reason, e.g. "out of range [1, 132]"
 * or "not an integer". */
CTA_EXPORT int cta_parse_int(const char *s, int64_t min, int64_t max, unsigned flags, int64_t *out,
                             char *why, size_t whylen);
CTA_EXPORT int cta_parse_uint(const char *s, uint64_t min, uint64_t max, unsigned flags,
                              uint64_t *out, char *why, size_t whylen);
/* Parses s as a finite decimal number in [min, max] (NaN, infinities,
 * spaces and trailing junk refused). Same returns as cta_parse_int. */
CTA_EXPORT int cta_parse_real(const char *s, double min, double max, double *out, char *why,
                              size_t whylen);

/* Copies s into buf (always terminated, truncated to fit) with control
 * bytes written as escapes (\e, \a, \x7f, ...; newline and tab kept only
 * when keep_lines), so that text a user supplied cannot drive the terminal
 * when a message echoes it. Returns buf. */
CTA_EXPORT char *cta_escape(char *buf, size_t len, const char *s, int keep_lines);

#ifdef __cplusplus
}
#endif
#endif
