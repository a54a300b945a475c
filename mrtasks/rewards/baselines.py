"""Cheap solvers that never do the maths: how much of a task a shortcut recovers (issue 17).

- `dataflow_order(steps, problem)` (Step Reordering): a step that computes a number goes before
  the steps that use that number. A number "computed" by a step is one written right after an
  `=` there; a step "uses" a number it mentions anywhere else. Numbers of the problem statement
  (givens) and 0/1 tie nothing. Steps are then put in a topological order of these edges (a
  cycle is broken at the step with the fewest unmet inputs); steps the edges leave unordered
  keep the shown order, or, with `cues=True`, the surface-cue order first ("Let/Given/First"
  early, "Therefore/Thus/\\boxed" late: `surface_cue_rank`).
- `calculator_correction(steps)` (Error Correction): the first formula that is false on its own
  (a relation between constants that does not hold, unit words and currency signs ignored) names
  the step; the repair is recomputation: the result written after the `=` is replaced by the
  value of the side before it (or, in a chain whose other members agree, the odd one out by
  theirs), and a false inequality between constants is mirrored. `\\boxed{k; repaired}`, `\\boxed{k}`
  when nothing can be recomputed, `\\boxed{none}` when every formula holds.

Both are pure and deterministic; the audit scores them with the tasks' own rewards and the
dataset card reports them next to the surface-cue and random baselines.
"""

from __future__ import annotations

import functools
import re
from fractions import Fraction

from mrtasks.mathcheck import expr as _expr
from mrtasks.mathcheck.latex import depth_scan
from mrtasks.tasks.arithmetic import (
    false_on_its_own,
    is_operation,
    join,
    link_truths,
    members,
    replace_number,
    value,
)

# --- Step Reordering: dataflow ---------------------------------------------------------------

_FIRST_CUE = re.compile(r"^\W*(?:let|given|first|according|we (?:first|start|begin)|since|suppose|assume|note that)\b", re.I)
_LAST_CUE = re.compile(r"\\boxed|^\W*(?:therefore|thus|hence|so|finally|in conclusion|the answer)\b", re.I)


def surface_cue_rank(step: str) -> int:
    """0 for an opening cue ("Let", "Given", "First", ...), 2 for a closing one ("Therefore",
    "Thus", a boxed answer, ...), 1 otherwise: the order wording alone suggests."""
    return 0 if _FIRST_CUE.search(step) else 2 if _LAST_CUE.search(step) else 1


_FRAC = re.compile(r"\\[dt]?frac\s*\{\s*(\d+)\s*\}\s*\{\s*(\d+)\s*\}")
_GROUPED = re.compile(r"(?<=\d)(?:,|\{,\}|\\,)(?=\d{3}(?!\d))")
_NUM = re.compile(r"(?<![\w.\\#])(\d+(?:\.\d+)?(?:#\d+)?)")
_RESULT = re.compile(r"(?<![<>!\\])=\s*(?:\\\$|\$|\\approx)?\s*(?:\\(?:mathbf|boxed|text)\s*\{\s*)?(\d+(?:\.\d+)?(?:#\d+)?)(?![\d.]*\d)")


def _clean_numbers(text: str) -> str:
    text = _GROUPED.sub("", text)
    return _FRAC.sub(lambda m: f"{m.group(1)}#{m.group(2)}", text)  # one number; `20/4` stays two


@functools.lru_cache(maxsize=65_536)
def _canonical(token: str) -> str:
    try:
        return str(Fraction(token.replace("#", "/")))
    except (ValueError, ZeroDivisionError):
        return token


@functools.lru_cache(maxsize=65_536)
def step_numbers(step: str) -> tuple[frozenset[str], frozenset[str]]:
    """(numbers the step computes, numbers it uses), as canonical strings (`1,200` is `1200`,
    `\\frac{3}{4}` is `3/4`). Cached: the card's audit and the quality figures read the same steps."""
    text = _clean_numbers(step)
    produced_at = {m.start(1): m.group(1) for m in _RESULT.finditer(text)}
    produced = frozenset(_canonical(t) for t in produced_at.values())
    used = frozenset(_canonical(m.group(1)) for m in _NUM.finditer(text) if m.start(1) not in produced_at)
    return produced, used - produced


def dataflow_order(steps: list[str], problem: str = "", cues: bool = False) -> list[int]:
    """Shown step numbers in dataflow order (see the module docstring)."""
    n = len(steps)
    givens = {_canonical(m.group(1)) for m in _NUM.finditer(_clean_numbers(problem))} | {"0", "1"}
    flows = [step_numbers(s) for s in steps]
    inputs: list[set[int]] = [set() for _ in range(n)]
    for i, (produced, _) in enumerate(flows):
        for j, (_, used) in enumerate(flows):
            if i != j and (produced & used) - givens:
                inputs[j].add(i)
    tie = [(surface_cue_rank(s) if cues else 0, k) for k, s in enumerate(steps)]
    order: list[int] = []
    left = set(range(n))
    while left:
        ready = [k for k in left if not (inputs[k] & left)]
        pool = ready or [min(left, key=lambda k: (len(inputs[k] & left), tie[k]))]
        k = min(pool, key=lambda k: tie[k])
        order.append(k)
        left.discard(k)
    return order


# --- Error Correction: a calculator ----------------------------------------------------------

_MATH_SPAN = re.compile(r"\$\$(.+?)\$\$|\\\[(.+?)\\\]|\\\((.+?)\\\)|(?<![\\\d])\$([^$]+?)\$", re.S)
_PIECE_BREAK = re.compile(
    r"\\(?:quad|qquad|text\s*\{[^{}]*\}|mbox\s*\{[^{}]*\}|implies|Rightarrow|Longrightarrow|iff|therefore|because|"
    r"text\{and\}|hence)(?![a-zA-Z])|\\\\|;|&"
)
# plain-text arithmetic: operands (a number, optional currency sign and unit words) joined by operators and `=`
_T_NUM = r"\$?\(?(?:\d[\d,]*(?:\.\d+)?|\.\d+)\)?%?"
_T_UNIT = r"(?:\s+[A-Za-z][A-Za-z'/]*){0,3}?"
_T_OP = r"\s*(?:[-+*/×÷]|\bx\b)\s*"
_T_EXPR = rf"{_T_NUM}{_T_UNIT}(?:{_T_OP}{_T_NUM}{_T_UNIT})*"
_TEXT_CHAIN = re.compile(rf"(?<![\w.$]){_T_EXPR}(?:\s*(?:=|<|>)\s*{_T_NUM}(?:{_T_UNIT}{_T_OP}{_T_NUM})*)+")
_CUT_OPERAND = re.compile(r"(?:[-+*/×÷^=({})]|\d[:.]|\bx|\\(?:times|cdot|div|frac|dfrac|sqrt|left|right))\s*$")
_MIRROR = {"<": ">", ">": "<", "\\le": "\\ge", "\\ge": "\\le", "\\leq": "\\geq", "\\geq": "\\leq", "<=": ">=",
           ">=": "<=", "\\lt": "\\gt", "\\gt": "\\lt"}  # fmt: skip
MAX_STEP_CHARS = 4_000
"""Longer steps are read up to here (the regexes stay linear, but the checker is called per piece)."""


def formula_candidates(step: str) -> list[str]:
    """Formulas a calculator can check in one step: the pieces of its math spans (cut at `\\quad`,
    `\\text{..}`, `\\implies`, `;`, line breaks) and plain-text arithmetic chains (`3*150=$450`,
    `2 grams + 3 grams = 5 grams`), in order of appearance, without repeats."""
    return list(_formula_candidates(step[:MAX_STEP_CHARS]))


@functools.lru_cache(maxsize=65_536)
def _formula_candidates(step: str) -> tuple[str, ...]:
    """`formula_candidates`, cached: the quality figures and the card's audit read the same steps."""
    found: list[tuple[int, str]] = []
    for m in _MATH_SPAN.finditer(step):
        span = next(g for g in m.groups() if g is not None)
        last = 0
        for b in list(_PIECE_BREAK.finditer(span)) + [None]:
            piece = span[last : b.start() if b else len(span)]
            last = b.end() if b else len(span)
            depths = depth_scan(piece)
            for part in _split_commas(piece, depths):
                if part.strip():
                    found.append((m.start(), part.strip()))
    for m in _TEXT_CHAIN.finditer(step):
        if not _CUT_OPERAND.search(step[: m.start()]):  # not the tail of a longer expression (`3*m + 10 = 220`)
            found.append((m.start(), m.group(0).strip().rstrip(".,")))
    return tuple(dict.fromkeys(text for _, text in sorted(found, key=lambda p: p[0])))


def _split_commas(piece: str, depths: list[int]) -> list[str]:
    """A piece cut at top-level list commas (`a = 1, b = 2`), never inside digit groups (`1,200`)."""
    cuts = [i for i, c in enumerate(piece) if c == "," and depths[i] == 0 and not re.match(r"\d{3}(?!\d)", piece[i + 1 :])]
    out, last = [], 0
    for i in cuts:
        out.append(piece[last:i])
        last = i + 1
    out.append(piece[last:])
    return out


def recompute(formula: str) -> str | None:
    """The formula repaired by recomputation (see the module docstring), or None."""
    spans, rels = members(formula)
    texts = [formula[a:b] for a, b in spans]
    values = [value(t) for t in texts]
    for k, truth in enumerate(link_truths(formula)):
        if truth is not False:
            continue
        rel, (_, b), (c, _) = rels[k], spans[k], spans[k + 1]
        if rel in _MIRROR:
            return formula[:b] + formula[b:c].replace(rel, _MIRROR[rel], 1) + formula[c:]
        if rel != "=":
            return None
        known = [v for v in values if v is not None]
        majority = next((v for v in known if sum(_expr.values_equal(v, w) for w in known) * 2 > len(known)), None)
        if majority is not None and len(known) >= 3:  # the odd member(s) out take the others' value
            out = list(texts)
            for i, v in enumerate(values):
                if v is not None and not _expr.values_equal(v, majority):
                    new = replace_number(texts[i], majority)
                    if new is None:
                        return None
                    out[i] = new
            return join(formula, spans, out)
        for target, source in ((k + 1, k), (k, k + 1)):  # the result after `=` first
            new = replace_number(texts[target], values[source]) if values[source] is not None else None
            if new is not None:
                return join(formula, spans, [new if i == target else t for i, t in enumerate(texts)])
        return None
    return None


def calculator_correction(steps: list[str]) -> str:
    """The calculator's Error Correction answer (see the module docstring). A false computation
    (an operation on a side: `36+45=82`) is trusted before a false bare equality (`20 minutes =
    140`, usually a unit conversion or a misread sentence)."""
    false = [(k, f) for k, step in enumerate(steps) for f in formula_candidates(step) if false_on_its_own(f)]
    if not false:
        return "\\boxed{none}"
    k, formula = next(((k, f) for k, f in false if is_operation(f)), false[0])
    repaired = recompute(formula)
    return "\\boxed{" + (f"{k}; {repaired.strip()}" if repaired else str(k)) + "}"
