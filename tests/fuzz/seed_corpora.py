#!/usr/bin/env python3
"""Writes the seed corpus of every fuzz target into OUT/<target>/ from the
project's own inputs: tasks/, configs/, tests/fixtures/ (PTX, manifests) and a
few reply bodies and tool logs of the documented shapes."""
import json
import pathlib
import sys

root = pathlib.Path(__file__).resolve().parents[2]
out = pathlib.Path(sys.argv[1])


def put(target, name, data):
    d = out / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data if isinstance(data, bytes) else data.encode())


def strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


tasks = sorted((root / "tasks").glob("*.json")) + sorted((root / "tasks/families").glob("*.json"))
configs = sorted((root / "configs").rglob("*.json"))
manifests = sorted((root / "tests/fixtures").rglob("manifest.json"))
ptx_files = sorted((root / "tests/fixtures").rglob("*.ptx")) + sorted((root / "configs").rglob("*.ptx"))

expressions = {"cdiv(M,128)*2", "(0-9223372036854775807-1)/(0-1)", "min(M,N)%K", "1/sqrt(D)"}
for f in tasks + manifests:
    expressions.update(s for s in strings(json.loads(f.read_text())) if len(s) < 200)
for i, e in enumerate(sorted(expressions)):
    put("fuzz_expression", f"e{i}", e)

for f in manifests:
    put("fuzz_manifest", f.parent.name + ".json", f.read_bytes())
for f in tasks:
    put("fuzz_task", "task_" + f.name, b"\0" + f.read_bytes())
for f in configs:
    put("fuzz_task", "config_" + f.name, b"\1" + f.read_bytes())

for f in ptx_files:
    put("fuzz_compile_text", f.parent.name + "_" + f.name, f.read_bytes())
    manifest = f.parent / "manifest.json"
    body = manifest.read_text() if manifest.exists() else "{}"
    put("fuzz_reply", f.parent.name + "_" + f.stem,
        "Here is the kernel.\n```ptx\n" + f.read_text() + "\n```\n~~~json\n" + body + "\n~~~\n")

log = ("ptxas info    : Compiling entry function 'k' for 'sm_90a'\n"
       "ptxas info    : Function properties for k\n"
       "    16 bytes stack frame, 24 bytes spill stores, 40 bytes spill loads\n"
       "ptxas info    : Used 168 registers, used 1 barriers, 232 bytes smem, 8 bytes cmem[0]\n"
       "ptxas application ptx input, line 3; error   : Unknown symbol '%r1'\n"
       "ptxas info    : (C7508) Potential Performance Loss around line 2\n"
       "ptxas fatal   : Ptx assembly aborted due to errors\n")
put("fuzz_compile_text", "ptxas_log", log + "\0.entry k()\n{\n  ret;\n}\n")
put("fuzz_compile_text", "nvdisasm_text",
    "\t.section\t.text.k,\"ax\",@progbits\n        /*0000*/                   LDC R1, c[0x0][0x28] ;\n"
    "        /*0010*/               @P0 BRA `(.L_x_0) ;\n")
put("fuzz_compile_text", "nvdisasm_json", json.dumps([{"SM": {"version": {"major": 9, "minor": 0}}}, [
    {"function-name": "k", "start": 0, "length": 32, "sass-instructions": [
        {"opcode": "LDC", "operands": "R1,c[0x0][0x28]"}, {"predicate": "@!P0", "opcode": "EXIT"}]}]]))

put("fuzz_wire", "openai", json.dumps({"model": "m", "choices": [{"message": {
    "content": "```ptx\n.entry k() { ret; }\n```", "reasoning_content": "think"}, "finish_reason": "stop"}],
    "usage": {"prompt_tokens": 10, "completion_tokens": 5, "completion_tokens_details": {"reasoning_tokens": 2}}}))
put("fuzz_wire", "openai_parts", json.dumps({"choices": [{"message": {"content": [{"type": "text", "text": "a"}]}}]}))
put("fuzz_wire", "anthropic", json.dumps({"model": "m", "stop_reason": "max_tokens", "content": [
    {"type": "thinking", "thinking": "t"}, {"type": "text", "text": "x"}],
    "usage": {"input_tokens": 3, "output_tokens": 4}}))
put("fuzz_wire", "error", json.dumps({"error": {"message": "rate limited", "type": "rate_limit"}}))

# The embedded endpoint's scripted replies: texts, with the PTX and manifest
# files they name inlined as the endpoint serves them.
for script in sorted((root / "configs").rglob("script.json")):
    doc = json.loads(script.read_text())
    for task, samples in doc.get("tasks", {}).items():
        for s, rounds in enumerate(samples):
            for r, reply in enumerate(rounds):
                text = reply.get("text", "")
                if "ptx" in reply:
                    text += "\n```ptx\n" + (script.parent / reply["ptx"]).read_text() + "```\n"
                if "manifest" in reply:
                    text += "\n```json\n" + (script.parent / reply["manifest"]).read_text() + "```\n"
                put("fuzz_reply", f"script_{task}_{s}_{r}", text)

# Nesting as deep as the inputs allow (1 MiB, the size the long runs use):
# every parser of model or network text stops at 64 levels.
deep = "[" * (1 << 19) + "]" * (1 << 19)
put("fuzz_wire", "deep_error", '{"error": ' + deep[: (1 << 20) - 12] + "}")
put("fuzz_wire", "deep_choices", '{"choices": ' + "[" * 100000 + "]" * 100000 + "}")

# Streamed replies of both formats (fuzz_sse: the first byte picks where the
# bytes are split in two), cut short, with [DONE] but no finish reason, and
# with an error event nested a million levels deep.
def sse(events):
    return "".join("data: " + (e if isinstance(e, str) else json.dumps(e)) + "\n\n" for e in events)

openai_stream = [
    {"model": "m", "choices": [{"index": 0, "delta": {"role": "assistant"}}]},
    {"choices": [{"index": 0, "delta": {"reasoning_content": "tile"}}]},
    {"choices": [{"index": 0, "delta": {"content": "```ptx\n.version 8.5\n```"}, "finish_reason": "stop"}]},
    {"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 4}},
    "[DONE]"]
put("fuzz_sse", "openai", "\x40" + ": keep-alive\n\n" + sse(openai_stream))
put("fuzz_sse", "openai_done_unfinished", "\x10" + sse(openai_stream[:2] + ["[DONE]"]))
put("fuzz_sse", "openai_not_text", "\x00" + sse([{"choices": [{"delta": {"content": 12345}, "finish_reason": "stop"}]}]))
anthropic_stream = "".join("event: %s\ndata: %s\n\n" % (t, json.dumps(d)) for t, d in [
    ("message_start", {"type": "message_start", "message": {"model": "c", "usage": {"input_tokens": 1}}}),
    ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
    ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "x"}}),
    ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 2}}),
    ("message_stop", {"type": "message_stop"})])
put("fuzz_sse", "anthropic", "\x80" + anthropic_stream)
put("fuzz_sse", "deep_error", "\x01" + "event: error\ndata: {\"type\": \"error\", \"error\": " +
    deep[: (1 << 20) - 64] + "}\n\n")

# The fingerprint: PTX and a manifest (the first byte splits them).
for f in manifests[:8]:
    ptx = f.parent / "kernel.ptx"
    body = (ptx.read_text() if ptx.exists() else ".entry k()\n{\n ret;\n}\n") + f.read_text()
    put("fuzz_fingerprint", f.parent.name, "\x80" + body)
put("fuzz_fingerprint", "deep_manifest", "\x01" + ".entry k() { ret; }\n" + deep[: (1 << 20) - 32])
