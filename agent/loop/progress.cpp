#include "agent/loop/progress.hpp"

namespace ptxbench {

terminal_progress::terminal_progress(std::FILE* out, bool is_tty, bool quiet)
    : m_out(out), m_tty(is_tty), m_quiet(quiet) {}

void terminal_progress::on_start(int total, int already_done) {
  std::lock_guard<std::mutex> lock(m_mutex);
  m_total = total;
  m_done = already_done;
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
  std::fprintf(m_out, "[%d/%d done, %d in flight%s] %s#%d round %d: %s%s%s\n", m_done, m_total, m_in_flight,
               incomplete_text().c_str(), task_id.c_str(), sample, round, verdict.c_str(), h.empty() ? "" : " - ",
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

void terminal_progress::on_finish() {
  std::lock_guard<std::mutex> lock(m_mutex);
  if (m_quiet) return;
  if (m_tty) std::fprintf(m_out, "\n");
  std::fflush(m_out);
}

std::string terminal_progress::incomplete_text() const {
  return m_incomplete ? ", " + std::to_string(m_incomplete) + " incomplete" : "";
}

void terminal_progress::draw_locked() {
  if (m_quiet) return;
  std::string counts;
  for (const auto& [k, v] : m_verdicts) counts += " " + k + "=" + std::to_string(v);
  std::fprintf(m_out, "\r\033[K%d/%d trajectories done, %d in flight%s, %d passed | turns:%s", m_done, m_total,
               m_in_flight, incomplete_text().c_str(), m_passed, counts.c_str());
  std::fflush(m_out);
}

}  // namespace ptxbench
