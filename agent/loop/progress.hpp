#pragma once
// Progress of a run: trajectories done / in flight, counts per verdict stage,
// elapsed time, rate and ETA. On a terminal, one line rewritten in place;
// otherwise plain lines, one per finished turn, so logs stay readable.
#include <chrono>
#include <cstdio>
#include <functional>
#include <map>
#include <mutex>
#include <string>

namespace ptxbench {

class progress_sink {
 public:
  virtual ~progress_sink() = default;
  virtual void on_start(int trajectories_total, int already_done) = 0;
  virtual void on_trajectory_started() = 0;
  // verdict: a stage name, "passed", or "llm_error".
  virtual void on_turn(const std::string& task_id, int sample, int round, const std::string& verdict,
                       const std::string& headline) = 0;
  // completed: it finished (all rounds, a pass, or ended by an agent error);
  // false when it stopped early (LLM failure, interruption) and stays
  // pending for a resume, which is not counted as done.
  virtual void on_trajectory_done(bool passed, bool completed) = 0;
  // A started trajectory that an earlier process finished (counted in on_start's already_done).
  virtual void on_trajectory_skipped() = 0;
  virtual void on_finish() = 0;
};

// "12.3 s elapsed, 4.0 trajectories/min, ETA 1m05s": the rate counts only the
// trajectories finished since this process started (a resume's earlier ones
// took no time here); ETA is "?" until one has finished.
std::string format_timing(double elapsed_s, int done_here, int remaining);

class terminal_progress : public progress_sink {
 public:
  // is_tty: rewrite one status line; otherwise print plain lines. quiet: nothing.
  // clock: seconds since some fixed point (tests pass their own).
  terminal_progress(std::FILE* out, bool is_tty, bool quiet = false, std::function<double()> clock = {});
  void on_start(int trajectories_total, int already_done) override;
  void on_trajectory_started() override;
  void on_turn(const std::string& task_id, int sample, int round, const std::string& verdict,
               const std::string& headline) override;
  void on_trajectory_done(bool passed, bool completed) override;
  void on_trajectory_skipped() override;
  void on_finish() override;

 private:
  void draw_locked();
  std::string incomplete_text() const;
  std::FILE* m_out;
  bool m_tty;
  bool m_quiet;
  std::mutex m_mutex;
  int m_total = 0;
  int m_done = 0;
  int m_in_flight = 0;
  int m_passed = 0;
  int m_incomplete = 0;
  std::map<std::string, int> m_verdicts;
  std::function<double()> m_clock;
  double m_start = 0.0;
  int m_already = 0;
  std::string timing_locked();
};

}  // namespace ptxbench
