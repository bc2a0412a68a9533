// Device probe of the profiling pass's CUPTI parts, each scenario in a child
// process of its own (a crash in CUPTI ends that child only, and CUDA is never
// initialised in the parent): the range profiler (count_hardware) and PC
// sampling (sample_pcs) on the loop kernel, alone, twice in one process, and
// after a SASS-metrics counting pass (count_executed_sass) in the same process,
// as a worker that counted before would run them. A fatal signal prints its
// backtrace. Usage: ptxbench_profile_probe [SCENARIO...] (default: all).
// Prints one line per metric (INFO), per scenario step (STEP) and per scenario
// (SCENARIO name: ok | FAILED how); exit 0 when every scenario was ok.
#include <execinfo.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "evaluator/baselines/baselines.hpp"
#include "evaluator/profile/hw_counter.hpp"
#include "evaluator/profile/pc_sampling.hpp"
#include "evaluator/profile/sass_counter.hpp"
#include "evaluator/protocol/profile_protocol.hpp"
#include "tests/baselines/gpu_support.hpp"
#include "tests/baselines/loop_kernel.hpp"
#include "tests/baselines/reference.hpp"

using namespace ptxbench;
using namespace ptxbench::gpu_test;

namespace {

void on_fatal(int sig) {
  void* frames[64];
  const int n = backtrace(frames, 64);
  char head[64];
  const int len = std::snprintf(head, sizeof head, "FATAL signal %d, backtrace:\n", sig);
  (void)!write(2, head, size_t(len));
  backtrace_symbols_fd(frames, n, 2);
  _exit(128 + sig);
}

constexpr uint32_t k_iterations = 1u << 16;  // ~0.5 ms per launch at 264x256 threads
constexpr unsigned k_blocks = 264, k_threads = 256;

struct kernel_run {
  std::vector<char> cubin;
  loaded_loop_kernel k;
  device_memory out{size_t(k_blocks) * k_threads * 4};
  void load() { k = load_loop_kernel(cubin); }
  void launch() {
    launch_loop_kernel(k, the_gpu().stream, out.ptr(), k_iterations, k_blocks, k_threads);
    check(cuStreamSynchronize(the_gpu().stream), "sync");
  }
};

bool step_hw(kernel_run& run, const std::vector<std::string>& metrics, const std::string& label,
             bool with_availability = false, const std::string& range = "loop") {
  auto pass = [&](const hw_range_marks& marks) {
    marks.push(range + "");  // a temporary, as the worker's names are
    run.launch();
    marks.pop();
  };
  const auto t0 = std::chrono::steady_clock::now();
  hw_count_result r = count_hardware(the_gpu().context, metrics, 2, 64, pass, with_availability);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("STEP %s hw ok=%d passes=%d wall_ms=%.1f setup_ms=%.1f run_ms=%.1f decode_ms=%.1f%s%s\n", label.c_str(),
              int(r.ok), r.passes, ms, r.setup_ms, r.run_ms, r.decode_ms, r.ok ? "" : " error=", r.error.c_str());
  for (size_t i = 0; i < r.values.size(); ++i)
    for (size_t m = 0; m < r.metrics.size(); ++m)
      std::printf("STEP %s hw %s %s=%g\n", label.c_str(), r.range_names[i].c_str(), r.metrics[m].c_str(),
                  r.values[i][m]);
  std::fflush(stdout);
  return r.ok;
}

const std::vector<std::string>& metrics() { return protocol::profile_counter_metrics(); }

// Two ranges in a pass, as the worker's counters part pushes them: the
// candidate's launch ("launch 0 (<kernel>)") and then the library's GEMM at
// 4096^3 (cuBLASLt, "baseline: <name>"), or the loop kernel again when
// `library` is false.
bool step_hw_two_ranges(kernel_run& run, const std::string& label, bool library) {
  constexpr int64_t n = 4096;
  device_memory a(size_t(n * n) * 2), b(size_t(n * n) * 2), c(size_t(n * n) * 2);
  a.fill_bytes(0);
  b.fill_bytes(0);
  std::unique_ptr<baseline> base;
  if (library) {
    base = make_baseline(gemm_task(dtype::bf16), sizes({{"M", n}, {"N", n}, {"K", n}}),
                         baseline_buffers{{{"A", a.ptr()}, {"B", b.ptr()}, {"C", c.ptr()}}}, the_gpu().stream);
    if (!base->available()) {
      std::printf("STEP %s no baseline: %s\n", label.c_str(), base->why_not().c_str());
      return false;
    }
  }
  auto pass = [&](const hw_range_marks& marks) {
    marks.push("launch 0 (a kernel name long enough to live on the heap, as the worker's are)");
    run.launch();
    marks.pop();
    marks.push(library ? "baseline: " + base->name() : std::string("launch 1 (the loop kernel again)"));
    if (library) base->run(the_gpu().stream);
    else run.launch();
    check(cuStreamSynchronize(the_gpu().stream), "sync");
    marks.pop();
  };
  const auto t0 = std::chrono::steady_clock::now();
  hw_count_result r = count_hardware(the_gpu().context, metrics(), 2, 16, pass);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("STEP %s hw ok=%d passes=%d ranges=%zu wall_ms=%.1f%s%s\n", label.c_str(), int(r.ok), r.passes,
              r.values.size(), ms, r.ok ? "" : " error=", r.error.c_str());
  for (size_t i = 0; i < r.values.size(); ++i)
    std::printf("STEP %s hw %s %s=%g\n", label.c_str(), r.range_names[i].c_str(), r.metrics[0].c_str(), r.values[i][0]);
  std::fflush(stdout);
  return r.ok && r.values.size() == 2;
}

bool step_pc(kernel_run& run, const std::string& label, pc_sampling_mode mode = pc_sampling_mode::serialized) {
  const auto t0 = std::chrono::steady_clock::now();
  pc_sampling_result r = sample_pcs(
      the_gpu().context, 8, 20000, [&] { run.load(); }, [&] { run.launch(); }, mode);
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  uint64_t attributed = 0;
  for (const auto& pc : r.pcs)
    for (const auto& [reason, n] : pc.stalls) attributed += n;
  std::printf("STEP %s pc ok=%d total=%llu dropped=%llu pcs=%zu attributed=%llu wall_ms=%.1f%s%s\n", label.c_str(),
              int(r.ok), (unsigned long long)r.total_samples, (unsigned long long)r.dropped_samples, r.pcs.size(),
              (unsigned long long)attributed, ms, r.ok ? "" : " error=", r.error.c_str());
  size_t shown = 0;
  for (const auto& pc : r.pcs) {
    if (shown++ >= 6) break;
    std::printf("STEP %s pc %s+0x%llx", label.c_str(), pc.function.c_str(), (unsigned long long)pc.pc_offset);
    for (const auto& [reason, n] : pc.stalls)
      if (n) std::printf(" %s=%llu", reason.c_str(), (unsigned long long)n);
    std::printf("\n");
  }
  std::fflush(stdout);
  return r.ok && r.total_samples > 0;
}

bool step_sass(kernel_run& run, const std::string& label) {
  sass_count_result r = count_executed_sass(the_gpu().context, [&] {
    run.load();
    run.launch();
  });
  uint64_t total = 0;
  for (const auto& c : r.counts) total += c.executed;
  std::printf("STEP %s sass ok=%d records=%zu executed=%llu%s%s\n", label.c_str(), int(r.ok), r.counts.size(),
              (unsigned long long)total, r.ok ? "" : " error=", r.error.c_str());
  std::fflush(stdout);
  return r.ok;
}

using scenario = std::function<bool(kernel_run&)>;


std::vector<std::pair<std::string, scenario>> scenarios() {
  std::vector<std::pair<std::string, scenario>> s;
  s.push_back({"hw_alone", [](kernel_run& r) { r.load(); return step_hw(r, metrics(), "hw_alone"); }});
  s.push_back({"hw_duration_only", [](kernel_run& r) {
                 r.load();
                 return step_hw(r, {"gpu__time_duration.sum"}, "hw_duration_only");
               }});
  s.push_back({"hw_twice", [](kernel_run& r) {
                 r.load();
                 const bool a = step_hw(r, metrics(), "hw_twice#1");
                 return step_hw(r, metrics(), "hw_twice#2") && a;
               }});
  s.push_back({"hw_with_availability", [](kernel_run& r) {
                 r.load();
                 return step_hw(r, {"gpu__time_duration.sum"}, "hw_with_availability", true);
               }});
  s.push_back({"hw_long_range_name", [](kernel_run& r) {
                 r.load();
                 return step_hw(r, metrics(), "hw_long_range_name", false,
                                "launch 0 (a kernel name long enough to live on the heap, as the worker's are)");
               }});
  s.push_back({"hw_two_ranges", [](kernel_run& r) {
                 r.load();
                 return step_hw_two_ranges(r, "hw_two_ranges", false);
               }});
  s.push_back({"hw_launch_and_library", [](kernel_run& r) {
                 r.load();
                 return step_hw_two_ranges(r, "hw_launch_and_library", true);
               }});
  s.push_back({"pc_then_hw", [](kernel_run& r) {
                 const bool a = step_pc(r, "pc_then_hw");
                 return step_hw(r, metrics(), "pc_then_hw") && a;
               }});
  s.push_back({"pc_continuous", [](kernel_run& r) { return step_pc(r, "pc_continuous", pc_sampling_mode::continuous); }});
  s.push_back({"pc_alone", [](kernel_run& r) { return step_pc(r, "pc_alone"); }});
  s.push_back({"pc_twice", [](kernel_run& r) {
                 const bool a = step_pc(r, "pc_twice#1");
                 return step_pc(r, "pc_twice#2") && a;
               }});
  s.push_back({"sass_then_hw", [](kernel_run& r) {
                 const bool a = step_sass(r, "sass_then_hw");
                 return step_hw(r, metrics(), "sass_then_hw") && a;
               }});
  s.push_back({"sass_then_pc", [](kernel_run& r) {
                 const bool a = step_sass(r, "sass_then_pc");
                 return step_pc(r, "sass_then_pc") && a;
               }});
  s.push_back({"hw_then_pc", [](kernel_run& r) {
                 r.load();
                 const bool a = step_hw(r, metrics(), "hw_then_pc");
                 return step_pc(r, "hw_then_pc") && a;
               }});
  return s;
}

int run_child(const std::string& name, const scenario& body) {
  signal(SIGSEGV, on_fatal);
  signal(SIGBUS, on_fatal);
  signal(SIGABRT, on_fatal);
  try {
    if (!the_gpu().ok) {
      std::printf("STEP %s no GPU: %s\n", name.c_str(), the_gpu().why_not.c_str());
      return 77;
    }
    kernel_run run;
    run.cubin = link_loop_kernel();
    return body(run) ? 0 : 1;
  } catch (const std::exception& e) {
    std::printf("STEP %s threw: %s\n", name.c_str(), e.what());
    return 1;
  }
}

void info() {
  std::string error;
  const std::string chip = hardware_chip(the_gpu().context, error);
  std::printf("INFO device=%s chip=%s %s\n", the_gpu().name.c_str(), chip.c_str(), error.c_str());
  for (const auto& m : metrics()) {
    std::string e;
    const int n = hardware_passes(chip, {m}, e);
    std::printf("INFO metric %s passes=%d %s\n", m.c_str(), n, e.c_str());
  }
  const int all = hardware_passes(chip, metrics(), error);
  std::printf("INFO profile_set passes=%d %s\n", all, all < 0 ? error.c_str() : "");
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> wanted(argv + 1, argv + argc);
  int failed = 0;
  std::vector<std::pair<std::string, scenario>> all = scenarios();
  all.insert(all.begin(), {"info", [](kernel_run&) {
                             info();
                             return true;
                           }});
  for (const auto& [name, body] : all) {
    if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), name) == wanted.end()) continue;
    std::fflush(stdout);
    const pid_t pid = fork();
    if (pid == 0) _exit(run_child(name, body));
    int status = 0;
    waitpid(pid, &status, 0);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
      std::printf("SCENARIO %s: ok\n", name.c_str());
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
      std::printf("SCENARIO %s: skipped (no GPU)\n", name.c_str());
    } else {
      ++failed;
      if (WIFSIGNALED(status)) std::printf("SCENARIO %s: FAILED by signal %d\n", name.c_str(), WTERMSIG(status));
      else std::printf("SCENARIO %s: FAILED exit %d\n", name.c_str(), WEXITSTATUS(status));
    }
    std::fflush(stdout);
  }
  return failed ? 1 : 0;
}
