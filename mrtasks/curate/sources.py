"""Sources: raw rows from the Hub, local JSONL/Parquet or the bundled sample -> bare `Trajectory`s.

A source is named on the command line by a spec string, `NAME[:PATH][:key=value,...]`:

- a preset with a path: `gsm8k:FILE`, `olympiadbench:FILE`, `qwen_cot:FILE`, `proofnet:FILE`,
  `minif2f:FILE` (the public corpora in ../shared/data/corpora; each preset knows its fields and
  cleans its quirks), or `corpora:DIR` for every known file of that folder at once;
- a Hub preset without a path: `deepmath` (zwhe99/DeepMath-103K) or `deeptheorem`
  (Jiahao004/DeepTheorem), read at a pinned revision (`revision=` overrides it);
- `sample`: the small corpus bundled with the package (the default; works offline);
- any `.jsonl`/`.json`/`.parquet` file with a field mapping, e.g.
  `file.jsonl:problem=question,solution=answer,kind=computation`. Mapping keys: `problem`,
  `solution`, `answer`, `id` (field names), `kind` (`proof`/`computation`, or a field name),
  `format` (a preset's cleaner: gsm8k, proofnet, minif2f, think), `name` (the source label).

Options for every source: `limit=N` (read at most N rows), `solutions=N` (trajectories per
problem where a row holds several, e.g. DeepMath's three R1 solutions or Qwen's 8 CoTs; default 1).

A malformed row (missing field, wrong type, empty or oversized text, bad JSON, bytes that are not
valid UTF-8) becomes a `Drop` with a counted reason, never an exception; bytes are never silently
replaced (`bad_encoding`). A file that cannot be read at all (missing, 0-byte or corrupt Parquet,
unreadable) is a `SourceError` with a one-line message.
"""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

from mrtasks.curate.base import Drop
from mrtasks.curate.validate import strip_think
from mrtasks.trajectory import KINDS, Trajectory

logger = logging.getLogger(__name__)

DEEPMATH_REPO = "zwhe99/DeepMath-103K"
DEEPMATH_REVISION = "0406dc9d807ab2bfe11423c84468a234c8be18c1"
DEEPTHEOREM_REPO = "Jiahao004/DeepTheorem"
DEEPTHEOREM_REVISION = "f5935720f176cedff4ecd8ebf83d1696e31cfac8"

MAX_PROBLEM_CHARS = 8_000
MAX_SOLUTION_CHARS = 30_000

# File names in ../shared/data/corpora and the preset that reads each (for `corpora:DIR`).
CORPORA_FILES: dict[str, str] = {
    "gsm8k_train_first2000.jsonl": "gsm8k",
    "olympiadbench_oe_en.jsonl": "olympiadbench",
    "qwen_math_cot_100.jsonl": "qwen_cot",
    "proofnet_test.jsonl": "proofnet",
    "proofnet_valid.jsonl": "proofnet",
    "minif2f_informal.jsonl": "minif2f",
}

Row = dict[str, Any]
Result = Trajectory | Drop


class SourceError(ValueError):
    """A source spec or file that cannot be read at all (as opposed to one bad row)."""


@dataclass
class SourceSpec:
    """One parsed `--source` argument."""

    preset: str
    """A preset name, or `file` for a mapped local file."""
    path: str | None = None
    options: dict[str, str] = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The label stored in every row's `source` column."""
        if "name" in self.options:
            return self.options["name"]
        if self.preset == "file" and self.path:
            return Path(self.path).stem
        return self.preset

    @property
    def limit(self) -> int | None:
        return _int_option(self.options, "limit")

    @property
    def solutions(self) -> int:
        return _int_option(self.options, "solutions") or 1

    @property
    def revision(self) -> str | None:
        """The pinned Hub revision (commit) a Hub preset reads."""
        pinned = {"deepmath": DEEPMATH_REVISION, "deeptheorem": DEEPTHEOREM_REVISION}.get(self.preset)
        return self.options.get("revision", pinned)


def _int_option(options: dict[str, str], key: str) -> int | None:
    if key not in options:
        return None
    try:
        value = int(options[key])
    except ValueError:
        raise SourceError(f"option {key}={options[key]!r} is not an integer") from None
    if value < 1:
        raise SourceError(f"option {key} must be >= 1, got {value}")
    return value


def _parse_options(text: str) -> dict[str, str]:
    options = {}
    for item in text.split(","):
        if not item.strip():
            continue
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise SourceError(f"bad option {item!r}: expected key=value")
        options[key.strip()] = value.strip()
    return options


def _split_options(text: str) -> tuple[str, dict[str, str]]:
    """`PATH:k=v,k2=v2` -> (PATH, {...}); the options are the last ':'-part when it holds '='."""
    head, sep, last = text.rpartition(":")
    if "=" in last:
        return head, _parse_options(last)
    return text, {}


def parse_source(spec: str) -> SourceSpec:
    """Parse `NAME[:PATH][:key=value,...]` (see the module docstring)."""
    spec = spec.strip()
    if not spec:
        raise SourceError("empty source spec")
    head, _, rest = spec.partition(":")
    if head in PRESETS:
        path, options = _split_options(rest)
        if head in HUB_PRESETS or head == "sample":
            if path:
                raise SourceError(f"{head} takes no path (got {path!r}); use a mapped file instead")
            return SourceSpec(head, None, options)
        if not path:
            raise SourceError(f"{head} needs a path: {head}:PATH")
        return SourceSpec(head, path, options)
    path, options = _split_options(spec)
    if Path(path).suffix.lower() not in (".jsonl", ".json", ".parquet"):
        raise SourceError(
            f"unknown source {spec!r}: expected a preset ({', '.join(PRESETS)}) or a .jsonl/.json/.parquet file"
        )
    return SourceSpec("file", path, options)


# --- Text cleaners ---------------------------------------------------------------------------

_CALC = re.compile(r"<<[^<>]*>>")
_GSM8K_ANSWER = re.compile(r"\n?####\s*(.+?)\s*$", re.DOTALL)
_PROOF_ENV = re.compile(r"^\s*\\begin\{proof\}(?:\[[^\]]*\])?\s*(.*?)\s*\\end\{proof\}\s*$", re.DOTALL)
_WIKI_LINK = re.compile(r"\[\[(?:[^\]|]*\|)?([^\]]*)\]\]")
_QED = re.compile(r"\s*(?:Q\.E\.D\.?|\$?\\(?:blacksquare|qed|square|Box)\$?)\s*$")


def clean_gsm8k(solution: str) -> tuple[str, str | None]:
    """Drop `<<48/2=24>>` calculator notes; take the `#### N` answer off the last line."""
    answer = None
    m = _GSM8K_ANSWER.search(solution)
    if m:
        answer = m.group(1).replace(",", "").strip()
        solution = solution[: m.start()]
    return _CALC.sub("", solution).strip(), answer


def strip_proof_env(solution: str) -> str:
    """Remove a `\\begin{proof} ... \\end{proof}` wrapper around the whole text."""
    m = _PROOF_ENV.match(solution)
    return m.group(1) if m else solution.strip()


def clean_minif2f(solution: str) -> str:
    """AoPS-wiki artifacts: `[[Euclidean algorithm]]` links become plain text; a final Q.E.D. goes."""
    return _QED.sub("", _WIKI_LINK.sub(r"\1", solution)).strip()


def strip_reasoning(solution: str) -> str:
    """Keep what follows `</think>` (R1 traces put the clean write-up after their scratch work);
    a trace that is all reasoning is kept whole."""
    return strip_think(solution).strip() or solution.strip()


def unwrap_dollars(answer: str) -> str:
    """`$x^2$` -> `x^2` (OlympiadBench wraps its final answers in math delimiters)."""
    a = answer.strip()
    for left, right in (("$$", "$$"), ("$", "$"), ("\\(", "\\)"), ("\\[", "\\]")):
        if a.startswith(left) and a.endswith(right) and len(a) > len(left) + len(right):
            return a[len(left) : -len(right)].strip()
    return a


CLEANERS: dict[str, Callable[[str], str]] = {
    "gsm8k": lambda s: clean_gsm8k(s)[0],
    "proofnet": strip_proof_env,
    "minif2f": clean_minif2f,
    "think": strip_reasoning,
}


# --- Row normalization -----------------------------------------------------------------------


def _text(row: Row, key: str, rid: str) -> str | Drop:
    """A required, non-empty string field, or the Drop that says what is wrong with it."""
    if key not in row or row[key] is None:
        return Drop(rid, "missing_field", key)
    value = row[key]
    if not isinstance(value, str):
        return Drop(rid, "bad_type", f"{key} is {type(value).__name__}")
    if not value.strip():
        return Drop(rid, "empty_field", key)
    return value


def make_trajectory(
    rid: str, source: str, kind: str, problem: Any, solution: Any, answer: Any = None
) -> Result:
    """Validate field values and build a bare trajectory (no formulas or steps yet)."""
    if kind not in KINDS:
        return Drop(rid, "bad_kind", repr(kind)[:80])
    row = {"problem": problem, "solution": solution}
    for key in ("problem", "solution"):
        value = _text(row, key, rid)
        if isinstance(value, Drop):
            return value
    if len(problem) > MAX_PROBLEM_CHARS:
        return Drop(rid, "too_long", f"problem has {len(problem)} chars")
    if len(solution) > MAX_SOLUTION_CHARS:
        return Drop(rid, "too_long", f"solution has {len(solution)} chars")
    if answer is not None and not isinstance(answer, (str, int, float)):
        return Drop(rid, "bad_type", f"answer is {type(answer).__name__}")
    if isinstance(answer, bool):
        return Drop(rid, "bad_type", "answer is bool")
    answer = None if answer is None else str(answer).strip() or None
    return Trajectory(id=rid, source=source, kind=kind, problem=problem.strip(), solution=solution.strip(), answer=answer)


def _rid(source: str, row: Row, index: int, key: str | None) -> str:
    value = row.get(key) if key else None
    if isinstance(value, (str, int)) and not isinstance(value, bool) and str(value).strip():
        return f"{source}/{str(value).strip()}"
    return f"{source}/{index}"


def _solution_id(rid: str, k: int, n: int) -> str:
    """Ids of several trajectories of one problem share the problem part: `src/12#0`, `src/12#1`."""
    return f"{rid}#{k}" if n > 1 else rid


def problem_origin(trajectory_id: str) -> str:
    """The id of the source problem a trajectory belongs to (strips the `#k` solution suffix)."""
    return trajectory_id.split("#", 1)[0]


def normalize_gsm8k(row: Row, i: int, spec: SourceSpec) -> list[Result]:
    rid = _rid(spec.name, row, i, None)
    raw = _text(row, "answer", rid)
    if isinstance(raw, Drop):
        return [raw]
    solution, answer = clean_gsm8k(raw)
    if answer is None:
        return [Drop(rid, "no_answer", "no #### line")]
    return [make_trajectory(rid, spec.name, "computation", row.get("question"), solution, answer)]


def normalize_olympiadbench(row: Row, i: int, spec: SourceSpec) -> list[Result]:
    rid = _rid(spec.name, row, i, "id")
    problem = row.get("question")
    context = row.get("context")
    if isinstance(problem, str) and isinstance(context, str) and context.strip():
        problem = f"{context.strip()}\n\n{problem}"
    solutions, answers = row.get("solution"), row.get("final_answer")
    if isinstance(solutions, str):
        solutions = [solutions]
    if not isinstance(solutions, list) or not solutions:
        return [Drop(rid, "missing_field", "solution")]
    if isinstance(answers, str):
        answers = [answers]
    if not isinstance(answers, list) or not all(isinstance(a, str) for a in answers):
        return [Drop(rid, "bad_type", "final_answer")]
    answer = ", ".join(unwrap_dollars(a) for a in answers) or None
    n = min(spec.solutions, len(solutions))
    return [
        make_trajectory(_solution_id(rid, k, n), spec.name, "computation", problem, solutions[k], answer)
        for k in range(n)
    ]


def normalize_qwen_cot(row: Row, i: int, spec: SourceSpec) -> list[Result]:
    """Model CoTs: keep only responses the file scores correct (`score[k] is True`)."""
    rid = _rid(spec.name, row, i, "idx")
    responses, scores = row.get("response"), row.get("score")
    if not isinstance(responses, list) or not responses:
        return [Drop(rid, "missing_field", "response")]
    if not isinstance(scores, list) or len(scores) != len(responses):
        scores = [True] * len(responses)
    correct = [r for r, ok in zip(responses, scores) if ok is True and isinstance(r, str)]
    if not correct:
        return [Drop(rid, "no_correct_response")]
    answer = row.get("gt", row.get("answer"))
    n = min(spec.solutions, len(correct))
    return [
        make_trajectory(_solution_id(rid, k, n), spec.name, "computation", row.get("question"), correct[k], answer)
        for k in range(n)
    ]


def normalize_proofnet(row: Row, i: int, spec: SourceSpec) -> list[Result]:
    rid = _rid(spec.name, row, i, "id")
    proof = _text(row, "nl_proof", rid)
    if isinstance(proof, Drop):
        return [proof]
    return [make_trajectory(rid, spec.name, "proof", row.get("nl_statement"), strip_proof_env(proof))]


def normalize_minif2f(row: Row, i: int, spec: SourceSpec) -> list[Result]:
    rid = _rid(spec.name, row, i, "problem_name")
    proof = _text(row, "informal_proof", rid)
    if isinstance(proof, Drop):
        return [proof]
    problem = row.get("informal_statement")
    if isinstance(problem, str):
        problem = _WIKI_LINK.sub(r"\1", problem)
    return [make_trajectory(rid, spec.name, "proof", problem, clean_minif2f(proof))]


def normalize_deepmath(row: Row, i: int, spec: SourceSpec) -> list[Result]:
    """DeepMath-103K: question, final_answer, r1_solution_1..3 (R1 traces; the part after
    `</think>` is kept, the paper's o3-mini refine pass is `--refine` with the llm annotator)."""
    rid = _rid(spec.name, row, i, None)
    solutions = [row.get(f"r1_solution_{k}") for k in (1, 2, 3)]
    solutions = [strip_reasoning(s) for s in solutions if isinstance(s, str) and s.strip()]
    if not solutions:
        return [Drop(rid, "missing_field", "r1_solution_1")]
    n = min(spec.solutions, len(solutions))
    return [
        make_trajectory(
            _solution_id(rid, k, n), spec.name, "computation", row.get("question"), solutions[k], row.get("final_answer")
        )
        for k in range(n)
    ]


def normalize_deeptheorem(row: Row, i: int, spec: SourceSpec) -> list[Result]:
    """DeepTheorem: informal_theorem + proof (o3-mini proofs); ids from the `id` column."""
    rid = _rid(spec.name, row, i, "id")
    proof = _text(row, "proof", rid)
    if isinstance(proof, Drop):
        return [proof]
    return [make_trajectory(rid, spec.name, "proof", row.get("informal_theorem"), strip_reasoning(proof))]


def normalize_sample(row: Row, i: int, spec: SourceSpec) -> list[Result]:
    """The bundled sample rows are already normalized records."""
    rid = _rid(spec.name, row, i, "id") if not isinstance(row.get("id"), str) else str(row["id"])
    return [
        make_trajectory(
            rid, str(row.get("source", spec.name)), row.get("kind"), row.get("problem"), row.get("solution"), row.get("answer")
        )
    ]


def normalize_mapped(row: Row, i: int, spec: SourceSpec) -> list[Result]:
    """A local file read through the spec's field mapping (see the module docstring)."""
    opts = spec.options
    rid = _rid(spec.name, row, i, opts.get("id"))
    kind = opts.get("kind", "computation")
    if kind not in KINDS:
        kind = row.get(kind)
    problem = row.get(opts.get("problem", "problem"))
    solution = row.get(opts.get("solution", "solution"))
    solution_field = opts.get("solution", "solution")
    answer_field = opts.get("answer", "answer" if solution_field != "answer" else None)
    answer = row.get(answer_field) if answer_field else None
    fmt = opts.get("format")
    if isinstance(solution, str) and fmt:
        if fmt == "gsm8k":
            solution, gsm_answer = clean_gsm8k(solution)
            answer = answer if "answer" in opts else gsm_answer
        else:
            solution = CLEANERS[fmt](solution)
    for key, value in (("problem", problem), ("solution", solution)):
        if value is None:
            return [Drop(rid, "missing_field", opts.get(key, key))]
    return [make_trajectory(rid, spec.name, kind, problem, solution, answer)]


Normalizer = Callable[[Row, int, SourceSpec], list[Result]]
PRESETS: dict[str, Normalizer] = {
    "gsm8k": normalize_gsm8k,
    "olympiadbench": normalize_olympiadbench,
    "qwen_cot": normalize_qwen_cot,
    "proofnet": normalize_proofnet,
    "minif2f": normalize_minif2f,
    "deepmath": normalize_deepmath,
    "deeptheorem": normalize_deeptheorem,
    "sample": normalize_sample,
    "corpora": normalize_sample,  # expanded into the presets above by `expand_specs`
}
HUB_PRESETS = {"deepmath": DEEPMATH_REPO, "deeptheorem": DEEPTHEOREM_REPO}


# --- Readers ---------------------------------------------------------------------------------


def read_jsonl(path: Path) -> Iterator[Row | Drop]:
    """Rows of a JSON-lines file; an unparsable, non-object or non-UTF-8 line becomes a Drop."""
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                yield Drop(f"{path.name}:{lineno}", "bad_encoding", f"invalid UTF-8 at byte {e.start}")
                continue
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                yield Drop(f"{path.name}:{lineno}", "bad_json", str(e)[:80])
                continue
            if not isinstance(row, dict):
                yield Drop(f"{path.name}:{lineno}", "bad_json", f"line is a {type(row).__name__}")
                continue
            yield row


def read_json_array(path: Path) -> Iterator[Row | Drop]:
    """Rows of a JSON array file (or JSON lines named .json). Invalid UTF-8 bytes are kept as lone
    surrogates here, so the rows holding them are dropped as `bad_encoding` by `iter_source`."""
    try:
        data = json.loads(path.read_bytes().decode("utf-8", errors="surrogateescape"))
    except json.JSONDecodeError:
        yield from read_jsonl(path)  # `.json` files are often JSON lines in disguise
        return
    if not isinstance(data, list):
        raise SourceError(f"{path}: expected a JSON array of objects")
    for k, row in enumerate(data):
        yield row if isinstance(row, dict) else Drop(f"{path.name}:{k}", "bad_json", "not an object")


def read_parquet(path: Path) -> Iterator[Row | Drop]:
    """Rows of a Parquet file; a row with invalid UTF-8 in a string column becomes a `bad_encoding` Drop."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        file = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as e:
        raise SourceError(f"{path} is not a readable Parquet file: {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None
    offset = 0
    try:
        for batch in file.iter_batches(batch_size=1024):
            try:
                yield from batch.to_pylist()
            except UnicodeDecodeError:  # find the rows that hold the bad bytes
                for i in range(batch.num_rows):
                    try:
                        yield batch.slice(i, 1).to_pylist()[0]
                    except UnicodeDecodeError as e:
                        yield Drop(f"{path.name}:{offset + i}", "bad_encoding", f"invalid UTF-8 at byte {e.start}")
            offset += batch.num_rows
    except (pa.ArrowException, OSError) as e:
        raise SourceError(f"{path} is a corrupt Parquet file (after {offset} rows): {str(e).splitlines()[0] if str(e) else type(e).__name__}") from None


def read_file(path: Path) -> Iterator[Row | Drop]:
    if not path.is_file():
        raise SourceError(f"source file not found: {path}")
    if not os.access(path, os.R_OK):
        raise SourceError(f"source file not readable: {path}")
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return read_parquet(path)
    if suffix == ".json":
        return read_json_array(path)
    return read_jsonl(path)


def read_hub(spec: SourceSpec) -> Iterator[Row]:
    """Rows of a Hub dataset at the spec's pinned revision (streamed when `limit` is set)."""
    from datasets import load_dataset

    repo = HUB_PRESETS[spec.preset]
    logger.info("loading %s at revision %s from the Hub", repo, spec.revision)
    try:
        ds = load_dataset(repo, split="train", revision=spec.revision, streaming=spec.limit is not None)
    except Exception as e:  # noqa: BLE001 - offline, unknown revision, auth: one line, not a traceback
        first = str(e).strip().splitlines()[0][:200] if str(e).strip() else ""
        raise SourceError(f"cannot load {repo} at {spec.revision} from the Hub: {type(e).__name__}: {first}") from None
    yield from ds


def sample_path() -> Path:
    """The bundled sample corpus (`mrtasks/data/sample.jsonl`)."""
    return Path(str(resources.files("mrtasks") / "data" / "sample.jsonl"))


def expand_specs(specs: list[SourceSpec]) -> list[SourceSpec]:
    """Replace `corpora:DIR` with one spec per known corpus file found in DIR."""
    out = []
    for spec in specs:
        if spec.preset != "corpora":
            out.append(spec)
            continue
        folder = Path(spec.path or ".")
        if not folder.is_dir():
            raise SourceError(f"corpora folder not found: {folder}")
        found = [(name, preset) for name, preset in CORPORA_FILES.items() if (folder / name).is_file()]
        if not found:
            raise SourceError(f"no known corpus file in {folder} (expected {', '.join(CORPORA_FILES)})")
        for name, preset in found:
            options = {k: v for k, v in spec.options.items() if k != "name"}
            options.setdefault("name", Path(name).stem)
            out.append(SourceSpec(preset, str(folder / name), options))
    return out


def iter_source(spec: SourceSpec) -> Iterator[Result]:
    """Every row of one source as a bare Trajectory or a Drop, at most `limit` rows read."""
    if spec.preset in HUB_PRESETS:
        rows: Iterator[Row | Drop] = read_hub(spec)
    elif spec.preset == "sample":
        rows = read_jsonl(sample_path())
    else:
        rows = read_file(Path(spec.path or ""))
    fmt = spec.options.get("format")
    if spec.preset == "file" and fmt and fmt not in CLEANERS:
        raise SourceError(f"unknown format {fmt!r}; one of {', '.join(CLEANERS)}")
    normalize = PRESETS.get(spec.preset, normalize_mapped) if spec.preset != "file" else normalize_mapped
    limit = spec.limit
    for i, row in enumerate(rows):
        if limit is not None and i >= limit:
            break
        if isinstance(row, Drop):
            yield row
            continue
        try:
            results = normalize(row, i, spec)
        except (TypeError, ValueError, AttributeError, KeyError) as e:  # a row shaped like nothing we know
            yield Drop(f"{spec.name}/{i}", "malformed_row", f"{type(e).__name__}: {e}"[:120])
            continue
        for r in results:
            yield _check_encoding(r)


def _check_encoding(result: Result) -> Result:
    """A trajectory whose text holds lone surrogates (invalid UTF-8 bytes, or `\\udcff` escapes in
    JSON) cannot be written without changing bytes: it becomes a `bad_encoding` Drop."""
    if isinstance(result, Drop):
        return result
    for key in ("problem", "solution", "answer"):
        value = getattr(result, key)
        if value is None:
            continue
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as e:
            return Drop(result.id, "bad_encoding", f"{key} holds an unpaired surrogate at {e.start}")
    return result
