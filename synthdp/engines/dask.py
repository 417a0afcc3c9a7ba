"""The distributed counting engine: CSV or Parquet files counted part by part on ``dask.distributed``.

The driver lists the files and plans *parts* (Parquet row groups, CSV byte
ranges) from file metadata only; each worker reads its part, encodes it with
the public schema, and turns every row into one mixed-radix integer key
(:mod:`synthdp.core.keys`) whose distinct values it counts. The per-part
counts are added up in a tree on the workers, so the driver only ever holds
the distinct rows. The counts equal those of the pandas engine exactly.

The categories of a column are never read off the data on workers
(docs/privacy.md §1.1): they, and a numeric column's cells and bounds, are
public or learned privately from a first pass that tallies the columns whose
domain is to be learned (:meth:`DaskEngine.tally`, §10.7). Values that do not fit the
schema are counted per column over all parts and reported in one error
naming, for each column, a file and the first offending value, as the
in-memory encoder does; numeric columns with ``clip`` are clamped instead.

CSV parts are byte ranges cut at line ends, so a CSV file whose quoted fields
hold line breaks must be read whole (``blocksize=None``). The workers import
synthdp, so a remote cluster needs it installed in the same version.
"""

from __future__ import annotations

import contextlib
import io
import logging
import os
import warnings
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, ClassVar, Iterator, Literal, Protocol

import numpy as np
import pandas as pd

from synthdp.core.data import AggregatedData
from synthdp.core.encoding import Encoder
from synthdp.core.errors import EngineError, InputError, SchemaError
from synthdp.core.extras import require
from synthdp.core.keys import pack, unpack, word_spans
from synthdp.files.parquet import parquet_file
from synthdp.core.schema import Attribute, Schema, category_label, typed_label, value_kind
from synthdp.core.tallies import Tallies, check_untallied
from synthdp.engines.rows import Rows, read_options
from synthdp.files.sources import COMPRESSED, ReadOptions, Source, TableFile, file_columns, list_files, strip_text
from synthdp.engines.keys import sum_by_key
from synthdp.mechanisms.units import Bounding, keep_mask, unit_hash, unit_text

if TYPE_CHECKING:
    from synthdp.config import SynthesisConfig

__all__ = ["DaskEngine"]

logger = logging.getLogger(__name__)

#: Bytes of CSV per part.
DEFAULT_BLOCKSIZE = 64 * 2**20
#: Parquet row groups are joined into parts of at least this many rows.
DEFAULT_PART_ROWS = 1_000_000
#: Rows a worker decodes and encodes at once (bounds a worker's memory).
DEFAULT_BATCH_ROWS = 1_000_000
#: Parts added up per reduction task.
_FAN_IN = 16


def _require_distributed() -> Any:
    return require("distributed", "engine='dask'")


class Join(Protocol):
    """What each batch of a child table's files is joined with on the workers (its parents' columns,
    docs/privacy.md §12): called on a batch read without the schema's columns ``columns``, it returns the batch
    with them appended (rows it cannot join dropped; a message's row numbers then count the rows joined, and
    say so, :meth:`Part.where`)."""

    columns: frozenset[str]

    def __call__(self, frame: pd.DataFrame) -> pd.DataFrame:
        ...


@dataclass(frozen=True)
class Part:
    """A piece of one file read by one task: Parquet row groups, or a CSV byte range ``[start, end)``."""

    path: str
    format: Literal["csv", "parquet"]
    columns: tuple[str, ...]  # CSV: the file's column names (header or given); Parquet: unused
    row_groups: tuple[int, ...] = ()
    first_row: int = 0
    start: int = 0
    end: int | None = None  # None: to the end of the file
    header: bool = False  # CSV: the part starts with the header line

    def where(self, offset: int = 0, joined: bool = False) -> str:
        """The part, for messages: the file, and where row numbers start when they are ``offset`` rows in;
        ``joined``: the rows are a child table's joined with their parents, and its row numbers count those only."""
        if self.format == "parquet":
            text = f"{self.path} (row numbers count from row {self.first_row + offset} of the file)"
        elif self.start == 0:
            text = self.path if offset == 0 else f"{self.path} (row numbers count from data row {offset})"
        else:
            text = f"{self.path} (row numbers count from data row {offset} after byte {self.start})"
        return f"{text}, counting only the rows whose foreign key is a parent's" if joined else text


@dataclass
class _Problem:
    """Values of one column that do not fit the schema: how many, in how many parts, the first one."""

    values: int
    parts: int
    first: str


@dataclass
class _Counts:
    """Partial result: distinct keys (``(m, words)``) with counts, rows read, and schema problems."""

    keys: np.ndarray
    counts: np.ndarray
    rows: int = 0
    problems: dict[str, _Problem] = field(default_factory=dict)


def _violations(attr: Attribute, series: pd.Series, missing_values: tuple[str, ...]) -> int:
    """How many values of ``series`` the schema rejects (the encoder names the first one).

    Counted for the error message only: unknown categories (but where encoding
    absorbs them: into the ``other`` label, or into the missing value of a
    learned domain), values that are not numbers, values outside the bounds of
    a column that does not clip, and missing values in a column without a
    missing category.
    """
    if attr.kind == "categorical":
        labels = series.map(lambda value: typed_label(value, value_kind(attr.dtype)), na_action="ignore")
        missing = series.isna() | labels.isin(missing_values) | series.map(category_label).isin(missing_values)
        absorbed = attr.other is not None or attr.origin == "learned"  # as encoding does (docs/privacy.md §9)
        unknown = ~missing & ~labels.isin(attr.code_of.keys()) & (not absorbed)
    else:
        missing = series.isna()
        if not pd.api.types.is_numeric_dtype(series.dtype):
            missing |= series.astype(str).isin(missing_values)
            if series[~missing].astype(str).isin(attr.labels).all():
                return 0 if attr.missing else int(missing.sum())
        values = pd.to_numeric(series.where(~missing), errors="coerce")
        lo, hi = attr.bounds
        unknown = ~missing & (values.isna() | (~attr.clip & ((values < lo) | (values > hi))))
    return int(unknown.sum()) + (0 if attr.missing else int(missing.sum()))


def _problems(schema: Schema, df: pd.DataFrame, where: str) -> dict[str, _Problem]:
    """The columns of ``df`` that do not fit ``schema``, each with its first error message."""
    found = {}
    for attr in schema.attributes:
        try:
            Encoder(Schema((attr,), schema.missing_values)).encode(df[[attr.name]])
        except SchemaError as exc:
            count = max(_violations(attr, df[attr.name], schema.missing_values), 1)
            found[attr.name] = _Problem(count, 1, f"{where}: {exc}")
    return found


def _read_range(path: str, start: int, end: int | None) -> bytes:
    """The whole lines whose first byte lies in ``[start, end)``."""
    with open(path, "rb") as fh:
        if start > 0:
            fh.seek(start - 1)
            fh.readline()  # the line holding byte start-1 belongs to the previous part
        begin = fh.tell()
        if end is None:
            return fh.read()
        if begin >= end:
            return b""
        data = fh.read(end - begin)
        if data and not data.endswith(b"\n"):
            data += fh.readline()
        return data


def _frames(part: Part, schema: Schema | None, options: ReadOptions, batch_rows: int,
            unit: str | None = None, join: Join | None = None) -> Iterator[pd.DataFrame]:
    """The part's rows on the schema's columns, ``batch_rows`` at a time, text values stripped.

    ``unit``: also the privacy unit's column, read as text (CSV) and never stripped (docs/privacy.md §10.6).
    ``join``: the schema's columns ``join.columns`` are not read but appended by ``join`` to each batch before
    it is stripped (a child table's batch joined with its parents, docs/privacy.md §12).
    """
    columns = () if schema is None else schema.names  # None: the unit's column alone
    names = [n for n in columns if join is None or n not in join.columns] + ([unit] if unit is not None else [])

    def stripped(frame: pd.DataFrame) -> pd.DataFrame:
        if join is not None:
            frame = join(frame)
        if unit is None:
            return strip_text(frame)[0]
        return strip_text(frame.drop(columns=[unit]))[0].assign(**{unit: frame[unit]})

    if part.format == "parquet":
        handle = parquet_file(part.path)
        for batch in handle.iter_batches(batch_size=batch_rows, row_groups=list(part.row_groups), columns=names):
            yield stripped(batch.to_pandas(split_blocks=True, integer_object_nulls=True))  # as read_parquet reads
        return
    if part.path.lower().endswith(COMPRESSED):
        source: Any = part.path
    else:
        source = io.BytesIO(_read_range(part.path, part.start, part.end))
        if not source.getbuffer().nbytes:
            return
    reader = pd.read_csv(source, sep=options.sep, encoding=options.encoding, skipinitialspace=True,
                         na_values=list(options.missing) or None,
                         keep_default_na=True, header=None, names=list(part.columns),
                         skiprows=1 if part.header else 0, usecols=names, chunksize=batch_rows,
                         dtype=str)  # every field as text: the schema reads each value on its own (§10.1)
    with reader:
        for frame in reader:
            yield stripped(frame)


def _read_frames(part: Part, schema: Schema | None, options: ReadOptions, batch_rows: int,
                 unit: str | None = None, join: Join | None = None) -> Iterator[pd.DataFrame]:
    """:func:`_frames`, a part that cannot be read named in an :class:`InputError`."""
    pa = require("pyarrow", "engine='dask'")
    try:
        yield from _frames(part, schema, options, batch_rows, unit, join)
    except (OSError, UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError, pa.ArrowException) as exc:
        raise InputError(f"cannot read {part.where()}: {exc}") from None


def _encoded(part: Part, schema: Schema, options: ReadOptions, batch_rows: int, unit: str | None,
             status: _Counts, join: Join | None = None) -> Iterator[tuple[pd.DataFrame, np.ndarray, int]]:
    """Each batch of the part that fits the schema, with its codes and the part's row number of its first row.

    Rows read and the batches' schema problems are added to ``status``; a
    batch with a problem is counted there and skipped.
    """
    encoder = Encoder(schema)
    for df in _read_frames(part, schema, options, batch_rows, unit, join):
        first = status.rows
        status.rows += len(df)
        try:
            codes = encoder.encode(df if unit is None else df.drop(columns=[unit]))
        except SchemaError as exc:
            found = _problems(schema, df, part.where(first, join is not None))
            if not found:  # never skip rows the per-column check could not place
                raise SchemaError(f"{part.where(first, join is not None)}: {exc}") from None
            for name, problem in found.items():
                _add_problem(status.problems, name, problem)
            continue
        yield df, codes, first


def _tally_part(part: Part, schema: Schema, options: ReadOptions, batch_rows: int,
                join: Join | None = None) -> Tallies:
    """Read and tally one part for the private domain steps (runs on a worker); a value the schema refuses is an
    error naming the part and its row."""
    tallies, rows = [Tallies.empty(schema)], 0
    for df in _read_frames(part, schema, options, batch_rows, join=join):
        tallies.append(_checked_tally(df, schema, part, rows, join is not None))
        rows += len(df)
    return Tallies.merge(*tallies)


def _checked_tally(df: pd.DataFrame, schema: Schema, part: Part, first: int, joined: bool = False) -> Tallies:
    """The batch's tallies; a value the schema refuses, in any column, is an error naming the part and its row."""
    try:
        check_untallied(df, schema)  # every column, before any private step (docs/privacy.md §10.8)
        return Tallies.of_frame(df, schema)
    except SchemaError as exc:
        raise SchemaError(f"{part.where(first, joined)}: {str(exc).rstrip('.')}; nothing was spent or "
                          "released") from None


def _empty(schema: Schema) -> _Counts:
    return _Counts(np.zeros((0, len(word_spans(schema.domain.sizes))), np.int64), np.zeros(0, np.int64))


def _count_part(part: Part, schema: Schema, options: ReadOptions, batch_rows: int,
                join: Join | None = None) -> _Counts:
    """Read, encode and count one part (runs on a worker)."""
    sizes = schema.domain.sizes
    out, keys, counts = _empty(schema), [], []
    for _, codes, _ in _encoded(part, schema, options, batch_rows, None, out, join):
        k, c = sum_by_key(pack(codes, sizes), None)
        keys.append(k)
        counts.append(c)
    if keys:
        out.keys, out.counts = sum_by_key(np.concatenate(keys), np.concatenate(counts))
    return out


@dataclass
class _UnitRows:
    """Rows of whole privacy units bound for one bucket: unit text and hash, file position, and the rows
    themselves: their keys (counting) or their values on the schema's columns (tallying, docs/privacy.md §10.7)."""

    text: np.ndarray
    ids: np.ndarray
    positions: np.ndarray
    rows: np.ndarray | pd.DataFrame

    def take(self, mask: np.ndarray) -> "_UnitRows":
        rows = self.rows[mask].reset_index(drop=True) if isinstance(self.rows, pd.DataFrame) else self.rows[mask]
        return _UnitRows(self.text[mask], self.ids[mask], self.positions[mask], rows)

    @staticmethod
    def concat(pieces: list["_UnitRows"]) -> "_UnitRows":
        rows = [p.rows for p in pieces]
        return _UnitRows(np.concatenate([p.text for p in pieces]), np.concatenate([p.ids for p in pieces]),
                         np.concatenate([p.positions for p in pieces]),
                         pd.concat(rows, ignore_index=True) if isinstance(rows[0], pd.DataFrame) else
                         np.concatenate(rows))


#: A row's file position is ``part_no << _PART_SHIFT`` plus its row number in the part (parts hold fewer rows).
_PART_SHIFT = 40


def _to_buckets(part: Part, part_no: int, unit: str, batches: Iterator[tuple[pd.DataFrame, Any, int]],
                empty: _UnitRows, buckets: int) -> list[_UnitRows]:
    """Each batch's rows ``(frame, rows, first row number)`` sent to the bucket of their unit's hash; a row's
    position orders the rows of a unit as in the files (docs/privacy.md §10.6)."""
    pieces = [empty]
    for df, rows, first in batches:
        try:
            text = unit_text(df[unit], unit, first)
        except InputError as exc:
            raise InputError(f"{part.where()}: {exc}") from None
        positions = (part_no << _PART_SHIFT) + first + np.arange(len(df), dtype=np.int64)
        pieces.append(_UnitRows(text, unit_hash(text), positions, rows))
    joined = _UnitRows.concat(pieces)
    bucket = joined.ids % np.uint64(buckets)
    return [joined.take(bucket == b) for b in range(buckets)]


def _no_rows(rows: np.ndarray | pd.DataFrame) -> _UnitRows:
    return _UnitRows(np.zeros(0, object), np.zeros(0, np.uint64), np.zeros(0, np.int64), rows)


def _split_part(part: Part, part_no: int, schema: Schema, options: ReadOptions, batch_rows: int, unit: str,
                buckets: int, join: Join | None = None) -> tuple[list[_UnitRows], _Counts]:
    """Read and encode one part, and send each row's key to the bucket of its unit (runs on a worker).

    Returns the ``buckets`` pieces and the part's status (rows read, schema problems).
    """
    sizes = schema.domain.sizes
    status = _empty(schema)
    batches = ((df, pack(codes, sizes), first) for df, codes, first in
               _encoded(part, schema, options, batch_rows, unit, status, join))
    empty = _no_rows(np.zeros((0, len(word_spans(sizes))), np.int64))
    return _to_buckets(part, part_no, unit, batches, empty, buckets), status


def _split_part_values(part: Part, part_no: int, schema: Schema, options: ReadOptions, batch_rows: int, unit: str,
                       buckets: int, join: Join | None = None) -> tuple[list[_UnitRows], None]:
    """Read one part, check its values as tallying will, and send each row's values on the tallied columns to
    the bucket of its unit (runs on a worker; docs/privacy.md §10.7).  The values travel as Python objects, each
    as its part read it: about 60 bytes a value against 8 for a row's key in the counting pass."""
    names = list(dict.fromkeys(name for columns in Tallies.columns(schema) for name in columns))

    def batches() -> Iterator[tuple[pd.DataFrame, pd.DataFrame, int]]:
        first = 0
        for df in _read_frames(part, schema, options, batch_rows, unit, join):
            _checked_tally(df, schema, part, first, join is not None)  # the checks; the bucket tallies the kept
            yield df, df[names].astype(object), first  # each value as its part read it
            first += len(df)

    return _to_buckets(part, part_no, unit, batches(), _no_rows(pd.DataFrame(columns=names, dtype=object)),
                       buckets), None


def _bucket_piece(split: tuple[list[_UnitRows], Any], b: int) -> _UnitRows:
    return split[0][b]


def _status(split: tuple[list[_UnitRows], _Counts]) -> _Counts:
    return split[1]


def _kept(k: int, key: np.ndarray, pieces: tuple[_UnitRows, ...]) -> _UnitRows:
    """At most ``k`` rows per unit of one bucket (whole units, Lemma 10.60)."""
    rows = _UnitRows.concat(list(pieces))
    return rows.take(keep_mask(pd.factorize(rows.text)[0], rows.ids, rows.positions, k, key))


def _bound_bucket(k: int, key: np.ndarray, *pieces: _UnitRows) -> _Counts:
    """Keep at most ``k`` rows per unit of one bucket and count them."""
    kept = _kept(k, key, pieces)
    if len(kept.rows) == 0:
        return _Counts(kept.rows, np.zeros(0, np.int64))
    counted, counts = sum_by_key(kept.rows, None)
    return _Counts(counted, counts)


def _tally_bucket(k: int, key: np.ndarray, schema: Schema, *pieces: _UnitRows) -> Tallies:
    """Keep at most ``k`` rows per unit of one bucket and tally them (docs/privacy.md §10.7)."""
    kept = _kept(k, key, pieces)
    return Tallies.of_frame(kept.rows, schema) if len(kept.rows) else Tallies.empty(schema)


def _count_units(part: Part, options: ReadOptions, batch_rows: int, column: str) -> tuple[pd.Series, int]:
    """One part's rows per value of ``column`` (exact text, :func:`unit_text`) and its rows without one (runs on a
    worker)."""
    counts, missing = [pd.Series(dtype=np.int64)], 0
    for df in _read_frames(part, None, options, batch_rows, column):
        present = df[column].notna()
        missing += int((~present).sum())
        counts.append(pd.Series(unit_text(df[column][present], column)).value_counts())
    return _add_unit_counts(*((c, 0) for c in counts))[0], missing


def _add_unit_counts(*partials: tuple[pd.Series, int]) -> tuple[pd.Series, int]:
    """Add up rows per value and rows without one."""
    counts = pd.concat([c for c, _ in partials])
    return counts.groupby(level=0, sort=False).sum().astype(np.int64), sum(m for _, m in partials)


def _broadcast(client: Any, join: Join | None) -> Any:
    """``join`` sent once to every worker (a future the tasks share), or None."""
    return None if join is None else client.scatter(join, broadcast=True, hash=False)


def _add_problem(problems: dict[str, _Problem], name: str, problem: _Problem) -> None:
    if name in problems:
        old = problems[name]
        problems[name] = _Problem(old.values + problem.values, old.parts + problem.parts, old.first)
    else:
        problems[name] = problem


def _merge(*partials: _Counts) -> _Counts:
    """Add up partial counts (keeping the first message of each column, in part order)."""
    problems: dict[str, _Problem] = {}
    for p in partials:
        for name, problem in p.problems.items():
            _add_problem(problems, name, problem)
    keys, counts = sum_by_key(np.concatenate([p.keys for p in partials]),
                               np.concatenate([p.counts for p in partials]))
    return _Counts(keys, counts, sum(p.rows for p in partials), problems)


def _check_columns(path: Any, columns: tuple[str, ...], schema: Schema | None, unit: str | None = None,
                   dropped: tuple[str, ...] = ()) -> None:
    if schema is None:  # the unit's column alone is read
        if unit not in columns:
            raise SchemaError(f"{str(path)!r} has no column {unit!r}; its columns are {list(columns)}")
        return
    absent = [n for n in (*schema.names, *([unit] if unit else [])) if n not in columns]
    if absent:
        raise SchemaError(f"{str(path)!r} has no column(s) {absent} of the schema or the privacy unit; its columns "
                          f"are {list(columns)}")
    derived = {d.name for d in schema.derived}  # declared derived columns are never read (docs/privacy.md §10.10)
    extra = [c for c in columns if c not in schema.names and c != unit and c not in dropped and c not in derived]
    if extra:
        warnings.warn(f"{path}: ignoring columns {extra}, which are not in the schema", UserWarning, stacklevel=4)


def plan_parts(files: list[TableFile], schema: Schema | None, options: ReadOptions = ReadOptions(),
               blocksize: int | None = DEFAULT_BLOCKSIZE, part_rows: int = DEFAULT_PART_ROWS,
               unit: str | None = None, join: Join | None = None) -> list[Part]:
    """The parts of the files, from metadata only (Parquet footers, CSV headers and sizes).

    A file without a column of the schema (but those ``join`` appends) is an error naming the file and the
    column, raised here, before any record is read.  ``schema`` None: the ``unit`` column alone.
    """
    if join is not None:
        schema = replace(schema, attributes=tuple(a for a in schema.attributes if a.name not in join.columns))
    parts = []
    for f in files:
        path = str(f.path)
        if f.format == "parquet":
            handle = parquet_file(f.path)
            _check_columns(path, tuple(handle.schema_arrow.names), schema, unit, options.dropped)
            meta, group, first, rows = handle.metadata, [], 0, 0
            for i in range(meta.num_row_groups):
                group.append(i)
                rows += meta.row_group(i).num_rows
                if rows >= part_rows or i == meta.num_row_groups - 1:
                    parts.append(Part(path, "parquet", (), tuple(group), first_row=first))
                    first, group, rows = first + rows, [], 0
            continue
        columns = file_columns(f, options)
        _check_columns(path, columns, schema, unit, options.dropped)
        has_header = options.columns is None
        size = os.path.getsize(path)
        if blocksize is None or path.lower().endswith(COMPRESSED) or size <= blocksize:
            parts.append(Part(path, "csv", columns, header=has_header))
            continue
        for start in range(0, size, blocksize):
            parts.append(Part(path, "csv", columns, start=start, end=min(start + blocksize, size),
                              header=has_header and start == 0))
    return parts


def _schema_error(problems: dict[str, _Problem], parts: int) -> SchemaError:
    lines = [f"column {name!r}: {p.values} value(s) do not fit the public schema, in {p.parts} of {parts} "
             f"part(s); first: {p.first}" for name, p in problems.items()]
    return SchemaError("the input does not fit the schema; nothing was counted or released.\n" + "\n".join(lines))


def _added_up(client: Any, futures: list[Any], merge: Any, doing: str) -> Any:
    """The partial results added up in a tree of ``merge`` tasks on the workers, fetched to the driver."""
    distributed = _require_distributed()
    while len(futures) > 1:
        futures = [client.submit(merge, *futures[i:i + _FAN_IN], pure=False) for i in range(0, len(futures), _FAN_IN)]
    try:
        return futures[0].result()
    except distributed.KilledWorker as exc:
        raise EngineError(f"Dask workers kept dying while {doing} ({exc}); the pass was abandoned and nothing was "
                          "released. Check the workers' memory (smaller blocksize / batch_rows) and retry.") from None


@dataclass(frozen=True)
class DaskEngine:
    """Count CSV or Parquet files on a ``dask.distributed`` cluster.

    Parameters
    ----------
    scheduler : address of a running scheduler (``"tcp://host:8786"``); ``None``
        starts a local cluster for the pass (``n_workers`` processes, one
        thread each) and closes it afterwards.
    n_workers : workers of the local cluster (default: the number of cores).
    options : how CSV files are parsed (missing tokens, header-less column names).
    blocksize : bytes of CSV per part (``None``: one part per file).
    part_rows : Parquet row groups are joined into parts of at least this many rows.
    batch_rows : rows a worker holds at once.
    """

    scheduler: str | None = None
    n_workers: int | None = None
    options: ReadOptions = field(default_factory=ReadOptions)
    blocksize: int | None = DEFAULT_BLOCKSIZE
    part_rows: int = DEFAULT_PART_ROWS
    batch_rows: int = DEFAULT_BATCH_ROWS
    name: str = field(default="dask", init=False)
    #: Workers read the rows part by part: the categories of a column are never read off the data (§1.1).
    needs_public_schema: ClassVar[bool] = True

    @classmethod
    def from_config(cls, config: SynthesisConfig) -> "DaskEngine":
        """The engine of a run: on ``config.scheduler`` (a local cluster when None), its reader parsing as ``config``
        says (:func:`~synthdp.engines.rows.read_options`)."""
        return cls(scheduler=config.scheduler, options=read_options(config))

    def __post_init__(self) -> None:
        if self.scheduler is not None and not isinstance(self.scheduler, str):
            raise InputError(f"scheduler must be an address such as 'tcp://127.0.0.1:8786', got {self.scheduler!r}")
        for option in ("n_workers", "blocksize"):
            value = getattr(self, option)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
                raise InputError(f"{option} must be a positive integer or None, got {value!r}")
        for option in ("part_rows", "batch_rows"):
            value = getattr(self, option)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(f"{option} must be a positive integer, got {value!r}")

    def read(self, source: Source) -> Source:
        """The files as they are: workers read them part by part as each pass counts (a DataFrame is refused)."""
        if isinstance(source, pd.DataFrame):
            raise InputError("engine='dask' reads files: pass a path, a glob or a directory of CSV or Parquet "
                             "files (a DataFrame in memory is counted by engine='pandas')")
        return source

    def prepare(self, source: Source, bounding: Bounding | None = None) -> Rows:
        """The files, with the ``bounding`` every pass applies (at most ``k`` rows per privacy unit, by a shuffle
        of whole units, docs/privacy.md §10.6); workers strip text values as they read."""
        return Rows(self.read(source), bounding)

    @contextlib.contextmanager
    def client(self) -> Iterator[Any]:
        """A client of the given scheduler, or of a local cluster started (and closed) for the pass."""
        distributed = _require_distributed()
        if self.scheduler is not None:
            try:
                client = distributed.Client(self.scheduler, timeout="10s")
            except (OSError, TimeoutError) as exc:
                raise InputError(f"cannot reach the Dask scheduler {self.scheduler!r}: {exc}") from None
            with client:
                yield client
            return
        with self._local_cluster() as cluster, distributed.Client(cluster) as client:
            yield client

    @contextlib.contextmanager
    def _local_cluster(self) -> Iterator[Any]:
        """A local cluster: ``n_workers`` processes (default: the cores), one thread each."""
        distributed = _require_distributed()
        workers = self.n_workers or os.cpu_count() or 1
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                      dashboard_address=":0") as cluster:
            yield cluster

    @contextlib.contextmanager
    def on_one_cluster(self) -> Iterator["DaskEngine"]:
        """This engine with all its passes on one cluster: the scheduler given, else a local cluster started once
        (not once per pass) and closed on leaving."""
        if self.scheduler is not None:
            yield self
            return
        with self._local_cluster() as cluster:
            yield replace(self, scheduler=cluster.scheduler_address)

    def count(self, source: Source, schema: Schema, bounding: Bounding | None = None,
              join: Join | None = None) -> AggregatedData:
        """Distinct encoded rows of the files with their counts (equal to the pandas engine's).

        ``bounding``: keep at most ``k`` rows per privacy unit, by a shuffle of
        the rows by unit into buckets of whole units (docs/privacy.md §10.6);
        the same rows as the pandas engine for the same key.  ``join``: each batch joined with it on the
        workers first (a child table's rows with their parents' columns, docs/privacy.md §12).
        """
        _require_distributed()
        if isinstance(source, pd.DataFrame):
            raise InputError("engine='dask' reads files: pass a path, a glob or a directory of CSV or Parquet "
                             "files (a DataFrame in memory is counted by engine='pandas')")
        if not isinstance(schema, Schema):
            raise InputError("engine='dask' needs a public schema (schema=Schema or a schema file; CLI --schema): "
                             "on workers the categories of a column are never read off the data")
        Encoder(schema)  # refuses, before any file is read, a schema whose categories are still to be learned
        unit = None if bounding is None else bounding.column
        parts = plan_parts(list_files(source), schema, self.options, self.blocksize, self.part_rows, unit, join)
        logger.info("dask engine: %d part(s) of %d file(s)", len(parts), len({p.path for p in parts}))
        total = self._reduce(parts, schema, bounding, join)
        if total.problems:
            raise _schema_error(total.problems, len(parts))
        if total.rows == 0:
            raise InputError(f"the input {source!s} has no rows")
        return AggregatedData.from_codes(schema.domain, unpack(total.keys, schema.domain.sizes), total.counts)

    def tally(self, source: Source, schema: Schema, bounding: Bounding | None = None,
              join: Join | None = None) -> Tallies:
        """What the private domain steps read of the files (docs/privacy.md §10.7), tallied part by part on the
        cluster and added up: equal to the pandas engine's.

        ``bounding``: tally at most ``k`` rows per privacy unit, the rows the
        counting pass keeps (the same shuffle, carrying the rows' values instead
        of their keys, §10.6).  ``join``: as :meth:`count`.
        """
        _require_distributed()
        if isinstance(source, pd.DataFrame):
            raise InputError("engine='dask' reads files: pass a path, a glob or a directory of CSV or Parquet "
                             "files (a DataFrame in memory is tallied by engine='pandas')")
        unit = None if bounding is None else bounding.column
        parts = plan_parts(list_files(source), schema, self.options, self.blocksize, self.part_rows, unit, join)
        logger.info("dask engine: tallying %d part(s) for the private domain steps", len(parts))
        with self.client() as client:
            joined = _broadcast(client, join)
            if bounding is None:
                futures = client.map(_tally_part, parts, schema=schema, options=self.options,
                                     batch_rows=self.batch_rows, join=joined, pure=False)
            else:
                splits = client.map(_split_part_values, parts, range(len(parts)), schema=schema,
                                    options=self.options, batch_rows=self.batch_rows, unit=unit,
                                    buckets=len(parts), join=joined, pure=False)
                futures = self._buckets(client, splits, _tally_bucket, bounding, schema)
            total = _added_up(client, futures, Tallies.merge, "tallying")
        if total.rows == 0:
            raise InputError(f"the input {source!s} has no rows")
        return total

    def unit_counts(self, source: Source, column: str) -> tuple[pd.Series, int]:
        """The rows of each value of ``column`` over the files, by its exact text (§10.6's reading of a unit), and
        the rows where it is missing: a pass over that column alone, counted part by part and added up on the
        workers (the driver holds the distinct values only).  Not a private step: the input of bounding."""
        _require_distributed()
        parts = plan_parts(list_files(source), None, self.options, self.blocksize, self.part_rows, column)
        logger.info("dask engine: counting the rows of each %s in %d part(s)", column, len(parts))
        with self.client() as client:
            futures = client.map(_count_units, parts, options=self.options, batch_rows=self.batch_rows,
                                 column=column, pure=False)
            return _added_up(client, futures, _add_unit_counts, f"counting the rows of each {column}")

    def _reduce(self, parts: list[Part], schema: Schema, bounding: Bounding | None = None,
                join: Join | None = None) -> _Counts:
        with self.client() as client:
            joined = _broadcast(client, join)
            if bounding is None:
                futures = client.map(_count_part, parts, schema=schema, options=self.options,
                                     batch_rows=self.batch_rows, join=joined, pure=False)
            else:
                futures = self._shuffle(client, parts, schema, bounding, joined)
            return _added_up(client, futures, _merge, "counting")

    def _shuffle(self, client: Any, parts: list[Part], schema: Schema, bounding: Bounding,
                 join: Any = None) -> list[Any]:
        """Bound the units with a shuffle: parts split their rows into buckets by unit, each bucket bounds and counts.

        One bucket per part: a bucket task holds about ``n / P`` rows, whole
        units only, and each row moves once.  Returns the futures of the
        buckets' counts and of the parts' statuses (rows read, schema problems),
        which the caller adds up.
        """
        splits = client.map(_split_part, parts, range(len(parts)), schema=schema, options=self.options,
                            batch_rows=self.batch_rows, unit=bounding.column, buckets=len(parts), join=join,
                            pure=False)
        return (self._buckets(client, splits, _bound_bucket, bounding)
                + [client.submit(_status, f, pure=False) for f in splits])

    @staticmethod
    def _buckets(client: Any, splits: list[Any], bound: Any, bounding: Bounding, *args: Any) -> list[Any]:
        """Per bucket, its pieces from every part gathered into one ``bound`` task (keep ``k`` rows per unit)."""
        return [client.submit(bound, bounding.k, bounding.key, *args,
                              *[client.submit(_bucket_piece, f, b, pure=False) for f in splits], pure=False)
                for b in range(len(splits))]
