// Performance operators that change where data lives or when it moves: a
// bank-conflicting shared-memory layout, accumulators round-tripped through
// local memory, and a TMA pipeline that waits for each load to land. Every
// edit keeps what is computed; only the speed changes. The lines an edit
// touches are the lines where the mutant should be slow (apply_operator
// records them as the mutated region).
#include <algorithm>
#include <map>
#include <set>

#include "agent/mutate/mutation.hpp"
#include "agent/mutate/ptx_edit.hpp"

namespace ptxbench::mutate {
namespace {

bool is_label(const std::string& line) {
  static const std::regex label(R"(^\s*[$\w]+:\s*$)");
  return std::regex_match(line, label);
}

// Lines inside a loop: from a label to a branch back to it (the nearest
// definition before the branch; inline-asm blocks reuse their label names).
std::vector<bool> loop_lines(const std::vector<std::string>& lines) {
  static const std::regex label(R"(^\s*([$\w]+):\s*$)");
  static const std::regex branch(R"(\bbra(?:\.uni)?\s+([$\w]+)\s*;)");
  std::vector<bool> in(lines.size(), false);
  for (size_t j = 0; j < lines.size(); ++j) {
    std::smatch b;
    if (!is_instruction(lines[j]) || !std::regex_search(lines[j], b, branch)) continue;
    for (size_t i = j; i-- > 0;) {
      std::smatch l;
      if (std::regex_match(lines[i], l, label) && l[1].str() == b[1].str()) {
        for (size_t k = i + 1; k <= j; ++k) in[k] = true;
        break;
      }
    }
  }
  return in;
}

// A declaration placed at the top of every function body that uses it
// (mentions `used`): before the function's first `.reg` line.
std::vector<std::string> declare_in_functions(const std::vector<std::string>& lines, const std::string& decl,
                                              const std::string& used) {
  static const std::regex header(R"(^\s*(?:\.visible\s+|\.weak\s+)?\.(entry|func)\b)");
  static const std::regex reg(R"(^\s*\.reg\s)");
  std::vector<std::string> out;
  for (size_t i = 0; i < lines.size(); ++i) {
    out.push_back(lines[i]);
    if (!std::regex_search(lines[i], header)) continue;
    size_t end = i + 1;
    while (end < lines.size() && !std::regex_search(lines[end], header)) ++end;
    bool uses = false;
    for (size_t k = i + 1; k < end && !uses; ++k) uses = lines[k].find(used) != std::string::npos;
    bool placed = !uses;
    for (size_t k = i + 1; k < end; ++k) {
      if (!placed && std::regex_search(lines[k], reg)) {
        out.push_back(indent_of(lines[k]) + decl);
        placed = true;
      }
      out.push_back(lines[k]);
    }
    i = end - 1;
  }
  return out;
}

// The destination of an instruction line: its first operand (every register
// of a `{...}` list), without a predicate guard.
std::vector<std::string> destinations(const std::string& line) {
  static const std::regex form(R"(^\s*(?:@!?%\w+\s+)?[a-z][\w.:]*\s+(\{[^}]*\}|[^,;\s]+))");
  std::smatch m;
  if (!std::regex_search(line, m, form)) return {};
  return registers_in(m[1].str());
}

bool predicated(const std::string& line) {
  static const std::regex guard(R"(^\s*@)");
  return std::regex_search(line, guard);
}

// --- smem_bank_conflict ------------------------------------------------------
//
// Every shared-memory address of the module goes through one bijection before
// its access: a = a ^ (((a - smem) >> 3) & 0x70), i.e. 16-byte chunk bits 4-6
// XORed with row bits 7-9 of the offset in the dynamic array. The map is its
// own inverse, keeps bits 0-3 (so no access of up to 16 bytes straddles
// chunks) and stays inside the 128-byte block it started in; applied to every
// writer and reader alike, every value is read back from where it was
// written. On the solutions' `chunk ^ (row % 8)` swizzle of 128-byte rows it
// cancels the swizzle: the eight rows an ldmatrix phase reads sit in one bank
// group again (8-way conflicts). Only where every shared access is an explicit
// address (cp.async, ldmatrix/stmatrix, ld/st.shared): wgmma descriptors, TMA
// and mbarriers address shared memory where the edit cannot follow.
std::optional<mutant> smem_bank_conflict(const task&, const solution& s, std::mt19937_64&) {
  static const std::regex hidden(
      R"(wgmma\.|cp\.async\.bulk|mbarrier\.|tcgen05\.|cvta(?:\.to)?\.shared|atom\.shared|red\.shared|shared::cluster|\bbar\.red)");
  static const std::regex shared_decl(R"(^\s*(?:\.extern\s+)?\.shared\b)");
  static const std::regex dynamic_array(R"(^\s*\.extern\s+\.shared\s+\.align\s+(\d+)\s+\.b8\s+(\w+)\[\]\s*;)");
  static const std::regex access(
      R"(^(\s*)(@!?%\w+\s+)?((?:cp\.async\.c[ag]\.shared(?:::cta)?\.global|ldmatrix\.[\w.:]*|stmatrix\.[\w.:]*|ld\.shared(?:::cta)?\.[\w.]*|st\.shared(?:::cta)?\.[\w.]*)\s+)([^\[]*)\[([^\]]*)\](.*)$)");
  static const std::regex address(R"(^\s*(%r\d+)\s*(?:\+\s*(-?\d+))?\s*$)");
  static const std::regex swizzle_mask(R"(^\s*and\.b32\s+(%r\d+)\s*,\s*%r\d+\s*,\s*7\s*;)");
  static const std::regex swizzle_xor(R"(^\s*xor\.b32\s+%r\d+\s*,\s*(%r\d+)\s*,\s*(%r\d+)\s*;)");

  auto lines = split_lines(s.ptx);
  std::string array;
  int arrays = 0;
  for (const auto& l : lines) {
    if (is_instruction(l) && std::regex_search(l, hidden)) return std::nullopt;
    if (!std::regex_search(l, shared_decl)) continue;
    std::smatch m;
    if (!std::regex_search(l, m, dynamic_array) || std::stoi(m[1].str()) < 128) return std::nullopt;
    array = m[2].str();
    ++arrays;
  }
  if (arrays != 1) return std::nullopt;
  // The array's address is only taken as a 32-bit shared address.
  const std::regex use("\\b" + array + "\\b");
  const std::regex take(R"(^\s*mov\.u32\s+%r\d+\s*,\s*)" + array + R"(\s*;)");
  for (const auto& l : lines)
    if (is_instruction(l) && std::regex_search(l, use) && !std::regex_search(l, take)) return std::nullopt;
  // The swizzle this undoes: a chunk XORed with a row masked to 0..7.
  std::set<std::string> masks;
  bool swizzled = false;
  for (const auto& l : lines) {
    std::smatch m;
    if (std::regex_search(l, m, swizzle_mask)) masks.insert(m[1].str());
    if (std::regex_search(l, m, swizzle_xor) && (masks.count(m[1].str()) || masks.count(m[2].str()))) swizzled = true;
  }
  if (!swizzled) return std::nullopt;
  // Within the allocation: the map keeps each access in its 128-byte block.
  auto manifest = parse_manifest_json(s.manifest_text);
  if (!manifest) return std::nullopt;
  for (const auto& launch : (*manifest)["launches"])
    if (launch.contains("shared_bytes") && launch["shared_bytes"].is_number_integer() &&
        launch["shared_bytes"].get<long long>() % 128 != 0)
      return std::nullopt;

  int changed = 0;
  for (auto& l : lines) {
    if (!is_instruction(l) || l.find("shared") == std::string::npos) continue;
    std::smatch m;
    if (!std::regex_match(l, m, access)) {
      if (l.find(".shared") != std::string::npos) return std::nullopt;  // a shared access of another form
      continue;
    }
    const std::string target = m[5].str();
    std::smatch a;
    if (!std::regex_match(target, a, address)) return std::nullopt;
    std::string code = m[1].str() + "{ .reg .b32 mut_a, mut_o; ";
    code += a[2].matched ? "add.s32 mut_a, " + a[1].str() + ", " + a[2].str() + "; "
                         : "mov.b32 mut_a, " + a[1].str() + "; ";
    code += "mov.u32 mut_o, " + array + "; sub.s32 mut_o, mut_a, mut_o; shr.u32 mut_o, mut_o, 3; ";
    code += "and.b32 mut_o, mut_o, 112; xor.b32 mut_a, mut_a, mut_o; ";
    code += m[2].str() + m[3].str() + m[4].str() + "[mut_a]" + m[6].str() + " }";
    l = code;
    ++changed;
  }
  if (changed == 0) return std::nullopt;
  return mutant{join_lines(lines), s.manifest_text, true,
                std::to_string(changed) + " shared-memory accesses unswizzled (chunk ^= row % 8): bank conflicts"};
}

// --- accumulator_spill -------------------------------------------------------
//
// Each write of an f32 accumulator register (one of an mma's `{d}` list) by a
// synchronous instruction inside a loop (mma.sync itself; for wgmma, the
// rescales and resets the solution does between MMAs) is followed by a
// round trip of that register through a `.local` array: a store then a load
// of the same slot, the spill code of a kernel that ran out of registers. The
// round trip sits where the solution already accesses the register, so no
// wgmma in flight can own it, and the solution's own wgmma.fence before the
// next MMA covers it. The accesses are volatile, through the array's generic
// address (PTX allows .volatile on generic, not on .local, accesses), so
// ptxas can neither forward the store to the load nor drop either.
std::optional<mutant> accumulator_spill(const task&, const solution& s, std::mt19937_64&) {
  static const std::regex mma(R"(^\s*(?:@!?%\w+\s+)?(wgmma\.mma_async|mma\.sync)[\w.]*\s+\{([^}]*)\})");
  static const std::regex f32(R"(^%f\d+$)");
  auto lines = split_lines(s.ptx);
  std::set<std::string> acc;
  for (const auto& l : lines) {
    std::smatch m;
    if (!is_instruction(l) || !std::regex_search(l, m, mma)) continue;
    for (const auto& r : registers_in(m[2].str()))
      if (std::regex_match(r, f32)) acc.insert(r);
  }
  if (acc.empty()) return std::nullopt;
  const auto in_loop = loop_lines(lines);
  std::map<std::string, int> slot;
  std::vector<std::string> out;
  int sites = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    out.push_back(lines[i]);
    const std::string& l = lines[i];
    if (!in_loop[i] || !is_instruction(l) || predicated(l) || l.find("wgmma.mma_async") != std::string::npos) continue;
    std::vector<std::string> spilled;
    for (const auto& r : destinations(l))
      if (acc.count(r)) spilled.push_back(r);
    if (spilled.empty()) continue;
    std::string code = indent_of(l) + "{ .reg .b64 mut_p; cvta.local.u64 mut_p, mut_spill; ";
    for (const auto& r : spilled) {
      auto [it, fresh] = slot.emplace(r, int(slot.size()));
      (void)fresh;
      const std::string at = "[mut_p+" + std::to_string(4 * it->second) + "]";
      code += "st.volatile.f32 " + at + ", " + r + "; ld.volatile.f32 " + r + ", " + at + "; ";
    }
    out.push_back(code + "}");
    ++sites;
  }
  if (sites == 0) return std::nullopt;
  const size_t bytes = (4 * slot.size() + 15) / 16 * 16;
  out = declare_in_functions(out, ".local .align 16 .b8 mut_spill[" + std::to_string(bytes) + "];", "mut_p");
  return mutant{join_lines(out), s.manifest_text, true,
                std::to_string(slot.size()) + " accumulator registers round-tripped through local memory at " +
                    std::to_string(sites) + " writes in the loop"};
}

// --- pipeline_one_stage ------------------------------------------------------
//
// The TMA producer waits for each stage's load to land before it issues the
// next: the state token of its `mbarrier.arrive.expect_tx` (the phase it
// armed, formerly discarded as `_`) is kept, and after the stage's last
// cp.async.bulk.tensor on that barrier the producer spins on
// `mbarrier.try_wait` with the token. One load in flight at a time, as with a
// single stage; waiting reads the barrier and changes nothing, and the phase
// it waits for needs no arrival but the producer's own (already made) and the
// bytes, so it always completes. Not for clusters (a multicast load completes
// on other CTAs' barriers).
std::optional<mutant> pipeline_one_stage(const task&, const solution& s, std::mt19937_64&) {
  static const std::regex cluster(R"(multicast::cluster|barrier\.cluster|\bmapa\b)");
  static const std::regex arrive(
      R"(^(\s*)mbarrier\.arrive\.expect_tx((?:\.\w+)*\.shared::cta)\.b64\s+_\s*,\s*\[(%r\d+)\]\s*,\s*([^;]+);\s*$)");
  static const std::regex tma(R"(^\s*cp\.async\.bulk\.tensor\.[^;]*,\s*\[(%r\d+)\]\s*;)");
  static const std::regex stop(R"(\bbra\b|\bret\b|\bexit\b|mbarrier\.)");
  auto lines = split_lines(s.ptx);
  for (const auto& l : lines)
    if (is_instruction(l) && std::regex_search(l, cluster)) return std::nullopt;
  std::map<size_t, std::string> wait_after;  // line index -> the wait inserted after it
  int sites = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::smatch a;
    if (!is_instruction(lines[i]) || !std::regex_match(lines[i], a, arrive)) continue;
    const std::string bar = a[3].str();
    std::optional<size_t> last;
    for (size_t j = i + 1; j < lines.size(); ++j) {
      const std::string& l = lines[j];
      if (is_label(l)) break;
      const size_t first = l.find_first_not_of(" \t");
      if (first != std::string::npos && (l[first] == '{' || l[first] == '}')) break;
      if (!is_instruction(l)) continue;
      std::smatch t;
      if (std::regex_search(l, t, tma)) {
        if (predicated(l)) break;
        if (t[1].str() == bar) last = j;
        continue;
      }
      if (std::regex_search(l, stop)) break;
      const auto d = destinations(l);
      if (std::find(d.begin(), d.end(), bar) != d.end()) break;
    }
    if (!last) continue;
    const std::string n = std::to_string(sites);
    lines[i] = a[1].str() + "mbarrier.arrive.expect_tx" + a[2].str() + ".b64 mut_tok, [" + bar + "], " + a[4].str() + ";";
    wait_after[*last] = indent_of(lines[*last]) + "mut_land_" + n + ": mbarrier.try_wait.shared::cta.b64 mut_landed, [" +
                        bar + "], mut_tok; @!mut_landed bra mut_land_" + n + ";";
    ++sites;
  }
  if (sites == 0) return std::nullopt;
  std::vector<std::string> out;
  for (size_t i = 0; i < lines.size(); ++i) {
    out.push_back(lines[i]);
    auto w = wait_after.find(i);
    if (w != wait_after.end()) out.push_back(w->second);
  }
  out = declare_in_functions(out, ".reg .b64 mut_tok; .reg .pred mut_landed;", "mut_tok");
  return mutant{join_lines(out), s.manifest_text, true,
                std::to_string(sites) + " TMA stages wait for their load to land before the next is issued (one stage)"};
}

}  // namespace

void add_layout_performance_operators(std::vector<mutation_operator>& out) {
  out.push_back({"smem_bank_conflict", stage::performance, "shared-memory swizzle undone (bank-conflicting layout)",
                 smem_bank_conflict, "mio_throttle,short_scoreboard"});
  out.push_back({"accumulator_spill", stage::performance, "accumulators round-tripped through local memory",
                 accumulator_spill, "long_scoreboard,lg_throttle"});
  out.push_back({"pipeline_one_stage", stage::performance, "TMA producer waits for each load (one stage)",
                 pipeline_one_stage, "sleeping,branch_resolving,long_scoreboard"});
}

}  // namespace ptxbench::mutate
