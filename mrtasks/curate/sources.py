"""Sources: `--source` specs and the readers of raw rows (Hub, local JSONL/JSON/Parquet, the bundled
sample); each row goes to its preset (`mrtasks.curate.presets`) to become a bare `Trajectory`.

A source is named on the command line by a spec string, `NAME[:PATH][:key=value,...]`:

- a preset with a path: `gsm8k:FILE`, `olympiadbench:FILE`, `qwen_cot:FILE`, `proofnet:FILE`,
  `minif2f:FILE` (the public corpora in ../shared/data/corpora; each preset knows its fields and
  cleans its quirks), or `corpora:DIR` for every known file of that folder at once;
- a Hub preset without a path: `deepmath` (zwhe99/DeepMath-103K) or `deeptheorem`
  (Jiahao004/DeepTheorem), read at a pinned revision (`revision=` overrides it);
- `sample`: the small corpus bundled with the package (the default; works offline);
- `synthetic[:arith][:size=N,difficulty=D,seed=S]`: generated arithmetic worked solutions
  (`mrtasks.curate.synthetic`, for the CPU learning testbed);
- any `.jsonl`/`.json`/`.parquet` file with a field mapping, e.g.
  `file.jsonl:problem=question,solution=answer,kind=computation`. Mapping keys: `problem`,
  `solution`, `answer`, `id` (field names), `kind` (`proof`/`computation`, or a field name),
  `format` (a preset's cleaner: gsm8k, proofnet, minif2f, think), `name` (the source label).

Options for every source: `limit=N` (read at most N rows), `solutions=N` (trajectories per
problem where a row holds several, e.g. DeepMath's three R1 solutions or Qwen's 8 CoTs; default 1),
`name=LABEL` (the `source` column; no `|` or control characters), `license=ID` (the source's
license for the card, e.g. `cc-by-4.0`; presets know theirs). Hub presets also take `revision=`;
mapped files the mapping keys above. Any other option (a typo such as `limt=5`) is an error
naming the nearest known one, never silently ignored.

A malformed row (missing field, wrong type, empty or oversized text, bad JSON, bytes that are not
valid UTF-8) becomes a `Drop` with a counted reason, never an exception; bytes are never silently
replaced (`bad_encoding`). A file that cannot be read at all (missing, 0-byte or corrupt Parquet,
unreadable) is a `SourceError` with a one-line message.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

from mrtasks.curate.base import Drop, SourceError  # noqa: F401  (SourceError is part of this module's API)

# The presets moved to mrtasks.curate.presets; these names stay importable from here.
from mrtasks.curate.presets import (  # noqa: F401
    CLEANERS,
    CORPORA_FILES,
    DEEPMATH_REPO,
    DEEPMATH_REVISION,
    DEEPTHEOREM_REPO,
    DEEPTHEOREM_REVISION,
    HUB_PRESETS,
    MAX_PROBLEM_CHARS,
    MAX_SOLUTION_CHARS,
    PRESET_REGISTRY,
    PRESETS,
    Normalizer,
    Preset,
    Result,
    Row,
    clean_gsm8k,
    clean_minif2f,
    get_preset,
    list_presets,
    make_trajectory,
    normalize_deepmath,
    normalize_deeptheorem,
    normalize_gsm8k,
    normalize_mapped,
    normalize_minif2f,
    normalize_olympiadbench,
    normalize_proofnet,
    normalize_qwen_cot,
    normalize_sample,
    problem_origin,
    register_preset,
    strip_proof_env,
    strip_reasoning,
    unwrap_dollars,
)
from mrtasks.jsonl import BadLine, iter_jsonl

logger = logging.getLogger(__name__)


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
    def license(self) -> str | None:
        """The source's license: `license=` in the spec, else the preset's own; None when unknown."""
        if "license" in self.options:
            return self.options["license"]
        preset = get_preset(self.preset)
        return preset.license if preset else None

    @property
    def revision(self) -> str | None:
        """The pinned Hub revision (commit) a Hub preset reads."""
        preset = get_preset(self.preset)
        return self.options.get("revision", preset.revision if preset else None)


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


COMMON_OPTIONS = ("limit", "solutions", "name", "license")
GENERATED_OPTIONS = ("size", "difficulty", "seed", "families")
HUB_OPTIONS = ("revision",)
MAPPING_OPTIONS = ("problem", "solution", "answer", "id", "kind", "format")


def allowed_options(preset: str) -> tuple[str, ...]:
    """The `key=value` options a source of this preset (or `file`) takes."""
    p = get_preset(preset)
    if preset == "file":
        return COMMON_OPTIONS + MAPPING_OPTIONS
    if p is not None and p.kind == "hub":
        return COMMON_OPTIONS + HUB_OPTIONS
    if p is not None and p.kind == "generated":
        return COMMON_OPTIONS + GENERATED_OPTIONS
    return COMMON_OPTIONS


def check_options(spec: SourceSpec, text: str) -> SourceSpec:
    """Refuse an option the source does not take (a typo would be ignored and recorded in the card
    as given) and a `name=` that would break the card's tables."""
    import difflib

    allowed = allowed_options(spec.preset)
    for key in spec.options:
        if key not in allowed:
            near = difflib.get_close_matches(key, allowed, n=1)
            hint = f" (did you mean {near[0]}?)" if near else ""
            raise SourceError(f"--source {text!r}: unknown option {key!r}{hint}; {spec.preset} sources take "
                              f"{', '.join(allowed)}")
    name = spec.options.get("name")
    if name is not None and (not name or "|" in name or any(ord(c) < 32 or ord(c) == 127 for c in name)):
        raise SourceError(f"--source: name={name!r} must be non-empty, without '|' or control characters "
                          "(it labels rows and the card's tables)")
    return spec


def parse_source(spec: str) -> SourceSpec:
    """Parse `NAME[:PATH][:key=value,...]` (see the module docstring)."""
    text = spec
    spec = spec.strip()
    if not spec:
        raise SourceError("empty source spec")
    head, _, rest = spec.partition(":")
    preset = get_preset(head)
    if preset is not None:
        path, options = _split_options(rest)
        if preset.kind in ("hub", "bundled"):
            if path:
                raise SourceError(f"{head} takes no path (got {path!r}); use a mapped file instead")
            return check_options(SourceSpec(head, None, options), text)
        if preset.kind == "generated":  # the optional path names the generator (`synthetic:arith`)
            return check_options(SourceSpec(head, path or None, options), text)
        if not path:
            raise SourceError(f"{head} needs a path: {head}:PATH")
        return check_options(SourceSpec(head, path, options), text)
    path, options = _split_options(spec)
    if Path(path).suffix.lower() not in (".jsonl", ".json", ".parquet"):
        raise SourceError(
            f"unknown source {spec!r}: expected a preset ({', '.join(PRESETS)}) or a .jsonl/.json/.parquet file"
        )
    return check_options(SourceSpec("file", path, options), text)


# --- Readers ---------------------------------------------------------------------------------


def read_jsonl(path: Path) -> Iterator[Row | Drop]:
    """Rows of a JSON-lines file; an unparsable, non-object or non-UTF-8 line becomes a Drop."""
    for lineno, item in iter_jsonl(path, errors="yield"):
        yield Drop(f"{path.name}:{lineno}", item.reason, item.detail) if isinstance(item, BadLine) else item


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

    def first_line(e: BaseException) -> str:
        return str(e).splitlines()[0] if str(e) else type(e).__name__

    try:
        file = pq.ParquetFile(path)
    except (pa.ArrowException, OSError) as e:
        raise SourceError(f"{path} is not a readable Parquet file: {first_line(e)}") from None
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
        raise SourceError(f"{path} is a corrupt Parquet file (after {offset} rows): {first_line(e)}") from None


def read_file(path: Path) -> Iterator[Row | Drop]:
    if not path.is_file():
        raise SourceError(f"source file not found: {path}")
    if not os.access(path, os.R_OK):
        raise SourceError(f"source file not readable: {path}")
    suffix = path.suffix.lower()
    if suffix == ".parquet":
        return read_parquet(path)
    if path.stat().st_size == 0:  # (a 0-byte Parquet file is reported by its reader)
        raise SourceError(f"source file is empty (0 bytes): {path}")
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
    generated = get_preset(spec.preset)
    if spec.preset in HUB_PRESETS:
        rows: Iterator[Row | Drop] = read_hub(spec)
    elif generated is not None and generated.read is not None:
        rows = generated.read(spec)
    elif spec.preset == "sample":
        rows = read_jsonl(sample_path())
    else:
        rows = read_file(Path(spec.path or ""))
    fmt = spec.options.get("format")
    if spec.preset == "file" and fmt and fmt not in CLEANERS:
        raise SourceError(f"unknown format {fmt!r}; one of {', '.join(CLEANERS)}")
    preset = get_preset(spec.preset) if spec.preset != "file" else None
    normalize = preset.normalize if preset is not None else normalize_mapped
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
