"""The reward CLIs: the benchmark and the labeled-pair accuracy report."""

from pathlib import Path

from mrtasks.rewards import accuracy, bench


def test_bench_scores_realistic_rollouts(shared_data, capsys):
    args = ["--answers", str(shared_data / "benchmarks" / "math500.jsonl"), "-n", "256", "--skip-mathruler"]
    results = bench.main(args + ["--odd-rows", "256"])
    odd = results.pop("one odd row")
    assert set(results) == {"outcome", "step_order", "mask_fill (7 masks)"}
    assert all(r["per_s"] > 0 and r["worst"] < 2.0 for r in results.values())
    assert odd["fallbacks"] == 0 and odd["odd"] < 5 * odd["clean"] + 1.0  # one pass, no row-by-row retry
    assert "items/s" in capsys.readouterr().out


def test_accuracy_report(capsys):
    scores = accuracy.main([str(Path(__file__).parent / "data" / "equivalence_pairs.jsonl")])
    assert scores["mrtasks"].false_pos == 0
    assert "mathruler" in capsys.readouterr().out


def test_accuracy_report_bad_input_is_one_clear_error(tmp_path, capsys):
    import pytest

    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"reference": "1", "prediction": "1", "equal": true}\nnot json\n', encoding="utf-8")
    for path in (bad, tmp_path / "missing.jsonl"):
        with pytest.raises(SystemExit) as err:
            accuracy.main([str(path), "--checkers", "mrtasks"])
        assert err.value.code == 2
    assert "bad.jsonl:2: not a JSON object" in capsys.readouterr().err


def test_accuracy_report_gives_the_core_figure(tmp_path, capsys):
    path = tmp_path / "pairs.jsonl"
    rows = ['{"reference": "1", "prediction": "1", "equal": true, "core": true}',
            '{"reference": "2", "prediction": "3", "equal": false, "core": true}',
            '{"reference": "5\\\\%", "prediction": "5", "equal": false, "core": false}']  # fmt: skip
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    accuracy.main([str(path), "--checkers", "mrtasks"])
    assert "core" in capsys.readouterr().out.split("mrtasks", 1)[1]
    core = accuracy.main([str(path), "--checkers", "mrtasks", "--core"])["mrtasks"]
    assert (core.total, core.correct) == (2, 2)


def test_bench_draws_a_wrong_answer_for_any_answer_even_past_pythons_digit_limit():
    import random

    from mrtasks.rewards.bench import wrong

    for answer in ("41", "-7", "1" * 4301, "9" * 100_000):
        w = wrong(answer, random.Random(0))
        assert isinstance(w, str) and w != answer
