"""Point masses of numeric columns (docs/privacy.md §11.2): the selection, PrivTree's input, the cells, the run."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

import synthdp
from synthdp import plan
from synthdp.accounting.zcdp import ZcdpLedger
from synthdp.core.encoding import Encoder
from synthdp.core.errors import InputError
from synthdp.core.schema import Attribute, Schema
from synthdp.core.tallies import NumberTally, Tallies
from synthdp.mechanisms import point_masses as pm
from synthdp.mechanisms import privtree
from synthdp.mechanisms.randomness import PrivateRandom

RHO, DELTA = Fraction(1, 100), Fraction(1, 10**9)


def _schema(*columns: tuple[str, tuple[float, float]]) -> Schema:
    return Schema(tuple(Attribute(name, "numeric", bounds=bounds, origin="learn", bins=1) for name, bounds in columns))


def _tallies(df: pd.DataFrame) -> Tallies:
    return Tallies({}, {c: NumberTally.of(df[c].to_numpy(float)) for c in df.columns}, len(df))


def _fixed_noise(monkeypatch, z: int) -> list:
    """Every key's noise is ``z``; returns the (size, sigma2) of each call."""
    calls = []

    def fake(size, sigma2, rng):
        calls.append((size, sigma2))
        return np.full(size, z, dtype=np.int64)

    monkeypatch.setattr(pm, "discrete_gaussian_array", fake)
    return calls


def _select(df, schema, selection, seed=0, max_cells=None):
    ledger = ZcdpLedger(RHO)
    return pm.select_point_masses(_tallies(df), schema, selection=selection, rng=PrivateRandom(seed), ledger=ledger,
                                  max_cells=max_cells), ledger


def test_parameters_are_public_and_do_not_depend_on_n():
    small = pd.DataFrame({"x": [0.0] * 900 + list(np.linspace(1, 99, 100))})
    large = pd.concat([small] * 10, ignore_index=True)
    run = {}
    for name, df in (("small", small), ("large", large)):
        result = synthdp.generate_synthetic(df, "marginals:1", epsilon=1, delta=1e-9, bounds={"x": (0.0, 100.0)},
                                            random_state=0, progress=False)
        run[name] = result.plan.discretised.reason
    threshold = pm.point_mass_selection(rho=RHO, delta=DELTA, columns=1).threshold
    assert run["small"].split("threshold")[1][:12] == run["large"].split("threshold")[1][:12]
    sel = pm.point_mass_selection(rho=RHO, delta=DELTA, columns=2)
    assert sel.rho == Fraction(2) / (2 * sel.sigma2) and sel.rho <= RHO * pm.POINT_MASS_RHO_SHARE
    assert sel.delta == DELTA * pm.POINT_MASS_DELTA_SHARE and threshold < sel.threshold


def test_refused_at_delta_zero_and_a_pure_run_keeps_no_point_mass():
    with pytest.raises(InputError, match="delta > 0"):
        pm.point_mass_selection(rho=RHO, delta=Fraction(0), columns=1)
    df = pd.DataFrame({"x": [0.0] * 900 + list(np.linspace(1, 99, 100))})
    result = synthdp.generate_synthetic(df, "marginals:1", epsilon=1, delta=0, bounds={"x": (0.0, 100.0)},
                                        random_state=0, progress=False)
    assert "point mass" not in result.plan.discretised.reason
    assert "point-mass-selection" not in str(result.report.zcdp_ledger)


def test_a_key_held_once_is_kept_iff_its_noise_reaches_threshold_minus_one_and_the_scale_is_sigma2(monkeypatch):
    schema = _schema(("x", (0.0, 10.0)))
    sel = pm.point_mass_selection(rho=RHO, delta=DELTA, columns=1)
    df = pd.DataFrame({"x": [3.0]})
    for z, kept in ((sel.threshold - 1, (3.0,)), (sel.threshold - 2, ())):
        calls = _fixed_noise(monkeypatch, z)
        assert _select(df, schema, sel)[0].values == {"x": kept}
        assert calls == [(1, sel.sigma2)]


def test_no_value_is_kept_without_noise(monkeypatch):
    """A value held by far more rows than the threshold is dropped when its noise pulls it under."""
    schema = _schema(("x", (0.0, 10.0)))
    sel = pm.point_mass_selection(rho=RHO, delta=DELTA, columns=1)
    df = pd.DataFrame({"x": [0.0] * (3 * sel.threshold)})
    _fixed_noise(monkeypatch, -3 * sel.threshold)
    assert _select(df, schema, sel)[0].values == {"x": ()}


def test_keys_carry_the_column_name(monkeypatch):
    """Two columns with the same value are two keys: counts below the threshold in each are not pooled."""
    sel = pm.point_mass_selection(rho=RHO, delta=DELTA, columns=2)
    half = sel.threshold - 1
    df = pd.DataFrame({"a": [0.0] * half + [5.0] * half, "b": [0.0] * half + [6.0] * half})
    calls = _fixed_noise(monkeypatch, 0)
    masses, _ = _select(df, _schema(("a", (0.0, 10.0)), ("b", (0.0, 10.0))), sel)
    assert masses.values == {"a": (), "b": ()}
    assert [size for size, _ in calls] == [2, 2]  # one draw per (column, value) key, per column


def test_the_charge_is_in_the_filter_before_any_noise(monkeypatch):
    sel = pm.point_mass_selection(rho=RHO, delta=DELTA, columns=1)
    ledger = ZcdpLedger(RHO)
    spent = []

    def fake(size, sigma2, rng):
        spent.append([(e.mechanism, e.rho) for e in ledger.events])
        return np.zeros(size, dtype=np.int64)

    monkeypatch.setattr(pm, "discrete_gaussian_array", fake)
    pm.select_point_masses(_tallies(pd.DataFrame({"x": [1.0, 2.0]})), _schema(("x", (0.0, 10.0))), selection=sel,
                           rng=PrivateRandom(0), ledger=ledger)
    assert spent == [[("point-mass-selection", sel.rho)]]


def test_keys_are_clipped_and_minus_zero_is_zero(monkeypatch):
    sel = pm.point_mass_selection(rho=RHO, delta=DELTA, columns=1)
    df = pd.DataFrame({"x": [-0.0] * sel.threshold + [50.0] * sel.threshold})
    _fixed_noise(monkeypatch, 0)
    masses, _ = _select(df, _schema(("x", (0.0, 10.0))), sel)
    assert masses.values == {"x": (0.0, 10.0)} and str(masses.values["x"][0]) == "0.0"


def test_privtree_reads_the_rows_outside_the_released_set_only(monkeypatch):
    """A candidate that was not kept stays in the tree; kept values leave it (read through the tree's input)."""
    schema = _schema(("x", (0.0, 100.0)))
    df = pd.DataFrame({"x": [0.0] * 500 + [7.0] * 400 + [50.0] * 3})
    sel = pm.point_mass_selection(rho=RHO, delta=DELTA, columns=1)
    masses = pm.PointMasses({"x": (0.0,)}, sel)
    seen = {}

    def cuts(values, bounds, *, counts, **kw):
        seen.update(zip(values.tolist(), counts.tolist()))
        return ()

    monkeypatch.setattr(privtree, "privtree_cuts", cuts)
    privtree.discretise(_tallies(df), schema, epsilon=Fraction(1, 10), rng=PrivateRandom(0), ledger=ZcdpLedger(RHO),
                        point_masses=masses)
    assert seen == {7.0: 400, 50.0: 3}


@pytest.mark.parametrize("integer", [False, True])
def test_a_kept_value_is_a_cell_of_its_own_and_comes_back_as_itself(integer):
    bounds = (0, 100) if integer else (0.0, 100.0)
    cuts = pm.merged_cuts((25.0, 50.0), (0.0, 30.0, 100.0), bounds, step=1.0 if integer else None)
    attr = Attribute("x", "numeric", bounds=bounds, cuts=cuts, dtype="int64" if integer else "float64")
    encoder = Encoder(Schema((attr,)))
    step = 1.0 if integer else 1e-9
    values = [0.0, step, 30.0 - step, 30.0, 30.0 + step, 100.0 - step, 100.0]
    codes = encoder.encode(pd.DataFrame({"x": values}))[:, 0]
    assert len(set(codes.tolist())) == len(values)  # 0, 30 and 100 each alone, their neighbours elsewhere
    point = codes[[0, 3, 6]]
    drawn = encoder.decode(np.repeat(point, 200)[:, None], numeric="uniform", rng=np.random.default_rng(0))["x"]
    assert sorted(set(drawn.astype(float).tolist())) == [0.0, 30.0, 100.0]
    assert 25.0 in cuts and 50.0 in cuts  # the tree's cells stay, split around the kept value


def test_neighbouring_tables_differ_only_on_the_added_rows_key(monkeypatch):
    """D and D plus one row at a value already present: same stream, so every other key's decision is the same."""
    sel = pm.point_mass_selection(rho=RHO, delta=DELTA, columns=1)
    rng = np.random.default_rng(1)
    df = pd.DataFrame({"x": np.round(rng.choice([0.0, 1.0, 2.0, 3.0], 4 * sel.threshold), 0)})
    added = pd.concat([df, pd.DataFrame({"x": [2.0]})], ignore_index=True)
    schema = _schema(("x", (0.0, 10.0)))
    for seed in range(5):
        a = set(_select(df, schema, sel, seed)[0].values["x"])
        b = set(_select(added, schema, sel, seed)[0].values["x"])
        assert a ^ b <= {2.0}


def test_a_run_keeps_round_amounts_and_zeros_and_states_the_selection():
    rng = np.random.default_rng(0)
    n = 6000
    amount = np.where(rng.random(n) < 0.8, 0, rng.choice([5000, 10000], n)).astype(np.int64)
    df = pd.DataFrame({"amount": amount, "age": rng.integers(18, 80, n)})
    result = synthdp.generate_synthetic(df, "marginals:2", epsilon=1, delta=1e-9,
                                        bounds={"amount": (0, 100_000), "age": (18, 100)}, random_state=0,
                                        progress=False)
    syn = result.data["amount"].astype(float)
    for value in (0, 5000, 10000):
        assert abs((syn == value).mean() - (df["amount"] == value).mean()) < 0.03
    assert "point masses selected first (docs/privacy.md §11.2)" in result.plan.discretised.reason
    assert "point-mass-selection" in str(result.report.zcdp_ledger)
    reserved = 1e-9 * float(pm.POINT_MASS_DELTA_SHARE)  # reserved before the filter's rho is derived
    assert f"less {reserved:.3g} for partition selection" in result.plan.method_plan.rho.reason
    off = synthdp.generate_synthetic(df, "marginals:2", epsilon=1, delta=1e-9, point_masses=False,
                                     bounds={"amount": (0, 100_000), "age": (18, 100)}, random_state=0,
                                     progress=False)
    assert (off.data["amount"].astype(float) == 5000).mean() < 0.05
    assert "point mass" not in off.plan.discretised.reason


def test_under_a_cell_cap_the_largest_noisy_counts_are_kept_ties_by_the_smaller_value(monkeypatch):
    """40 values pass the threshold under ``max_cells=16``: the floor(15/2) = 7 of largest noisy count are kept."""
    sel = pm.point_mass_selection(rho=RHO, delta=DELTA, columns=1)
    schema = _schema(("x", (0.0, 100.0)))
    rows = np.array([sel.threshold + (7 * v) % 40 for v in range(40)])  # distinct counts, in a scrambled order
    df = pd.DataFrame({"x": np.repeat(np.arange(40.0), rows)})
    noise = 2 * (rows.max() - rows)  # the noisy counts rank the values the other way round from the true ones
    monkeypatch.setattr(pm, "discrete_gaussian_array", lambda size, sigma2, rng: noise[:size])
    smallest = np.sort(np.argsort(rows)[:7]).astype(float)  # the largest noisy counts: the smallest true ones
    assert _select(df, schema, sel, max_cells=16)[0].values == {"x": tuple(smallest.tolist())}
    assert len(_select(df, schema, sel)[0].values["x"]) == 40  # no cap: every value that passes
    _fixed_noise(monkeypatch, 0)
    tied = pd.DataFrame({"x": np.repeat(np.arange(40.0), sel.threshold)})
    assert _select(tied, schema, sel, max_cells=16)[0].values == {"x": tuple(float(v) for v in range(7))}
    assert pm.most_point_masses(16) == 7 and pm.most_point_masses(2) == 0 and pm.most_point_masses(None) is None


@pytest.mark.parametrize("spacing", [1, 5])
def test_forty_candidate_values_under_a_cap_of_16_cells_make_at_most_16_cells(spacing):
    """Integers one apart (41 cells without the rule) and spread apart (80): the cap holds with the trees' own
    noise, on several seeds; the missing cell is not one of the 16 (the plan counts it apart)."""
    sel = pm.point_mass_selection(rho=RHO, delta=DELTA, columns=1)
    schema = Schema((Attribute("x", "numeric", bounds=(0, 200), origin="learn", bins=1, dtype="int64"),))
    values = np.arange(40.0) * spacing
    tallies = _tallies(pd.DataFrame({"x": np.concatenate([np.repeat(values, 3 * sel.threshold),
                                                          np.linspace(0, 200, 5000).round()])}))
    for seed in range(5):
        ledger = ZcdpLedger(Fraction(1))
        masses = pm.select_point_masses(tallies, schema, selection=sel, rng=PrivateRandom(seed), ledger=ledger,
                                        max_cells=16)
        cut = privtree.discretise(tallies, schema, epsilon=Fraction(1, 2), rng=PrivateRandom(seed), ledger=ledger,
                                  max_cells=16, point_masses=masses)
        assert len(masses.values["x"]) == 7
        assert cut.columns[0].cells == cut.schema["x"].bins <= 16


def test_the_trees_refuse_more_point_masses_than_the_cap_leaves_room_for_before_any_charge():
    sel = pm.point_mass_selection(rho=RHO, delta=DELTA, columns=1)
    schema = _schema(("x", (0.0, 100.0)))
    ledger = ZcdpLedger(RHO)
    crowded = pm.PointMasses({"x": tuple(float(v) for v in range(8))}, sel)
    with pytest.raises(InputError, match=r"columns \['x'\] keep more than 7 point masses.*max_cells=16"):
        privtree.discretise(_tallies(pd.DataFrame({"x": [1.0]})), schema, epsilon=Fraction(1, 10),
                            rng=PrivateRandom(0), ledger=ledger, max_cells=16, point_masses=crowded)
    assert not ledger.events


def test_a_run_under_a_cap_of_16_cells_keeps_7_point_masses_of_40_and_16_cells_at_most(monkeypatch):
    """Through the run: the cap the plan chose reaches the selection (40 integers one apart gave 41 cells)."""
    monkeypatch.setattr(plan, "CELL_CAPS", (16,))
    df = pd.DataFrame({"x": np.repeat(np.arange(40), 800).astype(np.int64)})
    result = synthdp.generate_synthetic(df, "marginals:1", epsilon=1, delta=1e-9, bounds={"x": (0, 100)},
                                        random_state=0, progress=False)
    assert result.schema["x"].bins <= 16
    assert "(at most 7 per column under the cap of 16 cells, the largest noisy counts first)" in \
        result.plan.discretised.reason
