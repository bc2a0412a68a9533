// The profile's summaries: PC samples to the candidate's lines, kernel rows
// from counter ranges, the roofline line, the raw data's JSON and the cache.
#include <doctest/doctest.h>

#include <string>

#include "evaluator/api/task.hpp"
#include "evaluator/pool/profile_pass.hpp"
#include "evaluator/compile/ptx_text.hpp"
#include "evaluator/pool/profile_summary.hpp"

using namespace ptxbench;

namespace {

const task& gemm() {
  static task t = load_task(std::string(PTXBENCH_SOURCE_DIR) + "/tasks", "gemm_bf16_wgmma_tma");
  return t;
}

protocol::profile_raw sampled() {
  protocol::profile_raw s;
  s.part = "sampling";
  s.ran = true;
  s.pcs = {{"k", 0x10, {{"smsp__pcsamp_warps_issue_stalled_barrier", 30}, {"smsp__pcsamp_warps_issue_stalled_selected", 5}}},
           {"k", 0x20, {{"smsp__pcsamp_warps_issue_stalled_long_scoreboard", 50}}},
           {"k", 0x30, {{"smsp__pcsamp_warps_issue_stalled_barrier", 10}}},  // same line as 0x10
           {"k", 0x40, {{"smsp__pcsamp_warps_issue_stalled_wait", 5}}},       // no line: prologue
           {"reference_gemm", 0x0, {{"smsp__pcsamp_warps_issue_stalled_wait", 900}}}};  // not the candidate's
  return s;
}

}  // namespace

TEST_CASE("summarise_samples adds PC samples up on the candidate's lines with the dominant stall in words") {
  sass_line_map map;
  map.available = true;
  map.lines["k"] = {{0x10, 3}, {0x20, 2}, {0x30, 3}};
  profile_report p;
  summarise_samples(sampled(), map, "line one\n  ld.global.v4.u32 {%r1}, [%rd1];\n\tbar.sync 0;\n", 20, p);
  REQUIRE(p.lines.size() == 2);
  CHECK(p.samples == 100);  // the other kernel's samples are left out
  CHECK(p.lines[0].line == 2);
  CHECK(p.lines[0].text == "ld.global.v4.u32 {%r1}, [%rd1];");
  CHECK(p.lines[0].share == doctest::Approx(0.5));
  CHECK(p.lines[0].stall == "long_scoreboard");
  CHECK(p.lines[1].line == 3);
  CHECK(p.lines[1].samples == 45);
  CHECK(p.lines[1].stall == "barrier");  // "selected" is issuing, not a stall
  CHECK(p.lines[1].stall_share == doctest::Approx(40.0 / 45.0));
  CHECK(p.lines[1].stall_words == "waiting at a CTA barrier (bar.sync)");
  CHECK(p.unmapped_share == doctest::Approx(0.05));
  CHECK(p.ran);
}

TEST_CASE("scoreboard stalls go to the line of the load the warps wait on - other stalls stay") {
  sass_line_map map;
  map.available = true;
  map.lines["k"] = {{0x10, 3}, {0x20, 2}, {0x30, 3}};
  map.awaited["k"] = {{0x10, 1}};  // the instruction at 0x10 reads a register line 1's load wrote
  protocol::profile_raw s;
  s.part = "sampling";
  s.ran = true;
  s.pcs = {{"k", 0x10,
            {{"smsp__pcsamp_warps_issue_stalled_long_scoreboard", 60},
             {"smsp__pcsamp_warps_issue_stalled_short_scoreboard", 20},
             {"smsp__pcsamp_warps_issue_stalled_barrier", 10}}},
           {"k", 0x20, {{"smsp__pcsamp_warps_issue_stalled_long_scoreboard", 10}}}};
  profile_report p;
  // A generic load of unknown space: its PTX does not say local.
  const std::string generic = "  ld.f32 %f1, [%rd9];\n  bar.sync 0;\n  fma.rn.f32 %f2, %f1, %f3, %f2;\n";
  summarise_samples(s, map, generic, 20, p);
  REQUIRE(p.lines.size() == 3);
  CHECK(p.lines[0].line == 1);  // the load, not the fma that reads its register
  CHECK(p.lines[0].samples == 80);
  CHECK(p.lines[0].stall == "long_scoreboard");
  CHECK(p.lines[0].text == "ld.f32 %f1, [%rd9];");
  CHECK(p.lines[1].line == 2);  // 0x20 waits on nothing known: its own line
  CHECK(p.lines[2].line == 3);  // the barrier stall stays where it was sampled
  CHECK(p.lines[2].stall == "barrier");
  CHECK(p.lines[0].stall_words == "waiting on a global/local memory load (L1TEX)");

  // The same waits on a load ptxas made local (LDL) are named as such.
  map.awaits_local["k"] = {0x10};
  profile_report q;
  summarise_samples(s, map, generic, 20, q);
  REQUIRE(q.lines.size() == 3);
  CHECK(q.lines[0].stall_words == "waiting on a local-memory load (registers spilled by ptxas, or a .local array)");
  CHECK(q.lines[1].stall_words == "waiting on a global/local memory load (L1TEX)");  // 0x20 awaits nothing known
  CHECK(q.local_wait_share == doctest::Approx(60.0 / 100.0));  // the long-scoreboard samples at 0x10
  CHECK(q.local_wait_lines == 1);
  REQUIRE(q.local_wait_top.size() == 1);  // the line that waits, with those waits only
  CHECK(q.local_wait_top[0].line == 1);
  CHECK(q.local_wait_top[0].samples == 60);
  CHECK(q.local_wait_top[0].share == doctest::Approx(0.6));
  CHECK(q.local_wait_top[0].stall_share == doctest::Approx(60.0 / 80.0));
  CHECK(q.local_wait_top[0].text == "ld.f32 %f1, [%rd9];");
  CHECK(p.local_wait_top.empty());
  CHECK(p.local_wait_share == 0);

  // An ld.local is a local load by its PTX, whatever the SASS map says.
  map.awaits_local.clear();
  profile_report named;
  summarise_samples(s, map, "  ld.local.f32 %f1, [%rd9];\n  bar.sync 0;\n  fma.rn.f32 %f2, %f1, %f3, %f2;\n", 20, named);
  CHECK(named.local_wait_share == doctest::Approx(0.6));

  // A generic load through an address from cvta.local is a local load too
  // (ptxas emits LD, not LDL): by its PTX.
  profile_report g;
  map.awaits_local.clear();
  summarise_samples(s, map,
                    "  { .reg .b64 p; cvta.local.u64 p, spill; st.volatile.f32 [p+4], %f1; ld.volatile.f32 %f1, [p+4]; }\n"
                    "  bar.sync 0;\n  fma.rn.f32 %f2, %f1, %f3, %f2;\n",
                    20, g);
  CHECK(g.local_wait_share == doctest::Approx(0.6));
  REQUIRE(g.local_wait_top.size() == 1);
  CHECK(g.local_wait_top[0].line == 1);
  CHECK(g.lines[0].stall_words == "waiting on a local-memory load (registers spilled by ptxas, or a .local array)");

  // A long-scoreboard stall at a local round trip's own line, awaiting no
  // load's register (its volatile store held behind the access before it),
  // is a wait on local memory too; at another line it is not.
  sass_line_map own = map;
  own.awaited.clear();
  profile_report o;
  summarise_samples(s, own,
                    "  { .reg .b64 p; cvta.local.u64 p, spill; st.volatile.f32 [p+4], %f1; ld.volatile.f32 %f1, [p+4]; }\n"
                    "  bar.sync 0;\n  { .reg .b64 p; cvta.local.u64 p, spill; ld.volatile.f32 %f1, [p+4]; }\n",
                    20, o);
  CHECK(o.local_wait_share == doctest::Approx(60.0 / 100.0));  // 0x10's, at line 3; 0x20's line 2 is the bar.sync
  REQUIRE_FALSE(o.local_wait_top.empty());
  CHECK(o.local_wait_top[0].line == 3);
  profile_report not_local;
  summarise_samples(s, own, generic, 20, not_local);
  CHECK(not_local.local_wait_share == 0);

  // A wait on an mbarrier's phase, sampled as a long-scoreboard stall, says what it waits for.
  sass_line_map m2;
  m2.available = true;
  m2.lines["k"] = {{0x10, 1}};
  protocol::profile_raw w;
  w.part = "sampling";
  w.ran = true;
  w.pcs = {{"k", 0x10, {{"smsp__pcsamp_warps_issue_stalled_long_scoreboard", 50}}}};
  profile_report r;
  summarise_samples(w, m2, "  mbarrier.try_wait.parity.shared::cta.b64 p, [%r85], %r86;\n", 20, r);
  REQUIRE(r.lines.size() == 1);
  CHECK(r.lines[0].stall_words ==
        "waiting for the mbarrier's phase to complete (its TMA loads or the other warps' arrivals)");
}

TEST_CASE("a profile part that did not run leaves its reason and no figures") {
  protocol::profile_raw failed;
  failed.error = "cuptiPCSamplingEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES";
  sass_line_map map;
  profile_report p;
  summarise_samples(failed, map, "", 5, p);
  summarise_counters(failed, p);
  CHECK(p.lines.empty());
  CHECK(p.kernels.empty());
  CHECK(p.lines_error == failed.error);
  CHECK(p.kernels_error == failed.error);
  CHECK_FALSE(p.ran);
  protocol::profile_raw ok = sampled();
  profile_report q;
  summarise_samples(ok, map, "", 5, q);  // no line map
  CHECK(q.lines_error.find("no SASS-to-PTX line map") == 0);
}

TEST_CASE("summarise_counters makes a row per range with the baseline marked") {
  protocol::profile_raw c;
  c.ran = true;
  c.metrics = protocol::profile_counter_metrics();
  c.ranges = {"launch 0 (gemm)", "baseline: cuBLASLt"};
  std::vector<double> v(c.metrics.size(), 10.0);
  v[0] = 2500000;  // gpu__time_duration.sum, ns
  c.values = {v, v};
  c.registers = {168};
  c.shared_bytes = {197632};
  profile_report p;
  summarise_counters(c, p);
  REQUIRE(p.kernels.size() == 2);
  CHECK(p.kernels[0].name == "yours: launch 0 (gemm)");
  CHECK(p.kernels[0].duration_us == doctest::Approx(2500));
  CHECK(p.kernels[0].registers_per_thread == 168);
  CHECK(p.kernels[1].baseline);
  CHECK(p.kernels[1].name == "cuBLASLt");
  CHECK(p.kernels[1].registers_per_thread == -1);
}

TEST_CASE("the roofline line of GEMM 4096 cubed is compute-bound on Hopper-like peaks") {
  const task& t = gemm();
  const profile_roofline r = make_roofline(t, t.timed_size(), 0.2, 800, 4000, 0);
  CHECK(r.flops == doctest::Approx(2.0 * 4096.0 * 4096.0 * 4096.0));
  CHECK(r.bytes == doctest::Approx(3.0 * 4096 * 4096 * 2));
  CHECK(r.intensity == doctest::Approx(r.flops / r.bytes));
  CHECK(r.achieved_tflops == doctest::Approx(r.flops / 0.2e-3 / 1e12));
  CHECK(r.bound == "compute");
}

TEST_CASE("profile raw data survives the worker protocol and the cache keeps the newest entries") {
  protocol::profile_raw s = sampled();
  s.values = {{1.5, -1}};
  const protocol::profile_raw back = protocol::profile_raw_from_json(protocol::to_json(s));
  CHECK(back.pcs.size() == s.pcs.size());
  CHECK(back.pcs[1].samples.at("smsp__pcsamp_warps_issue_stalled_long_scoreboard") == 50);
  CHECK(back.values == s.values);
  profile_cache cache;
  profile_report r;
  r.size = "M=1";
  for (size_t i = 0; i < profile_cache::k_entries + 1; ++i) cache.put("key" + std::to_string(i), r);
  profile_report got;
  CHECK_FALSE(cache.find("key0", got));
  REQUIRE(cache.find("key1", got));
  CHECK(got.cached);
  CHECK(profile_fingerprint("a") != profile_fingerprint("b"));
  CHECK(profile_fingerprint("a").size() == 16);
}

TEST_CASE("a barrier stall at a wgmma.wait_group line is put in words as waiting for the wgmma groups") {
  sass_line_map map;
  map.available = true;
  map.lines["k"] = {{0x10, 1}, {0x20, 2}};
  protocol::profile_raw s;
  s.part = "sampling";
  s.ran = true;
  s.pcs = {{"k", 0x10, {{"smsp__pcsamp_warps_issue_stalled_barrier", 30}}},
           {"k", 0x20, {{"smsp__pcsamp_warps_issue_stalled_barrier", 10}}}};
  profile_report p;
  summarise_samples(s, map, "  wgmma.wait_group.sync.aligned 1;\n  bar.sync 0;\n", 20, p);
  REQUIRE(p.lines.size() == 2);
  CHECK(p.lines[0].stall_words.find("waiting for its wgmma groups") == 0);
  CHECK(p.lines[1].stall_words == "waiting at a CTA barrier (bar.sync)");
}

TEST_CASE("local_load_lines finds ld.local and generic loads through an address cvta.local made") {
  const std::string ptx =
      ".local .align 16 .b8 arr[64];\n"                               // 1
      "  mov.u64 %rd1, arr;\n"                                         // 2
      "  cvta.local.u64 %rd2, %rd1;\n"                                 // 3
      "  add.s64 %rd3, %rd2, 16;\n"                                    // 4
      "  ld.f32 %f1, [%rd3+4];\n"                                      // 5: generic, local
      "  ld.global.f32 %f2, [%rd3];\n"                                 // 6: named global
      "  ld.local.f32 %f3, [%rd1];\n"                                  // 7: ld.local
      "  ld.f32 %f4, [%rd9];\n"                                        // 8: unknown base
      "  @%p1 ld.volatile.f32 %f5, [%rd2]; // ld.f32 %f6, [%rd2];\n"   // 9: predicated, comment ignored
      "  ld.shared.f32 %f7, [%rd2];\n"                                 // 10: named shared
      "  { .reg .b64 q; cvta.local.u64 q, arr; st.f32 [q], %f1; ld.f32 %f1, [q+8]; }\n"  // 11
      "$L__BB0_7: ld.local.f32 %f8, [%rd1];\n"                          // 12: after a label
      "  {cvta.local.u64 %rd20, %rd1;} ld.f32 %f9, [%rd20];\n";         // 13: after a brace
  // The statements are read as the barrier-role scan reads them (labels and braces apart).
  CHECK(ptx_text::local_load_lines(ptx) == std::set<int>{5, 7, 9, 11, 12, 13});
  CHECK(ptx_text::local_load_lines("").empty());
  CHECK(ptx_text::local_load_lines("ld.f32 %f1, [").empty());
  CHECK(ptx_text::local_load_lines("cvta.local.u64 ;;; ld [,] ; @ ;").empty());
}

namespace {

// A warp-specialised TMA pipeline in the shape nvcc emits: the producer loop
// (lines 2-10) waits for a free slot (empty barrier, %r5), arms the full
// barrier (%r6) and issues the load; the consumer loop (12-18) spins on the
// full barrier (%r9) and frees the slot (%r10).
const char* k_pipeline =
    "$L_prod:\n"                                                                  // 1
    "  add.s32 %r5, %r1, 8;\n"                                                    // 2
    "  {\n"                                                                       // 3
    "  LAB_WAIT:\n"                                                               // 4
    "  mbarrier.try_wait.parity.shared::cta.b64 p, [%r5], %r2;\n"                 // 5
    "  @!p bra LAB_WAIT;\n"                                                       // 6
    "  }\n"                                                                       // 7
    "  mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r6], 16384;\n"              // 8
    "  cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r7], [%rd1, {%r3, %r4}], [%r6];\n"
    "  @%p1 bra $L_prod;\n"                                                       // 10
    "  ret;\n"                                                                    // 11
    "$L_cons:\n"                                                                  // 12
    "  {\n"                                                                       // 13
    "  LAB_WAIT:\n"                                                               // 14
    "  mbarrier.try_wait.parity.shared::cta.b64 p, [%r9], %r2;\n"                 // 15
    "  @!p bra LAB_WAIT;\n"                                                       // 16
    "  }\n"                                                                       // 17
    "  mbarrier.arrive.shared::cta.b64 _, [%r10];\n"                              // 18
    "  @%p2 bra $L_cons;\n";                                                      // 19

protocol::profile_raw samples_at(const std::vector<std::pair<uint64_t, uint64_t>>& pc_samples) {
  protocol::profile_raw s;
  s.part = "sampling";
  s.ran = true;
  for (const auto& [pc, n] : pc_samples) s.pcs.push_back({"k", pc, {{"smsp__pcsamp_warps_issue_stalled_long_scoreboard", n}}});
  return s;
}

}  // namespace

TEST_CASE("barrier_roles_of tells the producer's waits from the consumers' by the loops around TMA loads") {
  const ptx_text::barrier_roles r = ptx_text::barrier_roles_of(k_pipeline);
  REQUIRE(r.producer_loops.size() == 1);
  CHECK(r.producer_loops[0] == std::pair<int, int>{1, 10});
  REQUIRE(r.waits.size() == 2);
  CHECK(r.waits[0].first == 4);  // the spin loop, label to branch
  CHECK(r.waits[0].last == 6);
  CHECK(r.waits[0].barrier == "%r5");
  CHECK(r.waits[0].in_producer);
  CHECK_FALSE(r.waits[0].own_loads);  // a free slot: waits for the consumers
  CHECK(r.waits[1].first == 14);
  CHECK_FALSE(r.waits[1].in_producer);
  // The producer waiting for the load it just issued (one stage in flight).
  std::string serial = k_pipeline;
  serial.insert(serial.find("  @%p1 bra $L_prod;"),
                "  w1: mbarrier.try_wait.shared::cta.b64 q, [%r6], tok; @!q bra w1;\n");
  const ptx_text::barrier_roles s = ptx_text::barrier_roles_of(serial);
  REQUIRE(s.waits.size() == 3);
  CHECK(s.waits[1].first == 10);
  CHECK(s.waits[1].last == 10);
  CHECK(s.waits[1].own_loads);
  CHECK(s.producer_loops[0] == std::pair<int, int>{1, 11});
  // Hostile text: unmatched labels, branches to nowhere, no loops.
  CHECK(ptx_text::barrier_roles_of("bra nowhere;\n:\n;;{}\nL: L: bra L;\nmbarrier.try_wait p, [;\n").producer_loops.empty());
}

TEST_CASE("consumers' waits on a TMA-filled barrier are charged to the producer in the share it is not waiting for them") {
  sass_line_map map;
  map.available = true;
  // SASS offsets: 0x10 the producer's slot wait, 0x20 its TMA load, 0x30 the consumers' spin branch.
  map.lines["k"] = {{0x10, 6}, {0x20, 9}, {0x30, 16}, {0x40, 18}};
  // An honest pipeline whose consumers starve on memory: the producer waits
  // for slots 90% of its samples, so 10% of the consumers' wait moves to the load.
  profile_report honest;
  summarise_samples(samples_at({{0x10, 90}, {0x20, 10}, {0x30, 400}, {0x40, 20}}), map, k_pipeline, 20, honest);
  REQUIRE(honest.lines.size() == 4);
  CHECK(honest.samples == 520);  // moved, not added
  CHECK(honest.lines[0].line == 16);
  CHECK(honest.lines[0].samples == 360);
  CHECK(honest.lines[1].line == 6);  // the slot wait keeps its own
  CHECK(honest.lines[1].samples == 90);
  CHECK(honest.lines[2].line == 9);
  CHECK(honest.lines[2].samples == 50);
  CHECK(honest.lines[2].blamed == 40);
  CHECK(honest.lines[2].blamed_from == std::vector<int>{16});
  CHECK(blame_words(honest.lines[2]).find("80% of them are the waits at line 16 for the mbarriers") != std::string::npos);
  CHECK(blame_words(honest.lines[0]).empty());

  // One stage in flight: the producer spends its time waiting for its own
  // load (line 10), so most of the consumers' wait is that line's.
  std::string serial = k_pipeline;
  serial.insert(serial.find("  @%p1 bra $L_prod;"),
                "  w1: mbarrier.try_wait.shared::cta.b64 q, [%r6], tok; @!q bra w1;\n");
  map.lines["k"] = {{0x10, 6}, {0x20, 9}, {0x28, 10}, {0x30, 17}, {0x40, 19}};
  profile_report one_stage;
  summarise_samples(samples_at({{0x10, 5}, {0x20, 5}, {0x28, 90}, {0x30, 400}, {0x40, 20}}), map, serial, 20, one_stage);
  REQUIRE_FALSE(one_stage.lines.empty());
  CHECK(one_stage.lines[0].line == 10);
  CHECK(one_stage.lines[0].samples == 90 + 400 * 95 / 100 * 90 / 95);
  CHECK(one_stage.lines[0].stall == "long_scoreboard");
  // Worded as the mbarrier wait it is, the label before it notwithstanding.
  CHECK(one_stage.lines[0].stall_words.find("mbarrier's phase") != std::string::npos);
  CHECK(blame_words(one_stage.lines[0]).find("of them are the waits at line 17") != std::string::npos);
  CHECK(one_stage.samples == 520);

  // No TMA producer: nothing moves.
  profile_report plain;
  summarise_samples(samples_at({{0x10, 90}, {0x30, 400}}), map, "  bar.sync 0;\n", 20, plain);
  for (const auto& l : plain.lines) CHECK(l.blamed == 0);
}
