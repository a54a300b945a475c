"""Accuracy of the answer checker on labeled (reference, prediction, equal) pairs, next to
plain `mathruler.grader.grade_answer` and (when installed) Math-Verify on the same pairs.

    python -m mrtasks.rewards.accuracy tests/data/equivalence_pairs.jsonl    # tuned on
    python -m mrtasks.rewards.accuracy tests/data/equivalence_heldout.jsonl  # never tuned on
    python -m mrtasks.rewards.accuracy tests/data/equivalence_heldout2.jsonl # never run on before commit

Math-Verify (`pip install math-verify`, Apache-2.0) is measured as graders usually call it:
`verify(parse("$reference$"), parse("\\boxed{prediction}"))`.
"""

from __future__ import annotations

import argparse
import logging
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from mrtasks.jsonl import iter_jsonl
from mrtasks.mathcheck import equal_batch, safe_for_sympy

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
    """Rows with `reference` and `prediction` (strings), `equal` (a JSON true/false) and optionally
    `category`; anything else is a `ValueError` naming the line (a label must never be guessed:
    the string "false" is not false)."""
    rows = []
    for n, row in iter_jsonl(path):  # a line that is not a JSON object raises JSONLError (a ValueError)
        if not {"reference", "prediction", "equal"} <= row.keys():
            raise ValueError(f"{path}:{n}: needs reference, prediction and equal")
        for key in ("reference", "prediction"):
            if not isinstance(row[key], str):
                raise ValueError(f"{path}:{n}: {key} must be a string, got {type(row[key]).__name__} {row[key]!r}")
        if not isinstance(row["equal"], bool):
            raise ValueError(f"{path}:{n}: equal must be true or false (JSON), got {row['equal']!r}")
        rows.append(row)
    if not rows:
        raise ValueError(f"{path}: no pairs (an empty file?)")
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


def math_verify_plain(rows: Sequence[dict]) -> list[bool]:
    """Math-Verify with the reference in `$...$` and the prediction boxed (its usual call)."""
    from math_verify import parse, verify

    out = []
    for r in rows:
        pred = r["prediction"] if "\\boxed" in r["prediction"] else f"\\boxed{{{r['prediction']}}}"
        try:
            out.append(bool(verify(parse(f"${r['reference']}$"), parse(pred))))
        except Exception:  # noqa: BLE001
            out.append(False)
    return out


CHECKERS: dict[str, Callable[[Sequence[dict]], list[bool]]] = {"mrtasks": ours, "mathruler": mathruler_plain}
try:  # optional: measured when installed, never required
    import math_verify  # noqa: F401

    CHECKERS["math-verify"] = math_verify_plain
except ImportError:  # pragma: no cover
    pass


EXIT_OK, EXIT_USAGE, EXIT_INTERRUPTED = 0, 2, 130


def main(argv: Sequence[str] | None = None) -> dict[str, Score]:
    parser = argparse.ArgumentParser(
        prog="python -m mrtasks.rewards.accuracy", description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="exit codes: 0 the report was printed; 2 bad arguments, or a pairs file that is missing, empty or "
               "malformed (the line is named); 130 interrupted",
    )
    parser.add_argument("pairs", type=Path, help="JSONL with reference, prediction (strings) and equal (true/false)")
    parser.add_argument("--show-errors", action="store_true", help="print every misjudged pair")
    parser.add_argument("--by-category", action="store_true", help="accuracy per `category` too")
    parser.add_argument("--core", action="store_true", help="score only rows with `core: true` (see tests/data/PEER_PAIRS.md)")
    parser.add_argument("--checkers", default=",".join(CHECKERS), help=f"comma list of {', '.join(CHECKERS)}")
    args = parser.parse_args(argv)
    names = [c.strip() for c in args.checkers.split(",") if c.strip()]
    if not names:
        parser.error(f"--checkers names no checker; known: {', '.join(CHECKERS)}")
    unknown = [c for c in names if c not in CHECKERS]
    if unknown:
        parser.error(f"--checkers: unknown checker(s) {unknown}; known: {', '.join(CHECKERS)}")
    if not args.pairs.is_file():
        parser.error(f"{args.pairs}: no such file" + (" (it is a folder)" if args.pairs.is_dir() else ""))
    try:
        rows = load_pairs(args.pairs)
    except ValueError as exc:
        parser.error(str(exc))
    if args.core:
        rows = [r for r in rows if r.get("core") is True]
    try:
        return report(rows, names, args)
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        raise SystemExit(EXIT_INTERRUPTED) from None


def report(rows: list[dict], names: list[str], args: argparse.Namespace) -> dict[str, Score]:
    results = {}
    positives = sum(bool(r["equal"]) for r in rows)
    print(f"{len(rows)} pairs ({positives} equal, {len(rows) - positives} not equal)", flush=True)
    print(f"{'checker':<12} {'accuracy':>9} {'false+':>7} {'false-':>7}")
    for name in names:
        verdicts = CHECKERS[name](rows)
        s = results[name] = score(rows, verdicts)
        print(f"{name:<12} {s.accuracy:>9.2%} {s.false_pos:>7} {s.false_neg:>7}   ({s.correct}/{s.total})")
        core = [i for i, r in enumerate(rows) if r.get("core") is True]
        if core and not args.core and len(core) < len(rows):
            c = score([rows[i] for i in core], [verdicts[i] for i in core])
            print(f"  {'core':<10} {c.accuracy:>9.2%} {c.false_pos:>7} {c.false_neg:>7}   ({c.correct}/{c.total})")
        if args.by_category:
            for cat in sorted({str(r.get("category", "")) for r in rows}):
                idx = [i for i, r in enumerate(rows) if str(r.get("category", "")) == cat]
                c = score([rows[i] for i in idx], [verdicts[i] for i in idx])
                print(f"    {cat:<32} {c.total:>4} {c.accuracy:>8.2%} {c.false_pos:>4} {c.false_neg:>4}")
        if args.show_errors:
            for e in s.errors:
                print(f"    [{e.get('category', '')}] ref={e['reference']!r} pred={e['prediction']!r} "
                      f"label={e['equal']} got={e['verdict']}")  # fmt: skip
    return results


if __name__ == "__main__":
    main()
