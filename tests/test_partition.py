"""Partition selection (docs/privacy.md §9): threshold, release law, ledger charge, mapping to missing.

The release law is computed *exactly* from the implementation: the sampler is
intercepted to learn which noise rate it is asked for and for which noise
values a value is released; the probability is then the discrete Laplace tail
at that rate, bounded with certified rationals.
"""

from __future__ import annotations

import decimal
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import synthdp.mechanisms.partition as partition
from synthdp.core.encoding import Encoder
from synthdp.core.errors import InputError, PrivacyError
from synthdp.core.schema import Schema
from synthdp.mechanisms.accounting import ADD_REMOVE, REPLACE_ONE, Ledger, per_round_epsilon
from synthdp.mechanisms.partition import (domain_budget, exp_bounds, learn_domains, select_categories, tail_bounds,
                                          threshold)
from synthdp.mechanisms.randomness import PrivateRandom

CASES = [(Fraction(1, 10), Fraction(1, 10**10)), (Fraction(1), Fraction(1, 10**6)), (Fraction(1, 100), Fraction(1, 10**9)),
         (Fraction(5), Fraction(1, 100)), (Fraction(3, 7), Fraction(1, 3 * 10**12)), (Fraction(20), Fraction(1, 10))]


def _tail(epsilon: Fraction, k: int) -> decimal.Decimal:
    """``t**k / (1 + t)``, ``t = e**-epsilon``, at 80 digits (an implementation independent of the module's)."""
    with decimal.localcontext(decimal.Context(prec=80)):
        t = (-decimal.Decimal(epsilon.numerator) / decimal.Decimal(epsilon.denominator)).exp()
        return t**k / (1 + t)


def _dec(x: Fraction) -> decimal.Decimal:
    with decimal.localcontext(decimal.Context(prec=80)):
        return decimal.Decimal(x.numerator) / decimal.Decimal(x.denominator)


@pytest.mark.parametrize(("epsilon", "delta"), CASES)
def test_threshold_is_one_plus_the_least_k_of_the_formula(epsilon, delta):
    k = threshold(epsilon, delta) - 1
    assert k >= 1 and _tail(epsilon, k) <= _dec(delta)
    assert k == 1 or _tail(epsilon, k - 1) > _dec(delta)


def test_threshold_example_of_section_9():
    assert threshold(Fraction(1, 10), Fraction(1, 10**10)) == 225


@pytest.mark.parametrize("x", [Fraction(0), Fraction(1, 3), Fraction(1), Fraction(227, 10), Fraction(10**6 + 1, 10**4)])
def test_exp_bounds_bracket_the_exponential(x):
    lo, hi = exp_bounds(x)
    with decimal.localcontext(decimal.Context(prec=90)):
        exact = _dec(x).exp()
        assert _dec(lo) <= exact <= _dec(hi) and (_dec(hi) - _dec(lo)) / exact < decimal.Decimal(2) ** -180
    lo_tail, hi_tail = tail_bounds(Fraction(1, 10), 7)
    assert _dec(lo_tail) <= _tail(Fraction(1, 10), 7) <= _dec(hi_tail)


class _Intercepted:
    """Stands in for the sampler: records the requested rate and returns a chosen noise value."""

    def __init__(self, z: int):
        self.z, self.rates = z, []

    def __call__(self, s: int, t: int, rng) -> int:
        self.rates.append(Fraction(s, t))
        return self.z


def _released_with_noise(monkeypatch, count: int, z: int, epsilon, delta, relation=ADD_REMOVE):
    sampler = _Intercepted(z)
    monkeypatch.setattr(partition, "discrete_laplace", sampler)
    ledger = Ledger(Fraction(10), Fraction(1, 10))
    out = select_categories({"v": count}, epsilon=epsilon, delta=delta, rng=PrivateRandom(0), ledger=ledger,
                            relation=relation)
    return out == ("v",), sampler.rates, ledger.events


@pytest.mark.parametrize(("epsilon", "delta"), CASES[:4])
@pytest.mark.parametrize("relation", [ADD_REMOVE, REPLACE_ONE])
def test_a_value_held_once_is_released_with_probability_at_most_delta(monkeypatch, epsilon, delta, relation):
    """Exact: find the noise values that release a count of 1, then bound that tail at the rate actually used."""
    tau = threshold(epsilon, delta)
    window = sorted(set(range(-3, 4)) | set(range(tau - 4, tau + 3)))  # the decision changes once, near tau - 1
    decisions = {z: _released_with_noise(monkeypatch, 1, z, epsilon, delta, relation) for z in window}
    released_from = min(z for z, (released, _, _) in decisions.items() if released)
    assert all(released == (z >= released_from) for z, (released, _, _) in decisions.items())
    rates = {rate for _, rates, _ in decisions.values() for rate in rates}
    assert rates == {epsilon}  # the noise is DLap(eps_p): one draw per value at the charged rate
    assert released_from >= 1 and tail_bounds(epsilon, released_from)[1] <= delta
    factor = 1 if relation == ADD_REMOVE else 2
    events = decisions[0][2]
    assert [(e.epsilon, e.delta, e.relation, e.ahead) for e in events] == [(factor * epsilon, factor * delta,
                                                                              relation, True)]


def test_release_rule_is_noisy_count_at_least_tau(monkeypatch):
    epsilon, delta = Fraction(1, 2), Fraction(1, 10**6)
    tau = threshold(epsilon, delta)
    for count in (1, 2, tau - 1, tau, tau + 5):
        for z in (-2, -1, 0, 1, 2):
            assert _released_with_noise(monkeypatch, count, z, epsilon, delta)[0] == (count + z >= tau)
    assert _released_with_noise(monkeypatch, 0, 10**6, epsilon, delta)[0] is False  # absent values never


def test_frequent_values_are_always_released():
    epsilon, delta = Fraction(1, 10), Fraction(1, 10**10)
    tau = threshold(epsilon, delta)
    count = tau + 2000  # P[not released] = P[Z >= 2001] = t**2001/(1+t) < e**-200
    assert tail_bounds(epsilon, count - tau + 1)[1] < Fraction(1, 10**80)
    counts = {f"v{i}": count for i in range(200)}
    released = select_categories(counts, epsilon=epsilon, delta=delta, rng=PrivateRandom(1),
                                 ledger=Ledger(Fraction(1), Fraction(1, 10**6)))
    assert set(released) == set(counts)


def test_release_frequency_at_the_threshold_matches_the_law():
    """With the real sampler: a count of tau is released iff Z >= 0, probability 1/(1 + e**-eps)."""
    epsilon, delta = Fraction(1), Fraction(1, 10**3)
    tau = threshold(epsilon, delta)
    counts = {f"v{i:04d}": tau for i in range(3000)}
    released = select_categories(counts, epsilon=epsilon, delta=delta, rng=PrivateRandom(7),
                                 ledger=Ledger(Fraction(2), Fraction(1, 100)))
    p = 1 / (1 + np.exp(-1.0))
    assert abs(len(released) - 3000 * p) < 5 * np.sqrt(3000 * p * (1 - p))


def test_domain_budget_shares_and_pure_dp_refusal():
    assert domain_budget(Fraction(1), Fraction(1, 10**8), 4) == (Fraction(1, 40), Fraction(1, 16 * 10**8))
    eps_p, delta_p = domain_budget(Fraction(1), Fraction(1, 10**8), 4, REPLACE_ONE)
    assert (2 * 4 * eps_p, 2 * 4 * delta_p) == (Fraction(1, 10), Fraction(1, 4 * 10**8))
    with pytest.raises(InputError, match=r"needs delta > 0.*Give the categories publicly.*pass a delta"):
        domain_budget(Fraction(1), None, 2)


def test_ledger_composes_spends_ahead_by_basic_composition_and_the_rest_by_zcdp():
    """PS's (eps, delta) spends come first and are never turned into zCDP; the game keeps its zCDP route."""
    ledger = Ledger(Fraction(1), Fraction(1, 10**6))
    ledger.spend("partition-selection", Fraction(1, 10), Fraction(1, 4 * 10**6), ADD_REMOVE, ahead=True)
    eps0 = per_round_epsilon(Fraction(9, 10), Fraction(3, 4 * 10**6), 100)
    for _ in range(100):
        ledger.spend("rspm", eps0, Fraction(0), ADD_REMOVE)
    total = ledger.total()
    assert total.epsilon <= 1 and total.delta <= Fraction(1, 10**6) and "zcdp" in total.method
    assert total.epsilon > Fraction(1, 10) + eps0 * 10  # the ahead part is added as is
    plain = Ledger(Fraction(1), Fraction(1, 10**6))  # the same spends without "ahead": basic only, refused
    plain.spend("partition-selection", Fraction(1, 10), Fraction(1, 4 * 10**6), ADD_REMOVE)
    with pytest.raises(PrivacyError, match="budget exceeded"):
        for _ in range(100):
            plain.spend("rspm", eps0, Fraction(0), ADD_REMOVE)
    with pytest.raises(PrivacyError, match="must come before every other spend"):
        ledger.spend("partition-selection", Fraction(1, 100), Fraction(0), ADD_REMOVE, ahead=True)
    tight = Ledger(Fraction(1), Fraction(1, 10**6))
    with pytest.raises(PrivacyError, match="budget exceeded"):
        tight.spend("partition-selection", Fraction(1, 2), Fraction(2, 10**6), ADD_REMOVE, ahead=True)
    assert tight.events == []


def _table(extra: list[str] | None = None) -> pd.DataFrame:
    rng = np.random.default_rng(3)
    cities = rng.choice(["Oslo", "Rome", "Lima"], size=3000, p=[0.5, 0.3, 0.2]).tolist()
    return pd.DataFrame({"city": cities + (extra or []) + ["Apia"] * 3, "id": [f"p{i}" for i in range(3003 + len(extra or []))]})


def test_learn_domains_charges_each_column_ahead_and_maps_the_rest_to_missing():
    df = _table()
    schema = Schema.from_dataframe(df)
    ledger = Ledger(Fraction(1), Fraction(1, 10**6))
    learned = learn_domains(df, schema, epsilon=Fraction(1), delta=Fraction(1, 10**6), rng=PrivateRandom(0),
                            ledger=ledger)
    assert learned.schema["city"].categories == ("Lima", "Oslo", "Rome")  # rare "Apia" (3 records) is not released
    assert learned.schema["id"].categories == ()  # an ID column releases nothing
    assert [(e.mechanism, e.epsilon, e.delta, e.ahead) for e in ledger.events] == [
        ("partition-selection", Fraction(1, 20), Fraction(1, 8 * 10**6), True)] * 2
    assert (learned.epsilon, learned.delta) == (Fraction(1, 10), Fraction(1, 4 * 10**6))
    codes = Encoder(learned.schema).encode(df)
    assert (codes[-3:] == [3, 0]).all() and (codes[:, 1] == 0).all()
    with pytest.raises(InputError, match="pure DP was requested"):
        learn_domains(df, schema, epsilon=Fraction(1), delta=None, rng=PrivateRandom(0), ledger=ledger)


def test_a_new_value_changes_nothing_downstream_unless_released():
    """D and D plus one record with a new value, same seed: the same released domain, and the new value is
    encoded as missing before anything else sees it (section 9). The new value's own release is the rare event;
    its draw comes last in label order and the seed is fixed, so the comparison is deterministic."""
    epsilon, delta = Fraction(1), Fraction(1, 10**6)
    results = []
    for df in (_table(), _table(["Zurich"])):
        schema = Schema.from_dataframe(df[["city"]])
        ledger = Ledger(epsilon, delta)
        learned = learn_domains(df[["city"]], schema, epsilon=epsilon, delta=delta, rng=PrivateRandom(11),
                                ledger=ledger)
        results.append((learned.schema, [e.to_dict() for e in ledger.events], Encoder(learned.schema).encode(df[["city"]])))
    (schema, events, codes), (schema2, events2, codes2) = results
    assert schema == schema2 and events == events2 and "Zurich" not in schema2["city"].categories
    missing = schema["city"].missing_code
    np.testing.assert_array_equal(codes2, np.insert(codes, 3000, [missing], axis=0))
