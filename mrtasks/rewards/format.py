"""Format reward: did the completion end in a well-formed boxed answer for its task?"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mrtasks.rewards.parsing import (
    THINK_CLOSE,
    THINK_OPEN,
    completion_text,
    last_boxed,
    answer_region,
    parse_order,
    split_top_level,
)
from mrtasks.rewards.registry import column, register, safe_reward
from mrtasks.tasks import MASKED_THEN_FILL, STEP_REORDERING


def well_formed(text: str, task: str | None, masks: Sequence[str] | None, order: Sequence[int] | None) -> bool:
    if text.count(THINK_OPEN) > 1 or text.count(THINK_CLOSE) > 1:
        return False
    if THINK_OPEN in text and THINK_CLOSE not in text:
        return False
    boxed = last_boxed(answer_region(text))
    if not boxed:
        return False
    if task == MASKED_THEN_FILL and masks:
        parts = split_top_level(boxed, ";")
        return len(parts) == len(masks) and all(parts)
    if task == STEP_REORDERING and order:
        return parse_order(boxed) is not None and len(parse_order(boxed) or []) == len(order)
    return True


@register("format")
@safe_reward
def format_reward(
    completions: Sequence[Any],
    task: Sequence[str | None] | None = None,
    masks: Sequence[Sequence[str] | None] | None = None,
    order: Sequence[Sequence[int] | None] | None = None,
    **kwargs: Any,
) -> list[float | None]:
    """1.0 when the answer region ends in a closed `\\boxed{}` shaped for the row's task (as
    many `;`-parts as masks, as many step numbers as steps) and think tags are balanced."""
    n = len(completions)
    task, masks, order = column(task, n), column(masks, n), column(order, n)
    return [
        1.0 if well_formed(completion_text(c), t, m, o) else 0.0
        for c, t, m, o in zip(completions, task, masks, order)
    ]
