"""Types by declaration (docs/privacy.md §10.1): dates keep their kind, precision, written form and time zone; real
and integer columns follow the declarations or the bounds as written, never a DataFrame's dtype."""

from __future__ import annotations

import dataclasses
import datetime
import json
import warnings

import numpy as np
import pandas as pd
import pytest

import synthdp
from synthdp.cli import main
from synthdp.core.draft import DRAFT_KEY, draft_document
from synthdp.core.encoding import Encoder, numeric_values
from synthdp.core.errors import SchemaError
from synthdp.core.owner import OwnerWarning
from synthdp.core.schema import DAY_SECONDS, Schema, UntypedWarning, format_unit, timestamp_seconds

RUN = dict(epsilon=4.0, delta=1e-9, random_state=0, progress=False, discretise="equal-width")


def _stamps(n: int = 300, *, seed: int = 0, midnight: bool = False, tz: str | None = None) -> pd.Series:
    rng = np.random.default_rng(seed)
    seconds = rng.integers(0, 600, n) * DAY_SECONDS + (0 if midnight else rng.integers(0, DAY_SECONDS, n))
    return pd.Series(pd.Timestamp("2020-01-01", tz=tz) + pd.to_timedelta(seconds, unit="s"))


def _frame(when: pd.Series, seed: int = 0) -> pd.DataFrame:
    return pd.DataFrame({"when": when, "c": np.random.default_rng(seed).choice(["a", "b"], len(when))})


def _run(df: pd.DataFrame, **options) -> synthdp.SyntheticResult:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return synthdp.generate_synthetic(df, "marginals:2", categories={"c": ["a", "b"]}, **RUN, **options)


@pytest.mark.parametrize("bounds", [(pd.Timestamp("2019-12-01"), datetime.datetime(2022, 1, 1)),
                                    ("2019-12-01", "2022-01-01"), (np.datetime64("2019-12-01"), "2022-01-01")])
def test_a_datetime64_column_is_a_date_column_with_bounds_written_as_dates(bounds):
    out = _run(_frame(_stamps()), bounds={"when": bounds}).data["when"]
    assert out.dtype == "datetime64[ns]" and out.notna().all()
    assert out.between(pd.Timestamp("2019-12-01"), pd.Timestamp("2022-01-01")).all() and out.nunique() > 50
    # text bounds written as dates declare a datetime column of a text column too (no datetimes= needed)
    text = _frame(_stamps().dt.strftime("%Y-%m-%dT%H:%M:%S"))
    assert Schema.from_dataframe(text, bounds={"when": bounds}, categories={"c": ["a", "b"]})["when"].is_datetime


def test_a_datetime64_column_without_bounds_is_refused_naming_it_never_made_categorical():
    with pytest.raises(SchemaError, match=r"\['when'\] hold dates in the DataFrame \(a datetime dtype, or date "
                                          r"objects\), but nothing declares them.*bounds=\{'when'.*dtypes=\{'when': "
                                          r"'datetime64\[ns\]'\}"):
        _run(_frame(_stamps()))
    with pytest.raises(SchemaError, match=r"datetime column\(s\) \['when'\] need public bounds.*bounds=\{'when'"):
        _run(_frame(_stamps()), datetimes=["when"])
    with pytest.raises(SchemaError, match=r"\['when'\] hold dates in the DataFrame.*their bounds are numbers"):
        _run(_frame(_stamps()), bounds={"when": (0, 10**10)})
    # declared categorical, dates as pandas parsed them would be labelled in pandas' form: refused; as text, labels
    with pytest.raises(SchemaError, match=r"categorical column\(s\) \['when'\] have text labels.*'when' datetime64"):
        Schema.from_dataframe(_frame(_stamps()), categorical=["when"], categories={"c": ["a", "b"]})
    text = _frame(_stamps().dt.strftime("%Y-%m-%dT%H:%M:%S"))
    assert Schema.from_dataframe(text, categorical=["when"], categories={"c": ["a", "b"]})["when"].kind == "categorical"


def test_precision_comes_from_the_format_never_from_the_values():
    """Neighbouring tables, one all at midnight and one not, get one schema: the precision is public."""
    bounds = {"when": ("2019-12-01", "2022-01-01")}
    for fmt in (None, "%Y-%m-%d", "%Y-%m-%d %H:%M"):
        schemas = [Schema.from_dataframe(_frame(_stamps(midnight=m)), bounds=bounds, datetimes={"when": fmt},
                                         categories={"c": ["a", "b"]}) for m in (True, False)]
        assert schemas[0] == schemas[1] and schemas[0]["when"].date_unit == format_unit(fmt)
    days = _run(_frame(_stamps()), bounds=bounds, datetimes={"when": "%Y-%m-%d"}).data["when"]
    assert (days == days.dt.normalize()).all() and days.nunique() > 50  # dates alone, as the format writes
    minutes = _run(_frame(_stamps()), bounds=bounds, datetimes={"when": "%Y-%m-%d %H:%M"}).data["when"]
    assert (minutes.dt.second == 0).all() and (minutes.dt.minute != 0).any()
    with pytest.warns(UserWarning, match=r"datetime column\(s\) \['when'\] have no format.*to the second"):
        Schema.from_dataframe(_frame(_stamps(midnight=True)), bounds=bounds, categories={"c": ["a", "b"]})


def test_format_unit_is_the_finest_field_of_the_format():
    cases = {None: 1, "%Y-%m-%d": DAY_SECONDS, "%d/%m/%Y": DAY_SECONDS, "%Y-%m": DAY_SECONDS, "%Y-%m-%d %H": 3600,
             "%Y-%m-%d %H:%M": 60, "%d/%m/%Y %I:%M %p": 60, "%Y-%m-%dT%H:%M:%SZ": 1, "%Y-%m-%dT%H:%M:%S.%f%z": 1}
    assert {fmt: format_unit(fmt) for fmt in cases} == cases


def test_a_tz_aware_column_comes_back_in_its_declared_zone_and_days_start_at_its_midnight():
    zone = "Europe/Paris"
    df = _frame(_stamps(tz=zone))
    declared = dict(bounds={"when": ("2019-12-01", "2022-01-01")}, dtypes={"when": f"datetime64[ns, {zone}]"})
    out = _run(df, **declared).data["when"]
    assert str(out.dt.tz) == str(df["when"].dt.tz) == zone
    assert out.between(pd.Timestamp("2019-12-01", tz=zone), pd.Timestamp("2022-01-01", tz=zone)).all()
    days = _run(df, **declared, datetimes={"when": "%Y-%m-%d"}).data["when"]
    assert (days.dt.hour == 0).all() and (days.dt.minute == 0).all()  # midnight in Paris, not in UTC
    # the frame's zone declares nothing: undeclared, the column is naive (its instants' UTC clock), and the owner
    # is told the declaration that keeps the zone
    with pytest.warns(OwnerWarning, match=r"'when' is datetime64\[\w+, Europe/Paris\] in the DataFrame.*naive dates"
                                          r".*dtypes=\{'when': 'datetime64\[ns, Europe/Paris\]'\}"):
        naive = Schema.from_dataframe(df, bounds=declared["bounds"], categories={"c": ["a", "b"]})
    assert naive["when"].dtype == "datetime64[ns]"
    # a bound, or a value, without a zone is a wall-clock time of the column's zone
    assert timestamp_seconds("2021-01-01", zone=zone) == pd.Timestamp("2020-12-31T23:00:00Z").value / 1e9
    schema = Schema.from_dataframe(df, **declared, categories={"c": ["a", "b"]})
    naive = numeric_values(schema["when"], pd.Series(["2021-06-01T00:00:00"]))
    assert naive[0] == pd.Timestamp("2021-05-31T22:00:00Z").value / 1e9
    # decoding keeps the instant: values drawn in a cell re-encode into that cell
    encoder = Encoder(schema)
    codes = np.random.default_rng(0).integers(0, schema["when"].bins, (20_000, 2)) % [schema["when"].bins, 2]
    again = encoder.encode(encoder.decode(codes, numeric="uniform", rng=np.random.default_rng(1)))
    assert (again == codes).all()


def test_one_instant_written_with_different_offsets_encodes_to_one_value():
    schema = Schema.from_dataframe(pd.DataFrame({"t": ["x"]}), bounds={"t": ("2013-01-01", "2014-01-01")},
                                   datetimes={"t": "%Y-%m-%dT%H:%M:%S%z"})
    text = pd.Series(["2013-01-01T10:00:00Z", "2013-01-01T12:00:00+02:00", "2013-01-01T05:00:00-0500"])
    values = numeric_values(schema["t"], text)
    assert schema["t"].dtype == "datetime64[ns, UTC]"
    assert (values == pd.Timestamp("2013-01-01T10:00:00Z").value / 1e9).all()


@pytest.mark.parametrize(("fmt", "pattern"), [("%Y-%m-%dT%H:%M:%SZ", r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ"),
                                              ("%Y-%m-%dT%H:%M:%S%z", r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+0000"),
                                              ("%d/%m/%Y", r"\d\d/\d\d/\d{4}")])
def test_the_csv_output_keeps_the_written_form_of_the_format(tmp_path, fmt, pattern):
    source, out = tmp_path / "in.csv", tmp_path / "out.csv"
    _frame(_stamps(200)).assign(when=lambda d: d["when"].dt.tz_localize("UTC").dt.strftime(fmt)).to_csv(
        source, index=False)
    assert main(["generate", str(source), "-o", str(out), "--epsilon", "4", "--delta", "1e-9", "--seed", "0", "-q",
                 "--datetime", f"when={fmt}", "--bounds", "when=2019-12-01..2022-01-01", "--categorical", "c",
                 "--queries", "marginals:2", "--discretise", "equal-width"]) == 0
    written = pd.read_csv(out)["when"]
    assert written.str.fullmatch(pattern).all()
    assert pd.to_datetime(written, format=fmt, utc=True).between("2019-12-01", "2022-01-01T00:00:00Z").all()


def test_the_draft_reads_a_date_columns_first_and_last_date_never_widened():
    stamps = _stamps(300)
    days = draft_document(_frame(stamps.dt.strftime("%Y-%m-%d")))
    attr = {a["name"]: a for a in days["attributes"]}["when"]
    first, last = stamps.dt.normalize().min(), stamps.dt.normalize().max()
    assert attr["bounds"] == [first.date().isoformat(), last.date().isoformat()] and attr["format"] == "%Y-%m-%d"
    assert Schema.from_dict(days | {"_read_off_data": []} and {k: v for k, v in days.items() if k != DRAFT_KEY}
                            )["when"].bounds == (first.value / 1e9, last.value / 1e9)  # dates read back exactly
    typed = draft_document(_frame(stamps))  # a datetime64 column: its kind read off, bounds to the second
    attr = {a["name"]: a for a in typed["attributes"]}["when"]
    assert attr["dtype"] == "datetime64[ns]" and attr["format"] == "%Y-%m-%d %H:%M:%S"
    assert attr["bounds"] == [stamps.min().isoformat(), stamps.max().isoformat()]
    assert {"column": "when", "read": ["kind (datetime)", "bounds"]} in typed[DRAFT_KEY]
    midnights = draft_document(_frame(_stamps(300, midnight=True)))  # every value a midnight: whole days
    assert {a["name"]: a for a in midnights["attributes"]}["when"]["format"] == "%Y-%m-%d"


def test_a_drafted_date_keeps_a_midnight_and_a_z_as_written(tmp_path):
    """Dates written with a time that is always midnight came back with times of day, and offsets written ``Z``
    came back ``+0000``: the draft keeps what every value writes alike, and the CSV output writes it back."""
    midnight = _stamps(300, midnight=True).dt.strftime("%Y-%m-%d 00:00:00")
    zulu = _stamps(300, seed=1).dt.strftime("%Y-%m-%dT%H:%M:%SZ")
    drafted = {a["name"]: a for a in draft_document(pd.DataFrame({"day": midnight, "at": zulu}))["attributes"]}
    assert drafted["day"]["format"] == "%Y-%m-%d 00:00:00" and drafted["day"]["dtype"] == "datetime64[ns]"
    assert drafted["at"]["format"] == "%Y-%m-%dT%H:%M:%SZ" and drafted["at"]["dtype"] == "datetime64[ns, UTC]"
    timed = draft_document(pd.DataFrame({"t": _stamps(300).dt.strftime("%Y-%m-%d %H:%M:%S")}))["attributes"][0]
    assert timed["format"] == "%Y-%m-%d %H:%M:%S"  # one value off midnight: the time of day stays
    paris = _stamps(300, midnight=True).dt.strftime("%Y-%m-%dT%H:%M:%S") + "+02:00"  # midnight of another clock
    assert draft_document(pd.DataFrame({"t": paris}))["attributes"][0]["format"] == "%Y-%m-%dT%H:%M:%S%z"
    hour = _stamps(300, midnight=True).dt.strftime("%m/%d/%Y") + " 0:00:00"  # an hour written "0"
    assert draft_document(pd.DataFrame({"t": hour}))["attributes"][0]["format"] == "%m/%d/%Y 0:00:00"
    source, out, schema = tmp_path / "in.csv", tmp_path / "out.csv", tmp_path / "s.json"
    pd.DataFrame({"day": midnight, "at": zulu}).to_csv(source, index=False)
    assert main(["schema", str(source), "-o", str(schema)]) == 0
    text = json.loads(schema.read_text())
    text.pop(DRAFT_KEY)
    schema.write_text(json.dumps(text))
    assert main(["generate", str(source), "-o", str(out), "--schema", str(schema), "--epsilon", "4", "--delta",
                 "1e-9", "--seed", "0", "-q", "--queries", "marginals:2"]) == 0
    written = pd.read_csv(out)
    assert written["day"].str.fullmatch(r"\d{4}-\d\d-\d\d 00:00:00").all(), written["day"].head()
    assert written["at"].str.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ").all(), written["at"].head()


def test_a_float_column_with_bounds_written_as_integers_is_integer_unless_declared_real():
    """The frame's float dtype declares nothing (pandas infers it from the rows): the bounds as written do, so a
    fraction is refused before any private step, saying how to declare the column real."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"wage": rng.uniform(0, 50, 300).round(2), "c": rng.choice(["a", "b"], 300)})
    with pytest.warns(OwnerWarning, match=r"'wage' is float64 in the DataFrame, but its declarations make it whole "
                                          r"numbers \(int64\).*dtypes=\{'wage': 'float64'\}"):
        schema = Schema.from_dataframe(df, bounds={"wage": (0, 50)}, categories={"c": ["a", "b"]})
    assert schema["wage"].bounds == (0.0, 50.0) and schema["wage"].dtype == "int64"
    with pytest.raises(SchemaError, match=r"row 0, column 'wage' is not a whole number.*dtypes=\{'wage': 'float64'\}"):
        _run(df, bounds={"wage": (0, 50)})
    for declared in (dict(bounds={"wage": (0.0, 50.0)}), dict(bounds={"wage": (0, 50)}, dtypes={"wage": "float64"}),
                     dict(bounds={"wage": (0, 50)}, decimals={"wage": 2})):
        out = _run(df, **declared).data["wage"]
        assert out.dtype == np.float64 and (out != out.round()).any() and out.between(0, 50).all()


def test_a_date_outside_its_bounds_is_refused_with_the_bounds_as_dates_and_the_schema_files_way_out(tmp_path,
                                                                                                   capsys):
    source, out = tmp_path / "in.csv", tmp_path / "out.csv"
    _frame(_stamps().dt.strftime("%Y-%m-%dT%H:%M:%S")).to_csv(source, index=False)
    args = ["generate", str(source), "-o", str(out), "--epsilon", "4", "--delta", "1e-9", "--seed", "0", "-q",
            "--categorical", "c", "--queries", "marginals:2", "--bounds", "when=2020-01-01..2020-12-31"]
    assert main(args) == 2
    error = capsys.readouterr().err
    assert "[2020-01-01T00:00:00+00:00, 2020-12-31T00:00:00+00:00]" in error and "e+09" not in error
    assert "--clip" in error and '"clip": true' in error and "clip=True" not in error
    assert not out.exists()
    with pytest.raises(SchemaError, match=r"outside its public bounds \[2020-01-01T00:00:00\+00:00, .*clip=True"):
        _run(_frame(_stamps()), bounds={"when": ("2020-01-01", "2020-12-31")})


def test_cli_declared_decimals_make_a_column_with_integer_bounds_real(tmp_path, capsys):
    source, out = tmp_path / "in.csv", tmp_path / "out.csv"
    rng = np.random.default_rng(0)
    pd.DataFrame({"depth": rng.uniform(40, 80, 300).round(1), "c": rng.choice(["a", "b"], 300)}).to_csv(
        source, index=False)
    args = ["generate", str(source), "-o", str(out), "--epsilon", "4", "--delta", "1e-9", "--seed", "0", "-q",
            "--categorical", "c", "--queries", "marginals:2", "--bounds", "depth=40:80"]
    assert main(args) == 2  # integer bounds on text declare an integer column: refused, saying how to make it real
    error = capsys.readouterr().err
    assert "not a whole number" in error and "--decimals depth=K" in error and "bounds={" not in error
    assert not out.exists()
    assert main([*args, "--decimals", "depth=1"]) == 0
    depth = pd.read_csv(out)["depth"]
    assert (depth == depth.round(1)).all() and (depth != depth.round()).any() and depth.between(40, 80).all()


def test_learned_bounds_keep_an_integer_column_integer_and_declared_decimals():
    rng = np.random.default_rng(0)
    n = 4000
    sales = np.where(rng.random(n) < 0.3, 0, rng.integers(0, 500, n))  # zeros: a bucket of fractional edges
    df = pd.DataFrame({"sales": sales, "c": rng.choice(["a", "b"], n),
                       "price": rng.uniform(1, 60, n).round(2)})
    result = _run(df, learn_bounds={"sales": "int64", "price": "float64"}, decimals={"price": 2})
    out = result.data
    assert out["sales"].dtype == np.int64 and out["price"].dtype == np.float64
    assert all(float(b).is_integer() for b in result.schema["sales"].bounds)  # released bounds rounded outwards
    assert (out["price"] == out["price"].round(2)).all() and (out["price"] != out["price"].round()).any()
    assert _run(df, learn_bounds=["sales", "price"], dtypes={"sales": "int64"}).data["sales"].dtype == np.int64
    # undeclared, a column to learn is real whatever the frame's dtype (numpy, nullable, Arrow, with a missing
    # value or not: pandas' typing of the rows), and the owner is told how to declare integers
    gap = pd.concat([df, pd.DataFrame({"sales": [np.nan], "c": ["a"], "price": [1.0]})], ignore_index=True)
    options = dict(learn_bounds=["sales"], nullable=["sales"], categories={"c": ["a", "b"]},
                   bounds={"price": (0.0, 60.0)})
    frames = [df, gap, gap.astype({"sales": "Int64"}), df.astype({"sales": "int64[pyarrow]"}), df.astype(str)]
    with pytest.warns(UntypedWarning, match=r"\['sales'\] have bounds to learn and no declared type.*'sales': 'int64'"):
        schemas = [Schema.from_dataframe(frame, **options) for frame in frames]
    assert all(schema == schemas[0] for schema in schemas) and schemas[0]["sales"].dtype == "float64"


def test_a_datetime64_column_may_have_its_bounds_learned():
    df = _frame(_stamps(4000))
    schema = Schema.from_dataframe(df, learn_bounds=["when"], datetimes={"when": "%Y-%m-%d"},
                                   categories={"c": ["a", "b"]})
    assert schema["when"].is_datetime and schema["when"].bounds is None and schema["when"].date_unit == DAY_SECONDS
    out = _run(df, learn_bounds=["when"], datetimes={"when": "%Y-%m-%d"}).data["when"]
    assert out.dtype == "datetime64[ns]" and (out == out.dt.normalize()).all()


# ------------------------------------------------ ISO dates held as text: a hint for the owner, never a type


def _iso_days(n: int = 3000, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    days = pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 400, n), unit="D")
    return pd.DataFrame({"day": days.strftime("%Y-%m-%d"), "sex": rng.choice(["F", "M"], n)})


@pytest.mark.parametrize("values, dates", [
    (["2020-01-31", None, "2021-12-01"], True), (["2020-01-31T08:15:00Z", "2020-02-01 10:00"], True),
    (["2020-02-30"], False), (["2020-01-31", "soon"], False), (["31/01/2020"], False), ([20200131], False)])
def test_reads_as_iso_dates_only_when_every_value_is_one(values, dates):
    from synthdp.core.schema import reads_as_iso_dates
    assert reads_as_iso_dates(pd.Series(values, dtype=object)) is dates


def test_a_text_column_of_iso_dates_warns_the_owner_how_to_declare_it_and_stays_categorical():
    df = _iso_days()
    with pytest.warns(OwnerWarning, match=r"column 'day' holds ISO dates as text.*datetimes=\{'day': '%Y-%m-%d'\}"
                                          r".*synthdp.draft_schema\(df\)") as caught:
        result = synthdp.generate_synthetic(df, epsilon=1.0, delta=1e-9, random_state=0, progress=False)
    assert caught[0].filename == __file__  # the owner's line
    assert result.schema["day"].kind == "categorical"  # the text stays text until declared (§10.1)
    assert not any("ISO dates" in w for w in result.report.warnings)  # read off the data: never in the release
    with warnings.catch_warnings():
        warnings.simplefilter("error", OwnerWarning)  # a column of other text: no hint
        Schema.from_dataframe(df[["sex"]])


def test_too_many_iso_dates_for_categories_are_refused_with_the_date_declaration():
    with pytest.raises(SchemaError, match=r"400 distinct values, more than max_categories=100, all ISO dates: "
                                          r"declare it a date column \(datetimes=\{'day': '%Y-%m-%d'\}"):
        Schema.from_dataframe(_iso_days(), unsafe_public_categories=True)


def test_the_owner_side_evaluation_compares_a_text_column_of_iso_dates_as_dates():
    real = _iso_days()
    shifted = real.assign(day=(pd.to_datetime(real["day"]) + pd.Timedelta(days=200)).dt.strftime("%Y-%m-%d"))
    shapes = {s["column"]: s for s in synthdp.quality_report(real, shifted).to_dict()["shapes"]}
    assert shapes["day"]["kind"] == "datetime" and shapes["day"]["metric"] == "KS complement"
    assert shapes["day"]["score"] < 0.6  # half the days moved past the real last day: the KS distance sees it


def test_learned_cells_of_dates_are_whole_days_and_the_last_day_comes_back():
    """PrivTree splits a column of dates at midnights only (docs/privacy.md §10.3), and values inside a cell are
    its days, the last cell's upper bound included: the last day of a range is drawn, not lost to a floor."""
    first, last = pd.Timestamp("2020-01-01"), pd.Timestamp("2020-03-31")
    days = pd.Series(pd.date_range(first, last, freq="D")).repeat(60).reset_index(drop=True)
    df = _frame(days)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = synthdp.generate_synthetic(df, "marginals:2", categories={"c": ["a", "b"]}, epsilon=4.0, delta=1e-9,
                                            random_state=0, progress=False, datetimes={"when": "%Y-%m-%d"},
                                            bounds={"when": (str(first.date()), str(last.date()))})
    cuts = result.schema["when"].cuts
    assert len(cuts) > 5 and all(c % DAY_SECONDS == 0 for c in cuts)
    out = result.data["when"]
    assert (out == last).mean() > 0.2 / days.nunique()


def test_a_cell_of_dates_draws_each_of_its_days_the_upper_bound_included():
    """Values inside a cell of a date column are its whole days (§11.3), each about as often; the last cell holds
    the column's upper bound, which a draw over seconds cut to days would never reach."""
    first, last = pd.Timestamp("2020-01-01"), pd.Timestamp("2020-01-10")
    declared = Schema.from_dataframe(pd.DataFrame({"when": pd.date_range(first, last)}),
                                     bounds={"when": (str(first.date()), str(last.date()))},
                                     datetimes={"when": "%Y-%m-%d"})["when"]
    schema = Schema((dataclasses.replace(declared, cuts=(timestamp_seconds(pd.Timestamp("2020-01-08")),),
                                         bins=None),))
    codes = np.ones((3000, 1), dtype=np.int64)  # every row in the last cell: 8, 9 and 10 January
    out = Encoder(schema).decode(codes, numeric="uniform", rng=np.random.default_rng(0))["when"]
    shares = out.value_counts(normalize=True)
    assert set(shares.index) == {pd.Timestamp(f"2020-01-{d:02d}") for d in (8, 9, 10)}
    assert shares.min() > 0.28


def test_a_point_mass_at_a_time_of_day_is_a_point_cell_that_comes_back_as_its_day():
    """A kept value off the day grid (a column of dates holding times, §10.1) is the point cell ``[v, v+)``, not a
    day-long cell reaching the next midnight (§11.2)."""
    from synthdp.mechanisms.point_masses import merged_cuts
    first, last = pd.Timestamp("2020-01-01"), pd.Timestamp("2020-01-10")
    declared = Schema.from_dataframe(pd.DataFrame({"when": pd.date_range(first, last)}),
                                     bounds={"when": (str(first.date()), str(last.date()))},
                                     datetimes={"when": "%Y-%m-%d"})["when"]
    noon = timestamp_seconds(pd.Timestamp("2020-01-05 12:00"))
    cuts = merged_cuts((), (noon,), declared.bounds, step=declared.grid_step)
    attr = dataclasses.replace(declared, cuts=cuts, bins=None)
    assert cuts[1] - cuts[0] < 1 and attr.one_value_cells == (1,)
    codes = np.ones((200, 1), dtype=np.int64)  # every row in the point cell
    out = Encoder(Schema((attr,))).decode(codes, numeric="uniform", rng=np.random.default_rng(0))["when"]
    assert (out == pd.Timestamp("2020-01-05")).all()
