"""A reward function for TRL's GRPOTrainer that scores PTX completions with
ptxbench's evaluation service (`ptxbench evald`).

    from reward_trl import make_reward
    trainer = GRPOTrainer(model=..., reward_funcs=[make_reward("http://gpu-node:8477")], ...)

Each completion is sent, as a whole reply, to POST /v1/evaluate/batch (one
call per GRPO step, split into chunks of at most `max_batch`), and scored

    reward = stages passed + min(speedup, speedup_cap)      (speedup term only when correct)

where "stages passed" counts the stages in judging order (format, compile,
runtime, correctness, instructions, performance) up to the first one that did
not pass: garbage scores 0, a ptxas error 1, a kernel that compiles 2 on a
machine without a GPU (the GPU stages are not run there), a correct kernel
with the target instructions executed 5, and a fast one up to 6 + speedup_cap.
The speedup is baseline time / candidate time against cuBLASLt or cuDNN.

A result whose stage status is `error` says nothing about the candidate (the
evaluator failed): its reward is `error_reward` (None by default, which TRL
treats as missing and leaves out of the group's statistics).

The task of each completion comes from the dataset column `task_id` (TRL
passes dataset columns as keyword arguments), else from "Task id: <id>" in
its prompt (ptxbench's prompt template writes that line).

Only the standard library is used (urllib): no torch, no requests.
"""
from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.request

STAGES = ["format", "compile", "runtime", "correctness", "instructions", "performance"]
_TASK_LINE = re.compile(r"Task id:\s*([A-Za-z0-9_.-]+)")


def stages_passed(result: dict) -> int:
    """Stages passed in judging order, up to the first that did not pass."""
    n = 0
    for s in STAGES:
        if result.get("stages", {}).get(s, {}).get("status") != "passed":
            break
        n += 1
    return n


def score(result: dict, speedup_cap: float = 2.0):
    """The reward of one evaluation result (the JSON `ptxbench eval --json` prints)."""
    statuses = [result.get("stages", {}).get(s, {}).get("status") for s in STAGES]
    if "error" in statuses:
        return None
    value = float(stages_passed(result))
    correct = result.get("stages", {}).get("correctness", {}).get("status") == "passed"
    perf = result.get("performance") or {}
    speedup = perf.get("speedup") or 0.0
    if correct and speedup > 0:
        value += min(float(speedup), speedup_cap)
    return value


def _text(completion) -> str:
    # Standard format: a string. Conversational: a list of messages.
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list):
        return "".join(m.get("content", "") for m in completion if isinstance(m, dict) and m.get("role") == "assistant")
    if isinstance(completion, dict):
        return str(completion.get("content", ""))
    return str(completion)


def _task_of(i: int, kwargs: dict) -> str:
    for key in ("task_id", "task"):
        column = kwargs.get(key)
        if column is not None:
            return column[i] if isinstance(column, (list, tuple)) else column
    prompts = kwargs.get("prompts")
    if prompts is not None:
        m = _TASK_LINE.search(_text(prompts[i]) if not isinstance(prompts[i], list)
                              else "".join(str(p.get("content", "")) for p in prompts[i]))
        if m:
            return m.group(1)
    raise ValueError(f"completion {i}: no task id (give a task_id dataset column, or a prompt with 'Task id: <id>')")


class EvaldClient:
    """POSTs batches to evald, waiting out 429 answers (Retry-After)."""

    def __init__(self, url: str, token: str | None = None, timeout_s: float = 600.0, max_wait_s: float = 600.0):
        self.url = url.rstrip("/")
        self.token = token
        self.timeout_s = timeout_s
        self.max_wait_s = max_wait_s

    def batch(self, requests: list[dict]) -> list[dict]:
        body = json.dumps({"requests": requests}).encode()
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        waited = 0.0
        while True:
            req = urllib.request.Request(self.url + "/v1/evaluate/batch", data=body, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(req, timeout=self.timeout_s) as res:
                    return json.loads(res.read())["results"]
            except urllib.error.HTTPError as e:
                if e.code != 429 or waited >= self.max_wait_s:
                    detail = e.read().decode(errors="replace")
                    raise RuntimeError(f"evald {self.url}: HTTP {e.code}: {detail}") from None
                delay = float(e.headers.get("Retry-After", "1"))
                time.sleep(delay)
                waited += delay


def make_reward(url: str | None = None, token: str | None = None, run_gpu: bool = True, run_timing: bool = True,
                speedup_cap: float = 2.0, max_batch: int = 64, error_reward=None):
    """A GRPOTrainer reward function bound to one evald (default $PTXBENCH_EVALD_URL or 127.0.0.1:8477)."""
    client = EvaldClient(url or os.environ.get("PTXBENCH_EVALD_URL", "http://127.0.0.1:8477"),
                         token if token is not None else os.environ.get("PTXBENCH_EVALD_TOKEN"))

    def ptx_reward(completions, **kwargs) -> list:
        requests = [{"task": _task_of(i, kwargs), "reply": _text(c), "run_gpu": run_gpu, "run_timing": run_timing}
                    for i, c in enumerate(completions)]
        results = []
        for start in range(0, len(requests), max_batch):
            results.extend(client.batch(requests[start:start + max_batch]))
        rewards = []
        for r in results:
            s = score(r, speedup_cap)
            rewards.append(error_reward if s is None else s)
        return rewards

    return ptx_reward


# The function TRL imports by name, configured from the environment.
reward = make_reward()
