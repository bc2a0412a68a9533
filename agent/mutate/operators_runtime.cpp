// Operators aimed at the runtime stage: launches that fault, hang or are
// refused. They pass format and compile, so without a GPU they are judged as
// far as the static stages and reported "not run".
#include "agent/mutate/mutation.hpp"
#include "agent/mutate/ptx_edit.hpp"

namespace ptxbench::mutate {
namespace {

using json = nlohmann::json;

std::optional<mutant> shared_bytes_wrong(const task&, const solution& s, std::mt19937_64& rng) {
  auto m = parse_manifest_json(s.manifest_text);
  if (!m) return std::nullopt;
  std::vector<json*> with;
  for (auto& l : (*m)["launches"])
    if (l.contains("shared_bytes") && l["shared_bytes"].is_number_integer() && l["shared_bytes"].get<int64_t>() > 0)
      with.push_back(&l);
  if (with.empty()) return std::nullopt;
  json& launch = *with[pick(rng, with.size())];
  const int64_t was = launch["shared_bytes"].get<int64_t>();
  const int64_t now = (was / 2) / 16 * 16;
  launch["shared_bytes"] = now;
  return mutant{s.ptx, dump_manifest(*m), true,
                "launch " + launch.value("kernel", "?") + ": shared_bytes " + std::to_string(was) + " -> " +
                    std::to_string(now)};
}

// The value of `reg` from the last `mov.u32 reg, K;` before line `before`.
std::optional<long> last_constant(const std::vector<std::string>& lines, size_t before, const std::string& reg) {
  const std::regex mov("mov\\.(u32|b32|s32)\\s+" + reg + ",\\s*(\\d+);");
  for (size_t i = before; i-- > 0;) {
    std::smatch m;
    if (std::regex_search(lines[i], m, mov)) return std::stol(m[2].str());
  }
  return std::nullopt;
}

std::optional<mutant> mbarrier_arrival_count(const task&, const solution& s, std::mt19937_64& rng) {
  static const std::regex init(R"(mbarrier\.init\.[\w:.]+\s+\[[^\]]+\],\s*(%r\d+|\d+)\s*;)");
  auto lines = split_lines(s.ptx);
  auto hits = matching_lines(lines, init);
  if (hits.empty()) return std::nullopt;
  size_t i = hits[pick(rng, hits.size())];
  std::smatch m;
  std::regex_search(lines[i], m, init);
  const std::string operand = m[1].str();
  std::optional<long> count = operand[0] == '%' ? last_constant(lines, i, operand) : std::stol(operand);
  if (!count) return std::nullopt;
  const long wrong = *count + 1;  // one arrival never comes: the waiters hang
  lines[i].replace(static_cast<size_t>(m.position(1)), operand.size(), std::to_string(wrong));
  return mutant{join_lines(lines), s.manifest_text, true,
                "line " + std::to_string(i + 1) + ": mbarrier.init arrival count " + std::to_string(*count) + " -> " +
                    std::to_string(wrong)};
}

std::optional<mutant> mbarrier_parity_flipped(const task&, const solution& s, std::mt19937_64& rng) {
  static const std::regex wait(R"(^(\s*)(mbarrier\.(try|test)_wait\.parity[\w:.]*)\s+(\w+),\s*(\[[^\]]+\]),\s*(%r\d+)\s*;)");
  auto lines = split_lines(s.ptx);
  auto hits = matching_lines(lines, wait);
  if (hits.empty()) return std::nullopt;
  size_t i = hits[pick(rng, hits.size())];
  std::smatch m;
  std::regex_search(lines[i], m, wait);
  // A scope of its own keeps the parity register intact for later code.
  lines[i] = m[1].str() + "{ .reg .b32 mut_parity; xor.b32 mut_parity, " + m[6].str() + ", 1; " + m[2].str() + " " +
             m[4].str() + ", " + m[5].str() + ", mut_parity; }";
  return mutant{join_lines(lines), s.manifest_text, true,
                "line " + std::to_string(i + 1) + ": mbarrier wait on the other phase (parity " + m[6].str() +
                    " ^ 1)"};
}

std::optional<mutant> fence_removed(const task&, const solution& s, std::mt19937_64& rng) {
  static const std::regex fence(R"(^\s*fence\.(proxy\.async|mbarrier_init)[\w:.]*\s*;)");
  auto lines = split_lines(s.ptx);
  auto hits = matching_lines(lines, fence);
  if (hits.empty()) return std::nullopt;
  size_t i = hits[pick(rng, hits.size())];
  std::string was = lines[i].substr(lines[i].find_first_not_of(" \t"));
  lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(i));
  return mutant{join_lines(lines), s.manifest_text, true, "line " + std::to_string(i + 1) + ": removed " + was};
}

std::vector<json*> tensor_maps(json& m) {
  std::vector<json*> out;
  for (auto& l : m["launches"])
    if (l.contains("params") && l["params"].is_array())
      for (auto& p : l["params"])
        if (p.is_object() && p.contains("tensor_map") && p["tensor_map"].is_object()) out.push_back(&p["tensor_map"]);
  return out;
}

std::optional<mutant> tensor_map_box(const task&, const solution& s, std::mt19937_64& rng) {
  auto m = parse_manifest_json(s.manifest_text);
  if (!m) return std::nullopt;
  auto maps = tensor_maps(*m);
  if (maps.empty()) return std::nullopt;
  json& map = *maps[pick(rng, maps.size())];
  if (!map.contains("box") || !map["box"].is_array() || map["box"].empty()) return std::nullopt;
  auto& box = map["box"];
  size_t d = pick(rng, box.size());
  if (!box[d].is_number_integer() || box[d].get<int64_t>() < 2) return std::nullopt;
  const int64_t was = box[d].get<int64_t>();
  box[d] = was / 2;  // the TMA load delivers fewer bytes than the barrier expects
  return mutant{s.ptx, dump_manifest(*m), true,
                "tensor map " + map.value("tensor", "?") + ": box[" + std::to_string(d) + "] " + std::to_string(was) +
                    " -> " + std::to_string(was / 2)};
}

std::optional<mutant> tensor_map_swizzle(const task&, const solution& s, std::mt19937_64& rng) {
  auto m = parse_manifest_json(s.manifest_text);
  if (!m) return std::nullopt;
  auto maps = tensor_maps(*m);
  if (maps.empty()) return std::nullopt;
  json& map = *maps[pick(rng, maps.size())];
  const std::string was = map.value("swizzle", "none");
  static const char* k_modes[] = {"none", "32B", "64B", "128B"};
  std::vector<std::string> others;
  for (const char* mode : k_modes)
    if (was != mode) others.push_back(mode);
  const std::string now = others[pick(rng, others.size())];
  map["swizzle"] = now;
  return mutant{s.ptx, dump_manifest(*m), true,
                "tensor map " + map.value("tensor", "?") + ": swizzle " + was + " -> " + now};
}

std::optional<mutant> cluster_shape(const task&, const solution& s, std::mt19937_64& rng) {
  auto m = parse_manifest_json(s.manifest_text);
  if (!m) return std::nullopt;
  auto& launches = (*m)["launches"];
  json& launch = launches[pick(rng, launches.size())];
  const json was = launch.contains("cluster") ? launch["cluster"] : json::array({1, 1, 1});
  const json now = was == json::array({1, 1, 1}) ? json::array({2, 1, 1}) : json::array({1, 1, 1});
  launch["cluster"] = now;
  return mutant{s.ptx, dump_manifest(*m), true,
                "launch " + launch.value("kernel", "?") + ": cluster " + was.dump() + " -> " + now.dump()};
}

}  // namespace

void add_runtime_operators(std::vector<mutation_operator>& out) {
  out.push_back({"shared_bytes_wrong", stage::runtime, "manifest shared_bytes halved", shared_bytes_wrong});
  out.push_back({"mbarrier_arrival_count", stage::runtime, "an mbarrier initialised for one arrival too many",
                 mbarrier_arrival_count});
  out.push_back({"mbarrier_parity_flipped", stage::runtime, "an mbarrier wait on the wrong phase",
                 mbarrier_parity_flipped});
  out.push_back({"fence_removed", stage::runtime, "a fence.proxy.async or fence.mbarrier_init removed", fence_removed});
  out.push_back({"tensor_map_box", stage::runtime, "one tensor-map box dimension halved", tensor_map_box});
  out.push_back({"tensor_map_swizzle", stage::runtime, "a tensor map's swizzle changed", tensor_map_swizzle});
  out.push_back({"cluster_shape", stage::runtime, "a cluster shape the kernel does not expect", cluster_shape});
}

}  // namespace ptxbench::mutate
