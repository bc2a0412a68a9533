// Device probe of the baselines per task variant (docs/task-suite.md): which
// cuBLASLt / cuBLAS / cuDNN configurations the GPU's libraries accept, and
// whether each computes the variant right. Part 1 runs every fixture task of
// tests/fixtures/reference_tasks.json at a probe size (odd sizes, every
// output compared element by element with the naive fp64 reference); part 2
// sets up and times the catalogue's timed sizes (constant inputs, no check).
// Usage: ptxbench_variants_probe FIXTURES_JSON [--no-large]
// Prints one PASS/FAIL/UNAVAILABLE line per case; exit 0 when all passed.
#include <cublasLt.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "evaluator/baselines/cudnn_api.hpp"
#include "tests/baselines/gpu_support.hpp"
#include "tests/baselines/variant_check.hpp"

using namespace ptxbench;
using namespace ptxbench::gpu_test;

namespace {

int failures = 0;

void report(const std::string& label, const variant_result& r, double bound) {
  const char* verdict = !r.available ? "UNAVAILABLE" : r.passed(bound) ? "PASS" : "FAIL";
  if (std::strcmp(verdict, "PASS") != 0) ++failures;
  std::printf("%-11s %s: %s\n", verdict, label.c_str(), r.summary().c_str());
  std::fflush(stdout);
}

struct large_case {
  const char* fixture;
  std::map<std::string, int64_t> size;
};

// The catalogue's timed sizes, on the fixture of the same variant.
const large_case k_large[] = {
    {"ref_gemm_bf16", {{"M", 4096}, {"N", 4096}, {"K", 4096}}},
    {"ref_gemm_bf16_nn", {{"M", 4096}, {"N", 4096}, {"K", 4096}}},
    {"ref_gemm_fp16_nn", {{"M", 4096}, {"N", 4096}, {"K", 4096}}},
    {"ref_gemm_bf16_bias", {{"M", 4096}, {"N", 4096}, {"K", 4096}}},
    {"ref_gemm_bf16_bias_gelu", {{"M", 4096}, {"N", 4096}, {"K", 4096}}},
    {"ref_gemm_fp16_bias_gelu", {{"M", 4096}, {"N", 4096}, {"K", 4096}}},
    {"ref_gemm_bf16_alpha_beta", {{"M", 4096}, {"N", 4096}, {"K", 4096}}},
    {"ref_gemm_fp8_scaled", {{"M", 4096}, {"N", 4096}, {"K", 4096}}},
    {"ref_gemm_bf16", {{"M", 16}, {"N", 8192}, {"K", 8192}}},
    {"ref_gemm_bf16", {{"M", 8192}, {"N", 28672}, {"K", 4096}}},
    {"ref_gemm_bf16_batched", {{"L", 16}, {"M", 1024}, {"N", 1024}, {"K", 1024}}},
    {"ref_gemm_bf16_grouped", {{"G", 16}, {"M", 512}, {"N", 4096}, {"K", 2048}}},
    {"ref_gemm_bf16_grouped", {{"G", 64}, {"M", 128}, {"N", 4096}, {"K", 2048}}},
    {"ref_attn_fwd_d64", {{"B", 4}, {"H", 32}, {"S", 4096}, {"D", 64}}},
    {"ref_attn_fwd_d128_causal", {{"B", 4}, {"H", 16}, {"S", 4096}, {"D", 128}}},
    {"ref_attn_fwd_d256", {{"B", 4}, {"H", 8}, {"S", 4096}, {"D", 256}}},
    {"ref_attn_fwd_d128_causal", {{"B", 4}, {"H", 16}, {"S", 4001}, {"D", 128}}},
    {"ref_attn_fwd_gqa2_causal", {{"B", 4}, {"H", 32}, {"HKV", 4}, {"S", 4096}, {"D", 64}}},
    {"ref_attn_fwd_mqa", {{"B", 4}, {"H", 16}, {"HKV", 1}, {"S", 4096}, {"D", 128}}},
    {"ref_attn_fwd_varlen", {{"B", 8}, {"H", 16}, {"HKV", 16}, {"S", 4096}, {"D", 64}}},
    {"ref_attn_fwd_varlen_causal", {{"B", 8}, {"H", 16}, {"S", 4096}, {"D", 128}}},
    {"ref_attn_decode", {{"B", 32}, {"H", 32}, {"S", 8192}, {"D", 128}}},
    {"ref_attn_decode_gqa4", {{"B", 32}, {"H", 32}, {"HKV", 4}, {"S", 8192}, {"D", 64}}},
    {"ref_attn_fwd_fp8", {{"B", 4}, {"H", 16}, {"S", 4096}, {"D", 128}}},
    {"ref_attn_fwd_fp8_causal", {{"B", 4}, {"H", 16}, {"S", 4096}, {"D", 64}}},
    {"ref_attn_bwd_d128", {{"B", 4}, {"H", 16}, {"S", 4096}, {"D", 128}}},
    {"ref_attn_bwd_gqa2_causal_d64", {{"B", 4}, {"H", 32}, {"HKV", 8}, {"S", 4096}, {"D", 64}}},
};

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FIXTURES_JSON [--no-large]\n", argv[0]);
    return 2;
  }
  const bool large = !(argc > 2 && std::strcmp(argv[2], "--no-large") == 0);
  gpu& g = the_gpu();
  if (!g.ok) {
    std::printf("no GPU: %s\n", g.why_not.c_str());
    return 77;
  }
  const cudnn::api& dnn = cudnn::load();
  const size_t lt = cublasLtGetVersion();
  std::printf("GPU %s; cuBLASLt %zu; cuDNN %s (%s)\n", g.name.c_str(), lt,
              dnn.loaded ? cudnn::version_string(dnn.version).c_str() : "not loaded",
              dnn.loaded ? dnn.library.c_str() : dnn.error.c_str());
  std::vector<task> tasks = load_task_array(argv[1]);
  std::map<std::string, const task*> by_id;
  for (const auto& t : tasks) by_id[t.id] = &t;
  std::printf("== part 1: every variant at a probe size, checked against the fp64 naive reference\n");
  for (const auto& t : tasks) {
    const size_point s = probe_size(t);
    const bool fp8_out = t.op.fp8;
    report(t.id + " at " + describe_size(s), check_variant(t, s, true, 3), fp8_out ? 0.08 : 0.02);
  }
  if (large) {
    std::printf("== part 2: timed catalogue sizes (set-up, one run, timing; constant inputs, not checked)\n");
    for (const auto& c : k_large) {
      size_point s;
      s.values = c.size;
      s.timed = true;
      const task& t = *by_id.at(c.fixture);
      report(std::string(c.fixture) + " at " + describe_size(s), check_variant(t, s, false, 10), 0);
    }
  }
  std::printf("== %d case(s) not passed\n", failures);
  return failures == 0 ? 0 : 1;
}
