"""Answer text normalization: one canonical string for the common ways of writing one answer.

Policy (each rule has positive and negative cases in tests/data/equivalence_pairs.jsonl):

- First, in both modes, the notations of `notation` (Unicode, plain function names, Python
  powers, e-notation, repeating decimals, mixed numbers with a space, base numerals, degrees in
  a trigonometric argument) are rewritten into LaTeX.
- Both modes (`normalize`): math delimiters and whole-answer `\\text{}` are dropped, `\\dfrac`/
  `\\tfrac`/`\\cfrac` are `\\frac`, spacing and sizing commands (`\\,`, `\\quad`, `\\left`) go,
  `\\leqslant`/`\\leqq` are `\\leq`, `\\approx`/`\\simeq` are `≈`, degrees, `\\%` and `\\$` are
  dropped, `\\cdot`/`\\times` are `*`, primes are `'`. Thousands separators (`48,\\!215`,
  `2{,}000`, `2\\,000`, `2 000`, `1,234`) are dropped. "or"/"and" between answers are commas.
  A `\\text{}` of two or more words is an annotation and goes; a unit in `\\text{}` goes.
- Final answers only (`final_text`, before `normalize`): several `\\boxed{}` are collected into
  a list; "the answer is" and `Answer:` prose, a one-sentence answer's stated value
  (`The length is [12].` is 12, `prose`), percent words (`35 percent`, `pct`) and trailing
  unit words (`\\frac{2}{5} \\textbf{liters}`, `6 m`) are dropped. Formulas keep all of these
  (`6 m` in a formula is 6*m).
- Choice letters (`choice_letter`): a prediction starting with a letter A-E (`D. y = 12`, `(D)`,
  `\\text{D}`) names that choice.
"""

from __future__ import annotations

import re

from mrtasks.mathcheck import notation, prose
from mrtasks.mathcheck.cache import short_cache
from mrtasks.mathcheck.latex import collect_boxes, strip_wrappers
from mrtasks.mathcheck.markup import canonical_scripts, strip_markup

_UNITS = (
    "units?|sq\\.?\\s*units?|square\\s+units?|cm|centimeters?|mm|km|meters?|m|inches|inch|in|feet|foot|ft|"
    "yards?|miles?|mph|seconds?|sec|s|minutes?|min|hours?|hrs?|days?|weeks?|months?|years?|degrees?|"
    "dollars?|cents?|points?|people|students|ways|marbles|pounds?|lbs?|ounces?|oz|grams?|g|kg|liters?|"
    "gallons?|calories"
)
_TEXT_UNIT = re.compile(rf"\\(?:text|mbox|mathrm|textrm)\s*\{{\s*(?:{_UNITS})\s*\}}(?:\^\{{?[23]\}}?)?")
_PROSE_TEXT = re.compile(r"\\(?:text|mbox|textrm|textit)\s*\{([^{}]*)\}")
_TWO_WORDS = re.compile(r"(?<![A-Za-z])[A-Za-z]{2,}+\s+[A-Za-z(]")
"""A `\\text{}` of two or more words is an annotation (`\\quad \\text{(squaring both sides)}`).
Linear: the words are looked for inside each `\\text{}` body, from word starts only (a lazy
pattern over the body backtracked quadratically: 0.7 s for one 4 KB `\\text{aaa...}`)."""


def _drop_prose(m: re.Match) -> str:
    return "" if _TWO_WORDS.search(m.group(1)) else m.group(0)
_TEXT_TRAILING = re.compile(r"\\(?:text|mbox)\s*\{\s[^{}]*\}(?:\^\{?[23]\}?)?$")  # `5\text{ cm}`
_PLAIN_UNIT = re.compile(rf"(?<=[\d}}])\s+(?:{_UNITS})(?:\^\{{?[23]\}}?)?\s*$")
_TEXT_CMD = re.compile(
    r"\\(?:text|textbf|textrm|textit|textnormal|mathrm|mathbf|mathit|mathsf|mbox|operatorname|texttt|boldsymbol)"
    r"\s*\{([^{}]*)\}"
)
_WORD_SEP = re.compile(r"\\(?:text|mathrm|textbf|mbox)\s*\{\s*(?:or|and)\s*\}|\s+(?:or|and)\s+|(?<=[\s$)}])(?:or|and)(?=[\s$(\\])")
_SPACING = re.compile(r"(?<!\\)\\(?:[,;:! ]|quad|qquad|displaystyle|textstyle|limits|nolimits)(?![a-zA-Z])|~")
_SIZING = re.compile(r"\\(?:left|right|bigl|bigr|Bigl|Bigr|biggl|biggr|big|Big|bigg|Bigg)(?![a-zA-Z])\.?")
_DEGREES = re.compile(r"\^\s*(?:\{\s*\\circ\s*\}|\\circ)|°|\\degree(?![a-zA-Z])|\\circ$")
_THOUSANDS = re.compile(r"-?\d{1,3}(?:,\d{3})+(?:\.\d+)?")
_THOUSANDS_SEP = re.compile(r"(?<=\d)(?:\{,\}|,\\!\s*|\\,|\\ |\s)(?=\d{3}(?!\d))")
MAX_NORMALIZE_CHARS = 8_000
"""Longer texts are not normalized (no answer or formula is that long; it bounds every caller)."""
_CDOT = re.compile(r"\\cdot(?![a-zA-Z])")
_CMD_SPACE = re.compile(r"(\\[a-zA-Z]+)\s+(?=[a-zA-Z])")
_REL_WORDS = (("\\leqslant", "\\leq"), ("\\geqslant", "\\geq"), ("\\leqq", "\\leq"), ("\\geqq", "\\geq"),
              ("\\approx", "≈"), ("\\simeq", "≈"), ("\\doteq", "≈"))  # fmt: skip
_CHOICE_PREFIX = re.compile(r"^\(?([A-E])(?:\)|\.|:)?(?:\s|$)")

# final answers only
_PROSE = re.compile(r"^\s*(?:the\s+)?(?:final\s+)?answer(?:\s+is)?\s*[:=]?\s*", re.I)
_PERCENT_WORDS = re.compile(r"\s*(?:\\text\s*\{\s*)?(?:percentage|percent|pct)(?:\s*\})?\.?(?=\s*(?:,|;|$))", re.I)
_TRAILING_WORDS = re.compile(
    r"(?<=[\d}\)\]])\s*(?:\\(?:text|textbf|textrm|textit|mbox|mathrm)\s*\{\s*[A-Za-z][A-Za-z .]*\}"
    r"|\s+[A-Za-z]{2,}(?:\s+[A-Za-z]{2,})*)(?:\^\s*\{?[23]\}?)?\.?(?=\s*(?:,|;|$))"
)


@short_cache(maxsize=100_000)
def final_text(text: str) -> str:
    """Final-answer-only cleanup before `normalize`: collected boxes, prose wrappers, percent
    words and trailing unit words (formulas keep all of these)."""
    text = notation.rewrite(collect_boxes(text.replace("\n", " ")))
    text = _PROSE.sub("", text, count=1)
    text = strip_wrappers(prose.final_value(strip_wrappers(text)))
    text = _PERCENT_WORDS.sub("", text)
    text = _PLAIN_UNIT.sub("", text)  # `6 m` is six metres here, but 6*m in a formula
    return _TRAILING_WORDS.sub("", text)


@short_cache(maxsize=100_000)
def normalize(text: str) -> str:
    """A canonical string for an answer: same object, same string, in the common cases.

    Cached: a reference (and often a prediction) recurs across a prompt's rollouts, and the
    similarity fallback normalizes the same strings the parser already did. A text longer than
    `MAX_NORMALIZE_CHARS` is returned stripped, unchanged (a hard bound on the work per call)."""
    if len(text) > MAX_NORMALIZE_CHARS:
        return text.strip()
    text = strip_markup(strip_wrappers(notation.rewrite(text.replace("\n", " "))))
    if "&" in text and "\\begin" not in text:  # an alignment `&` (`a^2 & = 9`), not a matrix column
        text = re.sub(r"(?<!\\)&", " ", text)
    text = _THOUSANDS_SEP.sub("", text) if re.search(r"\d(?:\{,\}|,\\!|\\,|\\ |\s)\d{3}", text) else text
    text = _WORD_SEP.sub(",", text)
    text = _TEXT_UNIT.sub("", text)
    text = _TEXT_TRAILING.sub("", text)
    text = _PROSE_TEXT.sub(_drop_prose, text)
    for _ in range(3):
        text = _TEXT_CMD.sub(r"\1", text)
    text = _SPACING.sub(" ", text)
    text = _SIZING.sub("", text)
    text = text.replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac").replace("\\cfrac", "\\frac")
    for old, new in _REL_WORDS:
        text = text.replace(old, new)
    text = _DEGREES.sub("", notation.trig_degrees(text))
    text = text.replace("\\%", "").replace("%", "").replace("\\$", "").replace("$", "")
    text = text.replace("{,}", ",").replace("\\times", "*").replace("\\ast", "*")
    text = _CDOT.sub("*", text)  # `\\cdots` stays
    text = text.replace("\\lvert", "|").replace("\\rvert", "|").replace("\\mid", "|")
    text = _CMD_SPACE.sub("\\1\x01", text.replace("\x01", ""))  # `\sin x` must not become `\sinx`
    text = re.sub(r"\s+", "", text).replace("\x01", " ")
    text = re.sub(r"\^\{?\\prime\}?|\\prime", "'", text)
    text = canonical_scripts(text)
    if text.endswith("."):  # trailing periods, but not the `.` of `5.` (one pass, not one per period)
        stripped = text.rstrip(".")
        text = stripped if not stripped[-1:].isdigit() else stripped + "." if stripped != text else text
    if _THOUSANDS.fullmatch(text):
        text = text.replace(",", "")
    return strip_wrappers(text)


def choice_letter(text: str) -> str | None:
    """The choice letter (a-e, lower case) a prediction starts with (`D. y = 12`, `(D)`,
    `\\text{D}`), or None."""
    t = strip_wrappers(collect_boxes(text))
    for _ in range(2):
        t = strip_wrappers(_TEXT_CMD.sub(r"\1", t))
    m = _CHOICE_PREFIX.match(t)
    return m.group(1).lower() if m else None
