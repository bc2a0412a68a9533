// awaited_loads: which load a scoreboard wait is for, on listings written here
// and on a real solution's SASS (ldmatrix feeding mma.sync).
#include <doctest/doctest.h>

#include <filesystem>
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
  if (nvdisasm_path().empty()) {
    MESSAGE("skipped: nvdisasm not found");
    return;
  }
  const std::string ptx = read_text_file(std::string(PTXBENCH_SOURCE_DIR) + "/tasks/solutions/gemm_bf16_mma_sync/kernel.ptx",
                                         "solution");
  const line_mapped_module lm = compile_with_line_info(ptx, "sm_90a");
  REQUIRE_MESSAGE(lm.problem.empty(), lm.problem);
  const sass_listing listing = disassemble(lm.compiled.cubin);
  REQUIRE(listing.available);
  std::vector<std::string> src = test::lines_of(ptx);
  src.insert(src.begin(), "");
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
