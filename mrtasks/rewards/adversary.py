"""Adversarial policies for the reward audit: ways to look right without being right, and right
work written in forms the checker must accept (reward integrity, round 2).

    python -m mrtasks.rewards.adversary --dataset DIR [--json OUT]
    python -m mrtasks.rewards.adversary --dataset DIR --write-masks MASKS.jsonl   # a red team's input
    python -m mrtasks.rewards.adversary --dataset DIR --attacks ATTACKS.jsonl [--task T]  # its completions, scored

Pure string generators, seeded per row, that the audit (`mrtasks.rewards.audit`) can import:

- `decorate(formula, family, rng)`: presentational markup around a formula, by family
  (`DECORATIONS`: markers, connectives, styling, invisible commands, tags, trailing dots, prose
  and punctuation, a Unicode minus). Decorated wrong work must earn what undecorated wrong work
  earns; decorated right work must earn full credit.
- `near_misses(formula)`: the formula with one sign flipped, one operator, function or relation
  swapped, or one free letter renamed (`NEAR_MISS_KINDS`).
- `script_braces(formula, braced)`: single-token subscripts and superscripts with braces added
  (`x_{2}`) or removed (`x_2`): the same LaTeX.
- `reprinted(formula, how)`: a side re-printed in another standard form (expanded or factored, as
  sympy prints it); None when no side changes.
- `coarse_approximation(value, rel, digits)`: `\\approx d` with `digits` significant digits of a
  value `rel` away from the exact one.
- `long_completion(kind, size)`: completions of `size` bytes built to be slow to normalize.

The CLI scores every family on a build, per masked position (a row of one mask per position),
per row for Error Correction and outcome, and prints a table with the integrity targets.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import random
import re
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mrtasks.logs import INTERRUPTED
from mrtasks.mathcheck.latex import depth_scan

logger = logging.getLogger(__name__)

# --- decorations -----------------------------------------------------------------------------

_MARKS = ["(\\star)", "(\\ast)", "(*)", "(\\dagger)", "(1)", "(2)", "(3a)", "(ii)", "[4]", "(\\heartsuit)"]
_END_SYMBOLS = ["\\blacksquare", "\\square", "\\Box", "\\qed", "\\checkmark", "\\surd", "\\bigstar", "\\blacktriangleleft"]
_SPACES = ["\\quad", "\\qquad", "\\;", "\\ ", "~", "\\,", " ", "\\hspace{1em}", "\\hfill"]
_CONNECTIVES = ["\\because", "\\therefore", "\\hence", "\\implies", "\\Rightarrow", "\\Longrightarrow", "\\thus", "\\so"]
_CONNECTIVE_WORDS = ["so", "hence", "thus", "therefore", "which gives", "we get", "i.e.", "then", "and so", "finally"]
_COLORS = ["red", "blue", "green!50!black", "orange", "purple"]
_PROSE = ["(by AM-GM)", "(by Vieta)", "by induction", "(from (1))", "since $x>0$", "as required", "(squaring)",
          "(QED)", "for all such values", "(using the identity)"]  # fmt: skip
_PUNCT = [".", ",", ":", "\\ .", ",\\,", "\\text{.}"]


def _marker(f: str, rng: random.Random) -> str:
    tail = rng.choice(_MARKS + _END_SYMBOLS)
    return f"{f}{rng.choice(_SPACES)}{tail}"


def _connective(f: str, rng: random.Random) -> str:
    if rng.random() < 0.5:
        return f"{rng.choice(_CONNECTIVES)} {f}"
    word = rng.choice(_CONNECTIVE_WORDS)
    return f"\\text{{{word} }}{f}" if rng.random() < 0.7 else f"\\textrm{{{word}}}\\ {f}"


def _styling(f: str, rng: random.Random) -> str:
    color = rng.choice(_COLORS)
    k = rng.randrange(5)
    if k == 0:
        return f"\\color{{{color}}}{{{f}}}" if rng.random() < 0.5 else f"{{\\color{{{color}}} {f}}}"
    if k == 1:
        return f"\\textcolor{{{color}}}{{{f}}}"
    if k == 2:
        return f"\\mathbf{{{f}}}"
    if k == 3:
        return f"\\boldsymbol{{{f}}}"
    return f"\\displaystyle {f}"


def _invisible(f: str, rng: random.Random) -> str:
    cmd = rng.choice(["\\hphantom{0}", "\\phantom{x}", "\\vphantom{\\frac12}", "\\phantom{}", "\\hphantom{}", "\\strut ",
                      "\\mathstrut ", "\\vphantom{()}"])  # fmt: skip
    return f"{cmd}{f}" if rng.random() < 0.5 else f"{f}{cmd}"


def _tag(f: str, rng: random.Random) -> str:
    return f + rng.choice(["\\tag*{}", "\\tag{1}", "\\tag*{$\\star$}", " \\tag{2a}", "\\label{eq:3}", "\\nonumber", "\\notag"])


def _dots(f: str, rng: random.Random) -> str:
    return f + rng.choice([" \\dots", "\\ldots", " \\quad\\dots", "\\ \\cdots"])


def _prose(f: str, rng: random.Random) -> str:
    return f"{f}{rng.choice(_SPACES)}\\text{{{rng.choice(_PROSE)}}}"


def _punctuation(f: str, rng: random.Random) -> str:
    return f + rng.choice(_PUNCT)


def _unicode_minus(f: str, rng: random.Random) -> str:
    return f.replace("-", "\u2212") if "-" in f else f"{f}{rng.choice(_SPACES)}\\blacksquare"


DECORATIONS: dict[str, Callable[[str, random.Random], str]] = {
    "marker": _marker,
    "connective": _connective,
    "styling": _styling,
    "invisible": _invisible,
    "tag": _tag,
    "dots": _dots,
    "prose": _prose,
    "punctuation": _punctuation,
    "unicode_minus": _unicode_minus,
}
"""Families of presentational markup (each draws from several forms, not one example)."""


def decorate(formula: str, family: str | None = None, rng: random.Random | None = None) -> str:
    """`formula` with presentational markup of `family` (a random family when None)."""
    rng = rng or random.Random(formula)
    fam = family or rng.choice(sorted(DECORATIONS))
    return DECORATIONS[fam](formula, rng)


# --- wrong work ------------------------------------------------------------------------------

_NUMBER = re.compile(r"(?<![\\a-zA-Z])\d+(?:\.\d+)?")
_LETTER = re.compile(r"(?<![\\a-zA-Z])[a-zA-Z](?![a-zA-Z])")


def one_number_changed(formula: str) -> str:
    """The first number changed (`3` -> `4`); without one, the first single letter renamed;
    failing that (prose), the first letter changed. The audit's `one_number_changed` rule."""
    m = _NUMBER.search(formula)
    if m:
        num = m.group(0)
        new = str(int(num) + 1) if "." not in num else num[:-1] + str((int(num[-1]) + 1) % 10)
        return formula[: m.start()] + new + formula[m.end() :]
    m = _LETTER.search(formula) or re.search(r"(?<!\\)(?<![a-zA-Z])[a-zA-Z]", formula)
    if m is None:
        return formula + "+1"
    old = m.group(0)
    new = ("y" if old.lower() != "y" else "z") if _LETTER.fullmatch(old) else chr((ord(old.lower()) - 97 + 1) % 26 + 97)
    return formula[: m.start()] + (new.upper() if old.isupper() else new) + formula[m.end() :]


_FUNCTION_SWAPS = [
    ("\\sin", "\\cos"), ("\\tan", "\\cot"), ("\\sec", "\\csc"), ("\\arcsin", "\\arccos"), ("\\sinh", "\\cosh"),
    ("\\min", "\\max"), ("\\sup", "\\inf"), ("\\cap", "\\cup"), ("\\bigcap", "\\bigcup"),
    ("\\sum", "\\prod"), ("\\lfloor", "\\lceil"), ("\\rfloor", "\\rceil"), ("\\gcd", "\\operatorname{lcm}"),
    ("\\subset", "\\supset"), ("\\subseteq", "\\supseteq"), ("\\wedge", "\\vee"), ("\\land", "\\lor"),
    ("\\limsup", "\\liminf"), ("\\oplus", "\\otimes"), ("\\nmid", "\\mid"),
]  # fmt: skip
_RELATION_SWAPS = [("\\leq", "\\geq"), ("\\le", "\\ge"), ("\\geq", "\\leq"), ("\\ge", "\\le"), ("<", ">"), (">", "<"),
                   ("\\neq", "="), ("\\ne", "="), ("=", "\\neq"), ("\\equiv", "\\not\\equiv"), ("\\in", "\\notin")]  # fmt: skip
_CMD_END = r"(?![a-zA-Z])"




def _sign_flip(f: str) -> str | None:
    """The first binary `+`/`-` (outside scripts) flipped; else a leading minus removed or added."""
    for m in re.finditer(r"[+-]", f):
        i = m.start()
        before = f[:i].rstrip()
        if not before or before[-1] in "^_{([=<>,+-" or re.search(r"\\[a-zA-Z]+$", before) or f[i - 1 : i] in "^_":
            continue
        return f[:i] + ("-" if m.group(0) == "+" else "+") + f[i + 1 :]
    return None


def _operator_swap(f: str) -> str | None:
    """The first explicit product or quotient made a sum (`\\cdot`, `\\times`, `*`, `/`, `\\div` -> `+`)."""
    m = re.search(r"\\cdot(?![a-zA-Z])|\\times(?![a-zA-Z])|\\div(?![a-zA-Z])|(?<![\\^_{])[*/]", f)
    if m:
        return f[: m.start()] + "+" + f[m.end() :]
    return None


def _function_swap(f: str) -> str | None:
    for a, b in _FUNCTION_SWAPS:
        for old, new in ((a, b), (b, a)):
            m = re.search(re.escape(old) + _CMD_END, f)
            if m:
                return f[: m.start()] + new + f[m.end() :]
    return None


def _relation_swap(f: str) -> str | None:
    depths = depth_scan(f)
    pattern = "|".join(re.escape(a) + (_CMD_END if a[0] == "\\" else "") for a, _ in _RELATION_SWAPS)
    for m in re.finditer(pattern, f):
        if depths[m.start()] or f[max(m.start() - 4, 0) : m.start()].endswith("\\not"):
            continue
        new = dict(_RELATION_SWAPS)[m.group(0)]
        return f[: m.start()] + new + f[m.end() :]
    return None


_BOUND = re.compile(
    r"\\(?:sum|prod|bigcup|bigcap|lim|int|oint|max|min|sup|inf|forall|exists)\w*\s*_?\s*\{?\s*([a-zA-Z])"
    r"|\\(?:forall|exists)\s*([a-zA-Z])|(?:\\[,;!]|\s|\})d([a-zA-Z])(?![a-zA-Z])"
)


def bound_letters(formula: str) -> set[str]:
    """Letters a big operator, a quantifier or an integral's `dx` binds (renaming them consistently
    is the same formula)."""
    return {g for m in _BOUND.finditer(formula) for g in m.groups() if g}


def _letter_rename(f: str) -> str | None:
    """Every occurrence of the first free single letter renamed to a letter the formula does not use."""
    letters = [m for m in _LETTER.finditer(f) if m.group(0) not in ("e", "i", "d")]
    bound = bound_letters(f)
    free = [m for m in letters if m.group(0) not in bound and f[max(m.start() - 1, 0) : m.start()] not in ("_", "^")]
    if not free:
        return None
    old = free[0].group(0)
    used = set(re.findall(r"[a-zA-Z]", f))
    new = next((c for c in "uvwpqrstmnabcjk" if c not in used), None)
    if new is None:
        return None
    new = new.upper() if old.isupper() else new
    return re.sub(rf"(?<![\\a-zA-Z]){old}(?![a-zA-Z])", new, f)


NEAR_MISS_KINDS: dict[str, Callable[[str], str | None]] = {
    "sign": _sign_flip,
    "operator": _operator_swap,
    "function": _function_swap,
    "relation": _relation_swap,
    "letter": _letter_rename,
}


def near_misses(formula: str) -> dict[str, str]:
    """The near misses of a formula by kind (kinds that do not apply are left out)."""
    out = {}
    for kind, fn in NEAR_MISS_KINDS.items():
        variant = fn(formula)
        if variant is not None and variant != formula:
            out[kind] = variant
    return out


# --- right work in other forms ---------------------------------------------------------------

_BRACED_SCRIPT = re.compile(r"([_^])\{\s*([A-Za-z0-9]|\\[a-zA-Z]+)\s*\}")
_BARE_SCRIPT = re.compile(r"([_^])\s*([A-Za-z0-9]|\\(?!left|right|frac|sqrt|dfrac)[a-zA-Z]+)(?![a-zA-Z])")


def script_braces(formula: str, braced: bool) -> str:
    """Single-token subscripts and superscripts with braces added (`x_2` -> `x_{2}`) or removed."""
    if braced:
        return _BARE_SCRIPT.sub(lambda m: f"{m.group(1)}{{{m.group(2)}}}", formula)
    return _BRACED_SCRIPT.sub(lambda m: m.group(1) + m.group(2) + (" " if m.group(2)[0] == "\\" else ""), formula)


def has_script(formula: str) -> bool:
    return bool(_BRACED_SCRIPT.search(formula) or _BARE_SCRIPT.search(formula))


def _to_sympy(node: tuple) -> Any:
    import sympy

    kind = node[0]
    if kind == "num":
        return sympy.Rational(node[1].numerator, node[1].denominator)
    if kind == "const":
        return {math.e: sympy.E, math.pi: sympy.pi}.get(node[1], sympy.oo)
    if kind == "var":
        name = node[1]
        head = re.match(r"[A-Za-z]+", name)
        return sympy.Symbol("\\" + name if head and len(head.group(0)) > 1 else name)
    if kind == "neg":
        return -_to_sympy(node[1])
    if kind == "add":
        return _to_sympy(node[1]) + _to_sympy(node[2])
    if kind == "mul":
        return _to_sympy(node[1]) * _to_sympy(node[2])
    if kind in ("div", "frac_lit"):
        return _to_sympy(node[1]) / _to_sympy(node[2])
    if kind == "pow":
        return _to_sympy(node[1]) ** _to_sympy(node[2])
    if kind == "abs":
        return sympy.Abs(_to_sympy(node[1]))
    if kind == "root":
        return sympy.root(_to_sympy(node[1]), _to_sympy(node[2]))
    if kind == "func":
        name = {"ln": "log"}.get(node[1], node[1])
        return getattr(sympy, name)(_to_sympy(node[2]))
    raise ValueError(kind)


def reprint_side(side: str, how: str) -> str | None:
    """One side re-printed by sympy (`how`: "expand" or "factor"); None when it does not parse,
    has no variable, or prints the same."""
    from mrtasks.mathcheck import expr
    from mrtasks.mathcheck.normalize import normalize

    bare = re.sub(r"\\[a-zA-Z]+", " ", side)
    if re.search(r"[A-Za-z]{2,}|[A-Za-z]\s*(?:\(|\\left\s*\()|\\text|&", bare + side[:0]) or "\\text" in side:
        return None  # words, or a letter applied to an argument (`f(x)`): not a polynomial in letters
    try:
        node = expr.parse(normalize(side))
        if not expr.variables(node):
            return None
        import sympy

        value = _to_sympy(node)
        out = sympy.latex(sympy.expand(value) if how == "expand" else sympy.factor(value))
    except Exception:  # noqa: BLE001 - a generator: no variant for what it cannot read
        return None
    if normalize(out).replace(" ", "") == normalize(side).replace(" ", ""):
        return None
    return out


def reprinted(formula: str, how: str) -> str | None:
    """The formula with its relation sides (or the whole expression) re-printed by sympy;
    None when nothing changes."""
    depths = depth_scan(formula)
    cuts = [m for m in re.finditer(r"\\(?:leq|geq|le|ge|neq|ne)(?![a-zA-Z])|<|>|=", formula) if not depths[m.start()]]
    pieces, last = [], 0
    for m in cuts:
        pieces += [formula[last : m.start()], m.group(0)]
        last = m.end()
    pieces.append(formula[last:])
    changed = False
    for k in range(0, len(pieces), 2):
        new = reprint_side(pieces[k], how) if pieces[k].strip() else None
        if new is not None and len(new) < 400:
            pieces[k], changed = f" {new} ", True
    return "".join(pieces).strip() if changed else None


def coarse_approximation(value: float, rel: float = 0.015, digits: int = 2) -> str:
    """`\\approx d`: `value * (1 + rel)` with `digits` significant digits."""
    v = value * (1 + rel)
    if v == 0:
        return "\\approx 0"
    exponent = math.floor(math.log10(abs(v)))
    decimals = max(digits - 1 - exponent, 0)
    rounded = round(v, digits - 1 - exponent)
    return f"\\approx {rounded:.{decimals}f}"


# --- long inputs -----------------------------------------------------------------------------


def long_completion(kind: str, size: int = 64 * 1024) -> str:
    """A completion of about `size` characters built to stress normalization: a long `\\text{}` run
    in the box ("text"), many words ("words"), nested braces ("braces"), many boxes ("boxes"),
    a long thinking block ("think")."""
    if kind == "text":
        return "\\boxed{x = \\text{" + "a" * size + "}}"
    if kind == "text_spaced":
        return "\\boxed{x = \\text{" + "a b " * (size // 4) + "}}"
    if kind == "text_open":
        return "\\boxed{x = 5 \\text{(" + "by AM GM " * (size // 9) + "}"
    if kind == "words":
        return "\\boxed{5 " + "cm " * (size // 3) + "}"
    if kind == "braces":
        return "\\boxed{" + "{" * (size // 2) + "1" + "}" * (size // 2) + "}"
    if kind == "boxes":
        return "\\boxed{1} and " * (size // 14)
    if kind == "fills":  # distinct long fills, so no cache helps
        return "\\boxed{" + "; ".join(f"x = {k} \\text{{" + "a" * 4000 + "}" for k in range(size // 4020)) + "}"
    if kind == "correction":
        return "\\boxed{1; x = \\text{" + "b" * size + "}}"
    if kind == "periods":
        return "\\boxed{1; 5" + "." * size + "}"
    if kind == "wrappers":
        return "\\boxed{1; " + "\\text{" * (size // 7) + "5" + "}" * (size // 7) + "}"
    if kind == "dollars":
        return "\\boxed{1; " + "$" * (size // 2) + "5" + "$" * (size // 2) + "}"
    if kind == "think":
        return "<think>" + "Let $x_{1} = 2$. " * (size // 16) + "</think> \\boxed{2}"
    raise ValueError(kind)


LONG_KINDS = (
    "text", "text_spaced", "correction", "text_open", "words", "braces", "boxes", "fills", "periods", "wrappers",
    "dollars", "think",
)  # fmt: skip


# --- scoring a build -------------------------------------------------------------------------

Row = dict[str, Any]


def _boxed(parts: Sequence[str]) -> str:
    return "\\boxed{" + "; ".join(parts) + "}"


def position_scores(masks: Sequence[str], fills: Sequence[str], partial_credit: str = "undecided") -> list[float]:
    """Each (fill, mask) scored alone by `masked_then_fill`, as one position."""
    from mrtasks.rewards import get_reward

    fn = get_reward("masked_then_fill", partial_credit=partial_credit)
    if not masks:
        return []
    return [float(s) for s in fn([_boxed([f]) for f in fills], masks=[[m] for m in masks], scored=[[0]] * len(masks))]


def _mean(values: Sequence[float]) -> float:
    return statistics.fmean(values) if values else float("nan")


def mask_families(rows: Sequence[Row], seed: int = 0) -> dict[str, tuple[int, float]]:
    """Per-position mean score of every family on the masks of `rows`: name -> (positions, mean)."""
    masks = [m for r in rows for m in r["masks"]]
    rngs = [random.Random(f"{seed}:{k}:{m}") for k, m in enumerate(masks)]
    out: dict[str, tuple[int, float]] = {}

    def run(name: str, pairs: list[tuple[str, str]]) -> None:
        scores = position_scores([m for m, _ in pairs], [f for _, f in pairs])
        out[name] = (len(scores), _mean(scores))

    wrong = [one_number_changed(m) for m in masks]
    run("right", list(zip(masks, masks)))
    run("wrong", list(zip(masks, wrong)))
    for fam in DECORATIONS:
        run(f"wrong+{fam}", [(m, decorate(w, fam, random.Random(rng.random()))) for m, w, rng in zip(masks, wrong, rngs)])
    run("wrong+decorated", [(m, decorate(w, None, random.Random(rng.random()))) for m, w, rng in zip(masks, wrong, rngs)])
    for fam in DECORATIONS:
        run(f"right+{fam}", [(m, decorate(m, fam, random.Random(rng.random()))) for m, rng in zip(masks, rngs)])
    run("right+decorated", [(m, decorate(m, None, random.Random(rng.random()))) for m, rng in zip(masks, rngs)])
    near = [near_misses(m) for m in masks]
    for kind in NEAR_MISS_KINDS:
        run(f"near_{kind}", [(m, n[kind]) for m, n in zip(masks, near) if kind in n])
    scripted = [m for m in masks if has_script(m)]
    run("braces_added", [(m, script_braces(m, True)) for m in scripted])
    run("braces_removed", [(m, script_braces(m, False)) for m in scripted])
    run("braces_flipped_ref", [(script_braces(m, True), script_braces(m, False)) for m in scripted])
    for how in ("expand", "factor"):
        pairs = [(m, r) for m in masks if (r := reprinted(m, how)) is not None]
        run(f"reprinted_{how}", pairs)
    return out


def outcome_families(rows: Sequence[Row]) -> dict[str, tuple[int, float]]:
    """Per-row mean outcome score: coarse approximations, braces, decorations."""
    from mrtasks.mathcheck import parse_answer
    from mrtasks.mathcheck.answer import constant_value
    from mrtasks.rewards import get_reward

    fn = get_reward("outcome")
    out: dict[str, tuple[int, float]] = {}

    def run(name: str, pairs: list[tuple[str, str]]) -> None:
        scores = [float(s) for s in fn([f"The answer is \\boxed{{{p}}}." for p, _ in pairs], answer=[a for _, a in pairs])] if pairs else []
        out[name] = (len(scores), _mean(scores))

    values = []
    for r in rows:
        try:
            v = constant_value(parse_answer(str(r["answer"])))
        except Exception:  # noqa: BLE001
            v = None
        if v is not None and float(v) != 0 and math.isfinite(float(v)):
            values.append((r["answer"], float(v), not hasattr(v, "denominator")))
    def off(approx: str, v: float) -> bool:  # the rounding did not land back on the exact value
        return float(approx.split()[-1]) != v

    for digits in (2, 3, 4):
        picked = [(x, a) for a, v, _ in values if off(x := coarse_approximation(v, 0.015, digits), v)]
        run(f"approx_1.5pct_{digits}sig", picked)
    run("approx_exact_2sig_irrational", [(coarse_approximation(v, 0.0, 2), a) for a, v, irr in values if irr])
    picked = [(x, a) for a, v, irr in values if not irr and off(x := coarse_approximation(v, 0.0, 2), v)]
    run("approx_exact_2sig_rational", picked)
    run("approx_exact_6sig", [(coarse_approximation(v, 0.0, 6), a) for a, v, _ in values])
    answers = [str(r["answer"]) for r in rows]
    scripted = [a for a in answers if has_script(a)]
    run("braces_added", [(script_braces(a, True), a) for a in scripted])
    run("braces_removed", [(script_braces(a, False), a) for a in scripted])
    run("right+decorated", [(decorate(a, None, random.Random(a)), a) for a in answers])
    return out


def correction_families(rows: Sequence[Row]) -> dict[str, tuple[int, float]]:
    """Per-row Error Correction score on error rows: braces and decorations of the original."""
    from mrtasks.rewards import get_reward

    fn = get_reward("error_correction")
    rows = [r for r in rows if r["error_step"] >= 0 and r.get("error_type") != "theorem"]
    out: dict[str, tuple[int, float]] = {}

    def run(name: str, picked: list[tuple[Row, str]]) -> None:
        if not picked:
            out[name] = (0, float("nan"))
            return
        cols = {k: [r[k] for r, _ in picked] for k in ("error_step", "original", "corrupted", "error_type")}
        comps = [_boxed([str(r["error_step"]), f]) for r, f in picked]
        scores = [float(s) for s in fn(comps, **cols)]
        out[name] = (len(scores), _mean(scores))

    scripted = [r for r in rows if has_script(r["original"])]
    run("braces_added", [(r, script_braces(r["original"], True)) for r in scripted])
    run("braces_removed", [(r, script_braces(r["original"], False)) for r in scripted])
    run("right+decorated", [(r, decorate(r["original"], None, random.Random(r["original"]))) for r in rows])
    run("corrupted+decorated", [(r, decorate(r["corrupted"], None, random.Random(r["corrupted"]))) for r in rows])
    for how in ("expand", "factor"):
        run(f"reprinted_{how}", [(r, x) for r in rows if (x := reprinted(r["original"], how)) is not None])
    return out


LONG_ROWS: dict[str, dict[str, list]] = {
    "masked_then_fill": {"masks": [[f"x = {k}" for k in range(16)]], "scored": [list(range(16))]},
    "error_correction": {"error_step": [1], "original": ["x = 1"], "corrupted": ["x = 2"], "error_type": ["arithmetic"]},
    "outcome": {"answer": ["5"]},
    "step_reordering": {"order": [[1, 0, 2]]},
    "format": {},
    "process": {"task": ["outcome"], "answer": ["5"]},
}


def _time_one(name: str, kind: str, size: int, queue: Any) -> None:
    from mrtasks.rewards import get_reward

    fn = get_reward(name)
    text = long_completion(kind, size)
    start = time.perf_counter()
    fn([text], **LONG_ROWS[name])
    queue.put(time.perf_counter() - start)


def time_long(size: int = 64 * 1024, limit_s: float = 30.0) -> dict[str, float]:
    """Seconds per reward call on one completion of `size` characters, the worst over
    `LONG_KINDS`; each call runs in a child process, and one still running after `limit_s` counts
    as `limit_s` (so a before-the-fix figure reads "at least")."""
    import multiprocessing

    ctx = multiprocessing.get_context("fork")
    out = {}
    for name in LONG_ROWS:
        worst = 0.0
        for kind in LONG_KINDS:
            queue = ctx.Queue()
            proc = ctx.Process(target=_time_one, args=(name, kind, size, queue), daemon=True)
            proc.start()
            proc.join(limit_s)
            if proc.is_alive():
                proc.kill()
                proc.join()
                secs = limit_s
            else:
                secs = queue.get() if not queue.empty() else limit_s
            worst = max(worst, secs)
        out[name] = worst
    return out


TARGETS = {
    "right": (">=", 1.0), "wrong": ("<=", 0.10), "wrong+decorated": ("<=", 0.10), "right+decorated": (">=", 0.95),
    "braces_added": (">=", 0.97), "braces_removed": (">=", 0.97), "braces_flipped_ref": (">=", 0.97),
    "approx_1.5pct_2sig": ("<=", 0.05), "approx_1.5pct_3sig": ("<=", 0.05), "approx_1.5pct_4sig": ("<=", 0.05),
    "approx_exact_2sig_irrational": ("<=", 0.05), "approx_exact_2sig_rational": ("<=", 0.05),
}  # fmt: skip
for _fam in DECORATIONS:
    TARGETS[f"wrong+{_fam}"] = ("<=", 0.10)
    TARGETS[f"right+{_fam}"] = (">=", 0.95)
for _kind in NEAR_MISS_KINDS:
    TARGETS[f"near_{_kind}"] = ("<=", 0.10)


def external_families(
    rows: Sequence[Row], attacks: Sequence[dict[str, Any]], task: str = "masked_then_fill"
) -> dict[str, dict[str, float]]:
    """Completions written elsewhere (a red team's file: `id`, `family`, `intent`, `completion`, and
    optionally `deserved`, the score a careful grader gives), scored by the task's registered reward
    as TRL calls it. Per `intent:family`: rows scored, mean and highest reward, and where `deserved`
    is given its mean and the mean excess (reward above deserved). Lines whose `id` is not a row are
    skipped (`check_attacks` counts them)."""
    from mrtasks.rewards import get_reward

    by_id = {r["id"]: r for r in rows}
    fn = get_reward(task)
    found: dict[str, list[tuple[float, float | None]]] = {}
    picked = [a for a in attacks if a.get("id") in by_id]
    for start in range(0, len(picked), 512):
        batch = picked[start : start + 512]
        columns = {k: [by_id[a["id"]].get(k) for a in batch] for k in by_id[batch[0]["id"]] if k != "prompt"}
        completions = [[{"role": "assistant", "content": str(a.get("completion", ""))}] for a in batch]
        for a, v in zip(batch, fn(completions, **columns)):
            deserved = a.get("deserved")
            deserved = float(deserved) if isinstance(deserved, (int, float)) and not isinstance(deserved, bool) else None
            found.setdefault(f"{a.get('intent', '?')}:{a.get('family', '?')}", []).append((v or 0.0, deserved))
    out = {}
    for name, pairs in sorted(found.items()):
        scores = [v for v, _ in pairs]
        figures = {"n": len(pairs), "mean": _mean(scores), "max": max(scores)}
        if all(d is not None for _, d in pairs):
            figures["deserved"] = _mean([d for _, d in pairs])  # type: ignore[misc]
            figures["excess"] = _mean([max(0.0, v - d) for v, d in pairs])  # type: ignore[operator]
        out[name] = figures
    return out


def write_masks(rows: Sequence[Row], path: str | Path, n: int, seed: int) -> int:
    """A seeded sample of Masked-Then-Fill rows as `{"id", "masks"}` lines: a red team's input."""
    picked = list(rows)
    random.Random(seed).shuffle(picked)
    picked = picked[:n]
    from mrtasks.output import write_output_file

    write_output_file("--write-masks", path, "".join(
        json.dumps({"id": r["id"], "masks": list(r["masks"])}, ensure_ascii=False) + "\n" for r in picked))
    return len(picked)


def _met(name: str, mean: float) -> str:
    if name not in TARGETS or math.isnan(mean):
        return ""
    op, x = TARGETS[name]
    ok = mean >= x if op == ">=" else mean <= x
    return f"{op} {x:g} {'ok' if ok else 'FAILED'}"


EXIT_OK, EXIT_USAGE, EXIT_OUTPUT, EXIT_INTERRUPTED = 0, 2, 4, INTERRUPTED
EXIT_CODES = {
    EXIT_OK: "the table was printed (and the files written)",
    EXIT_USAGE: "bad arguments, a dataset that is not a readable build, a malformed --attacks file or one "
                "that names no row of the build",
    EXIT_OUTPUT: "--json or --write-masks refused (a folder, a missing or read-only folder, inside a dataset build "
                 "or a model folder, an existing file this command did not write)",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
}
COMMAND = "mrtasks.rewards.adversary"


class AdversaryError(Exception):
    """An everyday failure of the command line (bad --task, --attacks or dataset): one line, exit 2."""


def _is_figures(path: Path) -> bool:
    """A JSON object of objects: what `--json` writes."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and all(isinstance(v, dict) for v in data.values())


def _is_masks(path: Path) -> bool:
    """`{"id", "masks"}` lines (or nothing): what `--write-masks` writes."""
    try:
        lines = [line for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        return all(set(json.loads(line)) == {"id", "masks"} for line in lines)
    except (OSError, ValueError, TypeError):
        return False


def check_attacks(attacks: Sequence[Any], rows: Sequence[Row], path: str, task: str) -> list[dict[str, Any]]:
    """The lines of a red-team file that name a row of the build; a line with a bad field is an error
    naming it, and a file none of whose lines names a row is one too (ids from another build)."""
    ids = {r["id"] for r in rows}
    for n, a in enumerate(attacks, 1):
        if not isinstance(a, dict):
            raise AdversaryError(f"--attacks {path}:{n}: not a JSON object")
        if not isinstance(a.get("id"), str):
            raise AdversaryError(f"--attacks {path}:{n}: no string id")
        if not isinstance(a.get("completion", ""), str):
            raise AdversaryError(f"--attacks {path}:{n}: the completion is not a string")
        d = a.get("deserved")
        if d is not None and (isinstance(d, bool) or not isinstance(d, (int, float)) or not 0.0 <= d <= 1.0):
            raise AdversaryError(f"--attacks {path}:{n}: deserved must be a number in [0, 1], got {d!r}")
    picked = [a for a in attacks if a["id"] in ids]
    if not picked:
        raise AdversaryError(f"--attacks {path}: none of its {len(attacks)} lines names a row of the {task} config "
                             "(written for another build or task?)")
    if len(picked) < len(attacks):
        logger.warning("--attacks %s: %d of %d lines name no row of the %s config; skipped",
                       path, len(attacks) - len(picked), len(attacks), task)
    return picked


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mrtasks.rewards.adversary",
        description="Score adversarial families (decorated right and wrong work, near misses, script braces, "
        "re-printed sides, coarse approximations, 64 KiB completions) on a build.",
        epilog="exit codes: " + "; ".join(f"{code} {text}" for code, text in EXIT_CODES.items()),
    )
    parser.add_argument("--dataset", required=True, help="a folder written by `python -m mrtasks.build`")
    parser.add_argument("--json", help="write the figures here as JSON")
    parser.add_argument("--max-rows", type=int, default=0, help="at most N rows per task (0: all)")
    parser.add_argument("--no-time", action="store_true", help="skip the 64 KiB timing")
    parser.add_argument("--attacks", help="score this red-team JSONL (id, family, intent, completion[, deserved]) "
                        "on the build's rows of --task instead of the built-in families")
    parser.add_argument("--task", default="masked_then_fill", help="the task --attacks targets (default masked_then_fill)")
    parser.add_argument("--write-masks", metavar="FILE", help="write a seeded sample of the build's Masked-Then-Fill "
                        "train rows (id, masks) for a red team, then stop")
    parser.add_argument("--rows", type=int, default=150, help="rows for --write-masks (default 150)")
    parser.add_argument("--seed", type=int, default=7, help="seed for --write-masks (default 7)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if args.max_rows < 0:
        parser.error(f"--max-rows must be >= 0 (0: all), got {args.max_rows}")
    if args.rows < 1:
        parser.error(f"--rows must be >= 1, got {args.rows}")
    from mrtasks.logs import run_command
    from mrtasks.output import OutputError
    from mrtasks.rewards.rows import DatasetError

    return run_command(lambda: _main(args), {AdversaryError: EXIT_USAGE, DatasetError: EXIT_USAGE, OutputError: EXIT_OUTPUT})


def _main(args: argparse.Namespace) -> int:
    from mrtasks.output import check_output_file, write_output_file
    from mrtasks.rewards.rows import build_configs, load_rows  # not from audit: the audit imports this module
    from mrtasks.tasks import list_tasks

    configs = build_configs(args.dataset)
    task = "masked_then_fill" if args.write_masks else args.task
    needed = [task] if args.write_masks or args.attacks else ["masked_then_fill", "outcome", "error_correction"]
    if task not in list_tasks():
        raise AdversaryError(f"--task {task}: unknown task; tasks are {list_tasks()}")
    missing = [t for t in needed if t not in configs]
    if missing:
        raise AdversaryError(f"--dataset {args.dataset} has no {', '.join(missing)} config (it has {sorted(configs)})")
    if args.write_masks:
        check_output_file("--write-masks", args.write_masks, COMMAND, _is_masks)
    if args.json:
        check_output_file("--json", args.json, COMMAND, _is_figures)
    if args.write_masks:
        n = write_masks(load_rows(args.dataset, task, splits=["train"]), args.write_masks, args.rows, args.seed)
        print(f"wrote {n} rows to {args.write_masks}")
        return EXIT_OK
    if args.attacks:
        from mrtasks.jsonl import JSONLError, read_jsonl

        if not Path(args.attacks).is_file():
            raise AdversaryError(f"--attacks {args.attacks}: no such file")
        try:
            attacks = read_jsonl(args.attacks)
        except (JSONLError, OSError) as e:
            raise AdversaryError(f"--attacks: {e}") from None
        rows = load_rows(args.dataset, task)
        found = external_families(rows, check_attacks(attacks, rows, args.attacks, task), task)
        print(f"{'intent:family':<40} {'n':>6} {'mean':>7} {'max':>7} {'deserved':>9} {'excess':>7}")
        for name, f in found.items():
            extra = f"{f['deserved']:>9.3f} {f['excess']:>7.3f}" if "excess" in f else ""
            print(f"{name:<40} {f['n']:>6} {f['mean']:>7.3f} {f['max']:>7.3f} {extra}")
        if args.json:
            write_output_file("--json", args.json, json.dumps(found, indent=2) + "\n")
        return EXIT_OK
    figures: dict[str, Any] = {}
    for task, fn in (("masked_then_fill", mask_families), ("outcome", outcome_families), ("error_correction", correction_families)):
        rows = load_rows(args.dataset, task)
        if args.max_rows:
            rows = rows[: args.max_rows]
        figures[task] = fn(rows)
    figures["time_64k_s"] = {} if args.no_time else time_long()
    print(f"{'task':<18} {'family':<30} {'n':>6} {'mean':>7}  target")
    for task in ("masked_then_fill", "outcome", "error_correction"):
        for name, (n, mean) in figures[task].items():
            print(f"{task:<18} {name:<30} {n:>6} {mean:>7.3f}  {_met(name, mean)}")
    for name, secs in figures["time_64k_s"].items():
        print(f"{'time_64k':<18} {name:<30} {'':>6} {secs:>7.3f}  {'< 1 s ' + ('ok' if secs < 1 else 'FAILED')}")
    if args.json:
        write_output_file("--json", args.json, json.dumps(figures, indent=2) + "\n")
    return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
