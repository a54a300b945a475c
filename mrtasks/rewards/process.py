"""The paper's r_proc: each row scored by its own task's reward (dispatch on `task`)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from mrtasks.rewards.mask_fill import mask_fill_reward
from mrtasks.rewards.outcome import outcome_reward
from mrtasks.rewards.registry import column, register, safe_reward
from mrtasks.rewards.step_order import step_order_reward
from mrtasks.tasks import MASKED_FILL, OUTCOME, STEP_ORDER

logger = logging.getLogger(__name__)

DISPATCH = {MASKED_FILL: mask_fill_reward, STEP_ORDER: step_order_reward, OUTCOME: outcome_reward}


@register("process")
@safe_reward
def process_reward(
    completions: Sequence[Any], task: Sequence[str | None] | None = None, **columns: Any
) -> list[float | None]:
    """Score every row with the reward of its `task` (None for rows with an unknown task)."""
    n = len(completions)
    task = column(task, n)
    out: list[float | None] = [None] * n
    for name, fn in DISPATCH.items():
        rows = [i for i in range(n) if task[i] == name]
        if not rows:
            continue
        sub = {
            k: [v[i] for i in rows] if isinstance(v, (list, tuple)) and len(v) == n else v
            for k, v in columns.items()
        }
        for i, r in zip(rows, fn([completions[i] for i in rows], task=[name] * len(rows), **sub)):
            out[i] = r
    unknown = sorted({str(t) for t in task if t not in DISPATCH})
    if unknown:
        logger.warning("process reward: no reward for task(s) %s; those rows get None", unknown)
    return out
