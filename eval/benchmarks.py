"""Benchmark loaders: AIME24, AIME25, AMC23 and MATH500 from the Hub or from local JSONL.

Every benchmark becomes a list of `Problem(id, problem, answer)`. Answers are kept as the
source writes them (AIME24's `"025"`, MATH500's LaTeX), except that a JSON number is turned
into text, dropping a `.0` on whole numbers (AMC23's `27.0` -> `"27"`); equivalence is the
grader's job. Local files are JSONL with `id`, `problem` and `answer` on every line.
"""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mrtasks.jsonl import BadLine, iter_jsonl

logger = logging.getLogger(__name__)


class BenchmarkError(ValueError):
    """A benchmark could not be loaded; the message says which one and how to fix it."""


@dataclass(frozen=True)
class Problem:
    id: str
    problem: str
    answer: str
    where: str = field(default="", compare=False, repr=False)  # "FILE:LINE" or "REPO row I", for error messages


@dataclass(frozen=True)
class HubSpec:
    """Where a benchmark lives on the Hugging Face Hub and which columns hold what."""

    repo_id: str
    revision: str
    split: str
    id_field: str | None  # None: the row index is the id
    problem_field: str
    answer_field: str


# Revisions: MATH-500 and aime25 are pinned to commits seen in public evaluation code; the
# other two could not be looked up from this offline machine and follow `main` (the summary
# records the commit actually resolved). Pin with `--hub-revision NAME=SHA`.
HUB_BENCHMARKS: dict[str, HubSpec] = {
    "aime24": HubSpec("HuggingFaceH4/aime_2024", "main", "train", "id", "problem", "answer"),
    "aime25": HubSpec(
        "math-ai/aime25", "563bb8404243c5f09de6ec262f2db674fe5bce9b", "test", "id", "problem", "answer"
    ),
    "amc23": HubSpec("math-ai/amc23", "main", "test", "id", "question", "answer"),
    "math500": HubSpec(
        "HuggingFaceH4/MATH-500",
        "6e4ed1a2a79af7d8630a6b768ec859cb5af4d3be",
        "test",
        "unique_id",
        "problem",
        "answer",
    ),
}
DEFAULT_BENCHMARKS: tuple[str, ...] = ("aime24", "aime25", "amc23", "math500")


@dataclass
class Benchmark:
    """A loaded benchmark and a description of where it came from (for the summary)."""

    name: str
    problems: list[Problem]
    source: dict[str, Any]


def answer_to_text(value: Any) -> str:
    """A source answer as text: strings stripped, whole floats without `.0`, ints as digits."""
    if isinstance(value, bool):
        raise TypeError(f"a boolean is not a benchmark answer: {value!r}")
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return value.strip()
    raise TypeError(f"unsupported answer type {type(value).__name__}: {value!r}")


def _make_problem(row: dict[str, Any], id_field: str | None, problem_field: str, answer_field: str,
                  index: int, where: str) -> Problem:
    missing = [f for f in (id_field, problem_field, answer_field) if f is not None and f not in row]
    if missing:
        raise BenchmarkError(f"{where}: missing field(s) {missing}; the row has {sorted(row)}")
    problem, raw_answer = row[problem_field], row[answer_field]
    if not isinstance(problem, str) or not problem.strip():
        raise BenchmarkError(f"{where}: `{problem_field}` must be a non-empty string")
    try:
        answer = answer_to_text(raw_answer)
    except TypeError as e:
        raise BenchmarkError(f"{where}: {e}") from None
    if not answer:
        raise BenchmarkError(f"{where}: empty answer")
    pid = str(index) if id_field is None else str(row[id_field])
    return Problem(id=pid, problem=problem, answer=answer, where=where)


def _check_unique(name: str, problems: list[Problem]) -> None:
    seen: set[str] = set()
    for p in problems:
        if p.id in seen:
            raise BenchmarkError(f"{name}: duplicate problem id {p.id!r}")
        seen.add(p.id)
    if not problems:
        raise BenchmarkError(f"{name}: no problems")


def load_jsonl_benchmark(name: str, path: str | Path) -> Benchmark:
    """Load a local JSONL file with `id`, `problem`, `answer` on every line."""
    path = Path(path)
    if not path.is_file():
        raise BenchmarkError(f"{name}: no such file {path}")
    data = path.read_bytes()
    problems = []
    for lineno, row in iter_jsonl(path, errors="yield"):
        where = f"{path}:{lineno}"
        if isinstance(row, BadLine):
            raise BenchmarkError(f"{where}: not valid JSON ({row.detail})")
        problems.append(_make_problem(row, "id", "problem", "answer", lineno - 1, where))
    _check_unique(name, problems)
    source = {"type": "jsonl", "path": str(path), "sha256": hashlib.sha256(data).hexdigest()}
    return Benchmark(name, problems, source)


def load_hub_benchmark(name: str, revision: str | None = None) -> Benchmark:
    """Load one of `HUB_BENCHMARKS` from the Hub at its pinned (or the given) revision."""
    if name not in HUB_BENCHMARKS:
        raise BenchmarkError(
            f"unknown benchmark {name!r}: the Hub copies are {sorted(HUB_BENCHMARKS)}; "
            f"give other benchmarks as NAME=FILE.jsonl"
        )
    spec = HUB_BENCHMARKS[name]
    revision = revision or spec.revision
    try:
        import datasets

        ds = datasets.load_dataset(spec.repo_id, revision=revision, split=spec.split)
    except Exception as e:  # offline, unknown revision, renamed repo...: all end the same way
        raise BenchmarkError(
            f"{name}: could not load {spec.repo_id}@{revision} (split {spec.split}) from the Hub: "
            f"{type(e).__name__}: {e}. Offline? Pass local files instead: "
            f"--benchmark-dir DIR (holding {name}.jsonl) or --benchmarks {name}=FILE.jsonl"
        ) from e
    id_field = spec.id_field
    if id_field is not None and id_field not in ds.column_names:
        logger.warning("%s has no %r column; using row numbers as problem ids", spec.repo_id, id_field)
        id_field = None
    problems = [
        _make_problem(row, id_field, spec.problem_field, spec.answer_field, i, f"{spec.repo_id} row {i}")
        for i, row in enumerate(ds)
    ]
    _check_unique(name, problems)
    source = {
        "type": "hub",
        "repo_id": spec.repo_id,
        "revision": revision,
        "resolved_commit": _resolved_commit(spec.repo_id, revision),
        "split": spec.split,
        "fingerprint": getattr(ds, "_fingerprint", None),
    }
    return Benchmark(name, problems, source)


def _resolved_commit(repo_id: str, revision: str) -> str | None:
    try:
        from huggingface_hub import HfApi

        return HfApi().dataset_info(repo_id, revision=revision).sha
    except Exception as e:  # noqa: BLE001 - the data loaded (maybe from cache); the commit is a nice-to-have
        logger.warning("could not resolve the commit of %s@%s: %s", repo_id, revision, e)
        return None


def parse_benchmark_arg(item: str) -> tuple[str, Path | None]:
    """`NAME` or `NAME=FILE.jsonl` -> (name, path or None)."""
    name, sep, path = item.partition("=")
    name = name.strip()
    if not name or (sep and not path):
        raise BenchmarkError(f"bad benchmark {item!r}: expected NAME or NAME=FILE.jsonl")
    return name, Path(path) if sep else None


def load_benchmarks(
    items: list[str],
    benchmark_dir: str | Path | None = None,
    hub_revisions: dict[str, str] | None = None,
    max_problems: int | None = None,
) -> list[Benchmark]:
    """Resolve each `NAME` / `NAME=FILE` item: an explicit file, else DIR/NAME.jsonl, else the Hub."""
    benchmarks, names = [], set()
    for item in items:
        name, path = parse_benchmark_arg(item)
        if name in names:
            raise BenchmarkError(f"benchmark {name!r} given twice")
        names.add(name)
        if path is None and benchmark_dir is not None:
            path = Path(benchmark_dir) / f"{name}.jsonl"
        if path is not None:
            bench = load_jsonl_benchmark(name, path)
        else:
            bench = load_hub_benchmark(name, (hub_revisions or {}).get(name))
        if max_problems is not None:
            bench.problems = bench.problems[:max_problems]
        logger.info("%s: %d problems from %s", name, len(bench.problems), bench.source)
        benchmarks.append(bench)
    return benchmarks
