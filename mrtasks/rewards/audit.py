"""How hard is it to game these rewards? Score degenerate policies on every task config of a build.

    python -m mrtasks.rewards.audit --dataset build/mr-rlvr-tasks [--out DIR]

Each policy is a named, pure function `row -> completion`: the reference answer (must earn 1.0 on
every row), a positive control (right work in another form) and cheap ways to look right without
doing the task (rotated masks, one number changed, formulas copied from the problem, a constant,
no box, a surface-cue step order, a truncated think block, an invented next turn, several boxes).
A reward worth training on gives the reference and the positive control full credit and the
degenerate policies close to nothing. The audit prints a table, writes `audit.json` and (when
matplotlib is installed: the `eval` extra) `audit.png`; `markdown_table(results)` is what the
dataset card carries.

Integrity families (issue 17), drawn by `mrtasks.rewards.adversary` with a generator seeded per
(policy, row, position): right and wrong work with a decoration of each family (a marker, a
connective, styling or invisible commands, a trailing tag/dots/prose, a Unicode minus), sign,
operator, function, relation and letter near misses (scored per edited position), subscript
braces added or removed, and in Outcome coarse approximations (two significant digits of a value
1.5% off, or of an irrational exact answer). A policy may apply to some rows only (`applies`:
the rows it is scored on, one per edited position for the per-position families) and may be
held to another policy's mean on the same rows (`not_above`: decorated wrong work earns no more
than the same wrong work undecorated). Baselines without a target measure the task rather than
the reward: Step Reordering's surface-cue, random and dataflow orders, Error Correction's
calculator (`mrtasks.rewards.baselines`).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import random
import re
import statistics
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any

from mrtasks.logs import INTERRUPTED, run_command
from mrtasks.mathcheck import Verdict, judge_in_process, parse_answer
from mrtasks.mathcheck.answer import constant_value
from mrtasks.mathcheck.latex import depth_scan
from mrtasks.output import OutputError, OwnedFolder, Owner
from mrtasks.rewards.adversary import DECORATIONS, NEAR_MISS_KINDS, coarse_approximation, decorate, script_braces
from mrtasks.rewards.baselines import calculator_correction, dataflow_order
from mrtasks.rewards.outcome import reference_text
from mrtasks.rewards.rows import DatasetError, build_configs, load_rows
from mrtasks.tasks import ERROR_CORRECTION, MASKED_THEN_FILL, OUTCOME, STEP_REORDERING, get_task, list_tasks

logger = logging.getLogger(__name__)

Row = dict[str, Any]
EOT_QWEN = "<|im_end|>"


@dataclass(frozen=True)
class Policy:
    """A named way of answering a row, the reward options it is scored with, and its target."""

    name: str
    description: str
    answer: Callable[[Row], str]
    options: dict[str, Any] = field(default_factory=dict)
    """Reward options (`get_reward(name, **options)`), e.g. think_prefilled for R1-style prompts."""
    target: tuple[str, float] | None = None
    """("min", x): every row must reach x; (">=", x) / ("<=", x): the mean must."""
    applies: Callable[[Row], list[Row]] | None = None
    """The rows the policy is scored on, per audited row: [] where it does not apply, one row per
    edited position (`scored` narrowed to it) for per-position policies. None: every row as is."""
    not_above: str | None = None
    """Another policy of the task whose mean, on this policy's rows, this one must not exceed."""
    family: bool = False
    """An integrity family (decorations, near misses, braces, approximations): the dataset card
    scores it on a smaller seeded sample (`FAMILY_ROWS`); the audit CLI on every row."""


# --- formula surgery (pure string work; used by the policies) --------------------------------

_REL = re.compile(r"\\(?:leqslant|geqslant|leq|geq|neq|le|ge|ne|lt|gt)(?![a-zA-Z])|<=|>=|=|<|>")
_MIRROR = {"<": ">", ">": "<", "\\lt": "\\gt", "\\gt": "\\lt", "<=": ">=", ">=": "<=", "\\le": "\\ge",
           "\\ge": "\\le", "\\leq": "\\geq", "\\geq": "\\leq", "\\leqslant": "\\geqslant",
           "\\geqslant": "\\leqslant"}  # fmt: skip
_COMMAND = re.compile(r"\\[a-zA-Z]+")
_SAFE_COMMANDS = {
    "\\frac", "\\dfrac", "\\tfrac", "\\sqrt", "\\cdot", "\\times", "\\pi", "\\left", "\\right", "\\sin",
    "\\cos", "\\tan", "\\log", "\\ln", "\\exp", "\\alpha", "\\beta", "\\gamma", "\\theta", "\\lambda",
    "\\mu", "\\sigma", "\\phi", "\\omega", "\\leq", "\\geq", "\\le", "\\ge", "\\neq", "\\ne",
}  # fmt: skip
_NOT_OPERAND = {"\\cdot", "\\times", "\\left", "\\right", "\\le", "\\ge", "\\leq", "\\geq", "\\ne", "\\neq"}
_UNSAFE_CHARS = set(",;|&%$")




def split_relations(formula: str) -> tuple[list[str], list[str]] | None:
    """The members and relations of a relation or chain (`a = b < c` -> `[a, b, c], [=, <]`), split
    at top level; None without a relation or with an empty member."""
    depths = depth_scan(formula)
    hits = [m for m in _REL.finditer(formula) if depths[m.start()] == 0]
    if not hits:
        return None
    members, rels, last = [], [], 0
    for m in hits:
        members.append(formula[last : m.start()].strip())
        rels.append(m.group(0))
        last = m.end()
    members.append(formula[last:].strip())
    return (members, rels) if all(members) else None


def _reorderable(side: str) -> bool:
    if any(c in _UNSAFE_CHARS for c in side) or "\\{" in side or "\\\\" in side or _REL.search(side):
        return False
    return all(cmd in _SAFE_COMMANDS for cmd in _COMMAND.findall(side))


def signed_terms(side: str) -> list[str] | None:
    """The top-level terms of a sum with their signs (`x^2 - 3x` -> `['x^2', '-3x']`), or None
    when splitting is not obviously safe (lists, absolute values, big operators, unknown commands)."""
    if not _reorderable(side):
        return None
    depths = depth_scan(side)
    terms, last = [], 0
    for i, c in enumerate(side):
        if c not in "+-" or depths[i] or i == 0:
            continue
        before = side[:i].rstrip()
        if not before or before[-1] in "^_{([+-=<>*/":
            continue  # a sign, not an operator
        cmd = re.search(r"\\[a-zA-Z]+$", before)
        if cmd and cmd.group(0) in _NOT_OPERAND:
            continue
        terms.append(side[last:i].strip())
        last = i
    terms.append(side[last:].strip())
    return terms if len(terms) > 1 and all(terms) else None


def join_terms(terms: Sequence[str]) -> str:
    out = ""
    for k, t in enumerate(terms):
        t = t.strip()
        if k == 0:
            out = t[1:].strip() if t.startswith("+") else t
        elif t.startswith(("+", "-")):
            out += f" {t[0]} {t[1:].strip()}"
        else:
            out += f" + {t}"
    return out


def reorder_terms(side: str) -> str:
    """A sum with its terms rotated one place (`a + b - c` -> `b - c + a`); unchanged if not a safe sum."""
    terms = signed_terms(side)
    return side if terms is None else join_terms(terms[1:] + terms[:1])


_FRAC = re.compile(r"\\frac(?![a-zA-Z])")


_NOT_A_CHAIN = re.compile(
    r"\\(?:quad|qquad|text|mbox|Rightarrow|Leftarrow|Leftrightarrow|Longrightarrow|iff|implies|approx|sim|"
    r"mid|nmid|equiv|pmod|bmod|mod|to|rightarrow|begin|ldots|cdots|dots|in|notin|subset|subseteq)(?![a-zA-Z])|\\\\|\\ |:"
)


def _chain_safe(text: str) -> bool:
    """A plain relation or chain: no top-level list comma, no implication, congruence or prose."""
    depths = depth_scan(text)
    return not any(c == "," and depths[i] == 0 for i, c in enumerate(text)) and not _NOT_A_CHAIN.search(text)


def equivalent_rewrite(formula: str) -> str:
    """The same formula written differently: a relation or chain reversed with its relations
    mirrored (`a = b < c` -> `c > b = a`), terms of each sum reordered, `\\frac` -> `\\dfrac`,
    alignment `&` dropped, different spacing. Text is only re-spaced."""
    text = _FRAC.sub(r"\\dfrac", formula.strip())
    if "\\begin" not in text:  # an alignment `&`, not a matrix column separator
        text = re.sub(r"(?<!\\)&", " ", text)
    parts = split_relations(text) if _chain_safe(text) else None
    if parts is not None:
        members, rels = parts
        out = reorder_terms(members[-1])
        for member, rel in zip(reversed(members[:-1]), reversed(rels)):
            out += f" {_MIRROR.get(rel, rel)} {reorder_terms(member)}"
        text = out
    else:
        text = reorder_terms(text)
    return re.sub(r"\s+", "  ", text) if text == formula.strip() else text


_NUMBER = re.compile(r"(?<![\\a-zA-Z])\d+(?:\.\d+)?")
_LETTER = re.compile(r"(?<![\\a-zA-Z])[a-zA-Z](?![a-zA-Z])")


def change_one_number(formula: str, last: bool = False) -> str:
    """The formula with its first (or last) number changed (`3` -> `4`, `2.5` -> `2.6`); without a
    number, its first single-letter variable renamed; failing that (prose, theorem names), its
    first letter changed."""
    found = list(_NUMBER.finditer(formula))
    if found:
        m = found[-1] if last else found[0]
        num = m.group(0)
        new = str(int(num) + 1) if "." not in num else num[:-1] + str((int(num[-1]) + 1) % 10)
        return formula[: m.start()] + new + formula[m.end() :]
    variable = _LETTER.search(formula)
    m = variable or re.search(r"(?<!\\)(?<![a-zA-Z])[a-zA-Z]", formula)
    if m is None:
        return formula
    old = m.group(0).lower()
    if variable:  # a variable renamed
        new = "y" if old != "y" else "z"
    else:  # prose: its first letter changed (`induction` -> `jnduction`)
        new = chr((ord(old) - ord("a") + 1) % 26 + ord("a"))
    new = new.upper() if m.group(0).isupper() else new
    return formula[: m.start()] + new + formula[m.end() :]


_MATH = re.compile(r"\$\$(.+?)\$\$|\$(.+?)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.S)


def problem_formulas(problem: str) -> list[str]:
    """The math spans of a problem statement, in order; its numbers when it has none (GSM8K)."""
    spans = [next(g for g in m.groups() if g is not None).strip() for m in _MATH.finditer(problem)]
    spans = [s for s in spans if s]
    return spans or _NUMBER.findall(problem)


def boxed(parts: Sequence[str], sep: str = "; ") -> str:
    return "\\boxed{" + sep.join(parts) + "}"


# --- the policies ----------------------------------------------------------------------------


def reference(row: Row) -> str:
    """The row's own reference answer (TaskSpec.reference_answer)."""

    return get_task(row["task"]).reference_answer(row)


def masks_equivalent_rewrites(row: Row) -> str:
    return boxed([equivalent_rewrite(m) for m in row["masks"]])


def masks_one_number_changed(row: Row) -> str:
    return boxed([change_one_number(m) for m in row["masks"]])


def masks_rotated(row: Row) -> str:
    masks = list(row["masks"])
    return boxed(masks[1:] + masks[:1])


def _rotated_rows(row: Row) -> list[Row]:
    """`scored` narrowed to the slots whose rotated-in mask says something else (`2x=14` after
    `(x+y)+(x-y)=10+4` is the same equation: writing it there is right, not misplaced)."""
    masks = list(row["masks"])
    keep = [k for k in _scored(row) if judge_in_process(masks[(k + 1) % len(masks)], masks[k], strip_lhs=False)
            is not Verdict.EQUAL]  # fmt: skip
    return [{**row, "scored": keep}] if keep else []


def masks_copied_from_problem(row: Row) -> str:
    found = problem_formulas(row["problem"]) or ["0"]
    return boxed([found[k % len(found)] for k in range(len(row["masks"]))])


def masks_constant(row: Row) -> str:
    return boxed(["0"] * len(row["masks"]))


def _no_zero_mask(row: Row) -> list[Row]:
    """Rows where `0` is no mask's right fill (`0`, or `\\cos^2 a + \\sin^2 a - 1`, is right there)."""
    zero = any(judge_in_process("0", m, strip_lhs=False) is Verdict.EQUAL for m in row["masks"])
    return [] if zero else [row]


def masks_no_box(row: Row) -> str:
    return "The masked formulas are: " + "; ".join(row["masks"])


def order_as_shown(row: Row) -> str:
    return boxed([str(k) for k in range(len(row["order"]))], ", ")


def order_reversed(row: Row) -> str:
    return boxed([str(k) for k in reversed(range(len(row["order"])))], ", ")


_LATE = re.compile(r"(?i)\b(?:therefore|thus|hence)\b|\\boxed")
_EARLY = re.compile(r"(?i)^\W*(?:let|suppose|first)\b")


def order_surface_cues(row: Row) -> str:
    """Steps starting with "let"/"suppose"/"first" first, steps saying "therefore"/"thus"/"hence"
    or holding a boxed answer last, the rest as shown."""

    def rank(k: int) -> int:
        step = row["shuffled_steps"][k]
        return -1 if _EARLY.search(step) else 1 if _LATE.search(step) else 0

    return boxed([str(k) for k in sorted(range(len(row["order"])), key=rank)], ", ")


def order_random(row: Row) -> str:
    """A uniformly random order, seeded by the row id (its expected reward is 1/n)."""
    order = list(range(len(row["order"])))
    random.Random(f"audit:{row['id']}").shuffle(order)
    return boxed([str(k) for k in order], ", ")


_CHOICE = re.compile(r"(\\(?:text|textbf|mathrm|mathbf)\s*\{\s*)?\(?([A-E])\)?(?(1)\s*\})")


def wrong_answer(answer: str) -> str:
    """A different final answer: its last number changed, or `+ 1` appended (never a renamed letter:
    `N = n` and `y = n` are the same final answer)."""
    choice = _CHOICE.fullmatch(answer.strip())
    if choice:  # a choice letter, bare or wrapped (`(C)`, `\\text{(C)}`): another letter, wrapped alike
        other = "B" if choice.group(2) != "B" else "C"
        return answer.strip()[: choice.start(2)] + other + answer.strip()[choice.end(2) :]
    return change_one_number(answer, last=True) if _NUMBER.search(answer) else answer + " + 1"


def outcome_truncated_think(row: Row) -> str:
    """R1-style: the prompt opened `<think>`; the completion boxes the answer mid-thought and is cut off."""
    return f"Let me try: maybe the answer is \\boxed{{{row['answer']}}}. Wait, let me check that again, since"


def outcome_invented_turn(row: Row) -> str:
    """A wrong final answer, an end-of-turn token, then an invented next turn that boxes the reference."""
    return (
        f"The answer is \\boxed{{{wrong_answer(row['answer'])}}}.{EOT_QWEN}\n<|im_start|>user\n"
        f"Are you sure?{EOT_QWEN}\n<|im_start|>assistant\nSorry, it is \\boxed{{{row['answer']}}}."
    )


def outcome_several_boxes(row: Row) -> str:
    """Hedging: the reference boxed among wrong candidates (not last)."""
    ref, wrong = row["answer"], wrong_answer(row["answer"])
    last = wrong_answer(wrong)
    last = last if last != ref else wrong  # choice letters: B -> C may come back to the reference
    return f"It is \\boxed{{{ref}}} or \\boxed{{{wrong}}}, or possibly \\boxed{{{last}}}."


def correction_equivalent(row: Row) -> str:
    """Error Correction's positive control: the right step, the original formula rewritten
    (theorem names in lower case with "the"); `none` on rows without an error."""
    if row["error_step"] < 0:
        return boxed(["none"])
    fix = f"the {row['original'].lower()}" if row["error_type"] == "theorem" else equivalent_rewrite(row["original"])
    return boxed([str(row["error_step"]), fix])


def correction_always_none(row: Row) -> str:
    return boxed(["none"])


def correction_always_step0(row: Row) -> str:
    return boxed(["0"])


def correction_copied_back(row: Row) -> str:
    """The right step with its shown (corrupted) formula copied back; without an error, step 0
    with its first formula copied."""
    if row["error_step"] >= 0:
        return boxed([str(row["error_step"]), row["corrupted"]])
    found = problem_formulas(row["steps"][0]) if row["steps"] else []
    return boxed(["0", found[0] if found else row["steps"][0][:40]])



# --- integrity families (issue 17) -----------------------------------------------------------


def _rng(name: str, row: Row, k: int = 0) -> random.Random:
    """The generator of one policy at one row and position: same build, same edits."""
    return random.Random(f"audit:{name}:{row.get('id')}:{k}")


def _scored(row: Row) -> list[int]:
    masks = row.get("masks") or []
    keep = [k for k in (row.get("scored") if row.get("scored") is not None else range(len(masks))) if 0 <= k < len(masks)]
    return keep or list(range(len(masks)))


Edit = Callable[[str, random.Random], "str | None"]
"""One family's edit of a formula with the position's generator; None where it does not apply."""

_GROUPS = {"marker": ("marker",), "connective": ("connective",), "styling": ("styling", "invisible"),
           "trailing": ("tag", "dots", "prose", "punctuation"), "unicode_minus": ("unicode_minus",)}  # fmt: skip
DECORATION_GROUPS: dict[str, tuple[str, ...]] = {
    **{g: tuple(f for f in fams if f in DECORATIONS) for g, fams in _GROUPS.items() if any(f in DECORATIONS for f in fams)},
    **{f: (f,) for f in DECORATIONS if not any(f in fams for fams in _GROUPS.values())},
}
"""The issue's five decoration families as groups of `adversary.DECORATIONS` (one family drawn per
position); a family outside the groups is audited on its own."""


def decorated(text: str, group: str, rng: random.Random) -> str | None:
    """`text` decorated by a family of `group` drawn with `rng`; None where the group does not
    apply (a Unicode minus needs a minus)."""
    if not text.strip() or (group == "unicode_minus" and "-" not in text):
        return None
    families = DECORATION_GROUPS[group]
    return decorate(text, families[rng.randrange(len(families))], rng)


def any_decoration(text: str, rng: random.Random) -> str:
    """`text` with a decoration of a group drawn per row (the Unicode minus only where there is a minus)."""
    groups = list(DECORATION_GROUPS)
    rng.shuffle(groups)
    return next((d for g in groups if (d := decorated(text, g, rng)) is not None), text)


def _fills(name: str, row: Row, edit: Edit) -> list[str]:
    """The row's masks with `edit` applied at every scored position where it applies."""
    masks = list(row["masks"])
    for k in _scored(row):
        new = edit(masks[k], _rng(name, row, k))
        if new is not None:
            masks[k] = new
    return masks


def _fill_policy(
    name: str, description: str, edit: Edit, target: tuple[str, float], per_position: bool,
    fallback: Callable[[str], str] | None = None, **kw: Any,
) -> Policy:  # fmt: skip
    """A Masked-Then-Fill policy writing `edit(mask)` in the slots: per row (the mean over its
    scored positions; rows where the edit applies nowhere are left out) or per position (one
    edited position per row, drawn with the row's generator, `scored` narrowed to it). Where the
    edit does not apply, a slot holds `fallback(mask)` (the undecorated wrong work), else the mask."""

    def write(mask: str, rng: random.Random) -> str | None:
        new = edit(mask, rng)
        return new if new is not None or fallback is None else fallback(mask)

    def applies(row: Row) -> list[Row]:
        hits = [k for k in _scored(row) if edit(row["masks"][k], _rng(name, row, k)) is not None]
        if per_position:
            return [{**row, "scored": [_rng(name, row, -1).choice(hits)]}] if hits else []
        return [row] if hits else []

    return Policy(name, description, lambda row: boxed(_fills(name, row, write)), target=target, applies=applies, family=True, **kw)


def _decorated_edit(group: str, wrong: bool) -> Edit:
    return lambda mask, rng: decorated(change_one_number(mask) if wrong else mask, group, rng)


def _in_word(text: str, i: int) -> bool:
    """Is `text[i]` a hyphen between two words (`well-ordering`), not a sign between letters (`a-b`)?"""
    left, right = re.search(r"[A-Za-z]*$", text[:i]), re.match(r"[A-Za-z]*", text[i + 1 :])
    return len(left.group(0)) >= 2 and len(right.group(0)) >= 2  # type: ignore[union-attr]


def _near_edit(kind: str) -> Edit:
    def edit(mask: str, rng: random.Random) -> str | None:
        new = NEAR_MISS_KINDS[kind](mask)
        if new is None or new == mask:
            return None
        first = next((i for i, (a, b) in enumerate(zip(mask, new)) if a != b), None)
        if kind == "sign" and first is not None and (_in_word(mask, first) or re.match(r"\s*0(?![\d.])", mask[first + 1 :])):
            return None  # prose (`well+ordering principle`) or `+ 0` -> `- 0`: no sign error
        return new

    return edit


def _braces_edit(braced: bool) -> Edit:
    def edit(mask: str, rng: random.Random) -> str | None:
        new = script_braces(mask, braced)
        return new if new != mask else None

    return edit


_GROUP_TEXT = {
    "marker": "a marker after it (`\\quad(\\star)`, `\\blacksquare`, `\\checkmark`, `(2)`, ...)",
    "connective": "a connective before it (`\\because`, `\\hence`, `\\text{so }`, ...)",
    "styling": "styling or invisible commands (`\\color`, `\\textcolor`, `\\mathbf{..}`, `\\hphantom{}`, `\\displaystyle`, ...)",
    "trailing": "a trailing `\\tag*{}`, `\\dots`, `\\text{(by AM-GM)}` or punctuation",
    "unicode_minus": "every minus written U+2212 (rows with a minus)",
}
_NEAR_TEXT = {
    "sign": "a binary `+`/`-` flipped",
    "operator": "a product or quotient made a sum",
    "function": "a function or operator swapped (`\\tan`/`\\cot`, `\\cap`/`\\cup`, `\\min`/`\\max`, ...)",
    "relation": "a top-level relation swapped (`<`/`>`, `\\leq`/`\\geq`, `=`/`\\neq`, ...)",
    "letter": "a free letter renamed everywhere to an unused one",
}


def _mtf_integrity() -> list[Policy]:
    out = []
    for g in DECORATION_GROUPS:
        out.append(_fill_policy(f"decorated_wrong:{g}", f"one number changed + {_GROUP_TEXT.get(g, g)}", _decorated_edit(g, True),
                                ("<=", 0.10), False, fallback=change_one_number, not_above="one_number_changed"))  # fmt: skip
    for g in DECORATION_GROUPS:
        out.append(_fill_policy(f"decorated_right:{g}", f"the right masks + {_GROUP_TEXT.get(g, g)}", _decorated_edit(g, False),
                                (">=", 0.95), False))  # fmt: skip
    for kind in NEAR_MISS_KINDS:
        out.append(_fill_policy(f"near_miss:{kind}", f"per position: {_NEAR_TEXT.get(kind, kind)}", _near_edit(kind), ("<=", 0.10), True))
    out.append(_fill_policy("braces_removed", "per position: `x_{2}` written `x_2`", _braces_edit(False), (">=", 0.97), True))
    out.append(_fill_policy("braces_added", "per position: `x_2` written `x_{2}`", _braces_edit(True), (">=", 0.97), True))
    return out


def order_dataflow(row: Row) -> str:
    """A step computing a number before the steps using it; ties as shown (`baselines.dataflow_order`)."""
    return boxed([str(k) for k in dataflow_order(row["shuffled_steps"], row.get("problem") or "")], ", ")


def order_dataflow_cues(row: Row) -> str:
    """The dataflow order with ties broken by surface cues."""
    return boxed([str(k) for k in dataflow_order(row["shuffled_steps"], row.get("problem") or "", cues=True)], ", ")


def _error_rows(row: Row) -> list[Row]:
    return [row] if row["error_step"] >= 0 else []


def _formula_error_rows(row: Row) -> list[Row]:
    return [row] if row["error_step"] >= 0 and row["error_type"] != "theorem" else []


def correction_calculator(row: Row) -> str:
    """The first step with a formula false on its own, repaired by recomputation (`baselines`)."""
    return calculator_correction(row["steps"])


def correction_decorated_right(row: Row) -> str:
    return boxed([str(row["error_step"]), any_decoration(row["original"], _rng("ec_decorated", row))])


def correction_decorated_copied_back(row: Row) -> str:
    return boxed([str(row["error_step"]), any_decoration(row["corrupted"], _rng("ec_decorated", row))])


def _toggled(text: str) -> str | None:
    """`text` with its script braces removed, or else added; None without a single-token script."""
    for braced in (False, True):
        new = script_braces(text, braced)
        if new != text:
            return new
    return None


def _correction_braces_rows(row: Row) -> list[Row]:
    return [row] if row["error_step"] >= 0 and row["error_type"] != "theorem" and _toggled(row["original"]) else []


def correction_braces(row: Row) -> str:
    return boxed([str(row["error_step"]), _toggled(row["original"]) or row["original"]])


def _answer(row: Row) -> str:
    return reference_text(row.get("answer")) or ""


def exact_value(answer: str) -> Fraction | float | None:
    """The value of a constant final answer (`\\frac{8}{5}`, `x = \\sqrt{2}`), or None (also for a value no float
    holds, `2^{2005}`: no approximation policy applies to it)."""
    try:
        a = parse_answer(answer)
        if a.kind == "relation" and len(a.parts) == 2:
            a = a.parts[-1]
        v = constant_value(a)
        usable = v is not None and float(v) != 0 and math.isfinite(float(v))  # `2^{2005}`: too large for a float
    except (ArithmeticError, ValueError, TypeError):
        return None
    return v if usable else None


def coarse(answer: str, rng: random.Random) -> str | None:
    """`\\approx d`: two significant digits of the value 1.5% above or below (drawn); None when
    both round back to the exact value (then it is no approximation) or there is no value."""
    v = exact_value(answer)
    if v is None:
        return None
    sign = rng.choice((-1, 1))
    for rel in (sign * 0.015, -sign * 0.015):
        text = coarse_approximation(float(v), rel, 2)
        if Fraction(text.split()[-1]) != (v if isinstance(v, Fraction) else Fraction(float(v))):
            return text
    return None


def irrational(answer: str) -> str | None:
    """`\\approx d`: two significant digits of an irrational exact value (`\\sqrt{2}` -> 1.4)."""
    v = exact_value(answer)
    return None if v is None or isinstance(v, Fraction) else coarse_approximation(float(v), 0.0, 2)


def outcome_coarse(row: Row) -> str:
    return f"\\boxed{{{coarse(_answer(row), _rng('coarse', row)) or ''}}}"


def outcome_irrational(row: Row) -> str:
    return f"\\boxed{{{irrational(_answer(row)) or ''}}}"


def outcome_wrong(row: Row) -> str:
    return f"\\boxed{{{wrong_answer(_answer(row))}}}"


def outcome_decorated_wrong(row: Row) -> str:
    return f"\\boxed{{{any_decoration(wrong_answer(_answer(row)), _rng('outcome_decorated', row))}}}"


def outcome_decorated_right(row: Row) -> str:
    return f"\\boxed{{{any_decoration(_answer(row), _rng('outcome_decorated', row))}}}"


def outcome_braces(row: Row) -> str:
    return f"\\boxed{{{_toggled(_answer(row)) or _answer(row)}}}"


def _rows_where(test: Callable[[Row], Any]) -> Callable[[Row], list[Row]]:
    return lambda row: [row] if test(row) else []

ONE = ("min", 1.0)
POLICIES: dict[str, list[Policy]] = {
    MASKED_THEN_FILL: [
        Policy("reference", "the row's masks, `\\boxed{m1; m2; ...}`", reference, target=ONE),
        Policy(
            "equivalent_rewrites",
            "every mask rewritten: sides swapped, \\dfrac, terms reordered, spacing",
            masks_equivalent_rewrites,
            target=(">=", 0.95),
        ),
        Policy("one_number_changed", "the first number of every mask changed", masks_one_number_changed, target=("<=", 0.15)),
        Policy("rotated", "the right masks, each one slot later (slots where that mask is not also right)",
               masks_rotated, target=("<=", 0.10), applies=_rotated_rows),
        Policy(
            "copied_from_problem", "the problem's own formulas (or numbers) in the slots", masks_copied_from_problem, target=("<=", 0.10)
        ),
        # "= 0.000", not "0 on every row": a masked final answer that is 0 is right for a constant 0
        Policy("constant", "`0` in every slot (rows where no mask is 0)", masks_constant, target=("=0", 0.0),
               applies=_no_zero_mask),
        Policy("no_box", "the right masks, not boxed", masks_no_box, target=("<=", 0.0)),
        *_mtf_integrity(),
    ],
    STEP_REORDERING: [
        Policy("reference", "the reference order", reference, target=ONE),
        Policy("as_shown", "the steps in the order shown", order_as_shown),
        Policy("reversed", "the shown order reversed", order_reversed),
        Policy("surface_cues", "let/suppose/first first, therefore/thus/hence/boxed last", order_surface_cues),
        Policy("random", "a uniformly random order (seeded per row)", order_random),
        Policy("dataflow", "a step computing a number before the steps using it; ties as shown", order_dataflow),
        Policy("dataflow_cues", "the dataflow order, ties by surface cues", order_dataflow_cues),
    ],
    ERROR_CORRECTION: [
        Policy("reference", "`\\boxed{k; original}`, or `\\boxed{none}`", reference, target=ONE),
        Policy(
            "equivalent_correction",
            "the right step, the original rewritten (sides swapped, \\dfrac, ...)",
            correction_equivalent,
            target=(">=", 0.95),
        ),
        Policy(
            "always_none",
            "`\\boxed{none}` on rows with an error (it earns 1 on the rows without one, by design)",
            correction_always_none,
            target=("<=", 0.0),
            applies=_error_rows,
        ),
        Policy("always_step0", "`\\boxed{0}`: step 0, no correction", correction_always_step0, target=("<=", 0.15)),
        Policy("copied_back", "the right step with its corrupted formula copied back", correction_copied_back, target=("<=", 0.0)),
        Policy(
            "calculator",
            "error rows: the first formula false on its own, recomputed (rows at 1.0: solved)",
            correction_calculator,
            applies=_error_rows,
        ),
        Policy(
            "decorated_right",
            "formula errors: the right step, the original + a decoration (family per row)",
            correction_decorated_right,
            target=(">=", 0.95),
            applies=_formula_error_rows,
            family=True,
        ),
        Policy(
            "decorated_copied_back",
            "formula errors: the corrupted formula copied back + a decoration",
            correction_decorated_copied_back,
            target=("<=", 0.10),
            applies=_formula_error_rows,
            not_above="copied_back",
            family=True,
        ),
        Policy(
            "braces_toggled",
            "the right step, the original with subscript braces removed (or added)",
            correction_braces,
            target=(">=", 0.97),
            applies=_correction_braces_rows,
            family=True,
        ),
    ],
    OUTCOME: [
        Policy("reference", "the answer, boxed", reference, target=ONE),
        Policy(
            "truncated_think",
            "think block opened by the prompt, box inside, never closed",
            outcome_truncated_think,
            options={"think_prefilled": True},
            target=("<=", 0.0),
        ),
        Policy(
            "invented_turn", "a wrong answer, end of turn, an invented turn boxing the reference", outcome_invented_turn, target=("<=", 0.0)
        ),
        Policy("several_boxes", "the reference boxed among wrong candidates, not last", outcome_several_boxes, target=("<=", 0.0)),
        Policy("wrong_answer", "the answer with its last number changed (or `+ 1`)", outcome_wrong, target=("<=", 0.02)),
        Policy(
            "decorated_wrong",
            "the wrong answer + a decoration (family per row)",
            outcome_decorated_wrong,
            target=("<=", 0.10),
            not_above="wrong_answer",
            family=True,
        ),
        Policy("decorated_right", "the answer + a decoration (family per row)", outcome_decorated_right, target=(">=", 0.95),
               family=True),
        Policy(
            "coarse_approximation",
            "numeric answers: `\\approx d`, 2 significant digits of a value 1.5% off",
            outcome_coarse,
            target=("<=", 0.05),
            applies=_rows_where(lambda r: coarse(_answer(r), _rng("coarse", r))),
            family=True,
        ),
        Policy(
            "irrational_digits",
            "irrational answers: 2 significant digits (`\\approx 1.4` for `\\sqrt{2}`)",
            outcome_irrational,
            target=("<=", 0.05),
            applies=_rows_where(lambda r: irrational(_answer(r))),
            family=True,
        ),
        Policy(
            "braces_toggled",
            "answers with a subscript: braces removed (or added)",
            outcome_braces,
            target=(">=", 0.97),
            applies=_rows_where(lambda r: _toggled(_answer(r))),
            family=True,
        ),
    ],
}
"""Policies per task; a task without an entry is audited with its reference answer only."""


# --- running it ------------------------------------------------------------------------------


@dataclass
class AuditResult:
    task: str
    policy: str
    description: str
    rows: int
    mean: float
    min: float
    full: float
    """Share of rows scored exactly 1.0."""
    unscored: int
    """Rows the reward returned None for (a reward that does not cover its own task's rows)."""
    target: str = ""
    passed: bool | None = None


def _check(target: tuple[str, float] | None, mean: float, low: float) -> tuple[str, bool | None]:
    if target is None:
        return "", None
    op, x = target
    if op == "min":
        return f"every row = {x:g}", low >= x
    if op == ">=":
        return f"mean >= {x:g}", mean >= x
    if op == "=0":
        return "mean = 0.000", round(mean, 3) == 0.0
    return (f"mean <= {x:g}", mean <= x) if x else ("0 on every row", mean <= 0.0)


def policies_for(task: str) -> list[Policy]:
    return POLICIES.get(task) or [Policy("reference", "the row's reference answer", reference, target=ONE)]


def policy_rows(policy: Policy, rows: list[Row], limit: int | None = None) -> list[Row]:
    """The rows `policy` is scored on (`Policy.applies`): the first `limit` of them in the order
    of `rows` when a limit is given."""
    if limit is None:
        return list(rows) if policy.applies is None else [r for row in rows for r in policy.applies(row)]
    out: list[Row] = []
    for row in rows:
        if len(out) >= limit:
            break
        out.extend([row] if policy.applies is None else policy.applies(row))
    return out[:limit]


def score_rows(task: str, rows: list[Row], policy: Policy, reward_name: str | None = None) -> list[float | None]:
    """Score `policy`'s completions for `rows` with the task's reward, as TRL would call it."""
    from mrtasks.rewards import get_reward

    fn = get_reward(reward_name or task, **policy.options)
    completions = [policy.answer(r) for r in rows]
    columns = {k: [r.get(k) for r in rows] for k in rows[0] if k not in ("prompt", "completion")} if rows else {}
    return list(fn(completions, **columns))


def _mean(scores: list[float | None]) -> float:
    values = [s for s in scores if s is not None]
    return statistics.fmean(values) if values else 0.0


def audit_rows(
    task: str, rows: list[Row], reward_name: str | None = None, family_rows: int | None = None, seed: int = 0
) -> list[AuditResult]:
    """Every policy of `task` on `rows`. With `family_rows`, each integrity family (`Policy.family`)
    is scored on the first `family_rows` rows it applies to, in one seeded order of `rows` per
    task (so the families share rows where they apply, and `not_above` compares on the same rows)."""
    out = []
    policies = {p.name: p for p in policies_for(task)}
    plain: dict[str, dict[int, float | None]] = {}  # per-row scores of policies scored on every row as is
    ranked = list(rows)
    if family_rows is not None:
        random.Random(f"{seed}:audit-families:{task}").shuffle(ranked)
    for policy in policies.values():
        if policy.family and family_rows is not None:
            scored_rows = policy_rows(policy, ranked, family_rows)
        else:
            scored_rows = policy_rows(policy, rows)
        scores = score_rows(task, scored_rows, policy, reward_name) if scored_rows else []
        values = [s for s in scores if s is not None]
        mean = _mean(scores)
        low = min(values) if values else 0.0
        target, passed = _check(policy.target, mean, low)
        if policy.not_above and values:
            other = policies[policy.not_above]
            known = plain.get(other.name, {})
            if all(id(r) in known for r in scored_rows):  # the same row objects: reuse their scores
                bound = _mean([known[id(r)] for r in scored_rows])
            else:  # the other policy on exactly these rows
                bound = _mean(score_rows(task, scored_rows, other, reward_name))
            target += f" and <= {other.name} ({bound:.3f})"
            passed = bool(passed is not False and round(mean, 4) <= round(bound, 4))
        if policy.applies is None:
            plain[policy.name] = {id(r): s for r, s in zip(scored_rows, scores)}
        if values and len(values) < len(scores):
            passed = False if passed is not None else None
        out.append(
            AuditResult(
                task=task, policy=policy.name, description=policy.description, rows=len(scores),
                mean=round(mean, 4), min=round(low, 4), full=round(sum(v == 1.0 for v in values) / max(len(values), 1), 4),
                unscored=len(scores) - len(values), target=target, passed=passed if values else None,
            )
        )  # fmt: skip
    return out


def run_audit(dataset: str | Path, tasks: Sequence[str] | None = None, splits: Sequence[str] | None = None) -> list[AuditResult]:
    """Audit every task config of a build (`mrtasks.tasks.list_tasks()` unless `tasks` is given)."""

    data = Path(dataset) / "data"
    results = []
    for task in tasks or list_tasks():
        if data.is_dir() and not (data / task).is_dir():
            logger.info("no %s config in %s; skipped", task, dataset)
            continue
        rows = load_rows(dataset, task, splits)
        logger.info("%s: %d rows", task, len(rows))
        results.extend(audit_rows(task, rows, get_task(task).reward))
    return results


CARD_ROWS = 120
"""Rows per task the dataset card's audit scores (a seeded sample of the build): on the shared
corpora 120 give every target the verdict 200 give, at 0.65 of the time (the audit was the build's
largest stage)."""
FAMILY_ROWS = 40
"""Of those, rows each integrity family is scored on in the card (the families are most of the
audit's time: about 1 s per Masked-Then-Fill family on 200 rows). `python -m mrtasks.rewards.audit`
scores every family on every row."""


def audit_build(
    rows: dict[str, dict[str, list[Row]]], max_rows: int | None = CARD_ROWS, seed: int = 0,
    family_rows: int | None = FAMILY_ROWS,
) -> list[AuditResult]:  # fmt: skip
    """Audit a build in memory (`PipelineResult.rows`: config -> split -> rows), every registered
    task over all its splits; at most `max_rows` rows per task (a seeded sample) to bound the time,
    and each integrity family on at most `family_rows` of them (`audit_rows`)."""
    return audit_sample(card_rows(rows, max_rows, seed), seed, family_rows)


def card_rows(rows: dict[str, dict[str, list[Row]]], max_rows: int | None = CARD_ROWS, seed: int = 0) -> dict[str, list[Row]]:
    """The rows `audit_build` scores per task: every split, at most `max_rows` (a seeded sample)."""
    out = {}
    for task in list_tasks():
        task_rows = [r for split in sorted(rows.get(task, {})) for r in rows[task][split]]
        if max_rows is not None and len(task_rows) > max_rows:
            task_rows = random.Random(f"{seed}:audit:{task}").sample(task_rows, max_rows)
        if task_rows:
            out[task] = task_rows
    return out


def audit_sample(sample: dict[str, list[Row]], seed: int = 0, family_rows: int | None = FAMILY_ROWS) -> list[AuditResult]:
    """`audit_build` on rows already chosen by `card_rows` (what `mrtasks.curate.card_audit` runs)."""
    return [r for task, task_rows in sample.items() for r in audit_rows(task, task_rows, get_task(task).reward, family_rows, seed)]


def card_section(
    rows: dict[str, dict[str, list[Row]]], max_rows: int | None = CARD_ROWS, seed: int = 0,
    family_rows: int | None = FAMILY_ROWS, results: list[AuditResult] | None = None,
) -> str:  # fmt: skip
    """The dataset card's "How hard is it to game these rewards?" table, with how it was made
    (`results`: `audit_build`'s with these arguments, when already computed)."""
    results = audit_build(rows, max_rows, seed, family_rows) if results is None else results
    if not results:
        return "(no task rows)"
    sample = f"at most {max_rows} rows per task (a seeded sample), " if max_rows else ""
    if family_rows is not None:
        sample += (
            f"each integrity family (decorations, near misses, braces, approximations) on the first {family_rows} "
            "of those it applies to (in a seeded order), "
        )
    return (
        f"Mean reward of each policy, {sample}scored with each task's own reward at its "
        'default options (Masked-Then-Fill: `partial_credit="undecided"`; the truncated-think case '
        "with `think_prefilled=True`). `rows` counts the rows a policy applies to (per-position "
        "policies: one edited position per row); a target `<= policy (x)` holds a policy to another's "
        "mean on the same rows. Rerun on any build with "
        "`python -m mrtasks.rewards.audit --dataset DIR`.\n\n" + markdown_table(results)
    )


def _mark(r: AuditResult) -> str:
    return "" if r.passed is None else ("yes" if r.passed else "**NO**")


def markdown_table(results: Sequence[AuditResult]) -> str:
    """The audit as a Markdown table (the dataset card's "How hard is it to game these rewards?")."""
    lines = [
        "| task | policy | rows | mean reward | rows at 1.0 | target | met |",
        "|---|---|---:|---:|---:|---|---|",
    ]
    for r in results:
        lines.append(f"| {r.task} | {r.policy} | {r.rows} | {r.mean:.3f} | {r.full:.1%} | {r.target} | {_mark(r)} |")
    return "\n".join(lines)


def text_table(results: Sequence[AuditResult]) -> str:
    head = f"{'task':<18} {'policy':<30} {'rows':>6} {'mean':>7} {'min':>6} {'@1.0':>7}  target"
    lines = [head, "-" * len(head)]
    for r in results:
        met = "" if r.passed is None else ("ok" if r.passed else "FAILED")
        lines.append(f"{r.task:<18} {r.policy:<30} {r.rows:>6} {r.mean:>7.3f} {r.min:>6.2f} {r.full:>7.1%}  {r.target} {met}")
    return "\n".join(lines)


def plot(results: Sequence[AuditResult], path: Path) -> bool:
    """A bar chart of mean reward per policy, one panel per task; False when matplotlib is missing."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        logger.warning("matplotlib is not installed (pip install 'mr-rlvr[eval]'); skipped %s", path)
        return False
    tasks = list(dict.fromkeys(r.task for r in results))
    fig, axes = plt.subplots(1, len(tasks), figsize=(4.2 * len(tasks), 3.6), squeeze=False)
    for ax, task in zip(axes[0], tasks):
        rs = [r for r in results if r.task == task]
        # green: should earn full credit (reference, positive controls); red: should earn little;
        # grey: no target (Step Reordering's baselines measure the task)
        colors = ["tab:grey" if not r.target else "tab:green" if r.target.startswith(("every", "mean >=")) else "tab:red" for r in rs]
        ax.bar(range(len(rs)), [r.mean for r in rs], color=colors)
        for k, r in enumerate(rs):
            ax.text(k, r.mean + 0.02, f"{r.mean:.2f}", ha="center", fontsize=7)
        ax.set_xticks(range(len(rs)), [r.policy for r in rs], rotation=45, ha="right", fontsize=8)
        ax.set_ylim(0, 1.12)
        ax.set_title(task, fontsize=10)
        ax.set_ylabel("mean reward")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return True


EXIT_OK, EXIT_USAGE, EXIT_MISSED, EXIT_OUTPUT, EXIT_INTERRUPTED = 0, 2, 3, 4, INTERRUPTED
EXIT_CODES = {
    EXIT_OK: "every policy met its target",
    EXIT_USAGE: "bad arguments or a dataset that is not a readable build (missing, no card, broken card YAML, "
                "corrupt Parquet, unknown --task or --split)",
    EXIT_MISSED: "a policy missed its target (the table marks it FAILED)",
    EXIT_OUTPUT: "--out refused (a file, a read-only folder, a dataset build, a model folder, another command's "
                 "output, files this command did not write, another audit writing into it)",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C)",
}


class AuditError(Exception):
    """An everyday failure of the command line (bad --task, --split or dataset): one line, exit 2."""


def _load_checked(dataset: Path, tasks: Sequence[str], splits: Sequence[str] | None) -> list[AuditResult]:
    results = []
    for task in tasks:
        rows = load_rows(dataset, task, splits)
        logger.info("%s: %d rows", task, len(rows))
        results.extend(audit_rows(task, rows, get_task(task).reward))
    return results


def _legacy_out(folder: Path) -> bool:
    """A folder an audit wrote before it marked its folders: audit.json with its dataset and results."""
    try:
        data = json.loads((folder / "audit.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and {"dataset", "results"} <= set(data)


OUT_OWNER = Owner("mrtasks.rewards.audit", ("audit.json", "audit.png"), "--out", _legacy_out)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mrtasks.rewards.audit",
        description="Score degenerate policies (reference, rotated masks, one number changed, ...) on every "
        "task config of a build and report how much reward each earns. Prints a table; with --out DIR also "
        "writes DIR/audit.json and DIR/audit.png.",
        epilog="exit codes: " + "; ".join(f"{code} {text}" for code, text in EXIT_CODES.items()),
    )
    parser.add_argument("--dataset", required=True, help="a folder written by `python -m mrtasks.build`")
    parser.add_argument("--out", help="write audit.json and audit.png here (default: print only)")
    parser.add_argument("--task", action="append", help="audit only this task (repeatable)")
    parser.add_argument("--split", action="append", help="audit only this split (repeatable; default: all)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    return run_command(lambda: _main(args), {AuditError: EXIT_USAGE, DatasetError: EXIT_USAGE, OutputError: EXIT_OUTPUT})


def _main(args: argparse.Namespace) -> int:
    dataset = Path(args.dataset)
    configs = build_configs(dataset)
    known = list_tasks()
    unknown = [t for t in args.task or [] if t not in known]
    if unknown:
        raise AuditError(f"--task: unknown task(s) {unknown}; tasks are {known}")
    missing = [t for t in args.task or [] if t not in configs]
    if missing:
        raise AuditError(f"--task: {dataset} has no {', '.join(missing)} config (it has {sorted(configs)})")
    tasks = args.task or [t for t in known if t in configs]
    if not tasks:
        raise AuditError(f"{dataset} has no task config (it has {sorted(configs)})")
    have = sorted({s for t in tasks for s in configs[t] if s})
    bad = [s for s in args.split or [] if s not in have]
    if bad:
        raise AuditError(f"--split: {dataset} has no split {', '.join(map(repr, bad))} (it has {have})")
    out = Path(args.out) if args.out else None
    if out is not None:
        OwnedFolder(out, OUT_OWNER).check()  # refused before any scoring
    skipped = [t for t in known if t not in configs and not args.task]
    for t in skipped:
        logger.info("no %s config in %s; skipped", t, dataset)
    results = _load_checked(dataset, tasks, args.split)
    print(text_table(results))
    if out is not None:
        with OwnedFolder(out, OUT_OWNER):
            try:
                (out / "audit.json").write_text(
                    json.dumps({"dataset": str(args.dataset), "results": [asdict(r) for r in results]}, indent=2) + "\n"
                )
                plot(results, out / "audit.png")
            except OSError as e:
                raise OutputError(f"--out {out}: cannot write: {e.strerror or e}") from None
        print(f"wrote {out / 'audit.json'}" + (f" and {out / 'audit.png'}" if (out / "audit.png").exists() else ""))
    failed = [r for r in results if r.passed is False]
    return EXIT_MISSED if failed else EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
