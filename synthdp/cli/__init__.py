"""The ``synthdp`` command: generate, sample, evaluate, schema, bench, demo.

Every error the library raises on purpose is printed as one line naming the
culprit, with exit status 2; nothing is written unless the command succeeds.
Output paths are checked before anything private runs and all outputs of a
run are written as one unit (:mod:`synthdp.files.outputs`); SIGINT and SIGTERM
end a run with one line and exit status 130 or 143.

:func:`main` parses the arguments (:mod:`synthdp.cli.parser`, light: ``--help``,
``--version`` and usage errors load no numpy, pandas or solver), then imports
the one module of the command that runs (``synthdp.cli.generate``, ...), which
imports the library at its top, and calls its ``run``.
"""

from __future__ import annotations

import importlib
import logging
import os
import signal
import sys
import threading
import warnings
from typing import Callable, Sequence

from synthdp.cli.parser import build_parser, refuse_unknown_flags
from synthdp.core.errors import PrivacyWarning, SynthDPError
from synthdp.core.owner import log as owner_log
from synthdp.files.outputs import Interrupted


class _OtherLibraries(logging.Filter):
    """synthdp's log records at the -v level; other libraries' (Dask's INFO chatter, its shutdown tracebacks)
    from ``level`` up: WARNING by default, INFO with -vv, nothing under -q."""

    def __init__(self, level: int):
        super().__init__()
        self.level = level

    def filter(self, record: logging.LogRecord) -> bool:
        return record.name.split(".")[0] == "synthdp" or record.levelno >= self.level


def _interrupt(signum, frame) -> None:
    raise Interrupted(signum)


def _one_line_warnings() -> Callable[..., None]:
    """A ``warnings.showwarning`` that prints each warning as one line, ``warning: ...``, the first time its text
    is seen (no file path or source line: they mean nothing to a user of the command)."""
    seen: set[str] = set()

    def show(message, category, filename, lineno, file=None, line=None) -> None:
        text = " ".join(str(message).split())
        if text not in seen:
            seen.add(text)
            print(f"warning: {text}", file=sys.stderr)

    return show


def _charge_note(interrupt: KeyboardInterrupt) -> str:
    """What the privacy ledger was charged before an interrupt, for a command that runs private steps."""
    charged = getattr(interrupt, "charged", None)
    if charged is None:
        return ""
    if charged == "nothing":
        return "; no privacy budget was charged (no private step had run)"
    return (f"; the privacy ledger had been charged {charged} by the private steps that ran: a new run on the "
            "same data spends again (docs/privacy.md §10.1)")


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, unknown = parser.parse_known_args(argv)
    if unknown:
        refuse_unknown_flags(parser, args.command, unknown)
    # by name, after parsing: the command's module loads the library, which --help and usage errors never need
    command = importlib.import_module(f"synthdp.cli.{args.command}")

    logging.basicConfig(level=[logging.WARNING, logging.INFO, logging.DEBUG][min(args.verbose, 2)],
                        format="%(levelname)s %(name)s: %(message)s")
    others = (logging.INFO if args.verbose >= 2 else logging.CRITICAL + 1 if getattr(args, "quiet", False)
              else logging.WARNING)
    quiet_others, handlers = _OtherLibraries(others), list(logging.getLogger().handlers)

    def not_owner(record: logging.LogRecord) -> bool:  # an owner's warning is printed once, as a warning
        return record.name != owner_log.name

    for handler in handlers:
        handler.addFilter(quiet_others)
        handler.addFilter(not_owner)

    handled = (signal.SIGINT, signal.SIGTERM)
    previous = {}
    if threading.current_thread() is threading.main_thread():
        previous = {sig: signal.signal(sig, _interrupt) for sig in handled}
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyWarning)  # the closing summary repeats them as "warning: ..."
            warnings.showwarning = _one_line_warnings()
            code = command.run(args)
        sys.stdout.flush()  # a reader gone away shows here, not at interpreter exit
        return code
    except SynthDPError as exc:
        print(f"synthdp: error: {exc.for_cli()}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader went away (`synthdp schema IN -o OUT | head -1`); the files are written
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # no second error at interpreter exit
        return 128 + signal.SIGPIPE
    except KeyboardInterrupt as exc:
        signum = getattr(exc, "signum", signal.SIGINT)
        done = ("the outputs had already been written in full" if getattr(exc, "written", False)
                else "nothing was written")
        print(f"synthdp: interrupted ({signal.Signals(signum).name}); {done}{_charge_note(exc)}", file=sys.stderr)
        return 128 + signum
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for handler in handlers:
            handler.removeFilter(quiet_others)
            handler.removeFilter(not_owner)
