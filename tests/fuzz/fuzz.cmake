# libFuzzer build of the parsers that read model output and user files. Built
# on its own (PTXBENCH_FUZZ=ON, clang): the parser sources are compiled again
# with -fsanitize=fuzzer-no-link,address,undefined, without CUDA, libcurl or
# SQLite. Every tests/fuzz/fuzz_<name>.cpp becomes a target fuzz_<name>.
set(CMAKE_CXX_STANDARD 20)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "PTXBENCH_FUZZ needs clang (CC=clang CXX=clang++): libFuzzer is part of clang")
endif()
find_package(nlohmann_json 3.10 REQUIRED)
find_program(PTXBENCH_CCACHE ccache)
if(PTXBENCH_CCACHE AND NOT CMAKE_CXX_COMPILER_LAUNCHER)
  set(CMAKE_CXX_COMPILER_LAUNCHER ${PTXBENCH_CCACHE})
endif()
set(PTXBENCH_EVALUATOR_VERSION "fuzz")
configure_file(${PROJECT_SOURCE_DIR}/evaluator/api/version.hpp.in
               ${PROJECT_BINARY_DIR}/generated/ptxbench/version.hpp @ONLY)

set(fuzz_sanitizers -fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer -g -O1)
include(${PROJECT_SOURCE_DIR}/evaluator/common/sources.cmake)
include(${PROJECT_SOURCE_DIR}/evaluator/api/sources.cmake)
set(fuzz_parser_sources ${PTXBENCH_EVALUATOR_API_SOURCES})
list(TRANSFORM fuzz_parser_sources PREPEND evaluator/api/)
set(fuzz_common_sources ${PTXBENCH_EVALUATOR_COMMON_SOURCES})
list(TRANSFORM fuzz_common_sources PREPEND evaluator/common/)
list(APPEND fuzz_parser_sources ${fuzz_common_sources})
list(APPEND fuzz_parser_sources
  evaluator/compile/ptx_entries.cpp evaluator/compile/ptx_text.cpp evaluator/compile/ptxas_log.cpp
  evaluator/compile/sass_parse.cpp evaluator/compile/sass_dataflow.cpp evaluator/compile/ptx_system_calls.cpp
  agent/llm/openai_format.cpp agent/llm/anthropic_format.cpp agent/llm/wire_common.cpp agent/llm/provider_config.cpp
  agent/llm/sse.cpp agent/llm/wire_stream.cpp agent/llm/think_tags.cpp
  agent/prompt/prompt.cpp agent/prompt/format.cpp agent/prompt/format_profile.cpp agent/loop/experiment_config.cpp
  agent/store/ptx_fingerprint.cpp)
list(TRANSFORM fuzz_parser_sources PREPEND ${PROJECT_SOURCE_DIR}/)
add_library(ptxbench_fuzz_parsers STATIC ${fuzz_parser_sources})
target_include_directories(ptxbench_fuzz_parsers PUBLIC ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/generated)
target_compile_options(ptxbench_fuzz_parsers PUBLIC ${fuzz_sanitizers} -fsanitize=fuzzer-no-link)
target_link_options(ptxbench_fuzz_parsers PUBLIC -fsanitize=address,undefined)
target_link_libraries(ptxbench_fuzz_parsers PUBLIC nlohmann_json::nlohmann_json)

file(GLOB fuzz_targets CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/fuzz_*.cpp)
foreach(src ${fuzz_targets})
  get_filename_component(name ${src} NAME_WE)
  add_executable(${name} ${src})
  target_compile_options(${name} PRIVATE -fsanitize=fuzzer)
  target_link_options(${name} PRIVATE -fsanitize=fuzzer)
  target_compile_definitions(${name} PRIVATE PTXBENCH_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  target_link_libraries(${name} PRIVATE ptxbench_fuzz_parsers)
  set_target_properties(${name} PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
endforeach()
