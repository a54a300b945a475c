"""The heuristic annotator: formulas from LaTeX math spans, steps from the text's layout."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from mrtasks.curate.base import Drop
from mrtasks.curate.heuristic import HeuristicAnnotator, HeuristicConfig, extract_formulas, split_steps
from mrtasks.curate.sources import expand_specs, iter_source, parse_source
from mrtasks.trajectory import Trajectory


def texts(solution: str, **kw) -> list[str]:
    return [f.text for f in extract_formulas(solution, HeuristicConfig(**kw))]


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
    sol = r"Consider $\frac{a}{b} + c$ and later $p = q + r$."
    assert texts(sol) == ["p = q + r", r"\frac{a}{b} + c"]


def test_gsm8k_style_plain_arithmetic_counts_as_formulas():
    sol = "Natalia sold 48/2 = 24 clips in May.\nShe sold 48+24 = 72 clips in all, about $72 worth."
    assert texts(sol) == ["48+24 = 72", "48/2 = 24"]
    assert texts(sol, plain_equations=False) == []


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
    sol = "First we note that $a>0$ holds here.\n\nThen\n\n$$\n\na^2 > 0\n\n$$\n\nso that the claim follows.\n\nFinally we conclude the proof."
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
        assert squash("".join(t.steps)) == squash(t.solution)
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


@settings(max_examples=150, deadline=None)
@given(st.lists(st.sampled_from(list("ab =+1$\\[]()\n{}.Tx") + ["\\begin{align}", "\\end{align}", "\\\\", "[asy]"]), max_size=80).map("".join))
def test_any_text_gives_verbatim_formulas_and_covering_steps(sol):
    for f in extract_formulas(sol):
        assert sol[f.start : f.end] == f.text
    assert squash("".join(split_steps(sol))) == squash(sol)
