// A correct but naive GEMM (C = A·Bᵀ, bf16 in, fp32 FFMA accumulation, bf16 out):
// the demo's "right answer, wrong instructions" reply. One thread per element of C.
#include <cuda_bf16.h>

extern "C" __global__ void gemm_naive(const __nv_bfloat16* __restrict__ A, const __nv_bfloat16* __restrict__ B,
                                      __nv_bfloat16* __restrict__ C, int M, int N, int K) {
  int j = blockIdx.x * blockDim.x + threadIdx.x;
  int i = blockIdx.y * blockDim.y + threadIdx.y;
  if (i >= M || j >= N) return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += __bfloat162float(A[(size_t)i * K + k]) * __bfloat162float(B[(size_t)j * K + k]);
  C[(size_t)i * N + j] = __float2bfloat16(acc);
}
