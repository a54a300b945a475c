"""Text helpers every layer shares: math delimiters and R1-style think blocks.

`strip_think` is for trusted text (source traces, annotator answers): it keeps what follows the
reasoning. Rewards grade untrusted completions with the stricter
`mrtasks.rewards.parsing.answer_region`, where a think block that never closes means no answer.
"""

from __future__ import annotations

import re

MATH_DELIMITERS: tuple[tuple[str, str], ...] = (("$$", "$$"), ("\\[", "\\]"), ("\\(", "\\)"), ("$", "$"))
"""Display before inline: `$$` must be tried before `$`."""

_THINK = re.compile(r"<think>.*?</think>", re.DOTALL | re.IGNORECASE)


def strip_math_delimiters(s: str) -> str:
    """`$x^2$` -> `x^2` (also `$$`, `\\[ \\]`, `\\( \\)`), repeatedly; inner text is kept as is."""
    s = s.strip()
    changed = True
    while changed:
        changed = False
        for open_, close in MATH_DELIMITERS:
            if s.startswith(open_) and s.endswith(close) and len(s) > len(open_) + len(close):
                s, changed = s[len(open_) : -len(close)].strip(), True
                break
    return s


def strip_think(text: str) -> str:
    """Drop R1-style reasoning: `<think>...</think>` blocks, or everything before a lone `</think>`."""
    text = _THINK.sub("", text)
    closing = text.lower().rfind("</think>")
    return text[closing + len("</think>") :] if closing != -1 else text
