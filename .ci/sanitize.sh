#!/usr/bin/env bash
# CI: the unit tests of the parser-heavy folders and of the worker pool (its
# supervisor's threads, with fake workers) built with ASan + UBSan
# (build-asan/, no GPU worker) and run (none of them holds a gpu-labelled case). Any sanitizer report
# fails the executable that triggered it (halt_on_error, UBSan not recoverable).
# SANITIZE_TARGETS overrides the test executables built (cost: docs/cpu-benchmarks.md).
set -euo pipefail
cd "$(dirname "$0")/.."
targets="${SANITIZE_TARGETS:-ptxbench_tests_evaluator_api ptxbench_tests_compile ptxbench_tests_llm ptxbench_tests_pool}"
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPTXBENCH_BUILD_GPU=OFF \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
# shellcheck disable=SC2086
cmake --build build-asan -j2 --target $targets
export ASAN_OPTIONS="halt_on_error=1:detect_leaks=1:strict_string_checks=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
export LSAN_OPTIONS="suppressions=$PWD/.ci/lsan.supp"
# Each test executable runs whole (doctest): they hold only unit cases, GPU
# cases live in executables of their own that are not built here.
status=0
for t in $targets; do
  exe=$(find build-asan -type f -name "$t" -perm -u+x | head -1)
  echo "== $t"
  options=$ASAN_OPTIONS
  # The pool's fake worker (built with ASan too) kills itself with SIGSEGV on
  # purpose and its tests expect the signal; ASan's handler would turn it into an exit.
  [ "$t" = ptxbench_tests_pool ] && options="$options:handle_segv=0"
  ASAN_OPTIONS=$options "$exe" --no-intro --minimal || status=1
done
exit $status
