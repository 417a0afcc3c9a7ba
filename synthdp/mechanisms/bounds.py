"""Private bounds of a numeric column when none are given (docs/privacy.md §10.4).

Bounds read off the data (the minimum and maximum) are two records' values.
When the owner has no public bounds, a range is learned with a noisy
histogram over a public logarithmic grid ``G`` that partitions the real line:
``(-inf, -2**(K1+1))``, ``[-2**(i+1), -2**i)`` and ``[2**i, 2**(i+1))`` for
``i = -K0 .. K1``, ``[-2**-K0, 2**-K0)`` (it holds 0), ``[2**(K1+1), inf)``.
Every bucket, empty or not, gets ``DLap(eps_b)`` noise, and the bounds are read
off the noisy counts alone: the core (the buckets reaching the public threshold
``ceil(ln(|G| / (2 beta)) / eps_b)``, and neighbouring pairs reaching a public
threshold of their own), a walk outwards over the next buckets while
each reaches the smaller ``ceil(ln(1 / (2 beta_w)) / eps_b)``, and one bucket of
margin; an integer column skips the buckets that hold no integer. Only the
bounds are released. A histogram of L1 sensitivity 1 (2 under replace-one) with
that noise is ``eps_b``-DP (``2 eps_b``), and that is what is charged; the rest is
post-processing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
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
           "SPREAD_SHARE", "WALK_FAILURE", "bucket_edges", "bucket_of", "check_rows", "fullest_range", "hull",
           "kept_buckets", "learn_bounds", "noisy_range", "pair_threshold", "range_threshold", "usable_buckets",
           "walk_threshold", "warn_clipped", "warn_spread"]

#: Public grid: the smallest magnitude resolved is ``2**-GRID_LOW``, the largest ``2**(GRID_HIGH + 1)``.
GRID_LOW = 10
GRID_HIGH = 40
#: Public probability that an empty bucket joins the core (union bound over the grid).
FAILURE = Fraction(1, 1000)
#: Public probability that one step of the walk goes into an empty bucket.
WALK_FAILURE = Fraction(1, 20)
#: Public share of the method's budget spent on learning bounds, split over the columns that need them.
BOUNDS_SHARE = Fraction(1, 5)


def bucket_edges() -> np.ndarray:
    """The ``|G| + 1`` edges of the grid, ``-inf`` and ``inf`` at the ends (bucket ``j`` is ``[e_j, e_{j+1})``)."""
    powers = [2.0**i for i in range(-GRID_LOW, GRID_HIGH + 2)]
    return np.array([-np.inf, *(-p for p in reversed(powers)), *powers, np.inf])


def bucket_of(values: np.ndarray) -> np.ndarray:
    """The grid bucket of each value (exact: the edges are powers of two)."""
    return np.searchsorted(bucket_edges(), np.asarray(values, dtype=np.float64), side="right") - 1


def usable_buckets(integer: bool) -> np.ndarray:
    """The buckets the bounds may be read from, in grid order: all of them, or for an integer column those that
    hold an integer (of the buckets between zero's and ``+-1`` only ``[-1, -1/2)`` does, holding ``-1``).
    Public: the grid and the declared type."""
    edges = bucket_edges()
    holds = [not integer or lo == -np.inf or math.ceil(lo) < hi for lo, hi in zip(edges[:-1], edges[1:])]
    return np.flatnonzero(holds)


def range_threshold(epsilon: Fraction) -> int:
    """The core's ``ceil(ln(|G| / (2 FAILURE)) / eps_b)``: public, never a function of ``n``."""
    size = len(bucket_edges()) - 1
    return math.ceil(math.log(size / (2 * float(FAILURE))) / float(epsilon))


def pair_threshold(epsilon: Fraction) -> int:
    """The least ``t`` with ``(|G| - 1) P(Z1 + Z2 >= t) <= FAILURE`` for two independent ``DLap(eps_b)``: two
    neighbouring buckets whose noisy counts sum to it join the core. Public, never a function of ``n``."""
    pairs = len(bucket_edges()) - 2
    low, high = 0, math.ceil(200 / float(epsilon))
    while low < high:
        middle = (low + high) // 2
        if pairs * _pair_tail(middle, float(epsilon)) <= float(FAILURE):
            high = middle
        else:
            low = middle + 1
    return low


def _pair_tail(t: int, epsilon: float) -> float:
    """``P(Z1 + Z2 >= t)``, ``t >= 0``, for two independent ``DLap(epsilon)`` (pmf ``c p**|k|``): the sum is ``s``
    with probability ``c**2 p**s (s + 1 + 2 p**2 / (1 - p**2))``, summed in closed form."""
    p = math.exp(-epsilon)
    c = (1 - p) / (1 + p)
    return c * c * p**t * ((t + 1) / (1 - p) + p / (1 - p) ** 2 + 2 * p * p / ((1 - p * p) * (1 - p)))


def walk_threshold(epsilon: Fraction) -> int:
    """The walk's ``ceil(ln(1 / (2 WALK_FAILURE)) / eps_b)``: an empty bucket reaches it with probability at most
    ``WALK_FAILURE``. Public, never a function of ``n``."""
    return math.ceil(math.log(1 / (2 * float(WALK_FAILURE))) / float(epsilon))


def _histogram(values: np.ndarray, counts: np.ndarray | None) -> np.ndarray:
    """A column's count in each bucket of the grid: one row per value, or ``counts`` rows (a tally, §10.7)."""
    rows = np.ones(len(values), dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64)
    return weighted_bincount(bucket_of(values), rows, len(bucket_edges()) - 1)


def fullest_range(values: np.ndarray, counts: np.ndarray | None = None) -> int:
    """How many of a column's present values its fullest bucket of the grid holds (``counts`` rows per value, or
    one): what the core needs to reach the threshold. Private, for the owner's refusal only (§10.8)."""
    return int(_histogram(values, counts).max())


def kept_buckets(noisy: np.ndarray, epsilon: Fraction, integer: bool) -> tuple[int, int] | None:
    """The lowest and highest bucket the bounds keep, read off the noisy counts alone (post-processing): the core
    (usable buckets reaching :func:`range_threshold`, and neighbouring pairs of usable buckets, neither reaching it,
    whose counts sum to :func:`pair_threshold`), the walk outwards over each next usable bucket reaching
    :func:`walk_threshold`, then one usable bucket of margin (neither past zero's bucket nor the grid's ends).
    None when no bucket reaches the core."""
    usable = usable_buckets(integer)
    counts = np.asarray(noisy, dtype=object)[usable]
    alone = counts >= range_threshold(epsilon)
    pairs = np.r_[(counts[:-1] + counts[1:] >= pair_threshold(epsilon)) & ~alone[:-1] & ~alone[1:], False]
    core = np.flatnonzero(alone | pairs | np.r_[False, pairs[:-1]])
    if not core.size:
        return None
    zero = int(np.searchsorted(usable, bucket_of(np.zeros(1))[0]))
    step = walk_threshold(epsilon)
    return tuple(int(usable[_walk(counts, int(start), direction, step, zero)])
                 for start, direction in ((core[0], -1), (core[-1], 1)))


def _walk(counts: np.ndarray, start: int, direction: int, threshold: int, zero: int) -> int:
    """From ``start``, the last position (in ``counts``) the walk and its one bucket of margin reach; both stop at
    zero's bucket (position ``zero``): the other sign takes a bucket of the core."""
    at = start
    while at != zero and 0 <= at + direction < len(counts) and counts[at + direction] >= threshold:
        at += direction
    return at + direction if at != zero and 0 <= at + direction < len(counts) else at


def noisy_range(values: np.ndarray, *, epsilon: Fraction, rng: PrivateRandom, integer: bool,
                counts: np.ndarray | None = None) -> tuple[float, float]:
    """The released bounds of one column: the hull of :func:`kept_buckets` on the noisy counts.

    ``values`` are held by one row each, or by ``counts`` rows (a tally,
    docs/privacy.md §10.7: the same bucket counts). Every bucket is noised,
    in grid order. Integer columns keep the integers of the closed hull
    (``[ceil(lo), floor(hi)]``, one cell wide at least); nothing reaching the core gives the public fallback
    ``[-2**-GRID_LOW, 2**-GRID_LOW]`` (``[0, 1]`` for integers).
    """
    histogram = _histogram(values, counts)
    rate = Fraction(epsilon)
    noise = np.array(discrete_laplace_vector(len(histogram), rate.numerator, rate.denominator, rng), dtype=object)
    return hull(histogram + noise, epsilon, integer)


def hull(counts: np.ndarray, epsilon: Fraction, integer: bool) -> tuple[float, float]:
    """The bounds :func:`kept_buckets` gives on ``counts`` by bucket (the noisy ones for the release), with the cap,
    the integers of the closed hull and the fallback of :func:`noisy_range`."""
    edges = bucket_edges()
    kept = kept_buckets(counts, epsilon, integer)
    if kept is None:
        return (0.0, 1.0) if integer else (-(2.0**-GRID_LOW), 2.0**-GRID_LOW)
    cap = 2.0 ** (GRID_HIGH + 1)
    lo, hi = max(edges[kept[0]], -cap), min(edges[kept[1] + 1], cap)
    if integer:  # usable edges are integers or zero's bucket's, which gives 0, never -1 or 1
        lo, hi = float(math.ceil(lo)), float(math.floor(hi))
    if lo < hi:
        return (lo, hi)
    return (lo, lo + 1.0) if lo < cap else (lo - 1.0, lo)  # one cell wide, inside the cap


#: Warn the owner when a column's fullest range holds fewer than this many times the core's threshold.
FEW_ROWS_FACTOR = 2


def check_rows(fullest: Mapping[str, int], threshold: int, *, epsilon: float) -> None:
    """Refuse the columns to bound whose fullest range of the grid (:func:`fullest_range`, by column) holds fewer
    than the core's ``threshold`` values: nothing would be kept but through noise; warn the owner about those whose
    fullest range barely reaches it (docs/privacy.md §10.8).

    Runs before any private step and reads the private counts, for the data owner only: a refusal releases
    nothing, and the warning (:func:`~synthdp.core.owner.owner_warning`) never goes into the release, which
    either does not happen or is the same as without the check.
    """
    short = {c: held for c, held in fullest.items() if held < threshold}
    if short:
        least = min(short.values())
        more = f", or an epsilon of about {epsilon * threshold / least:.2g} or more (now {epsilon:g})" if least else ""
        raise InputError(f"learning the bounds of {list(short)} privately (docs/privacy.md §10.4) starts from the "
                         f"ranges of the grid that about {threshold} of a column's values fall in, and the fullest "
                         f"range of each of these columns holds fewer ({_held(short)}): no range would be kept, the "
                         f"bounds would fall back to about 0 and every value would be clipped there. It would need "
                         f"about {threshold} values in one range of the grid{more}; "
                         f"{_public_bounds(list(short))}, or drop the columns")
    few = {c: held for c, held in fullest.items() if held < FEW_ROWS_FACTOR * threshold}
    if few:
        owner_warning(f"the bounds of {list(few)} are learned privately from the ranges of the grid that about "
                      f"{threshold} of a column's values fall in, and the fullest range of each of these columns "
                      f"holds fewer than {FEW_ROWS_FACTOR * threshold} ({_held(few)}): the noise may keep none of "
                      f"it, and the bounds would then fall back to about 0; {_public_bounds(list(few))}, raise "
                      f"epsilon (now {epsilon:g}), or drop the columns")


#: Warn the owner, before any private step, when the rule on a column's exact counts would leave out more than this.
SPREAD_SHARE = 0.05


def warn_spread(tallies: Tallies, schema: Schema, columns: Sequence[str], *, epsilon: Fraction,
                budget: float) -> None:
    """Warn the owner about the columns to bound of which the rule of :func:`kept_buckets`, run on the exact counts
    (no noise) at noise rate ``epsilon``, would leave more than :data:`SPREAD_SHARE` of the present values outside
    the bounds: values away from the column's bulk spread too thin over the grid for this budget (the non-zero part
    of a mostly-zero amount), clipped whatever the noise draws (docs/privacy.md §10.8).

    Before any private step, for the data owner only (:func:`~synthdp.core.owner.owner_warning`), like
    :func:`check_rows`: it reads the private counts and no later step depends on it.
    """
    for column in columns:
        tally = tallies.numbers[column]
        lo, hi = hull(_histogram(tally.values, tally.counts), epsilon, value_kind(schema[column].dtype) == "int")
        if (share := _outside(tally, lo, hi)) > SPREAD_SHARE:
            owner_warning(f"column {column!r}: about {share:.0%} of its present values lie away from "
                          f"the ranges of the grid this budget can find (spread thin, none of their ranges next to "
                          f"the rest holding about {walk_threshold(epsilon)} values): the learned bounds will likely "
                          f"leave them out and clip them; {_public_bounds([column])}, or raise epsilon "
                          f"(now {budget:g})")


def _outside(tally, lo: float, hi: float) -> float:
    """The share of a column's present values (its exact tally: the owner's warnings only) outside [lo, hi]; 0
    without any."""
    return float(tally.counts[(tally.values < lo) | (tally.values > hi)].sum() / tally.rows) if tally.rows else 0.0


def _held(fullest: Mapping[str, int]) -> str:
    """``'a' 120, 'b' 80``: each column with the values of its fullest range."""
    return ", ".join(f"{c!r} {held}" for c, held in fullest.items())


@dataclass(frozen=True)
class LearnedBounds:
    """The schema with learned bounds, and what it cost (docs/privacy.md §10.4)."""

    schema: Schema
    columns: tuple[str, ...]
    #: Pure total charged ahead (basic composition), or the total charged to a zCDP filter; one of them is 0.
    epsilon: Fraction
    rho: Fraction
    #: The core's threshold in rows, a pair's and the walk's (public: the noise rate alone).
    threshold: int
    pair: int = 0
    walk: int = 0


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
    rate = Fraction(epsilon) / ledger.contribution_bound  # units of k rows (§10.6): sensitivity k, rate eps_b / k
    released = {}
    for column in columns:
        note = f"column {column!r}, thresholds {range_threshold(rate)}, {pair_threshold(rate)}, {walk_threshold(rate)}"
        if isinstance(ledger, ZcdpLedger):
            ledger.spend("private-bounds", charge, Fraction(0), relation, note)
        else:
            ledger.spend("private-bounds", charge, Fraction(0), relation, note, ahead=True)
        released[column] = noisy_range(values[column].values, epsilon=rate, rng=rng.spawn(),
                                        integer=value_kind(schema[column].dtype) == "int", counts=values[column].counts)
    zcdp = isinstance(ledger, ZcdpLedger)
    return LearnedBounds(schema.with_bounds(released), columns, Fraction(0) if zcdp else charge * len(columns),
                         sum((charge**2 / 2 for _ in columns), Fraction(0)) if zcdp else Fraction(0),
                         range_threshold(rate), pair_threshold(rate), walk_threshold(rate))


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
        share = _outside(tally, lo, hi)
        if share > CLIPPED_SHARE:
            owner_warning(f"column {column!r}: {round(share * tally.rows)} of its {tally.rows} present values "
                          f"({share:.1%}) are outside its privately learned bounds "
                          f"[{bound_text(attr, lo)}, {bound_text(attr, hi)}] and are clipped to them: they come back "
                          f"piled at the bounds and the values beyond are lost; {_public_bounds([column])}, or raise "
                          f"epsilon (now {epsilon:g})")


def _public_bounds(columns: Sequence[str]) -> str:
    """The first remedy for learned bounds that leave values out, naming every column of ``columns``, in keyword and
    command-line form."""
    keyword = ", ".join(f"{c!r}: (lo, hi)" for c in columns)
    flags = " ".join(f"{c}=LO:HI" for c in columns)
    return f"give public bounds, e.g. legal or physical limits (bounds={{{keyword}}}, CLI --bounds {flags})"
