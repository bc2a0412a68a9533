// No hidden size appears in any prompt, feedback, stored result, export,
// report or viewer page (docs/task-suite.md, "Hidden-size feedback"). An
// experiment runs with an evaluator that judges like the real one a kernel
// specialised to the shown sizes: wrong at a hidden size, with the messages
// the worker writes at the source (labels, the where-summary in shares, the
// headline) plus, as a careless message would, the hidden size's numbers in a
// note, a counted size and the timeline, then the redaction the evaluator
// applies last. Every text produced from it is searched for the numbers.
#include <doctest/doctest.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>
#include <sstream>

#include "agent/data/export.hpp"
#include "agent/data/metrics.hpp"
#include "agent/data/report.hpp"
#include "agent/endpoint/embedded_endpoint.hpp"
#include "agent/loop/orchestrator.hpp"
#include "agent/viewer/pages.hpp"
#include "evaluator/common/files.hpp"
#include "evaluator/api/hidden_sizes.hpp"
#include "evaluator/gpu/where_summary.hpp"
#include "fixture_db.hpp"

using namespace ptxbench;

namespace {

// The hidden size of `t` with the most distinctive numbers.
const size_point& chosen_hidden(const task& t) {
  const auto distinctive = distinctive_hidden_values(t);
  const size_point* best = nullptr;
  int best_count = -1;
  for (const auto& s : t.sizes) {
    if (!s.hidden) continue;
    int count = 0;
    for (const auto& [k, v] : s.values) count += std::count(distinctive.begin(), distinctive.end(), v) > 0;
    if (count > best_count) best = &s, best_count = count;
  }
  return *best;
}

// A failure at hidden size `h` as the worker writes it (the last column tile wrong).
output_check failing_check(const task& t, const size_point& h, const std::string& tensor) {
  gpu::bad_element_map m;
  m.tensor = tensor;
  m.relative = true;
  m.rows = 300;
  m.cols = 200;
  m.row_bad.assign(300, 0);
  m.col_bad.assign(200, 0);
  m.tile_bad.assign(6, 0);
  for (int64_t r = 0; r < 300; ++r)
    for (int64_t c = 130; c < 200; ++c) {
      ++m.bad, ++m.row_bad[size_t(r)], ++m.col_bad[size_t(c)], ++m.tile_bad[size_t((r / 128) * 2 + 1)];
      if (m.first_bad < 0) m.first_bad = r * 200 + c;
    }
  m.first_got = 0.25;
  m.first_expected = 1.5;
  output_check c;
  c.tensor = tensor;
  c.size = size_label(t, h);
  c.hidden_size = true;
  c.seed = 1;
  c.mismatch_fraction = 0.35;
  c.max_abs_error = 0.8;
  c.rel_l2_error = 0.3;
  c.where = gpu::summarize_bad_elements(m);
  return c;
}

class specialised_kernel_evaluator : public evaluator {
 public:
  evaluation_result evaluate(const evaluation_request& req) override {
    const task& t = req.t;
    evaluation_result r;
    r.evaluator_version = "hidden-1";
    r.gpu = "test GPU";
    for (int s = 0; s < stage_count; ++s) r.stages[stage(s)] = {stage_status::passed, "", 1.0};
    const std::string out = t.tensors.back().name;
    for (const auto& s : t.public_sizes()) {
      output_check ok;
      ok.tensor = out;
      ok.size = size_label(t, s);
      ok.passed = true;
      r.correctness.outputs.push_back(ok);
    }
    if (req.ptx.find("verdict: passed") == std::string::npos) {
      const size_point& h = chosen_hidden(t);
      const std::string raw = describe_size(h);
      r.correctness.outputs.push_back(failing_check(t, h, out));
      // Messages that quote the numbers, as a careless one would.
      r.correctness.note = "launch 0 (k) at size " + raw + ": grid of " + std::to_string(h.values.begin()->second);
      instruction_check ic;
      ic.ptx = t.target_instructions.front();
      ic.sizes.push_back({raw, 7, 1.2, -1, -1, true});
      r.instructions.checks.push_back(ic);
      r.instructions.counting.push_back({raw, 0, 3.0, 2.0, {}});
      r.timeline.push_back({"main: checking outputs at size " + raw, 4.0});
      r.stages[stage::correctness] = {stage_status::failed, gpu::correctness_headline(r.correctness), 1.0};
      r.stages[stage::performance] = {stage_status::not_run, "not reached: correctness failed", 0.0};
      r.verdict = stage::correctness;
      r.headline = "correctness: " + r.stages[stage::correctness].reason;
    } else {
      r.passed = true;
      performance_report p;
      p.size = size_label(t, t.timed_size());
      p.speedup = p.baseline_ms = 1.1;
      p.candidate_ms = 1.0;
      r.performance = p;
    }
    redact_hidden_sizes(r, t);  // what the evaluator does last
    return r;
  }
  std::string version() const override { return "hidden-1"; }
  std::string gpu_description() const override { return "test GPU"; }
};

std::string reply(const std::string& verdict) {
  return "```ptx\n// verdict: " + verdict + "\n.version 8.7\n.target sm_90a\n.entry k() { ret; }\n```\n"
         "```json\n{\"launches\": [{\"kernel\": \"k\", \"grid\": [1], \"block\": [32], \"params\": []}]}\n```\n";
}

// The whole-number tokens of `text`.
std::set<int64_t> numbers_in(const std::string& text) {
  std::set<int64_t> out;
  for (size_t i = 0; i < text.size();) {
    size_t j = i;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
    if (j > i && j - i <= 18) out.insert(std::stoll(text.substr(i, j - i)));
    i = j > i ? j : i + 1;
  }
  return out;
}

// Numbers that say nothing of a hidden size: those of the prompt templates
// (the model's instructions, the same for every task) and of the shown sizes
// and statements of `tasks` (a text about several tasks names their figures).
std::set<int64_t> common_numbers(const std::vector<task>& tasks) {
  std::set<int64_t> out;
  for (const auto& e : std::filesystem::directory_iterator(std::string(PTXBENCH_SOURCE_DIR) + "/prompts"))
    out.merge(numbers_in(read_text_file(e.path())));
  for (const auto& t : tasks) {
    out.merge(numbers_in(t.statement + " " + t.notes + " " + t.title + " " + t.constraints));
    for (const auto& s : t.public_sizes())
      for (const auto& [k, v] : s.values) out.insert(v);
  }
  return out;
}

bool whole_token_at(const std::string& text, size_t at, size_t n) {
  return (at == 0 || !std::isalnum(static_cast<unsigned char>(text[at - 1]))) &&
         (at + n == text.size() || !std::isdigit(static_cast<unsigned char>(text[at + n])));
}

// Every way `text` could give away a hidden size of `t`: its describe_size
// text, a "NAME=value" of a value no shown size has, or one of its
// distinctive numbers (distinctive_hidden_values, less `common`) alone. A
// report's figures and plot coordinates are numbers of their own:
// `bare_numbers` false checks only the first two.
void check_no_hidden_size(const task& t, const std::string& where, const std::string& text,
                          const std::set<int64_t>& common, bool bare_numbers = true) {
  CAPTURE(t.id);
  CAPTURE(where);
  auto absent = [&](const std::string& token) {
    for (size_t at = text.find(token); at != std::string::npos; at = text.find(token, at + 1))
      if (whole_token_at(text, at, token.size()))
        FAIL_CHECK("hidden-size text '" << token << "' near: " << text.substr(at < 60 ? 0 : at - 60, 140));
  };
  for (const auto& s : t.sizes) {
    if (!s.hidden) continue;
    absent(describe_size(s));
    for (const auto& [name, v] : s.values) {
      bool shown = false;
      for (const auto& p : t.public_sizes()) shown = shown || p.values.at(name) == v;
      if (!shown) absent(name + "=" + std::to_string(v));
    }
  }
  if (bare_numbers)
    for (int64_t v : distinctive_hidden_values(t))
      if (!common.count(v)) absent(std::to_string(v));
}

}  // namespace

TEST_CASE("no prompt of any task shows a hidden size") {
  prompt_library prompts(std::string(PTXBENCH_SOURCE_DIR) + "/prompts");
  for (const auto& t : load_task_dir(std::string(PTXBENCH_SOURCE_DIR) + "/tasks"))
    check_no_hidden_size(t, "prompt", prompts.system_prompt(t) + prompts.task_prompt(t), common_numbers({t}));
}

TEST_CASE("a failure at a hidden size reaches feedback - results - exports - reports and the viewer without its numbers") {
  const auto dir = testing::fresh_dir("hidden");
  std::vector<task> tasks;
  for (const auto& t : load_task_dir(std::string(PTXBENCH_SOURCE_DIR) + "/tasks"))
    if (t.id == "gemm_bf16_general" || t.id == "gemm_bf16_grouped" || t.id == "attention_fwd_bf16_varlen_causal" ||
        t.id == "attention_decode_bf16_gqa8" || t.id == "attention_bwd_bf16_gqa4")
      tasks.push_back(t);
  REQUIRE(tasks.size() == 5);
  auto store = run_store::open(dir / "run.db");
  prompt_library prompts(std::string(PTXBENCH_SOURCE_DIR) + "/prompts");
  experiment_config config;
  config.name = "hidden";
  config.samples = 2;
  config.rounds = 2;
  config.llm.kind = provider_kind::openai;
  config.llm.model = "scripted";
  config.llm.max_retries = 0;
  endpoint_script script;
  script.tasks["*"] = {{{reply("correctness")}}, {{reply("passed")}}};
  embedded_endpoint ep(script);
  provider_config pc = config.llm;
  pc.base_url = ep.base_url();
  auto llm = make_http_provider(pc);
  specialised_kernel_evaluator eval;
  terminal_progress progress{stderr, false, true};
  orchestrator(config, tasks, *llm, eval, *store, prompts, progress).run(false);

  std::map<std::string, std::string> text_of_task;  // every text that names the task's trajectories
  auto exp = store->find_experiment("hidden");
  REQUIRE(exp);
  int hidden_feedback = 0;
  for (const auto& tr : store->trajectories(exp->id)) {
    auto turns = store->turns(tr.id);
    std::string& text = text_of_task[tr.task_id];
    text += viewer::trajectory_page(*exp, tr, turns);
    for (const auto& tv : turns) {
      text += tv.turn.messages.dump() + tv.turn.feedback;
      if (tv.evaluation) text += tv.evaluation->result.dump() + viewer::evaluation_section(*tv.evaluation);
      if (tv.turn.feedback.find("at a hidden size where") != std::string::npos) ++hidden_feedback;
    }
  }
  CHECK(hidden_feedback == 10);  // round 1 of every trajectory: the property that failed

  // Exports: each record goes with its task.
  for (auto kind : {data::export_kind::correction, data::export_kind::sft, data::export_kind::preference}) {
    data::export_options o;
    o.kind = kind;
    o.keep_duplicates = true;
    if (kind == data::export_kind::correction) o.history = data::export_history::full;
    for (const auto& record : data::build_export(*store, o).records)
      text_of_task[record.body.at("provenance").at("task").get<std::string>()] += record.body.dump();
  }
  CHECK(text_of_task["gemm_bf16_general"].find("\"completion\"") != std::string::npos);
  // Reports: one text over every task (they aggregate verdicts and figures; no message reaches them).
  auto experiments = data::load_experiments(*store, {});
  auto groups = data::compute_metrics(experiments);
  auto curves = data::compute_calls_curves(experiments);
  const std::string reports = data::format_report_text(groups, curves) +
                              data::render_report_json(groups, {*exp}, "run.db", curves).dump() +
                              data::render_report_html(groups, {*exp}, "run.db", curves);
  for (const auto& t : tasks) {
    check_no_hidden_size(t, "prompts, feedback, stored results, exports, viewer", text_of_task[t.id],
                         common_numbers({t}));
    check_no_hidden_size(t, "reports", reports, common_numbers(tasks), false);
  }
  std::filesystem::remove_all(dir);
}
