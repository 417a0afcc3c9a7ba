"""``synthdp bench``: one benchmark, run so that SIGINT and SIGTERM stop it at once."""

from __future__ import annotations

import importlib
import os
import signal
import sys
import threading

from synthdp.cli.parser import BENCHES
from synthdp.core.errors import InputError


def run(args) -> int:
    """Run one benchmark; its module is loaded by name only now (they load peers and solvers the others never need)."""
    try:
        module = importlib.import_module(BENCHES[args.target])
    except ModuleNotFoundError as exc:
        raise InputError(f"benchmark {args.target!r} is not available in this version ({exc.name})") from None
    return _interruptible(lambda: module.run(args.rest), args.target)


def _interruptible(work, name: str) -> int:
    """Run ``work`` in a worker thread, so that SIGINT and SIGTERM act at once.

    A solver call (CP-SAT, numba) can hold the main thread for minutes, and
    Python runs signal handlers only between its bytecodes there; here the
    main thread only waits.  On a signal the run ends at once: whatever the
    benchmark had written stays (it writes its results as it goes), and a
    call still running in the worker is abandoned with the process.
    """
    outcome: dict[str, BaseException] = {}

    def target() -> None:
        try:
            work()
        except BaseException as exc:  # re-raised in the main thread, which reports it
            outcome["error"] = exc

    thread = threading.Thread(target=target, name=f"synthdp-bench-{name}", daemon=True)
    thread.start()
    try:
        while thread.is_alive():
            thread.join(0.2)
    except KeyboardInterrupt as exc:
        signum = getattr(exc, "signum", signal.SIGINT)
        print(f"synthdp: interrupted ({signal.Signals(signum).name}); bench {name} stopped, the results it had "
              "written are kept", file=sys.stderr, flush=True)
        thread.join(1.0)
        if thread.is_alive():  # a solver call that does not return: end the process now
            sys.stdout.flush()
            os._exit(128 + signum)
        return 128 + signum
    if "error" in outcome:
        raise outcome["error"]
    return 0
