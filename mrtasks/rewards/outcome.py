"""Outcome reward (the paper's r_final): 1.0 when the last boxed answer verifies, else 0.0."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mrtasks.rewards.equivalence import equal_batch
from mrtasks.rewards.parsing import extract_answer
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
    """1.0 when the last `\\boxed{}` of the answer region (after `</think>`, before any end-of-turn
    token) equals `answer` symbolically or numerically; 0.0 otherwise (no box, unfinished thinking
    included). None for other tasks' rows."""
    n = len(completions)
    answers, task = column(answer, n), column(task, n)
    out: list[float | None] = [None] * n
    pairs, rows = [], []
    for i in range(n):
        ref = reference_text(answers[i])
        if (task[i] is not None and task[i] != OUTCOME) or ref is None:
            continue
        out[i] = 0.0
        pred = extract_answer(completions[i], think_prefilled)
        if pred:
            pairs.append((pred, ref))
            rows.append(i)
    for i, same in zip(rows, equal_batch(pairs, strip_lhs=True)):
        out[i] = 1.0 if same else 0.0
    return out
