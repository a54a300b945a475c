"""The heuristic annotator: formulas from LaTeX math spans, steps from the text's layout."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from mrtasks.curate.base import Drop
from mrtasks.curate.heuristic import (
    BOOKKEEPING,
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
    """Steps are verbatim, in order, and leave out nothing but whitespace, figure references and credit lines."""
    pos, rest = 0, []
    for step in steps:
        j = solution.find(step, pos)
        if j < 0:
            return False
        rest.append(solution[pos:j])
        pos = j + len(step)
    rest.append(solution[pos:])
    left = re.sub(r"<img_\d+>|(?:Figure|Fig\.?)\s*\d+|\[asy\].*?\[/asy\]|(?m:^~[A-Za-z][^\n]*$)", "", "".join(rest), flags=re.S | re.I)
    return not left.strip()


def squash(s: str) -> str:
    return re.sub(r"\s+", "", s)


def test_every_delimiter_gives_formulas_inside_the_delimiters():
    sol = r"""Inline $a+b=c$ and \(x^2 = 4\). Display $$y = mx + k$$ and \[\int_0^1 f = 2\].
\begin{align*}
u &= \frac{v + 1}{2} + \sqrt{v} \\
w &= 2u
\end{align*}
\begin{equation}E = mc^2\end{equation}"""
    got = set(texts(sol))
    # an aligned row gives its result (the `&` is never part of a mask); `2u` alone is too short
    assert got == {"a+b=c", "x^2 = 4", "y = mx + k", r"\int_0^1 f = 2", r"\frac{v + 1}{2} + \sqrt{v}", "E = mc^2"}
    for f in extract_formulas(sol):
        assert sol[f.start : f.end] == f.text


def test_figures_prices_escapes_and_lone_symbols_are_not_formulas():
    sol = r"""[asy] draw((0,0)--(1,1)); label("$A=1$", (0,0)); [/asy]
\begin{tikzpicture} \node at (0,0) {$B=2$}; \end{tikzpicture}
It costs $12 an hour and $15 a day, or \$3 extra. Let $x$ be real and $f_1$ given, so $x+1=3$."""
    assert texts(sol, plain_equations=False) == ["x+1=3"]


def test_a_restated_formula_is_offered_with_every_copy_and_ranks_as_established():
    sol = r"We get $x_1 = a + 2b$. Check: $x_1 = a + 2b$ gives $y = 3a - 1$; also $z = 3a + 1$."
    got = extract_formulas(sol, HeuristicConfig(max_mask_share=1.0))
    # ranked once (first occurrence), above the formulas written once; its copy follows the list
    # ("gives" marks `y` as derived: it ranks above the later `z`)
    assert [f.text for f in got] == ["x_1 = a + 2b", "y = 3a - 1", "z = 3a + 1", "x_1 = a + 2b"]
    assert got[0].start < got[-1].start
    blocked = r"We get $x_1 = a + 2b$. If $x_1 = a + 2b$, then $y = 3a - 1$."  # one copy is a case hypothesis
    assert texts(blocked) == ["y = 3a - 1"]  # masking the other copy would leave it in plain sight


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


def test_a_relation_split_across_adjacent_spans_is_merged_and_kept_as_context():
    # one formula, but its mask would show the source's `=$ $` break: context, not a mask
    sol = r"Then $A C=2 x+c=$ $x\left(2+\frac{d}{d+7}\right)$ holds, so $x = 2$."
    assert candidates(sol)[0] == (r"A C=2 x+c=$ $x\left(2+\frac{d}{d+7}\right)", "math", "split_math")
    assert texts(sol) == ["x = 2"]


def test_align_rows_and_aligned_blocks_are_separate_candidates_right_hand_sides_of_rows():
    sol = r"""We compute
\[
\begin{aligned}
S & =\sum_{i=1}^{n} i \\
& =\frac{n(n+1)}{2} . \tag{1}
\end{aligned}
\]
and $\begin{align*}&x^2 + 1\\ &\geq 2x\end{align*}$."""
    assert [t for t, _, _ in candidates(sol)] == [r"\sum_{i=1}^{n} i", r"\frac{n(n+1)}{2}", "x^2 + 1", "2x"]


def test_a_display_whose_block_is_part_of_a_formula_stays_whole():
    sol = r"$$f(x)=\begin{cases}1, & x>0 \\ 0, & x \leq 0\end{cases}$$"
    assert [t for t, _, _ in candidates(sol)] == [r"f(x)=\begin{cases}1, & x>0 \\ 0, & x \leq 0\end{cases}"]


# --- ranking ------------------------------------------------------------------------------------


def test_the_final_answer_is_ranked_first_inside_a_relation_and_left_out_alone_in_its_box():
    derived = r"So $r = 2$ and the radius is $r = \boxed{2}$. Also $A = \pi r^2 = 4\pi$ and $C = 2\pi r$."
    got = texts(derived)
    assert got[0] == "2" and set(got) == {"2", "r = 2", r"A = \pi r^2 = 4\pi", r"C = 2\pi r"}
    # a value alone in its box restates what was derived: no key formula (Masked-Then-Fill masks it anyway)
    for alone in (r"$\boxed{2}$", r"\(\boxed{2}\)", "\n\\[\n\\boxed{2}.\n\\]\n"):
        assert "2" not in texts(derived.replace(r"$r = \boxed{2}$", alone)), alone
    assert texts(derived.replace(r"$r = \boxed{2}$", r"$\boxed{r = 2}$"))[0] == "r = 2"  # a boxed relation stays
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
    twice = sol.replace(r"Hence $x = \boxed{7}$.", r"So $x = \boxed{7}$, and the answer is $\boxed{7}$.")
    from mrtasks.tasks.masked_then_fill import formula_groups

    chosen = [f for g in formula_groups(extract_formulas(twice))[:7] for f in g]
    assert [f.text for f in chosen].count("7") == 2 and not visible_boxed_answer(mask_solution(twice, chosen))


def test_the_final_answer_written_unboxed_first_is_still_offered_with_its_box():
    """The answer's first copy is a short unboxed expression (`the mixed number $1 \\frac{1}{10}$`,
    minor on its own): the group is still the answer's, ranked first, every copy masked together."""
    from mrtasks.curate.quality import visible_boxed_answer
    from mrtasks.tasks.masked_then_fill import formula_groups, mask_solution

    sol = "\n\n".join(f"Step {k}: $x_{k} = {k} + y_{k}$." for k in range(10)) + (
        r" The fraction $\frac{11}{10}$ is the mixed number $1 \frac{1}{10}$."
        r" Therefore the value is $\boxed{1 \frac{1}{10}}$."
    )
    formulas = extract_formulas(sol)
    assert [f.text for f in formulas[:1]] == [r"1 \frac{1}{10}"] and [f.text for f in formulas].count(r"1 \frac{1}{10}") == 2
    chosen = [f for g in formula_groups(formulas)[:7] for f in g]
    masked = mask_solution(sol, chosen)
    assert not visible_boxed_answer(masked, sol) and r"1 \frac{1}{10}" not in masked


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


def test_the_induction_hypothesis_is_a_reference_and_induction_the_named_method():
    got = candidates(r"We prove $a_n < 2^n$ by induction on $n$. By the inductive hypothesis, $a_{n} < 2^{n}$, "
                     r"so by the induction hypothesis again $a_{n+1} \leq 2 a_n < 2^{n+1}$.")
    names = {text: junk for text, kind, junk in got if kind == "theorem"}
    assert names == {"induction": None, "inductive hypothesis": "hypothesis_reference",
                     "induction hypothesis": "hypothesis_reference"}


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
    assert len(split_steps(sol)) == 30  # the default: no cap
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
    # A figure announced with a colon ends its sentence's step: what follows it does not finish that sentence.
    shown = "So $g(x+3) = g(x)$. The graph of $g$ is shown below:\n\n<img_3987>\n\nBecause $g$ is periodic, it is bounded."
    assert split_steps(shown)[-2:] == ["The graph of $g$ is shown below:\n\n<img_3987>", "Because $g$ is periodic, it is bounded."]


def test_layout_tags_and_credit_lines_stay_out_of_a_step_start_and_roman_items_start_steps():
    sol = (
        "We set up the law of cosines in triangle $AEF$ first. $AE^2 = AF^2 + EF^2 - 2 AF \\cdot EF \\cos F.$ (1)\n"
        "Then the same law in triangle $AFE$ gives the second equation.\n</ol>\n\\bigskip\n"
        "Now we add the two and simplify to get $EF = 7$.\n~MRENTHUSIASM (credit given to AoPS)\n\n"
        "Fix $\\varepsilon > 0$.\n\ni. If $x > b$, let $\\delta = x - b$ and check the bound.\n\n"
        "ii. If $x < a$, let $\\delta = a - x$ and check the bound."
    )
    assert split_steps(sol) == [
        "We set up the law of cosines in triangle $AEF$ first.",
        "$AE^2 = AF^2 + EF^2 - 2 AF \\cdot EF \\cos F.$ (1)",  # the tag stays with its formula
        "Then the same law in triangle $AFE$ gives the second equation.\n</ol>\n\\bigskip",  # layout closes a step
        "Now we add the two and simplify to get $EF = 7$.",  # the credit line is no move
        "Fix $\\varepsilon > 0$.",
        "i. If $x > b$, let $\\delta = x - b$ and check the bound.",
        "ii. If $x < a$, let $\\delta = a - x$ and check the bound.",  # a roman item is not lower-case prose
    ]
    wrapped = "The cell is not on the edge of the board\n(that is, it is in cell $(2,i)$ with $2 < i$), so it has four neighbours."
    assert split_steps(wrapped) == [wrapped]  # a parenthesis opened in lower case goes on with its sentence
    assert split_steps("We have $x = 1$.\n~Then $y = x + 1 = 2$ follows at once.") == [
        "We have $x = 1$.", "~Then $y = x + 1 = 2$ follows at once."
    ]  # a LaTeX `~` space before math is no credit line


def test_a_proof_heading_a_case_label_and_a_statement_are_never_a_step_of_their_own():
    claim = "The claim gives the result at once.\n\nProof of the Claim.\n\nWe prove it by induction on $n$."
    assert split_steps(claim) == ["The claim gives the result at once.", "Proof of the Claim.\n\nWe prove it by induction on $n$."]
    lemma = "So the lemma finishes the proof.\n\n<Proof of Lemma 2>\n\n(1) Let $H$ be the component of $v$."
    assert split_steps(lemma)[1:] == ["<Proof of Lemma 2>\n\n(1) Let $H$ be the component of $v$."]
    for label in ("Case 1: $b=1$.", "Case 1) $X = H$.", "(Case 1) $a, b$ are both even.", "Case-1: $G \\neq e$."):
        sol = f"Assume the claim for $n-1$.\n\n{label}\n\nThen $a_{{n+1}} = a_n + 1 \\geq n$, as we wanted."
        assert split_steps(sol)[1:] == [f"{label}\n\nThen $a_{{n+1}} = a_n + 1 \\geq n$, as we wanted."], label
    titled = "Assume the contrary.\n\nStep 1: Black and white colouring.\nBefore the moves start, paint every cell white."
    assert split_steps(titled)[1:] == ["Step 1: Black and white colouring.\nBefore the moves start, paint every cell white."]
    wrapped = "This is a well-known shortlist problem, so we omit the\n proof here.\n\n Consider an inversion at $I$."
    assert split_steps(wrapped)[0] == "This is a well-known shortlist problem, so we omit the\n proof here."  # prose, no heading
    scraped = "So $\\|u\\| \\leq \\|u+a v\\|$.\n\nStep 4\n\n4 of 4\n\nDivide both sides by $t$, getting $2|(u, v)|^2 \\leq t$."
    assert split_steps(scraped)[1:] == ["Step 4\n\n4 of 4\n\nDivide both sides by $t$, getting $2|(u, v)|^2 \\leq t$."]
    method = "Two methods work.\n\nMethod \\#1: Comparing coefficients\n\nExpanding gives $a = 2$ and $b = 3$."
    assert split_steps(method)[1:] == ["Method \\#1: Comparing coefficients\n\nExpanding gives $a = 2$ and $b = 3$."]
    statement = "Lemma: Let $G$ be a group. If $|G|=2$, then $G \\cong Z_2$.\n\nProof: $G=\\{e, g\\}$ with $g^2=e$."
    assert split_steps(statement)[0] == "Lemma: Let $G$ be a group. If $|G|=2$, then $G \\cong Z_2$."


def test_a_sentence_is_the_smallest_step_even_a_chain_of_therefore_clauses():
    """Labellers following the Appendix A prompt cut between sentences, not at `, so` / `, therefore` inside one."""
    chain = (
        "We have $x = 2 + 3 = 5$ from the sum of both parts, therefore $y = 2x = 10$ follows from doubling it, "
        "hence $z = y + 1 = 11$ is the final count."
    )
    assert split_steps(chain) == [chain]
    sol = chain + " Then $w = z - 1 = 10$ is the other count, so $w = y$ as the problem says."
    assert split_steps(sol) == [chain, "Then $w = z - 1 = 10$ is the other count, so $w = y$ as the problem says."]


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


def test_a_table_or_a_cases_block_is_never_cut_even_when_its_dollars_do_not_pair():
    """A `tabular` of values checked, and a `cases` block whose `$` crosses a blank line (so the math
    scan cannot see it), stay inside the step that shows them."""
    table = (
        "We check every residue.\n\n\\begin{tabular}{c|c}\n\\hline $x$ & $x^3 \\bmod 7$ \\\\\n\\hline 1 & 1 \\\\\n"
        "\\hline 2 & 1 \\\\\n\\hline 3 & 6 \\\\\n\\hline\n\\end{tabular}\n\nSo the cubes are $0$, $1$ and $6$ only."
    )
    assert split_steps(table) == [table[: table.index("\\end{tabular}") + 13], "So the cubes are $0$, $1$ and $6$ only."]
    centred = table.replace("\\begin{tabular}", "\\begin{center}\n\\begin{tabular}").replace(
        "\\end{tabular}", "\\end{tabular}\n\n\\end{center}"
    )
    assert split_steps(centred) == [centred[: centred.index("\\end{center}") + 12], "So the cubes are $0$, $1$ and $6$ only."]
    inline = (
        "Draw a $3 \\times 3$ square.\n$\\begin{tabular}{|c|c|c|} \\hline K & J & K \\\\ \\hline \\end{tabular}$\n"
        "Start from the centre."
    )
    assert split_steps(inline)[0].endswith("\\end{tabular}$")  # a table set in `$...$` on its own line goes on the step
    centre = "Dividing, we obtain the system\n<center>\n$x + y = 2$\n</center>\nSo $x = 1$ and $y = 1$."
    assert split_steps(centre)[0].startswith("Dividing") and "<center>" in split_steps(centre)[0]
    cases = (
        "By induction $f(x)=\\begin{cases}\n 0 & 3|x\n\n 1 & 3|x-1\n\n -1 & 3|x+1\n \\end{cases}$ for all $x$.\n\n"
        "Case 2. The image of $f$ is not bounded."
    )
    assert split_steps(cases)[0] == cases[: cases.index("\n\nCase 2")]


def test_a_markdown_table_is_never_cut_at_its_rows():
    # Its rows are cells, not sentences: the table is one unit, as a `tabular` is.
    text = (
        "We list the values of $a_i$ in a table.\n\n| $i$ | $a_i$ |\n| :---: | :---: |\n| 0 | $k+1$ |\n| 1 | $k+2$ |\n\n"
        "So every $a_i$ is distinct."
    )
    assert split_steps(text) == [
        "We list the values of $a_i$ in a table.",
        "| $i$ | $a_i$ |\n| :---: | :---: |\n| 0 | $k+1$ |\n| 1 | $k+2$ |",
        "So every $a_i$ is distinct.",
    ]


def test_one_of_several_proofs_is_a_heading_that_starts_its_step():
    sol = (
        "We prove $AK \\cdot LH = AL \\cdot KH$ in two ways. First proof. Let the lines $KL$ and $HC$ meet at $M$. "
        "Then $M$ is the midpoint of $HC$ by symmetry. Second proof. Consider the circle through $A$, $H$ and $C$."
    )
    steps = split_steps(sol)
    assert [s for s in steps if s.startswith(("First proof.", "Second proof."))] == [
        "First proof. Let the lines $KL$ and $HC$ meet at $M$.",
        "Second proof. Consider the circle through $A$, $H$ and $C$.",
    ]


def test_a_numbered_plan_stays_with_its_intro_but_numbered_steps_split():
    plan = "To find the mean we:\n\n1. Add the numbers.\n2. Divide the sum.\n\nThe sum is $6 + 8 = 14$, so the mean is $7$."
    assert split_steps(plan)[0].endswith("2. Divide the sum.")


def test_every_sentence_is_a_move_and_a_conclusion_is_its_own_step():
    sol = (
        "We use similar triangles here. The sun's rays are parallel, so the triangles agree. "
        "Hence $\\frac{5}{6} = \\frac{15}{x}$ gives the height.\n\nSo $x = 18$ feet."
    )
    assert split_steps(sol) == [
        "We use similar triangles here.", "The sun's rays are parallel, so the triangles agree.",
        "Hence $\\frac{5}{6} = \\frac{15}{x}$ gives the height.", "So $x = 18$ feet.",
    ]


def test_no_cap_binds_by_default_and_a_cap_is_a_parameter():
    sol = " ".join(f"Step number {k} of the argument gives $x_{{{k}}} = {k}$." for k in range(45))
    assert len(split_steps(sol)) == 45
    assert len(split_steps(sol, HeuristicConfig(max_steps=20))) == 20


def test_sentence_ends_inside_math_and_after_a_display_cut_units():
    sol = "Let $w = a - 1,$ so $w + 1 = a.$  Then $w^2 = 4.$\n\\[a + b = 6,\\]which means $b = 2.$  Also,\n\\[c = 3.\\]Hence $c + b = 5$."
    assert split_steps(sol) == [
        "Let $w = a - 1,$ so $w + 1 = a.$", "Then $w^2 = 4.$\n\\[a + b = 6,\\]which means $b = 2.$",
        "Also,\n\\[c = 3.\\]", "Hence $c + b = 5$.",
    ]


def test_headings_start_their_step_with_the_next_sentence_and_lead_ins_stay_before():
    sol = (
        "The orbits are closed curves. We distinguish two cases.\n\n"
        "Case 1: $a$ is connected to $b$. Then the count drops by one. So $n$ is even.\n\n"
        "Case 2: $a$ is not connected to $b$. Then the count grows by one.\n\n"
        "<Step 2> The parity flips\n\nEvery flip changes the count by one. So the parity flips."
    )
    assert split_steps(sol) == [
        "The orbits are closed curves. We distinguish two cases.",
        "Case 1: $a$ is connected to $b$. Then the count drops by one.",  # a short case hypothesis is not a move
        "So $n$ is even.",
        "Case 2: $a$ is not connected to $b$. Then the count grows by one.",
        "<Step 2> The parity flips\n\nEvery flip changes the count by one.",
        "So the parity flips.",
    ]
    claim = "**Claim 1.** The map $f$ is injective.\n\nProof. Suppose $f(a) = f(b)$. Then $a = b$ by the lemma."
    assert split_steps(claim) == [
        "**Claim 1.** The map $f$ is injective.", "Proof. Suppose $f(a) = f(b)$.", "Then $a = b$ by the lemma.",
    ]


def test_lists_parentheticals_figures_and_names_stay_inside_their_step():
    sol = (
        "Consider the radical axes of the three circles:\n\\begin{itemize}\n\\item The first one is $PQ$.\n"
        "\\item The second one is $QR$.\n\\end{itemize}\nTherefore the axes meet at $Q$. "
        "(Note that the circles are distinct. The axes are lines.) "
        "Figure 4 shows the configuration. Call this point $T$.\n\nNow $T$ has equal powers."
    )
    assert split_steps(sol) == [
        "Consider the radical axes of the three circles:\n\\begin{itemize}\n\\item The first one is $PQ$.\n"
        "\\item The second one is $QR$.\n\\end{itemize}",
        "Therefore the axes meet at $Q$. (Note that the circles are distinct. The axes are lines.) "
        "Figure 4 shows the configuration. Call this point $T$.",
        "Now $T$ has equal powers.",
    ]


def test_a_hard_wrapped_line_and_notation_set_up_in_a_row_stay_one_step():
    wrapped = "All powers of $x$ are then congruent modulo\n $g$, so $x + y \\equiv 0$. Hence $g$ divides $x + y$."
    assert split_steps(wrapped) == [
        "All powers of $x$ are then congruent modulo\n $g$, so $x + y \\equiv 0$.", "Hence $g$ divides $x + y$.",
    ]
    # a line that stops on a word no sentence ends with (an article, `assume`) goes on, whatever the next line opens with
    article = "By symmetry we may as well assume\n WLOG that $n = k + 1$. Then consider the\n Bob-graph on $V$."
    assert split_steps(article) == ["By symmetry we may as well assume\n WLOG that $n = k + 1$.", "Then consider the\n Bob-graph on $V$."]
    assert len(split_steps("So $x = b+a$\n\nThe next case is $y = 2$.")) == 2  # the `a` of a formula is no article
    notation = "Let $D$ and $F$ denote the centers. Let $C$ be the point of tangency. Then $DC = 2$ and $FC = 1$."
    assert split_steps(notation) == ["Let $D$ and $F$ denote the centers. Let $C$ be the point of tangency.", "Then $DC = 2$ and $FC = 1$."]



def test_a_list_of_moves_is_cut_at_its_items_and_its_lead_in_stays_before():
    moves = (
        "Each guest likes some of the $n$ seats. We run the following procedure.\n\\begin{itemize}\n"
        "\\item If a perfect matching of guests to liked seats exists, we are done, since every guest then has a "
        "seat of their own and no two guests share a seat.\n"
        "\\item Otherwise Hall's condition fails for some set $B$ of guests, who together like fewer than $|B|$ "
        "seats. We remove $B$ and the seats they like, and try again.\n"
        "\\item We repeat this until a matching of the remaining guests exists, which happens after finitely many "
        "rounds since each round removes at least one guest.\n\\end{itemize}\n"
        "Since the host likes every seat, she is never removed."
    )
    steps = split_steps(moves)
    assert steps[0] == "Each guest likes some of the $n$ seats. We run the following procedure.\n\\begin{itemize}"
    assert [st[:9] for st in steps[1:4]] == ["\\item If ", "\\item Oth", "\\item We "]
    assert steps[3].endswith("\\end{itemize}") and steps[4].startswith("Since the host")
    # short items enumerate one statement: the list stays whole, inside the step of its sentence
    points = "We place two points.\n\\begin{itemize}\n\\item Let $N$ be the midpoint of $BC$.\n\\item Let $S$ be on $AB$.\n\\end{itemize}"
    assert split_steps(points) == [points]


def test_latex_font_headings_and_titled_case_labels_start_their_step_with_the_next_paragraph():
    sol = (
        "Let $a$ be odd. We consider two cases.\n\n\\textbf{Case 1: $b$ is even}\n\nThen $a + b$ is odd.\n\n"
        "(Case 2) If $b$ is odd\n\nThen $a + b$ is even."
    )
    assert split_steps(sol) == [
        "Let $a$ be odd. We consider two cases.",
        "\\textbf{Case 1: $b$ is even}\n\nThen $a + b$ is odd.",
        "(Case 2) If $b$ is odd\n\nThen $a + b$ is even.",
    ]


def test_a_sentence_that_only_closes_a_proof_stays_in_the_step_before():
    sol = (
        "Suppose $p$ divides $ab$ but not $a$. Then $\\gcd(p, a) = 1$, so $p$ divides $b$ by Euclid's lemma. "
        "This completes the proof of the claim.\n\nNow $b = pc$ for an integer $c$.\n\n$$b^2 = p^2 c^2.$$\n\n"
        "The lemma follows."
    )
    assert split_steps(sol) == [
        "Suppose $p$ divides $ab$ but not $a$.",
        "Then $\\gcd(p, a) = 1$, so $p$ divides $b$ by Euclid's lemma. This completes the proof of the claim.",
        "Now $b = pc$ for an integer $c$.\n\n$$b^2 = p^2 c^2.$$\n\nThe lemma follows.",
    ]
    # a conclusion with content is still a step of its own
    assert split_steps("We have $x = 3$ here.\n\nThus the result is $x^2 = 9$.")[1] == "Thus the result is $x^2 = 9$."


def test_a_numbered_step_stating_its_claim_starts_its_step_with_the_proof_after_it():
    sol = (
        "A check shows that $f(x)=x+1$ works. We divide the converse into steps.\n\nStep 1: $f$ is injective."
        "\n\nPut $x=1$ to get $y=f(1) f(y)+1-f(1+f(y))$.\n\nTherefore $f(y_1)=f(y_2)$ gives $y_1=y_2$."
        "\n\nStep 2: $f$ is increasing.\n\nFix $y$; the map $g(x)=f(x+f(xy))$ is injective by Step 1."
    )
    assert split_steps(sol) == [
        "A check shows that $f(x)=x+1$ works.",
        "We divide the converse into steps.",
        "Step 1: $f$ is injective.\n\nPut $x=1$ to get $y=f(1) f(y)+1-f(1+f(y))$.",
        "Therefore $f(y_1)=f(y_2)$ gives $y_1=y_2$.",
        "Step 2: $f$ is increasing.\n\nFix $y$; the map $g(x)=f(x+f(xy))$ is injective by Step 1.",
    ]

def test_a_text_laid_out_in_many_paragraphs_keeps_them_whole_and_a_dense_one_is_cut_at_sentences():
    paragraph = "Let $a_{k} = k^2$ for this part. Then $a_{k} + 1 > a_{k}$ holds. Hence part {k} is done."
    laid_out = "\n\n".join(paragraph.replace("{k}", str(k)) for k in range(12))
    steps = split_steps(laid_out)
    assert len(steps) == 12 and steps[3] == paragraph.replace("{k}", "3")
    # the same sentences in three paragraphs: too few line breaks to be the author's steps
    dense = "\n\n".join(" ".join(paragraph.replace("{k}", str(4 * j + k)) for k in range(4)) for j in range(3))
    assert len(split_steps(dense)) == 36
    # a long paragraph among many short ones is still cut at its sentences
    long_one = " ".join(paragraph.replace("{k}", f"x{k}") for k in range(12))
    assert len(long_one) > HeuristicConfig().long_paragraph_chars
    assert len(split_steps(laid_out + "\n\n" + long_one)) == 12 + 36
    # the rule is a recorded knob: None cuts every text at its sentences
    assert len(split_steps(laid_out, HeuristicConfig(paragraph_steps=None))) == 36


def _in_dollars(cot: str) -> str:
    """The same text with its math in dollars, as people write it."""
    return cot.replace("\\[", "$$").replace("\\]", "$$").replace("\\(", "$").replace("\\)", "$")


def test_a_model_written_cot_keeps_its_paragraphs_whole_and_the_same_text_in_dollars_is_cut_at_sentences():
    cot = (
        "To find the mean, we add the numbers and divide by how many there are. Let's break this down.\n\n"
        "First, we add the numbers. The sum is:\n\\[\n6 + 8 + 10 = 24\n\\]\n\n"
        "Next, we count them. There are 3 numbers, so we divide \\(24\\) by \\(3\\):\n\\[\n24 / 3 = 8\n\\]\n\n"
        "Therefore, the mean is \\(\\boxed{8}\\)."
    )
    steps = split_steps(cot)
    assert [s.split()[0] for s in steps] == ["To", "First,", "Next,", "Therefore,"]
    assert steps[2] == "Next, we count them. There are 3 numbers, so we divide \\(24\\) by \\(3\\):\n\\[\n24 / 3 = 8\n\\]"
    # a human text in dollars with as few paragraphs is written densely: every sentence is a move
    dollars = _in_dollars(cot)
    assert len(split_steps(dollars)) == 7
    # the rule is a recorded knob
    assert len(split_steps(cot, HeuristicConfig(model_paragraphs=False))) == 7


def test_short_bulleted_points_stay_with_the_line_that_opens_their_list_and_long_bullets_start_steps():
    sol = "We factorize 68.\n\nFirst, we divide by 2:\n- 68 ÷ 2 = 34.\n- 34 ÷ 2 = 17.\n- 17 is a prime number.\n\nSo $68 = 2^2 \\cdot 17$."
    assert split_steps(sol) == [
        "We factorize 68.", "First, we divide by 2:\n- 68 ÷ 2 = 34.\n- 34 ÷ 2 = 17.\n- 17 is a prime number.",
        "So $68 = 2^2 \\cdot 17$.",
    ]
    cases = ("We list the partitions.\n\n* One part. There is one possibility, and it is the number $64$ itself.\n"
             "* Two parts. There are three possibilities: $64=2 \\times 32=4 \\times 16=8 \\times 8$.")
    assert [s[:11] for s in split_steps(cases)][:3] == ["We list the", "* One part.", "* Two parts"]


# --- bookkeeping: one small case per family, written for these tests ---------------------------


def test_tables_alignment_residue_index_ranges_labels_and_garbled_brackets_are_junk():
    assert junk_reason(r"\begin{array}{c|c} k & 2^k \\ 1 & 2 \end{array}") == "table"
    assert junk_reason(r"\begin{array}{cc} k & 2^k \\ 1 & 2 \end{array}") == "table"
    # a bare `matrix` lays out a grid of values (which numbers are left, a verification table); `pmatrix` is a matrix
    assert junk_reason("\\begin{matrix}\n100 & 101 & & 104 \\\\\n110 & & 112 & 115\n\\end{matrix}") == "table"
    assert junk_reason(r"\begin{pmatrix} 1 & 2 \\ 3 & 4 \end{pmatrix}") is None
    assert junk_reason(r"12-4 & =8, & & 2^{3} \mid 8") == "alignment_residue"
    for rng in (r"j=1,\dots,m", r"i = 0, 1, \ldots, n-1", r"1 \le k \le n", r"0 \leq t < N"):
        assert junk_reason(rng) == "index_range", rng
    assert junk_reason(r"(\mathrm{ii}^{\prime})") == junk_reason("(*)") == junk_reason("(3)") == "label"
    assert junk_reason(r"\left.y=90^{\circ}\right)") == "garbled_brackets"
    for good in (r"\left(\begin{array}{cc} 1 & 2 \\ 3 & 4 \end{array}\right) v = w", r"x \in [0, 1)",
                 r"y=2,4,\sqrt{7}", r"12 \leq b \leq 19", r"g(x)=\begin{cases} 1 & x>0 \\ 0 & x \le 0\end{cases}"):
        assert junk_reason(good) is None, good


def test_case_labels_hypotheses_definitions_and_quantifier_ranges_are_bookkeeping():
    def kinds(sol: str, problem: str = "") -> dict[str, str | None]:
        return {sol[c.start : c.end]: c.junk for c in find_candidates(sol, problem=problem)}

    sol = (
        r"Case 2: $\deg P = 3$. If $m \equiv 1 \pmod 4$, then $m^2 + 3 \equiv 0 \pmod 4$. "
        r"Let $s = u + v$ and $t = uv$; then $s^2 - 4t \geq 0$ for all $u \geq 0$. "
        r"Choose $z \in K$. Since $u + v = 2$, we get $uv = 1$."
    )
    got = kinds(sol, problem=r"Find $u$ and $v$.")
    assert got[r"\deg P = 3"] == "case_label"
    assert got[r"m \equiv 1 \pmod 4"] == "case_hypothesis" and got[r"m^2 + 3 \equiv 0 \pmod 4"] is None
    assert got["s = u + v"] == got["t = uv"] == got[r"z \in K"] == "definition"
    assert got[r"u \geq 0"] == "quantifier_range" and got[r"s^2 - 4t \geq 0"] is None
    assert got["uv = 1"] is None and got["u + v = 2"] is None
    more = kinds(
        r"Consider $B_n := \{z : g(z) = n\}$. Let $T \subseteq B_1$ be finite. The claim is trivial for $n=1$. "
        r"If we were to have $w=0$, then $g(w) = 7$ would fail. Start by testing $k=4$: then $g(k) = 9$."
    )
    assert more[r"B_n := \{z : g(z) = n\}"] == more[r"T \subseteq B_1"] == "definition"
    assert more["n=1"] == "quantifier_range"
    table = kinds("The values:\n\n| $k$ | $y$ | $x= \\pm \\sqrt{25-y^{2}}$ |\n|---|---|---|\n\nSo $x^2 + y^2 = 25$.")
    assert table[r"x= \pm \sqrt{25-y^{2}}"] == "table_cell" and table["x^2 + y^2 = 25"] is None
    assert more["w=0"] == more["k=4"] == "case_hypothesis" and more["g(k) = 9"] is None
    # a substitution into a symbol the problem already uses is not new notation
    assert kinds(r"Let $u = 2w + 1$, so $u^2 = 4w^2 + 4w + 1$.", problem=r"Show $u^2$ is odd.")["u = 2w + 1"] is None


def _kinds(sol: str, problem: str = "") -> dict[str, str | None]:
    return {sol[c.start : c.end]: c.junk for c in find_candidates(sol, problem=problem)}


def _assert_kinds(got: dict[str, str | None], bookkeeping: tuple[str, ...] = (), maskable: tuple[str, ...] = ()) -> None:
    """Each formula of `bookkeeping` is rejected (for some reason) and each of `maskable` is not."""
    assert [f for f in bookkeeping if got[f] is None] == []
    assert [f for f in maskable if got[f] is not None] == []


def test_a_displayed_definition_is_read_from_the_words_before_its_display():
    """`we define\n\n$$\nM_n = ...$$`: the clause before a display is the sentence before its blank lines."""
    sol = "For every integer $n \\geqslant 1$ we define\n\n$$\nM_{n}=\\max _{k} S(n, k), \\quad m_{n}=\\min _{k} S(n, k)\n$$\n\n"
    sol += "Therefore\n\n$$\nM_{n}-m_{n} \\leqslant \\frac{n-1}{n}\\left(M_{n-1}-m_{n-1}\\right)\n$$"
    got = _kinds(sol)
    assert got["M_{n}=\\max _{k} S(n, k), \\quad m_{n}=\\min _{k} S(n, k)"] == "definition"
    assert got["M_{n}-m_{n} \\leqslant \\frac{n-1}{n}\\left(M_{n-1}-m_{n-1}\\right)"] is None


def test_declarations_are_definitions_whatever_their_font_or_bound():
    got = _kinds(
        r"Let $\mathcal{U}=\left\{u_{1}, u_{2}\right\}$ be a set of vectors. Let $\varepsilon>0$ be given. "
        r"Since $f$ is uniformly continuous, there exists $\delta>0$ such that $d(f(x), f(u))<\varepsilon$. "
        r"There exist disjoint open sets $U, V \subseteq X$ such that $x \in U$. Let $f(x), g(x) \in \mathbb{Q}[x]$ be such that "
        r"$f(x) g(x) \in \mathbb{Z}[x]$. Let $\log_2{x} = \log_y{16}=k$, so that $2^k=x$.",
        problem=r"Show that $f$ is continuous for every $\varepsilon > 0$.",
    )
    for declared in (r"\mathcal{U}=\left\{u_{1}, u_{2}\right\}", r"\varepsilon>0", r"\delta>0", r"U, V \subseteq X",
                     r"f(x), g(x) \in \mathbb{Q}[x]", r"\log_2{x} = \log_y{16}=k"):  # fmt: skip
        assert got[declared] == "definition", declared
    assert got[r"d(f(x), f(u))<\varepsilon"] is None and got[r"f(x) g(x) \in \mathbb{Z}[x]"] is None


def test_where_names_a_value_even_for_a_symbol_used_just_before():
    got = _kinds(
        r"Then $p^{2}=a^{2}+b^{2}$ where $a=\frac{n+m}{2}$ and $b=\frac{n-m}{2}$. "
        r"Putting $h'=g^{-1} h g$, we have $h=g h' g^{-1}$."
    )
    assert got[r"a=\frac{n+m}{2}"] == got[r"b=\frac{n-m}{2}"] == got["h'=g^{-1} h g"] == "definition"
    assert got[r"p^{2}=a^{2}+b^{2}"] is None and got["h=g h' g^{-1}"] is None
    # `Let` alone keeps needing a new symbol: `Let $u = 2w+1$` for the problem's `u` is a result
    assert _kinds(r"Let $u = 2w + 1$, so $u^2 = 4w^2 + 4w + 1$.", problem=r"Show $u^2$ is odd.")["u = 2w + 1"] is None


def test_index_ranges_after_for_with_if_and_between_from_and_until_are_bookkeeping():
    got = _kinds(
        r"Moreover $w_{j}+r_{j}=2 j$ for $1 \leq j \leq 2008$. Then $q \mid n$ for all integers $m, n$ with $n \neq 0$. "
        r"Then $d(x_n, x_m)<\delta$ if $n, m>N$. By induction, $A_n \subset B$ for all $n \in \mathbb{Z}_{+}$. "
        r"From $n=m^{2}+1$ until $n=(m+1)^{2}$, the values increase. For $(i, j) \equiv(0,1) \bmod 2$ use $B$. "
        r"So the answer holds if and only if $k \geq 3$."
    )
    for r in (r"1 \leq j \leq 2008", r"n \neq 0", "n, m>N", r"n \in \mathbb{Z}_{+}", "n=m^{2}+1", "n=(m+1)^{2}",
              r"(i, j) \equiv(0,1) \bmod 2"):  # fmt: skip
        assert got[r] in ("quantifier_range", "definition"), r
    assert got[r"w_{j}+r_{j}=2 j"] is None and got[r"d(x_n, x_m)<\delta"] is None and got[r"k \geq 3"] is None


def test_cases_opened_by_if_lists_consider_check_or_a_trailing_if_are_hypotheses():
    got = _kinds(
        r"If $m=4, n=4$, and $p=3$, the perimeter is $32$. First consider $m=6, n=2, p=1$: the perimeter is $30$. "
        r"Now we check $x=4$ and see that $y = 9$. The graph is two lines if $A>25$. If $n$ is odd and $n<1006$, then $n \mid 12$. "
        r"Consider $\frac{a}{b} + c_{n+1}$ and later $p = q + r$."
    )
    for hyp in ("p=3", "m=6, n=2, p=1", "x=4", "A>25", "n<1006"):
        assert got[hyp] in ("case_hypothesis", "definition"), hyp
    assert got["y = 9"] is None and got[r"\frac{a}{b} + c_{n+1}"] is None and got["p = q + r"] is None


def test_enumerations_case_prefixes_row_fragments_and_glued_subjects_are_junk():
    cases = {
        r"n \equiv 0,1, \ldots, 6(\bmod 7)": "index_range",
        r"\Delta_{j}, j=1,2, \ldots, 2009": "index_range",
        r"\lambda_1, \ldots, \lambda_n": "index_range",
        r"\left(e_1, \ldots, e_n\right)": "index_range",
        r"b_i \leq a_i, i=1,2,\ldots,k": "index_range",
        r"b=3: \quad a^{3}-9 a^{2}+28=0": "case_prefix",
        r"\mathrm{D}+\mathrm{E}=11: \underline{\mathrm{D}} \underline{\mathrm{E}}=29": "case_prefix",
        r"\cdot[\mathbb{Q}(\sqrt{2}): \mathbb{Q}]": "leading_operator",
        r"\mapsto \frac{x}{2}": "leading_operator",
        r"q \equiv 3 \bmod 4, q": "trailing_subject",
        r"\theta=150^{\circ}, \sin \theta": "trailing_subject",
        r"\sum_{i<j} x_{i} x_{j} \geqslant": "trailing_operator",
        "\\begin{alignat*}{2} f(1)&=a+b+c&&=1, \\\\ f(2)&=4a+2b+c&&=12 \\end{alignat*}": "table",
    }
    for text, reason in cases.items():
        assert junk_reason(text) == reason, text
    keeps = (r"x = 1, 2", r"f: X \to Y", r"\{x=1 : x>0\}", "a:b = 2:3", "x=2, y=3", r"a, b \in G", r"-x + 1 = 0",
             r"x = 2\, y")  # `\,` is a thin space, not a comma before a subject
    for keep in keeps:
        assert junk_reason(keep) is None, keep


def test_a_lone_symbol_in_a_font_is_context():
    from mrtasks.curate.heuristic.ranking import _minor

    assert _minor(r"\mathcal{V}_{*}", "math") and _minor(r"\mathcal{D}_{\mathrm{L}}", "math") and _minor(r"\mathcal{F}_{8}", "math")
    assert not _minor(r"\mathcal{D}=\mathcal{F}", "math")
    # an index written as an expression is still one symbol: `\mathcal{F}_{n-1}` names the town of the induction step
    assert _minor(r"\mathcal{F}_{n-1}", "math") and _minor("a_{i+1}", "math") and _minor("x_{2k+1}", "math")
    assert not _minor("a_{i+1} = 2 a_{i}", "math")


def test_names_of_figure_objects_are_context_not_masks():
    """A segment, angle, triangle or arc written by its name (a figure label) has nothing to fill in."""
    sol = (
        r"Draw the segments $\overline{A_1 B_1}$ and $\overline{C D}$, the angle $\angle B B_{1} C$, the triangles "
        r"$A S_{b} S_{c}, A X T$ and the arc $\operatorname{arc} E G$. By the power of a point, $A_1 B_1 \cdot C D = 4 x^2 + 1$, "
        r"so $x = \frac{\sqrt{3}}{2}$ and $\overline{AB} = \overline{CD} + 2$."
    )
    assert [f.text for f in extract_formulas(sol)] == [
        "power of a point", r"x = \frac{\sqrt{3}}{2}", r"A_1 B_1 \cdot C D = 4 x^2 + 1", r"\overline{AB} = \overline{CD} + 2",
    ]
    from mrtasks.curate.heuristic.ranking import _minor

    assert _minor(r"\operatorname{arc}AB", "math") and _minor(r"A\,B\,C", "math")  # glued or thin-spaced letters
    assert not _minor(r"0.\overline{36}", "math") and not _minor(r"\angle ABC + \angle BCD", "math")


def test_connective_text_and_justifications_are_trimmed_from_a_formula():
    sol = r"We find $$\text{ and } p + q = 10 \quad (\text{since } p = q)$$ and $r s = 12 \text{. }$ here."
    assert [t for t, _, _ in candidates(sol)] == ["p + q = 10", "r s = 12"]
    # the dot of `\right.` closes a `\left\{`: trimming it as a full stop would leave broken LaTeX
    system = r"So $y=\left\{\begin{array}{l} x+1 \\ x-1 \end{array}\right.$ and $z=\left\{-3 a s^{2}-b\right.$ hold."
    assert [t for t, _, _ in candidates(system)] == [
        r"y=\left\{\begin{array}{l} x+1 \\ x-1 \end{array}\right.", r"z=\left\{-3 a s^{2}-b\right."
    ]


def test_established_results_rank_above_hypotheses_and_theorem_names_rank_first():
    sol = (
        r"Suppose $a_1 + a_2 + a_3 = 3 w$. By the Chinese remainder theorem we get "
        r"$a_1 a_2 a_3 \leq w^3$, which is the claim."
    )
    got = texts(sol)
    assert got == ["Chinese remainder theorem", r"a_1 a_2 a_3 \leq w^3", "a_1 + a_2 + a_3 = 3 w"]


def test_the_lexicon_knows_the_standard_named_results_with_aliases():
    from mrtasks.mathcheck import canonical_theorem

    same = [
        ("Dirichlet's theorem on primes in arithmetic progressions", "Dirichlet's theorem"),
        ("LTE", "lifting the exponent lemma"), ("Zsigmondy", "Zsigmondy's theorem"), ("Hölder", "Holder's inequality"),
        ("Bolzano–Weierstrass theorem", "Bolzano-Weierstrass"), ("rank nullity theorem", "rank-nullity"),
        ("Sylow's third theorem", "Sylow theorems"), ("Cayley–Hamilton theorem", "Cayley-Hamilton"),
        ("Newton's sums", "Newton's identities"), ("the power of the point", "power of a point"),
    ]
    for a, b in same:
        assert theorem_names_equal(a, b) is True, (a, b)
    assert theorem_names_equal("Dirichlet's theorem", "pigeonhole principle") is False  # not the box principle
    for name in ("Muirhead's inequality", "Schur's inequality", "Ptolemy's theorem", "Stewart's theorem", "Pick's theorem",
                 "Hensel's lemma", "quadratic reciprocity", "mean value theorem", "Heine-Borel theorem", "Wilson's theorem"):
        assert canonical_theorem(name), name
    found = [t for t, k, _ in candidates("By Zsigmondy and LTE, and then Hall's marriage theorem, we are done.") if k == "theorem"]
    assert found == ["Zsigmondy", "LTE", "Hall's marriage theorem"]


def test_the_lexicon_knows_olympiad_and_undergraduate_results_beyond_the_first_round_and_folds_accents():
    from mrtasks.mathcheck import canonical_theorem

    same = [
        ("Titu's lemma", "Engel form"), ("Stolz-Cesàro theorem", "Stolz-Cesaro"), ("Kőnig's theorem", "Konig's theorem"),
        ("Erdős–Ko–Rado theorem", "EKR theorem"), ("trillium theorem", "incenter-excenter lemma"),
        ("Pascal's rule", "Pascal's identity"), ("Banach-Steinhaus theorem", "uniform boundedness principle"),
        ("Catalan's conjecture", "Mihailescu's theorem"), ("Schröder-Bernstein theorem", "Cantor-Bernstein theorem"),
    ]
    for a, b in same:
        assert theorem_names_equal(a, b) is True, (a, b)
    assert theorem_names_equal("Pascal's identity", "Pascal's theorem") is False  # Pascal's hexagon is another result
    assert theorem_names_equal("Fermat's last theorem", "Fermat's little theorem") is False
    assert theorem_names_equal("the Jacobi theorem", "Jacobi's theorem") is True  # outside the lexicon: by name
    assert theorem_names_equal("Euler's theorem", "Jacobi's theorem") is False
    assert theorem_names_equal("Erdős's lemma", "by the Erdos lemma") is True  # accents folded in the key too
    assert theorem_names_equal("x = 1", "Jacobi's theorem") is None  # not a name: compared as a formula
    assert canonical_theorem("FLT") == "Fermat's little theorem"  # the abbreviation keeps its meaning
    assert canonical_theorem("Mihăilescu's theorem") == canonical_theorem("Mihailescu's theorem") is not None
    found = [t for t, k, _ in candidates("By Pappus' theorem and then Kőnig's theorem, and Titu's lemma, we are done.")
             if k == "theorem"]
    assert found == ["Pappus' theorem", "Kőnig's theorem", "Titu's lemma"]
    # a name written with an en dash is found whole (as a result named after people), never its tail alone
    found = [t for t, k, _ in candidates("By the Cauchy–Schwarz inequality, and then the Two Tangent Theorem, $x=1$.")
             if k == "theorem"]
    assert found == ["Cauchy–Schwarz inequality", "Two Tangent Theorem"]
    assert canonical_theorem(found[0]) == "Cauchy-Schwarz"
    # a result named after people that the lexicon does not know is offered as a theorem name too
    sol = "By Jacobi's two squares theorem and the Sylvester–Gallai theorem, and then Fermat's little theorem, $n=5$."
    assert [t for t, k, _ in candidates(sol) if k == "theorem"] == [
        "Jacobi's two squares theorem", "Sylvester–Gallai theorem", "Fermat's little theorem"]


# --- bookkeeping, round 3: kinds left by the second screen, one small case per rule ------------


def test_definitions_by_participle_by_given_by_convention_tuple_and_text_and_are_definitions():
    got = _kinds(
        r"Letting $t=\log_2 x$ we get $t^2=4$. Denote by $g^{n}(x)=g(g(x))$ the iterate, so $g^{n}(x) \geq x$. "
        r"The map $\varphi: A \to B$ given by $\varphi(a)=2a$ is onto, so $\varphi(3)=6$. We make the convention that "
        r"$a_{-1}=0$. Let $(r,s)=(\cos u,\sin u)$. Let $$\lim x_n=p \text { and } q=\lim y_n$$ so $p=q$.",
        problem=r"Show $t$ exists for $x > 0$.",
    )
    for d in (r"t=\log_2 x", r"g^{n}(x)=g(g(x))", r"\varphi(a)=2a", "a_{-1}=0", r"(r,s)=(\cos u,\sin u)",
              r"\lim x_n=p \text { and } q=\lim y_n"):  # fmt: skip
        assert got[d] == "definition", d
    assert got["t^2=4"] is None and got[r"g^{n}(x) \geq x"] is None and got[r"\varphi(3)=6"] is None and got["p=q"] is None


def test_a_symbol_is_new_from_its_definitions_word_and_a_bare_name_is_not_its_indexed_relative():
    got = _kinds(r"Let $s=2$ for odd $n$ and $s=1$ for even $n$. Since $N_a \lhd G$, let $$N=\bigcap_a N_a$$ hence $N \lhd G$.")
    assert got["s=2"] == got["s=1"] == got[r"N=\bigcap_a N_a"] == "definition"
    assert got[r"N \lhd G"] is None


def test_case_labels_cut_by_the_sentence_reader_listed_cases_and_case_values_are_hypotheses():
    got = _kinds(
        r"- Case 3. $x<1$ or $4 k<x<4 k+1$ for some $k$. Then $f(x)>0$. It holds for $n=0$ or $n=1$. "
        r"If $F, G \subseteq X$ are closed, then $F \cap G$ is closed. If $x+4 \geq 0$ (or $x \geq -4$), then $y=x+4$. "
        r"Suppose by symmetry that $i=3$; then $b=c+1$. If $A=(s, t), B=(u, v)$ are points, then $d=s-u$. "
        r"We distinguish the cases $n=3 k$ and $n=5 k+1$ with $k \geq 0$. So $x=3,4,10$. We check that $x=0,1,2,3$ fail."
    )
    for hyp in ("4 k<x<4 k+1", "n=1", r"F, G \subseteq X", r"x \geq -4", "i=3", "A=(s, t), B=(u, v)", "n=5 k+1", "x=0,1,2,3"):
        assert got[hyp] in ("case_label", "case_hypothesis", "quantifier_range"), hyp
    for result in ("f(x)>0", r"F \cap G", "y=x+4", "b=c+1", "d=s-u", "x=3,4,10"):
        assert got[result] is None, result


def test_first_cells_ranges_with_open_ends_cut_products_and_factorials_outside_math_are_rejected():
    table = _kinds("| $\\lfloor n/3\\rfloor+1=2k+1$ | 5 |\n| --- | --- |\n\nSo $n=3k$.")
    assert table[r"\lfloor n/3\rfloor+1=2k+1"] == "table_cell" and table["n=3k"] is None
    assert junk_reason(r"0 \leq k \leq n, n=1,2, \ldots") == "index_range"
    assert junk_reason(r"-1 \cdot 2 \cdot \cdots") == "trailing_operator" and junk_reason(r"1+2+\cdots+n=3") is None
    assert junk_reason(r"\nmid \prod_{p<q} (p+q)") == "leading_relation"
    assert junk_reason(r"{(m+n)!}{m!(n+1)!}=k") == "garbled_brackets" and junk_reason(r"{a+b}^{2}=c") is None
    got = _kinds(r"Then $p^2 \nmid p$ ! and so $q \mid p$. Thus $r! = 6$ holds.")
    assert got[r"p^2 \nmid p"] == "garbled_brackets" and got[r"q \mid p"] is None and got["r! = 6"] is None


def test_justifications_written_in_text_after_a_comma_or_in_parentheses_are_trimmed():
    sol = (
        r"$$\begin{aligned} & x y=y x, \text { by cancellation law. } \\ & z=2 w, \text { since } w=1 \\ "
        r"& u=v+1 \quad\left(\text { since } v=0\right) \\ & p=q \text{(indices modulo 5)}\end{aligned}$$"
    )
    assert [t for t, _, _ in candidates(sol)] == ["x y=y x", "z=2 w", "u=v+1", "p=q"]


def test_round_four_bookkeeping_base_cases_bullets_with_values_chains_and_declared_bounds():
    got = _kinds(
        r"We induct on $m$. The base case $m=2$ is easy. The possible pairs are:"
        "\n"
        r"- when $K=3 \cdot 11$, the pair is $(4,1)$; and"
        "\n"
        r"- when $K=5 \cdot 7$, the pair is $(6,2)$. With $T=4, R=9$, the total is $T R=36$. "
        r"Pick every cell $(i, j)$ with $1 \leq i \leq j \leq m-1$, "
        r"and for each $2 \leqslant r \leqslant\left\lfloor\frac{m}{3}\right\rfloor$ "
        r"some row holds $r+1$ marks. Take $y \in V$ such that $x<y<c$; then $f(y)>f(x)$. We prove it for a general $m \geq 5$ "
        r"and a row of $m \geq 5$ cells gives $g(m)=2 m-3$. Without loss of generality assume $t_{1}<t_{2}<\cdots<t_{q}$. "
        r"Such sequences exist, say when $c=0$. So $c^2 = 4$ when $x<y$. For each prime $q_i$ with "
        r"$\left(q_1, q_2, q_3, \ldots\right)=\left(2, 3, 5, \ldots\right)$, pick $e_i$. If $20,000<M<21,000$, then $M$ "
        r"has five digits. For any positive reals $b_{1} \leqslant b_{2} \leqslant b_{3}$, we get $b_1 b_3 \geq 1$."
        "\n\nCase 2: We have $u=v$. Then $u^2=v^2$. Now assume that $w= \\pm 1$; then $w^2=1$. "
        r"In the remaining case we have $u=2 v$ and $v=3$."
    )
    _assert_kinds(got, bookkeeping=("m=2", r"K=3 \cdot 11", r"K=5 \cdot 7", "T=4, R=9", r"1 \leq i \leq j \leq m-1",
                                   r"2 \leqslant r \leqslant\left\lfloor\frac{m}{3}\right\rfloor", "x<y<c",
                                   r"t_{1}<t_{2}<\cdots<t_{q}", "c=0",
                                   r"\left(q_1, q_2, q_3, \ldots\right)=\left(2, 3, 5, \ldots\right)", "20,000<M<21,000",
                                   r"b_{1} \leqslant b_{2} \leqslant b_{3}", "u=v", r"w= \pm 1"),  # fmt: skip
                  maskable=("T R=36", "f(y)>f(x)", "g(m)=2 m-3", "c^2 = 4", r"b_1 b_3 \geq 1", "u^2=v^2", "w^2=1", "u=2 v"))


def test_an_unknown_written_in_parameters_a_where_clause_declares_is_a_definition():
    # An ansatz names nothing new on its left (`z` is the problem's) but writes it in new parameters: bookkeeping.
    got = _kinds(
        r"Let $z = x + yi$, where $x$ and $y$ are real numbers. Then $x^2 + y^2 = 25$. "
        r"Suppose $n = 2^e \cdot m,$ where $e$ is nonnegative and $m$ is odd. "
        r"So $c = 2b - a = -2b$, where $b$ is negative. The first case gives $n = 80 p$ where $p$ is a prime. "
        r"Hence $S = 10$, where $S$ is the sum.",
        problem=r"Find $|z|$ for a complex number $z$, and the least $n$ with $f(n) = 1$.",
    )
    assert got["z = x + yi"] == got[r"n = 2^e \cdot m"] == "definition"
    for result in ("x^2 + y^2 = 25", "c = 2b - a = -2b", "n = 80 p", "S = 10"):
        assert got[result] not in BOOKKEEPING, result


def test_new_names_by_subscript_prime_quotient_map_or_substitution_are_definitions():
    got = _kinds(
        r"The group $H$ acts on $G$. For each $i$ define $$H_i=G_i \cap H, \quad 0 \leq i \leq n .$$ Then $H_i \leq H_{i+1}$. "
        r"Let $\psi(K) = K'$, a subgroup of $G$, so $K' \lhd G$. Let $J / K \subseteq R / K$ be an ideal. "
        r"The map $\sigma: A \to B$ given by $$\sigma\left(u x+v+(p(x))\right)=u x-v+(q(x))$$ is onto. "
        r"Let $y_{1}$ be the least value; otherwise let $y_{2}=y_{1}+9, y_{3}=y_{2}+9$, and so on. "
        r"Similarly, the substitution $w=z-\frac{3}{2}$ yields $w^{3}=5$. Here $v_0=\left\langle v, e\right\rangle, \beta=1$ "
        r"where $u_0=\left\langle u, e\right\rangle, 1 \leq k \leq n$. Since $u_0 = 3$, we get $u_0^2=9$.",
        problem=r"Let $G$ be a group, $z$ a number and $y_n$ a sequence.",
    )
    for d in (r"H_i=G_i \cap H, \quad 0 \leq i \leq n", r"\psi(K) = K'", r"J / K \subseteq R / K",
              r"\sigma\left(u x+v+(p(x))\right)=u x-v+(q(x))", "y_{2}=y_{1}+9, y_{3}=y_{2}+9", r"w=z-\frac{3}{2}",
              r"u_0=\left\langle u, e\right\rangle, 1 \leq k \leq n"):  # fmt: skip
        assert got[d] == "definition", d
    for result in (r"H_i \leq H_{i+1}", r"K' \lhd G", "w^{3}=5", "u_0^2=9"):
        assert got[result] is None, result


def test_spaced_lone_symbols_counted_labels_and_typed_carets_are_not_maskable():
    from mrtasks.curate.heuristic.ranking import _minor

    assert _minor(r"\mathcal{P}_{A B}", "math") and _minor(r"\mathcal{P}_{A C}, \mathcal{P}_{B C}", "math")
    assert _minor(r"Q^{\prime \prime}", "math") and not _minor(r"\mathcal{P}_{A B}=\mathcal{P}_{B A}", "math")
    assert junk_reason(r"1,2, \ldots, \ell") == junk_reason(r"1, 2, \dots, k-1") == "index_range"
    assert junk_reason(r"1+2+\cdots+k=6") is None
    assert junk_reason(r"\$ 3^{\wedge} 2 \$") == junk_reason(r"x^{\wedge} 2=9") == "garbled_markup"
    assert junk_reason(r"\$4 + \$6 = \$10") is None and junk_reason(r"p \wedge q = r") is None


def test_a_lemma_statement_is_not_cut_and_a_latex_line_break_ends_its_line():
    sol = (
        "First we prove a lemma.\n\nLemma: Let $R$ be a ring and $J$ an ideal. Then $J^2 \\subseteq J$.\n\n"
        "Proof. Take $x \\in J$. Then $x^2 \\in J$."
    )
    steps = split_steps(sol)
    assert steps[1] == "Lemma: Let $R$ be a ring and $J$ an ideal. Then $J^2 \\subseteq J$."
    assert steps[-1] == "Then $x^2 \\in J$."  # inside a proof, `Then` is a move of its own
    sol = "Let $L$ be the least integer with $L \\ge n$.\n\\\\Consider a set $A$ of vertices. Its image is $f(A)$."
    assert split_steps(sol) == [
        "Let $L$ be the least integer with $L \\ge n$.\n\\\\", "Consider a set $A$ of vertices.", "Its image is $f(A)$.",
    ]


def test_round_five_bookkeeping_loose_ranges_asides_opening_for_let_names_and_generic_elements():
    got = _kinds(
        r"Pick a vertex $v$ for each $j \notin \mathcal{T}$, and a colour for $r \in\{1,2, \ldots, m-1\}$. "
        r"Only pairs with $c \leq \sqrt{50}$ matter, and the bound holds for some $p>\frac{2}{\varepsilon}$. "
        r"Count the triples with $u \leq 4, v \leq 3, w \leq 2$, which gives $5 \cdot 4 \cdot 3=60$. "
        r"Join the points $(t, t+2)$, where $1 \leqslant t \leqslant m^{2}-2$, and $(t, t+1)$, where $m \nmid t$. "
        r"If (writing bars for the norm) $|y|>2$, then $|y^2|>4$. If instead $\angle C=\varphi$, then $\angle D=2 \varphi$. "
        r"For $y^{2}-q y+r=0$, the discriminant is $q^{2}-4 r$. "
        r"For $e \leqslant 3 m-2$ the claim is clear. Let $M=R+7$. Then $M^2=(R+7)^2$. Let $L=y+5$. Let $K \leq S_{4}$ hold the even "
        r"permutations. Suppose Anna names the set $A=\left\{a_{1}, a_{2}, \ldots, a_{r}\right\}$ and Boris the set "
        r"$\left\{c_{1}, \ldots, c_{r}\right\}$. Call a run a string of indices $i_{1}<i_{2}<\ldots<i_{s}$. "
        r"From $(**), g\left(m^{m}\right)=(m+2)^{2}<10^{4}$ we are done. The numbers $2+k q_{j}, k \in \mathbb{Z}$ "
        r"cover every residue, and so do the pairs $(s, t), s \in A, t \in B$, since $q_j \geq 2$.",
        problem=r"Let $R$ be an integer, $y$ a real number and $L$ a line; compute $(y+5)!$.",
    )
    _assert_kinds(got, bookkeeping=("L=y+5", r"j \notin \mathcal{T}", r"r \in\{1,2, \ldots, m-1\}", r"c \leq \sqrt{50}",
                                   r"p>\frac{2}{\varepsilon}", r"u \leq 4, v \leq 3, w \leq 2", r"1 \leqslant t \leqslant m^{2}-2",
                                   r"m \nmid t", "|y|>2",
                                   r"\angle C=\varphi", r"y^{2}-q y+r=0", r"e \leqslant 3 m-2", "M=R+7", r"K \leq S_{4}",
                                   r"A=\left\{a_{1}, a_{2}, \ldots, a_{r}\right\}", r"\left\{c_{1}, \ldots, c_{r}\right\}",
                                   r"i_{1}<i_{2}<\ldots<i_{s}", r"(**), g\left(m^{m}\right)=(m+2)^{2}<10^{4}",
                                   r"2+k q_{j}, k \in \mathbb{Z}", r"(s, t), s \in A, t \in B"),  # fmt: skip
                  maskable=(r"5 \cdot 4 \cdot 3=60", "|y^2|>4", r"\angle D=2 \varphi", r"q^{2}-4 r", "M^2=(R+7)^2", r"q_j \geq 2"))
    # a name the solution already uses, or a long value, stays maskable after `let`: `Let $v=c_1 v_1+\dots$` is a step
    got = _kinds(r"Take $w$ in the span. Let $w=b_1 u_1+b_2 u_2+\cdots+b_k u_k$. Let $Q=\frac{(a+b)^{2}+(a-b)^{2}}{2 a b}$.")
    assert got[r"w=b_1 u_1+b_2 u_2+\cdots+b_k u_k"] is None
    assert got[r"Q=\frac{(a+b)^{2}+(a-b)^{2}}{2 a b}"] == "definition"  # new name: the older rule's definition


def test_round_five_cases_after_displays_wlog_first_values_let_be_coordinates_and_cut_rows():
    got = _kinds(
        r"We have \[t^2 = 2.\]If $t = -\sqrt{2}$, then $t<0$. The base case, $m=1$, is clear. In the case when $P=Q$ and "
        r"$R=S$, take $T=P$. Every integer $y>p q-p-q$ is a sum, as it is for $z \in \lbrace 0, 1, 2, 3\rbrace$. Suppose, without "
        r"loss of generality, that $P Q<P R$. We try values starting with $k=2$: then $2^k=4$. Likewise, for "
        r"$7 q = 14, 21, 28 \Longrightarrow q = 2, 3, 4$, we check each. Let $\overrightarrow{P R}$ be the vector along "
        r"the axis. Let the weights be sorted $w_1 \le w_2 \le w_3$. Let $\mathbf{u} = \begin{pmatrix} s \\ t \end{pmatrix}$. "
        r"The terms from $y_3 \ldots y_9$ vanish, like $b_{1}^{\prime}, b_{2}^{\prime}, \ldots, b_{m}^{\prime}$.",
        problem=r"Find $\mathbf{u}$ and $t$.",
    )
    _assert_kinds(got, bookkeeping=(r"t = -\sqrt{2}", "m=1", "R=S", r"y>p q-p-q", r"z \in \lbrace 0, 1, 2, 3\rbrace", "P Q<P R", "k=2",
                                   r"7 q = 14, 21, 28 \Longrightarrow q = 2, 3, 4", r"\overrightarrow{P R}", r"w_1 \le w_2 \le w_3",
                                   r"\mathbf{u} = \begin{pmatrix} s \\ t \end{pmatrix}", r"y_3 \ldots y_9",
                                   r"b_{1}^{\prime}, b_{2}^{\prime}, \ldots, b_{m}^{\prime}"),  # fmt: skip
                  maskable=("t^2 = 2", "t<0", "2^k=4"))
    assert junk_reason(r"+ 2 p q + q^{2}") == "leading_operator" and junk_reason(r"-p+q=0") is None
    # a value after `when` can be the result, and a formula after `so` is derived, WLOG or not
    got = _kinds(
        r"So $4c^2-9$ is a square only when $c = 7$. Equality occurs when $u = 1$. By symmetry, $\angle A = \angle B$. "
        r"Without loss of generality assume $a = 2$, so $P = (2, 1)$."
    )
    _assert_kinds(got, maskable=("c = 7", "u = 1", r"\angle A = \angle B", "P = (2, 1)"))


def test_round_five_ranges_after_quantified_clauses_names_by_such_that_and_figures_glued_to_formulas():
    got = _kinds(
        r"So $q=\sum_{i} 3^{e_i}$ for some integers $r \geq 1$ and $0 \leq e_{1}<\cdots<e_{r} \leq N-1$. We prove it by "
        r"induction on $m \geqslant 4$. The case $m=7$ is shown and the argument is analogous for $m=\frac{5}{3}$. "
        r"Let $j$ be such that $m+j=3^{t}$. Put $s=\sin \varphi$, where $\varphi$ is the angle such that $\tan \varphi = \frac{3}{4}$. "
        r"Write $$g^{m} \stackrel{\text { def }}{=} g \circ \cdots \circ g .$$ In triangle $K L M, K L^{2}=K N \cdot K M$ "
        r"holds, and $L P \perp K M, K K^{\prime}$ is a chord. We $\operatorname{get} \operatorname{lcm}(u, v)=12$. "
        r"Hence $d \mid u$ for all $t \in\{1, \ldots, m\} \backslash\{j\}$, since $j^2 = 9$.",
    )
    _assert_kinds(got, bookkeeping=(r"0 \leq e_{1}<\cdots<e_{r} \leq N-1", r"m \geqslant 4", r"m=\frac{5}{3}", r"m+j=3^{t}",
                                   r"\tan \varphi = \frac{3}{4}", r"g^{m} \stackrel{\text { def }}{=} g \circ \cdots \circ g",
                                   r"K L M, K L^{2}=K N \cdot K M", r"L P \perp K M, K K^{\prime}",
                                   r"\operatorname{get} \operatorname{lcm}(u, v)=12",
                                   r"t \in\{1, \ldots, m\} \backslash\{j\}"),  # fmt: skip
                  maskable=(r"q=\sum_{i} 3^{e_i}", r"d \mid u", "j^2 = 9"))


def test_round_six_values_taken_a_value_after_the_claim_points_named_and_quantities_set_up():
    got = _kinds(
        r"Therefore, taking $n=2$ and $n=3$, we get $7 s = 16$. Thus, taking $n=4$, we get $s_5 = 42$. This has $8$ "
        r"factors when $m=1$. In the case when $P=Q$, choose $X=B^{\prime}$. Consider the sum $y = \cos 0^\circ + "
        r"\cos 8^\circ + \dots + \cos 352^\circ$. Then $y^2 = 4$, and the sum is minimized when $t = 3$.",
        problem=r"Find $X$ and $y$.",
    )
    _assert_kinds(got, bookkeeping=("n=2", "n=3", "n=4", "m=1", r"X=B^{\prime}",
                                   r"y = \cos 0^\circ + \cos 8^\circ + \dots + \cos 352^\circ"),
                  maskable=("7 s = 16", "s_5 = 42", "y^2 = 4", "t = 3"))


def test_round_eight_value_runs_symmetry_assumptions_sign_charts_and_generic_forms_are_bookkeeping():
    got = _kinds(
        r"The poles are at $t = 1,$ $t = 2,$ $\dots,$ $t = 50.$ We try small values: $k = 2$, $k=3$, and $k=5$ all fail. "
        r"By symmetry, we assume that $PQ>PR$. Swapping the roles, we may assume $u_1<u_2$. For every point $Z \neq O$ "
        r"the claim holds. Recall that the roots of a quadratic $ax^2+bx+c=0$ have sum $-\frac{b}{a}$. "
        r"The chart: \begin{tabular}{c|cc} &$t-1$ &$g(t)$ \\ \hline$t<1$ &$-$&$+$\\ $t>1$ &$+$&$-$\\ \end{tabular} "
        r"So the roots are $w = 4$, $w = 6$, and $w = 9$, and we get a quadratic $s^2 - ps + q = 0$ in $s$."
    )
    _assert_kinds(got, bookkeeping=("t = 1", "t = 2", "t = 50", "k = 2", "k=3", "k=5", "PQ>PR", "u_1<u_2", r"Z \neq O",
                                   "ax^2+bx+c=0", "t<1", "t>1"),
                  maskable=("w = 4", "w = 6", "w = 9", "s^2 - ps + q = 0"))


def test_round_fourteen_choices_granted_conditions_intervals_examined_and_set_conditions_are_bookkeeping():
    got = _kinds(
        r"So $c$ must be either 2 or -2, and we may choose either $c=2$ or $c=-2$. We choose $c=2$. As long as $x\neq1$ "
        r"we may cancel $x-1$. Similarly, in the interval $\pi \le \theta \le \frac{3 \pi}{2},$ the sine decreases. "
        r"Some root of unity lies in the interval $15^\circ \le \phi \le 30^\circ$. Let $\mathcal{A}$ be the set of points "
        r"of the triangle such that $u \ge \frac{1}{2}$ and $w \ge \frac{1}{3}.$ Then $r^2 = 4r - 3$, so $r = 3$. "
        r"In this case we may choose $m=5$ but not $m=6$.",
        problem=r"Find the largest $m$.",
    )
    _assert_kinds(got, bookkeeping=("c=2", r"x\neq1", r"\pi \le \theta \le \frac{3 \pi}{2}", r"u \ge \frac{1}{2}",
                                   r"w \ge \frac{1}{3}"),
                  maskable=(r"15^\circ \le \phi \le 30^\circ", "r^2 = 4r - 3", "r = 3", "m=5"))


def test_a_value_run_after_a_long_formula_is_still_counted_off():
    """The run is read in a window around the formula; a window that opens inside the long span before it must not
    pair that span's closing dollar with the run's first opening one."""
    long = " + ".join(rf"\frac{{c_{{{k}}}}}{{t - {k}}}" for k in range(1, 13))
    got = _kinds(rf"Write $h(t) = {long}$, so the poles are at $t = 1,$ $t = 2,$ $\dots,$ $t = 12.$ Hence $h(0) = 7$.")
    _assert_kinds(got, bookkeeping=("t = 1", "t = 2", "t = 12"), maskable=("h(0) = 7",))


def test_garbled_bars_leading_stacked_relations_and_counted_label_sets_are_not_maskable():
    assert junk_reason(r"g(a-b)|| g(a)-g(b) \mid=g(b)-g(a)>0") == "garbled_markup"  # `\mid` closing an absolute value
    assert junk_reason(r"q \mid n^{2}+1") is None  # a divisibility
    assert junk_reason(r"\mid X \cup Y \mid = \mid X \mid + \mid Y \mid") is None  # bars written `\mid` only: readable
    assert junk_reason(r"\stackrel{(2)}{=} h(7) \stackrel{(1)}{=} h(3)") == "leading_relation"
    assert junk_reason(r"\left\{1,2, \ldots, m\right\}") == "index_range"
    assert junk_reason(r"B_{j}=\{z_{j}, \ldots, z_{j+r}\}, j=1,2, \ldots, r+s") == "index_range"
    assert junk_reason(r"S=\{1,2,\ldots,m\}") is None


def test_formulas_after_a_bookkeeping_word_are_offered_after_the_others():
    """Two equally strong relations: the later one would rank first, but an `if` shortly before it (a bookkeeping
    cue) sends it after the one stated plainly; the derived `n = 5` stays on top."""
    sol = r"We note $m = r^2 + 4r + 2$ here. If needed, we note $q = r^2 + 4r + 1$ here. Hence $n = 5$."
    assert texts(sol) == ["n = 5", "m = r^2 + 4r + 2", "q = r^2 + 4r + 1"]
