// The whole GPU reference path (evaluator/gpu: write_inputs, then
// compute_reference through cuBLAS and the reference kernels) against the
// naive fp64 formulas on the host, for every fixture variant at its sizes:
// once with the default memory budget and once with a budget of about one
// head, so that the chunking of heads (and of GQA's dK/dV sums) is exercised.
#include <cublas_v2.h>
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <memory>

#include "evaluator/gpu/cuda_check.hpp"
#include "evaluator/gpu/reference_compute.hpp"
#include "tests/baselines/require_gpu.hpp"
#include "tests/gpu/host_inputs.hpp"
#include "tests/gpu/naive_reference.hpp"
#include "tests/gpu/reference_fixtures.hpp"

using namespace ptxbench;

namespace {

struct blas_handle {
  cublasHandle_t h = nullptr;
  explicit blas_handle(CUstream stream) {
    PTXB_CUBLAS(cublasCreate(&h));
    PTXB_CUBLAS(cublasSetStream(h, stream));
    PTXB_CUBLAS(cublasSetMathMode(h, CUBLAS_PEDANTIC_MATH));  // as the worker: no TF32
  }
  ~blas_handle() { cublasDestroy(h); }
};

std::vector<double> download(CUdeviceptr p, dtype t, int64_t n) {
  std::vector<uint8_t> raw(size_t(n) * size_t(dtype_bytes(t)));
  PTXB_CU(cuMemcpyDtoH(raw.data(), p, raw.size()));
  std::vector<double> out(static_cast<size_t>(n));
  for (size_t i = 0; i < out.size(); ++i) {
    uint16_t h = 0;
    float f = 0;
    int32_t k = 0;
    switch (t) {
      case dtype::bf16: std::memcpy(&h, &raw[2 * i], 2); out[i] = test_inputs::bf16_value(h); break;
      case dtype::fp16: std::memcpy(&h, &raw[2 * i], 2); { _Float16 x; std::memcpy(&x, &h, 2); out[i] = float(x); } break;
      case dtype::fp8_e4m3: out[i] = test_inputs::fp8_value(raw[i]); break;
      case dtype::i32: std::memcpy(&k, &raw[4 * i], 4); out[i] = k; break;
      default: std::memcpy(&f, &raw[4 * i], 4); out[i] = f; break;
    }
  }
  return out;
}

double scaled_error(const std::vector<double>& a, const std::vector<double>& b) {
  double err = 0, scale = 0;
  for (size_t i = 0; i < b.size(); ++i) {
    const double e = std::fabs(a[i] - b[i]);
    err = std::isnan(e) ? INFINITY : std::max(err, e);
    scale = std::max(scale, std::fabs(b[i]));
  }
  return err / (scale > 0 ? scale : 1.0);
}

void check_task(const gpu::reference_env& env, const task& t, const size_point& s, uint64_t seed) {
  std::map<std::string, std::unique_ptr<gpu::device_memory>> buffers;
  std::map<std::string, CUdeviceptr> tensors;
  for (const auto& ts : t.tensors) {
    buffers[ts.name] = std::make_unique<gpu::device_memory>(size_t(tensor_elements(ts, s)) * dtype_bytes(ts.type));
    tensors[ts.name] = buffers[ts.name]->ptr();
  }
  gpu::write_inputs(env, t, s, seed, tensors);
  gpu::reference_set set;
  gpu::compute_reference(env, t, s, tensors, set);
  naive::tensor_values in;  // as the device holds them, derived ones included
  for (const auto& ts : t.tensors)
    if (ts.role == tensor_role::input) in[ts.name] = download(tensors.at(ts.name), ts.type, tensor_elements(ts, s));
  if (t.reference == "attention_bwd") {  // the derived inputs: the forward pass, O rounded to its type
    task fwd = t;
    fwd.reference = "attention_fwd";
    const naive::tensor_values f = naive::attention_forward(fwd, s, in);
    CHECK(scaled_error(in.at("O"), f.at("O")) < 1e-2);
    CHECK(scaled_error(in.at("LSE"), f.at("LSE")) < 1e-5);
  }
  const naive::tensor_values want = naive::outputs(t, s, in);
  for (const auto& ts : t.tensors) {
    if (ts.role != tensor_role::output) continue;
    CAPTURE(ts.name);
    REQUIRE(set.outputs.count(ts.name) == 1);
    const auto got = download(set.outputs.at(ts.name).ptr(), dtype::fp32, tensor_elements(ts, s));
    CHECK(scaled_error(got, want.at(ts.name)) < 1e-4);
  }
}

}  // namespace

TEST_CASE("the GPU reference of every fixture variant matches the naive formula at every fixture size") {
  gpu_test::gpu& g = gpu_test::require_gpu();
  blas_handle blas(g.stream);
  for (const task& t : reference_fixtures())
    for (const size_point& s : t.sizes)
      for (size_t budget : {size_t(2) << 30, size_t(1)}) {  // 1: every head its own chunk
        CAPTURE(t.id);
        CAPTURE(describe_size(s));
        CAPTURE(budget);
        gpu::reference_env env{g.stream, blas.h, budget};
        check_task(env, t, s, 1234);
      }
}

TEST_CASE("the GPU reference at sizes past a chunk of heads with GQA and varlen") {
  gpu_test::gpu& g = gpu_test::require_gpu();
  blas_handle blas(g.stream);
  for (const task& t : reference_fixtures()) {
    size_point s = t.timed_size();
    if (t.id == "ref_attn_bwd_gqa2_causal_d64") s.values = {{"B", 2}, {"H", 8}, {"HKV", 2}, {"S", 133}, {"D", 64}};
    else if (t.id == "ref_attn_fwd_varlen") s.values = {{"B", 5}, {"H", 4}, {"HKV", 2}, {"S", 150}, {"D", 64}};
    else if (t.id == "ref_gemm_bf16_grouped") s.values = {{"G", 13}, {"M", 21}, {"N", 40}, {"K", 56}};
    else continue;
    CAPTURE(t.id);
    // Three heads' scores per chunk: chunks end inside a GQA group and inside a sequence's heads.
    gpu::reference_env env{g.stream, blas.h, size_t(3) * 150 * 150 * 4 * 2};
    check_task(env, t, s, 99);
  }
}
