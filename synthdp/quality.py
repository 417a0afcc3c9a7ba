"""The quality report: how close a synthetic table is to the real one, column by column, on one page.

**Owner-side only.**  The report reads the real table freely: its scores,
pictures, point masses and warnings are statistics of the real data, not
differentially private, and never part of a release.  It is for the data
owner's eyes (the HTML page says so on top); publish the synthetic table and
its release (``report.to_dict()``), never this (docs/privacy.md §6 item 14).

:func:`quality_report` reads each column of both tables once
(:mod:`synthdp.evaluation.similarity`) and scores:

* columns: the shape (KS or TV complement), the values (the most frequent
  exact values' shares), the support (range or categories covered) and the
  missing share of each; a column's score is the lowest of the four, and 0
  when it came back constant;
* pair trends (correlation similarity for two number/date columns, contingency
  similarity of binned columns otherwise), with the worst pairs' tables;
* point masses: the most frequent exact values' shares in both tables;
* optionally ML efficacy (``target``, :mod:`synthdp.evaluation.efficacy`) and
  the certified worst case over a query class (``certify``,
  :mod:`synthdp.evaluation.worst_case`).

``score`` is ``100 x`` the mean of four parts: the mean column score, the mean
of the worst tenth of the column scores, and the same two of the pair trends
(:func:`~synthdp.evaluation.figures.parts_of`; a table of one column has the first two only).  Means
alone flatter: seven constant columns of 55 cost them 8 points of 100, the
score 41.  Efficacy and the worst case are shown beside it, not averaged in
(docs/guide/evaluation.md).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from synthdp.core.errors import InputError
from synthdp.core.options import refusing_unknown_keywords
from synthdp.core.schema import Schema, resolve_schema
from synthdp.evaluation.efficacy import ml_efficacy
from synthdp.evaluation.figures import (OWNER_ONLY, ColumnShape, Distribution, PairTable, PairTrend, PointMass,
                                        QualityFigures, parts_of)
from synthdp.evaluation.html import render
from synthdp.evaluation.similarity import (Column, PairBins, contingency_similarity, correlation_matrix, is_constant,
                                           joint_shares, pair_codes, read_columns, shape_score, share_of,
                                           support_score, top_values, value_shares, values_score)
from synthdp.evaluation.worst_case import DEFAULT_TIME_LIMIT, WorstCase, worst_case_error

#: Most frequent exact values of each side listed as point masses.
POINT_MASSES = 5
#: Bins of a number or date column's histogram (shared by both tables).
HISTOGRAM_BINS = 30
#: Categories drawn in a column's bar chart (the most frequent real ones; the rest as one bar).
BAR_CATEGORIES = 20
#: Pairs whose two-way tables are kept for the page (the lowest scores).
WORST_PAIRS = 3
#: A point mass is warned about when it holds at least this share of one table ...
MASS_SHARE = 0.05
#: ... and the two tables' shares differ by at least this much and by a factor of at least :data:`MASS_RATIO`.
MASS_GAP = 0.05
MASS_RATIO = 2.0
#: Missing shares that differ by at least this much are warned about.
MISSING_GAP = 0.05
#: A column whose shape score is below this is warned about.
LOW_SHAPE = 0.7


@dataclass(frozen=True)
class QualityReport(QualityFigures):
    """The quality report (module docstring): its figures (:class:`~synthdp.evaluation.figures.QualityFigures`)
    and its page.  **For the data owner only**: it holds statistics of the real data."""

    def to_html(self, path: str | os.PathLike) -> None:
        """Write the report as one self-contained HTML page (:mod:`synthdp.evaluation.html`)."""
        text = render(self, mark=OWNER_ONLY)
        tmp = f"{os.fspath(path)}.tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, path)


def _load_release(release: str | os.PathLike | dict | None) -> dict | None:
    """The release as a dict (a ``--report`` JSON file's path, or the dict itself)."""
    if release is None or isinstance(release, dict):
        return release
    try:
        with open(release, encoding="utf-8") as fh:
            loaded = json.load(fh)
    except OSError as exc:
        raise InputError(f"cannot read the release file {os.fspath(release)!r}: {exc.strerror}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"the release file {os.fspath(release)!r} is not JSON ({exc}); pass the file "
                         "synthdp generate --report wrote") from None
    if not isinstance(loaded, dict) or "epsilon_spent" not in loaded:
        raise InputError(f"{os.fspath(release)!r} is not a release (no 'epsilon_spent'); pass the file "
                         "synthdp generate --report wrote")
    return loaded


def _load_schema(schema: Schema | str | os.PathLike | None) -> Schema | None:
    return schema if schema is None or isinstance(schema, Schema) else Schema.load(schema)


@refusing_unknown_keywords
def quality_report(real: pd.DataFrame, synthetic: pd.DataFrame, schema: Schema | str | os.PathLike | None = None,
                   release: dict | str | os.PathLike | None = None, *, target: str | None = None,
                   certify: str | None = None, time_limit: float | None = DEFAULT_TIME_LIMIT,
                   random_state: int = 0) -> QualityReport:
    """Compare ``synthetic`` with ``real`` column by column (module docstring).  **Owner-side only**: the
    result holds statistics of the real data and is never part of a release.

    ``schema`` (a :class:`~synthdp.core.schema.Schema` or its file) says which columns are numbers, dates or
    categories (without it: the real table's dtypes).  ``release``: the run's release (``report.to_dict()``
    or the ``--report`` file), summarised on the page.  ``target``: a column to predict for ML efficacy
    (needs scikit-learn, ``synthdp[quality]``).  ``certify``: a query class (e.g. ``"conjunctions"``) whose
    certified worst case to add, within ``time_limit`` seconds; numbers are binned as ``synthdp evaluate``
    bins them (the schema's public bins, or equal-width bins between the observed extremes).
    ``random_state`` seeds the efficacy split.
    """
    schema = _load_schema(schema)
    release = _load_release(release)
    if target is not None and target not in [str(c) for c in real.columns]:
        raise InputError(f"target {target!r} is not a column of the real table; choose one of "
                         f"{[str(c) for c in real.columns]}")
    columns = read_columns(real, synthetic, schema)
    shapes = tuple(ColumnShape(c.name, c.kind, "KS complement" if c.is_number else "TV complement",
                               shape_score(c), c.missing_share("real"), c.missing_share("synthetic"),
                               values_score(c, POINT_MASSES), support_score(c), is_constant(c))
                   for c in columns)
    bins = [pair_codes(c) for c in columns]
    numbers = [c for c in columns if c.is_number]
    matrices = {side: correlation_matrix(np.column_stack([getattr(c, side) for c in numbers]))
                for side in ("real", "synthetic")} if numbers else {}
    at = {c.name: i for i, c in enumerate(numbers)}
    trends = tuple(_trend(columns[i], columns[j], bins[i], bins[j], matrices, at)
                   for i in range(len(columns)) for j in range(i + 1, len(columns)))
    masses = tuple(m for c in columns for m in _point_masses(c))
    index = {c.name: i for i, c in enumerate(columns)}
    worst = sorted(trends, key=lambda t: t.score)[:WORST_PAIRS]
    return QualityReport(
        score=float(100.0 * np.mean([v for v in parts_of(shapes, trends).values() if v is not None])),
        shapes=shapes, trends=trends, point_masses=masses,
        warnings=tuple(w for c, s in zip(columns, shapes) for w in _warnings(c, s, masses)),
        distributions=tuple(_distribution(c) for c in columns),
        worst_pairs=tuple(_pair_table(t.columns, bins[index[t.columns[0]]], bins[index[t.columns[1]]])
                          for t in worst),
        correlations=_correlations(numbers, matrices), n_real=len(real), n_synthetic=len(synthetic),
        efficacy=None if target is None else ml_efficacy(columns, target, random_state=random_state),
        worst_case=None if certify is None else _certify(real, synthetic, schema, columns, certify, time_limit),
        release=release)


def _trend(a: Column, b: Column, a_bins: PairBins, b_bins: PairBins, matrices: dict[str, np.ndarray],
           at: dict[str, int]) -> PairTrend:
    """Correlation similarity for two number/date columns where both correlations exist (``matrices``, by the
    columns' places ``at``), else contingency similarity."""
    if a.is_number and b.is_number:
        real, synthetic = (float(matrices[side][at[a.name], at[b.name]]) for side in ("real", "synthetic"))
        if not (np.isnan(real) or np.isnan(synthetic)):
            return PairTrend((a.name, b.name), "correlation similarity", 1.0 - abs(real - synthetic) / 2.0,
                             real, synthetic)
    return PairTrend((a.name, b.name), "contingency similarity", contingency_similarity(a_bins, b_bins))


def _point_masses(column: Column) -> list[PointMass]:
    """The :data:`POINT_MASSES` most frequent exact values of each table, with both tables' shares."""
    real, synthetic = value_shares(column, "real"), value_shares(column, "synthetic")
    masses = [PointMass(column.name, column.label(v), share_of(v, *real), share_of(v, *synthetic))
              for v in top_values(column, POINT_MASSES).tolist()]
    return sorted(masses, key=lambda m: -max(m.real, m.synthetic))


def _percent(share: float) -> str:
    """A share as a person reads it: ``86%``, ``2.5%``, ``0.1%``, ``<0.1%``, ``0%``."""
    if share == 0:
        return "0%"
    if share < 0.001:
        return "<0.1%"
    return f"{100 * share:.0f}%" if share >= 0.1 else f"{100 * share:.1f}%"


def _warnings(column: Column, shape: ColumnShape, masses: tuple[PointMass, ...]) -> list[str]:
    """Plain-words warnings about one column: emptied, constant, point masses lost or made up, missing shares,
    a distribution far off."""
    name = column.name
    real_values, syn_values = column.present("real"), column.present("synthetic")
    if len(syn_values) == 0 and len(real_values) > 0:
        return [f"{name}: came back empty (every synthetic value is missing; "
                f"{_percent(1 - shape.real_missing)} of real rows have a value)"]
    out = []
    if shape.constant:
        out.append(f"{name}: came back constant ({column.label(syn_values[0])!r} in every synthetic row with a "
                   f"value; the real column has {len(np.unique(real_values))} distinct values)")
    for mass in masses:
        if mass.column != name:
            continue
        high, low = max(mass.real, mass.synthetic), min(mass.real, mass.synthetic)
        if high >= MASS_SHARE and high - low >= MASS_GAP and high >= MASS_RATIO * low:
            what = "zeros" if column.kind == "numeric" and mass.value == "0" else f"rows equal to {mass.value!r}"
            out.append(f"{name}: {_percent(mass.synthetic)} {what} in synthetic vs {_percent(mass.real)} in real")
    if abs(shape.real_missing - shape.synthetic_missing) >= MISSING_GAP:
        out.append(f"{name}: {_percent(shape.synthetic_missing)} missing in synthetic vs "
                   f"{_percent(shape.real_missing)} in real")
    if shape.score < LOW_SHAPE and len(syn_values):
        out.append(f"{name}: the distributions differ a lot ({shape.metric} {shape.score:.2f})")
    return out


def _distribution(column: Column) -> Distribution:
    """The column's picture: a histogram with shared bins, or the shares of the most frequent categories."""
    real, synthetic = column.present("real"), column.present("synthetic")
    if column.is_number:
        both = np.concatenate([real, synthetic])
        lo, hi = (float(both.min()), float(both.max())) if len(both) else (0.0, 1.0)
        edges = np.linspace(lo, hi if hi > lo else lo + 1.0, HISTOGRAM_BINS + 1)
        shares = [np.histogram(v, bins=edges)[0] / max(len(v), 1) for v in (real, synthetic)]
        labels = tuple(column.label(e) for e in edges[:-1])
        return Distribution(column.name, column.kind, labels,
                            tuple(shares[0].tolist()), tuple(shares[1].tolist()), tuple(edges.tolist()),
                            column.missing_share("real"), column.missing_share("synthetic"))
    kept = min(len(column.labels), BAR_CATEGORIES)
    shares = [np.bincount(np.minimum(v, kept), minlength=kept + 1) / max(len(v), 1) for v in (real, synthetic)]
    labels = column.labels[:kept] + (("(other)",) if len(column.labels) > kept else ())
    return Distribution(column.name, column.kind, labels, tuple(shares[0][:len(labels)].tolist()),
                        tuple(shares[1][:len(labels)].tolist()), (), column.missing_share("real"),
                        column.missing_share("synthetic"))


def _pair_table(columns: tuple[str, str], a: PairBins, b: PairBins) -> PairTable:
    real, synthetic = joint_shares(a, b, "real"), joint_shares(a, b, "synthetic")
    return PairTable(columns, a.labels, b.labels, tuple(map(tuple, real.tolist())),
                     tuple(map(tuple, synthetic.tolist())))


def _correlations(numbers: list[Column], matrices: dict[str, np.ndarray]) -> dict[str, Any]:
    """Pearson matrices of the number/date columns in both tables (None where undefined)."""
    if len(numbers) < 2:
        return {}
    out: dict[str, Any] = {"names": [c.name for c in numbers]}
    for side, matrix in matrices.items():
        out[side] = [[None if np.isnan(r) else (1.0 if i == j else float(r)) for j, r in enumerate(row)]
                     for i, row in enumerate(matrix)]
    return out


def _certify(real: pd.DataFrame, synthetic: pd.DataFrame, schema: Schema | None, columns: list[Column],
             certify: str, time_limit: float | None) -> WorstCase:
    """The certified worst case over ``certify``, on the schema's domain (or one built as ``synthdp evaluate``
    builds it: categories from the real table, numbers in equal-width bins between the observed extremes)."""
    if schema is None:
        bounds = {}
        for c in columns:
            if c.is_number:
                values = np.concatenate([c.present("real"), c.present("synthetic")])
                lo, hi = (float(values.min()), float(values.max())) if len(values) else (0.0, 1.0)
                bounds[c.name] = (lo, hi if hi > lo else lo + 1.0)
        kinds = {c.name: c.kind for c in columns}
        dates = [n for n, k in kinds.items() if k == "datetime"]
        if dates:
            raise InputError(f"certify over date columns {dates} needs a schema that declares them (--schema)")
        schema = resolve_schema(real, None, [], bounds=bounds, clip=True, unsafe_public_categories=True,
                                discretise="equal-width",
                                categorical=[n for n, k in kinds.items() if k == "categorical"])
    return worst_case_error(real, synthetic, certify, schema=schema.with_equal_width(), time_limit=time_limit)
