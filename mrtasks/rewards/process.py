"""The paper's r_proc: each row scored by its own task's reward (dispatch on `task`)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from mrtasks.rewards.registry import _is_column, column, get_reward, register, reward_options, safe_reward
from mrtasks.tasks import get_task, list_tasks

logger = logging.getLogger(__name__)


@register("process")
@safe_reward
def process_reward(
    completions: Sequence[Any],
    task: Sequence[str | None] | None = None,
    *,
    think_prefilled: bool = False,
    partial_credit: str = "undecided",
    **columns: Any,
) -> list[float | None]:
    """Score every row with the reward of its `task` (None for rows with an unknown task).
    Options reach each task's reward where it takes them (see `registry.OPTION_CHOICES`)."""
    options = {"think_prefilled": think_prefilled, "partial_credit": partial_credit}
    n = len(completions)
    task = column(task, n)
    out: list[float | None] = [None] * n
    known = list_tasks()
    for name in known:
        rows = [i for i in range(n) if task[i] == name]
        if not rows:
            continue
        # per-row columns are sliced to the task's rows; anything else (TRL's `trainer_state`,
        # `log_metric`, ...) is passed on as it is
        sub = {k: ([v[i] for i in rows] if _is_column(v) else v) for k, v in columns.items()}
        accepted = reward_options(get_task(name).reward)
        reward = get_reward(get_task(name).reward, **{k: v for k, v in options.items() if k in accepted})
        for i, r in zip(rows, reward([completions[i] for i in rows], task=[name] * len(rows), **sub)):
            out[i] = r
    unknown = sorted({str(t) for t in task if t not in known})
    if unknown:
        logger.warning("process reward: no reward for task(s) %s; those rows get None", unknown)
    return out
