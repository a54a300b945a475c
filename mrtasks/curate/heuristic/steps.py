"""Steps: a solution split into ordered, verbatim steps, one logical move each (`split_steps`).

Policy: units are lines and sentences (and `, therefore` clauses between computations), never cut
inside math or figures (`spans.protected_regions`), joined where a piece continues the previous
one; figure-only pieces are dropped; interchangeable parallel cases are merged, so the reference
order is the only right one; tiny pieces are folded into a neighbour and at most `max_steps` remain.
"""

from __future__ import annotations

import re

from mrtasks.curate.heuristic.config import HeuristicConfig
from mrtasks.curate.heuristic.spans import Regions, protected_regions, strip_span

Segment = tuple[int, int]


def _segments(solution: str, cuts: list[int]) -> list[Segment]:
    """The stripped, non-empty pieces of solution between cut positions, as (start, end)."""
    bounds = [0, *sorted({c for c in cuts if 0 < c < len(solution)}), len(solution)]
    out = []
    for a, b in zip(bounds, bounds[1:]):
        a, b = strip_span(solution, a, b)
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


def _units(solution: str, protected: Regions) -> tuple[list[Segment], set[int]]:
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


_DIGITS = re.compile(r"\d+")
_ALNUM = re.compile(r"[A-Za-z0-9]")
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
    protected = protected_regions(solution)
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
