"""Private bounds on a public log-2 grid (docs/privacy.md §10.4): grid, rate, hull, threshold, ledger, refusal."""

from __future__ import annotations

import json
import math
import warnings
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import synthdp
import synthdp.mechanisms.bounds as bounds
from synthdp.core.errors import InputError
from synthdp.core.owner import OwnerWarning
from synthdp.core.schema import Schema
from synthdp.core.tallies import Tallies
from synthdp.accounting.ledger import ADD_REMOVE, REPLACE_ONE, Ledger
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.accounting.zcdp import ZcdpLedger


def test_the_grid_partitions_the_line():
    edges = bounds.bucket_edges()
    assert len(edges) - 1 == 105 and edges[0] == -np.inf and edges[-1] == np.inf and (np.diff(edges) > 0).all()
    for x in [-1e300, -2.0**41, -3.0, -1.0, -0.5, -2.0**-11, 0.0, 2.0**-11, 2.0**-10, 1.0, 1.5, 2.0, 1e12, 1e300]:
        j = bounds.bucket_of(np.array([x]))[0]
        assert edges[j] <= x < edges[j + 1]
    assert bounds.bucket_of(np.array([2.0, 4.0]))[0] + 1 == bounds.bucket_of(np.array([4.0]))[0]


class _Noise:
    def __init__(self, values):
        self.values, self.calls = values, []

    def __call__(self, m, s, t, rng):
        self.calls.append((m, s, t))
        return list(self.values(m))


def test_every_bucket_is_noised_at_the_rate_and_the_bounds_are_read_off_the_noisy_counts(monkeypatch):
    noise = _Noise(lambda m: [0] * m)
    monkeypatch.setattr(bounds, "discrete_laplace_vector", noise)
    eps = Fraction(1, 10)
    tau, step = bounds.range_threshold(eps), bounds.walk_threshold(eps)
    assert (tau, bounds.pair_threshold(eps), step) == (109, 130, 24)
    values = np.concatenate([np.full(tau, 10.0), np.full(step, 5.0), np.full(step - 1, 3.0), np.full(step, 20.0)])
    # core [8, 16), with [4, 8) and [16, 32) as pairs with it; [2, 4) misses the walk by one and is the margin, as is
    # [32, 64)
    assert bounds.noisy_range(values, epsilon=eps, rng=PrivateRandom(0), integer=False) == (2.0, 64.0)
    assert noise.calls == [(105, 1, 10)]
    assert bounds.noisy_range(values, epsilon=eps, rng=PrivateRandom(0), integer=True) == (2.0, 64.0)
    reached = np.r_[values, 2.5]  # [2, 4) now holds the walk's threshold: it joins, and [1, 2) is the margin
    assert bounds.noisy_range(reached, epsilon=eps, rng=PrivateRandom(0), integer=False) == (1.0, 64.0)
    huge = np.full(tau, 1e15)  # the overflow bucket: capped at 2**41, its neighbour the margin
    assert bounds.noisy_range(huge, epsilon=eps, rng=PrivateRandom(0), integer=False) == (2.0**40, 2.0**41)
    assert bounds.noisy_range(np.array([]), epsilon=eps, rng=PrivateRandom(0), integer=True) == (0.0, 1.0)


@pytest.mark.parametrize("core", [1, 3000])
def test_the_thresholds_count_rows_whatever_the_table_holds(monkeypatch, core):
    """A bucket holding the core's threshold is kept, and one next to the data holding the walk's joins it, whether
    the rest of the column is small or thousands of times larger: no threshold is a function of ``n``."""
    monkeypatch.setattr(bounds, "discrete_laplace_vector", _Noise(lambda m: [0] * m))
    eps = Fraction(1, 10)
    tau, step = bounds.range_threshold(eps), bounds.walk_threshold(eps)
    values = np.concatenate([np.full(core * tau, 100.0), np.full(step, 40.0), np.full(step, 20.0),
                             np.full(tau, 2.0**20)])
    assert bounds.noisy_range(values, epsilon=eps, rng=PrivateRandom(0), integer=True) == (8.0, 2.0**22)
    short = np.concatenate([np.full(core * tau, 100.0), np.full(step, 40.0), np.full(step - 1, 20.0),
                            np.full(tau - 1, 2.0**20)])
    assert bounds.noisy_range(short, epsilon=eps, rng=PrivateRandom(0), integer=True) == (16.0, 256.0)


def test_the_walk_and_the_core_read_each_bucket_through_its_noise(monkeypatch):
    """The decisions read the noisy counts only: noise that sinks a real tail bucket below the walk's threshold
    stops the walk there, noise that lifts an empty one joins it, and an empty far bucket joins the core only when
    its noise reaches the core's threshold."""
    eps = Fraction(1, 10)
    tau, step = bounds.range_threshold(eps), bounds.walk_threshold(eps)
    tail, far, empty = bounds.bucket_of(np.array([3.0, 2.0**22, 1.0]))
    values = np.concatenate([np.full(tau, 10.0), np.full(step, 5.0), np.full(step, 3.0)])  # [4, 8) pairs with the core

    def noisy(changes):
        monkeypatch.setattr(bounds, "discrete_laplace_vector",
                            _Noise(lambda m: [changes.get(j, 0) for j in range(m)]))
        return bounds.noisy_range(values, epsilon=eps, rng=PrivateRandom(0), integer=False)

    assert noisy({}) == (1.0, 32.0)
    assert noisy({tail: -1}) == (2.0, 32.0)  # [2, 4) sunk by one: the margin, no further
    assert noisy({empty: step}) == (0.5, 32.0)  # empty [1, 2) lifted to the walk's threshold
    assert noisy({far: tau - 1}) == (1.0, 32.0)  # an empty far bucket one short of the core's threshold
    assert noisy({far: tau}) == (1.0, 2.0**24)  # ... and at it: [2**22, 2**23) and its margin


def test_two_neighbouring_buckets_short_of_the_core_alone_join_it_together(monkeypatch):
    """Mass spread over two buckets, neither holding the core's threshold, is found when their sum holds the pair
    threshold; one short, nothing is kept."""
    monkeypatch.setattr(bounds, "discrete_laplace_vector", _Noise(lambda m: [0] * m))
    eps = Fraction(1, 10)
    pair = bounds.pair_threshold(eps)
    values = np.r_[np.full(pair // 2, 10.0), np.full(pair - pair // 2, 20.0)]
    assert bounds.noisy_range(values, epsilon=eps, rng=PrivateRandom(0), integer=False) == (4.0, 64.0)
    assert bounds.noisy_range(values[1:], epsilon=eps, rng=PrivateRandom(0), integer=False) == \
        (-(2.0**-10), 2.0**-10)


@pytest.mark.parametrize("eps", [Fraction(1, 10), Fraction(1), Fraction(3)])
def test_the_pair_threshold_bounds_every_empty_pair_together(eps):
    """Against the tail of two discrete Laplace variables convolved numerically: (|G| - 1) P(Z1 + Z2 >= T2) is at
    most the failure probability, and one row less is not."""
    t = math.exp(-float(eps))
    k = np.arange(-4000, 4001)
    pmf = (1 - t) / (1 + t) * t ** np.abs(k)
    total = np.convolve(pmf, pmf)  # the sum's pmf on -8000 .. 8000
    tail = lambda x: float(total[8000 + x:].sum())
    pair = bounds.pair_threshold(eps)
    assert 104 * tail(pair) <= float(bounds.FAILURE) < 104 * tail(pair - 1)


def test_neighbouring_tables_are_told_apart_at_most_at_the_noise_rate():
    """Audit with the real sampler at eps_b = 1: one value added to a far bucket one short of the core's threshold
    raises the chance that the core takes it (on its own, or as a pair with an empty neighbour) by at most e**eps_b
    (Theorem 10.3: one moved count), and by much more than nothing. A halved noise scale gives about e**2, a bucket
    left unnoised 0 against 1."""
    eps = Fraction(1)
    tau = bounds.range_threshold(eps)
    table = np.concatenate([np.full(3 * tau, 10.0), np.full(tau - 1, 2.0**20)])
    rng, runs = PrivateRandom(5), 2000

    def taken(values) -> float:
        return float(np.mean([bounds.noisy_range(values, epsilon=eps, rng=rng.spawn(), integer=False)[1] > 2.0**20
                              for _ in range(runs)]))

    before, after = taken(table), taken(np.r_[table, 2.0**20])
    assert before > 0.1 and 1.6 < after / before < math.e * 1.12, (before, after)


def test_an_integer_column_skips_the_buckets_without_integers_and_gets_integer_bounds(monkeypatch):
    """Between [1, 2) and zero's bucket lie ten buckets of fractions: an integer column's walk steps over them to 0,
    a real column's stops there. Zero's bucket is [-2**-10, 2**-10): an integer hull from it starts at 0, never
    at -1."""
    monkeypatch.setattr(bounds, "discrete_laplace_vector", _Noise(lambda m: [0] * m))
    eps = Fraction(1, 10)
    tau, step = bounds.range_threshold(eps), bounds.walk_threshold(eps)
    values = np.concatenate([np.full(tau, 3.0), np.full(step, 1.0), np.zeros(step)])
    assert bounds.noisy_range(values, epsilon=eps, rng=PrivateRandom(0), integer=True) == (0.0, 8.0)
    assert bounds.noisy_range(values, epsilon=eps, rng=PrivateRandom(0), integer=False) == (0.5, 8.0)
    assert bounds.noisy_range(np.zeros(tau), epsilon=eps, rng=PrivateRandom(0), integer=True) == (0.0, 1.0)
    fractions = np.full(tau, 2.0**-5)  # [2**-5, 2**-4) holds no integer: never read, the public fallback
    assert bounds.noisy_range(fractions, epsilon=eps, rng=PrivateRandom(0), integer=True) == (0.0, 1.0)
    huge = np.full(tau, 1e15)  # the overflow bucket: inside the cap
    assert bounds.noisy_range(huge, epsilon=eps, rng=PrivateRandom(0), integer=True) == (2.0**40, 2.0**41)
    assert len(bounds.usable_buckets(False)) == 105
    assert len(bounds.usable_buckets(True)) == 105 - 2 * bounds.GRID_LOW + 1  # [-1, -1/2) holds -1


def test_neither_the_walk_nor_the_margin_leaves_zero_for_the_other_sign(monkeypatch):
    """A count whose zeros are in the core came back with bounds [-2, ...] when noise lifted the empty bucket of -1
    to the walk's threshold (about one column in twenty): the other sign takes a bucket of the core."""
    eps = Fraction(1, 10)
    tau, step = bounds.range_threshold(eps), bounds.walk_threshold(eps)
    minus_one, minus_five = bounds.bucket_of(np.array([-1.0, -5.0]))
    counts = np.concatenate([np.zeros(tau), np.full(tau, 1.0), np.full(step, 2.0)])

    def noisy(changes, values=counts):
        monkeypatch.setattr(bounds, "discrete_laplace_vector",
                            _Noise(lambda m: [changes.get(j, 0) for j in range(m)]))
        return bounds.noisy_range(values, epsilon=eps, rng=PrivateRandom(0), integer=True)

    assert noisy({}) == (0.0, 8.0) and noisy({minus_one: step}) == (0.0, 8.0)
    assert noisy({minus_one: tau}) == (-2.0, 8.0)  # a core bucket of -1: its margin [-2, -1)
    assert noisy({}, np.r_[counts, np.full(tau, -5.0)]) == (-16.0, 8.0)
    assert noisy({}, np.r_[np.zeros(tau), np.full(step, 1.0)]) == (0.0, 1.0)  # one cell wide from zero's bucket


@pytest.mark.parametrize("seed", range(3))
def test_integer_bounds_are_whole_numbers_under_the_real_noise(seed):
    rng = np.random.default_rng(seed)
    values = np.r_[np.zeros(300), np.round(rng.lognormal(3, 1.5, 700)), -np.round(rng.lognormal(1, 1, 200))]
    for eps in (Fraction(1, 100), Fraction(1, 10), Fraction(1)):
        lo, hi = bounds.noisy_range(values, epsilon=eps, rng=PrivateRandom(seed), integer=True)
        assert float(lo).is_integer() and float(hi).is_integer() and lo < hi


@pytest.mark.parametrize("outside,warned", [(20, True), (10, False)])
def test_values_outside_learned_bounds_warn_the_owner_with_their_share(outside, warned):
    values = np.r_[np.linspace(2.0, 63.0, 1000 - outside), np.full(outside, 100.0)]
    df = pd.DataFrame({"x": values})
    schema = Schema.from_dataframe(df, learn_bounds=["x"])
    learned = bounds.LearnedBounds(schema.with_bounds({"x": (2.0, 63.0)}), ("x",), Fraction(0), Fraction(0), 0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        bounds.warn_clipped(Tallies.of_frame(df, schema), learned, epsilon=1.0)
    texts = [str(w.message) for w in caught if w.category is OwnerWarning]
    assert len(texts) == warned  # 2% of the values is over the share; 1% is not
    assert all(t.startswith("column 'x': 20 of its 1000 present values (2.0%) are outside its privately learned "
                            "bounds [2, 63] and are clipped to them") for t in texts)


def test_an_empty_bucket_passes_only_through_its_noise(monkeypatch):
    eps = Fraction(1, 10)
    tau = bounds.range_threshold(eps)
    noise = _Noise(lambda m: [tau] + [0] * (m - 1))  # the noise alone lifts the lowest (empty) bucket
    monkeypatch.setattr(bounds, "discrete_laplace_vector", noise)
    lo, _ = bounds.noisy_range(np.full(tau, 3.0), epsilon=eps, rng=PrivateRandom(0), integer=False)
    assert lo == -(2.0**41)


def test_threshold_is_public_and_the_failure_bound_holds():
    eps = Fraction(1, 20)
    tau = bounds.range_threshold(eps)
    assert tau == math.ceil(math.log(105 / 0.002) / 0.05)
    t = math.exp(-0.05)
    assert 105 * t**tau / (1 + t) <= float(bounds.FAILURE)  # every empty bucket together (§1.6 (F2))
    step = bounds.walk_threshold(eps)
    assert step == math.ceil(math.log(10) / 0.05) and t**step / (1 + t) <= float(bounds.WALK_FAILURE)  # one step


@pytest.mark.parametrize("relation", [ADD_REMOVE, REPLACE_ONE])
def test_ledger_charges_before_the_noise(relation):
    df = pd.DataFrame({"x": np.arange(1000.0)})
    schema = Schema.from_dataframe(df, learn_bounds=["x"])
    assert schema.to_bound == ("x",) and schema["x"].dtype == "float64"
    factor = 1 if relation == ADD_REMOVE else 2
    ledger = Ledger(Fraction(3), Fraction(0))
    out = bounds.learn_bounds(df, schema, epsilon=Fraction(1), rng=PrivateRandom(0), ledger=ledger, relation=relation)
    charged = [(e.mechanism, e.epsilon, e.ahead) for e in ledger.events]
    assert charged == [("private-bounds", factor * Fraction(1), True)]
    assert out.schema["x"].bounds[0] <= 4 and out.schema["x"].bounds[1] == 2048 and not out.schema.to_bound
    zcdp = ZcdpLedger(Fraction(1))
    out = bounds.learn_bounds(df, schema, epsilon=Fraction(1, 10), rng=PrivateRandom(0), ledger=zcdp,
                              relation=relation)
    assert [e.rho for e in zcdp.events] == [(factor * Fraction(1, 10)) ** 2 / 2] and out.rho == zcdp.spent


def test_end_to_end_and_refusal_without_delta(monkeypatch):
    """A skewed amount on 3,000 rows: its learned bounds hold all but a few of its values (the core's hull alone
    clipped more than a tenth), so the owner is not warned."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"amount": np.round(rng.lognormal(5, 1, 3000), 2), "g": rng.choice(["a", "b"], 3000)})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = synthdp.generate_synthetic(df, "marginals:2", epsilon=1.0, delta=1e-9,
                                            learn_bounds={"amount": "float64"}, categories={"g": ["a", "b"]},
                                            random_state=0, progress=False)
    assert not [w for w in caught if w.category is OwnerWarning], [str(w.message) for w in caught]
    assert not df["amount"].between(*result.schema["amount"].bounds).mean() < 0.99
    released = json.dumps(result.report.to_dict()) + result.report.summary()
    assert "present values" not in released and "3000" not in released  # the owner's eyes only
    lo, hi = result.schema["amount"].bounds
    assert f"bounds: no public bounds (learn_bounds): 'amount' [{lo:g}, {hi:g}], learned" in result.report.summary()
    assert result.data["amount"].between(lo, hi).all() and "values outside clipped" in \
        result.report.release.plan["bounds"]["reason"]
    import synthdp.mechanisms.noise as noise

    monkeypatch.setattr(noise, "discrete_laplace", lambda *a: (_ for _ in ()).throw(AssertionError("noise")))
    with pytest.raises(InputError, match=r"columns \['amount'\] have no public bounds, and learning them privately "
                                         r".* needs a delta"):
        synthdp.generate_synthetic(df, "marginals:2", epsilon=1.0, learn_bounds=["amount"], method="game",
                                   categories={"g": ["a", "b"]}, progress=False)


def test_units_of_k_rows_noise_at_eps_over_k(monkeypatch):
    noise = _Noise(lambda m: [0] * m)
    monkeypatch.setattr(bounds, "discrete_laplace_vector", noise)
    df = pd.DataFrame({"x": np.arange(1000.0)})
    ledger = Ledger(Fraction(3), Fraction(0), contribution_bound=2)
    bounds.learn_bounds(df, Schema.from_dataframe(df, learn_bounds=["x"]), epsilon=Fraction(1), rng=PrivateRandom(0),
                        ledger=ledger)
    assert noise.calls == [(105, 1, 2)] and [e.epsilon for e in ledger.events] == [Fraction(1)]


def test_the_refusal_names_every_short_column_and_what_it_would_need():
    """The remedy named the first column given, which could be one the check passed."""
    with pytest.raises(InputError) as caught:
        bounds.check_rows({"fine": 5000, "a": 5, "b": 8}, 100, epsilon=1.0)
    message = str(caught.value)
    assert "learning the bounds of ['a', 'b'] privately" in message and "('a' 5, 'b' 8)" in message
    assert "It would need about 100 values in one range of the grid, or an epsilon of about 20 or more (now 1)" \
        in message
    assert "bounds={'a': (lo, hi), 'b': (lo, hi)}, CLI --bounds a=LO:HI b=LO:HI" in message and "fine" not in message
    with pytest.warns(OwnerWarning) as warned:
        bounds.check_rows({"fine": 5000, "a": 150, "b": 120}, 100, epsilon=1.0)
    assert [str(w.message).count("'fine'") for w in warned] == [0]
    assert "the bounds of ['a', 'b']" in str(warned[0].message) and "bounds={'a': (lo, hi), 'b': (lo, hi)}" in \
        str(warned[0].message)


def test_a_column_spread_too_thin_is_refused_before_any_charge_and_nothing_is_written(tmp_path, monkeypatch,
                                                                                     capsys):
    """3,000 present values, never more than about 150 in one range of the grid: enough rows for the old check,
    none kept by the core. Refused before any noise is drawn or anything charged, from Python and the CLI."""
    from synthdp.cli import main
    import synthdp.mechanisms.noise as noise

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"fine": np.round(rng.normal(50, 5, 3000)), "spread": np.round(2.0 ** rng.uniform(0, 20, 3000)),
                       "thin": -np.round(2.0 ** rng.uniform(0, 20, 3000))})
    monkeypatch.setattr(noise, "discrete_laplace", lambda *a: (_ for _ in ()).throw(AssertionError("noise")))
    with pytest.raises(InputError) as caught:
        synthdp.generate_synthetic(df, "marginals:2", epsilon=1.0, delta=1e-9, random_state=0, progress=False,
                                   learn_bounds={c: "int64" for c in df})
    message = str(caught.value)
    assert "learning the bounds of ['spread', 'thin'] privately" in message, message
    assert "This refusal came after private steps" not in message and "'fine'" not in message
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    df.to_csv(src, index=False)
    assert main(["generate", str(src), "-o", str(out), "--epsilon", "1", "--delta", "1e-9", "--seed", "0", "-q",
                 "--learn-bounds", "fine=int64", "spread=int64", "thin=int64"]) == 2
    assert "learning the bounds of ['spread', 'thin'] privately" in capsys.readouterr().err and not out.exists()


def test_values_spread_too_thin_for_the_budget_warn_the_owner_before_any_noise(monkeypatch):
    """A debt that is 0 for 75% of 4,000 rows and spread over 2**6 .. 2**14 for the rest: no range of its non-zero
    part reaches the core or a pair, and the walk from the zeros finds nothing next to them, so the bounds clip it
    whatever the noise; the owner hears so before the bounds' noise is drawn."""
    rng = np.random.default_rng(0)
    n = 4000
    debt = np.where(rng.random(n) < 0.75, 0, np.round(2.0 ** rng.uniform(6, 14, n))).astype(np.int64)
    df = pd.DataFrame({"debt": debt, "g": rng.choice(["a", "b"], n)})
    schema = Schema.from_dataframe(df, learn_bounds={"debt": "int64"}, categories={"g": ["a", "b"]})
    with pytest.warns(OwnerWarning, match=r"column 'debt': about 2\d% of its present values lie away from the ranges"):
        bounds.warn_spread(Tallies.of_frame(df, schema), schema, ["debt"], epsilon=Fraction(1, 50), budget=1.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", OwnerWarning)  # a budget that finds them: silent
        bounds.warn_spread(Tallies.of_frame(df, schema), schema, ["debt"], epsilon=Fraction(1), budget=50.0)
    more = {f"x{i}": np.round(rng.normal(100, 10, n)).astype(np.int64) for i in range(8)}  # nine share the budget
    monkeypatch.setattr(bounds, "discrete_laplace_vector", lambda *a: (_ for _ in ()).throw(AssertionError("noise")))
    with pytest.warns(OwnerWarning, match=r"column 'debt': about 2\d% .* give public bounds"), \
            pytest.raises(AssertionError, match="noise"):
        synthdp.generate_synthetic(df.assign(**more), "marginals:2", epsilon=1.0, delta=1e-9,
                                   learn_bounds=dict.fromkeys(["debt", *more], "int64"), categories={"g": ["a", "b"]},
                                   random_state=0, progress=False)
