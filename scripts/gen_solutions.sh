#!/usr/bin/env bash
# Regenerates the PTX of every reference solution: tasks/solutions/<task id>/kernel.cu
# is compiled with nvcc for the architecture its task names ("arch" in
# tasks/<task id>.json, e.g. sm_90a or sm_100a) into kernel.ptx beside it, and the
# PTX is then assembled with ptxas for the same architecture to prove it compiles.
# A solution may add nvcc options in an optional file nvcc_flags beside kernel.cu.
#
# usage: scripts/gen_solutions.sh [--check] [task id ...]   (default: every solution)
#   --check  writes nothing; fails if a committed kernel.ptx differs from what
#            kernel.cu generates (a stale PTX).
# Exits non-zero if any solution fails; the others are still processed.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
nvcc="${NVCC:-nvcc}"
ptxas="${PTXAS:-ptxas}"

check=0
if [ "${1:-}" = "--check" ]; then
  check=1
  shift
fi
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

if [ $# -gt 0 ]; then
  ids=("$@")
else
  ids=()
  for src in "$root"/tasks/solutions/*/kernel.cu; do
    [ -e "$src" ] || continue
    ids+=("$(basename "$(dirname "$src")")")
  done
fi

failed=0
for id in "${ids[@]}"; do
  dir="$root/tasks/solutions/$id"
  task="$root/tasks/$id.json"
  if [ ! -f "$dir/kernel.cu" ] || [ ! -f "$task" ]; then
    echo "FAIL $id: needs $dir/kernel.cu and $task" >&2
    failed=1
    continue
  fi
  arch="$(grep -o '"arch"[[:space:]]*:[[:space:]]*"sm_[0-9]*[a-z]*"' "$task" | head -n1 | sed 's/.*"\(sm_[^"]*\)"/\1/')"
  if [ -z "$arch" ]; then
    echo "FAIL $id: no \"arch\" in $task" >&2
    failed=1
    continue
  fi
  extra=()
  if [ -f "$dir/nvcc_flags" ]; then read -r -a extra < "$dir/nvcc_flags"; fi
  num="${arch#sm_}"
  out="$dir/kernel.ptx"
  [ $check -eq 1 ] && out="$scratch/$id.ptx"
  if ! "$nvcc" -gencode="arch=compute_${num},code=sm_${num}" -ptx "${extra[@]}" "$dir/kernel.cu" -o "$out"; then
    echo "FAIL $id: nvcc" >&2
    failed=1
    continue
  fi
  if [ $check -eq 1 ] && ! cmp -s "$out" "$dir/kernel.ptx"; then
    echo "FAIL $id: kernel.ptx is stale (regenerate with scripts/gen_solutions.sh $id)" >&2
    failed=1
    continue
  fi
  if ! "$ptxas" -arch="$arch" "$out" -o /dev/null; then
    echo "FAIL $id: ptxas rejects the generated PTX" >&2
    failed=1
    continue
  fi
  echo "ok   $id ($arch)"
done
exit $failed
