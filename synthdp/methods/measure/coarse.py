"""Coarse views of numeric columns: candidate marginals that read fine cells in groups (docs/privacy.md §8.11).

A numeric column cut into many cells (PrivTree's, or many public bins)
makes every marginal it is in large: two columns of 64 cells make 4,096,
whose expected noise (``sqrt(2/pi) sigma`` a cell) outweighs any correlation
at moderate budgets, so the rounds never select a pair and the release
keeps each column's shape but loses the joint structure.  A *coarse view*
reads such a column through ``groups`` runs of consecutive cells (the public
setting ``MeasureOptions.coarse_groups``), so the pair has ``groups**2``
cells and the rounds can afford it; the column's own fine
cells stay in the model, and the estimator fits the model's counts summed
over the groups to the coarse measurement.

The groups are a fixed function of the public domain (how many ordered
cells a column has), so a coarse marginal is a marginal of a public
function of each record: its sensitivity is a marginal's (§8.3), and
adding it to the candidates changes nothing else in the privacy argument.

A candidate is a tuple of attribute indices in increasing order of the
attributes they read; index ``d + a`` (``d`` attributes) stands for attribute
``a`` read through its groups, ``2 d + a`` for it read through its nested
groups (the covering step's, where a full view has few cells a group).
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np

from synthdp.core.domain import Domain

Marginal = tuple[int, ...]
GroupMaps = tuple[np.ndarray | None, ...]


def group_map(size: int, ordered: int, groups: int) -> np.ndarray:
    """Each code's group: the ``ordered`` first codes in ``groups`` runs of consecutive codes whose lengths differ by at
    most one, every other code (a missing value) in a group of its own after them."""
    codes = np.arange(size, dtype=np.int64)
    return np.where(codes < ordered, codes * groups // max(ordered, 1), groups + codes - ordered)


def group_sum(table: np.ndarray, maps: GroupMaps) -> np.ndarray:
    """``table`` (one axis per attribute) summed over each mapped axis's groups, in the order of the groups' ids; a
    group's codes must be consecutive and the ids rise with the codes (as :func:`group_map`'s do)."""
    for axis, m in enumerate(maps):
        if m is not None:
            table = np.add.reduceat(table, np.flatnonzero(np.diff(m, prepend=-1)), axis=axis)
    return table


def group_spread(table: np.ndarray, maps: GroupMaps) -> np.ndarray:
    """The adjoint of :func:`group_sum`: each group's value copied to every code in it."""
    for axis, m in enumerate(maps):
        if m is not None:
            table = np.take(table, m, axis=axis)
    return table


def label_sum(labels: np.ndarray, fine: np.ndarray, size: int) -> np.ndarray:
    """``fine`` (flattened) summed over each label ``0..size-1`` of a public partial partition of its cells
    (docs/privacy.md §11.1); a cell labelled -1 is not read.  Integer counts stay exact integers."""
    fine = np.asarray(fine).reshape(-1)
    kept = labels >= 0
    out = np.bincount(labels[kept], weights=fine[kept], minlength=size)
    return np.rint(out).astype(np.int64) if np.issubdtype(fine.dtype, np.integer) else out  # exact below 2**53


def label_spread(labels: np.ndarray, values: np.ndarray) -> np.ndarray:
    """The adjoint of :func:`label_sum`: each label's value copied to its cells, 0 in the cells labelled -1."""
    return np.where(labels >= 0, np.asarray(values, dtype=float)[np.maximum(labels, 0)], 0.0)


#: Ordered cells a column needs per group for a full view (docs/privacy.md §8.11 step 1).
FULL_VIEW_CELLS = 2
#: The fewest groups of a covering view.
COVER_VIEW_GROUPS = 3
#: Ordered cells a group under which a full view also has a nested view of half its groups (§8.11 step 1).
NESTED_VIEW_CELLS = 2 * FULL_VIEW_CELLS


def view_groups(ordered: int, groups: int) -> int | None:
    """How many groups a column of ``ordered`` ordered cells is read through (docs/privacy.md §8.11 step 1):
    ``groups`` with at least :data:`FULL_VIEW_CELLS` cells a group (a full view), else ``groups // 2`` when that is at
    least :data:`COVER_VIEW_GROUPS` and the column has at least two cells a group (a covering view), else None (no
    view).  A function of the public domain and the public ``groups`` only.

    Why.  PrivTree cuts a column into few cells when there are few rows (9 to 24 for the credit table's 4,454
    rows, ``synthdp bench numeric``, eps 1, seeds 0-2).  Read cell by cell inside the covering step's 3-way
    marginals, a pair's counts summed to the pair have a noise deviation near 105 against 18 rows a cell, and a
    price and a loan (Pearson 0.76) read a correlation of 0.25 to 0.61 at 0.9 to 3.3 standard errors, too few to
    move together (§8.12).  Both read through 6 groups: 0.68 to 0.85 at 4.4 to 5.1.  Full views from four cells a
    group would read the 24-celled loan through 6 groups too, but cost the skewed table its correlations (§8.11)."""
    if ordered >= FULL_VIEW_CELLS * groups:
        return groups
    half = groups // 2
    return half if half >= COVER_VIEW_GROUPS and ordered >= 2 * half else None


def nested_groups(ordered: int, groups: int) -> int | None:
    """How many nested groups a column of ``ordered`` ordered cells has besides its view (docs/privacy.md §8.11
    step 1): ``groups // 2`` when its view is a full one of fewer than :data:`NESTED_VIEW_CELLS` cells a group and
    that is at least :data:`COVER_VIEW_GROUPS`, else None.  A function of the public domain and ``groups`` only.

    Why.  The covering step reads a few-celled full view inside 3-way marginals beside covering views of half
    the groups: on the credit table (``synthdp bench numeric``, eps 1, seed 1) the 24-celled loan's 12 groups
    against the price's 6 read the pair (Pearson 0.76) at 1.6 standard errors, so the copula left it out and the
    largest Pearson error was 0.538; read through 6 nested groups there (:meth:`CoarseViews.cover_twin`), 0.087.
    The rounds keep the 12 groups, whose twins the skewed table's 24-celled claim needs (a 6-group view in their
    place took its largest Pearson error from 0.227 / 0.259 / 0.323 to 0.153 / 0.392 / 0.485, seeds 0-2)."""
    if view_groups(ordered, groups) != groups or ordered >= NESTED_VIEW_CELLS * groups:
        return None
    half = groups // 2
    return half if half >= COVER_VIEW_GROUPS else None


def nested_map(full: np.ndarray, groups: int, nested: int) -> np.ndarray:
    """Each code's nested group: its group of ``full`` (a :func:`group_map` of ``groups`` ordered groups) read
    through ``nested`` runs of consecutive groups, so each nested group is a union of ``full``'s groups; the
    missing value's group stays one of its own."""
    return group_map(int(full.max()) + 1, groups, nested)[full]


def regroup(source: np.ndarray | None, target: np.ndarray) -> np.ndarray:
    """The map from the groups of ``source`` (a group map; None: every code its own group) to those of
    ``target``, which must nest them (each target group a union of source groups), for :func:`group_sum`."""
    if source is None:
        return target
    ids = np.zeros(int(source.max()) + 1, dtype=target.dtype)
    ids[source] = target
    if not np.array_equal(ids[source], target):
        raise ValueError("a group map can be read through another only when the other's groups are unions of its "
                         "own: read both through the coarser one from the fine cells")
    return ids


class CoarseViews:
    """The coarse views a public domain offers, and how a candidate reads the data through them.

    A column has a full view of ``groups`` groups when it has at least :data:`FULL_VIEW_CELLS` ordered cells a group,
    and with fewer a *covering view* of ``groups // 2`` (:func:`view_groups`); a full view of few cells a group
    also has *nested* groups (:func:`nested_groups`).  The rounds score only full views' twins (:meth:`round_twin`);
    the covering step reads a marginal with a covering view through its columns' nested groups where they have
    them (:meth:`cover_twin`), and the copula reads what they measured through :attr:`copula_maps`.
    ``groups`` is public (``MeasureOptions.coarse_groups``), so the views are a function of public inputs.  A fine
    marginal with a twin and more than
    ``max_fine_cells`` cells (public, ``MeasureOptions.max_fine_cells``; None: no limit) is read through its twin
    only (docs/privacy.md §8.11 step 2)."""

    def __init__(self, domain: Domain, *, groups: int, max_fine_cells: int | None = None):
        self.domain, self.max_fine_cells = domain, max_fine_cells
        ordered = domain.ordered or (0,) * len(domain)
        views = [view_groups(k, groups) for k in ordered]
        self.maps: tuple[np.ndarray | None, ...] = tuple(
            None if g is None else group_map(size, k, g) for size, k, g in zip(domain.sizes, ordered, views))
        #: Whether each column's view is a full one (its twins are candidates of the rounds).
        self.full = tuple(g == groups for g in views)
        #: Each column's nested groups (None: it has none).
        self.nested: tuple[np.ndarray | None, ...] = tuple(
            None if (h := nested_groups(k, groups)) is None else nested_map(m, groups, h)
            for m, k in zip(self.maps, ordered))
        covering = any(m is not None and not f for m, f in zip(self.maps, self.full))
        #: The groups the copula reads each column through (§8.12): its nested ones when it has them and some
        #: column has a covering view (the covering step then reads through them), else its view's.
        self.copula_maps: tuple[np.ndarray | None, ...] = tuple(
            h if h is not None and covering else m for m, h in zip(self.maps, self.nested))

    @classmethod
    def for_options(cls, domain: Domain, options) -> "CoarseViews":
        """The views ``options`` (a ``MeasureOptions``: ``coarse_groups``, ``max_fine_cells``) give ``domain``."""
        return cls(domain, groups=options.coarse_groups, max_fine_cells=options.max_fine_cells)

    def __bool__(self) -> bool:
        return any(m is not None for m in self.maps)

    def coarse(self, r: Marginal) -> Marginal | None:
        """The coarse candidate of the fine marginal ``r`` (every column of it with a view read through its groups),
        or None when ``r`` has fewer than two columns or none with a view."""
        if len(r) < 2 or all(self.maps[a] is None for a in r):
            return None
        d = len(self.domain)
        return tuple(a + d if self.maps[a] is not None else a for a in r)

    def cover_twin(self, r: Marginal) -> Marginal | None:
        """The coarse twin the covering step reads ``r`` through: its :meth:`coarse` twin, with each column that has
        nested groups read through them when a column of ``r`` has a covering view (None where :meth:`coarse` is
        None), so a pair of full views keeps the groups the rounds read it through."""
        twin = self.coarse(r)
        if twin is None or all(self.full[a] for a in r if self.maps[a] is not None):
            return twin
        d = len(self.domain)
        return tuple(a + d if a >= d and self.nested[a - d] is not None else a for a in twin)

    def round_twin(self, r: Marginal) -> Marginal | None:
        """The coarse twin of ``r`` as a candidate of the rounds: its :meth:`coarse` twin when every column read
        through it has a full view, or when ``r`` is read through the twin only (:meth:`read_finely`); else None.
        The rounds keep to full views: on the credit table of ``synthdp bench numeric`` (4,454 rows, eps 1, seeds
        0-2, views of 6 groups) rounds that selected such twins moved the one-way shapes (largest KS 0.084, 0.071,
        0.174; with 4 groups up to 0.238), against 0.083, 0.078, 0.075 with the covering step alone reading
        through them."""
        twin = self.coarse(r)
        if twin is None or all(self.full[a] for a in r if self.maps[a] is not None) or not self.read_finely(r):
            return twin
        return None

    def candidates(self, weights: Mapping[Marginal, int]) -> dict[Marginal, int]:
        """The coarse candidate of the rounds (:meth:`round_twin`) of each fine candidate that has one, with the
        fine candidate's weight."""
        return {c: w for r, w in weights.items() if (c := self.round_twin(r)) is not None}

    def fine_candidates(self, weights: Mapping[Marginal, int]) -> dict[Marginal, int]:
        """The fine candidates that stay candidates: those :meth:`read_finely` allows (docs/privacy.md §8.11 step
        2); the others are read through their twins only."""
        return {r: w for r, w in weights.items() if self.read_finely(r)}

    def read_finely(self, r: Marginal) -> bool:
        """Whether the fine marginal ``r`` may be read cell by cell: it has no coarse twin, or at most
        ``max_fine_cells`` cells (a function of the public domain and the public cap)."""
        return self.max_fine_cells is None or self.coarse(r) is None or self.domain.cells(r) <= self.max_fine_cells

    def counted_cells(self, r: Marginal) -> int:
        """The cells the true counts of fine candidate ``r`` take: its own, or its twin's when it is read through
        the twin only."""
        return self.domain.cells(r) if self.read_finely(r) else self.cells(self.coarse(r))

    def base(self, r: Marginal) -> Marginal:
        """The attributes a candidate reads (sorted)."""
        d = len(self.domain)
        return tuple(a % d for a in r)

    def groups(self, r: Marginal) -> GroupMaps | None:
        """Per attribute of :meth:`base`, its group map or None (read finely); None for a fine candidate."""
        d = len(self.domain)
        if all(a < d for a in r):
            return None
        return tuple(None if a < d else self.maps[a - d] if a < 2 * d else self.nested[a - 2 * d] for a in r)

    def group_counts(self, r: Marginal) -> tuple[int | None, ...] | None:
        """Per attribute of :meth:`base`, how many groups it is read through (None: read finely); None for a fine
        candidate."""
        maps = self.groups(r)
        return None if maps is None else tuple(None if m is None else int(m.max()) + 1 for m in maps)

    def attr_maps(self, attrs: Marginal, counts: Sequence[int | None] | None = None) -> GroupMaps:
        """The group maps a coarse measurement on ``attrs`` reads through: every column with a view is read by it,
        through its nested groups where ``counts`` (its :meth:`group_counts`) says so, else through its view."""
        counts = counts or (None,) * len(attrs)
        return tuple(self.nested[a] if n is not None and self.nested[a] is not None
                     and n == int(self.nested[a].max()) + 1 else self.maps[a] for a, n in zip(attrs, counts))

    def cells(self, r: Marginal) -> int:
        """Cells of the candidate as measured."""
        return math.prod(self.domain.sizes[a] if m is None else int(m.max()) + 1
                         for a, m in zip(self.base(r), self.groups(r) or (None,) * len(r)))

    def read(self, r: Marginal, counts: np.ndarray) -> np.ndarray:
        """Counts on :meth:`base` (flattened) as the candidate reads them (flattened)."""
        maps = self.groups(r)
        if maps is None:
            return counts
        shape = tuple(self.domain.sizes[a] for a in self.base(r))
        return group_sum(np.asarray(counts).reshape(shape), maps).reshape(-1)


def coarse_index(domain: Domain, codes: np.ndarray, attrs: Sequence[int], maps: GroupMaps) -> np.ndarray:
    """Row-major cell index of each row on ``attrs``, each mapped attribute read through its groups: the cells of
    :func:`group_sum`'s output, whose group ids rise with the codes (as :func:`group_map`'s do).  The mixed radix
    is :meth:`Domain.flat_index`'s, on the mapped codes, with its refusal of an index that would wrap."""
    mapped = np.column_stack([codes[:, a] if m is None else m[codes[:, a]] for a, m in zip(attrs, maps)])
    sizes = tuple(domain.sizes[a] if m is None else int(m.max()) + 1 for a, m in zip(attrs, maps))
    grouped = Domain(tuple(domain.names[a] for a in attrs), sizes)
    return grouped.flat_index(mapped, tuple(range(len(attrs))))
