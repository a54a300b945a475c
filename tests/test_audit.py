"""The reward-hacking audit (issue 8, item 5): each degenerate policy is a named case, scored with
the task's real reward; `python -m mrtasks.rewards.audit` on a real build folder."""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pyarrow as pa
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
from mrtasks.tasks import ERROR_CORRECTION, MASKED_THEN_FILL, OUTCOME, STEP_REORDERING, list_tasks

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
    assert wrong_answer("(C)") == "(B)" and wrong_answer("\\frac{1}{2}") == "\\frac{1}{3}"
    assert wrong_answer("\\text{(C)}") == "\\text{(B)}"  # wrapped alike, never `\text{(C)} + 1`


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


# --- the integrity families (issue 17) ------------------------------------------------------------


def policy(task: str, name: str) -> audit.Policy:
    return next(p for p in audit.POLICIES[task] if p.name == name)


def test_decorations_are_drawn_per_row_and_reproducible():
    rows = [dict(MTF_ROW, id=f"unit/{k}") for k in range(12)]
    for name in ("decorated_wrong:marker", "decorated_right:styling", "decorated_right:trailing"):
        p = policy(MASKED_THEN_FILL, name)
        answers = [p.answer(r) for r in rows]
        assert answers == [p.answer(r) for r in rows]  # seeded by (policy, row, position)
        assert len(set(answers)) >= 6  # not one fixed string: variants drawn across rows
        assert all(a != audit.reference(r) for a, r in zip(answers, rows))
    wrong = policy(MASKED_THEN_FILL, "decorated_wrong:connective").answer(MTF_ROW)
    assert "x^{3}-3x-3=0" in wrong or "x^{2}-4x-3=0" in wrong or "x^{3}" in wrong  # one number changed, then decorated


def test_unicode_minus_applies_only_where_there_is_a_minus():
    p = policy(MASKED_THEN_FILL, "decorated_right:unicode_minus")
    assert p.applies(MTF_ROW) == [MTF_ROW] and "\u2212" in p.answer(MTF_ROW)
    no_minus = dict(MTF_ROW, masks=["x = 2", "y = 3"], scored=[0, 1])
    assert p.applies(no_minus) == []
    wrong = policy(MASKED_THEN_FILL, "decorated_wrong:unicode_minus")
    mixed = dict(MTF_ROW, masks=["x - 1 = 2", "y = 3"], scored=[0, 1])
    assert wrong.answer(mixed) == "\\boxed{x \u2212 2 = 2; y = 4}"  # undecorated wrong work where no minus: never the mask


def test_near_misses_are_scored_per_edited_position():
    p = policy(MASKED_THEN_FILL, "near_miss:sign")
    (row,) = p.applies(MTF_ROW)  # one position per row, drawn with the row's generator
    (k,) = row["scored"]
    assert k in (0, 2)  # the masks with a binary sign
    fills = p.answer(row)[len("\\boxed{") : -1].split("; ")
    assert fills[k] != MASKS[k] and [f for j, f in enumerate(fills) if j != k] == [m for j, m in enumerate(MASKS) if j != k]
    prose = dict(MTF_ROW, masks=["well-ordering principle"], scored=[0])
    assert p.applies(prose) == []  # a hyphen in prose is no sign
    assert p.applies(dict(MTF_ROW, masks=["36 = 3 \\cdot 12 + 0"], scored=[0])) == []  # `- 0` is the same formula


def test_braces_policies_keep_the_same_latex():
    removed, added = policy(MASKED_THEN_FILL, "braces_removed"), policy(MASKED_THEN_FILL, "braces_added")
    braced = dict(MTF_ROW, masks=["a_{1} + a_{2} = 5"], scored=[0])
    assert removed.answer(braced) == "\\boxed{a_1 + a_2 = 5}" and added.applies(braced) == []
    assert added.answer(dict(MTF_ROW, masks=["x_1 x_2 = -3"], scored=[0])) == "\\boxed{x_{1} x_{2} = -3}"


def test_not_above_holds_a_policy_to_another_on_the_same_rows():
    """A policy earning more than the one it must not exceed fails, whatever its own bound."""
    cheat = audit.Policy("cheat", "the reference", audit.reference, target=("<=", 1.0), not_above="constant")
    original = audit.POLICIES[MASKED_THEN_FILL]
    audit.POLICIES[MASKED_THEN_FILL] = [*original, cheat]
    try:
        results = {r.policy: r for r in audit_rows(MASKED_THEN_FILL, [MTF_ROW])}
    finally:
        audit.POLICIES[MASKED_THEN_FILL] = original
    assert results["cheat"].mean == 1.0 and results["cheat"].passed is False
    assert results["cheat"].target == "mean <= 1 and <= constant (0.000)"
    nothing = audit.Policy("nothing", "applies nowhere", audit.reference, target=(">=", 1.0), applies=lambda row: [])
    audit.POLICIES[MASKED_THEN_FILL] = [nothing]
    try:
        (result,) = audit_rows(MASKED_THEN_FILL, [MTF_ROW])
    finally:
        audit.POLICIES[MASKED_THEN_FILL] = original
    assert result.rows == 0 and result.passed is None  # no rows: reported, neither met nor missed


def test_the_card_scores_integrity_families_on_a_smaller_seeded_sample():
    """`family_rows`: every family on the first N rows it applies to (one seeded order per task),
    the other policies on every row; not_above compares on the family's own rows; the audit CLI's
    `audit_rows` default scores everything."""
    rows = [dict(MTF_ROW, id=f"unit/{k}") for k in range(6)]
    full = {r.policy: r for r in audit_rows(MASKED_THEN_FILL, rows)}
    sampled = {r.policy: r for r in audit_rows(MASKED_THEN_FILL, rows, family_rows=2)}
    again = {r.policy: r for r in audit_rows(MASKED_THEN_FILL, rows, family_rows=2)}
    families = {p.name for p in audit.POLICIES[MASKED_THEN_FILL] if p.family}
    assert {"decorated_wrong:marker", "near_miss:sign", "braces_removed"} <= families
    assert "one_number_changed" not in families and "reference" not in families
    for name, result in sampled.items():
        assert result.rows == (min(2, full[name].rows) if name in families else full[name].rows), name
    assert sampled == again  # seeded
    assert sampled["decorated_wrong:marker"].target.startswith("mean <= 0.1 and <= one_number_changed")
    assert all(r.passed is not False for r in sampled.values())
    text = audit.card_section({MASKED_THEN_FILL: {"train": rows}}, family_rows=2)
    assert "on the first 2 of those it applies to" in text and "| decorated_right:marker | 2 |" in text


def test_coarse_approximations_are_off_and_never_exact():
    rng = random.Random(0)
    for answer in ("720", "-84", "\\frac{7}{3}", "445000", "0.35"):
        text = audit.coarse(answer, rng)
        value = float(audit.exact_value(answer))
        d = float(text.split()[-1])
        assert text.startswith("\\approx ") and d != value and abs(d - value) / abs(value) <= 0.06
    assert audit.coarse("\\frac{8}{5}", rng) is None  # 1.6 either way: exact, no approximation
    assert audit.irrational("\\sqrt{2}") == "\\approx 1.4" and audit.irrational("\\frac{1}{3}") is None
    assert audit.exact_value("x = \\sqrt{2}") == pytest.approx(2**0.5) and audit.exact_value("x + 1") is None
    # a value no float holds (a MATH answer `2^{2005}`) has no approximation: no policy row, not a crash
    for huge in ("2^{2005}", "3^{1000}-1"):
        assert audit.exact_value(huge) is None and audit.coarse(huge, rng) is None and audit.irrational(huge) is None


def test_dataflow_order_puts_computed_numbers_before_their_use():
    from mrtasks.rewards.baselines import dataflow_order, step_numbers

    steps = [
        "The dog walkers have 4+12 = 16 legs",  # uses 4 and 12, computes 16
        "The other walker's 3 dogs have 3*4 = 12 legs",  # computes 12
        "So Mariel walks 20/4 = 5 dogs",  # uses 20
        "That leaves 36-16 = 20 legs",  # uses 16, computes 20
    ]
    problem = "There are 2 walkers and 3 dogs and 36 legs in all."
    assert step_numbers("He has 1,200 + 3 = 1,203 pens") == ({"1203"}, {"1200", "3"})
    assert dataflow_order(steps, problem) == [1, 0, 3, 2]
    row = {"id": "u", "task": STEP_REORDERING, "problem": problem, "shuffled_steps": steps, "order": [1, 0, 3, 2]}
    assert {r.policy: r.mean for r in audit_rows(STEP_REORDERING, [row])}["dataflow"] == 1.0


def test_the_calculator_locates_a_false_formula_and_recomputes_its_result():
    from mrtasks.rewards.baselines import calculator_correction, formula_candidates, recompute

    steps = ["Sean has 24 dollars.", "Together they have 24+72 = 97 dollars.", "So each gets $97/2 = 48.5$."]
    assert formula_candidates(steps[1]) == ["24+72 = 97"]
    assert recompute("24+72 = 97") == "24+72 = 96" and recompute("$3 > 5$".strip("$")) == "3 < 5"
    assert recompute("x = 2 \\cdot 6 = 13 = 12") == "x = 2 \\cdot 6 = 12 = 12"  # the odd member out
    assert calculator_correction(steps) == "\\boxed{1; 24+72 = 96}"
    assert calculator_correction(["Let $x = 3$.", "Then $2x = 6$.", "So 6+1 = 7."]) == "\\boxed{none}"


# --- on a real build folder --------------------------------------------------------------------


@pytest.fixture(scope="module")
def sample_build(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("sample_build")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("HF_DATASETS_OFFLINE", "1")
        assert build_main(["--out", str(out), "--no-progress"]) == 0
    return out


EARLIER = {
    MASKED_THEN_FILL: {"reference", "equivalent_rewrites", "one_number_changed", "rotated", "copied_from_problem", "constant", "no_box"},
    ERROR_CORRECTION: {"reference", "equivalent_correction", "always_none", "always_step0", "copied_back"},
    OUTCOME: {"reference", "truncated_think", "invented_turn", "several_boxes"},
    STEP_REORDERING: {"reference"},
}
"""The policies with targets from before issue 17: they must hold whatever the integrity rules do."""


def test_audit_cli_on_the_bundled_sample_build(sample_build, tmp_path, capsys):
    code = audit.main(["--dataset", str(sample_build), "--out", str(tmp_path)])
    printed = capsys.readouterr().out
    report = json.loads((tmp_path / "audit.json").read_text())
    results = report["results"]
    assert code == (0 if all(r["passed"] is not False for r in results) else audit.EXIT_MISSED)  # a missed target fails the command
    assert "one_number_changed" in printed and "decorated_wrong:marker" in printed
    tasks = {r["task"] for r in results}
    assert tasks == set(list_tasks())  # every task config of the build
    by = {(r["task"], r["policy"]): r for r in results}
    assert all(by[(t, p)]["passed"] for t, names in EARLIER.items() for p in names), "an earlier target failed"
    assert all(by[(t, "reference")]["min"] == 1.0 for t in tasks)
    assert by[(MASKED_THEN_FILL, "equivalent_rewrites")]["mean"] >= 0.95
    assert by[(MASKED_THEN_FILL, "one_number_changed")]["mean"] <= 0.15
    for name in ("decorated_wrong:marker", "decorated_right:styling", "near_miss:relation", "braces_removed"):
        assert by[(MASKED_THEN_FILL, name)]["rows"] > 0 and by[(MASKED_THEN_FILL, name)]["target"]
    assert "and <= one_number_changed" in by[(MASKED_THEN_FILL, "decorated_wrong:trailing")]["target"]
    assert by[(OUTCOME, "coarse_approximation")]["rows"] > 0 and by[(ERROR_CORRECTION, "calculator")]["rows"] > 0
    # `\boxed{none}` is scored where there is an error: it must earn nothing there, whatever the sample's share
    # of clean rows (a mean over every row would only restate that share).
    none = by[(ERROR_CORRECTION, "always_none")]
    assert none["rows"] > 0 and none["mean"] == 0.0 and none["passed"]
    assert (tmp_path / "audit.png").read_bytes()[:4] == b"\x89PNG"


def test_markdown_table_for_the_card(sample_build):
    results = run_audit(sample_build, tasks=[OUTCOME])
    table = markdown_table(results)
    assert table.splitlines()[0].startswith("| task | policy |")
    assert "| outcome | truncated_think |" in table
    assert not [line for line in table.splitlines() if "**NO**" in line and line.split(" | ")[1] in EARLIER[OUTCOME]]


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
    assert "| masked_then_fill | one_number_changed |" in section
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    assert not [line for line in rows if "**NO**" in line and line.split(" | ")[1] in EARLIER.get(line[2:].split(" |")[0], ())]
    for name in ("decorated_wrong:unicode_minus", "near_miss:letter", "braces_added", "dataflow_cues"):
        assert f" | {name} | " in section
    assert "| error_correction | calculator |" in section and "| outcome | coarse_approximation |" in section
    assert all(f"| {task} | reference |" in section for task in list_tasks())


def test_a_red_team_file_is_scored_per_family_on_a_build(sample_build, tmp_path, capsys):
    """`adversary --write-masks` gives a red team its input; `--attacks` scores what it wrote
    (tests/data/REDTEAM.md): right work keeps full credit, dressed-up wrong work earns next to nothing."""
    import subprocess
    import sys

    from mrtasks.rewards.adversary import main as adversary_main

    masks, attacks, figures = tmp_path / "masks.jsonl", tmp_path / "attacks.jsonl", tmp_path / "figures.json"
    assert adversary_main(["--dataset", str(sample_build), "--write-masks", str(masks), "--rows", "4"]) == 0
    assert len(masks.read_text().splitlines()) == 4
    script = Path(__file__).parent / "data" / "redteam_mask_fill.py"
    subprocess.run([sys.executable, str(script), str(masks), str(attacks)], check=True, capture_output=True)
    assert adversary_main(["--dataset", str(sample_build), "--attacks", str(attacks), "--json", str(figures)]) == 0
    found = json.loads(figures.read_text())
    assert found["right:r_exact"] == {"n": 4, "mean": 1.0, "max": 1.0}
    assert found["wrong:w_two_boxes_right_last"]["mean"] == 1.0  # the last box counts
    wrong = {k: v["mean"] for k, v in found.items() if k.startswith("wrong:") and k != "wrong:w_two_boxes_right_last"}
    assert len(wrong) >= 20 and max(wrong.values()) <= 0.1, wrong
    assert "right:r_dfrac_le" in capsys.readouterr().out
    # a broken file, an unknown task, ids of another build, a bad `deserved` are one clear line and
    # exit 2; an output that would overwrite a build or someone's file is refused (4) before any work
    (tmp_path / "bad.jsonl").write_text('{"id": 1\n')
    (tmp_path / "other.jsonl").write_text('{"id": "nosuch", "family": "f", "intent": "wrong", "completion": "x"}\n')
    first = json.loads(attacks.read_text().splitlines()[0])
    (tmp_path / "high.jsonl").write_text(json.dumps({**first, "deserved": 3}) + "\n")
    (tmp_path / "mine.txt").write_text("my notes\n")
    card = (sample_build / "README.md").read_text()
    for argv, code, words in ((["--attacks", str(tmp_path / "bad.jsonl")], 2, "bad.jsonl:1: not a JSON object"),
                              (["--attacks", str(tmp_path / "nope.jsonl")], 2, "no such file"),
                              (["--task", "outcom", "--attacks", str(attacks)], 2, "unknown task"),
                              (["--attacks", str(tmp_path / "other.jsonl")], 2, "none of its 1 lines names a row"),
                              (["--attacks", str(tmp_path / "high.jsonl")], 2, "deserved must be a number in [0, 1]"),
                              (["--write-masks", str(tmp_path)], 4, "is a folder"),
                              (["--write-masks", str(sample_build / "build_stats.json")], 4, "a dataset build"),
                              (["--attacks", str(attacks), "--json", str(sample_build / "README.md")], 4, "a dataset build"),
                              (["--attacks", str(attacks), "--json", str(tmp_path / "mine.txt")], 4, "was not written by"),
                              (["--dataset", str(tmp_path), "--no-time"], 2, "not a build")):
        assert adversary_main(["--dataset", str(sample_build), *argv]) == code, argv
        assert words in capsys.readouterr().err, argv
    assert (sample_build / "README.md").read_text() == card and (tmp_path / "mine.txt").read_text() == "my notes\n"
    with pytest.raises(SystemExit) as exit_:
        adversary_main(["--dataset", str(sample_build), "--max-rows", "-1"])
    assert exit_.value.code == 2 and "--max-rows must be >= 0" in capsys.readouterr().err


def _edited(build: Path, out: Path, config: str, edit) -> Path:
    """A copy of a build with the first train row of one config changed (the schema kept)."""
    import pyarrow.parquet as pq

    shutil.copytree(build, out)
    path = out / "data" / config / "train-00000-of-00001.parquet"
    table = pq.read_table(path)
    rows = table.to_pylist()
    edit(rows[0])
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    return out


def test_rows_a_reward_cannot_score_are_one_line_naming_the_row(sample_build, tmp_path, capsys):
    from mrtasks.demo import main as demo_main
    from mrtasks.rewards.adversary import main as adversary_main

    cases = (("masked_then_fill", lambda r: r.update(masks=None), "'masks' is null"),
             ("error_correction", lambda r: r.update(error_step=None), "'error_step' is null"),
             ("outcome", lambda r: r.update(task="step_reordering"), "its task column says 'step_reordering'"))
    for k, (config, edit, words) in enumerate(cases):
        bad = _edited(sample_build, tmp_path / f"b{k}", config, edit)
        assert audit.main(["--dataset", str(bad)]) == 2
        err = capsys.readouterr().err
        assert words in err and f"{config} train row 0" in err and "Traceback" not in err
        assert adversary_main(["--dataset", str(bad), "--no-time"]) == 2 and words in capsys.readouterr().err
        assert demo_main([str(bad)]) == 2 and words in capsys.readouterr().err
    (tmp_path / "b0" / "README.md").unlink()  # a build without its card: refused, not "no config, skipped"
    assert demo_main([str(tmp_path / "b0")]) == 2 and "has no README.md" in capsys.readouterr().err


def test_audit_out_never_overwrites_a_users_file_or_writes_into_a_build(sample_build, tmp_path, capsys):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "audit.json").write_text('{"my": "notes"}\n')
    for out, words in ((mine, "was not written by mrtasks.rewards.audit"), (sample_build, "is a dataset build")):
        assert audit.main(["--dataset", str(sample_build), "--task", "outcome", "--out", str(out)]) == 4
        assert words in capsys.readouterr().err
    assert (mine / "audit.json").read_text() == '{"my": "notes"}\n' and not (sample_build / "audit.json").exists()
    ours = tmp_path / "ours"
    for _ in range(2):  # its own output folder is rewritten
        assert audit.main(["--dataset", str(sample_build), "--task", "outcome", "--out", str(ours)]) == 0
    assert json.loads((ours / "audit.json").read_text())["results"]
