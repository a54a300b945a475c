"""The slow tier: MathRuler's `grade_answer` (sympy) on sanitized text, run only inside the sandbox.

Policy: sympy's `parse_expr` `eval`s its input and can hang on innocent-looking text, so only
text that passes `safe_for_sympy` (a whitelist of math characters, no Python identifiers or
dunders, no power towers or huge exponents) and is at most `MAX_SYMPY_CHARS` long ever reaches
it, and only in a worker process of `sandbox.TimedPool` with a time bound per item. Any failure
inside sympy is a "no". It can only add EQUAL to the in-process verdicts.
"""

from __future__ import annotations

import re

MAX_SYMPY_CHARS = 300

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

