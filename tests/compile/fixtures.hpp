#pragma once
// Reading the PTX fixtures of tests/fixtures/ptx.
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "evaluator/common/files.hpp"
#include "evaluator/compile/compile.hpp"

namespace ptxbench::test {

inline std::string read_ptx_fixture(const std::string& name) {
  const std::string path = std::string(PTXBENCH_SOURCE_DIR) + "/tests/fixtures/ptx/" + name;
  return read_text_file(path, "PTX fixture");
}

// Whether compile_ptx(ptx, arch) compiles whole-program (ptxas), where
// setmaxnreg survives into the SASS; nvJitLink drops it.
inline bool default_compile_keeps_setmaxnreg() {
  const char* configured = std::getenv("PTXBENCH_COMPILER");
  return !(configured && std::string(configured) == "nvjitlink") && !ptxas_path().empty();
}

}  // namespace ptxbench::test
