"""Per-epoch resampling: rows redrawn from the `trajectories` config, deterministic in (seed, epoch, row)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from datasets import load_dataset

from mrtasks.build import main as build_main
from mrtasks.rewards import get_reward
from mrtasks.tasks import (
    ERROR_CORRECTION,
    MASKED_THEN_FILL,
    OUTCOME,
    STEP_REORDERING,
    MaskedThenFillConfig,
    get_task,
)
from mrtasks.tasks.resample import EpochResampler, epoch_callback, epoch_of, epoch_seed, resampled_dataset

RANDOM_MASKS = MaskedThenFillConfig(selection="random", num_masks=3)  # 3 of >= 7 formulas: many draws
CHANGING = {MASKED_THEN_FILL: "masks", STEP_REORDERING: "order", ERROR_CORRECTION: "steps"}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("resample_build")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("HF_DATASETS_OFFLINE", "1")
        assert build_main(["--out", str(out), "--no-progress"]) == 0
    return out


@pytest.fixture(scope="module")
def trajectories(built):
    return load_dataset(str(built), "trajectories", split="train")


def score(task: str, rows: list[dict]) -> list[float | None]:
    spec = get_task(task)
    columns = {k: [r[k] for r in rows] for k in rows[0] if k != "prompt"}
    return get_reward(spec.reward)([spec.reference_answer(r) for r in rows], **columns)


def rows_of(ds) -> list[dict]:
    """Rows read as a trainer reads them (`__getitem__`, which runs the transform; `to_list` would not)."""
    return [ds[i] for i in range(len(ds))]


def config_for(task: str):
    return RANDOM_MASKS if task == MASKED_THEN_FILL else None


@pytest.mark.parametrize("task", [MASKED_THEN_FILL, STEP_REORDERING, ERROR_CORRECTION])
def test_two_epochs_draw_different_rows_each_scored_by_its_own_reference(trajectories, task):
    ds, resampler = resampled_dataset(trajectories, task, seed=0, config=config_for(task))
    first = rows_of(ds)  # epoch 0
    resampler.set_epoch(1)
    second = rows_of(ds)
    assert len(first) == len(second) > 3
    assert [r["id"] for r in first] == [r["id"] for r in second]
    column = CHANGING[task]
    changed = sum(a[column] != b[column] for a, b in zip(first, second))
    assert changed >= len(first) // 2, f"only {changed} of {len(first)} {task} rows changed"
    for rows in (first, second):
        assert score(task, rows) == [1.0] * len(rows)
        assert all(r["prompt"] == get_task(task).prompt(r) for r in rows)  # prompt rebuilt to match
    # the previous epoch's reference answers do not fit the new rows: the reward reads this epoch's columns
    spec = get_task(task)
    pairs = [(a, b) for a, b in zip(first, second) if a[column] != b[column]]
    columns = {k: [b[k] for _, b in pairs] for k in second[0] if k != "prompt"}
    stale = get_reward(spec.reward)([spec.reference_answer(a) for a, _ in pairs], **columns)
    assert sum(stale) / len(stale) < 0.9


def test_rows_are_deterministic_in_seed_epoch_and_row_and_epoch0_is_the_build(built, trajectories):
    ds, resampler = resampled_dataset(trajectories, STEP_REORDERING, seed=0)
    resampler.set_epoch(3)
    again, other = EpochResampler(STEP_REORDERING, seed=0), EpochResampler(STEP_REORDERING, seed=1)
    again.set_epoch(3)
    other.set_epoch(3)
    by_id = {t["id"]: t for t in trajectories}
    rows = rows_of(ds)
    assert rows == [again.row(by_id[r["id"]]) for r in rows]
    assert [r["order"] for r in rows] != [other.row(by_id[r["id"]])["order"] for r in rows]
    # epoch 0 with the build's seed and config gives exactly the build's rows
    static = {r["id"]: r for r in load_dataset(str(built), STEP_REORDERING, split="train")}
    resampler.set_epoch(0)
    fresh = {r["id"]: r for r in rows_of(ds)}
    assert static and all(fresh[i] == static[i] for i in static)
    assert epoch_seed(0, 0) == 0 and epoch_seed(0, 1) != epoch_seed(0, 2) != epoch_seed(1, 2)


def test_ids_restrict_to_the_builds_selection_and_outcome_is_refused(built, trajectories):
    ids = load_dataset(str(built), ERROR_CORRECTION, split="train")["id"][:5]
    ds, _ = resampled_dataset(trajectories, ERROR_CORRECTION, ids=ids)
    assert sorted(ds["id"]) == sorted(ids)
    with pytest.raises(ValueError, match="nothing to resample"):
        EpochResampler(OUTCOME)
    with pytest.raises(ValueError, match="epoch"):
        EpochResampler(STEP_REORDERING).set_epoch(-1)


def test_the_callback_sets_the_epoch_from_the_trainer_state():
    from transformers import TrainerControl, TrainerState, TrainingArguments

    a, b = EpochResampler(STEP_REORDERING), EpochResampler(ERROR_CORRECTION)
    callback = epoch_callback(a, b)
    state = TrainerState()
    for value, expected in ((0.0, 0), (1.0, 1), (2.5, 2), (2.9999999999999996, 3), (3.0, 3), (1.5, 1)):
        state.epoch = value
        callback.on_epoch_begin(TrainingArguments(output_dir="unused", report_to=[]), state, TrainerControl())
        assert a.epoch == b.epoch == expected == epoch_of(state)


@pytest.mark.slow
def test_grpo_trainer_sees_new_rows_each_epoch(built, trajectories, tmp_path):
    """Real TRL: a tiny model, three epochs; the reward records the rows it is called with."""
    from trl import GRPOConfig, GRPOTrainer

    from training.tiny_model import build_tiny_model

    ids = load_dataset(str(built), STEP_REORDERING, split="train")["id"][:4]
    ds, resampler = resampled_dataset(trajectories, STEP_REORDERING, ids=ids)
    model = build_tiny_model(tmp_path / "tiny", [r["prompt"][1]["content"] for r in rows_of(ds)])
    seen: dict[int, dict[str, list[int]]] = {}
    inner = get_reward(STEP_REORDERING)

    def step_reordering(completions, **columns):
        for i, order in zip(columns["id"], columns["order"]):
            group = seen.setdefault(resampler.epoch, {})
            assert group.setdefault(i, order) == order  # one row per id within an epoch
        return inner(completions, **columns)

    args = GRPOConfig(
        output_dir=str(tmp_path / "out"), num_train_epochs=3, per_device_train_batch_size=4, num_generations=2,
        max_completion_length=8, learning_rate=1e-4, report_to=[], logging_steps=1, save_strategy="no",
        use_cpu=True, seed=0, loss_type="grpo", beta=0.0,
    )  # fmt: skip
    trainer = GRPOTrainer(
        model=str(model), reward_funcs=step_reordering, args=args, train_dataset=ds,
        callbacks=[epoch_callback(resampler)],
    )  # fmt: skip
    trainer.train()
    assert sorted(seen) == [0, 1, 2] and all(len(rows) == len(ids) for rows in seen.values())
    assert seen[0] != seen[1] != seen[2]
    for epoch, rows in seen.items():
        for i, order in rows.items():
            assert order == resampler.row(next(t for t in trajectories if t["id"] == i), epoch)["order"]


@pytest.mark.slow
def test_training_run_stage1_error_correction_resamples_each_epoch(built, tmp_path, caplog):
    """`python -m training.run --stage 1 --task error_correction resample_per_epoch=true` on a tiny
    model: two epochs of real GRPO steps, the callback moves the rows to epoch 1, rewards are logged."""
    from training.run import main
    from training.tiny_model import build_tiny_model, teach

    spec = get_task(ERROR_CORRECTION)
    rows = load_dataset(str(built), ERROR_CORRECTION, split="train").to_list()
    pairs = [(r["prompt"], spec.reference_answer(r)) for r in rows]
    texts = [m["content"] for r in rows for m in r["prompt"]] + [c for _, c in pairs]
    base = teach(build_tiny_model(tmp_path / "tiny", texts, vocab_size=1024), pairs, steps=60, prompt_tokens=64)
    out = tmp_path / "run"
    argv = [
        "--recipe", "qwen2.5-3b", "--stage", "1", "--task", ERROR_CORRECTION, "--dataset", str(built),
        "--output-dir", str(out), f"model_name_or_path={base}", "resample_per_epoch=true",
        "dtype=float32", "bf16=false", "gradient_checkpointing=false", "num_generations=4",
        "per_device_train_batch_size=4", "rollout_batch_prompts=2", "mini_batch_prompts=1",  # 2 steps per epoch
        "max_train_samples=2", "max_completion_length=32", "max_steps=4", "save_steps=2", "logging_steps=1",
        "learning_rate=1e-3", "max_prompt_length=4096", "seed=0",
    ]  # fmt: skip
    with caplog.at_level("INFO", logger="mrtasks.tasks.resample"):
        assert main(argv) == 0
    stage = out / f"stage1_{ERROR_CORRECTION}"
    summary = json.loads((stage / "training_summary.json").read_text())
    assert summary["global_step"] == 4 and summary["run_config"]["resample_per_epoch"] is True
    logs = [json.loads(line) for line in (stage / "reward_log.jsonl").read_text().splitlines()]
    means = [(r["epoch"], r[f"rewards/{ERROR_CORRECTION}/mean"]) for r in logs if f"rewards/{ERROR_CORRECTION}/mean" in r]
    # one rollout per epoch (its reward logged once): one in epoch 0, one in epoch 1
    assert len(means) == 2 and all(0.0 <= m <= 1.0 for _, m in means) and means[0][0] < 1.0 < means[1][0]
    assert "rows for epoch 1" in caplog.text and "rows for epoch 0" in caplog.text
