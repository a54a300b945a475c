"""Rows of a built dataset folder, for the tools that score policies on a build (audit, adversary).

A module of its own so that the audit can import the adversarial generators and their command line
can read a build without either importing the other (`tests/test_layers.py` forbids file cycles).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any


def load_rows(dataset: str | Path, task: str, splits: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """All rows of one config of a built folder (every split unless `splits` is given)."""
    from datasets import load_dataset

    loaded = load_dataset(str(dataset), task)
    rows: list[dict[str, Any]] = []
    for split in splits or sorted(loaded):
        if split in loaded:
            rows.extend(loaded[split].to_list())
    return rows
