"""Write a curated build to a folder: Parquet files per config and split (through the `datasets`
GeneratorBasedBuilder in `builders/`), the dataset card and `build_stats.json`.

Policy: the builder runs at build time (`datasets` 4+ no longer runs loading scripts), so this is
the one module of `mrtasks` that imports `builders`. The same inputs, parameters and seed give
byte-identical Parquet files; `fingerprint` hashes them. `write_dataset` writes into a new or
empty folder only and never deletes anything (`mrtasks.build` swaps the folder in).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mrtasks.curate.pipeline import CONFIGS, PipelineConfig, PipelineResult, file_sha256
from mrtasks.output import MARKER, fault_point, make_marker

if TYPE_CHECKING:
    from mrtasks.rewards.audit import AuditResult

logger = logging.getLogger(__name__)

DEFAULT_REPO = "mr-rlvr/tasks"


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
    result: PipelineResult, config: PipelineConfig, out: Path, repo: str = DEFAULT_REPO, card_template: Path | None = None,
    annotator_stats: dict[str, int] | None = None, audit: Callable[[], list[AuditResult] | None] | None = None,
) -> dict[str, Any]:
    """Write Parquet files, the card and build_stats.json (last, with the marker) into a new or empty folder.

    `main` calls it on the staging folder of `OutputFolder`; it never deletes anything. `audit`
    gives the card's audit when computed elsewhere (`mrtasks.curate.card_audit`), or None.
    """
    from mrtasks.curate.card import render_card

    out.mkdir(parents=True, exist_ok=True)
    if any(out.iterdir()):
        raise ValueError(f"write_dataset writes into a new or empty folder; {out} is not empty")
    files = []
    for name in CONFIGS:
        rows = {split: r for split, r in result.rows[name].items() if r}  # an empty split cannot be loaded
        if not rows:
            logger.warning("config %s has no rows: it is left out of the dataset", name)
            continue
        files += write_config(name, rows, out, config.progress)
        fault_point("config_written")
    fp = fingerprint(files, out)
    params = parameters(config, result.annotator)
    card = render_card(result, params, fp, repo, card_template, audit() if audit is not None else None)
    (out / "README.md").write_text(card, encoding="utf-8")
    stats = {
        "fingerprint": fp,
        "counts": result.counts(),
        "breakdown": result.breakdown(),
        "drops": result.drops_by_stage(),
        "sources": result.sources,
        "parameters": params,
        "quality": result.quality,
        "empty_configs": result.empty_configs(),
    }
    if annotator_stats:
        stats["annotator_stats"] = dict(sorted(annotator_stats.items()))  # requests, cache hits, retries
    stats[MARKER] = make_marker(out, [*files, out / "README.md"])
    (out / "build_stats.json").write_text(json.dumps(stats, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return stats
