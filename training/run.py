"""Reference two-stage GRPO training (MR-RLVR) over TRL's `GRPOTrainer`.

Stage I trains on one self-supervised task (Masked-Then-Fill or Step-Reordering) with its
process reward; Stage II starts from Stage I's final weights and trains on the outcome reward.
The GRPO baseline is Stage II alone from the base model. Recipes live in `training/recipes/`.

    python -m training.run --recipe qwen2.5-3b --stage all --task masked_then_fill
    python -m training.run --recipe qwen2.5-3b --stage baseline max_steps=100
    accelerate launch --config_file training/accelerate/zero2.yaml -m training.run --recipe ... --stage 1

`--stage all` runs each stage in its own process (a colocated vLLM engine, the reference model
and a DeepSpeed engine are gone when Stage II starts).

Each stage folder is guarded (`mrtasks.output.OwnedFolder`): training writes only into a new or
empty folder or its own earlier stage (marked `.mrtasks-owner.json`), never into a model folder, a
dataset build or a folder holding files it did not write, and a lock stops a second run into the
same stage at once. The stage's resolved settings are stored with a fingerprint in
`run_settings.json`: a stage whose folder holds `training_summary.json` is finished and is skipped
only when the settings match; a stage with `checkpoint-*` folders resumes from the last one only
when they match; otherwise the run stops with one line naming the settings that differ
(`--overwrite` deletes the stage's own files and trains it again).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import importlib.util
import json
import logging
import math
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

from mrtasks.logs import PROJECT_LOGGERS, first_line
from mrtasks.output import OutputError as FolderRefused
from mrtasks.output import OwnedFolder, Owner, describe_folder, read_marker
from mrtasks.rewards.parsing import chat_template_sha256, template_prefills_think
from training.config import (
    EXPLICIT_KEYS,
    MissingDataError,
    RunConfig,
    StageSpec,
    dataset_config_name,
    list_recipes,
    load_recipe_file,
    parse_overrides,
    parse_recipe,
    resolve_recipe_files,
    stage1_tasks,
)

logger = logging.getLogger("training.run")

SUMMARY_FILE = "training_summary.json"
REWARD_LOG_FILE = "reward_log.jsonl"
SETTINGS_FILE = "run_settings.json"
DIVERGED_FILE = "diverged.json"  # a stage whose loss or weights went NaN/inf: its checkpoints cannot resume

# Exit codes (documented in --help and the README; the build's table is the model).
EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_DATA, EXIT_OUTPUT, EXIT_MODEL, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 5, 130
EXIT_CODES = {
    EXIT_OK: "success (or nothing left to do: the stage is finished with these settings)",
    EXIT_FAILED: "training itself failed: it diverged (a NaN/inf loss or weights: one line, nothing saved as final), "
                 "or an unexpected error (a bug, or the hardware: the traceback is printed)",
    EXIT_USAGE: "bad command line or recipe (unknown key, wrong type, batch sizes that do not divide, bf16 without a GPU)",
    EXIT_DATA: "dataset missing, empty or unreadable, or no prompts left after filtering",
    EXIT_OUTPUT: "output folder refused: not a folder, not writable, a model folder, a dataset build, files training "
                 "did not write, another run writing into it, or a stage trained with other settings",
    EXIT_MODEL: "model path missing or model/tokenizer not loadable",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C, SIGTERM); checkpoints are kept, rerun the same command to resume",
}

# What a stage folder may hold: TRL's checkpoints and logs, the final model and tokenizer, our logs.
STAGE_FILES = (
    "checkpoint-*/", "runs/", "completions/", "config.json", "generation_config.json", "model.safetensors",
    "model-*.safetensors", "model.safetensors.index.json", "pytorch_model*.bin", "adapter_*", "tokenizer.json",
    "tokenizer_config.json", "special_tokens_map.json", "vocab.json", "merges.txt", "added_tokens.json",
    "chat_template.jinja", "chat_template.json", "tokenizer.model", "training_args.bin", "README.md",
    "trainer_state.json", "all_results.json", "train_results.json", "eval_results.json",
    REWARD_LOG_FILE, f"{REWARD_LOG_FILE}.tmp", SUMMARY_FILE, SETTINGS_FILE, DIVERGED_FILE,
)


def _legacy_stage(folder: Path) -> bool:
    """A stage written before the owner marker: it holds our logs or TRL's checkpoints."""
    return (folder / REWARD_LOG_FILE).is_file() or (folder / SUMMARY_FILE).is_file() or any(
        folder.glob("checkpoint-*/trainer_state.json"))


STAGE_OWNER = Owner("training.run", STAGE_FILES, "the stage folder", _legacy_stage)
# Settings that change where logs and checkpoints go or how often, not what is trained: they may
# differ between a run and its resume.
UNCHECKED_SETTINGS = frozenset({
    "logging_steps", "logging_first_step", "logging_strategy", "logging_dir", "logging_nan_inf_filter",
    "report_to", "run_name", "project", "trackio_space_id", "save_steps", "save_strategy", "save_total_limit",
    "push_to_hub", "hub_model_id", "hub_strategy", "hub_token", "hub_private_repo", "output_dir",
    "overwrite_output_dir", "disable_tqdm", "log_completions", "num_completions_to_print", "log_level",
    "log_level_replica", "log_on_each_node", "dataloader_num_workers", "dataloader_pin_memory",
    "dataloader_persistent_workers", "eval_steps", "eval_strategy", "per_device_eval_batch_size",
    "vllm_gpu_memory_utilization", "wandb_log_unique_prompts",
})


class RunError(Exception):
    """An everyday failure reported as one line with its exit code (no traceback)."""

    code = EXIT_FAILED


class DataError(RunError, ValueError):
    """The dataset cannot be trained on (missing, empty, missing columns, nothing left after filtering)."""

    code = EXIT_DATA


class ModelError(RunError):
    code = EXIT_MODEL


class OutputError(RunError):
    code = EXIT_OUTPUT


class Interrupted(RunError):
    code = EXIT_INTERRUPTED


class ConfigError(RunError):
    code = EXIT_USAGE


class TrainingFailed(RunError):
    """Training ran but its result is unusable (NaN/inf loss or weights): not saved as the stage's final model."""

    code = EXIT_FAILED


def looks_local(name: str) -> bool:
    """True when `name` is meant as a local path rather than a Hub id (`org/name`)."""
    return (
        Path(name).exists()
        or name.startswith((".", "/", "~"))
        or name.endswith("/")
        or name.count("/") > 1
        or os.sep != "/" and os.sep in name
    )


def check_local_path(name: str, what: str, error: type[RunError]) -> None:
    if looks_local(name) and not Path(name).expanduser().exists():
        raise error(f"{what} {name} does not exist")


def is_main_process() -> bool:
    """The process that checks, locks and marks the output (rank 0; every process without a launcher)."""
    return os.environ.get("RANK", "0") == "0"


def check_root(root: Path) -> None:
    """The run's root folder holds stage folders: it must be a folder, and never a model folder, a
    dataset build or another command's output (stage folders would land inside them)."""
    if root.exists() and not root.is_dir():
        raise OutputError(f"--output-dir {root} exists and is not a folder")
    what = describe_folder(root) if root.is_dir() else None
    if what and what != "the output of training.run":
        raise OutputError(f"--output-dir {root} is {what}; choose another --output-dir")
    ancestor = root.parent
    while not ancestor.exists() and ancestor != ancestor.parent:
        ancestor = ancestor.parent
    if not ancestor.is_dir():
        raise OutputError(f"--output-dir {root}: {ancestor} is not a folder")
    if not os.access(ancestor, os.W_OK | os.X_OK):
        raise OutputError(f"--output-dir {root} is not writable ({ancestor})")


def _nothing_trained(folder: Path) -> bool:
    return not (folder / SUMMARY_FILE).exists() and not any(folder.glob("checkpoint-*"))


def stage_folder(out: Path) -> OwnedFolder:
    """The guard of one stage folder; a folder this run created goes again if it fails before a checkpoint."""
    return OwnedFolder(out, STAGE_OWNER, discard_on_error=_nothing_trained)


# --- data ----------------------------------------------------------------------------------------


def reward_columns() -> tuple[str, ...]:
    """Columns the rewards may read (besides prompt/completions): `id`, `task` and every registered
    task's own columns (from the task registry); every other column is dropped."""
    from mrtasks.tasks import get_task, list_tasks

    columns = ["id", "task"]
    for name in list_tasks():
        columns += [c for c in get_task(name).columns() if c not in columns]
    return tuple(columns)


def resample_per_epoch(run: RunConfig, static: Any, seed: int) -> tuple[Any, Any]:
    """The Stage I rows redrawn each epoch (`resample_per_epoch`): the trajectories of the rows kept
    by `load_prompts` (same problems, same filtering), rebuilt by the task with a seed of
    (seed, epoch); returns (dataset, the TrainerCallback that moves it to each epoch). Masked-Then-Fill
    draws its masks at random (the default picks the top-ranked formulas, which never change)."""
    from datasets import load_dataset

    from mrtasks.tasks import MASKED_THEN_FILL, TRAJECTORIES, get_task
    from mrtasks.tasks.resample import epoch_callback, resampled_dataset

    try:
        trajectories = load_dataset(run.dataset, TRAJECTORIES, split=run.train_split)
    except Exception as e:  # noqa: BLE001 - one line, not a traceback
        raise DataError(f"resample_per_epoch needs the {TRAJECTORIES} config of {run.dataset}: {first_line(e, named=True)}") from None
    spec = get_task(run.task)
    config = spec.config_cls(selection="random") if run.task == MASKED_THEN_FILL else None
    ds, resampler = resampled_dataset(trajectories, run.task, seed, config, ids=static["id"], columns=static.column_names)
    logger.info("resampling %d %s rows per epoch from %s (seed %d)", len(ds), run.task, TRAJECTORIES, seed)
    return ds, epoch_callback(resampler)


def load_prompts(run: RunConfig, split: str, tokenizer: Any) -> tuple[Any, dict[str, int]]:
    """Load one split, keep the prompt and reward columns, drop over-long prompts; return (dataset, counts)."""
    from datasets import load_dataset

    config = dataset_config_name(run)
    check_local_path(run.dataset, "dataset folder", DataError)
    try:
        ds = load_dataset(run.dataset, config, split=split)
    except Exception as e:  # noqa: BLE001 - missing/empty/corrupt data: one line, not a traceback
        raise DataError(f"cannot load {run.dataset} [{config}/{split}]: {first_line(e, named=True)}") from None
    if "prompt" not in ds.column_names:
        raise DataError(f"{run.dataset} [{config}/{split}] has no `prompt` column: {ds.column_names}")
    if len(ds) == 0:
        raise DataError(f"{run.dataset} [{config}/{split}] is empty")
    check_rows(ds, run, config, split)
    keep = ["prompt", *(c for c in reward_columns() if c in ds.column_names)]
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


def check_rows(ds: Any, run: RunConfig, config: str, split: str) -> None:
    """Every row must be a row of the config's task its reward can score (a prompt that is a chat,
    the task's columns present and typed, its `task` column naming the config): else one line naming
    the first bad row, before any tokenizing or training."""
    from mrtasks.rewards.rows import row_problem
    from mrtasks.tasks import list_tasks

    is_task = config in list_tasks()
    for i, row in enumerate(ds):
        problem = row_problem(row, config) if is_task else None
        if problem is None:
            problem = _prompt_problem(row.get("prompt"))
        if problem:
            raise DataError(f"{run.dataset} [{config}/{split}] row {i} (id {row.get('id')!r}): {problem}")


def _prompt_problem(prompt: Any) -> str | None:
    if prompt is None:
        return "'prompt' is null"
    if isinstance(prompt, str):
        return None if prompt else "'prompt' is empty"
    if not isinstance(prompt, list) or not prompt:
        return "'prompt' is not a list of chat messages"
    for m in prompt:
        if not isinstance(m, dict) or not isinstance(m.get("role"), str) or not isinstance(m.get("content"), str):
            return "'prompt' has a message without a string role and content"
    return None


# --- chat template, stop tokens, rewards ---------------------------------------------------------


def apply_stop_tokens(tokenizer: Any, stop_tokens: list[str]) -> list[int]:
    """Make the first stop token the tokenizer's eos (TRL stops and masks at eos) and return all ids."""
    if not stop_tokens:
        return [tokenizer.eos_token_id] if tokenizer.eos_token_id is not None else []
    ids = []
    for token in stop_tokens:
        token_id = tokenizer.convert_tokens_to_ids(token)
        if token_id is None or tokenizer.convert_ids_to_tokens(token_id) != token:
            raise ConfigError(f"stop token {token!r} is not a token of the tokenizer of {tokenizer.name_or_path}")
        ids.append(token_id)
    if tokenizer.eos_token != stop_tokens[0]:
        logger.info("tokenizer eos %r -> %r (recipe stop_tokens)", tokenizer.eos_token, stop_tokens[0])
        tokenizer.eos_token = stop_tokens[0]
    return ids


def reward_options(run: RunConfig, name: str, think_prefilled: bool) -> dict[str, Any]:
    """The options a reward takes from the recipe: `think_prefilled` for all, `partial_credit` for the
    rewards that take it (`masked_then_fill`, and `process`, which hands it on)."""
    from mrtasks.rewards.registry import reward_options as accepted

    options: dict[str, Any] = {"think_prefilled": think_prefilled}
    if run.partial_credit is not None and "partial_credit" in accepted(name):
        options["partial_credit"] = run.partial_credit
    return options


def build_reward_funcs(run: RunConfig, think_prefilled: bool) -> tuple[list[Any], dict[str, dict[str, Any]]]:
    """Reward functions from the `mrtasks.rewards` registry configured with their options, named so
    TRL logs `rewards/<name>/mean`; also returns the options each got (for the run log)."""
    from mrtasks.rewards import get_reward

    funcs, used = [], {}
    for name in run.reward_funcs:
        options = reward_options(run, name, think_prefilled)
        fn = get_reward(name, **options)

        def reward(completions: list, _fn: Any = fn, **columns: Any) -> list[float | None]:
            return _fn(completions, **columns)

        reward.__name__ = reward.__qualname__ = name
        funcs.append(reward)
        used[name] = options
    return funcs, used


# --- batch mapping -------------------------------------------------------------------------------


def world_size() -> int:
    return int(os.environ.get("WORLD_SIZE", "1"))


def under_launcher() -> bool:
    """True under `accelerate launch` / `torchrun` (even with one process): a child process started
    from here would run without the launcher's DeepSpeed/DDP setup."""
    return world_size() > 1 or "LOCAL_RANK" in os.environ or any(k.startswith("ACCELERATE_") for k in os.environ)


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


def optimizer_steps_per_rollout(grpo: dict[str, Any], n_procs: int) -> int | None:
    """Optimizer steps TRL takes on one generation batch (None when it does not divide evenly)."""
    per_device = grpo.get("per_device_train_batch_size", 8)
    ga = grpo.get("gradient_accumulation_steps", 1)
    micro = per_device * n_procs
    if "generation_batch_size" in grpo:
        micro_batches = grpo["generation_batch_size"] / micro
    else:
        micro_batches = grpo.get("steps_per_generation") or ga
    steps = micro_batches / ga
    return int(steps) if steps >= 1 and float(steps).is_integer() else None


def check_save_steps(grpo: dict[str, Any], n_procs: int) -> None:
    """`save_steps` must be a multiple of the optimizer steps per rollout: a checkpoint taken
    mid-rollout resumes with a fresh generation batch, so the run would differ from an unbroken one."""
    if str(grpo.get("save_strategy", "steps")).lower().removeprefix("savestrategy.") != "steps":
        return
    save_steps = grpo.get("save_steps", 500)
    per_rollout = optimizer_steps_per_rollout(grpo, n_procs)
    if per_rollout is None:
        raise ValueError("the generation batch is not a whole number of optimizer steps; check the batch sizes")
    if isinstance(save_steps, float) and save_steps < 1:
        return  # a fraction of the run: TRL rounds it; not checked
    if int(save_steps) % per_rollout:
        raise ValueError(
            f"save_steps={save_steps:g} is not a multiple of the {per_rollout} optimizer steps per rollout "
            f"(a checkpoint mid-rollout regenerates on resume); use a multiple of {per_rollout}"
        )


def _cuda() -> bool:
    import torch

    return torch.cuda.is_available()


def choose_vllm(setting: str) -> bool:
    """`auto`: vLLM when installed and a CUDA device is present; otherwise transformers generation."""
    if setting == "auto":
        import torch

        return importlib.util.find_spec("vllm") is not None and torch.cuda.is_available()
    return setting == "vllm"


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


def _fmt(value: Any) -> str:
    return f"{value:.4f}" if isinstance(value, (int, float)) and not isinstance(value, bool) else str(value)


def _nonfinite(value: Any) -> bool:
    return isinstance(value, float) and not math.isfinite(value)


# Logged values that mean the weights are being destroyed when they are NaN/inf (grad_norm: not under
# fp16, whose loss scaler skips overflowing steps and logs their inf norm).
DIVERGENCE_KEYS = ("loss", "grad_norm")


def reward_log_callback(path: Path) -> Any:
    """A TrainerCallback that logs each reward's mean and appends every log record to a JSONL file;
    a NaN/inf loss (or gradient norm) stops training and is kept in `diverged` (the stage then fails)."""
    from transformers import TrainerCallback

    class RewardLog(TrainerCallback):
        diverged: str | None = None

        def on_log(self, args, state, control, logs=None, **kwargs):  # noqa: ANN001
            if not logs:
                return
            keys = [k for k in DIVERGENCE_KEYS if not (k == "grad_norm" and getattr(args, "fp16", False))]
            bad = [k for k in keys if _nonfinite(logs.get(k))]
            if bad and self.diverged is None:
                self.diverged = f"{bad[0]} is {logs[bad[0]]} at step {state.global_step}"
                control.should_training_stop = True
            if not state.is_world_process_zero:
                return
            for prefix in ("rewards/", "eval_rewards/"):
                means = {k.split("/")[1]: v for k, v in logs.items() if k.startswith(prefix) and k.endswith("/mean")}
                if means:
                    logger.info(
                        "step %d %s: %s", state.global_step, "eval" if prefix.startswith("eval") else "train",
                        ", ".join(f"{name}={_fmt(v)}" for name, v in means.items()),
                    )
            with path.open("a") as f:
                f.write(json.dumps({"step": state.global_step, **logs}, default=str) + "\n")

    return RewardLog()


def trim_reward_log(path: Path, step: int) -> int:
    """Drop the log records after `step` (an interrupted run's steps past the checkpoint a resume
    starts from, which it logs again); the file is replaced atomically. Returns how many were dropped."""
    if not path.is_file():
        return 0
    kept, dropped = [], 0
    for line in path.read_text().splitlines(keepends=True):
        try:
            record_step = json.loads(line).get("step")
        except (ValueError, AttributeError):
            record_step = None
        if isinstance(record_step, int) and record_step > step:
            dropped += 1
        else:
            kept.append(line)
    if dropped:
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text("".join(kept))
        os.replace(tmp, path)
    return dropped


def checkpoint_step(checkpoint: str) -> int | None:
    """The global step a checkpoint holds (its trainer_state.json, else its folder name)."""
    try:
        return int(json.loads((Path(checkpoint) / "trainer_state.json").read_text())["global_step"])
    except (OSError, ValueError, KeyError, TypeError):
        pass
    try:
        return int(Path(checkpoint).name.rsplit("-", 1)[1])
    except (IndexError, ValueError):
        return None


def nonfinite_weights(model: Any) -> list[str]:
    """Names of the parameters holding NaN or inf (sharded ZeRO-3 parameters are not checked)."""
    import torch

    bad = []
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.numel() == 0 or hasattr(p, "ds_id"):
                continue
            if not bool(torch.isfinite(p).all()):
                bad.append(name)
    return bad


def check_stop_tokens(run: RunConfig) -> None:
    """Stop tokens the model's tokenizer lacks, refused before anything trains (a local model only:
    a Hub model's tokenizer is checked when the stage loads it, still before training)."""
    folder = Path(run.model_name_or_path).expanduser()
    if not run.stop_tokens or not any((folder / name).is_file() for name in ("tokenizer.json", "tokenizer_config.json")):
        return  # a Hub model, or a folder a stage has not written yet (Stage II after Stage I)
    try:
        tokenizer = load_tokenizer(run)
    except ModelError:
        return  # the stage reports a tokenizer it cannot load when it loads it (exit 5)
    apply_stop_tokens(tokenizer, run.stop_tokens)


def semantics(args: Any, stop_ids: list[int], think: bool, options: dict[str, Any], run: RunConfig) -> dict[str, Any]:
    """The settings that define the objective and the samples, as the trainer will use them."""
    return {
        "loss_type": args.loss_type,
        "beta": args.beta,
        "use_bias_correction_kl": args.use_bias_correction_kl,
        "vllm_importance_sampling_correction": args.vllm_importance_sampling_correction,
        "vllm_importance_sampling_mode": args.vllm_importance_sampling_mode,
        "scale_rewards": args.scale_rewards,
        "epsilon": args.epsilon,
        "num_iterations": args.num_iterations,
        "temperature": args.temperature,
        "top_p": args.top_p,
        "top_k": args.top_k,
        "stop_token_ids": stop_ids,
        "think_prefilled": think,
        "reward_options": options,
        "model_revision": run.model_revision,
        "gradient_checkpointing": args.gradient_checkpointing,
        "bf16": args.bf16,
        "dtype": run.dtype,
    }


def cuda_peak_memory_gib() -> float | None:
    """Peak GPU memory this process allocated through torch (None without CUDA)."""
    import torch

    if not torch.cuda.is_available():
        return None
    return round(torch.cuda.max_memory_allocated() / 2**30, 3)


# --- one stage -----------------------------------------------------------------------------------


def load_tokenizer(run: RunConfig) -> Any:
    from transformers import AutoTokenizer

    check_local_path(run.model_name_or_path, "model path", ModelError)
    revision = None if Path(run.model_name_or_path).exists() else run.model_revision
    try:
        return AutoTokenizer.from_pretrained(run.model_name_or_path, revision=revision)
    except Exception as e:  # noqa: BLE001 - offline, missing, bad revision: one line
        raise ModelError(f"cannot load the tokenizer of {run.model_name_or_path}: {first_line(e, named=True)}") from None


def stage_settings(spec: StageSpec) -> dict[str, Any]:
    """What decides a stage's result: our recipe keys, the GRPOConfig keys the recipe and overrides
    set (before the batch mapping, which follows from them), the data and the starting model."""
    run = spec.run
    data_fp = None
    stats = Path(run.dataset) / "build_stats.json"
    if read_marker(Path(run.dataset)) is not None:
        try:
            data_fp = json.loads(stats.read_text()).get("fingerprint")
        except (OSError, ValueError):
            data_fp = None
    init_weights = None
    try:
        init_weights = json.loads((Path(run.model_name_or_path) / SUMMARY_FILE).read_text()).get("final_weights_sha256")
    except (OSError, ValueError):
        pass
    ours = {k: v for k, v in dataclasses.asdict(run).items() if k not in ("dataset", "model_name_or_path")}
    return {
        "run": ours,
        "grpo": {k: v for k, v in sorted(spec.grpo.items()) if k not in UNCHECKED_SETTINGS},
        "dataset": {"path": run.dataset, "fingerprint": data_fp},
        "init_model": {"path": run.model_name_or_path, "weights_sha256": init_weights},
    }


def settings_fingerprint(settings: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(settings, sort_keys=True, default=str).encode()).hexdigest()


def settings_diff(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """`key: old -> new` for every setting that differs (the data and the starting model by content
    when both runs recorded it, else by path)."""
    diffs = []
    for section in ("run", "grpo"):
        a, b = old.get(section) or {}, new.get(section) or {}
        for key in sorted(set(a) | set(b)):
            if key in UNCHECKED_SETTINGS:
                continue
            if json.dumps(a.get(key), default=str) != json.dumps(b.get(key), default=str):
                diffs.append(f"{key}: {a.get(key, '(recipe default)')!r} -> {b.get(key, '(recipe default)')!r}")
    for section, content in (("dataset", "fingerprint"), ("init_model", "weights_sha256")):
        a, b = old.get(section) or {}, new.get(section) or {}
        if a.get(content) and b.get(content):
            if a[content] != b[content]:
                diffs.append(f"{section}: {a.get('path')} ({a[content][:12]}) -> {b.get('path')} ({b[content][:12]})")
        elif a.get("path") != b.get("path"):
            diffs.append(f"{section}: {a.get('path')} -> {b.get('path')}")
    return diffs


def check_stage_settings(spec: StageSpec, output_dir: Path) -> dict[str, Any] | None:
    """Compare the requested settings with what the stage folder was trained with. Returns the
    finished stage's summary when it can be skipped, None when it must (re)train; a stage trained
    with other settings is an `OutputError` naming them and what to do."""
    settings = stage_settings(spec)
    summary_path, settings_path = output_dir / SUMMARY_FILE, output_dir / SETTINGS_FILE
    finished = summary_path.is_file()
    started = finished or last_checkpoint(output_dir) is not None
    if not started:
        return None
    recorded = None
    try:
        recorded = json.loads(settings_path.read_text()).get("settings")
    except (OSError, ValueError, AttributeError):
        recorded = None
    state = "finished" if finished else f"interrupted at {Path(last_checkpoint(output_dir) or '').name}"
    if recorded is None and finished:  # a stage from before run_settings.json: compare what its summary kept
        try:
            old_run = json.loads(summary_path.read_text()).get("run_config") or {}
        except (OSError, ValueError):
            old_run = {}
        recorded = {"run": {k: v for k, v in old_run.items() if k not in ("dataset", "model_name_or_path")},
                    "dataset": {"path": old_run.get("dataset")}, "init_model": {"path": old_run.get("model_name_or_path")}}
        settings = {**settings, "grpo": {}}
        logger.warning("%s has no %s (an older run): only its recipe keys are compared", output_dir, SETTINGS_FILE)
    elif recorded is None:
        logger.warning("%s has no %s (an older run): resuming without checking its settings", output_dir, SETTINGS_FILE)
        return None
    diffs = settings_diff(recorded, settings)
    if diffs:
        shown = "; ".join(diffs[:4]) + (f"; and {len(diffs) - 4} more" if len(diffs) > 4 else "")
        raise OutputError(
            f"{output_dir} ({state}) was trained with other settings ({shown}); rerun with the same settings, "
            f"add --overwrite to train this stage again from the start, or choose another --output-dir"
        )
    if finished:
        return json.loads(summary_path.read_text())
    return None


def write_settings(spec: StageSpec, output_dir: Path) -> None:
    settings = stage_settings(spec)
    record = {"fingerprint": settings_fingerprint(settings), "settings": settings}
    (output_dir / SETTINGS_FILE).write_text(json.dumps(record, indent=2, sort_keys=True, default=str) + "\n")


def run_stage(spec: StageSpec, output_dir: Path, overwrite: bool = False) -> dict[str, Any]:
    """Train one stage into its guarded folder (resuming from its checkpoints when the settings match)."""
    if not is_main_process():  # the main process checks, locks and marks the folder for all of them
        return _run_stage(spec, output_dir)
    try:
        with stage_folder(output_dir) as folder:
            if overwrite:
                folder.remove_own()
            return _run_stage(spec, output_dir)
    except FolderRefused as e:
        raise OutputError(str(e)) from None


def _run_stage(spec: StageSpec, output_dir: Path) -> dict[str, Any]:
    """Train one stage into `output_dir` (resuming if it has checkpoints) and save the final model there."""
    from trl import GRPOConfig, GRPOTrainer

    run = spec.run
    summary_path = output_dir / SUMMARY_FILE
    finished = check_stage_settings(spec, output_dir)
    if finished is not None:
        logger.info("%s is finished with these settings (%s): skipping", output_dir, SUMMARY_FILE)
        return finished
    if (output_dir / DIVERGED_FILE).is_file():
        try:
            why = json.loads((output_dir / DIVERGED_FILE).read_text()).get("reason")
        except (OSError, ValueError, AttributeError):
            why = None
        raise TrainingFailed(
            f"{output_dir} diverged in an earlier run ({why or 'NaN/inf loss or weights'}): its checkpoints cannot "
            "resume; rerun with --overwrite (and a lower learning_rate) to train it again from the start"
        )
    if spec.grpo.get("bf16") and not _cuda():
        raise ConfigError(f"{spec.source}: bf16=true needs a GPU and this machine has no CUDA device; on a CPU pass "
                          "bf16=false (and keep dtype=float32)")

    grpo = paper_batch_to_trl(run, spec.grpo, world_size())
    use_vllm = choose_vllm(run.generation)
    grpo["use_vllm"] = use_vllm
    if use_vllm:
        grpo.setdefault("vllm_mode", "colocate")
    local_model = Path(run.model_name_or_path).exists()
    init_kwargs = dict(grpo.get("model_init_kwargs") or {})
    init_kwargs.setdefault("dtype", run.dtype)
    if run.model_revision and not local_model:
        init_kwargs.setdefault("revision", run.model_revision)
    grpo["model_init_kwargs"] = init_kwargs

    tokenizer = load_tokenizer(run)
    stop_ids = apply_stop_tokens(tokenizer, run.stop_tokens)
    if use_vllm and stop_ids:
        # vLLM stops at the model's own eos only; TRL passes generation_kwargs on to SamplingParams.
        kwargs = dict(grpo.get("generation_kwargs") or {})
        kwargs.setdefault("stop_token_ids", stop_ids)
        grpo["generation_kwargs"] = kwargs
    think = template_prefills_think(tokenizer)
    reward_funcs, options = build_reward_funcs(run, think)
    grpo["output_dir"] = str(output_dir)
    try:
        args = GRPOConfig(**grpo)
    except ValueError as e:
        raise ConfigError(f"{spec.source}: GRPOConfig rejects it: {first_line(e, named=True)}") from None

    train_ds, train_counts = load_prompts(run, run.train_split, tokenizer)
    callbacks = [reward_log_callback(output_dir / REWARD_LOG_FILE)]
    if run.resample_per_epoch:
        train_ds, callback = resample_per_epoch(run, train_ds, args.seed)
        callbacks.append(callback)
    eval_ds = None
    if run.eval_split and str(args.eval_strategy) not in ("no", "IntervalStrategy.NO"):
        eval_ds, _ = load_prompts(run, run.eval_split, tokenizer)

    sem = semantics(args, stop_ids, think, options, run)
    logger.info(
        "stage %d (%s) from %s: rewards %s, generation=%s, generation_batch_size=%d completions, "
        "steps_per_generation=%d, gradient_accumulation_steps=%d, per_device_train_batch_size=%d, processes=%d",
        run.stage, spec.source, run.model_name_or_path, run.reward_funcs, "vllm" if use_vllm else "transformers",
        args.generation_batch_size, args.steps_per_generation, args.gradient_accumulation_steps,
        args.per_device_train_batch_size, world_size(),
    )
    logger.info("objective and sampling: %s", json.dumps(sem, default=str))
    if is_main_process():
        write_settings(spec, output_dir)
    trainer = GRPOTrainer(
        model=run.model_name_or_path,
        reward_funcs=reward_funcs,
        args=args,
        train_dataset=train_ds,
        eval_dataset=eval_ds,
        processing_class=tokenizer,
        callbacks=callbacks,
    )
    init_fingerprint = weights_fingerprint(trainer.model)
    resume = last_checkpoint(output_dir)
    if resume:
        logger.info("resuming from %s", resume)
        step = checkpoint_step(resume)
        if step is not None and trainer.is_world_process_zero():
            dropped = trim_reward_log(output_dir / REWARD_LOG_FILE, step)
            if dropped:
                logger.info("dropped %d %s records after step %d (logged again from the checkpoint)",
                            dropped, REWARD_LOG_FILE, step)
    start = time.time()
    try:
        result = trainer.train(resume_from_checkpoint=resume)
    except KeyboardInterrupt:
        saved = last_checkpoint(output_dir)
        where = f"{Path(saved).name} is saved in {output_dir}" if saved else f"no checkpoint was saved yet in {output_dir}"
        raise Interrupted(f"interrupted at step {trainer.state.global_step}; {where}: rerun the same command to "
                          "resume") from None
    diverged = callbacks[0].diverged
    bad = nonfinite_weights(trainer.model)
    if diverged or bad:
        what = f"{len(bad)} weight tensors hold NaN/inf (e.g. {bad[0]})" if bad else diverged
        if diverged and bad:
            what = f"{diverged}; {what}"
        if trainer.is_world_process_zero():
            record = {"reason": what, "global_step": trainer.state.global_step}
            (output_dir / DIVERGED_FILE).write_text(json.dumps(record, indent=2) + "\n")
        raise TrainingFailed(
            f"training diverged in {output_dir}: {what}; nothing was saved as the final model (lower "
            f"learning_rate or check beta, then rerun with --overwrite)"
        )
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
        "semantics": sem,
        "chat_template_sha256": chat_template_sha256(tokenizer),
        "cuda_peak_memory_gib": cuda_peak_memory_gib(),
        "pid": os.getpid(),
        "run_config": dataclasses.asdict(run),
    }
    if trainer.is_world_process_zero():
        summary_path.write_text(json.dumps(summary, indent=2, default=str) + "\n")
    trainer.accelerator.wait_for_everyone()
    del trainer
    return summary


# --- CLI -----------------------------------------------------------------------------------------


def output_root(recipe: str, output_root: str | None) -> Path:
    if output_root:
        return Path(output_root)
    if recipe.endswith((".yaml", ".yml")):
        return Path("outputs") / Path(recipe).stem
    return Path("outputs") / recipe.split("/")[0]


def build_specs(
    recipe: str, stage: str, task: str, dataset: str | None, output_dir: str | None, overrides: dict[str, str]
) -> list[tuple[StageSpec, Path]]:
    """Resolve recipes, apply overrides, chain Stage II to Stage I's output; type-check everything up front."""
    files = resolve_recipe_files(recipe, stage, task)
    if "output_dir" in overrides and len(files) > 1:
        raise ValueError("output_dir=... names one stage's folder; with several stages use --output-dir ROOT")
    root = output_root(recipe, output_dir)
    specs: list[tuple[StageSpec, Path]] = []
    for label, path in files:
        raw = load_recipe_file(path)
        stage_overrides = dict(overrides)
        if dataset:
            stage_overrides["dataset"] = dataset
        out_dir = Path(stage_overrides.pop("output_dir", None) or raw.pop("output_dir", None) or root / label)
        stage1_dir = root / f"stage1_{task}"
        is_stage2 = label.startswith("stage2_")
        if is_stage2 and specs:
            # Stage II starts from Stage I's final save in this run (an override names Stage I's base model).
            stage_overrides["model_name_or_path"] = str(specs[0][1])
        elif is_stage2 and "model_name_or_path" not in overrides:
            # --stage 2 alone: from the final save of an earlier Stage I run under the same root.
            stage_overrides["model_name_or_path"] = str(stage1_dir)
            if not (stage1_dir / "config.json").is_file():
                raise FileNotFoundError(
                    f"Stage II starts from Stage I's final model, but {stage1_dir} has none: run --stage 1 "
                    f"(or --stage all) first, or pass model_name_or_path=..."
                )
        spec = parse_recipe(raw, source=str(path), overrides=stage_overrides)
        missing = [k for k in EXPLICIT_KEYS if k not in raw]
        if missing:
            raise ValueError(f"{path}: a recipe must set {missing} itself (TRL's defaults change the objective)")
        if not spec.run.model_name_or_path:
            raise ValueError(f"{path}: model_name_or_path is not set")
        mapped = paper_batch_to_trl(spec.run, spec.grpo, world_size())  # must divide on this many processes
        check_save_steps(mapped, world_size())
        specs.append((spec, out_dir))
    return specs


def _epilog() -> str:
    lines = ["overrides (key=value, typed by TRL's parser; any RunConfig field below or any trl.GRPOConfig field):"]
    for f in dataclasses.fields(RunConfig):
        default = f.default if f.default_factory is dataclasses.MISSING else f.default_factory()
        lines.append(f"  {f.name:<22} {f.metadata['help']} (default: {default!r})")
    lines.append("  <any GRPOConfig field> e.g. max_steps=10 learning_rate=1e-5 num_generations=8 save_steps=16 report_to=wandb")
    lines += ["", "exit codes:"] + [f"  {code}  {text}" for code, text in EXIT_CODES.items()]
    lines += [
        "",
        "recipes: " + ", ".join(list_recipes()),
        "",
        "examples:",
        "  python -m training.run --recipe qwen2.5-3b --stage all --task masked_then_fill",
        "  python -m training.run --recipe r1-distill-1.5b --stage baseline --dataset path/to/built max_steps=50",
        "  accelerate launch --config_file training/accelerate/zero2.yaml -m training.run --recipe qwen2.5-3b --stage 1",
        "  (under accelerate launch, run --stage 1 and --stage 2 as two launches)",
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
        help="1: Stage I only; 2: Stage II from Stage I's saved output; all: Stage I then Stage II, each in its "
        "own process (default); baseline: the GRPO baseline (Stage II recipe from the base model)",
    )
    p.add_argument(
        "--task",
        default=None,
        help="the Stage I task, one of the task registry's stage-1 tasks (default: the first, masked_then_fill)",
    )
    p.add_argument("--dataset", help="Hub id or local folder built by `python -m mrtasks.build` (default: mr-rlvr/tasks)")
    p.add_argument(
        "--output-dir",
        help="root folder for this run's stages (default outputs/<recipe>); each stage writes "
        "<root>/stage1_<task>, <root>/stage2_<task> or <root>/grpo_baseline",
    )
    p.add_argument("--overwrite", action="store_true",
                   help="delete what training wrote in each stage's folder (checkpoints, model, logs; never other "
                        "files) and train it again from the start, e.g. after changing a setting")
    p.add_argument("--dry-run", action="store_true",
                   help="resolve and type-check the recipes, build each GRPOConfig, print them, exit")
    p.add_argument("--list-recipes", action="store_true", help="list the bundled recipes and exit")
    p.add_argument("-v", "--verbose", action="store_true", help="DEBUG logging for this project's loggers only")
    p.add_argument("overrides", nargs="*", metavar="key=value", help="recipe overrides (see below)")
    return p.parse_args(argv)


def setup_logging(verbose: bool) -> None:
    """INFO (DEBUG with -v) for this project's loggers; other libraries stay at WARNING.
    (`mrtasks.logs.configure_logging` with timestamps: a stage runs for hours.)"""
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for name in PROJECT_LOGGERS:
        logging.getLogger(name).setLevel(logging.DEBUG if verbose else logging.INFO)


def dry_run_config(spec: StageSpec, out: Path) -> dict[str, Any]:
    """The stage's GRPOConfig as the installed TRL/transformers build it (CPU-safe: use_cpu without CUDA)."""
    import torch
    from trl import GRPOConfig

    grpo = paper_batch_to_trl(spec.run, spec.grpo, world_size())
    grpo["use_vllm"] = False
    if not torch.cuda.is_available():
        grpo["use_cpu"] = True
    args = GRPOConfig(output_dir=str(out), **grpo)
    return {k: getattr(args, k) for k in grpo if k != "use_cpu"} | {
        "steps_per_generation": args.steps_per_generation,
        "gradient_accumulation_steps": args.gradient_accumulation_steps,
    }


def _child_argv(args: argparse.Namespace, stage: str, task: str, overrides: list[str]) -> list[str]:
    argv = [sys.executable, "-m", "training.run", "--recipe", args.recipe, "--stage", stage, "--task", task,
            "--output-dir", str(output_root(args.recipe, args.output_dir))]
    if args.dataset:
        argv += ["--dataset", args.dataset]
    if args.verbose:
        argv.append("-v")
    if args.overwrite:
        argv.append("--overwrite")
    return argv + overrides


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    setup_logging(args.verbose)
    if args.list_recipes:
        print("\n".join(list_recipes()))
        return EXIT_OK
    if not args.recipe:
        print("error: --recipe is required (see --help)", file=sys.stderr)
        return EXIT_USAGE
    task = args.task or stage1_tasks()[0]
    try:
        overrides = parse_overrides(args.overrides)
        specs = build_specs(args.recipe, args.stage, task, args.dataset, args.output_dir, overrides)
    except MissingDataError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_DATA
    except (ValueError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    if args.overwrite and under_launcher():
        print("error: --overwrite is not available under a launcher (accelerate launch, torchrun): delete the stage "
              "folder or choose another --output-dir", file=sys.stderr)
        return EXIT_USAGE
    try:
        for spec, _ in specs:
            check_stop_tokens(spec.run)
    except RunError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.code
    if args.dry_run:
        try:
            for spec, out in specs:
                print(json.dumps({"recipe": spec.source, "output_dir": str(out), "run": dataclasses.asdict(spec.run),
                                  "grpo": dry_run_config(spec, out)}, indent=2, default=str))
        except ValueError as e:
            print(f"error: {spec.source}: GRPOConfig rejects it: {first_line(e, named=True)}", file=sys.stderr)
            return EXIT_USAGE
        return EXIT_OK
    try:
        if is_main_process():
            check_root(output_root(args.recipe, args.output_dir))
            for _, out in specs:
                stage_folder(out).check()  # a folder training must not write into is refused before any work
        first = specs[0][0].run
        if first.stage == 1 or args.stage == "baseline":
            check_local_path(first.model_name_or_path, "model path", ModelError)
        check_local_path(first.dataset, "dataset folder", DataError)
    except FolderRefused as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_OUTPUT
    except RunError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.code
    if len(specs) > 1:
        # One process per stage: nothing Stage I allocated (vLLM, reference model, DeepSpeed) survives.
        if under_launcher():
            print("error: under a launcher (accelerate launch, torchrun) run --stage 1 and --stage 2 as two "
                  "launches", file=sys.stderr)
            return EXIT_USAGE
        child_overrides = [o for o in args.overrides if not o.removeprefix("--").startswith("model_name_or_path=")]
        for i, (spec, out) in enumerate(specs):
            stage = "1" if spec.run.stage == 1 else "2"
            extra = args.overrides if i == 0 else child_overrides
            logger.info("stage %s in its own process -> %s", stage, out)
            code = run_child(_child_argv(args, stage, task, extra))
            if code != EXIT_OK:
                return code  # the stage's own process printed why, as its last line
        return EXIT_OK
    spec, out = specs[0]
    previous = signal.signal(signal.SIGTERM, _terminate) if threading.current_thread() is threading.main_thread() else None
    try:
        summary = run_stage(spec, out, overwrite=args.overwrite)
    except RunError as e:
        close_progress_bars()
        print(f"error: {e}", file=sys.stderr)
        return e.code
    except KeyboardInterrupt:
        close_progress_bars()
        print(f"error: interrupted before training started; {out} keeps what it held: rerun the same command",
              file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    logger.info("stage %s done: %s (global_step %s)", spec.run.stage, out, summary.get("global_step"))
    return EXIT_OK


def close_progress_bars() -> None:
    """Close the progress bars an interrupted trainer left open: else they redraw at exit, after the
    error line, which must stay the last line."""
    try:
        from tqdm.std import tqdm
    except ImportError:
        return
    for bar in list(getattr(tqdm, "_instances", ())):
        bar.close()


def _terminate(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt  # SIGTERM ends a stage like Ctrl-C: its checkpoints stay, a rerun resumes


def run_child(argv: list[str]) -> int:
    """Run one stage in its own process and return its exit code. Ctrl-C reaches the child (same
    process group), which reports it; this process only waits, and passes SIGTERM on."""
    proc = subprocess.Popen(argv)
    main_thread = threading.current_thread() is threading.main_thread()
    if main_thread:
        old_int = signal.signal(signal.SIGINT, signal.SIG_IGN)
        old_term = signal.signal(signal.SIGTERM, lambda *_: proc.send_signal(signal.SIGTERM))
    try:
        code = proc.wait()
    finally:
        if main_thread:
            signal.signal(signal.SIGINT, old_int)
            signal.signal(signal.SIGTERM, old_term)
    if code < 0:  # killed by a signal before it could say anything
        print(f"error: the stage's process was killed by signal {-code}", file=sys.stderr)
        return EXIT_INTERRUPTED if -code in (signal.SIGINT, signal.SIGTERM) else EXIT_FAILED
    return code


if __name__ == "__main__":
    sys.exit(main())
