"""An explicit workload: every cell of a listed set of marginals.

For example the 64 random 3-way marginals of ADULT used by FEM, RAP and
GEM (458,996 cells).  The queries are :class:`~synthdp.queries.conjunctions.Conjunction`
objects, so the conjunction evaluation, answers and separator apply.

**Cell order.**  Each marginal's attributes are sorted by their position in
the domain (the order of a conjunction's literals); marginals keep the order
in which they were listed.  The flat cell index runs over the marginals in
that order and, inside a marginal, over its cells in row-major order of the
sorted attributes (the last attribute varies fastest), as
:meth:`Workload.cell_answers` returns them.
"""

from __future__ import annotations

import itertools
from typing import Iterable, Sequence

import numpy as np

from synthdp.queries.base import Separator
from synthdp.queries.conjunctions import Conjunction, Conjunctions, _value_bits, is_int
from synthdp.core.data import weighted_bincount
from synthdp.core.domain import Domain
from synthdp.core.errors import InputError, SchemaError


class Workload(Conjunctions):
    """The cells of the marginals on ``attr_tuples`` (tuples of attribute indices)."""

    listed_cells = True

    def __init__(self, domain: Domain, attr_tuples: Iterable[Sequence[int]], *, name: str | None = None):
        marginals: list[tuple[int, ...]] = []
        position: dict[tuple[int, ...], int] = {}  # a list scan here made 1.3M marginals take minutes
        for i, attrs in enumerate(attr_tuples):
            attrs = tuple(attrs)
            if not all(is_int(a) and 0 <= a < len(domain) for a in attrs) or len(set(attrs)) != len(attrs):
                raise InputError(f"workload marginal #{i} {attrs}: attributes must be distinct integers "
                                 f"in 0..{len(domain) - 1}")
            key = tuple(sorted(int(a) for a in attrs))
            if key in position:
                raise InputError(f"workload marginal #{i} {attrs} repeats marginal #{position[key]}")
            position[key] = len(marginals)
            marginals.append(key)
        if not marginals:
            raise InputError("a workload needs at least one marginal")
        widths = [len(m) for m in marginals]
        super().__init__(domain, min_width=min(widths), max_width=max(widths))
        #: The marginals, each a sorted tuple of attribute indices.
        self.marginal_attrs: tuple[tuple[int, ...], ...] = tuple(marginals)
        self._marginal_set = frozenset(marginals)
        self.shapes = [tuple(domain.sizes[a] for a in m) for m in marginals]
        #: ``cell_offsets[i]`` is the flat index of the first cell of marginal ``i``.
        self.cell_offsets = np.concatenate([[0], np.cumsum([domain.cells(m) for m in marginals])]).astype(np.int64)
        self.name = name or f"workload[{len(marginals)} marginals]"
        used = {a for m in marginals for a in m}
        #: Which conjunction-separator coordinates are kept: those of the attributes the workload uses.
        self._kept = np.repeat([a in used for a in range(len(domain))], [_value_bits(s) for s in domain.sizes])

    @classmethod
    def from_names(cls, domain: Domain, name_tuples: Iterable[Sequence[str]], *, name: str | None = None) -> "Workload":
        """A workload from tuples of attribute *names*; unknown names raise :class:`InputError`."""
        tuples = []
        for i, names in enumerate(name_tuples):
            if not isinstance(names, (list, tuple)):
                raise InputError(f"workload marginal #{i} must be a list of attribute names, got {names!r}")
            try:
                tuples.append(tuple(domain.index(n) for n in names))
            except SchemaError as exc:
                raise InputError(f"workload marginal #{i} {list(names)}: {exc}") from None
        return cls(domain, tuples, name=name)

    @property
    def n_cells(self) -> int:
        return int(self.cell_offsets[-1])

    # ----- whole-workload evaluation ---------------------------------------
    def marginals(self, codes: np.ndarray, weights: np.ndarray) -> list[np.ndarray]:
        """Exact integer table of ``sum_r weights[r] [x_r in cell]`` for each marginal."""
        codes = np.asfortranarray(codes, dtype=np.int64)  # column reads are contiguous
        return [
            weighted_bincount(self.domain.flat_index(codes, attrs), weights, self.domain.cells(attrs)).reshape(shape)
            for attrs, shape in zip(self.marginal_attrs, self.shapes)
        ]

    def cell_answers(self, codes: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """All cells' weighted counts as one flat int64 array, in the module's cell order."""
        return np.concatenate([t.reshape(-1) for t in self.marginals(codes, weights)])

    def query_at(self, index: int) -> Conjunction:
        """The conjunction of flat cell ``index`` (inverse of the cell order)."""
        if not (is_int(index) and 0 <= index < self.n_cells):
            raise IndexError(f"cell index {index!r} outside 0..{self.n_cells - 1}")
        i = int(np.searchsorted(self.cell_offsets, index, side="right")) - 1
        values = np.unravel_index(int(index - self.cell_offsets[i]), self.shapes[i])
        return Conjunction(tuple((a, int(v)) for a, v in zip(self.marginal_attrs[i], values)))

    # ----- separator ----------------------------------------------------------
    def separator(self) -> Separator:
        """The conjunction separator restricted to the attributes the workload mentions.

        A point ``e[a, b]`` of an attribute ``a`` that no marginal mentions
        is 1 on every workload query, so it separates nothing; the proof of
        the conjunction separator only uses points of attributes carrying a
        literal.  ``m = sum over used attributes of bit_length(size_a)``.
        """
        full = super().separator()
        return Separator(int(self._kept.sum()), full.points[self._kept], f"{full.argument}\n\n{self.separator.__doc__}")

    def signature(self, queries: Sequence[Conjunction]) -> np.ndarray:
        return super().signature(queries)[:, self._kept]

    # ----- enumeration and membership -------------------------------------
    def size(self) -> int:
        return self.n_cells

    def _enumerate(self):
        for attrs, shape in zip(self.marginal_attrs, self.shapes):
            for values in itertools.product(*map(range, shape)):
                yield Conjunction(tuple(zip(attrs, values)))

    def contains(self, query) -> bool:
        return super().contains(query) and query.attrs in self._marginal_set
