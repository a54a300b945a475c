"""Per-epoch resampling: new masks, permutations and corruptions every epoch (the paper's future work).

The paper fixes each sample's masks and shuffle once; its conclusion asks for "dynamically sampling
masking locations and reordering strategies during training". Here a task's rows are re-derived
from the `trajectories` config at read time, through `datasets`' `with_transform`, with the seed of
the current epoch: deterministic in (seed, epoch, trajectory), with every reference column and
the prompt rebuilt by the task's own constructor (`TaskSpec.build` on `Trajectory.from_dict`), so
the reward scores each epoch's row against that epoch's reference.

    trajectories = load_dataset(folder, "trajectories", split="train")
    ids = load_dataset(folder, "masked_then_fill", split="train")["id"]   # the build's selection
    train, resampler = resampled_dataset(trajectories, "masked_then_fill", seed=0, ids=ids,
                                         config=MaskedThenFillConfig(selection="random"))
    trainer = GRPOTrainer(..., train_dataset=train, callbacks=[epoch_callback(resampler)])

Epoch 0 uses the build's seed, so its rows are the build's rows (same seed and task config).
Why this works with TRL: `GRPOTrainer` reads rows lazily (its `RepeatSampler` hands indices to a
`DataLoader` whose fetch calls `Dataset.__getitems__`, which runs the transform at batch time),
with `dataloader_num_workers=0` by default (so the transform runs in the training process and
sees the epoch the callback set), and `Trainer` calls `on_epoch_begin` before it creates the
epoch's dataloader iterator. The `num_generations` copies of a prompt, and the batches reused
across `num_iterations`/`steps_per_generation`, are fetched within one epoch, so they are the
same row. With dataloader workers (> 0) each worker holds its own copy of the resampler; they
would not see the new epoch unless `persistent_workers` is off (the default), where workers are
re-created (and the resampler re-pickled, epoch included) at each epoch's iterator.

Which draws change: Step Reordering (the permutation), Error Correction (which step, which edit,
and whether the row has an error), Masked-Then-Fill with `selection="random"` (which formulas;
with the default "importance" selection the top formulas are masked every epoch; `num_scored`
positions are redrawn either way). Outcome rows have nothing to draw and are refused.
"""

from __future__ import annotations

import hashlib
import logging
import math
from collections.abc import Iterable, Sequence
from typing import Any

from mrtasks.tasks.base import NotEligible
from mrtasks.tasks.registry import Row, get_task
from mrtasks.trajectory import Trajectory

logger = logging.getLogger(__name__)


def epoch_seed(seed: int, epoch: int) -> int:
    """The construction seed of an epoch: the build's own seed at epoch 0, a derived one after."""
    if epoch < 0:
        raise ValueError(f"epoch must be >= 0, got {epoch}")
    if epoch == 0:
        return seed
    return int.from_bytes(hashlib.sha256(f"mrtasks-epoch:{seed}:{epoch}".encode()).digest()[:8], "big")


class EpochResampler:
    """A `with_transform` function: a batch of trajectory rows in, the task's rows for the
    current epoch out. `set_epoch` (or the callback of `epoch_callback`) moves it on.

    A trajectory that is not eligible under a later epoch's draw (rare: eligibility does not
    depend on the seed for the built-in tasks) gets its epoch-0 row; `fallbacks` counts them.
    """

    def __init__(self, task: str, seed: int = 0, config: Any | None = None, columns: Sequence[str] | None = None):
        self.spec = get_task(task)
        if self.spec.one_per_problem:
            raise ValueError(f"task {task!r} has nothing to resample (one fixed row per problem)")
        self.seed = seed
        self.config = self.spec.config_cls() if config is None else config
        self.columns = list(columns) if columns is not None else list(self.spec.features())
        self.epoch = 0
        self.fallbacks = 0
        self._cache: dict[tuple[int, str], Row] = {}

    def set_epoch(self, epoch: int) -> None:
        epoch = int(epoch)
        if epoch < 0:
            raise ValueError(f"epoch must be >= 0, got {epoch}")
        if epoch != self.epoch:
            self._cache.clear()
        self.epoch = epoch

    def row(self, trajectory: dict[str, Any] | Trajectory, epoch: int | None = None) -> Row:
        """The task row of one trajectory at `epoch` (default: the current one)."""
        epoch = self.epoch if epoch is None else epoch
        traj = trajectory if isinstance(trajectory, Trajectory) else Trajectory.from_dict(trajectory)
        key = (epoch, traj.id)
        if epoch == self.epoch and key in self._cache:
            return self._cache[key]
        try:
            row = self.spec.build(traj, epoch_seed(self.seed, epoch), self.config)
        except NotEligible:
            if epoch == 0:
                raise
            self.fallbacks += 1
            logger.debug("%s: %s is not eligible at epoch %d; its epoch-0 row is used", self.spec.name, traj.id, epoch)
            row = self.spec.build(traj, self.seed, self.config)
        if epoch == self.epoch:
            if len(self._cache) > 65_536:  # the copies of a prompt arrive together: a small cache suffices
                self._cache.clear()
            self._cache[key] = row
        return row

    def __call__(self, batch: dict[str, list[Any]]) -> dict[str, list[Any]]:
        n = len(next(iter(batch.values()))) if batch else 0
        rows = [self.row({k: v[i] for k, v in batch.items()}) for i in range(n)]
        return {c: [r[c] for r in rows] for c in self.columns}

    def eligible(self, trajectory: dict[str, Any] | Trajectory) -> bool:
        try:
            self.row(trajectory, epoch=0)
        except NotEligible:
            return False
        return True


def resampled_dataset(
    trajectories: Any,
    task: str,
    seed: int = 0,
    config: Any | None = None,
    ids: Iterable[str] | None = None,
    columns: Sequence[str] | None = None,
) -> tuple[Any, EpochResampler]:
    """`trajectories` (a `datasets.Dataset` of the `trajectories` config) as `task` rows redrawn per epoch.

    Keeps the trajectories the task can build (and, with `ids`, only those ids: pass the task
    config's ids to train on the build's selection, so Stage II still draws from Stage I's
    problems). Returns the transformed dataset and its resampler (hand it to `epoch_callback`).
    """
    resampler = EpochResampler(task, seed, config, columns)
    wanted = set(ids) if ids is not None else None
    keep = [
        i
        for i, t in enumerate(trajectories)
        if (wanted is None or t["id"] in wanted) and resampler.eligible(t)
    ]
    if not keep:
        raise ValueError(f"no trajectory can make a {task!r} row")
    return trajectories.select(keep).with_transform(resampler), resampler


def epoch_of(state: Any) -> int:
    """The epoch a `transformers.TrainerState` is in (its `epoch` is fractional: 1.5 is epoch 1)."""
    value = getattr(state, "epoch", None) or 0.0
    return max(0, math.floor(value + 1e-9))


def epoch_callback(*resamplers: EpochResampler) -> Any:
    """A `transformers.TrainerCallback` that moves the resamplers to each epoch as it begins.

    Imported lazily: `mrtasks` itself does not need transformers.
    """
    from transformers import TrainerCallback

    class ResampleEachEpoch(TrainerCallback):
        def on_epoch_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
            epoch = epoch_of(state)
            for r in resamplers:
                r.set_epoch(epoch)
            logger.info("resampling %s rows for epoch %d", ", ".join(r.spec.name for r in resamplers), epoch)

    return ResampleEachEpoch()
