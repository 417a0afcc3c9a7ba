"""Reading user CSVs with clear errors, and writing outputs atomically.

Nothing is ever written half-way: every output goes to a temporary file in
the destination folder and is renamed over the target only when complete.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from pathlib import Path
from typing import Iterator

import pandas as pd

from synthdp.core.errors import InputError


def read_csv(path: str | os.PathLike, *, missing: list[str] | None = None,
             columns: list[str] | None = None) -> pd.DataFrame:
    """Read a CSV, treating ``missing`` tokens (e.g. ``?``) as missing values.

    ``columns`` names the columns of a file without a header row.  Leading
    spaces after separators are skipped (the raw UCI Adult files have them).
    An unreadable, empty or header-only file raises :class:`InputError`.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"input file {str(path)!r} does not exist or is not a file")
    try:
        df = pd.read_csv(path, skipinitialspace=True, na_values=missing or None, keep_default_na=True,
                         header=None if columns else "infer", names=columns)
    except pd.errors.EmptyDataError:
        raise InputError(f"input file {str(path)!r} is empty") from None
    except (pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot parse {str(path)!r} as CSV: {exc}") from None
    if df.empty:
        raise InputError(f"input file {str(path)!r} has a header but no rows")
    return df


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it over ``path`` on success only."""
    target = Path(path)
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise InputError(f"output folder {str(folder)!r} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    os.close(fd)
    try:
        yield Path(tmp)
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_csv(df: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write ``df`` to ``path`` atomically (no index column)."""
    with atomic_path(path) as tmp:
        df.to_csv(tmp, index=False)


def write_json(obj, path: str | os.PathLike) -> None:
    """Write ``obj`` as indented JSON to ``path`` atomically."""
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(obj, indent=2, default=str) + "\n")
