// PTX -> cubin with the toolkit's ptxas executable, whole-program, as the
// driver's JIT compiles it. The PTX and the cubin pass through private
// temporary files; ptxas' messages name the PTX file, which is renamed
// candidate.ptx in the log so logs do not depend on the temporary name.
#include "evaluator/common/text.hpp"
#include "evaluator/compile/compile_backends.hpp"
#include "evaluator/compile/ptxas_log.hpp"
#include "evaluator/compile/subprocess.hpp"

namespace ptxbench {
namespace {

std::string describe_ms(int ms) {
  return ms % 1000 == 0 ? std::to_string(ms / 1000) + " s" : std::to_string(ms) + " ms";
}

}  // namespace

void compile_with_ptxas(const std::string& ptx, const std::string& arch, const std::string& ptxas,
                        compiled_module& out, bool line_info) {
  temp_file input("ptxbench-", ".ptx");
  temp_file output("ptxbench-", ".cubin");
  if (!input.ok() || !output.ok() || !input.write(ptx.data(), ptx.size())) {
    fail_compile(out, "could not write the PTX to a temporary file");
    return;
  }
  // ptxas compiles a large kernel in seconds; a module that keeps it busy past
  // the limit is a failed compile (ptxas is killed), not a stalled evaluator.
  const int limit_ms = compile_time_limit_ms();
  std::vector<std::string> command = {ptxas, "-arch=" + arch, "-v", "-o", output.path(), input.path()};
  if (line_info) command.insert(command.begin() + 3, "-lineinfo");
  process_result run = run_process(command, limit_ms);
  // A ptxas killed by a signal is run once more: a crash that repeats on the
  // same PTX is that PTX's compile failure (a text that crashes the compiler
  // must not escape its verdict as an evaluator error); one that does not
  // repeat was the machine's.
  const bool crashed = run.ran && !run.timed_out && run.exit_code > 128;
  if (crashed) run = run_process(command, limit_ms);
  if (run.timed_out) {
    add_compile_error(out.report, "compile ran past the time limit of " + describe_ms(limit_ms) + " (ptxas was killed)");
    return;
  }
  if (!run.ran) {
    fail_compile(out, "ptxas could not be run: " + run.failure);
    return;
  }
  const std::string log = replace_all(run.err + run.out, input.path(), "candidate.ptx");
  out.report.log += log;
  out.report.diagnostics = parse_ptxas_diagnostics(log, ptx);
  out.report.kernels = parse_ptxas_resources(log);
  // The PTX failed when ptxas said why; any other failure is the evaluator's.
  if (run.exit_code != 0) {
    if (has_error_diagnostic(out.report)) return;
    if (crashed && run.exit_code > 128)
      add_compile_error(out.report, "ptxas crashed (signal " + std::to_string(run.exit_code - 128) +
                                        ") on this PTX, twice: a module that crashes the compiler is not accepted");
    else
      fail_compile(out, run.exit_code > 128 ? "ptxas crashed (signal " + std::to_string(run.exit_code - 128) + ")"
                                            : "ptxas failed with exit code " + std::to_string(run.exit_code) +
                                                  " and no error message");
    return;
  }
  out.cubin = output.read();
  if (out.cubin.empty()) {
    fail_compile(out, "ptxas exited 0 but produced no cubin");
    return;
  }
  out.report.cubin_bytes = out.cubin.size();
  out.ok = true;
}

}  // namespace ptxbench
