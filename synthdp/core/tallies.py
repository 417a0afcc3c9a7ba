"""What the private domain steps read of a table: per column, how many rows hold each value (docs/privacy.md §10.7).

Partition selection (§9, §10.5) reads how many rows hold each label of a
text column; private bounds (§10.4) and PrivTree (§10.3) read how many rows
hold each value of a numeric column.  Nothing else of the rows enters them,
so a table in memory and the Dask engine's files, tallied part by part and
added up, feed them the same numbers and give the same release for the same
seed.  Tallying is exact and deterministic, like counting: it is not a
private step.

The checks are encoding's (:mod:`synthdp.core.encoding`), run while
tallying, before any private step: a value that is not a number, or outside
public bounds that do not clip, is refused naming its row.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
import pandas as pd

from synthdp.core.data import weighted_bincount
from synthdp.core.encoding import category_counts, check_column, first_missing, numeric_values, refuse_missing
from synthdp.core.errors import InputError, SchemaError
from synthdp.core.schema import (Attribute, Schema, parsed_from_text, parsed_text_error, reads_as, typed_label,
                                 value_kind)

__all__ = ["NumberTally", "Tallies", "as_tallies", "check_untallied"]


@dataclass(frozen=True)
class NumberTally:
    """The distinct present values of a numeric column, sorted, and how many rows hold each (positive)."""

    values: np.ndarray
    counts: np.ndarray

    @classmethod
    def of(cls, values: np.ndarray, counts: np.ndarray | None = None) -> "NumberTally":
        """The tally of ``values`` (each held by ``counts`` rows, or one row each)."""
        values = np.asarray(values, dtype=np.float64)
        weights = np.ones(len(values), dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64)
        distinct, inverse = np.unique(values, return_inverse=True)
        return cls(distinct, weighted_bincount(inverse, weights, len(distinct)))

    @property
    def rows(self) -> int:
        return int(self.counts.sum())

    def clipped(self, bounds: tuple[float, float]) -> "NumberTally":
        """The values clamped into ``bounds`` as encoding will: a column whose bounds were learned (§10.4) after
        its tally was taken clips by construction; one with public bounds was clamped or checked while tallied."""
        lo, hi = bounds
        outside = (self.values < lo) | (self.values > hi)
        return NumberTally.of(np.clip(self.values, lo, hi), self.counts) if outside.any() else self


@dataclass(frozen=True)
class Tallies:
    """Per text column to learn, rows per label; per numeric column to bound or discretise, its values' tally.

    ``rows``: the rows tallied (the check of docs/privacy.md §10.5 that a
    threshold can be reached reads it, for the owner only; under replace-one
    ``n`` is public).
    """

    labels: dict[str, dict[str, int]]
    numbers: dict[str, NumberTally]
    rows: int

    @staticmethod
    def columns(schema: Schema) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The text columns whose labels and the numeric columns whose values the private domain steps read."""
        numeric = tuple(dict.fromkeys((*schema.to_bound, *schema.to_discretise)))
        return schema.to_learn, numeric

    @classmethod
    def of_frame(cls, df: pd.DataFrame, schema: Schema) -> "Tallies":
        """The tallies of a DataFrame's columns that ``schema`` leaves to learn, with encoding's checks.

        A numeric column with public bounds is clipped or checked against
        them; one whose bounds are still to be learned is only checked for
        numbers.
        """
        text, numeric = cls.columns(schema)
        by_name = {str(c): c for c in df.columns}
        absent = [c for c in (*text, *numeric) if c not in by_name]
        if absent:
            raise InputError(f"columns {absent} whose domain is to be learned are missing from the data, which has "
                             f"{list(by_name)}")
        labels = {c: _label_counts(df[by_name[c]], schema[c], schema.missing_values) for c in text}
        numbers = {c: _number_tally(df[by_name[c]], schema[c], schema.missing_values) for c in numeric}
        return cls(labels, numbers, len(df))

    @classmethod
    def empty(cls, schema: Schema) -> "Tallies":
        text, numeric = cls.columns(schema)
        nothing = NumberTally(np.zeros(0, np.float64), np.zeros(0, np.int64))
        return cls({c: {} for c in text}, {c: nothing for c in numeric}, 0)

    @classmethod
    def merge(cls, *parts: "Tallies") -> "Tallies":
        """The tallies of the parts' rows together (exact: counts are added)."""
        first = parts[0]
        labels = {c: dict(sum((Counter(p.labels[c]) for p in parts), Counter())) for c in first.labels}
        numbers = {c: NumberTally.of(np.concatenate([p.numbers[c].values for p in parts]),
                                     np.concatenate([p.numbers[c].counts for p in parts])) for c in first.numbers}
        return cls(labels, numbers, sum(p.rows for p in parts))


def check_untallied(df: pd.DataFrame, schema: Schema) -> None:
    """Refuse, naming its row, a value that encoding would refuse in a column the tallies do not read (a column
    with a public domain), so that every value of the table is checked before any private step and not in the
    counting pass after the domain steps have spent (docs/privacy.md §10.8); and every column, tallied or not,
    that holds a missing value where none is declared, all in one refusal.  Not a private step."""
    tallied = {name for columns in Tallies.columns(schema) for name in columns}
    by_name = {str(c): c for c in df.columns}
    absent = [a.name for a in schema.attributes if a.name not in by_name]
    if absent:
        raise SchemaError(f"columns {absent} of the schema are missing from the data, which has {list(by_name)}")
    missing = {}  # every column holding a missing value where none is declared, named in one refusal
    for attr in schema.attributes:
        series = df[by_name[attr.name]]
        if attr.name not in tallied:
            missing[attr.name] = check_column(attr, series, schema.missing_values)
        elif not attr.missing:  # a column to learn, not nullable: numeric, or text with an other label
            missing[attr.name] = first_missing(attr, series, schema.missing_values)
    refuse_missing(missing)


def _number_tally(series: pd.Series, attr: Attribute, missing_values: tuple[str, ...]) -> NumberTally:
    """The tally of a numeric column whose bounds or cells are to be learned, after encoding's checks (a missing
    value where the column is not declared nullable included)."""
    if not attr.missing:
        refuse_missing({attr.name: first_missing(attr, series, missing_values)})
    return NumberTally.of(numeric_values(attr, series, missing_values))


def _label_counts(series: pd.Series, attr: Attribute, missing_values: tuple[str, ...]) -> dict[str, int]:
    """Rows per label of a text column to learn; a value that does not read in the column's public dtype is refused
    naming its row, before any private step (it could never be a category of that column)."""
    if parsed_from_text(series, attr.dtype):  # a given schema too (docs/privacy.md §10.1)
        raise parsed_text_error({attr.name: series.dtype})
    kind = value_kind(attr.dtype)
    counts = category_counts(series, missing_values, kind)
    odd = next((label for label in counts if not reads_as(label, kind)), None)
    if odd is not None:
        row = int(np.argmax(series.map(lambda value: typed_label(value, kind), na_action="ignore").to_numpy() == odd))
        raise SchemaError(f"value {series.iloc[row]!r} in row {row}, column {attr.name!r} does not read as "
                          f"{attr.dtype}, the column's public dtype; fix the value, declare it a missing token "
                          "(missing_values, CLI --missing), or drop the column's dtype")
    return counts


def as_tallies(data: pd.DataFrame | Tallies, schema: Schema) -> Tallies:
    """``data``'s tallies: a DataFrame is tallied on ``schema`` (in memory), tallies are returned as they are."""
    return data if isinstance(data, Tallies) else Tallies.of_frame(data, schema)
