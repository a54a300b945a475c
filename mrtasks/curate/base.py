"""The curation interface: fill a trajectory's `formulas` and `steps`, or drop it with a reason; the error of an unreadable source."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

from mrtasks.trajectory import Trajectory


class SourceError(ValueError):
    """A source spec or file that cannot be read at all (as opposed to one bad row)."""


@dataclass(frozen=True)
class Drop:
    """A row left out of the build; `reason` is a short snake_case key counted in the summary."""

    id: str
    reason: str
    detail: str = ""


class Annotator(ABC):
    """Turns bare trajectories (problem, solution, answer) into annotated ones.

    Output is in input order, one item per input: the annotated trajectory (formulas ranked by
    importance, non-overlapping, verbatim spans of the solution; steps in reference order) or a Drop.
    """

    name: str

    @abstractmethod
    def annotate(self, trajectories: list[Trajectory]) -> list[Trajectory | Drop]: ...

    def refine(self, trajectories: list[Trajectory]) -> list[Trajectory | Drop]:
        """Optionally rewrite solutions (the paper's o3-mini pass); the default keeps them."""
        return list(trajectories)
