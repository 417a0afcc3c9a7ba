"""The public domain of a table: attribute names, value counts and value labels.

Every later step works on integer codes ``0..size-1`` per attribute; the
domain is the only place that knows how many values an attribute has and
how to print them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np

from synthdp.core.errors import SchemaError
from synthdp.core.keys import check_index_range


@dataclass(frozen=True)
class Domain:
    """Attribute names, their number of values, and optional readable labels.

    ``labels[a][v]`` is how value ``v`` of attribute ``a`` is printed; when
    ``labels`` is empty the code itself is printed.  ``ordered[a]`` is how
    many of attribute ``a``'s first codes are cells of a line, in order (a
    numeric column's cells, not its missing value; 0 for a categorical
    column); empty when nothing says so.  ``one_value[a]`` are the codes of
    attribute ``a``'s ordered cells that hold a single value of its public
    precision (one integer, one day of a date: docs/privacy.md §8.7), and
    ``widths[a]`` the widths of those cells in the column's units; each empty
    when nothing says so.  All are public: they come from the schema, never
    from the data.
    """

    names: tuple[str, ...]
    sizes: tuple[int, ...]
    labels: tuple[tuple[str, ...], ...] = field(default=(), compare=False)
    ordered: tuple[int, ...] = field(default=(), compare=False)
    one_value: tuple[tuple[int, ...], ...] = field(default=(), compare=False)
    widths: tuple[tuple[float, ...], ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "names", tuple(str(n) for n in self.names))
        object.__setattr__(self, "sizes", tuple(int(s) for s in self.sizes))
        object.__setattr__(self, "labels", tuple(tuple(map(str, lab)) for lab in self.labels))
        if len(self.names) != len(self.sizes):
            raise SchemaError(f"domain has {len(self.names)} names but {len(self.sizes)} sizes")
        if len(set(self.names)) != len(self.names):
            dup = sorted({n for n in self.names if self.names.count(n) > 1})
            raise SchemaError(f"duplicate attribute names in domain: {dup}")
        for name, size in zip(self.names, self.sizes):
            if size < 1:
                raise SchemaError(f"attribute {name!r} has size {size}; every attribute needs at least one value")
        if self.labels and [len(lab) for lab in self.labels] != list(self.sizes):
            raise SchemaError("domain labels must give one label per value of every attribute")
        object.__setattr__(self, "ordered", tuple(int(k) for k in self.ordered))
        if self.ordered and (len(self.ordered) != len(self.sizes)
                             or any(not 0 <= k <= s for k, s in zip(self.ordered, self.sizes))):
            raise SchemaError("domain ordered counts must give, for every attribute, between 0 and its size codes")
        object.__setattr__(self, "one_value", tuple(tuple(int(c) for c in codes) for codes in self.one_value))
        if self.one_value and (len(self.one_value) != len(self.sizes) or not self.ordered
                               or any(not 0 <= c < k for codes, k in zip(self.one_value, self.ordered) for c in codes)):
            raise SchemaError("domain one-value cells must give, for every attribute, codes of its ordered cells")
        object.__setattr__(self, "widths", tuple(tuple(float(w) for w in cells) for cells in self.widths))
        if self.widths and (len(self.widths) != len(self.sizes) or not self.ordered
                            or any(len(w) not in (0, k) for w, k in zip(self.widths, self.ordered))):
            raise SchemaError("domain cell widths must give, for every attribute, none or one per ordered cell")

    @classmethod
    def from_sizes(cls, sizes: dict[str, int]) -> "Domain":
        """A domain from a private-pgm style mapping ``{attribute: size}``."""
        return cls(tuple(sizes), tuple(sizes.values()))

    def __len__(self) -> int:
        return len(self.names)

    @cached_property
    def offsets(self) -> np.ndarray:
        """Index of each attribute's first one-hot column."""
        return np.concatenate([[0], np.cumsum(self.sizes)[:-1]]).astype(np.int64)

    @property
    def n_onehot(self) -> int:
        """Width of the one-hot encoding (sum of sizes)."""
        return int(sum(self.sizes))

    def index(self, name: str) -> int:
        """Position of attribute ``name``; a clear error when it is unknown."""
        try:
            return self.names.index(name)
        except ValueError:
            raise SchemaError(f"unknown column {name!r}; the domain has {list(self.names)}") from None

    def label(self, attr: int, value: int) -> str:
        """Readable label of ``value`` of attribute number ``attr``."""
        return self.labels[attr][value] if self.labels else str(value)

    def literal(self, attr: int, value: int) -> str:
        """``name=label``, the way queries print a condition."""
        return f"{self.names[attr]}={self.label(attr, value)}"

    def check_codes(self, codes: np.ndarray) -> np.ndarray:
        """Validate an ``(n, len(domain))`` integer code matrix and return it as int64.

        Raises a :class:`SchemaError` naming the first offending row and column.
        """
        codes = np.asarray(codes)
        if codes.ndim != 2 or codes.shape[1] != len(self):
            raise SchemaError(f"expected codes of shape (n, {len(self)}), got {codes.shape}")
        if codes.size and not np.issubdtype(codes.dtype, np.integer):
            raise SchemaError(f"codes must be integers, got dtype {codes.dtype}")
        codes = codes.astype(np.int64, copy=False)
        bad = (codes < 0) | (codes >= np.asarray(self.sizes, dtype=np.int64))
        if bad.any():
            row, col = map(int, np.argwhere(bad)[0])
            raise SchemaError(
                f"value {int(codes[row, col])} in row {row}, column {self.names[col]!r} is outside "
                f"its declared domain 0..{self.sizes[col] - 1}"
            )
        return codes

    def onehot(self, codes: np.ndarray) -> np.ndarray:
        """One-hot encode codes into an ``(n, n_onehot)`` uint8 matrix."""
        codes = np.asarray(codes, dtype=np.int64)
        out = np.zeros((codes.shape[0], self.n_onehot), dtype=np.uint8)
        rows = np.arange(codes.shape[0])[:, None]
        out[rows, codes + self.offsets[None, :]] = 1
        return out

    def cells(self, attrs: tuple[int, ...]) -> int:
        """Number of cells of the marginal on ``attrs``."""
        return int(np.prod([self.sizes[a] for a in attrs], dtype=object))

    def flat_index(self, codes: np.ndarray, attrs: tuple[int, ...]) -> np.ndarray:
        """Row-major cell index of each row's values on ``attrs`` (mixed radix, int64).

        Refuses a marginal of ``2**63`` cells or more, whose index would wrap
        and merge distinct cells (docs/privacy.md §10.1); whole rows are keyed
        by :func:`synthdp.core.keys.pack` instead.
        """
        check_index_range(self.cells(attrs), f"the marginal on {tuple(attrs)}")
        idx = np.zeros(codes.shape[0], dtype=np.int64)
        for a in attrs:
            idx = idx * self.sizes[a] + codes[:, a]
        return idx
