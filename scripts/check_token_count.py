#!/usr/bin/env python3
"""Checks ptxbench's token counts (agent/data/token_count.hpp) against the
`tokenizers` library, the implementation a trainer uses.

  check_token_count.py fixtures OUT_DIR
      trains three small byte-level BPE tokenizers on the repository's PTX,
      prompts and task files (GPT-2's ByteLevel split, the Llama 3 split, the
      Qwen 2 split with NFC) and writes them with the counts the library makes
      of a set of texts (expected.json): tests/data/test_token_count.cpp reads
      tests/fixtures/tokenizers, made by this command.
  check_token_count.py export EXPORT_DIR TOKENIZER_JSON
      recounts every record of `ptxbench export --tokenizer TOKENIZER_JSON
      --out EXPORT_DIR` with the library and compares with provenance.tokens.

Nothing is downloaded: the tokenizers are trained on the spot. Needs
`pip install tokenizers` (and `datasets` for nothing: plain JSON is read).
"""
import glob
import json
import os
import sys

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LLAMA3 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
          r"|\s+(?!\S)|\s+")
QWEN2 = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+"
         r"|\s+(?!\S)|\s+")

# Texts that exercise each branch of the splits: contractions in both cases,
# digit runs, punctuation before letters, whitespace runs before words and
# newlines, tabs, CRLF, non-ASCII letters, numbers and marks, a combining
# accent (NFC composes it), an added token in the text.
EDGE_TEXTS = [
    "", " ", "  ", "a", " a", "  a", "a  ", "\n", "\n\n  x", "x\n  \n\ty", "\t\tfoo", " \r\n bar\r\n\r\n",
    "It's they'RE we'Ve I'M you'll he'D 'x ''s ſ'S", "12345678 1 22 333 4444", "x=12.5e-3;", "(foo)[bar]{baz}",
    "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%f1, %f2}, [%rd4+128];",
    "C = A·Bᵀ, M×N, ²³ ½ Ⅻ café cafe\u0301 naïve — “quoted” 日本語のテキスト 한국어",
    "   leading and trailing   ", "a\u00a0b\u2003c\u3000d", "end with spaces   ", "tab\there\ttoo\t",
    "<|endoftext|>between<|endoftext|>", "x<|endoftext|>", "emoji 🙂 and ZWJ 👩‍💻",
]


def corpus():
    files = (glob.glob(os.path.join(ROOT, "tasks/solutions/*/kernel.ptx")) + glob.glob(os.path.join(ROOT, "prompts/*.md"))
             + glob.glob(os.path.join(ROOT, "tasks/*.json")) + glob.glob(os.path.join(ROOT, "docs/*.md")))
    for f in sorted(files):
        with open(f, encoding="utf-8") as fh:
            yield fh.read()
    yield from EDGE_TEXTS


def train(kind):
    tok = Tokenizer(models.BPE(ignore_merges=(kind == "llama3")))
    if kind == "gpt2":
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True)
    else:
        tok.pre_tokenizer = pre_tokenizers.Sequence([
            pre_tokenizers.Split(Regex(LLAMA3 if kind == "llama3" else QWEN2), behavior="isolated", invert=False),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    if kind == "qwen2":
        tok.normalizer = normalizers.NFC()
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(vocab_size=700, special_tokens=["<|endoftext|>"],
                                  initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), show_progress=False)
    tok.train_from_iterator(corpus(), trainer)
    return tok


def count(tok, text):
    return len(tok.encode(text, add_special_tokens=False).ids)


def fixtures(out):
    os.makedirs(out, exist_ok=True)
    texts = list(EDGE_TEXTS)
    # Slices of real PTX and a prompt, copied: the fixture must not change when they do.
    for f in sorted(glob.glob(os.path.join(ROOT, "tasks/solutions/*/kernel.ptx")))[:2]:
        with open(f, encoding="utf-8") as fh:
            texts.append(fh.read()[:6000])
    with open(os.path.join(ROOT, "prompts/task.md"), encoding="utf-8") as fh:
        texts.append(fh.read()[:4000])
    expected = {"texts": texts, "counts": {}}
    for kind in ("gpt2", "llama3", "qwen2"):
        tok = train(kind)
        tok.save(os.path.join(out, kind + ".json"))
        expected["counts"][kind] = [count(tok, t) for t in texts]
    with open(os.path.join(out, "expected.json"), "w", encoding="utf-8") as fh:
        json.dump(expected, fh, ensure_ascii=False, indent=1)
    print(f"check_token_count: wrote 3 tokenizers and the counts of {len(texts)} texts to {out}")


def sequence_texts(row):
    def texts(messages):
        out = []
        for m in messages or []:
            out.append(m.get("content", ""))
            if "reasoning_content" in m:
                out.append(m["reasoning_content"])
        return out
    prompt = texts(row.get("prompt"))
    rest = texts(row.get("messages")) + texts(row.get("completion"))
    if "chosen" in row:
        return prompt, [texts(row["chosen"]), texts(row["rejected"])]
    return prompt + rest, []


def check_export(export_dir, tokenizer):
    tok = Tokenizer.from_file(tokenizer)
    n = bad = 0
    with open(os.path.join(export_dir, "data/train.jsonl"), encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            base, answers = sequence_texts(row)
            total = sum(count(tok, t) for t in base)
            if answers:
                total += max(sum(count(tok, t) for t in a) for a in answers)
            ours = row["provenance"]["tokens"]
            n += 1
            if ours != total:
                bad += 1
                print(f"record {n}: ptxbench {ours} tokens, tokenizers {total}")
    print(f"check_token_count: {n - bad} of {n} records agree with tokenizers")
    sys.exit(1 if bad or n == 0 else 0)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "fixtures":
        fixtures(sys.argv[2])
    elif len(sys.argv) == 4 and sys.argv[1] == "export":
        check_export(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
