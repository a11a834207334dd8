/* One kernels/NAME_body.h (KC_BODY, set by compiler/meson.build) compiled by
 * clang-16 through the kernel compiler's pass: each CTA_KERNEL in it becomes
 * a region form registered with the engine, or a descriptor saying why it
 * stays on fibers (compiler/kc_kernel.h). */
#include "kc_kernel.h"

#include KC_BODY
