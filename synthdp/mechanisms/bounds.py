"""Private bounds of a numeric column when none are given (docs/privacy.md §10.4).

Bounds read off the data (the minimum and maximum) are two records' values.
When the owner has no public bounds, a range is learned with a noisy
histogram over a public logarithmic grid ``G`` that partitions the real line:
``(-inf, -2**(K1+1))``, ``[-2**(i+1), -2**i)`` and ``[2**i, 2**(i+1))`` for
``i = -K0 .. K1``, ``[-2**-K0, 2**-K0)`` (it holds 0), ``[2**(K1+1), inf)``.
Every bucket, empty or not, gets ``DLap(eps_b)`` noise; the buckets whose noisy count reaches the public threshold
``ceil(ln(|G| / (2 beta)) / eps_b)`` are kept and the bounds are their hull,
the overflow buckets meaning clipping at ``+-2**(K1+1)``. Only the bounds are
released. A histogram of L1 sensitivity 1 (2 under replace-one) with that
noise is ``eps_b``-DP (``2 eps_b``), and that is what is charged; the rest is
post-processing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
import pandas as pd

from synthdp.accounting.ledger import ADD_REMOVE, check_relation
from synthdp.accounting.zcdp import ZcdpLedger
from synthdp.core.data import weighted_bincount
from synthdp.core.encoding import bound_text
from synthdp.core.errors import InputError
from synthdp.core.owner import owner_warning
from synthdp.core.schema import Schema, value_kind
from synthdp.core.tallies import Tallies, as_tallies
from synthdp.mechanisms.noise import discrete_laplace_vector
from synthdp.mechanisms.randomness import PrivateRandom

__all__ = ["BOUNDS_SHARE", "CLIPPED_SHARE", "FAILURE", "FEW_ROWS_FACTOR", "GRID_HIGH", "GRID_LOW", "LearnedBounds",
           "bucket_edges", "bucket_of", "check_rows", "learn_bounds", "noisy_range", "range_threshold", "warn_clipped"]

#: Public grid: the smallest magnitude resolved is ``2**-GRID_LOW``, the largest ``2**(GRID_HIGH + 1)``.
GRID_LOW = 10
GRID_HIGH = 40
#: Public probability that an empty bucket passes the threshold (union bound over the grid).
FAILURE = Fraction(1, 1000)
#: Public share of the method's budget spent on learning bounds, split over the columns that need them.
BOUNDS_SHARE = Fraction(1, 20)


def bucket_edges() -> np.ndarray:
    """The ``|G| + 1`` edges of the grid, ``-inf`` and ``inf`` at the ends (bucket ``j`` is ``[e_j, e_{j+1})``)."""
    powers = [2.0**i for i in range(-GRID_LOW, GRID_HIGH + 2)]
    return np.array([-np.inf, *(-p for p in reversed(powers)), *powers, np.inf])


def bucket_of(values: np.ndarray) -> np.ndarray:
    """The grid bucket of each value (exact: the edges are powers of two)."""
    return np.searchsorted(bucket_edges(), np.asarray(values, dtype=np.float64), side="right") - 1


def range_threshold(epsilon: Fraction) -> int:
    """``ceil(ln(|G| / (2 FAILURE)) / eps_b)``: public, never a function of ``n``."""
    size = len(bucket_edges()) - 1
    return math.ceil(math.log(size / (2 * float(FAILURE))) / float(epsilon))


def noisy_range(values: np.ndarray, *, epsilon: Fraction, rng: PrivateRandom, integer: bool,
                counts: np.ndarray | None = None) -> tuple[float, float]:
    """The released bounds of one column: the hull of the buckets whose noisy count passes the threshold.

    ``values`` are held by one row each, or by ``counts`` rows (a tally,
    docs/privacy.md §10.7: the same bucket counts). Every bucket is noised,
    in grid order. Integer columns keep the integers of the closed hull
    (``[ceil(lo), floor(hi)]``, one cell wide at least); nothing passing gives the public fallback
    ``[-2**-GRID_LOW, 2**-GRID_LOW]`` (``[0, 1]`` for integers).
    """
    edges = bucket_edges()
    rows = np.ones(len(values), dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64)
    histogram = weighted_bincount(bucket_of(values), rows, len(edges) - 1)
    rate = Fraction(epsilon)
    noise = np.array(discrete_laplace_vector(len(histogram), rate.numerator, rate.denominator, rng), dtype=object)
    kept = np.flatnonzero(histogram + noise >= range_threshold(epsilon))
    if not kept.size:
        return (0.0, 1.0) if integer else (-(2.0**-GRID_LOW), 2.0**-GRID_LOW)
    cap = 2.0 ** (GRID_HIGH + 1)
    lo, hi = max(edges[kept[0]], -cap), min(edges[kept[-1] + 1], cap)
    if integer:  # the integers of the closed hull: zero's bucket [-2**-10, 2**-10) gives 0, never -1 or 1
        lo, hi = float(math.ceil(lo)), float(math.floor(hi))
        if lo > hi:  # a hull of fractions (only through noise) holds no integer: the public fallback
            return (0.0, 1.0)
    if lo < hi:
        return (lo, hi)
    return (lo, lo + 1.0) if lo < cap else (lo - 1.0, lo)  # one cell wide, inside the cap


#: Warn the owner when a column to bound has fewer present values than this many times the threshold.
FEW_ROWS_FACTOR = 4


def check_rows(present: Mapping[str, int], threshold: int, *, epsilon: float) -> None:
    """Refuse the columns to bound whose ``present`` values (by column) cannot fill one bucket to ``threshold``;
    warn the owner about those that barely can (docs/privacy.md §10.8).

    Runs before any private step and reads the private counts, for the data owner only: a refusal releases
    nothing, and the warning (:func:`~synthdp.core.owner.owner_warning`) never goes into the release, which
    either does not happen or is the same as without the check.
    """
    remedy = f"{_public_bounds(next(iter(present)))}, raise epsilon (now {epsilon:g}), or drop the column"
    short = {c: rows for c, rows in present.items() if rows < threshold}
    if short:
        held = ", ".join(f"{c!r} {rows}" for c, rows in short.items())
        raise InputError(f"learning the bounds of {list(short)} privately (docs/privacy.md §10.4) keeps a range of "
                         f"the grid only when about {threshold} rows fall in it, and these columns have fewer present "
                         f"values ({held}): no range would be kept, the bounds would fall back to about 0 and every "
                         f"value would be clipped there; {remedy}")
    few = {c: rows for c, rows in present.items() if rows < FEW_ROWS_FACTOR * threshold}
    if few:
        held = ", ".join(f"{c!r} {rows}" for c, rows in few.items())
        owner_warning(f"the bounds of {list(few)} are learned privately with a threshold of {threshold} rows per "
                      f"range of the grid, and these columns have few present values ({held}): their bounds may "
                      f"leave out much of the data, which is then clipped to them; {remedy}")


@dataclass(frozen=True)
class LearnedBounds:
    """The schema with learned bounds, and what it cost (docs/privacy.md §10.4)."""

    schema: Schema
    columns: tuple[str, ...]
    #: Pure total charged ahead (basic composition), or the total charged to a zCDP filter; one of them is 0.
    epsilon: Fraction
    rho: Fraction
    threshold: int


def learn_bounds(data: pd.DataFrame | Tallies, schema: Schema, *, epsilon: Fraction, rng: PrivateRandom, ledger,
                 relation: str = ADD_REMOVE) -> LearnedBounds:
    """Bounds for every column of ``schema.to_bound`` with noise rate ``epsilon`` (docs/privacy.md §10.4).

    Each column is charged ``epsilon`` (add/remove) or ``2 epsilon``
    (replace-one) before its noise is drawn.

    ``data``: the table, or its tallies (:class:`~synthdp.core.tallies.Tallies`, §10.7).
    ``ledger``: the run's ledger (a pure spend ahead) or the method's zCDP
    filter (``epsilon**2 / 2``). Values that are not numbers are refused
    while tallying, before any charge; missing entries are left out.
    """

    columns = schema.to_bound
    values = as_tallies(data, schema).numbers
    charge = epsilon * (1 if check_relation(relation) == ADD_REMOVE else 2)
    released = {}
    for column in columns:
        note = f"column {column!r}, threshold {range_threshold(Fraction(epsilon) / ledger.contribution_bound)}"
        if isinstance(ledger, ZcdpLedger):
            ledger.spend("private-bounds", charge, Fraction(0), relation, note)
        else:
            ledger.spend("private-bounds", charge, Fraction(0), relation, note, ahead=True)
        # units of k rows (docs/privacy.md §10.6): sensitivity k, so the noise rate is eps_b / k
        released[column] = noisy_range(values[column].values, epsilon=Fraction(epsilon) / ledger.contribution_bound,
                                        rng=rng.spawn(), integer=value_kind(schema[column].dtype) == "int",
                                        counts=values[column].counts)
    zcdp = isinstance(ledger, ZcdpLedger)
    return LearnedBounds(schema.with_bounds(released), columns, Fraction(0) if zcdp else charge * len(columns),
                         sum((charge**2 / 2 for _ in columns), Fraction(0)) if zcdp else Fraction(0),
                         range_threshold(Fraction(epsilon) / ledger.contribution_bound))


#: Warn the owner when more than this share of a column's present values lies outside its learned bounds.
CLIPPED_SHARE = 0.01


def warn_clipped(tallies: Tallies, learned: LearnedBounds, *, epsilon: float) -> None:
    """Warn the owner, by column, when learned bounds leave out more than :data:`CLIPPED_SHARE` of a column's
    present values: they are clipped to the bounds and come back piled there, the tail beyond them lost
    (docs/privacy.md §10.8).

    For the data owner only (:func:`~synthdp.core.owner.owner_warning`): it reads the exact values after the
    bounds are released, so it never goes into the release and no later step depends on it.
    """
    for column in learned.columns:
        attr, tally = learned.schema[column], tallies.numbers[column]
        lo, hi = attr.bounds
        outside = int(tally.counts[(tally.values < lo) | (tally.values > hi)].sum())
        if tally.rows and outside > CLIPPED_SHARE * tally.rows:
            owner_warning(f"column {column!r}: {outside} of its {tally.rows} present values "
                          f"({outside / tally.rows:.1%}) are outside its privately learned bounds "
                          f"[{bound_text(attr, lo)}, {bound_text(attr, hi)}] and are clipped to them: they come back "
                          f"piled at the bounds and the values beyond are lost; {_public_bounds(column)}, or raise "
                          f"epsilon (now {epsilon:g})")


def _public_bounds(column: str) -> str:
    """The first remedy for learned bounds that leave values out, in keyword and command-line form."""
    return (f"give public bounds, e.g. legal or physical limits (bounds={{{column!r}: (lo, hi)}}, CLI --bounds "
            f"{column}=LO:HI)")
