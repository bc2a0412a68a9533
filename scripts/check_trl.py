"""TRL SFT (prompt-completion, completion-only loss) and DPO on ptxbench exports,
and GRPO on a prompts export.

usage: check_trl.py CORRECTION_DIR PREFERENCE_DIR [PROMPTS_DIR EVALD_URL]
Checks that SFT's prepared dataset masks the prompt (the failed attempt and the
feedback) out of the loss, then runs one step of SFT and of DPO. With a prompts
export (`export --kind prompts --out DIR`) and a running evald, one GRPO step
with examples/reward_trl.py as the reward, the dataset taken unchanged.
"""
import os
import sys
import tempfile

import datasets
from tokenizers import Tokenizer, models, pre_tokenizers, trainers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast
from trl import DPOConfig, DPOTrainer, SFTConfig, SFTTrainer

TEMPLATE = ("{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
            "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}")


def texts(*sets):
    for ds in sets:
        for row in ds:
            for column in ("prompt", "completion", "chosen", "rejected"):
                for m in row.get(column) or []:
                    yield m["role"] + " " + m["content"]


def tokenizer_for(*sets):
    tok = Tokenizer(models.WordLevel(unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    specials = ["<unk>", "<pad>", "<eos>", "<|im_start|>", "<|im_end|>"]
    tok.train_from_iterator(texts(*sets), trainers.WordLevelTrainer(special_tokens=specials, vocab_size=4000))
    t = PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", pad_token="<pad>", eos_token="<|im_end|>")
    t.chat_template = TEMPLATE
    return t


def tiny_model(tok):
    config = LlamaConfig(vocab_size=len(tok), hidden_size=32, intermediate_size=64, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=16384,
                         pad_token_id=tok.pad_token_id, eos_token_id=tok.eos_token_id)
    return LlamaForCausalLM(config)


def check_grpo(tok, prompts_dir, evald_url, common):
    from trl import GRPOConfig, GRPOTrainer
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples"))
    import reward_trl
    data = datasets.load_dataset(prompts_dir, split="train")  # unchanged: prompt, task_id, family, ...
    reward = reward_trl.make_reward(evald_url, run_timing=False)
    seen = []

    def ptx_reward(completions, **kwargs):
        seen.append(kwargs.get("task_id"))
        return reward(completions, **kwargs)

    grpo = GRPOTrainer(model=tiny_model(tok), reward_funcs=[ptx_reward], train_dataset=data, processing_class=tok,
                       args=GRPOConfig(**common, num_generations=2, max_completion_length=8))
    grpo.train()
    if not seen or not seen[0] or not all(t in set(data["task_id"]) for t in seen[0]):
        sys.exit(f"check_trl: the reward function got task ids {seen}")
    print(f"check_trl: GRPO ran a step on {len(data)} prompts; the reward got task_id {seen[0]}")


def main():
    if len(sys.argv) not in (3, 5):
        sys.exit(__doc__.strip().splitlines()[3])
    sft_data = datasets.load_dataset(sys.argv[1], split="train").remove_columns("provenance")
    dpo_data = datasets.load_dataset(sys.argv[2], split="train").remove_columns("provenance")
    prompt_data = datasets.load_dataset(sys.argv[3], split="train") if len(sys.argv) == 5 else None
    tok = tokenizer_for(sft_data, dpo_data, *([prompt_data] if prompt_data is not None else []))
    out = tempfile.mkdtemp()
    common = dict(output_dir=out, max_steps=1, per_device_train_batch_size=1, report_to=[], save_strategy="no",
                  use_cpu=True, max_length=4096)
    sft = SFTTrainer(model=tiny_model(tok), args=SFTConfig(**common, completion_only_loss=True),
                     train_dataset=sft_data, processing_class=tok)
    row = sft.train_dataset[0]
    # TRL versions keep the mask as a column or fold it into the labels (-100: not trained).
    if "completion_mask" in row:
        trained = sum(row["completion_mask"])
    elif "labels" in row:
        trained = sum(label != -100 for label in row["labels"])
    else:
        sys.exit(f"check_trl: SFT prepared columns {sorted(row)} hold no loss mask")
    total = len(row["input_ids"])
    if not 0 < trained < total:
        sys.exit(f"check_trl: SFT trains {trained} of {total} tokens of the first example")
    print(f"check_trl: SFT first example trains {trained} of {total} tokens (the completion)")
    sft.train()
    # The reference model is given: a randomly initialised one has no hub id to reload it from.
    policy = tiny_model(tok)
    reference = tiny_model(tok)
    reference.load_state_dict(policy.state_dict())
    dpo = DPOTrainer(model=policy, ref_model=reference, args=DPOConfig(**common), train_dataset=dpo_data,
                     processing_class=tok)
    print(f"check_trl: DPO prepared {len(dpo.train_dataset)} pairs")
    dpo.train()
    print("check_trl: one SFT and one DPO step ran")
    if prompt_data is not None:
        grpo_common = dict(common, per_device_train_batch_size=2)
        grpo_common.pop("max_length")
        check_grpo(tok, sys.argv[3], sys.argv[4], grpo_common)


if __name__ == "__main__":
    main()
