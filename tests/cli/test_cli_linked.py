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


def test_the_saved_pair_is_sampled_from_python_and_refused_by_sample_with_the_way(inputs, capsys):
    assert run(inputs, "--save-model", str(inputs / "pair.zip")) == 0
    drawn = synthdp.Synthesizer.load(inputs / "pair.zip").sample(20, random_state=0)
    assert len(drawn["customers"]) == 20
    assert main(["sample", str(inputs / "pair.zip"), "-n", "5", "-o", str(inputs / "s.csv")]) == 2
    assert "Synthesizer.load(path).sample(n)" in capsys.readouterr().err


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
