"""The final answer of a solution: its `\\boxed{}` contents.

Policy: the content `x` of a `\\boxed{x}` is the candidate, never the box itself (the fill format
is `\\boxed{..}`); a box showing the final answer (the content of the last box) is an answer
candidate, ranked first so that a masked row never shows it, unless it only restates a value alone
in its box (`ranking.restated_answer`: no key formula; Masked-Then-Fill masks such boxes itself). An
answer may be a bare number or `\\text`-only (`ANSWER_OK`), which would be junk for any other formula.
"""

from __future__ import annotations


def boxed_spans(text: str, a: int, b: int) -> list[tuple[int, int]]:
    """The inside of every `\\\\boxed{...}` in text[a:b], outermost first."""
    out, i = [], a
    while (i := text.find("\\boxed", i, b)) >= 0:
        k = text.find("{", i + 6, b)
        if k < 0 or text[i + 6 : k].strip():
            i += 6
            continue
        d, e = 0, k
        while e < b:
            d += (text[e] == "{") - (text[e] == "}")
            if d == 0:
                break
            e += 1
        if e >= b:
            break
        out.append((k + 1, e))
        i = k + 1
    return out


ANSWER_OK = (None, "too_short", "bare_number_or_unit", "text_only")  # an answer may be a bare number
