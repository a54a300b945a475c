"""Splits by problem and the paper's sample sizes.

Every problem goes to `train` or `validation` by a seeded hash of its normalized text, so a
problem (with all of its trajectories, in every config) lands in exactly one split, and the
assignment of a problem does not depend on which other problems are in the build.

Paper sizes (Experimental Setup): Stage I has 10k Masked-Then-Fill and 10k Step-Reordering
training samples and 6k validation samples (3k per task); Stage II has 5k computational
training samples drawn from Stage I's training problems and 1.5k validation samples. Each
selection is capped by what the sources hold and balanced between proof and computation kinds.
"""

from __future__ import annotations

import hashlib
import random
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from mrtasks.curate.filters import normalize_problem

TRAIN, VALIDATION = "train", "validation"
PAPER_HOLDOUT = 6_000 / 26_000
SPLITS: tuple[str, ...] = (TRAIN, VALIDATION)

T = TypeVar("T")


@dataclass(frozen=True)
class SplitConfig:
    """How many samples each config and split gets (the paper's defaults)."""

    stage1_train: int = 10_000
    """Training samples per Stage I task (the paper: 10k Masked-Then-Fill, 10k Step Reordering)."""
    stage1_validation: int = 3_000
    """Validation samples per Stage I task (the paper: 6k over its two tasks)."""
    stage2_train: int = 5_000
    """Stage II (outcome) training samples, from Stage I's computational training problems."""
    stage2_validation: int = 1_500
    """Stage II validation samples."""
    validation_fraction: float | None = None
    """Share of problems held out for validation; None: the paper's ratio 6k / (20k + 6k),
    whatever the caps (so small test builds still get both splits)."""

    def __post_init__(self) -> None:
        for name in ("stage1_train", "stage1_validation", "stage2_train", "stage2_validation"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0")
        if self.validation_fraction is not None and not 0.0 <= self.validation_fraction < 1.0:
            raise ValueError("validation_fraction must be in [0, 1)")

    @property
    def holdout(self) -> float:
        return PAPER_HOLDOUT if self.validation_fraction is None else self.validation_fraction


def assign_split(problem: str, seed: int, validation_fraction: float) -> str:
    """`train` or `validation` for a problem: a seeded hash of its normalized text."""
    digest = hashlib.blake2b(f"{seed}:{normalize_problem(problem)}".encode(), digest_size=8).digest()
    return VALIDATION if int.from_bytes(digest, "big") / 2**64 < validation_fraction else TRAIN


def balanced_sample(
    items: list[T], n: int, seed: int, salt: str, group: Callable[[T], Any], order: Callable[[T], Any]
) -> list[T]:
    """Up to n items, drawn round-robin from each group (e.g. kind) after a seeded shuffle.

    `order` (e.g. the id) sorts the input first, so the result does not depend on input order.
    The result is in a seeded random order, ready to be written.
    """
    rng = random.Random(f"{seed}:{salt}")
    groups: dict[Any, list[T]] = defaultdict(list)
    for item in sorted(items, key=order):
        groups[group(item)].append(item)
    queues = []
    for key in sorted(groups):
        members = groups[key]
        rng.shuffle(members)
        queues.append(members)
    picked: list[T] = []
    depth = 0
    while len(picked) < n and any(depth < len(q) for q in queues):
        for q in queues:
            if depth < len(q) and len(picked) < n:
                picked.append(q[depth])
        depth += 1
    rng.shuffle(picked)
    return picked
