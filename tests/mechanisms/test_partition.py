"""Partition selection (docs/privacy.md §9): threshold, release law, ledger charge, mapping to missing.

The release law is computed *exactly* from the implementation: the sampler is
intercepted to learn which noise rate it is asked for and for which noise
values a value is released; the probability is then the discrete Laplace tail
at that rate, bounded with certified rationals.
"""

from __future__ import annotations

import decimal
import json
import re
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import synthdp
import synthdp.mechanisms.partition as partition
from synthdp.core.encoding import Encoder
from synthdp.core.errors import InputError, PrivacyError, SchemaError
from synthdp.core.owner import OwnerWarning
from synthdp.core.schema import Schema
from synthdp.accounting.ledger import ADD_REMOVE, REPLACE_ONE, Ledger, per_round_epsilon
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


# --------------------------------------------------------------------------
# Gaussian partition selection of several columns (docs/privacy.md §10.5)
# --------------------------------------------------------------------------
def _gaussian_tail_decimal(sigma2: Fraction, k: int) -> decimal.Decimal:
    """``P[Z >= k]`` for ``N_Z(0, sigma2)`` at 50 digits by direct summation (independent of the module)."""
    with decimal.localcontext(decimal.Context(prec=50)):
        s2 = _dec(sigma2)
        span = int(60 * float(sigma2) ** 0.5) + 60
        w = [(-decimal.Decimal(z * z) / (2 * s2)).exp() for z in range(0, max(span, k) + span)]
        total = w[0] + 2 * sum(w[1:span])
        return sum(w[k:k + span]) / total


@pytest.mark.parametrize(("sigma2", "k"), [(Fraction(5416750, 1000), 487), (Fraction(25), 12), (Fraction(3, 2), 4)])
def test_gaussian_tail_bounds_the_exact_discrete_tail_tightly(sigma2, k):
    exact = float(_gaussian_tail_decimal(sigma2, k))
    assert exact <= partition.gaussian_tail(sigma2, k) <= exact * (1 + 1e-8)


def test_joint_threshold_worked_number_and_least():
    sel = partition.joint_selection(rho=Fraction(12, 1000), delta=Fraction(25, 10**11), columns=13)
    assert sel.sigma2 == Fraction(21667, 4) and sel.threshold == 488 and sel.rho == Fraction(13) / (2 * sel.sigma2)
    assert sel.rho <= Fraction(12, 10000)
    assert 13 * _gaussian_tail_decimal(sel.sigma2, 487) <= _dec(sel.delta)
    assert 13 * _gaussian_tail_decimal(sel.sigma2, 486) > _dec(sel.delta)
    replace_one = partition.joint_selection(rho=Fraction(12, 1000), delta=Fraction(25, 10**11), columns=13,
                                            relation=REPLACE_ONE)
    assert replace_one.rho == Fraction(13) / replace_one.sigma2 <= Fraction(12, 10000)


def test_joint_selection_keeps_a_value_held_by_two_percent_of_26000_rows_at_eps_1():
    from synthdp.accounting.zcdp import rho_for_dp

    rho = rho_for_dp(Fraction(1), Fraction(3, 4 * 10**9))
    sel = partition.joint_selection(rho=rho, delta=Fraction(1, 4 * 10**9), columns=9)
    assert sel.threshold < 0.02 * 26_000 - 2.5 * float(sel.sigma2) ** 0.5  # kept with probability > 0.99


def _joint(df, seed=0, monkeypatch=None):
    from synthdp.accounting.zcdp import ZcdpLedger

    schema = Schema.from_dataframe(df)
    sel = partition.joint_selection(rho=Fraction(1, 10), delta=Fraction(1, 10**6), columns=len(schema.to_learn))
    ledger = ZcdpLedger(Fraction(1, 10))
    learned = partition.learn_domains_jointly(df, schema, selection=sel, rng=PrivateRandom(seed), ledger=ledger)
    return sel, ledger, learned


def test_joint_selection_charges_the_filter_first_and_maps_the_rest_to_missing():
    df = pd.DataFrame({"a": ["x"] * 300 + ["rare"] * 2, "b": ["u"] * 150 + ["v"] * 152})
    sel, ledger, learned = _joint(df)
    assert [(e.mechanism, e.rho) for e in ledger.events] == [("gaussian-partition-selection", sel.rho)]
    assert learned.rho == sel.rho and learned.filter_delta == sel.delta and learned.epsilon == 0
    assert learned.schema["a"].categories == ("x",) and learned.schema["b"].categories == ("u", "v")
    codes = Encoder(learned.schema).encode(df)
    assert (codes[300:, 0] == learned.schema["a"].missing_code).all()


def test_a_pair_present_once_is_kept_with_probability_at_most_p(monkeypatch):
    """Intercepted sampler: the values of Z for which a count of 1 is kept are exactly Z >= tau - 1."""
    seen = []

    def fake(size, sigma2, rng):
        seen.append(sigma2)
        return np.full(size, fake.z, dtype=np.int64)

    monkeypatch.setattr("synthdp.mechanisms.partition.discrete_gaussian_array", fake)
    df = pd.DataFrame({"a": ["once"]})
    sel = partition.joint_selection(rho=Fraction(1, 10), delta=Fraction(1, 10**6), columns=1)
    for z in range(sel.threshold - 4, sel.threshold + 2):
        fake.z = z
        _, _, learned = _joint(df)
        assert (learned.schema["a"].categories == ("once",)) == (1 + z >= sel.threshold)
    assert set(seen) == {sel.sigma2}
    assert partition.gaussian_tail(sel.sigma2, sel.threshold - 1) <= float(sel.delta)


def test_joint_selection_neighbours_differ_only_by_the_new_value():
    df = pd.DataFrame({"a": ["x"] * 400 + ["y"] * 5, "b": ["u"] * 405})
    extra = pd.concat([df, pd.DataFrame({"a": ["new"], "b": ["u"]})], ignore_index=True)
    for seed in range(5):
        ours, theirs = _joint(df, seed)[2], _joint(extra, seed)[2]
        assert ours.schema == theirs.schema  # 'new' is released only with probability <= p (not at these seeds)
        assert (ours.rho, ours.filter_delta) == (theirs.rho, theirs.filter_delta)


def test_a_threshold_above_the_rows_is_refused_before_any_spend_and_a_high_one_warned():
    import synthdp

    df = pd.DataFrame({"city": ["Oslo", "Rome"] * 50, "x": np.arange(100) % 7})
    with pytest.raises(InputError, match=r"needs a value to be held by about \d+ rows .* the table has 100 rows: "
                                         r"nothing would be kept"):
        synthdp.generate_synthetic(df, "marginals:2", epsilon=1.0, delta=1e-9, categorical=["x"],
                                   categories={"x": list(range(7))}, random_state=0, progress=False)
    big = pd.DataFrame({"city": ["Oslo", "Rome"] * 200, "x": np.arange(400) % 7})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = synthdp.generate_synthetic(big, "marginals:2", epsilon=1.0, delta=1e-9, categorical=["x"],
                                            categories={"x": list(range(7))}, random_state=0, progress=False)
    few = [w for w in caught if re.search(r"of the 400 rows: at most \d value\(s\) per column can be kept",
                                          str(w.message))]
    assert [w.category for w in few] == [OwnerWarning]  # the owner's eyes only: it holds the private row count
    released = json.dumps(result.report.to_dict()) + result.report.summary()
    assert not any("per column can be kept" in w for w in result.report.release.warnings)  # n stays out
    assert "per column can be kept" not in released and "400 rows" not in released
    assert "threshold" in result.report.release.plan["domains"]["reason"]


def test_the_threshold_is_stated_before_anything_is_spent(monkeypatch, capsys):
    import synthdp
    from synthdp.mechanisms import partition as part

    def stop(*args, **kwargs):
        raise RuntimeError("stopped at the first private step")

    monkeypatch.setattr(part, "learn_domains_jointly", stop)
    df = pd.DataFrame({"city": ["Oslo", "Rome"] * 400, "x": np.arange(800) % 7})
    with pytest.raises(RuntimeError, match="stopped"):
        synthdp.generate_synthetic(df, "marginals:2", epsilon=1.0, delta=1e-9, categorical=["x"],
                                   categories={"x": list(range(7))}, progress=True)
    assert re.search(r"learning the categories of \['city'\] privately .*: a value is kept when about \d+ rows "
                     r"hold it", capsys.readouterr().err)


def test_joint_selection_for_units_of_k_rows():
    """docs/privacy.md §10.6: rho = k**2 J / (2 sigma2), delta = k J P[Z >= tau - k]."""
    one = partition.joint_selection(rho=Fraction(12, 1000), delta=Fraction(25, 10**11), columns=13)
    two = partition.joint_selection(rho=Fraction(12, 1000), delta=Fraction(25, 10**11), columns=13,
                                    contribution_bound=2)
    assert two.rho == Fraction(4 * 13) / (2 * two.sigma2) <= Fraction(12, 10000) and two.sigma2 >= 4 * one.sigma2 - 1
    assert 26 * partition.gaussian_tail(two.sigma2, two.threshold - 2) <= float(two.delta)
    assert 26 * partition.gaussian_tail(two.sigma2, two.threshold - 3) > float(two.delta)


def test_a_column_to_learn_with_a_public_dtype_is_planned_and_written_back_in_it():
    """A schema file may give a column to learn its output dtype (an integer code such as education-num): the
    placeholder the plan is sized on is text, and the learned labels are written back in the public dtype."""
    from synthdp.core.schema import Attribute

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"edu": rng.choice([9, 10, 13], 3000), "g": rng.choice(["a", "b"], 3000)})
    schema = Schema((Attribute("edu", "categorical", missing=True, dtype="int64", origin="learn"),
                     Attribute("g", "categorical", categories=("a", "b"))))
    assert partition.placeholder_schema(schema)["edu"].categories == (partition.PLACEHOLDER,)
    result = synthdp.generate_synthetic(df, "marginals:2", schema=schema, epsilon=1, delta=1e-9, random_state=0,
                                        progress=False)
    assert result.schema["edu"].categories == ("9", "10", "13") and result.schema["edu"].dtype == "int64"
    assert result.data["edu"].dtype == "Int64" and set(result.data["edu"].dropna()) <= {9, 10, 13}
    odd = df.astype({"edu": object})
    odd.loc[7, "edu"] = "X"  # could never be a category of an integer column: refused before anything is spent
    with pytest.raises(SchemaError, match=r"value 'X' in row 7, column 'edu' does not read as int64, the column's "
                                          r"public dtype") as refused:
        synthdp.generate_synthetic(odd, "marginals:2", schema=schema, epsilon=1, delta=1e-9, progress=False)
    assert "charged" not in str(refused.value)


@pytest.mark.parametrize("low, guess, first", [(2, 2, 2), (2, 5, 9), (2, 40, 3), (3, 1, 1000), (2, 1000, 417)])
def test_least_passing_finds_the_least_threshold_from_any_guess(low, guess, first):
    """The threshold search of Gaussian partition selection: the least ``t >= low`` that passes a monotone test,
    checked against a scan, whether the guess is below, at or above it."""
    from synthdp.mechanisms.partition import least_passing

    calls = []

    def passes(t):
        calls.append(t)
        return t >= first

    assert least_passing(passes, low=low, guess=guess) == max(first, low)
    assert len(calls) < 30
