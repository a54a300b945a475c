"""Write tests/data/equivalence_heldout2.jsonl: a second held-out set, made AFTER the checker's
issue-11 rules and committed BEFORE the checker was ever run on it (git log shows the order).
Its score is reported as is; nothing is tuned on it.

    python tests/data/make_equivalence_heldout2.py   # from the repo root; deterministic

References are every OlympiadBench final answer in ../shared/data/corpora (expressions, tuples,
lists, intervals, equations, numbers). Each gets one equal rewrite and one different rewrite,
chosen by these rules (first that applies, in a seeded random order):

equal:     notation (`\\frac` -> `\\dfrac`, `\\cdot` -> `\\times`), spacing removed, inline math
           wrappers, reversed order of a top-level list, the unit after a value, `x \\in` before
           an interval
different: one number changed (not in a subscript), the last list item dropped, a tuple's first
           two entries swapped, the whole answer negated, `n` replaced by `(n+1)`
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHARED = HERE.parents[1].parent / "shared" / "data"
OUT = HERE / "equivalence_heldout2.jsonl"

NUMBER = re.compile(r"(?<![_\d.{\\a-zA-Z])\d+")


def top_level_commas(text: str) -> list[str]:
    parts, depth, last = [], 0, 0
    for i, c in enumerate(text):
        if c in "{([":
            depth += 1
        elif c in "})]":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[last:i])
            last = i + 1
    return [*parts, text[last:]]


def clean(answer: str) -> str:
    return answer.strip().strip(".").strip()


def no_spaces(text: str) -> str:
    """Spacing removed, except where it ends a command (`\\cdot n` must not become `\\cdotn`)."""
    text = re.sub(r"(\\[a-zA-Z]+)\s+(?=[a-zA-Z])", "\\1\x00", text)
    return re.sub(r"\s+", "", text).replace("\x00", " ")


def equal_rewrites(ref: str, unit: str | None, answer_type: str) -> list[str]:
    out = []
    bare = ref.replace("$", "")
    if "\\frac" in bare:
        out.append(bare.replace("\\frac", "\\dfrac"))
    if "\\cdot" in bare:
        out.append(bare.replace("\\cdot", "\\times"))
    if " " in bare:
        out.append(no_spaces(bare))
    out.append(f"\\({bare}\\)")
    items = top_level_commas(bare)
    if len(items) > 1 and len({i.strip() for i in items}) == len(items):
        out.append(", ".join(i.strip() for i in reversed(items)))
    if unit and re.fullmatch(r"[A-Za-z/ ]+", unit) and re.fullmatch(r"-?\d+(?:\.\d+)?", bare):
        out.append(f"{bare} \\text{{ {unit} }}")
    if answer_type == "Interval" and bare.startswith(("(", "[")) and bare.endswith((")", "]")):
        out.append(f"x \\in {bare}")
    return out


def different_rewrites(ref: str, rng: random.Random) -> list[str]:
    out = []
    bare = ref.replace("$", "")
    nums = list(NUMBER.finditer(bare))
    if nums:
        m = rng.choice(nums)
        out.append(bare[: m.start()] + str(int(m.group(0)) + 1) + bare[m.end() :])
    items = top_level_commas(bare)
    if len(items) > 1 and len({i.strip() for i in items}) == len(items):
        out.append(",".join(items[:-1]))
    if bare.startswith("(") and bare.endswith(")") and len(items) == 1:
        inner = top_level_commas(bare[1:-1])
        if len(inner) > 1 and inner[0].strip() != inner[1].strip():
            out.append("(" + ",".join([inner[1], inner[0], *inner[2:]]) + ")")
    if len(items) == 1 and "=" not in bare and not bare.startswith(("(", "[")) and bare.strip() not in ("0", "-0"):
        out.append(f"-\\left({bare}\\right)")
    if re.search(r"(?<![a-zA-Z\\])n(?![a-zA-Z])", bare) and "=" not in bare:
        out.append(re.sub(r"(?<![a-zA-Z\\])n(?![a-zA-Z])", "(n+1)", bare))
    return out


def main() -> None:
    rng = random.Random(2)
    rows = []
    with open(SHARED / "corpora" / "olympiadbench_oe_en.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            if not row.get("final_answer"):
                continue
            ref = clean(", ".join(row["final_answer"]))
            if re.search(r"[a-zA-Z]{5,}", re.sub(r"\\[a-zA-Z]+", "", ref)):
                continue  # prose answers ("where b is an arbitrary integer")
            same, diff = equal_rewrites(ref, row.get("unit"), row["answer_type"]), different_rewrites(ref, rng)
            if same:
                rows.append({"reference": ref, "prediction": rng.choice(same), "equal": True,
                             "category": row["answer_type"], "source": f"olympiadbench:{row['id']}"})  # fmt: skip
            if diff:
                rows.append({"reference": ref, "prediction": rng.choice(diff), "equal": False,
                             "category": row["answer_type"], "source": f"olympiadbench:{row['id']}"})  # fmt: skip
    with open(OUT, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    pos = sum(r["equal"] for r in rows)
    print(f"{OUT.name}: {len(rows)} pairs, {pos} equal, {len(rows) - pos} not equal")


if __name__ == "__main__":
    main()
