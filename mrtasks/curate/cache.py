"""A persistent request -> response cache for LLM calls (sqlite3, WAL mode).

Every answer is committed the moment it arrives, so a killed or interrupted build loses at most
the calls in flight, and a rerun over the same inputs sends no request it has already paid for.
`mrtasks.build --annotator llm` keeps it at `default_cache_path()` unless told otherwise.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key      TEXT PRIMARY KEY,
    model    TEXT NOT NULL,
    kind     TEXT NOT NULL,
    response TEXT NOT NULL,
    created  REAL NOT NULL
)
"""


class CacheError(ValueError):
    """The cache file cannot be opened or is not a sqlite database (one-line message)."""


def default_cache_path() -> Path:
    """`$XDG_CACHE_HOME/mrtasks/llm-cache.sqlite`, else `~/.cache/mrtasks/llm-cache.sqlite`."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "mrtasks" / "llm-cache.sqlite"


def request_key(
    model: str, messages: list[dict[str, str]], params: dict[str, Any], attempt: int = 0, endpoint: str = ""
) -> str:
    """sha256 of everything that determines an answer: endpoint, model, prompt and input, parameters, attempt."""
    payload = {"model": model, "messages": messages, "params": params, "attempt": attempt}
    if endpoint:
        payload["endpoint"] = endpoint.rstrip("/")
    blob = json.dumps(payload, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """Response texts by request key. `path=None` keeps them in memory for this process only.

    Safe to share between threads of one process (one connection behind a lock) and between
    processes (sqlite locking; WAL lets readers run beside the one writer).
    """

    def __init__(self, path: str | Path | None = None) -> None:
        self.path = Path(path) if path is not None else None
        target = str(self.path) if self.path is not None else ":memory:"
        self._lock = threading.Lock()
        try:
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            self._conn = sqlite3.connect(target, timeout=60, check_same_thread=False, isolation_level=None)
        except (OSError, sqlite3.Error) as e:
            raise CacheError(f"LLM cache {target} cannot be opened: {getattr(e, 'strerror', None) or e}") from None
        try:
            if self.path is not None:
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute(_SCHEMA)
        except sqlite3.Error as e:
            self._conn.close()
            raise CacheError(f"LLM cache {target} is not a usable sqlite database: {e}") from None

    def get(self, key: str) -> str | None:
        with self._lock:
            row = self._conn.execute("SELECT response FROM responses WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def put(self, key: str, response: str, *, model: str = "", kind: str = "") -> None:
        """Store and commit one answer (autocommit: durable once this returns)."""
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO responses (key, model, kind, response, created) VALUES (?, ?, ?, ?, ?)",
                (key, model, kind, response, time.time()),
            )

    def __contains__(self, key: str) -> bool:
        return self.get(key) is not None

    def __len__(self) -> int:
        with self._lock:
            return self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
