// The SASS opcode classification (evaluator/compile/sass_opcodes.json)
// against nvdisasm's opcodes for sm_90a and sm_100a: every PTX of the
// repository and the PTX of every instruction kind (tests/fixtures/ptx/
// opcodes_*.ptx) compiled with ptxas and disassembled; no opcode may be
// unknown. And what each class counts, instruction by instruction.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include "evaluator/common/files.hpp"
#include "evaluator/compile/compile.hpp"
#include "evaluator/compile/sass_parse.hpp"

using namespace ptxbench;

namespace {

std::string target_of(const std::string& ptx) {
  static const std::regex target(R"(\.target\s+(sm_\d+a?))");
  std::smatch m;
  return std::regex_search(ptx, m, target) ? m[1].str() : "";
}

// Every .ptx under the repository's fixtures and solutions.
std::vector<std::filesystem::path> repository_ptx() {
  std::vector<std::filesystem::path> out;
  const std::filesystem::path root = PTXBENCH_SOURCE_DIR;
  for (const char* dir : {"tests/fixtures/ptx", "tests/fixtures/adversarial", "tasks/solutions"})
    for (const auto& e : std::filesystem::recursive_directory_iterator(root / dir))
      if (e.is_regular_file() && e.path().extension() == ".ptx") out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

sass_instruction inst(const std::string& text) {
  sass_instruction i;
  i.text = text;
  std::string word = text[0] == '@' ? text.substr(text.find(' ') + 1) : text;
  i.opcode = word.substr(0, word.find_first_of(". "));
  return i;
}

}  // namespace

TEST_CASE("every SASS opcode of the repository's PTX and of every PTX instruction kind is classified") {
  if (nvdisasm_path().empty() || ptxas_path().empty()) {
    MESSAGE("skipped: nvdisasm or ptxas not found");
    return;
  }
  std::map<std::string, std::set<std::string>> unknown;  // opcode -> where
  std::map<std::string, std::set<std::string>> seen;     // arch -> opcodes
  int compiled = 0;
  for (const auto& path : repository_ptx()) {
    const std::string ptx = read_text_file(path, "PTX");
    const std::string arch = target_of(ptx);
    if (arch.empty()) continue;
    compiled_module m = compile_ptx(ptx, arch, compiler_backend::ptxas);
    if (!m.ok) continue;  // the fixtures of compile errors
    sass_listing listing = disassemble(m.cubin);
    REQUIRE_MESSAGE(listing.available, path.string() << ": " << listing.error);
    ++compiled;
    for (const auto& i : listing.instructions) {
      seen[arch].insert(i.opcode);
      if (classify_sass(i).kind == sass_kind::unknown) unknown[i.opcode].insert(path.filename().string());
    }
  }
  std::string missing;
  for (const auto& [op, where] : unknown) missing += " " + op + " (" + *where.begin() + ")";
  CHECK_MESSAGE(unknown.empty(), "opcodes missing from sass_opcodes.json:" << missing);
  CHECK(compiled > 40);
  // The instruction-kind corpus reaches the families the classification exists for.
  for (const char* op : {"HGMMA", "QGMMA", "IGMMA", "BGMMA", "HMMA", "IMMA", "BMMA", "DMMA", "HFMA2", "FFMA", "DFMA",
                         "MUFU", "IDP", "UTMALDG", "SYNCS", "LDSM", "LDGSTS"})
    CHECK_MESSAGE(seen["sm_90a"].count(op), op << " not in the sm_90a corpus");
  for (const char* op : {"UTCHMMA", "UTCQMMA", "UTCIMMA", "FFMA2", "FMUL2", "FADD2", "FMNMX3", "CREDUX", "LDTM", "STTM"})
    CHECK_MESSAGE(seen["sm_100a"].count(op), op << " not in the sm_100a corpus");
  MESSAGE(seen["sm_90a"].size() << " opcodes for sm_90a, " << seen["sm_100a"].size() << " for sm_100a");
}

TEST_CASE("tensor instructions carry the FLOPs of their shape whatever the family") {
  CHECK(classify_sass(inst("HGMMA.64x128x16.F32.BF16 R24, gdesc[UR4], R24")).flops == 2.0 * 64 * 128 * 16 / 4);
  CHECK(classify_sass(inst("HGMMA.64x8x16.F16 RZ, gdesc[URZ], RZ, !UPT")).flops == 0);  // ptxas padding
  CHECK(classify_sass(inst("HGMMA.SP.64x64x32.F32.BF16 R24, gdesc[UR4], R24, R2")).flops == 64.0 * 64 * 32 / 4);
  CHECK(classify_sass(inst("HMMA.16816.F32.BF16 R4, R8, R12, R4")).flops == 2.0 * 16 * 8 * 16);
  CHECK(classify_sass(inst("HMMA.1688.F32.TF32 R4, R8, R12, R4")).operand_type == "TF32");
  CHECK(classify_sass(inst("DMMA.8x8x4 R4, R8, R10, R4")).flops == 2.0 * 8 * 8 * 4);
  CHECK(classify_sass(inst("DMMA.16x8x16 R4, R8, R10, R4")).operand_type == "F64");
  CHECK(classify_sass(inst("IMMA.16832.S8.S8 R4, R8, R12, R4")).flops == 2.0 * 16 * 8 * 32);
  CHECK(classify_sass(inst("IMMA.SP.16864.S8.S8 R4, R8, R12, R4, R2")).flops == 16.0 * 8 * 64);
  CHECK(classify_sass(inst("BMMA.168256.AND.POPC R4, R8, R12, R4")).operand_type == "B1");
  CHECK(classify_sass(inst("QGMMA.64x128x32.F32.E4M3.E4M3 R24, gdesc[UR4], R24")).operand_type == "E4M3");
  CHECK(classify_sass(inst("UTCHMMA gdesc[UR4], gdesc[UR6], tmem[UR8], tmem[UR10], idesc[UR12], UPT")).flops == -1);
}

TEST_CASE("scalar math counts per warp execution - move idioms and address arithmetic count none") {
  CHECK(classify_sass(inst("FFMA R1, R2, R3, R4")).flops == 64);
  CHECK(classify_sass(inst("@P0 FMUL R1, R2, 0.5")).flops == 32);
  CHECK(classify_sass(inst("HFMA2.MMA R3, -RZ, RZ, 1.5, 0")).flops == 0);
  CHECK(classify_sass(inst("HFMA2.MMA R3, R4, R5, R6")).flops == 128);
  CHECK(classify_sass(inst("HFMA2.MMA.BF16_V2 R3, R4, R5, R6")).operand_type == "BF16");
  CHECK(classify_sass(inst("FFMA2 R2, R4, R6, R8")).flops == 128);
  CHECK(classify_sass(inst("DFMA R2, R4, R6, R8")).operand_type == "F64");
  CHECK(classify_sass(inst("MUFU.EX2 R2, R4")).flops == 32);
  CHECK(classify_sass(inst("IMAD.MOV.U32 R1, RZ, RZ, R2")).flops == 0);
  CHECK(classify_sass(inst("IMAD.SHL.U32 R2, R0, 0x2, RZ")).flops == 0);
  CHECK(classify_sass(inst("IMAD.WIDE R2, R3, 0x4, R4")).flops == 0);
  CHECK(classify_sass(inst("IMAD R2, R3, R5, R4")).flops == 64);
  CHECK(classify_sass(inst("IDP.4A.S8.S8 R2, R3, R5, R4")).flops == 256);
  CHECK(classify_sass(inst("IDP.2A.LO.U16.U8 R2, R3, R5, R4")).flops == 128);
  CHECK(classify_sass(inst("HADD2.F32 R0, -RZ, R2.H0_H0")).flops == 0);
  CHECK(classify_sass(inst("LDG.E R2, desc[UR4][R4.64]")).kind == sass_kind::other);
  CHECK(classify_sass(inst("XYZZY R2, R3")).kind == sass_kind::unknown);
  CHECK(sass_opcode_known("FFMA"));
  CHECK_FALSE(sass_opcode_known("XYZZY"));
}
