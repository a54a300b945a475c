"""Parsing completions: where the answer is, what the box holds, how it splits."""

from pathlib import Path

import pytest

from mrtasks.mathcheck import final_box_parts, last_boxed, split_top_level, strip_wrappers
from mrtasks.rewards.parsing import answer_region, completion_text, extract_answer, parse_order, template_prefills_think


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


# --- the think and end-of-turn policy (issue 8, item 4) ----------------------------------------


@pytest.mark.parametrize(
    "text, prefilled, expected",
    [
        ("reasoning</think>final \\boxed{1}", True, "final \\boxed{1}"),
        ("reasoning \\boxed{1} cut off", True, ""),  # R1: the prompt opened <think>, never closed
        ("reasoning \\boxed{1} cut off", False, "reasoning \\boxed{1} cut off"),  # Qwen: no think block
        ("<think>a</think>b<think>c \\boxed{2}", False, ""),  # a second block left open
        ("answer \\boxed{1}<|im_end|><|im_start|>user\n?", False, "answer \\boxed{1}"),
        ("</think>answer<｜end▁of▁sentence｜>more</think>x", True, "answer"),
        ("answer<|endoftext|>", False, "answer"),
        ("<|im_end|>\\boxed{1}", False, ""),
    ],
)
def test_answer_region_ends_at_the_turn_and_needs_finished_thinking(text, prefilled, expected):
    assert answer_region(text, think_prefilled=prefilled) == expected


def test_extract_answer_takes_the_think_option():
    assert extract_answer("guess \\boxed{3}") == "3"
    assert extract_answer("guess \\boxed{3}", think_prefilled=True) is None
    assert extract_answer([{"role": "assistant", "content": "ok</think>\\boxed{3}"}], think_prefilled=True) == "3"


TEMPLATES = Path(__file__).resolve().parents[1] / "training" / "chat_templates"


def tiny_tokenizer(template: str | None, special: list[str]):
    """A real fast tokenizer (a WordLevel model trained here on a few words) carrying `template`."""
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    core = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    core.train_from_iterator(["what is 1+1 ? it is 2", "think about it"], trainers.WordLevelTrainer(special_tokens=["[UNK]", *special]))
    tok = PreTrainedTokenizerFast(tokenizer_object=core, unk_token="[UNK]", bos_token=special[0], eos_token=special[1])
    if template is not None:
        tok.chat_template = template
    return tok


def test_template_prefills_think_on_the_real_chat_templates():
    r1 = tiny_tokenizer((TEMPLATES / "r1-distill-qwen.jinja").read_text(), ["<｜begin▁of▁sentence｜>", "<｜end▁of▁sentence｜>"])
    qwen = tiny_tokenizer((TEMPLATES / "qwen2.5.jinja").read_text(), ["<|endoftext|>", "<|im_end|>"])
    prompt = r1.apply_chat_template([{"role": "user", "content": "hi"}], tokenize=False, add_generation_prompt=True)
    assert prompt.endswith("<｜Assistant｜><think>\n")  # the real template, rendered
    assert template_prefills_think(r1) is True
    assert template_prefills_think(qwen) is False
    # a template whose generation prompt opens and closes the block (thinking switched off)
    closed = "{% for m in messages %}{{ m['content'] }}{% endfor %}{% if add_generation_prompt %}<think>\n\n</think>\n\n{% endif %}"
    assert template_prefills_think(tiny_tokenizer(closed, ["<s>", "</s>"])) is False
    # a user message that mentions <think> does not count: only what the generation prompt adds
    echo = "{% for m in messages %}{{ m['content'] }}<think>{% endfor %}{% if add_generation_prompt %}A:{% endif %}"
    assert template_prefills_think(tiny_tokenizer(echo, ["<s>", "</s>"])) is False
    assert template_prefills_think(tiny_tokenizer(None, ["<s>", "</s>"])) is False  # no template at all


@pytest.mark.parametrize(
    "text, parts",
    [
        ("so \\boxed{3} and \\boxed{4}.", ["3", "4"]),
        ("$\\boxed{1}$, $\\boxed{2}$ or $\\boxed{3}$", ["1", "2", "3"]),
        ("\\boxed{3}. Then we check: \\boxed{4}", ["4"]),  # more reasoning in between: not joined
        ("\\boxed{\\boxed{5}}", ["5"]),  # nested: the inner box, as `last_boxed` reads it
        ("\\boxed{2} and \\boxed{", ["2"]),  # an unclosed last box is skipped
        ("no box", []),
        ("\\boxed{" * 20_000, []),  # bounded work on pathological text
    ],
)
def test_final_box_parts(text, parts):
    assert final_box_parts(text) == parts


def test_template_prefills_think_survives_a_template_that_raises(caplog):
    raising = "{{ raise_exception('system role required') }}"
    assert template_prefills_think(tiny_tokenizer(raising, ["<s>", "</s>"])) is False
    assert "system role required" in caplog.text
