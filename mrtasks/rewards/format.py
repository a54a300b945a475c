"""Format reward: did the completion end in a well-formed boxed answer for its task?"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mrtasks.mathcheck import last_boxed, split_top_level
from mrtasks.rewards.parsing import THINK_CLOSE, THINK_OPEN, answer_region, completion_text, cut_at_end_of_turn, parse_order
from mrtasks.rewards.registry import column, register, safe_reward
from mrtasks.tasks import MASKED_THEN_FILL, STEP_REORDERING


def well_formed(
    text: str,
    task: str | None,
    masks: Sequence[str] | None,
    order: Sequence[int] | None,
    think_prefilled: bool = False,
) -> bool:
    """Balanced think tags (with `think_prefilled` the prompt opened the block: one `</think>` and
    no `<think>`), then a closed box in the answer region shaped for the task."""
    text = cut_at_end_of_turn(text)
    opens, closes = text.count(THINK_OPEN), text.count(THINK_CLOSE)
    if think_prefilled:
        if opens or closes != 1:
            return False
    elif opens > 1 or closes > 1 or opens > closes:
        return False
    boxed = last_boxed(answer_region(text, think_prefilled))
    if not boxed:
        return False
    if task == MASKED_THEN_FILL and masks is not None and len(masks):
        parts = split_top_level(boxed, ";")
        return len(parts) == len(masks) and all(parts)
    if task == STEP_REORDERING and order is not None and len(order):
        parsed = parse_order(boxed)
        return parsed is not None and len(parsed) == len(order)
    return True


@register("format")
@safe_reward
def format_reward(
    completions: Sequence[Any],
    task: Sequence[str | None] | None = None,
    masks: Sequence[Sequence[str] | None] | None = None,
    order: Sequence[Sequence[int] | None] | None = None,
    *,
    think_prefilled: bool = False,
    **kwargs: Any,
) -> list[float | None]:
    """1.0 when the answer region ends in a closed `\\boxed{}` shaped for the row's task (as
    many `;`-parts as masks, as many step numbers as steps) and think tags are balanced."""
    n = len(completions)
    task, masks, order = column(task, n), column(masks, n), column(order, n)
    return [
        1.0 if well_formed(completion_text(c), t, m, o, think_prefilled) else 0.0 for c, t, m, o in zip(completions, task, masks, order)
    ]
