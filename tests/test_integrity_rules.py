"""Issue 17 (part A): the reference decides whether a fill may earn similarity, presentational
markup is removed by one rule, near misses of every kind earn nothing, approximations must pin
exact answers, right work in another standard form is accepted, and every reward is time-bounded."""

from __future__ import annotations

import random
import time

import pytest

from mrtasks.mathcheck import Verdict, in_grammar, judge, strip_markup
from mrtasks.rewards import get_reward
from mrtasks.rewards.adversary import (
    DECORATIONS,
    LONG_KINDS,
    LONG_ROWS,
    coarse_approximation,
    decorate,
    long_completion,
    near_misses,
    one_number_changed,
    position_scores,
    reprinted,
    script_braces,
)
from mrtasks.rewards.mask_fill import near_miss

IN_GRAMMAR = ["x^2 - 5x + 6 = (x-2)(x-3)", "a_{n+1} = 2a_n + 1", "3 \\cdot 4 = 12", "y \\leq \\frac{1}{2}x + 3",
              "\\sqrt{b^2 - 4ac}", "S = \\{1, 2, 3\\}", "f(x) = \\sin x + \\cos x"]  # fmt: skip
OUT_OF_GRAMMAR = ["\\sum_{k=1}^{n} k = \\frac{n(n+1)}{2}", "\\int_0^1 x^2 \\, dx = \\frac{1}{3}",
                  "a \\equiv 3 \\pmod{7}", "\\lim_{x \\to 0} \\frac{\\sin x}{x} = 1", "A \\cap B = \\emptyset"]  # fmt: skip


def test_in_grammar_is_a_property_of_the_text():
    assert all(in_grammar(f) for f in IN_GRAMMAR)
    assert not any(in_grammar(f) for f in OUT_OF_GRAMMAR)
    assert not in_grammar("the pigeonhole principle") and not in_grammar("")
    assert in_grammar("x = 5 \\quad (\\star)")  # markup removed first


@pytest.mark.parametrize("family", sorted(DECORATIONS))
def test_every_decoration_family_is_removed_from_right_work(family):
    for seed in range(12):
        for formula in IN_GRAMMAR + OUT_OF_GRAMMAR:
            fill = decorate(formula, family, random.Random(seed))
            assert judge(fill, formula, strip_lhs=False) is Verdict.EQUAL, (family, fill)


@pytest.mark.parametrize("family", sorted(DECORATIONS))
def test_decorated_wrong_fills_earn_what_undecorated_ones_earn(family):
    masks = IN_GRAMMAR + OUT_OF_GRAMMAR
    wrong = [one_number_changed(m) for m in masks]
    plain = position_scores(masks, wrong)
    for seed in range(4):
        decorated = position_scores(masks, [decorate(w, family, random.Random(seed)) for w in wrong])
        assert sum(decorated) <= sum(plain) + 1e-9 and max(decorated) <= 0.1, (family, decorated)


def test_markup_rule_keeps_content():
    assert strip_markup("\\text{Im}(z) = 0") == "\\text{Im}(z) = 0"  # an operator name, not a connective
    assert strip_markup("\\text{Area} = 12") == "\\text{Area} = 12"  # a label before a relation
    assert strip_markup("f (2) = 5") == "f (2) = 5"  # function application, not an equation label
    assert strip_markup("1 + 2 + \\cdots") == "1 + 2 + \\cdots"  # a series
    assert strip_markup("1, 2, \\dots") == "1, 2, \\dots"
    assert strip_markup("A^\\dagger") == "A^\\dagger"  # a script, not a mark
    assert strip_markup("\\therefore") == "\\therefore"  # never stripped to empty
    assert strip_markup("\\text{by induction}") == "\\text{by induction}"
    assert strip_markup("x = 12 \\quad (2)") == "x = 12"
    assert strip_markup("I+J = (1)") == "I+J = (1)"  # the right side, not a label
    assert strip_markup("x = \\quad \\blacksquare") == "x = \\quad \\blacksquare"
    assert strip_markup("\\color{red}{x = 5}\\tag*{}") == "x = 5"


def test_in_grammar_reference_never_pays_similarity_for_an_unreadable_fill():
    ref = "x^2 + 2x + 1 = 0"
    # fills the checker cannot read: formerly undecided, so 0.8-0.9 similarity; now 0
    assert position_scores([ref] * 2, ["x^2 + 2x + 1 = 0 \\pmod{2}", "x^2 + 2x + 1 = 0 \\oplus 0"]) == [0.0, 0.0]
    assert position_scores([ref], ["\\therefore x^2 + 2x + 1 = 0"]) == [1.0]
    # outside the grammar, similarity still applies to a fill that is no near miss
    out = "\\sum_{k=1}^{n} k^2 = \\frac{n(n+1)(2n+1)}{6}"
    (score,) = position_scores([out], ["\\sum_{1 \\le k \\le n} k^2 = \\frac{n(n+1)(2n+1)}{6}"])
    assert 0.5 <= score < 1.0


def test_near_misses_of_every_kind_score_zero_outside_the_grammar():
    refs = ["\\sum_{k=1}^{n} k = \\frac{n(n+1)}{2}", "\\tan \\theta \\cdot \\lim_{x \\to 0} f(x) < 1",
            "A \\cap B \\subseteq \\min_{i} S_i - T", "a \\equiv 3 \\pmod{7}", "\\gcd(a, b) \\mid \\int_0^1 g(t) dt"]  # fmt: skip
    seen = set()
    for ref in refs:
        for kind, fill in near_misses(ref).items():
            seen.add(kind)
            assert near_miss(fill, ref), (kind, fill)
            assert position_scores([ref], [fill]) == [0.0], (kind, fill)
    assert seen == {"sign", "operator", "function", "relation", "letter"}
    assert near_miss("a \\not\\equiv 3 \\pmod{7}", "a \\equiv 3 \\pmod{7}")
    assert near_miss("-\\sum_{k=1}^{n} k", "\\sum_{k=1}^{n} k")
    # a bound letter renamed consistently may be the same formula: left to similarity
    assert not near_miss("\\sum_{j=1}^{n} j^2", "\\sum_{k=1}^{n} k^2")
    assert not near_miss("\\int_0^1 t^2 \\, dt", "\\int_0^1 x^2 \\, dx")
    assert near_miss("\\sum_{k=1}^{m} k^2", "\\sum_{k=1}^{n} k^2")  # a free letter


def test_approximations_must_pin_an_exact_answer():
    outcome = get_reward("outcome")
    cases = [  # (prediction, reference, expected)
        ("\\approx 1.41", "\\sqrt{2}", 0.0), ("\\approx 1.414", "\\sqrt{2}", 1.0), ("\\approx 0.71", "\\frac{\\sqrt2}{2}", 0.0),
        ("x \\approx 3.1416", "3.14", 0.0), ("\\approx 3.1", "3.14", 0.0), ("\\frac{1}{3}", "\\approx 0.33", 1.0),
        ("\\approx 0.5", "\\frac{1}{2}", 1.0), ("\\approx 13", "12.5", 0.0), ("\\approx 0.508", "0.5", 0.0),
        ("\\approx 3.14159", "3.1416", 1.0), ("\\approx 3.142", "3.1416", 0.0), ("\\approx 0.50", "0.5", 1.0),
    ]  # fmt: skip
    got = outcome([f"\\boxed{{{p}}}" for p, _, _ in cases], answer=[r for _, r, _ in cases])
    assert got == [e for _, _, e in cases]
    # a value 1.5% off, at 2, 3 or 4 significant digits, never counts for an exact answer
    for value, ref in ((12.5, "\\frac{25}{2}"), (2**0.5, "\\sqrt{2}"), (137.0, "137"), (0.0625, "\\frac{1}{16}"), (0.5, "0.5"),
                       (2.25, "2.25")):
        preds = [f"\\boxed{{{coarse_approximation(value, 0.015, d)}}}" for d in (2, 3, 4)]
        assert outcome(preds, answer=[ref] * 3) == [0.0, 0.0, 0.0]


def test_subscript_braces_are_the_same_latex_in_every_reward():
    mask = "a_{n+1} = x_2 + y^{2} - z_{k}"
    for fill in (script_braces(mask, True), script_braces(mask, False)):
        assert fill != mask
        assert position_scores([mask], [fill]) == [1.0]
    ec = get_reward("error_correction")
    assert ec(["\\boxed{2; x_{1} + x_2 = 5}"], error_step=[2], original=["x_1 + x_{2} = 5"],
              corrupted=["x_1 + x_2 = 6"], error_type=["arithmetic"]) == [1.0]  # fmt: skip
    assert get_reward("outcome")(["\\boxed{x_{1} = 3}"], answer=["x_1 = 3"]) == [1.0]


def test_mixed_numbers_and_full_width_digits():
    assert judge("3\\left(\\frac{1}{2}\\right)", "\\frac{3}{2}") is Verdict.EQUAL  # a product
    assert judge("3(\\frac{1}{2})", "3\\frac{1}{2}") is Verdict.DIFFERENT  # 3/2 vs 7/2
    assert judge("2\\frac{1}{2}", "\\frac{5}{2}") is Verdict.EQUAL  # a mixed number
    assert judge("１２３", "123") is Verdict.EQUAL
    assert judge("ｘ＋１＝５", "x + 1 = 5", strip_lhs=False) is Verdict.EQUAL
    assert judge("x − 1", "x - 1") is Verdict.EQUAL  # Unicode minus


def test_sides_reprinted_in_another_standard_form_are_accepted():
    masks = ["x^2 - 5x + 6 = (x-2)(x-3)", "(a+b)^2 = a^2 + 2ab + b^2", "\\frac{x^2-1}{x+1} = y",
             "y = 2(x+1)^2 - 3", "\\frac{1}{29} = \\frac{1}{2a} - 1 - \\frac{\\sqrt{1-4a}}{2a}"]  # fmt: skip
    for how in ("expand", "factor"):
        pairs = [(m, r) for m in masks if (r := reprinted(m, how)) is not None]
        assert len(pairs) >= 3
        assert position_scores([m for m, _ in pairs], [r for _, r in pairs]) == [1.0] * len(pairs), pairs


@pytest.mark.parametrize("name", sorted(LONG_ROWS))
def test_every_reward_call_on_a_64_kib_completion_takes_under_a_second(name):
    fn = get_reward(name)
    for kind in LONG_KINDS:
        text = long_completion(kind)
        assert len(text) >= 60_000 or kind in ("fills",)
        best = min(_timed(fn, text, LONG_ROWS[name]) for _ in range(2))  # min of two: a loaded machine
        assert best < 1.0, (name, kind, best)


def _timed(fn, text: str, cols: dict) -> float:
    start = time.perf_counter()
    out = fn([text], **cols)
    assert len(out) == 1
    return time.perf_counter() - start


def test_a_batch_of_long_fills_is_scored_in_bounded_time():
    """Sixteen completions of sixteen distinct 4 KB `\\text{...}` fills: minutes before the
    normalization regexes were made linear (60 s for four such completions), ~2 s now."""
    fn = get_reward("masked_then_fill")
    masks = [f"\\sum_{{k=1}}^{{{j}}} k" for j in range(16)]  # outside the grammar: the similarity path
    comps = ["\\boxed{" + "; ".join(f"x = {i}{j} \\text{{" + "a" * 4000 + "}" for j in range(16)) + "}" for i in range(16)]
    start = time.perf_counter()
    scores = fn(comps, masks=[masks] * 16, scored=[list(range(16))] * 16)
    assert time.perf_counter() - start < 16.0 and scores == [0.0] * 16


def test_near_misses_with_long_numbers_and_decorated_prose_score_zero():
    # numbers of several digits are numbers to the near-miss rule (`14` for `13`), and a label
    # after `\hspace`/`\hfill` is markup even after a word
    score = get_reward("masked_then_fill")
    masks = ["\\overline{z} \\cdot \\overline{w} = \\overline{zw} = 13-i", "Vieta's formulas", "j-i \\equiv 0 \\pmod{6}"]
    wrong = ["\\overline{z} \\cdot \\overline{w} = \\overline{zw} = 14−i~(2)", "Vieta'y formulas\\hspace{1em}(2)",
             "j−i \\equiv 1 \\pmod{6}\\hfill[4]"]  # fmt: skip
    right = ["\\overline{z} \\cdot \\overline{w} = \\overline{zw} = 13−i~(2)", "Vieta's formulas\\hspace{1em}(2)",
             "j−i \\equiv 0 \\pmod{6}\\hfill[4]"]  # fmt: skip
    assert near_miss("x = 1024", "x = 1025") and near_miss("\\overline{w} = 14-i", "\\overline{w} = 13-i")
    assert score(["\\boxed{" + "; ".join(wrong) + "}"], masks=[masks]) == [0.0]
    assert score(["\\boxed{" + "; ".join(right) + "}"], masks=[masks]) == [1.0]


def test_labels_in_brackets_and_after_spacing_commands_are_markup():
    assert strip_markup("42 [4]") == "42" and strip_markup("(x - 4)^4 \\ge 1\\hfill[4]") == "(x - 4)^4 \\ge 1"
    assert strip_markup("f (2)") == "f (2)" and strip_markup("x [4]") == "x [4]"  # after a letter: content
    assert strip_markup("I + J = [1]") == "I + J = [1]"  # after a relation: the right side


def test_the_same_text_but_for_a_number_is_different_whatever_the_markup():
    # a Unicode minus or a label once made "different" into "undecided" (and so similarity)
    ref = "\\overline{z} \\cdot \\overline{w} = \\overline{zw} = 13-i"
    for pred in ("\\overline{z} \\cdot \\overline{w} = \\overline{zw} = 14−i", ref.replace("13", "14") + "~(2)"):
        assert judge(pred, ref, strip_lhs=False) is Verdict.DIFFERENT


def test_labels_after_prose_and_closing_bars_and_ambiguous_labels_never_pay_wrong_work():
    assert strip_markup("Heron's formula [4]") == "Heron's formula"
    assert strip_markup("|a n-m b|\\;\\square") == "|a n-m b|"  # an even count of bars: closed
    assert strip_markup("S_k (2)") == "S_k"  # a subscript letter is no function
    assert strip_markup("f (2)") == "f (2)" and strip_markup("\\log (2)") == "\\log (2)"
    # where the rule must keep `(1)` as content, the near-miss rule still sees the wrong number
    assert near_miss("g x g^{-2} \\in H \\cap K (1)", "g x g^{-1} \\in H \\cap K")
    assert not near_miss("g x g^{-1} \\in H \\cap K (1)", "g x g^{-1} \\in H \\cap K")


def test_markup_never_decides_whether_a_text_is_plain_or_latex():
    # `3^125` is plain text (3 to the 125th); a label after it must not make it TeX's `3^{1}25`
    score = get_reward("error_correction")
    row = {"error_step": [2], "original": ["b^a = 3^5 = 243"], "corrupted": ["b^a = 3^125 = 4366"]}
    assert score(["\\boxed{2; b^a = 3^125 = 4366\\hfill(3a)}"], **row) == [0.0]  # the copy, decorated
    assert score(["\\boxed{2; b^a = 3^5 = 243\\hfill(3a)}"], **row) == [1.0]


# --- round 3: the kinds an independent red team found (tests/data/REDTEAM.md) ------------------------


@pytest.mark.parametrize(
    "fill, mask",
    [
        ("ab^{-1} \\in N + 1", "ab^{-1} \\in N"),  # a term added
        ("\\|u\\|^2+\\langle u, v\\rangle+\\langle v, u\\rangle", "\\|u\\|^2+\\langle u, v\\rangle+\\langle v, u\\rangle+\\|v\\|^2"),
        ("\\sum_{i=1}^{m} k_{i+1}", "\\sum_{i=1}^{m} k_{i}"),  # an index shifted
        ("\\pm \\sum_{i=1}^{m} k_{i}", "\\sum_{i=1}^{m} k_{i}"),
        ("\\neg\\left(ab^{-1} \\in N\\right)", "ab^{-1} \\in N"),
        ("{\\mathrm{a}}{\\mathrm{b}}^{1} \\in {\\mathrm{N}}", "ab^{-1} \\in N"),  # a sign dropped, letters in a font
        ("а b^{1} ∈ N", "ab^{-1} \\in N"),  # Cyrillic look-alikes and a Unicode relation
        ("N \\in ab^{-1}", "ab^{-1} \\in N"),  # the sides of a membership swapped
        ("N \\ni ab^{-2}", "ab^{-1} \\in N"),  # read from the other end, with a number changed
        ("\\sum_{t=1}^{n} k^2", "\\sum_{k=1}^{n} k^2"),  # a bound letter renamed in one place only
    ],
)
def test_small_edits_of_a_formula_outside_the_grammar_earn_nothing(fill, mask):
    assert not in_grammar(mask) and near_miss(fill, mask)
    assert position_scores([mask], [fill]) == [0.0]


@pytest.mark.parametrize(
    "fill, mask",
    [
        ("2 \\cdot x \\in S", "2x \\in S"),  # an explicit product
        ("p \\not\\mid n", "p \\nmid n"),
        ("N \\ni ab^{-1}", "ab^{-1} \\in N"),  # the same membership read from the other end
        ("\\sum_{j=1}^{n} j^2", "\\sum_{k=1}^{n} k^2"),  # the bound letter renamed everywhere
        ("g x g^{-1} \\in H \\cap K (1)", "g x g^{-1} \\in H \\cap K"),  # a label
        ("(a+b) \\in S", "a+b \\in S"),  # brackets only: maybe the same formula
    ],
)
def test_rewrites_that_may_be_the_same_formula_keep_similarity(fill, mask):
    assert not near_miss(fill, mask)
    assert position_scores([mask], [fill])[0] > 0.5


def test_a_formula_is_a_statement_about_its_left_side_and_a_negated_relation_is_another_relation():
    # in a formula `x \in S` is about x; in a final answer it is the set S
    assert judge("t \\in K", "x \\in K", strip_lhs=False) is not Verdict.EQUAL
    assert judge("F_{0}, F_{2k+1} \\in S", "F_{0}, F_{2k} \\in S", strip_lhs=False) is not Verdict.EQUAL
    assert judge("(1, 2)", "x \\in (1, 2)") is Verdict.EQUAL
    assert judge("\\frac{3}{7} \\not \\: \\approx \\: 0.4286", "\\frac{3}{7} \\approx 0.4286", strip_lhs=False) is Verdict.DIFFERENT
    assert judge("x \\not= 2", "x \\neq 2", strip_lhs=False) is Verdict.EQUAL
    # a `\not` MathRuler's string cleanup might drop: never left to it
    assert judge("y \\not \\: \\equiv \\: -z \\pmod{503}", "y \\equiv -z \\pmod{503}", strip_lhs=False) is not Verdict.EQUAL
    # a chain with a relation inside a member does not read the same backwards
    assert judge("1 \\times 2 = uv \\mid (n-1)! = n", "n = uv \\mid (n-1)! = 1 \\times 2", strip_lhs=False) is not Verdict.EQUAL
    assert judge("c = b = a", "a = b = c", strip_lhs=False) is Verdict.EQUAL


# --- red team 3 (tests/data/redteam3): what the reward learned from attacks it did not write -----------

FILL = get_reward("masked_then_fill")


def _fill(fills: list[str], masks: list[str]) -> float:
    return FILL(["</think>\n\\boxed{" + "; ".join(fills) + "}"], masks=[masks])[0]


def test_invisible_characters_and_white_ink_hide_nothing():
    masks = ["d(f(x), f(z)) \\leq w(d(x, z))", "\\lim_{s \\to 0^{+}} w(s) = 0"]
    wrong = ["d(f(x), f(z)) \\geq w(d(x, z))", "\\lim_{s \\to 0^{+}} w(s) \\neq 0"]
    zero_width = ["".join(c + "\u200b\ufeff" for c in f) for f in wrong]
    assert _fill(zero_width, masks) == 0.0
    sparse = [f.replace("\\", "\u200b\\") for f in wrong]  # a few, before each command: they had earned 0.47
    assert _fill(sparse, masks) == 0.0
    assert _fill(["".join(c + "\u200c" for c in f) for f in masks], masks) == 1.0  # right work stays right
    white = ["{\\color{white} " + m + "} " + w for m, w in zip(masks, wrong)]
    assert _fill(white, masks) == 0.0 and _fill(["\\textcolor{white}{" + m + "} " + w for m, w in zip(masks, wrong)], masks) == 0.0
    assert strip_markup("{\\color{white} x = 1} x = 2") == "x = 2" and strip_markup("\\color{red} x = 1") == "x = 1"


def test_right_fills_written_in_unicode_aligned_or_with_entities_are_right():
    masks = ["35\\cdot40\\equiv1\\pmod{1399}", "U \\cap V=\\emptyset", "a_{4} =4-1^{2}=3", "x \\notin \\mathcal{J}"]
    assert _fill(["35·40≡1\\pmod{1399}", "U ∩V=∅", "\\begin{aligned} a_{4} &=4-1^{2} \\\\ &=3 \\end{aligned}", "x ∉\\mathcal{J}"],
                 masks) == 1.0
    assert judge("a &le; b", "a \\leq b") is Verdict.EQUAL
    # an entity decodes before the notation rules read it: `&times;` is `\\times`, `&pi;` is `\\pi`
    assert judge("2&times;3", "6") is judge("&pi;", "\\pi") is judge("x &isin; A", "x \\in A") is Verdict.EQUAL
    assert _fill(["35·40≡2\\pmod{1399}", "U ∪V=∅", "\\begin{aligned} a_{4} &=4-1^{2} \\\\ &=4 \\end{aligned}", "x ∈\\mathcal{J}"],
                 masks) == 0.0


def test_symmetric_relations_read_backwards_are_the_same_statement():
    masks = ["\\triangle B M C \\cong \\triangle B M N", "\\overline{P I} \\perp \\overline{P L}"]
    assert _fill(["\\triangle B M N \\cong \\triangle B M C", "\\overline{P L} \\perp \\overline{P I}"], masks) == 1.0
    assert _fill(["\\triangle B M N \\cong \\triangle B M D", "\\overline{P L} \\perp \\overline{P J}"], masks) == 0.0
    masks = ["p^{-1}(\\{y\\}) \\subset U", "U \\subset p^{-1}(p(U))"]  # mirrored relations: the same statement
    assert _fill(["U \\supset p^{-1}(\\{y\\})", "p^{-1}(p(U)) \\supset U"], masks) == 1.0
    assert _fill(["U \\supset p^{-1}(\\{z\\})", "p^{-1}(p(U)) \\subset U"], masks) == 0.0


def test_one_side_or_a_formula_nearer_another_mask_restores_nothing():
    masks = ["\\triangle B M C \\cong \\triangle B M N", "\\triangle A N M \\sim \\triangle A C B",
             "\\mathrm{m} \\angle A P Q=\\mathrm{m} \\angle B A P+\\mathrm{m} \\angle A B P=2 \\theta",
             "\\mathrm{m} \\angle A=5 \\theta=90^{\\circ}"]
    assert near_miss("\\triangle B M N", masks[0]) and near_miss("\\triangle A N M", masks[1])
    swapped = [masks[1], masks[0], "\\mathrm{m} \\angle A=5 \\theta=91^{\\circ}", masks[2]]
    assert _fill(swapped, masks) == 0.0
    assert _fill(masks, masks) == 1.0


def test_scientific_notation_past_the_decimal_limit_is_a_power_of_ten_not_a_product_with_e():
    assert judge("1e999999998", "1e999999999") is Verdict.DIFFERENT  # was read as 1·e·999999998, "close enough"
    assert judge("2 \\cdot 10^{500}", "2e500") is Verdict.EQUAL
