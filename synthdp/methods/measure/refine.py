"""Refined readings of a coarse twin: finer cells where the released counts say the rows are (docs/privacy.md §11.1).

A coarse twin (§8.11) reads numeric columns through ``coarse_groups`` groups
each, so the model learns nothing of their joint shape inside a group cell:
three lengths of one item, which move together, come out independent within
each block.
A refined reading measures the twin (level 0), then, level by level, every
child of the cells whose *released* noisy count passes a public threshold,
empty children included, down to the fine cells.

A level is a reading of the fine marginal through a public partial
partition: a label per fine cell, the measured cell it lies in or -1.
Cells are products of runs of consecutive codes (one code for a column
without a view), and the split points are a fixed function of a cell's
runs (halves, or every fine cell), never of the data.  The cells of one
level are disjoint, so a record moves at most one count of a level by one:
a level's sensitivity is a marginal's (§8.3), and its cost, fixed from a
public share of the reading's budget, is charged before its noise.
Everything here is a function of the public domain and of released noisy
counts; the true counts are read only by the measuring callable.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable, Sequence

import numpy as np

from synthdp.methods.measure.coarse import GroupMaps, label_sum

#: How a chosen cell is split: every run into its two halves, or straight into its fine cells; or not at all (the
#: twin is read in one measurement).
REFINE_SPLITS = ("halves", "fine", "none")

Runs = tuple[tuple[int, int], ...]  # per attribute, a run of codes [lo, hi)


@dataclass(frozen=True)
class Level:
    """The cells one level measures (each a product of runs, in a fixed order) and their labels on the fine
    cells of the marginal (flattened, row-major; -1: not read by this level)."""

    cells: tuple[Runs, ...]
    labels: np.ndarray

    def read(self, fine: np.ndarray) -> np.ndarray:
        """Counts on the fine cells (flattened) summed over each measured cell."""
        return label_sum(self.labels, fine, len(self.cells))


def _runs(size: int, groups: np.ndarray | None) -> list[tuple[int, int]]:
    """An attribute's level-0 runs: one per code without a view, else one per group (its consecutive codes)."""
    if groups is None:
        return [(c, c + 1) for c in range(size)]
    starts = np.flatnonzero(np.diff(groups, prepend=-1)).tolist()
    return list(zip(starts, starts[1:] + [size]))


def _labels(shape: tuple[int, ...], cells: Sequence[Runs]) -> np.ndarray:
    labels = np.full(shape, -1, dtype=np.int64)
    for j, runs in enumerate(cells):
        region = labels[tuple(slice(lo, hi) for lo, hi in runs)]
        if (region >= 0).any():  # the cells of one level must be disjoint (docs/privacy.md §11.1)
            raise ValueError("overlapping cells in one level")
        region[...] = j
    return labels.reshape(-1)


def first_level(shape: tuple[int, ...], maps: GroupMaps) -> Level:
    """Level 0: the coarse twin's cells, in the row-major order of its groups (the order of ``group_sum``)."""
    cells = tuple(itertools.product(*(_runs(size, m) for size, m in zip(shape, maps))))
    return Level(cells, _labels(shape, cells))


def _pieces(run: tuple[int, int], split: str) -> list[tuple[int, int]]:
    lo, hi = run
    if split == "fine":
        return [(c, c + 1) for c in range(lo, hi)]
    if hi - lo < 2:
        return [run]
    mid = lo + (hi - lo + 1) // 2
    return [(lo, mid), (mid, hi)]


def children(cell: Runs, split: str) -> list[Runs]:
    """The children of ``cell`` by the public ``split`` rule: a fixed function of its runs."""
    return list(itertools.product(*(_pieces(run, split) for run in cell)))


def next_level(shape: tuple[int, ...], level: Level, noisy: np.ndarray, sigma2: Fraction, threshold: float,
               split: str) -> Level | None:
    """Every child of the level's cells that hold more than one fine cell and whose released noisy count is at least
    ``threshold * sqrt(sigma2)``; None when no cell is chosen.  Reads released values and the public domain only."""
    bar = threshold * math.sqrt(float(sigma2))
    chosen = [cell for cell, y in zip(level.cells, noisy)
              if y >= bar and math.prod(hi - lo for lo, hi in cell) > 1]
    if not chosen:
        return None
    cells = tuple(child for cell in chosen for child in children(cell, split))
    return Level(cells, _labels(shape, cells))


def depth(shape: tuple[int, ...], maps: GroupMaps, split: str) -> int:
    """Levels below the twin (public: from the domain): 1 straight into the fine cells, else as many halvings as
    the longest group run needs."""
    longest = max((hi - lo for size, m in zip(shape, maps) if m is not None for lo, hi in _runs(size, m)), default=1)
    if longest < 2 or split == "none":
        return 0
    return 1 if split == "fine" else math.ceil(math.log2(longest))


def level_shares(share: Fraction, coarse_share: Fraction, levels: int) -> list[Fraction]:
    """The reading's ``share`` of the budget by level, fixed before the first draw: ``coarse_share`` of it to the
    twin, the rest in equal parts to the ``levels`` below (exact rationals summing to ``share``)."""
    if levels == 0:
        return [share]
    return [coarse_share * share] + [(1 - coarse_share) * share / levels] * levels


def one_grouped(maps: GroupMaps) -> bool:
    """Whether a twin may have its levels chosen by its spread (docs/privacy.md §11.1 step 0): it reads exactly one
    column through groups and at least one other cell by cell.  Public: the views."""
    return len(maps) >= 2 and sum(m is not None for m in maps) == 1


def spread(noisy: np.ndarray, shape: tuple[int, ...], maps: GroupMaps) -> float | None:
    """The released level 0's spread (docs/privacy.md §11.1 step 0): over the cells of the columns read cell by
    cell, the mass-weighted mean of the effective number of groups (``(sum v)^2 / sum v^2``) their rows fill in the
    one grouped column, over the effective number its rows fill; negative counts read as 0.  None when nothing is
    positive.  ``noisy`` is level 0 in the order of :func:`first_level`; reads released counts and the domain only."""
    sizes = tuple(len(_runs(size, m)) for size, m in zip(shape, maps))
    g = next(i for i, m in enumerate(maps) if m is not None)
    table = np.moveaxis(np.clip(np.asarray(noisy, dtype=float).reshape(sizes), 0.0, None), g, 0).reshape(sizes[g], -1)
    total = math.fsum(table.ravel().tolist())
    if total <= 0:
        return None

    def effective(counts: np.ndarray) -> float:
        mass = math.fsum(counts.tolist())
        return mass * mass / math.fsum((counts * counts).tolist()) if mass > 0 else 0.0

    within = math.fsum(math.fsum(col.tolist()) * effective(col) for col in table.T)
    return within / (total * effective(table.sum(axis=1)))


def spread_allows(noisy: np.ndarray, shape: tuple[int, ...], maps: GroupMaps, limit: float | None) -> bool:
    """Whether the levels below a released twin run: always without a ``limit``, else when its :func:`spread` is
    defined and at most ``limit`` (docs/privacy.md §11.1 step 0)."""
    if limit is None:
        return True
    found = spread(noisy, shape, maps)
    return found is not None and found <= limit


def pays(expected: np.ndarray, sigma2: Fraction, threshold: float, share: float) -> bool:
    """Whether a twin is worth refining (docs/privacy.md §11.1 step 0): the fitted model's counts on its cells
    ``expected`` put at least ``share`` of their total in cells whose count is at least ``threshold * sqrt(sigma2)``
    (``sigma2`` the first level's scale), the cells a first level would split.  Where the rows spread thin, a level
    finds nothing to split and the twin would only get half its share.  Reads the model (fitted to released
    measurements) and a public scale only; summed with :func:`math.fsum`, the same on every CPU."""
    counts = np.clip(np.asarray(expected, dtype=float), 0.0, None)
    total = math.fsum(counts.tolist())
    return total > 0 and math.fsum(counts[counts >= threshold * math.sqrt(float(sigma2))].tolist()) >= share * total


#: Charges, then draws a level's noisy counts: ``(answers, scale, level) -> (measurement, noisy counts)``, or None when
#: the filter cannot pay for it.
Measure = Callable[[np.ndarray, Fraction, int], "tuple[object, np.ndarray] | None"]


def refined_reading(fine: np.ndarray, shape: tuple[int, ...], maps: GroupMaps, shares: Sequence[Fraction], *,
                    scale_for: Callable[[Fraction], Fraction], measure: Measure, threshold: float,
                    split: str, spread_limit: float | None = None) -> list[tuple[object, np.ndarray, Level]]:
    """Measure the twin, then each level below from the released counts of the last, while there is one.

    ``fine``: the exact counts on the marginal's fine cells (flattened).  ``shares``: each level's budget
    (:func:`level_shares`).  ``measure(answers, scale, level)`` charges, then draws (the caller's mechanism); the
    answers of a level are computed from ``fine`` only once its cells are fixed.  Stops at the first level ``measure``
    does not pay for or that chooses no cell.  With ``spread_limit`` (a twin of :func:`one_grouped` maps), the
    levels run only when the released twin's :func:`spread` is at most it; else the shares below read the twin once
    more (docs/privacy.md §11.1 step 0).
    """
    out = []
    level: Level | None = first_level(shape, maps)
    for t, share in enumerate(shares):
        scale = scale_for(share)
        drawn = measure(level.read(fine), scale, t)
        if drawn is None:
            break
        m, noisy = drawn
        out.append((m, noisy, level))
        if t == 0 and len(shares) > 1 and not spread_allows(noisy, shape, maps, spread_limit):
            again = measure(level.read(fine), scale_for(sum(shares[1:], Fraction(0))), 0)
            return out if again is None else out + [(again[0], again[1], level)]
        level = next_level(shape, level, noisy, scale, threshold, split) if t + 1 < len(shares) else None
        if level is None:
            break
    return out
