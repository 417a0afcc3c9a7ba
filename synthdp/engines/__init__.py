"""Counting engines: the one pass over the records, from a table to distinct encoded rows with counts.

Everything in synthdp that touches every record is this pass: encode each
row with the *public* schema, then aggregate to an
:class:`~synthdp.core.data.AggregatedData`. Everything after it works on the
distinct rows only, so a table that does not fit in memory needs only a
counting engine that does not hold it:

* ``"pandas"`` (:class:`~synthdp.engines.pandas.PandasEngine`, the default):
  reads the table into memory and encodes it at once;
* ``"dask"`` (:class:`~synthdp.engines.dask.DaskEngine`): reads CSV or
  Parquet files part by part on a ``dask.distributed`` cluster (a local one
  by default) and adds up per-part counts.

Both give identical counts for the same table and schema, and identical
tallies for the private domain steps (:mod:`synthdp.core.tallies`), hence the
same release for the same seed. Counting is exact and deterministic: it is not a
private step, it only prepares the input of the mechanisms (docs/privacy.md §1.1).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from synthdp.core.data import AggregatedData
from synthdp.core.errors import EngineError, InputError
# The names accepted by get_engine (and engine= / --engine), declared with the option's rule.
from synthdp.core.parameters import ENGINES
from synthdp.core.schema import Schema
from synthdp.core.tallies import Tallies
from synthdp.engines.dask import DaskEngine  # light: Dask itself is imported only when the engine runs
from synthdp.engines.pandas import PandasEngine
from synthdp.engines.rows import Rows

if TYPE_CHECKING:
    from synthdp.config import SynthesisConfig

__all__ = ["ENGINES", "CountingEngine", "EngineError", "Rows", "counting_engine", "get_engine"]

#: Each engine class by its name.
_CLASSES = {engine.name: engine for engine in (PandasEngine, DaskEngine)}


@runtime_checkable
class CountingEngine(Protocol):
    """``count(source, schema)``: the distinct encoded rows of a table with their counts; ``tally(source, schema)``:
    what the private domain steps read of it, before the schema is complete (docs/privacy.md §10.7)."""

    name: str
    #: Whether a run must be given its public schema: true of an engine that reads the rows where it counts
    #: (nothing is read off the data to build one, docs/privacy.md §1.1).
    needs_public_schema: bool

    def read(self, source) -> Any:
        """The table as the run first sees it: a DataFrame in memory, or the files a cluster reads part by part."""
        ...

    def prepare(self, source, bounding=None) -> Rows:
        """The rows the run reads (:class:`~synthdp.engines.rows.Rows`): at most ``k`` per privacy unit
        (``bounding``, docs/privacy.md §10.6) and text values stripped, now in memory or on each pass."""
        ...

    def count(self, source, schema: Schema, bounding=None) -> AggregatedData:
        """Encode every record of ``source`` with ``schema`` and aggregate to distinct rows."""
        ...

    def tally(self, source, schema: Schema, bounding=None) -> Tallies:
        """Rows per label of each text column, and per value of each numeric column, whose domain is to be learned."""
        ...


def get_engine(name: str = "pandas", **options) -> CountingEngine:
    """The engine called ``name`` built with ``options`` (see each engine's parameters)."""
    if name not in _CLASSES:
        raise InputError(f"unknown engine {name!r}; choose one of {list(ENGINES)}")
    return _CLASSES[name](**options)


def counting_engine(config: SynthesisConfig) -> CountingEngine:
    """The engine ``config.engine`` names, built from the options of ``config`` it takes (its ``from_config``)."""
    return _CLASSES[config.engine].from_config(config)
