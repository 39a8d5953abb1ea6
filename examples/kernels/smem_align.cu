// Where a kernel's dynamic shared memory starts, traced and untraced: the
// first thread of every block writes the shared-window address of its
// dynamic shared memory to out[block]. Kernels whose tiles are 128-byte
// swizzled for TMA and wgmma need that address 1,024-byte aligned; the
// shared-memory recorders' static shared memory, which comes before it,
// must not move it (`smem_align` example, variants with each recorder).
//
// Launch: any grid, block = up to 1024 threads, dynamic shared memory at
// least blockDim.x bytes.
#include <ktrace.cuh>

// SMEM_ALIGN_OWN_BYTES (0 unless defined): static shared memory of the
// kernel's own, so many bytes, which the compiler places beside a
// recorder's (`tests/shared_alignment.rs`).
#ifndef SMEM_ALIGN_OWN_BYTES
#define SMEM_ALIGN_OWN_BYTES 0
#endif

extern "C" __global__ void smem_align(uint32_t* __restrict__ out, ktrace_arg trace) {
  extern __shared__ __align__(1024) uint8_t smem_align_tiles[];
#if SMEM_ALIGN_OWN_BYTES
  __shared__ uint8_t own[SMEM_ALIGN_OWN_BYTES];
  own[threadIdx.x % SMEM_ALIGN_OWN_BYTES] = static_cast<uint8_t>(threadIdx.x);
#endif
  KTRACE_OPEN(trace);
  KTRACE_B("tile");
  smem_align_tiles[threadIdx.x] = static_cast<uint8_t>(threadIdx.x);
  __syncthreads();
#if SMEM_ALIGN_OWN_BYTES
  smem_align_tiles[threadIdx.x] += own[(threadIdx.x + 1) % SMEM_ALIGN_OWN_BYTES];
  __syncthreads();
#endif
  if (threadIdx.x == 0) {
    // The address, plus a value read back from the tiles less what it must
    // be (so zero), so that the tiles' stores and the barrier stay in the
    // kernel. The last thread stored blockDim.x - 1, plus, with bytes of the
    // kernel's own, the own byte it read.
    uint8_t expected = static_cast<uint8_t>(blockDim.x - 1);
#if SMEM_ALIGN_OWN_BYTES
    expected += own[blockDim.x % SMEM_ALIGN_OWN_BYTES];
#endif
    out[blockIdx.x] = static_cast<uint32_t>(__cvta_generic_to_shared(smem_align_tiles)) +
                      static_cast<uint8_t>(smem_align_tiles[blockDim.x - 1] - expected);
  }
  KTRACE_E("tile");
}
