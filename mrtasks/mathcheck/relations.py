"""The relation normal form: two-sided relations compared as `lhs - rhs`, up to a constant factor.

Policy:

- Two equations are equal when `lhs - rhs` agree up to a nonzero constant factor (`3x-6y+9=0` is
  `y=\\frac12x+\\frac32`; `2x=5` is not `x=5`); two inequalities when they agree up to a
  positive factor with the same strictness (`-t > -3` is `t < 3`; `x \\leq 5` is not `x < 5`).
- Formulas (`final=False`) allow only a factor of +-1: a rearranged or rescaled equation is
  another step of the derivation (`33b = 66a` is not `40b+4a = 70a+7b`).
- Probe points are exact rationals, so polynomials are compared exactly (`N = 9876512` vs
  `N = 9876510` differ). Relations between constants are left undecided here.
- `numeric_truth` says whether a relation between constants holds (`42/2 = 21`), for callers
  that must tell a true statement from a false one (Error Correction's edits).
"""

from __future__ import annotations

from fractions import Fraction

from mrtasks.mathcheck import expr
from mrtasks.mathcheck.answer import INEQ, Answer, parse_answer


def difference(a: Answer) -> expr.Node | None:
    """`lhs - rhs` of a two-sided relation, or None when a side does not parse."""
    lhs, rhs = a.parts
    if lhs.node is None or rhs.node is None:
        return None
    return ("add", lhs.node, ("neg", rhs.node))


def proportional(f: expr.Node, g: expr.Node, positive: bool, unit: bool) -> bool | None:
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


def normal_form_equal(p: Answer, r: Answer, final: bool = True) -> bool | None:
    """Two-sided relations compared as `lhs - rhs` (up to a constant factor, see docstring)."""
    if len(p.parts) != 2 or len(r.parts) != 2:
        return None
    (rp,), (rr,) = p.rels, r.rels
    fp, fr = difference(p), difference(r)
    if fp is None or fr is None:
        return None
    if rp == "=" and rr == "=":
        return proportional(fp, fr, positive=False, unit=not final)
    if rp in INEQ and rr in INEQ:
        if (rp in ("<", ">")) != (rr in ("<", ">")):
            return False
        if rp in (">", "\\geq"):
            fp = ("neg", fp)  # orient both as `f < 0` / `f <= 0`
        if rr in (">", "\\geq"):
            fr = ("neg", fr)
        return proportional(fp, fr, positive=True, unit=not final)
    return False if {rp, rr} <= INEQ | {"="} else None


def numeric_truth(formula: str) -> bool | None:
    """True / False for a relation between constants (`42/2 = 21`, `3 < 5`), None otherwise."""
    try:
        a = parse_answer(formula, strip_lhs=False)
        if a.kind != "relation" or len(a.parts) != len(a.rels) + 1:
            return None
        if any(p.node is None or expr.variables(p.node) for p in a.parts):
            return None
        values = [expr.evaluate(p.node, {}) for p in a.parts]
    except (expr.ExprError, ArithmeticError, ValueError, TypeError):
        return None  # a formula the checker cannot evaluate states nothing we can test
    for rel, x, y in zip(a.rels, values, values[1:]):
        same = expr.values_equal(x, y)
        holds = {"=": same, "\\neq": not same, "<": x < y and not same, ">": x > y and not same,
                 "\\leq": x < y or same, "\\geq": x > y or same}.get(rel)  # fmt: skip
        if holds is None:
            return None
        if not holds:
            return False
    return True
