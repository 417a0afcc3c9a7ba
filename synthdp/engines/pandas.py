"""The in-memory counting engine: the whole table as one DataFrame, encoded at once.

The encoded rows are counted by mixed-radix key (:func:`synthdp.engines.keys.aggregate`),
which gives exactly :meth:`~synthdp.core.encoding.Encoder.to_aggregated`'s result
by sorting one integer per row instead of whole rows.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from synthdp.core.data import AggregatedData
from synthdp.core.encoding import Encoder
from synthdp.core.errors import InputError
from synthdp.core.schema import Schema
from synthdp.core.tallies import Tallies, check_untallied
from synthdp.files.sources import ReadOptions, Source, read_table, strip_text
from synthdp.engines.keys import aggregate

__all__ = ["PandasEngine"]


@dataclass(frozen=True)
class PandasEngine:
    """Count a DataFrame, or CSV / Parquet files read whole into memory.

    Parameters
    ----------
    options : how CSV files are parsed (missing tokens, header-less column names).
    """

    options: ReadOptions = field(default_factory=ReadOptions)
    name: str = field(default="pandas", init=False)
    in_memory: bool = field(default=True, init=False)

    def read(self, source: pd.DataFrame | Source, schema: Schema | None = None) -> pd.DataFrame:
        """The table as a DataFrame (a DataFrame source is returned as is).

        With a ``schema``, Parquet files are read on its columns only.
        """
        if isinstance(source, pd.DataFrame):
            return source
        return read_table(source, self.options, columns=schema.names if schema is not None else None)

    def tally(self, source: pd.DataFrame | Source, schema: Schema) -> Tallies:
        """What the private domain steps read of the table (docs/privacy.md §10.7), text values stripped; every
        other column's values checked too, so that nothing is refused after a private step (§10.8)."""
        df = strip_text(self.read(source, schema))[0]
        check_untallied(df, schema)
        return Tallies.of_frame(df, schema)

    def count(self, source: pd.DataFrame | Source, schema: Schema) -> AggregatedData:
        """Distinct encoded rows of the table (text values stripped of surrounding spaces) with their counts."""
        if not isinstance(schema, Schema):
            raise InputError(f"counting needs a public Schema, got {type(schema).__name__}")
        return aggregate(schema.domain, Encoder(schema).encode(strip_text(self.read(source, schema))[0]))
