#!/usr/bin/env bash
# Proves the templates on a real Slurm (scripts/slurm/local_cluster.sh start
# makes a one-node one here): submits a weak experiment with submit.sh, 4
# shards of the demo with one round and one sample, so every shard's `run`
# exits 1 (no trajectory passed) and two shards are empty, then waits for the
# merge job and checks what Slurm recorded: every array task COMPLETED with
# exit 0, the merge COMPLETED, and the merged database holds each trajectory once.
#   scripts/slurm/prove_on_slurm.sh [TEMPLATES_DIR]   # from the repository root
# TEMPLATES_DIR (default scripts/slurm) runs another copy of the templates,
# e.g. an older revision's, with the same checks. Prints "slurm proof: OK" and
# exits 0, or names what failed and exits 1. Needs build/bin/ptxbench and sqlite3.
set -euo pipefail
templates=${1:-scripts/slurm}
bin=${PTXBENCH_BIN:-build/bin/ptxbench}
[[ -x $bin ]] || { echo "no $bin: build first" >&2; exit 2; }
sinfo > /dev/null || { echo "no Slurm controller answers (scripts/slurm/local_cluster.sh start)" >&2; exit 2; }
name=slurm-proof-$(date -u +%Y%m%dT%H%M%S)
dir=runs/slurm/$name
echo "slurm proof: $(sinfo --version), templates $templates, experiment $name"
out=$("$templates/submit.sh" 4 "$name" configs/demo.json -- --gpu off --samples 1 --rounds 1)
echo "$out"
array=$(sed -n 's/^array job \([0-9]*\).*/\1/p' <<< "$out")
merge=$(sed -n 's/.*merge job \([0-9]*\).*/\1/p' <<< "$out")
state() { scontrol show job "$1" 2> /dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n1; }
# The array first (up to 10 minutes), then up to 60 s for the merge to leave the queue.
for _ in $(seq 600); do
  [[ -z $(squeue -h -j "$array" 2> /dev/null) ]] && break
  sleep 1
done
for _ in $(seq 60); do
  [[ -z $(squeue -h -j "$merge" 2> /dev/null) ]] && break
  sleep 1
done
failures=()
echo "array tasks (scontrol show job):"
for ((i = 0; i < 4; ++i)); do
  s=$(state "${array}_$i" JobState) rc=$(state "${array}_$i" ExitCode)
  echo "  ${array}_$i: $s exit $rc; status file: $(cat "$dir/shard-$i.status" 2> /dev/null || echo none)"
  [[ $s == COMPLETED && $rc == 0:0 ]] || failures+=("array task $i: $s $rc")
done
s=$(state "$merge" JobState) rc=$(state "$merge" ExitCode) reason=$(state "$merge" Reason)
echo "merge job $merge: $s exit $rc (reason $reason)"
if [[ $s == PENDING ]]; then
  scancel "$merge"
  failures+=("the merge job never ran: $reason")
elif [[ $s != COMPLETED || $rc != 0:0 ]]; then
  failures+=("merge job: $s $rc")
fi
if [[ -f runs/slurm/ptxbench-merge-$merge.out ]]; then
  echo "merge job output:"
  sed 's/^/  /' "runs/slurm/ptxbench-merge-$merge.out" | head -n 12
fi
if [[ -f $dir/merged.db ]]; then
  rows=$(sqlite3 "$dir/merged.db" "SELECT count(*), count(DISTINCT task_id || '/' || sample) FROM trajectories")
  echo "merged database: $dir/merged.db, trajectories (rows, distinct task/sample): $rows"
  [[ $rows == "2|2" ]] || failures+=("merged trajectories $rows, expected 2|2")
else
  failures+=("no merged database $dir/merged.db")
fi
if ((${#failures[@]} > 0)); then
  printf 'slurm proof: FAILED: %s\n' "${failures[@]}"
  exit 1
fi
echo "slurm proof: OK"
