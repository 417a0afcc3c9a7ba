"""Pairs the copula leaves out, drawn again from their released tables (docs/privacy.md §8.12 step 6): the departure
from the draws and its noise allowance, the forest, the redraw against brute-force tables, and runs in which the
model cannot hold a related pair."""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction

import numpy as np
import pytest

from synthdp.accounting.zcdp import ZcdpLedger
from synthdp.core.data import AggregatedData
from synthdp.core.domain import Domain
from synthdp.core.errors import InputError
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.methods.measure import algorithm
from synthdp.methods.measure.state import TrueCounts
from synthdp.methods.measure.algorithm import measure
from synthdp.methods.measure.estimators import EstimatorSettings
from synthdp.methods.measure.linked_pairs import departure, group_table, linked_pairs, on_support, redraw_pairs
from synthdp.methods.measure.settings import MeasureOptions

#: x and y on 48 ordered cells read through 12 groups of 4, y with a missing value (cell 48), z a category of 3.
DOMAIN = Domain(("x", "y", "z"), (48, 49, 3), ordered=(48, 48, 0))
MAPS = {0: np.repeat(np.arange(12), 4), 1: np.append(np.repeat(np.arange(12), 4), 12)}


def shifted_pair(n: int = 20_000, seed: int = 0) -> np.ndarray:
    """Half the rows near 0, half with an exponential x; y is x moved up 6 cells, give or take 1.5 (a sum, not a
    copula, and not symmetric); 5% of y missing; z uniform."""
    gen = np.random.default_rng(seed)
    late = gen.random(n) < 0.5
    x = np.where(late, np.minimum(41, 4 + gen.exponential(10, n)).astype(int), gen.integers(0, 4, n))
    y = np.clip(x + 6 + np.round(gen.normal(0, 1.5, n)).astype(int), 0, 47)
    y = np.where(gen.random(n) < 0.05, 48, y)
    return np.column_stack([x, y, gen.integers(0, 3, n)])


def independent(codes: np.ndarray, seed: int = 1) -> np.ndarray:
    """The same columns, each shuffled on its own: the margins kept, the pair's relation gone."""
    gen = np.random.default_rng(seed)
    return np.column_stack([gen.permutation(c) for c in codes.T])


def one_way(codes: np.ndarray, a: int) -> np.ndarray:
    return np.bincount(codes[:, a], minlength=DOMAIN.sizes[a]).astype(float)


def redrawn(draws: np.ndarray, released: np.ndarray, departure_from: float = 0.2, variance: float = 0.0,
            seed: int = 2) -> np.ndarray:
    table = group_table(released, 0, 1, MAPS, DOMAIN)
    return redraw_pairs(draws, tables={(0, 1): (table, variance)}, maps=MAPS,
                        one_way={a: one_way(released, a) for a in (0, 1)}, domain=DOMAIN,
                        departure_from=departure_from, generator=np.random.default_rng(seed))


def tvd(p: np.ndarray, q: np.ndarray) -> float:
    return 0.5 * float(np.abs(p / p.sum() - q / q.sum()).sum())


def test_the_group_table_counts_records_by_groups_and_leaves_missing_values_out():
    codes = np.array([[0, 0, 0], [3, 7, 1], [4, 48, 2], [47, 47, 0]])
    table = group_table(codes, 0, 1, MAPS, DOMAIN)
    assert table.shape == (12, 12) and table.sum() == 3
    assert table[0, 0] == 1 and table[0, 1] == 1 and table[11, 11] == 1


def test_the_departure_is_the_distance_from_the_draws_beyond_the_noise():
    """The released table of a related pair against independent draws departs by its distance from them; against
    draws of the same relation it departs by nothing; pure noise of variance 400 on an independent table would read
    as a departure of 0.06 without the noise's allowance, and under 0.02 with it."""
    codes = shifted_pair()
    real, apart = group_table(codes, 0, 1, MAPS, DOMAIN), group_table(independent(codes), 0, 1, MAPS, DOMAIN)
    assert departure(real, 0.0, apart) == pytest.approx(tvd(real, apart), abs=1e-9)
    assert departure(real, 0.0, apart) > 0.4
    assert departure(real, 0.0, 3.0 * real) == pytest.approx(0.0, abs=1e-12)  # the draws are scaled to the total
    noisy = apart + np.random.default_rng(3).normal(0, 20.0, apart.shape)
    assert tvd(np.clip(noisy, 0, None), apart) > 0.05
    assert departure(noisy, 400.0, apart) < 0.02
    assert departure(np.zeros((12, 12)), 1.0, apart) == 0.0


def test_the_pairs_drawn_are_a_forest_of_the_strongest_departures():
    """Three columns related in a chain and a weak pair: the two strongest pairs, never the third that closes the
    cycle, nor the weak one."""
    def pair(strength: float) -> tuple[np.ndarray, float]:
        return np.diag([strength, strength]) + (1 - strength) / 2, 0.0

    flat = np.full((2, 2), 0.25)
    tables = {(0, 1): pair(0.9), (1, 2): pair(0.8), (0, 2): pair(0.7), (2, 3): pair(0.05)}
    links = linked_pairs(tables, {p: flat for p in tables}, departure_from=0.2)
    assert links.edges == ((0, 1), (1, 2))
    assert np.array_equal(links.tables[0], tables[0, 1][0])
    assert linked_pairs(tables, {p: flat for p in tables}, departure_from=0.95).edges == ()


def test_independent_draws_get_the_released_tables_relation_and_keep_one_cell_of_each_record():
    """Drawn independently, the pair gets back the released table on its groups (each direction read from its
    side: y sits above x) and the released one-way shares inside the groups; each record keeps its x or its y,
    a missing y and the other column as they were."""
    codes = shifted_pair()
    draws = independent(codes)
    out = redrawn(draws, codes)
    real = group_table(codes, 0, 1, MAPS, DOMAIN)
    assert tvd(group_table(draws, 0, 1, MAPS, DOMAIN), real) > 0.4
    assert tvd(group_table(out, 0, 1, MAPS, DOMAIN), real) < 0.03
    assert np.corrcoef(*out[out[:, 1] < 48][:, :2].T)[0, 1] > 0.9
    assert ((out[:, 0] == draws[:, 0]) | (out[:, 1] == draws[:, 1])).all()
    assert 0.4 < (out[:, 0] == draws[:, 0]).mean() < 0.7  # the anchor is either column
    assert np.array_equal(out[:, 1] == 48, draws[:, 1] == 48) and np.array_equal(out[:, 2], draws[:, 2])
    for a in (0, 1):
        assert tvd(one_way(out, a)[:48], one_way(codes, a)[:48]) < 0.03


def test_draws_that_hold_the_relation_are_left_as_they_are():
    codes = shifted_pair()
    draws = shifted_pair(seed=5)
    assert np.array_equal(redrawn(draws, codes), draws)
    assert np.array_equal(redrawn(independent(codes), codes, departure_from=1.0), independent(codes))


def cut_above(codes: np.ndarray, a: int, cell: int) -> np.ndarray:
    """``a``'s one-way counts of ``codes`` with every cell from ``cell`` up a structural zero (an end the estimator
    cut as empty, docs/privacy.md §8.7)."""
    counts = one_way(codes, a)
    counts[cell:DOMAIN.ordered[a]] = 0.0
    return counts


def test_the_support_holds_the_groups_where_the_model_has_mass():
    """y's groups 10 and 11 (cells 40-47) cut as empty, x's group 0 holding one negative count only and its group 11
    (cells 44-47, above every x of the data) nothing: the cells of those rows and columns are not held, every other
    cell is."""
    codes = shifted_pair()
    table = group_table(codes, 0, 1, MAPS, DOMAIN)
    x = one_way(codes, 0)
    x[:4] = [-3.0, 0.0, 0.0, 0.0]
    held = on_support(table, 0, 1, MAPS, {0: x, 1: cut_above(codes, 1, 40)}, DOMAIN)
    assert held.shape == (12, 12)
    assert not held[:, 10:].any() and not held[[0, 11]].any() and held[1:11, :10].all()


def test_readings_where_the_model_holds_nothing_neither_depart_nor_draw_records_there():
    """Draws of the same relation, y's top groups cut as empty by the model, and a released table reading noise of
    about 200 records in each of those groups' cells: the departure counts only the cells the model holds (0 here,
    where all cells would read 0.2 or more), and the pair is left as drawn; drawn from anyway (threshold 0), no
    record lands in a cut cell."""
    codes = shifted_pair()
    draws = shifted_pair(seed=5)
    cut = cut_above(codes, 1, 40)
    draws[:, 1] = np.where((draws[:, 1] >= 40) & (draws[:, 1] < 48), 39, draws[:, 1])  # the model's draws hold none
    table = group_table(codes, 0, 1, MAPS, DOMAIN)
    table[:, 10:] = 200.0
    ones = {0: one_way(codes, 0), 1: cut}
    held = on_support(table, 0, 1, MAPS, ones, DOMAIN)
    mine = group_table(draws, 0, 1, MAPS, DOMAIN)
    assert departure(table, 0.0, mine) > 0.2
    assert departure(table, 0.0, mine, held=held) < 0.05
    kw = dict(tables={(0, 1): (table, 0.0)}, maps=MAPS, one_way=ones, domain=DOMAIN)
    assert np.array_equal(redraw_pairs(draws, departure_from=0.2, generator=np.random.default_rng(2), **kw), draws)
    out = redraw_pairs(independent(draws), departure_from=0.0, generator=np.random.default_rng(2), **kw)
    assert not ((out[:, 1] >= 40) & (out[:, 1] < 48)).any()
    assert tvd(group_table(out, 0, 1, MAPS, DOMAIN)[:, :10], table[:, :10]) < 0.05


def test_the_noise_allowance_counts_only_the_cells_held():
    """Noise of variance 400 on the held half of a table: the allowance of the 72 cells read, not of all 144."""
    codes = independent(shifted_pair())
    apart = group_table(codes, 0, 1, MAPS, DOMAIN)
    held = np.zeros((12, 12), dtype=bool)
    held[:6] = True
    noisy = np.where(held, apart + np.random.default_rng(3).normal(0, 20.0, apart.shape), 0.0)
    total = float(np.clip(noisy[held], 0, None).sum())
    expected = apart[held] * total / apart[held].sum()
    raw = 0.5 * float(np.abs(noisy[held] - expected).sum())
    allowance = 0.5 * 72 * np.sqrt(2 * 400 / np.pi)
    assert departure(noisy, 400.0, apart, held=held) == pytest.approx(max(0.0, raw - allowance) / total, abs=1e-12)


PAIR_DOMAIN = Domain(("x", "y", "z"), (48, 48, 48), ordered=(48, 48, 48))


def pair_table(related: bool = True) -> AggregatedData:
    codes = shifted_pair()
    y = np.where(codes[:, 1] == 48, np.minimum(codes[:, 0] + 6, 47), codes[:, 1])  # no missing value here
    codes = np.column_stack([codes[:, 0], y, np.random.default_rng(7).integers(0, 48, len(codes))])
    return AggregatedData.from_codes(PAIR_DOMAIN, codes if related else independent(codes))


def run_pairs(data: AggregatedData, **options) -> np.ndarray:
    """Every pair as the workload at rho 1/200, with a model too small to hold a pair of 48 x 48 cells and no
    Gaussian copula: the covering step reads the pairs, and only the support's draws can relate them."""
    rho = Fraction(1, 200)
    settings = MeasureOptions(rounds_per_attribute=2, coarse_groups=12, max_model_cells=1000, copula_from=1.0,
                              estimator=EstimatorSettings(iters=20, final_iters=60, scoring_sample=2000), **options)
    return measure(data, [(0, 1), (0, 2), (1, 2)], budget=rho, relation="add-remove", ledger=ZcdpLedger(rho),
                   rng=PrivateRandom(4), options=settings, progress=False).records


def test_a_run_whose_model_cannot_hold_a_related_pair_keeps_it_by_its_released_table():
    data = pair_table()
    real = np.repeat(data.codes, data.counts, axis=0)
    assert np.corrcoef(real[:, 0], real[:, 1])[0, 1] > 0.95
    kept, lost = run_pairs(data), run_pairs(data, pair_redraw_from=1.0)  # seeded: 0.77 and 0.47 (real 0.99)
    assert np.corrcoef(kept[:, 0], kept[:, 1])[0, 1] > 0.7
    assert np.corrcoef(lost[:, 0], lost[:, 1])[0, 1] < 0.55


def test_the_pairs_drawn_read_released_counts_only(monkeypatch):
    """The release with the true data swapped for a table without the relation after the last measurement: the
    same records."""
    data, other = pair_table(), pair_table(related=False)
    plain = run_pairs(data)
    release = algorithm.release

    def swapped(run, measured, *args):
        return release(replace(run, data=other, answers=TrueCounts(other, run.views)), measured, *args)

    monkeypatch.setattr(algorithm, "release", swapped)
    assert np.array_equal(run_pairs(data), plain)


@pytest.mark.parametrize("value, message", [(1.5, r"pair_redraw_from must be a number in \[0, 1\] \(1: never\), "
                                                   r"got 1.5"), (True, "pair_redraw_from must be a number"),
                                            ("0.2", "pair_redraw_from must be a number")])
def test_the_option_is_checked_by_name(value, message):
    with pytest.raises(InputError, match=message):
        MeasureOptions(pair_redraw_from=value)
