# The evaluator API's sources, in one list: the library (evaluator/api/CMakeLists.txt)
# and the libFuzzer build (tests/fuzz/fuzz.cmake) both read it, so a file added
# here reaches both builds (evaluator/common/sources.cmake likewise).
set(PTXBENCH_EVALUATOR_API_SOURCES
  candidate.cpp evaluation.cpp expression.cpp index_inputs.cpp manifest.cpp manifest_bounds.cpp task.cpp
  verdict.cpp hidden_sizes.cpp size_rules.cpp solutions.cpp task_check.cpp task_family.cpp)
