"""The public schema of a table: which values each column may take, and how.

A differentially private release protects the rows of a table, not its
domain: the set of values every column may take must be *public*, fixed
before the private data are looked at. A :class:`Schema` is that public
description. Each :class:`Attribute` is either

* **categorical**: a tuple of category labels (strings), or
* **numeric**: equal-width bins over user-given bounds ``[lo, hi]``,

optionally with one extra ``"<missing>"`` value. The schema maps to a
:class:`synthdp.core.domain.Domain` (integer codes ``0..size-1`` per attribute);
:class:`synthdp.core.encoding.Encoder` turns DataFrames into codes and back.

:meth:`Schema.from_dataframe` builds a schema from a DataFrame. Numeric
bounds are never read off the data (the minimum and maximum of a column are
individual records' values). Category sets *can* be read off the data for
convenience, but that reveals which values occur, so it emits a
:class:`PrivacyWarning` explaining how to make the domain public.
"""

from __future__ import annotations

import json
import logging
import math
import os
import tempfile
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from synthdp.core.domain import Domain
from synthdp.core.errors import InputError, SchemaError

__all__ = [
    "DEFAULT_BINS",
    "MISSING_LABEL",
    "Attribute",
    "PrivacyWarning",
    "Schema",
    "category_label",
    "read_json",
    "value_kind",
]

logger = logging.getLogger(__name__)

#: Label of the extra value that stands for a missing entry (NaN, None, pd.NA, or a missing token).
MISSING_LABEL = "<missing>"
#: Number of bins of a numeric column whose bounds are given but whose bin count is not.
DEFAULT_BINS = 10
SCHEMA_FORMAT = "synthdp-schema"
SCHEMA_VERSION = 1

Kind = Literal["categorical", "numeric"]
_KINDS = ("categorical", "numeric")


class PrivacyWarning(UserWarning):
    """Something was read off the private data outside the differential-privacy guarantee."""


def category_label(value: Any) -> str:
    """The label string of one categorical value.

    Booleans print as ``"True"``/``"False"``, integers and integral floats as
    integers (so ``3``, ``np.int8(3)`` and ``3.0`` are all ``"3"``: an integer
    column that pandas turned into floats because of missing values keeps its
    labels), other floats with ``repr`` (which reads back exactly), anything
    else with ``str``.
    """
    if isinstance(value, (bool, np.bool_)):
        return str(bool(value))
    if isinstance(value, (int, np.integer)):
        return str(int(value))
    if isinstance(value, (float, np.floating)):
        number = float(value)
        return str(int(number)) if number.is_integer() else repr(number)
    return str(value)


def value_kind(dtype: str | None) -> Literal["bool", "int", "float", "other"]:
    """Which Python type the labels of a column with pandas dtype ``dtype`` parse back to."""
    if dtype is None:
        return "other"
    try:
        resolved = pd.api.types.pandas_dtype(dtype)
    except TypeError:
        raise SchemaError(
            f"unknown dtype {dtype!r}; use a pandas dtype name such as 'int64', 'bool' or 'str'"
        ) from None
    if pd.api.types.is_bool_dtype(resolved):
        return "bool"
    if pd.api.types.is_integer_dtype(resolved):
        return "int"
    if pd.api.types.is_float_dtype(resolved):
        return "float"
    return "other"


def _parse_label(label: str, kind: str) -> Any:
    """Inverse of :func:`category_label` for a column whose values are of ``kind``."""
    if kind == "bool":
        if label not in ("True", "False"):
            raise ValueError(label)
        return label == "True"
    if kind == "int":
        return int(label)
    if kind == "float":
        return float(label)
    return label


def _format_edges(edges: np.ndarray) -> list[str]:
    """Fixed-point texts of bin edges with the fewest decimals that keep them distinct."""
    for decimals in range(16):
        texts = [np.format_float_positional(e + 0.0, precision=decimals, trim="-") for e in edges]
        if len(set(texts)) == len(texts):
            return texts
    return [repr(float(e)) for e in edges]


@dataclass(frozen=True)
class Attribute:
    """One column of a schema and its public set of values.

    Parameters
    ----------
    name : column name.
    kind : ``"categorical"`` or ``"numeric"``.
    categories : categorical only; the category labels (see :func:`category_label`),
        in code order.
    bounds : numeric only; public ``(lo, hi)``. Values are binned into ``bins``
        equal-width half-open bins ``[e_i, e_{i+1})``, the last one closed.
    bins : numeric only; number of bins (default :data:`DEFAULT_BINS`).
    missing : whether an extra ``"<missing>"`` value (the last code) exists.
    clip : numeric only; clamp values outside ``bounds`` into them instead of
        raising. Clamping is a fixed, data-independent map, so it keeps privacy.
    dtype : pandas dtype name of the original column, used to give decoded
        columns their original type (``None``: strings / floats).
    coded : categorical only; values are already the integer codes
        ``0..len(categories)-1`` (private-pgm style), labels ``"0", "1", ...``.
    """

    name: str
    kind: Kind
    categories: tuple[str, ...] = ()
    bounds: tuple[float, float] | None = None
    bins: int | None = None
    missing: bool = False
    clip: bool = False
    dtype: str | None = None
    coded: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise SchemaError(f"attribute name must be a non-empty string, got {self.name!r}")
        if self.kind not in _KINDS:
            raise SchemaError(f"attribute {self.name!r}: kind must be one of {_KINDS}, got {self.kind!r}")
        object.__setattr__(self, "categories", tuple(category_label(c) for c in self.categories))
        object.__setattr__(self, "missing", bool(self.missing))
        if self.kind == "categorical":
            self._check_categorical()
        else:
            self._check_numeric()
        if len(set(self.labels)) != self.size:
            dup = sorted({lab for lab in self.labels if self.labels.count(lab) > 1})
            raise SchemaError(f"attribute {self.name!r} has duplicate labels {dup}; every value needs its own label")

    def _check_categorical(self) -> None:
        if self.bounds is not None or self.bins is not None or self.clip:
            raise SchemaError(f"categorical attribute {self.name!r} cannot have bounds, bins or clip")
        if not self.categories and not self.missing:
            raise SchemaError(f"categorical attribute {self.name!r} needs at least one category")
        if self.coded and self.categories != tuple(map(str, range(len(self.categories)))):
            raise SchemaError(f"coded attribute {self.name!r} must have categories '0'..'{len(self.categories) - 1}'")
        kind = value_kind(self.dtype)
        for label in self.categories:
            try:
                _parse_label(label, kind)
            except ValueError:
                raise SchemaError(
                    f"category {label!r} of column {self.name!r} cannot be read as a {kind} "
                    f"(the column's dtype is {self.dtype}); fix the category list"
                ) from None

    def _check_numeric(self) -> None:
        if self.categories or self.coded:
            raise SchemaError(f"numeric attribute {self.name!r} cannot have categories or be coded")
        if self.bounds is None or len(self.bounds) != 2:
            raise SchemaError(f"numeric attribute {self.name!r} needs public bounds (lo, hi)")
        try:
            lo, hi = (float(b) for b in self.bounds)
        except (TypeError, ValueError):
            raise SchemaError(f"bounds of {self.name!r} must be two numbers, got {self.bounds!r}") from None
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise SchemaError(f"bounds of {self.name!r} must be finite with lo < hi, got ({lo}, {hi})")
        object.__setattr__(self, "bounds", (lo, hi))
        bins = DEFAULT_BINS if self.bins is None else self.bins
        if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
            raise SchemaError(f"bins of {self.name!r} must be a positive integer, got {self.bins!r}")
        object.__setattr__(self, "bins", int(bins))
        if value_kind(self.dtype) == "int":
            first, last = self.integer_ranges
            empty = np.flatnonzero(first > last)
            if empty.size:
                raise SchemaError(
                    f"column {self.name!r} holds integers, but {self.bins} equal-width bins over "
                    f"[{lo:g}, {hi:g}] leave {empty.size} bin(s) without any integer; use fewer bins"
                )

    @property
    def size(self) -> int:
        """Number of codes (values), including the missing value."""
        return len(self.labels)

    @property
    def missing_code(self) -> int | None:
        """Code of the missing value (the last one), or ``None`` when there is none."""
        return self.size - 1 if self.missing else None

    @cached_property
    def edges(self) -> np.ndarray:
        """The ``bins + 1`` bin edges of a numeric attribute."""
        if self.kind != "numeric":
            raise SchemaError(f"attribute {self.name!r} is categorical and has no bin edges")
        return np.linspace(self.bounds[0], self.bounds[1], self.bins + 1)

    @cached_property
    def integer_ranges(self) -> tuple[np.ndarray, np.ndarray]:
        """Smallest and largest integer of each bin (``first > last`` when a bin holds none)."""
        first = np.ceil(self.edges[:-1]).astype(np.int64)
        last = np.ceil(self.edges[1:]).astype(np.int64) - 1
        last[-1] = int(np.floor(self.edges[-1]))
        return first, last

    @cached_property
    def labels(self) -> tuple[str, ...]:
        """Label of every code: categories or bin labels ``"lo-hi"``, then ``"<missing>"``."""
        if self.kind == "categorical":
            values = self.categories
        else:
            texts = _format_edges(self.edges)
            values = tuple(f"{a}-{b}" for a, b in zip(texts[:-1], texts[1:]))
        return values + ((MISSING_LABEL,) if self.missing else ())

    @cached_property
    def code_of(self) -> dict[str, int]:
        """Code of each category label (categorical attributes)."""
        return {label: code for code, label in enumerate(self.categories)}

    @cached_property
    def category_values(self) -> tuple[Any, ...]:
        """Each category as a value of the column's original type (``"3"`` -> ``3`` for ints)."""
        kind = value_kind(self.dtype)
        return tuple(_parse_label(label, kind) for label in self.categories)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready description with only the fields relevant to the kind."""
        out: dict[str, Any] = {"name": self.name, "kind": self.kind}
        if self.kind == "categorical":
            out["categories"] = list(self.categories)
            if self.coded:
                out["coded"] = True
        else:
            out.update(bounds=list(self.bounds), bins=self.bins, clip=self.clip)
        out.update(missing=self.missing, dtype=self.dtype)
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Attribute":
        """Inverse of :meth:`to_dict`; rejects unknown keys."""
        if not isinstance(data, Mapping):
            raise SchemaError(f"each attribute must be a JSON object, got {data!r}")
        unknown = sorted(set(data) - set(cls.__dataclass_fields__))
        if unknown:
            raise SchemaError(f"attribute {data.get('name')!r} has unknown keys {unknown}")
        if "name" not in data or "kind" not in data:
            raise SchemaError(f"every attribute needs 'name' and 'kind', got keys {sorted(data)}")
        fields = dict(data)
        fields["categories"] = tuple(fields.get("categories", ()))
        if fields.get("bounds") is not None:
            fields["bounds"] = tuple(fields["bounds"])
        return cls(**fields)


def _is_number_dtype(dtype: Any) -> bool:
    """Numeric and not boolean: the dtypes whose columns need bounds unless declared categorical."""
    return pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)


def _check_known(option: str, keys: Iterable[str], columns: Sequence[str]) -> None:
    """Raise when an option names columns the DataFrame does not have."""
    unknown = [k for k in keys if k not in columns]
    if unknown:
        raise SchemaError(f"{option} names unknown column(s) {unknown}; the DataFrame has columns {list(columns)}")


def _observed_categories(
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
        raise SchemaError(
            f"column {series.name!r} has {len(present)} distinct values, more than max_categories="
            f"{max_categories}; raise max_categories, give its public categories, or give it numeric bounds"
        )
    has_missing = bool(series.isna().any()) or len(present) < len(labels)
    return tuple(present), has_missing


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

    def __post_init__(self) -> None:
        object.__setattr__(self, "attributes", tuple(self.attributes))
        object.__setattr__(self, "missing_values", tuple(str(t) for t in self.missing_values))
        if not self.attributes:
            raise SchemaError("a schema needs at least one attribute")
        if not all(isinstance(a, Attribute) for a in self.attributes):
            raise SchemaError("schema attributes must be Attribute objects")
        if len(set(self.names)) != len(self.names):
            dup = sorted({n for n in self.names if self.names.count(n) > 1})
            raise SchemaError(f"duplicate column names in schema: {dup}")

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
        """Names, sizes and value labels of the encoded table."""
        return Domain(self.names, tuple(a.size for a in self.attributes), tuple(a.labels for a in self.attributes))

    @classmethod
    def from_dataframe(
        cls,
        df: pd.DataFrame,
        *,
        categorical: Iterable[str] | None = None,
        bounds: Mapping[str, tuple[float, float]] | None = None,
        bins: Mapping[str, int] | None = None,
        categories: Mapping[str, Sequence[Any]] | None = None,
        nullable: Iterable[str] | None = None,
        missing_values: Sequence[str] = (),
        clip: bool = False,
        max_categories: int = 100,
    ) -> "Schema":
        """Build a schema for the columns of ``df``.

        Parameters
        ----------
        df : the table; only column dtypes are used, except for categorical
            columns without given ``categories``, whose categories are read off
            the data (one :class:`PrivacyWarning` names them).
        categorical : columns to treat as categorical even if numeric (e.g. a
            small integer code).
        bounds : public ``(lo, hi)`` of numeric columns, which are binned.
            Numeric columns need bounds or must be declared categorical.
        bins : number of equal-width bins per bounded column (default 10).
        categories : public category lists; these columns are categorical and
            their values are not read off the data.
        nullable : columns with public categories or bounds that get a
            ``"<missing>"`` value. (A column whose categories are read off the
            data gets one when the data hold a missing value.)
        missing_values : extra tokens meaning "missing" (e.g. ``["?"]``).
        clip : clamp out-of-bounds numeric values instead of raising at encoding.
        max_categories : largest number of categories read off the data.
        """
        if not isinstance(df, pd.DataFrame):
            raise SchemaError(f"expected a pandas DataFrame, got {type(df).__name__}")
        if df.empty:
            raise SchemaError(f"the DataFrame is empty (shape {df.shape}); a schema needs at least one row and column")
        columns = [str(c) for c in df.columns]
        if len(set(columns)) != len(columns):
            raise SchemaError(f"duplicate column names {sorted({c for c in columns if columns.count(c) > 1})}")
        categorical = set(categorical or ())
        bounds, bins, categories = dict(bounds or {}), dict(bins or {}), dict(categories or {})
        nullable, missing_values = set(nullable or ()), tuple(str(t) for t in missing_values)
        for option, keys in [("categorical", categorical), ("bounds", bounds), ("bins", bins),
                             ("categories", categories), ("nullable", nullable)]:
            _check_known(option, sorted(keys), columns)
        for option, keys in [("categorical", categorical), ("categories", categories)]:
            clash = sorted(set(keys) & set(bounds))
            if clash:
                raise SchemaError(
                    f"columns {clash} are given both bounds and {option}; a column is either binned or categorical"
                )
        unbinned = sorted(set(bins) - set(bounds))
        if unbinned:
            raise SchemaError(f"bins given for {unbinned} without bounds; pass bounds={{col: (lo, hi)}} too")

        attributes, read_off, unbounded = [], [], []
        for col, series in zip(columns, (df.iloc[:, j] for j in range(df.shape[1]))):
            dtype = str(series.dtype)
            if col in bounds:
                if pd.api.types.is_bool_dtype(series.dtype):
                    raise SchemaError(f"column {col!r} is boolean; declare it categorical instead of giving bounds")
                if not _is_number_dtype(series.dtype):
                    dtype = "float64"
                attributes.append(Attribute(col, "numeric", bounds=tuple(bounds[col]), bins=bins.get(col),
                                            missing=col in nullable, clip=clip, dtype=dtype))
            elif col in categories:
                if any(pd.isna(c) for c in categories[col]):
                    raise SchemaError(f"categories of {col!r} contain a missing value; list only real "
                                      f"categories and declare the missing value with nullable=[{col!r}]")
                attributes.append(Attribute(col, "categorical", categories=tuple(categories[col]),
                                            missing=col in nullable, dtype=dtype))
            elif col in categorical or not _is_number_dtype(series.dtype):
                labels, has_missing = _observed_categories(series.rename(col), missing_values, max_categories)
                attributes.append(Attribute(col, "categorical", categories=labels,
                                            missing=has_missing or col in nullable, dtype=dtype))
                read_off.append(col)
            else:
                unbounded.append(col)
        if unbounded:
            example = unbounded[0]
            raise SchemaError(
                f"numeric column(s) {unbounded} have no public bounds. Bounds are never read off the private "
                f"data; pass bounds={{{example!r}: (lo, hi)}} (CLI: --bounds {example}=LO:HI), optionally with "
                f"bins={{{example!r}: k}}, or declare the column categorical (categorical=[{example!r}])."
            )
        if read_off:
            warnings.warn(
                f"the categories of columns {read_off} were read off the private data, which reveals which "
                f"values occur and is not covered by differential privacy. To make the domain public, pass "
                f"categories={{{read_off[0]!r}: [...], ...}} (or load a schema file with Schema.load).",
                PrivacyWarning,
                stacklevel=2,
            )
        schema = cls(tuple(attributes), missing_values)
        logger.debug("schema from DataFrame: %s", dict(zip(schema.names, schema.domain.sizes)))
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
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "Schema":
        """Inverse of :meth:`to_dict`."""
        if not isinstance(data, Mapping) or data.get("format") != SCHEMA_FORMAT:
            raise SchemaError(f"not a synthdp schema (expected \"format\": \"{SCHEMA_FORMAT}\")")
        if data.get("version") != SCHEMA_VERSION:
            raise SchemaError(f"schema version {data.get('version')!r} is not supported (expected {SCHEMA_VERSION})")
        unknown = sorted(set(data) - {"format", "version", "missing_values", "attributes"})
        if unknown:
            raise SchemaError(f"schema has unknown keys {unknown}")
        attributes = tuple(Attribute.from_dict(a) for a in data.get("attributes", ()))
        return cls(attributes, tuple(data.get("missing_values", ())))

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
        """Write the schema atomically (temporary file in the same directory, then ``os.replace``)."""
        path = Path(path)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(self.to_json() + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

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
