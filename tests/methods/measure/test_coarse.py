"""Coarse views of numeric columns (docs/privacy.md §8.11): the groups, the counts read through them, the score's
sensitivity and the measurements' charges on neighbours, the estimator's fit, and a release that keeps the
correlations of many-celled numeric columns."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace
from fractions import Fraction
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

import synthdp
from synthdp.accounting.ledger import Ledger
from synthdp.accounting.zcdp import ZcdpLedger, gaussian_rho
from synthdp.core.data import AggregatedData
from synthdp.core.domain import Domain
from synthdp.core.errors import InputError, SchemaError
from synthdp.core.schema import Schema
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.methods.measure import estimators
from synthdp.methods.measure import covering_step, rounds, state
from synthdp.methods.measure.coarse import (
    CoarseViews, coarse_index, group_map, group_spread, group_sum,
)
from synthdp.methods.measure.estimators import EstimatorSettings, NoisyMarginal
from synthdp.methods.measure.algorithm import measure
from synthdp.methods.measure.covering_step import fine_mass_suffices
from synthdp.methods.measure.measurements import candidate_weights
from synthdp.methods.measure.rounds import _scores
from synthdp.methods.measure.footprint import footprint
from synthdp.methods.measure.noise_family import GaussianNoise
from synthdp.methods.measure.settings import MeasureOptions

# a: 20 ordered cells and a missing value; b: 3 categories; c: 16 ordered cells; d: 10 ordered cells (no view)
DOMAIN = Domain(("a", "b", "c", "d"), (21, 3, 16, 10), ordered=(20, 0, 16, 10))
WORKLOAD = [(0, 1), (0, 2), (1, 2), (2, 3)]
GROUPS = 8  # the views of DOMAIN's tests read 8 groups: a and c have views (at least 16 ordered cells), d has none
OPTIONS = MeasureOptions(rounds_per_attribute=2, coarse_groups=GROUPS,
                         estimator=EstimatorSettings(iters=20, final_iters=50, scoring_sample=2000))

pytestmark = pytest.mark.usefixtures("full_views_only")  # views of 8 groups on 16 and 20 cells


def table(n: int = 600, seed: int = 0) -> AggregatedData:
    gen = np.random.default_rng(seed)
    a = gen.integers(0, 21, n)
    b = gen.integers(0, 3, n)
    c = np.clip(np.where(a < 20, a * 16 // 20, 8) + gen.integers(-1, 2, n), 0, 15)
    d = gen.integers(0, 10, n)
    return AggregatedData.from_codes(DOMAIN, np.column_stack([a, b, c, d]))


@pytest.mark.parametrize("size,ordered", [(16, 16), (21, 20), (64, 64), (100, 99), (17, 16), (1000, 1000)])
def test_groups_are_runs_of_consecutive_cells_of_near_equal_length(size, ordered):
    m = group_map(size, ordered, GROUPS)
    lengths = np.bincount(m[:ordered])
    assert len(lengths) == GROUPS and lengths.max() - lengths.min() <= 1
    assert (np.diff(m) >= 0).all()  # consecutive: a group's codes are one run
    assert list(m[ordered:]) == list(range(GROUPS, GROUPS + size - ordered))  # a missing value alone


def test_a_view_only_for_numeric_columns_of_many_cells():
    views = CoarseViews(DOMAIN, groups=GROUPS)
    assert [m is not None for m in views.maps] == [True, False, True, False]
    # a view needs twice as many ordered cells as groups: with 9 groups c's 16 cells have none, a's 20 have one
    assert [m is not None for m in CoarseViews(DOMAIN, groups=9).maps] == [True, False, False, False]
    assert [m is not None for m in CoarseViews(DOMAIN, groups=10).maps] == [True, False, False, False]
    assert not CoarseViews(DOMAIN, groups=11)
    assert views.coarse((0, 1)) == (4, 1) and views.coarse((1, 3)) is None and views.coarse((0,)) is None
    assert views.coarse((0, 2)) == (4, 6) and views.base((4, 6)) == (0, 2)
    assert views.cells((4, 1)) == 9 * 3 and views.cells((4, 6)) == 9 * 8 and views.cells((0, 2)) == 21 * 16
    assert not CoarseViews(Domain(("a", "b"), (21, 16)), groups=GROUPS)  # nothing says the codes are ordered


def test_the_runs_and_the_plan_read_through_the_groups_the_setting_gives():
    """A run with 10 groups measures a's twins through 10 groups and its missing value (11) and c (16 cells, fewer
    than 20) finely; the plan's candidate count has c's twins with 8 groups and not with 10."""
    data = table(2000)
    for groups, expected in ((8, {"a": 9, "c": 8}), (10, {"a": 11})):
        options = replace(OPTIONS, coarse_groups=groups)
        release = measure(data, WORKLOAD, budget=Fraction(2), relation="add-remove", ledger=ZcdpLedger(Fraction(2)),
                          rng=PrivateRandom(0), options=options, progress=False)
        read = {DOMAIN.names[a]: k for m in release.measurements if m.groups is not None
                for a, k in zip(m.attrs, m.groups) if k is not None}
        assert read == expected
    twins = [footprint(DOMAIN, WORKLOAD, replace(OPTIONS, coarse_groups=g), n_rows=None, oracle=False).candidates
             for g in (8, 10)]
    assert twins == [2 * len(WORKLOAD), len(WORKLOAD) + 2]  # every pair has a twin; then (0, 1) and (0, 2) only


@pytest.mark.parametrize("groups", [0, -3, 2.5, True])
def test_a_group_count_that_is_not_a_positive_integer_is_refused(groups):
    with pytest.raises(InputError, match="coarse_groups must be a positive integer"):
        MeasureOptions(coarse_groups=groups)


def test_the_schema_says_which_codes_are_ordered():
    df = pd.DataFrame({"x": [1.0, 2.0, None], "k": ["u", "v", "u"]})
    schema = Schema.from_dataframe(df, bounds={"x": (0.0, 10.0)}, bins={"x": 20}, categories={"k": ["u", "v"]},
                                   nullable=["x"])
    assert schema.domain.sizes == (21, 2) and schema.domain.ordered == (20, 0)  # 20 cells, then the missing value
    with pytest.raises(SchemaError, match="ordered"):
        Domain(("a",), (3,), ordered=(4,))


def test_reading_through_groups_matches_counting_mapped_records():
    data, views = table(), CoarseViews(DOMAIN, groups=GROUPS)
    codes = data.expand()
    for r in [(4, 1), (4, 6), (1, 6), (6, 3)]:
        base, maps = views.base(r), views.groups(r)
        mapped = np.column_stack([codes[:, a] if m is None else m[codes[:, a]] for a, m in zip(base, maps)])
        shape = tuple(views.cells((x,)) for x in r)
        brute = np.zeros(shape, dtype=np.int64)
        np.add.at(brute, tuple(mapped.T), 1)
        assert np.array_equal(views.read(r, data.marginal(base).reshape(-1)), brute.reshape(-1))
        index = coarse_index(DOMAIN, codes, base, maps)  # the reweighted sample's cells: the same order
        assert np.array_equal(np.bincount(index, minlength=brute.size), brute.reshape(-1))


def test_spreading_is_the_adjoint_of_summing():
    gen = np.random.default_rng(1)
    maps = (group_map(21, 20, GROUPS), None, group_map(16, 16, GROUPS))
    x = gen.normal(size=(21, 3, 16))
    y = gen.normal(size=(9, 3, 8))
    assert math.isclose(float(np.sum(group_sum(x, maps) * y)), float(np.sum(x * group_spread(y, maps))))


def test_coarse_scores_move_by_at_most_the_sensitivity_on_neighbours():
    """Every candidate's score, fine and coarse, moves by at most the largest weight (add/remove) or twice it
    (replace-one) on neighbours, and the bound is attained by a coarse candidate (§8.3, §8.11)."""
    data, views = table(), CoarseViews(DOMAIN, groups=GROUPS)
    fine = candidate_weights(WORKLOAD)
    weights = fine | views.candidates(fine)
    coarse = [r for r in weights if views.groups(r) is not None]
    assert coarse and max(weights.values()) == max(fine.values())
    model = estimators.fit(DOMAIN, [NoisyMarginal((a,), data.marginal((a,)).reshape(-1) + 0.3, 4.0)
                                    for a in range(len(DOMAIN))], 10)

    sample = model.sample(500, np.random.default_rng(0))

    def scores(d, cands):  # the pairs no clique of the 1-way model holds are counted on its sample
        answers = {r: views.read(r, d.marginal(views.base(r)).reshape(-1)) for r in cands}
        return _scores(cands, weights, answers, model, sample, math.sqrt(2 / math.pi) * 2, views,
                       {r for r in cands if model.holder(views.base(r)) is None})

    codes = data.expand()
    moved_add = moved_rep = 0
    for row in [(3, 1, 2, 5), (20, 0, 8, 0), (19, 2, 15, 9)]:
        added = AggregatedData.from_codes(DOMAIN, np.vstack([codes, [row]]))
        changed = codes.copy()
        changed[0] = row
        replaced = AggregatedData.from_codes(DOMAIN, changed)
        base = scores(data, coarse)
        moved_add = max(moved_add, np.abs(scores(added, coarse) - base).max())
        moved_rep = max(moved_rep, np.abs(scores(replaced, coarse) - base).max())
    max_w = max(weights.values())
    assert moved_add == max_w  # attained: a halved sensitivity would be wrong
    assert moved_rep <= 2 * max_w


@pytest.mark.parametrize("relation,sens_sq", [("add-remove", 1), ("replace-one", 2)])
def test_coarse_measurements_are_charged_as_marginals_and_measure_the_grouped_counts(monkeypatch, relation, sens_sq):
    data, views, captured = table(), CoarseViews(DOMAIN, groups=GROUPS), []
    real = state.measure_one

    def spy(answers, attrs, sigma2, sensitivity_sq, **kw):
        m, y = real(answers, attrs, sigma2, sensitivity_sq, **kw)
        captured.append((m, answers.copy(), y))
        return m, y

    monkeypatch.setattr(state, "measure_one", spy)
    rho = Fraction(2)  # precise: the rounds afford coarse pairs
    ledger = ZcdpLedger(rho)
    measure(data, WORKLOAD, budget=rho, relation=relation, ledger=ledger, rng=PrivateRandom(0), options=OPTIONS,
            progress=False)
    coarse = [(m, a, y) for m, a, y in captured if m.groups is not None]
    assert coarse, "the rounds selected no coarse marginal"
    for m, answers, y in coarse:
        assert m.groups == views.group_counts(views.coarse(m.attrs))
        assert m.to_dict()["groups"] == {DOMAIN.names[a]: k for a, k in zip(m.attrs, m.groups) if k is not None}
        assert m.to_dict()["groups"].get("a") in (None, 9)  # 8 groups of cells and the missing value
        key = views.coarse(m.attrs)
        assert np.array_equal(answers, views.read(key, data.marginal(m.attrs).reshape(-1)))
        assert answers.size == views.cells(key) == y.size
        assert m.rho == gaussian_rho(sens_sq, m.sigma2) == Fraction(sens_sq) / (2 * m.sigma2)
    charged = [e.rho for e in ledger.events if e.mechanism == "gaussian"]
    assert sum(charged) == sum(m.rho for m, _, _ in captured)
    assert ledger.spent <= rho


def test_the_estimator_fits_the_grouped_counts_of_a_coarse_measurement():
    """Exact 1-way measurements and an exact coarse pair: the model's counts summed over the groups meet the pair."""
    data, views = table(2000), CoarseViews(DOMAIN, groups=GROUPS)
    key = views.coarse((0, 2))
    exact = [NoisyMarginal((a,), data.marginal((a,)).reshape(-1).astype(float), 1.0) for a in range(len(DOMAIN))]
    pair = NoisyMarginal((0, 2), views.read(key, data.marginal((0, 2)).reshape(-1)).astype(float), 1.0,
                         views.attr_maps((0, 2)))
    alone = estimators.fit(DOMAIN, exact + [replace(pair, sigma2=1e12)], 1000)  # the pair's clique, nearly unweighted
    both = estimators.fit(DOMAIN, exact + [pair], 1000)
    target = pair.counts
    gap = lambda model: np.abs(model.counts_as(pair) - target).sum() / data.n
    assert gap(both) < 0.01 and gap(alone) > 0.5  # the independent model misses the pair's structure; the fit finds it


def correlated(n: int = 20_000, columns: int = 5, seed: int = 3) -> pd.DataFrame:
    gen = np.random.default_rng(seed)
    z = gen.normal(size=(n, 1))
    x = 50 + 12 * (0.85 * z + math.sqrt(1 - 0.85**2) * gen.normal(size=(n, columns)))
    return pd.DataFrame(np.clip(x, 0, 100).round(2), columns=[f"x{i}" for i in range(columns)])


def mean_correlation(df: pd.DataFrame) -> float:
    c = df.corr().to_numpy()
    return float(c[np.triu_indices(len(c), 1)].mean())


def test_many_celled_numeric_columns_keep_their_correlations():
    """Five columns correlated at 0.72, PrivTree's cells (about 70 a column), eps 1: the rounds and the covering step
    measure coarse pairs and the release keeps most of the correlation (0.65); without coarse views it loses most
    of it (0.14)."""
    df = correlated()
    options = dict(epsilon=1.0, delta=1e-9, bounds={c: (0.0, 100.0) for c in df}, random_state=0, progress=False)
    with_views = synthdp.generate_synthetic(df, "marginals:2", **options)
    no_views = MeasureOptions(coarse_groups=10**6)  # a view would need 2 million cells: no column has one
    without = synthdp.generate_synthetic(df, "marginals:2", measure_options=no_views, **options)
    real = mean_correlation(df)
    assert real > 0.7
    chosen = [m for m in with_views.report.measurements if m["selected_by"] == "exponential"]
    groups = MeasureOptions().coarse_groups
    assert any(m.get("groups") == {name: groups for name in m["marginal"]} for m in chosen)
    assert any(m.get("groups") for m in with_views.report.measurements if m["selected_by"] == "cover")
    assert "read numeric columns through groups of their cells" in with_views.report.summary()
    assert mean_correlation(with_views.data) > 0.6 * real > mean_correlation(without.data)


@pytest.mark.parametrize("spike,fine", [(0.0, False), (0.7, True)])
def test_the_covering_step_reads_finely_only_where_cells_stand_above_the_noise(spike, fine):
    """Four numeric columns, marginals:3 (the rounds cannot cover them all): smooth columns have no 3-way cell above
    the covering noise, so every covering measurement reads the groups; columns with 70% of their values at one
    point put a third of the table in one cell, so every covering measurement reads the fine cells (§8.11 step 5)."""
    gen = np.random.default_rng(5)
    n = 6000
    values = gen.uniform(0, 100, size=(n, 4))
    values[gen.random((n, 4)) < spike] = 50.0
    df = pd.DataFrame(values.round(2), columns=list("pqrs"))
    release = synthdp.generate_synthetic(df, "marginals:3", epsilon=0.5, delta=1e-9, random_state=0, progress=False,
                                         bounds={c: (0.0, 100.0) for c in df},
                                         measure_options=MeasureOptions(coarse_groups=GROUPS))  # PrivTree: ~20 cells
    cover = [m for m in release.report.measurements if m["selected_by"] == "cover" and not m.get("level")
             and len(m["marginal"]) == 3]  # not the one-way marginals measured again (docs/privacy.md §13)
    assert cover
    assert all((m.get("groups") is None) == fine for m in cover)


def test_twins_are_candidates_only_within_their_share_of_the_model_size_cap(monkeypatch):
    """With no share of the size cap a twin is picked only once a model clique holds its fine cells (it adds no
    cells to the model); with the whole cap, before."""
    data, rho, views = table(), Fraction(2), CoarseViews(DOMAIN, groups=GROUPS)
    real = rounds._select
    for share in (0.0, 1.0):
        held = []

        def spy(run, model, spend, label):
            r, before = real(run, model, spend, label)
            if views.groups(r) is not None:
                held.append(model.holder(views.base(r)) is not None)
            return r, before

        monkeypatch.setattr(rounds, "_select", spy)
        measure(data, WORKLOAD, budget=rho, relation="add-remove", ledger=ZcdpLedger(rho), rng=PrivateRandom(0),
                options=replace(OPTIONS, coarse_model_share=share), progress=False)
        assert held and all(held) == (share == 0.0)
    with pytest.raises(InputError, match="coarse_model_share"):
        MeasureOptions(coarse_model_share=2)
    with pytest.raises(InputError, match="cover_fine_mass"):
        MeasureOptions(cover_fine_mass=-0.1)


@pytest.mark.parametrize("relation,unit,factor", [("add-remove", 1, 1), ("replace-one", 1, 2), ("add-remove", 3, 3)])
def test_coarse_laplace_measurements_are_charged_as_marginals(relation, unit, factor):
    """Pure DP (docs/privacy.md §10.2): a coarse measurement's Laplace charge is ``a Delta_1`` with a marginal's
    ``Delta_1`` (1, 2 under replace-one, ``k`` for units of ``k`` rows), and the run spends at most its epsilon."""
    epsilon = Fraction(20)  # precise: the rounds afford coarse pairs
    ledger = Ledger(epsilon, Fraction(0), contribution_bound=unit)
    release = measure(table(), WORKLOAD, budget=epsilon, relation=relation, ledger=ledger, rng=PrivateRandom(0),
                      options=OPTIONS, progress=False, pure=True)
    coarse = [m for m in release.measurements if m.groups is not None]
    assert coarse and all(m.noise == "laplace" for m in coarse)
    assert all(m.cost == factor * m.scale for m in release.measurements)
    laplace = [e.epsilon for e in ledger.events if e.mechanism == "laplace"]
    assert laplace == [m.cost for m in release.measurements] and sum(e.epsilon for e in ledger.events) <= epsilon


def test_a_candidate_of_more_fine_cells_than_the_cap_is_read_through_its_twin_only():
    """With ``max_fine_cells=100``, (a, c) (336 cells) and (c, d) (160) leave the candidates for their twins, whose
    true counts are counted from the rows' groups without the fine ones; (a, b) (63) and (b, c) (48) stay; no
    measurement of the run reads a marginal of more than 100 cells finely when it has a twin."""
    views = CoarseViews(DOMAIN, groups=GROUPS, max_fine_cells=100)
    weights = candidate_weights(WORKLOAD)
    assert set(views.fine_candidates(weights)) == set(weights) - {(0, 2), (2, 3)}
    assert views.counted_cells((0, 2)) == 9 * 8 and views.counted_cells((0, 1)) == 63
    assert set(CoarseViews(DOMAIN, groups=GROUPS).fine_candidates(weights)) == set(weights)  # no cap
    data = table()
    answers = state.TrueCounts(data, views)
    twin = views.coarse((0, 2))
    assert np.array_equal(answers[twin], views.read(twin, data.marginal((0, 2)).reshape(-1)))
    assert (0, 2) not in answers  # the fine counts were never formed
    rho = Fraction(1)
    release = measure(data, WORKLOAD, budget=rho, relation="add-remove", ledger=ZcdpLedger(rho), rng=PrivateRandom(0),
                      options=replace(OPTIONS, max_fine_cells=100), progress=False)
    fine = [m.attrs for m in release.measurements if m.groups is None and m.level is None]
    assert fine and all(views.read_finely(r) for r in fine), fine
    assert {m.attrs for m in release.measurements if m.groups is not None} >= {(0, 2), (2, 3)}
    with pytest.raises(InputError, match="max_fine_cells"):
        MeasureOptions(max_fine_cells=0)


def test_a_twin_read_through_only_is_measured_once_even_when_twins_are_refined(monkeypatch):
    """With ``refine_split="halves"`` the covering step refines the twins it reads (docs/privacy.md §11.1), but the
    twins of (a, c) and (c, d), over a cap of 100 fine cells, are measured once, through their groups: the levels
    would read their fine counts, which are never formed.  At rho 1/4 and seed 5 the covering noise deviation (3.3)
    is above some of the model's counts on (a, b) and below all of them on (b, c) (the counts follow the fit and
    its empty tails, §8.7: at seed 0, since the tails of a column whose rows fill its cells are kept, no twin
    within the cap is read through its groups): a twin within the cap is read, and refined, and (b, c) is read
    finely even at ``cover_fine_mass = 1``."""
    counted = []
    missing = state.TrueCounts.__missing__

    def recorded(self, r):
        counted.append(r)
        return missing(self, r)

    monkeypatch.setattr(state.TrueCounts, "__missing__", recorded)
    rho = Fraction(1, 4)
    options = replace(OPTIONS, max_fine_cells=100, refine_split="halves", cover_fine_mass=1.0)
    release = measure(table(), WORKLOAD, budget=rho, relation="add-remove", ledger=ZcdpLedger(rho),
                      rng=PrivateRandom(5), options=options, progress=False)
    views = CoarseViews(DOMAIN, groups=GROUPS, max_fine_cells=100)
    cover = [m for m in release.measurements if m.selected_by == "cover"]
    capped = [m for m in cover if not views.read_finely(m.attrs)]
    assert sorted(m.attrs for m in capped) == [(0, 2), (2, 3)]  # each measured once ...
    assert all(m.groups is not None and m.level is None for m in capped)  # ... through its twin, not refined
    assert (0, 2) not in counted and (2, 3) not in counted
    twins = [m for m in cover if m.groups is not None and views.read_finely(m.attrs)]
    assert twins and all(m.level == 0 for m in twins)  # a twin within the cap is read as a refined reading ...
    assert {m.attrs for m in cover if m.level} == {m.attrs for m in twins}  # ... and has levels below it
    assert (1, 2) in {m.attrs for m in cover if m.fine}  # every model count on it clears the deviation


def test_the_covering_rule_is_met_exactly_when_no_cell_holds_mass_below_the_noise():
    """The covering step's rule (docs/privacy.md §8.11 step 5) at ``cover_fine_mass = 1``: finely when no cell holds
    mass below the noise deviation, however the counts' sum rounds (these ones sum to 0.6000000000000001 and to 0.6
    without their empty cells), in any order; through the twin when one cell does.  At 0 always finely, and a share
    met exactly is met."""
    counts = np.array([0.1, 0.0] * 2 + [0.1] * 4)
    for order in (counts, counts[::-1], np.sort(counts)):
        assert fine_mass_suffices(order, 0.05, 1.0)
    assert not fine_mass_suffices(np.append(counts, 0.01), 0.05, 1.0)
    assert fine_mass_suffices(np.full(4, 0.01), 0.05, 0.0)
    assert fine_mass_suffices(np.array([1.0, 3.0]), 2.0, 0.75)
    assert not fine_mass_suffices(np.array([1.0, 3.0]), 2.0, 0.76)


def test_the_covering_rule_weighs_the_counts_against_their_own_sum_not_the_models_total():
    """The model's total and the sum of its counts on a marginal can differ in the last bit (they did, one way with
    AVX-512 kernels and the other way without); the rule reads the counts alone, so a model one ulp heavier than
    its counts on (b, c), every one of them above the noise deviation, still has (b, c) read finely at
    ``cover_fine_mass = 1`` (docs/privacy.md §8.11 step 5)."""
    counts = np.full(48, 12.5)  # (b, c): 3 x 16 cells summing to 600 exactly

    class Model:
        total = float(np.nextafter(600.0, 700.0))

        def holder(self, r):
            return 0

        def counts(self, r):
            return counts

    run = SimpleNamespace(views=CoarseViews(DOMAIN, groups=GROUPS, max_fine_cells=100),
                          noise=GaussianNoise("add-remove"), options=replace(OPTIONS, cover_fine_mass=1.0))
    assert covering_step._cover_readings(run, Model(), [((1, 2), Fraction(4))]) == [(1, 2)]
    counts[0] = 1.0  # a cell under the deviation (2): through the twin
    assert covering_step._cover_readings(run, Model(), [((1, 2), Fraction(4))]) == [(1, 6)]


def test_the_plan_counts_the_largest_candidates_through_their_twins():
    """Six numeric columns of 700 cells: each fine 3-way has 343 million cells, so the counts of all of them are
    refused without the cap; read through their twins they fit."""
    from synthdp.methods.measure.method import check_sizes

    wide = Domain(tuple("uvwxyz"), (700,) * 6, ordered=(700,) * 6)
    weights = candidate_weights(list(itertools.combinations(range(6), 3)))
    with pytest.raises(InputError, match="would count"):
        check_sizes(wide, weights, CoarseViews(wide, groups=12))
    check_sizes(wide, weights, CoarseViews(wide, groups=12, max_fine_cells=MeasureOptions().max_fine_cells))
