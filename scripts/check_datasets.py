"""Loads `ptxbench export --out DIR` directories with datasets.load_dataset and
checks what a trainer relies on: the declared features, a completion that is
one assistant message not found in its prompt, and typed provenance.

With BRANCHED_DIR (a preference export of a `run --branch N` experiment): it has
rows of round >= 1 that pair siblings of one round, and it concatenates with
PREFERENCE_DIR (one schema, the branch columns typed where they are all null).

With --prompts PROMPTS_DIR (`export --kind prompts --out DIR`): the columns
GRPOTrainer and examples/reward_trl.py read (a conversational `prompt`, a
`task_id` per row, typed `level`).

usage: check_datasets.py CORRECTION_DIR PREFERENCE_DIR [BRANCHED_DIR] [--prompts PROMPTS_DIR]
"""
import sys

import datasets


def fail(message):
    print(f"check_datasets: {message}", file=sys.stderr)
    sys.exit(1)


def check_correction(path):
    ds = datasets.load_dataset(path, split="train")
    if len(ds) == 0:
        fail(f"{path}: no rows")
    if set(ds.column_names) != {"prompt", "completion", "provenance"}:
        fail(f"{path}: columns {ds.column_names}")
    if ds.features["provenance"]["speedup"].dtype != "float64":
        fail(f"{path}: provenance.speedup is {ds.features['provenance']['speedup']}, not float64")
    for i, row in enumerate(ds):
        completion = row["completion"]
        if len(completion) != 1 or completion[0]["role"] != "assistant":
            fail(f"{path}: row {i}: completion is not one assistant message")
        if row["prompt"][-1]["role"] != "user":
            fail(f"{path}: row {i}: the prompt does not end with the feedback")
        if any(m["content"] == completion[0]["content"] for m in row["prompt"] if m["role"] == "assistant"):
            fail(f"{path}: row {i}: the completion repeats an attempt from the prompt")
    print(f"check_datasets: {path}: {len(ds)} correction rows, features {ds.features['provenance']['speedup']}")
    return ds


def check_preference(path):
    ds = datasets.load_dataset(path, split="train")
    if len(ds) == 0:
        fail(f"{path}: no rows")
    if set(ds.column_names) != {"prompt", "chosen", "rejected", "provenance"}:
        fail(f"{path}: columns {ds.column_names}")
    for i, row in enumerate(ds):
        if row["chosen"] == row["rejected"]:
            fail(f"{path}: row {i}: chosen equals rejected")
    print(f"check_datasets: {path}: {len(ds)} preference rows")
    return ds


def check_branched(path, preference):
    ds = check_preference(path)
    repairs = [row for row in ds if row["provenance"]["round"] >= 1]
    if not repairs:
        fail(f"{path}: no preference row of round >= 1")
    for row in repairs:
        p = row["provenance"]
        if p["pair"] != "siblings" or p["branch"] is None or p["rejected_branch"] is None:
            fail(f"{path}: a round {p['round']} row is not a pair of siblings: {p}")
        if p["rejected_trajectory"] != p["trajectory"] or p["rejected_round"] != p["round"]:
            fail(f"{path}: siblings of different rounds paired: {p}")
    if ds.features["provenance"]["branch"].dtype != "int64":
        fail(f"{path}: provenance.branch is {ds.features['provenance']['branch']}, not int64")
    both = datasets.concatenate_datasets([preference, ds])
    print(f"check_datasets: {path}: {len(repairs)} sibling pairs of round >= 1; concatenated with "
          f"the round-0 pairs: {len(both)} rows")


def check_prompts(path):
    ds = datasets.load_dataset(path, split="train")
    if len(ds) == 0:
        fail(f"{path}: no rows")
    if set(ds.column_names) != {"prompt", "task_id", "family", "level", "variant", "suite"}:
        fail(f"{path}: columns {ds.column_names}")
    if ds.features["level"].dtype != "int64":
        fail(f"{path}: level is {ds.features['level']}, not int64")
    for i, row in enumerate(ds):
        if [m["role"] for m in row["prompt"]] != ["system", "user"]:
            fail(f"{path}: row {i}: the prompt is not [system, user]")
        if f"Task id: {row['task_id']}" not in row["prompt"][1]["content"]:
            fail(f"{path}: row {i}: the task prompt does not name task {row['task_id']}")
    print(f"check_datasets: {path}: {len(ds)} prompts of suite {ds[0]['suite']}")


def main():
    args = sys.argv[1:]
    if "--prompts" in args:
        at = args.index("--prompts")
        if at + 1 >= len(args):
            fail(__doc__.strip().splitlines()[-1])
        check_prompts(args[at + 1])
        del args[at:at + 2]
    if len(args) not in (2, 3):
        fail(__doc__.strip().splitlines()[-1])
    correction = check_correction(args[0])
    preference = check_preference(args[1])
    if len(args) == 3:
        check_branched(args[2], preference)
    # The card types the column, so an export whose speedups are all null (a
    # run without a GPU) still reads as float64 and concatenates with one that has them.
    nulls = sum(row["provenance"]["speedup"] is None for row in correction)
    both = datasets.concatenate_datasets([correction, correction])
    print(f"check_datasets: {nulls} of {len(correction)} speedups null; concatenated {len(both)} rows, "
          f"speedup {both.features['provenance']['speedup']}")

if __name__ == "__main__":
    main()
