#!/usr/bin/env bash
# Judges every reference solution with `ptxbench eval` (every stage, at every public and
# hidden size of its task) and prints one line per task, then a summary. Meant for the
# GPU machine, in one call; with --gpu off it runs the format, compile and static
# instruction checks anywhere.
#
# A solution is a folder tasks/solutions/<id>/ holding manifest.json; its PTX is
# tasks/solutions/<id>/kernel.ptx (checked in) or build/solutions/<id>/kernel.ptx
# (generated from solution.json by scripts/gen_solutions.sh, which this script runs
# first: nvcc is on the GPU machine too, and fresh PTX is not rebuilt).
#
# usage: scripts/check_solutions.sh [--bin DIR] [--tasks-dir DIR] [--out DIR] [--gpu auto|off]
#                                   [--no-timing] [--no-gen] [--limit SECONDS] [id or prefix ...]
#   --bin        folder of the ptxbench executables (default .device/gpu/bin when it exists
#                (scripts/gpu_suite.sh --package), else build/bin)
#   --tasks-dir  task files (default tasks)
#   --out        where each task's result JSON and log go (default /tmp/ptxbench-solutions,
#                or $OUT/solutions on the device machine)
#   --limit      seconds allowed per task (default 240)
#   ids          exact task ids or prefixes (gemm_, attention_fwd_); default every solution
# Prints: task, verdict (PASS; STATIC: sm_100a task passing format, compile and the static
# check on a Hopper machine; FAIL <stage>; ERROR <stage> for an evaluator fault), speedup
# against the threshold, candidate and baseline ms at the timed size, seconds taken, and
# the failure's headline. Exits 1 if any task neither passed nor passed statically.
set -uo pipefail
cd "$(dirname "$0")/.."
root=$PWD

bin="" tasks_dir=tasks out="${OUT:+$OUT/solutions}" gpu=auto timing=1 gen=1 limit=240
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin="${2:?}"; shift ;;
    --tasks-dir) tasks_dir="${2:?}"; shift ;;
    --out) out="${2:?}"; shift ;;
    --gpu) gpu="${2:?}"; shift ;;
    --no-timing) timing=0 ;;
    --no-gen) gen=0 ;;
    --limit) limit="${2:?}"; shift ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    -*) echo "check_solutions: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
  shift
done
[ -n "$out" ] || out=/tmp/ptxbench-solutions
if [ -z "$bin" ]; then
  if [ -x .device/gpu/bin/ptxbench ]; then bin=.device/gpu/bin; else bin=build/bin; fi
fi
[ -x "$bin/ptxbench" ] || { echo "check_solutions: no ptxbench in $bin (build it, or give --bin)" >&2; exit 2; }
mkdir -p "$out"

BIN=$bin
. scripts/gpu_env.sh

# One line for a task from its result JSON ($out/<id>.json), or the summary of them all.
report() { # line <id> | summary <seconds> <id...>
  python3 - "$out" "$@" <<'PY'
import json, os, sys
out, what = sys.argv[1], sys.argv[2]

def classify(r):
    st = {k: v.get("status") for k, v in r.get("stages", {}).items()}
    if r.get("passed"):
        return "PASS"
    if r.get("verdict") == "error":
        return "ERROR " + r.get("error_stage", "?")
    failed = [k for k, v in st.items() if v == "failed"]
    if failed:
        return "FAIL " + r.get("verdict", failed[0])
    static_ok = st.get("format") == "passed" and st.get("compile") == "passed" and \
        r.get("instructions", {}).get("static_passed") and st.get("runtime") == "not_run"
    return "STATIC" if static_ok else "INCOMPLETE"

def load(id):
    try:
        return json.load(open(os.path.join(out, id + ".json")))
    except Exception:
        return None

def line(id):
    r = load(id)
    secs = int(open(os.path.join(out, id + ".ms")).read()) / 1000 if os.path.exists(os.path.join(out, id + ".ms")) else 0
    if r is None:
        tail = open(os.path.join(out, id + ".log")).read().strip().splitlines()[-3:] if os.path.exists(os.path.join(out, id + ".log")) else []
        return f"{id:34} {'NO RESULT':18} {'-':18} {'-':25} {secs:6.1f}s  {' | '.join(tail)[:160]}", "NO RESULT"
    verdict = classify(r)
    p = r.get("performance") or {}
    sp = r.get("speedup")
    speed = f"{sp:.3f} (>= {p.get('threshold', 0):.2f})" if sp is not None else "-"
    times = f"{p.get('candidate_ms', 0):.4f} / {p.get('baseline_ms', 0):.4f} ms" if p else "-"
    head = "" if verdict in ("PASS", "STATIC") else r.get("headline", "")[:240]
    # A later stage's own trouble (a baseline that did not time, a failed
    # measurement) is kept beside a verdict taken earlier.
    perf = r.get("stages", {}).get("performance", {})
    if verdict != "PASS" and perf.get("status") not in (None, "passed", "not_run") and "performance" not in verdict:
        head += f" | performance {perf.get('status')}: {perf.get('reason', '')[:160]}"
    return f"{id:34} {verdict:18} {speed:18} {times:25} {secs:6.1f}s  {head}", verdict

if what == "line":
    print(line(sys.argv[3])[0], flush=True)
else:
    secs, ids = int(sys.argv[3]), sys.argv[4:]
    counts = {}
    for id in ids:
        v = line(id)[1].split()[0]
        counts[v] = counts.get(v, 0) + 1
    print(f"\n{len(ids)} solutions in {secs} s: " + ", ".join(f"{n} {v}" for v, n in sorted(counts.items())))
    print(f"results: {out}/<id>.json, logs: {out}/<id>.log")
    sys.exit(0 if set(counts) <= {"PASS", "STATIC"} else 1)
PY
}

t_start=$(date +%s)
ids=()
for m in tasks/solutions/*/manifest.json; do
  id="$(basename "$(dirname "$m")")"
  if [ $# -gt 0 ]; then
    keep=0
    for want in "$@"; do [ "$id" = "$want" ] || [ "${id#"$want"}" != "$id" ] && keep=1; done
    [ $keep -eq 1 ] || continue
  fi
  ids+=("$id")
done
[ ${#ids[@]} -gt 0 ] || { echo "check_solutions: no solution matches: $*" >&2; exit 2; }

if [ $gen -eq 1 ]; then
  scripts/gen_solutions.sh --setup -j "$(nproc 2> /dev/null || echo 2)" "${ids[@]}" > "$out/gen.log" 2>&1 ||
    { echo "gen_solutions reported failures:"; grep FAIL "$out/gen.log"; }
fi

printf "%-34s %-18s %-18s %-25s %7s  %s\n" task verdict "speedup (thresh.)" "candidate / baseline" time headline
judge() { # id gpu_mode: writes $out/<id>.{json,log,ms}
  local id=$1 ptx=tasks/solutions/$1/kernel.ptx t0
  [ -f "$ptx" ] || ptx=build/solutions/$id/kernel.ptx
  t0=$(date +%s%N)
  if [ ! -f "$ptx" ]; then
    echo "no PTX for $id (checked in or generated)" > "$out/$id.log"
    : > "$out/$id.json"
  else
    local args=(--gpu "$2" --json)
    [ $timing -eq 1 ] || args+=(--no-timing)
    timeout --kill-after=10 "$limit" "$bin/ptxbench" eval --task "$id" --tasks-dir "$tasks_dir" --ptx "$ptx" \
      --manifest "tasks/solutions/$id/manifest.json" "${args[@]}" > "$out/$id.json" 2> "$out/$id.log"
    echo "rc=$?" >> "$out/$id.log"
  fi
  echo "$(( ($(date +%s%N) - t0) / 1000000 ))" > "$out/$id.ms"
}

# Solutions for another architecture than the GPU's family (sm_100a) get only the
# format, compile and static checks: they need no GPU and run beside the others.
gpu_ids=() static_ids=()
for id in "${ids[@]}"; do
  ptx=tasks/solutions/$id/kernel.ptx
  [ -f "$ptx" ] || ptx=build/solutions/$id/kernel.ptx
  if [ -f "$ptx" ] && grep -qE '^\.target[[:space:]]+sm_1[0-9][0-9]' "$ptx"; then static_ids+=("$id"); else gpu_ids+=("$id"); fi
done
(for id in "${static_ids[@]}"; do judge "$id" off; done) &
static_pid=$!
for id in "${gpu_ids[@]}"; do
  judge "$id" "$gpu"
  report line "$id" || true
done
wait $static_pid
for id in "${static_ids[@]}"; do report line "$id" || true; done

report summary "$(( $(date +%s) - t_start ))" "${ids[@]}"
