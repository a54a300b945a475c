"""`python -m eval.run`: Pass@k of a model on AIME24, AIME25, AMC23 and MATH500.

Samples `n` completions per problem (vLLM or transformers), grades each with the `outcome`
reward, and writes to `--output-dir`:

- `samples.jsonl`  one row per sample, appended per problem as it finishes; a rerun with the
                   same settings skips finished problems (resume after an interruption)
- `config.json`    the settings, checked on resume so samples of different runs never mix
- `summary.json`   everything needed to reproduce the numbers, and the numbers
- `table.md`       the paper's Table 1 layout for this run
- `passk.png`      Pass@k curves, k = 1..n, per benchmark

`--output-dir` is guarded (`mrtasks.output.OwnedFolder`): eval writes only into a new or empty
folder or its own earlier output (marked by `.mrtasks-owner.json`), never into a model folder, a
dataset build or a folder holding files it did not write; `--overwrite` deletes only the files above.
A lock makes a second run into the same folder stop at once.

Before anything is loaded or written, every setting is checked (NaN, infinities and values out of
range are usage errors, exit 2; so are an unknown --dtype and a --device torch cannot use here),
and so is every benchmark row: a prompt that does not fit the model's context (--max-model-len,
else the config's max_position_embeddings) beside --max-new-tokens is refused naming the file,
line, benchmark and problem id (exit 3); a problem of more than `CHARS_PER_TOKEN_BOUND`
characters per token of room is refused without being tokenized.

Example (offline, local benchmark files):
    python -m eval.run --model Qwen/Qwen2.5-3B --benchmark-dir ../shared/data/benchmarks \
        --output-dir outputs/eval/qwen3b-base

The defaults (n = 64 samples of up to 4096 tokens per problem, four benchmarks) are GPU-sized; on
a CPU try `--max-problems 2 --n 2 --k 1 2 --max-new-tokens 32`.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from tqdm.auto import tqdm

from eval.benchmarks import DEFAULT_BENCHMARKS, Benchmark, BenchmarkError, Problem, load_benchmarks
from eval.config import DTYPES, GENERATION_KEYS, PROMPT_STYLES, EvalConfig
from eval.generation import (
    BACKENDS,
    GenerationBackend,
    Messages,
    backend_problem,
    device_problem,
    make_backend,
    render_prompt,
    resolve_backend,
    stop_token_ids,
)
from eval.grading import configure_grader, extract_prediction, grade, grader_info, is_correct
from eval.passk import passk_curve
from eval.plots import plot_passk_curves
from eval.samples import SampleStore
from eval.tables import run_report
from mrtasks.logs import PROJECT_LOGGERS, first_line  # PROJECT_LOGGERS: the only loggers --log-level / -v change
from mrtasks.output import OutputError, OwnedFolder, Owner
from mrtasks.prompts import outcome_messages
from mrtasks.rewards.parsing import chat_template_sha256, template_prefills_think

logger = logging.getLogger("eval.run")

SAMPLES, CONFIG, SUMMARY, TABLE, PLOT = "samples.jsonl", "config.json", "summary.json", "table.md", "passk.png"
# Problems per benchmark a seed range is reserved for (problem p of benchmark b starts at
# seed + (b * SEED_STRIDE + p) * n), far above any benchmark's size.
SEED_STRIDE = 100_000
# A token of any tokenizer these models use holds at most a few characters of ordinary text: a
# problem longer than this many characters per token of room in the context surely does not fit,
# and is refused without tokenizing it (a 10 MB row would take minutes and gigabytes to encode).
CHARS_PER_TOKEN_BOUND = 8
# Where a model config states its context length (the first one found is used).
CONTEXT_FIELDS = ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length")

# Exit codes (documented in --help and the README; the build's table is the model).
EXIT_OK, EXIT_BUG, EXIT_USAGE, EXIT_DATA, EXIT_OUTPUT, EXIT_MODEL, EXIT_INTERRUPTED = 0, 1, 2, 3, 4, 5, 130
EXIT_CODES = {
    EXIT_OK: "success",
    EXIT_BUG: "unexpected error (a bug: the traceback is printed)",
    EXIT_USAGE: "bad command line (a value out of range, NaN or infinite, an unknown dtype, a device torch cannot "
                "use here, --backend vllm without vLLM or CUDA, an unknown stop token, --max-new-tokens leaving no "
                "room for a prompt)",
    EXIT_DATA: "benchmark folder/file missing, empty or malformed (a row whose prompt does not fit the model's "
               "context beside --max-new-tokens included), or a Hub benchmark that cannot be loaded",
    EXIT_OUTPUT: "--output-dir refused: not a folder, not writable, a model folder, a dataset build, files eval did "
                 "not write, another run writing into it, or samples made with other settings",
    EXIT_MODEL: "model path missing or model/tokenizer not loadable",
    EXIT_INTERRUPTED: "interrupted (Ctrl-C, SIGTERM); finished problems are kept, rerun to resume",
}
OUTPUT_FILES = (SAMPLES, SAMPLES + ".tmp", CONFIG, SUMMARY, TABLE, PLOT)


def _legacy_eval_folder(folder: Path) -> bool:
    """An eval output from before the owner marker: its config.json holds eval's settings."""
    try:
        config = json.loads((folder / CONFIG).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(config, dict) and {"model", "n", "backend", "prompt_style", "max_new_tokens"} <= config.keys()


EVAL_OWNER = Owner("eval.run", OUTPUT_FILES, "--output-dir", _legacy_eval_folder)


class EvalError(Exception):
    """An everyday failure: one line on stderr and its exit code, no traceback."""

    def __init__(self, message: str, code: int):
        super().__init__(message)
        self.code = code


def prompt_messages(problem: str, style: str) -> Messages:
    """`paper`: the paper's outcome prompt (system + user); `chat-template`: the bare problem."""
    if style == "paper":
        return outcome_messages(problem)
    if style == "chat-template":
        return [{"role": "user", "content": problem}]
    raise ValueError(f"unknown prompt style {style!r}")


def problem_seed(seed: int, n: int, benchmark_index: int, problem_index: int) -> int:
    """The first seed of a problem's own range `[s, s + n)`: ranges of different problems never
    overlap (vLLM seeds sample j of a request as seed + j), whatever the chunking."""
    if not 0 <= problem_index < SEED_STRIDE:
        raise ValueError(f"problem index {problem_index} outside [0, {SEED_STRIDE})")
    return seed + (benchmark_index * SEED_STRIDE + problem_index) * n


def looks_local(name: str) -> bool:
    """True when `name` is meant as a local path rather than a Hub id (`org/name`)."""
    return Path(name).exists() or name.startswith((".", "/", "~")) or name.endswith("/") or name.count("/") > 1


def weights_sha256(model: str) -> str | None:
    """sha256 over a local checkpoint's weight files (names and bytes); None for Hub ids."""
    folder = Path(model)
    if not folder.is_dir():
        return None
    files = sorted(p for p in folder.iterdir() if p.suffix in (".safetensors", ".bin", ".pt") and p.is_file())
    if not files:
        return None
    h = hashlib.sha256()
    for path in files:
        h.update(path.name.encode() + b"\x00")
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 24), b""):
                h.update(block)
    return h.hexdigest()


def load_tokenizer(cfg: EvalConfig) -> Any:
    """The tokenizer that renders prompts (for the template hash, stop ids and the think-block check)."""
    from transformers import AutoTokenizer

    name = cfg.tokenizer or cfg.model
    if looks_local(name) and not Path(name).expanduser().exists():
        raise EvalError(f"model path {name} does not exist", EXIT_MODEL)
    try:
        return AutoTokenizer.from_pretrained(name, revision=None if cfg.tokenizer else cfg.revision)
    except Exception as e:  # noqa: BLE001 - offline, missing, not a model: one line
        raise EvalError(f"cannot load the tokenizer of {name}: {first_line(e, named=True)}", EXIT_MODEL) from None


# --- prompt lengths ------------------------------------------------------------------------------


def model_context(cfg: EvalConfig, tokenizer: Any) -> tuple[int | None, str]:
    """The context length prompts must fit (with --max-new-tokens), and where it comes from:
    --max-model-len when given, else the model config's max_position_embeddings (or its kin),
    else the tokenizer's model_max_length; (None, "") when nothing states one."""
    if cfg.max_model_len is not None:
        return cfg.max_model_len, "--max-model-len"
    from transformers import AutoConfig

    try:
        config = AutoConfig.from_pretrained(cfg.model, revision=cfg.revision)
    except Exception:  # noqa: BLE001 - no config here: the model load reports it; fall back to the tokenizer
        config = None
    if config is not None:
        text_config = config.get_text_config() if hasattr(config, "get_text_config") else config
        for name in CONTEXT_FIELDS:
            value = getattr(text_config, name, None)
            if isinstance(value, int) and not isinstance(value, bool) and value > 0:
                return value, f"the model's {name}"
    limit = getattr(tokenizer, "model_max_length", None)
    if isinstance(limit, int) and 0 < limit < 10**8:  # transformers' "unknown" is 1e30
        return limit, "the tokenizer's model_max_length"
    return None, ""


def check_prompt_lengths(cfg: EvalConfig, benchmarks: list[Benchmark], tokenizer: Any) -> None:
    """Refuse, before anything is loaded or written, a problem whose prompt does not fit the
    model's context beside --max-new-tokens (a row far too long would be generated anyway, its
    attention growing with the square of its length, until the process is killed for memory).

    Cheap: a problem longer than `CHARS_PER_TOKEN_BOUND` characters per token of room is refused
    without tokenizing it; the rest are rendered with the chat template and counted exactly."""
    context, origin = model_context(cfg, tokenizer)
    if context is None:
        logger.warning("the model states no context length: prompt lengths are not checked")
        return
    room = context - cfg.max_new_tokens
    if room < 1:
        raise EvalError(f"--max-new-tokens {cfg.max_new_tokens} leaves no room for a prompt in the context of "
                        f"{context} tokens ({origin}); lower --max-new-tokens", EXIT_USAGE)
    fits = (f"the {room} tokens that fit beside --max-new-tokens {cfg.max_new_tokens} in the context of {context} "
            f"({origin})")
    for bench in benchmarks:
        for problem in bench.problems:
            where = f"{problem.where or bench.name}: problem id {problem.id!r} of {bench.name}"
            chars = len(problem.problem)
            if chars > CHARS_PER_TOKEN_BOUND * room:
                raise EvalError(f"{where} is too long: {chars} characters, far more than {fits}; shorten the problem "
                                "or drop the row", EXIT_DATA)
            try:
                tokens = len(render_prompt(tokenizer, prompt_messages(problem.problem, cfg.prompt_style)))
            except ValueError as e:  # no chat template
                raise EvalError(str(e), EXIT_MODEL) from None
            if tokens > room:
                raise EvalError(f"{where} is too long: its prompt is {tokens} tokens, more than {fits}; shorten the "
                                "problem, drop the row or lower --max-new-tokens", EXIT_DATA)


# --- output directory ----------------------------------------------------------------------------


def prepare_output_dir(cfg: EvalConfig, backend_name: str) -> dict[str, Any]:
    """Write config.json; refuse to resume a run made with other generation settings.

    Called inside the folder's `OwnedFolder` (checked, locked, marked); `--overwrite` has already
    removed eval's own files."""
    out = Path(cfg.output_dir)
    record = {**cfg.to_dict(), "backend": backend_name}
    path = out / CONFIG
    if path.exists():
        try:
            previous = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as e:
            raise EvalError(f"{path} is unreadable ({e}); use --overwrite to start this output again", EXIT_OUTPUT) from None
        diff = {k: (previous.get(k), record[k]) for k in GENERATION_KEYS if previous.get(k) != record[k]}
        if diff:
            details = ", ".join(f"{k}: {a!r} -> {b!r}" for k, (a, b) in diff.items())
            raise EvalError(
                f"{out} holds samples generated with other settings ({details}). "
                f"Use another --output-dir, or --overwrite to discard them.", EXIT_OUTPUT
            )
        record["backend_info"] = previous.get("backend_info")
    path.write_text(json.dumps(record, indent=2) + "\n")
    return record


def _save_backend_info(cfg: EvalConfig, record: dict[str, Any], info: dict[str, Any]) -> None:
    record["backend_info"] = info
    (Path(cfg.output_dir) / CONFIG).write_text(json.dumps(record, indent=2) + "\n")


# --- generation and grading ----------------------------------------------------------------------


def sample_rows(bench: str, problem: Problem, texts: list[str], extra: list[dict[str, Any]]) -> list[dict[str, Any]]:
    rewards = grade(texts, problem.answer)
    return [
        {
            "benchmark": bench,
            "id": problem.id,
            "sample": i,
            "answer": problem.answer,
            "prediction": extract_prediction(text),
            "reward": reward,
            "correct": is_correct(reward),
            "completion": text,
            **more,
        }
        for i, (text, reward, more) in enumerate(zip(texts, rewards, extra))
    ]


def generate_pending(
    cfg: EvalConfig, benchmarks: list[Benchmark], store: SampleStore, backend: GenerationBackend
) -> None:
    """Generate and grade every problem the store lacks, flushing each chunk as it finishes."""
    pending = [
        (b.name, p, problem_seed(cfg.seed, cfg.n, bi, pi))
        for bi, b in enumerate(benchmarks)
        for pi, p in enumerate(b.problems)
        if not store.done(b.name, p.id)
    ]
    with tqdm(total=len(pending), desc="problems", unit="problem") as bar:
        for start in range(0, len(pending), cfg.problems_per_call):
            chunk = pending[start:start + cfg.problems_per_call]
            outputs = backend.generate(
                [prompt_messages(p.problem, cfg.prompt_style) for _, p, _ in chunk],
                n=cfg.n,
                temperature=cfg.temperature,
                top_p=cfg.top_p,
                top_k=cfg.top_k,
                max_new_tokens=cfg.max_new_tokens,
                seeds=[seed for _, _, seed in chunk],
            )
            for (bench, problem, _), samples in zip(chunk, outputs):
                if len(samples) != cfg.n:
                    raise RuntimeError(f"backend returned {len(samples)} samples for {bench}/{problem.id}, not {cfg.n}")
                extra = [{"num_tokens": s.num_tokens, "truncated": s.truncated} for s in samples]
                store.add(sample_rows(bench, problem, [s.text for s in samples], extra))
                bar.update(1)


def regrade_stale(cfg: EvalConfig, benchmarks: list[Benchmark], store: SampleStore) -> int:
    """Regrade stored samples whose reference answer changed (or all of them with --regrade)."""
    count = 0
    for b in benchmarks:
        for p in b.problems:
            rows = store.get(b.name, p.id)
            if cfg.regrade or any(r["answer"] != p.answer for r in rows):
                extra = [{"num_tokens": r.get("num_tokens"), "truncated": r.get("truncated")} for r in rows]
                store.update(b.name, p.id, sample_rows(b.name, p, [r["completion"] for r in rows], extra))
                count += 1
    if count:
        store.save()
        logger.info("regraded %d problem(s)", count)
    return count


# --- summary -------------------------------------------------------------------------------------


def benchmark_summary(bench: Benchmark, store: SampleStore, ks: list[int], n: int) -> dict[str, Any]:
    correct = {p.id: sum(r["correct"] for r in store.get(bench.name, p.id)) for p in bench.problems}
    rows = [r for p in bench.problems for r in store.get(bench.name, p.id)]
    counts = [(n, c) for c in correct.values()]
    tokens = [r["num_tokens"] for r in rows if r.get("num_tokens") is not None]
    return {
        "source": bench.source,
        "num_problems": len(bench.problems),
        "num_samples": len(rows),
        "pass@k": {str(k): v for k, v in passk_curve(counts, ks).items()},
        "curve": {str(k): v for k, v in passk_curve(counts, range(1, n + 1)).items()},
        "mean_reward": sum(r["reward"] for r in rows) / len(rows),
        "truncated_fraction": sum(bool(r.get("truncated")) for r in rows) / len(rows),
        "mean_new_tokens": sum(tokens) / len(tokens) if tokens else None,
        "correct_counts": correct,
    }


def _git_commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent, capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return out.stdout.strip() or None


def build_summary(cfg: EvalConfig, record: dict[str, Any], benchmarks: list[Benchmark], store: SampleStore,
                  elapsed_s: float, prompt_info: dict[str, Any] | None = None) -> dict[str, Any]:
    import mrtasks

    per_bench = {b.name: benchmark_summary(b, store, cfg.k, cfg.n) for b in benchmarks}
    average = {
        str(k): sum(s["pass@k"][str(k)] for s in per_bench.values()) / len(per_bench)
        for k in cfg.k
        if all(str(k) in s["pass@k"] for s in per_bench.values())
    }
    backend_info = record.get("backend_info") or {"name": record["backend"]}
    prompt_info = prompt_info or {}
    return {
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "config": cfg.to_dict(),
        "model": {
            "name_or_path": cfg.model,
            "revision": cfg.revision,
            "tokenizer": cfg.tokenizer,
            "commit": backend_info.get("model_commit"),
            "weights_sha256": prompt_info.get("weights_sha256"),
        },
        "generation": {
            "backend": backend_info,
            "n": cfg.n,
            "temperature": cfg.temperature,
            "top_p": cfg.top_p,
            "top_k": cfg.top_k,
            "effective_top_k": prompt_info.get("effective_top_k"),
            "stop_token_ids": backend_info.get("stop_token_ids", prompt_info.get("stop_token_ids")),
            "max_new_tokens": cfg.max_new_tokens,
            "seed": cfg.seed,
            "seeds": f"problem p of benchmark b samples with seeds seed + (b * {SEED_STRIDE} + p) * n + [0, n)",
            "problems_per_call": cfg.problems_per_call,
        },
        "prompt": {
            "style": cfg.prompt_style,
            "messages": prompt_messages("{problem}", cfg.prompt_style),
            "chat_template_sha256": backend_info.get("chat_template_sha256", prompt_info.get("chat_template_sha256")),
            "think_prefilled": prompt_info.get("think_prefilled"),
        },
        "grader": grader_info(),
        "code": {"mrtasks": mrtasks.__version__, "git_commit": _git_commit()},
        "max_problems": cfg.max_problems,
        "k": [k for k in cfg.k if k <= cfg.n],
        "benchmarks": per_bench,
        "average": {"pass@k": average, "over": list(per_bench)},
        "elapsed_s": round(elapsed_s, 1),
    }


def write_outputs(cfg: EvalConfig, summary: dict[str, Any]) -> None:
    out = Path(cfg.output_dir)
    (out / SUMMARY).write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n")
    (out / TABLE).write_text(run_report(summary))
    plot_passk_curves({Path(cfg.model).name or cfg.model: summary}, out / PLOT)


# --- entry point ---------------------------------------------------------------------------------


def evaluate(cfg: EvalConfig) -> dict[str, Any]:
    """Run (or resume) one evaluation and write its outputs; return the summary."""
    start = time.monotonic()
    problem = device_problem(cfg.device) if cfg.device else None  # before anything loads (torch's is a traceback)
    if problem:
        raise EvalError(problem, EXIT_USAGE)
    dropped_k = [k for k in cfg.k if k > cfg.n]
    if dropped_k:
        logger.warning("Pass@k needs k <= n = %d: leaving out k = %s", cfg.n, dropped_k)
    # a folder this run created goes again if the run fails before its first sample
    folder = OwnedFolder(cfg.output_dir, EVAL_OWNER, discard_on_error=lambda out: not (out / SAMPLES).exists())
    try:
        folder.check()  # before any work: a folder eval must not write into is refused first
    except OutputError as e:
        raise EvalError(str(e), EXIT_OUTPUT) from None
    if cfg.benchmark_dir and not Path(cfg.benchmark_dir).is_dir():
        raise EvalError(f"benchmark folder {cfg.benchmark_dir} does not exist", EXIT_DATA)
    try:
        benchmarks = load_benchmarks(cfg.benchmarks, cfg.benchmark_dir, cfg.hub_revisions, cfg.max_problems)
    except BenchmarkError as e:
        raise EvalError(_one_line(str(e)), EXIT_DATA) from None
    for bench in benchmarks:
        if len(bench.problems) > SEED_STRIDE:
            raise EvalError(f"{bench.name} has {len(bench.problems)} problems; eval.run takes at most {SEED_STRIDE} "
                            "per benchmark (each owns a seed range): split it or use --max-problems", EXIT_DATA)
    tokenizer = load_tokenizer(cfg)
    if cfg.stop_tokens:
        try:
            stop_token_ids(tokenizer, None, cfg.stop_tokens)
        except ValueError as e:
            raise EvalError(f"--stop-tokens: {e}", EXIT_USAGE) from None
    check_prompt_lengths(cfg, benchmarks, tokenizer)
    think = template_prefills_think(tokenizer)
    configure_grader(timeout=cfg.grader_timeout, think_prefilled=think)
    prompt_info = {
        "chat_template_sha256": chat_template_sha256(tokenizer),
        "think_prefilled": think,
        "weights_sha256": weights_sha256(cfg.model),
    }
    backend_name = resolve_backend(cfg.backend)
    try:
        with folder:  # locked and marked: eval's own folder until the run ends
            if cfg.overwrite:
                folder.remove_own()
            return _evaluate_into(cfg, benchmarks, tokenizer, prompt_info, backend_name, start)
    except OutputError as e:
        raise EvalError(str(e), EXIT_OUTPUT) from None


def _evaluate_into(cfg: EvalConfig, benchmarks: list[Benchmark], tokenizer: Any, prompt_info: dict[str, Any],
                   backend_name: str, start: float) -> dict[str, Any]:
    record = prepare_output_dir(cfg, backend_name)
    store = SampleStore(Path(cfg.output_dir) / SAMPLES, cfg.n)
    todo = sum(not store.done(b.name, p.id) for b in benchmarks for p in b.problems)
    total = sum(len(b.problems) for b in benchmarks)
    logger.info("%d of %d problems to generate (n = %d each)", todo, total, cfg.n)
    if todo:
        problem = backend_problem(backend_name)  # only when generating: a GPU run may be regraded on a CPU
        if problem:
            raise EvalError(problem, EXIT_USAGE)
        try:
            backend = make_backend(
                backend_name, cfg.model, revision=cfg.revision, tokenizer=cfg.tokenizer, dtype=cfg.dtype,
                device=cfg.device, batch_size=cfg.batch_size, seed=cfg.seed, stop_tokens=cfg.stop_tokens,
                tensor_parallel_size=cfg.tensor_parallel_size, gpu_memory_utilization=cfg.gpu_memory_utilization,
                max_model_len=cfg.max_model_len,
            )
        except OSError as e:  # weights missing or unreadable (the tokenizer loaded)
            raise EvalError(f"cannot load the model {cfg.model}: {_one_line(f'{type(e).__name__}: {e}')}", EXIT_MODEL) from None
        _save_backend_info(cfg, record, {**backend.info(), "effective_top_k": backend.effective_top_k(cfg.top_k)})
        try:
            generate_pending(cfg, benchmarks, store, backend)
        except KeyboardInterrupt:
            done = sum(store.done(b.name, p.id) for b in benchmarks for p in b.problems)
            raise Interrupted(f"{done} of {total} problems are saved in {Path(cfg.output_dir) / SAMPLES}") from None
    regrade_stale(cfg, benchmarks, store)
    backend_info = record.get("backend_info") or {}
    prompt_info["effective_top_k"] = backend_info.get("effective_top_k")
    if "stop_token_ids" not in backend_info:
        from transformers import GenerationConfig

        try:
            eos = GenerationConfig.from_pretrained(cfg.model, revision=cfg.revision).eos_token_id
        except Exception:  # noqa: BLE001 - a record only
            eos = None
        prompt_info["stop_token_ids"] = stop_token_ids(tokenizer, eos, cfg.stop_tokens)
    summary = build_summary(cfg, record, benchmarks, store, time.monotonic() - start, prompt_info)
    write_outputs(cfg, summary)
    logger.info("wrote %s, %s, %s, %s to %s", SAMPLES, SUMMARY, TABLE, PLOT, cfg.output_dir)
    return summary


class Interrupted(Exception):
    """Ctrl-C or SIGTERM during generation; the message says what was kept."""


def _one_line(text: str) -> str:
    """The first line of a message (library errors span many lines)."""
    lines = [line.strip() for line in str(text).strip().splitlines() if line.strip()]
    return lines[0] if lines else ""


def _key_value(item: str) -> tuple[str, str]:
    key, sep, value = item.partition("=")
    if not sep or not key or not value:
        raise argparse.ArgumentTypeError(f"expected NAME=VALUE, got {item!r}")
    return key, value


def build_parser() -> argparse.ArgumentParser:
    d = EvalConfig(model="", output_dir="")
    p = argparse.ArgumentParser(
        prog="python -m eval.run",
        description="Pass@k (unbiased estimator) of a model on math benchmarks, graded by the outcome reward.",
        epilog="GPU-sized defaults (n = 64 samples, up to 4096 new tokens, four benchmarks); on a CPU try "
               "--max-problems 2 --n 2 --k 1 2 --max-new-tokens 32. Exit codes: "
               + "; ".join(f"{code} {text}" for code, text in EXIT_CODES.items()),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    g = p.add_argument_group("model")
    g.add_argument("--model", required=True, help="Hub id or local path of the model to evaluate")
    g.add_argument("--revision", help="model revision (branch, tag or commit) on the Hub")
    g.add_argument("--tokenizer", help="tokenizer id or path, when not the model's own")
    g = p.add_argument_group("benchmarks")
    g.add_argument("--benchmarks", nargs="+", default=list(DEFAULT_BENCHMARKS), metavar="NAME[=FILE]",
                   help="benchmarks to run: a Hub copy by name, or NAME=FILE.jsonl (fields id, problem, answer)")
    g.add_argument("--benchmark-dir", help="read NAME.jsonl from this folder instead of the Hub "
                                           "(e.g. ../shared/data/benchmarks)")
    g.add_argument("--hub-revision", dest="hub_revisions", nargs="+", type=_key_value, default=[],
                   metavar="NAME=REV", help="override the pinned Hub revision of a benchmark")
    g.add_argument("--max-problems", type=int, help="evaluate only the first N problems of each benchmark (smoke runs)")
    g = p.add_argument_group("sampling (defaults: the paper's)")
    g.add_argument("--n", type=int, default=d.n, help="samples per problem")
    g.add_argument("--k", nargs="+", type=int, default=d.k, help="Pass@k values to report (each <= n)")
    g.add_argument("--temperature", type=float, default=d.temperature, help="sampling temperature (0: greedy)")
    g.add_argument("--top-p", type=float, default=d.top_p, help="nucleus sampling top-p")
    g.add_argument("--top-k", type=int, default=d.top_k,
                   help="top-k filtering, the same on both backends (0: off; transformers' default 50 never applies)")
    g.add_argument("--stop-tokens", nargs="+", metavar="TOKEN",
                   help="tokens that end a completion (default: the model's eos plus the end-of-turn tokens "
                        "<|im_end|>, <|endoftext|>, <｜end▁of▁sentence｜> that its tokenizer knows)")
    g.add_argument("--max-new-tokens", type=int, default=d.max_new_tokens, help="generation length limit")
    g.add_argument("--seed", type=int, default=d.seed, help="base random seed")
    g.add_argument("--prompt-style", choices=PROMPT_STYLES, default=d.prompt_style,
                   help="paper: the paper's outcome prompt (system + user); chat-template: the problem as "
                        "one user message; both under the model's chat template")
    g = p.add_argument_group("backend")
    g.add_argument("--backend", choices=BACKENDS, default=d.backend,
                   help="auto: vllm when installed and a GPU is present, else transformers")
    g.add_argument("--grader-timeout", type=float, default=d.grader_timeout,
                   help="seconds the grader may spend on one completion (recorded; timeouts count as wrong)")
    g.add_argument("--problems-per-call", type=int, default=d.problems_per_call,
                   help="problems sent to the backend at once; results are saved after each call")
    g.add_argument("--batch-size", type=int, default=d.batch_size,
                   help="transformers: most sequences per generate() call")
    g.add_argument("--dtype", default=d.dtype, choices=DTYPES,
                   help="model dtype (auto: bfloat16 on GPU, float32 on CPU for transformers; the model's for vllm)")
    g.add_argument("--device", help="transformers: torch device, cpu, cuda, cuda:N or mps, checked before anything "
                                    "loads (default: cuda if available, else cpu)")
    g.add_argument("--tensor-parallel-size", type=int, default=d.tensor_parallel_size, help="vllm: GPUs per model")
    g.add_argument("--gpu-memory-utilization", type=float, default=d.gpu_memory_utilization,
                   help="vllm: fraction of GPU memory to use")
    g.add_argument("--max-model-len", type=int,
                   help="context length: vllm's max_model_len; with either backend a benchmark row whose prompt "
                        "does not fit it beside --max-new-tokens is refused before generating (exit 3) "
                        "(default: the model's max_position_embeddings)")
    g = p.add_argument_group("output")
    g.add_argument("--output-dir", default=None,
                   help="where samples.jsonl, summary.json, table.md, passk.png go (default: outputs/eval/<model name>)")
    g.add_argument("--overwrite", action="store_true",
                   help="discard the samples and outputs eval wrote in --output-dir (never other files)")
    g.add_argument("--regrade", action="store_true", help="regrade every stored sample (after a grader change)")
    p.add_argument("--log-level", default="INFO", choices=["DEBUG", "INFO", "WARNING", "ERROR"],
                   help="verbosity of this project's loggers (other libraries stay at WARNING)")
    p.add_argument("-v", "--verbose", action="store_true", help="same as --log-level DEBUG")
    return p


def default_output_dir(model: str) -> str:
    """`outputs/eval/<last path component of the model>` (e.g. outputs/eval/Qwen2.5-3B)."""
    return str(Path("outputs") / "eval" / (Path(model.rstrip("/")).name or "model"))


def setup_logging(level: str) -> None:
    logging.basicConfig(level=logging.WARNING, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for name in PROJECT_LOGGERS:
        logging.getLogger(name).setLevel(level)


def parse_config(argv: list[str] | None = None) -> tuple[EvalConfig, str]:
    """Command line -> (config, log level); invalid values exit with a usage error."""
    parser = build_parser()
    args = vars(parser.parse_args(argv))
    log_level = "DEBUG" if args.pop("verbose") else args.pop("log_level")
    args.pop("log_level", None)
    args["hub_revisions"] = dict(args["hub_revisions"])
    args["output_dir"] = args["output_dir"] or default_output_dir(args["model"])
    try:
        return EvalConfig(**args), log_level
    except ValueError as e:
        parser.error(str(e))


def _terminate(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt  # SIGTERM ends the run like Ctrl-C: finished problems are kept


def main(argv: list[str] | None = None) -> None:
    cfg, log_level = parse_config(argv)
    setup_logging(log_level)
    main_thread = threading.current_thread() is threading.main_thread()
    previous = signal.signal(signal.SIGTERM, _terminate) if main_thread else None
    try:
        summary = evaluate(cfg)
    except EvalError as e:
        print(f"error: {e}", file=sys.stderr)
        raise SystemExit(e.code) from None
    except Interrupted as e:
        print(f"error: interrupted; {e}; rerun the same command to resume", file=sys.stderr)
        raise SystemExit(EXIT_INTERRUPTED) from None
    except KeyboardInterrupt:
        print("error: interrupted; rerun the same command to resume (finished problems are kept)", file=sys.stderr)
        raise SystemExit(EXIT_INTERRUPTED) from None
    finally:
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    print(run_report(summary))


if __name__ == "__main__":
    main()
