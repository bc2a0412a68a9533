#include "evaluator/baselines/gemm_common.hpp"

#include <stdexcept>

#include "evaluator/baselines/internal.hpp"

namespace ptxbench::baselines_detail {
namespace {

cudaDataType_t lt_type(dtype t) {
  switch (t) {
    case dtype::bf16: return CUDA_R_16BF;
    case dtype::fp16: return CUDA_R_16F;
    case dtype::fp8_e4m3: return CUDA_R_8F_E4M3;
    default: throw std::invalid_argument(std::string("GEMM baseline: unsupported input dtype ") + to_string(t));
  }
}

float scalar(const std::map<std::string, double>& s, const char* name, float fallback) {
  auto it = s.find(name);
  return it == s.end() ? fallback : static_cast<float>(it->second);
}

}  // namespace

gemm_problem gemm_problem::of(const task& t, const size_point& s) {
  gemm_problem p;
  p.epilogue = t.op.epilogue;
  p.output = p.epilogue == "alpha_beta" ? "D" : "C";
  const tensor_spec* a_spec = t.find_tensor("A");
  const tensor_spec* out_spec = t.find_tensor(p.output);
  if (!a_spec || !t.find_tensor("B") || !out_spec)
    throw std::invalid_argument("GEMM task lacks tensors A, B, " + p.output);
  if (out_spec->type != dtype::bf16 && out_spec->type != dtype::fp16)
    throw std::invalid_argument("GEMM baseline: " + p.output + " must be bf16 or fp16");
  // Measured: cuBLASLt 13.1 has no fp16 x fp16 -> bf16 kernel (NOT_SUPPORTED), so say so plainly.
  if (a_spec->type == dtype::fp16 && out_spec->type == dtype::bf16)
    throw std::invalid_argument("cuBLASLt offers no fp16 x fp16 -> bf16 GEMM; an fp16 GEMM task needs an fp16 C");
  p.nn = t.op.layout == "nn";
  if (p.nn && a_spec->type == dtype::fp8_e4m3)
    throw std::invalid_argument("cuBLASLt's fp8 GEMM on Hopper takes only the A·Bᵀ (nt) layout");
  p.in_type = lt_type(a_spec->type);
  p.out_type = out_spec->type == dtype::fp16 ? CUDA_R_16F : CUDA_R_16BF;
  p.type_name = std::string(to_string(a_spec->type)) + " -> " + to_string(out_spec->type);
  p.m = require_size(s, "M");
  p.n = require_size(s, "N");
  p.k = require_size(s, "K");
  if (t.op.batched) p.batch = require_size(s, "L");
  if (t.op.grouped) p.groups = require_size(s, "G");
  const auto scalars = scalar_values(t, s);
  p.scaled = t.op.scaled;
  p.scale_a = scalar(scalars, "scale_a", 1.0f);
  p.scale_b = scalar(scalars, "scale_b", 1.0f);
  if (p.epilogue == "alpha_beta") {
    p.alpha = scalar(scalars, "alpha", 1.0f);
    p.beta = scalar(scalars, "beta", 0.0f);
  }
  return p;
}

std::string gemm_problem::describe() const {
  std::string d = type_name + (nn ? " nn" : " nt");
  if (epilogue == "bias") d += " +bias";
  if (epilogue == "bias_gelu") d += " +bias+GELU";
  if (epilogue == "alpha_beta") d += " alpha*AB+beta*C";
  if (scaled) d += " with A/B scales";
  if (batch > 1) d += " batched L" + std::to_string(batch);
  if (groups > 0) d += " grouped G" + std::to_string(groups);
  return d;
}

void check_lt(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  throw std::runtime_error(std::string(what) + ": " + cublasLtGetStatusName(s) + " (" + cublasLtGetStatusString(s) +
                           ")");
}

std::string lt_version() {
  const size_t v = cublasLtGetVersion();  // major*10000 + minor*100 + patch
  return "cuBLASLt " + std::to_string(v / 10000) + "." + std::to_string((v / 100) % 100) + "." +
         std::to_string(v % 100);
}

}  // namespace ptxbench::baselines_detail
