// The context budget: old PTX elided, old attempts dropped, the task and the
// last attempt with its feedback always kept, and a context-length error from
// the server retried once with a shorter history instead of ending the trajectory.
#include <doctest/doctest.h>

#include <filesystem>

#include "agent/loop/context_budget.hpp"
#include "agent/loop/orchestrator.hpp"
#include "fake_evaluator.hpp"

using namespace ptxbench;

namespace {

std::string big_reply(int round, size_t ptx_lines) {
  std::string ptx;
  for (size_t i = 0; i < ptx_lines; ++i) ptx += "  mov.u32 %r" + std::to_string(i % 97) + ", 0;\n";
  return "Attempt " + std::to_string(round) + "\n```ptx\n// verdict: compile\n.version 8.7\n.target sm_90a\n" + ptx +
         "```\n```json\n{\"launches\": []}\n```\n";
}

std::vector<chat_message> conversation(int attempts, size_t ptx_lines) {
  std::vector<chat_message> m{{"system", "SYSTEM"}, {"user", "TASK"}};
  for (int r = 0; r < attempts; ++r) {
    m.push_back({"assistant", big_reply(r, ptx_lines)});
    m.push_back({"user", "FEEDBACK " + std::to_string(r)});
  }
  return m;
}

// A server with a context of `limit` estimated tokens: longer prompts get vLLM's HTTP 400.
class small_context_llm : public provider {
 public:
  explicit small_context_llm(int limit) : m_limit(limit) {}
  completion_outcome complete(const completion_request& request) override {
    completion_outcome out;
    ++calls;
    if (estimate_tokens(request.messages) > m_limit) {
      ++refused;
      out.failures.push_back({1, 400, "HTTP 400: This model's maximum context length is 32768 tokens. However, you "
                                      "requested 41000 tokens",
                              1.0});
      out.error = out.failures.back().cause;
      return out;
    }
    out.ok = true;
    out.result.text = big_reply(request.key.round, 3000);
    out.result.model = "small";
    return out;
  }
  std::string describe() const override { return "small context"; }
  int calls = 0;
  int refused = 0;

 private:
  int m_limit;
};

}  // namespace

TEST_CASE("fit_context elides older PTX first and then drops older attempts but keeps the task and the last attempt") {
  auto m = conversation(3, 2000);
  const int full = estimate_tokens(m);
  // Room for the last attempt whole and the older two without their PTX.
  auto fitted = fit_context(m, full / 3 + 200);
  REQUIRE(fitted.size() == m.size());
  CHECK(fitted[2].content.find("[PTX elided to fit the context: ") != std::string::npos);
  CHECK(fitted[2].content.find("mov.u32") == std::string::npos);
  CHECK(fitted[4].content.find("[PTX elided") != std::string::npos);
  CHECK(fitted.back().content == "FEEDBACK 2");
  CHECK(fitted[6].content == m[6].content);  // the last attempt is never cut
  CHECK(estimate_tokens(fitted) <= full / 3 + 200);

  // Less room still: older pairs go, oldest first; system, task and the last pair stay.
  auto tight = fit_context(m, 10);
  REQUIRE(tight.size() == 4);
  CHECK(tight[0].content == "SYSTEM");
  CHECK(tight[1].content == "TASK");
  CHECK(tight[2].content == m[6].content);
  CHECK(tight[3].content == "FEEDBACK 2");
  CHECK(fit_context(m, full).size() == m.size());  // fits: unchanged
}

TEST_CASE("context-length errors are recognised in the wordings servers use") {
  completion_outcome o;
  o.failures.push_back({1, 400, "HTTP 400: This model's maximum context length is 32768 tokens", 1.0});
  CHECK(is_context_length_error(o));
  o.failures.back().cause = "HTTP 400: prompt is too long: 210000 tokens > 200000 maximum";
  CHECK(is_context_length_error(o));
  o.failures.back().cause = "HTTP 400: the request exceeds the available context size";
  CHECK(is_context_length_error(o));
  o.failures.back().cause = "HTTP 400: invalid temperature";
  CHECK_FALSE(is_context_length_error(o));
  o.failures.back() = {1, 500, "HTTP 500: maximum context length", 1.0};
  CHECK_FALSE(is_context_length_error(o));
}

TEST_CASE("a context-length error is retried once with a shorter history and the trajectory goes on") {
  auto dir = std::filesystem::temp_directory_path() / ("ptxbench_ctx_" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  auto store = run_store::open(dir / "run.db");
  std::vector<task> tasks;
  for (const auto& t : load_task_dir(std::string(PTXBENCH_SOURCE_DIR) + "/tasks"))
    if (t.id == "gemm_bf16_mma_sync") tasks.push_back(t);
  prompt_library prompts{std::string(PTXBENCH_SOURCE_DIR) + "/prompts"};
  terminal_progress progress{stderr, false, true};
  experiment_config config;
  config.name = "ctx";
  config.samples = 1;
  config.rounds = 4;
  config.stop = stop_policy::all_rounds;
  config.history = history_policy::all;
  config.llm.model = "small";
  // Room for the task and about two attempts of 3000 PTX lines (~22k estimated tokens each).
  small_context_llm llm(50000);
  test::fake_evaluator eval;
  orchestrator o(config, tasks, llm, eval, *store, prompts, progress);
  auto summary = o.run(false);
  CHECK(summary.completed == 1);
  CHECK(llm.refused >= 1);
  auto exp = store->find_experiment("ctx");
  REQUIRE(exp);
  auto turns = store->turns(store->trajectories(exp->id).at(0).id);
  REQUIRE(turns.size() == 4);  // every round ran: no trajectory ended by the server's 400
  // The prompt recorded is the one that was sent: it fits, and it still ends with the last feedback.
  const auto& last = turns.back().turn.messages;
  std::vector<chat_message> sent;
  for (const auto& m : last) sent.push_back({m["role"].get<std::string>(), m["content"].get<std::string>()});
  CHECK(estimate_tokens(sent) <= 50000);
  CHECK(sent[1].content == turns[0].turn.messages[1]["content"].get<std::string>());  // the task is kept
  CHECK(sent.back().role == "user");
  CHECK(store->llm_failures(exp->id).size() == static_cast<size_t>(llm.refused));
  std::filesystem::remove_all(dir);
}
