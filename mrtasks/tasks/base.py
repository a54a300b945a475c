"""What every task constructor shares."""

from __future__ import annotations

import random

from mrtasks.trajectory import Trajectory


class NotEligible(ValueError):
    """A trajectory cannot make an example of this task; `reason` is the counted drop reason."""

    def __init__(self, reason: str, detail: str = ""):
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason


def rng_for(traj: Trajectory, seed: int, task: str) -> random.Random:
    """A generator that depends only on (seed, task, trajectory id): stable across runs and order."""
    return random.Random(f"{seed}:{task}:{traj.id}")
