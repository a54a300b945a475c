"""`python -m mrtasks.curate.bench`: heuristic build throughput (trajectories/s) over the shared corpora.

Times each stage of the offline build on the same inputs: reading and normalizing the sources,
problem filters (decontamination + near duplicates), heuristic annotation, task construction,
and the whole pipeline end to end (without writing Parquet, which `--write` adds).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

from mrtasks.curate.heuristic import HeuristicAnnotator
from mrtasks.curate.pipeline import PipelineConfig, _task_rows, filter_problems, read_sources, run_pipeline
from mrtasks.curate.sources import SourceError

# ../shared/data/corpora beside the checkout, wherever the command is run from.
DEFAULT_CORPORA = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "corpora"


def _rate(n: int, seconds: float) -> str:
    return f"{n:>7} traj  {seconds:8.3f} s  {n / seconds if seconds else float('inf'):>10.0f} traj/s"


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        prog="python -m mrtasks.curate.bench", description=__doc__.splitlines()[0],
        epilog="exit codes: 0 the timings were printed; 2 bad arguments, or sources that are missing, unreadable "
               "or yield no trajectory; 130 interrupted",
    )
    p.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA,
                   help="corpora folder (default: ../shared/data/corpora beside the checkout)")
    p.add_argument("--source", action="append", help="source specs instead of --corpora (see python -m mrtasks.build --help)")
    p.add_argument("--repeat", type=int, default=3, help="runs per stage; the best is reported (default: 3)")
    p.add_argument("--write", action="store_true", help="also time a full build that writes Parquet and the card")
    args = p.parse_args(argv)
    if args.repeat < 1:
        p.error(f"--repeat must be >= 1, got {args.repeat}")
    try:
        bench(args)
    except SourceError as e:
        p.error(str(e))
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        raise SystemExit(130) from None


def bench(args: argparse.Namespace) -> None:
    sources = args.source or [f"corpora:{args.corpora}"]
    config = PipelineConfig(sources=sources, progress=False)
    annotator = HeuristicAnnotator()

    def best(fn):
        times, out = [], None
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            out = fn()
            times.append(time.perf_counter() - t0)
        return min(times), out

    t_read, (trajs, _) = best(lambda: read_sources(config, Counter()))
    if not trajs:
        drops: Counter = Counter()
        read_sources(config, drops)
        reasons = ", ".join(f"{reason}: {n}" for (_, reason), n in drops.most_common(3)) or "no rows"
        raise SourceError(f"no trajectory read from {', '.join(sources)} ({reasons})")
    t_filter, kept = best(lambda: filter_problems(trajs, config, Counter()))
    t_annotate, annotated = best(lambda: annotator.annotate(kept))
    t_tasks, _ = best(lambda: _task_rows(annotated, config, Counter()))
    t_all, result = best(lambda: run_pipeline(config, annotator))
    print(f"heuristic build throughput over {', '.join(sources)} (best of {args.repeat})")
    print(f"  read + normalize   {_rate(len(trajs), t_read)}")
    print(f"  problem filters    {_rate(len(trajs), t_filter)}")
    print(f"  annotate           {_rate(len(kept), t_annotate)}")
    print(f"  task construction  {_rate(len(annotated), t_tasks)}")
    print(f"  pipeline (no I/O)  {_rate(len(trajs), t_all)}")
    if args.write:
        from mrtasks.curate.write import write_dataset

        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            write_dataset(run_pipeline(config, annotator), config, Path(tmp))
            print(f"  full build + write {_rate(len(trajs), time.perf_counter() - t0)}")
    print(f"rows: {result.counts()}")


if __name__ == "__main__":
    main()
