// GEMM baseline: C = A·Bᵀ through cuBLASLt.
//
// Layout. cuBLASLt is column-major. Row-major A (M×K, lda=K) is the
// column-major K×M matrix Aᵀ; row-major B (N×K) is column-major K×N (Bᵀ);
// row-major C (M×N) is column-major N×M (Cᵀ). Since Cᵀ = B·Aᵀ, we ask cuBLASLt
// for D(N×M) = op(X)·op(Y) with X = the B buffer (K×N, transa=T) and Y = the A
// buffer (K×M, transb=N): the "TN" layout, which is also the only layout
// Hopper's fp8 kernels accept. m=N, n=M, k=K; all leading dimensions are K
// except C/D's, which is N. Scale pointers stay unset (cuBLASLt reads 1.0).
// C is bf16 (fp16 also accepted; fp16 inputs need it, see below).
#include <cublasLt.h>

#include <algorithm>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "evaluator/baselines/baselines.hpp"
#include "evaluator/baselines/cuda_check.hpp"
#include "evaluator/baselines/internal.hpp"

namespace ptxbench {
namespace {

using baselines_detail::check_cu;
using baselines_detail::device_buffer;

constexpr size_t workspace_bytes = 64ull << 20;
constexpr int max_algorithms = 16;

void check_lt(cublasStatus_t s, const char* what) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  throw std::runtime_error(std::string(what) + ": " + cublasLtGetStatusName(s) + " (" + cublasLtGetStatusString(s) + ")");
}

cudaDataType_t lt_type(dtype t) {
  switch (t) {
    case dtype::bf16: return CUDA_R_16BF;
    case dtype::fp16: return CUDA_R_16F;
    case dtype::fp8_e4m3: return CUDA_R_8F_E4M3;
    default: throw std::invalid_argument(std::string("GEMM baseline: unsupported input dtype ") + to_string(t));
  }
}

class gemm_baseline final : public baseline {
 public:
  gemm_baseline(const task& t, const size_point& s, const baseline_buffers& b) {
    const tensor_spec* a_spec = t.find_tensor("A");
    const tensor_spec* c_spec = t.find_tensor("C");
    if (!a_spec || !t.find_tensor("B") || !c_spec) throw std::invalid_argument("GEMM task lacks tensors A, B, C");
    if (c_spec->type != dtype::bf16 && c_spec->type != dtype::fp16)
      throw std::invalid_argument("GEMM baseline: C must be bf16 or fp16");
    // Measured: cuBLASLt 13.1 has no fp16 x fp16 -> bf16 kernel (NOT_SUPPORTED), so say so plainly.
    if (a_spec->type == dtype::fp16 && c_spec->type == dtype::bf16)
      throw std::invalid_argument("cuBLASLt offers no fp16 x fp16 -> bf16 GEMM; an fp16 GEMM task needs an fp16 C");
    m_in_type = lt_type(a_spec->type);
    m_out_type = c_spec->type == dtype::fp16 ? CUDA_R_16F : CUDA_R_16BF;
    m_type_name = std::string(to_string(a_spec->type)) + " -> " + to_string(c_spec->type);
    const int64_t M = baselines_detail::require_size(s, "M");
    const int64_t N = baselines_detail::require_size(s, "N");
    const int64_t K = baselines_detail::require_size(s, "K");
    m_a = reinterpret_cast<const void*>(baselines_detail::require_buffer(b, "A"));
    m_b = reinterpret_cast<const void*>(baselines_detail::require_buffer(b, "B"));
    m_c = reinterpret_cast<void*>(baselines_detail::require_buffer(b, "C"));

    try {
      set_up(M, N, K);
    } catch (...) {
      release();  // the destructor does not run for a constructor that throws
      throw;
    }
  }

  ~gemm_baseline() override { release(); }

  bool available() const override { return true; }
  std::string why_not() const override { return {}; }
  std::string name() const override { return m_name; }

  bool bind(const baseline_buffers& b) override {
    m_a = reinterpret_cast<const void*>(baselines_detail::require_buffer(b, "A"));
    m_b = reinterpret_cast<const void*>(baselines_detail::require_buffer(b, "B"));
    m_c = reinterpret_cast<void*>(baselines_detail::require_buffer(b, "C"));
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
  void set_up(int64_t M, int64_t N, int64_t K) {
    check_lt(cublasLtCreate(&m_handle), "cublasLtCreate");
    check_lt(cublasLtMatmulDescCreate(&m_op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
    const cublasOperation_t trans_x = CUBLAS_OP_T, trans_y = CUBLAS_OP_N;
    check_lt(cublasLtMatmulDescSetAttribute(m_op, CUBLASLT_MATMUL_DESC_TRANSA, &trans_x, sizeof(trans_x)), "TRANSA");
    check_lt(cublasLtMatmulDescSetAttribute(m_op, CUBLASLT_MATMUL_DESC_TRANSB, &trans_y, sizeof(trans_y)), "TRANSB");
    check_lt(cublasLtMatrixLayoutCreate(&m_x_layout, m_in_type, K, N, K), "layout X");
    check_lt(cublasLtMatrixLayoutCreate(&m_y_layout, m_in_type, K, M, K), "layout Y");
    check_lt(cublasLtMatrixLayoutCreate(&m_d_layout, m_out_type, N, M, N), "layout D");
    m_workspace = device_buffer(workspace_bytes);
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
    const float alpha = 1.0f, beta = 0.0f;
    return cublasLtMatmul(m_handle, m_op, &alpha, m_b, m_x_layout, m_a, m_y_layout, &beta, m_c, m_d_layout, m_c,
                          m_d_layout, &algo, m_workspace.ptr(), m_workspace.bytes(),
                          reinterpret_cast<cudaStream_t>(stream));
  }

  void choose_algorithm(CUstream stream) {
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
    for (int i = 0; i < found; ++i) {
      if (results[i].state != CUBLAS_STATUS_SUCCESS) continue;
      const cublasLtMatmulAlgo_t& algo = results[i].algo;
      if (launch(algo, stream) != CUBLAS_STATUS_SUCCESS) continue;  // an algorithm that refuses to run is skipped
      const double ms = baselines_detail::median_time_ms(
          stream, [&] { launch(algo, stream); }, 1, 5);
      ++timed;
      if (ms < best_ms) {
        best_ms = ms;
        m_algo = algo;
      }
    }
    if (timed == 0) throw std::runtime_error("no cuBLASLt heuristic algorithm ran for this GEMM");
    int algo_id = -1, tile = -1;
    cublasLtMatmulAlgoConfigGetAttribute(&m_algo, CUBLASLT_ALGO_CONFIG_ID, &algo_id, sizeof(algo_id), nullptr);
    cublasLtMatmulAlgoConfigGetAttribute(&m_algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof(tile), nullptr);
    std::ostringstream n;
    const size_t v = cublasLtGetVersion();  // major*10000 + minor*100 + patch
    n << "cuBLASLt " << v / 10000 << "." << (v / 100) % 100 << "." << v % 100 << " " << m_type_name << " GEMM, best of " << timed
      << " heuristic algorithms (algo id " << algo_id << ", tile " << tile << ")";
    m_name = n.str();
  }

  cudaDataType_t m_in_type = CUDA_R_16BF;
  cudaDataType_t m_out_type = CUDA_R_16BF;
  std::string m_type_name;
  const void* m_a = nullptr;
  const void* m_b = nullptr;
  void* m_c = nullptr;
  cublasLtHandle_t m_handle = nullptr;
  cublasLtMatmulDesc_t m_op = nullptr;
  cublasLtMatrixLayout_t m_x_layout = nullptr;
  cublasLtMatrixLayout_t m_y_layout = nullptr;
  cublasLtMatrixLayout_t m_d_layout = nullptr;
  cublasLtMatmulAlgo_t m_algo{};
  bool m_chosen = false;
  device_buffer m_workspace;
  std::string m_name;
};

}  // namespace

std::unique_ptr<baseline> make_gemm_baseline(const task& t, const size_point& s, const baseline_buffers& b,
                                             CUstream) {
  try {
    return std::make_unique<gemm_baseline>(t, s, b);
  } catch (const std::exception& e) {
    return baselines_detail::make_unavailable("cuBLASLt GEMM", e.what());
  }
}

}  // namespace ptxbench
