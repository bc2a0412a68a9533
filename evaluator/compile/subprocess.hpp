#pragma once
// Running a tool (ptxas, nvdisasm) as a child process under a time limit, and
// the private temporary files it reads and writes. Internal to the compile
// library. posix_spawn and O_CLOEXEC pipes keep this safe while other threads
// spawn children too.
#include <filesystem>
#include <string>
#include <vector>

namespace ptxbench {

struct process_result {
  bool ran = false;     // ran to completion (any exit code)
  int exit_code = -1;   // 128 + signal number when killed by a signal
  std::string out;      // stdout
  std::string err;      // stderr
  std::string failure;  // why it did not run to completion: could not start, ran past the limit
  bool timed_out = false;  // killed at the time limit
};

// Each of stdout and stderr keeps at most this many bytes (the rest is read and
// dropped, with a note at the end): a tool that prints without end must not
// exhaust the evaluator's memory.
inline constexpr size_t k_max_process_output_bytes = 64u << 20;

// Runs argv[0] (a path) with `argv`; a child still running after `limit_ms` is killed.
process_result run_process(const std::vector<std::string>& argv, int limit_ms);

// A private file under $TMPDIR (or /tmp) named "<prefix>XXXXXX<suffix>",
// removed when this object goes out of scope.
class temp_file {
 public:
  temp_file(const std::string& prefix, const std::string& suffix);
  ~temp_file();
  temp_file(const temp_file&) = delete;
  temp_file& operator=(const temp_file&) = delete;

  bool ok() const { return !m_path.empty(); }
  const std::string& path() const { return m_path; }
  bool write(const char* data, size_t size) const;  // replaces the contents
  std::vector<char> read() const;                   // empty on failure

 private:
  std::string m_path;
};

// The first executable among `candidates`, then "<dir>/<name>" for each PATH
// directory; empty when none.
std::filesystem::path find_executable(const std::string& name, const std::vector<std::filesystem::path>& candidates);

}  // namespace ptxbench
