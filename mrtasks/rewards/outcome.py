"""Outcome reward (the paper's r_final): 1.0 when the last boxed answer verifies, else 0.0."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mrtasks.mathcheck import equal_batch
from mrtasks.rewards.parsing import final_answer_parts
from mrtasks.rewards.registry import column, register, safe_reward
from mrtasks.tasks import OUTCOME


def reference_text(answer: Any) -> str | None:
    """A reference answer as a string: lists of one answer (OlympiadBench) are unwrapped."""
    if isinstance(answer, (list, tuple)):
        answer = answer[0] if len(answer) == 1 else ", ".join(str(a) for a in answer)
    if answer is None:
        return None
    return answer if isinstance(answer, str) else str(answer)


@register("outcome")
@safe_reward
def outcome_reward(
    completions: Sequence[Any],
    answer: Sequence[Any] | None = None,
    task: Sequence[str | None] | None = None,
    *,
    think_prefilled: bool = False,
    **kwargs: Any,
) -> list[float | None]:
    """1.0 when the final answer equals `answer` symbolically or numerically: `parsing.final_answer_parts`,
    the last `\\boxed{}` of the answer region (after `</think>`, before any end-of-turn token) with
    the boxes joined to it by and/or/commas (or each of those boxes). 0.0 otherwise (no box, unfinished thinking included).
    None for other tasks' rows."""
    n = len(completions)
    answers, task = column(answer, n), column(task, n)
    out: list[float | None] = [None] * n
    pairs, rows = [], []
    for i in range(n):
        ref = reference_text(answers[i])
        if (task[i] is not None and task[i] != OUTCOME) or ref is None:
            continue
        out[i] = 0.0
        parts = final_answer_parts(completions[i], think_prefilled)
        if not parts:
            continue
        # the joined boxes as one answer (`3, 4`); several boxes also count when every one of them
        # is the reference (`15\\frac{39}{40}, or \\frac{639}{40}`), never when one of them is
        for pred in [", ".join(parts), *(parts if len(parts) > 1 else [])]:
            pairs.append((pred, ref))
            rows.append(i)
    verdicts: dict[int, list[bool]] = {}
    for i, same in zip(rows, equal_batch(pairs, strip_lhs=True)):
        verdicts.setdefault(i, []).append(same)
    for i, found in verdicts.items():
        out[i] = 1.0 if found[0] or (len(found) > 1 and all(found[1:])) else 0.0
    return out
