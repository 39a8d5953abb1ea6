// Origin: GitHub repository karpathy/llm.c, commit f1e2ace651495b74ae22d45d1723443fd00ecd3a:
// softmax_forward_kernel4 and warpReduceMax from dev/cuda/softmax_forward.cu,
// warpReduceSum from dev/cuda/common.h (the unmodified code is
// original/softmax_original.cu). One block per row; softmax_forward4, its
// launcher there, gives it block_size / 32 floats of dynamic shared memory.
//
// Instrumented for ktrace as the README's "Tracing your own kernels" says:
// `#include <ktrace.cuh>`; the `__global__` function became a
// `__device__ __forceinline__` template that takes the trace context
// (`Trace& ktrace_ctx`), called through KTRACE_DISPATCH from the
// `extern "C"` kernel at the end of this file. Three regions, one per
// phase, in every warp: "max" (the max loop and its warp and block
// reductions, to the broadcast), "exp" (the exp loop), "normalize" (the sum
// loop, its reductions and the division): 6 events a warp. Nothing else
// changed: the untraced build's SASS is the original's
// (scripts/sass_check.sh).
//
// Its license (the repository's LICENSE file at that commit):
//
// MIT License
//
// Copyright (c) 2024 Andrej Karpathy
//
// Permission is hereby granted, free of charge, to any person obtaining a copy
// of this software and associated documentation files (the "Software"), to deal
// in the Software without restriction, including without limitation the rights
// to use, copy, modify, merge, publish, distribute, sublicense, and/or sell
// copies of the Software, and to permit persons to whom the Software is
// furnished to do so, subject to the following conditions:
//
// The above copyright notice and this permission notice shall be included in all
// copies or substantial portions of the Software.
//
// THE SOFTWARE IS PROVIDED "AS IS", WITHOUT WARRANTY OF ANY KIND, EXPRESS OR
// IMPLIED, INCLUDING BUT NOT LIMITED TO THE WARRANTIES OF MERCHANTABILITY,
// FITNESS FOR A PARTICULAR PURPOSE AND NONINFRINGEMENT. IN NO EVENT SHALL THE
// AUTHORS OR COPYRIGHT HOLDERS BE LIABLE FOR ANY CLAIM, DAMAGES OR OTHER
// LIABILITY, WHETHER IN AN ACTION OF CONTRACT, TORT OR OTHERWISE, ARISING FROM,
// OUT OF OR IN CONNECTION WITH THE SOFTWARE OR THE USE OR OTHER DEALINGS IN THE
// SOFTWARE.


#include <ktrace.cuh>
#include "tp_dispatch.cuh"

#include <cuda_runtime.h>
#include <math.h>

__device__ float warpReduceSum(float val) {
    for (int offset = 16; offset > 0; offset /= 2) {
        val += __shfl_xor_sync(0xFFFFFFFF, val, offset);
    }
    return val;
}

// warp-level reduction for finding the maximum value
__device__ float warpReduceMax(float val) {
    for (int offset = 16; offset > 0; offset /= 2) {
        val = fmaxf(val, __shfl_down_sync(0xFFFFFFFF, val, offset));
    }
    return val;
}

template <class Trace>
__device__ __forceinline__ void softmaxForward4(float* out, const float* inp, int N, int C,
                                                Trace& ktrace_ctx) {
    // out is (N, C) just like inp. Each row of inp will get softmaxed.
    // same as kernel3, but can handle any block size (multiple of 32)
    // each row of C elements is handled by block_size threads
    // furthermore, each block_size threads get executed in warps of 32 threads

    // special reduction operations warpReduceMax/warpReduceSum are used for intra-warp reductions
    // shared memory is used for inter-warp reduction
    extern __shared__ float shared[];
    int idx = blockIdx.x;
    int tid = threadIdx.x;
    int warpId = threadIdx.x / 32; // warp index within a block
    int laneId = threadIdx.x % 32; // thread index within a warp

    // the number of warps per block. recall that blockDim.x is block_size
    int warpsPerBlock = blockDim.x / 32;

    // shared[] must be allocated to have warpsPerBlock elements
    // those will be used for max and sum values
    float* max_or_sum_storage = shared;

    // one row of inp, i.e. inp[idx, :] of shape (C,)
    const float* x = inp + idx * C;

    KTRACE_B("max");
    // first, thread coarsening by directly accessing global memory in series
    float maxval = -INFINITY;
    for (int i = tid; i < C; i += blockDim.x) {
        maxval = fmaxf(maxval, x[i]);
    }
    // now within-warp reductions for maxval
    maxval = warpReduceMax(maxval);

    // the 0th thread of each warp writes the maxval of that warp to shared memory
    if (laneId == 0) max_or_sum_storage[warpId] = maxval;
    __syncthreads();

    // now the 0th thread of the block reduces the max values in shared memory, i.e. across warps
    if (tid == 0) {
        float val = max_or_sum_storage[tid];
        for (int i = 1; i < warpsPerBlock; i++) {
            val = fmaxf(val, max_or_sum_storage[i]);
        }
        // store the final max in the first position
        max_or_sum_storage[0] = val;
    }
    __syncthreads();
    // broadcast the max to all threads
    float offset = max_or_sum_storage[0];
    KTRACE_E("max");

    KTRACE_B("exp");
    // compute expf and write the result to global memory
    for (int i = tid; i < C; i += blockDim.x) {
        out[idx * C + i] = expf(x[i] - offset);
    }
    KTRACE_E("exp");

    // okay now we calculated exp(x - max(x))
    // step 2: sum all the values and divide by the sum

    KTRACE_B("normalize");
    // thread coarsening for sum
    x = out + idx * C;
    float sumval = 0.0f;
    for (int i = tid; i < C; i += blockDim.x) {
        sumval += x[i];
    }
    // within-warp reduction for sumval
    sumval = warpReduceSum(sumval);

    // write sumval to shared memory
    if (laneId == 0) max_or_sum_storage[warpId] = sumval;
    __syncthreads();

    // inter-thread reduction of sum
    if (tid == 0) {
        float val = max_or_sum_storage[tid];
        for (int i = 1; i < warpsPerBlock; ++i) {
            val += max_or_sum_storage[i];
        }
        max_or_sum_storage[0] = val;
    }
    __syncthreads();
    // broadcast the sum to all threads
    float sum = max_or_sum_storage[0];

    // divide the whole row by the sum
    for (int i = tid; i < C; i += blockDim.x) {
        out[idx * C + i] = x[i] / sum;
    }
    KTRACE_E("normalize");
}

// softmax_forward4's launch: grid N (one block per row), block_size threads,
// block_size / 32 floats of dynamic shared memory.
extern "C" __global__ void softmax_forward_kernel4(float* out, const float* inp, int N, int C,
                                                   ktrace_arg trace) {
#if TP_OPEN_IN_BODY
    // The `open` design: one body for every block, each marker an event
    // that a block recording nothing branches over (or issues predicated).
    KTRACE_OPEN(trace);
    softmaxForward4(out, inp, N, C, ktrace_ctx);
#elif TP_SAMPLED
    // The `sampled` design: the block chooses from the argument alone
    // (kernels/tp_dispatch.cuh).
    TP_DISPATCH_BENCH(trace, softmaxForward4(out, inp, N, C, ktrace_ctx));
#else
    KTRACE_DISPATCH(trace, softmaxForward4(out, inp, N, C, ktrace_ctx));
#endif
}
