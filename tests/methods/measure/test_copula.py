"""The Gaussian copula that draws the reweighted sample's numeric columns (docs/privacy.md §8.12): the bivariate normal
distribution function against SciPy's, correlations recovered from grouped samples with and without noise, what the
redraw keeps and the correlations it restores, and a run that reads released counts only."""

from __future__ import annotations

from dataclasses import replace
from types import SimpleNamespace
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from synthdp.accounting.zcdp import ZcdpLedger
from synthdp.core.data import AggregatedData
from synthdp.core.domain import Domain
from synthdp.core.errors import InputError
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.methods.measure import algorithm, copula, release as release_module
from synthdp.methods.measure.state import TrueCounts
from synthdp.methods.measure.algorithm import measure
from synthdp.methods.measure.coarse import group_map
from synthdp.methods.measure.copula import (Copula, bends, bivariate_normal_cdf, copula_matrix, correlations,
                                            pair_fit, pair_tables, redraw_numbers, strong_columns)
from synthdp.methods.measure.estimators import EstimatorSettings, NoisyMarginal
from synthdp.methods.measure.settings import MeasureOptions


@pytest.mark.parametrize("r", [-0.8, -0.3, 0.0, 0.5, 0.9, 0.99])
def test_the_bivariate_normal_distribution_function_is_scipys(r):
    gen = np.random.default_rng(1)
    h, k = gen.normal(0, 1.5, 40), gen.normal(0, 1.5, 40)
    ours = bivariate_normal_cdf(h, k, r)
    theirs = [stats.multivariate_normal([0, 0], [[1, r], [r, 1]]).cdf([a, b]) for a, b in zip(h, k)]
    assert np.allclose(ours, theirs, atol=1e-7)


def grouped_normal(r: float, n: int = 30_000, groups: int = 12, seed: int = 0) -> np.ndarray:
    """``n`` standard normal pairs with correlation ``r`` counted on ``groups`` equal-probability groups each."""
    x = np.random.default_rng(seed).multivariate_normal([0, 0], [[1, r], [r, 1]], n)
    cuts = stats.norm.ppf(np.linspace(0, 1, groups + 1)[1:-1])
    table = np.zeros((groups, groups))
    np.add.at(table, (np.searchsorted(cuts, x[:, 0]), np.searchsorted(cuts, x[:, 1])), 1)
    return table


@pytest.mark.parametrize("r", [-0.6, 0.0, 0.5, 0.9, 0.97])
def test_the_correlation_of_a_grouped_normal_sample_is_recovered(r):
    assert pair_fit(grouped_normal(r)).correlation == pytest.approx(r, abs=0.01)


@pytest.mark.parametrize("r", [0.0, 0.5, 0.97])
def test_noise_on_the_counts_does_not_pull_the_correlation_toward_zero(r):
    """Noise of sd 30 on cells of about 200 records: empty cells read above 0 on average once clipped, and a
    likelihood of clipped counts would read 0.97 as about 0.93; least squares stays within 0.02."""
    table = grouped_normal(r) + np.random.default_rng(5).normal(0, 30, (12, 12))
    assert pair_fit(table, 900.0).correlation == pytest.approx(r, abs=0.02)


def grouped(x: np.ndarray, y: np.ndarray, groups: int = 8) -> np.ndarray:
    cuts = [np.quantile(v, np.linspace(0, 1, groups + 1)[1:-1]) for v in (x, y)]
    table = np.zeros((groups, groups))
    np.add.at(table, (np.searchsorted(cuts[0], x), np.searchsorted(cuts[1], y)), 1)
    return table


def test_a_copula_explains_a_monotone_relation_and_not_a_curved_one():
    """y = 0.95 x + noise: the fit explains all but 0.1% of the departure from independence, with noise of sd 30
    too; y = -x**2 + 0.8 x + noise (rising, then falling, rank correlation 0.41): a correlation of 0.57 that
    explains a quarter of it, so the pair does not count as moving together."""
    gen = np.random.default_rng(0)
    x = gen.normal(size=30_000)
    straight = grouped(x, 0.95 * x + math.sqrt(1 - 0.95 ** 2) * gen.normal(size=30_000))
    curved = grouped(x, -x ** 2 + 0.8 * x + 0.7 * gen.normal(size=30_000))
    assert pair_fit(straight).explained > 0.99
    assert pair_fit(straight + gen.normal(0, 30, (8, 8)), 900.0).explained > 0.99
    fit = pair_fit(curved)
    assert fit.correlation > 0.5 and fit.explained < 0.4


def test_the_noise_is_not_counted_as_a_departure_the_copula_fails_to_explain():
    """A weak relation (correlation 0.3) under noise of sd 60 a cell: the noise's expected share left out, the fit
    explains nearly all of it; counted, the share would fall to about 0.85."""
    gen = np.random.default_rng(0)
    x = gen.normal(size=30_000)
    table = grouped(x, 0.3 * x + math.sqrt(1 - 0.09) * gen.normal(size=30_000))
    for seed in range(5):
        assert pair_fit(table + np.random.default_rng(seed).normal(0, 60, (8, 8)), 3600.0).explained > 0.95


def test_the_columns_that_move_together_need_a_strong_correlation_that_a_copula_explains():
    corr = np.array([[1.0, 0.9, 0.6, 0.1], [0.9, 1.0, 0.2, 0.0], [0.6, 0.2, 1.0, 0.0], [0.1, 0.0, 0.0, 1.0]])
    explained = np.array([[0, 0.95, 0.3, 1.0], [0.95, 0, 1.0, 1.0], [0.3, 1.0, 0, 1.0], [1.0, 1.0, 1.0, 0]])
    vague = np.full((4, 4), math.inf)  # errors too large for the related pairs' test
    assert strong_columns(corr, explained, vague, correlation=0.5, share=0.9) == [0, 1]
    assert strong_columns(corr, explained, vague, correlation=0.5, share=0.2) == [0, 1, 2]
    assert strong_columns(corr, explained, vague, correlation=0.95, share=0.2) == []
    assert strong_columns(-corr, explained, vague, correlation=0.5, share=0.9) == [0, 1]
    # measured loosely, the 0.9 pair is related at any ``correlation``; 0.6 with a share of 0.3 is not
    assert strong_columns(corr, explained, np.full((4, 4), 0.05), correlation=0.95, share=0.2) == [0, 1]


@pytest.mark.parametrize("r, error, taken", [(0.75, 0.2, False), (0.75, 0.1, True), (0.75, 0.02, False),
                                             (0.75, math.inf, False), (0.3, 0.04, False)])
def test_a_related_pair_needs_a_correlation_far_beyond_its_error_and_a_loose_measurement(r, error, taken):
    """0.75, explaining 0.74 (the credit table's assets and debt, independent, read off noise at 3.8 errors): taken
    at 7.5 errors, not at 3.75, nor when measured as closely as 0.02 (left to the reweighting), nor unread; 0.3 is
    too weak at any error."""
    corr, explained = np.array([[1.0, r], [r, 1.0]]), np.array([[0.0, 0.74], [0.74, 0.0]])
    chosen = strong_columns(corr, explained, np.full((2, 2), error), correlation=0.8, share=0.9)
    assert chosen == ([0, 1] if taken else [])


@pytest.mark.parametrize("error, share, taken", [(0.162, 0.63, True), (0.175, 0.63, True), (0.19, 0.63, False),
                                                 (0.162, 0.55, False)])
def test_a_related_pair_read_through_covering_views_moves_together_at_four_errors(error, share, taken):
    """0.73 explaining 0.63 (the credit table's price and loan read through covering views of 6 groups, seed 2: 4.5
    errors): taken at 4.5 and 4.2 errors, not at 3.8, nor explaining 0.55."""
    corr, explained = np.array([[1.0, 0.73], [0.73, 1.0]]), np.array([[0.0, share], [share, 0.0]])
    chosen = strong_columns(corr, explained, np.full((2, 2), error), correlation=0.8, share=0.9)
    assert chosen == ([0, 1] if taken else [])


@pytest.mark.parametrize("r, error, share", [(0.566, 0.169, 1.0), (0.6, 0.162, 0.48), (0.74, 0.236, 0.42)])
def test_the_looser_test_takes_what_the_default_leaves_out(r, error, share):
    """The credit table's readings at eps 1 of the price and the loan (0.566 at 3.35 errors explaining 1.00, seed 3;
    0.60 at 3.7 explaining 0.48, seed 5) and at eps 4 of the assets and the debt (independent: 0.74 at 3.13
    explaining 0.42, seed 2): all left out at the default 4 errors and 0.6, all taken at 3 and 0.4."""
    corr, explained = np.array([[1.0, r], [r, 1.0]]), np.array([[0.0, share], [share, 0.0]])
    errors = np.full((2, 2), error)
    assert strong_columns(corr, explained, errors, correlation=0.8, share=0.9) == []
    assert strong_columns(corr, explained, errors, correlation=0.8, share=0.9, significance=3.0,
                          related_share=0.4) == [0, 1]


def hump(n: int = 30_000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """x uniform, y rising with x to its middle, then falling (hours of work with age), on 12 x 12 groups."""
    gen = np.random.default_rng(seed)
    x = gen.uniform(-1, 1, n)
    return x, -2.0 * x ** 2 + 0.6 * x + 0.3 * gen.normal(size=n)


def test_a_pair_that_rises_then_falls_bends_and_a_monotone_one_does_not():
    """The hump's halves read about 0.9 and -0.7, whole it reads 0.4 explaining under 0.4; a straight relation, a
    weak one (0.2) and a relation strong on one half only (0 below the median, 0.8 above) do not bend, with or
    without noise of sd 30 a cell; nor does an empty half."""
    x, y = hump()
    curved = grouped(x, y, 12)
    noisy = curved + np.random.default_rng(1).normal(0, 30, (12, 12))
    assert bends(curved) and bends(noisy, 900.0)
    assert bends(noisy.T, 900.0)  # cut by y, the parts read 0.6 and 0.0: the bend is seen by cutting x
    gen = np.random.default_rng(2)
    for r in (0.95, 0.2, -0.6):
        straight = grouped(x, r * x + math.sqrt(1 - r * r) * gen.normal(size=len(x)), 12)
        assert not bends(straight) and not bends(straight + gen.normal(0, 30, (12, 12)), 900.0)
    one_sided = grouped(x, np.where(x > 0, x, 0.0) + 0.3 * gen.normal(size=len(x)), 12)
    assert not bends(one_sided) and not bends(one_sided + gen.normal(0, 30, (12, 12)), 900.0)
    top = np.zeros((12, 12))
    top[-1] = 100.0
    assert not bends(top)


@pytest.mark.parametrize("seed", range(20))
def test_noise_alone_does_not_bend_an_independent_pair(seed):
    gen = np.random.default_rng(seed)
    table = grouped(gen.normal(size=30_000), gen.normal(size=30_000), 12) + gen.normal(0, 60, (12, 12))
    assert not bends(table, 3600.0)


def test_a_pair_that_bends_does_not_move_together():
    """A pair that would qualify on both rules (0.9 explaining 0.95, measured loosely at 0.05) is not taken when it
    bends, and the other pairs still are."""
    corr = np.array([[1.0, 0.95, 0.9], [0.95, 1.0, 0.9], [0.9, 0.9, 1.0]])
    explained = np.array([[0.0, 1.0, 0.95], [1.0, 0.0, 0.95], [0.95, 0.95, 0.0]])
    bent = np.array([[False, False, True], [False, False, True], [True, True, False]])
    errors = np.full((3, 3), 0.05)
    assert strong_columns(corr, explained, errors, correlation=0.8, share=0.9) == [0, 1, 2]
    assert strong_columns(corr, explained, errors, correlation=0.8, share=0.9, bent=bent) == [0, 1]
    bent[0, 1] = bent[1, 0] = True
    assert strong_columns(corr, explained, errors, correlation=0.8, share=0.9, bent=bent) == []


def test_inside_the_copula_a_pair_that_bends_reads_through_a_third_column():
    """z follows x (0.95), y is a hump in x and a straight 0.9 in w, and w follows z: every column is in the copula
    through a straight pair, and x-y, which bends, gets the path's product, not what a monotone fit of its whole
    table reads."""
    x, y = hump()
    gen = np.random.default_rng(3)
    z = 0.95 * x / x.std() + 0.3 * gen.normal(size=len(x))
    w = 0.9 * y / y.std() + 0.45 * gen.normal(size=len(x))
    data = {0: x, 1: y, 2: z, 3: w}
    tables = {(a, b): (grouped(data[a], data[b], 12), 0.0) for a in range(4) for b in range(a + 1, 4)}
    read, _, _, bent = correlations(tables, [0, 1, 2, 3])
    assert bent[0, 1] and not bent[0, 2] and not bent[1, 3]
    found = copula.copula_of(tables, [0, 1, 2, 3], correlation=0.8)
    assert found is not None and found.columns == (0, 1, 2, 3)
    paths = np.where(bent, np.nan, read)
    assert found.correlation[0, 1] == pytest.approx(copula_matrix(paths)[0, 1], abs=1e-9)
    assert abs(found.correlation[0, 1] - read[0, 1]) > 0.1


def two_related_pairs(noise: float, seed: int = 0, n: int = 4_000) -> dict[tuple[int, int], tuple[np.ndarray, float]]:
    """Columns 0-1 and 2-3 each a normal pair of correlation 0.8, the pairs independent of each other, every pair
    counted on 6 x 6 quantile groups with normal noise of sd ``noise`` a cell: released pair tables."""
    gen = np.random.default_rng(seed)
    x, z = gen.normal(size=(2, n))
    data = [x, 0.8 * x + 0.6 * gen.normal(size=n), z, 0.8 * z + 0.6 * gen.normal(size=n)]
    return {(a, b): (grouped(data[a], data[b], 6) + gen.normal(0, noise, (6, 6)), noise ** 2)
            for a in range(4) for b in range(a + 1, 4)}


@pytest.mark.parametrize("seed", range(3))
def test_inside_the_copula_a_reading_that_passes_no_test_is_zero(seed):
    """Two related pairs on 4,000 rows under noise of sd 60 a cell: both join the copula, their own correlations are
    kept as read, and the four pairs across them (independent; read off the noise at under 3 errors) are 0 in the
    matrix, where keeping every reading (``keep_from=0``) puts them at what the noise made up."""
    tables = two_related_pairs(60.0, seed)
    read, _, error, _ = correlations(tables, [0, 1, 2, 3])
    across = [(0, 2), (0, 3), (1, 2), (1, 3)]
    assert all(abs(read[i, j]) < copula.RELATED_SIGNIFICANCE * error[i, j] for i, j in across)
    assert max(abs(read[i, j]) for i, j in across) > 0.01
    found = copula.copula_of(tables, [0, 1, 2, 3], correlation=0.8)
    assert found is not None and found.columns == (0, 1, 2, 3)
    for i, j in across:
        assert found.correlation[i, j] == pytest.approx(0.0, abs=1e-9)
    for i, j in [(0, 1), (2, 3)]:
        assert found.correlation[i, j] == pytest.approx(read[i, j], abs=1e-9)
    assert np.diag(found.correlation) == pytest.approx(np.ones(4))
    everything = copula.copula_of(tables, [0, 1, 2, 3], correlation=0.8, keep_from=0.0)
    assert everything is not None
    assert everything.correlation == pytest.approx(copula_matrix(read), abs=1e-9)


def test_inside_the_copula_a_reading_is_kept_from_its_own_number_of_errors():
    """The largest reading across the two pairs, at ``z`` of its own errors, is kept as read when the threshold is
    just under ``z`` and left open just above it (0: no chain of kept pairs joins its columns); kept, it joins the
    two pairs, and the other pairs across take what the chain implies (the completion's inverse is 0 there)."""
    tables = two_related_pairs(60.0)
    read, _, error, _ = correlations(tables, [0, 1, 2, 3])
    across = [(0, 2), (0, 3), (1, 2), (1, 3)]
    i, j = max(across, key=lambda p: abs(read[p]) / error[p])
    z = abs(read[i, j]) / error[i, j]
    kept = copula.copula_of(tables, [0, 1, 2, 3], correlation=0.8, keep_from=0.99 * z)
    cut = copula.copula_of(tables, [0, 1, 2, 3], correlation=0.8, keep_from=1.01 * z)
    assert kept is not None and cut is not None
    assert kept.correlation[i, j] == pytest.approx(read[i, j], abs=1e-9) and abs(read[i, j]) > 0.01
    assert cut.correlation[i, j] == pytest.approx(0.0, abs=1e-9)
    precision = np.linalg.inv(kept.correlation)
    for p in across:
        if p != (i, j):
            assert cut.correlation[p] == pytest.approx(0.0, abs=1e-9)
            assert precision[p] == pytest.approx(0.0, abs=1e-9)
            assert abs(kept.correlation[p]) > 0.5 * abs(read[i, j]) * 0.5


def test_the_release_reads_the_copula_tests_from_its_options():
    """The release's copula follows ``copula_keep_from`` and the loose-pair test of its options: every reading kept
    at 0, the pairs across set to 0 by default; with ``copula_from`` out of reach and no null tables, no copula
    when the loose test asks for more errors than the pairs read."""
    tables = two_related_pairs(60.0)
    maps = {a: np.arange(6) for a in range(4)}
    read, _, error, _ = correlations(tables, [0, 1, 2, 3])

    def copula_with(**options) -> Copula | None:
        return release_module._copula(SimpleNamespace(options=MeasureOptions(**options)), maps, tables)

    found, everything = copula_with(), copula_with(copula_keep_from=0.0)
    assert found is not None and everything is not None
    assert found.correlation[0, 2] == pytest.approx(0.0, abs=1e-9)
    assert everything.correlation == pytest.approx(copula_matrix(read), abs=1e-9)
    most = max(abs(read[0, 1]) / error[0, 1], abs(read[2, 3]) / error[2, 3])
    assert copula_with(copula_from=1.0, related_significance=0.99 * most) is not None
    assert copula_with(copula_from=1.0, related_significance=1.01 * most, related_null_draws=0) is None


@pytest.mark.parametrize("name, value", [("copula_keep_from", -1.0), ("copula_keep_from", math.inf),
                                         ("related_significance", True), ("related_significance", "3"),
                                         ("related_explained", 1.5)])
def test_the_copula_tests_refuse_bad_thresholds(name, value):
    with pytest.raises(InputError, match=name):
        MeasureOptions(**{name: value})


def test_a_table_with_one_group_with_counts_has_no_correlation():
    table = np.zeros((12, 12))
    table[3, :] = 50
    assert pair_fit(table) == copula.PairFit(0.0, 0.0, math.inf)


# two numeric columns of 48 ordered cells and a missing value, a category; 12 groups of 4 cells
DOMAIN = Domain(("x", "c", "y"), (49, 3, 49), ordered=(48, 0, 48))
MAPS = {0: group_map(49, 48, 12), 2: group_map(49, 48, 12)}


def correlated_codes(r: float, n: int = 40_000, seed: int = 0) -> np.ndarray:
    """Codes of a normal pair with correlation ``r`` on 48 equal-probability cells; 2% missing x; c from x."""
    gen = np.random.default_rng(seed)
    z = gen.multivariate_normal([0, 0], [[1, r], [r, 1]], n)
    cells = np.clip((stats.norm.cdf(z) * 48).astype(int), 0, 47)
    x = np.where(gen.random(n) < 0.02, 48, cells[:, 0])
    return np.column_stack([x, gen.integers(0, 3, n), cells[:, 1]])


def shuffled_within_groups(codes: np.ndarray, seed: int = 1) -> np.ndarray:
    """Each ordered cell of x and y moved to a uniform cell of its own group: independent inside the groups."""
    gen = np.random.default_rng(seed)
    out = codes.copy()
    for a in (0, 2):
        inside = out[:, a] < 48
        out[inside, a] = (out[inside, a] // 4) * 4 + gen.integers(0, 4, inside.sum())
    return out


def same_position(codes: np.ndarray, columns: tuple[int, int] = (0, 2)) -> float:
    """Among records with both values and x, y (``columns``) in the same group of 4 cells, the share at the same
    place inside it."""
    x, y = codes[:, columns[0]], codes[:, columns[1]]
    both = (x < 48) & (x // 4 == y // 4)
    return float(np.mean(x[both] % 4 == y[both] % 4))


def one_way(codes: np.ndarray, a: int) -> np.ndarray:
    return np.bincount(codes[:, a], minlength=49).astype(float)


def redraw(codes: np.ndarray, r: float, seed: int = 2) -> np.ndarray:
    corr = np.array([[1.0, r], [r, 1.0]])
    return redraw_numbers(codes, [0, 2], {a: one_way(codes, a) for a in (0, 2)}, corr, DOMAIN,
                          np.random.default_rng(seed))


def spearman(codes: np.ndarray, a: int, b: int) -> float:
    kept = (codes[:, a] < 48) & (codes[:, b] < 48)
    return float(stats.spearmanr(codes[kept, a], codes[kept, b]).statistic)


def test_the_redraw_keeps_one_cell_of_each_record_every_other_value_and_the_one_way_shares():
    codes = shuffled_within_groups(correlated_codes(0.95))
    out = redraw(codes, 0.95)
    assert np.all((out[:, 0] == codes[:, 0]) | (out[:, 2] == codes[:, 2]))
    assert 0.3 < np.mean(out[:, 0] == codes[:, 0]) < 0.7
    for a in (0, 2):
        assert np.abs(one_way(out, a) - one_way(codes, a)).max() / len(codes) < 0.004
    assert np.array_equal(out[:, 1], codes[:, 1])
    assert np.array_equal(out[:, 0] == 48, codes[:, 0] == 48)


def test_the_redraw_draws_each_column_by_the_models_one_way_shares():
    """Shares falling by half from each cell to the next (most records in the first cells), and a cell with none:
    the redrawn columns keep them, and the empty cell stays empty."""
    shares = 0.5 ** np.arange(48) * (np.arange(48) != 2)
    gen = np.random.default_rng(6)
    codes = np.column_stack([gen.choice(48, 40_000, p=shares / shares.sum()), gen.integers(0, 3, 40_000),
                             gen.choice(48, 40_000, p=shares / shares.sum())])
    out = redraw(codes, 0.7)
    for a in (0, 2):
        assert np.abs(one_way(out, a) - one_way(codes, a)).max() / len(codes) < 0.01
        assert one_way(out, a)[2] == 0


@pytest.mark.parametrize("r", [0.0, 0.5, 0.95])
def test_a_pair_drawn_independent_gets_the_copulas_correlation(r):
    """x and y drawn independently (the model's staircase, here with no structure at all): redrawn with the data's
    correlation, their rank correlation is the data's, and inside a pair of groups as many records share a place."""
    data = correlated_codes(r)
    start = correlated_codes(0.9) if r == 0 else np.column_stack(
        [data[:, 0], data[:, 1], np.random.default_rng(3).permutation(data[:, 2])])  # a no-op must fail
    out = redraw(start, r)
    assert spearman(out, 0, 2) == pytest.approx(spearman(data, 0, 2), abs=0.02)
    assert same_position(out) == pytest.approx(same_position(data), abs=0.03)


def test_three_columns_drawn_given_one_keep_every_pairs_correlation():
    """Given the anchor, the two other columns are drawn jointly: each pair's rank correlation is the data's (drawn
    independently given the anchor, the pair without it would have 0.8 ** 2)."""
    gen = np.random.default_rng(4)
    corr = np.full((3, 3), 0.8) + 0.2 * np.eye(3)
    data = np.clip((stats.norm.cdf(gen.multivariate_normal(np.zeros(3), corr, 40_000)) * 48).astype(int), 0, 47)
    domain = Domain(("x", "y", "z"), (48, 48, 48), ordered=(48, 48, 48))
    independent = np.column_stack([gen.permutation(data[:, a]) for a in range(3)])
    out = redraw_numbers(independent, [0, 1, 2], {a: np.bincount(data[:, a], minlength=48) for a in range(3)},
                         corr, domain, np.random.default_rng(5))
    for a, b in ((0, 1), (0, 2), (1, 2)):
        assert spearman(out, a, b) == pytest.approx(spearman(data, a, b), abs=0.02)


def test_the_correlation_matrix_reads_every_released_measurement_of_a_pair():
    """A fine and a coarse measurement of the same pair, and a triple: each is read through the groups, and the
    estimate is the data's correlation; a pair no measurement reads gets 0."""
    codes = correlated_codes(0.9)
    fine = np.zeros((49, 49))
    np.add.at(fine, (codes[:, 0], codes[:, 2]), 1)
    coarse = np.zeros((13, 13))
    np.add.at(coarse, (MAPS[0][codes[:, 0]], MAPS[2][codes[:, 2]]), 1)
    triple = np.zeros((13, 3, 49))
    np.add.at(triple, (MAPS[0][codes[:, 0]], codes[:, 1], codes[:, 2]), 1)
    readings = [NoisyMarginal((0, 2), fine.reshape(-1), 1.0),
                NoisyMarginal((0, 2), coarse.reshape(-1), 1.0, groups=(MAPS[0], MAPS[2])),
                NoisyMarginal((0, 1, 2), triple.reshape(-1), 1.0, groups=(MAPS[0], None, None))]
    for some in ([readings[0]], [readings[1]], [readings[2]], readings):
        read = pair_tables(some, [0, 2], MAPS, DOMAIN)
        assert correlations(read, [0, 2])[0][0, 1] == pytest.approx(0.9, abs=0.02)
    unread = pair_tables([NoisyMarginal((0,), one_way(codes, 0), 1.0)], [0, 2], MAPS, DOMAIN)
    assert np.isnan(correlations(unread, [0, 2])[0][0, 1])


def test_a_released_pair_tables_noise_variance_counts_the_cells_summed_into_each_ordered_cell():
    """A fine 2-way measurement of 49 x 49 cells (48 ordered, 12 groups of 4): 16 cells in each ordered pair of
    groups; a coarse triple with a category of 3: 3 cells; the missing value's group is not read."""
    codes = correlated_codes(0.5)
    fine = NoisyMarginal((0, 2), np.zeros(49 * 49), 2.0)
    triple = NoisyMarginal((0, 1, 2), np.zeros(13 * 3 * 13), 2.0, groups=(MAPS[0], None, MAPS[2]))
    assert copula._pair_table(fine, 0, 2, MAPS, DOMAIN)[1] == pytest.approx(32.0)
    assert copula._pair_table(triple, 0, 2, MAPS, DOMAIN)[1] == pytest.approx(6.0)
    assert copula._pair_table(fine, 0, 2, MAPS, DOMAIN)[0].shape == (12, 12)


def test_a_pair_no_measurement_reads_takes_the_correlation_through_a_third_column():
    """a-b and b-c at 0.95, a-c unread: a-c gets 0.9025 and the read pairs keep about 0.95 (read as 0 the matrix
    would pull a-b down to 0.73)."""
    nan = math.nan
    matrix = copula_matrix(np.array([[1.0, 0.95, nan], [0.95, 1.0, 0.95], [nan, 0.95, 1.0]]))
    assert matrix[0, 2] == pytest.approx(0.9025, abs=0.01)
    assert matrix[0, 1] == pytest.approx(0.95, abs=0.01)
    assert np.linalg.eigvalsh(matrix).min() > 0


def test_a_pair_read_as_noise_beside_a_chain_takes_what_the_chain_implies():
    """The wage table's readings (eps 4, seed 1): age-log wage 0.408 kept, log wage-wage 0.99 kept, age-wage open.
    Completed, age-wage is the chain's 0.408 x 0.99 and the kept pairs stay as read; held at 0 instead, the matrix
    is no normal's and its repair pulls the wage and its log from 0.99 to about 0.92."""
    nan = math.nan
    matrix = copula_matrix(np.array([[1.0, 0.408, nan], [0.408, 1.0, 0.99], [nan, 0.99, 1.0]]))
    assert matrix[0, 2] == pytest.approx(0.408 * 0.99, abs=1e-6)
    assert matrix[1, 2] == pytest.approx(0.99, abs=1e-3) and matrix[0, 1] == pytest.approx(0.408, abs=1e-3)
    assert copula_matrix(np.array([[1.0, 0.408, 0.0], [0.408, 1.0, 0.99], [0.0, 0.99, 1.0]]))[1, 2] < 0.95


@pytest.mark.parametrize("seed", range(5))
def test_the_completion_keeps_the_read_entries_and_zeroes_the_inverse_at_the_open_ones(seed):
    """A random correlation matrix of 6 columns with a third of its pairs left open: the completion agrees with it
    wherever it was read, is positive definite, and its inverse is 0 at every open pair (the maximum-determinant
    completion); a determinant larger than any other completion's, checked against random moves of the open
    entries."""
    gen = np.random.default_rng(seed)
    root = gen.normal(size=(6, 9))
    full = np.corrcoef(root)
    open_ = np.triu(gen.random((6, 6)) < 1 / 3, 1)
    open_ |= open_.T
    corr = np.where(open_, np.nan, full)
    done = copula.completion(corr)
    assert done is not None
    assert done[~open_] == pytest.approx(full[~open_], abs=1e-8)
    assert np.linalg.eigvalsh(done).min() > 0
    assert np.linalg.inv(done)[open_] == pytest.approx(np.zeros(open_.sum()), abs=1e-7)
    best = np.linalg.slogdet(done)[1]
    for _ in range(20):
        moved = done + np.where(open_, np.triu(gen.normal(0, 0.05, (6, 6)), 1), 0.0)
        moved = np.triu(moved, 1) + np.triu(moved, 1).T + np.eye(6)
        sign, value = np.linalg.slogdet(moved)
        assert sign <= 0 or value < best


def test_read_entries_no_normal_admits_have_no_completion():
    """0.9, 0.9 and -0.9 between three columns: no completion (the read entries are no normal's), and the matrix
    falls back to the repair of the entries as read."""
    bad = np.array([[1.0, 0.9, 0.9], [0.9, 1.0, -0.9], [0.9, -0.9, 1.0]])
    assert copula.completion(bad) is None
    assert np.linalg.eigvalsh(copula_matrix(bad)).min() > 0


TRIPLE = Domain(("x", "y", "z"), (48, 48, 48), ordered=(48, 48, 48))


def triple_table(r: float, n: int = 20_000) -> AggregatedData:
    """x and y with correlation ``r`` on 48 cells, z independent of both."""
    codes = correlated_codes(r, n)
    z = np.random.default_rng(9).integers(0, 48, n)
    return AggregatedData.from_codes(TRIPLE, np.column_stack([np.minimum(codes[:, 0], 47), codes[:, 2], z]))


def run_triple(data: AggregatedData, support: str) -> np.ndarray:
    """The 3-way marginal as the workload at rho 1/200: the rounds and the covering step read it and the pair
    through the groups."""
    rho = Fraction(1, 200)
    options = MeasureOptions(rounds_per_attribute=2, numeric_support=support, coarse_groups=12,
                             estimator=EstimatorSettings(iters=20, final_iters=60, scoring_sample=2000))
    return measure(data, [(0, 1, 2)], budget=rho, relation="add-remove", ledger=ZcdpLedger(rho),
                   rng=PrivateRandom(4), options=options, progress=False).records


def test_a_run_keeps_a_correlated_pair_on_the_diagonal_inside_the_groups():
    """x and y with correlation 0.97, read through 12 groups: the release has about as many records at the same
    place inside a shared group as the data; without the copula about a quarter."""
    data = triple_table(0.97)
    real = same_position(np.repeat(data.codes, data.counts, axis=0), (0, 1))
    assert real > 0.34
    assert same_position(run_triple(data, "copula"), (0, 1)) == pytest.approx(real, abs=0.03)
    assert same_position(run_triple(data, "model"), (0, 1)) == pytest.approx(0.25, abs=0.03)


def test_the_copula_reads_released_counts_only(monkeypatch):
    """The release run with the true data swapped for an uncorrelated table: the same records."""
    data = triple_table(0.97)
    plain = run_triple(data, "copula")
    other = triple_table(0.0)

    def swapped(run, measured, *args):
        return release(replace(run, data=other, answers=TrueCounts(other, run.views)), measured, *args)

    release = algorithm.release
    monkeypatch.setattr(algorithm, "release", swapped)
    assert np.array_equal(run_triple(data, "copula"), plain)


CELLS = Domain(("x", "c", "y"), (9, 2, 9), ordered=(8, 0, 8))
#: The cells' upper edges in probability: narrow in the middle, wide in the tails.
CUTS = np.array([0.02, 0.1, 0.3, 0.5, 0.7, 0.9, 0.98, 1.0])


def latent_pair(r: float, n: int = 20_000, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A normal pair with correlation ``r`` and its codes on :data:`CUTS` (5% of y missing), c uniform."""
    gen = np.random.default_rng(seed)
    z = gen.multivariate_normal([0, 0], [[1, r], [r, 1]], n)
    cells = np.searchsorted(CUTS, stats.norm.cdf(z), side="right")
    y = np.where(gen.random(n) < 0.05, 8, cells[:, 1])
    return z, np.column_stack([cells[:, 0], gen.integers(0, 2, n), y])


def latent_of(codes: np.ndarray, positions: dict[int, np.ndarray], a: int) -> np.ndarray:
    """The latent values the positions stand for, by the codes' own one-way shares."""
    held = codes[:, a] < 8
    shares = np.concatenate([[0.0], np.cumsum(np.bincount(codes[held, a], minlength=8))]) / held.sum()
    cell = np.minimum(codes[:, a], 7)
    return stats.norm.ppf(shares[cell] + positions[a] * (shares[cell + 1] - shares[cell]))


def placed(codes: np.ndarray, r: float, seed: int = 3) -> dict[int, np.ndarray]:
    return copula.positions_in_cells(codes, Copula((0, 2), np.array([[1.0, r], [r, 1.0]])), CELLS,
                                     np.random.default_rng(seed))


def test_positions_inside_cells_are_shares_and_missing_where_the_value_is():
    _, codes = latent_pair(0.9)
    positions = placed(codes, 0.9)
    assert set(positions) == {0, 2}
    assert np.array_equal(np.isnan(positions[2]), codes[:, 2] == 8) and not np.isnan(positions[0]).any()
    for a in (0, 2):
        inside = positions[a][~np.isnan(positions[a])]
        assert inside.min() >= 0.0 and inside.max() <= 1.0


@pytest.mark.parametrize("r", [0.95, -0.8])
def test_positions_by_the_copula_give_back_the_latent_correlation(r):
    """The pair cut into 8 cells, placed inside them by the copula: the latent values they stand for have the
    pair's correlation, standard normal margins and, inside each cell, uniform positions; placed independently
    the correlation is lower."""
    z, codes = latent_pair(r)
    positions = placed(codes, r)
    both = codes[:, 2] < 8
    x, y = latent_of(codes, positions, 0)[both], latent_of(codes, positions, 2)[both]
    assert np.corrcoef(x, y)[0, 1] == pytest.approx(np.corrcoef(z[both, 0], z[both, 1])[0, 1], abs=0.01)
    assert stats.kstest(x, "norm").statistic < 0.015 and stats.kstest(y, "norm").statistic < 0.015
    for a in (0, 2):
        for cell in (0, 3, 7):
            assert stats.kstest(positions[a][codes[:, a] == cell], "uniform").pvalue > 1e-3
    flat = {a: np.random.default_rng(4).random(len(codes)) for a in (0, 2)}
    independent = np.corrcoef(latent_of(codes, flat, 0)[both], latent_of(codes, flat, 2)[both])[0, 1]
    assert abs(independent) < abs(r) - 0.02  # the tolerance above tells the two apart


def test_positions_with_no_correlation_are_uniform_and_independent():
    _, codes = latent_pair(0.9)
    positions = placed(codes, 0.0)
    both = codes[:, 2] < 8
    assert stats.kstest(positions[0], "uniform").statistic < 0.015
    assert abs(stats.spearmanr(positions[0][both], positions[2][both]).statistic) < 0.03


def test_a_cell_far_out_in_the_conditional_takes_its_nearest_point():
    """Latent intervals where the conditional normal has no mass the floats can hold: the nearest point to the mean,
    never a NaN or a value outside the interval."""
    low, high, mean = np.array([30.0, -41.0]), np.array([31.0, -40.0]), np.array([0.0, 0.0])
    drawn = copula._truncated_normal(mean, 0.5, low, high, np.random.default_rng(0))
    assert np.array_equal(drawn, [30.0, -40.0])


def test_a_truncated_normal_far_in_the_upper_tail_is_drawn_not_pinned_to_its_edge():
    """A standard normal truncated to [9, 10] (Phi(9) is 1 in floats): its mean is about 9 + 1/9."""
    drawn = copula._truncated_normal(np.zeros(20_000), 1.0, np.full(20_000, 9.0), np.full(20_000, 10.0),
                                     np.random.default_rng(1))
    assert drawn.min() >= 9.0 and drawn.max() <= 10.0
    assert drawn.mean() == pytest.approx(9.0 + 1.0 / 9.1, abs=0.01)


@pytest.mark.parametrize("option, value, message", [
    ("copula_from", 1.5, "copula_from must be a number in \\[0, 1\\], got 1.5"),
    ("copula_from", True, "copula_from must be a number"),
    ("copula_from", "0.8", "copula_from must be a number"),
    ("numeric_support", "gaussian", "numeric_support must be one of \\('copula', 'model'\\), got 'gaussian'"),
])
def test_the_copulas_options_are_checked_by_name(option, value, message):
    with pytest.raises(InputError, match=message):
        MeasureOptions(**{option: value})


@pytest.mark.parametrize("support", ["copula", "model"])
def test_the_release_says_which_columns_a_copula_places_inside_their_cells(support):
    import pandas as pd
    import synthdp

    gen = np.random.default_rng(0)
    z = gen.multivariate_normal([0, 0], [[1, 0.97], [0.97, 1]], 8000)
    df = pd.DataFrame({"x": np.round(np.exp(3 + 0.4 * z[:, 0]), 1), "y": np.round(np.exp(2 + 0.5 * z[:, 1]), 1),
                       "k": gen.choice(["a", "b", "c"], 8000)})
    result = synthdp.generate_synthetic(df, "marginals:2", epsilon=1.0, delta=1e-9, bounds={"x": (0.0, 500.0),
                                        "y": (0.0, 500.0)}, categories={"k": ["a", "b", "c"]}, clip=True,
                                        discretise="privtree", random_state=0, progress=False,
                                        measure_options=MeasureOptions(numeric_support=support))
    said = result.report.release.numeric_values
    assert said.startswith("numbers drawn uniformly inside each released cell")
    assert ("except ['x', 'y'], placed inside their cells by a Gaussian copula" in said) == (support == "copula")


def test_every_copula_a_run_draws_from_reads_released_counts_only(monkeypatch):
    """At each estimate that draws a copula (rounds' and the final one), the copula is the same when the run's true
    data are swapped for an uncorrelated table."""
    data, other = triple_table(0.97), triple_table(0.0)
    same = []
    drawn = release_module._copula

    def checked(run, maps, tables, margins):
        mine = drawn(run, maps, tables, margins)
        theirs = drawn(replace(run, data=other, answers=TrueCounts(other, run.views)), maps, tables, margins)
        same.append(mine is not None and theirs is not None and mine.columns == theirs.columns
                    and np.array_equal(mine.correlation, theirs.correlation))
        return mine

    monkeypatch.setattr(release_module, "_copula", checked)
    run_triple(data, "copula")
    assert len(same) >= 1 and all(same)


def released_pair(r: float, noise: float, seed: int, n: int = 4_000, groups: int = 6) -> tuple[np.ndarray, float]:
    """A normal pair with correlation ``r`` counted on ``groups`` equal-probability groups each, with normal noise of
    standard deviation ``noise`` a cell, and that noise's variance: a released pair table."""
    table = grouped_normal(r, n=n, groups=groups, seed=seed)
    return table + np.random.default_rng(100 + seed).normal(0, noise, table.shape), noise ** 2


def moves_together(table: np.ndarray, variance: float, *, correlation: float = 0.8) -> bool:
    """Whether :func:`strong_columns` takes the two columns of one released pair table at the default thresholds."""
    fit = pair_fit(table, variance)
    corr, explained, error = (np.array([[1.0, v], [v, 1.0]]) for v in (fit.correlation, fit.explained, fit.error))
    return strong_columns(corr, explained, error, correlation=correlation, share=copula.COPULA_EXPLAINED) == [0, 1]


@pytest.mark.parametrize("seed", range(8))
def test_independent_columns_under_noise_do_not_move_together(seed):
    """4,000 rows on 6 x 6 groups with noise of sd 100 a cell (the covering step's on a few thousand rows at eps 1):
    the fit reads correlations of up to 0.3 off the noise, within a few of its standard errors."""
    assert not moves_together(*released_pair(0.0, 100.0, seed))


@pytest.mark.parametrize("seed", range(3))
def test_a_related_pair_read_with_little_noise_moves_together(seed):
    """Correlation 0.6 with noise of sd 30 a cell: below ``copula_from``, yet far beyond what the noise could make up
    and explained by the copula, so the pair is drawn from it; not with ten times the noise (an error near 0.5 of
    the correlation), nor with a tenth of it, where the counts measure the pair closely enough for the reweighting
    to fit."""
    table, variance = released_pair(0.6, 30.0, seed)
    fit = pair_fit(table, variance)
    assert fit.correlation == pytest.approx(0.6, abs=0.1) and 0.03 < fit.error < 0.12
    assert moves_together(table, variance)
    assert not moves_together(table, variance * 100)
    precise = released_pair(0.6, 3.0, seed)
    assert not moves_together(*precise) and moves_together(*precise, correlation=0.55)


def test_the_standard_error_is_that_of_the_fit_under_the_noise():
    """Over 200 draws of noise of sd 100 on an independent pair's 6 x 6 table of 4,000 rows, the fitted correlations'
    spread is the standard error :func:`pair_fit` reads off the noise variance, within a fifth."""
    table = grouped_normal(0.0, n=4_000, groups=6)
    gen = np.random.default_rng(3)
    fits = [pair_fit(table + gen.normal(0, 100, table.shape), 1e4) for _ in range(200)]
    spread = np.std([f.correlation for f in fits])
    assert np.median([f.error for f in fits]) == pytest.approx(spread, rel=0.2)


@pytest.mark.parametrize("seed", range(3))
def test_a_run_on_a_few_thousand_rows_draws_a_related_pair_from_the_copula(monkeypatch, seed):
    """x and y with correlation 0.67 on 4,000 rows at rho 1/90 (about eps 1, delta 1e-9): below ``copula_from``,
    yet the released counts show it, so the support is drawn from a copula that holds it within 0.1; held
    independent, the release's correlation was about 0.3 (0.44 / 0.36 / 0.32 with the copula)."""
    codes = correlated_codes(0.7, 4_000)
    z = np.random.default_rng(9).integers(0, 48, 4_000)
    data = AggregatedData.from_codes(TRIPLE, np.column_stack([np.minimum(codes[:, 0], 47), codes[:, 2], z]))
    real = np.corrcoef(np.repeat(data.codes, data.counts, axis=0)[:, :2].T)[0, 1]
    drawn, copulas = release_module._copula, []
    monkeypatch.setattr(release_module, "_copula", lambda *args: copulas.append(drawn(*args)) or copulas[-1])
    rho = Fraction(1, 90)
    measure(data, [(0, 1, 2)], budget=rho, relation="add-remove", ledger=ZcdpLedger(rho), rng=PrivateRandom(seed),
            options=MeasureOptions(), progress=False)
    assert copulas and copulas[-1] is not None and copulas[-1].columns == (0, 1)
    assert copulas[-1].correlation[0, 1] == pytest.approx(real, abs=0.1)


#: The released table of the generated credit table's price and loan on their 6 x 6 groups (eps 1, seed 3; rounded),
#: and its noise variance: 0.566 at 3.35 errors explaining 1.00, left out by the loose-pair test's 4 errors.
PRICE_LOAN = (np.array([[620., 853., -222., 28., 103., 131.], [22., 520., 63., -105., -87., 63.],
                        [129., 696., 235., 80., 81., 7.], [-23., 376., 64., 21., 28., 143.],
                        [74., 140., -80., -104., 29., 81.], [-26., -17., 2., 131., 5., -14.]]), 100.2 ** 2)
#: The released table of its independent assets and debt (eps 4, seed 2; rounded): the debt is 0 for 80% of the rows,
#: its other groups read through noise of sd 135; 0.74 at 3.1 errors explaining 0.42.
ASSETS_DEBT = (np.array([[1733., -86., 16., 52., -187., 147.], [590., -55., -137., 205., 0., -120.],
                         [-165., 7., 2., -87., -132., 65.], [490., 150., -116., 90., 32., 153.],
                         [886., 153., -94., -54., -380., -110.], [-10., 86., 56., 126., 95., 125.]]), 134.8 ** 2)


def test_a_loosely_measured_pair_beyond_its_null_tables_joins_the_copula_with_its_reading():
    """The credit table's price and loan (seed 3): under 4 errors, so no copula without null tables; read against
    1,000 of them, beyond all but under 2%, so both columns join and the pair keeps its own reading in the matrix
    though it is under ``keep_from`` errors."""
    fit = pair_fit(*PRICE_LOAN)
    assert 3.0 < fit.correlation / fit.error < copula.RELATED_SIGNIFICANCE and fit.explained > 0.9
    assert copula.null_share(*PRICE_LOAN, fit.correlation, 1000, np.random.default_rng(0)) <= copula.RELATED_NULL_SHARE
    tables = {(0, 1): PRICE_LOAN}
    assert copula.copula_of(tables, [0, 1], correlation=0.8) is None
    found = copula.copula_of(tables, [0, 1], correlation=0.8, null_draws=1000)
    assert found is not None and found.columns == (0, 1)
    assert found.correlation[0, 1] == pytest.approx(fit.correlation, abs=1e-6)


def test_a_pair_whose_margin_is_mostly_one_group_stays_out_against_its_null_tables():
    """The credit table's independent assets and debt (eps 4, seed 2): the looser test of 3 errors and 0.4 takes
    them, but noise alone reads their margins as far from 0 in several percent of the null tables, and they stay
    out."""
    fit = pair_fit(*ASSETS_DEBT)
    assert fit.correlation > 0.7 and 3.0 < fit.correlation / fit.error < copula.RELATED_SIGNIFICANCE
    assert fit.explained >= copula.RELATED_NULL_EXPLAINED
    assert copula.null_share(*ASSETS_DEBT, fit.correlation, 1000, np.random.default_rng(0)) > 0.02
    assert copula.copula_of({(0, 1): ASSETS_DEBT}, [0, 1], correlation=0.8, null_draws=1000) is None


@pytest.mark.parametrize("seed", range(2))
def test_null_tables_of_spread_margins_read_as_the_linearised_error_says(seed):
    """An independent pair on 6 x 6 equal-probability groups of 4,000 rows under noise of sd 100 a cell: about 1%
    of its null tables read a correlation 2.576 of its errors from 0 (normal), and its own reading is beyond far
    fewer than 99% of them."""
    table, variance = released_pair(0.0, 100.0, seed)
    fit = pair_fit(table, variance)
    tail = copula.null_share(table, variance, 2.576 * fit.error, 1000, np.random.default_rng(seed))
    assert 0.002 <= tail <= 0.03
    assert copula.null_share(table, variance, fit.correlation, 400, np.random.default_rng(seed)) > 0.05


def test_the_release_reads_its_null_draws_from_its_options():
    """The release takes the price and the loan against its null tables by default, not with ``related_null_draws``
    at 0."""
    maps, tables = {0: np.arange(6), 1: np.arange(6)}, {(0, 1): PRICE_LOAN}

    def copula_with(**options) -> Copula | None:
        return release_module._copula(SimpleNamespace(options=MeasureOptions(**options)), maps, tables)

    assert copula_with() is not None
    assert copula_with(related_null_draws=0) is None


@pytest.mark.parametrize("value", [-1, True, 1.5, "10"])
def test_the_null_draws_refuse_what_is_not_a_count(value):
    with pytest.raises(InputError, match="related_null_draws"):
        MeasureOptions(related_null_draws=value)


@pytest.mark.parametrize("errors, share, taken", [(3.1, 1.0, True), (2.9, 1.0, False), (3.1, 0.41, True),
                                                 (3.1, 0.39, False), (4.8, 0.59, True), (4.8, 0.39, False),
                                                 (4.8, 0.61, False)])
def test_against_its_null_tables_a_pair_still_needs_three_errors_and_an_explained_share(errors, share, taken):
    """The price and the loan's table beyond its null tables, its reading given at 3.1 errors, is taken; at 2.9
    errors (the wage table's age and log wage read 0.40 at 2.7: related, but twice its size) it is not, nor when
    its fit explains under 0.4 of its departure.  A pair that fails the loose-pair test by its explained share
    alone, at more than its 4 errors (the Aids2 table's diagnosis and death dates, real 0.83, read 0.73 at 4.8
    errors explaining 0.595), is tried against its null tables too; one that passes the loose-pair test needs no
    null route (it is taken by that test)."""
    fit = pair_fit(*PRICE_LOAN)
    corr, explained, error = (np.array([[1.0, v], [v, 1.0]])
                              for v in (fit.correlation, share, fit.correlation / errors))
    found = copula.beyond_null({(0, 1): PRICE_LOAN}, [0, 1], corr, explained, error, np.zeros((2, 2), dtype=bool),
                               draws=1000)
    assert bool(found[0, 1]) is taken


def test_sharp_one_way_margins_take_the_pull_toward_zero_off_a_noisy_pair():
    """4,000 rows at correlation 0.8 on 6 x 6 groups, noise of sd 100 a cell, 40 draws: cut at the table's own noisy
    sums the fit reads 0.74 on the mean; cut at those sums averaged with one-way readings of sd 30 a group, within
    0.02 of 0.8 (docs/privacy.md §8.12 step 1).  Independent columns read as widely as the standard error says with
    either margins, so the tests against the noise keep their meaning."""
    def readings(r: float, draws: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        own, sharp, errors = [], [], []
        for seed in range(draws):
            table = grouped_normal(r, n=4_000, groups=6, seed=seed)
            noise = np.random.default_rng(100 + seed)
            noisy = table + noise.normal(0, 100, table.shape)
            margins = tuple((sums + noise.normal(0, 30, 6), np.full(6, 900.0)) for sums in (table.sum(1), table.sum(0)))
            fit = pair_fit(noisy, 100.0 ** 2, margins)
            own.append(pair_fit(noisy, 100.0 ** 2).correlation), sharp.append(fit.correlation), errors.append(fit.error)
        return np.array(own), np.array(sharp), np.array(errors)

    own, sharp, _ = readings(0.8, 40)
    assert own.mean() < 0.76 and abs(sharp.mean() - 0.8) < 0.02
    _, null, errors = readings(0.0, 100)
    assert 0.85 < null.std() / errors.mean() < 1.15


def test_the_one_way_margins_are_the_inverse_variance_mean_of_the_fine_one_way_readings_on_the_groups():
    """Two readings of column 0 (variances 1 and 3) summed to its groups {0, 1}, {2}; its missing code 3 is not
    read; a coarse one-way reading, a pair's reading and a column without groups are left out."""
    domain = Domain(("x", "y", "z"), (4, 3, 2), ordered=(3, 3, 0))
    maps = {0: np.array([0, 0, 1, 2]), 1: np.array([0, 1, 1])}
    readings = [NoisyMarginal((0,), np.array([4.0, 8.0, 12.0, 100.0]), 1.0),
                NoisyMarginal((0,), np.array([8.0, 0.0, 4.0, -50.0]), 3.0),
                NoisyMarginal((0,), np.array([1000.0, 1000.0]), 1.0, groups=(np.array([0, 0, 1, 2]),)),
                NoisyMarginal((0, 1), np.ones(12), 1.0), NoisyMarginal((2,), np.array([5.0, 5.0]), 1.0)]
    margins = copula.one_way_margins(readings, maps, domain)
    assert set(margins) == {0}
    sums, variances = margins[0]
    fine = (np.array([4.0, 8.0, 12.0]) / 1 + np.array([8.0, 0.0, 4.0]) / 3) / (1 + 1 / 3)
    np.testing.assert_allclose(sums, [fine[0] + fine[1], fine[2]])
    np.testing.assert_allclose(variances, [2 / (4 / 3), 1 / (4 / 3)])


@pytest.mark.parametrize("seed", range(4))
def test_null_tables_cut_at_one_way_margins_read_as_the_reading_s_error_says(seed):
    """An independent pair on 6 x 6 groups of 4,000 rows under noise of sd 100 a cell, its margins read again with
    noise of sd 30 a group: its null tables, fitted as the reading is (cut at margins averaged with one-way readings
    drawn again), read a correlation 2.576 of the reading's errors from 0 0.5% to 5% of the time (1% for a normal
    reading; the linearised error is read off one draw's cut points)."""
    table, variance = released_pair(0.0, 100.0, seed)
    noise = np.random.default_rng(7 + seed)
    truth = grouped_normal(0.0, n=4_000, groups=6, seed=seed)
    margins = tuple((sums + noise.normal(0, 30, 6), np.full(6, 900.0)) for sums in (truth.sum(1), truth.sum(0)))
    fit = pair_fit(table, variance, margins)
    tail = copula.null_share(table, variance, 2.576 * fit.error, 1000, np.random.default_rng(seed), margins)
    assert 0.002 <= tail <= 0.06
