#!/usr/bin/env bash
# CI: libFuzzer targets of the parsers (tests/fuzz/fuzz_*.cpp), each run for
# FUZZ_SECONDS (default 30) from corpora seeded by tests/fuzz/seed_corpora.py.
# A crash, leak, sanitizer report or timeout fails the step and leaves the
# input in build-fuzz/artifacts/. docs/fuzzing.md has the long runs.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${FUZZ_SECONDS:-30}"
# clang and its libFuzzer/sanitizer runtimes: a tool of this step, not of the product.
if ! command -v clang++ >/dev/null || ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq && $sudo apt-get install -y -qq clang libclang-rt-dev >/dev/null
fi
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DPTXBENCH_FUZZ=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build-fuzz -j2
rm -rf build-fuzz/corpus && python3 tests/fuzz/seed_corpora.py build-fuzz/corpus
mkdir -p build-fuzz/artifacts
status=0
for bin in build-fuzz/bin/fuzz_*; do
  name=$(basename "$bin")
  mkdir -p "build-fuzz/corpus/$name"
  # The readers of model and server text get inputs as large as the nesting
  # attacks they must survive (a million levels in 1 MiB).
  max_len=65536
  case "$name" in fuzz_wire|fuzz_sse|fuzz_fingerprint) max_len=1048576 ;; esac
  echo "== $name: ${seconds} s, inputs up to $max_len bytes"
  if ! "$bin" -max_total_time="$seconds" -max_len="$max_len" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="build-fuzz/artifacts/$name-" "build-fuzz/corpus/$name" 2>"build-fuzz/$name.log"; then
    echo "FAILED: $name (log: build-fuzz/$name.log)"; tail -40 "build-fuzz/$name.log"; status=1
  fi
  grep -E "^stat::number_of_executed_units|^#[0-9]+.*DONE" "build-fuzz/$name.log" | tail -2 || true
done
exit $status
