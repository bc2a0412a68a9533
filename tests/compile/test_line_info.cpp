// add_line_info and the SASS -> PTX line map: the annotated copy keeps every
// fixture and reference solution compiling to the same SASS, and every mapped
// instruction maps back to the exact candidate line it came from.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/text_lines.hpp"
#include "evaluator/common/files.hpp"
#include "evaluator/compile/compile.hpp"
#include "evaluator/compile/line_info.hpp"
#include "fixtures.hpp"

using ptxbench::test::lines_of;

using namespace ptxbench;
using ptxbench::test::read_ptx_fixture;

namespace {


// The copy without the lines add_line_info added.
std::string without_added(const std::string& copy) {
  std::string out;
  for (const std::string& l : lines_of(copy)) {
    if (l.rfind("\t.loc 1 ", 0) == 0 || l == ".file 1 \"candidate.ptx\"") continue;
    out += l + '\n';
  }
  out.pop_back();  // lines_of gives the text after the last newline as a line
  return out;
}

const char* const k_small = R"(.version 9.0
.target sm_90a
.address_size 64
.file 1 "kernel.cu"
.global .align 4 .b32 table[4] = {1, 2,
  3, 4};
.visible .entry k(.param .u64 p)
.maxntid 128, 1, 1
{
	.reg .b32 %r<4>; // a comment; with { braces }
	.loc 1 7 0
	mov.u32 %r1,
	  %tid.x;
$L_top: add.s32 %r2, %r1, 1; /* block
	comment */ add.s32 %r3, %r2, 1;
	{ .reg .b32 t; mov.b32 t, 0; }
	mov.b64 {%r1, %r2}, 0;
	ret;
}
)";

}  // namespace

TEST_CASE("add_line_info puts a .loc before each line where an instruction starts and nowhere else") {
  const line_annotated_ptx a = add_line_info(k_small);
  REQUIRE(a.problem.empty());
  std::vector<int> loc_lines;
  for (const std::string& l : lines_of(a.ptx))
    if (l.rfind("\t.loc 1 ", 0) == 0) loc_lines.push_back(std::stoi(l.substr(8)));
  // 12: mov (continued on 13, which gets none); 14: label + add; 16: the inner scope; 17: vector braces; 18: ret.
  CHECK(loc_lines == std::vector<int>{12, 14, 16, 17, 18});
  CHECK(a.instruction_lines == 5);
  CHECK(a.dropped_directives == 2);  // the candidate's .file and .loc
  // The .file goes after the header; the candidate's own directives become blanks; nothing else changes.
  const std::vector<std::string> copy = lines_of(a.ptx);
  CHECK(copy[3] == ".file 1 \"candidate.ptx\"");
  std::string expected = k_small;
  expected.replace(expected.find(".file 1 \"kernel.cu\""), 19, std::string(19, ' '));
  expected.replace(expected.find(".loc 1 7 0"), 10, std::string(10, ' '));
  CHECK(without_added(a.ptx) == expected);
}

TEST_CASE("add_line_info refuses a module without a header and survives hostile text") {
  CHECK_FALSE(add_line_info("mov.u32 %r1, 2;").problem.empty());
  CHECK_FALSE(add_line_info("").problem.empty());
  std::mt19937 rng(29);
  const std::string base = k_small;
  for (int i = 0; i < 2000; ++i) {
    std::string s = base;
    for (int k = 0; k < 6; ++k) s[rng() % s.size()] = "{};:\n\"/*.$ a"[rng() % 13];
    s = s.substr(0, rng() % (s.size() + 1));
    const line_annotated_ptx a = add_line_info(s);
    if (a.problem.empty()) CHECK(a.ptx.size() >= s.size());
  }
}

TEST_CASE("parse_nvdisasm_line_info reads sections and markers of the candidate's file and offsets") {
  const std::string text =
      "\t.section\t.text.k,\"ax\",@progbits\n"
      "        /*0000*/                   LDC R1, c[0x0][0x28] ;\n"
      "\t//## File \"candidate.ptx\", line 33\n"
      "        /*0010*/                   S2R R0, SR_TID.X ;\n"
      "        /*0020*/                   ULDC.64 UR4, c[0x0][0x208] ;\n"
      "\t//## File \"other.cu\", line 7\n"
      "        /*0030*/                   NOP ;\n"
      "\t//## File \"candidate.ptx\", line 412 inlined at \"candidate.ptx\", line 9\n"
      "        /*0040*/                   EXIT ;\n"
      "\t.section\t.text.j,\"ax\",@progbits\n"
      "        /*0000*/                   EXIT ;\n";
  const sass_line_map m = parse_nvdisasm_line_info(text);
  REQUIRE(m.available);
  CHECK(m.line_of("k", 0x0) == 0);
  CHECK(m.line_of("k", 0x10) == 33);
  CHECK(m.line_of("k", 0x20) == 33);
  CHECK(m.line_of("k", 0x30) == 0);
  CHECK(m.line_of("k", 0x40) == 412);
  CHECK(m.line_of("j", 0x0) == 0);  // a new section starts without a line
  CHECK(m.size() == 3);
  CHECK_FALSE(parse_nvdisasm_line_info("garbage\n/*zz*/\n//## File \"candidate.ptx\", line\n").available);
}

TEST_CASE("an mbarrier wait's in-line first try takes the line of its retry loop") {
  // ptxas 13.0's shape (sm_90a): the try_wait loop becomes an in-line
  // PHASECHK + branch that inherit the line before them, and a retry loop at
  // the end that carries the try_wait's line.
  const std::string text =
      "\t.section\t.text.k,\"ax\",@progbits\n"
      "\t//## File \"candidate.ptx\", line 13\n"
      "        /*00b0*/                   SYNCS.EXCH.64 URZ, [UR6], UR4 ;\n"
      "        /*00c0*/                   SHF.L.U32 R0, R5, 0x1f, RZ ;\n"
      ".L_x_4:\n"
      "        /*00d0*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR6], R0 ;\n"
      "        /*00d8*/                   SHF.R.U32.HI R8, RZ, 0x4, R8 ;\n"
      "        /*00e0*/              @!P0 BRA `(.L_x_0) ;\n"
      ".L_x_1:\n"
      "\t//## File \"candidate.ptx\", line 30\n"
      "        /*00f0*/                   STG.E desc[UR8][R2.64], R5 ;\n"
      "        /*0100*/                   EXIT ;\n"
      ".L_x_0:\n"
      "\t//## File \"candidate.ptx\", line 20\n"
      "        /*0110*/                   SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR6], R0 ;\n"
      "\t//## File \"candidate.ptx\", line 21\n"
      "        /*0120*/              @!P0 BRA `(.L_x_0) ;\n"
      "        /*0130*/                   BRA `(.L_x_1) ;\n";
  const sass_line_map m = parse_nvdisasm_line_info(text);
  REQUIRE(m.available);
  CHECK(m.line_of("k", 0xd0) == 20);  // was 13, the mbarrier.init's
  CHECK(m.line_of("k", 0xe0) == 20);
  CHECK(m.line_of("k", 0xd8) == 13);  // what lies between keeps its line
  CHECK(m.line_of("k", 0xc0) == 13);
  CHECK(m.line_of("k", 0x110) == 20);
  CHECK(m.line_of("k", 0x120) == 21);
  CHECK(m.placed_by_order == 2);
  // A branch to a label that is no wait, or another predicate, moves nothing.
  std::string other = text;
  other.replace(other.find("@!P0 BRA `(.L_x_0)"), 18, "@!P1 BRA `(.L_x_0)");
  CHECK(parse_nvdisasm_line_info(other).line_of("k", 0xd0) == 13);
  CHECK(parse_nvdisasm_line_info("\t.section\t.text.k,\"ax\",@progbits\n.L_x_0:\n@!P0 BRA `(.L_x_0) ;\n").line_of("k", 0) == 0);
}
