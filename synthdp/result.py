"""The result of a run: the private synthetic table, its report, and what the run made public beside it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from synthdp.files.parquet import write_table
from synthdp.model import FittedModel
from synthdp.owner_check import FarFromReal, RealComparison
from synthdp.plan import Plan
from synthdp.report import Report

__all__ = ["SyntheticResult"]


@dataclass
class SyntheticResult:
    """A private synthetic table and the report of how it was made."""

    data: pd.DataFrame
    report: Report
    #: The public schema the table was encoded with, and the run's plan (both public).
    schema: Any = None
    plan: Plan | None = None
    #: The released model the table was drawn from: more rows, for free (docs/privacy.md §10.9).
    model: FittedModel | None = None
    #: The release against the real rows (:func:`~synthdp.owner_check.compare_with_real`): for the data owner
    #: only, never saved with the table or the model; None when the rows were not in memory (engine 'dask').
    comparison: RealComparison | None = field(default=None, repr=False)

    @property
    def far_from_real(self) -> tuple[FarFromReal, ...]:
        """The columns and pairs of columns far from the real table (:attr:`comparison`'s findings; none when
        it was not made).  For the data owner only."""
        return () if self.comparison is None else self.comparison.findings

    def __getstate__(self) -> dict:
        """What a pickle (``pickle``, ``joblib``, ``copy``) of the result holds: all but :attr:`comparison`, which
        is read off the real rows for the owner only and, like :meth:`save`, a pickle leaves out (it comes back
        None); a fitted :class:`Synthesizer`'s ``result_`` is pickled the same way."""
        return {**self.__dict__, "comparison": None}

    def save(self, path: str | Path) -> None:
        """Write the table to ``path`` atomically, as CSV or Parquet by its name's ending (the CLI's ``-o`` rule);
        a CSV writes datetime columns in their public formats."""
        write_table(self.data, path, schema=self.schema)

    def to_csv(self, path: str | Path) -> None:
        """Write the table to ``path`` (a ``.csv`` name) atomically (temporary file, then rename); datetime columns
        in their public formats."""
        write_table(self.data, path, fmt="csv", schema=self.schema)

