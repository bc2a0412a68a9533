#!/usr/bin/env bash
# Submits a sharded experiment: array.sbatch with N tasks, then merge.sbatch
# once the whole array has ended (afterany: a shard that ran and found no
# passing trajectory is a result, and merge.sbatch checks each shard's status
# itself). Usage:
#   scripts/slurm/submit.sh N NAME [CONFIG] [-- more run options]
# e.g. scripts/slurm/submit.sh 16 gemm-sweep configs/openai.json -- --samples 8
# SBATCH_ARRAY_ARGS and SBATCH_MERGE_ARGS add sbatch options to each job
# (e.g. SBATCH_ARRAY_ARGS="--partition=gpu --cpus-per-task=4").
set -euo pipefail
if (($# < 2)); then
  echo "usage: $0 N NAME [CONFIG] [-- run options]" >&2
  exit 2
fi
n=$1 name=$2 config=${3:-configs/demo.json}
if ! [[ $n =~ ^[1-9][0-9]*$ ]]; then
  echo "$0: N must be a positive number of shards, not '$n'" >&2
  exit 2
fi
shift $(($# >= 3 ? 3 : 2))
[[ ${1:-} == -- ]] && shift
here=$(dirname "$0")
mkdir -p runs/slurm
# shellcheck disable=SC2086  # the SBATCH_*_ARGS are lists of options
array=$(sbatch --parsable --array=0-$((n - 1)) ${SBATCH_ARRAY_ARGS:-} \
  --export=ALL,RUN_NAME="$name",RUN_CONFIG="$config",RUN_SHARDS="$n",RUN_ARGS="$*" "$here/array.sbatch")
array=${array%%;*}
# shellcheck disable=SC2086
merge=$(sbatch --parsable --dependency=afterany:"$array" ${SBATCH_MERGE_ARGS:-} \
  --export=ALL,RUN_NAME="$name",RUN_SHARDS="$n" "$here/merge.sbatch")
merge=${merge%%;*}
echo "array job $array ($n shards), merge job $merge; merged database: runs/slurm/$name/merged.db"
