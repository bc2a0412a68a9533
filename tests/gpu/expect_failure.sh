#!/bin/sh
# usage: expect_failure.sh FAKE_DRIVER_DIR TEST_EXE CASE
# Runs one GPU test case on what looks like a GPU machine whose GPU the
# evaluator cannot use (tests/gpu/fake_driver.cpp first on the library path):
# passes only when the case fails (exit 1) saying so; a skip (77) or a pass is
# the defect this guards against.
dir=$1 exe=$2 case=$3
out=$(LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$exe" -tc="$case" 2>&1)
rc=$?
echo "$out"
echo "exit $rc"
[ "$rc" -eq 1 ] && echo "$out" | grep -q "a GPU is present"
