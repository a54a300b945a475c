"""Logging for this project's command lines: `-v` raises only our own loggers, never the libraries'."""

from __future__ import annotations

import logging

PROJECT_LOGGERS = ("mrtasks", "builders", "training", "eval")


def configure_logging(verbose: bool = False) -> None:
    """INFO (DEBUG with `verbose`) for this project's loggers; WARNING for everything else.

    Libraries (httpx, urllib3, openai, huggingface_hub, datasets, ...) keep WARNING even with `-v`,
    so a verbose build shows its own decisions, not one HTTP log line per request.
    """
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    for name in PROJECT_LOGGERS:
        logging.getLogger(name).setLevel(logging.DEBUG if verbose else logging.INFO)
