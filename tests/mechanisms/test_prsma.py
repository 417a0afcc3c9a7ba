"""PRSMA parameters and behaviour (docs/privacy.md §3; the tests of §7.4-§7.5).

The statistical privacy audit of PRSMA lives in ``tests/privacy/test_audit.py``.
"""

from __future__ import annotations

import dataclasses
import math
from fractions import Fraction

import numpy as np
import pytest

from adversarial_oracle import AdversarialOracle, CertificateStub, fails_on_record
from synthdp.oracles.base import Limits, QueryInstance
from synthdp.oracles.brute import BruteForceOracle
from synthdp.queries import Conjunctions
from synthdp.accounting.ledger import Ledger
from synthdp.core.data import AggregatedData
from synthdp.core.domain import Domain
from synthdp.core.errors import InputError, PrivacyError
from synthdp.mechanisms.prsma import prsma, prsma_add_remove, prsma_general, prsma_parameters
from synthdp.mechanisms.randomness import PrivateRandom

DOMAIN = Domain(("a",), (3,))
BASE = Conjunctions.marginals(DOMAIN, 1)  # 3 queries, m = 2


def piece_instance(piece: AggregatedData) -> QueryInstance:
    """ERM objective ``W s q(D_i)`` with W = 1 (Lemma 2.0(a) on a piece, docs/privacy.md §3.5)."""
    return QueryInstance.build(BASE, piece.codes, piece.counts)


def small_params(n: int = 8, R: int = 10):
    """A tiny general-form instance of Theorem 3.1 (eps* ~ 6, delta* ~ 0.44: for behaviour tests)."""
    return prsma_general(eps_count=Fraction(5), K=4, L=2, t0=1, gamma=0.3, R=R, psi=0.5, eps0=Fraction(1, 20),
                         n=n, m=2, W=1, log_q=math.log(3))


# ----------------------------------------------------------------- parameters (docs/privacy.md §3.6 table)
@pytest.mark.parametrize("delta,L,K,s,R,calls,eps0,error", [
    (Fraction(1, 10**3), 33, 67, 14925, 29830, 2.0e6, 0.0033, 17),
    (Fraction(1, 10**6), 33, 95, 10526, 4.7e7, 4.5e9, 0.0035, 23),
])
def test_section_3_6_table(delta, L, K, s, R, calls, eps0, error):
    """m = 20, n = 1e6, W = 8, psi = 3, eps = 1, ln|Q| <= m ln 2."""
    p = prsma_parameters(Fraction(1), delta, 10**6, 20, 8, psi=3)
    assert (p.L, p.K, p.s) == (L, K, s)
    assert f"{p.R:.1e}" == f"{R:.1e}" and (R > 10**6 or p.R == R)
    assert f"{p.oracle_calls:.1e}" == f"{calls:.1e}"
    assert round(float(p.eps0), 4) == eps0
    assert p.tau == p.t0 and p.eps_count == Fraction(1, 2)
    assert p.lambda0 == p.eps0 / (20 * 17)
    assert p.eps_star <= 1 and p.delta_star <= float(delta)
    # Theorem 3.5's expected-error bound (vacuous, as docs/privacy.md §3.6 says)
    bound = (20**2 * (2 + 1 / 8) * math.sqrt(2 * p.Lambda) / 3 + math.sqrt(2 * math.log(2 ** 21))) / math.sqrt(p.s)
    assert round(bound) == error


@pytest.mark.parametrize("epsilon", [Fraction(1, 10), Fraction(1, 2), Fraction(1), Fraction(2), Fraction(5)])
@pytest.mark.parametrize("delta", [Fraction(1, 10**3), Fraction(1, 10**6), Fraction(1, 10**9)])
@pytest.mark.parametrize("psi", [0.5, 1, 3, 6])
def test_recipe_gives_theorem_3_1_and_rounds_as_written(epsilon, delta, psi):
    """P1-P8: ceilings for L, t0, R; floor for s; eps0 rounded down; eps* <= eps, delta* <= delta."""
    n, m, W = 10**7, 12, 4
    p = prsma_parameters(epsilon, delta, n, m, W, psi=psi)
    eps, dlt = float(epsilon), float(delta)
    assert p.L == math.ceil((1 + 1.01 * math.exp(psi)) / math.expm1(eps / 2))
    assert p.t0 == math.ceil(2 * math.log(4 / dlt) / eps)
    assert p.K == p.L + 2 * p.t0 and p.s == n // p.K and p.tau == p.t0
    assert p.gamma == pytest.approx(min(0.0099, dlt * (p.L + 1) / (4.04 * math.exp(psi))), rel=1e-12)
    assert p.R == math.ceil(math.log(4 * p.K / dlt) / p.gamma)
    exact_eps0 = psi / math.sqrt(2 * p.s * (math.log(8 * p.K / dlt) + m * math.log(2)))
    assert p.eps0 < Fraction(exact_eps0) and float(p.eps0) == pytest.approx(exact_eps0, rel=1e-9)
    assert p.eps_star <= eps and p.delta_star <= dlt
    assert (p.epsilon, p.delta) == (epsilon, delta)


def test_general_form_of_theorem_3_1():
    p = prsma_general(eps_count=Fraction(1, 2), K=10, L=4, t0=3, gamma=0.1, R=50, psi=1.0,
                      eps0=Fraction(1, 100), n=1000, m=3, W=2, log_q=math.log(6))
    assert p.tau == 3 and p.s == 100 and p.oracle_calls == 500
    assert p.eps_star == pytest.approx(0.5 + math.log(1 + (1 + math.e / 0.9) / 4))
    delta = (20 * 6 * math.exp(-1 / (2 * 100 * 1e-4)) + math.exp(-1.5) + 10 * math.exp(-5)
             + 0.1 * math.e / (0.9 * 5))
    assert p.delta_star == pytest.approx(delta)
    assert p.epsilon >= Fraction(p.eps_star) and p.delta >= Fraction(p.delta_star)
    for bad in (dict(K=4, L=4), dict(gamma=1.0), dict(n=5), dict(psi=0)):
        kwargs = dict(eps_count=Fraction(1, 2), K=10, L=4, t0=3, gamma=0.1, R=50, psi=1.0,
                      eps0=Fraction(1, 100), n=1000, m=3, W=2) | bad
        with pytest.raises(InputError):
            prsma_general(**kwargs)


def test_parameters_refuse_too_few_records_and_pure_budgets():
    with pytest.raises(InputError, match="needs n >= K"):
        prsma_parameters(Fraction(1), Fraction(1, 10**3), 50, 20, 8)
    with pytest.raises(InputError, match="delta > 0"):
        prsma_parameters(Fraction(1), 0, 10**6, 20, 8)


# ----------------------------------------------------------------- running PRSMA
RECORDS = np.array([[0], [1], [2], [0], [1], [0], [2], [1]])


def run(oracle, params=None, seed=0, **kwargs):
    params = params or small_params()
    ledger = Ledger(params.epsilon, params.delta)
    result = prsma(RECORDS, piece_instance, domain=DOMAIN, params=params, oracle=oracle, rng=PrivateRandom(seed),
                   ledger=ledger, **kwargs)
    return result, ledger


def test_prsma_with_an_exact_oracle_outputs_a_first_run_answer():
    result, ledger = run(BruteForceOracle())
    assert ledger.events[0].mechanism == "prsma" and ledger.events[0].relation == "replace-one"
    assert result.f == 0 and result.failures == (False,) * 4 and result.survivors == (0, 1, 2, 3)
    assert len(result.oracle_results) == 4 * 10 and all(r.proven for r in result.oracle_results)
    if not result.bottom:
        chosen_first = result.oracle_results[10 * result.chosen]
        assert result.query == chosen_first.solution and BASE.contains(result.query)


def test_prsma_never_outputs_bottom_often_without_failures():
    """Theorem 3.5: with a never-failing oracle, P[bottom] = P[Z >= tau] (here tau = 1, eps_L = 5)."""
    bottoms = sum(run(BruteForceOracle(), seed=s)[0].bottom for s in range(40))
    assert bottoms <= 3


@pytest.mark.parametrize("defect", ["suboptimal", "bound_above", "unproven", "outside_class"])
def test_uncertified_answers_count_as_fail(defect):
    """docs/privacy.md §7.4: certificate defects are FAILs; every piece fails at its first run, so f = K and bottom."""
    result, _ = run(CertificateStub(defect))
    assert result.bottom and result.f == 4 and result.failures == (True,) * 4 and result.survivors == ()
    assert len(result.oracle_results) == 4 and all(r.failed for r in result.oracle_results)


def test_failing_piece_is_abandoned_and_excluded():
    """An oracle that fails on instances holding record 2 (A-stateless, aimed at one person)."""
    records = np.array([[2], [0], [1], [0], [1], [0], [1], [0]])
    params = small_params(n=8)
    ledger = Ledger(params.epsilon, params.delta)
    oracle = AdversarialOracle(fail=fails_on_record([2]))
    result = prsma(records, piece_instance, domain=DOMAIN, params=params, oracle=oracle, rng=PrivateRandom(4),
                   ledger=ledger)
    assert result.f == 1 and len(result.survivors) == 3
    failed_piece = result.failures.index(True)
    assert failed_piece not in result.survivors and result.chosen != failed_piece
    assert len(result.oracle_results) == 3 * 10 + 1  # abandoned at its first FAIL


def test_refusals_happen_before_spending():
    params = small_params(R=30)  # 120 planned calls
    with pytest.raises(InputError, match="max_oracle_calls"):
        run(BruteForceOracle(), params, max_oracle_calls=100)
    with pytest.raises(InputError, match="A-stateless"):
        run(BruteForceOracle(), params, limits=Limits(time_limit=1.0))
    result, ledger = run(BruteForceOracle(), params, max_oracle_calls=100, insist=True,
                         limits=Limits(work_limit=1000.0))
    assert len(ledger.events) == 1 and len(result.oracle_results) == 120
    with pytest.raises(InputError, match="n=8"):
        prsma(RECORDS[:5], piece_instance, domain=DOMAIN, params=small_params(), oracle=BruteForceOracle(),
              rng=PrivateRandom(1), ledger=Ledger(10, Fraction(99, 100)))
    with pytest.raises(PrivacyError):  # the ledger refuses: nothing runs
        prsma(RECORDS, piece_instance, domain=DOMAIN, params=small_params(), oracle=BruteForceOracle(),
              rng=PrivateRandom(1), ledger=Ledger(1, Fraction(1, 2)))


# ----------------------------------------------------------------- add/remove (docs/privacy.md §3.8)
def test_add_remove_wrapper_releases_a_size_then_runs_prsma():
    records = np.array([[i % 3] for i in range(200)])
    ledger = Ledger(Fraction(20), Fraction(1, 2))
    out = prsma_add_remove(records, piece_instance, domain=DOMAIN, epsilon=Fraction(20), delta=Fraction(1, 2),
                           m=2, W=1, psi=0.1, oracle=BruteForceOracle(), rng=PrivateRandom(3), ledger=ledger)
    event = ledger.events[0]
    assert (event.mechanism, event.relation, event.epsilon, event.delta) == \
        ("prsma-add-remove", "add-remove", Fraction(20), Fraction(1, 2))
    shift = math.ceil(math.log(20) / 2)  # Delta_0 = ceil(ln(1/delta_0) / eps_n)
    assert abs(out.nu - (200 - shift)) <= 3
    assert out.prsma.params.n == out.nu and out.prsma.params.eps_count == Fraction(9)
    assert out.prsma.params.delta < Fraction(45, 100) * Fraction(math.exp(-2)) and out.query == out.prsma.query


def test_add_remove_wrapper_outputs_bottom_when_the_size_is_too_small():
    records = np.array([[0], [1], [2]])
    out = prsma_add_remove(records, piece_instance, domain=DOMAIN, epsilon=Fraction(20), delta=Fraction(1, 2),
                           m=2, W=1, psi=0.1, oracle=BruteForceOracle(), rng=PrivateRandom(3),
                           ledger=Ledger(Fraction(20), Fraction(1, 2)))
    assert out.query is None and out.prsma is None and out.nu < 3


# ----------------------------------------------------------------- the exact-oracle law (Theorem 3.5)
def _law_params():
    """tau = K - L - t0 = 1 with eps_L = 1: bottom has probability e^-1 / (1 + e^-1) = 0.269.

    lambda_0 = eps0 / (m (2W + 1)) = 1, so the piece's counts matter against
    the noise.  Such an eps0 makes Theorem 3.1's delta* vacuous (> 1); only
    the output law is under test, so the ledger gets a nominal delta.
    """
    params = prsma_general(eps_count=Fraction(1), K=4, L=2, t0=1, gamma=0.3, R=2, psi=0.5, eps0=Fraction(6),
                           n=8, m=2, W=1, log_q=math.log(3))
    return dataclasses.replace(params, delta=Fraction(1, 2))


def _outcomes(exact_oracle: bool, draws: int) -> dict:
    params = _law_params()
    rng = PrivateRandom(11 if exact_oracle else 12)
    counts: dict = {}
    for _ in range(draws):
        ledger = Ledger(params.epsilon, params.delta)
        result = prsma(RECORDS, piece_instance, domain=DOMAIN, params=params, oracle=BruteForceOracle(), rng=rng,
                       ledger=ledger, exact_oracle=exact_oracle)
        key = "bottom" if result.bottom else str(result.query)
        counts[key] = counts.get(key, 0) + 1
    return counts


def test_exact_oracle_law_matches_full_prsma():
    """docs/privacy.md §3.5: with a never-failing oracle, one call per run gives PRSMA's output law.

    Two-sample chi-square over {bottom, the 3 queries}, 1,500 draws each (the
    full runs make K R = 8 calls each).  It fails if the sampler drops bottom,
    solves the whole data instead of one piece, or draws the piece wrongly.
    """
    from scipy.stats import chi2_contingency

    full, law = _outcomes(False, 1500), _outcomes(True, 1500)
    keys = sorted(set(full) | set(law))
    assert len(keys) == 4
    _, p_value, _, _ = chi2_contingency([[full.get(k, 0) for k in keys], [law.get(k, 0) for k in keys]])
    assert p_value > 1e-3, (full, law)
    bottom = math.exp(-1) / (1 + math.exp(-1))
    for counts in (full, law):
        assert abs(counts["bottom"] / 1500 - bottom) < 0.05


def test_exact_oracle_law_makes_one_call_and_stops_on_a_fail():
    params = _law_params()
    ledger = Ledger(params.epsilon, params.delta)
    results = [prsma(RECORDS, piece_instance, domain=DOMAIN, params=params, oracle=BruteForceOracle(),
                     rng=PrivateRandom(s), ledger=Ledger(params.epsilon, params.delta), exact_oracle=True)
               for s in range(20)]
    assert all(len(r.oracle_results) == (0 if r.bottom else 1) for r in results)
    assert any(not r.bottom for r in results)
    with pytest.raises(InputError, match="without limits"):
        prsma(RECORDS, piece_instance, domain=DOMAIN, params=params, oracle=BruteForceOracle(), rng=PrivateRandom(0),
              ledger=ledger, limits=Limits(work_limit=10.0), exact_oracle=True)
    assert ledger.events == []
    stopped = 0
    for seed in range(10):
        try:
            result = prsma(RECORDS, piece_instance, domain=DOMAIN, params=params, oracle=CertificateStub("unproven"),
                           rng=PrivateRandom(seed), ledger=Ledger(params.epsilon, params.delta), exact_oracle=True)
        except PrivacyError as err:
            assert "release stops" in str(err)
            stopped += 1
        else:
            assert result.bottom and result.oracle_results == ()  # only bottom is reached without a call
    assert stopped >= 5


def test_exact_oracle_law_stops_on_an_out_of_range_instance(monkeypatch):
    """The one FAIL an unlimited exact oracle can return: coefficients beyond its integer range."""
    import synthdp.mechanisms.rspm as rspm_module

    monkeypatch.setattr(rspm_module, "solver_integer_limit", lambda oracle: 1)
    params = _law_params()
    outcomes = []
    for seed in range(10):
        try:
            result = prsma(RECORDS, piece_instance, domain=DOMAIN, params=params, oracle=BruteForceOracle(),
                           rng=PrivateRandom(seed), ledger=Ledger(params.epsilon, params.delta), exact_oracle=True)
            outcomes.append("bottom" if result.bottom else "answer")
        except PrivacyError as err:
            assert "integer range" in str(err)
            outcomes.append("stopped")
    assert "answer" not in outcomes and "stopped" in outcomes
