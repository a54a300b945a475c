"""Rows of a built dataset folder, for the tools that score policies on a build (audit, adversary).

A module of its own so that the audit can import the adversarial generators and their command line
can read a build without either importing the other (`tests/test_layers.py` forbids file cycles).
Rows are checked against their task's features when loaded: a hand-edited or foreign folder (a null
cell, a list where a string belongs, another task's rows) is one `DatasetError` line naming the row,
never a traceback from inside a reward.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from mrtasks.logs import first_line


class DatasetError(ValueError):
    """A folder that is not a readable build, or a row its task's reward cannot score (one line)."""


def build_configs(dataset: str | Path) -> dict[str, list[str]]:
    """The configs of a build folder and their splits, read from its card's YAML `configs:`."""
    from mrtasks.output import read_marker

    dataset = Path(dataset)
    if not dataset.is_dir():
        raise DatasetError(f"{dataset}: " + ("not a folder" if dataset.exists() else "no such folder"))
    card = dataset / "README.md"
    if read_marker(dataset) is None:
        raise DatasetError(f"{dataset} is not a build of `python -m mrtasks.build` (no build_stats.json marker)")
    if not card.is_file():
        raise DatasetError(f"{dataset} has no README.md (the card whose configs: maps the Parquet files)")
    try:
        import yaml

        text = card.read_text(encoding="utf-8")
        header = yaml.safe_load(text.split("---", 2)[1]) if text.startswith("---") else None
    except (OSError, UnicodeDecodeError, IndexError, yaml.YAMLError) as e:
        raise DatasetError(f"{card}: the card's YAML header is broken ({first_line(e)})") from None
    configs = header.get("configs") if isinstance(header, dict) else None
    if not isinstance(configs, list):
        raise DatasetError(f"{card}: the card's YAML header has no configs: list")
    out = {}
    for c in configs:
        if isinstance(c, dict) and isinstance(c.get("config_name"), str):
            out[c["config_name"]] = [f.get("split") for f in c.get("data_files") or [] if isinstance(f, dict)]
    return out


def load_config(dataset: str | Path, config: str) -> dict[str, list[dict[str, Any]]]:
    """Every split of one config of a built folder, as lists of rows; `DatasetError` (one line) when
    `datasets` cannot load it. Read quietly through a fresh cache: `datasets` keys a local folder's
    cache by its name and the files' mtimes, so a folder edited or replaced under the same name could
    be read stale."""
    import tempfile

    from datasets import load_dataset
    from datasets.utils import are_progress_bars_disabled, disable_progress_bars, enable_progress_bars
    from datasets.utils import logging as datasets_logging

    quiet, verbosity = are_progress_bars_disabled(), datasets_logging.get_verbosity()
    disable_progress_bars()  # converting a build is a second's work, not a progress bar per split
    datasets_logging.set_verbosity(datasets_logging.CRITICAL)  # a broken file is our one line, not also its logs
    try:
        with tempfile.TemporaryDirectory(prefix="mrtasks-rows-") as cache:
            try:
                loaded = load_dataset(str(dataset), config, cache_dir=cache)
            except Exception as e:  # noqa: BLE001 - datasets raises many kinds for a broken folder: one line
                raise DatasetError(f"cannot load the {config} config of {dataset}: {first_line(e, named=True)}") from None
            return {split: part.to_list() for split, part in loaded.items()}
    finally:
        datasets_logging.set_verbosity(verbosity)
        if not quiet:
            enable_progress_bars()


def load_rows(dataset: str | Path, task: str, splits: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """All rows of one task config of a built folder (every split unless `splits` is given), each
    checked against the task's features."""
    loaded = load_config(dataset, task)
    rows: list[dict[str, Any]] = []
    for split in splits or sorted(loaded):
        for i, row in enumerate(loaded.get(split, [])):
            problem = row_problem(row, task)
            if problem:
                raise DatasetError(f"{dataset}: {task} {split} row {i} (id {row.get('id')!r}): {problem}")
            rows.append(row)
    return rows


def row_problem(row: dict[str, Any], task: str) -> str | None:
    """Why `row` is not a row of `task` its reward can score (a missing, null or mistyped column, or
    another task's row), or None."""
    if row.get("task") != task:
        return f"its task column says {row.get('task')!r}, not {task!r}"
    for column, feature in _features(task).items():
        if column not in row:
            return f"no {column!r} column"
        if row[column] is None:
            return f"{column!r} is null"
        if not _conforms(row[column], feature):
            return f"{column!r} is not {feature}"
    return None


@functools.cache
def _features(task: str) -> Any:
    """A task's column features, built once (`row_problem` checks every row of a build against them)."""
    from mrtasks.tasks import get_task

    return get_task(task).features()


def _conforms(value: Any, feature: Any) -> bool:
    import datasets

    if isinstance(feature, datasets.Value):
        if feature.dtype == "string":
            return isinstance(value, str)
        if feature.dtype.startswith(("int", "uint")):
            return isinstance(value, int) and not isinstance(value, bool)
        if feature.dtype.startswith("float"):
            return isinstance(value, (int, float)) and not isinstance(value, bool)
        return True
    if isinstance(feature, dict):
        return isinstance(value, dict) and all(k in value and _conforms(value[k], f) for k, f in feature.items())
    inner = feature[0] if isinstance(feature, list) else getattr(feature, "feature", None)
    if inner is not None:
        return isinstance(value, list) and all(v is not None and _conforms(v, inner) for v in value)
    return True

