#!/usr/bin/env bash
# The exports as a researcher loads them: the demo run, then `export --out DIR`
# (prompt_completion corrections and preference pairs, also of a `--branch 2` run) read back with Hugging
# Face `datasets.load_dataset`. With PTXBENCH_CI_TRL=1 also TRL's SFT and DPO
# dataset preparation (scripts/check_trl.sh; installs torch, slow).
# Needs the build (./scripts/setup.sh) and network access to PyPI. Measured on the
# 2-core machine (2026-12-03, shared load): 4 min 26 s wall, 199 s of it pip.
# scripts/check_trl.sh: pip from PyPI (CUDA torch, 5.9 GB) 1003 s, the checks 98 s.
set -euo pipefail
cd "$(dirname "$0")/.."
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

start=$SECONDS
python3 -m venv "$work/venv"
"$work/venv/bin/pip" install -q --disable-pip-version-check datasets
echo "python_data: pip install datasets took $((SECONDS - start)) s"

# The demo exits 1 when no trajectory got a candidate without a failed stage; both are results here.
./build/bin/ptxbench run --config configs/demo.json --db "$work/demo.db" --latency-ms 0 --quiet || [ $? -eq 1 ]
./build/bin/ptxbench export --db "$work/demo.db" --kind correction --format prompt_completion --reasoning field \
  --out "$work/correction"
./build/bin/ptxbench export --db "$work/demo.db" --experiment demo --kind preference --out "$work/preference"
# Branching: 2 replies per repair round give preference pairs of round >= 1 (siblings).
./build/bin/ptxbench run --config configs/demo.json --db "$work/demo.db" --name demo-branch --branch 2 \
  --latency-ms 0 --quiet || [ $? -eq 1 ]
./build/bin/ptxbench export --db "$work/demo.db" --experiment demo-branch --kind preference --out "$work/branched"
# The prompts of every task for GRPO, with token counts by a tokenizer trained for the tests.
./build/bin/ptxbench export --kind prompts --out "$work/prompts"
"$work/venv/bin/python" scripts/check_datasets.py "$work/correction" "$work/preference" "$work/branched" \
  --prompts "$work/prompts"
# Token counts of an export against the tokenizers library.
"$work/venv/bin/pip" install -q --disable-pip-version-check tokenizers
./build/bin/ptxbench export --db "$work/demo.db" --experiment demo --kind correction \
  --tokenizer tests/fixtures/tokenizers/llama3.json --out "$work/counted"
"$work/venv/bin/python" scripts/check_token_count.py export "$work/counted" tests/fixtures/tokenizers/llama3.json

if [ "${PTXBENCH_CI_TRL:-0}" = 1 ]; then
  # DPO on the branched export: its round-0 pair and its sibling pairs of round >= 1; GRPO on the
  # prompts, rewarded through an evald on loopback (static stages).
  ./build/bin/ptxbench evald --gpu off --port 0 --port-file "$work/evald.port" --db "$work/evald.db" \
    2> "$work/evald.log" &
  evald_pid=$!
  trap 'kill "$evald_pid" 2>/dev/null || true; rm -rf "$work"' EXIT
  for _ in $(seq 1 100); do
    [ -s "$work/evald.port" ] && break
    kill -0 "$evald_pid" 2>/dev/null || { cat "$work/evald.log"; echo "evald exited before listening"; exit 1; }
    sleep 0.1
  done
  [ -s "$work/evald.port" ] || { cat "$work/evald.log"; echo "evald did not start listening in 10 s"; exit 1; }
  scripts/check_trl.sh "$work/correction" "$work/branched" "$work/prompts" "http://127.0.0.1:$(cat "$work/evald.port")"
fi
