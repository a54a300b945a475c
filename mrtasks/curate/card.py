"""The dataset card: HF metadata (YAML) plus the build's figures, rendered from `cards/`."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from mrtasks.curate.pipeline import CONFIGS, PipelineResult
from mrtasks.curate.quality import quality_section
from mrtasks.curate.splits import SPLITS
from mrtasks.rewards.audit import card_section

DEFAULT_TEMPLATE = Path(__file__).resolve().parents[2] / "cards" / "README.template.md"
_PLACEHOLDER = re.compile(r"\{\{(\w+)\}\}")


def size_category(n: int) -> str:
    """The Hub's `size_categories` bucket for n rows."""
    for bound, label in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < bound:
            return label
    return "1M<n<10M"


def data_files(config: str, counts: dict[str, int]) -> list[dict[str, str]]:
    """The file pattern of each non-empty split (`datasets` cannot load a split with no rows)."""
    return [{"split": s, "path": f"data/{config}/{s}-*.parquet"} for s in SPLITS if counts.get(s)]


def metadata(result: PipelineResult, fingerprint: str) -> dict[str, Any]:
    """The card's YAML header: license, tasks, tags, size and the `configs:` file mapping.

    Each config's `description` carries the build fingerprint: `datasets` keys its cache of a
    local folder on the YAML configs, not on the files, so without it a rebuilt folder would
    load the previous build's rows from the cache.
    """
    counts = result.counts()
    total = sum(n for splits in counts.values() for n in splits.values())
    return {
        "license": "apache-2.0",
        "language": ["en"],
        "pretty_name": "mr-rlvr tasks",
        "task_categories": ["text-generation", "reinforcement-learning"],
        "tags": ["math", "reasoning", "rlvr", "grpo", "self-supervised", "process-reward"],
        "size_categories": [size_category(total)],
        "configs": [
            {"config_name": c, "description": f"mr-rlvr {c}, build {fingerprint[:16]}", "data_files": data_files(c, counts[c])}
            for c in CONFIGS
            if any(counts[c].values())
        ],
    }


def _table(header: list[str], rows: list[list[Any]]) -> str:
    if not rows:
        return "(none)"
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def empty_section(empty: dict[str, str]) -> str:
    """Which configs this corpus cannot feed and why (a proof-only corpus has no `outcome` rows)."""
    if not empty:
        return "Every config has rows."
    lines = ["This corpus cannot feed every config; these have no rows (and no files):", ""]
    lines += [f"- `{c}`: {why}" for c, why in empty.items()]
    return "\n".join(lines)


def tasks_table() -> str:
    """One line per registered task (its stage, description and own columns), then the corpus."""
    from mrtasks.tasks import get_task, list_tasks

    rows = []
    for name in list_tasks():
        spec = get_task(name)
        rows.append([f"`{name}`", "I" if spec.stage == 1 else "II", spec.description, ", ".join(f"`{c}`" for c in spec.columns())])
    corpus = "The curated corpus: problem, solution, ranked formulas, steps (re-derive tasks, e.g. per-epoch resampling)."
    rows.append(["`trajectories`", "", corpus, ""])
    return _table(["config", "stage", "what it is", "task columns"], rows)


def render_card(
    result: PipelineResult, parameters: dict[str, Any], fingerprint: str, repo: str, template: Path | None = None
) -> str:
    """Fill the template; every `{{name}}` in it must be known (a typo fails the build)."""
    template = Path(template or DEFAULT_TEMPLATE)
    if not template.is_file():
        raise FileNotFoundError(f"card template not found: {template} (pass --card-template)")
    counts = result.counts()
    values = {
        "metadata": yaml.safe_dump(metadata(result, fingerprint), sort_keys=False, allow_unicode=True).strip(),
        "repo": repo,
        "annotator": result.annotator,
        "seed": str(parameters.get("seed")),
        "fingerprint": fingerprint,
        "benchmarks": "AIME24, AIME25, AMC23, MATH500" if not parameters.get("benchmarks") else ", ".join(
            Path(p).name for p in parameters["benchmarks"]
        ),
        "tasks_table": tasks_table(),
        "counts_table": _table(["config", *SPLITS], [[c, *(counts[c][s] for s in SPLITS)] for c in CONFIGS]),
        "empty_configs": empty_section(result.empty_configs()),
        "breakdown_table": _table(
            ["config", "split", "source", "kind", "rows"], [list(r.values()) for r in result.breakdown()]
        ),
        "drops_table": _table(
            ["stage", "reason", "rows"],
            [[stage, reason, n] for stage, reasons in result.drops_by_stage().items() for reason, n in reasons.items()],
        ),
        "sources_table": _table(
            ["source", "preset", "revision", "rows read", "kept"],
            [[s["name"], s["preset"], f"`{s['revision']}`", s["rows"], s["kept"]] for s in result.sources],
        ),
        "parameters": json.dumps(parameters, indent=2, sort_keys=True),
        "quality_tables": quality_section(result.quality),
        "reward_audit": card_section(result.rows),  # mrtasks.rewards.audit
    }

    def fill(m: re.Match[str]) -> str:
        if m.group(1) not in values:
            raise KeyError(f"unknown card placeholder {m.group(0)}")
        return values[m.group(1)]

    return _PLACEHOLDER.sub(fill, template.read_text(encoding="utf-8"))
