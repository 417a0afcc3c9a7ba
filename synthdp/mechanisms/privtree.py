"""Private discretisation of a numeric column: discrete PrivTree (docs/privacy.md §10.3).

Equal-width bins over generous public bounds put a skewed column into one or
two bins. PrivTree splits the bounded interval where the values are, at a
cost that does not grow with the depth reached. The discrete version of
docs/privacy.md §10.3, for a column with budget ``eps_d`` and fan-out 2:

* noise rate ``a`` = the largest multiple of ``1e-12`` with
  ``a <= (beta - 1) eps_d / (2 beta - 1)`` (rounded **down**), scale ``1/a``;
* decay ``gamma = ceil(ln(beta) / a)`` (rounded **up**, certified with the
  rational bounds of :func:`~synthdp.mechanisms.partition.exp_bounds`), so
  ``e**(-a gamma) <= 1/beta``;
* for each node ``v`` at depth ``h < max_depth`` that can be split:
  ``b(v) = max(c(v) - h gamma, theta - gamma)``; split iff
  ``b(v) + Z_v > theta`` with a fresh ``Z_v ~ DLap(a)``;
* release the cut points (the leaves' boundaries) only.

Theorem 10.1: ``eps_d``-DP under add/remove, ``2 eps_d`` under replace-one.
``theta`` is a constant of this module, never a function of ``n``, or with
``cells_from_total`` a function of a noisy total released before the trees
(docs/privacy.md §13). A column on a
public grid (integers; whole days of a column of dates) splits at grid
points and a node holding one point is a leaf; both rules read the node's
interval and the public schema only.
"""

from __future__ import annotations

import logging
import math
from collections import deque
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pandas as pd

from synthdp.accounting.ledger import ADD_REMOVE, check_relation
from synthdp.accounting.zcdp import ZcdpLedger, epsilon_for_pure
from synthdp.core.attribute import grid_numbers
from synthdp.core.errors import InputError
from synthdp.core.schema import Schema
from synthdp.core.tallies import Tallies, as_tallies
from synthdp.mechanisms.noise import discrete_laplace
from synthdp.mechanisms.partition import exp_bounds
from synthdp.mechanisms.point_masses import PointMasses, merged_cuts, most_point_masses, outside
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.mechanisms.total import threshold_for_total

__all__ = [
    "CELL_CAPS",
    "DISCRETISE_SHARE",
    "FANOUT",
    "MAX_DEPTH",
    "THRESHOLD",
    "DiscretisedColumn",
    "Discretisation",
    "PrivTreeParameters",
    "column_budget",
    "discretise",
    "privtree_cuts",
    "privtree_parameters",
    "split_score",
]

log = logging.getLogger(__name__)

#: Children per split (intervals are halved).
FANOUT = 2
#: Public maximum depth (grid columns stop earlier, at single grid points; the cost does not depend on it).
MAX_DEPTH = 32
#: Public split threshold ``theta``: never a function of ``n`` (a noisy total released before the trees may lower
#: it, docs/privacy.md §13).
THRESHOLD = 0
#: Grid of the noise rate ``a`` (rounded down onto it).
RATE_DENOMINATOR = 10**12


@dataclass(frozen=True)
class PrivTreeParameters:
    """The public parameters of one column's tree (docs/privacy.md §10.3)."""

    epsilon: Fraction
    rate: Fraction
    decay: int
    threshold: int
    max_depth: int
    fanout: int = FANOUT

    def to_dict(self) -> dict:
        return {"epsilon": str(self.epsilon), "rate": str(self.rate), "decay": self.decay,
                "threshold": self.threshold, "max_depth": self.max_depth, "fanout": self.fanout}


def _least_decay(rate: Fraction, fanout: int) -> int:
    """``ceil(ln(fanout) / rate)``: the least integer ``g`` with ``e**(g rate) >= fanout``, certified.

    A ``g`` is accepted only when the *lower* rational bound on ``e**(g rate)``
    reaches ``fanout``, so rounding can only make ``g`` larger (safer).
    """
    def fits(g: int) -> bool:
        return exp_bounds(g * rate)[0] >= fanout

    g = max(1, math.ceil(math.log(fanout) / float(rate)) - 1)
    while not fits(g):
        g += 1
    while g > 1 and fits(g - 1):
        g -= 1
    return g


def privtree_parameters(epsilon: Fraction, *, threshold: int = THRESHOLD, max_depth: int = MAX_DEPTH,
                        fanout: int = FANOUT) -> PrivTreeParameters:
    """Rate ``a`` (rounded down), decay ``gamma`` (rounded up) for a budget ``epsilon`` (docs/privacy.md §10.3)."""
    epsilon = Fraction(epsilon)
    if epsilon <= 0:
        raise InputError(f"PrivTree needs a positive epsilon, got {epsilon}")
    if isinstance(max_depth, bool) or not isinstance(max_depth, int) or max_depth < 1:
        raise InputError(f"max_depth must be a positive integer, got {max_depth!r}")
    if isinstance(threshold, bool) or not isinstance(threshold, int):
        raise InputError(f"threshold must be an integer, got {threshold!r}")
    bound = (fanout - 1) * epsilon / (2 * fanout - 1)
    rate = Fraction(math.floor(bound * RATE_DENOMINATOR), RATE_DENOMINATOR)
    if rate <= 0:
        raise InputError(f"PrivTree budget epsilon={float(epsilon):.3g} is below the rate grid 1e-12; raise epsilon")
    return PrivTreeParameters(epsilon, rate, _least_decay(rate, fanout), threshold, max_depth, fanout)


def split_score(count: int, depth: int, params: PrivTreeParameters) -> int:
    """``b(v) = max(c(v) - h(v) gamma, theta - gamma)``: the biased count a node's split test noises."""
    return max(count - depth * params.decay, params.threshold - params.decay)


def _children(lo: float, hi: float, grid: bool) -> float | None:
    """The split point of the node ``[lo, hi)``, or None when the node cannot be split (public rule).

    A node of a grid holds the grid points ``lo .. hi - 1`` and splits at
    one; a node with one point is a leaf. A real node splits at its midpoint
    while that is strictly inside it.
    """
    if grid:
        return None if hi - lo < 2 else lo + math.ceil((hi - lo) / 2)
    middle = lo + (hi - lo) / 2
    return middle if lo < middle < hi else None


def privtree_cuts(values: np.ndarray, bounds: tuple[float, float], *, step: float | None, params: PrivTreeParameters,
                  rng: PrivateRandom, max_cells: int | None = None,
                  counts: np.ndarray | None = None) -> tuple[float, ...]:
    """The released cut points of one column's tree (docs/privacy.md §10.3), sorted.

    ``values`` are the column's non-missing values, already inside
    ``bounds`` (clipped or checked by the caller), each held by one row or by
    ``counts`` rows (a tally, :class:`~synthdp.core.tallies.NumberTally`:
    the same node counts). ``step``: the column's public grid
    (:attr:`~synthdp.core.attribute.Attribute.grid_step`: 1 for an integer
    column, one day of a column of dates), whose multiples are the only
    split points, or None for a real column (midpoints). Each node draws
    fresh noise from ``rng`` (a stream of the column's own); counts and
    noise are never returned.
    ``max_cells`` (public): the tree stops once it has that many cells, i.e.
    it releases the first ``max_cells - 1`` splits of the whole tree in
    breadth-first order, a function of the whole tree's release
    (post-processing: the same privacy).
    """
    lo, hi = float(bounds[0]), float(bounds[1])
    values = np.asarray(values, dtype=np.float64)
    origin = 0.0
    if step is not None:  # the tree runs over the numbers k of the grid points k * step inside the bounds
        origin = float(-grid_numbers(np.array([-lo]), step)[0])  # the first grid point at or above the lower bound
        lo, hi = 0.0, float(grid_numbers(np.array([hi]), step)[0]) + 1 - origin
        # each value floored onto the grid (a time of day to its day); one below the first grid point (a lower
        # bound off the grid) counts in the first, as the encoder puts it in the first cell
        values = np.clip(grid_numbers(values, step) - origin, 0.0, hi - 1)
    order = np.argsort(values, kind="stable")
    ordered = values[order]
    rows = np.ones(len(values), dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64)[order]
    below = np.concatenate([[0], np.cumsum(rows)])  # below[i]: rows holding the i smallest values
    rate = params.rate
    cuts: list[float] = []
    queue = deque([(lo, hi, 0)])
    while queue and (max_cells is None or len(cuts) + 1 < max_cells):
        left, right, depth = queue.popleft()
        middle = _children(left, right, step is not None) if depth < params.max_depth else None
        if middle is None:
            continue
        end = len(ordered) if right == hi else int(np.searchsorted(ordered, right, side="left"))
        count = int(below[end] - below[np.searchsorted(ordered, left, side="left")])
        noise = discrete_laplace(rate.numerator, rate.denominator, rng)
        if split_score(count, depth, params) + noise > params.threshold:
            cuts.append(middle)
            queue.append((left, middle, depth + 1))
            queue.append((middle, right, depth + 1))
    return tuple(sorted(cuts)) if step is None else tuple(float((origin + k) * step) for k in sorted(cuts))


#: The most cells a tree may release, tried largest first until the plan of a domain whose columns to discretise
#: hold that many cells fits the method's public size limits (``synthdp.api``): then no tree can give a domain the
#: method refuses after PrivTree has spent (docs/privacy.md §10.3).
CELL_CAPS = tuple(2**k for k in range(10, 0, -1))

#: Public share of the method's budget spent on discretising numeric columns, split evenly over them.
DISCRETISE_SHARE = Fraction(1, 10)


def column_budget(*, columns: int, relation: str, rho: Fraction | None = None, epsilon: Fraction | None = None,
                  share: Fraction = DISCRETISE_SHARE) -> Fraction:
    """The per-column ``eps_d`` of PrivTree from the method's budget (public; docs/privacy.md §10.3).

    The same rule gives private bounds their ``eps_b`` with ``share``
    :data:`synthdp.mechanisms.bounds.BOUNDS_SHARE` (§10.4).
    In a zCDP filter of ``rho`` the trees share ``share`` of it:
    each is charged ``eps_d**2 / 2`` (add/remove) or ``2 eps_d**2``
    (replace-one), so ``eps_d = sqrt(2 rho share / J)``, halved under
    replace-one, rounded down onto the rate grid. Under pure composition of
    ``epsilon`` (basic, ahead of the method): ``eps_d = epsilon share / J``,
    halved under replace-one.
    """

    if isinstance(columns, bool) or not isinstance(columns, int) or columns < 1:
        raise InputError(f"columns must be a positive integer, got {columns!r}")
    if (rho is None) == (epsilon is None):
        raise InputError("give exactly one of rho (a zCDP filter) and epsilon (pure composition)")
    factor = 1 if check_relation(relation) == ADD_REMOVE else 2
    if rho is not None:
        return epsilon_for_pure(Fraction(rho) * share / columns, RATE_DENOMINATOR) / factor
    return Fraction(epsilon) * share / (columns * factor)


@dataclass(frozen=True)
class DiscretisedColumn:
    """What discretising one column cost and gave (all of it releasable)."""

    column: str
    parameters: PrivTreeParameters
    cells: int
    charge: str
    max_cells: int | None = None
    point_masses: tuple[float, ...] = ()

    def to_dict(self) -> dict:
        return {"column": self.column, "cells": self.cells, "max_cells": self.max_cells, "charge": self.charge,
                "point_masses": list(self.point_masses), **self.parameters.to_dict()}


@dataclass(frozen=True)
class Discretisation:
    """The schema with learned cut points, and per column what PrivTree charged (docs/privacy.md §10.3).

    ``epsilon`` is the pure total charged ahead (basic composition) and
    ``rho`` the total charged to a zCDP filter (the trees' and the point-mass
    selection's, docs/privacy.md §11.2); one of them is 0.
    """

    schema: Schema
    columns: tuple[DiscretisedColumn, ...]
    epsilon: Fraction
    rho: Fraction
    point_masses: PointMasses | None = None


def discretise(data: pd.DataFrame | Tallies, schema: Schema, *, epsilon: Fraction, rng: PrivateRandom, ledger,
               relation: str = ADD_REMOVE, max_cells: int | None = None,
               point_masses: PointMasses | None = None, noisy_total: int | None = None) -> Discretisation:
    """Learn the cells of every column of ``schema.to_discretise`` by PrivTree (docs/privacy.md §10.3).

    ``data``: the table, or its tallies (:class:`~synthdp.core.tallies.Tallies`, §10.7), whose values are
    clamped here into bounds learned after they were taken.

    ``epsilon`` is each column's ``eps_d`` (:func:`column_budget`). ``ledger``
    is the run's :class:`~synthdp.accounting.ledger.Ledger` (each tree a
    pure spend recorded ahead of the method, basic composition) or the
    method's :class:`~synthdp.accounting.zcdp.ZcdpLedger` (each tree charged
    ``eps**2/2`` of its filter). With units of ``k = ledger.contribution_bound``
    rows the trees run at ``eps_d / k`` (group privacy, §10.6) and are charged
    ``eps_d``. Every value is checked (bounds, numbers)
    before any charge or noise; each column draws from its own child stream.
    ``max_cells`` (public): the most cells each column may hold (:func:`privtree_cuts`).
    ``point_masses``: values already released as cells of their own (docs/privacy.md §11.2), at most
    :func:`~synthdp.mechanisms.point_masses.most_point_masses` per column (refused otherwise, before any charge);
    the tree of a column runs over the rows outside them, with at most ``max_cells - 2 |kept|`` cells (at least 1),
    and the kept values' cut points (at most two each) are added to its own: at most ``max_cells`` cells in all.
    ``noisy_total``: the total released before the domain steps (docs/privacy.md §13), whose
    :func:`~synthdp.mechanisms.total.threshold_for_total` is then the trees' threshold (nothing else, no cost,
    depends on it); None: :data:`THRESHOLD`.
    """

    columns = schema.to_discretise
    tallies = as_tallies(data, schema)
    kept = {c: () if point_masses is None else point_masses.values[c] for c in columns}
    most = most_point_masses(max_cells)
    crowded = [c for c in columns if most is not None and len(kept[c]) > most]
    if crowded:
        raise InputError(f"columns {crowded} keep more than {most} point masses, the most a cap of {max_cells} cells "
                         f"leaves room for (docs/privacy.md §11.2): select them under the same cap, "
                         f"select_point_masses(..., max_cells={max_cells})")
    values = {c: outside(tallies.numbers[c], kept[c], schema[c].bounds) for c in columns}
    # units of k rows (docs/privacy.md §10.6): group privacy, each tree eps_d / k per row, eps_d per unit
    params = privtree_parameters(Fraction(epsilon) / ledger.contribution_bound)
    if noisy_total is not None:  # docs/privacy.md §13: the threshold alone, from the released total
        theta = threshold_for_total(noisy_total, params.decay, params.max_depth)
        params = privtree_parameters(params.epsilon, threshold=theta, max_depth=params.max_depth)
    factor = 1 if check_relation(relation) == ADD_REMOVE else 2
    cuts, done = {}, []
    for column in columns:
        attr = schema[column]
        note = f"column {column!r}, rate {params.rate}, decay {params.decay}, threshold {params.threshold}"
        if isinstance(ledger, ZcdpLedger):
            event = ledger.spend("privtree", factor * Fraction(epsilon), Fraction(0), relation, note)
            charge = f"rho={event.rho}"
        else:
            ledger.spend("privtree", factor * Fraction(epsilon), Fraction(0), relation, note, ahead=True)
            charge = f"epsilon={factor * Fraction(epsilon)}"
        cap = None if max_cells is None else max_cells - 2 * len(kept[column])
        tree = privtree_cuts(values[column].values, attr.bounds, step=attr.grid_step, params=params, rng=rng.spawn(),
                             max_cells=cap, counts=values[column].counts)
        cuts[column] = merged_cuts(tree, kept[column], attr.bounds, step=attr.grid_step)
        done.append(DiscretisedColumn(column, params, len(cuts[column]) + 1, charge, max_cells, kept[column]))
    zcdp = isinstance(ledger, ZcdpLedger)
    total = factor * Fraction(epsilon) * len(columns)
    rho = sum((factor * Fraction(epsilon)) ** 2 / 2 for _ in columns) if zcdp else Fraction(0)
    rho += Fraction(0) if point_masses is None else point_masses.rho
    log.info("discretised %d numeric column(s) by PrivTree at eps_d=%s each", len(columns), params.epsilon)
    return Discretisation(schema.with_cuts(cuts), tuple(done), Fraction(0) if zcdp else total, Fraction(rho),
                          point_masses)
