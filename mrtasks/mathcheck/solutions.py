"""Solution sets found numerically: equations and one-variable inequalities the normal form misses.

`relations` compares two relations as `lhs - rhs` up to a constant factor, which misses
relations equal only after clearing denominators, squaring out a root or taking a logarithm
(`1/a + 1/b = 1` is `b = \\frac{a}{a-1}`; `\\sqrt{x} = 3` is `x = 9`; `t^2 \\ge 9` is
`|t| \\ge 3`). Final answers only (a rearranged formula is another derivation step). Policy:

- Two equations are equal when they have the same real solutions: for every variable in turn,
  on slices where the others take generic values (two slices with two variables, one with three), the roots found in that variable (sign
  changes on a fixed grid, refined by bisection; a pole is not a root) must be roots of the other
  (a zero or a sign change within 1e-9 relative). Both
  equations must have the same variables, at most `MAX_VARIABLES`, and at least one root must be
  found, else this rule says nothing. `x^2 = 9` is not `x = 3` (the root -3), `xy = x` is not
  `y = 1` (the roots x = 0).
- A one-variable inequality (or chain) is the set of grid points where it holds, with each
  boundary refined by bisection, snapped to a nearby fraction with a small denominator, and
  closed when the relation holds there (within 1e-9 for irrational boundaries). The set is then
  compared by `intervals.same_sets` (`x^2 < 4` is `-2 < x < 2` and `(-2, 2)`; `t^2 \\ge 9` is not
  `t \\ge 3`).
- Limits, stated: the grid reaches +-1e6 and is 1/8 apart on [-32, 32]; a feature narrower than
  the grid (two roots 0.01 apart) or beyond it is not seen. Where both sides hide the same
  feature the verdict can be wrong, so this rule runs only after the exact rules said no.
- Bounded: a relation is evaluated at most about `len(GRID) + 60 * MAX_BOUNDARIES` times per
  slice (more sign changes than that: no say), and only expressions the safe evaluator (`expr`)
  reads are used; nothing is `eval`-ed.
"""

from __future__ import annotations

import math
from fractions import Fraction

from mrtasks.mathcheck import expr
from mrtasks.mathcheck.answer import INEQ, Answer
from mrtasks.mathcheck.cache import short_cache

MAX_VARIABLES = 3
MAX_NODES = 100
"""Larger equations (both sides of both together) are left to the other rules (a bound on the work)."""
MAX_BOUNDARIES = 12
"""More sign changes or boundaries than this on one slice (`\\sin(1000x) = 0`): no say."""
_BISECTIONS = 60
_ROOT_TOL = 1e-9
"""Roots found by bisection agree to about 1e-15; `x = 1.0000001` is not `x = 1`."""


def _grid() -> list[float]:
    near = [k / 8 for k in range(-256, 257)]
    far = [s * 10 ** (j / 8) for s in (-1, 1) for j in range(13, 49)]  # 10^1.625 .. 10^6
    return sorted(set(near) | set(far))


GRID = _grid()
COARSE = GRID[::4]
"""A first pass on every fourth grid point: most different equations show a root of one that is
no root of the other there, at a quarter of the work."""
_SLICES = ({"a": 0.7316, "b": -1.2391, "c": 1.8417}, {"a": -0.4183, "b": 2.3571, "c": -1.1093})


def _value(node: expr.Node, env: dict) -> float | None:
    try:
        v = expr.evaluate(node, env)
    except (expr.ExprError, OverflowError, ValueError, TypeError, ZeroDivisionError):
        return None
    if isinstance(v, complex):
        return None
    v = float(v)
    return v if math.isfinite(v) else None


class _TooMany(Exception):
    """More than MAX_BOUNDARIES roots or boundaries: the rule says nothing."""


def _roots(node: expr.Node, var: str, env: dict, grid: list[float] = GRID) -> list[float]:
    """Real roots of `node` in `var` on the grid (the other variables fixed by `env`)."""
    roots: list[float] = []
    values = [_value(node, {**env, var: x}) for x in grid]
    changes = [k for k in range(1, len(grid)) if values[k] is not None and values[k - 1] is not None
               and (values[k] < 0) != (values[k - 1] < 0)]  # fmt: skip
    if len(changes) > 2 * MAX_BOUNDARIES:
        raise _TooMany
    prev_x, prev_v = None, None
    for x, v in zip(grid, values):
        if v is not None and v == 0:
            roots.append(x)
        elif v is not None and prev_v is not None and prev_v != 0 and (v < 0) != (prev_v < 0):
            lo, hi, vlo = prev_x, x, prev_v
            for _ in range(_BISECTIONS):
                mid = (lo + hi) / 2
                vm = _value(node, {**env, var: mid})
                if vm is None:
                    break
                if vm == 0:
                    lo = hi = mid
                    break
                if (vm < 0) == (vlo < 0):
                    lo, vlo = mid, vm
                else:
                    hi = mid
            root = (lo + hi) / 2
            vr = _value(node, {**env, var: root})
            if vr is not None and abs(vr) <= 1e-6:  # a sign change through a pole is no root
                roots.append(root)
        prev_x, prev_v = x, v
    return roots


def _vanishes_near(node: expr.Node, var: str, env: dict, root: float) -> bool:
    """Is there a root of `node` within _ROOT_TOL of `root` (a zero there, or a sign change
    across it)?"""
    h = _ROOT_TOL * (1 + abs(root))
    values = [_value(node, {**env, var: x}) for x in (root - h, root, root + h)]
    if any(v is None for v in values):
        return False
    lo, mid, hi = values
    return mid == 0 or (lo < 0) != (hi < 0) or abs(mid) <= 1e-12


def _linear(node: expr.Node) -> bool:
    """Is the expression syntactically linear in its variables (sums of constants times a
    variable)? Then two equations have the same solutions exactly when proportional."""
    kind = node[0]
    if kind in ("num", "const", "var", "frac_lit"):
        return True
    if kind in ("add", "neg"):
        return all(_linear(c) for c in node[1:])
    if kind == "mul":
        a, b = node[1], node[2]
        return _linear(a) and _linear(b) and (not expr.variables(a) or not expr.variables(b))
    if kind == "div":
        return _linear(node[1]) and not expr.variables(node[2])
    return not expr.variables(node)


def _size(node: expr.Node) -> int:
    return 1 + sum(_size(c) for c in node[1:] if isinstance(c, tuple))


def _difference(a: Answer) -> expr.Node | None:
    if a.kind != "relation" or len(a.parts) != 2 or a.shape != "=":
        return None
    lhs, rhs = a.parts
    if lhs.node is None or rhs.node is None:
        return None
    return ("add", lhs.node, ("neg", rhs.node))


def same_zero_sets(p: Answer, r: Answer) -> bool | None:
    """Do two equations have the same real solutions (see the module docstring)? None when
    this rule cannot tell."""
    f, g = _difference(p), _difference(r)
    if f is None or g is None:
        return None
    names = expr.variables(f)
    if names != expr.variables(g) or not 0 < len(names) <= MAX_VARIABLES or expr.IMAGINARY in names:
        return None
    if _size(f) + _size(g) > MAX_NODES or (_linear(f) and _linear(g)):
        return None  # too large, or linear: the normal form's "up to a factor" is exact there
    ordered = sorted(names)
    if _zero_sets_on(f, g, ordered, COARSE) is False:
        return False
    return _zero_sets_on(f, g, ordered, GRID)


def _zero_sets_on(f: expr.Node, g: expr.Node, ordered: list[str], grid: list[float]) -> bool | None:
    """`same_zero_sets` on one grid."""
    found = False
    for var in ordered:
        others = [n for n in ordered if n != var]
        for point in _SLICES if len(ordered) == 2 else _SLICES[:1]:  # one variable: a single "slice"
            env = {n: v for n, v in zip(others, point.values())}
            try:
                rf = _roots(f, var, env, grid)
                if not all(_vanishes_near(g, var, env, x) for x in rf):
                    return False  # a root of one is no root of the other: decided cheaply
                rg = _roots(g, var, env, grid)
            except _TooMany:
                return None
            if not all(_vanishes_near(f, var, env, x) for x in rg):
                return False
            found = found or bool(rf)
    return True if found else None


# --- one-variable inequalities --------------------------------------------------------------


def _holds(rel: str, x: float, y: float, tol: float) -> bool:
    close = abs(x - y) <= tol * (1 + max(abs(x), abs(y)))
    if rel == "<":
        return x < y and not close
    if rel == ">":
        return x > y and not close
    if rel == "\\leq":
        return x < y or close
    if rel == "\\geq":
        return x > y or close
    return close  # "="


def _truth(a: Answer, var: str, x: float | Fraction, tol: float = 0.0) -> bool:
    """Does the relation hold at x? Exactly on the grid and in bisection; within `tol` at a
    boundary (an irrational boundary is only known to about 1e-15)."""
    values = [_value(m.node, {var: x}) for m in a.parts]  # type: ignore[arg-type]
    if any(v is None for v in values):
        return False  # outside the domain: not a solution
    return all(_holds(rel, u, v, tol) for rel, u, v in zip(a.rels, values, values[1:]))  # type: ignore[arg-type]


def _snap(x: float) -> float | Fraction:
    frac = Fraction(x).limit_denominator(1000)
    return frac if abs(float(frac) - x) <= 1e-9 * (1 + abs(x)) else x


@short_cache(maxsize=10_000)
def relation_intervals(a: Answer) -> list[tuple] | None:
    """The solution set of a one-variable inequality or chain as intervals (lo, lo closed, hi,
    hi closed), found on the grid; None when the answer is not such a relation."""
    if a.kind != "relation" or not any(r in INEQ for r in a.rels) or any(r not in INEQ for r in a.rels):
        return None
    if any(m.node is None for m in a.parts):
        return None
    if sum(_size(m.node) for m in a.parts) > MAX_NODES // 2:  # type: ignore[arg-type]
        return None
    names = frozenset().union(*(expr.variables(m.node) for m in a.parts))  # type: ignore[arg-type]
    if len(names) != 1 or expr.IMAGINARY in names:
        return None
    (var,) = names
    truth = [_truth(a, var, x) for x in GRID]
    if sum(truth[k] != truth[k - 1] for k in range(1, len(GRID))) > MAX_BOUNDARIES:
        return None
    bounds: list[float | Fraction] = []
    for k in range(1, len(GRID)):
        if truth[k] != truth[k - 1]:
            lo, hi, tlo = GRID[k - 1], GRID[k], truth[k - 1]
            for _ in range(_BISECTIONS):
                mid = (lo + hi) / 2
                if _truth(a, var, mid) == tlo:
                    lo = mid
                else:
                    hi = mid
            bounds.append(_snap((lo + hi) / 2))
    out = []
    start: float | Fraction | None = -math.inf if truth[0] else None
    start_closed = False
    it = iter(bounds)
    for k in range(1, len(GRID)):
        if truth[k] == truth[k - 1]:
            continue
        b = next(it)
        closed = _truth(a, var, b, tol=1e-9)
        if truth[k]:  # entering the set
            start, start_closed = b, closed
        else:
            out.append((start, start_closed, b, closed))
            start = None
    if start is not None:
        out.append((start, start_closed, math.inf, False))
    return out
