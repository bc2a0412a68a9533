// awaited_loads: which load a scoreboard wait is for, on listings written here
// and on a real solution's SASS (ldmatrix feeding mma.sync).
#include <doctest/doctest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "evaluator/common/files.hpp"
#include "evaluator/compile/compile.hpp"
#include "evaluator/compile/line_info.hpp"
#include "evaluator/compile/sass_dataflow.hpp"
#include "evaluator/compile/sass_parse.hpp"
#include "tests/text_lines.hpp"

using namespace ptxbench;

namespace {

sass_instruction at(uint64_t offset, const std::string& opcode, const std::string& operands,
                    const std::string& predicate = "") {
  return make_sass_instruction("k", offset, predicate, opcode, operands);
}

// The mma.sync GEMM solution compiled with line info, its SASS, and its PTX
// lines (1-based: src[0] is empty).
struct compiled_solution {
  line_mapped_module lm;
  sass_listing listing;
  std::vector<std::string> src;
};

std::optional<compiled_solution> mma_sync_solution() {
  if (nvdisasm_path().empty()) {
    MESSAGE("skipped: nvdisasm not found");
    return std::nullopt;
  }
  compiled_solution c;
  const std::string ptx = read_text_file(std::string(PTXBENCH_SOURCE_DIR) + "/tasks/solutions/gemm_bf16_mma_sync/kernel.ptx",
                                         "solution");
  c.lm = compile_with_line_info(ptx, "sm_90a");
  REQUIRE_MESSAGE(c.lm.problem.empty(), c.lm.problem);
  c.listing = disassemble(c.lm.compiled.cubin);
  REQUIRE(c.listing.available);
  c.src = test::lines_of(ptx);
  c.src.insert(c.src.begin(), "");
  return c;
}

}  // namespace

TEST_CASE("a register read after a load waits on that load - until something else writes it") {
  const std::vector<sass_instruction> l = {
      at(0x00, "LDL.64", "R4, [R1+0x8]"),              // R4, R5
      at(0x10, "LDS.128", "R8, [R2+0x100]"),           // R8..R11
      at(0x20, "FFMA", "R6, R5, R3, R6"),              // waits on the LDL (R5)
      at(0x30, "HMMA.16816.F32.BF16", "R12, R8, R10, R12"),  // waits on the LDS
      at(0x40, "MOV", "R4, 0x1"),                      // R4 is no longer the load's
      at(0x50, "FADD", "R7, R4, R3"),                  // waits on nothing
      at(0x60, "STS", "[R2], R11"),                    // a store reads R11: the LDS
      at(0x70, "IADD3", "R3, R20, UR4, RZ"),           // UR4, RZ are not registers; R20 never loaded
      at(0x80, "LDG.E", "R20, desc[UR6][R14.64]", "@P0"),
      at(0x90, "ISETP.GE.AND", "P0, PT, R20, R3, PT"),  // waits on the LDG
  };
  const auto w = awaited_loads(l);
  REQUIRE(w.count("k") == 1);
  const auto& k = w.at("k");
  CHECK(k.at(0x20) == 0x00);
  CHECK(k.at(0x30) == 0x10);
  CHECK(k.count(0x50) == 0);
  CHECK(k.at(0x60) == 0x10);
  CHECK(k.count(0x70) == 0);
  CHECK(k.at(0x90) == 0x80);
  CHECK(k.count(0x00) == 0);
  CHECK(k.count(0x40) == 0);
}

TEST_CASE("the instruction after a cp.async wait (DEPBAR on a scoreboard) waits on the DEPBAR") {
  const std::vector<sass_instruction> l = {
      at(0x00, "LDS", "R2, [R4]"),
      at(0x10, "DEPBAR.LE", "SB0, 0x0"),
      at(0x20, "S2R", "R98, SR_TID.X"),     // reads nothing, yet held by the DEPBAR
      at(0x30, "FADD", "R5, R2, R3"),       // the LDS's consumer, as before
      at(0x40, "WARPGROUP.DEPBAR.LE", "gsb0, 0x0"),
      at(0x50, "FADD", "R6, R6, R3"),       // a wgmma wait is no scoreboard DEPBAR
  };
  const auto w = awaited_loads(l);
  REQUIRE(w.count("k") == 1);
  CHECK(w.at("k").at(0x20) == 0x10);
  CHECK(w.at("k").at(0x30) == 0x00);
  CHECK(w.at("k").count(0x50) == 0);
}

TEST_CASE("a load at the bottom of a loop is awaited at its top - the latest writer wins") {
  const std::vector<sass_instruction> l = {
      at(0x00, "HMMA.16816.F32.BF16", "R12, R8, R10, R12"),  // R8 from the previous iteration's LDSM
      at(0x10, "LDSM.16.M88.4", "R8, [R3]"),
      at(0x20, "BRA", "`(.L_x_0)"),
  };
  const auto w = awaited_loads(l);
  CHECK(w.at("k").at(0x00) == 0x10);
  // An MMA's fragment write ends the load's claim on all its registers.
  const std::vector<sass_instruction> m = {
      at(0x00, "LDL.128", "R12, [R1]"),
      at(0x10, "HMMA.16816.F32.BF16", "R12, R4, R6, R16"),
      at(0x20, "FADD", "R20, R14, R15"),
  };
  CHECK(awaited_loads(m).count("k") == 0);
}

TEST_CASE("in a real mma.sync solution the tensor-core instructions wait on ldmatrix lines") {
  const std::optional<compiled_solution> c = mma_sync_solution();
  if (!c) return;
  const auto& [lm, listing, src] = *c;
  size_t hmma = 0, from_ldmatrix = 0;
  for (const sass_instruction& inst : listing.instructions) {
    if (inst.opcode != "HMMA") continue;
    ++hmma;
    const int line = lm.map.awaited_line_of(inst.function, inst.offset);
    if (line > 0 && line < int(src.size()) && src[size_t(line)].find("ldmatrix") != std::string::npos) ++from_ldmatrix;
  }
  REQUIRE(hmma > 0);
  INFO(from_ldmatrix << " of " << hmma << " HMMA wait on an ldmatrix line");
  CHECK(from_ldmatrix * 2 >= hmma);
}

TEST_CASE("a wait on a local-memory load is marked as one - a wait on a global load is not") {
  if (nvdisasm_path().empty()) {
    MESSAGE("skipped: nvdisasm not found");
    return;
  }
  // Line 22 loads a .local slot at an index read from memory (it stays
  // an LDL); lines 12, 13 and 23 load global words.
  const std::string ptx =
      ".version 8.0\n"
      ".target sm_90a\n"
      ".address_size 64\n"
      ".visible .entry k(.param .u64 p)\n"
      "{\n"
      "  .local .align 4 .b8 slot[1024];\n"
      "  .reg .b32 %r<8>;\n"
      "  .reg .b64 %rd<8>;\n"
      "  .reg .f32 %f<4>;\n"
      "  ld.param.u64 %rd1, [p];\n"
      "  cvta.to.global.u64 %rd2, %rd1;\n"
      "  ld.global.u32 %r1, [%rd2+4];\n"
      "  ld.global.u32 %r2, [%rd2+8];\n"
      "  and.b32 %r3, %r1, 255;\n"
      "  and.b32 %r4, %r2, 255;\n"
      "  mov.u64 %rd4, slot;\n"
      "  mul.wide.u32 %rd3, %r3, 4;\n"
      "  add.u64 %rd5, %rd4, %rd3;\n"
      "  mul.wide.u32 %rd6, %r4, 4;\n"
      "  add.u64 %rd7, %rd4, %rd6;\n"
      "  st.local.f32 [%rd5], 0f3F800000;\n"
      "  ld.local.f32 %f1, [%rd7];\n"
      "  ld.global.f32 %f2, [%rd2];\n"
      "  add.f32 %f3, %f1, %f2;\n"
      "  st.global.f32 [%rd2], %f3;\n"
      "  ret;\n"
      "}\n";
  const line_mapped_module lm = compile_with_line_info(ptx, "sm_90a");
  REQUIRE_MESSAGE(lm.problem.empty(), lm.problem);
  const sass_listing listing = disassemble(lm.compiled.cubin);
  REQUIRE(listing.available);
  bool local_wait = false, global_wait = false;
  for (const sass_instruction& inst : listing.instructions) {
    const int line = lm.map.awaited_line_of(inst.function, inst.offset);
    if (line == 22) local_wait = local_wait || lm.map.awaits_local_load(inst.function, inst.offset);
    if (line == 12 || line == 13 || line == 23) {  // the global loads (of the indices, of the word)
      global_wait = true;
      CHECK_FALSE(lm.map.awaits_local_load(inst.function, inst.offset));
    }
  }
  CHECK(local_wait);
  CHECK(global_wait);
}

TEST_CASE("in a real cp.async solution the instruction after each DEPBAR waits on a cp.async.wait_group line") {
  const std::optional<compiled_solution> c = mma_sync_solution();
  if (!c) return;
  const auto& [lm, listing, src] = *c;
  int depbars = 0;
  for (size_t i = 0; i + 1 < listing.instructions.size(); ++i) {
    if (listing.instructions[i].opcode != "DEPBAR") continue;
    ++depbars;
    const sass_instruction& next = listing.instructions[i + 1];
    const int line = lm.map.awaited_line_of(next.function, next.offset);
    REQUIRE(line > 0);
    REQUIRE(line < int(src.size()));
    INFO("after the DEPBAR at " << listing.instructions[i].offset << ": line " << line << " " << src[size_t(line)]);
    CHECK(src[size_t(line)].find("cp.async.wait_group") != std::string::npos);
  }
  CHECK(depbars >= 1);
}

TEST_CASE("a warpgroup MMA reads its whole accumulator and A fragment and its arrive waits for them") {
  const std::vector<sass_instruction> l = {
      at(0x00, "LD.E.STRONG.SYS", "R89, desc[UR8][R20.64]"),     // a spilled accumulator register, reloaded
      at(0x10, "LDSM.16.M88.4", "R182, [R3]"),                    // A fragment R180..R183: R182
      at(0x20, "WARPGROUP.ARRIVE", ""),                           // the warp waits here for R89
      at(0x30, "HGMMA.64x128x16.F32.BF16", "R88, gdesc[UR8], R88"),  // reads R88..R151
      at(0x40, "WARPGROUP.ARRIVE", ""),
      at(0x50, "HGMMA.64x128x16.F32.BF16", "R24, R180, gdesc[UR12].tnspB, R24, gsb0"),  // A from R180..R183
      at(0x60, "WARPGROUP.DEPBAR.LE", "gsb0, 0x0"),
      at(0x70, "WARPGROUP.ARRIVE", ""),                           // its MMA reads no loaded register
      at(0x80, "HGMMA.64x16x16.F32.BF16", "R160, gdesc[UR8], R160"),  // R160..R167: nothing loaded there
      at(0x90, "HMMA.16816.F32.BF16", "R200, R180, R190, R200"),  // A is R180..R183: the LDSM's R182
  };
  const auto w = awaited_loads(l);
  REQUIRE(w.count("k") == 1);
  const auto& k = w.at("k");
  CHECK(k.at(0x30) == 0x00);
  CHECK(k.at(0x20) == 0x00);
  CHECK(k.at(0x50) == 0x10);
  CHECK(k.at(0x40) == 0x10);
  CHECK(k.count(0x70) == 0);
  CHECK(k.count(0x80) == 0);
  CHECK(k.at(0x90) == 0x10);
}
