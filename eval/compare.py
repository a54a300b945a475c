"""`python -m eval.compare BASE.json GRPO.json MR.json`: the paper's Table 1 from run summaries.

Prints one Markdown table with a column per run inside each Pass@k group; every column after
the reference (by default the second of three runs, the +GRPO column) shows its relative gain
over it, as the paper does for +MR-RLVR; the Average row's gain is the mean of the per-benchmark
gains (the paper's definition). Optionally draws all runs' Pass@k curves in one PNG.

Runs over different problem sets (other benchmarks, another `--max-problems`, other problem ids,
or benchmark files of other contents: both summaries record the file's sha256 and they differ)
are not comparable: that is an error naming the benchmark. Runs sampled with other settings
(n, temperature, max_new_tokens, ...) are compared with a warning naming the settings.

Each summary is checked when it is read (`validate_summary`): the structure eval.run writes, and
every Pass@k a number in [0, 1]; a hand-edited file that breaks it is an error naming the file
and the field, e.g. `benchmarks.aime24.pass@k.1`.

Outputs never replace a file of the user's (`mrtasks.output.check_output_file`): `--output`
writes a Markdown file whose first line is `OUTPUT_MARKER` (an HTML comment, invisible when
rendered), and only a file starting with it is replaced; `--plot` (.png, .pdf or .svg) writes a
figure carrying `eval.plots.PLOT_MARKER` in its metadata, and only such a figure is replaced.
Neither may lie inside a dataset build, a model folder or another command's output.
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
from pathlib import Path
from typing import Any

from eval.plots import PLOT_FORMATS, is_our_plot, plot_format
from eval.tables import AVERAGE_NOTE, comparison_table, settings_line
from mrtasks.output import OutputError, check_output_file, write_output_file

logger = logging.getLogger("eval.compare")

PAPER_LABELS = ("Base", "+GRPO", "+MR-RLVR")
SETTINGS = ("n", "temperature", "top_p", "top_k", "max_new_tokens", "stop_token_ids")
COMMAND = "eval.compare"
# The first line of every --output file: how eval.compare knows a file it may replace.
OUTPUT_MARKER = "<!-- written by python -m eval.compare; rerunning it replaces this file -->"

EXIT_OK, EXIT_USAGE, EXIT_OUTPUT = 0, 2, 4
EXIT_CODES = {
    EXIT_OK: "the table was printed (and written)",
    EXIT_USAGE: "bad arguments (a --plot extension other than " + ", ".join(f".{f}" for f in PLOT_FORMATS)
                + "), a summary that is missing, not an eval.run summary.json or hand-edited out of shape (a "
                "Pass@k outside [0, 1], a missing field), or runs over different problem sets (other "
                "benchmarks, problem counts, problem ids or benchmark file contents)",
    EXIT_OUTPUT: "--output or --plot refused: a folder, a missing or read-only parent, inside a dataset build, a "
                 "model folder or another command's output, or an existing file eval.compare did not write",
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
    except (json.JSONDecodeError, RecursionError) as e:
        raise CompareError(f"{path} is not a summary.json written by `python -m eval.run` (not JSON: {e})") from None
    if not isinstance(summary, dict) or "benchmarks" not in summary or "k" not in summary:
        raise CompareError(f"{path} is not a summary.json written by `python -m eval.run`")
    problem = validate_summary(summary)
    if problem:
        raise CompareError(f"{path}: {problem}; not a summary.json as `python -m eval.run` writes it")
    return summary


def _shown(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False) if not isinstance(value, float) else repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _fractions(block: Any, field: str) -> str | None:
    """`block` must map k ("1", "5", ...) to a number in [0, 1]."""
    if not isinstance(block, dict):
        return f"`{field}` must be an object of k -> Pass@k, got {_shown(block)}"
    for k, value in block.items():
        if not (k.isascii() and k.isdigit() and int(k) >= 1):
            return f"`{field}` has the key {_shown(k)}, not a k >= 1"
        ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
        if not ok or not 0 <= value <= 1:
            return f"`{field}.{k}` must be a number in [0, 1] (a fraction, not %), got {_shown(value)}"
    return None


def validate_summary(summary: dict[str, Any]) -> str | None:
    """What makes `summary` unusable for the table and the plot (naming the field), or None.

    Checks the fields eval.compare reads: `k`, `model.name_or_path`, `generation` (the settings
    line), `prompt.style`, and per benchmark `pass@k` and `curve` (numbers in [0, 1]),
    `num_problems`, `correct_counts` and `source`; `average.pass@k` likewise."""
    ks = summary["k"]
    if not isinstance(ks, list) or not ks or not all(_is_int(k) and k >= 1 for k in ks):
        return f"`k` must be a non-empty list of integers >= 1, got {_shown(ks)}"
    for name in ("model", "generation", "prompt"):
        if not isinstance(summary.get(name), dict):
            return f"`{name}` must be an object, got {_shown(summary.get(name))}"
    if not isinstance(summary["model"].get("name_or_path"), str):
        return f"`model.name_or_path` must be text, got {_shown(summary['model'].get('name_or_path'))}"
    generation = summary["generation"]
    missing = [key for key in ("n", "temperature", "top_p", "max_new_tokens", "seed", "backend") if key not in generation]
    if missing:
        return f"`generation.{missing[0]}` is missing"
    if not isinstance(generation["backend"], dict) or "name" not in generation["backend"]:
        return f"`generation.backend` must be an object with a name, got {_shown(generation['backend'])}"
    if "style" not in summary["prompt"]:
        return "`prompt.style` is missing"
    benchmarks = summary["benchmarks"]
    if not isinstance(benchmarks, dict) or not benchmarks:
        return f"`benchmarks` must be an object of benchmark name -> results, got {_shown(benchmarks)}"
    for name, bench in benchmarks.items():
        where = f"benchmarks.{name}"
        if not isinstance(bench, dict):
            return f"`{where}` must be an object, got {_shown(bench)}"
        if "pass@k" not in bench:
            return f"`{where}.pass@k` is missing"
        for key in ("pass@k", "curve"):
            if key in bench:
                problem = _fractions(bench[key], f"{where}.{key}")
                if problem:
                    return problem
        count = bench.get("num_problems")
        if count is not None and not (_is_int(count) and count >= 0):
            return f"`{where}.num_problems` must be an integer >= 0, got {_shown(count)}"
        counts = bench.get("correct_counts")
        if counts is not None:
            if not isinstance(counts, dict):
                return f"`{where}.correct_counts` must be an object of problem id -> count, got {_shown(counts)}"
            bad = next((pid for pid, c in counts.items() if not (_is_int(c) and c >= 0)), None)
            if bad is not None:
                return f"`{where}.correct_counts.{bad}` must be an integer >= 0, got {_shown(counts[bad])}"
        source = bench.get("source")
        if source is not None:
            if not isinstance(source, dict):
                return f"`{where}.source` must be an object, got {_shown(source)}"
            sha = source.get("sha256")
            if sha is not None and not isinstance(sha, str):
                return f"`{where}.source.sha256` must be text, got {_shown(sha)}"
    if "average" in summary:
        average = summary["average"]
        if not isinstance(average, dict):
            return f"`average` must be an object, got {_shown(average)}"
        if "pass@k" in average:
            return _fractions(average["pass@k"], "average.pass@k")
    return None


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
            sa, sb = (_source_sha256(s[bench]) for s in (a, b))
            if sa is not None and sb is not None and sa != sb:
                return (f"{bench}: {label} and {name0} were run on benchmark files of different contents "
                        f"(source sha256 {sb[:12]}... and {sa[:12]}...)")
    return None


def _source_sha256(bench: dict[str, Any]) -> str | None:
    source = bench.get("source")
    return source.get("sha256") if isinstance(source, dict) else None


def is_our_table(path: Path) -> bool:
    """True when `path` is a Markdown table eval.compare wrote (its first line is `OUTPUT_MARKER`)."""
    try:
        with path.open("rb") as f:
            head = f.read(len(OUTPUT_MARKER.encode()) + 2)
    except OSError:
        return False
    return head.decode("utf-8", "replace").splitlines()[:1] == [OUTPUT_MARKER]


def check_outputs(output: str | None, plot: str | None) -> None:
    """Refuse --output/--plot paths that must not be written, before anything is printed (exit 4)."""
    try:
        if output:
            check_output_file("--output", output, COMMAND, is_our_table)
        if plot:
            check_output_file("--plot", plot, COMMAND, is_our_plot)
    except OutputError as e:
        raise CompareError(str(e), EXIT_OUTPUT) from None


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
    p.add_argument("--output", help="also write the table to this Markdown file; its first line marks it as "
                                    "eval.compare's, and only such a file is ever replaced")
    p.add_argument("--plot", help="also draw every run's Pass@k curves to this file ("
                                  + ", ".join(f".{f}" for f in PLOT_FORMATS)
                                  + "); only a plot eval.compare or eval.run drew is ever replaced")
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
    if args.plot and not Path(args.plot).is_dir() and plot_format(args.plot) is None:  # a folder: exit 4 below
        raise CompareError(f"--plot {args.plot}: cannot draw to that file type; the supported extensions are "
                           + ", ".join(f".{f}" for f in PLOT_FORMATS))
    if args.output and args.plot and Path(args.output).resolve() == Path(args.plot).resolve():
        raise CompareError(f"--output and --plot name the same file {args.output}")
    summaries = [load_summary(p) for p in args.summaries]
    labels = args.labels or default_labels(args.summaries)
    if len(labels) != len(summaries):
        parser.error(f"{len(summaries)} summaries but {len(labels)} labels")
    reference = default_reference(len(summaries)) if args.reference is None else args.reference
    if not 0 <= reference < len(summaries):
        parser.error(f"--reference must be in [0, {len(summaries) - 1}]")
    mismatch = problem_set_mismatch(summaries, labels)
    if mismatch:
        raise CompareError(f"the runs are not over the same problems: {mismatch}; rerun them on the same benchmark "
                           "files with the same --benchmarks and --max-problems")
    check_outputs(args.output, args.plot)
    warn_on_mismatch(summaries, labels)
    table = comparison_table(summaries, labels, reference)
    notes = "\n".join(f"- {label}: {s['model']['name_or_path']} ({settings_line(s)})"
                      for label, s in zip(labels, summaries))
    report = f"{table}\nRelative gains are over {labels[reference]}. {AVERAGE_NOTE}\n\n{notes}\n"
    print(report)
    try:
        if args.output:
            write_output_file("--output", args.output, f"{OUTPUT_MARKER}\n{report}")
        if args.plot:
            from eval.plots import plot_passk_curves

            try:
                plot_passk_curves(dict(zip(labels, summaries)), args.plot)
            except OSError as e:
                raise OutputError(f"--plot {args.plot}: cannot write: {e.strerror or e}") from None
    except OutputError as e:
        raise CompareError(str(e), EXIT_OUTPUT) from None


if __name__ == "__main__":
    sys.exit(main())
