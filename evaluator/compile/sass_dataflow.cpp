#include "evaluator/compile/sass_dataflow.hpp"

#include <cctype>
#include <string_view>

namespace ptxbench {
namespace {

bool is_load(const std::string& opcode) {
  return opcode == "LDS" || opcode == "LDSM" || opcode == "LDL" || opcode == "LDG" || opcode == "LD";
}

// Registers a load writes: its first, plus the width its modifiers name
// (".64" 2, ".128" 4; ldmatrix's trailing ".2"/".4": 2/4).
int load_width(const sass_instruction& inst) {
  const std::string_view t = inst.text;
  const size_t space = t.find(' ', t.find(inst.opcode));
  const std::string_view op = t.substr(0, space);
  if (op.find(".128") != std::string_view::npos) return 4;
  if (op.find(".64") != std::string_view::npos) return 2;
  if (inst.opcode == "LDSM") {
    if (op.size() >= 2 && op.substr(op.size() - 2) == ".4") return 4;
    if (op.size() >= 2 && op.substr(op.size() - 2) == ".2") return 2;
  }
  return 1;
}

bool is_gmma(const std::string& opcode) {
  return opcode == "HGMMA" || opcode == "QGMMA" || opcode == "IGMMA" || opcode == "BGMMA";
}

// Registers any other instruction writes from its first operand: a vector
// access's width, an MMA's fragment (HMMA/IMMA/DMMA: up to 4), a warpgroup
// MMA's accumulator (64xN: N/2 fp32 registers per thread, N/4 for fp16).
int write_width(const sass_instruction& inst) {
  const std::string_view t = inst.text;
  const size_t at = t.find(inst.opcode);
  const std::string_view op = at == std::string_view::npos ? t : t.substr(at, t.find(' ', at) - at);
  if (is_gmma(inst.opcode)) {
    const size_t x = op.find("64x");
    int n = 0;
    for (size_t i = x == std::string_view::npos ? op.size() : x + 3; i < op.size() && std::isdigit(static_cast<unsigned char>(op[i])); ++i)
      n = n * 10 + (op[i] - '0');
    return n > 0 ? (op.find(".F16") != std::string_view::npos && op.find(".F32") == std::string_view::npos ? n / 4 : n / 2) : 1;
  }
  if (inst.opcode == "HMMA" || inst.opcode == "IMMA" || inst.opcode == "DMMA") return 4;
  if (op.find(".128") != std::string_view::npos) return 4;
  if (op.find(".64") != std::string_view::npos) return 2;
  return 1;
}

// The operand text after the opcode (and its predicate), up to ';'.
std::string_view operands_of(const sass_instruction& inst) {
  std::string_view t = inst.text;
  const size_t at = t.find(inst.opcode);
  if (at == std::string_view::npos) return {};
  t.remove_prefix(at);
  const size_t space = t.find(' ');
  if (space == std::string_view::npos) return {};
  t.remove_prefix(space + 1);
  if (const size_t semi = t.find(';'); semi != std::string_view::npos) t = t.substr(0, semi);
  return t;
}

// "R12" at `i` of `s` (not part of a longer word: UR4, PR, RZ are not registers) -> 12, advancing `i`; else -1.
int register_at(std::string_view s, size_t& i) {
  if (s[i] != 'R' || (i > 0 && (std::isalnum(static_cast<unsigned char>(s[i - 1])) || s[i - 1] == '_'))) return -1;
  size_t j = i + 1;
  int n = 0;
  while (j < s.size() && j < i + 5 && std::isdigit(static_cast<unsigned char>(s[j]))) n = n * 10 + (s[j++] - '0');
  if (j == i + 1) return -1;
  i = j - 1;
  return n;
}

struct operand_registers {
  int dest = -1;          // a bare register as the first operand
  std::vector<int> read;  // every other register mentioned (addresses included)
};

operand_registers registers_of(const sass_instruction& inst) {
  operand_registers out;
  const std::string_view ops = operands_of(inst);
  size_t first_end = 0;
  int depth = 0;
  while (first_end < ops.size() && !(depth == 0 && ops[first_end] == ',')) {
    if (ops[first_end] == '[') ++depth;
    if (ops[first_end] == ']') --depth;
    ++first_end;
  }
  std::string_view first = ops.substr(0, first_end);
  while (!first.empty() && first.front() == ' ') first.remove_prefix(1);
  while (!first.empty() && first.back() == ' ') first.remove_suffix(1);
  size_t k = 0;
  if (!first.empty() && first.front() == 'R') {
    const int r = register_at(first, k);
    if (r >= 0 && k + 1 == first.size()) out.dest = r;
  }
  for (size_t i = out.dest >= 0 ? first_end : 0; i < ops.size(); ++i)
    if (const int r = register_at(ops, i); r >= 0) out.read.push_back(r);
  // An MMA reads register ranges, named by their first register: the
  // accumulator (its last register operand) as wide as it writes, a fragment
  // of A (or B) in registers four (two) wide.
  const bool gmma = is_gmma(inst.opcode);
  if ((gmma || inst.opcode == "HMMA" || inst.opcode == "IMMA" || inst.opcode == "DMMA") && !out.read.empty()) {
    std::vector<int> named = out.read, ranges;
    for (size_t k = 0; k < named.size(); ++k) {
      const int width = k + 1 == named.size() ? write_width(inst) : (k == 0 || gmma ? 4 : 2);
      for (int w = 0; w < width; ++w) ranges.push_back(named[k] + w);
    }
    out.read = std::move(ranges);
  }
  return out;
}

}  // namespace

std::map<std::string, std::map<uint64_t, uint64_t>> awaited_loads(const std::vector<sass_instruction>& listing) {
  std::map<std::string, std::vector<const sass_instruction*>> by_function;
  for (const auto& inst : listing) by_function[inst.function].push_back(&inst);
  std::map<std::string, std::map<uint64_t, uint64_t>> out;
  for (const auto& [function, insts] : by_function) {
    std::map<int, size_t> loaded_by;  // register -> index of the load that last wrote it
    auto& waits = out[function];
    // A load later in program order can only be awaited earlier through a
    // branch back: both must come before the function's last BRA.
    size_t last_branch = 0;
    for (size_t i = 0; i < insts.size(); ++i)
      if (insts[i]->opcode == "BRA") last_branch = i;
    for (int pass = 0; pass < 2; ++pass) {
      for (size_t i = 0; i < insts.size(); ++i) {
        const sass_instruction& inst = *insts[i];
        const operand_registers regs = registers_of(inst);
        const sass_instruction* producer = nullptr;
        size_t latest = 0;
        for (int r : regs.read)
          if (auto it = loaded_by.find(r); it != loaded_by.end()) {
            if (it->second >= i && (it->second >= last_branch || i >= last_branch)) continue;
            // In the second pass a load later in program order is the previous iteration's.
            const size_t age = it->second < i ? i - it->second : i + insts.size() - it->second;
            if (!producer || age < latest) {
              producer = insts[it->second];
              latest = age;
            }
          }
        // A warp held by `DEPBAR.LE SBn, k` (cp.async.wait_group) is sampled
        // at the instruction after it, as a scoreboard stall: that wait is the
        // DEPBAR's, whatever the instruction reads.
        if (i > 0 && insts[i - 1]->opcode == "DEPBAR" && operands_of(*insts[i - 1]).find("SB") != std::string_view::npos)
          producer = insts[i - 1];
        if (producer && waits.count(inst.offset) == 0) waits[inst.offset] = producer->offset;
        if (regs.dest >= 0) {
          const int width = is_load(inst.opcode) ? load_width(inst) : write_width(inst);
          for (int w = 0; w < width; ++w) {
            if (is_load(inst.opcode)) loaded_by[regs.dest + w] = i;
            else loaded_by.erase(regs.dest + w);
          }
        }
      }
    }
    // A warp about to issue warpgroup MMAs waits at their WARPGROUP.ARRIVE
    // for the registers they read: the arrive waits on what the first MMA
    // after it (before the next arrive or wgmma wait) waits on.
    for (size_t i = 0; i < insts.size(); ++i) {
      if (insts[i]->opcode != "WARPGROUP" || insts[i]->text.find("WARPGROUP.ARRIVE") == std::string::npos ||
          waits.count(insts[i]->offset))
        continue;
      for (size_t j = i + 1; j < insts.size() && insts[j]->opcode != "WARPGROUP"; ++j) {
        if (!is_gmma(insts[j]->opcode)) continue;
        if (auto w = waits.find(insts[j]->offset); w != waits.end()) waits[insts[i]->offset] = w->second;
        break;
      }
    }
    if (waits.empty()) out.erase(function);
  }
  return out;
}

}  // namespace ptxbench
