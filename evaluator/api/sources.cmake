# The evaluator API's sources, in one list: the library (evaluator/api/CMakeLists.txt)
# and the libFuzzer build (tests/fuzz/fuzz.cmake) both read it, so a file added
# here reaches both builds.
set(PTXBENCH_EVALUATOR_API_SOURCES
  candidate.cpp evaluation.cpp expression.cpp files.cpp index_inputs.cpp json_path.cpp manifest.cpp task.cpp)
