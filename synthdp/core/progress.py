"""Progress of a long loop, on a terminal or in a log.

On a terminal a :mod:`tqdm` bar is drawn.  Elsewhere (CI logs, pipes,
``nohup``) a bar would be noise or nothing, so one plain line is written to
standard error when the rounds start and then at a steady interval, with the
time elapsed and an estimate of the time left.

Times can be private: PRSMA's running time tracks the failure flags it is
built to hide (docs/privacy.md §3).  With ``timings=False`` no time, rate or
estimate is shown anywhere, and the log lines come at fixed round counts
(every tenth of the rounds) instead of fixed intervals, so that what they
say depends only on the number of rounds.
"""

from __future__ import annotations

import sys
import time
from typing import IO, Any

__all__ = ["PROGRESS_INTERVAL", "RoundProgress"]

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


class RoundProgress:
    """Progress over ``total`` rounds (or other ``unit`` steps): call :meth:`update` after each round and :meth:`close` at the end.

    ``enabled=False`` shows nothing; ``timings=False`` never shows a time
    (see the module docstring); ``stream`` defaults to standard error.
    """

    def __init__(self, total: int, *, enabled: bool = True, timings: bool = True, desc: str = "synthdp rounds",
                 unit: str = "round", interval: float = PROGRESS_INTERVAL, stream: IO[str] | None = None):
        self.total, self.enabled, self.timings, self.desc, self.unit = total, enabled, timings, desc, unit
        self.interval = interval
        self.stream = stream if stream is not None else sys.stderr
        self.start = self.last = time.monotonic()
        self.bar = None
        if enabled and _isatty(self.stream):
            from tqdm.auto import tqdm

            fmt = None if timings else "{desc}: {percentage:3.0f}%|{bar}| {n_fmt}/{total_fmt} " + unit + "s"
            self.bar = tqdm(total=total, desc=desc, unit=unit, leave=False, file=self.stream, bar_format=fmt)
        self.step = max(1, total // 10)
        if enabled and self.bar is None:  # say at once that the rounds have started, and how many there are
            print(f"{desc}: 0/{total}", file=self.stream, flush=True)

    def update(self, done: int, **postfix: Any) -> None:
        """Round ``done`` (1-based) is finished; ``postfix`` items go on the terminal bar (timings only)."""
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.update(done - self.bar.n)
            if postfix and self.timings:
                self.bar.set_postfix(**postfix)
            return
        now = time.monotonic()
        if self.timings:
            if now - self.last < self.interval or done == self.total:
                return
            elapsed = now - self.start
            left = elapsed / done * (self.total - done)
            line = (f"{self.desc}: {done}/{self.total} ({100 * done // self.total}%), {_duration(elapsed)} elapsed, "
                    f"about {_duration(left)} left")
        else:
            if done % self.step or done == self.total:
                return
            line = f"{self.desc}: {done}/{self.total} ({100 * done // self.total}%)"
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
