"""Logging and error lines for this project's command lines.

`-v` raises only our own loggers, never the libraries'; a known error or an interrupt ends a command
with one `error: ...` line on stderr and its documented exit code, never a traceback.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable, Mapping

PROJECT_LOGGERS = ("mrtasks", "builders", "training", "eval")


def configure_logging(verbose: bool = False) -> None:
    """INFO (DEBUG with `verbose`) for this project's loggers; WARNING for everything else.

    Libraries (httpx, urllib3, openai, huggingface_hub, datasets, ...) keep WARNING even with `-v`,
    so a verbose build shows its own decisions, not one HTTP log line per request.
    """
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    for name in PROJECT_LOGGERS:
        logging.getLogger(name).setLevel(logging.DEBUG if verbose else logging.INFO)


def first_line(e: BaseException, named: bool = False) -> str:
    """The first line of an error's message (200 characters at most; its class name when it has no
    message), after `Type: ` with `named`: what a one-line error report shows of an exception."""
    text = str(e).strip()
    line = text.splitlines()[0][:200] if text else ""
    if named:
        return f"{type(e).__name__}: {line}" if line else type(e).__name__
    return line or type(e).__name__


INTERRUPTED = 130  # the shell's code for a command ended by Ctrl-C (128 + SIGINT)


def run_command(body: Callable[[], int], errors: Mapping[type[BaseException], int]) -> int:
    """Run a command's body; an error of a listed class (the first that matches) or Ctrl-C is one line.

    `errors` maps exception classes to exit codes, e.g. `{OutputError: 4, DatasetError: 2}`; anything
    else propagates (a bug should show its traceback).
    """
    try:
        return body()
    except KeyboardInterrupt:
        print("error: interrupted", file=sys.stderr)
        return INTERRUPTED
    except tuple(errors) as e:
        print(f"error: {first_line(e)}", file=sys.stderr)
        return next(code for cls, code in errors.items() if isinstance(e, cls))


def internal_entry_point(module: str, caller: str) -> int:
    """The answer to a person who runs an internal worker module (with `--help` or anything else)."""
    print(f"error: `python -m {module}` is an internal worker that {caller} starts; it is not a command "
          "(see the README for the commands)", file=sys.stderr)
    return 2
