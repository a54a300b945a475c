"""Ranking: which candidates are offered as maskable, most important first (`extract_formulas`).

Policy: the final answer first (so a masked row never shows it), then derived relations over bare
expressions, longer, displayed and later formulas; theorem names rank with a medium relation.
Givens copied from the problem statement, repeated formulas (a copy would give the mask away),
formulas longer than `max_formula_chars` and short expressions without a relation are context
only; at most `max_mask_share` of the non-junk candidates are offered, so masks leave context.
"""

from __future__ import annotations

import math
import re
from collections import Counter

from mrtasks.curate.heuristic.candidates import find_candidates, formula_key
from mrtasks.curate.heuristic.config import HeuristicConfig
from mrtasks.curate.heuristic.junk import significant
from mrtasks.trajectory import Formula

_RELATION = re.compile(
    r"=|<|>|\\(?:le|ge|leq|geq|neq|ne|equiv|approx|sim|simeq|cong|lt|gt|implies|iff|Rightarrow|"
    r"Leftrightarrow|to|mapsto|in|notin|subset|subseteq|supset|supseteq|mid|nmid|perp|parallel)(?![A-Za-z])"
)
_HEAVY = re.compile(r"\\(?:frac|dfrac|sqrt|sum|int|prod|lim|binom|log|ln|sin|cos|tan|cot|pmod|equiv|cdot|times)(?![A-Za-z])")
_WEAK_RELATION = re.compile(r"^[^=<>]*\\(?:in|notin|ni)(?![A-Za-z])[^=<>]*$")


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
    keys = [formula_key(solution[c.start : c.end]).lower() if c.kind == "theorem" else formula_key(solution[c.start : c.end])
            for c in candidates]
    counts = Counter(keys)
    given_text = formula_key(problem)
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
