#!/bin/bash
# The references and baselines of every task variant on a GPU machine, in one
# call: the GPU reference test and the baselines' variant test (each against
# the naive fp64 formulas), then the variants probe (part 2: the catalogue's
# timed sizes, set up and timed).
#   on the build machine:  tests/baselines/variants_probe.sh --package BUILD_DIR
#                          (copies the binaries, stripped, and the fixtures to .device/refs: carry .device/refs)
#   on the GPU machine:    bash .device/refs/variants_probe.sh [OUT_DIR]   (from the repository root)
# Finds cuDNN and cuBLASLt wherever the machine keeps them; the probe's log
# (and cuDNN's error log) go to OUT_DIR (default $OUT, else .).
set -u
if [ "${1:-}" = --package ]; then
  build=${2:?usage: variants_probe.sh --package BUILD_DIR}
  here="$(cd "$(dirname "$0")" && pwd)"
  mkdir -p .device/refs
  strip --strip-debug -o .device/refs/ptxbench_variants_probe "$build/bin/ptxbench_variants_probe" || exit 1
  for t in ptxbench_tests_gpu_reference ptxbench_tests_gpu_libs; do
    f=$(find "$build" -name $t -type f | head -1)
    [ -n "$f" ] && strip --strip-debug -o .device/refs/$t "$f"
  done
  cp "$here/../fixtures/reference_tasks.json" "$here/variants_probe.sh" .device/refs/
  du -sh .device/refs
  exit 0
fi
bin="$(cd "$(dirname "$0")" && pwd)"
out="${1:-${OUT:-.}}"
mkdir -p "$out"
add_dir() { case ":${LD_LIBRARY_PATH:-}:" in *":$1:"*) ;; *) export LD_LIBRARY_PATH="$1${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}";; esac; }
for lib in libcublasLt.so.13 libcublas.so.13 libcudnn.so.9; do
  first=$(find /usr/local/cuda/ /usr/lib /usr/local/lib /opt -name "$lib" 2>/dev/null | sort | head -1)
  echo "$lib: ${first:-not found}"
  [ -n "$first" ] && add_dir "$(dirname "$first")"
done
for d in $(python3 -c 'import nvidia, os; [print(os.path.join(p, n, "lib")) for p in nvidia.__path__ for n in sorted(os.listdir(p))]' 2>/dev/null); do
  [ -d "$d" ] && add_dir "$d"
done
nvidia-smi -L 2>&1 | head -2
ldd "$bin/ptxbench_variants_probe" | grep -E "not found|cublas|cudnn|libcuda"
export CUDNN_LOGERR_DBG=1 CUDNN_LOGDEST_DBG="$out/cudnn_errors.log"
export PTXBENCH_SOURCE_DIR="$(cd "$bin/../.." && pwd)"  # the fixtures of the tree this was carried in
for t in "ptxbench_tests_gpu_reference" "ptxbench_tests_gpu_libs -tc=every*variant*"; do
  set -- $t
  [ -x "$bin/$1" ] || continue
  echo "== $t"
  timeout 240 "$bin/$1" "${@:2}" > "$out/$1.log" 2>&1
  echo "$1 exit $?"
  grep -E "ERROR|FAILED|CHECK|test cases|assertions" "$out/$1.log" | head -60
done
echo "== probe"
timeout 300 "$bin/ptxbench_variants_probe" "$bin/reference_tasks.json" 2>&1 | tee "$out/variants_probe.log"
echo "probe exit ${PIPESTATUS[0]}"
[ -f "$out/cudnn_errors.log" ] && tail -c 200000 "$out/cudnn_errors.log" > "$out/cudnn_errors_tail.log" && rm "$out/cudnn_errors.log"
true
