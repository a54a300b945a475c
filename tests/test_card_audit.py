"""The card's reward audit computed beside the build (`mrtasks.curate.card_audit`): a worker gives
exactly the in-process audit, and a worker that fails or is cut off only costs the time it saved."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys

import pytest

from mrtasks.build import main as build_main
from mrtasks.curate.card_audit import CardAudit, spare_core
from mrtasks.mathcheck import OFFLINE_TIMEOUT_S
from mrtasks.rewards.audit import audit_build, card_section, load_rows
from mrtasks.tasks import list_tasks

needs_two_cores = pytest.mark.skipif(not spare_core(), reason="the worker runs only where a second core is free")


@pytest.fixture(scope="module")
def rows(tmp_path_factory):
    """The bundled sample's build, as `run_pipeline` hands it on: config -> split -> rows."""
    out = tmp_path_factory.mktemp("card") / "tasks"
    assert build_main(["--out", str(out), "--no-progress"]) == 0
    return {task: {"train": load_rows(out, task, ["train"]), "validation": load_rows(out, task, ["validation"])}
            for task in list_tasks()}  # fmt: skip


@needs_two_cores
def test_the_worker_scores_exactly_what_the_build_would(rows, caplog):
    card = CardAudit(workers=1, timeout=OFFLINE_TIMEOUT_S, min_rows=0)
    card.submit(rows)
    with caplog.at_level(logging.INFO, logger="mrtasks.curate.card_audit"):
        results = card.results()
    assert "scored by the worker" in caplog.text
    assert results == audit_build(rows)
    assert card_section(rows, results=results) == card_section(rows)


def test_a_small_build_keeps_the_audit_in_process(rows):
    card = CardAudit(workers=1, timeout=OFFLINE_TIMEOUT_S)  # the sample is far below MIN_ROWS
    card.submit(rows)
    assert card.results() is None


@needs_two_cores
def test_a_killed_worker_leaves_the_audit_to_the_build(rows, caplog):
    card = CardAudit(workers=1, timeout=OFFLINE_TIMEOUT_S, min_rows=0)
    card.submit(rows)
    os.kill(card._process.pid, signal.SIGKILL)
    with caplog.at_level(logging.WARNING, logger="mrtasks.curate.card_audit"):
        assert card.results() is None
    assert "computes it in-process" in caplog.text


@needs_two_cores
def test_close_stops_a_running_worker(rows):
    card = CardAudit(workers=1, timeout=OFFLINE_TIMEOUT_S, min_rows=0)
    card.submit(rows)
    process = card._process
    card.close()
    assert process.poll() is not None and card.results() is None


@pytest.mark.parametrize("module", ["mrtasks.curate.card_audit", "mrtasks.mathcheck._worker"])
def test_an_internal_worker_run_by_hand_says_what_it_is(module):
    """`--help` on an internal worker is one line and exit 2, not a traceback from reading its pipe."""
    done = subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True, text=True, timeout=60,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [done.stderr.strip()]
    assert "internal worker" in done.stderr and "Traceback" not in done.stderr
