"""`python -m eval.compare BASE.json GRPO.json MR.json`: the paper's Table 1 from run summaries.

Prints one Markdown table with a column per run inside each Pass@k group; every column after
the reference (by default the second of three runs, the +GRPO column) shows its relative gain
over it, as the paper does for +MR-RLVR; the Average row's gain is the mean of the per-benchmark
gains (the paper's definition). Optionally draws all runs' Pass@k curves in one PNG.
"""

from __future__ import annotations

import argparse
import json
import logging
from pathlib import Path
from typing import Any

from eval.tables import AVERAGE_NOTE, comparison_table, settings_line

logger = logging.getLogger("eval.compare")

PAPER_LABELS = ("Base", "+GRPO", "+MR-RLVR")
SETTINGS = ("n", "temperature", "top_p", "top_k", "max_new_tokens", "stop_token_ids")


def load_summary(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    try:
        summary = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as e:
        raise SystemExit(f"error: cannot read summary {path}: {e}") from None
    if not isinstance(summary, dict) or "benchmarks" not in summary or "k" not in summary:
        raise SystemExit(f"error: {path} is not a summary.json written by `python -m eval.run`")
    return summary


def default_labels(paths: list[str]) -> list[str]:
    return list(PAPER_LABELS) if len(paths) == 3 else [Path(p).parent.name or Path(p).stem for p in paths]


def default_reference(count: int) -> int:
    """The +GRPO column when three runs are given (Base, GRPO, MR-RLVR), else the first."""
    return 1 if count >= 3 else 0


def warn_on_mismatch(summaries: list[dict[str, Any]], labels: list[str]) -> None:
    """Runs sampled with different settings are not comparable: say so, loudly but without failing."""
    first = summaries[0]["generation"]
    for summary, label in zip(summaries[1:], labels[1:]):
        diff = [k for k in SETTINGS if summary["generation"].get(k) != first.get(k)]
        if diff:
            logger.warning("%s differs from %s in %s", label, labels[0], ", ".join(diff))


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m eval.compare",
        description="Compare eval.run summaries in the paper's Table 1 layout (relative gains over a reference run).",
    )
    p.add_argument("summaries", nargs="+", help="summary.json files, in column order (e.g. BASE GRPO MR)")
    p.add_argument("--labels", nargs="+", help="column labels (default for three runs: Base +GRPO +MR-RLVR)")
    p.add_argument("--reference", type=int,
                   help="0-based index of the run that later columns are compared to "
                        "(default: 1 for three or more runs, else 0)")
    p.add_argument("--output", help="also write the table to this Markdown file")
    p.add_argument("--plot", help="also draw every run's Pass@k curves to this PNG")
    return p


def main(argv: list[str] | None = None) -> None:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    parser = build_parser()
    args = parser.parse_args(argv)
    summaries = [load_summary(p) for p in args.summaries]
    labels = args.labels or default_labels(args.summaries)
    if len(labels) != len(summaries):
        parser.error(f"{len(summaries)} summaries but {len(labels)} labels")
    reference = default_reference(len(summaries)) if args.reference is None else args.reference
    if not 0 <= reference < len(summaries):
        parser.error(f"--reference must be in [0, {len(summaries) - 1}]")
    warn_on_mismatch(summaries, labels)
    table = comparison_table(summaries, labels, reference)
    notes = "\n".join(f"- {label}: {s['model']['name_or_path']} ({settings_line(s)})"
                      for label, s in zip(labels, summaries))
    report = f"{table}\nRelative gains are over {labels[reference]}. {AVERAGE_NOTE}\n\n{notes}\n"
    print(report)
    if args.output:
        Path(args.output).write_text(report)
    if args.plot:
        from eval.plots import plot_passk_curves

        plot_passk_curves(dict(zip(labels, summaries)), args.plot)


if __name__ == "__main__":
    main()
