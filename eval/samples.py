"""The per-sample JSONL file, written so an interrupted run loses at most one batch.

Each problem's `n` rows are appended together and flushed as soon as they are graded. On
reopening, rows are grouped by `(benchmark, id)`; a problem counts as finished only when
all `n` sample indices are present. Anything else (a half-written last line after a kill,
a problem with missing samples) is dropped by rewriting the file once, atomically.
"""

from __future__ import annotations

import json
import logging
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

from mrtasks.jsonl import BadLine, iter_jsonl

logger = logging.getLogger(__name__)

Key = tuple[str, str]  # (benchmark, problem id)


class SampleStore:
    def __init__(self, path: str | Path, n: int):
        self.path = Path(path)
        self.n = n
        self.rows: dict[Key, list[dict[str, Any]]] = {}
        self.dropped = 0
        if self.path.exists():
            self._load()

    def _load(self) -> None:
        grouped: dict[Key, dict[int, dict[str, Any]]] = defaultdict(dict)
        bad = repeated = 0
        conflicts: set[Key] = set()
        for _, row in iter_jsonl(self.path, errors="yield"):
            if isinstance(row, BadLine):  # e.g. the cut-off last line of a killed run
                bad += 1
                continue
            try:
                key, index = (row["benchmark"], row["id"]), int(row["sample"])
            except (KeyError, TypeError, ValueError):
                bad += 1
                continue
            seen = grouped[key].get(index)
            if seen is not None:
                if seen == row:
                    repeated += 1
                else:
                    conflicts.add(key)
                continue
            grouped[key][index] = row
        incomplete = 0
        for key, by_index in grouped.items():
            if key not in conflicts and set(by_index) == set(range(self.n)):
                self.rows[key] = [by_index[i] for i in range(self.n)]
            elif key not in conflicts:
                incomplete += 1
        self.dropped = bad + repeated + sum(len(v) for k, v in grouped.items() if k not in self.rows)
        if conflicts:
            shown = ", ".join(f"{b}/{i}" for b, i in sorted(conflicts)[:3]) + (" ..." if len(conflicts) > 3 else "")
            logger.warning(
                "%s: %d problem(s) have conflicting duplicate sample lines (%s): two runs wrote into this file? "
                "They are dropped and will be regenerated", self.path, len(conflicts), shown,
            )
        if repeated:
            logger.warning("%s: dropping %d duplicate sample line(s) (each kept once)", self.path, repeated)
        if bad or incomplete:
            logger.warning(
                "%s: dropping %d unreadable line(s) and %d unfinished problem(s); they will be regenerated",
                self.path, bad, incomplete,
            )
        if bad or incomplete or repeated or conflicts:
            self._rewrite()
        logger.info("%s: %d finished problem(s) found", self.path, len(self.rows))

    def save(self) -> None:
        """Rewrite the whole file from memory (after `update`), atomically."""
        self._rewrite()

    def _rewrite(self) -> None:
        tmp = self.path.with_suffix(".jsonl.tmp")
        with tmp.open("w", encoding="utf-8") as f:
            for rows in self.rows.values():
                for row in rows:
                    f.write(json.dumps(row, ensure_ascii=False) + "\n")
        os.replace(tmp, self.path)

    def done(self, benchmark: str, problem_id: str) -> bool:
        return (benchmark, problem_id) in self.rows

    def get(self, benchmark: str, problem_id: str) -> list[dict[str, Any]]:
        return self.rows[(benchmark, problem_id)]

    def add(self, rows: list[dict[str, Any]]) -> None:
        """Append one problem's `n` rows and flush them to disk."""
        if len(rows) != self.n:
            raise ValueError(f"expected {self.n} rows for one problem, got {len(rows)}")
        key = (rows[0]["benchmark"], rows[0]["id"])
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as f:
            f.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
            f.flush()
            os.fsync(f.fileno())
        self.rows[key] = rows

    def update(self, benchmark: str, problem_id: str, rows: list[dict[str, Any]]) -> None:
        """Replace a finished problem's rows in memory (after regrading); `save()` writes them."""
        self.rows[(benchmark, problem_id)] = rows
