"""Build a tiny, randomly initialised Qwen2 chat model locally (nothing is downloaded).

Used by the tests, the GPU smoke run and the offline walkthrough in the README:

    python -m training.tiny_model outputs/tiny-model              # tokenizer trained on the bundled sample
    python -m training.tiny_model outputs/tiny-model --family qwen2.5 --dataset outputs/demo

`build_tiny_model(out_dir, texts)` trains a byte-level BPE tokenizer on `texts` with
`tokenizers`, gives it a ChatML chat template (the one Qwen2 uses), and saves a 2-layer Qwen2
config, random weights and the tokenizer with `save_pretrained`. `family="qwen2.5"` or
`family="r1-distill-qwen"` gives it instead the real chat template (`training/chat_templates/`)
and the special tokens, bos/eos/pad of that paper model (Qwen2.5-3B base: eos `<|endoftext|>`;
R1-Distill: bos/eos `<｜begin▁of▁sentence｜>`/`<｜end▁of▁sentence｜>`, a template that opens `<think>`). The result loads with
`AutoModelForCausalLM.from_pretrained(path)` / `AutoTokenizer.from_pretrained(path)` like any Hub
model, and TRL, the training CLI and the eval CLI can take its path as `model_name_or_path`.

Example:
    path = build_tiny_model(tmp_path / "tiny", ["Find $x$ such that $x^2 = 4$.", ...])
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path)
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

# The ChatML template (as in Qwen2): `add_generation_prompt` opens the assistant turn.
CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}"
)
SPECIAL_TOKENS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]
TEMPLATES_DIR = Path(__file__).resolve().parents[1] / "training" / "chat_templates"
# The special tokens and bos/eos/pad of each paper model's tokenizer (as in its tokenizer_config.json).
FAMILIES = {
    "qwen2.5": {
        "template": "qwen2.5.jinja",
        "special": ["<|endoftext|>", "<|im_start|>", "<|im_end|>"],
        "bos": None, "eos": "<|endoftext|>", "pad": "<|endoftext|>",
    },
    "r1-distill-qwen": {
        "template": "r1-distill-qwen.jinja",
        "special": ["<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>", "<｜User｜>", "<｜Assistant｜>", "<think>",
                    "</think>"],
        "bos": "<｜begin▁of▁sentence｜>", "eos": "<｜end▁of▁sentence｜>", "pad": "<｜end▁of▁sentence｜>",
    },
}


def train_tokenizer(texts: Iterable[str], spec: dict, vocab_size: int, template: str, digits: bool = False) -> Any:
    """A byte-level BPE (any string encodes; unseen characters fall back to bytes) trained on
    `texts`, with `spec`'s special tokens, bos/eos/pad and the chat `template`, padding on the left.
    `digits`: numbers are split from letters before the merges (a run of digits stays whole)."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    bpe = Tokenizer(models.BPE())
    byte_level = pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=not digits)
    bpe.pre_tokenizer = (
        pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=False), byte_level]) if digits else byte_level
    )
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=vocab_size,
        special_tokens=spec["special"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False,
    )
    texts = [t for t in texts if t]
    if not texts:
        raise ValueError("the tokenizer needs at least one non-empty training text")
    bpe.train_from_iterator(texts, trainer=trainer)
    named = {spec["bos"], spec["eos"], spec["pad"]}
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        bos_token=spec["bos"],
        eos_token=spec["eos"],
        pad_token=spec["pad"],
        additional_special_tokens=[t for t in spec["special"] if t not in named],
    )
    tokenizer.chat_template = template
    tokenizer.padding_side = "left"
    return tokenizer


TINY_HEADS = 4  # attention (and key/value) heads of the CLI's model (build_tiny_model's num_heads)
HIDDEN_STEP = 2 * TINY_HEADS  # the hidden size splits into TINY_HEADS heads of an even size (RoPE rotates pairs)
MAX_HIDDEN, MAX_LAYERS, MAX_VOCAB = 1024, 32, 262_144  # still a small model: under 2 GB of fp32 weights


def build_tiny_model(
    out_dir: str | Path,
    texts: Iterable[str],
    *,
    vocab_size: int = 512,
    hidden_size: int = 64,
    num_layers: int = 2,
    num_heads: int = TINY_HEADS,
    seed: int = 0,
    family: str | None = None,
) -> Path:
    """Train a tokenizer on `texts`, build a tiny Qwen2 model, save both to `out_dir`; return it.

    The tokenizer is byte-level, so it encodes any string (unseen characters fall back to bytes).
    `vocab_size` is an upper bound: a small corpus may yield fewer merges.
    """
    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    if family is not None and family not in FAMILIES:
        raise ValueError(f"unknown family {family!r}; known: {sorted(FAMILIES)}")
    spec = FAMILIES.get(family) or {"special": SPECIAL_TOKENS, "bos": None, "eos": "<|im_end|>",
                                    "pad": "<|endoftext|>", "template": None}

    template = (TEMPLATES_DIR / spec["template"]).read_text() if spec["template"] else CHAT_TEMPLATE
    tokenizer = train_tokenizer(texts, spec, vocab_size, template)
    tokenizer.save_pretrained(out)

    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=hidden_size,
        intermediate_size=hidden_size * 2,
        num_hidden_layers=num_layers,
        num_attention_heads=num_heads,
        num_key_value_heads=num_heads,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(seed)
    model = Qwen2ForCausalLM(config)
    model.generation_config.eos_token_id = config.eos_token_id
    model.generation_config.pad_token_id = config.pad_token_id
    model.save_pretrained(out)
    return out


def teach(
    model_dir: str | Path,
    examples: list[tuple[list[dict[str, str]], str]],
    *,
    steps: int = 100,
    lr: float = 3e-3,
    batch_size: int = 8,
    prompt_tokens: int | None = None,
    seed: int = 0,
) -> Path:
    """Fine-tune the model in `model_dir` in place on (chat prompt, completion) pairs; return the path.

    A random tiny model never writes `\\boxed{...}`, so every reward would be 0 and GRPO would
    see no signal. A short supervised warm-up on reference answers teaches the format, so sampled
    completions at temperature 1 score unevenly (some right, some partly right, some unparsable),
    which is what a smoke test of reward wiring needs. The loss is on completion tokens only.
    `prompt_tokens=N` keeps only the last N tokens of each prompt (None: all): long task prompts
    make the warm-up slow on a CPU, and the answer format does not depend on the prompt's start.
    """
    import random

    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir)
    rows = []
    for messages, completion in examples:
        prompt = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        p_ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
        if prompt_tokens is not None:
            p_ids = p_ids[-prompt_tokens:]
        c_ids = tokenizer(completion + tokenizer.eos_token, add_special_tokens=False)["input_ids"]
        rows.append((p_ids + c_ids, [-100] * len(p_ids) + c_ids))
    if not rows:
        raise ValueError("teach needs at least one (prompt, completion) example")

    torch.manual_seed(seed)
    rng = random.Random(seed)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    model.train()
    pad = tokenizer.pad_token_id
    for _ in range(steps):
        batch = rng.sample(rows, min(batch_size, len(rows)))
        width = max(len(ids) for ids, _ in batch)
        input_ids = torch.tensor([ids + [pad] * (width - len(ids)) for ids, _ in batch])
        labels = torch.tensor([lab + [-100] * (width - len(lab)) for _, lab in batch])
        attention = torch.tensor([[1] * len(ids) + [0] * (width - len(ids)) for ids, _ in batch])
        loss = model(input_ids=input_ids, attention_mask=attention, labels=labels).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    model.save_pretrained(model_dir)
    return Path(model_dir)


def _texts(dataset: str | None) -> list[str]:
    """Problems and solutions of the bundled sample, or every prompt of a build's configs.

    A `dataset` that is not a readable build (no marker, no card, a broken card, a config that
    `datasets` cannot load, no prompt at all) raises `DatasetError` (a ValueError) with one line."""
    if dataset is None:
        from importlib import resources

        from mrtasks.jsonl import iter_jsonl

        texts = []
        with resources.as_file(resources.files("mrtasks") / "data" / "sample.jsonl") as path:
            for _, row in iter_jsonl(path):
                texts += [row.get("problem", ""), row.get("solution", "")]  # type: ignore[union-attr]
        return texts
    return _dataset_prompts(dataset)


def _dataset_prompts(dataset: str) -> list[str]:
    from mrtasks.rewards.rows import DatasetError, build_configs, load_config

    try:
        configs = build_configs(dataset)  # a folder that is not a build, or a build without its card
    except DatasetError as e:
        message = str(e)
        raise DatasetError(message if message.startswith("--dataset") else f"--dataset {message}") from None
    if not configs:
        raise DatasetError(f"--dataset {dataset}: its card's configs: list names no config")

    texts: list[str] = []
    for config in configs:
        try:
            loaded = load_config(dataset, config)
        except DatasetError as e:
            raise DatasetError(f"--dataset {dataset}: {e}") from None
        for row in (r for part in loaded.values() for r in part):
            prompt = row.get("prompt")
            for message in prompt if isinstance(prompt, list) else []:
                content = message.get("content") if isinstance(message, dict) else None
                if isinstance(content, str) and content:
                    texts.append(content)
    if not texts:
        raise DatasetError(f"--dataset {dataset}: no prompt in any config to train the tokenizer on")
    return texts


# What `python -m training.tiny_model OUT` writes (the guard replaces these and never anything else).
TINY_FILES = ("config.json", "generation_config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json",
              "special_tokens_map.json", "chat_template.jinja", "vocab.json", "merges.txt", "added_tokens.json")


def main(argv: list[str] | None = None) -> int:
    from mrtasks.logs import run_command
    from mrtasks.output import OutputError, OwnedFolder, Owner

    p = argparse.ArgumentParser(
        prog="python -m training.tiny_model",
        description="Save a tiny random Qwen2 chat model and its BPE tokenizer to OUT (offline, CPU; for smoke runs).",
        epilog="OUT must be new, empty or a folder this command wrote (its files are replaced); any other folder "
               "(a real model, someone's files) is refused. Exit codes: 0 written; 2 bad arguments or a --dataset that "
               "is not a readable build (OUT is left as it was); 4 OUT refused; 130 interrupted",
    )
    p.add_argument("out", help="folder to write: new, empty, or a tiny model written here before (replaced)")
    p.add_argument("--dataset", help="a build folder whose prompts train the tokenizer (default: the bundled sample)")
    p.add_argument("--family", choices=sorted(FAMILIES), help="use that paper model's chat template and special tokens")
    p.add_argument("--vocab-size", type=int, default=1024,
                   help=f"at most this many tokens: the 256 bytes, the special tokens and BPE merges "
                        f"(default 1024; at least 256 + the family's special tokens, at most {MAX_VOCAB})")
    p.add_argument("--hidden-size", type=int, default=64,
                   help=f"a multiple of {HIDDEN_STEP} ({TINY_HEADS} attention heads of an even size), "
                        f"{HIDDEN_STEP} to {MAX_HIDDEN} (default 64)")
    p.add_argument("--layers", type=int, default=2, help=f"decoder layers, 1 to {MAX_LAYERS} (default 2)")
    p.add_argument("--seed", type=int, default=0, help="seed of the random weights, 0 to 2**64 - 1 (default 0)")
    args = p.parse_args(argv)
    spec = FAMILIES.get(args.family) or {"special": SPECIAL_TOKENS}
    min_vocab = 256 + len(spec["special"])
    if not min_vocab <= args.vocab_size <= MAX_VOCAB:
        p.error(f"--vocab-size must be {min_vocab} to {MAX_VOCAB} (the 256 byte tokens and {len(spec['special'])} "
                f"special tokens come first), got {args.vocab_size}")
    if not (HIDDEN_STEP <= args.hidden_size <= MAX_HIDDEN and args.hidden_size % HIDDEN_STEP == 0):
        p.error(f"--hidden-size must be a multiple of {HIDDEN_STEP} from {HIDDEN_STEP} to {MAX_HIDDEN} "
                f"({TINY_HEADS} attention heads of an even size), got {args.hidden_size}")
    if not 1 <= args.layers <= MAX_LAYERS:
        p.error(f"--layers must be 1 to {MAX_LAYERS}, got {args.layers}")
    if not 0 <= args.seed < 2**64:
        p.error(f"--seed must be 0 to 2**64 - 1, got {args.seed}")
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    from mrtasks.rewards.rows import DatasetError

    folder = OwnedFolder(args.out, Owner("training.tiny_model", TINY_FILES, "OUT"), discard_on_error=lambda _: True)

    def body() -> int:
        folder.check()  # refuse OUT before reading anything
        texts = _texts(args.dataset)  # read before OUT is touched: a bad --dataset leaves it as it was
        with folder:
            folder.remove_own()
            out = build_tiny_model(args.out, texts, vocab_size=args.vocab_size,
                                   hidden_size=args.hidden_size, num_layers=args.layers, seed=args.seed,
                                   family=args.family)
        logging.getLogger(__name__).info("tiny model written to %s", out)
        return 0

    return run_command(body, {OutputError: 4, DatasetError: 2, OSError: 2, ValueError: 2})


if __name__ == "__main__":
    sys.exit(main())
