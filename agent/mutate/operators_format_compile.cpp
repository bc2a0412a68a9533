// Operators aimed at the static stages a model trips over first: the manifest
// (format) and ptxas (compile). Every one is judged through the real stages on
// any machine, GPU or not.
#include <algorithm>

#include "agent/mutate/mutation.hpp"
#include "agent/mutate/ptx_edit.hpp"

namespace ptxbench::mutate {
namespace {

using json = nlohmann::json;

std::optional<mutant> manifest_missing(const task&, const solution& s, std::mt19937_64&) {
  return mutant{s.ptx, "", false, "the ```json launch manifest block left out of the reply"};
}

// A launch with parameters, chosen by the rng; nullptr when none has any.
json* pick_launch_with_params(json& m, std::mt19937_64& rng) {
  std::vector<json*> with;
  for (auto& l : m["launches"])
    if (l.contains("params") && l["params"].is_array() && !l["params"].empty()) with.push_back(&l);
  return with.empty() ? nullptr : with[pick(rng, with.size())];
}

std::string binding_kind(const json& p) { return p.is_object() && !p.empty() ? p.begin().key() : "?"; }

std::optional<mutant> params_count_wrong(const task&, const solution& s, std::mt19937_64& rng) {
  auto m = parse_manifest_json(s.manifest_text);
  if (!m) return std::nullopt;
  json* launch = pick_launch_with_params(*m, rng);
  if (!launch) return std::nullopt;
  auto& params = (*launch)["params"];
  size_t i = pick(rng, params.size());
  std::string what = binding_kind(params[i]);
  params.erase(params.begin() + static_cast<std::ptrdiff_t>(i));
  return mutant{s.ptx, dump_manifest(*m), true,
                "launch " + launch->value("kernel", "?") + ": parameter " + std::to_string(i) + " (" + what +
                    ") dropped from the manifest"};
}

std::optional<mutant> params_order_wrong(const task&, const solution& s, std::mt19937_64& rng) {
  auto m = parse_manifest_json(s.manifest_text);
  if (!m) return std::nullopt;
  json* launch = pick_launch_with_params(*m, rng);
  if (!launch) return std::nullopt;
  auto& params = (*launch)["params"];
  // Only neighbours of different kinds: two buffers swapped pass the check
  // against the .entry and fail later, at correctness.
  std::vector<size_t> swappable;
  for (size_t i = 0; i + 1 < params.size(); ++i)
    if (binding_kind(params[i]) != binding_kind(params[i + 1])) swappable.push_back(i);
  if (swappable.empty()) return std::nullopt;
  size_t i = swappable[pick(rng, swappable.size())];
  std::swap(params[i], params[i + 1]);
  return mutant{s.ptx, dump_manifest(*m), true,
                "launch " + launch->value("kernel", "?") + ": parameters " + std::to_string(i) + " and " +
                    std::to_string(i + 1) + " swapped in the manifest"};
}

std::optional<mutant> entry_mismatch(const task&, const solution& s, std::mt19937_64& rng) {
  auto m = parse_manifest_json(s.manifest_text);
  if (!m) return std::nullopt;
  auto& launches = (*m)["launches"];
  auto& launch = launches[pick(rng, launches.size())];
  if (!launch.contains("kernel") || !launch["kernel"].is_string()) return std::nullopt;
  const std::string name = launch["kernel"].get<std::string>();
  if (rng() % 2 == 0) {
    launch["kernel"] = name + "_kernel";
    return mutant{s.ptx, dump_manifest(*m), true, "manifest names kernel " + name + "_kernel, the PTX " + name};
  }
  // The model renamed the .entry but not the manifest.
  const std::regex entry("\\.entry\\s+" + name + "\\s*\\(");
  std::smatch hit;
  if (!std::regex_search(s.ptx, hit, entry)) return std::nullopt;
  std::string ptx = s.ptx;
  ptx.replace(static_cast<size_t>(hit.position(0)), static_cast<size_t>(hit.length(0)),
              ".entry " + name + "_v2(");
  return mutant{ptx, s.manifest_text, true, ".entry renamed to " + name + "_v2, the manifest still says " + name};
}

std::optional<mutant> replace_in_random_line(const solution& s, std::mt19937_64& rng,
                                             const std::vector<std::pair<std::string, std::string>>& pairs,
                                             const std::string& what) {
  auto lines = split_lines(s.ptx);
  std::vector<std::pair<size_t, size_t>> hits;  // (line, pair)
  for (size_t i = 0; i < lines.size(); ++i) {
    if (!is_instruction(lines[i])) continue;
    for (size_t p = 0; p < pairs.size(); ++p)
      if (lines[i].find(pairs[p].first) != std::string::npos) hits.emplace_back(i, p);
  }
  if (hits.empty()) return std::nullopt;
  auto [line, p] = hits[pick(rng, hits.size())];
  auto& l = lines[line];
  l.replace(l.find(pairs[p].first), pairs[p].first.size(), pairs[p].second);
  return mutant{join_lines(lines), s.manifest_text, true,
                what + " at line " + std::to_string(line + 1) + ": " + pairs[p].first + " -> " + pairs[p].second};
}

std::optional<mutant> misspelled_modifier(const task&, const solution& s, std::mt19937_64& rng) {
  return replace_in_random_line(s, rng,
                                {{".aligned", ".algned"},
                                 {".shared::cta", ".shared::cat"},
                                 {".approx", ".aprox"},
                                 {".sync", ".snyc"},
                                 {".global", ".gloabl"},
                                 {".async", ".asnyc"}},
                                "misspelled modifier");
}

std::optional<mutant> wrong_state_space(const task&, const solution& s, std::mt19937_64& rng) {
  return replace_in_random_line(s, rng,
                                {{"mbarrier.init.shared::cta", "mbarrier.init.global"},
                                 {"mbarrier.arrive.shared::cta", "mbarrier.arrive.global"},
                                 {"cp.async.cg.shared.global", "cp.async.cg.global.shared"},
                                 {"ldmatrix.sync.aligned.m8n8.x4.shared", "ldmatrix.sync.aligned.m8n8.x4.global"},
                                 {"st.global.", "st.const."}},
                                "wrong state space");
}

std::optional<mutant> wrong_register_type(const task&, const solution& s, std::mt19937_64& rng) {
  // A 32-bit integer operation on %r registers typed as 64-bit: the operand
  // sizes no longer match the registers'.
  static const std::regex op(R"(^\s*(add|sub|mul\.lo|and|or|xor|shl|shr)\.(s32|u32|b32)\s+%r\d+,)");
  auto lines = split_lines(s.ptx);
  auto hits = matching_lines(lines, op);
  if (hits.empty()) return std::nullopt;
  size_t i = hits[pick(rng, hits.size())];
  std::smatch m;
  std::regex_search(lines[i], m, op);
  const std::string from = "." + m[2].str();
  const std::string to = from.substr(0, 2) + "64";
  size_t at = lines[i].find(from);
  lines[i].replace(at, from.size(), to);
  return mutant{join_lines(lines), s.manifest_text, true,
                "line " + std::to_string(i + 1) + ": " + m[1].str() + from + " -> " + m[1].str() + to +
                    " on 32-bit registers"};
}

std::optional<mutant> undeclared_register(const task&, const solution& s, std::mt19937_64& rng) {
  auto declared = declared_registers(s.ptx, "%r");
  if (!declared) return std::nullopt;
  // A source operand (after the first comma) that is a %r register.
  static const std::regex use(R"(,\s*(%r\d+)\b)");
  auto lines = split_lines(s.ptx);
  auto hits = matching_lines(lines, use);
  if (hits.empty()) return std::nullopt;
  size_t i = hits[pick(rng, hits.size())];
  std::smatch m;
  std::regex_search(lines[i], m, use);
  const std::string fresh = "%r" + std::to_string(*declared + static_cast<int>(rng() % 8));
  lines[i].replace(static_cast<size_t>(m.position(1)), static_cast<size_t>(m.length(1)), fresh);
  return mutant{join_lines(lines), s.manifest_text, true,
                "line " + std::to_string(i + 1) + ": " + m[1].str() + " -> " + fresh + " (declared %r<" +
                    std::to_string(*declared) + ">)"};
}

}  // namespace

void add_format_compile_operators(std::vector<mutation_operator>& out) {
  out.push_back({"manifest_missing", stage::format, "the reply has no ```json manifest block", manifest_missing});
  out.push_back({"params_count_wrong", stage::format, "one manifest parameter dropped", params_count_wrong});
  out.push_back({"params_order_wrong", stage::format, "two manifest parameters of different kinds swapped",
                 params_order_wrong});
  out.push_back({"entry_mismatch", stage::format, "manifest kernel name and .entry differ", entry_mismatch});
  out.push_back({"misspelled_modifier", stage::compile, "one instruction modifier misspelled", misspelled_modifier});
  out.push_back({"wrong_register_type", stage::compile, "a 32-bit integer op typed 64-bit", wrong_register_type});
  out.push_back({"undeclared_register", stage::compile, "a source register beyond the declared range",
                 undeclared_register});
  out.push_back({"wrong_state_space", stage::compile, "an instruction given a state space it does not take",
                 wrong_state_space});
}

}  // namespace ptxbench::mutate
