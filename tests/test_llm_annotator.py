"""The `llm` annotator against a real local OpenAI-compatible HTTP server, scripted per test.

The server (`mrtasks.curate.testing.FakeOpenAIServer`) speaks the OpenAI chat API over HTTP; the
annotator talks to it through the real `openai` client. Its default responder answers the
curation prompts correctly from the solution itself; tests swap in broken behaviour.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import threading
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mrtasks.curate.base import Drop
from mrtasks.curate.llm import LLMAnnotator, LLMConfig, LLMError
from mrtasks.curate.llm_bench import bench
from mrtasks.curate.testing import (
    FakeOpenAIServer,
    Reply,
    oracle_formulas,
    oracle_reply,
    request_kind,
    request_solution,
)
from mrtasks.curate.validate import (
    Rejected,
    check_steps,
    compact,
    extract_json,
    locate_formulas,
    strip_math_delimiters,
)
from mrtasks.tasks.masked_then_fill import make_masked_then_fill
from mrtasks.trajectory import Trajectory
from tests.conftest import REPO_ROOT

pytest.importorskip("openai")

SOLUTION = (
    "Let $f(x) = x^2 - 5x + 6$. Its roots satisfy $x^2 - 5x + 6 = 0$.\n\n"
    "Factoring gives $(x-2)(x-3) = 0$, so $x = 2$ or $x = 3$.\n\n"
    "By Vieta's formulas the sum of the roots is $x_1 + x_2 = 5$ and the product is $x_1 x_2 = 6$.\n\n"
    "Therefore the answer is $\\boxed{5}$."
)


def traj(i: int = 0, solution: str = SOLUTION, kind: str = "computation", answer: str | None = "5") -> Trajectory:
    return Trajectory(id=f"t{i}", source="test", kind=kind, problem=f"Problem {i}", solution=solution, answer=answer)


@pytest.fixture
def server():
    with FakeOpenAIServer() as s:
        yield s


def annotator(server: FakeOpenAIServer, **overrides) -> LLMAnnotator:
    # The model's list kept as it is (`Let $f(x) = ...$` is bookkeeping); the bookkeeping test turns it on.
    config = dict(base_url=server.base_url, model="fake-r1", concurrency=4, progress=False, drop_bookkeeping=False)
    config.update(overrides)
    return LLMAnnotator(LLMConfig(**config))


def formulas_reply(items: list[str]) -> str:
    return json.dumps({"theorems": items})


def by_kind(formulas, steps=oracle_reply):
    """A responder answering the formula prompt with `formulas` and the step prompt with `steps`."""

    def respond(body):
        handler = formulas if request_kind(body) == "formulas" else steps
        return handler(body) if callable(handler) else handler

    return respond


# --- valid answers -----------------------------------------------------------------------------


def test_annotates_real_math500_solutions(server, shared_data):
    lines = (shared_data / "benchmarks" / "math500.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]

    def written_once(solution: str) -> list[str]:
        return [f for f in oracle_formulas(solution) if compact(solution).count(compact(f)) == 1]

    rows = [r for r in rows if len(written_once(r["solution"])) >= 7][:6]
    inputs = [traj(i, r["solution"], answer=r["answer"]) for i, r in enumerate(rows)]

    out = annotator(server).annotate(inputs)

    assert [o.id for o in out] == [t.id for t in inputs]
    for t, o in zip(inputs, out):
        assert isinstance(o, Trajectory), o
        assert len(o.formulas) >= 7
        assert all(t.solution[f.start : f.end] == f.text for f in o.formulas)
        spans = sorted((f.start, f.end) for f in o.formulas)
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:])), "formula spans overlap"
        assert compact("".join(o.steps)) == compact(t.solution)
    assert len(server.completed()) == 2 * len(inputs)


def test_json_in_fences_after_think_is_accepted(server):
    fenced = (
        "<think>The key formulas are the factorization and Vieta. {not json}</think>\n"
        "Here is the answer:\n```json\n"
        + formulas_reply(["$x_1 + x_2 = 5$", "(x-2)(x-3) = 0", "x^2 - 5x + 6 = 0"])
        + "\n```"
    )
    server.responder = by_kind(fenced)

    [out] = annotator(server).annotate([traj()])

    assert [f.text for f in out.formulas] == ["x_1 + x_2 = 5", "(x-2)(x-3) = 0", "x^2 - 5x + 6 = 0"]
    assert SOLUTION[out.formulas[0].start - 1] == "$", "span is the content inside the delimiters"


def test_latex_with_single_backslashes_is_repaired(server):
    # Models often write LaTeX in JSON strings without doubling the backslash (`\b` reads as a backspace).
    solution = SOLUTION.replace("$x_1 x_2 = 6$", "$x_1 x_2 = \\binom{4}{2}$")
    server.responder = by_kind('{"theorems": ["x_1 x_2 = \\binom{4}{2}", "x_1 + x_2 = 5"]}')

    [out] = annotator(server, min_formulas=1).annotate([traj(solution=solution)])

    assert [f.text for f in out.formulas] == ["x_1 x_2 = \\binom{4}{2}", "x_1 + x_2 = 5"]


def test_the_final_answer_alone_is_no_key_formula(server):
    # A model often lists the boxed answer first; a lone value is no key formula (Appendix A labellers leave it
    # out), and Masked-Then-Fill masks the answer's box without it.
    items = ["\\boxed{5}", *[f for f in oracle_formulas(SOLUTION) if f != "\\boxed{5}"]]
    server.responder = by_kind(formulas_reply(items))
    ann = annotator(server)

    [out] = ann.annotate([traj()])

    assert [f.text for f in out.formulas] == items[1:]
    assert ann.stats["formulas_lone_answer"] == 1
    row = make_masked_then_fill(out)
    assert "\\boxed{<formula_masked>}" in row["masked_solution"]
    assert "5" in row["masks"]


BOOKKEEPING_SOLUTION = (
    "Let $s = a + b$ and $p = ab$. Case 1: $a = 0$. Then $s^2 = a^2 + 2ab + b^2$, so $s^2 - 2p = a^2 + b^2$. "
    "Hence $a^2 + b^2 = 7$."
)


@pytest.mark.parametrize("drop", [True, False])
def test_bookkeeping_the_model_lists_is_left_out_unless_asked(server, drop):
    # A definition that only names something and a case label are bookkeeping where they stand (issue 20); the
    # paper's prompt does not tell a model so, and `drop_bookkeeping=False` keeps its list as it is.
    listed = ["s = a + b", "s^2 - 2p = a^2 + b^2", "a = 0", "p = ab", "s^2 = a^2 + 2ab + b^2"]
    server.responder = by_kind(formulas_reply(listed))
    ann = annotator(server, min_formulas=1, drop_bookkeeping=drop)

    [out] = ann.annotate([traj(solution=BOOKKEEPING_SOLUTION, answer="7")])

    kept = ["s^2 - 2p = a^2 + b^2", "s^2 = a^2 + 2ab + b^2"] if drop else listed
    assert [f.text for f in out.formulas] == kept
    assert ann.stats["formulas_bookkeeping"] == (3 if drop else 0)


_SYSTEM = "\\begin{align*}\nx + y &= 3 \\\\\nx - y &= 1\n\\end{align*}"


@pytest.mark.parametrize(
    "solution, listed, kept",
    [
        # an index range, a whole system written as one display and a lone figure name are no key formula whatever
        # their sentence says; an align row `A &= B` is one, as the model lists it
        (
            f"For $k = 1, \\ldots, n$ we have\n{_SYSTEM}\nAdding them,\n\\begin{{align*}}\n2x &= 4\n\\end{{align*}}\n"
            "so in triangle $\\triangle ABC$ we get $x = 2$ and $2x^2 + y = 9$.",
            ["2x^2 + y = 9", "k = 1, \\ldots, n", _SYSTEM, "\\triangle ABC", "2x &= 4"],
            ["2x^2 + y = 9", "2x &= 4"],
        ),
        # a sentence of words is neither a formula nor a result's name; a result's name stays
        (
            "The closure of a connected set is connected, so by Taylor's theorem with remainder "
            "$f(x) = f(0) + x f'(c)$ and $|f(x)| \\le 2|x|$.",
            ["|f(x)| \\le 2|x|", "The closure of a connected set is connected", "Taylor's theorem with remainder"],
            ["|f(x)| \\le 2|x|", "Taylor's theorem with remainder"],
        ),
        # so is a clause, however short (a subject pronoun or a finite verb); a technique's name stays
        (
            "We proceed by contradiction. Then the graph is bipartite, and a proof by contrapositive gives $d(v) = 4$.",
            ["d(v) = 4", "the graph is bipartite", "We proceed by contradiction", "proof by contrapositive"],
            ["d(v) = 4", "proof by contrapositive"],
        ),
        # a symbol (its index an expression too) or a list of symbols names something; a result's name in words stays
        (
            "Remove them to get the town $\\mathcal{F}_{n-1}$ with $\\delta_{1}, \\delta_{2}, \\ldots$ as before; "
            "by the quadratic formula $f_{n-1}(r) \\neq f_{n-1}(s)$.",
            ["f_{n-1}(r) \\neq f_{n-1}(s)", "\\mathcal{F}_{n-1}", "\\delta_{1}, \\delta_{2}, \\ldots", "quadratic formula"],
            ["f_{n-1}(r) \\neq f_{n-1}(s)", "quadratic formula"],
        ),
    ],
)
def test_what_is_no_key_formula_by_its_shape_is_left_out_wherever_it_stands(server, solution, listed, kept):
    server.responder = by_kind(formulas_reply(listed))
    ann = annotator(server, min_formulas=1, drop_bookkeeping=True)

    [out] = ann.annotate([traj(solution=solution, answer="9")])

    assert [f.text for f in out.formulas] == kept
    assert ann.stats["formulas_bookkeeping"] == len(listed) - len(kept)


_GROUP = (
    "Suppose $a^2 \\neq e$. Then $a^2=e$ or $a^2=b$ cannot both fail, and the area is equal to $\\frac{1}{2} a b$.\n"
    "Hence $p(z)=(z-$ $\\lambda) q(z)$ and the common ratio is $\\frac{54}{36}=\\frac{3}{2}$, so $76-40=36$.\n"
    "So $\\mathcal{B}$ is a basis for a topology on $\\mathbb{R}$."
)


@pytest.mark.parametrize(
    "listed, kept, changed",
    [
        # a formula labelled in prose (not verbatim) is read as the formulas it sets in math
        (["Common ratio: $\\frac{54}{36}=\\frac{3}{2}$", "Terms from sums: $76-40=36$"],
         ["\\frac{54}{36}=\\frac{3}{2}", "76-40=36"], 2),
        # a verbatim span across the text's delimiters keeps its pieces inside the math, never the prose between,
        # nor a lone symbol
        (["a^2=e$ or $a^2=b", "the area is equal to $\\frac{1}{2} a b$", "\\mathcal{B}$ is a basis for a topology on $\\mathbb{R}"],
         ["a^2=e", "a^2=b", "\\frac{1}{2} a b"], 3),
        # a formula the source broke across `$ $`, a plain formula and a result's name stay whole
        (["p(z)=(z-$ $\\lambda) q(z)", "76-40=36", "common ratio"],
         ["p(z)=(z-$ $\\lambda) q(z)", "76-40=36", "common ratio"], 0),
    ],
)
def test_formulas_listed_in_prose_are_read_as_their_math(server, listed, kept, changed):
    server.responder = by_kind(formulas_reply(listed))
    ann = annotator(server, min_formulas=1)

    [out] = ann.annotate([traj(solution=_GROUP, answer=None)])

    assert [f.text for f in out.formulas] == kept
    assert all(_GROUP[f.start : f.end] == f.text for f in out.formulas)
    assert ann.stats["formulas_from_prose"] + ann.stats["formulas_cut_to_math"] == changed


def test_a_given_copied_from_the_problem_is_left_out(server):
    # A masked given is filled by copying it from the problem the prompt shows, not by reasoning.
    solution = "We know $a + b = 3$ and $ab = 1$. So $a^2 + b^2 = (a+b)^2 - 2ab = 9 - 2 = 7$."
    server.responder = by_kind(formulas_reply(["a^2 + b^2 = (a+b)^2 - 2ab = 9 - 2 = 7", "a + b = 3", "ab = 1"]))
    ann = annotator(server, min_formulas=1, drop_bookkeeping=True)

    [out] = ann.annotate([replace(traj(solution=solution, answer="7"), problem="If $a+b=3$ and $ab=1$, find $a^2+b^2$.")])

    assert [f.text for f in out.formulas] == ["a^2 + b^2 = (a+b)^2 - 2ab = 9 - 2 = 7"]
    assert ann.stats["formulas_bookkeeping"] == 2


# --- invalid answers: retried with a note, then dropped with a counted reason --------------------


def test_invalid_json_is_retried_then_dropped(server):
    server.responder = by_kind("Sure! The key formulas are x^2 and 5.")
    ann = annotator(server, max_attempts=3)

    [out] = ann.annotate([traj()])

    assert isinstance(out, Drop) and out.reason == "llm_invalid_json"
    formula_calls = server.completed("formulas")
    assert len(formula_calls) == 3
    notes = [c.body["messages"][-1]["content"].count("your previous answer was rejected") for c in formula_calls]
    assert notes == [0, 1, 1]
    assert ann.stats["drop:llm_invalid_json"] == 1


def test_a_bad_first_answer_is_recovered_on_retry(server):
    def respond(body):
        rejected_before = "previous answer was rejected" in body["messages"][-1]["content"]
        return oracle_reply(body) if rejected_before else "{'theorems': oops"

    server.responder = respond
    [out] = annotator(server).annotate([traj()])

    assert isinstance(out, Trajectory) and len(out.formulas) == 7  # the oracle's 8 but the lone `\\boxed{5}`
    assert len(server.completed()) == 4  # two prompts, two attempts each


@pytest.mark.parametrize(
    "answer",
    ['{"formulas": ["x = 2"]}', '{"theorems": "x = 2"}', '{"theorems": [1, 2]}', '["x = 2"]'],
    ids=["wrong_key", "not_a_list", "not_strings", "not_an_object"],
)
def test_schema_violations_are_dropped(server, answer):
    server.responder = by_kind(answer)
    [out] = annotator(server, max_attempts=2).annotate([traj()])
    assert isinstance(out, Drop)
    assert out.reason == ("llm_invalid_json" if answer.startswith("[") else "llm_schema")


def test_hallucinated_formulas_are_removed_when_enough_remain(server):
    real = oracle_formulas(SOLUTION)
    assert len(real) == 8
    server.responder = by_kind(formulas_reply(real[:4] + ["e^{i\\pi} = -1", "a^2 + b^2 = c^2"] + real[4:]))
    ann = annotator(server, min_formulas=7)

    [out] = ann.annotate([traj()])

    assert [f.text for f in out.formulas] == [f for f in real if f != "\\boxed{5}"]
    assert ann.stats["formulas_removed"] == 2 and ann.stats["formulas_lone_answer"] == 1
    assert len(server.completed("formulas")) == 1


def test_mostly_hallucinated_formulas_are_retried_then_dropped(server):
    server.responder = by_kind(formulas_reply(["x = 2", "\\int_0^1 x\\,dx", "e^{i\\pi} = -1"]))
    [out] = annotator(server, min_formulas=7, max_attempts=2).annotate([traj()])
    assert isinstance(out, Drop) and out.reason == "llm_hallucinated_formulas"
    assert "do not occur verbatim" in out.detail


def test_steps_must_cover_the_solution(server):
    paragraphs = SOLUTION.split("\n\n")
    server.responder = by_kind(oracle_reply, json.dumps({"steps": paragraphs[:2]}))
    [out] = annotator(server, max_attempts=2).annotate([traj()])
    assert isinstance(out, Drop) and out.reason == "llm_steps_do_not_cover"


def test_step_labels_are_stripped_and_light_edits_tolerated(server):
    paragraphs = SOLUTION.split("\n\n")
    steps = [f"Step {i + 1}: {p}" for i, p in enumerate(paragraphs)]
    steps[2] = steps[2].replace("By Vieta's formulas", "By Vieta formulas")  # a light edit
    server.responder = by_kind(oracle_reply, json.dumps({"steps": steps}))

    [out] = annotator(server).annotate([traj()])

    assert out.steps[0] == paragraphs[0]
    assert not any(s.startswith("Step") for s in out.steps)


# --- transport: 429, 5xx, malformed bodies, bad keys ---------------------------------------------


def test_429_then_success_honours_retry_after(server):
    seen: Counter[str] = Counter()
    lock = threading.Lock()

    def respond(body):
        with lock:
            seen[request_kind(body)] += 1
            first = seen[request_kind(body)] == 1
        return Reply(status=429, headers={"Retry-After": "0.2"}) if first else oracle_reply(body)

    server.responder = respond
    ann = annotator(server)
    start = time.monotonic()
    [out] = ann.annotate([traj()])

    assert isinstance(out, Trajectory)
    assert [r.status for r in server.completed("formulas")] == [429, 200]
    assert ann.stats["transport_retries"] == 2
    assert time.monotonic() - start >= 0.2


def test_persistent_5xx_becomes_api_error_drop(server):
    server.responder = lambda body: Reply(status=503)
    [out] = annotator(server, max_retries=2).annotate([traj()])
    assert isinstance(out, Drop) and out.reason == "llm_api_error" and "503" in out.detail
    assert len(server.completed("formulas")) == 3


@pytest.mark.parametrize(
    "reply",
    [
        Reply(body="<html>Bad Gateway</html>", headers={"Content-Type": "text/html"}),
        Reply(body='{"object": "chat.completion"}'),
        Reply(body='{"choices": []}'),
        Reply(content=None),
    ],
    ids=["html", "no_choices", "empty_choices", "null_content"],
)
def test_malformed_responses_are_counted_drops(server, reply):
    server.responder = lambda body: reply
    ann = annotator(server, max_attempts=2)
    [out] = ann.annotate([traj()])
    assert isinstance(out, Drop) and out.reason == "llm_malformed_response"
    assert len(ann.cache) == 0, "malformed answers are not cached"


def test_rejected_key_stops_the_run_with_a_clear_error(server):
    server.responder = lambda body: Reply(status=401)
    with pytest.raises(LLMError, match="API key"):
        annotator(server).annotate([traj()])


def test_unreachable_endpoint_is_an_api_error_drop():
    with FakeOpenAIServer() as s:
        url = s.base_url  # a port nobody listens on once the server stops
    ann = LLMAnnotator(LLMConfig(model="m", base_url=url, max_retries=1, progress=False))
    [out] = ann.annotate([traj()])
    assert isinstance(out, Drop) and out.reason == "llm_api_error"


# --- a real endpoint: timeouts, SDK retries, response size (issue 10) -----------------------------


def test_requests_ask_for_max_tokens(server):
    annotator(server, max_tokens=1234).annotate([traj()])
    assert {r.body.get("max_tokens") for r in server.completed()} == {1234}


@pytest.mark.parametrize("chunked", [False, True], ids=["content_length", "chunked"])
def test_oversized_bodies_are_refused_counted_and_not_cached(server, chunked):
    server.responder = by_kind(Reply(content="x" * 6000, chunked=chunked))
    ann = annotator(server, max_response_bytes=4096, max_attempts=2)

    [out] = ann.annotate([traj()])

    assert isinstance(out, Drop) and out.reason == "llm_oversized_response" and "4096" in out.detail
    assert ann.stats["oversized_responses"] == 2 and ann.stats["drop:llm_oversized_response"] == 1
    assert len(server.log) == 2 + 1, "no transport retry of a refused body: 2 formula attempts + 1 steps call"
    assert ann.stats["transport_retries"] == 0
    assert len(ann.cache) == 1, "only the step answer is cached"


def test_a_hung_endpoint_times_out_and_the_sdk_retries_are_counted(server):
    server.responder = lambda body: Reply(hang=True)
    ann = annotator(server, timeout=0.3, max_retries=1)
    start = time.monotonic()

    [out] = ann.annotate([traj()])

    assert isinstance(out, Drop) and out.reason == "llm_api_error" and "APITimeoutError after 2 tries" in out.detail
    assert ann.stats["transport_retries"] == 2 and len(server.log) == 4  # two prompts, two tries each
    assert time.monotonic() - start < 5


def test_the_cache_key_includes_the_endpoint(tmp_path):
    cache = tmp_path / "c.sqlite"
    with FakeOpenAIServer() as a, FakeOpenAIServer() as b:
        LLMAnnotator(LLMConfig(model="m", base_url=a.base_url, cache_path=cache, progress=False)).annotate([traj()])
        LLMAnnotator(LLMConfig(model="m", base_url=a.base_url + "/", cache_path=cache, progress=False)).annotate([traj()])
        assert len(a.log) == 2, "same endpoint (trailing slash aside): served from the cache"
        LLMAnnotator(LLMConfig(model="m", base_url=b.base_url, cache_path=cache, progress=False)).annotate([traj()])
        assert len(b.log) == 2, "another endpoint is asked again"


def test_default_cache_path_is_under_the_user_cache_dir(tmp_path, monkeypatch):
    from mrtasks.curate.cache import default_cache_path

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_path() == tmp_path / "xdg" / "mrtasks" / "llm-cache.sqlite"
    monkeypatch.delenv("XDG_CACHE_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert default_cache_path() == tmp_path / "home" / ".cache" / "mrtasks" / "llm-cache.sqlite"


# --- concurrency and cache ---------------------------------------------------------------------


def test_concurrency_is_bounded(server):
    inflight, peak, lock = [0], [0], threading.Lock()

    def respond(body):
        with lock:
            inflight[0] += 1
            peak[0] = max(peak[0], inflight[0])
        time.sleep(0.05)
        with lock:
            inflight[0] -= 1
        return oracle_reply(body)

    server.responder = respond
    out = annotator(server, concurrency=3).annotate([traj(i, SOLUTION + f" ({i})") for i in range(8)])
    assert all(isinstance(o, Trajectory) for o in out)
    assert peak[0] == 3


def test_rerun_with_the_cache_makes_zero_calls(server, tmp_path):
    inputs = [traj(i, SOLUTION + f" Case {i}.") for i in range(5)]
    first = annotator(server, cache_path=tmp_path / "llm.sqlite").annotate(inputs)
    calls = len(server.log)

    again = annotator(server, cache_path=tmp_path / "llm.sqlite")
    second = again.annotate(inputs)

    assert len(server.log) == calls == 10
    assert again.stats["requests"] == 0 and again.stats["cache_hits"] == 10
    assert [o.to_dict() for o in second] == [o.to_dict() for o in first]


def test_identical_inputs_share_one_call(server):
    out = annotator(server).annotate([traj(0), traj(1)])  # same solution, two ids
    assert [o.id for o in out] == ["t0", "t1"]
    assert len(server.completed()) == 2


def test_annotate_works_inside_a_running_event_loop(server):
    async def caller():
        return annotator(server).annotate([traj()])

    [out] = asyncio.run(caller())
    assert isinstance(out, Trajectory)


_WORKER = """
import json, sys
from mrtasks.curate.llm import LLMAnnotator, LLMConfig
from mrtasks.trajectory import Trajectory
base_url, cache, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
solution = {solution!r}
items = [Trajectory(id=f"t{{i}}", source="s", kind="proof", problem="p", solution=solution + f" Case {{i}}.")
         for i in range(n)]
ann = LLMAnnotator(LLMConfig(model="fake-r1", base_url=base_url, concurrency=2, cache_path=cache, progress=False))
ann.annotate(items)
"""


def test_killed_build_resumes_with_zero_repeated_calls(server, tmp_path):
    n, answered_before_kill = 10, 7
    served = [0]
    lock = threading.Lock()

    def respond_then_stall(body):
        with lock:
            served[0] += 1
            stall = served[0] > answered_before_kill
        return Reply(hang=True) if stall else oracle_reply(body)

    server.responder = respond_then_stall
    cache = tmp_path / "llm.sqlite"
    worker = subprocess.Popen(
        [sys.executable, "-c", _WORKER.format(solution=SOLUTION), server.base_url, str(cache), str(n)],
        cwd=REPO_ROOT,
    )
    try:
        deadline = time.monotonic() + 60
        while len(server.log) < answered_before_kill + 2:  # both slots stuck on unanswered calls
            assert worker.poll() is None, "the worker exited early"
            assert time.monotonic() < deadline, "the worker never got that far"
            time.sleep(0.05)
    finally:
        worker.kill()
        worker.wait()
    assert len(server.completed()) == answered_before_kill

    server.responder = oracle_reply
    items = [
        Trajectory(id=f"t{i}", source="s", kind="proof", problem="p", solution=SOLUTION + f" Case {i}.")
        for i in range(n)
    ]
    resumed = annotator(server, concurrency=2, cache_path=cache)
    out = resumed.annotate(items)

    assert all(isinstance(o, Trajectory) for o in out)
    assert resumed.stats["cache_hits"] == answered_before_kill
    answered = [r.key for r in server.completed()]
    assert len(answered) == 2 * n, "every call answered exactly once across both runs"
    assert len(set(answered)) == len(answered), "no call was paid for twice"


def test_build_with_the_llm_annotator_reruns_from_the_cache(server, tmp_path, monkeypatch):
    from datasets import load_dataset

    from mrtasks.build import main

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    llm = ["--annotator", "llm", "--refine", "--base-url", server.base_url, "--model", "fake-r1",
           "--cache", str(tmp_path / "llm.sqlite"), "--no-progress"]  # fmt: skip

    assert main(["--out", str(tmp_path / "a"), *llm]) == 0
    calls = len(server.log)
    assert main(["--out", str(tmp_path / "b"), *llm]) == 0

    assert calls > 0 and len(server.log) == calls, "the rerun is served from the cache"
    stats = [json.loads((tmp_path / d / "build_stats.json").read_text()) for d in "ab"]
    assert stats[0]["fingerprint"] == stats[1]["fingerprint"]
    rows = load_dataset(str(tmp_path / "b"), "masked_then_fill", split="train")
    assert rows.num_rows == stats[1]["counts"]["masked_then_fill"]["train"] > 0


# --- refine ------------------------------------------------------------------------------------

RAMBLING = "We need $x + 1 = 3$.\nWait, let me double-check that.\nSo $x = 2$ and the answer is $\\boxed{2}$."


def test_refine_is_a_no_op_unless_enabled(server):
    items = [traj(0, RAMBLING, answer="2")]
    assert annotator(server).refine(items) == items
    assert server.log == []


def test_refine_rewrites_computations_only(server, tmp_path):
    items = [traj(0, RAMBLING, answer="2"), traj(1, RAMBLING, kind="proof", answer=None)]
    ann = annotator(server, refine=True, cache_path=tmp_path / "c.sqlite")

    computation, proof = ann.refine(items)

    assert computation.solution == "We need $x + 1 = 3$.\nSo $x = 2$ and the answer is $\\boxed{2}$."
    assert proof.solution == RAMBLING
    assert [request_kind(r.body) for r in server.log] == ["refine"]
    assert request_solution(server.log[0].body) == RAMBLING

    annotator(server, refine=True, cache_path=tmp_path / "c.sqlite").refine(items)
    assert len(server.log) == 1, "the refine pass is cached too"


def test_refine_that_loses_the_answer_is_dropped(server):
    server.responder = lambda body: "<think>hmm</think>We need $x + 1 = 3$, so $x = 7$."
    [out] = annotator(server, refine=True, max_attempts=2).refine([traj(0, RAMBLING, answer="2")])
    assert isinstance(out, Drop) and out.reason == "llm_refine_lost_answer"
    assert len(server.log) == 2


def test_refine_only_requires_an_answer_the_original_states(server):
    # GSM8K-style: the reference answer "$18$" is not written as such in the solution text.
    original = "She sells 16 - 3 - 4 = 9 eggs.\nWait, recount.\nShe makes 9 * 2 = 18 dollars.\n#### eighteen"
    [out] = annotator(server, refine=True).refine([traj(0, original, answer="$19$")])
    assert isinstance(out, Trajectory) and "Wait" not in out.solution


def test_config_rejects_bad_values():
    with pytest.raises(ValueError, match="--model"):
        LLMConfig(base_url="http://localhost:8000/v1")
    with pytest.raises(ValueError):
        LLMConfig(model="m", concurrency=0)
    with pytest.raises(ValueError, match="min_step_coverage"):
        LLMConfig(model="m", min_step_coverage=1.5)


def test_cache_file_that_is_not_sqlite_is_a_clear_error(tmp_path: Path):
    bad = tmp_path / "cache.sqlite"
    bad.write_text("this is not a database" * 100)
    with pytest.raises(ValueError, match="not a usable sqlite database"):
        LLMAnnotator(LLMConfig(model="m", cache_path=bad))


# --- the checks on their own (mrtasks.curate.validate) -------------------------------------------

@pytest.mark.parametrize(
    "text",
    [
        '{"steps": ["a"]}',
        'Here you go:\n```json\n{"steps": ["a"]}\n```\nHope this helps.',
        '<think>Maybe {"steps": ["wrong"]}?</think>\n{"steps": ["a"]}',
        'reasoning...</think>{"steps": ["a"]}',
        '{\n  "steps": [\n    "a",\n    // Continue until all steps are included\n  ]\n}',
        'The JSON is {"steps": ["a"]} as requested; see {above}.',
    ],
    ids=["bare", "fenced", "think", "lone_close_think", "comment_trailing_comma", "prose"],
)
def test_extract_json_finds_the_object(text):
    assert extract_json(text) == {"steps": ["a"]}


@pytest.mark.parametrize("text", ["", "   ", "no json here", "```json\n{broken\n```", "[1, 2]"])
def test_extract_json_rejects_answers_without_an_object(text):
    with pytest.raises(Rejected) as e:
        extract_json(text)
    assert e.value.reason == "llm_invalid_json"


def test_strip_math_delimiters():
    assert strip_math_delimiters("$x^2$") == "x^2"
    assert strip_math_delimiters(" \\[ a + b \\] ") == "a + b"
    assert strip_math_delimiters("$$\\frac{1}{2}$$") == "\\frac{1}{2}"
    assert strip_math_delimiters("Vieta's formulas") == "Vieta's formulas"


def test_locate_formulas_spans_whitespace_boundaries_and_duplicates():
    solution = "Take $\\max(x, 1)$ with $x = 2$ and $x=2$ again, by the AM-GM inequality."
    match = locate_formulas(
        solution, ["$x = 2$", "x  =  2", "x=2", "x", "AM-GM inequality", "\\sin x"], allow_repeated=True
    )
    texts = [f.text for f in match.formulas]
    # "x  =  2" matches the second occurrence, written without spaces; the third item has none left;
    # "x" is found in "\max(x, 1)" at a clean boundary, never inside "\max".
    assert texts == ["x = 2", "x=2", "x", "AM-GM inequality"]
    assert solution[match.formulas[2].start - 1] == "("
    assert match.duplicates == 1 and match.missing == ["\\sin x"]

    # By default a formula written twice is not maskable: the other copy would give it away.
    strict = locate_formulas(solution, ["x = 2", "AM-GM inequality"])
    assert [f.text for f in strict.formulas] == ["AM-GM inequality"] and strict.repeated == 1


def test_check_steps_requires_order_and_coverage():
    solution = "First we expand.\n\nThen we collect terms.\n\nFinally we solve for $x$."
    ok = check_steps(solution, ["First we expand.", "Step 2: Then we collect terms.", "Finally we solve for $x$."])
    assert ok.coverage == 1.0 and ok.steps[1] == "Then we collect terms."
    with pytest.raises(Rejected, match="out of order"):
        check_steps(solution, ["Then we collect terms.", "First we expand.", "Finally we solve for $x$."])
    with pytest.raises(Rejected, match="cover"):
        check_steps(solution, ["First we expand."])
    with pytest.raises(Rejected, match="does not occur"):
        check_steps(solution, ["First we expand.", "We guess the answer is 42 by symmetry.", "Finally."])


@settings(max_examples=100, deadline=None)
@given(
    answer=st.one_of(
        st.text(max_size=300),
        st.lists(st.text(max_size=40), max_size=8).map(lambda xs: json.dumps({"theorems": xs, "steps": xs})),
        st.sampled_from(["[" * 5000, "{" * 5000, '{"steps": [""]}', '{"theorems": [], "steps": []}']),
    )
)
def test_any_answer_is_parsed_or_rejected_never_crashes(answer):
    ann = LLMAnnotator(LLMConfig(model="m", progress=False))
    for parse in (ann._parse_formulas, ann._parse_steps, ann._parse_refined):
        try:
            parse(answer, traj())
        except Rejected:
            pass


@settings(max_examples=200, deadline=None)
@given(cuts=st.lists(st.tuples(st.integers(0, 400), st.integers(1, 80)), max_size=12), problem=st.text(max_size=60))
def test_any_span_of_the_text_listed_is_kept_or_vetoed_never_crashes(cuts, problem):
    # Every listed item that occurs in the text reaches the vetoes (lone answer, bookkeeping roles, copied givens).
    solution = BOOKKEEPING_SOLUTION + "\n\n" + SOLUTION
    items = [solution[a : a + n] for a, n in cuts if solution[a : a + n].strip()]
    ann = LLMAnnotator(LLMConfig(model="m", progress=False, min_formulas=1))
    try:
        out = ann._parse_formulas(formulas_reply(items), replace(traj(solution=solution), problem=problem))
    except Rejected:
        return
    assert all(solution[f.start : f.end] == f.text for f in out)


# --- the benchmark, small ----------------------------------------------------------------------


def test_bench_concurrency_beats_sequential():
    sequential, parallel, cached = bench(latency=0.1, concurrencies=[1, 4], n=6)
    assert sequential.calls == parallel.calls == 12 and cached.calls == 0
    assert parallel.speedup > 2.0, f"concurrency 4 gave only {parallel.speedup:.2f}x"


def test_the_first_drop_of_each_reason_is_logged_with_its_detail(server, caplog):
    server.responder = lambda body: Reply(status=400, body=json.dumps({"error": {"message": "max_tokens is too large"}}))
    with caplog.at_level("WARNING", logger="mrtasks"):
        out = annotator(server).annotate([traj(i, SOLUTION + f" ({i})") for i in range(3)])
    assert all(isinstance(o, Drop) and o.reason == "llm_api_error" for o in out)
    warnings = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(warnings) == 1 and "llm_api_error" in warnings[0] and "max_tokens is too large" in warnings[0]


# --- llm_bench's command line: latency and --json (fuzz findings) --------------------------------


def _bench_cli(argv: list[str], capsys) -> tuple[int, str]:
    from mrtasks.curate.llm_bench import main as bench_main

    try:
        code = bench_main(argv)
    except SystemExit as e:  # argparse's usage errors
        code = e.code
    return code, capsys.readouterr().err


@pytest.mark.parametrize("latency", ["inf", "nan", "1e400", "-1"])
def test_bench_refuses_a_latency_that_is_not_a_finite_number_of_seconds(latency, capsys, tmp_path):
    out = tmp_path / "r.json"
    code, err = _bench_cli([f"--latency={latency}", "--trajectories", "1", "--json", str(out)], capsys)
    assert code == 2
    assert "--latency must be a finite number of seconds >= 0" in err and "Traceback" not in err
    assert not out.exists()


def _marked_build(folder: Path) -> Path:
    """A folder that looks like a dataset build (its build_stats.json marker) with a card."""
    folder.mkdir()
    (folder / "README.md").write_text("# the card\n")
    marker = {"mrtasks_build": {"format": 1, "files": ["README.md", "build_stats.json"]}}
    (folder / "build_stats.json").write_text(json.dumps(marker))
    return folder


def test_bench_json_never_overwrites_a_build_or_a_file_it_did_not_write(tmp_path, capsys):
    build = _marked_build(tmp_path / "build")
    card = (build / "README.md").read_bytes()
    mine = tmp_path / "notes.json"
    mine.write_text('{"my": "settings"}\n')
    rows = tmp_path / "rows.json"
    rows.write_text('[{"a": 1}]\n')  # a JSON list, but not of bench rows
    small = ["--latency", "0", "--trajectories", "1", "--concurrency", "1"]
    for target, words in ((build / "README.md", "lies inside"), (build / "new.json", "lies inside"),
                          (mine, "was not written by mrtasks.curate.llm_bench"),
                          (rows, "was not written by mrtasks.curate.llm_bench")):
        code, err = _bench_cli([*small, "--json", str(target)], capsys)
        assert code == 4, (target, err)
        assert err.startswith(f"error: --json {target}") and words in err and "Traceback" not in err
    assert (build / "README.md").read_bytes() == card and not (build / "new.json").exists()
    assert mine.read_text() == '{"my": "settings"}\n' and rows.read_text() == '[{"a": 1}]\n'
    # its own file is replaced by the next run
    ours = tmp_path / "bench.json"
    from mrtasks.curate.llm_bench import main as bench_main

    assert bench_main([*small, "--json", str(ours)]) == 0
    first = json.loads(ours.read_text())
    assert [r["cached_rerun"] for r in first] == [False, True]
    ours.write_text(json.dumps(first[:1]))
    bench_main([*small, "--json", str(ours)])
    assert len(json.loads(ours.read_text())) == 2


@pytest.mark.parametrize("latency", [float("inf"), float("nan"), -0.5])
def test_the_fake_server_refuses_a_latency_that_is_not_finite(latency):
    with pytest.raises(ValueError, match="latency must be a finite number"):
        FakeOpenAIServer(latency=latency)


def test_a_huge_or_nan_reply_delay_never_fails_a_server_thread(capfd):
    """An infinite or huge delay waits (until the server stops), a NaN one waits nothing: no thread
    traceback (Event.wait overflows past threading.TIMEOUT_MAX)."""
    import http.client

    delays = iter([float("nan"), float("inf"), 1e300])
    with FakeOpenAIServer(lambda body: Reply(content="OK", delay=next(delays))) as s:
        port = int(s.base_url.split(":")[2].split("/")[0])
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]})

        def ask(timeout: float) -> int | None:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
            try:
                conn.request("POST", "/v1/chat/completions", body, {"Content-Type": "application/json"})
                return conn.getresponse().status
            except TimeoutError:
                return None
            finally:
                conn.close()

        assert ask(5) == 200  # nan: no wait
        assert ask(0.5) is None and ask(0.5) is None  # inf, 1e300: still waiting
        time.sleep(0.2)
    assert len(s.completed()) == 1
    err = capfd.readouterr().err
    assert "Traceback" not in err and "OverflowError" not in err


def test_keep_bookkeeping_is_an_option_of_every_llm_command():
    import argparse

    from mrtasks.curate.llm import add_endpoint_arguments, llm_config_from_args

    parser = argparse.ArgumentParser()
    add_endpoint_arguments(parser)  # the options of mrtasks.build, annotator_bench and curate.batch
    assert llm_config_from_args(parser.parse_args(["--model", "m"])).drop_bookkeeping is True
    assert llm_config_from_args(parser.parse_args(["--model", "m", "--keep-bookkeeping"])).drop_bookkeeping is False
