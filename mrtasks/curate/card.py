"""The dataset card: HF metadata (YAML) plus the build's figures, rendered from `cards/`.

Besides the figures, the card documents every column of every config (`COLUMN_DOCS`: a test
fails when a task adds a column without a description), gives each source's license next to the
YAML `license:` that sums them up, and marks the first non-empty config as the default, so
`load_dataset(repo)` works without naming a config.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from mrtasks.curate.pipeline import CONFIGS, PipelineResult
from mrtasks.curate.quality import quality_section
from mrtasks.curate.splits import SPLITS
from mrtasks.rewards.audit import AuditResult, card_section

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


# What each column holds, by column (and by (config, column) where a config gives it another meaning).
COLUMN_DOCS: dict[str | tuple[str, str], str] = {
    "id": "Row id, `<source>/<problem id>` (with `#k` for the k-th solution of one problem). No problem id "
          "appears in two splits of any config.",
    "task": "The task: the config name, the reward name, and what `get_reward(\"process\")` dispatches on.",
    "source": "The source label (`--source ...:name=`, else the preset or file name).",
    "kind": "`proof` or `computation` (only computations have an `outcome` row).",
    "problem": "The problem statement, as the source gives it.",
    "solution": "The reference solution (the source's, after its preset's cleaning, or refined with `--refine`).",
    "masked_solution": "The solution with each masked formula replaced by `<formula_masked>` (its math delimiters "
                       "kept); this is what the prompt shows.",
    "masks": "The masked formulas, in the order they appear (a formula the solution writes more than once is masked "
             "at every copy, so a text can repeat); the reference answer is `\\boxed{m1; m2; ...}`.",
    "scored": "0-based positions in `masks` that the reward scores (the paper's h); all of them unless the build "
              "set `--num-scored`.",
    ("step_reordering", "steps"): "The solution's steps in their reference order (no step cap by default; rows whose "
                                  "prompt exceeds the build's `--max-prompt-chars` are left out).",
    "shuffled_steps": "The same steps as the prompt shows them (`Step 0`, `Step 1`, ...): a seeded shuffle, never "
                      "the identity.",
    "order": "The shown step numbers in the reference order: `steps[i] == shuffled_steps[order[i]]`; the reference "
             "answer is `\\boxed{order}`.",
    ("error_correction", "steps"): "The steps as the prompt shows them (`Step 0`, `Step 1`, ...), with the corrupted "
                                   "formula in step `error_step` when there is one.",
    "error_step": "The index of the corrupted step, or `-1` when no step was changed (the answer is then "
                  "`\\boxed{none}`).",
    "original": "The formula (or theorem name) before the edit; empty when `error_step = -1`.",
    "corrupted": "The formula as shown in step `error_step` (one edit the checker decided is not equivalent); "
                 "empty when `error_step = -1`.",
    "error_type": "The edit: `number`, `sign`, `operator`, `relation` or `theorem`; empty when `error_step = -1`.",
    "answer": "The final answer (the source's, else the solution's last `\\boxed{}`), checked by the `outcome` "
              "reward.",
    ("trajectories", "answer"): "The final answer when the source has one (empty for most proofs).",
    "formulas": "The annotated key formulas, ranked by importance: `text` and its `start`/`end` character offsets in "
                "`solution`; a formula written more than once appears once per copy (copies after the ranked ones). "
                "Both annotators leave out the final answer as a lone value (`\\boxed{10}`, `10`): it is no key "
                "formula, and `masked_then_fill` masks its box all the same.",
    ("trajectories", "steps"): "The solution split into steps, in order.",
    "prompt": "The chat messages (system + user) with the paper's prompt for this task.",
}


def config_features(config: str) -> Any:
    """The `datasets.Features` of a config (a registered task, or `trajectories`)."""
    from mrtasks.tasks import get_task
    from mrtasks.trajectory import TRAJECTORIES, trajectory_features

    return trajectory_features() if config == TRAJECTORIES else get_task(config).features()


def column_doc(config: str, column: str) -> str:
    doc = COLUMN_DOCS.get((config, column)) or COLUMN_DOCS.get(column)
    if doc is None:
        raise KeyError(f"column {column!r} of config {config!r} has no description in mrtasks.curate.card.COLUMN_DOCS")
    return doc


def _type_name(feature: Any) -> str:
    if isinstance(feature, list):
        return f"list[{_type_name(feature[0])}]" if feature else "list"
    if hasattr(feature, "feature"):  # datasets.List / Sequence
        return f"list[{_type_name(feature.feature)}]"
    if isinstance(feature, dict):
        return "{" + ", ".join(f"{k}: {_type_name(v)}" for k, v in feature.items()) + "}"
    return str(getattr(feature, "dtype", type(feature).__name__))


def column_dictionary(configs: tuple[str, ...] = CONFIGS) -> str:
    """One table per config: every column, its type and what it holds."""
    parts = []
    for config in configs:
        features = config_features(config)
        rows = [[f"`{name}`", f"`{_type_name(feature)}`", column_doc(config, name)] for name, feature in features.items()]
        parts.append(f"**`{config}`**\n\n" + _table(["column", "type", "meaning"], rows))
    return "\n\n".join(parts)


def default_config(result: PipelineResult) -> str | None:
    """The config `load_dataset(repo)` loads without a name: the first one with rows."""
    counts = result.counts()
    return next((c for c in CONFIGS if any(counts[c].values())), None)


def license_metadata(sources: list[dict[str, Any]]) -> dict[str, Any]:
    """The YAML license fields that sum up the sources' licenses: one id, a list of ids, or `other`
    when some source's license is not known."""
    known = sorted({s["license"] for s in sources if s.get("license")})
    if not known or any(not s.get("license") for s in sources):
        return {"license": "other", "license_name": "per-source",
                "license_details": "Each source keeps its own license; some are not known: see the card's Sources table."}
    return {"license": known[0] if len(known) == 1 else known}


def metadata(result: PipelineResult, fingerprint: str) -> dict[str, Any]:
    """The card's YAML header: license, tasks, tags, size and the `configs:` file mapping.

    Each config's `description` carries the build fingerprint: `datasets` keys its cache of a
    local folder on the YAML configs, not on the files, so without it a rebuilt folder would
    load the previous build's rows from the cache.
    """
    counts = result.counts()
    total = sum(n for splits in counts.values() for n in splits.values())
    default = default_config(result)
    return {
        **license_metadata(result.sources),
        "language": ["en"],
        "pretty_name": "mr-rlvr tasks",
        "task_categories": ["text-generation", "reinforcement-learning"],
        "tags": ["math", "reasoning", "rlvr", "grpo", "self-supervised", "process-reward"],
        "size_categories": [size_category(total)],
        "configs": [
            {"config_name": c, "description": f"mr-rlvr {c}, build {fingerprint[:16]}", "data_files": data_files(c, counts[c]),
             **({"default": True} if c == default else {})}
            for c in CONFIGS
            if any(counts[c].values())
        ],
    }


def _cell(value: Any) -> str:
    """A Markdown table cell: a `|` or a line break in a value (a source name, a drop reason) would
    break the row."""
    return " ".join(str(value).split()).replace("|", "\\|")


def _table(header: list[str], rows: list[list[Any]]) -> str:
    if not rows:
        return "(none)"
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_cell(v) for v in row) + " |" for row in rows]
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


def _license_line(sources: list[dict[str, Any]]) -> str:
    meta = license_metadata(sources)
    if meta["license"] == "other":
        unknown = ", ".join(s["name"] for s in sources if not s.get("license"))
        return (f"`license: other`: the license of {unknown} is not known to this build (pass `license=ID` in its "
                "`--source` spec when you know it); check each source's own card before you redistribute.")
    ids = meta["license"] if isinstance(meta["license"], list) else [meta["license"]]
    return f"`license: {', '.join(ids)}`: the licenses of the sources above, each row keeping its source's."


PLACEHOLDERS = (
    "metadata", "repo", "annotator", "seed", "fingerprint", "benchmarks", "tasks_table", "counts_table",
    "empty_configs", "breakdown_table", "drops_table", "sources_table", "license", "columns", "default_config",
    "parameters", "quality_tables", "reward_audit",
)  # fmt: skip
"""The `{{name}}`s a card template may hold; `{{metadata}}` (the YAML header with the dataset's
configs) is required."""
_LOOSE = re.compile(r"\{\{\s*(\w+)\s*\}\}")


def check_template(template: Path | None) -> None:
    """Refuse a card template the build could not fill, before any work (ValueError, one line): not
    readable as UTF-8, an unknown or spaced placeholder, or no `{{metadata}}` in a leading `---`
    header (without it `load_dataset(DIR, config)` would not find the configs)."""
    template = Path(template or DEFAULT_TEMPLATE)
    try:
        text = template.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise FileNotFoundError(f"card template not found: {template} (pass --card-template)") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ValueError(f"card template {template} cannot be read as UTF-8 text ({e})") from None
    for m in _LOOSE.finditer(text):
        if m.group(0) != "{{" + m.group(1) + "}}" or m.group(1) not in PLACEHOLDERS:
            raise ValueError(f"card template {template}: unknown placeholder {m.group(0)} (known: "
                             + ", ".join("{{" + p + "}}" for p in PLACEHOLDERS) + ")")
    header = text.split("---", 2)[1] if text.startswith("---") and text.count("---") >= 2 else ""
    if "{{metadata}}" not in header:
        raise ValueError(f"card template {template} has no {{{{metadata}}}} in a leading --- header: the built "
                         "card would not map the dataset's configs")


def render_card(
    result: PipelineResult, parameters: dict[str, Any], fingerprint: str, repo: str, template: Path | None = None,
    audit: list[AuditResult] | None = None,
) -> str:
    """Fill the template; every `{{name}}` in it must be known (a typo fails the build). `audit`: the
    card's reward audit when already computed (`mrtasks.curate.card_audit`)."""
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
            ["source", "preset", "revision", "license", "rows read", "kept"],
            [[s["name"], s["preset"], f"`{s['revision']}`", s.get("license") or "unknown (see the source's own card)",
              s["rows"], s["kept"]] for s in result.sources],
        ),
        "license": _license_line(result.sources),
        "columns": column_dictionary(),
        "default_config": default_config(result) or "(none)",
        "parameters": json.dumps(parameters, indent=2, sort_keys=True),
        "quality_tables": quality_section(result.quality),
        "reward_audit": card_section(result.rows, results=audit),  # mrtasks.rewards.audit
    }

    assert set(values) == set(PLACEHOLDERS), "PLACEHOLDERS must list every value"

    def fill(m: re.Match[str]) -> str:
        if m.group(1) not in values:
            raise KeyError(f"unknown card placeholder {m.group(0)}")
        return values[m.group(1)]

    return _PLACEHOLDER.sub(fill, template.read_text(encoding="utf-8"))
