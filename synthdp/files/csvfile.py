"""Reading user CSVs with clear errors, and writing outputs atomically.

Nothing is ever written half-way: every output goes to a temporary file in
the destination folder and is renamed over the target only when complete
(:mod:`synthdp.files.outputs`, which also writes several outputs as one unit).
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import warnings
from collections import Counter
from pathlib import Path
from typing import Collection, Iterator

import pandas as pd

from synthdp.core.errors import InputError
from synthdp.core.schema import READ_AS_TEXT
from synthdp.files.arrowcsv import read_text
from synthdp.files.outputs import check_outputs, write_outputs

#: Endings pandas reads as compressed CSV: such a file is read whole (never cut into byte ranges), by pandas.
COMPRESSED = (".gz", ".bz2", ".xz", ".zip", ".zst", ".tar")
#: Separators a file that parses as one column probably uses instead of the one given.
_OTHER_SEPARATORS = {",": "','", ";": "';'", "\t": "'\\t' (tab)", "|": "'|'"}


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return text.strip().lower() not in ("nan", "inf", "-inf", "+inf", "infinity", "")


def _separator_hint(first: str, sep: str) -> str:
    """``--sep X`` advice when ``first`` (a line of the file) holds another usual separator, else ``""``."""
    found = [name for s, name in _OTHER_SEPARATORS.items() if s != sep and s in first]
    return f"its first line contains {found[0]}: pass the separator, e.g. --sep {found[0].split()[0]}" if found else ""


def _duplicates(names: list[str]) -> list[str]:
    return sorted(n for n, k in Counter(names).items() if k > 1)


def read_csv(path: str | os.PathLike, *, missing: list[str] | None = None, columns: list[str] | None = None,
             sep: str = ",", encoding: str = "utf-8", skip_rows: int = 0,
             text: tuple[str, ...] = (), typed: bool = False, known_columns: Collection[str] = ()) -> pd.DataFrame:
    """Read a CSV, treating ``missing`` tokens (e.g. ``?``) as missing values.

    ``columns`` names the columns of a file without a header row, one name
    per field.  Leading spaces after separators are skipped (the raw UCI
    Adult files have them, so ``' ?'`` is the token ``?`` and ``' Federal-gov'``
    the category ``Federal-gov``), as by the ``synthdp`` command.  ``sep`` and
    ``encoding`` are the field separator and text encoding (CLI: ``--sep``,
    ``--encoding``); ``skip_rows`` leading lines (a title, a notice) are
    skipped before the header (CLI: ``--skip-rows``).  An unreadable, empty, header-only or ragged file, a
    header with a repeated name, a ``columns`` list of the wrong length, or a
    file that looks like it uses another separator or encoding raises
    :class:`InputError` saying what to pass.

    Every field is read as text (missing tokens and pandas' default missing
    markers such as an empty field as missing), by pyarrow's parser where it
    reads the file as pandas' does (:mod:`synthdp.files.arrowcsv`), else by
    pandas' (the same frame either way): the schema's public type then
    reads each value on its own (docs/privacy.md §10.1), whereas pandas'
    inference types a column by all of its values, so that one ``"x"`` keeps
    ``"001"`` as text where it would otherwise read 1.  ``typed=True`` lets
    pandas infer the types, for drafting a schema only (``synthdp schema``,
    which reads types off the data for the owner's review); ``text`` then
    names columns still read as text (a privacy unit: ``007`` and ``7`` stay
    two units, §10.6).  A header whose names are numbers is still a header
    (columns named ``2019,2020`` exist), with a warning that a file without a
    header row needs ``columns``, unless ``known_columns`` (the schema's
    names) lists those numbers.
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"input file {str(path)!r} does not exist or is not a file")
    if columns is not None:
        columns = [str(c) for c in columns]
        if _duplicates(columns):
            raise InputError(f"--columns names {_duplicates(columns)} more than once; every column needs its own name")
    if isinstance(skip_rows, bool) or not isinstance(skip_rows, int) or skip_rows < 0:
        raise InputError(f"skip_rows (CLI: --skip-rows) must be a whole number >= 0, got {skip_rows!r}")
    options = dict(sep=sep, encoding=encoding, skipinitialspace=True, skiprows=skip_rows)
    dtype = ({(columns.index(c) if columns and c in columns else c): str for c in text} or None) if typed else str
    fast = not typed and not path.name.lower().endswith(COMPRESSED)
    try:
        df = read_text(path, header=not columns, missing=missing or (), sep=sep, encoding=encoding,
                       skip_rows=skip_rows) if fast else None
        if df is None:
            df = pd.read_csv(path, na_values=missing or None, keep_default_na=True,
                             header=None if columns else "infer", dtype=dtype, **options)
        header = None if columns else [str(c) for c in pd.read_csv(path, header=None, nrows=1, **options).iloc[0]]
    except pd.errors.EmptyDataError:
        raise InputError(f"input file {str(path)!r} is empty"
                         + (f" after skipping {skip_rows} lines (--skip-rows)" if skip_rows else "")) from None
    except UnicodeDecodeError as exc:
        raise InputError(f"cannot read {str(path)!r} as {encoding} text (byte {exc.object[exc.start]:#04x} at "
                         f"offset {exc.start}); give the file's encoding, e.g. --encoding latin-1 "
                         f"(Python: encoding='latin-1')") from None
    except LookupError:
        raise InputError(f"unknown text encoding {encoding!r}; use e.g. utf-8, latin-1 or cp1252") from None
    except pd.errors.ParserError as exc:
        hint = _separator_hint(_first_line(path, encoding, skip_rows), sep)
        raise InputError(f"cannot parse {str(path)!r} as CSV with separator {sep!r}: {exc}"
                         + (f"; {hint} (Python: sep=...)" if hint else "")) from None
    except OSError as exc:
        raise InputError(f"cannot read input file {str(path)!r}: {exc.strerror or exc}") from None
    if df.empty:
        raise InputError(f"input file {str(path)!r} has a header but no rows"
                         + (f" after skipping {skip_rows} lines (--skip-rows)" if skip_rows else ""))
    if df.shape[1] == 1:
        hint = _separator_hint(_first_line(path, encoding, skip_rows), sep)
        if hint:
            raise InputError(f"{str(path)!r} reads as a single column with separator {sep!r}, but {hint} "
                             f"(Python: sep=...)")
    numbers = [name for name in header or () if _is_number(name) and name not in known_columns]
    if numbers:
        warnings.warn(f"the first line of {str(path)!r} is read as its header, although {numbers} are numbers; if "
                      f"the file has no header row, name its {df.shape[1]} fields with --columns NAME1,NAME2,... "
                      "(Python: columns=[...]) so that its first row is not lost", UserWarning, stacklevel=2)
    if columns is not None:
        if df.shape[1] != len(columns):
            raise InputError(f"--columns gives {len(columns)} names but the rows of {str(path)!r} have "
                             f"{df.shape[1]} fields; give exactly one name per field, in order")
        df.columns = columns
    elif _duplicates(header):
        raise InputError(f"the header of {str(path)!r} names {_duplicates(header)} more than once; rename the "
                         "columns so that each name is unique (or pass --columns for a file without a header)")
    df.attrs[READ_AS_TEXT] = not typed
    return df


def _first_line(path: Path, encoding: str, skip: int = 0) -> str:
    """The file's first line after ``skip`` lines (for hints only; an unreadable file gives ``""``)."""
    try:
        with open(path, encoding=encoding, errors="replace") as handle:
            for _ in range(skip):
                handle.readline()
            return handle.readline()
    except (OSError, LookupError):
        return ""


@contextlib.contextmanager
def atomic_path(path: str | os.PathLike) -> Iterator[Path]:
    """Yield a temporary path beside ``path``; rename it over ``path`` on success only.

    The path is checked first (:func:`synthdp.files.outputs.check_outputs`).
    """
    out = check_outputs({"output": path})["output"]
    fd, name = tempfile.mkstemp(prefix=f".{out.target.name}.", suffix=".tmp", dir=out.target.parent)
    os.close(fd)
    try:
        yield Path(name)
        write_outputs([(out, lambda tmp: os.replace(name, tmp))])
    finally:
        with contextlib.suppress(OSError):
            os.unlink(name)


def write_csv(df: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write ``df`` to ``path`` atomically (no index column)."""
    out = check_outputs({"output": path})["output"]
    write_outputs([(out, lambda tmp: df.to_csv(tmp, index=False))])


def write_json(obj, path: str | os.PathLike) -> None:
    """Write ``obj`` as indented JSON to ``path`` atomically."""
    out = check_outputs({"output": path})["output"]
    write_outputs([(out, lambda tmp: dump_json(obj, tmp))])


def dump_json(obj, path: Path) -> None:
    """Write ``obj`` as indented JSON (non-JSON values as text) to ``path``, directly."""
    path.write_text(json.dumps(obj, indent=2, default=str) + "\n")
