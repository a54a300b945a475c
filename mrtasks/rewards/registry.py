"""The reward registry and what every reward function shares.

A reward function follows TRL's convention: `f(completions, **columns) -> list[float | None]`,
one entry per completion, `None` for rows of another task (TRL then ignores that function for
that row, so several task-specific rewards can share a mixed dataset).
"""

from __future__ import annotations

import functools
import inspect
import logging
import math
from collections.abc import Callable, Sequence
from typing import Any

logger = logging.getLogger(__name__)

RewardFunc = Callable[..., list[float | None]]
_REGISTRY: dict[str, RewardFunc] = {}
_ALIASES: dict[str, str] = {}
_CONFIGURED: dict[tuple[str, tuple[tuple[str, Any], ...]], RewardFunc] = {}


def register(name: str, aliases: tuple[str, ...] = ()) -> Callable[[RewardFunc], RewardFunc]:
    """Decorator: add a reward function under `name` (a task's reward carries the task's name).

    `aliases` are older names that `get_reward` still resolves; `list_rewards` does not list them.
    """

    def deco(fn: RewardFunc) -> RewardFunc:
        for key in (name, *aliases):
            if key in _REGISTRY or key in _ALIASES:
                raise ValueError(f"reward {key!r} is already registered")
        _REGISTRY[name] = fn
        _ALIASES.update({alias: name for alias in aliases})
        return fn

    return deco


OPTION_CHOICES: dict[str, tuple[Any, ...]] = {
    "think_prefilled": (False, True),
    "partial_credit": ("undecided", "all"),
}
"""Every reward option and its allowed values. A reward takes the options that are keyword-only
parameters of its function (`think_prefilled` for all, `partial_credit` for Masked-Then-Fill):

- `think_prefilled`: the chat template ends the generation prompt with an open `<think>` (R1-Distill),
  so a completion that never writes `</think>` has no final answer and scores 0.
- `partial_credit` (masked_then_fill): "undecided" (default) gives text similarity only where the
  equivalence checker cannot decide; "all" is the paper's literal variant, similarity on every mismatch.
"""


def reward_options(name: str) -> dict[str, Any]:
    """The options reward `name` takes, with their defaults."""
    try:
        fn = _REGISTRY[_ALIASES.get(name, name)]
    except KeyError:
        raise KeyError(f"unknown reward {name!r}; known: {', '.join(list_rewards())}") from None
    params = inspect.signature(getattr(fn, "__wrapped__", fn)).parameters.values()
    return {p.name: p.default for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY}


def get_reward(name: str, **options: Any) -> RewardFunc:
    """The reward function registered as `name` (or an alias of it), configured with `options`.

    The result is named after the reward (`__name__ == name`'s canonical name), so TRL logs
    `rewards/<name>/mean`. An option the reward does not take is a TypeError; a value outside
    `OPTION_CHOICES` a ValueError. KeyError lists the known names.
    """
    key = _ALIASES.get(name, name)
    try:
        fn = _REGISTRY[key]
    except KeyError:
        raise KeyError(f"unknown reward {name!r}; known: {', '.join(list_rewards())}") from None
    accepted = reward_options(key)
    for option, value in options.items():
        if option not in accepted:
            raise TypeError(f"reward {key!r} takes no option {option!r} (it takes: {', '.join(accepted) or 'none'})")
        if option in OPTION_CHOICES and value not in OPTION_CHOICES[option]:
            raise ValueError(f"reward {key!r}: {option} must be one of {OPTION_CHOICES[option]}, got {value!r}")
    cache_key = (key, tuple(sorted(options.items())))
    if cache_key in _CONFIGURED:
        return _CONFIGURED[cache_key]
    raw = functools.partial(getattr(fn, "__wrapped__", fn), **options)
    raw.__name__ = key  # type: ignore[attr-defined]
    configured = safe_reward(raw)
    configured.__name__ = configured.__qualname__ = key
    configured.__doc__ = fn.__doc__
    configured.options = dict(options)  # type: ignore[attr-defined]
    _CONFIGURED[cache_key] = configured
    return configured


def list_rewards() -> list[str]:
    return sorted(_REGISTRY)


class ColumnLengthError(ValueError):
    """A per-row column whose length differs from the number of completions: a caller error
    (TRL always passes aligned columns), raised as is, never scored row by row."""


def _is_column(value: Any) -> bool:
    """A per-row sequence: list, tuple, numpy array, a `datasets` Column (not str, bytes, dict)."""
    return hasattr(value, "__len__") and hasattr(value, "__getitem__") and not isinstance(value, (str, bytes, dict))


def column(values: Sequence[Any] | None, n: int, name: str = "column") -> list[Any]:
    """A per-row column as a list of length n (missing column -> all None)."""
    if values is None:
        return [None] * n
    values = list(values)
    if len(values) != n:
        raise ColumnLengthError(f"{name} has {len(values)} values for {n} completions")
    return values


def _clean(value: Any) -> float | None:
    if value is None:
        return None
    try:
        value = float(value)
    except (TypeError, ValueError):
        return 0.0
    return 0.0 if math.isnan(value) else min(max(value, 0.0), 1.0)


def safe_reward(fn: RewardFunc) -> RewardFunc:
    """Guarantee the contract whatever happens inside: one float in [0, 1] or None per
    completion. A batch that raises is retried row by row, and a row that still raises
    scores 0.0 (logged), so one bad completion never stops training."""

    @functools.wraps(fn)
    def wrapper(completions: Sequence[Any], **columns: Any) -> list[float | None]:
        n = len(completions)
        for name, value in columns.items():
            if _is_column(value) and len(value) != n:
                raise ColumnLengthError(f"{fn.__name__}: column {name!r} has {len(value)} values for {n} completions")
        try:
            return [_clean(v) for v in fn(completions, **columns)][:n]
        except ColumnLengthError:
            raise
        except Exception:  # noqa: BLE001
            logger.exception("%s failed on a batch; scoring row by row", fn.__name__)
        out: list[float | None] = []
        for i in range(n):
            # index, not slice: works for lists, tuples, numpy arrays and `datasets` Columns alike
            row = {k: ([v[i]] if _is_column(v) else v) for k, v in columns.items()}
            try:
                out.append(_clean(fn(completions[i : i + 1], **row)[0]))
            except Exception:  # noqa: BLE001
                logger.exception("%s failed on row %d; scoring it 0.0", fn.__name__, i)
                out.append(0.0)
        return out

    return wrapper
