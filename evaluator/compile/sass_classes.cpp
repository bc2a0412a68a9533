// classify_sass: what one warp-level execution of a SASS instruction does to
// the task's data, from evaluator/compile/sass_opcodes.json (embedded at build
// time) and the instruction's text: tensor-core shapes, FLOPs per execution,
// the operand type. Unknown opcodes are reported as such, never as "no math".
#include <algorithm>
#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <stdexcept>

#include "evaluator/compile/compile.hpp"
#include "ptxbench/sass_opcodes_json.hpp"

namespace ptxbench {
namespace {

struct opcode_table {
  std::set<std::string> tensor, other;
  std::map<std::string, double> floating, integer;
};

// The embedded table is part of the build: a malformed one is a bug.
opcode_table parse_opcode_table() {
  const nlohmann::json doc = nlohmann::json::parse(generated::sass_opcodes_json);
  opcode_table t;
  for (const auto& o : doc.at("tensor")) t.tensor.insert(o.get<std::string>());
  for (const auto& o : doc.at("other")) t.other.insert(o.get<std::string>());
  for (const auto& [o, f] : doc.at("float").items()) t.floating[o] = f.get<double>();
  for (const auto& [o, f] : doc.at("integer").items()) t.integer[o] = f.get<double>();
  std::set<std::string> seen;
  for (const auto* group : {&t.tensor, &t.other})
    for (const auto& o : *group)
      if (!seen.insert(o).second) throw std::logic_error("sass_opcodes.json: " + o + " is listed twice");
  for (const auto* group : {&t.floating, &t.integer})
    for (const auto& [o, f] : *group)
      if (!seen.insert(o).second) throw std::logic_error("sass_opcodes.json: " + o + " is listed twice");
  return t;
}

const opcode_table& table() {
  static const opcode_table t = parse_opcode_table();
  return t;
}

std::string_view after_predicate(std::string_view text) {
  if (!text.empty() && text[0] == '@') {
    const size_t space = text.find(' ');
    text.remove_prefix(space == std::string_view::npos ? text.size() : space + 1);
  }
  return text;
}

std::vector<std::string> modifiers_of(std::string_view full) {
  std::vector<std::string> out;
  size_t at = full.find('.');
  while (at != std::string_view::npos) {
    const size_t next = full.find('.', at + 1);
    out.emplace_back(full.substr(at + 1, next == std::string_view::npos ? std::string_view::npos : next - at - 1));
    at = next;
  }
  return out;
}

// The operands after the full opcode, split at commas, trimmed.
std::vector<std::string> operands_of(std::string_view text) {
  text = after_predicate(text);
  const size_t space = text.find(' ');
  std::vector<std::string> out;
  if (space == std::string_view::npos) return out;
  std::string_view rest = text.substr(space + 1);
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    std::string_view part = rest.substr(0, comma);
    while (!part.empty() && (part.front() == ' ')) part.remove_prefix(1);
    while (!part.empty() && (part.back() == ' ' || part.back() == ';')) part.remove_suffix(1);
    out.emplace_back(part);
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return out;
}

bool is_zero_register(std::string op) {
  while (!op.empty() && (op.front() == '-' || op.front() == '|' || op.front() == '!')) op.erase(op.begin());
  while (!op.empty() && op.back() == '|') op.pop_back();
  return op == "RZ" || op == "URZ";
}

// An immediate that is a power of two (0x1, 0x4, 0x10...): a multiply by it is a shift or a move.
bool is_power_of_two_immediate(const std::string& op) {
  if (op.rfind("0x", 0) != 0) return false;
  try {
    const unsigned long long v = std::stoull(op.substr(2), nullptr, 16);
    return v != 0 && (v & (v - 1)) == 0;
  } catch (const std::exception&) {
    return false;
  }
}

// FLOPs of a warp-level execution of a tensor instruction from its shape, -1
// when the shape is not in the opcode (tcgen05's UTC*MMA keep it in a
// descriptor). Warpgroup MMAs are executed by each of their 4 warps and each
// is counted, so one count carries a quarter; sparse (.SP) shapes name the
// logical K and do half the multiplies.
double tensor_flops(std::string_view full, const std::string& base) {
  static const std::regex xyz(R"((\d+)x(\d+)x(\d+))");
  static const std::map<std::string, std::array<int, 3>> packed = {
      {"16816", {16, 8, 16}},   {"16832", {16, 8, 32}},  {"16864", {16, 8, 64}},  {"1688", {16, 8, 8}},
      {"1684", {16, 8, 4}},     {"8816", {8, 8, 16}},    {"8832", {8, 8, 32}},    {"884", {8, 8, 4}},
      {"168256", {16, 8, 256}}, {"88128", {8, 8, 128}}};
  double m = 0, n = 0, k = 0;
  bool sparse = false;
  for (const std::string& mod : modifiers_of(full)) {
    sparse |= mod == "SP";
    std::smatch s;
    if (m == 0 && std::regex_match(mod, s, xyz)) {
      m = std::stod(s[1]);
      n = std::stod(s[2]);
      k = std::stod(s[3]);
    } else if (auto it = packed.find(mod); m == 0 && it != packed.end()) {
      m = it->second[0];
      n = it->second[1];
      k = it->second[2];
    }
  }
  if (m == 0) return -1.0;
  double flops = 2.0 * m * n * k * (sparse ? 0.5 : 1.0);
  const bool warpgroup = base == "HGMMA" || base == "QGMMA" || base == "IGMMA" || base == "BGMMA";
  return warpgroup ? flops / 4.0 : flops;
}

std::string tensor_type(const std::string& base, const std::vector<std::string>& mods) {
  if (base == "DMMA") return "F64";
  if (base == "BMMA" || base == "BGMMA") return "B1";
  std::string type = base == "IGMMA" || base == "IMMA" ? "S8" : base == "QGMMA" || base == "QMMA" ? "E4M3" : "F16";
  if (base.rfind("UTC", 0) == 0) type = "";
  // The operand type is the last input-type modifier (HGMMA.64x128x16.F32.BF16
  // is bf16, HMMA.16816.F32 is f16, QGMMA ...E4M3.E4M3 is e4m3).
  for (const auto& m : mods)
    if (m == "BF16" || m == "BF16_V2" || m == "E4M3" || m == "E5M2" || m == "TF32" || m == "S8" || m == "U8" ||
        m == "S4" || m == "U4")
      type = m == "BF16_V2" ? "BF16" : m;
  return type;
}

std::string float_type(const std::string& base, const std::vector<std::string>& mods) {
  if (base[0] == 'D') return "F64";
  const bool half = base[0] == 'H' || base == "VHMNMX";
  for (const auto& m : mods)
    if (m == "BF16_V2" || m == "BF16") return "BF16";
  return half ? "F16" : "F32";
}

}  // namespace

sass_class_info classify_sass(const sass_instruction& inst) {
  const opcode_table& t = table();
  const std::string_view full = [&] {
    std::string_view text = after_predicate(inst.text);
    return text.substr(0, text.find(' '));
  }();
  const std::string base(full.substr(0, full.find('.')));
  const std::vector<std::string> mods = modifiers_of(full);
  sass_class_info info;
  if (t.tensor.count(base)) {
    info.kind = sass_kind::tensor;
    info.operand_type = tensor_type(base, mods);
    const std::vector<std::string> ops = operands_of(inst.text);
    // ptxas pads wgmma sequences with "HGMMA.64x8x16.F16 RZ, gdesc[URZ], RZ, !UPT": no result, no work.
    info.flops = !ops.empty() && is_zero_register(ops[0]) ? 0.0 : tensor_flops(full, base);
    return info;
  }
  auto scalar = [&](const std::map<std::string, double>& group, sass_kind kind) -> bool {
    auto it = group.find(base);
    if (it == group.end()) return false;
    info.kind = kind;
    info.flops = it->second;
    if (base == "IDP" && std::find(mods.begin(), mods.end(), "2A") != mods.end()) info.flops /= 2;
    const std::vector<std::string> ops = operands_of(inst.text);
    // Sources 1 and 2 (operand 0 is the destination; HSETP-style predicate
    // destinations are not in these classes).
    for (size_t i = 1; i < ops.size() && i <= 2; ++i) {
      if (is_zero_register(ops[i])) info.flops = 0;
      if (kind == sass_kind::integer && is_power_of_two_immediate(ops[i])) info.flops = 0;
    }
    if (kind == sass_kind::float_math) info.operand_type = float_type(base, mods);
    else info.operand_type = "INT";
    return true;
  };
  if (scalar(t.floating, sass_kind::float_math) || scalar(t.integer, sass_kind::integer)) return info;
  info.kind = t.other.count(base) ? sass_kind::other : sass_kind::unknown;
  info.flops = 0;
  return info;
}

bool sass_opcode_known(const std::string& base_opcode) {
  const opcode_table& t = table();
  return t.tensor.count(base_opcode) || t.other.count(base_opcode) || t.floating.count(base_opcode) ||
         t.integer.count(base_opcode);
}

}  // namespace ptxbench
