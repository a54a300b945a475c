"""The reference-answer invariant: every built row's reference answer earns exactly 1.0 from its own
reward; formula spans any annotator returns are repaired mechanically first (issue 8, item 1)."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace

import pytest

from mrtasks.curate.base import Annotator, Drop
from mrtasks.curate.heuristic import HeuristicAnnotator, split_steps
from mrtasks.curate.integrity import (
    REFERENCE_BELOW_FULL_SCORE,
    check_references,
    reads_back,
    reference_scores,
    repair_span,
    repair_trajectory,
)
from mrtasks.curate.pipeline import PipelineConfig, run_pipeline
from mrtasks.tasks import MASKED_THEN_FILL, get_task, list_tasks, make_masked_then_fill
from mrtasks.trajectory import Formula, Trajectory


def span(solution: str, text: str) -> Formula:
    start = solution.index(text)
    return Formula(text, start, start + len(text))


@pytest.mark.parametrize(
    "math, repaired, done",
    [
        ("\\boxed{x = 7}", "x = 7", ["boxed_wrapper_stripped"]),  # the reward would read the inner box
        ("\\fbox{\\frac{1}{2}}", "\\frac{1}{2}", ["boxed_wrapper_stripped"]),
        ("a^2 + b^2 = c^2 \\tag{1}", "a^2 + b^2 = c^2", ["tag_stripped"]),
        ("x = 5.", "x = 5", ["punctuation_trimmed"]),
        ("\\boxed{y = 2},", "y = 2", ["punctuation_trimmed", "boxed_wrapper_stripped"]),
        ("f(x) = x\\; (x > 0)", "f(x) = x\\; (x > 0)", []),  # `\;` is spacing, not the separator
        ("  n = 3  ", "n = 3", []),
        # a chain that ends in the answer box (as an LLM annotator lists it) keeps the relation before the box
        ("A + B = 4 + 3 = \\boxed{7}", "A + B = 4 + 3", ["box_tail_trimmed"]),
        ("10a+b = 10(2)+1 = \\boxed{21}.", "10a+b = 10(2)+1", ["box_tail_trimmed"]),
        ("S \\equiv 3 \\cdot 4 \\equiv \\boxed{2}", "S \\equiv 3 \\cdot 4", ["box_tail_trimmed"]),
        ("\\frac{q}{p} = \\frac{1440}{10} = \\fbox{144}", "\\frac{q}{p} = \\frac{1440}{10}", ["box_tail_trimmed"]),
        # a continuation row (alignment residue) keeps its result, as the heuristic offers it; a whole row stays
        ("&= (a + b)^2 - 2ab", "(a + b)^2 - 2ab", ["continuation_row_cut"]),
        ("& \\le 2 \\sqrt{xy}", "2 \\sqrt{xy}", ["continuation_row_cut"]),
        ("\\geq \\frac{(a+b)^2}{2}", "\\frac{(a+b)^2}{2}", ["continuation_row_cut"]),
        ("a^2 + b^2 &= (a + b)^2 - 2ab", "a^2 + b^2 &= (a + b)^2 - 2ab", []),
    ],
)
def test_repair_narrows_a_span_to_what_can_be_masked(math, repaired, done):
    solution = f"First, ${math}$ holds."
    fixed, what = repair_span(solution, span(solution, math))
    assert fixed is not None and fixed.text == repaired and what == done
    assert solution[fixed.start : fixed.end] == fixed.text  # still a verbatim span


@pytest.mark.parametrize(
    "math, reason",
    [
        ("a = 1; b = 2", "removed_top_level_semicolon"),  # the paper's answer separator
        ("x = \\boxed{5}", "removed_box_or_tag_inside"),
        # a box that does not end a chain of relations (`integrity._box_tail`) still removes the formula
        ("m + M = \\boxed{84}", "removed_box_or_tag_inside"),  # nothing but a name before the box
        ("a=60, b=750, a+b=\\boxed{810}", "removed_box_or_tag_inside"),  # a list of values, not a chain
        ("\\frac{12}{r} = 5, \\text{ so } r = \\boxed{2}", "removed_box_or_tag_inside"),  # prose inside the math
        ("x &= 2 + 3 \\\\ &= \\boxed{5}", "removed_box_or_tag_inside"),  # alignment rows
        ("S \\equiv \\boxed{42} \\pmod{1000}", "removed_box_or_tag_inside"),  # the box does not close the formula
        ("a = \\boxed{1} + b = \\boxed{2}", "removed_box_or_tag_inside"),  # a second box stays
        ("x = 1 \\tag{2} + y", "removed_box_or_tag_inside"),
        ("T = \\left\\{ t \\mid t > 0 \\right", "removed_unbalanced_delimiters"),
        ("\\frac{1}{2", "removed_unbalanced_delimiters"),
        ("<|im_end|>", "removed_box_or_tag_inside"),
        ("\\boxed{}", "removed_empty"),
        ("&= 10", "removed_alignment_residue"),  # what the row gives is a lone number: no key formula
    ],
)
def test_unmaskable_spans_are_removed(math, reason):
    solution = f"Then ${math}$."
    fixed, what = repair_span(solution, span(solution, math))
    assert fixed is None and what[-1] == reason


def test_a_trimmed_chain_is_masked_beside_the_answer_box_and_its_reference_earns_full_credit():
    solution = "Here $a = 1$, $b = 2$, $c = 3$, $d = 4$, $e = 5$, $f = 6$, and $x = 3 + 4 = \\boxed{7}$."
    maths = ["x = 3 + 4 = \\boxed{7}", "a = 1", "b = 2", "c = 3", "d = 4", "e = 5", "f = 6"]
    row = make_masked_then_fill(repair_trajectory(trajectory(solution, maths)), seed=0)
    assert row["masks"][-2:] == ["x = 3 + 4", "7"]  # the chain, then the box Masked-Then-Fill masks itself
    assert "\\boxed{7}" not in row["masked_solution"]
    assert reference_scores(MASKED_THEN_FILL, [row]) == [1.0]


def test_reads_back_is_the_round_trip_through_the_answer_format():
    assert reads_back("x^2 + 1 = 0") and reads_back("\\{1, 2\\}") and reads_back("[0, 1)")
    assert not reads_back("a; b") and not reads_back("\\left\\{ x \\right") and not reads_back("x = \\boxed{1}")


def trajectory(solution: str, maths: list[str]) -> Trajectory:
    return Trajectory(
        id="unit/1", source="unit", kind="computation", problem="Find x.", solution=solution,
        answer="7", formulas=[span(solution, m) for m in maths], steps=["a", "b", "c"],
    )  # fmt: skip


def test_repair_trajectory_keeps_order_and_the_span_invariant():
    solution = "We get $\\boxed{x = 7}$, then $a = 1; b = 2$, and $y = 3.$ and $z=4 \\tag{3}$."
    traj = trajectory(solution, ["\\boxed{x = 7}", "a = 1; b = 2", "y = 3.", "z=4 \\tag{3}"])
    counts: Counter[str] = Counter()
    fixed = repair_trajectory(traj, counts)
    assert [f.text for f in fixed.formulas] == ["x = 7", "y = 3", "z=4"]
    assert all(solution[f.start : f.end] == f.text for f in fixed.formulas)
    assert counts == Counter(boxed_wrapper_stripped=1, removed_top_level_semicolon=1, punctuation_trimmed=1,
                             tag_stripped=1)  # fmt: skip
    assert repair_trajectory(fixed) is fixed  # nothing left to repair


def test_check_references_drops_and_counts_a_row_its_reward_cannot_give_full_credit():
    solution = "Here $a = 1$, $b = 2$, $c = 3$, $d = 4$, $e = 5$, $f = 6$, $x = \\boxed{7}$."
    maths = ["a = 1", "b = 2", "c = 3", "d = 4", "e = 5", "f = 6", "x = \\boxed{7}"]
    bad = make_masked_then_fill(trajectory(solution, maths), seed=0)
    good = make_masked_then_fill(trajectory(solution.replace("\\boxed{7}", "7"), [*maths[:6], "x = 7"]), seed=0)
    # the reward reads the innermost box of `\\boxed{a = 1; ...; x = \\boxed{7}}`: one fill, "7"
    assert reference_scores(MASKED_THEN_FILL, [bad, good]) == [0.0, 1.0]
    drops: Counter[tuple[str, str]] = Counter()
    kept = check_references({MASKED_THEN_FILL: [bad, good]}, drops)
    assert kept == {MASKED_THEN_FILL: [good]}
    assert drops == Counter({(MASKED_THEN_FILL, REFERENCE_BELOW_FULL_SCORE): 1})


# --- the invariant on whole builds ----------------------------------------------------------------


class VerbatimMathAnnotator(Annotator):
    """Marks the full content of every math span as a formula, wrappers and punctuation included
    (what an LLM that copies formulas verbatim returns), with the heuristic's steps."""

    name = "verbatim-math"
    MATH = re.compile(r"\$\$(.+?)\$\$|\\\[(.+?)\\\]|\$(.+?)\$", re.S)

    def annotate(self, trajectories: list[Trajectory]) -> list[Trajectory | Drop]:
        out: list[Trajectory | Drop] = []
        for t in trajectories:
            formulas = []
            for m in self.MATH.finditer(t.solution):
                group = next(g for g in range(1, 4) if m.group(g) is not None)
                if m.group(group).strip():
                    formulas.append(Formula(m.group(group), m.start(group), m.end(group)))
            out.append(replace(t, formulas=formulas, steps=split_steps(t.solution)))
        return out


def assert_invariant(result) -> int:
    """Every row of every task config earns exactly 1.0 with its own reference answer, and none had
    to be dropped for it (the pipeline's `check_references` drops such rows, so the rows left would
    pass by construction: the drop count is what shows that repair alone keeps the invariant)."""
    dropped = {task: n for (task, reason), n in result.drops.items() if reason == REFERENCE_BELOW_FULL_SCORE}
    assert not dropped, dropped
    checked = 0
    for task in list_tasks():
        for split, rows in result.rows[task].items():
            scores = reference_scores(task, rows)
            below = [(r["id"], s) for r, s in zip(rows, scores) if s != 1.0]
            assert not below, f"{task}/{split}: {below[:5]}"
            checked += len(rows)
    return checked


def test_invariant_on_the_bundled_sample_with_a_verbatim_annotator():
    result = run_pipeline(PipelineConfig(sources=["sample"], progress=False), VerbatimMathAnnotator())
    assert result.counts()[MASKED_THEN_FILL]["train"] > 10
    assert assert_invariant(result) > 50
    # the sample's boxed final answers were repaired (kept as masks), not dropped
    masks = [m for r in result.rows[MASKED_THEN_FILL]["train"] for m in r["masks"]]
    assert not any("\\boxed" in m for m in masks)
    assert (MASKED_THEN_FILL, REFERENCE_BELOW_FULL_SCORE) not in result.drops


def test_invariant_on_a_subset_of_the_shared_corpora(shared_data):
    config = PipelineConfig(sources=[f"corpora:{shared_data / 'corpora'}:limit=80"], progress=False)
    for annotator in (HeuristicAnnotator(), VerbatimMathAnnotator()):
        result = run_pipeline(config, annotator)
        assert result.counts()[MASKED_THEN_FILL]["train"] > 0, annotator.name
        assert assert_invariant(result) > 200, annotator.name


@pytest.mark.slow
def test_invariant_on_every_row_of_every_config_of_the_shared_corpora(shared_data):
    config = PipelineConfig(sources=[f"corpora:{shared_data / 'corpora'}"], progress=False)
    result = run_pipeline(config, HeuristicAnnotator())
    assert set(get_task(t).name for t in list_tasks()) <= set(result.rows)
    assert assert_invariant(result) > 5000
