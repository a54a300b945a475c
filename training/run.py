"""Reference two-stage GRPO training (MR-RLVR) over TRL's `GRPOTrainer`.

Stage I trains on one self-supervised task (Masked-Then-Fill or Step-Reordering) with its
process reward; Stage II starts from Stage I's final weights and trains on the outcome reward.
The GRPO baseline is Stage II alone from the base model. Recipes live in `training/recipes/`.

    python -m training.run --recipe qwen2.5-3b --stage all --task masked_then_fill
    python -m training.run --recipe qwen2.5-3b --stage baseline max_steps=100
    accelerate launch --config_file training/accelerate/zero2.yaml -m training.run --recipe ...

A stage whose output folder holds `training_summary.json` is finished and is skipped; a stage
with `checkpoint-*` folders resumes from the last one.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import importlib.util
import json
import logging
import os
import sys
import time
from pathlib import Path
from typing import Any

from training.config import (
    STAGE2_CONFIG,
    RunConfig,
    StageSpec,
    list_recipes,
    parse_overrides,
    read_yaml,
    resolve_recipe_files,
    split_and_check,
)

logger = logging.getLogger("training.run")

SUMMARY_FILE = "training_summary.json"
REWARD_LOG_FILE = "reward_log.jsonl"
# Columns the rewards read (besides prompt/completions); every other column is dropped.
REWARD_COLUMNS = ("id", "task", "masks", "scored", "order", "answer")


# --- data ----------------------------------------------------------------------------------------


class DataError(ValueError):
    """The dataset cannot be trained on (missing columns, nothing left after filtering)."""


def dataset_config_for(run: RunConfig) -> str:
    if run.dataset_config:
        return run.dataset_config
    return run.task if run.stage == 1 else STAGE2_CONFIG


def load_prompts(run: RunConfig, split: str, tokenizer: Any) -> tuple[Any, dict[str, int]]:
    """Load one split, keep the prompt and reward columns, drop over-long prompts; return (dataset, counts)."""
    from datasets import load_dataset

    config = dataset_config_for(run)
    ds = load_dataset(run.dataset, config, split=split)
    if "prompt" not in ds.column_names:
        raise DataError(f"{run.dataset} [{config}/{split}] has no `prompt` column: {ds.column_names}")
    keep = ["prompt", *(c for c in REWARD_COLUMNS if c in ds.column_names)]
    ds = ds.remove_columns([c for c in ds.column_names if c not in keep])
    counts = {"rows": len(ds), "dropped_prompt_too_long": 0}

    if run.max_prompt_length is not None:
        limit = run.max_prompt_length

        def prompt_lengths(batch: dict[str, list]) -> dict[str, list[int]]:
            texts = [tokenizer.apply_chat_template(p, tokenize=False, add_generation_prompt=True) for p in batch["prompt"]]
            ids = tokenizer(texts, add_special_tokens=False)["input_ids"]
            return {"_prompt_tokens": [len(x) for x in ids]}

        ds = ds.map(prompt_lengths, batched=True, desc=f"prompt lengths ({split})")
        before = len(ds)
        ds = ds.filter(lambda n: n <= limit, input_columns="_prompt_tokens", desc=f"prompts <= {limit} tokens")
        ds = ds.remove_columns("_prompt_tokens")
        counts["dropped_prompt_too_long"] = before - len(ds)
        if counts["dropped_prompt_too_long"]:
            logger.warning(
                "dropped %d of %d %s prompts longer than %d tokens",
                counts["dropped_prompt_too_long"], before, split, limit,
            )
    if run.max_train_samples is not None and split == run.train_split:
        ds = ds.select(range(min(run.max_train_samples, len(ds))))
    if len(ds) == 0:
        raise DataError(f"no {split} prompts left in {run.dataset} [{config}] after filtering ({counts})")
    counts["kept"] = len(ds)
    logger.info("%s [%s/%s]: %s", run.dataset, config, split, counts)
    return ds, counts


# --- rewards -------------------------------------------------------------------------------------


def build_reward_funcs(names: list[str]) -> list[Any]:
    """Reward functions from the `mrtasks.rewards` registry, named so TRL logs `rewards/<name>/mean`."""
    from mrtasks.rewards import get_reward

    funcs = []
    for name in names:
        fn = get_reward(name)

        def reward(completions: list, _fn: Any = fn, **columns: Any) -> list[float | None]:
            return _fn(completions, **columns)

        reward.__name__ = reward.__qualname__ = name
        funcs.append(reward)
    return funcs


# --- batch mapping -------------------------------------------------------------------------------


def world_size() -> int:
    return int(os.environ.get("WORLD_SIZE", "1"))


def paper_batch_to_trl(run: RunConfig, grpo: dict[str, Any], n_procs: int) -> dict[str, Any]:
    """Map verl's prompt-counted batches onto TRL's completion-counted ones.

    verl: `train_batch_size` prompts are rolled out (x n), then updated in mini-batches of
    `ppo_mini_batch_size` prompts, one optimizer step each. TRL counts completions:
    generation_batch_size = prompts x num_generations, and one optimizer step consumes
    per_device_train_batch_size x processes x gradient_accumulation_steps completions.
    """
    out = dict(grpo)
    n_gen = out.get("num_generations", 8)
    per_device = out.get("per_device_train_batch_size", 8)
    if run.rollout_batch_prompts is not None:
        if "steps_per_generation" in out or "generation_batch_size" in out:
            raise ValueError("set rollout_batch_prompts or generation_batch_size/steps_per_generation, not both")
        out["generation_batch_size"] = run.rollout_batch_prompts * n_gen
    if run.mini_batch_prompts is not None:
        if "gradient_accumulation_steps" in out:
            raise ValueError(
                "mini_batch_prompts sets gradient_accumulation_steps; pass mini_batch_prompts=none to set it yourself"
            )
        per_step = run.mini_batch_prompts * n_gen
        micro = per_device * n_procs
        if per_step % micro:
            raise ValueError(
                f"mini_batch_prompts x num_generations = {per_step} completions per optimizer step is not a "
                f"multiple of per_device_train_batch_size x processes = {per_device} x {n_procs}"
            )
        out["gradient_accumulation_steps"] = per_step // micro
        if run.rollout_batch_prompts is not None and run.rollout_batch_prompts % run.mini_batch_prompts:
            raise ValueError("rollout_batch_prompts must be a multiple of mini_batch_prompts")
    return out


def choose_vllm(setting: str) -> bool:
    """`auto`: vLLM when installed and a CUDA device is present; otherwise transformers generation."""
    if setting.lower() == "auto":
        import torch

        return importlib.util.find_spec("vllm") is not None and torch.cuda.is_available()
    return setting.lower() in ("true", "yes", "1", "on")


# --- checkpoints and logs ------------------------------------------------------------------------


def weights_fingerprint(model: Any) -> str:
    """sha256 of the first and last parameter tensors: cheap evidence of which weights a model holds."""
    params = [p for _, p in model.named_parameters()]
    if any(p.numel() == 0 or hasattr(p, "ds_id") for p in (params[0], params[-1])):
        return "unavailable: parameters are sharded (DeepSpeed ZeRO-3)"
    h = hashlib.sha256()
    for p in (params[0], params[-1]):
        h.update(p.detach().float().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def last_checkpoint(output_dir: Path) -> str | None:
    from transformers.trainer_utils import get_last_checkpoint

    return get_last_checkpoint(str(output_dir)) if output_dir.is_dir() else None


def reward_log_callback(path: Path) -> Any:
    """A TrainerCallback that logs each reward's mean and appends every log record to a JSONL file."""
    from transformers import TrainerCallback

    class RewardLog(TrainerCallback):
        def on_log(self, args, state, control, logs=None, **kwargs):  # noqa: ANN001
            if not state.is_world_process_zero or not logs:
                return
            for prefix in ("rewards/", "eval_rewards/"):
                means = {k.split("/")[1]: v for k, v in logs.items() if k.startswith(prefix) and k.endswith("/mean")}
                if means:
                    logger.info(
                        "step %d %s: %s", state.global_step, "eval" if prefix.startswith("eval") else "train",
                        ", ".join(f"{name}={v:.4f}" for name, v in means.items()),
                    )
            with path.open("a") as f:
                f.write(json.dumps({"step": state.global_step, **logs}) + "\n")

    return RewardLog()


# --- one stage -----------------------------------------------------------------------------------


def run_stage(spec: StageSpec, output_dir: Path) -> dict[str, Any]:
    """Train one stage into `output_dir` (resuming if it has checkpoints) and save the final model there."""
    from transformers import AutoTokenizer
    from trl import GRPOConfig, GRPOTrainer

    run = spec.run
    summary_path = output_dir / SUMMARY_FILE
    if summary_path.is_file():
        logger.info("%s is finished (%s exists): skipping", output_dir, SUMMARY_FILE)
        return json.loads(summary_path.read_text())

    grpo = paper_batch_to_trl(run, spec.grpo, world_size())
    use_vllm = choose_vllm(run.use_vllm)
    grpo["use_vllm"] = use_vllm
    if use_vllm:
        grpo.setdefault("vllm_mode", "colocate")
    grpo.setdefault("model_init_kwargs", {})
    if isinstance(grpo["model_init_kwargs"], dict):
        grpo["model_init_kwargs"].setdefault("dtype", run.dtype)
    grpo["output_dir"] = str(output_dir)
    args = GRPOConfig(**grpo)

    tokenizer = AutoTokenizer.from_pretrained(run.model_name_or_path)
    train_ds, train_counts = load_prompts(run, run.train_split, tokenizer)
    eval_ds = None
    if run.eval_split and str(args.eval_strategy) not in ("no", "IntervalStrategy.NO"):
        eval_ds, _ = load_prompts(run, run.eval_split, tokenizer)

    logger.info(
        "stage %d (%s) from %s: rewards %s, generation=%s, generation_batch_size=%d completions, "
        "steps_per_generation=%d, gradient_accumulation_steps=%d, per_device_train_batch_size=%d, processes=%d",
        run.stage, spec.source, run.model_name_or_path, run.reward_funcs, "vllm" if use_vllm else "transformers",
        args.generation_batch_size, args.steps_per_generation, args.gradient_accumulation_steps,
        args.per_device_train_batch_size, world_size(),
    )
    output_dir.mkdir(parents=True, exist_ok=True)
    trainer = GRPOTrainer(
        model=run.model_name_or_path,
        reward_funcs=build_reward_funcs(run.reward_funcs),
        args=args,
        train_dataset=train_ds,
        eval_dataset=eval_ds,
        processing_class=tokenizer,
        callbacks=[reward_log_callback(output_dir / REWARD_LOG_FILE)],
    )
    init_fingerprint = weights_fingerprint(trainer.model)
    resume = last_checkpoint(output_dir)
    if resume:
        logger.info("resuming from %s", resume)
    start = time.time()
    result = trainer.train(resume_from_checkpoint=resume)
    trainer.save_model(str(output_dir))

    summary = {
        "stage": run.stage,
        "task": run.task,
        "recipe": spec.source,
        "init_from": run.model_name_or_path,
        "init_weights_sha256": init_fingerprint,
        "final_weights_sha256": weights_fingerprint(trainer.model),
        "resumed_from": resume,
        "global_step": trainer.state.global_step,
        "train_runtime_s": round(time.time() - start, 1),
        "metrics": result.metrics,
        "data": train_counts,
        "use_vllm": use_vllm,
        "run_config": dataclasses.asdict(run),
    }
    if trainer.is_world_process_zero():
        summary_path.write_text(json.dumps(summary, indent=2, default=str) + "\n")
    trainer.accelerator.wait_for_everyone()
    del trainer
    return summary


# --- CLI -----------------------------------------------------------------------------------------


def build_specs(
    recipe: str, stage: str, task: str, dataset: str | None, output_root: str | None, overrides: dict[str, str]
) -> list[tuple[StageSpec, Path]]:
    """Resolve recipes, apply overrides, chain Stage II to Stage I's output; type-check everything up front."""
    files = resolve_recipe_files(recipe, stage, task)
    if "output_dir" in overrides and len(files) > 1:
        raise ValueError("output_dir=... names one stage's folder; with several stages use --output-dir ROOT")
    if output_root:
        root = Path(output_root)
    elif recipe.endswith((".yaml", ".yml")):
        root = Path("outputs") / Path(recipe).stem
    else:
        root = Path("outputs") / recipe.split("/")[0]
    specs: list[tuple[StageSpec, Path]] = []
    for label, path in files:
        raw = read_yaml(path)
        raw.update(overrides)
        if dataset:
            raw["dataset"] = dataset
        out_dir = Path(raw.pop("output_dir", None) or root / label)
        spec = split_and_check(raw, source=str(path))
        stage1_dir = root / f"stage1_{task}"
        if label.startswith("stage2_") and specs:
            # Stage II starts from Stage I's final save in this run (an override names Stage I's base model).
            spec.run.model_name_or_path = str(specs[0][1])
        elif label.startswith("stage2_") and "model_name_or_path" not in overrides:
            # --stage 2 alone: from the final save of an earlier Stage I run under the same root.
            spec.run.model_name_or_path = str(stage1_dir)
            if not (stage1_dir / "config.json").is_file():
                raise FileNotFoundError(
                    f"Stage II starts from Stage I's final model, but {stage1_dir} has none: run --stage 1 "
                    f"(or --stage all) first, or pass model_name_or_path=..."
                )
        if not spec.run.model_name_or_path:
            raise ValueError(f"{path}: model_name_or_path is not set")
        paper_batch_to_trl(spec.run, spec.grpo, world_size())  # batch sizes must divide on this many processes
        specs.append((spec, out_dir))
    return specs


def _epilog() -> str:
    lines = ["overrides (key=value, type-checked; any RunConfig field below or any trl.GRPOConfig field):"]
    for f in dataclasses.fields(RunConfig):
        lines.append(f"  {f.name:<22} {f.metadata['help']} (default: {f.default if f.default_factory is dataclasses.MISSING else f.default_factory()!r})")
    lines.append("  <any GRPOConfig field> e.g. max_steps=10 learning_rate=1e-5 num_generations=8 save_steps=50 report_to=wandb")
    lines += [
        "",
        "recipes: " + ", ".join(list_recipes()),
        "",
        "examples:",
        "  python -m training.run --recipe qwen2.5-3b --stage all --task masked_then_fill",
        "  python -m training.run --recipe r1-distill-1.5b --stage baseline --dataset path/to/built max_steps=50",
        "  accelerate launch --config_file training/accelerate/zero2.yaml -m training.run --recipe qwen2.5-3b",
    ]
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        prog="python -m training.run",
        description="Two-stage MR-RLVR GRPO training (TRL). Stage I: a self-supervised task with its process "
        "reward; Stage II: the outcome reward, initialised from Stage I's final weights.",
        epilog=_epilog(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument(
        "--recipe",
        help="a model family under training/recipes (qwen2.5-3b, r1-distill-1.5b), one recipe "
        "(qwen2.5-3b/stage2), or a path to a recipe YAML file",
    )
    p.add_argument(
        "--stage",
        default="all",
        choices=["1", "2", "all", "baseline"],
        help="1: Stage I only; 2: Stage II from Stage I's saved output; all: Stage I then Stage II (default); "
        "baseline: the GRPO baseline (Stage II recipe from the base model)",
    )
    p.add_argument(
        "--task",
        default="masked_then_fill",
        choices=["masked_then_fill", "step_reordering"],
        help="the Stage I task (one per run, as in the paper; default masked_then_fill)",
    )
    p.add_argument("--dataset", help="Hub id or local folder built by `python -m mrtasks.build` (default: mr-rlvr/tasks)")
    p.add_argument(
        "--output-dir",
        help="root folder for this run's stages (default outputs/<recipe>); each stage writes "
        "<root>/stage1_<task>, <root>/stage2_<task> or <root>/grpo_baseline",
    )
    p.add_argument("--dry-run", action="store_true", help="resolve and type-check the recipes, print them, exit")
    p.add_argument("--list-recipes", action="store_true", help="list the bundled recipes and exit")
    p.add_argument("overrides", nargs="*", metavar="key=value", help="recipe overrides (see below)")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if args.list_recipes:
        print("\n".join(list_recipes()))
        return 0
    if not args.recipe:
        print("error: --recipe is required (see --help)", file=sys.stderr)
        return 2
    try:
        specs = build_specs(
            args.recipe, args.stage, args.task, args.dataset, args.output_dir, parse_overrides(args.overrides)
        )
    except (ValueError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.dry_run:
        for spec, out in specs:
            print(json.dumps({"recipe": spec.source, "output_dir": str(out), "run": dataclasses.asdict(spec.run),
                              "grpo": paper_batch_to_trl(spec.run, spec.grpo, world_size())}, indent=2, default=str))
        return 0
    for spec, out in specs:
        try:
            summary = run_stage(spec, out)
        except DataError as e:
            print(f"error: {e}", file=sys.stderr)
            return 2
        logger.info("stage %s done: %s (global_step %s)", spec.run.stage, out, summary.get("global_step"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
