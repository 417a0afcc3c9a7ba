"""Statistical privacy audit of PRSMA with an adversarial stateless oracle (docs/privacy.md §3, §7).

Two neighbouring datasets differ in one record ``x* = 2`` (replaced by ``0``).
The oracle fails on every instance that contains ``x*`` -- the attack of
docs/privacy.md §1.5, legal under A-stateless because it depends on the instance only
-- and breaks ties adversarially.  PRSMA runs many times on each dataset
with parameters of the general form of Theorem 3.1 (small, so that it runs
fast; large epsilon).  For every event ``E`` of the output space and both
directions, Clopper-Pearson bounds test ``P[M(D) in E] <= e^eps* P[M(D') in E]
+ delta*`` (Bonferroni over all tests): a violation is declared only when the
lower bound of the left side exceeds the upper bound of the right side.

The same audit must *catch* a deliberately broken PRSMA (count noise
removed, or its scale halved), so that it is able to fail.
"""

from __future__ import annotations

import itertools
import math
from collections import Counter
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

import synthdp.mechanisms.prsma as prsma_module
from adversarial_oracle import AdversarialOracle, fails_on_record, lexicographically_largest
from synthdp.oracles.base import QueryInstance
from synthdp.queries import Conjunctions
from synthdp.accounting.ledger import Ledger
from synthdp.core.data import AggregatedData
from synthdp.core.domain import Domain
from synthdp.mechanisms.noise import discrete_laplace
from synthdp.mechanisms.prsma import PRSMAParameters, prsma, prsma_general
from synthdp.mechanisms.randomness import PrivateRandom

DOMAIN = Domain(("a",), (3,))
BASE = Conjunctions.marginals(DOMAIN, 1)
OUTCOMES = [None, *BASE.enumerate()]  # bottom and the three queries
TARGET = 2
FAMILY_ALPHA = 1e-3


def piece_instance(piece: AggregatedData) -> QueryInstance:
    return QueryInstance.build(BASE, piece.codes, piece.counts)


def neighbours(n: int) -> tuple[np.ndarray, np.ndarray]:
    """``D`` holds ``x* = 2`` once; ``D'`` replaces it by ``0`` (replace-one)."""
    rest = [i % 2 for i in range(n - 1)]
    return np.array([[TARGET], *([v] for v in rest)]), np.array([[0], *([v] for v in rest)])


def audit_parameters(*, eps_count: Fraction, K: int, L: int, t0: int, gamma: float, R: int, psi: float,
                     exponent: float) -> PRSMAParameters:
    """Theorem 3.1 general form with pieces of one record and ``eps0`` set by ``psi^2/(2 s eps0^2)``."""
    eps0 = Fraction(psi / math.sqrt(2 * exponent)).limit_denominator(10**6)
    return prsma_general(eps_count=eps_count, K=K, L=L, t0=t0, gamma=gamma, R=R, psi=psi, eps0=eps0, n=K,
                         m=BASE.separator().m, W=1, log_q=math.log(BASE.size()))


def output_counts(records: np.ndarray, params: PRSMAParameters, runs: int, seed: int) -> Counter:
    oracle = AdversarialOracle(fail=fails_on_record([TARGET]), choose=lexicographically_largest, seed=seed)
    counts: Counter = Counter()
    for i in range(runs):
        result = prsma(records, piece_instance, domain=DOMAIN, params=params, oracle=oracle,
                       rng=PrivateRandom(seed * 100_003 + i), ledger=Ledger(params.epsilon, params.delta))
        counts[result.query] += 1
    return counts


def clopper_pearson(k: int, n: int, alpha: float) -> tuple[float, float]:
    lower = 0.0 if k == 0 else stats.beta.ppf(alpha / 2, k, n - k + 1)
    upper = 1.0 if k == n else stats.beta.ppf(1 - alpha / 2, k + 1, n - k)
    return lower, upper


def violations(counts_d: Counter, counts_d2: Counter, runs: int, params: PRSMAParameters) -> list[str]:
    """Events E (and directions) where the data reject P[M(D) in E] <= e^eps* P[M(D') in E] + delta*."""
    events = [set(c) for r in range(1, len(OUTCOMES)) for c in itertools.combinations(OUTCOMES, r)]
    alpha = FAMILY_ALPHA / (2 * len(events))
    found = []
    for event in events:
        for name, a, b in (("D>D'", counts_d, counts_d2), ("D'>D", counts_d2, counts_d)):
            low, _ = clopper_pearson(sum(a[o] for o in event), runs, alpha)
            _, high = clopper_pearson(sum(b[o] for o in event), runs, alpha)
            if low > math.exp(params.eps_star) * high + params.delta_star:
                found.append(f"{name} on {sorted(map(repr, event))}: {low:.3f} > e^eps* {high:.3f} + "
                             f"{params.delta_star:.3f}")
    return found


def run_audit(params: PRSMAParameters, runs: int, seed: int) -> list[str]:
    d, d2 = neighbours(params.n)
    return violations(output_counts(d, params, runs, seed), output_counts(d2, params, runs, seed + 1), runs,
                      params)


# --------------------------------------------------------------------- cheap version (default suite)
CHEAP = dict(eps_count=Fraction(1, 2), K=10, L=5, t0=4, gamma=0.5, R=9, psi=0.1, exponent=9.0)


def test_cheap_audit_parameters_are_meaningful():
    params = audit_parameters(**CHEAP)
    assert params.tau == 1 and params.s == 1 and params.oracle_calls == 90
    assert params.eps_star < 1.0 and params.delta_star < 0.45


def test_prsma_audit_cheap(monkeypatch):
    """No violation in 40 runs per dataset; the variant without count noise is caught in 80."""
    params = audit_parameters(**CHEAP)
    assert run_audit(params, runs=40, seed=1) == []
    monkeypatch.setattr(prsma_module, "discrete_laplace", lambda s, t, rng: 0)
    assert run_audit(params, runs=80, seed=3)


# --------------------------------------------------------------------- heavy version
FULL = dict(eps_count=Fraction(1), K=15, L=10, t0=4, gamma=0.3, R=21, psi=0.1, exponent=12.0)


@pytest.mark.slow
def test_prsma_audit_full(monkeypatch):
    """1000 runs per dataset, (eps*, delta*) ~ (1.23, 0.09): no violation; halving the count-noise scale
    (lambda doubled: e^{2 eps_L} instead of e^{eps_L} on the bottom event) is caught with 300 runs."""
    params = audit_parameters(**FULL)
    assert params.eps_star < 1.25 and params.delta_star < 0.1
    assert run_audit(params, runs=1000, seed=11) == []

    def halved_scale(s: int, t: int, rng: PrivateRandom) -> int:
        return discrete_laplace(2 * s, t, rng)

    monkeypatch.setattr(prsma_module, "discrete_laplace", halved_scale)
    assert run_audit(params, runs=300, seed=13)
