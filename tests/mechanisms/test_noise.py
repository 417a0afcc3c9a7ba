"""Exact samplers and the private randomness source (docs/privacy.md §2.6; the tests of §7.1)."""

from __future__ import annotations

import math
import pathlib
import re
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from synthdp.accounting.ledger import to_fraction_down
from synthdp.mechanisms.noise import (bernoulli, bernoulli_exp, bernoulli_exp_array, discrete_laplace, discrete_laplace_array,
                                      discrete_laplace_vector)
from synthdp.mechanisms.randomness import PrivateRandom

ALPHA = 1e-3  # chi-square tests use fixed seeds, so they are deterministic; this only guards the fit
ALPHA_CSPRNG = 1e-6  # unseeded (CSPRNG) runs are not reproducible: keep each test's false-alarm rate tiny


def alpha(seed: int | None) -> float:
    return ALPHA if seed is not None else ALPHA_CSPRNG


def dlap_pmf(z: np.ndarray, lam: float) -> np.ndarray:
    """``tanh(lambda/2) exp(-lambda |z|)`` (docs/privacy.md §1.6)."""
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


def same_law_pvalue(a, b) -> float:
    """Two-sample chi-square (contingency) p-value that integer samples ``a`` and ``b`` share one law."""
    values = np.union1d(a, b)
    table = np.array([[np.count_nonzero(np.asarray(x) == v) for v in values] for x in (a, b)])
    pooled = table.sum(axis=0)
    small = pooled < 10  # pool the sparse tail bins into one
    table = np.column_stack([table[:, ~small], table[:, small].sum(axis=1)]) if small.any() else table
    return stats.chi2_contingency(table).pvalue


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


@pytest.mark.parametrize("n", [3 * 2**62, 2**64 + 1, 5 * 2**130 + 1])
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
    for n, size in ((0, 3), (2**62, 3), (2.5, 3), (5, -1), (5, 2.0)):
        with pytest.raises(ValueError):
            rng.randbelow_array(n, size)


@pytest.mark.parametrize("seed", [None, 3])
@pytest.mark.parametrize("n", [2, 7, 256, 257, 10100, 2**32 + 5])
def test_randbelow_array_is_exact_uniform(seed, n):
    """Seeded (Generator.integers) and CSPRNG (byte rejection, across word widths) arrays are uniform on [0, n)."""
    rng = PrivateRandom(seed)
    draws = rng.randbelow_array(n, 60000)
    assert draws.dtype == np.int64 and draws.shape == (60000,)
    assert draws.min() >= 0 and draws.max() < n
    cells = min(n, 16)  # n // cells-sized blocks, plus the remainder block: exact expected counts
    block = n // cells
    observed = np.bincount(draws // block, minlength=cells + 1)[:cells + 1]
    expected = np.array([block] * cells + [n - cells * block]) / n * len(draws)
    keep = expected > 0
    assert stats.chisquare(observed[keep], expected[keep]).pvalue > alpha(seed)
    assert rng.randbelow_array(n, 0).shape == (0,)


@pytest.mark.parametrize("seed", [None, 4])
def test_randbelow_array_edges_of_range(seed):
    """n = 1 gives zeros; just below 2**62 (64-bit words, acceptance just above 1/2): uniform over thirds."""
    rng = PrivateRandom(seed)
    assert rng.randbelow_array(1, 100).tolist() == [0] * 100
    n = 2**62 - 1
    draws = rng.randbelow_array(n, 9000)
    assert draws.max() < n and len(set(draws.tolist())) == len(draws)
    assert stats.chisquare(np.bincount([3 * v // n for v in draws.tolist()], minlength=3)).pvalue > alpha(seed)


def test_seeded_arrays_are_reproducible():
    """Same seed, same sequence of calls (scalar and array interleaved): same draws."""
    def run(rng):
        return ([rng.randbelow(10**6) for _ in range(5)] + rng.randbelow_array(10**6, 5).tolist()
                + [rng.randbelow(2**100)] + discrete_laplace_array(50, 1, 7, rng).tolist()
                + bernoulli_exp_array(np.arange(50), 9, rng).tolist())
    assert run(PrivateRandom(21)) == run(PrivateRandom(21))
    assert run(PrivateRandom(21)) != run(PrivateRandom(22))


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
    """docs/privacy.md §2.6: privacy-critical code draws only from PrivateRandom (no numpy random, no float noise)."""
    root = pathlib.Path(__file__).resolve().parents[2] / "synthdp" / "mechanisms"
    modules = sorted(path for path in root.glob("*.py") if path.name not in ("__init__.py", "randomness.py"))
    assert len(modules) >= 6
    for path in modules:
        source = path.read_text()
        assert not re.search(r"np\.random|numpy\.random|import random|random\.random", source), path.name


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
    """docs/privacy.md §7.1: BernoulliExp against exp(-gamma), including gamma > 1 and gamma = 0."""
    rng = PrivateRandom(int(gamma * 100))
    trials = 20000
    ones = sum(bernoulli_exp(gamma, rng) for _ in range(trials))
    p = math.exp(-gamma)
    if gamma == 0:
        assert ones == trials
    else:
        assert stats.binomtest(ones, trials, p).pvalue > ALPHA


def test_bernoulli_exp_array_several_parameters_in_one_call():
    """docs/privacy.md §7.1, vectorised: lanes with gamma in {0, 1/3, 1, 5/2, 7, 40, 10**6} in one array, each against
    exp(-gamma) (gamma = 40 has probability 4e-18: never 1 in practice)."""
    gammas = [Fraction(0), Fraction(1, 3), Fraction(1), Fraction(5, 2), Fraction(7), Fraction(40), Fraction(10**6)]
    den = 6
    lanes = 60000
    num = np.repeat([int(g * den) for g in gammas], lanes)
    draws = bernoulli_exp_array(num, den, PrivateRandom(17)).reshape(len(gammas), lanes)
    assert draws.dtype == bool
    for gamma, row in zip(gammas, draws):
        ones = int(row.sum())
        if gamma == 0:
            assert ones == lanes
        elif gamma >= 40:
            assert ones == 0
        else:
            assert stats.binomtest(ones, lanes, math.exp(-gamma)).pvalue > ALPHA


@pytest.mark.parametrize("gamma", [Fraction(2, 7), Fraction(9, 4)])
def test_bernoulli_exp_scalar_and_array_agree_in_law(gamma):
    rng = PrivateRandom(6)
    scalar = [bernoulli_exp(gamma, rng) for _ in range(20000)]
    vector = bernoulli_exp_array(np.full(20000, gamma.numerator), gamma.denominator, rng).astype(int).tolist()
    assert same_law_pvalue(scalar, vector) > ALPHA


def test_bernoulli_exp_array_overflow_fallback_and_shape():
    """den near 2**62: den * k overflows int64 at k = 2 and the surviving lanes finish in Python integers."""
    den = 2**61 + 1
    num = den // 3
    ones = int(bernoulli_exp_array(np.full(20000, num), den, PrivateRandom(8)).sum())
    assert stats.binomtest(ones, 20000, math.exp(-num / den)).pvalue > ALPHA
    assert bernoulli_exp_array(np.zeros((2, 3), dtype=np.int32), 5, PrivateRandom(1)).shape == (2, 3)
    assert bernoulli_exp_array(np.array([], dtype=np.int64), 5, PrivateRandom(1)).shape == (0,)


def test_bernoulli_exp_array_validation():
    rng = PrivateRandom(1)
    for num, den in ((np.array([0.5]), 1), (np.array([-1]), 2), (np.array([1]), 0), (np.array([1]), 2**62),
                     (np.array([1]), 2.0), (np.array([2**64 - 1], dtype=np.uint64), 3)):
        with pytest.raises(ValueError):
            bernoulli_exp_array(num, den, rng)


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
    """docs/privacy.md §7.1: DLap(s, t) against tanh(lambda/2) exp(-lambda |z|), lambda = s/t."""
    lam = s / t
    rng = PrivateRandom(100 * s + t)
    draws = [discrete_laplace(s, t, rng) for _ in range(20000)]
    width = max(2, int(6 / lam))
    pvalue = chi_square_pvalue(draws, lambda z: dlap_pmf(np.array(z), lam), range(-width, width + 1))
    assert pvalue > ALPHA
    assert abs(np.mean(draws)) < 5 * math.sqrt(2 * math.exp(-lam) / (1 - math.exp(-lam)) ** 2 / len(draws))


@pytest.mark.parametrize("seed", [None, 31])
@pytest.mark.parametrize("s,t", [(1, 1), (1, 3), (3, 2), (2, 7), (5, 1)])
def test_discrete_laplace_array_chi_square(seed, s, t):
    """docs/privacy.md §7.1 for the vectorised sampler, seeded and CSPRNG."""
    lam = s / t
    draws = discrete_laplace_array(40000, s, t, PrivateRandom(seed))
    assert draws.dtype == np.int64
    width = max(2, int(6 / lam))
    pvalue = chi_square_pvalue(draws.tolist(), lambda z: dlap_pmf(np.array(z), lam), range(-width, width + 1))
    assert pvalue > alpha(seed)


@pytest.mark.parametrize("seed", [None, 32])
def test_discrete_laplace_array_report_noisy_max_scale(seed):
    """lambda = 1/10100 (RNM with eps = 1/100, N = 50): chi-square over 20 quantile bins of the exact cdf."""
    lam = 1 / 10100
    draws = discrete_laplace_array(40000, 1, 10100, PrivateRandom(seed))
    edges = np.unique(stats.dlaplace.ppf(np.linspace(0.05, 0.95, 19), lam))  # bin i: (edges[i-1], edges[i]]
    expected = np.diff(np.concatenate([[0], stats.dlaplace.cdf(edges, lam), [1]])) * len(draws)
    observed = np.bincount(np.searchsorted(edges, draws), minlength=len(expected))
    assert stats.chisquare(observed, expected).pvalue > alpha(seed)


@pytest.mark.parametrize("s,t", [(1, 3), (2, 7)])
def test_discrete_laplace_scalar_and_array_agree_in_law(s, t):
    rng = PrivateRandom(40 + t)
    scalar = [discrete_laplace(s, t, rng) for _ in range(15000)]
    assert same_law_pvalue(scalar, discrete_laplace_array(15000, s, t, rng).tolist()) > ALPHA


def test_discrete_laplace_array_exact_beyond_int64():
    """U + tV overflowing int64 is computed in Python integers: the law stays exact."""
    t = 2**62 - 1
    s = 2**61  # lambda just above 1/2; V >= 2 (probability e^-2 per lane) overflows U + tV
    lam = s / t
    draws = discrete_laplace_array(20000, s, t, PrivateRandom(12))
    assert draws.dtype == np.int64
    pvalue = chi_square_pvalue(draws.tolist(), lambda z: dlap_pmf(np.array(z), lam), range(-12, 13))
    assert pvalue > ALPHA
    huge = discrete_laplace_array(200, 1, t, PrivateRandom(13))  # s = 1: draws beyond int64 (object dtype)
    assert huge.dtype == object and all(type(v) is int for v in huge) and max(abs(v) for v in huge) > 2**63


def test_discrete_laplace_array_validation_and_scalar_fallback():
    rng = PrivateRandom(1)
    for size, s, t in ((-1, 1, 1), (2, 0, 1), (2, 1, 0), (2.0, 1, 1)):
        with pytest.raises(ValueError):
            discrete_laplace_array(size, s, t, rng)
    assert discrete_laplace_array(0, 1, 1, rng).shape == (0,)
    big = discrete_laplace_array(3, 2**62, 2**62, rng)  # parameters beyond the array range: scalar sampler
    assert big.dtype == np.int64 and big.shape == (3,)


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
