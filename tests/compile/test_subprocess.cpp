// The child-process runner behind ptxas and nvdisasm: output captured, exit
// codes kept, and a child that overruns its limit killed.
#include <doctest/doctest.h>

#include <chrono>

#include "evaluator/compile/subprocess.hpp"

using namespace ptxbench;

TEST_CASE("stdout - stderr and the exit code come back") {
  const process_result r = run_process({"/bin/sh", "-c", "echo out; echo err >&2; exit 3"}, 5000);
  REQUIRE(r.ran);
  CHECK(r.exit_code == 3);
  CHECK(r.out == "out\n");
  CHECK(r.err == "err\n");
}

TEST_CASE("a child past its time limit is killed and reported") {
  const auto start = std::chrono::steady_clock::now();
  const process_result r = run_process({"/bin/sleep", "30"}, 300);
  const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK_FALSE(r.ran);
  CHECK(r.failure == "sleep ran past 300 ms");
  CHECK(elapsed_s < 5.0);
}

TEST_CASE("a program that does not exist is a failure - not an exception") {
  const process_result r = run_process({"/nonexistent/tool"}, 1000);
  CHECK_FALSE(r.ran);
  CHECK_FALSE(r.failure.empty());
}

TEST_CASE("temporary files hold what was written and disappear with their owner") {
  std::string path;
  {
    temp_file f("ptxbench-test-", ".bin");
    REQUIRE(f.ok());
    path = f.path();
    CHECK(path.size() > 4);
    CHECK(path.substr(path.size() - 4) == ".bin");
    REQUIRE(f.write("abc", 3));
    CHECK(f.read() == std::vector<char>{'a', 'b', 'c'});
  }
  CHECK_FALSE(std::filesystem::exists(path));
}

TEST_CASE("a child that closes its output and keeps running is still killed at the limit") {
  // The wait after the pipes closed had no limit: such a child hung the compile stage.
  const auto start = std::chrono::steady_clock::now();
  const process_result r = run_process({"/bin/sh", "-c", "exec >&- 2>&-; sleep 30"}, 300);
  const double elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK_FALSE(r.ran);
  CHECK(r.timed_out);
  CHECK(elapsed_s < 5.0);
}

TEST_CASE("output past the cap is dropped - with a note - and the child runs to its end") {
  const std::string count = std::to_string(k_max_process_output_bytes / 1024 + 64);
  const process_result r =
      run_process({"/bin/sh", "-c", "head -c " + count + "K /dev/zero; echo done >&2"}, 60000);
  REQUIRE(r.ran);
  CHECK(r.exit_code == 0);
  CHECK(r.out.size() < k_max_process_output_bytes + 100);
  CHECK(r.out.find("[output cut at") != std::string::npos);
  CHECK(r.err == "done\n");
}
