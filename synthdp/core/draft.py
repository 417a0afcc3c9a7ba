"""A draft schema for the data owner to review (``synthdp schema IN.csv -o schema.json``).

The private path is a schema whose every value set is public.  Writing one
by hand is tedious, so this module drafts one from the data and says which
parts it read off them: the category lists of categorical columns, the
bounds of numeric columns (their minimum and maximum) and whether a column
has missing values.  Those parts reveal individual records' values; the
owner must replace them with public knowledge (a code book, legal ranges),
then delete the ``"_read_off_data"`` list.  :meth:`Schema.load` refuses a
draft that still has it, so a draft cannot be used by accident.

Drafting is not a private step: nothing of it is released, and it spends no
budget.
"""

from __future__ import annotations

import json
import math
import os
import warnings
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

import numpy as np
import pandas as pd
from pandas.tseries.api import guess_datetime_format

from synthdp.core.errors import SchemaError
from synthdp.core.options import refusing_unknown_keywords
from synthdp.core.owner import OwnerWarning
from synthdp.core.schema import (DEFAULT_BINS, DRAFT_KEY, SCHEMA_FORMAT, SCHEMA_VERSION, Schema, UntypedWarning,
                                 category_label, datetime_dtype, format_unit, frame_date_dtype, frame_zone, holds_dates,
                                 value_kind, write_atomically)

__all__ = ["DRAFT_KEY", "SchemaDraft", "draft_document", "draft_schema"]


def _is_number(series: pd.Series) -> bool:
    return pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series.dtype)


def _drafted_bounds(series: pd.Series) -> tuple[tuple[float, float], int]:
    """Minimum and maximum of a numeric column (widened when equal) and a bin count that fits them."""
    values = series.dropna()
    lo, hi = float(values.min()), float(values.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    integer = value_kind(str(series.dtype)) == "int" or bool(np.all(np.mod(values, 1) == 0))
    bins = min(DEFAULT_BINS, int(hi - lo) + 1) if integer else DEFAULT_BINS
    if integer:
        lo, hi = math.floor(lo), math.ceil(hi)
    return (lo, hi), max(bins, 1)


def _as_given(series: pd.Series, discretise: str, *, missing: bool, clip: bool, **options) -> dict[str, Any]:
    """The attribute :meth:`Schema.from_dataframe` builds for ``series`` from ``options`` (what the flags build):
    a drafted column is written exactly as the same values given publicly would be."""
    name = str(series.name)
    built = Schema.from_dataframe(series.to_frame(name), discretise=discretise, nullable=[name] if missing else [],
                                  clip=clip, **options)
    return built.attributes[0].to_dict()


def _drafted_numeric(series: pd.Series, discretise: str, *, missing: bool, clip: bool,
                     decimals: int | None, dtype: str | None = None) -> dict[str, Any]:
    """A numeric column whose bounds are read off the data, with the cells ``discretise`` gives a bounded column.

    Under ``"privtree"`` (the default of generate) its cells are left to be learned (origin ``"learn"``), as for a
    column with public bounds: a reviewed draft then gives the run the options would, and a point mass (the zeros
    of an amount, 40 hours a week) keeps a cell of its own instead of being spread over an equal-width bin.
    """
    name = str(series.name)
    col_bounds, default_bins = _drafted_bounds(series)
    bins = 1 if discretise == "privtree" else default_bins
    dtype = dtype or _numeric_dtype(col_bounds, bins, series)
    if decimals is None and dtype == "float64":
        decimals = _drafted_decimals(series)
    return _as_given(series, discretise, missing=missing, clip=clip, bounds={name: col_bounds},
                     bins={} if discretise == "privtree" else {name: bins}, dtypes={name: dtype},
                     decimals={} if decimals is None else {name: decimals})


#: The most decimals a drafted real column is given (read off: the fewest that write every value exactly).
MAX_DRAFTED_DECIMALS = 6


def _drafted_decimals(series: pd.Series) -> int | None:
    """The fewest decimals (at most :data:`MAX_DRAFTED_DECIMALS`) that write every value of a real column exactly
    (2 for amounts of money), or None: read off the data, so that a point mass such as 0.00 comes back as itself."""
    values = series.dropna().to_numpy(dtype=np.float64)
    return next((k for k in range(MAX_DRAFTED_DECIMALS + 1) if np.array_equal(np.round(values, k), values)), None)


def _one_date_format(text: pd.Series) -> tuple[str | None, pd.Series | None]:
    """The first format pandas guesses from the first value (month first, then day first) that reads every value,
    and the dates; ``(None, None)`` when none does."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # pandas warns on an ambiguous day-first guess: both are tried
        guesses = dict.fromkeys(guess_datetime_format(text.iloc[0], dayfirst=first) for first in (False, True))
    for fmt in (g for g in guesses if g is not None):
        dates = _read_as(text, fmt)
        if dates is not None:
            return fmt, dates
    return None, None


def _read_as(text: pd.Series, fmt: str) -> pd.Series | None:
    """The dates ``fmt`` reads off every value of ``text``, or None when it cannot read one of them."""
    try:
        return pd.to_datetime(text, format=fmt)
    except (ValueError, TypeError, OverflowError):
        return None


def _date_bounds(parsed: pd.Series, fmt: str | None) -> tuple[pd.Timestamp, pd.Timestamp]:
    """The first and last date, rounded outwards to whole units of the precision ``fmt`` writes (one unit apart
    when they are equal), never widened further (docs/privacy.md §10.1)."""
    unit = pd.Timedelta(seconds=format_unit(fmt))
    lo, hi = parsed.min().floor(unit), parsed.max().ceil(unit)
    return lo, (hi if hi > lo else lo + unit)


def _drafted_datetime(series: pd.Series, discretise: str, max_categories: int, *, missing: bool,
                      clip: bool) -> dict[str, Any] | None:
    """A text column with more distinct values than ``max_categories`` whose every value reads as a date in the
    format its first value suggests: a datetime column of that format (``--datetime COL=FORMAT``) with its first
    and last date read off as bounds; else None.

    Only where a category list would be refused: a column of a few dates may be meant as labels.
    """
    values = series.dropna()
    if _is_number(series) or values.nunique() <= max_categories:
        return None
    text = values.astype(str)
    fmt, parsed = _one_date_format(text)
    if fmt is None:
        return None
    fmt, zone = _kept_as_written(fmt, text, parsed)
    lo, hi = _date_bounds(parsed, fmt)
    name = str(series.name)
    return _as_given(series, discretise, missing=missing, clip=clip, datetimes={name: fmt},
                     bounds={name: (lo.strftime(fmt), hi.strftime(fmt))},
                     dtypes={} if zone is None else {name: datetime_dtype(fmt, zone)})


#: Time-of-day directives but the hour, and the literals they read at midnight (the hour: "00", or "0").
_MIDNIGHT = {"%M": "00", "%S": "00", "%f": "000000"}


def _kept_as_written(fmt: str, text: pd.Series, parsed: pd.Series) -> tuple[str, str | None]:
    """``fmt`` with what every value writes alike kept as a literal, and the column's zone if that fixes it: a
    time of day that is always midnight (the column then comes back as whole days, docs/privacy.md §10.1, not
    with times drawn inside each day; not with other offsets, whose midnights are not UTC's, nor where a literal
    would not read every value, e.g. milliseconds written ``.000``) and an offset always written ``Z`` (it comes
    back ``Z``, in UTC, not ``+0000``).  A draft reads the data, and says so; the reviewed format is what the run
    uses."""
    zone = None
    if fmt.endswith("%z") and text.str.endswith("Z").all():
        fmt, zone = fmt[: -len("%z")] + "Z", "UTC"
    wall_clock = not any(d in fmt for d in ("%I", "%p", "%z", "%Z"))  # midnight read on the written clock only
    if wall_clock and bool((parsed == parsed.dt.normalize()).all()):
        for hour in ("00", "0"):
            midnight = fmt.replace("%H", hour)
            for directive, written in _MIDNIGHT.items():
                midnight = midnight.replace(directive, written)
            if _read_as(text, midnight) is not None:
                return midnight, zone
    return fmt, zone


def _drafted_typed_datetime(series: pd.Series, discretise: str, *, missing: bool, clip: bool) -> dict[str, Any]:
    """A ``datetime64`` column of the frame drafted as a date column (its kind and zone read off the frame's dtype,
    which never types a run, docs/privacy.md §10.1: the reviewed draft does): whole days when every value is at
    midnight on a naive clock (written ``%Y-%m-%d``), else whole seconds, with its first and last date read off as
    bounds, written as dates."""
    name = str(series.name)
    series = _as_datetimes(series)
    fmt = _typed_date_format(series)
    lo, hi = _date_bounds(series.dropna(), fmt)
    written = (lo.strftime(fmt), hi.strftime(fmt)) if fmt else (lo.isoformat(), hi.isoformat())
    return _as_given(series, discretise, missing=missing, clip=clip, bounds={name: written},
                     datetimes={name: fmt}, dtypes={name: frame_date_dtype(series.dtype)})


def _as_datetimes(series: pd.Series) -> pd.Series:
    """A column the frame holds as dates (numpy, Arrow or Python objects) as pandas' ``datetime64``, in its zone."""
    if isinstance(series.dtype, pd.ArrowDtype):
        return series.astype(frame_date_dtype(series.dtype))
    return series if pd.api.types.is_datetime64_any_dtype(series.dtype) else pd.to_datetime(series)


def _typed_date_format(series: pd.Series) -> str | None:
    """The format a draft gives a ``datetime64`` column: ``%Y-%m-%d`` when every value is a naive midnight,
    ``%Y-%m-%d %H:%M:%S`` for other naive times, none (ISO 8601 with its offset) for a tz-aware column."""
    if frame_zone(series.dtype) is not None:
        return None
    present = series.dropna()
    return "%Y-%m-%d" if bool((present == present.dt.normalize()).all()) else "%Y-%m-%d %H:%M:%S"


def _typed_dates(series: pd.Series) -> bool:
    """Whether the frame holds ``series`` as dates (:func:`~synthdp.core.schema.holds_dates`), one at least."""
    return holds_dates(series) and bool(series.notna().any())


def _label_dtype(series: pd.Series) -> str | None:
    """The type a draft gives a categorical column to learn that the frame holds as booleans or numbers (its labels
    then read in that type, so that ``001`` and 1 are one value, docs/privacy.md §10.1); None for text and dates."""
    values = pd.Series(series.dtype.categories) if isinstance(series.dtype, pd.CategoricalDtype) else series
    held = pd.api.types.infer_dtype(values, skipna=True)  # numpy, Arrow or Python objects (a bool with a blank)
    return {"boolean": "bool", "integer": "int64", "floating": "float64", "mixed-integer-float": "float64",
            "decimal": "float64"}.get(held)


def _read_dtypes(df: pd.DataFrame, *, bounded: Iterable[str], to_learn: Iterable[str],
                 declared: Mapping[str, Any]) -> dict[str, str]:
    """The dtypes a draft reads off ``df`` for the columns the options make numeric but leave untyped (listed as
    read off: never the run's typing until reviewed, docs/privacy.md §10.1): a date column for ``datetime64``; for
    bounded columns, reals where a value has a fraction; for columns with bounds to learn, integers where every
    value is whole."""
    out: dict[str, str] = {}
    for col in [*bounded, *to_learn]:
        series = df[col]
        if col in declared:
            continue
        if _typed_dates(series):
            out[col] = frame_date_dtype(series.dtype)
        elif _is_number(series) and series.notna().any():
            whole = bool(np.all(np.mod(series.dropna().to_numpy(np.float64), 1) == 0))
            if whole != (col in bounded):  # reals under bounds, integers to learn: what the options would not say
                out[col] = "float64" if col in bounded else "int64"
    return out


def _categories(series: pd.Series) -> list[str]:
    """The labels of the values of ``series``, sorted."""
    uniques = list(pd.unique(series.dropna()))
    try:
        uniques.sort()
    except TypeError:
        uniques.sort(key=category_label)
    return [category_label(u) for u in uniques]


def _over_cap_error(over: dict[str, int], numeric: set[str], max_categories: int) -> SchemaError:
    """One refusal naming every column with more distinct values than ``max_categories``, with advice that fits
    each column's kind (bounds for numbers, dropping or learning for text)."""
    lines = []
    for col, count in over.items():
        advice = (f"give it public bounds (--bounds {col}=LO:HI) or have them learned (--learn-bounds {col}) instead "
                  "of --categorical" if col in numeric else
                  f"leave it out (--drop {col}: an ID column says nothing a synthetic table can keep), learn its "
                  f"categories privately (--learn-categories {col}: values held by few rows come back missing), "
                  "or group its values into fewer")
        lines.append(f"column {col!r} has {count} distinct values: {advice}")
    return SchemaError(f"{len(over)} column(s) have more distinct values than --max-categories {max_categories} "
                       "(or raise it):\n  " + "\n  ".join(lines))


def _numeric_dtype(bounds: tuple[float, float], bins: int, series: pd.Series | None) -> str:
    """``int64`` when the column holds whole numbers and each bin holds one; else ``float64``."""
    whole = series is None or bool(np.all(np.mod(series.dropna(), 1) == 0))
    lo, hi = bounds
    if whole and float(lo).is_integer() and float(hi).is_integer():
        edges = np.linspace(lo, hi, bins + 1)
        first, last = np.ceil(edges[:-1]), np.ceil(edges[1:]) - 1
        last[-1] = np.floor(edges[-1])
        if (first <= last).all():
            return "int64"
    return "float64"


@refusing_unknown_keywords
def draft_document(df: pd.DataFrame, *, categorical: Iterable[str] | None = None,
                   bounds: Mapping[str, tuple[Any, Any]] | None = None, bins: Mapping[str, int] | None = None,
                   cuts: Mapping[str, Iterable[float]] | None = None,
                   datetimes: Mapping[str, str | None] | Iterable[str] | None = None,
                   learn_bounds: Mapping[str, str] | Iterable[str] | None = None,
                   decimals: Mapping[str, int] | None = None, dtypes: Mapping[str, str] | None = None,
                   discretise: str = "privtree",
                   nullable: Iterable[str] | None = None, clip: bool = False, max_categories: int = 100,
                   missing_values: Iterable[str] = (), learn_categories: Iterable[str] | None = None,
                   typed_labels: bool = False, other: str | None = None) -> dict[str, Any]:
    """A schema dictionary (the :meth:`Schema.to_dict` format) drafted from ``df``, marked as a draft when anything
    was read off the data.

    What the caller gives (``categorical``, ``bounds``, ``bins``, ``cuts``,
    ``datetimes``, ``learn_bounds``, ``decimals``, ``dtypes``, ``discretise``, ``nullable``) is public and
    kept as given: a column with public bounds gets the attribute that
    :meth:`Schema.from_dataframe` builds from the same options (so the
    reviewed file gives the same run as the options), e.g. cells still to be
    learned by PrivTree (origin ``"learn"``) unless ``bins`` or ``cuts`` fix
    them; a numeric column whose bounds are read off gets the same cells
    (:func:`_drafted_numeric`). Everything else is read off ``df`` and listed under
    :data:`DRAFT_KEY` as ``{"column": ..., "read": [...]}`` with
    ``"categories"``, ``"bounds"``, ``"decimals"`` (a real column's values all written with that many),
    ``"kind (datetime)"`` (a text column of dates in one format, :func:`_drafted_datetime`, or a ``datetime64``
    column of the frame), ``"dtype"`` (a column with public bounds made real, or one whose bounds are to be learned
    made integer or a date column, by its values, :func:`_read_dtypes`) and/or ``"missing"``.  The frame's dtypes
    never type a run (docs/privacy.md §10.1): the reviewed draft writes each type out.

    ``learn_bounds`` may hold ``"all"`` (mapped to a dtype): every column of numbers without public bounds, cells,
    a datetime format, ``categorical`` or ``learn_categories``.  A column more than ``max_categories`` values
    would be drafted from is refused, all such columns in one message.

    ``learn_categories`` (public; ``["all"]``: every column not numeric by the options above, nor a column of
    numbers or of dates, which is drafted with bounds to review instead, unless ``categorical``) names categorical
    columns whose categories are left to be learned privately (origin ``"learn"``, text, with the missing
    value, docs/privacy.md §9, §10.5): nothing of them is read off, and the file serves the Dask engine too;
    ``other`` is their public label for the values partition selection will not keep (``"other"`` in the file),
    and such a column has the missing value only where ``nullable`` or the data (read off) say so.
    With ``typed_labels`` (the frame itself is the run's input, :func:`draft_schema`), such a column the frame holds
    as booleans or numbers is typed so (listed as read off): learned as text, its labels would be the values pandas
    parsed (docs/privacy.md §10.1); a CSV that synthdp reads holds every field as text and needs no type.
    """
    if discretise not in ("privtree", "equal-width"):
        raise SchemaError(f"discretise must be 'privtree' or 'equal-width', got {discretise!r}")
    columns = [str(c) for c in df.columns]
    categorical, nullable, learn = set(categorical or ()), set(nullable or ()), set(learn_categories or ())
    bounds, bins, cuts, decimals = dict(bounds or {}), dict(bins or {}), dict(cuts or {}), dict(decimals or {})
    dtypes = dict(dtypes or {})
    datetimes = dict(datetimes) if isinstance(datetimes, Mapping) else dict.fromkeys(datetimes or ())
    learn_bounds = dict(learn_bounds) if isinstance(learn_bounds, Mapping) else dict.fromkeys(learn_bounds or ())
    for option, keys in [("--categorical", categorical), ("--bounds", bounds), ("--bins", bins), ("--cuts", cuts),
                         ("--datetime", datetimes), ("--learn-bounds", set(learn_bounds) - {"all"}),
                         ("--decimals", decimals), ("--dtype", dtypes), ("--nullable", nullable),
                         ("--learn-categories", learn - {"all"})]:
        unknown = sorted(set(keys) - set(columns))
        if unknown:
            raise SchemaError(f"{option} names unknown column(s) {unknown}; the table has columns {columns}")
    missing = {col: col in nullable or bool(df[col].isna().any()) for col in columns}
    # the draft reads types off the data for the owner's review: "all" never turns a column of numbers into text
    numbers = {c for c in columns if c not in categorical and _is_number(df[c])}
    if "all" in learn_bounds:
        dtype = learn_bounds.pop("all")
        given_kind = set(bounds) | set(bins) | set(cuts) | set(datetimes) | (learn - {"all"})
        learn_bounds = {**{c: dtype for c in columns if c in numbers and c not in given_kind}, **learn_bounds}
    public = [c for c in columns if c in bounds or c in bins or c in cuts or c in datetimes or c in learn_bounds]
    text_dates: dict[str, dict[str, Any] | None] = {}

    def as_text_dates(col: str) -> dict[str, Any] | None:
        """The column drafted as text of dates (:func:`_drafted_datetime`), parsed once whichever step asks first."""
        if col not in text_dates:
            text_dates[col] = _drafted_datetime(df[col].rename(col), discretise, max_categories, missing=missing[col],
                                                clip=clip)
        return text_dates[col]

    if "all" in learn:  # a column of dates, like one of numbers, is drafted with bounds to review instead
        learn = {c for c in set(columns) - set(public) - numbers
                 if c in categorical or not (_typed_dates(df[c]) or as_text_dates(c) is not None)}
    clash = sorted(learn & set(public))
    if clash:
        raise SchemaError(f"--learn-categories names {clash}, which --bounds, --bins, --cuts, --datetime or "
                          "--learn-bounds make numeric; learn a categorical column's categories, or drop its bounds")
    def build(frame: pd.DataFrame, typed: Mapping[str, str]) -> dict[str, dict[str, Any]]:
        with warnings.catch_warnings():  # the draft writes each type out, listed for review when read off the values
            warnings.simplefilter("ignore", UntypedWarning)
            warnings.simplefilter("ignore", OwnerWarning)
            return {a.name: a.to_dict() for a in Schema.from_dataframe(
                frame, bounds={c: bounds[c] for c in public if c in bounds}, bins=bins, cuts=cuts,
                datetimes=datetimes, learn_bounds=learn_bounds,
                decimals={c: k for c, k in decimals.items() if c in public},
                dtypes={c: t for c, t in typed.items() if c in public}, discretise=discretise,
                nullable=[c for c in public if missing[c]], clip=clip).attributes} if public else {}

    # the types the options leave open are read off the values (the frame's dtypes, never a run's typing): listed
    # as read off, unless the options alone type the column the same (docs/privacy.md §10.1)
    read_types = _read_dtypes(df, bounded=[c for c in public if c in bounds],
                              to_learn=[c for c in public if c in learn_bounds and learn_bounds[c] is None],
                              declared={**dtypes, **datetimes, **decimals})
    given = build(df[public], {**read_types, **dtypes})
    untyped = build(df[public].astype(object), dtypes)
    attributes, read_off, over = [], [], {}
    for col in columns:
        series = df[col].rename(col)
        read = ["missing"] if missing[col] and col not in nullable else []
        if col in given:
            attributes.append(given[col])
            if given[col]["dtype"] != untyped[col]["dtype"]:  # typed by the values: under review, with its precision
                read.append("dtype")
                if given[col]["dtype"] == "float64" and col not in decimals \
                        and (places := _drafted_decimals(series)) is not None:
                    given[col]["decimals"] = places
                    read.append("decimals")
            elif col in learn_bounds and given[col]["dtype"] == "float64" and col not in decimals \
                    and (places := _drafted_decimals(series)) is not None:
                if places == 0:  # whole numbers that a missing value made pandas read as reals
                    given[col]["dtype"] = "int64"
                    read.append("dtype")
                else:  # reals written to a few places (a price in cents), as a column with bounds is drafted
                    given[col]["decimals"] = places
                    read.append("decimals")
        elif col in learn:  # public: the owner asks for them to be learned; only the type may be read off
            if col in decimals:
                raise SchemaError(f"--decimals names column {col!r}, which is categorical; give decimals only for "
                                  "numeric columns")
            dtype = dtypes.get(col) or (_label_dtype(series) if typed_labels else None)
            attributes.append({"name": col, "kind": "categorical", "missing": other is None or missing[col],
                               "dtype": dtype, "origin": "learn", **({} if other is None else {"other": other})})
            read = ["dtype"] if dtype is not None and col not in dtypes else []
            if other is not None and missing[col] and col not in nullable:  # the other label holds the unkept
                read.append("missing")  # values: the column is missing only where the data are (read off)
        elif col not in categorical and _typed_dates(series):
            attributes.append(_drafted_typed_datetime(series, discretise, missing=missing[col], clip=clip))
            read[:0] = ["kind (datetime)", "bounds"]
        elif col not in categorical and _is_number(series) and series.notna().any():
            attributes.append(_drafted_numeric(series, discretise, missing=missing[col], clip=clip,
                                               decimals=decimals.get(col), dtype=dtypes.get(col)))
            read[:0] = ["bounds"] + (["decimals"] if col not in decimals and "decimals" in attributes[-1] else [])
        elif col not in categorical and (dated := as_text_dates(col)) is not None:
            read.insert(0, "bounds")
            read.insert(0, "kind (datetime)")
            attributes.append(dated)
        else:
            if col in decimals:
                raise SchemaError(f"--decimals names column {col!r}, which is categorical; give decimals only for "
                                  "numeric columns")
            labels = _categories(series)
            if len(labels) > max_categories:  # every such column named in one refusal, after the loop
                over[col] = len(labels)
                continue
            read.insert(0, "categories")
            if col in dtypes:
                dtype = dtypes[col]
            elif pd.api.types.is_bool_dtype(series.dtype):
                dtype = "bool"
            else:
                whole = _is_number(series) and all(lab.lstrip("-").isdigit() for lab in labels)
                dtype = "int64" if whole else None
            attributes.append({"name": col, "kind": "categorical", "categories": labels, "missing": missing[col],
                               "dtype": dtype})
        if read:
            read_off.append({"column": col, "read": read})
    if over:
        raise _over_cap_error(over, {c for c in over if _is_number(df[c])}, max_categories)
    out = {"format": SCHEMA_FORMAT, "version": SCHEMA_VERSION, "missing_values": list(missing_values),
           "attributes": attributes}
    Schema.from_dict(out)  # a draft must be a valid schema once its marker is removed
    if read_off:  # nothing read off: a schema of public choices only, ready to use
        out[DRAFT_KEY] = read_off
    return out


@dataclass(frozen=True)
class SchemaDraft:
    """A schema drafted from a DataFrame, for its owner to review before it types a run (:func:`draft_schema`).

    ``document`` is the schema file's content (:meth:`Schema.to_dict`), with the list of what was read off the
    data under :data:`DRAFT_KEY`.  ``str(draft)`` is that list as a review; :meth:`save` writes the file to edit by
    hand (as ``synthdp schema`` does; :meth:`Schema.load` refuses it until the list is deleted); :meth:`reviewed`
    is the owner saying that every part read off is public knowledge (a code book, legal ranges), and gives the
    schema to pass as ``schema=``.
    """

    document: dict[str, Any]

    @property
    def read_off(self) -> list[dict[str, Any]]:
        """What was read off the data, by column: ``{"column": ..., "read": ["bounds", "dtype", ...]}``."""
        return list(self.document.get(DRAFT_KEY, []))

    def __str__(self) -> str:
        attributes = {a["name"]: a for a in self.document["attributes"]}
        lines = [f"schema draft: {len(attributes)} columns"]
        if not self.read_off:
            return lines[0] + "; nothing was read off the data: ready to use (draft.reviewed())"
        lines.append("read off the data (replace with public knowledge, then draft.reviewed() or draft.save(path)):")
        for entry in self.read_off:
            attr = attributes[entry["column"]]
            shown = {key: attr[key] for key in ("bounds", "categories", "dtype", "decimals", "format", "missing")
                     if key in attr and (key in entry["read"] or key == "dtype"
                                         or (key == "format" and "kind (datetime)" in entry["read"]))}
            if "categories" in shown and len(shown["categories"]) > 8:
                shown["categories"] = [*shown["categories"][:8], f"... ({len(attr['categories'])} in all)"]
            lines.append(f"  {entry['column']}: {', '.join(entry['read'])} -> {shown}")
        return "\n".join(lines)

    def save(self, path: str | os.PathLike) -> None:
        """Write the draft as a schema file (atomically), its read-off list kept for the owner to review."""
        write_atomically(path, json.dumps(self.document, indent=2) + "\n")

    def reviewed(self) -> Schema:
        """The schema, once its owner has reviewed every part read off the data and takes it as public."""
        return Schema.from_dict(self._unmarked())

    def _unmarked(self) -> dict[str, Any]:
        return {key: value for key, value in self.document.items() if key != DRAFT_KEY}


def draft_schema(df: pd.DataFrame, **options: Any) -> SchemaDraft:
    """Draft a schema from ``df`` for its owner to review: every column's kind, type (integers, reals and their
    decimals, dates, their format and zone), bounds and categories, those read off the values listed as such.

    The Python form of ``synthdp schema``; ``options`` are :func:`draft_document`'s (public declarations, kept as
    given).  A run never types a column by the DataFrame's dtypes, which pandas infers from the rows
    (docs/privacy.md §10.1): the reviewed draft does, in one call and one review::

        draft = synthdp.draft_schema(df)
        print(draft)                       # what was read off the data
        result = synthdp.generate_synthetic(df, schema=draft.reviewed(), epsilon=1.0, delta=1e-9)

    Drafting is not a private step: nothing of it is released and it spends nothing; but what it reads off (a
    minimum, a rare category) is the data's, so use the parts read off only where they are public knowledge.
    """
    if not isinstance(df, pd.DataFrame):
        raise SchemaError(f"draft_schema drafts from a pandas DataFrame, got {type(df).__name__}; for a CSV file "
                          "use the command line: synthdp schema FILE.csv -o schema.json")
    return SchemaDraft(draft_document(df, **options, typed_labels=True))
