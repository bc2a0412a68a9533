// `export --kind prompts`: the round-0 prompt of every task of a suite, as the
// dataset of an RL trainer (TRL's GRPOTrainer) that samples completions itself
// and scores them through evald (examples/reward_trl.py). Hidden sizes never
// appear: the task prompt shows public sizes only.
#include <algorithm>

#include "agent/data/export.hpp"
#include "agent/data/export_lengths.hpp"
#include "agent/data/export_messages.hpp"
#include "agent/prompt/prompt.hpp"
#include "evaluator/common/json_path.hpp"

namespace ptxbench::data {
namespace {

// Every task is in "full" (docs/task-suite.md); other suites list their tasks.
bool in_suite(const task& t, const std::string& suite) {
  return suite == "full" || std::find(t.suites.begin(), t.suites.end(), suite) != t.suites.end();
}

}  // namespace

export_result build_prompts_export(const std::vector<task>& tasks, const std::filesystem::path& prompts_dir,
                                   const export_options& options) {
  check_length_options(options);
  const prompt_library prompts(prompts_dir);
  export_result result;
  for (const auto& t : tasks) {
    if (!in_suite(t, options.suite)) continue;
    export_record r;
    const auto mode = options.reasoning;
    r.body = {{"prompt", nlohmann::json::array({plain_message("system", prompts.system_prompt(t), mode),
                                                plain_message("user", prompts.task_prompt(t), mode)})},
              {"task_id", t.id},
              {"family", t.family},
              {"level", t.level},
              {"variant", variant_json(t.variant)},
              {"suite", options.suite}};
    r.family = t.family;
    r.task = t.id;
    r.level = t.level;
    r.variant = variant_json(t.variant);
    r.failing_stage = level_label(t.level);  // the coverage columns: levels
    r.selection_key = t.id;
    result.records.push_back(std::move(r));
  }
  if (result.records.empty()) throw input_error("no task is in suite '" + options.suite + "'");
  apply_length_limit(result, options);
  for (auto& r : result.records) r.cell = r.family;
  result.coverage = count_cells(result.records);
  result.kept = result.coverage;
  return result;
}

}  // namespace ptxbench::data
