// Coverage of an export (family x failing stage), balancing, and writing.
#include <algorithm>
#include <climits>
#include <iomanip>
#include <set>
#include <sstream>

#include "agent/data/export.hpp"
#include "agent/data/export_lengths.hpp"
#include "evaluator/common/json_path.hpp"

namespace ptxbench::data {

coverage_table count_cells(const std::vector<export_record>& records) {
  coverage_table table;
  for (const auto& r : records) ++table[r.cell.empty() ? r.family : r.cell][r.failing_stage];
  return table;
}

std::string cell_axes_label(const export_options& options) {
  std::string out;
  for (const auto& axis : options.balance_by) out += (out.empty() ? "" : " x ") + axis;
  return out.empty() ? "family" : out;
}

std::vector<std::string> coverage_columns(const coverage_table& coverage) {
  std::set<std::pair<int, std::string>> columns;  // ordered by verdict rank, first_try last
  for (const auto& [row_label, row] : coverage) {
    for (const auto& [name, count] : row) {
      int rank = verdict_rank(name);
      columns.insert({rank < 0 ? INT_MAX : rank, name});
    }
  }
  std::vector<std::string> out;
  for (const auto& c : columns) out.push_back(c.second);
  return out;
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
    const auto& row = records[i].cell.empty() ? records[i].family : records[i].cell;
    cells[{row, records[i].failing_stage}].push_back({stable_hash(records[i].selection_key), i});
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

namespace {

// The coverage row of a record: its values of the balance_by axes.
std::string cell_of(const export_record& r, const std::vector<std::string>& axes) {
  std::string out;
  for (const auto& axis : axes) {
    std::string value = axis == "family"  ? r.family
                        : axis == "level" ? level_label(r.level)
                        : axis == "task"  ? r.task
                                          : variant_label(nlohmann::json::parse(r.variant).get<std::map<std::string, std::string>>());
    out += (out.empty() ? "" : " / ") + value;
  }
  return out.empty() ? r.family : out;
}

}  // namespace

export_result build_export(run_store& store, const export_options& options) {
  if (options.kind == export_kind::sft && options.filter.failing_stage) {
    throw input_error("--failing-stage does not apply to sft examples (they have no failed attempt)");
  }
  if (options.history == export_history::full && options.kind != export_kind::correction) {
    throw input_error("--history full applies to correction examples only (sft and preference prompts have no "
                      "earlier attempts to choose from)");
  }
  if (options.per_cell && *options.per_cell < 1) throw input_error("--per-cell must be at least 1");
  check_length_options(options);
  for (const auto& axis : options.balance_by) {
    if (std::find(balance_axes.begin(), balance_axes.end(), axis) == balance_axes.end())
      throw input_error("--balance-by " + axis + ": expected family, level, variant or task");
  }
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
  apply_length_limit(result, options);
  for (auto& r : result.records) r.cell = cell_of(r, options.balance_by);
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
  export_options options;
  options.balance = balanced;
  return format_coverage(result, options);
}

std::string format_coverage(const export_result& result, const export_options& options) {
  const bool balanced = options.balance;
  const auto columns = coverage_columns(result.coverage);
  const std::string axes = cell_axes_label(options);
  size_t width = std::max<size_t>(16, axes.size() + 2);
  for (const auto& [row_label, row] : result.coverage) width = std::max(width, row_label.size() + 2);
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
  const char* columns_are = options.kind == export_kind::prompts ? " x level" : " x failing stage";
  os << "coverage (" << axes << columns_are << (balanced ? ", kept/total" : "") << "):\n";
  os << std::left << std::setw(static_cast<int>(width)) << axes;
  for (const auto& c : columns) os << std::right << std::setw(14) << c;
  os << std::right << std::setw(12) << "total" << '\n';
  for (const auto& [family, row] : result.coverage) {
    os << std::left << std::setw(static_cast<int>(width)) << family;
    int total = 0, kept = 0;
    for (const auto& c : columns) {
      os << std::right << std::setw(14) << cell(family, c);
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
