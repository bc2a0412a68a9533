#include "evaluator/gpu/reference_compute.hpp"

#include "evaluator/gpu/cuda_check.hpp"
#include "evaluator/gpu/reference_kernels.hpp"

namespace ptxbench::gpu {

elem to_elem(dtype t) {
  switch (t) {
    case dtype::bf16: return elem::bf16;
    case dtype::fp16: return elem::fp16;
    case dtype::fp8_e4m3: return elem::fp8_e4m3;
    case dtype::fp32: return elem::fp32;
    case dtype::i32: return elem::i32;
  }
  return elem::fp32;
}

namespace {

device_memory upcast(const reference_env& env, CUdeviceptr p, dtype t, int64_t n) {
  device_memory f(size_t(n) * 4);
  upcast_scaled(p, to_elem(t), n, 1.0f, f.as<float>(), env.stream);
  return f;
}

CUdeviceptr tensor_at(const std::map<std::string, CUdeviceptr>& tensors, const std::string& name) {
  auto it = tensors.find(name);
  if (it == tensors.end()) throw std::runtime_error("no device buffer for tensor " + name);
  return it->second;
}

// Column-major view: row-major C = A·op(B) is Cᵀ (N × rows) = op(B)ᵀ·Aᵀ, with
// the B buffer as X (nt: K × N, transposed; nn: N × K) and A as K × rows.
void product(const reference_env& env, const gemm_plan& p, const float* a, const float* b, float* c, int64_t rows,
             int64_t batch) {
  const float one = 1.f, zero = 0.f;
  const int n = int(p.n), k = int(p.k), m = int(rows);
  PTXB_CUBLAS(cublasSgemmStridedBatched(env.blas, p.nn ? CUBLAS_OP_N : CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &one, b,
                                        p.nn ? n : k, p.n * p.k, a, k, rows * p.k, &zero, c, n, rows * p.n,
                                        int(batch)));
}

}  // namespace

device_memory gemm_reference(const reference_env& env, const task& t, const gemm_plan& p,
                             const std::map<std::string, CUdeviceptr>& tensors) {
  const int64_t rows = p.m * p.batch;
  const int64_t b_matrices = p.group_rows.empty() ? p.batch : int64_t(p.group_rows.size()) - 1;
  auto a = upcast(env, tensor_at(tensors, "A"), p.a_type, rows * p.k);
  auto b = upcast(env, tensor_at(tensors, "B"), p.b_type, b_matrices * p.n * p.k);
  device_memory c(size_t(rows * p.n) * 4);
  if (p.group_rows.empty()) {
    product(env, p, a.as<float>(), b.as<float>(), c.as<float>(), p.m, p.batch);
  } else {
    PTXB_CU(cuMemsetD8Async(c.ptr(), 0, c.bytes(), env.stream));  // rows of no group stay 0 (there are none)
    for (size_t g = 0; g + 1 < p.group_rows.size(); ++g) {
      const int64_t first = p.group_rows[g], count = p.group_rows[g + 1] - first;
      if (count == 0) continue;  // an empty group
      product(env, p, a.as<float>() + first * p.k, b.as<float>() + int64_t(g) * p.n * p.k, c.as<float>() + first * p.n,
              count, 1);
    }
  }
  using refmath::epilogue_kind;
  const refmath::gemm_epilogue& e = p.epilogue;
  if (e.kind == epilogue_kind::none && e.scale == 1.0f) return c;
  device_memory bias, c_in;
  if (e.kind == epilogue_kind::bias || e.kind == epilogue_kind::bias_gelu)
    bias = upcast(env, tensor_at(tensors, "bias"), t.find_tensor("bias")->type, p.n);
  if (e.kind == epilogue_kind::alpha_beta) c_in = upcast(env, tensor_at(tensors, "C"), t.find_tensor("C")->type, rows * p.n);
  apply_gemm_epilogue(c.as<float>(), rows, p.n, e, bias.as<float>(), c_in.as<float>(), env.stream);
  PTXB_CU(cuStreamSynchronize(env.stream));  // bias and c_in are freed on return
  return c;
}

}  // namespace ptxbench::gpu
