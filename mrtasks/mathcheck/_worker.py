"""Entry point of one checker worker process (`python -m mrtasks.mathcheck._worker IN_FD OUT_FD`).

Started by `sandbox.TimedPool` as a fresh interpreter, so it never re-imports the parent's
`__main__` (a training script) and never inherits its threads. It preloads the slow tier,
says "ready", then answers `(index, fn, args)` requests with `(index, result)`.
"""

from __future__ import annotations

import signal
import sys
from multiprocessing.connection import Connection


def serve(inbox: Connection, outbox: Connection) -> None:
    from mrtasks.mathcheck.slow import slow_equal

    # Warm up: pylatexenc builds its LaTeX tables and sympy its parser on first use (~0.3 s),
    # which must not count against the first item's time bound.
    slow_equal("\\frac{1}{2} + \\text{(B)}", "\\sqrt{2}x")
    if not _send(outbox, "ready"):
        return
    while True:
        try:
            msg = inbox.recv()
        except (EOFError, OSError):
            return
        if msg is None:
            return
        index, fn, args = msg
        try:
            result = fn(*args)
        except Exception:  # noqa: BLE001 - the caller's default stands for any failure
            result = None
        if not _send(outbox, (index, result)):
            return


def _send(outbox: Connection, message: object) -> bool:
    """Send; False when the parent is gone (killed mid-build): the worker then ends without a word."""
    try:
        outbox.send(message)
        return True
    except OSError:  # BrokenPipeError and its kin
        return False


if __name__ == "__main__":
    if len(sys.argv) != 3 or not all(a.isdigit() for a in sys.argv[1:]):  # a person, not `TimedPool`
        from mrtasks.logs import internal_entry_point

        sys.exit(internal_entry_point("mrtasks.mathcheck._worker", "the answer checker's pool"))
    # Ctrl-C reaches the whole process group; it is the parent's to handle (it reports it in one line
    # and its exit closes our pipe, which ends this loop). A worker must not print a traceback of its own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    serve(Connection(int(sys.argv[1]), writable=False), Connection(int(sys.argv[2]), readable=False))
