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

import datetime
import json
import logging
import math
import os
import re
import tempfile
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from synthdp.core.derived import Derived, parse_derived
from synthdp.core.domain import Domain
from synthdp.core.errors import InputError, PrivacyWarning, SchemaError
from synthdp.core.options import refusing_unknown_keywords, user_stacklevel
from synthdp.core.owner import owner_warning

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
    "timestamp_seconds",
    "typed_label",
    "value_kind",
    "values_dtype",
    "write_atomically",
]

logger = logging.getLogger(__name__)

#: Label of the extra value that stands for a missing entry (NaN, None, pd.NA, or a missing token).
MISSING_LABEL = "<missing>"
#: Number of bins of a numeric column whose bounds are given but whose bin count is not.
DEFAULT_BINS = 10
SCHEMA_FORMAT = "synthdp-schema"
#: The key that marks a schema drafted by ``synthdp schema``: refused until its owner has reviewed it.
DRAFT_KEY = "_read_off_data"
SCHEMA_VERSION = 1

Kind = Literal["categorical", "numeric"]
_KINDS = ("categorical", "numeric")
#: Where a categorical domain comes from: given publicly; still to be learned by partition selection
#: (docs/privacy.md §9); learned that way (values outside it are encoded as missing); or read off the
#: private data (the unsafe opt-in, not differentially private).
Origin = Literal["public", "learn", "learned", "read-off"]
ORIGINS = ("public", "learn", "learned", "read-off")


class UntypedWarning(UserWarning):
    """A column whose bounds are to be learned has no declared type, so it comes back as real numbers (a draft
    writes every type out, and filters this)."""


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


def typed_label(value: Any, kind: str) -> str:
    """The label of one value of a categorical column whose public dtype is of ``kind`` (:func:`value_kind`).

    A function of the value alone (docs/privacy.md §10.1): text is read in
    the column's public type -- ``"001"`` and ``"1.0"`` are the integer
    ``"1"``, ``"true"`` and ``"TRUE"`` are ``"True"`` -- so a label never
    depends on how a reader typed the other values of the column (one ``"x"``
    among codes makes pandas keep ``"001"`` as text, otherwise it reads 1).
    Text that does not read in that type keeps its own label (and is then
    outside the domain); values that are not text take :func:`category_label`.
    """
    if not isinstance(value, str) or kind not in ("bool", "int", "float"):
        return category_label(value)
    text = value.strip()
    if kind == "bool":
        return {"true": "True", "false": "False"}.get(text.lower(), value)
    try:
        return category_label(int(text))  # exact for integers beyond 2**53
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return value
    return category_label(number) if math.isfinite(number) else value


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


def reads_as(label: str, kind: str) -> bool:
    """Whether a category label reads back as a value of ``kind`` (:func:`value_kind`), as a public category of a
    column of that type must."""
    try:
        _parse_label(label, kind)
    except ValueError:
        return False
    return True


def values_dtype(values: Sequence[Any]) -> str | None:
    """Output dtype of a column whose public categories are the Python ``values`` the user gave.

    All booleans: ``"bool"``; all integers: ``"int64"``; all real numbers
    with a non-integer among them: ``"float64"``; anything else (strings,
    mixtures, no values): ``None`` (text). It reads the user's list only.
    """
    kinds = set()
    for value in values:
        if isinstance(value, (bool, np.bool_)):
            kinds.add("bool")
        elif isinstance(value, (int, np.integer)):
            kinds.add("int")
        elif isinstance(value, (float, np.floating)) and math.isfinite(value):
            kinds.add("int" if float(value).is_integer() else "float")
        else:
            return None
    if kinds == {"bool"}:
        return "bool"
    if kinds == {"int"}:
        return "int64"
    if kinds and kinds <= {"int", "float"}:
        return "float64"
    return None


def labels_dtype(labels: Sequence[str]) -> str | None:
    """Output dtype of a column whose categories are the label strings ``labels``.

    Used for categories read off the data (``unsafe_public_categories``, not
    differentially private); a learned domain keeps its declared dtype
    (:meth:`Schema.with_learned`). A label counts as a number only when it is the
    canonical :func:`category_label` of that number, so that decoding and
    re-encoding give the same label back (``"01"`` stays text).
    """
    if labels and all(label in ("True", "False") for label in labels):
        return "bool"
    kinds = set()
    for label in labels:
        try:
            number = float(label)
        except ValueError:
            return None
        if not math.isfinite(number) or category_label(number) != label:
            return None
        kinds.add("int" if number.is_integer() else "float")
    if kinds == {"int"}:
        return "int64"
    return "float64" if kinds else None


def public_dtype(bounds: tuple[float, float], bins: int) -> str:
    """Output dtype of a numeric column: integers when both bounds are given as integers and every bin holds one.

    A function of how the public bounds are written and of the bin count
    only (never of the column's pandas dtype, which depends on the values):
    ``(17, 90)`` declares an integer column, ``(0.0, 100.0)`` a real one
    (CLI: ``17:90`` and ``0.0:100``).
    """
    lo, hi = bounds
    if _is_integer(lo) and _is_integer(hi):
        first, last = _integer_ranges(np.linspace(lo, hi, bins + 1))
        if (first <= last).all():
            return "int64"
    return "float64"


def _is_integer(value: Any) -> bool:
    """Given as an integer (Python or numpy, not bool): how a bound declares an integer column."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _integer_ranges(edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Smallest and largest integer of each bin ``[e_i, e_{i+1})``, the last one closed (``first > last``: none)."""
    first = np.ceil(edges[:-1]).astype(np.int64)
    last = np.ceil(edges[1:]).astype(np.int64) - 1
    last[-1] = int(np.floor(edges[-1]))
    return first, last


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
    bins : numeric only; number of bins (default :data:`DEFAULT_BINS`; with ``cuts``,
        ``len(cuts) + 1``; a column still to be discretised has one placeholder cell).
    missing : whether an extra ``"<missing>"`` value (the last code) exists.
    clip : numeric only; clamp values outside ``bounds`` into them instead of
        raising. Clamping is a fixed, data-independent map, so it keeps privacy.
    dtype : pandas dtype name that decoded columns get (``None``: text for
        categories, floats for numeric values). Public: given by the user or
        derived from the public categories or bounds, never from the data.
    coded : categorical only; values are already the integer codes
        ``0..len(categories)-1`` (private-pgm style), labels ``"0", "1", ...``.
    format : datetime columns (dtype :data:`DATETIME_DTYPE`, or ``datetime64[ns, TZ]`` for a
        time zone) only: the ``strptime`` format of their text (None: ISO 8601), which is
        also their precision (:attr:`date_unit`) and written form. A datetime column is
        a numeric column of timestamps in seconds since 1970 (bounds, cuts and cells
        in seconds; bounds may be given as dates), written back as datetimes.
    decimals : float columns only: values are written rounded to this many decimals (public;
        e.g. 2 for amounts of money, so that a point mass such as 0.00 comes back as itself).
    cuts : numeric only; increasing interior cell boundaries ``lo < c_1 < ... <= hi``
        (public, or released by PrivTree); the cells are ``[lo, c_1), ..., [c_k, hi]``.
    origin : where the domain comes from (:data:`ORIGINS`). Numeric: ``"public"``
        (bins or cuts given), ``"learn"`` (cuts to be learned by PrivTree,
        docs/privacy.md §10.3) or ``"learned"`` (released by it). Categorical:
        ``"public"``, ``"learn"`` (to be learned by partition selection;
        such an attribute cannot encode data yet), ``"learned"`` (released by
        partition selection; any other value is encoded as the missing value,
        or as ``other``, docs/privacy.md §9) or ``"read-off"`` (read off the private data: not
        differentially private).
    other : categorical only; a public label (one of the categories once they are known, the last
        of a learned domain) that every value outside the categories is encoded as, instead of
        the missing value (learned categories) or a refusal (given ones): a public rule, like
        the missing value's (docs/privacy.md §9).
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
    origin: Origin = "public"
    cuts: tuple[float, ...] = ()
    format: str | None = None
    decimals: int | None = None
    other: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise SchemaError(f"attribute name must be a non-empty string, got {self.name!r}")
        if self.kind not in _KINDS:
            raise SchemaError(f"attribute {self.name!r}: kind must be one of {_KINDS}, got {self.kind!r}")
        object.__setattr__(self, "categories", tuple(category_label(c) for c in self.categories))
        if self.origin not in ORIGINS:
            raise SchemaError(f"attribute {self.name!r}: origin must be one of {ORIGINS}, got {self.origin!r}")
        # A domain still to be learned has the missing value, which holds every unreleased value (§9), unless its
        # other label holds them: it is then missing only as declared.
        learn_categories = self.origin == "learn" and self.kind == "categorical" and self.other is None
        object.__setattr__(self, "missing", bool(self.missing) or learn_categories)
        if self.kind == "categorical":
            self._check_categorical()
        else:
            self._check_numeric()
        if len(set(self.labels)) != self.size:
            dup = sorted({lab for lab in self.labels if self.labels.count(lab) > 1})
            raise SchemaError(f"attribute {self.name!r} has duplicate labels {dup}; every value needs its own label")

    def _check_categorical(self) -> None:
        if self.bounds is not None or self.bins is not None or self.clip or self.cuts:
            raise SchemaError(f"categorical attribute {self.name!r} cannot have bounds, bins, cuts or clip")
        if self.other is not None:
            self._check_other()
        if not self.categories and not self.missing:
            raise SchemaError(f"categorical attribute {self.name!r} needs at least one category")
        if self.origin == "learned" and not self.missing and self.other is None:
            raise SchemaError(f"attribute {self.name!r} has a learned domain and needs the missing value, which "
                              "stands for every value partition selection did not release (docs/privacy.md §9)")
        if self.origin == "learn" and self.categories and self.categories != (self.other,):
            raise SchemaError(f"attribute {self.name!r} is still to be learned and cannot list categories (but its "
                              "other label)")
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

    def _check_other(self) -> None:
        """The ``other`` label: text, read in the column's dtype, and one of the categories (the only one of a domain
        still to be learned: the label is public, and holds every value until the others are learned)."""
        if not isinstance(self.other, str) or not self.other.strip():
            raise SchemaError(f"the other label of column {self.name!r} must be a non-empty text, got {self.other!r}")
        if not reads_as(self.other, value_kind(self.dtype)):
            raise SchemaError(f"the other label {self.other!r} of column {self.name!r} cannot be read as the "
                              f"column's dtype {self.dtype}; choose a label of that type, or declare the column's "
                              "dtype 'str'")
        object.__setattr__(self, "other", typed_label(self.other, value_kind(self.dtype)))
        if self.origin == "learn" and not self.categories:
            object.__setattr__(self, "categories", (self.other,))
        if self.other not in self.categories:
            raise SchemaError(f"the other label {self.other!r} of column {self.name!r} must be one of its categories "
                              f"{list(self.categories)[:10]}")

    def _check_numeric(self) -> None:
        if self.categories or self.coded or self.origin == "read-off":
            raise SchemaError(f"numeric attribute {self.name!r} cannot have categories, be coded or be read off")
        if self.other is not None:
            raise SchemaError(f"numeric attribute {self.name!r} cannot have an other label (categories only)")
        if self.is_datetime and self.time_zone is None:  # a format reading an offset holds instants: UTC (§10.1)
            object.__setattr__(self, "dtype", datetime_dtype(self.format))
        if self.bounds is None and self.origin == "learn":  # bounds to learn privately (docs/privacy.md §10.4)
            if self.cuts or self.bins not in (None, 1):
                raise SchemaError(f"numeric column {self.name!r} has no bounds yet and cannot list bins or cuts")
            object.__setattr__(self, "bins", 1)
            return
        if self.bounds is None or len(self.bounds) != 2:
            raise SchemaError(f"numeric attribute {self.name!r} needs public bounds (lo, hi)")
        if self.is_datetime:
            object.__setattr__(self, "bounds", tuple(timestamp_seconds(b, self.format, self.time_zone)
                                                     for b in self.bounds))
        try:
            lo, hi = (float(b) for b in self.bounds)
        except (TypeError, ValueError):
            raise SchemaError(f"bounds of {self.name!r} must be two numbers, got {self.bounds!r}") from None
        if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
            raise SchemaError(f"bounds of {self.name!r} must be finite with lo < hi, got ({lo}, {hi})")
        object.__setattr__(self, "bounds", (lo, hi))
        bins = self._check_cuts(lo, hi)
        if isinstance(bins, bool) or not isinstance(bins, (int, np.integer)) or bins < 1:
            raise SchemaError(f"bins of {self.name!r} must be a positive integer, got {self.bins!r}")
        object.__setattr__(self, "bins", int(bins))
        if self.dtype is not None and value_kind(self.dtype) not in ("int", "float") and not self.is_datetime:
            raise SchemaError(f"numeric attribute {self.name!r} needs an integer, float or {DATETIME_DTYPE} dtype, "
                              f"got {self.dtype!r}")
        if self.format is not None and not self.is_datetime:
            raise SchemaError(f"attribute {self.name!r} has a datetime format but is not a datetime column")
        if self.decimals is not None and (isinstance(self.decimals, bool) or not isinstance(self.decimals, int)
                                          or not 0 <= self.decimals <= 15 or value_kind(self.dtype) == "int"):
            raise SchemaError(f"decimals of {self.name!r} must be an integer from 0 to 15 on a float column, "
                              f"got {self.decimals!r}")
        if value_kind(self.dtype) == "int":
            first, last = self.integer_ranges
            empty = np.flatnonzero(first > last)
            if empty.size:
                raise SchemaError(
                    f"column {self.name!r} has integer dtype {self.dtype}, but {self.bins} equal-width bins over "
                    f"[{lo:g}, {hi:g}] leave {empty.size} bin(s) without any integer; use fewer bins or a float dtype"
                )

    def _check_cuts(self, lo: float, hi: float) -> int | None:
        """Validate ``cuts`` against the bounds and origin; the bin count they imply (None: ``bins`` or default)."""
        try:
            cuts = tuple(float(c) for c in self.cuts)
        except (TypeError, ValueError):
            raise SchemaError(f"cuts of {self.name!r} must be numbers, got {self.cuts!r}") from None
        object.__setattr__(self, "cuts", cuts)
        if self.origin == "learn":
            if cuts or self.bins not in (None, 1):
                raise SchemaError(f"numeric column {self.name!r} is still to be discretised (origin 'learn') and "
                                  "cannot list bins or cuts")
            return 1
        if self.origin == "learned" and not cuts and self.bins != 1:
            raise SchemaError(f"numeric column {self.name!r} was discretised (origin 'learned') and needs its cuts")
        if not cuts:
            return DEFAULT_BINS if self.bins is None else self.bins
        edges = (lo, *cuts, hi)
        if not all(math.isfinite(c) for c in cuts) or any(b <= a for a, b in zip(edges[:-2], edges[1:-1])) \
                or cuts[-1] > hi:
            raise SchemaError(f"cuts of {self.name!r} must increase strictly inside its bounds ({lo:g}, {hi:g}], "
                              f"got {list(cuts)}")
        if self.bins is not None and self.bins != len(cuts) + 1:
            raise SchemaError(f"column {self.name!r} has {len(cuts)} cuts, so {len(cuts) + 1} bins, not {self.bins}")
        return len(cuts) + 1

    @property
    def is_datetime(self) -> bool:
        """A numeric column of timestamps (seconds since 1970), written back as datetimes."""
        return is_datetime_dtype(self.dtype)

    @property
    def time_zone(self) -> str | None:
        """The time zone of a tz-aware datetime column (``datetime64[ns, Europe/Paris]``), else None."""
        return datetime_zone(self.dtype) if self.is_datetime else None

    @property
    def date_unit(self) -> int:
        """Seconds in the precision of a datetime column (docs/privacy.md §10.1): its public format's finest
        field (86400 for dates alone, 60 for hours and minutes), 1 without a format; never read off the values."""
        return format_unit(self.format)

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
        """The ``bins + 1`` bin edges of a numeric attribute: the bounds and the cuts, or equal-width."""
        if self.kind != "numeric":
            raise SchemaError(f"attribute {self.name!r} is categorical and has no bin edges")
        if self.cuts:
            return np.array([self.bounds[0], *self.cuts, self.bounds[1]], dtype=np.float64)
        return np.linspace(self.bounds[0], self.bounds[1], self.bins + 1)

    @cached_property
    def integer_ranges(self) -> tuple[np.ndarray, np.ndarray]:
        """Smallest and largest integer of each bin (``first > last`` when a bin holds none)."""
        return _integer_ranges(self.edges)

    @cached_property
    def cell_widths(self) -> tuple[float, ...]:
        """The width of each cell of a numeric column: the integers it holds for an integer column, its length in
        the column's units otherwise (seconds for a datetime column); none for a categorical column or one whose
        bounds are still to be learned.  Public: the cells only."""
        if self.kind != "numeric" or self.bounds is None:
            return ()
        if value_kind(self.dtype) == "int":
            first, last = self.integer_ranges
            return tuple(float(w) for w in np.maximum(last - first + 1, 0))
        return tuple(float(w) for w in np.diff(self.edges))

    @cached_property
    def one_value_cells(self) -> tuple[int, ...]:
        """The codes of the cells that hold a single value of the column's public precision: one integer of an
        integer column, one whole unit of a datetime column without a time zone (:attr:`date_unit`), one multiple
        of a real column's ``10**-decimals``, or a point cell ``[v, v+)`` (docs/privacy.md §11.2); none for a
        categorical column or one whose bounds are still to be learned.  Public: the cells and the precision
        only (docs/privacy.md §8.7: such cells are never cut as an empty tail)."""
        if self.kind != "numeric" or self.bounds is None:
            return ()
        edges = self.edges
        unit = (1.0 if value_kind(self.dtype) == "int" else float(self.date_unit) if self.is_datetime
                and self.time_zone is None else 10.0 ** -self.decimals if self.decimals is not None else None)
        if unit is None:  # a real column without a precision: only point cells hold one value
            single = edges[1:] <= np.nextafter(edges[:-1], np.inf)
        else:
            first, last = _integer_ranges(np.round(edges / unit, 9))
            single = first == last
        return tuple(int(c) for c in np.flatnonzero(single))

    @cached_property
    def labels(self) -> tuple[str, ...]:
        """Label of every code: categories or bin labels ``"lo-hi"``, then ``"<missing>"``."""
        if self.kind == "categorical":
            values = self.categories
        elif self.bounds is None:
            values = ("<to be learned>",)
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
            if self.origin != "public":
                out["origin"] = self.origin
            if self.other is not None:
                out["other"] = self.other
        else:
            # bounds None: to be learned privately (origin "learn", docs/privacy.md §10.4)
            bounds = None if self.bounds is None else [self._written_bound(b) for b in self.bounds]
            out.update(bounds=bounds, bins=self.bins, clip=self.clip)
            if self.cuts:
                out["cuts"] = list(self.cuts)
            if self.origin != "public":
                out["origin"] = self.origin
            if self.format is not None:
                out["format"] = self.format
            if self.decimals is not None:
                out["decimals"] = self.decimals
        out.update(missing=self.missing, dtype=self.dtype)
        return out

    def _written_bound(self, bound: float) -> float | str:
        """A bound as a schema file writes it: a datetime column's as a date (ISO 8601: the day alone at a naive
        midnight, with its offset in a tz-aware column) wherever that text reads back to the same instant, so that
        an owner reviews dates, not seconds since 1970; else the number."""
        if not self.is_datetime:
            return bound
        try:
            stamp = pd.Timestamp(round(bound * 1e9), unit="ns", tz="UTC")
            stamp = stamp.tz_localize(None) if self.time_zone is None else stamp.tz_convert(self.time_zone)
            text = stamp.date().isoformat() if stamp.tz is None and stamp == stamp.normalize() else stamp.isoformat()
            return text if timestamp_seconds(text, self.format, self.time_zone) == bound else bound
        except (OverflowError, ValueError, SchemaError):  # beyond the instants pandas holds (1677-2262): a number
            return bound

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
        fields["cuts"] = tuple(fields.get("cuts", ()))
        return cls(**fields)


#: Kinds a schema may declare that make a column numeric: binned between public bounds.
NUMERIC_KINDS: tuple[str, ...] = ("numeric", "datetime")
#: The dtype of a datetime column (a numeric column of timestamps in seconds since 1970).
DATETIME_DTYPE = "datetime64[ns]"
#: ``strptime`` directives of a time of day, finest first, with the seconds of the precision they give.
_TIME_UNITS = (("%f", 1), ("%S", 1), ("%s", 1), ("%c", 1), ("%X", 1), ("%T", 1), ("%M", 60), ("%R", 60),
               ("%H", 3600), ("%I", 3600))
#: Seconds in a day: the precision of a format without a time of day (``%Y-%m-%d``).
DAY_SECONDS = 86_400
#: ``strptime`` directives of an offset or zone: such a column holds instants, kept in UTC unless typed otherwise.
_ZONE_DIRECTIVES = ("%z", "%Z")


def is_datetime_dtype(dtype: Any) -> bool:
    """A pandas datetime dtype (``datetime64[ns]``, ``datetime64[s, UTC]``, ...), given as a name or a dtype."""
    return dtype is not None and str(dtype).startswith("datetime64")


def datetime_zone(dtype: Any) -> str | None:
    """The time zone of a tz-aware datetime dtype, else None."""
    try:
        resolved = pd.api.types.pandas_dtype(dtype)
    except TypeError:
        raise SchemaError(f"unknown dtype {dtype!r}; a datetime column's dtype is {DATETIME_DTYPE!r} or "
                          f"'datetime64[ns, TZ]' (e.g. 'datetime64[ns, UTC]')") from None
    return str(resolved.tz) if isinstance(resolved, pd.DatetimeTZDtype) else None


def format_unit(fmt: str | None) -> int:
    """Seconds in the precision a public datetime format writes: its finest time field; a day without one."""
    if fmt is None:
        return 1
    return min((unit for directive, unit in _TIME_UNITS if directive in fmt), default=DAY_SECONDS)


def reads_zone(fmt: str | None) -> bool:
    """Whether a public datetime format reads an offset or a zone (``%z``, ``%Z``): its values are instants."""
    return fmt is not None and any(d in fmt for d in _ZONE_DIRECTIVES)


def datetime_dtype(fmt: str | None = None, zone: str | None = None) -> str:
    """The dtype of a datetime column: tz-aware in ``zone`` (declared), in UTC when its format reads an
    offset or a zone (the values are instants), else :data:`DATETIME_DTYPE`."""
    if zone is None and reads_zone(fmt):
        zone = "UTC"
    return DATETIME_DTYPE if zone is None else f"datetime64[ns, {zone}]"


def is_date_bound(value: Any) -> bool:
    """A bound written as a date (a ``datetime``/``date``, ``np.datetime64``, or text that is not a number): it
    declares a datetime column (docs/privacy.md §10.1)."""
    if isinstance(value, (datetime.date, np.datetime64)):
        return True
    if isinstance(value, str):
        try:
            float(value)
        except ValueError:
            return True
    return False


def timestamp_seconds(value: Any, fmt: str | None = None, zone: str | None = None) -> float:
    """A public datetime bound (text, ``datetime``, ``pd.Timestamp``) in seconds since 1970; numbers as they are.

    Text is read with the column's format, else as ISO 8601; a bound without a zone is a time of the column's
    ``zone`` (UTC for a tz-naive column).
    """
    if isinstance(value, (int, float, np.integer, np.floating)) and not isinstance(value, bool):
        return float(value)
    try:
        stamp = pd.Timestamp(pd.to_datetime(value, format=fmt, errors="coerce") if isinstance(value, str) and fmt
                             else value)
        if stamp is pd.NaT and isinstance(value, str):  # ISO 8601 too, as the column's values (encoding)
            stamp = pd.Timestamp(pd.to_datetime(value, format="ISO8601"))
    except (TypeError, ValueError) as exc:
        raise SchemaError(f"cannot read datetime bound {value!r}" + (f" with format {fmt!r}" if fmt else "") +
                          f": {exc}") from None
    if stamp is pd.NaT:
        raise SchemaError(f"datetime bound {value!r} is missing; give a date")
    if stamp.tz is None and zone is not None:
        stamp = stamp.tz_localize(zone)
    return float(stamp.as_unit("ns").value) / 1e9


def column_kind(*, bounded: bool, declared: str | None = None) -> Kind:
    """The kind of a column, from public inputs only (docs/privacy.md §10.1).

    A column with public bounds, or one whose declared kind is numeric, is
    numeric; every other column is categorical (its categories public or
    learned privately, §9).  The private frame is never consulted: a pandas
    dtype is a function of the values, and one odd value in one row would
    flip it.
    """
    return "numeric" if bounded or declared in NUMERIC_KINDS else "categorical"


def _is_number_dtype(dtype: Any) -> bool:
    """Numeric and not boolean."""
    return pd.api.types.is_numeric_dtype(dtype) and not pd.api.types.is_bool_dtype(dtype)


#: ``DataFrame.attrs`` key set by synthdp's CSV readers, which read every field as text (docs/privacy.md §10.1).
READ_AS_TEXT = "synthdp_read_as_text"


def _reads_as_numbers(series: pd.Series, missing_values: Sequence[str], read_as_text: bool) -> bool:
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


def _check_declarations_agree(dtypes: Mapping[str, str], datetimes: Mapping[str, Any],
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


def _undeclared_dates_error(columns: list[str], *, numeric: bool) -> SchemaError:
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


def _dtype_disagreement(attr: "Attribute", series: pd.Series) -> str | None:
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


#: How :func:`_dtype_disagreement` names a type.
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


def _numeric_dtype(column: str, bounds: tuple[float, float], bins: int) -> str:
    """:func:`public_dtype` of a bounded column, with bound/bin errors left to :class:`Attribute`."""
    try:
        return public_dtype((bounds[0], bounds[1]), int(bins))
    except (TypeError, ValueError, IndexError):
        return "float64"


def label_order(label: str) -> tuple:
    """A fixed total order on labels: numbers (canonical labels) by value, then text."""
    try:
        number = float(label)
    except ValueError:
        return (1, 0.0, label)
    return (0, number, label) if math.isfinite(number) and category_label(number) == label else (1, 0.0, label)


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
            _check_known(option, sorted(keys), columns)
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
        _check_declarations_agree(dtypes, datetimes, learn_bounds)
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
                                            dtype=dtypes.get(col) or _numeric_dtype(col, bounds[col], bin_count),
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
            elif col not in categorical and _reads_as_numbers(series, missing_values, read_as_text):
                # A refusal shown to the owner before any private step, never a kind: every run that goes on
                # uses the public rule above (docs/privacy.md §10.1).
                unbounded.append(col)
            else:
                if reads_as_iso_dates(series):
                    dated.append(col)  # a hint for the owner, never a kind (§10.1)
                if unsafe_public_categories:
                    labels, has_missing = _observed_categories(series.rename(col), missing_values, max_categories)
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
            raise _undeclared_dates_error(numbered_dates, numeric=True)
        if parsed:
            raise parsed_text_error(parsed)
        if undated_frame:
            raise _undeclared_dates_error(undated_frame, numeric=False)
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
                         if (text := _dtype_disagreement(attr, df.iloc[:, j]))]
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
