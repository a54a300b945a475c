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

from mrtasks.tasks import get_task, list_tasks
from mrtasks.trajectory import TRAJECTORIES, trajectory_features


def features(config: str) -> datasets.Features:
    """The explicit Features of one config: a task's from the registry, or the corpus'."""
    return trajectory_features() if config == TRAJECTORIES else get_task(config).features()


DESCRIPTIONS = {name: get_task(name).description for name in list_tasks()} | {
    TRAJECTORIES: "The curated trajectories (problem, solution, ranked formulas, steps) to re-derive tasks."
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
        return datasets.DatasetInfo(description=DESCRIPTIONS[self.config.name], features=features(self.config.name))

    def _split_generators(self, dl_manager: Any) -> list[datasets.SplitGenerator]:
        return [datasets.SplitGenerator(name=split, gen_kwargs={"split": split}) for split in self._rows]

    def _generate_examples(self, split: str) -> Iterator[tuple[int, dict[str, Any]]]:
        names = features(self.config.name)
        for k, row in enumerate(self._rows[split]):
            yield k, {name: row.get(name) for name in names}
