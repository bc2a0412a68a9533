#include "agent/judge/crash_record.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <sstream>

namespace ptxbench {
namespace {

constexpr int k_recorders = 8;
constexpr int k_entries = 256;  // judgings under way at once that a crash can name
constexpr size_t k_path_bytes = 4096;
constexpr size_t k_alt_stack_bytes = 64 * 1024;
constexpr int k_signals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT, SIGTRAP, SIGSYS};

// Everything the signal handler reads is here, fixed in size and set before
// it is published (`used`, an entry's value), so the handler needs no lock
// and no allocation.
struct recorder_slot {
  std::atomic<bool> used{false};
  char path[k_path_bytes] = {};       // the record
  char temporary[k_path_bytes] = {};  // written first, then renamed: a reader never sees half a record
};
recorder_slot g_recorders[k_recorders];

// A judging under way, encoded as (id << 4) | (branch_reply ? 8 : 0) | recorder slot; 0: free.
std::atomic<unsigned long long> g_entries[k_entries];
thread_local unsigned long long t_judging = 0;  // the calling thread's, or 0

std::mutex g_install_mutex;
int g_live_recorders = 0;
struct sigaction g_previous[NSIG];
std::atomic<bool> g_recorded{false};  // one record per process death, by the first thread to crash

unsigned long long encode(int slot, const judge_subject& s) {
  return (static_cast<unsigned long long>(s.id) << 4) | (s.what == judge_subject::kind::branch_reply ? 8u : 0u) |
         static_cast<unsigned>(slot);
}

const char* signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    case SIGTRAP: return "SIGTRAP";
    case SIGSYS: return "SIGSYS";
  }
  return "signal";
}

// "<kind> <id> <signal>\n" into `out` (at least 64 bytes) with
// async-signal-safe code only; returns its length.
size_t format_record(char* out, unsigned long long entry, int sig) {
  size_t n = 0;
  auto add = [&](const char* text) {
    for (; *text; ++text) out[n++] = *text;
  };
  add(entry & 8 ? "branch_reply " : "candidate ");
  char digits[24];
  int d = 0;
  for (unsigned long long id = entry >> 4; id > 0 || d == 0; id /= 10) digits[d++] = static_cast<char>('0' + id % 10);
  while (d > 0) out[n++] = digits[--d];
  out[n++] = ' ';
  add(signal_name(sig));
  out[n++] = '\n';
  return n;
}

void write_records(int sig) {
  unsigned long long named[k_entries];
  int n = 0;
  if (t_judging != 0) {
    named[n++] = t_judging;
  } else {
    for (auto& e : g_entries)
      if (const unsigned long long v = e.load(std::memory_order_acquire); v != 0) named[n++] = v;
  }
  for (int r = 0; r < k_recorders; ++r) {
    if (!g_recorders[r].used.load(std::memory_order_acquire)) continue;
    int fd = -1;
    for (int i = 0; i < n; ++i) {
      if (static_cast<int>(named[i] & 7) != r) continue;
      if (fd < 0) fd = ::open(g_recorders[r].temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd < 0) break;
      char line[96];
      const ssize_t written = ::write(fd, line, format_record(line, named[i], sig));
      (void)written;  // nothing better to do while dying
    }
    if (fd >= 0) {
      ::close(fd);
      ::rename(g_recorders[r].temporary, g_recorders[r].path);
    }
  }
}

void on_fatal_signal(int sig, siginfo_t* info, void*) {
  // kill(), sigqueue() and tgkill() from another process: not this process's crash.
  const bool sent_from_outside = info != nullptr && info->si_code <= 0 && info->si_pid != ::getpid();
  bool first = false;
  if (!sent_from_outside && g_recorded.compare_exchange_strong(first, true)) write_records(sig);
  // Then the signal does what it would have done without us: the previous
  // action, raised again (pending until this returns; a fault also recurs).
  ::sigaction(sig, &g_previous[sig], nullptr);
  ::raise(sig);
}

void install_handlers() {
  struct sigaction action = {};
  action.sa_sigaction = on_fatal_signal;
  action.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&action.sa_mask);
  for (int sig : k_signals) ::sigaction(sig, &action, &g_previous[sig]);
}

void restore_handlers() {
  for (int sig : k_signals) ::sigaction(sig, &g_previous[sig], nullptr);
}

// A signal stack of the judging thread's own: a stack overflow (a parser
// recursing on deep input) can only be handled on another stack. Left alone
// when the thread has one already; removed before the thread's memory goes.
struct thread_alt_stack {
  void* memory = nullptr;
  void ensure() {
    if (memory) return;
    stack_t current = {};
    if (::sigaltstack(nullptr, &current) != 0 || !(current.ss_flags & SS_DISABLE)) return;
    memory = std::malloc(k_alt_stack_bytes);
    if (!memory) return;
    stack_t ss = {};
    ss.ss_sp = memory;
    ss.ss_size = k_alt_stack_bytes;
    if (::sigaltstack(&ss, nullptr) != 0) {
      std::free(memory);
      memory = nullptr;
    }
  }
  ~thread_alt_stack() {
    if (!memory) return;
    stack_t ss = {};
    ss.ss_flags = SS_DISABLE;
    ::sigaltstack(&ss, nullptr);
    std::free(memory);
  }
};
thread_local thread_alt_stack t_alt_stack;

}  // namespace

crash_recorder::crash_recorder(run_store& store) {
  const std::filesystem::path database = store.path();
  store.note_judge_crashes(take_crash_records(database));
  const auto stamp = std::chrono::duration_cast<std::chrono::nanoseconds>(
                         std::chrono::system_clock::now().time_since_epoch()).count();
  const std::string name = database.filename().string() + "-judge-crash-" + std::to_string(::getpid()) + "-" +
                           std::to_string(stamp);
  const std::string path = (database.parent_path() / name).string();
  const std::string temporary = (database.parent_path() / ("." + name + ".tmp")).string();
  if (temporary.size() >= k_path_bytes) return;  // a path this long: crashes go unrecorded (retried, never charged)
  std::lock_guard lock(g_install_mutex);
  for (int i = 0; i < k_recorders && m_slot < 0; ++i) {
    if (g_recorders[i].used.load()) continue;
    std::memcpy(g_recorders[i].path, path.c_str(), path.size() + 1);
    std::memcpy(g_recorders[i].temporary, temporary.c_str(), temporary.size() + 1);
    g_recorders[i].used.store(true, std::memory_order_release);
    m_slot = i;
  }
  if (m_slot >= 0 && g_live_recorders++ == 0) install_handlers();
}

crash_recorder::~crash_recorder() {
  if (m_slot < 0) return;
  std::lock_guard lock(g_install_mutex);
  g_recorders[m_slot].used.store(false, std::memory_order_release);
  if (--g_live_recorders == 0) restore_handlers();
}

std::vector<judge_crash_row> take_crash_records(const std::filesystem::path& database) {
  std::vector<judge_crash_row> out;
  const std::filesystem::path dir = database.parent_path().empty() ? "." : database.parent_path();
  const std::string prefix = database.filename().string() + "-judge-crash-";
  std::error_code ec;
  std::vector<std::filesystem::path> files;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    std::error_code type_ec;
    if (name.rfind(prefix, 0) == 0 && it->is_regular_file(type_ec)) files.push_back(it->path());
  }
  for (const auto& file : files) {
    std::ifstream in(file);
    std::string line;
    // A record names at most the judgings that can be under way at once.
    for (int lines = 0; lines < k_entries && std::getline(in, line); ++lines) {
      std::istringstream fields(line);
      std::string kind, signal;
      long long id = 0;
      if (!(fields >> kind >> id >> signal) || id <= 0 || (kind != "candidate" && kind != "branch_reply")) continue;
      out.push_back({{kind == "candidate" ? judge_subject::kind::candidate : judge_subject::kind::branch_reply, id},
                     signal.substr(0, 16)});
    }
    std::filesystem::remove(file, ec);
  }
  return out;
}

judging_scope::judging_scope(const crash_recorder* recorder, const judge_subject& subject) {
  if (!recorder || recorder->slot() < 0 || subject.id <= 0) return;
  t_alt_stack.ensure();
  const unsigned long long value = encode(recorder->slot(), subject);
  for (int i = 0; i < k_entries && m_entry < 0; ++i) {
    unsigned long long free_entry = 0;
    if (g_entries[i].compare_exchange_strong(free_entry, value, std::memory_order_acq_rel)) m_entry = i;
  }
  m_outer = t_judging;
  t_judging = value;
  m_active = true;
}

judging_scope::~judging_scope() {
  if (!m_active) return;
  t_judging = m_outer;
  if (m_entry >= 0) g_entries[m_entry].store(0, std::memory_order_release);
}

}  // namespace ptxbench
