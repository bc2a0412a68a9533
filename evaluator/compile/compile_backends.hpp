#pragma once
// The two compilers behind compile_ptx. Internal to the compile library. Each
// fills `out` (cubin, log, diagnostics, resources) but not time_ms.
#include <string>

#include "evaluator/compile/compile.hpp"

namespace ptxbench {

// `line_info`: also emit the line table of the PTX's .loc directives (-lineinfo), for profiling.
void compile_with_nvjitlink(const std::string& ptx, const std::string& arch, compiled_module& out,
                            bool line_info = false);
void compile_with_ptxas(const std::string& ptx, const std::string& arch, const std::string& ptxas,
                        compiled_module& out, bool line_info = false);

// What compiler_backend::automatic stands for here and now (compile.hpp says how it is chosen).
compiler_backend automatic_backend();

// Appends an error diagnostic without a line (whole-module problems of the PTX).
void add_compile_error(compile_report& report, std::string message);
// Marks the compile failed by the evaluator (compiled_module::evaluator_error),
// with `message` at the end of the log.
void fail_compile(compiled_module& out, std::string message);
// Whether the compiler's log gave an error diagnostic: a failure of the PTX's own.
bool has_error_diagnostic(const compile_report& report);

}  // namespace ptxbench
