#!/usr/bin/env bash
# Submits a sharded experiment: array.sbatch with N tasks, then merge.sbatch
# once every shard succeeded (afterok). Usage:
#   scripts/slurm/submit.sh N NAME [CONFIG] [-- more run options]
# e.g. scripts/slurm/submit.sh 16 gemm-sweep configs/openai.json -- --samples 8
set -euo pipefail
if (($# < 2)); then
  echo "usage: $0 N NAME [CONFIG] [-- run options]" >&2
  exit 2
fi
n=$1 name=$2 config=${3:-configs/demo.json}
shift $(($# >= 3 ? 3 : 2))
[[ ${1:-} == -- ]] && shift
here=$(dirname "$0")
mkdir -p runs/slurm
array=$(sbatch --parsable --array=0-$((n - 1)) \
  --export=ALL,RUN_NAME="$name",RUN_CONFIG="$config",RUN_ARGS="$*" "$here/array.sbatch")
array=${array%%;*}
merge=$(sbatch --parsable --dependency=afterok:"$array" --export=ALL,RUN_NAME="$name" "$here/merge.sbatch")
echo "array job $array ($n shards), merge job $merge; merged database: runs/slurm/$name/merged.db"
