"""``synthdp schema`` with datetime, cut-point, PrivTree and decimals columns: the reviewed draft gives the same run."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from synthdp.cli import main
from synthdp.core.draft import DRAFT_KEY, draft_document
from synthdp.core.errors import SchemaError
from synthdp.core.schema import Schema

FLAGS = ["--datetime", "joined=%d/%m/%Y", "--bounds", "joined=01/01/2020..31/12/2024", "amount=0.0:500",
         "age=17:90", "--decimals", "amount=2", "--cuts", "age=25,45,65"]
OPTIONS = dict(datetimes={"joined": "%d/%m/%Y"}, bounds={"joined": ("01/01/2020", "31/12/2024"),
               "amount": (0.0, 500.0), "age": (17, 90)}, decimals={"amount": 2}, cuts={"age": [25, 45, 65]})


def _table(seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    days = pd.Timestamp("2020-01-01") + pd.to_timedelta(rng.integers(0, 1800, 300), unit="D")
    return pd.DataFrame({"joined": days.strftime("%d/%m/%Y"), "amount": rng.gamma(2.0, 40.0, 300).round(2),
                         "age": rng.integers(17, 91, 300)})


def _flags_and_file(data, flags, schema_path, common, tmp_path, capsys) -> list[tuple[str, dict]]:
    """``generate`` with the domain ``flags``, then with ``--schema schema_path``: each run's table and report."""
    runs = []
    for name, domain in [("flags", flags), ("file", ["--schema", str(schema_path)])]:
        out, report = tmp_path / f"{name}.csv", tmp_path / f"{name}.json"
        assert main(["generate", str(data), "-o", str(out), "--report", str(report), *common, *domain]) == 0, \
            capsys.readouterr().err
        runs.append((out.read_text(), json.loads(report.read_text())))
    return runs


def test_a_reviewed_draft_gives_the_same_run_as_the_flags(tmp_path, capsys):
    data = tmp_path / "in.csv"
    _table(0).to_csv(data, index=False)
    draft_path = tmp_path / "schema.json"
    assert main(["schema", str(data), "-o", str(draft_path), *FLAGS]) == 0
    draft = json.loads(draft_path.read_text())
    assert DRAFT_KEY not in draft  # every column is public: nothing read off the data
    kinds = {a["name"]: a for a in draft["attributes"]}
    assert kinds["joined"]["dtype"] == "datetime64[ns]" and kinds["joined"]["format"] == "%d/%m/%Y"
    assert kinds["joined"]["origin"] == "learn"  # cells learned by PrivTree, as generate would
    assert kinds["amount"]["origin"] == "learn" and kinds["amount"]["decimals"] == 2
    assert kinds["age"]["cuts"] == [25, 45, 65] and "origin" not in kinds["age"]
    draft_path.write_text(json.dumps(draft))

    common = ["--epsilon", "2", "--delta", "1e-6", "--queries", "marginals:2", "--rounds", "3", "--seed", "7", "-q"]
    (flags_table, flags_report), (file_table, file_report) = _flags_and_file(data, FLAGS, draft_path, common,
                                                                             tmp_path, capsys)
    assert flags_table == file_table
    assert flags_report == file_report
    syn = pd.read_csv(tmp_path / "file.csv")
    assert syn["amount"].round(2).eq(syn["amount"]).all() and syn["age"].between(17, 90).all()
    assert pd.to_datetime(syn["joined"], format="%d/%m/%Y").between("2020-01-01", "2024-12-31").all()


def test_the_draft_of_public_columns_reads_nothing_off_the_data():
    first, second = draft_document(_table(0), **OPTIONS), draft_document(_table(1).iloc[:5], **OPTIONS)
    assert first == second and DRAFT_KEY not in first  # a schema of public choices, ready to use
    Schema.from_dict(first)


def test_equal_width_and_a_missing_value_read_off_the_data():
    df = _table(0)
    df.loc[3, "amount"] = np.nan
    draft = draft_document(df, **OPTIONS, discretise="equal-width")
    amount = next(a for a in draft["attributes"] if a["name"] == "amount")
    assert "origin" not in amount and amount["bins"] == 10 and amount["missing"]
    assert draft[DRAFT_KEY] == [{"column": "amount", "read": ["missing"]}]


def test_unknown_columns_and_decimals_on_a_category_are_refused():
    with pytest.raises(Exception, match=r"--cuts names unknown column\(s\) \['height'\]"):
        draft_document(_table(0), cuts={"height": [1.0]})
    with pytest.raises(Exception, match="--decimals names column 'age', which is categorical"):
        draft_document(_table(0)[["age"]], categorical=["age"], decimals={"age": 1})


@pytest.mark.parametrize("discretise", ["privtree", "equal-width"])
def test_schema_file_round_trip(tmp_path, discretise):
    schema = Schema.from_dataframe(_table(0), **OPTIONS, discretise=discretise, nullable=["amount"])
    schema.save(tmp_path / "s.json")
    assert Schema.load(tmp_path / "s.json") == schema
    draft = draft_document(_table(0), **OPTIONS, discretise=discretise, nullable=["amount"])
    assert DRAFT_KEY not in draft
    assert Schema.from_dict(draft) == schema  # the draft of public columns is the schema generate builds


def test_evaluate_cuts_cells_still_to_learn_into_public_equal_width_bins():
    df = pd.DataFrame({"amount": [1.5, 2.0], "kids": [0, 3]})
    schema = Schema.from_dataframe(df, bounds={"amount": (0.0, 500.0), "kids": (0, 5)}, discretise="privtree")
    assert schema.to_discretise == ("amount", "kids")
    fixed = schema.with_equal_width()
    assert fixed.to_discretise == () and [fixed["amount"].bins, fixed["kids"].bins] == [10, 6]
    assert fixed["kids"].dtype == "int64" and fixed["amount"].bounds == (0.0, 500.0)


def _amounts(seed: int, rows: int = 2000) -> pd.DataFrame:
    """An amount that is 0 in four rows of five (capital gains, say) and a whole-number column."""
    rng = np.random.default_rng(seed)
    amount = np.where(rng.random(rows) < 0.8, 0, rng.integers(100, 20_000, rows))
    return pd.DataFrame({"amount": amount, "hours": rng.integers(1, 100, rows)})


def test_a_numeric_column_with_read_off_bounds_is_left_to_privtree_as_with_public_bounds():
    df = _amounts(0)
    draft = draft_document(df)
    assert draft.pop(DRAFT_KEY) == [{"column": "amount", "read": ["bounds"]}, {"column": "hours", "read": ["bounds"]}]
    amount = next(a for a in draft["attributes"] if a["name"] == "amount")
    assert amount["origin"] == "learn" and amount["bins"] == 1 and amount["dtype"] == "int64"
    read_off = {a["name"]: tuple(int(b) for b in a["bounds"]) for a in draft["attributes"]}  # --bounds amount=0:19936
    assert Schema.from_dict(draft) == Schema.from_dataframe(df, bounds=read_off, discretise="privtree")
    equal_width = draft_document(df, discretise="equal-width")
    assert [a["bins"] for a in equal_width["attributes"]] == [10, 10]
    assert all("origin" not in a for a in equal_width["attributes"])
    with pytest.raises(Exception, match="discretise must be 'privtree' or 'equal-width', got 'quantiles'"):
        draft_document(df, discretise="quantiles")


def _from_reviewed_draft(df: pd.DataFrame, tmp_path, capsys) -> pd.DataFrame:
    """Draft a schema of ``df``, accept what it read off, generate from it (eps 2, 2-way marginals): the output."""
    data, draft_path, out = tmp_path / "in.csv", tmp_path / "schema.json", tmp_path / "out.csv"
    df.to_csv(data, index=False)
    assert main(["schema", str(data), "-o", str(draft_path)]) == 0
    draft = json.loads(draft_path.read_text())
    draft.pop(DRAFT_KEY)
    draft_path.write_text(json.dumps(draft))
    assert main(["generate", str(data), "-o", str(out), "--schema", str(draft_path), "--epsilon", "2",
                 "--delta", "1e-8", "--queries", "marginals:2", "--seed", "3", "-q"]) == 0, capsys.readouterr().err
    return pd.read_csv(out, dtype=str)


def test_a_reviewed_draft_keeps_a_point_mass(tmp_path, capsys):
    """The zeros of an amount come back as zeros (PrivTree gives them a cell), not spread over [0, 2000)."""
    zeros = (_from_reviewed_draft(_amounts(1), tmp_path, capsys)["amount"].astype(float) == 0).mean()
    assert 0.7 < zeros < 0.9  # equal-width bins over [0, 19999] would leave about 0.8 / 2000 of them


def test_a_draft_with_bounds_to_learn_saves_and_gives_the_same_run_as_the_flags(tmp_path, capsys):
    """``--learn-bounds`` is kept by the draft (bounds null, origin learn), not read off the data."""
    data, draft_path = tmp_path / "in.csv", tmp_path / "schema.json"
    _amounts(2).to_csv(data, index=False)
    flags = ["--learn-bounds", "amount=int64", "--bounds", "hours=1:99"]
    assert main(["schema", str(data), "-o", str(draft_path), *flags]) == 0
    draft = json.loads(draft_path.read_text())
    assert DRAFT_KEY not in draft
    amount = next(a for a in draft["attributes"] if a["name"] == "amount")
    assert amount["bounds"] is None and amount["origin"] == "learn" and amount["dtype"] == "int64"
    draft_path.write_text(json.dumps(draft))
    schema = Schema.load(draft_path)
    schema.save(tmp_path / "again.json")  # a schema with bounds to learn saves and loads
    assert Schema.load(tmp_path / "again.json") == schema

    common = ["--epsilon", "2", "--delta", "1e-8", "--queries", "marginals:2", "--seed", "5", "-q"]
    runs = _flags_and_file(data, flags, draft_path, common, tmp_path, capsys)
    assert runs[0] == runs[1]


def _dated(seed: int, rows: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    days = pd.Timestamp("2021-01-01") + pd.to_timedelta(rng.integers(0, 900, rows), unit="D")
    return pd.DataFrame({"signup": days.strftime("%d/%m/%Y"), "spend": rng.gamma(2.0, 30.0, rows).round(2),
                         "ratio": rng.random(rows), "visits": rng.poisson(3, rows)})


def test_a_text_column_of_dates_is_drafted_as_a_datetime_column_with_its_format():
    df = _dated(0)
    draft = draft_document(df)
    read = {e["column"]: e["read"] for e in draft.pop(DRAFT_KEY)}
    assert read == {"signup": ["kind (datetime)", "bounds"], "spend": ["bounds", "decimals"], "ratio": ["bounds"],
                    "visits": ["bounds"]}
    attrs = {a["name"]: a for a in draft["attributes"]}
    first, last = pd.to_datetime(df["signup"], format="%d/%m/%Y").agg(["min", "max"])
    expected = Schema.from_dataframe(df[["signup"]], datetimes={"signup": "%d/%m/%Y"}, discretise="privtree",
                                     bounds={"signup": (first.strftime("%d/%m/%Y"), last.strftime("%d/%m/%Y"))})
    assert attrs["signup"] == expected["signup"].to_dict() and attrs["signup"]["format"] == "%d/%m/%Y"
    assert attrs["spend"]["decimals"] == 2 and "decimals" not in attrs["ratio"] and "decimals" not in attrs["visits"]
    assert draft_document(df, decimals={"spend": 1})[DRAFT_KEY][1] == {"column": "spend", "read": ["bounds"]}
    # a few dates may be labels: categorical, as before; many values that are not dates: refused, as before
    assert draft_document(df.head(20))["attributes"][0]["kind"] == "categorical"
    words = pd.DataFrame({"word": [f"w{i}" for i in range(150)]})
    with pytest.raises(Exception, match="(?s)more distinct values than --max-categories 100.*'word' has 150 distinct"):
        draft_document(words)


def test_dates_of_a_date_format_come_back_as_whole_days(tmp_path, capsys):
    signup = _from_reviewed_draft(_dated(1), tmp_path, capsys)["signup"]
    assert signup.str.fullmatch(r"\d{2}/\d{2}/\d{4}").all()  # written in its format: dates, no time of day
    days = pd.to_datetime(signup, format="%d/%m/%Y")
    assert days.between("2021-01-01", "2023-06-19").all() and days.nunique() > 30


def test_learn_categories_drafts_a_ready_schema_that_runs_as_generate_without_one(tmp_path, capsys):
    """``--learn-categories all`` leaves text columns to partition selection instead of reading their categories off:
    nothing is read off, the file is ready, and ``--schema`` gives the run ``generate`` makes without a schema."""
    data, schema_path = tmp_path / "in.csv", tmp_path / "schema.json"
    rng = np.random.default_rng(2)
    df = _table(0).assign(city=rng.choice(["Oslo", "Rome", "?"], 300), code=rng.choice(["001", "002"], 300))
    df.to_csv(data, index=False)
    flags = [*FLAGS, "--categorical", "code"]  # codes that read as numbers: declared categorical, as generate asks
    assert main(["schema", str(data), "-o", str(schema_path), *flags, "--missing", "?",
                 "--learn-categories", "all"]) == 0
    assert "nothing was read off the data: ready" in capsys.readouterr().out
    draft = json.loads(schema_path.read_text())
    learned = {a["name"]: a for a in draft["attributes"] if a["kind"] == "categorical"}
    assert DRAFT_KEY not in draft and set(learned) == {"city", "code"}
    assert all(a["origin"] == "learn" and "categories" not in a and a["dtype"] is None for a in learned.values())
    assert Schema.load(schema_path).to_learn == ("city", "code")
    common = ["--epsilon", "2", "--delta", "1e-6", "--queries", "marginals:2", "--seed", "7", "-q", "--missing", "?"]
    (flags_table, flags_report), (file_table, file_report) = _flags_and_file(data, flags, schema_path, common,
                                                                             tmp_path, capsys)
    assert flags_table == file_table and flags_report == file_report
    assert "001" in file_table  # text, labelled as written
    with pytest.raises(SchemaError, match=r"--decimals names column 'city', which is categorical"):
        draft_document(df, learn_categories=["city"], decimals={"city": 2})
    assert main(["schema", str(data), "-o", str(tmp_path / "x.json"), *FLAGS, "--learn-categories", "age"]) == 2
    assert "--learn-categories names ['age'], which --bounds" in capsys.readouterr().err
    assert not (tmp_path / "x.json").exists()


def _housing(n: int = 400, seed: int = 3) -> pd.DataFrame:
    """Six columns of numbers and a text column, as the housing table that came back empty."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"price": rng.lognormal(12, 0.5, n).round(0), "rooms": rng.integers(1, 8, n),
                         "lat": rng.normal(37, 1, n), "lon": rng.normal(-122, 1, n), "age": rng.integers(1, 52, n),
                         "income": rng.lognormal(1, 0.4, n), "city": rng.choice(["Oakland", "Fresno", "Napa"], n)})


def test_learn_categories_all_never_turns_a_column_of_numbers_into_text():
    """The six numeric columns became text categories, came back 100% missing, silently."""
    draft = draft_document(_housing(), learn_categories=["all"])
    kinds = {a["name"]: (a["kind"], a.get("origin")) for a in draft["attributes"]}
    assert kinds["city"] == ("categorical", "learn")
    assert all(kinds[c][0] == "numeric" for c in ("price", "rooms", "lat", "lon", "age", "income")), kinds
    # their bounds were read off for the owner to review: the draft is refused until replaced
    assert {e["column"] for e in draft[DRAFT_KEY]} == {"price", "rooms", "lat", "lon", "age", "income"}


def test_learn_categories_all_never_turns_a_column_of_dates_into_text():
    """A column of dates (text in one format, or datetime64) is drafted as dates with its first and last day to
    review, not left to be learned as thousands of categories; ``categorical`` keeps it text."""
    df = _housing()
    days = pd.Timestamp("2013-01-01") + pd.to_timedelta(np.arange(len(df)) % 365, unit="D")
    df = df.assign(sold=days.strftime("%Y-%m-%dT%H:%M:%SZ"), listed=days)
    draft = draft_document(df, learn_categories=["all"])
    kinds = {a["name"]: (a["kind"], a.get("origin")) for a in draft["attributes"]}
    assert kinds["city"] == ("categorical", "learn")
    assert kinds["sold"][0] == kinds["listed"][0] == "numeric", kinds
    read = {e["column"]: e["read"] for e in draft[DRAFT_KEY]}
    assert read["sold"][:2] == read["listed"][:2] == ["kind (datetime)", "bounds"]
    kept = draft_document(df, learn_categories=["all"], categorical=["sold"])
    assert {a["name"]: a.get("origin") for a in kept["attributes"]}["sold"] == "learn"


def test_whole_numbers_with_missing_values_are_drafted_as_integers_to_learn_bounds_for(tmp_path, capsys):
    """A column of whole numbers with a missing value (pandas reads it as reals) keeps integers: its type is read
    off for review; a column of reals stays real."""
    df = _housing().assign(delay=lambda d: d["rooms"].where(d.index % 7 > 0) * 15)
    assert df["delay"].dtype == "float64"
    draft = draft_document(df, learn_bounds=["all"], learn_categories=["all"])
    types = {a["name"]: a["dtype"] for a in draft["attributes"]}
    assert types["delay"] == "int64" and types["lat"] == "float64", types
    assert "dtype" in {e["column"]: e["read"] for e in draft[DRAFT_KEY]}["delay"]
    assert {a["name"]: a["dtype"] for a in draft_document(df, learn_bounds=["all"], decimals={"delay": 1},
                                                        learn_categories=["all"])["attributes"]}["delay"] == "float64"


def test_reals_to_learn_bounds_for_keep_the_places_they_are_written_to():
    """A price in cents with its bounds to learn is drafted with 2 decimals, listed for review, as it is with
    bounds read off the data; a column of reals written to many places gets none."""
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"price": rng.uniform(5, 40, 500).round(2), "ratio": rng.uniform(0, 1, 500)})
    for learn in (["all"], []):
        draft = draft_document(df, learn_bounds=learn)
        places = {a["name"]: a.get("decimals") for a in draft["attributes"]}
        assert places["price"] == 2 and places["ratio"] is None, (learn, places)
        assert "decimals" in {e["column"]: e["read"] for e in draft[DRAFT_KEY]}["price"]
    schema = Schema.from_dict({k: v for k, v in draft_document(df, learn_bounds=["all"]).items() if k != DRAFT_KEY})
    assert schema["price"].to_dict().get("decimals") == 2


def test_learn_bounds_all_leaves_every_column_of_numbers_to_private_bounds(tmp_path, capsys):
    data, schema_path = tmp_path / "h.csv", tmp_path / "s.json"
    _housing().to_csv(data, index=False)
    assert main(["schema", str(data), "-o", str(schema_path), "--learn-bounds", "all", "--bins", "rooms=7",
                 "--bounds", "rooms=1:8", "--learn-categories", "all"]) == 0
    # the draft writes every type out (those pandas gave, under review): no warning that they come back as reals
    assert "no declared type" not in capsys.readouterr().err
    # nothing of the values is read off but the types pandas gave the CSV's columns, listed for review
    read = {e["column"]: e["read"] for e in json.loads(schema_path.read_text())[DRAFT_KEY]}
    assert all(set(r) <= {"dtype", "decimals"} for r in read.values()), read
    schema = Schema.from_dict({k: v for k, v in json.loads(schema_path.read_text()).items() if k != DRAFT_KEY})
    assert set(schema.to_bound) == {"price", "lat", "lon", "age", "income"} and schema["rooms"].bounds == (1, 8)
    assert schema.to_learn == ("city",)


def test_every_column_over_the_cap_is_named_once_with_advice_for_its_kind():
    rng = np.random.default_rng(0)
    df = pd.DataFrame({"id": [f"u{i}" for i in range(300)], "street": rng.choice([f"s{i}" for i in range(250)], 300),
                       "zip": rng.integers(10000, 99999, 300), "kind": rng.choice(["a", "b"], 300)})
    with pytest.raises(SchemaError) as caught:
        draft_document(df, categorical=["zip"])
    message = str(caught.value)
    assert "3 column(s)" in message and all(f"column {c!r} has" in message for c in ("id", "street", "zip"))
    text_advice = [line for line in message.splitlines() if "'id'" in line or "'street'" in line]
    assert all("--drop" in line and "bounds" not in line for line in text_advice), text_advice
    assert "--bounds zip=LO:HI" in next(line for line in message.splitlines() if "'zip'" in line)
