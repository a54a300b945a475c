"""Accuracy of the answer checker on labeled (reference, prediction, equal) pairs, next to
plain `mathruler.grader.grade_answer` on the same pairs.

    python -m mrtasks.rewards.accuracy tests/data/equivalence_pairs.jsonl
"""

from __future__ import annotations

import argparse
import json
import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mrtasks.rewards.equivalence import equal_batch, safe_for_sympy

logger = logging.getLogger(__name__)


@dataclass
class Score:
    """Confusion counts; `errors` keeps the misjudged pairs for inspection."""

    total: int = 0
    correct: int = 0
    false_pos: int = 0
    false_neg: int = 0
    errors: list[dict] = field(default_factory=list)

    @property
    def accuracy(self) -> float:
        return self.correct / self.total if self.total else 0.0


def load_pairs(path: str | Path) -> list[dict]:
    """Rows with `reference`, `prediction`, `equal` (bool) and optionally `category`."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            row = json.loads(line)
            if not {"reference", "prediction", "equal"} <= row.keys():
                raise ValueError(f"{path}:{n}: needs reference, prediction and equal")
            rows.append(row)
    return rows


def score(rows: Sequence[dict], verdicts: Sequence[bool]) -> Score:
    out = Score()
    for row, verdict in zip(rows, verdicts):
        out.total += 1
        if bool(verdict) == bool(row["equal"]):
            out.correct += 1
            continue
        if verdict:
            out.false_pos += 1
        else:
            out.false_neg += 1
        out.errors.append({**row, "verdict": bool(verdict)})
    return out


def ours(rows: Sequence[dict]) -> list[bool]:
    return equal_batch([(r["prediction"], r["reference"]) for r in rows])


def mathruler_plain(rows: Sequence[dict]) -> list[bool]:
    """MathRuler as most pipelines call it. Rows it would `eval` unsafely count as "no"
    instead of running (this tool does not execute fixture text)."""
    from mathruler.grader import grade_answer

    out = []
    for r in rows:
        if not (safe_for_sympy(r["prediction"]) or r["prediction"].isalnum()):
            out.append(False)
            continue
        try:
            out.append(bool(grade_answer(r["prediction"], r["reference"])))
        except Exception:  # noqa: BLE001
            out.append(False)
    return out


CHECKERS: dict[str, Callable[[Sequence[dict]], list[bool]]] = {"mrtasks": ours, "mathruler": mathruler_plain}


def main(argv: Sequence[str] | None = None) -> dict[str, Score]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("pairs", type=Path, help="JSONL with reference, prediction, equal")
    parser.add_argument("--show-errors", action="store_true", help="print every misjudged pair")
    args = parser.parse_args(argv)
    rows = load_pairs(args.pairs)
    results = {}
    positives = sum(bool(r["equal"]) for r in rows)
    print(f"{len(rows)} pairs ({positives} equal, {len(rows) - positives} not equal)")
    print(f"{'checker':<10} {'accuracy':>9} {'false+':>7} {'false-':>7}")
    for name, checker in CHECKERS.items():
        s = results[name] = score(rows, checker(rows))
        print(f"{name:<10} {s.accuracy:>9.2%} {s.false_pos:>7} {s.false_neg:>7}")
        if args.show_errors:
            for e in s.errors:
                print(f"    [{e.get('category', '')}] ref={e['reference']!r} pred={e['prediction']!r} "
                      f"label={e['equal']} got={e['verdict']}")  # fmt: skip
    return results


if __name__ == "__main__":
    main()
