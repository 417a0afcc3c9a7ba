"""Nested views (docs/privacy.md §8.11 step 1): a full view of few cells a group also has half as many groups, each a
union of its own; the covering step reads a marginal with a covering view through them, the rounds keep the full
view's twins, and the copula sums a reading through the full groups onto the nested ones."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from synthdp.accounting.zcdp import ZcdpLedger
from synthdp.core.data import AggregatedData
from synthdp.core.domain import Domain
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.methods.measure import state
from synthdp.methods.measure.algorithm import measure
from synthdp.methods.measure.coarse import CoarseViews, group_map, group_sum, nested_groups, nested_map, regroup
from synthdp.methods.measure.copula import pair_tables
from synthdp.methods.measure.estimators import EstimatorSettings, NoisyMarginal
from synthdp.methods.measure.settings import MeasureOptions


@pytest.mark.parametrize("ordered, groups, expected", [
    (24, 12, 6), (47, 12, 6), (48, 12, None), (23, 12, None),  # full views of 2 or 3 cells a group only
    (14, 7, 3), (27, 7, 3), (28, 7, None), (10, 5, None), (0, 12, None)])  # half of 5 is too few groups
def test_a_full_view_of_fewer_than_four_cells_a_group_has_half_as_many_nested_groups(ordered, groups, expected):
    assert nested_groups(ordered, groups) == expected


@pytest.mark.parametrize("ordered, groups", [(20, 7), (26, 12), (47, 12), (31, 10)])
def test_each_nested_group_is_a_union_of_the_full_views_groups(ordered, groups):
    """Odd and uneven sizes: the nested map reads the full view's groups, not the cells (a map of the cells into
    ``groups // 2`` runs splits some full group of 20 cells in 7 groups)."""
    size = ordered + 1  # and a missing value
    full = group_map(size, ordered, groups)
    nested = nested_map(full, groups, groups // 2)
    for g in range(groups + 1):
        assert len(set(nested[full == g].tolist())) == 1  # a full group falls in one nested group
    assert np.all(np.diff(nested) >= 0) and nested[-1] == groups // 2  # consecutive runs, the missing value alone
    assert len(set(nested[:ordered].tolist())) == groups // 2
    assert np.array_equal(regroup(full, nested)[full], nested)


def test_a_map_is_read_through_another_only_when_it_nests_in_it():
    full, other = group_map(20, 20, 7), group_map(20, 20, 3)
    with pytest.raises(ValueError, match="unions"):
        regroup(full, other)


# x: 24 cells and a missing value (full view of 12, nested 6), z: 48 cells (full, no nested), y: 16 (covering of
# 6), k: 3 categories
DOMAIN = Domain(("x", "z", "y", "k"), (25, 48, 16, 3), ordered=(24, 48, 16, 0))


def test_the_covering_step_reads_a_marginal_with_a_covering_view_through_the_nested_groups():
    views = CoarseViews(DOMAIN, groups=12)
    assert [None if m is None else int(m.max()) + 1 for m in views.nested] == [7, None, None, None]
    assert views.cover_twin((0, 2, 3)) == (8, 6, 3) and views.group_counts((8, 6, 3)) == (7, 6, None)
    assert views.cover_twin((0, 1, 3)) == views.coarse((0, 1, 3)) == (4, 5, 3)  # full views only: the rounds' groups
    assert views.cover_twin((0, 1, 2)) == (8, 5, 6)
    assert views.candidates({(0, 1): 1, (0, 2): 1}) == {(4, 5): 1}  # the rounds keep the 12 groups
    assert [None if m is None else int(m.max()) + 1 for m in views.copula_maps] == [7, 12, 6, None]
    fine = np.arange(DOMAIN.cells((0, 2, 3)))
    read = views.read((8, 6, 3), fine).reshape(7, 6, 3)
    assert np.array_equal(read, group_sum(fine.reshape(25, 16, 3), (views.nested[0], views.maps[2], None)))


def related(n: int = 3_000, seed: int = 0) -> AggregatedData:
    gen = np.random.default_rng(seed)
    x = gen.integers(0, 24, n)
    y = np.clip(x * 16 // 24 + gen.integers(-2, 3, n), 0, 15)
    codes = np.column_stack([x, gen.integers(0, 48, n), y, gen.integers(0, 3, n)])
    return AggregatedData.from_codes(DOMAIN, codes)


def test_the_covering_step_measures_the_nested_twin(monkeypatch):
    """Spied on the run: each reading of the covering step through groups has the nested groups for x wherever
    the marginal holds y (covering view), and its counts are the data's read through them."""
    data, views, captured = related(), CoarseViews(DOMAIN, groups=12), []
    real = state.measure_one

    def spy(answers, attrs, sigma2, sensitivity_sq, **kw):
        m, y = real(answers, attrs, sigma2, sensitivity_sq, **kw)
        captured.append((m, answers.copy()))
        return m, y

    monkeypatch.setattr(state, "measure_one", spy)
    rho = Fraction(1, 20)
    options = MeasureOptions(rounds_per_attribute=1, coarse_groups=12, cover_fine_mass=1.0,
                             estimator=EstimatorSettings(iters=10, final_iters=20, scoring_sample=1000))
    measure(data, [(0, 2, 3), (0, 1, 3)], budget=rho, relation="add-remove", ledger=ZcdpLedger(rho),
            rng=PrivateRandom(1), options=options, progress=False)
    covered = [(m, a) for m, a in captured if m.selected_by == "cover" and m.groups is not None and not m.level]
    assert {m.attrs for m, _ in covered} == {(0, 2, 3), (0, 1, 3)}
    for m, answers in covered:
        key = views.cover_twin(m.attrs)
        assert m.groups == views.group_counts(key) == ((7, 6, None) if 2 in m.attrs else (13, 12, None))
        assert np.array_equal(answers, views.read(key, data.marginal(m.attrs).reshape(-1)))


def test_the_copula_sums_a_reading_through_the_full_groups_onto_the_nested_ones():
    """x and y read through 12 and 6 groups, and through 6 and 6: the copula's tables on (x, y) agree, each cell of
    the first summing two, with twice the variance."""
    data, views = related(), CoarseViews(DOMAIN, groups=12)
    maps = {a: m for a, m in enumerate(views.copula_maps) if m is not None}
    fine = data.marginal((0, 2, 3)).reshape(-1).astype(float)
    full = NoisyMarginal((0, 2, 3), views.read((4, 6, 3), fine), 1.0, views.attr_maps((0, 2, 3), (13, 6, None)))
    nested = NoisyMarginal((0, 2, 3), views.read((8, 6, 3), fine), 1.0, views.attr_maps((0, 2, 3), (7, 6, None)))
    assert full.groups[0] is views.maps[0] and nested.groups[0] is views.nested[0]
    (table_full, var_full), = pair_tables([full], [0, 2], maps, DOMAIN).values()
    (table_nested, var_nested), = pair_tables([nested], [0, 2], maps, DOMAIN).values()
    assert table_full.shape == table_nested.shape == (6, 6)
    assert np.array_equal(table_full, table_nested)
    assert var_full == 2 * var_nested == 2 * 3.0  # three categories of k summed; two full groups a nested one
