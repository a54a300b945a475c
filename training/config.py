"""Recipes -> a typed `RunConfig` (our keys) + typed `trl.GRPOConfig` keyword arguments.

A model family has one `base.yaml` (everything its stages share) and one small file per stage
(`stage1_<task>.yaml`, `stage2.yaml`, `grpo_baseline.yaml`) that names what it `extends` and sets
only what differs. The merged mapping goes through TRL's own parser (`TrlParser`, an
`HfArgumentParser` over `RunConfig` + `GRPOConfig`): each key must be a field of one of the two
(unknown keys fail, with the nearest names), and `key=value` overrides from the command line are
typed by that same parser (`--key value` on the parser's own command line).

The parser types the values; the `GRPOConfig` itself is built later (`training.run`), after the
paper's prompt-counted batch sizes are mapped onto TRL's completion-counted ones.
"""

from __future__ import annotations

import dataclasses
import difflib
import enum
import math
import types
import typing
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

RECIPES_DIR = Path(__file__).resolve().parent / "recipes"
BASE_RECIPE = "base"
# Which dataset config Stage II (and the GRPO baseline) trains on.
STAGE2_TASK = "outcome"
# Keys every recipe must set itself: TRL defaults that change the objective (importance-sampling
# correction, KL bias correction, top-k) or the run's reproducibility must never apply silently.
EXPLICIT_KEYS = (
    "beta",
    "use_bias_correction_kl",
    "vllm_importance_sampling_correction",
    "loss_type",
    "scale_rewards",
    "top_k",
    "top_p",
    "temperature",
    "gradient_checkpointing",
    "stop_tokens",
    "model_revision",
)


def stage1_tasks() -> list[str]:
    """Stage I tasks: whatever the task registry marks as stage 1 (one name = dataset config = reward)."""
    from mrtasks.tasks import list_tasks

    return list(list_tasks(stage=1))


def _f(default: Any, help: str) -> Any:
    if isinstance(default, list):
        return field(default_factory=lambda: list(default), metadata={"help": help})
    return field(default=default, metadata={"help": help})


@dataclass
class RunConfig:
    """The keys of a recipe that are ours (everything else goes to TRL's `GRPOConfig`)."""

    model_name_or_path: str = _f("", "base model, Hub id or local folder (Stage II of a two-stage run: Stage I's output)")
    model_revision: str | None = _f(
        None, "Hub commit of the model (pinned in the recipes; ignored for local folders); `main` to float"
    )
    stage: int = _f(1, "1: a Stage I task with its process reward; 2: the outcome reward (also the GRPO baseline)")
    task: str | None = _f(None, "Stage I task and dataset config (a stage-1 task of mrtasks.tasks.list_tasks)")
    dataset: str = _f("mr-rlvr/tasks", "Hub id or a local folder written by `python -m mrtasks.build`")
    dataset_config: str | None = _f(None, "dataset config; default: the task for Stage I, `outcome` for Stage II")
    train_split: str = _f("train", "training split")
    eval_split: str | None = _f(None, "validation split, used only when eval_strategy is not `no`")
    max_train_samples: int | None = _f(None, "keep the first N prompts after filtering (smoke runs, 1k/3k ablations)")
    reward_funcs: list[str] = _f([], "reward names from mrtasks.rewards (= task names): masked_then_fill, "
                                     "step_reordering, outcome, process, format")
    partial_credit: str | None = _f(
        None, "masked_then_fill reward option: undecided (strict default: similarity only where the checker "
              "cannot decide) or all (the paper's literal variant)"
    )
    stop_tokens: list[str] = _f(
        [], "end-of-turn tokens that stop generation (first one becomes the tokenizer's eos, so TRL masks after it)"
    )
    max_prompt_length: int | None = _f(
        None, "drop (and count) prompts longer than this many tokens, chat template applied; TRL 1.x has no limit"
    )
    rollout_batch_prompts: int | None = _f(
        None, "verl train_batch_size: prompts per rollout (paper 512); sets generation_batch_size = this x num_generations"
    )
    mini_batch_prompts: int | None = _f(
        None, "verl ppo_mini_batch_size: prompts per optimizer step (paper 64); sets gradient_accumulation_steps"
    )
    generation: str = _f("auto", "auto (vLLM colocate when installed and CUDA is present), vllm or transformers")
    dtype: str = _f(
        "float32", "weights dtype for from_pretrained (float32, bfloat16, auto); keep float32 with bf16=true: "
        "bf16 weights round away lr-1e-6 updates"
    )
    resample_per_epoch: bool = _f(
        False, "Stage I: redraw masks / permutations / corruptions every epoch from the dataset's `trajectories` "
        "config (mrtasks.tasks.resample; the same problems as the task config after filtering)"
    )


RUN_FIELDS = tuple(f.name for f in dataclasses.fields(RunConfig))
GENERATION_CHOICES = ("auto", "vllm", "transformers")
PARTIAL_CREDIT_CHOICES = ("undecided", "all")
# Weights dtypes `from_pretrained` takes for training (a torch floating dtype by name, or auto).
DTYPE_CHOICES = ("float32", "bfloat16", "float16", "float64", "auto")
# Numeric ranges checked up front (key -> (lowest, lowest allowed?, highest, highest allowed?)); None
# is allowed wherever the field is optional. Out of range, TRL, transformers or torch would fail only
# after the model loaded (a negative learning rate, no new tokens) or run something meaningless.
RANGES: dict[str, tuple[float | None, bool, float | None, bool]] = {
    "learning_rate": (0, True, None, False),
    "beta": (0, True, None, False),
    "temperature": (0, False, None, False),
    "top_p": (0, False, 1, True),
    "top_k": (0, True, None, False),
    "min_p": (0, True, 1, True),
    "repetition_penalty": (0, False, None, False),
    "epsilon": (0, True, None, False),
    "epsilon_high": (0, True, None, False),
    "max_grad_norm": (0, True, None, False),
    "weight_decay": (0, True, None, False),
    "warmup_ratio": (0, True, 1, True),
    "warmup_steps": (0, True, None, False),
    "num_train_epochs": (0, False, None, False),
    "num_iterations": (1, True, None, False),
    "num_generations": (2, True, None, False),  # GRPO compares completions of one prompt
    "max_completion_length": (1, True, None, False),
    "max_prompt_length": (1, True, None, False),
    "max_train_samples": (1, True, None, False),
    "rollout_batch_prompts": (1, True, None, False),
    "mini_batch_prompts": (1, True, None, False),
    "per_device_train_batch_size": (1, True, None, False),
    "per_device_eval_batch_size": (1, True, None, False),
    "gradient_accumulation_steps": (1, True, None, False),
    "generation_batch_size": (1, True, None, False),
    "steps_per_generation": (1, True, None, False),
    "save_steps": (0, False, None, False),
    "logging_steps": (0, False, None, False),
    "eval_steps": (0, False, None, False),
    "save_total_limit": (0, True, None, False),
    "seed": (0, True, None, False),
    "vllm_gpu_memory_utilization": (0, False, 1, True),
}


@lru_cache(maxsize=1)
def _parser() -> Any:
    from trl import GRPOConfig, TrlParser

    return TrlParser((RunConfig, GRPOConfig))


def _dests() -> dict[str, Any]:
    """Parser actions by destination (field) name."""
    return {a.dest: a for a in _parser()._actions if a.dest != "help"}


def grpo_field_names() -> set[str]:
    from trl import GRPOConfig

    return {f.name for f in dataclasses.fields(GRPOConfig) if f.init}


class MissingDataError(ValueError):
    """A local build lacks the config or split a recipe names: the dataset is missing (exit 3, as when
    it fails to load), refused up front, in --dry-run too."""


@dataclass
class StageSpec:
    """One stage, ready to run: our typed config and the typed GRPOConfig keyword arguments."""

    run: RunConfig
    grpo: dict[str, Any]
    source: str
    """Where the recipe came from (for logs)."""


def _unknown_key_error(key: str, source: str) -> ValueError:
    near = difflib.get_close_matches(key, sorted(_dests()), n=3)
    hint = f" (did you mean {', '.join(near)}?)" if near else ""
    return ValueError(f"{source}: unknown key {key!r}{hint}; keys are RunConfig or trl.GRPOConfig fields")


@lru_cache(maxsize=1)
def field_types() -> dict[str, Any]:
    """Each RunConfig / GRPOConfig field's annotated type (resolved)."""
    from trl import GRPOConfig

    hints: dict[str, Any] = {}
    for cls in (GRPOConfig, RunConfig):
        hints.update(typing.get_type_hints(cls))
    return hints


def _type_name(hint: Any) -> str:
    if hint is type(None):
        return "null"
    if isinstance(hint, type):
        return {"str": "a string", "int": "an integer", "float": "a number", "bool": "true/false",
                "dict": "a mapping", "list": "a list"}.get(hint.__name__, hint.__name__)
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(dict.fromkeys(_type_name(a) for a in typing.get_args(hint)))
    if origin is list:
        args = typing.get_args(hint)
        return f"a list of {_type_name(args[0]).removeprefix('a ').removeprefix('an ')}s" if args else "a list"
    if origin is dict:
        return "a mapping"
    return str(hint)


def _conforms(value: Any, hint: Any) -> bool:
    """Whether a YAML value is of the annotated type (ints count as floats; enums take their values)."""
    if hint is Any or isinstance(hint, typing.TypeVar):
        return True
    if hint is type(None):
        return value is None
    origin = typing.get_origin(hint)
    if origin in (typing.Union, types.UnionType):
        return any(_conforms(value, arm) for arm in typing.get_args(hint))
    if origin is typing.Literal:
        return value in typing.get_args(hint)
    if origin in (list, tuple) or hint in (list, tuple):
        args = typing.get_args(hint)
        return isinstance(value, list) and (not args or all(_conforms(v, args[0]) for v in value))
    if origin is dict or hint is dict:
        return isinstance(value, dict)
    if hint is bool:
        return isinstance(value, bool)
    if hint is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if hint is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if hint is str:
        return isinstance(value, str)
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return isinstance(value, hint) or value in {m.value for m in hint}
    if isinstance(hint, type):
        return isinstance(value, hint)
    return True


def _numeric_text(value: Any, hint: Any) -> Any:
    """A YAML string where a number belongs, typed as the command line types it (`1e-6` is a string
    to YAML 1.1, a float to argparse); anything else is returned unchanged."""
    if not isinstance(value, str):
        return value
    arms = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
    if str in arms:
        return value
    for kind in (int, float):
        if kind in arms:
            try:
                return kind(value.strip())
            except ValueError:
                continue
    return value


def check_yaml_values(data: dict[str, Any], source: str) -> dict[str, Any]:
    """Type a recipe mapping's values against the fields' annotated types, as the parser types the
    command line: a list, a mapping or null only where the field allows one; returns the mapping with
    numbers written as strings (`1e-6`) made numbers. Unknown keys are left to `parse_recipe`."""
    hints = field_types()
    out = dict(data)
    for key, value in data.items():
        hint = hints.get(key)
        if hint is None:
            continue
        value = _numeric_text(value, hint)
        if not _conforms(value, hint):
            shown = "null" if value is None else repr(value)
            raise ValueError(f"{source}: {key} must be {_type_name(hint)}, got {shown} ({type(value).__name__})")
        out[key] = value
    return out


def overrides_to_argv(overrides: dict[str, str], source: str = "override") -> tuple[list[str], dict[str, Any]]:
    """`{"max_steps": "10"}` -> (`["--max_steps", "10"]`, {}) for the parser; `none`/`null` on an
    optional field becomes a direct None (argparse has no spelling for it)."""
    dests = _dests()
    argv: list[str] = []
    direct: dict[str, Any] = {}
    for key, value in overrides.items():
        action = dests.get(key)
        if action is None:
            raise _unknown_key_error(key, source)
        if value.strip().lower() in ("none", "null", "~") and key != "report_to":
            direct[key] = None
            continue
        if action.nargs in ("+", "*"):
            text = value.strip()
            items = yaml.safe_load(text) if text.startswith("[") else [v for v in text.split(",") if v]
            argv += [f"--{key}", *(str(v) for v in items)]
        else:
            argv += [f"--{key}", value]
    return argv, direct


def parse_recipe(raw: dict[str, Any], source: str, overrides: dict[str, str] | None = None) -> StageSpec:
    """Type a merged recipe mapping (plus `key=value` overrides) with TrlParser and split it."""
    parser = _parser()
    dests = _dests()
    for key in raw:
        if key not in dests:
            raise _unknown_key_error(key, source)
    raw = check_yaml_values(raw, source)
    argv, direct = overrides_to_argv(overrides or {})
    saved = {a.dest: (a.default, a.required) for a in parser._actions}
    try:
        parser.set_defaults_with_config(**{**raw, **direct})
        import contextlib
        import io

        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                ns = parser.parse_args(argv)
        except SystemExit:
            msg = err.getvalue().strip().splitlines()
            raise ValueError(f"{source}: {msg[-1] if msg else 'invalid override'}") from None
    finally:
        for a in parser._actions:
            if a.dest in saved:
                a.default, a.required = saved[a.dest]
    values = vars(ns)
    run = RunConfig(**{k: values[k] for k in RUN_FIELDS})
    given = set(raw) | set(overrides or {})
    grpo_names = grpo_field_names()
    grpo = {k: v for k, v in values.items() if k in grpo_names and k in given}
    spec = StageSpec(run=run, grpo=grpo, source=source)
    check_values({k: values[k] for k in given | set(RUN_FIELDS) if k in values}, source)
    check_run(spec)
    return spec


def check_values(values: dict[str, Any], source: str) -> None:
    """Every number finite (NaN or inf trains a model of NaN weights, or never stops) and within
    `RANGES`; `dtype` a known weights dtype; `report_to` integrations transformers knows."""
    for key, value in sorted(values.items()):
        items = value if isinstance(value, list) else [value]
        for v in items:
            if isinstance(v, float) and not math.isfinite(v):
                raise ValueError(f"{source}: {key} must be a finite number, got {v}")
        if key in RANGES and isinstance(value, (int, float)) and not isinstance(value, bool):
            low, low_ok, high, high_ok = RANGES[key]
            bad = (low is not None and (value < low or (value == low and not low_ok))) or (
                high is not None and (value > high or (value == high and not high_ok)))
            if bad:
                lo = "" if low is None else f"{'>=' if low_ok else '>'} {low:g}"
                hi = "" if high is None else f"{'<=' if high_ok else '<'} {high:g}"
                raise ValueError(f"{source}: {key} must be {' and '.join(x for x in (lo, hi) if x)}, got {value:g}")
    if values.get("max_steps") is not None and values["max_steps"] != -1 and values["max_steps"] < 1:
        raise ValueError(f"{source}: max_steps must be a positive number of steps (or -1: num_train_epochs "
                         f"decides), got {values['max_steps']}")
    if "dtype" in values and values["dtype"] not in DTYPE_CHOICES:
        raise ValueError(f"{source}: dtype must be one of {DTYPE_CHOICES}, got {values['dtype']!r}")
    if values.get("report_to") is not None:
        from transformers.integrations.integration_utils import INTEGRATION_TO_CALLBACK

        known = ("all", "none", *INTEGRATION_TO_CALLBACK)
        targets = values["report_to"] if isinstance(values["report_to"], list) else [values["report_to"]]
        unknown = [t for t in targets if t not in known]
        if unknown:
            raise ValueError(f"{source}: report_to {unknown} is not an integration transformers knows; "
                             f"use one of {list(known)}")


def check_run(spec: StageSpec) -> None:
    """Up-front checks with one clear message each (before anything heavy loads)."""
    run, source = spec.run, spec.source
    if run.stage not in (1, 2):
        raise ValueError(f"{source}: stage must be 1 or 2, got {run.stage}")
    tasks = stage1_tasks()
    if run.stage == 1 and run.task not in tasks:
        raise ValueError(f"{source}: a Stage I recipe needs task in {tasks}, got {run.task!r}")
    if run.generation not in GENERATION_CHOICES:
        raise ValueError(f"{source}: generation must be one of {GENERATION_CHOICES}, got {run.generation!r}")
    if "use_vllm" in spec.grpo:
        raise ValueError(f"{source}: set generation: vllm|transformers|auto, not use_vllm (training.run sets it)")
    if run.partial_credit is not None and run.partial_credit not in PARTIAL_CREDIT_CHOICES:
        raise ValueError(f"{source}: partial_credit must be one of {PARTIAL_CREDIT_CHOICES}, got {run.partial_credit!r}")
    if run.resample_per_epoch and run.stage != 1:
        raise ValueError(f"{source}: resample_per_epoch applies to Stage I tasks only")
    if not run.reward_funcs:
        raise ValueError(f"{source}: reward_funcs is empty")
    from mrtasks.rewards import get_reward, list_rewards

    unknown = []
    for name in run.reward_funcs:
        try:
            get_reward(name)
        except KeyError:
            unknown.append(name)
    if unknown:
        raise ValueError(f"{source}: unknown reward(s) {unknown}; the registry has {list_rewards()}")
    check_dataset_split(spec)
    check_rewards_match_rows(spec)


def dataset_config_name(run: RunConfig) -> str:
    """The dataset config a stage trains on: `dataset_config`, else the task (Stage I) or outcome."""
    if run.dataset_config:
        return run.dataset_config
    return run.task if run.stage == 1 else STAGE2_TASK


def check_rewards_match_rows(spec: StageSpec) -> None:
    """The config must be a task of the registry, and each reward must score its rows: a task's own
    reward scores that task's rows only (it returns None for any other task's), `process` and
    `format` score every task."""
    from mrtasks.rewards import get_reward
    from mrtasks.tasks import get_task, list_tasks

    run, source = spec.run, spec.source
    config = dataset_config_name(run)
    tasks = list_tasks()
    if config not in tasks:
        raise ValueError(f"{source}: dataset_config must be a task config of the dataset, one of {tasks}, got {config!r}")
    owners = {get_task(t).reward: t for t in tasks}
    for name in run.reward_funcs:
        canonical = get_reward(name).__name__
        if canonical in owners and owners[canonical] != config:
            raise ValueError(
                f"{source}: reward {name!r} scores {owners[canonical]} rows only, but this stage trains on the "
                f"{config} config (its rows would all score None); use reward_funcs: [{get_task(config).reward}]"
            )


def check_dataset_split(spec: StageSpec) -> None:
    """A local build lists its configs and splits in its card: a config or split it lacks is refused
    here, before a model loads (a Hub dataset is checked when it loads)."""
    from mrtasks.output import read_marker
    from mrtasks.rewards.rows import DatasetError, build_configs

    run, source = spec.run, spec.source
    folder = Path(run.dataset).expanduser()
    if not folder.is_dir() or read_marker(folder) is None:
        return
    try:
        configs = build_configs(folder)
    except DatasetError:
        return  # unreadable: loading the data reports it (exit 3)
    config = dataset_config_name(run)
    if config not in configs:
        raise MissingDataError(f"{source}: dataset_config {config!r} is not a config of {run.dataset} ({sorted(configs)})")
    splits = [s for s in configs[config] if s]
    if splits and run.train_split not in splits:
        raise MissingDataError(f"{source}: train_split {run.train_split!r} is not a split of {run.dataset} [{config}] "
                         f"({splits})")


class _UniqueKeyLoader(yaml.SafeLoader):
    """PyYAML's safe loader, refusing a key given twice in one mapping (it would keep the last silently)."""

    def construct_mapping(self, node: Any, deep: bool = False) -> dict[Any, Any]:
        seen: dict[Any, int] = {}
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=True)
            line = key_node.start_mark.line + 1
            try:
                first = seen.setdefault(key, line)
            except TypeError:
                continue  # an unhashable key: the base class reports it
            if first != line:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} is given twice (lines {first} and {line})", key_node.start_mark)
        return super().construct_mapping(node, deep=deep)


def read_yaml(path: Path) -> dict[str, Any]:
    try:
        data = yaml.load(path.read_text(), Loader=_UniqueKeyLoader) or {}
    except yaml.YAMLError as e:
        raise ValueError(f"{path}: not valid YAML ({str(e).splitlines()[0]})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a recipe must be a YAML mapping")
    return data


def load_recipe_file(path: Path, _seen: tuple[Path, ...] = ()) -> dict[str, Any]:
    """A recipe file merged over the file it `extends` (relative to it), recursively."""
    path = path.resolve()
    if path in _seen:
        raise ValueError(f"{path}: `extends` forms a cycle")
    if not path.is_file():
        raise FileNotFoundError(f"recipe file {path} does not exist")
    data = read_yaml(path)
    parent = data.pop("extends", None)
    data = check_yaml_values(data, str(path))
    if parent is None:
        return data
    return {**load_recipe_file(path.parent / str(parent), (*_seen, path)), **data}


def list_recipes() -> list[str]:
    """Runnable recipe names relative to training/recipes, e.g. `qwen2.5-3b/stage2` (bases left out)."""
    return sorted(
        str(p.relative_to(RECIPES_DIR).with_suffix(""))
        for p in RECIPES_DIR.glob("**/*.yaml")
        if p.stem != BASE_RECIPE
    )


def resolve_recipe_files(name: str, stage: str, task: str) -> list[tuple[str, Path]]:
    """Map `--recipe/--stage/--task` to the recipe files to run in order, as (stage label, path).

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
    if candidate.is_file() and candidate.stem != BASE_RECIPE:
        return [(f"stage2_{task}" if candidate.stem == "stage2" else candidate.stem, candidate)]
    family = RECIPES_DIR / name
    if not family.is_dir():
        raise FileNotFoundError(f"unknown recipe {name!r}; available: {', '.join(list_recipes())}")
    tasks = stage1_tasks()
    if task not in tasks:
        raise ValueError(f"--task must be one of {tasks}, got {task!r}")
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


def parse_overrides(items: list[str]) -> dict[str, str]:
    """`["max_steps=10", "learning_rate=1e-5"]` -> `{"max_steps": "10", ...}` (typed by the parser)."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"override {item!r} is not of the form key=value")
        out[key.strip().removeprefix("--")] = value
    return out
