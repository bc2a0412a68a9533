// Cost of the compile stage beyond ptxas itself, on a module of many trivial
// entries (the shape that made the stage slow). Prints, for N entries: ptxas
// alone (the command line compile_ptx runs), the whole compile stage
// (compile_ptx), reading ptxas' log alone, and the format stage's entry parse;
// ptxas and the stage as wall time and as CPU time (user + system of this
// process and its children), the steadier ratio on a shared machine.
// Usage: ptxbench_bench_compile_entries [N ...] (default 6000); set
// PTXBENCH_COMPILE_TIME_LIMIT_S when ptxas needs more than 120 s here.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "evaluator/compile/compile.hpp"
#include "evaluator/compile/ptxas_log.hpp"
#include "evaluator/compile/subprocess.hpp"

using namespace ptxbench;

namespace {

std::string trivial_module(int entries) {
  std::string ptx = ".version 8.7\n.target sm_90a\n.address_size 64\n\n";
  for (int i = 0; i < entries; ++i) {
    const std::string k = "k" + std::to_string(i);
    ptx += ".visible .entry " + k + "(\n\t.param .u64 " + k + "_p\n)\n{\n\tret;\n}\n";
  }
  return ptx;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

double cpu_seconds() {
  double total = 0;
  for (int who : {RUSAGE_SELF, RUSAGE_CHILDREN}) {
    rusage u{};
    getrusage(who, &u);
    total += double(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * double(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
  }
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<int> sizes;
  for (int i = 1; i < argc; ++i) sizes.push_back(std::atoi(argv[i]));
  if (sizes.empty()) sizes.push_back(6000);
  const std::string ptxas = ptxas_path();
  if (ptxas.empty()) {
    std::fprintf(stderr, "ptxas not found (set PTXBENCH_PTXAS)\n");
    return 2;
  }
  std::printf("%8s %10s %10s %10s %8s %10s %10s %8s %9s\n", "entries", "ptx_bytes", "ptxas_s", "stage_s", "ratio",
              "ptxas_cpu", "stage_cpu", "cpu_rat", "parse_s");
  for (int n : sizes) {
    const std::string ptx = trivial_module(n);
    temp_file input("ptxbench-bench-", ".ptx");
    temp_file output("ptxbench-bench-", ".cubin");
    input.write(ptx.data(), ptx.size());
    double c0 = cpu_seconds();
    auto t0 = std::chrono::steady_clock::now();
    const process_result alone = run_process({ptxas, "-arch=sm_90a", "-v", "-o", output.path(), input.path()}, 3600000);
    const double ptxas_s = seconds_since(t0);
    const double ptxas_cpu = cpu_seconds() - c0;
    c0 = cpu_seconds();
    t0 = std::chrono::steady_clock::now();
    const compiled_module m = compile_ptx(ptx, "sm_90a", compiler_backend::ptxas);
    const double stage_s = seconds_since(t0);
    const double stage_cpu = cpu_seconds() - c0;
    t0 = std::chrono::steady_clock::now();
    const size_t parsed = parse_ptx_entries(ptx).size();
    const double parse_s = seconds_since(t0);
    t0 = std::chrono::steady_clock::now();
    const size_t logged = parse_ptxas_resources(alone.err + alone.out).size();
    parse_ptxas_diagnostics(alone.err + alone.out, ptx);
    const double log_s = seconds_since(t0);
    std::printf("%8d %10zu %10.2f %10.2f %8.2f %10.2f %10.2f %8.2f %9.3f  %s, %zu kernels in the log (read in %.3f s), "
                "%zu entries parsed\n",
                n, ptx.size(), ptxas_s, stage_s, stage_s / ptxas_s, ptxas_cpu, stage_cpu, stage_cpu / ptxas_cpu,
                parse_s, !alone.ran || alone.exit_code != 0 ? "ptxas failed" : m.ok ? "compiled" : "compile failed",
                logged, log_s, parsed);
    if (!m.ok && !m.report.diagnostics.empty()) std::printf("         %s\n", m.report.diagnostics.front().message.c_str());
    std::fflush(stdout);
  }
  return 0;
}
