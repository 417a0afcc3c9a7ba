"""Tallies (docs/privacy.md §10.7): what the private domain steps read, taken whole or in parts: the same steps."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest

from synthdp.core.errors import InputError, SchemaError
from synthdp.core.schema import Attribute, Schema
from synthdp.core.tallies import NumberTally, Tallies
from synthdp.mechanisms.bounds import noisy_range
from synthdp.mechanisms.privtree import privtree_cuts, privtree_parameters
from synthdp.mechanisms.randomness import PrivateRandom


def table(n: int = 2000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "city": rng.choice(np.array(["Oslo", "Rome", "Lima", "?", None], dtype=object), n),
        "income": np.round(rng.lognormal(8, 1, n), -2),  # many repeated values
        "age": rng.integers(0, 90, n),
    })


SCHEMA = Schema.from_dataframe(table(), learn_bounds={"income": "float64"}, bounds={"age": (0, 99)},
                               discretise="privtree", missing_values=("?",))


def test_the_schema_leaves_every_kind_of_domain_to_learn():
    assert SCHEMA.to_learn == ("city",) and SCHEMA.to_bound == ("income",)
    assert set(SCHEMA.to_discretise) == {"income", "age"}


@pytest.mark.parametrize("cut", [1, 700, 1999])
def test_tallies_of_parts_add_up_to_the_tallies_of_the_whole(cut):
    df = table()
    whole = Tallies.of_frame(df, SCHEMA)
    parts = Tallies.merge(Tallies.of_frame(df.iloc[:cut], SCHEMA), Tallies.empty(SCHEMA),
                          Tallies.of_frame(df.iloc[cut:], SCHEMA))
    assert parts.rows == whole.rows == len(df)
    assert parts.labels == whole.labels == {"city": df["city"][df["city"].isin(["Oslo", "Rome", "Lima"])]
                                            .value_counts().to_dict()}
    for column in ("income", "age"):
        assert np.array_equal(parts.numbers[column].values, whole.numbers[column].values)
        assert np.array_equal(parts.numbers[column].counts, whole.numbers[column].counts)
        assert whole.numbers[column].rows == len(df)
    assert len(whole.numbers["income"].values) < len(df) / 4  # distinct values only


@pytest.mark.parametrize("step,bounds", [(1.0, (0, 99)), (None, (0.0, 64.0))])
def test_privtree_on_a_tally_releases_what_it_releases_on_the_rows(step, bounds):
    """Same node counts, same noise stream: the same cuts, at every seed (counts off by one change some)."""
    rng = np.random.default_rng(1)
    values = np.minimum(rng.geometric(0.08, 3000), 63).astype(np.float64)
    tally = NumberTally.of(values)
    assert tally.rows == 3000 and len(tally.values) < 64
    params = privtree_parameters(Fraction(1, 2))
    for seed in range(20):
        rows = privtree_cuts(values, bounds, step=step, params=params, rng=PrivateRandom(seed))
        tallied = privtree_cuts(tally.values, bounds, step=step, params=params, rng=PrivateRandom(seed),
                                counts=tally.counts)
        assert tallied == rows and len(rows) > 2
    one_less = tally.counts.copy()
    one_less[tally.values >= 30] -= 1  # one row fewer at each large value: some seed must tell
    assert any(privtree_cuts(tally.values, bounds, step=step, params=params, rng=PrivateRandom(s),
                             counts=one_less) != privtree_cuts(values, bounds, step=step, params=params,
                                                               rng=PrivateRandom(s)) for s in range(20))


def test_private_bounds_on_a_tally_release_what_they_release_on_the_rows():
    values = np.repeat([0.3, 5.0, 700.0, -12.0], [40, 300, 90, 15])
    tally = NumberTally.of(values)
    for seed in range(10):
        assert noisy_range(tally.values, epsilon=Fraction(1, 2), rng=PrivateRandom(seed), integer=False,
                           counts=tally.counts) == noisy_range(values, epsilon=Fraction(1, 2), rng=PrivateRandom(seed),
                                                               integer=False)


def test_clipping_a_tally_after_bounds_are_learned():
    tally = NumberTally.of(np.array([-5.0, 1.0, 1.0, 7.0, 50.0]))
    clipped = tally.clipped((0.0, 10.0))
    assert clipped.values.tolist() == [0.0, 1.0, 7.0, 10.0] and clipped.counts.tolist() == [1, 2, 1, 1]
    assert tally.clipped((-10.0, 60.0)) is tally
    unclipped = Schema((Attribute("x", "numeric", clip=False, origin="learn", dtype="float64"),))
    assert unclipped.with_bounds({"x": (0.0, 10.0)})["x"].clip  # learned bounds clip (§10.4): never refused after


def test_tallying_refuses_a_bad_value_naming_its_row_and_a_missing_column():
    df = table(50)
    df["income"] = df["income"].astype(object)
    df.loc[17, "income"] = "n/a"
    with pytest.raises(SchemaError, match=r"value 'n/a' in row 17, numeric column 'income' is not a number \(the "
                                          r"column is numeric because its bounds are to be learned\)"):
        Tallies.of_frame(df, SCHEMA)
    df.loc[17, "income"], df.loc[3, "age"] = 5.0, 120
    with pytest.raises(SchemaError, match=r"value 120 in row 3, column 'age' is outside its public bounds"):
        Tallies.of_frame(df, SCHEMA)
    with pytest.raises(InputError, match=r"columns \['city'\] whose domain is to be learned are missing"):
        Tallies.of_frame(df.drop(columns="city"), SCHEMA)
    attrs = (Attribute("age", "numeric", bounds=(0, 99), clip=True, origin="learn", dtype="int64"),)
    assert Tallies.of_frame(df, Schema(attrs)).numbers["age"].values.max() == 99  # clipped into public bounds


def test_privtree_reads_tallies_taken_before_the_bounds_were_learned_as_clamped_into_them():
    """The tallies of a column to bound are taken unclamped; PrivTree on them equals PrivTree on the clamped rows."""
    from synthdp.accounting.ledger import Ledger
    from synthdp.mechanisms.privtree import discretise

    rng = np.random.default_rng(3)
    df = pd.DataFrame({"x": np.round(rng.normal(50, 30, 4000), 1)})  # tails beyond the bounds below
    schema = Schema.from_dataframe(df, learn_bounds=["x"])
    tallies = Tallies.of_frame(df, schema)
    bounded = schema.with_bounds({"x": (20.0, 70.0)})
    assert tallies.numbers["x"].values.min() < 20 and tallies.numbers["x"].values.max() > 70
    for seed in range(10):
        on_tallies, on_rows = (discretise(data, bounded, epsilon=Fraction(1, 4), rng=PrivateRandom(seed),
                                          ledger=Ledger(Fraction(1), Fraction(0))) for data in (tallies, df))
        assert on_tallies.schema == on_rows.schema and len(on_rows.schema["x"].cuts) > 2


@pytest.mark.parametrize("values,extra", [(["001", "002", "003"], "X9"), (["1.50", "2.25"], "abc"),
                                          (["true", "false"], "maybe"), (["7", "8"], "7b")])
def test_one_more_row_in_a_csv_changes_one_label_count_by_one(tmp_path, values, extra):
    """A label is a function of its own text (docs/privacy.md §10.7): one added row whose text does not look
    like the others adds one to its own label and changes no other label (read with type inference, the whole
    column would change type and every label with it: '001' -> '1')."""
    from synthdp.engines.pandas import PandasEngine

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"code": rng.choice(values, 500), "y": rng.choice(["a", "b"], 500)})
    schema = Schema((Attribute("code", "categorical", origin="learn"),
                     Attribute("y", "categorical", categories=("a", "b"))))
    df.to_csv(tmp_path / "d.csv", index=False)
    pd.concat([df, pd.DataFrame({"code": [extra], "y": ["a"]})]).to_csv(tmp_path / "d1.csv", index=False)
    before, after = (PandasEngine().tally(tmp_path / name, schema).labels["code"] for name in ("d.csv", "d1.csv"))
    assert set(before) == set(values) and after == {**before, extra: 1}


def test_a_label_is_read_in_the_columns_public_type_value_by_value():
    from synthdp.core.schema import typed_label

    assert [typed_label(v, "int") for v in ("001", " 7", "1.0", "-3", "x", 12, 2**60)] == \
        ["1", "7", "1", "-3", "x", "12", str(2**60)]
    assert [typed_label(v, "float") for v in ("1.50", "2", "nan", 0.25)] == ["1.5", "2", "nan", "0.25"]
    assert [typed_label(v, "bool") for v in ("true", "FALSE", "True", True, "1")] == \
        ["True", "False", "True", "True", "1"]
    assert [typed_label(v, "other") for v in ("001", "1.50", 3, 3.0)] == ["001", "1.50", "3", "3"]


def test_a_csv_column_of_numbers_without_bounds_is_still_refused_but_text_in_a_dataframe_is_text(tmp_path):
    from synthdp.files.csvfile import read_csv

    pd.DataFrame({"n": [1, 2, 3] * 10, "t": ["a", "b", "c"] * 10}).to_csv(tmp_path / "t.csv", index=False)
    with pytest.raises(SchemaError, match=r"numeric column\(s\) \['n'\] have no public bounds"):
        Schema.from_dataframe(read_csv(tmp_path / "t.csv"))
    codes = pd.DataFrame({"n": ["1", "2", "3"] * 10, "t": ["a", "b", "c"] * 10})  # the owner's text
    assert Schema.from_dataframe(codes).to_learn == ("n", "t")


def test_refusals_that_need_no_data_come_before_the_tally_pass(monkeypatch):
    """A refusal of public inputs never waits for a pass over the data, nor hides behind a bad value in it."""
    import synthdp
    from synthdp.engines.pandas import PandasEngine

    def no_pass(*args, **kwargs):
        raise AssertionError("tallied")

    monkeypatch.setattr(PandasEngine, "tally", no_pass)
    df = pd.DataFrame({"amount": ["12.5", "bad", "3"] * 20, "g": ["a", "b", "c"] * 20})
    with pytest.raises(InputError, match=r"columns \['amount'\] have no public bounds, and learning them privately"):
        synthdp.generate_synthetic(df, "marginals:2", epsilon=1.0, learn_bounds=["amount"], method="game",
                                   categories={"g": ["a", "b", "c"]}, progress=False)


def test_a_date_without_a_format_is_read_as_iso_8601_only(tmp_path):
    """Without a public format, pandas would guess one from the first row and read every date with it: one added
    row ('13/01/2020' first) would move every other date; a guess per value reads 01/02 month first and 13/01 day
    first (docs/privacy.md §10.1). Only ISO 8601 is read, value by value; anything else asks for the format."""
    from synthdp.engines.pandas import PandasEngine

    schema = Schema.from_dataframe(pd.DataFrame({"d": ["x"], "c": ["a"]}), datetimes=["d"],
                                   bounds={"d": ("2020-01-01", "2020-12-31")}, bins={"d": 12},
                                   categories={"c": ["a", "b"]})
    rows = ["2020-02-01,a"] * 20 + ["2020-04-03T10:00:00,b"] * 20
    (tmp_path / "d.csv").write_text("\n".join(["d,c", *rows]) + "\n")
    (tmp_path / "d1.csv").write_text("\n".join(["d,c", "2020-01-13,a", *rows]) + "\n")
    before, after = ({tuple(r): c for r, c in zip(d.codes.tolist(), d.counts.tolist())}
                     for d in (PandasEngine().count(tmp_path / name, schema) for name in ("d.csv", "d1.csv")))
    change = {row: after.get(row, 0) - before.get(row, 0) for row in {*before, *after}}
    assert sorted(change.values()) == [0] * (len(change) - 1) + [1]  # one cell gains the row; no row of D moves
    (tmp_path / "dmy.csv").write_text("d,c\n2020-01-02,a\n13/01/2020,a\n")
    with pytest.raises(SchemaError, match=r"value '13/01/2020' in row 1, datetime column 'd' cannot be read as a "
                                          r"date; .*give the column's format"):
        PandasEngine().count(tmp_path / "dmy.csv", schema)
    (tmp_path / "tz.csv").write_text("d,c\n2020-01-02,a\n2020-03-01T00:00:00+01:00,a\n")
    with pytest.raises(SchemaError, match=r"datetime column 'd' holds dates that cannot be read together"):
        PandasEngine().count(tmp_path / "tz.csv", schema)


def test_parquet_files_of_different_types_keep_each_value_as_written(tmp_path):
    """Joining a boolean file with an integer file, or reading an integer column with a null, converts no value by
    another row's type: True stays 'True', and a large integer stays exact."""
    from synthdp.files.sources import read_table

    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    big = 2**53 + 1
    (tmp_path / "d").mkdir()  # written as another tool would, without pandas' metadata
    pq.write_table(pa.table({"v": [True, True, False], "n": pa.array([big, big, None], pa.int64())}),
                   tmp_path / "d" / "a.parquet")
    pq.write_table(pa.table({"v": pa.array([2], pa.int64()), "n": pa.array([big + 2], pa.int64())}),
                   tmp_path / "d" / "b.parquet")
    df = read_table(tmp_path / "d")
    from synthdp.core.encoding import category_counts

    assert category_counts(df["v"]) == {"True": 2, "False": 1, "2": 1}
    pq.write_table(pa.table({"v": pa.array([1], pa.int64()), "n": pa.array([big], pa.int64())}),
                   tmp_path / "d" / "c.parquet")  # a 1 besides True: each keeps its own label
    assert category_counts(read_table(tmp_path / "d")["v"]) == {"True": 2, "False": 1, "2": 1, "1": 1}
    assert category_counts(df["n"]) == {str(big): 2, str(big + 2): 1}


def test_a_missing_token_is_matched_on_the_text_and_on_the_typed_label():
    from synthdp.core.encoding import category_counts

    series = pd.Series(["1", "-1", "-01", "2", "?"], dtype=object)
    assert category_counts(series, ("-1", "?"), "int") == {"1": 1, "2": 1}
    assert category_counts(series, ("-1", "?"), "other") == {"1": 1, "-01": 1, "2": 1}


def test_pure_dp_refuses_learning_categories_without_a_tally_pass(monkeypatch):
    import synthdp
    from synthdp.engines.pandas import PandasEngine

    def no_pass(*args, **kwargs):
        raise AssertionError("tallied")

    monkeypatch.setattr(PandasEngine, "tally", no_pass)
    df = table().assign(town=lambda d: d["city"])[["city", "town"]]
    with pytest.raises(InputError, match=r"categories privately .* needs delta > 0, and pure DP was requested"):
        synthdp.generate_synthetic(df, "marginals:2", epsilon=1.0, method="measure", progress=False)


def test_numbers_held_as_objects_are_still_refused_without_bounds(tmp_path):
    """An integer Parquet column with a null is read as Python integers (objects): still numbers, still refused
    without bounds, as without the null (one null row must not turn the column into categories)."""
    pa = pytest.importorskip("pyarrow")
    pq = pytest.importorskip("pyarrow.parquet")
    from synthdp.files.sources import read_table

    for values in ([1, 2, 3], [1, 2, None]):
        pq.write_table(pa.table({"n": pa.array(values, pa.int64()), "c": ["a", "b", "c"]}), tmp_path / "t.parquet")
        with pytest.raises(SchemaError, match=r"numeric column\(s\) \['n'\] have no public bounds"):
            Schema.from_dataframe(read_table(tmp_path / "t.parquet"))
