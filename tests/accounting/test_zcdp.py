"""zCDP costs, the filter and the conversions (docs/privacy.md §8.2, §8.4, §8.5; tests of §8.8 item 2)."""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from synthdp.core.errors import InputError, PrivacyError
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.mechanisms.selection import exponential_mechanism
from synthdp.accounting.zcdp import (
    _ORDERS, ZcdpLedger, dp_delta, dp_epsilon, epsilon_for_exponential, exponential_rho, gaussian_rho, pure_rho,
    rho_for_dp,
)

dp_accounting = pytest.importorskip("dp_accounting")
from dp_accounting.rdp import RdpAccountant  # noqa: E402

TABLE = [(1.0, 4.19e-10), (0.1, 4.19e-10), (0.25, 1e-9), (0.5, 1e-6), (2.0, 1e-5), (8.0, 1e-8)]


def test_costs_by_mechanism_and_relation():
    sigma2 = Fraction(25, 2)
    assert gaussian_rho(1, sigma2) == Fraction(1, 25)  # add/remove marginal: Delta2 = 1
    assert gaussian_rho(2, sigma2) == Fraction(2, 25)  # replace-one marginal: Delta2 = sqrt 2
    assert exponential_rho(Fraction(1, 2)) == Fraction(1, 32)
    assert pure_rho(Fraction(1, 2)) == Fraction(1, 8)
    ledger = ZcdpLedger(Fraction(1))
    assert ledger.spend("exponential", Fraction(1, 2), Fraction(0), "add-remove").rho == Fraction(1, 32)
    assert ledger.spend("rspm", Fraction(1, 2), Fraction(0), "add-remove").rho == Fraction(1, 8)
    assert ledger.spend("report-noisy-max", Fraction(1, 2), Fraction(0), "add-remove").rho == Fraction(1, 8)
    assert ledger.spent == Fraction(1, 32) + Fraction(1, 4)
    with pytest.raises(PrivacyError, match="not pure"):
        ledger.spend("partition", Fraction(1, 10), Fraction(1, 10**9), "add-remove")
    with pytest.raises(PrivacyError, match="one relation"):
        ledger.charge("gaussian", Fraction(1, 100), "replace-one")


def test_exponential_charge_matches_the_samplers_exponent():
    """The eps**2/8 charge is only valid for exp(eps u / (2 Delta)); a sampler using exp(eps u / Delta) must fail here."""
    scores = np.array([0, 4], dtype=np.int64)
    eps, sens = Fraction(1), 2
    rng, ledger = PrivateRandom(1), ZcdpLedger(Fraction(10**6))
    picks = np.array([exponential_mechanism(scores, epsilon=eps, sensitivity=sens, rng=rng, ledger=ledger,
                                            relation="add-remove") for _ in range(2000)])
    p1 = 1 / (1 + math.exp(-float(eps) * 4 / (2 * sens)))  # exp(eps u / (2 Delta)): ratio e^1
    assert stats.binomtest(int((picks == 1).sum()), picks.size, p1).pvalue > 1e-4
    assert ledger.events[0].rho == Fraction(1, 8)


def test_epsilon_for_exponential_rounds_down():
    for rho in [Fraction(1, 3), Fraction(7, 10**9), Fraction(2)]:
        eps = epsilon_for_exponential(rho)
        assert exponential_rho(eps) <= rho
        assert exponential_rho(eps + Fraction(1, 10**11)) > rho


@pytest.mark.parametrize("seed", range(5))
def test_adversarial_adaptive_schedule_never_overspends(seed):
    """Whatever a schedule asks for (data- and history-driven, huge, tiny), the ledger's total stays <= budget."""
    gen = np.random.default_rng(seed)
    budget = Fraction(int(gen.integers(1, 1000)), 997)
    ledger = ZcdpLedger(budget)
    refused = 0
    for _ in range(300):
        kind = gen.integers(4)
        if kind == 0:  # exactly what is left: must be accepted
            ask = ledger.remaining
        elif kind == 1:
            ask = ledger.remaining + Fraction(1, 10**15)
        else:
            ask = Fraction(int(gen.integers(1, 10**6)), int(gen.integers(1, 10**6))) * ledger.rho_budget / 50
        before = (ledger.spent, len(ledger.events))
        if ask <= 0:
            continue
        try:
            ledger.charge("gaussian", ask, "add-remove")
        except PrivacyError:
            refused += 1
            assert (ledger.spent, len(ledger.events)) == before  # nothing recorded
        assert ledger.spent <= budget
        assert ledger.spent == sum((e.rho for e in ledger.events), Fraction(0))
    assert refused > 0


def test_conversion_default_formula_is_gamma_squared():
    for eps, delta in TABLE:
        rho = rho_for_dp(eps, delta, tight=False)
        assert float(dp_epsilon(rho, delta, tight=False)) <= eps
        iota = math.log(1 / delta)
        assert math.isclose(float(rho), (eps / (math.sqrt(eps + iota) + math.sqrt(iota))) ** 2, rel_tol=1e-7)


@pytest.mark.parametrize("eps,delta", TABLE)
def test_tight_conversion_against_dp_accounting(eps, delta):
    rho = rho_for_dp(eps, delta)
    assert rho >= rho_for_dp(eps, delta, tight=False)  # never worse than the proved formula
    fine = RdpAccountant(orders=list(_ORDERS))  # the same grid of orders: must not exceed eps
    fine.compose(dp_accounting.ZCDpEvent(float(rho)))
    assert fine.get_epsilon(delta) <= eps * (1 + 1e-12)
    finer = RdpAccountant(orders=list(1 + np.logspace(-4, 7, 100_003)))  # a finer grid: at most a hair lower
    finer.compose(dp_accounting.ZCDpEvent(float(rho)))
    assert finer.get_epsilon(delta) == pytest.approx(eps, rel=1e-7)
    # and back: epsilon and delta of that rho
    assert float(dp_epsilon(rho, delta)) == pytest.approx(eps, rel=1e-6)
    assert float(dp_epsilon(rho, delta)) >= fine.get_epsilon(delta) * (1 - 1e-12)  # same grid, rounded up
    assert float(dp_delta(rho, eps)) <= delta * (1 + 1e-6)


def test_tight_conversion_gains_what_the_note_measured():
    ratio = float(rho_for_dp(1.0, 4.19e-10) / rho_for_dp(1.0, 4.19e-10, tight=False))
    assert 1.15 <= ratio <= 1.45
    assert float(rho_for_dp(1.0, 4.19e-10)) == pytest.approx(0.01427, rel=1e-3)


def test_bad_inputs_are_refused():
    with pytest.raises(InputError, match="delta > 0"):
        rho_for_dp(1.0, 0.0)
    with pytest.raises(InputError, match="rho_budget"):
        ZcdpLedger(0.5)
    with pytest.raises(InputError, match="squared sensitivity"):
        gaussian_rho(0, Fraction(1))
    with pytest.raises(InputError, match="sigma2"):
        gaussian_rho(1, 0.5)
