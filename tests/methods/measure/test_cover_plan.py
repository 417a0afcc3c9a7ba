"""The covering step's plan adapts to the released total only (docs/privacy.md §13): which workload marginals it
measures, at what share, is a function of released values and public ones, never of the true number of records."""

from __future__ import annotations

import math
import random
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest

from synthdp.accounting.zcdp import ZcdpLedger
from synthdp.core.data import AggregatedData
from synthdp.core.errors import InputError
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.methods.measure import algorithm as measure_module
from synthdp.methods.measure import covering_step
from synthdp.methods.measure.algorithm import measure
from synthdp.methods.measure.coverage import COVER_KEEP, cover_shares, effective_cells, fill, plan_cover
from synthdp.methods.measure.noise_family import GaussianNoise, LaplaceNoise
from tests.methods.measure.test_measure import DOMAIN, OPTIONS, table

TRIPLES = "marginals:3"  # 10 triples of 12 to 48 cells on DOMAIN
BUDGET = Fraction(1, 100)
STRICT = replace(OPTIONS, cover_skip_above=1.0)  # a marginal pays when its noise is at most the spread itself


def gaussian_sd(share: Fraction) -> float:
    noise = GaussianNoise("add-remove")
    return math.sqrt(noise.variance(noise.scale_for(share)))


def brute_plan(held, cells, total, left, *, noise_sd, power, keep):
    """The longest prefix of the order that pays, by trying every length (the planner bisects)."""
    first = fill(held, left, precision_power=power)
    order = sorted((i for i in range(len(held)) if first[i] > 0), key=lambda i: noise_sd(first[i]) * cells[i])
    order += [i for i in range(len(held)) if first[i] <= 0]
    best = 0
    for k in range(1, len(order) + 1):
        chosen = sorted(order[:k])
        shares = fill([held[i] for i in chosen], left, precision_power=power)
        if all(s <= 0 or noise_sd(s) * cells[i] <= total for i, s in zip(chosen, shares)):
            best = k
    chosen = sorted(order[: max(best, min(keep, len(order)))])
    out = dict(zip(chosen, fill([held[i] for i in chosen], left, precision_power=power)))
    return [out.get(i, Fraction(0)) for i in range(len(held))]


@pytest.mark.parametrize("power", [1, 2])
def test_the_plan_is_the_longest_paying_prefix(power):
    rng = random.Random(power)
    noise = GaussianNoise("add-remove") if power == 1 else LaplaceNoise("add-remove")
    sd = lambda e: math.sqrt(noise.variance(noise.scale_for(e)))  # noqa: E731
    skipped_some = kept_floor = 0
    for _ in range(150):
        m = rng.randint(1, 12)
        held = [Fraction(rng.choice([0, 0, rng.randint(1, 40)]), 10**4) for _ in range(m)]
        cells = [rng.choice([4, 12, 48, 200, 1000]) for _ in range(m)]
        total, left = rng.choice([50.0, 400.0, 5000.0]), Fraction(rng.randint(1, 100), 10**3)
        plan = plan_cover(held, cells, total, left, noise_sd=sd, precision_power=power, margin=1.0)
        assert plan == brute_plan(held, cells, total, left, noise_sd=sd, power=power, keep=COVER_KEEP)
        assert sum(plan) == left and all(s >= 0 for s in plan)  # re-shared: nothing lost, nothing doubled
        kept = [i for i, s in enumerate(plan) if s > 0]
        paying = [i for i in kept if sd(plan[i]) * cells[i] <= total]
        skipped_some += len(kept) < m
        kept_floor += len(paying) < len(kept)
        assert len(paying) == len(kept) or len(kept) <= COVER_KEEP
    assert skipped_some and kept_floor  # both branches were exercised


def test_every_marginal_is_kept_when_all_pay_and_a_few_when_none_do():
    held, cells, left = [Fraction(0)] * 10, [12] * 10, Fraction(1, 100)
    everything = fill(held, left, precision_power=1)
    assert plan_cover(held, cells, 10.0**6, left, noise_sd=gaussian_sd, precision_power=1, margin=1.0) == everything
    few = plan_cover(held, cells, 1.0, left, noise_sd=gaussian_sd, precision_power=1, margin=1.0)
    assert few == [left / COVER_KEEP] * COVER_KEEP + [Fraction(0)] * (10 - COVER_KEEP)  # ties: the workload's order
    assert plan_cover(held, cells, -3.0, left, noise_sd=gaussian_sd, precision_power=1, margin=1.0) == few


def test_the_fewest_cells_are_kept_first():
    held, left = [Fraction(0)] * 6, Fraction(1, 100)
    cells = [48, 12, 24, 12, 48, 24]
    sd = gaussian_sd(left / 2)  # two marginals at half each
    plan = plan_cover(held, cells, sd * 12, left, noise_sd=gaussian_sd, precision_power=1, margin=1.0, keep=1)
    assert plan == [0, left / 2, 0, left / 2, 0, 0]


def test_effective_cells_count_concentration_not_size():
    assert effective_cells([np.ones(4), np.full(3, 7.0)]) == pytest.approx(12)  # uniform: the cells themselves
    assert effective_cells([np.array([98.0, 1, 1, 0])]) == pytest.approx(1 / (0.98**2 + 2 * 0.01**2))
    assert effective_cells([np.array([5.0, -3, 5])]) == pytest.approx(2)  # a negative noisy count counts as 0
    assert effective_cells([np.array([0.0, -1])]) == 2  # no mass: the attribute's size
    assert effective_cells([]) == 1


def test_the_step_reads_the_effective_cells_off_the_models_one_way_counts(monkeypatch):
    """The cells the plan is given are :func:`effective_cells` of the model's one-way counts of each reading
    (a categorical domain: no groups), fewer than the marginal's own."""
    seen = {}
    real = covering_step._effective_cells

    def spy(run, measured, key):
        seen[key] = (real(run, measured, key), effective_cells(measured.model.counts((a,)) for a in key))
        return seen[key][0]

    monkeypatch.setattr(covering_step, "_effective_cells", spy)
    ledger = ZcdpLedger(BUDGET)
    measure(table(), TRIPLES, budget=BUDGET, relation="add-remove", ledger=ledger, rng=PrivateRandom(0),
            options=OPTIONS, progress=False, n_rows=50)
    assert seen
    for key, (cells, expected) in seen.items():
        assert cells == pytest.approx(expected) and 1 < cells < DOMAIN.cells(key)


def test_the_margin_scales_the_spread_a_marginal_must_beat():
    held, cells, left = [Fraction(0)] * 10, [12] * 10, Fraction(1, 100)
    total = gaussian_sd(left / 2) * 12  # at margin 1, two marginals pay
    assert sum(s > 0 for s in plan_cover(held, cells, total, left, noise_sd=gaussian_sd, precision_power=1,
                                         margin=1.0, keep=1)) == 2
    assert sum(s > 0 for s in plan_cover(held, cells, total, left, noise_sd=gaussian_sd, precision_power=1,
                                         margin=3.0, keep=1)) == 10
    assert plan_cover(held, cells, -1.0, left, noise_sd=gaussian_sd, precision_power=1, margin=math.inf) == \
        fill(held, left, precision_power=1)  # never skip, whatever the total


def test_the_margin_is_checked():
    for bad in (0, -1.0, True, "16"):
        with pytest.raises(InputError, match="cover_skip_above"):
            replace(OPTIONS, cover_skip_above=bad)


# -- the whole step: the plan reads released values only ---------------------------------------------------------
def cover_plan_of(monkeypatch, data: AggregatedData, released_total: float):
    """The covering step's plan on ``data`` with its released inputs held fixed: no selection round (the paid
    measurements are the public 1-way ones), the released total and the effective cells (read off the noisy
    one-way marginals) intercepted, the cells taken as the marginal's own; the true number of records raises."""
    def refuse(self):
        raise AssertionError("the true number of records was read")

    monkeypatch.setattr(measure_module, "run_rounds", lambda *args, **kwargs: 0)
    monkeypatch.setattr(covering_step, "_released_total", lambda measured: released_total)
    monkeypatch.setattr(covering_step, "_effective_cells", lambda run, measured, key: float(DOMAIN.cells(key)))
    monkeypatch.setattr(AggregatedData, "n", property(refuse))
    ledger = ZcdpLedger(BUDGET)
    release = measure(data, TRIPLES, budget=BUDGET, relation="add-remove", ledger=ledger, rng=PrivateRandom(0),
                      options=STRICT, progress=False, n_rows=50)
    cover = [m for m in release.measurements if m.selected_by == "cover"]
    return [(m.attrs, m.sigma2) for m in cover], release.cover_skipped, ledger


def repeated(data: AggregatedData, times: int) -> AggregatedData:
    return AggregatedData.from_codes(DOMAIN, np.repeat(data.expand(), times, axis=0))


def test_neighbours_and_a_tenfold_table_choose_the_same_plan(monkeypatch):
    data = table()
    plus = AggregatedData.from_codes(DOMAIN, np.vstack([data.expand(), [[1, 2, 0, 3, 1]]]))
    total = 400.0  # skips some of the 10 triples at this budget, not all
    plan, skipped, _ = cover_plan_of(monkeypatch, data, total)
    assert 0 < skipped < 10 - COVER_KEEP
    for other in (plus, repeated(data, 10)):
        assert cover_plan_of(monkeypatch, other, total)[:2] == (plan, skipped)
    richer, fewer, _ = cover_plan_of(monkeypatch, data, 10 * total)  # the positive control: the released total
    assert (richer, fewer) != (plan, skipped) and fewer < skipped


def test_the_step_charges_what_it_did_before_the_plan(monkeypatch):
    """Skipping re-shares the step's budget: its charges sum to ``left`` less each scale's rounding, as the
    unskipped plan's do, and the kept shares (recomputed here) to exactly ``left``."""
    _, _, before = cover_plan_of(monkeypatch, table(), 10.0**9)
    plan, skipped, after = cover_plan_of(monkeypatch, table(), 400.0)
    assert skipped > 0
    d = len(DOMAIN)
    for ledger in (before, after):
        left = BUDGET - sum(e.rho for e in ledger.events[:d])
        charged = sum(e.rho for e in ledger.events[d:])
        assert left * (1 - Fraction(1, 10**4)) <= charged <= left
    left = BUDGET - sum(e.rho for e in after.events[:d])
    shares = dict(cover_shares(TRIPLES_LIST, [], left, precision_power=1))
    assert len(shares) == len(plan) + skipped and all(a in shares for a, _ in plan)
    noise = GaussianNoise("add-remove")
    kept_share = left / len(plan)  # no triple is held by a 1-way measurement: equal shares of everything left
    assert all(sigma2 == noise.scale_for(kept_share) for _, sigma2 in plan)


TRIPLES_LIST = measure_module.workload_marginals(TRIPLES, DOMAIN)
