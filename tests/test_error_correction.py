"""Error Correction: one step made provably wrong (or none), its reward, and its build config."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from datasets import load_dataset

from mrtasks.build import main as build_main
from mrtasks.mathcheck import numeric_truth, theorem_key
from mrtasks.prompts import ERROR_CORRECTION_SYSTEM_PROMPT
from mrtasks.rewards import get_reward, list_rewards
from mrtasks.rewards.baselines import calculator_correction
from mrtasks.tasks import ERROR_CORRECTION, ErrorCorrectionConfig, NotEligible, get_task, list_tasks, make_error_correction
from mrtasks.tasks.arithmetic import false_on_its_own, holds
from mrtasks.tasks.error_correction import UNSUPPORTED_TYPES, candidate_edits, decided_not_equal, formula_edits
from mrtasks.trajectory import Formula, Trajectory

reward = get_reward(ERROR_CORRECTION)
spec = get_task(ERROR_CORRECTION)

STEPS = [
    "Step 1: Let $x$ be the smaller root of $x^2-5x+6=0$.",
    "Step 2: Factoring gives $(x-2)(x-3)=0$.",
    "Step 3: So the roots are $x=2$ and $x=3$, and $2<3$.",
    "Step 4: Hence the answer is $2 \\cdot 3 - 4 = 2$.",
]


def traj(steps: list[str] = STEPS, tid: str = "quad") -> Trajectory:
    solution = "\n\n".join(steps)
    formulas = []
    for text in ("(x-2)(x-3)=0", "x^2-5x+6=0", "2 \\cdot 3 - 4 = 2", "2<3"):
        start = solution.find(text)
        if start >= 0:
            formulas.append(Formula(text, start, start + len(text)))
    return Trajectory(tid, "test", "computation", "Find the smaller root of $x^2-5x+6=0$.", solution, "2", formulas, steps)


def error_row(seed_from: int = 0) -> dict:
    """The first row (by seed) that has an error."""
    for seed in range(seed_from, seed_from + 100):
        row = make_error_correction(traj(), seed)
        if row["error_step"] >= 0:
            return row
    raise AssertionError("no error row in 100 seeds")


def columns(rows: list[dict]) -> dict:
    return {k: [r[k] for r in rows] for k in rows[0] if k != "prompt"}


def score(answer, row: dict, **options) -> float:
    fn = get_reward(ERROR_CORRECTION, **options) if options else reward
    return fn([answer], **columns([row]))[0]


# --- construction ------------------------------------------------------------------------------


def test_registered_as_a_stage1_task_with_its_reward():
    assert ERROR_CORRECTION in list_tasks(stage=1) and ERROR_CORRECTION in list_rewards()
    assert spec.reward == ERROR_CORRECTION and reward.__name__ == ERROR_CORRECTION
    assert set(spec.features()) >= {"steps", "error_step", "original", "corrupted", "error_type", "prompt"}


def test_exactly_one_step_changes_by_one_provably_wrong_edit():
    t = traj()
    for seed in range(40):
        row = make_error_correction(t, seed)
        shown, clean = row["steps"], [s.split(": ", 1)[1] for s in STEPS]
        changed = [k for k in range(len(clean)) if shown[k] != clean[k]]
        if row["error_step"] < 0:
            assert changed == [] and row["original"] == row["corrupted"] == row["error_type"] == ""
            continue
        k = row["error_step"]
        assert changed == [k]
        assert row["original"] in clean[k] and row["corrupted"] in shown[k]
        assert shown[k] == clean[k].replace(row["original"], row["corrupted"], 1)
        assert decided_not_equal(row["corrupted"], row["original"])
        assert row["error_type"] in {"number", "sign", "operator", "relation", *UNSUPPORTED_TYPES}


def test_rows_are_deterministic_and_show_numbered_steps_without_labels():
    a, b = make_error_correction(traj(), 7), make_error_correction(traj(), 7)
    assert a == b
    system, user = a["prompt"][0]["content"], a["prompt"][1]["content"]
    assert system == ERROR_CORRECTION_SYSTEM_PROMPT and "\\boxed{k; corrected formula}" in system
    assert "Step 0: Let $x$" in user and "Step 3: Hence" in user and "Step 1: Let" not in user
    assert a["problem"] in user


def test_about_a_fifth_of_rows_have_no_error_and_eligibility_ignores_the_draw():
    rows = [make_error_correction(traj(tid=f"t{i}"), 0) for i in range(600)]
    share = sum(r["error_step"] < 0 for r in rows) / len(rows)
    assert 0.15 < share < 0.25
    assert {r["error_type"] for r in rows} == {"", "number", "sign", "operator", "relation", "quantity"}
    never = [make_error_correction(traj(tid=f"t{i}"), 0, ErrorCorrectionConfig(none_fraction=0.0)) for i in range(50)]
    assert all(r["error_step"] >= 0 for r in never)


def test_ineligible_trajectories_raise_with_a_counted_reason():
    with pytest.raises(NotEligible) as e:
        make_error_correction(traj(STEPS[:2]))
    assert e.value.reason == "too_few_steps"
    prose = ["We induct on n.", "The base case is clear.", "The step follows from the hypothesis."]
    for seed in range(5):  # no formula and no theorem name: never eligible, whatever the draw
        with pytest.raises(NotEligible) as e:
            make_error_correction(Trajectory("p", "t", "proof", "Show it.", " ".join(prose), steps=prose), seed)
        assert e.value.reason == "no_corruptible_formula"
    with pytest.raises(ValueError):
        ErrorCorrectionConfig(none_fraction=1.0)


@pytest.mark.parametrize(
    "formula, must, must_not",
    [
        ("a_1 + a_{12} = 14", ["a_1 - a_{12} = 14", "a_1 + a_{12} = 16"], ["a_2", "a_{13}"]),
        ("x^{-1} = \\frac12", ["x^{-2} = \\frac12"], ["x^{+1}", "\\frac13", "\\frac22"]),
        ("\\left(x\\right) \\le 3", ["\\left(x\\right) \\ge 3", "\\left(x\\right) \\le 4"], ["\\geft"]),
        ("14{,}000 + 1,500 = 15{,}500", ["14{,}000 - 1,500 = 15{,}500"], ["14{,}001", "1,501", "{,}501"]),
        ("\\sin x \\cdot 2 > 0", ["\\cos x \\cdot 2 > 0", "\\sin x + 2 > 0", "\\sin x \\cdot 2 < 0"], []),
    ],
)
def test_formula_edits_change_numbers_signs_operators_and_relations_only(formula, must, must_not):
    edits = [e for e, _ in formula_edits(formula)]
    for m in must:
        assert m in edits
    for bad in must_not:
        assert not any(bad in e for e in edits)


def test_the_checker_decides_edits_wrong_including_numeric_statements():
    assert decided_not_equal("(x-2)(x-4)=0", "(x-2)(x-3)=0")
    assert decided_not_equal("x \\geq 3", "x \\leq 3")
    assert numeric_truth("42/2 = 21") is True and numeric_truth("44/2 = 21") is False
    assert decided_not_equal("44/2 = 21", "42/2 = 21")
    assert not decided_not_equal("x+1", "x+1")
    assert not decided_not_equal("1+x", "x+1")  # the same formula is never "wrong"


def test_theorem_names_are_swapped_within_their_group():
    steps = [
        "Define $F(x) = \\int_S f(x,y)\\,dy$.",
        "The difference quotients are dominated by an integrable $g$.",
        "By the Dominated Convergence Theorem we may pass to the limit.",
    ]
    t = Trajectory("dct", "t", "proof", "Prove the Leibniz rule.", " ".join(steps), steps=steps)
    edits = [e for e in candidate_edits(steps, [], ErrorCorrectionConfig()) if e.error_type == "theorem"]
    assert {e.corrupted for e in edits} == {"Monotone Convergence Theorem", "Fatou's Lemma"}
    row = next(r for r in (make_error_correction(t, s) for s in range(50)) if r["error_step"] >= 0)
    assert row["error_step"] == 2 and row["original"] == "Dominated Convergence Theorem"
    assert score("\\boxed{2; the dominated convergence theorem}", row) == 1.0
    assert score("\\boxed{2; " + row["corrupted"] + "}", row) == 0.0
    lhopital = [e.corrupted for e in candidate_edits(["By L'Hopital's rule the limit is 1."], [], ErrorCorrectionConfig())]
    assert sorted(lhopital) == ["chain rule", "product rule", "quotient rule"]
    assert theorem_key("Rolle's theorem") == theorem_key("the Rolle Theorem")
    assert theorem_key("Cauchy-Schwarz inequality") == theorem_key("Cauchy–Schwarz inequality")


# --- kinds a calculator cannot find ----------------------------------------------------------------

PENS = [
    "Tom buys 3 boxes of 12 pens, so he has 3*12 = 36 pens.",
    "He gives away 5 pens and buys 4 more: 36 - 5 + 4 = 35 pens.",
    "He splits them between 5 friends: 35/5 = 7 pens each.",
]
PENS_PROBLEM = "Tom buys 3 boxes of 12 pens. He gives away 5, buys 4 more and shares them among 5 friends. How many each?"


def pens(tid: str = "pens") -> Trajectory:
    solution = " ".join(PENS)
    formulas = [Formula(t, solution.find(t), solution.find(t) + len(t)) for t in ("36 - 5 + 4 = 35", "3*12 = 36", "35/5 = 7")]
    return Trajectory(tid, "test", "computation", PENS_PROBLEM, solution, "7", formulas, PENS)


ALWAYS = ErrorCorrectionConfig(none_fraction=0.0, unsupported_fraction=1.0)


def test_unsupported_kinds_stay_true_on_their_own_and_are_decided_different():
    rows = [make_error_correction(pens(f"p{i}"), 0, ALWAYS) for i in range(60)]
    assert {r["error_type"] for r in rows} == {"quantity", "dropped_term"}
    for r in rows:
        k = r["error_step"]
        assert r["steps"][k] == PENS[k].replace(r["original"], r["corrupted"], 1)
        assert holds(r["corrupted"]) and not false_on_its_own(r["corrupted"])  # true as a computation
        assert decided_not_equal(r["corrupted"], r["original"])
        assert score(spec.reference_answer(r), r) == 1.0  # the reference still earns 1.0
        assert score(f"\\boxed{{{k}; {r['corrupted']}}}", r) == 0.0
    dropped = [r for r in rows if r["error_type"] == "dropped_term"]
    assert {r["corrupted"] for r in dropped} <= {"36 - 5 = 31", "36 + 4 = 40"}
    quantity = {r["corrupted"] for r in rows if r["error_type"] == "quantity"}
    assert "12 - 5 + 4 = 11" in quantity or "3*3 = 9" in quantity  # another quantity of the solution, recomputed


@pytest.mark.parametrize(
    "formula, operand, result",
    [
        ("$1000-$200 = $800", "$1000-$300", "$700"),  # currency kept
        ("2 grams + 3 grams + 2 grams = 7 grams", "2 grams + 5 grams + 2 grams", "9 grams"),  # units kept
        ("20*10 = $200.00", "20*12", "$240.00"),  # decimal places kept
        ("2100*1200=2,520,000", "2100*12", "25,200"),  # digit groups kept
    ],
)
def test_a_recomputed_result_keeps_the_way_it_was_written(formula, operand, result):
    from mrtasks.tasks.error_correction import _computation, _recomputed

    c = _computation(0, 0, formula)
    assert c is not None
    new = _recomputed(c, operand)
    assert new is not None and new.endswith(result) and holds(new)


def test_no_unsupported_edit_without_a_true_computation():
    from mrtasks.tasks.error_correction import _computation

    assert _computation(0, 0, "44/2 = 21") is None  # false as written
    assert _computation(0, 0, "x^2 - 5x + 6 = 0") is None  # nothing constant to recompute
    assert _computation(0, 0, "2 \\cdot 6 = 3 \\cdot 4 = 12") is None  # two operations: one edit breaks the chain
    assert _computation(0, 0, "x = 3 \\cdot 4 = 12") is not None  # a labelled computation


def test_the_calculator_finds_classic_edits_but_not_unsupported_ones():
    classic = [make_error_correction(pens(f"c{i}"), 0, ErrorCorrectionConfig(none_fraction=0.0, unsupported_fraction=0.0))
               for i in range(40)]  # fmt: skip
    unsupported = [make_error_correction(pens(f"c{i}"), 0, ALWAYS) for i in range(40)]
    calc = lambda rows: [score(calculator_correction(r["steps"]), r) for r in rows]  # noqa: E731
    numeric = [r for r in classic if false_on_its_own(r["corrupted"])]
    assert len(numeric) >= 20 and sum(s > 0 for s in calc(numeric)) / len(numeric) >= 0.9  # located
    assert max(calc(unsupported)) == 0.0  # every step holds: the calculator answers none


def test_unsupported_rows_are_deterministic_and_leave_the_other_rows_alone():
    trajs = [pens(f"d{i}") for i in range(80)] + [traj(tid=f"q{i}") for i in range(40)]
    a = [make_error_correction(t, 3) for t in trajs]
    assert a == [make_error_correction(t, 3) for t in trajs]  # same seed, same rows
    without = [make_error_correction(t, 3, ErrorCorrectionConfig(unsupported_fraction=0.0)) for t in trajs]
    drawn = [x["error_type"] in UNSUPPORTED_TYPES for x in a]
    assert 0.15 < sum(drawn) / sum(x["error_step"] >= 0 for x in a) < 0.45  # about unsupported_fraction = 0.3
    assert all(x == y for x, y, d in zip(a, without, drawn) if not d)  # rows not drawn: as without the kinds
    assert not any(y["error_type"] in UNSUPPORTED_TYPES for y in without)
    with pytest.raises(ValueError):
        ErrorCorrectionConfig(unsupported_fraction=1.5)


# --- reward --------------------------------------------------------------------------------------


def test_reward_table():
    row = error_row()
    k, orig, bad = row["error_step"], row["original"], row["corrupted"]
    none_row = next(r for r in (make_error_correction(traj(), s) for s in range(200)) if r["error_step"] < 0)
    other_step = (k + 1) % len(row["steps"])
    cases = [
        (spec.reference_answer(row), row, 1.0),
        (f"<think>checking</think> \\boxed{{Step {k}; {orig}}}", row, 1.0),
        (f"\\boxed{{\\text{{Step }} {k};\\ {orig} }}", row, 1.0),
        (f"\\boxed{{{k}}}", row, 0.5),
        (f"\\boxed{{{k}; {bad}}}", row, 0.0),  # copied back: no credit at all
        (f"\\boxed{{{k}; {orig} + 17}}", row, 0.5),
        (f"\\boxed{{{other_step}; {orig}}}", row, 0.0),
        ("\\boxed{none}", row, 0.0),
        (f"Step {k}; {orig}", row, 0.0),  # no box
        ("\\boxed{none}", none_row, 1.0),
        ("\\boxed{\\text{None}}", none_row, 1.0),
        ("\\boxed{No error.}", none_row, 1.0),
        ("\\boxed{0}", none_row, 0.0),
        (f"\\boxed{{{k}; {orig}}}", none_row, 0.0),
    ]
    got = reward([c for c, _, _ in cases], **columns([r for _, r, _ in cases]))
    assert got == [e for _, _, e in cases]


def test_an_equivalent_correction_earns_full_credit():
    row = dict(error_row(), error_step=1, original="(x-2)(x-3)=0", corrupted="(x-2)(x-4)=0", error_type="number")
    assert score("\\boxed{1; 0 = (x-3)(x-2)}", row) == 1.0
    assert score("\\boxed{1; (x - 2)(x - 3) = 0}", row) == 1.0
    assert score("\\boxed{1; 0 = (x-4)(x-2)}", row) == 0.0  # the corruption, rewritten


def test_reward_contract_junk_other_tasks_chat_and_think_prefilled():
    row = error_row()
    junk = ["", "\\boxed{", "\\boxed{;;;}", "\\boxed{99999; x}", "\\boxed{-1}", None, 42, [{"role": "user"}], "}" * 50]
    got = reward(junk, **columns([row] * len(junk)))
    assert all(isinstance(v, float) and 0.0 <= v <= 1.0 for v in got) and max(got) == 0.0
    other = dict(row, task="step_reordering")
    assert reward([spec.reference_answer(row)], **columns([other])) == [None]
    chat = [{"role": "assistant", "content": spec.reference_answer(row)}]
    assert reward([chat], **columns([row])) == [1.0]
    truncated = f"I think \\boxed{{{row['error_step']}; {row['original']}}} but wait"
    assert score(truncated, row) == 1.0
    assert score(truncated, row, think_prefilled=True) == 0.0
    assert score("...</think>" + spec.reference_answer(row), row, think_prefilled=True) == 1.0
    assert get_reward("process")([spec.reference_answer(row)], **columns([row])) == [1.0]


# --- build ---------------------------------------------------------------------------------------


def _built(out: Path, *args: str) -> dict:
    assert build_main(["--out", str(out), "--no-progress", *args]) == 0
    return json.loads((out / "build_stats.json").read_text())


def _every_reference_earns_one(out: Path) -> int:
    ds = load_dataset(str(out), ERROR_CORRECTION)
    assert set(ds) == {"train", "validation"}
    n = 0
    for split in ds.values():
        rows = split.to_list()
        assert reward([spec.reference_answer(r) for r in rows], **columns(rows)) == [1.0] * len(rows)
        n += len(rows)
    return n


def test_the_default_build_has_an_error_correction_config(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    stats = _built(tmp_path / "demo")
    assert stats["counts"][ERROR_CORRECTION]["train"] > 10
    assert _every_reference_earns_one(tmp_path / "demo") == sum(stats["counts"][ERROR_CORRECTION].values())
    assert stats["parameters"]["tasks"][ERROR_CORRECTION]["none_fraction"] == 0.2  # the card records its config
    assert stats["parameters"]["tasks"][ERROR_CORRECTION]["unsupported_fraction"] == 0.3


@pytest.mark.slow
def test_a_corpora_build_has_hundreds_of_rows_each_earning_one_by_its_reference(shared_data, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    stats = _built(tmp_path / "corpora", "--source", f"corpora:{shared_data / 'corpora'}")
    n = _every_reference_earns_one(tmp_path / "corpora")
    assert n == sum(stats["counts"][ERROR_CORRECTION].values()) >= 300
    rows = load_dataset(str(tmp_path / "corpora"), ERROR_CORRECTION, split="train").to_list()
    share = sum(r["error_step"] < 0 for r in rows) / len(rows)
    assert 0.15 < share < 0.25
    rng = random.Random(0)
    for r in rng.sample(rows, 50):
        assert (r["error_step"] < 0) == (r["original"] == "")


def test_audit_error_correction_policies_meet_their_targets(tmp_path, monkeypatch):
    from mrtasks.rewards.audit import audit_rows, load_rows

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    _built(tmp_path / "demo")
    results = {r.policy: r for r in audit_rows(ERROR_CORRECTION, load_rows(tmp_path / "demo", ERROR_CORRECTION))}
    earlier = {"reference", "equivalent_correction", "always_none", "always_step0", "copied_back"}
    assert set(results) == earlier | {"calculator", "decorated_right", "decorated_copied_back", "braces_toggled"}
    assert all(results[p].passed for p in earlier), [results[p] for p in earlier if not results[p].passed]
    assert results["copied_back"].mean == 0.0 and results["reference"].min == 1.0
    calculator = results["calculator"]  # a figure, not a target: error rows only
    assert calculator.passed is None and 0 < calculator.rows < results["reference"].rows and calculator.mean < 0.5
