// The layout and pipeline performance operators (operators_performance.cpp):
// where each applies, that its mutant still assembles for the solution's
// target through the evaluator's compile stage, that the mutated region is
// exactly the edited lines, and that each edit has the shape that keeps the
// result (same registers and slots, same barrier, every shared access mapped).
#include <doctest/doctest.h>

#include <algorithm>
#include <regex>
#include <set>

#include "agent/judge/judge.hpp"
#include "evaluator/api/candidate.hpp"
#include "evaluator/api/solutions.hpp"
#include "evaluator/compile/ptx_text.hpp"
#include "evaluator/pool/profile_summary.hpp"
#include "mutate_test_util.hpp"
#include "tests/text_lines.hpp"

using ptxbench::test::lines_of;

namespace ptxbench {
namespace {

const mutate::mutation_operator& op(const std::string& name) {
  const auto* o = mutate::find_operator(name);
  REQUIRE_MESSAGE(o != nullptr, name);
  return *o;
}

bool available(const std::string& id) {
  return solution_dir(id, default_solution_roots(testing::source_root() / "tasks")).has_value();
}

std::vector<int> lines_containing(const std::vector<std::string>& lines, const std::string& part) {
  std::vector<int> out;
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].find(part) != std::string::npos) out.push_back(int(i + 1));
  return out;
}

// The mutant through the real compile stage and the static instruction check
// (no GPU): it assembles for the task's arch, fails nothing, and is judged
// not_run at performance.
void check_compiles(evaluator& eval, const mutate::task_solution& ts, const mutate::mutation_operator& o,
                    const mutate::mutant& m) {
  auto c = extract_candidate(mutate::render_reply(m.ptx, m.manifest_text, m.manifest_block));
  judge_settings s;
  s.run_gpu = false;
  auto r = judge_candidate(eval, ts.t, candidate_row{0, 0, c.ptx, c.manifest_text, c.problem}, s);
  CAPTURE(r.headline);
  REQUIRE(r.stages.count(stage::compile));
  CHECK(r.stages.at(stage::compile).status == stage_status::passed);
  CHECK(mutate::classify(r, o.target) == mutate::mutant_outcome::not_run);
}

// Each stall name is one profile_summary knows (it has words for it).
void check_stalls(const mutate::mutation_operator& o, const std::set<std::string>& expected) {
  REQUIRE(o.stalls != nullptr);
  CHECK(o.target == stage::performance);
  std::set<std::string> names;
  std::string list = o.stalls;
  for (size_t at = 0; at <= list.size();) {
    size_t end = list.find(',', at);
    if (end == std::string::npos) end = list.size();
    names.insert(list.substr(at, end - at));
    at = end + 1;
  }
  CHECK(names == expected);
  for (const auto& n : names) {
    std::string plain = n;
    std::replace(plain.begin(), plain.end(), '_', ' ');
    CHECK_MESSAGE(stall_in_words(n) != plain, n);
  }
}

TEST_CASE("smem_bank_conflict maps every shared access of the swizzled mma.sync solutions") {
  check_stalls(op("smem_bank_conflict"), {"mio_throttle", "short_scoreboard"});
  auto eval = testing::static_evaluator();
  // Checked in: gemm_bf16_mma_sync; generated (build/solutions) when present: the other mma.sync solutions.
  int applied = 0;
  for (const char* id : {"gemm_bf16_mma_sync", "gemm_fp16_mma_sync", "gemm_bf16_nn_mma_sync",
                         "attention_fwd_bf16_mma_sync_d64"}) {
    CAPTURE(std::string(id));
    if (!available(id)) {
      MESSAGE("not generated here: " << id);
      continue;
    }
    auto ts = testing::solution_of(id);
    auto m = mutate::apply_operator(op("smem_bank_conflict"), ts.t, ts.s, 1, 0);
    REQUIRE(m.has_value());
    ++applied;
    const auto before = lines_of(ts.s.ptx), after = lines_of(m->ptx);
    REQUIRE(after.size() == before.size());  // every edit is in place
    // Every shared access (cp.async's shared destination, ldmatrix) is rewritten, and nothing else.
    static const std::regex access(R"(cp\.async\.c[ag]\.shared|ldmatrix\.)");
    std::vector<int> accesses;
    for (size_t i = 0; i < before.size(); ++i)
      if (std::regex_search(before[i], access)) accesses.push_back(int(i + 1));
    REQUIRE_FALSE(accesses.empty());
    CHECK(m->lines == accesses);
    CHECK(lines_containing(after, "xor.b32 mut_a, mut_a, mut_o;") == accesses);
    for (int l : accesses) {
      const std::string& was = before[size_t(l - 1)];
      const std::string& now = after[size_t(l - 1)];
      // The access itself is kept, on the mapped address: same opcode and operands but the shared one.
      const std::string opcode = was.substr(was.find_first_not_of(" \t"), was.find_first_of(" \t", was.find_first_not_of(" \t")) - was.find_first_not_of(" \t"));
      CHECK_MESSAGE(now.find(opcode + " ") != std::string::npos, now);
      CHECK_MESSAGE(now.find("[mut_a]") != std::string::npos, now);
      CHECK_MESSAGE(now.find("and.b32 mut_o, mut_o, 112;") != std::string::npos, now);
    }
    CHECK(m->change.find(std::to_string(accesses.size()) + " shared-memory accesses") == 0);
    check_compiles(*eval, ts, op("smem_bank_conflict"), *m);
  }
  CHECK(applied >= 1);
  // Shared memory reached through wgmma descriptors and TMA: the map cannot follow, not applicable.
  for (const char* id : {"gemm_bf16_wgmma_tma", "attention_fwd_bf16_wgmma", "gemm_bf16_tcgen05"}) {
    auto ts = testing::solution_of(id);
    CHECK_FALSE_MESSAGE(mutate::apply_operator(op("smem_bank_conflict"), ts.t, ts.s, 1, 0), id);
  }
  // Without the XOR swizzle there is nothing to undo.
  auto mma = testing::solution_of("gemm_bf16_mma_sync");
  mutate::solution plain = mma.s;
  plain.ptx = std::regex_replace(plain.ptx, std::regex(R"(xor\.b32(\s+%r\d+,\s*)(%r\d+),\s*%r\d+;)"), "mov.b32$1$2;");
  CHECK_FALSE(mutate::apply_operator(op("smem_bank_conflict"), mma.t, plain, 1, 0));
  // A shared access the map does not understand (a 64-bit address) makes the whole module not applicable.
  mutate::solution odd = mma.s;
  odd.ptx = std::regex_replace(odd.ptx, std::regex(R"(\[%r630\])"), "[%rd1]");
  CHECK_FALSE(mutate::apply_operator(op("smem_bank_conflict"), mma.t, odd, 1, 0));
}

TEST_CASE("accumulator_spill round-trips each accumulator write in the loop through local memory") {
  check_stalls(op("accumulator_spill"), {"long_scoreboard", "lg_throttle"});
  auto eval = testing::static_evaluator();
  static const std::regex first_operand(R"(^\s*[a-z][\w.:]*\s+(\{[^}]*\}|[^,;\s]+))");
  static const std::regex trip(R"(st\.volatile\.f32 \[mut_p\+(\d+)\], (%f\d+); ld\.volatile\.f32 (%f\d+), \[mut_p\+(\d+)\];)");
  for (const char* id : {"gemm_bf16_mma_sync", "attention_fwd_bf16_wgmma", "attention_fwd_bf16_wgmma_causal",
                         "attention_bwd_bf16_wgmma"}) {
    CAPTURE(std::string(id));
    auto ts = testing::solution_of(id);
    auto m = mutate::apply_operator(op("accumulator_spill"), ts.t, ts.s, 1, 0);
    REQUIRE(m.has_value());
    const auto after = lines_of(m->ptx);
    // Only inserted lines: the .local array and the round trips; without them the solution is back.
    const auto edited = lines_containing(after, "mut_");
    REQUIRE(edited.size() >= 2);
    CHECK(m->lines == edited);
    std::vector<std::string> rest;
    for (size_t i = 0; i < after.size(); ++i)
      if (std::find(edited.begin(), edited.end(), int(i + 1)) == edited.end()) rest.push_back(after[i]);
    CHECK(rest == lines_of(ts.s.ptx));
    CHECK(after[size_t(edited[0] - 1)].find(".local .align 16 .b8 mut_spill[") != std::string::npos);
    // Each round trip stores and reloads the same register through the same slot, right after a
    // line of the solution that writes that register (an mma.sync, a rescale, an exp).
    int trips = 0;
    for (size_t k = 1; k < edited.size(); ++k) {
      const std::string& l = after[size_t(edited[k] - 1)];
      const std::string& prev = after[size_t(edited[k] - 2)];
      CHECK(prev.find("mut_") == std::string::npos);
      CHECK(prev.find("wgmma.mma_async") == std::string::npos);
      for (auto it = std::sregex_iterator(l.begin(), l.end(), trip); it != std::sregex_iterator(); ++it) {
        CHECK((*it)[1].str() == (*it)[4].str());
        CHECK((*it)[2].str() == (*it)[3].str());
        // The register is (one of) the written line's destination, its first operand.
        std::smatch d;
        REQUIRE(std::regex_search(prev, d, first_operand));
        const std::string dest = d[1].str();
        CHECK_MESSAGE(std::regex_search(dest, std::regex((*it)[2].str() + R"((?!\d))")), prev);
        ++trips;
      }
    }
    CHECK(trips > 0);
    check_compiles(*eval, ts, op("accumulator_spill"), *m);
    // Every round trip is a local load by its PTX, whatever ptxas makes of it
    // (LDL, or a generic LD in the wgmma kernels), so its waits count as local-memory waits.
    const std::set<int> local = ptx_text::local_load_lines(m->ptx);
    CHECK(local == std::set<int>(edited.begin() + 1, edited.end()));
  }
  // The wgmma GEMMs touch their accumulators only after the loop: nothing to spill there.
  for (const char* id : {"gemm_bf16_wgmma_tma", "gemm_fp8_e4m3_wgmma_tma"}) {
    auto ts = testing::solution_of(id);
    CHECK_FALSE_MESSAGE(mutate::apply_operator(op("accumulator_spill"), ts.t, ts.s, 1, 0), id);
  }
}

// The H100 profiles of the one-stage GEMM mutant (docs/gpu-runs.md): the
// consumers' full-barrier wait held 44% of samples, outside the edited lines.
// Charged through the barrier, the hottest line is the producer's inserted
// wait, inside the mutated region; the solution itself keeps its consumers'
// wait on top when its producer mostly waits for free slots.
TEST_CASE("one-stage pipeline samples put the producer's inserted wait on top once waits are charged through the barrier") {
  auto ts = testing::solution_of("gemm_bf16_wgmma_tma");
  auto m = mutate::apply_operator(op("pipeline_one_stage"), ts.t, ts.s, 1, 0);
  REQUIRE(m.has_value());
  const ptx_text::barrier_roles roles = ptx_text::barrier_roles_of(m->ptx);
  int consumer = 0, slot = 0, own = 0;
  for (const auto& w : roles.waits) {
    if (!w.in_producer && !consumer) consumer = w.last;
    if (w.in_producer && !w.own_loads && !slot) slot = w.last;
    if (w.own_loads && !own) own = w.last;
  }
  REQUIRE(consumer > 0);
  REQUIRE(slot > 0);
  REQUIRE(own > 0);
  const int tma = lines_containing(lines_of(m->ptx), "cp.async.bulk.tensor").back();
  sass_line_map map;
  map.available = true;
  map.lines["k"] = {{0x10, consumer}, {0x20, slot}, {0x30, own}, {0x40, tma}};
  const auto sampled = [](std::vector<std::pair<uint64_t, uint64_t>> at) {
    protocol::profile_raw s;
    s.part = "sampling";
    s.ran = true;
    for (const auto& [pc, n] : at) s.pcs.push_back({"k", pc, {{"smsp__pcsamp_warps_issue_stalled_long_scoreboard", n}}});
    return s;
  };
  profile_report mutant;
  summarise_samples(sampled({{0x10, 440}, {0x20, 4}, {0x30, 50}, {0x40, 6}}), map, m->ptx, 20, mutant);
  REQUIRE_FALSE(mutant.lines.empty());
  CHECK(mutant.lines[0].line == own);
  CHECK(std::find(m->lines.begin(), m->lines.end(), mutant.lines[0].line) != m->lines.end());
  // Samples of a producer that mostly waits for free slots (an honest pipeline): the consumers stay on top.
  map.lines["k"] = {{0x10, consumer}, {0x20, slot}, {0x40, tma}};
  profile_report honest;
  summarise_samples(sampled({{0x10, 440}, {0x20, 54}, {0x40, 6}}), map, m->ptx, 20, honest);
  REQUIRE_FALSE(honest.lines.empty());
  CHECK(honest.lines[0].line == consumer);
}

TEST_CASE("pipeline_one_stage makes the TMA producer wait for each load it issued") {
  check_stalls(op("pipeline_one_stage"), {"sleeping", "branch_resolving", "long_scoreboard"});
  auto eval = testing::static_evaluator();
  static const std::regex arrive(R"(mbarrier\.arrive\.expect_tx\.shared::cta\.b64 mut_tok, \[(%r\d+)\])");
  static const std::regex tma(R"(cp\.async\.bulk\.tensor\.[^;]*,\s*\[(%r\d+)\];)");
  static const std::regex wait(R"(^\s*(mut_land_\d+): mbarrier\.try_wait\.shared::cta\.b64 mut_landed, \[(%r\d+)\], mut_tok; @!mut_landed bra (mut_land_\d+);$)");
  for (const char* id : {"gemm_bf16_wgmma_tma", "gemm_bf16_wgmma", "gemm_fp8_e4m3_wgmma_tma", "attention_fwd_bf16_wgmma",
                         "attention_fwd_bf16_wgmma_causal", "attention_bwd_bf16_wgmma", "gemm_bf16_tcgen05"}) {
    CAPTURE(std::string(id));
    auto ts = testing::solution_of(id);
    auto m = mutate::apply_operator(op("pipeline_one_stage"), ts.t, ts.s, 1, 0);
    REQUIRE(m.has_value());
    const auto after = lines_of(m->ptx);
    const auto edited = lines_containing(after, "mut_");
    CHECK(m->lines == edited);
    // Undone: the inserted waits and declaration dropped, the token back to the sink `_`.
    std::vector<std::string> rest;
    size_t arrives = 0, waits = 0;
    std::string token_bar;  // the barrier whose phase the token holds
    for (size_t i = 0; i < after.size(); ++i) {
      const std::string& l = after[i];
      std::smatch a, w, t;
      if (std::regex_search(l, a, arrive)) {
        ++arrives;
        token_bar = a[1].str();
        std::string back = l;
        back.replace(back.find("mut_tok"), 7, "_");
        rest.push_back(back);
      } else if (std::regex_match(l, w, wait)) {
        ++waits;
        CHECK(w[1].str() == w[3].str());
        // Waits on the barrier its token came from, right after a TMA load that completes on it.
        CHECK(w[2].str() == token_bar);
        REQUIRE(i > 0);
        REQUIRE(std::regex_search(after[i - 1], t, tma));
        CHECK(t[1].str() == w[2].str());
        token_bar.clear();  // one wait per arrive
      } else if (l.find("mut_") == std::string::npos) {
        rest.push_back(l);
      }
    }
    CHECK(rest == lines_of(ts.s.ptx));
    CHECK(arrives > 0);
    CHECK(waits == arrives);
    CHECK(edited.size() == arrives + waits + 1);  // and the one declaration line
    CHECK(m->change.find(std::to_string(waits) + " TMA stages wait") == 0);
    check_compiles(*eval, ts, op("pipeline_one_stage"), *m);
    // The profile's barrier roles (blame through the barrier): the solution's
    // producer waits only for free slots and its consumers wait outside the
    // producer loop; each inserted wait is the producer waiting for its own loads.
    const ptx_text::barrier_roles honest = ptx_text::barrier_roles_of(ts.s.ptx);
    CHECK_FALSE(honest.producer_loops.empty());
    CHECK(std::none_of(honest.waits.begin(), honest.waits.end(), [](const auto& w) { return w.own_loads; }));
    CHECK(std::any_of(honest.waits.begin(), honest.waits.end(), [](const auto& w) { return !w.in_producer; }));
    const ptx_text::barrier_roles roles = ptx_text::barrier_roles_of(m->ptx);
    size_t own = 0;
    for (const auto& w : roles.waits) {
      if (!w.own_loads) continue;
      ++own;
      CHECK(w.first == w.last);  // the inserted one-line spin loop
      REQUIRE(w.first >= 1);
      CHECK(std::regex_match(after[size_t(w.first - 1)], wait));
    }
    CHECK(own == waits);
  }
  // No TMA: nothing to serialise.
  auto mma = testing::solution_of("gemm_bf16_mma_sync");
  CHECK_FALSE(mutate::apply_operator(op("pipeline_one_stage"), mma.t, mma.s, 1, 0));
  // A cluster's multicast loads complete on other CTAs' barriers: not applicable.
  auto tma_sol = testing::solution_of("gemm_bf16_wgmma_tma");
  mutate::solution multicast = tma_sol.s;
  multicast.ptx += "\n\tmapa.shared::cluster.u32 %r1, %r2, 1;\n";
  CHECK_FALSE(mutate::apply_operator(op("pipeline_one_stage"), tma_sol.t, multicast, 1, 0));
}

}  // namespace
}  // namespace ptxbench
