// static_instruction_check, the PTX -> SASS table and FLOPs per SASS
// instruction: a target passes only when written in the PTX (not in a comment)
// and kept by ptxas in the SASS.
#include <doctest/doctest.h>

#include "evaluator/compile/compile.hpp"
#include "evaluator/compile/sass_parse.hpp"
#include "fixtures.hpp"
#include "skip.hpp"

using namespace ptxbench;
using ptxbench::test::read_ptx_fixture;

namespace {

task task_for(const std::string& arch, std::vector<std::string> targets) {
  task t;
  t.id = "static_check";
  t.arch = arch;
  t.target_instructions = std::move(targets);
  return t;
}

const instruction_check& check_of(const instruction_report& r, const std::string& ptx) {
  for (const instruction_check& c : r.checks) {
    if (c.ptx == ptx) return c;
  }
  throw std::runtime_error("no check for " + ptx);
}

int ptx_count(const std::string& ptx, const std::string& target) {
  const sass_listing none;
  return check_of(static_instruction_check(task_for("sm_90a", {target}), ptx, none), target).ptx_count;
}

sass_instruction sass(const std::string& text) {
  const std::string body = text[0] == '@' ? text.substr(text.find(' ') + 1) : text;
  const std::string predicate = text[0] == '@' ? text.substr(0, text.find(' ')) : "";
  const size_t space = body.find(' ');
  return make_sass_instruction("k", 0, predicate, body.substr(0, space),
                               space == std::string::npos ? "" : body.substr(space + 1));
}

}  // namespace

TEST_CASE("instructions in comments - strings - labels and names do not count") {
  const std::string ptx =
      "// wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 in a line comment\n"
      "/* ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1,%r2,%r3,%r4}, [%r5];\n"
      "   mma.sync.aligned.m16n8k16 */\n"
      ".pragma \"mma.sync.aligned\";\n"
      "ldmatrix:\n"
      "  ld.param.u64 %rd1, [ldmatrix];\n"
      "  mov.u32 %r1, ldmatrix_count;\n";
  CHECK(ptx_count(ptx, "wgmma.mma_async") == 0);
  CHECK(ptx_count(ptx, "ldmatrix") == 0);
  CHECK(ptx_count(ptx, "mma.sync") == 0);
}

TEST_CASE("instructions count after predicates - labels and braces - at a '.' boundary") {
  const std::string ptx =
      "{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%r1], %r2; }\n"
      "@%p1 mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, "
      "{%f1,%f2,%f3,%f4};\n"
      "$L__loop: @!%p2 ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%r1,%r2,%r3,%r4}, [%r5];\n"
      "wgmma.mma_async_fake %r1;\n"
      "wgmma.fence.sync.aligned;\n";
  CHECK(ptx_count(ptx, "mbarrier.try_wait") == 1);
  CHECK(ptx_count(ptx, "mma.sync") == 1);
  CHECK(ptx_count(ptx, "ldmatrix") == 1);
  CHECK(ptx_count(ptx, "wgmma.mma_async") == 0);
}

TEST_CASE("cp.async counts copies only - not bulk copies - waits or commits") {
  const std::string ptx =
      "cp.async.cg.shared.global [%r1], [%rd1], 16;\n"
      "cp.async.ca.shared.global [%r2], [%rd2], 4;\n"
      "cp.async.commit_group;\n"
      "cp.async.wait_group 0;\n"
      "cp.async.wait_all;\n"
      "cp.async.mbarrier.arrive.b64 [%r3];\n"
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd3, {%r4, %r5}], [%r3];\n"
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], 256, [%r3];\n"
      "cp.async.bulk.commit_group;\n";
  CHECK(ptx_count(ptx, "cp.async") == 2);
  CHECK(ptx_count(ptx, "cp.async.bulk.tensor") == 1);
  CHECK(ptx_count(ptx, "cp.async.bulk") == 1);
}

TEST_CASE("the wgmma + TMA fixture passes its targets statically") {
  const std::string ptx = read_ptx_fixture("tma_mbarrier_sm90a.ptx");
  const compiled_module m = compile_ptx(ptx, "sm_90a");
  REQUIRE(m.ok);
  const sass_listing listing = disassemble(m.cubin);
  const task t = task_for("sm_90a", {"cp.async.bulk.tensor", "mbarrier.try_wait", "setmaxnreg", "wgmma.mma_async"});
  const instruction_report r = static_instruction_check(t, ptx, listing);
  REQUIRE(r.checks.size() == 4);
  CHECK(check_of(r, "cp.async.bulk.tensor").ptx_count == 2);
  CHECK(check_of(r, "wgmma.mma_async").ptx_count == 0);
  CHECK_FALSE(check_of(r, "wgmma.mma_async").passed);
  CHECK(check_of(r, "wgmma.mma_async").note == "wgmma.mma_async does not appear in the PTX");
  CHECK_FALSE(r.static_passed);
  for (const instruction_check& c : r.checks) CHECK(c.executed == -1);
  if (ptxbench::test::tool_missing("nvdisasm", nvdisasm_path(), "the SASS half of the static check")) {
    CHECK(r.sass_source.empty());
    CHECK(check_of(r, "cp.async.bulk.tensor").sass_count == -1);
    return;
  }
  CHECK(r.sass_source == "nvdisasm -c -ndf");
  CHECK(check_of(r, "cp.async.bulk.tensor").sass_count == 2);
  CHECK(check_of(r, "cp.async.bulk.tensor").passed);
  CHECK(check_of(r, "mbarrier.try_wait").sass_count >= 1);
  if (ptxbench::test::default_compile_keeps_setmaxnreg()) CHECK(check_of(r, "setmaxnreg").sass_count == 2);
}

TEST_CASE("a target every fixture lowers passes: mma.sync - ldmatrix - cp.async - tcgen05 on sm_100a") {
  struct target_case {
    const char* fixture;
    const char* arch;
    std::vector<std::string> targets;
  };
  for (const target_case& c :
       {target_case{"mma_sync_sm90a.ptx", "sm_90a", {"mma.sync", "ldmatrix", "cp.async"}},
        target_case{"wgmma_sm90a.ptx", "sm_90a", {"wgmma.mma_async"}},
        target_case{"tcgen05_sm100a.ptx", "sm_100a", {"tcgen05.mma", "tcgen05.alloc", "cp.async.bulk.tensor"}},
        // A CTA pair's forms: UTCATOMSWS.2CTA.FIND_AND_SET, UTCHMMA.2CTA, UTCBAR.2CTA, UTCCP.T.S.2CTA.
        target_case{"tcgen05_pair_sm100a.ptx", "sm_100a",
                    {"tcgen05.mma", "tcgen05.alloc", "tcgen05.dealloc", "tcgen05.commit", "tcgen05.cp"}},
        target_case{"tcgen05_2cta_sm100a.ptx", "sm_100a",
                    {"tcgen05.mma.cta_group::2", "tcgen05.mma", "tcgen05.alloc", "cp.async.bulk.tensor"}}}) {
    CAPTURE(c.fixture);
    const std::string ptx = read_ptx_fixture(c.fixture);
    const compiled_module m = compile_ptx(ptx, c.arch);
    REQUIRE(m.ok);
    const sass_listing listing = disassemble(m.cubin);
    if (ptxbench::test::tool_missing("nvdisasm", nvdisasm_path(), std::string("the SASS of ") + c.fixture)) continue;
    REQUIRE_MESSAGE(listing.available, listing.error);
    const instruction_report r = static_instruction_check(task_for(c.arch, c.targets), ptx, listing);
    CHECK(r.static_passed);
    for (const instruction_check& check : r.checks) {
      CAPTURE(check.ptx);
      CHECK(check.ptx_count > 0);
      CHECK(check.sass_count > 0);
      CHECK(check.note.empty());
    }
  }
}

TEST_CASE("the 2-CTA target is not met by the 1-CTA form") {
  const std::string ptx = read_ptx_fixture("tcgen05_sm100a.ptx");
  const compiled_module m = compile_ptx(ptx, "sm_100a");
  REQUIRE(m.ok);
  const sass_listing listing = disassemble(m.cubin);
  const instruction_report r = static_instruction_check(task_for("sm_100a", {"tcgen05.mma.cta_group::2"}), ptx, listing);
  CHECK(check_of(r, "tcgen05.mma.cta_group::2").ptx_count == 0);
  CHECK_FALSE(r.static_passed);
}

TEST_CASE("wgmma's SASS count leaves out the no-op HGMMA that ptxas pads with") {
  const std::string ptx = read_ptx_fixture("wgmma_sm90a.ptx");
  const compiled_module m = compile_ptx(ptx, "sm_90a");
  REQUIRE(m.ok);
  const sass_listing listing = disassemble(m.cubin);
  if (ptxbench::test::tool_missing("nvdisasm", nvdisasm_path(), "wgmma's SASS count")) return;
  REQUIRE_MESSAGE(listing.available, listing.error);
  const instruction_report r = static_instruction_check(task_for("sm_90a", {"wgmma.mma_async"}), ptx, listing);
  CHECK(check_of(r, "wgmma.mma_async").ptx_count == 3);
  CHECK(check_of(r, "wgmma.mma_async").sass_count == 3);  // two HGMMA and one QGMMA
  CHECK(check_of(r, "wgmma.mma_async").is_math);
}

TEST_CASE("a target without a table entry cannot pass - a task without targets passes") {
  const sass_listing none;
  const instruction_report r =
      static_instruction_check(task_for("sm_90a", {"red.global"}), "red.global.add.f32 [%rd1], %f1;\n", none);
  CHECK(check_of(r, "red.global").ptx_count == 1);
  CHECK_FALSE(r.static_passed);
  CHECK(check_of(r, "red.global").note.find("no SASS mapping") != std::string::npos);
  CHECK(static_instruction_check(task_for("sm_90a", {}), "", none).static_passed);
}

TEST_CASE("the table maps every target of every shipped task on its architecture") {
  for (const auto& t : ptxbench::load_task_dir(std::string(PTXBENCH_SOURCE_DIR) + "/tasks")) {
    const std::vector<sass_mapping> table = sass_table(t.arch);
    for (const std::string& target : t.target_instructions) {
      bool found = false;
      for (const sass_mapping& m : table) found = found || (m.ptx == target && !m.sass_opcodes.empty());
      CHECK_MESSAGE(found, t.id << ": " << t.arch << " " << target);
    }
  }
  CHECK(sass_table("sm_90").size() == sass_table("sm_90a").size());
  CHECK(sass_table("sm_75").empty());
}

TEST_CASE("FLOPs per warp-level execution of MMA instructions") {
  // 64x128x16 per warpgroup, counted once for each of its four warps.
  CHECK(sass_instruction_flops(sass("HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], R24, gsb0")) == 2.0 * 64 * 128 * 16 / 4);
  CHECK(sass_instruction_flops(sass("HGMMA.64x256x16.F32.BF16 R24, gdesc[UR4], R24")) == 2.0 * 64 * 256 * 16 / 4);
  CHECK(sass_instruction_flops(sass("QGMMA.64x128x32.F32.E4M3.E4M3 R24, gdesc[UR4], R24, gsb0")) ==
        2.0 * 64 * 128 * 32 / 4);
  CHECK(sass_instruction_flops(sass("HMMA.16816.F32.BF16 R4, R8, R12, R4")) == 2.0 * 16 * 8 * 16);
  CHECK(sass_instruction_flops(sass("@P0 HMMA.1688.F32.TF32 R4, R8, R12, R4")) == 2.0 * 16 * 8 * 8);
  CHECK(sass_instruction_flops(sass("IMMA.16832.S8.S8 R4, R8, R12, R4")) == 2.0 * 16 * 8 * 32);
  // The padding HGMMA writes RZ and does no work; non-MMA and unknown shapes are 0.
  CHECK(sass_instruction_flops(sass("HGMMA.64x8x16.F16 RZ, gdesc[URZ], RZ, !UPT, gsb0")) == 0.0);
  CHECK(sass_instruction_flops(sass("FFMA R1, R2, R3, R4")) == 0.0);
  CHECK(sass_instruction_flops(sass("UTCHMMA gdesc[UR6], gdesc[UR8], tmem[UR11], tmem[UR4], idesc[UR5], !UPT")) == 0.0);
}
