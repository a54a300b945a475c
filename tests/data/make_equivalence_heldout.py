"""Write tests/data/equivalence_heldout.jsonl: labelled (reference, prediction) pairs that the
answer checker is NOT tuned on (its score on them is the honest one).

    python tests/data/make_equivalence_heldout.py   # from the repo root; deterministic

References are real final answers (MATH500 and OlympiadBench, from ../shared/data); predictions
are made from them by the hand-written rewriting rules below, one group per family of issue 11
(relations, labels, several answers, intervals, number formats, words and wrappers). Each rule
says whether its rewrite is the same object (`equal: true`) or a different one; about half
are different. The labels follow the checker's policies, stated in the module docstrings of
`mrtasks/mathcheck/` (a decimal matches an exact value within a relative 1e-6; a value written with `\\approx` within
half a unit of its last digit; a name on the left of `=` in a final answer is a label; an
ordered tuple is not a set; `\\le` is not `<`).
This file was written and committed before the checker was tuned for these families.
"""

from __future__ import annotations

import json
import random
import re
from fractions import Fraction
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[1].parent / "shared" / "data"
OUT = HERE / "equivalence_heldout.jsonl"

INT = re.compile(r"^-?\d+$")
FRAC = re.compile(r"^(-?)\\[dt]?frac\s*\{(\d+)\}\s*\{(\d+)\}$")


def math500() -> list[str]:
    with open(SHARED / "benchmarks" / "math500.jsonl", encoding="utf-8") as f:
        return [json.loads(line)["answer"] for line in f if line.strip()]


def olympiad() -> list[str]:
    with open(SHARED / "corpora" / "olympiadbench_oe_en.jsonl", encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [r["final_answer"][0] for r in rows if r.get("final_answer")]


def thousands(n: int, sep: str) -> str:
    return f"{n:,}".replace(",", sep)


def number_rules(n: int, rng: random.Random) -> list[tuple[str, bool, str]]:
    """(prediction, equal, category) rewrites of an integer reference."""
    out = [(f"{n}.0", True, "number"), (f"{n + rng.choice([1, -1, 2])}", False, "number")]
    if abs(n) >= 1000:
        out += [
            (thousands(n, ",\\!"), True, "number"),
            (thousands(n, "{,}"), True, "number"),
            (thousands(n, " "), True, "number"),
            (thousands(n, "\\,"), True, "number"),
            (thousands(n + 1000, ",\\!"), False, "number"),
        ]
    elif n > 9:
        out += [(f"{n},\\!000", False, "number"), (f"{n} 000", False, "number")]
    if n != 0:
        out += [(str(-n), False, "number"), (str(n * 10), False, "number")]
    return out


def wrapper_rules(a: str, wrong: str) -> list[tuple[str, bool, str]]:
    return [
        (f"Answer \\( {a} \\)", True, "wrapper"),
        (f"\\[ {a} \\]", True, "wrapper"),
        (f"$$ {a} $$", True, "wrapper"),
        (f"The answer is ${a}$.", True, "wrapper"),
        (f"{a} \\textbf{{meters}}", True, "wrapper"),
        (f"{a}\\text{{ square units}}", True, "wrapper"),
        (f"Answer \\( {wrong} \\)", False, "wrapper"),
        (f"$$ {wrong} $$", False, "wrapper"),
        (f"{wrong} \\textbf{{liters}}", False, "wrapper"),
    ]


def relation_rules(a: str, n: int, rng: random.Random) -> list[tuple[str, bool, str]]:
    """Chains and approximations around an integer value `a` (= n)."""
    k = rng.randint(2, 9)
    return [
        (f"n = {n - k} + {k} = {a}", True, "relation"),
        (f"x = {2 * n} / 2 = {a}", True, "relation"),
        (f"n \\approx {a}", True, "relation"),
        (f"{a} = x", True, "relation"),
        (f"n = {n - k} + {k} = {n + 1}", False, "relation"),
        (f"{a} + {k} = {n + k}", False, "relation"),
        (f"2x = {a}", False, "relation") if n != 0 else (f"x = {n + 3}", False, "relation"),
        (f"n \\approx {n + 1}", False, "relation"),
    ]


def label_rules(a: str, wrong: str) -> list[tuple[str, bool, str]]:
    return [
        (f"g(t) = {a}", True, "label"),
        (f"|PQ| = {a}", True, "label"),
        (f"\\angle ABC = {a}", True, "label"),
        (f"AB = {a}", True, "label"),
        (f"S_{{\\max}} = {a}", True, "label"),
        (f"g(t) = {wrong}", False, "label"),
        (f"|PQ| = {wrong}", False, "label"),
        (f"AB = {wrong}", False, "label"),
    ]


def fraction_rules(sign: str, p: int, q: int) -> list[tuple[str, bool, str]]:
    value = Fraction(int(sign + str(p)), q)
    out = [
        (f"{sign}\\tfrac{{{p}}}{{{q}}}", True, "number"),
        (f"{sign}\\dfrac{{{2 * p}}}{{{2 * q}}}", True, "number"),
        (f"{sign}{p}/{q}", True, "number"),
        (f"{sign}\\frac{{{q}}}{{{p}}}", value == 1 or value == -1, "number"),
        (f"{sign}\\frac{{{p + 1}}}{{{q}}}", False, "number"),
    ]
    f = float(value)
    out.append((repr(f), True, "number"))  # a long decimal: 0.1666666666666667
    short = f"{f:.3f}"
    if Fraction(short) != value:
        out.append((short, False, "number"))  # 0.083 is not 1/12
        out.append((f"\\approx {short}", True, "relation"))  # stated as an approximation
        out.append((f"{sign}\\frac{{{p}}}{{{q}}} \\approx {short}", True, "relation"))
        wrong = f"{f + 0.01 * (1 if f >= 0 else -1):.3f}"
        out.append((f"\\approx {wrong}", False, "relation"))
    else:
        out.append((short, True, "number"))
        out.append((short.replace(".", ","), True, "number") if len(short.split(".")[1]) != 3 else
                   (f"{f + 1:.3f}", False, "number"))  # fmt: skip
    return out


def decimal_rules(a: str) -> list[tuple[str, bool, str]]:
    """A reference written as a decimal, e.g. 3.21 (decimal comma when unambiguous)."""
    whole, _, frac = a.lstrip("-").partition(".")
    sign = "-" if a.startswith("-") else ""
    exact = Fraction(a)
    out = [(f"\\frac{{{exact.numerator}}}{{{exact.denominator}}}", True, "number")]
    if len(frac) != 3 and whole:
        out.append((f"{sign}{whole},{frac}", True, "number"))
    out.append((f"{sign}{whole or 0}.{frac}0", True, "number"))
    out.append((f"{sign}{whole or 0}.{frac[:-1] or 0}", Fraction(f"{sign}{whole or 0}.{frac[:-1] or 0}") == Fraction(a), "number"))
    out.append((f"{sign}{whole or 0}{frac}", False, "number"))
    return out


INTERVALS = [
    # (reference, prediction, equal)
    ("(3,4]", "3 < x \\le 4", True),
    ("(3,4]", "3 \\le x \\le 4", False),
    ("(3,4]", "x \\in (3, 4]", True),
    ("(3,4]", "4 \\geq x > 3", True),
    ("(3,4]", "3 < x < 4", False),
    ("(2,\\infty)", "x > 2", True),
    ("(2,\\infty)", "x \\geq 2", False),
    ("(2,\\infty)", "2 < x", True),
    ("(2,\\infty)", "-x < -2", True),
    ("(2,\\infty)", "x < 2", False),
    ("(-\\infty, 0]", "x \\leq 0", True),
    ("(-\\infty, 0]", "x < 0", False),
    ("(-\\infty, 0]", "0 \\ge x", True),
    ("(-\\infty, 0]", "-x \\geq 0", True),
    ("(-\\infty, 0]", "x \\ge 0", False),
    ("(5,\\infty)", "x>5", True),
    ("(5,\\infty)", "x > 5.", True),
    ("(5,\\infty)", "x \\ge 5", False),
    ("(-\\infty, 2) \\cup (3, \\infty)", "x < 2 \\text{ or } x > 3", True),
    ("(-\\infty, 2) \\cup (3, \\infty)", "x<2 \\text{ or } x>3", True),
    ("(-\\infty, 2) \\cup (3, \\infty)", "2 < x < 3", False),
    ("(-\\infty, 2) \\cup (3, \\infty)", "x \\le 2 \\text{ or } x \\ge 3", False),
    ("(-\\infty, 2) \\cup (3, \\infty)", "(3,\\infty) \\cup (-\\infty,2)", True),
    ("x \\in [-2,7]", "-2 \\le x \\le 7", True),
    ("x \\in [-2,7]", "[-2, 7]", True),
    ("x \\in [-2,7]", "-2 < x \\le 7", False),
    ("x \\in [-2,7]", "7 \\geq x \\geq -2", True),
    ("x \\in [-2,7]", "(-2, 7)", False),
    ("(-\\sqrt{3}, \\sqrt{3})", "-\\sqrt{3} < x < \\sqrt{3}", True),
    ("(-\\sqrt{3}, \\sqrt{3})", "|x| < \\sqrt{3}", True),
    ("(-\\sqrt{3}, \\sqrt{3})", "|x| \\le \\sqrt{3}", False),
    ("(-\\sqrt{3}, \\sqrt{3})", "-\\sqrt{3} \\le x < \\sqrt{3}", False),
    ("\\left(\\frac{3}{5},\\frac{8}{3}\\right]", "\\frac35 < x \\le \\frac83", True),
    ("\\left(\\frac{3}{5},\\frac{8}{3}\\right]", "0.6 < x \\leq \\frac{8}{3}", True),
    ("\\left(\\frac{3}{5},\\frac{8}{3}\\right]", "\\frac35 < x < \\frac83", False),
    ("(0,9) \\cup (9,36)", "0 < x < 9 \\text{ or } 9 < x < 36", True),
    ("(0,9) \\cup (9,36)", "(0,36)", False),
    ("(0,9) \\cup (9,36)", "0<x<36", False),
    ("(2,12) \\cup (12,102)", "(2,12)\\cup(12,102).", True),
    ("(2,12) \\cup (12,102)", "2<x<102", False),
    ("(-\\infty,-5)", "x<-5", True),
    ("(-\\infty,-5)", "x \\le -5", False),
    ("(-\\infty,-5)", "-5 > x", True),
    ("(-\\infty, 0) \\cup\\{1\\}", "x<0 \\text{ or } x=1", True),
    ("(-\\infty, 0) \\cup\\{1\\}", "(-\\infty,0)", False),
    ("(-\\infty, 0) \\cup\\{1\\}", "(-\\infty, 0] \\cup \\{1\\}", False),
    ("[-3,4]", "-3 \\le x \\le 4", True),
    ("[-3,4]", "x \\in [-3, 4].$", True),
    ("[-3,4]", "-3 \\le x < 4", False),
    ("(0,2)", "0<g(x)<2", True),
    ("(0,2)", "0 \\le g(x) < 2", False),
    ("(0,2)", "0<f(x)<2.", True),
    ("[-3,-2] \\cup [2,3]", "2 \\leq |w| \\leq 3", True),
    ("[-3,-2] \\cup [2,3]", "2 < |w| \\leq 3", False),
    ("[-3,-2] \\cup [2,3]", "-3 \\le w \\le 3", False),
    ("\\{-2\\} \\cup [1,5)", "x \\in \\{-2\\} \\cup [1,5).$", True),
    ("\\{-2\\} \\cup [1,5)", "[1,5) \\cup \\{-2\\}", True),
    ("\\{-2\\} \\cup [1,5)", "[1,5)", False),
    ("\\{-2\\} \\cup [1,5)", "\\{-2\\} \\cup [1,5]", False),
    ("[1,\\infty)", "x \\geq 1", True),
    ("[1,\\infty)", "1 \\le x", True),
    ("[1,\\infty)", "x > 1", False),
    ("(-1, 1)", "-1 < t < 1", True),
    ("(-1, 1)", "[-1, 1]", False),
    ("(-\\infty, \\infty)", "\\mathbb{R}", True),
    ("(-\\infty, \\infty)", "(0,\\infty)", False),
]

RELATIONS = [
    ("y = 2x + 3", "2x - y + 3 = 0", True),
    ("y = 2x + 3", "y - 2x = 3", True),
    ("y = 2x + 3", "2x + 3 = y", True),
    ("y = 2x + 3", "4x - 2y + 6 = 0", True),
    ("y = 2x + 3", "y = 2x - 3", False),
    ("y = 2x + 3", "y = 3x + 2", False),
    ("y = 2x + 3", "2x - y - 3 = 0", False),
    ("y = -2x", "2x + y = 0", True),
    ("y = -2x", "y = 2x", False),
    ("y = -2x", "-y = 2x", True),
    ("y = -2x", "x = -2y", False),
    ("5x - 7y + 11z + 4 = 0", "-5x + 7y - 11z - 4 = 0", True),
    ("5x - 7y + 11z + 4 = 0", "10x - 14y + 22z + 8 = 0", True),
    ("5x - 7y + 11z + 4 = 0", "5x - 7y + 11z = -4", True),
    ("5x - 7y + 11z + 4 = 0", "5x - 7y + 11z - 4 = 0", False),
    ("5x - 7y + 11z + 4 = 0", "5x + 7y + 11z + 4 = 0", False),
    ("y=\\frac{1}{2}x+\\frac{3}{2}", "x - 2y + 3 = 0", True),
    ("y=\\frac{1}{2}x+\\frac{3}{2}", "3x-6y+9=0", True),
    ("y=\\frac{1}{2}x+\\frac{3}{2}", "x - 2y - 3 = 0", False),
    ("y=\\frac{1}{2}x+\\frac{3}{2}", "y = \\frac{x+3}{2}", True),
    ("y \\leq 7", "7 \\geq y", True),
    ("y \\leq 7", "y < 7", False),
    ("y \\leq 7", "-y \\geq -7", True),
    ("y \\leq 7", "y \\geq 7", False),
    ("t < 3", "-t > -3", True),
    ("t < 3", "3 > t", True),
    ("t < 3", "t \\le 3", False),
    ("t < 3", "-t < -3", False),
    ("x \\leq 5", "x < 5", False),
    ("x \\leq 5", "5 \\ge x", True),
    ("x = 5", "2x = 5", False),
    ("x = 5", "2x = 10", True),
    ("x = 5", "5 = x", True),
    ("x = 5", "x = -5", False),
    ("x^2 + y^2 = 25", "y^2 + x^2 = 25", True),
    ("x^2 + y^2 = 25", "x^2 + y^2 - 25 = 0", True),
    ("x^2 + y^2 = 25", "25 = x^2 + y^2", True),
    ("x^2 + y^2 = 25", "x^2 + y^2 = 5", False),
    ("x^2 + y^2 = 25", "x^2 - y^2 = 25", False),
    ("\\frac{\\sqrt2}{2}", "\\frac{\\sqrt{2}}{2} \\approx 0.707", True),
    ("\\frac{\\sqrt2}{2}", "\\approx 0.7071", True),
    ("\\frac{\\sqrt2}{2}", "\\approx 0.71", True),
    ("\\frac{\\sqrt2}{2}", "0.707", False),
    ("\\frac{\\sqrt2}{2}", "\\approx 0.75", False),
    ("\\frac{\\sqrt2}{2}", "\\frac{\\sqrt{3}}{2} \\approx 0.866", False),
    ("\\pi", "\\approx 3.14159", True),
    ("\\pi", "3.14", False),
    ("\\pi", "\\approx 3.15", False),
    ("k \\geqslant 2", "k \\ge 2", True),
    ("k \\geqslant 2", "k > 2", False),
    ("k \\geqslant 2", "2 \\le k", True),
    ("n = k+4", "k = n - 4", True),
    ("n = k+4", "n = k - 4", False),
    ("n = k+4", "k+4", True),
    ("a = b = 2", "a=2, b=2", True),
    ("a = b = 2", "a = b = 3", False),
    ("n = 10", "n = 4 + 4 + 2 = 10", True),
    ("n = 10", "n = 4 + 4 + 2 = 11", False),
]

LABELS = [
    ("3, 8", "PQ=3, RS=8", True),
    ("3, 8", "PQ=3, RS=9", False),
    ("5:13", "S_1:S_2=5:13", True),
    ("5:13", "S_1 : S_2 = 13:5", False),
    ("(3,1),(5,1)", "a=3,b=1; a=5,b=1", True),
    ("(3,1),(5,1)", "a=3, b=1", False),
    ("(3,1),(5,1)", "a=1,b=3; a=1,b=5", False),
    ("\\frac{2}{\\sqrt5}", "\\frac{AM}{MB}=\\frac{2}{\\sqrt5}", True),
    ("\\frac{2}{\\sqrt5}", "\\frac{AM}{MB}=\\frac{2\\sqrt5}{5}", True),
    ("\\frac{2}{\\sqrt5}", "\\frac{AM}{MB}=\\frac{\\sqrt5}{2}", False),
    ("2", "g(t)=2", True),
    ("2", "|PQ|=2", True),
    ("2", "|PQ|=2\\sqrt2", False),
    ("2x", "f(x)=2 x", True),
    ("f(x)=2 x", "2x", True),
    ("f(x)=2 x", "f(x) = x + x", True),
    ("f(x)=2 x", "f(x) = x^2", False),
    ("f(x)=2 x", "f(x)=2x+1", False),
    ("f(n)=n", "f(n) = n", True),
    ("f(n)=n", "f(n) = n + 1", False),
    ("M=2^{N-2}+1", "2^{N-2}+1", True),
    ("M=2^{N-2}+1", "M = 2^{N-1}+1", False),
    ("k=3", "3", True),
    ("k=3", "k = 4", False),
    ("m_{\\max }=n^{2}-n-1", "n^2 - n - 1", True),
    ("m_{\\max }=n^{2}-n-1", "n^2 - n + 1", False),
    ("N=n", "n", True),
    ("N=n", "2n", False),
]

MULTI = [
    ("3, 4", "\\boxed{3}, \\boxed{4}", True),
    ("3, 4", "\\boxed{4} \\text{ and } \\boxed{3}", True),
    ("3, 4", "\\boxed{3}", False),
    ("3, 4", "\\boxed{3}, \\boxed{5}", False),
    ("(1,4),(5,4)", "\\boxed{(1,4)} \\text{ and } \\boxed{(5,4)}", True),
    ("(1,4),(5,4)", "\\boxed{(5,4)} \\text{ and } \\boxed{(1,4)}", True),
    ("(1,4),(5,4)", "\\boxed{(4,1)} \\text{ and } \\boxed{(4,5)}", False),
    ("(1,4),(5,4)", "\\boxed{(1,4)}", False),
    ("\\{-17, 17\\}", "\\pm 17", True),
    ("\\{-17, 17\\}", "17", False),
    ("\\{-17, 17\\}", "\\pm 18", False),
    ("-17, 17", "x = \\pm 17", True),
    ("(3,9),(9,3)", "(3,9) or (9,3)", True),
    ("(3,9),(9,3)", "(3,9)", False),
    ("(3,9),(9,3)", "\\{3, 9\\}", False),
    ("1,3,5", "1; 3; 5", True),
    ("1,3,5", "5; 1; 3", True),
    ("1,3,5", "1; 3", False),
    ("1,3,5", "\\{1,3,5\\}", True),
    ("1,3,5", "(1,3,5)", False),
    ("2500,7500", "2500 \\text{ or } 7500", True),
    ("2500,7500", "7{,}500 \\text{ and } 2{,}500", True),
    ("2500,7500", "2500 \\text{ or } 7000", False),
    ("11,13", "x = 11 \\text{ or } x = 13", True),
    ("11,13", "x = 11 \\text{ or } x = 12", False),
    ("-1,0,1", "0, \\pm 1", True),
    ("-1,0,1", "0, \\pm 2", False),
    ("1 \\pm \\sqrt{19}", "1+\\sqrt{19}, 1-\\sqrt{19}", True),
    ("1 \\pm \\sqrt{19}", "1+\\sqrt{19}", False),
    ("3 \\pm 2 \\sqrt{2}", "3 - 2\\sqrt2 \\text{ and } 3 + 2\\sqrt2", True),
    ("3 \\pm 2 \\sqrt{2}", "3 \\pm \\sqrt{2}", False),
    ("\\{1\\pm\\sqrt{5},-2\\}", "-2, 1+\\sqrt5, 1-\\sqrt5", True),
    ("\\{1\\pm\\sqrt{5},-2\\}", "-2, 1+\\sqrt5", False),
    ("(6,31,-1)", "\\{6, 31, -1\\}", False),
    ("(6,31,-1)", "(31, 6, -1)", False),
    ("(6,31,-1)", "\\left(6, 31, -1\\right)", True),
    ("(1,1), (3,2)", "(3,2); (1,1)", True),
    ("(1,1), (3,2)", "(1,1), (2,3)", False),
    ("$69$,$84$", "\\boxed{84}, \\boxed{69}", True),
    ("$69$,$84$", "69 \\text{ and } 84", True),
    ("$69$,$84$", "69 \\text{ and } 85", False),
    ("$90^{\\circ}$,$60^{\\circ}$", "60^\\circ, 90^\\circ", True),
    ("$90^{\\circ}$,$60^{\\circ}$", "60^\\circ", False),
    ("$f(x)=x$,$f(x)=2-x$", "f(x) = 2 - x \\text{ and } f(x) = x", True),
    ("$f(x)=x$,$f(x)=2-x$", "f(x) = x", False),
    ("$f(x)=x$,$f(x)=2-x$", "f(x) = x \\text{ or } f(x) = x - 2", False),
]

WORDS = [
    ("35\\%", "35 percent", True),
    ("35\\%", "35 pct", True),
    ("35\\%", "35 percentage", True),
    ("35\\%", "36 percent", False),
    ("35\\%", "3.5 percent", False),
    ("62.5%", "62.5 \\%", True),
    ("62.5%", "62.5 percent", True),
    ("62.5%", "625 percent", False),
    ("\\frac{2}{5}", "\\frac{2}{5} \\textbf{liters}", True),
    ("\\frac{2}{5}", "\\frac{5}{2} \\textbf{liters}", False),
    ("7", "Answer \\( 7 \\)", True),
    ("7", "\\[ 7 \\]", True),
    ("7", "$$ 7 $$", True),
    ("7", "Answer \\( 8 \\)", False),
    ("D", "D. y = 12", True),
    ("D", "(D)", True),
    ("D", "\\text{D}", True),
    ("D", "C. y = 12", False),
    ("\\text{(C)}", "C", True),
    ("\\text{(C)}", "(C) 24", True),
    ("\\text{(C)}", "\\text{(B)}", False),
    ("\\text{(E)}", "\\textbf{(E)}", True),
    ("\\text{(E)}", "E) 10", True),
    ("\\text{(E)}", "(A)", False),
    ("\\text{(B)}", "B", True),
    ("\\text{(B)}", "D", False),
    ("864 \\mbox{ inches}^2", "864", True),
    ("864 \\mbox{ inches}^2", "864 \\text{ square inches}", True),
    ("864 \\mbox{ inches}^2", "846", False),
    ("15\\mbox{ cm}^2", "15 \\text{cm}^2", True),
    ("15\\mbox{ cm}^2", "15 \\text{ cm}", True),
    ("15\\mbox{ cm}^2", "16 \\text{ cm}^2", False),
    ("5.4 \\text{ cents}", "5.4", True),
    ("5.4 \\text{ cents}", "54 \\text{ cents}", False),
    ("\\$32,\\!348", "32348", True),
    ("\\$32,\\!348", "\\$32,348", True),
    ("\\$32,\\!348", "32,\\!384", False),
    ("\\$18.90", "18.9", True),
    ("\\$18.90", "\\$18.09", False),
    ("\\text{Evelyn}", "Evelyn", True),
    ("\\text{Evelyn}", "\\text{Navin}", False),
    ("\\text{east}", "East", True),
    ("\\text{east}", "west", False),
    ("\\text{even}", "\\textbf{even}", True),
    ("\\text{even}", "odd", False),
    ("\\frac{270}7\\text{ degrees}", "\\frac{270}{7}", True),
    ("\\frac{270}7\\text{ degrees}", "\\frac{270}{7}^\\circ", True),
    ("\\frac{270}7\\text{ degrees}", "\\frac{27}{7}", False),
    ("45", "45 \\text{ minutes}", True),
    ("45", "45 minutes", True),
    ("45", "54 minutes", False),
]


def main() -> None:
    rng = random.Random(11)
    pairs: list[dict] = []

    def add(ref: str, pred: str, equal: bool, category: str, source: str) -> None:
        pairs.append({"reference": ref, "prediction": pred, "equal": bool(equal), "category": category,
                      "source": source})  # fmt: skip

    answers = [("math500", a) for a in math500()] + [("olympiadbench", a) for a in olympiad()]
    ints = [(s, a) for s, a in answers if INT.match(a.strip("$"))]
    fracs = [(s, a) for s, a in answers if FRAC.match(a.strip("$"))]
    decimals = [(s, a) for s, a in answers if re.fullmatch(r"-?\d*\.\d+", a)]
    rng.shuffle(ints)
    rng.shuffle(fracs)

    seen_ints: set[str] = set()
    picked = []
    for src, a in ints:
        a = a.strip("$")
        if a not in seen_ints:
            seen_ints.add(a)
            picked.append((src, a))
    big = [p for p in picked if abs(int(p[1])) >= 1000][:12]
    small = [p for p in picked if abs(int(p[1])) < 1000][:12]
    for src, a in big + small:
        n = int(a)
        for pred, eq, cat in number_rules(n, rng):
            add(a, pred, eq, cat, src)
    for src, a in small[:6] + big[:2]:
        n = int(a)
        for pred, eq, cat in wrapper_rules(a, str(n + 1)):
            add(a, pred, eq, cat, src)
        for pred, eq, cat in relation_rules(a, n, rng):
            add(a, pred, eq, cat, src)
        for pred, eq, cat in label_rules(a, str(n + 2)):
            add(a, pred, eq, cat, src)
    seen_fracs: set[str] = set()
    for src, a in fracs:
        a = a.strip("$")
        sign, p, q = FRAC.match(a).groups()
        if (sign, p, q) in seen_fracs or int(p) == 0:
            continue
        seen_fracs.add((sign, p, q))
        for pred, eq, cat in fraction_rules(sign, int(p), int(q)):
            add(a, pred, eq, cat, src)
        if len(seen_fracs) >= 12:
            break
    for src, a in decimals[:6]:
        for pred, eq, cat in decimal_rules(a):
            add(a, pred, eq, cat, src)
    for table, cat in ((INTERVALS, "interval"), (RELATIONS, "relation"), (LABELS, "label"), (MULTI, "multi"),
                       (WORDS, "wrapper")):  # fmt: skip
        for ref, pred, eq in table:
            add(ref, pred, eq, cat, "hand")
    with open(OUT, "w", encoding="utf-8") as f:
        for row in pairs:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    pos = sum(r["equal"] for r in pairs)
    print(f"{OUT.name}: {len(pairs)} pairs, {pos} equal, {len(pairs) - pos} not equal")


if __name__ == "__main__":
    main()
