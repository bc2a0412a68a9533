// The compile stage's text readers: the PTX reader of the format stage
// (comment blanking, tokens, .entry headers with parameters and directives,
// external functions, the special registers that read a clock)
// the lines that load local memory, and what the toolkit writes back: ptxas' log (which quotes the candidate's
// text) and nvdisasm's JSON and text listings, and the SASS dataflow read from the text listing. The input up to the first NUL
// is the log or listing, the rest the PTX (the whole input when there is no NUL).
#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "evaluator/compile/compile.hpp"
#include "evaluator/compile/ptx_text.hpp"
#include "evaluator/compile/ptxas_log.hpp"
#include "evaluator/compile/sass_dataflow.hpp"
#include "evaluator/compile/sass_parse.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string all(reinterpret_cast<const char*>(data), size);
  const size_t nul = all.find('\0');
  const std::string log = all.substr(0, nul);
  const std::string ptx = nul == std::string::npos ? all : all.substr(nul + 1);

  const std::string blank = ptxbench::ptx_text::blank_comments_and_strings(ptx);
  if (blank.size() != ptx.size()) __builtin_trap();  // line numbers must survive
  for (const ptxbench::ptx_entry& e : ptxbench::parse_ptx_entries(ptx))
    for (const ptxbench::ptx_param& p : e.params)
      if (p.size_bytes < 0) __builtin_trap();

  // The profile's local-load lines: each one a line of the PTX.
  const size_t line_count = ptxbench::ptx_text::split_lines(ptx).size();
  for (int line : ptxbench::ptx_text::local_load_lines(ptx))
    if (line < 1 || size_t(line) > line_count) __builtin_trap();
  // The profile's barrier roles: every wait and producer loop within the text.
  const ptxbench::ptx_text::barrier_roles roles = ptxbench::ptx_text::barrier_roles_of(ptx);
  for (const auto& w : roles.waits)
    if (w.first < 1 || w.last < w.first || size_t(w.last) > line_count || (w.own_loads && !w.in_producer))
      __builtin_trap();
  for (const auto& [first, last] : roles.producer_loops)
    if (first < 1 || last < first || size_t(last) > line_count) __builtin_trap();

  // The format stage's external functions and the cross-check's timer scan: lines of the text.
  for (const ptxbench::ptx_external_function& f : ptxbench::ptx_external_functions(ptx))
    if (f.line < 1 || size_t(f.line) > line_count) __builtin_trap();
  const ptxbench::ptx_timer_read timer = ptxbench::ptx_timer_read_of(ptx);
  if (!timer.name.empty() && (timer.line < 1 || size_t(timer.line) > line_count)) __builtin_trap();

  ptxbench::parse_ptxas_diagnostics(log, ptx);
  ptxbench::parse_ptxas_resources(log);
  ptxbench::parse_nvdisasm_json(log);
  const std::vector<ptxbench::sass_instruction> listing = ptxbench::parse_nvdisasm_text(log);
  // Which load each instruction waits on: both ends are instructions of that function.
  std::set<std::pair<std::string, uint64_t>> at;
  for (const auto& i : listing) at.insert({i.function, i.offset});
  for (const auto& [function, waits] : ptxbench::awaited_loads(listing))
    for (const auto& [offset, load] : waits)
      if (!at.count({function, offset}) || !at.count({function, load})) __builtin_trap();
  if (auto checked = ptxbench::parse_nvdisasm_text_checked(log)) {
    // What the checked reader keeps is whole: offsets 0, 16, 32... per function.
    for (size_t i = 1; i < checked->size(); ++i)
      if ((*checked)[i].function == (*checked)[i - 1].function &&
          (*checked)[i].offset != (*checked)[i - 1].offset + ptxbench::sass_instruction_bytes)
        __builtin_trap();
  }
  return 0;
}
