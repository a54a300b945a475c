"""The task registry: every task is one `TaskSpec`, and everything else loops over it.

In the style of reasoning-gym's `register_dataset`: a task module builds its `TaskSpec` and calls
`register_task`; the build pipeline, the dataset builder and card, the `process` reward, the
reward audit, training's task choices and the demo all read `list_tasks()` / `get_task(name)`.
A task's name is its dataset config name, the value of its rows' `task` column and the name of
its reward.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from mrtasks.trajectory import Trajectory

Row = dict[str, Any]
Messages = list[dict[str, str]]

COMMON_COLUMNS: tuple[str, ...] = ("id", "task", "source", "kind", "problem")
"""Columns every task row has, before its own columns and the `prompt`."""


@dataclass(frozen=True)
class TaskSpec:
    """One task: how to build its rows, what they hold, and how they are scored.

    `build(traj, seed, config)` is pure and seeded: the same inputs give the same row, and a
    trajectory that cannot make a row raises `NotEligible` with a counted reason. The row's
    `prompt` is `prompt(row)`, so a row whose columns are re-drawn (per-epoch resampling) gets
    a matching prompt. `reference_answer(row)` is a completion, in the task's answer format,
    that must earn exactly 1.0 from `reward`: the build drops rows where it does not.
    """

    name: str
    stage: int
    """1: a self-supervised process task (Stage I); 2: the outcome task (Stage II)."""
    description: str
    config_cls: type
    build: Callable[[Trajectory, int, Any], Row]
    columns: Callable[[], dict[str, Any]]
    """The task's own `datasets` feature types, by column (imported lazily: `datasets` is heavy)."""
    prompt: Callable[[Row], Messages]
    reward: str
    reference_answer: Callable[[Row], str]
    one_per_problem: bool = False
    """Keep one row per problem (its id is the problem's), however many trajectories it has."""
    order: int = 100
    """Position within its stage in `list_tasks()`, hence in the dataset's config list (the
    first config is the Hub viewer's default); ties are broken by name."""

    def features(self) -> Any:
        """The `datasets.Features` of this task's rows, in column order."""
        import datasets

        string = datasets.Value("string")
        messages = [{"role": string, "content": string}]
        return datasets.Features({**{c: string for c in COMMON_COLUMNS}, **self.columns(), "prompt": messages})

    def make(self, traj: Trajectory, seed: int, config: Any | None = None) -> Row:
        """Build one row with this task's default config unless one is given."""
        return self.build(traj, seed, self.config_cls() if config is None else config)


_TASKS: dict[str, TaskSpec] = {}


def register_task(spec: TaskSpec) -> TaskSpec:
    """Add a task to the registry; its name must be new."""
    if spec.name in _TASKS:
        raise ValueError(f"task {spec.name!r} is already registered")
    if spec.stage not in (1, 2):
        raise ValueError(f"task {spec.name!r}: stage must be 1 or 2, got {spec.stage}")
    _TASKS[spec.name] = spec
    return spec


def get_task(name: str) -> TaskSpec:
    """The task registered as `name`; KeyError lists the known names."""
    try:
        return _TASKS[name]
    except KeyError:
        raise KeyError(f"unknown task {name!r}; known: {', '.join(list_tasks())}") from None


def list_tasks(stage: int | None = None) -> list[str]:
    """Task names, Stage I first, each stage by `order` then name; optionally of one stage."""
    specs = sorted(_TASKS.values(), key=lambda spec: (spec.stage, spec.order, spec.name))
    return [spec.name for spec in specs if stage is None or spec.stage == stage]
