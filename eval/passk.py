"""The unbiased Pass@k estimator (Chen et al., 2021), computed exactly.

For one problem with `n` samples of which `c` are correct, Pass@k is the probability that a
random size-`k` subset of the samples holds at least one correct sample:
`1 - C(n-c, k) / C(n, k)`. The usual float product form loses digits when the ratio is tiny
or close to one; here the binomials are exact integers and the ratio an exact `Fraction`,
so the only rounding is the final conversion to float.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from fractions import Fraction
from math import comb


def _check(n: int, c: int, k: int) -> None:
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    if not 0 <= c <= n:
        raise ValueError(f"c must be in [0, n={n}], got {c}")
    if not 1 <= k <= n:
        raise ValueError(f"k must be in [1, n={n}], got {k}: Pass@k needs at least k samples")


def pass_at_k_exact(n: int, c: int, k: int) -> Fraction:
    """Pass@k of one problem as an exact fraction. Raises ValueError when k > n."""
    _check(n, c, k)
    if n - c < k:  # every size-k subset contains a correct sample
        return Fraction(1)
    return 1 - Fraction(comb(n - c, k), comb(n, k))


def pass_at_k(n: int, c: int, k: int) -> float:
    """Pass@k of one problem with `c` correct out of `n` samples. Raises ValueError when k > n."""
    return float(pass_at_k_exact(n, c, k))


def mean_pass_at_k(counts: Iterable[tuple[int, int]], k: int) -> float:
    """Mean Pass@k over problems given as `(n, c)` pairs, summed exactly, rounded once."""
    values = [pass_at_k_exact(n, c, k) for n, c in counts]
    if not values:
        raise ValueError("no problems to average")
    return float(sum(values, Fraction(0)) / len(values))


def passk_curve(counts: Sequence[tuple[int, int]], ks: Iterable[int]) -> dict[int, float]:
    """Mean Pass@k for each k in `ks` that every problem has enough samples for (others are left out)."""
    n_min = min(n for n, _ in counts)
    return {k: mean_pass_at_k(counts, k) for k in ks if 1 <= k <= n_min}
