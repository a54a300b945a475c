"""The normalized trajectory record every source is turned into, and every task is built from."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Kind = Literal["proof", "computation"]
KINDS: tuple[str, ...] = ("proof", "computation")


@dataclass(frozen=True)
class Formula:
    """A maskable span of the solution: `solution[start:end] == text`.

    For a LaTeX math span the offsets cover the content inside the delimiters, so masking keeps
    `$`, `\\[`, ... around the `<formula_masked>` tag. A theorem name is a plain-text span.
    """

    text: str
    start: int
    end: int


@dataclass
class Trajectory:
    """A problem with one reference reasoning trajectory.

    `formulas` are ranked by importance (most important first) and do not overlap; `steps`
    are the solution split into logical steps, in reference order.
    """

    id: str
    source: str
    kind: Kind
    problem: str
    solution: str
    answer: str | None = None
    formulas: list[Formula] = field(default_factory=list)
    steps: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        for f in self.formulas:
            if self.solution[f.start : f.end] != f.text:
                raise ValueError(f"formula {f.text!r} does not match solution[{f.start}:{f.end}]")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Trajectory:
        formulas = [f if isinstance(f, Formula) else Formula(**f) for f in d.get("formulas") or []]
        return cls(
            id=str(d["id"]),
            source=d["source"],
            kind=d["kind"],
            problem=d["problem"],
            solution=d["solution"],
            answer=d.get("answer"),
            formulas=formulas,
            steps=list(d.get("steps") or []),
        )


TRAJECTORIES = "trajectories"
"""The dataset config holding the curated corpus itself (not a task: its rows re-derive tasks)."""


def trajectory_features() -> Any:
    """The `datasets.Features` of the `trajectories` config (imported lazily)."""
    import datasets

    string = datasets.Value("string")
    return datasets.Features(
        {
            "id": string,
            "source": string,
            "kind": string,
            "problem": string,
            "solution": string,
            "answer": string,
            "formulas": [{"text": string, "start": datasets.Value("int32"), "end": datasets.Value("int32")}],
            "steps": [string],
        }
    )
