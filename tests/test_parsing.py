"""Parsing completions: where the answer is, what the box holds, how it splits."""

import pytest

from mrtasks.rewards.parsing import (
    answer_region,
    completion_text,
    extract_answer,
    last_boxed,
    parse_order,
    split_top_level,
    strip_wrappers,
)


def test_completion_text_accepts_strings_and_chat_messages():
    assert completion_text("plain") == "plain"
    chat = [{"role": "assistant", "content": "The answer is \\boxed{4}."}]
    assert completion_text(chat) == "The answer is \\boxed{4}."
    parts = [{"role": "assistant", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}]
    assert completion_text(parts) == "ab"
    assert completion_text(None) == "" and completion_text(42) == "" and completion_text([1, 2]) == ""


@pytest.mark.parametrize(
    "text, expected",
    [
        ("so \\boxed{5}.", "5"),
        ("\\boxed{1} then \\boxed{2}", "2"),
        ("\\boxed{\\frac{1}{2}}", "\\frac{1}{2}"),
        ("\\boxed{\\left( 3, \\frac{\\pi}{2} \\right)}", "\\left( 3, \\frac{\\pi}{2} \\right)"),
        ("\\fbox{7}", "7"),
        ("$\\boxed 5$", "5"),
        ("\\boxed{ 12 }", "12"),
        ("\\boxed{3} and a truncated \\boxed{4", "3"),
        ("no box here", None),
        ("\\boxedx{3}", None),
    ],
)
def test_last_boxed(text, expected):
    assert last_boxed(text) == expected


def test_only_the_text_after_the_last_think_block_counts():
    r1 = "<think>maybe \\boxed{3}? no.</think>The answer is \\boxed{4}."
    assert extract_answer(r1) == "4"
    assert extract_answer("<think>still thinking \\boxed{3}") is None  # never closed: no answer
    assert answer_region("no think tags \\boxed{1}") == "no think tags \\boxed{1}"


def test_split_top_level_keeps_groups_together():
    assert split_top_level("a; \\frac{1;2}{3}; f(x;y); [0;1)") == ["a", "\\frac{1;2}{3}", "f(x;y)", "[0;1)"]
    assert split_top_level("x = 1, y = (2, 3)", ",") == ["x = 1", "y = (2, 3)"]


@pytest.mark.parametrize(
    "text, expected",
    [
        ("$3$", "3"),
        ("\\(x+1\\)", "x+1"),
        ("\\text{Evelyn}", "Evelyn"),
        ("\\displaystyle \\frac12.", "\\frac12"),
        ("2.5", "2.5"),
    ],
)
def test_strip_wrappers(text, expected):
    assert strip_wrappers(text) == expected


@pytest.mark.parametrize(
    "text, expected",
    [
        ("2, 5, 0, 4, 1, 3", [2, 5, 0, 4, 1, 3]),
        ("2 5 0 4 1 3", [2, 5, 0, 4, 1, 3]),
        ("2 \\to 5 \\to 0", [2, 5, 0]),
        ("2 \\rightarrow 5 \\rightarrow 0", [2, 5, 0]),
        ("2 → 5 → 0", [2, 5, 0]),
        ("2 -> 5 -> 0", [2, 5, 0]),
        ("Step 2, Step 5, Step 0", [2, 5, 0]),
        ("\\text{Step } 2, \\text{Step } 5", [2, 5]),
        ("[2, 5, 0]", [2, 5, 0]),
        ("x + 1", None),
        ("the order is 2, 5", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_order(text, expected):
    assert parse_order(text) == expected
