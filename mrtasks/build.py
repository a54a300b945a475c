"""`python -m mrtasks.build`: curate sources into the mr-rlvr task dataset and write (or push) it.

The output folder loads exactly as the Hub copy does:

    python -m mrtasks.build --out build/mr-rlvr-tasks
    load_dataset("build/mr-rlvr-tasks", "step_reordering")

Layout: `README.md` (the card, whose YAML `configs:` maps each config to its files),
`data/<config>/<split>-00000-of-00001.parquet`, and `build_stats.json` (the figures in the card,
machine-readable). The same inputs, parameters and seed give byte-identical Parquet files.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mrtasks.curate.base import Annotator
from mrtasks.curate.pipeline import CONFIGS, PipelineConfig, PipelineResult, file_sha256, run_pipeline
from mrtasks.curate.sources import CORPORA_FILES, PRESETS, SourceError
from mrtasks.curate.splits import SPLITS, SplitConfig
from mrtasks.tasks import MASKED_THEN_FILL, STEP_REORDERING, MaskedThenFillConfig, StepReorderingConfig

logger = logging.getLogger("mrtasks.build")

DEFAULT_OUT = Path("build") / "mr-rlvr-tasks"
DEFAULT_REPO = "mr-rlvr/tasks"


@dataclass
class LLMOptions:
    """Options handed to `mrtasks.curate.llm.LLMConfig` when `--annotator llm`."""

    base_url: str | None = None
    model: str | None = None
    concurrency: int = 8
    cache: str | None = None
    refine: bool = False
    min_formulas: int = 7
    progress: bool = True


def make_annotator(name: str, llm: LLMOptions) -> Annotator:
    """The heuristic annotator, or the LLM one (imported lazily: it needs the `llm` extra)."""
    if name == "heuristic":
        from mrtasks.curate.heuristic import HeuristicAnnotator

        return HeuristicAnnotator()
    if name == "llm":
        try:
            from mrtasks.curate.llm import LLMAnnotator, LLMConfig
        except ImportError as e:
            raise SystemExit(f"--annotator llm needs mrtasks.curate.llm and `pip install mr-rlvr[llm]`: {e}") from e
        if not llm.model:
            raise SystemExit("--annotator llm needs --model (and usually --base-url)")
        kwargs: dict[str, Any] = {
            "model": llm.model, "concurrency": llm.concurrency, "refine": llm.refine,
            "min_formulas": llm.min_formulas, "progress": llm.progress,
        }
        for key, value in (("base_url", llm.base_url), ("cache_path", llm.cache)):
            if value is not None:
                kwargs[key] = value
        return LLMAnnotator(LLMConfig(**kwargs))
    raise SystemExit(f"unknown annotator {name!r}: heuristic or llm")


def write_config(config: str, rows: dict[str, list[dict[str, Any]]], out: Path, progress: bool) -> list[Path]:
    """Drive the builder for one config; move its Parquet files to `data/<config>/<split>-*.parquet`."""
    import datasets

    from builders.mr_rlvr_tasks import MrRlvrTasks

    if not progress:
        datasets.disable_progress_bars()
    target = out / "data" / config
    target.mkdir(parents=True, exist_ok=True)
    written = []
    with tempfile.TemporaryDirectory(prefix="mrtasks-build-") as tmp:
        builder = MrRlvrTasks(config_name=config, cache_dir=os.path.join(tmp, "cache"), rows=rows)
        builder.download_and_prepare(output_dir=os.path.join(tmp, "prepared"), file_format="parquet")
        for split in rows:
            shards = sorted(Path(tmp, "prepared").glob(f"{builder.dataset_name}-{split}*.parquet"))
            if not shards:
                raise RuntimeError(f"the builder wrote no Parquet file for {config}/{split}")
            for k, shard in enumerate(shards):
                dest = target / f"{split}-{k:05d}-of-{len(shards):05d}.parquet"
                shutil.move(str(shard), dest)
                written.append(dest)
    return written


def fingerprint(files: list[Path], root: Path) -> str:
    """SHA-256 over the sorted (relative path, file SHA-256) pairs of the data files."""
    h = hashlib.sha256()
    for f in sorted(files, key=lambda p: p.relative_to(root).as_posix()):
        h.update(f"{f.relative_to(root).as_posix()}\t{file_sha256(f)}\n".encode())
    return h.hexdigest()


def parameters(config: PipelineConfig, annotator: str) -> dict[str, Any]:
    """What decided the output, for the card (progress and batch size do not)."""
    params = config.to_dict()
    params.pop("progress", None)
    params.pop("annotate_batch", None)
    params["annotator"] = annotator
    return params


def write_dataset(
    result: PipelineResult, config: PipelineConfig, out: Path, repo: str = DEFAULT_REPO, card_template: Path | None = None
) -> dict[str, Any]:
    """Write Parquet files, the card and build_stats.json into out (replacing its `data/`)."""
    from mrtasks.curate.card import render_card

    out.mkdir(parents=True, exist_ok=True)
    if (out / "data").exists():
        shutil.rmtree(out / "data")
    files = []
    for name in CONFIGS:
        rows = {split: r for split, r in result.rows[name].items() if r}  # an empty split cannot be loaded
        if not rows:
            logger.warning("config %s has no rows: it is left out of the dataset", name)
            continue
        files += write_config(name, rows, out, config.progress)
    fp = fingerprint(files, out)
    params = parameters(config, result.annotator)
    (out / "README.md").write_text(render_card(result, params, fp, repo, card_template), encoding="utf-8")
    stats = {
        "fingerprint": fp,
        "counts": result.counts(),
        "breakdown": result.breakdown(),
        "drops": result.drops_by_stage(),
        "sources": result.sources,
        "parameters": params,
    }
    (out / "build_stats.json").write_text(json.dumps(stats, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return stats


def summary(stats: dict[str, Any]) -> str:
    """The end-of-build table: rows per config and split, then drops by stage and reason."""
    lines = [f"{'config':<18}" + "".join(f"{s:>12}" for s in SPLITS)]
    for name in CONFIGS:
        lines.append(f"{name:<18}" + "".join(f"{stats['counts'][name][s]:>12}" for s in SPLITS))
    lines.append("")
    lines.append(f"{'source':<26}{'rows read':>10}{'kept':>8}")
    for s in stats["sources"]:
        lines.append(f"{s['name']:<26}{s['rows']:>10}{s['kept']:>8}")
    lines.append("")
    lines.append("left out (stage / reason: rows)")
    for stage, reasons in stats["drops"].items():
        for reason, n in reasons.items():
            lines.append(f"  {stage} / {reason}: {n}")
    lines.append(f"\nfingerprint {stats['fingerprint']}")
    return "\n".join(lines)


def push_to_hub(out: Path, repo: str, private: bool) -> str:
    """Upload the folder as a dataset repo; the token comes from HF_TOKEN / the login cache."""
    from huggingface_hub import HfApi

    api = HfApi()
    api.create_repo(repo, repo_type="dataset", private=private, exist_ok=True)
    info = api.upload_folder(folder_path=str(out), repo_id=repo, repo_type="dataset", commit_message="mrtasks.build")
    return str(getattr(info, "commit_url", repo))


def build_parser() -> argparse.ArgumentParser:
    presets = ", ".join(p for p in PRESETS if p != "corpora")
    p = argparse.ArgumentParser(
        prog="python -m mrtasks.build",
        description="Build the MR-RLVR task dataset (masked_then_fill, step_reordering, outcome, trajectories).",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=f"""source specs (--source, repeatable; default: the bundled sample):
  sample                        the small corpus shipped with the package (offline)
  deepmath | deeptheorem        the paper's Hub sources at a pinned revision
  PRESET:FILE                   presets: {presets}
  corpora:DIR                   every known file in DIR ({', '.join(CORPORA_FILES)})
  FILE.jsonl|.parquet:MAPPING   e.g. data.jsonl:problem=question,solution=answer,kind=computation
                                mapping keys: problem, solution, answer, id, kind, format, name
  ...:limit=N,solutions=K       read at most N rows; keep K trajectories per problem

example:
  python -m mrtasks.build --source corpora:../shared/data/corpora --out build/tasks
""",
    )
    io = p.add_argument_group("input and output")
    io.add_argument("--source", action="append", dest="sources", metavar="SPEC", help="a source spec (see below)")
    io.add_argument("--limit", type=int, help="read at most N rows from every source (a source's own limit= wins)")
    io.add_argument("--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default: {DEFAULT_OUT})")
    io.add_argument("--seed", type=int, default=0, help="seed for splits, masks, shuffles and sampling (default: 0)")
    io.add_argument("--push-to-hub", metavar="REPO", help="upload the folder to this Hub dataset repo (token: HF_TOKEN)")
    io.add_argument("--private", action="store_true", help="create the Hub repo as private")
    io.add_argument("--card-template", type=Path, help="dataset card template (default: cards/README.template.md)")
    io.add_argument("--no-progress", action="store_true", help="no progress bars")
    io.add_argument("-v", "--verbose", action="store_true", help="log each dropped row")

    an = p.add_argument_group("annotation")
    an.add_argument("--annotator", choices=["heuristic", "llm"], default="heuristic", help="default: heuristic (offline)")
    an.add_argument("--refine", action="store_true", help="rewrite solutions with the annotator first (llm: the paper's o3-mini pass)")
    an.add_argument("--base-url", help="llm: OpenAI-compatible endpoint, e.g. http://localhost:8000/v1")
    an.add_argument("--model", help="llm: model name at the endpoint")
    an.add_argument("--concurrency", type=int, default=8, help="llm: requests in flight (default: 8)")
    an.add_argument("--cache", help="llm: sqlite cache file for responses")

    t = p.add_argument_group("tasks (paper defaults)")
    t.add_argument("--min-formulas", type=int, default=7, help="Masked-Then-Fill keeps samples with at least this many formulas (7)")
    t.add_argument("--num-masks", type=int, default=7, help="formulas masked per sample (7)")
    t.add_argument("--num-scored", type=int, help="h: masked positions the reward scores (default: all)")
    t.add_argument("--mask-selection", choices=["importance", "random"], default="importance", help="which formulas to mask")
    t.add_argument("--min-steps", type=int, default=3, help="Step Reordering needs at least this many steps (3)")
    t.add_argument("--max-steps", type=int, default=20, help="and at most this many (20)")

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
            raise SystemExit("--limit must be >= 1")
        sources = [s if "limit=" in s else _with_option(s, f"limit={args.limit}") for s in sources]
    try:
        return PipelineConfig(
            sources=sources,
            seed=args.seed,
            refine=args.refine,
            tasks={
                MASKED_THEN_FILL: MaskedThenFillConfig(
                    num_masks=args.num_masks, min_formulas=args.min_formulas, selection=args.mask_selection,
                    num_scored=args.num_scored,
                ),
                STEP_REORDERING: StepReorderingConfig(min_steps=args.min_steps, max_steps=args.max_steps),
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
        raise SystemExit(f"bad parameter: {e}") from e


def _with_option(spec: str, option: str) -> str:
    """Append `key=value` to a spec's options (adding the `:options` part when it has none)."""
    head, _, last = spec.rpartition(":")
    if head and "=" in last:
        return f"{spec},{option}"
    return f"{spec}:{option}"


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    config = config_from_args(args)
    annotator = make_annotator(
        args.annotator,
        LLMOptions(
            base_url=args.base_url, model=args.model, concurrency=args.concurrency, cache=args.cache,
            refine=args.refine, min_formulas=args.min_formulas, progress=not args.no_progress,
        ),
    )
    if args.annotator == "llm":
        config.annotate_batch = max(config.annotate_batch, 64 * args.concurrency)  # keep requests in flight
    try:
        result = run_pipeline(config, annotator)
    except (SourceError, FileNotFoundError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    stats = write_dataset(result, config, args.out, args.push_to_hub or DEFAULT_REPO, args.card_template)
    print(summary(stats))
    print(f"\nwrote {args.out}")
    if args.push_to_hub:
        print(f"pushed to {push_to_hub(args.out, args.push_to_hub, args.private)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
