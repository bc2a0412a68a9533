#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cfloat>

#include "evaluator/gpu/reference_kernels.hpp"
#include "evaluator/gpu/element_access.cuh"

namespace ptxbench::gpu {
namespace {

using device::blocks_for;
using device::k_threads;

__global__ void upcast_scaled_kernel(const void* src, elem t, int64_t n, float factor, float* dst) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    dst[i] = factor * device::load_as_float(src, t, i);
}

__global__ void epilogue_kernel(float* c, int64_t n, int64_t cols, refmath::gemm_epilogue e, const float* bias,
                                const float* c_in) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x)
    c[i] = refmath::apply_epilogue(e, c[i], bias ? bias[i % cols] : 0.f, c_in ? c_in[i] : 0.f);
}

__device__ float block_reduce(float v, bool is_max) {
  __shared__ float part[32];
  for (int o = 16; o > 0; o >>= 1) {
    float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = is_max ? fmaxf(v, w) : v + w;
  }
  int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  __syncthreads();
  if (lane == 0) part[warp] = v;
  __syncthreads();
  int warps = blockDim.x / 32;
  v = lane < warps ? part[lane] : (is_max ? -FLT_MAX : 0.f);
  for (int o = 16; o > 0; o >>= 1) {
    float w = __shfl_xor_sync(0xffffffffu, v, o);
    v = is_max ? fmaxf(v, w) : v + w;
  }
  return v;
}

// One block per row (head p, query i) of the chunk.
__global__ void softmax_heads_kernel(float* scores, const refmath::head_view* views, int64_t sq, int64_t sk,
                                     bool causal, float* lse_out, const float* lse_in) {
  const int64_t row = blockIdx.x, p = row / sq, i = row % sq;
  float* x = scores + row * sk;
  const int64_t limit = refmath::keys_attended(causal, i, sq, sk);
  const int64_t at = views[p].lse + i;
  float lse;
  if (lse_in) {
    lse = lse_in[at];
  } else if (limit == 0) {
    lse = -INFINITY;  // no key: P and O are 0
    if (threadIdx.x == 0) lse_out[at] = lse;
  } else {
    float m = -FLT_MAX;
    for (int64_t j = threadIdx.x; j < limit; j += blockDim.x) m = fmaxf(m, x[j]);
    m = block_reduce(m, true);
    float sum = 0.f;
    for (int64_t j = threadIdx.x; j < limit; j += blockDim.x) sum += expf(x[j] - m);
    sum = block_reduce(sum, false);
    lse = m + logf(sum);
    if (threadIdx.x == 0) lse_out[at] = lse;
  }
  for (int64_t j = threadIdx.x; j < sk; j += blockDim.x) x[j] = j < limit ? expf(x[j] - lse) : 0.f;
}

// One warp per row (head p, query i).
__global__ void row_dot_heads_kernel(const float* a, const float* b, const refmath::head_view* views, int64_t rows,
                                     int64_t sq, int64_t dim, float* delta) {
  const int64_t row = blockIdx.x * int64_t(blockDim.x / 32) + threadIdx.x / 32;
  if (row >= rows) return;
  const refmath::head_view v = views[row / sq];
  const int64_t base = v.q + (row % sq) * v.q_step;
  float acc = 0.f;
  for (int64_t d = threadIdx.x % 32; d < dim; d += 32) acc += a[base + d] * b[base + d];
  for (int o = 16; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  if (threadIdx.x % 32 == 0) delta[row] = acc;
}

}  // namespace

void upcast_scaled(CUdeviceptr src, elem t, int64_t n, float factor, float* dst, CUstream stream) {
  upcast_scaled_kernel<<<blocks_for(n), k_threads, 0, stream>>>(reinterpret_cast<const void*>(src), t, n, factor, dst);
}

void apply_gemm_epilogue(float* c, int64_t rows, int64_t cols, const refmath::gemm_epilogue& e, const float* bias,
                         const float* c_in, CUstream stream) {
  const int64_t n = rows * cols;
  epilogue_kernel<<<blocks_for(n), k_threads, 0, stream>>>(c, n, cols, e, bias, c_in);
}

void softmax_heads(float* scores, const refmath::head_view* views, int64_t heads, int64_t sq, int64_t sk, bool causal,
                   float* lse_out, const float* lse_in, CUstream stream) {
  const int64_t rows = heads * sq;
  if (rows > 0) softmax_heads_kernel<<<unsigned(rows), k_threads, 0, stream>>>(scores, views, sq, sk, causal, lse_out, lse_in);
}

void row_dot_heads(const float* a, const float* b, const refmath::head_view* views, int64_t heads, int64_t sq,
                   int64_t dim, float* delta, CUstream stream) {
  const int64_t rows = heads * sq, warps = k_threads / 32;
  if (rows > 0)
    row_dot_heads_kernel<<<unsigned((rows + warps - 1) / warps), k_threads, 0, stream>>>(a, b, views, rows, sq, dim,
                                                                                          delta);
}

}  // namespace ptxbench::gpu
