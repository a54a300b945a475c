"""Step Reordering: shuffle a solution's steps; the model recovers the reference order."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from mrtasks.prompts import step_reordering_messages
from mrtasks.tasks.base import NotEligible, rng_for
from mrtasks.tasks.registry import Row, TaskSpec, register_task
from mrtasks.trajectory import Trajectory

STEP_REORDERING = "step_reordering"
MAX_PROMPT_CHARS = 6000
"""The default length limit of a Step Reordering prompt, in characters (about 2048 tokens)."""


@dataclass(frozen=True)
class StepReorderingConfig:
    """Which trajectories to shuffle. The paper's Leibniz case has 6 steps; an olympiad proof cut
    into all its steps has 17 to 80, so no step cap binds by default: the prompt's length does."""

    min_steps: int = 3
    """Fewer steps make a trivial puzzle (2 steps have one non-identity order)."""
    max_steps: int | None = None
    """Longer step lists are not eligible (`too_many_steps`); None: no cap."""
    max_prompt_chars: int | None = MAX_PROMPT_CHARS
    """Rows whose prompt (system and user message) is longer are not eligible (`prompt_too_long`):
    the paper trains Stage I on prompts of at most 2048 tokens, and a LaTeX proof runs at about 3
    characters a token, so 6000 characters keep a row within 2048 tokens (training drops longer
    prompts by its tokenizer's exact count, `max_prompt_length`). None: no limit."""

    def __post_init__(self) -> None:
        if self.min_steps < 2:
            raise ValueError("min_steps must be >= 2: one step cannot be shuffled")
        if self.max_steps is not None and self.max_steps < self.min_steps:
            raise ValueError("max_steps must be >= min_steps")
        if self.max_prompt_chars is not None and self.max_prompt_chars < 1:
            raise ValueError("max_prompt_chars must be >= 1 or None")


# A leading enumeration ("Step 3:", "3.", "(3)", "**Step 3.**", "iii)") would give the order away.
_STEP_LABEL = re.compile(
    r"^\s*(?:\*\*|__|#+)?\s*(?:(?:step|part|case)\s*\d+|\(?\d{1,2}\)|\d{1,2}[.:]|\(?[ivx]{1,4}\))"
    r"\s*[.:)\-\u2013]?\s*(?:\*\*|__)?[:.]?\s*",
    re.IGNORECASE,
)


def strip_step_label(step: str) -> str:
    """Remove a leading step number or label; the step's text is otherwise unchanged."""
    stripped = _STEP_LABEL.sub("", step, count=1)
    return stripped if stripped.strip() else step


def shuffle_steps(n: int, rng) -> list[int]:
    """A permutation of range(n) that is never the identity (n >= 2)."""
    perm = list(range(n))
    while perm == sorted(perm):
        rng.shuffle(perm)
    return perm


def make_step_reordering(
    traj: Trajectory, seed: int = 0, config: StepReorderingConfig = StepReorderingConfig()
) -> Row:
    """Build one Step-Reordering row; raises NotEligible for too few or too many steps or a
    prompt longer than `max_prompt_chars`.

    `shuffled_steps[i]` is shown as `Step i`; `order` lists the shown numbers in the reference
    sequence, so `[shuffled_steps[i] for i in order] == steps`. Leading step labels are
    stripped from the shown text, since they would give the order away.
    """
    n = len(traj.steps)
    if n < config.min_steps:
        raise NotEligible("too_few_steps", f"{n} < {config.min_steps}")
    if config.max_steps is not None and n > config.max_steps:
        raise NotEligible("too_many_steps", f"{n} > {config.max_steps}")
    steps = [strip_step_label(s) for s in traj.steps]
    perm = shuffle_steps(n, rng_for(traj, seed, STEP_REORDERING))  # shown position -> reference step
    shuffled = [steps[p] for p in perm]
    order = sorted(range(n), key=lambda shown: perm[shown])
    row = {
        "id": traj.id,
        "task": STEP_REORDERING,
        "source": traj.source,
        "kind": traj.kind,
        "problem": traj.problem,
        "steps": steps,
        "shuffled_steps": shuffled,
        "order": order,
    }
    row["prompt"] = prompt(row)
    chars = sum(len(m["content"]) for m in row["prompt"])
    if config.max_prompt_chars is not None and chars > config.max_prompt_chars:
        raise NotEligible("prompt_too_long", f"{chars} > {config.max_prompt_chars} characters")
    return row


def prompt(row: Row) -> list[dict[str, str]]:
    return step_reordering_messages(row["problem"], row["shuffled_steps"])


def reference_answer(row: Row) -> str:
    """The shown step numbers in the reference order, as the paper's prompt asks."""
    return "\\boxed{" + ", ".join(str(k) for k in row["order"]) + "}"


def _columns() -> dict[str, Any]:
    import datasets

    string = datasets.Value("string")
    return {"steps": [string], "shuffled_steps": [string], "order": [datasets.Value("int32")]}


SPEC = register_task(
    TaskSpec(
        name=STEP_REORDERING,
        stage=1,
        description="Step Reordering: recover the reference order of a solution's shuffled steps.",
        config_cls=StepReorderingConfig,
        build=make_step_reordering,
        columns=_columns,
        prompt=prompt,
        reward=STEP_REORDERING,
        reference_answer=reference_answer,
        order=1,
    )
)
