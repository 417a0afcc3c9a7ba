"""Schema construction, its errors and privacy warning, public output types, learned domains, (de)serialisation."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from synthdp.core.encoding import Encoder
from synthdp.core.errors import InputError, SchemaError
from synthdp.core.owner import OwnerWarning
from synthdp.core.schema import (MISSING_LABEL, Attribute, PrivacyWarning, Schema, labels_dtype, public_dtype,
                                 values_dtype)


@pytest.fixture
def frame() -> pd.DataFrame:
    return pd.DataFrame({
        "city": ["Oslo", "Rome", None, "Oslo"],
        "member": [True, False, True, True],
        "age": [17, 90, 40, 33],
        "score": [0.5, 1.5, np.nan, 2.0],
    })


def build(df: pd.DataFrame, **options) -> Schema:
    """``Schema.from_dataframe`` reading categories off the data, failing on any warning but PrivacyWarning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        return Schema.from_dataframe(df, unsafe_public_categories=True, **options)


def test_from_dataframe_kinds_sizes_and_labels(frame):
    schema = build(frame, bounds={"age": (17, 90), "score": (0, 2)}, bins={"age": 8}, nullable=["score"])
    assert schema.read_off == ("city", "member") and schema.to_learn == ()
    assert schema.names == ("city", "member", "age", "score")
    assert [a.kind for a in schema.attributes] == ["categorical", "categorical", "numeric", "numeric"]
    assert schema["city"].labels == ("Oslo", "Rome", MISSING_LABEL)
    assert schema["member"].labels == ("False", "True")
    assert schema["age"].labels[:2] == ("17-26", "26-35") and len(schema["age"].labels) == 8
    assert schema["score"].bins == 10 and schema["score"].labels[-1] == MISSING_LABEL
    assert schema.domain.sizes == (3, 2, 8, 11)
    assert schema.domain.label(0, 2) == MISSING_LABEL


def test_privacy_warning_once_naming_columns_read_off_data(frame):
    with pytest.warns(PrivacyWarning) as record:
        Schema.from_dataframe(frame, bounds={"age": (17, 90), "score": (0, 2)}, unsafe_public_categories=True)
    assert len(record) == 1
    message = str(record[0].message)
    assert message.startswith("NOT DIFFERENTIALLY PRIVATE") and "['city', 'member']" in message
    assert "categories=" in message and "partition selection" in message


def test_default_leaves_categories_to_learn_and_reads_nothing(frame):
    """Without public categories nothing is read off the data: the columns wait for partition selection (the owner
    may be told of the frame's dtypes, for their eyes only)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", OwnerWarning)
        schema = Schema.from_dataframe(frame, bounds={"age": (17, 90), "score": (0.0, 2.0)}, dtypes={"member": "bool"})
        other = Schema.from_dataframe(frame.iloc[[0]], bounds={"age": (17, 90), "score": (0.0, 2.0)},
                                       dtypes={"member": "bool"})
    assert schema.to_learn == ("city", "member") and schema.read_off == ()
    assert all(schema[c].categories == () and schema[c].missing and schema[c].origin == "learn"
               for c in schema.to_learn)
    assert schema == other  # one row or four: the same schema
    with pytest.raises(SchemaError, match=r"categories of columns \['city', 'member'\] are not known yet.*"
                                          r"learn_domains.*unsafe_public_categories=True"):
        Encoder(schema)


def test_no_privacy_warning_when_categories_given(frame):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        schema = Schema.from_dataframe(
            frame, categories={"city": ["Oslo", "Rome", "Paris"], "member": [False, True]},
            nullable=["city"], bounds={"age": (17, 90), "score": (0, 2)},
        )
    assert schema["city"].labels == ("Oslo", "Rome", "Paris", MISSING_LABEL)


def test_missing_tokens_become_the_missing_category():
    df = pd.DataFrame({"job": ["a", "?", "b"], "n": [1, 2, 3]})
    schema = build(df, categorical=["n"], missing_values=["?"])
    assert schema["job"].labels == ("a", "b", MISSING_LABEL)
    assert schema["n"].labels == ("1", "2", "3") and schema["n"].dtype == "int64"
    assert schema.missing_values == ("?",)


def test_numeric_without_bounds_names_column_and_remedies(frame):
    with pytest.raises(SchemaError, match=r"\['age', 'score'\].*bounds=\{'age': \(lo, hi\)\}.*categorical") as info:
        build(frame)
    assert "--bounds age=LO:HI" in info.value.for_cli() and "--categorical age" in info.value.for_cli()


def test_bounds_are_not_read_off_data(frame):
    schema = build(frame, bounds={"age": (0, 200), "score": (-1, 3)})
    assert schema["age"].bounds == (0.0, 200.0) and schema["score"].bounds == (-1.0, 3.0)


@pytest.mark.parametrize(
    ("option", "value"),
    [("categorical", ["nope"]), ("bounds", {"nope": (0, 1)}), ("bins", {"nope": 3}),
     ("categories", {"nope": ["x"]}), ("nullable", ["nope"])],
)
def test_unknown_column_in_any_option(frame, option, value):
    options = {"bounds": {"age": (17, 90), "score": (0, 2)}}
    options[option] = {**options.get(option, {}), **value} if isinstance(value, dict) else value
    with pytest.raises(SchemaError, match=rf"{option} names unknown column\(s\) \['nope'\]"):
        build(frame, **options)


@pytest.mark.parametrize("df", [pd.DataFrame(), pd.DataFrame({"a": pd.Series([], dtype=str)})])
def test_empty_frame(df):
    with pytest.raises(SchemaError, match="empty"):
        build(df)


def test_too_many_categories_names_column_count_and_option():
    df = pd.DataFrame({"id": [f"p{i}" for i in range(150)]})
    with pytest.raises(SchemaError, match=r"'id' has 150 distinct values, more than max_categories=100: a column "
                                          r"where nearly every row has its own value \(an ID, a name\) says nothing "
                                          r"a synthetic table can keep, so leave it out \(drop the column; CLI --drop "
                                          r"id\)"):
        build(df)
    assert build(df, max_categories=150)["id"].size == 150


@pytest.mark.parametrize(
    ("options", "match"),
    [
        ({"bounds": {"age": (90, 17)}}, "lo < hi"),
        ({"bounds": {"age": (17, 90)}, "bins": {"age": 0}}, "positive integer"),
        ({"bins": {"age": 3}}, "without bounds"),
        ({"bounds": {"age": (17, 90)}, "categorical": ["age"]}, "both bounds and categorical"),
        ({"bounds": {"age": (17, 90), "member": (0, 1)}}, "boolean"),
        ({"bounds": {"age": (17, 18)}, "bins": {"age": 5}, "dtypes": {"age": "int64"}},
         "without any integer; use fewer bins"),
        ({"bounds": {"age": (17, 90)}, "categories": {"city": ["Oslo", None]}}, r"nullable=\['city'\]"),
        ({"bounds": {"age": (17, 90)}, "categories": {"member": ["yes", "no"]}, "dtypes": {"member": "bool"}},
         "cannot be read as a bool"),
        ({"bounds": {"age": (17, 90)}, "dtypes": {"age": "bool"}},
         "needs an integer, float or datetime64\\[ns\\] dtype"),
        ({"bounds": {"age": (17, 90)}, "dtypes": {"age": "int128"}}, "unknown dtype 'int128'"),
        ({"bounds": {"age": (17, 90)}, "dtypes": {"nope": "int64"}}, r"dtypes names unknown column"),
    ],
)
def test_invalid_options(frame, options, match):
    with pytest.raises(SchemaError, match=match):
        build(frame.drop(columns="score"), **options)


def test_bin_edges_cover_bounds_and_labels_are_distinct():
    attr = Attribute("x", "numeric", bounds=(0, 1), bins=3)
    assert attr.edges[0] == 0 and attr.edges[-1] == 1 and len(attr.edges) == 4
    assert attr.labels == ("0-0.3", "0.3-0.7", "0.7-1")


def test_cells_of_one_value_follow_the_cells_and_the_public_precision():
    """One integer, one day of a date, one multiple of 10**-decimals, a point cell [v, v+) of a real column
    (docs/privacy.md §8.7); never a categorical column, one to be learned, or a cell of a time zone's days."""
    integer = Attribute("day", "numeric", bounds=(1, 31), cuts=(3, 29, 30, 31), dtype="int64", missing=True)
    assert integer.one_value_cells == (2, 3, 4)  # [29, 30), [30, 31), [31, 31]; not [1, 3) or [3, 29)
    day = 86_400.0
    date = Attribute("date", "numeric", bounds=(0.0, 10 * day), cuts=(0.5 * day, day, 2 * day, 2.5 * day),
                     dtype="datetime64[ns]", format="%Y-%m-%d")
    assert date.one_value_cells == (0, 2, 3)  # days 0, 1 and 2; [0.5 day, 1 day) holds none, the last cell eight
    zoned = Attribute("date", "numeric", bounds=(0.0, 10 * day), cuts=(day,), dtype="datetime64[ns, Europe/Oslo]",
                      format="%Y-%m-%d")
    assert zoned.one_value_cells == ()
    cents = Attribute("amount", "numeric", bounds=(0.0, 10.0), cuts=(1.1, 1.2, 1.3, 5.0), decimals=1)
    assert cents.one_value_cells == (1, 2)  # [1.1, 1.2) and [1.2, 1.3): 1.1 and 1.2 (10**-1 steps, not floats)
    point = float(np.nextafter(2.0, np.inf))
    real = Attribute("rate", "numeric", bounds=(0.0, 10.0), cuts=(2.0, point, 3.0))
    assert real.one_value_cells == (1,)
    assert Attribute("city", "categorical", categories=("a", "b")).one_value_cells == ()
    assert Attribute("x", "numeric", origin="learn").one_value_cells == ()
    schema = Schema((integer, Attribute("city", "categorical", categories=("a", "b"))))
    assert schema.domain.one_value == ((2, 3, 4), ())
    assert schema.domain.widths == ((2.0, 26.0, 1.0, 1.0, 1.0), ())  # integers held; the last cell [31, 31]
    assert cents.cell_widths == pytest.approx((1.1, 0.1, 0.1, 3.7, 5.0))


def test_missing_label_clash_is_rejected():
    with pytest.raises(SchemaError, match="duplicate labels"):
        Attribute("x", "categorical", categories=("a", MISSING_LABEL), missing=True)


def test_json_and_file_round_trip(frame, tmp_path):
    schema = build(frame, bounds={"age": (17, 90), "score": (0, 2)}, bins={"age": 8},
                   nullable=["score"], missing_values=["?"], clip=True)
    assert Schema.from_json(schema.to_json()) == schema
    path = tmp_path / "schema.json"
    schema.save(path)
    loaded = Schema.load(path)
    assert loaded == schema and loaded.domain.labels == schema.domain.labels
    assert [p.name for p in tmp_path.iterdir()] == ["schema.json"]  # no temporary file left behind


def test_load_errors_name_the_file(tmp_path):
    not_schema = tmp_path / "other.json"
    not_schema.write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(SchemaError, match=r"other\.json: not a synthdp schema"):
        Schema.load(not_schema)
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    with pytest.raises(InputError, match=r"broken\.json is not valid JSON"):
        Schema.load(broken)
    with pytest.raises(InputError, match="does not exist"):
        Schema.load(tmp_path / "absent.json")
    with pytest.raises(SchemaError, match=r"unknown keys \['colour'\]"):
        Schema.from_dict({"format": "synthdp-schema", "version": 1,
                          "attributes": [{"name": "a", "kind": "categorical", "categories": ["x"], "colour": 1}]})


def test_from_domain_file(tmp_path):
    path = tmp_path / "d.json"
    path.write_text(json.dumps({"age": 85, "sex": 2}))
    schema = Schema.from_domain_file(path)
    assert schema.domain.names == ("age", "sex") and schema.domain.sizes == (85, 2)
    assert all(a.coded and a.kind == "categorical" for a in schema.attributes)
    assert schema["sex"].labels == ("0", "1")
    assert Schema.load(path) == schema  # load also accepts domain files
    path.write_text(json.dumps({"age": 0}))
    with pytest.raises(SchemaError, match=r"sizes of \['age'\] are not positive integers"):
        Schema.from_domain_file(path)


def test_output_dtypes_come_from_the_public_options_never_from_the_data(frame):
    """Each column's output type is a function of its public description (docs/privacy.md §10.1)."""
    options = dict(bounds={"age": (17, 90), "score": (0, 2)}, categories={"city": ["Oslo", "Rome"], "member": [0, 1]},
                   nullable=["city", "score"])
    schema = Schema.from_dataframe(frame, **options)
    assert {a.name: a.dtype for a in schema.attributes} == {
        "city": None, "member": "int64", "age": "int64", "score": "float64"}
    as_text = frame.astype(str)  # every pandas dtype changed, nothing public changed
    assert Schema.from_dataframe(as_text, **options) == schema
    given = Schema.from_dataframe(frame, **options, dtypes={"age": "float64", "city": "category"})
    assert given["age"].dtype == "float64" and given["city"].dtype == "category"


@pytest.mark.parametrize(("values", "dtype"), [
    ([False, True], "bool"), ([1, 2, np.int8(3)], "int64"), ([1, 2.0], "int64"), ([1, 2.5], "float64"),
    (["a", "b"], None), ([1, "b"], None), ([], None), ([1, float("nan")], None)])
def test_values_dtype(values, dtype):
    assert values_dtype(values) == dtype


@pytest.mark.parametrize(("labels", "dtype"), [
    (("False", "True"), "bool"), (("1", "20", "-3"), "int64"), (("1", "2.5"), "float64"), (("01", "2"), None),
    (("1.0",), None), (("inf",), None), (("a", "1"), None), ((), None), (("True", "1"), None)])
def test_labels_dtype_only_for_labels_that_read_back(labels, dtype):
    assert labels_dtype(labels) == dtype


@pytest.mark.parametrize(("bounds", "bins", "dtype"), [
    ((0, 100), 10, "int64"), ((0, 100.5), 10, "float64"), ((0, 1), 10, "float64"), ((0, 9), 10, "int64"),
    ((-5, 5), 3, "int64"), ((0.5, 10), 2, "float64")])
def test_public_dtype_of_bounded_columns(bounds, bins, dtype):
    assert public_dtype(bounds, bins) == dtype


def test_with_learned_fixes_the_domains_in_a_data_independent_order(frame):
    schema = Schema.from_dataframe(frame, bounds={"age": (17, 90), "score": (0, 2)}, dtypes={"member": "bool"})
    learned = schema.with_learned({"city": {"Rome", "Oslo", "10", "9"}, "member": ["True"]})
    assert learned["city"].categories == ("9", "10", "Oslo", "Rome") and learned["city"].dtype is None
    assert learned["member"].categories == ("True",) and learned["member"].dtype == "bool"
    assert all(learned[c].origin == "learned" and learned[c].missing for c in ("city", "member"))
    assert learned["age"] == schema["age"] and learned.to_learn == ()
    assert schema.with_learned({"city": [], "member": []})["city"].labels == (MISSING_LABEL,)
    assert Schema.from_json(learned.to_json()) == learned
    with pytest.raises(SchemaError, match=r"exactly the columns to learn \['city', 'member'\]; got \['city'\]"):
        schema.with_learned({"city": ["Oslo"]})
    with pytest.raises(SchemaError, match="cannot be read as a bool"):  # member's public dtype is bool
        schema.with_learned({"city": [], "member": ["x"]})


def test_a_schema_file_can_ask_for_a_domain_to_be_learned():
    data = {"format": "synthdp-schema", "version": 1, "attributes": [
        {"name": "city", "kind": "categorical", "origin": "learn"},
        {"name": "n", "kind": "categorical", "origin": "learn", "dtype": "int64"},
        {"name": "x", "kind": "categorical", "categories": ["a"]}]}
    schema = Schema.from_dict(data)
    assert schema.to_learn == ("city", "n") and schema["city"].missing and schema["x"].origin == "public"
    assert schema.with_learned({"city": ["b"], "n": ["3", "1"]})["n"].category_values == (1, 3)
    with pytest.raises(SchemaError, match="origin must be one of"):
        Attribute("c", "categorical", categories=("a",), origin="guessed")
    with pytest.raises(SchemaError, match="still to be learned and cannot list categories"):
        Attribute("c", "categorical", categories=("a",), origin="learn")
    with pytest.raises(SchemaError, match="cannot have categories, be coded or be read off"):
        Attribute("c", "numeric", bounds=(0, 1), origin="read-off")
    with pytest.raises(SchemaError, match="needs the missing value"):
        Attribute("c", "categorical", categories=("a",), origin="learned")


# ------------------------------------------------ column kinds from public inputs (docs/privacy.md §10.1)
def test_column_kind_is_a_rule_on_public_inputs_only():
    from synthdp.core.schema import column_kind

    assert column_kind(bounded=True) == "numeric"
    assert column_kind(bounded=False, declared="numeric") == "numeric"
    assert column_kind(bounded=False) == column_kind(bounded=False, declared="categorical") == "categorical"


@pytest.mark.parametrize("column", ["code", "age"])
@pytest.mark.parametrize("odd", ["oops", 2.5, None])
def test_one_odd_value_does_not_change_any_column_kind(odd, column):
    """D and D with one odd value in one row, same public options: the same kinds (and output types), or an
    input error naming the column before any private step -- never a different structure."""
    df = pd.DataFrame({"code": [1, 2, 3, 1] * 5, "age": [20, 30, 40, 50] * 5, "town": list("abcd") * 5})
    odd_df = df.astype(object)
    odd_df.loc[7, column] = odd
    options = dict(categorical=["code"], bounds={"age": (0, 100)}, nullable=["age"], dtypes={"code": "int64"})
    schemas = [Schema.from_dataframe(d, **options) for d in (df, odd_df)]
    assert [[(a.name, a.kind, a.dtype) for a in s.attributes] for s in schemas][0] == \
        [(a.name, a.kind, a.dtype) for a in schemas[1].attributes] == \
        [("code", "categorical", "int64"), ("age", "numeric", "int64"), ("town", "categorical", None)]
    # undeclared, the codes' labels would be the values pandas parsed: refused, not typed by the frame
    del options["dtypes"]
    with pytest.raises(SchemaError, match=r"categorical column\(s\) \['code'\] have text labels.*'code' int64"):
        Schema.from_dataframe(df, **options)


def test_text_in_a_bounded_column_is_an_input_error_naming_the_column_and_the_fix():
    import synthdp

    df = pd.DataFrame({"age": [20, 30, 40, 50] * 10, "town": list("abcd") * 10})
    df = df.astype({"age": object})
    df.loc[5, "age"] = "unknown"
    with pytest.raises(SchemaError, match=r"numeric column 'age' is not a number.*bounds are public.*missing_values"):
        synthdp.generate_synthetic(df, "marginals:1", method="measure", epsilon=1.0, delta=1e-6, random_state=0,
                                   progress=False, bounds={"age": (0, 100)}, categories={"town": list("abcd")})
