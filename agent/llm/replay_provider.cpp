// Answers from recorded replies, for re-running a conversation without a model.
#include "agent/llm/provider.hpp"

namespace ptxbench {

namespace {
class replay_provider final : public provider {
 public:
  replay_provider(reply_lookup lookup, std::string description)
      : m_lookup(std::move(lookup)), m_description(std::move(description)) {}

  completion_outcome complete(const completion_request& request) override {
    completion_outcome out;
    const turn_key& k = request.key;
    if (auto reply = m_lookup(k)) {
      out.ok = true;
      out.result = std::move(*reply);
      return out;
    }
    out.error = "no recorded reply for task " + k.task_id + " sample " + std::to_string(k.sample) +
                " round " + std::to_string(k.round);
    return out;
  }

  std::string describe() const override { return m_description; }

 private:
  const reply_lookup m_lookup;  // called from many threads at once; must be thread-safe
  const std::string m_description;
};
}  // namespace

std::unique_ptr<provider> make_replay_provider(reply_lookup lookup, std::string description) {
  return std::make_unique<replay_provider>(std::move(lookup), std::move(description));
}

}  // namespace ptxbench
