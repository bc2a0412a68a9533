// Attention baselines: cuDNN's fused flash attention, forward and backward,
// through the backend graph API (see attention_graphs.hpp for the graphs).
// Setup builds the graph and asks cuDNN's heuristics for plans; choose()
// times up to four on the real buffers and keeps the fastest.
#include <cmath>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "evaluator/baselines/attention_graphs.hpp"
#include "evaluator/baselines/baselines.hpp"
#include "evaluator/baselines/cuda_check.hpp"
#include "evaluator/baselines/cudnn_api.hpp"
#include "evaluator/baselines/internal.hpp"

namespace ptxbench {
namespace {

using baselines_detail::check_cu;
using baselines_detail::device_buffer;

constexpr int max_plans = 4;

class cudnn_handle {
 public:
  cudnn_handle() { cudnn::check(cudnn::load().create(&m_handle), "cudnnCreate"); }
  ~cudnn_handle() {
    if (m_handle) cudnn::load().destroy(m_handle);
  }
  cudnn_handle(const cudnn_handle&) = delete;
  cudnn_handle& operator=(const cudnn_handle&) = delete;
  cudnnHandle_t get() const { return m_handle; }

 private:
  cudnnHandle_t m_handle = nullptr;
};

class attention_baseline final : public baseline {
 public:
  attention_baseline(const task& t, const size_point& s, const baseline_buffers& b) {
    const bool backward = t.family == "attention_bwd";
    cudnn::attention_shape shape;
    shape.b = baselines_detail::require_size(s, "B");
    shape.h = baselines_detail::require_size(s, "H");
    shape.s = baselines_detail::require_size(s, "S");
    shape.d = baselines_detail::require_size(s, "D");
    shape.causal = t.causal;
    const auto scalars = scalar_values(t, s);
    const auto scale_it = scalars.find("scale");
    shape.scale = static_cast<float>(scale_it != scalars.end() ? scale_it->second
                                                               : 1.0 / std::sqrt(static_cast<double>(shape.d)));

    std::string rejected;
    std::vector<cudnn::plan> plans;
    if (!backward) {
      m_graph = std::make_unique<cudnn::graph>();
      m_io = cudnn::build_forward_graph(*m_graph, shape);
      m_graph->finalize(m_handle.get());
      plans = cudnn::make_plans(m_handle.get(), *m_graph, max_plans, rejected);
    } else {
      for (auto lowering : {cudnn::backward_lowering::current, cudnn::backward_lowering::legacy}) {
        try {
          m_graph = std::make_unique<cudnn::graph>();
          m_io = cudnn::build_backward_graph(*m_graph, shape, lowering);
          m_graph->finalize(m_handle.get());
          plans = cudnn::make_plans(m_handle.get(), *m_graph, max_plans, rejected);
        } catch (const cudnn::error& e) {
          rejected += std::string("; ") + cudnn::to_string(lowering) + " lowering: " + e.what();
        }
        if (!plans.empty()) {
          m_lowering = cudnn::to_string(lowering);
          break;
        }
      }
    }
    if (plans.empty()) throw cudnn::error("cuDNN offered no working plan for this attention graph: " + rejected);

    const int64_t rows = shape.b * shape.h * shape.s;
    if (m_io.softmax_sum >= 0) m_softmax_sum = device_buffer(static_cast<size_t>(rows) * sizeof(float));
    if (m_io.dq_accum >= 0) m_dq_accum = device_buffer(static_cast<size_t>(rows * shape.d) * sizeof(float));
    int64_t workspace = 0;
    for (const auto& p : plans) workspace = std::max(workspace, p.workspace_bytes);
    m_workspace = device_buffer(static_cast<size_t>(workspace));

    m_plans = std::move(plans);
    m_backward = backward;
    m_shape = shape;
    bind_pointers(b);
  }

  bool bind(const baseline_buffers& b) override {
    bind_pointers(b);
    if (m_variant_pack)
      m_variant_pack = std::make_shared<cudnn::descriptor>(cudnn::make_variant_pack(m_uids, m_pointers, m_workspace.ptr()));
    return true;
  }

  void choose(CUstream stream) override {
    choose_plan(m_plans, m_uids, m_pointers, stream);
    describe(m_backward, m_shape, static_cast<int>(m_plans.size()));
  }

 private:
  void bind_pointers(const baseline_buffers& b) {
    std::vector<int64_t> uids;
    std::vector<void*> pointers;
    for (const auto& [tensor, uid] : m_io.uids) {
      uids.push_back(uid);
      pointers.push_back(reinterpret_cast<void*>(baselines_detail::require_buffer(b, tensor)));
    }
    for (const auto& [uid, host] : m_graph->scalar_pointers()) {
      uids.push_back(uid);
      pointers.push_back(host);
    }
    if (m_io.softmax_sum >= 0) {
      uids.push_back(m_io.softmax_sum);
      pointers.push_back(m_softmax_sum.ptr());
    }
    if (m_io.dq_accum >= 0) {
      uids.push_back(m_io.dq_accum);
      pointers.push_back(m_dq_accum.ptr());
    }
    m_uids = std::move(uids);
    m_pointers = std::move(pointers);
  }

 public:
  bool available() const override { return true; }
  std::string why_not() const override { return {}; }
  std::string name() const override { return m_name; }

  void run(CUstream stream) override {
    if (!m_variant_pack) throw std::logic_error("cuDNN baseline run before its plan was chosen");
    execute(*m_plan.execution_plan, *m_variant_pack, stream);
  }

 private:
  void execute(const cudnn::descriptor& plan, const cudnn::descriptor& pack, CUstream stream) {
    if (m_io.zero_dq_accum)
      check_cu(cuMemsetD32Async(m_dq_accum.get(), 0, m_dq_accum.bytes() / 4, stream), "cuMemsetD32Async");
    cudnn::check(cudnn::load().set_stream(m_handle.get(), reinterpret_cast<cudaStream_t>(stream)), "cudnnSetStream");
    cudnn::check(cudnn::load().backend_execute(m_handle.get(), plan.get(), pack.get()), "cudnnBackendExecute");
  }

  void choose_plan(std::vector<cudnn::plan>& plans, const std::vector<int64_t>& uids,
                   const std::vector<void*>& pointers, CUstream stream) {
    double best_ms = std::numeric_limits<double>::infinity();
    std::string failures;
    m_timed = 0;
    for (auto& p : plans) {
      try {
        auto pack = std::make_shared<cudnn::descriptor>(cudnn::make_variant_pack(uids, pointers, m_workspace.ptr()));
        execute(*p.execution_plan, *pack, stream);
        check_cu(cuStreamSynchronize(stream), "cuStreamSynchronize after a cuDNN plan");
        const double ms = baselines_detail::median_time_ms(
            stream, [&] { execute(*p.execution_plan, *pack, stream); }, 1, 3);
        ++m_timed;
        if (ms < best_ms) {
          best_ms = ms;
          m_plan = p;
          m_variant_pack = pack;
        }
      } catch (const cudnn::error& e) {
        failures += std::string(failures.empty() ? "" : "; ") + e.what();
      }
    }
    if (m_timed == 0) throw cudnn::error("no cuDNN attention plan executed: " + failures);
  }

  void describe(bool backward, const cudnn::attention_shape& shape, int planned) {
    std::ostringstream n;
    n << "cuDNN " << cudnn::version_string(cudnn::load().version) << " fused SDPA "
      << (backward ? "backward" : "forward") << (shape.causal ? " causal" : "") << " (backend graph";
    if (!m_lowering.empty()) n << ", " << m_lowering << " lowering";
    n << ", engine " << m_plan.engine_index << ", fastest of " << m_timed << " of " << planned << " plans)";
    m_name = n.str();
  }

  cudnn_handle m_handle;
  std::unique_ptr<cudnn::graph> m_graph;
  cudnn::attention_graph_io m_io;
  cudnn::plan m_plan;
  std::shared_ptr<cudnn::descriptor> m_variant_pack;
  device_buffer m_workspace;
  device_buffer m_softmax_sum;
  device_buffer m_dq_accum;
  std::string m_lowering;
  std::string m_name;
  int m_timed = 0;
  // Built by the constructor, timed by choose().
  std::vector<cudnn::plan> m_plans;
  std::vector<int64_t> m_uids;
  std::vector<void*> m_pointers;
  bool m_backward = false;
  cudnn::attention_shape m_shape;
};

}  // namespace

std::unique_ptr<baseline> make_attention_baseline(const task& t, const size_point& s, const baseline_buffers& b,
                                                  CUstream) {
  const std::string what = t.family == "attention_bwd" ? "cuDNN SDPA backward" : "cuDNN SDPA forward";
  if (t.family != "attention_fwd" && t.family != "attention_bwd")
    return baselines_detail::make_unavailable(what, "task family '" + t.family + "' is not attention");
  const cudnn::api& api = cudnn::load();
  if (!api.loaded) return baselines_detail::make_unavailable(what, api.error);
  try {
    return std::make_unique<attention_baseline>(t, s, b);
  } catch (const std::exception& e) {
    return baselines_detail::make_unavailable(what + " " + cudnn::version_string(api.version), e.what());
  }
}

}  // namespace ptxbench
