// A stand-in for ptxbench-worker that speaks the same protocol without a GPU,
// so the supervisor's watchdog, crash handling and replacement are tested on
// any machine. The behaviour per job is chosen by the task's notes:
//   fake:ok (default)  runtime and correctness passed; correctness reason "pid N job J"
//   fake:crash         reports launch 0, then dies of SIGSEGV
//   fake:hang          reports launch 0 with the job's time limit, then sleeps forever
//   fake:sticky        reports a sticky CUDA error with context_lost, then exits
#include <signal.h>
#include <unistd.h>

#include <string>

#include "evaluator/pool/protocol.hpp"

using namespace ptxbench;

int main() {
  auto send = [](const nlohmann::json& j) { protocol::write_line(1, j.dump()); };
  protocol::worker_hello h;
  h.device_count = 1;
  h.name = "Fake GPU";
  h.arch = "sm_90";
  h.sm_count = 132;
  h.peak_tflops = 800;
  h.copy_gbps = 4000;
  send(protocol::to_json(h));
  protocol::line_reader in(0);
  std::string line;
  while (in.read_line(line, -1) == protocol::line_reader::status::line) {
    protocol::worker_job job = protocol::job_from_json(nlohmann::json::parse(line));
    std::string mode = job.t.notes.rfind("fake:", 0) == 0 ? job.t.notes.substr(5) : "ok";
    std::string size = "K=1024 M=384 N=256";
    send(protocol::to_json(protocol::worker_progress{"launch 0 (gemm_mma) at size " + size, job.time_limit_ms, 0, size}));
    if (mode == "crash") ::raise(SIGSEGV);
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
        stage_status::passed, "pid " + std::to_string(::getpid()) + " job " + std::to_string(job.id), 1.0};
    r.partial.stages[stage::performance] = {stage_status::not_run, "timing not requested", 0.0};
    r.dynamic.error = "fake worker: no counters";
    send(protocol::to_json(r));
  }
  return 0;
}
