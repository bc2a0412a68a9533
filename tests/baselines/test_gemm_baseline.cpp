#include <doctest/doctest.h>

#include "evaluator/baselines/baselines.hpp"
#include "tests/baselines/reference.hpp"
#include "tests/baselines/require_gpu.hpp"

namespace ptxbench::gpu_test {
namespace {

// Runs the baseline for C = A·Bᵀ at M×N×K and compares every element of C.
void check_gemm(dtype input, dtype output, int64_t M, int64_t N, int64_t K) {
  gpu& g = require_gpu();
  std::vector<float> a_values, b_values;
  device_memory a(static_cast<size_t>(M * K) * dtype_bytes(input)), b(static_cast<size_t>(N * K) * dtype_bytes(input));
  if (input == dtype::fp8_e4m3) {
    const fp8_data ad = random_fp8(static_cast<size_t>(M * K), 11, 4.0f), bd = random_fp8(static_cast<size_t>(N * K), 12, 4.0f);
    a.upload(ad.bits.data());
    b.upload(bd.bits.data());
    a_values = ad.values;
    b_values = bd.values;
  } else {
    const bool half = input == dtype::fp16;
    const bf16_data ad = half ? random_fp16(static_cast<size_t>(M * K), 21, -1.0f, 1.0f)
                              : random_bf16(static_cast<size_t>(M * K), 21, -1.0f, 1.0f);
    const bf16_data bd = half ? random_fp16(static_cast<size_t>(N * K), 22, -1.0f, 1.0f)
                              : random_bf16(static_cast<size_t>(N * K), 22, -1.0f, 1.0f);
    const std::vector<uint16_t>& a_bits = ad.bits;
    const std::vector<uint16_t>& b_bits = bd.bits;
    a_values = ad.values;
    b_values = bd.values;
    a.upload(a_bits.data());
    b.upload(b_bits.data());
  }
  device_memory c(static_cast<size_t>(M * N) * 2);
  const task t = gemm_task(input, output);
  const size_point s = sizes({{"M", M}, {"N", N}, {"K", K}});
  auto base = make_baseline(t, s, baseline_buffers{{{"A", a.ptr()}, {"B", b.ptr()}, {"C", c.ptr()}}}, g.stream);
  REQUIRE_MESSAGE(base->available(), base->why_not());
  INFO(base->name());
  CHECK(base->name().find("cuBLASLt") != std::string::npos);
  CHECK(base->name().find("algo id") != std::string::npos);

  c.fill_bytes(0xff);  // NaN everywhere: every element must be written by run()
  base->run(g.stream);
  check(cuStreamSynchronize(g.stream), "cuStreamSynchronize");
  std::vector<uint16_t> c_bits(static_cast<size_t>(M * N));
  c.download(c_bits.data());
  std::vector<float> out(c_bits.size());
  for (size_t i = 0; i < c_bits.size(); ++i)
    out[i] = output == dtype::fp16 ? fp16_to_float(c_bits[i]) : bf16_to_float(c_bits[i]);
  std::vector<double> ref(out.size());
  for (int64_t i = 0; i < M; ++i)
    for (int64_t j = 0; j < N; ++j) ref[static_cast<size_t>(i * N + j)] = gemm_element(a_values.data(), b_values.data(), K, i, j);
  const comparison cmp = compare(out, ref, 0.004, 0.01);
  INFO(cmp.summary());
  CHECK(cmp.mismatches == 0);
}

TEST_CASE("an unknown baseline is reported unavailable with its reason") {
  task t = gemm_task(dtype::bf16);
  t.baseline = "magic_library";
  auto base = make_baseline(t, sizes({{"M", 128}, {"N", 128}, {"K", 128}}), baseline_buffers{}, nullptr);
  CHECK_FALSE(base->available());
  CHECK(base->why_not().find("magic_library") != std::string::npos);
}

TEST_CASE("cuBLASLt GEMM baseline computes C = A·Bᵀ for bf16 inputs") {
  check_gemm(dtype::bf16, dtype::bf16, 256, 384, 512);
}

TEST_CASE("cuBLASLt GEMM baseline computes C = A·Bᵀ for fp16 inputs with fp16 C") {
  check_gemm(dtype::fp16, dtype::fp16, 384, 256, 256);
}

TEST_CASE("cuBLASLt GEMM baseline computes C = A·Bᵀ for fp8-e4m3 inputs") {
  check_gemm(dtype::fp8_e4m3, dtype::bf16, 128, 384, 256);
}

TEST_CASE("fp16 inputs with a bf16 C are reported unavailable - saying why") {
  auto base = make_gemm_baseline(gemm_task(dtype::fp16, dtype::bf16), sizes({{"M", 128}, {"N", 128}, {"K", 128}}),
                                 baseline_buffers{}, nullptr);
  CHECK_FALSE(base->available());
  CHECK(base->why_not().find("fp16 C") != std::string::npos);
}

TEST_CASE("a GEMM baseline without its buffers says which is missing") {
  auto base = make_gemm_baseline(gemm_task(dtype::bf16), sizes({{"M", 128}, {"N", 128}, {"K", 128}}),
                                 baseline_buffers{}, nullptr);
  CHECK_FALSE(base->available());
  CHECK(base->why_not().find("'A'") != std::string::npos);
}

}  // namespace
}  // namespace ptxbench::gpu_test
