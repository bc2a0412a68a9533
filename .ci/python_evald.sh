#!/usr/bin/env bash
# The TRL reward function (examples/reward_trl.py) against a live evald on
# loopback, CPU only (static stages), with nothing but the Python standard
# library: the reference solution's reply must outscore a ptxas error, which
# must outscore garbage. Needs build/bin/ptxbench (scripts/setup.sh builds it).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=${1:-build/bin/ptxbench}
tmp=$(mktemp -d)
"$bin" evald --gpu off --port 0 --port-file "$tmp/port" --db "$tmp/evald.db" 2>"$tmp/evald.log" &
evald_pid=$!
trap 'kill "$evald_pid" 2>/dev/null || true; wait "$evald_pid" 2>/dev/null || true; rm -rf "$tmp"' EXIT
for _ in $(seq 1 100); do
  [ -s "$tmp/port" ] && break
  kill -0 "$evald_pid" 2>/dev/null || { cat "$tmp/evald.log"; echo "evald exited before listening"; exit 1; }
  sleep 0.1
done
[ -s "$tmp/port" ] || { cat "$tmp/evald.log"; echo "evald did not start listening"; exit 1; }
"$bin" export --kind prompts --out "$tmp/prompts.jsonl" > /dev/null
python3 examples/test_reward_trl.py "http://127.0.0.1:$(cat "$tmp/port")" "$tmp/prompts.jsonl"
