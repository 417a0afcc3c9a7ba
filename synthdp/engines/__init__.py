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

from typing import Protocol, runtime_checkable

from synthdp.core.data import AggregatedData
from synthdp.core.errors import InputError, SynthDPError
# The names accepted by get_engine (and engine= / --engine), declared with the option's rule.
from synthdp.core.parameters import ENGINES
from synthdp.core.schema import Schema
from synthdp.core.tallies import Tallies
from synthdp.engines.pandas import PandasEngine

__all__ = ["ENGINES", "CountingEngine", "EngineError", "get_engine"]



class EngineError(SynthDPError, RuntimeError):
    """The counting pass could not complete (e.g. a worker kept dying); nothing was released."""


@runtime_checkable
class CountingEngine(Protocol):
    """``count(source, schema)``: the distinct encoded rows of a table with their counts; ``tally(source, schema)``:
    what the private domain steps read of it, before the schema is complete (docs/privacy.md §10.7)."""

    name: str
    #: Whether the driver holds the table's rows (reads, bounds per unit, strips and checks them itself) or the
    #: engine reads them where it counts (part by part on a cluster), so that only a public schema is possible.
    in_memory: bool

    def count(self, source, schema: Schema) -> AggregatedData:
        """Encode every record of ``source`` with ``schema`` and aggregate to distinct rows."""
        ...

    def tally(self, source, schema: Schema) -> Tallies:
        """Rows per label of each text column, and per value of each numeric column, whose domain is to be learned."""
        ...


def get_engine(name: str = "pandas", **options) -> CountingEngine:
    """The engine called ``name`` built with ``options`` (see each engine's parameters)."""
    if name == "pandas":
        return PandasEngine(**options)
    if name == "dask":
        from synthdp.engines.dask import DaskEngine  # optional extra (dask[distributed]): loaded only when asked for

        return DaskEngine(**options)
    raise InputError(f"unknown engine {name!r}; choose one of {list(ENGINES)}")
