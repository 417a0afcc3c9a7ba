"""Progress of a run: its phases, and the steps of a long loop, on a terminal or in a log.

:class:`Phases` writes one line when each phase of a run starts (reading,
tallying, each private step, the rounds, the covering step, the final fit,
sampling, decoding, writing) and one when it ends, with the time it took, so
that no phase runs silently.  Inside a long loop :class:`RoundProgress` draws
a :mod:`tqdm` bar on a terminal.  Elsewhere (CI logs, pipes, ``nohup``) a
bar would be noise or nothing, so one plain line is written to standard
error when the rounds start and then at a steady interval, with the time
elapsed and an estimate of the time left.

The estimate is made from the work left, not from a cap that the loop may
never reach: a loop that a budget ends (select-measure-estimate's rounds,
docs/privacy.md §8.4) says before each round at most how many rounds the
budget left allows (:meth:`RoundProgress.limit`), and the time left is
shown as that many rounds at the mean time per round so far, an upper
bound.  Otherwise the estimate is the rounds left to ``total`` at the mean
time per round so far.

Times can be private: PRSMA's running time tracks the failure flags it is
built to hide (docs/privacy.md §3).  With ``timings=False`` no time, rate or
estimate is shown anywhere, and the log lines come at fixed round counts
(every tenth of the rounds) instead of fixed intervals, so that what they
say depends only on the number of rounds.
"""

from __future__ import annotations

import logging
import sys
import time
from contextlib import contextmanager
from typing import IO, Any, Iterator

__all__ = ["PROGRESS_INTERVAL", "Phases", "RoundProgress"]

log = logging.getLogger(__name__)

#: Seconds between two progress lines when standard error is not a terminal.
PROGRESS_INTERVAL = 10.0


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


class Phases:
    """One line when each phase of a run starts and one when it ends: ``with phases("tallying"): ...``.

    ``enabled=False`` shows nothing; ``timings=False`` never shows a time;
    ``stream`` defaults to standard error (a terminal or not: the lines are
    the same).  Each line goes to the :mod:`logging` logger of this module
    too, at DEBUG (``-v`` shows INFO, which would repeat them).
    """

    def __init__(self, *, enabled: bool = True, timings: bool = True, prefix: str = "synthdp",
                 stream: IO[str] | None = None):
        self.enabled, self.timings, self.prefix = enabled, timings, prefix
        self.stream = stream if stream is not None else sys.stderr

    def say(self, text: str) -> None:
        """Write ``prefix: text`` as a line of its own (and log it)."""
        log.debug("%s", text)
        if self.enabled:
            print(f"{self.prefix}: {text}", file=self.stream, flush=True)

    @contextmanager
    def __call__(self, what: str) -> Iterator[None]:
        """Say that ``what`` starts, run the block, say that it is done (and how long it took)."""
        self.say(f"{what} ...")
        start = time.monotonic()
        yield
        self.say(f"{what}: done" + (f" in {_duration(time.monotonic() - start)}" if self.timings else ""))


class RoundProgress:
    """Progress over ``total`` rounds (or other ``unit`` steps): call :meth:`update` after each round and :meth:`close` at the end.

    ``enabled=False`` shows nothing; ``timings=False`` never shows a time
    (see the module docstring); ``stream`` defaults to standard error.
    ``until_spent``: the loop ends when a budget is spent, maybe well before
    ``total``.  Then the caller says before each round at most how many
    rounds can follow it (:meth:`limit`: what is left of the budget over
    the cost of a round, which annealing only raises), :meth:`update` is given
    the share of the budget spent, and the time left is shown as an upper
    bound: those rounds at the mean time of the rounds after the first (the
    first also counts the data's answers); none is shown before there is one.
    """

    def __init__(self, total: int, *, enabled: bool = True, timings: bool = True, desc: str = "synthdp rounds",
                 unit: str = "round", interval: float = PROGRESS_INTERVAL, stream: IO[str] | None = None,
                 until_spent: bool = False):
        self.total, self.enabled, self.timings, self.desc, self.unit = total, enabled, timings, desc, unit
        self.until_spent, self.most_left, self.first_done = until_spent, None, None
        self.interval = interval
        self.stream = stream if stream is not None else sys.stderr
        self.start = self.last = time.monotonic()
        self.bar = None
        if enabled and _isatty(self.stream):
            from tqdm.auto import tqdm

            fmt = (None if timings and not until_spent else
                   "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} " + unit + "s" +
                   (" [{elapsed}{postfix}]" if timings else ""))
            self.bar = tqdm(total=total, desc=desc, unit=unit, leave=False, file=self.stream, bar_format=fmt)
        self.step = max(1, total // 10)
        if enabled and self.bar is None:  # say at once that the rounds have started, and how many there are
            print(f"{desc}: 0/{total}" + (" (at most: until the budget is spent)" if until_spent else ""),
                  file=self.stream, flush=True)

    def limit(self, most_left: int) -> None:
        """At most ``most_left`` rounds follow the one now running (``until_spent``: a bound the caller knows)."""
        self.most_left = most_left

    def left(self, done: int) -> float | None:
        """Seconds left: the rounds left at the mean time per round so far; with ``until_spent`` the bound of
        :meth:`limit` at the mean time of the rounds after the first (None until there is one)."""
        now = time.monotonic()
        if not self.until_spent:
            return (now - self.start) / done * (self.total - done)
        if self.most_left is None or self.first_done is None or done < 2:
            return None
        return (now - self.first_done) / (done - 1) * self.most_left

    def update(self, done: int, share: float | None = None, **postfix: Any) -> None:
        """Round ``done`` (1-based) is finished, ``share`` of the budget spent (``until_spent``); ``postfix`` items go
        on the terminal bar (timings only).  ``done=0``: the rounds start now, so the time elapsed and the estimate
        leave out what came before (building what the loop reads); the next line still comes ``interval`` after
        the last one."""
        if done == 0:
            self.start = time.monotonic()
            return
        if self.first_done is None:
            self.first_done = time.monotonic()
        if not self.enabled:
            return
        spent = "" if share is None or not self.until_spent else f"{share:.0%} of the budget spent"
        if self.bar is not None:
            self.bar.update(done - self.bar.n)
            if spent:
                postfix = {"spent": f"{share:.0%}", **postfix}
            if self.timings and self.until_spent:
                left = self.left(done)
                postfix = {**postfix, "left": "?" if left is None else f"at most about {_duration(left)}"}
            if postfix and self.timings:
                self.bar.set_postfix(**postfix)
            return
        now = time.monotonic()
        if self.timings:
            if now - self.last < self.interval or done == self.total:
                return
            elapsed, left = now - self.start, self.left(done)
            if self.until_spent:
                line = (f"{self.desc}: {done} {self.unit}s (at most {self.total}), {spent + ', ' if spent else ''}"
                        f"{_duration(elapsed)} elapsed, "
                        + ("time left not known yet" if left is None else
                           f"at most {self.most_left} more {self.unit}s, at most about {_duration(left)} left"))
            else:
                line = (f"{self.desc}: {done}/{self.total} ({100 * done // self.total}%), {_duration(elapsed)} "
                        f"elapsed, about {_duration(left)} left")
        else:
            if done % self.step or done == self.total:
                return
            line = f"{self.desc}: {done}/{self.total} ({100 * done // self.total}%)" + (f", {spent}" if spent else "")
        self.last = now
        print(line, file=self.stream, flush=True)

    def close(self, done: int | None = None, stopped: str = "budget spent") -> None:
        """Remove the bar, or log the last line (with the total time when timings are shown).

        ``done`` is the number of rounds run when a loop stops before ``total``
        (a budget filter, say); the last line then says so and why
        (``stopped``), on a terminal too: "stopped at 22 rounds: budget spent
        (planned up to 120)", not "22/120 done".
        """
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.close()
        took = f" in {_duration(time.monotonic() - self.start)}" if self.timings else ""
        if done is not None and done < self.total:
            line = f"{self.desc}: stopped at {done} {self.unit}s: {stopped} (planned up to {self.total}){took}"
        elif self.bar is not None:
            return
        else:
            line = f"{self.desc}: {self.total}/{self.total} done{took}"
        print(line, file=self.stream, flush=True)


def _isatty(stream: IO[str]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
