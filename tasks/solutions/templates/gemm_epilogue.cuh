// Epilogues of the sm_90a GEMM template: what happens to an fp32 accumulator
// pair (columns col, col+1 of row r) before it reaches memory. The math is the
// task suite's (docs/task-suite.md): bias and bias_gelu add a per-column bias
// (tanh GELU in fp32 on acc + bias), alpha_beta computes alpha·acc + beta·C,
// scaled multiplies by scale_a·scale_b; every variant rounds once, when
// storing. Split-K adds the pair into an fp32 workspace instead (the epilogue
// proper then runs in the finishing launch).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#define GEMM_EPI_NONE 0
#define GEMM_EPI_BIAS 1
#define GEMM_EPI_BIAS_GELU 2
#define GEMM_EPI_ALPHA_BETA 3
#define GEMM_EPI_SCALED 4

namespace gemm {

// Output element: bf16, or fp16 for fp16 inputs.
template <bool kHalf>
struct out_type {
  using type = __nv_bfloat16;
  __device__ __forceinline__ static uint32_t pack(float lo, float hi) {
    __nv_bfloat162 v = __floats2bfloat162_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&v);
  }
  __device__ __forceinline__ static float2 unpack(uint32_t bits) {
    return __bfloat1622float2(*reinterpret_cast<__nv_bfloat162*>(&bits));
  }
};
template <>
struct out_type<true> {
  using type = __half;
  __device__ __forceinline__ static uint32_t pack(float lo, float hi) {
    __half2 v = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<uint32_t*>(&v);
  }
  __device__ __forceinline__ static float2 unpack(uint32_t bits) {
    return __half22float2(*reinterpret_cast<__half2*>(&bits));
  }
};

// tanh GELU. tanh.approx.f32 (|error| < 2^-10.9) is far inside the tolerance
// of a bf16 or fp16 output and costs one MUFU instead of ~20 instructions.
__device__ __forceinline__ float gelu_tanh(float x) {
  const float u = 0.7978845608f * (x + 0.044715f * x * x * x);
  float t;
  asm("tanh.approx.f32 %0, %1;" : "=f"(t) : "f"(u));
  return 0.5f * x * (1.f + t);
}

// The kernel's epilogue inputs; members unused by an epilogue stay unset.
template <typename T>
struct epilogue_args {
  const T* bias = nullptr;  // [N]
  const T* c_in = nullptr;  // [M, N] (alpha_beta)
  float alpha = 1.f, beta = 0.f;
  float scale = 1.f;  // scale_a · scale_b
};

// Writes (v0, v1) to out[r, col..col+1] (row stride n) after epilogue kEpi.
// kSplitK: out is the fp32 workspace and the pair is added atomically.
template <int kEpi, bool kSplitK, typename Out, typename T>
__device__ __forceinline__ void emit_pair(T* out, float* ws, const epilogue_args<typename Out::type>& e, int r, int col,
                                          int n, float v0, float v1) {
  const size_t at = size_t(r) * size_t(n) + size_t(col);
  if constexpr (kSplitK) {
    atomicAdd(reinterpret_cast<float2*>(ws + at), make_float2(v0, v1));
    return;
  }
  if constexpr (kEpi == GEMM_EPI_BIAS || kEpi == GEMM_EPI_BIAS_GELU) {
    const float2 b = Out::unpack(__ldg(reinterpret_cast<const unsigned int*>(e.bias + col)));
    v0 += b.x;
    v1 += b.y;
    if constexpr (kEpi == GEMM_EPI_BIAS_GELU) {
      v0 = gelu_tanh(v0);
      v1 = gelu_tanh(v1);
    }
  } else if constexpr (kEpi == GEMM_EPI_ALPHA_BETA) {
    const float2 c = Out::unpack(__ldg(reinterpret_cast<const unsigned int*>(e.c_in + at)));
    v0 = e.alpha * v0 + e.beta * c.x;
    v1 = e.alpha * v1 + e.beta * c.y;
  } else if constexpr (kEpi == GEMM_EPI_SCALED) {
    v0 *= e.scale;
    v1 *= e.scale;
  }
  *reinterpret_cast<uint32_t*>(out + at) = Out::pack(v0, v1);
}

// Stores one warpgroup's 64 × (kRegs/2) accumulator (wgmma m64nN layout:
// thread t holds, for 8-column group j, d[4j..4j+1] at row 16*(t/32) +
// (t%32)/4 and columns 8j + 2*(t%4) + {0,1}, and d[4j+2..4j+3] eight rows
// below). Rows from row_end on and columns from n on are skipped; n is a
// multiple of 8, so a pair is either wholly inside or wholly outside.
template <int kEpi, bool kSplitK, typename Out, int kRegs, typename T>
__device__ __forceinline__ void store_warpgroup_tile(const float (&d)[kRegs], T* out, float* ws,
                                                     const epilogue_args<typename Out::type>& e, int row0,
                                                     int row_end, int n0, int n) {
  const int t = threadIdx.x % 128;
  const int row = row0 + (t / 32) * 16 + (t % 32) / 4;
  const int col0 = n0 + 2 * (t % 4);
#pragma unroll
  for (int j = 0; j < kRegs / 4; ++j) {
    const int col = col0 + 8 * j;
    if (col >= n) continue;
    if (row < row_end) emit_pair<kEpi, kSplitK, Out>(out, ws, e, row, col, n, d[4 * j], d[4 * j + 1]);
    if (row + 8 < row_end) emit_pair<kEpi, kSplitK, Out>(out, ws, e, row + 8, col, n, d[4 * j + 2], d[4 * j + 3]);
  }
}

}  // namespace gemm
