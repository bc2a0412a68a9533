#!/bin/bash
# Runs the GPU-library tests and the probe on a GPU machine, from a folder that
# holds ptxbench_tests_gpu_libs and ptxbench_gpu_libs_probe. Finds cuDNN,
# CUPTI and cuBLASLt wherever the machine keeps them. Logs go to $1.
set -u
echo "without LD_LIBRARY_PATH: $(env -u LD_LIBRARY_PATH ldd "$(dirname "$0")/ptxbench_gpu_libs_probe" | grep -E 'not found|cublas|cupti|libcuda' | tr -s ' \t\n' ' ')"
bin="$(cd "$(dirname "$0")" && pwd)"
out="${1:-.}"
mkdir -p "$out"
add_dir() { case ":${LD_LIBRARY_PATH:-}:" in *":$1:"*) ;; *) export LD_LIBRARY_PATH="$1${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}";; esac; }
for lib in libcublasLt.so.13 libcupti.so.13 libcudnn.so.9; do
  found=$(find /usr/local/cuda/ /usr/local/cuda/extras /usr/lib /usr/local/lib /opt -name "$lib" 2>/dev/null | sort | head -5)
  echo "$lib: $(echo $found | tr '\n' ' ')"
  first=$(echo "$found" | head -1)
  [ -n "$first" ] && add_dir "$(dirname "$first")"
done
export PATH="/usr/local/cuda/bin:$PATH"
export NVDISASM="$(command -v nvdisasm || echo nvdisasm)"
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH NVDISASM=$NVDISASM"
nvidia-smi -L 2>&1 | head -2
ldd "$bin/ptxbench_gpu_libs_probe" | grep -E "not found|cuda|cupti|cublas" 
export CUDNN_LOGLEVEL_DBG=2 CUDNN_LOGERR_DBG=1 CUDNN_LOGWARN_DBG=1 CUDNN_LOGDEST_DBG=/tmp/cudnn.log
echo "== tests"
"$bin/ptxbench_tests_gpu_libs" 2>&1 | tee "$out/tests.log" | tail -40
echo "tests exit ${PIPESTATUS[0]}"
echo "== probe"
"$bin/ptxbench_gpu_libs_probe" "$out" 2>&1 | tee "$out/probe.log" | tail -60
echo "probe exit ${PIPESTATUS[0]}"
[ -f /tmp/cudnn.log ] && tail -c 3000000 /tmp/cudnn.log > "$out/cudnn.log"
[ -f "$out/loop.cubin" ] && "$NVDISASM" -c "$out/loop.cubin" > "$out/loop.sass" 2>&1
true
