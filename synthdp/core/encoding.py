"""Turn DataFrames into integer codes under a public :class:`~synthdp.core.schema.Schema`, and back.

Encoding validates every value against the schema and never widens it: a
value outside the declared domain is an error naming column, row (0-based
position) and value, because silently adding it would make the domain depend
on the private data. Columns of the DataFrame that the schema does not list
are ignored with a ``UserWarning`` (a schema may deliberately leave out, say,
an ID column; ignoring columns uses less of the data, never more).

A column whose domain was learned by partition selection (origin
``"learned"``, docs/privacy.md §9) is the one exception: there every value
that was not released is encoded as the column's missing value, the
"other" of section 9, so nothing after encoding sees it.
:func:`category_counts` gives partition selection its input, with the labels
encoding uses.

Decoding is post-processing of a (synthetic) code matrix: it restores the
column names and order, and gives each column the schema's public dtype;
numeric columns come back either as their bin label or as a value drawn
uniformly inside the bin.
"""

from __future__ import annotations

import logging
import warnings
from typing import Any, Literal, Mapping

import numpy as np
import pandas as pd

from synthdp.core.arrowtext import arrow_text
from synthdp.core.data import AggregatedData
from synthdp.core.derived import add_derived
from synthdp.core.domain import Domain
from synthdp.core.errors import InputError, SchemaError
from synthdp.core.schema import (Attribute, Schema, category_label, frame_date_dtype, holds_dates, reads_zone,
                                 typed_label, value_kind)

__all__ = ["Encoder", "bound_text", "category_counts", "check_column", "first_missing", "number_column",
           "numeric_values", "refuse_missing", "written_form"]

logger = logging.getLogger(__name__)

_UNKNOWN = -2  # code placeholder of a value outside the declared categories
_MISSING = -1  # code placeholder of a missing value


class Encoder:
    """Encode DataFrames to ``(n, len(schema))`` int64 codes and decode codes to DataFrames.

    Parameters
    ----------
    schema : the public schema; its attribute order is the code column order.
    """

    def __init__(self, schema: Schema) -> None:
        if not isinstance(schema, Schema):
            raise InputError(f"Encoder needs a Schema, got {type(schema).__name__}")
        if schema.to_learn:
            raise SchemaError(
                f"the categories of columns {list(schema.to_learn)} are not known yet; learn them privately "
                f"(synthdp.mechanisms.partition.learn_domains), give them publicly (categories={{col: [...]}} or "
                f"a schema file), or opt in to reading them off the data (unsafe_public_categories=True, "
                f"not differentially private)"
            )
        if schema.to_discretise:
            raise SchemaError(
                f"the cells of numeric columns {list(schema.to_discretise)} are not known yet; learn them privately "
                f"(synthdp.mechanisms.privtree, docs/privacy.md §10.3), or give bins={{col: k}} or cuts={{col: [...]}}"
            )
        self.schema = schema

    @property
    def domain(self) -> Domain:
        """Domain of the codes."""
        return self.schema.domain

    def encode(self, df: pd.DataFrame) -> np.ndarray:
        """Codes of the rows of ``df``, one column per schema attribute (int64)."""
        if not isinstance(df, pd.DataFrame):
            raise InputError(f"expected a pandas DataFrame, got {type(df).__name__}")
        by_name = {str(c): c for c in df.columns}
        absent = [n for n in self.schema.names if n not in by_name]
        if absent:
            raise SchemaError(f"columns {absent} of the schema are missing from the data, which has {list(by_name)}")
        derived = {d.name for d in self.schema.derived}  # declared: never read (docs/privacy.md §10.10)
        extra = [n for n in by_name if n not in self.schema.names and n not in derived]
        if extra:
            warnings.warn(f"ignoring columns {extra}, which are not in the schema", UserWarning, stacklevel=2)
        codes = np.empty((len(df), len(self.schema)), dtype=np.int64)
        for j, attr in enumerate(self.schema.attributes):
            codes[:, j] = _encode_column(attr, df[by_name[attr.name]], self.schema.missing_values)
        refuse_missing({attr.name: _first_missing_code(codes[:, j]) for j, attr in enumerate(self.schema.attributes)})
        logger.debug("PRIVATE, do not publish: encoded %d rows x %d columns", *codes.shape)  # n is private
        return codes

    def to_aggregated(self, df: pd.DataFrame) -> AggregatedData:
        """Encode ``df`` and aggregate it into distinct rows with counts."""
        return AggregatedData.from_codes(self.domain, self.encode(df))

    def decode(
        self,
        codes: np.ndarray,
        *,
        numeric: Literal["label", "uniform"] = "label",
        rng: np.random.Generator | None = None,
        positions: Mapping[int, np.ndarray] | None = None,
    ) -> pd.DataFrame:
        """A DataFrame with the schema's columns, in order, from a code matrix.

        Every column gets the schema's public dtype (:attr:`Attribute.dtype`:
        bool, integer, float, text or category; integer and bool columns that
        may be missing become pandas' nullable ``Int64``/``boolean``); missing
        values become NaN/None/NA.
        Numeric columns become their bin label (``numeric="label"``) or a value
        drawn uniformly inside the bin (``numeric="uniform"``, an integer for
        integer columns), which needs an explicit ``rng`` (a point cell, docs/privacy.md
        §11.2, gives its value); ``positions`` gives, for some columns (by
        index), where each row's value lies inside its bin instead (a share of
        the bin in [0, 1], docs/privacy.md §8.12). This randomness is
        post-processing and does not affect privacy.  The schema's derived columns are then computed from the
        decoded ones (docs/privacy.md §10.10).
        """
        codes = self.domain.check_codes(codes)
        if numeric not in ("label", "uniform"):
            raise InputError(f"numeric must be 'label' or 'uniform', got {numeric!r}")
        check_derived_output(self.schema, numeric)
        if numeric == "uniform" and not isinstance(rng, np.random.Generator):
            raise InputError("numeric='uniform' draws values inside bins; pass rng=np.random.default_rng(seed)")
        columns = {}
        for j, attr in enumerate(self.schema.attributes):
            if attr.kind == "categorical":
                columns[attr.name] = _decode_categorical(attr, codes[:, j])
            elif numeric == "label":
                columns[attr.name] = _decode_labels(attr, codes[:, j])
            else:
                columns[attr.name] = _decode_uniform(attr, codes[:, j], rng, (positions or {}).get(j))
        return add_derived(pd.DataFrame(columns, columns=list(self.schema.names)), self.schema.derived)


def check_derived_output(schema: Schema, numeric: str) -> None:
    """Refuse derived columns when numeric columns come back as cell labels, which have no year and no sum
    (public inputs only: checked before a run's first private step, docs/privacy.md §10.10)."""
    if schema.derived and numeric != "uniform":
        names = [d.name for d in schema.derived]
        raise InputError(f"derived columns {names} are computed from decoded values, and numeric={numeric!r} "
                         "writes cell labels: use numeric='uniform' (CLI --numeric uniform), or drop the derived "
                         "columns")


def _value(series: pd.Series, row: int) -> Any:
    """The value at position ``row`` for a message: a numpy scalar as the Python value (``120``, not
    ``np.int64(120)``)."""
    value = series.iloc[row]
    return value.item() if isinstance(value, np.generic) else value


def bound_text(attr: Attribute, bound: float) -> str:
    """A bound as the user wrote it: an instant in ISO 8601 (UTC) for a datetime column, else the number."""
    return pd.Timestamp(bound, unit="s", tz="UTC").isoformat() if attr.is_datetime else f"{bound:.15g}"


def _first(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def _encode_column(attr: Attribute, series: pd.Series, missing_values: tuple[str, ...]) -> np.ndarray:
    """Codes of one column; placeholders are resolved into the missing code or an error, except a missing value
    where the column has no missing code, which stays the placeholder for :func:`refuse_missing` to name with every
    other such column."""
    if attr.kind == "numeric":
        codes = _encode_numeric(attr, series, missing_values)
    elif attr.coded and pd.api.types.is_integer_dtype(series.dtype) and not series.hasnans:
        codes = series.to_numpy(dtype=np.int64)
        codes = np.where((codes < 0) | (codes >= attr.size), _UNKNOWN, codes)
    else:
        codes = _encode_categorical(attr, series, missing_values)
    if attr.other is not None:  # values outside the categories: the public other label (docs/privacy.md §9)
        codes[codes == _UNKNOWN] = attr.code_of[attr.other]
    elif attr.origin == "learned":  # values partition selection did not release: missing (docs/privacy.md §9)
        codes[codes == _UNKNOWN] = _MISSING
    unknown = codes == _UNKNOWN
    if unknown.any():
        row = _first(unknown)
        shown = list(attr.categories[:10]) + (["..."] if len(attr.categories) > 10 else [])
        head = (f"value {_value(series, row)!r} in row {row}, column {attr.name!r} is outside its declared domain "
                f"{shown}")
        raise SchemaError(
            f"{head}; add it to the column's public categories (categories={{{attr.name!r}: [...]}} or the "
            f"schema file), or clean the data",
            cli=f"{head}; add it to the column's categories in the schema file (--schema), or clean the data")
    if attr.missing_code is not None:
        codes[codes == _MISSING] = attr.missing_code
    return codes


def _first_missing_code(codes: np.ndarray) -> int | None:
    """The first row whose code is the missing placeholder (a missing value where none is declared), or None."""
    missing = codes == _MISSING
    return _first(missing) if missing.any() else None


def refuse_missing(first_rows: Mapping[str, int | None]) -> None:
    """Refuse, in one message, every column that holds a missing value but has no missing category, each with its
    first such row (``first_rows``: column name to row, None where there is none), so that one run names them all."""
    rows = {name: row for name, row in first_rows.items() if row is not None}
    if not rows:
        return
    names = list(rows)
    if len(rows) == 1:
        head = (f"column {names[0]!r} has a missing value in row {rows[names[0]]}, but its schema has no missing "
                "category; declare it with")
    else:
        where = ", ".join(f"{name!r} (row {row})" for name, row in rows.items())
        head = (f"columns {where} have missing values, but their schema has no missing category; declare them "
                "with")
    raise SchemaError(
        f"{head} nullable={names!r} (or \"missing\": true in the schema file), or fill the missing values.",
        cli=f"{head} --nullable {' '.join(names)} (or \"missing\": true in the --schema file), or fill the missing "
            "values.")


def check_column(attr: Attribute, series: pd.Series, missing_values: tuple[str, ...] = ()) -> int | None:
    """Refuse, naming the row, a value of a column with a public domain that encoding would refuse (a value
    outside its categories or bounds, text in a numeric column, a fraction in an integer column); return the first
    row holding a missing value where none is declared (None: no such row), which the caller refuses with every
    other such column (:func:`refuse_missing`).  Costs nothing: it reads the values against public inputs only
    (docs/privacy.md §10.8).
    """
    return _first_missing_code(_encode_column(attr, series, tuple(str(t) for t in missing_values)))


def first_missing(attr: Attribute, series: pd.Series, missing_values: tuple[str, ...] = ()) -> int | None:
    """The first row of a column that is missing (NA or a missing token), or None: a numeric column's, or a text
    column's whose categories are to be learned (its labels are not read yet), read as encoding will read it (a
    text column's value is missing when its label in the public dtype is a token: ``-01`` or ``-1.0`` is the token
    ``-1`` of an integer column)."""
    missing_values = tuple(str(t) for t in missing_values)
    if attr.kind == "categorical":
        positions, labels = _distinct_labels(series, missing_values, value_kind(attr.dtype))
        missing = np.array([label is None for label in labels] + [True])[positions]  # last slot: NA sentinel -1
    else:
        missing = _numeric_missing(series, missing_values)
    return _first(missing) if missing.any() else None


def _distinct_labels(series: pd.Series, missing_values: tuple[str, ...],
                     kind: str = "other") -> tuple[np.ndarray, list[str | None]]:
    """Each row's index into the distinct values, and each distinct value's label (``None``: missing).

    A label is :func:`~synthdp.core.schema.typed_label` of the value in the
    column's public type ``kind``: a function of the value alone.  A value is
    missing when its text or its label is a missing token (``-01`` is the
    token ``-1`` of an integer column).  The last index, ``-1``, is pandas'
    missing-value sentinel.
    """
    if series.dtype == object and pd.api.types.infer_dtype(series, skipna=True) not in ("string", "empty"):
        # values of several types, or Decimals: factorize would merge True with 1 (they compare equal) and
        # keep whichever came first; their labels keep them apart, and typed_label reads a label as its value
        series = series.map(category_label, na_action="ignore")
    positions, uniques = pd.factorize(series, use_na_sentinel=True)
    labels = [typed_label(value, kind) for value in uniques]
    return positions, [None if label in missing_values or category_label(value) in missing_values else label
                       for value, label in zip(uniques, labels)]


def _encode_categorical(attr: Attribute, series: pd.Series, missing_values: tuple[str, ...]) -> np.ndarray:
    """Codes via the labels of the distinct values (one dict lookup per distinct value)."""
    positions, labels = _distinct_labels(series, missing_values, value_kind(attr.dtype))
    lookup = np.full(len(labels) + 1, _MISSING, dtype=np.int64)  # last slot: NA sentinel -1
    for k, label in enumerate(labels):
        if label is not None:
            lookup[k] = attr.code_of.get(label, _UNKNOWN)
    return lookup[positions]


def category_counts(series: pd.Series, missing_values: tuple[str, ...] = (), kind: str = "other") -> dict[str, int]:
    """How many rows hold each label of ``series`` (in the column's public type ``kind``, :func:`_distinct_labels`);
    missing entries are left out.

    The input of partition selection (docs/privacy.md §9): the labels are
    those :class:`Encoder` matches against categories, so a released label
    encodes its rows and every other row becomes missing.  The column keeps
    its declared type, so the same labels encode the counted rows.
    """
    positions, labels = _distinct_labels(series, tuple(str(t) for t in missing_values), kind)
    per_value = np.bincount(positions[positions >= 0], minlength=len(labels))
    counts: dict[str, int] = {}
    for label, count in zip(labels, per_value.tolist()):
        if label is not None:
            counts[label] = counts.get(label, 0) + count
    return counts


def _bin_label_codes(attr: Attribute, series: pd.Series, missing: np.ndarray) -> np.ndarray | None:
    """Codes of a numeric column written as bin labels (synthdp's own ``numeric="label"`` output), else None.

    Looked up per distinct value; a column of numbers is told apart by its first value that is not missing,
    before the column is factorized (a column of bin labels has no other value)."""
    code_of = {label: code for code, label in enumerate(attr.labels)}
    kept = ~missing
    if kept.any() and code_of.get(series.iloc[int(kept.argmax())]) is None:
        return None
    positions, uniques = pd.factorize(series, use_na_sentinel=True)
    lookup = np.full(len(uniques) + 1, _MISSING, dtype=np.int64)  # last slot: NA sentinel -1
    present = np.zeros(len(uniques) + 1, dtype=bool)
    present[np.unique(positions[~missing])] = True
    for k, value in enumerate(uniques):
        if present[k]:
            code = code_of.get(value)
            if code is None:
                return None
            lookup[k] = code
    out = lookup[positions]
    out[missing] = _MISSING
    return out


def _numbers(series: pd.Series, missing: np.ndarray) -> np.ndarray:
    """Each entry as a float (NaN where not a number; an entry marked ``missing`` may be read or not); text is
    parsed once per distinct value, or in one pass when it is held by Arrow and every entry that is not
    ``missing`` is a whole number (:func:`_whole_numbers`)."""
    if pd.api.types.is_numeric_dtype(series.dtype) and not pd.api.types.is_bool_dtype(series.dtype):
        return pd.to_numeric(series, errors="coerce").to_numpy(dtype=np.float64, na_value=np.nan)
    whole = _whole_numbers(series, missing)
    if whole is not None:
        return whole
    positions, uniques = pd.factorize(series, use_na_sentinel=True)
    parsed = pd.to_numeric(pd.Series(np.asarray(uniques, dtype=object)), errors="coerce")
    parsed = np.append(parsed.to_numpy(dtype=np.float64, na_value=np.nan), np.nan)  # last slot: NA sentinel -1
    return parsed[positions]


def _whole_numbers(series: pd.Series, missing: np.ndarray) -> np.ndarray | None:
    """The entries of a text column held by Arrow as floats (NaN where ``missing``), when every other entry is a
    whole number of at most 2**53 in magnitude written in ASCII digits after at most one minus sign; else None.

    pandas reads such a text as the integer it spells, and so does Arrow's cast to int64 (whose other forms,
    such as ``0x1f``, fail the digits check); up to 2**53 the integer is exactly a float. One cast replaces
    factorizing the column, which costs most on a column of many distinct numbers (a CSV's numeric columns,
    read as text: docs/privacy.md §10.1). The cast comes first, as it stops at a text it cannot read (a decimal
    point); the digits are then checked on the text as it is, and only where that finds a sign, without it.
    """
    text = arrow_text(series)
    if text is None:
        return None
    import pyarrow as pa
    import pyarrow.compute as pc

    if missing.any():
        text = pc.if_else(pa.array(missing), pa.scalar(None, text.type), text)
    try:  # Arrow's safe cast to floats refuses an integer beyond 2**53 in magnitude
        floats = pc.cast(pc.cast(text, pa.int64()), pa.float64())
    except pa.ArrowInvalid:
        return None
    digits = (pc.all(pc.ascii_is_decimal(text)).as_py()
              or pc.all(pc.ascii_is_decimal(pc.utf8_ltrim(text, characters="-"))).as_py())
    if not digits:
        return None  # Arrow also reads hexadecimal; an all-missing column is left to the distinct values
    return floats.to_numpy(zero_copy_only=False)


def _encode_numeric(attr: Attribute, series: pd.Series, missing_values: tuple[str, ...]) -> np.ndarray:
    """Bin codes of a numeric column; out-of-bounds values raise unless the attribute clips.

    A column of bin labels (as synthdp writes with ``numeric="label"``) is
    read back as those bins, so a synthetic table can be re-encoded.
    """
    missing = _numeric_missing(series, missing_values)
    if not pd.api.types.is_numeric_dtype(series.dtype):
        labelled = _bin_label_codes(attr, series, missing)
        if labelled is not None:
            return labelled
    values = _checked_values(attr, series, missing)
    codes = np.searchsorted(attr.edges[1:-1], values, side="right").astype(np.int64)
    codes[missing] = _MISSING
    return codes


def _numeric_missing(series: pd.Series, missing_values: tuple[str, ...]) -> np.ndarray:
    """Which entries of a numeric column are missing: NA, or a missing-value token in a text column."""
    missing = series.isna().to_numpy(copy=True)
    if missing_values and not pd.api.types.is_numeric_dtype(series.dtype):
        missing |= series.astype(str).isin(missing_values).to_numpy()
    return missing


def numeric_values(attr: Attribute, series: pd.Series, missing_values: tuple[str, ...] = ()) -> np.ndarray:
    """The non-missing values of a numeric column as floats inside its bounds (clipped, or refused as in encoding;
    as they are while the bounds are still to be learned).

    The input of PrivTree (docs/privacy.md §10.3): the same checks and the
    same clipping as :class:`Encoder`, so the tree sees what encoding will.
    """
    values = number_column(attr, series, missing_values)
    return values[~np.isnan(values)]


def number_column(attr: Attribute, series: pd.Series, missing_values: tuple[str, ...] = (), *,
                  bounded: bool = True) -> np.ndarray:
    """Every value of a numeric column as a float, NaN where missing, read and checked as encoding reads them
    (seconds since 1970 for a datetime column); clipped into the bounds or refused outside them as encoding does,
    or, ``bounded=False``, as they are (what a comparison with the real values needs)."""
    missing = _numeric_missing(series, tuple(str(t) for t in missing_values))
    return _checked_values(attr, series, missing) if bounded else _read_values(attr, series, missing)


def _checked_values(attr: Attribute, series: pd.Series, missing: np.ndarray) -> np.ndarray:
    """Floats of a numeric column (NaN where missing; :func:`_read_values`), clipped into the bounds or refused
    outside them."""
    values = _read_values(attr, series, missing)
    if attr.bounds is None:  # still to be learned (docs/privacy.md §10.4): clipped once they are
        return values
    lo, hi = attr.bounds
    outside = (values < lo) | (values > hi)
    if outside.any():
        if not attr.clip:
            row = _first(outside)
            head = (f"value {_value(series, row)!r} in row {row}, column {attr.name!r} is outside its public "
                    f"bounds [{bound_text(attr, lo)}, {bound_text(attr, hi)}]; widen the bounds")
            raise SchemaError(f"{head} or pass clip=True to clamp values into them",
                              cli=f"{head} (in a schema file, the attribute's \"bounds\") or clamp values into them "
                                  f"(--clip, or \"clip\": true in the schema file)")
        values = np.clip(values, lo, hi)
    return values


def _read_values(attr: Attribute, series: pd.Series, missing: np.ndarray) -> np.ndarray:
    """Floats of a numeric column (NaN where missing); a value that is not a number, or not a whole number in an
    integer column, is refused.

    A datetime column's values are parsed with its public format and become
    seconds since 1970.
    """
    if attr.is_datetime:
        values = _timestamps(attr, series, missing)
    elif holds_dates(series) or pd.api.types.is_timedelta64_dtype(series.dtype):
        row = _first(~missing) if (~missing).any() else 0
        raise SchemaError(f"value {_value(series, row)!r} in row {row}, column {attr.name!r} is a date or a duration "
                          f"({series.dtype}), but the column is a number column; declare it a date column (bounds "
                          f"written as dates, or dtype 'datetime64[ns]'), or convert it to numbers first "
                          f"(docs/privacy.md §10.1)")
    else:
        values = np.where(missing, np.nan, _numbers(series, missing))
    not_number = np.isnan(values) & ~missing
    if not_number.any() and attr.is_datetime:
        row = _first(not_number)
        raise SchemaError(f"value {_value(series, row)!r} in row {row}, datetime column {attr.name!r} cannot be read "
                          "as a date" + (f" with format {attr.format!r}" if attr.format else "") +
                          "; fix the value, give the column's format (datetimes={col: '%d/%m/%Y'}, CLI --datetime "
                          "COL=FORMAT), or declare a missing token")
    if not_number.any():
        row = _first(not_number)
        raise SchemaError(
            f"value {_value(series, row)!r} in row {row}, numeric column {attr.name!r} is not a number (the column is "
            f"numeric because its bounds are {'public' if attr.bounds else 'to be learned'}); fix or remove the "
            f"value, declare it a missing token (missing_values, CLI --missing) if it means missing, or drop the "
            f"bounds to make the column categorical"
        )
    fractional = ~np.isnan(values) & (values != np.floor(values))
    if not attr.is_datetime and value_kind(attr.dtype) == "int" and fractional.any():
        row = _first(fractional)
        head = (f"value {_value(series, row)!r} in row {row}, column {attr.name!r} is not a whole number, but its "
                f"bounds are written as integers, which declares an integer column (its synthetic values would be "
                f"whole numbers; docs/privacy.md §10.1)")
        raise SchemaError(
            f"{head}; for a real column write the bounds with a decimal point (bounds={{{attr.name!r}: (0.0, 1.0)}}), "
            f"declare its decimals (decimals={{{attr.name!r}: 2}}) or its dtype (dtypes={{{attr.name!r}: "
            f"'float64'}}), or round the column first",
            cli=f"{head}; for a real column write the bounds with a decimal point (--bounds {attr.name}=0.0:1) or "
                f"declare its decimals (--decimals {attr.name}=K), or round the column first")
    return values


def _timestamps(attr: Attribute, series: pd.Series, missing: np.ndarray) -> np.ndarray:
    """Seconds since 1970 of a datetime column (NaN where missing or unreadable).

    Text is read with the column's public format, or as ISO 8601 (how
    synthdp writes datetimes), so a synthetic table reads back.  Without a
    format only ISO 8601 is read (the rest is refused, asking for the
    format): never one format guessed from the first row, which one added
    row would change for all the others (docs/privacy.md §10.1), nor a guess
    per value, which reads ``01/02`` month first and ``13/01`` day first.
    """
    if isinstance(series.dtype, pd.ArrowDtype) and holds_dates(series):  # Arrow timestamps: as pandas' own
        series = series.astype(frame_date_dtype(series.dtype))
    present = series.where(~missing)
    try:
        utc = reads_zone(attr.format)  # every value has its offset: one instant whatever the offset it is written in
        stamps = pd.to_datetime(present, format=attr.format or "ISO8601", errors="coerce", utc=utc)
        if attr.format and (stamps.isna() & ~missing).any():
            stamps = stamps.fillna(pd.to_datetime(present, format="ISO8601", errors="coerce", utc=utc))
    except (ValueError, TypeError) as exc:  # e.g. dates with and without a time zone in one column
        raise SchemaError(f"datetime column {attr.name!r} holds dates that cannot be read together ({exc}); write "
                          "them in one form, with or without a time zone") from None
    if not isinstance(stamps.dtype, pd.DatetimeTZDtype) and attr.time_zone is not None:
        stamps = _localized(stamps, attr.time_zone)  # wall-clock times of the column's zone
    if isinstance(stamps.dtype, pd.DatetimeTZDtype):  # instants, as UTC (a tz-naive column's times are UTC)
        stamps = stamps.dt.tz_convert("UTC").dt.tz_localize(None)
    nanoseconds = stamps.to_numpy(dtype="datetime64[ns]")
    return np.where(stamps.isna().to_numpy(), np.nan, nanoseconds.astype(np.int64).astype(np.float64) / 1e9)


def _result_dtype(attr: Attribute) -> Any:
    """Dtype of a decoded column: the original one, made nullable if values may be missing."""
    if attr.dtype is None:
        return None
    if attr.dtype == "category":
        return pd.CategoricalDtype(list(attr.category_values))
    if attr.is_datetime:
        return attr.dtype
    kind = value_kind(attr.dtype)
    if attr.missing and isinstance(pd.api.types.pandas_dtype(attr.dtype), np.dtype) and kind in ("bool", "int"):
        return "boolean" if kind == "bool" else "Int64"
    return attr.dtype


def _take(values: list[Any], codes: np.ndarray, missing: bool) -> np.ndarray:
    """``values[codes]`` as an object array, with ``None`` at the missing code."""
    table = np.empty(len(values) + missing, dtype=object)
    table[: len(values)] = values
    return table[codes]


def _decode_categorical(attr: Attribute, codes: np.ndarray) -> pd.Series:
    return pd.Series(_take(list(attr.category_values), codes, attr.missing), dtype=_result_dtype(attr))


def _decode_labels(attr: Attribute, codes: np.ndarray) -> pd.Series:
    return pd.Series(_take(list(attr.labels[: attr.bins]), codes, attr.missing))


def _decode_uniform(attr: Attribute, codes: np.ndarray, rng: np.random.Generator,
                    position: np.ndarray | None = None) -> pd.Series:
    """A value drawn uniformly in each row's bin (an integer of the bin for integer columns), or at the share
    ``position`` of it."""
    present = codes != attr.missing_code if attr.missing else np.ones(codes.shape, dtype=bool)
    bins = codes[present]
    share = None if position is None else np.clip(position[present], 0.0, 1.0)
    step = attr.grid_step
    first, last = attr.grid_ranges if step is not None else (None, None)
    if step is not None and (value_kind(attr.dtype) == "int" or (first <= last).all()):
        # a grid point of the cell (the last cell holds its upper bound); a datetime schema cut between grid
        # points (written before cells kept to the grid) has cells without one and takes the branch below
        drawn = rng.integers(first[bins], last[bins] + 1) if share is None else \
            np.minimum(first[bins] + np.floor(share * (last[bins] - first[bins] + 1)).astype(np.int64), last[bins])
        drawn = drawn if step == 1.0 else drawn * step
    else:  # a draw onto the cell's upper edge goes to its lower one: a point cell [v, v+) gives v (§11.2)
        low, high = attr.edges[bins], attr.edges[bins + 1]
        drawn = rng.uniform(low, high) if share is None else low + share * (high - low)
        drawn = np.where(drawn < high, drawn, low)
    out = np.full(codes.shape, np.nan)
    out[present] = drawn
    if attr.is_datetime:  # whole units of the public precision since 1970, back to datetimes (NaT: missing)
        return _datetimes(attr, out)
    if attr.decimals is not None:  # the column's public precision, inside the bounds
        out = np.clip(np.round(out, attr.decimals), *attr.bounds)
    return pd.Series(out).astype(_result_dtype(attr) or np.float64)


def _datetimes(attr: Attribute, seconds: np.ndarray) -> pd.Series:
    """Seconds since 1970 (NaN: missing) as the column's datetimes, cut to whole units of its public precision
    (:attr:`~synthdp.core.schema.Attribute.date_unit`) on its own clock (a day starts at midnight in its zone),
    tz-aware in that zone when the column is (docs/privacy.md §10.1)."""
    stamps = pd.Series(pd.to_datetime(seconds, unit="s"))
    zone = attr.time_zone
    if zone is not None:
        stamps = stamps.dt.tz_localize("UTC").dt.tz_convert(zone).dt.tz_localize(None)
    stamps = stamps.dt.floor(pd.Timedelta(seconds=attr.date_unit))
    if zone is not None:
        stamps = _localized(stamps, zone)
    return stamps.astype(attr.dtype)


def _localized(wall: pd.Series, zone: str) -> pd.Series:
    """Wall-clock times as times of ``zone``: one met twice (autumn) is the later, one skipped (spring) the next
    valid time; never missing."""
    return wall.dt.tz_localize(zone, ambiguous=np.zeros(len(wall), dtype=bool), nonexistent="shift_forward")


def written_form(df: pd.DataFrame, schema: Schema) -> pd.DataFrame:
    """``df`` as a CSV file writes it: each datetime column of ``schema`` with a public format as text in that format
    (its written form: a literal ``Z``, an offset, dates without a time; missing stays missing); the rest as is.

    Post-processing of a decoded table (docs/privacy.md §10.1)."""
    formatted = {a.name: a.format for a in schema.attributes if a.is_datetime and a.format and a.name in df.columns}
    if not formatted:
        return df
    out = df.copy()
    for name, fmt in formatted.items():
        column = pd.to_datetime(out[name])
        out[name] = column.dt.strftime(fmt).where(column.notna(), None)
    return out
