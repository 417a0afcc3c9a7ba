"""Private bounds on a public log-2 grid (docs/privacy.md §10.4): grid, rate, hull, threshold, ledger, refusal."""

from __future__ import annotations

import json
import math
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import synthdp
import synthdp.mechanisms.bounds as bounds
from synthdp.core.errors import InputError
from synthdp.core.owner import OwnerWarning
from synthdp.core.schema import Schema
from synthdp.core.tallies import Tallies
from synthdp.accounting.ledger import ADD_REMOVE, REPLACE_ONE, Ledger
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.accounting.zcdp import ZcdpLedger


def test_the_grid_partitions_the_line():
    edges = bounds.bucket_edges()
    assert len(edges) - 1 == 105 and edges[0] == -np.inf and edges[-1] == np.inf and (np.diff(edges) > 0).all()
    for x in [-1e300, -2.0**41, -3.0, -1.0, -0.5, -2.0**-11, 0.0, 2.0**-11, 2.0**-10, 1.0, 1.5, 2.0, 1e12, 1e300]:
        j = bounds.bucket_of(np.array([x]))[0]
        assert edges[j] <= x < edges[j + 1]
    assert bounds.bucket_of(np.array([2.0, 4.0]))[0] + 1 == bounds.bucket_of(np.array([4.0]))[0]


class _Noise:
    def __init__(self, values):
        self.values, self.calls = values, []

    def __call__(self, m, s, t, rng):
        self.calls.append((m, s, t))
        return list(self.values(m))


def test_every_bucket_is_noised_at_the_rate_and_the_hull_is_kept(monkeypatch):
    noise = _Noise(lambda m: [0] * m)
    monkeypatch.setattr(bounds, "discrete_laplace_vector", noise)
    eps = Fraction(1, 10)
    tau = bounds.range_threshold(eps)
    values = np.concatenate([np.full(tau, 3.0), np.full(tau - 1, 100.0), np.full(tau, 40.0)])
    lo, hi = bounds.noisy_range(values, epsilon=eps, rng=PrivateRandom(0), integer=False)
    assert (lo, hi) == (2.0, 64.0)  # [2, 4) and [32, 64) pass; [64, 128) misses by one
    assert noise.calls == [(105, 1, 10)]
    assert bounds.noisy_range(values, epsilon=eps, rng=PrivateRandom(0), integer=True) == (2.0, 64.0)
    huge = np.full(tau, 1e15)
    assert bounds.noisy_range(huge, epsilon=eps, rng=PrivateRandom(0), integer=False) == (2.0**41 - 1, 2.0**41)  # cap
    assert bounds.noisy_range(np.array([]), epsilon=eps, rng=PrivateRandom(0), integer=True) == (0.0, 1.0)


def test_an_integer_column_keeps_the_integers_its_buckets_hold(monkeypatch):
    """Zero's bucket is [-2**-10, 2**-10): an integer hull from it starts at 0, never at -1 (a diameter of -1),
    and one that ends there ends at 0, never at 1."""
    monkeypatch.setattr(bounds, "discrete_laplace_vector", _Noise(lambda m: [0] * m))
    eps = Fraction(1, 10)
    tau = bounds.range_threshold(eps)
    values = np.concatenate([np.zeros(tau), np.full(tau, 100.0)])
    assert bounds.noisy_range(values, epsilon=eps, rng=PrivateRandom(0), integer=True) == (0.0, 128.0)
    assert bounds.noisy_range(-values, epsilon=eps, rng=PrivateRandom(0), integer=True) == (-128.0, 0.0)
    assert bounds.noisy_range(np.zeros(tau), epsilon=eps, rng=PrivateRandom(0), integer=True) == (0.0, 1.0)
    fractions = np.full(tau, 2.0**-5)  # [2**-5, 2**-4) holds no integer: the public fallback, not (1, 2)
    assert bounds.noisy_range(fractions, epsilon=eps, rng=PrivateRandom(0), integer=True) == (0.0, 1.0)
    huge = np.full(tau, 1e15)  # only the overflow bucket: one cell wide, inside the cap
    assert bounds.noisy_range(huge, epsilon=eps, rng=PrivateRandom(0), integer=True) == (2.0**41 - 1, 2.0**41)


@pytest.mark.parametrize("outside,warned", [(20, True), (10, False)])
def test_values_outside_learned_bounds_warn_the_owner_with_their_share(outside, warned):
    values = np.r_[np.linspace(2.0, 63.0, 1000 - outside), np.full(outside, 100.0)]
    df = pd.DataFrame({"x": values})
    schema = Schema.from_dataframe(df, learn_bounds=["x"])
    learned = bounds.LearnedBounds(schema.with_bounds({"x": (2.0, 63.0)}), ("x",), Fraction(0), Fraction(0), 0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        bounds.warn_clipped(Tallies.of_frame(df, schema), learned, epsilon=1.0)
    texts = [str(w.message) for w in caught if w.category is OwnerWarning]
    assert len(texts) == warned  # 2% of the values is over the share; 1% is not
    assert all(t.startswith("column 'x': 20 of its 1000 present values (2.0%) are outside its privately learned "
                            "bounds [2, 63] and are clipped to them") for t in texts)


def test_an_empty_bucket_passes_only_through_its_noise(monkeypatch):
    eps = Fraction(1, 10)
    tau = bounds.range_threshold(eps)
    noise = _Noise(lambda m: [tau] + [0] * (m - 1))  # the noise alone lifts the lowest (empty) bucket
    monkeypatch.setattr(bounds, "discrete_laplace_vector", noise)
    lo, _ = bounds.noisy_range(np.full(tau, 3.0), epsilon=eps, rng=PrivateRandom(0), integer=False)
    assert lo == -(2.0**41)


def test_threshold_is_public_and_the_failure_bound_holds():
    eps = Fraction(1, 20)
    tau = bounds.range_threshold(eps)
    assert tau == math.ceil(math.log(105 / 0.002) / 0.05)
    t = math.exp(-0.05)
    assert 105 * t**tau / (1 + t) <= float(bounds.FAILURE)  # every empty bucket together (§1.6 (F2))


@pytest.mark.parametrize("relation", [ADD_REMOVE, REPLACE_ONE])
def test_ledger_charges_before_the_noise(relation):
    df = pd.DataFrame({"x": np.arange(1000.0)})
    schema = Schema.from_dataframe(df, learn_bounds=["x"])
    assert schema.to_bound == ("x",) and schema["x"].dtype == "float64"
    factor = 1 if relation == ADD_REMOVE else 2
    ledger = Ledger(Fraction(3), Fraction(0))
    out = bounds.learn_bounds(df, schema, epsilon=Fraction(1), rng=PrivateRandom(0), ledger=ledger, relation=relation)
    charged = [(e.mechanism, e.epsilon, e.ahead) for e in ledger.events]
    assert charged == [("private-bounds", factor * Fraction(1), True)]
    assert out.schema["x"].bounds[0] <= 16 and out.schema["x"].bounds[1] == 1024 and not out.schema.to_bound
    zcdp = ZcdpLedger(Fraction(1))
    out = bounds.learn_bounds(df, schema, epsilon=Fraction(1, 10), rng=PrivateRandom(0), ledger=zcdp,
                              relation=relation)
    assert [e.rho for e in zcdp.events] == [(factor * Fraction(1, 10)) ** 2 / 2] and out.rho == zcdp.spent


def test_end_to_end_and_refusal_without_delta(monkeypatch):
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"amount": np.round(rng.lognormal(5, 1, 3000), 2), "g": rng.choice(["a", "b"], 3000)})
    with pytest.warns(OwnerWarning, match=r"column 'amount': \d+ of its 3000 present values \(\d+\.\d%\) are "
                                         r"outside its privately learned bounds"):
        result = synthdp.generate_synthetic(df, "marginals:2", epsilon=1.0, delta=1e-9, learn_bounds=["amount"],
                                            categories={"g": ["a", "b"]}, random_state=0, progress=False)
    released = json.dumps(result.report.to_dict()) + result.report.summary()
    assert "present values" not in released and "3000" not in released  # the owner's eyes only
    lo, hi = result.schema["amount"].bounds
    assert f"bounds: no public bounds (learn_bounds): 'amount' [{lo:g}, {hi:g}], learned" in result.report.summary()
    assert result.data["amount"].between(lo, hi).all() and "values outside clipped" in \
        result.report.release.plan["bounds"]["reason"]
    import synthdp.mechanisms.noise as noise

    monkeypatch.setattr(noise, "discrete_laplace", lambda *a: (_ for _ in ()).throw(AssertionError("noise")))
    with pytest.raises(InputError, match=r"columns \['amount'\] have no public bounds, and learning them privately "
                                         r".* needs a delta"):
        synthdp.generate_synthetic(df, "marginals:2", epsilon=1.0, learn_bounds=["amount"], method="game",
                                   categories={"g": ["a", "b"]}, progress=False)


def test_units_of_k_rows_noise_at_eps_over_k(monkeypatch):
    noise = _Noise(lambda m: [0] * m)
    monkeypatch.setattr(bounds, "discrete_laplace_vector", noise)
    df = pd.DataFrame({"x": np.arange(1000.0)})
    ledger = Ledger(Fraction(3), Fraction(0), contribution_bound=2)
    bounds.learn_bounds(df, Schema.from_dataframe(df, learn_bounds=["x"]), epsilon=Fraction(1), rng=PrivateRandom(0),
                        ledger=ledger)
    assert noise.calls == [(105, 1, 2)] and [e.epsilon for e in ledger.events] == [Fraction(1)]
