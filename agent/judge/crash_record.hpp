#pragma once
// Which judging ended the process, told apart from a process ended from
// outside. A candidate can take the orchestrator down while it is judged (a
// stack overflow in a parser, an abort in a library); such a candidate must
// not be judged forever. But the orchestrator also dies for reasons that are
// no candidate's: the OOM killer, a preemption, a Slurm requeue, kill -9.
// Counting every judging that started and never finished charged those to
// the candidates under way; only a crash signal raised by this process's own
// code, on a thread that was judging, counts here.
//
// How: while a crash_recorder lives, a handler for SIGSEGV, SIGBUS, SIGFPE,
// SIGILL, SIGABRT, SIGTRAP and SIGSYS writes the judgings under way to a file
// beside the database (<database>-judge-crash-<pid>-<start ns>) as the process
// dies, then lets the signal end the process as it would have. The next
// process of that database reads the file into the store's judge_crashes
// (take_crash_records, in crash_recorder's constructor). A signal another
// process sent (kill, the OOM killer's SIGKILL, which cannot be caught
// anyway) is recorded for nobody. The crashing thread's own judging is
// charged when it has one (judging_scope), else every judging under way (a
// thread the evaluator started for one of them); contained.hpp judges a
// candidate with a crash to its name alone, so a bystander is cleared the
// next time. Judging threads get an alternate signal stack, so a stack
// overflow is recorded too.
#include <filesystem>
#include <vector>

#include "agent/store/store.hpp"

namespace ptxbench {

class crash_recorder {
 public:
  // Reads the records that dead processes left beside the store's database
  // into it (note_judge_crashes), then records crashes of this process for it.
  // At most 8 recorders live at once in one process; past that one records
  // nothing. Throws store_error from the store.
  explicit crash_recorder(run_store& store);
  ~crash_recorder();  // stops recording; the last one restores the previous signal handlers
  crash_recorder(const crash_recorder&) = delete;
  crash_recorder& operator=(const crash_recorder&) = delete;

  int slot() const { return m_slot; }  // -1: not recording

 private:
  int m_slot = -1;
};

// The crash records left beside `database`, read and removed (lines
// "<candidate|branch_reply> <id> <signal>"; malformed lines are skipped).
std::vector<judge_crash_row> take_crash_records(const std::filesystem::path& database);

// The calling thread judges `subject` for `recorder` while this lives (nested
// scopes restore the outer one). A null or non-recording recorder, or a
// subject without an id, records nothing.
class judging_scope {
 public:
  judging_scope(const crash_recorder* recorder, const judge_subject& subject);
  ~judging_scope();
  judging_scope(const judging_scope&) = delete;
  judging_scope& operator=(const judging_scope&) = delete;

 private:
  int m_entry = -1;          // its place among the judgings under way
  unsigned long long m_outer = 0;  // the thread's judging before this one
  bool m_active = false;
};

}  // namespace ptxbench
