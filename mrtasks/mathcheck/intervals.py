"""Intervals: final answers that describe sets of real numbers, compared as point sets.

Policy: inequalities in one variable (or in a label such as `g(x)`, `|w|` or a linear
expression of the variable), `x \\in S`, unions, `\\{a\\}` and `\\mathbb{R}` are converted to
unions of intervals and compared as point sets (`-3 \\le x \\le 4` is `[-3, 4]`); the variable's
name is not compared. A pair `(a, b)` is read as an interval only when the other side is one.
Relations in a list or union must constrain the same member (`x<2 or x>3`; not `A_4 \\geq 4,
A_5 \\geq 9`). Final answers only: in a formula, `x < 3` and `(-\\infty, 3)` are different texts.
"""

from __future__ import annotations

import math
from fractions import Fraction

from mrtasks.mathcheck import expr
from mrtasks.mathcheck.answer import INEQ, MIRROR, Answer, constant_value, is_label

_REALS = {"\\mathbb{R}", "\\mathbbR", "\\R", "\\mathbf{R}", "(-\\infty,\\infty)", "(-\\infty,+\\infty)"}

Interval = tuple[float | Fraction, bool, float | Fraction, bool]  # lo, lo closed, hi, hi closed
_INF = float("inf")


def intervalish(a: Answer) -> bool:
    """Does this answer look like a set of reals (a union, `\\mathbb{R}`, an inequality, a list holding one)?"""
    if a.kind == "union" or a.norm in _REALS:
        return True
    if a.kind == "relation":
        return any(r in INEQ for r in a.rels)
    if a.kind == "list":
        return any(intervalish(p) for p in a.parts)
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
    if any(r not in INEQ and r != "=" for r in a.rels):
        return None
    values = [constant_value(m) for m in a.parts]
    free = [i for i, v in enumerate(values) if v is None]
    if len(free) != 1:
        return None
    k = free[0]
    lo: Interval = (-_INF, False, _INF, False)
    lo_v, lo_c, hi_v, hi_c = lo
    for i, rel in enumerate(a.rels):
        if i + 1 == k:  # c rel M  ->  M mirror(rel) c
            rel, c = MIRROR[rel], values[i]
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
    if is_label(member) and (member.node is None or _linear(member.node) in (None, (1, 0))):
        return [(lo_v, lo_c, hi_v, hi_c)]
    lin = _linear(member.node) if member.node is not None else None
    if lin is None:
        return None
    slope, off = lin
    x0, x1 = (lo_v - off) / slope, (hi_v - off) / slope
    return [(x0, lo_c, x1, hi_c)] if slope > 0 else [(x1, hi_c, x0, lo_c)]


def to_intervals(a: Answer) -> list[Interval] | None:
    """The point set of an interval-like answer, or None. Relations in a list or union must
    constrain the same member (`x<2 or x>3`; not `A_4 \\geq 4, A_5 \\geq 9`)."""
    free: set[str] = set()
    out = _collect_intervals(a, free)
    return out if out is not None and len(free) <= 1 else None


def _collect_intervals(a: Answer, free: set[str]) -> list[Interval] | None:
    if a.norm in _REALS:
        return [(-_INF, False, _INF, False)]
    if a.kind == "tuple" and len(a.parts) == 2:
        lo, hi = constant_value(a.parts[0]), constant_value(a.parts[1])
        if lo is None or hi is None or lo > hi:
            return None
        return [(lo, a.shape[0] == "[", hi, a.shape[1] == "]")]
    if a.kind == "set":
        values = [constant_value(p) for p in a.parts]
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
        free.update(m.norm for m in a.parts if constant_value(m) is None)
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


def same_sets(p: list[Interval], r: list[Interval]) -> bool:
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
