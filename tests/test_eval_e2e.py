"""End to end: `python -m eval.run` with a tiny model built here (nothing downloaded).

A random tiny model scores about 0, so these tests check the machinery (every output file,
resume, settings checks, the backend); `test_eval_grading.py` checks grading on real answers.
"""

import hashlib
import json
import logging
import subprocess
import sys

import pytest

from eval.benchmarks import load_benchmarks
from eval.generation import TransformersBackend
from eval.passk import passk_curve
from eval.run import EXIT_DATA, EXIT_MODEL, EXIT_OUTPUT, EXIT_USAGE, build_parser, main, problem_seed, prompt_messages
from mrtasks.prompts import outcome_messages
from tests.conftest import REPO_ROOT
from training.tiny_model import build_tiny_model, teach


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory, shared_data):
    lines = (shared_data / "benchmarks" / "aime24.jsonl").read_text().splitlines()
    texts = [json.loads(line)["problem"] for line in lines] + [r"<think> so </think> \boxed{25}"]
    return str(build_tiny_model(tmp_path_factory.mktemp("tiny"), texts))


@pytest.fixture(scope="module")
def taught_model(tmp_path_factory, shared_data):
    """A tiny model warmed up (under the chat-template prompt) to answer the test's four problems
    with `\\boxed{answer}`, so grading sees right and wrong samples end to end."""
    benchmarks = load_benchmarks(["aime24", "amc23"], shared_data / "benchmarks", max_problems=2)
    problems = [p for b in benchmarks for p in b.problems]
    answers = [rf"\boxed{{{p.answer}}}" for p in problems]
    path = build_tiny_model(tmp_path_factory.mktemp("taught"), [p.problem for p in problems] + answers)
    examples = [(prompt_messages(p.problem, "chat-template"), a) for p, a in zip(problems, answers)]
    return str(teach(path, examples, steps=30))


@pytest.fixture
def args(tiny_model, shared_data, tmp_path):
    """Two problems (AIME24 and AMC23) per run unless a test says otherwise; n = 4, 16 new tokens."""
    return [
        "--model", tiny_model, "--benchmark-dir", str(shared_data / "benchmarks"), "--benchmarks", "aime24", "amc23",
        "--n", "4", "--k", "1", "2", "4", "8", "--max-new-tokens", "16", "--problems-per-call", "1",
        "--backend", "transformers", "--output-dir", str(tmp_path / "out"),
    ]


def read_samples(out):
    return [json.loads(line) for line in (out / "samples.jsonl").read_text().splitlines()]


def test_cli_writes_every_output(args, taught_model, tmp_path):
    args[1] = taught_model
    proc = subprocess.run([sys.executable, "-m", "eval.run", *args, "--max-problems", "2", "--prompt-style",
                           "chat-template"],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "out"

    rows = read_samples(out)
    assert len(rows) == 2 * 2 * 4
    assert {(r["benchmark"], r["id"]) for r in rows} == {("aime24", "60"), ("aime24", "61"), ("amc23", "0"),
                                                         ("amc23", "1")}
    first = rows[0]
    assert set(first) == {"benchmark", "id", "sample", "answer", "prediction", "reward", "correct", "completion",
                          "num_tokens", "truncated"}
    assert [r["sample"] for r in rows[:4]] == [0, 1, 2, 3] and first["answer"] == "204"
    assert all(0 <= r["reward"] <= 1 and 1 <= r["num_tokens"] <= 16 for r in rows)
    assert all(r["correct"] == (r["reward"] == 1.0) for r in rows)
    right = [r for r in rows if r["correct"]]
    assert right and all(r["prediction"] is not None for r in right)  # the warm-up taught some answers
    assert all(r["prediction"] == r["answer"] for r in right if r["prediction"].isdigit())

    summary = json.loads((out / "summary.json").read_text())
    assert summary["k"] == [1, 2, 4]  # 8 > n is left out, with a warning
    assert "leaving out k = [8]" in proc.stderr
    gen = summary["generation"]
    assert (gen["n"], gen["temperature"], gen["top_p"], gen["max_new_tokens"], gen["seed"]) == (4, 0.6, 0.95, 16, 0)
    assert gen["backend"]["name"] == "transformers" and gen["backend"]["version"]
    assert summary["model"]["name_or_path"] == args[1]
    prompt = summary["prompt"]
    assert (prompt["style"], prompt["messages"]) == ("chat-template", [{"role": "user", "content": "{problem}"}])
    assert summary["grader"]["reward"] == "mrtasks.rewards:outcome" and summary["grader"]["mathruler"]
    # What a reader needs to reproduce the samples: template, stop ids, top-k as applied, weights, grader bound.
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(args[1])
    assert prompt["chat_template_sha256"] == hashlib.sha256(tok.chat_template.encode()).hexdigest()
    assert prompt["think_prefilled"] is False
    assert gen["stop_token_ids"] == [tok.convert_tokens_to_ids("<|im_end|>"), tok.convert_tokens_to_ids("<|endoftext|>")]
    assert (gen["top_k"], gen["effective_top_k"]) == (0, None)  # transformers' default top-k 50 is not applied
    assert gen["backend"]["model_default_top_k"] == 50
    assert len(summary["model"]["weights_sha256"]) == 64
    assert (summary["grader"]["timeout_s"], summary["grader"]["timeouts"]) == (10.0, 0)
    for name in ("aime24", "amc23"):
        bench = summary["benchmarks"][name]
        assert bench["num_problems"] == 2 and bench["num_samples"] == 8
        assert len(bench["source"]["sha256"]) == 64
        counts = [(4, sum(r["correct"] for r in rows if r["benchmark"] == name and r["id"] == pid))
                  for pid in bench["correct_counts"]]
        assert bench["pass@k"] == {str(k): v for k, v in passk_curve(counts, [1, 2, 4]).items()}
        assert bench["correct_counts"] == {pid: c for pid, (_, c) in zip(bench["correct_counts"], counts)}
        assert list(bench["curve"]) == ["1", "2", "3", "4"]
    assert set(summary["average"]["pass@k"]) == {"1", "2", "4"}

    table = (out / "table.md").read_text()
    assert "| Benchmark | Pass@1 (%) | Pass@2 (%) | Pass@4 (%) |" in table
    assert all(f"| {name} |" in table for name in ("AIME24", "AMC23", "Average"))
    assert "| Benchmark | Pass@1 (%)" in proc.stdout

    png = (out / "passk.png").read_bytes()
    assert png.startswith(b"\x89PNG\r\n\x1a\n")
    import matplotlib.image

    height, width, _ = matplotlib.image.imread(out / "passk.png").shape
    assert width > height > 100


def test_resume_keeps_finished_problems_and_redoes_broken_ones(args, tmp_path, caplog):
    out = tmp_path / "out"
    main(args + ["--max-problems", "1"])
    rows = read_samples(out)
    assert len(rows) == 8
    # Mark a finished problem: its sample 0 now holds the right answer (with a stale reward).
    rows[0]["completion"] = r"\boxed{204}"
    # Then an interruption: half of the next problem's rows and a line cut short.
    broken = [dict(rows[4], id="1", sample=i, completion="partial") for i in range(2)]
    text = "".join(json.dumps(r) + "\n" for r in rows + broken) + '{"benchmark": "amc'
    (out / "samples.jsonl").write_text(text)

    with caplog.at_level(logging.INFO):
        main(args + ["--max-problems", "2"])
    assert "2 of 4 problems to generate" in caplog.text
    assert "dropping 1 unreadable line(s) and 1 unfinished problem(s)" in caplog.text
    resumed = read_samples(out)
    assert len(resumed) == 16 and resumed[:8] == rows  # finished problems untouched
    assert not any(r["completion"] == "partial" for r in resumed)
    assert len({(r["benchmark"], r["id"], r["sample"]) for r in resumed}) == 16

    summary = json.loads((out / "summary.json").read_text())
    assert summary["benchmarks"]["aime24"]["correct_counts"]["60"] == 0  # the stored reward is used
    main(args + ["--max-problems", "2", "--regrade"])
    summary = json.loads((out / "summary.json").read_text())
    assert summary["benchmarks"]["aime24"]["correct_counts"]["60"] == 1  # regraded by the real grader
    assert summary["benchmarks"]["aime24"]["pass@k"]["1"] == pytest.approx(1 / 4 / 2)


def test_same_seed_same_samples_and_settings_are_checked_on_resume(args, tmp_path, capsys):
    main(args + ["--max-problems", "1"])
    again = [a.replace(str(tmp_path / "out"), str(tmp_path / "again")) for a in args]
    main(again + ["--max-problems", "1"])
    assert read_samples(tmp_path / "out") == read_samples(tmp_path / "again")

    with pytest.raises(SystemExit) as stopped:
        main(args + ["--max-problems", "1", "--temperature", "1.0"])
    assert stopped.value.code == EXIT_OUTPUT
    # problems_per_call regroups the transformers backend's seeded calls: part of the resume key too.
    capsys.readouterr()
    with pytest.raises(SystemExit) as stopped:
        main([a if a != "1" or i != args.index("--problems-per-call") + 1 else "2" for i, a in enumerate(args)]
             + ["--max-problems", "1"])
    assert stopped.value.code == EXIT_OUTPUT and "problems_per_call: 1 -> 2" in capsys.readouterr().err
    main(args + ["--max-problems", "1", "--temperature", "1.0", "--overwrite"])
    config = json.loads((tmp_path / "out" / "config.json").read_text())
    assert config["temperature"] == 1.0 and config["backend_info"]["name"] == "transformers"


def test_help_documents_every_option():
    proc = subprocess.run([sys.executable, "-m", "eval.run", "--help"], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 0
    for action in build_parser()._actions:
        assert action.help, action.dest
        assert all(opt in proc.stdout for opt in action.option_strings)
    assert "--prompt-style {paper,chat-template}" in proc.stdout


def test_prompt_styles():
    assert prompt_messages("What is 1+1?", "paper") == outcome_messages("What is 1+1?")
    assert prompt_messages("What is 1+1?", "chat-template") == [{"role": "user", "content": "What is 1+1?"}]


def test_transformers_backend_is_seeded_and_chunks_large_n(tiny_model):
    backend = TransformersBackend(tiny_model, batch_size=3)  # n = 4 > 3: each prompt in two calls
    prompts = [prompt_messages("What is $1+1$?", "paper"), prompt_messages("Find $x$.", "chat-template")]
    kwargs = dict(n=4, temperature=0.6, top_p=0.95, top_k=0, max_new_tokens=8)
    first = backend.generate(prompts, seeds=[1, 5], **kwargs)
    assert [len(samples) for samples in first] == [4, 4]
    assert all(1 <= s.num_tokens <= 8 and (s.num_tokens == 8 or not s.truncated) for samples in first for s in samples)
    assert backend.generate(prompts, seeds=[1, 5], **kwargs) == first
    assert backend.generate(prompts, seeds=[2, 6], **kwargs) != first
    greedy = backend.generate(prompts[:1], seeds=[1], **{**kwargs, "temperature": 0.0})[0]
    assert len({s.text for s in greedy}) == 1


def test_interrupted_run_resumes_where_it_stopped(args, tmp_path, monkeypatch, caplog, capsys):
    """Ctrl-C during the second backend call: the first problem is on disk, the rerun does the rest."""
    import eval.run

    calls = []

    def interrupting_backend(*a, **kw):
        backend = real_make_backend(*a, **kw)
        generate = backend.generate

        def generate_then_stop(prompts, **kwargs):
            calls.append(len(prompts))
            if len(calls) == 2:
                raise KeyboardInterrupt
            return generate(prompts, **kwargs)

        backend.generate = generate_then_stop
        return backend

    real_make_backend = eval.run.make_backend
    monkeypatch.setattr(eval.run, "make_backend", interrupting_backend)
    with pytest.raises(SystemExit) as stopped:
        main(args + ["--max-problems", "2"])
    out = tmp_path / "out"
    assert stopped.value.code == 130
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"error: interrupted; 1 of 4 problems are saved in {out / 'samples.jsonl'}; rerun the same command to resume")
    assert not (out / ".mrtasks.lock").exists()  # the lock goes with the run
    assert {(r["benchmark"], r["id"]) for r in read_samples(out)} == {("aime24", "60")}
    assert not (out / "summary.json").exists()

    monkeypatch.setattr(eval.run, "make_backend", real_make_backend)
    with caplog.at_level(logging.INFO):
        main(args + ["--max-problems", "2"])
    assert "3 of 4 problems to generate" in caplog.text
    assert len(read_samples(out)) == 16
    assert json.loads((out / "summary.json").read_text())["benchmarks"]["aime24"]["num_samples"] == 8


def test_seed_ranges_of_problems_never_overlap():
    """vLLM seeds sample j of a request as seed + j: each problem owns [s, s + n), disjoint from every other."""
    n = 64
    starts = [problem_seed(0, n, b, p) for b in range(4) for p in range(600)]
    ranges = sorted((s, s + n) for s in starts)
    assert all(end <= nxt for (_, end), (nxt, _) in zip(ranges, ranges[1:]))
    assert problem_seed(7, 4, 0, 0) == 7 and problem_seed(7, 4, 0, 1) == 11  # consecutive problems abut
    assert max(starts) + n < 2**31  # a valid seed for every backend


def test_top_k_is_the_same_on_both_backends(tiny_model):
    """transformers' generate() applies its default top-k 50 unless told otherwise; the eval asks for none."""
    from eval.generation import VLLMBackend

    backend = TransformersBackend(tiny_model)
    assert backend.info()["model_default_top_k"] == 50  # what generate() would apply by default
    assert backend.effective_top_k(0) is None and backend.effective_top_k(5) == 5
    assert VLLMBackend.effective_top_k(None, 0) is None  # vLLM: 0 is off (sent as -1)
    # A tiny vocabulary sampled at high temperature: with top-k 2 only two tokens ever appear
    # first; with top-k 0 more do, so the setting reaches generate().
    prompts = [prompt_messages("What is $1+1$?", "chat-template")]
    firsts = {}
    for top_k in (0, 2):
        samples = backend.generate(prompts, n=64, temperature=5.0, top_p=1.0, top_k=top_k, max_new_tokens=1,
                                   seeds=[0])[0]
        firsts[top_k] = {s.text for s in samples}
    assert len(firsts[2]) <= 2 < len(firsts[0])


def test_everyday_errors_are_one_line_with_their_exit_code(args, tmp_path, shared_data):
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "aime24.jsonl").write_text("")
    blocker = tmp_path / "file"
    blocker.write_text("x")
    model_at = args.index("--model") + 1
    dir_at = args.index("--benchmark-dir") + 1
    out_at = args.index("--output-dir") + 1
    cases = {
        "missing benchmark folder": ({dir_at: str(tmp_path / "nope")}, EXIT_DATA, "does not exist"),
        "empty benchmark": ({dir_at: str(tmp_path / "empty")}, EXIT_DATA, "aime24"),
        "missing model": ({model_at: str(tmp_path / "no-model")}, EXIT_MODEL, "model path"),
        "output under a file": ({out_at: str(blocker / "out")}, EXIT_OUTPUT, "is not a folder"),
        "unknown stop token": ({}, EXIT_USAGE, "--stop-tokens"),
    }
    for name, (changes, code, words) in cases.items():
        argv = [changes.get(i, a) for i, a in enumerate(args)] + ["--max-problems", "1"]
        if name == "unknown stop token":
            argv += ["--stop-tokens", "<|not-a-token|>"]
        proc = subprocess.run([sys.executable, "-m", "eval.run", *argv], cwd=REPO_ROOT, capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode == code, (name, proc.stderr[-1500:])
        assert "Traceback" not in proc.stderr, name
        errors = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
        assert len(errors) == 1 and words in errors[0], (name, proc.stderr[-1500:])


def test_output_dir_defaults_under_outputs_eval():
    from eval.run import parse_config

    cfg, _ = parse_config(["--model", "Qwen/Qwen2.5-3B"])
    assert cfg.output_dir == "outputs/eval/Qwen2.5-3B"
    cfg, level = parse_config(["--model", "some/dir/ckpt/", "--output-dir", "x", "-v"])
    assert (cfg.output_dir, level) == ("x", "DEBUG")
    assert (cfg.grader_timeout, cfg.top_k) == (10.0, 0)


# --- refusals found by fuzzing (F20, F21): before anything loads, one line, nothing written ---------------------------


def _refuse(argv, capsys, code, *words, usage=False):
    """main(argv) must exit `code` with one error line holding `words` (argparse's usage line before it)."""
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "error: " in line]
    assert stopped.value.code == code, err[-1500:]
    assert len(lines) == 1 and all(w in lines[0] for w in words), err[-1500:]
    assert lines[0].startswith("python -m eval.run: error: " if usage else "error: "), err[-1500:]
    assert "Traceback" not in err
    return lines[0]


@pytest.fixture
def no_model_load(monkeypatch):
    """Fail the test if eval.run gets as far as loading the model."""
    import eval.run

    def refuse(*a, **kw):
        raise AssertionError("the model was loaded before the refusal")

    monkeypatch.setattr(eval.run, "make_backend", refuse)


def test_a_row_too_long_for_the_context_is_refused_before_loading(args, tmp_path, capsys, no_model_load):
    """F20: a 10,000,000-character problem got the process OOM-killed during generation; now it is a data
    error naming the file, line, benchmark and row id, found in a second without tokenizing it."""
    import time

    bench = tmp_path / "long.jsonl"
    rows = [{"id": "short", "problem": "What is $1+1$?", "answer": "2"},
            {"id": "huge", "problem": "Find $x$. " * 1_000_000, "answer": "1"}]
    bench.write_text("".join(json.dumps(r) + "\n" for r in rows))
    at = args.index("aime24")
    argv = args[:at] + [f"long={bench}"] + args[at + 2:]  # in place of "aime24 amc23"
    out = tmp_path / "out"
    started = time.monotonic()
    line = _refuse(argv, capsys, EXIT_DATA, f"{bench}:2", "problem id 'huge' of long", "10000000 characters",
                   "context of 4096")
    assert time.monotonic() - started < 20, "the refusal is not cheap"
    assert "--max-new-tokens 16" in line and not out.exists()

    # Under the character bound (8 per token of room), the rendered prompt's tokens are counted exactly.
    words = " ".join(f"w{i}q{i * 7919 % 1000}" for i in range(3000))  # about 30,000 characters, > 4080 tokens
    assert len(words) < 8 * (4096 - 16)
    rows[1]["problem"] = words
    bench.write_text("".join(json.dumps(r) + "\n" for r in rows))
    _refuse(argv, capsys, EXIT_DATA, f"{bench}:2", "problem id 'huge' of long", "its prompt is", "tokens, more than "
            "the 4080 tokens that fit")
    assert not out.exists()

    # --max-model-len, when given, is the context; --max-new-tokens that fill the context leave no room.
    _refuse(args + ["--max-model-len", "40"], capsys, EXIT_DATA, "aime24", "context of 40 (--max-model-len)")
    _refuse(args + ["--max-new-tokens", "4096"], capsys, EXIT_USAGE, "--max-new-tokens 4096 leaves no room",
            "max_position_embeddings")
    assert not out.exists()


@pytest.mark.parametrize("option, value, words", [
    ("--temperature", "nan", "temperature"), ("--temperature", "inf", "temperature"),
    ("--temperature", "-1", "temperature"), ("--top-p", "nan", "top_p"), ("--top-p", "1.5", "top_p"),
    ("--grader-timeout", "nan", "grader_timeout"), ("--grader-timeout", "inf", "grader_timeout"),
    ("--grader-timeout", "1e12", "grader_timeout"), ("--grader-timeout", "0", "grader_timeout"),
    ("--gpu-memory-utilization", "5", "gpu_memory_utilization"),
    ("--gpu-memory-utilization", "nan", "gpu_memory_utilization"),
    ("--gpu-memory-utilization", "0", "gpu_memory_utilization"),
    ("--tensor-parallel-size", "0", "tensor_parallel_size"), ("--max-model-len", "-1", "max_model_len"),
    ("--max-model-len", "0", "max_model_len"), ("--seed", "-1", "seed"), ("--seed", str(2**32), "seed"),
    ("--top-k", "-1", "top_k"), ("--dtype", "bogus", "--dtype"),
])
def test_out_of_range_options_are_usage_errors(option, value, words, tmp_path, capsys):
    """F21: NaN, infinities and out-of-range values of every numeric option (and an unknown dtype) exit 2."""
    out = tmp_path / "out"
    _refuse(["--model", "x/y", "--output-dir", str(out), option, value], capsys, EXIT_USAGE, words, usage=True)
    assert not out.exists()


def test_a_device_torch_cannot_use_is_refused_before_loading(args, tmp_path, capsys, no_model_load):
    """F21: --device bogus (RuntimeError) and --device cuda without CUDA (AssertionError) were tracebacks."""
    import torch

    out = tmp_path / "out"
    _refuse(args + ["--device", "bogus"], capsys, EXIT_USAGE, "--device 'bogus' is not a torch device")
    _refuse(args + ["--device", "cuda:99"], capsys, EXIT_USAGE, "--device cuda:99")
    _refuse(args + ["--device", "meta"], capsys, EXIT_USAGE, "--device meta")
    if not torch.cuda.is_available():
        _refuse(args + ["--device", "cuda"], capsys, EXIT_USAGE, "--device cuda", "use --device cpu")
    assert not out.exists()


def test_vllm_without_vllm_or_cuda_is_a_usage_error(args, tmp_path, capsys, no_model_load):
    """--backend vllm where it cannot run was an ImportError traceback; the folder it created goes again."""
    from eval.generation import backend_problem

    if backend_problem("vllm") is None:
        pytest.skip("vLLM and CUDA are here")
    argv = [a if a != "transformers" else "vllm" for a in args] + ["--max-problems", "1"]
    _refuse(argv, capsys, EXIT_USAGE, "--backend vllm", "--backend transformers")
    assert not (tmp_path / "out").exists()
