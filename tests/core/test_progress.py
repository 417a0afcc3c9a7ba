"""What a run shows while it runs: a line as each phase starts and ends, and honest estimates of the rounds' time.

Written to a stream that is not a terminal (a log, a pipe), as CI and ``nohup`` see it.
"""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest

import synthdp
from synthdp.cli import main
from synthdp.core import progress
from synthdp.core.progress import Phases, RoundProgress


class Clock:
    """A stand-in for ``time.monotonic`` that moves only when told."""

    def __init__(self):
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch):
    fake = Clock()
    monkeypatch.setattr(progress.time, "monotonic", fake)
    return fake


def test_a_phase_says_when_it_starts_and_when_it_ends_with_its_time(clock):
    log = io.StringIO()
    phases = Phases(stream=log)
    with phases("tallying"):
        clock.now += 75
    with Phases(stream=log, timings=False)("counting"):
        clock.now += 5
    with Phases(stream=log, enabled=False)("hidden"):
        pass
    assert log.getvalue().splitlines() == ["synthdp: tallying ...", "synthdp: tallying: done in 1 min 15 s",
                                           "synthdp: counting ...", "synthdp: counting: done"]


def test_rounds_that_a_budget_ends_estimate_from_the_rounds_the_budget_allows_not_the_cap(clock):
    """The first round takes 100 s (it counts the data's answers), the next ones 5 s each, and after round 3 the
    budget allows at most 4 more: the line says at most 4 rounds, about 20 s, where the cap of 160 rounds would
    have said 155 rounds at the mean 36.7 s, 1 h 35 min."""
    log = io.StringIO()
    bar = RoundProgress(160, interval=0.0, stream=log, desc="measure rounds", until_spent=True)
    bar.limit(150)
    clock.now += 100
    bar.update(1, share=0.11)
    bar.limit(4)
    for t in (2, 3):
        clock.now += 5
        bar.update(t, share=0.2 * t)
    bar.close(7)
    lines = log.getvalue().splitlines()
    assert lines[0] == "measure rounds: 0/160 (at most: until the budget is spent)"
    assert lines[1] == ("measure rounds: 1 rounds (at most 160), 11% of the budget spent, 1 min 40 s elapsed, "
                        "time left not known yet")
    assert lines[3] == ("measure rounds: 3 rounds (at most 160), 60% of the budget spent, 1 min 50 s elapsed, "
                        "at most 4 more rounds, at most about 20 s left")
    assert lines[4] == "measure rounds: stopped at 7 rounds: budget spent (planned up to 160) in 1 min 50 s"


def test_steps_counted_from_the_start_of_the_loop_leave_out_what_came_before(clock):
    """A fit that spends 60 s building what it reads, then 2 s a step: ``update(0)`` as the steps start leaves the
    60 s out of the estimate (98 steps left at 2 s, 3 min 16 s), where counting them would have said 98 steps at
    32 s, 52 min; the first line still comes ``interval`` after the last one, setup included."""
    log = io.StringIO()
    bar = RoundProgress(100, interval=0.0, stream=log, desc="the fit", unit="step")
    clock.now += 60
    bar.update(0)
    for k in (1, 2):
        clock.now += 2
        bar.update(k)
    bar.close()
    assert log.getvalue().splitlines() == ["the fit: 0/100", "the fit: 1/100 (1%), 2 s elapsed, about 3 min 18 s left",
                                           "the fit: 2/100 (2%), 4 s elapsed, about 3 min 16 s left",
                                           "the fit: 100/100 done in 4 s"]
    # the setup still counts toward the interval between lines: 8 s of it, then a line 2 steps (10 s) after the first
    log = io.StringIO()
    bar = RoundProgress(100, interval=10.0, stream=log, desc="the fit", unit="step")
    clock.now += 8
    bar.update(0)
    for k in range(1, 6):
        clock.now += 1
        bar.update(k)
    assert log.getvalue().splitlines() == ["the fit: 0/100", "the fit: 2/100 (2%), 2 s elapsed, about 1 min 38 s left"]


def test_the_covering_step_and_the_reweighted_fit_show_their_progress(monkeypatch, capsys):
    """The covering step (one line per workload marginal measured here, with the interval at 0) and the reweighted
    sample's fit (one per trial step) say how far they are inside their phases, so neither runs silently: on the
    300,000-row flights table they take 40 s and more than a minute."""
    import functools

    from synthdp.methods.measure import covering_step, release, rounds

    for module in (rounds, covering_step, release):  # the rounds, the covering step, the reweighted sample's fit
        monkeypatch.setattr(module, "RoundProgress", functools.partial(RoundProgress, interval=0.0))
    synthdp.generate_synthetic(_table(), "marginals:2", epsilon=1.0, delta=1e-6, bounds={"size": (0, 100)},
                               categories={"kind": ["a", "b", "big"]}, random_state=0)
    err = capsys.readouterr().err
    _in_order(err, ["synthdp: the covering step over 3 workload marginals ...", "the covering step: 0/3",
                    "the covering step: 1/3 (33%), ", "the covering step: 2/3 (66%), ",
                    "the covering step: 3/3 done in", "synthdp: the covering step over 3 workload marginals: done in",
                    "synthdp: the reweighted sample (", "the reweighted sample's fit: 0/200",
                    "the reweighted sample's fit: 1/200 (0%), ", "the reweighted sample's fit: 199/200 (99%), ",
                    "the reweighted sample's fit: 200/200 done in", "synthdp: the reweighted sample ("])
    assert all(" left" in line for line in err.splitlines() if line.startswith(("the covering step: 1/",
                                                                               "the reweighted sample's fit: 1/")))


def test_rounds_without_timings_show_no_estimate(clock):
    log = io.StringIO()
    bar = RoundProgress(20, stream=log, timings=False, until_spent=True)
    for t in range(1, 11):
        bar.limit(20 - t)
        clock.now += 30
        bar.update(t, share=t / 20)
    assert log.getvalue().splitlines()[1:] == [f"synthdp rounds: {t}/20 ({5 * t}%), {5 * t}% of the budget spent"
                                               for t in (2, 4, 6, 8, 10)]


def _table(n: int = 400) -> pd.DataFrame:
    gen = np.random.default_rng(0)
    size = gen.integers(0, 100, n)
    return pd.DataFrame({"size": size, "kind": np.where(size > 50, "big", gen.choice(["a", "b"], n)),
                         "colour": gen.choice(["red", "green", "blue"], n)})


def _in_order(text: str, expected: list[str]) -> list[int]:
    """The lines of ``text`` where each expected start is first found, searching after the previous one."""
    lines, at, where = text.splitlines(), -1, []
    for start in expected:
        at = next(i for i in range(at + 1, len(lines)) if lines[i].startswith(start))
        where.append(at)
    return where


PHASES = ["synthdp: learning the domains the schema leaves open (privately) ...",
          "synthdp: tallying the columns whose domains are learned ...",
          "synthdp: tallying the columns whose domains are learned: done in",
          "synthdp: learning the domains the schema leaves open (privately): done in",
          "synthdp: counting the encoded rows ...", "synthdp: counting the encoded rows: done in",
          "synthdp: measuring the 3 one-way marginals ...", "synthdp: measuring the 3 one-way marginals: done in",
          "measure rounds: 0/", "measure rounds: stopped at",
          "synthdp: the final fit (500 steps) ...", "synthdp: the final fit (500 steps): done in",
          "synthdp: drawing ", "synthdp: decoding and checking the records ...",
          "synthdp: decoding and checking the records: done in"]


def test_every_phase_of_a_run_shows_itself_in_order_in_a_log(capsys):
    synthdp.generate_synthetic(_table(), "marginals:2", epsilon=1.0, delta=1e-6, bounds={"size": (0, 100)},
                               categories={"kind": ["a", "b", "big"]}, random_state=0)
    err = capsys.readouterr().err
    _in_order(err, PHASES)
    assert " h " not in err

    synthdp.generate_synthetic(_table(), "marginals:2", epsilon=1.0, delta=1e-6, bounds={"size": (0, 100)},
                               categories={"kind": ["a", "b", "big"]}, random_state=0, progress=False)
    assert capsys.readouterr().err == ""


def test_the_command_line_says_when_it_writes(tmp_path, capsys):
    _table().to_csv(tmp_path / "in.csv", index=False)
    out = tmp_path / "out.csv"
    assert main(["generate", str(tmp_path / "in.csv"), "-o", str(out), "--epsilon", "1", "--delta", "1e-6",
                 "--queries", "marginals:2", "--bounds", "size=0:100", "--seed", "0"]) == 0
    err = capsys.readouterr().err
    _in_order(err, ["synthdp: decoding and checking the records: done in", f"synthdp: writing {out} ...",
                    f"synthdp: writing {out}: done in"])


def test_the_rounds_the_budget_allows_bound_the_rounds_that_follow(monkeypatch, capsys):
    """Every round's line of a run says at most how many rounds can follow; the run then ends within that bound,
    and the bound is below the cap (it comes from the budget left, not the planned rounds)."""
    import functools
    import re

    from synthdp.methods.measure import covering_step, release, rounds

    for module in (rounds, covering_step, release):  # the rounds, the covering step, the reweighted sample's fit
        monkeypatch.setattr(module, "RoundProgress", functools.partial(RoundProgress, interval=0.0))
    gen = np.random.default_rng(1)
    table = pd.DataFrame({f"c{i}": gen.integers(0, 4, 2000) for i in range(6)})
    table["c1"] = (table["c0"] + gen.integers(0, 2, 2000)) % 4  # a pair worth measuring
    synthdp.generate_synthetic(table, "marginals:2", epsilon=4.0, delta=1e-6,
                               categories={c: [0, 1, 2, 3] for c in table.columns}, random_state=0)
    err = capsys.readouterr().err
    rounds = int(re.search(r"measure rounds: stopped at (\d+) rounds", err).group(1))
    bounds = [(int(done), int(cap), int(most)) for done, cap, most in
              re.findall(r"measure rounds: (\d+) rounds \(at most (\d+)\).*at most (\d+) more rounds", err)]
    assert len(bounds) >= 3
    assert all(done + most >= rounds for done, _, most in bounds), (rounds, bounds)
    assert any(0 < most and done + most < cap for done, cap, most in bounds), (rounds, bounds)
