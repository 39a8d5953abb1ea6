// The authors' matmulKernel12, unmodified (matmul_12.cuh), with the lines of
// their runner (matmul.cu) that come before it: its includes, bf16, CEIL_DIV
// and cudaCheck. runKernel12 instantiates matmulKernel12<128, 256, 64, 384, 3,
// 128, 2, 1>: the reference that scripts/sass_check.sh compares the bench's
// untraced build with. Not part of the cargo build. <cublas_v2.h>, which the
// runner includes but the kernel does not use, comes from an empty stand-in
// that the script makes.
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cuda/barrier>
#include <cublas_v2.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <unistd.h>
#include <ctime>
#include <iostream>
#include <vector>
#include <random>
#include <cuda_bf16.h>
#include <cassert>
#include <unistd.h>

typedef __nv_bfloat16 bf16;
#define CEIL_DIV(M, N) (((M) + (N)-1) / (N))

void cudaCheck(cudaError_t error, const char *file, int line) {
  if (error != cudaSuccess) {
    printf("[CUDA ERROR] at file %s:%d:\n%s\n", file, line,
           cudaGetErrorString(error));
    exit(1);
  }
}
#define cudaCheck(err) (cudaCheck(err, __FILE__, __LINE__))

#include "matmul_12.cuh"
