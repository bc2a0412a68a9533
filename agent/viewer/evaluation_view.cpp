// An evaluation's figures as HTML: the stage table and each stage's report.
#include <cstdio>
#include <sstream>

#include "agent/data/html.hpp"
#include "agent/viewer/pages.hpp"
#include "evaluator/api/evaluation.hpp"

namespace ptxbench::viewer {
namespace {

using data::html_escape;

std::string num(double v, int digits = 3) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::string stage_table(const evaluation_result& r) {
  std::ostringstream os;
  os << "<table class=\"stages\"><tr><th>stage</th><th>status</th><th>reason</th><th>ms</th></tr>\n";
  for (const auto& [s, o] : r.stages) {
    os << "<tr><td>" << to_string(s) << "</td><td class=\"status-" << to_string(o.status) << "\">"
       << to_string(o.status) << "</td><td>" << html_escape(o.reason) << "</td><td class=\"num\">" << num(o.time_ms)
       << "</td></tr>\n";
  }
  os << "</table>\n";
  return os.str();
}

std::string compile_block(const compile_report& c) {
  std::ostringstream os;
  if (c.kernels.empty() && c.diagnostics.empty()) return "";
  os << "<h4>compile (" << html_escape(c.arch) << ")</h4>\n";
  if (!c.kernels.empty()) {
    os << "<table><tr><th>kernel</th><th>registers</th><th>spill st/ld bytes</th><th>static smem</th></tr>\n";
    for (const auto& k : c.kernels) {
      os << "<tr><td>" << html_escape(k.kernel) << "</td><td class=\"num\">" << k.registers
         << "</td><td class=\"num\">" << k.spill_store_bytes << " / " << k.spill_load_bytes
         << "</td><td class=\"num\">" << k.static_shared_bytes << "</td></tr>\n";
    }
    os << "</table>\n";
  }
  for (const auto& d : c.diagnostics) {
    os << "<p>" << html_escape(d.severity) << " at line " << d.line << ": " << html_escape(d.message) << "</p>\n";
    if (!d.quoted.empty()) os << "<pre>" << html_escape(d.quoted) << "</pre>\n";
  }
  return os.str();
}

std::string correctness_block(const correctness_report& c) {
  if (c.outputs.empty()) return "";
  std::ostringstream os;
  os << "<h4>correctness</h4>\n<table><tr><th>tensor</th><th>size</th><th>seed</th><th>max abs</th><th>max rel</th>"
     << "<th>mismatch</th><th>NaN</th><th>untouched</th><th>where</th><th>ok</th></tr>\n";
  for (const auto& o : c.outputs) {
    os << "<tr><td>" << html_escape(o.tensor) << "</td><td>" << html_escape(o.size) << "</td><td>"
       << (o.hidden_seed ? "hidden" : std::to_string(o.seed)) << "</td><td class=\"num\">" << num(o.max_abs_error)
       << "</td><td class=\"num\">" << num(o.max_rel_error) << "</td><td class=\"num\">"
       << num(o.mismatch_fraction) << "</td><td class=\"num\">" << o.nan_count << "</td><td class=\"num\">"
       << o.untouched_count << "</td><td>" << html_escape(o.where) << "</td><td>" << (o.passed ? "yes" : "no")
       << "</td></tr>\n";
  }
  os << "</table>\n";
  if (!c.note.empty()) os << "<p>" << html_escape(c.note) << "</p>\n";
  return os.str();
}

std::string instruction_block(const instruction_report& ins) {
  if (ins.checks.empty()) return "";
  std::ostringstream os;
  os << "<h4>instructions</h4>\n<table><tr><th>PTX</th><th>in PTX</th><th>SASS</th><th>in SASS</th>"
     << "<th>executed</th><th>FLOP share</th><th>ok</th><th>note</th></tr>\n";
  for (const auto& c : ins.checks) {
    std::string sass;
    for (const auto& s : c.sass_opcodes) sass += (sass.empty() ? "" : ", ") + s;
    os << "<tr><td>" << html_escape(c.ptx) << "</td><td class=\"num\">" << c.ptx_count << "</td><td>"
       << html_escape(sass) << "</td><td class=\"num\">" << (c.sass_count < 0 ? "?" : std::to_string(c.sass_count))
       << "</td><td class=\"num\">" << (c.executed < 0 ? "not measured" : std::to_string(c.executed))
       << "</td><td class=\"num\">" << (c.flop_share < 0 ? "-" : num(c.flop_share)) << "</td><td>"
       << (c.passed ? "yes" : "no") << "</td><td>" << html_escape(c.note) << "</td></tr>\n";
  }
  os << "</table>\n";
  return os.str();
}

std::string performance_block(const performance_report& p) {
  std::ostringstream os;
  os << "<h4>performance at " << html_escape(p.size) << "</h4>\n<table class=\"performance\">"
     << "<tr><th>candidate ms</th><th>baseline ms</th><th>baseline</th><th>speedup</th><th>threshold</th>"
     << "<th>TFLOP/s</th><th>% of peak</th></tr>\n<tr><td class=\"num\">" << num(p.candidate_ms, 4)
     << " &plusmn;" << num(100 * p.candidate_rel_spread, 2) << "%</td><td class=\"num\">" << num(p.baseline_ms, 4)
     << "</td><td>" << html_escape(p.baseline_name) << "</td><td class=\"num\">" << num(p.speedup)
     << "</td><td class=\"num\">" << num(p.threshold) << "</td><td class=\"num\">" << num(p.candidate_tflops, 4)
     << "</td><td class=\"num\">" << num(p.pct_of_peak) << "</td></tr>\n</table>\n";
  if (p.below_floor) os << "<p class=\"status-failed\">time below the physical floor (" << num(p.floor_ms) << " ms)</p>\n";
  return os.str();
}

}  // namespace

std::string evaluation_section(const evaluation_row& e) {
  std::ostringstream os;
  os << "<div class=\"evaluation\"><h3>evaluation " << evaluation_badge(e) << "</h3>\n<p>evaluator "
     << html_escape(e.evaluator_version) << " on " << html_escape(e.gpu) << "; correct: " << (e.correct ? "yes" : "no")
     << ", instructions executed: " << (e.instructions_ok ? "yes" : "no") << ", speedup: "
     << (e.speedup ? num(*e.speedup) : std::string("-")) << "</p>\n";
  try {
    auto r = evaluation_result_from_json(e.result);
    if (!r.headline.empty()) os << "<p class=\"headline\"><b>" << html_escape(r.headline) << "</b></p>\n";
    os << stage_table(r) << compile_block(r.compile);
    if (r.runtime && !r.runtime->error.empty()) {
      os << "<h4>runtime</h4>\n<p>" << html_escape(r.runtime->error) << " (launch " << r.runtime->launch_index
         << ", " << html_escape(r.runtime->size) << ")</p>\n";
    }
    os << correctness_block(r.correctness) << instruction_block(r.instructions);
    if (r.performance) os << performance_block(*r.performance);
  } catch (const std::exception& ex) {
    // A result written by another evaluator version may not parse today: show it raw.
    os << "<p>result could not be read (" << html_escape(ex.what()) << "); raw:</p>\n<pre>"
       << html_escape(e.result.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)) << "</pre>\n";
  }
  os << "</div>\n";
  return os.str();
}

}  // namespace ptxbench::viewer
