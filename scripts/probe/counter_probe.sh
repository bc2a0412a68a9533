#!/usr/bin/env bash
# The hardware-counter probe (tests/baselines/counter_probe.cpp) in one call.
#
# On the build machine:  scripts/probe/counter_probe.sh --package BUILD_DIR
#   copies the probe to .device/probe and compiles there what it runs: the
#   reference solutions, two adversarial fixtures and the probe's own kernels
#   (tests/baselines/counter_probe_kernels.cu), each with its nvdisasm listing.
# On the GPU machine:    scripts/probe/counter_probe.sh [.device/probe]
#   prints INFO, COST, HW and SASS lines (see counter_probe.cpp); logs in $OUT.
set -u
cd "$(dirname "$0")/../.."
if [ "${1:-}" = --package ]; then
  build=${2:?usage: scripts/probe/counter_probe.sh --package BUILD_DIR}
  dir=.device/probe
  rm -rf "$dir" && mkdir -p "$dir/cases"
  probe=$(find "$build" -name ptxbench_counter_probe -type f | head -1)
  strip --strip-debug -o "$dir/ptxbench_counter_probe" "$probe" || exit 1
  PTXAS=${PTXAS:-/usr/local/cuda/bin/ptxas}
  NVCC=${NVCC:-/usr/local/cuda/bin/nvcc}
  NVDISASM=${NVDISASM:-$(command -v nvdisasm || python3 -c 'import nvidia, os; print(next(os.path.join(p, "cu13/bin/nvdisasm") for p in nvidia.__path__))')}
  case_from_ptx() { # label task ptx manifest
    mkdir -p "$dir/cases/$1"
    cp "tasks/$2.json" "$dir/cases/$1/task.json"
    cp "$4" "$dir/cases/$1/manifest.json"
    "$PTXAS" -arch=sm_90a -o "$dir/cases/$1/kernel.cubin" "$3" || exit 1
    "$NVDISASM" -c -ndf "$dir/cases/$1/kernel.cubin" > "$dir/cases/$1/kernel.sass" || exit 1
  }
  for t in gemm_bf16_mma_sync gemm_bf16_wgmma gemm_bf16_wgmma_tma gemm_fp8_e4m3_wgmma_tma attention_fwd_bf16_wgmma \
           attention_fwd_bf16_wgmma_causal attention_bwd_bf16_wgmma; do
    case_from_ptx "solution_$t" "$t" "tasks/solutions/$t/kernel.ptx" "tasks/solutions/$t/manifest.json"
  done
  for c in dummy_wgmma_ffma wgmma_cp_async; do
    task=$(python3 -c "import json; print(json.load(open('tests/fixtures/adversarial/$c/expected.json'))['task'])")
    case_from_ptx "fixture_$c" "$task" "tests/fixtures/adversarial/$c/kernel.ptx" "tests/fixtures/adversarial/$c/manifest.json"
  done
  "$NVCC" -cubin -arch=sm_90a -O3 tests/baselines/counter_probe_kernels.cu -o "$dir/probe_kernels.cubin" || exit 1
  "$NVDISASM" -c -ndf "$dir/probe_kernels.cubin" > "$dir/probe_kernels.sass" || exit 1
  for k in k_ffma k_fmul_fadd k_hfma2 k_hfma2_bf16 k_dfma k_hmma_bf16 k_hmma_f16 k_hmma_tf32 k_imma k_qmma_e4m3 k_dmma; do
    mkdir -p "$dir/cases/$k"
    cp tasks/gemm_bf16_mma_sync.json "$dir/cases/$k/task.json"
    cp "$dir/probe_kernels.cubin" "$dir/cases/$k/kernel.cubin"
    cp "$dir/probe_kernels.sass" "$dir/cases/$k/kernel.sass"
    printf '{"launches":[{"kernel":"%s","grid":[264,1,1],"block":[128,1,1],"shared_bytes":0,"params":[{"buffer":"A"},{"buffer":"B"},{"buffer":"C"},{"size":"M"},{"size":"N"},{"size":"K"}]}]}\n' \
      "$k" > "$dir/cases/$k/manifest.json"
  done
  du -sh "$dir"
  exit 0
fi

dir=${1:-.device/probe}
OUT=${OUT:-/tmp/ptxbench-counter-probe}
mkdir -p "$OUT"
# Everything to $OUT/counter_probe.txt; a short summary on stdout at the end.
exec 3>&1 > "$OUT/counter_probe.txt" 2>&1
BIN=$dir
. scripts/gpu_env.sh
P="$dir/ptxbench_counter_probe"
echo "== environment"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1
ldd "$P" | grep -E "not found|cupti|libcuda" | tr -s ' \t' ' '
echo "== info"
timeout 60 "$P" info 2>&1 | tee "$OUT/info.log"
for c in "$dir"/cases/*/; do
  label=$(basename "$c")
  echo "== $label"
  t0=$(date +%s%N)
  timeout 120 "$P" hw "$c/task.json" "$c/manifest.json" "$c/kernel.cubin" "$label" > "$OUT/$label.hw.log" 2>&1
  echo "hw rc=$? $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  grep -E "^(COST|HW|PROBE)" "$OUT/$label.hw.log"
  launches=$(python3 -c "import json,sys; print(len(json.load(open(sys.argv[1]))['launches']))" "$c/manifest.json")
  for ((l = 0; l < launches; ++l)); do
    t0=$(date +%s%N)
    timeout 120 "$P" sass "$c/task.json" "$c/manifest.json" "$c/kernel.cubin" "$c/kernel.sass" "$l" "$label" \
      > "$OUT/$label.sass$l.log" 2>&1
    echo "sass launch $l rc=$? $(( ($(date +%s%N) - t0) / 1000000 )) ms"
    grep -E "^(COST|SASS|PROBE)" "$OUT/$label.sass$l.log"
    case $label in k_*) continue ;; esac
    timeout 120 "$P" sass "$c/task.json" "$c/manifest.json" "$c/kernel.cubin" "$c/kernel.sass" "$l" "$label" smallest \
      > "$OUT/$label.sass$l.small.log" 2>&1
    echo "sass launch $l at the smallest size rc=$?"
    grep -E "^(SASS|PROBE)" "$OUT/$label.sass$l.small.log"
  done
done
# Two profilers at once: the range profiler in one process while another runs
# a patched SASS pass (the evaluator's counting spares run beside main jobs).
c="$dir/cases/solution_gemm_bf16_wgmma_tma"
if [ -d "$c" ]; then
  echo "== concurrent: hw and sass of solution_gemm_bf16_wgmma_tma at once"
  timeout 120 "$P" hw "$c/task.json" "$c/manifest.json" "$c/kernel.cubin" concurrent > "$OUT/concurrent.hw.log" 2>&1 &
  h=$!
  timeout 120 "$P" sass "$c/task.json" "$c/manifest.json" "$c/kernel.cubin" "$c/kernel.sass" 0 concurrent > "$OUT/concurrent.sass.log" 2>&1 &
  s=$!
  wait $h; echo "hw rc=$?"; wait $s; echo "sass rc=$?"
  grep -E "^(COST|HW|SASS|PROBE)" "$OUT/concurrent.hw.log" "$OUT/concurrent.sass.log"
fi
echo "== done"
exec 1>&3
python3 - "$OUT/counter_probe.txt" <<'PY'
import re, sys
text = open(sys.argv[1]).read()
print("\n".join(l for l in text.splitlines() if l.startswith(("INFO device", "INFO instruction_set", "INFO wide_set", "PROBE"))))
short = {"smsp__inst_executed.sum": "all", "sm__inst_executed_pipe_tensor_op_gmma.sum": "gmma",
         "sm__inst_executed_pipe_tensor_op_hmma.sum": "hmma", "sm__inst_executed_pipe_tensor_op_imma.sum": "imma",
         "sm__inst_executed_pipe_tensor_op_dmma.sum": "dmma", "sm__inst_executed_pipe_fma.sum": "fma",
         "sm__inst_executed_pipe_fp64.sum": "fp64", "sm__inst_executed_pipe_tma.sum": "tma"}
for line in text.splitlines():
    if line.startswith(("== ", "hw rc", "sass launch", "PROBE FAILED")):
        print(line[:200])
    elif line.startswith("HW ") and "#0 " in line:
        parts = line.split()
        vals = dict(p.split("=", 1) for p in parts[3:] if "=" in p)
        print(parts[1], parts[2], " ".join(f"{v}={vals.get(k, '?')}" for k, v in short.items()))
    elif line.startswith("SASS "):
        parts = line.split()
        m = re.search(r"total=(\d+) unmapped=(\d+)", line)
        tensor = sum(int(p.split("=")[1]) for p in parts if re.match(r"[HQIBD]G?MMA", p))
        print(parts[1], parts[2], "sass total=%s unmapped=%s mma=%d" % (m.group(1), m.group(2), tensor) if m else line[:160])
    elif line.startswith("COST") and ("plain_run_ms" in line or "instruction_set_rep" in line or "sass_pass" in line):
        print(line[:200])
PY
echo "full output: $OUT/counter_probe.txt"
