// Dispatch on task.baseline, and the "not available" baseline.
#include <stdexcept>
#include <utility>

#include "evaluator/baselines/baselines.hpp"
#include "evaluator/baselines/internal.hpp"

namespace ptxbench {
namespace baselines_detail {
namespace {

class unavailable_baseline final : public baseline {
 public:
  unavailable_baseline(std::string name, std::string why) : m_name(std::move(name)), m_why(std::move(why)) {}
  bool available() const override { return false; }
  std::string why_not() const override { return m_why; }
  std::string name() const override { return m_name; }
  void run(CUstream) override { throw std::logic_error("baseline '" + m_name + "' is not available: " + m_why); }

 private:
  std::string m_name;
  std::string m_why;
};

}  // namespace

std::unique_ptr<baseline> make_unavailable(std::string name, std::string why_not) {
  return std::make_unique<unavailable_baseline>(std::move(name), std::move(why_not));
}

CUdeviceptr require_buffer(const baseline_buffers& b, const std::string& tensor) {
  auto it = b.tensors.find(tensor);
  if (it == b.tensors.end() || it->second == 0)
    throw std::invalid_argument("no device buffer bound to tensor '" + tensor + "'");
  return it->second;
}

int64_t require_size(const size_point& s, const std::string& name) {
  auto it = s.values.find(name);
  if (it == s.values.end()) throw std::invalid_argument("size '" + name + "' missing from the size point");
  return it->second;
}

}  // namespace baselines_detail

std::unique_ptr<baseline> make_baseline(const task& t, const size_point& s, const baseline_buffers& b,
                                        CUstream stream, baseline_choice when) {
  std::unique_ptr<baseline> made;
  if (t.baseline == "cublaslt")
    made = make_gemm_baseline(t, s, b, stream);
  else if (t.baseline == "cudnn_sdpa_fwd" || t.baseline == "cudnn_sdpa_bwd")
    made = make_attention_baseline(t, s, b, stream);
  else if (t.baseline == "roofline")
    return baselines_detail::make_unavailable(
        "roofline floor", "no library covers this variant: the speedup is against the roofline floor");
  else
    return baselines_detail::make_unavailable(t.baseline, "unknown baseline '" + t.baseline + "' in task " + t.id);
  if (when == baseline_choice::now && made && made->available()) {
    try {
      made->choose(stream);
    } catch (const std::exception& e) {
      return baselines_detail::make_unavailable(made->name().empty() ? t.baseline : made->name(), e.what());
    }
  }
  return made;
}

}  // namespace ptxbench
