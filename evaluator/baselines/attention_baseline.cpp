// Attention baselines: cuDNN's fused flash attention, forward and backward,
// through the backend graph API (see attention_graphs.hpp for the graphs).
// Setup builds the graph and asks cuDNN's heuristics for plans; choose()
// times up to four on the real buffers and keeps the fastest.
#include <cmath>
#include <limits>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "evaluator/api/index_inputs.hpp"
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

double scalar_or(const std::map<std::string, double>& scalars, const char* name, double fallback) {
  auto it = scalars.find(name);
  return it == scalars.end() ? fallback : it->second;
}

// The task's variant as cuDNN's attention shape (docs/task-suite.md, "attention_fwd").
cudnn::attention_shape shape_of(const task& t, const size_point& s) {
  cudnn::attention_shape a;
  a.b = baselines_detail::require_size(s, "B");
  a.h = baselines_detail::require_size(s, "H");
  a.hkv = s.values.count("HKV") ? s.values.at("HKV") : a.h;
  a.d = baselines_detail::require_size(s, "D");
  const int64_t len = baselines_detail::require_size(s, "S");
  a.s_q = t.op.decode ? 1 : len;
  a.s_kv = len;
  a.causal = t.causal;
  a.ragged = t.op.varlen;
  if (a.ragged)
    for (int64_t l : varlen_lengths(a.b, len)) a.lengths.push_back(static_cast<int32_t>(l));
  const auto scalars = scalar_values(t, s);
  a.scale = static_cast<float>(scalar_or(scalars, "scale", 1.0 / std::sqrt(static_cast<double>(a.d))));
  a.fp8 = t.op.fp8;
  a.descale_q = static_cast<float>(scalar_or(scalars, "scale_q", 1.0));
  a.descale_k = static_cast<float>(scalar_or(scalars, "scale_k", 1.0));
  a.descale_v = static_cast<float>(scalar_or(scalars, "scale_v", 1.0));
  if (a.h % a.hkv != 0) throw std::invalid_argument("H is not a multiple of HKV");
  return a;
}

class attention_baseline final : public baseline {
 public:
  attention_baseline(const task& t, const size_point& s, const baseline_buffers& b)
      : m_backward(t.family == "attention_bwd"), m_shape(shape_of(t, s)) {
    std::string rejected;
    std::vector<cudnn::plan> plans;
    if (!m_backward) {
      // Varlen: LSE in the task's [H, T] layout if cuDNN takes it, else a private buffer.
      for (bool ragged_stats : {true, false}) {
        if (!ragged_stats && !m_shape.ragged) break;
        m_shape.ragged_stats = ragged_stats;
        plans = try_graph(rejected, [&](cudnn::graph& g) { return cudnn::build_forward_graph(g, m_shape); },
                          m_shape.ragged ? (ragged_stats ? "LSE as [H,T]" : "LSE padded") : "");
        if (!plans.empty()) break;
      }
    } else {
      for (auto lowering : {cudnn::backward_lowering::current, cudnn::backward_lowering::legacy}) {
        plans = try_graph(rejected, [&](cudnn::graph& g) { return cudnn::build_backward_graph(g, m_shape, lowering); },
                          cudnn::to_string(lowering));
        if (!plans.empty()) {
          m_lowering = cudnn::to_string(lowering);
          break;
        }
      }
    }
    if (plans.empty()) throw cudnn::error("cuDNN offered no working plan for this attention graph: " + rejected);
    int64_t workspace = 0;
    for (const auto& p : plans) workspace = std::max(workspace, p.workspace_bytes);
    m_workspace = device_buffer(static_cast<size_t>(workspace));
    for (const auto& o : m_io.owned) m_owned.push_back(make_owned(o));
    m_plans = std::move(plans);
    bind_pointers(b);
  }

  bool bind(const baseline_buffers& b) override {
    bind_pointers(b);
    if (m_variant_pack)
      m_variant_pack = std::make_shared<cudnn::descriptor>(cudnn::make_variant_pack(m_uids, m_pointers, m_workspace.ptr()));
    return true;
  }

  void choose(CUstream stream) override {
    choose_plan(stream);
    describe(static_cast<int>(m_plans.size()));
  }

  bool available() const override { return true; }
  std::string why_not() const override { return {}; }
  std::string name() const override { return m_name; }

  std::optional<dtype> output_type(const std::string& tensor, dtype task_type) const override {
    if (tensor == "LSE" && !m_io.lse_in_task_layout) return std::nullopt;
    if (tensor == "O" && m_shape.fp8) return dtype::fp8_e4m3;
    return task_type;
  }

  void run(CUstream stream) override {
    if (!m_variant_pack) throw std::logic_error("cuDNN baseline run before its plan was chosen");
    execute(*m_plan.execution_plan, *m_variant_pack, stream);
  }

 private:
  template <typename build_fn>
  std::vector<cudnn::plan> try_graph(std::string& rejected, build_fn build, const std::string& label) {
    try {
      m_graph = std::make_unique<cudnn::graph>();
      m_io = build(*m_graph);
      m_graph->finalize(m_handle.get());
      return cudnn::make_plans(m_handle.get(), *m_graph, max_plans, rejected);
    } catch (const cudnn::error& e) {
      rejected += (rejected.empty() ? "" : "; ") + (label.empty() ? "" : label + ": ") + e.what();
    }
    return {};
  }

  struct owned_buffer {
    int64_t uid = -1;
    device_buffer memory;
    bool zero_each_run = false;
  };

  static owned_buffer make_owned(const cudnn::owned_tensor& o) {
    owned_buffer b{o.uid, device_buffer(std::max<size_t>(o.bytes, 16)), o.zero_each_run};
    const void* host = !o.i32.empty() ? static_cast<const void*>(o.i32.data())
                                      : !o.f32.empty() ? static_cast<const void*>(o.f32.data()) : nullptr;
    if (host) check_cu(cuMemcpyHtoD(b.memory.get(), host, o.bytes), "cuMemcpyHtoD (cuDNN attention constants)");
    return b;
  }

  void bind_pointers(const baseline_buffers& b) {
    m_uids.clear();
    m_pointers.clear();
    for (const auto& [tensor, uid] : m_io.uids) {
      m_uids.push_back(uid);
      m_pointers.push_back(reinterpret_cast<void*>(baselines_detail::require_buffer(b, tensor)));
    }
    for (const auto& [uid, host] : m_graph->scalar_pointers()) {
      m_uids.push_back(uid);
      m_pointers.push_back(host);
    }
    for (const auto& o : m_owned) {
      m_uids.push_back(o.uid);
      m_pointers.push_back(o.memory.ptr());
    }
  }

  void execute(const cudnn::descriptor& plan, const cudnn::descriptor& pack, CUstream stream) {
    for (const auto& o : m_owned)
      if (o.zero_each_run)
        check_cu(cuMemsetD32Async(o.memory.get(), 0, o.memory.bytes() / 4, stream), "cuMemsetD32Async");
    cudnn::check(cudnn::load().set_stream(m_handle.get(), reinterpret_cast<cudaStream_t>(stream)), "cudnnSetStream");
    cudnn::check(cudnn::load().backend_execute(m_handle.get(), plan.get(), pack.get()), "cudnnBackendExecute");
  }

  void choose_plan(CUstream stream) {
    double best_ms = std::numeric_limits<double>::infinity();
    std::string failures;
    m_timed = 0;
    for (auto& p : m_plans) {
      try {
        auto pack =
            std::make_shared<cudnn::descriptor>(cudnn::make_variant_pack(m_uids, m_pointers, m_workspace.ptr()));
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

  void describe(int planned) {
    const cudnn::attention_shape& a = m_shape;
    std::ostringstream n;
    n << "cuDNN " << cudnn::version_string(cudnn::load().version) << " fused SDPA "
      << (m_backward ? "backward" : "forward") << (a.fp8 ? " fp8 (e4m3 O)" : "") << (a.causal ? " causal" : "")
      << (a.hkv != a.h ? " GQA " + std::to_string(a.h / a.hkv) + ":1" : "") << (a.ragged ? " ragged" : "")
      << (a.s_q == 1 && a.s_kv > 1 ? " decode" : "") << " (backend graph";
    if (!m_lowering.empty()) n << ", " << m_lowering << " lowering";
    if (!m_io.lse_in_task_layout) n << ", LSE in a private padded buffer";
    n << ", engine " << m_plan.engine_index << ", fastest of " << m_timed << " of " << planned << " plans)";
    m_name = n.str();
  }

  bool m_backward = false;
  cudnn::attention_shape m_shape;
  cudnn_handle m_handle;
  std::unique_ptr<cudnn::graph> m_graph;
  cudnn::attention_graph_io m_io;
  std::vector<owned_buffer> m_owned;
  cudnn::plan m_plan;
  std::shared_ptr<cudnn::descriptor> m_variant_pack;
  device_buffer m_workspace;
  std::string m_lowering;
  std::string m_name;
  int m_timed = 0;
  // Built by the constructor, timed by choose().
  std::vector<cudnn::plan> m_plans;
  std::vector<int64_t> m_uids;
  std::vector<void*> m_pointers;
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
