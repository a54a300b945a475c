"""The `llm` annotator through a batch API: export its requests, answer them offline, import the answers,
then annotate from the cache with no endpoint at all (nothing listens at DEAD: a request that the cache
does not answer fails, and the trajectory is dropped as `llm_api_error`)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from mrtasks.curate.base import Drop
from mrtasks.curate.batch import import_answers, main, pending_requests
from mrtasks.curate.cache import ResponseCache
from mrtasks.curate.llm import RETRY_NOTE, LLMAnnotator, LLMConfig
from mrtasks.curate.testing import completion_body, oracle_formulas, oracle_reply, request_kind
from mrtasks.prompts import FORMULA_EXTRACTION_PROMPT, STEP_SPLIT_PROMPT, curation_messages
from mrtasks.trajectory import Trajectory

pytest.importorskip("openai")

DEAD = "http://127.0.0.1:9/v1"

SOLUTIONS = [
    "Let $f(x) = x^2 - 5x + 6$. Its roots satisfy $x^2 - 5x + 6 = 0$.\n\n"
    "Factoring gives $(x-2)(x-3) = 0$, so $x = 2$ or $x = 3$.\n\n"
    "By Vieta's formulas the sum of the roots is $x_1 + x_2 = 5$ and the product is $x_1 x_2 = 6$.\n\n"
    "Therefore the answer is $\\boxed{5}$.",
    "We have $a + b = 7$ and $a - b = 1$.\n\nAdding them gives $2a = 8$, so $a = 4$.\n\n"
    "Then $b = 7 - a = 3$, and $ab = 12$.\n\nSo the answer is $\\boxed{12}$.",
]


def trajectories() -> list[Trajectory]:
    return [Trajectory(id=f"t{i}", source="test", kind="computation", problem=f"Problem {i}", solution=s, answer=None)
            for i, s in enumerate(SOLUTIONS)]


def config(cache: Path) -> LLMConfig:
    return LLMConfig(model="batch-model", base_url=DEAD, cache_path=cache, progress=False, max_retries=0, timeout=5,
                     drop_bookkeeping=False)


def output_line(request: dict, content: str | None, status: int = 200) -> dict:
    """One line of a batch output file, as the OpenAI Batch API writes it."""
    body = completion_body(content, request["body"]["model"], 0)
    return {"id": "batch_req_1", "custom_id": request["custom_id"],
            "response": {"status_code": status, "request_id": "req_1", "body": body}, "error": None}


def write_lines(path: Path, lines: list) -> Path:
    path.write_text("".join((x if isinstance(x, str) else json.dumps(x)) + "\n" for x in lines))
    return path


def test_answers_imported_from_a_batch_annotate_without_a_request(tmp_path):
    cache = tmp_path / "llm.sqlite"
    requests, answered = pending_requests(trajectories(), config(cache))

    assert answered == 0
    assert sorted(r["custom_id"].split("-")[0] for r in requests) == ["formulas", "formulas", "steps", "steps"]
    assert {r["url"] for r in requests} == {"/v1/chat/completions"}
    assert [r["body"]["messages"] for r in requests if r["custom_id"].startswith("formulas")] == [
        curation_messages(FORMULA_EXTRACTION_PROMPT, s) for s in SOLUTIONS]
    assert [r["body"]["messages"] for r in requests if r["custom_id"].startswith("steps")] == [
        curation_messages(STEP_SPLIT_PROMPT, s) for s in SOLUTIONS]
    assert all(r["body"]["model"] == "batch-model" and r["body"]["max_tokens"] == 32_768 for r in requests)

    req_file = write_lines(tmp_path / "requests.jsonl", requests)
    out_file = write_lines(tmp_path / "output.jsonl", [output_line(r, oracle_reply(r["body"])) for r in requests])
    with ResponseCache(cache) as c:
        assert import_answers(req_file, out_file, c) == (4, {})

    with LLMAnnotator(config(cache)) as annotator:
        out = annotator.annotate(trajectories())
        assert annotator.stats["requests"] == 0 and annotator.stats["cache_hits"] == 4
    for t, o in zip(trajectories(), out):
        assert isinstance(o, Trajectory), o
        assert [f.text for f in o.formulas] == [f for f in oracle_formulas(t.solution) if "boxed" not in f]
        assert len(o.steps) == 4
    assert pending_requests(trajectories(), config(cache)) == ([], 2)


def test_a_rejected_answer_is_exported_again_as_its_retry(tmp_path):
    cache = tmp_path / "llm.sqlite"
    requests, _ = pending_requests(trajectories(), config(cache))
    broken = next(r for r in requests
                  if request_kind(r["body"]) == "formulas" and SOLUTIONS[0] in r["body"]["messages"][-1]["content"])
    answers = [output_line(r, "not JSON at all" if r is broken else oracle_reply(r["body"])) for r in requests]
    with ResponseCache(cache) as c:
        import_answers(write_lines(tmp_path / "r.jsonl", requests), write_lines(tmp_path / "o.jsonl", answers), c)

    retries, answered = pending_requests(trajectories(), config(cache))

    assert answered == 1
    [retry] = retries
    assert retry["custom_id"].startswith("formulas-") and retry["custom_id"] != broken["custom_id"]
    user = retry["body"]["messages"][-1]["content"]
    assert user.startswith(broken["body"]["messages"][-1]["content"])
    assert RETRY_NOTE.split("{")[0] in user


def test_import_counts_every_line_it_cannot_use(tmp_path):
    requests, _ = pending_requests(trajectories(), config(tmp_path / "x.sqlite"))
    a, b, c, d = requests
    error = {"custom_id": b["custom_id"], "response": None, "error": {"code": "server_error", "message": "boom"}}
    lines = ["{not json", "[1, 2]", {"custom_id": ["not", "a", "string"]}, {"custom_id": "formulas-" + "0" * 64},
             error, output_line(c, "late", status=500), output_line(d, None), output_line(a, "{}")]
    out = write_lines(tmp_path / "o.jsonl", lines)
    out.write_bytes(out.read_bytes() + b'{"custom_id": "\xff"}\n')  # not UTF-8: skipped, never decoded with a guess
    with ResponseCache(tmp_path / "llm.sqlite") as cache:
        stored, skipped = import_answers(write_lines(tmp_path / "r.jsonl", requests), out, cache)
        assert len(cache) == 1
    assert stored == 1
    assert skipped == {"bad_line": 4, "unknown_custom_id": 1, "error": 2, "no_content": 1}

    with pytest.raises(ValueError, match="r2.jsonl:2: not a batch request line"):
        import_answers(write_lines(tmp_path / "r2.jsonl", [requests[0], {"custom_id": 7, "body": {}}]), out,
                       ResponseCache(None))


def test_the_command_line_round_trip(tmp_path, capsys):
    source = write_lines(tmp_path / "corpus.jsonl", [
        {"id": f"s{i}", "problem": f"Problem {i}", "solution": s, "answer": "5"} for i, s in enumerate(SOLUTIONS)])
    spec = f"{source}:kind=computation,name=mine"
    common = ["--model", "batch-model", "--base-url", DEAD, "--cache", str(tmp_path / "llm.sqlite")]
    req = tmp_path / "requests.jsonl"

    assert main(["export", "--source", spec, *common, "--out", str(req)]) == 0
    assert "4 requests (formulas 2, steps 2) for 2 solutions, 0 of them answered" in capsys.readouterr().out
    requests = [json.loads(line) for line in req.read_text().splitlines()]
    out = write_lines(tmp_path / "output.jsonl", [output_line(r, oracle_reply(r["body"])) for r in requests])

    assert main(["import", str(req), str(out), "--cache", str(tmp_path / "llm.sqlite")]) == 0
    assert "imported 4 answers" in capsys.readouterr().out
    assert main(["export", "--source", spec, *common, "--out", str(req)]) == 0
    assert "0 requests (none) for 2 solutions, 2 of them answered" in capsys.readouterr().out
    assert req.read_text() == ""

    stranger = write_lines(tmp_path / "stranger.jsonl", [{"custom_id": "steps-" + "1" * 64, "response": {}}])
    assert main(["import", str(req), str(stranger), "--cache", str(tmp_path / "llm.sqlite")]) == 2
    assert main(["import", str(req), str(stranger), "--cache", str(tmp_path / "new.sqlite")]) == 2
    assert not (tmp_path / "new.sqlite").exists()  # a failed import leaves nothing behind
    with pytest.raises(SystemExit) as e:
        main(["export", *common, "--out", str(tmp_path / "none.jsonl")])
    assert e.value.code == 2
    assert "export needs --source or --fixture" in capsys.readouterr().err
    assert main(["export", "--source", spec, *common, "--out", str(tmp_path)]) == 4  # a folder is no output file
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n")
    assert main(["export", "--source", spec, *common, "--out", str(notes)]) == 4  # not a file export wrote
    assert notes.read_text() == "my notes\n"
    assert "was not written by mrtasks.curate.batch export" in capsys.readouterr().err


def test_an_empty_solution_needs_no_request(tmp_path):
    empty = Trajectory(id="e", source="test", kind="computation", problem="P", solution="   ", answer=None)
    requests, answered = pending_requests([empty], config(tmp_path / "llm.sqlite"))
    assert requests == [] and answered == 1  # dropped before any request: nothing waits on the batch
    assert isinstance(LLMAnnotator(config(tmp_path / "llm.sqlite")).annotate([empty])[0], Drop)


def test_with_refine_the_rewrites_are_exported_first_then_their_annotation(tmp_path):
    cache = tmp_path / "llm.sqlite"
    cfg = replace(config(cache), refine=True)
    wordy = [replace(t, solution="Wait, let me think.\n" + t.solution) for t in trajectories()]

    def answer_all(requests: list, n: int) -> None:
        lines = [output_line(r, oracle_reply(r["body"])) for r in requests]
        with ResponseCache(cache) as c:
            import_answers(write_lines(tmp_path / f"r{n}.jsonl", requests), write_lines(tmp_path / f"o{n}.jsonl", lines), c)

    rewrites, answered = pending_requests(wordy, cfg)
    assert answered == 0 and [r["custom_id"].split("-")[0] for r in rewrites] == ["refine", "refine"]
    answer_all(rewrites, 1)

    annotations, answered = pending_requests(wordy, cfg)
    assert answered == 0 and sorted(r["custom_id"].split("-")[0] for r in annotations) == ["formulas"] * 2 + ["steps"] * 2
    assert all("Wait" not in r["body"]["messages"][-1]["content"] for r in annotations)  # the rewritten texts
    answer_all(annotations, 2)

    assert pending_requests(wordy, cfg) == ([], 2)
    with LLMAnnotator(cfg) as annotator:
        out = annotator.annotate(annotator.refine(wordy))
        assert annotator.stats["requests"] == 0
    assert [o.solution for o in out] == [t.solution for t in trajectories()]
