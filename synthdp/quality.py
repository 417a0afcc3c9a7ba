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

Two linked tables (dicts of tables and ``links``, :func:`linked_quality_report`): each table's report without
its key columns, and the link's figures (:mod:`synthdp.evaluation.links`): children per parent against the real
pair and the real pair bounded to ``k``, the parent x child pairs of strongest real association, and whether
every synthetic foreign key is a parent's key.  Owner-side only as well.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from typing import Any, Mapping

import numpy as np
import pandas as pd

from synthdp.core.errors import InputError
from synthdp.core.options import refusing_unknown_keywords
from synthdp.core.schema import Schema, resolve_schema
from synthdp.evaluation.efficacy import ml_efficacy
from synthdp.evaluation.figures import (OWNER_ONLY, ColumnShape, Distribution, PairTable, PairTrend, PointMass,
                                        QualityFigures, parts_of)
from synthdp.evaluation.html import render, render_linked
from synthdp.evaluation.links import (LinkedFigures, LinkFigures, child_counts, family_counts, integrity,
                                      joined_rows, linked_pairs)
from synthdp.evaluation.similarity import (Column, PairBins, contingency_similarity, correlation_matrix, is_constant,
                                           joint_shares, pair_codes, read_columns, shape_score, share_of,
                                           support_score, top_values, value_shares, values_score)
from synthdp.evaluation.worst_case import DEFAULT_TIME_LIMIT, WorstCase, worst_case_error
from synthdp.linked.links import Link, read_link

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
        _write_page(render(self, mark=OWNER_ONLY), path)


@dataclass(frozen=True)
class LinkedQualityReport(LinkedFigures):
    """The quality report of two linked tables (module docstring): each table's report, the link's figures
    (:class:`~synthdp.evaluation.links.LinkedFigures`) and their page.  **For the data owner only**: it holds
    statistics of the real tables."""

    def to_html(self, path: str | os.PathLike) -> None:
        """Write the report as one self-contained HTML page (:func:`~synthdp.evaluation.html.render_linked`)."""
        _write_page(render_linked(self, mark=OWNER_ONLY), path)


def _write_page(text: str, path: str | os.PathLike) -> None:
    """Write ``text`` to ``path`` through a temporary file beside it, so that a page is never half-written."""
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
def quality_report(real: pd.DataFrame | Mapping[str, pd.DataFrame],
                   synthetic: pd.DataFrame | Mapping[str, pd.DataFrame], schema: Any = None,
                   release: dict | str | os.PathLike | None = None, *, links: Mapping[str, str] | None = None,
                   keys: Mapping[str, str] | None = None, max_rows_per_unit: int | None = None,
                   target: str | None = None, certify: str | None = None,
                   time_limit: float | None = DEFAULT_TIME_LIMIT,
                   random_state: int = 0) -> QualityReport | LinkedQualityReport:
    """Compare ``synthetic`` with ``real`` column by column (module docstring).  **Owner-side only**: the
    result holds statistics of the real data and is never part of a release.

    Two linked tables: dicts of tables by name and ``links`` (and ``keys``) as ``generate_synthetic`` takes
    them give a :class:`LinkedQualityReport` (:func:`linked_quality_report`).

    ``schema`` (a :class:`~synthdp.core.schema.Schema` or its file) says which columns are numbers, dates or
    categories (without it: the real table's dtypes).  ``release``: the run's release (``report.to_dict()``
    or the ``--report`` file), summarised on the page.  ``target``: a column to predict for ML efficacy
    (needs scikit-learn, ``synthdp[quality]``).  ``certify``: a query class (e.g. ``"conjunctions"``) whose
    certified worst case to add, within ``time_limit`` seconds; numbers are binned as ``synthdp evaluate``
    bins them (the schema's public bins, or equal-width bins between the observed extremes).
    ``random_state`` seeds the efficacy split.
    """
    if isinstance(real, Mapping) or links is not None:
        given = [name for name, value in (("target", target), ("certify", certify)) if value is not None]
        if given:
            raise InputError(f"{', '.join(given)} compare one table: with two linked tables, call quality_report "
                             "on one of them (quality_report(real['orders'], synthetic['orders'], target=...))")
        return linked_quality_report(real, synthetic, links, schema, release, keys=keys,
                                     max_rows_per_unit=max_rows_per_unit)
    if keys is not None or max_rows_per_unit is not None:
        raise InputError("keys= and max_rows_per_unit= describe two linked tables: pass dicts of tables by name "
                         "and links={'child.column': 'parent.column'}")
    return table_quality_report(real, synthetic, schema, release, target=target, certify=certify,
                                time_limit=time_limit, random_state=random_state)


def table_quality_report(real: pd.DataFrame, synthetic: pd.DataFrame, schema: Schema | str | os.PathLike | None = None,
                         release: dict | str | os.PathLike | None = None, *, target: str | None = None,
                         certify: str | None = None, time_limit: float | None = DEFAULT_TIME_LIMIT,
                         random_state: int = 0) -> QualityReport:
    """The quality report of one table (:func:`quality_report`, whose docstring says what each argument is)."""
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


def linked_quality_report(real: Mapping[str, pd.DataFrame], synthetic: Mapping[str, pd.DataFrame],
                          links: Mapping[str, str] | None, schema: Mapping[str, Any] | None = None,
                          release: dict | str | os.PathLike | None = None, *, keys: Mapping[str, str] | None = None,
                          max_rows_per_unit: int | None = None) -> LinkedQualityReport:
    """Compare two synthetic linked tables with the real ones (:mod:`synthdp.evaluation.links`): each table
    without its key columns, children per parent, the parent x child pairs and the synthetic keys.
    **Owner-side only**.

    ``real`` and ``synthetic``: dicts of the same two tables by name; ``links`` and ``keys`` as
    ``generate_synthetic`` takes them; ``schema``: a dict of each table's schema (or its file), either may be
    left out; ``release``: the linked run's release (``result.report.to_dict()`` or the ``--report`` file), which
    also gives ``k``; ``max_rows_per_unit``: ``k`` without a release, to compare with the real pair bounded as
    the release bounds it.
    """
    link = read_link(real, links, keys)
    _check_synthetic_pair(synthetic, real, link)
    schemas = _table_schemas(schema, link)
    release = _load_release(release)
    k = _rows_per_unit(release, max_rows_per_unit)
    reports = {name: _table_report(name, *(_without_keys(tables[name], link, name) for tables in (real, synthetic)),
                                   schemas.get(name)) for name in (link.parent, link.child)}
    columns = {name: [s.column for s in report.shapes] for name, report in reports.items()}
    counts = [family_counts(tables[link.parent], tables[link.child], link)[0] for tables in (real, synthetic)]
    joined = [joined_rows(tables[link.parent], tables[link.child], link, columns) for tables in (real, synthetic)]
    pairs, tables = linked_pairs(*joined, link, _joined_schema(schemas, link))
    checks = {side: integrity(tables_[link.parent], tables_[link.child], link)
              for side, tables_ in (("synthetic", synthetic), ("real", real))}
    figures = LinkFigures(link, child_counts(*counts, k), checks, pairs, tables)
    return LinkedQualityReport(reports, figures, release)


def _without_keys(table: pd.DataFrame, link: Link, name: str) -> pd.DataFrame:
    """``table`` without its identifier columns, which are not compared (docs/privacy.md §12)."""
    keys = [link.key] if name == link.parent else [link.foreign_key, link.child_key]
    return table.drop(columns=[c for c in table.columns if c in keys])


def _check_synthetic_pair(synthetic: Any, real: Mapping[str, pd.DataFrame], link: Link) -> None:
    """Refuse synthetic tables that are not the real ones' two tables by name, or that lack a key column."""
    if not isinstance(synthetic, Mapping) or not all(isinstance(t, pd.DataFrame) for t in synthetic.values()):
        raise InputError("the synthetic tables are given as a dict of DataFrames by name, as generate_synthetic "
                         "returns them (result.tables)")
    if set(synthetic) != set(real):
        raise InputError(f"the synthetic tables are {sorted(synthetic)} and the real ones {sorted(real)}: give "
                         "both pairs under the same two names")
    for table, column in ((link.parent, link.key), (link.child, link.foreign_key)):
        if column not in synthetic[table].columns:
            raise InputError(f"the synthetic table {table!r} has no column {column!r}, the key of the link "
                             f"{link.describe()}; its columns are {[str(c) for c in synthetic[table].columns]}")


def _table_schemas(schema: Any, link: Link) -> dict[str, Schema]:
    """Each table's schema (loaded from its file), from a dict keyed by table name."""
    if schema is None:
        return {}
    if not isinstance(schema, Mapping) or not set(schema) <= {link.parent, link.child}:
        raise InputError(f"schema= for two tables is a dict of each table's schema by name, e.g. schema="
                         f"{{{link.parent!r}: ..., {link.child!r}: ...}}")
    return {name: _load_schema(given) for name, given in schema.items() if given is not None}


def _joined_schema(schemas: dict[str, Schema], link: Link) -> Schema | None:
    """One schema of the joined rows' ``table.column`` columns, from the tables' schemas."""
    if not schemas:
        return None
    return Schema(tuple(replace(a, name=f"{name}.{a.name}") for name in (link.parent, link.child)
                        if name in schemas for a in schemas[name].attributes))


def _rows_per_unit(release: dict | None, given: int | None) -> int | None:
    """``k``: the linked release's, or ``given``; a single table's release, or a ``given`` that differs from the
    release's, is refused."""
    if given is not None and (isinstance(given, bool) or not isinstance(given, (int, np.integer)) or given < 1):
        raise InputError(f"max_rows_per_unit must be a whole number of at least 1, got {given!r}")
    if release is None:
        return given
    if "tables" not in release:
        raise InputError("the release is one table's: give the release of the linked run (synthdp generate "
                         "--link --report, or result.report.to_dict())")
    k = int(release["max_rows_per_unit"])
    if given is not None and given != k:
        raise InputError(f"max_rows_per_unit={given} but the release kept at most {k} rows per unit: leave "
                         "max_rows_per_unit out (the release gives it)")
    return k


def _table_report(name: str, real: pd.DataFrame, synthetic: pd.DataFrame, schema: Schema | None) -> QualityReport:
    """One table's report, a refusal naming the table."""
    try:
        return table_quality_report(real, synthetic, schema)
    except InputError as exc:
        raise InputError(f"table {name!r}: {exc}") from None
