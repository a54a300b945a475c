"""Recipe loading: YAML files -> a typed `RunConfig` (our keys) + `GRPOConfig` keyword arguments.

A recipe is one flat YAML mapping per model and stage (open-r1 style). Each key is either a
`RunConfig` field (what to train on, with which rewards, the paper's batch sizes) or a field of
TRL's `GRPOConfig` (everything the trainer takes). Values from the file and `key=value`
overrides from the command line go through the same check: unknown keys are an error, and
each value is converted to the field's declared type (so `learning_rate: 1e-6`, which PyYAML
reads as a string, becomes a float, and `max_steps=abc` is rejected with the key's name).
"""

from __future__ import annotations

import dataclasses
import difflib
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

RECIPES_DIR = Path(__file__).resolve().parent / "recipes"
STAGE1_TASKS = ("masked_then_fill", "step_reordering")
# Which dataset config a stage trains on.
STAGE2_CONFIG = "outcome"


def _f(default: Any, help: str, **kw: Any) -> Any:
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata={"help": help})
    return field(default=default, metadata={"help": help})


@dataclass
class RunConfig:
    """The keys of a recipe that are ours (everything else goes to TRL's `GRPOConfig`)."""

    model_name_or_path: str = _f("", "base model, Hub id or local folder (Stage II of a two-stage run: Stage I's output)")
    stage: int = _f(1, "1: a Stage I task with its process reward; 2: the outcome reward (also the GRPO baseline)")
    task: str | None = _f(None, "Stage I task and dataset config: masked_then_fill or step_reordering")
    dataset: str = _f("mr-rlvr/tasks", "Hub id or a local folder written by `python -m mrtasks.build`")
    dataset_config: str | None = _f(None, "dataset config; default: the task for Stage I, `outcome` for Stage II")
    train_split: str = _f("train", "training split")
    eval_split: str | None = _f(None, "validation split, used only when eval_strategy is not `no`")
    max_train_samples: int | None = _f(None, "keep the first N prompts after filtering (smoke runs, 1k/3k ablations)")
    reward_funcs: list[str] = _f([], "reward names from mrtasks.rewards: mask_fill, step_order, outcome, process, format")
    max_prompt_length: int | None = _f(
        None, "drop (and count) prompts longer than this many tokens, chat template applied; TRL 1.x has no limit"
    )
    rollout_batch_prompts: int | None = _f(
        None, "verl train_batch_size: prompts per rollout (paper 512); sets generation_batch_size = this x num_generations"
    )
    mini_batch_prompts: int | None = _f(
        None, "verl ppo_mini_batch_size: prompts per optimizer step (paper 64); sets gradient_accumulation_steps"
    )
    use_vllm: str = _f("auto", "auto (vLLM colocate when installed and CUDA is present), true or false")
    dtype: str = _f(
        "float32", "weights dtype for from_pretrained (float32, bfloat16, auto); keep float32 with bf16=true: "
        "bf16 weights round away lr-1e-6 updates"
    )


_RUN_FIELDS = {f.name for f in dataclasses.fields(RunConfig)}


def _grpo_fields() -> dict[str, Any]:
    from trl import GRPOConfig

    hints = typing.get_type_hints(GRPOConfig)
    return {f.name: hints.get(f.name, Any) for f in dataclasses.fields(GRPOConfig) if f.init}


_BOOL = {"true": True, "false": False, "yes": True, "no": False, "1": True, "0": False, "on": True, "off": False}


def _arm_rank(arm: Any, value: Any) -> int:
    """Order in which a union's types are tried: scalars, then str ("3" -> 3 for `int | str`), then
    containers, unless the value is written as a YAML list or mapping."""
    container = typing.get_origin(arm) in (list, dict) or arm in (list, dict)
    if container and isinstance(value, str) and value.strip()[:1] in ("[", "{"):
        return -1
    return 2 if container else 1 if arm is str else 0


def coerce(key: str, value: Any, tp: Any) -> Any:
    """Convert `value` (from YAML or a `key=value` string) to type `tp`, or raise ValueError."""
    origin = typing.get_origin(tp)
    if tp is Any:
        return yaml.safe_load(value) if isinstance(value, str) else value
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        nullable = type(None) in args
        if nullable and (value is None or value in ("null", "~")):
            return None
        errors = []
        for arm in sorted((a for a in args if a is not type(None)), key=lambda a: _arm_rank(a, value)):
            try:
                return coerce(key, value, arm)
            except (ValueError, TypeError) as e:
                errors.append(str(e))
        if nullable and isinstance(value, str) and value.lower() == "none":
            return None  # `none` stays a string where a string is allowed (report_to: none)
        raise ValueError(f"{key}={value!r}: does not match {tp} ({'; '.join(errors)})")
    if origin is typing.Literal:
        if value in typing.get_args(tp):
            return value
        raise ValueError(f"{key}={value!r}: expected one of {typing.get_args(tp)}")
    if tp is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in _BOOL:
            return _BOOL[value.lower()]
        raise ValueError(f"{key}={value!r}: expected a boolean (true/false)")
    if tp is int:
        if isinstance(value, bool):
            raise ValueError(f"{key}={value!r}: expected an integer")
        if isinstance(value, int):
            return value
        if isinstance(value, float) and value.is_integer():
            return int(value)
        if isinstance(value, str):
            try:
                return int(value)
            except ValueError:
                pass
        raise ValueError(f"{key}={value!r}: expected an integer")
    if tp is float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, str):
            try:
                return float(value)
            except ValueError:
                pass
        raise ValueError(f"{key}={value!r}: expected a number")
    if tp is str:
        if isinstance(value, (str, int, float)) and not isinstance(value, bool):
            return str(value)
        raise ValueError(f"{key}={value!r}: expected a string")
    if origin is list or tp is list:
        if isinstance(value, str):
            parsed = yaml.safe_load(value) if value.strip().startswith("[") else [v for v in value.split(",") if v]
            value = parsed
        if not isinstance(value, list):
            raise ValueError(f"{key}={value!r}: expected a list (YAML list or comma-separated)")
        (item_tp,) = typing.get_args(tp) or (Any,)
        return [coerce(key, v, item_tp) for v in value]
    if origin is dict or tp is dict:
        if isinstance(value, str):
            value = yaml.safe_load(value)
        if not isinstance(value, dict):
            raise ValueError(f"{key}={value!r}: expected a mapping")
        return value
    if isinstance(tp, type) and isinstance(value, tp):
        return value
    if isinstance(tp, type) and isinstance(value, str):
        try:  # enums such as IntervalStrategy take their string value
            return tp(value)
        except Exception as e:  # noqa: BLE001 - report as a config error
            raise ValueError(f"{key}={value!r}: cannot convert to {tp.__name__}: {e}") from e
    return value


def parse_overrides(items: list[str]) -> dict[str, str]:
    """`["max_steps=10", "learning_rate=1e-5"]` -> `{"max_steps": "10", ...}` (typed later)."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"override {item!r} is not of the form key=value")
        out[key.strip()] = value
    return out


@dataclass
class StageSpec:
    """One stage, ready to run: our typed config and the typed GRPOConfig keyword arguments."""

    run: RunConfig
    grpo: dict[str, Any]
    source: str
    """Where the recipe came from (for logs)."""


def split_and_check(raw: dict[str, Any], source: str) -> StageSpec:
    """Type-check every key against RunConfig / GRPOConfig and split them."""
    grpo_types = _grpo_fields()
    run_kwargs: dict[str, Any] = {}
    grpo_kwargs: dict[str, Any] = {}
    run_types = typing.get_type_hints(RunConfig)
    for key, value in raw.items():
        if key in _RUN_FIELDS:
            run_kwargs[key] = coerce(key, value, run_types[key])
        elif key in grpo_types:
            grpo_kwargs[key] = coerce(key, value, grpo_types[key])
        else:
            near = difflib.get_close_matches(key, sorted(_RUN_FIELDS | set(grpo_types)), n=3)
            hint = f" (did you mean {', '.join(near)}?)" if near else ""
            raise ValueError(f"{source}: unknown key {key!r}{hint}; keys are RunConfig or trl.GRPOConfig fields")
    run = RunConfig(**run_kwargs)
    if run.stage not in (1, 2):
        raise ValueError(f"{source}: stage must be 1 or 2, got {run.stage}")
    if run.stage == 1 and run.task not in STAGE1_TASKS:
        raise ValueError(f"{source}: a Stage I recipe needs task in {STAGE1_TASKS}, got {run.task!r}")
    if run.use_vllm.lower() not in ("auto", *_BOOL):
        raise ValueError(f"{source}: use_vllm must be auto, true or false, got {run.use_vllm!r}")
    if not run.reward_funcs:
        raise ValueError(f"{source}: reward_funcs is empty")
    from mrtasks.rewards import list_rewards

    unknown = [name for name in run.reward_funcs if name not in list_rewards()]
    if unknown:
        raise ValueError(f"{source}: unknown reward(s) {unknown}; the registry has {list_rewards()}")
    return StageSpec(run=run, grpo=grpo_kwargs, source=source)


def read_yaml(path: Path) -> dict[str, Any]:
    data = yaml.safe_load(path.read_text()) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a recipe must be a YAML mapping")
    return data


def list_recipes() -> list[str]:
    """Recipe names relative to training/recipes, e.g. `qwen2.5-3b/stage2`."""
    return sorted(str(p.relative_to(RECIPES_DIR).with_suffix("")) for p in RECIPES_DIR.glob("**/*.yaml"))


def resolve_recipe_files(name: str, stage: str, task: str) -> list[tuple[str, Path]]:
    """Map `--recipe/--stage/--task` to the YAML files to run in order, as (stage label, path).

    `name` is a model family folder (`qwen2.5-3b`: Stage I `stage1_<task>.yaml` then `stage2.yaml`,
    or `grpo_baseline.yaml` for `--stage baseline`), one recipe (`qwen2.5-3b/stage2`), or a
    path to a YAML file.
    """
    path = Path(name)
    if path.suffix in (".yaml", ".yml"):
        if not path.is_file():
            raise FileNotFoundError(f"recipe file {path} does not exist")
        return [(path.stem, path)]
    candidate = RECIPES_DIR / f"{name}.yaml"
    if candidate.is_file():
        return [(f"stage2_{task}" if candidate.stem == "stage2" else candidate.stem, candidate)]
    family = RECIPES_DIR / name
    if not family.is_dir():
        raise FileNotFoundError(f"unknown recipe {name!r}; available: {', '.join(list_recipes())}")
    if task not in STAGE1_TASKS:
        raise ValueError(f"--task must be one of {STAGE1_TASKS}, got {task!r}")
    files = {
        "1": [(f"stage1_{task}", family / f"stage1_{task}.yaml")],
        "2": [(f"stage2_{task}", family / "stage2.yaml")],
        "baseline": [("grpo_baseline", family / "grpo_baseline.yaml")],
    }
    files["all"] = files["1"] + files["2"]
    if stage not in files:
        raise ValueError(f"--stage must be one of {sorted(files)}, got {stage!r}")
    for _, p in files[stage]:
        if not p.is_file():
            raise FileNotFoundError(f"recipe {name!r} has no {p.name}")
    return files[stage]
