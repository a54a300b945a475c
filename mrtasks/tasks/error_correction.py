"""Error Correction: one step of a solution is made provably wrong; find it and restore its formula.

From the paper's future work ("error correction tasks that explicitly require the model to
identify and revise incorrect steps in a reasoning chain"). The steps are shown numbered
(`Step 0: ...`, labels stripped, as in Step Reordering). In most rows exactly one step has one
edit in one of its key formulas (a number, a sign, an operator, an inequality direction) or one
swapped theorem name; the answer is `\\boxed{k; corrected formula}`. In a seeded share of rows
(`none_fraction`, default 0.2) nothing was changed and the answer is `\\boxed{none}`, so naming
a step is never free.

Kinds a calculator cannot find. A number, sign or operator edit of a computation (`36+45=81` ->
`36+45=82`) leaves a formula that is false on its own: recomputing every formula finds the step
(the audit's `calculator` policy). In a seeded share of the error rows (`unsupported_fraction`,
default 0.3; only where the trajectory has a computation to edit) the edited step stays true on
its own but does not follow from the steps before it: `quantity` puts another quantity of the
problem or of an earlier step in place of one operand and recomputes the result (`5*2=10` ->
`5*3=15` where 3 is a given), `dropped_term` drops one term of a sum of three or more and
recomputes (`2+3+2=7` -> `2+2=4`). Every other constant member of the chain gets the new value
(`x = 3 \\cdot 4 = 12` -> `x = 3 \\cdot 5 = 15`), units and currency signs are kept, and an
integer result stays an integer (a decimal keeps its places). The answer is the original formula,
as for every kind.

"Provably wrong": the equivalence checker (`mrtasks.mathcheck.judge_in_process`, its in-process
tiers only, so construction stays deterministic and never waits on a worker) must *decide* that the
edited formula is not the original; an edit it cannot decide is not used. Theorem-name swaps
are wrong by construction (two different theorems of one table group). Which trajectories are
eligible does not depend on the seed or on the none draw: the none rows come from the same
population as the error rows, so "no formula to edit" never signals "no error".
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from mrtasks.mathcheck import Verdict, judge_in_process, numeric_truth, split_top_level, theorem_key
from mrtasks.mathcheck.expr import values_equal
from mrtasks.mathcheck.latex import balanced
from mrtasks.prompts import error_correction_messages
from mrtasks.tasks import arithmetic
from mrtasks.tasks.base import NotEligible, rng_for
from mrtasks.tasks.masked_then_fill import unlisted_answer
from mrtasks.tasks.registry import Row, TaskSpec, register_task
from mrtasks.tasks.step_reordering import strip_step_label
from mrtasks.trajectory import Trajectory

ERROR_CORRECTION = "error_correction"
NO_ERROR = "none"
"""The boxed answer of a row without an error."""
UNSUPPORTED_TYPES: tuple[str, ...] = ("quantity", "dropped_term")
"""Edits that keep the step true on its own (a calculator cannot find them)."""
ERROR_TYPES: tuple[str, ...] = ("number", "sign", "operator", "relation", "theorem", *UNSUPPORTED_TYPES)


@dataclass(frozen=True)
class ErrorCorrectionConfig:
    """How rows are drawn. `none_fraction` is the documented share of rows without an error."""

    none_fraction: float = 0.2
    """Share of rows (seeded per row) shown unchanged, answer `\\boxed{none}`."""
    min_steps: int = 3
    """Fewer steps make locating the error a coin toss."""
    max_steps: int | None = 20
    """Longer step lists are not eligible (as in Step Reordering: the prompt grows)."""
    max_formula_chars: int = 300
    """Longer formulas are not edited (the checker compares very long answers as strings)."""
    max_checks: int = 64
    """At most this many candidate edits are put to the checker per trajectory."""
    unsupported_fraction: float = 0.3
    """Share of error rows (seeded per row) whose edit keeps the step true on its own but makes it
    not follow from the steps before (`quantity`, `dropped_term`), where the trajectory has a
    computation to edit; the other drawn rows fall back to the classic kinds. 0 gives the rows of
    a build without these kinds."""

    def __post_init__(self) -> None:
        if not 0.0 <= self.none_fraction < 1.0:
            raise ValueError("none_fraction must be in [0, 1)")
        if not 0.0 <= self.unsupported_fraction <= 1.0:
            raise ValueError("unsupported_fraction must be in [0, 1]")
        if self.min_steps < 1:
            raise ValueError("min_steps must be >= 1")
        if self.max_steps is not None and self.max_steps < self.min_steps:
            raise ValueError("max_steps must be >= min_steps")
        if self.max_formula_chars < 1 or self.max_checks < 1:
            raise ValueError("max_formula_chars and max_checks must be >= 1")


# --- edits ---------------------------------------------------------------------------------------

# A number that is not part of a subscript or a command (`a_1`, `a_{12}`, `\frac12` keep theirs).
# Digit groups (`14,000`, `14{,}000`) are never edited: a changed group would read as a list.
_NUMBER = re.compile(r"(?<![A-Za-z\\_.\d])(?<!_\{)(?<!\d,)(?<!\{,\})\d+(?:\.\d+)?(?![\d.]*\d)(?!,\d)(?!\{,\})")
# A binary + or - (an operand right before it): `a + b`, `2x-1`; not `^{-1}`, `(-3)`, `\pm`.
_SIGN = re.compile(r"(?<=[\w})\]!'])(\s*)([+-])(?=\s*[\w\\({])")
_OPERATOR_SWAPS = {
    "\\cdot": "+", "\\times": "+", "\\sin": "\\cos", "\\cos": "\\sin", "\\tan": "\\cot", "\\cot": "\\tan",
    "\\max": "\\min", "\\min": "\\max", "\\cup": "\\cap", "\\cap": "\\cup", "\\sum": "\\prod", "\\prod": "\\sum",
}  # fmt: skip
_OPERATOR = re.compile(r"(\\(?:cdot|times|sin|cos|tan|cot|max|min|cup|cap|sum|prod))(?![A-Za-z])")
_RELATION_SWAPS = {
    "\\leqslant": "\\geqslant", "\\geqslant": "\\leqslant", "\\leq": "\\geq", "\\geq": "\\leq",
    "\\le": "\\ge", "\\ge": "\\le", "\\lt": "\\gt", "\\gt": "\\lt", "<": ">", ">": "<", "≤": "≥", "≥": "≤",
}  # fmt: skip
_RELATION = re.compile(r"\\(?:leqslant|geqslant|leq|geq|le|ge|lt|gt)(?![A-Za-z])|(?<![<>\-=])[<>](?![<>=])|[≤≥]")

# Theorem names, in groups of ones a solution could plausibly have cited instead.
THEOREM_GROUPS: tuple[tuple[str, ...], ...] = (
    ("Mean Value Theorem", "Intermediate Value Theorem", "Rolle's Theorem", "Extreme Value Theorem"),
    ("Chinese Remainder Theorem", "Fermat's Little Theorem", "Euler's Theorem", "Wilson's Theorem"),
    ("Cauchy-Schwarz inequality", "AM-GM inequality", "triangle inequality", "Jensen's inequality"),
    ("Law of Cosines", "Law of Sines", "Pythagorean theorem"),
    ("Dominated Convergence Theorem", "Monotone Convergence Theorem", "Fatou's Lemma"),
    ("Bolzano-Weierstrass theorem", "Heine-Borel theorem", "Arzela-Ascoli theorem"),
    ("Lagrange's theorem", "Cauchy's theorem", "Sylow's theorem"),
    ("Squeeze Theorem", "Ratio Test", "Root Test", "Comparison Test"),
    ("Fundamental Theorem of Calculus", "Fundamental Theorem of Algebra", "Fundamental Theorem of Arithmetic"),
    ("L'Hopital's rule", "chain rule", "product rule", "quotient rule"),
    ("Vieta's formulas", "Binomial Theorem", "Remainder Theorem"),
)


def _name_pattern(name: str) -> str:
    words = re.findall(r"[A-Za-z]+(?:'s)?", name)
    parts = []
    for w in words:
        base = w[:-2] if w.endswith("'s") else w
        parts.append(re.escape(base) + (r"(?:['\u2019]s)?" if w.endswith("'s") else ""))
    return r"\b" + r"[\s\-\u2013'\u2019]+".join(parts) + r"\b"  # `L'Hopital`, `Cauchy–Schwarz`


_THEOREMS = [(name, group) for group in THEOREM_GROUPS for name in group]
_THEOREM = re.compile("|".join(f"(?P<t{i}>{_name_pattern(n)})" for i, (n, _) in enumerate(_THEOREMS)), re.IGNORECASE)
# Every name ends in one of these words, so a step without any of them is not searched (the
# alternation above costs ~0.1 ms a step; this test skips it for ~97% of steps).
_THEOREM_LAST_WORDS = tuple(sorted({re.findall(r"[A-Za-z]+", name)[-1].lower() for name, _ in _THEOREMS}))


@dataclass(frozen=True)
class Edit:
    """One candidate corruption: `step[start:end]` (== original) becomes `corrupted`."""

    step: int
    start: int
    end: int
    original: str
    corrupted: str
    error_type: str


def _number_edits(formula: str) -> list[tuple[str, str]]:
    out = []
    for m in _NUMBER.finditer(formula):
        token = m.group(0)
        if "." in token:
            last = int(token[-1])
            new = token[:-1] + str(last + 1 if last < 9 else last - 1)
        else:
            n = int(token)
            new = str(n + 1) if n in (0, 1) or n % 2 else str(n - 1 if n % 4 == 0 else n + 2)
        out.append((formula[: m.start()] + new + formula[m.end() :], "number"))
    return out


def _sign_edits(formula: str) -> list[tuple[str, str]]:
    out = []
    for m in _SIGN.finditer(formula):
        flipped = "-" if m.group(2) == "+" else "+"
        out.append((formula[: m.start(2)] + flipped + formula[m.end(2) :], "sign"))
    return out


def _swap_edits(formula: str, pattern: re.Pattern[str], swaps: dict[str, str], kind: str) -> list[tuple[str, str]]:
    out = []
    for m in pattern.finditer(formula):
        token = m.group(0)
        new = swaps[token]
        out.append((formula[: m.start()] + new + formula[m.end() :], kind))
    return out


def formula_edits(formula: str) -> list[tuple[str, str]]:
    """Every single edit of one formula, as (corrupted formula, error type), in a fixed order."""
    return [
        *_number_edits(formula),
        *_sign_edits(formula),
        *_swap_edits(formula, _OPERATOR, _OPERATOR_SWAPS, "operator"),
        *_swap_edits(formula, _RELATION, _RELATION_SWAPS, "relation"),
    ]


def _editable(formula: str, config: ErrorCorrectionConfig) -> bool:
    """Can this formula be an answer? Not too long, braces balanced, no box/tag, no top-level `;`."""
    if not formula.strip() or len(formula) > config.max_formula_chars:
        return False
    if any(cmd in formula for cmd in ("\\boxed", "\\fbox", "\\tag")):
        return False
    return balanced(formula) and len(split_top_level(formula, ";")) == 1


def candidate_edits(steps: list[str], formulas: list[str], config: ErrorCorrectionConfig) -> list[Edit]:
    """Every candidate corruption of these (label-stripped) steps, in a fixed order.

    A formula is edited where it occurs in a step (its first occurrence there); a theorem name
    of `THEOREM_GROUPS` anywhere in a step's text is swapped for another of its group.
    """
    # Each distinct editable formula and its edits, once (not once per step it is looked for in).
    per_formula = [
        (f, [(c, kind) for c, kind in formula_edits(f) if c.strip() != f.strip() and _editable(c, config)])
        for f in dict.fromkeys(formulas)
        if _editable(f, config)
    ]
    edits: list[Edit] = []
    seen: set[tuple[int, int, str]] = set()
    for k, step in enumerate(steps):
        for formula, corruptions in per_formula:
            pos = step.find(formula)
            if pos < 0:
                continue
            for corrupted, kind in corruptions:
                key = (k, pos, corrupted)
                if key not in seen:
                    seen.add(key)
                    edits.append(Edit(k, pos, pos + len(formula), formula, corrupted, kind))
        lowered = step.lower()
        if not any(word in lowered for word in _THEOREM_LAST_WORDS):
            continue
        for m in _THEOREM.finditer(step):
            name, group = _THEOREMS[int(m.lastgroup[1:])]
            for other in group:
                if theorem_key(other) != theorem_key(name):
                    edits.append(Edit(k, m.start(), m.end(), m.group(0), other, "theorem"))
    return edits


def decided_not_equal(corrupted: str, original: str) -> bool:
    """Does the checker *decide* that `corrupted` is not `original` (formulas: left sides kept)?

    In-process tiers only (no worker pool, no time bound): the same inputs always give the
    same verdict. "Cannot decide", and any error inside the checker, is not a "no". One rule is
    added for relations between constants, which the checker's relation rules leave undecided
    (`44/2 = 21` vs `42/2 = 21`: both sides constant): a true statement edited into a false one
    is decided different.
    """
    if corrupted.strip() == original.strip():
        return False
    verdict = judge_in_process(corrupted, original, strip_lhs=False)
    if verdict is Verdict.UNDECIDED and (numeric_truth(original), numeric_truth(corrupted)) == (True, False):
        verdict = Verdict.DIFFERENT
    return verdict is Verdict.DIFFERENT


def provable(edit: Edit) -> bool:
    if edit.error_type == "theorem":
        return theorem_key(edit.corrupted) != theorem_key(edit.original)
    return decided_not_equal(edit.corrupted, edit.original)


def _choose(edits: list[Edit], rng: random.Random, max_checks: int) -> Edit | None:
    """A seeded choice of a provable edit: first an error type (uniform over the types this
    trajectory offers, so numbers do not crowd out signs and relations), then an edit of it."""
    by_type: dict[str, list[Edit]] = {}
    for e in edits:
        by_type.setdefault(e.error_type, []).append(e)
    types = sorted(by_type)
    rng.shuffle(types)
    checks = 0
    for t in types:
        group = by_type[t]
        rng.shuffle(group)
        for e in group:
            if checks >= max_checks:
                return None
            checks += 1
            if provable(e):
                return e
    return None


# --- edits a calculator cannot find -----------------------------------------------------------


@dataclass(frozen=True)
class Computation:
    """A formula occurrence that computes: one member with an operation (`expression`), the other
    constant members lone numbers with the same value, members with variables left as they are."""

    step: int
    start: int
    formula: str
    spans: tuple[tuple[int, int], ...]
    expression: int
    numerals: tuple[int, ...]
    value: Fraction


def _computation(step: int, start: int, formula: str) -> Computation | None:
    spans, rels = arithmetic.members(formula)
    if len(spans) < 2 or any(r != "=" for r in rels):
        return None
    texts = [formula[a:b] for a, b in spans]
    values = [arithmetic.value(t) for t in texts]
    constant = [i for i, v in enumerate(values) if v is not None]
    expressions = [i for i in constant if arithmetic.is_operation(texts[i])]
    numerals = [i for i in constant if i not in expressions and arithmetic.lone_number(texts[i])]
    if len(expressions) != 1 or not numerals or len(expressions) + len(numerals) != len(constant):
        return None
    v = values[expressions[0]]
    if not isinstance(v, Fraction) or not all(values_equal(values[i], v) for i in constant):
        return None  # not exact, or not a true computation as written
    return Computation(step, start, formula, tuple(spans), expressions[0], tuple(numerals), v)


def computations(steps: list[str], formulas: list[str], config: ErrorCorrectionConfig) -> list[Computation]:
    """Every editable formula occurrence (first in each step) that is a true computation."""
    out = []
    readable = [f for f in dict.fromkeys(formulas) if _editable(f, config) and "=" in f and any(c.isdigit() for c in f)]
    for k, step in enumerate(steps):
        for formula in readable:
            pos = step.find(formula)
            if pos >= 0 and (c := _computation(k, pos, formula)) is not None:
                out.append(c)
    return out


def _recomputed(c: Computation, expression: str) -> str | None:
    """The computation with its expression member replaced and every lone-number member given the
    new value, or None when the value is not a plausible result (the same, zero, irrational, of
    another sign, or a fraction where the result was an integer)."""
    v = arithmetic.value(expression)
    if not isinstance(v, Fraction) or v == c.value or v == 0 or (v < 0) != (c.value < 0):
        return None
    texts = [c.formula[a:b] for a, b in c.spans]
    texts[c.expression] = expression
    for i in c.numerals:
        like = arithmetic.lone_number(texts[i])
        if like is None or (v.denominator != 1 and "." not in like.group(0)):
            return None  # an integer result stays an integer
        new = arithmetic.replace_number(texts[i], v, allow_fraction=False)
        if new is None:
            return None
        texts[i] = new
    return arithmetic.join(c.formula, list(c.spans), texts)


def _quantities(text: str) -> list[str]:
    return [m.group(0) for m in _NUMBER.finditer(text)]


def _quantity_edits(c: Computation, pool: list[str], rng: random.Random) -> list[tuple[str, str]]:
    """`quantity`: one operand replaced by another quantity of the solution (seeded order)."""
    a, b = c.spans[c.expression]
    member = c.formula[a:b]
    out = []
    operands = list(_NUMBER.finditer(member))
    rng.shuffle(operands)
    for m in operands:
        others = [q for q in dict.fromkeys(pool) if Fraction(q) != Fraction(m.group(0))]
        rng.shuffle(others)
        for q in others[:4]:
            new = _recomputed(c, member[: m.start()] + q + member[m.end() :])
            if new is not None:
                out.append((new, "quantity"))
    return out


def _dropped_term_edits(c: Computation, rng: random.Random) -> list[tuple[str, str]]:
    """`dropped_term`: one term (not the first) of a sum of three or more dropped (seeded order)."""
    a, b = c.spans[c.expression]
    member = c.formula[a:b]
    terms = arithmetic.signed_term_spans(member)
    if len(terms) < 3:
        return []
    out = []
    picks = list(range(1, len(terms)))
    rng.shuffle(picks)
    for k in picks:
        s, e = terms[k]
        new = _recomputed(c, member[:s] + member[e:])
        if new is not None:
            out.append((new, "dropped_term"))
    return out


def unsupported_corruption(
    steps: list[str], formulas: list[str], problem: str, rng: random.Random, config: ErrorCorrectionConfig
) -> Edit | None:
    """A seeded `quantity` or `dropped_term` edit that the checker decides is not the original and
    that still holds as a computation, or None. Quantities are the numbers of the problem and of
    the steps before the edited one (what the step could have used by mistake)."""
    found = computations(steps, formulas, config)
    rng.shuffle(found)
    checks = 0
    for c in found:
        pool = [q for q in _quantities(problem) + [q for s in steps[: c.step] for q in _quantities(s)] if q not in ("0", "1")]
        kinds = [lambda c=c, pool=pool: _quantity_edits(c, pool, rng), lambda c=c: _dropped_term_edits(c, rng)]
        rng.shuffle(kinds)
        for kind in kinds:
            for corrupted, error_type in kind():
                if checks >= config.max_checks:
                    return None
                checks += 1
                if _editable(corrupted, config) and arithmetic.holds(corrupted) and decided_not_equal(corrupted, c.formula):
                    return Edit(c.step, c.start, c.start + len(c.formula), c.formula, corrupted, error_type)
    return None


# --- rows ----------------------------------------------------------------------------------------


def editable_formulas(traj: Trajectory) -> list[str]:
    """The formulas an edit may change: the annotator's, and first the final answer where the annotator leaves it
    out of its key formulas (a value restated in its box): a wrong final value is an error to find."""
    boxes = unlisted_answer(traj)
    return [b.text for b in boxes[:1]] + [f.text for f in traj.formulas]


def make_error_correction(
    traj: Trajectory, seed: int = 0, config: ErrorCorrectionConfig = ErrorCorrectionConfig()
) -> Row:
    """Build one Error-Correction row; raises NotEligible (counted reason) when none can be made.

    Columns: `steps` (as shown, with the corruption), `error_step` (the shown number of the
    wrong step, -1 when there is none), `original` / `corrupted` (the formula or theorem name
    before and after the edit, "" when none) and `error_type` (number, sign, operator,
    relation, theorem, quantity, dropped_term; "" when none).
    """
    n = len(traj.steps)
    if n < config.min_steps:
        raise NotEligible("too_few_steps", f"{n} < {config.min_steps}")
    if config.max_steps is not None and n > config.max_steps:
        raise NotEligible("too_many_steps", f"{n} > {config.max_steps}")
    steps = [strip_step_label(s) for s in traj.steps]
    formulas = editable_formulas(traj)
    edits = candidate_edits(steps, formulas, config)
    if not edits:
        raise NotEligible("no_corruptible_formula")
    rng = rng_for(traj, seed, ERROR_CORRECTION)
    no_error = rng.random() < config.none_fraction
    chosen = _choose(edits, rng, config.max_checks)
    if chosen is None:
        raise NotEligible("no_provable_corruption", f"{min(len(edits), config.max_checks)} edits undecided")
    # a stream of its own: rows not drawn for these kinds are the rows of a build without them
    other = rng_for(traj, seed, f"{ERROR_CORRECTION}:unsupported")
    if not no_error and other.random() < config.unsupported_fraction:
        chosen = unsupported_corruption(steps, formulas, traj.problem, other, config) or chosen
    row: Row = {
        "id": traj.id,
        "task": ERROR_CORRECTION,
        "source": traj.source,
        "kind": traj.kind,
        "problem": traj.problem,
        "steps": steps,
        "error_step": -1,
        "original": "",
        "corrupted": "",
        "error_type": "",
    }
    if not no_error:
        step = steps[chosen.step]
        shown = list(steps)
        shown[chosen.step] = step[: chosen.start] + chosen.corrupted + step[chosen.end :]
        row.update(
            steps=shown,
            error_step=chosen.step,
            original=chosen.original,
            corrupted=chosen.corrupted,
            error_type=chosen.error_type,
        )
    row["prompt"] = prompt(row)
    return row


def prompt(row: Row) -> list[dict[str, str]]:
    return error_correction_messages(row["problem"], row["steps"])


def reference_answer(row: Row) -> str:
    """`\\boxed{k; original formula}`, or `\\boxed{none}` for a row without an error."""
    if row["error_step"] < 0:
        return "\\boxed{" + NO_ERROR + "}"
    return "\\boxed{" + f"{row['error_step']}; {row['original']}" + "}"


def _columns() -> dict[str, Any]:
    import datasets

    string = datasets.Value("string")
    return {
        "steps": [string],
        "error_step": datasets.Value("int32"),
        "original": string,
        "corrupted": string,
        "error_type": string,
    }


SPEC = register_task(
    TaskSpec(
        name=ERROR_CORRECTION,
        stage=1,
        description="Error Correction: find the one step made wrong (or none) and give its corrected formula.",
        config_cls=ErrorCorrectionConfig,
        build=make_error_correction,
        columns=_columns,
        prompt=prompt,
        reward=ERROR_CORRECTION,
        reference_answer=reference_answer,
        order=2,
    )
)
