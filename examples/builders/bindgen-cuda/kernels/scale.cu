// y = a * x + b over a vector, four elements a thread. Built by bindgen_cuda.
#include <ktrace.cuh>

extern "C" __global__ void scale(const float4* x, float4* y, float a, float b, int n4, ktrace_arg trace) {
    KTRACE_OPEN(trace);
    KTRACE_B("body");
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n4; i += gridDim.x * blockDim.x) {
        float4 v = x[i];
        y[i] = make_float4(a * v.x + b, a * v.y + b, a * v.z + b, a * v.w + b);
    }
    KTRACE_E("body");
}
