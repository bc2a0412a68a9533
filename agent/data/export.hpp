#pragma once
// Training data from a run database (DESIGN.md, "Data products"): JSONL in the
// chat `messages` format that TRL, LLaMA-Factory and axolotl read.
//
//  correction  {"messages": [system, task, assistant: failed attempt of round r,
//               user: the feedback sent in round r+1, assistant: reply of round r+1]}
//              for every pair of consecutive rounds where round r+1 got further
//              than round r (run_data.hpp: more stages passed in order, or as far
//              with no failed stage). Only consecutive rounds pair, so the
//              feedback in the example is the feedback on that very attempt.
//  sft         {"messages": [system, task, assistant: answer]}: the last turn of
//              each trajectory whose verdict reached --min-fix-stage (default passed).
//  preference  {"prompt": [...], "chosen": [assistant], "rejected": [assistant]}:
//              turns sent the identical prompt (e.g. round 0 of every sample of a
//              task), ranked by verdict then speedup; best pairs with worst, second
//              with second worst, ..., only where one is strictly better.
//
// Every record carries "provenance": experiment, trajectory, round, evaluator
// version, task, family, model, failing stage, fix stage, speedup, source
// ("model" or "mutation") and the mutation operator. Near-duplicate records
// are dropped unless keep_duplicates. Output order
// is deterministic: (experiment id, task, sample, trajectory id, round).
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "agent/data/run_data.hpp"

namespace ptxbench::data {

enum class export_kind { correction, sft, preference };
export_kind parse_export_kind(const std::string& s);  // throws input_error
const char* to_string(export_kind k);

struct export_filter {
  std::vector<std::string> tasks;     // empty: any
  std::vector<std::string> families;
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
  std::vector<std::string> experiments;  // empty: every experiment
  export_filter filter;
  bool balance = false;
  std::optional<int> per_cell;  // with balance: cap per cell (default: the smallest non-empty cell)
  // false: a record whose candidates are near-duplicates (candidates.duplicate_of)
  // of an earlier record's is dropped.
  bool keep_duplicates = false;
};

struct export_record {
  nlohmann::json body;        // the JSONL line, provenance included
  std::string family;
  std::string failing_stage;  // coverage column; "first_try" for sft solved in round 0
  std::string selection_key;  // stable identity used by the balance hash
  // The record's candidates by their earliest near-duplicate: two records with
  // one key teach the same thing. "" never counts as a duplicate.
  std::string duplicate_key;
};

// Counts per (family, failing stage).
using coverage_table = std::map<std::string, std::map<std::string, int>>;

struct export_result {
  std::vector<export_record> records;  // after filters and balancing, in output order
  coverage_table coverage;             // after filters, before balancing
  coverage_table kept;                 // what was written
  int cap = 0;                         // the per-cell cap applied (0 when not balanced)
  int duplicates_dropped = 0;          // near-duplicate records left out (before coverage)
};

// Builds the records. Throws input_error for an unknown experiment or a filter
// that does not apply to the kind (--failing-stage with sft).
export_result build_export(run_store& store, const export_options& options);
// The records of one experiment after filters, in output order (no balancing).
std::vector<export_record> export_records(const experiment_data& data, const export_options& options);
// Caps each (family, failing stage) cell; a cell over the cap keeps the records
// with the smallest stable_hash(selection_key). Order of the survivors is kept.
std::vector<export_record> balance_records(std::vector<export_record> records, int cap);
int smallest_cell(const coverage_table& coverage);
coverage_table count_cells(const std::vector<export_record>& records);

void write_jsonl(std::ostream& out, const std::vector<export_record>& records);
// A text table: one row per family, one column per failing stage, "kept/total"
// when balanced, with row and column totals.
std::string format_coverage(const export_result& result, bool balanced);

}  // namespace ptxbench::data
