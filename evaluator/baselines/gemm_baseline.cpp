// GEMM baseline through cuBLASLt: every variant of docs/task-suite.md except
// grouped (gemm_grouped_baseline.cpp): layouts nt and nn, epilogues bias and
// bias+GELU (cuBLASLt's own, fused), alpha·AB + beta·C, fp8 per-tensor scales,
// a strided batch.
//
// Layout. cuBLASLt is column-major. Row-major A (M×K, lda=K) is the
// column-major K×M matrix Aᵀ; row-major C (M×N) is column-major N×M (Cᵀ).
// Since Cᵀ = op(B)ᵀ·Aᵀ, we ask cuBLASLt for D(N×M) = op(X)·Y with X = the B
// buffer and Y = the A buffer. nt: B is N×K row-major = column-major K×N, so
// transa = T (the "TN" layout, the only one Hopper's fp8 kernels accept); nn:
// B is K×N row-major = column-major N×K, transa = N. cuBLASLt's bias is per
// row of D (N of them): the task's bias[N]. Its A is our B, so its A scale is
// scale_b and its B scale scale_a.
#include <cublasLt.h>

#include <algorithm>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "evaluator/baselines/baselines.hpp"
#include "evaluator/baselines/cuda_check.hpp"
#include "evaluator/baselines/gemm_common.hpp"
#include "evaluator/baselines/internal.hpp"

namespace ptxbench {
namespace {

using baselines_detail::check_cu;
using baselines_detail::check_lt;
using baselines_detail::device_buffer;
using baselines_detail::gemm_problem;

constexpr size_t workspace_bytes = 64ull << 20;
constexpr int max_algorithms = 16;

class gemm_baseline final : public baseline {
 public:
  gemm_baseline(const task& t, const size_point& s, const baseline_buffers& b) : m_p(gemm_problem::of(t, s)) {
    try {
      set_up();
    } catch (...) {
      release();  // the destructor does not run for a constructor that throws
      throw;
    }
    bind(b);
  }

  ~gemm_baseline() override { release(); }

  bool available() const override { return true; }
  std::string why_not() const override { return {}; }
  std::string name() const override { return m_name; }

  bool bind(const baseline_buffers& b) override {
    m_a = reinterpret_cast<const void*>(baselines_detail::require_buffer(b, "A"));
    m_b = reinterpret_cast<const void*>(baselines_detail::require_buffer(b, "B"));
    m_d = reinterpret_cast<void*>(baselines_detail::require_buffer(b, m_p.output));
    m_c = m_p.epilogue == "alpha_beta" ? reinterpret_cast<const void*>(baselines_detail::require_buffer(b, "C")) : m_d;
    if (m_p.epilogue == "bias" || m_p.epilogue == "bias_gelu") {
      const void* bias = reinterpret_cast<const void*>(baselines_detail::require_buffer(b, "bias"));
      check_lt(cublasLtMatmulDescSetAttribute(m_op, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)), "BIAS");
    }
    return true;
  }
  void choose(CUstream stream) override {
    choose_algorithm(stream);
    m_chosen = true;
  }
  void run(CUstream stream) override {
    if (!m_chosen) throw std::logic_error("cuBLASLt baseline run before its algorithm was chosen");
    check_lt(launch(m_algo, stream), "cublasLtMatmul");
  }

 private:
  void set_up() {
    const gemm_problem& p = m_p;
    check_lt(cublasLtCreate(&m_handle), "cublasLtCreate");
    check_lt(cublasLtMatmulDescCreate(&m_op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
    const cublasOperation_t trans_x = p.nn ? CUBLAS_OP_N : CUBLAS_OP_T, trans_y = CUBLAS_OP_N;
    check_lt(cublasLtMatmulDescSetAttribute(m_op, CUBLASLT_MATMUL_DESC_TRANSA, &trans_x, sizeof(trans_x)), "TRANSA");
    check_lt(cublasLtMatmulDescSetAttribute(m_op, CUBLASLT_MATMUL_DESC_TRANSB, &trans_y, sizeof(trans_y)), "TRANSB");
    cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_DEFAULT;
    if (p.epilogue == "bias") epilogue = CUBLASLT_EPILOGUE_BIAS;
    if (p.epilogue == "bias_gelu") epilogue = CUBLASLT_EPILOGUE_GELU_BIAS;
    check_lt(cublasLtMatmulDescSetAttribute(m_op, CUBLASLT_MATMUL_DESC_EPILOGUE, &epilogue, sizeof(epilogue)),
             "EPILOGUE");
    if (p.scaled) {
      // Each scale in a 256-byte slot of its own: cuBLASLt reads them as
      // device scalars and may want them aligned like any operand.
      constexpr size_t slot = 256;
      m_scales = device_buffer(2 * slot);
      const float lt_a = p.scale_b, lt_b = p.scale_a;  // cuBLASLt's A is our B
      check_cu(cuMemcpyHtoD(m_scales.get(), &lt_a, sizeof lt_a), "cuMemcpyHtoD (fp8 scale of A)");
      check_cu(cuMemcpyHtoD(m_scales.get() + slot, &lt_b, sizeof lt_b), "cuMemcpyHtoD (fp8 scale of B)");
      const float* a_scale = reinterpret_cast<const float*>(m_scales.get());
      const float* b_scale = reinterpret_cast<const float*>(m_scales.get() + slot);
      check_lt(cublasLtMatmulDescSetAttribute(m_op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &a_scale, sizeof(a_scale)),
               "A_SCALE_POINTER");
      check_lt(cublasLtMatmulDescSetAttribute(m_op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &b_scale, sizeof(b_scale)),
               "B_SCALE_POINTER");
    }
    const int64_t M = p.m, N = p.n, K = p.k;
    if (p.nn)
      check_lt(cublasLtMatrixLayoutCreate(&m_x_layout, p.in_type, N, K, N), "layout X");
    else
      check_lt(cublasLtMatrixLayoutCreate(&m_x_layout, p.in_type, K, N, K), "layout X");
    check_lt(cublasLtMatrixLayoutCreate(&m_y_layout, p.in_type, K, M, K), "layout Y");
    check_lt(cublasLtMatrixLayoutCreate(&m_d_layout, p.out_type, N, M, N), "layout D");
    if (p.batch > 1) {
      batch(m_x_layout, N * K);
      batch(m_y_layout, M * K);
      batch(m_d_layout, M * N);
    }
    m_workspace = device_buffer(workspace_bytes);
  }

  void batch(cublasLtMatrixLayout_t layout, int64_t stride) {
    const int32_t count = static_cast<int32_t>(m_p.batch);
    check_lt(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof(count)),
             "BATCH_COUNT");
    check_lt(cublasLtMatrixLayoutSetAttribute(layout, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride,
                                              sizeof(stride)),
             "STRIDED_BATCH_OFFSET");
  }

  void release() {
    if (m_d_layout) cublasLtMatrixLayoutDestroy(m_d_layout);
    if (m_y_layout) cublasLtMatrixLayoutDestroy(m_y_layout);
    if (m_x_layout) cublasLtMatrixLayoutDestroy(m_x_layout);
    if (m_op) cublasLtMatmulDescDestroy(m_op);
    if (m_handle) cublasLtDestroy(m_handle);
    m_d_layout = m_y_layout = m_x_layout = nullptr;
    m_op = nullptr;
    m_handle = nullptr;
  }

  cublasStatus_t launch(const cublasLtMatmulAlgo_t& algo, CUstream stream) {
    return cublasLtMatmul(m_handle, m_op, &m_p.alpha, m_b, m_x_layout, m_a, m_y_layout, &m_p.beta, m_c, m_d_layout,
                          m_d, m_d_layout, &algo, m_workspace.ptr(), m_workspace.bytes(),
                          reinterpret_cast<cudaStream_t>(stream));
  }

  // The fastest heuristic algorithm that runs. Per-tensor fp8 scales are a
  // scalar factor of the product, so where every scale-pointer kernel refuses
  // to launch (seen on an H100 with cuBLASLt 13.0), the same GEMM runs with the
  // product of the scales folded into alpha: D = (scale_a·scale_b)·(A·B).
  void choose_algorithm(CUstream stream) {
    try {
      choose_among_heuristics(stream);
    } catch (const std::runtime_error& e) {
      if (!m_p.scaled || m_scales_folded) throw;
      const float* none = nullptr;
      check_lt(cublasLtMatmulDescSetAttribute(m_op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &none, sizeof(none)),
               "A_SCALE_POINTER (cleared)");
      check_lt(cublasLtMatmulDescSetAttribute(m_op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &none, sizeof(none)),
               "B_SCALE_POINTER (cleared)");
      m_p.alpha *= m_p.scale_a * m_p.scale_b;
      m_scales_folded = true;
      choose_among_heuristics(stream);
      m_name += "; scales folded into alpha (with scale pointers: " + std::string(e.what()) + ")";
    }
  }

  void choose_among_heuristics(CUstream stream) {
    cublasLtMatmulPreference_t pref = nullptr;
    check_lt(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
    const uint64_t ws = m_workspace.bytes();
    cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
    std::vector<cublasLtMatmulHeuristicResult_t> results(max_algorithms);
    int found = 0;
    const cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(m_handle, m_op, m_x_layout, m_y_layout, m_d_layout,
                                                             m_d_layout, pref, max_algorithms, results.data(), &found);
    cublasLtMatmulPreferenceDestroy(pref);
    check_lt(hs, "cublasLtMatmulAlgoGetHeuristic");
    if (found == 0) throw std::runtime_error("cuBLASLt heuristic returned no algorithm for this GEMM");

    double best_ms = std::numeric_limits<double>::infinity();
    int timed = 0;
    std::string refusals;  // why the algorithms that did not run refused (the first three)
    const auto refused = [&](int i, cublasStatus_t s) {
      if (std::count(refusals.begin(), refusals.end(), ';') < 3)
        refusals += "; algorithm " + std::to_string(i) + ": " + cublasLtGetStatusName(s);
    };
    for (int i = 0; i < found; ++i) {
      if (results[i].state != CUBLAS_STATUS_SUCCESS) {
        refused(i, results[i].state);
        continue;
      }
      const cublasLtMatmulAlgo_t& algo = results[i].algo;
      if (const cublasStatus_t s = launch(algo, stream); s != CUBLAS_STATUS_SUCCESS) {
        refused(i, s);  // an algorithm that refuses to run is skipped
        continue;
      }
      const double ms = baselines_detail::median_time_ms(
          stream, [&] { launch(algo, stream); }, 1, 5);
      ++timed;
      if (ms < best_ms) {
        best_ms = ms;
        m_algo = algo;
      }
    }
    if (timed == 0)
      throw std::runtime_error("no cuBLASLt heuristic algorithm ran for this GEMM (" + std::to_string(found) +
                               " offered" + refusals + ")");
    int algo_id = -1, tile = -1;
    cublasLtMatmulAlgoConfigGetAttribute(&m_algo, CUBLASLT_ALGO_CONFIG_ID, &algo_id, sizeof(algo_id), nullptr);
    cublasLtMatmulAlgoConfigGetAttribute(&m_algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof(tile), nullptr);
    std::ostringstream n;
    n << baselines_detail::lt_version() << " " << m_p.describe() << " GEMM, best of " << timed
      << " heuristic algorithms (algo id " << algo_id << ", tile " << tile << ")";
    m_name = n.str();
  }

  gemm_problem m_p;
  bool m_scales_folded = false;
  const void* m_a = nullptr;
  const void* m_b = nullptr;
  const void* m_c = nullptr;
  void* m_d = nullptr;
  cublasLtHandle_t m_handle = nullptr;
  cublasLtMatmulDesc_t m_op = nullptr;
  cublasLtMatrixLayout_t m_x_layout = nullptr;
  cublasLtMatrixLayout_t m_y_layout = nullptr;
  cublasLtMatrixLayout_t m_d_layout = nullptr;
  cublasLtMatmulAlgo_t m_algo{};
  bool m_chosen = false;
  device_buffer m_workspace;
  device_buffer m_scales;
  std::string m_name;
};

}  // namespace

std::unique_ptr<baseline> make_gemm_baseline(const task& t, const size_point& s, const baseline_buffers& b,
                                             CUstream stream) {
  try {
    if (t.op.grouped) return baselines_detail::make_grouped_gemm_baseline(t, s, b, stream);
    return std::make_unique<gemm_baseline>(t, s, b);
  } catch (const std::exception& e) {
    return baselines_detail::make_unavailable("cuBLASLt GEMM", e.what());
  }
}

}  // namespace ptxbench
