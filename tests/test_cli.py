"""The synthdp command: generate/evaluate round trips, errors, atomic outputs."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd
import pytest

from synthdp.cli import main

ADULT_COLUMNS = ("age,workclass,fnlwgt,education,education-num,marital-status,occupation,relationship,race,sex,"
                 "capital-gain,capital-loss,hours-per-week,native-country,income")
ADULT_OPTS = ["--columns", ADULT_COLUMNS, "--missing", "?", "--bounds", "age=17:90", "--bins", "age=8",
              "--bounds", "fnlwgt=0:1500000", "--bounds", "capital-gain=0:100000", "--bounds", "capital-loss=0:5000",
              "--bounds", "hours-per-week=1:99", "--categorical", "education-num"]


def test_version_and_help():
    out = subprocess.run([sys.executable, "-m", "synthdp.cli", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("synthdp ")


def test_raw_adult_round_trip(shared_data_dir, tmp_path, capsys):
    out, report = tmp_path / "syn.csv", tmp_path / "report.json"
    code = main(["generate", str(shared_data_dir / "adult-raw.data"), "-o", str(out), "--epsilon", "1",
                 "--delta", "1e-9", "--queries", "marginals:2", "--rounds", "5", "--samples-per-round", "10", "--burn-in", "0",
                 "--seed", "0", "--report", str(report), "-q", *ADULT_OPTS])
    assert code == 0
    syn = pd.read_csv(out)
    assert list(syn.columns) == ADULT_COLUMNS.split(",") and len(syn) == 50
    assert set(syn["sex"]) <= {"Male", "Female"}
    assert set(syn["income"]) <= {"<=50K", ">50K"}
    assert syn["age"].str.fullmatch(r"\d+-\d+").all()
    rep = json.loads(report.read_text())
    assert rep["epsilon_spent"] <= 1.0 and len(rep["ledger"]) == 5
    assert "wrote 50 rows" in capsys.readouterr().out

    code = main(["evaluate", str(shared_data_dir / "adult-raw.data"), str(out), "--queries", "marginals:1",
                 *ADULT_OPTS])
    assert code == 0


@pytest.mark.parametrize("content, args, match", [
    ("", [], "empty"),
    ("a,b\n", [], "no rows"),
    ("a,b\n1.5,x\n2.5,y\n", [], "'a'"),
    ("a,b\nx,y\nz,w\n", ["--bounds", "c=0:1"], "'c'"),
    ("a,b\nx,y\nz,w\n", ["--epsilon", "-1"], "epsilon"),
    ("a,b\nx,y\nz,w\n", ["--queries", "bogus"], "query"),
    ("a,b\nx,y\nz,w\n", ["--oracle", "nope"], "oracle"),
    ("a,b\nx,y\nz,w\n", ["--delta", "0.9", "--relation", "replace-one"], "delta"),
    ("a,b\nx,y\nz,w\n", ["--delta", "1.5"], "delta"),
])
def test_errors_exit_nonzero_and_write_nothing(tmp_path, capsys, content, args, match):
    src, out = tmp_path / "in.csv", tmp_path / "out.csv"
    src.write_text(content)
    argv = ["generate", str(src), "-o", str(out), "--queries", "marginals:1", "--rounds", "2", "-q"]
    if "--epsilon" not in args:
        argv += ["--epsilon", "1"]
    code = main(argv + args)
    err = capsys.readouterr().err
    assert code == 2 and match in err and err.startswith("synthdp: error:")
    assert list(tmp_path.iterdir()) == [src], "no output, not even a temporary file, may be left behind"


def test_missing_input_file(tmp_path, capsys):
    assert main(["generate", str(tmp_path / "nope.csv"), "-o", str(tmp_path / "o.csv"), "--epsilon", "1"]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_demo_beats_an_uninformed_table(tmp_path, monkeypatch, capsys):
    import re

    monkeypatch.chdir(tmp_path)
    assert main(["demo", "-q"]) == 0
    out = capsys.readouterr().out
    ours = float(re.search(r"synthdp \(epsilon=1.0\): .*mean TV ([0-9.]+)", out).group(1))
    uniform = float(re.search(r"uniform random table .*mean TV ([0-9.]+)", out).group(1))
    assert ours < 0.5 * uniform, out
    assert (tmp_path / "results" / "demo-synthetic.csv").is_file()
