#pragma once
// Training data from a run database (docs/design.md, "Data products"): JSONL
// in the conversational formats that TRL, LLaMA-Factory and axolotl read.
//
//  correction  for every pair of consecutive rounds where round r+1 got further
//              than round r (run_data.hpp: more stages passed in order, or as far
//              with no failed stage). The prompt is [system, task, assistant:
//              failed attempt of round r, user: the feedback sent in round r+1]
//              (history last) or every earlier attempt and its feedback (history
//              full); the completion is the reply of round r+1. Only consecutive
//              rounds pair, so the feedback is the feedback on that very attempt.
//  sft         prompt [system, task], completion: the last turn of each
//              trajectory whose verdict reached --min-fix-stage (default passed).
//  preference  {"prompt": [...], "chosen": [assistant], "rejected": [assistant]}:
//              replies sent the identical prompt, ranked by verdict then speedup;
//              best pairs with worst, second with second worst, ..., only where
//              one is strictly better (ties make no pair, evaluator errors and
//              unjudged replies are left out). Replies sent one prompt are round 0
//              of every sample of a task, and the siblings of a branched repair
//              round (run --branch N: N replies to one conversation state), whose
//              pairs have round >= 1. Provenance says which: `pair` siblings or
//              samples, `branch` / `rejected_branch` (null for a round's only
//              reply), and `decided_by` stage (got further) or speedup (as far,
//              faster).
//
// Format prompt_completion writes {"prompt", "completion"}, so a trainer's
// completion-only loss never trains the failed attempt; format messages writes
// the concatenation as {"messages"} (an assistant-only loss then trains the
// failed attempt too). Reasoning belongs to the replies trained on (completion,
// chosen, rejected): dropped, a `reasoning_content` field on every message (""
// where there is none), or a <think> block before the content. Prompt messages
// are what the model was sent, which never held earlier reasoning.
//
// Every record carries "provenance" (export_schema.cpp lists its columns and
// types): experiment, trajectory, round, evaluator version, task, family, level
// and variant (from the task catalogue), model, failing and fix stage, speedup,
// feedback level, history policy and sampling settings, source ("model" or
// "mutation"), the mutation operator, and the record's length: `bytes` of its
// messages' text and, with a tokenizer, `tokens` (token_count.hpp). A record
// longer than max_tokens is dropped, or kept with `over_max_tokens` true.
//
//  prompts     no database: one row per task of a suite, {"prompt": [system,
//              task], "task_id", "family", "level", "variant", "suite"}, the
//              round-0 prompt a run sends, for TRL's GRPOTrainer (its extra
//              columns reach reward functions such as examples/reward_trl.py).
// Near-duplicate records are dropped unless keep_duplicates. Every row has every column, each of one type; a missing number is
// null, and the dataset card declares its type. Output order is deterministic:
// (experiment id, task, sample, trajectory id, round).
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "agent/data/run_data.hpp"
#include "agent/data/task_catalogue.hpp"
#include "agent/data/token_count.hpp"

namespace ptxbench::data {

enum class export_kind { correction, sft, preference, prompts };
export_kind parse_export_kind(const std::string& s);  // throws input_error
const char* to_string(export_kind k);

enum class export_format { messages, prompt_completion };
enum class export_history { last, full };
enum class reasoning_mode { drop, field, inline_think };
// Each throws input_error naming the accepted values.
export_format parse_export_format(const std::string& s);
export_history parse_export_history(const std::string& s);
reasoning_mode parse_reasoning_mode(const std::string& s);
const char* to_string(export_format f);
const char* to_string(export_history h);
const char* to_string(reasoning_mode r);

struct export_filter {
  std::vector<std::string> tasks;     // empty: any
  std::vector<std::string> families;
  std::vector<int> levels;  // task levels (0: not given)
  std::vector<std::string> models;
  // Verdict rank of the failed attempt (correction) or the rejected answer (preference).
  std::optional<int> failing_stage;
  // The fix / answer / chosen reply reached this stage: it passed every earlier
  // stage. Default: correction any improvement, sft passed, preference any.
  std::optional<int> min_fix_stage;
  std::optional<double> min_speedup;  // the fix's speedup (records without one are dropped)
};

struct export_options {
  export_kind kind = export_kind::correction;
  // correction and sft; preference has its own prompt/chosen/rejected shape.
  export_format format = export_format::prompt_completion;
  export_history history = export_history::last;  // correction only
  reasoning_mode reasoning = reasoning_mode::drop;
  std::vector<std::string> experiments;  // empty: every experiment
  export_filter filter;
  bool balance = false;
  std::optional<int> per_cell;  // with balance: cap per cell (default: the smallest non-empty cell)
  // The axes of a coverage cell besides the failing stage, among family,
  // level, variant and task (balance_axes), in the order given.
  std::vector<std::string> balance_by{"family"};
  task_catalogue catalogue;  // levels and variants by task id
  std::shared_ptr<token_counter> tokenizer;  // null: no token counts
  std::optional<int64_t> max_tokens;         // requires a tokenizer
  bool flag_over_max = false;                // keep longer records, flagged, instead of dropping them
  std::string license = "unknown";           // the dataset card's license field
  std::string suite = "full";                // prompts: the suite whose tasks are written
  // false: a record whose candidates are near-duplicates (candidates.duplicate_of)
  // of an earlier record's is dropped.
  bool keep_duplicates = false;
};

struct export_record {
  nlohmann::json body;        // the JSONL line, provenance included
  std::string family;
  std::string task;
  int level = 0;
  std::string variant;        // variant_json
  std::string cell;           // the coverage row: the balance_by axes' values
  std::string failing_stage;  // coverage column; "first_try" for sft solved in round 0
  std::string selection_key;  // stable identity used by the balance hash
  // The record's candidates by their earliest near-duplicate: two records with
  // one key teach the same thing. "" never counts as a duplicate.
  std::string duplicate_key;
  int64_t bytes = 0;             // UTF-8 bytes of the trained sequence's message texts
  std::optional<int64_t> tokens;  // with a tokenizer
};

// The axes balance_by accepts.
inline const std::vector<std::string> balance_axes{"family", "level", "variant", "task"};

// Counts per (family, failing stage).
using coverage_table = std::map<std::string, std::map<std::string, int>>;

struct export_result {
  std::vector<export_record> records;  // after filters and balancing, in output order
  coverage_table coverage;             // after filters, before balancing
  coverage_table kept;                 // what was written
  int cap = 0;                         // the per-cell cap applied (0 when not balanced)
  int duplicates_dropped = 0;          // near-duplicate records left out (before coverage)
  int over_max_dropped = 0;            // records longer than max_tokens left out (before coverage)
  int over_max_flagged = 0;            // ... kept with over_max_tokens (flag_over_max)
  std::string tokenizer;               // the tokenizer's description; "" without one
  int64_t unnormalised_texts = 0;      // token_counter::unnormalised_texts
};

// Bytes and tokens of each record's trained sequence: the prompt and
// completion (messages), the prompt and the longer of chosen and rejected
// (preference), the prompt (prompts). Sets bytes and tokens of each record
// and of its provenance.
void measure_lengths(std::vector<export_record>& records, const export_options& options);

// Builds the records. Throws input_error for an unknown experiment or a filter
// that does not apply to the kind (--failing-stage with sft, --history full
// with sft or preference).
export_result build_export(run_store& store, const export_options& options);
// The records of one experiment after filters, in output order (no balancing).
std::vector<export_record> export_records(const experiment_data& data, const export_options& options);
// Caps each (cell, failing stage) cell; a cell over the cap keeps the records
// with the smallest stable_hash(selection_key). Order of the survivors is kept.
std::vector<export_record> balance_records(std::vector<export_record> records, int cap);
int smallest_cell(const coverage_table& coverage);
coverage_table count_cells(const std::vector<export_record>& records);

void write_jsonl(std::ostream& out, const std::vector<export_record>& records);

// The columns of a record of this kind and format, for the dataset card:
// a `datasets` features list in YAML (export_schema.cpp).
std::string features_yaml(const export_options& options);
// Throws std::logic_error naming the first column of `body` that is missing,
// extra or of another type than the schema says (tests and the writer use it).
void check_record_schema(const nlohmann::json& body, const export_options& options);

// --out DIR: DIR/data/train.jsonl and DIR/README.md, a dataset card with YAML
// `configs` and features, the provenance of each experiment and the coverage
// table. Creates DIR; refuses a DIR that holds anything but a previous export.
struct card_source {
  std::string database;                   // path of the run database
  std::vector<experiment_row> experiments;  // the experiments exported
};
void write_export_dir(const std::filesystem::path& dir, const export_result& result, const export_options& options,
                      const card_source& source);
// A text table: one row per cell (the balance_by axes), one column per failing
// stage in stage order, "kept/total" when balanced, with row and column totals.
std::string format_coverage(const export_result& result, const export_options& options);
std::string format_coverage(const export_result& result, bool balanced);  // family rows
// "family", "family x level", ...
std::string cell_axes_label(const export_options& options);
// Failing-stage columns in stage order (format ... performance, then first_try).
std::vector<std::string> coverage_columns(const coverage_table& coverage);

// Lengths of the records' trained sequences for the card and the terminal:
// min, median, 90th and 99th percentile and max of bytes and (with a
// tokenizer) tokens, and how many records exceed common max_length values.
std::string format_lengths(const export_result& result, bool markdown);

// --kind prompts: a record per task of options.suite (every task is in
// "full"), in id order, with the prompts `prompts_dir` renders. Throws
// input_error when no task is in the suite.
export_result build_prompts_export(const std::vector<task>& tasks, const std::filesystem::path& prompts_dir,
                                   const export_options& options);

}  // namespace ptxbench::data
