// Plain-text renderings of evaluation results, shared by the feedback
// templates and the CLI. Written for a model to act on: short, specific.
#include <cstdio>
#include <sstream>

#include "agent/prompt/prompt.hpp"

namespace ptxbench {

namespace {
std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}
}  // namespace

std::string format_diagnostics(const compile_report& c) {
  std::ostringstream o;
  int shown = 0;
  for (const auto& d : c.diagnostics) {
    if (d.severity != "error" && shown >= 3) continue;
    if (++shown > 8) {
      o << "(" << c.diagnostics.size() - 8 << " more messages omitted)\n";
      break;
    }
    o << d.severity << (d.line > 0 ? " at line " + std::to_string(d.line) : "") << ": " << d.message << "\n";
    if (!d.quoted.empty()) o << d.quoted << (d.quoted.back() == '\n' ? "" : "\n");
  }
  if (shown == 0 && !c.log.empty()) o << c.log.substr(0, 4000) << "\n";
  return o.str();
}

std::string format_resources(const compile_report& c) {
  std::ostringstream o;
  for (const auto& k : c.kernels)
    o << "- " << k.kernel << ": " << k.registers << " registers, " << k.static_shared_bytes << " B static shared, "
      << k.stack_bytes << " B stack, spills " << k.spill_store_bytes << " B stored / " << k.spill_load_bytes
      << " B loaded\n";
  return o.str().empty() ? "- (no kernels reported)\n" : o.str();
}

std::string format_instruction_table(const instruction_report& r) {
  std::ostringstream o;
  o << "| instruction | in PTX | SASS opcodes | in SASS | executed | share of FLOPs | ok |\n";
  o << "|---|---|---|---|---|---|---|\n";
  for (const auto& c : r.checks) {
    std::string ops;
    for (const auto& s : c.sass_opcodes) ops += (ops.empty() ? "" : "/") + s;
    o << "| " << c.ptx << " | " << c.ptx_count << " | " << ops << " | "
      << (c.sass_count < 0 ? std::string("?") : std::to_string(c.sass_count)) << " | "
      << (c.executed < 0 ? std::string("not measured") : std::to_string(c.executed)) << " | "
      << (c.flop_share < 0 ? std::string("-") : fmt("%.0f%%", 100.0 * c.flop_share)) << " | "
      << (c.passed ? "yes" : "no") << " |\n";
    if (!c.note.empty()) o << "  note: " << c.note << "\n";
  }
  if (!r.dynamic_ran) o << "(executed counts were not measured in this evaluation)\n";
  return o.str();
}

std::string format_correctness(const correctness_report& c, bool include_hidden_values) {
  std::ostringstream o;
  for (const auto& x : c.outputs) {
    if (x.passed) continue;
    if (x.hidden_seed && !include_hidden_values) {
      o << "- " << x.tensor << " at " << x.size << ": wrong on a hidden seed (figures withheld)\n";
      continue;
    }
    o << "- " << x.tensor << " at " << x.size << (x.timed_run ? " in a timed sample" : "") << " (seed " << x.seed
      << "): max abs err "
      << fmt("%.4g", x.max_abs_error) << ", max rel err " << fmt("%.4g", x.max_rel_error) << ", rel L2 "
      << fmt("%.3g", x.rel_l2_error) << ", mismatches " << fmt("%.4f%%", 100.0 * x.mismatch_fraction);
    // At a hidden size the counts would tell its extent (output_check::hidden_size).
    if (x.hidden_size)
      o << ", NaNs " << (x.nan_count > 0 ? "some" : "none") << ", untouched " << (x.untouched_count > 0 ? "some" : "none")
        << "\n";
    else
      o << ", NaNs " << x.nan_count << ", untouched " << x.untouched_count << " of " << x.elements << "\n";
    if (!x.where.empty()) o << "  where: " << x.where << "\n";
  }
  if (!c.guards_intact) o << "- a write landed outside an output buffer (guard bytes changed)\n";
  if (!c.inputs_unchanged) o << "- an input tensor was modified\n";
  if (!c.stable_across_calls) o << "- the output did not follow fresh inputs across calls (results reused?)\n";
  if (!c.note.empty()) o << "- " << c.note << "\n";
  return o.str().empty() ? "- (all outputs within tolerance)\n" : o.str();
}

std::string format_performance(const performance_report& p) {
  std::ostringstream o;
  o << "- size: " << p.size << "\n"
    << "- candidate: " << fmt("%.4f", p.candidate_ms) << " ms (±" << fmt("%.2f%%", 100 * p.candidate_rel_spread)
    << "), " << fmt("%.1f", p.candidate_tflops) << " TFLOP/s, " << fmt("%.1f%%", p.pct_of_peak)
    << " of measured peak\n"
    << "- baseline (" << p.baseline_name << "): " << fmt("%.4f", p.baseline_ms) << " ms, "
    << fmt("%.1f", p.baseline_tflops) << " TFLOP/s\n"
    << "- speedup: " << fmt("%.3f", p.speedup) << " (threshold " << fmt("%.2f", p.threshold) << ")\n";
  if (p.below_floor) o << "- flagged: time below the physical floor of " << fmt("%.4f", p.floor_ms) << " ms\n";
  return o.str();
}

}  // namespace ptxbench
