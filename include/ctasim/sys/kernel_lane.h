/* Spells the hidden parameters of a kernel body in the simulator. A body
 * receives the thread's lane under the name of the thread-local pointer
 * cta__cur, and its indices under the name of the int constant cta__ix, so
 * that threadIdx, blockIdx and friends read locals inside bodies and the
 * thread-local lane in helper functions. That shadowing is intended; marking this small header as a
 * system header keeps -Wshadow quiet about it without silencing anything else. */
#ifndef CTASIM_KERNEL_LANE_H
#define CTASIM_KERNEL_LANE_H
#pragma GCC system_header

#define CTA__LANE_PARAM struct cta__lane *const cta__cur, const struct cta__idx *const cta__ix

#endif
