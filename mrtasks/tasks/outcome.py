"""Outcome (Stage II): the problem alone; the reward checks the final boxed answer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mrtasks.prompts import outcome_messages
from mrtasks.tasks.base import NotEligible
from mrtasks.tasks.registry import Row, TaskSpec, register_task
from mrtasks.trajectory import Trajectory

OUTCOME = "outcome"


@dataclass(frozen=True)
class OutcomeConfig:
    """Outcome rows have no parameters: every computation problem with a final answer is eligible."""


def make_outcome(traj: Trajectory, seed: int = 0, config: OutcomeConfig = OutcomeConfig()) -> Row:
    """Build one outcome row; only computation trajectories with a final answer are eligible."""
    if traj.kind != "computation":
        raise NotEligible("not_computation")
    if not (traj.answer or "").strip():
        raise NotEligible("no_answer")
    row = {
        "id": traj.id,
        "task": OUTCOME,
        "source": traj.source,
        "kind": traj.kind,
        "problem": traj.problem,
        "answer": traj.answer.strip(),
    }
    row["prompt"] = prompt(row)
    return row


def prompt(row: Row) -> list[dict[str, str]]:
    return outcome_messages(row["problem"])


def reference_answer(row: Row) -> str:
    return "\\boxed{" + row["answer"] + "}"


def _columns() -> dict[str, Any]:
    import datasets

    return {"answer": datasets.Value("string")}


SPEC = register_task(
    TaskSpec(
        name=OUTCOME,
        stage=2,
        description="Outcome (Stage II): solve the problem; the final boxed answer is verified.",
        config_cls=OutcomeConfig,
        build=make_outcome,
        columns=_columns,
        prompt=prompt,
        reward=OUTCOME,
        reference_answer=reference_answer,
        one_per_problem=True,
    )
)
