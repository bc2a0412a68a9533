#!/usr/bin/env bash
# Installs what ptxbench needs from Debian's packages (and nvdisasm from PyPI,
# for SASS checks on machines without a GPU), then configures and builds into
# build/. Safe to run again. Needs root (or sudo) for apt-get.
# The CUDA 13.0 toolkit is expected at /usr/local/cuda (nvJitLink, cuBLASLt,
# cuDNN, CUPTI); set CUDA_HOME to use another location.
set -euo pipefail
cd "$(dirname "$0")/.."

SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO="sudo"; fi

packages=(cmake g++ make pkg-config libcurl4-openssl-dev nlohmann-json3-dev libcpp-httplib-dev
          libsqlite3-dev sqlite3 doctest-dev chromium libdtl-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
if [ ! -f "$CUDA_HOME/include/nvJitLink.h" ]; then
  echo "setup: the CUDA 13 toolkit was not found at $CUDA_HOME (set CUDA_HOME)" >&2
  exit 1
fi

# nvdisasm lets the static SASS check run without a GPU; the toolkit here may lack it.
if ! command -v nvdisasm >/dev/null && [ ! -x "$CUDA_HOME/bin/nvdisasm" ]; then
  if ! python3 -c "import importlib.util,sys; sys.exit(0 if importlib.util.find_spec('nvidia') else 1)" 2>/dev/null ||
     [ -z "$(python3 - <<'PY' 2>/dev/null
import glob, nvidia, os
print(*[p for d in nvidia.__path__ for p in glob.glob(os.path.join(d, '*', 'bin', 'nvdisasm'))])
PY
)" ]; then
    echo "setup: installing nvdisasm from PyPI (nvidia-cuda-nvdisasm)"
    python3 -m pip install -q --disable-pip-version-check nvidia-cuda-nvdisasm || echo "setup: nvdisasm unavailable; SASS checks will say so" >&2
  fi
fi

export PATH="$CUDA_HOME/bin:$PATH"
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCUDAToolkit_ROOT="$CUDA_HOME" >/dev/null
cmake --build build -j"$(nproc)"
echo "setup: built build/bin/ptxbench"
