// Operators aimed at correctness: kernels that run to completion and write
// wrong numbers. Without a GPU they are judged on the static stages only.
#include <algorithm>
#include <map>

#include "agent/mutate/mutation.hpp"
#include "agent/mutate/ptx_edit.hpp"

namespace ptxbench::mutate {
namespace {

std::string line_no(size_t i) { return "line " + std::to_string(i + 1); }

std::optional<mutant> tile_bound_off_by_one(const task&, const solution& s, std::mt19937_64& rng) {
  static const std::regex cmp(R"(setp\.(lt|le|gt|ge)\.(s32|u32))");
  auto lines = split_lines(s.ptx);
  auto hits = matching_lines(lines, cmp);
  if (hits.empty()) return std::nullopt;
  size_t i = hits[pick(rng, hits.size())];
  std::smatch m;
  std::regex_search(lines[i], m, cmp);
  static const std::map<std::string, std::string> flip = {{"lt", "le"}, {"le", "lt"}, {"gt", "ge"}, {"ge", "gt"}};
  const std::string now = "setp." + flip.at(m[1].str()) + "." + m[2].str();
  const std::string was = m[0].str();
  lines[i].replace(static_cast<size_t>(m.position(0)), was.size(), now);
  return mutant{join_lines(lines), s.manifest_text, true, line_no(i) + ": bound check " + was + " -> " + now};
}

std::optional<mutant> descriptor_swizzle(const task&, const solution& s, std::mt19937_64& rng) {
  // wgmma shared-memory descriptors carry the swizzle mode in bits 62-63
  // (1 = 128B, 2 = 64B, 3 = 32B); NVVM folds them into one or.b64 constant.
  static const std::regex orc(R"(or\.b64\s+%rd\d+,\s*%rd\d+,\s*(-?\d+);)");
  auto lines = split_lines(s.ptx);
  std::vector<std::string> constants;
  for (size_t i : matching_lines(lines, orc)) {
    std::smatch m;
    std::regex_search(lines[i], m, orc);
    uint64_t v = static_cast<uint64_t>(std::stoll(m[1].str()));
    if ((v >> 62) != 0 && std::find(constants.begin(), constants.end(), m[1].str()) == constants.end())
      constants.push_back(m[1].str());
  }
  if (constants.empty()) return std::nullopt;
  const std::string was = constants[pick(rng, constants.size())];
  uint64_t v = static_cast<uint64_t>(std::stoll(was));
  uint64_t mode = v >> 62;
  uint64_t wrong = mode == 1 ? 2 : 1;
  const std::string now = std::to_string(static_cast<int64_t>((v & ~(uint64_t{3} << 62)) | (wrong << 62)));
  int changed = 0;
  for (auto& l : lines) {
    size_t at = l.find(", " + was + ";");
    if (at == std::string::npos || l.find("or.b64") == std::string::npos) continue;
    l.replace(at + 2, was.size(), now);
    ++changed;
  }
  static const char* k_names[] = {"none", "128B", "64B", "32B"};
  return mutant{join_lines(lines), s.manifest_text, true,
                std::to_string(changed) + " wgmma descriptors: swizzle " + k_names[mode] + " -> " + k_names[wrong]};
}

std::optional<mutant> wrong_scale(const task&, const solution& s, std::mt19937_64& rng) {
  auto m = parse_manifest_json(s.manifest_text);
  if (!m) return std::nullopt;
  std::vector<std::string> params;  // PTX names of the scalar "scale" parameters
  for (const auto& l : (*m)["launches"]) {
    if (!l.contains("params") || !l["params"].is_array() || !l.contains("kernel")) continue;
    for (size_t i = 0; i < l["params"].size(); ++i)
      if (l["params"][i].is_object() && l["params"][i].value("scalar", "") == "scale")
        params.push_back(l["kernel"].get<std::string>() + "_param_" + std::to_string(i));
  }
  auto lines = split_lines(s.ptx);
  std::vector<std::pair<size_t, std::string>> loads;  // (line, register)
  for (const auto& p : params) {
    const std::regex load("ld\\.param\\.f32\\s+(%f\\d+),\\s*\\[" + p + "\\];");
    for (size_t i : matching_lines(lines, load)) {
      std::smatch hit;
      std::regex_search(lines[i], hit, load);
      loads.emplace_back(i, hit[1].str());
    }
  }
  if (loads.empty()) return std::nullopt;
  auto [i, reg] = loads[pick(rng, loads.size())];
  // Half the scale: the factor a model gets wrong when it folds log2(e) or 1/sqrt(D) in twice or not at all.
  lines.insert(lines.begin() + static_cast<std::ptrdiff_t>(i) + 1,
               indent_of(lines[i]) + "mul.f32 \t" + reg + ", " + reg + ", 0f3F000000;");
  return mutant{join_lines(lines), s.manifest_text, true, line_no(i) + ": the softmax scale halved after its load"};
}

// selp lines that choose -inf (the causal mask) and their predicate.
struct mask_select {
  size_t line;
  std::string dest, value, predicate;
};

std::vector<mask_select> mask_selects(const std::vector<std::string>& lines) {
  static const std::regex a(R"(selp\.f32\s+(%f\d+),\s*0fFF800000,\s*(%f\d+),\s*(%p\d+);)");
  static const std::regex b(R"(selp\.f32\s+(%f\d+),\s*(%f\d+),\s*0fFF800000,\s*(%p\d+);)");
  std::vector<mask_select> out;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::smatch m;
    if (std::regex_search(lines[i], m, a) || std::regex_search(lines[i], m, b))
      out.push_back({i, m[1].str(), m[2].str(), m[3].str()});
  }
  return out;
}

std::optional<mutant> causal_mask_missing(const task& t, const solution& s, std::mt19937_64&) {
  if (!t.causal) return std::nullopt;
  auto lines = split_lines(s.ptx);
  auto selects = mask_selects(lines);
  if (selects.empty()) return std::nullopt;
  for (const auto& sel : selects) lines[sel.line] = indent_of(lines[sel.line]) + "mov.f32 \t" + sel.dest + ", " + sel.value + ";";
  return mutant{join_lines(lines), s.manifest_text, true,
                std::to_string(selects.size()) + " causal-mask selects replaced by plain moves"};
}

std::optional<mutant> causal_mask_shifted(const task& t, const solution& s, std::mt19937_64&) {
  if (!t.causal) return std::nullopt;
  auto lines = split_lines(s.ptx);
  int changed = 0;
  static const std::map<std::string, std::string> flip = {{"lt", "le"}, {"le", "lt"}, {"gt", "ge"}, {"ge", "gt"}};
  for (const auto& sel : mask_selects(lines)) {
    const std::regex def("setp\\.(lt|le|gt|ge)(\\.\\w+\\s+)" + sel.predicate + ",");
    for (size_t i = sel.line; i-- > 0 && sel.line - i < 8;) {
      std::smatch m;
      if (!std::regex_search(lines[i], m, def)) continue;
      lines[i].replace(static_cast<size_t>(m.position(1)), 2, flip.at(m[1].str()));
      ++changed;
      break;
    }
  }
  if (changed == 0) return std::nullopt;
  return mutant{join_lines(lines), s.manifest_text, true,
                std::to_string(changed) + " causal-mask comparisons shifted by one (strict <-> inclusive)"};
}

std::optional<mutant> last_tile_skipped(const task&, const solution& s, std::mt19937_64& rng) {
  // A counted loop: `setp.lt.s32 %p, %i, %n;` right before `@%p bra` to an
  // earlier label. Comparing with n-1 drops the last iteration (the last K
  // tile in a GEMM main loop).
  static const std::regex cmp(R"(^(\s*)setp\.lt\.(s32|u32)\s+(%p\d+),\s*(%r\d+),\s*(%r\d+);)");
  auto lines = split_lines(s.ptx);
  std::vector<size_t> loops;
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    std::smatch m;
    if (!std::regex_search(lines[i], m, cmp)) continue;
    const std::string& next = lines[i + 1];
    size_t at = next.find("@" + m[3].str() + " bra");
    if (at == std::string::npos) continue;
    size_t label = next.find('$');
    if (label == std::string::npos) continue;
    std::string name = next.substr(label);
    name = name.substr(0, name.find(';'));
    for (size_t k = 0; k < i; ++k)
      if (lines[k].rfind(name + ":", 0) == 0) {
        loops.push_back(i);
        break;
      }
  }
  if (loops.empty()) return std::nullopt;
  size_t i = loops[pick(rng, loops.size())];
  std::smatch m;
  std::regex_search(lines[i], m, cmp);
  lines[i] = m[1].str() + "{ .reg .b32 mut_bound; add.s32 mut_bound, " + m[5].str() + ", -1; setp.lt." + m[2].str() +
             " " + m[3].str() + ", " + m[4].str() + ", mut_bound; }";
  return mutant{join_lines(lines), s.manifest_text, true, line_no(i) + ": loop bound " + m[5].str() + " -> " +
                                                             m[5].str() + "-1 (last iteration skipped)"};
}

std::optional<mutant> lse_wrong_base(const task&, const solution& s, std::mt19937_64&) {
  // The kernels keep the running max and sum in base 2 (ex2/lg2) and convert
  // the log-sum-exp to natural log with a multiply by ln 2 (0f3F317218).
  auto lines = split_lines(s.ptx);
  int changed = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].find("lg2.approx") == std::string::npos) continue;
    for (size_t k = i + 1; k < lines.size() && k <= i + 3; ++k) {
      size_t at = lines[k].find("0f3F317218");
      if (at == std::string::npos || lines[k].find("mul.f32") == std::string::npos) continue;
      lines[k].replace(at, 10, "0f3F800000");
      ++changed;
      break;
    }
  }
  if (changed == 0) return std::nullopt;
  return mutant{join_lines(lines), s.manifest_text, true,
                std::to_string(changed) + " LSE outputs left in base 2 (the ln 2 factor dropped)"};
}

}  // namespace

void add_correctness_operators(std::vector<mutation_operator>& out) {
  out.push_back({"tile_bound_off_by_one", stage::correctness, "one bound comparison strict <-> inclusive",
                 tile_bound_off_by_one});
  out.push_back({"descriptor_swizzle", stage::correctness, "wgmma descriptors with the wrong swizzle mode",
                 descriptor_swizzle});
  out.push_back({"wrong_scale", stage::correctness, "the softmax scale halved", wrong_scale});
  out.push_back({"causal_mask_missing", stage::correctness, "the causal mask not applied", causal_mask_missing});
  out.push_back({"causal_mask_shifted", stage::correctness, "the causal mask shifted by one", causal_mask_shifted});
  out.push_back({"last_tile_skipped", stage::correctness, "a counted loop stops one iteration early",
                 last_tile_skipped});
  out.push_back({"lse_wrong_base", stage::correctness, "the LSE written in base 2", lse_wrong_base});
}

}  // namespace ptxbench::mutate
