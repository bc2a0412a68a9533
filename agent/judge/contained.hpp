#pragma once
// Judging with containment, the repair loop's path (turns and the siblings of
// branched rounds alike): a candidate whose judging ended the process
// k_max_judge_crashes times (crash_record.hpp: crashes of its own making,
// never a kill from outside) is not judged again and gets agent_error_result;
// a candidate with a crash to its name is judged alone, with no other judging
// of this run beside it, so that a crash then is surely its own and a
// bystander of an earlier crash is cleared by its verdict.
#include <condition_variable>
#include <mutex>

#include "agent/judge/crash_record.hpp"
#include "agent/judge/judge.hpp"

namespace ptxbench {

constexpr int k_max_judge_crashes = 3;

class contained_judge {
 public:
  // Takes the crash records that dead processes left beside the store's
  // database into it and records this process's own (crash_recorder).
  // `settings`: the run's seeds, GPU and limits, for every judging.
  contained_judge(run_store& store, evaluator& eval, judge_settings settings);

  // judge_candidate with containment. A candidate without PTX, or a subject
  // without an id, is judged without it. Throws what judge_candidate throws
  // (evaluator_unavailable: nothing is counted against the candidate) and
  // store_error. Thread-safe.
  evaluation_result judge(const task& t, const candidate_row& c, const judge_subject& subject);

  const judge_settings& settings() const { return m_settings; }

 private:
  // Judgings of this run as readers, a judging alone as the writer; a waiting
  // writer holds new readers back, so it is never starved.
  class gate {
   public:
    void enter(bool alone);
    void leave(bool alone);

   private:
    std::mutex m_mutex;
    std::condition_variable m_changed;
    int m_shared = 0;
    int m_alone_waiting = 0;
    bool m_alone = false;
  };

  run_store& m_store;
  evaluator& m_eval;
  judge_settings m_settings;
  crash_recorder m_recorder;
  gate m_gate;
};

}  // namespace ptxbench
