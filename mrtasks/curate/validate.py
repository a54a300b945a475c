"""Checks on an LLM's curation answers: JSON extraction, schemas, verbatim formulas, step coverage.

Everything here is pure and synchronous, so it is easy to test on its own. A failed check raises
`Rejected(reason, detail)`; `reason` is the counted drop reason the annotator reports when its
retries run out.

Definitions (the contract the `llm` annotator enforces):

* Formulas: each extracted item must occur in the solution verbatim, up to whitespace (we compare
  with all whitespace removed and map the match back to the solution's own characters, so the
  span's text is always `solution[start:end]`). Math delimiters wrapped around an item are
  stripped first, so the span is the content inside the solution's delimiters. A match must
  not start or end inside a word, number or LaTeX command (`x` is not found inside `\\max`).
  Items keep the model's importance order; the first free occurrence is taken; an item whose
  every occurrence overlaps an earlier, more important span is dropped as a duplicate. By
  default an item that occurs more than once is not maskable either (masking one copy would
  leave the answer in plain sight in the other); the heuristic annotator instead lists every
  copy, which Masked-Then-Fill masks together.
* Steps "cover" the solution when, with whitespace removed, every step is found in order in the
  solution (exactly, or with a rapidfuzz partial-ratio of at least `min_similarity`) and the
  matched regions together cover at least `min_coverage` of the solution's characters. A leading
  `Step 3:` label is stripped from each step: it is not part of the text and would leak the
  order the Step Reordering task asks for.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

import jsonschema
from rapidfuzz import fuzz

from mrtasks.tasks.step_reordering import strip_step_label
from mrtasks.text import strip_math_delimiters, strip_think
from mrtasks.trajectory import Formula


class Rejected(Exception):
    """An answer that failed a check; `reason` is the snake_case drop reason."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


THEOREMS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["theorems"],
    "properties": {"theorems": {"type": "array", "items": {"type": "string"}}},
}
STEPS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["steps"],
    "properties": {"steps": {"type": "array", "minItems": 1, "items": {"type": "string"}}},
}

# --- Free text -> JSON object ------------------------------------------------------------------

_FENCE_RE = re.compile(r"```[a-zA-Z0-9_-]*[ \t]*\n?(.*?)```", re.DOTALL)
_LINE_COMMENT_RE = re.compile(r"^\s*//.*$", re.MULTILINE)
_TRAILING_COMMA_RE = re.compile(r",(\s*[\]}])")
# A backslash that does not start a valid JSON escape (LaTeX written without doubling: `\alpha`).
_BAD_ESCAPE_RE = re.compile(r'(?<!\\)((?:\\\\)*)\\(?!["\\/bfnrtu])')


def _loads_lenient(candidate: str) -> Any:
    """`json.loads`, then again after the usual model slips: `//` comments, trailing commas, bare `\\`."""
    try:
        return json.loads(candidate)
    except (ValueError, RecursionError):
        pass
    repaired = _TRAILING_COMMA_RE.sub(r"\1", _LINE_COMMENT_RE.sub("", candidate))
    repaired = _BAD_ESCAPE_RE.sub(lambda m: m.group(1) + "\\\\", repaired)
    return json.loads(repaired)


def extract_json(text: str | None) -> dict[str, Any]:
    """Find the JSON object in a model answer (bare, in a ``` fence, or amid prose after `<think>`)."""
    if not text or not text.strip():
        raise Rejected("llm_invalid_json", "empty answer")
    body = strip_think(text).strip()
    candidates = [body] + [m.group(1).strip() for m in reversed(list(_FENCE_RE.finditer(body)))]
    first, last = body.find("{"), body.rfind("}")
    if first != -1 and last > first:
        candidates.append(body[first : last + 1])
    for candidate in candidates:
        try:
            obj = _loads_lenient(candidate)
        except (ValueError, RecursionError):  # JSONDecodeError, or absurdly deep nesting
            continue
        if isinstance(obj, dict):
            return obj
    # Prose with several brace groups: take the first object that decodes.
    decoder = json.JSONDecoder()
    for match in re.finditer(r"\{", body):
        try:
            obj, _ = decoder.raw_decode(body, match.start())
        except (ValueError, RecursionError):
            continue
        if isinstance(obj, dict):
            return obj
    raise Rejected("llm_invalid_json", f"no JSON object in answer: {body[:120]!r}")


_VALIDATORS: dict[str, Any] = {}


def validate_schema(obj: dict[str, Any], schema: dict[str, Any]) -> None:
    # `jsonschema.validate` re-checks the schema itself on every call; a built validator does not.
    key = json.dumps(schema, sort_keys=True)
    validator = _VALIDATORS.get(key)
    if validator is None:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        validator = _VALIDATORS[key] = cls(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(obj))
    if error is not None:
        path = "/".join(str(p) for p in error.absolute_path) or "<root>"
        raise Rejected("llm_schema", f"{path}: {error.message[:200]}")


def latex_variants(s: str) -> list[str]:
    """`s`, and `s` with control characters restored to the LaTeX commands JSON turned them into.

    `"\\frac"` written with one backslash decodes as form feed + `rac`; `\\times` as tab + `imes`.
    """
    restored = re.sub(
        r"[\b\f\t\r\n](?=[A-Za-z])",
        lambda m: {"\b": "\\b", "\f": "\\f", "\t": "\\t", "\r": "\\r", "\n": "\\n"}[m.group()],
        s,
    )
    restored = restored.replace("\b", "\\b").replace("\f", "\\f")
    return [s] if restored == s else [s, restored]


# --- Formulas ----------------------------------------------------------------------------------

class SolutionIndex:
    """The solution with whitespace removed, mapped back to original offsets."""

    def __init__(self, solution: str) -> None:
        self.solution = solution
        self.offsets = [i for i, ch in enumerate(solution) if not ch.isspace()]
        self.compact = "".join(solution[i] for i in self.offsets)

    def occurrences(self, text: str) -> list[tuple[int, int]]:
        """Every (start, end) span of the solution equal to `text` up to whitespace."""
        needle = compact(text)
        spans: list[tuple[int, int]] = []
        if not needle:
            return spans
        i = self.compact.find(needle)
        while i != -1:
            spans.append((self.offsets[i], self.offsets[i + len(needle) - 1] + 1))
            i = self.compact.find(needle, i + 1)
        return spans


def compact(s: str) -> str:
    return "".join(s.split())


def _clean_boundaries(solution: str, start: int, end: int) -> bool:
    """False when the span starts or ends inside a word, a number or a LaTeX command name."""
    before = solution[start - 1] if start > 0 else ""
    after = solution[end] if end < len(solution) else ""
    first, last = solution[start], solution[end - 1]
    if first.isalnum() and before.isalnum():
        return False
    if first.isalpha() and before == "\\":
        return False
    return not (last.isalnum() and after.isalnum())


@dataclass
class FormulaMatch:
    formulas: list[Formula]
    missing: list[str]
    """Items not found in the solution (hallucinated or rewritten by the model)."""
    duplicates: int
    """Items found only where a more important item already sits."""
    repeated: int = 0
    """Items left out because they occur more than once in the solution."""


def locate_formulas(solution: str, items: list[str], allow_repeated: bool = False) -> FormulaMatch:
    """Map extracted items, most important first, to non-overlapping verbatim spans."""
    index = SolutionIndex(solution)
    taken: list[tuple[int, int]] = []
    formulas: list[Formula] = []
    missing: list[str] = []
    duplicates = repeated = 0
    for item in items:
        text = strip_math_delimiters(item)
        if not text:
            continue
        spans: list[tuple[int, int]] = []
        for variant in latex_variants(text):
            spans = [s for s in index.occurrences(variant) if _clean_boundaries(solution, *s)]
            if spans:
                break
        if not spans:
            missing.append(item)
            continue
        if len(spans) > 1 and not allow_repeated:
            repeated += 1
            continue
        free = [s for s in spans if all(s[1] <= a or s[0] >= b for a, b in taken)]
        if not free:
            duplicates += 1
            continue
        start, end = free[0]
        taken.append((start, end))
        formulas.append(Formula(solution[start:end], start, end))
    return FormulaMatch(formulas, missing, duplicates, repeated)


# --- Steps -------------------------------------------------------------------------------------

@dataclass
class StepCoverage:
    steps: list[str]
    coverage: float
    """Fraction of the solution's non-whitespace characters matched by some step."""


def check_steps(
    solution: str, steps: list[str], min_coverage: float = 0.9, min_similarity: float = 90.0
) -> StepCoverage:
    """Clean the steps and check they cover the solution in order; raises `Rejected` if not."""
    solution_c = compact(solution)
    if not solution_c:
        raise Rejected("llm_steps_do_not_cover", "empty solution")
    covered = bytearray(len(solution_c))
    cleaned: list[str] = []
    cursor = 0
    slack = 16  # neighbouring steps may share a few characters after fuzzy alignment
    for k, raw in enumerate(steps):
        step = strip_step_label(raw).strip()
        if not compact(step):
            continue  # an empty step carries no text to place; drop it
        best: tuple[int, int] | None = None
        for variant in latex_variants(step):
            needle = compact(variant)
            i = solution_c.find(needle, max(0, cursor - slack))
            if i != -1:
                best = (i, i + len(needle))
                break
            lo = max(0, cursor - slack)
            hit = fuzz.partial_ratio_alignment(needle, solution_c[lo:], score_cutoff=min_similarity)
            if hit is not None:  # dest_* index the second argument, whichever is shorter
                best = (lo + hit.dest_start, lo + hit.dest_end)
                break
        if best is None:
            problem = "is out of order or repeated" if compact(step) in solution_c else "does not occur"
            raise Rejected("llm_steps_do_not_cover", f"step {k} {problem} in the solution: {step[:80]!r}")
        covered[best[0] : best[1]] = b"\x01" * (best[1] - best[0])
        cursor = max(cursor, best[1])
        cleaned.append(step)
    coverage = sum(covered) / len(solution_c)
    if not cleaned or coverage < min_coverage:
        raise Rejected(
            "llm_steps_do_not_cover", f"steps cover {coverage:.0%} of the solution (< {min_coverage:.0%})"
        )
    return StepCoverage(cleaned, coverage)
