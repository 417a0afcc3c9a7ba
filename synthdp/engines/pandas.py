"""The in-memory counting engine: the whole table as one DataFrame, encoded at once.

The encoded rows are counted by mixed-radix key (:func:`synthdp.engines.keys.aggregate`),
which gives exactly :meth:`~synthdp.core.encoding.Encoder.to_aggregated`'s result
by sorting one integer per row instead of whole rows.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar

import pandas as pd

from synthdp.core.data import AggregatedData
from synthdp.core.encoding import Encoder
from synthdp.core.errors import InputError
from synthdp.core.schema import Schema
from synthdp.core.tallies import Tallies, check_untallied
from synthdp.files.sources import ReadOptions, Source, read_table, strip_text
from synthdp.engines.keys import aggregate
from synthdp.engines.rows import Rows, read_options
from synthdp.mechanisms.units import Bounding, warn_dropped_rows

if TYPE_CHECKING:
    from synthdp.config import SynthesisConfig

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
    #: The rows are in memory: a schema left open is built from them.
    needs_public_schema: ClassVar[bool] = False

    @classmethod
    def from_config(cls, config: SynthesisConfig) -> "PandasEngine":
        """The engine of a run: its reader parses as ``config`` says
        (:func:`~synthdp.engines.rows.read_options`)."""
        return cls(options=read_options(config))

    def read(self, source: pd.DataFrame | Source, schema: Schema | None = None) -> pd.DataFrame:
        """The table as a DataFrame (a DataFrame source is returned as is).

        With a ``schema``, Parquet files are read on its columns only.
        """
        if isinstance(source, pd.DataFrame):
            return source
        return read_table(source, self.options, columns=schema.names if schema is not None else None)

    def prepare(self, source: pd.DataFrame | Source, bounding: Bounding | None = None) -> Rows:
        """The rows the run reads, in memory: the table read (an empty one refused), at most ``k`` rows kept per
        privacy unit before anything else reads them (``bounding``, docs/privacy.md §10.6; the owner is warned when
        that drops many), and text values stripped of surrounding spaces (as the CSV reader skips them; warned)."""
        df = self.read(source)
        if df.empty:
            raise InputError("the input table is empty: nothing to synthesise")
        if bounding is not None:
            rows, df = len(df), bounding.apply(df)
            warn_dropped_rows(rows, len(df), bounding.k)
        df, stripped = strip_text(df)
        if stripped:
            warnings.warn(f"stripped surrounding spaces from the text values of columns {stripped} (the CLI's reader "
                          "skips them too); give public categories without them", UserWarning, stacklevel=4)
        return Rows(df, None, tuple(stripped))

    def tally(self, source: pd.DataFrame | Source, schema: Schema, bounding: Bounding | None = None) -> Tallies:
        """What the private domain steps read of the table (docs/privacy.md §10.7), text values stripped; every
        other column's values checked too, so that nothing is refused after a private step (§10.8).
        ``bounding``: keep at most ``k`` rows per privacy unit first (the rows :meth:`prepare` keeps)."""
        df = strip_text(self._bounded(self.read(source, schema), bounding))[0]
        check_untallied(df, schema)
        return Tallies.of_frame(df, schema)

    def count(self, source: pd.DataFrame | Source, schema: Schema, bounding: Bounding | None = None) -> AggregatedData:
        """Distinct encoded rows of the table (text values stripped of surrounding spaces) with their counts;
        ``bounding``: at most ``k`` rows per privacy unit, as :meth:`prepare` keeps."""
        if not isinstance(schema, Schema):
            raise InputError(f"counting needs a public Schema, got {type(schema).__name__}")
        df = strip_text(self._bounded(self.read(source, schema), bounding))[0]
        return aggregate(schema.domain, Encoder(schema).encode(df))

    @staticmethod
    def _bounded(df: pd.DataFrame, bounding: Bounding | None) -> pd.DataFrame:
        """``df`` with at most ``k`` rows per privacy unit, its unit column dropped; as is without ``bounding``."""
        return df if bounding is None else bounding.apply(df)
