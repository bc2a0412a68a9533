// ptxbench export: training data from a run database as JSONL, with a coverage
// table of task family x failing stage (agent/data/export.hpp says what each
// kind of record holds).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>
#include <sstream>

#include "agent/cli/commands.hpp"
#include "agent/cli/output_file.hpp"
#include "agent/data/export.hpp"
#include "evaluator/common/json_path.hpp"

namespace ptxbench::cli {
namespace {

data::export_options read_export_options(const option_values& values) {
  data::export_options o;
  o.kind = data::parse_export_kind(values.text("kind"));
  if (auto f = values.text_if("format")) {
    if (o.kind == data::export_kind::preference)
      throw input_error("--format applies to correction and sft; preference records are prompt/chosen/rejected");
    o.format = data::parse_export_format(*f);
  }
  if (auto h = values.text_if("export.history")) o.history = data::parse_export_history(*h);
  if (auto r = values.text_if("reasoning")) o.reasoning = data::parse_reasoning_mode(*r);
  o.experiments = values.list("experiment");
  o.filter.tasks = values.list("task");
  o.filter.families = values.list("family");
  for (int64_t level : values.integers("level")) o.filter.levels.push_back(static_cast<int>(level));
  if (auto axes = values.list("balance-by"); !axes.empty()) o.balance_by = axes;
  o.filter.models = values.list("export.model");
  if (auto s = values.text_if("failing-stage")) o.filter.failing_stage = data::parse_verdict_rank(*s);
  if (auto s = values.text_if("min-fix-stage")) o.filter.min_fix_stage = data::parse_verdict_rank(*s);
  if (auto x = values.number_if("min-speedup")) o.filter.min_speedup = *x;
  o.balance = values.flag("balance");
  o.keep_duplicates = values.flag("keep-duplicates");
  if (auto n = values.integer_if("per-cell")) {
    o.per_cell = static_cast<int>(*n);
    o.balance = true;
  }
  if (auto t = values.text_if("tokenizer")) o.tokenizer = data::load_tokenizer(*t);
  if (auto m = values.integer_if("max-tokens")) o.max_tokens = static_cast<int>(*m);
  if (auto over = values.text_if("over-max")) {
    if (!o.max_tokens) throw input_error("--over-max applies with --max-tokens");
    o.flag_over_max = *over == "flag";
  }
  if (auto l = values.text_if("license")) o.license = *l;
  if (auto s = values.text_if("suite")) {
    if (o.kind != data::export_kind::prompts) throw input_error("--suite applies to --kind prompts");
    o.suite = *s;
  }
  return o;
}

// --kind prompts reads tasks, not a run database: the options about runs do not apply.
void refuse_run_options(const option_values& values) {
  for (const char* id : {"db", "format", "export.history", "experiment", "task", "export.model", "failing-stage",
                         "min-fix-stage", "min-speedup", "balance", "per-cell", "balance-by", "keep-duplicates",
                         "level", "family"}) {
    if (values.has(id)) throw input_error(values.given(id)->source + " does not apply to --kind prompts");
  }
}

bool is_jsonl_path(const std::string& out) {
  auto ext = std::filesystem::path(out).extension().string();
  return ext == ".jsonl" || ext == ".json";
}

// The records the options select: from a run database, or (--kind prompts) from the tasks.
data::export_result build_records(const option_values& values, data::export_options& options,
                                  data::card_source& source) {
  if (options.kind == data::export_kind::prompts) {
    refuse_run_options(values);
    const std::string tasks_dir = values.text("tasks-dir");
    source.database = tasks_dir;
    return data::build_prompts_export(load_task_dir(tasks_dir), values.text("prompts-dir"), options);
  }
  const auto db = values.text_if("db");
  if (!db) throw input_error("--db is required (or PTXBENCH_DB): the run database to export from");
  if (!std::filesystem::exists(*db)) throw input_error("no run database at " + *db);
  std::string warning;
  // The tasks' levels and variants, from --tasks-dir or ./tasks when present.
  options.catalogue = data::load_catalogue(values.given_text("tasks-dir"), &warning);
  if (!warning.empty()) std::fprintf(stderr, "ptxbench: %s\n", warning.c_str());
  auto store = run_store::open(*db, true);
  source.database = *db;
  for (const auto& e : data::load_experiments(*store, options.experiments)) source.experiments.push_back(e.experiment);
  return data::build_export(*store, options);
}

int cmd_export(const option_values& values) {
  auto options = read_export_options(values);
  data::card_source source;
  const data::export_result result = build_records(values, options, source);
  const std::string out = values.text_if("out").value_or("-");
  // The table goes to stderr when the records go to stdout, so a pipe gets pure JSONL.
  std::FILE* table = out == "-" ? stderr : stdout;
  std::fprintf(table, "%s records from %s\n%s%s", data::to_string(options.kind), source.database.c_str(),
               data::format_coverage(result, options).c_str(), data::format_lengths(result, false).c_str());
  if (result.duplicates_dropped > 0)
    std::fprintf(table, "%d near-duplicate records dropped (--keep-duplicates keeps them)\n", result.duplicates_dropped);
  if (result.records.empty()) {
    // An empty file would load as a dataset error far from its cause.
    std::fprintf(stderr, "ptxbench: no %s records matched; nothing written\n", data::to_string(options.kind));
    return exit_code::failures;
  }
  if (out == "-") {
    data::write_jsonl(std::cout, result.records);
    if (!std::cout.flush()) throw std::runtime_error("cannot write the records to stdout");
  } else if (is_jsonl_path(out)) {
    std::ostringstream jsonl;
    data::write_jsonl(jsonl, result.records);
    write_file_atomically(out, jsonl.str());
    std::fprintf(table, "wrote %s\n", out.c_str());
  } else {
    data::write_export_dir(out, result, options, source);
    std::fprintf(table, "wrote %s/data/train.jsonl and the dataset card %s/README.md\n", out.c_str(), out.c_str());
  }
  return exit_code::ok;
}

}  // namespace

const command_spec& export_command() {
  static const command_spec spec{
      "export", cmd_export, "write training data (correction, sft, preference, prompts) as JSONL",
      "Write training data from a run database as JSONL in conversational formats "
      "(TRL, LLaMA-Factory, axolotl).\n"
      "  correction: system + task + failed attempt + the feedback it got -> the reply that "
      "got further, in the next round\n"
      "  sft:        system + task -> the trajectory's last answer reaching --min-fix-stage "
      "(default passed)\n"
      "  preference: identical prompt; chosen = later stage, then higher speedup\n"
      "  prompts:    the round-0 prompt of every task of --suite (no --db), with task_id, family, "
      "level, variant, for TRL's GRPOTrainer\n"
      "Every record has a \"provenance\" object. Prints the coverage table (family x failing "
      "stage, or the --balance-by axes) and the records' lengths (bytes; tokens with --tokenizer).\n"
      "Stages: format compile runtime correctness instructions performance passed; "
      "'reached S' means it passed every stage before S.\n"
      "Exits 1 without writing anything when no record matched.",
      {"db", "kind", "out", "format", "export.history", "reasoning", "experiment", "task", "family", "level",
       "export.model", "failing-stage", "min-fix-stage", "min-speedup", "balance", "per-cell", "balance-by",
       "tasks-dir", "prompts-dir", "suite", "tokenizer", "max-tokens", "over-max", "license", "keep-duplicates"}};
  return spec;
}

}  // namespace ptxbench::cli
