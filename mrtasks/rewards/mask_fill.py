"""Masked-Then-Fill reward (the paper's r_mask): mean per-position match of the boxed formulas."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rapidfuzz import fuzz

from mrtasks.rewards.equivalence import MAX_ANSWER_CHARS, equal_batch, normalize
from mrtasks.rewards.parsing import extract_answer, split_top_level, strip_wrappers
from mrtasks.rewards.registry import column, register, safe_reward
from mrtasks.tasks import MASKED_THEN_FILL


def parse_fills(completion: Any) -> list[str] | None:
    """The formulas of `\\boxed{f1; f2; ...}` (split on top-level `;`), or None without a box."""
    boxed = extract_answer(completion)
    if boxed is None:
        return None
    return [strip_wrappers(part) for part in split_top_level(boxed, ";")]


def similarity(pred: str, ref: str) -> float:
    """Text similarity in [0, 1] (rapidfuzz ratio on normalized LaTeX): the paper's fallback."""
    a = normalize(pred[: 2 * MAX_ANSWER_CHARS])
    b = normalize(ref[: 2 * MAX_ANSWER_CHARS])
    if not a or not b:
        return 0.0
    return fuzz.ratio(a, b) / 100.0


@register(MASKED_THEN_FILL, aliases=("mask_fill",))
@safe_reward
def mask_fill_reward(
    completions: Sequence[Any],
    masks: Sequence[Sequence[str]] | None = None,
    scored: Sequence[Sequence[int] | None] | None = None,
    task: Sequence[str | None] | None = None,
    **kwargs: Any,
) -> list[float | None]:
    """r_mask: mean over the scored positions of 1.0 (MathRuler-equivalent) or text similarity.

    A missing box or a missing position scores 0 there. Rows of another task, or without
    masks, get None.
    """
    n = len(completions)
    masks, scored, task = column(masks, n), column(scored, n), column(task, n)
    rewards: list[float | None] = [None] * n
    pairs: list[tuple[str, str]] = []
    slots: list[tuple[int, int]] = []  # (row, position count) per pair, in order
    positions: dict[int, list[int]] = {}
    for i in range(n):
        if (task[i] is not None and task[i] != MASKED_THEN_FILL) or not masks[i]:
            continue
        refs = list(masks[i])
        keep = [k for k in (scored[i] if scored[i] is not None else range(len(refs))) if 0 <= k < len(refs)]
        keep = keep or list(range(len(refs)))
        fills = parse_fills(completions[i]) or []
        positions[i] = keep
        rewards[i] = 0.0
        for k in keep:
            if k < len(fills) and fills[k]:
                pairs.append((fills[k], refs[k]))
                slots.append((i, k))
    verdicts = equal_batch(pairs, strip_lhs=False)
    totals: dict[int, float] = {}
    for (i, _k), (pred, ref), same in zip(slots, pairs, verdicts):
        totals[i] = totals.get(i, 0.0) + (1.0 if same else similarity(pred, ref))
    for i, keep in positions.items():
        rewards[i] = totals.get(i, 0.0) / len(keep)
    return rewards
