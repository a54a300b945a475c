"""Task constructors: trajectory in, seeded deterministic example out."""

from __future__ import annotations

import re

import pytest

from mrtasks.prompts import MASKED_THEN_FILL_SYSTEM_PROMPT, STEP_REORDERING_SYSTEM_PROMPT
from mrtasks.tasks import (
    MASK_TOKEN,
    MASKED_THEN_FILL,
    OUTCOME,
    STEP_REORDERING,
    MaskedThenFillConfig,
    NotEligible,
    StepReorderingConfig,
    make_masked_then_fill,
    make_outcome,
    make_step_reordering,
)
from mrtasks.trajectory import Formula, Trajectory

# The paper's bitwise Masked-Then-Fill case (Appendix C), three display formulas.
BITWISE_SOLUTION = r"""Step 1. Simplification
Note that $A \oplus \texttt{0xFFFFFFFF} = \sim A$ for any 32-bit value. Rewrite the equation as:
\[(\texttt{0x7EFEFEFF} + A) \oplus \sim A = \texttt{0x81010100}\]
Step 3. Deriving A
To avoid carries during addition, $A$ should have 1's only where $\texttt{0x7EFEFEFF}$ has 0's:
\[A = \texttt{0x81010100}\]
Step 4. Verification
Since there is no overlap, the addition result is:
\[\texttt{0x7EFEFEFF} + \texttt{0x81010100} = \texttt{0xFFFFFFFF}\]"""

# The paper's Leibniz case (Appendix C) in reference order; the paper shows them as
# Step 0..5 and the correct sequence of shown numbers is 2, 5, 0, 4, 1, 3.
LEIBNIZ_STEPS = [
    r"Define \( F(x) = \int_S f(x,y) \, dy \) and state the goal.",
    r"Express the difference quotient for \( F(x) \) as an integral of difference quotients.",
    r"State that for almost every \( y \in S \) the pointwise limit exists by hypothesis.",
    r"Note that the difference quotients are dominated by an integrable \( g(y) \).",
    r"Apply the Dominated Convergence Theorem to interchange limit and integral.",
    r"Conclude that \( \frac{dF}{dx} = \int_S \frac{\partial f}{\partial x}(x,y) \, dy \).",
]


def math_spans(solution: str) -> list[Formula]:
    """Formulas as the heuristic annotator finds them: the content of `$..$` and `\\[..\\]`."""
    pattern = re.compile(r"\$(.+?)\$|\\\[(.+?)\\\]", re.S)
    out = []
    for m in pattern.finditer(solution):
        g = 1 if m.group(1) is not None else 2
        out.append(Formula(m.group(g), m.start(g), m.end(g)))
    return out


def bitwise() -> Trajectory:
    return Trajectory(
        id="bitwise",
        source="paper",
        kind="computation",
        problem=r"Find the hexadecimal value of \(A\).",
        solution=BITWISE_SOLUTION,
        answer=r"\texttt{0x81010100}",
        formulas=math_spans(BITWISE_SOLUTION),
        steps=BITWISE_SOLUTION.split("\nStep "),
    )


def leibniz() -> Trajectory:
    return Trajectory("leibniz", "paper", "proof", "Prove the Leibniz rule.", " ".join(LEIBNIZ_STEPS),
                      steps=LEIBNIZ_STEPS)


def test_masked_fill_keeps_delimiters_and_lists_masks_in_order():
    t = bitwise()
    row = make_masked_then_fill(t, seed=0, config=MaskedThenFillConfig(num_masks=3, min_formulas=3, selection="random"))
    assert row["task"] == MASKED_THEN_FILL
    assert row["masked_solution"].count(MASK_TOKEN) == 3 == len(row["masks"])
    # Each mask sits inside its math delimiters, and filling them back restores the solution.
    assert re.search(r"(\$|\\\[)" + re.escape(MASK_TOKEN) + r"(\$|\\\])", row["masked_solution"])
    restored = row["masked_solution"]
    for m in row["masks"]:
        restored = restored.replace(MASK_TOKEN, m, 1)
    assert restored == t.solution
    assert row["scored"] == [0, 1, 2]
    assert row["prompt"][0] == {"role": "system", "content": MASKED_THEN_FILL_SYSTEM_PROMPT}
    assert row["masked_solution"] in row["prompt"][1]["content"]


def test_masked_fill_importance_takes_top_ranked_formulas():
    t = bitwise()
    ranked = list(reversed(t.formulas))  # pretend the last ones matter most
    t.formulas = ranked
    row = make_masked_then_fill(t, config=MaskedThenFillConfig(num_masks=2, min_formulas=2))
    assert set(row["masks"]) == {ranked[0].text, ranked[1].text}


def test_masked_fill_is_deterministic_and_seed_dependent():
    t = bitwise()
    cfg = MaskedThenFillConfig(num_masks=3, min_formulas=3, selection="random", num_scored=2)
    rows = {s: make_masked_then_fill(t, seed=s, config=cfg) for s in range(8)}
    assert make_masked_then_fill(t, seed=3, config=cfg) == rows[3]
    assert len({tuple(r["masks"]) + tuple(r["scored"]) for r in rows.values()}) > 1
    assert all(len(r["scored"]) == 2 for r in rows.values())


def test_masked_fill_paper_default_needs_seven_formulas():
    with pytest.raises(NotEligible) as e:
        make_masked_then_fill(bitwise())
    assert e.value.reason == "too_few_formulas"


def test_step_order_matches_the_leibniz_layout():
    t = leibniz()
    row = make_step_reordering(t, seed=0)
    assert row["task"] == STEP_REORDERING
    assert sorted(row["order"]) == list(range(6))
    assert [row["shuffled_steps"][i] for i in row["order"]] == LEIBNIZ_STEPS
    assert row["shuffled_steps"] != LEIBNIZ_STEPS
    user = row["prompt"][1]["content"]
    assert row["prompt"][0]["content"] == STEP_REORDERING_SYSTEM_PROMPT
    assert "Step 0: " + row["shuffled_steps"][0] in user and "Step 5: " in user and "Step 6:" not in user


def test_step_order_is_never_the_identity_and_is_reproducible():
    t = Trajectory("t", "s", "proof", "p", "a b c", steps=["a", "b", "c"])
    orders = [make_step_reordering(t, seed=s)["order"] for s in range(50)]
    assert [0, 1, 2] not in orders
    assert len({tuple(o) for o in orders}) > 1
    assert make_step_reordering(t, seed=7) == make_step_reordering(t, seed=7)


def test_step_order_eligibility():
    short = Trajectory("t", "s", "proof", "p", "a b", steps=["a", "b"])
    with pytest.raises(NotEligible, match="too_few_steps"):
        make_step_reordering(short)
    long = Trajectory("t", "s", "proof", "p", "x", steps=[str(i) for i in range(30)])
    with pytest.raises(NotEligible, match="too_many_steps"):
        make_step_reordering(long, config=StepReorderingConfig(max_steps=20))
    assert len(make_step_reordering(long, config=StepReorderingConfig(max_steps=None))["order"]) == 30


def test_outcome_row_for_computations_only():
    row = make_outcome(bitwise())
    assert row["task"] == OUTCOME and row["answer"] == r"\texttt{0x81010100}"
    assert row["prompt"][1]["content"].endswith(bitwise().problem)
    with pytest.raises(NotEligible, match="not_computation"):
        make_outcome(leibniz())


def test_trajectory_rejects_spans_that_do_not_match():
    with pytest.raises(ValueError):
        Trajectory("t", "s", "computation", "p", "abc", formulas=[Formula("x", 0, 1)])
    with pytest.raises(ValueError):
        Trajectory("t", "s", "lemma", "p", "abc")
    t = bitwise()
    assert Trajectory.from_dict(t.to_dict()) == t


@pytest.mark.parametrize(
    "step, shown",
    [
        ("Step 1. Simplification: note that", "Simplification: note that"),
        ("**Step 2:** Define $F$.", "Define $F$."),
        ("3. Therefore $x=2$.", "Therefore $x=2$."),
        ("(4) Hence done.", "Hence done."),
        ("ii) Conclude.", "Conclude."),
        ("$3.5$ is the mean.", "$3.5$ is the mean."),
        ("12 apples cost $6$.", "12 apples cost $6$."),
        ("Step 7", "Step 7"),
    ],
)
def test_step_labels_that_would_leak_the_order_are_stripped(step, shown):
    t = Trajectory("t", "s", "proof", "p", "x", steps=[step, "b", "c"])
    row = make_step_reordering(t)
    assert row["steps"][0] == shown
    assert [row["shuffled_steps"][i] for i in row["order"]] == row["steps"]


def test_registry_lists_every_task_once_with_one_name():
    from mrtasks.rewards import get_reward
    from mrtasks.tasks import TaskSpec, get_task, list_tasks, register_task

    assert list_tasks(stage=1)[:2] == [MASKED_THEN_FILL, STEP_REORDERING]
    assert list_tasks(stage=2) == [OUTCOME]
    for name in list_tasks():
        spec = get_task(name)
        assert spec.name == spec.reward == name  # config name = task column = reward name
        assert get_reward(spec.reward) is not None
        assert list(spec.features())[:5] == ["id", "task", "source", "kind", "problem"]
        assert list(spec.features())[-1] == "prompt"
    with pytest.raises(KeyError, match="known: masked_then_fill"):
        get_task("mask_fill")
    with pytest.raises(ValueError, match="already registered"):
        register_task(get_task(OUTCOME))
    assert isinstance(get_task(OUTCOME), TaskSpec)


def test_every_task_row_has_features_columns_and_a_reference_that_earns_full_reward():
    from mrtasks.rewards import get_reward
    from mrtasks.tasks import get_task, list_tasks

    t = leibniz()
    t = Trajectory(**{**t.to_dict(), "formulas": t.formulas, "kind": "computation", "answer": "1"})
    for name in list_tasks():
        spec = get_task(name)
        try:
            row = spec.make(t, seed=3, config=spec.config_cls(**({"num_masks": 3, "min_formulas": 3} if name == MASKED_THEN_FILL else {})))
        except NotEligible:
            continue
        assert set(row) == set(spec.features()), name
        assert row["prompt"] == spec.prompt(row)
        columns = {k: [v] for k, v in row.items() if k != "prompt"}
        assert get_reward(spec.reward)([spec.reference_answer(row)], **columns) == [1.0], name


def test_a_formula_listed_with_its_copies_is_masked_at_every_copy_and_counted_once():
    sol = r"We show $a^2 = b + 1$ first. Then $c = 2$ and $d = 3$, and by $a^2 = b + 1$ also $e = 5$."
    first, second = (m.start() for m in re.finditer(re.escape("a^2 = b + 1"), sol))
    spans = [Formula("a^2 = b + 1", first, first + 11), *math_spans(sol)[1:3], math_spans(sol)[4],
             Formula("a^2 = b + 1", second, second + 11)]  # the annotator lists the copy after the ranked list
    t = Trajectory("r", "s", "proof", "p", sol, formulas=spans)
    with pytest.raises(NotEligible, match="too_few_formulas"):  # 4 distinct formulas, not 5
        make_masked_then_fill(t, config=MaskedThenFillConfig(num_masks=2, min_formulas=5))
    row = make_masked_then_fill(t, config=MaskedThenFillConfig(num_masks=2, min_formulas=4))
    assert row["masks"] == ["a^2 = b + 1", "c = 2", "a^2 = b + 1"]  # both copies hidden, in text order
    assert "a^2" not in row["masked_solution"] and row["scored"] == [0, 1, 2]
    once = Trajectory("r", "s", "proof", "p", sol, formulas=spans[:4])  # no copies: as before
    assert make_masked_then_fill(once, config=MaskedThenFillConfig(num_masks=2, min_formulas=4))["masks"] == ["a^2 = b + 1", "c = 2"]


def test_the_final_answer_is_always_masked_or_the_row_is_not_eligible():
    """Any annotator, any selection: the last box's content is among the masks, the annotator's entry for it or,
    where the annotator leaves it out (a value restated in its box), its boxes; a row that would still show it
    (its box inside a listed formula not picked) is a counted drop (`visible_boxed_answer`)."""
    sol = "".join(f"Then $v_{k} = {k}$. " for k in range(8)) + r"So $\boxed{42}$."
    spans = math_spans(sol)  # 8 formulas, then the box's `$\boxed{42}$` span
    box = sol.index("42")
    answer = Formula("42", box, box + 2)
    listed_last = Trajectory("r", "s", "computation", "p", sol, formulas=[*spans[:8], answer])
    for selection in ("importance", "random"):
        row = make_masked_then_fill(listed_last, config=MaskedThenFillConfig(num_masks=3, selection=selection))
        assert "42" in row["masks"] and len(row["masks"]) == 3 and "\\boxed{<formula_masked>}" in row["masked_solution"]
    unlisted = Trajectory("r", "s", "computation", "p", sol, formulas=spans[:8])
    assert make_masked_then_fill(unlisted, config=MaskedThenFillConfig(num_masks=3))["masks"] == ["v_0 = 0", "v_1 = 1", "42"]
    six = Trajectory("r", "s", "computation", "p", sol, formulas=spans[:6])  # the answer's boxes count as a formula
    assert make_masked_then_fill(six, config=MaskedThenFillConfig(num_masks=7))["masks"] == [f"v_{k} = {k}" for k in range(6)] + ["42"]
    with pytest.raises(NotEligible, match="too_few_formulas"):
        make_masked_then_fill(Trajectory("r", "s", "computation", "p", sol, formulas=spans[:5]))
    held = sol.replace(r"So $\boxed{42}$.", r"So $x = \boxed{42}$.")
    inside = Formula("x = \\boxed{42}", held.index("x = "), held.index("x = ") + len("x = \\boxed{42}"))
    with pytest.raises(NotEligible, match="visible_boxed_answer"):  # the box is in a listed formula that is not picked
        make_masked_then_fill(Trajectory("r", "s", "computation", "p", held, formulas=[*math_spans(held)[:8], inside]),
                              config=MaskedThenFillConfig(num_masks=3))
    no_box = sol.replace(r"So $\boxed{42}$.", "So it is 42.")
    assert make_masked_then_fill(Trajectory("r", "s", "computation", "p", no_box, formulas=spans[:8]),
                                 config=MaskedThenFillConfig(num_masks=3))["masks"] == ["v_0 = 0", "v_1 = 1", "v_2 = 2"]


def test_a_step_reordering_prompt_over_the_length_limit_is_a_counted_drop():
    steps = [f"Step text number {k} " + "x" * 300 for k in range(25)]
    t = Trajectory("t", "s", "proof", "p", " ".join(steps), steps=steps)
    with pytest.raises(NotEligible, match="prompt_too_long"):
        make_step_reordering(t)  # ~8000 characters > 6000 (about 2048 tokens)
    row = make_step_reordering(t, config=StepReorderingConfig(max_prompt_chars=None))
    assert len(row["order"]) == 25  # no step cap binds by default
    short = Trajectory("t", "s", "proof", "p", "x", steps=[f"step {k}" for k in range(45)])
    assert sum(len(m["content"]) for m in make_step_reordering(short)["prompt"]) <= StepReorderingConfig().max_prompt_chars
