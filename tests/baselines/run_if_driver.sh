#!/bin/sh
# Runs a GPU test executable, or exits 77 (skipped) with the reason when the
# NVIDIA driver library it links cannot be found on this machine.
exe="$1"
shift
if ldd "$exe" 2>/dev/null | grep -q 'libcuda.so.1 => not found'; then
  echo "SKIPPED: $(basename "$exe") needs the NVIDIA driver (libcuda.so.1), which this machine lacks"
  exit 77
fi
exec "$exe" "$@"
