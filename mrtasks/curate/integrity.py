"""Reward integrity at build time: every task row's reference answer earns exactly 1.0.

Two steps of the build pipeline, for any annotator (heuristic or LLM):

1. `repair_trajectories` (after annotate): mechanical repair of formula spans, so that a mask
   written back in the paper's answer format `\\boxed{m1; m2; ...}` reads as itself. A span keeps
   `solution[start:end] == text`; repairs only narrow it:
   - a `\\boxed{...}` / `\\fbox{...}` wrapper around the whole span is stripped to its content
     (a box inside a boxed answer makes the reward read the inner box);
   - a trailing `\\tag{...}` / `\\label{...}` and trailing punctuation or whitespace are trimmed;
   - a continuation row `&= 5 + 5` or `\\le 2\\sqrt{xy}` (alignment residue) keeps its result `5 + 5`, as the heuristic
     offers it, and is removed when that is junk (`&= 10`); a whole row `A &= B` is a formula and stays as listed;
   - a chain that ends in the boxed answer (`A + B = 4 + 3 = \\boxed{7}`, as an LLM annotator lists it) keeps the
     relation before the box (`A + B = 4 + 3`); Masked-Then-Fill masks the box itself (`unlisted_answer`);
   - a span that still holds a box, a `\\tag`, a top-level `;` (the answer separator), unbalanced
     braces or `\\left`/`\\right`, a think tag or an end-of-turn token, or that does not read back
     as itself from `\\boxed{...}`, is not maskable and is removed from the trajectory's formulas.
2. `check_references` (after the task rows are built): each row's `TaskSpec.reference_answer(row)`
   is scored with the row's own reward; a row below 1.0 is dropped and counted under its task as
   `reference_below_full_score`, so no training row asks for an answer its reward cannot give.
"""

from __future__ import annotations

import logging
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from mrtasks.curate.heuristic.junk import junk_reason
from mrtasks.curate.heuristic.spans import ALIGN_REL, LEADING_REL, strip_span
from mrtasks.trajectory import Formula, Trajectory

logger = logging.getLogger(__name__)

Row = dict[str, Any]
REFERENCE_BELOW_FULL_SCORE = "reference_below_full_score"

_WRAPPER = re.compile(r"^\\(?:boxed|fbox)\s*\{")
_TRAILING_TAG = re.compile(r"\\(?:tag\*?|label)\s*\{[^{}]*\}\s*$")
_TRAILING_PUNCT = ".,;:"
_BOX_TAIL = re.compile(r"(?:=|\\(?:equiv|approx)(?![a-zA-Z]))\s*\\(?:boxed|fbox)\s*\{")
"""The last relation of a chain, then the box that ends it: `... = \\boxed{`."""
_CHAIN_RELATION = re.compile(r"\\(?:leq|geq|neq|le|ge|ne|lt|gt|equiv|approx)(?![a-zA-Z])|=|<|>")
_FORBIDDEN = re.compile(r"\\(?:boxed|fbox|tag|label)(?![a-zA-Z])|</?think>|<\|im_end\|>|<\|endoftext\|>|<｜end▁of▁sentence｜>")


def _closing(text: str, open_pos: int) -> int:
    """Index of the `}` matching the `{` at `open_pos`, or -1 (escaped braces `\\{` are skipped)."""
    depth = 0
    i = open_pos
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return -1


def _balanced(text: str) -> bool:
    depth = 0
    i = 0
    while i < len(text):
        c = text[i]
        if c == "\\":
            i += 2
            continue
        depth += (c == "{") - (c == "}")
        if depth < 0:
            return False
        i += 1
    return depth == 0


_LEFT = re.compile(r"\\left(?![a-zA-Z])")
_RIGHT = re.compile(r"\\right(?![a-zA-Z])")
_SIZED = re.compile(r"\\(?:left|right)(?![a-zA-Z])\s*(?:[()\[\]|./<>]|\\[{}|]|\\[a-zA-Z]+)")


def reads_back(text: str) -> bool:
    """Does the formula, written in the answer format `\\boxed{...; text; ...}`, read back as itself?"""
    from mrtasks.mathcheck import strip_wrappers
    from mrtasks.rewards.mask_fill import parse_fills

    return parse_fills(f"\\boxed{{0; {text}; 0}}") == ["0", strip_wrappers(text), "0"]


def has_top_level_separator(text: str, sep: str = ";") -> bool:
    """Does `text` hold `sep` outside every bracket (and not as the spacing command `\\;`)?
    The answer format's own split (`split_top_level`) would cut it there."""
    from mrtasks.mathcheck import split_top_level

    return len(split_top_level(text, sep)) > 1


def _box_tail(text: str) -> int | None:
    """Where the chain before a closing box ends (`A + B = 4 + 3 = \\boxed{7}.` -> after `4 + 3`), or None: the box
    must close the text, and what stays must be a relation of plain math (no `\\text` aside, alignment mark, line
    break or list before the box) that holds no other box."""
    from mrtasks.mathcheck import split_top_level

    tails = list(_BOX_TAIL.finditer(text))
    if not tails:
        return None
    tail = tails[-1]
    close = _closing(text, tail.end() - 1)
    head = text[: tail.start()].rstrip()
    if close < 0 or text[close + 1 :].strip(" \t\n.,;") or _FORBIDDEN.search(head):
        return None
    last = _CHAIN_RELATION.split(head)[-1]
    if not _CHAIN_RELATION.search(head) or not last.strip() or any(m in head for m in ("&", "\\\\", "\\text")):
        return None
    if len(split_top_level(last, ",")) > 1:  # `a=60, b=750, a+b=\\boxed{..}`: a list, not a chain
        return None
    return len(head)


def repair_span(solution: str, formula: Formula) -> tuple[Formula | None, list[str]]:
    """The formula narrowed to a maskable span, or None when it cannot be masked; plus what was done.

    Every result satisfies `solution[f.start:f.end] == f.text`.
    """
    start, end = formula.start, formula.end
    done: list[str] = []
    for _ in range(4):  # wrappers can nest: `\boxed{x = 1.}` -> `x = 1.` -> `x = 1`
        text = solution[start:end]
        stripped = text.strip()
        if stripped != text:
            start += len(text) - len(text.lstrip())
            end -= len(text) - len(text.rstrip())
            continue
        m = _WRAPPER.match(text)
        if m and _closing(text, m.end() - 1) == len(text) - 1:
            start, end = start + m.end(), end - 1
            done.append("boxed_wrapper_stripped")
            continue
        tag = _TRAILING_TAG.search(text)
        if tag and tag.start() > 0:
            end = start + tag.start()
            done.append("tag_stripped")
            continue
        if "\\boxed" in text or "\\fbox" in text:
            if (cut := _box_tail(text)) is not None:
                end = start + cut
                done.append("box_tail_trimmed")
                continue
        if text and text[-1] in _TRAILING_PUNCT and not text.endswith("\\;") and not text.endswith("\\:") and len(text) > 1:
            end -= 1
            done.append("punctuation_trimmed")
            continue
        break
    text = solution[start:end]
    if not text.strip():
        return None, [*done, "removed_empty"]
    if _FORBIDDEN.search(text):
        return None, [*done, "removed_box_or_tag_inside"]
    if has_top_level_separator(text):
        return None, [*done, "removed_top_level_semicolon"]
    after_amp = start + 1 if text.startswith("&") else None
    lead = ALIGN_REL.match(solution, after_amp, end) if after_amp else LEADING_REL.match(solution, start, end)
    if after_amp or lead:  # a continuation row (`&= 5 + 5`): its result, as the heuristic offers it
        start, end = strip_span(solution, lead.end() if lead else after_amp, end)
        text = solution[start:end]
        if not text or junk_reason(text) is not None:
            return None, [*done, "removed_alignment_residue"]  # `&= 10`: what is left is no key formula
        done.append("continuation_row_cut")
    sized = len(_LEFT.findall(text)) + len(_RIGHT.findall(text))
    if (
        not _balanced(text)
        or len(_LEFT.findall(text)) != len(_RIGHT.findall(text))
        or len(_SIZED.findall(text)) != sized  # `\right` cut off before its delimiter
        or text.rstrip().endswith("\\")
    ):
        return None, [*done, "removed_unbalanced_delimiters"]
    if not reads_back(text):
        return None, [*done, "removed_not_boxable"]
    if (start, end) == (formula.start, formula.end):
        return formula, done
    return Formula(text=text, start=start, end=end), done


def repair_trajectory(traj: Trajectory, counts: Counter[str] | None = None) -> Trajectory:
    """The trajectory with every formula span repaired (order kept; unmaskable ones removed)."""
    formulas: list[Formula] = []
    seen: set[tuple[int, int]] = set()
    for f in traj.formulas:
        repaired, done = repair_span(traj.solution, f)
        if counts is not None:
            counts.update(done)
        if repaired is not None and (repaired.start, repaired.end) not in seen:
            seen.add((repaired.start, repaired.end))
            formulas.append(repaired)
    if formulas == traj.formulas:
        return traj
    return replace(traj, formulas=formulas)


def repair_trajectories(trajectories: Iterable[Trajectory]) -> list[Trajectory]:
    """`repair_trajectory` over a build's trajectories; what was repaired or removed is logged."""
    counts: Counter[str] = Counter()
    out = [repair_trajectory(t, counts) for t in trajectories]
    if counts:
        logger.info("formula spans repaired or removed: %s", ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return out


def reference_scores(task: str, rows: list[Row]) -> list[float | None]:
    """Each row's reference answer scored by the task's reward, in one batch (as TRL calls it)."""
    from mrtasks.rewards import get_reward
    from mrtasks.tasks import get_task

    if not rows:
        return []
    spec = get_task(task)
    completions = [spec.reference_answer(r) for r in rows]
    keys = [k for k in rows[0] if k != "prompt"]
    columns = {k: [r.get(k) for r in rows] for k in keys}
    return list(get_reward(spec.reward)(completions, **columns))


def check_references(rows_by_task: dict[str, list[Row]], drops: Counter[tuple[str, str]]) -> dict[str, list[Row]]:
    """Keep the rows whose reference answer earns exactly 1.0; count the rest under
    `(task, "reference_below_full_score")`."""
    out: dict[str, list[Row]] = {}
    for task, rows in rows_by_task.items():
        scores = reference_scores(task, rows)
        kept = [r for r, s in zip(rows, scores) if s == 1.0]
        if len(kept) < len(rows):
            drops[(task, REFERENCE_BELOW_FULL_SCORE)] += len(rows) - len(kept)
            for r, s in zip(rows, scores):
                if s != 1.0:
                    logger.debug("%s %s: reference scores %s; dropped", task, r.get("id"), s)
        out[task] = kept
    return out
