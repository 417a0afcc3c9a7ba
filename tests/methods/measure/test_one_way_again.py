"""The ordered columns' one-way marginals measured again when the released total is small (docs/privacy.md §13, "The
numeric columns' one-way marginals again"): decided from released and public values only, never the true number of
records, and charged within what the covering step has left."""

from __future__ import annotations

import math
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import synthdp
from synthdp.accounting.zcdp import ZcdpLedger
from synthdp.core.data import AggregatedData
from synthdp.core.domain import Domain
from synthdp.core.errors import InputError
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.methods.measure import algorithm as measure_module
from synthdp.methods.measure import covering_step
from synthdp.methods.measure.algorithm import measure
from synthdp.methods.measure.coverage import one_way_shares, sharpens_one_ways
from synthdp.methods.measure.noise_family import GaussianNoise
from synthdp.methods.measure.settings import MeasureOptions
from tests.methods.measure.test_measure import OPTIONS, table

#: ``b`` and ``d`` are ordered (3 and 4 ordered cells), the rest categorical.
DOMAIN = Domain(("a", "b", "c", "d", "e"), (2, 3, 2, 4, 2), ordered=(0, 3, 0, 4, 0))
ORDERED = [(1,), (3,)]
BUDGET = Fraction(1, 100)


def data(n: int = 400) -> AggregatedData:
    return AggregatedData.from_codes(DOMAIN, table(n).expand())


def first_sd() -> float:
    """The noise deviation per cell of the first one-way measurements of a run on :data:`DOMAIN` at
    :data:`BUDGET` (public: the plan's scale), read off an unintercepted run's release."""
    release = measure(data(), "marginals:3", budget=BUDGET, relation="add-remove", ledger=ZcdpLedger(BUDGET),
                      rng=PrivateRandom(0), options=OPTIONS, progress=False, n_rows=50)
    scale = next(m.sigma2 for m in release.measurements if m.selected_by == "initial")
    return math.sqrt(GaussianNoise("add-remove").variance(scale))


def again(monkeypatch, table_data: AggregatedData, released_total: float, options=OPTIONS):
    """The one-way measurements the covering step takes again on ``table_data`` with its released inputs held
    fixed: no selection round (the paid measurements are the public one-way ones), the released total intercepted;
    reading the true number of records raises."""
    def refuse(self):
        raise AssertionError("the true number of records was read")

    monkeypatch.setattr(measure_module, "run_rounds", lambda *args, **kwargs: 0)
    monkeypatch.setattr(covering_step, "_released_total", lambda measured: released_total)
    monkeypatch.setattr(AggregatedData, "n", property(refuse))
    ledger = ZcdpLedger(BUDGET)
    release = measure(table_data, "marginals:3", budget=BUDGET, relation="add-remove", ledger=ledger,
                      rng=PrivateRandom(0), options=options, progress=False, n_rows=50)
    taken = [(m.attrs, m.sigma2) for m in release.measurements if m.selected_by == "cover" and len(m.attrs) == 1]
    return taken, ledger


def test_neighbours_and_a_tenfold_table_take_the_same_measurements(monkeypatch):
    small = first_sd() * OPTIONS.one_way_signal / 2  # the one-way noise exceeds the total over the signal
    base = data()
    plus = AggregatedData.from_codes(DOMAIN, np.vstack([base.expand(), [[1, 2, 0, 3, 1]]]))
    tenfold = AggregatedData.from_codes(DOMAIN, np.repeat(base.expand(), 10, axis=0))
    taken, _ = again(monkeypatch, base, small)
    assert [attrs for attrs, _ in taken] == ORDERED  # the ordered columns, each once; no categorical one
    for other in (plus, tenfold):
        assert again(monkeypatch, other, small)[0] == taken
    assert again(monkeypatch, base, 4 * small)[0] == []  # the positive control: only the released total moved


def test_the_measurements_cost_their_share_of_what_is_left(monkeypatch):
    taken, ledger = again(monkeypatch, data(), 1.0)
    d = len(DOMAIN)
    left = BUDGET - sum(e.rho for e in ledger.events[:d])  # after the first one-way measurements
    costs = [e.rho for e in ledger.events[d:d + len(ORDERED)]]
    share = left * OPTIONS.one_way_share
    assert len(taken) == len(ORDERED) and all(c <= share / len(ORDERED) for c in costs)
    assert share * (1 - Fraction(1, 10**4)) <= sum(costs) <= share  # each scale rounded safely, none lost
    noise = GaussianNoise("add-remove")
    assert all(sigma2 == noise.scale_for(share / len(ORDERED)) for _, sigma2 in taken)
    assert sum(e.rho for e in ledger.events) <= BUDGET


@pytest.mark.parametrize("off", [{"one_way_share": Fraction(0)}, {"one_way_signal": 0}])
def test_the_rule_off_measures_nothing_again(monkeypatch, off):
    assert again(monkeypatch, data(), 1.0, replace(OPTIONS, **off))[0] == []


def test_a_categorical_domain_measures_nothing_again(monkeypatch):
    monkeypatch.setattr(measure_module, "run_rounds", lambda *args, **kwargs: 0)
    monkeypatch.setattr(covering_step, "_released_total", lambda measured: 1.0)
    release = measure(table(), "marginals:3", budget=BUDGET, relation="add-remove", ledger=ZcdpLedger(BUDGET),
                      rng=PrivateRandom(0), options=OPTIONS, progress=False, n_rows=50)
    assert not [m for m in release.measurements if m.selected_by == "cover" and len(m.attrs) == 1]


def test_the_rule_by_hand():
    assert sharpens_one_ways(99.0, 1.0, signal=100) and not sharpens_one_ways(100.0, 1.0, signal=100)
    assert not sharpens_one_ways(-5.0, 1.0, signal=0)  # signal 0: never, whatever the total
    assert sharpens_one_ways(-5.0, 1.0, signal=100)  # a negative noisy total: the noise is all there is
    assert one_way_shares(Fraction(3, 10), Fraction(1, 10), 4) == [Fraction(3, 400)] * 4
    assert one_way_shares(Fraction(3, 10), Fraction(1, 10), 0) == []


@pytest.mark.parametrize("name, bad", [("one_way_share", Fraction(1)), ("one_way_share", 0.1),
                                       ("one_way_share", Fraction(-1, 10)), ("one_way_signal", -1.0),
                                       ("one_way_signal", math.inf), ("one_way_signal", True)])
def test_the_options_are_checked(name, bad):
    with pytest.raises(InputError, match=name):
        replace(OPTIONS, **{name: bad})


def test_the_summary_says_when_the_one_way_marginals_were_measured_again():
    """A 2,000-row numeric table at eps 1 reads a total far below a hundred times the one-way noise: the release
    summary names the one-way marginals measured again and that figures will move from seed to seed; with the
    rule off it says neither."""
    gen = np.random.default_rng(3)
    df = pd.DataFrame({"x": gen.normal(50, 10, 2000).clip(0, 100).round(1),
                       "y": gen.gamma(2.0, 8.0, 2000).clip(0, 100).round(1),
                       "z": gen.uniform(0, 100, 2000).round(1)})
    options = dict(epsilon=1.0, delta=1e-9, bounds={c: (0.0, 100.0) for c in df}, random_state=0, progress=False)
    on = synthdp.generate_synthetic(df, "marginals:3", **options).report.summary()
    off = synthdp.generate_synthetic(df, "marginals:3", measure_options=MeasureOptions(one_way_share=Fraction(0)),
                                     **options).report.summary()
    assert "the one-way marginals of 3 ordered columns again" in on and "seed to seed" in on
    assert "one-way marginals of" not in off and "seed to seed" not in off
