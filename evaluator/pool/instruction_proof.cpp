#include "evaluator/pool/instruction_proof.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <utility>

namespace ptxbench {
namespace {

// The table may name a base opcode ("HGMMA"), a dotted prefix ("SYNCS.ARRIVE")
// or a wildcard ("SYNCS.*"); instructions carry their base opcode and full text.
bool opcode_matches(const sass_instruction& inst, const std::string& wanted) {
  std::string w = wanted;
  if (!w.empty() && w.back() == '*') w.pop_back();
  if (!w.empty() && w.back() == '.') w.pop_back();
  if (inst.opcode == w) return true;
  auto starts = [&](const std::string& s) { return s.compare(0, w.size(), w) == 0 && (s.size() == w.size() || s[w.size()] == '.'); };
  if (starts(inst.opcode)) return true;
  // The full text starts with the predicate, if any, then the dotted opcode.
  std::string text = inst.text;
  if (!text.empty() && text[0] == '@') {
    size_t sp = text.find(' ');
    text = sp == std::string::npos ? "" : text.substr(sp + 1);
  }
  return starts(text);
}

std::string human_count(double v) {
  char buf[32];
  if (v >= 1e9) std::snprintf(buf, sizeof buf, "%.2fG", v / 1e9);
  else if (v >= 1e6) std::snprintf(buf, sizeof buf, "%.2fM", v / 1e6);
  else if (v >= 1e4) std::snprintf(buf, sizeof buf, "%.1fk", v / 1e3);
  else std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

std::string join_opcodes(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& o : v) s += (s.empty() ? "" : "/") + o;
  return s.empty() ? "?" : s;
}

}  // namespace

void apply_dynamic_counts(instruction_report& report, const sass_listing& sass, const protocol::dynamic_counts& counts) {
  report.dynamic_ran = counts.ran;
  if (!counts.ran) return;
  std::map<std::pair<std::string, uint64_t>, const sass_instruction*> by_pc;
  std::set<std::string> functions;
  for (const auto& inst : sass.instructions) {
    by_pc[{inst.function, inst.offset}] = &inst;
    functions.insert(inst.function);
  }

  std::map<std::string, int64_t> by_opcode;
  std::vector<std::pair<const sass_instruction*, uint64_t>> executed;
  for (const auto& c : counts.counts) {
    if (!functions.count(c.function)) continue;  // not the candidate's code (a library kernel)
    auto it = by_pc.find({c.function, c.pc_offset});
    if (it == by_pc.end()) {
      by_opcode["(unmapped pc)"] += int64_t(c.executed);
      continue;
    }
    by_opcode[it->second->opcode] += int64_t(c.executed);
    executed.push_back({it->second, c.executed});
  }
  std::vector<std::pair<std::string, int64_t>> top(by_opcode.begin(), by_opcode.end());
  std::sort(top.begin(), top.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (top.size() > 20) top.resize(20);
  report.executed_by_opcode = std::map<std::string, int64_t>(top.begin(), top.end());

  std::string top_text;
  for (size_t i = 0; i < top.size() && i < 4; ++i)
    top_text += (i ? ", " : "") + top[i].first + " " + human_count(double(top[i].second));

  for (auto& check : report.checks) {
    bool static_ok = check.passed;
    int64_t n = 0;
    double flops = 0.0;
    for (const auto& [inst, count] : executed) {
      bool match = std::any_of(check.sass_opcodes.begin(), check.sass_opcodes.end(),
                               [&](const std::string& o) { return opcode_matches(*inst, o); });
      if (!match) continue;
      n += int64_t(count);
      flops += sass_instruction_flops(*inst) * double(count);
    }
    check.executed = n;
    std::ostringstream note;
    if (check.is_math && counts.task_flops > 0) check.flop_share = flops / counts.task_flops;
    if (!static_ok) {
      check.passed = false;
      if (check.note.empty()) note << "not in both the PTX and the SASS";
    } else if (n == 0) {
      check.passed = false;
      note << check.ptx << " is in the SASS (" << join_opcodes(check.sass_opcodes) << ") but was never executed at "
           << counts.size << "; the most executed instructions were: " << top_text;
    } else if (check.is_math && check.flop_share < k_min_flop_share) {
      check.passed = false;
      note << check.ptx << " executed " << human_count(double(n)) << " times but did only "
           << int(std::lround(100 * std::max(0.0, check.flop_share))) << "% of the task's FLOPs at " << counts.size
           << " (needs " << int(100 * k_min_flop_share) << "%); the most executed instructions were: " << top_text;
    } else {
      check.passed = true;
      note << "executed " << human_count(double(n)) << "x";
      if (check.is_math && check.flop_share >= 0)
        note << ", " << int(std::lround(100 * check.flop_share)) << "% of the task's FLOPs";
    }
    if (!note.str().empty()) check.note = note.str();
  }
}

stage_outcome instruction_outcome(const instruction_report& report, const std::string& dynamic_missing) {
  stage_outcome out;
  std::string failing;
  for (const auto& c : report.checks) {
    if (c.passed) continue;
    if (!failing.empty()) failing += "; ";
    if (!report.static_passed || !report.dynamic_ran) {
      failing += c.ptx + ": " + std::to_string(c.ptx_count) + "x in the PTX, " +
                 (c.sass_count < 0 ? std::string("unknown") : std::to_string(c.sass_count)) + "x in the SASS (" +
                 join_opcodes(c.sass_opcodes) + ")";
      if (!c.note.empty() && c.note.find(c.ptx) == std::string::npos) failing += " - " + c.note;
    } else {
      failing += c.note;
    }
  }
  if (!report.static_passed) {
    out.status = stage_status::failed;
    out.reason = "target instructions missing: " + (failing.empty() ? std::string("static check failed") : failing);
    return out;
  }
  if (!report.dynamic_ran) {
    out.status = stage_status::unverified;
    out.reason = "targets are in the PTX and the SASS, but their execution was not verified: " + dynamic_missing;
    return out;
  }
  if (!failing.empty()) {
    out.status = stage_status::failed;
    out.reason = failing;
    return out;
  }
  out.status = stage_status::passed;
  std::string summary;
  for (const auto& c : report.checks) summary += (summary.empty() ? "" : "; ") + c.ptx + " " + c.note;
  out.reason = summary;
  return out;
}

}  // namespace ptxbench
