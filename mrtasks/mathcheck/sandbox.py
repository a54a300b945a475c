"""The sandbox: worker processes with a per-item time bound, for the checker's slow (sympy) tier.

sympy can hang on innocent-looking input, and `signal.alarm` only works on the main thread,
so each item runs in a worker process; a worker that overruns its deadline is killed and
replaced, and its item gets the default verdict. Workers are fresh interpreters
(`python -m mrtasks.mathcheck._worker`), not forks: forking a process that runs torch threads is
unsafe, and multiprocessing's spawn/forkserver would re-run the caller's `__main__` script.

The pool starts lazily on first use and is shut down at interpreter exit. `workers=0` runs
items in-process with no time bound (debugging only). Rewards, the build and evaluation
configure it here (`configure_pool`; `OFFLINE_TIMEOUT_S` where only correctness waits).

Environment: `MRTASKS_REWARD_WORKERS` (default: CPU count, at most 8) and
`MRTASKS_REWARD_TIMEOUT` (seconds per item, default 0.5).
"""

from __future__ import annotations

import atexit
import logging
import os
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

logger = logging.getLogger(__name__)

START_TIMEOUT = 120.0
MAX_FAILED_STARTS = 3


@dataclass
class _Worker:
    process: subprocess.Popen
    conn: Connection  # results and "ready" come in here
    inbox: Connection  # requests go out here
    ready: bool = False
    task: tuple[int, float] | None = None  # (index, deadline)


@dataclass
class PoolStats:
    """Counters since the pool started; `last_latency` holds per-item seconds of the last map."""

    items: int = 0
    timeouts: int = 0
    crashes: int = 0
    restarts: int = 0
    last_latency: list[float] = field(default_factory=list)


class TimedPool:
    """A fixed number of worker processes; `map` runs each item under `timeout` seconds."""

    def __init__(self, workers: int = 2, timeout: float = 0.5):
        self.num_workers = workers
        self.timeout = timeout
        self.stats = PoolStats()
        self._workers: list[_Worker] = []
        self._lock = threading.Lock()
        self._failed_starts = 0

    def _spawn(self) -> _Worker:
        to_child_r, to_child_w = os.pipe()
        to_parent_r, to_parent_w = os.pipe()
        env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        try:
            process = subprocess.Popen(
                [sys.executable, "-m", "mrtasks.mathcheck._worker", str(to_child_r), str(to_parent_w)],
                pass_fds=(to_child_r, to_parent_w),
                stdin=subprocess.DEVNULL,
                env=env,
            )
        finally:
            os.close(to_child_r)
            os.close(to_parent_w)
        return _Worker(process, Connection(to_parent_r, writable=False), Connection(to_child_w, readable=False))

    def _kill(self, worker: _Worker) -> None:
        for conn in (worker.conn, worker.inbox):
            conn.close()
        if worker.process.poll() is None:
            worker.process.kill()
        try:
            worker.process.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover
            logger.warning("reward worker %d did not exit after kill", worker.process.pid)

    def _replace(self, worker: _Worker) -> None:
        self._kill(worker)
        self._workers[self._workers.index(worker)] = self._spawn()
        self.stats.restarts += 1

    def _await_ready(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        waiting = [w for w in self._workers if not w.ready]
        while waiting:
            left = deadline - time.monotonic()
            if left <= 0:
                raise RuntimeError(f"reward workers did not start within {START_TIMEOUT:.0f} s")
            for conn in wait([w.conn for w in waiting], timeout=left):
                worker = next(w for w in waiting if w.conn is conn)
                try:
                    worker.ready = conn.recv() == "ready"
                except (EOFError, OSError) as exc:
                    raise RuntimeError("a reward worker died while starting") from exc
            waiting = [w for w in self._workers if not w.ready]

    def prestart(self) -> None:
        """Spawn the workers now without waiting for them: their interpreter start (sympy's import,
        about 2 s) overlaps the caller's own work, and the first `map` waits only for what is left."""
        if self.num_workers <= 0:
            return
        with self._lock:
            while len(self._workers) < self.num_workers:
                self._workers.append(self._spawn())

    def start(self) -> None:
        """Start the workers now (otherwise the first `map` does) and wait until they are up."""
        with self._lock:
            self._start_locked()

    def _start_locked(self) -> None:
        while len(self._workers) < self.num_workers:
            self._workers.append(self._spawn())
        if not any(w.ready for w in self._workers):
            self._await_ready()

    def map(self, fn: Callable[..., Any], items: Sequence[tuple], default: Any) -> list[Any]:
        """`[fn(*item) for item in items]`, each under the time bound; `default` on timeout/crash.

        `fn` must be a module-level function (it is pickled by reference).
        """
        n = len(items)
        if n == 0:
            return []
        if self.num_workers <= 0:
            return self._map_inline(fn, items, default)
        with self._lock:
            self._start_locked()
            return self._map_locked(fn, items, default)

    def _map_inline(self, fn: Callable[..., Any], items: Sequence[tuple], default: Any) -> list[Any]:
        out, latency = [], []
        for args in items:
            t0 = time.perf_counter()
            try:
                result = fn(*args)
            except Exception:  # noqa: BLE001
                result = None
            out.append(default if result is None else result)
            latency.append(time.perf_counter() - t0)
        self.stats.last_latency = latency
        self.stats.items += len(items)
        return out

    def _map_locked(self, fn: Callable[..., Any], items: Sequence[tuple], default: Any) -> list[Any]:
        results: list[Any] = [default] * len(items)
        latency = [0.0] * len(items)
        started: dict[int, float] = {}
        queue = deque(range(len(items)))
        start_deadline = time.monotonic() + START_TIMEOUT
        while queue or any(w.task for w in self._workers):
            for worker in self._workers:  # hand out work to idle, ready workers
                if worker.ready and worker.task is None and queue:
                    index = queue.popleft()
                    try:
                        worker.inbox.send((index, fn, items[index]))
                    except (OSError, ValueError):
                        queue.appendleft(index)
                        self._crashed(worker, None)
                        continue
                    started[index] = time.monotonic()
                    worker.task = (index, started[index] + self.timeout)
            deadlines = [w.task[1] for w in self._workers if w.task]
            if not deadlines and time.monotonic() > start_deadline:
                raise RuntimeError(f"reward workers did not start within {START_TIMEOUT:.0f} s")
            timeout = max(0.0, min(deadlines) - time.monotonic()) if deadlines else 1.0
            listening = [w for w in self._workers if w.task or not w.ready]
            for conn in wait([w.conn for w in listening], timeout=timeout):
                worker = next(w for w in listening if w.conn is conn)
                try:
                    msg = conn.recv()
                except (EOFError, OSError):
                    if worker.task:
                        latency[worker.task[0]] = time.monotonic() - started[worker.task[0]]
                    self._crashed(worker, worker.task[0] if worker.task else None)
                    continue
                if not worker.ready:
                    worker.ready = msg == "ready"
                    self._failed_starts = 0
                    continue
                index = worker.task[0]
                worker.task = None
                latency[index] = time.monotonic() - started[index]
                got_index, result = msg
                if got_index == index and result is not None:
                    results[index] = result
            now = time.monotonic()
            for worker in list(self._workers):
                if worker.task and worker.task[1] <= now:
                    index = worker.task[0]
                    latency[index] = now - started[index]
                    self.stats.timeouts += 1
                    logger.warning("reward item %d exceeded %.2f s; its worker was replaced", index, self.timeout)
                    self._replace(worker)
        self.stats.items += len(items)
        self.stats.last_latency = latency
        return results

    def _crashed(self, worker: _Worker, index: int | None) -> None:
        self.stats.crashes += 1
        if not worker.ready:
            self._failed_starts += 1
            if self._failed_starts > MAX_FAILED_STARTS:
                raise RuntimeError("reward workers keep dying at start-up; see their stderr above")
        logger.warning("a reward worker died (item %s); it was replaced", index)
        self._replace(worker)

    def close(self) -> None:
        """Stop all workers (the pool restarts on the next `map`)."""
        with self._lock:
            for worker in self._workers:
                try:
                    worker.inbox.send(None)
                except (OSError, ValueError):
                    pass
            for worker in self._workers:
                try:
                    worker.process.wait(timeout=1)
                except subprocess.TimeoutExpired:
                    pass
                self._kill(worker)
            self._workers = []


def echo_after(seconds: float, value: Any) -> Any:
    """Return `value` after `seconds`: a health check for the pool's time bound."""
    time.sleep(seconds)
    return value


_POOL: TimedPool | None = None
_POOL_LOCK = threading.Lock()


OFFLINE_TIMEOUT_S = 10.0
"""Seconds per item where nothing waits on the verdict but correctness (the build's reference
check and card audit, evaluation): a slow verdict on a busy machine must not become a wrong one,
nor a build's output depend on the load. GRPO keeps `default_timeout()` (0.5 s)."""


def default_workers() -> int:
    return int(os.environ.get("MRTASKS_REWARD_WORKERS", min(os.cpu_count() or 1, 8)))


def default_timeout() -> float:
    return float(os.environ.get("MRTASKS_REWARD_TIMEOUT", 0.5))


def get_pool() -> TimedPool:
    """The process-wide pool (created on first use, closed at exit)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = TimedPool(default_workers(), default_timeout())
            atexit.register(_POOL.close)
        return _POOL


def configure_pool(workers: int | None = None, timeout: float | None = None) -> TimedPool:
    """Replace the process-wide pool, e.g. `configure_pool(workers=0)` to run in-process."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is not None:
            _POOL.close()
        _POOL = TimedPool(default_workers() if workers is None else workers,
                          default_timeout() if timeout is None else timeout)  # fmt: skip
        atexit.register(_POOL.close)
        return _POOL
