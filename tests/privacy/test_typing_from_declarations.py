"""A column's type comes from what the owner declared, never from the dtype pandas guessed (docs/privacy.md §10.1).

``pd.read_csv`` infers a column's dtype from its rows: D holds whole ages (``int64``), D' is D plus one row with
age ``40.5`` (``float64``; ``Int64`` -> ``Float64`` and ``int64[pyarrow]`` -> ``double[pyarrow]`` with the other
backends).  Were that dtype the column's type, the release's type and values would tell D from D' with no noise.
Here each pair either gives the same public structure (dtypes, the schema's typing, every report field but the
paid ones) or D' is refused before anything is charged.
"""

from __future__ import annotations

import io
import warnings

import numpy as np
import pandas as pd
import pytest

import synthdp
from synthdp.accounting.ledger import Ledger
from synthdp.core.errors import InputError, SchemaError
from synthdp.core.owner import OwnerWarning
from synthdp.core.schema import Schema

BACKENDS = [None, "numpy_nullable", "pyarrow"]
RUN = dict(epsilon=1.0, delta=1e-9, random_state=0, progress=False, categories={"sex": ["F", "M"]})
#: Report fields fixed by public inputs alone (the rest -- rows written, selected queries, the method's section,
#: the self-check's warnings -- are functions of the paid release).
PUBLIC_FIELDS = ("epsilon_budget", "delta_budget", "epsilon_spent", "delta_spent", "composition", "relation",
                 "method", "query_class", "plan", "seeded", "numeric_values", "privacy_unit", "max_rows_per_unit")


def _csv(extra: str = "") -> str:
    ages = np.random.default_rng(0).integers(18, 90, 3000)
    return "age,sex\n" + "".join(f"{a},{'FM'[a % 2]}\n" for a in ages) + extra


def _pair(backend: str | None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """D and D' (D plus one row holding a fraction), each read by pandas with its type inference."""
    kw = {} if backend is None else {"dtype_backend": backend}
    return pd.read_csv(io.StringIO(_csv()), **kw), pd.read_csv(io.StringIO(_csv("40.5,M\n")), **kw)


@pytest.fixture
def spends(monkeypatch) -> list[str]:
    """Every ledger spend of the runs in a test, by mechanism (before any noise is drawn, the ledger is charged)."""
    recorded: list[str] = []
    spend = Ledger.spend

    def recording(self, mechanism, *args, **kwargs):
        recorded.append(mechanism)
        return spend(self, mechanism, *args, **kwargs)

    monkeypatch.setattr(Ledger, "spend", recording)
    return recorded


def _run(df: pd.DataFrame, **options) -> synthdp.SyntheticResult:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return synthdp.generate_synthetic(df, "marginals:2", **RUN, **options)


def _structure(result: synthdp.SyntheticResult) -> dict:
    """What a release shows of its structure: the output dtypes, the schema's typing, the public report fields and
    the ledger's mechanisms and charges."""
    schema = {a.name: (a.kind, a.dtype, a.format, a.decimals, a.missing) for a in result.schema.attributes}
    release = result.report.to_dict()
    ledger = [(e["mechanism"], e.get("epsilon"), e.get("delta")) for e in release["ledger"]]
    return dict(dtypes=result.data.dtypes.astype(str).to_dict(), schema=schema, ledger=ledger,
                report={k: release.get(k) for k in PUBLIC_FIELDS})


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_frames_guessed_dtype_never_types_a_released_column(backend, spends):
    d, d_prime = _pair(backend)
    assert str(d["age"].dtype) != str(d_prime["age"].dtype)  # what pandas guessed differs
    for options in (dict(bounds={"age": (0, 100)}), dict(learn_bounds={"age": "int64"}),
                    dict(learn_bounds=["age"], dtypes={"age": "int64"}), dict(bounds={"age": (0, 100)},
                                                                             nullable=["age"])):
        release = _run(d, **options)
        assert release.data["age"].dtype.kind == "i" and spends  # declared integers: whole numbers
        spends.clear()
        with pytest.raises(SchemaError, match=r"value 40.5 in row 3000, column 'age' is not a whole number") as error:
            _run(d_prime, **options)
        assert spends == [] and "charged" not in str(error.value)  # refused before the first charge
    # declared reals, or bounds to learn without a declared type: one structure for D and D'
    for options in (dict(bounds={"age": (0.0, 100.0)}), dict(learn_bounds=["age"]),
                    dict(bounds={"age": (0, 100)}, dtypes={"age": "float64"}),
                    dict(bounds={"age": (0, 100)}, decimals={"age": 1})):
        first, second = _structure(_run(d, **options)), _structure(_run(d_prime, **options))
        assert first == second and first["dtypes"]["age"] == "float64", options


def test_a_dtype_that_disagrees_with_the_declaration_is_named_for_the_owner_only():
    d, _ = _pair(None)
    with pytest.warns(OwnerWarning, match=r"column 'age' is int64 in the DataFrame, but its declarations make it "
                                          r"real numbers \(float64\); .*dtypes=\{'age': 'int64'\} \(CLI --dtype "
                                          r"age=int64\)") as caught:
        result = synthdp.generate_synthetic(d, "marginals:2", bounds={"age": (0.0, 100.0)}, **RUN)
    text = str(result.report.to_dict()) + result.report.summary()
    assert "int64 in the DataFrame" not in text and "DataFrame's dtypes" not in text
    assert not any("DataFrame's dtypes" in w for w in result.report.warnings)
    assert any(issubclass(w.category, OwnerWarning) for w in caught)
    with warnings.catch_warnings():  # an agreeing frame, or one that says nothing of a type, warns nothing
        warnings.simplefilter("error", OwnerWarning)
        Schema.from_dataframe(d, bounds={"age": (0, 100)}, categories={"sex": ["F", "M"]})
        Schema.from_dataframe(d.astype(str), bounds={"age": (0.0, 100.0)}, categories={"sex": ["F", "M"]})
        gap = d.astype({"age": float}).assign(age=lambda f: f["age"].where(f.index != 3))
        Schema.from_dataframe(gap, bounds={"age": (0, 100)}, nullable=["age"], categories={"sex": ["F", "M"]})


def test_dtypes_types_a_column_from_python_the_schema_file_and_the_command_line(tmp_path):
    from synthdp.cli import main

    source, out, schema_file = tmp_path / "in.csv", tmp_path / "out.csv", tmp_path / "schema.json"
    source.write_text(_csv())
    common = ["--epsilon", "1", "--delta", "1e-9", "--seed", "0", "-q", "--queries", "marginals:2"]
    assert main(["generate", str(source), "-o", str(out), *common, "--bounds", "age=0:100", "--categorical", "sex",
                 "--dtype", "age=float64", "--discretise", "equal-width"]) == 0
    written = pd.read_csv(out)["age"]
    assert written.dtype == np.float64 and (written != written.round()).any()
    d, _ = _pair(None)
    result = synthdp.generate_synthetic(d, "marginals:2", bounds={"age": (0, 100)}, dtypes={"age": "float64"},
                                        discretise="equal-width", **RUN)
    assert result.data["age"].dtype == np.float64 and (result.data["age"] != result.data["age"].round()).any()
    result.schema.save(schema_file)
    assert Schema.load(schema_file)["age"].dtype == "float64"
    out.unlink()
    assert main(["generate", str(source), "-o", str(out), *common, "--schema", str(schema_file)]) == 0
    assert pd.read_csv(out)["age"].dtype == np.float64
    assert main(["generate", str(source), "-o", str(out), *common, "--schema", str(schema_file), "--dtype",
                 "age=int64"]) == 2  # the schema file fixes the whole domain, types included


def test_an_unknown_dtype_is_refused_naming_it_before_anything_runs(spends):
    d, _ = _pair(None)
    with pytest.raises(SchemaError, match=r"unknown dtype 'integer'"):
        synthdp.generate_synthetic(d, "marginals:2", bounds={"age": (0, 100)}, dtypes={"age": "integer"}, **RUN)
    with pytest.raises(InputError, match=r"dtypes must be a mapping \{column: dtype name\}"):
        synthdp.generate_synthetic(d, "marginals:2", bounds={"age": (0, 100)}, dtypes=["age"], **RUN)
    assert spends == []


def test_the_python_draft_types_a_frame_in_one_call_and_one_review(tmp_path):
    rng = np.random.default_rng(1)
    n = 2000
    df = pd.DataFrame({"age": rng.integers(18, 90, n), "income": np.round(rng.gamma(2, 1000, n), 2),
                       "joined": pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 900, n), unit="D"),
                       "sex": rng.choice(["F", "M"], n)})
    draft = synthdp.draft_schema(df, learn_bounds=["income"])
    review = str(draft)
    assert "age: bounds" in review and "joined: kind (datetime), bounds" in review and "sex: categories" in review
    assert "'2020-01-01'" in review  # dates written as dates, not seconds since 1970
    schema = draft.reviewed()
    assert {a.name: a.dtype for a in schema.attributes} == {"age": "int64", "income": "float64",
                                                            "joined": "datetime64[ns]", "sex": None}
    assert schema["joined"].format == "%Y-%m-%d" and schema["income"].decimals == 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = synthdp.generate_synthetic(df, schema=schema, **{k: v for k, v in RUN.items() if k != "categories"}).data
    assert out["age"].dtype == np.int64 and out["joined"].dtype == "datetime64[ns]"
    assert (out["joined"] == out["joined"].dt.normalize()).all() and (out["income"] == out["income"].round(2)).all()
    draft.save(tmp_path / "draft.json")
    with pytest.raises(SchemaError, match="the schema is a draft"):
        Schema.load(tmp_path / "draft.json")
    with pytest.raises(SchemaError, match="drafts from a pandas DataFrame.*synthdp schema FILE.csv"):
        synthdp.draft_schema(str(tmp_path / "in.csv"))


def _dates_csv(extra: str = "") -> str:
    days = np.random.default_rng(2).integers(1, 29, 600)
    return "d,sex\n" + "".join(f"2020-01-{d:02d}T10:00:00,{'FM'[d % 2]}\n" for d in days) + extra


@pytest.mark.parametrize("read", [dict(parse_dates=["d"]), dict(engine="pyarrow", dtype_backend="pyarrow"),
                                  dict(parse_dates=["d"], dtype_backend="pyarrow")])
def test_a_column_pandas_parsed_as_dates_is_refused_until_declared_on_every_backend(read, spends):
    """Undeclared, a column of dates is refused whatever pandas made of it (numpy ``datetime64``, Arrow
    ``timestamp``): else one unreadable date would turn it into text, learned as categories labelled otherwise."""
    d = pd.read_csv(io.StringIO(_dates_csv()), **read)
    with pytest.raises(SchemaError, match=r"\['d'\] hold dates in the DataFrame.*nothing declares them"):
        _run(d)
    with pytest.raises(SchemaError, match=r"\['d'\] hold dates in the DataFrame.*their bounds are numbers"):
        _run(d, bounds={"d": (0, 2 * 10**9)})
    assert spends == []
    declared = _run(d, bounds={"d": ("2020-01-01", "2020-02-01")}, datetimes={"d": "%Y-%m-%dT%H:%M:%S"})
    assert declared.data["d"].dtype == "datetime64[ns]"


@pytest.mark.parametrize("unit", ["s", "ns"])
def test_dates_are_never_read_as_numbers_in_a_number_column(unit, spends):
    """A schema's number column given a frame of dates is refused: read as numbers, the dates would be counted in
    the dtype's unit, which one row with a fraction of a second changes from seconds to nanoseconds."""
    schema = Schema.from_dict({"format": "synthdp-schema", "version": 1, "attributes": [
        {"name": "d", "kind": "numeric", "bounds": [1_577_000_000, 1_579_000_000], "bins": 4, "clip": True,
         "dtype": "int64"}, {"name": "sex", "kind": "categorical", "categories": ["F", "M"]}]})
    d = pd.read_csv(io.StringIO(_dates_csv()), parse_dates=["d"]).astype({"d": f"datetime64[{unit}]"})
    for frame in (d, d.astype({"d": object})):
        with pytest.raises(SchemaError, match=r"row 0, column 'd' is a date or a duration .*declare it a date column"):
            synthdp.generate_synthetic(frame, "marginals:2", schema=schema, epsilon=1.0, delta=1e-9, progress=False)
    assert spends == []


def test_an_arrow_zoned_column_is_read_in_its_declared_zone():
    zoned = pd.Series(pd.to_datetime(["2020-01-01 10:00", "2020-07-01 10:00"] * 150).tz_localize("Europe/Paris"))
    frames = [pd.DataFrame({"t": zoned, "sex": ["F", "M"] * 150})]
    frames.append(frames[0].astype({"t": "timestamp[ns, tz=Europe/Paris][pyarrow]"}))
    schemas = [Schema.from_dataframe(f, bounds={"t": ("2019-01-01", "2021-01-01")}, categories={"sex": ["F", "M"]},
                                     dtypes={"t": "datetime64[ns, Europe/Paris]"}) for f in frames]
    values = [synthdp.core.encoding.numeric_values(s["t"], f["t"]) for s, f in zip(schemas, frames)]
    assert schemas[0] == schemas[1] and (values[0] == values[1]).all()
    assert values[0][0] == pd.Timestamp("2020-01-01T09:00:00Z").value / 1e9


def test_conflicting_type_declarations_are_refused_naming_both():
    d, _ = _pair(None)
    with pytest.raises(SchemaError, match=r"'age' is given dtype 'int64' by learn_bounds and 'float64' by dtypes"):
        Schema.from_dataframe(d, learn_bounds={"age": "int64"}, dtypes={"age": "float64"}, categories=RUN["categories"])
    with pytest.raises(SchemaError, match=r"'age' is declared a date column .* dtypes gives it 'Int64'"):
        Schema.from_dataframe(d, bounds={"age": ("2020-01-01", "2021-01-01")}, dtypes={"age": "Int64"},
                              categories=RUN["categories"])


@pytest.mark.parametrize("backend", BACKENDS)
def test_text_labels_of_values_pandas_parsed_are_refused_until_the_type_is_declared(backend, spends):
    """Codes written ``001``, ``002`` are read by pandas as the integers 1, 2, and as text once a row holds ``x01``:
    learned as text, every label would change with that row (``1`` against ``001``).  Refused unless the type is
    declared, which labels ``001`` and 1 alike; declared, D releases and D' is refused before any charge."""
    kw = {} if backend is None else {"dtype_backend": backend}
    codes = "z,sex\n" + "".join(f"00{i % 3 + 1},{'FM'[i % 2]}\n" for i in range(3000))
    d, d_prime = (pd.read_csv(io.StringIO(text), **kw) for text in (codes, codes + "x01,M\n"))
    with pytest.raises(SchemaError, match=r"categorical column\(s\) \['z'\] have text labels.*dtypes=\{'z': "
                                          r"'int64'\}"):
        _run(d, categorical=["z"])
    assert spends == []
    first = _run(d, categorical=["z"], dtypes={"z": "int64"})
    assert first.schema["z"].categories == ("1", "2", "3") and first.data["z"].dtype.kind in "iu"
    spends.clear()
    with pytest.raises(SchemaError, match=r"value 'x01' in row 3000, column 'z' does not read as int64"):
        _run(d_prime, categorical=["z"], dtypes={"z": "int64"})
    assert spends == []  # D' is refused before anything is charged
    with pytest.raises(SchemaError, match=r"\['flag'\] have text labels.*'flag' bool"):  # booleans, dates alike
        Schema.from_dataframe(pd.DataFrame({"flag": [True, False] * 5}), categorical=["flag"])


def test_columns_of_any_name_are_typed_and_compared():
    frame = pd.DataFrame({0: [1, 2, 3] * 10, "code": ["a", "b", "c"] * 10})  # a column named by a number
    with pytest.warns(OwnerWarning, match=r"column '0' is int64 in the DataFrame, but its declarations make it real"):
        schema = Schema.from_dataframe(frame, bounds={"0": (0.0, 10.0)})
    assert schema["0"].dtype == "float64" and schema["code"].dtype is None


def test_date_bounds_beyond_the_instants_pandas_holds_are_written_as_numbers():
    attr = Schema.from_dict({"format": "synthdp-schema", "version": 1, "attributes": [
        {"name": "t", "kind": "numeric", "bounds": [-2.0**34, 2.0**34], "bins": 2, "dtype": "datetime64[ns]"},
        {"name": "u", "kind": "numeric", "bounds": ["2020-01-01", "2020-01-02T12:00:00"], "bins": 2,
         "dtype": "datetime64[ns]"}]})
    written = {a["name"]: a["bounds"] for a in attr.to_dict()["attributes"]}
    assert written == {"t": [-2.0**34, 2.0**34], "u": ["2020-01-01", "2020-01-02T12:00:00"]}
    assert Schema.from_dict(attr.to_dict()) == attr


def test_a_given_schema_refuses_text_labels_of_values_pandas_parsed_and_the_draft_types_them(spends):
    """Under a schema (object or file) the tally pass refuses the same columns before any private step; the Python
    draft types such a column, so its reviewed schema runs."""
    frame = pd.DataFrame({"code": [1, 2, 3] * 400, "flag": [True, False, True] * 400, "sex": ["F", "M", "F"] * 400})
    text = {"format": "synthdp-schema", "version": 1, "attributes": [
        {"name": "code", "kind": "categorical", "origin": "learn", "missing": True},
        {"name": "flag", "kind": "categorical", "origin": "learn", "missing": True, "dtype": "bool"},
        {"name": "sex", "kind": "categorical", "categories": ["F", "M"]}]}
    with pytest.raises(SchemaError, match=r"\['code'\] have text labels.*'code' int64"):
        synthdp.generate_synthetic(frame, "marginals:2", schema=Schema.from_dict(text), epsilon=1.0, delta=1e-9,
                                   progress=False)
    assert spends == []
    draft = synthdp.draft_schema(frame, learn_categories=["code", "flag"])
    assert {e["column"]: e["read"] for e in draft.read_off} == {"code": ["dtype"], "flag": ["dtype"],
                                                                "sex": ["categories"]}
    result = synthdp.generate_synthetic(frame, "marginals:2", schema=draft.reviewed(), epsilon=1.0, delta=1e-9,
                                        random_state=0, progress=False)
    assert result.data["code"].dtype.kind in "iu" and result.data["flag"].dtype.kind == "b"


def _objects(kind: str) -> pd.Series:
    """Values pandas parsed from text, held as Python objects: how each route below leaves them."""
    if kind == "bool with a blank":  # pd.read_csv of true/false with one empty field
        return pd.read_csv(io.StringIO("b\n" + "true\nfalse\n" * 50 + "\n" + "true\n"), skip_blank_lines=False)["b"]
    if kind == "ints with a null":  # Parquet integers with a null, read with integer_object_nulls
        return pd.Series([1, 2, None, 3] * 25, dtype=object)
    if kind == "mixed chunks":  # a chunked read: a part of ints, a part of text
        return pd.Series([1, 2, 3] * 30 + ["x01"] * 10, dtype=object)
    return pd.Series([1, 2, 3] * 30, dtype=object).astype("category")  # categories held as objects


@pytest.mark.parametrize("kind", ["bool with a blank", "ints with a null", "mixed chunks", "category of objects"])
def test_objects_not_all_text_are_refused_as_text_labels(kind, spends):
    series = _objects(kind)
    assert series.dtype == object or isinstance(series.dtype, pd.CategoricalDtype)
    frame = pd.DataFrame({"z": series.reset_index(drop=True)})
    with pytest.raises(SchemaError, match=r"\['z'\] have text labels.*objects not all text"):
        Schema.from_dataframe(frame, categorical=["z"])
    given = Schema((synthdp.core.schema.Attribute("z", "categorical", origin="learn", missing=True),))
    with pytest.raises(SchemaError, match=r"\['z'\] have text labels"):
        synthdp.generate_synthetic(frame, "marginals:1", schema=given, epsilon=1.0, delta=1e-9, progress=False)
    assert spends == []
    assert Schema.from_dataframe(frame.astype(str), categorical=["z"])["z"].origin == "learn"  # text: labels
    if kind != "mixed chunks":  # the draft types the others, so that their reviewed schema runs
        assert synthdp.draft_schema(frame, learn_categories=["z"]).reviewed()["z"].dtype in ("bool", "int64")


def test_a_learned_text_column_whose_kept_labels_all_look_like_numbers_stays_text():
    """Grades ``1``..``5`` once a rare ``other`` is not released, and ZIP codes, are text as declared (none was):
    their type does not hang on which labels passed the threshold (docs/privacy.md §9.6)."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"grade": rng.choice(["1", "2", "3", "4", "5", "other"], 4000, p=[.3, .3, .2, .1, .099, .001]),
                       "zip": rng.choice(["12345", "23456", "34567"], 4000)})
    result = synthdp.generate_synthetic(df, **{**RUN, "categories": None})
    assert result.schema["grade"].categories == ("1", "2", "3", "4", "5")  # "other" was not released
    assert result.schema["grade"].dtype is None and result.schema["zip"].dtype is None
    assert all(pd.api.types.is_string_dtype(result.data[c]) for c in ("grade", "zip")), result.data.dtypes
    assert set(result.data["zip"].dropna()) <= {"12345", "23456", "34567"}
    declared = synthdp.generate_synthetic(df, **{**RUN, "categories": None, "dtypes": {"zip": "int64"}})
    assert declared.schema["zip"].dtype == "int64" and pd.api.types.is_integer_dtype(declared.data["zip"])
