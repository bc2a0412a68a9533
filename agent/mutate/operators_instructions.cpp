// Operators aimed at the instructions stage (a target instruction replaced by
// another way of doing the work) and at performance (the work done with less
// overlap). The instruction stage's static part (target in the PTX and the
// SASS) runs without a GPU, so the instruction operators are verified anywhere.
#include <algorithm>

#include "agent/mutate/mutation.hpp"
#include "agent/mutate/ptx_edit.hpp"

namespace ptxbench::mutate {
namespace {

bool targets(const task& t, const std::string& instruction) {
  return std::find(t.target_instructions.begin(), t.target_instructions.end(), instruction) !=
         t.target_instructions.end();
}

// wgmma replaced by one warp-level mma.sync per wgmma on the first four
// accumulators, its operands cut from the descriptors: the shape of a model's
// "mma.sync is simpler" answer. It compiles and the static check misses
// wgmma; on a GPU the numbers are wrong, so correctness fails first there.
std::optional<mutant> wgmma_to_mma_sync(const task& t, const solution& s, std::mt19937_64&) {
  if (!targets(t, "wgmma.mma_async")) return std::nullopt;
  static const std::regex op(R"(^(\s*)wgmma\.mma_async[\w.]*\s+\{([^}]*)\},\s*(\{[^}]*\}|%rd\d+),\s*(%rd\d+),)");
  auto lines = split_lines(s.ptx);
  int changed = 0;
  for (auto& l : lines) {
    std::smatch m;
    if (!std::regex_search(l, m, op)) continue;
    auto acc = registers_in(m[2].str());
    if (acc.size() < 4) continue;
    std::string a = m[3].str(), b = m[4].str();
    std::string code = m[1].str() + "{ .reg .b32 mut_a<4>; .reg .b32 mut_b<2>; ";
    if (a[0] == '{') {
      auto regs = registers_in(a);
      for (int k = 0; k < 4; ++k)
        code += "mov.b32 mut_a" + std::to_string(k) + ", " + regs[static_cast<size_t>(k) % regs.size()] + "; ";
    } else {
      code += "cvt.u32.u64 mut_a0, " + a + "; mov.b32 mut_a1, mut_a0; mov.b32 mut_a2, mut_a0; mov.b32 mut_a3, mut_a0; ";
    }
    code += "cvt.u32.u64 mut_b0, " + b + "; mov.b32 mut_b1, mut_b0; ";
    const std::string d = "{" + acc[0] + ", " + acc[1] + ", " + acc[2] + ", " + acc[3] + "}";
    code += "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 " + d +
            ", {mut_a0, mut_a1, mut_a2, mut_a3}, {mut_b0, mut_b1}, " + d + "; }";
    l = code;
    ++changed;
  }
  if (changed == 0) return std::nullopt;
  return mutant{join_lines(lines), s.manifest_text, true,
                std::to_string(changed) + " wgmma.mma_async replaced by mma.sync.m16n8k16"};
}

// cp.async replaced by a synchronous load and store through registers: the
// same bytes land in shared memory (the src-size operand of 0 still
// zero-fills), without the asynchronous copy the task asks for.
std::optional<mutant> cp_async_to_plain_copy(const task& t, const solution& s, std::mt19937_64&) {
  if (!targets(t, "cp.async")) return std::nullopt;
  static const std::regex copy(
      R"(^(\s*)cp\.async\.(cg|ca)\.shared\.global\s+\[([^\]]+)\],\s*\[([^\]]+)\],\s*16(?:,\s*(%r\d+))?\s*;)");
  static const std::regex bookkeeping(R"(^\s*cp\.async\.(commit_group|wait_group|wait_all)\b)");
  auto lines = split_lines(s.ptx);
  std::vector<std::string> out;
  int copies = 0;
  for (const auto& l : lines) {
    std::smatch m;
    if (std::regex_search(l, m, copy)) {
      std::string code = m[1].str() + "{ .reg .b32 mut_v<4>; ";
      code += "mov.b32 mut_v0, 0; mov.b32 mut_v1, 0; mov.b32 mut_v2, 0; mov.b32 mut_v3, 0; ";
      const std::string load = "ld.global.v4.u32 {mut_v0, mut_v1, mut_v2, mut_v3}, [" + m[4].str() + "]; ";
      if (m[5].matched)
        code += ".reg .pred mut_q; setp.ne.u32 mut_q, " + m[5].str() + ", 0; @mut_q " + load;
      else
        code += load;
      code += "st.shared.v4.u32 [" + m[3].str() + "], {mut_v0, mut_v1, mut_v2, mut_v3}; }";
      out.push_back(code);
      ++copies;
    } else if (!std::regex_search(l, bookkeeping)) {
      out.push_back(l);
    }
  }
  if (copies == 0) return std::nullopt;
  return mutant{join_lines(out), s.manifest_text, true,
                std::to_string(copies) + " cp.async copies replaced by ld.global + st.shared"};
}

std::optional<mutant> try_wait_to_test_wait(const task& t, const solution& s, std::mt19937_64&) {
  if (!targets(t, "mbarrier.try_wait")) return std::nullopt;
  // Equivalent inside a spin loop; only the target instruction is gone.
  std::string ptx = s.ptx;
  int changed = 0;
  for (size_t at = ptx.find("mbarrier.try_wait"); at != std::string::npos; at = ptx.find("mbarrier.try_wait", at)) {
    ptx.replace(at, 17, "mbarrier.test_wait");
    ++changed;
  }
  if (changed == 0) return std::nullopt;
  return mutant{ptx, s.manifest_text, true, std::to_string(changed) + " mbarrier.try_wait -> mbarrier.test_wait"};
}

std::optional<mutant> setmaxnreg_removed(const task&, const solution& s, std::mt19937_64&) {
  static const std::regex op(R"(^\s*setmaxnreg\.)");
  auto lines = split_lines(s.ptx);
  auto hits = matching_lines(lines, op);
  if (hits.empty()) return std::nullopt;
  for (size_t k = hits.size(); k-- > 0;) lines.erase(lines.begin() + static_cast<std::ptrdiff_t>(hits[k]));
  return mutant{join_lines(lines), s.manifest_text, true,
                std::to_string(hits.size()) + " setmaxnreg instructions removed (no register rebalancing)"};
}

std::optional<mutant> wgmma_wait_all(const task&, const solution& s, std::mt19937_64&) {
  static const std::regex op(R"(wgmma\.wait_group\.sync\.aligned\s+([1-9]\d*)\s*;)");
  auto lines = split_lines(s.ptx);
  auto hits = matching_lines(lines, op);
  if (hits.empty()) return std::nullopt;
  for (size_t i : hits) lines[i] = std::regex_replace(lines[i], op, "wgmma.wait_group.sync.aligned 0;");
  return mutant{join_lines(lines), s.manifest_text, true,
                std::to_string(hits.size()) + " wgmma.wait_group N>0 -> 0 (no MMA group left in flight)"};
}

// The whole kernel rewritten on the CUDA cores: a model that gave up on the
// tensor-core instructions and wrote a correct FFMA kernel instead. The
// rewrite is a real kernel for the task (tasks/solutions/<task>/rewrites/),
// so on a GPU it passes correctness and fails at instructions.
std::optional<mutant> cuda_core_rewrite(const task&, const solution& s, std::mt19937_64& rng) {
  if (s.rewrites.empty()) return std::nullopt;
  const rewrite& r = s.rewrites[pick(rng, s.rewrites.size())];
  return mutant{r.ptx, r.manifest_text, true, "kernel rewritten without the target instructions (rewrite '" + r.name + "')"};
}

// A spin-wait on an mbarrier that sleeps before every poll ("back off so the
// producer gets the issue slots"): each wait, even one whose phase already
// completed, first sleeps, so waiters wake up long after their data landed.
// Correct, same instructions, slower. (A sleep only after a failed try_wait
// was tried first: try_wait already suspends in hardware, so it seldom
// failed and most such mutants kept their speed on the H200.)
std::optional<mutant> mbarrier_wait_backoff(const task&, const solution& s, std::mt19937_64& rng) {
  static const std::regex wait(R"(^(\s*)mbarrier\.(try_wait|test_wait)[\w.:]*\s+(%?\w+)\s*,.*;)");
  static const int sleeps[] = {500, 1000, 2000};
  const int ns = sleeps[pick(rng, 3)];
  std::vector<std::string> out;
  int changed = 0;
  for (const auto& l : split_lines(s.ptx)) {
    std::smatch m;
    if (std::regex_search(l, m, wait)) {
      out.push_back(m[1].str() + "nanosleep.u32 " + std::to_string(ns) + ";");
      ++changed;
    }
    out.push_back(l);
  }
  if (changed == 0) return std::nullopt;
  return mutant{join_lines(out), s.manifest_text, true,
                std::to_string(changed) + " mbarrier waits sleep " + std::to_string(ns) + " ns before every poll"};
}

// cp.async pipelining undone: every wait drains all copies in flight, so a
// tile's loads no longer overlap the math on the previous one (one stage).
std::optional<mutant> cp_async_single_stage(const task&, const solution& s, std::mt19937_64&) {
  static const std::regex op(R"(cp\.async\.wait_group\s+([1-9]\d*)\s*;)");
  auto lines = split_lines(s.ptx);
  auto hits = matching_lines(lines, op);
  if (hits.empty()) return std::nullopt;
  for (size_t i : hits) lines[i] = std::regex_replace(lines[i], op, "cp.async.wait_group 0;");
  return mutant{join_lines(lines), s.manifest_text, true,
                std::to_string(hits.size()) + " cp.async.wait_group N>0 -> 0 (one pipeline stage)"};
}

}  // namespace

void add_instruction_performance_operators(std::vector<mutation_operator>& out) {
  out.push_back({"wgmma_to_mma_sync", stage::instructions, "wgmma.mma_async replaced by mma.sync",
                 wgmma_to_mma_sync});
  out.push_back({"cp_async_to_plain_copy", stage::instructions, "cp.async replaced by ld.global + st.shared",
                 cp_async_to_plain_copy});
  out.push_back({"try_wait_to_test_wait", stage::instructions, "mbarrier.try_wait replaced by test_wait",
                 try_wait_to_test_wait});
  out.push_back({"cuda_core_rewrite", stage::instructions, "kernel rewritten on the CUDA cores (no target instructions)",
                 cuda_core_rewrite});
  out.push_back({"mbarrier_wait_backoff", stage::performance, "mbarrier wait loops sleep before each retry",
                 mbarrier_wait_backoff, "sleeping"});
  out.push_back({"cp_async_single_stage", stage::performance, "every cp.async wait drains all copies (one stage)",
                 cp_async_single_stage, "long_scoreboard,barrier,short_scoreboard,wait"});
  out.push_back({"setmaxnreg_removed", stage::performance, "setmaxnreg removed", setmaxnreg_removed});
  // A warp in wgmma.wait_group is sampled as a barrier stall on Hopper (H100,
  // CUPTI 13.0: 99-100% of the samples at the GEMM solution's wait lines).
  out.push_back({"wgmma_wait_all", stage::performance, "every wgmma wait drains all groups", wgmma_wait_all,
                 "gmma,tensor_pipe,wait,barrier"});
}

}  // namespace ptxbench::mutate
