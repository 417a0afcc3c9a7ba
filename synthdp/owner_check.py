"""The release against the real table, for the data owner only (docs/privacy.md §10.8).

The release's self-check (:mod:`synthdp.release_check`) reads the synthetic
table alone: it can say that a column comes back mostly missing, not whether
the real column is mostly missing too, nor that a column missing nowhere now
comes back a quarter missing, nor that a column's shape or a pair's
correlation is far from the real one's.  The comparisons here read the real
rows, so they are not free: they go to the person running synthdp only
(:func:`~synthdp.core.owner.owner_warning`), after the release is made, and no
step of the run depends on them.

* :func:`warn_missing_shares`: the missing shares of both tables;
* :func:`compare_with_real`: each column's shape (KS for numbers and dates, TVD
  for categories, :mod:`synthdp.evaluation.similarity`), the values it lost,
  a value it piles rows on, a constant column, and the Pearson correlation of
  each strongly related pair of number columns.  It reads at most
  :data:`COMPARED_ROWS` rows of each table (a fixed-seed sample beyond that,
  drawn apart from the run's random generator), so it stays cheap on large
  tables.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from synthdp.core.data import AggregatedData
from synthdp.core.encoding import Encoder, number_column
from synthdp.core.errors import SynthDPError
from synthdp.core.owner import OwnerWarning, owner_warning
from synthdp.core.schema import Attribute, Schema
from synthdp.core.tallies import Tallies
from synthdp.engines.rows import Rows
from synthdp.evaluation.similarity import (MISSING_CODE, Column, correlation_matrix, is_constant, shape_score,
                                           share_of, value_shares)
from synthdp.release_check import ColumnFinding

__all__ = ["COMPARED_ROWS", "CORRELATION_SHIFT", "LOST_BINS", "LOST_RATIO", "LOST_ROWS", "LOST_SHARE", "MISSING_RISE",
           "PAIR_COLUMNS", "PAIR_CORRELATION", "PILE_REAL_SHARE", "PILE_SHARE", "SHAPE_DISTANCE", "FarFromReal",
           "FarFromRealError", "FarFromRealWarning", "RealComparison", "check_strict", "compare_with_real",
           "real_missing_shares", "tell_owner", "warn_far_from_real", "warn_missing_shares"]

#: Warn the owner when a column comes back missing in this many more rows (a share) than the real table.
MISSING_RISE = 0.10
#: A column is named when its shape distance to the real column (KS for numbers and dates, TVD for categories,
#: over the values present) is above this.
SHAPE_DISTANCE = 0.2
#: Values that hold at least this share of the real rows (a category, or a run of neighbouring quantile bins of a
#: number column) are lost when ...
LOST_SHARE = 0.01
#: ... the synthetic table holds less than this fraction of their real share.
LOST_RATIO = 0.1
#: Rows of the smaller table a lost value or range must stand for, too (on a small table more than
#: :data:`LOST_SHARE`): a faithful table leaves so many rows out by chance hardly ever.
LOST_ROWS = 20
#: Quantile bins of the real values of a number column in which lost ranges are looked for (each about
#: ``1/LOST_BINS`` of the real rows; a value many rows hold merges bins).
LOST_BINS = 100
#: A value that holds at least this share of the synthetic rows ...
PILE_SHARE = 0.15
#: ... and less than this share of the real rows is a pile-up.
PILE_REAL_SHARE = 0.05
#: Pairs of number columns whose real Pearson correlation is at least this in absolute value are compared ...
PAIR_CORRELATION = 0.3
#: ... and named when the synthetic correlation is further than this from the real one.
CORRELATION_SHIFT = 0.3
#: Number columns paired (the first ones of the schema): the correlation matrices cost the square of their number.
PAIR_COLUMNS = 200
#: Rows of each table compared: a larger table is sampled, with a fixed seed (the same rows every run).
COMPARED_ROWS = 20_000
#: Lost categories or ranges listed in one finding (the rest are counted).
LISTED = 5


def real_missing_shares(tallies: Tallies | None) -> dict[str, float]:
    """The share of rows missing in the real table of each column whose domain was learned, read off its tally
    (encoding also makes missing the values a learned domain left out, so the counted rows cannot say this)."""
    if tallies is None or not tallies.rows:
        return {}
    present = {c: sum(counts.values()) for c, counts in tallies.labels.items()}
    present |= {c: tally.rows for c, tally in tallies.numbers.items()}
    return {c: 1 - rows / tallies.rows for c, rows in present.items()}


def warn_missing_shares(real: AggregatedData, codes: np.ndarray, schema: Schema, findings: list[ColumnFinding],
                        raw: Mapping[str, float]) -> None:
    """Warn the owner of each column that comes back missing in :data:`MISSING_RISE` more of its rows than in the
    real table, saying how much the learned domain left out; and of each column the self-check calls mostly
    missing that the real table holds as missing too (the warning describes the data).

    ``real``: the counted rows and ``codes`` the released table, both encoded with ``schema``; ``raw``:
    :func:`real_missing_shares`, for the columns whose domain was learned (elsewhere the encoded share is the real
    one).
    """
    if not len(codes) or not real.n:
        return
    flagged = {f.column for f in findings if f.problem == "missing"}
    for j, attr in enumerate(schema.attributes):
        if not attr.missing:
            continue
        encoded = float(real.marginal((j,))[attr.missing_code] / real.n)
        before = min(raw.get(attr.name, encoded), encoded)
        after = float(np.mean(codes[:, j] == attr.missing_code))
        left_out = encoded - before
        if after - before > MISSING_RISE:
            cause = (f"{left_out:.0%} of the rows hold values the learned domain left out (they come back missing): "
                     "give its categories publicly, or group its rare values into larger ones"
                     if left_out > MISSING_RISE / 2 else
                     "the model spreads the missing rows too widely: raise epsilon, or give its domain publicly")
            owner_warning(f"column {attr.name!r} comes back {after:.0%} missing, and {before:.0%} of the real "
                          f"table's rows are missing; {cause}")
        elif attr.name in flagged:
            owner_warning(f"column {attr.name!r}: {before:.0%} of the real table's rows are missing too, so the "
                          f"release's warning that it comes back {after:.0%} missing describes the data")


class FarFromRealWarning(OwnerWarning):
    """A column or a pair of columns of the release is far from the real table's (:func:`compare_with_real`):
    read off the real rows, for the data owner only."""


@dataclass(frozen=True)
class FarFromReal:
    """One column (or pair of columns) of the release far from the real table, and how (``problem``: ``shape``,
    ``lost``, ``piled``, ``constant`` or ``correlation``; ``text``: a sentence naming it)."""

    columns: tuple[str, ...]
    problem: str
    text: str


@dataclass(frozen=True)
class RealComparison:
    """What :func:`compare_with_real` found, and on how many rows of each table (for the data owner only:
    statistics of the real rows, never part of the release)."""

    findings: tuple[FarFromReal, ...]
    real_rows: int
    real_compared: int
    synthetic_rows: int
    synthetic_compared: int
    #: Number columns left out of the comparison, and why (their values are cell labels).
    not_compared: tuple[str, ...] = ()

    @property
    def sampled(self) -> bool:
        """Whether either table was sampled (:data:`COMPARED_ROWS`)."""
        return self.real_compared < self.real_rows or self.synthetic_compared < self.synthetic_rows

    def summary(self) -> str:
        """The closing lines of ``synthdp generate``: each finding, or that there is none, and on what rows."""
        rows = (f"{self.real_compared:,} of {self.real_rows:,} real rows and {self.synthetic_compared:,} of "
                f"{self.synthetic_rows:,} synthetic rows, a fixed sample" if self.sampled else
                f"{self.real_rows:,} real rows and {self.synthetic_rows:,} synthetic rows")
        head = ("for the data owner only (read off the real rows, not part of the release): compared with the real "
                f"table on {rows}, ")
        lines = [head + (f"{_count(self.findings)}:" if self.findings else "no column or pair of columns is far "
                         "from it")]
        lines.extend(f"  {f.text}" for f in self.findings)
        if self.not_compared:
            lines.append(f"  not compared: number columns {list(self.not_compared)} (released as cell labels)")
        return "\n".join(lines)


class FarFromRealError(SynthDPError, RuntimeError):
    """``strict=True``: the release is made, but columns of it are far from the real table, or the comparison
    itself failed (no findings then: nothing was checked, which a pipeline must not take for a pass).

    ``result`` is the run's :class:`~synthdp.result.SyntheticResult` (the release, already made and paid for:
    save it, or discard it) and ``findings`` what was found (:class:`FarFromReal`, for the data owner only).
    """

    def __init__(self, result: Any, findings: tuple[FarFromReal, ...]) -> None:
        found = (f"{_count(findings)} of the release against the real table (for the data owner only, not part of "
                 f"the release): {'; '.join(f.text for f in findings)}" if findings else
                 "the release could not be compared with the real table (the owner's warning says why)")
        super().__init__(f"strict=True: {found}. The release was made and its budget spent; it is in this error's "
                         "result (docs/privacy.md §10.8)")
        self.result, self.findings = result, findings


def _count(findings: tuple[FarFromReal, ...]) -> str:
    """``1 finding``, ``3 findings``."""
    return f"{len(findings)} finding" + "s" * (len(findings) != 1)


def compare_with_real(real: pd.DataFrame, synthetic: pd.DataFrame, schema: Schema, codes: np.ndarray,
                      numeric: str = "uniform") -> RealComparison:
    """Each column of the released ``synthetic`` table (and each strongly related pair of number columns)
    against the ``real`` rows the run read (module docstring; the thresholds are this module's constants).

    ``codes``: ``synthetic`` encoded with the released ``schema``.  Categories are compared on their codes (as
    encoding reads them, so a label is one value in both tables), numbers and dates on their values, the real
    ones unclipped (a range the learned bounds cut off is lost); with ``numeric="label"`` the synthetic numbers
    are cell labels, and number columns are left out.
    """
    real_at, syn_at = _sample(len(real)), _sample(len(synthetic))
    compared, released = real.iloc[real_at].rename(columns=str), synthetic.iloc[syn_at]
    real_codes = Encoder(schema).encode(compared[list(schema.names)])
    labels = numeric == "label"
    columns = [_column(attr, compared, released, real_codes[:, j], codes[syn_at, j], schema.missing_values)
               for j, attr in enumerate(schema.attributes) if not (labels and attr.kind == "numeric")]
    findings = [f for column in columns for f in _column_findings(column)]
    findings += _pair_findings([c for c in columns if c.is_number][:PAIR_COLUMNS])
    not_compared = tuple(a.name for a in schema.attributes if labels and a.kind == "numeric")
    return RealComparison(tuple(findings), len(real), len(real_at), len(synthetic), len(syn_at), not_compared)


def _sample(n: int) -> np.ndarray:
    """The rows compared of a table of ``n``: all of them, or :data:`COMPARED_ROWS` drawn with a fixed seed (a
    generator of its own: the run's random stream is never touched), in order."""
    if n <= COMPARED_ROWS:
        return np.arange(n)
    return np.sort(np.random.default_rng(0).choice(n, COMPARED_ROWS, replace=False))


def _column(attr: Attribute, real: pd.DataFrame, synthetic: pd.DataFrame, real_codes: np.ndarray,
            synthetic_codes: np.ndarray, missing_values: tuple[str, ...]) -> Column:
    """Both tables' values of ``attr`` as a :class:`~synthdp.evaluation.similarity.Column`: a category column's
    codes (missing as :data:`~synthdp.evaluation.similarity.MISSING_CODE`), a number column's values (dates in
    seconds), the real ones unclipped."""
    if attr.kind == "categorical":
        def category_codes(codes: np.ndarray) -> np.ndarray:
            return np.where(codes == attr.missing_code, MISSING_CODE, codes) if attr.missing else codes
        return Column(attr.name, "categorical", category_codes(real_codes), category_codes(synthetic_codes),
                      tuple(attr.categories))
    return Column(attr.name, "datetime" if attr.is_datetime else "numeric",
                  number_column(attr, real[attr.name], missing_values, bounded=False),
                  number_column(attr, synthetic[attr.name], missing_values, bounded=False))


def _column_findings(column: Column) -> list[FarFromReal]:
    """How ``column`` comes back far from the real one: constant, a value it piles rows on, values it lost, a
    shape far off (each one finding)."""
    real, synthetic = column.present("real"), column.present("synthetic")
    if not len(real) or not len(synthetic):
        return []  # a column that comes back empty is the missing-share check's (warn_missing_shares)
    name, out = column.name, []
    if is_constant(column):
        out.append(FarFromReal((name,), "constant", f"column {name!r} comes back constant "
                               f"({_text(column, synthetic[0])} in every synthetic row with a value); the real "
                               f"column has {len(np.unique(real))} values"))
    else:
        out.extend(_pile(column))
    out.extend(_lost(column))
    distance = 1.0 - shape_score(column)
    if distance > SHAPE_DISTANCE:
        metric = "KS" if column.is_number else "TVD"
        out.append(FarFromReal((name,), "shape", f"column {name!r}: its distribution is far from the real one "
                               f"({metric} {distance:.2f})"))
    return out


def _pile(column: Column) -> list[FarFromReal]:
    """The synthetic value holding the most rows, when it holds :data:`PILE_SHARE` of them and the real table
    less than :data:`PILE_REAL_SHARE`."""
    distinct, shares = value_shares(column, "synthetic")
    top = int(np.argmax(shares))
    value, share = distinct[top], float(shares[top])
    real = share_of(value, *value_shares(column, "real"))
    if share < PILE_SHARE or real >= PILE_REAL_SHARE:
        return []
    return [FarFromReal((column.name,), "piled", f"column {column.name!r} piles {share:.0%} of its rows on "
                        f"{_text(column, value)}, which {real:.1%} of the real rows hold")]


def _lost(column: Column) -> list[FarFromReal]:
    """The values of the real column holding :data:`LOST_SHARE` of its rows (and :data:`LOST_ROWS` rows of the
    smaller table) that come back in less than :data:`LOST_RATIO` of that share: categories by name, a number
    column's ranges (runs of neighbouring quantile bins)."""
    name = column.name
    least = max(LOST_SHARE, LOST_ROWS / min(len(column.real), len(column.synthetic)))
    if not column.is_number:
        codes, real = value_shares(column, "real")
        synthetic = value_shares(column, "synthetic")
        lost = [k for k in np.argsort(-real, kind="stable") if real[k] >= least and
                share_of(codes[k], *synthetic) < LOST_RATIO * real[k]]
        if not lost:
            return []
        named = ", ".join(f"{column.labels[codes[k]]} ({real[k]:.1%} of the real rows)" for k in lost[:LISTED])
        more = f" and {len(lost) - LISTED} more" if len(lost) > LISTED else ""
        return [FarFromReal((name,), "lost", f"column {name!r} lost values the real table holds: {named}{more}")]
    present = column.present("real")
    edges = np.unique(np.quantile(present, np.arange(1, LOST_BINS) / LOST_BINS))
    bins = len(edges) + 1
    real, synthetic = (np.bincount(np.searchsorted(edges, column.present(side), side="right"), minlength=bins)
                       / len(getattr(column, side)) for side in ("real", "synthetic"))
    empty = synthetic < LOST_RATIO * real
    ranges = []
    for start, stop in _runs(empty):
        share = float(real[start:stop].sum())
        if share >= least:
            inside = present[(present >= (edges[start - 1] if start else -np.inf))
                             & (present < (edges[stop - 1] if stop < bins else np.inf))]
            ranges.append(f"{_text(column, inside.min())} to {_text(column, inside.max())} ({share:.1%} of the "
                          f"real rows, {float(synthetic[start:stop].sum()):.1%} of the synthetic)")
    if not ranges:
        return []
    more = f" and {len(ranges) - LISTED} more" if len(ranges) > LISTED else ""
    return [FarFromReal((name,), "lost", f"column {name!r} lost ranges the real table holds: "
                        f"{'; '.join(ranges[:LISTED])}{more}")]


def _text(column: Column, value: float | int) -> str:
    """A value as a person reads it: a category's label, a date, or a number to six significant digits."""
    return f"{value:.6g}" if column.kind == "numeric" else column.label(value)


def _runs(flags: np.ndarray) -> list[tuple[int, int]]:
    """The ``(start, stop)`` of each run of consecutive True entries of ``flags``."""
    padded = np.concatenate([[False], flags, [False]]).astype(np.int8)
    change = np.flatnonzero(np.diff(padded))
    return list(zip(change[::2].tolist(), change[1::2].tolist()))


def _pair_findings(numbers: list[Column]) -> list[FarFromReal]:
    """The pairs of number columns whose real Pearson correlation is at least :data:`PAIR_CORRELATION` in
    absolute value and whose synthetic one is further than :data:`CORRELATION_SHIFT` from it (a pair whose
    synthetic correlation is undefined, a constant column, is named by the column's finding)."""
    if len(numbers) < 2:
        return []
    real, synthetic = (correlation_matrix(np.column_stack([getattr(c, side) for c in numbers]))
                       for side in ("real", "synthetic"))
    out = []
    for i, j in zip(*np.triu_indices(len(numbers), k=1)):
        r, s = float(real[i, j]), float(synthetic[i, j])
        if abs(r) >= PAIR_CORRELATION and abs(r - s) > CORRELATION_SHIFT:  # False when either is NaN
            a, b = numbers[i].name, numbers[j].name
            out.append(FarFromReal((a, b), "correlation", f"columns {a!r} and {b!r}: their correlation is "
                                   f"{s:.2f}, and {r:.2f} in the real table"))
    return out


def warn_far_from_real(comparison: RealComparison) -> None:
    """Each finding of ``comparison`` as a :class:`FarFromRealWarning` (for the data owner only)."""
    for finding in comparison.findings:
        owner_warning(finding.text, FarFromRealWarning)


def tell_owner(rows: Rows, real, data: pd.DataFrame, codes, schema: Schema, findings, raw: Mapping[str, float],
               numeric: str) -> RealComparison | None:
    """After the release, the data owner's warnings read off the real rows (docs/privacy.md §10.8; no step of the
    run depends on them): the missing shares against the counted rows ``real`` (:func:`warn_missing_shares`),
    then each column and strongly related pair against the rows in memory (:func:`compare_with_real`; None when
    the engine reads them where it counts).

    The release is made and charged by then: an error of these checks is told to the owner as a warning and the
    comparison is None, so that it never throws the release away (a warning the caller made an error is raised).
    """
    try:
        warn_missing_shares(real, codes, schema, findings, raw)
        if rows.frame is None:
            return None
        comparison = compare_with_real(rows.frame, data, schema, codes, numeric)
    except Warning:
        raise
    except Exception as error:  # any failure of the owner's check: the release is kept
        owner_warning(f"the release was made, but comparing it with the real rows failed ({type(error).__name__}: "
                      f"{error}); no column was checked against the real table (nor by strict=True)")
        return None
    warn_far_from_real(comparison)
    return comparison


def check_strict(result: Any, strict: bool) -> None:
    """``strict=True``: raise :class:`FarFromRealError`, carrying ``result`` (the run's
    :class:`~synthdp.result.SyntheticResult`), when the release has columns far from the real table, or when the
    comparison failed (:func:`tell_owner`; strict needs the rows in memory, so a missing comparison is a failure),
    after the release is made: docs/privacy.md §10.8."""
    if strict and (result.comparison is None or result.far_from_real):
        raise FarFromRealError(result, result.far_from_real)
