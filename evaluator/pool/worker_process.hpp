#pragma once
// One ptxbench-worker child process bound to one GPU, seen from the
// supervisor: started by fork+exec, fed jobs over its stdin, read over its
// stdout, and killed (SIGKILL) when it overruns the time its last progress
// message allowed. The supervisor itself never touches CUDA.
//
// Not thread-safe: the owning gpu slot serialises calls.
#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "evaluator/protocol/protocol.hpp"

namespace ptxbench {

struct worker_start {
  bool ok = false;
  std::string error;  // why the worker did not come up (exec failed, no driver, no GPU...)
  protocol::worker_hello hello;
};

// stopped: the supervisor no longer wanted the job (its `stop` flag was set)
// and killed the worker; nothing in it is the candidate's.
enum class job_end { result, timeout, died, stopped };

struct job_outcome {
  job_end end = job_end::died;
  protocol::worker_result result;   // end == result
  std::string cause;                // end != result: "timeout after 2000 ms in launch 0 ..."
  protocol::worker_progress last;   // the last progress message seen
  // What the worker said it was doing, in order, with "waiting for the GPU"
  // where it asked for the GPU (ready_to_time), "go" where it was answered and
  // "gpu_idle" where it said a GPU part was over; the first 256 entries, each
  // with its time since the job was sent.
  struct step {
    std::string what;
    double at_ms = 0;
  };
  std::vector<step> trail;
  std::chrono::steady_clock::time_point sent_at{};  // when the job was written to the worker (trail's 0)
};

// Where a job's time went, from its trail: the time from each step to the
// next (the last one to `end_ms`), summed by the step's kind ("allocating
// buffers at size M=384 ..." and "... at size M=4096 ..." are one kind:
// the text before " at " or " (", digits as '#').
std::map<std::string, double> trail_phases(const std::vector<job_outcome::step>& trail, double end_ms);

class worker_process {
 public:
  worker_process(std::string executable, int device);
  ~worker_process();  // kills a live worker
  worker_process(const worker_process&) = delete;
  worker_process& operator=(const worker_process&) = delete;

  // Starts the process and waits up to `timeout_ms` for its hello. On failure
  // the process is gone and `error` says why (with the tail of its stderr).
  // With `before_gpu`, the worker stops after the part of its start that
  // leaves the GPU alone (exec, libraries, cuInit) and asks; `before_gpu` is
  // called (it may block: it takes the GPU gate) and the worker goes on to
  // make its context. The caller releases what `before_gpu` took once start
  // returns, whatever the outcome.
  worker_start start(int timeout_ms, const std::function<void()>& before_gpu = {});
  // Sends one job and waits for its result, enforcing the watchdog. When the
  // worker asks for the GPU (`ready_to_time`: before timing, or before a
  // counting pass's GPU part), calls `before_gpu` (which may block) and then
  // answers `go`; the watchdog restarts from then. When it says a GPU part is
  // over (`gpu_idle`), calls `after_gpu`. After a timeout or death the process
  // is gone; alive() is false. With `stop`, a job whose flag is set while it
  // runs is ended at once (the worker killed; end == stopped).
  job_outcome run(const protocol::worker_job& job, const std::function<void()>& before_gpu,
                  const std::function<void()>& after_gpu = {}, const std::atomic<bool>* stop = nullptr);
  bool alive() const { return m_pid > 0; }
  // Kills the process (if any); the next start() makes a fresh one.
  void stop() { kill_and_reap(); }
  // Restricts the worker to these GPUs (CUDA_VISIBLE_DEVICES in its
  // environment; "" = inherit the supervisor's). With one GPU listed, the
  // worker's --device is 0: a candidate cannot reach another slot's GPU.
  void set_visible_devices(std::string devices) { set_environment("CUDA_VISIBLE_DEVICES", std::move(devices)); }
  // Sets one variable of the worker's environment (replacing the supervisor's
  // value of it); an empty value leaves the supervisor's as it is.
  void set_environment(const std::string& name, std::string value) { m_environment[name] = std::move(value); }
  // A spare for counting passes: it warms cuBLAS at start; its profiler is set
  // up in the pass, after the candidate's module is loaded.
  void set_spare(bool spare) { m_spare = spare; }
  // With a gated start: the context and cuBLAS handle are made before the
  // worker asks for the GPU (only the warm-up waits), not after.
  void set_context_ungated(bool ungated) { m_context_ungated = ungated; }
  // Rates measured by an earlier worker on this GPU: a replacement reuses them
  // instead of measuring again (about a second).
  void set_known_rates(double peak_tflops, double copy_gbps) {
    m_known_peak_tflops = peak_tflops;
    m_known_copy_gbps = copy_gbps;
  }

 private:
  // The child's argument and environment vectors, prepared before fork (only
  // async-signal-safe calls may run between fork and exec in a threaded process).
  struct exec_vectors {
    std::vector<std::string> args, assignments;  // owned strings the pointers below point into
    std::vector<char*> argv, envp;
  };
  void prepare_exec(exec_vectors& v, bool wait_for_gpu) const;
  // fork + exec with the worker's stdin, stdout and stderr (err_fd) wired; false with out.error set.
  bool spawn(const exec_vectors& v, int err_fd, worker_start& out);
  // Reads until the worker says hello (or fails), answering its ready_to_start with
  // before_gpu() and a go.
  worker_start await_hello(int timeout_ms, const std::function<void()>& before_gpu);
  void kill_and_reap();
  std::string reap_description();  // waits for an exited child; "signal 11 (Segmentation fault)"
  std::string stderr_tail() const;

  std::string m_executable;
  int m_device;
  pid_t m_pid = -1;
  int m_to_worker = -1;
  int m_from_worker = -1;
  std::string m_stderr_path;
  double m_known_peak_tflops = 0.0;
  double m_known_copy_gbps = 0.0;
  bool m_spare = false;
  bool m_context_ungated = false;
  std::map<std::string, std::string> m_environment;  // set_environment's, empty values included
  std::unique_ptr<protocol::line_reader> m_reader;
};

}  // namespace ptxbench
