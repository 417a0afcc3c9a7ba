"""Encoding to codes and decoding back: exact round trips, dtypes, bins and every input error."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from synthdp.datasets import adult_raw_schema, load_adult_raw, load_coded
from synthdp.core import encoding
from synthdp.core.encoding import Encoder, category_counts
from synthdp.core.errors import InputError, SchemaError
from synthdp.core.schema import Attribute, PrivacyWarning, Schema


@pytest.fixture
def frame() -> pd.DataFrame:
    return pd.DataFrame({
        "city": pd.Series(["Oslo", "Rome", None, "Oslo"], dtype="str"),
        "member": [True, False, True, True],
        "kids": [0, 2, 1, 0],
        "rating": [1.0, np.nan, 2.5, 1.0],
        "kind": pd.Categorical(["u", "v", "u", "u"]),
        "age": [17, 90, 40, 33],
        "weight": [50.5, 80.0, 61.2, 99.9],
    })


@pytest.fixture
def encoder(frame) -> Encoder:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PrivacyWarning)
        schema = Schema.from_dataframe(frame, categorical=["kids", "rating"], unsafe_public_categories=True,
                                       bounds={"age": (17, 90), "weight": (40, 100)}, bins={"age": 8, "weight": 6},
                                       dtypes={"weight": "float64", "kind": "category"})
    return Encoder(schema)


def test_categorical_round_trip_keeps_values_and_dtypes(frame, encoder):
    decoded = encoder.decode(encoder.encode(frame))
    categorical = ["city", "member", "kids", "rating", "kind"]
    pd.testing.assert_frame_equal(decoded[categorical], frame[categorical])
    assert list(decoded.columns) == list(frame.columns)


def test_numeric_columns_decode_to_their_bin(frame, encoder):
    codes = encoder.encode(frame)
    assert codes[:, 5].tolist() == [0, 7, 2, 1]  # 17 -> first bin, 90 (upper bound) -> last bin
    labels = encoder.decode(codes)
    assert labels["age"].tolist() == ["17-26", "81-90", "35-44", "26-35"]
    drawn = encoder.decode(codes, numeric="uniform", rng=np.random.default_rng(1))
    assert drawn["age"].dtype == np.int64 and drawn["weight"].dtype == np.float64
    np.testing.assert_array_equal(encoder.encode(drawn.assign(**frame[["city", "member", "kids", "rating", "kind"]])), codes)


def test_uniform_decode_is_reproducible_and_needs_rng(frame, encoder):
    codes = encoder.encode(frame)
    first = encoder.decode(codes, numeric="uniform", rng=np.random.default_rng(5))
    pd.testing.assert_frame_equal(first, encoder.decode(codes, numeric="uniform", rng=np.random.default_rng(5)))
    with pytest.raises(InputError, match="rng=np.random.default_rng"):
        encoder.decode(codes, numeric="uniform")
    with pytest.raises(InputError, match="'label' or 'uniform'"):
        encoder.decode(codes, numeric="midpoint")


def test_nullable_int_and_bool_decode_to_pandas_nullable_types():
    schema = Schema((Attribute("n", "categorical", categories=(1, 2), missing=True, dtype="int64"),
                     Attribute("b", "categorical", categories=(False, True), missing=True, dtype="bool")))
    decoded = Encoder(schema).decode(np.array([[0, 2], [2, 1]]))
    assert str(decoded["n"].dtype) == "Int64" and decoded["n"].tolist()[0] == 1 and decoded["n"].isna().tolist() == [False, True]
    assert str(decoded["b"].dtype) == "boolean" and decoded["b"].isna().tolist() == [True, False]


def test_missing_tokens_encode_to_missing_code():
    schema = Schema((Attribute("job", "categorical", categories=("a", "b"), missing=True),
                     Attribute("x", "numeric", bounds=(0, 10), bins=2, missing=True)), missing_values=("?",))
    codes = Encoder(schema).encode(pd.DataFrame({"job": ["a", "?", "b"], "x": ["1", "?", "7"]}))
    assert codes.tolist() == [[0, 0], [2, 2], [1, 1]]


def test_missing_column_and_extra_column(frame, encoder):
    with pytest.raises(SchemaError, match=r"columns \['age'\] of the schema are missing"):
        encoder.encode(frame.drop(columns="age"))
    with pytest.warns(UserWarning, match=r"ignoring columns \['extra'\]"):
        codes = encoder.encode(frame.assign(extra=1))
    assert codes.shape == (4, 7)


@pytest.mark.parametrize(
    ("column", "value", "match"),
    [
        ("city", "Paris", r"value 'Paris' in row 2, column 'city' is outside its declared domain"),
        ("kids", 7, r"value 7 in row 2, column 'kids' is outside its declared domain"),
        ("age", 91, r"value 91 in row 2, column 'age' is outside its public bounds \[17, 90\].*clip=True"),
        ("weight", "heavy", r"value 'heavy' in row 2, numeric column 'weight' is not a number"),
        ("member", None, r"column 'member' has a missing value in row 2.*nullable=\['member'\]"),
        ("age", None, r"column 'age' has a missing value in row 2"),
    ],
)
def test_values_outside_the_domain_name_column_row_and_value(frame, encoder, column, value, match):
    bad = frame.astype({column: object})
    bad.loc[2, column] = value
    with pytest.raises(SchemaError, match=match):
        encoder.encode(bad)


def test_clip_clamps_into_bounds():
    schema = Schema((Attribute("x", "numeric", bounds=(0, 10), bins=5, clip=True),))
    codes = Encoder(schema).encode(pd.DataFrame({"x": [-3.0, 4.0, 25.0]}))
    assert codes[:, 0].tolist() == [0, 2, 4]


def test_decode_rejects_codes_outside_domain(encoder):
    with pytest.raises(SchemaError, match="outside its declared domain"):
        encoder.decode(np.array([[0, 0, 0, 0, 0, 8, 0]]))


def test_to_aggregated_counts_distinct_rows(frame, encoder):
    data = encoder.to_aggregated(pd.concat([frame, frame.iloc[:1]], ignore_index=True))
    assert data.n == 5 and len(data) == 4 and sorted(data.counts.tolist()) == [1, 1, 1, 2]
    assert data.domain == encoder.domain


def test_coded_adult_round_trip(shared_data_dir):
    df, schema = load_coded("adult")
    encoder = Encoder(schema)
    codes = encoder.encode(df)
    assert codes.shape == (48842, 14)
    np.testing.assert_array_equal(codes, df.to_numpy())
    pd.testing.assert_frame_equal(encoder.decode(codes), df)


def test_raw_adult_round_trip(shared_data_dir):
    raw = load_adult_raw("both")
    schema = adult_raw_schema()
    encoder = Encoder(schema)
    codes = encoder.encode(raw)
    categorical = [a.name for a in schema.attributes if a.kind == "categorical"]
    decoded = encoder.decode(codes, numeric="uniform", rng=np.random.default_rng(0))
    pd.testing.assert_frame_equal(decoded[categorical], raw[categorical])
    assert decoded["workclass"].isna().sum() == raw["workclass"].isna().sum() > 0
    for attr in schema.attributes:
        if attr.kind == "numeric":
            j = schema.names.index(attr.name)
            lo, hi = attr.edges[codes[:, j]], attr.edges[codes[:, j] + 1]
            is_last = codes[:, j] == attr.bins - 1
            for values in (raw[attr.name].to_numpy(), decoded[attr.name].to_numpy()):
                assert ((lo <= values) & ((values < hi) | (is_last & (values <= hi)))).all(), attr.name


def test_learned_domain_encodes_unreleased_values_as_missing():
    """Section 9: a value partition selection did not release becomes the missing value, never an error."""
    frame = pd.DataFrame({"city": ["Oslo", "Rome", "Paris", None, "?"], "n": [1, 2, 1, 3, 1]})
    schema = Schema.from_dataframe(frame, categorical=["n"], dtypes={"n": "int64"}, missing_values=["?"]).with_learned(
        {"city": ["Oslo", "Rome"], "n": ["1"]})
    codes = Encoder(schema).encode(frame)
    assert codes.tolist() == [[0, 0], [1, 1], [2, 0], [2, 1], [2, 0]]
    decoded = Encoder(schema).decode(codes)
    assert decoded["city"].tolist()[:2] == ["Oslo", "Rome"] and decoded["city"].isna().tolist()[2:] == [True] * 3
    assert str(decoded["n"].dtype) == "Int64" and decoded["n"].tolist()[0] == 1
    public = Schema((Attribute("city", "categorical", categories=("Oslo", "Rome"), missing=True),))
    with pytest.raises(SchemaError, match="'Paris' in row 2, column 'city' is outside its declared domain"):
        Encoder(public).encode(frame[["city"]])


def test_category_counts_use_the_encoder_labels():
    series = pd.Series([1.0, 2.0, np.nan, 1.0, 2.5, None], dtype=object)
    assert category_counts(series) == {"1": 2, "2": 1, "2.5": 1}
    assert category_counts(pd.Series(["a", "?", "a", "b"]), ("?",)) == {"a": 2, "b": 1}
    assert category_counts(pd.Series([1, 1.0, "1"], dtype=object)) == {"1": 3}


def test_neighbouring_tables_with_a_missing_entry_decode_identically():
    """The missing-entry leak: one missing entry turns pandas' int64 into float64; the output must not notice."""
    rng = np.random.default_rng(0)
    table = pd.DataFrame({"age": rng.integers(17, 91, 300), "kids": rng.integers(0, 4, 300)})
    neighbour = pd.concat([table, pd.DataFrame({"age": [np.nan], "kids": [np.nan]})], ignore_index=True)
    assert table["age"].dtype == np.int64 and neighbour["age"].dtype == np.float64
    options = dict(bounds={"age": (17, 90)}, categories={"kids": [0, 1, 2, 3]}, nullable=["age", "kids"])
    schemas = [Schema.from_dataframe(d, **options) for d in (table, neighbour)]
    assert schemas[0] == schemas[1]
    codes = Encoder(schemas[0]).encode(table)
    for numeric in ("label", "uniform"):
        out = [Encoder(s).decode(codes, numeric=numeric, rng=np.random.default_rng(1)) for s in schemas]
        pd.testing.assert_frame_equal(out[0], out[1])
        assert out[0].to_csv(index=False) == out[1].to_csv(index=False)
    assert str(out[0]["age"].dtype) == "Int64" and str(out[0]["kids"].dtype) == "Int64"


def test_a_text_column_of_bin_labels_reads_back_as_its_cells_whatever_its_first_rows():
    """A numeric column read as text holds either bin labels (synthdp's labelled output) or numbers; the first
    value that is not missing tells them apart, and a column that mixes the two is read as numbers, refusing its
    first label by its row."""
    schema = Schema((Attribute("age", "numeric", bounds=(17, 90), bins=8, missing=True, dtype="int64"),),
                    missing_values=("?",))
    encoder, text = Encoder(schema), lambda values: pd.DataFrame({"age": pd.Series(values, dtype="str")})
    labels = list(schema["age"].labels)
    codes = encoder.encode(text(["?", None, labels[3], labels[0], "?"]))[:, 0].tolist()
    assert codes == [8, 8, 3, 0, 8] and schema["age"].missing_code == 8
    assert encoder.encode(text([None, "20", "?", "89"]))[:, 0].tolist() == [8, 0, 8, 7]
    with pytest.raises(SchemaError, match=rf"value '{labels[2]}' in row 2, numeric column 'age' is not a number"):
        encoder.encode(text(["?", "20", labels[2]]))
    with pytest.raises(SchemaError, match=rf"value '{labels[1]}' in row 1, numeric column 'age' is not a number"):
        encoder.encode(text([None, labels[1], "20"]))


def _arrow_text(values: list) -> pd.Series:
    """A text column held by Arrow, as the CSV readers give it."""
    return pd.Series(values, dtype=pd.StringDtype("pyarrow"))


def test_whole_numbers_held_by_arrow_read_as_each_distinct_text_reads():
    """Brute force: columns of random texts (signs, digits, leading zeros, hexadecimal, points, exponents,
    spaces, numbers beyond 2**53, missing entries) held by Arrow read as the same floats as when each distinct
    text is parsed by pandas (the same texts held as Python objects); the one-pass cast takes many columns."""
    rng = np.random.default_rng(0)
    odd = ["+", "0x1f", "0X1F", " ", ".5", "e3", "9007199254740993", "123456789012345678901", "-", "", "٣", "1_0"]
    taken, trials = 0, 400
    for _ in range(trials):
        values = []
        for _ in range(int(rng.integers(1, 8))):
            text = rng.choice(["", "-", "--"], p=[0.6, 0.35, 0.05]) + "".join(
                rng.choice(list("0123456789"), size=int(rng.integers(1, 18))))
            values.append(rng.choice(odd) if rng.random() < 0.05 else rng.choice([text, "?", None], p=[0.8, 0.1, 0.1]))
        series = _arrow_text(values)
        missing = (series.isna() | (series == "?")).to_numpy()
        fast = encoding._whole_numbers(series, missing)
        taken += fast is not None
        reference = encoding._numbers(series.astype(object), missing)
        np.testing.assert_array_equal(np.where(missing, np.nan, encoding._numbers(series, missing)),
                                      np.where(missing, np.nan, reference), err_msg=repr(values))
    assert trials // 4 <= taken <= trials - trials // 10


def test_whole_numbers_are_cast_in_one_pass_only_while_exact_as_floats():
    missing = np.zeros(2, dtype=bool)
    assert encoding._whole_numbers(_arrow_text(["-9007199254740992", "007"]), missing).tolist() == [
        -9007199254740992.0, 7.0]
    assert encoding._whole_numbers(_arrow_text(["1", "9007199254740993"]), missing) is None
    assert encoding._whole_numbers(_arrow_text(["1", "-9007199254740994"]), missing) is None
    assert encoding._whole_numbers(_arrow_text(["1", "0x1f"]), missing) is None
    assert encoding._whole_numbers(_arrow_text(["1", "?"]), np.array([False, True])).tolist()[0] == 1.0
    assert encoding._whole_numbers(pd.Series(["1", "2"], dtype=object), missing) is None
    chunked = pd.Series(pd.arrays.ArrowStringArray(pa.chunked_array([["-3", "?"], ["04", None, "5"]])))
    assert np.array_equal(encoding._whole_numbers(chunked, (chunked.isna() | (chunked == "?")).to_numpy()),
                          [-3.0, np.nan, 4.0, np.nan, 5.0], equal_nan=True)


# ------------------------------------------------ the public other label (docs/privacy.md §9)


def test_the_other_label_takes_every_value_outside_the_categories():
    """Learned categories: the values partition selection did not keep; given ones: the values a run would refuse."""
    frame = pd.DataFrame({"grade": ["1", "2", "x", None, "other"]})
    nullable = Schema.from_dataframe(frame, other="other", nullable=["grade"])
    learned = nullable.with_learned({"grade": ["2", "1", "other"]})
    assert learned["grade"].categories == ("1", "2", "other") and learned["grade"].other == "other"
    unkept = Schema.from_dataframe(frame, other="other")  # the label holds the unkept values: missing as declared
    assert not unkept["grade"].missing and unkept["grade"].categories == ("other",)
    assert unkept.with_learned({"grade": ["1"]})["grade"].labels == ("1", "other")
    codes = Encoder(learned).encode(frame)[:, 0]
    assert codes.tolist() == [0, 1, 2, learned["grade"].missing_code, 2]  # 'x' is other; None stays missing
    plain = Schema.from_dataframe(frame).with_learned({"grade": ["1", "2"]})
    assert Encoder(plain).encode(frame)[2, 0] == plain["grade"].missing_code  # without the label: missing, as before
    given = Schema.from_dict({"format": "synthdp-schema", "version": 1, "attributes": [
        {"name": "grade", "kind": "categorical", "categories": ["1", "2", "rest"], "other": "rest", "missing": True}]})
    assert Encoder(given).encode(frame)[:, 0].tolist() == [0, 1, 2, 3, 2]
    assert Schema.from_json(learned.to_json()) == learned and learned["grade"].to_dict()["other"] == "other"


@pytest.mark.parametrize("attribute, message", [
    (dict(kind="categorical", origin="learn", dtype="int64", other="other"), "cannot be read as the column's dtype"),
    (dict(kind="categorical", categories=("a",), other="b"), "must be one of its categories"),
    (dict(kind="numeric", bounds=(0, 1), other="other"), "cannot have an other label"),
])
def test_an_other_label_that_cannot_be_a_category_is_refused_when_the_schema_is_built(attribute, message):
    with pytest.raises(SchemaError, match=message):
        Attribute("c", **attribute)


@pytest.mark.parametrize("other, dtype", [("?", None), ("-01", "int64")])  # "-01" is the integer label "-1"
def test_an_other_label_that_is_a_missing_token_is_refused_when_the_schema_is_built(other, dtype):
    """Encoding would read the label as missing: a synthetic table holding it could not be read back."""
    frame = pd.DataFrame({"grade": ["1", "2", "3"]})
    with pytest.raises(SchemaError, match=r"other label of column\(s\) 'grade' .* is also a missing token"):
        Schema.from_dataframe(frame, other=other, missing_values=["?", "-1"], dtypes={"grade": dtype} if dtype else {})
