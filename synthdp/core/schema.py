"""The public schema of a table: which values each column may take, and how.

A differentially private release protects the rows of a table, not its
domain: the set of values every column may take must be *public*, fixed
before the private data are looked at. A :class:`Schema` is that public
description. Each :class:`Attribute` is either

* **categorical**: a tuple of category labels (strings), or
* **numeric**: cells over user-given bounds ``[lo, hi]``: equal-width bins,
  public cut points, or cut points still to be learned privately by PrivTree
  (origin ``"learn"``, docs/privacy.md §10.3; :meth:`Schema.with_cuts` fixes them),

optionally with one extra ``"<missing>"`` value. The schema maps to a
:class:`synthdp.core.domain.Domain` (integer codes ``0..size-1`` per attribute);
:class:`synthdp.core.encoding.Encoder` turns DataFrames into codes and back.

:meth:`Schema.from_dataframe` builds a schema from a DataFrame without
reading anything off its values. Numeric bounds are never read off the data
(the minimum and maximum of a column are individual records' values), and
neither is any output type: a pandas dtype is a function of the values (an
integer column with one missing entry becomes ``float64``), so the type a
column is written back with comes from the public schema (:func:`public_dtype`).
A categorical column without public categories gets the origin ``"learn"``:
its domain is to be learned privately by partition selection
(docs/privacy.md §9, :mod:`synthdp.mechanisms.partition`), after which
:meth:`Schema.with_learned` fixes it. Reading categories off the data is an
explicit opt-in (``unsafe_public_categories=True``) that voids the
differential-privacy guarantee and says so with a :class:`PrivacyWarning`.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from synthdp.core.attribute import (
    Attribute,
    DATETIME_DTYPE,
    DAY_SECONDS,
    DEFAULT_BINS,
    MISSING_LABEL,
    NUMERIC_KINDS,
    ORIGINS,
    category_label,
    column_kind,
    datetime_dtype,
    datetime_zone,
    format_unit,
    is_date_bound,
    is_datetime_dtype,
    label_order,
    labels_dtype,
    public_dtype,
    reads_as,
    reads_zone,
    timestamp_seconds,
    typed_label,
    value_kind,
    values_dtype,
)
from synthdp.core.derived import Derived, parse_derived
from synthdp.core.domain import Domain
from synthdp.core.errors import InputError, PrivacyWarning, SchemaError
from synthdp.core.frame_types import (
    ISO_DATE,
    READ_AS_TEXT,
    check_declarations_agree,
    check_known,
    dtype_disagreement,
    frame_date_dtype,
    frame_zone,
    holds_dates,
    iso_dates_hint,
    numeric_dtype,
    observed_categories,
    parsed_from_text,
    parsed_text_error,
    reads_as_iso_dates,
    reads_as_numbers,
    undeclared_dates_error,
)
from synthdp.core.options import refusing_unknown_keywords, user_stacklevel
from synthdp.core.owner import OwnerWarning, owner_warning

__all__ = [
    "DATETIME_DTYPE",
    "DAY_SECONDS",
    "DEFAULT_BINS",
    "ISO_DATE",
    "MISSING_LABEL",
    "NUMERIC_KINDS",
    "ORIGINS",
    "Attribute",
    "PrivacyWarning",
    "Schema",
    "UntypedWarning",
    "category_label",
    "column_kind",
    "datetime_dtype",
    "datetime_zone",
    "format_unit",
    "frame_date_dtype",
    "frame_zone",
    "holds_dates",
    "is_date_bound",
    "is_datetime_dtype",
    "iso_dates_hint",
    "label_order",
    "labels_dtype",
    "parsed_from_text",
    "parsed_text_error",
    "public_dtype",
    "read_json",
    "reads_as",
    "reads_as_iso_dates",
    "reads_zone",
    "resolve_schema",
    "timestamp_seconds",
    "typed_label",
    "value_kind",
    "values_dtype",
    "write_atomically",
]

logger = logging.getLogger(__name__)

SCHEMA_FORMAT = "synthdp-schema"
#: The key that marks a schema drafted by ``synthdp schema``: refused until its owner has reviewed it.
DRAFT_KEY = "_read_off_data"
SCHEMA_VERSION = 1


class UntypedWarning(UserWarning):
    """A column whose bounds are to be learned has no declared type, so it comes back as real numbers (a draft
    writes every type out, and filters this)."""



@dataclass(frozen=True)
class Schema:
    """The public description of a table: its attributes, in column order.

    ``missing_values`` are extra tokens (such as ``"?"``) that mean "missing" in
    any column, on top of NaN/None/pd.NA; they are matched against a value's
    label (:func:`category_label`) in categorical columns and against the text
    of text-typed numeric columns.
    """

    attributes: tuple[Attribute, ...]
    missing_values: tuple[str, ...] = ()
    #: Columns declared public functions of attributes (docs/privacy.md §10.10): never modelled, computed from the
    #: decoded columns after sampling (:mod:`synthdp.core.derived`).
    derived: tuple[Derived, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "attributes", tuple(self.attributes))
        object.__setattr__(self, "missing_values", tuple(str(t) for t in self.missing_values))
        object.__setattr__(self, "derived", tuple(self.derived))
        if not self.attributes:
            raise SchemaError("a schema needs at least one attribute")
        if not all(isinstance(a, Attribute) for a in self.attributes):
            raise SchemaError("schema attributes must be Attribute objects")
        if len(set(self.names)) != len(self.names):
            dup = sorted({n for n in self.names if self.names.count(n) > 1})
            raise SchemaError(f"duplicate column names in schema: {dup}")
        self._check_other_labels()
        names = [d.name for d in self.derived]
        if len(set(names)) != len(names):
            raise SchemaError(f"derived columns {sorted({n for n in names if names.count(n) > 1})} are declared twice")
        by_name = {a.name: a for a in self.attributes}
        for column in self.derived:
            column.check(by_name)

    def _check_other_labels(self) -> None:
        """Refuse an ``other`` label that is also a missing token: encoding would read the label as missing, so a
        synthetic table holding it could not be read back (public inputs only: refused before any private step)."""
        clash = {a.name: a.other for a in self.attributes if a.other is not None and a.other in self.missing_values}
        if clash:
            raise SchemaError(f"the other label of column(s) {', '.join(f'{n!r} ({o!r})' for n, o in clash.items())} "
                              f"is also a missing token {list(self.missing_values)}; choose another other label, or "
                              "leave it out of the missing tokens (missing_values, CLI --missing)")

    @property
    def names(self) -> tuple[str, ...]:
        """Column names in order."""
        return tuple(a.name for a in self.attributes)

    def __len__(self) -> int:
        return len(self.attributes)

    def __getitem__(self, name: str) -> Attribute:
        """The attribute called ``name``."""
        return self.attributes[self.domain.index(name)]

    @cached_property
    def domain(self) -> Domain:
        """Names, sizes, value labels, ordered cells (a numeric column's, not its missing value), the cells that
        hold one value (:attr:`Attribute.one_value_cells`) and the cells' widths of the encoded table."""
        return Domain(self.names, tuple(a.size for a in self.attributes), tuple(a.labels for a in self.attributes),
                      tuple(a.size - a.missing if a.kind == "numeric" else 0 for a in self.attributes),
                      tuple(a.one_value_cells for a in self.attributes), tuple(a.cell_widths for a in self.attributes))

    @property
    def to_learn(self) -> tuple[str, ...]:
        """Columns whose categories are still to be learned by partition selection (docs/privacy.md §9)."""
        return tuple(a.name for a in self.attributes if a.kind == "categorical" and a.origin == "learn")

    @property
    def to_bound(self) -> tuple[str, ...]:
        """Numeric columns whose bounds are still to be learned privately (docs/privacy.md §10.4)."""
        return tuple(a.name for a in self.attributes if a.kind == "numeric" and a.bounds is None)

    def with_bounds(self, released: Mapping[str, tuple[float, float]]) -> "Schema":
        """This schema with the bounds of the columns :attr:`to_bound` fixed to the ``released`` ones (§10.4); those
        columns clip, since released bounds may leave out the tails."""
        pending, given = set(self.to_bound), set(released)
        if given != pending:
            raise SchemaError(f"with_bounds needs bounds for exactly the columns {sorted(pending)}; "
                              f"got {sorted(given)}")
        return replace(self, attributes=tuple(replace(a, bounds=tuple(released[a.name]), clip=True)
                                              if a.name in pending else a for a in self.attributes))

    @property
    def to_discretise(self) -> tuple[str, ...]:
        """Numeric columns whose cells are still to be learned by PrivTree (docs/privacy.md §10.3)."""
        return tuple(a.name for a in self.attributes if a.kind == "numeric" and a.origin == "learn")

    def with_placeholder_cells(self, cells: int) -> "Schema":
        """For sizing only: each column :attr:`to_discretise` as ``cells`` public equal-width bins (over its bounds,
        or ``(0, cells)`` where they are still to be learned), real-valued, without derived columns; never used to
        encode data."""
        pending = set(self.to_discretise)
        attributes = tuple(
            replace(a, origin="public", bounds=a.bounds or (0.0, float(cells)), bins=cells, cuts=(), dtype="float64",
                    format=None, decimals=None, clip=True)
            if a.name in pending else a for a in self.attributes)
        return replace(self, attributes=attributes, derived=())

    def with_cuts(self, released: Mapping[str, Sequence[float]]) -> "Schema":
        """This schema with the cells of the columns :attr:`to_discretise` fixed to the ``released`` cut points.

        The cut points are PrivTree's release (docs/privacy.md §10.3); bounds,
        clipping, missing value and dtype stay the public ones.
        """
        pending, given = set(self.to_discretise), set(released)
        if given != pending:
            raise SchemaError(f"with_cuts needs cut points for exactly the columns to discretise {sorted(pending)}; "
                              f"got {sorted(given)}")
        attributes = tuple(
            replace(a, origin="learned", cuts=tuple(released[a.name]), bins=len(released[a.name]) + 1)
            if a.name in pending else a for a in self.attributes)
        return replace(self, attributes=attributes)

    def with_equal_width(self) -> "Schema":
        """This schema with the columns :attr:`to_discretise` cut into public equal-width bins instead.

        For the owner's own, non-private check (``synthdp evaluate --schema``),
        which learns nothing: :data:`DEFAULT_BINS` bins, fewer for an integer
        column with fewer values so that each bin holds one.
        """
        def bins(a: Attribute) -> int:
            lo, hi = a.bounds
            return min(DEFAULT_BINS, int(hi - lo) + 1) if value_kind(a.dtype) == "int" else DEFAULT_BINS

        pending = set(self.to_discretise)
        attributes = tuple(replace(a, origin="public", bins=bins(a)) if a.name in pending and a.bounds else a
                           for a in self.attributes)
        return replace(self, attributes=attributes)

    @property
    def read_off(self) -> tuple[str, ...]:
        """Columns whose categories were read off the private data (the unsafe opt-in)."""
        return tuple(a.name for a in self.attributes if a.origin == "read-off")

    def with_learned(self, released: Mapping[str, Iterable[str]]) -> "Schema":
        """This schema with the domains of the columns :attr:`to_learn` fixed to the ``released`` labels.

        ``released`` maps every column still to be learned to the set of
        labels partition selection released for it (docs/privacy.md §9). The
        labels are put in a fixed order that depends on the labels alone
        (numbers by value, then text), so the schema is a function of the
        released sets only. Every other value of these columns -- including
        values partition selection did not release -- is encoded as the
        column's missing value (or as its public ``other`` label, kept last)
        before any later step. Each column keeps the
        dtype it was declared with; without one it stays text, whatever the
        released labels look like (``"02139"``, grades ``"1"``..``"5"``): types
        by declaration only (docs/privacy.md §9.6, §10.1).
        """
        pending = set(self.to_learn)
        given = set(released)
        if given != pending:
            raise SchemaError(f"with_learned needs released categories for exactly the columns to learn "
                              f"{sorted(pending)}; got {sorted(given)}")
        attributes = []
        for attr in self.attributes:
            if attr.name in pending:
                labels = tuple(sorted({str(label) for label in released[attr.name]} - {attr.other}, key=label_order))
                attr = Attribute(attr.name, "categorical", missing=attr.missing, dtype=attr.dtype, origin="learned",
                                 categories=labels + (() if attr.other is None else (attr.other,)), other=attr.other)
            attributes.append(attr)
        return replace(self, attributes=tuple(attributes))

    @classmethod
    @refusing_unknown_keywords
    def from_dataframe(
        cls,
        df: pd.DataFrame,
        *,
        categorical: Iterable[str] | None = None,
        bounds: Mapping[str, tuple[float, float]] | None = None,
        bins: Mapping[str, int] | None = None,
        cuts: Mapping[str, Sequence[float]] | None = None,
        discretise: Literal["privtree", "equal-width"] = "equal-width",
        datetimes: Mapping[str, str | None] | Iterable[str] | None = None,
        learn_bounds: Mapping[str, str] | Iterable[str] | None = None,
        decimals: Mapping[str, int] | None = None,
        categories: Mapping[str, Sequence[Any]] | None = None,
        nullable: Iterable[str] | None = None,
        dtypes: Mapping[str, str] | None = None,
        missing_values: Sequence[str] = (),
        clip: bool = False,
        max_categories: int = 100,
        unsafe_public_categories: bool = False,
        derived: Mapping[str, str] | None = None,
        other: str | None = None,
    ) -> "Schema":
        """Build a schema for the columns of ``df``.

        Nothing is read off the values of ``df`` unless
        ``unsafe_public_categories`` is set: a column's kind follows the
        public rule :func:`column_kind` (bounded: numeric; else
        categorical), and its domain and output type follow the public
        options.  A column pandas holds as numbers (or, read by synthdp from a CSV as text, whose every value
        reads as a number) that has neither bounds
        nor a categorical declaration is refused (the owner is asked to
        declare one), before any private step.

        Parameters
        ----------
        df : the table.
        categorical : columns to treat as categorical even if numeric (e.g. a
            small integer code).
        bounds : public ``(lo, hi)`` of numeric columns, which are binned.
            Numeric columns need bounds or must be declared categorical.
        bins : number of equal-width bins per bounded column.
        cuts : public cut points per bounded column (cells ``[lo, c_1), ..., [c_k, hi]``).
        datetimes : datetime columns, as a list of names or ``{name: strptime format or None}``:
            numeric columns of timestamps (bounds as dates, e.g. ``("2020-01-01", "2024-12-31")``)
            written back as datetimes (docs/privacy.md §10.3); the format is their precision and
            written form (:attr:`Attribute.date_unit`). Bounds written as dates (text, ``Timestamp``,
            ``datetime``) and a datetime dtype in ``dtypes`` (its zone too) declare a datetime column too; a
            ``datetime64`` column of ``df`` declares nothing (docs/privacy.md §10.1).
        learn_bounds : numeric columns without public bounds whose bounds are learned privately
            (docs/privacy.md §10.4, needs a delta), as a list or ``{name: dtype}`` (``"int64"`` or
            ``"float64"``; ``None`` or a list: the type ``dtypes`` or ``datetimes`` declares, else reals, with an
            :class:`UntypedWarning`); their cells are learned by PrivTree.
        decimals : public number of decimals per float column: synthetic values are rounded to it; declared
            decimals make the column real whatever its bounds.
        discretise : the cells of a bounded column given neither ``bins`` nor
            ``cuts``: ``"equal-width"`` (default here) takes :data:`DEFAULT_BINS`
            equal-width bins; ``"privtree"`` (the default of
            :func:`synthdp.generate_synthetic`) learns them privately
            (origin ``"learn"``, docs/privacy.md §10.3).
        categories : public category lists; these columns are categorical and
            their values are not read off the data.
        nullable : columns with public categories or bounds, or categories to learn with an ``other``
            label, that get a ``"<missing>"`` value.
        dtypes : public output dtype per column (pandas names such as
            ``"int64"``, ``"float64"``, ``"bool"``, ``"str"``, ``"category"``, ``"datetime64[ns]"``,
            ``"datetime64[ns, Europe/Paris]"``).
            Default (docs/privacy.md §10.1): from the public categories (:func:`values_dtype`), declared
            decimals (real), the bounds as written (:func:`public_dtype`); text for a learned domain -- never
            from the dtypes of ``df``, which pandas infers from the rows (where they disagree with the
            declarations, an :class:`~synthdp.core.owner.OwnerWarning` says so).
        missing_values : extra tokens meaning "missing" (e.g. ``["?"]``).
        clip : clamp out-of-bounds numeric values instead of raising at encoding.
        max_categories : largest number of categories read off the data
            (``unsafe_public_categories`` only).
        unsafe_public_categories : read the categories of categorical columns
            without public ones off the data. This publishes which values
            occur (an ID, a rare name) and is **not** differentially private;
            a :class:`PrivacyWarning` says so. Default: such columns get the
            origin ``"learn"`` and their domains are learned privately by
            partition selection (docs/privacy.md §9).
        derived : columns that are public functions of others, ``{name: "date.year"}`` or ``{name: "a - b"}``
            (:mod:`synthdp.core.derived`): left out of the schema's attributes, whether or not ``df`` has them, and
            computed after sampling (docs/privacy.md §10.10).
        other : a public label for the values of a column whose categories are learned that partition selection
            did not keep: they are encoded as this label (:attr:`Attribute.other`, the last category) instead of
            the missing value, which such a column then has only when ``nullable`` names it.
        """
        if not isinstance(df, pd.DataFrame):
            raise SchemaError(f"expected a pandas DataFrame, got {type(df).__name__}")
        declared = parse_derived(derived)
        df = df.drop(columns=[c for c in df.columns if str(c) in {d.name for d in declared}])
        if df.empty:
            raise SchemaError(f"the DataFrame is empty (shape {df.shape}); a schema needs at least one row and column")
        columns = [str(c) for c in df.columns]
        if len(set(columns)) != len(columns):
            raise SchemaError(f"duplicate column names {sorted({c for c in columns if columns.count(c) > 1})}")
        categorical = set(categorical or ())
        bounds, bins, categories = dict(bounds or {}), dict(bins or {}), dict(categories or {})
        cuts = dict(cuts or {})
        datetimes = dict(datetimes) if isinstance(datetimes, Mapping) else dict.fromkeys(datetimes or ())
        decimals = dict(decimals or {})
        learn_bounds = dict(learn_bounds) if isinstance(learn_bounds, Mapping) else dict.fromkeys(learn_bounds or ())
        if discretise not in ("privtree", "equal-width"):
            raise SchemaError(f"discretise must be 'privtree' or 'equal-width', got {discretise!r}")
        dtypes = dict(dtypes or {})
        nullable, missing_values = set(nullable or ()), tuple(str(t) for t in missing_values)
        for option, keys in [("categorical", categorical), ("bounds", bounds), ("bins", bins), ("cuts", cuts),
                             ("datetimes", datetimes), ("learn_bounds", learn_bounds), ("decimals", decimals),
                             ("categories", categories), ("nullable", nullable), ("dtypes", dtypes)]:
            check_known(option, sorted(keys), columns)
        for option, keys in [("categorical", categorical), ("categories", categories)]:
            clash = sorted(set(keys) & set(bounds))
            if clash:
                raise SchemaError(
                    f"columns {clash} are given both bounds and {option}; a column is either binned or categorical"
                )
        unbinned = sorted((set(bins) | set(cuts)) - set(bounds))
        if unbinned:
            raise SchemaError(f"bins or cuts given for {unbinned} without bounds; pass bounds={{col: (lo, hi)}} too",
                              cli=f"--bins given for {unbinned} without bounds; pass --bounds {unbinned[0]}=LO:HI too")
        both = sorted(set(bins) & set(cuts))
        if both:
            raise SchemaError(f"columns {both} are given both bins and cuts; give one of them")
        for col, dtype in dtypes.items():
            value_kind(dtype)  # a clear error for an unknown dtype name
        for col, pair in bounds.items():
            if col not in datetimes and isinstance(pair, (tuple, list)) and any(is_date_bound(b) for b in pair):
                datetimes[col] = None  # bounds written as dates declare a datetime column (§10.1)
        for col, dtype in dtypes.items():
            if is_datetime_dtype(dtype) and col not in datetimes:
                datetimes[col] = None  # so does a datetime dtype (§10.1)
        check_declarations_agree(dtypes, datetimes, learn_bounds)
        undated = sorted(set(datetimes) - set(bounds) - set(learn_bounds))
        if undated:
            raise SchemaError(f"datetime column(s) {undated} need public bounds, never read off the data: pass "
                              f"bounds={{{undated[0]!r}: ('2000-01-01', '2030-12-31')}}, declare the column "
                              f"categorical (categorical=[{undated[0]!r}]), or, with a delta, have its bounds "
                              f"learned privately (learn_bounds=[{undated[0]!r}])",
                              cli=f"datetime column(s) {undated} need public bounds, never read off the data: pass "
                                  f"--bounds {undated[0]}=2000-01-01..2030-12-31, declare the column categorical "
                                  f"(--categorical {undated[0]}), or, with --delta, have its bounds learned "
                                  f"privately (--learn-bounds {undated[0]})")
        unformatted = sorted(col for col, fmt in datetimes.items() if fmt is None)
        if unformatted:  # public: the options alone, never whether the values happen to fall at midnight
            example = unformatted[0]
            warnings.warn(f"datetime column(s) {unformatted} have no format: their values are read as ISO 8601 and "
                          f"come back as timestamps to the second; give the format (datetimes={{{example!r}: "
                          f"'%Y-%m-%d'}}, CLI --datetime {example}=%Y-%m-%d) for dates alone or another written form "
                          f"(docs/privacy.md §10.1)", UserWarning, stacklevel=user_stacklevel())
        for col in datetimes:  # the zone is declared (a tz-aware dtype, or UTC for a format with an offset)
            dtypes[col] = datetime_dtype(datetimes[col], datetime_zone(dtypes[col]) if col in dtypes else None)
        untyped = sorted(col for col in learn_bounds
                         if learn_bounds[col] is None and col not in dtypes and col not in decimals)
        if untyped:  # public: the options alone
            warnings.warn(f"column(s) {untyped} have bounds to learn and no declared type: they come back as real "
                          f"numbers; declare integers with learn_bounds={{{untyped[0]!r}: 'int64'}} or "
                          f"dtypes={{{untyped[0]!r}: 'int64'}} (CLI --learn-bounds {untyped[0]}=int64) or a real "
                          f"column's precision with decimals (docs/privacy.md §10.1)",
                          UntypedWarning, stacklevel=user_stacklevel())
        for col in learn_bounds:
            if learn_bounds[col] is None:
                learn_bounds[col] = "float64"
        for col in bounds:  # declared decimals make a column real (§10.1)
            if col not in dtypes and col in decimals:
                dtypes[col] = "float64"

        attributes, read_off, unbounded, undated_frame, numbered_dates, dated, parsed = [], [], [], [], [], [], {}
        read_as_text = bool(df.attrs.get(READ_AS_TEXT, False))
        for col, series in zip(columns, (df.iloc[:, j] for j in range(df.shape[1]))):
            if (col in learn_bounds or col in bounds) and col not in datetimes and holds_dates(series):
                numbered_dates.append(col)  # a refusal, never a kind (§10.1)
                continue
            if col in learn_bounds:
                if col in bounds or col in bins or col in cuts:
                    raise SchemaError(f"column {col!r} is in learn_bounds and also given bounds, bins or cuts; "
                                      "learn_bounds is for columns without public bounds")
                attributes.append(Attribute(col, "numeric", missing=col in nullable, clip=True, origin="learn",
                                            dtype=dtypes.get(col) or learn_bounds[col], decimals=decimals.get(col),
                                            format=datetimes.get(col)))
            elif column_kind(bounded=col in bounds) == "numeric":
                if pd.api.types.is_bool_dtype(series.dtype):
                    raise SchemaError(f"column {col!r} is boolean; declare it categorical instead of giving bounds")
                learn = col not in bins and col not in cuts and discretise == "privtree"
                col_cuts = tuple(cuts.get(col, ()))
                bin_count = 1 if learn else len(col_cuts) + 1 if col_cuts else bins.get(col, DEFAULT_BINS)
                attributes.append(Attribute(col, "numeric", bounds=tuple(bounds[col]), bins=bin_count, cuts=col_cuts,
                                            missing=col in nullable, clip=clip, origin="learn" if learn else "public",
                                            dtype=dtypes.get(col) or numeric_dtype(col, bounds[col], bin_count),
                                            format=datetimes.get(col), decimals=decimals.get(col)))
            elif col in categories:
                if any(pd.isna(c) for c in categories[col]):
                    raise SchemaError(f"categories of {col!r} contain a missing value; list only real "
                                      f"categories and declare the missing value with nullable=[{col!r}]")
                values = tuple(categories[col])
                attributes.append(Attribute(col, "categorical", categories=values, missing=col in nullable,
                                            dtype=dtypes.get(col) or values_dtype(values)))
            elif col not in categorical and holds_dates(series):
                undated_frame.append(col)  # a refusal, as for numbers below
            elif col not in categorical and reads_as_numbers(series, missing_values, read_as_text):
                # A refusal shown to the owner before any private step, never a kind: every run that goes on
                # uses the public rule above (docs/privacy.md §10.1).
                unbounded.append(col)
            else:
                if reads_as_iso_dates(series):
                    dated.append(col)  # a hint for the owner, never a kind (§10.1)
                if unsafe_public_categories:
                    labels, has_missing = observed_categories(series.rename(col), missing_values, max_categories)
                    attributes.append(Attribute(col, "categorical", categories=labels,
                                                missing=has_missing or col in nullable,
                                                dtype=dtypes.get(col) or labels_dtype(labels), origin="read-off"))
                    read_off.append(col)
                else:
                    if parsed_from_text(series, dtypes.get(col)):
                        parsed[col] = series.dtype  # text labels of values pandas parsed: a refusal (§10.1)
                    attributes.append(Attribute(col, "categorical", missing=other is None or col in nullable,
                                                dtype=dtypes.get(col), origin="learn", other=other))
        if numbered_dates:
            raise undeclared_dates_error(numbered_dates, numeric=True)
        if parsed:
            raise parsed_text_error(parsed)
        if undated_frame:
            raise undeclared_dates_error(undated_frame, numeric=False)
        if unbounded:
            example = unbounded[0]
            head = f"numeric column(s) {unbounded} have no public bounds. Bounds are never read off the private data"
            raise SchemaError(
                f"{head}; pass bounds={{{example!r}: (lo, hi)}}, optionally with bins={{{example!r}: k}}, declare "
                f"the column categorical (categorical=[{example!r}]), or, with a delta, have its bounds learned "
                f"privately (learn_bounds=[{example!r}]; docs/privacy.md §10.4).",
                cli=f"{head}; pass --bounds {example}=LO:HI, optionally with --bins {example}=K, declare the "
                    f"column categorical (--categorical {example}), or, with --delta, have its bounds learned "
                    f"privately (--learn-bounds {example}).")
        if read_off:
            warnings.warn(
                f"NOT DIFFERENTIALLY PRIVATE: the categories of columns {read_off} were read off the private data "
                f"(unsafe_public_categories), which publishes every value that occurs, even one held by a single "
                f"record. Give public categories (categories={{{read_off[0]!r}: [...], ...}} or a schema file), "
                f"or leave them out to learn the domains privately by partition selection.",
                PrivacyWarning,
                stacklevel=user_stacklevel(),
            )
        disagreements = [text for j, attr in enumerate(attributes)  # one attribute per column, in order
                         if (text := dtype_disagreement(attr, df.iloc[:, j]))]
        if disagreements:  # read off the frame: for the owner only, and nothing above depends on it (§10.1)
            owner_warning("the DataFrame's dtypes do not type a release, the declarations do (docs/privacy.md "
                          "§10.1); " + "; ".join(disagreements))
        for col in dated:  # read off the frame: for the owner only, and nothing above depends on it (§10.1)
            owner_warning(f"column {col!r} holds ISO dates as text, and nothing declares it a date column: it is "
                          "taken as categories, each date one category"
                          + ("; " if unsafe_public_categories else " (most too rare to be learned); ")
                          + iso_dates_hint(col, df[col]))
        schema = cls(tuple(attributes), missing_values, declared)
        logger.debug("schema from DataFrame: %d columns, to learn: %s", len(schema), list(schema.to_learn))
        return schema

    @classmethod
    def from_domain_file(cls, path: str | os.PathLike) -> "Schema":
        """A schema of coded attributes from a private-pgm domain file ``{"attr": size}``.

        Values are already the integer codes ``0..size-1``; labels are the codes.
        """
        return cls._from_sizes(read_json(path), path)

    @classmethod
    def _from_sizes(cls, data: Any, source: str | os.PathLike) -> "Schema":
        if not isinstance(data, dict) or not data:
            raise SchemaError(f"{source}: a domain file must be a non-empty JSON object {{attribute: size}}")
        bad = [k for k, v in data.items() if isinstance(v, bool) or not isinstance(v, int) or v < 1]
        if bad:
            raise SchemaError(f"{source}: sizes of {bad} are not positive integers")
        return cls(tuple(
            Attribute(name, "categorical", categories=tuple(map(str, range(size))), dtype="int64", coded=True)
            for name, size in data.items()
        ))

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready description (see :meth:`from_dict`)."""
        return {
            "format": SCHEMA_FORMAT,
            "version": SCHEMA_VERSION,
            "missing_values": list(self.missing_values),
            "attributes": [a.to_dict() for a in self.attributes],
            **({"derived": {d.name: d.expression for d in self.derived}} if self.derived else {}),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Schema":
        """Inverse of :meth:`to_dict`."""
        if not isinstance(data, Mapping) or data.get("format") != SCHEMA_FORMAT:
            raise SchemaError(f"not a synthdp schema (expected \"format\": \"{SCHEMA_FORMAT}\")")
        if data.get("version") != SCHEMA_VERSION:
            raise SchemaError(f"schema version {data.get('version')!r} is not supported (expected {SCHEMA_VERSION})")
        if DRAFT_KEY in data:
            parts = [f"{e.get('column')} ({', '.join(e.get('read', []))})" for e in data[DRAFT_KEY] if isinstance(e, dict)]
            raise SchemaError(f"the schema is a draft: these parts were read off the data: {'; '.join(parts) or '-'}. "
                              f"Replace them with public values, then delete the {DRAFT_KEY!r} entry")
        unknown = sorted(set(data) - {"format", "version", "missing_values", "attributes", "derived"})
        if unknown:
            raise SchemaError(f"schema has unknown keys {unknown}")
        attributes = tuple(Attribute.from_dict(a) for a in data.get("attributes", ()))
        return cls(attributes, tuple(data.get("missing_values", ())), parse_derived(data.get("derived")))

    def to_json(self) -> str:
        """The schema as JSON text."""
        return json.dumps(self.to_dict(), indent=2)

    @classmethod
    def from_json(cls, text: str) -> "Schema":
        """The schema from JSON text written by :meth:`to_json`."""
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"schema is not valid JSON: {exc}") from None
        return cls.from_dict(data)

    def save(self, path: str | os.PathLike) -> None:
        """Write the schema atomically (:func:`write_atomically`)."""
        write_atomically(path, self.to_json() + "\n")

    @classmethod
    def load(cls, path: str | os.PathLike) -> "Schema":
        """Read a schema file written by :meth:`save`, or a private-pgm domain file ``{"attr": size}``."""
        data = read_json(path)
        if isinstance(data, dict) and "format" not in data:
            return cls._from_sizes(data, path)
        try:
            return cls.from_dict(data)
        except SchemaError as exc:
            raise SchemaError(f"{path}: {exc}") from None


def resolve_schema(df: pd.DataFrame, schema, collected: list[str], **options):
    """The given schema (object or file), or one built from ``df`` with the public ``options``.

    Warnings raised while building (e.g. categories read off the private
    data) are re-emitted and collected for the report, except the owner's
    (:class:`~synthdp.core.owner.OwnerWarning`, read off the private frame:
    docs/privacy.md §10.8), which are only re-emitted.
    """
    if schema is not None:
        return schema if isinstance(schema, Schema) else Schema.load(schema)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        built = Schema.from_dataframe(df, **options)
    for w in caught:
        if not issubclass(w.category, OwnerWarning):
            collected.append(str(w.message))
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return built


def write_atomically(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` to ``path`` atomically: a temporary file in the same directory, then ``os.replace``, so that
    a failure leaves no file half-written and an existing one untouched."""
    path = Path(path)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def read_json(path: str | os.PathLike) -> Any:
    """Parse a JSON file; a missing file or invalid JSON is an :class:`InputError` naming it."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"file {str(path)!r} does not exist") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path} is not valid JSON: {exc}") from None
