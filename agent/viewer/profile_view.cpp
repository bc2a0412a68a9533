// An evaluation's profile as HTML beside the candidate's PTX: the kernel
// figures (the figures agent/prompt/format_profile.cpp gives the model, with
// the same formats), the roofline line, the plain reason of a part that could
// not run, and the PTX listing with the hottest lines marked.
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include "agent/data/html.hpp"
#include "agent/viewer/pages.hpp"
#include "evaluator/api/evaluation.hpp"

namespace ptxbench::viewer {
namespace {

using data::html_escape;

// Not measured (-1), or not finite (stored as null, read back as NaN): "-".
std::string figure(double v, const char* fmt) {
  if (!(v >= 0) || !std::isfinite(v)) return "-";
  char b[48];
  std::snprintf(b, sizeof b, fmt, v);
  return b;
}

std::string pct(double v) { return figure(v, "%.0f%%"); }
std::string count(int v) { return v < 0 ? "-" : std::to_string(v); }

// One row per figure, one column per kernel: the candidate's launches first,
// then the library baseline's, whatever order they were stored in.
std::string kernel_table(const profile_report& p) {
  std::vector<const profile_kernel*> columns;
  for (bool baseline : {false, true})
    for (const auto& k : p.kernels)
      if (k.baseline == baseline) columns.push_back(&k);
  struct row {
    const char* name;
    std::string (*value)(const profile_kernel&);
  };
  static const row rows[] = {
      {"time (us)", [](const profile_kernel& k) { return figure(k.duration_us, "%.1f"); }},
      {"SM busy", [](const profile_kernel& k) { return pct(k.sm_throughput_pct); }},
      {"tensor pipe", [](const profile_kernel& k) { return pct(k.tensor_pipe_pct); }},
      {"DRAM", [](const profile_kernel& k) { return pct(k.dram_throughput_pct); }},
      {"L2", [](const profile_kernel& k) { return pct(k.l2_throughput_pct); }},
      {"L2 hit", [](const profile_kernel& k) { return pct(k.l2_hit_rate_pct); }},
      {"occupancy", [](const profile_kernel& k) { return pct(k.achieved_occupancy_pct); }},
      {"smem bank conflicts", [](const profile_kernel& k) { return figure(k.smem_bank_conflicts, "%.0f"); }},
      {"regs/thread", [](const profile_kernel& k) { return count(k.registers_per_thread); }},
      {"smem/CTA", [](const profile_kernel& k) { return count(k.shared_bytes_per_cta); }},
  };
  std::ostringstream os;
  os << "<table class=\"profile-kernels\"><tr><th>kernel</th>";
  for (const auto* k : columns)
    os << "<th class=\"" << (k->baseline ? "baseline" : "candidate") << "\">" << html_escape(k->name) << "</th>";
  os << "</tr>\n";
  for (const auto& r : rows) {
    os << "<tr><th>" << r.name << "</th>";
    for (const auto* k : columns)
      os << "<td class=\"num " << (k->baseline ? "baseline" : "candidate") << "\">" << r.value(*k) << "</td>";
    os << "</tr>\n";
  }
  os << "</table>\n";
  return os.str();
}

std::string roofline_line(const profile_roofline& r) {
  const std::string words = roofline_words(r, "the candidate reaches");
  if (words.empty()) return "";
  std::string line = html_escape(words);
  if (r.dram_gbps > 0) line += "; measured DRAM traffic " + figure(r.dram_gbps, "%.0f") + " GB/s";
  return "<p class=\"roofline\"><b>roofline:</b> " + line + ".</p>\n";
}

std::string share_text(double share) { return figure(100.0 * share, "%.0f%%"); }

// "23% of samples, mostly waiting on a barrier (80% of its samples)"
std::string line_summary(const profile_line& l) {
  std::string words = l.stall_words.empty() ? l.stall : l.stall_words;
  return share_text(l.share) + " of samples" + (words.empty() ? "" : ", mostly " + words) + " (" +
         share_text(l.stall_share) + " of its samples)" + blame_words(l);
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    if (!line.empty() && line.back() == '\r') line.pop_back();
    lines.push_back(std::move(line));
    start = end + 1;
  }
  return lines;
}

// The waits on local memory (spills, .local arrays) and the lines that wait
// most, linked to the listing: the feedback's own paragraph, placed where the
// feedback places it (leads_with_local_memory).
std::string local_memory_line(const profile_report& p, const std::function<std::string(int)>& link) {
  const std::string words = local_memory_words(p);
  if (words.empty()) return "";
  std::string out = "<p class=\"local-memory\"><b>local memory:</b> " + html_escape(words);
  for (size_t i = 0; i < p.local_wait_top.size() && i < 3; ++i)
    out += (i == 0 ? "; most at " : ", ") + link(p.local_wait_top[i].line) + " <code>" +
           html_escape(p.local_wait_top[i].text) + "</code> (" + share_text(p.local_wait_top[i].share) + ")";
  return out + ".</p>\n";
}

}  // namespace

std::optional<profile_report> evaluation_profile(const evaluation_row& e) {
  if (!e.result.is_object() || !e.result.contains("profile") || e.result["profile"].is_null()) return std::nullopt;
  try {
    return evaluation_result_from_json(e.result).profile;
  } catch (const std::exception&) {
    return std::nullopt;  // the evaluation section shows such a result raw
  }
}

std::string profile_section(const profile_report& p, const std::string& ptx, const std::string& anchor) {
  std::ostringstream os;
  os << "<div class=\"profile\" id=\"" << html_escape(anchor) << "-profile\">\n<h3>profile at "
     << html_escape(p.size.empty() ? "the timed size" : p.size) << "</h3>\n<p class=\"profile-meta\">"
     << "hardware counters and PC sampling; throughputs are % of the device's peak";
  if (p.samples > 0) os << "; " << p.samples << " PC samples, " << share_text(p.unmapped_share) << " on no line of the PTX";
  if (p.cached) os << "; reused from an earlier evaluation of the same candidate";
  os << "</p>\n";
  if (!p.kernels.empty()) {
    os << kernel_table(p);
  } else {
    os << "<p class=\"profile-missing\">kernel counters: not available ("
       << html_escape(p.kernels_error.empty() ? "not measured" : p.kernels_error) << ")</p>\n";
  }
  os << roofline_line(p.roofline);
  if (p.lines.empty()) {
    os << "<p class=\"profile-missing\">stall reasons per line: not available ("
       << html_escape(p.lines_error.empty() ? "not measured" : p.lines_error) << ")</p>\n</div>\n";
    return os.str();
  }
  const std::vector<std::string> lines = split_lines(ptx);
  auto line_id = [&](int n) { return html_escape(anchor) + "-L" + std::to_string(n); };
  auto in_listing = [&](int n) { return n >= 1 && static_cast<size_t>(n) <= lines.size(); };
  auto link = [&](int n) {
    return in_listing(n) ? "<a href=\"#" + line_id(n) + "\">line " + std::to_string(n) + "</a>"
                         : "line " + std::to_string(n);
  };
  const std::string local = local_memory_line(p, link);
  const bool local_first = leads_with_local_memory(p);
  if (local_first) os << local;
  os << "<h4>hottest lines of the PTX (PC samples)</h4>\n<ol class=\"hot-lines\">\n";
  for (const auto& l : p.lines)
    os << "<li>" << link(l.line) << " <code>" << html_escape(l.text) << "</code>: " << html_escape(line_summary(l))
       << "</li>\n";
  os << "</ol>\n";
  if (!local_first) os << local;
  if (lines.empty()) return os.str() + "</div>\n";
  // The hottest entry of a line wins should a line be listed twice.
  std::map<int, const profile_line*> hot;
  for (const auto& l : p.lines) hot.emplace(l.line, &l);
  os << "<h4>PTX with the hot lines marked</h4>\n<table class=\"ptx-listing\">\n";
  for (size_t i = 0; i < lines.size(); ++i) {
    const int n = static_cast<int>(i) + 1;
    auto h = hot.find(n);
    os << "<tr id=\"" << line_id(n) << "\"";
    if (h != hot.end()) {
      const std::string title = html_escape("line " + std::to_string(n) + ": " + line_summary(*h->second));
      os << " class=\"hot\" title=\"" << title << "\"><td class=\"ln\">" << n
         << "</td><td class=\"heat\"><span class=\"hot-share\" aria-label=\"" << title << "\">"
         << share_text(h->second->share) << "</span></td>";
    } else {
      os << "><td class=\"ln\">" << n << "</td><td class=\"heat\"></td>";
    }
    os << "<td class=\"code\">" << html_escape(lines[i]) << "</td></tr>\n";
  }
  os << "</table>\n</div>\n";
  return os.str();
}

}  // namespace ptxbench::viewer
