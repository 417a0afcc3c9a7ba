"""Derived columns: a column declared a public function of others, computed after sampling (docs/privacy.md §10.10).

The vocabulary is fixed and small: ``COL.year``, ``COL.month``, ``COL.day``,
``COL.weekday`` (Monday 0) and ``COL.hour`` of a datetime column, and
``A + B`` and ``A - B`` of two numeric columns.  The function is declared by
the owner, never learned from the data; the derived column is not an
attribute of the schema, so no private step reads it, and it is computed from
the decoded synthetic columns, so every row agrees with itself.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Protocol

import pandas as pd

from synthdp.core.errors import SchemaError

#: The parts of a datetime column a derived column may be, and the pandas ``.dt`` accessor of each.
DATE_PARTS = {"year": "year", "month": "month", "day": "day", "weekday": "day_of_week", "hour": "hour"}
#: The operations on two numeric columns a derived column may be.
OPERATIONS = ("+", "-")
VOCABULARY = ("COL.year, COL.month, COL.day, COL.weekday (Monday 0) or COL.hour of a datetime column, or "
              "A + B or A - B of two numeric columns")


class Source(Protocol):
    """What a derived column's check reads of a schema attribute it is computed from (the schema holds the derived
    columns, so this module reads its attributes without importing it)."""

    kind: str
    is_datetime: bool


@dataclass(frozen=True)
class Derived:
    """Column ``name`` is ``function`` of ``sources``: a date part of one datetime column, or ``+``/``-`` of two
    numeric ones.  ``expression`` is the declaration as written (``"date.year"``, ``"gross - tax"``)."""

    name: str
    expression: str
    sources: tuple[str, ...]
    function: str

    @classmethod
    def parse(cls, name: Any, expression: Any) -> "Derived":
        """The derived column ``name`` declared by ``expression``; a clear error for anything outside the vocabulary."""
        if not isinstance(name, str) or not name:
            raise SchemaError(f"a derived column needs a non-empty name, got {name!r}")
        if not isinstance(expression, str):
            raise SchemaError(f"derived column {name!r}: the declaration must be text ({VOCABULARY}), "
                              f"got {expression!r}")
        for operation in OPERATIONS:
            left, sep, right = expression.partition(f" {operation} ")
            if sep and left.strip() and right.strip():
                return cls(name, expression, (left.strip(), right.strip()), operation)
        source, dot, part = expression.strip().rpartition(".")
        if dot and source and part in DATE_PARTS:
            return cls(name, expression, (source,), part)
        raise SchemaError(f"derived column {name!r}: cannot read {expression!r}; write {VOCABULARY} (spaces around "
                          "+ and -)")

    def check(self, attributes: Mapping[str, Source]) -> None:
        """Refuse a declaration a public schema with ``attributes`` (by name, in order) cannot serve: a source that
        is not an attribute of the right kind, or a name that is one (before any private step: public inputs only)."""
        if self.name in attributes:
            raise SchemaError(f"derived column {self.name!r} is also an attribute of the schema; a derived column is "
                              "computed after sampling and never modelled: remove one of the two")
        for source in self.sources:
            if source not in attributes:
                raise SchemaError(f"derived column {self.name!r} = {self.expression!r} reads {source!r}, which is not "
                                  f"an attribute of the schema (its attributes: {list(attributes)})")
            attribute = attributes[source]
            if self.function in DATE_PARTS and not attribute.is_datetime:
                raise SchemaError(f"derived column {self.name!r}: {self.function} needs a datetime column, and "
                                  f"{source!r} is not one; declare it with datetimes= (CLI --datetime)")
            if self.function in OPERATIONS and (attribute.kind != "numeric" or attribute.is_datetime):
                raise SchemaError(f"derived column {self.name!r}: {self.function} needs numeric columns, and "
                                  f"{source!r} is {'a datetime' if attribute.is_datetime else 'categorical'}")

    def compute(self, df: pd.DataFrame) -> pd.Series:
        """The column's values on the decoded table ``df`` (a missing source gives a missing value)."""
        if self.function in DATE_PARTS:
            return getattr(df[self.sources[0]].dt, DATE_PARTS[self.function]).astype("Int64").rename(self.name)
        left, right = (df[s] for s in self.sources)
        return (left + right if self.function == "+" else left - right).rename(self.name)


def parse_derived(declared: Mapping[str, str] | None) -> tuple[Derived, ...]:
    """The derived columns of a ``{name: expression}`` mapping (None: none)."""
    if declared is None:
        return ()
    if not isinstance(declared, Mapping):
        raise SchemaError(f"derived must be a mapping {{column: declaration}} ({VOCABULARY}), got {declared!r}")
    return tuple(Derived.parse(name, expression) for name, expression in declared.items())


def add_derived(df: pd.DataFrame, derived: tuple[Derived, ...]) -> pd.DataFrame:
    """``df`` with each derived column computed and placed after the last of its sources and of the derived columns
    placed before it that share one, in declaration order (post-processing)."""
    for i, column in enumerate(derived):
        beside = [d.name for d in derived[:i] if set(d.sources) & set(column.sources)]
        at = max(df.columns.get_loc(c) for c in (*column.sources, *beside)) + 1
        df.insert(at, column.name, column.compute(df))
    return df
