"""Numeric tolerance: when a decimal or an approximation counts as an exact value.

Policy (final answers):

- A decimal literal matches an exact value within a relative `DECIMAL_REL_TOL` (1e-6):
  `0.1666666666666667` is 1/6; `0.083` is not 1/12.
- Approximations (`\\approx d`, `L \\approx d`) on exact-answer data: an approximation counts
  when it is exact; against an exact reference (an integer, a fraction, `\\sqrt2`, `\\pi`) only
  when `d` states at least `MIN_APPROX_DIGITS` (4) significant digits and lies within half a unit
  of its last digit, i.e. it pins the value (`\\approx 1.414` is `\\sqrt2`; `\\approx 1.41`,
  `\\approx 1.4` and a value 1.5% off are not). A decimal reference of fewer than four
  significant digits (`0.5`, `3.14`) is such an exact answer (`\\approx 0.508` is not `0.5`); one
  that states at least four (`3.1416`, `0.7071`) is itself an approximation, and `d` counts when it
  agrees with it to the reference's last digit (`\\approx 3.14159` is `3.1416`, `\\approx 3.142` is
  not). An approximate reference (`\\approx 0.33`) accepts an exact value within half a unit of
  its last digit. Rewards and evaluation share this rule (one checker).
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


MIN_APPROX_DIGITS = 4
"""An approximation of an exact (non-decimal) reference must state at least this many significant digits."""


def _significant(norm: str) -> int:
    return len(norm.lstrip("-").replace(".", "").lstrip("0"))


def _last_digit_unit(norm: str) -> float:
    digits = norm.split(".")[1] if "." in norm else ""
    return 10 ** (-len(digits))


def approximates(approx: Answer, exact: Answer, approx_is_reference: bool = False) -> bool | None:
    """Does the approximation `approx` (a plain decimal) count for `exact`? The policy in the module
    docstring: exact always; an approximate reference within half a unit of its last digit; against
    a decimal reference of at least `MIN_APPROX_DIGITS` significant digits, agreement to its last
    digit; against any other reference, at least `MIN_APPROX_DIGITS` significant digits within
    half a unit of the last one. For answers where `approximation_applies`."""
    significant = _significant(approx.norm)
    try:
        a, b = expr.evaluate(approx.node, {}), expr.evaluate(exact.node, {})
        if expr.values_equal(a, b):
            return True
        diff = abs(float(a) - float(b))
    except (expr.ExprError, OverflowError):
        return None
    slack = 1 + 1e-9
    if approx_is_reference:
        return diff <= 0.5 * _last_digit_unit(approx.norm) * slack
    if DECIMAL.fullmatch(exact.norm) and _significant(exact.norm) >= MIN_APPROX_DIGITS:
        return significant >= MIN_APPROX_DIGITS and diff <= 0.5 * _last_digit_unit(exact.norm) * slack
    return significant >= MIN_APPROX_DIGITS and diff <= 0.5 * _last_digit_unit(approx.norm) * slack
