"""``synthdp generate PARENT.csv CHILD.csv --link ... -o DIR``: two linked tables, one file each (docs/privacy.md
§12), nothing overwritten and nothing half-written."""

import json

import numpy as np
import pandas as pd
import pytest

import synthdp
from synthdp.cli import main

LINK = ["--link", "orders.cid=customers.cid", "--max-rows-per-unit", "3"]
QUICK = ["--epsilon", "2", "--delta", "1e-9", "--queries", "marginals:2", "--seed", "1", "-q"]


@pytest.fixture
def inputs(tmp_path):
    rng = np.random.default_rng(0)
    customers = pd.DataFrame({"cid": np.arange(1000) * 3 + 7, "region": rng.choice(["N", "S"], 1000)})
    owner = np.repeat(customers["cid"], rng.integers(0, 4, 1000))
    orders = pd.DataFrame({"cid": owner, "amount": rng.uniform(0, 100, len(owner)).round(2)})
    customers.to_csv(tmp_path / "customers.csv", index=False)
    orders.to_csv(tmp_path / "orders.csv", index=False)
    (tmp_path / "out").mkdir()
    return tmp_path


def run(folder, *extra):
    return main(["generate", str(folder / "customers.csv"), str(folder / "orders.csv"), *LINK, "-o",
                 str(folder / "out"), "--bounds", "amount=0.0:100.0", "--decimals", "amount=2", *QUICK, *extra])


def test_writes_one_file_per_table_with_fresh_keys(inputs, capsys):
    assert run(inputs, "--report", str(inputs / "out" / "report.json"), "--save-model", str(inputs / "pair.zip")) == 0
    customers = pd.read_csv(inputs / "out" / "customers.csv")
    orders = pd.read_csv(inputs / "out" / "orders.csv")
    assert list(customers["cid"]) == list(range(1, len(customers) + 1))
    assert orders["cid"].isin(customers["cid"]).all() and list(orders.columns) == ["cid", "amount"]
    assert "two linked tables" in capsys.readouterr().out
    assert sorted(p.name for p in (inputs / "out").iterdir()) == ["customers.csv", "orders.csv", "report.json"]


@pytest.mark.parametrize("extra, message", [
    (["--categorical", "cid"], "both tables"),
    (["--categorical", "nope"], "neither table"),
])
def test_a_column_option_must_name_a_column_of_one_table(inputs, capsys, extra, message):
    assert run(inputs, *extra) == 2
    assert message in capsys.readouterr().err
    assert list((inputs / "out").iterdir()) == []


def test_existing_outputs_are_never_overwritten(inputs, capsys):
    (inputs / "out" / "orders.csv").write_text("keep me")
    assert run(inputs) == 2
    assert "exist already" in capsys.readouterr().err
    assert (inputs / "out" / "orders.csv").read_text() == "keep me"
    assert list((inputs / "out").iterdir()) == [inputs / "out" / "orders.csv"]


def test_a_second_file_needs_a_link(inputs, capsys):
    code = main(["generate", str(inputs / "customers.csv"), str(inputs / "orders.csv"), "-o", str(inputs / "out"),
                 *QUICK])
    assert code == 2 and "--link" in capsys.readouterr().err


def test_sample_draws_the_saved_pair_into_a_folder_as_python_does(inputs, capsys):
    assert run(inputs, "--save-model", str(inputs / "pair.zip")) == 0
    (inputs / "more").mkdir()
    assert main(["sample", str(inputs / "pair.zip"), "-n", "40", "-o", str(inputs / "more"), "--seed", "3",
                 "--condition", "region=S"]) == 0
    drawn = synthdp.Synthesizer.load(inputs / "pair.zip").sample(40, random_state=3, conditions={"region": "S"})
    for name in ("customers", "orders"):
        assert (inputs / "more" / f"{name}.csv").read_bytes() == drawn[name].to_csv(index=False).encode()
    customers = pd.read_csv(inputs / "more" / "customers.csv")
    assert len(customers) == 40 and set(customers["region"]) == {"S"}
    assert "more/orders.csv" in capsys.readouterr().out


def test_a_child_date_is_written_in_its_format_by_generate_and_by_sample(inputs):
    orders = pd.read_csv(inputs / "orders.csv")
    days = np.random.default_rng(1).integers(0, 365, len(orders))
    orders["day"] = (pd.Timestamp("2024-01-01") + pd.to_timedelta(days, unit="D")).strftime("%d/%m/%Y")
    orders.to_csv(inputs / "orders.csv", index=False)
    assert run(inputs, "--datetime", "day=%d/%m/%Y", "--bounds", "day=2024-01-01..2024-12-31",
               "--save-model", str(inputs / "pair.zip")) == 0
    (inputs / "more").mkdir()
    assert main(["sample", str(inputs / "pair.zip"), "-n", "30", "-o", str(inputs / "more"), "--seed", "2"]) == 0
    for folder in ("out", "more"):
        written = pd.read_csv(inputs / folder / "orders.csv", dtype=str)["day"]
        assert len(written) and written.str.fullmatch(r"\d\d/\d\d/2024").all(), written.head()


@pytest.mark.parametrize("problem", ["not a folder", "exists", "child condition", "bad n"])
def test_sample_of_a_pair_refuses_before_writing_anything(inputs, capsys, problem):
    assert run(inputs, "--save-model", str(inputs / "pair.zip")) == 0
    (inputs / "more").mkdir()
    args = ["sample", str(inputs / "pair.zip"), "-n", "5", "-o", str(inputs / "more")]
    expected = {"not a folder": "must be an existing folder", "exists": "exist already",
                "child condition": "'amount' is a column of the child table", "bad n": "-n 0"}[problem]
    if problem == "not a folder":
        args[-1] = str(inputs / "more" / "s.csv")
    elif problem == "exists":
        (inputs / "more" / "orders.csv").write_text("kept\n")
    elif problem == "child condition":
        args += ["--condition", "amount=10"]
    else:
        args[3] = "0"
    before = sorted(p.name for p in (inputs / "more").iterdir())
    assert main(args) == 2
    assert expected in capsys.readouterr().err
    assert sorted(p.name for p in (inputs / "more").iterdir()) == before
    if problem == "exists":
        assert (inputs / "more" / "orders.csv").read_text() == "kept\n"


def test_drop_leaves_a_column_out_of_the_table_that_holds_it(inputs, capsys):
    orders = pd.read_csv(inputs / "orders.csv")
    orders.insert(0, "oid", np.arange(len(orders)) + 100)  # the child's own key: an identifier, never modelled
    orders.to_csv(inputs / "orders.csv", index=False)
    assert run(inputs, "--drop", "oid") == 0
    assert list(pd.read_csv(inputs / "out" / "orders.csv").columns) == ["cid", "amount"]


@pytest.mark.parametrize("extra, message", [
    (["--drop", "nope"], "neither table"),
    (["--drop", "cid"], "both tables"),
    (["--target-error", "0.05"], "not available with --link"),
])
def test_refused_before_anything_is_read_privately(inputs, capsys, extra, message):
    assert run(inputs, *extra) == 2
    assert message in capsys.readouterr().err
    assert list((inputs / "out").iterdir()) == []


def test_max_rows_per_unit_auto_chooses_k_privately_and_the_report_says_so(inputs, capsys):
    out = inputs / "out"
    code = main(["generate", str(inputs / "customers.csv"), str(inputs / "orders.csv"), "--link",
                 "orders.cid=customers.cid", "--max-rows-per-unit", "auto", "-o", str(out), "--bounds",
                 "amount=0.0:100.0", "--decimals", "amount=2", "--report", str(out / "report.json"), *QUICK])
    assert code == 0
    report = json.loads((out / "report.json").read_text())
    k = report["max_rows_per_unit"]
    assert report["max_rows_per_unit_choice"]["value"] == k and report["max_rows_per_unit_choice"]["epsilon"] == 0.1
    assert pd.read_csv(out / "orders.csv").groupby("cid").size().max() <= k
    assert "k chosen privately for epsilon=0.1" in capsys.readouterr().out


def _schema(path, *attributes):
    path.write_text(json.dumps({"format": "synthdp-schema", "version": 1, "missing_values": [],
                                "attributes": list(attributes)}))
    return str(path)


REGION = {"name": "region", "kind": "categorical", "categories": ["N", "S", "W"], "missing": False, "dtype": None}
AMOUNT = {"name": "amount", "kind": "numeric", "bounds": [0.0, 200.0], "bins": 4, "clip": False, "origin": "public",
          "decimals": 2, "missing": False, "dtype": "float64"}


def _with_schemas(folder, *schemas):
    return main(["generate", str(folder / "customers.csv"), str(folder / "orders.csv"), *LINK, "-o",
                 str(folder / "out"), "--save-model", str(folder / "pair.zip"), *QUICK,
                 *[flag for schema in schemas for flag in ("--schema", schema)]])


@pytest.mark.parametrize("names", [
    ("customers.json", "orders.json"),          # by the file's stem
    ("P_schema.json", "C_schema.json"),         # by the columns each lists
    ("customers=a.json", "orders=b.json"),      # named
])
def test_each_schema_file_applies_to_its_table(inputs, names):
    """The parent model's region has the file's three categories and the joined model's amount the file's bounds:
    each file went to its table, and nothing was learned."""
    paths = [_schema(inputs / name.partition("=")[2 if "=" in name else 0], attribute)
             for name, attribute in zip(names, (REGION, AMOUNT))]
    given = [f"{name.partition('=')[0]}={path}" if "=" in name else path for name, path in zip(names, paths)]
    assert _with_schemas(inputs, *given[::-1]) == 0  # in any order
    model = synthdp.Synthesizer.load(inputs / "pair.zip").model_
    assert model.parent.schema["region"].categories == ("N", "S", "W")
    assert model.joined.schema["amount"].bounds == (0.0, 200.0)
    assert model.joined.schema["customers.region"].categories == ("N", "S", "W")


@pytest.mark.parametrize("make, extra, message", [
    (lambda f: [_schema(f / "x.json", {**REGION, "name": "cid"})], [], "both tables"),
    (lambda f: [_schema(f / "x.json", {**REGION, "name": "nope"})], [], "neither table"),
    (lambda f: [_schema(f / "customers.json", REGION), _schema(f / "x.json", REGION)], [],
     "has a schema file already"),
    (lambda f: [_schema(f / "customers.json", REGION, {**AMOUNT, "name": "cid", "dtype": "int64", "decimals": None})],
     [], "a key column of table 'customers'"),
    (lambda f: [_schema(f / "orders.json", AMOUNT)], ["--bounds", "amount=0:100"],
     "whose --schema file fixes its whole domain"),
    (lambda f: [_schema(f / "customers.json", REGION, AMOUNT)], [], "lists ['amount'], which table 'customers' does "
     "not hold; remove them from the file, or give it to the table that holds them"),
    (lambda f: ["customers=" + _schema(f / "x.json", AMOUNT)], [], "which table 'customers' does not hold"),
])
def test_a_schema_file_that_fits_no_one_table_is_refused_before_anything_runs(inputs, capsys, make, extra, message):
    files = [flag for path in make(inputs) for flag in ("--schema", path)]
    code = main(["generate", str(inputs / "customers.csv"), str(inputs / "orders.csv"), *LINK, "-o",
                 str(inputs / "out"), *QUICK, *extra, *files])
    assert code == 2 and message in capsys.readouterr().err
    assert list((inputs / "out").iterdir()) == []


def test_a_schema_file_must_list_every_column_of_its_table_but_the_keys(inputs, capsys):
    orders = pd.read_csv(inputs / "orders.csv").assign(note="x")
    orders.to_csv(inputs / "orders.csv", index=False)
    assert _with_schemas(inputs, _schema(inputs / "orders.json", AMOUNT)) == 2
    assert "the schema has no column 'note'" in capsys.readouterr().err


def test_one_table_takes_one_schema_file(inputs, capsys):
    paths = [_schema(inputs / "a.json", REGION), _schema(inputs / "b.json", REGION)]
    code = main(["generate", str(inputs / "customers.csv"), "-o", str(inputs / "out" / "c.csv"), *QUICK,
                 "--schema", paths[0], "--schema", paths[1]])
    assert code == 2 and "one table takes one schema file" in capsys.readouterr().err


def test_a_file_that_fits_both_tables_goes_to_the_one_its_stem_or_name_names(inputs):
    """Both tables hold region: the file named customers.json is the parent's, orders=FILE the child's, whatever
    their columns allow."""
    orders = pd.read_csv(inputs / "orders.csv")
    orders.assign(region=np.where(orders["amount"] > 50, "N", "E")).to_csv(inputs / "orders.csv", index=False)
    child_region = {**REGION, "categories": ["N", "E"]}
    parent = _schema(inputs / "customers.json", REGION)
    child = _schema(inputs / "o.json", child_region, AMOUNT)
    assert _with_schemas(inputs, f"orders={child}", parent) == 0
    model = synthdp.Synthesizer.load(inputs / "pair.zip").model_
    assert model.parent.schema["region"].categories == ("N", "S", "W")
    assert model.joined.schema["region"].categories == ("N", "E")
