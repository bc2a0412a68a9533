// The annotated copy on real modules: every PTX fixture and reference solution
// compiles with line info to the same SASS as the candidate itself, and the
// instructions map back to the candidate's own lines exactly (a tensor-core
// instruction to the line holding its wgmma/mma, a TMA load to its
// cp.async.bulk.tensor, ...). Needs ptxas or nvJitLink and nvdisasm; no GPU.
#include <doctest/doctest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/text_lines.hpp"
#include "evaluator/common/files.hpp"
#include "evaluator/compile/compile.hpp"
#include "evaluator/compile/line_info.hpp"
#include "evaluator/api/solutions.hpp"
#include "evaluator/api/task.hpp"
#include "fixtures.hpp"

using ptxbench::test::lines_of;

using namespace ptxbench;

namespace {

namespace fs = std::filesystem;

struct module_case {
  std::string name, ptx, arch;
};

std::vector<module_case> modules() {
  std::vector<module_case> out;
  for (const char* f : {"trivial_sm90a.ptx", "entries_mixed.ptx", "mma_sync_sm90a.ptx", "tma_mbarrier_sm90a.ptx",
                        "wgmma_sm90a.ptx", "tcgen05_sm100a.ptx"})
    out.push_back({f, test::read_ptx_fixture(f), std::string(f).find("sm100a") != std::string::npos ? "sm_100a" : "sm_90a"});
  // Every task's solution, checked in or generated (tasks are expanded from
  // families, so there is no tasks/<id>.json to look for).
  const fs::path tasks = fs::path(PTXBENCH_SOURCE_DIR) / "tasks";
  const solution_roots roots = default_solution_roots(tasks);
  for (const task& t : load_task_dir(tasks))
    if (const auto dir = solution_dir(t.id, roots))
      out.push_back({t.id, read_text_file((*dir / "kernel.ptx").string(), "solution"), t.arch});
  return out;
}


// SASS opcode -> the PTX word its line must hold.
const std::map<std::string, std::string> k_origin = {{"HGMMA", "wgmma.mma_async"}, {"QGMMA", "wgmma.mma_async"},
                                                     {"HMMA", "mma.sync"},         {"LDSM", "ldmatrix"},
                                                     {"UTMALDG", "cp.async.bulk.tensor"},
                                                     {"LDGSTS", "cp.async"},        {"USETMAXREG", "setmaxnreg"}};

}  // namespace

TEST_CASE("the line-info copy of every fixture and solution compiles to the same SASS and maps back exactly") {
  if (nvdisasm_path().empty()) {
    MESSAGE("skipped: nvdisasm not found");
    return;
  }
  const std::vector<module_case> all = modules();
  CHECK(all.size() >= 6 + 40);  // the fixtures and the suite's solutions
  for (const module_case& m : all) {
    CAPTURE(m.name);
    const compiled_module plain = compile_ptx(m.ptx, m.arch);
    REQUIRE(plain.ok);
    const line_mapped_module lm = compile_with_line_info(m.ptx, m.arch);
    REQUIRE_MESSAGE(lm.problem.empty(), lm.problem);
    // Same code: the same opcodes in the same order, function by function.
    const sass_listing a = disassemble(plain.cubin), b = disassemble(lm.compiled.cubin);
    REQUIRE(a.available);
    REQUIRE(b.available);
    REQUIRE(a.instructions.size() == b.instructions.size());
    for (size_t i = 0; i < a.instructions.size(); ++i) {
      CHECK(a.instructions[i].function == b.instructions[i].function);
      CHECK(a.instructions[i].opcode == b.instructions[i].opcode);
    }
    std::vector<std::string> src = lines_of(m.ptx);
    src.insert(src.begin(), "");  // 1-based
    std::set<int> loc_lines;
    for (const std::string& l : lines_of(add_line_info(m.ptx).ptx))
      if (l.rfind("\t.loc 1 ", 0) == 0) loc_lines.insert(std::stoi(l.substr(8)));
    size_t mapped = 0, checked = 0;
    for (const sass_instruction& inst : b.instructions) {
      const int line = lm.map.line_of(inst.function, inst.offset);
      if (line == 0) continue;
      ++mapped;
      REQUIRE(line < int(src.size()));
      CHECK(loc_lines.count(line) == 1);  // only lines that hold an instruction
      const bool padding = inst.opcode.find("GMMA") != std::string::npos && sass_instruction_flops(inst) == 0;
      // An mbarrier wait, the in-line first try included (ptxas gives it no
      // row of its own), or a wait ptxas builds into tcgen05.alloc.
      if (inst.text.find("SYNCS.PHASECHK") != std::string::npos) {
        INFO("SASS " << inst.text << " at line " << line << ": " << src[size_t(line)]);
        CHECK((src[size_t(line)].find("mbarrier.try_wait") != std::string::npos ||
               src[size_t(line)].find("mbarrier.test_wait") != std::string::npos ||
               src[size_t(line)].find("tcgen05.alloc") != std::string::npos));
        ++checked;
      }
      if (auto o = k_origin.find(inst.opcode); o != k_origin.end() && !padding) {
        INFO("SASS " << inst.text << " at line " << line << ": " << src[size_t(line)]);
        CHECK(src[size_t(line)].find(o->second) != std::string::npos);
        ++checked;
      }
    }
    // Almost every instruction carries a line (ptxas leaves padding and a few prologue ones without).
    CHECK(mapped * 10 >= b.instructions.size() * 8);
    MESSAGE(m.name << ": " << mapped << "/" << b.instructions.size() << " SASS mapped, " << checked
                   << " tensor-core/TMA/ldmatrix/mbarrier-wait checked");
  }
}
