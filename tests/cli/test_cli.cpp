// The executable's user-facing behaviour: help, exit codes, error messages, eval and tasks.
#include <doctest/doctest.h>

#include "cli_test_util.hpp"

using namespace ptxbench;
namespace fs = std::filesystem;

TEST_CASE("help and unknown commands") {
  auto r = test::run_ptxbench({"--help"}, PTXBENCH_SOURCE_DIR);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("usage: ptxbench <command>") != std::string::npos);
  r = test::run_ptxbench({"frobnicate"}, PTXBENCH_SOURCE_DIR);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("unknown command 'frobnicate'") != std::string::npos);
  r = test::run_ptxbench({"run", "--help"}, PTXBENCH_SOURCE_DIR);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("--resume") != std::string::npos);
  CHECK(r.output.find("PTXBENCH_ROUNDS") != std::string::npos);
}

TEST_CASE("tasks list - show and check") {
  auto r = test::run_ptxbench({"tasks", "list"}, PTXBENCH_SOURCE_DIR);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("gemm_bf16_tcgen05") != std::string::npos);
  CHECK(r.output.find("compile and SASS only (sm_100a)") != std::string::npos);
  CHECK(r.output.find("50 tasks: 42 judged on the GPU, 8 at the compile and SASS level only") != std::string::npos);
  r = test::run_ptxbench({"tasks", "show", "attention_fwd_bf16_wgmma_causal", "--prompt"}, PTXBENCH_SOURCE_DIR);
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("Task id: attention_fwd_bf16_wgmma_causal") != std::string::npos);
  // The constraints and the shown sizes; of the hidden ones only how many there are.
  CHECK(r.output.find("Every size obeys: S (the sequence length) is a multiple of 128") != std::string::npos);
  CHECK(r.output.find("- B=4 D=128 H=16 S=4096 (timed)") != std::string::npos);
  CHECK(r.output.find("- and 3 hidden sizes that obey the same constraints") != std::string::npos);
  CHECK(r.output.find("S=640") == std::string::npos);
  r = test::run_ptxbench({"tasks", "show", "gemm_bf16_general"}, PTXBENCH_SOURCE_DIR);
  CHECK(r.output.find("size a hidden size where") != std::string::npos);
  CHECK(r.output.find("M=3001") == std::string::npos);
  r = test::run_ptxbench({"tasks", "check"}, PTXBENCH_SOURCE_DIR);
  CHECK(r.exit_code == 0);
  r = test::run_ptxbench({"tasks", "show", "nope"}, PTXBENCH_SOURCE_DIR);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("unknown task 'nope'") != std::string::npos);
}

TEST_CASE("eval prints the compile verdict with quoted ptxas lines - and exit code 1") {
  auto r = test::run_ptxbench({"eval", "--task", "gemm_bf16_mma_sync", "--ptx", "configs/demo/naive_gemm_typo.ptx",
                               "--manifest", "configs/demo/naive_gemm.json", "--gpu", "off"},
                              PTXBENCH_SOURCE_DIR);
  INFO(r.output);
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("\"verdict\": \"compile\"") != std::string::npos);
  CHECK(r.output.find("fma.rn.f33") != std::string::npos);
  CHECK(r.output.find("compile       failed") != std::string::npos);
}

TEST_CASE("eval of a correct-looking naive kernel: compiles - static instruction check fails - GPU stages not run") {
  auto r = test::run_ptxbench({"eval", "--task", "gemm_bf16_mma_sync", "--ptx", "configs/demo/naive_gemm.ptx",
                               "--manifest", "configs/demo/naive_gemm.json", "--gpu", "off"},
                              PTXBENCH_SOURCE_DIR);
  INFO(r.output);
  CHECK(r.output.find("compile       passed") != std::string::npos);
  CHECK(r.output.find("runtime       not_run") != std::string::npos);
  CHECK(r.output.find("| mma.sync | 0 |") != std::string::npos);
}

TEST_CASE("bad input gets a clear error naming what is wrong - exit code 2") {
  const fs::path dir = fs::temp_directory_path() / ("ptxbench_cli_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  std::ofstream(dir / "bad.json") << R"({"name": "x", "rounds": "three"})";
  auto r = test::run_ptxbench({"run", "--config", (dir / "bad.json").string()}, PTXBENCH_SOURCE_DIR);
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("$.rounds: expected an integer") != std::string::npos);
  std::ofstream(dir / "m.json") << R"({"launches": [{"kernel": "gemm_naive", "grid": [1], "block": [1], "params": [{"buffer": "A"}]}]})";
  r = test::run_ptxbench({"eval", "--task", "gemm_bf16_mma_sync", "--ptx", "configs/demo/naive_gemm.ptx", "--manifest",
                          (dir / "m.json").string(), "--gpu", "off"},
                         PTXBENCH_SOURCE_DIR);
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("\"verdict\": \"format\"") != std::string::npos);
  // An evaluator setting from the environment that means nothing is refused, not read as on or off.
  ::setenv("PTXBENCH_HW_CHECK", "yes", 1);
  r = test::run_ptxbench({"eval", "--task", "gemm_bf16_mma_sync", "--ptx", "configs/demo/naive_gemm.ptx", "--manifest",
                          "configs/demo/naive_gemm.json", "--gpu", "off"},
                         PTXBENCH_SOURCE_DIR);
  ::unsetenv("PTXBENCH_HW_CHECK");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("PTXBENCH_HW_CHECK must be 0 (off), 1 (every candidate) or timers") != std::string::npos);
  fs::remove_all(dir);
}
