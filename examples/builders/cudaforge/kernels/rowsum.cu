// Row sums of a row-major matrix: one block per row, a grid-stride loop
// over the row and a shared-memory tree reduction. Built by cudaforge.
#include <ktrace.cuh>

extern "C" __global__ void rowsum(const float* m, float* out, int cols, ktrace_arg trace) {
    KTRACE_OPEN(trace);
    __shared__ float partial[256];
    const float* row = m + (long long)blockIdx.x * cols;
    KTRACE_B("load");
    float s = 0.0f;
    for (int c = threadIdx.x; c < cols; c += blockDim.x) s += row[c];
    partial[threadIdx.x] = s;
    KTRACE_E("load");
    KTRACE_B("reduce");
    __syncthreads();
    for (int w = blockDim.x / 2; w > 0; w /= 2) {
        if (threadIdx.x < w) partial[threadIdx.x] += partial[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) out[blockIdx.x] = partial[0];
    KTRACE_E("reduce");
}
