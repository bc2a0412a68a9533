#pragma once
// The supervisor <-> ptxbench-worker protocol: one JSON object per line over
// the worker's stdin (jobs) and stdout (hello, progress, result). Plain C++:
// both the CUDA-free supervisor and the worker link it.
//
//   worker -> supervisor, once at start:
//     {"type":"hello","device":0,"device_count":1,"name":"NVIDIA H200","arch":"sm_90",
//      "sm_count":132,"l2_bytes":...,"peak_tflops":...,"copy_gbps":...}
//     or {"type":"fatal","error":"..."} followed by exit.
//   supervisor -> worker, per job:
//     {"type":"job","id":7,"task":{..task json..},"manifest":{..},"cubin_b64":"...",
//      "seeds":[1,2],"hidden_seed":..,"run_timing":true,"run_dynamic":true,
//      "time_limit_ms":10000,"timing_budget_ms":1500}
//   worker -> supervisor, while working (each one re-arms the watchdog):
//     {"type":"progress","what":"launch 0 (gemm) at size M=384 N=256 K=1024","limit_ms":10000}
//   worker -> supervisor, before the timed samples of a job:
//     {"type":"ready_to_time"}   and waits for   {"type":"go"}   from the supervisor,
//     which answers once no other process of this GPU (a spare worker starting,
//     a counting pass) is running, so nothing of ours shares the GPU while it times.
//   worker -> supervisor, at the end of the job:
//     {"type":"result","id":7,"partial":{..evaluation_result json..},"context_lost":false,
//      "dynamic":{"ran":true,"error":"","size":"M=384 ...","task_flops":2.0e8,"time_ms":80,
//                 "counts":[["gemm",1024,4096], ...]}}   // [function, pc offset, executed]
//   A worker whose CUDA context is lost (sticky error) sends its result and exits.
#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "evaluator/api/evaluation.hpp"
#include "evaluator/protocol/profile_protocol.hpp"

namespace ptxbench::protocol {

std::string base64_encode(const std::vector<char>& bytes);
// Throws std::runtime_error on characters outside the alphabet.
std::vector<char> base64_decode(const std::string& text);

// Reads newline-terminated lines from a file descriptor, with a timeout.
class line_reader {
 public:
  explicit line_reader(int fd) : m_fd(fd) {}
  enum class status { line, timeout, eof };
  // timeout_ms < 0 waits forever. EINTR is retried.
  status read_line(std::string& line, int timeout_ms);
  int fd() const { return m_fd; }

 private:
  int m_fd;
  std::string m_buffer;
};

// Writes `line` plus '\n' fully. Returns false when the peer has gone (EPIPE).
bool write_line(int fd, const std::string& line);

// For the worker: a thread that ends the process (exit status
// k_orphan_exit_status) as soon as its parent, the supervisor, is gone —
// killed, crashed or timed out — whatever the worker's main thread is doing.
// A kernel that never finishes would otherwise keep the orphan, and the GPU,
// busy for good (end of file on stdin is not seen while the main thread waits
// in the driver). Checks every `period_ms`.
constexpr int k_orphan_exit_status = 70;
void exit_when_orphaned(int period_ms = 100);

struct worker_hello {
  int device = 0;
  int device_count = 0;
  std::string name;
  std::string arch;  // sm_90
  int sm_count = 0;
  int64_t l2_bytes = 0;
  double peak_tflops = 0.0;  // measured bf16 GEMM rate
  double copy_gbps = 0.0;    // measured device-to-device copy, bytes read + written
  // Where the start went (ms): "driver" (cuInit), "wait" (for the supervisor's
  // go, with --wait-for-gpu), "context" (context, cuBLAS, rates), "warm" (a
  // spare's reference GEMMs).
  std::map<std::string, double> start_ms;
};
nlohmann::json to_json(const worker_hello& h);
worker_hello hello_from_json(const nlohmann::json& j);

// The hardware counters the cross-check reads (ncu's names), per launch, in
// this order: tensor-pipe warp instructions by kind (evaluator/pool/hw_cross_check.hpp).
inline const std::vector<std::string>& hw_check_metrics() {
  static const std::vector<std::string> metrics = {
      "sm__inst_executed_pipe_tensor_op_gmma.sum", "sm__inst_executed_pipe_tensor_op_hmma.sum",
      "sm__inst_executed_pipe_tensor_op_imma.sum", "sm__inst_executed_pipe_tensor_op_dmma.sum"};
  return metrics;
}

struct worker_job {
  uint64_t id = 0;
  task t;
  manifest m;
  std::vector<char> cubin;
  std::vector<uint64_t> seeds;
  uint64_t hidden_seed = 0;
  uint64_t timing_seed = 0;  // inputs of the timed samples; never used for checking
  bool run_timing = true;
  // A counting job (no correctness, no timing): one instrumented pass that
  // counts executed SASS of launch `count_launch` at size `count_size` (an
  // index into t.sizes), on inputs of `count_seed`, checking the outputs
  // afterwards. CUPTI (13.0, H200) records only the first kernel launched in
  // the first pass of a process, so each (size, launch) is counted by its own
  // worker process: launches before it run uninstrumented, it alone is
  // counted, the later ones run uninstrumented again, then the outputs are checked.
  bool count_only = false;
  // With count_only: instead of the SASS pass, the hardware cross-check
  // (evaluator/pool/hw_cross_check.hpp): every launch at `count_size`, run once,
  // then again uninstrumented under CUPTI's range profiler (one range per
  // launch), the outputs checked after.
  bool hw_check = false;
  int count_launch = 0;
  int count_size = 0;
  uint64_t count_seed = 0;
  // A profiling job (evaluator/protocol/profile_protocol.hpp): "counters" or
  // "sampling" at size `count_size` on inputs of `count_seed`; "" for none.
  std::string profile_part;
  double time_limit_ms = 10000;
  double timing_budget_ms = 1500;
};
// The watchdog's allowance for a step of a counting, cross-check or profiling
// job: instrumented launches run many times slower than checked ones, and
// CUPTI's set-up takes seconds.
inline double pass_allowance_ms(const worker_job& job) { return std::max(60000.0, 20 * job.time_limit_ms); }
nlohmann::json to_json(const worker_job& j);
worker_job job_from_json(const nlohmann::json& j);  // throws input_error / std::exception

struct pc_count {
  std::string function;
  uint64_t pc_offset = 0;
  uint64_t executed = 0;
};

struct dynamic_counts {
  bool ran = false;
  std::string error;     // why the instrumented pass did not run
  std::string output_error;  // non-empty: the outputs of the counted run were wrong (a correctness failure)
  // Non-empty: a launch of the candidate failed in the counting run (a trap,
  // an illegal address...): the candidate's failure, not a missing count.
  std::string candidate_failure;
  int size_index = 0;    // index into the task's sizes
  int launch = 0;        // the launch counted
  std::string size;      // size it ran at
  double task_flops = 0;  // task FLOPs at that size
  double time_ms = 0;     // wall time of the instrumented pass
  std::map<std::string, double> phase_ms;  // where that time went, by phase
  std::vector<pc_count> counts;
  // The hardware cross-check (hw_check jobs): metric names, values per launch,
  // the counter passes it took; `hw_unavailable`: the machine cannot profile
  // (unsupported, no privileges), which is never the candidate's failure.
  std::vector<std::string> hw_metrics;
  std::vector<std::vector<double>> hw_values;
  int hw_passes = 0;
  bool hw_unavailable = false;
};

struct worker_result {
  uint64_t id = 0;
  // Filled by the worker: stages runtime, correctness, performance (and their
  // reports); everything else is the supervisor's.
  evaluation_result partial;
  bool context_lost = false;
  // The worker exits after sending this result and must be replaced: CUPTI
  // (13.0, H200) counts executed instructions only in the first instrumented
  // pass of a process, so a worker that ran a pass is never reused.
  bool recycle = false;
  dynamic_counts dynamic;  // counting jobs only
  profile_raw profile;     // profiling jobs only
};
nlohmann::json to_json(const worker_result& r);
worker_result result_from_json(const nlohmann::json& j);

struct worker_progress {
  std::string what;       // "launch 0 (gemm) at size M=384 N=256 K=1024"
  double limit_ms = 0.0;  // the watchdog's allowance from now on
  int launch = -1;        // launch index when a candidate kernel is running
  std::string size;       // size being run, when any
};
worker_progress progress_from_json(const nlohmann::json& j);
nlohmann::json to_json(const worker_progress& p);

}  // namespace ptxbench::protocol
