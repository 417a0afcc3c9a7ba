"""Refined readings of coarse twins (docs/privacy.md §11.1): the levels' cells and counts by brute force, one record
moves at most one count of a level, every child of a chosen cell is measured, the next level reads released counts
only, the split is a function of the public domain, each level's charge before its noise, and the fit of a
diagonal the 8x8 groups miss."""

from __future__ import annotations

import itertools
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest

from synthdp.accounting.ledger import Ledger
from synthdp.accounting.zcdp import ZcdpLedger, gaussian_rho
from synthdp.core.data import AggregatedData
from synthdp.core.domain import Domain
from synthdp.core.errors import InputError
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.methods.measure import estimators
from synthdp.methods.measure import state
from synthdp.methods.measure.coarse import group_map
from synthdp.methods.measure.estimators import EstimatorSettings, NoisyMarginal
from synthdp.methods.measure.algorithm import measure
from synthdp.methods.measure.settings import MeasureOptions
from synthdp.methods.measure.refine import (
    children, depth, first_level, level_shares, next_level, one_grouped, pays, refined_reading, spread,
)

# a: 20 ordered cells and a missing value; b: 3 categories; c: 16 ordered cells
DOMAIN = Domain(("a", "b", "c"), (21, 3, 16), ordered=(20, 0, 16))
PAIR = (0, 2)
SHAPE = (21, 16)
GROUPS = 8  # a's 20 ordered cells and c's 16 are both read through 8 groups
MAPS = tuple(group_map(DOMAIN.sizes[a], DOMAIN.ordered[a], GROUPS) for a in PAIR)

pytestmark = pytest.mark.usefixtures("full_views_only")  # views of 8 groups on 16 and 20 cells


def diagonal(n: int = 800, seed: int = 0) -> AggregatedData:
    """``c`` follows ``a`` closely: a narrow diagonal inside the 8x8 blocks, a few missing values of ``a``."""
    gen = np.random.default_rng(seed)
    a = gen.integers(0, 20, n)
    a[gen.random(n) < 0.05] = 20
    c = np.clip(np.where(a < 20, a * 16 // 20, 3) + gen.integers(0, 2, n), 0, 15)
    return AggregatedData.from_codes(DOMAIN, np.column_stack([a, gen.integers(0, 3, n), c]))


def fine_counts(data: AggregatedData) -> np.ndarray:
    return data.marginal(PAIR).reshape(-1).astype(np.int64)


def in_cell(record: tuple[int, int], cell) -> bool:
    return all(lo <= v < hi for v, (lo, hi) in zip(record, cell))


def run_levels(fine, noise_seed=1, sigma2=Fraction(4), split="halves", threshold=2.0, on_draw=None, released=None):
    """The reading with a stand-in for the mechanism: the counts plus seeded integer noise (or, for level 0, the
    counts ``released``); records what it read."""
    gen, seen = np.random.default_rng(noise_seed), []

    def draw(answers, scale, level):
        seen.append((level, scale, answers.copy()))
        noisy = answers + gen.integers(-3, 4, answers.size)
        if level == 0 and released is not None:
            noisy = released
        if on_draw is not None:
            on_draw(level)
        return ("measurement", level), noisy

    levels = refined_reading(fine, SHAPE, MAPS, level_shares(Fraction(1), Fraction(1, 2), depth(SHAPE, MAPS, split)),
                             scale_for=lambda share: sigma2, measure=draw, threshold=threshold, split=split)
    return levels, seen


@pytest.mark.parametrize("split", ["halves", "fine"])
def test_each_level_counts_its_cells_as_a_hand_count_does(split):
    data = diagonal()
    records = [tuple(r) for r in data.expand()[:, PAIR]]
    levels, seen = run_levels(fine_counts(data), split=split)
    assert len(levels) >= 2
    for (_, _, level), (_, _, answers) in zip(levels, seen):
        hand = [sum(in_cell(r, cell) for r in records) for cell in level.cells]
        assert answers.tolist() == hand
        covered = [sum(in_cell(r, cell) for cell in level.cells) for r in records]
        assert max(covered) <= 1  # the cells of one level are disjoint
    assert levels[0][2].cells == first_level(SHAPE, MAPS).cells and sum(seen[0][2]) == data.n  # the twin reads all


def test_the_split_is_a_fixed_function_of_the_cell():
    assert children(((3, 8), (4, 5)), "halves") == [((3, 6), (4, 5)), ((6, 8), (4, 5))]
    assert children(((3, 5), (0, 2)), "fine") == [((3, 4), (0, 1)), ((3, 4), (1, 2)), ((4, 5), (0, 1)),
                                                   ((4, 5), (1, 2))]
    assert depth(SHAPE, MAPS, "halves") == 2 and depth(SHAPE, MAPS, "fine") == 1  # a's runs of 2 or 3 cells


@pytest.mark.parametrize("split", ["halves", "fine"])
def test_one_record_moves_at_most_one_count_of_each_level(split):
    data = diagonal()
    fine = fine_counts(data)
    levels, _ = run_levels(fine, split=split)
    for _, _, level in levels:
        for cell in range(fine.size):
            plus = fine.copy()
            plus[cell] += 1  # add one record in this fine cell
            diff = level.read(plus) - level.read(fine)
            assert np.abs(diff).sum() <= 1 and (diff >= 0).all()
        for x, z in itertools.combinations(range(0, fine.size, 7), 2):
            moved = fine.copy()
            moved[x] -= 1
            moved[z] += 1  # replace one record by another
            assert (level.read(moved) - level.read(fine)) @ (level.read(moved) - level.read(fine)) <= 2


def test_every_child_is_measured_empty_ones_included():
    """D and D plus one row in a child no row of D holds, the same noise: the same cells at every level."""
    data = diagonal()
    fine = fine_counts(data)
    levels, _ = run_levels(fine)
    chosen = levels[1][2]
    empty = [cell for cell, count in zip(chosen.cells, chosen.read(fine)) if count == 0]
    assert empty, "no empty child to add a row to"
    plus = fine.copy()
    plus[np.ravel_multi_index(tuple(lo for lo, _ in empty[0]), SHAPE)] += 1
    again, _ = run_levels(plus)
    assert [lv.cells for _, _, lv in again][:2] == [lv.cells for _, _, lv in levels][:2]


def test_the_next_level_reads_released_counts_only():
    """The true counts changed after a level's noise is drawn: the next level's cells are the same; and two tables
    whose released counts agree get the same cells (the split points are not the data's)."""
    data = diagonal()
    fine = fine_counts(data)
    levels, _ = run_levels(fine, split="fine")
    patched = fine.copy()
    scrambled = np.random.default_rng(9).permutation(patched)
    after, _ = run_levels(patched, split="fine", on_draw=lambda level: patched.__setitem__(slice(None), scrambled))
    assert after[1][2].cells == levels[1][2].cells
    other = fine_counts(diagonal(n=1200, seed=4))  # another table, the same public domain
    assert not np.array_equal(first_level(SHAPE, MAPS).read(other), first_level(SHAPE, MAPS).read(fine))
    for split in ("halves", "fine"):
        ours, _ = run_levels(fine, split=split)
        theirs, _ = run_levels(other, split=split, released=ours[0][1])
        assert theirs[1][2].cells == ours[1][2].cells
    assert next_level(SHAPE, first_level(SHAPE, MAPS), levels[0][1], Fraction(4), 2.0, "fine").cells == \
        levels[1][2].cells


OPTIONS = MeasureOptions(rounds_per_attribute=2, cover_fine_mass=1.0, refine_split="halves", refine_rounds=True,  # the twins: refined
                         coarse_groups=GROUPS, estimator=EstimatorSettings(iters=20, final_iters=50, scoring_sample=2000),
                         cover_support=5000, cover_iters=20, cover_deep_iters=20)


@pytest.mark.parametrize("relation,unit,sens_sq", [("add-remove", 1, 1), ("replace-one", 1, 2), ("add-remove", 3, 9)])
def test_each_level_is_charged_before_its_noise(monkeypatch, relation, unit, sens_sq):
    """Every level's charge is ``Delta2^2 / (2 sigma^2)`` for the scale its noise is drawn at, made before the draw;
    ``Delta2^2`` is a marginal's (1, 2 replace-one, ``k^2`` for units of ``k`` rows); the reading spends at most its
    share."""
    events, real_noise = [], state.discrete_gaussian_array
    rho = Fraction(4)
    ledger = ZcdpLedger(rho, contribution_bound=unit)
    real_charge = ledger.charge

    def charge(mechanism, cost, rel, note=""):
        events.append(("charge", note, cost))
        return real_charge(mechanism, cost, rel, note)

    def noise(size, sigma2, rng):
        events.append(("draw", size, sigma2))
        return real_noise(size, sigma2, rng)

    monkeypatch.setattr(ledger, "charge", charge)
    monkeypatch.setattr(state, "discrete_gaussian_array", noise)
    release = measure(diagonal(), [PAIR], budget=rho, relation=relation, ledger=ledger, rng=PrivateRandom(0),
                      options=OPTIONS, progress=False)
    refined = [m for m in release.measurements if m.level is not None]
    assert max(m.level for m in refined) >= 1, "no level below the twin was measured"
    for m in refined:
        assert m.rho == gaussian_rho(sens_sq, m.sigma2) == Fraction(sens_sq) / (2 * m.sigma2)
        assert m.to_dict()["level"] == m.level and m.to_dict()["cells"] == m.cells
    draws = [i for i, e in enumerate(events) if e[0] == "draw"]
    for i in draws:  # the event just before each draw is its charge, at the drawn scale
        kind, note, cost = events[i - 1]
        assert kind == "charge" and cost == gaussian_rho(sens_sq, events[i][2])
    assert len(draws) == len([e for e in events if e[0] == "charge" and "sigma2" in e[1]])
    assert ledger.spent <= rho


def test_a_twin_pays_when_the_model_puts_enough_of_its_mass_in_cells_a_level_would_split():
    """Cells of at least ``threshold`` deviations: two of 500 out of 1,000 pay at any share; 100 cells of 10 against
    a bar of 30 pay only at share 0; negative counts read as 0; an empty model never pays."""
    sigma2 = Fraction(100)
    assert pays(np.array([500.0, 500.0, 0.0, 0.0]), sigma2, 3.0, 1.0)
    spread = np.full(100, 10.0)
    assert not pays(spread, sigma2, 3.0, 0.1) and pays(spread, sigma2, 3.0, 0.0)
    assert pays(np.array([40.0, 40.0, -50.0, 20.0]), sigma2, 3.0, 0.8)
    assert not pays(np.array([40.0, 40.0, 0.0, 20.0]), sigma2, 3.0, 0.81)
    assert not pays(np.zeros(4), sigma2, 3.0, 0.0)


def uniform(n: int = 800, seed: int = 0) -> AggregatedData:
    """``a`` and ``c`` independent and uniform: about 12 records a twin cell, no diagonal."""
    gen = np.random.default_rng(seed)
    return AggregatedData.from_codes(DOMAIN, np.column_stack([gen.integers(0, 20, n), gen.integers(0, 3, n),
                                                              gen.integers(0, 16, n)]))


def twin_readings(data: AggregatedData, refine_mass: float) -> list[tuple[int | None, float]]:
    rho = Fraction(1, 10)
    release = measure(data, [PAIR], budget=rho, relation="add-remove", ledger=ZcdpLedger(rho), rng=PrivateRandom(0),
                      options=replace(OPTIONS, refine_mass=refine_mass), progress=False)
    return [(m.level, float(m.sigma2)) for m in release.measurements if m.level is not None]


def test_a_twin_is_refined_only_where_the_model_says_a_level_would_split():
    """At rho 1/10, a table spread thin over the twin's cells: with every twin refined the covering step measures
    levels below its twin at twice the twin's variance; by ``refine_mass`` its twin is read in one measurement at the
    whole share (half that variance).  The diagonal's covering twin is still refined."""
    always, paying = twin_readings(uniform(), 0.0), twin_readings(uniform(), 0.5)
    assert max(level for level, _ in always) >= 1
    assert [level for level, _ in paying] == [0]
    assert paying[0][1] == pytest.approx(always[0][1] / 2, rel=0.01)
    assert max(level for level, _ in twin_readings(diagonal(), 0.5)) >= 1


def test_refine_options_are_checked():
    with pytest.raises(InputError, match="refine_split"):
        MeasureOptions(refine_split="thirds")
    with pytest.raises(InputError, match="refine_threshold"):
        MeasureOptions(refine_threshold=-1)
    with pytest.raises(InputError, match="refine_coarse_share"):
        MeasureOptions(refine_coarse_share=Fraction(1))
    with pytest.raises(InputError, match="refine_rounds"):
        MeasureOptions(refine_rounds="yes")
    with pytest.raises(InputError, match="refine_mass"):
        MeasureOptions(refine_mass=1.5)
    for bad in (-0.1, True, "0.4"):
        with pytest.raises(InputError, match="refine_spread"):
            MeasureOptions(refine_spread=bad)


def test_the_fit_meets_a_diagonal_the_groups_miss():
    """Exact 1-way counts, the exact twin and its exact finest level: the model's fine counts meet the diagonal;
    with the twin alone they spread over the 8x8 blocks."""
    data = diagonal(4000)
    fine = fine_counts(data)
    exact = [NoisyMarginal((a,), data.marginal((a,)).reshape(-1).astype(float), 1.0) for a in range(len(DOMAIN))]
    twin = NoisyMarginal(PAIR, first_level(SHAPE, MAPS).read(fine).astype(float), 1.0, MAPS)
    levels, _ = run_levels(fine, split="fine", threshold=0.0)
    finest = levels[-1][2]
    level = NoisyMarginal(PAIR, finest.read(fine).astype(float), 1.0, labels=finest.labels)
    gap = lambda model: np.abs(model.counts(PAIR) - fine).sum() / data.n
    assert gap(estimators.fit(DOMAIN, exact + [twin, level], 1000)) < 0.05
    assert gap(estimators.fit(DOMAIN, exact + [twin], 1000)) > 0.3


def test_a_level_is_not_a_total():
    """The model's total combines the measurements that read every record; a level reads only the cells it chose."""
    data = diagonal()
    fine = fine_counts(data)
    levels, _ = run_levels(fine, threshold=15.0)
    twin = NoisyMarginal(PAIR, levels[0][1].astype(float), 1.0, MAPS)
    level = NoisyMarginal(PAIR, levels[-1][1].astype(float), 1.0, labels=levels[-1][2].labels)
    assert len(levels) > 1 and levels[-1][1].sum() < 0.9 * data.n  # the level's cells hold part of the table
    assert estimators.estimate_total([twin, level]) == estimators.estimate_total([twin])


def test_pure_dp_reads_each_twin_in_one_measurement():
    """Levels are built for the Gaussian only (docs/privacy.md §11.1): under pure DP no measurement is a level."""
    epsilon = Fraction(20)
    release = measure(diagonal(), [PAIR], budget=epsilon, relation="add-remove", ledger=Ledger(epsilon, Fraction(0)),
                      rng=PrivateRandom(0), options=OPTIONS, progress=False, pure=True)
    assert any(m.groups is not None for m in release.measurements)
    assert all(m.level is None for m in release.measurements)


# a read through 8 groups, b (3 categories) cell by cell: a twin whose levels its spread chooses (§11.1 step 0)
ONE = (0, 1)
ONE_SHAPE = (21, 3)
ONE_MAPS = (MAPS[0], None)


def by_group(table: np.ndarray) -> np.ndarray:
    """A table on a's 9 groups (8 and the missing value) by b's 3 cells as level 0's counts, in their order."""
    return np.asarray(table, dtype=float).reshape(-1)


CLUSTERED = np.zeros((9, 3))
CLUSTERED[[1, 4, 6], [0, 1, 2]] = 300.0  # each category's rows in one group of a
SPREAD_OUT = np.full((9, 3), 100.0)  # every category fills a's groups as a does


def test_the_spread_is_how_few_groups_each_cell_fills():
    """One group a category against three for a: a third; every category like a: 1; negative counts read as 0;
    nothing positive: None."""
    assert spread(by_group(CLUSTERED), ONE_SHAPE, ONE_MAPS) == pytest.approx(1 / 3)
    assert spread(by_group(SPREAD_OUT), ONE_SHAPE, ONE_MAPS) == pytest.approx(1.0)
    noisy = CLUSTERED.copy()
    noisy[0] = -40.0
    assert spread(by_group(noisy), ONE_SHAPE, ONE_MAPS) == pytest.approx(1 / 3)
    assert spread(np.full(27, -5.0), ONE_SHAPE, ONE_MAPS) is None
    assert one_grouped(ONE_MAPS) and not one_grouped(MAPS) and not one_grouped((MAPS[0],))


def one_reading(fine: np.ndarray, released: np.ndarray, limit: float | None = 0.4) -> list[tuple[int, object]]:
    """The reading of the a x b twin with a stand-in mechanism: level 0 reads ``released``, a level below its exact
    counts.  Returns each draw's level and cells."""
    def draw(answers, scale, level):
        return ("measurement", level), (released if level == 0 else answers.astype(float))

    shares = level_shares(Fraction(1), Fraction(1, 2), depth(ONE_SHAPE, ONE_MAPS, "halves"))
    levels = refined_reading(fine, ONE_SHAPE, ONE_MAPS, shares, scale_for=lambda share: 1 / share, measure=draw,
                             threshold=2.0, split="halves", spread_limit=limit)
    return [(m[1], level.cells) for m, _, level in levels]


def test_the_levels_run_by_the_released_spread_only():
    """D and D plus one row, the same released level 0: the same readings, levels when the release is clustered, a
    second reading of the twin when it is spread out; D's own counts (clustered) never choose; with no limit the
    levels run either way."""
    gen = np.random.default_rng(3)
    a = np.array([2, 10, 15])[gen.integers(0, 3, 900)]
    fine = np.bincount(np.ravel_multi_index((a, a % 3), ONE_SHAPE), minlength=63)  # D: each category in one group
    plus = fine.copy()
    plus[np.ravel_multi_index((7, 1), ONE_SHAPE)] += 1
    for released in (by_group(CLUSTERED), by_group(SPREAD_OUT)):
        assert one_reading(fine, released) == one_reading(plus, released)
    clustered, spread_out = one_reading(fine, by_group(CLUSTERED)), one_reading(fine, by_group(SPREAD_OUT))
    assert max(level for level, _ in clustered) >= 1
    assert [level for level, _ in spread_out] == [0, 0]
    assert max(level for level, _ in one_reading(fine, by_group(SPREAD_OUT), limit=None)) >= 1


def test_a_second_reading_takes_the_rest_of_the_share():
    """A spread-out twin: level 0 at half the share, the second reading at the other half (the shares below summed)."""
    scales = []

    def draw(answers, scale, level):
        scales.append((level, scale))
        return ("measurement", level), by_group(SPREAD_OUT)

    shares = level_shares(Fraction(1), Fraction(1, 2), depth(ONE_SHAPE, ONE_MAPS, "halves"))
    refined_reading(np.zeros(63, dtype=np.int64), ONE_SHAPE, ONE_MAPS, shares, scale_for=lambda share: 1 / share,
                    measure=draw, threshold=2.0, split="halves", spread_limit=0.4)
    assert scales == [(0, 2), (0, 2)] and sum(shares) == 1


def category_table(clustered: bool, n: int = 3000) -> AggregatedData:
    """b's three categories each in one cell of a (clustered), or a uniform and independent of b."""
    gen = np.random.default_rng(0)
    b = gen.integers(0, 3, n)
    a = np.array([2, 10, 15])[b] if clustered else gen.integers(0, 20, n)
    return AggregatedData.from_codes(DOMAIN, np.column_stack([a, b, gen.integers(0, 16, n)]))


def readings_of(data: AggregatedData, workload) -> list:
    rho = Fraction(1)
    release = measure(data, workload, budget=rho, relation="add-remove", ledger=ZcdpLedger(rho), rng=PrivateRandom(0),
                      options=replace(OPTIONS, refine_spread=0.4), progress=False)
    return [m for m in release.measurements if m.level is not None]


def test_in_a_run_the_spread_chooses_levels_or_a_second_reading():
    """With ``refine_spread``: a round's a x b twin of a clustered table is refined; of a spread-out one read twice at
    one scale, the selection reported with the first reading only; a twin of two grouped columns is read once."""
    assert max(m.level for m in readings_of(category_table(True), [ONE])) >= 1
    spread_out = readings_of(category_table(False), [ONE])
    assert spread_out and all(m.level == 0 for m in spread_out)
    pairs = [(m, n) for m, n in zip(spread_out, spread_out[1:]) if m.selected_by == n.selected_by == "exponential"]
    assert pairs and all(m.sigma2 == n.sigma2 and m.selection_epsilon is not None and n.selection_epsilon is None
                         for m, n in pairs)
    assert all(m.level == 0 for m in readings_of(diagonal(), [PAIR]))
