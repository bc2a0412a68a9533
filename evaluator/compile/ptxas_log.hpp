#pragma once
// Reading ptxas' verbose log (as nvJitLink returns it) into diagnostics and
// per-kernel resources. Internal to the compile library; exposed for tests.
#include <string>
#include <string_view>
#include <vector>

#include "evaluator/api/evaluation.hpp"

namespace ptxbench {

// Diagnostics of a ptxas log: "ptxas <input>, line N; error : msg" and the
// warning form, "ptxas fatal : msg" (line 0), and advisory infos that carry a
// code ("ptxas info : (C7508) ... around line N"). Each diagnostic with a line
// quotes `ptx` lines N-2..N+2, numbered, the offending one marked with '>'.
// At most this many diagnostics are kept: a module of thousands of broken lines
// gives a report of readable size.
inline constexpr size_t k_max_ptxas_diagnostics = 200;

std::vector<ptxas_diagnostic> parse_ptxas_diagnostics(const std::string& log, const std::string& ptx);

// Resources of every entry function the log describes ("Compiling entry
// function 'k'", "N bytes stack frame, N bytes spill stores, N bytes spill
// loads", "Used N registers, ..., N bytes smem, N bytes cmem[0]"), in log order.
std::vector<kernel_resources> parse_ptxas_resources(const std::string& log);

// PTX lines first..last (1-based, clamped), each as "  12 | text", the line
// `mark` prefixed with '>' instead of a space. Long lines are cut at 240 characters.
std::string quote_ptx_lines(const std::string& ptx, int first, int last, int mark);
std::string quote_ptx_lines(const std::vector<std::string_view>& lines, int first, int last, int mark);

}  // namespace ptxbench
