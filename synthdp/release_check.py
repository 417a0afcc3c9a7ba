"""A self-check of a released table, read from the table alone (docs/privacy.md §10.8).

A run can release a table that says little: a column that comes back mostly
missing (its values fell below partition selection's threshold, or were
clipped away), a single value, or numbers piled in the lowest or highest
cell (bounds learned from too few rows; a cell that comes back holding one value
is a point mass, §11.2, the shape of the data, and is not reported).  These checks read the synthetic
table and the released schema only -- post-processing, so they cost nothing
and their warnings may go into the release report -- and name each column
with what to do.
"""

from __future__ import annotations

import warnings
from collections.abc import Collection
from dataclasses import dataclass

import numpy as np
import pandas as pd

from synthdp.core.encoding import Encoder
from synthdp.core.options import user_stacklevel
from synthdp.core.schema import Attribute, Schema

__all__ = ["MOSTLY_MISSING", "PILED", "ColumnFinding", "ReleaseWarning", "check_release", "warn_release"]

#: A column is reported when more than this share of its synthetic rows is missing.
MOSTLY_MISSING = 0.5
#: A numeric column is reported when more than this share of its present rows is in its lowest or highest cell.
PILED = 0.5


class ReleaseWarning(UserWarning):
    """A column of the released table says little (:func:`check_release`); the same text is in the report."""


@dataclass(frozen=True)
class ColumnFinding:
    """One column of a released table that says little, and why (a sentence naming it and the remedy)."""

    column: str
    problem: str
    text: str


def check_release(data: pd.DataFrame, schema: Schema, codes: np.ndarray | None = None, *,
                  learned_bounds: Collection[str] = ()) -> list[ColumnFinding]:
    """The columns of the synthetic ``data`` (encoded with the released ``schema``: ``codes``, encoded here if not
    given) that come back mostly missing, with a single value, or piled in an end cell.  ``learned_bounds``: the
    columns whose bounds were learned (§10.4), public like the rest of the release; the remedy depends on it.
    Reads the release only: free (§10.8)."""
    if data.empty:
        return []
    codes = Encoder(schema).encode(data) if codes is None else codes
    findings = []
    for j, attr in enumerate(schema.attributes):
        column = codes[:, j]
        missing = column == attr.missing_code if attr.missing else np.zeros(len(column), dtype=bool)
        present = column[~missing]
        cells = attr.size - int(attr.missing)
        if missing.mean() > MOSTLY_MISSING:
            findings.append(ColumnFinding(attr.name, "missing", (
                f"column {attr.name!r} comes back {missing.mean():.0%} missing: if the real column is not mostly "
                "missing, " + ("few of its values were held by enough rows to be learned; give its categories "
                               "publicly, or drop the column"
                               if attr.kind == "categorical" and attr.origin == "learned" else
                               "raise epsilon, or drop the column"))))
        elif len(present) and len(np.unique(present)) == 1 and cells > 1:
            findings.append(ColumnFinding(attr.name, "single", (
                f"column {attr.name!r} comes back " + _single(attr, data[attr.name][~missing], int(present[0]))
                + _single_remedy(attr, attr.name in learned_bounds))))
        elif attr.kind == "numeric" and cells > 2 and len(present):
            values = data[attr.name].to_numpy()
            for cell, end in ((0, "lowest"), (cells - 1, "highest")):
                share = float(np.mean(present == cell))
                if share > PILED and pd.unique(values[column == cell]).size > 1:  # one value: a point mass (§11.2)
                    findings.append(ColumnFinding(attr.name, "piled", (
                        f"column {attr.name!r}: {share:.0%} of its values are in its {end} cell "
                        f"{attr.labels[cell]} of {cells}; if that is not the real data's shape, "
                        + ("give it public bounds (legal or physical limits)" if attr.name in learned_bounds else
                           "give it public cuts, or raise epsilon"))))
    return findings


def _single(attr: Attribute, values: pd.Series, code: int) -> str:
    """How a column whose present rows share one code comes back: one value (constant), or one cell of values."""
    distinct = pd.unique(values)
    if attr.kind == "categorical" or len(distinct) == 1:
        return f"constant: every present value is {distinct[0]}"
    return f"with a single cell ({attr.labels[code]}) of its {attr.size - int(attr.missing)} cells"


def _single_remedy(attr: Attribute, bounds_learned: bool) -> str:
    """What to do about a column that comes back with one value or one cell, by where its domain came from: learned
    bounds (public bounds or cuts help), learned cells inside public bounds (public cuts or more budget), or a public
    domain (more budget only)."""
    if attr.kind == "categorical":
        return "; give its categories publicly, or drop the column"
    if bounds_learned:
        return "; give it public bounds or cuts, or drop the column"
    if attr.origin == "learned":
        return ("; its cells were learned inside its public bounds: give it public cuts, raise epsilon, or drop the "
                "column")
    return "; its bounds and cells are public: raise epsilon, or drop the column"


def warn_release(findings, collected: list[str]) -> None:
    """Each finding of the release's self-check (§10.8) as a warning, and into the report's warnings."""
    for finding in findings:
        collected.append(finding.text)
        warnings.warn(finding.text, ReleaseWarning, stacklevel=user_stacklevel())
