"""The numeric benchmark's evaluator and tables (synthdp bench numeric)."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from synthdp.bench import numeric


def _table(n=2000, seed=0):
    rng = np.random.default_rng(seed)
    data = pd.DataFrame({"x": rng.exponential(10.0, n), "y": rng.integers(0, 50, n), "c": rng.choice(["a", "b"], n)})
    return numeric.Table("t", data, {"x": (0.0, 1000.0), "y": (0, 100)}, {"c": ["a", "b"]}, {})


def test_identical_tables_score_zero_and_a_shift_is_seen():
    table = _table()
    same = numeric.evaluate(table, table.data)
    assert same["ks"] == 0 and same["tvd2"] == 0 and same["wasserstein"] == 0 and same["correlation"] == 0
    shifted = table.data.assign(x=table.data["x"] + 5.0)
    worse = numeric.evaluate(table, shifted)
    assert worse["ks"] > 0.1 and worse["tvd2"] > 0.05
    assert worse["wasserstein"] == pytest.approx(5.0 / 1000 / 2, rel=1e-6)  # x moved by 5 of 1000, y not


def test_tvd_uses_quantile_bins_of_the_real_data_and_missing_as_a_value():
    table = _table()
    syn = table.data.copy()
    syn.loc[: len(syn) // 2, "c"] = np.nan
    assert numeric.evaluate(table, syn)["tvd2"] > 0.2


def test_the_tvd_by_pair_kind_sees_which_pairs_a_shuffle_broke():
    """x shuffled among the rows: its pairs change, the text pair does not; a table without text pairs reads NaN
    for them; the table prints the means by kind."""
    table = _table()
    rng = np.random.default_rng(1)
    data = table.data.assign(d=np.where(table.data["c"] == "a", "u", rng.choice(["u", "v"], len(table.data))))
    table = numeric.Table("t", data, table.bounds, {"c": ["a", "b"], "d": ["u", "v"]}, {})
    same = numeric.evaluate(table, data)["tvd2_by_kind"]
    assert same == {"text-text": 0.0, "numeric-text": 0.0, "numeric-numeric": 0.0}
    shuffled = data.assign(x=rng.permutation(data["x"].to_numpy()))
    got = numeric.evaluate(table, shuffled)
    assert got["tvd2_by_kind"]["text-text"] == 0.0
    assert got["tvd2_by_kind"]["numeric-numeric"] > 0.05 and got["tvd2_by_kind"]["numeric-text"] > 0.01
    pairs = {"text-text": 1, "numeric-text": 4, "numeric-numeric": 1}
    assert got["tvd2"] == pytest.approx(sum(got["tvd2_by_kind"][k] * m for k, m in pairs.items()) / 6)
    one_text = numeric.Table("t", data[["x", "y", "c"]], table.bounds, {"c": ["a", "b"]}, {})
    kinds = numeric.evaluate(one_text, data[["x", "y", "c"]])["tvd2_by_kind"]
    assert np.isnan(kinds["text-text"]) and kinds["numeric-text"] == 0.0 == kinds["numeric-numeric"]
    rows = [numeric.Row("t", "mine", 0, 1.0, **got)]
    assert "| t | mine | 0.000 | " in numeric.format_table(rows).split("2-way TVD, text-text pairs")[1]


def test_the_skewed_table_is_seeded_and_inside_its_bounds():
    a, b = numeric.skewed_table(3000), numeric.skewed_table(3000)
    pd.testing.assert_frame_equal(a, b)
    for col, (lo, hi) in numeric.SKEWED_BOUNDS.items():
        assert a[col].between(lo, hi).all()
    assert (a["claim"] == 0).mean() > 0.7 and a["income"].skew() > 2


def test_peers_are_read_from_their_folder(tmp_path):
    table = _table()
    folder = tmp_path / "peer"
    folder.mkdir()
    table.data.to_csv(folder / "t-0.csv", index=False)
    (folder / "t-0.json").write_text(json.dumps({"seconds": 3.0}))
    rows = numeric.peer_rows(table, tmp_path, [0])
    assert [(r.config, r.seconds, r.ks) for r in rows] == [("peer", 3.0, 0.0)]
    assert "| t | peer | 0.000 | 0.000 |" in numeric.format_table(rows)


def test_quick_run_writes_under_out_and_bad_options_are_one_line_errors(tmp_path, capsys):
    from synthdp.cli import main

    assert main(["bench", "numeric", "--quick", "--out", str(tmp_path / "n")]) == 0
    rows = json.loads((tmp_path / "n" / "numeric.json").read_text())
    assert [r["table"] for r in rows] == ["skewed"] and rows[0]["ks"] < 0.1
    assert main(["bench", "numeric", "--suite", "iris", "--out", str(tmp_path / "x")]) == 2
    assert "--suite: unknown ['iris']" in capsys.readouterr().err and not (tmp_path / "x").exists()


def test_the_dependent_table_moves_together_inside_its_bounds():
    a, b = numeric.dependent_table(3000), numeric.dependent_table(3000)
    pd.testing.assert_frame_equal(a, b)
    for col, (lo, hi) in numeric.DEPENDENT_BOUNDS.items():
        assert a[col].between(lo, hi).all()
    spearman = a[list(numeric.DEPENDENT_BOUNDS)].corr(method="spearman").to_numpy()
    assert spearman.min() > 0.85 and spearman[3, 4] > 0.97  # weight and price almost one


def test_the_amounts_table_is_zero_inflated_with_round_values():
    a = numeric.amounts_table(5000)
    pd.testing.assert_frame_equal(a, numeric.amounts_table(5000))
    shares = a["amount"].value_counts(normalize=True)
    assert 0.8 < shares[0] < 0.9 and min(shares[1000], shares[5000], shares[10000]) > 0.01
    assert a["amount"].dtype == np.int64 and a["amount"].between(*numeric.AMOUNTS_BOUNDS["amount"]).all()


def test_point_mass_shares_and_the_largest_correlation_errors_are_reported():
    table = numeric.Table("amounts", numeric.amounts_table(4000), dict(numeric.AMOUNTS_BOUNDS),
                          {"purpose": [], "status": []}, {})
    shuffled = table.data["income"].sample(frac=1, random_state=0).to_numpy()
    spread = table.data.assign(amount=table.data["amount"] + 1, income=shuffled)
    scores = numeric.evaluate(table, spread)
    real_zero = float((table.data["amount"] == 0).mean())
    assert scores["point_masses"]["amount=0"] == [round(real_zero, 4), 0.0]
    assert scores["pearson_max"] >= scores["correlation"] and scores["spearman_max"] > 0
    assert scores["ks_max"] >= scores["ks"]


def test_the_bootstrap_floor_resamples_the_real_rows():
    table = _table()
    boot, _ = numeric.bootstrap_run(table, epsilon=1.0, delta=1e-9, seed=0)
    assert len(boot) == len(table.data) and not boot.equals(table.data)
    assert set(boot["x"]) <= set(table.data["x"])
    assert numeric.evaluate(table, boot)["ks"] < 0.05


@pytest.mark.parametrize("make, bounds, columns", [(numeric.flights_table, numeric.FLIGHTS_BOUNDS, 20),
                                                   (numeric.mixed50_table, numeric.MIXED50_BOUNDS, 50)])
def test_the_generated_wide_tables_are_seeded_typed_and_inside_their_public_domain(make, bounds, columns):
    """The flights and mixed50 tables: the same rows for the same seed, the announced columns, a datetime column
    inside its date bounds, numbers inside theirs, text columns of 2 to 100 values, and a point mass at zero."""
    a, b = make(4000), make(4000)
    pd.testing.assert_frame_equal(a, b)
    assert a.shape == (4000, columns) and not a.isna().any().any()
    dates = [c for c in a.columns if pd.api.types.is_datetime64_any_dtype(a[c])]
    assert len(dates) == 1 and a[dates[0]].between(*map(pd.Timestamp, bounds[dates[0]])).all()
    for col, (lo, hi) in bounds.items():
        if col not in dates:
            assert a[col].between(lo, hi).all(), col
    text = [c for c in a.columns if c not in bounds]
    assert all(2 <= a[c].nunique() <= 100 for c in text)
    masses = numeric.POINT_MASSES[make.__name__.removesuffix("_table")]
    assert all((a[col] == 0).mean() > 0.15 for col in masses)


def test_dates_are_scored_in_days_within_their_public_range():
    data = pd.DataFrame({"when": pd.to_datetime(["2020-01-01", "2020-01-11"] * 50), "x": np.arange(100) % 7,
                         "c": ["a", "b"] * 50})
    table = numeric.Table("d", data, {"when": ("2020-01-01", "2020-12-31"), "x": (0, 10)}, {"c": ["a", "b"]}, {})
    shifted = data.assign(when=data["when"] + pd.Timedelta(days=5))
    assert numeric.evaluate(table, shifted)["wasserstein"] == pytest.approx(5 / 365 / 2)  # x did not move
    assert numeric.evaluate(table, data.assign(when=data["when"].dt.strftime("%Y-%m-%d")))["ks"] == 0


@pytest.mark.parametrize("name", ["map", "hump", "sum"])
def test_the_tables_of_pairs_that_are_not_a_copula_are_seeded_and_within_their_bounds(name):
    make = {"map": numeric.map_table, "hump": numeric.hump_table, "sum": numeric.sum_table}[name]
    a = make(4000)
    pd.testing.assert_frame_equal(a, make(4000))
    bounds = {"map": numeric.MAP_BOUNDS, "hump": numeric.HUMP_BOUNDS, "sum": numeric.SUM_BOUNDS}[name]
    for col, (lo, hi) in bounds.items():
        assert a[col].between(lo, hi).all(), col


def test_the_map_the_hump_and_the_sum_have_the_shapes_they_stand_for():
    """The map: districts of very different sizes, a weak correlation; the hump: hours rise, then fall with age (a
    Pearson correlation near 0); the sum: the arrival delay is the departure delay give or take a few minutes, both
    often exactly 0."""
    city = numeric.map_table(20_000)
    shares = city["district"].value_counts(normalize=True)
    assert shares.max() > 0.25 and shares.min() < 0.03 and abs(city["lat"].corr(city["lon"], method="spearman")) < 0.4
    work = numeric.hump_table(20_000)
    by_age = work.groupby(pd.cut(work["age"], [16, 30, 45, 60, 90]), observed=True)["hours"].mean().to_numpy()
    assert by_age[0] < by_age[1] and by_age[2] > by_age[3] and abs(work["age"].corr(work["hours"])) < 0.1
    flights = numeric.sum_table(20_000)
    gap = flights["arr_delay"] - flights["dep_delay"]
    assert (gap.abs() <= 20).mean() > 0.95 and ((flights["dep_delay"] == 0) & (flights["arr_delay"] == 0)).mean() > 0.1


def test_the_key_pairs_2_way_tvd_is_reported_on_the_real_quantile_grid():
    table = numeric.load_table("hump", rows=5000)
    same = numeric.evaluate(table, table.data)
    assert same["pair_tvd"] == {"age~hours": 0.0}
    shuffled = table.data.assign(hours=np.random.default_rng(0).permutation(table.data["hours"].to_numpy()))
    got = numeric.evaluate(table, shuffled)
    assert got["pair_tvd"]["age~hours"] > 0.3
    rows = [numeric.Row("hump", "mine", 0, 1.0, **got)]
    assert "| hump | mine | 0 | age~hours " in numeric.format_table(rows)
