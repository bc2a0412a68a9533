"""Checks examples/reward_trl.py against a live evald (CPU: static stages only):
the reference solution's reply scores above a ptxas error, which scores above
garbage; task ids come from a dataset column or from the prompt. With
PROMPTS_JSONL (`ptxbench export --kind prompts --out X.jsonl`), the rows are
passed as GRPOTrainer passes a batch: prompts and every other column as
keyword arguments.
Usage: python3 examples/test_reward_trl.py http://127.0.0.1:PORT [PROMPTS_JSONL]"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reward_trl  # noqa: E402

root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sol = os.path.join(root, "tasks", "solutions", "gemm_bf16_mma_sync")
ptx = open(os.path.join(sol, "kernel.ptx")).read()
manifest = open(os.path.join(sol, "manifest.json")).read()
good = f"My kernel:\n\n```ptx\n{ptx}\n```\n\n```json\n{manifest}\n```\n"
broken = good.replace("mma.sync.aligned", "mma.sync.misaligned", 1)
assert broken != good, "the solution no longer contains mma.sync.aligned"
garbage = "I cannot write PTX, but here is a poem about GPUs."

reward = reward_trl.make_reward(sys.argv[1], run_timing=False)
rewards = reward([good, broken, garbage], task_id=["gemm_bf16_mma_sync"] * 3)
print("rewards (solution, compile error, garbage):", rewards)
assert rewards[0] > rewards[1] > rewards[2], rewards
assert rewards[2] == 0.0 and rewards[1] == 1.0, rewards

# Conversational completions, task ids from the prompts.
prompts = [[{"role": "user", "content": "# Task gemm_bf16_mma_sync\n\nTask id: gemm_bf16_mma_sync\n"}]] * 2
chat = reward([[{"role": "assistant", "content": good}], [{"role": "assistant", "content": garbage}]],
              prompts=prompts)
print("rewards (chat: solution, garbage):", chat)
assert chat == [rewards[0], 0.0], chat

if len(sys.argv) > 2:
    rows = [json.loads(line) for line in open(sys.argv[2])]
    row = next(r for r in rows if r["task_id"] == "gemm_bf16_mma_sync")
    batch = [row, row]
    columns = {k: [r[k] for r in batch] for k in row if k != "prompt"}
    from_export = reward([[{"role": "assistant", "content": good}], [{"role": "assistant", "content": garbage}]],
                         prompts=[r["prompt"] for r in batch], **columns)
    print("rewards (prompts export: solution, garbage):", from_export)
    assert from_export == [rewards[0], 0.0], from_export
    # Without the task_id column, the id comes from the exported prompt itself.
    no_column = reward([good], prompts=[row["prompt"]])
    assert no_column == [rewards[0]], no_column
print("reward_trl: ok")
