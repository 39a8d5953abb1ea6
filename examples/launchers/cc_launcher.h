/* C++ host launcher of a traced kernel, called from Rust (examples/cc_launcher.rs).
 * Rust declarations come from bindgen (ktrace-build's launcher-bindings feature). */
#ifndef CC_LAUNCHER_H
#define CC_LAUNCHER_H

#include <ktrace_launcher.h>

/* y[i] = a * x[i] + y[i] for i < n, on the default stream, with
 * `blocks` x `threads` threads; copies x and y to and from the device.
 * Returns 0, or the cudaError_t of the first failing CUDA call. */
KTRACE_EXTERN_C int KTRACE_LAUNCHER(cc_saxpy)(float a, const float* x, float* y, int n,
                                              int blocks, int threads, ktrace_arg trace);

#endif
