# Sourced by every script that runs on the GPU machine (gpu_suite.sh,
# check_solutions.sh, probe/*.sh), from the repository root, with BIN set to the
# folder of the packaged binaries (relative or absolute): the source tree and
# the worker for the tests, the toolkit's libraries, any from NVIDIA's Python
# wheels (cuDNN, CUPTI) and the package's own (scripts/gpu_suite.sh --package),
# and the toolkit's tools on PATH.
case "$BIN" in /*) gpu_env_bin=$BIN ;; *) gpu_env_bin=$PWD/$BIN ;; esac
export PTXBENCH_SOURCE_DIR=$PWD PTXBENCH_WORKER=$gpu_env_bin/ptxbench-worker
gpu_env_libs=/usr/local/cuda/lib64:/usr/local/cuda/extras/CUPTI/lib64
for d in $(python3 -c 'import nvidia, os; [print(os.path.join(p, n, "lib")) for p in nvidia.__path__ for n in sorted(os.listdir(p))]' 2>/dev/null); do
  [ -d "$d" ] && gpu_env_libs=$gpu_env_libs:$d
done
[ -d "${gpu_env_bin%/bin}/lib" ] && gpu_env_libs=$gpu_env_libs:${gpu_env_bin%/bin}/lib
export LD_LIBRARY_PATH=$gpu_env_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PATH=$PATH:/usr/local/cuda/bin
