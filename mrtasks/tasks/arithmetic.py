"""Computations written in a formula: the members of a chain, their values, and rewriting a result.

A "computation" is a chain of top-level `=` whose constant members agree (`3*150=$450`,
`2 grams + 3 grams = 5 grams`, `x = 3 \\cdot 4 = 12`). Unit words, `\\text{}` and currency signs
are not part of a member's value (`_clean`); a member that is a lone number (`$450`, `84 feet`)
can be rewritten with another value, units kept. Error Correction's `quantity` and
`dropped_term` corruptions are built from these (a step recomputed from the wrong input stays
true on its own), and the audit's calculator reads formulas with the same rules.
"""

from __future__ import annotations

import functools
import re
from fractions import Fraction

from mrtasks.mathcheck import expr as _expr
from mrtasks.mathcheck import numeric_truth, parse_answer
from mrtasks.mathcheck.latex import depth_scan

Value = Fraction | float

_CHAIN_REL = re.compile(r"\\(?:leq|geq|neq|le|ge|ne|lt|gt)(?![a-zA-Z])|<=|>=|=|<|>")
_UNIT_WORDS = re.compile(r"(?<![\\a-zA-Z])[A-Za-z][A-Za-z']+(?:/[A-Za-z']+)*|\\text\s*\{[^{}]*\}")
_COMMAND = re.compile(r"\\[a-zA-Z]+")
_VARIABLE = re.compile(r"[A-Za-z]")
_LONE_NUMBER = re.compile(r"-?\d[\d,]*(?:\.\d+)?")
_OPERATION = re.compile(r"(?<=\S)\s*(?:[-+*/×÷^]|\\(?:cdot|times|div|frac|dfrac|sqrt|binom)(?![a-zA-Z]))")




def members(formula: str) -> tuple[list[tuple[int, int]], list[str]]:
    """Spans of the top-level members of a chain (`a = b < c`: three spans) and its relations."""
    depths = depth_scan(formula)
    spans, rels, last = [], [], 0
    for m in _CHAIN_REL.finditer(formula):
        if depths[m.start()] == 0:
            spans.append((last, m.start()))
            rels.append(m.group(0))
            last = m.end()
    spans.append((last, len(formula)))
    return spans, rels


def join(formula: str, spans: list[tuple[int, int]], texts: list[str]) -> str:
    """`formula` with each member span replaced by the matching text (relations kept as written)."""
    out, last = [], 0
    for (a, b), t in zip(spans, texts):
        out.append(formula[last:a] + t)
        last = b
    out.append(formula[last:])
    return "".join(out)


def clean(member: str) -> str:
    """A member as the checker should evaluate it: unit words, `\\text{}` and currency signs out,
    digit groups joined, `×`/`x` between numbers a product, `÷` a division."""
    text = _UNIT_WORDS.sub(" ", member).replace("\\$", "").replace("$", "")
    text = re.sub(r"(?<=\d),(?=\d{3}(?!\d))", "", text)
    return re.sub(r"(?<=\d)\s*(?:×|\bx\b)\s*(?=\d)", "*", text).replace("÷", "/").strip()


def value(member: str) -> Value | None:
    """The value of a constant member (a Fraction when exact), None with variables or unreadable."""
    cleaned = clean(member)
    if not cleaned or "%" in cleaned:
        return None
    try:
        a = parse_answer(cleaned, strip_lhs=False)
        if a.node is None or _expr.variables(a.node):
            return None
        return _expr.evaluate(a.node, {})
    except (_expr.ExprError, ArithmeticError, ValueError, TypeError):
        return None


def is_operation(text: str) -> bool:
    """Does the text compute something (`+`, `\\cdot`, `\\frac`, ... after an operand)?"""
    return bool(_OPERATION.search(text))


def lone_number(member: str) -> re.Match[str] | None:
    """The member's only number when the member is nothing but that number (units, currency and
    spacing aside): `$450`, `84 feet`, `1,200`; None otherwise."""
    numbers = list(_LONE_NUMBER.finditer(member))
    if len(numbers) != 1:
        return None
    m = numbers[0]
    return m if clean(member).replace(",", "") == m.group(0).replace(",", "") else None


def written(v: Value, like: str, allow_fraction: bool = True) -> str | None:
    """`v` written as the number `like` was: its decimal places (at least two for a non-integer)
    and its digit grouping (`1,200`), or `\\frac{p}{q}` (when `allow_fraction`); None for an
    irrational value, or when `allow_fraction` is off and no decimal is exact."""
    if not isinstance(v, Fraction):
        return None
    decimals = len(like.split(".")[1]) if "." in like else 0
    places = decimals if v.denominator == 1 else max(decimals, 2)
    if (v * 10**places).denominator != 1:
        return f"\\frac{{{v.numerator}}}{{{v.denominator}}}" if allow_fraction else None
    text = f"{float(v):,.{places}f}" if places else f"{v.numerator:,}"
    if "," not in like.split(".")[0]:
        text = text.replace(",", "")
    return text if decimals or v.denominator == 1 else text.rstrip("0").rstrip(".")


def replace_number(member: str, v: Value, allow_fraction: bool = True) -> str | None:
    """The lone-number member with its number replaced by `v` (units and currency kept)."""
    m = lone_number(member)
    new = written(v, m.group(0), allow_fraction) if m else None
    return None if m is None or new is None else member[: m.start()] + new + member[m.end() :]


def link_truths(formula: str) -> list[bool | None]:
    """For each relation of the chain: does it hold between its two members (None when a member
    is not constant or cannot be read)?"""
    return list(_link_truths(formula))


@functools.lru_cache(maxsize=65_536)
def _link_truths(formula: str) -> tuple[bool | None, ...]:
    """`link_truths`, cached: task construction, the calculator baseline and the audit ask about
    the same formulas."""
    spans, rels = members(formula)
    out = []
    for (a, b), (c, d), rel in zip(spans, spans[1:], rels):
        left, right = clean(formula[a:b]), clean(formula[c:d])
        constant = left and right and not _VARIABLE.search(_COMMAND.sub("", left + right))
        out.append(numeric_truth(f"{left} {rel} {right}") if constant else None)  # the checker only for constants
    return tuple(out)


def false_on_its_own(formula: str) -> bool:
    """Does some link between two constant members fail (`44/2 = 21`, `3 > 5`)?"""
    return any(t is False for t in link_truths(formula))


def holds(formula: str) -> bool:
    """Is the formula a true computation: at least one link between constants, and none false?"""
    truths = link_truths(formula)
    return any(t is True for t in truths) and not any(t is False for t in truths)


def signed_term_spans(member: str) -> list[tuple[int, int]]:
    """Spans of the top-level terms of a sum (`2 + 3 - 4`: three spans, each with its sign), or
    [] when it is not a sum of two or more terms."""
    depths = depth_scan(member)
    cuts = []
    for i, c in enumerate(member):
        if c not in "+-" or depths[i] or not member[:i].strip():
            continue
        before = member[:i].rstrip()
        if before[-1] in "^_{([+-=*/" or re.search(r"\\(?:cdot|times|div)$", before):
            continue  # a sign, not an operator
        cuts.append(i)
    if not cuts:
        return []
    bounds = [0, *cuts, len(member)]
    return [(bounds[k], bounds[k + 1]) for k in range(len(bounds) - 1)]
