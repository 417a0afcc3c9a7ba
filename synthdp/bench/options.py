"""The flags every ``synthdp bench`` target shares, and the checks of their values.

One vocabulary for all targets: ``--out DIR`` (alias ``--output``) is the
results folder, ``--quick`` a smoke run of about a minute, ``--suite`` the
datasets and ``--methods`` (alias ``--method``) what is compared; comma lists
are checked against the known names before anything runs, and a bad value is
an :class:`InputError` naming the flag (``synthdp: error: ...``, exit status 2).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Iterable

from synthdp.core.errors import InputError

__all__ = ["QUICK_HELP", "add_out", "add_quick", "comma_list", "existing_folder", "quick"]

QUICK_HELP = "a smoke run of about a minute (small sizes, one seed or repeat); overrides the options it sets"


def add_out(parser: argparse.ArgumentParser, default: str) -> None:
    """``--out DIR`` (alias ``--output``): the folder the target writes its tables, JSON and plots into."""
    parser.add_argument("--out", "--output", dest="out", default=default, metavar="DIR",
                        help="results folder (default: %(default)s)")


def add_quick(parser: argparse.ArgumentParser, what: str) -> None:
    """``--quick``: the target's smoke settings, described by ``what``."""
    parser.add_argument("--quick", action="store_true", help=f"{QUICK_HELP}: {what}")


def quick(args: argparse.Namespace, **settings) -> argparse.Namespace:
    """``args`` with the ``--quick`` ``settings`` applied when ``--quick`` was given."""
    if getattr(args, "quick", False):
        for name, value in settings.items():
            setattr(args, name, value)
    return args


def comma_list(text: str, option: str, allowed: Iterable[str] | None = None) -> list[str]:
    """The non-empty items of a comma list; any not in ``allowed`` is refused, naming ``option`` and the choices."""
    items = [item.strip() for item in str(text).split(",") if item.strip()]
    if not items:
        raise InputError(f"{option} needs at least one value, got {text!r}")
    if allowed is not None:
        allowed = list(allowed)
        unknown = [item for item in items if item not in allowed]
        if unknown:
            raise InputError(f"{option}: unknown {unknown}; choose from {sorted(allowed)} (comma list)")
    return items


def existing_folder(path: str | os.PathLike | None, option: str) -> Path | None:
    """``path`` if it is an existing folder (``None`` stays ``None``); else an error saying to create it."""
    if path is None:
        return None
    folder = Path(path).expanduser()
    if not folder.is_dir():
        raise InputError(f"{option} {str(path)!r} is not an existing folder; create it first (mkdir -p "
                         f"{str(path)!r}) or leave {option} out")
    return folder
