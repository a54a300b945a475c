"""End to end: `python -m mrtasks.build` on the shared corpora, loaded back with `load_dataset`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from datasets import load_dataset

from mrtasks.build import main
from mrtasks.curate.filters import BenchmarkIndex, normalize_problem
from mrtasks.curate.pipeline import CONFIGS as PIPELINE_CONFIGS
from mrtasks.tasks import MASK_TOKEN

CONFIGS = list(PIPELINE_CONFIGS)  # every registered task config, plus trajectories


@pytest.fixture(autouse=True)
def offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")


def build(out: Path, *args: str) -> dict:
    assert main(["--out", str(out), "--no-progress", *args]) == 0
    return json.loads((out / "build_stats.json").read_text())


@pytest.fixture(scope="module")
def corpora_build(shared_data, tmp_path_factory):
    out = tmp_path_factory.mktemp("corpora_build")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HF_HUB_OFFLINE", "1")
        mp.setenv("HF_DATASETS_OFFLINE", "1")
        stats = build(out, "--source", f"corpora:{shared_data / 'corpora'}", "--limit", "150")
    return out, stats


def test_every_config_loads_back_with_the_counts_of_the_build(corpora_build):
    out, stats = corpora_build
    for config in CONFIGS:
        ds = load_dataset(str(out), config)
        assert set(ds) == {"train", "validation"}
        for split in ds:
            assert ds[split].num_rows == stats["counts"][config][split] > 0
    assert stats["counts"]["masked_then_fill"]["train"] > 100
    assert {"filter", "masked_then_fill", "step_reordering", "outcome"} <= set(stats["drops"])


def test_rows_are_valid_examples_of_their_task(corpora_build):
    out, _ = corpora_build
    for row in load_dataset(str(out), "masked_then_fill", split="train"):
        n = len(row["masks"])  # 7 distinct formulas, each masked at every copy
        assert row["task"] == "masked_then_fill" and len({"".join(m.split()) for m in row["masks"]}) == 7 <= n
        assert row["masked_solution"].count(MASK_TOKEN) == n and row["scored"] == list(range(n))
        for m in row["masks"]:
            assert f"${m}$" not in row["masked_solution"]  # no copy of a mask left in sight
        restored = row["masked_solution"]
        for m in row["masks"]:
            restored = restored.replace(MASK_TOKEN, m, 1)
        assert restored == row["solution"]
        assert [m["role"] for m in row["prompt"]] == ["system", "user"] and row["masked_solution"] in row["prompt"][1]["content"]
    for row in load_dataset(str(out), "step_reordering", split="validation"):
        assert [row["shuffled_steps"][i] for i in row["order"]] == row["steps"]
        assert row["order"] != sorted(row["order"]) and 3 <= len(row["steps"])  # no step cap: a prompt limit
        assert sum(len(m["content"]) for m in row["prompt"]) <= 6000
    for row in load_dataset(str(out), "outcome", split="train"):
        assert row["kind"] == "computation" and row["answer"].strip()
    traj = load_dataset(str(out), "trajectories", split="train")[0]
    assert all(traj["solution"][f["start"] : f["end"]] == f["text"] for f in traj["formulas"])


def test_no_problem_crosses_splits_and_no_benchmark_problem_is_left(corpora_build):
    out, _ = corpora_build
    problems = {"train": set(), "validation": set()}
    for config in CONFIGS:
        for split, ds in load_dataset(str(out), config).items():
            problems[split] |= {normalize_problem(p) for p in ds["problem"]}
    assert problems["train"] and problems["validation"]
    assert not problems["train"] & problems["validation"]
    index = BenchmarkIndex.load(None, threshold=0.8)
    kept = load_dataset(str(out), "trajectories", split="train")["problem"]
    assert not any(index.match(p) for p in kept)


def test_stage2_training_problems_come_from_stage1_training(corpora_build):
    out, _ = corpora_build
    stage1 = set()
    for config in ("masked_then_fill", "step_reordering"):
        stage1 |= {i.split("#")[0] for i in load_dataset(str(out), config, split="train")["id"]}
    assert set(load_dataset(str(out), "outcome", split="train")["id"]) <= stage1


def test_same_inputs_and_seed_give_byte_identical_files(corpora_build, shared_data, tmp_path):
    out, stats = corpora_build
    again = build(tmp_path / "again", "--source", f"corpora:{shared_data / 'corpora'}", "--limit", "150")
    assert again["fingerprint"] == stats["fingerprint"]
    files = sorted(p.relative_to(out) for p in out.rglob("*.parquet"))
    assert len(files) == 2 * len(CONFIGS)
    for f in files:
        assert (out / f).read_bytes() == (tmp_path / "again" / f).read_bytes()
    assert (out / "README.md").read_text() == (tmp_path / "again" / "README.md").read_text()
    other = build(tmp_path / "seed1", "--source", f"corpora:{shared_data / 'corpora'}", "--limit", "150", "--seed", "1")
    assert other["fingerprint"] != stats["fingerprint"]


def test_rebuilding_into_the_same_folder_loads_the_new_rows(tmp_path):
    # `datasets` caches a local folder by its YAML configs, not its files: the card's
    # per-config description carries the build fingerprint so a rebuild is never served stale.
    out = tmp_path / "rebuilt"
    build(out, "--seed", "0")
    first = load_dataset(str(out), "step_reordering", split="train")["order"]
    build(out, "--seed", "1")
    second = load_dataset(str(out), "step_reordering", split="train")["order"]
    assert first != second
    import pyarrow.parquet as pq

    on_disk = pq.read_table(next((out / "data" / "step_reordering").glob("train-*.parquet"))).column("order").to_pylist()
    assert second == on_disk


def test_default_build_uses_the_bundled_sample_offline(tmp_path, capsys):
    stats = build(tmp_path / "demo")
    printed = capsys.readouterr().out
    assert "masked_then_fill" in printed and "fingerprint" in printed
    assert [s["name"] for s in stats["sources"]] == ["sample"]
    assert all(stats["counts"][c]["train"] > 0 for c in CONFIGS)
    assert load_dataset(str(tmp_path / "demo"), "outcome", split="train").num_rows == stats["counts"]["outcome"]["train"]


def test_caps_and_flags_apply(tmp_path):
    stats = build(
        tmp_path / "small", "--stage1-train", "5", "--stage2-train", "2", "--min-formulas", "3", "--num-masks", "3", "--num-scored", "2"
    )
    assert stats["counts"]["masked_then_fill"]["train"] == 5 and stats["counts"]["outcome"]["train"] == 2
    assert stats["drops"]["select"]["over_cap"] > 0
    row = load_dataset(str(tmp_path / "small"), "masked_then_fill", split="train")[0]
    assert len(row["masks"]) == 3 and len(row["scored"]) == 2


def test_malformed_source_rows_are_counted_in_the_build(tmp_path):
    src = tmp_path / "messy.jsonl"
    good = {"problem": "Show $1<2$.", "solution": "We have $2-1=1$.\n\nAnd $1>0$ holds.\n\nSo $1<2$ follows."}
    lines = [json.dumps(good), "{broken", json.dumps({"problem": 3, "solution": "x"}), json.dumps({"solution": "x"})]
    src.write_text("\n".join(lines) + "\n")
    stats = build(tmp_path / "out", "--source", f"{src}:kind=proof", "--validation-fraction", "0", "--allow-empty")
    assert stats["drops"]["source"] == {"bad_json": 1, "bad_type": 1, "missing_field": 1}
    assert stats["counts"]["trajectories"] == {"train": 1, "validation": 0}
    assert list(load_dataset(str(tmp_path / "out"), "trajectories")) == ["train"]  # empty splits are left out


def test_bad_arguments_fail_clearly(tmp_path, capsys):
    assert main(["--out", str(tmp_path / "x"), "--source", str(tmp_path / "absent.jsonl"), "--no-progress"]) == 2
    assert "not found" in capsys.readouterr().err
    assert main(["--out", str(tmp_path / "x"), "--source", "nope.txt"]) == 2
    assert "unknown source" in capsys.readouterr().err
    assert main(["--out", str(tmp_path / "x"), "--annotator", "llm"]) == 2
    assert "--model" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_help_lists_every_flag():
    text = subprocess.run([sys.executable, "-m", "mrtasks.build", "--help"], capture_output=True, text=True, check=True).stdout
    for flag in ["--source", "--out", "--seed", "--limit", "--push-to-hub", "--private", "--annotator", "--base-url", "--model",
                 "--concurrency", "--cache", "--refine", "--min-formulas", "--stage1-train", "--stage2-validation",
                 "--benchmarks", "--no-decontaminate", "--dedup-threshold", "corpora:DIR"]:
        assert flag in text


@pytest.mark.slow
def test_full_shared_corpora_build(shared_data, tmp_path):
    stats = build(tmp_path / "full", "--source", f"corpora:{shared_data / 'corpora'}")
    assert sum(s["rows"] for s in stats["sources"]) == 2000 + 675 + 100 + 186 + 185 + 488
    assert stats["drops"]["filter"]["benchmark_overlap"] >= 30  # 5 verbatim MATH500 + miniF2F restatements
    for config in CONFIGS:
        assert load_dataset(str(tmp_path / "full"), config, split="train").num_rows == stats["counts"][config]["train"]


def test_the_demo_scores_every_task_of_a_build(corpora_build, capsys):
    from mrtasks.demo import main as demo

    out, _ = corpora_build
    demo([str(out)])
    printed = capsys.readouterr().out
    for config in CONFIGS[:-1]:  # every task (not the corpus)
        assert f"== {config}:" in printed
        assert f"{config:<16} reference              -> 1.000" in printed  # the reference earns full reward
