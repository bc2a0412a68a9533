#include "evaluator/pool/instruction_proof.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <string_view>
#include <utility>

#include "evaluator/api/expression.hpp"
#include "evaluator/api/hidden_sizes.hpp"

namespace ptxbench {
namespace {

bool matches_any(const sass_instruction& inst, const std::vector<std::string>& opcodes) {
  return std::any_of(opcodes.begin(), opcodes.end(),
                     [&](const std::string& o) { return sass_opcode_matches(inst, o); });
}

std::string human(double v) {
  char buf[32];
  if (v >= 1e12) std::snprintf(buf, sizeof buf, "%.2fT", v / 1e12);
  else if (v >= 1e9) std::snprintf(buf, sizeof buf, "%.2fG", v / 1e9);
  else if (v >= 1e6) std::snprintf(buf, sizeof buf, "%.2fM", v / 1e6);
  else if (v >= 1e4) std::snprintf(buf, sizeof buf, "%.1fk", v / 1e3);
  else std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

std::string pct(double share) { return std::to_string(int(std::lround(100 * std::max(0.0, share)))) + "%"; }

std::string task_operand_type(const task& t) {
  for (const auto& ts : t.tensors) {
    if (ts.role != tensor_role::input) continue;
    switch (ts.type) {
      case dtype::bf16: return "BF16";
      case dtype::fp16: return "F16";
      case dtype::fp8_e4m3: return "E4M3";
      case dtype::fp32: return "F32";
      case dtype::i32: return "S32";
    }
  }
  return "";
}

const sass_mapping* mapping_for(const std::vector<sass_mapping>& table, const std::string& ptx) {
  for (const auto& m : table)
    if (m.ptx == ptx) return &m;
  return nullptr;
}

// One counted size, the executed instructions mapped to the listing.
struct executed_at_size {
  std::vector<std::vector<std::pair<const sass_instruction*, uint64_t>>> per_launch;
  std::map<std::string, int64_t> by_opcode;
  // Executed work the evaluator cannot account for: PCs outside the listing,
  // opcodes outside the classification, tensor shapes it cannot read.
  std::map<std::string, int64_t> unaccounted;
};

executed_at_size map_counts(const sass_listing& sass, const size_counts& sc) {
  std::map<std::pair<std::string, uint64_t>, const sass_instruction*> by_pc;
  std::set<std::string> functions;
  for (const auto& inst : sass.instructions) {
    by_pc[{inst.function, inst.offset}] = &inst;
    functions.insert(inst.function);
  }
  executed_at_size e;
  for (const auto& launch : sc.counts) {
    e.per_launch.emplace_back();
    for (const auto& c : launch) {
      // Only the candidate's module is loaded while a pass counts (the
      // references' library kernels run before it), so every record is the
      // candidate's code: one the listing does not hold is unaccounted work.
      auto it = by_pc.find({c.function, c.pc_offset});
      if (it == by_pc.end()) {
        if (c.executed == 0) continue;
        e.by_opcode["(unmapped pc)"] += int64_t(c.executed);
        e.unaccounted[functions.count(c.function) ? "a PC outside the listing" : "code outside the listing (" + c.function + ")"] +=
            int64_t(c.executed);
        continue;
      }
      e.by_opcode[it->second->opcode] += int64_t(c.executed);
      if (!c.executed) continue;
      e.per_launch.back().push_back({it->second, c.executed});
      const sass_class_info info = classify_sass(*it->second);
      if (info.kind == sass_kind::unknown)
        e.unaccounted[it->second->opcode + " (an opcode outside the evaluator's classification)"] += int64_t(c.executed);
      else if (info.kind == sass_kind::tensor && info.flops < 0)
        e.unaccounted[it->second->opcode + " (a tensor instruction whose shape the evaluator cannot read)"] +=
            int64_t(c.executed);
    }
  }
  return e;
}

// "unprovable: executed SASS the evaluator cannot account for at <size>: X 1.2k times, ...".
std::string unaccounted_note(const executed_at_size& e, const std::string& size) {
  std::string what;
  for (const auto& [k, n] : e.unaccounted) what += (what.empty() ? "" : ", ") + k + " " + human(double(n)) + " times";
  return "unprovable: the kernel executed SASS the evaluator cannot account for at " + size + ": " + what +
         "; the work it did cannot be proven (every executed instruction must be one whose math is known)";
}

std::string top_opcodes(const std::map<std::string, int64_t>& by_opcode, size_t n) {
  std::vector<std::pair<std::string, int64_t>> top(by_opcode.begin(), by_opcode.end());
  std::sort(top.begin(), top.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  std::string s;
  for (size_t i = 0; i < top.size() && i < n; ++i) s += (i ? ", " : "") + top[i].first + " " + human(double(top[i].second));
  return s;
}

}  // namespace

double global_read_bytes_per_exec(const sass_instruction& inst) {
  static const char* lane_reads[] = {"LDG", "LD", "LDGSTS", "LDGMC", "ATOMG", "ATOM"};
  static const char* texture_reads[] = {"TLD", "TLD4", "TEX", "TXD", "SULD", "SUATOM"};
  for (const char* r : texture_reads)
    if (sass_opcode_matches(inst, r)) return 32.0 * 16;
  const char* const* hit = std::find_if(std::begin(lane_reads), std::end(lane_reads),
                                        [&](const char* r) { return sass_opcode_matches(inst, r); });
  if (hit == std::end(lane_reads)) return 0.0;
  std::string_view text = inst.text;
  if (!text.empty() && text[0] == '@') text.remove_prefix(std::min(text.size(), text.find(' ') + 1));
  const std::string_view opcode = text.substr(0, text.find(' '));
  double width = 4;
  size_t at = opcode.find('.');
  while (at != std::string_view::npos) {
    const size_t next = opcode.find('.', at + 1);
    const std::string_view mod = opcode.substr(at + 1, next == std::string_view::npos ? std::string_view::npos : next - at - 1);
    if (mod == "256") width = 32;
    else if (mod == "128") width = 16;
    else if (mod == "64") width = 8;
    else if (mod == "U16" || mod == "S16") width = 2;
    else if (mod == "U8" || mod == "S8") width = 1;
    at = next;
  }
  return 32.0 * width;
}

double other_math_denominator(double task_flops, double target_flops) {
  return std::max(task_flops, target_flops);
}

double math_flops_per_exec(const sass_instruction& inst) {
  const sass_class_info c = classify_sass(inst);
  const bool math = c.kind == sass_kind::tensor || c.kind == sass_kind::float_math || c.kind == sass_kind::integer;
  return math && c.flops > 0 ? c.flops : 0.0;
}

std::string math_operand_type(const sass_instruction& inst) {
  const sass_class_info c = classify_sass(inst);
  const bool math = c.kind == sass_kind::tensor || c.kind == sass_kind::float_math || c.kind == sass_kind::integer;
  return math ? c.operand_type : "";
}

std::vector<int> counted_size_indexes(const task& t) {
  auto volume = [&](const size_point& s) {
    double n = 0;
    for (const auto& ts : t.tensors) n += double(tensor_elements(ts, s));
    return n;
  };
  int smallest = 0, timed = 0;
  for (size_t i = 0; i < t.sizes.size(); ++i) {
    if (volume(t.sizes[i]) < volume(t.sizes[size_t(smallest)])) smallest = int(i);
    if (t.sizes[i].values == t.timed_size().values) timed = int(i);
  }
  if (smallest == timed) return {timed};
  return {smallest, timed};
}

size_counts counted_size_facts(const task& t, const manifest& m, const size_point& s) {
  size_counts sc;
  sc.size = size_label(t, s);
  sc.task_flops = task_flops(t, s);
  std::set<std::string> mapped;
  for (const auto& l : m.launches) {
    launch_facts f;
    f.ctas = 1;
    for (const auto& g : l.grid) {
      try {
        f.ctas *= std::max<int64_t>(1, eval_int(g, s.values));
      } catch (const std::exception&) {
      }
    }
    for (const auto& p : l.params) {
      if (p.kind != binding_kind::tensor_map) continue;
      const tensor_spec* ts = t.find_tensor(p.map.tensor);
      if (!ts || ts->role != tensor_role::input) continue;
      double box = dtype_bytes(ts->type);
      for (int64_t b : p.map.box) box *= double(std::max<int64_t>(1, b));
      f.min_input_box_bytes = f.input_maps == 0 ? box : std::min(f.min_input_box_bytes, box);
      ++f.input_maps;
      mapped.insert(ts->name);
    }
    sc.launches.push_back(f);
  }
  for (const auto& ts : t.tensors) {
    if (ts.role == tensor_role::output) sc.output_elements += double(tensor_elements(ts, s));
    if (ts.role != tensor_role::input) continue;
    double bytes = double(tensor_elements(ts, s)) * dtype_bytes(ts.type);
    sc.input_bytes += bytes;
    if (mapped.count(ts.name)) sc.mapped_input_bytes += bytes;
  }
  if (sc.mapped_input_bytes == 0) sc.mapped_input_bytes = sc.input_bytes;
  return sc;
}

namespace {

// What one counted size's judging needs besides the counts: the task's
// operand type and its math targets' opcodes.
struct proof_context {
  std::string operand;
  std::vector<std::string> target_math;
  std::vector<sass_mapping> table;

  bool is_target_math(const sass_instruction& inst) const {
    return matches_any(inst, target_math) && (operand.empty() || math_operand_type(inst) == operand);
  }
};

// Math the task did not target at one size, against the math the kernel had
// to do (other_math_denominator): its share, and the failure when it is above
// k_max_other_math_share ("" otherwise).
std::string other_math_at_size(const instruction_report& report, const proof_context& ctx, const executed_at_size& e,
                               const size_counts& sc, double& share) {
  double other = 0, target = 0;
  std::map<std::string, double> other_by;
  for (const auto& launch : e.per_launch)
    for (const auto& [inst, n] : launch) {
      const double f = math_flops_per_exec(*inst);
      if (f <= 0) continue;
      if (ctx.is_target_math(*inst)) {
        target += f * double(n);
        continue;
      }
      other += f * double(n);
      other_by[inst->opcode + (math_operand_type(*inst).empty() ? "" : "." + math_operand_type(*inst))] +=
          f * double(n);
    }
  const double denominator = other_math_denominator(sc.task_flops, target);
  const double epilogue = k_epilogue_flops_per_output * sc.output_elements;
  share = denominator > 0 ? std::max(0.0, other - epilogue) / denominator : 0.0;
  if (share <= k_max_other_math_share) return "";
  std::string who;
  for (const auto& [k, v] : other_by) who += (who.empty() ? "" : ", ") + k + " " + human(v) + " FLOPs";
  std::string targets;
  for (const auto& c : report.checks)
    if (c.is_math) targets += (targets.empty() ? "" : "/") + c.ptx;
  const bool padded = denominator > sc.task_flops;
  return "the math is done by instructions the task did not target, not by " +
         (targets.empty() ? std::string("the target") : targets) + ": " + who + " = " + pct(share) + " of " +
         (padded ? "the FLOPs the target executed (" + human(target) + ", more than the task's " +
                       human(sc.task_flops) + " in padded tiles)"
                 : std::string("the task's FLOPs")) +
         " at " + sc.size + " beyond " + human(epilogue) + " FLOPs of epilogue (at most " +
         pct(k_max_other_math_share) + ")";
}

// Bytes the executed global reads other than TMA could have carried (an
// upper bound), infinite when a bulk copy ran (its size is not in the SASS).
double other_read_bytes(const executed_at_size& e) {
  double bytes = 0;
  for (const auto& launch : e.per_launch)
    for (const auto& [inst, n] : launch) {
      if (sass_opcode_matches(*inst, "UBLKCP")) return std::numeric_limits<double>::infinity();
      bytes += double(n) * global_read_bytes_per_exec(*inst);
    }
  return bytes;
}

// One target's work at one counted size: the figure its rule reads and, when
// the rule is not met, why (`note`).
instruction_check::at_size judge_at_size(const instruction_check& check, const proof_context& ctx,
                                         const executed_at_size& e, const size_counts& sc, const std::string& top,
                                         std::string& note_out) {
  const sass_mapping* mapping = mapping_for(ctx.table, check.ptx);
  const std::string work = mapping ? mapping->work : (check.is_math ? "math" : "per_cta");
  const std::vector<std::string> work_opcodes = mapping ? mapping->work_opcodes : check.sass_opcodes;
  instruction_check::at_size at;
  at.size = sc.size;
  int64_t all = 0, counted = 0, ctas = 0;
  double flops = 0, moved = 0, steps = 0;
  for (const auto& l : sc.launches) ctas += l.ctas;
  for (size_t li = 0; li < e.per_launch.size(); ++li) {
    const launch_facts& lf = li < sc.launches.size() ? sc.launches[li] : launch_facts{};
    int64_t launch_loads = 0, tma_loads = 0;
    for (const auto& [inst, n] : e.per_launch[li]) {
      if (sass_opcode_matches(*inst, "UTMALDG")) tma_loads += int64_t(n);
      if (matches_any(*inst, check.sass_opcodes)) all += int64_t(n);
      if (!matches_any(*inst, work_opcodes)) continue;
      if (work == "math") {
        if (!ctx.is_target_math(*inst)) continue;
        flops += math_flops_per_exec(*inst) * double(n);
      }
      counted += int64_t(n);
      launch_loads += int64_t(n);
    }
    if (work == "load_bytes") moved += double(launch_loads) * (lf.min_input_box_bytes > 0 ? lf.min_input_box_bytes : 16);
    if (work == "smem_bytes") moved += double(launch_loads) * mapping->min_bytes_per_exec;
    // A step: at least one per CTA and one per TMA load of each input map of
    // this launch, whatever the task targets.
    if (work == "per_step") steps += std::max(double(lf.ctas), lf.input_maps > 0 ? double(tma_loads) / lf.input_maps : 0.0);
  }
  at.executed = counted;
  std::ostringstream note;
  if (counted == 0) {
    if (all > 0)
      note << check.ptx << " executed " << human(double(all)) << "x at " << sc.size << " but none of it was "
           << (work == "load_bytes" ? "a load (only stores: the inputs did not arrive by it)"
                                    : work == "math" ? "math on the task's " + ctx.operand + " operands"
                                                     : "of the kind that counts");
    else
      note << check.ptx << " is in the SASS but was never executed at " << sc.size
           << "; the most executed instructions were: " << top;
  } else if (work == "math") {
    at.flop_share = sc.task_flops > 0 ? flops / sc.task_flops : 0.0;
    if (at.flop_share < k_min_flop_share)
      note << check.ptx << " executed " << human(double(counted)) << " times but did only " << pct(at.flop_share)
           << " of the task's FLOPs at " << sc.size << " (needs " << pct(k_min_flop_share)
           << "); the most executed instructions were: " << top;
  } else if (work == "load_bytes" || work == "smem_bytes") {
    const double denom = work == "load_bytes" ? sc.mapped_input_bytes : sc.input_bytes;
    if (work == "load_bytes") moved = std::max(moved, std::min(denom, sc.input_bytes - other_read_bytes(e)));
    at.bytes_share = denom > 0 ? moved / denom : 0.0;
    if (at.bytes_share < k_min_moved_share)
      note << check.ptx << " executed " << human(double(counted)) << " times at " << sc.size << ", moving at least "
           << human(moved) << "B = " << pct(at.bytes_share) << " of the " << human(denom)
           << "B of inputs (needs " << pct(k_min_moved_share) << ": the inputs must arrive this way)";
  } else if (work == "per_step") {
    at.per_step = steps > 0 ? double(counted) / steps : 0.0;
    if (double(counted) < steps)
      note << check.ptx << " executed " << human(double(counted)) << " times at " << sc.size << ", fewer than the "
           << human(steps) << " pipeline steps (at least once per CTA and per TMA load of each input tensor map)";
  } else if (counted < ctas) {
    note << check.ptx << " executed " << human(double(counted)) << " times at " << sc.size
         << ", fewer than once per CTA (" << human(double(ctas)) << " CTAs)";
  }
  at.passed = note.str().empty();
  note_out = note.str();
  return at;
}

// Each check's verdict over the sizes it was counted at, and the stage-wide
// failures (other math, unaccounted work) attached where they are read.
void settle_checks(instruction_report& report, const std::string& other_failure,
                   const std::string& unaccounted_failure) {
  bool other_attached = false;
  for (auto& check : report.checks) {
    const bool static_ok = check.passed;
    bool dynamic_ok = std::all_of(check.sizes.begin(), check.sizes.end(), [](const auto& a) { return a.passed; });
    if (check.is_math && !other_failure.empty()) {
      dynamic_ok = false;
      if (!other_attached) check.note += (check.note.empty() ? "" : "; ") + other_failure;
      other_attached = true;
    }
    if (!static_ok) {
      check.passed = false;
      if (check.note.empty()) check.note = "not in both the PTX and the SASS";
      continue;
    }
    check.passed = dynamic_ok;
    if (dynamic_ok) {
      std::ostringstream note;
      note << "executed " << human(double(check.executed)) << "x";
      if (check.is_math && check.flop_share >= 0) note << ", " << pct(check.flop_share) << " of the task's FLOPs";
      note << " (lowest of " << check.sizes.size() << " counted sizes)";
      check.note = note.str();
    }
  }
  auto fail_first = [&](const std::string& why) {
    if (why.empty() || report.checks.empty()) return;
    report.checks.front().passed = false;
    report.checks.front().note += (report.checks.front().note.empty() ? "" : "; ") + why;
  };
  if (!other_attached) fail_first(other_failure);
  fail_first(unaccounted_failure);
}

}  // namespace

void apply_dynamic_counts(instruction_report& report, const sass_listing& sass, const task& t,
                          const std::vector<size_counts>& sizes) {
  report.dynamic_ran = !sizes.empty();
  if (sizes.empty()) return;
  proof_context ctx{task_operand_type(t), {}, sass_table(t.arch)};
  // Which math opcodes are targets (their executions of the task's type count
  // for the target; everything else is other math).
  for (const auto& c : report.checks)
    if (c.is_math) ctx.target_math.insert(ctx.target_math.end(), c.sass_opcodes.begin(), c.sass_opcodes.end());
  for (auto& c : report.checks) {
    c.sizes.clear();
    c.executed = -1;
    c.flop_share = -1;
  }
  std::string other_failure, unaccounted_failure;
  std::map<std::string, int64_t> last_by_opcode;
  for (const auto& sc : sizes) {
    const executed_at_size e = map_counts(sass, sc);
    last_by_opcode = e.by_opcode;
    if (unaccounted_failure.empty() && !e.unaccounted.empty()) unaccounted_failure = unaccounted_note(e, sc.size);
    const std::string top = top_opcodes(e.by_opcode, 4);
    double share = 0;
    const std::string other = other_math_at_size(report, ctx, e, sc, share);
    report.other_math_share[sc.size] = share;
    if (other_failure.empty()) other_failure = other;
    for (auto& check : report.checks) {
      std::string note;
      const instruction_check::at_size at = judge_at_size(check, ctx, e, sc, top, note);
      if (!at.passed && check.note.find(note) == std::string::npos)
        check.note += (check.sizes.empty() || check.note.empty() ? "" : "; ") + note;
      if (check.executed < 0 || at.executed < check.executed) check.executed = at.executed;
      if (at.flop_share >= 0 && (check.flop_share < 0 || at.flop_share < check.flop_share)) check.flop_share = at.flop_share;
      check.sizes.push_back(at);
    }
  }
  // The figures of the last counted size (the timed one, counted last).
  std::vector<std::pair<std::string, int64_t>> top(last_by_opcode.begin(), last_by_opcode.end());
  std::sort(top.begin(), top.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  if (top.size() > 20) top.resize(20);
  report.executed_by_opcode = std::map<std::string, int64_t>(top.begin(), top.end());
  settle_checks(report, other_failure, unaccounted_failure);
}

namespace {
std::string join_opcodes(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& o : v) s += (s.empty() ? "" : "/") + o;
  return s.empty() ? "?" : s;
}
}  // namespace

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
