"""The offline, deterministic annotator: formulas from LaTeX math spans, steps from text layout.

Candidates (`find_candidates`): the contents of math delimiters (`$..$`, `$$..$$`, `\\(..\\)`,
`\\[..\\]`, `equation`, and one candidate per row of `align`/`gather`/... and of an `aligned`
block that fills a display), trimmed of punctuation and `\\tag{}`; a continuation row `&= x`
gives its right-hand side `x`; a relation split across adjacent spans is merged; the content
of a `\\boxed{}` is the final-answer candidate. Plain-text arithmetic (`48/2 = 24`) and theorem
names of the checker's lexicon with aliases (`mrtasks.mathcheck.theorems.THEOREM_ALIASES`) count
too; never the inside of `[asy]`/TikZ figures or code. Junk (`junk_reason`: <= 2 significant characters, bare numbers or
units, `\\text`-only, a leading relation or trailing operator, unbalanced braces, a nested
`\\boxed`/`\\tag`, a top-level `;`) is never maskable and does not count towards `--min-formulas`.

Ranking (`extract_formulas`): the final answer first (so a masked row never shows it), then
derived relations over bare expressions, longer, displayed and later formulas; givens copied
from the problem statement, repeated formulas and short expressions without a relation are
context only; at most `max_mask_share` of the candidates are offered, so masks leave context.

Steps (`split_steps`): one logical move each: lines and sentences (and `, therefore` clauses
between computations), never cut inside math or figures, joined where a piece continues the
previous one; figure-only pieces are dropped; interchangeable parallel cases are merged.

`python -m mrtasks.curate.annotator_bench` scores this annotator against hand labels.
"""

from __future__ import annotations

import bisect
import functools
import math
import re
from collections import Counter
from dataclasses import dataclass, replace

from mrtasks.curate.base import Annotator, Drop
from mrtasks.mathcheck.theorems import THEOREM_ALIASES
from mrtasks.trajectory import Formula, Trajectory

# Environments whose body is display math; rows are split on top-level `\\`.
ROW_ENVS = frozenset(
    {"align", "align*", "aligned", "alignat", "alignat*", "gather", "gather*", "eqnarray",
     "eqnarray*", "multline", "multline*", "flalign", "flalign*"}
)
MATH_ENVS = ROW_ENVS | {"equation", "equation*", "displaymath", "math"}
# Environments that are figures or code: never formulas, never scanned inside.
SKIP_ENVS = frozenset({"tikzpicture", "asy", "verbatim", "lstlisting", "minted", "comment"})

_RELATION = re.compile(
    r"=|<|>|\\(?:le|ge|leq|geq|neq|ne|equiv|approx|sim|simeq|cong|lt|gt|implies|iff|Rightarrow|"
    r"Leftrightarrow|to|mapsto|in|notin|subset|subseteq|supset|supseteq|mid|nmid|perp|parallel)(?![A-Za-z])"
)


@dataclass(frozen=True)
class HeuristicConfig:
    """Knobs of the heuristic annotator (the defaults are what the build uses)."""

    plain_equations: bool = True
    """Also take plain-text arithmetic (`48/2 = 24`) outside math delimiters as formulas."""
    min_formula_chars: int = 2
    """Shorter formulas (after stripping) are not maskable."""
    max_formula_chars: int = 400
    """Longer formulas are not maskable: nobody can restore a half-page display verbatim."""
    max_steps: int | None = 20
    """Merge the shortest neighbouring steps until at most this many remain (None: no merging)."""
    min_step_chars: int = 12
    """A step shorter than this (e.g. `Q.E.D.`) is merged into its neighbour."""
    theorem_names: bool = True
    """Offer theorem names of the lexicon (`THEOREM_ALIASES`) found in the prose as candidates."""
    max_mask_share: float = 0.75
    """At most this share of a solution's non-junk candidates is offered as maskable, so that a
    masked row always keeps context visible (with 7 masks a row needs 10 candidates)."""


@dataclass(frozen=True)
class MathSpan:
    """A math region: `start:end` is the content inside the delimiters, `outer_start:outer_end`
    includes them (for an align row: the whole environment); `display` for display math."""

    start: int
    end: int
    display: bool
    outer_start: int
    outer_end: int


def _skip_to(text: str, needle: str, pos: int) -> int:
    """Index just past `needle` at or after pos, or len(text) when it is missing."""
    j = text.find(needle, pos)
    return len(text) if j < 0 else j + len(needle)


def _inline_dollar_end(text: str, i: int) -> int:
    """The index of the `$` closing an inline `$` opened at i, or -1 (pandoc's rules).

    The opener must be followed by a non-space, the closer preceded by a non-space and not
    followed by a digit (so "$12 and $15" is two prices, not a formula); the first unescaped `$`
    after the opener must be the closer, and an inline formula never crosses a blank line.
    """
    n = len(text)
    if i + 1 >= n or text[i + 1].isspace():
        return -1
    limit = text.find("\n\n", i)
    limit = n if limit < 0 else limit
    j = i + 1
    while True:
        j = text.find("$", j, limit)
        if j < 0:
            return -1
        if text[j - 1] == "\\":
            j += 1
            continue
        if not text[j - 1].isspace() and not (j + 1 < n and text[j + 1].isdigit()):
            return j
        return -1  # a `$` that cannot close: the opener was a price or a stray sign


@functools.lru_cache(maxsize=8)
def _math_spans(text: str) -> tuple[tuple[MathSpan, ...], tuple[tuple[int, int], ...]]:
    """`find_math_spans`, cached: candidates and steps of one solution scan it once."""
    spans, skipped = find_math_spans(text)
    return tuple(spans), tuple(skipped)


def find_math_spans(text: str) -> tuple[list[MathSpan], list[tuple[int, int]]]:
    """Scan text once, left to right; return the math spans and the skipped figure/code regions.

    Unclosed delimiters are ignored (the scan moves on), so malformed LaTeX never raises.
    """
    spans: list[MathSpan] = []
    skipped: list[tuple[int, int]] = []
    n, i = len(text), 0
    while i < n:
        c = text[i]
        if c == "\\":
            nxt = text[i + 1 : i + 2]
            if nxt in ("[", "("):
                close = "\\]" if nxt == "[" else "\\)"
                j = text.find(close, i + 2)
                if j >= 0:
                    spans.append(MathSpan(i + 2, j, nxt == "[", i, j + 2))
                    i = j + 2
                    continue
                i += 2
                continue
            if text.startswith("\\begin{", i):
                k = text.find("}", i + 7)
                env = text[i + 7 : k] if k >= 0 else ""
                if env in MATH_ENVS or env in SKIP_ENVS:
                    end_tag = f"\\end{{{env}}}"
                    j = text.find(end_tag, k + 1)
                    if j < 0:
                        i = k + 1
                        continue
                    if env in SKIP_ENVS:
                        skipped.append((i, j + len(end_tag)))
                    elif env in ROW_ENVS:
                        spans += _split_rows(text, k + 1, j, i, j + len(end_tag))
                    else:
                        spans.append(MathSpan(k + 1, j, True, i, j + len(end_tag)))
                    i = j + len(end_tag)
                    continue
            i += 2  # an escaped char (`\$`, `\\`) or a command: never a delimiter
            continue
        if c == "[" and text.startswith("[asy]", i):
            j = _skip_to(text, "[/asy]", i)
            skipped.append((i, j))
            i = j
            continue
        if c == "`" and text.startswith("```", i):
            j = _skip_to(text, "```", i + 3)
            skipped.append((i, j))
            i = j
            continue
        if c == "$":
            if text.startswith("$$", i):
                j = text.find("$$", i + 2)
                if j >= 0:
                    spans.append(MathSpan(i + 2, j, True, i, j + 2))
                    i = j + 2
                    continue
                i += 2
                continue
            j = _inline_dollar_end(text, i)
            if j >= 0:
                spans.append(MathSpan(i + 1, j, False, i, j + 1))
                i = j + 1
                continue
        i += 1
    return spans, skipped


def _split_rows(text: str, start: int, end: int, outer_start: int, outer_end: int) -> list[MathSpan]:
    """Split an align-like body on top-level `\\\\` (not inside braces) into one span per row."""
    rows, depth, row_start, i = [], 0, start, start
    while i < end:
        c = text[i]
        if c == "\\":
            if text.startswith("\\begin{", i):
                depth += 1
            elif text.startswith("\\end{", i):
                depth -= 1
            if text[i + 1 : i + 2] == "\\" and depth == 0:
                rows.append(MathSpan(row_start, i, True, outer_start, outer_end))
                i += 2
                if text[i : i + 1] == "[":  # `\\[2pt]` spacing argument
                    k = text.find("]", i, end)
                    i = k + 1 if k >= 0 else i
                row_start = i
                continue
            i += 2
            continue
        depth += (c == "{") - (c == "}")
        i += 1
    rows.append(MathSpan(row_start, end, True, outer_start, outer_end))
    return rows


def _strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


# --- The candidate model: what a formula must look like to be maskable ----------------------

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


# --- Candidates: every formula-like span, cleaned, classified, merged --------------------------

# Environments nested in display math whose rows are separate candidates (a derivation).
INNER_ROW_ENVS = ("aligned", "alignedat", "split", "gathered", "align", "align*", "gather", "gather*",
                  "eqnarray", "eqnarray*")
_INNER_ENV = re.compile(r"\\begin\{(" + "|".join(re.escape(e) for e in INNER_ROW_ENVS) + r")\}")
_TRAILING_NOISE = re.compile(
    r"(?:\s|[.,;:]|\\\\|~|\\(?:[,;:! ]|quad|qquad|nonumber|notag)(?![A-Za-z])|\\(?:tag|label)\*?\{[^{}]*\})+$"
)
_LEADING_NOISE = re.compile(r"(?:\s|&|\\(?:[,;:! ]|quad|qquad)(?![A-Za-z]))+")
_LEADING_REL = re.compile(
    r"(?:=|<|>|\\(?:le|ge|leq|geq|leqslant|geqslant|neq|ne|equiv|approx|sim|simeq|cong|implies|iff|Rightarrow|"
    r"Longrightarrow|Leftrightarrow|Longleftrightarrow|lt|gt)(?![A-Za-z]))"
)
_TAG = re.compile(r"\\(?:tag|label)\*?\{[^{}]*\}")
_HEAVY = re.compile(r"\\(?:frac|dfrac|sqrt|sum|int|prod|lim|binom|log|ln|sin|cos|tan|cot|pmod|equiv|cdot|times)(?![A-Za-z])")
_NUM = r"\$?\d(?:[\d,]*\d)?(?:\.\d+)?%?(?![\w.])"
_NOT_UNIT = r"(?:x|and|or|to|is|in|so|of|for|at|on|the|then|we|it|he|she|they|per|each|more|less|left|total)\b"
_UNIT = rf"(?:[ \t]*/[ \t]*[a-zA-Z]{{2,}}\b|[ \t]+(?!{_NOT_UNIT})[a-zA-Z]{{2,}}(?:/[a-zA-Z]+)?\b)"
_OPERAND = rf"(?:{_NUM}{_UNIT}?|\d*[a-z](?![\w.']))"
_OP = r"(?:[ \t]*[-+*/×÷][ \t]*|[ \t]+x[ \t]+)"
_EQ = r"[ \t]*=[ \t]*"
_SIDE = rf"{_OPERAND}(?:{_OP}{_OPERAND})*"
_PLAIN_EQUATION = re.compile(rf"(?<![\w.$\\'])(?:\([ \t]*)?{_OPERAND}(?:{_OP}\(?{_OPERAND}\)?)*{_EQ}{_SIDE}(?:{_EQ}{_SIDE})*")
_FIRST_UNIT = re.compile(rf"^\(?[ \t]*{_NUM}{_UNIT}")
_LAST_UNIT = re.compile(rf"{_UNIT}$")
_WEAK_RELATION = re.compile(r"^[^=<>]*\\(?:in|notin|ni)(?![A-Za-z])[^=<>]*$")


@dataclass(frozen=True)
class Candidate:
    """A formula candidate: `solution[start:end]`; `kind` is `math`, `plain` (arithmetic in prose),
    `theorem` (a lexicon name) or `answer` (the content of a `\\\\boxed{}`, or a formula holding one);
    `junk` is the rejection reason (None: maskable)."""

    start: int
    end: int
    kind: str
    display: bool
    junk: str | None


def _trim(text: str, a: int, b: int, rhs: bool = True) -> tuple[int, int]:
    """Shrink [a, b) past spacing, punctuation, `\\\\tag{}` and row ends; with rhs, also past a
    leading relation, so that an align continuation row `&= x + 1` becomes `x + 1`."""
    while b > a:
        if text[b - 1] in " \t\n\r.,;:~":
            b -= 1
            continue
        m = _TRAILING_NOISE.search(text[max(a, b - 48) : b])  # a short tail: `\\tag{1}`, `\\quad`, `\\\\`
        if not m:
            break
        b -= len(m.group(0))
    m = _LEADING_NOISE.match(text, a, b)
    a = m.end() if m else a
    if rhs:
        m = _LEADING_REL.match(text, a, b)
        if m:
            a = m.end()
            m = _LEADING_NOISE.match(text, a, b)
            a = m.end() if m else a
    return _strip_span(text, a, b)


def _row_spans(text: str, s: MathSpan) -> list[MathSpan]:
    """A display whose only content is an aligned/split/gathered block: one span per row."""
    m = _INNER_ENV.search(text, s.start, s.end)
    if not m:
        return [s]
    end_tag = f"\\end{{{m.group(1)}}}"
    j = text.find(end_tag, m.end(), s.end)
    if j < 0:
        return [s]
    body_start = m.end()
    if m.group(1) == "alignedat" and text.startswith("{", body_start):
        body_start = text.find("}", body_start) + 1
    outside = _TAG.sub("", text[s.start : m.start()] + text[j + len(end_tag) : s.end])
    if re.sub(r"[\s.,;:]|\\[,;!]|\\quad", "", outside):
        return [s]  # `x = \begin{aligned}...`: the block is part of a larger formula
    return _split_rows(text, body_start, j, s.outer_start, s.outer_end)


def boxed_spans(text: str, a: int, b: int) -> list[tuple[int, int]]:
    """The inside of every `\\\\boxed{...}` in text[a:b], outermost first."""
    out, i = [], a
    while (i := text.find("\\boxed", i, b)) >= 0:
        k = text.find("{", i + 6, b)
        if k < 0 or text[i + 6 : k].strip():
            i += 6
            continue
        d, e = 0, k
        while e < b:
            d += (text[e] == "{") - (text[e] == "}")
            if d == 0:
                break
            e += 1
        if e >= b:
            break
        out.append((k + 1, e))
        i = k + 1
    return out


_ANSWER_OK = (None, "too_short", "bare_number_or_unit", "text_only")  # an answer may be a bare number
_ALIASES_BY_WORD: dict[str, list[tuple[str, bool, re.Pattern[str]]]] = {}


def _theorem_matches(text: str) -> list[tuple[int, int]]:
    """Spans of lexicon theorem names in text (abbreviations such as `SAS` only in capitals).

    Aliases are indexed by their first word, so only the aliases whose first word occurs in
    the text are searched: a solution without theorem names costs one word scan.
    """
    if not _ALIASES_BY_WORD:
        names = sorted({a for c, al in THEOREM_ALIASES.items() for a in (c, *al)}, key=len, reverse=True)
        for n in names:
            upper = n.isupper()
            body = re.escape(n) if upper else "(?i:" + re.escape(n) + ")"
            first = re.findall(r"[a-z0-9]+", n.lower())[0]
            needle = n if upper else n.lower()
            _ALIASES_BY_WORD.setdefault(first, []).append((needle, upper, re.compile(r"(?<![\w-])" + body + r"(?![\w-])")))
    found: list[tuple[int, int]] = []
    lowered = text.lower()
    for word in sorted(set(_WORD.findall(lowered)) & _ALIASES_BY_WORD.keys()):
        for needle, upper, pattern in _ALIASES_BY_WORD[word]:
            if needle in (text if upper else lowered):
                found += [(m.start(), m.end()) for m in pattern.finditer(text)]
    return found


_WORD = re.compile(r"[a-z0-9]+")


def find_candidates(solution: str, config: HeuristicConfig = HeuristicConfig()) -> list[Candidate]:
    """Every formula candidate of a solution in text order, with its junk reason.

    Math spans (align rows and the rows of an aligned block inside `\\\\[..\\\\]` separately) are
    trimmed of punctuation, `\\\\tag{}` and a leading relation; a relation split across adjacent
    spans (`$A=$ $\\\\sqrt{2}$`) is merged into one candidate; the content `x` of a `\\\\boxed{x}` is
    the candidate of a span holding a box (the final answer: masking it hides the answer).
    Plain-text arithmetic (`48/2 = 24`) and theorem names of the lexicon outside math count too.
    Candidates never overlap.
    """
    spans, skipped = _math_spans(solution)
    boxes = boxed_spans(solution, 0, len(solution))
    final = _key(solution[boxes[-1][0] : boxes[-1][1]]) if boxes else None
    rows: list[MathSpan] = []
    for s in spans:
        rows += _row_spans(solution, s) if s.display or "\\begin{" in solution[s.start : s.end] else [s]
    out: list[Candidate] = []
    for s in rows:
        a, b = _trim(solution, s.start, s.end)
        if a >= b:
            continue
        text = solution[a:b]
        if "\\boxed" in text:
            # The content of each box is the candidate, so that the span never holds a box (the
            # fill format is `\\boxed{..}`); a box showing the final answer (the last box's
            # content) is an answer candidate, so that masking it hides the answer.
            for ba, bb in boxed_spans(solution, a, b):
                ba, bb = _trim(solution, ba, bb, rhs=False)
                inner = solution[ba:bb]
                if ba >= bb or "\\boxed" in inner:
                    continue
                junk = junk_reason(inner)
                if _key(inner) == final:
                    out.append(Candidate(ba, bb, "answer", s.display, None if junk in _ANSWER_OK else junk))
                else:
                    out.append(Candidate(ba, bb, "math", s.display, junk))
            continue
        junk = junk_reason(text)
        # A relation split across adjacent spans: `$A C=2 x+c=$ $x(2+\frac{d}{d+7})$`.
        if out and out[-1].junk in ("trailing_operator", "unbalanced_braces") and out[-1].kind == "math":
            prev = out[-1]
            gap = solution[prev.end : a]
            if len(gap) <= 8 and not _GAP_NOISE.sub("", gap):
                joined = solution[prev.start : prev.end] + " " + text
                if junk_reason(joined) is None:
                    out[-1] = Candidate(prev.start, b, "math", prev.display or s.display, None)
                    continue
        out.append(Candidate(a, b, "math", s.display, junk))
    covered = _Regions(sorted({(s.outer_start, s.outer_end) for s in spans}) + list(skipped))
    extra: list[Candidate] = []
    if config.plain_equations:
        for m in _PLAIN_EQUATION.finditer(solution):
            a, b = _trim(solution, m.start(), m.end(), rhs=False)
            if a < b and not covered.touches(a, b) and _DIGIT.search(solution, a, b):
                if not _FIRST_UNIT.match(solution[a:b]):  # `32/2 = 16 elephants`: the unit is prose
                    u = _LAST_UNIT.search(solution, a, b)
                    b = u.start() if u else b
                text = solution[a:b]
                lhs = text.split("=")[0]
                if _LHS_WORK.search(lhs):
                    extra.append(Candidate(a, b, "plain", False, junk_reason(text)))
    if config.theorem_names:
        for ta, tb in _theorem_matches(solution):
            if not covered.touches(ta, tb):
                extra.append(Candidate(ta, tb, "theorem", False, None))
    if extra:
        taken, last_end = _Regions([(c.start, c.end) for c in out]), -1
        for c in sorted(extra, key=lambda c: (c.start, -c.end)):
            if c.start >= last_end and not taken.touches(c.start, c.end):
                out.append(c)
                last_end = c.end
        out.sort(key=lambda c: c.start)
    return out


def _key(text: str) -> str:
    return "".join(text.replace("$", "").split())


def _minor(text: str, kind: str) -> bool:
    """A short expression without a relation (`(i+1)`, `2 \\times 2`, `f(0)`): context, not a key formula."""
    return kind in ("math", "plain") and len(significant(text)) <= 10 and not _RELATION.search(text)


def _given(key: str, problem_key: str) -> bool:
    """The formula, or its right-hand side when long, is copied from the problem statement."""
    if not key or not problem_key:
        return False
    if key in problem_key:
        return True
    rhs = key.split("=", 1)[1] if "=" in key else ""
    return len(rhs) >= 12 and rhs in problem_key


def importance(text: str, display: bool, kind: str = "math", position: float = 0.0, given: bool = False) -> float:
    """A score for ranking formulas, most important first.

    The final answer first; then derived relations over bare expressions, longer and displayed
    formulas and later ones (results come after their givens); theorem names rank with a medium
    relation; a formula copied from the problem statement (a given) ranks last.
    """
    if kind == "theorem":
        score = 5.5
    else:
        score = math.log1p(len(significant(text)))
        if _WEAK_RELATION.match(text):
            score += 1.0  # `a_1 \\in G`: a membership, rarely the key step
        elif _RELATION.search(text):
            score += 3.0
        if display:
            score += 0.5
        if _HEAVY.search(text):
            score += 0.5
    score += position
    if kind == "answer":
        score += 20.0
    if given:
        score -= 8.0
    return score


def extract_formulas(solution: str, config: HeuristicConfig = HeuristicConfig(), problem: str = "") -> list[Formula]:
    """The maskable formulas of a solution, most important first (ties: earlier first).

    Junk candidates are never maskable, nor is a formula whose text occurs twice (its copy would
    give it away) or one longer than `max_formula_chars`. At most `max_mask_share` of the
    solution's non-junk candidates are offered, so a row masked from the top of this list always
    keeps some formulas visible as context (the final answer is always offered).
    """
    candidates = [c for c in find_candidates(solution, config) if c.junk is None]
    keys = [_key(solution[c.start : c.end]).lower() if c.kind == "theorem" else _key(solution[c.start : c.end])
            for c in candidates]
    counts = Counter(keys)
    given_text = _key(problem)
    n = max(len(solution), 1)
    scored: list[tuple[float, int, Formula]] = []
    for c, key in zip(candidates, keys):
        text = solution[c.start : c.end]
        if c.kind != "answer" and (counts[key] > 1 or len(text) > config.max_formula_chars or _minor(text, c.kind)):
            continue
        if c.kind != "answer" and _given(key, given_text):
            continue  # a given copied from the problem: filling it is copying, not reasoning
        score = importance(text, c.display, c.kind, c.start / n)
        scored.append((score, c.start, Formula(text, c.start, c.end)))
    scored.sort(key=lambda t: (-t[0], t[1]))
    limit = max(int(config.max_mask_share * len(candidates)), sum(c.kind == "answer" for c in candidates))
    return [f for _, _, f in scored[:limit]]


class _Regions:
    """Sorted, non-overlapping [start, end) regions with O(log n) membership tests."""

    def __init__(self, regions: list[tuple[int, int]]):
        self.regions = sorted(regions)
        self.starts = [a for a, _ in self.regions]

    def cuts(self, pos: int) -> bool:
        """True when a boundary at pos would fall strictly inside a region."""
        k = bisect.bisect_left(self.starts, pos) - 1
        return k >= 0 and pos < self.regions[k][1]

    def touches(self, start: int, end: int) -> bool:
        """True when [start, end) overlaps a region."""
        k = bisect.bisect_left(self.starts, end) - 1
        return k >= 0 and self.regions[k][1] > start


def _protected(solution: str) -> _Regions:
    """Regions a step boundary must not cut: math spans (with delimiters) and figures."""
    spans, skipped = _math_spans(solution)
    return _Regions(sorted({(s.outer_start, s.outer_end) for s in spans}) + list(skipped))


Segment = tuple[int, int]


def _segments(solution: str, cuts: list[int]) -> list[Segment]:
    """The stripped, non-empty pieces of solution between cut positions, as (start, end)."""
    bounds = [0, *sorted({c for c in cuts if 0 < c < len(solution)}), len(solution)]
    out = []
    for a, b in zip(bounds, bounds[1:]):
        a, b = _strip_span(solution, a, b)
        if a < b:
            out.append((a, b))
    return out


def _merge_short(solution: str, segs: list[Segment], min_chars: int, max_steps: int | None) -> list[Segment]:
    """Fold tiny pieces (e.g. "Q.E.D.") into a neighbour; then, while there are more than
    max_steps, merge the adjacent pair with the smallest combined length."""
    out: list[Segment] = []
    for a, b in segs:
        tiny = b - a < min_chars or not _ALNUM.search(solution, a, b)
        if out and tiny:
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    if len(out) > 1 and out[0][1] - out[0][0] < min_chars:
        out[:2] = [(out[0][0], out[1][1])]
    while max_steps is not None and len(out) > max(max_steps, 1):
        i = min(range(len(out) - 1), key=lambda k: (out[k + 1][1] - out[k][0], k))
        out[i : i + 2] = [(out[i][0], out[i + 1][1])]
    return out


# A unit boundary: a blank line, a line break, or a sentence end (. ? ! then a capital, digit,
# `$`, `\` or `(`), never after an abbreviation or an initial.
_UNIT_CUT = re.compile(
    r"\n[ \t]*\n\s*|\n\s*"
    r"|(?<=[.?!])(?<!\b[A-Za-z]\.)(?<!\be\.g\.)(?<!\bi\.e\.)(?<!\bFig\.)(?<!\bfig\.)(?<!\bProp\.)(?<!\bcf\.)"
    r"(?<!\betc\.)(?<!\bvs\.)(?<!\bEq\.)(?<!\bThm\.)(?<!\bNo\.)(?<!\bresp\.)(?<!\.\.\.)[ \t]+(?=[A-Z0-9$\\(])"
)
# `, therefore ...` between clauses that each compute something: each clause is its own move.
_CLAUSE_CUT = re.compile(r"(?<=,)[ \t]+(?=(?:therefore|thus|hence|so)\s)")
_FIGURE_ONLY = re.compile(
    r"^(?:<img_\d+>|\(?(?:see\s+)?(?:figure|fig\.?)\s*\d+[a-z]?\)?[.:]?|\[asy\].*\[/asy\]|!\[[^\]]*\]\([^)]*\))$",
    re.IGNORECASE | re.DOTALL,
)
_DANGLING_END = re.compile(
    r"(?:[:,=+\-]|\b(?:then|that|so|and|or|thus|hence|therefore|get|gets|obtain|gives?|yields?|have|has|where|is|are|"
    r"by|of|to|as|with|becomes?|equals?|because|since|namely|i\.e\.|follows)|\*\*:?\*\*|:\*\*)\s*$",
    re.IGNORECASE,
)
_CONTINUES = re.compile(r"^(?:[a-z]|\$\$|\\\[|\\begin\{|[,;.)]|=\s*\\)")
_MARKER_ONLY = re.compile(r"\s*(?:#{1,6}\s*)?(?:\*\*)?(?:\d{1,2}|[a-z]|[ivx]{1,4})[.)]")
_MATHY = re.compile(r"[$\d=]|\\[(\[]")
_HEADING = re.compile(r"\W*(?:case|part|step)\s*\w+\W*", re.IGNORECASE)
_LIST_ITEM = re.compile(r"(?:#{1,6}\s*)?(?:\*\*)?(?:step\s*\d+|\d{1,2}[.)]|[-*]\s)(?=[\s:*])", re.IGNORECASE)
_CONDITIONAL = frozenset({"when", "if", "for", "from", "case", "in", "on"})


def _units(solution: str, protected: _Regions) -> tuple[list[Segment], set[int]]:
    """The solution cut at every line and sentence boundary outside math and figures (never right
    after a list marker such as `1.`); also the starts of `, therefore` clauses cut out of a unit."""
    cuts = []
    for m in _UNIT_CUT.finditer(solution):
        if protected.cuts(m.start()):
            continue
        if solution[m.start()] != "\n" and _MARKER_ONLY.fullmatch(solution, solution.rfind("\n", 0, m.start()) + 1, m.start()):
            continue  # `1. Add the numbers.`: the marker is not a sentence
        cuts.append(m.end())
    out: list[Segment] = []
    clauses: set[int] = set()
    for a, b in _segments(solution, cuts):
        inner = [m.end() for m in _CLAUSE_CUT.finditer(solution, a, b) if not protected.cuts(m.start())]
        if not inner:
            out.append((a, b))
            continue
        pieces = _segments(solution[:b], [a, *inner])
        if len(pieces) > 1 and all(y - x >= 30 and "=" in solution[x:y] for x, y in pieces):
            out += [p for p in pieces if p[0] >= a]
            clauses.update(p[0] for p in pieces[1:])
        else:
            out.append((a, b))
    return out, clauses


_GAP_NOISE = re.compile(r"[\s$]|\\[()]")
_DIGIT = re.compile(r"\d")
_DIGITS = re.compile(r"\d+")
_ALNUM = re.compile(r"[A-Za-z0-9]")
_LHS_WORK = re.compile(r"[-+*/×÷]|\s x\s|[a-z]")
_INLINE_MATH = re.compile(r"\$[^$]*\$|\\\(.*?\\\)")
_TEMPLATE_WORD = re.compile(r"[a-zN]+|M")


def _template(text: str) -> tuple[str, ...]:
    words = _INLINE_MATH.sub(" M ", text[:160].lower())
    return tuple(_TEMPLATE_WORD.findall(_DIGITS.sub("N", words))[:2])


def _results(text: str) -> set[str]:
    """Numbers a step derives (right of its last `=`), to tell dependent steps from parallel ones."""
    return set(re.findall(r"=\s*\$?(-?\d+(?:\.\d+)?)", text))


def split_steps(solution: str, config: HeuristicConfig = HeuristicConfig(), min_steps: int = 3) -> list[str]:
    """Split a solution into ordered, verbatim steps, one logical move each.

    Units are lines and sentences (and `, therefore` clauses after a computation), never cut
    inside math or a figure. A unit joins the previous one when it continues it (starts lowercase
    or with display math, or the previous one dangles: ends with `:`, `=`, "we get", a heading);
    figure-only units (`<img_1>`, `Figure 2`) are dropped; parallel steps that could be swapped
    (`When x < 0 ...` / `When x > 0 ...`, neither using the other's result) are merged so the
    reference order is the only right one. `min_steps` is kept for the interface: a solution
    with fewer moves simply has fewer steps (the task's `min_steps` then skips it).
    """
    protected = _protected(solution)
    units, clauses = _units(solution, protected)
    units = [u for u in units if not _FIGURE_ONLY.match(solution[u[0] : u[1]].strip())]
    steps: list[Segment] = []
    for a, b in units:
        text = solution[a:b]
        if steps:
            prev = solution[steps[-1][0] : steps[-1][1]]
            heading = steps[-1][1] - steps[-1][0] < config.min_step_chars or bool(_HEADING.fullmatch(prev))
            line_start = solution.rfind("\n", 0, a) + 1
            indented = a - line_start >= 2
            item = _LIST_ITEM.match(text)
            if a in clauses:
                continues = heading  # `, therefore ...` after a computation: its own move
            elif item and indented:
                continues = True  # a nested list item belongs to the step it sits in
            elif item and (len(text) >= 50 or "=" in text or "**" in text):
                continues = heading  # a numbered step starts a step, even after "as follows:"
            elif item:
                continues = True  # a short plain item (`2. Divide the sum.`) is part of a plan
            else:
                same_paragraph = "\n" not in solution[steps[-1][1] : a]
                prose = same_paragraph and not _MATHY.search(prev)  # motivation, not yet a move
                continues = bool(_CONTINUES.match(text) or _DANGLING_END.search(prev[-40:]) or heading or prose)
            if continues:
                steps[-1] = (steps[-1][0], b)
                continue
        steps.append((a, b))
    merged: list[Segment] = []
    for a, b in steps:
        if merged:
            pa, pb = merged[-1]
            prev, text = solution[pa:pb], solution[a:b]
            tp, tt = _template(prev), _template(text)
            if tp and tp == tt and tp[0] in _CONDITIONAL and not (_results(prev) & set(re.findall(r"-?\d+(?:\.\d+)?", text))):
                merged[-1] = (pa, b)
                continue
        merged.append((a, b))
    merged = _merge_short(solution, merged, config.min_step_chars, config.max_steps)
    return [solution[a:b] for a, b in merged]


class HeuristicAnnotator(Annotator):
    """Offline, free, deterministic annotation; the build's default."""

    name = "heuristic"

    def __init__(self, config: HeuristicConfig = HeuristicConfig()):
        self.config = config

    def annotate_one(self, traj: Trajectory) -> Trajectory | Drop:
        if not traj.solution.strip():
            return Drop(traj.id, "empty_solution")
        return replace(
            traj,
            formulas=extract_formulas(traj.solution, self.config, traj.problem),
            steps=split_steps(traj.solution, self.config),
        )

    def annotate(self, trajectories: list[Trajectory]) -> list[Trajectory | Drop]:
        return [self.annotate_one(t) for t in trajectories]
