"""Shared test fixtures. Public data lives in ../shared/data beside the checkout (read-only)."""

from __future__ import annotations

from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.fail(f"the shared public data is expected beside the checkout at {SHARED_DATA}")
    return SHARED_DATA
