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
    assert {"format", "masked_then_fill", "outcome", "process", "step_reordering"} <= set(list_rewards())
    assert "mask_fill" not in list_rewards() and "step_order" not in list_rewards()
    assert get_reward("mask_fill") is get_reward("masked_then_fill")  # older name, same function
    assert get_reward("step_order").__name__ == "step_reordering"
    # TRL logs `rewards/<__name__>/mean`: every reward is named after itself, options or not
    assert [get_reward(n).__name__ for n in list_rewards()] == list_rewards()
    assert get_reward("mask_fill", partial_credit="all").__name__ == "masked_then_fill"
    with pytest.raises(KeyError, match="known: .*format"):
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
    # two exact positions + a third the checker cannot read (`\\oplus`) against a reference in its
    # grammar (hex sums): 0 there, never similarity (issue 17: the reference decides)
    assert xor == pytest.approx(2 / 3)


def test_mask_fill_scores_each_position_and_only_the_scored_ones():
    masks = ["x^2 + 1", "\\frac{1}{2}", "y = 3"]
    fills = ["1 + x^2", "0.5", "y = 4"]  # equivalent, equivalent, decided different
    (all_three,) = mask_fill([boxed(*fills)], masks=[masks])
    assert all_three == pytest.approx(2 / 3)  # strict: a decided mismatch earns nothing
    (literal,) = get_reward("mask_fill", partial_credit="all")([boxed(*fills)], masks=[masks])
    assert 2 / 3 < literal < 1.0  # the paper's literal variant: similarity for the mismatch
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


# --- partial credit only where the checker cannot decide (issue 8, item 3) ----------------------

QUADRATIC = ["x^{2}-3x-3=0", "\\Delta = 21", "x_1 = \\frac{3 + \\sqrt{21}}{2}"]


def test_strict_mask_fill_gives_a_changed_number_nothing_and_the_literal_variant_most():
    changed = ["x^{2}-4x-3=0", "\\Delta = 22", "x_1 = \\frac{4 + \\sqrt{21}}{2}"]
    literal = get_reward("masked_then_fill", partial_credit="all")
    assert mask_fill([boxed(*changed)], masks=[QUADRATIC]) == [0.0]
    assert literal([boxed(*changed)], masks=[QUADRATIC])[0] > 0.8  # why the literal variant is gameable


def test_strict_mask_fill_gives_right_masks_in_the_wrong_slots_nothing():
    rotated = QUADRATIC[1:] + QUADRATIC[:1]
    assert mask_fill([boxed(*rotated)], masks=[QUADRATIC]) == [0.0]


def test_strict_mask_fill_keeps_credit_for_the_same_formula_in_another_form():
    rewritten = ["0 = x^2 - 3x - 3", "\\Delta=21", "x_1=\\dfrac{\\sqrt{21}+3}{2}"]
    assert mask_fill([boxed(*rewritten)], masks=[QUADRATIC]) == [1.0]


def test_undecided_positions_still_get_text_similarity():
    masks = ["\\sum_{k=0}^{n} \\binom{n}{k} - 1"]  # big operators: the checker cannot decide
    (close,) = mask_fill([boxed("\\sum_{1 \\leq k \\leq n} \\binom{n}{k}")], masks=[masks])  # right, in another form
    assert 0.5 < close < 1.0
    # the price of the near-miss rule: a right fill that is also a small edit of the mask earns nothing
    assert mask_fill([boxed("\\sum_{k=1}^{n} \\binom{n}{k}")], masks=[masks]) == [0.0]


# --- options: think_prefilled, end of turn, partial_credit (the agreed API) ---------------------


def test_options_are_checked_and_named():
    with pytest.raises(TypeError, match="partial_credit"):
        get_reward("outcome", partial_credit="all")  # only Masked-Then-Fill takes it
    with pytest.raises(ValueError, match="partial_credit must be one of"):
        get_reward("masked_then_fill", partial_credit="some")
    with pytest.raises(ValueError, match="think_prefilled"):
        get_reward("outcome", think_prefilled="yes")
    configured = get_reward("step_reordering", think_prefilled=True)
    assert configured.__name__ == "step_reordering" and configured.options == {"think_prefilled": True}
    assert get_reward("step_order", think_prefilled=True) is configured  # configured once, reused


R1_OUTCOME = get_reward("outcome", think_prefilled=True)


@pytest.mark.parametrize(
    "completion, prefilled, plain",
    [
        # R1-Distill: the prompt ends with `<think>\n`, so a finished completion closes it
        ("Compute 2+2... it is 4.\n</think>\nThe answer is \\boxed{4}.", 1.0, 1.0),
        # cut off before `</think>`: a box inside unfinished reasoning is no answer
        ("Compute 2+2... maybe \\boxed{4}? Let me double-check, since", 0.0, 1.0),
        # a think block opened by the completion itself and never closed
        ("<think>maybe \\boxed{4}", 0.0, 0.0),
        # a second think block after the first, never closed: unfinished again
        ("</think>Draft \\boxed{5}<think>no wait, \\boxed{4}", 0.0, 0.0),
        # an invented next turn after the end-of-turn token is not graded
        ("</think>\\boxed{5}<|im_end|>\n<|im_start|>user\nSure?<|im_end|>\n<|im_start|>assistant\n\\boxed{4}", 0.0, 0.0),
        ("</think>\\boxed{4}<｜end▁of▁sentence｜><｜User｜>No.<｜Assistant｜></think>\\boxed{5}", 1.0, 1.0),
        ("\\boxed{4}<|endoftext|>\\boxed{5}", 0.0, 1.0),
    ],
)
def test_outcome_grades_only_the_finished_answer_of_this_turn(completion, prefilled, plain):
    assert R1_OUTCOME([completion], answer=["4"]) == [prefilled]
    assert outcome([completion], answer=["4"]) == [plain]


def test_think_prefilled_reaches_every_task_reward_and_process():
    truncated = {
        MASKED_THEN_FILL: ("thinking... " + boxed("x"), dict(masks=[["x"]])),
        STEP_REORDERING: ("thinking... \\boxed{1, 0, 2}", dict(order=[[1, 0, 2]])),
        OUTCOME: ("thinking... \\boxed{7}", dict(answer=["7"])),
    }
    for task, (text, columns) in truncated.items():
        assert get_reward(task)([text], task=[task], **columns) == [1.0], task
        assert get_reward(task, think_prefilled=True)([text], task=[task], **columns) == [0.0], task
        assert get_reward(task, think_prefilled=True)(["done</think>" + text], task=[task], **columns) == [1.0]
        assert get_reward("process", think_prefilled=True)([text], task=[task], **columns) == [0.0], task
    # process forwards partial_credit to Masked-Then-Fill only
    masks = [["y = 3"]]
    strict = get_reward("process")([boxed("y = 4")], task=[MASKED_THEN_FILL], masks=masks)
    literal = get_reward("process", partial_credit="all")([boxed("y = 4")], task=[MASKED_THEN_FILL], masks=masks)
    assert strict == [0.0] and literal[0] > 0.5


def test_format_reward_knows_the_prompt_opened_the_think_block():
    r1_format = get_reward("format", think_prefilled=True)
    completions = ["reasoning</think>\\boxed{3}", "reasoning \\boxed{3}", "<think>r</think>\\boxed{3}"]
    assert r1_format(completions, task=[OUTCOME] * 3) == [1.0, 0.0, 0.0]
    assert format_reward(completions, task=[OUTCOME] * 3) == [1.0, 1.0, 1.0]
    assert format_reward(["\\boxed{3}<|im_end|>junk \\boxed{"], task=[OUTCOME]) == [1.0]


SUM = "\\sum_{k=1}^{n} k^{2} = \\frac{n(n+1)(2n+1)}{6}"  # big operators: the checker cannot decide


def test_an_undecided_near_miss_earns_nothing_but_a_consistent_renaming_keeps_similarity():
    from mrtasks.rewards.mask_fill import near_miss

    assert near_miss(SUM.replace("k=1", "k=2"), SUM)  # another number
    assert near_miss(SUM.replace("(2n+1)", "(2m+1)"), SUM)  # one letter renamed in one place
    assert not near_miss(SUM.replace("k", "j"), SUM)  # the bound variable renamed everywhere
    assert mask_fill([boxed(SUM.replace("k=1", "k=2"))], masks=[[SUM]]) == [0.0]
    (renamed,) = mask_fill([boxed(SUM.replace("k", "j"))], masks=[[SUM]])
    assert 0.9 < renamed < 1.0


def test_a_fragment_gets_no_similarity_credit():
    masks = [["(n - 1)! \\equiv -1 \\pmod n"]]  # undecided: `\equiv` is outside the checker's grammar
    assert mask_fill([boxed("1")], masks=masks) == [0.0]
    assert get_reward("masked_then_fill", partial_credit="all")([boxed("1")], masks=masks)[0] > 0.0


@pytest.mark.parametrize(
    "completion, answer, expected",
    [
        ("The roots are \\boxed{3} and \\boxed{4}.", "3, 4", 1.0),  # one answer in two boxes
        ("It is \\boxed{3} or \\boxed{4}.", "3", 0.0),  # hedging: the list is not the answer
        ("First \\boxed{3}. Checking again, the sum is \\boxed{4}.", "4", 1.0),  # a box followed by reasoning is not joined
        ("First \\boxed{4}. Checking again, the sum is \\boxed{3}.", "4", 0.0),
    ],
)
def test_outcome_final_answer_is_the_last_box_with_the_boxes_joined_to_it(completion, answer, expected):
    assert outcome([completion], answer=[answer]) == [expected]


def test_several_boxes_count_when_each_is_the_answer():
    restated = "So $d = \\boxed{15\\frac{39}{40}}$, or $\\boxed{\\frac{639}{40}}$ inches."  # MATH500 style
    assert outcome([restated], answer=["\\frac{639}{40}"]) == [1.0]
    assert outcome(["$\\boxed{15}$, or $\\boxed{\\frac{639}{40}}$"], answer=["\\frac{639}{40}"]) == [0.0]


def test_theorem_name_masks_match_by_canonical_name():
    masks = [["Pythagorean theorem", "AM-GM inequality"]]
    assert mask_fill([boxed("Pythagoras theorem", "AM-GM")], masks=masks) == [1.0]  # aliases
    assert mask_fill([boxed("Pythagorean theorem", "Cauchy-Schwarz inequality")], masks=masks) == [0.5]


def test_a_named_result_outside_the_lexicon_is_matched_by_name_never_by_similarity():
    masks = [["Jacobi's theorem", "Pythagorean theorem"]]
    assert mask_fill([boxed("the Jacobi theorem", "Pythagoras' theorem")], masks=masks) == [1.0]
    # another person's theorem shares most letters ("...'s theorem") and earns nothing
    assert mask_fill([boxed("Steiner's theorem", "Pythagorean theorem")], masks=masks) == [0.5]
    assert mask_fill([boxed("Jacobi's identity", "Pythagorean theorem")], masks=masks) == [0.5]
    assert mask_fill([boxed("Jacobi's theorem", "Steiner's theorem")], masks=masks) == [0.5]  # wrong for a lexicon name


def test_every_reward_takes_trls_extra_arguments():
    """TRL (>= 0.20) also passes `trainer_state`, `log_extra` and `log_metric`: not columns."""
    from transformers import TrainerState

    completions = [boxed("x"), "\\boxed{1, 0, 2}", "\\boxed{7}"]
    columns = dict(masks=[["x"], None, None], order=[None, [1, 0, 2], None], answer=[None, None, "7"],
                   task=[MASKED_THEN_FILL, STEP_REORDERING, OUTCOME])  # fmt: skip
    extra = dict(trainer_state=TrainerState(), log_extra=lambda *a, **k: None, log_metric=lambda *a, **k: None)
    assert process(completions, **columns, **extra) == [1.0, 1.0, 1.0]
    for name in list_rewards():
        assert get_reward(name)(completions, **columns, **extra) == get_reward(name)(completions, **columns), name
