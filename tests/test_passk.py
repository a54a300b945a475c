"""Pass@k: the exact estimator against brute-force enumeration, and its edge cases."""

from fractions import Fraction
from itertools import combinations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from eval.passk import mean_pass_at_k, pass_at_k, pass_at_k_exact, passk_curve


def brute_force(n: int, c: int, k: int) -> Fraction:
    """The share of size-k subsets of n samples (the first c correct) holding a correct one."""
    subsets = list(combinations(range(n), k))
    return Fraction(sum(any(i < c for i in s) for s in subsets), len(subsets))


@pytest.mark.parametrize("n", range(1, 9))
def test_matches_enumeration_of_every_subset(n):
    for c in range(n + 1):
        for k in range(1, n + 1):
            assert pass_at_k_exact(n, c, k) == brute_force(n, c, k), (n, c, k)


def test_pass_at_1_is_the_fraction_correct():
    assert pass_at_k(64, 16, 1) == 0.25
    assert pass_at_k(64, 0, 8) == 0.0
    assert pass_at_k(64, 64, 8) == 1.0
    assert pass_at_k(64, 57, 8) == 1.0  # fewer than k wrong samples: every subset has a correct one


def test_agrees_with_the_product_form_and_stays_exact_for_large_n():
    # Chen et al.'s numerically stable product form, in floats.
    def product_form(n, c, k):
        return 1.0 if n - c < k else 1.0 - float(np.prod(1.0 - k / np.arange(n - c + 1, n + 1)))

    for c in range(65):
        for k in (1, 5, 8):
            assert pass_at_k(64, c, k) == pytest.approx(product_form(64, c, k), rel=1e-12, abs=1e-15)
    # 1 - C(n-1, k)/C(n, k) = k/n exactly: the float is the correctly rounded value.
    assert pass_at_k(10_000, 1, 3) == 3 / 10_000
    # 1 - 1/C(2000, 1000) is about 1 - 1e-600: 1.0 as a float, still below 1 as the exact fraction.
    assert pass_at_k_exact(2000, 1000, 1000) < 1
    assert pass_at_k(2000, 1000, 1000) == 1.0


def test_k_larger_than_n_is_an_error():
    with pytest.raises(ValueError, match="k must be in"):
        pass_at_k(4, 1, 8)
    with pytest.raises(ValueError, match="c must be in"):
        pass_at_k(4, 5, 1)


def test_mean_is_exact_and_curve_leaves_out_k_above_n():
    counts = [(4, 0), (4, 1), (4, 4)]
    assert mean_pass_at_k(counts, 1) == pytest.approx((0 + 0.25 + 1) / 3)
    assert passk_curve(counts, [1, 2, 4, 8]) == {1: mean_pass_at_k(counts, 1), 2: mean_pass_at_k(counts, 2),
                                                  4: mean_pass_at_k(counts, 4)}
    with pytest.raises(ValueError):
        mean_pass_at_k([], 1)


@given(st.integers(1, 200).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n), st.integers(1, n))))
def test_bounded_and_monotone(nck):
    n, c, k = nck
    value = pass_at_k_exact(n, c, k)
    assert 0 <= value <= 1
    assert (value == 0) == (c == 0)
    if k < n:
        assert pass_at_k_exact(n, c, k + 1) >= value
    if c < n:
        assert pass_at_k_exact(n, c + 1, k) >= value
