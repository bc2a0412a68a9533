#!/bin/sh
# scripts/gpu_suite.sh runs where a GPU should be: a benchmark that finds none
# (exit 77, a skip) is a failed step, so the suite exits 1 and names it, and the
# packed logs hold the step. Run on a machine without a GPU (CI).
# usage: suite_counts_skips.sh SOURCE_DIR BIN_DIR
set -u
src=$1 bin=$2
if nvidia-smi -L > /dev/null 2>&1; then echo "a GPU is here: this case is for machines without one"; exit 77; fi
for b in ptxbench_bench_gpu_busy ptxbench_bench_eval_latency; do
  [ -x "$bin/$b" ] || { echo "$bin/$b not built"; exit 1; }
done
out=$(mktemp -d) || exit 1
trap 'rm -rf "$out"' EXIT
PTXBENCH_SUITE_ONLY="gpu_busy eval_latency" PTXBENCH_SUITE_BUSY_LIMIT=60 PTXBENCH_SUITE_BENCH_LIMIT=60 \
  PTXBENCH_SUITE_NCU=0 PTXBENCH_SUITE_PACK="$out/pack.tgz" OUT="$out/suite" \
  bash "$src/scripts/gpu_suite.sh" "$bin" > "$out/log" 2>&1
rc=$?
cat "$out/log"
[ "$rc" -eq 1 ] || { echo "expected exit 1, got $rc"; exit 1; }
grep -q "GPU suite FAILED: gpu_busy (rc=77)" "$out/log" || { echo "gpu_busy's skip not named"; exit 1; }
grep -q "GPU suite FAILED: eval_latency (rc=77)" "$out/log" || { echo "eval_latency's skip not named"; exit 1; }
tar tzf "$out/pack.tgz" | grep -q "suite/gpu_busy.log" || { echo "the pack lacks the step's log"; exit 1; }
echo "ok: the suite failed and named both skips"
