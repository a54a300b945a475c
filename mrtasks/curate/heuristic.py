"""The offline, deterministic annotator: formulas from LaTeX math spans, steps from text layout.

Formulas are the contents of math delimiters (`$..$`, `$$..$$`, `\\(..\\)`, `\\[..\\]`, and
`align`/`equation`/`gather`/... environments, one formula per `\\\\`-separated row), never the
inside of `[asy]` or TikZ figures or code blocks. Trivial spans (a lone symbol such as `$x$` or
`$f_1$`) are not maskable, nor is a formula whose exact text occurs twice, since masking one
copy would leave the answer visible in the other. Optionally, plain-text arithmetic such as GSM8K's
`48/2 = 24` counts too. Formulas are ranked by an importance score: relations and the boxed
answer first, then longer and displayed formulas.

Steps come from, in order of preference: numbered steps (`1.`, `Step 2:`, `**Step 3**`),
paragraphs (blank lines, merging continuations such as a display equation after "Then"), lines,
then sentences, so that a one-paragraph solution still splits. Steps are verbatim, stripped,
in-order pieces of the solution that together cover all of it.
"""

from __future__ import annotations

import bisect
import math
import re
from collections import Counter
from dataclasses import dataclass, replace

from mrtasks.curate.base import Annotator, Drop
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
_TRIVIAL = re.compile(r"^\\?[A-Za-z]+(?:_\{?\w{1,3}\}?)?(?:\^\{?[\w*]\}?)?'*$|^[\W_]*$")
_PLAIN_EQUATION = re.compile(
    r"(?<![\w.$])\$?\(?\d[\d,]*(?:\.\d+)?%?\)?"  # first operand
    r"(?:\s*[-+*/x×÷]\s*\$?\(?\d[\d,]*(?:\.\d+)?%?\)?)+"  # at least one operator and operand
    r"\s*=\s*\$?-?\d[\d,]*(?:\.\d+)?%?"  # = result
)
_NUMBERED_STEP = re.compile(
    r"^[ \t]*(?:#{1,6}[ \t]*)?(?:\*\*)?(?:Step[ \t]*(\d+)|(\d+)[.)])(?=[\s:*])", re.MULTILINE | re.IGNORECASE
)
_BLANK_LINES = re.compile(r"\n[ \t]*\n\s*")
_NEWLINE = re.compile(r"\n\s*")
# A sentence ends at . ? ! followed by space and a capital letter, digit, `$` or `\`.
_SENTENCE_END = re.compile(r"(?<=[.?!])(?<!\b[A-Za-z]\.)(?<!\be\.g\.)(?<!\bi\.e\.)\s+(?=[A-Z0-9$\\(])")
_DANGLING = re.compile(
    r"(?:[:,=+\-]|\b(?:then|that|so|and|or|thus|hence|therefore|get|gives?|have|where|is|are|by|of|to))\s*$",
    re.IGNORECASE,
)
_ENDS_SENTENCE = re.compile(r"[.?!)\]}$]\s*$|\\\]\s*$|\\end\{[^}]*\}\s*$")


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


def importance(text: str, display: bool) -> float:
    """A score for ranking formulas: relations, the boxed answer, length and display count."""
    score = math.log1p(len(text))
    if _RELATION.search(text):
        score += 3.0
    if "\\boxed" in text:
        score += 2.0
    if display:
        score += 1.0
    if re.search(r"\\(?:frac|sqrt|sum|int|prod|lim|binom|log|sin|cos|tan)", text):
        score += 0.5
    return score


def extract_formulas(solution: str, config: HeuristicConfig = HeuristicConfig()) -> list[Formula]:
    """The maskable formulas of a solution, most important first (ties: earlier first)."""
    spans, skipped = find_math_spans(solution)
    candidates: list[tuple[int, int, bool]] = []
    for s in spans:
        start, end = _strip_span(solution, s.start, s.end)
        candidates.append((start, end, s.display))
    if config.plain_equations:
        covered = _Regions(sorted({(s.outer_start, s.outer_end) for s in spans}) + skipped)
        for m in _PLAIN_EQUATION.finditer(solution):
            if not covered.touches(m.start(), m.end()):
                candidates.append((m.start(), m.end(), False))
    keys = [" ".join(solution[a:b].split()) for a, b, _ in candidates]
    repeated = {k for k, n in Counter(keys).items() if n > 1}
    scored: list[tuple[float, int, Formula]] = []
    for (start, end, display), key in sorted(zip(candidates, keys)):
        text = solution[start:end]
        if key in repeated:
            continue
        if not (config.min_formula_chars <= len(text) <= config.max_formula_chars):
            continue
        if _TRIVIAL.match(key):
            continue
        scored.append((importance(text, display), start, Formula(text, start, end)))
    scored.sort(key=lambda t: (-t[0], t[1]))
    return [f for _, _, f in scored]


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
    spans, skipped = find_math_spans(solution)
    return _Regions(sorted({(s.outer_start, s.outer_end) for s in spans}) + skipped)


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


def _cuts(pattern: re.Pattern[str], solution: str, protected: _Regions, start: int = 0) -> list[int]:
    return [m.start() for m in pattern.finditer(solution, start) if not protected.cuts(m.start())]


def _merge_continuations(solution: str, segs: list[Segment], ends: re.Pattern[str], complete: bool) -> list[Segment]:
    """Join a piece to the previous one when it continues it: it starts with display math or a
    lowercase word, or the previous piece stops mid-sentence (as "Then" or ":" before a display).

    "Mid-sentence" is `ends` not matching the previous piece when `complete` (paragraphs must end
    a sentence), or `ends` matching it (lines may lack a full stop but must not dangle)."""
    out: list[Segment] = []
    for a, b in segs:
        text = solution[a:b]
        continues = text[:1].islower() or text.startswith(("$$", "\\[", "\\begin{"))
        dangling = out and bool(ends.search(solution[out[-1][0] : out[-1][1]])) != complete
        if out and (continues or dangling):
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out


def _numbered_cuts(solution: str, protected: _Regions) -> list[int] | None:
    """Cuts at line-initial step numbers counting up 1, 2, 3, ... (None when there are < 2)."""
    cuts, expected = [], None
    for m in _NUMBERED_STEP.finditer(solution):
        if protected.cuts(m.start()):
            continue
        k = int(m.group(1) or m.group(2))
        if expected is None and k in (0, 1):
            expected = k
        if expected is not None and k == expected:  # nested lists restart at 1 and are skipped
            cuts.append(m.start())
            expected += 1
    if len(cuts) < 2:
        return None
    # A conclusion after the last item, set off by a blank line, is its own step.
    tail = _cuts(_BLANK_LINES, solution, protected, cuts[-1])
    if tail:
        after = solution[tail[-1] :].lstrip()
        if after and not after.startswith(("-", "*", "$$", "\\[", "\\begin")) and not after[:1].islower():
            cuts.append(tail[-1])
    return cuts


def _merge_short(solution: str, segs: list[Segment], min_chars: int, max_steps: int | None) -> list[Segment]:
    """Fold tiny pieces (e.g. "Q.E.D.") into a neighbour; then, while there are more than
    max_steps, merge the adjacent pair with the smallest combined length."""
    out: list[Segment] = []
    for a, b in segs:
        tiny = b - a < min_chars or not re.search(r"[A-Za-z0-9]", solution[a:b])
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


def split_steps(solution: str, config: HeuristicConfig = HeuristicConfig(), min_steps: int = 3) -> list[str]:
    """Split a solution into ordered, verbatim steps that together cover it.

    Strategies, most structured first: numbered steps, paragraphs, lines, sentences; the first
    that gives at least min_steps steps wins (else the one with the most steps).
    """
    protected = _protected(solution)
    numbered = _numbered_cuts(solution, protected)
    strategies = [
        lambda: _segments(solution, numbered) if numbered else [],
        lambda: _merge_continuations(
            solution, _segments(solution, _cuts(_BLANK_LINES, solution, protected)), _ENDS_SENTENCE, True
        ),
        lambda: _merge_continuations(solution, _segments(solution, _cuts(_NEWLINE, solution, protected)), _DANGLING, False),
        lambda: _segments(solution, _cuts(_SENTENCE_END, solution, protected)),
    ]
    best = _segments(solution, [])
    for strategy in strategies:
        segs = _merge_short(solution, strategy(), config.min_step_chars, config.max_steps)
        if len(segs) > len(best):
            best = segs
        if len(best) >= min_steps:
            break
    return [solution[a:b] for a, b in best]


class HeuristicAnnotator(Annotator):
    """Offline, free, deterministic annotation; the build's default."""

    name = "heuristic"

    def __init__(self, config: HeuristicConfig = HeuristicConfig()):
        self.config = config

    def annotate_one(self, traj: Trajectory) -> Trajectory | Drop:
        if not traj.solution.strip():
            return Drop(traj.id, "empty_solution")
        return replace(
            traj, formulas=extract_formulas(traj.solution, self.config), steps=split_steps(traj.solution, self.config)
        )

    def annotate(self, trajectories: list[Trajectory]) -> list[Trajectory | Drop]:
        return [self.annotate_one(t) for t in trajectories]
