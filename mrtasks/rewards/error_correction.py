"""Error Correction reward: the wrong step found, and its formula restored.

Scoring of the last `\\boxed{...}` of the answer region, per row:

| row | answer | reward |
|---|---|---|
| no error (`error_step` = -1) | `none` | 1.0 |
| no error | anything else | 0.0 |
| error in step k | `none`, no box, unparsable, or a step other than k | 0.0 |
| error in step k | `k; f` with f equivalent to `original` | 1.0 |
| error in step k | `k` alone, or `k; f` with f neither `original` nor `corrupted` | 0.5 |
| error in step k | `k; f` with f equivalent to `corrupted` (the step copied back) | 0.0 |

Why: locating the wrong step is half the skill and earns half, but only at the right step (a
correction of the wrong step means nothing). Copying the shown formula back "corrects" a step
into what it already says: it contradicts the claim that step k is wrong, so it forfeits the
step's half too, and restating a step is never a way to collect credit. Equivalence is the
checker's (`equal_batch`, left sides kept, as for Masked-Then-Fill); theorem names match by
`theorem_key` (case, "the", possessive and hyphens ignored). `none`, `no error`, `\\text{None}`
all read as "no error"; the step may be written `k`, `Step k` or `\\text{Step } k`. Options as
for every reward: `think_prefilled` (a completion that never closes the think block the prompt
opened has no answer); the answer region ends at the first end-of-turn token.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from mrtasks.mathcheck import MAX_ANSWER_CHARS, equal_batch, split_top_level, strip_wrappers, theorem_key
from mrtasks.mathcheck.normalize import normalize
from mrtasks.rewards.parsing import extract_answer
from mrtasks.rewards.registry import column, register, safe_reward
from mrtasks.tasks.error_correction import ERROR_CORRECTION

STEP_CREDIT = 0.5
"""What the right step alone earns (the corrected formula earns the rest)."""

_NONE = re.compile(
    r"^(?:\\(?:text|textbf|mathrm|mbox)\s*\{)?\s*(?:none|no\s+errors?|no\s+incorrect\s+steps?)\s*\.?\s*\}?$",
    re.IGNORECASE,
)
_STEP = re.compile(
    r"^(?:\\(?:text|textbf|mathrm|mbox)\s*\{\s*)?(?:step\s*)?(?:\}\s*)?(?:\\[,;: ]|~|\s)*(\d{1,4})\s*\}?$", re.IGNORECASE
)


def _unwrap(text: str) -> str:
    """`strip_wrappers`, for texts up to `MAX_ANSWER_CHARS` (longer ones are only stripped: a
    hard bound on the work per row)."""
    return strip_wrappers(text) if len(text) <= MAX_ANSWER_CHARS else text.strip()


def parse_correction(boxed: str | None) -> tuple[str, int | None, str]:
    """Read a boxed answer: ("none", None, ""), ("step", k, formula) or ("invalid", None, "")."""
    if boxed is None:
        return "invalid", None, ""
    text = _unwrap(boxed)
    if _NONE.match(text):
        return "none", None, ""
    parts = split_top_level(text, ";")
    m = _STEP.match(_unwrap(parts[0]))
    if not m:
        return "invalid", None, ""
    formula = _unwrap("; ".join(parts[1:])) if len(parts) > 1 else ""
    return "step", int(m.group(1)), formula


def _same(pred: str, ref: str) -> bool:
    """The same text, or the same normal form (formulas up to `MAX_ANSWER_CHARS`)."""
    if pred.strip() == ref.strip():
        return True
    return max(len(pred), len(ref)) <= MAX_ANSWER_CHARS and normalize(pred) == normalize(ref)


@register(ERROR_CORRECTION)
@safe_reward
def error_correction_reward(
    completions: Sequence[Any],
    error_step: Sequence[int | None] | None = None,
    original: Sequence[str | None] | None = None,
    corrupted: Sequence[str | None] | None = None,
    error_type: Sequence[str | None] | None = None,
    task: Sequence[str | None] | None = None,
    *,
    think_prefilled: bool = False,
    **kwargs: Any,
) -> list[float | None]:
    """The Error Correction score (table in the module docstring); None for other tasks' rows."""
    n = len(completions)
    error_step, original, corrupted = column(error_step, n), column(original, n), column(corrupted, n)
    error_type, task = column(error_type, n), column(task, n)
    out: list[float | None] = [None] * n
    pending: list[tuple[int, str, str, str]] = []  # (row, formula, original, corrupted)
    for i in range(n):
        if (task[i] is not None and task[i] != ERROR_CORRECTION) or error_step[i] is None:
            continue
        kind, step, formula = parse_correction(extract_answer(completions[i], think_prefilled))
        target = int(error_step[i])
        if target < 0:
            out[i] = 1.0 if kind == "none" else 0.0
            continue
        if kind != "step" or step != target:
            out[i] = 0.0
            continue
        ref, bad = original[i] or "", corrupted[i] or ""
        if not formula:
            out[i] = STEP_CREDIT
        elif error_type[i] == "theorem":
            key = theorem_key(formula)
            out[i] = 1.0 if key == theorem_key(ref) else 0.0 if key == theorem_key(bad) else STEP_CREDIT
        elif _same(formula, ref):
            out[i] = 1.0
        elif _same(formula, bad):
            out[i] = 0.0
        else:
            pending.append((i, formula, ref, bad))
    if pending:
        verdicts = equal_batch([(f, r) for _, f, r, _ in pending] + [(f, b) for _, f, _, b in pending], strip_lhs=False)
        k = len(pending)
        for j, (i, _f, _r, _b) in enumerate(pending):
            out[i] = 1.0 if verdicts[j] else 0.0 if verdicts[k + j] else STEP_CREDIT
    return out
