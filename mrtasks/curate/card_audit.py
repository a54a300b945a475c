"""The dataset card's reward audit, computed beside the build in a second interpreter.

The card's audit table (`mrtasks.rewards.audit.card_section`) scores a few thousand adversarial
completions, about 2 s of CPU on the shared corpora, and needs nothing but the chosen rows. On a
machine with a spare core, `CardAudit.submit` hands those rows to a fresh interpreter
(`python -m mrtasks.curate.card_audit`) as soon as the pipeline has chosen them, and the build goes
on with its quality figures and Parquet files; `CardAudit.results` collects the table's rows.

A worker only ever saves time: it computes exactly what `audit_build` computes in-process, and when
it cannot start, fails, or is too slow, `results` returns None and the card computes the audit itself.
Small builds (under `min_rows` task rows) and one-core machines skip the worker: an interpreter's
start would cost more than it saves. `close` (in a `finally`) kills a worker still running.
"""

from __future__ import annotations

import logging
import os
import pickle
import signal
import subprocess
import sys
import tempfile
from typing import Any

from mrtasks.rewards.audit import CARD_ROWS, FAMILY_ROWS, AuditResult, audit_sample, card_rows

logger = logging.getLogger(__name__)

Rows = dict[str, dict[str, list[dict[str, Any]]]]

MIN_ROWS = 2000
"""Task rows (all configs but trajectories) from which the audit moves to a worker."""
WAIT_S = 600.0
"""Longest wait for a worker's answer before the card computes the audit itself."""


def spare_core() -> bool:
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return cores >= 2


class CardAudit:
    """At most one worker per build; see the module docstring."""

    def __init__(self, workers: int | None, timeout: float, min_rows: int = MIN_ROWS, seed: int = 0):
        self.pool = (workers, timeout)  # the worker's own checker pool, as the build's (None: the default)
        self.min_rows, self.seed = min_rows, seed  # the card's sample seed (`card_section`'s)
        self._process: subprocess.Popen[bytes] | None = None

    def submit(self, rows: Rows) -> None:
        """Start the worker on the card's sample of `rows` (a pipeline `on_selected` hook)."""
        size = sum(len(r) for config, splits in rows.items() if config != "trajectories" for r in splits.values())
        if size < self.min_rows or not spare_core():
            return
        try:
            with tempfile.TemporaryFile() as payload:  # a file, not a pipe: writing it never waits on the worker
                pickle.dump((card_rows(rows, CARD_ROWS, self.seed), self.seed, FAMILY_ROWS, self.pool), payload)
                payload.seek(0)
                self._process = subprocess.Popen(
                    [sys.executable, "-m", "mrtasks.curate.card_audit"], stdin=payload, stdout=subprocess.PIPE
                )
        except (OSError, pickle.PicklingError) as e:
            logger.info("card audit worker not started (%s): the card computes it in-process", e)
            self.close()

    def results(self) -> list[AuditResult] | None:
        """The worker's audit, or None (no worker, or it failed: the caller computes it)."""
        process, self._process = self._process, None
        if process is None:
            return None
        try:
            out, _ = process.communicate(timeout=WAIT_S)
            if process.returncode == 0:
                results = pickle.loads(out)
                if isinstance(results, list) and all(isinstance(r, AuditResult) for r in results):
                    logger.info("card audit: %d policies scored by the worker", len(results))
                    return results
            logger.warning("card audit worker failed (exit %s): the card computes it in-process", process.returncode)
        except Exception as e:  # noqa: BLE001 - timeout, unreadable answer, I/O: the worker only saves time
            logger.warning("card audit worker failed (%s): the card computes it in-process", type(e).__name__)
        finally:
            _kill(process)
        return None

    def close(self) -> None:
        process, self._process = self._process, None
        if process is not None:
            _kill(process)


def _kill(process: subprocess.Popen[bytes]) -> None:
    """Stop a worker: SIGTERM lets it close its own checker worker first; SIGKILL if it lingers."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
    process.wait()
    if process.stdout is not None:
        process.stdout.close()


def _worker() -> int:
    """Read (sample, seed, family_rows, pool) on stdin, write the pickled audit on stdout."""
    from mrtasks.mathcheck.sandbox import configure_pool

    out = os.fdopen(os.dup(1), "wb")
    os.dup2(2, 1)  # anything printed goes to stderr; stdout carries the result only
    logging.basicConfig(level=logging.WARNING)
    try:
        sample, seed, family_rows, (workers, timeout) = pickle.load(sys.stdin.buffer)
        configure_pool(workers=workers, timeout=timeout).prestart()
        results = audit_sample(sample, seed, family_rows)
        out.write(pickle.dumps(results))
        out.close()
        return 0
    except (KeyboardInterrupt, SystemExit, BrokenPipeError):  # Ctrl-C, `close` (SIGTERM), or the build is gone
        return 1
    except BaseException:  # noqa: BLE001 - any failure: the build computes the audit itself
        logger.exception("card audit worker")
        return 1


if __name__ == "__main__":
    if sys.argv[1:] or sys.stdin.isatty():  # a person, not `CardAudit.submit` (which pipes the rows in)
        from mrtasks.logs import internal_entry_point

        sys.exit(internal_entry_point("mrtasks.curate.card_audit", "the build"))
    signal.signal(signal.SIGTERM, lambda signum, frame: sys.exit(1))  # unwinds, so atexit closes the checker pool
    sys.exit(_worker())
