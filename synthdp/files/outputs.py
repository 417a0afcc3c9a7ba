"""Output files: checked before anything private runs, then written as one unit.

A run spends its privacy budget once.  An output path that cannot be written
must therefore be refused *before* the first private step, not found out
after it; :func:`check_outputs` does that.  :func:`write_outputs` then writes
all outputs of a run so that either all of them appear or none does: each
is written to a hidden temporary file in its destination folder, and only
when every one is complete are they renamed over their targets (with
SIGINT/SIGTERM held back during the renames, and the previous files restored
if a rename fails).

Symbolic links: an output path that is a symbolic link to an existing regular
file is written *through* (the link stays, the file it points to is
replaced); a link to anything else (a directory, a device, nothing) is
refused.  Directories, devices, FIFOs and sockets are refused, as is any
output that names an input or another output of the same run.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping, Sequence

from synthdp.core.errors import InputError, SynthDPError

__all__ = ["Interrupted", "Output", "OutputError", "check_outputs", "write_outputs"]

_HELD_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class OutputError(SynthDPError, OSError):
    """Writing the outputs failed after they were checked (disk full, folder removed...)."""


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived; ``written`` says whether the outputs were already all in place."""

    def __init__(self, signum: int, written: bool = False):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum
        self.written = written


@dataclass(frozen=True)
class Output:
    """One output of a run: the option that named it, the path as given, and the file written."""

    option: str
    path: str
    target: Path


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def _target(option: str, path: str) -> Path:
    """The regular file that ``path`` makes us write (through a symbolic link), or an InputError."""
    if not str(path):
        raise InputError(f"{option} needs a file name, got an empty string")
    given = Path(path).expanduser()
    target = Path(os.path.realpath(given)) if given.is_symlink() else Path(os.path.abspath(given))
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        if given.is_symlink():
            raise InputError(f"{option} {path!r} is a symbolic link to {str(target)!r}, which does not exist; "
                             "name a regular file (outputs are written through links only to existing files)")
        mode = None
    except OSError as exc:
        raise InputError(f"{option} {path!r} cannot be checked: {exc.strerror}") from None
    if mode is not None and not stat.S_ISREG(mode):
        hint = f"; name a file inside it, e.g. {str(given / 'FILE')!r}" if stat.S_ISDIR(mode) else ""
        via = f" (through the symbolic link to {str(target)!r})" if given.is_symlink() else ""
        raise InputError(f"{option} {path!r} is {_kind(mode)}{via}; outputs must be regular files{hint}")
    folder = target.parent
    if not folder.is_dir():
        raise InputError(f"{option} {path!r}: the folder {str(folder)!r} does not exist; create it first "
                         f"(mkdir -p {str(folder)!r}) or choose another path")
    try:
        fd, probe = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".check", dir=folder)
    except OSError as exc:
        raise InputError(f"{option} {path!r}: cannot write in the folder {str(folder)!r} ({exc.strerror}); "
                         "choose a writable folder") from None
    os.close(fd)
    os.unlink(probe)
    return target


def _same_file(a: Path, b: Path) -> bool:
    if os.path.realpath(a) == os.path.realpath(b):
        return True
    with contextlib.suppress(OSError):
        return os.path.samefile(a, b)
    return False


def check_outputs(outputs: Mapping[str, str | os.PathLike | None],
                  inputs: Iterable[str | os.PathLike | None] = ()) -> dict[str, Output]:
    """Check every output path of a run before anything private runs.

    ``outputs`` maps the option naming each output (``"-o"``, ``"--report"``,
    ...) to its path (``None``: not requested).  Each must be a regular file
    or not exist yet (a symbolic link is followed only to an existing regular
    file), in an existing folder where a file can be created, must not be
    one of ``inputs`` and must differ from the other outputs.  Returns the
    checked outputs by option; raises :class:`InputError` naming the option
    and what to do.
    """
    inputs = [Path(p) for p in inputs if p is not None]
    checked: dict[str, Output] = {}
    for option, path in outputs.items():
        if path is None:
            continue
        target = _target(option, os.fspath(path))
        for source in inputs:
            if source.exists() and _same_file(target, source):
                raise InputError(f"{option} {os.fspath(path)!r} is the input file {os.fspath(source)!r}; "
                                 "writing it would destroy the input: choose another output name")
        for other in checked.values():
            if _same_file(target, other.target):
                raise InputError(f"{other.option} and {option} both name {os.fspath(path)!r}; "
                                 "give each output its own file")
        checked[option] = Output(option, os.fspath(path), target)
    return checked


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Defer SIGINT and SIGTERM until the block is over, then deliver them to the previous handlers.

    Python runs signal handlers in the main thread, so swapping them there
    holds a signal whichever thread the operating system delivers it to.
    Elsewhere (not the main thread) nothing can be held.
    """
    pending: list[int] = []

    def defer(signum, frame) -> None:
        pending.append(signum)

    try:
        previous = {sig: signal.signal(sig, defer) for sig in _HELD_SIGNALS}
    except ValueError:  # not the main thread
        yield
        return
    completed = False
    try:
        yield
        completed = True
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if pending:
            _deliver(pending[0], previous[pending[0]], completed)


def _deliver(signum: int, handler, written: bool) -> None:
    """Run the handler a held signal would have run; an :class:`Interrupted` learns whether all was written."""
    if handler is signal.SIG_IGN:
        return
    if handler is signal.SIG_DFL or handler is None:
        signal.raise_signal(signum)
        return
    try:
        handler(signum, None)
    except Interrupted as exc:
        exc.written = written
        raise


def _file_mode(target: Path) -> int:
    """Permissions of the file written: the replaced file's, or the usual ones under the umask."""
    with contextlib.suppress(FileNotFoundError):
        return stat.S_IMODE(os.stat(target).st_mode)
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _commit(pairs: Sequence[tuple[Path, Path]]) -> None:
    """Rename every temporary over its target; on a failure put back what was there before."""
    backups: dict[Path, Path] = {}
    done: list[Path] = []
    try:
        with _signals_held():
            for target, tmp in pairs:
                if target.exists():
                    backup = tmp.with_name(tmp.name + ".bak")
                    try:
                        os.link(target, backup)
                    except OSError:
                        shutil.copy2(target, backup)
                    backups[target] = backup
                os.replace(tmp, target)
                done.append(target)
            done.clear()
    finally:
        for target in reversed(done):  # only non-empty when a rename failed: undo the earlier ones
            with contextlib.suppress(OSError):
                if target in backups:
                    os.replace(backups[target], target)
                else:
                    os.unlink(target)
        for backup in backups.values():
            with contextlib.suppress(OSError):
                os.unlink(backup)


def write_outputs(jobs: Sequence[tuple[Output, Callable[[Path], None]]]) -> None:
    """Write all outputs of a run as one unit: all appear, or none and the old files stay.

    Each job is an :class:`Output` (from :func:`check_outputs`) and a function
    that writes the content to the temporary path it is given.  Temporary
    files are hidden (``.NAME.XXXX.tmp``) in the target's folder and removed
    whatever happens, including on SIGINT/SIGTERM (when the CLI turns them into
    :class:`Interrupted`); signals that arrive during the renames are held until all are done.
    """
    tmps: list[Path] = []
    current: Output | None = None
    try:
        for out, write in jobs:
            current = out
            fd, name = tempfile.mkstemp(prefix=f".{out.target.name}.", suffix=".tmp", dir=out.target.parent)
            os.close(fd)
            tmp = Path(name)
            tmps.append(tmp)
            write(tmp)
            os.chmod(tmp, _file_mode(out.target))
        current = None
        _commit([(out.target, tmp) for (out, _), tmp in zip(jobs, tmps)])
    except OSError as exc:
        what = f"writing {current.option} {current.path!r}" if current else "renaming the outputs into place"
        raise OutputError(f"{what} failed ({exc.strerror or exc}); no output was written or changed") from None
    finally:
        for tmp in tmps:
            with contextlib.suppress(OSError):
                tmp.unlink()
