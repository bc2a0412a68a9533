#!/bin/sh
# Runs a GPU test executable, or exits 77 (skipped) with the reason when the
# NVIDIA driver library it links cannot be found on a machine without a GPU
# device node. With a device node (/dev/nvidiactl) a missing driver library is
# a broken GPU machine: exit 1.
exe="$1"
shift
if ldd "$exe" 2>/dev/null | grep -q 'libcuda.so.1 => not found'; then
  if [ -e /dev/nvidiactl ] || [ -e /dev/nvidia0 ]; then
    echo "FAILED: $(basename "$exe"): this machine has an NVIDIA device node but libcuda.so.1 cannot be found"
    exit 1
  fi
  echo "SKIPPED: $(basename "$exe") needs the NVIDIA driver (libcuda.so.1), which this machine lacks"
  exit 77
fi
exec "$exe" "$@"
