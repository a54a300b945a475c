"""Candidates: every formula-like span of a solution, cleaned, classified and merged (`find_candidates`).

Policy: math spans (`spans`) trimmed of punctuation, `\\tag{}`, connective text at either end
(`\\text{ and } x=1`, `x=1 \\text{. }`, `x=1 \\quad (\\text{since } ...)`); a continuation row
`&= x` gives its right-hand side `x`, and so does an aligned row `A &= x` (the `&` is alignment
residue, never part of a mask); a relation split across adjacent spans is merged into one candidate that
stays context (`split_math`: a mask would show the `$ $` break inside it); the content of
a `\\boxed{}` is the candidate (`answers`). Plain-text arithmetic (`48/2 = 24`) and theorem names
of the checker's lexicon (`mrtasks.mathcheck.theorems.THEOREM_ALIASES`; abbreviations such as
`SAS` only in capitals) count too, and so do results named after people that the lexicon lacks (`Jacobi's
theorem`, `Sylvester–Gallai theorem`), except a reference to the induction hypothesis (context); never the inside of
figures or code. Each candidate carries
its junk reason (`junk`, or a bookkeeping role of `context`) and its role. Candidates never overlap.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from mrtasks.curate.heuristic.answers import ANSWER_OK, boxed_spans
from mrtasks.curate.heuristic.config import HeuristicConfig
from mrtasks.curate.heuristic.context import BOOKKEEPING, role
from mrtasks.curate.heuristic.junk import junk_reason
from mrtasks.curate.heuristic.spans import LEADING_REL, MathSpan, Regions, alignment_cut, math_spans, row_spans, strip_span
from mrtasks.mathcheck.theorems import THEOREM_ALIASES, canonical_theorem

_TRAILING_NOISE = re.compile(
    r"(?:\s|[.,;:]|\\\\|~|\\(?:[,;:! ]|quad|qquad|nonumber|notag)(?![A-Za-z])|\\(?:tag|label)\*?\{[^{}]*\})+$"
)
_LEADING_NOISE = re.compile(r"(?:\s|&|\\(?:[,;:! ]|quad|qquad)(?![A-Za-z]))+")
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
_GAP_NOISE = re.compile(r"[\s$]|\\[()]")
_GAP_LETTER = re.compile(r"[A-Za-z]")
_BANG_AFTER = re.compile(r"[ \t]?!(?!=)")
_CONNECTIVE = r"(?:and|or|so|then|thus|hence|i\.e\.|where|with|since|because|if|for|as|but|also|note|similarly)"
_TEXT_PREFIX = re.compile(
    rf"(?:\s|\\(?:q?quad|[,;:! ])(?![A-Za-z]))*\\(?:text|mbox|textrm|mathrm)\s*\{{\s*(?:{_CONNECTIVE}\b[^{{}}]*|[\s.,;:]*)\}}"
    r"(?:\s|\\(?:q?quad|[,;:! ])(?![A-Za-z]))*",
    re.IGNORECASE,
)
_TEXT_SUFFIX = re.compile(
    rf"(?:\s|\\(?:q?quad|[,;:! ])(?![A-Za-z]))*(?:\\(?:text|mbox|textrm|mathrm)\s*\{{\s*(?:{_CONNECTIVE}\b[^{{}}]*|[\s.,;:]*)\}}\s*$"
    rf"|(?:\\q?quad(?![A-Za-z])\s*)+(?:\\left)?\(?\s*\\(?:text|mbox)\s*\{{[^{{}}]*\}}.*$"
    rf"|,\s*\\(?:text|mbox)\s*\{{\s*(?:by|since|because|where|given|using|from|as)\b[^{{}}]*\}}.*$"
    rf"|\\(?:text|mbox)\s*\{{\s*\([^{{}}]*\)\s*\}}\s*$)",
    re.IGNORECASE | re.DOTALL,
)
_TEXT_CMD = re.compile(r"\\(?:text|mbox|textrm|mathrm)\s*\{")
_DIGIT = re.compile(r"\d")
_LHS_WORK = re.compile(r"[-+*/×÷]|\s x\s|[a-z]")


@dataclass(frozen=True)
class Candidate:
    """A formula candidate: `solution[start:end]`; `kind` is `math`, `plain` (arithmetic in prose),
    `theorem` (a lexicon name) or `answer` (the content of a `\\\\boxed{}`, or a formula holding one);
    `junk` is the rejection reason (None: maskable); `role` is `context.role` (math and plain only)."""

    start: int
    end: int
    kind: str
    display: bool
    junk: str | None
    role: str | None = None


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
    if text.endswith("\\right", a, b) and text.startswith(".", b):
        b += 1  # `\\right.` closes a `\\left\\{`: its dot is a delimiter, not punctuation
    m = _LEADING_NOISE.match(text, a, b)
    a = m.end() if m else a
    if _TEXT_CMD.search(text, a, b):  # connective text at either end: `\\text{ and } x=1`, `x=1 \\text{. }`
        m = _TEXT_PREFIX.match(text, a, b)
        if m and m.end() < b:
            a = m.end()
        m = _TEXT_SUFFIX.search(text, a, b)
        if m and m.start() > a and _depth(text, a, m.start()) == 0:
            b = m.start()
            while b > a and text[b - 1] in " \t\n\r.,;:~":
                b -= 1
    if rhs:
        m = LEADING_REL.match(text, a, b)
        if m:
            a = m.end()
            m = _LEADING_NOISE.match(text, a, b)
            a = m.end() if m else a
    return strip_span(text, a, b)


def _depth(text: str, a: int, b: int) -> int:
    """Brace depth at b, counted from a."""
    d, i = 0, a
    while i < b:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        d += (c == "{") - (c == "}")
        i += 1
    return d


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
            _ALIASES_BY_WORD.setdefault(first, []).append((needle, upper, re.compile(r"(?<![\w\-–])" + body + r"(?![\w\-–])")))
    found: list[tuple[int, int]] = []
    lowered = text.lower()
    for word in sorted(set(_WORD.findall(lowered)) & _ALIASES_BY_WORD.keys()):
        for needle, upper, pattern in _ALIASES_BY_WORD[word]:
            if needle in (text if upper else lowered):
                found += [(m.start(), m.end()) for m in pattern.finditer(text)]
    return found


_WORD = re.compile(r"[a-z0-9]+")
_PERSON = r"[A-Z][a-z\u00df-\u017f]+(?:[-–][A-Z][a-z\u00df-\u017f]+)*"
_NAMED_RESULT = re.compile(
    rf"(?<![\w\-–])(?:{_PERSON}(?:['’]s|s['’]|['’])|{_PERSON}[-–]{_PERSON})\s+(?:[a-z]+\s+){{0,2}}?"
    r"(?:theorem|lemma|inequality|identity|criterion|conjecture|postulate|principle)(?![\w\-–])"
)
"""A result named after people, outside the lexicon: `Jacobi's theorem`, `Steiner's lemma`, `Sylvester–Gallai theorem`."""


def _named_results(text: str, lexicon: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Spans of results named after people (`_NAMED_RESULT`) that no lexicon name (`lexicon`, `_theorem_matches`)
    overlaps, so a standard result outside the lexicon is still offered as a theorem name."""
    found = [(m.start(), m.end()) for m in _NAMED_RESULT.finditer(text)]
    if not found:
        return []
    known = Regions(sorted(lexicon))
    return [(a, b) for a, b in found if not known.touches(a, b)]
HYPOTHESIS_NAMES = ("induction hypothesis",)
"""Lexicon names that point back at an assumption of the proof in progress (`by the induction hypothesis`), not at a
result it rests on: context (`hypothesis_reference`). The method itself (`induction`) stays a candidate."""


def find_candidates(solution: str, config: HeuristicConfig = HeuristicConfig(), problem: str = "") -> list[Candidate]:
    """Every formula candidate of a solution in text order, with its junk reason.

    Math spans (align rows and the rows of an aligned block inside `\\\\[..\\\\]` separately) are
    trimmed of punctuation, `\\\\tag{}` and a leading relation; a relation split across adjacent
    spans (`$A=$ $\\\\sqrt{2}$`) is merged into one candidate; the content `x` of a `\\\\boxed{x}` is
    the candidate of a span holding a box (the final answer: masking it hides the answer).
    Plain-text arithmetic (`48/2 = 24`) and theorem names of the lexicon outside math count too.
    Candidates never overlap.
    """
    spans, skipped = math_spans(solution)
    boxes = boxed_spans(solution, 0, len(solution))
    final = formula_key(solution[boxes[-1][0] : boxes[-1][1]]) if boxes else None
    rows: list[MathSpan] = []
    for s in spans:
        rows += row_spans(solution, s) if s.display or "\\begin{" in solution[s.start : s.end] else [s]
    out: list[Candidate] = []
    for s in rows:
        a, b = _trim(solution, s.start, s.end)
        if a >= b:
            continue
        if "&" in solution[a:b] and (cut := alignment_cut(solution, a, b)) is not None:
            a, b = _trim(solution, cut, b)  # `A &= B`: the row's result `B`; the `&` stays outside
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
                if formula_key(inner) == final:
                    out.append(Candidate(ba, bb, "answer", s.display, None if junk in ANSWER_OK else junk))
                else:
                    out.append(Candidate(ba, bb, "math", s.display, junk))
            continue
        junk = junk_reason(text)
        if junk is None and "!" in solution[s.outer_end : s.outer_end + 2] and not s.display and _BANG_AFTER.match(solution, s.outer_end):
            junk = "garbled_brackets"  # `$p^2 \\nmid p$ !`: the formula goes on outside its math (garbled)
        # A relation split across adjacent spans: `$A C=2 x+c=$ $x(2+\frac{d}{d+7})$`.
        if out and out[-1].junk in ("trailing_operator", "unbalanced_braces") and out[-1].kind == "math":
            prev = out[-1]
            gap = solution[prev.end : a]
            if len(gap) <= 8 and not _GAP_NOISE.sub("", gap):
                joined = solution[prev.start : prev.end] + " " + text
                if junk_reason(joined) is None:
                    # one formula, kept whole as context: its mask would show the break `=$ $` inside it
                    out[-1] = Candidate(prev.start, b, "math", prev.display or s.display, "split_math")
                    continue
            elif len(gap) <= 8 and not _GAP_LETTER.search(gap):
                junk = junk or "garbled_brackets"  # `$(p-$ 1) $q=pqr+\\dots$`: the rest of a cut formula
        out.append(Candidate(a, b, "math", s.display, junk))
    covered = Regions(sorted({(s.outer_start, s.outer_end) for s in spans}) + list(skipped))
    extra: list[Candidate] = []
    if config.plain_equations and _free_equals(solution, covered):
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
        lexicon = _theorem_matches(solution)
        for ta, tb in lexicon + _named_results(solution, lexicon):
            if not covered.touches(ta, tb):
                reason = "hypothesis_reference" if canonical_theorem(solution[ta:tb]) in HYPOTHESIS_NAMES else None
                extra.append(Candidate(ta, tb, "theorem", False, reason))
    if extra:
        taken, last_end = Regions([(c.start, c.end) for c in out]), -1
        for c in sorted(extra, key=lambda c: (c.start, -c.end)):
            if c.start >= last_end and not taken.touches(c.start, c.end):
                out.append(c)
                last_end = c.end
        out.sort(key=lambda c: c.start)
    return [_with_role(solution, c, problem) for c in out]


def _free_equals(text: str, covered: Regions) -> bool:
    """Is some `=` outside math? A plain equation holds one, so without it there is none to find."""
    i = text.find("=")
    while i >= 0:
        if not covered.touches(i, i + 1):
            return True
        i = text.find("=", i + 1)
    return False


def _with_role(solution: str, c: Candidate, problem: str) -> Candidate:
    """The candidate with its `context.role`; a bookkeeping role is its junk reason."""
    if c.kind not in ("math", "plain") or c.junk is not None:
        return c
    r = role(solution, c.start, c.end, problem)
    if r is None:
        return c
    return replace(c, junk=r if r in BOOKKEEPING else None, role=r)


def formula_key(text: str) -> str:
    return "".join(text.replace("$", "").split())
