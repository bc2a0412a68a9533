// The dynamic half of the instructions stage, without a GPU: executed counts
// per PC (as the counting passes return them) judged against the rules of
// evaluator/pool/instruction_proof.hpp, at every counted size.
#include <doctest/doctest.h>

#include "evaluator/pool/instruction_proof.hpp"
#include "proof_support.hpp"

using namespace ptxbench;
using namespace ptxbench::test;

TEST_CASE("an honest wgmma + TMA + mbarrier pipeline passes at both counted sizes") {
  auto r = static_report();
  apply_dynamic_counts(r, listing(), tma_task(), {honest(384, 256, 1024), honest(4096, 4096, 4096)});
  CHECK(r.dynamic_ran);
  for (const auto& c : r.checks) {
    CHECK_MESSAGE(c.passed, c.ptx << ": " << c.note);
    CHECK(c.sizes.size() == 2);
  }
  CHECK(check(r, "wgmma.mma_async").flop_share == doctest::Approx(1.0).epsilon(0.01));
  CHECK(instruction_outcome(r, "").status == stage_status::passed);
}

TEST_CASE("a wgmma that is in the SASS but never executed fails the instructions stage") {
  auto r = static_report();
  auto sc = honest(384, 256, 1024);
  sc.counts[0][0].executed = 0;
  apply_dynamic_counts(r, listing(), tma_task(), {sc});
  CHECK_FALSE(check(r, "wgmma.mma_async").passed);
  CHECK(check(r, "wgmma.mma_async").note.find("never executed") != std::string::npos);
  CHECK(r.executed_by_opcode.count("(unmapped pc)") == 0);
  CHECK(instruction_outcome(r, "").status == stage_status::failed);
}

// Only the candidate's module is loaded while a pass counts: executed code the
// listing does not hold, or an opcode the classification does not know, is
// work the evaluator cannot account for (default deny), never ignored.
TEST_CASE("executed code outside the listing or the opcode classification fails as unprovable and is named") {
  {
    auto r = static_report();
    auto sc = honest(384, 256, 1024);
    sc.counts[0].push_back({"helper_not_in_listing", 0x0, 99});
    apply_dynamic_counts(r, listing(), tma_task(), {sc});
    CHECK(instruction_outcome(r, "").status == stage_status::failed);
    CHECK(instruction_outcome(r, "").reason.find("unprovable") != std::string::npos);
    CHECK(instruction_outcome(r, "").reason.find("helper_not_in_listing") != std::string::npos);
  }
  {
    auto r = static_report();
    sass_listing l = listing();
    l.instructions.push_back({"k", 0x70, "XMMA", "XMMA.16816.F32 R4, R8, R12, R4 ;"});
    auto sc = honest(384, 256, 1024);
    sc.counts[0].push_back({"k", 0x70, 5});
    apply_dynamic_counts(r, l, tma_task(), {sc});
    stage_outcome o = instruction_outcome(r, "");
    CHECK(o.status == stage_status::failed);
    CHECK(o.reason.find("XMMA") != std::string::npos);
    CHECK(o.reason.find("classification") != std::string::npos);
  }
  {  // Listed but never executed: nothing to account for.
    auto r = static_report();
    sass_listing l = listing();
    l.instructions.push_back({"k", 0x70, "XMMA", "XMMA.16816.F32 R4, R8, R12, R4 ;"});
    auto sc = honest(384, 256, 1024);
    sc.counts[0].push_back({"k", 0x70, 0});
    apply_dynamic_counts(r, l, tma_task(), {sc});
    CHECK(instruction_outcome(r, "").status == stage_status::passed);
  }
}

TEST_CASE("math outside the old list counts as other math: DMMA and IMAD-emulated products beside dummy wgmma") {
  for (const char* text : {"DMMA.8x8x4 R4, R8, R10, R4 ;", "IMAD R4, R8, R10, R4 ;", "HFMA2.MMA R4, R8, R10, R4 ;"}) {
    CAPTURE(text);
    auto r = static_report();
    sass_listing l = listing();
    sass_instruction extra{"k", 0x70, std::string(text).substr(0, std::string(text).find_first_of(". ")), text};
    l.instructions.push_back(extra);
    auto sc = honest(384, 256, 1024);
    // As many executions as carry half the task's FLOPs.
    sc.counts[0].push_back({"k", 0x70, uint64_t(0.5 * sc.task_flops / math_flops_per_exec(extra))});
    apply_dynamic_counts(r, l, tma_task(), {sc});
    stage_outcome o = instruction_outcome(r, "");
    CHECK(o.status == stage_status::failed);
    CHECK(o.reason.find("the task did not target") != std::string::npos);
  }
}

TEST_CASE("a math target passes only when it carries most of the task's FLOPs") {
  for (double share : {0.5, 0.89, 0.95}) {
    auto r = static_report();
    auto sc = honest(384, 256, 1024);
    sc.counts[0][0].executed = uint64_t(share * sc.task_flops / (2.0 * 64 * 256 * 16 / 4));
    apply_dynamic_counts(r, listing(), tma_task(), {sc});
    CHECK(check(r, "wgmma.mma_async").passed == (share >= k_min_flop_share));
  }
}

TEST_CASE("dummy tensor-core work beside FFMA that does the math fails: the math is done by FFMA") {
  auto r = static_report();
  auto sc = honest(384, 256, 1024);
  sc.counts[0][3].executed = uint64_t(sc.task_flops / 64);  // FFMA does every FLOP as well
  apply_dynamic_counts(r, listing(), tma_task(), {sc});
  const auto& w = check(r, "wgmma.mma_async");
  CHECK_FALSE(w.passed);
  CHECK(w.note.find("the math is done by") != std::string::npos);
  CHECK(w.note.find("FFMA") != std::string::npos);
  CHECK(r.other_math_share.at(sc.size) > 0.9);  // 1.01 less the epilogue allowance
  auto o = instruction_outcome(r, "");
  CHECK(o.status == stage_status::failed);
  CHECK(o.reason.find("FFMA") != std::string::npos);
}

TEST_CASE("the tensor-core path taken only at the smallest size fails at the timed size") {
  auto r = static_report();
  auto timed = honest(4096, 4096, 4096);
  timed.counts[0][0].executed = 0;
  timed.counts[0][3].executed = uint64_t(timed.task_flops / 64);
  apply_dynamic_counts(r, listing(), tma_task(), {honest(384, 256, 1024), timed});
  const auto& w = check(r, "wgmma.mma_async");
  CHECK_FALSE(w.passed);
  CHECK(w.sizes[0].passed);
  CHECK_FALSE(w.sizes[1].passed);
  CHECK(w.note.find("K=4096") != std::string::npos);
}

TEST_CASE("tensor-core math on another type (fp8 in a bf16 task) is not the task's math") {
  auto r = static_report();
  auto sc = honest(384, 256, 1024);
  sc.counts[0][0] = {"k", 0x30, uint64_t(sc.task_flops / (2.0 * 64 * 256 * 32 / 4))};  // QGMMA e4m3
  apply_dynamic_counts(r, listing(), tma_task(), {sc});
  CHECK_FALSE(check(r, "wgmma.mma_async").passed);
  CHECK(math_operand_type(listing().instructions[3]) == "E4M3");
  CHECK(math_operand_type(listing().instructions[2]) == "BF16");
}

TEST_CASE("a TMA store does not satisfy a TMA-load target") {
  auto r = static_report();
  auto sc = honest(384, 256, 1024);
  sc.counts[0][1] = {"k", 0x60, 6};  // UTMASTG only
  apply_dynamic_counts(r, listing(), tma_task(), {sc});
  const auto& c = check(r, "cp.async.bulk.tensor");
  CHECK_FALSE(c.passed);
  CHECK(c.note.find("stores") != std::string::npos);
}

TEST_CASE("a token TMA load fails: TMA loads must move a share of the input bytes") {
  auto r = static_report();
  auto sc = honest(384, 256, 1024);
  sc.counts[0][1].executed = 2;  // one box of each operand per kernel
  // The inputs arrive by LDG instead: 4 bytes per lane of "LDG.E R2, ...".
  sc.counts[0].push_back({"k", 0x00, uint64_t(sc.input_bytes / 128)});
  apply_dynamic_counts(r, listing(), tma_task(), {sc});
  const auto& c = check(r, "cp.async.bulk.tensor");
  CHECK_FALSE(c.passed);
  CHECK(c.sizes[0].bytes_share < k_min_moved_share);
  CHECK(c.note.find("of the") != std::string::npos);
}

// The false failures of the H100 run of 2026-12-06 (after the padding fix):
// decode kernels whose query (or A) box is a few rows beside key/value (B)
// boxes of 64 rows, so executions x the smallest box is far below what moved.
TEST_CASE("TMA bytes are floored by the inputs other reads could not carry - decode boxes pass") {
  auto r = static_report();
  auto sc = honest(384, 256, 1024);
  // As many TMA loads as carry every input in the larger boxes, judged by a tiny box.
  sc.launches[0].min_input_box_bytes = 64 * 2;  // a one-row query box
  sc.counts[0].push_back({"k", 0x00, 40});       // a few scalar loads (scales, lengths)
  apply_dynamic_counts(r, listing(), tma_task(), {sc});
  const auto& c = check(r, "cp.async.bulk.tensor");
  CHECK_MESSAGE(c.passed, c.note);
  CHECK(c.sizes[0].bytes_share > 0.9);
  // A bulk copy (UBLKCP) carries an unknown number of bytes: no floor from reads.
  auto r2 = static_report();
  sass_listing l = listing();
  l.instructions.push_back({"k", 0x70, "UBLKCP", "UBLKCP.S.G [UR4], [UR6], UR8 ;"});
  auto sc2 = sc;
  sc2.counts[0].push_back({"k", 0x70, 4});
  apply_dynamic_counts(r2, l, tma_task(), {sc2});
  CHECK_FALSE(check(r2, "cp.async.bulk.tensor").passed);
}

TEST_CASE("a global read carries at most 32 lanes times the width its opcode names") {
  auto bytes = [](const char* text) {
    const std::string t = text;
    return global_read_bytes_per_exec({"k", 0, t.substr(0, t.find_first_of(". ")), t});
  };
  CHECK(bytes("LDG.E R2, desc[UR4][R2.64] ;") == 128);
  CHECK(bytes("LDG.E.128 R4, desc[UR4][R2.64] ;") == 512);
  CHECK(bytes("@P0 LDG.E.64.CONSTANT R4, desc[UR4][R2.64] ;") == 256);
  CHECK(bytes("LDG.E.U8 R4, desc[UR4][R2.64] ;") == 32);
  CHECK(bytes("LDGSTS.E.BYPASS.LTC128B.128 [R3], desc[UR4][R4.64] ;") == 512);
  CHECK(bytes("TEX.LL R0, R2, R0, 0x0, 2D ;") == 512);
  CHECK(bytes("LDS.128 R4, [R2] ;") == 0);
  CHECK(bytes("STG.E [R2.64], R4 ;") == 0);
}

// Epilogues, split-K reductions and split-KV combines do math per output
// element whatever K or the sequence length: at a small hidden size (K = 64)
// it outweighs the task's FLOPs; at 1024 it is a sliver and FFMA doing the
// task's work still fails.
TEST_CASE("epilogue math per output element is allowed - recomputing the result with it is not") {
  auto tiny = honest(384, 256, 64);
  tiny.counts[0][3].executed = uint64_t(40 * tiny.output_elements / 64);  // 40 FLOPs of FFMA per output
  auto r = static_report();
  apply_dynamic_counts(r, listing(), tma_task(), {tiny});
  CHECK_MESSAGE(instruction_outcome(r, "").status == stage_status::passed, instruction_outcome(r, "").reason);
  auto big = honest(384, 256, 1024);
  big.counts[0][3].executed = uint64_t(big.task_flops / 64);  // FFMA does all the task's FLOPs
  auto r2 = static_report();
  apply_dynamic_counts(r2, listing(), tma_task(), {tiny, big});
  CHECK(instruction_outcome(r2, "").status == stage_status::failed);
  CHECK(instruction_outcome(r2, "").reason.find("epilogue") != std::string::npos);
}

TEST_CASE("an mbarrier wait executed once per kernel fails: one per pipeline step") {
  auto r = static_report();
  auto sc = honest(384, 256, 1024);
  sc.counts[0][2].executed = 1;
  apply_dynamic_counts(r, listing(), tma_task(), {sc});
  const auto& c = check(r, "mbarrier.try_wait");
  CHECK_FALSE(c.passed);
  CHECK(c.note.find("pipeline steps") != std::string::npos);
}

TEST_CASE("without the dynamic count the stage is unverified - never passed") {
  auto r = static_report();
  auto o = instruction_outcome(r, "no GPU on this machine");
  CHECK(o.status == stage_status::unverified);
  CHECK(o.reason.find("no GPU on this machine") != std::string::npos);
  r.static_passed = false;
  r.checks[0].passed = false;
  r.checks[0].ptx_count = 0;
  CHECK(instruction_outcome(r, "no GPU").status == stage_status::failed);
}

TEST_CASE("scalar math carries its FLOPs per warp-level execution") {
  CHECK(math_flops_per_exec({"k", 0, "FFMA", "FFMA R1, R2, R3, R1 ;"}) == 64);
  CHECK(math_flops_per_exec({"k", 0, "HFMA2", "HFMA2.BF16_V2 R1, R2, R3, R1 ;"}) == 128);
  CHECK(math_operand_type({"k", 0, "HFMA2", "HFMA2.BF16_V2 R1, R2, R3, R1 ;"}) == "BF16");
  CHECK(math_flops_per_exec({"k", 0, "LDG", "LDG.E R2, [R2] ;"}) == 0);
}

namespace {

// A kernel's counts at a size its tiles over-cover: the target executes `pad`
// times the task's FLOPs (a decode query in wgmma's 64 rows, a 17-key block in
// a 128-wide tile), and `other` lists the other math it runs per task FLOP on
// that padding alike (softmax, fp32 promotion, index arithmetic).
struct other_op {
  const char* text;
  double per_target_flop;  // this op's FLOPs / the FLOPs the target executes
};

instruction_report judge_padded(double pad, const std::vector<other_op>& other, int64_t k = 64) {
  auto r = static_report();
  sass_listing l = listing();
  auto sc = honest(64, 256, k);
  sc.counts[0][0].executed = uint64_t(pad * sc.task_flops / (2.0 * 64 * 256 * 16 / 4));
  uint64_t pc = 0x100;
  for (const other_op& o : other) {
    const std::string text = o.text;
    sass_instruction inst{"k", pc, text.substr(0, text.find_first_of(". ")), text};
    l.instructions.push_back(inst);
    const double flops = o.per_target_flop * pad * sc.task_flops;
    sc.counts[0].push_back({"k", pc, uint64_t(flops / math_flops_per_exec(inst))});
    pc += 0x10;
  }
  apply_dynamic_counts(r, l, tma_task(), {sc});
  return r;
}

}  // namespace

// The false failures of the H100 run of 2026-12-06 (docs/gpu-runs.md): honest
// solutions whose small hidden sizes run the target on padded tiles, and the
// softmax, fp32 promotion or index arithmetic beside it on the padding too.
TEST_CASE("other math on padded tiles is judged against the target's executed FLOPs - honest solutions pass") {
  struct family {
    const char* name;
    double pad;
    std::vector<other_op> other;
  };
  // Other math per FLOP the target executes, as the solutions' designs do it:
  // softmax at 4·D = 512 target FLOPs per score (head dim 128), the integer
  // division of tile indices, fp32 promotion every 64 of K.
  const std::vector<family> families = {
      // attention decode: one query row in 64, softmax on every row of the tile
      {"attention decode", 64, {{"FADD R4, R8, R10 ;", 0.004}, {"FFMA R4, R8, R10, R4 ;", 0.006},
                                {"FMNMX R4, R8, R10, !PT ;", 0.003}, {"MUFU.EX2 R4, R8 ;", 0.003}}},
      // attention forward at an odd length: a 17-key block in a 128-wide tile
      {"attention forward odd length", 7.5, {{"FADD R4, R8, R10 ;", 0.004}, {"FFMA R4, R8, R10, R4 ;", 0.008},
                                             {"FMNMX R4, R8, R10, !PT ;", 0.004}}},
      // GEMM decode M=16 at a small hidden size: tile indices by integer division
      {"GEMM decode", 4, {{"IMAD R17, R6, R15, RZ ;", 0.03}, {"MUFU.RCP R3, R3 ;", 0.002},
                          {"UIMAD.WIDE UR4, UR5, UR4, URZ ;", 0.0001}}},
      // fp8 GEMM: fp32 promotion of the wgmma accumulator in a padded tile
      {"fp8 GEMM promotion", 16, {{"FADD R4, R8, R10 ;", 0.008}, {"FMUL R4, R8, R10 ;", 0.0005}}},
  };
  for (const family& f : families) {
    CAPTURE(f.name);
    auto r = judge_padded(f.pad, f.other);
    const stage_outcome o = instruction_outcome(r, "");
    CHECK_MESSAGE(o.status == stage_status::passed, o.reason);
    for (const auto& [size, share] : r.other_math_share) CHECK(share < k_max_other_math_share);
  }
}

TEST_CASE("padding does not hide other math that does the task's work") {
  // DMMA or FFMA computes the whole result while the target runs on tiles padded
  // up to 8x: the other math is still more than a tenth of what the target did.
  for (const char* text : {"DMMA.8x8x4 R4, R8, R10, R4 ;", "FFMA R4, R8, R10, R4 ;"}) {
    CAPTURE(text);
    for (double pad : {1.0, 8.0}) {
      CAPTURE(pad);
      // K = 1024: the epilogue allowance (64 FLOPs per output) is 3% of the task.
      auto r = judge_padded(pad, {{text, 1.0 / pad}}, 1024);  // the whole task's FLOPs
      const stage_outcome o = instruction_outcome(r, "");
      CHECK(o.status == stage_status::failed);
      CHECK(o.reason.find("the task did not target") != std::string::npos);
      if (pad > 1) CHECK(o.reason.find("padded tiles") != std::string::npos);
    }
  }
}
