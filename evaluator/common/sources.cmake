# evaluator/common's sources, in one list: the library (evaluator/common/CMakeLists.txt)
# and the libFuzzer build (tests/fuzz/fuzz.cmake) both read it.
set(PTXBENCH_EVALUATOR_COMMON_SOURCES files.cpp host.cpp json_path.cpp)
