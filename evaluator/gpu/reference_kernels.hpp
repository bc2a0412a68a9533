#pragma once
// The element-wise kernels of the fp32 references (the products are cuBLAS
// SGEMMs in pedantic fp32): the GEMM epilogue, scaled upcasts, and the
// softmax pieces of attention over a chunk of heads, each head located by a
// head_view (reference_math.hpp). All asynchronous on `stream`.
#include <cuda.h>

#include <cstdint>

#include "evaluator/gpu/kernels.hpp"
#include "evaluator/gpu/reference_math.hpp"

namespace ptxbench::gpu {

// dst[i] = factor · src[i] (src of type t: an fp8 input times its descale).
void upcast_scaled(CUdeviceptr src, elem t, int64_t n, float factor, float* dst, CUstream stream);

// c[r, j] = apply_epilogue(e, c[r, j], bias[j], c_in[r, j]) over rows × cols,
// in place; bias and c_in may be null where the epilogue reads none.
void apply_gemm_epilogue(float* c, int64_t rows, int64_t cols, const refmath::gemm_epilogue& e, const float* bias,
                         const float* c_in, CUstream stream);

// Softmax of a chunk of `heads` heads of sq queries × sk keys: scores[(p·sq + i)·sk + j]
// for head p of the chunk, whose view is views[p] (device memory). Keys a
// query does not attend (causal) become 0. With lse_in null, writes the LSE of
// query i of head p at lse_out[views[p].lse + i]; else uses lse_in there.
void softmax_heads(float* scores, const refmath::head_view* views, int64_t heads, int64_t sq, int64_t sk, bool causal,
                   float* lse_out, const float* lse_in, CUstream stream);

// delta[p·sq + i] = Σ_d a[views[p].q + i·q_step + d] · b[same]  (Delta = rowsum(dO ∘ O) of a chunk).
void row_dot_heads(const float* a, const float* b, const refmath::head_view* views, int64_t heads, int64_t sq,
                   int64_t dim, float* delta, CUstream stream);

}  // namespace ptxbench::gpu
