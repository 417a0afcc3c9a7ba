"""Reading a CSV file's fields as text with pyarrow's parser, when it reads the file as pandas' parser does.

synthdp reads every CSV field as text (docs/privacy.md §10.1) with pandas' C
parser (:func:`synthdp.files.csvfile.read_csv`): leading spaces after a
separator skipped, pandas' missing markers and the owner's missing tokens read
as missing. pyarrow's parser reads the same text several times faster, but it
has no rule for leading spaces, so a quoted field after ``", "`` (``a, "Smith,
John"``) is split at the comma inside the quotes. :func:`read_text` reads the
file with pyarrow and returns the frame only when its checks show that pandas
would have read the same one; otherwise it returns ``None`` and the caller
reads the file with pandas, which also raises every error, with its messages
and row numbers. The checks and why they suffice are in docs/privacy.md §10.1
("Two CSV readers, one frame").
"""

from __future__ import annotations

import codecs
import functools
import io
import mmap
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import pandas as pd

__all__ = ["read_text"]

#: The quote character both parsers use (with doubled quotes inside a quoted field).
QUOTE = '"'
#: Bytes of the file pyarrow parses as one block, and so the length of a column's chunks: every later step walks
#: a column chunk by chunk (651k raw Adult rows: 5 chunks a column instead of 76 with pyarrow's 1 MB).
BLOCK = 1 << 24


def _pyarrow() -> ModuleType | None:
    """The ``pyarrow`` module with its CSV parser and compute functions, or ``None`` when it is not installed."""
    try:
        import pyarrow
        import pyarrow.compute  # noqa: F401
        import pyarrow.csv  # noqa: F401
    except ImportError:
        return None
    return pyarrow


@functools.cache
def _text_dtype() -> Any:
    """The dtype pandas' parser gives a column read with ``dtype=str``: pyarrow-backed strings from pandas 3 on
    (this reader then hands pyarrow's arrays over without a copy), Python objects before."""
    return pd.read_csv(io.StringIO("a\nx\n"), dtype=str)["a"].dtype


def _missing_tokens(missing: Sequence[str]) -> list[str] | None:
    """The exact texts pandas' parser reads as missing in a text column: its default markers (``''``, ``'NA'``,
    ``'null'``, ...) and ``missing`` with the variants pandas adds (a token ``-1`` also matches ``-1.0``); ``None``
    when this pandas does not say (then pandas reads the file)."""
    try:
        from pandas.io.parsers.readers import _clean_na_values
    except ImportError:
        return None
    return sorted({str(token) for token in _clean_na_values(list(missing) or None, keep_default_na=True)[0]})


def _same_options(path: Path, sep: str, encoding: str) -> bool:
    """Whether both parsers take the file's bytes alike: UTF-8 text and a one-character separator that is not
    the quote, a space or a line end (the caller never passes a file pandas decompresses by its name)."""
    try:
        utf8 = codecs.lookup(encoding).name == "utf-8"
    except LookupError:
        return False
    return utf8 and len(sep) == 1 and sep not in QUOTE + " \r\n" and path.is_file()


def _mapped(path: Path) -> mmap.mmap | None:
    """The file's bytes mapped read-only, so that the parser reads them where the system holds them (no copy
    into this process's memory), or ``None`` when the file cannot be mapped (an empty file: pandas says so).

    A file cut short by another program while it is mapped stops the process (SIGBUS) instead of raising an
    error; reading the file into memory instead cost 0.11 s of CPU more on 651k raw Adult rows (best of 8: 0.50
    against 0.61 s for the parse and the columns' leading spaces), for a file that must not change while it is
    read in any case.
    """
    try:
        with open(path, "rb") as handle:
            return mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):
        return None


def _body_start(data: mmap.mmap, skip_rows: int) -> int | None:
    """The offset of the text after ``skip_rows`` lines, or ``None`` when pandas could count those lines otherwise
    (a quote, which may hold a line end, or a carriage return not followed by a line feed). Both parsers skip a
    UTF-8 byte order mark at the start."""
    start = 0
    for _ in range(skip_rows):
        end = data.find(b"\n", start)
        if end < 0:
            return None
        line = data[start:end]
        if QUOTE.encode() in line or b"\r" in line[:-1]:
            return None
        start = end + 1
    return start


def read_text(path: Path, *, header: bool, missing: Sequence[str] = (), sep: str = ",", encoding: str = "utf-8",
              skip_rows: int = 0) -> pd.DataFrame | None:
    """The file's fields as text, as ``pd.read_csv(path, dtype=str, skipinitialspace=True, na_values=missing)``
    reads them, or ``None`` when pyarrow is missing or its reading is not vouched for (docs/privacy.md §10.1).

    ``header``: the first row names the columns (else they are numbered from 0). Column names and values are
    those pandas gives, with the same dtype; a file that pandas would refuse, or read with other rows or
    columns, gives ``None``, never an error.
    """
    pa, tokens, dtype = _pyarrow(), _missing_tokens(missing), _text_dtype()
    if (pa is None or tokens is None or not isinstance(dtype, pd.StringDtype) or dtype.storage != "pyarrow"
            or not _same_options(path, sep, encoding)):
        return None
    data = _mapped(path)
    start = _body_start(data, skip_rows) if data is not None else None
    if start is None:
        return None
    quoted = data.find(QUOTE.encode(), start) >= 0  # a scan that stops at the first quote; counted only then
    if quoted and data[start:].count(QUOTE.encode()) % 2:
        return None  # with no quote inside a field (checked below), a quoted field is left open at the end
    table = _parse(pa, memoryview(data)[start:], sep=sep, tokens=tokens, quoted=quoted)
    if table is None or table.num_columns < 2 or table.num_rows < 1 + header:
        return None
    columns = []
    while table.num_columns:  # each column read is let go before the next is made, which reuses its memory
        column, table = table.column(0), table.remove_column(0)
        columns.append(_text_column(pa, column, tokens=tokens, quoted=quoted))
        del column
        if columns[-1] is None:
            return None
    # The memory left free goes back to the system: kept by Arrow's allocator, it made the system compact memory
    # before it could give the next large array (an encoding's code matrix) huge pages (651k raw Adult rows: 0.1 s
    # of system CPU for that matrix, 0.01 s once the memory is handed back).
    pa.default_memory_pool().release_unused()
    if not header:
        return pd.DataFrame({j: pd.Series(dtype.__from_arrow__(c), copy=False) for j, c in enumerate(columns)})
    names = [c[0].as_py() for c in columns]
    if None in names or len(set(names)) < len(names):
        return None  # pandas renames a missing or repeated name ("Unnamed: 2", "a.1")
    return pd.DataFrame({name: pd.Series(dtype.__from_arrow__(c.slice(1)), copy=False)
                         for name, c in zip(names, columns)})


def _parse(pa: ModuleType, body: memoryview, *, sep: str, tokens: list[str], quoted: bool) -> Any:
    """pyarrow's table of the text, every column as strings, or ``None`` when pyarrow refuses the text.

    The missing tokens become nulls while parsing; in a file without quotes, so do the tokens after one
    leading space (``' ?'`` of the raw UCI Adult files), which pandas reads after skipping that space.
    """
    first = bytes(body[:65536]).split(b"\n", 1)[0]
    width = first.count(sep.encode()) + 1  # at most this many fields, unless a quoted header holds a line end
    nulls = tokens + ([" " + token for token in tokens] if not quoted else [])
    try:
        table = pa.csv.read_csv(
            pa.BufferReader(pa.py_buffer(body)),
            read_options=pa.csv.ReadOptions(autogenerate_column_names=True, block_size=BLOCK),
            parse_options=pa.csv.ParseOptions(delimiter=sep, quote_char=QUOTE, double_quote=True, escape_char=False,
                                              newlines_in_values=quoted, ignore_empty_lines=True),
            convert_options=pa.csv.ConvertOptions(
                column_types={f"f{j}": pa.large_string() for j in range(width)}, null_values=nulls,
                strings_can_be_null=True, quoted_strings_can_be_null=True))
    except pa.ArrowException:
        return None
    if any(field.type != pa.large_string() for field in table.schema):
        return None  # more fields than the first line shows: leave the file to pandas
    return table


def _text_column(pa: ModuleType, column: Any, *, tokens: list[str], quoted: bool) -> Any:
    """The column as pandas reads it (leading spaces removed, missing tokens null), or ``None`` when pandas may
    have split or stripped its fields otherwise.

    A field holding the quote character means a quote that did not open a field for pyarrow (pandas opens one
    after skipped spaces too). In a file with quotes a field starting with a space may have been quoted (pandas
    keeps the space) or not (pandas skips it): left to pandas. In a file without quotes every leading space is
    skipped, and a token that only then appears (after two spaces or more) becomes null.
    """
    pc = pa.compute
    if quoted:
        split = pc.any(pc.match_substring(column, QUOTE)).as_py() or pc.any(pc.starts_with(column, " ")).as_py()
        return None if split else column
    spaced = pc.any(pc.starts_with(column, "  ")).as_py()  # else the parse has made every token null
    column = pc.ascii_ltrim(column, characters=" ")  # the space byte is no part of a longer UTF-8 character
    found = pc.is_in(column, value_set=pa.array(tokens, pa.large_string())) if spaced else None
    if spaced and pc.any(found).as_py():
        column = pc.if_else(found, pa.scalar(None, pa.large_string()), column)
    return column
