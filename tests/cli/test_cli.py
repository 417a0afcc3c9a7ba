"""The synthdp command: schema/generate/evaluate round trips, errors, signals, progress, atomic outputs."""

from __future__ import annotations

import json
import logging
import os
import re
import signal
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from synthdp.cli import main
from synthdp.core.errors import SchemaError
from synthdp.core.schema import Attribute, Schema

#: End-to-end runs of the command line: ``-m 'not integration'`` leaves them out.
pytestmark = pytest.mark.integration

ADULT_COLUMNS = ("age,workclass,fnlwgt,education,education-num,marital-status,occupation,relationship,race,sex,"
                 "capital-gain,capital-loss,hours-per-week,native-country,income")
ADULT_OPTS = ["--columns", ADULT_COLUMNS, "--missing", "?", "--bounds", "age=17:90", "--bins", "age=8",
              "--bounds", "fnlwgt=0:1500000", "capital-gain=0:100000", "capital-loss=0:5000", "hours-per-week=1:99",
              "--categorical", "education-num"]


def test_version_and_help():
    out = subprocess.run([sys.executable, "-m", "synthdp.cli", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.startswith("synthdp ")


def reviewed_schema(raw, folder) -> str:
    """``synthdp schema`` on the raw Adult file, then the owner's review (here: accepting the draft as is)."""
    path = folder / "adult-schema.json"
    assert main(["schema", str(raw), "-o", str(path), *ADULT_OPTS]) == 0
    draft = json.loads(path.read_text())
    read = {e["column"]: e["read"] for e in draft.pop("_read_off_data")}
    assert read["native-country"] == ["categories", "missing"] and "hours-per-week" not in read
    path.write_text(json.dumps(draft))
    return str(path)


def test_raw_adult_round_trip(shared_data_dir, tmp_path, capsys):
    raw = shared_data_dir / "adult-raw.data"
    schema = reviewed_schema(raw, tmp_path)
    read = ["--columns", ADULT_COLUMNS, "--missing", "?", "--schema", schema]
    out, report = tmp_path / "syn.csv", tmp_path / "report.json"
    code = main(["generate", str(raw), "-o", str(out), "--epsilon", "1",
                 "--delta", "1e-9", "--queries", "marginals:2", "--rounds", "5", "--samples-per-round", "10",
                 "--burn-in", "0", "--seed", "0", "--report", str(report), "-q", *read])
    assert code == 0, capsys.readouterr().err
    syn = pd.read_csv(out)
    assert list(syn.columns) == ADULT_COLUMNS.split(",") and len(syn) == 50
    assert set(syn["sex"]) <= {"Male", "Female"}
    assert set(syn["income"]) <= {"<=50K", ">50K"}
    assert syn["age"].dtype == np.int64 and syn["age"].between(17, 90).all()  # numbers by default, in the bounds
    rep = json.loads(report.read_text())
    assert rep["numeric_values"].startswith("numbers drawn uniformly inside each released cell")
    assert rep["epsilon_spent"] <= 1.0 and rep["rounds"] == 5
    assert "(50 rows)" in capsys.readouterr().out

    code = main(["evaluate", str(raw), str(out), "--queries", "marginals:1", "--plot", str(tmp_path / "e.svg"), *read])
    assert code == 0
    assert (tmp_path / "e.svg").read_text().lstrip().startswith("<?xml")


def test_a_draft_schema_is_refused_until_reviewed(shared_data_dir, tmp_path, capsys):
    raw = shared_data_dir / "adult-raw.data"
    draft = tmp_path / "draft.json"
    assert main(["schema", str(raw), "-o", str(draft), "--columns", ADULT_COLUMNS, "--missing", "?"]) == 0
    read = {e["column"]: e["read"] for e in json.loads(draft.read_text())["_read_off_data"]}
    assert read["age"] == ["bounds"] and read["sex"] == ["categories"]  # nothing given: all read off
    assert "read off the data, review: age: bounds" in capsys.readouterr().out
    code = main(["generate", str(raw), "-o", str(tmp_path / "o.csv"), "--epsilon", "1", "--schema", str(draft),
                 "--columns", ADULT_COLUMNS, "--missing", "?"])
    assert code == 2 and "is a draft" in capsys.readouterr().err
    with pytest.raises(SchemaError, match="is a draft: these parts were read off the data"):  # Python too
        Schema.load(draft)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["draft.json"]


def test_sigterm_stops_with_a_message_and_leaves_nothing(tmp_path):
    import signal
    import time

    (tmp_path / "in.csv").write_text("a,b\n" + "1,2\n3,0\n" * 50)
    argv = [sys.executable, "-m", "synthdp.cli", "generate", "in.csv", "-o", "out.csv", "--report", "r.json",
            "--epsilon", "1", "--delta", "1e-6", "--rounds", "5000", "--queries", "marginals:1",
            "--bounds", "a=0:3", "b=0:3", "--bins", "a=4", "b=4"]
    proc = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while "synthdp rounds" not in (line := proc.stderr.readline()) and time.monotonic() < deadline:
        assert proc.poll() is None, line  # still starting up
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, err
    assert "interrupted (SIGTERM); nothing was written" in err and "Traceback" not in err
    charged = re.search(r"; the privacy ledger had been charged epsilon=([0-9.e-]+), delta=([0-9.e-]+) by the private "
                        r"steps that ran: a new run on the same data spends again", err)
    assert charged or "; no privacy budget was charged (no private step had run)" in err, err
    assert charged is None or 0 < float(charged[1]) <= 1 and 0 <= float(charged[2]) <= 1e-6
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


INTERRUPTED_RUN = ["--epsilon", "1", "--delta", "1e-6", "--queries", "marginals:1", "--bounds", "a=0:3", "b=0:3",
                   "--bins", "a=4", "b=4", "--seed", "0", "-q"]


@pytest.mark.parametrize("where, charged", [
    ("synthdp.api.public_schema", "; no privacy budget was charged (no private step had run)"),
    ("synthdp.api.finish", "; the privacy ledger had been charged epsilon=1, delta=1e-06 by the private steps"),
    ("synthdp.files.csvfile.dump_json", "; the privacy ledger had been charged epsilon=1, delta=1e-06 by the private "
                                        "steps"),
])
def test_an_interrupt_says_what_the_ledger_was_charged(where, charged, tmp_path, monkeypatch, capsys):
    """Before the first private step nothing; after the filter opened (select-measure-estimate charges its whole
    budget then, docs/privacy.md §8.4) or while the outputs are written, what the release spent."""
    from synthdp.files.outputs import Interrupted

    (tmp_path / "in.csv").write_text("a,b\n" + "1,2\n3,0\n" * 50)
    argv = ["generate", str(tmp_path / "in.csv"), "-o", str(tmp_path / "out.csv"), "--report",
            str(tmp_path / "r.json"), *INTERRUPTED_RUN]

    def interrupt(*args, **kwargs):
        raise Interrupted(signal.SIGINT)

    monkeypatch.setattr(where, interrupt)
    assert main(argv) == 130
    err = capsys.readouterr().err
    assert f"synthdp: interrupted (SIGINT); nothing was written{charged}" in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.csv"]


def test_the_charge_an_interrupt_states_is_what_the_run_reports(tmp_path, capsys):
    (tmp_path / "in.csv").write_text("a,b\n" + "1,2\n3,0\n" * 50)
    assert main(["generate", str(tmp_path / "in.csv"), "-o", str(tmp_path / "out.csv"), "--report",
                 str(tmp_path / "r.json"), *INTERRUPTED_RUN]) == 0
    report = json.loads((tmp_path / "r.json").read_text())
    assert f"epsilon={report['epsilon_spent']:.6g}, delta={report['delta_spent']:.3g}" == "epsilon=1, delta=1e-06"


def test_progress_lines_in_logs_with_an_estimate_and_without_times_under_prsma():
    import io

    from synthdp.core.progress import RoundProgress

    log = io.StringIO()
    bar = RoundProgress(100, interval=0.0, stream=log)
    for t in range(1, 101):
        bar.update(t, failures=0)
    bar.close()
    lines = log.getvalue().splitlines()
    assert len(lines) == 101 and lines[0] == "synthdp rounds: 0/100"
    assert lines[1].startswith("synthdp rounds: 1/100 (1%), ") and "elapsed, about" in lines[1] and "left" in lines[1]
    assert "done in" in lines[-1]

    log = io.StringIO()
    bar = RoundProgress(100, interval=0.0, timings=False, stream=log)
    for t in range(1, 101):
        bar.update(t, failures=3)
    bar.close()
    lines = log.getvalue().splitlines()
    assert lines == (["synthdp rounds: 0/100"] + [f"synthdp rounds: {k}/100 ({k}%)" for k in range(10, 100, 10)]
                     + ["synthdp rounds: 100/100 done"])

    log = io.StringIO()
    bar = RoundProgress(100, timings=False, stream=log)
    bar.update(37)
    bar.close(37)  # a loop that stops early (the measurement filter) says where and why, not "37/100 done"
    assert log.getvalue().splitlines()[-1] == "synthdp rounds: stopped at 37 rounds: budget spent (planned up to 100)"

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    term = Terminal()
    bar = RoundProgress(100, timings=False, stream=term)
    bar.update(37)
    bar.close(37)  # the bar goes, the reason stays
    assert term.getvalue().rstrip().endswith("synthdp rounds: stopped at 37 rounds: budget spent (planned up to 100)")


def test_prsma_player_hides_its_timings():
    from synthdp.methods.game.players import PRSMAPlayer, RSPMPlayer, WorkloadPlayer

    assert PRSMAPlayer.timings_private
    assert not getattr(RSPMPlayer, "timings_private", False) and not getattr(WorkloadPlayer, "timings_private", False)


NUMERIC = ["--bounds", "a=0:3", "b=0:3"]


@pytest.mark.parametrize("content, args, match", [
    ("", [], "empty"),
    ("a,b\n", [], "no rows"),
    ("a,b\n1.5,x\n2.5,y\n", [], "'a'"),
    ("a,b\n1,2\n0,3\n", ["--bounds", "c=0:1", *NUMERIC], "'c'"),
    ("a,b\n1,2\n0,3\n", ["--epsilon", "-1", *NUMERIC], "epsilon"),
    ("a,b\n1,2\n0,3\n", ["--queries", "bogus", *NUMERIC], "query"),
    ("a,b\n1,2\n0,3\n", ["--oracle", "nope", *NUMERIC], "oracle"),
    ("a,b\n1,2\n0,3\n", ["--delta", "0.9", "--relation", "replace-one", *NUMERIC], "delta"),
    ("a,b\n1,2\n0,3\n", ["--delta", "1.5", *NUMERIC], "delta"),
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


def test_read_csv_reads_the_raw_adult_file_as_the_cli_does(shared_data_dir):
    from synthdp.files.csvfile import read_csv

    df = read_csv(shared_data_dir / "adult-raw.data", missing=["?"], columns=ADULT_COLUMNS.split(","))
    assert "Federal-gov" in set(df["workclass"]) and df["workclass"].isna().any()  # ' ?' is the token '?'
    # every field as text (docs/privacy.md §10.7)
    assert all(pd.api.types.is_string_dtype(df[c].dtype) for c in df.columns)
    assert not any(df[c].dropna().str.startswith(" ").any() for c in df.columns)
    assert df["age"].iloc[0] == "39"
    typed = read_csv(shared_data_dir / "adult-raw.data", missing=["?"], columns=ADULT_COLUMNS.split(","), typed=True)
    assert typed["age"].dtype.kind == "i" and typed["workclass"].equals(df["workclass"])  # for drafting a schema


def test_method_flag_runs_measure_and_refuses_game_settings(tmp_path, capsys):
    from synthdp.datasets.demo import demo_dataframe, demo_schema

    src, out, report = tmp_path / "in.csv", tmp_path / "out.csv", tmp_path / "report.json"
    demo_dataframe(n=400).to_csv(src, index=False)
    demo_schema().save(tmp_path / "schema.json")
    base = ["generate", str(src), "--epsilon", "1", "--delta", "1e-9", "--queries", "marginals:2", "--seed", "0", "-q",
            "--schema", str(tmp_path / "schema.json")]
    assert main([*base, "-o", str(out), "--report", str(report), "--method", "measure"]) == 0
    rep = json.loads(report.read_text())
    assert rep["method"] == "measure" and rep["measurements"] and rep["plan"]["method"]["value"] == "measure"
    out.unlink()
    assert main([*base, "-o", str(out), "--method", "measure", "--rounds", "3"]) == 2
    assert "settings of the game" in capsys.readouterr().err and not out.exists()


def test_dask_engine_under_quiet_prints_nothing_but_the_summary(tmp_path):
    """Dask's INFO lines and shutdown tracebacks stay off standard error under -q (the real command, a real cluster)."""
    pytest.importorskip("distributed")
    (tmp_path / "in.csv").write_text("a,b\n" + "".join(f"{i % 4},{(i * 7) % 4}\n" for i in range(200)))
    attrs = [{"name": n, "kind": "numeric", "bounds": [0, 3], "bins": 4, "clip": False, "missing": False,
              "dtype": "int64"} for n in "ab"]
    (tmp_path / "s.json").write_text(json.dumps({"format": "synthdp-schema", "version": 1, "missing_values": [],
                                                 "attributes": attrs}))
    done = subprocess.run([sys.executable, "-m", "synthdp.cli", "generate", "in.csv", "-o", "out.csv", "--epsilon",
                           "1", "--delta", "1e-9", "--schema", "s.json", "--engine", "dask", "--queries",
                           "marginals:1", "--seed", "0", "-q"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", done.stderr
    assert "output: out.csv" in done.stdout


def test_a_reader_that_goes_away_is_no_error(tmp_path):
    """``synthdp schema IN -o OUT | head -1``: the draft is written, no traceback, exit 141 (SIGPIPE's code)."""
    pd.DataFrame({"a": ["x", "y"] * 50, "b": range(100)}).to_csv(tmp_path / "in.csv", index=False)
    read, write = os.pipe()
    os.close(read)  # the reader is gone before anything is written
    done = subprocess.run([sys.executable, "-m", "synthdp.cli", "schema", "in.csv", "-o", "s.json"], cwd=tmp_path,
                          stdout=write, stderr=subprocess.PIPE, text=True)
    os.close(write)
    assert done.returncode == 141 and "Traceback" not in done.stderr and "Exception" not in done.stderr
    assert json.loads((tmp_path / "s.json").read_text())["attributes"]


def test_each_warning_is_printed_once(tmp_path):
    """An owner's warning was printed as a log line and as a warning, a release warning during the run and again
    in the closing summary: each is printed once, and the owner's are marked as such."""
    rng = np.random.default_rng(0)
    n = 3000
    pd.DataFrame({"clinic": rng.permutation(["north"] * 1200 + ["south"] * 1200 + [f"c{i}" for i in range(600)]),
                  "status": rng.permutation(["x"] * 1200 + [""] * 1800),
                  "kind": rng.choice(["a", "b"], n)}).to_csv(tmp_path / "in.csv", index=False)
    Schema((Attribute("clinic", "categorical", origin="learn"),
            Attribute("status", "categorical", categories=("x",), missing=True),
            Attribute("kind", "categorical", categories=("a", "b")))).save(tmp_path / "s.json")
    done = subprocess.run([sys.executable, "-m", "synthdp.cli", "generate", "in.csv", "-o", "out.csv", "--epsilon",
                           "1", "--delta", "1e-6", "--schema", "s.json", "--queries", "marginals:2", "--seed", "0"],
                          cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    said = done.stdout + done.stderr
    owner = "column 'clinic' will come back with 20% of its present values missing"
    release = "column 'status' comes back 6"
    assert said.count(owner) == 1 and said.count(release) == 1, said
    assert "for the data owner only: read off the private data" in said and "WARNING" not in said


def test_a_threshold_near_the_row_count_is_an_owners_warning_printed_once(tmp_path):
    """The warning that a text column can keep at most a few values names the private row count: it is printed once,
    marked for the owner, and is not in the report."""
    pd.DataFrame({"city": ["Oslo", "Rome"] * 200, "x": np.arange(400) % 7}).to_csv(tmp_path / "in.csv", index=False)
    Schema((Attribute("city", "categorical", origin="learn"),
            Attribute("x", "categorical", categories=tuple(str(v) for v in range(7))))).save(tmp_path / "s.json")
    done = subprocess.run([sys.executable, "-m", "synthdp.cli", "generate", "in.csv", "-o", "out.csv", "--epsilon",
                           "1", "--delta", "1e-9", "--schema", "s.json", "--queries", "marginals:2", "--seed", "0",
                           "--report", "report.json"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    said = done.stdout + done.stderr
    few = re.findall(r".*of the 400 rows: at most \d value\(s\) per column can be kept.*", said)
    assert len(few) == 1 and "(for the data owner only: read off the private data" in few[0], said
    assert "WARNING" not in said and "per column can be kept" not in (tmp_path / "report.json").read_text()


def test_the_command_leaves_the_callers_log_handlers_as_it_found_them(tmp_path):
    """The filters that print an owner's warning once are taken off the handlers again: a caller running the
    command three times keeps its own log of owner warnings."""
    (tmp_path / "in.csv").write_text("a,b\n" + "".join(f"{i % 3},x{i % 2}\n" for i in range(40)))
    handler = logging.NullHandler()
    logging.getLogger().addHandler(handler)
    try:
        for i in range(3):
            assert main(["schema", str(tmp_path / "in.csv"), "-o", str(tmp_path / f"s{i}.json")]) == 0
        assert handler.filters == []
    finally:
        logging.getLogger().removeHandler(handler)
