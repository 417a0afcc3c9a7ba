"""Two linked tables with the child table left in its files, counted by the Dask engine (docs/privacy.md §12,
"The child table on Dask").

The parent table is read in memory (one row per key).  The child table stays in its CSV or Parquet files: a first
pass over its foreign key column, on the workers, gives each key's number of rows ``c`` (the driver holds the
distinct keys only) and so each kept parent's ``m = min(c, k)`` (:func:`~synthdp.linked.bounding.counted_families`).
Every later pass (the joined view's tallies and counts) joins each batch on the workers with the parent view,
broadcast once (:class:`ParentJoin`: orphans dropped, a missing key joins nothing), and keeps at most ``k`` rows per
parent by the single-table engine's shuffle with §10.6's rule and the families' key (:class:`JoinedEngine`).  The
rule ranks a family's rows by their order in the files, as the pandas engine's row order, so both engines keep the
same child rows and count the same views: the same release for the same seed.
"""

from __future__ import annotations

import os
import warnings
from dataclasses import dataclass, field, replace
from typing import Any, ClassVar, Mapping

import numpy as np
import pandas as pd

from synthdp.config import SynthesisConfig
from synthdp.core.errors import InputError, SchemaError
from synthdp.core.schema import Schema
from synthdp.engines.dask import DaskEngine, plan_parts
from synthdp.engines.pandas import PandasEngine
from synthdp.engines.rows import Rows
from synthdp.files.sources import ReadOptions, Source, file_columns, list_files
from synthdp.linked.bounding import Families, counted_families, key_text
from synthdp.linked.links import Link
from synthdp.linked.views import appended_columns
from synthdp.mechanisms.units import Bounding

__all__ = ["ChildFiles", "JoinedEngine", "ParentJoin", "check_child_files", "families_on_files", "joined_on_files",
           "linked_tables"]


@dataclass(frozen=True)
class ChildFiles:
    """A child table left in its files: where they are, and the columns of the first file's header."""

    source: Source
    columns: pd.Index

    def drop(self, columns: list[str]) -> "ChildFiles":
        """The table without ``columns`` (as :meth:`pandas.DataFrame.drop` for a table in memory; the engine's
        read options name them too, so that no pass reads them: ``ReadOptions.dropped``)."""
        return ChildFiles(self.source, self.columns.drop(columns))


def child_files(source: Any, name: str, links: Mapping[str, str], options: ReadOptions) -> ChildFiles:
    """The child table ``name`` at ``source`` (a path, a glob, a directory or a list of them), its headers read:
    a file whose header lacks the foreign key the ``links`` name (a file without a header row, say) is refused,
    naming the file, before anything is read privately."""
    if not isinstance(source, (str, os.PathLike, list, tuple)):
        raise InputError(f"table {name!r}: give the path of its CSV or Parquet files, a glob, a directory or a list "
                         f"of paths, got {type(source).__name__}")
    files = list_files(source)
    columns = [file_columns(f, options) for f in files]
    foreign = [text[len(name) + 1:] for text in links if isinstance(text, str) and text.startswith(f"{name}.")]
    for f, held in zip(files, columns):
        absent = [c for c in foreign if c not in held]
        if absent:
            raise InputError(f"{str(f.path)!r} (table {name!r}) has no column {absent[0]!r} in its header, which "
                             f"reads {list(held)}: every file of table {name!r} needs a header row naming its "
                             "columns, the foreign key among them")
    return ChildFiles(source, pd.Index(columns[0]))


def linked_tables(tables: Any, config: SynthesisConfig) -> dict[str, Any]:
    """The two tables as a linked run reads them: a table given by its files read in memory (with the run's
    missing tokens), but the child table's under ``engine='dask'``, which stays in its files (:class:`ChildFiles`).
    Refused before anything private runs: a child DataFrame under ``engine='dask'``."""
    if not isinstance(tables, Mapping):
        raise InputError("linked tables are given as a dict of DataFrames (or of their files) by name, e.g. "
                         "{'customers': c, 'orders': o}")
    options = ReadOptions(missing=tuple(config.missing or ()))
    children = {text.partition(".")[0] for text in config.links or {} if isinstance(text, str)}
    out = {}
    for name, table in tables.items():
        if config.engine == "dask" and name in children:
            if isinstance(table, pd.DataFrame):
                raise InputError(f"engine='dask' reads the child table {name!r} part by part from its files: pass "
                                 f"its CSV or Parquet files ({{{name!r}: 'orders/*.csv'}}, a directory or a list of "
                                 "paths), or use engine='pandas' for a table in memory")
            out[name] = table if isinstance(table, ChildFiles) else child_files(table, name, config.links, options)
        elif isinstance(table, (str, os.PathLike, list, tuple)):
            out[name] = PandasEngine(options=options).read(table)
        else:
            out[name] = table
    return out


def families_on_files(parent: pd.DataFrame, child: ChildFiles, link: Link, k: int, parent_key: np.ndarray,
                      engine: DaskEngine) -> Families:
    """Step 1 of docs/privacy.md §12 with the child in its files: the parent rows bounded in memory, each kept
    parent's ``m`` from one pass over the child's foreign key (:meth:`DaskEngine.unit_counts`)."""
    counts, missing = engine.unit_counts(child.source, link.foreign_key)
    return counted_families(parent, counts, missing, link, k, parent_key)


@dataclass(frozen=True)
class ParentJoin:
    """Each batch of the child's files joined on the workers with its kept parent (docs/privacy.md §12 step 2):
    the rows whose foreign key is the exact text of a kept parent's key keep their child columns and take the
    parent view's columns (``columns``, renamed) and, as column ``link.foreign_key``, that key's text (the joined
    run's unit); every other row is an orphan and is dropped (a missing key is nobody's and joins nothing)."""

    link: Link
    keys: pd.Index
    appended: pd.DataFrame
    columns: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "columns", frozenset(map(str, self.appended.columns)))

    def __call__(self, frame: pd.DataFrame) -> pd.DataFrame:
        fk = self.link.foreign_key
        text = key_text(frame[fk], f"{self.link.child}.{fk}")
        found = self.keys.get_indexer(text)
        joined = found >= 0
        appended = self.appended.iloc[found[joined]].reset_index(drop=True)
        unit = pd.Series(text[joined], name=fk, dtype=object)
        return pd.concat([frame.loc[joined].drop(columns=[fk]).reset_index(drop=True), appended, unit], axis=1)


@dataclass(frozen=True)
class JoinedEngine:
    """The joined view's counting engine on Dask: the child's files, each batch joined with the parent view
    (:class:`ParentJoin`) and at most ``k`` rows kept per parent by §10.6's rule with the families' key
    (``bounding``), so that every pass keeps the child rows :func:`~synthdp.linked.bounding.bound_families` keeps.

    The joined run's own bounding (``k`` rows per unit, its own key) keeps every row of a view whose families
    hold at most ``k`` rows each, whatever its key, as it does in memory: the families' bounding stands for it.
    """

    engine: DaskEngine
    join: ParentJoin
    bounding: Bounding
    name: ClassVar[str] = "dask"
    needs_public_schema: ClassVar[bool] = True

    def read(self, source: Source) -> Source:
        return self.engine.read(source)

    def prepare(self, source: Source, bounding: Bounding | None = None) -> Rows:
        """The files, with the families' bounding every pass applies (``bounding``, the run's, keeps them all)."""
        return Rows(self.read(source), self._families(bounding))

    def tally(self, source: Source, schema: Schema, bounding: Bounding | None = None) -> Any:
        return self.engine.tally(source, schema, self._families(bounding), join=self.join)

    def count(self, source: Source, schema: Schema, bounding: Bounding | None = None) -> Any:
        return self.engine.count(source, schema, self._families(bounding), join=self.join)

    def _families(self, bounding: Bounding | None) -> Bounding:
        """The families' bounding, whatever the caller's (the joined run's own, on the same column and ``k``,
        keeps every row of a family of at most ``k``): every pass keeps the rows the pandas path keeps."""
        if bounding is not None and (bounding.column, bounding.k) != (self.bounding.column, self.bounding.k):
            raise RuntimeError(f"the joined view is bounded by {self.bounding!r}, not {bounding!r}")
        return self.bounding


def check_child_files(child: ChildFiles, schema: Schema | str | os.PathLike | None, link: Link,
                      engine: DaskEngine) -> DaskEngine:
    """Before anything is read privately: the child's public ``schema`` given (on workers no category is read off
    the data) and held by every file's header with the foreign key (metadata only, each file named); returns the
    engine its passes run on, which reads neither the child's own key nor a column its options drop."""
    if schema is None:
        raise InputError(f"engine='dask' needs a public schema for table {link.child!r} (schema={{{link.child!r}: "
                         f"Schema or schema file}}; CLI --schema {link.child}.json): on workers the categories of a "
                         "column are never read off the data")
    schema = schema if isinstance(schema, Schema) else Schema.load(schema)
    listed = {*schema.names, *(d.name for d in schema.derived)}
    keys = [c for c in (link.foreign_key, link.child_key) if c is not None and c in listed]
    if keys:
        raise InputError(f"the schema of table {link.child!r} lists {keys}, a key column: keys are identifiers, "
                         f"never modelled; remove it from the schema (synthdp schema ... --drop {keys[0]})")
    dropped = (*engine.options.dropped, *([link.child_key] if link.child_key else []))
    engine = replace(engine, options=replace(engine.options, dropped=dropped))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the run warns of the columns it ignores, once
            plan_parts(list_files(child.source), schema, engine.options, engine.blocksize, engine.part_rows,
                       link.foreign_key)
    except SchemaError as exc:
        raise InputError(f"table {link.child!r}: {exc}") from None
    return engine


def joined_on_files(families: Families, child: ChildFiles, link: Link, k: int, child_key: np.ndarray,
                    engine: DaskEngine) -> JoinedEngine:
    """The joined view's engine over the child's files (:class:`JoinedEngine`, on ``engine`` as
    :func:`check_child_files` returned it); refused first when a child column has the name a parent column takes
    in the joined view."""
    appended = appended_columns(families, link, child.columns)
    present = np.flatnonzero(families.keys != None)  # noqa: E711 (elementwise on an object array)
    join = ParentJoin(link, pd.Index(families.keys[present]), appended.iloc[present].reset_index(drop=True))
    return JoinedEngine(engine, join, Bounding(link.foreign_key, k, child_key))
