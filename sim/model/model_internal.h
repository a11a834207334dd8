/* Internal interface of the device-model module: the preset table built in
 * presets.c, the hierarchy helper shared by presets and the model-file
 * loader, and the consistency check that can name the field it blames. */
#ifndef CTASIM_MODEL_INTERNAL_H
#define CTASIM_MODEL_INTERNAL_H

#include <stddef.h>

#include "ctasim/device.h"

/* The built-in presets, in a fixed order; *count receives their number. */
const struct cta_device_model *cta__model_presets(unsigned *count);

/* Canonical preset name of an alias ("H100" -> "H100-SXM"), or NULL. */
const char *cta__model_alias(const char *name);

/* Fills tpc_of_sm and gpc_of_sm for a part whose GPC g holds tpcs[g] TPCs,
 * numbering SMs TPC by TPC and TPCs GPC by GPC (SM i is in TPC
 * i / sms_per_tpc). Returns the number of SMs so described. */
unsigned cta__model_layout(struct cta_device_model *m, const unsigned char *tpcs,
                           unsigned gpc_count);

/* Spreads sm_count SMs over gpc_count GPCs as evenly as whole TPCs allow, the
 * earlier GPCs taking the extra TPC. Used when a model file changes the SM
 * count without giving the arrays. */
void cta__model_layout_even(struct cta_device_model *m);

/* cta_device_validate, also reporting which field it blames (a model-file
 * key name) so that the loader can point at that key's line. */
int cta__model_check(const struct cta_device_model *m, char *errbuf, size_t errlen,
                     const char **blamed_key);

#endif
