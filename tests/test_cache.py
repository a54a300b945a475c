"""The sqlite response cache: keys, persistence across processes' lifetimes, and bad files."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from mrtasks.curate.cache import ResponseCache, request_key
from mrtasks.prompts import FORMULA_EXTRACTION_PROMPT, STEP_SPLIT_PROMPT, curation_messages

MESSAGES = curation_messages(FORMULA_EXTRACTION_PROMPT, "We have $x = 2$.")


def test_key_is_stable_and_covers_model_prompt_input_params_and_attempt():
    key = request_key("r1", MESSAGES, {"temperature": 0.6}, attempt=0)
    assert key == request_key("r1", MESSAGES, {"temperature": 0.6}, attempt=0)
    assert len(key) == 64
    others = {
        request_key("o3-mini", MESSAGES, {"temperature": 0.6}, 0),
        request_key("r1", curation_messages(STEP_SPLIT_PROMPT, "We have $x = 2$."), {"temperature": 0.6}, 0),
        request_key("r1", curation_messages(FORMULA_EXTRACTION_PROMPT, "We have $x = 3$."), {"temperature": 0.6}, 0),
        request_key("r1", MESSAGES, {"temperature": 1.0}, 0),
        request_key("r1", MESSAGES, {"temperature": 0.6}, 1),
    }
    assert key not in others and len(others) == 5


def test_answers_persist_across_instances(tmp_path):
    path = tmp_path / "sub" / "llm.sqlite"
    with ResponseCache(path) as cache:
        cache.put("k1", '{"theorems": ["x = 2"]}', model="r1", kind="formulas")
        assert cache.get("k1") == '{"theorems": ["x = 2"]}'
        assert cache.get("missing") is None

    with ResponseCache(path) as reopened:
        assert "k1" in reopened and len(reopened) == 1
        assert reopened.get("k1") == '{"theorems": ["x = 2"]}'


def test_file_cache_uses_wal_and_is_readable_by_plain_sqlite(tmp_path):
    path = tmp_path / "llm.sqlite"
    with ResponseCache(path) as cache:
        cache.put("k", "answer", model="r1", kind="steps")
        other = sqlite3.connect(path)  # another process's view, while the writer is open
        assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert other.execute("SELECT model, kind, response FROM responses").fetchall() == [("r1", "steps", "answer")]
        other.close()


def test_memory_cache_when_no_path():
    with ResponseCache(None) as cache:
        cache.put("k", "v")
        assert cache.get("k") == "v" and cache.path is None


def test_concurrent_writers_from_threads(tmp_path):
    cache = ResponseCache(tmp_path / "llm.sqlite")
    threads = [
        threading.Thread(target=lambda t=t: [cache.put(f"{t}-{i}", str(i)) for i in range(50)]) for t in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(cache) == 200 and cache.get("3-49") == "49"
    cache.close()


def test_a_file_that_is_not_a_database_is_a_clear_error(tmp_path):
    bad = tmp_path / "notes.sqlite"
    bad.write_bytes(b"definitely not sqlite\n" * 200)
    with pytest.raises(ValueError, match="not a usable sqlite database"):
        ResponseCache(bad)
