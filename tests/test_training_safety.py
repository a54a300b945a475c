"""`training.run` refuses up front what it cannot train (one line, exit 2 or 3, in `--dry-run` too),
never reports a diverged stage as done, and keeps its reward log free of replayed steps on resume."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO_ROOT
from tests.test_training import SMOKE_OVERRIDES, built_dataset, reward_logs, teaching_examples  # noqa: F401
from training.run import EXIT_DATA, EXIT_FAILED, EXIT_USAGE, main

HUB_MODEL = "model_name_or_path=Qwen/Qwen2.5-3B"  # a Hub id: --dry-run loads nothing of it


def error_lines(capsys) -> list[str]:
    """The `error: ` lines main printed (in process, an uncaught exception would fail the test itself;
    a `Traceback` here can be a logging handler left on an earlier test's closed capture)."""
    err = capsys.readouterr().err
    return [line for line in err.splitlines() if line.startswith("error: ")]


@pytest.fixture(scope="module")
def tiny_model(built_dataset, tmp_path_factory) -> Path:  # noqa: F811
    from training.tiny_model import build_tiny_model

    texts, _ = teaching_examples(built_dataset)
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "m", texts, vocab_size=1024)


# --- F23 / F24: values refused up front, in --dry-run as in the real run ------------------------


@pytest.mark.parametrize("override, words", [
    ("beta=nan", "beta must be a finite number"),
    ("learning_rate=nan", "learning_rate must be a finite number"),
    ("learning_rate=inf", "learning_rate must be a finite number"),
    ("temperature=nan", "temperature must be a finite number"),
    ("learning_rate=-1", "learning_rate must be >= 0"),
    ("max_completion_length=0", "max_completion_length must be >= 1"),
    ("max_steps=-5", "max_steps must be a positive number"),
    ("max_prompt_length=-1", "max_prompt_length must be >= 1"),
    ("max_train_samples=-1", "max_train_samples must be >= 1"),
    ("num_generations=0", "num_generations must be >= 2"),
    ("per_device_train_batch_size=0", "per_device_train_batch_size must be >= 1"),
    ("top_p=1.5", "top_p must be > 0 and <= 1"),
    ("dtype=bogus", "dtype must be one of"),
    ("report_to=bogus", "report_to ['bogus'] is not an integration"),
    ("dataset_config=nosuch", "dataset_config must be a task config"),
    ("dataset_config=outcome", "reward 'masked_then_fill' scores masked_then_fill rows only"),
    ("reward_funcs=outcome", "reward 'outcome' scores outcome rows only"),
])
def test_bad_values_are_refused_by_dry_run_with_one_line(override, words, capsys):
    code = main(["--recipe", "qwen2.5-3b", "--stage", "1", "--dry-run", HUB_MODEL, override])
    errors = error_lines(capsys)
    assert code == EXIT_USAGE
    assert len(errors) == 1 and words in errors[0], errors


def test_values_in_range_still_dry_run(capsys):
    ok = ["learning_rate=0", "max_steps=-1", "report_to=none", "reward_funcs=masked_then_fill,format",
          "dataset_config=masked_then_fill", "top_p=1.0", "dtype=bfloat16"]
    assert main(["--recipe", "qwen2.5-3b", "--stage", "1", "--dry-run", HUB_MODEL, *ok]) == 0
    assert main(["--recipe", "qwen2.5-3b", "--stage", "baseline", "--dry-run", "reward_funcs=process,format"]) == 0
    capsys.readouterr()


def test_a_config_or_split_the_build_lacks_and_an_unknown_stop_token_are_refused(built_dataset, tiny_model,  # noqa: F811
                                                                                 tmp_path, capsys):
    common = ["--recipe", "qwen2.5-3b", "--stage", "1", "--dataset", str(built_dataset),
              "--output-dir", str(tmp_path / "run")]
    for dry in (["--dry-run"], []):
        for override, expected, words in (
            # the build lacks it: the dataset is missing (3), as when it fails to load
            ("train_split=nosuch", EXIT_DATA, "train_split 'nosuch' is not a split of"),
            ("dataset_config=nosuch", EXIT_DATA, "dataset_config 'nosuch' is not a config of"),
            ("dataset_config=trajectories", EXIT_USAGE, "dataset_config must be a task config"),
            ("stop_tokens=[NOSUCH]", EXIT_USAGE, "stop token 'NOSUCH' is not a token"),
            ("dataset_config=outcome", EXIT_USAGE, "scores masked_then_fill rows only"),
        ):
            code = main([*common, *dry, f"model_name_or_path={tiny_model}", *SMOKE_OVERRIDES, override])
            errors = error_lines(capsys)
            assert code == expected, (dry, override)
            assert len(errors) == 1 and words in errors[0], errors
    assert not (tmp_path / "run").exists()  # refused before any folder was made


def test_the_reward_log_survives_a_none_mean_and_flags_a_nan_loss(tmp_path):
    from transformers import TrainerControl, TrainerState, TrainingArguments

    from training.run import reward_log_callback

    callback = reward_log_callback(tmp_path / "log.jsonl")
    args = TrainingArguments(output_dir=str(tmp_path), use_cpu=True, report_to="none")
    state, control = TrainerState(global_step=3), TrainerControl()
    callback.on_log(args, state, control, logs={"rewards/outcome/mean": None, "loss": 0.5})
    assert callback.diverged is None and not control.should_training_stop
    callback.on_log(args, state, control, logs={"rewards/outcome/mean": 0.25, "loss": math.nan})
    assert callback.diverged == "loss is nan at step 3" and control.should_training_stop
    assert len((tmp_path / "log.jsonl").read_text().splitlines()) == 2


# --- F23: a diverged stage is never reported done -------------------------------------------------


def test_a_stage_whose_weights_go_nan_fails_and_is_not_marked_done(built_dataset, tiny_model, tmp_path, capsys):  # noqa: F811
    out = tmp_path / "run"
    argv = ["--recipe", "qwen2.5-3b", "--stage", "1", "--dataset", str(built_dataset), "--output-dir", str(out),
            f"model_name_or_path={tiny_model}", *SMOKE_OVERRIDES, "max_steps=2", "save_steps=1",
            "rollout_batch_prompts=1", "max_completion_length=8", "learning_rate=1e30"]
    assert main(argv) == EXIT_FAILED
    errors = error_lines(capsys)
    assert len(errors) == 1 and "training diverged" in errors[0] and "NaN" in errors[0], errors
    stage = out / "stage1_masked_then_fill"
    assert not (stage / "training_summary.json").exists()  # no "done" marker
    assert not (stage / "model.safetensors").exists()  # no final save
    assert (stage / "diverged.json").is_file()
    # A rerun does not say "nothing left to do", nor resume from NaN checkpoints: one line, code 1.
    assert main(argv) == EXIT_FAILED
    errors = error_lines(capsys)
    assert len(errors) == 1 and "diverged in an earlier run" in errors[0] and "--overwrite" in errors[0], errors
    assert not (stage / "training_summary.json").exists()


def test_nonfinite_weights_are_found():
    import torch

    from training.run import nonfinite_weights

    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Linear(2, 1))
    assert nonfinite_weights(model) == []
    with torch.no_grad():
        model[1].bias[0] = math.inf
    assert nonfinite_weights(model) == ["1.bias"]


# --- F27: YAML recipes are typed like the command line --------------------------------------------


def write_recipe(tmp_path: Path, extra: str) -> Path:
    recipe = tmp_path / "r.yaml"
    recipe.write_text(f"extends: {RECIPES_BASE}\nstage: 2\nreward_funcs: [outcome]\n{extra}")
    return recipe


RECIPES_BASE = REPO_ROOT / "training" / "recipes" / "qwen2.5-3b" / "base.yaml"


@pytest.mark.parametrize("line, words", [
    ("learning_rate: [1, 2]", "learning_rate must be a number, got [1, 2] (list)"),
    ("max_steps: {a: 1}", "max_steps must be an integer, got {'a': 1} (dict)"),
    ("max_steps: null", "max_steps must be an integer, got null"),
    ("max_steps: 3.5", "max_steps must be an integer"),
    ("beta: .nan", "beta must be a finite number"),
    ("stop_tokens: <|im_end|>", "stop_tokens must be a list of strings"),
    ("max_steps: ten", "max_steps must be an integer, got 'ten'"),
    ("max_steps: 3\nmax_steps: 4", "key 'max_steps' is given twice (lines 4 and 5)"),
])
def test_yaml_values_are_type_checked_and_duplicates_refused(line, words, tmp_path, capsys):
    recipe = write_recipe(tmp_path, line + "\n")
    assert main(["--recipe", str(recipe), "--dry-run", "--output-dir", str(tmp_path / "o")]) == EXIT_USAGE
    errors = error_lines(capsys)
    assert len(errors) == 1 and words in errors[0] and str(recipe) in errors[0], errors


def test_yaml_values_of_the_right_type_pass(tmp_path, capsys):
    # YAML 1.1 reads 1e-6 as a string; it is typed as the command line types it. null where allowed.
    recipe = write_recipe(tmp_path, "learning_rate: 1e-6\nmax_prompt_length: null\nmax_steps: 7\n")
    assert main(["--recipe", str(recipe), "--dry-run", "--output-dir", str(tmp_path / "o")]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed["grpo"]["learning_rate"] == 1e-6 and printed["grpo"]["max_steps"] == 7
    assert printed["run"]["max_prompt_length"] is None


# --- F25: a resume drops the replayed steps from the reward log -----------------------------------


def test_trim_reward_log_drops_steps_after_the_checkpoint(tmp_path):
    from training.run import trim_reward_log

    log = tmp_path / "reward_log.jsonl"
    log.write_text("".join(json.dumps({"step": s, "loss": 0.1}) + "\n" for s in (1, 2, 3, 4)))
    assert trim_reward_log(log, 2) == 2
    assert [json.loads(line)["step"] for line in log.read_text().splitlines()] == [1, 2]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["reward_log.jsonl"]  # replaced, no temp left
    assert trim_reward_log(log, 5) == 0 and trim_reward_log(tmp_path / "none.jsonl", 1) == 0


def test_a_resumed_stage_logs_each_step_once(built_dataset, tiny_model, tmp_path):  # noqa: F811
    out = tmp_path / "run"
    argv = ["--recipe", "qwen2.5-3b", "--stage", "1", "--dataset", str(built_dataset), "--output-dir", str(out),
            f"model_name_or_path={tiny_model}", *SMOKE_OVERRIDES, "max_steps=3", "save_steps=1",
            "rollout_batch_prompts=1", "max_completion_length=8"]
    assert main(argv) == 0
    stage = out / "stage1_masked_then_fill"
    # Simulate a crash after checkpoint-1 whose log already holds steps 2 and 3.
    (stage / "training_summary.json").unlink()
    for name in ("checkpoint-2", "checkpoint-3"):
        shutil.rmtree(stage / name)
    assert main(argv) == 0
    steps = [r["step"] for r in reward_logs(stage) if "loss" in r]
    assert steps == [1, 2, 3]
    assert json.loads((stage / "training_summary.json").read_text())["resumed_from"] == str(stage / "checkpoint-1")


# --- F26: rows the reward cannot score are refused when the data loads ----------------------------


def edited_build(src: Path, dest: Path, config: str, edit) -> Path:  # noqa: ANN001
    import pyarrow as pa
    import pyarrow.parquet as pq

    shutil.copytree(src, dest)
    path = dest / "data" / config / "train-00000-of-00001.parquet"
    table = pq.read_table(path)
    rows = table.to_pylist()
    edit(rows)
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)
    return dest


@pytest.mark.parametrize("column, value, words", [
    ("prompt", None, "row 1 (id "),
    ("task", "outcome", "its task column says 'outcome'"),
])
def test_rows_the_reward_cannot_score_are_one_line_exit_3(built_dataset, tiny_model, tmp_path, capsys,  # noqa: F811
                                                           column, value, words):
    def edit(rows):  # noqa: ANN001, ANN202
        rows[1][column] = value

    # a distinct folder name: `datasets` caches a local folder by its name and mtimes
    data = edited_build(built_dataset, tmp_path / f"data_{column}", "masked_then_fill", edit)
    code = main(["--recipe", "qwen2.5-3b", "--stage", "1", "--dataset", str(data), "--output-dir",
                 str(tmp_path / "run"), f"model_name_or_path={tiny_model}", *SMOKE_OVERRIDES])
    errors = error_lines(capsys)
    assert code == EXIT_DATA
    assert len(errors) == 1 and words in errors[0] and "row 1" in errors[0] and "masked_then_fill/train" in errors[0], errors
    assert not (tmp_path / "run" / "stage1_masked_then_fill" / "training_summary.json").exists()
