"""The quality report: scores against brute-force and hand-computed values, warnings, errors, the CLI page."""

from __future__ import annotations

import itertools
import json
import sys

import numpy as np
import pandas as pd
import pytest
from scipy.stats import ks_2samp

from synthdp.cli import main
from synthdp.core.errors import InputError
from synthdp.evaluation.worst_case import worst_case_error
import synthdp
from synthdp.quality import OWNER_ONLY, quality_report


def _mixed(n: int, seed: int) -> pd.DataFrame:
    """A small table of every kind: numbers with a point mass at zero, correlated numbers, categories, booleans."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n)
    return pd.DataFrame({"price": np.where(rng.random(n) < 0.8, 0.0, rng.exponential(100, n)),
                         "x": x, "y": x + rng.normal(scale=0.5, size=n), "cat": rng.choice(list("abcd"), n),
                         "flag": rng.random(n) < 0.3})


def _brute_tv(real: pd.Series, synthetic: pd.Series) -> float:
    p, q = real.value_counts(normalize=True), synthetic.value_counts(normalize=True)
    return 1 - 0.5 * sum(abs(p.get(v, 0) - q.get(v, 0)) for v in set(p.index) | set(q.index))


def test_identical_tables_score_100_without_warnings():
    df = _mixed(300, 0)
    report = synthdp.quality_report(df, df.copy())
    assert report.score == pytest.approx(100)
    assert all(v == pytest.approx(100) for v in report.parts().values())
    assert report.warnings == ()
    assert all(m.real == m.synthetic for m in report.point_masses)


def test_shapes_are_brute_force_ks_and_tv():
    real, syn = _mixed(400, 0), _mixed(350, 1)
    report = quality_report(real, syn)
    shapes = {s.column: s for s in report.shapes}
    for col in ("price", "x", "y"):
        assert shapes[col].metric == "KS complement"
        assert shapes[col].score == pytest.approx(1 - ks_2samp(real[col], syn[col]).statistic)
    for col in ("cat", "flag"):
        assert shapes[col].metric == "TV complement"
        assert shapes[col].score == pytest.approx(_brute_tv(real[col], syn[col]))


def test_hand_computed_scores_on_a_tiny_table():
    # KS: F_real - F_syn peaks at 0.5 (t = 2); TV: (|1/2-1/4| + |1/4-3/4| + |1/4-0|) / 2 = 1/2
    real = pd.DataFrame({"n": [1.0, 2, 3, 4], "c": list("aabc")})
    syn = pd.DataFrame({"n": [3.0, 4, 5, 6], "c": list("abbb")})
    report = quality_report(real, syn)
    assert [s.score for s in report.shapes] == pytest.approx([0.5, 0.5])
    # the pair (n, c): n cut at the real deciles (1.3, 1.6, ..., 3.7); the two-way tables' TV by hand
    (trend,) = report.trends
    assert trend.metric == "contingency similarity"
    edges = np.quantile([1, 2, 3, 4], np.linspace(0, 1, 11)[1:-1])
    real_cells = list(zip(np.searchsorted(edges, real["n"], side="right"), real["c"]))
    syn_cells = list(zip(np.searchsorted(edges, syn["n"], side="right"), syn["c"]))
    cells = set(real_cells) | set(syn_cells)
    tv = 0.5 * sum(abs(real_cells.count(c) / 4 - syn_cells.count(c) / 4) for c in cells)
    assert trend.score == pytest.approx(1 - tv)
    assert report.score == pytest.approx(100 * np.mean([0.5, 1 - tv]))


@pytest.mark.parametrize("real_values, syn_values", [
    (np.arange(1.0, 101), np.arange(31.0, 111)),
    (np.arange(0.0, 11), np.array([1.0, 1, 1, 2, 3, 5, 5, 10])),  # deciles 1, ..., 9: a value on an edge goes up
])
def test_numbers_are_cut_at_the_real_deciles_for_the_pair_tables(real_values, syn_values):
    real = pd.DataFrame({"n": real_values, "c": np.resize(["a", "b", "b"], len(real_values))})
    syn = pd.DataFrame({"n": syn_values, "c": np.resize(["a", "a", "a", "b", "b", "a", "b", "b"], len(syn_values))})
    (trend,) = quality_report(real, syn).trends
    bins = [sum(t["n"].to_numpy() >= np.quantile(real["n"], q / 10) for q in range(1, 10)) for t in (real, syn)]
    shares = [pd.crosstab(b, t["c"].to_numpy()).stack() / len(t) for b, t in zip(bins, (real, syn))]
    cells = shares[0].index.union(shares[1].index)
    tv = 0.5 * sum(abs(shares[0].get(c, 0) - shares[1].get(c, 0)) for c in cells)
    assert trend.score == pytest.approx(1 - tv)


def test_correlation_similarity_and_missing_shares_by_hand():
    real = pd.DataFrame({"a": [1.0, 2, 3, 4, np.nan], "b": [2.0, 4, 5, 9, 1]})
    syn = pd.DataFrame({"a": [4.0, 3, 2, 1, 5], "b": [1.0, 2, 3, 5, np.nan]})
    report = quality_report(real, syn)
    (trend,) = report.trends
    r_real = np.corrcoef([1, 2, 3, 4], [2, 4, 5, 9])[0, 1]
    r_syn = np.corrcoef([4, 3, 2, 1], [1, 2, 3, 5])[0, 1]
    assert (trend.real, trend.synthetic) == pytest.approx((r_real, r_syn))
    assert trend.score == pytest.approx(1 - abs(r_real - r_syn) / 2)
    shapes = {s.column: s for s in report.shapes}
    assert (shapes["a"].real_missing, shapes["a"].synthetic_missing) == (0.2, 0.0)
    assert shapes["a"].missing_score == pytest.approx(0.8)
    assert report.parts()["missing values"] == pytest.approx(100 * 0.8)


def test_a_shuffled_column_lowers_the_pair_score_and_not_the_shape_score():
    real = _mixed(1000, 0)
    syn = real.copy()
    syn["y"] = syn["y"].sample(frac=1, random_state=0).to_numpy()
    report = quality_report(real, syn)
    assert all(s.score == pytest.approx(1) for s in report.shapes)
    pairs = {t.columns: t.score for t in report.trends}
    assert pairs[("x", "y")] < 0.7  # r of about 0.9 became about 0
    assert all(score == pytest.approx(1) for cols, score in pairs.items() if "y" not in cols)
    assert report.trend_score < 1 and report.score < 100
    assert report.worst_pairs[0].columns == ("x", "y")


def test_an_emptied_or_constant_column_and_a_lost_point_mass_are_warned_about():
    real = _mixed(500, 0)
    syn = _mixed(500, 1)
    syn["cat"] = None
    syn["flag"] = True
    syn["price"] = np.random.default_rng(2).exponential(100, 500)
    warnings = quality_report(real, syn).warnings
    assert any(w.startswith("cat: came back empty") for w in warnings), warnings
    assert any(w.startswith("flag: came back constant ('True'") for w in warnings), warnings
    share = f"{100 * (real['price'] == 0).mean():.0f}%"
    assert f"price: 0% zeros in synthetic vs {share} in real" in warnings
    assert not any(w.startswith(("x:", "y:")) for w in warnings)


def test_point_masses_are_the_most_frequent_exact_values():
    real = pd.DataFrame({"v": [0.0] * 6 + [1.5, 2.5, 2.5, 3.0]})
    syn = pd.DataFrame({"v": [0.0] * 2 + [2.5] * 8})
    masses = {m.value: (m.real, m.synthetic) for m in quality_report(real, syn).point_masses}
    assert masses["0"] == (0.6, 0.2) and masses["2.5"] == (0.2, 0.8) and masses["1.5"] == (0.1, 0.0)


def test_dates_are_compared_as_dates():
    real = pd.DataFrame({"d": pd.to_datetime(["2020-01-01", "2020-06-01", "2021-01-01", None])})
    syn = pd.DataFrame({"d": ["2020-01-01", "2020-06-01", "2022-01-01", "2022-01-01"]})
    report = quality_report(real, syn)
    assert report.shapes[0].kind == "datetime"
    assert report.shapes[0].score == pytest.approx(0.5)  # at 2021-01-01: F_real = 1, F_syn = 1/2
    assert report.distributions[0].labels[0].startswith("2020-01-01")


@pytest.mark.parametrize("change, needle", [
    (lambda real, syn: (real, syn.drop(columns="cat")), "lacks the real table's columns ['cat']"),
    (lambda real, syn: (real, syn.assign(x=["oops"] + [1.0] * (len(syn) - 1))),
     "column 'x' of the synthetic table: the value 'oops' (row 1"),
    (lambda real, syn: (real.iloc[:0], syn), "the real table has no rows"),
])
def test_bad_tables_are_refused_with_the_column(change, needle):
    real, syn = change(_mixed(50, 0), _mixed(50, 1))
    with pytest.raises(InputError, match=None) as err:
        quality_report(real, syn)
    assert needle in str(err.value)


def test_bad_target_and_release_are_refused(tmp_path):
    df = _mixed(50, 0)
    with pytest.raises(InputError, match="target 'nope' is not a column"):
        quality_report(df, df, target="nope")
    bad = tmp_path / "release.json"
    bad.write_text("{not json")
    with pytest.raises(InputError, match="is not JSON"):
        quality_report(df, df, release=bad)


def test_missing_scikit_learn_names_the_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "sklearn", None)
    monkeypatch.setitem(sys.modules, "sklearn.ensemble", None)
    df = _mixed(50, 0)
    with pytest.raises(InputError, match=r"pip install 'synthdp\[quality\]'"):
        quality_report(df, df, target="cat")


def test_ml_efficacy_separates_a_faithful_table_from_a_shuffled_target():
    pytest.importorskip("sklearn")
    rng = np.random.default_rng(0)
    x = rng.normal(size=(600, 2))
    real = pd.DataFrame({"x1": x[:, 0], "x2": x[:, 1], "label": np.where(x[:, 0] + x[:, 1] > 0, "yes", "no")})
    shuffled = real.assign(label=real["label"].sample(frac=1, random_state=1).to_numpy())
    good = quality_report(real, real.copy(), target="label").efficacy
    bad = quality_report(real, shuffled, target="label").efficacy
    assert (good.task, good.metric, good.test_rows) == ("classification", "accuracy", 180)
    assert good.real > 0.9 and good.synthetic > 0.9
    assert bad.synthetic < 0.7 < bad.real


def test_certify_adds_the_certified_worst_case(demo):
    df, schema = demo
    syn = df.sample(frac=1, random_state=0).reset_index(drop=True)
    syn["has_car"] = ~syn["has_car"]
    report = quality_report(df, syn, schema, certify="conjunctions", time_limit=30)
    direct = worst_case_error(df, syn, "conjunctions", schema=schema.with_equal_width(), time_limit=30)
    assert report.worst_case.certified and report.worst_case.error == pytest.approx(direct.error)
    assert report.worst_case.text == direct.text
    assert direct.text in report.to_dict()["worst_case"]["query"]


def test_the_page_is_self_contained_and_marked_for_the_owner(tmp_path):
    real, syn = _mixed(300, 0), _mixed(300, 1)
    path = tmp_path / "q.html"
    quality_report(real, syn).to_html(path)
    page = path.read_text(encoding="utf-8")
    assert page.index(OWNER_ONLY) < page.index('id="score"')
    lowered = page.lower()
    for external in ("<link", "<script", "src=", "href=", "http://", "https://", "url(", "@import"):
        assert external not in lowered, external
    for column in real.columns:
        assert f'data-column="{column}"><figcaption>' in page
    assert page.count("<svg") == len(real.columns) + 1 + 2 * 3 + 2  # columns, pair matrix, worst pairs, correlations


def test_cli_writes_the_page_and_json(tmp_path, demo):
    df, _ = demo
    real, syn = tmp_path / "real.csv", tmp_path / "syn.csv"
    df.to_csv(real, index=False)
    df.sample(frac=1, random_state=0).to_csv(syn, index=False)
    release = tmp_path / "release.json"
    release.write_text(json.dumps({"epsilon_spent": 1.0, "epsilon_budget": 1.0, "method": "measure",
                                   "plan": {"method": {"value": "measure", "reason": "a marginal class"}}}))
    html, out = tmp_path / "q.html", tmp_path / "q.json"
    assert main(["evaluate", str(real), str(syn), "--html", str(html), "--json", str(out),
                 "--report", str(release)]) == 0
    page = html.read_text(encoding="utf-8")
    assert "Release: epsilon 1.0 of 1.0 spent (pure DP); method measure" in page and "a marginal class" in page
    assert json.loads(out.read_text())["score"] == pytest.approx(100)


@pytest.mark.parametrize("flags, needle", [
    (["--target", "region"], "--target belong to the quality page: add --html FILE"),
    (["--html", "q.html", "--plot", "p.png"], "drop --plot"),
])
def test_cli_refuses_options_that_do_not_go_together(tmp_path, demo, capsys, flags, needle):
    df, _ = demo
    real = tmp_path / "real.csv"
    df.to_csv(real, index=False)
    flags = [str(tmp_path / f) if f.endswith((".html", ".png")) else f for f in flags]
    assert main(["evaluate", str(real), str(real), *flags]) != 0
    assert needle in capsys.readouterr().err
    assert not (tmp_path / "q.html").exists()


def test_columns_are_read_once_into_all_pairs():
    df = _mixed(100, 0)
    report = quality_report(df, df)
    assert [t.columns for t in report.trends] == list(itertools.combinations(df.columns, 2))


def test_cli_certifies_with_a_schema_file(tmp_path, demo):
    df, schema = demo
    syn = df.copy()
    syn["has_car"] = ~syn["has_car"]
    real_path, syn_path, schema_path, html = (tmp_path / n for n in ("real.csv", "syn.csv", "s.json", "q.html"))
    df.to_csv(real_path, index=False)
    syn.to_csv(syn_path, index=False)
    schema.save(schema_path)
    truth = worst_case_error(df, syn, "conjunctions", schema=schema.with_equal_width(), time_limit=30)
    assert main(["evaluate", str(real_path), str(syn_path), "--schema", str(schema_path), "--html", str(html),
                 "--certify", "conjunctions", "--time-limit", "30"]) == 0
    page = html.read_text(encoding="utf-8")
    assert f"{truth.error:.4f} (proven optimal)" in page and truth.text in page
