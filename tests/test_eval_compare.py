"""`python -m eval.compare`: the paper's Table 1 layout from several summaries."""

import json
import logging
import subprocess
import sys

import pytest

from eval.compare import OUTPUT_MARKER, main
from eval.tables import comparison_table, relative_gain
from tests.conftest import REPO_ROOT

# The paper's Table 1, Qwen2.5-3B rows for AIME24 and AIME25 (Pass@1, Pass@5, Pass@8 in %).
PAPER = {
    "Base": {"aime24": (1.93, 7.48, 10.23), "aime25": (0.73, 3.58, 5.13)},
    "+GRPO": {"aime24": (5.63, 14.29, 17.29), "aime25": (2.03, 8.53, 12.10)},
    "+MR-RLVR": {"aime24": (6.30, 13.20, 15.43), "aime25": (2.76, 10.44, 14.05)},
}


def summary_for(label: str) -> dict:
    """A summary.json as eval.run writes it, with only the fields the table reads."""
    benchmarks = {name: {"pass@k": {str(k): v / 100 for k, v in zip((1, 5, 8), values)}}
                  for name, values in PAPER[label].items()}
    average = {str(k): sum(b["pass@k"][str(k)] for b in benchmarks.values()) / 2 for k in (1, 5, 8)}
    return {
        "k": [1, 5, 8],
        "model": {"name_or_path": f"qwen2.5-3b{label.lower()}"},
        "generation": {"n": 64, "temperature": 0.6, "top_p": 0.95, "max_new_tokens": 4096, "seed": 0,
                       "backend": {"name": "vllm"}},
        "prompt": {"style": "paper"},
        "benchmarks": benchmarks,
        "average": {"pass@k": average},
    }


@pytest.fixture
def summary_files(tmp_path):
    paths = []
    for label in PAPER:
        path = tmp_path / f"{label.strip('+').lower()}.json"
        path.write_text(json.dumps(summary_for(label)))
        paths.append(str(path))
    return paths


def test_three_runs_give_the_papers_layout_with_gains_over_grpo(summary_files, tmp_path, capsys):
    main(summary_files + ["--output", str(tmp_path / "table.md"), "--plot", str(tmp_path / "cmp.png")])
    printed = capsys.readouterr().out
    lines = printed.splitlines()
    assert lines[0] == ("| Benchmark | Pass@1 Base | Pass@1 +GRPO | Pass@1 +MR-RLVR | Pass@5 Base | Pass@5 +GRPO | "
                        "Pass@5 +MR-RLVR | Pass@8 Base | Pass@8 +GRPO | Pass@8 +MR-RLVR |")
    aime24 = lines[2].split(" | ")
    assert aime24[:4] == ["| AIME24", "1.93", "5.63", "**6.30** (↑11.90%)"]
    assert aime24[5:7] == ["**14.29**", "13.20 (↓7.63%)"]  # bold marks the best of each group
    assert lines[3].startswith("| AIME25 | 0.73 | 2.03 | **2.76** (↑35.96%) |")
    assert lines[4].startswith("| Average |")
    assert "Relative gains are over +GRPO." in printed
    written = (tmp_path / "table.md").read_text().split("\n", 1)
    assert written[0] == OUTPUT_MARKER and written[1] in printed + "\n"  # the marker line, then the table
    assert (tmp_path / "cmp.png").read_bytes().startswith(b"\x89PNG")


def test_labels_reference_and_missing_values(summary_files, capsys):
    grpo = json.loads(open(summary_files[1]).read())
    del grpo["benchmarks"]["aime25"]
    table = comparison_table([grpo, summary_for("+MR-RLVR")], ["GRPO", "MR"], reference=0)
    assert "| AIME25 | – | 2.76 |" in table  # no gain against a missing reference
    main(summary_files[1:] + ["--labels", "G", "M"])
    assert "Pass@1 G | Pass@1 M" in capsys.readouterr().out
    assert relative_gain(2.0, 0.0) is None and relative_gain(3.0, 2.0) == 50.0


def test_bad_input_is_a_clear_error(summary_files, tmp_path, caplog, capsys):
    other = summary_for("Base")
    other["generation"]["temperature"] = 1.0
    (tmp_path / "other.json").write_text(json.dumps(other))
    with caplog.at_level(logging.WARNING):
        main([summary_files[1], str(tmp_path / "other.json")])
    assert "differs from" in caplog.text and "temperature" in caplog.text
    # A run sampled with transformers' default top-k 50 is not comparable with one without top-k.
    caplog.clear()
    topk = summary_for("Base")
    topk["generation"]["top_k"] = 50
    (tmp_path / "topk.json").write_text(json.dumps(topk))
    with caplog.at_level(logging.WARNING):
        main([summary_files[0], str(tmp_path / "topk.json")])
    assert "differs from" in caplog.text and "top_k" in caplog.text

    (tmp_path / "junk.json").write_text("{not json")
    capsys.readouterr()
    assert main([str(tmp_path / "junk.json")]) == 2
    assert "junk.json is not a summary.json written by `python -m eval.run` (not JSON" in capsys.readouterr().err
    (tmp_path / "binary.json").write_bytes(bytes(range(256)))
    assert main([str(tmp_path / "binary.json")]) == 2
    assert capsys.readouterr().err.strip().splitlines() == [
        f"error: {tmp_path / 'binary.json'} is not a summary.json written by `python -m eval.run` (not UTF-8 text)"]
    with pytest.raises(SystemExit):
        main(summary_files + ["--labels", "only-one"])


def test_runs_over_different_problems_are_refused(summary_files, tmp_path, capsys):
    fewer = summary_for("+MR-RLVR")
    for bench in fewer["benchmarks"].values():
        bench["num_problems"] = 1
    full = summary_for("+GRPO")
    for bench in full["benchmarks"].values():
        bench["num_problems"] = 30
    (tmp_path / "fewer.json").write_text(json.dumps(fewer))
    (tmp_path / "full.json").write_text(json.dumps(full))
    assert main([str(tmp_path / "full.json"), str(tmp_path / "fewer.json"), "--labels", "full", "fewer",
                 "--output", str(tmp_path / "t.md")]) == 2
    err = capsys.readouterr().err
    assert "not over the same problems: aime24: fewer has 1 problems, full has 30" in err
    assert not (tmp_path / "t.md").exists()
    other = summary_for("+MR-RLVR")
    del other["benchmarks"]["aime25"]
    (tmp_path / "other.json").write_text(json.dumps(other))
    assert main([summary_files[1], str(tmp_path / "other.json"), "--labels", "grpo", "other"]) == 2
    assert "other covers ['aime24'] but grpo covers ['aime24', 'aime25']" in capsys.readouterr().err


def test_unwritable_output_and_plot_are_refused_before_printing(summary_files, tmp_path, capsys):
    for option, path in (("--output", tmp_path), ("--plot", tmp_path / "missing" / "p.png")):
        assert main(summary_files + [option, str(path)]) == 4
        out, err = capsys.readouterr()
        assert out == "" and err.startswith(f"error: {option} ") and err.count("\n") == 1


def test_help():
    proc = subprocess.run([sys.executable, "-m", "eval.compare", "--help"], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0
    assert all(opt in proc.stdout for opt in ("--labels", "--reference", "--output", "--plot"))


# The paper's Table 1, all four Qwen2.5-3B and R1-Distill-1.5B rows: (+GRPO, +MR-RLVR) Pass@1, Pass@5, Pass@8 in %.
TABLE1 = {
    "qwen": {"aime24": ((5.63, 14.29, 17.29), (6.30, 13.20, 15.43)),
             "aime25": ((2.03, 8.53, 12.10), (2.76, 10.44, 14.05)),
             "amc23": ((36.13, 60.39, 66.29), (40.82, 64.48, 69.80)),
             "math500": ((63.30, 79.83, 83.29), (65.87, 80.94, 83.85))},
    "r1": {"aime24": ((18.70, 36.40, 41.98), (19.43, 36.96, 42.08)),
           "aime25": ((15.94, 27.40, 29.50), (17.24, 31.72, 35.43)),
           "amc23": ((62.30, 84.23, 89.30), (63.01, 85.62, 89.48)),
           "math500": ((78.05, 90.08, 91.85), (78.51, 90.25, 91.97))},
}


def _run(rows: dict, which: int) -> dict:
    benchmarks = {b: {"pass@k": {str(k): v[which][i] / 100 for i, k in enumerate((1, 5, 8))}} for b, v in rows.items()}
    average = {str(k): sum(b["pass@k"][str(k)] for b in benchmarks.values()) / len(benchmarks) for k in (1, 5, 8)}
    return {"k": [1, 5, 8], "benchmarks": benchmarks, "average": {"pass@k": average}}


def test_average_gain_is_the_mean_of_per_benchmark_gains_as_in_the_paper():
    from eval.tables import average_gain

    # Over both models' eight cells the paper reports +9.86% Pass@1, +5.27% Pass@5, +4.00% Pass@8.
    for k, paper in ((1, 9.86), (5, 5.27), (8, 4.00)):
        cells = [average_gain([_run(rows, 0), _run(rows, 1)], 1, 0, k) for rows in TABLE1.values()]
        # From the rounded table values (e.g. AIME24 Pass@1: 11.90% vs the printed 12.04%) the means agree to 0.05.
        assert sum(cells) / 2 == pytest.approx(paper, abs=0.05), k
    grpo, mr = _run(TABLE1["qwen"], 0), _run(TABLE1["qwen"], 1)
    table = comparison_table([grpo, mr], ["GRPO", "MR"], reference=0)
    average_row = next(line for line in table.splitlines() if line.startswith("| Average"))
    gain_of_mean = relative_gain(mr["average"]["pass@k"]["1"], grpo["average"]["pass@k"]["1"])
    assert f"(↑{average_gain([grpo, mr], 1, 0, 1):.2f}%)" in average_row  # 16.27%, the paper's definition
    assert f"{gain_of_mean:.2f}%" not in average_row  # 6.64%: the gain of the mean is not what it shows


# --- refusals found by fuzzing (F22): each one line, its exit code, no file changed ----------------------------------


def _refused(argv: list[str], capsys, code: int, *words: str) -> str:
    """Run eval.compare, expect `code`, nothing printed on stdout and one `error:` line holding `words`."""
    assert main(argv) == code
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and err.startswith("error: "), err
    assert all(w in err for w in words), err
    return err


def test_benchmark_files_of_other_contents_are_refused(tmp_path, capsys):
    a, b = summary_for("+GRPO"), summary_for("+MR-RLVR")
    for bench in a["benchmarks"].values():
        bench["source"] = {"type": "jsonl", "path": "aime.jsonl", "sha256": "a" * 64}
    for bench in b["benchmarks"].values():
        bench["source"] = {"type": "jsonl", "path": "aime.jsonl", "sha256": "a" * 64}
    b["benchmarks"]["aime25"]["source"]["sha256"] = "b" * 64
    (tmp_path / "a.json").write_text(json.dumps(a))
    (tmp_path / "b.json").write_text(json.dumps(b))
    _refused([str(tmp_path / "a.json"), str(tmp_path / "b.json"), "--labels", "a", "b", "--output",
              str(tmp_path / "t.md")], capsys, 2, "aime25: b and a", "different contents", "bbbbbbbbbbbb")
    assert not (tmp_path / "t.md").exists()
    # Only when both record a sha256: a Hub source (no sha256) is compared as before.
    del b["benchmarks"]["aime25"]["source"]["sha256"]
    (tmp_path / "b.json").write_text(json.dumps(b))
    assert main([str(tmp_path / "a.json"), str(tmp_path / "b.json")]) == 0


def test_output_never_replaces_a_users_file_or_writes_into_a_build(summary_files, tmp_path, capsys):
    from mrtasks.output import MARKER, STATS_FILE, read_marker

    mine = tmp_path / "notes.md"
    mine.write_text("# my notes\n")
    _refused(summary_files + ["--output", str(mine)], capsys, 4, f"--output {mine}", "not written by eval.compare")
    assert mine.read_text() == "# my notes\n"
    # A dataset build (marked by its build_stats.json): its README.md is never replaced.
    build = tmp_path / "build"
    build.mkdir()
    (build / "README.md").write_text("the card\n")
    (build / STATS_FILE).write_text(json.dumps({MARKER: {"format": 1, "files": ["README.md", STATS_FILE]}}))
    assert read_marker(build) is not None
    _refused(summary_files + ["--output", str(build / "README.md")], capsys, 4, "dataset build")
    assert (build / "README.md").read_text() == "the card\n"
    # Its own table is replaced on a rerun, and a user's image is not a plot it may replace.
    table = tmp_path / "table.md"
    assert main(summary_files + ["--output", str(table)]) == 0
    assert main(summary_files + ["--output", str(table), "--labels", "x", "y", "z"]) == 0
    assert "Pass@1 x" in table.read_text()
    photo = tmp_path / "photo.png"
    photo.write_bytes(b"\x89PNG my photo")
    capsys.readouterr()
    _refused(summary_files + ["--plot", str(photo)], capsys, 4, "--plot", "not written by eval.compare")
    assert photo.read_bytes() == b"\x89PNG my photo"


def test_plot_extension_is_checked_before_any_work(summary_files, tmp_path, capsys):
    for name in ("x.txt", "x", "x.jpg"):
        _refused(summary_files + ["--plot", str(tmp_path / name), "--output", str(tmp_path / "t.md")], capsys, 2,
                 f"--plot {tmp_path / name}", ".png, .pdf, .svg")
        assert not (tmp_path / name).exists() and not (tmp_path / "t.md").exists()
    _refused(summary_files + ["--plot", str(tmp_path)], capsys, 4, "is a folder")  # a folder: exit 4 as before
    for ext in ("pdf", "svg"):
        assert main(summary_files + ["--plot", str(tmp_path / f"c.{ext}")]) == 0
        assert main(summary_files + ["--plot", str(tmp_path / f"c.{ext}")]) == 0  # its own plot is replaced
    assert (tmp_path / "c.pdf").read_bytes().startswith(b"%PDF")


@pytest.mark.parametrize("edit, field", [
    (lambda s: s["benchmarks"]["aime24"]["pass@k"].update({"1": "high"}), "benchmarks.aime24.pass@k.1"),
    (lambda s: s["benchmarks"]["aime24"]["pass@k"].update({"5": 5.0}), "benchmarks.aime24.pass@k.5"),
    (lambda s: s["benchmarks"]["aime25"]["pass@k"].update({"8": -0.1}), "benchmarks.aime25.pass@k.8"),
    (lambda s: s["benchmarks"]["aime24"]["pass@k"].update({"1": True}), "benchmarks.aime24.pass@k.1"),
    (lambda s: s.update(benchmarks=None), "benchmarks"),
    (lambda s: s.update(benchmarks={}), "benchmarks"),
    (lambda s: s["benchmarks"].update(aime24=[1]), "benchmarks.aime24"),
    (lambda s: s["benchmarks"]["aime24"].update({"pass@k": None}), "benchmarks.aime24.pass@k"),
    (lambda s: s["benchmarks"]["aime24"].update(curve={"one": 0.5}), "benchmarks.aime24.curve"),
    (lambda s: s["benchmarks"]["aime24"].update(num_problems="30"), "benchmarks.aime24.num_problems"),
    (lambda s: s["benchmarks"]["aime24"].update(source={"sha256": 5}), "benchmarks.aime24.source.sha256"),
    (lambda s: s["average"]["pass@k"].update({"1": 2}), "average.pass@k.1"),
    (lambda s: s.update(average=None), "average"),
    (lambda s: s.update(k=["1"]), "k"),
    (lambda s: s.update(k=[]), "k"),
    (lambda s: s.update(model=None), "model"),
    (lambda s: s["generation"].pop("temperature"), "generation.temperature"),
    (lambda s: s["generation"].update(backend="vllm"), "generation.backend"),
])
def test_hand_edited_summaries_are_refused_naming_file_and_field(summary_files, tmp_path, capsys, edit, field):
    summary = summary_for("+MR-RLVR")
    edit(summary)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(summary))
    table = tmp_path / "t.md"
    _refused([summary_files[1], str(path), "--output", str(table)], capsys, 2, f"{path}: `{field}`")
    assert not table.exists()


def test_nan_in_a_summary_is_refused(summary_files, tmp_path, capsys):
    path = tmp_path / "nan.json"
    path.write_text(json.dumps(summary_for("+MR-RLVR")).replace('"1": 0.063', '"1": NaN'))
    assert "NaN" in path.read_text()
    _refused([summary_files[1], str(path)], capsys, 2, "benchmarks.aime24.pass@k.1", "NaN".lower())
