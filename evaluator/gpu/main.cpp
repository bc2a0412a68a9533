// ptxbench-worker: the GPU side of the evaluator. One process per GPU, started
// by the supervisor (evaluator/pool) with `--device N`; speaks the protocol of
// evaluator/protocol/protocol.hpp on stdin/stdout. Exits after a sticky CUDA error
// (the context is lost) so the supervisor starts a fresh one.
#include <execinfo.h>
#include <unistd.h>

#include <csignal>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "evaluator/common/clock.hpp"
#include "evaluator/common/json_path.hpp"
#include "evaluator/gpu/cuda_check.hpp"
#include "evaluator/gpu/job.hpp"
#include "evaluator/gpu/references.hpp"
#include "evaluator/gpu/worker_state.hpp"
#include "evaluator/protocol/protocol.hpp"
#ifdef PTXBENCH_HAVE_PROFILE
#include "evaluator/profile/sass_counter.hpp"
#endif

using namespace ptxbench;

namespace {

// A crash of the worker's own code or a library's (never the candidate's: its
// faults are CUDA errors) leaves its frames on stderr, innermost last, so the
// tail the supervisor quotes in "worker died: ..." names where it happened.
// Then the signal's default action, so the supervisor still sees the signal.
void on_fatal_signal(int sig) {
  void* frames[48];
  const int n = backtrace(frames, 48);
  for (int i = n - 1; i >= 1; --i) backtrace_symbols_fd(&frames[i], 1, 2);
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

// The worker's command line (written by the supervisor, worker_process.cpp).
struct worker_args {
  int device = 0;
  double known_peak = 0, known_copy = 0;
  bool spare = false, wait_for_gpu = false, context_ungated = false;
};

worker_args parse_args(int argc, char** argv) {
  worker_args a;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--spare") == 0) a.spare = true;
    if (std::strcmp(argv[i], "--wait-for-gpu") == 0) a.wait_for_gpu = true;
    if (std::strcmp(argv[i], "--context-ungated") == 0) a.context_ungated = true;
  }
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], "--device") == 0) a.device = std::atoi(argv[i + 1]);
    if (std::strcmp(argv[i], "--peak-tflops") == 0) a.known_peak = std::atof(argv[i + 1]);
    if (std::strcmp(argv[i], "--copy-gbps") == 0) a.known_copy = std::atof(argv[i + 1]);
  }
  return a;
}

// One job line from the supervisor, run: its result, or the harness's own
// failure as the evaluator's error.
protocol::worker_result run_line(gpu::worker_state& w, gpu::reference_cache& refs, const std::string& line) {
  protocol::worker_result res;
  try {
    auto j = nlohmann::json::parse(line);
    res.id = j.value("id", uint64_t(0));
    protocol::worker_job job = protocol::job_from_json(j);
    res = gpu::run_job(w, refs, job);
  } catch (const gpu::cuda_error& e) {
    // A CUDA call of the harness itself failed (not a launch of the
    // candidate, whose failures are values): the evaluator's error. It may
    // follow the candidate's damage to the context, so the supervisor retries
    // once on a fresh worker before it says so.
    res.partial.stages[stage::runtime] = {stage_status::error, std::string("worker error: ") + e.what(), 0.0};
    res.context_lost = e.sticky;
    res.dynamic.error = "not reached: worker error";
  } catch (const std::exception& e) {
    res.partial.stages[stage::runtime] = {stage_status::error, std::string("worker error: ") + e.what(), 0.0};
    res.dynamic.error = "not reached: worker error";
  }
  return res;
}

}  // namespace

int main(int argc, char** argv) {
  for (int sig : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT}) ::signal(sig, on_fatal_signal);
  const worker_args args = parse_args(argc, argv);
  protocol::exit_when_orphaned();  // a supervisor gone for good leaves no worker (nor kernel) behind
  // Only protocol lines go to the supervisor: anything a library prints to
  // stdout is diverted to stderr.
  int out = ::dup(1);
  ::dup2(2, 1);
  auto send = [out](const nlohmann::json& j) { protocol::write_line(out, json_text(j)); };

  gpu::worker_state w;
  w.progress = [&](const protocol::worker_progress& p) { send(protocol::to_json(p)); };
  protocol::line_reader in(0);
  // Sends `ask` and blocks until the supervisor answers go; exits if it has gone.
  const auto ask_and_wait = [&](const char* ask) {
    send({{"type", ask}});
    std::string answer;
    while (in.read_line(answer, -1) == protocol::line_reader::status::line) {
      auto j = nlohmann::json::parse(answer, nullptr, false);
      if (!j.is_discarded() && j.value("type", "") == "go") return;
    }
    std::_Exit(0);  // the supervisor has gone
  };
  using clock = std::chrono::steady_clock;
  try {
    auto t0 = clock::now();
    gpu::init_driver(w, args.device);
    w.hello.start_ms["driver"] = ms_since(t0);
    // Everything up to here (exec, the libraries, cuInit) leaves the GPU
    // alone; the warm-up does not, so with --wait-for-gpu the worker asks
    // first and waits until the supervisor says no one is timing. Making the
    // context and cuBLAS handle (no kernels) is on the asking side of that
    // line with --context-ungated, else after it.
    const auto ask = [&] {
      const auto asked = clock::now();
      ask_and_wait("ready_to_start");
      w.hello.start_ms["wait"] = ms_since(asked);
    };
    if (args.wait_for_gpu && !args.context_ungated) ask();
    t0 = clock::now();
    gpu::init_worker(w, args.device, args.known_peak, args.known_copy);
    w.hello.start_ms["context"] = ms_since(t0);
    if (args.wait_for_gpu && args.context_ungated) ask();
    if (args.spare) {
      t0 = clock::now();
      gpu::warm_reference_gemms(w);
      w.hello.start_ms["warm"] = ms_since(t0);
    }
  } catch (const gpu::cuda_error& e) {
    bool none = e.code == CUDA_ERROR_NO_DEVICE || e.code == CUDA_ERROR_STUB_LIBRARY ||
                e.code == CUDA_ERROR_INVALID_DEVICE || e.code == CUDA_ERROR_SYSTEM_DRIVER_MISMATCH;
    send({{"type", "fatal"}, {"error", std::string(none ? "no GPU on this machine: " : "GPU worker start failed: ") + e.what()}});
    return 2;
  } catch (const std::exception& e) {
    send({{"type", "fatal"}, {"error", std::string("GPU worker start failed: ") + e.what()}});
    return 2;
  }
  // A spare does not set its profiler up ahead : on the
  // H200 with CUPTI 13.0 a pass in a process whose profiler was initialised
  // before the candidate's module was loaded recorded nothing (docs/gpu-runs.md,
  // 2026-12-03), so the pass initialises it itself.
  send(protocol::to_json(w.hello));

  gpu::reference_cache refs(w);
  std::string line;
  w.await_go = [&] { ask_and_wait("ready_to_time"); };
  w.gpu_idle = [&] { send({{"type", "gpu_idle"}}); };
  while (in.read_line(line, -1) == protocol::line_reader::status::line) {
    const protocol::worker_result res = run_line(w, refs, line);
    send(protocol::to_json(res));
    if (res.context_lost) std::_Exit(3);  // no cleanup on a lost context: it could only fail or hang
    if (res.recycle) std::_Exit(0);       // see worker_result::recycle
  }
  return 0;
}
