"""Is a text within the checker's grammar? The reference decides how a fill is judged.

`in_grammar(text)` is True when, after `normalize` (presentational markup removed by
`markup.strip_markup`), every leaf of the parsed answer is an expression the safe evaluator
reads (`expr`): numbers, letters, `\\frac`, roots, powers, functions, relations and chains between
such expressions, tuples, sets, lists, intervals, unions, matrices of them. Prose, theorem names,
big operators (`\\sum`, `\\int`, `\\lim`), congruences, set-builder notation and any unknown command
are outside it.

Masked-Then-Fill uses it on the reference (the masked formula): a reference in the grammar is
judged by the checker alone (equal 1, anything else 0: a fill the checker cannot read earns
nothing), and text similarity is left only for references outside it. So whether similarity
applies depends on the reference, never on what the policy writes.
"""

from __future__ import annotations

from mrtasks.mathcheck.answer import MAX_ANSWER_CHARS, Answer, parse_answer
from mrtasks.mathcheck.cache import short_cache


def readable(a: Answer) -> bool:
    """Does every leaf of `a` parse into an expression?"""
    if a.kind == "atom":
        return a.node is not None
    return bool(a.parts) and all(readable(p) for p in a.parts)


@short_cache(maxsize=100_000)
def in_grammar(text: str, strip_lhs: bool = False) -> bool:
    """Is `text` (a formula when `strip_lhs` is False, a final answer otherwise) within the
    checker's grammar? See the module docstring."""
    if not text.strip() or len(text) > MAX_ANSWER_CHARS:
        return False
    try:
        return readable(parse_answer(text, strip_lhs))
    except Exception:  # noqa: BLE001 - a text the parser chokes on is outside the grammar
        return False
