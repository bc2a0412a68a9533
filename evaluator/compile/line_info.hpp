#pragma once
// Line info for profiling: a copy of the candidate's PTX that tells ptxas,
// instruction by instruction, which line of the candidate's own text it came
// from, and the SASS offset -> PTX line map read back from the cubin. With it
// a profiler's per-PC samples land on the model's lines. No GPU needed.
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "evaluator/compile/compile.hpp"

namespace ptxbench {

// The file name the annotated copy declares (`.file 1 "candidate.ptx"`).
inline constexpr const char* k_line_info_file = "candidate.ptx";

struct line_annotated_ptx {
  std::string ptx;            // the copy: the candidate's text with directives added
  int instruction_lines = 0;  // lines that received a `.loc`
  int dropped_directives = 0; // the candidate's own `.file`/`.loc` lines, turned into comments
  std::string problem;        // "" or why no copy could be made (no module header, unbalanced braces)
};

// Returns a copy of `ptx` with `.file 1 "candidate.ptx"` after the module
// header (.version/.target/.address_size) and `.loc 1 <line> 0` on its own
// line before every line of a function body where an instruction starts
// (labels, directives, braces and the continuation lines of a statement
// spanning several lines get none). <line> is the 1-based line in `ptx`, so
// line numbers of the copy's line table are the candidate's. The candidate's
// own `.file`/`.loc` lines become comments (their numbers would clash); every
// other character of `ptx` is kept. Pure; never throws; bounded by the size of
// `ptx` (linear scan).
line_annotated_ptx add_line_info(const std::string& ptx);

// SASS byte offset (per function, as nvdisasm and CUPTI count them) -> 1-based
// line of the candidate's PTX.
struct sass_line_map {
  bool available = false;
  std::string error;  // why there is no map (no nvdisasm, no line table)
  std::map<std::string, std::map<uint64_t, int>> lines;  // function -> offset -> line
  // Instructions that ptxas left on a neighbour's line and were placed on
  // their own (line_map.cpp says how): warpgroup MMAs on their wgmma.mma_async
  // lines, an mbarrier wait's in-line first try on its try_wait line.
  int placed_by_order = 0;
  // Per function: an instruction that reads a register a load wrote -> the
  // load's line (sass_dataflow.hpp; filled by compile_with_line_info).
  std::map<std::string, std::map<uint64_t, int>> awaited;
  // Per function: the instructions among `awaited` whose load is a local-memory
  // one (LDL: registers ptxas spilled, or a .local array).
  std::map<std::string, std::set<uint64_t>> awaits_local;
  // The line of the instruction at `offset` of `function`; 0 when unknown.
  int line_of(const std::string& function, uint64_t offset) const;
  // The line of the load the instruction at `offset` waits on; 0 when none.
  int awaited_line_of(const std::string& function, uint64_t offset) const;
  bool awaits_local_load(const std::string& function, uint64_t offset) const;
  size_t size() const;
};

// Reads `nvdisasm -gi -c` text: ".section .text.<function>" headers,
// `//## File "<file>", line N` markers (the line of `file_name` in force until
// the next marker of the section) and "/*0040*/ ..." instructions. Instructions
// before any marker of `file_name`, or under another file's marker, are left
// out. Never throws.
sass_line_map parse_nvdisasm_line_info(const std::string& text, const std::string& file_name = k_line_info_file);

// Runs nvdisasm -gi -c on `cubin` and parses it. available == false, with the
// reason, when nvdisasm is missing or fails or the cubin has no line table.
sass_line_map sass_line_map_of(const std::vector<char>& cubin);

// compile_ptx for profiling: `add_line_info(ptx)` compiled with -lineinfo by
// the compiler compile_ptx(ptx, arch) would use (uncached: a profile is rare
// and cached by candidate). `problem` says why no line-mapped cubin exists;
// then the caller profiles without lines.
struct line_mapped_module {
  compiled_module compiled;  // of the annotated copy
  sass_line_map map;
  std::string problem;
};
line_mapped_module compile_with_line_info(const std::string& ptx, const std::string& arch);
// The same in two steps, for a caller that can use the cubin before its map
// (the profiling pass samples while the map is made): the compile alone (map
// left empty), then the map of `lm.compiled` (two nvdisasm runs, side by
// side), which sets `lm.map` or `lm.problem`.
line_mapped_module compile_line_info_copy(const std::string& ptx, const std::string& arch);
void map_line_info(line_mapped_module& lm, const std::string& ptx);

}  // namespace ptxbench
