"""Column-by-column similarity of a synthetic table to the real one: the figures of the quality report.

The data owner's check, not a release: everything here reads the real table
freely (see :mod:`synthdp.quality`).  Each column is read once into a
:class:`Column` (numbers as floats, dates as seconds, categories as codes of
one shared label list, missing values marked), and once more into small
integer bins for the pairs (:func:`pair_codes`), so that every score after
that is a vectorised count:

* shape of a number or date column: the KS complement ``1 - max_t |F_real(t) - F_syn(t)|``
  over the values present;
* shape of a categorical column: the TV complement ``1 - (1/2) sum_v |p_real(v) - p_syn(v)|``
  over the values present;
* missing share: ``1 - |missing_real - missing_syn|``;
* values of a column: the TV complement of the two tables' shares (among the values present) of the most
  frequent exact values of either table and of all the other values together (:func:`values_score`): a value
  piled up or lost counts in full, where the KS complement sees only half its gap;
* support of a column: ``1 -`` the share of the real values outside the synthetic range (categories: outside the
  synthetic categories) ``-`` the share of the synthetic values outside the real one (:func:`support_score`);
* trend of two number/date columns: correlation similarity ``1 - |r_real - r_syn| / 2``
  (Pearson, on the rows where both are present; every pair's ``r`` from one matrix product per table);
* trend of any other pair: contingency similarity, the TV complement of the two-way table of
  their bins (number/date columns cut at the real deciles, categories with their
  :data:`PAIR_CATEGORIES` most frequent real values and one bin for the rest, missing values a bin of
  their own).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np
import pandas as pd

from synthdp.core.errors import InputError
from synthdp.core.schema import Schema, category_label, reads_as_iso_dates

#: What a column is compared as.
Kind = Literal["numeric", "datetime", "categorical"]
#: Quantile bins of a number or date column in the pair tables.
PAIR_BINS = 10
#: Categories of a column kept apart in the pair tables (the most frequent in the real table); the rest share a bin.
PAIR_CATEGORIES = 50
#: Code of a missing categorical value in :attr:`Column.real` / :attr:`Column.synthetic`.
MISSING_CODE = -1


@dataclass(frozen=True)
class Column:
    """One column of both tables, read once.

    ``real`` / ``synthetic``: floats with NaN for missing (numeric; datetime in
    seconds since 1970), or codes into ``labels`` with :data:`MISSING_CODE`
    for missing (categorical; ``labels`` in order of real frequency, then the
    values only the synthetic table has).
    """

    name: str
    kind: Kind
    real: np.ndarray
    synthetic: np.ndarray
    labels: tuple[str, ...] = ()

    @property
    def is_number(self) -> bool:
        """Numbers or dates: compared by their order (KS, correlation)."""
        return self.kind != "categorical"

    def present(self, side: str) -> np.ndarray:
        """The values of ``side`` (``"real"`` or ``"synthetic"``) that are not missing."""
        values = getattr(self, side)
        return values[~np.isnan(values)] if self.is_number else values[values != MISSING_CODE]

    def missing_share(self, side: str) -> float:
        """Share of the rows of ``side`` whose value is missing."""
        values = getattr(self, side)
        if len(values) == 0:
            return 0.0
        missing = np.isnan(values) if self.is_number else values == MISSING_CODE
        return float(missing.mean())

    def label(self, value: float | int) -> str:
        """A value as a person reads it: a category label, a date, or a number."""
        if self.kind == "categorical":
            return self.labels[int(value)]
        if self.kind == "datetime":
            return date_label(float(value))
        return category_label(float(value))


def date_label(seconds: float) -> str:
    """A time in seconds since 1970 as a date, with the time of day when it is not midnight."""
    stamp = pd.Timestamp(seconds, unit="s")
    return str(stamp.date() if stamp == stamp.normalize() else stamp)


def column_kinds(real: pd.DataFrame, schema: Schema | None) -> dict[str, Kind]:
    """Each column's kind: from the schema when given (numeric, datetime or categorical), else from the real
    table's dtypes (numbers and dates as such, booleans and everything else as categories), a text column whose
    every value is an ISO 8601 date (``2020-01-31``) compared as dates: the owner's check reads the real table
    freely, where a run's types come from declarations only (docs/privacy.md §10.1)."""
    kinds: dict[str, Kind] = {}
    for name in real.columns:
        name = str(name)
        if schema is not None and name in schema.names:
            attr = schema[name]
            kinds[name] = "categorical" if attr.kind == "categorical" else (
                "datetime" if attr.is_datetime else "numeric")
            continue
        dtype = real[name].dtype
        if pd.api.types.is_bool_dtype(dtype):
            kinds[name] = "categorical"
        elif pd.api.types.is_numeric_dtype(dtype):
            kinds[name] = "numeric"
        elif pd.api.types.is_datetime64_any_dtype(dtype) or reads_as_iso_dates(real[name]):
            kinds[name] = "datetime"
        else:
            kinds[name] = "categorical"
    return kinds


def check_tables(real: pd.DataFrame, synthetic: pd.DataFrame) -> None:
    """Refuse tables that cannot be compared: not DataFrames, without rows, or with different columns."""
    for side, table in (("real", real), ("synthetic", synthetic)):
        if not isinstance(table, pd.DataFrame):
            raise InputError(f"the {side} table must be a pandas DataFrame, got {type(table).__name__}")
        if len(table) == 0:
            raise InputError(f"the {side} table has no rows; nothing to compare")
    check_same_columns(real, synthetic)


def check_same_columns(real: pd.DataFrame, synthetic: pd.DataFrame) -> None:
    """Refuse two tables whose columns differ, naming the columns each lacks."""
    real_cols, syn_cols = [str(c) for c in real.columns], [str(c) for c in synthetic.columns]
    missing = [c for c in real_cols if c not in syn_cols]
    extra = [c for c in syn_cols if c not in real_cols]
    if missing or extra:
        parts = ([f"lacks the real table's columns {missing}"] if missing else []) + (
            [f"has columns {extra} that the real table does not"] if extra else [])
        raise InputError(f"the synthetic table {' and '.join(parts)}; both tables need the same columns "
                         "(drop the others first, e.g. with --drop)")


def read_columns(real: pd.DataFrame, synthetic: pd.DataFrame, schema: Schema | None = None) -> list[Column]:
    """Both tables column by column (:class:`Column`), in the real table's order; a value that does not read as
    its column's kind is refused with the column, the table, the row and what to do."""
    check_tables(real, synthetic)
    real = real.rename(columns=str)
    synthetic = synthetic.rename(columns=str)
    columns = []
    for name, kind in column_kinds(real, schema).items():
        fmt = schema[name].format if schema is not None and name in schema.names else None
        if kind == "categorical":
            columns.append(_categorical(name, real[name], synthetic[name]))
        else:
            columns.append(Column(name, kind, _numbers(name, kind, real[name], "real", fmt),
                                  _numbers(name, kind, synthetic[name], "synthetic", fmt)))
    return columns


def _numbers(name: str, kind: Kind, series: pd.Series, side: str, fmt: str | None) -> np.ndarray:
    """A number or date column as floats (dates in seconds since 1970), NaN for missing."""
    if kind == "datetime":
        text = not pd.api.types.is_datetime64_any_dtype(series.dtype)
        read = pd.to_datetime(series, format=fmt or ("ISO8601" if text else None), errors="coerce")
        if getattr(read.dt, "tz", None) is not None:
            read = read.dt.tz_localize(None)
        values = ((read - pd.Timestamp(0)) / pd.Timedelta(seconds=1)).to_numpy(dtype=float, na_value=np.nan)
        what = "a date" + (f" in the format {fmt!r}" if fmt else "")
    else:
        read = pd.to_numeric(series, errors="coerce")
        values = read.to_numpy(dtype=float, na_value=np.nan)
        what = "a number"
    bad = np.flatnonzero(np.isnan(values) & series.notna().to_numpy())
    if len(bad):
        row = bad[0]
        raise InputError(f"column {name!r} of the {side} table: the value {series.iloc[row]!r} (row {row + 1}, "
                         f"{len(bad)} such rows) is not {what}, and the column is compared as {kind}; fix the "
                         "value, mark it missing, or give a schema that declares the column categorical")
    return values


def _categorical(name: str, real: pd.Series, synthetic: pd.Series) -> Column:
    """Both sides as codes of one label list: the real labels by frequency, then the synthetic-only ones."""
    real_codes, real_labels = _labels(real)
    syn_codes, syn_labels = _labels(synthetic)
    counts = np.bincount(real_codes[real_codes >= 0], minlength=len(real_labels))
    order = np.argsort(-counts, kind="stable")
    labels = list(np.asarray(real_labels, dtype=object)[order])
    index = {label: i for i, label in enumerate(labels)}
    for label in syn_labels:
        if label not in index:
            index[label] = len(labels)
            labels.append(label)
    real_map = np.empty(len(real_labels), dtype=np.int64)
    real_map[order] = np.arange(len(real_labels))
    syn_map = np.array([index[label] for label in syn_labels], dtype=np.int64)
    return Column(name, "categorical", _remap(real_codes, real_map), _remap(syn_codes, syn_map), tuple(labels))


def _labels(series: pd.Series) -> tuple[np.ndarray, list[str]]:
    """Codes (-1 for missing) and the label of each code; values with one label share one code."""
    codes, uniques = pd.factorize(series, use_na_sentinel=True)
    labels = [category_label(value) for value in uniques]
    merged = {label: i for i, label in reversed(list(enumerate(labels)))}
    if len(merged) == len(labels):
        return codes.astype(np.int64), labels
    first = sorted(merged.values())
    renumber = {old: new for new, old in enumerate(first)}
    to_code = np.array([renumber[merged[label]] for label in labels], dtype=np.int64)
    return _remap(codes.astype(np.int64), to_code), [labels[i] for i in first]


def _remap(codes: np.ndarray, mapping: np.ndarray) -> np.ndarray:
    """``mapping[codes]``, keeping :data:`MISSING_CODE`."""
    out = np.full(len(codes), MISSING_CODE, dtype=np.int64)
    present = codes >= 0
    out[present] = mapping[codes[present]]
    return out


def ks_complement(real: np.ndarray, synthetic: np.ndarray) -> float:
    """``1 - max_t |F_real(t) - F_syn(t)|`` of two samples of numbers (1 when both are empty, 0 when one is)."""
    if len(real) == 0 or len(synthetic) == 0:
        return float(len(real) == len(synthetic))
    real, synthetic = np.sort(real), np.sort(synthetic)
    points = np.concatenate([real, synthetic])
    gap = np.abs(np.searchsorted(real, points, side="right") / len(real)
                 - np.searchsorted(synthetic, points, side="right") / len(synthetic))
    return float(1.0 - gap.max())


def tv_complement(real: np.ndarray, synthetic: np.ndarray, size: int) -> float:
    """``1 - (1/2) sum_v |p_real(v) - p_syn(v)|`` of two samples of codes ``0..size-1`` (1 when both are empty,
    0 when one is)."""
    if len(real) == 0 or len(synthetic) == 0:
        return float(len(real) == len(synthetic))
    return float(1.0 - 0.5 * np.abs(np.bincount(real, minlength=size) / len(real)
                                    - np.bincount(synthetic, minlength=size) / len(synthetic)).sum())


def shape_score(column: Column) -> float:
    """The column's shape score: KS complement for numbers and dates, TV complement for categories."""
    real, synthetic = column.present("real"), column.present("synthetic")
    if column.is_number:
        return ks_complement(real, synthetic)
    return tv_complement(real, synthetic, len(column.labels))


def value_counts(column: Column, side: str) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of ``side`` present in it, in increasing order (codes for categories), and each one's
    count of rows."""
    values = column.present(side)
    if column.is_number:
        return np.unique(values, return_counts=True)
    counts = np.bincount(values, minlength=len(column.labels))
    distinct = np.flatnonzero(counts)
    return distinct, counts[distinct]


def top_values(column: Column, top: int) -> np.ndarray:
    """The ``top`` most frequent exact values of each table (first the real ones), without repeats."""
    picked = [distinct[np.argsort(-counts, kind="stable")[:top]] for distinct, counts in
              (value_counts(column, side) for side in ("real", "synthetic"))]
    return np.array(list(dict.fromkeys(np.concatenate(picked).tolist())), dtype=picked[0].dtype)


def values_score(column: Column, top: int) -> float:
    """The TV complement of the two tables' shares (among the values present) of :func:`top_values` and of all
    the other values as one: ``1 - (1/2) (sum_v |p_real(v) - p_syn(v)| + |rest_real - rest_syn|)``, 1 when both
    are empty, 0 when one is.  A pile-up (one value holding 20% of the synthetic rows and 2% of the real) costs
    its whole gap, 0.18, where the KS complement may lose only half of it."""
    values = top_values(column, top)
    shares = []
    for side in ("real", "synthetic"):
        distinct, counts = value_counts(column, side)
        if len(distinct) == 0:
            return float(len(column.present("real")) == len(column.present("synthetic")))
        at = np.minimum(np.searchsorted(distinct, values), len(distinct) - 1)
        shares.append(np.where(distinct[at] == values, counts[at], 0) / counts.sum())
    gap = np.abs(shares[0] - shares[1]).sum() + abs(shares[0].sum() - shares[1].sum())
    return float(1.0 - 0.5 * gap)


def outside_shares(column: Column) -> tuple[float, float]:
    """The share of the real values present outside the synthetic ones' range (categories: not among the
    synthetic categories), and the share of the synthetic values outside the real ones'; a table with values
    has them all outside when the other has none."""
    real, synthetic = column.present("real"), column.present("synthetic")
    if len(real) == 0 or len(synthetic) == 0:
        return float(len(real) > 0), float(len(synthetic) > 0)
    if column.is_number:
        return tuple(float(((a < b.min()) | (a > b.max())).mean()) for a, b in ((real, synthetic), (synthetic, real)))
    return tuple(float((~np.isin(a, b)).mean()) for a, b in ((real, synthetic), (synthetic, real)))


def support_score(column: Column) -> float:
    """``1 -`` both :func:`outside_shares`, at least 0: the real rows the synthetic table never comes near (lost
    categories, a range clipped short) and the synthetic rows unlike any real one (values beyond the real
    range, made-up categories); 1 when both tables are empty."""
    real_out, synthetic_out = outside_shares(column)
    return max(0.0, 1.0 - real_out - synthetic_out)


def is_constant(column: Column) -> bool:
    """Whether the synthetic values present are all one value while the real ones are not."""
    return (len(np.unique(column.present("synthetic"))) == 1) and len(np.unique(column.present("real"))) > 1


def value_shares(column: Column, side: str) -> tuple[np.ndarray, np.ndarray]:
    """The distinct values of ``side`` present in it, in increasing order, and each one's share of all its
    rows."""
    distinct, counts = value_counts(column, side)
    return distinct, counts / max(len(getattr(column, side)), 1)


def share_of(value: float | int, distinct: np.ndarray, shares: np.ndarray) -> float:
    """The share ``shares`` gives ``value`` among the sorted ``distinct`` values (0 when it is not one)."""
    at = int(np.searchsorted(distinct, value))
    return float(shares[at]) if at < len(distinct) and distinct[at] == value else 0.0


@dataclass(frozen=True)
class PairBins:
    """A column cut into small integer bins for the pair tables: ``real``/``synthetic`` codes ``0..size-1``
    and each bin's label."""

    real: np.ndarray
    synthetic: np.ndarray
    labels: tuple[str, ...]

    @property
    def size(self) -> int:
        return len(self.labels)


def pair_codes(column: Column) -> PairBins:
    """The column's bins for the pair tables (module docstring); missing values, when any, have the last bin."""
    if column.is_number:
        present = column.present("real")
        edges = (np.unique(np.quantile(present, np.arange(1, PAIR_BINS) / PAIR_BINS)) if len(present)
                 else np.empty(0))
        codes = [np.searchsorted(edges, getattr(column, side), side="right") for side in ("real", "synthetic")]
        bounds = [column.label(e) for e in edges]
        labels = [f"< {bounds[0]}"] if len(edges) else ["all"]
        labels += [f"[{a}, {b})" for a, b in zip(bounds, bounds[1:])] + ([f">= {bounds[-1]}"] if len(edges) else [])
        missing = [np.isnan(getattr(column, side)) for side in ("real", "synthetic")]
    else:
        kept = min(len(column.labels), PAIR_CATEGORIES)
        codes = [np.minimum(getattr(column, side), kept) for side in ("real", "synthetic")]
        labels = list(column.labels[:kept]) + (["(other)"] if len(column.labels) > kept else [])
        missing = [getattr(column, side) == MISSING_CODE for side in ("real", "synthetic")]
    if any(m.any() for m in missing):
        for code, miss in zip(codes, missing):
            code[miss] = len(labels)
        labels.append("(missing)")
    return PairBins(codes[0].astype(np.int64), codes[1].astype(np.int64), tuple(labels))


def joint_shares(a: PairBins, b: PairBins, side: str) -> np.ndarray:
    """The ``a.size x b.size`` table of shares of the rows of ``side`` in each pair of bins."""
    first, second = getattr(a, side), getattr(b, side)
    counts = np.bincount(first * b.size + second, minlength=a.size * b.size)
    return counts.reshape(a.size, b.size) / max(len(first), 1)


def contingency_similarity(a: PairBins, b: PairBins) -> float:
    """The TV complement of the two-way tables of bins of the real and the synthetic rows."""
    return float(1.0 - 0.5 * np.abs(joint_shares(a, b, "real") - joint_shares(a, b, "synthetic")).sum())


def correlation_matrix(values: np.ndarray) -> np.ndarray:
    """Pearson's r of every two columns of ``values`` (rows x columns, NaN for missing), each pair on the rows
    where both are present, from a few matrix products; NaN where it is undefined (fewer than two such rows,
    or a constant column on them)."""
    present = (~np.isnan(values)).astype(float)
    centred = np.nan_to_num(values - np.nanmean(values, axis=0) if len(values) else values)
    count = present.T @ present                      # rows where both i and j are present
    sum_x = centred.T @ present                      # sum of x_i over those rows
    sum_xx = (centred * centred).T @ present         # sum of x_i^2 over those rows
    sum_xy = centred.T @ centred
    with np.errstate(invalid="ignore", divide="ignore"):
        cov = sum_xy - sum_x * sum_x.T / count
        var = sum_xx - sum_x ** 2 / count
        r = cov / np.sqrt(var * var.T)
    r[(count < 2) | ~(var * var.T > 1e-12 * np.maximum(sum_xx * sum_xx.T, 1e-300))] = np.nan
    return np.clip(r, -1.0, 1.0)
