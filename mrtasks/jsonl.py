"""One JSON-lines reader for every file the project reads (sources, benchmarks, fixtures, samples).

Each caller decides what a bad line means: a counted drop (sources), an error naming the line
(benchmarks, fixtures) or a skipped tail (a sample file cut off by a kill). Lines are decoded one
by one, so invalid UTF-8 is reported as such instead of becoming U+FFFD.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal


class JSONLError(ValueError):
    """A line that is not a JSON object, with the file and line number in the message."""


@dataclass(frozen=True)
class BadLine:
    """A line that could not be read: `reason` is `bad_encoding` or `bad_json`."""

    lineno: int
    reason: str
    detail: str


def _parse(raw: bytes, lineno: int) -> dict[str, Any] | BadLine:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        return BadLine(lineno, "bad_encoding", str(e)[:80])
    try:
        row = json.loads(text)
    except json.JSONDecodeError as e:
        return BadLine(lineno, "bad_json", str(e)[:80])
    if not isinstance(row, dict):
        return BadLine(lineno, "bad_json", f"line is a {type(row).__name__}, not an object")
    return row


def iter_jsonl(
    path: str | Path, errors: Literal["raise", "skip", "yield"] = "raise"
) -> Iterator[tuple[int, dict[str, Any] | BadLine]]:
    """(line number, object) for each non-blank line of a JSON-lines file.

    A bad line raises `JSONLError` (`errors="raise"`), is left out (`"skip"`), or comes out as
    a `BadLine` in place of the object (`"yield"`), for callers that count it.
    """
    path = Path(path)
    with open(path, "rb") as f:
        for lineno, raw in enumerate(f, 1):
            if lineno == 1 and raw.startswith(b"\xef\xbb\xbf"):
                raw = raw[3:]  # a UTF-8 byte-order mark, as Windows tools write
            if not raw.strip():
                continue
            item = _parse(raw.rstrip(b"\r\n"), lineno)
            if isinstance(item, BadLine):
                if errors == "raise":
                    what = "not valid UTF-8" if item.reason == "bad_encoding" else "not a JSON object"
                    raise JSONLError(f"{path}:{lineno}: {what} ({item.detail})")
                if errors == "skip":
                    continue
            yield lineno, item


def read_jsonl(path: str | Path) -> list[dict[str, Any]]:
    """Every object of a JSON-lines file; the first bad line raises `JSONLError`."""
    return [row for _, row in iter_jsonl(path)]  # type: ignore[misc]


def write_jsonl(path: str | Path, rows: list[dict[str, Any]]) -> None:
    """Write rows as UTF-8 JSON lines (non-ASCII kept as is)."""
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
