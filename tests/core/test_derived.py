"""Derived columns (docs/privacy.md §10.10): declared public functions, never modelled, computed after sampling."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from synthdp import Synthesizer, generate_synthetic
from synthdp.cli import main
from synthdp.core.derived import Derived, parse_derived
from synthdp.core.errors import InputError, SchemaError
from synthdp.core.schema import Schema

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

DERIVED = {"year": "joined.year", "month": "joined.month", "weekday": "joined.weekday", "hour": "joined.hour",
           "day": "joined.day", "net": "gross - tax", "sum": "gross + tax"}


def table(rows: int = 1200, seed: int = 0) -> pd.DataFrame:
    """A timestamp, two amounts and a category; the derived columns hold what the real rows say."""
    rng = np.random.default_rng(seed)
    joined = pd.to_datetime("2015-01-01") + pd.to_timedelta(rng.integers(0, 8 * 365 * 24, rows), unit="h")
    df = pd.DataFrame({"joined": joined.strftime("%Y-%m-%d %H:%M:%S"), "gross": rng.integers(0, 1000, rows),
                       "tax": rng.integers(0, 300, rows), "kind": rng.choice(["a", "b", "c"], rows)})
    df["year"] = joined.year
    df["net"] = df["gross"] - df["tax"]
    return df


OPTIONS = dict(epsilon=2.0, delta=1e-6,
               bounds={"joined": ("2015-01-01 00:00:00", "2023-01-01 00:00:00"), "gross": (0, 999), "tax": (0, 299)},
               datetimes={"joined": "%Y-%m-%d %H:%M:%S"}, categories={"kind": ["a", "b", "c"]},
               discretise="equal-width", random_state=0, progress=False)


def agree(df: pd.DataFrame) -> None:
    """Every row agrees with itself: each derived column is its function of the row's sources."""
    joined = df["joined"]
    for part in ("year", "month", "day", "hour"):
        assert (df[part] == getattr(joined.dt, part)).all(), part
    assert (df["weekday"] == joined.dt.day_of_week).all()
    assert (df["net"] == df["gross"] - df["tax"]).all() and (df["sum"] == df["gross"] + df["tax"]).all()


def test_every_synthetic_row_agrees_with_its_derived_columns():
    result = generate_synthetic(table(), "marginals:2", derived=DERIVED, **OPTIONS)
    agree(result.data)
    columns = list(result.data.columns)
    assert columns == ["joined", "year", "month", "weekday", "hour", "day", "gross", "tax", "net", "sum", "kind"]
    agree(result.model.sample(5_000, random_state=3))  # and so does every row sampled from the model later
    assert "year" not in result.schema.names and "net" not in result.schema.names  # never an attribute


def test_the_derived_column_never_reaches_the_model():
    """Its values in the real rows, or its absence, change nothing of the release (the same seed): neighbours in the
    derived column give the same table and report."""
    base = table()
    changed = base.copy()
    changed.loc[5, "year"], changed.loc[5, "net"] = 1850, -10**6  # one row contradicts itself
    without = base.drop(columns=["year", "net"])
    runs = [generate_synthetic(df, "marginals:2", derived={"year": "joined.year", "net": "gross - tax"}, **OPTIONS)
            for df in (base, changed, without)]
    for other in runs[1:]:
        assert other.data.equals(runs[0].data)
        assert other.report.to_dict() == runs[0].report.to_dict()


def test_the_schema_file_keeps_the_declaration(tmp_path):
    schema = Schema.from_dataframe(table(), derived=DERIVED, **{k: OPTIONS[k] for k in (
        "bounds", "datetimes", "categories", "discretise")})
    assert [d.name for d in schema.derived] == list(DERIVED)
    schema.save(tmp_path / "s.json")
    again = Schema.load(tmp_path / "s.json")
    assert again == schema and json.loads((tmp_path / "s.json").read_text())["derived"] == DERIVED
    plain = Schema(schema.attributes)
    assert "derived" not in plain.to_dict()  # a schema without derived columns is written as before


@pytest.mark.parametrize("declared, message", [
    ({"y": "joined.century"}, "cannot read 'joined.century'"),
    ({"y": "gross*tax"}, "cannot read"),
    ({"y": "nowhere.year"}, "reads 'nowhere', which is not an attribute"),
    ({"y": "gross.year"}, "year needs a datetime column, and 'gross' is not one"),
    ({"y": "gross - kind"}, "needs numeric columns, and 'kind' is categorical"),
    ({"y": "joined + gross"}, "'joined' is a datetime"),
    ({"kind": "joined.year"}, "is also an attribute of the schema"),
])
def test_a_declaration_outside_the_vocabulary_is_refused_by_name(declared, message):
    schema = Schema.from_dataframe(table().drop(columns=["year", "net"]),
                                   **{k: OPTIONS[k] for k in ("bounds", "datetimes", "categories", "discretise")})
    with pytest.raises(SchemaError, match=message):
        Schema(schema.attributes, derived=parse_derived(declared))


def test_refusals_come_before_anything_is_charged():
    plain = table().drop(columns=["net"])
    with pytest.raises(InputError, match="numeric='label' writes cell labels") as info:
        generate_synthetic(plain, "marginals:1", derived={"year": "joined.year"}, **{**OPTIONS, "numeric": "label"})
    assert "charged" not in str(info.value)
    with pytest.raises(SchemaError, match="reads 'nowhere'") as info:
        generate_synthetic(plain.drop(columns=["year"]), "marginals:1", derived={"y": "nowhere.year"}, **OPTIONS)
    assert "charged" not in str(info.value)
    with pytest.raises(InputError, match="derived must be a mapping"):
        Synthesizer(epsilon=1, derived=["year"]).fit(plain)  # checked by fit, before reading


def test_parse_reads_names_with_dots_and_spaces():
    assert Derived.parse("y", "start.date.year") == Derived("y", "start.date.year", ("start.date",), "year")
    assert Derived.parse("d", "price in - price out").sources == ("price in", "price out")


def test_the_command_line_declares_derived_columns(tmp_path, capsys):
    table().to_csv(tmp_path / "in.csv", index=False)
    code = main(["generate", str(tmp_path / "in.csv"), "-o", str(tmp_path / "out.csv"), "--epsilon", "2",
                 "--delta", "1e-6", "--queries", "marginals:1",
                 "--bounds", "joined=2015-01-01 00:00:00..2023-01-01 00:00:00", "gross=0:999", "tax=0:299", "--datetime", "joined=%Y-%m-%d %H:%M:%S", "--discretise", "equal-width",
                 "--categorical", "kind", "--derived", "year=joined.year", "net=gross - tax", "--seed", "0", "-q"])
    assert code == 0, capsys.readouterr().err
    out = pd.read_csv(tmp_path / "out.csv", parse_dates=["joined"])
    assert (out["year"] == out["joined"].dt.year).all() and (out["net"] == out["gross"] - out["tax"]).all()


def test_a_schema_file_and_derived_flags_together(tmp_path, capsys):
    """--derived adds to a --schema file's declarations, and the CSV's derived columns are then not 'unlisted'."""
    df = table()
    schema = Schema.from_dataframe(df.drop(columns=["year", "net"]),
                                   **{k: OPTIONS[k] for k in ("bounds", "datetimes", "categories", "discretise")})
    schema.save(tmp_path / "s.json")
    df.to_csv(tmp_path / "in.csv", index=False)
    common = [str(tmp_path / "in.csv"), "--epsilon", "2", "--delta", "1e-6", "--queries", "marginals:1",
              "--schema", str(tmp_path / "s.json"), "--seed", "0", "-q"]
    assert main(["generate", *common, "-o", str(tmp_path / "no.csv")]) == 2
    assert "the schema has no column 'year'" in capsys.readouterr().err
    code = main(["generate", *common, "-o", str(tmp_path / "out.csv"), "--derived", "year=joined.year",
                 "net=gross - tax"])
    assert code == 0, capsys.readouterr().err
    out = pd.read_csv(tmp_path / "out.csv", parse_dates=["joined"])
    assert (out["year"] == out["joined"].dt.year).all() and (out["net"] == out["gross"] - out["tax"]).all()
