"""Covering views (docs/privacy.md §8.11 step 1): a numeric column of few cells is read through half the groups by the
covering step, and the copula of §8.12 reads a related pair off those readings; the rounds score only full views'
twins."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from synthdp.accounting.zcdp import ZcdpLedger
from synthdp.core.data import AggregatedData
from synthdp.core.domain import Domain
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.methods.measure import coarse
from synthdp.methods.measure.algorithm import measure
from synthdp.methods.measure.coarse import CoarseViews, view_groups
from synthdp.methods.measure.estimators import EstimatorSettings
from synthdp.methods.measure.footprint import footprint
from synthdp.methods.measure.settings import MeasureOptions


@pytest.mark.parametrize("ordered, groups, expected", [
    (48, 12, 12), (24, 12, 12), (23, 12, 6), (12, 12, 6), (11, 12, None),  # full at 2 cells a group, else half
    (20, 10, 10), (19, 10, 5), (10, 10, 5), (9, 10, None),
    (10, 5, 5), (9, 5, None),  # half of 5 is 2 groups: too few for a covering view
    (0, 12, None)])
def test_a_full_view_needs_two_cells_a_group_and_a_covering_view_two_of_half_the_groups(ordered, groups, expected):
    assert view_groups(ordered, groups) == expected


# x: 48 ordered cells and a missing value (full view), y: 20 (covering view), k: 3 categories, w: 8 cells (no view)
DOMAIN = Domain(("x", "y", "k", "w"), (49, 20, 3, 8), ordered=(48, 20, 0, 8))


def test_the_rounds_score_twins_of_full_views_only_and_the_covering_step_reads_both():
    views = CoarseViews(DOMAIN, groups=12)
    assert [None if m is None else int(m.max()) + 1 for m in views.maps] == [13, 6, None, None]
    assert views.full == (True, False, False, False)
    weights = {(0, 2): 1, (1, 2): 1, (0, 1): 1, (0, 3): 1, (2, 3): 1}
    assert views.coarse((1, 2)) == (5, 2) and views.coarse((0, 1)) == (4, 5)  # the covering step's twins
    assert views.candidates(weights) == {(4, 2): 1, (4, 3): 1}  # the rounds': x's alone
    assert footprint(DOMAIN, list(weights), MeasureOptions(coarse_groups=12), n_rows=None,
                     oracle=False).candidates == len(weights) + 2
    # read through its twin only (more fine cells than the cap), a covering view's twin is the rounds' too
    capped = CoarseViews(DOMAIN, groups=12, max_fine_cells=50)
    assert capped.round_twin((1, 2)) == (5, 2) and capped.round_twin((0, 2)) == (4, 2)
    assert capped.fine_candidates(weights) == {(2, 3): 1}


# two related numeric columns of 16 cells (a covering view of 6 groups at 12), two categories
PAIR = Domain(("p", "q", "s", "t"), (16, 16, 3, 4), ordered=(16, 16, 0, 0))


def pair_table(r: float = 0.75, n: int = 4_000, seed: int = 0) -> AggregatedData:
    """p and q with correlation ``r`` on 16 equal-probability cells each, s and t independent categories."""
    gen = np.random.default_rng(seed)
    z = gen.multivariate_normal([0, 0], [[1, r], [r, 1]], n)
    cells = np.clip((stats.norm.cdf(z) * 16).astype(int), 0, 15)
    return AggregatedData.from_codes(PAIR, np.column_stack([cells, gen.integers(0, 3, n), gen.integers(0, 4, n)]))


def released_correlation(data: AggregatedData) -> float:
    """The Pearson correlation of p's and q's cells in a release of every 3-way marginal at rho 1/500."""
    rho = Fraction(1, 500)
    workload = [(0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)]
    options = MeasureOptions(rounds_per_attribute=2, coarse_groups=12,
                             estimator=EstimatorSettings(iters=20, final_iters=60, scoring_sample=2000))
    records = measure(data, workload, budget=rho, relation="add-remove", ledger=ZcdpLedger(rho),
                      rng=PrivateRandom(3), options=options, progress=False).records
    return float(np.corrcoef(records[:, 0], records[:, 1])[0, 1])


def test_a_related_pair_of_few_cells_keeps_its_correlation_through_its_covering_views(monkeypatch):
    """p and q (cell correlation about 0.73) read through 6 groups each by the covering step: the release keeps
    the correlation; without covering views (their pairs read cell by cell) it loses most of it."""
    data = pair_table()
    real = float(np.corrcoef(*np.repeat(data.codes, data.counts, axis=0)[:, :2].T)[0, 1])
    kept = released_correlation(data)
    monkeypatch.setattr(coarse, "COVER_VIEW_GROUPS", np.inf)
    lost = released_correlation(data)
    assert kept == pytest.approx(real, abs=0.12)
    assert lost < real - 0.3
