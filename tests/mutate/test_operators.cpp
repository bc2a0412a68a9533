// The operators as text edits: deterministic, "not applicable" when their
// pattern is absent, and for the static stages the verdict they aim at
// through the real format and compile stages and the static instruction check.
#include <doctest/doctest.h>

#include <set>

#include "tests/text_lines.hpp"
#include "agent/judge/judge.hpp"
#include "evaluator/api/candidate.hpp"
#include "mutate_test_util.hpp"

using ptxbench::test::lines_of;

namespace ptxbench {
namespace {

// As mutate judges a mutant: agent/judge's path, GPU stages off.
evaluation_result judge(evaluator& eval, const task& t, const mutate::mutant& m) {
  auto c = extract_candidate(mutate::render_reply(m.ptx, m.manifest_text, m.manifest_block));
  judge_settings s;
  s.run_gpu = false;
  return judge_candidate(eval, t, candidate_row{0, 0, c.ptx, c.manifest_text, c.problem}, s);
}

const mutate::mutation_operator& op(const std::string& name) {
  const auto* o = mutate::find_operator(name);
  REQUIRE_MESSAGE(o != nullptr, name);
  return *o;
}

TEST_CASE("every stage has operators and names are unique") {
  std::set<std::string> names;
  std::set<stage> stages;
  for (const auto& o : mutate::catalogue()) {
    CHECK_MESSAGE(names.insert(o.name).second, o.name);
    stages.insert(o.target);
  }
  CHECK(stages.size() == static_cast<size_t>(stage_count));
}

TEST_CASE("operators are deterministic given the seed") {
  auto ts = testing::solution_of("gemm_bf16_wgmma_tma");
  for (const char* name : {"misspelled_modifier", "undeclared_register", "tile_bound_off_by_one", "params_count_wrong"}) {
    auto a = mutate::apply_operator(op(name), ts.t, ts.s, 7, 3);
    auto b = mutate::apply_operator(op(name), ts.t, ts.s, 7, 3);
    REQUIRE_MESSAGE(a.has_value(), name);
    REQUIRE(b.has_value());
    CHECK(a->ptx == b->ptx);
    CHECK(a->manifest_text == b->manifest_text);
    CHECK(a->change == b->change);
    CHECK((a->ptx != ts.s.ptx || a->manifest_text != ts.s.manifest_text || !a->manifest_block));
  }
  // Different seeds reach different places of the module.
  std::set<std::string> changes;
  for (uint64_t seed = 1; seed <= 6; ++seed)
    changes.insert(mutate::apply_operator(op("misspelled_modifier"), ts.t, ts.s, seed, 0)->change);
  CHECK(changes.size() > 1);
}

TEST_CASE("operators report not applicable when their pattern is absent") {
  auto gemm = testing::solution_of("gemm_bf16_wgmma_tma");
  CHECK_FALSE(mutate::apply_operator(op("causal_mask_missing"), gemm.t, gemm.s, 1, 0));  // not a causal task
  CHECK_FALSE(mutate::apply_operator(op("wrong_scale"), gemm.t, gemm.s, 1, 0));          // no softmax scale
  CHECK_FALSE(mutate::apply_operator(op("lse_wrong_base"), gemm.t, gemm.s, 1, 0));
  CHECK_FALSE(mutate::apply_operator(op("cp_async_to_plain_copy"), gemm.t, gemm.s, 1, 0));  // not a target
  mutate::solution broken{gemm.s.ptx, "not json"};
  CHECK_FALSE(mutate::apply_operator(op("params_count_wrong"), gemm.t, broken, 1, 0));
  mutate::solution no_regs{"// nothing here\n", gemm.s.manifest_text};
  CHECK_FALSE(mutate::apply_operator(op("undeclared_register"), gemm.t, no_regs, 1, 0));
  auto causal = testing::solution_of("attention_fwd_bf16_wgmma_causal");
  CHECK(mutate::apply_operator(op("causal_mask_missing"), causal.t, causal.s, 1, 0));
  CHECK(mutate::apply_operator(op("causal_mask_shifted"), causal.t, causal.s, 1, 0));
  CHECK(mutate::apply_operator(op("wrong_scale"), causal.t, causal.s, 1, 0));
  CHECK(mutate::apply_operator(op("lse_wrong_base"), causal.t, causal.s, 1, 0));
}

// Each static-stage operator, on the solution it fits, through the real stages.
TEST_CASE("static-stage operators get the verdict they aim at without a GPU") {
  auto eval = testing::static_evaluator();
  struct sample {
    const char* task;
    const char* op;
  };
  const sample samples[] = {
      {"gemm_bf16_wgmma_tma", "manifest_missing"},       {"gemm_bf16_wgmma_tma", "params_count_wrong"},
      {"gemm_bf16_wgmma_tma", "params_order_wrong"},     {"gemm_bf16_wgmma_tma", "entry_mismatch"},
      {"gemm_bf16_wgmma_tma", "misspelled_modifier"},    {"gemm_bf16_wgmma_tma", "wrong_register_type"},
      {"gemm_bf16_wgmma_tma", "undeclared_register"},    {"gemm_bf16_wgmma_tma", "wrong_state_space"},
      {"gemm_bf16_wgmma_tma", "try_wait_to_test_wait"},  {"gemm_bf16_wgmma", "wgmma_to_mma_sync"},
      {"gemm_bf16_mma_sync", "cp_async_to_plain_copy"},  {"gemm_bf16_wgmma", "cuda_core_rewrite"},
      {"attention_fwd_bf16_wgmma", "cuda_core_rewrite"}, {"attention_fwd_bf16_wgmma_causal", "cuda_core_rewrite"},
      {"attention_bwd_bf16_wgmma", "cuda_core_rewrite"},
  };
  for (const auto& s : samples) {
    CAPTURE(s.task);
    CAPTURE(s.op);
    auto ts = testing::solution_of(s.task);
    const auto& o = op(s.op);
    auto m = mutate::apply_operator(o, ts.t, ts.s, 1, 0);
    REQUIRE(m.has_value());
    auto r = judge(*eval, ts.t, *m);
    CAPTURE(r.headline);
    CHECK(mutate::classify(r, o.target) == mutate::mutant_outcome::kept);
    CHECK(r.verdict == o.target);
  }
}

TEST_CASE("a GPU-stage mutant judged without a GPU is not run and not kept") {
  auto eval = testing::static_evaluator();
  auto ts = testing::solution_of("gemm_bf16_wgmma_tma");
  for (const char* name : {"mbarrier_parity_flipped", "tile_bound_off_by_one", "setmaxnreg_removed",
                           "mbarrier_wait_backoff"}) {
    CAPTURE(name);
    const auto& o = op(name);
    auto m = mutate::apply_operator(o, ts.t, ts.s, 1, 0);
    REQUIRE(m.has_value());
    CHECK(mutate::classify(judge(*eval, ts.t, *m), o.target) == mutate::mutant_outcome::not_run);
  }
}

TEST_CASE("performance operators slow the pipeline without changing what is computed") {
  // Back-off: a sleep before every retry branch of every mbarrier wait, and nothing else changed.
  auto tma = testing::solution_of("gemm_bf16_wgmma_tma");
  auto m = mutate::apply_operator(op("mbarrier_wait_backoff"), tma.t, tma.s, 1, 0);
  REQUIRE(m.has_value());
  auto count = [](const std::string& text, const std::string& part) {
    size_t n = 0;
    for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
    return n;
  };
  const size_t waits = count(tma.s.ptx, "mbarrier.try_wait");
  REQUIRE(waits > 0);
  CHECK(count(m->ptx, "nanosleep.u32") == waits);
  CHECK(count(m->ptx, "\n") == count(tma.s.ptx, "\n") + waits);
  CHECK(m->manifest_text == tma.s.manifest_text);
  CHECK(m->change.find(std::to_string(waits) + " mbarrier waits sleep") == 0);
  // Every attention solution waits on mbarriers too.
  for (const char* id : {"attention_fwd_bf16_wgmma", "attention_bwd_bf16_wgmma"}) {
    auto a = testing::solution_of(id);
    CHECK_MESSAGE(mutate::apply_operator(op("mbarrier_wait_backoff"), a.t, a.s, 1, 0).has_value(), id);
  }
  // Single stage: only the cp.async task has cp.async waits with groups left in flight.
  auto mma = testing::solution_of("gemm_bf16_mma_sync");
  auto single = mutate::apply_operator(op("cp_async_single_stage"), mma.t, mma.s, 1, 0);
  REQUIRE(single.has_value());
  CHECK(count(single->ptx, "cp.async.wait_group 0;") == count(mma.s.ptx, "cp.async.wait_group 0;") + 1);
  CHECK_FALSE(mutate::apply_operator(op("cp_async_single_stage"), tma.t, tma.s, 1, 0));
  // The rewrite exists only where the solution folder has one.
  CHECK_FALSE(mutate::apply_operator(op("cuda_core_rewrite"), tma.t, tma.s, 1, 0));
  // No mbarrier wait, nothing to slow down.
  CHECK_FALSE(mutate::apply_operator(op("mbarrier_wait_backoff"), mma.t, mma.s, 1, 0));
}

TEST_CASE("mutants are drawn one target stage at a time") {
  std::vector<const mutate::mutation_operator*> all;
  for (const auto& o : mutate::catalogue()) all.push_back(&o);
  auto order = mutate::interleave_by_stage(all);
  REQUIRE(order.size() == all.size());
  std::set<std::string> names;
  for (const auto* o : order) names.insert(o->name);
  CHECK(names.size() == all.size());
  // The first six are one of each stage, in judging order.
  for (int i = 0; i < stage_count; ++i) CHECK(order[size_t(i)]->target == stage(i));
  // A task whose operators are mostly format ones still gets its performance one early.
  std::vector<const mutate::mutation_operator*> skewed{&op("manifest_missing"), &op("params_count_wrong"),
                                                       &op("params_order_wrong"), &op("entry_mismatch"),
                                                       &op("mbarrier_wait_backoff")};
  auto o2 = mutate::interleave_by_stage(skewed);
  CHECK(std::string(o2[1]->name) == "mbarrier_wait_backoff");
}

}  // namespace
}  // namespace ptxbench

namespace ptxbench {

TEST_CASE("changed_lines finds inserted - replaced and removed lines of a mutant") {
  const std::string a = "l1\nl2\nl3\nl4\nl5\n";
  CHECK(mutate::changed_lines(a, a).empty());
  CHECK(mutate::changed_lines(a, "l1\nNEW\nl2\nl3\nl4\nl5\n") == std::vector<int>{2});
  CHECK(mutate::changed_lines(a, "l1\nl2\nX3\nl4\nl5\n") == std::vector<int>{3});
  CHECK(mutate::changed_lines(a, "l1\nl2\nl4\nl5\n") == std::vector<int>{3});  // the line after the removal
  CHECK(mutate::changed_lines(a, "S\nl1\nl2\nS\nl3\nl4\nl5\n") == (std::vector<int>{1, 4}));
  CHECK(mutate::in_region({10}, 12));
  CHECK_FALSE(mutate::in_region({10}, 13));
}

TEST_CASE("every performance mutant of every solution marks exactly the lines it changed") {
  for (const char* name : {"mbarrier_wait_backoff", "cp_async_single_stage", "wgmma_wait_all", "setmaxnreg_removed"}) {
    for (const char* id : {"gemm_bf16_wgmma_tma", "gemm_bf16_mma_sync", "attention_fwd_bf16_wgmma",
                           "attention_bwd_bf16_wgmma"}) {
      CAPTURE(name);
      CAPTURE(id);
      auto sol = testing::solution_of(id);
      auto m = mutate::apply_operator(op(name), sol.t, sol.s, 1, 0);
      if (!m) continue;
      REQUIRE_FALSE(m->lines.empty());
      const auto mutant = lines_of(m->ptx);
      const std::string pattern = std::string(name) == "mbarrier_wait_backoff"  ? "nanosleep"
                                  : std::string(name) == "cp_async_single_stage" ? "cp.async.wait_group 0"
                                  : std::string(name) == "wgmma_wait_all"        ? "wgmma.wait_group"
                                                                                 : "";
      for (int l : m->lines) {
        REQUIRE(l >= 1);
        REQUIRE(size_t(l) <= mutant.size());
        if (!pattern.empty()) CHECK_MESSAGE(mutant[size_t(l - 1)].find(pattern) != std::string::npos, mutant[size_t(l - 1)]);
      }
      if (std::string(name) == "mbarrier_wait_backoff") {
        size_t sleeps = 0;
        for (const auto& l : mutant) sleeps += l.find("nanosleep") != std::string::npos;
        CHECK(m->lines.size() == sleeps);
      }
    }
  }
}

TEST_CASE("a profile is localised when its hottest line is in the mutated region and its stall is the mutation's") {
  const auto& backoff = op("mbarrier_wait_backoff");
  evaluation_result r;
  std::string why;
  CHECK_FALSE(mutate::localise(backoff, {40}, r, why));
  CHECK(why.find("no profile") != std::string::npos);
  r.profile = profile_report{};
  CHECK_FALSE(mutate::localise(backoff, {40}, r, why));
  CHECK(why.find("no PTX lines") != std::string::npos);
  r.profile->lines = {{41, "mbarrier.try_wait.parity.shared::cta.b64 p, [bar], ph;", 0.38, 380, "sleeping", "", 0.9},
                      {12, "wgmma.mma_async ...", 0.2, 200, "gmma", "", 0.8}};
  auto l = mutate::localise(backoff, {40}, r, why);
  REQUIRE(l);
  CHECK(l->in_region);
  CHECK(l->stall_matches);
  CHECK(l->top_line == 41);
  l = mutate::localise(backoff, {200}, r, why);
  REQUIRE(l);
  CHECK_FALSE(l->in_region);
  r.profile->lines.front().stall = "long_scoreboard";
  CHECK_FALSE(mutate::localise(backoff, {40}, r, why)->stall_matches);
  CHECK(mutate::localise(op("cp_async_single_stage"), {40}, r, why)->stall_matches);

  mutate::mutate_summary s;
  mutate::mutant_record rec;
  rec.task_id = "gemm_bf16_wgmma_tma";
  rec.op = "mbarrier_wait_backoff";
  rec.located = mutate::localise(backoff, {40}, r, why);
  s.mutants.push_back(rec);
  rec.located.reset();
  rec.profile_note = "no profile (the mutant did not reach the performance stage: correctness)";
  s.mutants.push_back(rec);
  const std::string table = mutate::format_localisation_table(s);
  CHECK(table.find("localised 1/1") != std::string::npos);
  CHECK(table.find("stall matches 0/1") != std::string::npos);
  CHECK(table.find("did not reach the performance stage") != std::string::npos);
  CHECK(mutate::format_localisation_table(mutate::mutate_summary{}).empty());

  // A miss names the mutated span and the next hottest lines, so it can be read.
  mutate::mutate_summary miss;
  rec.located = mutate::localise(backoff, {200, 204}, r, why);
  REQUIRE(rec.located);
  CHECK(rec.located->region_first == 200);
  CHECK(rec.located->region_last == 204);
  CHECK(rec.located->next_lines == "12 gmma 20%");
  miss.mutants.push_back(rec);
  const std::string missed = mutate::format_localisation_table(miss);
  CHECK(missed.find("mutated lines 200-204; next hottest: 12 gmma 20%") != std::string::npos);
  CHECK_FALSE(rec.located->in_top5);
  CHECK(missed.find("in the top five lines 0/1") != std::string::npos);
  // The second tally counts only the mutants measurably slower than their solution.
  mutate::mutate_summary mixed;
  rec.located = mutate::localise(backoff, {40}, r, why);
  rec.located->slowdown = 1.6;
  mixed.mutants.push_back(rec);
  rec.located = mutate::localise(backoff, {200}, r, why);
  rec.located->slowdown = 1.02;  // not slowed: its miss is not the profile's
  mixed.mutants.push_back(rec);
  const std::string both = mutate::format_localisation_table(mixed);
  CHECK(both.find("all: localised 1/2 (50%)") != std::string::npos);
  CHECK(both.find("slowed by 10% or more (1 of 2): localised 1/1 (100%)") != std::string::npos);
  CHECK(both.find("1.60x") != std::string::npos);
  // The second hottest line in the region: a miss of the top line, inside the five the feedback shows.
  CHECK(mutate::localise(backoff, {12}, r, why)->in_top5);
  CHECK_FALSE(mutate::localise(backoff, {12}, r, why)->in_region);
}

TEST_CASE("spills spread over many lines lead the localisation when together they outweigh the hottest line") {
  const auto& spill = op("accumulator_spill");
  evaluation_result r;
  std::string why;
  r.profile = profile_report{};
  // The consumers' barrier wait is the hottest line (13%), the spill's loads
  // wait 8%, 7%, ... each, 40% together: the feedback leads with local memory.
  r.profile->lines = {{1413, "mbarrier.try_wait.parity.shared::cta.b64 p, [%r332], %r333;", 0.13, 130,
                       "long_scoreboard", "", 0.9},
                      {2251, "{ .reg .b64 mut_p; ... ld.volatile.f32 %f1, [mut_p+0]; }", 0.08, 80, "long_scoreboard", "", 1}};
  r.profile->local_wait_share = 0.40;
  r.profile->local_wait_lines = 128;
  r.profile->local_wait_top = {{2251, "{ .reg .b64 mut_p; ... }", 0.08, 80, "long_scoreboard", "", 1},
                               {2429, "{ .reg .b64 mut_p; ... }", 0.07, 70, "long_scoreboard", "", 1}};
  auto l = mutate::localise(spill, {2251, 2429}, r, why);
  REQUIRE(l);
  CHECK(l->lead == "local memory");
  CHECK(l->top_line == 2251);
  CHECK(l->in_region);
  CHECK(l->stall_matches);
  mutate::mutate_summary s;
  mutate::mutant_record rec;
  rec.task_id = "attention_fwd_bf16_wgmma";
  rec.op = "accumulator_spill";
  rec.located = l;
  s.mutants.push_back(rec);
  CHECK(mutate::format_localisation_table(s).find("led with local memory (line 2251 waits on it most)") !=
        std::string::npos);

  // Below the hottest line's share, or under 5% of the samples, the hottest line leads.
  r.profile->local_wait_share = 0.12;
  l = mutate::localise(spill, {2251, 2429}, r, why);
  CHECK(l->lead == "line");
  CHECK(l->top_line == 1413);
  CHECK_FALSE(l->in_region);
  CHECK(l->in_top5);
  r.profile->lines.resize(1);
  r.profile->lines[0].share = 0.03;
  r.profile->local_wait_share = 0.04;
  CHECK(mutate::localise(spill, {2251}, r, why)->lead == "line");
}

}  // namespace ptxbench
