#!/usr/bin/env bash
# The whole GPU test suite and the GPU benchmarks in one call, on a machine
# with a GPU, from binaries built elsewhere (nothing is built here):
#   tests/gpu (adversarial suite + reference solutions), bench/eval_latency,
#   bench/gpu_busy (64 trajectories against a 2 s model: throughput and GPU
#   busy fraction), bench/evald_batch (evald's added latency and batches with
#   the GPU stages live), optionally ncu's gpu__time_duration for timing fidelity.
# Full logs go to $OUT (default ./gpu-suite-out); a short table is printed last.
# Every step runs even when one fails; the exit status is 1 when any step
# failed (a non-zero exit, a skip included: this suite runs where a GPU is),
# and the failed steps are named after the table.
#
# usage, on the build machine:   scripts/gpu_suite.sh --package BUILD_DIR
#          (copies the binaries, stripped, to .device/gpu/bin: carry .device/gpu)
#        on the GPU machine:     scripts/gpu_suite.sh [BIN_DIR]   (default .device/gpu/bin)
#   PTXBENCH_SUITE_NCU=0   skip the ncu comparison
#   PTXBENCH_SUITE_BUSY_ARGS  arguments of the gpu_busy benchmark (default: its own)
#   PTXBENCH_SUITE_BUSY_PROFILE=1  gpu_busy once more with --profile (feedback "profile":
#                             every candidate that reaches the performance stage profiled), beside the run without
#   PTXBENCH_SUITE_BUSY_HW=1  gpu_busy once more with the hardware cross-check on (PTXBENCH_HW_CHECK=1): its cost
#   PTXBENCH_SUITE_EVALD_ARGS arguments of the evald benchmark (default: --n 10 --batch 16 --rounds 2 --width 4)
#   PTXBENCH_SUITE_{TEST,BENCH,NCU}_LIMIT   seconds allowed per step (90, 60, 40)
#   PTXBENCH_SUITE_ONLY="gpu_tests gpu_busy ..."  run only the steps named (for a call short of device time)
#   PTXBENCH_SUITE_PACK=FILE  also packs every log of $OUT into FILE (.tar.gz), after every step and at the end, for a
#                             machine that returns few files
set -u
cd "$(dirname "$0")/.."
if [ "${1:-}" = --package ]; then
  build=${2:?usage: scripts/gpu_suite.sh --package BUILD_DIR}
  mkdir -p .device/gpu/bin
  for b in ptxbench ptxbench-worker ptxbench_tests_gpu ptxbench_bench_eval_latency ptxbench_bench_gpu_busy ptxbench_bench_evald; do
    strip --strip-debug -o ".device/gpu/bin/$b" "$build/bin/$b" || exit 1
  done
  libs_test=$(find "$build" -name ptxbench_tests_gpu_libs -type f | head -1)
  [ -n "$libs_test" ] && strip --strip-debug -o .device/gpu/bin/ptxbench_tests_gpu_libs "$libs_test"
  for b in ptxbench_tests_gpu_reference ptxbench_profile_probe ptxbench_variants_probe ptxbench_clock_probe; do
    [ -f "$build/bin/$b" ] && strip --strip-debug -o ".device/gpu/bin/$b" "$build/bin/$b"
  done
  # The main executable's Debian-only libraries that the GPU machine lacks.
  mkdir -p .device/gpu/lib
  for lib in $(ldd "$build/bin/ptxbench" | awk '/cpp-httplib|brotli/ {print $3}'); do cp -L "$lib" .device/gpu/lib/; done
  du -sh .device/gpu
  exit 0
fi
BIN=${1:-${PTXBENCH_BIN:-.device/gpu/bin}}
OUT=${OUT:-/tmp/ptxbench-gpu-suite}
mkdir -p "$OUT"
. scripts/gpu_env.sh

{
  date -u +"%Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv 2>&1
  for b in "$BIN"/*; do echo "== ldd $b"; ldd "$b" | grep -E "not found|cuda|cublas|cupti|nvJit" ; done
  command -v nvdisasm
} > "$OUT/environment.txt" 2>&1

failed_steps=()
run() { # name timeout_s command...
  local name=$1 limit=$2; shift 2
  if [ -n "${PTXBENCH_SUITE_ONLY:-}" ] && [[ " $PTXBENCH_SUITE_ONLY " != *" $name "* ]]; then
    echo "$name skipped (PTXBENCH_SUITE_ONLY)" >> "$OUT/steps.txt"
    return 0
  fi
  local t0=$(date +%s%N)
  timeout --kill-after=5 "$limit" "$@" > "$OUT/$name.log" 2>&1
  local rc=$?
  printf "%s rc=%d %d ms\n" "$name" "$rc" "$(( ($(date +%s%N) - t0) / 1000000 ))" | tee -a "$OUT/steps.txt"
  [ "$rc" -ne 0 ] && failed_steps+=("$name (rc=$rc)")
  # Workers exit when their supervisor is gone (protocol::exit_when_orphaned); one still here a
  # second after its step would keep the GPU from the next steps: named, counted as a failure, killed.
  local left
  left=$(pgrep -f -c '/ptxbench-worker( |$)' 2> /dev/null || true)
  if [ "${left:-0}" -gt 0 ]; then sleep 1; left=$(pgrep -f -c '/ptxbench-worker( |$)' 2> /dev/null || true); fi
  if [ "${left:-0}" -gt 0 ]; then
    echo "$name left $left worker process(es) behind: killed" | tee -a "$OUT/steps.txt"
    failed_steps+=("$name (left $left workers)")
    pkill -9 -f '/ptxbench-worker( |$)' 2> /dev/null || true
  fi
  # Packed after every step too, so a call cut short by an outer timeout still returns what ran.
  [ -n "${PTXBENCH_SUITE_PACK:-}" ] && tar czf "$PTXBENCH_SUITE_PACK" -C "$(dirname "$OUT")" "$(basename "$OUT")" 2> /dev/null
  return 0
}

: > "$OUT/steps.txt"
rm -f "$OUT/gpu_tests.jsonl"
PTXBENCH_GPU_TEST_LOG=$OUT/gpu_tests.jsonl run gpu_tests "${PTXBENCH_SUITE_TEST_LIMIT:-240}" \
  "$BIN/ptxbench_tests_gpu" --duration=true
run eval_latency "${PTXBENCH_SUITE_BENCH_LIMIT:-60}" \
  "$BIN/ptxbench_bench_eval_latency" --json "$OUT/eval_latency.json" --passes 1

if [ -x "$BIN/ptxbench_bench_gpu_busy" ]; then
  # shellcheck disable=SC2086
  run gpu_busy "${PTXBENCH_SUITE_BUSY_LIMIT:-240}" "$BIN/ptxbench_bench_gpu_busy" --json "$OUT/gpu_busy.json" \
    ${PTXBENCH_SUITE_BUSY_ARGS:-}
  if [ "${PTXBENCH_SUITE_BUSY_PROFILE:-0}" = 1 ]; then
    # shellcheck disable=SC2086
    run gpu_busy_profile "${PTXBENCH_SUITE_BUSY_LIMIT:-240}" "$BIN/ptxbench_bench_gpu_busy" \
      --json "$OUT/gpu_busy_profile.json" --profile ${PTXBENCH_SUITE_BUSY_ARGS:-}
  fi
  if [ "${PTXBENCH_SUITE_BUSY_HW:-0}" = 1 ]; then
    # shellcheck disable=SC2086
    PTXBENCH_HW_CHECK=1 run gpu_busy_hw "${PTXBENCH_SUITE_BUSY_LIMIT:-240}" "$BIN/ptxbench_bench_gpu_busy" \
      --json "$OUT/gpu_busy_hw.json" ${PTXBENCH_SUITE_BUSY_ARGS:-}
  fi
fi
if [ -x "$BIN/ptxbench_bench_evald" ]; then
  # evald's cost over in-process evaluation with the GPU stages live, and batches through it.
  # shellcheck disable=SC2086
  run evald "${PTXBENCH_SUITE_BENCH_LIMIT:-60}" "$BIN/ptxbench_bench_evald" --gpu auto \
    ${PTXBENCH_SUITE_EVALD_ARGS:---n 10 --batch 16 --rounds 2 --width 4}
fi
if [ -x "$BIN/ptxbench_tests_gpu_libs" ]; then
  # The flushed-segments and two-kernels cases need a process's first pass: run
  # alone, and skipped in the whole run (where they would record nothing, as documented).
  run gpu_libs "${PTXBENCH_SUITE_LIBS_LIMIT:-90}" "$BIN/ptxbench_tests_gpu_libs" -tce="one pass flushed*,one pass without*"
  run gpu_libs_segments 30 "$BIN/ptxbench_tests_gpu_libs" -tc="one pass flushed*" -s
  run gpu_libs_two_kernels 30 "$BIN/ptxbench_tests_gpu_libs" -tc="one pass without*" -s
fi
if [ -x "$BIN/ptxbench_tests_gpu_reference" ]; then
  # The fp32 reference of every task variant against the naive fp64 formulas
  # (the baselines of every variant run in gpu_libs: "every variant's library baseline").
  run gpu_reference "${PTXBENCH_SUITE_REFERENCE_LIMIT:-120}" "$BIN/ptxbench_tests_gpu_reference"
fi
if [ -x "$BIN/ptxbench" ]; then
  # The demo experiment with the GPU stages live, and its report.
  rm -f "$OUT/demo_gpu.db"
  run demo "${PTXBENCH_SUITE_DEMO_LIMIT:-120}" "$BIN/ptxbench" run --config configs/demo.json --db "$OUT/demo_gpu.db" --name demo-gpu
  run demo_report 30 "$BIN/ptxbench" report --db "$OUT/demo_gpu.db"
fi

if [ "${PTXBENCH_SUITE_NCU:-1}" = 1 ] && command -v ncu > /dev/null; then
  # ncu's gpu__time_duration of the mma.sync fixture at 4096^3 and of the
  # cuBLAS kernel timed next to it, in one evaluation (cache flushed by ncu
  # between replays, clocks left alone; CUPTI counting is unavailable under ncu).
  run ncu "${PTXBENCH_SUITE_NCU_LIMIT:-40}" ncu --clock-control none --target-processes all \
    --metrics gpu__time_duration.sum -k regex:"gemm|nvjet|xmma|cutlass" --launch-count 400 --csv \
    "$BIN/ptxbench_bench_eval_latency" --ncu
fi

python3 - "$OUT" <<'PY'
import json, os, re, sys
out = sys.argv[1]
env = open(os.path.join(out, "environment.txt")).read().splitlines()
gpu = next((l.strip() for l in env[1:] if l.startswith("NVIDIA")), "no GPU found by nvidia-smi")
print("\n== GPU suite (" + gpu + ")")
rows = []
p = os.path.join(out, "gpu_tests.jsonl")
if os.path.exists(p):
    for line in open(p):
        r = json.loads(line)
        st = r.get("stages", {})
        v = "passed" if r.get("passed") else r.get("verdict")
        rows.append((r["case"], v, st.get("correctness", {}).get("status", "-"), st.get("instructions", {}).get("status", "-"),
                     f'{r.get("total_ms", 0):.0f}', (r.get("headline") or "")[:80]))
print(f'{"case":30} {"verdict":12} {"correct":10} {"instr":10} {"ms":>6}  headline')
for row in rows:
    print(f"{row[0]:30} {row[1]:12} {row[2]:10} {row[3]:10} {row[4]:>6}  {row[5]}")
log = open(os.path.join(out, "gpu_tests.log")).read() if os.path.exists(os.path.join(out, "gpu_tests.log")) else ""
m = re.findall(r"\[doctest\] (test cases|assertions):.*", log)
for line in re.findall(r"\[doctest\] (?:test cases|assertions):.*", log):
    print(line)
if "SKIP" in log:
    print([l for l in log.splitlines() if "SKIP" in l][0])
b = os.path.join(out, "eval_latency.log")
if os.path.exists(b):
    for line in open(b):
        if line.startswith(("evaluator", "latency", "  solution", "  adversarial", "throughput", "timing fidelity")) and "suite:" not in line:
            print(line.rstrip())
for name in ("gpu_busy", "gpu_busy_profile", "gpu_busy_hw"):
    g = os.path.join(out, name + ".log")
    if os.path.exists(g):
        print("\n== " + name)
        for line in open(g):
            # ... and what each verdict other than passed said ("    2x task: verdict: headline").
            if line.startswith(("gpu_busy", "  evaluations", "  verdicts", "  hardware cross-check", "  busy window", "  GPU busy", "  NVML",
                                "  main-worker", "  profiles")) or re.match(r"    \d+x |    \.\.\. and ", line):
                print(line.rstrip())
n = os.path.join(out, "ncu.log")
if os.path.exists(n):
    import csv, io, statistics
    text = open(n).read()
    start = text.find('"ID"')
    recs = list(csv.DictReader(io.StringIO(text[start:]))) if start >= 0 else []
    seq = [(r.get("Kernel Name", ""), r.get("Grid Size", ""), float(r.get("Metric Value", "0").replace(",", "")))
           for r in recs if r.get("Metric Name") == "gpu__time_duration.sum"]
    unit = next((r.get("Metric Unit") for r in recs if r.get("Metric Name") == "gpu__time_duration.sum"), "")
    scale = {"ns": 1e-6, "usecond": 1e-3, "us": 1e-3, "msecond": 1.0, "ms": 1.0, "nsecond": 1e-6}.get(unit, 1e-6)
    cand = [d * scale for k, g, d in seq if k.startswith("gemm_mma") and g.replace(" ", "") == "(64,64,1)"]
    base = [seq[i + 1][2] * scale for i, (k, g, d) in enumerate(seq[:-1])
            if k.startswith("gemm_mma") and g.replace(" ", "") == "(64,64,1)" and not seq[i + 1][0].startswith("gemm_mma")]
    ours = {}
    if os.path.exists(p):
        for line in open(p):
            r = json.loads(line)
            if r["case"] == "correct_mma_sync" and r.get("performance"):
                ours = r["performance"]
    def cmp(name, vals, key):
        if not vals:
            print(f"ncu {name}: no kernels captured"); return
        m = statistics.median(vals); o = ours.get(key, 0)
        diff = f"{100 * (o - m) / m:+.2f}%" if o else "n/a"
        print(f"ncu {name}: gpu__time_duration median {m:.4f} ms over {len(vals)} launches; ours {o:.4f} ms ({diff})")
    cmp("candidate gemm_mma 4096^3", cand, "candidate_ms")
    cmp("baseline (kernel after each candidate sample)", base, "baseline_ms")
sols = []
if os.path.exists(p):
    for line in open(p):
        r = json.loads(line)
        perf = r.get("performance")
        if r["case"].startswith("solution") and perf:
            sols.append((r["case"], perf))
if sols:
    print(f'\n{"solution":44} {"TFLOP/s":>8} {"baseline":>9} {"speedup":>8} {"% peak":>7}  baseline')
    for case, pf in sols:
        print(f'{case:44} {pf.get("candidate_tflops", 0):8.1f} {pf.get("baseline_tflops", 0):9.1f} '
              f'{pf.get("speedup", 0):8.3f} {pf.get("pct_of_peak", 0):7.1f}  {pf.get("baseline_name", "")[:40]}')
# Error figures of honest implementations (reference solutions, and the
# baseline library on the timing seed): what the normalised bounds are set from.
cal = []
if os.path.exists(p):
    for line in open(p):
        r = json.loads(line)
        if not r["case"].startswith("solution"):
            continue
        worst = {}
        for o in r.get("correctness", {}).get("outputs", []):
            w = worst.setdefault(o["tensor"], [0.0, 0.0])
            w[0] = max(w[0], o.get("rel_l2_error", 0)); w[1] = max(w[1], o.get("max_err_to_scale", 0))
        perf = r.get("performance") or {}
        for t, (l2, sc) in worst.items():
            cal.append((r["case"], t, l2, sc, perf.get("baseline_rel_l2", {}).get(t), perf.get("baseline_max_err_to_scale", {}).get(t)))
if cal:
    print(f'\n{"calibration":44} {"out":4} {"relL2":>9} {"err/scale":>9} {"lib relL2":>9} {"lib e/s":>9}')
    for c in cal:
        f = lambda v: f"{v:9.2e}" if isinstance(v, (int, float)) else f'{"-":>9}'
        print(f"{c[0]:44} {c[1]:4} {f(c[2])} {f(c[3])} {f(c[4])} {f(c[5])}")
for name in ("evald", "gpu_reference", "gpu_libs", "gpu_libs_segments", "gpu_libs_two_kernels", "demo"):
    f = os.path.join(out, name + ".log")
    if os.path.exists(f):
        tail = [l for l in open(f).read().splitlines() if l.strip()][-12:]
        print(f"\n== {name} (last lines)")
        print("\n".join(tail))
print(open(os.path.join(out, "steps.txt")).read().strip())
PY
[ $? -ne 0 ] && failed_steps+=("summary table (python)")
if [ -n "${PTXBENCH_SUITE_PACK:-}" ]; then
  tar czf "$PTXBENCH_SUITE_PACK" -C "$(dirname "$OUT")" "$(basename "$OUT")" && echo "logs packed: $PTXBENCH_SUITE_PACK"
fi
if [ ${#failed_steps[@]} -gt 0 ]; then
  printf "GPU suite FAILED: %s\n" "${failed_steps[@]}"
  exit 1
fi
echo "GPU suite: every step exited 0"
