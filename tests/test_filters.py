"""Near-duplicate removal, benchmark decontamination and problem-level splits."""

from __future__ import annotations

from collections import Counter

from mrtasks.curate.filters import (
    BenchmarkIndex,
    NearDuplicateIndex,
    default_fingerprints,
    problem_key,
    write_fingerprints,
)
from mrtasks.curate.sources import iter_source, parse_source
from mrtasks.curate.splits import TRAIN, VALIDATION, SplitConfig, assign_split, balanced_sample
from mrtasks.jsonl import read_jsonl

BENCHMARKS = ["aime24", "aime25", "amc23", "math500"]


def test_problem_key_ignores_latex_noise_but_not_content():
    assert problem_key(r"Find $\left(x+1\right)$  when $x = 2$.") == problem_key(r"find \(( x + 1 )\) when x=2")
    assert problem_key("Compute $2+3$.") != problem_key("Compute $2-3$.")


def test_near_duplicates_are_found_and_distinct_problems_kept():
    index = NearDuplicateIndex(threshold=0.8)
    base = (
        "A bag has 5 red marbles and 7 blue marbles. Two marbles are drawn without replacement. "
        "What is the probability that both are red?"
    )
    assert index.add("a", base) is None
    assert index.add("b", base.replace("Two marbles", "Two  marbles").replace("?", " ?")) == "a"  # whitespace noise
    assert index.add("c", base.replace("both are red", "both are red, as a fraction")) == "a"  # small edit
    assert index.add("d", "Prove that every bounded monotone sequence of real numbers converges.") is None
    assert index.add("e", base.replace("5 red", "4 red").replace("7 blue", "9 blue").replace("red?", "blue?")) is None


def test_bundled_fingerprints_are_reproducible_from_the_shared_benchmarks(shared_data, tmp_path):
    out = tmp_path / "fp.jsonl"
    n = write_fingerprints([shared_data / "benchmarks" / f"{b}.jsonl" for b in BENCHMARKS], out)
    assert n == 30 + 30 + 40 + 500
    assert out.read_bytes() == default_fingerprints().read_bytes()


def test_every_benchmark_problem_is_caught_and_restatements_too(shared_data):
    index = BenchmarkIndex.load(None, threshold=0.8)
    assert index.benchmarks == BENCHMARKS
    for b in BENCHMARKS:
        for row in read_jsonl(shared_data / "benchmarks" / f"{b}.jsonl"):
            match = index.match(row["problem"])
            assert match is not None and match.benchmark == b
    # miniF2F restates MATH problems with an extra "Show that it is X." sentence.
    mini = {t.id: t for t in iter_source(parse_source(f"minif2f:{shared_data}/corpora/minif2f_informal.jsonl"))}
    assert index.match(mini["minif2f/mathd_algebra_478"].problem).id == "test/algebra/478.json"
    # The Qwen CoT file holds 5 MATH500 problems verbatim (SOURCES.md).
    qwen = list(iter_source(parse_source(f"qwen_cot:{shared_data}/corpora/qwen_math_cot_100.jsonl")))
    math500 = {problem_key(row["problem"]) for row in read_jsonl(shared_data / "benchmarks" / "math500.jsonl")}
    exact = [t for t in qwen if hasattr(t, "problem") and index.match(t.problem) and problem_key(t.problem) in math500]
    assert len(exact) == 5


def test_grade_school_problems_are_not_flagged(shared_data):
    index = BenchmarkIndex.load(None, threshold=0.8)
    gsm = list(iter_source(parse_source(f"gsm8k:{shared_data}/corpora/gsm8k_train_first2000.jsonl:limit=500")))
    assert sum(index.match(t.problem) is not None for t in gsm) == 0


def test_split_assignment_is_seeded_stable_and_per_problem():
    problems = [f"Problem number {k}: compute ${k}+1$." for k in range(2000)]
    splits = [assign_split(p, 0, 0.25) for p in problems]
    assert 0.2 < splits.count(VALIDATION) / len(problems) < 0.3
    assert splits == [assign_split(p, 0, 0.25) for p in problems]
    assert assign_split("Compute $1+1$.", 0, 0.25) == assign_split("compute  \\(1 + 1\\)", 0, 0.25)
    assert splits != [assign_split(p, 1, 0.25) for p in problems]
    assert SplitConfig().holdout == 6000 / 26000
    assert {assign_split(p, 0, 0.0) for p in problems} == {TRAIN}


def test_balanced_sample_alternates_kinds_and_ignores_input_order():
    items = [{"id": f"p{k}", "kind": "proof"} for k in range(10)] + [{"id": f"c{k}", "kind": "computation"} for k in range(3)]
    pick = balanced_sample(items, 6, 0, "t", lambda r: r["kind"], lambda r: r["id"])
    assert Counter(r["kind"] for r in pick) == {"computation": 3, "proof": 3}
    assert pick == balanced_sample(items[::-1], 6, 0, "t", lambda r: r["kind"], lambda r: r["id"])
    assert len(balanced_sample(items, 100, 0, "t", lambda r: r["kind"], lambda r: r["id"])) == 13


def test_sibling_problems_with_different_answers_are_not_near_duplicates():
    index = NearDuplicateIndex(threshold=0.8)
    base = "A bag has 5 red marbles and 7 blue marbles. Two marbles are drawn without replacement. "
    base += "What is the probability that both are red?"
    assert index.add("a", base, answer="5/33") is None
    assert index.add("b", base.replace("?", " ?"), answer="5/33") == "a"  # same problem, same answer
    assert index.add("c", base.replace("both are red", "both are red, as a fraction"), answer="0.15") is None
    assert index.add("d", base.replace("both are red", "both are red, as a fraction"), answer=" 0.15 ") == "c"


def test_writing_fingerprints_refuses_a_file_with_no_problem_and_never_touches_the_bundled_one(tmp_path, capsys):
    from mrtasks.curate.filters import default_fingerprints, main

    bundled = default_fingerprints().read_bytes()
    (tmp_path / "q.jsonl").write_text('{"question_text": "What is 1+1?"}\n')
    (tmp_path / "ok.jsonl").write_text('{"problem": "What is the sum of the first ten primes?"}\n')
    (tmp_path / "notes.txt").write_text("mine\n")
    for argv, code, words in (([str(tmp_path / "q.jsonl")], 2, "has no row with a problem text"),
                              ([str(tmp_path / "absent.jsonl")], 2, "not found"),
                              ([str(tmp_path / "ok.jsonl"), "--out", str(tmp_path)], 4, "is a folder"),
                              ([str(tmp_path / "ok.jsonl"), "--out", str(tmp_path / "notes.txt")], 4, "was not written by")):
        assert main(argv) == code and words in capsys.readouterr().err, argv
    assert default_fingerprints().read_bytes() == bundled and (tmp_path / "notes.txt").read_text() == "mine\n"
    assert main([str(tmp_path / "ok.jsonl"), "--out", str(tmp_path / "fp.jsonl")]) == 0
    assert main([str(tmp_path / "ok.jsonl"), "--out", str(tmp_path / "fp.jsonl")]) == 0  # its own file is rewritten
    assert len(read_jsonl(tmp_path / "fp.jsonl")) == 1
