"""The exact discrete Gaussian sampler (docs/privacy.md §8.2 (M1), tests of §8.8 item 1)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from synthdp.mechanisms import gaussian
from synthdp.mechanisms.gaussian import (
    discrete_gaussian, discrete_gaussian_array, discrete_gaussian_pmf, sigma2_up,
)
from synthdp.mechanisms.randomness import PrivateRandom


def chi_square_pvalue(draws: np.ndarray, sigma2: Fraction) -> float:
    """Chi-square of the draws against the exact pmf, tails pooled so every bin expects >= 5."""
    radius = int(6 * math.sqrt(float(sigma2))) + 2
    ks = np.arange(-radius, radius + 1)
    pmf = discrete_gaussian_pmf(sigma2, ks)
    expected = pmf * draws.size
    keep = expected >= 5
    lo, hi = ks[keep].min(), ks[keep].max()
    inner = np.arange(lo, hi + 1)
    observed = np.array([(draws < lo).sum()] + [(draws == k).sum() for k in inner] + [(draws > hi).sum()])
    probs = discrete_gaussian_pmf(sigma2, inner)
    tail = (1 - probs.sum()) / 2
    exp = np.concatenate([[tail], probs, [tail]]) * draws.size
    keep = exp > 0
    return stats.chisquare(observed[keep], exp[keep] * observed[keep].sum() / exp[keep].sum()).pvalue


@pytest.mark.parametrize("sigma2", [Fraction(1, 4), Fraction(3, 2), Fraction(7), Fraction(400),
                                    sigma2_up(12345.678)])
def test_array_sampler_matches_the_exact_pmf(sigma2):
    draws = discrete_gaussian_array(40_000, sigma2, PrivateRandom(11))
    assert chi_square_pvalue(draws, sigma2) > 1e-4


@pytest.mark.parametrize("sigma2", [Fraction(1, 4), Fraction(5, 3), Fraction(900)])
def test_variance_is_the_exact_pmfs_not_sigma2(sigma2):
    draws = discrete_gaussian_array(100_000, sigma2, PrivateRandom(3))
    radius = int(60 * math.sqrt(float(sigma2))) + 60
    ks = np.arange(-radius, radius + 1)
    exact = float((discrete_gaussian_pmf(sigma2, ks) * ks**2).sum())
    if sigma2 == Fraction(1, 4):
        assert abs(exact - 0.215) < 1e-3 and exact < 0.25  # the scale is not the variance
    stderr = math.sqrt(2 * exact**2 / draws.size) * 3  # ~ the sd of a sample variance, generously
    assert abs(draws.var() - exact) < 4 * stderr
    assert abs(draws.mean()) < 5 * math.sqrt(exact / draws.size)


def test_scalar_sampler_matches_the_exact_pmf():
    sigma2 = Fraction(9, 4)
    rng = PrivateRandom(5)
    draws = np.array([discrete_gaussian(sigma2, rng) for _ in range(8000)])
    assert chi_square_pvalue(draws, sigma2) > 1e-4


def test_off_grid_sigma2_uses_the_exact_scalar_path():
    sigma2 = Fraction(10**13 + 7, 10**9)  # denominators beyond the array path's range
    draws = discrete_gaussian_array(3000, sigma2, PrivateRandom(2))
    assert chi_square_pvalue(draws, sigma2) > 1e-4


def test_sigma2_up_rounds_up_and_keeps_grid_values():
    for x in [0.3, 1.0, 2.5, 12345.678, 3e6, 1e-5]:
        s = sigma2_up(x)
        assert s >= Fraction(x) and float(s) - x <= max(2**-27, x * 2**-10)
        assert sigma2_up(s) == s
    with pytest.raises(ValueError):
        sigma2_up(0.0)
    with pytest.raises(TypeError):
        discrete_gaussian_array(3, 0.5, PrivateRandom(0))


def test_seeded_streams_reproduce():
    a = discrete_gaussian_array(50, Fraction(10), PrivateRandom(9))
    b = discrete_gaussian_array(50, Fraction(10), PrivateRandom(9))
    assert (a == b).all() and a.dtype == np.int64


@pytest.mark.parametrize("sigma2", [Fraction(1, 4), sigma2_up(2.7), sigma2_up(480.3**2), Fraction(10**9 + 7, 3)])
def test_acceptance_exponent_is_exact_on_both_paths(sigma2):
    """The int64 shortcut and the exact-integer path give the same ``divmod((|y| b t - a)**2, 2 a b t**2)``, up to
    and past the magnitude where the square stops fitting int64 (there the exact path must take over)."""
    a, b = sigma2.numerator, sigma2.denominator
    t = math.isqrt(a // b) + 1
    bt, den = b * t, 2 * a * b * t * t
    edge = (gaussian._INT64_SQRT - 1) // bt
    magnitude = np.unique(np.concatenate([np.arange(0, 200), [max(0, edge - 1), edge, edge + 1, edge + 2]]))
    whole, frac = gaussian._acceptance_exponent(magnitude.astype(np.int64), a, bt, den)
    for m, w, f in zip(magnitude.tolist(), whole.tolist(), frac.tolist()):
        assert (w, f) == divmod((m * bt - a) ** 2, den)
