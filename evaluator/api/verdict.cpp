#include "evaluator/api/verdict.hpp"

namespace ptxbench {
namespace {

bool has_verdict(const standing& s) {
  const verdict_kind k = verdict_of(s).kind;
  return k != verdict_kind::none && k != verdict_kind::error;
}

}  // namespace

standing standing_of(const evaluation_result& r) {
  standing s;
  s.judged = true;
  for (const auto& [st, outcome] : r.stages) s.stages[static_cast<size_t>(st)] = outcome.status;
  if (r.passed) s.stages.fill(stage_status::passed);
  s.speedup = r.speedup();
  return s;
}

verdict verdict_of(const standing& s) {
  if (!s.judged) return {};
  // A failed stage comes first, wherever an evaluator error sits: a failure
  // is a check of the candidate that completed, which no error of the harness
  // in another stage makes untrue, and a candidate that could provoke an
  // evaluator error would otherwise escape its verdict (docs/decisions.md).
  for (int i = 0; i < stage_count; ++i)
    if (s.stages[i] == stage_status::failed) return {verdict_kind::failed, static_cast<stage>(i)};
  for (int i = 0; i < stage_count; ++i)
    if (s.stages[i] == stage_status::error) return {verdict_kind::error, static_cast<stage>(i)};
  for (int i = 0; i < stage_count; ++i)
    if (s.stages[i] != stage_status::passed) return {verdict_kind::partial, static_cast<stage>(i)};
  return {verdict_kind::passed, stage::performance};
}

verdict verdict_of(const evaluation_result& r) { return verdict_of(standing_of(r)); }

std::string verdict_name(const verdict& v) {
  switch (v.kind) {
    case verdict_kind::none: return "none";
    case verdict_kind::error: return "error";
    case verdict_kind::failed: return to_string(v.at);
    case verdict_kind::partial: return "partial";
    case verdict_kind::passed: return "passed";
  }
  return "none";
}

std::string verdict_name(const evaluation_result& r) { return verdict_name(verdict_of(r)); }

std::optional<verdict> parse_verdict_name(const std::string& name) {
  if (name == "none") return verdict{};
  if (name == "error") return verdict{verdict_kind::error, stage::format};
  if (name == "partial") return verdict{verdict_kind::partial, stage::format};
  if (name == "passed") return verdict{verdict_kind::passed, stage::performance};
  for (int i = 0; i < stage_count; ++i)
    if (name == to_string(static_cast<stage>(i))) return verdict{verdict_kind::failed, static_cast<stage>(i)};
  return std::nullopt;
}

int stage_score(stage_status s) {
  return s == stage_status::passed ? 2 : s == stage_status::failed ? 0 : 1;
}

bool got_further(const standing& a, const standing& b) {
  const bool va = has_verdict(a), vb = has_verdict(b);
  if (va != vb) return va;
  if (!va) return false;
  for (int i = 0; i < stage_count; ++i) {
    const int sa = stage_score(a.stages[i]), sb = stage_score(b.stages[i]);
    if (sa != sb) return sa > sb;
  }
  return false;
}

bool better(const standing& a, const standing& b) {
  if (got_further(a, b) || got_further(b, a)) return got_further(a, b);
  if (!has_verdict(a)) return false;  // two without a verdict are equal whatever they measured
  if (a.speedup.has_value() != b.speedup.has_value()) return a.speedup.has_value();
  return a.speedup && *a.speedup > *b.speedup;
}

bool got_further(const evaluation_result& a, const evaluation_result& b) {
  return got_further(standing_of(a), standing_of(b));
}

bool better(const evaluation_result& a, const evaluation_result& b) { return better(standing_of(a), standing_of(b)); }

}  // namespace ptxbench
