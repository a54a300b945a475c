"""Numeric tolerance: when a decimal or an approximation counts as an exact value.

Policy (final answers):

- A decimal literal matches an exact value within a relative `DECIMAL_REL_TOL` (1e-6):
  `0.1666666666666667` is 1/6; `0.083` is not 1/12.
- `\\approx d` matches an exact value when it is exact, or when `d` states two or more
  significant digits and lies within half a unit of its last digit (`\\approx 0.71` is
  `\\frac{\\sqrt2}{2}`; `\\approx 3` is not `\\pi`, `\\approx 0` is not `\\frac13`).
- A comma followed by other than three digits (`3,14`) is a decimal comma only when the
  reference is written as a decimal (`DECIMAL`, `DECIMAL_COMMA`; `1,2` is not `\\frac65`, it is
  more likely the list 1, 2).
"""

from __future__ import annotations

import math
import re

from mrtasks.mathcheck import expr
from mrtasks.mathcheck.answer import Answer, constant_value, is_constant

DECIMAL_REL_TOL = 1e-6
"""A decimal literal matches an exact value within this relative error."""
DECIMAL_COMMA = re.compile(r"-?\d+,(?:\d{1,2}|\d{4,})")
DECIMAL = re.compile(r"-?(?:\d+\.\d*|\.\d+)")


def close_decimal(pred: Answer, ref: Answer) -> bool | None:
    """Are two constants within `DECIMAL_REL_TOL` of each other (for a decimal literal against an exact value)?"""
    a, b = constant_value(pred), constant_value(ref)
    if a is None or b is None:
        return False
    try:
        return math.isclose(float(a), float(b), rel_tol=DECIMAL_REL_TOL, abs_tol=1e-15)
    except OverflowError:
        return False


def approximation_applies(approx: Answer, exact: Answer) -> bool:
    """Is `approx` a plain decimal and are both constants? Then `approximates` decides;
    otherwise the two are compared as any other values."""
    return is_constant(approx) and is_constant(exact) and bool(re.fullmatch(r"-?\d+(?:\.\d+)?", approx.norm))


def approximates(approx: Answer, exact: Answer) -> bool | None:
    """`\\approx d` matches when exact, or when d states at least two significant digits and
    lies within half a unit of its last digit (`\\approx 0.71` is `\\frac{\\sqrt2}{2}`; `\\approx 3`
    is not `\\pi`, `\\approx 0` is not `\\frac13`). For answers where `approximation_applies`."""
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


