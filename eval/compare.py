"""`python -m eval.compare BASE.json GRPO.json MR.json`: the paper's Table 1 from run summaries.

Prints one Markdown table with a column per run inside each Pass@k group; every column after
the reference (by default the second of three runs, the +GRPO column) shows its relative gain
over it, as the paper does for +MR-RLVR; the Average row's gain is the mean of the per-benchmark
gains (the paper's definition). Optionally draws all runs' Pass@k curves in one PNG.

Runs over different problem sets (other benchmarks, another `--max-problems`, other problem ids)
are not comparable: that is an error naming the benchmark. Runs sampled with other settings
(n, temperature, max_new_tokens, ...) are compared with a warning naming the settings.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from eval.tables import AVERAGE_NOTE, comparison_table, settings_line

logger = logging.getLogger("eval.compare")

PAPER_LABELS = ("Base", "+GRPO", "+MR-RLVR")
SETTINGS = ("n", "temperature", "top_p", "top_k", "max_new_tokens", "stop_token_ids")


EXIT_OK, EXIT_USAGE, EXIT_OUTPUT = 0, 2, 4
EXIT_CODES = {
    EXIT_OK: "the table was printed (and written)",
    EXIT_USAGE: "bad arguments, a summary that is missing or not an eval.run summary.json, or runs over "
                "different problem sets",
    EXIT_OUTPUT: "--output or --plot cannot be written (a folder, a missing or read-only parent)",
}


class CompareError(Exception):
    """An everyday failure: one line on stderr and its exit code."""

    def __init__(self, message: str, code: int = EXIT_USAGE):
        super().__init__(message)
        self.code = code


def load_summary(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    try:
        text = path.read_bytes().decode("utf-8")
        summary = json.loads(text)
    except OSError as e:
        raise CompareError(f"cannot read summary {path}: {e.strerror or e}") from None
    except UnicodeDecodeError:
        raise CompareError(f"{path} is not a summary.json written by `python -m eval.run` (not UTF-8 text)") from None
    except json.JSONDecodeError as e:
        raise CompareError(f"{path} is not a summary.json written by `python -m eval.run` (not JSON: {e})") from None
    if not isinstance(summary, dict) or "benchmarks" not in summary or "k" not in summary:
        raise CompareError(f"{path} is not a summary.json written by `python -m eval.run`")
    return summary


def problem_set_mismatch(summaries: list[dict[str, Any]], labels: list[str]) -> str | None:
    """Why these runs are not over the same problems (benchmarks, counts, problem ids), or None."""
    first, name0 = summaries[0], labels[0]
    for summary, label in zip(summaries[1:], labels[1:]):
        a, b = first["benchmarks"], summary["benchmarks"]
        if set(a) != set(b):
            return f"{label} covers {sorted(b)} but {name0} covers {sorted(a)}"
        for bench in a:
            na, nb = a[bench].get("num_problems"), b[bench].get("num_problems")
            if na is not None and nb is not None and na != nb:
                return f"{bench}: {label} has {nb} problems, {name0} has {na} (another --max-problems?)"
            ia, ib = a[bench].get("correct_counts"), b[bench].get("correct_counts")
            if isinstance(ia, dict) and isinstance(ib, dict) and set(ia) != set(ib):
                return f"{bench}: {label} and {name0} were run on different problems"
    return None


def check_writable(option: str, path: str | None) -> None:
    """Refuse an --output/--plot path that cannot be written, before anything is printed."""
    if not path:
        return
    p = Path(path)
    if p.is_dir():
        raise CompareError(f"{option} {p} is a folder; name a file", EXIT_OUTPUT)
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise CompareError(f"{option} {p}: the folder {parent} does not exist", EXIT_OUTPUT)
    if not os.access(parent, os.W_OK) or (p.exists() and not os.access(p, os.W_OK)):
        raise CompareError(f"{option} {p} is not writable", EXIT_OUTPUT)


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
        epilog="exit codes: " + "; ".join(f"{code} {text}" for code, text in EXIT_CODES.items()),
    )
    p.add_argument("summaries", nargs="+", help="summary.json files, in column order (e.g. BASE GRPO MR)")
    p.add_argument("--labels", nargs="+", help="column labels (default for three runs: Base +GRPO +MR-RLVR)")
    p.add_argument("--reference", type=int,
                   help="0-based index of the run that later columns are compared to "
                        "(default: 1 for three or more runs, else 0)")
    p.add_argument("--output", help="also write the table to this Markdown file")
    p.add_argument("--plot", help="also draw every run's Pass@k curves to this PNG")
    return p


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        compare(args, parser)
    except CompareError as e:
        print(f"error: {e}", file=sys.stderr)
        return e.code
    return EXIT_OK


def compare(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    summaries = [load_summary(p) for p in args.summaries]
    labels = args.labels or default_labels(args.summaries)
    if len(labels) != len(summaries):
        parser.error(f"{len(summaries)} summaries but {len(labels)} labels")
    reference = default_reference(len(summaries)) if args.reference is None else args.reference
    if not 0 <= reference < len(summaries):
        parser.error(f"--reference must be in [0, {len(summaries) - 1}]")
    mismatch = problem_set_mismatch(summaries, labels)
    if mismatch:
        raise CompareError(f"the runs are not over the same problems: {mismatch}; rerun them with the same "
                           "--benchmarks and --max-problems")
    check_writable("--output", args.output)
    check_writable("--plot", args.plot)
    warn_on_mismatch(summaries, labels)
    table = comparison_table(summaries, labels, reference)
    notes = "\n".join(f"- {label}: {s['model']['name_or_path']} ({settings_line(s)})"
                      for label, s in zip(labels, summaries))
    report = f"{table}\nRelative gains are over {labels[reference]}. {AVERAGE_NOTE}\n\n{notes}\n"
    print(report)
    try:
        if args.output:
            Path(args.output).write_text(report)
        if args.plot:
            from eval.plots import plot_passk_curves

            plot_passk_curves(dict(zip(labels, summaries)), args.plot)
    except OSError as e:
        raise CompareError(f"cannot write {e.filename or args.output}: {e.strerror or e}", EXIT_OUTPUT) from None


if __name__ == "__main__":
    sys.exit(main())
