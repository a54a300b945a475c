"""Benchmark loading (the real copies in ../shared/data/benchmarks) and its error messages."""

import os
import re
import subprocess
import sys

import pytest

from eval.benchmarks import BenchmarkError, answer_to_text, load_benchmarks, load_jsonl_benchmark
from tests.conftest import REPO_ROOT


@pytest.fixture(scope="module")
def benchmarks(shared_data):
    loaded = load_benchmarks(["aime24", "aime25", "amc23", "math500"], shared_data / "benchmarks")
    return {b.name: b for b in loaded}


def test_the_four_benchmarks_load_from_a_local_folder(benchmarks):
    assert {name: len(b.problems) for name, b in benchmarks.items()} == {
        "aime24": 30, "aime25": 30, "amc23": 40, "math500": 500}
    first = benchmarks["amc23"].problems[0]
    assert first.id == "0" and first.answer == "27" and first.problem.startswith("Cities $A$ and $B$")
    assert benchmarks["math500"].source["type"] == "jsonl" and len(benchmarks["math500"].source["sha256"]) == 64


def test_answers_keep_the_sources_spelling(benchmarks):
    aime24 = [p.answer for p in benchmarks["aime24"].problems]
    assert "025" in aime24 and "073" in aime24  # leading zeros kept: the grader compares numbers
    amc23 = [p.answer for p in benchmarks["amc23"].problems]  # 27.0 in the original: now whole numbers
    assert all(re.fullmatch(r"-?\d+", a) for a in amc23) and "-1" in amc23
    math500 = {p.id: p.answer for p in benchmarks["math500"].problems}
    assert math500["test/precalculus/807.json"] == r"\left( 3, \frac{\pi}{2} \right)"


def test_json_numbers_become_text():
    assert answer_to_text(27.0) == "27"
    assert answer_to_text(2.5) == "2.5"
    assert answer_to_text(70) == "70"
    assert answer_to_text(" 025 ") == "025"


def test_max_problems_and_explicit_files(shared_data, tmp_path):
    path = tmp_path / "mine.jsonl"
    path.write_text('{"id": 1, "problem": "What is $1+1$?", "answer": 2.0}\n\n')
    loaded = load_benchmarks([f"mine={path}", "aime25"], shared_data / "benchmarks", max_problems=3)
    assert [(b.name, len(b.problems)) for b in loaded] == [("mine", 1), ("aime25", 3)]
    assert loaded[0].problems[0].id == "1" and loaded[0].problems[0].answer == "2"


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"id": "a", "problem": "p"}\n', r"bad\.jsonl:1: missing field\(s\) \['answer'\]"),
        ('{"id": "a", "problem": "p", "answer": "1"}\n{"id": "a", "problem": "q", "answer": "2"}\n',
         "duplicate problem id 'a'"),
        ('{"id": "a", "problem": "p", "answer": "1"}\n{"id": "b", "problem": \n', r"bad\.jsonl:2: not valid JSON"),
        ('{"id": "a", "problem": "p", "answer": ""}\n', "empty answer"),
        ("", "no problems"),
    ],
)
def test_bad_files_give_a_clear_error(tmp_path, content, message):
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(BenchmarkError, match=message):
        load_jsonl_benchmark("bad", path)


def test_missing_file_and_unknown_name(tmp_path):
    with pytest.raises(BenchmarkError, match="no such file"):
        load_benchmarks(["aime24"], tmp_path)
    with pytest.raises(BenchmarkError, match="unknown benchmark 'gsm8k'"):
        load_benchmarks(["gsm8k"])


def test_offline_hub_load_says_how_to_use_local_files(tmp_path):
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    proc = subprocess.run(
        [sys.executable, "-m", "eval.run", "--model", "unused", "--benchmarks", "aime24",
         "--output-dir", str(tmp_path / "out")],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode != 0
    assert "could not load HuggingFaceH4/aime_2024@main" in proc.stderr
    assert "--benchmark-dir" in proc.stderr
    assert not (tmp_path / "out").exists()
    assert "Traceback" not in proc.stderr


def test_hub_field_mapping_on_a_local_parquet_copy(shared_data, tmp_path, monkeypatch):
    """The Hub path, run on a Parquet folder shaped like math-ai/amc23 (question, float answer)."""
    import datasets

    from eval.benchmarks import HUB_BENCHMARKS, HubSpec, load_hub_benchmark

    raw = datasets.load_dataset("json", data_files=str(shared_data / "benchmarks/raw/amc23_test.jsonl"), split="train")
    assert raw.features["answer"].dtype == "float64"
    (tmp_path / "amc23").mkdir()
    raw.to_parquet(tmp_path / "amc23" / "test-00000-of-00001.parquet")
    monkeypatch.setitem(HUB_BENCHMARKS, "amc23", HubSpec(str(tmp_path / "amc23"), "main", "test", "id", "question",
                                                         "answer"))
    bench = load_hub_benchmark("amc23")
    assert len(bench.problems) == 40
    assert bench.problems[0].answer == "27" and bench.problems[0].id == "0"
    assert bench.problems[0].problem.startswith("Cities $A$ and $B$")
    assert bench.source["type"] == "hub" and bench.source["split"] == "test"
