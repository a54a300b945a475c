"""Synthetic worked solutions: the `synthetic` source preset and its held-out benchmark file.

`--source synthetic:arith:size=2000,difficulty=1,seed=0` generates multi-step arithmetic problems
with worked solutions written the way the corpora write them (sentences, inline `$...$` math, a
final `\\boxed{}`), for a laptop-scale learning run (`python -m training.learn`). Five families,
drawn in turn:

- `expr`    evaluate an expression one operation at a time (left to right at difficulty 1,
            innermost first in nested ones);
- `linear`  solve `ax + b = cx + d` by moving terms, then check the root in both sides;
- `system`  solve a 2x2 system by elimination and substitution, answer `(x, y)`;
- `mod`     the remainder of `a \\cdot b + c` modulo `m` from the remainders of its parts;
- `series`  the sum of the first terms of an arithmetic sequence, term by term, then checked
            with the closed form.

Every solution makes a Masked-Then-Fill row of 7 masks (its boxed answer among them) and has at
least 4 sentence steps, and its boxed answer is the value the generator computed. Options: `size`
(problems, default 1000), `difficulty` (1-3: operand ranges and expression depth, default 1), `seed`
(default 0), `families` (`+`-joined subset, default all). Same options give the same rows. Small
ranges hold few distinct problems, and a family that runs out is an error: at difficulty 1, `series`
holds about 90 training problems and the other families a few hundred each (the testbed uses
`families=expr+linear+mod`).

**Held out.** A problem belongs to the held-out partition when a salted hash of its normalized
text (`mrtasks.curate.filters.normalize_problem`, as the build's splits use) falls below
`HELDOUT_SHARE`; the source only ever yields training-partition problems and
`write_heldout` only held-out ones, so the two are disjoint for any sizes and seeds (a problem
text is in exactly one partition). `python -m mrtasks.curate.synthetic OUT.jsonl` writes held-out
problems in the benchmark format `eval.run` reads (`id`, `problem`, `answer`; `--benchmarks
NAME=OUT.jsonl`).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import random
import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mrtasks.curate.base import SourceError
from mrtasks.curate.filters import normalize_problem

logger = logging.getLogger(__name__)

GENERATOR = "arith"
# The preset's `revision` (mrtasks.curate.presets, "arith-v2") names this generator's version:
# bump it whenever the text of generated rows changes (the build records it per source).
HELDOUT_SHARE = 0.125
_HELDOUT_SALT = "mrtasks-synthetic-heldout-v1"
DIFFICULTIES = (1, 2, 3)
MAX_SIZE = 1_000_000


class SyntheticError(SourceError):
    """Bad synthetic source options (one line, the build's exit 2)."""


@dataclass(frozen=True)
class Worked:
    """One generated problem: its text, worked solution and the answer the generator computed."""

    family: str
    problem: str
    solution: str
    answer: str


# --- families ------------------------------------------------------------------------------------

_FIRST = ("First", "To begin")
_NEXT = ("Next", "Then", "After that")


def _ranges(difficulty: int) -> dict[str, int]:
    """Number ranges per difficulty. 1: small numbers (operands to 6, results to about 50),
    `+`/`-` expressions of five operations read left to right: arithmetic a few-million-parameter
    model can learn on a CPU; 2: products and nested parentheses, larger roots; 3: larger still,
    six operations."""
    return {
        1: {"ops": 5, "operand": 6, "bound": 20, "chain": 1, "lin_root": 6, "lin_c": 3, "lin_k": 3, "lin_b": 12,
            "sys_root": 6, "sys_a": 2, "sys_b2": 3, "sys_db": 3, "mod_m": 5, "mod_base": 14,
            "ser_terms": 5, "ser_a1": 9, "ser_dmin": 1, "ser_d": 5, "geo_a1": 3, "geo_terms": 4},
        2: {"ops": 5, "operand": 9, "bound": 60, "chain": 0, "lin_root": 9, "lin_c": 5, "lin_k": 5, "lin_b": 9,
            "sys_root": 9, "sys_a": 3, "sys_b2": 5, "sys_db": 5, "mod_m": 9, "mod_base": 30,
            "ser_terms": 6, "ser_a1": 27, "ser_dmin": 2, "ser_d": 9, "geo_a1": 9, "geo_terms": 5},
        3: {"ops": 6, "operand": 12, "bound": 150, "chain": 0, "lin_root": 12, "lin_c": 7, "lin_k": 7, "lin_b": 12,
            "sys_root": 12, "sys_a": 3, "sys_b2": 7, "sys_db": 7, "mod_m": 11, "mod_base": 60,
            "ser_terms": 7, "ser_a1": 36, "ser_dmin": 2, "ser_d": 12, "geo_a1": 12, "geo_terms": 5},
    }[difficulty]


# Expression trees: a leaf is an int, a node is (op, left, right).
_PREC = {"+": 1, "-": 1, "*": 2}
_TEX = {"+": "+", "-": "-", "*": "\\cdot"}


def _value(node: Any) -> int:
    if isinstance(node, int):
        return node
    op, a, b = node
    x, y = _value(a), _value(b)
    return x + y if op == "+" else x - y if op == "-" else x * y


def _tex(node: Any) -> str:
    if isinstance(node, int):
        return str(node)
    op, a, b = node
    left, right = _tex(a), _tex(b)
    if not isinstance(a, int) and _PREC[a[0]] < _PREC[op]:
        left = f"({left})"
    if not isinstance(b, int) and _PREC[b[0]] <= _PREC[op]:  # `a - (b + c)`, `a + (b + c)`: the order is shown
        right = f"({right})"
    return f"{left} {_TEX[op]} {right}"


def _random_tree(rng: random.Random, ops: int, operand: int, chain: bool = False) -> Any:
    """A random expression of `ops` operations; `chain`: `+`/`-` only, left-deep (read left to right)."""
    if ops == 0:
        return rng.randint(1 if chain else 2, operand)
    if chain:
        return (rng.choice("+-"), _random_tree(rng, ops - 1, operand, chain), rng.randint(1, operand))
    left = rng.randint(0, ops - 1)
    op = rng.choice("++--*")
    return (op, _random_tree(rng, left, operand), _random_tree(rng, ops - 1 - left, operand))


def _nodes(node: Any) -> Iterator[Any]:
    if not isinstance(node, int):
        yield from _nodes(node[1])
        yield from _nodes(node[2])
        yield node


def _reduce_first(node: Any) -> tuple[Any, Any]:
    """Evaluate the leftmost node whose operands are both numbers; return (new tree, that node)."""
    op, a, b = node
    if isinstance(a, int) and isinstance(b, int):
        return _value(node), node
    if not isinstance(a, int):
        new, done = _reduce_first(a)
        return (op, new, b), done
    new, done = _reduce_first(b)
    return (op, a, new), done


def gen_expr(rng: random.Random, r: dict[str, int]) -> Worked | None:
    """Evaluate a nested expression: one sentence per operation, the rewritten expression after it."""
    tree = _random_tree(rng, r["ops"], r["operand"], bool(r["chain"]))
    if any(not 0 <= _value(n) <= r["bound"] for n in _nodes(tree)):
        return None
    expression, answer = _tex(tree), str(_value(tree))
    order = "from left to right" if r["chain"] else "innermost first"
    lines = [f"We evaluate ${expression}$ one operation at a time, {order}."]
    current, seen = tree, set()
    openers = [rng.choice(_FIRST)] + [rng.choice(_NEXT) for _ in range(r["ops"] - 2)] + ["Finally"]
    for opener in openers:
        current, done = _reduce_first(current)
        formula = f"{_tex(done)} = {_value(done)}"
        if formula in seen:
            return None  # a repeated step reads oddly (and a repeated formula is never maskable)
        seen.add(formula)
        step = f"{opener}, ${formula}$"
        if not isinstance(current, int):
            step += f", so the expression becomes ${_tex(current)}$"
        lines.append(step + ".")
    lines.append(f"So ${expression} = {answer}$, and the value of the expression is $\\boxed{{{answer}}}$.")
    return Worked("expr", f"Evaluate ${expression}$.", "\n\n".join(lines), answer)


def _term(coef: int, var: str) -> str:
    return var if coef == 1 else f"{coef}{var}"


def gen_linear(rng: random.Random, r: dict[str, int]) -> Worked | None:
    """Solve `ax + b = cx + d` (a > c + 1, a whole root), then check the root in both sides."""
    x = rng.randint(1, r["lin_root"])
    c = rng.randint(1, r["lin_c"])
    k = rng.randint(2, r["lin_k"])
    a = c + k
    b = rng.randint(1, r["lin_b"])
    d = k * x + b
    ax, cx, kx = _term(a, "x"), _term(c, "x"), _term(k, "x")
    lines = [
        f"Subtract ${cx}$ from both sides: ${ax} - {cx} + {b} = {d}$, so ${kx} + {b} = {d}$.",
        f"Subtract ${b}$ from both sides: ${kx} = {d} - {b}$, that is ${kx} = {d - b}$.",
        f"Divide both sides by ${k}$: $x = \\frac{{{d - b}}}{{{k}}} = {x}$.",
        f"Check the left side: ${a} \\cdot {x} = {a * x}$ and ${a * x} + {b} = {a * x + b}$.",
        f"Check the right side: ${c} \\cdot {x} = {c * x}$ and ${c * x} + {d} = {c * x + d}$, so both sides agree.",
        f"Therefore $x = \\boxed{{{x}}}$.",
    ]
    return Worked("linear", f"Solve for $x$: ${ax} + {b} = {cx} + {d}$.", "\n\n".join(lines), str(x))


def gen_system(rng: random.Random, r: dict[str, int]) -> Worked | None:
    """Solve `ax + b1 y = c1`, `ax + b2 y = c2` by subtracting, substituting and checking both."""
    x, y = rng.randint(1, r["sys_root"]), rng.randint(1, r["sys_root"])
    a = rng.randint(1, r["sys_a"])
    b2 = rng.randint(1, r["sys_b2"])
    db = rng.randint(2, r["sys_db"])
    b1 = b2 + db
    c1, c2 = a * x + b1 * y, a * x + b2 * y
    ax, b1y, b2y = _term(a, "x"), _term(b1, "y"), _term(b2, "y")
    problem = f"Solve the system ${ax} + {b1y} = {c1}$ and ${ax} + {b2y} = {c2}$. Give the answer as $(x, y)$."
    solve_x = (f"so ${ax} = {c2} - {b2 * y} = {a * x}$ and $x = \\frac{{{a * x}}}{{{a}}} = {x}$." if a > 1
               else f"so $x = {c2} - {b2 * y} = {x}$.")
    lines = [
        f"Subtract the second equation from the first: $({ax} + {b1y}) - ({ax} + {b2y}) = {c1} - {c2}$.",
        f"This leaves ${db}y = {c1 - c2}$, so $y = \\frac{{{c1 - c2}}}{{{db}}} = {y}$.",
        f"Substitute $y = {y}$ into the second equation: ${ax} + {b2} \\cdot {y} = {c2}$, that is "
        f"${ax} + {b2 * y} = {c2}$, {solve_x}",
        f"Check the first equation: ${a} \\cdot {x} + {b1} \\cdot {y} = {a * x} + {b1 * y} = {c1}$.",
        f"Check the second equation: ${a} \\cdot {x} + {b2} \\cdot {y} = {a * x} + {b2 * y} = {c2}$.",
        f"So the solution is $\\boxed{{({x}, {y})}}$.",
    ]
    return Worked("system", problem, "\n\n".join(lines), f"({x}, {y})")


def gen_mod(rng: random.Random, r: dict[str, int]) -> Worked | None:
    """The remainder of `a b + c` modulo m from the remainders of a, b and c."""
    m = rng.randint(3, r["mod_m"])
    a, b, c = rng.sample(range(m + 1, r["mod_base"] + 1), 3)  # distinct: a repeated line is never maskable
    ra, rb, rc = a % m, b % m, c % m
    prod, answer = ra * rb, (a * b + c) % m
    total = prod + rc
    lines = [f"Reduce each number modulo ${m}$."]
    for opener, n, rn in (("First,", a, ra), ("Next,", b, rb), ("Also", c, rc)):
        lines.append(f"{opener} ${n} = {n // m} \\cdot {m} + {rn}$, so ${n} \\equiv {rn} \\pmod{{{m}}}$.")
    lines += [
        f"Hence ${a} \\cdot {b} + {c} \\equiv {ra} \\cdot {rb} + {rc} \\pmod{{{m}}}$.",
        f"Now ${ra} \\cdot {rb} = {prod}$ and ${prod} + {rc} = {total}$.",
        f"Since ${total} = {total // m} \\cdot {m} + {answer}$, the remainder is $\\boxed{{{answer}}}$.",
    ]
    problem = f"Find the remainder when ${a} \\cdot {b} + {c}$ is divided by ${m}$."
    return Worked("mod", problem, "\n\n".join(lines), str(answer))


def gen_series(rng: random.Random, r: dict[str, int]) -> Worked | None:
    """The sum of the first n terms of an arithmetic or geometric sequence, term by term, then
    checked with the closed form."""
    n = rng.randint(4, r["ser_terms"])
    a1 = rng.randint(1, r["ser_a1"])
    if rng.random() < 0.5:
        d = rng.randint(r["ser_dmin"], r["ser_d"])
        terms = [a1 + k * d for k in range(n)]
        what, step, op = f"arithmetic sequence with first term ${a1}$ and common difference ${d}$", d, "+"
        closed = (f"the sum of an arithmetic sequence is $S_n = \\frac{{n}}{{2}}(a_1 + a_n)$, and here "
                  f"$S_{{{n}}} = \\frac{{{n}}}{{2}}({a1} + {terms[-1]}) = {sum(terms)}$")
    else:
        q = rng.randint(2, 3)
        a1 = rng.randint(1, r["geo_a1"])
        n = min(n, r["geo_terms"])
        terms = [a1 * q**k for k in range(n)]
        what, step, op = f"geometric sequence with first term ${a1}$ and common ratio ${q}$", q, "\\cdot"
        closed = (f"the sum of a geometric sequence is $S_n = a_1 \\frac{{r^n - 1}}{{r - 1}}$, and here "
                  f"$S_{{{n}}} = {a1} \\cdot \\frac{{{q}^{{{n}}} - 1}}{{{q} - 1}} = {sum(terms)}$")
    total = sum(terms)
    problem = f"Find the sum of the first ${n}$ terms of the {what}."
    listing = [f"$a_1 = {a1}$"] + [f"$a_{{{k + 1}}} = {terms[k - 1]} {op} {step} = {terms[k]}$" for k in range(1, n)]
    partial, sums = terms[0], []
    for t in terms[1:]:
        sums.append(f"${partial} + {t} = {partial + t}$")
        partial += t
    lines = [
        f"The terms are {', '.join(listing[:-1])} and {listing[-1]}.",
        f"Adding them one at a time gives {', then '.join(sums)}.",
        f"As a check, {closed}.",
        f"So the sum is $\\boxed{{{total}}}$.",
    ]
    return Worked("series", problem, "\n\n".join(lines), str(total))


FAMILIES: dict[str, Callable[[random.Random, dict[str, int]], Worked | None]] = {
    "expr": gen_expr,
    "linear": gen_linear,
    "system": gen_system,
    "mod": gen_mod,
    "series": gen_series,
}


# --- partitions and streams ----------------------------------------------------------------------


def is_heldout(problem: str) -> bool:
    """True when the problem text belongs to the held-out partition (never to the training source)."""
    digest = hashlib.blake2b(f"{_HELDOUT_SALT}:{normalize_problem(problem)}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64 < HELDOUT_SHARE


@dataclass(frozen=True)
class SyntheticConfig:
    """What a synthetic source generates; one place for the defaults."""

    size: int = 1000
    difficulty: int = 1
    seed: int = 0
    families: tuple[str, ...] = tuple(FAMILIES)

    def __post_init__(self) -> None:
        if not 1 <= self.size <= MAX_SIZE:
            raise SyntheticError(f"size must be in [1, {MAX_SIZE}], got {self.size}")
        if self.difficulty not in DIFFICULTIES:
            raise SyntheticError(f"difficulty must be one of {DIFFICULTIES}, got {self.difficulty}")
        unknown = [f for f in self.families if f not in FAMILIES]
        if unknown or not self.families:
            raise SyntheticError(f"unknown families {unknown}; known: {'+'.join(FAMILIES)}")

    @classmethod
    def from_options(cls, options: dict[str, str]) -> SyntheticConfig:
        known = {"size", "difficulty", "seed", "families", "limit", "solutions", "name", "license"}
        extra = sorted(set(options) - known)
        if extra:
            raise SyntheticError(f"unknown synthetic option(s) {extra}; options: size, difficulty, seed, families")
        kwargs: dict[str, Any] = {}
        for key in ("size", "difficulty", "seed"):
            if key in options:
                try:
                    kwargs[key] = int(options[key])
                except ValueError:
                    raise SyntheticError(f"option {key}={options[key]!r} is not an integer") from None
        if "families" in options:
            kwargs["families"] = tuple(f for f in options["families"].split("+") if f)
        return cls(**kwargs)


def generate(config: SyntheticConfig, heldout: bool = False) -> Iterator[Worked]:
    """`config.size` distinct problems of one partition, families in turn, deterministic in the config.

    The stream of a partition draws from its own seeded generator, so the training problems of a
    seed do not depend on how many held-out problems were asked for (and the other way round).
    """
    rng = random.Random(f"synthetic:{GENERATOR}:{config.difficulty}:{config.seed}:{'heldout' if heldout else 'train'}")
    ranges = _ranges(config.difficulty)
    seen: set[str] = set()
    made, misses = 0, 0
    while made < config.size:
        family = config.families[made % len(config.families)]
        worked = FAMILIES[family](rng, ranges)
        key = normalize_problem(worked.problem) if worked is not None else ""
        if worked is None or key in seen or is_heldout(worked.problem) != heldout:
            misses += 1
            if misses > 10_000:  # 10k draws in a row without a new problem: the family is exhausted
                raise SyntheticError(f"could not draw {config.size} distinct problems: the {family} family at "
                                     f"difficulty {config.difficulty} has run out (ask for fewer or a higher difficulty)")
            continue
        misses = 0
        seen.add(key)
        made += 1
        yield worked


# One written fact of the generator's arithmetic: `a + b = c`, `a - b = c`, `a \\cdot b = c` (integers), not the
# tail of a longer expression (`... + 6 - 4 = 16` restates a whole expression, it is not `6 - 4 = 16`).
_FACT = re.compile(r"(?<![\d.}])(?<![+\-]\s)(?<![+\-])(?<!cdot\s)(?<!cdot)(-?\d+)\s*(\+|-|\\cdot)\s*(-?\d+)\s*=\s*(-?\d+)(?![\d.])")


def arithmetic_slips(text: str) -> list[str]:
    """The false one-operation facts written in a worked solution (`5 - 4 = 6`).

    The learning testbed reads it to tell a right final answer reached by right work from one
    reached despite a slip: an outcome reward pays both alike.
    """
    slips = []
    for m in _FACT.finditer(text):
        a, op, b, c = int(m[1]), m[2], int(m[3]), int(m[4])
        if (a + b if op == "+" else a - b if op == "-" else a * b) != c:
            slips.append(m[0])
    return slips


def row_id(config: SyntheticConfig, index: int, heldout: bool = False) -> str:
    part = "heldout" if heldout else "train"
    return f"synthetic-{GENERATOR}/d{config.difficulty}-s{config.seed}-{part}-{index:06d}"


def read_rows(spec: Any) -> Iterator[dict[str, Any]]:
    """Rows of a `synthetic[:arith][:options]` source spec (the preset's reader)."""
    if spec.path not in (None, "", GENERATOR):
        raise SyntheticError(f"unknown synthetic generator {spec.path!r}; known: {GENERATOR}")
    config = SyntheticConfig.from_options(spec.options)
    for i, w in enumerate(generate(config)):
        yield {"id": row_id(config, i), "source": spec.name, "kind": "computation", "family": w.family,
               "problem": w.problem, "solution": w.solution, "answer": w.answer}


def heldout_rows(config: SyntheticConfig) -> list[dict[str, str]]:
    """Held-out problems in the benchmark format (`id`, `problem`, `answer`) plus their family."""
    return [
        {"id": row_id(config, i, heldout=True), "problem": w.problem, "answer": w.answer, "family": w.family}
        for i, w in enumerate(generate(config, heldout=True))
    ]


def write_heldout(path: str | Path, config: SyntheticConfig) -> Path:
    """Write held-out problems as JSONL that `eval.run --benchmarks NAME=PATH` reads."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = heldout_rows(config)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    return path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        prog="python -m mrtasks.curate.synthetic",
        description="Write held-out synthetic problems (id, problem, answer JSONL, the format eval.run reads). "
        "They are disjoint from every problem the `synthetic` build source yields, for any seed and size.",
    )
    p.add_argument("out", help="JSONL file to write (replaced)")
    p.add_argument("--size", type=int, default=100, help="number of held-out problems (default: 100)")
    p.add_argument("--difficulty", type=int, default=SyntheticConfig.difficulty, choices=DIFFICULTIES)
    p.add_argument("--seed", type=int, default=SyntheticConfig.seed)
    p.add_argument("--families", default="+".join(FAMILIES), help="'+'-joined subset of " + ", ".join(FAMILIES))
    args = p.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        config = SyntheticConfig(size=args.size, difficulty=args.difficulty, seed=args.seed,
                                 families=tuple(f for f in args.families.split("+") if f))
        out = write_heldout(args.out, config)
    except (SyntheticError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    logger.info("%d held-out problems written to %s", args.size, out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
