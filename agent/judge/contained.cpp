#include "agent/judge/contained.hpp"

namespace ptxbench {

contained_judge::contained_judge(run_store& store, evaluator& eval, judge_settings settings)
    : m_store(store), m_eval(eval), m_settings(std::move(settings)), m_recorder(store) {}

evaluation_result contained_judge::judge(const task& t, const candidate_row& c, const judge_subject& subject) {
  if (!c.format_problem.empty() || c.ptx.empty() || subject.id <= 0) return judge_candidate(m_eval, t, c, m_settings);
  const int crashes = m_store.judge_crashes(subject);
  if (crashes >= k_max_judge_crashes) {
    return agent_error_result("judging",
                              "judging this candidate ended the process " + std::to_string(crashes) +
                                  " times (a crash while it was judged); it is not judged again",
                              m_eval.version());
  }
  const bool alone = crashes > 0;
  m_gate.enter(alone);
  struct leave_gate {
    gate& g;
    bool alone;
    ~leave_gate() { g.leave(alone); }
  } leave{m_gate, alone};
  judging_scope scope(&m_recorder, subject);
  return judge_candidate(m_eval, t, c, m_settings);
}

void contained_judge::gate::enter(bool alone) {
  std::unique_lock lock(m_mutex);
  if (!alone) {
    m_changed.wait(lock, [&] { return !m_alone && m_alone_waiting == 0; });
    ++m_shared;
    return;
  }
  ++m_alone_waiting;
  m_changed.wait(lock, [&] { return !m_alone && m_shared == 0; });
  --m_alone_waiting;
  m_alone = true;
}

void contained_judge::gate::leave(bool alone) {
  {
    std::lock_guard lock(m_mutex);
    if (alone) m_alone = false;
    else --m_shared;
  }
  m_changed.notify_all();
}

}  // namespace ptxbench
