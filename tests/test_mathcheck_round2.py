"""Issue 19's answer-verification families: notation models write, algebra the normal form
misses, false positives, free text; each with negative cases beside the positive ones."""

import time
from fractions import Fraction
from pathlib import Path

import pytest

from mrtasks.mathcheck import Verdict, expr, judge_in_process, parse_answer
from mrtasks.mathcheck.normalize import normalize
from mrtasks.mathcheck.notation import base_numeral, rewrite
from mrtasks.mathcheck.solutions import relation_intervals, same_zero_sets
from mrtasks.rewards.accuracy import load_pairs, ours, score

DATA = Path(__file__).parent / "data"
FAMILIES = ("notation (issue 19)", "algebra (issue 19)", "false positives (issue 19)", "free text (issue 19)")


@pytest.mark.parametrize("family", FAMILIES)
def test_issue19_family_pairs_are_all_judged_right(family):
    rows = [r for r in load_pairs(DATA / "equivalence_pairs.jsonl") if r.get("category") == family]
    assert len(rows) >= 15 and sum(not r["equal"] for r in rows) >= 5  # negatives beside positives
    result = score(rows, ours(rows))
    assert result.correct == result.total, result.errors


def test_tuning_file_core_pairs():
    """A fixture score: the checker was tuned on this file (tests/data/PEER_PAIRS.md)."""
    rows = [r for r in load_pairs(DATA / "peer_tune.jsonl") if r["core"]]
    result = score(rows, ours(rows))
    assert result.false_pos == 0 and result.accuracy >= 0.97, result.errors


@pytest.mark.parametrize(
    "text, rewritten",
    [
        ("x**12", "x^{12}"),  # Python powers: the whole number is the exponent
        ("x^12", "x^{12}"),  # plain text
        ("$x^12$", "$x^{1}2$"),  # LaTeX: what TeX renders, made explicit
        ("x^12 + \\frac12", "x^{1}2 + \\frac12"),
        ("3.2e-4", "0.00032"),
        ("1.5E3", "1500.0"),  # a decimal mantissa stays a decimal literal (tolerance)
        ("x + 2e-4", "x + 2e-4"),  # Euler's e inside an expression
        ("1e999999", "1 \\cdot 10^{999999}"),  # past MAX_E_EXPONENT: a power of ten, not a decimal
        ("0.\\overline{6}", "\\frac{2}{3}"),
        ("0.1\\dot{6}", "\\frac{1}{6}"),
        ("0.142857142857...", "\\frac{1}{7}"),
        ("3.14159...", "3.14159"),  # digits that do not repeat: the decimal as written
        ("2 3/4", "2\\frac{3}{4}"),
        ("2 5/4", "2 5/4"),  # not a proper fraction: no mixed number
        ("1011_{2}", "1011_2"),
        ("x_{2}", "x_{2}"),  # a subscripted name
        ("√2", "\\sqrt{2}"),
        ("(-inf, 5)", "(-\\infty , 5)"),
        ("\\inf S", "\\inf S"),  # the infimum command
    ],
)
def test_notation_rewrites(text, rewritten):
    assert rewrite(text) == rewritten
    assert rewrite(rewritten) == rewritten  # a second pass reads it the same way


def test_degrees_are_radians_only_inside_trig_arguments():
    assert normalize("\\sin 30^\\circ") == "\\sin(\\frac{30\\pi}{180})"
    assert normalize("30^\\circ") == "30"


def test_base_numerals():
    assert base_numeral("1011_2") == ("1011", 2)
    assert base_numeral("1021_2") is None  # 2 is no binary digit
    assert base_numeral("a_16") is None  # a subscripted name


def test_evaluator_reads_complex_numbers_only_as_answers():
    assert expr.same_value(expr.parse("(1+i)^2"), expr.parse("2i")) is True
    assert expr.same_value(expr.parse("i^2"), expr.parse("1")) is False
    with pytest.raises(expr.ExprError):  # no imaginary unit bound: `i` is a real variable elsewhere
        expr.evaluate(expr.parse("i^2"), {})


def test_evaluator_factorials_odd_roots_and_bars():
    assert expr.evaluate(expr.parse("\\sqrt[3]{-8}"), {}) == pytest.approx(-2)
    assert expr.evaluate(expr.parse("(-8)^{2/3}"), {}) == pytest.approx(4)
    with pytest.raises(expr.ExprError):
        expr.evaluate(expr.parse("\\sqrt{-4}"), {})  # even roots of negatives stay undefined
    with pytest.raises(expr.ExprTooLarge):
        expr.evaluate(expr.parse("1000!"), {})  # still bounded
    assert expr.evaluate(expr.parse("(k+1)!"), {"k": 0.5}) == pytest.approx(1.5 * 0.5 * 3.141592653589793**0.5)
    assert expr.evaluate(expr.parse("|x||y|"), {"x": -2, "y": 3}) == 6
    assert expr.evaluate(expr.parse("8[2x]^2"), {"x": Fraction(1)}) == 32


def test_solution_sets():
    eq = lambda a: parse_answer(a)  # noqa: E731
    assert same_zero_sets(eq("\\frac1a + \\frac1b = 1"), eq("b = \\frac{a}{a-1}")) is True
    assert same_zero_sets(eq("x^2 = 9"), eq("x = 3")) is False
    assert same_zero_sets(eq("x^2 = -1"), eq("x^2 = -4")) is None  # no real root found: no say
    assert same_zero_sets(eq("x = 10^7"), eq("x = 2 \\cdot 10^7")) is None  # beyond the grid
    assert relation_intervals(eq("x^2 \\leq 4")) == [(-2, True, 2, True)]
    assert relation_intervals(eq("x^2 < 4")) == [(-2, False, 2, False)]
    assert relation_intervals(eq("x + y < 4")) is None  # two variables


def test_solution_sets_are_bounded():
    eq = lambda a: parse_answer(a)  # noqa: E731
    start = time.perf_counter()
    assert same_zero_sets(eq("\\sin(1000x) = 0"), eq("\\sin(1000x) = 0 + 0")) is None  # too many roots
    assert relation_intervals(eq("\\sin(1000x) > 0")) is None
    big = "+".join(f"\\frac{{{k}x^{{2}}y}}{{z+{k}}}" for k in range(1, 12))
    assert same_zero_sets(eq(f"{big} = z"), eq(f"{big} = 2z")) is None  # over MAX_NODES
    assert time.perf_counter() - start < 1.0


def test_formulas_keep_the_strict_reading():
    # formulas (Masked-Then-Fill, Error Correction) never use the solution-set rules
    assert judge_in_process("\\sqrt{x} = 3", "x = 9", strip_lhs=False) is Verdict.DIFFERENT
    assert judge_in_process("t^2 \\ge 9", "|t| \\ge 3", strip_lhs=False) is Verdict.DIFFERENT


def test_frozen_peer_heldout_core_threshold():
    """The held-out score (tests/data/PEER_PAIRS.md): pairs from eight other projects' grader suites,
    frozen before tuning and never looked at. Aggregate figures only, never the pairs."""
    rows = [r for r in load_pairs(DATA / "peer_heldout.jsonl") if r["core"]]
    result = score(rows, ours(rows))
    # plain numbers only, so that a failure prints no pair
    n, accuracy, false_pos = result.total, result.accuracy, result.false_pos
    del rows, result
    assert n == 199
    assert accuracy >= 0.93 and false_pos <= 1, f"core accuracy {accuracy:.3f}, {false_pos} false positives"


# An equation between two names in a final answer: a capital names the asked quantity and a small
# letter the problem's parameter (`N = n` is n, in either direction); two small letters or two
# capitals are a relation between unknowns (`y = x` stands for nothing), and case stays part of a name.
NAME_EQUATIONS = [
    ("n", "N=n", True),
    ("N = n", "n", True),
    ("\\boxed{K=k}", "k", True),
    ("t", "T = t", True),
    ("m", "N_{\\max} = m", True),
    ("n_1", "M = n_1", True),
    ("N", "N=n", False),  # the name, not the value
    ("m", "N=n", False),
    ("n", "n=N", False),  # case is part of a name: this one states N
    ("N=n", "N", False),
    ("x", "y = x", False),  # a line, not a value
    ("y = x", "x", False),
    ("a", "b = a", False),
    ("B", "A = B", False),
    ("n", "a_n = n", False),  # a sequence stated through its index
    ("x", "f(x) = x", False),
    # unchanged around it: a label with a value, a near miss, relations between two equations
    ("x=2", "2", True),
    ("x=3", "2", False),
    ("2n", "N = 2n", True),
    ("2n", "N = n", False),
    ("N = n", "M = n", True),
    ("N = n", "N = m", False),
    ("N \\leq n", "n", False),
]


@pytest.mark.parametrize("pred, ref, equal", NAME_EQUATIONS)
def test_an_equation_naming_the_asked_quantity(pred, ref, equal):
    assert judge_in_process(pred, ref) is (Verdict.EQUAL if equal else Verdict.DIFFERENT)


def test_name_equations_stay_strict_in_formulas():
    # formulas (Masked-Then-Fill, Error Correction) keep their left sides: `N = n` is not `n`
    assert judge_in_process("n", "N = n", strip_lhs=False) is Verdict.DIFFERENT
    assert judge_in_process("N = n", "n", strip_lhs=False) is Verdict.DIFFERENT
