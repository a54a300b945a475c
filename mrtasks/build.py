"""`python -m mrtasks.build`: curate sources into the mr-rlvr task dataset and write (or push) it.

The output folder loads exactly as the Hub copy does:

    python -m mrtasks.build --out build/mr-rlvr-tasks
    load_dataset("build/mr-rlvr-tasks", "step_reordering")

Layout: `README.md` (the card, whose YAML `configs:` maps each config to its files),
`data/<config>/<split>-00000-of-00001.parquet`, and `build_stats.json` (the figures in the card,
machine-readable, plus the marker that says this folder is a build). The same inputs, parameters and
seed give byte-identical Parquet files.

The build never destroys what it did not write and never half-replaces a dataset: `--out` is locked,
checked and tested for writability before any work, the new build is staged beside it and swapped
in with renames only when complete (`mrtasks.output`), and a build that ends empty fails
without touching the old one. Every everyday failure is one line on stderr and an exit code (`EXIT_CODES`).
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from collections import Counter
from pathlib import Path
from typing import Any

from mrtasks.curate.base import Annotator
from mrtasks.curate.cache import CacheError
from mrtasks.curate.card import check_template
from mrtasks.curate.card_audit import CardAudit
from mrtasks.curate.filters import BenchmarkIndex
from mrtasks.curate.llm import LLMAnnotator, add_endpoint_arguments, llm_config_from_args  # no `openai` import until a call
from mrtasks.curate.pipeline import CONFIGS, PipelineConfig, PipelineResult, default_task_configs, load_benchmarks, run_pipeline
from mrtasks.curate.presets import CORPORA_FILES, list_presets
from mrtasks.curate.sources import SourceError
from mrtasks.curate.splits import SPLITS, SplitConfig
from mrtasks.curate.write import DEFAULT_REPO, write_dataset
from mrtasks.logs import configure_logging
from mrtasks.mathcheck import OFFLINE_TIMEOUT_S, configure_pool, get_pool
from mrtasks.output import OutputError, OutputFolder, fault_point
from mrtasks.tasks import MASKED_THEN_FILL, STEP_REORDERING, MaskedThenFillConfig, StepReorderingConfig
from mrtasks.tasks.step_reordering import MAX_PROMPT_CHARS
from mrtasks.trajectory import TRAJECTORIES

logger = logging.getLogger("mrtasks.build")

DEFAULT_OUT = Path("build") / "mr-rlvr-tasks"

EXIT_OK, EXIT_BUG, EXIT_USAGE, EXIT_EMPTY, EXIT_OUTPUT, EXIT_ANNOTATOR, EXIT_PUSH, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 5, 6, 130
EXIT_CODES = {
    EXIT_OK: "built (and pushed, with --push-to-hub)",
    EXIT_BUG: "unexpected error (a bug: the traceback is printed; --out untouched)",
    EXIT_USAGE: "bad arguments or an unreadable source (missing, corrupt or 0-byte file); nothing written",
    EXIT_EMPTY: "empty build: no task config has a row, or every source row was dropped; --out untouched "
                "(one empty config is reported, not fatal)",
    EXIT_OUTPUT: "--out refused (not a previous build, not writable, locked by another build) or the disk failed (full); --out untouched",
    EXIT_ANNOTATOR: "the llm endpoint refused the key or the model, or its cache file is unusable; --out untouched",
    EXIT_PUSH: "--push-to-hub failed: before the build (offline, bad token; nothing built) or after it (local build complete)",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C, SIGTERM); --out untouched unless the swap had already happened",
}


class UsageError(Exception):
    """A bad flag value or combination (exit 2, one line)."""


class PushError(Exception):
    """`--push-to-hub` failed (exit 6, one line)."""


def make_annotator(args: argparse.Namespace) -> Annotator:
    """The heuristic annotator, or the LLM one configured by the endpoint options (`mrtasks.curate.llm.llm_config_from_args`)."""
    if args.annotator == "heuristic":
        from mrtasks.curate.heuristic import HeuristicAnnotator

        return HeuristicAnnotator()
    if args.annotator == "llm":
        try:
            config = llm_config_from_args(args, refine=args.refine, min_formulas=args.min_formulas, progress=not args.no_progress)
        except ValueError as e:
            raise UsageError(str(e)) from None
        return LLMAnnotator(config)  # opens the cache now, before any call (CacheError if unusable)
    raise UsageError(f"unknown annotator {args.annotator!r}: heuristic or llm")


def summary(stats: dict[str, Any]) -> str:
    """The end-of-build table: rows per config and split, then drops by stage and reason."""
    lines = [f"{'config':<18}" + "".join(f"{s:>12}" for s in SPLITS)]
    for name in CONFIGS:
        lines.append(f"{name:<18}" + "".join(f"{stats['counts'][name][s]:>12}" for s in SPLITS))
    for name, why in (stats.get("empty_configs") or {}).items():
        lines.append(f"  {name}: no rows: {why}")
    lines.append("")
    lines.append(f"{'source':<26}{'rows read':>10}{'kept':>8}")
    for s in stats["sources"]:
        lines.append(f"{s['name']:<26}{s['rows']:>10}{s['kept']:>8}")
    lines.append("")
    lines.append("left out (stage / reason: rows)")
    for stage, reasons in stats["drops"].items():
        for reason, n in reasons.items():
            lines.append(f"  {stage} / {reason}: {n}")
    if llm := stats.get("annotator_stats"):
        keys = ("requests", "cache_hits", "transport_retries", "oversized_responses")
        lines.append("\nllm calls: " + ", ".join(f"{k.replace('_', ' ')} {llm.get(k, 0)}" for k in keys))
    lines.append(f"\nfingerprint {stats['fingerprint']}")
    return "\n".join(lines)


def empty_build(result: PipelineResult) -> str | None:
    """Why this build must not replace anything (every source row dropped, or no task config has
    a row), or None. One empty config is not a failure: a proof-only corpus feeds no `outcome`
    row, and the summary and the card say so (`PipelineResult.empty_configs`)."""
    counts = result.counts()
    read = sum(s["rows"] for s in result.sources)
    kept = sum(s["kept"] for s in result.sources)
    tasks = [c for c in CONFIGS if c != TRAJECTORIES]
    if kept == 0:
        what = f"every source row was dropped ({read} read)"
    elif not any(sum(counts.get(c, {}).values()) for c in tasks):
        what = f"every task config ({', '.join(tasks)}) ended with no rows"
    else:
        return None
    reasons = Counter({key: n for key, n in result.drops.items() if key != ("select", "over_cap") and n})
    top = ", ".join(f"{stage}/{reason}: {n}" for (stage, reason), n in reasons.most_common(3))
    return f"{what}; top drop reasons: {top or 'none'}"


def _hub_api() -> Any:
    """An HfApi on `HF_ENDPOINT` (read now, so a test or a mirror set after import is honoured)."""
    from huggingface_hub import HfApi

    return HfApi(endpoint=os.environ.get("HF_ENDPOINT") or None)


def _hub_error(e: BaseException, endpoint: str) -> str:
    """One line for a Hub failure; the token never appears in it."""
    status = getattr(getattr(e, "response", None), "status_code", None)
    if status in (401, 403):
        text = f"the Hub refused the token (HTTP {status}); set HF_TOKEN or log in with `hf auth login`"
    elif status is not None:
        text = f"HTTP {status} from {endpoint}: {str(e).splitlines()[0][:200] if str(e) else type(e).__name__}"
    elif type(e).__name__ in ("OfflineModeIsEnabled",):
        text = "HF_HUB_OFFLINE is set; unset it to push"
    elif "Connect" in type(e).__name__ or isinstance(e, OSError):
        text = f"cannot reach {endpoint} ({type(e).__name__})"
    else:
        first = str(e).strip().splitlines()[0][:200] if str(e).strip() else ""
        text = f"{type(e).__name__}: {first}" if first else type(e).__name__
    token = os.environ.get("HF_TOKEN")
    return text.replace(token, "***") if token else text


def check_hub(repo: str) -> None:
    """Before any work: the Hub is reachable, not disabled, and accepts the token (`whoami`)."""
    from huggingface_hub import constants

    if constants.HF_HUB_OFFLINE or os.environ.get("HF_HUB_OFFLINE", "").lower() in ("1", "true", "yes", "on"):
        raise PushError(f"--push-to-hub {repo} needs the network, but HF_HUB_OFFLINE is set")
    api = _hub_api()
    try:
        api.whoami()
    except Exception as e:  # noqa: BLE001 - every failure becomes one line
        raise PushError(f"--push-to-hub {repo}: {_hub_error(e, api.endpoint)}; nothing was built") from None


def push_to_hub(out: Path, repo: str, private: bool) -> str:
    """Upload the folder as a dataset repo; the token (HF_TOKEN or the login cache) goes only in the Authorization header."""
    api = _hub_api()
    try:
        api.create_repo(repo, repo_type="dataset", private=private, exist_ok=True)
        info = api.upload_folder(folder_path=str(out), repo_id=repo, repo_type="dataset", commit_message="mrtasks.build")
    except Exception as e:  # noqa: BLE001 - every failure becomes one line
        raise PushError(f"push to {repo} failed: {_hub_error(e, api.endpoint)}; the local build in {out} is complete") from None
    return str(getattr(info, "commit_url", repo))


def build_parser() -> argparse.ArgumentParser:
    presets = ", ".join(list_presets("file"))
    p = argparse.ArgumentParser(
        prog="python -m mrtasks.build",
        description=f"Build the MR-RLVR task dataset ({', '.join(CONFIGS)}).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=f"""source specs (--source, repeatable; default: the bundled sample):
  sample                        the small corpus shipped with the package (offline)
  synthetic[:arith]:OPTIONS     generated arithmetic worked solutions (size=N,difficulty=1-3,seed=S)
  deepmath | deeptheorem        the paper's Hub sources at a pinned revision
  PRESET:FILE                   presets: {presets}
  corpora:DIR                   every known file in DIR ({', '.join(CORPORA_FILES)})
  FILE.jsonl|.parquet:MAPPING   e.g. data.jsonl:problem=question,solution=answer,kind=computation
                                mapping keys: problem, solution, answer, id, kind, format, name
  ...:limit=N,solutions=K       read at most N rows; keep K trajectories per problem

example (../shared must sit beside the checkout):
  python -m mrtasks.build --source corpora:../shared/data/corpora --out build/tasks

--out is written only as a whole: a non-empty folder that is not a previous build is refused, the
new build is staged beside it and swapped in when complete, and a second build into the same
folder is refused while the first runs.

exit codes:
""" + "\n".join(f"  {code:<4}{text}" for code, text in EXIT_CODES.items()),
    )
    io = p.add_argument_group("input and output")
    io.add_argument("--source", action="append", dest="sources", metavar="SPEC", help="a source spec (see below)")
    io.add_argument("--limit", type=int, help="read at most N rows from every source (a source's own limit= wins)")
    io.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default: {DEFAULT_OUT})")
    io.add_argument("--seed", type=int, default=0, help="seed for splits, masks, shuffles and sampling (default: 0)")
    io.add_argument("--push-to-hub", metavar="REPO", help="upload the folder to this Hub dataset repo (token: HF_TOKEN)")
    io.add_argument("--private", action="store_true", help="create the Hub repo as private")
    io.add_argument("--card-template", type=Path, help="dataset card template (default: cards/README.template.md)")
    io.add_argument(
        "--allow-empty", action="store_true",
        help="write the build even if no task config has a row or every source row was dropped (default: exit 3)",
    )
    io.add_argument("--no-progress", action="store_true", help="no progress bars")
    io.add_argument("-v", "--verbose", action="store_true", help="debug logs of this project (each dropped row); libraries stay quiet")

    an = p.add_argument_group("annotation")
    an.add_argument("--annotator", choices=["heuristic", "llm"], default="heuristic", help="default: heuristic (offline)")
    an.add_argument("--refine", action="store_true", help="rewrite solutions with the annotator first (llm: the paper's o3-mini pass)")
    add_endpoint_arguments(an)  # --base-url ... --max-tokens, shared with mrtasks.curate.annotator_bench

    t = p.add_argument_group("tasks (paper defaults)")
    t.add_argument("--min-formulas", type=int, default=7, help="Masked-Then-Fill keeps samples with at least this many formulas (7)")
    t.add_argument("--num-masks", type=int, default=7, help="formulas masked per sample (7)")
    t.add_argument("--num-scored", type=int, help="h: masked positions the reward scores (default: all)")
    t.add_argument("--mask-selection", choices=["importance", "random"], default="importance", help="which formulas to mask")
    t.add_argument("--min-steps", type=int, default=3, help="Step Reordering needs at least this many steps (3)")
    t.add_argument("--max-steps", type=int, default=None, help="and at most this many (default: no cap)")
    t.add_argument(
        "--max-prompt-chars", type=int, default=MAX_PROMPT_CHARS,
        help=f"Step Reordering prompts longer than this many characters are left out ({MAX_PROMPT_CHARS}, about 2048 tokens; 0: no limit)",
    )

    s = p.add_argument_group("filters and splits (paper defaults)")
    s.add_argument("--stage1-train", type=int, default=10_000, help="Stage I training samples per task (10000)")
    s.add_argument("--stage1-validation", type=int, default=3_000, help="Stage I validation samples per task (3000)")
    s.add_argument("--stage2-train", type=int, default=5_000, help="Stage II training samples (5000)")
    s.add_argument("--stage2-validation", type=int, default=1_500, help="Stage II validation samples (1500)")
    s.add_argument("--validation-fraction", type=float, help="share of problems held out (default: 6k/26k)")
    s.add_argument("--dedup-threshold", type=float, default=0.8, help="near-duplicate Jaccard threshold (0.8)")
    s.add_argument("--no-dedup", action="store_true", help="keep near-duplicate problems")
    s.add_argument(
        "--benchmarks", nargs="+", metavar="FILE",
        help="benchmark JSONL (with `problem`) or fingerprint files to decontaminate against "
        "(default: bundled AIME24/AIME25/AMC23/MATH500 fingerprints)",
    )
    s.add_argument("--decontam-threshold", type=float, default=0.8, help="benchmark overlap threshold (0.8)")
    s.add_argument("--no-decontaminate", action="store_true", help="keep problems that appear in the benchmarks")
    return p


def config_from_args(args: argparse.Namespace) -> PipelineConfig:
    sources = args.sources or ["sample"]
    if args.limit is not None:
        if args.limit < 1:
            raise UsageError("--limit must be >= 1")
        sources = [s if "limit=" in s else _with_option(s, f"limit={args.limit}") for s in sources]
    try:
        return PipelineConfig(
            sources=sources,
            seed=args.seed,
            refine=args.refine,
            tasks={
                **default_task_configs(),  # every registered task, so the card records each one's config
                MASKED_THEN_FILL: MaskedThenFillConfig(
                    num_masks=args.num_masks, min_formulas=args.min_formulas, selection=args.mask_selection,
                    num_scored=args.num_scored,
                ),
                STEP_REORDERING: StepReorderingConfig(
                    min_steps=args.min_steps, max_steps=args.max_steps, max_prompt_chars=args.max_prompt_chars or None,
                ),
            },
            splits=SplitConfig(
                stage1_train=args.stage1_train, stage1_validation=args.stage1_validation,
                stage2_train=args.stage2_train, stage2_validation=args.stage2_validation,
                validation_fraction=args.validation_fraction,
            ),
            dedup_threshold=None if args.no_dedup else args.dedup_threshold,
            decontaminate=not args.no_decontaminate,
            benchmarks=list(args.benchmarks or []),
            decontam_threshold=args.decontam_threshold,
            progress=not args.no_progress,
        )
    except ValueError as e:
        raise UsageError(f"bad parameter: {e}") from None


BUILD_WORKERS = 1
"""Checker workers (`mrtasks.mathcheck.sandbox`) a build starts; `MRTASKS_REWARD_WORKERS` overrides."""


def _with_option(spec: str, option: str) -> str:
    """Append `key=value` to a spec's options (adding the `:options` part when it has none)."""
    head, _, last = spec.rpartition(":")
    if head and "=" in last:
        return f"{spec},{option}"
    return f"{spec}:{option}"


def _terminate(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt  # SIGTERM cleans up like Ctrl-C: the staged build goes, --out stays


def check_inputs(config: PipelineConfig, card_template: Path | None) -> BenchmarkIndex | None:
    """Read the card template and the benchmark files before any work (UsageError, one line); the
    benchmark index is returned for the pipeline, which then does not read the files again."""
    try:
        check_template(card_template)
        return load_benchmarks(config) if config.decontaminate else None
    except (ValueError, OSError) as e:
        raise UsageError(str(e)) from None
    except KeyError as e:  # a `*fingerprints.jsonl` file whose rows lack a field
        raise UsageError(f"a --benchmarks fingerprint file has a row without the field {e}") from None


def run(args: argparse.Namespace) -> int:
    """The build itself; failures raise (`main` turns them into one line and an exit code)."""
    config = config_from_args(args)
    bench = check_inputs(config, args.card_template)
    with OutputFolder(args.out) as folder:  # locked, checked and writable before any work
        if args.push_to_hub:
            check_hub(args.push_to_hub)
        annotator = make_annotator(args)
        if args.annotator == "llm":
            config.annotate_batch = max(config.annotate_batch, 64 * args.concurrency)  # keep requests in flight
        # The build asks the checker's slow tier little (~200 items, 0.3 s on the shared corpora): one
        # worker unless MRTASKS_REWARD_WORKERS says otherwise (each costs a sympy start, ~0.8 s CPU).
        workers = None if "MRTASKS_REWARD_WORKERS" in os.environ else BUILD_WORKERS
        if "MRTASKS_REWARD_TIMEOUT" not in os.environ:  # the output must not depend on the machine's load
            configure_pool(workers=workers, timeout=OFFLINE_TIMEOUT_S)
        else:
            configure_pool(workers=workers)
        pool = get_pool()
        pool.prestart()  # the checker's workers start while the sources are read and annotated
        card_audit = CardAudit(workers, pool.timeout)
        try:
            try:
                result = run_pipeline(config, annotator, on_selected=card_audit.submit, bench=bench)  # the audit runs beside
            finally:
                close = getattr(annotator, "close", None)
                if callable(close):
                    close()
            fault_point("pipeline_done")
            problem = empty_build(result)
            if problem and not args.allow_empty:
                print(f"error: empty build: {problem}; {args.out} left untouched (--allow-empty writes it anyway)", file=sys.stderr)
                return EXIT_EMPTY
            stats = write_dataset(
                result, config, folder.stage, args.push_to_hub or DEFAULT_REPO, args.card_template,
                dict(getattr(annotator, "stats", {}) or {}), audit=card_audit.results,
            )
        finally:
            card_audit.close()
        folder.commit()
    print(summary(stats))
    print(f"\nwrote {args.out}")
    if args.push_to_hub:
        print(f"pushed to {push_to_hub(args.out, args.push_to_hub, args.private)}")
    return EXIT_OK


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging(args.verbose)
    from mrtasks.curate.llm import LLMError

    previous = signal.signal(signal.SIGTERM, _terminate) if threading.current_thread() is threading.main_thread() else None
    try:
        return run(args)
    except (UsageError, SourceError, FileNotFoundError) as e:
        code, message = EXIT_USAGE, str(e)
    except OutputError as e:
        code, message = EXIT_OUTPUT, str(e)
    except (LLMError, CacheError) as e:
        code, message = EXIT_ANNOTATOR, f"{e}; {args.out} left untouched"
    except PushError as e:
        code, message = EXIT_PUSH, str(e)
    except KeyboardInterrupt:
        code, message = EXIT_INTERRUPTED, "interrupted"
    except OSError as e:  # the disk, not the data: full, read-only, gone
        where = f" ({e.filename})" if e.filename else ""
        code, message = EXIT_OUTPUT, f"I/O error: {e.strerror or e}{where}; {args.out} left untouched"
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    print(f"error: {message}", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main())
