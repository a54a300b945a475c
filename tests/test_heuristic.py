"""The heuristic annotator: formulas from LaTeX math spans, steps from the text's layout."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from mrtasks.curate.base import Drop
from mrtasks.curate.heuristic import (
    HeuristicAnnotator,
    HeuristicConfig,
    extract_formulas,
    find_candidates,
    junk_reason,
    split_steps,
)
from mrtasks.curate.sources import expand_specs, iter_source, parse_source
from mrtasks.mathcheck import theorem_names_equal
from mrtasks.trajectory import Trajectory

ALL = {"max_mask_share": 1.0}  # offer every candidate (the cap is tested on its own)


def texts(solution: str, problem: str = "", **kw) -> list[str]:
    return [f.text for f in extract_formulas(solution, HeuristicConfig(**{**ALL, **kw}), problem)]


def candidates(solution: str) -> list[tuple[str, str, str | None]]:
    return [(solution[c.start : c.end], c.kind, c.junk) for c in find_candidates(solution)]


def covers_but_figures(steps: list[str], solution: str) -> bool:
    """Steps are verbatim, in order, and leave out nothing but whitespace and figure references."""
    pos, rest = 0, []
    for step in steps:
        j = solution.find(step, pos)
        if j < 0:
            return False
        rest.append(solution[pos:j])
        pos = j + len(step)
    rest.append(solution[pos:])
    left = re.sub(r"<img_\d+>|(?:Figure|Fig\.?)\s*\d+|\[asy\].*?\[/asy\]", "", "".join(rest), flags=re.S | re.I)
    return not left.strip()


def squash(s: str) -> str:
    return re.sub(r"\s+", "", s)


def test_every_delimiter_gives_formulas_inside_the_delimiters():
    sol = r"""Inline $a+b=c$ and \(x^2 = 4\). Display $$y = mx + k$$ and \[\int_0^1 f = 2\].
\begin{align*}
u &= v + 1 \\
w &= 2u
\end{align*}
\begin{equation}E = mc^2\end{equation}"""
    got = set(texts(sol))
    assert got == {"a+b=c", "x^2 = 4", "y = mx + k", r"\int_0^1 f = 2", "u &= v + 1", "w &= 2u", "E = mc^2"}
    for f in extract_formulas(sol):
        assert sol[f.start : f.end] == f.text


def test_figures_prices_escapes_and_lone_symbols_are_not_formulas():
    sol = r"""[asy] draw((0,0)--(1,1)); label("$A=1$", (0,0)); [/asy]
\begin{tikzpicture} \node at (0,0) {$B=2$}; \end{tikzpicture}
It costs $12 an hour and $15 a day, or \$3 extra. Let $x$ be real and $f_1$ given, so $x+1=3$."""
    assert texts(sol, plain_equations=False) == ["x+1=3"]


def test_repeated_formula_is_not_maskable_since_its_copy_would_give_it_away():
    sol = r"We get $x=2$. Check: $x=2$ gives $y = 3x - 1 = 5$."
    assert texts(sol) == ["y = 3x - 1 = 5"]


def test_relations_rank_above_bare_expressions():
    sol = r"Consider $\frac{a}{b} + c_{n+1}$ and later $p = q + r$."
    assert texts(sol) == ["p = q + r", r"\frac{a}{b} + c_{n+1}"]


def test_gsm8k_style_plain_arithmetic_counts_as_formulas():
    sol = "Natalia sold 48/2 = 24 clips in May.\nShe sold 48+24 = 72 clips in all, about $72 worth."
    assert texts(sol) == ["48+24 = 72", "48/2 = 24"]
    assert texts(sol, plain_equations=False) == []
    units = "First: 12 burrs * 6 ticks/burr = 72 ticks\nWe know that s + c = 80, so 4c = 80 and c = 20 guests."
    assert set(texts(units)) == {"12 burrs * 6 ticks/burr = 72 ticks", "s + c = 80", "4c = 80", "c = 20"}


# --- the candidate model: one small case per rejection rule -------------------------------------


def test_each_junk_rule_rejects_its_case_and_keeps_real_formulas():
    assert junk_reason("ab") == junk_reason("{eV}") == junk_reason("&=1") == "too_short"
    assert junk_reason(r"(\Rightarrow)") == junk_reason(r"\infty") == "too_short"  # a lone symbol
    for text in ("3.5", "1,000", r"12\text{ cm}", r"90^\circ", r"50 \%"):
        assert junk_reason(text) == "bare_number_or_unit", text
    assert junk_reason(r"\mathrm{Cu}") == junk_reason(r"\text{hence}") == junk_reason(r"\phantom{2}") == "text_only"
    assert junk_reason("&=-9") == junk_reason(r"\geq 2^{N-3}+1") == "leading_relation"
    assert junk_reason(r"A C=\sqrt{35^{2}+12^{2}}=") == junk_reason("t_{1}-t_{0}=") == junk_reason(r"a \cdot") == "trailing_operator"
    assert junk_reason("a+b}") == junk_reason(r"\left( x") == "unbalanced_braces"
    assert junk_reason(r"\frac{\boxed{3}}{2}") == junk_reason(r"x^{\tag{1}}") == "nested_box_or_tag"
    assert junk_reason("a=1; b=2") == "top_level_semicolon"
    for good in ("x=2", r"\sqrt{2}", "a/b", r"f^{-1}", r"p_{f(n)} \rightarrow L", r"\left\|x\right\| \leq 1"):
        assert junk_reason(good) is None, good


def test_junk_is_never_offered_and_does_not_count_towards_min_formulas():
    sol = r"The mass is $5$ kg at $20^\circ$, in $\mathrm{eV}$: so $E = mc^2$ and $t_1 - t_0 =$ 3 s."
    assert texts(sol) == ["E = mc^2"]
    kinds = {t: j for t, _, j in candidates(sol)}
    assert kinds["5"] == "too_short" and kinds[r"t_1 - t_0 ="] == "trailing_operator"


def test_a_relation_split_across_adjacent_spans_is_merged():
    sol = r"Then $A C=2 x+c=$ $x\left(2+\frac{d}{d+7}\right)$ holds."
    assert texts(sol) == [r"A C=2 x+c=$ $x\left(2+\frac{d}{d+7}\right)"]


def test_align_rows_and_aligned_blocks_are_separate_candidates_right_hand_sides_of_continuations():
    sol = r"""We compute
\[
\begin{aligned}
S & =\sum_{i=1}^{n} i \\
& =\frac{n(n+1)}{2} . \tag{1}
\end{aligned}
\]
and $\begin{align*}&x^2 + 1\\ &\geq 2x\end{align*}$."""
    assert [t for t, _, _ in candidates(sol)] == [r"S & =\sum_{i=1}^{n} i", r"\frac{n(n+1)}{2}", "x^2 + 1", "2x"]


def test_a_display_whose_block_is_part_of_a_formula_stays_whole():
    sol = r"$$f(x)=\begin{cases}1, & x>0 \\ 0, & x \leq 0\end{cases}$$"
    assert [t for t, _, _ in candidates(sol)] == [r"f(x)=\begin{cases}1, & x>0 \\ 0, & x \leq 0\end{cases}"]


# --- ranking ------------------------------------------------------------------------------------


def test_the_final_answer_is_a_candidate_ranked_first_even_as_a_bare_number():
    sol = r"So $r = 2$ and the radius is $\boxed{2}$. Also $A = \pi r^2 = 4\pi$ and $C = 2\pi r$."
    got = texts(sol)
    assert got[0] == "2" and set(got) == {"2", "r = 2", r"A = \pi r^2 = 4\pi", r"C = 2\pi r"}
    inline = r"We get $$10\cdot6\cdot7=\boxed{420}.$$"
    assert candidates(inline) == [("420", "answer", None)]
    placeholder = r"Fill the box: $12x - 7 + \boxed{\phantom{2}}$, so $11x - 3 = 11x - 7 + 4$ and $\boxed{4}$."
    assert [(t, k) for t, k, j in candidates(placeholder) if j is None] == [("11x - 3 = 11x - 7 + 4", "math"), ("4", "answer")]


def test_masking_the_top_formulas_never_leaves_the_boxed_answer_visible():
    from mrtasks.curate.quality import visible_boxed_answer
    from mrtasks.tasks.masked_then_fill import mask_solution

    sol = "\n\n".join(f"Step {k}: $x_{k} = {k} + y_{k}$." for k in range(12)) + r" Hence $x = \boxed{7}$."
    top = extract_formulas(sol)[:7]
    assert "7" in [f.text for f in top]
    assert not visible_boxed_answer(mask_solution(sol, top))


def test_givens_copied_from_the_problem_are_not_offered_and_derived_results_are():
    problem = r"Let $a = 2$ and $b = 3$. Find $a^2 + b^2$."
    sol = r"Since $a = 2$ and $b = 3$, we get $a^2 = 4$ and $b^2 = 9$, so $a^2 + b^2 = 13$."
    assert set(texts(sol, problem)) == {"a^2 = 4", "b^2 = 9", "a^2 + b^2 = 13"}
    assert set(texts(sol)) == {"a = 2", "b = 3", "a^2 = 4", "b^2 = 9", "a^2 + b^2 = 13"}


def test_later_derived_relations_rank_above_earlier_ones_of_the_same_shape():
    sol = r"First $x_1 = y_1 + 1$, and at the end $x_2 = y_2 + 1$."
    assert texts(sol) == ["x_2 = y_2 + 1", "x_1 = y_1 + 1"]


def test_a_cap_on_the_share_offered_keeps_context_visible():
    sol = " ".join(f"Then $x_{{{k}}} = x_{{{k - 1}}} + {k}$." for k in range(1, 13))
    assert len(texts(sol)) == 12
    offered = extract_formulas(sol)  # the default cap: at most 75% of the candidates
    assert len(offered) == 9
    assert len(extract_formulas(sol, HeuristicConfig(max_mask_share=0.5))) == 6


def test_theorem_names_are_candidates_and_compare_by_name_with_aliases():
    sol = r"By the AM-GM inequality, $a + b \geq 2\sqrt{ab}$; by Cauchy-Schwarz the bound $S \leq 3$ follows."
    got = texts(sol)
    assert "AM-GM inequality" in got and "Cauchy-Schwarz" in got
    assert theorem_names_equal("AM-GM", "arithmetic-geometric mean inequality") is True
    assert theorem_names_equal("Vieta's formulas", "Vieta") is True
    assert theorem_names_equal("Fermat's little theorem", "Fermat’s Little Theorem") is True
    assert theorem_names_equal("AM-GM", "Cauchy-Schwarz") is False
    assert theorem_names_equal("AM-GM", "x^2 + y^2") is None
    assert theorem_names_equal("by the pigeonhole principle", "Dirichlet's box principle") is True
    assert theorem_names_equal("the pigeonhole", "pigeonhole principle") is True


def test_theorem_abbreviations_match_only_in_capitals():
    assert [t for t, k, _ in candidates("By SAS the triangles agree, and sas is not a name.") if k == "theorem"] == ["SAS"]


def test_malformed_latex_never_raises():
    for sol in ["$unclosed", r"\begin{align} x = 1", r"\[ no end", "$$ a", "[asy] no end", r"\\", "$ $", "$", "\\"]:
        for f in extract_formulas(sol):
            assert sol[f.start : f.end] == f.text
        assert squash("".join(split_steps(sol))) == squash(sol)


def test_numbered_steps_with_intro_and_conclusion():
    sol = """To solve it we proceed in steps:

1. **Count outcomes:**
   There are \\[6 \\times 6 = 36\\] outcomes.
   1. a nested remark that is not a step
2. **Count favourable ones:**
   There are 6 of them.

Thus the probability is \\(\\boxed{\\frac{1}{6}}\\)."""
    steps = split_steps(sol)
    assert len(steps) == 4
    assert steps[0].startswith("To solve") and steps[1].startswith("1. **Count outcomes")
    assert "nested remark" in steps[1] and steps[3].startswith("Thus")


def test_paragraphs_keep_a_display_with_the_sentence_it_continues():
    sol = "First we note that $a>0$ holds here.\n\nThen\n\n$$\n\na^2 > 0\n\n$$\n\nso that the claim follows."
    sol += "\n\nFinally we conclude the proof."
    assert split_steps(sol) == [
        "First we note that $a>0$ holds here.",
        "Then\n\n$$\n\na^2 > 0\n\n$$\n\nso that the claim follows.",
        "Finally we conclude the proof.",
    ]


def test_lines_then_sentences_when_there_are_no_paragraphs():
    gsm = "He writes 3*2=6 pages a week\nSo he writes 6*2=12 pages every week\nThat means he writes 624 pages a year"
    assert len(split_steps(gsm)) == 3
    one_paragraph = "We have $x = 1.5$ here. Then $y = 2x$ follows. Hence $y = 3$, e.g. by substitution. Done, as claimed."
    assert split_steps(one_paragraph) == [
        "We have $x = 1.5$ here.", "Then $y = 2x$ follows.", "Hence $y = 3$, e.g. by substitution.", "Done, as claimed."
    ]


def test_too_many_steps_are_merged_down_to_max_steps():
    sol = "\n\n".join(f"This is sentence number {k} of the proof." for k in range(30))
    steps = split_steps(sol, HeuristicConfig(max_steps=20))
    assert len(steps) == 20
    assert squash("".join(steps)) == squash(sol)


def test_annotator_on_real_corpora_gives_verbatim_formulas_and_covering_steps(shared_data):
    specs = expand_specs([parse_source(f"corpora:{shared_data / 'corpora'}:limit=40")])
    trajs = [t for spec in specs for t in iter_source(spec) if isinstance(t, Trajectory)]
    assert len(trajs) > 200
    out = HeuristicAnnotator().annotate(trajs)
    for t in out:
        assert isinstance(t, Trajectory)
        spans = sorted((f.start, f.end) for f in t.formulas)
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), "formulas overlap"
        assert covers_but_figures(t.steps, t.solution), t.id
        assert all("[asy]" not in f.text and "<<" not in f.text for f in t.formulas)
    by_source = {}
    for t in out:
        by_source.setdefault(t.source, []).append(len(t.formulas))
    # LaTeX-heavy sources clear the paper's 7-formula bar far more often than GSM8K's plain arithmetic.
    share = {s: sum(n >= 7 for n in v) / len(v) for s, v in by_source.items()}
    assert share["olympiadbench_oe_en"] > 0.5 > share["gsm8k_train_first2000"]


def test_empty_solution_is_a_counted_drop():
    t = Trajectory("x", "s", "proof", "p", "   ")
    [d] = HeuristicAnnotator().annotate([t])
    assert isinstance(d, Drop) and d.reason == "empty_solution"


TOKENS = list("ab =+1$\\[]()\n{}.Tx") + ["\\begin{align}", "\\end{align}", "\\\\", "[asy]"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(TOKENS), max_size=80).map("".join))
def test_any_text_gives_verbatim_formulas_and_covering_steps(sol):
    for f in extract_formulas(sol):
        assert sol[f.start : f.end] == f.text
    assert squash("".join(split_steps(sol))) == squash(sol)


# --- steps ----------------------------------------------------------------------------------------


def test_figure_only_pieces_are_dropped_from_the_steps():
    sol = "We draw the circle first.\n\n<img_3695>\n\nFigure 1\n\nThen the chord $AB = 2r$ is a diameter."
    assert split_steps(sol) == ["We draw the circle first.", "Then the chord $AB = 2r$ is a diameter."]


def test_a_one_sentence_chain_of_therefore_clauses_is_split_into_moves():
    sol = (
        "We have $x = 2 + 3 = 5$ from the sum of both parts, therefore $y = 2x = 10$ follows from doubling it, "
        "hence $z = y + 1 = 11$ is the final count."
    )
    assert split_steps(sol) == [
        "We have $x = 2 + 3 = 5$ from the sum of both parts,",
        "therefore $y = 2x = 10$ follows from doubling it,",
        "hence $z = y + 1 = 11$ is the final count.",
    ]
    no_math = "Nellie, Jacob, and Lana all ate until they cried, so they ate 12 + 6 + 3 = 21 candies in all."
    assert split_steps(no_math) == [no_math]


def test_parallel_cases_are_merged_so_the_order_is_unique():
    sol = "When $x<0$, we know $f(x)=-x$.\n\nWhen $x \\geq 0$, we know $f(x)=x$.\n\nTherefore $f(x)=|x|$ for every real $x$."
    steps = split_steps(sol)
    assert len(steps) == 2 and steps[0].count("When") == 2
    dependent = "There are 32/2 = 16 elephants.\nThere are 16 - 3 = 13 zebras.\nSo the answer is 13 in total."
    assert len(split_steps(dependent)) == 3  # the second uses the first's result: not interchangeable


def test_steps_never_cut_inside_math_and_a_short_solution_keeps_few_steps():
    sol = "We get $$a = 1. B = 2$$ and so on.\n\nHence the result $a + B = 3$ holds."
    assert split_steps(sol) == ["We get $$a = 1. B = 2$$ and so on.", "Hence the result $a + B = 3$ holds."]
    short = "We have $x=1$ from the first equation. So $y=2$ by the second one."
    assert len(split_steps(short, min_steps=3)) == 2  # never cut mid-sentence just to reach min_steps


def test_a_numbered_plan_stays_with_its_intro_but_numbered_steps_split():
    plan = "To find the mean we:\n\n1. Add the numbers.\n2. Divide the sum.\n\nThe sum is $6 + 8 = 14$, so the mean is $7$."
    assert split_steps(plan)[0].endswith("2. Divide the sum.")


def test_prose_before_the_first_computation_of_a_paragraph_is_not_a_move_of_its_own():
    sol = (
        "We use similar triangles here. The sun's rays are parallel, so the triangles agree. "
        "Hence $\\frac{5}{6} = \\frac{15}{x}$ gives the height.\n\nSo $x = 18$ feet."
    )
    steps = split_steps(sol)
    assert len(steps) == 2 and steps[0].startswith("We use") and steps[0].endswith("gives the height.")
