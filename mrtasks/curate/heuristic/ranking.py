"""Ranking: which candidates are offered as maskable, most important first (`extract_formulas`).

Policy: the final answer first (a masked row must not show it), then theorem names of the
lexicon (the named results a solution rests on), then relations over bare expressions, longer,
displayed and later formulas, moved by what the context says (`context.role`): a result the text
establishes (`derived`: "so", "we get", ...; a `claim`'s statement) or writes again (restated: it
was established and is used) up, a hypothesis (`assumed`: "suppose", "such that") down, and so is a formula with a
bookkeeping cue (`context.bookkeeping_cue`: "let", "if", "for", "where" ... shortly before it) that nothing marks as a
result: a row with formulas to spare masks those instead.
Bookkeeping and junk are never offered (`junk`, `context`). Givens copied from the problem,
formulas longer than `max_formula_chars`, short expressions without a relation and the names of figure
objects are context only. A restated formula is offered with all its copies, which are masked together; at most
`max_mask_share` of the non-junk candidates are offered, so masks leave context. A final answer that only restates a
value alone in its box (`\\(\\boxed{10}\\)`, `restated_answer`) is not offered at all: it is no key formula, and
Masked-Then-Fill masks the final answer's boxes itself (`masked_then_fill.answer_boxes`).
"""

from __future__ import annotations

import math
import re

from mrtasks.curate.heuristic.candidates import Candidate, find_candidates, formula_key
from mrtasks.curate.heuristic.config import HeuristicConfig
from mrtasks.curate.heuristic.context import BOOKKEEPING, bookkeeping_cue
from mrtasks.curate.heuristic.junk import significant
from mrtasks.trajectory import Formula

_RELATION = re.compile(
    r"=|<|>|\\(?:le|ge|leq|geq|neq|ne|equiv|approx|sim|simeq|cong|lt|gt|implies|iff|Rightarrow|"
    r"Leftrightarrow|to|mapsto|in|notin|subset|subseteq|supset|supseteq|mid|nmid|perp|parallel)(?![A-Za-z])"
)
_HEAVY = re.compile(r"\\(?:frac|dfrac|sqrt|sum|int|prod|lim|binom|log|ln|sin|cos|tan|cot|pmod|equiv|cdot|times)(?![A-Za-z])")
_WEAK_RELATION = re.compile(r"^[^=<>]*\\(?:in|notin|ni)(?![A-Za-z])[^=<>]*$")
_LONE_SYMBOL = re.compile(
    r"(?:\\(?:math(?:cal|bb|bf|frak|scr|rm)|vec|bar|hat|tilde)\s*\{\\?[A-Za-z]+\}|\\[A-Za-z]+|[A-Za-z])"
    r"(?:_(?:\w|\*|\{\s*(?:(?:\w|\*)\s*){1,3}\}|\{\s*\w{1,2}\s*[-+]\s*\w{1,2}\s*\}|\{\s*\\math[a-z]+\{\w{1,3}\}\s*\}))?"
    r"(?:'+|\^\{?(?:\s*\\prime)+\s*\}?)?"
)
"""One symbol, its index an expression too (`x_{1}`, `\\mathcal{F}_{n-1}`, `a_{i+1}`, `\\ell^{\\prime}`)."""
_LONE_SYMBOLS = re.compile(rf"\s*{_LONE_SYMBOL.pattern}(?:\s*,\s*{_LONE_SYMBOL.pattern})+\s*")
"""Symbols named in a row: `\\mathcal{L}_{X Z}, \\mathcal{L}_{Y Z}` (`denoting by ... the two pieces`)."""
_NAME_MARKUP = re.compile(
    r"\\(?:overline|underline|widehat|overarc|overparen|math(?:cal|bb|bf|frak|scr|rm)|angle|measuredangle|triangle|odot|"
    r"quad)(?![A-Za-z])|\\operatorname\s*\{[A-Za-z]+\}|\\[,;!]|_\{?[\sA-Za-z0-9]*\}?|'+|\\prime|[\s{},]"
)
"""What the name of a figure object is written with besides its letters: decorations, subscripts, primes, spacing, the
commas of a list (`\\overline{C D}`, `\\angle B B_{1} C`, `A S_{b} S_{c}, A X T`, `\\operatorname{arc} E G`)."""
_LETTERS = re.compile(r"[A-Za-z]+")
_ROLE_BONUS = {"derived": 1.0, "claim": 1.5, "assumed": -1.5}
RESTATED_BONUS = 1.5
"""A formula the text writes again is usually a result it established and then uses."""
CUE_PENALTY = 2.0
"""A formula with a bookkeeping cue (`context.bookkeeping_cue`) and no evidence that it is a result: offered after
the others, so a row with formulas to spare masks those."""


def _minor(text: str, kind: str) -> bool:
    """A short expression without a relation (`(i+1)`, `2 \\times 2`, `f(0)`) or a name (`names_only`): context, not a
    key formula."""
    if kind not in ("math", "plain"):
        return False
    return (len(significant(text)) <= 10 and not _RELATION.search(text)) or names_only(text)


def names_only(text: str) -> bool:
    """A lone symbol (`\\ell^{\\prime}`, `x_{1}`), a list of symbols or the name of a figure object (`\\overline{C D}`,
    `\\angle B B_{1} C`): it names something and has nothing to fill in."""
    if _LONE_SYMBOL.fullmatch(text.strip()) or ("," in text and _LONE_SYMBOLS.fullmatch(text)):
        return True
    return not _RELATION.search(text) and bool(_LETTERS.fullmatch(_NAME_MARKUP.sub("", text)))


def copied_given(key: str, problem_key: str) -> bool:
    """The formula, or its right-hand side when long, is copied from the problem statement (both as `formula_key`s):
    a restated given, which a masked row's reader fills by copying from the problem, not by reasoning."""
    if not key or not problem_key:
        return False
    if key in problem_key:
        return True
    rhs = key.split("=", 1)[1] if "=" in key else ""
    return len(rhs) >= 12 and rhs in problem_key


def importance(
    text: str, display: bool, kind: str = "math", position: float = 0.0, given: bool = False,
    role: str | None = None, restated: bool = False, cue: bool = False,
) -> float:
    """A score for ranking formulas, most important first (see the module docstring).

    The final answer first, then the named results a solution rests on (theorem names); then
    relations over bare expressions, longer, displayed and later ones (results come after their
    givens), with evidence from the context: established (`derived`, a `claim`'s statement, or
    written more than once: `restated`) up, `assumed` down; a given copied from the problem last.
    """
    if kind == "theorem":
        score = 12.0
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
        score += _ROLE_BONUS.get(role, 0.0)
        if restated:
            score += RESTATED_BONUS
        if cue:
            score -= CUE_PENALTY
    score += position
    if kind == "answer":
        score += 20.0
    if given:
        score -= 8.0
    return score


def extract_formulas(solution: str, config: HeuristicConfig = HeuristicConfig(), problem: str = "") -> list[Formula]:
    """The maskable formulas of a solution, most important first (ties: earlier first).

    Junk and bookkeeping candidates are never maskable, nor is one longer than
    `max_formula_chars`, a short expression without a relation, or a given copied from the
    problem. A formula written more than once is offered with every copy (all maskable, or
    none: a visible copy would give the mask away): its first occurrence carries its rank, the
    other copies follow the ranked list, and Masked-Then-Fill masks them together. At most
    `max_mask_share` of the solution's non-junk candidates (counting copies and bookkeeping, which
    stays visible) are offered, so a
    row masked from the top of this list always keeps some formulas visible as context (the
    final answer is always offered).
    """
    found = find_candidates(solution, config, problem)
    keys = [_key(solution, c) for c in found]
    blocked = {k for c, k in zip(found, keys) if c.junk is not None}  # a copy that cannot be masked
    groups: dict[str, list[Candidate]] = {}
    for c, key in zip(found, keys):
        if c.junk is None:
            groups.setdefault(key, []).append(c)
    # bookkeeping stays visible: it counts as context for the share cap, though it is never masked
    n_candidates = sum(len(g) for g in groups.values()) + sum(c.junk in BOOKKEEPING for c in found)
    given_text = formula_key(problem)
    n = max(len(solution), 1)
    scored: list[tuple[float, int, list[Candidate]]] = []
    for key, group in groups.items():
        c = group[0]
        text = solution[c.start : c.end]
        # The final answer's group, even where its first copy is unboxed (`the mixed number
        # $1 \frac{1}{10}$` before `\boxed{1 \frac{1}{10}}`): a short first copy must not keep the box visible.
        answer = any(g.kind == "answer" for g in group)
        if not answer:
            if key in blocked or len(text) > config.max_formula_chars or _minor(text, c.kind):
                continue
            if copied_given(key, given_text):
                continue  # a given copied from the problem: filling it is copying, not reasoning
        roles = {g.role for g in group}
        role = "derived" if "derived" in roles else "claim" if "claim" in roles else c.role
        kind = "answer" if answer else c.kind
        cue = role not in ("derived", "claim") and bookkeeping_cue(solution, c.start, c.end)  # a result keeps its rank
        score = importance(text, any(g.display for g in group), kind, c.start / n, role=role, restated=len(group) > 1, cue=cue)
        scored.append((score, c.start, group))  # the final answer boxed twice: both boxes are masked
    scored.sort(key=lambda t: (-t[0], t[1]))
    is_answer = lambda group: any(g.kind == "answer" for g in group)  # noqa: E731
    limit = max(int(config.max_mask_share * n_candidates), sum(is_answer(g) for _, _, g in scored))
    kept: list[list[Candidate]] = []
    used = 0
    for _, _, group in scored:
        if used + len(group) <= limit or is_answer(group):
            kept.append(group)
            used += len(group)
    kept = [g for g in kept if not all(restated_answer(solution, c) for c in g)]  # after the share: the rest as before
    first = [Formula(solution[g[0].start : g[0].end], g[0].start, g[0].end) for g in kept]
    copies = sorted((c for g in kept for c in g[1:]), key=lambda c: c.start)
    return first + [Formula(solution[c.start : c.end], c.start, c.end) for c in copies]


# A box alone in its math: `\\(\\boxed{10}\\)`, `$$\\boxed{\\frac{4}{11}}.$$` (not `$m + M = \\boxed{84}$`).
_ALONE_BEFORE = re.compile(r"(?:\$\$?|\\\(|\\\[)\s*\\boxed\s*\{\s*$")
_ALONE_AFTER = re.compile(r"\s*\}\s*[.,;!]?\s*(?:\$|\\\)|\\\])")


def restated_answer(solution: str, c: Candidate) -> bool:
    """The final answer as a value standing alone in its box (`\\(\\boxed{10}\\)`, `$$\\boxed{\\frac{4}{11}}.$$`): it
    restates what the text derived before it, and it is no key formula (Appendix A labellers leave a lone value out).
    Masked-Then-Fill masks the final answer's boxes without it (`masked_then_fill.answer_boxes`)."""
    return (
        c.kind == "answer"
        and not _RELATION.search(solution, c.start, c.end)
        and bool(_ALONE_BEFORE.search(solution, max(0, c.start - 40), c.start))
        and bool(_ALONE_AFTER.match(solution, c.end))
    )


def _key(solution: str, c: Candidate) -> str:
    key = formula_key(solution[c.start : c.end])
    return key.lower() if c.kind == "theorem" else key
