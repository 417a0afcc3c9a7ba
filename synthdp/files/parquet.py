"""Parquet files: reading them into DataFrames and writing outputs atomically.

Parquet goes through ``pyarrow``, an optional dependency (``pip install
'synthdp[dask]'``, which also brings the Dask counting engine). The pandas
engine needs it only for Parquet input or output; CSV never does.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pandas as pd

from synthdp.core.encoding import written_form
from synthdp.core.errors import InputError
from synthdp.core.extras import require
from synthdp.core.schema import Schema
from synthdp.files.outputs import check_outputs, write_outputs

__all__ = ["PARQUET_SUFFIXES", "dump_parquet", "dump_table", "is_parquet", "parquet_file", "read_parquet",
           "require_pyarrow", "table_format", "write_parquet", "write_table"]

#: File name endings read and written as Parquet.
PARQUET_SUFFIXES = (".parquet", ".parq", ".pq")


def is_parquet(path: str | os.PathLike) -> bool:
    """Whether ``path`` names a Parquet file (by its ending)."""
    return str(path).lower().endswith(PARQUET_SUFFIXES)


def require_pyarrow() -> Any:
    """The ``pyarrow.parquet`` module, or a clear :class:`InputError` saying how to install it."""
    return require("pyarrow.parquet", "Parquet input and output")


def parquet_file(path: str | os.PathLike) -> Any:
    """An open ``pyarrow.parquet.ParquetFile``; a missing or unreadable file is an error naming it."""
    pq = require_pyarrow()
    pa = require("pyarrow", "Parquet input and output")
    if not Path(path).is_file():
        raise InputError(f"input file {str(path)!r} does not exist or is not a file")
    try:
        return pq.ParquetFile(path)
    except (OSError, pa.ArrowException) as exc:
        raise InputError(f"cannot read {str(path)!r} as Parquet: {exc}") from None


def read_parquet(path: str | os.PathLike, columns: list[str] | None = None) -> pd.DataFrame:
    """One Parquet file as a DataFrame (only ``columns`` when given); errors name the file.

    An integer column with a null holds Python integers, not floats: a value's label never depends on whether
    another row is null (docs/privacy.md §10.1)."""
    pa = require("pyarrow", "Parquet input and output")
    handle = parquet_file(path)
    missing = [c for c in columns or () if c not in handle.schema_arrow.names]
    if missing:
        raise InputError(f"{str(path)!r} has no column(s) {missing}; its columns are {handle.schema_arrow.names}")
    try:
        return handle.read(columns=columns).to_pandas(integer_object_nulls=True)  # no int -> float for a null
    except (OSError, pa.ArrowException) as exc:
        raise InputError(f"cannot read {str(path)!r} as Parquet: {exc}") from None


def dump_parquet(df: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write ``df`` to ``path`` as Parquet, directly (no index); callers make it atomic."""
    require_pyarrow()
    df.to_parquet(path, index=False, engine="pyarrow")


def table_format(name: str | os.PathLike, option: str = "path") -> str:
    """``"csv"`` or ``"parquet"`` by the ending of an output table's ``name``; any other ending is refused.

    The one rule for output tables, of the CLI's ``-o`` and of the Python API
    (:meth:`synthdp.SyntheticResult.save`): a file is written in the format its
    name says, never CSV text under another format's name.
    """
    if is_parquet(name):
        return "parquet"
    if str(name).lower().endswith(".csv"):
        return "csv"
    suffix = Path(name).suffix or "(no suffix)"
    raise InputError(f"{option} {os.fspath(name)!r}: unknown table format {suffix!r}; name the file .csv or "
                     f".parquet (Excel opens the .csv)")


def dump_table(df: pd.DataFrame, path: str | os.PathLike, name: str | os.PathLike,
               schema: Schema | None = None) -> None:
    """Write ``df`` to ``path`` in the format ``name`` (the final output's name) says (:func:`table_format`).

    CSV text writes the datetime columns of the table's public ``schema`` in their formats
    (:func:`~synthdp.core.encoding.written_form`); Parquet keeps them typed.
    """
    if table_format(name) == "parquet":
        dump_parquet(df, path)
    else:
        (df if schema is None else written_form(df, schema)).to_csv(path, index=False)


def write_table(df: pd.DataFrame, path: str | os.PathLike, fmt: str | None = None, *,
                schema: Schema | None = None) -> None:
    """Write ``df`` to ``path`` atomically in the format its name says; ``fmt`` insists on one format.

    Everything is checked (the name's format, the path) before anything is written; ``schema`` as in
    :func:`dump_table`.
    """
    found = table_format(path)
    if fmt is not None and found != fmt:
        raise InputError(f"{os.fspath(path)!r} names a {found} file but this writes {fmt}; name it .{fmt}, or use "
                         "save(), which writes the format the name says")
    if found == "parquet":
        require_pyarrow()
    out = check_outputs({"output": path})["output"]
    write_outputs([(out, lambda tmp: dump_table(df, tmp, path, schema))])


def write_parquet(df: pd.DataFrame, path: str | os.PathLike) -> None:
    """Write ``df`` to ``path`` as Parquet, atomically (checked, temporary file, then rename; no index)."""
    require_pyarrow()
    out = check_outputs({"output": path})["output"]
    write_outputs([(out, lambda tmp: dump_parquet(df, tmp))])
