/* Spells the hidden parameter of a kernel body in the simulator. A body
 * receives the thread's lane under the name of the thread-local pointer
 * cta__cur, so that threadIdx, blockIdx and friends read a local inside
 * bodies and the thread-local pointer in helper functions. That shadowing
 * is intended; marking this one-line header as a system header keeps
 * -Wshadow quiet about it without silencing anything else. */
#ifndef CTASIM_KERNEL_LANE_H
#define CTASIM_KERNEL_LANE_H
#pragma GCC system_header

#define CTA__LANE_PARAM struct cta__lane *const cta__cur

#endif
