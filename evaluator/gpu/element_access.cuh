// Device-side pieces shared by the harness kernels (kernels.cu) and the fp32
// reference kernels (reference_kernels.cu): the block size, the grid for a
// grid-stride loop over n elements, and reading any element type as float.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>

#include "evaluator/gpu/kernels.hpp"

namespace ptxbench::gpu::device {

constexpr int k_threads = 256;

// Blocks of k_threads for `per_thread` elements a thread, at least 1 and at most 65535 * 16.
inline int blocks_for(int64_t n, int per_thread = 4) {
  int64_t b = (n + int64_t(k_threads) * per_thread - 1) / (int64_t(k_threads) * per_thread);
  if (b < 1) b = 1;
  return int(b > 65535 * 16 ? 65535 * 16 : b);
}

__device__ __forceinline__ float load_as_float(const void* p, elem t, int64_t i) {
  switch (t) {
    case elem::bf16: return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
    case elem::fp16: return __half2float(static_cast<const __half*>(p)[i]);
    case elem::fp8_e4m3: {
      __nv_fp8_e4m3 v;
      v.__x = static_cast<const __nv_fp8_storage_t*>(p)[i];
      return float(v);
    }
    case elem::fp32: return static_cast<const float*>(p)[i];
    case elem::i32: return float(static_cast<const int*>(p)[i]);
  }
  return 0.f;
}

}  // namespace ptxbench::gpu::device
