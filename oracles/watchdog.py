"""Hard wall-clock limits: run a callable in a child process and kill it at the deadline.

Some solvers overrun their own time limit (bundled CBC ran nine minutes
past ``timeLimit=120`` on a 30k-row model) and RC2 has none, so a
wall-clock limit is enforced from outside: the callable runs in a forked
child that leads its own process group, and at the deadline the whole
group is killed with SIGKILL, including solver processes the child
spawned (CBC is a grandchild).  Fork (not spawn) means the callable and
its data need no pickling; only the result travels back through a pipe.
"""

from __future__ import annotations

import logging
import multiprocessing
import os
import signal
import time
from dataclasses import dataclass
from typing import Any, Callable

log = logging.getLogger(__name__)

#: How long to wait for a child that has sent its result to exit.
_EXIT_GRACE = 5.0


@dataclass(frozen=True)
class TimedOut:
    """Marker returned instead of a result when the deadline killed the child."""

    seconds: float


def run_with_deadline(fn: Callable[[], Any], timeout: float | None) -> Any:
    """``fn()``, or :class:`TimedOut` if it has not returned after ``timeout`` seconds.

    ``timeout=None`` calls ``fn`` in this process (no limit, no fork).
    Exceptions raised by ``fn`` in the child are re-raised here.
    """
    if timeout is None:
        return fn()
    start = time.perf_counter()
    if timeout <= 0:
        return TimedOut(0.0)
    ctx = multiprocessing.get_context("fork")
    receiver, sender = ctx.Pipe(duplex=False)
    child = ctx.Process(target=_child, args=(fn, sender), daemon=True)
    child.start()
    sender.close()
    _own_group(child.pid)
    try:
        if not receiver.poll(timeout):
            _kill_group(child.pid)
            log.info("watchdog killed process group %d after %.3fs", child.pid, time.perf_counter() - start)
            return TimedOut(time.perf_counter() - start)
        try:
            ok, payload = receiver.recv()
        except EOFError:  # the child died without sending anything
            ok, payload = False, RuntimeError("oracle child process died without a result")
    finally:
        receiver.close()
        child.join(_EXIT_GRACE)
        if child.is_alive():
            _kill_group(child.pid)
            child.join()
    if not ok:
        raise payload
    return payload


def _child(fn: Callable[[], Any], sender) -> None:
    """Child body: lead a new process group, run ``fn``, send ``(ok, result or exception)``."""
    os.setpgid(0, 0)
    try:
        message = (True, fn())
    except BaseException as exc:  # noqa: BLE001 - forwarded to the parent and re-raised there
        message = (False, exc)
    try:
        sender.send(message)
    except Exception as exc:  # an unpicklable result or exception
        sender.send((False, RuntimeError(f"oracle child could not return its result: {exc!r}")))
    sender.close()


def _own_group(pid: int) -> None:
    """Make ``pid`` lead its own group from the parent side too (closes the race with ``killpg``)."""
    try:
        os.setpgid(pid, pid)
    except OSError:  # already done by the child, or the child has exited
        pass


def _kill_group(pid: int) -> None:
    """SIGKILL the process group led by ``pid`` (the child and everything it spawned)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
