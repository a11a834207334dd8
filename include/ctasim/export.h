/* Symbol visibility for the ctasim library: everything is built with
 * -fvisibility=hidden and only what carries CTA_EXPORT is public. */
#ifndef CTASIM_EXPORT_H
#define CTASIM_EXPORT_H

#if defined(__GNUC__) || defined(__clang__)
#define CTA_EXPORT __attribute__((visibility("default")))
#else
#define CTA_EXPORT
#endif

#define CTA_VERSION_STRING "0.1.0"

#endif
