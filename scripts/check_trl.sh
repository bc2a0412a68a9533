#!/usr/bin/env bash
# TRL's SFT and DPO dataset preparation on `ptxbench export --out DIR` output,
# and one training step each on a tiny randomly initialised model with a
# tokenizer built on the spot (nothing is downloaded from a model hub).
# Heavy: installs torch, transformers and trl into a fresh venv (from PyPI;
# PTXBENCH_TORCH_INDEX=https://download.pytorch.org/whl/cpu takes the much
# smaller CPU build where that index is reachable). PTXBENCH_TRL_VENV reuses a venv.
# With a prompts export and an evald address, also one GRPO step rewarded by
# examples/reward_trl.py.
# usage: scripts/check_trl.sh CORRECTION_DIR PREFERENCE_DIR [PROMPTS_DIR EVALD_URL]
set -euo pipefail
[ $# -eq 2 ] || [ $# -eq 4 ] || { echo "usage: $0 CORRECTION_DIR PREFERENCE_DIR [PROMPTS_DIR EVALD_URL]" >&2; exit 2; }
here="$(cd "$(dirname "$0")" && pwd)"
venv="${PTXBENCH_TRL_VENV:-$(mktemp -d)/venv}"
start=$SECONDS
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  if [ -n "${PTXBENCH_TORCH_INDEX:-}" ]; then
    "$venv/bin/pip" install -q --disable-pip-version-check torch --index-url "$PTXBENCH_TORCH_INDEX"
  fi
  "$venv/bin/pip" install -q --disable-pip-version-check trl datasets
fi
echo "check_trl: environment ready in $((SECONDS - start)) s"
"$venv/bin/python" "$here/check_trl.py" "$@"
