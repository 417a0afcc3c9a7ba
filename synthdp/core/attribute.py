"""Attributes of a public schema, and the typing of their values and dates.

An :class:`Attribute` is one column of a :class:`synthdp.core.schema.Schema`: its kind (categorical or
numeric), its public domain (categories, or bounds with bins or cut points), its origin, and the dtype it is
written back with. Beside it live the helpers that type values without reading any private data: labels of
category values (:func:`category_label`, :func:`typed_label`), the dtype a set of public values or labels
implies (:func:`values_dtype`, :func:`labels_dtype`, :func:`public_dtype`), and datetime dtypes, formats and
bounds (:func:`datetime_dtype`, :func:`format_unit`, :func:`timestamp_seconds`).
"""

from __future__ import annotations

import datetime
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, Literal

import numpy as np
import pandas as pd

from synthdp.core.errors import SchemaError

#: Label of the extra value that stands for a missing entry (NaN, None, pd.NA, or a missing token).
MISSING_LABEL = "<missing>"
#: Number of bins of a numeric column whose bounds are given but whose bin count is not.
DEFAULT_BINS = 10

Kind = Literal["categorical", "numeric"]
_KINDS = ("categorical", "numeric")
#: Where a categorical domain comes from: given publicly; still to be learned by partition selection
#: (docs/privacy.md §9); learned that way (values outside it are encoded as missing); or read off the
#: private data (the unsafe opt-in, not differentially private).
Origin = Literal["public", "learn", "learned", "read-off"]
ORIGINS = ("public", "learn", "learned", "read-off")


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


def grid_numbers(values: np.ndarray, step: float) -> np.ndarray:
    """``floor(v / step)`` of each value, exactly: the number ``k`` of the grid point ``k * step`` at or below ``v``
    on the grid of multiples of ``step``.  A quotient rounded across a whole number (``5000000001 / 1`` is exact,
    ``v / 86400`` need not be) is corrected by comparing ``v`` with the multiples themselves, which are exact."""
    values = np.asarray(values, dtype=np.float64)
    k = np.floor(values / step)
    k = np.where(k * step > values, k - 1, k)
    return np.where((k + 1) * step <= values, k + 1, k)


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

    @property
    def value_step(self) -> float | None:
        """The spacing of the column's values at its public precision: 1 for an integer column, one unit of a
        datetime column without a time zone (:attr:`date_unit`), ``10**-decimals`` for a real column with
        decimals; None otherwise.  Public: the schema only, never the values."""
        if value_kind(self.dtype) == "int":
            return 1.0
        if self.is_datetime and self.time_zone is None:
            return float(self.date_unit)
        return 10.0 ** -self.decimals if self.decimals is not None else None

    @property
    def grid_step(self) -> float | None:
        """:attr:`value_step` where every value is an exact multiple of it in floating point (integer columns
        and datetime columns without a time zone), else None: such a column is split by PrivTree on its grid
        (docs/privacy.md §10.3) and its values inside a cell are drawn from the grid points the cell holds."""
        return None if self.decimals is not None else self.value_step

    @cached_property
    def grid_ranges(self) -> tuple[np.ndarray, np.ndarray]:
        """The first and last grid point (in steps of :attr:`grid_step`) of each bin, the last bin closed
        (``first > last`` when a bin holds none); the integers of each bin for an integer column."""
        step, edges = self.grid_step, self.edges
        first = -grid_numbers(-edges[:-1], step)  # the least grid point at or above each lower edge
        last = -grid_numbers(-edges[1:], step) - 1
        last[-1] = grid_numbers(edges[-1:], step)[0]
        return first.astype(np.int64), last.astype(np.int64)

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
        unit = self.value_step
        if unit is None:  # a real column without a precision: only point cells hold one value
            single = edges[1:] <= np.nextafter(edges[:-1], np.inf)
        else:  # a cell holding one step of the grid, or a point cell [v, v+) of a value off the grid (§11.2)
            first, last = self.grid_ranges if self.grid_step is not None else _integer_ranges(np.round(edges / unit, 9))
            single = (first == last) | (edges[1:] <= np.nextafter(edges[:-1], np.inf))
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



def label_order(label: str) -> tuple:
    """A fixed total order on labels: numbers (canonical labels) by value, then text."""
    try:
        number = float(label)
    except ValueError:
        return (1, 0.0, label)
    return (0, number, label) if math.isfinite(number) and category_label(number) == label else (1, 0.0, label)

