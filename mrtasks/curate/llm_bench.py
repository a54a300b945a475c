"""Benchmark the `llm` annotator's concurrency against a local server with simulated latency.

Each run annotates the same trajectories (two calls each) with a fresh cache, at a given
concurrency; with a latency-bound endpoint, concurrency N should give close to N times the
sequential call rate. A last run repeats the widest one over its warm cache, which must make no
calls at all.

    python -m mrtasks.curate.llm_bench --latency 0.2 --concurrency 1 4 16 --trajectories 32
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from mrtasks.curate.base import Drop
from mrtasks.curate.llm import LLMAnnotator, LLMConfig
from mrtasks.curate.testing import FakeOpenAIServer
from mrtasks.logs import run_command
from mrtasks.output import OutputError, check_output_file, write_output_file
from mrtasks.trajectory import Trajectory

logger = logging.getLogger(__name__)


@dataclass
class BenchRow:
    concurrency: int
    calls: int
    seconds: float
    calls_per_s: float
    speedup: float
    dropped: int
    transport_retries: int
    cached_rerun: bool = False


def synthetic_trajectories(n: int) -> list[Trajectory]:
    """n distinct computations with 8 formulas and 4 paragraphs each."""
    out = []
    for i in range(n):
        a, b = i + 2, i + 3
        solution = (
            f"Let $p(x) = x^2 - {a + b}x + {a * b}$. We solve $p(x) = 0$.\n\n"
            f"It factors as $(x - {a})(x - {b}) = 0$, so $x = {a}$ or $x = {b}$.\n\n"
            f"The sum of the roots is $x_1 + x_2 = {a + b}$ and their product is $x_1 x_2 = {a * b}$.\n\n"
            f"Hence the answer is $\\boxed{{{a + b}}}$."
        )
        out.append(Trajectory(id=f"bench-{i}", source="bench", kind="computation", problem=f"#{i}", solution=solution))
    return out


def run_once(base_url: str, items: list[Trajectory], concurrency: int, cache: Path) -> tuple[float, int, int, int]:
    """Seconds, requests sent, drops and transport retries of one annotate() call."""
    annotator = LLMAnnotator(
        LLMConfig(model="bench", base_url=base_url, concurrency=concurrency, cache_path=cache, progress=False)
    )
    start = time.perf_counter()
    results = annotator.annotate(items)
    seconds = time.perf_counter() - start
    annotator.close()
    drops = sum(isinstance(r, Drop) for r in results)
    return seconds, annotator.stats["requests"], drops, annotator.stats["transport_retries"]


def bench(latency: float, concurrencies: list[int], n: int) -> list[BenchRow]:
    import openai  # noqa: F401  imported up front, so the first timed run does not pay for it

    items = synthetic_trajectories(n)
    rows: list[BenchRow] = []
    with FakeOpenAIServer(latency=latency) as server, tempfile.TemporaryDirectory() as tmp:
        base_rate = None
        for c in concurrencies:
            seconds, calls, dropped, retries = run_once(server.base_url, items, c, Path(tmp) / f"c{c}.sqlite")
            rate = calls / seconds
            base_rate = base_rate or rate
            rows.append(BenchRow(c, calls, seconds, rate, rate / base_rate, dropped, retries))
            logger.info("concurrency %d: %d calls in %.2fs", c, calls, seconds)
        c = concurrencies[-1]
        seconds, calls, dropped, retries = run_once(server.base_url, items, c, Path(tmp) / f"c{c}.sqlite")
        rows.append(BenchRow(c, calls, seconds, 0.0, 0.0, dropped, retries, cached_rerun=True))
    return rows


def format_table(rows: list[BenchRow], latency: float, n: int) -> str:
    lines = [
        f"llm annotator vs a local OpenAI-compatible server, {latency * 1000:.0f} ms per call, "
        f"{n} trajectories x 2 calls",
        "",
        "| concurrency | calls | seconds | calls/s | speed-up vs first | retries | dropped |",
        "|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        if r.cached_rerun:
            speed = "- | -"
        else:
            speed = f"{r.calls_per_s:.1f} | {r.speedup:.2f}x"
        label = f"{r.concurrency} (cached rerun)" if r.cached_rerun else str(r.concurrency)
        lines.append(f"| {label} | {r.calls} | {r.seconds:.2f} | {speed} | {r.transport_retries} | {r.dropped} |")
    return "\n".join(lines)


ROW_KEYS = frozenset(f.name for f in fields(BenchRow))
CORE_KEYS = frozenset({"concurrency", "calls", "seconds", "calls_per_s"})


def is_bench_json(path: Path) -> bool:
    """True when `path` holds what `--json` writes: a non-empty JSON list of bench rows (objects
    with the row's fields and nothing else; an older version's rows may lack the later fields)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # unreadable, not UTF-8, not JSON
        return False
    return (isinstance(data, list) and bool(data)
            and all(isinstance(r, dict) and CORE_KEYS <= set(r) <= ROW_KEYS for r in data))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mrtasks.curate.llm_bench",
        description="Call rate of the llm annotator at several concurrencies, against a local server "
        "with simulated latency (no network, no API key).",
        epilog="exit codes: 0 the table was printed; 2 bad arguments; 4 --json cannot be written (a folder, a missing "
        "or read-only folder, inside a dataset build or a model folder, or an existing file this command did not "
        "write); 130 interrupted",
    )
    parser.add_argument("--latency", type=float, default=0.2, help="seconds the server waits per call (default 0.2)")
    parser.add_argument(
        "--concurrency", type=int, nargs="+", default=[1, 4, 16], help="concurrencies, first is the baseline"
    )
    parser.add_argument("--trajectories", type=int, default=32, help="trajectories per run, 2 calls each (default 32)")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here (a new file, or one this command wrote)")
    args = parser.parse_args(argv)
    if args.trajectories < 1:
        parser.error(f"--trajectories must be >= 1, got {args.trajectories}")
    if any(c < 1 for c in args.concurrency):
        parser.error(f"--concurrency values must be >= 1, got {args.concurrency}")
    if not math.isfinite(args.latency) or args.latency < 0:
        parser.error(f"--latency must be a finite number of seconds >= 0, got {args.latency}")
    logging.basicConfig(level=logging.WARNING)

    def body() -> int:
        if args.json:
            check_output_file("--json", args.json, "mrtasks.curate.llm_bench", is_bench_json)
        rows = bench(args.latency, args.concurrency, args.trajectories)
        print(format_table(rows, args.latency, args.trajectories))
        if args.json:
            write_output_file("--json", args.json, json.dumps([asdict(r) for r in rows], indent=2) + "\n")
        return 0

    return run_command(body, {OutputError: 4})


if __name__ == "__main__":
    sys.exit(main())
