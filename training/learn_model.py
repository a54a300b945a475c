"""The testbed's tiny model: a BPE tokenizer trained on the build's training text, a small Qwen
decoder carrying the Qwen2.5 chat template, and its warm start with TRL's `SFTTrainer`.

    python -m training.learn_model --dataset outputs/learn/tasks --out outputs/learn/warmstart

The tokenizer keeps numbers apart from text (a run of digits is its own pre-token, so the
frequent numbers of this data become single tokens) and merges anything else across spaces
(byte-level BPE without the word-splitting regex), so the prompts' fixed instructions and the
solutions' recurring phrases cost a token each: the model sees the same text as a real one, in
fewer positions, which is what makes GRPO affordable on two CPU cores. (Splitting every digit, as
Qwen's tokenizer does, left a 3M-parameter model at about 8% Pass@1 after 1M tokens of SFT: it
had to learn carries and multi-token copies; whole-number tokens make those lookups.) It is
trained on the build's `train` split only (prompts, solutions and reference answers), never on
validation or held-out text. The decoder is a Qwen3 (see
`build_model` for why not Qwen2) with the Qwen2.5 chat template, special tokens and eos.

The warm start (`warm_start`) fine-tunes on the same training problems: each `outcome` row's
prompt followed by its worked solution in the outcome prompt's format (`<think>` solution
`</think>` then the boxed answer), and a share of the Stage I rows' prompts followed by their
reference answers, so the model writes every task's format; RL then has to make it right.
An optional second, short pass (`direct_share`) adds answers without work to the same data, so
that the warm start, like a chat model with a no-think mode, often answers at once (see
`WarmStartConfig.direct_share`).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import random
import sys
import time
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

logger = logging.getLogger("training.learn_model")

FAMILY = "qwen2.5"
"""The chat template, special tokens and eos of this paper model (training.tiny_model.FAMILIES)."""


@dataclass(frozen=True)
class ModelConfig:
    """Tokenizer and decoder sizes (a few million parameters)."""

    vocab_size: int = 2048
    hidden_size: int = 192
    layers: int = 4
    heads: int = 4
    intermediate_size: int = 768
    max_positions: int = 1024
    seed: int = 0


@dataclass(frozen=True)
class WarmStartConfig:
    """SFT of the warm start (TRL SFTTrainer), one place for its defaults."""

    epochs: float = 2.0
    learning_rate: float = 2e-3
    batch_size: int = 16
    stage1_share: float = 0.25
    """Share of each Stage I task's training rows added to the SFT set (the format, not mastery)."""
    direct_share: float = 0.0
    """Above 0, a second SFT pass on the same data plus answers without work (an empty `<think></think>`,
    then the boxed answer), this share of the outcome examples, each a training row's (below 1). The warm
    start then often answers at once, as a chat model in its no-think mode does, and RL gets a choice
    across problems that the outcome reward can teach in a few steps: to work first. Probed on the build's
    validation split (96 problems x 8 samples, GRPO baseline seed 1, 30 steps at lr 1e-4): one mixed pass
    of 8 epochs raised the training reward by 0.13 (work right in 37% at T=1.0 against 23% without);
    8 worked epochs and then this pass (1 epoch, lr 2e-4) by 0.19, to 0.50 at T=1.0 on validation."""
    direct_epochs: float = 1.0
    direct_learning_rate: float = 2e-4
    max_length: int = 512
    seed: int = 0
    threads: int = 2
    logging_steps: int = 20


def outcome_completion(solution: str, answer: str) -> str:
    """The outcome prompt's format: the worked solution inside `<think>`, then the boxed result (an
    empty `solution`: the answer without work)."""
    from mrtasks.rewards.parsing import THINK_CLOSE, THINK_OPEN

    work = f"{solution}\n" if solution else ""
    return f"{THINK_OPEN}\n{work}{THINK_CLOSE}\n\\boxed{{{answer}}}"


def without_work(completion: str) -> bool:
    """Whether an outcome completion answers at once: nothing but space inside its `<think>` block."""
    from mrtasks.rewards.parsing import THINK_CLOSE, THINK_OPEN

    head, closed, _ = completion.partition(THINK_CLOSE)
    return bool(closed) and not head.strip().removeprefix(THINK_OPEN).strip()


def sft_examples(dataset: str, stage1_share: float, seed: int, direct_share: float = 0.0) -> list[dict[str, Any]]:
    """(prompt, completion) pairs from the build's `train` split: every outcome row with its worked
    solution, `stage1_share` of each Stage I task's rows with their reference answers, and answers
    without work (task `outcome:direct`) making up `direct_share` of the outcome examples."""
    from datasets import load_dataset

    from mrtasks.tasks import get_task, list_tasks
    from mrtasks.trajectory import TRAJECTORIES

    solutions = {r["id"]: r["solution"] for r in load_dataset(dataset, TRAJECTORIES, split="train")}
    rng = random.Random(f"sft:{seed}")
    examples = []
    for name in list_tasks():
        spec = get_task(name)
        rows = list(load_dataset(dataset, name, split="train"))
        if spec.stage == 1:
            rows = rng.sample(rows, round(stage1_share * len(rows)))
        for row in rows:
            if spec.stage == 1:
                text = spec.reference_answer(row)
            else:
                text = outcome_completion(solutions[row["id"]], row["answer"])
            examples.append({"prompt": row["prompt"], "completion": [{"role": "assistant", "content": text}],
                             "task": name})
        if spec.stage == 2 and direct_share > 0:
            order = rng.sample(rows, len(rows))
            for k in range(round(len(rows) * direct_share / (1 - direct_share))):
                row = order[k % len(order)]
                examples.append({"prompt": row["prompt"], "task": name + ":direct",
                                 "completion": [{"role": "assistant", "content": outcome_completion("", row["answer"])}]})
    rng.shuffle(examples)
    return examples


def training_texts(dataset: str) -> list[str]:
    """Every text of the build's `train` split the model will read or write. A folder that is not a
    readable build (no card, a config `datasets` cannot load) raises `DatasetError` with one line."""
    from mrtasks.rewards.rows import build_configs, load_config
    from mrtasks.tasks import get_task, list_tasks

    texts: list[str] = []
    for config in build_configs(dataset):
        for row in load_config(dataset, config).get("train", []):
            texts += [message["content"] for message in row.get("prompt") or []]
            if row.get("solution"):
                texts.append(row["solution"])
            if config in list_tasks():
                texts.append(get_task(config).reference_answer(row))
    return texts


def build_model(out_dir: str | Path, texts: Iterable[str], config: ModelConfig = ModelConfig()) -> Path:
    """Train the tokenizer on `texts`, build a random decoder of `config`'s size, save both to `out_dir`.

    The decoder is Qwen3 (Qwen2's layout without the QKV bias, with q/k norms), not Qwen2: for
    `model_type: qwen2` transformers 5's `AutoTokenizer` always rebuilds Qwen's word-splitting
    pre-tokenizer and ignores the one in `tokenizer.json`, which would make every prompt four
    to eight times longer. The saved folder is checked: `AutoTokenizer` must give the trained
    tokenizer's ids, or this raises.
    """
    import torch
    from transformers import AutoTokenizer, Qwen3Config, Qwen3ForCausalLM

    from training.tiny_model import FAMILIES, TEMPLATES_DIR, train_tokenizer

    spec = FAMILIES[FAMILY]
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    texts = [t for t in texts if t]
    template = (TEMPLATES_DIR / spec["template"]).read_text()
    tokenizer = train_tokenizer(texts, spec, config.vocab_size, template, digits=True)
    tokenizer.save_pretrained(out)

    head_dim = config.hidden_size // config.heads
    qwen = Qwen3Config(
        vocab_size=len(tokenizer),
        hidden_size=config.hidden_size,
        intermediate_size=config.intermediate_size,
        num_hidden_layers=config.layers,
        num_attention_heads=config.heads,
        num_key_value_heads=config.heads,
        head_dim=head_dim,
        max_position_embeddings=config.max_positions,
        tie_word_embeddings=True,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(config.seed)
    model = Qwen3ForCausalLM(qwen)
    model.generation_config.eos_token_id = [tokenizer.convert_tokens_to_ids(t) for t in ("<|im_end|>", spec["eos"])]
    model.generation_config.pad_token_id = qwen.pad_token_id
    model.save_pretrained(out)

    loaded = AutoTokenizer.from_pretrained(out)
    sample = "\n".join(texts[:50])
    if loaded(sample, add_special_tokens=False)["input_ids"] != tokenizer(sample, add_special_tokens=False)["input_ids"]:
        raise RuntimeError(f"AutoTokenizer.from_pretrained({out}) does not reproduce the trained tokenizer "
                           f"({type(loaded).__name__}); this transformers rebuilds the pre-tokenizer")
    return out


def _sft(model: Any, tokenizer: Any, examples: list[dict[str, Any]], epochs: float, learning_rate: float,
         config: WarmStartConfig) -> dict[str, Any]:
    """One SFTTrainer pass over `examples` (loss on completions); a record of it."""
    import tempfile

    import datasets
    from trl import SFTConfig, SFTTrainer

    counts: dict[str, int] = {}
    for e in examples:
        counts[e["task"]] = counts.get(e["task"], 0) + 1
    train = datasets.Dataset.from_list([{k: e[k] for k in ("prompt", "completion")} for e in examples])
    start = time.time()
    with tempfile.TemporaryDirectory(prefix="sft-") as tmp:
        args = SFTConfig(
            output_dir=tmp,
            num_train_epochs=epochs,
            learning_rate=learning_rate,
            lr_scheduler_type="cosine",
            warmup_steps=20,
            per_device_train_batch_size=config.batch_size,
            max_length=config.max_length,
            logging_steps=config.logging_steps,
            save_strategy="no",
            report_to="none",
            seed=config.seed,
            use_cpu=True,
            bf16=False,
            dataloader_num_workers=0,
            disable_tqdm=True,
        )
        trainer = SFTTrainer(model=model, args=args, train_dataset=train, processing_class=tokenizer)
        result = trainer.train()
        losses = [r["loss"] for r in trainer.state.log_history if "loss" in r]
    return {
        "examples": counts,
        "steps": result.global_step,
        "train_runtime_s": round(time.time() - start, 1),
        "loss_first": losses[0] if losses else None,
        "loss_last": losses[-1] if losses else None,
        "losses": losses,
    }


def warm_start(model_dir: str | Path, dataset: str, config: WarmStartConfig = WarmStartConfig()) -> dict[str, Any]:
    """SFT the model in `model_dir` in place: the worked pass, then the answers-without-work pass when
    `config.direct_share` is above 0; return a record (the first pass's at the top, the second's under
    `direct_pass`)."""
    import datasets
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.set_num_threads(config.threads)
    datasets.disable_progress_bars()
    tokenizer = AutoTokenizer.from_pretrained(model_dir)
    model = AutoModelForCausalLM.from_pretrained(model_dir, dtype=torch.float32)
    record = _sft(model, tokenizer, sft_examples(dataset, config.stage1_share, config.seed),
                  config.epochs, config.learning_rate, config)
    if config.direct_share > 0:
        examples = sft_examples(dataset, config.stage1_share, config.seed, config.direct_share)
        record["direct_pass"] = _sft(model, tokenizer, examples, config.direct_epochs, config.direct_learning_rate, config)
    model.save_pretrained(model_dir)
    tokenizer.save_pretrained(model_dir)
    record |= {"config": asdict(config), "parameters": sum(p.numel() for p in model.parameters())}
    (Path(model_dir) / "warm_start.json").write_text(json.dumps(record, indent=2) + "\n")
    return record


WARM_START_FILES = ("config.json", "generation_config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json",
                    "special_tokens_map.json", "chat_template.jinja", "vocab.json", "merges.txt", "added_tokens.json",
                    "warm_start.json")


def _legacy_warm_start(folder: Path) -> bool:
    """A warm start written before this command marked its folders (its record is there)."""
    return (folder / "warm_start.json").is_file()


def _owner() -> Any:
    from mrtasks.output import Owner

    return Owner("training.learn_model", WARM_START_FILES, "--out", _legacy_warm_start)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m training.learn_model",
        description="Build the testbed's tiny Qwen decoder (tokenizer trained on a build's train split) and warm-start it "
        "with TRL's SFTTrainer on the same training problems.",
        epilog="exit codes: 0 written; 2 bad arguments; 3 --dataset is not a readable build; 4 --out refused (a dataset "
               "build, a model or files this command did not write); 130 interrupted",
    )
    p.add_argument("--dataset", required=True, help="a folder written by python -m mrtasks.build")
    p.add_argument("--out", required=True, help="model folder to write (files in it are replaced)")
    m, w = ModelConfig(), WarmStartConfig()
    p.add_argument("--vocab-size", type=int, default=m.vocab_size)
    p.add_argument("--hidden-size", type=int, default=m.hidden_size)
    p.add_argument("--layers", type=int, default=m.layers)
    p.add_argument("--epochs", type=float, default=w.epochs, help="SFT epochs")
    p.add_argument("--learning-rate", type=float, default=w.learning_rate)
    p.add_argument("--batch-size", type=int, default=w.batch_size)
    p.add_argument("--stage1-share", type=float, default=w.stage1_share,
                   help="share of each Stage I task's training rows in the SFT set")
    p.add_argument("--direct-share", type=float, default=w.direct_share,
                   help="above 0: a second SFT pass with answers without work as this share of the outcome examples "
                        "(below 1)")
    p.add_argument("--direct-epochs", type=float, default=w.direct_epochs, help="epochs of that second pass")
    p.add_argument("--direct-learning-rate", type=float, default=w.direct_learning_rate,
                   help="learning rate of that second pass")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=w.threads, help="torch threads")
    args = p.parse_args(argv)
    step = 2 * m.heads
    if not 300 <= args.vocab_size <= 262_144:
        p.error(f"--vocab-size must be 300 to 262144 (the bytes and special tokens come first), got {args.vocab_size}")
    if not (step <= args.hidden_size <= 4096 and args.hidden_size % step == 0):
        p.error(f"--hidden-size must be a multiple of {step} ({m.heads} heads of an even size) up to 4096, got {args.hidden_size}")
    if not 1 <= args.layers <= 64:
        p.error(f"--layers must be 1 to 64, got {args.layers}")
    if not all(0 < v < math.inf for v in (args.epochs, args.learning_rate, args.direct_epochs, args.direct_learning_rate)):
        p.error("--epochs, --learning-rate, --direct-epochs and --direct-learning-rate must be finite numbers > 0")
    if args.batch_size < 1 or args.threads < 1 or not 0 <= args.stage1_share <= 1 or not 0 <= args.direct_share < 1:
        p.error("--batch-size and --threads must be >= 1, --stage1-share in [0, 1] and --direct-share in [0, 1)")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    from mrtasks.logs import run_command
    from mrtasks.output import OutputError, OwnedFolder
    from mrtasks.rewards.rows import DatasetError

    folder = OwnedFolder(args.out, _owner())

    def body() -> int:
        folder.check()  # refuse --out before reading anything
        try:
            texts = training_texts(args.dataset)  # every config read before --out is touched
        except DatasetError as e:
            raise DatasetError(f"--dataset {e}") from None
        with folder:  # refuses a build, a model or a folder of someone's files before any work
            model = ModelConfig(vocab_size=args.vocab_size, hidden_size=args.hidden_size, layers=args.layers,
                                intermediate_size=4 * args.hidden_size, seed=args.seed)
            out = build_model(args.out, texts, model)
            record = warm_start(out, args.dataset, WarmStartConfig(
                epochs=args.epochs, learning_rate=args.learning_rate, batch_size=args.batch_size,
                stage1_share=args.stage1_share, direct_share=args.direct_share, direct_epochs=args.direct_epochs,
                direct_learning_rate=args.direct_learning_rate, seed=args.seed, threads=args.threads))
        logger.info("warm start written to %s: %s", out, {k: v for k, v in record.items() if k != "losses"})
        return 0

    return run_command(body, {OutputError: 4, DatasetError: 3})


if __name__ == "__main__":
    sys.exit(main())
