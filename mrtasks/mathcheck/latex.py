"""LaTeX structure the checker reads before any mathematics: braces, boxes, top-level splits, wrappers.

Policy: pure string work on untrusted text, linear (or near-linear) time, no evaluation, no
exceptions on any `str`.

- Braces: `{}` match by depth; an unclosed `{` closes nothing.
- Boxes: `\\boxed{...}`, `\\fbox{...}` and `\\boxed 5` (the next token). Only the last
  `MAX_BOX_TRIES` box commands of a text are scanned, so a text of many boxes costs a bounded
  number of brace scans. The final answer's boxes are the last closed box and the boxes right
  before it that only "and", "or", commas or math delimiters separate from it.
- Top-level split: on a separator outside every `{}`, `()` and `[]` group (one depth counter
  for all kinds, so half-open intervals like `[0, 1)` balance); `\\;` and `\\,` are spacing.
- Wrappers: whitespace, math delimiters, a whole-answer `\\text{...}`, `\\displaystyle` and
  trailing periods surround an answer without changing it; at most `MAX_WRAPPERS` are removed.
"""

from __future__ import annotations

import re

from mrtasks.text import MATH_DELIMITERS

BOX_COMMANDS = ("\\boxed", "\\fbox")
MAX_BOX_TRIES = 8
"""How many trailing `\\boxed` occurrences to try when the last ones never close."""
OPENERS, CLOSERS = "{([", "})]"

_BRACE = re.compile(r"[{}]")


def closing_brace(text: str, open_pos: int) -> int:
    """Index of the `}` matching the `{` at `open_pos`, or -1."""
    if text.startswith("{", open_pos):
        close = text.find("}", open_pos + 1)
        if close >= 0 and text.find("{", open_pos + 1, close) < 0:
            return close  # no group inside (`\\boxed{12}`): the first `}` closes it
    depth = 0
    for m in _BRACE.finditer(text, open_pos):
        if m.group(0) == "{":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return m.start()
    return -1


def balanced(text: str) -> bool:
    """Are `{}` balanced? (An unclosed `{5` is not the answer `5`.)"""
    if "{" not in text and "}" not in text:
        return True
    depth = 0
    for m in _BRACE.finditer(text):  # visits braces only, not every character
        if m.group(0) == "{":
            depth += 1
        else:
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def depth_scan(text: str) -> list[int]:
    """Bracket depth before each character (`{}`, `()`, `[]` share one counter)."""
    depths, d = [], 0
    for c in text:
        if c in "})]":
            d = max(d - 1, 0)
        depths.append(d)
        if c in "{([":
            d += 1
    return depths


def wrapped(text: str, left: str, right: str) -> bool:
    """Does the bracket opening at 0 close exactly at the end?"""
    if not (text.startswith(left) and text.endswith(right)) or len(text) < len(left) + len(right):
        return False
    depth = 0
    for i, c in enumerate(text):
        if c in "{([":
            depth += 1
        elif c in "})]":
            depth -= 1
            if depth == 0 and i < len(text) - 1:
                return False
    return True


# --- boxes ---------------------------------------------------------------------------------


def _box_span(text: str, start: int) -> tuple[str, int] | None:
    """(argument, index after it) of a box command whose name ends right before `start`."""
    i = start
    while i < len(text) and text[i] in " \t":
        i += 1
    if i < len(text) and text[i] == "{":
        end = closing_brace(text, i)
        return None if end < 0 else (text[i + 1 : end], end + 1)
    if i == start:  # `\\boxedx` is another command, `\\boxed 5` needs the space
        return None
    m = re.match(r"[^\s$]+", text[i:])  # `\\boxed 5`: the next token
    return (m.group(0), i + m.end()) if m else None


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


def collect_boxes(text: str) -> str:
    """Several `\\boxed{}` in one answer (`\\boxed{3}, \\boxed{4}`) -> their contents as a list."""
    if "\\boxed" not in text and "\\fbox" not in text:
        return text
    parts, pos = [], 0
    box = re.compile(r"\\(?:boxed|fbox)\s*\{")
    while len(parts) < 50:
        m = box.search(text, pos)
        if not m:
            break
        end = closing_brace(text, m.end() - 1)
        if end < 0:
            break
        parts.append(text[m.end() : end])
        pos = end + 1
    return ", ".join(parts) if parts else text


# --- splits --------------------------------------------------------------------------------

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


def split_at_depth0(text: str, pattern: re.Pattern) -> tuple[list[str], list[str]]:
    """Split on a regex at bracket depth 0; returns (parts, separators)."""
    if not pattern.search(text):
        return [text], []
    parts, seps, depth, last, i = [], [], 0, 0, 0
    while i < len(text):
        c = text[i]
        if c in "{([":
            depth += 1
        elif c in "})]":
            depth = max(depth - 1, 0)
        elif depth == 0:
            m = pattern.match(text, i)
            if m and m.end() > i:
                parts.append(text[last:i])
                seps.append(m.group(0))
                last = i = m.end()
                continue
        i += 1
    parts.append(text[last:])
    return parts, seps


# --- wrappers ------------------------------------------------------------------------------

_WRAPPERS = MATH_DELIMITERS
MAX_WRAPPERS = 16
"""At most this many wrappers are removed from one answer (more is not an answer)."""
_TEXT_CMD = re.compile(r"^\\(?:text|textbf|textrm|mathrm|mathbf|mbox|textnormal)\s*\{")
_WRAPPER_START = frozenset(left[0] for left, _ in _WRAPPERS) | {"\\"}  # `\\displaystyle`, `\\text{` too


def strip_wrappers(text: str) -> str:
    """Remove what surrounds an answer without changing it: whitespace, math delimiters,
    a whole-answer `\\text{...}`, `\\displaystyle`, a trailing period."""
    if not text or (text[0] not in _WRAPPER_START and not text[0].isspace() and not text[-1].isspace() and text[-1] != "."):
        return text  # nothing that a pass below removes can start or end this text (the common case)
    prev = None
    for _ in range(MAX_WRAPPERS):  # bounded: 10^4 nested `\\text{` must not cost 10^4 brace scans
        if text == prev:
            break
        prev = text
        text = text.strip()
        if text.endswith(".") and len(text) > 1:
            text = text.rstrip(".").rstrip() or text[:1]
        for left, right in _WRAPPERS:
            if len(text) >= len(left) + len(right) and text.startswith(left) and text.endswith(right):
                text = text[len(left) : len(text) - len(right)]
                break
        if text.startswith("\\displaystyle"):
            text = text[len("\\displaystyle") :]
        m = _TEXT_CMD.match(text)
        if m and closing_brace(text, m.end() - 1) == len(text) - 1:
            text = text[m.end() : -1]
    return text
