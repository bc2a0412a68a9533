#include "evaluator/pool/hw_cross_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace ptxbench {
namespace {

// The tensor-pipe kinds compared, and the instructions that only bound one:
// on Hopper (GH100, measured on an H100 with CUPTI 13.0: docs/gpu-runs.md
// 2026-12-06) sm__inst_executed_pipe_tensor_op_hmma counts every HGMMA and
// QGMMA a warp executes beside its HMMA (a 4096^3 bf16 or fp8 wgmma GEMM: the
// same 1.05M in the gmma and the hmma counter), so hmma's bound is HMMA + HGMMA +
// QGMMA, widened by HFMA2.MMA (which the counter may or may not count) and by
// IGMMA/BGMMA (not measured).
enum kind { gmma, hmma, hfma2_mma, imma, dmma, hq_gmma, ib_gmma, kinds };
const char* const k_kind_names[kinds] = {"gmma", "hmma", "HFMA2.MMA", "imma", "dmma", "HGMMA/QGMMA", "IGMMA/BGMMA"};

// The metric of each kind compared, an index into protocol::hw_check_metrics()
// (-1: not compared on its own, only in hmma's bound).
const int k_metric_of[kinds] = {0, 1, -1, 2, 3, -1, -1};

int kind_of(const sass_instruction& inst) {
  const std::string& op = inst.opcode;
  if (op == "HGMMA" || op == "QGMMA") return hq_gmma;
  if (op == "IGMMA" || op == "BGMMA") return ib_gmma;
  if (op == "HMMA") return hmma;
  if (op == "HFMA2" && inst.text.find("HFMA2.MMA") != std::string::npos) return hfma2_mma;
  if (op == "IMMA") return imma;
  if (op == "DMMA") return dmma;
  return -1;
}

std::string human(double v) {
  char buf[32];
  if (v >= 1e6) std::snprintf(buf, sizeof buf, "%.3gM", v / 1e6);
  else if (v >= 1e4) std::snprintf(buf, sizeof buf, "%.3gk", v / 1e3);
  else std::snprintf(buf, sizeof buf, "%.0f", v);
  return buf;
}

double allowed(double a, double b) { return k_hw_relative_tolerance * std::max(a, b) + k_hw_absolute_tolerance; }

}  // namespace

std::string compare_hw_counts(const sass_listing& sass, const size_counts& timed, const hw_counts& hw,
                              std::string& summary) {
  const std::vector<std::string>& k_metrics = protocol::hw_check_metrics();
  std::map<std::pair<std::string, uint64_t>, int> kind_at;
  for (const auto& inst : sass.instructions)
    if (int k = kind_of(inst); k >= 0) kind_at[{inst.function, inst.offset}] = k;
  std::vector<size_t> column(k_metrics.size(), size_t(-1));
  for (size_t i = 0; i < k_metrics.size(); ++i)
    for (size_t j = 0; j < hw.metrics.size(); ++j)
      if (hw.metrics[j] == k_metrics[i]) column[i] = j;
  for (size_t i = 0; i < k_metrics.size(); ++i)
    if (column[i] == size_t(-1)) return "the hardware counts lack " + k_metrics[i];
  if (hw.values.size() != timed.counts.size())
    return "the hardware counted " + std::to_string(hw.values.size()) + " launches, the counting passes " +
           std::to_string(timed.counts.size());
  std::string disagreement;
  summary.clear();
  for (size_t l = 0; l < timed.counts.size(); ++l) {
    double counted[kinds] = {};
    for (const auto& c : timed.counts[l])
      if (auto it = kind_at.find({c.function, c.pc_offset}); it != kind_at.end())
        counted[it->second] += double(c.executed);
    counted[gmma] = counted[hq_gmma] + counted[ib_gmma];
    for (int k = 0; k < kinds; ++k) {
      const int mi = k_metric_of[k];
      if (mi < 0) continue;
      const size_t col = column[size_t(mi)];
      const double seen = col < hw.values[l].size() ? hw.values[l][col] : 0.0;
      double low = counted[k], high = counted[k];
      if (k == hmma) {
        low += counted[hq_gmma];
        high = low + counted[hfma2_mma] + counted[ib_gmma];
      }
      const bool agrees = seen >= low - allowed(seen, low) && seen <= high + allowed(seen, high);
      const std::string expected = low == high ? human(low) : human(low) + " to " + human(high);
      if (low > 0 || high > 0 || seen > 0)
        summary += (summary.empty() ? "" : "; ") + std::string("launch ") + std::to_string(l) + " " + k_kind_names[k] +
                   " " + human(seen) + " uninstrumented / " + expected + " counted";
      if (!agrees && disagreement.empty())
        disagreement = "launch " + std::to_string(l) + " executed " + human(seen) + " " + k_kind_names[k] +
                       " instructions when not instrumented and " + expected + " when counted, at " + timed.size +
                       " (tolerance 1% + 64)";
    }
  }
  if (summary.empty()) summary = "no tensor-pipe instructions in either run";
  return disagreement;
}

}  // namespace ptxbench
