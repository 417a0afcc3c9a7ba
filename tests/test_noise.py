"""Exact samplers and the private randomness source (privacy note section 2.6; tests of section 7.1)."""

from __future__ import annotations

import math
import pathlib
import re
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from synthdp.noise import bernoulli, bernoulli_exp, discrete_laplace, discrete_laplace_vector, to_fraction_down
from synthdp.randomness import PrivateRandom

ALPHA = 1e-3  # chi-square tests use fixed seeds, so they are deterministic; this only guards the fit


def dlap_pmf(z: np.ndarray, lam: float) -> np.ndarray:
    """``tanh(lambda/2) exp(-lambda |z|)`` (section 1.6)."""
    return math.tanh(lam / 2) * np.exp(-lam * np.abs(z))


def chi_square_pvalue(samples: list[int], pmf, support: range) -> float:
    """Chi-square p-value of integer samples against ``pmf`` on ``support`` plus the two tail bins."""
    counts = Counter(samples)
    lo, hi = support.start, support.stop - 1
    observed = [sum(c for v, c in counts.items() if v < lo)] + [counts[v] for v in support] + \
               [sum(c for v, c in counts.items() if v > hi)]
    inner = np.array([pmf(v) for v in support])
    left = sum(pmf(v) for v in range(lo - 2000, lo))
    expected = np.concatenate([[left], inner, [1 - left - inner.sum()]]) * len(samples)
    keep = expected > 5
    observed, expected = np.array(observed)[keep], expected[keep]
    return stats.chisquare(observed, expected * observed.sum() / expected.sum()).pvalue


# ----------------------------------------------------------------- randomness
def test_seeded_streams_are_reproducible_and_csprng_is_flagged():
    a, b = PrivateRandom(7), PrivateRandom(7)
    assert [a.randbelow(1000) for _ in range(20)] == [b.randbelow(1000) for _ in range(20)]
    assert not a.cryptographic and PrivateRandom(None).cryptographic
    assert "NOT cryptographic" in repr(a)
    child1, child2 = a.spawn(), a.spawn()
    assert [child1.randbelow(10**9) for _ in range(5)] != [child2.randbelow(10**9) for _ in range(5)]


@pytest.mark.parametrize("seed", [None, 3])
def test_randbelow_small_is_uniform(seed):
    rng = PrivateRandom(seed)
    draws = [rng.randbelow(7) for _ in range(14000)]
    assert set(draws) == set(range(7))
    assert stats.chisquare(np.bincount(draws, minlength=7)).pvalue > ALPHA


@pytest.mark.parametrize("n", [3 * 2**62, 5 * 2**130 + 1])
def test_randbelow_beyond_62_bits_is_exact_and_uniform(n):
    """The chunked rejection sampler: values below n, uniform over thirds of the range."""
    rng = PrivateRandom(11)
    draws = [rng.randbelow(n) for _ in range(6000)]
    assert all(0 <= v < n for v in draws)
    thirds = np.bincount([3 * v // n for v in draws], minlength=3)
    assert stats.chisquare(thirds).pvalue > ALPHA
    assert len(set(draws)) == len(draws)


def test_randbelow_rejects_bad_bounds():
    rng = PrivateRandom(1)
    for bad in (0, -3, 2.5, True):
        with pytest.raises(ValueError):
            rng.randbelow(bad)


def test_permutation_is_uniform_and_choice_in_range():
    rng = PrivateRandom(5)
    perms = Counter(tuple(rng.permutation(3)) for _ in range(6000))
    assert len(perms) == 6 and stats.chisquare(list(perms.values())).pvalue > ALPHA
    assert sorted(rng.permutation(50).tolist()) == list(range(50))
    assert len(rng.permutation(0)) == 0
    assert {rng.choice(4) for _ in range(200)} == set(range(4))


def test_numpy_generator_is_reproducible_from_the_seed():
    assert PrivateRandom(9).numpy_generator().integers(0, 10**9) == PrivateRandom(9).numpy_generator().integers(0, 10**9)
    assert isinstance(PrivateRandom(None).numpy_generator(), np.random.Generator)


def test_private_modules_never_use_numpy_randomness():
    """Section 2.6: privacy-critical code draws only from PrivateRandom (no numpy random, no float noise)."""
    root = pathlib.Path(__file__).resolve().parents[1] / "synthdp"
    for name in ("noise", "rspm", "prsma", "selection", "accounting"):
        source = (root / f"{name}.py").read_text()
        assert not re.search(r"np\.random|numpy\.random|import random|random\.random", source), name


# ----------------------------------------------------------------- Bernoulli
def test_bernoulli_exact_parameters_and_validation():
    rng = PrivateRandom(2)
    assert all(bernoulli(0, 5, rng) == 0 for _ in range(100))
    assert all(bernoulli(5, 5, rng) == 1 for _ in range(100))
    ones = sum(bernoulli(2, 7, rng) for _ in range(14000))
    assert stats.binomtest(ones, 14000, 2 / 7).pvalue > ALPHA
    for num, den in ((3, 2), (-1, 2), (1, 0)):
        with pytest.raises(ValueError):
            bernoulli(num, den, rng)


@pytest.mark.parametrize("gamma", [Fraction(0), Fraction(1, 3), Fraction(1), Fraction(5, 2), Fraction(7, 2),
                                   Fraction(6)])
def test_bernoulli_exp_matches_exp_minus_gamma(gamma):
    """Section 7.1: BernoulliExp against exp(-gamma), including gamma > 1 and gamma = 0."""
    rng = PrivateRandom(int(gamma * 100))
    trials = 20000
    ones = sum(bernoulli_exp(gamma, rng) for _ in range(trials))
    p = math.exp(-gamma)
    if gamma == 0:
        assert ones == trials
    else:
        assert stats.binomtest(ones, trials, p).pvalue > ALPHA


def test_bernoulli_exp_rejects_floats_and_negatives():
    rng = PrivateRandom(1)
    with pytest.raises(TypeError):
        bernoulli_exp(0.5, rng)
    with pytest.raises(ValueError):
        bernoulli_exp(Fraction(-1, 2), rng)
    assert bernoulli_exp(0, rng) == 1


# ----------------------------------------------------------------- discrete Laplace
@pytest.mark.parametrize("s,t", [(1, 1), (1, 3), (3, 2), (2, 7), (5, 1)])
def test_discrete_laplace_chi_square(s, t):
    """Section 7.1: DLap(s, t) against tanh(lambda/2) exp(-lambda |z|), lambda = s/t."""
    lam = s / t
    rng = PrivateRandom(100 * s + t)
    draws = [discrete_laplace(s, t, rng) for _ in range(20000)]
    width = max(2, int(6 / lam))
    pvalue = chi_square_pvalue(draws, lambda z: dlap_pmf(np.array(z), lam), range(-width, width + 1))
    assert pvalue > ALPHA
    assert abs(np.mean(draws)) < 5 * math.sqrt(2 * math.exp(-lam) / (1 - math.exp(-lam)) ** 2 / len(draws))


def test_discrete_laplace_tail_probability_small_lambda():
    """(F2): P[|eta| >= k] = 2 t^k / (1 + t) at lambda = 1/50 (RSPM-like scale)."""
    lam, k = 1 / 50, 60
    rng = PrivateRandom(8)
    draws = np.array(discrete_laplace_vector(8000, 1, 50, rng))
    t = math.exp(-lam)
    hits = int((np.abs(draws) >= k).sum())
    assert stats.binomtest(hits, len(draws), 2 * t**k / (1 + t)).pvalue > ALPHA


def test_discrete_laplace_validation_and_vector_type():
    rng = PrivateRandom(1)
    for s, t in ((0, 1), (1, 0), (1.5, 2)):
        with pytest.raises(ValueError):
            discrete_laplace(s, t, rng)
    vec = discrete_laplace_vector(4, 1, 10**30, rng)
    assert len(vec) == 4 and all(type(v) is int for v in vec)
    assert max(abs(v) for v in vec) > 2**63  # exact Python integers, far beyond int64
    assert discrete_laplace_vector(0, 1, 1, rng) == []


# ----------------------------------------------------------------- rationals
@pytest.mark.parametrize("x", [0.1, 0.3, 1.0, 2.675, 1e-7, 123.456789, 1 / 3])
def test_to_fraction_down_rounds_down_exactly(x):
    q = to_fraction_down(x)
    assert q.denominator <= 10**6 and 10**6 % q.denominator == 0
    assert q <= Fraction(x) < q + Fraction(1, 10**6)


def test_to_fraction_down_examples():
    assert to_fraction_down(0.3) == Fraction(299999, 10**6)  # the float 0.3 is below 3/10
    assert to_fraction_down(0.5) == Fraction(1, 2)
    assert to_fraction_down(Fraction(1, 3), 10) == Fraction(3, 10)
    assert to_fraction_down(1e-7) == 0
    assert to_fraction_down(-0.5) == Fraction(-1, 2)
    with pytest.raises(ValueError):
        to_fraction_down(float("inf"))
