"""Where an input table lives: one file, a glob, a directory or a list of files, in CSV or Parquet.

The counting engines (:mod:`synthdp.engines`) accept such a *source*; this
module turns it into the sorted list of files it names, each with its format,
and reads a whole source into one DataFrame for the in-memory engine. The
file names are chosen by the user and are public; nothing here looks inside
a file except to read it.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Union

import pandas as pd

from synthdp.core.arrowtext import arrow_text, may_strip
from synthdp.core.errors import InputError
from synthdp.core.schema import READ_AS_TEXT
from synthdp.files.csvfile import COMPRESSED, read_csv
from synthdp.files.parquet import is_parquet, parquet_file, read_parquet

__all__ = ["COMPRESSED", "ReadOptions", "Source", "TableFile", "is_location", "list_files", "names_several",
           "read_table", "strip_text"]

#: A table given by location: a path, a glob pattern, a directory, or a list of paths.
Source = Union[str, os.PathLike, Sequence[Union[str, os.PathLike]]]

Format = Literal["csv", "parquet"]
_GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True)
class ReadOptions:
    """How CSV files are parsed (Parquet files carry their own types).

    ``missing``: extra tokens read as missing values (e.g. ``"?"``);
    ``columns``: the column names of CSV files without a header row;
    ``sep`` and ``encoding``: field separator and text encoding;
    ``typed``: let pandas infer the types (for drafting a schema only); otherwise every field is read as text
    (docs/privacy.md §10.1), and ``text`` matters only with ``typed`` (as :func:`synthdp.files.csvfile.read_csv`);
    ``known_columns``: names that a header may hold although they read as numbers (the schema's columns);
    ``dropped``: columns left out on purpose (``--drop``), read by no engine and not warned about.
    """

    missing: tuple[str, ...] = ()
    columns: tuple[str, ...] | None = None
    sep: str = ","
    encoding: str = "utf-8"
    text: tuple[str, ...] = ()
    typed: bool = False
    known_columns: tuple[str, ...] = ()
    dropped: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "missing", tuple(self.missing or ()))
        object.__setattr__(self, "known_columns", tuple(self.known_columns or ()))
        object.__setattr__(self, "dropped", tuple(self.dropped or ()))
        object.__setattr__(self, "text", tuple(self.text or ()))
        if self.columns is not None:
            object.__setattr__(self, "columns", tuple(self.columns))


@dataclass(frozen=True)
class TableFile:
    """One input file and its format."""

    path: Path
    format: Format


def _format(path: Path, named: bool = False) -> Format:
    """A file's format from its name; a file named on its own (not matched by a glob) that is not Parquet is
    CSV whatever its extension (``adult.data``), as the command line reads it."""
    if is_parquet(path):
        return "parquet"
    if named or path.name.lower().endswith((".csv", ".csv.gz")):
        return "csv"
    raise InputError(f"cannot tell the format of {str(path)!r}: a file a glob matches must be named *.csv (or "
                     "*.csv.gz) or *.parquet; give the file on its own to read it as CSV")


def _expand_one(item: str | os.PathLike) -> list[TableFile]:
    text = os.fspath(item)
    if _GLOB_CHARS & set(text):
        found = sorted(Path(p) for p in glob.glob(text, recursive=True) if Path(p).is_file())
        if not found:
            raise InputError(f"no file matches {text!r}")
        return [TableFile(p, _format(p)) for p in found]
    path = Path(text)
    if path.is_dir():
        found = sorted(p for p in path.iterdir() if p.is_file() and not p.name.startswith((".", "_"))
                       and (is_parquet(p) or p.name.lower().endswith((".csv", ".csv.gz"))))
        if not found:
            raise InputError(f"directory {text!r} holds no *.csv or *.parquet file")
        return [TableFile(p, _format(p)) for p in found]
    if not path.is_file():
        raise InputError(f"input file {text!r} does not exist or is not a file")
    return [TableFile(path, _format(path, named=True))]


def is_location(path: str | os.PathLike) -> bool:
    """Whether ``path`` names more than one CSV file can be: a Parquet file, a directory or a glob."""
    return is_parquet(os.fspath(path)) or names_several(path)


def names_several(path: str | os.PathLike) -> bool:
    """Whether ``path`` may name several files: a directory or a glob."""
    text = os.fspath(path)
    return Path(text).is_dir() or bool(_GLOB_CHARS & set(text))


def list_files(source: Source) -> list[TableFile]:
    """The files a source names, in order (globs and directories sorted by name).

    All files must have one format; a directory contributes its ``*.csv`` /
    ``*.parquet`` files, skipping hidden and ``_``-prefixed ones (Spark and
    Dask write ``_SUCCESS`` / ``_metadata`` there).
    """
    items = [source] if isinstance(source, (str, os.PathLike)) else list(source)
    if not items:
        raise InputError("the input source names no file")
    files = [f for item in items for f in _expand_one(item)]
    formats = sorted({f.format for f in files})
    if len(formats) > 1:
        raise InputError(f"the input mixes CSV and Parquet files ({files[0].path} ...); give one format")
    return files


def file_columns(f: TableFile, options: ReadOptions = ReadOptions()) -> tuple[str, ...]:
    """A file's column names from its metadata only (a Parquet footer, a CSV header or ``options.columns``)."""
    if f.format == "parquet":
        return tuple(parquet_file(f.path).schema_arrow.names)
    if options.columns is not None:
        return options.columns
    try:
        header = pd.read_csv(f.path, nrows=0, sep=options.sep, encoding=options.encoding, skipinitialspace=True)
    except pd.errors.EmptyDataError:
        raise InputError(f"input file {str(f.path)!r} is empty") from None
    except (OSError, UnicodeDecodeError, LookupError, pd.errors.ParserError) as exc:
        raise InputError(f"cannot read {str(f.path)!r} as CSV: {exc}") from None
    return tuple(map(str, header.columns))


def read_csv_file(path: Path, options: ReadOptions, known_columns: Sequence[str] = ()) -> pd.DataFrame:
    """One CSV file with the project's parsing rules (:func:`synthdp.files.csvfile.read_csv`); ``known_columns``
    adds to ``options.known_columns``."""
    return read_csv(path, missing=list(options.missing) or None,
                    columns=list(options.columns) if options.columns else None, sep=options.sep,
                    encoding=options.encoding, text=options.text, typed=options.typed,
                    known_columns={*options.known_columns, *known_columns})


def read_table(source: Source, options: ReadOptions = ReadOptions(),
               columns: Sequence[str] | None = None) -> pd.DataFrame:
    """The whole source as one DataFrame (rows of the files in order), for the in-memory engine.

    ``columns`` restricts Parquet reads to those columns (CSV files are read whole, and a CSV header may name
    them by numbers).
    """
    frames = []
    for f in list_files(source):
        if f.format == "parquet":
            frames.append(read_parquet(f.path, list(columns) if columns is not None else None))
        else:
            frames.append(read_csv_file(f.path, options, columns or ()))
    df = frames[0] if len(frames) == 1 else pd.concat(_same_dtypes(frames), ignore_index=True)
    df.attrs[READ_AS_TEXT] = all(f.attrs.get(READ_AS_TEXT, False) for f in frames)  # CSV fields, not Parquet types
    if df.empty:
        raise InputError(f"the input {source!s} has no rows")
    return df


def _same_dtypes(frames: list[pd.DataFrame]) -> list[pd.DataFrame]:
    """The frames with every column whose dtype differs between them held as Python objects, so that joining them
    converts no value by another file's type (``True`` would become ``1`` next to an integer file;
    docs/privacy.md §10.1)."""
    columns = dict.fromkeys(c for f in frames for c in f.columns)
    mixed = [c for c in columns if len({str(f[c].dtype) for f in frames if c in f.columns}) > 1]
    return [f.astype({c: object for c in mixed if c in f.columns}) for f in frames] if mixed else frames


def strip_text(df: pd.DataFrame) -> tuple[pd.DataFrame, list[str]]:
    """``df`` with surrounding spaces removed from its text values (a copy if any column changes), and
    the names of the columns that changed.

    Both counting engines encode stripped values, as
    :func:`synthdp.api.generate_synthetic` does for an in-memory table, so
    ``' Federal-gov'`` is the category ``'Federal-gov'`` whichever engine counts.
    Only the distinct values are inspected, and none of a column held by Arrow whose bytes show that no value
    strips (:func:`synthdp.core.arrowtext.may_strip`).
    """
    changed, out = [], df
    for j, col in enumerate(df.columns):
        series = df.iloc[:, j]
        if series.dtype != object and not pd.api.types.is_string_dtype(series.dtype):
            continue
        text = arrow_text(series)
        if text is not None and not may_strip(text):
            continue
        fix = {v: v.strip() for v in pd.unique(series) if isinstance(v, str) and v != v.strip()}
        if fix:
            if out is df:
                out = df.copy()
            out.isetitem(j, series.replace(fix))
            changed.append(str(col))
    return out, changed
