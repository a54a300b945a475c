"""The build pipeline: sources -> problem filters -> refine -> annotate -> split -> tasks -> select.

`run_pipeline(config, annotator)` returns every config's rows per split plus the build's figures
(counts, drops by stage and reason, source revisions). Writing Parquet and the card is
`mrtasks.build`'s job. Every row that does not reach the output is counted under
`(stage, reason)`; rows that are fine but exceed a size cap are counted as `select/over_cap`.
A config can end with no rows (a proof-only corpus feeds no `outcome` row): `empty_configs()`
says which and why, for the summary, `build_stats.json` and the card.
"""

from __future__ import annotations

import hashlib
import logging
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from mrtasks.curate.base import Annotator, Drop
from mrtasks.curate.filters import BenchmarkIndex, NearDuplicateIndex
from mrtasks.curate.integrity import check_references, repair_trajectories
from mrtasks.curate.quality import fill_answers_from_box, quality_figures
from mrtasks.curate.sources import (
    HUB_PRESETS,
    SourceSpec,
    expand_specs,
    get_preset,
    iter_source,
    parse_source,
    problem_origin,
    sample_path,
)
from mrtasks.curate.splits import SPLITS, TRAIN, VALIDATION, SplitConfig, assign_split, balanced_sample
from mrtasks.tasks import NotEligible, get_task, list_tasks
from mrtasks.trajectory import TRAJECTORIES, Trajectory

logger = logging.getLogger(__name__)

CONFIGS: tuple[str, ...] = (*list_tasks(), TRAJECTORIES)
"""Every config a build writes: one per registered task, then the curated corpus."""
Row = dict[str, Any]


def default_task_configs() -> dict[str, Any]:
    """Each registered task's default config (the paper's values)."""
    return {name: get_task(name).config_cls() for name in list_tasks()}


@dataclass
class PipelineConfig:
    """Everything that decides the output (recorded in the card)."""

    sources: list[str] = field(default_factory=lambda: ["sample"])
    seed: int = 0
    refine: bool = False
    tasks: dict[str, Any] = field(default_factory=default_task_configs)
    """Task name -> its config dataclass; a task missing here is built with its defaults."""
    splits: SplitConfig = field(default_factory=SplitConfig)
    dedup_threshold: float | None = 0.8
    """Jaccard similarity (word 3-grams) at which two problems are near duplicates; None: off."""
    decontaminate: bool = True
    benchmarks: list[str] = field(default_factory=list)
    """Benchmark JSONL or fingerprint files; empty: the bundled AIME24/AIME25/AMC23/MATH500 index."""
    decontam_threshold: float = 0.8
    """Shingle containment (either way) at which a problem counts as a benchmark problem."""
    annotate_batch: int = 256
    progress: bool = True

    def __post_init__(self) -> None:
        for name, value in (("dedup_threshold", self.dedup_threshold), ("decontam_threshold", self.decontam_threshold)):
            if value is not None and not 0.0 < value <= 1.0:  # NaN fails too
                raise ValueError(f"{name} must be in (0, 1], got {value} (--no-dedup / --no-decontaminate turn a filter off)")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class PipelineResult:
    rows: dict[str, dict[str, list[Row]]]
    """config -> split -> rows, in their final order."""
    drops: Counter[tuple[str, str]]
    """(stage, reason) -> number of trajectories (or problems, for outcome) left out."""
    sources: list[dict[str, Any]]
    """One entry per source: name, preset, path, revision (commit or sha256), rows read, kept."""
    annotator: str
    quality: dict[str, Any] = field(default_factory=dict)
    """Curation quality figures per config and source (`mrtasks.curate.quality`)."""

    def counts(self) -> dict[str, dict[str, int]]:
        return {c: {s: len(r) for s, r in splits.items()} for c, splits in self.rows.items()}

    def breakdown(self) -> list[dict[str, Any]]:
        """Rows per config, split, source and kind (for the card and the summary)."""
        table: Counter[tuple[str, str, str, str]] = Counter()
        for config, splits in self.rows.items():
            for split, rows in splits.items():
                for r in rows:
                    table[(config, split, r["source"], r["kind"])] += 1
        return [
            {"config": c, "split": s, "source": src, "kind": k, "rows": n} for (c, s, src, k), n in sorted(table.items())
        ]

    def empty_configs(self) -> dict[str, str]:
        """Each config that ended with no rows, and why, in words (`explain_empty`)."""
        counts = self.counts()
        return {c: explain_empty(c, self.drops) for c in CONFIGS if not sum(counts.get(c, {}).values())}

    def drops_by_stage(self) -> dict[str, dict[str, int]]:
        out: dict[str, dict[str, int]] = defaultdict(dict)
        for (stage, reason), n in sorted(self.drops.items()):
            out[stage][reason] = n
        return dict(out)


# Why a task could not use a trajectory, in words a reader of the card understands.
_EMPTY_WHY = {
    "not_computation": "no row has a final answer (every trajectory is a proof)",
    "too_few_formulas": "no solution has enough maskable formulas (`--min-formulas`)",
    "too_few_steps": "no solution has enough steps (`--min-steps`)",
    "too_many_steps": "every solution has more steps than `--max-steps`",
    "prompt_too_long": "every prompt is longer than `--max-prompt-chars`",
    "no_corruptible_formula": "no solution has a formula that can be corrupted",
    "no_provable_corruption": "no corruption could be shown wrong by the checker",
    "no_answer": "no row has a final answer",
}


def explain_empty(config: str, drops: Counter[tuple[str, str]]) -> str:
    """Why a config has no rows: its main drop reason in words, with the counts behind it.

    `outcome` on a proof-only corpus: "no row has a final answer (every trajectory is a proof);
    outcome/not_computation: 120".
    """
    reasons = Counter({reason: n for (stage, reason), n in drops.items() if stage == config and n})
    if not reasons:
        if config in list_tasks(stage=2) and drops.get(("select", "not_in_stage1_train")):
            return "none of its problems is in Stage I's training split (select/not_in_stage1_train)"
        return "no trajectory reached it (see the drops of earlier stages)"
    top, _ = reasons.most_common(1)[0]
    counts = ", ".join(f"{config}/{reason}: {n}" for reason, n in reasons.most_common(3))
    return f"{_EMPTY_WHY.get(top, top.replace('_', ' '))}; {counts}"


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _revision(spec: SourceSpec) -> str:
    if spec.preset in HUB_PRESETS:
        return f"{HUB_PRESETS[spec.preset]}@{spec.revision}"
    preset = get_preset(spec.preset)
    if preset is not None and preset.kind == "generated":
        return f"generated:{spec.revision}"
    path = sample_path() if spec.preset == "sample" else Path(spec.path or "")
    return f"sha256:{file_sha256(path)}" if path.is_file() else "missing"


def _bar(items: Iterable[Any], enabled: bool, **kwargs: Any) -> Iterator[Any]:
    return iter(tqdm(items, disable=not enabled, **kwargs))


def read_sources(config: PipelineConfig, drops: Counter[tuple[str, str]]) -> tuple[list[Trajectory], list[dict[str, Any]]]:
    """Read and normalize every source; malformed rows and repeated ids are counted drops."""
    specs = expand_specs([parse_source(s) for s in config.sources])
    trajectories: list[Trajectory] = []
    seen_ids: set[str] = set()
    info = []
    for spec in specs:
        read = kept = 0
        for item in _bar(iter_source(spec), config.progress, desc=f"read {spec.name}", unit="row", leave=False):
            read += 1
            if isinstance(item, Drop):
                drops[("source", item.reason)] += 1
                logger.debug("dropped %s: %s %s", item.id, item.reason, item.detail)
                continue
            if item.id in seen_ids:
                drops[("source", "duplicate_id")] += 1
                continue
            seen_ids.add(item.id)
            trajectories.append(item)
            kept += 1
        info.append(
            {"name": spec.name, "preset": spec.preset, "path": spec.path or "", "revision": _revision(spec),
             "license": spec.license, "rows": read, "kept": kept}
        )
        logger.info("source %s: %d trajectories from %d rows", spec.name, kept, read)
    return trajectories, info


def load_benchmarks(config: PipelineConfig) -> BenchmarkIndex:
    """The index of the problems the build must not ship: `config.benchmarks`, or the bundled fingerprints."""
    return BenchmarkIndex.load([Path(p) for p in config.benchmarks], config.decontam_threshold)


def filter_problems(
    trajectories: list[Trajectory], config: PipelineConfig, drops: Counter[tuple[str, str]],
    bench: BenchmarkIndex | None = None,
) -> list[Trajectory]:
    """Drop benchmark problems, then near duplicates (first seen kept); per problem, not per trajectory.
    `bench`: the benchmark index when the caller has loaded it already (else loaded here)."""
    if bench is None and config.decontaminate:
        bench = load_benchmarks(config)
    dedup = NearDuplicateIndex(config.dedup_threshold) if config.dedup_threshold else None
    verdict: dict[str, str | None] = {}  # problem origin -> drop reason (None: kept)
    kept = []
    for t in _bar(trajectories, config.progress, desc="filter problems", unit="traj", leave=False):
        origin = problem_origin(t.id)
        if origin not in verdict:
            reason = None
            if bench is not None and (match := bench.match(t.problem)) is not None:
                reason = "benchmark_overlap"
                logger.debug("%s overlaps %s/%s", t.id, match.benchmark, match.id)
            elif dedup is not None and (other := dedup.add(origin, t.problem, t.answer)) is not None:
                reason = "near_duplicate"
                logger.debug("%s near-duplicates %s", t.id, other)
            verdict[origin] = reason
        if verdict[origin]:
            drops[("filter", verdict[origin])] += 1
        else:
            kept.append(t)
    return kept


def _apply(
    annotator_step: Any, trajectories: list[Trajectory], stage: str, config: PipelineConfig, drops: Counter[tuple[str, str]]
) -> list[Trajectory]:
    """Run refine or annotate in batches; Drops (and a wrong-length answer) are counted."""
    out: list[Trajectory] = []
    size = max(1, config.annotate_batch)
    with tqdm(total=len(trajectories), disable=not config.progress, desc=stage, unit="traj", leave=False) as bar:
        for k in range(0, len(trajectories), size):
            batch = trajectories[k : k + size]
            results = annotator_step(batch)
            if len(results) != len(batch):
                raise RuntimeError(f"{stage} returned {len(results)} items for {len(batch)} trajectories")
            for item in results:
                if isinstance(item, Drop):
                    drops[(stage, item.reason)] += 1
                else:
                    out.append(item)
            bar.update(len(batch))
    return out


def task_config(config: PipelineConfig, name: str) -> Any:
    return config.tasks.get(name) or get_task(name).config_cls()


def _task_rows(trajectories: list[Trajectory], config: PipelineConfig, drops: Counter[tuple[str, str]]) -> dict[str, list[Row]]:
    """Every registered task's rows from these trajectories; ineligible ones counted per task."""
    rows: dict[str, list[Row]] = {name: [] for name in list_tasks()}
    seen_problems: dict[str, set[str]] = {name: set() for name in list_tasks()}
    for t in trajectories:
        origin = problem_origin(t.id)
        for name in list_tasks():
            spec = get_task(name)
            if spec.one_per_problem and origin in seen_problems[name]:
                continue  # one row per problem, however many trajectories it has
            seen_problems[name].add(origin)
            try:
                row = spec.build(t, config.seed, task_config(config, name))
            except NotEligible as e:
                drops[(name, e.reason)] += 1
                continue
            if spec.one_per_problem:
                row["id"] = origin
            rows[name].append(row)
    return rows


def _trajectory_row(t: Trajectory) -> Row:
    d = t.to_dict()
    d["formulas"] = [dict(f) for f in d["formulas"]]
    return d


def select(
    task_rows: dict[str, dict[str, list[Row]]],
    trajectories: dict[str, list[Trajectory]],
    config: PipelineConfig,
    drops: Counter[tuple[str, str]],
) -> dict[str, dict[str, list[Row]]]:
    """Apply the paper's sizes: Stage I per task, Stage II from Stage I's training problems."""
    s, seed = config.splits, config.seed
    by_kind, by_id = (lambda r: r["kind"]), (lambda r: r["id"])
    out: dict[str, dict[str, list[Row]]] = {c: {} for c in CONFIGS}
    over_cap = not_in_stage1_train = 0
    stage1, stage2 = list_tasks(stage=1), list_tasks(stage=2)
    for task in stage1:
        for split, cap in ((TRAIN, s.stage1_train), (VALIDATION, s.stage1_validation)):
            pool = task_rows[split][task]
            out[task][split] = balanced_sample(pool, cap, seed, f"{task}:{split}", by_kind, by_id)
            over_cap += len(pool) - len(out[task][split])
    stage1_train = {problem_origin(r["id"]) for task in stage1 for r in out[task][TRAIN]}
    for task in stage2:
        train_pool = [r for r in task_rows[TRAIN][task] if problem_origin(r["id"]) in stage1_train]
        not_in_stage1_train += len(task_rows[TRAIN][task]) - len(train_pool)
        for split, pool, cap in ((TRAIN, train_pool, s.stage2_train), (VALIDATION, task_rows[VALIDATION][task], s.stage2_validation)):
            out[task][split] = balanced_sample(pool, cap, seed, f"{task}:{split}", by_kind, by_id)
            over_cap += len(pool) - len(out[task][split])
    for split in SPLITS:
        out[TRAJECTORIES][split] = [_trajectory_row(t) for t in sorted(trajectories[split], key=lambda t: t.id)]
    if over_cap:
        drops[("select", "over_cap")] += over_cap
    if not_in_stage1_train:
        drops[("select", "not_in_stage1_train")] += not_in_stage1_train
    return out


def run_pipeline(
    config: PipelineConfig, annotator: Annotator, on_selected: Callable[[dict[str, dict[str, list[Row]]]], None] | None = None,
    bench: BenchmarkIndex | None = None,
) -> PipelineResult:
    """Run the whole curation; deterministic for the same inputs, config and annotator.

    `on_selected` sees the final rows before the quality figures are computed (the build starts the
    card's audit beside it there: `mrtasks.curate.card_audit`). `bench`: the benchmark index, when the
    caller has loaded it (the build does, to refuse a bad `--benchmarks` file before any work)."""
    drops: Counter[tuple[str, str]] = Counter()
    trajectories, source_info = read_sources(config, drops)
    trajectories, answer_from_box = fill_answers_from_box(trajectories)  # no answer mapped: the last \boxed{}
    trajectories = filter_problems(trajectories, config, drops, bench)
    if config.refine:
        trajectories = _apply(annotator.refine, trajectories, "refine", config, drops)
    trajectories = _apply(annotator.annotate, trajectories, "annotate", config, drops)
    trajectories = repair_trajectories(trajectories)  # maskable formula spans (integrity.py)
    by_split: dict[str, list[Trajectory]] = {split: [] for split in SPLITS}
    for t in trajectories:
        by_split[assign_split(t.problem, config.seed, config.splits.holdout)].append(t)
    task_rows = {split: _task_rows(by_split[split], config, drops) for split in SPLITS}
    task_rows = {split: check_references(task_rows[split], drops) for split in SPLITS}  # reference earns 1.0
    rows = select(task_rows, by_split, config, drops)
    if on_selected is not None:
        on_selected(rows)
    result = PipelineResult(rows=rows, drops=drops, sources=source_info, annotator=annotator.name)
    result.quality = {**quality_figures(result, config.seed), "answer_from_box": answer_from_box}
    return result
