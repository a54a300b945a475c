"""The candidate model: what a formula must look like to be maskable (`junk_reason`).

Policy: junk is never maskable and does not count towards `--min-formulas`. By family:

- too little: at most 2 significant characters, a lone command (`\\infty`), a bare number or unit (`3.5`,
  `{eV}`, `\\mathrm{Cu}`), `\\text`-only content;
- fragments: starting with a relation (`\\stackrel{(1)}{=} f(997)`) or ending with an operator (one relation split across
  spans: `t_1 - t_0 =`), unbalanced braces or `\\left`/`\\right`, brackets that do not pair up
  (`\\left.x=270^\\circ\\right)`: garbled, nobody could restore it);
- markup that cannot be filled: a nested `\\boxed`/`\\tag`, a top-level `;` (the fill format
  separates formulas with `;`), alignment residue (a top-level `&` or `\\\\` left in the span:
  a table row `306-6 & =300, & & 6^{2} \\nmid 300`);
- bookkeeping: a table (an `array` or `tabular` that is the whole formula, not a matrix in
  `\\left( \\right)`; one with ruled columns `{c|c}`; any `\\hline`), an index range
  (`k=1,\\dots,m`, `s = 0, 1, \\ldots, n`, `\\{1, \\ldots, n\\}`, `1 \\le i \\le n`, `n \\equiv 0, 1, \\ldots, 6 \\pmod 7`, a family with
  its range `\\Delta_j, j=1, \\ldots, n`, `1+m s_i, m \\in \\mathbb{Z}`), a reference label (`(i')`, `(*)`, `(2)`, or one
  glued to a formula: `(*), d(n)<9`), a case label opening the formula (`b=3: \\quad a^3 - 9a^2 + 28 = 0`);
- a row cut from its start: a leading binary operator (`\\cdot [K : F]`, `\\mapsto f(x)`, `+ 2ab`);
- two formulas run together in one span: a relation, then the next sentence's subject (`q \\equiv 3 \\pmod 4, q`),
  or the figure a sentence names, then its formula (`P C A, \\angle P A O = 90^\\circ`); words typeset as
  operators (`\\operatorname{get} \\gcd(b, c)=1`); absolute-value bars converted to a `\\mid` that divides nothing
  (`f(x-y)|| f(x)-f(y) \\mid=f(y)-f(x)`); one relation the source breaks across two math spans at a
  line end (`split_math`, set by `candidates`: `$\\angle A=$ $\\angle B$` joined would show the break in its mask);
- a theorem name that refers back to the proof's own assumption (`by the induction hypothesis`:
  `hypothesis_reference`, set by `candidates`).

Bookkeeping that only its context shows (case labels and hypotheses, notation definitions,
quantifier ranges) is `context.role`'s; alignment rows `A &= B` are cut to `B` by `candidates`.
"""

from __future__ import annotations

import re

from mrtasks.curate.heuristic.spans import top_level_marks
from mrtasks.mathcheck.latex import split_top_level

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
    r"Leftrightarrow|to|lt|gt|mid|nmid|in|notin|subset|subseteq)(?![A-Za-z])"
    r"|\\(?:stackrel|overset)\s*\{[^{}]*\}\s*\{\s*(?:=|<|>|\\[A-Za-z]+)\s*\})"
)
"""A row that starts with its relation: `= 2x`, `\\stackrel{(1)}{=} f(997)` (the rest of an aligned chain)."""
_TRAILING_OPERATOR = re.compile(
    r"(?:[=<>+\-*/^_(\[]|\\(?:le|ge|leq|geq|leqslant|geqslant|neq|ne|equiv|approx|sim|cong|implies|iff|Rightarrow|Longrightarrow|"
    r"Leftrightarrow|to|cdot|times|div|pm|mp|lt|gt|left[(\[|.]?|frac|sqrt|in|subset|subseteq|cup|cap)(?![A-Za-z]))\s*$"
)
_LONE_COMMAND = re.compile(r"\(?\\[A-Za-z]+\)?")  # `\\Rightarrow`, `(\\Leftarrow)`, `\\infty`
_LEFT = re.compile(r"\\left(?![A-Za-z])")
_RIGHT = re.compile(r"\\right(?![A-Za-z])")
JUNK_REASONS: tuple[str, ...] = (
    "too_short", "bare_number_or_unit", "text_only", "leading_relation", "trailing_operator",
    "unbalanced_braces", "garbled_brackets", "nested_box_or_tag", "top_level_semicolon",
    "alignment_residue", "table", "index_range", "label", "case_prefix", "leading_operator", "trailing_subject", "leading_subject",
    "garbled_markup", "split_math", "hypothesis_reference",
)
NO_KEY_FORMULA: frozenset[str] = frozenset({"too_short", "table", "index_range", "label", "case_prefix"})
"""The reasons that say a formula is no key formula whoever lists it: too little to restore, or bookkeeping by its
shape. The others say where a span was cut (a fragment, alignment residue, markup), which concerns the heuristic's
own spans; an annotator that lists formulas as written (the `llm` one: an align row `A &= B`) does not share them."""
_SUBJECT = re.compile(r"^\s*(?:\\(?:sin|cos|tan|log|ln)\s*)?(?:\\[A-Za-z]+|[A-Za-z])(?:_\{?\w+\}?)?\s*$")
_POINTS = re.compile(r"^\s*(?:[A-Z](?:_\{?\w+\}?)?(?:'|\^\{?\\prime\}?)?\s*){2,4}$")
"""A figure named by its points: `P C A`, `A^{\\prime} R D`, `A A^{\\prime}`."""
_HAS_RELATION = re.compile(r"=|<|>|\\(?:le|ge|leq|geq|neq|ne|equiv|cap|cup|subset|subseteq|in|perp|parallel)(?![A-Za-z])")


def _leading_subject(items: list[str]) -> bool:
    """`P C A, \\sphericalangle(P A, A O)=\\pi / 2`, `A^{\\prime} R D, R D^{2}=R N \\cdot R A^{\\prime}`: the figure the
    sentence names, then the formula, written inside one math span (garbled). `items`: the formula's top-level
    comma-separated parts."""
    return len(items) >= 2 and bool(_POINTS.match(items[0])) and bool(_HAS_RELATION.search(items[1]))


def _trailing_subject(items: list[str]) -> bool:
    """`q \\equiv 3 \\bmod 4, q`, `U \\cap V=\\emptyset, A_1`, `\\theta=150^{\\circ}, \\sin \\theta`: a relation, then
    the next sentence's subject that the source wrote inside the same math span (garbled)."""
    return len(items) == 2 and bool(_HAS_RELATION.search(items[0])) and bool(_SUBJECT.match(items[1]) or _POINTS.match(items[1]))


_CASE_PREFIX = re.compile(r"^(?!\\\{|\\left|[{(\[])[^:$]{1,40}?=\s*-?\d+\s*:(?!=)\s*\S")
"""A case label opening the formula: `b=3: \\quad a^{3}-9 a^{2}+28=0`, `D+E=11: DE=29, SH=01`."""
_LEADING_OPERATOR = re.compile(r"^(?:\\(?:cdot|times|div|mapsto|circ)(?![A-Za-z])|[*/]|\+(?!\s*\d+\s*$))")
"""The continuation of a row cut from its start: `\\cdot[\\mathbb{Q}(\\sqrt{2}): \\mathbb{Q}]`, `\\mapsto f(x)`, `+ 2 a \\cdot b`."""
_LABEL = re.compile(
    r"^(?:\\left)?\(\s*(?:\\(?:mathrm|text|textrm|rm)\s*\{)?\s*(?:[ivxIVX]{1,4}|\d{1,2}|[A-Za-z]|\*{1,3}|\\ast|\\star)"
    r"\s*\}?\s*(?:'|\^\{?\\prime\}?)*\s*(?:\\right)?\)$"
)
DOTS = r"(?:\\(?:[lcv]?dots[cbmio]?|cdots|ldots)(?![A-Za-z])|\.\.\.|\u2026)"
"""Dots that elide a run: `\\ldots`, `\\cdots`, `\\dotsc`, `...`, `\u2026` (also `context`'s runs of values)."""
_INDEX = r"[A-Za-z](?:_\{?[\w,]+\}?)?'?"
_LE = r"(?:<|\\(?:le|leq|leqslant|lt)(?![A-Za-z]))"
_INDEX_RANGE = re.compile(
    rf"^(?:(?:\\?[A-Za-z]+(?:_\{{?[\w,]+\}}?)?\s*,\s*)?{_INDEX}\s*(?:=|\\equiv(?![A-Za-z]))\s*[^=<>()\[\]\\]*?,\s*{DOTS}\s*,?[^=<>]*"
    rf"|\(?\s*[01]\s*\)?\s*{_LE}\s*{_INDEX}\s*{_LE}\s*[A-Za-z](?:_\{{?\w+\}}?)?(?:\s*[-+]\s*1)?)$"
)
_SYM_IDX = r"\\?[A-Za-z]+_(?:\{(?:[\w+\-]|\\[A-Za-z]+)(?:[\w+\- ]|\\[A-Za-z]+)*\}|[\w+\-]+)(?:'|\^\{?\\prime\}?)?"
_INDEX_LIST = re.compile(
    rf"^(?:\\left)?\(?\s*{_SYM_IDX}\s*,\s*(?:{_SYM_IDX}\s*,\s*)*(?:{DOTS}\s*,\s*)?{_SYM_IDX}\s*(?:\\right)?\)?$"
    rf"|^{_SYM_IDX}\s*{DOTS}\s*{_SYM_IDX}$"
)
"""A family of indexed symbols: `\\lambda_1, \\ldots, \\lambda_n`, `(k_1,k_2,...,k_n)`, `x_2 \\ldots x_8`."""
_NUMBER_RUN = re.compile(
    rf"^(?:\\left)?(?:\\\{{)?\s*(?:-?\d+\s*,\s*){{1,3}}{DOTS}\s*,\s*(?:\d+|(?:\\[A-Za-z]+|{_INDEX})(?:\s*[-+]\s*\d+)?)"
    rf"\s*(?:\\right)?(?:\\\}})?$"
)
"""Labels counted off: `1,2, \\ldots, \\ell`, `1, 2, \\dots, n-1`, `\\{1, \\ldots, n\\}` (which boxes or rows), not a formula."""
_TRAILING_RANGE = re.compile(rf",\s*{_INDEX}\s*=\s*\d\s*,\s*(?:\d\s*,\s*)?{DOTS}\s*(?:,\s*[^,=<>]{{1,12}})?\s*$")
"""A condition with its index range: `b_i \\leq a_i, i=1,2,\\ldots,k`, `0 \\leq k \\leq n, n=1,2, \\ldots`."""
_PARAMETER = re.compile(
    r"\s*[A-Za-z](?:_\{?\w+\}?)?\s*\\in\s*(?:\\math(?:bb|cal)\s*\{?[A-Z]\}?(?:_\{?[+\w]+\}?|\^\{?[+*\w]+\}?)*|[A-Z])\s*"
)
"""A parameter's range after a family: `m \\in \\mathbb{Z}`, `x \\in E`."""
_LABEL_PREFIX = re.compile(r"^\((?:\*{1,3}|\d{1,2}|[ivx]{1,4})\)\s*,")
"""`(*), d(n^n)=(n+1)^3`: a reference label glued to the formula it cites (garbled)."""
_HEADLESS_FRACTION = re.compile(r"^\{[^{}]*(?:\{[^{}]*\}[^{}]*)*\}\s*\{")
"""`{(m+n)!}{m!\\,n!}`: a fraction whose `\\frac` the source lost (garbled)."""
_GARBLED_MARKUP = re.compile(
    r"\^\s*\{\s*\\wedge\s*\}|^\\\$.*\\\$$|\\operatorname\s*\{\s*(?:get|gets|and|or|so|then|thus|hence|we|have|has|is|are|for|with|of|to)\s*\}",
    re.DOTALL,
)
"""`\\$ 2^{\\wedge} 2 \\$`: a caret typed as text, math delimited by escaped dollars inside math, or words of the
sentence typeset as operators (`\\operatorname{get} \\operatorname{gcd}(b, c)=1`): a conversion that lost the markup;
nobody could restore it."""
_IDLE_MID = re.compile(r"\\mid\s*(?:=|<|>|\\(?:le|ge|leq|geq)(?![A-Za-z])|$)")
"""`f(x-y)|| f(x)-f(y) \\mid=f(y)-f(x)`: a `\\mid` followed by a relation or by nothing divides nothing; among bare
`|` bars it is an absolute-value bar that a conversion turned into `\\mid` (garbled, nobody could restore the bars)."""
_CUT_DOTS = re.compile(rf"(?:[-+]|\\(?:cdot|times))\s*{DOTS}\s*$")
"""`-1 \\cdot 2 \\cdot \\cdots`: a product cut off after its dots (the rest sits in another span)."""
_WHOLE_SYSTEM = re.compile(r"^\\begin\{(alignat|eqnarray|align|flalign)\*?\}.*\\end\{\1\*?\}$", re.DOTALL)
_WHOLE_ARRAY = re.compile(r"^\\begin\{(array|tabular|matrix)\}.*\\end\{\1\}$", re.DOTALL)
"""A whole `array`, `tabular` or bare `matrix` (a grid laid out without delimiters); a matrix has `\\left(` or its own
delimiters (`pmatrix`) around it."""
_RULED = re.compile(r"\\begin\{(?:array|tabular)\}\s*\{[^{}]*\|")
_OPEN_CLOSE = re.compile(r"\\[{}]|\\(?:left|right)\.|[()\[\]]")


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


def _top_level_marks(text: str) -> bool:
    """True when an alignment `&` or a row break `\\\\` sits outside every brace and nested environment."""
    return next(top_level_marks(text), None) is not None


def _brackets_pair(text: str) -> bool:
    """Round and square brackets open as often as they close (`[0, 1)` pairs; `x\\right)` alone does not)."""
    opened = closed = 0
    for m in _OPEN_CLOSE.finditer(text):
        t = m.group(0)
        if t in "([":
            opened += 1
        elif t in ")]":
            closed += 1
    return opened == closed


def significant(text: str) -> str:
    """The text without spacing commands, alignment marks, braces and final punctuation."""
    return _SPACING.sub("", text).replace("{", "").replace("}", "").rstrip(".,")


def _family(items: list[str]) -> bool:
    """An expression without a relation, then its parameters' ranges: `1+m s_{i}, m \\in \\mathbb{Z}`,
    `(x, y), x \\in E, y \\in Y` (which objects, not a formula)."""
    family = items[0]  # one expression, not symbols declared together (`a, b \\in G`)
    return (
        len(items) >= 2 and not _HAS_RELATION.search(family) and not _SUBJECT.match(family)
        and all(_PARAMETER.fullmatch(i) for i in items[1:])
    )


def junk_reason(text: str) -> str | None:
    """Why a formula candidate is not worth masking (a key of JUNK_REASONS), or None when it is.

    The families are in the module docstring: too little, fragments, markup that cannot be
    filled, bookkeeping (tables, index ranges).
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
    if _LEADING_OPERATOR.match(stripped):
        return "leading_operator"
    if _TRAILING_OPERATOR.search(compact.rstrip(".,;:")) or ("dots" in stripped and _CUT_DOTS.search(stripped)):
        return "trailing_operator"
    if nested:
        return "nested_box_or_tag"
    if semicolon:
        return "top_level_semicolon"
    if _WHOLE_SYSTEM.match(stripped):
        return "table"  # a whole system of rows (`\\begin{alignat*}...`): a table of givens, not one formula
    if "\\hline" in stripped or ("{array}" in stripped or "{tabular}" in stripped or "{matrix}" in stripped) and (
        _RULED.search(stripped) or _WHOLE_ARRAY.match(stripped)
    ):
        return "table"
    if ("&" in stripped or "\\\\" in stripped) and _top_level_marks(stripped):
        return "alignment_residue"
    if not _brackets_pair(stripped) or (stripped[0] == "{" and _HEADLESS_FRACTION.match(stripped)):
        return "garbled_brackets"
    if ("wedge" in stripped or "\\$" in stripped or "operatorname" in stripped) and _GARBLED_MARKUP.search(stripped):
        return "garbled_markup"
    if "\\mid" in stripped and "|" in stripped.replace("\\|", "") and _IDLE_MID.search(stripped.rstrip(".,; ")):
        return "garbled_markup"
    items = split_top_level(stripped, ",") if "," in stripped else [stripped]  # `\\,` is spacing, not a comma
    if (
        _INDEX_RANGE.match(stripped) or _INDEX_LIST.match(stripped) or _TRAILING_RANGE.search(stripped)
        or ("," in stripped and (_NUMBER_RUN.match(stripped) or _family(items)))
    ):
        return "index_range"
    if _CASE_PREFIX.match(stripped):
        return "case_prefix"
    if _trailing_subject(items):
        return "trailing_subject"
    if _leading_subject(items):
        return "leading_subject"
    if stripped.startswith(("(", "\\left(")) and (_LABEL.match(stripped) or _LABEL_PREFIX.match(stripped)):
        return "label"
    return None
