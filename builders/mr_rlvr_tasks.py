"""The `datasets.GeneratorBasedBuilder` for the mr-rlvr task dataset: one BuilderConfig per config.

`datasets` 4+ runs no loading scripts, so this builder runs at build time: `mrtasks.build` hands
it the curated rows of one config (`rows={split: [row, ...]}`) and it writes them, with the
explicit `Features` below, as one Parquet file per split. The Hub copy is those Parquet files plus
the card, so users load it with plain `load_dataset(repo_or_folder, config)`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import datasets

from mrtasks.tasks import MASKED_FILL, OUTCOME, STEP_ORDER

TRAJECTORIES = "trajectories"

_MESSAGES = [{"role": datasets.Value("string"), "content": datasets.Value("string")}]
_STR = datasets.Value("string")
_COMMON = {"id": _STR, "task": _STR, "source": _STR, "kind": _STR, "problem": _STR}

FEATURES: dict[str, datasets.Features] = {
    MASKED_FILL: datasets.Features(
        {
            **_COMMON,
            "solution": _STR,
            "masked_solution": _STR,
            "masks": [_STR],
            "scored": [datasets.Value("int32")],
            "prompt": _MESSAGES,
        }
    ),
    STEP_ORDER: datasets.Features(
        {
            **_COMMON,
            "steps": [_STR],
            "shuffled_steps": [_STR],
            "order": [datasets.Value("int32")],
            "prompt": _MESSAGES,
        }
    ),
    OUTCOME: datasets.Features({**_COMMON, "answer": _STR, "prompt": _MESSAGES}),
    TRAJECTORIES: datasets.Features(
        {
            "id": _STR,
            "source": _STR,
            "kind": _STR,
            "problem": _STR,
            "solution": _STR,
            "answer": _STR,
            "formulas": [{"text": _STR, "start": datasets.Value("int32"), "end": datasets.Value("int32")}],
            "steps": [_STR],
        }
    ),
}

DESCRIPTIONS = {
    MASKED_FILL: "Masked-Then-Fill: restore the masked key formulas of a solution, in order.",
    STEP_ORDER: "Step Reordering: recover the reference order of a solution's shuffled steps.",
    OUTCOME: "Outcome (Stage II): solve the problem; the final boxed answer is verified.",
    TRAJECTORIES: "The curated trajectories (problem, solution, ranked formulas, steps) to re-derive tasks.",
}


class MrRlvrTasks(datasets.GeneratorBasedBuilder):
    """Writes one config of the mr-rlvr dataset from rows curated by `mrtasks.build`."""

    VERSION = datasets.Version("0.1.0")
    BUILDER_CONFIGS = [
        datasets.BuilderConfig(name=name, version=datasets.Version("0.1.0"), description=text)
        for name, text in DESCRIPTIONS.items()
    ]

    def __init__(self, *args: Any, rows: dict[str, list[dict[str, Any]]] | None = None, **kwargs: Any):
        self._rows = rows or {}
        super().__init__(*args, **kwargs)

    def _info(self) -> datasets.DatasetInfo:
        return datasets.DatasetInfo(description=DESCRIPTIONS[self.config.name], features=FEATURES[self.config.name])

    def _split_generators(self, dl_manager: Any) -> list[datasets.SplitGenerator]:
        return [datasets.SplitGenerator(name=split, gen_kwargs={"split": split}) for split in self._rows]

    def _generate_examples(self, split: str) -> Iterator[tuple[int, dict[str, Any]]]:
        names = FEATURES[self.config.name]
        for k, row in enumerate(self._rows[split]):
            yield k, {name: row.get(name) for name in names}
