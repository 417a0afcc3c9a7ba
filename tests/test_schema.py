"""Schema construction, its errors and privacy warning, and (de)serialisation."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest

from synthdp.core.errors import InputError, SchemaError
from synthdp.core.schema import MISSING_LABEL, Attribute, PrivacyWarning, Schema


@pytest.fixture
def frame() -> pd.DataFrame:
    return pd.DataFrame({
        "city": ["Oslo", "Rome", None, "Oslo"],
        "member": [True, False, True, True],
        "age": [17, 90, 40, 33],
        "score": [0.5, 1.5, np.nan, 2.0],
    })


def build(df: pd.DataFrame, **options) -> Schema:
    """``Schema.from_dataframe`` failing on any warning other than PrivacyWarning."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        return Schema.from_dataframe(df, **options)


def test_from_dataframe_kinds_sizes_and_labels(frame):
    schema = build(frame, bounds={"age": (17, 90), "score": (0, 2)}, bins={"age": 8}, nullable=["score"])
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
        Schema.from_dataframe(frame, bounds={"age": (17, 90), "score": (0, 2)})
    assert len(record) == 1
    message = str(record[0].message)
    assert "['city', 'member']" in message and "categories=" in message


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
    assert schema["n"].labels == ("1", "2", "3")
    assert schema.missing_values == ("?",)


def test_numeric_without_bounds_names_column_and_remedies(frame):
    with pytest.raises(SchemaError, match=r"\['age', 'score'\].*bounds=\{'age': \(lo, hi\)\}.*--bounds age=LO:HI.*categorical"):
        build(frame)


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
    with pytest.raises(SchemaError, match=r"'id' has 150 distinct values, more than max_categories=100; raise max_categories"):
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
        ({"bounds": {"age": (17, 18)}, "bins": {"age": 5}}, "without any integer; use fewer bins"),
        ({"bounds": {"age": (17, 90)}, "categories": {"city": ["Oslo", None]}}, r"nullable=\['city'\]"),
        ({"bounds": {"age": (17, 90)}, "categories": {"member": ["yes", "no"]}}, "cannot be read as a bool"),
    ],
)
def test_invalid_options(frame, options, match):
    with pytest.raises(SchemaError, match=match):
        build(frame.drop(columns="score"), **options)


def test_bin_edges_cover_bounds_and_labels_are_distinct():
    attr = Attribute("x", "numeric", bounds=(0, 1), bins=3)
    assert attr.edges[0] == 0 and attr.edges[-1] == 1 and len(attr.edges) == 4
    assert attr.labels == ("0-0.3", "0.3-0.7", "0.7-1")


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
