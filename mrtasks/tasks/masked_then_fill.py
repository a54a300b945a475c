"""Masked-Then-Fill: hide key formulas of a solution; the model restores them in order."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from mrtasks.mathcheck import last_boxed
from mrtasks.mathcheck.answer import RELATION
from mrtasks.mathcheck.latex import closing_brace
from mrtasks.prompts import masked_then_fill_messages
from mrtasks.tasks.base import NotEligible, rng_for
from mrtasks.tasks.registry import Row, TaskSpec, register_task
from mrtasks.trajectory import Formula, Trajectory

MASKED_THEN_FILL = "masked_then_fill"
MASK_TOKEN = "<formula_masked>"


@dataclass(frozen=True)
class MaskedThenFillConfig:
    """Which formulas to mask. Paper: samples keep at least 7 maskable formulas."""

    num_masks: int = 7
    """How many distinct formulas to mask (capped by how many the trajectory has); a formula
    written more than once is masked at every copy."""
    min_formulas: int = 7
    """Trajectories with fewer maskable formulas are not eligible."""
    selection: Literal["importance", "random"] = "importance"
    """`importance`: the top-ranked formulas; `random`: a seeded sample of all of them."""
    num_scored: int | None = None
    """h, the number of masked positions the reward scores (seeded); None scores them all."""

    def __post_init__(self) -> None:
        if self.num_masks < 1 or self.min_formulas < 1:
            raise ValueError("num_masks and min_formulas must be >= 1")
        if self.selection not in ("importance", "random"):
            raise ValueError(f"unknown selection {self.selection!r}")
        if self.num_scored is not None and self.num_scored < 1:
            raise ValueError("num_scored must be >= 1 or None")


def mask_solution(solution: str, spans: list[Formula]) -> str:
    """Replace each span with the mask tag; spans must not overlap."""
    out, pos = [], 0
    for f in sorted(spans, key=lambda f: f.start):
        if f.start < pos:
            raise ValueError(f"overlapping formula spans at {f.start}")
        out += [solution[pos : f.start], MASK_TOKEN]
        pos = f.end
    out.append(solution[pos:])
    return "".join(out)


def formula_groups(formulas: list[Formula]) -> list[list[Formula]]:
    """The formulas grouped by text (whitespace ignored), in the order of each group's first entry.

    An annotator lists a formula the solution writes more than once with every copy; the copies
    are masked together, since a visible copy would give the mask away. Without repeated texts
    every group holds one formula.
    """
    groups: dict[str, list[Formula]] = {}
    for f in formulas:
        groups.setdefault("".join(f.text.split()), []).append(f)
    return list(groups.values())


_TOKEN = re.compile(r"[^\s$]+")


def _squash(text: str) -> str:
    return "".join(text.split())


def box_spans(text: str) -> list[tuple[int, int]]:
    """Where the content of every closed `\\boxed{...}` / `\\fbox{...}` (nested braces matched) and of every
    `\\boxed 5` (the next token) stands in text, in the order of the commands."""
    out = []
    for cmd in ("\\boxed", "\\fbox"):
        i = text.find(cmd)
        while i >= 0:
            k = i + len(cmd)
            while k < len(text) and text[k] in " \t":
                k += 1
            if k < len(text) and text[k] == "{" and (end := closing_brace(text, k)) >= 0:
                out.append((k + 1, end))
            elif k > i + len(cmd) and (m := _TOKEN.match(text, k)):  # `\\boxed 5`
                out.append((k, m.end()))
            i = text.find(cmd, i + len(cmd))
    return out


def box_contents(text: str) -> list[str]:
    """The contents of every closed `\\boxed{...}` / `\\fbox{...}` and `\\boxed 5` in text (`box_spans`)."""
    return [text[a:b] for a, b in box_spans(text)]


def answer_boxes(solution: str) -> list[Formula]:
    """The boxes that show the solution's final answer (its last box's content), each as the formula inside it
    (spacing and closing punctuation left out, as an annotator's span of it is)."""
    final = last_boxed(solution)
    out: list[Formula] = []
    for a, b in sorted(box_spans(solution)) if final else []:
        if _squash(solution[a:b]) != _squash(final) or (out and a < out[-1].end):  # (a box inside another: once)
            continue
        while a < b and solution[a].isspace():
            a += 1
        while b > a and solution[b - 1] in " \t\n\r.,;:~":
            b -= 1
        if a < b:
            out.append(Formula(solution[a:b], a, b))
    return out


def unlisted_answer(traj: Trajectory) -> list[Formula]:
    """The final answer's boxes (`answer_boxes`) when the annotator does not list the answer (a value restated in its
    box is no key formula), leaving out a box inside a listed formula (masked or edited with it); [] otherwise."""
    final = last_boxed(traj.solution)
    if not final or any(_squash(f.text) == _squash(final) for f in traj.formulas):
        return []
    return [b for b in answer_boxes(traj.solution) if not any(f.start < b.end and b.start < f.end for f in traj.formulas)]


_BOXED_ALONE = re.compile(r"\\(?:boxed|fbox)\s*\{(.*)\}[\s.,;]*", re.DOTALL)


def restates_answer(text: str, final: str | None) -> bool:
    """Is `text` the final answer `final` (a solution's last box's content, `last_boxed`) as a value, boxed or not, no
    relation? Such an item is no key formula (labellers with the Appendix A prompts leave a lone value out), and the
    tasks handle the answer without it: Masked-Then-Fill masks its boxes (`unlisted_answer`), Error Correction may
    edit it."""
    if not final or RELATION.search(final):
        return False
    value = m.group(1) if (m := _BOXED_ALONE.fullmatch(text.strip())) else text
    return _squash(value).rstrip(".,;") == _squash(final).rstrip(".,;")


def shows_final_answer(masked: str, solution: str) -> bool:
    """Does the masked solution still show the solution's final answer (its last box's content) in a box?"""
    final = last_boxed(solution)
    return bool(final) and any(_squash(b) == _squash(final) for b in box_contents(masked))


def make_masked_then_fill(
    traj: Trajectory, seed: int = 0, config: MaskedThenFillConfig = MaskedThenFillConfig()
) -> Row:
    """Build one Masked-Then-Fill row; raises NotEligible when there are too few formulas.

    Formulas are counted and chosen by distinct text (`formula_groups`); a chosen formula is
    masked at every copy the annotator listed, so `masks` may repeat a text. The final answer (the
    last box's content) is always among the chosen: the annotator's group of it, or, where the
    annotator leaves it out of the key formulas, its boxes (`answer_boxes`), counted as one formula.
    A row whose masked solution would still show it in a box is not eligible
    (`visible_boxed_answer`): the answer would give the masks away.
    """
    groups = formula_groups(traj.formulas)
    final = last_boxed(traj.solution)
    answer = next((g for g in groups if final and _squash(g[0].text) == _squash(final)), None)
    if answer is None and (boxes := unlisted_answer(traj)):
        answer = boxes  # masked all the same, as the group ranked last
        groups.append(answer)
    if len(groups) < config.min_formulas:
        raise NotEligible("too_few_formulas", f"{len(groups)} < {config.min_formulas}")
    rng = rng_for(traj, seed, MASKED_THEN_FILL)
    k = min(config.num_masks, len(groups))
    if config.selection == "importance":
        picked = groups[:k]
    else:
        picked = rng.sample(groups, k)
    if answer is not None and answer not in picked:
        picked = [*picked[: k - 1], answer]  # the answer takes the last (lowest-ranked) pick's place
    chosen = sorted((f for group in picked for f in group), key=lambda f: f.start)
    masked = mask_solution(traj.solution, chosen)
    if final and shows_final_answer(masked, traj.solution):
        raise NotEligible("visible_boxed_answer", final[:80])
    scored = list(range(len(chosen)))
    if config.num_scored is not None and config.num_scored < len(chosen):
        scored = sorted(rng.sample(scored, config.num_scored))
    row = {
        "id": traj.id,
        "task": MASKED_THEN_FILL,
        "source": traj.source,
        "kind": traj.kind,
        "problem": traj.problem,
        "solution": traj.solution,
        "masked_solution": masked,
        "masks": [f.text for f in chosen],
        "scored": scored,
    }
    row["prompt"] = prompt(row)
    return row


def prompt(row: Row) -> list[dict[str, str]]:
    return masked_then_fill_messages(row["problem"], row["masked_solution"])


def reference_answer(row: Row) -> str:
    """Every mask, in order, in the paper's answer format."""
    return "\\boxed{" + "; ".join(row["masks"]) + "}"


def _columns() -> dict[str, Any]:
    import datasets

    string = datasets.Value("string")
    return {
        "solution": string,
        "masked_solution": string,
        "masks": [string],
        "scored": [datasets.Value("int32")],
    }


SPEC = register_task(
    TaskSpec(
        name=MASKED_THEN_FILL,
        stage=1,
        description="Masked-Then-Fill: restore the masked key formulas of a solution, in order.",
        config_cls=MaskedThenFillConfig,
        build=make_masked_then_fill,
        columns=_columns,
        prompt=prompt,
        reward=MASKED_THEN_FILL,
        reference_answer=reference_answer,
        order=0,
    )
)
