"""How :meth:`synthdp.core.schema.Schema.from_dataframe` types a DataFrame's columns from the declarations.

A pandas dtype is a function of the values, so it never types a release (docs/privacy.md §10.1); these rules
check the declarations against the frame (:func:`dtype_disagreement`, :func:`parsed_from_text`), tell dates
held as text apart (:func:`reads_as_iso_dates`, :func:`holds_dates`), and build the errors that say which
declaration is missing. Only the unsafe opt-in reads categories off the data (:func:`observed_categories`).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pandas as pd

from synthdp.core.attribute import (
    Attribute,
    category_label,
    datetime_dtype,
    is_datetime_dtype,
    public_dtype,
    value_kind,
)
from synthdp.core.errors import SchemaError


def _is_number_dtype(dtype: Any) -> bool:
    """Numeric and not boolean."""
    return pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)


#: ``DataFrame.attrs`` key set by synthdp's CSV readers, which read every field as text (docs/privacy.md §10.1).
READ_AS_TEXT = "synthdp_read_as_text"


def reads_as_numbers(series: pd.Series, missing_values: Sequence[str], read_as_text: bool) -> bool:
    """Whether the owner is asked to bound the column or declare it categorical: it holds numbers, or (a CSV read
    as text, docs/privacy.md §10.1) text whose every present value reads as a number.  A refusal shown before
    any private step, never a kind (§10.1).  Text in a DataFrame the owner built is text: their choice."""
    if _is_number_dtype(series.dtype):
        return True
    if series.dtype == object and pd.api.types.infer_dtype(series, skipna=True) in (
            "integer", "floating", "mixed-integer-float", "decimal"):  # numbers held as objects (a null in Parquet)
        return True
    if not read_as_text or (series.dtype != object and not pd.api.types.is_string_dtype(series.dtype)):
        return False
    present = series.dropna()
    present = present[~present.astype(str).isin(missing_values)]
    return not present.empty and bool(pd.to_numeric(present, errors="coerce").notna().all())


def check_declarations_agree(dtypes: Mapping[str, str], datetimes: Mapping[str, Any],
                              learn_bounds: Mapping[str, str | None]) -> None:
    """Refuse two declarations of one column's type that differ, naming both (public inputs only): a date column
    (by ``datetimes`` or bounds written as dates) given a dtype that is not a date's, or a dtype of ``learn_bounds``
    other than the one ``dtypes`` gives."""
    for col, dtype in dtypes.items():
        if col in datetimes and not is_datetime_dtype(dtype):
            raise SchemaError(f"column {col!r} is declared a date column (datetimes, or bounds written as dates) but "
                              f"dtypes gives it {dtype!r}; declare one type (dtypes={{{col!r}: 'datetime64[ns]'}}, or "
                              f"numbers for bounds to make it a number column)")
        if learn_bounds.get(col) not in (None, dtype):
            raise SchemaError(f"column {col!r} is given dtype {learn_bounds[col]!r} by learn_bounds and {dtype!r} by "
                              f"dtypes; declare its type once")


def undeclared_dates_error(columns: list[str], *, numeric: bool) -> SchemaError:
    """The refusal of ``datetime64`` columns of a DataFrame that no declaration makes date columns (docs/privacy.md
    §10.1: the frame's dtype is inferred from the rows, so it never declares a type); ``numeric``: they are given
    bounds that are numbers, or bounds to learn."""
    example = columns[0]
    head = (f"column(s) {columns} hold dates in the DataFrame (a datetime dtype, or date objects), but " +
            ("their bounds are numbers or to be learned" if numeric else "nothing declares them"))
    return SchemaError(
        f"{head}: a DataFrame's dtype never types a column; declare date columns with bounds written as dates "
        f"(bounds={{{example!r}: ('2000-01-01', '2030-12-31')}}), datetimes={{{example!r}: '%Y-%m-%d'}} or "
        f"dtypes={{{example!r}: 'datetime64[ns]'}}, or declare the column categorical (categorical=[{example!r}])",
        cli=f"{head}: declare date columns with --bounds {example}=2000-01-01..2030-12-31 or --datetime "
            f"{example}=%Y-%m-%d, or declare the column categorical (--categorical {example})")


def holds_dates(series: pd.Series) -> bool:
    """Whether a DataFrame holds ``series`` as dates: a datetime dtype (numpy ``datetime64``, tz-aware or not, or
    Arrow ``timestamp``/``date32``/``date64``) or Python date and datetime objects.  Read for refusals and the
    owner's warnings only, never for a type (docs/privacy.md §10.1)."""
    if pd.api.types.is_datetime64_any_dtype(series.dtype):
        return True
    return series.dtype == object and pd.api.types.infer_dtype(series, skipna=True) in ("datetime", "datetime64",
                                                                                           "date")


#: An ISO 8601 date, with or without a time of day and an offset, as text (``2020-01-31``, ``2020-01-31T08:15:00Z``).
ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?)?(Z|[+-]\d{2}:?\d{2})?")


def reads_as_iso_dates(series: pd.Series) -> bool:
    """Whether every present value of a text column is an ISO 8601 date (``2020-01-31``, with or without a time).

    Read for the owner's hints and the owner-side evaluation only, never for a run's type (docs/privacy.md §10.1):
    such a column is text until a declaration makes it dates.  The first value is tried first, so that a column of
    other text costs one match.
    """
    if series.dtype != object and not pd.api.types.is_string_dtype(series.dtype):
        return False
    values = series.dropna()
    if values.empty or not isinstance(values.iloc[0], str) or not ISO_DATE.fullmatch(values.iloc[0]):
        return False
    distinct = pd.Series(values.unique())
    if not all(isinstance(v, str) and ISO_DATE.fullmatch(v) for v in distinct):
        return False
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return bool(pd.to_datetime(distinct, format="ISO8601", errors="coerce", utc=True).notna().all())
        except (ValueError, TypeError):  # e.g. dates with and without an offset
            return False


def iso_dates_hint(column: str, series: pd.Series) -> str:
    """How to declare a text column of ISO dates a date column (Python, then the command line), and the draft that
    types it for review."""
    fmt = "%Y-%m-%d" if len(str(series.dropna().iloc[0])) == 10 else None
    python = f"datetimes={{{column!r}: {fmt!r}}}" if fmt else f"datetimes=[{column!r}]"
    cli = f"--datetime {column}" + (f"={fmt}" if fmt else "") + f" with --bounds or --learn-bounds {column}"
    return (f"declare it a date column ({python} with bounds written as dates, bounds={{{column!r}: ('2000-01-01', "
            f"'2030-12-31')}}, or learned, learn_bounds=[{column!r}]; CLI {cli}), or draft a typed schema to review "
            "with synthdp.draft_schema(df) (CLI synthdp schema)")


def frame_zone(dtype: Any) -> str | None:
    """The time zone of a frame's tz-aware datetime dtype (numpy-backed or Arrow), else None."""
    zone = getattr(dtype, "tz", None) or getattr(getattr(dtype, "pyarrow_dtype", None), "tz", None)
    return None if zone is None else str(zone)


def frame_date_dtype(dtype: Any) -> str:
    """pandas' own datetime dtype for a frame's date dtype (Arrow ``timestamp`` or ``date32`` included): naive, or
    in the frame's zone."""
    return datetime_dtype(None, frame_zone(dtype))


def _frame_kind(series: pd.Series) -> str | None:
    """What a DataFrame's dtype says a column holds: ``"int"``, ``"float"``, ``"bool"``, ``"datetime"`` (naive) or
    ``"datetime, ZONE"`` (a ``category`` column: what its categories hold); None for text and other objects (which
    say nothing of a type)."""
    dtype = series.dtype
    if isinstance(dtype, pd.CategoricalDtype):  # what its categories hold
        return _frame_kind(pd.Series(dtype.categories))
    if holds_dates(series):
        zone = frame_zone(dtype)
        return "datetime" if zone is None else f"datetime, {zone}"
    if pd.api.types.is_bool_dtype(dtype):
        return "bool"
    if pd.api.types.is_integer_dtype(dtype):
        return "int"
    return "float" if pd.api.types.is_float_dtype(dtype) else None


def _declared_kind(attr: "Attribute") -> str | None:
    """The type the declarations give ``attr``, in the terms of :func:`_frame_kind`; None while it is still to be
    learned (a categorical column without a dtype takes its released labels' type)."""
    if attr.is_datetime:
        zone = attr.time_zone
        return "datetime" if zone is None else f"datetime, {zone}"
    kind = value_kind(attr.dtype)
    return None if kind == "other" else kind


def dtype_disagreement(attr: "Attribute", series: pd.Series) -> str | None:
    """For the owner only: how the frame's dtype of ``series`` disagrees with the type ``attr`` declares, and the
    declaration that would match it; None when they agree, when either says nothing, or when the frame holds whole
    numbers as reals because some are missing (pandas' rule, which the declaration matches)."""
    frame, declared = _frame_kind(series), _declared_kind(attr)
    if frame is None or declared is None or frame == declared:
        return None
    if frame == "float" and declared == "int" and series.hasnans:
        return None
    if frame.startswith("datetime"):
        match = f"datetime64[ns, {frame.split(', ')[1]}]" if ", " in frame else "datetime64[ns]"
    else:
        match = {"int": "int64", "float": "float64", "bool": "bool"}[frame]
    return (f"column {attr.name!r} is {series.dtype} in the DataFrame, but its declarations make it "
            f"{_KIND_WORDS.get(declared, declared.replace('datetime, ', 'dates in '))} ({attr.dtype}); if the "
            f"DataFrame's type is right, declare dtypes={{{attr.name!r}: {match!r}}} (CLI --dtype {attr.name}={match})")


#: How :func:`dtype_disagreement` names a type.
_KIND_WORDS = {"int": "whole numbers", "float": "real numbers", "bool": "booleans", "datetime": "naive dates"}


def parsed_from_text(series: pd.Series, dtype: str | None) -> bool:
    """Whether a categorical column of public ``dtype`` would be labelled with values pandas parsed from text: its
    labels are text (no dtype, or a text one) and the frame holds ``series`` as numbers, booleans or dates, or
    holds any value that is not text among Python objects (a boolean column with a blank field, a chunked read's
    mixed column, Parquet integers with a null, files whose types differ joined as objects).  A refusal, never a
    type (docs/privacy.md §10.1)."""
    return value_kind(dtype) == "other" and (_frame_kind(series) is not None or _holds_objects_not_text(series))


def _holds_objects_not_text(series: pd.Series) -> bool:
    """Whether ``series`` (or its categories) is held as Python objects of which one present value is not text."""
    values = pd.Series(series.dtype.categories) if isinstance(series.dtype, pd.CategoricalDtype) else series
    return values.dtype == object and pd.api.types.infer_dtype(values, skipna=True) not in ("string", "empty")


def parsed_text_error(columns: dict[str, Any]) -> SchemaError:
    """The refusal of categorical columns whose labels are text (no declared type, or a text one) that the
    DataFrame holds as numbers, booleans, dates or objects not all text (:func:`parsed_from_text`; ``columns``:
    their frame dtypes): pandas parsed those values from
    text, and one odd row of a file stops it for every row, so their labels would not be a function of each value
    alone (docs/privacy.md §10.1)."""
    example = next(iter(columns))
    held = ", ".join(f"{c!r} {d}" for c, d in columns.items())
    head = (f"categorical column(s) {list(columns)} have text labels (no declared type, or a text one), but the "
            f"DataFrame holds them as numbers, booleans or dates, or as objects not all text ({held}): pandas parsed "
            f"them from text ('001' becomes 1, 'true' becomes True), and one odd row of a file stops that for every "
            f"row, changing every label")
    return SchemaError(
        f"{head}; declare the column's type (dtypes={{{example!r}: 'int64'}}, 'float64' or 'bool': '001' and 1 are "
        f"then one value; dates as a date column, with bounds written as dates), read the file as text "
        f"(pd.read_csv(..., dtype=str)) or give its path to synthdp, which reads every field as text "
        f"(docs/privacy.md §10.1)",
        cli=f"{head}; declare the column's type (--dtype {example}=int64)")


def check_known(option: str, keys: Iterable[str], columns: Sequence[str]) -> None:
    """Raise when an option names columns the DataFrame does not have."""
    unknown = [k for k in keys if k not in columns]
    if unknown:
        raise SchemaError(f"{option} names unknown column(s) {unknown}; the DataFrame has columns {list(columns)}")


def observed_categories(
    series: pd.Series, missing_values: Sequence[str], max_categories: int
) -> tuple[tuple[str, ...], bool]:
    """Category labels occurring in ``series`` (sorted) and whether a missing value occurs."""
    if isinstance(series.dtype, pd.CategoricalDtype):
        uniques = list(series.cat.categories)
    else:
        uniques = list(pd.unique(series.dropna()))
        try:
            uniques.sort()
        except TypeError:
            uniques.sort(key=category_label)
    labels = [category_label(u) for u in uniques]
    present = [lab for lab in labels if lab not in missing_values]
    if len(present) > max_categories:
        head = f"column {series.name!r} has {len(present)} distinct values, more than max_categories={max_categories}"
        if reads_as_iso_dates(series):
            raise SchemaError(f"{head}, all ISO dates: {iso_dates_hint(str(series.name), series)}")
        raise SchemaError(
            f"{head}: a column where nearly every row has its own value (an ID, a name) says nothing a "
            f"synthetic table can keep, so leave it out (drop the column; CLI --drop {series.name}); otherwise "
            "group its values into public categories, give it numeric bounds if it holds numbers, or raise "
            "max_categories"
        )
    has_missing = bool(series.isna().any()) or len(present) < len(labels)
    return tuple(present), has_missing


def numeric_dtype(column: str, bounds: tuple[float, float], bins: int) -> str:
    """:func:`public_dtype` of a bounded column, with bound/bin errors left to :class:`Attribute`."""
    try:
        return public_dtype((bounds[0], bounds[1]), int(bins))
    except (TypeError, ValueError, IndexError):
        return "float64"
