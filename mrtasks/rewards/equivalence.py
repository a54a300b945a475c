"""Is a predicted answer the same mathematical object as the reference?

Three tiers, cheapest first:
1. normalize both strings (wrappers, `\\dfrac`, `\\left`, degrees, percent, units, `x =`) and
   compare them;
2. parse both into a structure (tuple, interval, set, list, union, matrix, relation, atom) and
   compare atoms with the safe evaluator in `expr` (exact rationals, probe points);
3. only when tier 2 cannot decide: MathRuler's `grade_answer` on sanitized text, run in the
   time-bounded worker pool (`pool.py`), since it calls sympy's `parse_expr`, which `eval`s.

References are parsed once (an LRU cache) and reused across the 8-16 rollouts of a prompt.
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from functools import lru_cache

from mrtasks.rewards import expr
from mrtasks.rewards.parsing import split_top_level, strip_wrappers

logger = logging.getLogger(__name__)

MAX_ANSWER_CHARS = 2_000
"""Longer answers are compared as strings only (never parsed, never sent to sympy)."""
MAX_SYMPY_CHARS = 300

_UNITS = (
    "units?|sq\\.?\\s*units?|square\\s+units?|cm|centimeters?|mm|km|meters?|m|inches|inch|in|feet|foot|ft|"
    "yards?|miles?|mph|seconds?|sec|s|minutes?|min|hours?|hrs?|days?|weeks?|months?|years?|degrees?|"
    "dollars?|cents?|points?|people|students|ways|marbles|pounds?|lbs?|ounces?|oz|grams?|g|kg|liters?|"
    "gallons?|calories"
)
_TEXT_UNIT = re.compile(rf"\\(?:text|mbox|mathrm|textrm)\s*\{{\s*(?:{_UNITS})\s*\}}(?:\^\{{?[23]\}}?)?")
_TEXT_TRAILING = re.compile(r"\\(?:text|mbox)\s*\{\s[^{}]*\}(?:\^\{?[23]\}?)?$")  # `5\text{ cm}`
_PLAIN_UNIT = re.compile(rf"(?<=[\d}}])\s+(?:{_UNITS})(?:\^\{{?[23]\}}?)?\s*$")
_TEXT_CMD = re.compile(
    r"\\(?:text|textbf|textrm|textit|textnormal|mathrm|mathbf|mathit|mathsf|mbox|operatorname|texttt|boldsymbol)"
    r"\s*\{([^{}]*)\}"
)
_WORD_SEP = re.compile(r"\\(?:text|mathrm|textbf|mbox)\s*\{\s*(?:or|and)\s*\}|\s+(?:or|and)\s+")
_SPACING = re.compile(r"(?<!\\)\\(?:[,;:! ]|quad|qquad|displaystyle|textstyle|limits|nolimits)(?![a-zA-Z])|~")
_SIZING = re.compile(r"\\(?:left|right|bigl|bigr|Bigl|Bigr|biggl|biggr|big|Big|bigg|Bigg)(?![a-zA-Z])\.?")
_DEGREES = re.compile(r"\^\s*\{?\s*\\circ\s*\}?|°|\\degree(?![a-zA-Z])|\\circ$")
_THOUSANDS = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_LHS = re.compile(
    r"^(?:(?:[a-zA-Z]|\\[a-zA-Z]+)(?:_\{?[a-zA-Z0-9]+\}?)?|\([a-zA-Z](?:,[a-zA-Z])+\))(?:=|\\in)(?!=)"
)
_CMD_SPACE = re.compile(r"(\\[a-zA-Z]+)\s+(?=[a-zA-Z])")
_RELATION = re.compile(r"\\(?:leq|geq|neq|le|ge|ne|lt|gt)(?![a-zA-Z])|<=|>=|!=|=|<|>|≤|≥|≠")
_REL_CANON = {
    "\\le": "\\leq", "\\leq": "\\leq", "<=": "\\leq", "≤": "\\leq",
    "\\ge": "\\geq", "\\geq": "\\geq", ">=": "\\geq", "≥": "\\geq",
    "\\ne": "\\neq", "\\neq": "\\neq", "!=": "\\neq", "≠": "\\neq",
    "\\lt": "<", "\\gt": ">", "<": "<", ">": ">", "=": "=",
}  # fmt: skip
_CHOICE = re.compile(r"^\(?([A-E])\)?$")
_WORDS = re.compile(r"^[A-Za-z][A-Za-z ]*$")
_MATRIX = re.compile(r"^\\begin\{([pbvBV]?matrix|array)\}(?:\{[^{}]*\})?(.*)\\end\{\1\}$", re.S)


@lru_cache(maxsize=100_000)
def normalize(text: str) -> str:
    """A canonical string for an answer: same object, same string, in the common cases.

    Cached: a reference (and often a prediction) recurs across a prompt's rollouts, and the
    similarity fallback normalizes the same strings the parser already did."""
    text = strip_wrappers(text.replace("\n", " "))
    text = _WORD_SEP.sub(",", text)
    text = _TEXT_UNIT.sub("", text)
    text = _TEXT_TRAILING.sub("", text)
    text = _PLAIN_UNIT.sub("", text)
    for _ in range(3):
        text = _TEXT_CMD.sub(r"\1", text)
    text = _SPACING.sub(" ", text)
    text = _SIZING.sub("", text)
    text = text.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac").replace("\\cfrac", "\\frac")
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
    """A parsed answer. `kind` is atom, relation, tuple, set, list, union or matrix;
    `shape` is what must match exactly (brackets, relation signs, matrix size)."""

    norm: str
    kind: str = "atom"
    shape: str = ""
    parts: tuple[Answer, ...] = ()
    node: expr.Node | None = None
    words: str | None = None

    @property
    def ordered(self) -> bool:
        return self.kind in ("tuple", "relation", "matrix")


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


@lru_cache(maxsize=100_000)
def parse_answer(text: str, strip_lhs: bool = True) -> Answer:
    """Parse an answer once (cached). `strip_lhs` drops a leading `x =` (final answers);
    formulas keep it (`A = 1` and `B = 1` are different formulas)."""
    if len(text) > MAX_ANSWER_CHARS:
        return Answer(norm=text)
    return _parse(normalize(text), strip_lhs, depth=0)


def _parse(norm: str, strip_lhs: bool, depth: int) -> Answer:
    if depth > 6 or not norm:
        return Answer(norm=norm)
    sub = lambda s: _parse(strip_wrappers(s), strip_lhs, depth + 1)  # noqa: E731
    if strip_lhs and depth <= 1:
        m = _LHS.match(norm)
        if m and "=" not in norm[m.end() :]:
            norm = norm[m.end() :]
    if len(_PM.findall(norm)) == 1 and "," not in norm and not _RELATION.search(norm):
        # `\pm 3`, `1 \pm \sqrt{2}`: the two values, in either order
        values = (_PM.sub("+", norm), _PM.sub("-", norm))
        return Answer(norm, "list", "", tuple(sub(v) for v in values))
    parts, _ = _split(norm, _CUP)
    if len(parts) > 1:
        return Answer(norm, "union", "", tuple(sub(p) for p in parts))
    if _wrapped(norm, "\\{", "\\}"):
        inner = norm[2:-2]
        return Answer(norm, "set", "", tuple(sub(p) for p in split_top_level(inner, ",") if p))
    m = _MATRIX.match(norm)
    if m:
        rows = [r for r in m.group(2).split("\\\\") if r]
        cells = [c for r in rows for c in r.split("&")]
        shape = f"{len(rows)}x{len(cells) // max(len(rows), 1)}"
        return Answer(norm, "matrix", shape, tuple(sub(c) for c in cells))
    if len(norm) >= 2 and norm[0] in "([" and norm[-1] in ")]" and _wrapped(norm, norm[0], norm[-1]):
        items = split_top_level(norm[1:-1], ",")
        if len(items) > 1:
            return Answer(norm, "tuple", norm[0] + norm[-1], tuple(sub(p) for p in items))
        if norm[0] == "(" and norm[-1] == ")":
            return sub(norm[1:-1])
    items, _ = _split(norm, _COMMA)
    if len(items) > 1:
        return Answer(norm, "list", "", tuple(sub(p) for p in items))
    sides, rels = _split(norm, _RELATION)
    if rels:
        shape = " ".join(_REL_CANON.get(r, r) for r in rels)
        return Answer(norm, "relation", shape, tuple(sub(s) for s in sides))
    choice = _CHOICE.match(norm)
    if choice:
        return Answer(norm, words=choice.group(1).lower())
    if _WORDS.match(norm) and len(norm) > 2:
        return Answer(norm, words=norm.lower())
    try:
        node = expr.parse(norm)
    except expr.ExprError:
        node = None
    return Answer(norm, node=node)


def compare(pred: Answer, ref: Answer) -> bool | None:
    """True / False when the cheap tiers decide, None when only sympy could."""
    if pred.norm == ref.norm:
        return True
    if pred.kind != ref.kind or pred.shape != ref.shape:
        # `(1,2)` vs `[1,2]`, `3, 4` vs `3`, `2x = 5` vs `x = 5` (whose `x =` was stripped):
        # different objects. (MathRuler accepts the last one: it drops any short left side.)
        return False
    if pred.kind != "atom":
        if len(pred.parts) != len(ref.parts):
            return False
        if pred.ordered:
            results = [compare(p, r) for p, r in zip(pred.parts, ref.parts)]
            if False in results:
                return False
            return True if all(results) else None
        return _match_unordered(pred.parts, ref.parts)
    if pred.words is not None or ref.words is not None:
        if pred.words is not None and ref.words is not None:
            return pred.words == ref.words
        return None
    if pred.node is not None and ref.node is not None:
        return expr.same_value(pred.node, ref.node)
    return None


def _match_unordered(preds: tuple[Answer, ...], refs: tuple[Answer, ...]) -> bool | None:
    unused = list(refs)
    undecided = False
    for p in preds:
        verdicts = [compare(p, r) for r in unused]
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


def quick_equal(pred: str, ref: str, strip_lhs: bool = True) -> bool | None:
    """The in-process tiers: True / False, or None when the worker pool must decide."""
    if pred.strip() == ref.strip():
        return True
    if not pred.strip() or not _balanced(pred):
        return False
    verdict = compare(parse_answer(pred, strip_lhs), parse_answer(ref, strip_lhs))
    if verdict is None and (len(pred) > MAX_SYMPY_CHARS or not safe_for_sympy(pred)):
        return False
    if verdict is None and not strip_lhs and len(_letters(pred) | _letters(ref)) > 2:
        # Formulas: MathRuler only runs sympy on expressions with at most two distinct letters
        # (after LaTeX commands become text); with more it can only match by string
        # normalization, which tier 1 already covers. Saves a worker round trip per formula.
        return False
    return verdict


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


def equal_batch(pairs: list[tuple[str, str]], strip_lhs: bool = True) -> list[bool]:
    """Verdicts for many (prediction, reference) pairs; undecided ones go to the worker pool."""
    from mrtasks.rewards.pool import get_pool

    verdicts = [quick_equal(p, r, strip_lhs) for p, r in pairs]
    todo = [i for i, v in enumerate(verdicts) if v is None]
    if todo:
        try:
            slow = get_pool().map(slow_equal, [pairs[i] for i in todo], default=False)
        except RuntimeError:
            logger.exception("the reward worker pool failed; %d undecided pairs count as unequal", len(todo))
            slow = [False] * len(todo)
        for i, v in zip(todo, slow):
            verdicts[i] = v
    return [bool(v) for v in verdicts]


def is_equal(pred: str, ref: str, strip_lhs: bool = True) -> bool:
    """One comparison (uses the pool only when the cheap tiers cannot decide)."""
    return equal_batch([(pred, ref)], strip_lhs)[0]
