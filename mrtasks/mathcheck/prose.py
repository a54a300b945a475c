"""Free-text final answers: the value a one-sentence answer states.

Final answers only (`normalize.final_text` calls `final_value` after "The answer is" prose is
gone). Policy:

- A sentence that begins with a word (after an optional connective: "So,", "Thus",
  "Therefore", "Hence", "Finally") and states its value after a copula ("is", "are", "was",
  "equals", "becomes", "is equal to") stands for the text after the last copula: `The length
  is [12].` is `12`, `So the area is $6$ square units` is `6` (trailing units go as usual).
- "approximately", "about", "roughly" before the value make it `\\approx value` (the
  `tolerance` policy decides it).
- Square brackets around that single value are emphasis (`[12]`); with a comma inside they
  stay (`[0, 1]` is an interval). Unescaped `$` delimiters inside the value go (`[$12$]`).
- A sentence without a copula, or whose value is empty, is left as it is (`No solution`);
  anything that does not begin with a word (`x = 5`, `\\text{...}`) is untouched.
"""

from __future__ import annotations

import re

from mrtasks.mathcheck.latex import split_top_level, wrapped

_LEAD = re.compile(r"^\s*(?:so|thus|therefore|hence|finally)\b\s*,?\s*", re.I)
_SENTENCE = re.compile(r"^[A-Za-z][A-Za-z']*(?:\s|$)")
_COPULA = re.compile(r"\s(?:is|are|was|were|equals|becomes)(?:\s+equal\s+to)?\s+", re.I)
_DOLLAR = re.compile(r"(?<!\\)\$")
_ABOUT = re.compile(r"^(?:approximately|about|roughly|around|approx\.?)\s+", re.I)


def final_value(text: str) -> str:
    """The value a one-sentence answer states (see the module docstring), else `text`."""
    body = _LEAD.sub("", text, count=1)
    if not _SENTENCE.match(body) or " " not in body:
        return text
    copulas = list(_COPULA.finditer(body))
    if not copulas:
        return text
    value = _DOLLAR.sub("", body[copulas[-1].end() :]).strip().rstrip(".").strip()
    if not value:
        return text
    about = _ABOUT.match(value)
    if about:
        value = value[about.end() :]
    if wrapped(value, "[", "]") and len(split_top_level(value[1:-1], ",")) == 1:
        value = value[1:-1].strip()
    return f"\\approx {value}" if about and value else value
