# Sourced by the GPU probes (integrity_gpu.sh, profile_gpu.sh) on the GPU machine,
# with BIN set to the folder of the packaged binaries: the source tree and the
# worker for the tests, the toolkit's libraries, any from NVIDIA's Python wheels
# (cuDNN, CUPTI) and the package's own (scripts/gpu_suite.sh --package), and the
# toolkit's tools on PATH.
export PTXBENCH_SOURCE_DIR=$PWD PTXBENCH_WORKER=$PWD/$BIN/ptxbench-worker
gpu_env_libs=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64
for d in $(python3 -c 'import nvidia, os; [print(os.path.join(p, n, "lib")) for p in nvidia.__path__ for n in sorted(os.listdir(p))]' 2>/dev/null); do
  [ -d "$d" ] && gpu_env_libs=$gpu_env_libs:$d
done
[ -d "$PWD/${BIN%/bin}/lib" ] && gpu_env_libs=$gpu_env_libs:$PWD/${BIN%/bin}/lib
export LD_LIBRARY_PATH=$gpu_env_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$PATH:/usr/local/cuda/bin
