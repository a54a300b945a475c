"""Outcome (Stage II): the problem alone; the reward checks the final boxed answer."""

from __future__ import annotations

from typing import Any

from mrtasks.prompts import outcome_messages
from mrtasks.tasks import OUTCOME
from mrtasks.tasks.base import NotEligible
from mrtasks.trajectory import Trajectory


def make_outcome(traj: Trajectory) -> dict[str, Any]:
    """Build one outcome row; only computation trajectories with a final answer are eligible."""
    if traj.kind != "computation":
        raise NotEligible("not_computation")
    if not (traj.answer or "").strip():
        raise NotEligible("no_answer")
    return {
        "id": traj.id,
        "task": OUTCOME,
        "source": traj.source,
        "kind": traj.kind,
        "problem": traj.problem,
        "answer": traj.answer.strip(),
        "prompt": outcome_messages(traj.problem),
    }
