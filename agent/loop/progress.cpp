#include "agent/loop/progress.hpp"

#include <cmath>

namespace ptxbench {

std::string format_timing(double elapsed_s, int done_here, int remaining) {
  char buf[128];
  if (done_here <= 0 || elapsed_s <= 0.0) {
    std::snprintf(buf, sizeof buf, "%.1f s elapsed, ETA ?", elapsed_s);
    return buf;
  }
  double per_min = 60.0 * done_here / elapsed_s;
  long eta = std::lround(remaining * elapsed_s / done_here);
  std::snprintf(buf, sizeof buf, "%.1f s elapsed, %.1f trajectories/min, ETA %ldm%02lds", elapsed_s, per_min,
                eta / 60, eta % 60);
  return buf;
}

terminal_progress::terminal_progress(std::FILE* out, bool is_tty, bool quiet, std::function<double()> clock)
    : m_out(out), m_tty(is_tty), m_quiet(quiet), m_clock(std::move(clock)) {
  if (!m_clock) {
    m_clock = [] {
      return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
    };
  }
}

std::string terminal_progress::timing_locked() {
  return format_timing(m_clock() - m_start, m_done - m_already, m_total - m_done);
}

void terminal_progress::on_start(int total, int already_done) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_total = total;
  m_done = already_done;
  m_already = already_done;
  m_start = m_clock();
  if (m_quiet) return;
  std::fprintf(m_out, "%d trajectories (%d already done)\n", total, already_done);
  std::fflush(m_out);
}

void terminal_progress::on_trajectory_started() {
  std::lock_guard<std::mutex> lock(m_mutex);
  ++m_in_flight;
  if (m_tty) draw_locked();
}

void terminal_progress::on_turn(const std::string& task_id, int sample, int round, const std::string& verdict,
                                const std::string& headline) {
  std::lock_guard<std::mutex> lock(m_mutex);
  ++m_verdicts[verdict];
  if (m_quiet) return;
  if (m_tty) {
    draw_locked();
    return;
  }
  std::string h = headline.size() > 110 ? headline.substr(0, 107) + "..." : headline;
  std::fprintf(m_out, "[%d/%d done, %d in flight%s, %s] %s#%d round %d: %s%s%s\n", m_done, m_total, m_in_flight,
               incomplete_text().c_str(), timing_locked().c_str(), task_id.c_str(), sample, round, verdict.c_str(), h.empty() ? "" : " - ",
               h.c_str());
  std::fflush(m_out);
}

void terminal_progress::on_trajectory_done(bool passed, bool completed) {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (completed) ++m_done;
  else ++m_incomplete;
  --m_in_flight;
  if (passed) ++m_passed;
  if (m_tty) draw_locked();
}

void terminal_progress::on_trajectory_skipped() {
  std::lock_guard<std::mutex> lock(m_mutex);
  --m_in_flight;
}

void terminal_progress::on_finish() {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (m_quiet) return;
  if (m_tty) std::fprintf(m_out, "\n");
  std::fprintf(m_out, "%d/%d trajectories done, %d passed; %s\n", m_done, m_total, m_passed, timing_locked().c_str());
  std::fflush(m_out);
}

std::string terminal_progress::incomplete_text() const {
  return m_incomplete ? ", " + std::to_string(m_incomplete) + " incomplete" : "";
}

void terminal_progress::draw_locked() {
  if (m_quiet) return;
  std::string counts;
  for (const auto& [k, v] : m_verdicts) counts += " " + k + "=" + std::to_string(v);
  std::fprintf(m_out, "\r\033[K%d/%d trajectories done, %d in flight%s, %d passed, %s | turns:%s", m_done, m_total,
               m_in_flight, incomplete_text().c_str(), m_passed, timing_locked().c_str(), counts.c_str());
  std::fflush(m_out);
}

}  // namespace ptxbench
