"""The reward functions as TRL calls them: `f(completions, **dataset_columns)`."""

import pytest

from mrtasks.rewards import get_reward, list_rewards
from mrtasks.tasks import MASKED_THEN_FILL, OUTCOME, STEP_REORDERING, make_masked_then_fill, make_outcome, make_step_reordering
from mrtasks.trajectory import Formula, Trajectory

mask_fill = get_reward("mask_fill")
step_order = get_reward("step_order")
outcome = get_reward("outcome")
process = get_reward("process")
format_reward = get_reward("format")


def chat(text: str) -> list[dict]:
    return [{"role": "assistant", "content": text}]


def test_registry_lists_every_reward_with_a_loggable_name():
    assert list_rewards() == ["format", "masked_then_fill", "outcome", "process", "step_reordering"]
    assert get_reward("mask_fill") is get_reward("masked_then_fill")  # older name, same function
    assert [get_reward(n).__name__ for n in list_rewards()] == [
        "format_reward", "mask_fill_reward", "outcome_reward", "process_reward", "step_order_reward",
    ]  # fmt: skip
    with pytest.raises(KeyError, match="known: format"):
        get_reward("accuracy")


# --- Appendix C: the Leibniz integral rule reordering case (6 steps) --------------------------

LEIBNIZ_ORDER = [2, 5, 0, 4, 1, 3]


@pytest.mark.parametrize(
    "answer, expected",
    [
        ("\\boxed{2, 5, 0, 4, 1, 3}", 1.0),
        ("\\[ \\boxed{2 \\to 5 \\to 0 \\to 4 \\to 1 \\to 3} \\]", 1.0),
        ("\\boxed{Step 2, Step 5, Step 0, Step 4, Step 1, Step 3}", 1.0),
        ("\\boxed{2, 5, 0, 4, 3, 1}", 4 / 6),  # last two swapped: 4 of 6 in place
        ("\\boxed{5, 2, 0, 4, 3, 1}", 2 / 6),
        ("\\boxed{3, 1, 4, 0, 5, 2}", 0.0),  # reversed: nothing in place
        ("\\boxed{2, 5, 0, 4, 1}", 0.0),  # a step missing: not a permutation
        ("\\boxed{2, 5, 0, 4, 1, 1}", 0.0),  # repeated step
        ("\\boxed{3, 6, 1, 5, 2, 4}", 0.0),  # numbered from 1: not the shown numbers
        ("2, 5, 0, 4, 1, 3", 0.0),  # no box
    ],
)
def test_step_order_leibniz_case(answer, expected):
    completion = "Step 2 is the starting point ... Step 3 is the final result.\n" + answer
    assert step_order([completion], order=[LEIBNIZ_ORDER]) == [pytest.approx(expected)]


# --- Appendix C: the bitwise masked-then-fill case (3 masks) ----------------------------------

HEX_MASKS = [
    "(\\texttt{0x7EFEFEFF} + A) \\oplus \\sim A = \\texttt{0x81010100}",
    "A = \\texttt{0x81010100}",
    "\\texttt{0x7EFEFEFF} + \\texttt{0x81010100} = \\texttt{0xFFFFFFFF}",
]
XOR_FILL = "\\texttt{0x7EFEFEFF} \\oplus \\texttt{0x81010100} = \\texttt{0xFFFFFFFF}"


def boxed(*fills: str) -> str:
    return "Filling the masks in order:\n\\boxed{" + "; ".join(fills) + "}"


def test_mask_fill_bitwise_case_xor_scores_below_the_exact_fill():
    exact, xor = mask_fill([boxed(*HEX_MASKS), boxed(*HEX_MASKS[:2], XOR_FILL)], masks=[HEX_MASKS] * 2)
    assert exact == 1.0
    assert 2 / 3 < xor < 1.0  # two exact positions + a similar-but-wrong third


def test_mask_fill_scores_each_position_and_only_the_scored_ones():
    masks = ["x^2 + 1", "\\frac{1}{2}", "y = 3"]
    fills = ["1 + x^2", "0.5", "y = 4"]  # equivalent, equivalent, different
    (all_three,) = mask_fill([boxed(*fills)], masks=[masks])
    assert 2 / 3 < all_three < 1.0
    assert mask_fill([boxed(*fills)], masks=[masks], scored=[[0, 1]]) == [1.0]
    assert mask_fill([boxed(fills[0])], masks=[masks]) == [pytest.approx(1 / 3)]  # missing ones score 0
    assert mask_fill(["no box at all"], masks=[masks]) == [0.0]


def test_mask_fill_with_a_row_built_by_the_constructor():
    solution = "We have $a = 1$, $b = 2$, $c = 3$, $d = 4$, $e = 5$, $f = 6$, $g = 7$ and $h = 8$."
    formulas = []
    for text in ["a = 1", "b = 2", "c = 3", "d = 4", "e = 5", "f = 6", "g = 7", "h = 8"]:
        start = solution.index(text)
        formulas.append(Formula(text, start, start + len(text)))
    traj = Trajectory(id="t1", source="unit", kind="computation", problem="List them.", solution=solution,
                      formulas=formulas, steps=["a", "b", "c"], answer="36")  # fmt: skip
    row = make_masked_then_fill(traj, seed=0)
    perfect = boxed(*row["masks"])
    assert mask_fill([perfect, chat(perfect)], masks=[row["masks"]] * 2, scored=[row["scored"]] * 2,
                     task=[row["task"]] * 2) == [1.0, 1.0]  # fmt: skip

    order_row = make_step_reordering(traj, seed=0)
    answer = "\\boxed{" + ", ".join(map(str, order_row["order"])) + "}"
    assert step_order([answer], order=[order_row["order"]], task=[order_row["task"]]) == [1.0]
    shown = "\\boxed{" + ", ".join(map(str, range(3))) + "}"  # the shuffled order is never right
    assert step_order([shown], order=[order_row["order"]]) == [pytest.approx(sum(
        a == b for a, b in zip(range(3), order_row["order"])) / 3)]  # fmt: skip

    out_row = make_outcome(traj)
    assert outcome(["\\boxed{36}", "\\boxed{35}"], answer=[out_row["answer"]] * 2, task=[out_row["task"]] * 2) == [1.0, 0.0]


def test_outcome_reads_the_final_answer_only():
    completions = [
        "\\boxed{\\frac{1}{2}}",
        chat("So $x = 0.5$, i.e. \\boxed{x = 0.5}."),
        "<think>is it \\boxed{0.5}? no</think>The answer is \\boxed{2}.",
        "<think>I believe \\boxed{0.5}",  # never finished thinking
        "The answer is 0.5.",  # no box
    ]
    assert outcome(completions, answer=["0.5"] * 5) == [1.0, 1.0, 0.0, 0.0, 0.0]


def test_task_specific_rewards_return_none_for_other_tasks_rows():
    tasks = [MASKED_THEN_FILL, STEP_REORDERING, OUTCOME]
    completions = [boxed("x"), "\\boxed{1, 0, 2}", "\\boxed{7}"]
    columns = dict(masks=[["x"], None, None], order=[None, [1, 0, 2], None], answer=[None, None, "7"], task=tasks)
    assert mask_fill(completions, **columns) == [1.0, None, None]
    assert step_order(completions, **columns) == [None, 1.0, None]
    assert outcome(completions, **columns) == [None, None, 1.0]
    assert process(completions, **columns) == [1.0, 1.0, 1.0]  # r_proc: each row by its own task
    assert process(completions, **{**columns, "task": ["unknown", STEP_REORDERING, OUTCOME]}) == [None, 1.0, 1.0]


def test_format_reward_checks_the_box_shape_for_the_task():
    columns = dict(task=[MASKED_THEN_FILL, MASKED_THEN_FILL, STEP_REORDERING, STEP_REORDERING, OUTCOME, OUTCOME],
                   masks=[["a", "b"], ["a", "b"], None, None, None, None],
                   order=[None, None, [1, 0, 2], [1, 0, 2], None, None])  # fmt: skip
    completions = [boxed("a", "b"), boxed("a"), "\\boxed{1, 0, 2}", "\\boxed{one}", "<think>x</think>\\boxed{3}", "<think>\\boxed{3}"]
    assert format_reward(completions, **columns) == [1.0, 0.0, 1.0, 0.0, 1.0, 0.0]
