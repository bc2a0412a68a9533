// A stand-in for ptxbench-worker that speaks the same protocol without a GPU,
// so the supervisor's watchdog, crash handling and replacement are tested on
// any machine. The behaviour per job is chosen by the task's notes:
//   fake:ok (default)  runtime and correctness passed; correctness reason "pid N job J"
//   fake:crash         reports launch 0, then dies of SIGSEGV
//   fake:hang          reports launch 0 with the job's time limit, then sleeps forever;
//                      its counting jobs report launch 0 under counting with the
//                      counting pass's allowance (max(60 s, 20 x the limit)), then sleep forever
//   fake:sticky        reports a sticky CUDA error with context_lost, then exits
//   fake:error         reports an evaluator error (status error at performance)
//   fake:error_once:F  the same while file F does not exist (it creates it), else ok:
//                      an evaluator error that a fresh worker does not repeat
//   fake:lost          dies while computing references (outside the candidate's launches)
//   fake:sleep:MS      like ok, after MS milliseconds "on the GPU"
//   fake:timed:F       asks for the GPU before "timing" (ready_to_time / go), "times" for
//                      $PTXBENCH_FAKE_TIMED_MS (default 20) and
//                      appends "T start end" (steady-clock microseconds) to file F;
//                      counting jobs append "c start end" and "C start end" for the two
//                      parts of their pass that hold the GPU, and "u start end" for the
//                      set-up between them ($PTXBENCH_FAKE_PASS_SETUP_MS, default 15);
//                      main jobs first spend $PTXBENCH_FAKE_BEFORE_TIMING_MS (default 0) "checking"
//                      (logged "B start end" when set), and after the samples
//                      $PTXBENCH_FAKE_CHECK_MS (logged "K start end")
// Counting jobs (count_only) answer that nothing was counted ("fake worker: no counters"), except:
//   fake:count_crash        a counting job reports its launch 0 under counting, then dies of SIGSEGV
//   fake:count_crash_once:F the same while file F does not exist (it creates it)
//   fake:count_setup_lost   a counting job dies in CUPTI's set-up (no launch of the candidate running)
//   fake:count_trap         a counting job answers that the counted launch failed (candidate_failure)
// Main jobs of these modes are ok.
// Start: with --wait-for-gpu (the supervisor's gated start) it spends
// $PTXBENCH_FAKE_START_MS (default 0) "loading libraries", asks
// (ready_to_start), waits for go, then as long again "making its context";
// with $PTXBENCH_FAKE_START_LOG=F it appends "P start end" (the part before
// the ask) and "S start end" (the part after go) to F.
// With $PTXBENCH_FAKE_ENV_LOG=F it appends "main V" or "spare V" to F, V being its
// CUDA_DEVICE_MAX_CONNECTIONS ("unset" when it has none).
// GPUs: $PTXBENCH_FAKE_GPUS of them (default 1), or as many as CUDA_VISIBLE_DEVICES
// lists when it is set, as CUDA counts; the correctness reason ends with
// "on <CUDA_VISIBLE_DEVICES>" ("on all" when unset), so tests see which GPU ran a job.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "evaluator/protocol/protocol.hpp"

using namespace ptxbench;

int main(int argc, char** argv) {
  auto send = [](const nlohmann::json& j) { protocol::write_line(1, j.dump()); };
  auto now_us = [] {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  protocol::exit_when_orphaned();
  protocol::line_reader in(0);
  // Sends `ask` and waits for the supervisor's go.
  auto ask_and_wait = [&](const char* ask) {
    send({{"type", ask}});
    std::string go;
    while (in.read_line(go, -1) == protocol::line_reader::status::line && go.find("\"go\"") == std::string::npos) {
    }
  };
  bool gated = false, spare = false;
  for (int i = 1; i < argc; ++i) {
    gated = gated || std::strcmp(argv[i], "--wait-for-gpu") == 0;
    spare = spare || std::strcmp(argv[i], "--spare") == 0;
  }
  if (const char* env_log = std::getenv("PTXBENCH_FAKE_ENV_LOG"); env_log && *env_log) {
    const char* connections = std::getenv("CUDA_DEVICE_MAX_CONNECTIONS");
    std::ofstream(env_log, std::ios::app) << (spare ? "spare " : "main ") << (connections ? connections : "unset") << "\n";
  }
  if (gated) {
    const char* start_ms = std::getenv("PTXBENCH_FAKE_START_MS");
    const char* start_log = std::getenv("PTXBENCH_FAKE_START_LOG");
    const int ms = start_ms && *start_ms ? std::atoi(start_ms) : 0;
    auto t0 = now_us();
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    auto t1 = now_us();
    ask_and_wait("ready_to_start");
    auto t2 = now_us();
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    if (start_log && *start_log)
      std::ofstream(start_log, std::ios::app) << "P " << t0 << " " << t1 << "\nS " << t2 << " " << now_us() << "\n";
  }
  protocol::worker_hello h;
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  const char* fake_gpus = std::getenv("PTXBENCH_FAKE_GPUS");
  h.device_count = fake_gpus && *fake_gpus ? std::atoi(fake_gpus) : 1;
  if (visible) h.device_count = *visible ? 1 + int(std::count(visible, visible + std::strlen(visible), ',')) : 0;
  const std::string on = std::string(" on ") + (visible ? visible : "all");
  h.name = "Fake GPU";
  h.arch = "sm_90";
  h.sm_count = 132;
  h.peak_tflops = 800;
  h.copy_gbps = 4000;
  send(protocol::to_json(h));
  std::string line;
  while (in.read_line(line, -1) == protocol::line_reader::status::line) {
    protocol::worker_job job = protocol::job_from_json(nlohmann::json::parse(line));
    std::string mode = job.t.notes.rfind("fake:", 0) == 0 ? job.t.notes.substr(5) : "ok";
    std::string arg;
    if (size_t colon = mode.find(':'); colon != std::string::npos) {
      arg = mode.substr(colon + 1);
      mode = mode.substr(0, colon);
    }
    std::string size = "K=1024 M=384 N=256";
    if (job.count_only && mode == "count_crash_once")
      mode = std::ifstream(arg).good() ? "ok" : (std::ofstream(arg) << "x", "count_crash");
    if (job.count_only && (mode == "count_crash" || mode == "count_setup_lost")) {
      // Dies while the candidate's launch runs under counting (a trap that kills
      // the process, a hang the watchdog ends), or in CUPTI's set-up before it.
      const bool in_launch = mode == "count_crash";
      send(protocol::to_json(protocol::worker_progress{
          in_launch ? "launch 0 under counting at " + size : "setting up the counting pass at " + size,
          job.time_limit_ms, in_launch ? 0 : -1, size}));
      ::raise(SIGSEGV);
    }
    if (job.count_only && mode == "hang") {
      send(protocol::to_json(protocol::worker_progress{"launch 0 under counting at " + size,
                                                       protocol::pass_allowance_ms(job), 0, size}));
      while (true) ::pause();
    }
    if (job.count_only && mode == "count_trap") {
      // The counted launch failed and the worker says so (the candidate's failure).
      protocol::worker_result r;
      r.id = job.id;
      r.recycle = true;
      r.dynamic.error = "instrumented run failed: launch 0: CUDA_ERROR_LAUNCH_FAILED: unspecified launch failure";
      r.dynamic.candidate_failure =
          "launch 0: CUDA_ERROR_LAUNCH_FAILED: unspecified launch failure (the counted launch)";
      r.dynamic.size_index = job.count_size;
      r.dynamic.launch = job.count_launch;
      send(protocol::to_json(r));
      return 0;
    }
    if (job.count_only) {
      // Like the real pass: a GPU part ("c"), CUPTI's set-up off the GPU, the
      // counted part ("C"); the hardware cross-check's parts log "h" and "H".
      static const char* const counting_parts[] = {"c", "C"};
      static const char* const hw_parts[] = {"h", "H"};
      for (const char* part : job.hw_check ? hw_parts : counting_parts) {
        ask_and_wait("ready_to_time");
        auto t0 = now_us();
        std::this_thread::sleep_for(std::chrono::milliseconds(mode == "timed" ? 15 : 1));
        if (mode == "timed") std::ofstream(arg, std::ios::app) << part << " " << t0 << " " << now_us() << "\n";
        send({{"type", "gpu_idle"}});
        if (part[0] == 'C' || part[0] == 'H' || mode != "timed") continue;
        const char* setup_ms = std::getenv("PTXBENCH_FAKE_PASS_SETUP_MS");
        auto t1 = now_us();
        std::this_thread::sleep_for(std::chrono::milliseconds(setup_ms && *setup_ms ? std::atoi(setup_ms) : 15));
        std::ofstream(arg, std::ios::app) << "u " << t1 << " " << now_us() << "\n";
      }
      protocol::worker_result r;
      r.id = job.id;
      r.recycle = true;
      r.dynamic.ran = false;
      r.dynamic.error = "fake worker: no counters";
      r.dynamic.size_index = job.count_size;
      r.dynamic.launch = job.count_launch;
      send(protocol::to_json(r));
      return 0;
    }
    if (!job.profile_part.empty()) {
      // A profiling part: logs "<part> <pid>" to the mode's file and answers
      // figures; "profiled_empty" finds no samples in a process that ran the
      // counters first (as CUPTI could), and some in a fresh one.
      static bool counted_here = false;
      std::ofstream(arg, std::ios::app) << job.profile_part << " " << ::getpid() << "\n";
      protocol::worker_result r;
      r.id = job.id;
      r.profile.part = job.profile_part;
      r.profile.ran = true;
      r.profile.phase_ms[job.profile_part] = 1;
      if (job.profile_part == "sampling")
        r.profile.total_samples = mode == "profiled_empty" && counted_here ? 0 : 10;
      counted_here = counted_here || job.profile_part == "counters";
      r.recycle = job.profile_part != "counters";
      send(protocol::to_json(r));
      if (r.recycle) return 0;
      continue;
    }
    if (mode == "lost") {
      send(protocol::to_json(protocol::worker_progress{"inputs and references for seed at size " + size, 60000, -1, size}));
      ::raise(SIGSEGV);
    }
    if (mode == "error_once") mode = std::ifstream(arg).good() ? "ok" : (std::ofstream(arg) << "x", "error");
    send(protocol::to_json(protocol::worker_progress{"launch 0 (gemm_mma) at size " + size, job.time_limit_ms, 0, size}));
    if (mode == "crash") ::raise(SIGSEGV);
    if (mode == "bad_result") {
      // A result line the supervisor cannot read (a field of the wrong type).
      send({{"type", "result"}, {"id", job.id}, {"partial", 42}, {"dynamic", "x"}});
      continue;
    }
    if (mode == "hang")
      while (true) ::pause();
    protocol::worker_result r;
    r.id = job.id;
    if (mode == "sticky") {
      r.context_lost = true;
      r.partial.runtime = runtime_report{"CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered", 0, size, true};
      r.partial.stages[stage::runtime] = {stage_status::failed, r.partial.runtime->error, 0.0};
      r.partial.stages[stage::correctness] = {stage_status::not_run, "not reached: runtime failed", 0.0};
      r.partial.stages[stage::performance] = {stage_status::not_run, "not reached: runtime failed", 0.0};
      send(protocol::to_json(r));
      return 3;
    }
    r.partial.stages[stage::runtime] = {stage_status::passed, "", 0.0};
    r.partial.stages[stage::correctness] = {
        stage_status::passed, "pid " + std::to_string(::getpid()) + " job " + std::to_string(job.id) + on, 1.0};
    if (mode == "sleep") std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(arg.c_str())));
    r.partial.stages[stage::performance] = {stage_status::not_run, "timing not requested", 0.0};
    if (mode == "profiled" || mode == "profiled_empty") {
      performance_report p;
      p.size = size;
      p.candidate_ms = 2;
      p.baseline_ms = 1;
      p.speedup = 0.5;
      r.partial.performance = p;
      r.partial.stages[stage::performance] = {stage_status::failed, "speedup 0.50 below the threshold", 0.5};
    }
    if (mode == "error")
      r.partial.stages[stage::performance] = {stage_status::error, "baseline failed: fake library status 7", 0.0};
    if (mode == "timed") {
      if (const char* before_ms = std::getenv("PTXBENCH_FAKE_BEFORE_TIMING_MS"); before_ms && *before_ms) {
        auto t1 = now_us();
        std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(before_ms)));
        std::ofstream(arg, std::ios::app) << "B " << t1 << " " << now_us() << "\n";
      }
      ask_and_wait("ready_to_time");
      auto t0 = now_us();
      const char* timed_ms = std::getenv("PTXBENCH_FAKE_TIMED_MS");
      std::this_thread::sleep_for(std::chrono::milliseconds(timed_ms && *timed_ms ? std::atoi(timed_ms) : 20));
      std::ofstream(arg, std::ios::app) << "T " << t0 << " " << now_us() << "\n";
      // Like the real worker: the samples are over, the checks after them ("K") share the GPU.
      send({{"type", "gpu_idle"}});
      if (const char* check_ms = std::getenv("PTXBENCH_FAKE_CHECK_MS"); check_ms && *check_ms) {
        auto t1 = now_us();
        std::this_thread::sleep_for(std::chrono::milliseconds(std::atoi(check_ms)));
        std::ofstream(arg, std::ios::app) << "K " << t1 << " " << now_us() << "\n";
      }
    }
    send(protocol::to_json(r));
  }
  return 0;
}
