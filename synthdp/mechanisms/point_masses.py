"""Point masses of numeric columns: values many rows hold, kept as cells of their own (docs/privacy.md §11.2).

A zero-inflated amount or a round 5000 falls inside one of PrivTree's cells,
whose values are then drawn over the cell's width: the zeros and the round
values are lost. Here the (column, value) keys of the columns to discretise
are selected by the Gaussian partition selection of docs/privacy.md §10.5
(Theorem 10.2 with the numeric columns as the columns), inside the zCDP
filter, before PrivTree; each kept value ``v`` becomes the cell ``[v, v+)``
(``v + 1`` for an integer column, the next day for a column of dates:
one step of its grid; the next float otherwise), and PrivTree
runs over the rows whose value was not kept. Under the public cell cap ``K``
a column keeps at most ``floor((K - 1) / 2)`` values, those of largest noisy
count, so that it holds at most ``K`` cells.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from fractions import Fraction

import numpy as np

from synthdp.accounting.ledger import ADD_REMOVE
from synthdp.core.attribute import grid_numbers
from synthdp.core.errors import InputError
from synthdp.core.schema import Schema
from synthdp.core.tallies import NumberTally, Tallies
from synthdp.mechanisms.gaussian import discrete_gaussian_array
from synthdp.mechanisms.partition import JointSelection, joint_selection
from synthdp.mechanisms.randomness import PrivateRandom

__all__ = ["POINT_MASS_DELTA_SHARE", "POINT_MASS_RHO_SHARE", "PointMasses", "merged_cuts", "most_point_masses",
           "outside", "point_cuts", "point_mass_selection", "select_point_masses"]

log = logging.getLogger(__name__)

#: Public share of the zCDP filter's rho spent on selecting point masses (docs/privacy.md §11.2).
POINT_MASS_RHO_SHARE = Fraction(1, 20)
#: Public share of the user's delta reserved for selecting point masses (docs/privacy.md §11.2).
POINT_MASS_DELTA_SHARE = Fraction(1, 8)


@dataclass(frozen=True)
class PointMasses:
    """The kept values of each column (sorted; released) and the selection's public parameters."""

    values: dict[str, tuple[float, ...]]
    selection: JointSelection

    @property
    def rho(self) -> Fraction:
        """What the selection charged to the zCDP filter."""
        return self.selection.rho

    def to_dict(self) -> dict:
        return {"values": {c: list(v) for c, v in self.values.items()}, **self.selection.to_dict()}


def point_mass_selection(*, rho: Fraction, delta: Fraction, columns: int, relation: str = ADD_REMOVE,
                         contribution_bound: int = 1) -> JointSelection:
    """The public scale and threshold of the selection over ``columns`` numeric columns (docs/privacy.md §11.2).

    ``rho`` is the filter's total and ``delta`` the user's; the selection takes
    :data:`POINT_MASS_RHO_SHARE` of the one and :data:`POINT_MASS_DELTA_SHARE`
    of the other. Refused at ``delta = 0`` (the Gaussian selection needs a delta).
    Nothing here depends on the data or on ``n``.
    """
    if not delta:
        raise InputError("selecting point masses privately needs delta > 0 (docs/privacy.md §11.2)")
    return joint_selection(rho=rho, delta=Fraction(delta) * POINT_MASS_DELTA_SHARE, columns=columns,
                           relation=relation, contribution_bound=contribution_bound, share=POINT_MASS_RHO_SHARE)


def _keys(tally: NumberTally, bounds: tuple[float, float]) -> NumberTally:
    """The tally by canonical key: values clamped into the public bounds as encoding will, ``-0.0`` as ``0.0``."""
    clipped = tally.clipped(bounds)
    return NumberTally.of(clipped.values + 0.0, clipped.counts)


def most_point_masses(max_cells: int | None) -> int | None:
    """``floor((K - 1) / 2)``: the most point masses a column may keep under the public cell cap ``K``
    (``max_cells``; None: no cap), so that its tree keeps a cap ``K - 2 |kept| >= 1`` and the column at most ``K``
    cells, the missing cell apart (docs/privacy.md §11.2)."""
    return None if max_cells is None else (max_cells - 1) // 2


def _largest(values: np.ndarray, noisy: np.ndarray, threshold: int, most: int | None) -> tuple[float, ...]:
    """The ``values`` whose ``noisy`` count reaches ``threshold``, and of them, past ``most``, the ``most`` of largest
    noisy count, equal counts by the smaller value (post-processing of the noisy counts, docs/privacy.md §11.2);
    increasing."""
    passed = noisy >= threshold
    candidates, scores = values[passed], noisy[passed]
    if most is not None and len(candidates) > most:
        candidates = np.sort(candidates[np.lexsort((candidates, -scores))[:most]])
    return tuple(float(v) for v in candidates)


def select_point_masses(tallies: Tallies, schema: Schema, *, selection: JointSelection, rng: PrivateRandom,
                        ledger, relation: str = ADD_REMOVE, max_cells: int | None = None) -> PointMasses:
    """Select the point masses of every column of ``schema.to_discretise`` (docs/privacy.md §11.2).

    ``ledger`` is the method's zCDP filter: ``selection.rho`` is charged before
    any noise. Every (column, value) key present draws its own discrete
    Gaussian noise, columns in schema order (each from its own child stream)
    and values in increasing order; a value is kept iff its count plus the noise
    reaches the threshold, and, under the public cell cap ``max_cells``, it is
    among the :func:`most_point_masses` of its column of largest noisy count.
    Only the kept values are returned.
    """
    columns = schema.to_discretise
    if len(columns) != selection.columns:
        raise InputError(f"the point-mass selection was planned for {selection.columns} columns, the schema has "
                         f"{len(columns)} to discretise")
    if selection.contribution_bound != ledger.contribution_bound:
        raise InputError(f"the selection was planned for units of {selection.contribution_bound} rows, the ledger "
                         f"charges units of {ledger.contribution_bound}")
    ledger.charge("point-mass-selection", selection.rho, relation,
                  f"{len(columns)} numeric columns, sigma2={selection.sigma2}, threshold {selection.threshold}")
    kept, most = {}, most_point_masses(max_cells)
    for column in columns:
        keys = _keys(tallies.numbers[column], schema[column].bounds)
        noisy = keys.counts + discrete_gaussian_array(len(keys.values), selection.sigma2, rng.spawn())
        kept[column] = _largest(keys.values, noisy, selection.threshold, most)
    log.info("selected point masses of %d numeric column(s), threshold %d", len(columns), selection.threshold)
    return PointMasses(kept, selection)


def outside(tally: NumberTally, kept: tuple[float, ...], bounds: tuple[float, float]) -> NumberTally:
    """The rows of ``tally`` (clamped into ``bounds``) whose value is not a released point mass: PrivTree's input.

    Reads the released set only (docs/privacy.md §11.2): a row-by-row filter.
    """
    keys = _keys(tally, bounds)
    stay = ~np.isin(keys.values, np.asarray(kept, dtype=np.float64))
    return NumberTally(keys.values[stay], keys.counts[stay])


def _above(value: float, step: float | None) -> float:
    """``v+``: the least number above ``value`` that a column of this type can hold: one ``step`` of its public
    grid (:attr:`~synthdp.core.attribute.Attribute.grid_step`) for a value on it, else the next float (a time of
    day in a column of dates: its cell must not reach the next midnight)."""
    on_grid = step is not None and grid_numbers(np.array([value]), step)[0] * step == value
    return value + step if on_grid else float(np.nextafter(value, np.inf))


def point_cuts(kept: tuple[float, ...], bounds: tuple[float, float], *, step: float | None) -> tuple[float, ...]:
    """The cut points that make each kept value ``v`` the cell ``[v, v+)``: ``v`` and ``v+``, strictly above the
    lower bound and at most the upper one (at the upper bound, the last cell ``[v, u]``)."""
    lo, hi = bounds
    cuts = {c for v in kept for c in (v, _above(v, step)) if lo < c <= hi}
    return tuple(sorted(cuts))


def merged_cuts(tree: tuple[float, ...], kept: tuple[float, ...], bounds: tuple[float, float], *,
                step: float | None) -> tuple[float, ...]:
    """The column's cut points: the tree's and the point cells' (docs/privacy.md §11.2); a kept value leaves the
    tree's cell it fell in, which is split around it."""
    return tuple(sorted(set(tree) | set(point_cuts(kept, bounds, step=step))))

