"""Masked-Then-Fill reward (the paper's r_mask): mean per-position match of the boxed formulas.

The paper scores a position 1 when the fill is equivalent to the masked formula and by text
similarity otherwise. Taken literally, a fill with one number changed in every mask earns 0.94
and the right masks in the wrong slots 0.45 (`python -m mrtasks.rewards.audit` on a build of the
shared corpora), so a policy learns to look like the reference rather than be right. The
default (`partial_credit="undecided"`) scores each position by this rule:

1. Presentational markup goes first, from the fill and the mask alike (`mathcheck.strip_markup`,
   applied by the checker's `normalize`): markers (`\\quad(\\star)`, `\\blacksquare`,
   `\\checkmark`, `(2)`), connectives (`\\because`, `\\therefore`, `\\text{so }`), styling and
   invisible commands (`\\color`, `\\textcolor`, `\\hphantom{}`, `\\displaystyle`, a whole-formula
   `\\mathbf{..}`), trailing `\\tag*{}`, `\\dots`, prose (`\\text{(by AM-GM)}`) and punctuation, a
   Unicode minus, full-width digits.
2. Equivalent (the checker's EQUAL): 1.0.
3. The reference decides whether similarity may apply, never the fill: a mask within the
   checker's grammar (`mathcheck.in_grammar`: every leaf reads as an expression) is judged by
   the checker alone, so anything but EQUAL scores 0 there, and a fill the checker cannot read
   earns nothing (an unknown decoration cannot turn "different" into "undecided").
4. Masks outside the grammar (prose, theorem names, big operators, congruences, commands the
   checker cannot read): 0 when the checker decides they differ or the fill is a near miss
   (`near_miss`: the same token sequence but for numbers, signs, operators, relations, functions
   or free letters, or a minus or negation added or dropped, or one side of the mask alone), or
   the fill is nearer another mask of the row than its own (that formula in the wrong slot); 1.0 for the mask
   read from the other end across symmetric relations (`B \\cong A`); else text similarity, 0
   below `MIN_SIMILARITY`. Theorem names are matched through the checker's lexicon, and names of results outside it
   (`Jacobi's theorem`) by their key (`theorem_names_equal`): never by similarity, so a wrong name earns nothing.

`partial_credit="all"` keeps the paper's literal variant (similarity on every mismatch).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from difflib import SequenceMatcher
from typing import Any

from rapidfuzz import fuzz

from mrtasks.mathcheck import (
    MAX_ANSWER_CHARS,
    Verdict,
    in_grammar,
    judge_batch,
    split_top_level,
    strip_wrappers,
    theorem_names_equal,
)
from mrtasks.mathcheck.cache import short_cache
from mrtasks.mathcheck.normalize import normalize
from mrtasks.rewards.parsing import extract_answer
from mrtasks.rewards.registry import column, register, safe_reward
from mrtasks.tasks import MASKED_THEN_FILL

PARTIAL_CREDIT = ("undecided", "all")
MIN_SIMILARITY = 0.5
"""Under "undecided", similarity below this earns 0: unrelated formulas of one solution share
a third of their characters, and a fragment like `0` shares one or two with any formula."""


def parse_fills(completion: Any, think_prefilled: bool = False) -> list[str] | None:
    """The formulas of `\\boxed{f1; f2; ...}` (split on top-level `;`), or None without a box."""
    boxed = extract_answer(completion, think_prefilled)
    if boxed is None:
        return None
    return [strip_wrappers(part) for part in split_top_level(boxed, ";")]


def similarity(pred: str, ref: str) -> float:
    """Text similarity in [0, 1] (rapidfuzz ratio on normalized LaTeX): the paper's fallback."""
    a = normalize(pred[: 2 * MAX_ANSWER_CHARS])
    b = normalize(ref[: 2 * MAX_ANSWER_CHARS])
    if not a or not b:
        return 0.0
    return fuzz.ratio(a, b) / 100.0


def judge_formulas(pairs: list[tuple[str, str]]) -> list[bool | None]:
    """Three-valued verdicts for (fill, mask) pairs: True equivalent, False decided not, None undecided.

    The checker's `judge_batch` (EQUAL / DIFFERENT / UNDECIDED). Theorem names known to the
    checker's lexicon (`mrtasks.mathcheck.theorems`) are then decided by canonical name (`Pythagoras' theorem` is the
    `Pythagorean theorem`; `AM-GM` is not `Cauchy-Schwarz`), other names of results by key (`the Jacobi theorem` is
    `Jacobi's theorem`, `Euler's theorem` is not), once per distinct pair.
    """
    verdicts: list[bool | None] = [_THREE[v] for v in judge_batch(pairs, strip_lhs=False)]
    names: dict[tuple[str, str], bool | None] = {}  # a prompt's rollouts repeat (fill, mask) pairs
    for i, v in enumerate(verdicts):
        if v is not True:
            if pairs[i] not in names:
                names[pairs[i]] = theorem_names_equal(*pairs[i])
            if names[pairs[i]] is not None:
                verdicts[i] = names[pairs[i]]
    return verdicts


_THREE = {Verdict.EQUAL: True, Verdict.DIFFERENT: False, Verdict.UNDECIDED: None}


_TOKEN = re.compile(
    r"\\[a-zA-Z]+|\d+(?:\.\d+)?"
    r"|(?<![A-Za-z])(?:lcm|gcd|deg|det|sgn|ord|arg|Re|Im|tr|rank|mod|max|min|sup|inf|lim|exp|log|ln)(?![A-Za-z])|\S"
)
"""Tokens: a command, a number, an operator name written in letters (`\\operatorname{lcm}` is
normalized to `lcm`), or one character."""
_NUM = re.compile(r"\d+(?:\.\d+)?")
MAX_NEAR_MISS_CHARS = 2 * MAX_ANSWER_CHARS
"""Longer fills are not tokenized for the near-miss rule (they are never near misses of a mask)."""

_SYNONYMS = {
    "\\varepsilon": "\\epsilon", "\\varphi": "\\phi", "\\vartheta": "\\theta", "\\varrho": "\\rho",
    "\\rightarrow": "\\to", "\\longrightarrow": "\\to", "\\ne": "\\neq", "\\le": "\\leq", "\\ge": "\\geq",
    "\\ldots": "\\dots", "\\cdots": "\\dots", "\\dotsb": "\\dots", "\\dotsc": "\\dots", "\\lbrace": "\\{",
    "\\rbrace": "\\}", "\\land": "\\wedge", "\\lor": "\\vee", "\\lnot": "\\neg", "\\implies": "\\Rightarrow",
    "\\Longrightarrow": "\\Rightarrow", "\\iff": "\\Leftrightarrow", "\\Longleftrightarrow": "\\Leftrightarrow",
    "\\varnothing": "\\emptyset", "\\gets": "\\leftarrow", "\\lvert": "|", "\\rvert": "|",
}  # fmt: skip
_OPERATORS = {"+", "-", "*", "/", "\\div", "\\pm", "\\mp", "\\cdot", "\\times", "\\circ", "\\oplus", "\\otimes",
              "\\cap", "\\cup", "\\setminus", "\\wedge", "\\vee", "\\bigcap", "\\bigcup"}  # fmt: skip
_RELATIONS = {"=", "<", ">", "≈", "≤", "≥", "≠", "\\leq", "\\geq", "\\neq", "\\equiv", "\\sim", "\\simeq", "\\cong",
              "\\approx", "\\subset", "\\subseteq", "\\supset", "\\supseteq", "\\in", "\\notin", "\\mid",
              "\\nmid", "\\perp", "\\parallel", "\\propto", "\\ll", "\\gg", "\\to", "\\Rightarrow",
              "\\Leftrightarrow", "\\not", "|"}  # fmt: skip
_BOUND = re.compile(
    r"\\(?:sum|prod|bigcup|bigcap|coprod|lim|limsup|liminf|max|min|sup|inf|int|iint|oint)\w*\s*_\s*\{?\s*([a-zA-Z])"
    r"|\\(?:forall|exists)\s*([a-zA-Z])"
)
_DIFFERENTIAL = re.compile(r"(?<![a-zA-Z\\])d([a-zA-Z])(?![a-zA-Z])")


_NEGATIONS = {"-", "\\not", "\\neg"}
"""One of these added or dropped makes a near miss (`-x` for `x`, `\\not\\equiv` for `\\equiv`)."""


_FONT_LETTER = re.compile(r"\\(?:math(?:rm|it|bf|sf|tt)|text(?:rm|it|bf)?|boldsymbol|bm|operatorname)\s*\{\s*([A-Za-z])\s*\}")
"""One letter in a font (`{\\mathrm{g}}`): the letter (normalizing would read `\\mathrm{g}` as a unit and drop it)."""


def _tokens(text: str) -> list[str]:
    if "\\" in text:
        text = _FONT_LETTER.sub(r"\1", text)
    return [_SYNONYMS.get(t, t) if t[0] == "\\" or not t[0].isalpha() or len(t) == 1 else "\\" + t
            for t in _TOKEN.findall(normalize(text))]


_FONTS = {"\\mathrm", "\\mathit", "\\mathbf", "\\mathsf", "\\mathtt", "\\text", "\\textrm", "\\textit",
          "\\textbf", "\\operatorname", "\\boldsymbol", "\\bm", "\\mbox"}  # fmt: skip
_LOOKALIKES = str.maketrans("аеорхсуАВЕКМНОРСТХіјѕΑΒΕΖΗΙΚΜΝΟΡΤΥΧ", "aeopxcyABEKMHOPCTXijsABEZHIKMNOPTYX")
_SYMBOLS = {"∑": "\\sum", "∏": "\\prod", "√": "\\sqrt", "∣": "|", "∩": "\\cap", "∪": "\\cup", "∉": "\\notin",
            "≠": "\\neq", "≥": "\\geq", "≤": "\\leq", "∈": "\\in", "⊂": "\\subset", "⊆": "\\subseteq", "∞": "\\infty",
            "→": "\\to", "·": "*", "×": "*", "∘": "\\circ", "∀": "\\forall", "∃": "\\exists", "¬": "\\neg"}  # fmt: skip
_NEGATED = {"\\mid": "\\nmid", "|": "\\nmid", "\\in": "\\notin", "=": "\\neq", "\\equiv": "\\not\\equiv", "\\subseteq": "\\nsubseteq"}
_SILENT = {"{", "}", "*", "\\cdot", "\\times", "\\,", "\\;", "\\!", "\\:"}
"""Tokens a rewrite may add or drop without changing the formula: grouping braces and an explicit
product sign (`2 \\cdot x` is `2x`)."""
MAX_NEAR_EDIT = 3
"""A fill this many tokens or fewer away from its mask (inserted, deleted or replaced) is a near
miss: `x_{i+1}` for `x_i`, `\\pm y` for `y`, `N + 1` for `N`, `\\neg(P)` for `P`."""


def _canonical(tokens: list[str]) -> list[str]:
    """The tokens with font wrappers (`{\\mathrm{a}}`), look-alike letters (Cyrillic `а`), silent
    tokens (`_SILENT`) and a `\\not` before its relation (`\\not\\in` is `\\notin`) made uniform."""
    out: list[str] = []
    for tok in tokens:
        if tok in _FONTS or tok in _SILENT:
            continue
        tok = _SYMBOLS.get(tok, tok.translate(_LOOKALIKES) if not tok.startswith("\\") else tok)
        if tok in _SILENT:
            continue
        if out and out[-1] == "\\not" and tok in _NEGATED:
            out[-1] = _NEGATED[tok]
            continue
        out.append(tok)
    return out


def _small_edit(a: list[str], b: list[str]) -> bool:
    """`a` is another formula a small edit away from `b`: at most `MAX_NEAR_EDIT` tokens inserted,
    deleted or replaced, touching more than brackets (`(a+b)` for `a+b` may be the same formula),
    or one additive term dropped or added (`A + B` for `A + B + C`); both read with their relation
    chains pointing one way (`N \\ni x` is `x \\in N`), and the sides of an order or membership
    swapped (`N \\in x` for `x \\in N`) count too."""
    a, b = _oriented(a), _oriented(b)
    if a == b:
        return False
    if _swapped(a, b):
        return True
    if abs(len(a) - len(b)) > max(MAX_NEAR_EDIT, len(b) // 2):
        return False
    ops = [op for op in SequenceMatcher(None, a, b, autojunk=False).get_opcodes() if op[0] != "equal"]
    if len(ops) == 1 and ops[0][0] in ("insert", "delete"):
        _, i1, i2, j1, j2 = ops[0]
        run = a[i1:i2] or b[j1:j2]
        if run[0] in _ADDITIVE and 2 * len(run) <= len(b):
            return True  # a term dropped or added
    edits = sum(max(i2 - i1, j2 - j1) for _, i1, i2, j1, j2 in ops)
    changed = [t for _, i1, i2, j1, j2 in ops for t in a[i1:i2] + b[j1:j2]]
    return edits <= MAX_NEAR_EDIT and any(t not in "()[]" for t in changed)


_ADDITIVE = {"+", "-", "\\pm", "\\mp"}
_MIRRORED = {">": "<", "\\geq": "\\leq", "\\ni": "\\in", "\\supseteq": "\\subseteq", "\\supset": "\\subset",
             "\\gg": "\\ll", "\\Leftarrow": "\\Rightarrow", "\\leftarrow": "\\to"}  # fmt: skip
_SYMMETRIC = {"=", "\\neq", "\\equiv", "≈", "\\approx", "\\sim", "\\simeq", "\\cong", "\\Leftrightarrow", "\\parallel",
              "\\perp"}  # fmt: skip
_ORDERED = set(_MIRRORED.values()) | {"\\in", "\\notin", "\\subset", "\\subseteq", "|", "\\nmid", "\\mid"}


def _chain(tokens: list[str]) -> tuple[list[list[str]], list[str]]:
    """The sides and relations of a relation chain (outside brackets)."""
    sides: list[list[str]] = [[]]
    rels: list[str] = []
    depth = 0
    for t in tokens:
        depth += (t in "([") - (t in ")]")
        if depth == 0 and (t in _MIRRORED or t in _SYMMETRIC or t in _ORDERED or t in ("<", "\\leq", "\\ll")):
            rels.append(t)
            sides.append([])
        else:
            sides[-1].append(t)
    return sides, rels


def _oriented(tokens: list[str]) -> list[str]:
    """A chain written with `>`, `\\geq`, `\\ni`, `\\supseteq` ... (and symmetric relations) read from
    the other end: `N \\ni x` is `x \\in N`."""
    sides, rels = _chain(tokens)
    if not rels or not any(r in _MIRRORED for r in rels) or not all(r in _MIRRORED or r in _SYMMETRIC for r in rels):
        return tokens
    out = list(sides[-1])
    for side, rel in zip(reversed(sides[:-1]), reversed(rels)):
        out += [_MIRRORED.get(rel, rel), *side]
    return out


def _swapped(a: list[str], b: list[str]) -> bool:
    """`a` is `b` read backwards across an order or membership (`N \\in x` for `x \\in N`)."""
    sa, ra = _chain(a)
    sb, rb = _chain(b)
    return bool(rb) and ra == rb[::-1] and sa == sb[::-1] and any(r in _ORDERED or r in ("<", "\\leq") for r in rb)


def _token_class(tok: str) -> str:
    """number, letter (Latin or Greek), operator, relation, command, or the token itself."""
    if _NUM.fullmatch(tok):
        return "number"
    if len(tok) == 1 and tok.isalpha():
        return "letter"
    if tok in _OPERATORS:
        return "operator"
    if tok in _RELATIONS:
        return "relation"
    if tok.startswith("\\") and tok[1:].isalpha():
        return "letter" if tok[1:] in _GREEK else "command"
    return tok


_GREEK = {
    "alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu", "nu",
    "xi", "pi", "rho", "sigma", "tau", "upsilon", "phi", "chi", "psi", "omega", "Gamma", "Delta", "Theta",
    "Lambda", "Xi", "Pi", "Sigma", "Phi", "Psi", "Omega",
}  # fmt: skip


def bound_letters(formula: str) -> set[str]:
    """Letters a big operator, a limit, a quantifier or an integral's `dx` binds: renaming them
    consistently writes the same formula."""
    text = normalize(formula)
    bound = {g for m in _BOUND.finditer(text) for g in m.groups() if g}
    if "\\int" in text or "\\oint" in text:
        bound |= {m.group(1) for m in _DIFFERENTIAL.finditer(text)}
    return bound


@short_cache(maxsize=100_000)
def canonical_tokens(text: str) -> tuple[str, ...]:
    """A fill's or mask's tokens as `near_miss` and the mirror rule compare them (once per text:
    a reference recurs across its rollouts, and both rules read the same pair)."""
    return tuple(_canonical(_tokens(text)))


def near_miss(pred: str, ref: str) -> bool:
    """Another formula of the same shape: the same token sequence but for numbers, signs,
    operators, relations, functions or letters swapped (`a+b` for `a-b`, `\\tan` for `\\cot`,
    `\\cap` for `\\cup`, `<` for `>`, `n` renamed `m`), or a minus sign or a negation added or
    dropped (`-x` for `x`, `\\not\\equiv` for `\\equiv`); or a small edit of it (`_small_edit`:
    `x_{i+1}` for `x_i`, `\\pm y` for `y`, a term dropped, the sides of `\\in` swapped), read
    through fonts, look-alike letters and explicit products (`{\\mathrm{a}}`, Cyrillic `а`, `2 \\cdot x`).

    For references outside the checker's grammar (`mrtasks.mathcheck.in_grammar`), where text
    similarity would otherwise pay ~0.3-0.95 for such a fill. Letters renamed consistently (a
    bijection) are a near miss unless every renamed letter is bound in the reference (a
    summation index `k` -> `j`, `dx` -> `dt`): that may be the same formula. The price: a fill
    that is equivalent but a few tokens away from the mask (`\\sum_{k=1}` for `\\sum_{k=0} ... - 1`)
    is scored as the near miss it looks like.
    """
    if len(pred) > MAX_NEAR_MISS_CHARS or len(ref) > MAX_NEAR_MISS_CHARS:
        return False
    b = _tokens(ref)
    # what the markup rule leaves as content where it is ambiguous (`K (1)`, `f (2)`) is tried
    # without it too: a wrong fill must not escape the rule by a label the rule cannot tell apart
    variants = _variants(pred)
    if any(a == b or _oriented(a) == _oriented(b) for a in variants):
        return False  # the same tokens, or the same chain read from the other end (`y \\leq x`, `x \\geq y`)
    if any(_near_tokens(a, b, ref) for a in variants):
        return True
    canon = list(canonical_tokens(ref))
    canons = [list(canonical_tokens(pred)), *(_canonical(a) for a in variants[1:])]
    if any(_one_side(c, canon) for c in canons):
        return True
    if _bound_renaming(variants[0], b, ref):
        return False
    return any(_small_edit(c, canon) for c in canons)


def _one_side(a: list[str], b: list[str]) -> bool:
    """`a` is one side of the relation `b` alone (`\\triangle B M N` for `\\triangle B M C \\cong
    \\triangle B M N`, `12` for `B N = 12`): a term, not the statement."""
    sides, rels = _chain(b)
    return bool(rels) and not _chain(a)[1] and a in sides


def _bound_renaming(a: list[str], b: list[str], ref: str) -> bool:
    """`a` is `b` with letters the reference binds renamed consistently (`j` for the index `k`)."""
    if len(a) != len(b):
        return False
    forward: dict[str, str] = {}
    for x, y in zip(a, b):
        if x != y:
            if _token_class(x) != "letter" or _token_class(y) != "letter" or forward.setdefault(y, x) != x:
                return False
    backward = {x: y for y, x in forward.items()}
    if not forward or len(backward) != len(forward):
        return False
    # every occurrence renamed, and no new name that was already in use
    if any(y in forward and x != forward[y] or x in backward and y != backward[x] for x, y in zip(a, b)):
        return False
    bound = bound_letters(ref)
    return all(y.lstrip("\\") in bound or y in bound for y in forward)


def _variants(pred: str) -> list[list[str]]:
    a = _tokens(pred)
    m = _TRAILING_LABEL.search(pred)
    return [a, _tokens(pred[: m.start()])] if m and pred[: m.start()].strip() else [a]


_TRAILING_LABEL = re.compile(r"(?:\\[a-zA-Z]+|\s[(\[][^()\[\]{}]{1,6}[)\]])\s*$")
"""A trailing command (`\\square`) or a bracketed label after a space (`(1)`, `[4]`, `(*)`)."""


def _near_tokens(a: list[str], b: list[str], ref: str) -> bool:
    if a == b:
        return False
    if len(a) != len(b):
        if abs(len(a) - len(b)) != 1:
            return False
        longer, shorter = (a, b) if len(a) > len(b) else (b, a)
        return any(longer[k] in _NEGATIONS and longer[:k] + longer[k + 1 :] == shorter for k in range(len(longer)))
    diffs = [(x, y) for x, y in zip(a, b) if x != y]
    classes = [(_token_class(x), _token_class(y)) for x, y in diffs]
    if not all(cx == cy and cx in ("number", "letter", "operator", "relation", "command") for cx, cy in classes):
        return False  # another structure: leave it to similarity
    if any(cx != "letter" for cx, _ in classes):
        return True
    forward: dict[str, str] = {}
    backward: dict[str, str] = {}
    for x, y in diffs:
        if forward.setdefault(x, y) != y or backward.setdefault(y, x) != x:
            return True  # the same letter renamed two ways: not a renaming
    bound = bound_letters(ref)
    return not all(y.lstrip("\\") in bound or y in bound for y in forward.values())


def position_score(verdict: bool | None, pred: str, ref: str, partial_credit: str, others: Sequence[str] = ()) -> float:
    """1.0 equivalent. Under "all" (the paper's literal rule), similarity otherwise. Under
    "undecided" (the default): 0.0 when the checker decides they differ, when the reference is
    within the checker's grammar (`in_grammar`: then only the checker's EQUAL pays, and a fill it
    cannot read earns 0), when the fill is a near miss, or when it is nearer another mask of the row
    than its own (`others`: that formula in the wrong place restores nothing here); 1.0 for the mask's
    symmetric relation read from the other end (`B \\cong A` for `A \\cong B`); else similarity, 0
    below `MIN_SIMILARITY`."""
    if verdict is True:
        return 1.0
    if partial_credit == "all":
        return similarity(pred, ref)
    if verdict is False or in_grammar(ref):
        return 0.0
    short = len(pred) <= MAX_NEAR_MISS_CHARS and len(ref) <= MAX_NEAR_MISS_CHARS
    if short and _mirror_image(list(canonical_tokens(pred)), list(canonical_tokens(ref))):
        return 1.0
    if near_miss(pred, ref):
        return 0.0
    score = similarity(pred, ref)
    if score < MIN_SIMILARITY:
        return 0.0
    own = normalize(ref)
    if any(normalize(o) != own and similarity(pred, o) > score for o in others):
        return 0.0  # nearer another mask of the row: that formula (or a variant of it) in the wrong slot
    return score


def _mirror_image(a: list[str], b: list[str]) -> bool:
    """`a` is the chain `b` read from the other end, across symmetric relations (`=`, `\\cong`,
    `\\sim`, `\\perp`, ...: `C \\sim B \\sim A` for `A \\sim B \\sim C`) or mirrored ones (`B \\supset A`
    for `A \\subset B`): it says the same."""
    if a != b and _oriented(a) == _oriented(b):
        return True  # `B \\supset A` for `A \\subset B`: mirrored relations, the same statement
    sa, ra = _chain(a)
    sb, rb = _chain(b)
    return bool(rb) and all(r in _SYMMETRIC for r in rb) and ra == rb[::-1] and sa == sb[::-1] and all(sa)


@register(MASKED_THEN_FILL, aliases=("mask_fill",))
@safe_reward
def mask_fill_reward(
    completions: Sequence[Any],
    masks: Sequence[Sequence[str]] | None = None,
    scored: Sequence[Sequence[int] | None] | None = None,
    task: Sequence[str | None] | None = None,
    *,
    think_prefilled: bool = False,
    partial_credit: str = "undecided",
    **kwargs: Any,
) -> list[float | None]:
    """r_mask: the mean over the scored positions of 1.0 (equivalent), 0.0 (decided not) or text
    similarity (checker undecided; under `partial_credit="all"` on every mismatch).

    A missing box or a missing position scores 0 there. Rows of another task, or without
    masks, get None.
    """
    if partial_credit not in PARTIAL_CREDIT:
        raise ValueError(f"partial_credit must be one of {PARTIAL_CREDIT}, got {partial_credit!r}")
    n = len(completions)
    masks, scored, task = column(masks, n), column(scored, n), column(task, n)
    rewards: list[float | None] = [None] * n
    pairs: list[tuple[str, str]] = []
    slots: list[int] = []  # the row of each pair, in order
    positions: dict[int, list[int]] = {}
    for i in range(n):
        if (task[i] is not None and task[i] != MASKED_THEN_FILL) or masks[i] is None or len(masks[i]) == 0:
            continue
        refs = list(masks[i])
        keep = [k for k in (scored[i] if scored[i] is not None else range(len(refs))) if 0 <= k < len(refs)]
        keep = keep or list(range(len(refs)))
        fills = parse_fills(completions[i], think_prefilled) or []
        positions[i] = keep
        rewards[i] = 0.0
        for k in keep:
            if k < len(fills) and fills[k]:
                pairs.append((fills[k], refs[k]))
                slots.append(i)
    totals: dict[int, float] = {}
    for i, (pred, ref), verdict in zip(slots, pairs, judge_formulas(pairs)):
        totals[i] = totals.get(i, 0.0) + position_score(verdict, pred, ref, partial_credit, masks[i])
    for i, keep in positions.items():
        rewards[i] = totals.get(i, 0.0) / len(keep)
    return rewards
