"""Problem-level filters: near-duplicate removal and benchmark decontamination.

Both compare problems as sets of hashed word 3-grams ("shingles") of a normalized text
(lowercased, LaTeX delimiters and sizing commands removed, operators kept as tokens):

- near duplicates inside the corpus: MinHash + LSH finds candidate pairs in ~linear time, and a
  pair counts when the exact Jaccard similarity of the shingle sets reaches the threshold and the
  final answers agree (the answer is part of the key: sibling sub-problems that differ in one
  number and in their answer are different tasks); the first problem seen is kept.
- contamination: a problem is excluded when it shares at least `threshold` of a benchmark
  problem's shingles, or the benchmark shares that much of its own (containment both ways), so a
  restated problem with an extra sentence ("... Show that it is 8.") is still caught.

The default benchmark index is `mrtasks/data/benchmark_fingerprints.jsonl`: shingle hashes (no
text) of AIME24, AIME25, AMC23 and MATH500, the evaluation sets the paper reports. Regenerate
it, or index other files, with `python -m mrtasks.curate.filters --help`.
"""

from __future__ import annotations

import argparse
import base64
import functools
import hashlib
import json
import logging
import re
import sys
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from mrtasks.jsonl import iter_jsonl

logger = logging.getLogger(__name__)

SHINGLE = 3
_LATEX_NOISE = re.compile(r"\\(?:left|right|displaystyle|textstyle|bigl?|bigr?|Bigl?|Bigr?|,|;|!|quad|qquad)(?![a-z])")
_DELIMS = re.compile(r"\$|\\\(|\\\)|\\\[|\\\]")
_TOKEN = re.compile(r"[a-z]+|\d+(?:\.\d+)?|[=+\-*/^<>!|]")


def normalize_problem(text: str) -> str:
    """Lowercased tokens joined by spaces: words, numbers and operators; LaTeX noise removed."""
    text = _DELIMS.sub(" ", _LATEX_NOISE.sub(" ", text)).replace("\\dfrac", "\\frac").replace("\\tfrac", "\\frac")
    return " ".join(_TOKEN.findall(text.lower()))


def problem_key(text: str) -> str:
    """A stable hash of the normalized problem: equal for texts that differ only in noise."""
    return hashlib.blake2b(normalize_problem(text).encode(), digest_size=12).hexdigest()


@functools.lru_cache(maxsize=16)
def shingles(text: str) -> np.ndarray:
    """Sorted unique uint32 hashes of the normalized text's word 3-grams (the whole text if shorter).

    Cached (read-only array): decontamination and deduplication hash the same problem in turn."""
    tokens = normalize_problem(text).split()
    grams = [" ".join(tokens[i : i + SHINGLE]) for i in range(max(1, len(tokens) - SHINGLE + 1))]
    hashes = [int.from_bytes(hashlib.blake2b(g.encode(), digest_size=4).digest(), "little") for g in grams if g]
    out = np.unique(np.array(hashes, dtype=np.uint32))
    out.flags.writeable = False
    return out


def jaccard(a: np.ndarray, b: np.ndarray) -> float:
    if a.size == 0 or b.size == 0:
        return 0.0
    inter = np.intersect1d(a, b, assume_unique=True).size
    return inter / (a.size + b.size - inter)


class NearDuplicateIndex:
    """Finds, for each added problem, an earlier one with Jaccard similarity >= threshold.

    MinHash signatures (num_perm hash functions) split into bands; problems sharing a band are
    candidates, verified with the exact Jaccard similarity. Deterministic: fixed hash seeds.
    """

    _PRIME = np.uint64((1 << 61) - 1)

    def __init__(self, threshold: float = 0.8, num_perm: int = 64, bands: int = 16):
        if not 0.0 < threshold <= 1.0:
            raise ValueError("threshold must be in (0, 1]")
        if num_perm % bands:
            raise ValueError("num_perm must be a multiple of bands")
        self.threshold, self.bands, self.rows = threshold, bands, num_perm // bands
        rng = np.random.default_rng(20251117)
        self._a = rng.integers(1, 1 << 31, size=num_perm, dtype=np.uint64)
        self._b = rng.integers(0, 1 << 31, size=num_perm, dtype=np.uint64)
        self._buckets: list[dict[bytes, list[int]]] = [defaultdict(list) for _ in range(bands)]
        self._sets: list[np.ndarray] = []
        self._ids: list[str] = []
        self._answers: list[str] = []
        self._exact: dict[tuple[bytes, str], int] = {}

    def signature(self, sh: np.ndarray) -> np.ndarray:
        x = sh.astype(np.uint64)[:, None]
        return ((x * self._a + self._b) % self._PRIME).min(axis=0)

    def add(self, item_id: str, text: str, answer: str | None = None) -> str | None:
        """Index text; return the id of an earlier near duplicate with the same answer (then text
        is not indexed). Answers compare after whitespace removal; None matches None only."""
        sh = shingles(text)
        ans = "".join((answer or "").split())
        exact = (sh.tobytes(), ans)
        if exact in self._exact:
            return self._ids[self._exact[exact]]
        if sh.size == 0:
            return None
        sig = self.signature(sh)
        keys = [sig[i * self.rows : (i + 1) * self.rows].tobytes() for i in range(self.bands)]
        seen: set[int] = set()
        for band, key in zip(self._buckets, keys):
            for j in band.get(key, ()):
                if j not in seen:
                    seen.add(j)
                    if self._answers[j] == ans and jaccard(sh, self._sets[j]) >= self.threshold:
                        return self._ids[j]
        k = len(self._ids)
        self._ids.append(item_id)
        self._answers.append(ans)
        self._sets.append(sh)
        self._exact[exact] = k
        for band, key in zip(self._buckets, keys):
            band[key].append(k)
        return None


@dataclass(frozen=True)
class BenchmarkProblem:
    benchmark: str
    id: str
    shingles: np.ndarray


class BenchmarkIndex:
    """Benchmark problems indexed by shingle, for containment-based decontamination."""

    def __init__(self, problems: Iterable[BenchmarkProblem], threshold: float = 0.5):
        if not 0.0 < threshold <= 1.0:
            raise ValueError("threshold must be in (0, 1]")
        self.threshold = threshold
        self.problems = list(problems)
        self._postings: dict[int, list[int]] = defaultdict(list)
        for k, p in enumerate(self.problems):
            for h in p.shingles.tolist():
                self._postings[h].append(k)

    @property
    def benchmarks(self) -> list[str]:
        return sorted({p.benchmark for p in self.problems})

    def match(self, text: str) -> BenchmarkProblem | None:
        """The benchmark problem text overlaps with (containment >= threshold either way), if any."""
        sh = shingles(text).tolist()
        if not sh:
            return None
        hits: dict[int, int] = defaultdict(int)
        for h in sh:
            for k in self._postings.get(h, ()):
                hits[k] += 1
        best, best_score = None, 0.0
        for k, n in hits.items():
            score = max(n / self.problems[k].shingles.size, n / len(sh))
            if score > best_score:
                best, best_score = self.problems[k], score
        return best if best_score >= self.threshold else None

    @classmethod
    def from_jsonl(cls, paths: Iterable[Path], threshold: float = 0.5) -> BenchmarkIndex:
        """Index benchmark JSONL files with a `problem` field (the file stem names the benchmark)."""
        problems = [BenchmarkProblem(Path(path).stem, key, shingles(text)) for path in paths
                    for key, text in benchmark_problems(path)]
        return cls(problems, threshold)

    @classmethod
    def from_fingerprints(cls, path: Path | None = None, threshold: float = 0.5) -> BenchmarkIndex:
        """Load a fingerprint file written by `write_fingerprints` (default: the bundled one)."""
        path = Path(path) if path else default_fingerprints()
        problems = []
        for _, row in iter_jsonl(path):
            sh = np.frombuffer(base64.b64decode(row["shingles"]), dtype="<u4").astype(np.uint32)
            problems.append(BenchmarkProblem(row["benchmark"], row["id"], sh))
        return cls(problems, threshold)

    @classmethod
    def load(cls, paths: list[Path] | None, threshold: float = 0.5) -> BenchmarkIndex:
        """Fingerprint files (`*.fingerprints.jsonl` or the bundled default) or benchmark JSONL files."""
        if not paths:
            return cls.from_fingerprints(None, threshold)
        fingerprints = [p for p in paths if Path(p).name.endswith("fingerprints.jsonl")]
        index = cls.from_jsonl([p for p in paths if p not in fingerprints], threshold)
        for p in fingerprints:
            index = cls(index.problems + cls.from_fingerprints(p).problems, threshold)
        return index


def benchmark_problems(path: str | Path) -> list[tuple[str, str]]:
    """(id, problem text) of a benchmark JSONL file (a `problem`, `question` or `prompt` field).
    A missing file is FileNotFoundError; a malformed line, or a file with no problem text (a
    wrong field name, an empty file: decontaminating against it would exclude nothing), ValueError."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"benchmark file not found: {path}")
    out = []
    for lineno, row in iter_jsonl(path):
        text = row.get("problem") or row.get("question") or row.get("prompt")
        if isinstance(text, str) and text.strip():
            out.append((str(row.get("id", lineno - 1)), text))
    if not out:
        raise ValueError(f"benchmark file {path} has no row with a problem text (a `problem`, `question` or `prompt` "
                         "field); decontaminating against it would exclude nothing")
    return out


def default_fingerprints() -> Path:
    return Path(str(resources.files("mrtasks") / "data" / "benchmark_fingerprints.jsonl"))


def write_fingerprints(paths: list[Path], out: Path) -> int:
    """Write the shingle hashes of benchmark problems (no text) as JSON lines; returns the count.
    Every file is read before anything is written, and the file is written whole or not at all."""
    from mrtasks.output import write_output_file

    index = BenchmarkIndex.from_jsonl(paths)
    lines = []
    for p in index.problems:
        packed = base64.b64encode(p.shingles.astype("<u4").tobytes()).decode()
        lines.append(json.dumps({"benchmark": p.benchmark, "id": p.id, "shingles": packed}) + "\n")
    write_output_file("--out", out, "".join(lines))
    return len(index.problems)


def _is_fingerprints(path: Path) -> bool:
    """A fingerprint file (or an empty one): what `write_fingerprints` writes."""
    try:
        return all({"benchmark", "id", "shingles"} <= set(row) for _, row in iter_jsonl(path))
    except (OSError, ValueError):
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m mrtasks.curate.filters",
        description="Write a benchmark fingerprint file (shingle hashes, no text) for decontamination.",
        epilog="exit codes: 0 written; 2 a benchmark file missing, malformed or without a problem text; 4 --out "
               "refused (a folder, not writable, inside a dataset build, a file that is not a fingerprint file)",
    )
    parser.add_argument("benchmarks", nargs="+", type=Path, help="benchmark JSONL files with a `problem` field")
    parser.add_argument("--out", type=Path, default=default_fingerprints(), help="output JSONL (default: the bundled file)")
    args = parser.parse_args(argv)
    from mrtasks.logs import run_command
    from mrtasks.output import OutputError, check_output_file

    def write() -> int:
        check_output_file("--out", args.out, "mrtasks.curate.filters", _is_fingerprints)
        n = write_fingerprints(args.benchmarks, args.out)  # reads every file before it writes
        print(f"wrote {n} benchmark fingerprints to {args.out}")
        return 0

    return run_command(write, {ValueError: 2, FileNotFoundError: 2, IsADirectoryError: 2, OutputError: 4, OSError: 4})


if __name__ == "__main__":
    sys.exit(main())
