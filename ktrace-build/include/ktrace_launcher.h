/* ktrace launcher declarations, for C++ host code that launches traced
 * kernels and is called from Rust (ktrace-build's launcher path).
 *
 * Each launcher source is compiled twice into one static library: traced
 * (-DKTRACE_ENABLED=1) and untraced. KTRACE_LAUNCHER(name) gives the two
 * builds different symbols, `name_traced` and `name_untraced`, and the Rust
 * side calls `name_traced` for a launch its `ktrace_arg` traces (a buffer
 * that is not null) and `name_untraced` otherwise, so a launch that is not
 * traced runs the kernel's own machine code:
 *
 *   // saxpy.h
 *   #include <ktrace_launcher.h>
 *   KTRACE_EXTERN_C int KTRACE_LAUNCHER(saxpy)(float a, const float* x, float* y,
 *                                              int n, ktrace_arg trace, void* stream);
 *
 * Kernels in a launcher source must have internal linkage (`static
 * __global__` or an anonymous namespace), so the two builds do not clash.
 */
#ifndef KTRACE_LAUNCHER_H
#define KTRACE_LAUNCHER_H

#include "ktrace_layout.h"

#define KTRACE_LAUNCHER_CAT_(a, b) a##b
#define KTRACE_LAUNCHER_CAT(a, b) KTRACE_LAUNCHER_CAT_(a, b)

#if defined(KTRACE_ENABLED) && KTRACE_ENABLED
#define KTRACE_LAUNCHER(name) KTRACE_LAUNCHER_CAT(name, _traced)
#else
#define KTRACE_LAUNCHER(name) KTRACE_LAUNCHER_CAT(name, _untraced)
#endif

#ifdef __cplusplus
#define KTRACE_EXTERN_C extern "C"
#else
#define KTRACE_EXTERN_C
#endif

#endif /* KTRACE_LAUNCHER_H */
