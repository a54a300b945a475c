"""The annotator benchmark reads a fixture whose texts live in any local file (`--source`), and scores
the heuristic or (`--annotator llm`) the LLM annotator, the latter against a real local
OpenAI-compatible HTTP server (`mrtasks.curate.testing.FakeOpenAIServer`) through the `openai` client."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from mrtasks.curate.annotator_bench import CUT_LAYOUTS, EXIT_ANNOTATOR, cut_layout, evaluate, load_fixture, main
from mrtasks.curate.testing import FakeOpenAIServer, request_kind, request_solution
from mrtasks.trajectory import Formula, Trajectory
from tests.conftest import REPO_ROOT

TEXTS = {
    "p1": "Assume $n$ is odd. Then $n^2 = (2k+1)^2 = 4k^2+4k+1$ is odd. Hence the claim holds.",
    "c1": "First, $3 \\cdot 4 = 12$ apples. Then $12 - 5 = 7$ are left.",
}
GOLD = {
    "p1": (["n^2 = (2k+1)^2 = 4k^2+4k+1"], ["Assume", "Then $n^2", "Hence"]),
    "c1": (["12 - 5 = 7", "3 \\cdot 4 = 12"], ["First,", "Then"]),
}


def _write(tmp_path, texts=TEXTS):
    src = tmp_path / "mini.jsonl"
    src.write_text("".join(
        json.dumps({"uid": k, "question": "Q?", "text": v, "type": "proof" if k[0] == "p" else "computation"}) + "\n"
        for k, v in texts.items()
    ))
    fixture = tmp_path / "gold.jsonl"
    fixture.write_text("".join(
        json.dumps({"id": f"mini/{k}", "source": "mini", "kind": "proof" if k[0] == "p" else "computation",
                    "split": "heldout" if k[0] == "p" else "tune",
                    "solution_sha256": hashlib.sha256(TEXTS[k].encode()).hexdigest()[:16],
                    "formulas": GOLD[k][0], "steps": GOLD[k][1]}) + "\n"
        for k in TEXTS
    ))
    return src, fixture


def _gold_steps(solution: str, starts: list[str]) -> list[str]:
    """The verbatim steps that begin at the gold step starts."""
    cuts = [solution.index(s) for s in starts] + [len(solution)]
    return [solution[a:b].strip() for a, b in zip(cuts, cuts[1:])]


def _oracle(traj: Trajectory) -> Trajectory:
    """Answers exactly the gold labels: the benchmark must then score 1.0 everywhere."""
    formulas, starts = GOLD[traj.id.split("/")[1]]
    spans = [Formula(f, traj.solution.index(f), traj.solution.index(f) + len(f)) for f in formulas]
    return dataclasses.replace(traj, formulas=spans, steps=_gold_steps(traj.solution, starts))


def test_fixture_rows_are_read_from_a_source_spec(tmp_path):
    src, fixture = _write(tmp_path)
    spec = f"{src}:problem=question,solution=text,id=uid,kind=type"
    items = load_fixture(fixture, tmp_path / "no-corpora-here", [spec])
    assert [(g["id"], t.kind) for g, t in items] == [("mini/p1", "proof"), ("mini/c1", "computation")]
    figures = {k: t.figures() for k, t in evaluate(items, _oracle).items()}
    assert figures["all"]["rows"] == 2 and figures["heldout"]["rows"] == 1
    assert figures["all"]["top7_precision"] == 1.0 and figures["all"]["step_f1"] == 1.0
    assert figures["all"]["gold_top7_recall"] == 1.0


def test_the_cli_reports_per_kind_and_refuses_changed_or_missing_texts(tmp_path, capsys):
    src, fixture = _write(tmp_path)
    spec = f"{src}:problem=question,solution=text,id=uid,kind=type"
    main(["--fixture", str(fixture), "--source", spec, "--by", "kind", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert out["all"]["rows"] == 2
    assert out["proof/all"]["rows"] == out["proof/heldout"]["rows"] == 1
    assert out["computation/tune"]["rows"] == 1 and "computation/heldout" not in out
    _write(tmp_path, {**TEXTS, "p1": TEXTS["p1"] + " Done."})
    with pytest.raises(SystemExit):
        main(["--fixture", str(fixture), "--source", spec])
    assert "mini/p1 changed since it was labelled" in capsys.readouterr().err
    _write(tmp_path, {"c1": TEXTS["c1"]})
    with pytest.raises(SystemExit):
        main(["--fixture", str(fixture), "--source", spec])
    assert "fixture id mini/p1 not found in" in capsys.readouterr().err


def test_a_second_labelling_is_scored_as_the_labellers_agreement(tmp_path, capsys):
    src, fixture = _write(tmp_path)
    spec = f"{src}:problem=question,solution=text,id=uid,kind=type"
    second = tmp_path / "second.jsonl"
    rows = [json.loads(line) for line in fixture.read_text().splitlines()]
    rows[0]["formulas"] = ["n^2 = (2k+1)^2 = 4k^2+4k+1", "n"]  # one extra formula, not the first labeller's
    rows[0]["steps"] = ["Assume", "Hence"]  # one cut fewer: precision 1, recall 2/3
    second.write_text("".join(json.dumps(r) + "\n" for r in rows))
    main(["--fixture", str(fixture), "--second-labelling", str(second), "--source", spec, "--json"])
    got = json.loads(capsys.readouterr().out)["all"]
    assert got["top7_precision"] == pytest.approx(3 / 4) and got["step_precision"] == 1.0
    assert got["step_recall"] == round(2 / 3, 4)  # the figures are rounded to 4 digits
    second.write_text(json.dumps(rows[1]) + "\n")
    with pytest.raises(SystemExit):
        main(["--fixture", str(fixture), "--second-labelling", str(second), "--source", spec])
    assert "has no row mini/p1" in capsys.readouterr().err


def test_cuts_are_counted_by_where_they_fall(tmp_path, capsys):
    text = "We first count.\n\nThere are $3$ cases.\nEach gives $2$. So $6$ in all."
    assert [cut_layout(text, text.index(s)) for s in ("There", "Each", "So")] == list(CUT_LAYOUTS)
    src, fixture = _write(tmp_path)
    spec = f"{src}:problem=question,solution=text,id=uid,kind=type"
    second = tmp_path / "second.jsonl"
    rows = [json.loads(line) for line in fixture.read_text().splitlines()]
    rows[0]["steps"] = ["Assume", "Hence"]  # keeps the cut at `Hence`, misses the one at `Then`
    second.write_text("".join(json.dumps(r) + "\n" for r in rows))
    main(["--fixture", str(fixture), "--second-labelling", str(second), "--source", spec, "--json", "--by-layout"])
    inside = json.loads(capsys.readouterr().out)["cuts_by_layout"]["all"]["inside a line"]
    assert inside == {"cuts": 2, "kept": 2, "gold_missed": 1}  # `Hence` and c1's `Then` kept, p1's `Then` missed


def test_repeated_fixtures_are_pooled_into_one_figure(tmp_path, capsys):
    """`--fixture A --fixture B`: the rows of every frozen round in one held-out figure."""
    src, fixture = _write(tmp_path)
    spec = f"{src}:problem=question,solution=text,id=uid,kind=type"
    rows = _rows(fixture)
    first, second = tmp_path / "round_a.jsonl", tmp_path / "round_b.jsonl"
    first.write_text(json.dumps(rows[0]) + "\n")
    rows[1]["split"] = "heldout"
    second.write_text(json.dumps(rows[1]) + "\n")
    main(["--fixture", str(first), "--fixture", str(second), "--source", spec, "--by", "kind", "--json"])
    pooled = json.loads(capsys.readouterr().out)
    assert pooled["heldout"]["rows"] == 2 and pooled["tune"]["rows"] == 0
    assert pooled["proof/heldout"]["rows"] == pooled["computation/heldout"]["rows"] == 1
    # micro-averaged: the pooled figures come from the files' counts added up
    tallies = [evaluate(load_fixture(f, tmp_path, [spec]), _oracle)["all"] for f in (first, second)]
    both = evaluate(load_fixture([first, second], tmp_path, [spec]), _oracle)["all"]
    assert (both.cut_tp, both.cut_pred, both.top_hit, both.top_n) == tuple(
        sum(getattr(t, k) for t in tallies) for k in ("cut_tp", "cut_pred", "top_hit", "top_n"))
    assert both.cut_gold == 3 and both.top_n == 3  # p1: 2 cuts, 1 formula; c1: 1 cut, 2 formulas
    main(["--fixture", str(first), "--fixture", str(second), "--source", spec])
    assert "round_a.jsonl + round_b.jsonl (2 solutions)" in capsys.readouterr().out
    # the same solution in two files (a second labelling pooled with the first) is scored twice
    main(["--fixture", str(first), "--fixture", str(first), "--source", spec, "--json"])
    assert json.loads(capsys.readouterr().out)["all"]["rows"] == 2
    with pytest.raises(SystemExit):
        main(["--fixture", str(first), "--fixture", str(tmp_path / "absent.jsonl"), "--source", spec])
    assert "absent.jsonl: no such file" in capsys.readouterr().err


def _rows(fixture):
    return [json.loads(line) for line in fixture.read_text().splitlines()]


@pytest.mark.parametrize("change, words", [
    ({"formulas": None}, "row 2 (line 2): 'formulas' must be a list of strings, not null"),
    ({"formulas": [1, 2]}, "row 2 (line 2): 'formulas' must be a list of strings; item 0 is a number"),
    ({"formulas": "12 - 5 = 7"}, "row 2 (line 2): 'formulas' must be a list of strings, not a string"),
    ({"formulas": ["12 - 5 = 7", " "]}, "row 2 (line 2): 'formulas' item 1 is a blank string"),
    ({"steps": None}, "row 2 (line 2): 'steps' must be a list of strings, not null"),
    ({"steps": {"First,": 1}}, "row 2 (line 2): 'steps' must be a list of strings, not an object"),
    ({"id": 7}, "row 2 (line 2): 'id' must be a non-empty string, not a number"),
    ({"split": ["tune"]}, "row 2 (line 2): 'split' must be tune or heldout, not a list"),
    ({"solution_sha256": None}, "row 2 (line 2): 'solution_sha256' must be a string of 16 lowercase hex digits"),
    ({"kind": None}, "row 2 (line 2): 'kind' must be a string, not null"),
    ({"id": "mini/p1"}, "row 2 (line 2): id 'mini/p1' repeats row 1"),
    ({"steps": ["First,", "Not in the text"]}, "row 2 (line 2, id mini/c1): 'steps': gold step start 'Not in the text' "
                                               "not found"),
])
def test_a_malformed_fixture_row_is_one_line_naming_the_file_row_and_field(tmp_path, capsys, change, words):
    src, fixture = _write(tmp_path)
    rows = _rows(fixture)
    rows[1] = {**rows[1], **change}
    fixture.write_text("".join(json.dumps(r) + "\n" for r in rows))
    before = fixture.read_bytes()
    spec = f"{src}:problem=question,solution=text,id=uid,kind=type"
    with pytest.raises(SystemExit) as exc:
        main(["--fixture", str(fixture), "--source", spec])
    assert exc.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "Traceback" not in captured.err
    error = captured.err.strip().splitlines()[-1]
    assert error.startswith(f"python -m mrtasks.curate.annotator_bench: error: {fixture}: ") and words in error
    assert fixture.read_bytes() == before and sorted(p.name for p in tmp_path.iterdir()) == ["gold.jsonl", "mini.jsonl"]


def test_by_a_field_some_row_lacks_is_a_clear_error(tmp_path, capsys):
    src, fixture = _write(tmp_path)
    rows = _rows(fixture)
    del rows[0]["source"]
    fixture.write_text("".join(json.dumps(r) + "\n" for r in rows))
    spec = f"{src}:problem=question,solution=text,id=uid,kind=type"
    main(["--fixture", str(fixture), "--source", spec, "--json"])  # only --by source needs it
    assert json.loads(capsys.readouterr().out)["all"]["rows"] == 2
    with pytest.raises(SystemExit) as exc:
        main(["--fixture", str(fixture), "--source", spec, "--by", "source"])
    assert exc.value.code == 2
    assert f"{fixture}: row 1 (line 1): has no 'source' (--by source groups the rows by it)" in capsys.readouterr().err


def test_the_bundled_fixtures_are_well_formed():
    from mrtasks.curate.annotator_bench import fixture_row_problem

    for path in sorted((Path(__file__).parent / "data").glob("annotator_*.jsonl")):
        rows = _rows(path)
        assert [fixture_row_problem(r, "kind") or fixture_row_problem(r, "source") for r in rows] == [None] * len(rows)
        assert len({r["id"] for r in rows}) == len(rows), path


# --- --annotator llm, against a local OpenAI-compatible server ------------------------------------------------


def _gold_responder(invalid: str | None = None):
    """A model that answers each solution's prompts with that row's gold labels (the JSON the llm annotator
    parses), and with prose, no JSON object, for the row `invalid` (every attempt)."""
    key_of = {text: key for key, text in TEXTS.items()}

    def reply(body):
        key = key_of[request_solution(body)]
        if key == invalid:
            return "The key formulas are the ones about n."
        formulas, starts = GOLD[key]
        if request_kind(body) == "formulas":
            return json.dumps({"theorems": formulas})
        return json.dumps({"steps": _gold_steps(TEXTS[key], starts)})

    return reply


@pytest.fixture
def llm_bench(tmp_path, capsys):
    """Runs `--annotator llm` against a server with the given responder; returns (stdout, server)."""
    pytest.importorskip("openai")
    src, fixture = _write(tmp_path)
    spec = f"{src}:problem=question,solution=text,id=uid,kind=type"

    def run(server, *extra):
        main(["--fixture", str(fixture), "--source", spec, "--annotator", "llm", "--model", "fake-r1",
              "--base-url", server.base_url, "--max-retries", "0", *extra])
        captured = capsys.readouterr()
        assert "Traceback" not in captured.err
        return captured.out

    return run


def test_llm_annotator_answering_the_gold_labels_scores_1(llm_bench):
    with FakeOpenAIServer(_gold_responder()) as server:
        out = json.loads(llm_bench(server, "--no-cache", "--json", "--by", "kind"))
        assert len(server.completed("formulas")) == len(server.completed("steps")) == 2  # one batch, no retry
    for group in ("all", "tune", "heldout", "proof/all", "computation/all"):
        assert out[group]["top7_precision"] == 1.0 and out[group]["step_f1"] == 1.0, group
        assert out[group]["gold_top7_recall"] == 1.0 and out[group]["step_recall"] == 1.0, group
    assert out["all"]["rows"] == 2
    assert out["dropped"] == {"rows": 0, "reasons": {}, "ids": {}}
    assert out["llm_calls"]["requests"] == 4 and out["llm_calls"]["cache_hits"] == 0


def test_llm_annotator_a_row_with_invalid_json_is_dropped_and_scored_empty(llm_bench):
    with FakeOpenAIServer(_gold_responder(invalid="p1")) as server:
        out = json.loads(llm_bench(server, "--no-cache", "--json"))
        text = llm_bench(server, "--no-cache")
    assert out["dropped"]["rows"] == 1 and out["dropped"]["reasons"] == {"llm_invalid_json": 1}
    assert list(out["dropped"]["ids"]) == ["mini/p1"]
    assert out["dropped"]["ids"]["mini/p1"].startswith("llm_invalid_json: ") and "no JSON object" in out["dropped"]["ids"]["mini/p1"]
    # mini/c1 (tune) scored as labelled; mini/p1 (heldout) as no formulas and no steps
    assert out["tune"]["top7_precision"] == 1.0 and out["tune"]["step_f1"] == 1.0
    assert out["heldout"] == {"rows": 1, "top7_precision": 0.0, "masked_set_precision": 0.0, "eligible_rows": 0,
                              "gold_top7_recall": 0.0, "step_precision": 0.0, "step_recall": 0.0, "step_f1": 0.0}
    assert out["all"]["rows"] == 2 and out["all"]["top7_precision"] == 1.0  # 2 of 2 formulas named are gold
    assert out["all"]["gold_top7_recall"] == round(2 / 3, 4) and out["all"]["step_recall"] == round(1 / 3, 4)
    assert out["all"]["step_f1"] == 0.5
    header = text.splitlines()[0]
    assert header == "llm annotator fake-r1 vs gold.jsonl (2 solutions; 1 dropped, scored as empty: llm_invalid_json 1)"
    assert "  dropped: mini/p1: llm_invalid_json: formulas: no JSON object" in text


def test_llm_annotator_a_rerun_over_the_cache_makes_no_request(llm_bench, tmp_path):
    cache = tmp_path / "llm.sqlite"
    with FakeOpenAIServer(_gold_responder(invalid="p1")) as server:
        first = json.loads(llm_bench(server, "--cache", str(cache), "--json"))
        paid = len(server.log)
        second = json.loads(llm_bench(server, "--cache", str(cache), "--json"))
        text = llm_bench(server, "--cache", str(cache))
        assert len(server.log) == paid  # nothing sent by the two reruns
    assert paid == 2 + 2 * 3  # c1: formulas + steps; p1: both asked 3 times (max_attempts) before the drop
    assert first["llm_calls"]["requests"] == paid and second["llm_calls"]["requests"] == 0
    assert second["llm_calls"]["cache_hits"] == paid
    assert {k: v for k, v in second.items() if k != "llm_calls"} == {k: v for k, v in first.items() if k != "llm_calls"}
    assert second["dropped"]["rows"] == 1 and second["all"]["step_f1"] == 0.5
    assert "1 dropped, scored as empty: llm_invalid_json 1" in text.splitlines()[0]
    assert "llm calls: requests 0, cache hits 8, transport retries 0" in text


def test_llm_annotator_with_no_server_listening_is_one_line_and_exit_5(tmp_path):
    pytest.importorskip("openai")
    src, fixture = _write(tmp_path)
    with FakeOpenAIServer() as s:
        url = s.base_url  # nobody listens there once it stops
    proc = subprocess.run(
        [sys.executable, "-m", "mrtasks.curate.annotator_bench", "--fixture", str(fixture),
         "--source", f"{src}:problem=question,solution=text,id=uid,kind=type", "--annotator", "llm", "--model", "m",
         "--base-url", url, "--max-retries", "0", "--no-cache"],
        cwd=REPO_ROOT, capture_output=True, text=True, timeout=120,
    )
    assert proc.returncode == EXIT_ANNOTATOR == 5
    assert proc.stdout == "" and "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith(f"error: {url} answered no request (all 2 solutions failed: APIConnectionError")


@pytest.mark.parametrize("extra, words", [
    ([], "--annotator llm needs --model"),
    (["--model", "m", "--second-labelling", "second.jsonl"], "--second-labelling scores a labelling in place of "
                                                              "the annotator; it does not go with --annotator llm"),
    (["--model", "m", "--concurrency", "0"], "bad llm option: concurrency and max_attempts must be >= 1"),
])
def test_llm_annotator_usage_errors_exit_2(tmp_path, capsys, extra, words):
    src, fixture = _write(tmp_path)
    with pytest.raises(SystemExit) as exc:
        main(["--fixture", str(fixture), "--source", f"{src}:problem=question,solution=text,id=uid,kind=type",
              "--annotator", "llm", "--base-url", "http://127.0.0.1:9/v1", *extra])
    assert exc.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == "" and "Traceback" not in captured.err
    assert captured.err.strip().splitlines()[-1].startswith(f"python -m mrtasks.curate.annotator_bench: error: {words}")
