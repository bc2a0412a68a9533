#!/usr/bin/env bash
# Verdict integrity on a GPU in one call, from binaries built elsewhere:
#   1. the integrity fixtures of tests/fixtures/adversarial (huge_scratch,
#      device_malloc, clock_detect, trap_when_counted, slack_keep and the honest
#      ffma_epilogue and split_k_two_launch), each expecting its verdict;
#   2. the reference solutions and correct_mma_sync with the hardware
#      cross-check on (PTXBENCH_HW_CHECK=1): honest work must agree uninstrumented.
# Logs go to $OUT (default /tmp/ptxbench-integrity); one table is printed last.
#
# usage, on the build machine:  scripts/probe/integrity_gpu.sh --package BUILD_DIR
#                               (-> .device/integrity/bin: carry .device/integrity)
#        on the GPU machine:    scripts/probe/integrity_gpu.sh [BIN_DIR]
set -u
cd "$(dirname "$0")/../.."
if [ "${1:-}" = --package ]; then
  build=${2:?usage: scripts/probe/integrity_gpu.sh --package BUILD_DIR}
  mkdir -p .device/integrity/bin
  for b in ptxbench-worker ptxbench_tests_gpu; do
    strip --strip-debug -o ".device/integrity/bin/$b" "$build/bin/$b" || exit 1
  done
  du -sh .device/integrity
  exit 0
fi
BIN=${1:-.device/integrity/bin}
OUT=${OUT:-/tmp/ptxbench-integrity}
mkdir -p "$OUT"
. scripts/gpu_env.sh
rm -f "$OUT"/*.jsonl

step() { # name limit_s env... -- test filter
  local name=$1 limit=$2 filter=$3; shift 3
  local t0=$(date +%s)
  env PTXBENCH_GPU_TEST_LOG="$OUT/$name.jsonl" "$@" timeout --kill-after=5 "$limit" \
    "$BIN/ptxbench_tests_gpu" -tc="$filter" > "$OUT/$name.log" 2>&1
  echo "== $name rc=$? $(( $(date +%s) - t0 )) s: $(grep -E '^\[doctest\] test cases' "$OUT/$name.log")"
}
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1
step integrity 300 "adversarial: integrity*"
step solutions_hw 240 "reference solutions*" PTXBENCH_HW_CHECK=1
step correct_mma_sync_hw 120 "adversarial: correct_mma_sync" PTXBENCH_HW_CHECK=1

python3 - "$OUT" <<'PY'
import json, os, sys
out = sys.argv[1]
print(f'{"step/case":44} {"verdict":12} {"instr":11} headline | hardware')
for name in ("integrity", "solutions_hw", "correct_mma_sync_hw"):
    p = os.path.join(out, name + ".jsonl")
    for line in open(p) if os.path.exists(p) else []:
        r = json.loads(line)
        v = "passed" if r.get("passed") else r.get("verdict")
        instr = r.get("stages", {}).get("instructions", {}).get("status", "-")
        hw = r.get("instructions", {}).get("hardware", "")
        print(f'{name + "/" + r["case"]:44} {v:12} {instr:11} {(r.get("headline") or "")[:110]} | {hw[:160]}')
    log = os.path.join(out, name + ".log")
    if os.path.exists(log):
        for l in open(log):
            if "ERROR" in l or "SKIP" in l or "lacks" in l:
                print("   ", l.rstrip()[:200])
PY
