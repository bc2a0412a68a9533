// ptxbench export: training data from a run database as JSONL, with a coverage
// table of task family x failing stage (agent/data/export.hpp says what each
// kind of record holds).
#include <cstdio>
#include <fstream>
#include <iostream>
#include <limits>

#include "agent/cli/commands.hpp"
#include "agent/cli/options.hpp"
#include "agent/data/export.hpp"
#include "evaluator/api/json_path.hpp"

namespace ptxbench::cli {
namespace {

std::vector<std::string> list_option(const cxxopts::ParseResult& args, const std::string& name) {
  if (args.count(name)) return args[name].as<std::vector<std::string>>();
  if (auto v = option_or_env(args, name)) return {*v};
  return {};
}

data::export_options read_options(const cxxopts::ParseResult& args) {
  data::export_options o;
  o.kind = data::parse_export_kind(option_or_env(args, "kind").value_or("correction"));
  if (auto f = option_or_env(args, "format")) {
    if (o.kind == data::export_kind::preference) {
      throw input_error("--format applies to correction and sft; preference records are prompt/chosen/rejected");
    }
    o.format = data::parse_export_format(*f);
  }
  if (auto h = option_or_env(args, "history")) o.history = data::parse_export_history(*h);
  if (auto r = option_or_env(args, "reasoning")) o.reasoning = data::parse_reasoning_mode(*r);
  o.experiments = list_option(args, "experiment");
  o.filter.tasks = list_option(args, "task");
  o.filter.families = list_option(args, "family");
  for (const auto& level : list_option(args, "level")) o.filter.levels.push_back(int_option("level", level, 0, 100));
  if (auto axes = list_option(args, "balance-by"); !axes.empty()) o.balance_by = axes;
  o.filter.models = list_option(args, "model");
  if (auto s = option_or_env(args, "failing-stage")) o.filter.failing_stage = data::parse_verdict_rank(*s);
  if (auto s = option_or_env(args, "min-fix-stage")) o.filter.min_fix_stage = data::parse_verdict_rank(*s);
  if (auto s = option_or_env(args, "min-speedup")) {
    o.filter.min_speedup = number_option("min-speedup", *s);
  }
  o.balance = flag_or_env(args, "balance");
  o.keep_duplicates = flag_or_env(args, "keep-duplicates");
  if (auto s = option_or_env(args, "per-cell")) {
    o.per_cell = int_option("per-cell", *s, 0, std::numeric_limits<int>::max());
    o.balance = true;
  }
  if (auto t = option_or_env(args, "tokenizer")) o.tokenizer = data::load_tokenizer(*t);
  if (auto m = option_or_env(args, "max-tokens")) o.max_tokens = int_option("max-tokens", *m, 1, std::numeric_limits<int>::max());
  if (auto over = option_or_env(args, "over-max")) {
    if (*over != "drop" && *over != "flag") throw input_error("--over-max " + *over + ": expected drop or flag");
    if (!o.max_tokens) throw input_error("--over-max applies with --max-tokens");
    o.flag_over_max = *over == "flag";
  }
  if (auto l = option_or_env(args, "license")) o.license = *l;
  if (auto s = option_or_env(args, "suite")) {
    if (o.kind != data::export_kind::prompts) throw input_error("--suite applies to --kind prompts");
    o.suite = *s;
  }
  return o;
}

// --kind prompts reads tasks, not a run database: the options about runs do not apply.
void refuse_run_options(const cxxopts::ParseResult& args) {
  for (const char* name : {"db", "format", "history", "experiment", "task", "model", "failing-stage", "min-fix-stage",
                           "min-speedup", "balance", "per-cell", "balance-by", "keep-duplicates", "level", "family"}) {
    if (args.count(name)) throw input_error(std::string("--") + name + " does not apply to --kind prompts");
  }
}

bool is_jsonl_path(const std::string& out) {
  auto ext = std::filesystem::path(out).extension().string();
  return ext == ".jsonl" || ext == ".json";
}

}  // namespace

int cmd_export(int argc, char** argv) {
  cxxopts::Options opts(argv[0],
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
                        "stage, or the --balance-by axes) and the records' lengths (bytes; tokens with --tokenizer).\nStages: format compile runtime correctness instructions performance passed; "
                        "'reached S' means it passed every stage before S.\n"
                        "Exits 1 without writing anything when no record matched.");
  opts.add_options()
    ("db", "run database", cxxopts::value<std::string>())
    ("kind", "correction | sft | preference | prompts (default correction)", cxxopts::value<std::string>())
    ("o,out", "'-' for stdout (default), a FILE.jsonl, or a DIR: DIR/data/train.jsonl and a dataset card "
              "DIR/README.md for datasets.load_dataset(DIR)", cxxopts::value<std::string>())
    ("format", "correction and sft: prompt_completion (default; the failed attempt is never in the completion) "
               "| messages", cxxopts::value<std::string>())
    ("history", "correction prompts: last (the failed attempt and its feedback, default) | full (every earlier "
                "attempt and its feedback)", cxxopts::value<std::string>())
    ("reasoning", "the trained replies' reasoning: drop (default) | field (reasoning_content) | inline "
                  "(<think> block)", cxxopts::value<std::string>())
    ("experiment", "only these experiments (repeatable, comma-separated)", cxxopts::value<std::vector<std::string>>())
    ("task", "only these task ids", cxxopts::value<std::vector<std::string>>())
    ("family", "only these task families", cxxopts::value<std::vector<std::string>>())
    ("level", "only tasks of these levels (0: not given)", cxxopts::value<std::vector<std::string>>())
    ("model", "only replies of these models", cxxopts::value<std::vector<std::string>>())
    ("failing-stage", "only failed attempts (rejected answers) that failed at this stage", cxxopts::value<std::string>())
    ("min-fix-stage", "the fix (answer, chosen) reached at least this stage", cxxopts::value<std::string>())
    ("min-speedup", "the fix has a measured speedup >= this", cxxopts::value<std::string>())
    ("balance", "cap every family x failing-stage cell at the smallest non-empty cell")
    ("per-cell", "balance with this cap per cell instead", cxxopts::value<std::string>())
    ("balance-by", "the axes of a coverage cell besides the failing stage: family (default), level, variant, task "
                   "(repeatable, comma-separated)", cxxopts::value<std::vector<std::string>>())
    ("tasks-dir", "task files: each task's level and variant (default ./tasks when present); the tasks of "
                  "--kind prompts", cxxopts::value<std::string>())
    ("prompts-dir", "--kind prompts: the prompt templates (default prompts)", cxxopts::value<std::string>())
    ("suite", "--kind prompts: the suite whose tasks are written (default full: every task)",
     cxxopts::value<std::string>())
    ("tokenizer", "the model's tokenizer.json: count each record's tokens (byte-level BPE tokenizers: GPT-2, "
                  "Llama 3, Qwen 2 and the like)", cxxopts::value<std::string>())
    ("max-tokens", "leave out records whose trained sequence is longer than this many tokens (needs --tokenizer)",
     cxxopts::value<std::string>())
    ("over-max", "with --max-tokens: drop (default) | flag (keep them with provenance.over_max_tokens)",
     cxxopts::value<std::string>())
    ("license", "the dataset card's license field (default unknown: model outputs fall under the model's terms)",
     cxxopts::value<std::string>())
    ("keep-duplicates", "keep records whose candidates are near-duplicates of an earlier record's (default: dropped)");
  cxxopts::ParseResult args;
  int code = 0;
  if (!parse_or_help(opts, argc, argv, &args, &code)) return code;
  auto options = read_options(args);
  std::string warning;
  data::export_result result;
  data::card_source source;
  if (options.kind == data::export_kind::prompts) {
    refuse_run_options(args);
    const std::string tasks_dir = option_or_env(args, "tasks-dir").value_or("tasks");
    result = data::build_prompts_export(load_task_dir(tasks_dir),
                                        option_or_env(args, "prompts-dir").value_or("prompts"), options);
    source.database = tasks_dir;
  } else {
    auto db = option_or_env(args, "db");
    if (!db) throw input_error("--db is required");
    if (!std::filesystem::exists(*db)) throw input_error("no run database at " + *db);
    options.catalogue = data::load_catalogue(option_or_env(args, "tasks-dir"), &warning);
    auto store = run_store::open(*db, true);
    result = data::build_export(*store, options);
    source.database = *db;
    for (const auto& e : data::load_experiments(*store, options.experiments)) source.experiments.push_back(e.experiment);
  }
  std::string out = option_or_env(args, "out").value_or("-");
  // The table goes to stderr when the records go to stdout, so a pipe gets pure JSONL.
  std::FILE* table = out == "-" ? stderr : stdout;
  if (!warning.empty()) std::fprintf(stderr, "ptxbench: %s\n", warning.c_str());
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
    std::cout.flush();
  } else if (is_jsonl_path(out)) {
    std::ofstream file(out, std::ios::binary);
    if (!file) throw std::runtime_error("cannot write " + out);
    data::write_jsonl(file, result.records);
    if (!file.flush()) throw std::runtime_error("error writing " + out);
    std::fprintf(table, "wrote %s\n", out.c_str());
  } else {
    data::write_export_dir(out, result, options, source);
    std::fprintf(table, "wrote %s/data/train.jsonl and the dataset card %s/README.md\n", out.c_str(), out.c_str());
  }
  return exit_code::ok;
}

}  // namespace ptxbench::cli
