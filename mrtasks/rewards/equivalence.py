"""Is a predicted answer the same mathematical object as the reference?

Three tiers, cheapest first:
1. normalize both strings (wrappers, `\\dfrac`, `\\left`, degrees, percent, units, thousands
   separators) and compare them;
2. parse both into a structure (atom, relation, tuple, set, list, labelled group, ratio, union,
   matrix) and compare it with the rules below, atoms with the safe evaluator in `expr` (exact
   rationals, probe points for variables);
3. only when tier 2 cannot decide: MathRuler's `grade_answer` on sanitized text, run in the
   time-bounded worker pool (`pool.py`), since it calls sympy's `parse_expr`, which `eval`s.

Math-Verify was measured as a further tier (`python -m mrtasks.rewards.accuracy` reports it when
installed) and not adopted: the in-process tiers leave none of the held-out pairs undecided,
and it costs about 13 ms per pair in-process (5 s on one fixture pair that hit its timeout).

Two modes: final answers (`strip_lhs=True`, outcome reward and evaluation) and formulas
(`strip_lhs=False`, Masked-Then-Fill). `judge_batch` returns a three-valued `Verdict` (equal /
different / undecided); `equal_batch` is its boolean view. Parses are cached (LRU).

Policies (each has positive and negative cases in tests/data/equivalence_pairs.jsonl):

- Relations. `a R b` equals `b R' a` with the relation mirrored (`7 \\geq y` is `y \\leq 7`). Two
  equations are equal when `lhs - rhs` agree up to a nonzero constant factor (`3x-6y+9=0` is
  `y=\\frac12x+\\frac32`; `2x=5` is not `x=5`); two inequalities when they agree up to a positive
  factor with the same strictness (`-t > -3` is `t < 3`; `x \\leq 5` is not `x < 5`). Probe points
  are exact rationals. Formulas (Masked-Then-Fill) compare side by side, as written or mirrored
  (`0 = x^2-3x-3` is `x^2-3x-3 = 0`), each side up to reordering and notation; a rearranged or
  rescaled equation is another step of the derivation (`33b = 66a` is not `40b+4a = 70a+7b`).
  Chains `a = b = c` are compared member by member (in order or mirrored).
  Formulas the evaluator cannot read that are the same text but for a number are different
  (`\\lfloor\\sqrt[8]{n}\\rfloor` vs `\\lfloor\\sqrt[7]{n}\\rfloor`), so strict scoring means something.
- Values of final answers. A final answer `L = v` whose left side is a label (a name such as
  `x`, `AB`, `g(t)`, `|PQ|`, `\\angle ABC`, `S_{\\max}`, `\\frac{AM}{MB}`, `S_1:S_2`) stands for
  its value `v`; a chain whose first member is a label or a constant computation stands for
  its last member when the chain holds (`n = 4+4+2 = 10` is 10; `2+2 = 5` is nothing);
  `v \\approx d` stands for `v` (the exact value), and a bare `\\approx d` matches when exact or
  when `d` states two or more significant digits and lies within half a unit of its last digit. A left side with variables that
  is not a label is an equation, never a label (`2x = 5` is not 5). Labels are ignored, so
  `y = 5` matches `x = 5` in a final answer; formulas keep them (`A = 1` is not `B = 1`).
- Several answers. All `\\boxed{}` of the prediction are collected (`parsing.final_boxes` picks,
  from a completion, the last box and the boxes joined to it only by "and"/"or"/commas); answers joined
  by `,`, `;`, "and", "or" form an unordered list, `\\pm v` is the two values, a list equals a set
  with the same members, and a repeated member counts once. Distinct labels (`a=3, b=1`) form an
  ordered group that matches a tuple `(3, 1)` or the list `3, 1` in that order; labels repeating
  in a cycle (`p=5, q=2 and p=7, q=2`) form one group per cycle. An ordered tuple is never a set
  or a list; `(0;-2;6)` is the tuple `(0, -2, 6)`.
- Intervals. Inequalities in one variable (or in a label such as `g(x)`, `|w|` or a linear
  expression of the variable), `x \\in S`, unions, `\\{a\\}` and `\\mathbb{R}` are converted to unions
  of intervals and compared as point sets (`-3 \\le x \\le 4` is `[-3, 4]`); the variable's name
  is not compared. A pair `(a, b)` is read as an interval only when the other side is one.
  Final answers only: in a formula, `x < 3` and `(-\\infty, 3)` are different texts.
- Numbers. Thousands separators (`48,\\!215`, `2{,}000`, `2\\,000`, `2 000`) are dropped; a
  comma followed by other than three digits is a decimal comma when the reference is written
  as a decimal (`3,14` is `3.14`; `1,2` is not `\\frac65`, it is more likely the list 1, 2); a
  decimal literal matches an exact value within a relative 1e-6 (`0.1666666666666667` is 1/6;
  `0.083` is not 1/12).
- Words and wrappers (final answers). `Answer \\( 7 \\)`, `\\[ 7 \\]`, `$$ 7 $$`, "the answer is";
  percent words (`35 percent`, `pct`, `percentage`) are `\\%`, which is dropped; words or a `\\text{}`
  after a value are units and dropped (`\\frac{2}{5} \\textbf{liters}`); a choice letter matches a
  prediction that starts with that letter (`D. y = 12`, `(D)`, `\\text{D}`).
"""

from __future__ import annotations

import enum
import functools
import logging
import math
import re
from dataclasses import dataclass
from fractions import Fraction

from mrtasks.rewards import expr
from mrtasks.rewards.parsing import _closing_brace, split_top_level, strip_wrappers

logger = logging.getLogger(__name__)

MAX_ANSWER_CHARS = 2_000
"""Longer answers are compared as strings only (never parsed, never sent to sympy)."""
MAX_SYMPY_CHARS = 300
DECIMAL_REL_TOL = 1e-6
"""A decimal literal matches an exact value within this relative error."""


CACHED_CHARS = 1_000
"""Only texts up to this length are cached: a policy emitting huge boxes must not fill memory."""


def _short_cache(maxsize: int):
    """`lru_cache` for calls whose string arguments are short; longer ones are computed afresh."""

    def deco(fn):
        cached = functools.lru_cache(maxsize=maxsize)(fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            values = (*args, *kwargs.values())
            if sum(len(a) for a in values if isinstance(a, str)) <= CACHED_CHARS:
                return cached(*args, **kwargs)
            return fn(*args, **kwargs)

        wrapper.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
        wrapper.cache_info = cached.cache_info  # type: ignore[attr-defined]
        return wrapper

    return deco


class Verdict(enum.Enum):
    """Three-valued result of a comparison: mask_fill gives 1.0 / 0.0 / text similarity."""

    EQUAL = "equal"
    DIFFERENT = "different"
    UNDECIDED = "undecided"


_UNITS = (
    "units?|sq\\.?\\s*units?|square\\s+units?|cm|centimeters?|mm|km|meters?|m|inches|inch|in|feet|foot|ft|"
    "yards?|miles?|mph|seconds?|sec|s|minutes?|min|hours?|hrs?|days?|weeks?|months?|years?|degrees?|"
    "dollars?|cents?|points?|people|students|ways|marbles|pounds?|lbs?|ounces?|oz|grams?|g|kg|liters?|"
    "gallons?|calories"
)
_TEXT_UNIT = re.compile(rf"\\(?:text|mbox|mathrm|textrm)\s*\{{\s*(?:{_UNITS})\s*\}}(?:\^\{{?[23]\}}?)?")
_PROSE_TEXT = re.compile(r"\\(?:text|mbox|textrm|textit)\s*\{[^{}]*?[A-Za-z]{2,}\s+[A-Za-z(][^{}]*\}")
"""A `\\text{}` of two or more words is an annotation (`\\quad \\text{(squaring both sides)}`)."""
_TEXT_TRAILING = re.compile(r"\\(?:text|mbox)\s*\{\s[^{}]*\}(?:\^\{?[23]\}?)?$")  # `5\text{ cm}`
_PLAIN_UNIT = re.compile(rf"(?<=[\d}}])\s+(?:{_UNITS})(?:\^\{{?[23]\}}?)?\s*$")
_TEXT_CMD = re.compile(
    r"\\(?:text|textbf|textrm|textit|textnormal|mathrm|mathbf|mathit|mathsf|mbox|operatorname|texttt|boldsymbol)"
    r"\s*\{([^{}]*)\}"
)
_WORD_SEP = re.compile(r"\\(?:text|mathrm|textbf|mbox)\s*\{\s*(?:or|and)\s*\}|\s+(?:or|and)\s+|(?<=[\s$)}])(?:or|and)(?=[\s$(\\])")
_SPACING = re.compile(r"(?<!\\)\\(?:[,;:! ]|quad|qquad|displaystyle|textstyle|limits|nolimits)(?![a-zA-Z])|~")
_SIZING = re.compile(r"\\(?:left|right|bigl|bigr|Bigl|Bigr|biggl|biggr|big|Big|bigg|Bigg)(?![a-zA-Z])\.?")
_DEGREES = re.compile(r"\^\s*(?:\{\s*\\circ\s*\}|\\circ)|°|\\degree(?![a-zA-Z])|\\circ$")
_THOUSANDS = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_THOUSANDS_SEP = re.compile(r"(?<=\d)(?:\{,\}|,\\!\s*|\\,|\\ |\s)(?=\d{3}(?!\d))")
_CMD_SPACE = re.compile(r"(\\[a-zA-Z]+)\s+(?=[a-zA-Z])")
_REL_WORDS = (("\\leqslant", "\\leq"), ("\\geqslant", "\\geq"), ("\\leqq", "\\leq"), ("\\geqq", "\\geq"),
              ("\\approx", "≈"), ("\\simeq", "≈"), ("\\doteq", "≈"))  # fmt: skip
_RELATION = re.compile(r"\\(?:leq|geq|neq|le|ge|ne|lt|gt)(?![a-zA-Z])|<=|>=|=|<|>|≤|≥|≠|≈")  # `b!=c`: b! = c
_REL_CANON = {
    "\\le": "\\leq", "\\leq": "\\leq", "<=": "\\leq", "≤": "\\leq",
    "\\ge": "\\geq", "\\geq": "\\geq", ">=": "\\geq", "≥": "\\geq",
    "\\ne": "\\neq", "\\neq": "\\neq", "!=": "\\neq", "≠": "\\neq",
    "\\lt": "<", "\\gt": ">", "<": "<", ">": ">", "=": "=", "≈": "≈",
}  # fmt: skip
_MIRROR = {"<": ">", ">": "<", "\\leq": "\\geq", "\\geq": "\\leq", "=": "=", "\\neq": "\\neq", "≈": "≈"}
_INEQ = {"<", ">", "\\leq", "\\geq"}
_CHOICE = re.compile(r"^\(?([A-E])\)?$")
_CHOICE_PREFIX = re.compile(r"^\(?([A-E])(?:\)|\.|:)?(?:\s|$)")
_WORDS = re.compile(r"^[A-Za-z][A-Za-z ]*$")
_MATRIX = re.compile(r"^\\begin\{([pbvBV]?matrix|array)\}(?:\{[^{}]*\})?(.*)\\end\{\1\}$", re.S)
_REALS = {"\\mathbb{R}", "\\mathbbR", "\\R", "\\mathbf{R}", "(-\\infty,\\infty)", "(-\\infty,+\\infty)"}

# final answers only
_PROSE = re.compile(r"^\s*(?:the\s+)?(?:final\s+)?answer(?:\s+is)?\s*[:=]?\s*", re.I)
_PERCENT_WORDS = re.compile(r"\s*(?:\\text\s*\{\s*)?(?:percentage|percent|pct)(?:\s*\})?\.?(?=\s*(?:,|;|$))", re.I)
_TRAILING_WORDS = re.compile(
    r"(?<=[\d}\)\]])\s*(?:\\(?:text|textbf|textrm|textit|mbox|mathrm)\s*\{\s*[A-Za-z][A-Za-z .]*\}"
    r"|\s+[A-Za-z]{2,}(?:\s+[A-Za-z]{2,})*)(?:\^\s*\{?[23]\}?)?\.?(?=\s*(?:,|;|$))"
)
_DECIMAL_COMMA = re.compile(r"-?\d+,(?:\d{1,2}|\d{4,})")
_DECIMAL = re.compile(r"-?(?:\d+\.\d*|\.\d+)")

# a label: what names a value on the left of `=` in a final answer
_NAME = r"(?:[A-Za-z]+|\\[a-zA-Z]+)(?:_\{[^{}=]*\}|_[A-Za-z0-9])?'*(?:\([A-Za-z](?:,[A-Za-z])*\))?"
_LABEL = re.compile(
    rf"^(?:{_NAME}|\({_NAME}(?:,{_NAME})+\)|\|{_NAME}\||\\angle ?{_NAME}|\\frac\{{{_NAME}\}}\{{{_NAME}\}}|{_NAME}(?::{_NAME})+)$"
)
_CONSTANTS = {"\\infty", "\\pi", "e", "i"}
_IN = re.compile(rf"^(?:{_NAME}|\([A-Za-z](?:,[A-Za-z])+\))\\in(?![a-zA-Z])")


def collect_boxes(text: str) -> str:
    """Several `\\boxed{}` in one answer (`\\boxed{3}, \\boxed{4}`) -> their contents as a list."""
    if "\\boxed" not in text and "\\fbox" not in text:
        return text
    parts, pos = [], 0
    box = re.compile(r"\\(?:boxed|fbox)\s*\{")
    while len(parts) < 50:
        m = box.search(text, pos)
        if not m:
            break
        end = _closing_brace(text, m.end() - 1)
        if end < 0:
            break
        parts.append(text[m.end() : end])
        pos = end + 1
    return ", ".join(parts) if parts else text


@_short_cache(maxsize=100_000)
def final_text(text: str) -> str:
    """Final-answer-only cleanup before `normalize`: collected boxes, prose wrappers, percent
    words and trailing unit words (formulas keep all of these)."""
    text = collect_boxes(text.replace("\n", " "))
    text = _PROSE.sub("", text, count=1)
    text = strip_wrappers(text)
    text = _PERCENT_WORDS.sub("", text)
    text = _PLAIN_UNIT.sub("", text)  # `6 m` is six metres here, but 6*m in a formula
    return _TRAILING_WORDS.sub("", text)


@_short_cache(maxsize=100_000)
def normalize(text: str) -> str:
    """A canonical string for an answer: same object, same string, in the common cases.

    Cached: a reference (and often a prediction) recurs across a prompt's rollouts, and the
    similarity fallback normalizes the same strings the parser already did."""
    text = strip_wrappers(text.replace("\n", " "))
    if "&" in text and "\\begin" not in text:  # an alignment `&` (`a^2 & = 9`), not a matrix column
        text = re.sub(r"(?<!\\)&", " ", text)
    text = _THOUSANDS_SEP.sub("", text) if re.search(r"\d(?:\{,\}|,\\!|\\,|\\ |\s)\d{3}", text) else text
    text = _WORD_SEP.sub(",", text)
    text = _TEXT_UNIT.sub("", text)
    text = _TEXT_TRAILING.sub("", text)
    text = _PROSE_TEXT.sub("", text)
    for _ in range(3):
        text = _TEXT_CMD.sub(r"\1", text)
    text = _SPACING.sub(" ", text)
    text = _SIZING.sub("", text)
    text = text.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac").replace("\\cfrac", "\\frac")
    for old, new in _REL_WORDS:
        text = text.replace(old, new)
    text = _DEGREES.sub("", text)
    text = text.replace("\\%", "").replace("%", "").replace("\\$", "").replace("$", "")
    text = text.replace("{,}", ",").replace("\\cdot", "*").replace("\\times", "*").replace("\\ast", "*")
    text = text.replace("\\lvert", "|").replace("\\rvert", "|").replace("\\mid", "|")
    text = _CMD_SPACE.sub("\\1\x01", text.replace("\x01", ""))  # `\sin x` must not become `\sinx`
    text = re.sub(r"\s+", "", text).replace("\x01", " ")
    text = re.sub(r"\^\{?\\prime\}?|\\prime", "'", text)
    while text.endswith(".") and not text[-2:-1].isdigit():
        text = text[:-1]
    if _THOUSANDS.fullmatch(text):
        text = text.replace(",", "")
    return strip_wrappers(text)


@dataclass(frozen=True)
class Answer:
    """A parsed answer. `kind` is atom, relation, tuple, set, list, group (labelled values in
    order), ratio, union or matrix; `shape` is what must match exactly (brackets, relation
    signs, matrix size)."""

    norm: str
    kind: str = "atom"
    shape: str = ""
    parts: tuple[Answer, ...] = ()
    node: expr.Node | None = None
    words: str | None = None

    @property
    def ordered(self) -> bool:
        return self.kind in ("tuple", "matrix", "ratio", "group")

    @property
    def rels(self) -> list[str]:
        return self.shape.split(" ") if self.kind == "relation" else []


def _wrapped(text: str, left: str, right: str) -> bool:
    """Does the bracket opening at 0 close exactly at the end?"""
    if not (text.startswith(left) and text.endswith(right)) or len(text) < len(left) + len(right):
        return False
    depth = 0
    for i, c in enumerate(text):
        if c in "{([":
            depth += 1
        elif c in "})]":
            depth -= 1
            if depth == 0 and i < len(text) - 1:
                return False
    return True


def _split(text: str, pattern: re.Pattern) -> tuple[list[str], list[str]]:
    """Split on a regex at bracket depth 0; returns (parts, separators)."""
    if not pattern.search(text):
        return [text], []
    parts, seps, depth, last, i = [], [], 0, 0, 0
    while i < len(text):
        c = text[i]
        if c in "{([":
            depth += 1
        elif c in "})]":
            depth = max(depth - 1, 0)
        elif depth == 0:
            m = pattern.match(text, i)
            if m and m.end() > i:
                parts.append(text[last:i])
                seps.append(m.group(0))
                last = i = m.end()
                continue
        i += 1
    parts.append(text[last:])
    return parts, seps


_CUP = re.compile(r"\\cup(?![a-zA-Z])|∪")
_PM = re.compile(r"\\pm(?![a-zA-Z])|±")
_COMMA = re.compile(r",")
_SEMI = re.compile(r";")
_COLON = re.compile(r":")


@_short_cache(maxsize=100_000)
def parse_answer(text: str, strip_lhs: bool = True) -> Answer:
    """Parse an answer once (cached). `strip_lhs` selects final-answer mode (see the module
    docstring); formulas keep every word and left-hand side."""
    if len(text) > MAX_ANSWER_CHARS:
        return Answer(norm=text)
    return _parse(normalize(final_text(text) if strip_lhs else text), depth=0, final=strip_lhs)


def _flatten(parts: list[Answer]) -> tuple[Answer, ...]:
    """`0, \\pm 1` is three values: a `\\pm` item inside a list or set contributes both."""
    out: list[Answer] = []
    for p in parts:
        out.extend(p.parts if p.kind == "list" and p.shape == "pm" else [p])
    return tuple(out)


def _parse(norm: str, depth: int, final: bool) -> Answer:
    if depth > 6 or not norm:
        return Answer(norm=norm)
    sub = lambda s: _parse(strip_wrappers(s), depth + 1, final)  # noqa: E731
    m = _IN.match(norm)
    if m and m.end() < len(norm):
        return sub(norm[m.end() :])
    groups, _ = _split(norm, _SEMI)
    if len(groups) > 1:
        return Answer(norm, "list", "", _flatten([sub(g) for g in groups if g]))
    if _wrapped(norm, "\\{", "\\}"):
        inner = norm[2:-2]
        return Answer(norm, "set", "", _flatten([sub(p) for p in split_top_level(inner, ",") if p]))
    m = _MATRIX.match(norm)
    if m:
        rows = [r for r in m.group(2).split("\\\\") if r]
        cells = [c for r in rows for c in r.split("&")]
        shape = f"{len(rows)}x{len(cells) // max(len(rows), 1)}"
        return Answer(norm, "matrix", shape, tuple(sub(c) for c in cells))
    if len(norm) >= 2 and norm[0] in "([" and norm[-1] in ")]" and _wrapped(norm, norm[0], norm[-1]):
        items = split_top_level(norm[1:-1], ",")
        if len(items) == 1 and ";" in norm:  # `(0;-2;6)`: coordinates separated by `;`
            items = split_top_level(norm[1:-1], ";")
        if len(items) > 1:
            return Answer(norm, "tuple", norm[0] + norm[-1], tuple(sub(p) for p in items))
        if norm[0] == "(" and norm[-1] == ")":
            return sub(norm[1:-1])
    items, _ = _split(norm, _COMMA)
    if len(items) > 1:
        rel_at = [i for i, p in enumerate(items) if _split(p, _RELATION)[1]]
        if rel_at == [0] or rel_at == [len(items) - 1]:
            # `x = 1, 2, 3` / `1, 2 = x`: one relation whose outer side is the list
            sides, rels = _split(norm, _RELATION)
            if len(rels) == 1:
                shape = _REL_CANON.get(rels[0], rels[0])
                return Answer(norm, "relation", shape, tuple(sub(s) for s in sides))
        parsed = [sub(p) for p in items if p]
        labels = [_label_value(p) for p in parsed]
        names = [lv[0] for lv in labels if lv]
        if final and all(labels) and len(set(names)) == len(names) > 1:
            return Answer(norm, "group", "", tuple(lv[1] for lv in labels))  # type: ignore[index]
        if final and all(labels) and len(names) > 2:
            # `p=5, q=2 and p=7, q=2`: the labels repeat in a cycle -> one group per cycle
            k = names.index(names[0], 1) if names[0] in names[1:] else 0
            if k > 1 and len(names) % k == 0 and names == names[:k] * (len(names) // k) and len(set(names[:k])) == k:
                values = [lv[1] for lv in labels]  # type: ignore[index]
                groups = tuple(Answer(",".join(v.norm for v in values[j : j + k]), "group", "", tuple(values[j : j + k]))
                               for j in range(0, len(values), k))  # fmt: skip
                return Answer(norm, "list", "", groups)
        return Answer(norm, "list", "", _flatten(parsed))
    sides, rels = _split(norm, _RELATION)
    if rels:  # before `\cup`: `Y = A \cup B` is a relation
        shape = " ".join(_REL_CANON.get(r, r) for r in rels)
        return Answer(norm, "relation", shape, tuple(sub(s) for s in sides))
    if len(_PM.findall(norm)) == 1 and "," not in norm and not _RELATION.search(norm):
        # `\pm 3`, `1 \pm \sqrt{2}`: the two values, in either order
        values = (_PM.sub("+", norm), _PM.sub("-", norm))
        return Answer(norm, "list", "pm", tuple(sub(v) for v in values))
    parts, _ = _split(norm, _CUP)
    if len(parts) > 1:
        return Answer(norm, "union", "", tuple(sub(p) for p in parts))
    ratio, _ = _split(norm, _COLON)
    if len(ratio) > 1 and all(ratio):
        return Answer(norm, "ratio", str(len(ratio)), tuple(sub(p) for p in ratio))
    choice = _CHOICE.match(norm)
    if choice:  # a choice letter, or a variable next to a number
        return Answer(norm, words=choice.group(1).lower(), node=("var", choice.group(1)))
    if _WORDS.match(norm) and len(norm) > 2:
        return Answer(norm, words=norm.lower())
    try:
        node = expr.parse(norm)
    except expr.ExprError:
        node = None
    return Answer(norm, node=node)


# --- values of final answers ---------------------------------------------------------------


def _is_label(a: Answer) -> bool:
    return a.norm not in _CONSTANTS and bool(_LABEL.match(a.norm))


def _constant(a: Answer) -> bool:
    return a.kind == "atom" and a.node is not None and not expr.variables(a.node)


def _label_value(a: Answer) -> tuple[str, Answer] | None:
    """`name = value` -> (name, value), for labelled groups such as `a=3, b=1`."""
    if a.kind == "relation" and a.shape == "=" and _is_label(a.parts[0]) and not _is_label(a.parts[1]):
        return a.parts[0].norm, a.parts[1]
    return None


def _value(a: Answer) -> tuple[Answer, bool] | None:
    """The value a final-answer relation stands for, and whether it is an approximation; None
    for equations and inequalities (see the module docstring)."""
    rels = a.rels
    if not rels or any(r not in ("=", "≈") for r in rels):
        return None
    members = list(a.parts)
    if not members[0].norm:  # `\approx 0.707`
        return (members[1], rels[0] == "≈") if len(members) == 2 else None
    if "≈" in rels:
        j = rels.index("≈")
        exact = members[j]
        if not _is_label(exact):
            return exact, False
        return members[j + 1], True
    first, last = members[0], members[-1]
    if _is_label(last) and not _is_label(first) and len(members) == 2:
        first, last = last, first  # `5 = x`
    if _is_label(last):
        return None
    if _is_label(first) or _constant(first) or len(members) > 2 and all(_is_label(m) for m in members[:-1]):
        # a computation chain must hold: `3 = 5` or `2+2 = 5` stands for nothing
        for m in members[:-1]:
            if _constant(m) and last.node is not None and expr.same_value(m.node, last.node) is not True:
                return None
        return last, False
    return None


# --- relations -----------------------------------------------------------------------------


def _difference(a: Answer) -> expr.Node | None:
    """`lhs - rhs` of a two-sided relation, or None when a side does not parse."""
    lhs, rhs = a.parts
    if lhs.node is None or rhs.node is None:
        return None
    return ("add", lhs.node, ("neg", rhs.node))


def _proportional(f: expr.Node, g: expr.Node, positive: bool, unit: bool) -> bool | None:
    """Is f = c*g for a constant c != 0 (c > 0 when `positive`; c = +-1 when `unit`)? None when
    it cannot tell (a side does not evaluate, or f and g are constants). Probe points are exact
    rationals, so polynomials are compared exactly (`N = 9876512` vs `N = 9876510` differ)."""
    names = expr.variables(f) | expr.variables(g)
    if not names:
        return None
    ratios, seen = [], set()
    for env in expr.probe_points(names, count=4):
        env = {k: Fraction(v) for k, v in env.items()}
        try:
            vf, vg = expr.evaluate(f, env), expr.evaluate(g, env)
        except (expr.ExprError, OverflowError, ValueError):
            return None
        seen.add(vf)
        if vf == 0 and vg == 0:
            continue
        if vf == 0 or vg == 0:
            return False
        ratios.append(vf / vg)
    if not ratios or len(seen) < 2:
        return None  # constants: `\frac{1}{2i}(-\pi i) = \frac{\pi}{5}` has no variable left
    first = ratios[0]
    if not all(expr.values_equal(r, first) for r in ratios[1:]):
        return False
    if unit and not (expr.values_equal(abs(first), 1)):
        return False
    return first > 0 if positive else True


def _normal_form_equal(p: Answer, r: Answer, final: bool = True) -> bool | None:
    """Two-sided relations compared as `lhs - rhs` (up to a constant factor, see docstring)."""
    if len(p.parts) != 2 or len(r.parts) != 2:
        return None
    (rp,), (rr,) = p.rels, r.rels
    fp, fr = _difference(p), _difference(r)
    if fp is None or fr is None:
        return None
    if rp == "=" and rr == "=":
        return _proportional(fp, fr, positive=False, unit=not final)
    if rp in _INEQ and rr in _INEQ:
        if (rp in ("<", ">")) != (rr in ("<", ">")):
            return False
        if rp in (">", "\\geq"):
            fp = ("neg", fp)  # orient both as `f < 0` / `f <= 0`
        if rr in (">", "\\geq"):
            fr = ("neg", fr)
        return _proportional(fp, fr, positive=True, unit=not final)
    return False if {rp, rr} <= _INEQ | {"="} else None


def _members_equal(p: Answer, r: Answer, final: bool) -> bool | None:
    """Chains compared member by member, in order or mirrored (`0 = f` is `f = 0`)."""
    if len(p.parts) != len(r.parts):
        return False
    straight = p.shape == r.shape
    mirror = " ".join(_MIRROR.get(x, x) for x in reversed(p.rels)) == r.shape
    if straight and mirror and len(p.parts) == 2:
        (a, b), (c, d) = p.parts, r.parts
        first = [compare(a, c, final), compare(b, d, final)]
        if first == [True, True]:
            return True
        second = [compare(a, d, final), compare(b, c, final)]
        # One side the same and the other different: swapping cannot help either, since then
        # b = c = a = d would make the different sides equal (`M = \sum_{i=4}` vs `M = \sum_{i=1}`).
        for pairing, other in ((first, second), (second, first)):
            if sorted(pairing, key=str) == [False, True] and None in other:
                other[:] = [False, False]
        return _any([_all(first), _all(second)])
    verdicts = []
    if straight:
        verdicts.append(_all(compare(a, b, final) for a, b in zip(p.parts, r.parts)))
    if mirror:
        verdicts.append(_all(compare(a, b, final) for a, b in zip(reversed(p.parts), r.parts)))
    return _any(verdicts) if verdicts else False


def _all(verdicts) -> bool | None:
    undecided = False
    for v in verdicts:
        if v is False:
            return False
        if v is None:
            undecided = True
    return None if undecided else True


def _any(verdicts: list[bool | None]) -> bool | None:
    if True in verdicts:
        return True
    return None if None in verdicts else False


def _compare_relations(p: Answer, r: Answer, final: bool) -> bool | None:
    if p.kind == "relation" and r.kind == "relation":
        members = _members_equal(p, r, final)
        if members is True:
            return True
        # Formulas: sides compared as they stand (swapped or mirrored); a rearranged equation
        # (`33b = 66a` for `40b + 4a = 70a + 7b`) is another step of the derivation, not this one.
        normal = _normal_form_equal(p, r, final) if final else None
        if normal is True:
            return True
        # Member-wise decided "different" and the normal form cannot say more (a side does not
        # parse, or both are identities such as `2^{10} = 1024`): different.
        verdicts = [members, False if members is False and normal is None else normal]
        if final:
            vp, vr = _value(p), _value(r)
            if vp is not None and vr is not None:
                verdicts.append(_compare_values(vp, vr))
            elif "≈" not in p.shape + r.shape:
                lp, lr = _is_label(p.parts[0]), _is_label(r.parts[0])
                if lp and lr and p.shape == r.shape and len(p.parts) == len(r.parts) == 2:
                    verdicts.append(compare(p.parts[1], r.parts[1], final))
        return _any(verdicts)
    if not final:
        return False
    rel, other = (p, r) if p.kind == "relation" else (r, p)
    if other.kind == "group":  # `a = b = 2` vs `a=2, b=2`
        labels = rel.parts[:-1]
        if len(labels) == len(other.parts) and all(_is_label(m) for m in labels) and rel.shape.count("≈") == 0:
            return _all(compare(v, rel.parts[-1], final) for v in other.parts)
    value = _value(rel)
    if value is None:
        return False
    return _compare_values(value, (other, False)) if rel is p else _compare_values((other, False), value)


def _compare_values(a: tuple[Answer, bool], b: tuple[Answer, bool]) -> bool | None:
    (va, approx_a), (vb, approx_b) = a, b
    if approx_a == approx_b:
        return compare(va, vb, True)
    approx, exact = (va, vb) if approx_a else (vb, va)
    return _approx_equal(approx, exact)


def _approx_equal(approx: Answer, exact: Answer) -> bool | None:
    """`\\approx d` matches when exact, or when d states at least two significant digits and
    lies within half a unit of its last digit (`\\approx 0.71` is `\\frac{\\sqrt2}{2}`; `\\approx 3`
    is not `\\pi`, `\\approx 0` is not `\\frac13`)."""
    if not (_constant(approx) and _constant(exact)):
        return compare(approx, exact, True)
    if not re.fullmatch(r"-?\d+(?:\.\d+)?", approx.norm):
        return compare(approx, exact, True)
    digits = approx.norm.split(".")[1] if "." in approx.norm else ""
    significant = len(approx.norm.lstrip("-").replace(".", "").lstrip("0"))
    tol = 0.5 * 10 ** (-len(digits)) * (1 + 1e-9)
    try:
        a, b = expr.evaluate(approx.node, {}), expr.evaluate(exact.node, {})
        if expr.values_equal(a, b):
            return True
        return significant >= 2 and abs(float(a) - float(b)) <= tol
    except (expr.ExprError, OverflowError):
        return None


# --- intervals -----------------------------------------------------------------------------

Interval = tuple[float | Fraction, bool, float | Fraction, bool]  # lo, lo closed, hi, hi closed
_INF = float("inf")


def _number(a: Answer) -> float | Fraction | None:
    if not _constant(a):
        return None
    try:
        v = expr.evaluate(a.node, {})
    except (expr.ExprError, OverflowError):
        return None
    return v


def _intervalish(a: Answer) -> bool:
    if a.kind == "union" or a.norm in _REALS:
        return True
    if a.kind == "relation":
        return any(r in _INEQ for r in a.rels)
    if a.kind == "list":
        return any(_intervalish(p) for p in a.parts)
    return False


def _linear(node: expr.Node) -> tuple[Fraction | float, Fraction | float] | None:
    """(a, b) when node = a*v + b in its single variable v, else None."""
    names = expr.variables(node)
    if len(names) != 1:
        return None
    (v,) = names
    try:
        f0, f1, f2 = (expr.evaluate(node, {v: x}) for x in (Fraction(0), Fraction(1), Fraction(5, 2)))
    except (expr.ExprError, OverflowError):
        return None
    a = f1 - f0
    if a == 0 or not expr.values_equal(f2, f0 + a * Fraction(5, 2)):
        return None
    return a, f0


def _relation_set(a: Answer) -> list[Interval] | None:
    """The set a one-variable relation chain describes, e.g. `-3 \\le x < 4`, `0 < g(x) < 2`."""
    if any(r not in _INEQ and r != "=" for r in a.rels):
        return None
    values = [_number(m) for m in a.parts]
    free = [i for i, v in enumerate(values) if v is None]
    if len(free) != 1:
        return None
    k = free[0]
    lo: Interval = (-_INF, False, _INF, False)
    lo_v, lo_c, hi_v, hi_c = lo
    for i, rel in enumerate(a.rels):
        if i + 1 == k:  # c rel M  ->  M mirror(rel) c
            rel, c = _MIRROR[rel], values[i]
        elif i == k:
            c = values[i + 1]
        else:
            return None  # a relation between two constants: not a one-variable condition
        if rel in ("<", "\\leq", "="):
            if c < hi_v or (c == hi_v and rel == "<"):
                hi_v, hi_c = c, rel != "<"
        if rel in (">", "\\geq", "="):
            if c > lo_v or (c == lo_v and rel == ">"):
                lo_v, lo_c = c, rel != ">"
    member = a.parts[k]
    if member.node is not None and member.node[0] == "abs" and _linear(member.node[1]) == (1, 0):
        if hi_v < 0:
            return []
        if lo_v < 0 or (lo_v == 0 and lo_c):
            return [(-hi_v, hi_c, hi_v, hi_c)]
        return [(-hi_v, hi_c, -lo_v, lo_c), (lo_v, lo_c, hi_v, hi_c)]
    if _is_label(member) and (member.node is None or _linear(member.node) in (None, (1, 0))):
        return [(lo_v, lo_c, hi_v, hi_c)]
    lin = _linear(member.node) if member.node is not None else None
    if lin is None:
        return None
    slope, off = lin
    x0, x1 = (lo_v - off) / slope, (hi_v - off) / slope
    return [(x0, lo_c, x1, hi_c)] if slope > 0 else [(x1, hi_c, x0, lo_c)]


def _to_intervals(a: Answer) -> list[Interval] | None:
    """The point set of an interval-like answer, or None. Relations in a list or union must
    constrain the same member (`x<2 or x>3`; not `A_4 \\geq 4, A_5 \\geq 9`)."""
    free: set[str] = set()
    out = _collect_intervals(a, free)
    return out if out is not None and len(free) <= 1 else None


def _collect_intervals(a: Answer, free: set[str]) -> list[Interval] | None:
    if a.norm in _REALS:
        return [(-_INF, False, _INF, False)]
    if a.kind == "tuple" and len(a.parts) == 2:
        lo, hi = _number(a.parts[0]), _number(a.parts[1])
        if lo is None or hi is None or lo > hi:
            return None
        return [(lo, a.shape[0] == "[", hi, a.shape[1] == "]")]
    if a.kind == "set":
        values = [_number(p) for p in a.parts]
        return None if None in values else [(v, True, v, True) for v in values]  # type: ignore[misc]
    if a.kind in ("union", "list"):
        out: list[Interval] = []
        for p in a.parts:
            s = _collect_intervals(p, free)
            if s is None:
                return None
            out += s
        return out
    if a.kind == "relation":
        free.update(m.norm for m in a.parts if _number(m) is None)
        return _relation_set(a)
    return None


def _merged(intervals: list[Interval]) -> list[Interval]:
    out: list[Interval] = []
    for lo, lc, hi, hc in sorted(intervals, key=lambda t: (t[0], not t[1])):
        if lo > hi or (lo == hi and not (lc and hc)):
            continue
        if out:
            plo, plc, phi, phc = out[-1]
            if lo < phi or (lo == phi and (lc or phc)):
                if hi > phi or (hi == phi and hc):
                    out[-1] = (plo, plc, hi, hc)
                continue
        out.append((lo, lc, hi, hc))
    return out


def _same_sets(p: list[Interval], r: list[Interval]) -> bool:
    p, r = _merged(p), _merged(r)
    if len(p) != len(r):
        return False
    for (a, ac, b, bc), (c, cc, d, dc) in zip(p, r):
        if not (expr.values_equal(a, c) and expr.values_equal(b, d)):
            return False
        if (ac != cc and not math.isinf(a)) or (bc != dc and not math.isinf(b)):
            return False
    return True


# --- comparison ----------------------------------------------------------------------------


def compare(pred: Answer, ref: Answer, final: bool = True) -> bool | None:
    """True / False when the cheap tiers decide, None when they cannot."""
    if pred.norm == ref.norm:
        return True
    if final and (_intervalish(pred) or _intervalish(ref)):
        sp, sr = _to_intervals(pred), _to_intervals(ref)
        if sp is not None and sr is not None:
            return _same_sets(sp, sr)
    if pred.kind == "relation" or ref.kind == "relation":
        return _compare_relations(pred, ref, final)
    kinds = {pred.kind, ref.kind}
    if kinds == {"group"} or (final and "group" in kinds and kinds <= {"group", "tuple", "list"}):
        if len(pred.parts) != len(ref.parts) or any(a.kind == "tuple" and a.shape != "()" for a in (pred, ref)):
            return False
        return _all(compare(p, r, final) for p, r in zip(pred.parts, ref.parts))
    if kinds == {"list", "set"}:
        return _match_unordered(pred.parts, ref.parts, final)
    if pred.kind != ref.kind or (pred.shape != ref.shape and pred.shape != "pm" and ref.shape != "pm"):
        # `(1,2)` vs `[1,2]`, `3, 4` vs `3`, a tuple vs a set: different objects
        return False
    if pred.kind != "atom":
        if not pred.ordered:
            return _match_unordered(pred.parts, ref.parts, final)
        if len(pred.parts) != len(ref.parts):
            return False
        return _all(compare(p, r, final) for p, r in zip(pred.parts, ref.parts))
    if pred.words is not None and ref.words is not None:
        return pred.words == ref.words
    if pred.node is not None and ref.node is not None:
        same = expr.same_value(pred.node, ref.node)
        if same is False and final and (_DECIMAL.fullmatch(pred.norm) or _DECIMAL.fullmatch(ref.norm)):
            same = _close_decimal(pred, ref)
        return same
    if pred.words is not None or ref.words is not None:
        return None
    return _skeleton_differs(pred.norm, ref.norm)


def _close_decimal(pred: Answer, ref: Answer) -> bool | None:
    a, b = _number(pred), _number(ref)
    if a is None or b is None:
        return False
    try:
        return math.isclose(float(a), float(b), rel_tol=DECIMAL_REL_TOL, abs_tol=1e-15)
    except OverflowError:
        return False


_NUM = re.compile(r"\d+(?:\.\d+)?")


def _skeleton_differs(a: str, b: str) -> bool | None:
    """Two formulas the evaluator cannot read, identical but for their numbers: different
    (`\\int_0^1 x\\,dx = \\frac12` vs `... = \\frac13`); else undecided."""
    if _NUM.sub("#", a) == _NUM.sub("#", b) and _NUM.findall(a) != _NUM.findall(b):
        return False
    return None


MAX_SET_ITEMS = 64


def _match_unordered(preds: tuple[Answer, ...], refs: tuple[Answer, ...], final: bool = True) -> bool | None:
    """Lists and sets of answers: the same members in any order. Equal lengths match one to
    one; otherwise (a repeated member) as sets, for lists of at most MAX_SET_ITEMS."""
    if len(preds) != len(refs):
        if not final or max(len(preds), len(refs)) > MAX_SET_ITEMS:
            return False
        table = [[compare(p, r, final) for r in refs] for p in preds]
        rows = [_any(row) for row in table]
        cols = [_any([table[i][j] for i in range(len(preds))]) for j in range(len(refs))]
        return _all(rows + cols)
    unused = list(refs)
    undecided = False
    for p in preds:
        verdicts = [compare(p, r, final) for r in unused]
        if True in verdicts:
            unused.pop(verdicts.index(True))
        elif None in verdicts:
            undecided = True
        else:
            return False
    return None if undecided else True


def _balanced(text: str) -> bool:
    """Are `{}` balanced? (An unclosed `{5` is not the answer `5`.)"""
    depth = 0
    for c in text:
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def _choice_letter(text: str) -> str | None:
    t = strip_wrappers(collect_boxes(text))
    for _ in range(2):
        t = strip_wrappers(_TEXT_CMD.sub(r"\1", t))
    m = _CHOICE_PREFIX.match(t)
    return m.group(1).lower() if m else None


@_short_cache(maxsize=200_000)
def _quick(pred: str, ref: str, strip_lhs: bool) -> tuple[bool | None, bool]:
    """(verdict, worth asking the pool): the in-process tiers. Cached: a prompt's rollouts
    repeat fills and answers."""
    if pred.strip() == ref.strip():
        return True, False
    if not pred.strip() or not _balanced(pred):
        return False, False
    p, r = parse_answer(pred, strip_lhs), parse_answer(ref, strip_lhs)
    if strip_lhs:
        if r.words is not None and len(r.words) == 1:
            letter = _choice_letter(pred)
            if letter is not None:
                return letter == r.words, False
        if _DECIMAL.fullmatch(r.norm) and _DECIMAL_COMMA.fullmatch(p.norm):  # `3,14` for `3.14`
            p = parse_answer(p.norm.replace(",", "."), strip_lhs)
    verdict = compare(p, r, strip_lhs)
    if verdict is not None:
        return verdict, False
    if len(pred) > MAX_SYMPY_CHARS or not safe_for_sympy(pred) or _explodes(p) or _explodes(r):
        return None, False
    if _skeleton_differs(p.norm, r.norm) is False:
        return False, False  # the same text but for a number: never ask MathRuler
    if not strip_lhs and len(_letters(pred) | _letters(ref)) > 2:
        # Formulas: MathRuler only runs sympy on expressions with at most two distinct letters
        # (after LaTeX commands become text); with more it can only match by string
        # normalization, which tier 1 already covers. Saves a worker round trip per formula.
        return None, False
    return None, True


def _explodes(a: Answer) -> bool:
    """Would evaluating this answer take unbounded work (`\\binom{10^9}{5 \\cdot 10^8}`)? Then sympy
    must not see it either."""
    if a.kind != "atom":
        return any(_explodes(p) for p in a.parts)
    if a.node is None:
        return False
    names = expr.variables(a.node)
    try:
        expr.evaluate(a.node, expr.probe_points(names, count=1)[0] if names else {})
    except expr.ExprTooLarge:
        return True
    except expr.ExprError:
        return False
    return False


def quick_equal(pred: str, ref: str, strip_lhs: bool = True) -> bool | None:
    """The in-process tiers: True / False, or None when the worker pool must decide."""
    verdict, ask = _quick(pred, ref, strip_lhs)
    return None if verdict is None and ask else bool(verdict)


_COMMAND = re.compile(r"\\[a-zA-Z]+")


def _letters(text: str) -> set[str]:
    return {c.lower() for c in _COMMAND.sub(" ", text) if c.isascii() and c.isalpha()}


_SYMPY_BLOCK = re.compile(
    r"__|\*\*|(?<!\\)!|'|\"|`|;|#|@|\.[A-Za-z_]|lambda|import|exec|eval|open|getattr|globals|locals|"
    r"compile|system|subprocess|input|\^[^^]*\^[^^]*\^|\^\s*\{?\s*\d{4,}|\d{7,}\s*\^"
)
_SYMPY_CHARS = re.compile(r"^[A-Za-z0-9\s+\-*/^()\[\]{}.,=<>|\\&:%$]*$")


def safe_for_sympy(text: str) -> bool:
    """May this untrusted text reach MathRuler/sympy (which `eval`s it)? A whitelist of math
    characters, no Python identifiers or dunders, no power towers or huge exponents."""
    return bool(_SYMPY_CHARS.match(text)) and not _SYMPY_BLOCK.search(text)


def slow_equal(pred: str, ref: str) -> bool:
    """Tier 3, meant to run inside a pool worker: MathRuler's verdict on sanitized text."""
    if not all(len(t) <= MAX_SYMPY_CHARS and safe_for_sympy(t) for t in (pred, ref)):
        return False
    from mathruler.grader import grade_answer

    try:
        return bool(grade_answer(pred, ref))
    except Exception:  # noqa: BLE001 - any failure inside sympy is a "no"
        return False


def _safe_quick(pred: str, ref: str, strip_lhs: bool) -> tuple[bool | None, bool]:
    """`_quick`, with any unexpected exception counted as "cannot decide" for that pair only."""
    try:
        return _quick(pred, ref, strip_lhs)
    except Exception:  # noqa: BLE001 - one odd pair must never abort a batch
        logger.debug("equivalence could not decide %r vs %r", pred[:80], ref[:80], exc_info=True)
        return None, False


def judge_in_process(pred: str, ref: str, strip_lhs: bool = True) -> Verdict:
    """The verdict of the in-process tiers alone: deterministic, no worker pool, no time bound.

    Its DIFFERENT is final (the pool tier can only add EQUAL), so task constructors use it to
    prove an edit wrong; UNDECIDED here may still be EQUAL for `judge_batch`."""
    verdict, _ = _safe_quick(pred, ref, strip_lhs)
    return Verdict.UNDECIDED if verdict is None else Verdict.EQUAL if verdict else Verdict.DIFFERENT


def judge_batch(pairs: list[tuple[str, str]], strip_lhs: bool = True) -> list[Verdict]:
    """Three-valued verdicts for many (prediction, reference) pairs.

    EQUAL: the checker shows them the same object; DIFFERENT: it decides they are not;
    UNDECIDED: neither the in-process tiers nor MathRuler (pool) can tell (e.g. formulas with
    integrals or prose, or MathRuler finding no match). Undecided pairs go to the pool once."""
    from mrtasks.rewards.pool import get_pool

    quick = [_safe_quick(p, r, strip_lhs) for p, r in pairs]
    out = [Verdict.UNDECIDED if v is None else Verdict.EQUAL if v else Verdict.DIFFERENT for v, _ in quick]
    todo: dict[tuple[str, str], list[int]] = {}  # each distinct pair goes to the pool once
    for i, (v, ask) in enumerate(quick):
        if v is None and ask:
            todo.setdefault((pairs[i][0], pairs[i][1]), []).append(i)
    if todo:
        try:
            slow = get_pool().map(slow_equal, list(todo), default=False)
        except RuntimeError:
            logger.exception("the reward worker pool failed; %d pairs stay undecided", len(todo))
            slow = [False] * len(todo)
        for rows, v in zip(todo.values(), slow):
            if v:
                for i in rows:
                    out[i] = Verdict.EQUAL
    return out


def equal_batch(pairs: list[tuple[str, str]], strip_lhs: bool = True) -> list[bool]:
    """Verdicts for many (prediction, reference) pairs: True only when shown equal."""
    return [v is Verdict.EQUAL for v in judge_batch(pairs, strip_lhs)]


def is_equal(pred: str, ref: str, strip_lhs: bool = True) -> bool:
    """One comparison (uses the pool only when the cheap tiers cannot decide)."""
    return equal_batch([(pred, ref)], strip_lhs)[0]
