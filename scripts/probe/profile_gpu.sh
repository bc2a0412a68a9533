#!/usr/bin/env bash
# Profile feedback on a GPU in one call, from binaries built elsewhere
# (scripts/gpu_suite.sh --package BUILD_DIR; carry .device/gpu and build/solutions):
#   0. CUPTI itself: ptxbench_profile_probe's scenarios (range profiler, PC
#      sampling, each alone and after a SASS counting pass), one line each;
#   1. cost: `ptxbench eval --profile` on the GEMM 4096^3 and attention forward
#      solutions, the profile's wall time (targets: <= 1.5 s GEMM, <= 2.5 s
#      attention), the kernel table beside the library's and the hottest lines;
#   2. localisation: `ptxbench mutate --feedback profile` with the performance
#      operators (mbarrier back-off, one cp.async stage, wgmma waits that drain
#      all groups, bank-conflicting shared layout, spilled accumulators, a TMA
#      pipeline of one stage) on six solutions, the hottest PTX line of each
#      kept mutant against its mutated lines, and its dominant stall against the
#      mutation's (agent/mutate: format_localisation_table; target >= 80%);
#   3. the data: `ptxbench export --kind correction` of the mutants' database,
#      and how many correction prompts carry the profile (its kernel table and
#      hot lines) in their feedback.
# Logs go to $OUT (default /tmp/ptxbench-profile); the tables are printed last.
#
# usage, on the GPU machine: scripts/probe/profile_gpu.sh [BIN_DIR]   (default .device/gpu/bin)
#   PTXBENCH_PROFILE_MUTANTS  mutants per solution (default 6)
#   PTXBENCH_PROFILE_TASKS    the solutions mutated (comma-separated task ids)
#   PTXBENCH_PROFILE_MUTATE_LIMIT  seconds allowed for mutate (default 420)
set -u
cd "$(dirname "$0")/../.."
BIN=${1:-.device/gpu/bin}
OUT=${OUT:-/tmp/ptxbench-profile}
mkdir -p "$OUT"
. scripts/gpu_env.sh
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1 | head -1

if [ -x "$BIN/ptxbench_profile_probe" ]; then
  timeout 120 "$BIN/ptxbench_profile_probe" > "$OUT/profile_probe.txt" 2>&1
  echo "== profile probe: rc=$? (full output: profile_probe.txt)"
  grep -E '^SCENARIO|^STEP [a-z_#0-9]+ (hw|pc) ok' "$OUT/profile_probe.txt" | cut -c1-200
fi

ptx_of() { # id -> the solution's PTX (checked in or generated)
  if [ -f "tasks/solutions/$1/kernel.ptx" ]; then echo "tasks/solutions/$1/kernel.ptx"; else echo "build/solutions/$1/kernel.ptx"; fi
}
status=0
for id in gemm_bf16_wgmma_tma attention_fwd_bf16_wgmma; do
  t0=$(date +%s%N)
  timeout 180 "$BIN/ptxbench" eval --task "$id" --ptx "$(ptx_of "$id")" --manifest "tasks/solutions/$id/manifest.json" \
    --profile --table > "$OUT/eval_$id.log" 2>&1
  rc=$?
  echo "== eval --profile $id: rc=$rc, $(( ($(date +%s%N) - t0) / 1000000 )) ms in all"
  sed -n '/^profile/,$p' "$OUT/eval_$id.log" | head -30
  [ $rc -le 1 ] || status=1
done

t0=$(date +%s)
timeout "${PTXBENCH_PROFILE_MUTATE_LIMIT:-420}" "$BIN/ptxbench" mutate --db "$OUT/mutants.db" --feedback profile \
  --task "${PTXBENCH_PROFILE_TASKS:-gemm_bf16_wgmma_tma,gemm_bf16_mma_sync,gemm_fp8_e4m3_wgmma_tma,attention_fwd_bf16_wgmma,attention_fwd_bf16_wgmma_causal,attention_fwd_bf16_mma_sync_d64}" \
  --operators mbarrier_wait_backoff,cp_async_single_stage,wgmma_wait_all,smem_bank_conflict,accumulator_spill,pipeline_one_stage \
  --per-solution "${PTXBENCH_PROFILE_MUTANTS:-6}" > "$OUT/mutate.log" 2> "$OUT/mutate.err"
rc=$?
echo "== mutate --feedback profile: rc=$rc, $(( $(date +%s) - t0 )) s"
[ $rc -eq 0 ] || { status=1; tail -20 "$OUT/mutate.err"; }
cat "$OUT/mutate.log"

"$BIN/ptxbench" export --db "$OUT/mutants.db" --kind correction --out "$OUT/corrections.jsonl" > "$OUT/export.log" 2>&1
echo "== export --kind correction: rc=$?; $(wc -l < "$OUT/corrections.jsonl" 2>/dev/null || echo 0) records," \
  "$(grep -c 'Profile at ' "$OUT/corrections.jsonl" 2>/dev/null || echo 0) with the profile in the prompt," \
  "$(grep -c 'Where your kernel' "$OUT/corrections.jsonl" 2>/dev/null || echo 0) with its hot lines"
grep -o 'Profile at [^"]*' "$OUT/corrections.jsonl" 2>/dev/null | head -1 | sed 's/\\n/\n/g' | head -16
exit $status
