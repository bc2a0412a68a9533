// `export --out DIR`: the records as DIR/data/train.jsonl and a dataset card
// (DIR/README.md) that `datasets.load_dataset(DIR)` reads: YAML `configs` and
// typed features, then the provenance and coverage in prose.
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>

#include "agent/data/export.hpp"
#include "evaluator/common/json_path.hpp"

namespace ptxbench::data {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

const char* k_data_file = "data/train.jsonl";

std::string describe(const export_options& o) {
  switch (o.kind) {
    case export_kind::correction:
      return "Correction examples: the task, a failed attempt and the feedback it got (history `" +
             std::string(to_string(o.history)) +
             "`), then the reply of the next round, which got further through the stages.";
    case export_kind::sft: return "Supervised examples: the task, then an answer that reached the fix stage.";
    case export_kind::prompts:
      return "Prompts: the system and task prompt a run sends in round 0, one row per task of suite `" + o.suite +
             "`, for an RL trainer that samples its own completions (TRL's GRPOTrainer; `task_id` names the task for "
             "the reward function, examples/reward_trl.py). Only public sizes appear in the prompts.";
    case export_kind::preference:
      return "Preference pairs: one prompt, the reply that got further (or was faster) as `chosen`, the other as "
             "`rejected`. Replies share a prompt when they are round 0 of samples of one task, or siblings of a "
             "branched repair round (`run --branch N`: N replies to one conversation state, round >= 1); "
             "`provenance.pair` says which (`samples`, `siblings`), `provenance.branch` and `rejected_branch` "
             "name the siblings, `provenance.decided_by` whether the chosen reply got further (`stage`) or was "
             "as far and faster (`speedup`).";
  }
  return "";
}

std::string layout(const export_options& o) {
  if (o.kind == export_kind::prompts) return "`prompt` (conversational), `task_id`, `family`, `level`, `variant`, `suite`";
  if (o.kind == export_kind::preference) return "`prompt`, `chosen`, `rejected` (conversational preference)";
  if (o.format == export_format::messages) {
    return "`messages` (conversational language modeling; an assistant-only loss trains every assistant message, "
           "including a failed attempt)";
  }
  return "`prompt`, `completion` (conversational prompt-completion; a completion-only loss trains the completion "
         "alone)";
}

std::string str_or(const json& j, const char* key, const std::string& fallback = "") {
  return j.is_object() && j.contains(key) && j[key].is_string() ? j[key].get<std::string>() : fallback;
}

std::string num_or(const json& j, const char* key) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].dump() : "-";
}

std::string provenance_table(const card_source& source) {
  std::ostringstream os;
  os << "| experiment | model | provider | evaluator | feedback | history | temperature | top_p | max_tokens |\n"
     << "|---|---|---|---|---|---|---|---|---|\n";
  for (const auto& e : source.experiments) {
    const json& c = e.config;
    const json llm = c.is_object() && c.contains("llm") ? c["llm"] : json::object();
    std::string history = str_or(c, "history", "-");
    if (history == "last_k") history += " (k=" + num_or(c, "history_k") + ")";
    os << "| " << e.name << " | " << e.model << " | " << e.provider << " | " << e.evaluator_version << " | "
       << str_or(c, "feedback", "-") << " | " << history << " | " << num_or(llm, "temperature") << " | "
       << num_or(llm, "top_p") << " | " << num_or(llm, "max_tokens") << " |\n";
  }
  return os.str();
}

// Columns in stage order (format ... performance, then first_try), as the terminal table.
std::string coverage_markdown(const export_result& r, const export_options& o) {
  const auto stages = coverage_columns(r.kept);
  std::ostringstream os;
  os << "| " << (o.kind == export_kind::prompts ? "family" : cell_axes_label(o)) << " |";
  for (const auto& s : stages) os << " " << s << " |";
  os << " total |\n|---|";
  for (size_t i = 0; i <= stages.size(); ++i) os << "---|";
  os << "\n";
  for (const auto& [row_label, row] : r.kept) {
    int total = 0;
    os << "| " << row_label << " |";
    for (const auto& s : stages) {
      auto c = row.find(s);
      int n = c == row.end() ? 0 : c->second;
      total += n;
      os << " " << n << " |";
    }
    os << " " << total << " |\n";
  }
  return os.str();
}

// The Hub's size buckets for the card's size_categories.
std::string size_category(size_t n) {
  if (n < 1000) return "n<1K";
  if (n < 10000) return "1K<n<10K";
  if (n < 100000) return "10K<n<100K";
  if (n < 1000000) return "100K<n<1M";
  return "1M<n<10M";
}

void refuse_foreign_dir(const fs::path& dir) {
  if (!fs::exists(dir)) return;
  if (!fs::is_directory(dir)) throw input_error("--out " + dir.string() + " exists and is not a directory");
  for (const auto& entry : fs::directory_iterator(dir)) {
    auto name = entry.path().filename().string();
    if (name != "README.md" && name != "data") {
      throw input_error("--out " + dir.string() + " holds " + name +
                        ", which no export wrote; give an empty or new directory");
    }
  }
}

// Through a temporary file renamed once complete; on failure (a full disk) the
// temporary file is removed and the error says why.
void write_file(const fs::path& path, const std::string& text) {
  auto partial = path;
  partial += ".partial";
  {
    std::ofstream out(partial, std::ios::binary);
    if (out) out << text;
    if (!out || !out.flush()) {
      const std::string reason = std::strerror(errno);
      out.close();
      std::error_code ec;
      fs::remove(partial, ec);
      throw std::runtime_error("cannot write " + path.string() + ": " + reason);
    }
  }
  fs::rename(partial, path);
}

}  // namespace

void write_export_dir(const fs::path& dir, const export_result& result, const export_options& options,
                      const card_source& source) {
  refuse_foreign_dir(dir);
  fs::create_directories(dir / "data");
  std::ostringstream jsonl;
  for (const auto& r : result.records) check_record_schema(r.body, options);
  write_jsonl(jsonl, result.records);
  write_file(dir / k_data_file, jsonl.str());

  std::ostringstream card;
  card << "---\nlicense: " << options.license << "\nsize_categories:\n- " << size_category(result.records.size())
       << "\nconfigs:\n- config_name: default\n  data_files:\n  - split: train\n    path: " << k_data_file
       << "\ndataset_info:\n"
       << features_yaml(options) << "task_categories:\n- text-generation\ntags:\n- ptx\n- cuda\n- ptxbench\n---\n";
  const bool prompts = options.kind == export_kind::prompts;
  card << "# ptxbench " << to_string(options.kind) << (prompts ? "" : " examples") << "\n\n"
       << describe(options) << "\n\nExported by `ptxbench export` from `" << source.database << "`: "
       << result.records.size() << " records in `" << k_data_file << "`, columns " << layout(options)
       << (prompts ? "" : " and `provenance`") << ". Reasoning: `" << to_string(options.reasoning) << "`.\n\n";
  if (!prompts) {
    card << "Every record's `provenance` names its experiment, trajectory, round, task, its family, level (0: not "
            "given) and variant (JSON text), model, evaluator version, the stage the failed attempt failed at, the "
            "stage the answer reached, its speedup against the frontier library (null when not measured), the run's "
            "feedback level, history policy and sampling settings, and the length of the trained sequence (`bytes`, "
            "and `tokens` when counted).\n\n"
         << "## Experiments\n\n"
         << provenance_table(source) << "\n";
  }
  card << "## Lengths\n\nThe trained sequence of each record (prompt and completion; a preference pair's prompt "
          "and longer answer). A trainer drops or truncates records longer than its `max_length` without saying "
          "so; set it above these, or export with `--max-tokens`.\n\n"
       << format_lengths(result, true) << "\n## Coverage ("
       << (prompts ? "family x level" : cell_axes_label(options) + " x failing stage") << ")\n\n"
       << coverage_markdown(result, options);
  if (result.cap > 0) card << "\nBalanced: at most " << result.cap << " records per cell.\n";
  write_file(dir / "README.md", card.str());
}

}  // namespace ptxbench::data
