"""Grading with the `outcome` reward on the shared benchmarks' own answers.

A tiny random model never answers right, so correctness is checked here on completions
built from the reference answers, in the spellings real models use.
"""

import json

import pytest

from eval.benchmarks import load_benchmarks
from eval.grading import extract_prediction, grade, grader_info, is_correct


@pytest.fixture(scope="module")
def bench(shared_data):
    return {b.name: b for b in load_benchmarks(["aime24", "aime25", "amc23", "math500"], shared_data / "benchmarks")}


@pytest.mark.parametrize("name", ["aime24", "aime25", "amc23"])
def test_boxed_reference_answers_are_correct_and_others_are_not(bench, name):
    for p in bench[name].problems:
        right = rf"<think>Work.</think> The answer is $\boxed{{{p.answer}}}$."
        wrong = rf"\boxed{{{int(p.answer) + 1}}}"
        assert grade([right, wrong, "no boxed answer at all"], p.answer) == [1.0, 0.0, 0.0], p.id


def test_number_spellings(bench):
    aime24 = {p.answer for p in bench["aime24"].problems}
    assert "025" in aime24
    assert grade([r"\boxed{25}", r"\boxed{025}", r"\boxed{25.0}", r"\boxed{250}"], "025") == [1.0, 1.0, 1.0, 0.0]
    amc_raw = json.loads('{"answer": 27.0}')["answer"]  # AMC23's original float answers
    assert grade([r"\boxed{27}", r"\boxed{27.0}", r"\boxed{28}"], str(int(amc_raw))) == [1.0, 1.0, 0.0]


def test_math500_latex_answers(bench):
    answers = {p.id: p.answer for p in bench["math500"].problems}
    polar = answers["test/precalculus/807.json"]  # \left( 3, \frac{\pi}{2} \right)
    assert grade([rf"\boxed{{{polar}}}", r"\boxed{(3, \pi/2)}", r"\boxed{(3, \pi)}"], polar) == [1.0, 1.0, 0.0]
    assert grade([r"\boxed{\dfrac{1}{2}}", r"\boxed{0.5}", r"\boxed{\frac{2}{4}}", r"\boxed{1/3}"], r"\frac{1}{2}") == [
        1.0, 1.0, 1.0, 0.0]


def test_every_math500_reference_solution_grades_correct(shared_data, bench):
    """The reference solutions end in `\\boxed{answer}`: graded as completions, all 500 are right."""
    rows = [json.loads(line) for line in (shared_data / "benchmarks" / "math500.jsonl").read_text().splitlines()]
    rewards = [grade([row["solution"]], row["answer"])[0] for row in rows]
    wrong = [row["id"] for row, r in zip(rows, rewards) if r != 1.0]
    assert wrong == []


def test_prediction_and_grader_record():
    assert extract_prediction(r"<think>maybe \boxed{3}</think> so \boxed{\frac{1}{2}}") == r"\frac{1}{2}"
    assert extract_prediction("no answer") is None
    assert is_correct(1.0) and not is_correct(0.0)
    info = grader_info()
    assert info["reward"] == "mrtasks.rewards:outcome" and info["mathruler"] and info["mrtasks"]
