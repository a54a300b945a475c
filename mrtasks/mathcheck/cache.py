"""Memoization of the checker's text functions, bounded by the length of the text.

Policy: a prompt's rollouts repeat their answers and fills, and a reference recurs across a batch,
so parses and normal forms are cached (LRU); only calls whose string arguments total at most
`CACHED_CHARS` are cached, so a policy emitting huge boxes cannot fill memory.
"""

from __future__ import annotations

import functools

CACHED_CHARS = 1_000
"""Only texts up to this length are cached: a policy emitting huge boxes must not fill memory."""


def short_cache(maxsize: int):
    """`lru_cache` for calls whose string arguments are short; longer ones are computed afresh."""

    def deco(fn):
        cached = functools.lru_cache(maxsize=maxsize)(fn)

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            # a plain loop, not sum() over a generator: this runs on every checker call (half the cost)
            size = 0
            for a in args:
                if isinstance(a, str):
                    size += len(a)
            if kwargs:
                for a in kwargs.values():
                    if isinstance(a, str):
                        size += len(a)
            if size <= CACHED_CHARS:
                return cached(*args, **kwargs)
            return fn(*args, **kwargs)

        wrapper.cache_clear = cached.cache_clear  # type: ignore[attr-defined]
        wrapper.cache_info = cached.cache_info  # type: ignore[attr-defined]
        return wrapper

    return deco
