"""Step Reordering reward (the paper's r_order): 1 - fraction of misplaced steps."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mrtasks.rewards.parsing import extract_answer, parse_order
from mrtasks.rewards.registry import column, register, safe_reward
from mrtasks.tasks import STEP_REORDERING


def order_score(predicted: list[int] | None, order: Sequence[int]) -> float:
    """Fraction of positions where `predicted` agrees with the reference `order`.

    Anything that is not a permutation of the shown step numbers (`range(len(order))`)
    scores 0: repeated, missing or unknown numbers are not an order.
    """
    n = len(order)
    if predicted is None or n == 0 or sorted(predicted) != list(range(n)):
        return 0.0
    return sum(p == t for p, t in zip(predicted, order)) / n


@register(STEP_REORDERING, aliases=("step_order",))
@safe_reward
def step_order_reward(
    completions: Sequence[Any],
    order: Sequence[Sequence[int]] | None = None,
    task: Sequence[str | None] | None = None,
    *,
    think_prefilled: bool = False,
    **kwargs: Any,
) -> list[float | None]:
    """r_order for `\\boxed{2, 5, 0, ...}` (also arrows, `Step k`); None for other tasks' rows."""
    n = len(completions)
    order, task = column(order, n), column(task, n)
    out: list[float | None] = []
    for completion, ref, t in zip(completions, order, task):
        if (t is not None and t != STEP_REORDERING) or not ref:
            out.append(None)
            continue
        out.append(order_score(parse_order(extract_answer(completion, think_prefilled)), [int(x) for x in ref]))
    return out
