#pragma once
// Reading the PTX fixtures of tests/fixtures/ptx.
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "evaluator/compile/compile.hpp"

namespace ptxbench::test {

inline std::string read_ptx_fixture(const std::string& name) {
  const std::string path = std::string(PTXBENCH_SOURCE_DIR) + "/tests/fixtures/ptx/" + name;
  std::ifstream in(path);
  if (!in) throw std::runtime_error("missing fixture " + path);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Whether compile_ptx(ptx, arch) compiles whole-program (ptxas), where
// setmaxnreg survives into the SASS; nvJitLink drops it.
inline bool default_compile_keeps_setmaxnreg() {
  const char* configured = std::getenv("PTXBENCH_COMPILER");
  return !(configured && std::string(configured) == "nvjitlink") && !ptxas_path().empty();
}

}  // namespace ptxbench::test
