"""Where the math is: a single left-to-right scan of a solution for math spans and figure/code regions.

Policy: the contents of `$..$`, `$$..$$`, `\\(..\\)`, `\\[..\\]` and math environments are math
spans; an `align`/`gather`/... environment gives one span per row (split on top-level `\\\\`), and
so does an `aligned`/`split`/`gathered` block that fills a display (`row_spans`). An inline `$`
follows pandoc's rules (`$12 and $15` is two prices). Figures and code (`[asy]`, TikZ,
`verbatim`, fenced code) are skipped, never scanned inside. Unclosed delimiters are ignored, so
malformed LaTeX never raises. Math spans and figures are the regions a step boundary must not
cut (`protected_regions`).
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass

# Environments whose body is display math; rows are split on top-level `\\`.
ROW_ENVS = frozenset(
    {"align", "align*", "aligned", "alignat", "alignat*", "gather", "gather*", "eqnarray",
     "eqnarray*", "multline", "multline*", "flalign", "flalign*"}
)
MATH_ENVS = ROW_ENVS | {"equation", "equation*", "displaymath", "math"}
# Environments that are figures or code: never formulas, never scanned inside.
SKIP_ENVS = frozenset({"tikzpicture", "asy", "verbatim", "lstlisting", "minted", "comment"})


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


_SPECIAL = re.compile(r"[\\\[`$]")


@functools.lru_cache(maxsize=8)
def math_spans(text: str) -> tuple[tuple[MathSpan, ...], tuple[tuple[int, int], ...]]:
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
                        spans += split_rows(text, k + 1, j, i, j + len(end_tag))
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
        nxt = _SPECIAL.search(text, i + 1)  # nothing else opens or escapes anything
        i = nxt.start() if nxt else n
    return spans, skipped


def split_rows(text: str, start: int, end: int, outer_start: int, outer_end: int) -> list[MathSpan]:
    """Split an align-like body on top-level `\\\\` (not inside braces) into one span per row."""
    rows, row_start = [], start
    for i, mark in top_level_marks(text, start, end):
        if mark == "&" or i < row_start:
            continue
        rows.append(MathSpan(row_start, i, True, outer_start, outer_end))
        row_start = i + 2
        if text[row_start : row_start + 1] == "[":  # `\\[2pt]` spacing argument
            k = text.find("]", row_start, end)
            row_start = k + 1 if k >= 0 else row_start
    rows.append(MathSpan(row_start, end, True, outer_start, outer_end))
    return rows


def top_level_marks(text: str, start: int = 0, end: int | None = None) -> Iterator[tuple[int, str]]:
    """(position, mark) of each alignment `&` and row break `\\\\` outside every brace and nested
    environment of `text[start:end]`."""
    end = len(text) if end is None else end
    depth, i = 0, start
    while i < end:
        c = text[i]
        if c == "\\":
            if text.startswith("\\begin{", i):
                depth += 1
            elif text.startswith("\\end{", i):
                depth -= 1
            elif text[i + 1 : i + 2] == "\\" and depth == 0:
                yield i, "\\\\"
            i += 2
            continue
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
        elif c == "&" and depth == 0:
            yield i, "&"
        i += 1


INLINE_MATH = re.compile(r"\$[^$]*\$|\\\(.*?\\\)")
"""An inline formula, `$...$` or `\\(...\\)`, for reading the words around or between formulas."""
LEADING_REL = re.compile(
    r"(?:=|<|>|\\(?:le|ge|leq|geq|leqslant|geqslant|neq|ne|equiv|approx|sim|simeq|cong|implies|iff|Rightarrow|"
    r"Longrightarrow|Leftrightarrow|Longleftrightarrow|lt|gt)(?![A-Za-z]))"
)
"""The relation that opens a continuation row (`= 2x`, `\\le 2\\sqrt{xy}`); not `\\mid`, an absolute-value bar in some
sources (`\\mid A \\cup B \\mid = ...`)."""
ALIGN_REL = re.compile(
    r"\s*(?:=|<|>|\\(?:le|ge|leq|geq|leqslant|geqslant|neq|ne|equiv|approx|sim|simeq|cong|lt|gt|implies|iff|"
    r"Rightarrow|Longrightarrow|Leftrightarrow|subset|subseteq|mid|to|mapsto)(?![A-Za-z]))"
)


def alignment_cut(text: str, a: int, b: int) -> int | None:
    """For a row `A & REL B` (or `A REL & B`) of `text[a:b]` with its only `&` at the top level, the index just
    after the `&` (the row's result `B`, after its relation, follows); None for any other span."""
    amps = [i for i, mark in top_level_marks(text, a, b) if mark == "&"]
    if len(amps) != 1:
        return None
    found = amps[0]
    if ALIGN_REL.match(text, found + 1, b):
        return found + 1
    k = found
    while k > a and text[k - 1] in " \t":
        k -= 1
    return found + 1 if re.search(r"(?:=|<|>|\\[A-Za-z]+)$", text[max(a, k - 24) : k]) else None


def strip_span(text: str, start: int, end: int) -> tuple[int, int]:
    """[start, end) narrowed past whitespace at both ends."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


# Environments nested in display math whose rows are separate candidates (a derivation).
INNER_ROW_ENVS = ("aligned", "alignedat", "split", "gathered", "align", "align*", "gather", "gather*",
                  "eqnarray", "eqnarray*")
_INNER_ENV = re.compile(r"\\begin\{(" + "|".join(re.escape(e) for e in INNER_ROW_ENVS) + r")\}")
_TAG = re.compile(r"\\(?:tag|label)\*?\{[^{}]*\}")


def row_spans(text: str, s: MathSpan) -> list[MathSpan]:
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
    return split_rows(text, body_start, j, s.outer_start, s.outer_end)


class Regions:
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


def protected_regions(solution: str) -> Regions:
    """Regions a step boundary must not cut: math spans (with delimiters) and figures."""
    spans, skipped = math_spans(solution)
    return Regions(sorted({(s.outer_start, s.outer_end) for s in spans}) + list(skipped))
