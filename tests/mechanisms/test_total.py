"""The noisy total released before the domain steps and PrivTree's threshold read from it (docs/privacy.md §13).

With the released total intercepted and held fixed, D, D plus one unit and D with every row repeated 10 times
choose the same plan; changing only the intercepted total changes it (the positive control). The count is drawn at
exactly ``eps_T / k`` and charged ``eps_T`` ahead of the method; with the option off nothing changes.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import synthdp
import synthdp.domains as domains
import synthdp.mechanisms.total as total_module
from synthdp.accounting.ledger import ADD_REMOVE, REPLACE_ONE, Ledger
from synthdp.core.schema import Schema
from synthdp.mechanisms.privtree import discretise, privtree_parameters
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.mechanisms.total import (MIN_DEPTH, TOTAL_SHARE, natural_depth, release_total, threshold_for_total,
                                      total_rate)

BOUNDS = {"x": (0, 999), "y": (0.0, 100.0)}


def _table(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"x": rng.integers(0, 1000, n), "y": np.round(rng.exponential(5.0, n), 3),
                         "person": [f"p{i // 2}" for i in range(n)]})


def _run(df: pd.DataFrame, *, units: bool = False, **options):
    """A small release with the option on; the person column is a privacy unit of at most 3 rows, or dropped."""
    extra = dict(privacy_unit="person", max_rows_per_unit=3) if units else {}
    data = df if units else df.drop(columns="person")
    return synthdp.generate_synthetic(data, "marginals:1", epsilon=1.0, delta=1e-9, bounds=BOUNDS, clip=True,
                                      random_state=0, progress=False, point_masses=False,
                                      **{"cells_from_total": True, **extra, **options})


def _plan(result) -> tuple:
    """What the plan chose from the released total: the total's choice and each tree's charge and parameters."""
    release = result.report.release
    trees = [(e["rho"], e["note"]) for e in release.zcdp_ledger if e["mechanism"] == "privtree"]
    return release.plan["noisy_total"], trees, release.rho_budget, release.ledger[0]


class _Held:
    """An intercepted :func:`release_total`: charges as the real one does and releases a fixed value."""

    def __init__(self, value: int):
        self.value, self.rows = value, []

    def __call__(self, rows, *, epsilon, rng, ledger, relation):
        self.rows.append(rows)
        released = release_total(rows, epsilon=epsilon, rng=rng, ledger=ledger, relation=relation)
        return total_module.NoisyTotal(self.value, released.epsilon, released.rate)


@pytest.mark.parametrize("units", [False, True])
def test_neighbours_and_a_ten_times_larger_table_choose_the_same_plan_at_a_fixed_total(monkeypatch, units):
    base = _table(400)
    added = 3 if units else 1  # one more unit of 3 rows, or one more row
    plus = pd.concat([base, pd.DataFrame({"x": [7, 8, 9][:added], "y": [1.0, 2.0, 3.0][:added],
                                          "person": ["new"] * added})], ignore_index=True)
    tenfold = pd.concat([base] * 10, ignore_index=True)
    plans = []
    for df in (base, plus, tenfold):
        held = _Held(300)
        monkeypatch.setattr(domains, "release_total", held)
        plans.append(_plan(_run(df, units=units)))
        assert len(held.rows) == 1  # released once, before the trees
    assert plans[0] == plans[1] == plans[2]
    assert plans[0][0]["value"] == 300


def test_changing_only_the_released_total_changes_the_plan(monkeypatch):
    """The positive control: the same table, two intercepted totals, two thresholds."""
    chosen = []
    for value in (300, 30_000):
        monkeypatch.setattr(domains, "release_total", _Held(value))
        chosen.append(_plan(_run(_table(400))))
    assert chosen[0][1] != chosen[1][1] and chosen[0][0]["reason"] != chosen[1][0]["reason"]
    assert "threshold 0" in chosen[1][1][0][1] and "threshold -" in chosen[0][1][0][1]


def test_the_rule_by_hand():
    # decay 100: h_0 is the deepest h with T > 2**h * h * 100
    assert [natural_depth(t, 100, 32) for t in (-5, 0, 150, 201, 801, 2401, 6401)] == [0, 0, 0, 1, 2, 3, 4]
    assert natural_depth(10**9, 100, 5) == 5  # never past h_max
    assert [threshold_for_total(t, 100, 32) for t in (-5, 201, 801, 2401, 10**6)] == [-300, -200, -100, 0, 0]
    assert MIN_DEPTH == 3 and TOTAL_SHARE == Fraction(1, 50)


@pytest.mark.parametrize("k", [1, 3])
@pytest.mark.parametrize("relation", [ADD_REMOVE, REPLACE_ONE])
def test_the_count_is_drawn_at_exactly_eps_over_k_and_charged_eps_ahead(monkeypatch, k, relation):
    """Delta_1 = k: a unit moves at most k rows (docs/privacy.md §13). The sampler is intercepted."""
    calls = []
    monkeypatch.setattr(total_module, "discrete_laplace", lambda s, t, rng: calls.append((s, t)) or -7)
    ledger = Ledger(Fraction(1), Fraction(0), contribution_bound=k)
    released = release_total(1000, epsilon=Fraction(1, 50), rng=PrivateRandom(0), ledger=ledger, relation=relation)
    rate = Fraction(10**12 // (50 * k), 10**12)  # eps_T / k, rounded down onto the 1e-12 grid
    assert calls == [(rate.numerator, rate.denominator)] and released.rate == rate and released.value == 993
    assert [(e.mechanism, e.epsilon, e.delta, e.ahead) for e in ledger.events] == [
        ("noisy-total", Fraction(1, 50), 0, True)]
    assert total_rate(Fraction(1, 3), 1) == Fraction(333_333_333_333, 10**12)  # rounded down onto the grid


def test_the_trees_take_the_threshold_of_the_total_and_nothing_else():
    df = _table(500).drop(columns="person")
    schema = Schema.from_dataframe(df, bounds=BOUNDS, clip=True, discretise="privtree", dtypes={"y": "float64"})
    runs = {t: discretise(df, schema, epsilon=Fraction(1, 10), rng=PrivateRandom(0),
                          ledger=Ledger(Fraction(1), Fraction(0)), noisy_total=t) for t in (None, 50, 10**6)}
    fixed = privtree_parameters(Fraction(1, 10))
    assert [c.parameters for c in runs[None].columns] == [fixed] * 2
    assert runs[50].columns[0].parameters.threshold == threshold_for_total(50, fixed.decay, fixed.max_depth) < 0
    assert runs[10**6].columns[0].parameters == fixed
    assert {(r.epsilon, r.rho) for r in runs.values()} == {(runs[None].epsilon, runs[None].rho)}


def test_the_release_reports_the_paid_total_and_the_budget_is_kept():
    result = _run(_table(400))
    release = result.report.release
    assert [(e["mechanism"], e["ahead"]) for e in release.ledger] == [("noisy-total", True),
                                                                      ("select-measure-estimate", False)]
    assert Fraction(release.ledger[0]["epsilon"]) == TOTAL_SHARE  # of epsilon 1
    assert Fraction(release.ledger[1]["epsilon"]) == 1 - TOTAL_SHARE and release.epsilon_spent <= 1.0
    assert isinstance(release.plan["noisy_total"]["value"], int)
    game = _run(_table(400), method="game", rounds=2, samples_per_round=10)
    assert [e["mechanism"] for e in game.report.release.ledger][:3] == ["noisy-total", "privtree", "privtree"]


def test_off_by_default_no_charge_and_the_trees_of_section_10_3():
    off = _run(_table(400), cells_from_total=False)
    release = off.report.release
    assert "noisy_total" not in release.plan
    assert [e["mechanism"] for e in release.ledger] == ["select-measure-estimate"]
    assert all("threshold 0" in e["note"] for e in release.zcdp_ledger if e["mechanism"] == "privtree")
