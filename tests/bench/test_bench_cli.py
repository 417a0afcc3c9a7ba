"""``synthdp bench``: one flag vocabulary, help on every option, clear errors, --quick, prompt exit on SIGTERM."""

from __future__ import annotations

import importlib
import os
import signal
import subprocess
import sys
import threading
import time

import pytest

from synthdp.cli import main
from synthdp.cli.parser import BENCHES

#: The benchmark commands, run end to end: ``-m 'not integration'`` leaves them out.
pytestmark = pytest.mark.integration

PARSERS = {name: importlib.import_module(module).build_parser for name, module in BENCHES.items()}


@pytest.mark.parametrize("target", sorted(BENCHES))
def test_every_option_has_help_and_the_shared_flags(target):
    parser = PARSERS[target]()
    options = [a for a in parser._actions if a.option_strings and a.dest != "help"]
    assert [a.option_strings for a in options if not a.help] == []
    names = {s for a in options for s in a.option_strings}
    assert {"--out", "--output", "--quick"} <= names, names
    if target in ("accuracy", "classes", "evaluator"):  # the datasets are --suite everywhere
        assert "--suite" in names
    if target in ("accuracy", "classes"):
        assert {"--methods", "--method"} <= names


@pytest.mark.parametrize("argv, message", [
    (["bench", "accuracy", "--suite", "foo"], "--suite: unknown ['foo']; choose from"),
    (["bench", "accuracy", "--methods", "game,bogus"], "--methods: unknown ['bogus']"),
    (["bench", "classes", "--suite", "foo"], "--suite: unknown ['foo']"),
    (["bench", "classes", "--methods", "nope"], "--methods: unknown ['nope']"),
    (["bench", "evaluator", "--datasets", "foo"], "--suite: unknown ['foo']"),
    (["bench", "evaluator", "--dims", "x"], "--dims takes whole numbers"),
    (["bench", "oracles", "--class", "foo"], "--class: unknown ['foo']"),
    (["bench", "oracles", "--sizes", "lots"], "cannot read the size 'lots'"),
    (["bench", "scale", "--tmp", "no/such/folder"], "--tmp 'no/such/folder' is not an existing folder"),
    (["bench", "scale", "--rows", "many"], "--rows takes numbers"),
    (["bench", "width", "--columns", "ten"], "--columns takes positive whole numbers"),
    (["bench", "width", "--columns", "30,50", "--rows", "1,2,3"], "--rows needs one value or one per width"),
])
def test_bad_bench_options_are_one_line_errors(tmp_path, monkeypatch, capsys, argv, message):
    monkeypatch.chdir(tmp_path)
    assert main([*argv, "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("synthdp: error:") and message in err and "Traceback" not in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.slow  # every quick bench end to end (28 s); each bench is tested on its own in tests/bench
def test_quick_smoke_runs_finish_and_write_under_out(shared_data_dir, tmp_path):
    """--quick: a smoke run of the target (here the two quickest), results under --out (alias --output)."""
    pytest.importorskip("distributed")
    assert main(["bench", "evaluation", "--quick", "--out", str(tmp_path / "e")]) == 0
    assert (tmp_path / "e" / "evaluation.json").is_file()
    assert main(["bench", "scale", "--quick", "--output", str(tmp_path / "s")]) == 0
    assert (tmp_path / "s" / "scale.json").is_file()


def test_sigterm_ends_a_bench_stuck_in_a_solver_within_seconds(shared_data_dir, tmp_path):
    """The game on halfspaces sits in CP-SAT for minutes; SIGTERM took almost 5 minutes to act there."""
    env = dict(os.environ, SYNTHDP_DATA_DIR=str(shared_data_dir))
    proc = subprocess.Popen([sys.executable, "-m", "synthdp.cli", "-v", "bench", "classes", "--suite", "nltcs",
                             "--methods", "game", "--classes", "halfspaces:1", "--rows", "2000", "--dims", "8", "--out",
                             str(tmp_path)], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    lines: list[str] = []
    playing = threading.Event()  # set when the run says it starts the game's rounds (its solver calls)

    def read() -> None:
        for line in proc.stderr:
            lines.append(line)
            if "game: " in line and " rounds x " in line:
                playing.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    assert playing.wait(timeout=120) and proc.poll() is None, "".join(lines)
    start = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=60)
    reader.join(timeout=10)
    err = "".join(lines)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert time.monotonic() - start < 15 and "interrupted (SIGTERM); bench classes stopped" in err
