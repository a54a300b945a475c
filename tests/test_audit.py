"""The reward-hacking audit (issue 8, item 5): each degenerate policy is a named case, scored with
the task's real reward; `python -m mrtasks.rewards.audit` on a real build folder."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mrtasks.build import main as build_main
from mrtasks.rewards import audit
from mrtasks.rewards.audit import (
    AuditResult,
    audit_rows,
    change_one_number,
    equivalent_rewrite,
    markdown_table,
    problem_formulas,
    run_audit,
    wrong_answer,
)
from mrtasks.tasks import MASKED_THEN_FILL, OUTCOME, STEP_REORDERING, list_tasks

# --- the policies, by example ------------------------------------------------------------------


@pytest.mark.parametrize(
    "formula, rewritten",
    [
        ("x^2-3x-3=0", "0 = -3x - 3 + x^2"),  # sides swapped, terms reordered
        ("x \\leq 5", "5 \\geq x"),  # an inequality mirrored
        ("(n-1)^{2}<n^{2}-n+1<n^{2}", "n^{2} > -n + 1 + n^{2} > (n-1)^{2}"),  # a chain, reversed
        ("\\frac{1}{2} + x", "x + \\dfrac{1}{2}"),
        ("0 & =(x-3)(x-6)", "(x-3)(x-6) = 0"),  # alignment dropped
        ("a=12, b=54", "a=12, b=54".replace(" ", "  ")),  # a list is not a chain: only re-spaced
        ("Pythagorean theorem", "Pythagorean  theorem"),
    ],
)
def test_equivalent_rewrite(formula, rewritten):
    assert equivalent_rewrite(formula) == rewritten


def test_change_one_number_and_wrong_answer():
    assert change_one_number("x^2 = 4") == "x^3 = 4"
    assert change_one_number("x^2 = 4", last=True) == "x^2 = 5"
    assert change_one_number("r = 2.5") == "r = 2.6"
    assert change_one_number("a + b") == "y + b"  # no number: a variable renamed
    assert change_one_number("induction") == "jnduction"  # prose: a letter changed
    assert wrong_answer("N = n") == "N = n + 1"  # a renamed letter would be the same final answer
    assert wrong_answer("(C)") == "B" and wrong_answer("\\frac{1}{2}") == "\\frac{1}{3}"


def test_problem_formulas_fall_back_to_numbers():
    assert problem_formulas("Solve $x^2 = 4$ and \\(y > 0\\).") == ["x^2 = 4", "y > 0"]
    assert problem_formulas("Tom has 3 apples and buys 12 more.") == ["3", "12"]


MASKS = ["x^{2}-3x-3=0", "\\Delta = 21", "x_1 = \\frac{3 + \\sqrt{21}}{2}", "x_1 x_2 = -3"]
MTF_ROW = {
    "id": "unit/quadratic", "task": MASKED_THEN_FILL, "problem": "Find the roots of $p(x) = x^2 - 3x - 3$.",
    "masks": MASKS, "scored": [0, 1, 2, 3],
}  # fmt: skip


def mtf(policy: str) -> float:
    (result,) = [r for r in audit_rows(MASKED_THEN_FILL, [MTF_ROW]) if r.policy == policy]
    return result.mean


@pytest.mark.parametrize(
    "policy, low, high",
    [
        ("reference", 1.0, 1.0),
        ("equivalent_rewrites", 1.0, 1.0),  # right work in another form is right
        ("one_number_changed", 0.0, 0.0),  # looks right, is wrong
        ("rotated", 0.0, 0.0),  # right formulas, wrong slots
        ("copied_from_problem", 0.0, 0.1),
        ("constant", 0.0, 0.0),
        ("no_box", 0.0, 0.0),
    ],
)
def test_masked_then_fill_policies(policy, low, high):
    assert low <= mtf(policy) <= high


STEPS_ROW = {
    "id": "unit/steps", "task": STEP_REORDERING, "problem": "p",
    "shuffled_steps": ["Thus the answer is $\\boxed{4}$.", "Let $x = 2$.", "Then $x^2 = 4$."],
    "order": [1, 2, 0],
}  # fmt: skip


def test_step_reordering_policies_measure_the_task():
    results = {r.policy: r.mean for r in audit_rows(STEP_REORDERING, [STEPS_ROW])}
    assert results["reference"] == 1.0
    assert results["as_shown"] == 0.0 and results["reversed"] == pytest.approx(1 / 3, abs=1e-3)
    assert results["surface_cues"] == 1.0  # "let" first, "thus ... boxed" last: this row is easy
    assert audit.order_random(STEPS_ROW) == audit.order_random(STEPS_ROW)  # seeded per row


OUTCOME_ROW = {"id": "unit/o", "task": OUTCOME, "problem": "What is 2+2?", "answer": "4"}


@pytest.mark.parametrize(
    "policy, completion_part",
    [
        ("truncated_think", "\\boxed{4}. Wait"),  # the box sits in unfinished reasoning
        ("invented_turn", "<|im_end|>"),  # the right box comes after the turn ended
        ("several_boxes", "\\boxed{4} or \\boxed{5}"),  # hedging, the right one not last
    ],
)
def test_outcome_policies_earn_nothing(policy, completion_part):
    (p,) = [p for p in audit.POLICIES[OUTCOME] if p.name == policy]
    assert completion_part in p.answer(OUTCOME_ROW)
    (result,) = [r for r in audit_rows(OUTCOME, [OUTCOME_ROW]) if r.policy == policy]
    assert result.mean == 0.0 and result.passed is True


def test_a_target_can_fail():
    """The audit is a check, not a report card: the paper's literal Masked-Then-Fill reward
    fails the one-number-changed target."""
    literal = [audit.Policy(p.name, p.description, p.answer, {"partial_credit": "all"}, p.target)
               for p in audit.POLICIES[MASKED_THEN_FILL]]  # fmt: skip
    rows = [dict(MTF_ROW, id=f"unit/{k}") for k in range(3)]
    original = audit.POLICIES[MASKED_THEN_FILL]
    audit.POLICIES[MASKED_THEN_FILL] = literal
    try:
        results = {r.policy: r for r in audit_rows(MASKED_THEN_FILL, rows)}
    finally:
        audit.POLICIES[MASKED_THEN_FILL] = original
    assert results["one_number_changed"].mean > 0.5 and results["one_number_changed"].passed is False
    assert results["reference"].passed is True


# --- on a real build folder --------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample_build(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sample_build")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("HF_DATASETS_OFFLINE", "1")
        assert build_main(["--out", str(out), "--no-progress"]) == 0
    return out


def test_audit_cli_on_the_bundled_sample_build(sample_build, tmp_path, capsys):
    assert audit.main(["--dataset", str(sample_build), "--out", str(tmp_path)]) == 0  # every target met
    printed = capsys.readouterr().out
    assert "one_number_changed" in printed and "FAILED" not in printed
    report = json.loads((tmp_path / "audit.json").read_text())
    tasks = {r["task"] for r in report["results"]}
    assert tasks == set(list_tasks())  # every task config of the build
    by = {(r["task"], r["policy"]): r for r in report["results"]}
    assert all(by[(t, "reference")]["min"] == 1.0 for t in tasks)
    assert by[(MASKED_THEN_FILL, "equivalent_rewrites")]["mean"] >= 0.95
    assert by[(MASKED_THEN_FILL, "one_number_changed")]["mean"] <= 0.15
    assert (tmp_path / "audit.png").read_bytes()[:4] == b"\x89PNG"


def test_markdown_table_for_the_card(sample_build):
    results = run_audit(sample_build, tasks=[OUTCOME])
    table = markdown_table(results)
    assert table.splitlines()[0].startswith("| task | policy |")
    assert "| outcome | truncated_think |" in table and "**NO**" not in table


def test_audit_cli_rejects_what_is_not_a_build_in_one_line(tmp_path, capsys, sample_build):
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.md").write_text("mine")
    cases = [
        (["--dataset", str(tmp_path / "nope")], 2, "no such folder"),
        (["--dataset", str(tmp_path / "mine")], 2, "is not a build of `python -m mrtasks.build`"),
        (["--dataset", str(sample_build), "--task", "mask_fil"], 2, "unknown task(s) ['mask_fil']"),
        (["--dataset", str(sample_build), "--split", "tets"], 2, "has no split 'tets'"),
        (["--dataset", str(sample_build), "--task", "outcome", "--out", str(sample_build / "README.md")], 4,
         "exists and is not a folder"),
    ]
    for argv, code, words in cases:
        assert audit.main(argv) == code, argv
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: ") and words in err[0], (argv, err)


def test_results_are_plain_data():
    r = AuditResult("t", "p", "d", rows=2, mean=0.5, min=0.0, full=0.5, unscored=0)
    assert json.loads(json.dumps(r.__dict__))["mean"] == 0.5


def test_the_dataset_card_carries_the_audit_table(sample_build):
    card = (sample_build / "README.md").read_text()
    section = card.split("## How hard is it to game these rewards?")[1].split("\n## ")[0]
    assert "python -m mrtasks.rewards.audit --dataset DIR" in section
    assert "| masked_then_fill | one_number_changed |" in section and "**NO**" not in section
    assert all(f"| {task} | reference |" in section for task in list_tasks())
