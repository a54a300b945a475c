"""Pull the graded text out of a completion: the final answer region, the last boxed answer,
its top-level parts and step orders.

Everything here is pure string work on untrusted text: linear (or near-linear) time, no
evaluation, no exceptions on any `str`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import re
from typing import Any

from mrtasks.text import MATH_DELIMITERS

logger = logging.getLogger(__name__)

THINK_OPEN = "<think>"
THINK_CLOSE = "</think>"
BOX_COMMANDS = ("\\boxed", "\\fbox")
MAX_BOX_TRIES = 8
"""How many trailing `\\boxed` occurrences to try when the last ones never close."""
OPENERS, CLOSERS = "{([", "})]"


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


def answer_region(text: str, think_prefilled: bool = False) -> str:
    """The text that is graded: up to the first end-of-turn token, after the last `</think>`.

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


_BRACE = re.compile(r"[{}]")


def _closing_brace(text: str, open_pos: int) -> int:
    """Index of the `}` matching the `{` at `open_pos`, or -1."""
    depth = 0
    for m in _BRACE.finditer(text, open_pos):
        if m.group(0) == "{":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return m.start()
    return -1


def _box_span(text: str, start: int) -> tuple[str, int] | None:
    """(argument, index after it) of a box command whose name ends right before `start`."""
    i = start
    while i < len(text) and text[i] in " \t":
        i += 1
    if i < len(text) and text[i] == "{":
        end = _closing_brace(text, i)
        return None if end < 0 else (text[i + 1 : end], end + 1)
    if i == start:  # `\\boxedx` is another command, `\\boxed 5` needs the space
        return None
    m = re.match(r"[^\s$]+", text[i:])  # `\\boxed 5`: the next token
    return (m.group(0), i + m.end()) if m else None


def _box_argument(text: str, start: int) -> str | None:
    """The argument of a box command whose name ends right before `start`."""
    span = _box_span(text, start)
    return None if span is None else span[0]


def _closed_boxes(text: str) -> list[tuple[int, int, str]]:
    """(start, end, content) of the last `MAX_BOX_TRIES` box commands, last first; None content
    for one that never closes. Bounded: at most MAX_BOX_TRIES brace scans of the text."""
    candidates: list[tuple[int, int]] = []
    for cmd in BOX_COMMANDS:
        pos = len(text)
        for _ in range(MAX_BOX_TRIES):
            pos = text.rfind(cmd, 0, pos)
            if pos < 0:
                break
            candidates.append((pos, pos + len(cmd)))
    out = []
    for pos, arg_start in sorted(candidates, reverse=True)[:MAX_BOX_TRIES]:
        span = _box_span(text, arg_start)
        out.append((pos, span[1], span[0]) if span else (pos, -1, None))
    return out


def last_boxed(text: str) -> str | None:
    """Content of the last `\\boxed{...}` / `\\fbox{...}` / `\\boxed 5` that closes, else None.

    Nested braces are matched; the content is stripped of surrounding whitespace.
    """
    for _pos, _end, arg in _closed_boxes(text):
        if arg is not None:
            return arg.strip()
    return None


_BOX_JOINER = re.compile(r"(?:[\s,;$.]|\\[()\[\]]|\\q?quad|\\text\s*\{\s*(?:and|or)\s*\}|\b(?:and|or)\b)*")
MAX_JOIN_GAP = 200


def final_box_parts(text: str) -> list[str]:
    """The contents of the final answer's boxes: the last closed box together with the boxes right
    before it that only "and", "or", commas or math delimiters separate from it (`\\boxed{3},
    \\boxed{4}` -> `[3, 4]`); a box followed by more reasoning never joins. Bounded like `last_boxed`."""
    boxes = _closed_boxes(text)
    while boxes and boxes[0][2] is None:
        boxes.pop(0)
    if not boxes:
        return []
    run_start, parts = boxes[0][0], [boxes[0][2].strip()]
    for start, end, arg in boxes[1:]:
        gap = text[end:run_start] if 0 <= end <= run_start else None
        if arg is None or gap is None or len(gap) > MAX_JOIN_GAP or not _BOX_JOINER.fullmatch(gap):
            break
        parts.insert(0, arg.strip())
        run_start = start
    return parts


def final_boxes(text: str) -> str | None:
    """`final_box_parts` joined as one answer (`3, 4`); None without a closed box."""
    parts = final_box_parts(text)
    return ", ".join(parts) if parts else None


def final_answer_parts(completion: Any, think_prefilled: bool = False) -> list[str]:
    """The final answer's boxes of a completion's answer region (`final_box_parts`)."""
    return final_box_parts(answer_region(completion_text(completion), think_prefilled))


def extract_answer(completion: Any, think_prefilled: bool = False) -> str | None:
    """The last boxed answer of a completion's final answer region (None when there is none)."""
    return last_boxed(answer_region(completion_text(completion), think_prefilled))


_SPLIT_MARKS: dict[str, re.Pattern[str]] = {}


def split_top_level(text: str, sep: str = ";") -> list[str]:
    """Split on `sep` outside any `{}`, `()` or `[]` group; parts are stripped.

    One depth counter serves all bracket kinds, so half-open intervals like `[0, 1)` balance.
    """
    if sep not in text:
        return [text.strip()]
    marks = _SPLIT_MARKS.get(sep)
    if marks is None:
        marks = _SPLIT_MARKS[sep] = re.compile("[" + re.escape(OPENERS + CLOSERS + sep) + "]")
    parts, depth, last = [], 0, 0
    for m in marks.finditer(text):  # visits brackets and separators only, not every character
        c, i = m.group(), m.start()
        if c in OPENERS:
            depth += 1
        elif c in CLOSERS:
            depth = max(depth - 1, 0)
        elif depth == 0 and not (i and text[i - 1] == "\\"):  # `\;`, `\,` are spacing
            parts.append(text[last:i].strip())
            last = i + 1
    parts.append(text[last:].strip())
    return parts


_WRAPPERS = MATH_DELIMITERS
_TEXT_CMD = re.compile(r"^\\(?:text|textbf|textrm|mathrm|mathbf|mbox|textnormal)\s*\{")


def strip_wrappers(text: str) -> str:
    """Remove what surrounds an answer without changing it: whitespace, math delimiters,
    a whole-answer `\\text{...}`, `\\displaystyle`, a trailing period."""
    prev = None
    while text != prev:
        prev = text
        text = text.strip()
        if text.endswith(".") and len(text) > 1:
            text = text[:-1].rstrip()
        for left, right in _WRAPPERS:
            if len(text) >= len(left) + len(right) and text.startswith(left) and text.endswith(right):
                text = text[len(left) : len(text) - len(right)]
                break
        if text.startswith("\\displaystyle"):
            text = text[len("\\displaystyle") :]
        m = _TEXT_CMD.match(text)
        if m and _closing_brace(text, m.end() - 1) == len(text) - 1:
            text = text[m.end() : -1]
    return text


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
