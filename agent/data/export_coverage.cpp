// Coverage of an export (family x failing stage), balancing, and writing.
#include <algorithm>
#include <climits>
#include <iomanip>
#include <set>
#include <sstream>

#include "agent/data/export.hpp"
#include "evaluator/api/json_path.hpp"

namespace ptxbench::data {

coverage_table count_cells(const std::vector<export_record>& records) {
  coverage_table table;
  for (const auto& r : records) ++table[r.family][r.failing_stage];
  return table;
}

int smallest_cell(const coverage_table& coverage) {
  int smallest = 0;
  for (const auto& [family, row] : coverage) {
    for (const auto& [stage_name, count] : row) {
      if (count > 0 && (smallest == 0 || count < smallest)) smallest = count;
    }
  }
  return smallest;
}

std::vector<export_record> balance_records(std::vector<export_record> records, int cap) {
  // Rank each record inside its cell by hash; keep those ranked below the cap.
  std::map<std::pair<std::string, std::string>, std::vector<std::pair<uint64_t, size_t>>> cells;
  for (size_t i = 0; i < records.size(); ++i) {
    cells[{records[i].family, records[i].failing_stage}].push_back({stable_hash(records[i].selection_key), i});
  }
  std::vector<bool> keep(records.size(), false);
  for (auto& [cell, members] : cells) {
    std::sort(members.begin(), members.end());
    for (size_t k = 0; k < members.size() && static_cast<int>(k) < cap; ++k) keep[members[k].second] = true;
  }
  std::vector<export_record> out;
  for (size_t i = 0; i < records.size(); ++i) {
    if (keep[i]) out.push_back(std::move(records[i]));
  }
  return out;
}

export_result build_export(run_store& store, const export_options& options) {
  if (options.kind == export_kind::sft && options.filter.failing_stage) {
    throw input_error("--failing-stage does not apply to sft examples (they have no failed attempt)");
  }
  if (options.history == export_history::full && options.kind != export_kind::correction) {
    throw input_error("--history full applies to correction examples only (sft and preference prompts have no "
                      "earlier attempts to choose from)");
  }
  if (options.per_cell && *options.per_cell < 1) throw input_error("--per-cell must be at least 1");
  export_result result;
  for (const auto& data : load_experiments(store, options.experiments)) {
    auto records = export_records(data, options);
    for (auto& r : records) result.records.push_back(std::move(r));
  }
  if (!options.keep_duplicates) {
    std::set<std::string> seen;
    std::vector<export_record> unique;
    for (auto& r : result.records) {
      if (!r.duplicate_key.empty() && !seen.insert(r.duplicate_key).second) {
        ++result.duplicates_dropped;
        continue;
      }
      unique.push_back(std::move(r));
    }
    result.records = std::move(unique);
  }
  result.coverage = count_cells(result.records);
  if (options.balance) {
    result.cap = options.per_cell ? *options.per_cell : smallest_cell(result.coverage);
    result.records = balance_records(std::move(result.records), result.cap);
  }
  result.kept = count_cells(result.records);
  return result;
}

void write_jsonl(std::ostream& out, const std::vector<export_record>& records) {
  for (const auto& r : records) out << json_text(r.body) << '\n';
}

std::string format_coverage(const export_result& result, bool balanced) {
  std::set<std::pair<int, std::string>> columns;  // ordered by verdict rank, first_try last
  for (const auto& [family, row] : result.coverage) {
    for (const auto& [name, count] : row) {
      int rank = verdict_rank(name);
      columns.insert({rank < 0 ? INT_MAX : rank, name});
    }
  }
  auto cell = [&](const std::string& family, const std::string& name) {
    int total = 0, kept = 0;
    if (auto f = result.coverage.find(family); f != result.coverage.end()) {
      if (auto c = f->second.find(name); c != f->second.end()) total = c->second;
    }
    if (auto f = result.kept.find(family); f != result.kept.end()) {
      if (auto c = f->second.find(name); c != f->second.end()) kept = c->second;
    }
    return balanced ? std::to_string(kept) + "/" + std::to_string(total) : std::to_string(total);
  };
  std::ostringstream os;
  os << "coverage (family x failing stage" << (balanced ? ", kept/total" : "") << "):\n";
  os << std::left << std::setw(16) << "family";
  for (const auto& c : columns) os << std::right << std::setw(14) << c.second;
  os << std::right << std::setw(12) << "total" << '\n';
  for (const auto& [family, row] : result.coverage) {
    os << std::left << std::setw(16) << family;
    int total = 0, kept = 0;
    for (const auto& c : columns) {
      os << std::right << std::setw(14) << cell(family, c.second);
    }
    for (const auto& [name, count] : row) total += count;
    if (auto f = result.kept.find(family); f != result.kept.end()) {
      for (const auto& [name, count] : f->second) kept += count;
    }
    os << std::right << std::setw(12)
       << (balanced ? std::to_string(kept) + "/" + std::to_string(total) : std::to_string(total)) << '\n';
  }
  size_t total = 0;
  for (const auto& [family, row] : result.coverage) {
    for (const auto& [name, count] : row) total += count;
  }
  os << "records written: " << result.records.size() << " of " << total;
  if (balanced) os << " (balanced: at most " << result.cap << " per cell)";
  os << '\n';
  return os.str();
}

}  // namespace ptxbench::data
