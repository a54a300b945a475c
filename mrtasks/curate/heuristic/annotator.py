"""`HeuristicAnnotator`: the offline, free, deterministic annotator (the build's default)."""

from __future__ import annotations

from dataclasses import replace

from mrtasks.curate.base import Annotator, Drop
from mrtasks.curate.heuristic.config import HeuristicConfig
from mrtasks.curate.heuristic.ranking import extract_formulas
from mrtasks.curate.heuristic.steps import split_steps
from mrtasks.trajectory import Trajectory


class HeuristicAnnotator(Annotator):
    """Offline, free, deterministic annotation; the build's default."""

    name = "heuristic"

    def __init__(self, config: HeuristicConfig = HeuristicConfig()):
        self.config = config

    def annotate_one(self, traj: Trajectory) -> Trajectory | Drop:
        if not traj.solution.strip():
            return Drop(traj.id, "empty_solution")
        return replace(
            traj,
            formulas=extract_formulas(traj.solution, self.config, traj.problem),
            steps=split_steps(traj.solution, self.config),
        )

    def annotate(self, trajectories: list[Trajectory]) -> list[Trajectory | Drop]:
        return [self.annotate_one(t) for t in trajectories]
