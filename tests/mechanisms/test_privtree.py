"""Discrete PrivTree (docs/privacy.md §10.3): exact worst-case loss, the split rule, the ledger, neighbours.

The privacy loss is computed exactly from the implementation's parameters
and score: for one record's path of nodes, the log-ratio of the probability
of a tree under D + x and under D is a sum of per-node terms (Theorem 10.1's
proof); a dynamic programme over (depth, count) takes the worst case over
every non-increasing count path and every leaf depth, both directions.
"""

from __future__ import annotations

import decimal
import math
from dataclasses import replace
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import synthdp
import synthdp.mechanisms.privtree as privtree
from synthdp.core.encoding import Encoder
from synthdp.core.errors import InputError, SchemaError
from synthdp.core.schema import Schema
from synthdp.accounting.ledger import ADD_REMOVE, REPLACE_ONE, Ledger
from synthdp.mechanisms.privtree import (MAX_DEPTH, THRESHOLD, column_budget, discretise, privtree_cuts,
                                         privtree_parameters, split_score)
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.methods.measure.settings import MeasureOptions
from synthdp.accounting.zcdp import ZcdpLedger


def _log_tail(j: np.ndarray, a: float) -> np.ndarray:
    """``log P[Z >= j]`` for ``Z ~ DLap(a)`` (§1.6 (F2) and its complement), elementwise."""
    j = np.asarray(j, dtype=np.float64)
    t = math.exp(-a)
    out = np.empty_like(j)
    up = j >= 1
    out[up] = -a * j[up] - math.log1p(t)
    out[~up] = np.log1p(-np.exp(-a * (1 - j[~up])) / (1 + t))
    return out


def worst_loss(params, depth: int = 14) -> float:
    """The exact worst-case privacy loss of one tree over every non-increasing count path (both directions).

    Node ``h`` on x's path has count ``c_h`` in D and ``c_h + 1`` in D + x. A
    tree that splits the path down to depth ``k`` and stops there has
    log-ratio ``sum_{h<k} log(p_h(c_h+1)/p_h(c_h)) + log((1-p_k(c_k+1))/(1-p_k(c_k)))``
    (no stop factor at the depth cap). ``F[h][c]`` is the best loss from depth
    ``h`` on with ``c_h = c``; later counts are at most ``c``.
    """
    a, g, th = float(params.rate), params.decay, params.threshold
    counts = np.arange(th + (depth + 2) * g + int(60 / a) + 5)
    worst = 0.0
    for sign in (1, -1):
        best = np.zeros(counts.size)
        for h in range(depth - 1, -1, -1):
            b0 = np.array([split_score(int(c), h, params) for c in counts])
            b1 = np.array([split_score(int(c) + 1, h, params) for c in counts])
            split = sign * (_log_tail(th - b1 + 1, a) - _log_tail(th - b0 + 1, a))
            # no split: log P[Z <= theta - b] = log P[Z >= b - theta]
            stop = sign * (_log_tail(b1 - th, a) - _log_tail(b0 - th, a))
            best = np.maximum(stop, split + np.maximum.accumulate(best))
        worst = max(worst, float(best.max()))
    return worst


LOSS_CASES = [(Fraction(1, 20), 0), (Fraction(3, 10), 7), (Fraction(1), 0), (Fraction(1), 50), (Fraction(2), 1),
              (Fraction(4), 0), (Fraction(8), 7),
              # negative thresholds, as the noisy total's rule sets them (docs/privacy.md §13): up to 3 decays
              (Fraction(1, 20), -42), (Fraction(1, 20), -126), (Fraction(1), -9), (Fraction(4), -3)]


@pytest.mark.parametrize(("epsilon", "theta"), LOSS_CASES)
def test_exact_worst_case_loss_is_within_epsilon(epsilon, theta):
    params = privtree_parameters(epsilon, threshold=theta)
    assert worst_loss(params) <= float(epsilon)


def test_the_exact_loss_catches_broken_parameters():
    """The computation above goes red on the mutations of §10.3: gamma - 1, and rate and scale swapped."""
    params = privtree_parameters(Fraction(4))
    assert worst_loss(replace(params, decay=params.decay - 1)) > 4
    small = privtree_parameters(Fraction(1, 20))
    assert worst_loss(replace(small, rate=1 / small.rate)) > 1 / 20


@pytest.mark.parametrize("epsilon", [Fraction(1, 100), Fraction(1, 20), Fraction(3, 10), Fraction(1), Fraction(8)])
def test_rate_rounded_down_and_decay_the_least_with_exp_decay_below_one_over_fanout(epsilon):
    params = privtree_parameters(epsilon)
    assert params.rate <= epsilon / 3 < params.rate + Fraction(1, 10**12)
    with decimal.localcontext(decimal.Context(prec=60)):
        rate = decimal.Decimal(params.rate.numerator) / decimal.Decimal(params.rate.denominator)
        ln2 = decimal.Decimal(2).ln()
        assert rate * params.decay >= ln2 > rate * (params.decay - 1)


def test_threshold_and_depth_are_public_constants():
    assert THRESHOLD == 0 and MAX_DEPTH == 32
    assert privtree_parameters(Fraction(1, 10)).threshold == THRESHOLD


class _Noise:
    """An intercepted sampler: records the (s, t) it is asked for and returns chosen noise values."""

    def __init__(self, value: int = 0):
        self.calls: list[tuple[int, int]] = []
        self.value = value

    def __call__(self, s, t, rng):
        self.calls.append((s, t))
        return self.value


def _reference_cuts(values, lo, hi, params, noise=0):
    """The split rule of §10.3 written out for an integer column with zero noise (independent of the module)."""
    ordered = np.sort(values)
    cuts, todo = [], [(lo, hi + 1, 0)]
    while todo:
        left, right, h = todo.pop()
        if right - left < 2 or h >= params.max_depth:
            continue
        count = int(((ordered >= left) & (ordered < right)).sum())
        if max(count - h * params.decay, THRESHOLD - params.decay) + noise > THRESHOLD:
            middle = left + math.ceil((right - left) / 2)
            cuts.append(float(middle))
            todo += [(left, middle, h + 1), (middle, right, h + 1)]
    return tuple(sorted(cuts))


@pytest.mark.parametrize("rows", [1, 40, 400, 4000])
def test_split_rule_and_rate_are_exactly_the_documented_ones_at_every_size(monkeypatch, rows):
    """With the noise fixed at 0, the cuts follow ``b(v) > theta`` with theta independent of n, and the
    sampler is asked for DLap(a), rate a (never the scale 1/a)."""
    noise = _Noise()
    monkeypatch.setattr(privtree, "discrete_laplace", noise)
    params = privtree_parameters(Fraction(1, 2))
    values = np.random.default_rng(rows).integers(0, 50, rows).astype(float)
    cuts = privtree_cuts(values, (0, 99), step=1.0, params=params, rng=PrivateRandom(0))
    assert cuts == _reference_cuts(values, 0, 99, params)
    assert noise.calls and set(noise.calls) == {(params.rate.numerator, params.rate.denominator)}


def test_one_node_split_frequency_matches_the_exact_probability():
    """Audit with the real sampler: a root with count theta splits with P[Z >= 1] = t / (1 + t)."""
    params = privtree_parameters(Fraction(1))
    a = float(params.rate)
    p = math.exp(-a) / (1 + math.exp(-a))
    rng, trials = PrivateRandom(5), 3000
    splits = sum(bool(privtree_cuts(np.zeros(THRESHOLD), (0, 1), step=1.0, params=replace(params, max_depth=1),
                                    rng=rng)) for _ in range(trials))
    assert abs(splits / trials - p) < 4 * math.sqrt(p * (1 - p) / trials)


def test_cuts_of_floats_are_midpoints_inside_the_bounds():
    params = privtree_parameters(Fraction(2))
    values = np.random.default_rng(0).exponential(2.0, 5000).clip(0, 100)
    cuts = privtree_cuts(values, (0.0, 100.0), step=None, params=params, rng=PrivateRandom(1))
    assert cuts and all(0 < c < 100 for c in cuts) and list(cuts) == sorted(set(cuts))
    assert min(cuts) < 1  # the mass near 0 is split finely


def _table(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"x": rng.integers(0, 1000, n), "y": np.round(rng.exponential(5.0, n), 3)})


def _schema(df):
    return Schema.from_dataframe(df, bounds={"x": (0, 999), "y": (0, 100)}, clip=True, discretise="privtree",
                                 dtypes={"y": "float64"})


@pytest.mark.parametrize("relation", [ADD_REMOVE, REPLACE_ONE])
def test_ledger_charges_pure_ahead_or_the_zcdp_filter(relation):
    df = _table(500)
    schema = _schema(df)
    assert schema.to_discretise == ("x", "y")
    ledger = Ledger(Fraction(1), Fraction(0))
    cut = discretise(df, schema, epsilon=Fraction(1, 40), rng=PrivateRandom(0), ledger=ledger, relation=relation)
    factor = 1 if relation == ADD_REMOVE else 2
    charged = [(e.mechanism, e.epsilon, e.ahead) for e in ledger.events]
    assert charged == [("privtree", factor * Fraction(1, 40), True)] * 2
    assert cut.epsilon == 2 * factor * Fraction(1, 40) and cut.rho == 0 and not cut.schema.to_discretise
    zcdp = ZcdpLedger(Fraction(1, 100))
    cut = discretise(df, schema, epsilon=Fraction(1, 40), rng=PrivateRandom(0), ledger=zcdp, relation=relation)
    assert [e.rho for e in zcdp.events] == [(factor * Fraction(1, 40)) ** 2 / 2] * 2 and cut.rho == zcdp.spent


def test_column_budget_shares_a_tenth():
    assert column_budget(columns=4, relation=ADD_REMOVE, epsilon=Fraction(2)) == Fraction(1, 20)
    assert column_budget(columns=4, relation=REPLACE_ONE, epsilon=Fraction(2)) == Fraction(1, 40)
    eps = column_budget(columns=3, relation=ADD_REMOVE, rho=Fraction(3, 100))
    assert 3 * eps**2 / 2 <= Fraction(3, 1000) < 3 * (eps + Fraction(1, 10**12)) ** 2 / 2
    with pytest.raises(InputError, match="exactly one"):
        column_budget(columns=1, relation=ADD_REMOVE)


def test_bad_values_refused_before_any_charge():
    df = pd.DataFrame({"x": [1, 2, 5000], "y": [0.5, 1.0, 2.0]})
    schema = Schema.from_dataframe(df, bounds={"x": (0, 999), "y": (0, 100)}, discretise="privtree")
    ledger = Ledger(Fraction(1), Fraction(0))
    with pytest.raises(SchemaError, match="row 2, column 'x' is outside its public bounds"):
        discretise(df, schema, epsilon=Fraction(1, 10), rng=PrivateRandom(0), ledger=ledger)
    assert ledger.events == []


def test_neighbouring_tables_same_cuts_and_fields_unless_the_new_path_moved(monkeypatch):
    """D and D + one record, fixed noise stream: the release differs only through decisions on x's path."""
    df = _table(3000)
    extra = pd.concat([df, pd.DataFrame({"x": [500], "y": [3.0]})], ignore_index=True)
    schema = _schema(df)
    same = 0
    for seed in range(20):
        cuts = [discretise(d, schema, epsilon=Fraction(1, 2), rng=PrivateRandom(seed),
                           ledger=Ledger(Fraction(2), Fraction(0))) for d in (df, extra)]
        assert (cuts[0].epsilon, cuts[0].rho) == (cuts[1].epsilon, cuts[1].rho)
        assert [c.parameters for c in cuts[0].columns] == [c.parameters for c in cuts[1].columns]
        same += cuts[0].schema == cuts[1].schema
    assert same >= 15  # one count per level moved by one on x's paths: the trees almost always agree


def test_released_parameters_do_not_depend_on_n():
    small, large = _table(300), _table(3000)
    reports = []
    for df in (small, large):
        result = synthdp.generate_synthetic(df, "marginals:2", epsilon=1.0, delta=1e-9, bounds={"x": (0, 999),
                                            "y": (0.0, 100.0)}, clip=True, random_state=0, progress=False)
        plan = result.report.release.plan
        privtree_events = [e for e in result.report.release.zcdp_ledger if e["mechanism"] == "privtree"]
        reports.append((plan["discretised"], plan["rho"], privtree_events))
    assert reports[0] == reports[1]


def test_encoder_refuses_cells_not_learned_yet_and_round_trips_learned_cuts():
    df = _table(50)
    schema = _schema(df)
    with pytest.raises(SchemaError, match="not known yet"):
        Encoder(schema)
    learned = schema.with_cuts({"x": (10.0, 500.0), "y": (0.5,)})
    again = Schema.from_json(learned.to_json())
    assert again == learned and again["x"].origin == "learned" and again["x"].bins == 3
    codes = Encoder(again).encode(pd.DataFrame({"x": [0, 9, 10, 499, 500, 999], "y": [0, 0.49, 0.5, 1, 99, 100]}))
    assert codes[:, 0].tolist() == [0, 0, 1, 1, 2, 2] and codes[:, 1].tolist() == [0, 0, 1, 1, 1, 1]


def test_end_to_end_ledgers_measure_filter_and_game_ahead():
    """Select-measure-estimate: one (epsilon, delta) spend on the run's ledger; the filter's first charges are
    the joint selection, the point masses (docs/privacy.md §11.2) and the trees, then the method, within rho. The
    game: the trees are pure spends ahead (no point masses there)."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"x": rng.integers(0, 1000, 3000), "y": np.round(rng.exponential(5.0, 3000), 3),
                       "t": rng.choice(["a", "b"], 3000)})
    bounds = {"x": (0, 999), "y": (0.0, 100.0)}
    result = synthdp.generate_synthetic(df, "marginals:2", epsilon=1.0, delta=1e-9, bounds=bounds, clip=True,
                                        random_state=0, progress=False)
    release = result.report.release
    assert [e["mechanism"] for e in release.ledger] == ["select-measure-estimate"]
    steps = [e["mechanism"] for e in release.zcdp_ledger]
    assert steps[:4] == ["gaussian-partition-selection", "point-mass-selection", "privtree", "privtree"]
    method = sum(Fraction(e["rho"]) for e in release.zcdp_ledger[4:])
    assert len(steps) > 4
    assert method <= Fraction(release.rho_budget)  # what the filter leaves the method after the first charges
    game = synthdp.generate_synthetic(df, "marginals:2", epsilon=1.0, delta=1e-9, bounds=bounds, clip=True,
                                      categories={"t": ["a", "b"]}, method="game", rounds=3, samples_per_round=10,
                                      random_state=0, progress=False)
    spends = [(e["mechanism"], e["ahead"]) for e in game.report.release.ledger]
    assert spends[:2] == [("privtree", True), ("privtree", True)] and game.report.release.epsilon_spent <= 1.0


def test_units_of_k_rows_run_the_trees_at_eps_over_k_and_charge_eps(monkeypatch):
    """docs/privacy.md §10.6: group privacy for PrivTree; the noise rate read by the sampler is that of eps_d / k."""
    noise = _Noise()
    monkeypatch.setattr(privtree, "discrete_laplace", noise)
    df = _table(300)
    ledger = Ledger(Fraction(1), Fraction(0), contribution_bound=3)
    discretise(df, _schema(df), epsilon=Fraction(3, 10), rng=PrivateRandom(0), ledger=ledger)
    rate = privtree_parameters(Fraction(1, 10)).rate
    assert set(noise.calls) == {(rate.numerator, rate.denominator)}
    assert [e.epsilon for e in ledger.events] == [Fraction(3, 10)] * 2


def test_a_run_with_privacy_units_and_numeric_columns():
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"person": rng.integers(0, 800, 3000).astype(str), "x": rng.integers(0, 1000, 3000),
                       "t": rng.choice(["a", "b"], 3000)})
    result = synthdp.generate_synthetic(df, "marginals:2", epsilon=1.0, delta=1e-9, bounds={"x": (0, 999)},
                                        categories={"t": ["a", "b"]}, privacy_unit="person", max_rows_per_unit=3,
                                        random_state=0, progress=False)
    assert result.data["x"].between(0, 999).all() and "person" not in result.data
    assert [e["mechanism"] for e in result.report.release.zcdp_ledger][:2] == ["point-mass-selection", "privtree"]


def _bfs_key(cut: float) -> tuple[int, float]:
    """On bounds [0, 1) a split at depth d cuts at an odd multiple of 2**-(d+1): breadth-first order."""
    return Fraction(cut).denominator, cut


@pytest.mark.parametrize("max_cells", [1, 2, 5, 17, 64])
def test_a_cell_cap_releases_the_first_splits_of_the_whole_tree_in_breadth_first_order(max_cells):
    """Post-processing: the capped tree is the whole tree's release cut to its first ``max_cells - 1`` splits."""
    params = privtree_parameters(Fraction(2))
    values = np.random.default_rng(3).beta(0.5, 3.0, 20_000)
    whole = privtree_cuts(values, (0.0, 1.0), step=None, params=params, rng=PrivateRandom(7))
    capped = privtree_cuts(values, (0.0, 1.0), step=None, params=params, rng=PrivateRandom(7),
                           max_cells=max_cells)
    assert len(whole) > 64
    assert capped == tuple(sorted(sorted(whole, key=_bfs_key)[: max_cells - 1]))


def test_the_cell_cap_keeps_the_method_from_refusing_after_privtree_spent(monkeypatch):
    """A domain PrivTree would make too large for the method's counts (here a small limit): the cap is chosen from
    public sizes before any private step, every tree stays within it, the run releases, and the plan says so."""
    import synthdp.methods.measure.method as measure_method
    from synthdp.config import SynthesisConfig
    from synthdp.plan import make_plan

    monkeypatch.setattr(measure_method, "MAX_COUNTED_CELLS", 200_000)  # 4 triples of K**3 cells: K = 32 fits
    fine = MeasureOptions(max_fine_cells=2**62)  # every triple counted finely (else its twin's cells count)
    rng = np.random.default_rng(0)
    base = rng.normal(size=6000)
    df = pd.DataFrame({f"x{i}": np.clip(50 + 15 * (0.6 * base + 0.8 * rng.normal(size=6000)), 0, 100)
                       for i in range(4)})
    bounds = {c: (0.0, 100.0) for c in df.columns}
    config = SynthesisConfig(query_class="marginals:3", epsilon=4.0, delta=1e-9, bounds=bounds, measure_options=fine)
    assert make_plan(config, Schema.from_dataframe(df, bounds=bounds, discretise="privtree")).stage.max_cells == 32
    by_twins = SynthesisConfig(query_class="marginals:3", epsilon=4.0, delta=1e-9, bounds=bounds)
    assert make_plan(by_twins, Schema.from_dataframe(df, bounds=bounds, discretise="privtree")).stage.max_cells == 128
    result = synthdp.generate_synthetic(df, "marginals:3", epsilon=4.0, delta=1e-9, bounds=bounds, random_state=0,
                                        progress=False, measure_options=fine)
    columns = result.report.release.plan["discretised"]
    assert "at most 32 cells per column" in columns["reason"]
    assert all(1 < result.schema[c].bins <= 32 for c in df.columns)
    assert max(result.schema[c].bins for c in df.columns) == 32  # the cap bit: PrivTree wanted more


def test_a_column_of_dates_is_split_on_whole_days_as_its_day_numbers_would_be():
    """On the public grid of one day (§10.3) the tree over seconds is the tree over day numbers, scaled: the same
    noise gives the same splits, every cut is a midnight, and no cell lies between two midnights."""
    params = privtree_parameters(Fraction(1))
    days = np.random.default_rng(3).integers(-365, 7000, 6000).astype(float)
    day = 86_400.0
    on_days = privtree_cuts(days, (-365, 6939), step=1.0, params=params, rng=PrivateRandom(4))
    on_seconds = privtree_cuts(days * day, (-365 * day, 6939 * day), step=day, params=params, rng=PrivateRandom(4))
    assert len(on_days) > 20
    assert on_seconds == tuple(c * day for c in on_days)
    assert all(c % day == 0 and -365 * day < c <= 6939 * day for c in on_seconds)


def test_grid_numbers_are_exact_floors_where_a_division_rounds_across_a_whole_number():
    from synthdp.core.attribute import grid_numbers
    rng = np.random.default_rng(0)
    big = rng.integers(4_000_000_000, 2**52, 20_000)
    assert (grid_numbers(big.astype(float), 1.0) == big).all()
    day = 86_400
    seconds = rng.integers(-10**10, 10**10, 20_000)
    assert (grid_numbers(seconds.astype(float), float(day)) == seconds // day).all()


def test_large_integers_are_split_as_small_ones_shifted():
    """The grid is exact far from zero (amounts in cents, epoch milliseconds): the tree over ``base + x`` is the
    tree over ``x`` moved by ``base``, the same noise giving the same splits."""
    params = privtree_parameters(Fraction(1))
    small = np.random.default_rng(5).integers(0, 1000, 4000)
    base = 5_000_000_001
    near = privtree_cuts(small.astype(float), (0, 999), step=1.0, params=params, rng=PrivateRandom(6))
    far = privtree_cuts((small + base).astype(float), (base, base + 999), step=1.0, params=params,
                        rng=PrivateRandom(6))
    assert len(near) > 10 and far == tuple(c + base for c in near)


def test_times_of_day_and_a_lower_bound_off_the_grid_count_in_the_day_the_encoder_puts_them_in():
    """A column of dates may hold times (§10.1) and learned bounds need not be midnights (§10.4): each value counts
    in its day, one at a bound below the first midnight in the first day, as the encoder reads them."""
    params = privtree_parameters(Fraction(1))
    day = 86_400
    rng = np.random.default_rng(8)
    days = rng.integers(100, 500, 5000)
    days[:300] = 100  # rows clamped to the lower bound
    seconds = days * day + rng.integers(0, day, days.size)
    seconds[:300] = 100 * day - 3600  # the bound: an hour before the first midnight
    on_days = privtree_cuts(days.astype(float), (100, 499), step=1.0, params=params, rng=PrivateRandom(9))
    on_seconds = privtree_cuts(seconds.astype(float), (100 * day - 3600, 499 * day + 7200), step=float(day),
                               params=params, rng=PrivateRandom(9))
    assert len(on_days) > 10 and on_seconds == tuple(c * day for c in on_days)
