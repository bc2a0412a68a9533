// Grouped GEMM (MoE) baseline: C[rows of g] = A[rows of g]·op(B[g]) for the
// groups of the fixed uneven pattern (evaluator/api/index_inputs.hpp), with
// the same column-major mapping as gemm_baseline.cpp. Two library routes, both
// set up and timed, the faster kept (the name says which):
//  - cuBLAS's grouped batched GEMM (cublasGemmGroupedBatchedEx, CUDA 12.5+):
//    one call, every non-empty group its own problem (group_size 1);
//  - one cuBLASLt matmul per non-empty group (the heuristic's first algorithm
//    for its shape), captured in one CUDA graph and launched as one unit, so
//    the per-call host overhead is not timed.
// Empty groups are skipped by both. Epilogues and scales are not offered here:
// the suite's grouped task has none (a task asking for one is refused).
#include <cublasLt.h>
#include <cublas_v2.h>

#include <limits>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "evaluator/api/index_inputs.hpp"
#include "evaluator/baselines/baselines.hpp"
#include "evaluator/baselines/cuda_check.hpp"
#include "evaluator/baselines/gemm_common.hpp"
#include "evaluator/baselines/internal.hpp"

namespace ptxbench::baselines_detail {
namespace {

constexpr size_t workspace_bytes = 32ull << 20;

int bytes_of(cudaDataType_t t) { return t == CUDA_R_8F_E4M3 ? 1 : 2; }

class grouped_gemm_baseline final : public baseline {
 public:
  grouped_gemm_baseline(const task& t, const size_point& s, const baseline_buffers& b) : m_p(gemm_problem::of(t, s)) {
    if (m_p.epilogue != "none" || m_p.scaled || m_p.batch > 1)
      throw std::invalid_argument("the grouped GEMM baseline has no epilogue, scales or batch");
    int64_t first = 0, index = 0;
    for (int64_t rows : group_rows(m_p.groups, m_p.m)) {
      if (rows > 0) m_groups.push_back({index, first, rows});
      first += rows;
      ++index;
    }
    if (m_groups.empty()) throw std::invalid_argument("every group is empty");
    try {
      check_lt(cublasLtCreate(&m_lt), "cublasLtCreate");
      m_workspace = device_buffer(workspace_bytes);
      m_pointers = device_buffer(3 * m_groups.size() * sizeof(void*));
      set_up_lt();
      bind(b);
    } catch (...) {
      release();  // the destructor does not run for a constructor that throws
      throw;
    }
  }

  ~grouped_gemm_baseline() override { release(); }

  void release() {
    drop_graph();
    for (auto l : m_layouts) cublasLtMatrixLayoutDestroy(l);
    if (m_op) cublasLtMatmulDescDestroy(m_op);
    if (m_lt) cublasLtDestroy(m_lt);
    if (m_blas) cublasDestroy(m_blas);
    if (m_capture) cuStreamDestroy(m_capture);
    m_layouts.clear();
    m_op = nullptr;
    m_lt = nullptr;
    m_blas = nullptr;
    m_capture = nullptr;
  }

  bool available() const override { return true; }
  std::string why_not() const override { return {}; }
  std::string name() const override { return m_name; }

  bool bind(const baseline_buffers& b) override {
    m_a = require_buffer(b, "A");
    m_b = require_buffer(b, "B");
    m_c = require_buffer(b, "C");
    std::vector<const void*> ptrs;  // [X (our B) per group..., Y (our A)..., D...]
    for (const auto& g : m_groups) ptrs.push_back(x_of(g));
    for (const auto& g : m_groups) ptrs.push_back(y_of(g));
    for (const auto& g : m_groups) ptrs.push_back(d_of(g));
    check_cu(cuMemcpyHtoD(m_pointers.get(), ptrs.data(), ptrs.size() * sizeof(void*)), "cuMemcpyHtoD (pointers)");
    if (m_exec) capture();  // the graph holds the old addresses
    return true;
  }

  void choose(CUstream stream) override {
    std::string grouped_failure;
    double grouped_ms = std::numeric_limits<double>::infinity();
    try {
      check_lt(launch_grouped(stream), "cublasGemmGroupedBatchedEx");
      check_cu(cuStreamSynchronize(stream), "cuStreamSynchronize");
      grouped_ms = median_time_ms(stream, [&] { launch_grouped(stream); }, 1, 5);
    } catch (const std::exception& e) {
      grouped_failure = e.what();
    }
    capture();
    const double graph_ms = median_time_ms(stream, [&] { launch_graph(stream); }, 1, 5);
    m_use_grouped = grouped_ms < graph_ms;
    std::ostringstream n;
    if (m_use_grouped)
      n << "cuBLAS grouped batched GEMM (cublasGemmGroupedBatchedEx) " << m_p.describe() << ", "
        << m_groups.size() << " non-empty groups; faster than per-group cuBLASLt in a CUDA graph";
    else
      n << lt_version() << " " << m_p.describe() << ", one matmul per non-empty group (" << m_groups.size()
        << ") in one CUDA graph"
        << (grouped_failure.empty() ? "; faster than cublasGemmGroupedBatchedEx"
                                    : "; cublasGemmGroupedBatchedEx failed: " + grouped_failure);
    m_name = n.str();
    m_chosen = true;
  }

  void run(CUstream stream) override {
    if (!m_chosen) throw std::logic_error("grouped GEMM baseline run before its route was chosen");
    if (m_use_grouped)
      check_lt(launch_grouped(stream), "cublasGemmGroupedBatchedEx");
    else
      launch_graph(stream);
  }

 private:
  struct group {
    int64_t index = 0, first_row = 0, rows = 0;
  };
  const void* x_of(const group& g) const {
    return reinterpret_cast<const void*>(m_b + CUdeviceptr(g.index * m_p.n * m_p.k * bytes_of(m_p.in_type)));
  }
  const void* y_of(const group& g) const {
    return reinterpret_cast<const void*>(m_a + CUdeviceptr(g.first_row * m_p.k * bytes_of(m_p.in_type)));
  }
  void* d_of(const group& g) const {
    return reinterpret_cast<void*>(m_c + CUdeviceptr(g.first_row * m_p.n * bytes_of(m_p.out_type)));
  }

  void set_up_lt();
  cublasStatus_t launch_grouped(CUstream stream);
  void capture();
  void launch_graph(CUstream stream) { check_cu(cuGraphLaunch(m_exec, stream), "cuGraphLaunch"); }
  void drop_graph() {
    if (m_exec) cuGraphExecDestroy(m_exec);
    if (m_graph) cuGraphDestroy(m_graph);
    m_exec = nullptr;
    m_graph = nullptr;
  }

  gemm_problem m_p;
  std::vector<group> m_groups;
  CUdeviceptr m_a = 0, m_b = 0, m_c = 0;
  cublasLtHandle_t m_lt = nullptr;
  cublasHandle_t m_blas = nullptr;
  cublasLtMatmulDesc_t m_op = nullptr;
  std::vector<cublasLtMatrixLayout_t> m_layouts;  // X, then (Y, D) per group
  std::vector<cublasLtMatmulAlgo_t> m_algos;      // per group
  device_buffer m_workspace;
  device_buffer m_pointers;
  CUstream m_capture = nullptr;
  CUgraph m_graph = nullptr;
  CUgraphExec m_exec = nullptr;
  bool m_use_grouped = false;
  bool m_chosen = false;
  std::string m_name;
};

void grouped_gemm_baseline::set_up_lt() {
  check_lt(cublasLtMatmulDescCreate(&m_op, CUBLAS_COMPUTE_32F, CUDA_R_32F), "cublasLtMatmulDescCreate");
  const cublasOperation_t trans_x = m_p.nn ? CUBLAS_OP_N : CUBLAS_OP_T, trans_y = CUBLAS_OP_N;
  check_lt(cublasLtMatmulDescSetAttribute(m_op, CUBLASLT_MATMUL_DESC_TRANSA, &trans_x, sizeof(trans_x)), "TRANSA");
  check_lt(cublasLtMatmulDescSetAttribute(m_op, CUBLASLT_MATMUL_DESC_TRANSB, &trans_y, sizeof(trans_y)), "TRANSB");
  const int64_t N = m_p.n, K = m_p.k;
  cublasLtMatrixLayout_t x = nullptr;
  check_lt(m_p.nn ? cublasLtMatrixLayoutCreate(&x, m_p.in_type, N, K, N)
                  : cublasLtMatrixLayoutCreate(&x, m_p.in_type, K, N, K),
           "layout X");
  m_layouts.push_back(x);
  cublasLtMatmulPreference_t pref = nullptr;
  check_lt(cublasLtMatmulPreferenceCreate(&pref), "cublasLtMatmulPreferenceCreate");
  const uint64_t ws = m_workspace.bytes();
  cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
  for (const auto& g : m_groups) {
    cublasLtMatrixLayout_t y = nullptr, d = nullptr;
    check_lt(cublasLtMatrixLayoutCreate(&y, m_p.in_type, K, g.rows, K), "layout Y");
    m_layouts.push_back(y);
    check_lt(cublasLtMatrixLayoutCreate(&d, m_p.out_type, N, g.rows, N), "layout D");
    m_layouts.push_back(d);
    cublasLtMatmulHeuristicResult_t result{};
    int found = 0;
    const cublasStatus_t hs = cublasLtMatmulAlgoGetHeuristic(m_lt, m_op, x, y, d, d, pref, 1, &result, &found);
    if (hs != CUBLAS_STATUS_SUCCESS || found == 0) {
      cublasLtMatmulPreferenceDestroy(pref);
      check_lt(hs, "cublasLtMatmulAlgoGetHeuristic (a group)");
      throw std::runtime_error("cuBLASLt heuristic returned no algorithm for a group of " + std::to_string(g.rows) +
                               " rows");
    }
    m_algos.push_back(result.algo);
  }
  cublasLtMatmulPreferenceDestroy(pref);
}

cublasStatus_t grouped_gemm_baseline::launch_grouped(CUstream stream) {
  if (!m_blas) {
    check_lt(cublasCreate(&m_blas), "cublasCreate");
    check_lt(cublasSetWorkspace(m_blas, m_workspace.ptr(), m_workspace.bytes()), "cublasSetWorkspace");
  }
  check_lt(cublasSetStream(m_blas, reinterpret_cast<cudaStream_t>(stream)), "cublasSetStream");
  const size_t n = m_groups.size();
  const int N = int(m_p.n), K = int(m_p.k);
  std::vector<cublasOperation_t> ta(n, m_p.nn ? CUBLAS_OP_N : CUBLAS_OP_T), tb(n, CUBLAS_OP_N);
  std::vector<int> m(n, N), rows(n), k(n, K), lda(n, m_p.nn ? N : K), ldb(n, K), ldc(n, N), size(n, 1);
  for (size_t i = 0; i < n; ++i) rows[i] = int(m_groups[i].rows);
  std::vector<float> alpha(n, 1.0f), beta(n, 0.0f);
  void* const* ptrs = static_cast<void* const*>(m_pointers.ptr());
  return cublasGemmGroupedBatchedEx(m_blas, ta.data(), tb.data(), m.data(), rows.data(), k.data(), alpha.data(),
                                    reinterpret_cast<const void* const*>(ptrs), m_p.in_type, lda.data(),
                                    reinterpret_cast<const void* const*>(ptrs + n), m_p.in_type, ldb.data(),
                                    beta.data(), ptrs + 2 * n, m_p.out_type, ldc.data(), int(n), size.data(),
                                    CUBLAS_COMPUTE_32F);
}

// Records one cuBLASLt matmul per group, in order on one stream, as a graph.
void grouped_gemm_baseline::capture() {
  drop_graph();
  if (!m_capture) check_cu(cuStreamCreate(&m_capture, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  check_cu(cuStreamBeginCapture(m_capture, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "cuStreamBeginCapture");
  const float alpha = 1.0f, beta = 0.0f;
  cublasStatus_t status = CUBLAS_STATUS_SUCCESS;
  for (size_t i = 0; i < m_groups.size() && status == CUBLAS_STATUS_SUCCESS; ++i) {
    const group& g = m_groups[i];
    cublasLtMatrixLayout_t y = m_layouts[1 + 2 * i], d = m_layouts[2 + 2 * i];
    status = cublasLtMatmul(m_lt, m_op, &alpha, x_of(g), m_layouts[0], y_of(g), y, &beta, d_of(g), d, d_of(g), d,
                            &m_algos[i], m_workspace.ptr(), m_workspace.bytes(),
                            reinterpret_cast<cudaStream_t>(m_capture));
  }
  const CUresult ended = cuStreamEndCapture(m_capture, &m_graph);
  check_lt(status, "cublasLtMatmul (captured, a group)");
  check_cu(ended, "cuStreamEndCapture");
  check_cu(cuGraphInstantiate(&m_exec, m_graph, 0), "cuGraphInstantiate");
}

}  // namespace

std::unique_ptr<baseline> make_grouped_gemm_baseline(const task& t, const size_point& s, const baseline_buffers& b,
                                                     CUstream) {
  return std::make_unique<grouped_gemm_baseline>(t, s, b);
}

}  // namespace ptxbench::baselines_detail
