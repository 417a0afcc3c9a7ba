"""The estimator's log-sum-exp (synthdp.methods.measure.estimators._logsumexp) against scipy's, bit for bit.

The graphical model's inference runs on it (docs/privacy.md §8.7); it must give
the very same floats as ``scipy.special.logsumexp`` so that the fitted model,
and every record drawn from it, stays what it was.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy.special import logsumexp

from synthdp.methods.measure.estimators import _logsumexp


def _same(x, y) -> bool:
    return type(x) is type(y) and np.shape(x) == np.shape(y) and np.asarray(x).tobytes() == np.asarray(y).tobytes()


@pytest.mark.parametrize("seed", range(3))
def test_same_bits_as_scipy(seed):
    """Every axis subset (none, all, the empty tuple), ties at the maximum, tiny to huge magnitudes."""
    rng = np.random.default_rng(seed)
    for _ in range(150):
        nd = int(rng.integers(1, 5))
        a = rng.normal(size=tuple(int(s) for s in rng.integers(1, 5, size=nd))) * rng.choice([1e-3, 1.0, 30.0, 700.0])
        if rng.random() < 0.3:
            a = np.round(a)
        for axis in [None, ()] + [c for k in range(1, nd + 1) for c in itertools.combinations(range(nd), k)]:
            assert _same(_logsumexp(a, axis=axis), logsumexp(a, axis=axis)), (a.shape, axis)


def test_edge_cases_go_to_scipy():
    """Infinities, NaN, overflow, a transposed (not C-ordered) array and integers: scipy's answer exactly."""
    cases = [np.array([-np.inf, -np.inf]), np.array([np.inf, 1.0]), np.array([np.nan, 0.0]), np.array([800.0, 800.0]),
             np.arange(12.0).reshape(3, 4).T, np.array([1, 2, 3])]
    for a in cases:
        for axis in (None, (0,)):
            with np.errstate(all="ignore"):
                assert _same(_logsumexp(a, axis=axis), logsumexp(a, axis=axis)), (a, axis)
