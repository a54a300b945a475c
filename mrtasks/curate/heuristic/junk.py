"""The candidate model: what a formula must look like to be maskable (`junk_reason`).

Policy: junk is never maskable and does not count towards `--min-formulas`: at most 2
significant characters, a bare number or unit (`3.5`, `{eV}`, `\\mathrm{Cu}`), `\\text`-only
content, a fragment starting with a relation or ending with an operator (one relation split
across spans: `t_1 - t_0 =`), unbalanced braces, a nested `\\boxed`/`\\tag`, or a top-level `;`
(the fill format separates formulas with `;`).
"""

from __future__ import annotations

import re

_SPACING = re.compile(r"\\(?:[,;:! ]|quad|qquad|left|right|displaystyle|textstyle|big[lr]?|Big[lr]?)(?![A-Za-z])|[\s&~]")
_NUMBER = r"[-+\u2212]?(?:\d[\d,]*(?:\.\d*)?|\.\d+)(?:\\%|%|\^\{?\\circ\}?|\\circ|\\degree)?"
_UNIT_CMD = r"\\(?:text|mathrm|textrm|mbox|operatorname|rm|mathit|textit|textbf|mathbf|phantom|hphantom|vphantom)\s*\{[^{}]*\}"
_UNIT_WORD = r"(?:[a-zA-Z\u00b5\u03bc]{1,4}(?:\^\{?-?\d\}?)?(?:/[a-zA-Z]{1,4}(?:\^\{?-?\d\}?)?)?|\\%|%)"
_BARE_NUMBER_OR_UNIT = re.compile(
    rf"^(?:\{{?{_NUMBER}(?:,{_NUMBER})*\s*(?:{_UNIT_CMD}|\{{{_UNIT_WORD}\}}|{_UNIT_WORD})?\}}?"
    rf"|{_UNIT_CMD}|\{{{_UNIT_WORD}\}})[.,]?$"
)
_TEXT_ONLY = re.compile(rf"^(?:{_UNIT_CMD}|[\s.,:;!?()])+$")
_LEADING_RELATION = re.compile(
    r"^(?:=|<|>|\\(?:le|ge|leq|geq|neq|ne|equiv|approx|sim|cong|implies|iff|Rightarrow|Longrightarrow|"
    r"Leftrightarrow|to|lt|gt)(?![A-Za-z]))"
)
_TRAILING_OPERATOR = re.compile(
    r"(?:[=<>+\-*/^_(\[]|\\(?:le|ge|leq|geq|neq|ne|equiv|approx|sim|cong|implies|iff|Rightarrow|Longrightarrow|"
    r"Leftrightarrow|to|cdot|times|div|pm|mp|lt|gt|left[(\[|.]?|frac|sqrt|in|subset|subseteq|cup|cap)(?![A-Za-z]))\s*$"
)
_LONE_COMMAND = re.compile(r"\(?\\[A-Za-z]+\)?")  # `\\Rightarrow`, `(\\Leftarrow)`, `\\infty`
_LEFT = re.compile(r"\\left(?![A-Za-z])")
_RIGHT = re.compile(r"\\right(?![A-Za-z])")
JUNK_REASONS: tuple[str, ...] = (
    "too_short", "bare_number_or_unit", "text_only", "leading_relation", "trailing_operator",
    "unbalanced_braces", "nested_box_or_tag", "top_level_semicolon",
)


def _brace_profile(text: str) -> tuple[bool, bool, bool]:
    """(balanced, `\\boxed`/`\\tag` inside braces, `;` at brace depth 0) for a LaTeX fragment."""
    depth, balanced, nested, semicolon, i, n = 0, True, False, False, 0, len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            if depth > 0 and text.startswith(("\\boxed", "\\tag"), i):
                nested = True
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth < 0:
                balanced = False
                depth = 0
        elif c == ";" and depth == 0:
            semicolon = True
        i += 1
    return balanced and depth == 0, nested, semicolon


def significant(text: str) -> str:
    """The text without spacing commands, alignment marks, braces and final punctuation."""
    return _SPACING.sub("", text).replace("{", "").replace("}", "").rstrip(".,")


def junk_reason(text: str) -> str | None:
    """Why a formula candidate is not worth masking (a key of JUNK_REASONS), or None when it is.

    Junk: at most 2 significant characters, a bare number or unit (`3.5`, `{eV}`,
    `\\mathrm{Cu}`), `\\text`-only content, a fragment starting with a relation or ending with
    an operator (one relation split across spans: `t_1 - t_0 =`), unbalanced braces, a nested
    `\\boxed`/`\\tag`, or a top-level `;` (the fill format separates formulas with `;`).
    """
    stripped = text.strip()
    compact = _SPACING.sub("", stripped)
    sig = compact.replace("{", "").replace("}", "").rstrip(".,")  # `significant(stripped)`
    balanced, nested, semicolon = _brace_profile(stripped)
    if not balanced or len(_LEFT.findall(stripped)) != len(_RIGHT.findall(stripped)):
        return "unbalanced_braces"
    if len(sig) <= 2 or _LONE_COMMAND.fullmatch(compact.rstrip(".,")):
        return "too_short"
    if _TEXT_ONLY.match(compact):
        return "text_only"
    if _BARE_NUMBER_OR_UNIT.match(compact):
        return "bare_number_or_unit"
    if _LEADING_RELATION.match(compact):
        return "leading_relation"
    if _TRAILING_OPERATOR.search(compact.rstrip(".,;:")):
        return "trailing_operator"
    if nested:
        return "nested_box_or_tag"
    if semicolon:
        return "top_level_semicolon"
    return None
