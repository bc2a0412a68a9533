#!/usr/bin/env bash
# Builds the PTX of the reference solutions (docs/task-suite.md, "Reference solutions").
#
# A solution is a folder tasks/solutions/<task id>/ of one of two kinds:
#  - checked in: kernel.cu + kernel.ptx + manifest.json. kernel.cu is compiled with nvcc
#    for the task's arch (tasks/<id>.json's "arch", else the .target of the committed
#    kernel.ptx) into kernel.ptx beside it; nvcc_flags beside it adds options.
#  - generated: solution.json + manifest.json. solution.json names a parametrised source
#    in tasks/solutions/templates/ and its macros:
#      {"template": "gemm_wgmma_tma.cu", "arch": "sm_90a", "defines": {"GEMM_NN": 1},
#       "nvcc_flags": []}        (arch defaults to sm_90a; defines and nvcc_flags optional)
#    Its PTX is written to OUT/<id>/kernel.ptx (never committed) with a copy of the manifest
#    and a stamp: the sha256 of everything the PTX depends on (the template and the files
#    it includes, the macros, flags, arch, nvcc's version). A fresh stamp skips the compile.
# Every PTX is then assembled with ptxas for its arch, to prove it compiles.
# OUT/<id>/ ends up a complete solution folder (kernel.ptx + manifest.json) for every
# solution, the checked-in ones copied, so consumers can read one folder.
#
# usage: scripts/gen_solutions.sh [--check | --setup] [--force] [--out DIR] [-j N] [id ...]
#   (default: every solution; OUT defaults to build/solutions)
#   (no mode) regenerates checked-in kernel.ptx from kernel.cu, and generated PTX that is stale
#   --setup   the build's step: generated PTX that is stale, checked-in solutions only copied
#   --check   writes nothing; fails on a checked-in kernel.ptx that differs from what kernel.cu
#             generates, and on generated PTX that is missing or stale in OUT
#   --force   ignores fresh stamps
# Exits non-zero if any solution fails; the others are still processed.
set -uo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
nvcc="${NVCC:-nvcc}"
ptxas="${PTXAS:-ptxas}"
sol="$root/tasks/solutions"

mode=build force=0 out="$root/build/solutions" jobs=1
while [ $# -gt 0 ]; do
  case "$1" in
    --check) mode=check ;;
    --setup) mode=setup ;;
    --force) force=1 ;;
    --out) out="${2:?--out needs a folder}"; shift ;;
    -j) jobs="${2:?-j needs a count}"; shift ;;
    -j*) jobs="${1#-j}" ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    -*) echo "gen_solutions: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
  shift
done
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT

if [ $# -gt 0 ]; then
  ids=("$@")
else
  ids=()
  for d in "$sol"/*/; do
    id="$(basename "$d")"
    [ -f "$d/kernel.cu" ] || [ -f "$d/solution.json" ] && ids+=("$id")
  done
fi

# Prints the solution.json of $1 as lines: arch, template, then one nvcc argument a line
# (-D<name>=<value>, then the extra flags). Refuses unknown keys and values that are not
# plain identifiers or numbers (they become command-line arguments).
read_spec() {
  python3 - "$1" <<'PY'
import json, re, sys
path = sys.argv[1]
try:
    spec = json.load(open(path))
except Exception as e:
    sys.exit(f"{path}: not JSON: {e}")
if not isinstance(spec, dict):
    sys.exit(f"{path}: expected an object")
unknown = set(spec) - {"template", "arch", "defines", "nvcc_flags", "notes"}
if unknown:
    sys.exit(f"{path}: unknown key(s) {sorted(unknown)} (known: template, arch, defines, nvcc_flags, notes)")
template = spec.get("template")
if not isinstance(template, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+\.cu", template):
    sys.exit(f"{path}: $.template must name a .cu file in tasks/solutions/templates/")
arch = spec.get("arch", "sm_90a")
if not isinstance(arch, str) or not re.fullmatch(r"sm_[0-9]+[af]?", arch):
    sys.exit(f"{path}: $.arch must look like sm_90a")
print(arch)
print(template)
defines = spec.get("defines", {})
if not isinstance(defines, dict):
    sys.exit(f"{path}: $.defines must be an object")
for name in sorted(defines):
    value = defines[name]
    if not re.fullmatch(r"[A-Z][A-Z0-9_]*", name):
        sys.exit(f"{path}: $.defines.{name}: macro names are upper-case identifiers")
    if isinstance(value, bool) or not isinstance(value, (int, str)) or not re.fullmatch(r"-?[A-Za-z0-9_]+", str(value)):
        sys.exit(f"{path}: $.defines.{name}: expected an integer or an identifier")
    print(f"-D{name}={value}")
flags = spec.get("nvcc_flags", [])
if not isinstance(flags, list) or not all(isinstance(f, str) and re.fullmatch(r"-[A-Za-z0-9_=.,+-]+", f) for f in flags):
    sys.exit(f"{path}: $.nvcc_flags must be a list of options such as -lineinfo")
for f in flags:
    print(f)
PY
}

# The files a template compiles from: itself and every quoted #include, followed
# recursively (the toolkit's <...> headers are covered by nvcc's version).
sources_of() { # template path -> paths relative to tasks/solutions
  python3 - "$1" "$sol" <<'PY'
import os, re, sys
seen, todo = [], [os.path.realpath(sys.argv[1])]
while todo:
    f = todo.pop()
    if f in seen or not os.path.isfile(f):
        continue
    seen.append(f)
    for inc in re.findall(r'^\s*#\s*include\s+"([^"]+)"', open(f, errors="replace").read(), re.M):
        todo.append(os.path.realpath(os.path.join(os.path.dirname(f), inc)))
print("\n".join(sorted(os.path.relpath(f, os.path.realpath(sys.argv[2])) for f in seen)))
PY
}

# The stamp of a generated solution: what its PTX depends on.
stamp_of() { # spec_lines_file template_path
  {
    echo "gen_solutions stamp 2"
    cat "$1"
    "$nvcc" --version
    sources_of "$2" | while read -r f; do
      echo "== $f"
      cat "$sol/$f"
    done
  } | sha256sum | cut -d' ' -f1
}

gen_one() { # id -> prints one "ok"/"FAIL" line; returns 1 on failure
  local id=$1 dir="$sol/$1" dest="$out/$1"
  local log="$scratch/$id.log"
  if [ -f "$dir/solution.json" ]; then
    [ -f "$dir/manifest.json" ] || { echo "FAIL $id: no manifest.json beside solution.json"; return 1; }
    local spec="$scratch/$id.spec"
    read_spec "$dir/solution.json" > "$spec" 2> "$log" || { echo "FAIL $id: $(cat "$log")"; return 1; }
    local arch template stamp
    arch="$(sed -n 1p "$spec")"
    template="$(sed -n 2p "$spec")"
    local args=()
    mapfile -t args < <(sed -n '3,$p' "$spec")
    [ -f "$sol/templates/$template" ] || { echo "FAIL $id: no template $template in $sol/templates"; return 1; }
    stamp="$(stamp_of "$spec" "$sol/templates/$template")"
    if [ "$mode" = check ]; then
      if [ ! -f "$dest/kernel.ptx" ] || [ "$(cat "$dest/stamp" 2> /dev/null)" != "$stamp" ]; then
        echo "FAIL $id: $dest/kernel.ptx is missing or stale (run scripts/gen_solutions.sh $id)"
        return 1
      fi
      "$ptxas" -arch="$arch" "$dest/kernel.ptx" -o /dev/null 2> "$log" || {
        echo "FAIL $id: ptxas rejects $dest/kernel.ptx: $(head -c 2000 "$log")"; return 1; }
      echo "ok   $id ($arch, fresh)"
      return 0
    fi
    mkdir -p "$dest"
    cp "$dir/manifest.json" "$dest/manifest.json"
    if [ $force -eq 0 ] && [ -f "$dest/kernel.ptx" ] && [ "$(cat "$dest/stamp" 2> /dev/null)" = "$stamp" ]; then
      touch "$dest/kernel.ptx"  # for make: the output is up to date
      echo "ok   $id ($arch, fresh)"
      return 0
    fi
    local num="${arch#sm_}"
    rm -f "$dest/stamp"
    "$nvcc" -gencode="arch=compute_${num},code=sm_${num}" -ptx "${args[@]}" "$sol/templates/$template" \
      -o "$scratch/$id.ptx" > "$log" 2>&1 || { echo "FAIL $id: nvcc: $(head -c 4000 "$log")"; return 1; }
    "$ptxas" -arch="$arch" "$scratch/$id.ptx" -o /dev/null 2> "$log" || {
      echo "FAIL $id: ptxas rejects the generated PTX: $(head -c 2000 "$log")"; return 1; }
    mv "$scratch/$id.ptx" "$dest/kernel.ptx"
    echo "$stamp" > "$dest/stamp"
    echo "ok   $id ($arch, generated from $template)"
    return 0
  fi

  [ -f "$dir/kernel.cu" ] || { echo "FAIL $id: $dir has neither kernel.cu nor solution.json"; return 1; }
  local arch=""
  [ -f "$root/tasks/$id.json" ] &&
    arch="$(grep -o '"arch"[[:space:]]*:[[:space:]]*"sm_[0-9]*[a-z]*"' "$root/tasks/$id.json" | head -n1 | sed 's/.*"\(sm_[^"]*\)"/\1/')"
  [ -z "$arch" ] && [ -f "$dir/kernel.ptx" ] && arch="$(sed -n 's/^\.target[[:space:]]*\(sm_[0-9]*[a-z]*\).*/\1/p' "$dir/kernel.ptx" | head -n1)"
  [ -n "$arch" ] || { echo "FAIL $id: no arch (tasks/$id.json or the .target of kernel.ptx)"; return 1; }
  if [ "$mode" != setup ]; then
    local extra=() num="${arch#sm_}" ptx="$dir/kernel.ptx"
    [ -f "$dir/nvcc_flags" ] && read -r -a extra < "$dir/nvcc_flags"
    [ "$mode" = check ] && ptx="$scratch/$id.ptx"
    "$nvcc" -gencode="arch=compute_${num},code=sm_${num}" -ptx "${extra[@]}" "$dir/kernel.cu" -o "$ptx" > "$log" 2>&1 ||
      { echo "FAIL $id: nvcc: $(head -c 4000 "$log")"; return 1; }
    if [ "$mode" = check ] && ! cmp -s "$ptx" "$dir/kernel.ptx"; then
      echo "FAIL $id: kernel.ptx is stale (regenerate with scripts/gen_solutions.sh $id)"
      return 1
    fi
  fi
  "$ptxas" -arch="$arch" "$dir/kernel.ptx" -o /dev/null 2> "$log" || {
    echo "FAIL $id: ptxas rejects kernel.ptx: $(head -c 2000 "$log")"; return 1; }
  if [ "$mode" != check ]; then
    mkdir -p "$dest"
    cp "$dir/kernel.ptx" "$dir/manifest.json" "$dest/"
  fi
  echo "ok   $id ($arch, checked in)"
}

failed=0
running=0
for id in "${ids[@]}"; do
  if [ "$jobs" -le 1 ]; then
    gen_one "$id" || failed=1
    continue
  fi
  (gen_one "$id" > "$scratch/$id.result"; echo $? > "$scratch/$id.rc") &
  running=$((running + 1))
  if [ $running -ge "$jobs" ]; then
    wait -n
    running=$((running - 1))
  fi
done
wait
if [ "$jobs" -gt 1 ]; then
  for id in "${ids[@]}"; do
    cat "$scratch/$id.result" 2> /dev/null
    [ "$(cat "$scratch/$id.rc" 2> /dev/null)" = 0 ] || failed=1
  done
fi
exit $failed
