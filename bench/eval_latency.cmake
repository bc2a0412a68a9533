# eval_latency: per-stage latency of full evaluations on the GPU, candidates
# per minute over the suite, and the spread of repeated timings.
if(TARGET ptxbench::pool)
  add_executable(ptxbench_bench_eval_latency ${CMAKE_CURRENT_LIST_DIR}/eval_latency.cpp)
  target_link_libraries(ptxbench_bench_eval_latency PRIVATE ptxbench::pool ptxbench::warnings)
  target_compile_definitions(ptxbench_bench_eval_latency PRIVATE PTXBENCH_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  set_target_properties(ptxbench_bench_eval_latency PROPERTIES RUNTIME_OUTPUT_DIRECTORY ${PROJECT_BINARY_DIR}/bin)
endif()
