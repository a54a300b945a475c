"""Pull the graded text out of a completion: the text of a chat message, the final answer region
(think blocks, end-of-turn cuts), its boxed answer and step orders; chat-template helpers.

This is the reward side of parsing: what counts as the model's answer. What the answer says (LaTeX
boxes, top-level splits, wrappers) is the checker's (`mrtasks.mathcheck.latex`). Everything here is
pure string work on untrusted text: linear (or near-linear) time, no evaluation, no exceptions on
any `str`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from typing import Any

from mrtasks.mathcheck.latex import final_box_parts, last_boxed, strip_wrappers

logger = logging.getLogger(__name__)

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"


def completion_text(completion: Any) -> str:
    """The text of one completion: a plain string, or the last assistant message of a chat.

    Chat completions are lists of `{"role", "content"}` dicts (TRL's conversational format);
    content may itself be a list of `{"type": "text", "text": ...}` parts. Anything else is "".
    """
    if isinstance(completion, str):
        return completion
    if isinstance(completion, dict):
        completion = [completion]
    if isinstance(completion, (list, tuple)):
        for message in reversed(completion):
            if not isinstance(message, dict):
                continue
            if message.get("role", "assistant") != "assistant":
                continue
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, (list, tuple)):
                return "".join(p.get("text", "") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
            return ""
    return ""


END_OF_TURN: tuple[str, ...] = ("<|im_end|>", "<|endoftext|>", "<｜end▁of▁sentence｜>")
"""End-of-turn tokens of Qwen2.5 (ChatML) and DeepSeek-R1: nothing after the first one is graded."""


def cut_at_end_of_turn(text: str) -> str:
    """The text before the first end-of-turn token (an invented next turn is not the answer)."""
    end = len(text)
    for token in END_OF_TURN:
        pos = text.find(token, 0, end)
        if pos >= 0:
            end = pos
    return text[:end]


_INVISIBLE = re.compile("[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb]")
"""Unicode format characters (zero-width spaces and joiners, direction marks, the BOM, soft hyphens):
invisible, they say nothing, and scattered inside a formula they only hide it from the comparison."""


def answer_region(text: str, think_prefilled: bool = False) -> str:
    """The text that is graded: up to the first end-of-turn token, after the last `</think>`,
    without invisible format characters (`_INVISIBLE`).

    "" when reasoning never finished: with `think_prefilled` (the prompt opened `<think>`, as
    R1-Distill's template does) a completion without `</think>`; otherwise a `<think>` that never
    closes. R1-style models box candidate answers while thinking; only the final answer counts.
    """
    text = cut_at_end_of_turn(text)
    close = text.rfind(THINK_CLOSE)
    if close >= 0:
        text = text[close + len(THINK_CLOSE) :]
    elif think_prefilled:
        return ""
    if not text.isascii():  # only the graded region: the reasoning before `</think>` is thrown away anyway
        text = _INVISIBLE.sub("", text)
    return "" if THINK_OPEN in text else text


def chat_template_sha256(tokenizer: Any) -> str | None:
    """sha256 of a tokenizer's chat template (None without one): runs record which template
    rendered their prompts, since the template decides the think-block convention above."""
    template = getattr(tokenizer, "chat_template", None)
    if not template:
        return None
    text = template if isinstance(template, str) else json.dumps(template, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def template_prefills_think(tokenizer: Any) -> bool:
    """Does this tokenizer's chat template end the generation prompt with an open `<think>`?

    Renders a one-message conversation with and without `add_generation_prompt` and looks at what
    the generation prompt adds: True for DeepSeek-R1-Distill (`<｜Assistant｜><think>\\n`), False for
    Qwen2.5 (`<|im_start|>assistant\\n`) and for templates that add a closed `<think></think>`.
    A tokenizer without a chat template gives False.
    """
    conversation = [{"role": "user", "content": "1+1?"}]
    try:
        with_prompt = tokenizer.apply_chat_template(conversation, tokenize=False, add_generation_prompt=True)
        without = tokenizer.apply_chat_template(conversation, tokenize=False, add_generation_prompt=False)
    except Exception as e:  # noqa: BLE001 - no chat template set, or one that raises on a plain user turn
        logger.warning("cannot render the chat template (%s: %s); assuming no prefilled <think>", type(e).__name__, e)
        return False
    added = with_prompt[len(without) :] if with_prompt.startswith(without) else with_prompt[-200:]
    opened = added.rfind(THINK_OPEN)
    return opened >= 0 and THINK_CLOSE not in added[opened:]


def final_answer_parts(completion: Any, think_prefilled: bool = False) -> list[str]:
    """The final answer's boxes of a completion's answer region (`final_box_parts`)."""
    return final_box_parts(answer_region(completion_text(completion), think_prefilled))


def extract_answer(completion: Any, think_prefilled: bool = False) -> str | None:
    """The last boxed answer of a completion's final answer region (None when there is none)."""
    return last_boxed(answer_region(completion_text(completion), think_prefilled))


_ARROWS = re.compile(r"\\(?:longrightarrow|rightarrow|Rightarrow|Longrightarrow|to|mapsto)(?![a-zA-Z])|->|=>|→|⟶|⇒|➔|>")
_STEP_WORD = re.compile(r"(?i)\bsteps?\b\.?")
_NOISE = re.compile(r"\\(?:text|mathrm|textbf|mbox)\s*\{([^{}]*)\}|\\(?:left|right)(?![a-zA-Z])|\\quad|\\qquad|\\[,;:! ]|~")
_ORDER_TOKEN = re.compile(r"\d{1,6}")
_ORDER_SEPARATORS = re.compile(r"^[\s,;\[\](){}]*$")


def parse_order(text: str | None) -> list[int] | None:
    """Parse a step order such as `2, 5, 0`, `2 \\to 5 \\to 0`, `2 -> 5`, `Step 2, Step 5`.

    Returns None when anything other than numbers, separators, arrows and the word "Step"
    remains, so prose or formulas never pass as an order.
    """
    if text is None:
        return None
    text = _ARROWS.sub(",", strip_wrappers(text))
    text = _NOISE.sub(lambda m: m.group(1) or " ", text)
    text = _STEP_WORD.sub(" ", text)
    numbers = [int(m.group(0)) for m in _ORDER_TOKEN.finditer(text)]
    rest = _ORDER_TOKEN.sub(" ", text)
    if not numbers or not _ORDER_SEPARATORS.match(rest):
        return None
    return numbers
