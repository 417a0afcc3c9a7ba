"""The covering step of select-measure-estimate: which workload marginals it measures (docs/privacy.md §8.10).

The adaptive rounds anneal and stop long before their cap, so most of a
workload's marginals are never measured and hold the largest errors.  The
covering step keeps a public share of the budget for them: the rounds run on
the rest, then what is left is water-filled over the workload's marginals:
the ones no measurement contains get equal shares, the ones a round measured
early and coarsely are measured again at the cost that brings them to the
same precision, the ones measured finely are not paid for twice.  The fill
is by precision, which grows with cost as ``cost**q``, ``q`` the noise
family's ``precision_power`` (1 Gaussian, 2 Laplace).  Everything here is a
function of the public workload, the family's ``q`` and the released
attribute sets and costs; the measurements themselves are made (and charged)
by :mod:`synthdp.methods.measure.covering_step`.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Callable, Iterable, Sequence

import numpy as np

from synthdp.core.errors import InputError, InternalError
from synthdp.mechanisms.laplace import epsilon_down
from synthdp.methods.measure.spanning import uses_spanning_step

Marginal = tuple[int, ...]


def maximal_marginals(workload: Sequence[Marginal]) -> list[Marginal]:
    """The workload's marginals that no other workload marginal contains, in order, each once.

    A query of a contained marginal is answered by the containing one, so
    only the maximal ones are worth measuring (``marginals:<=3`` covers with
    its 3-way marginals alone).  A marginal is looked up among those reading each of its attributes, not
    against every other: 1,140 triples with their subsets took 62 ms pairwise (8 ms so), asked 15 times a run.
    """
    unique = list(dict.fromkeys(tuple(sorted(m)) for m in workload))
    width = [len(set(m)) for m in unique]  # distinct attributes
    holding: dict[int, set[int]] = {}  # attribute -> the marginals (by position) that read it
    for i, m in enumerate(unique):
        for a in m:
            holding.setdefault(a, set()).add(i)

    def maximal(i: int) -> bool:  # no marginal reads all of its attributes and more
        containing = set.intersection(*(holding[a] for a in unique[i])) if unique[i] else range(len(unique))
        return all(width[j] == width[i] for j in containing)

    return [m for i, m in enumerate(unique) if maximal(i)]


def water_level(held: Sequence[Fraction], left: Fraction) -> Fraction:
    """The level ``L`` with ``sum_h max(0, L - h) = left`` (``left > 0``): ``left`` poured over costs ``held``."""
    ordered, total = sorted(held), Fraction(0)
    for j, h in enumerate(ordered, 1):
        total += h
        level = (left + total) / j  # the j lowest filled to one level; the next must not lie below it
        if j == len(ordered) or level <= ordered[j]:
            return level
    raise InputError("the covering step needs at least one workload marginal")


def precision_level(held: Sequence[Fraction], left: Fraction, power: int) -> float:
    """The level ``L`` with ``sum_{h < L} (L**q - h**q)**(1/q) = left`` (``q = power``), by bisection (§8.10).

    The sum is continuous and strictly increasing above the smallest ``h``, 0 there and at least ``left`` at
    ``h_min + left``, so ``L`` lies in that interval; halved until floats cannot split it.  The lower end is
    returned (its sum at most ``left`` as floats compute it).  Floats only choose ``L``, from public values.
    """
    if not held:
        raise InputError("the covering step needs at least one workload marginal")
    costs, target = [float(h) for h in held], float(left)
    low = min(costs)
    high = low + target
    while low < (middle := (low + high) / 2) < high:
        poured = sum((middle**power - h**power) ** (1 / power) for h in costs if h < middle)
        low, high = (middle, high) if poured <= target else (low, middle)
    return low


def fill(held: Sequence[Fraction], left: Fraction, *, precision_power: int) -> list[Fraction]:
    """Each holder's share of ``left``, poured by precision ``cost**precision_power`` (0: not measured; §8.10).

    A holder of ``h`` measured again at ``e`` ends at the precision of one measurement of ``(h**q + e**q)**(1/q)``;
    the holders below the level ``L`` get ``(L**q - h**q)**(1/q)``, which brings each to ``L``.  ``q = 1`` (a
    cost is a precision, zCDP): the exact rational level of :func:`water_level`.  ``q >= 2``: ``L`` of
    :func:`precision_level`, every share but the largest rounded down onto exact rationals (one rounding to 0
    is dropped), the largest (the first of them) the exact remainder; the shares sum to exactly ``left``.
    """
    if isinstance(precision_power, bool) or not isinstance(precision_power, int) or precision_power < 1:
        raise InputError(f"precision_power must be a positive integer, got {precision_power!r}")
    if precision_power == 1:
        level = water_level(held, left)
        return [level - h if h < level else Fraction(0) for h in held]
    level = precision_level(held, left, precision_power)
    ideal = [(level**precision_power - float(h) ** precision_power) ** (1 / precision_power) if h < level else 0.0
             for h in held]
    last = ideal.index(max(ideal))
    shares = [epsilon_down(Fraction(x)) if x > 0 and i != last else Fraction(0) for i, x in enumerate(ideal)]
    shares[last] = left - sum(shares)
    if shares[last] <= 0:
        raise InternalError(f"the covering step's last share is not positive ({shares[last]}); nothing was measured")
    return shares


def cover_shares(workload: Sequence[Marginal], paid: Iterable[tuple[Marginal, Fraction]],
                 left: Fraction, *, precision_power: int) -> list[tuple[Marginal, Fraction]]:
    """What the covering step measures and at what cost: ``left`` poured over the workload (§8.10, steps 2-3).

    ``paid`` are the attribute sets and measurement costs of the paid
    measurements (released), ``left`` (positive) what the run has not spent,
    ``precision_power`` the noise family's ``q`` (precision grows as
    ``cost**q``).  A maximal workload marginal *holds* the largest cost of a
    paid measurement containing it (0 if none).  Each marginal holding less
    than the level is measured once at its share of :func:`fill`, in the
    workload's order; the shares sum to exactly ``left``.  Every workload
    marginal ends measured at least as precisely as the level buys: the
    marginals the rounds left out get equal shares, the ones they measured
    coarsely are topped up, the ones they measured finely cost nothing.
    Public given the transcript.
    """
    held = holdings(workload, paid)
    shares = fill([h for _, h in held], left, precision_power=precision_power)
    return [(m, share) for (m, _), share in zip(held, shares) if share > 0]


def holdings(workload: Sequence[Marginal], paid: Iterable[tuple[Marginal, Fraction]]) -> list[tuple[Marginal, Fraction]]:
    """Each maximal workload marginal and what it holds: the largest cost of a paid measurement containing it (0 if
    none; §8.10 step 2), in the workload's order."""
    measured = [(frozenset(attrs), cost) for attrs, cost in paid]
    return [(m, max((cost for attrs, cost in measured if set(m) <= attrs), default=Fraction(0)))
            for m in maximal_marginals(workload)]


def effective_cells(one_way: Iterable[np.ndarray]) -> float:
    """The cells a marginal's records effectively spread over, from its attributes' released one-way counts: the
    product of each attribute's participation ratio ``1 / sum p**2`` (``p`` its counts, negatives as 0, over their
    sum), the number of equal cells with the same concentration, exact for independent attributes (docs/privacy.md
    §13).  A column with one value holding nearly every record counts as about one cell, not as its size."""
    cells = 1.0
    for counts in one_way:
        p = np.clip(np.asarray(counts, dtype=float), 0, None)
        mass = p.sum()
        cells *= 1 / float(np.square(p / mass).sum()) if mass > 0 else len(p)
    return cells


#: The fewest covering measurements the plan keeps when fewer pay (docs/privacy.md §13): public, fixed.
COVER_KEEP = 4


def plan_cover(held: Sequence[Fraction], cells: Sequence[float], released_total: float, left: Fraction, *,
               noise_sd: Callable[[Fraction], float], precision_power: int, margin: float,
               keep: int = COVER_KEEP) -> list[Fraction]:
    """Each covering marginal's share, 0 for the ones skipped: the largest paying prefix (docs/privacy.md §13).

    ``held`` and ``cells`` are, per marginal §8.10 would measure (its order),
    what it holds and the effective cells of its reading
    (:func:`effective_cells`); ``released_total`` the
    model's noisy total (§8.6), ``left`` what the filter has left,
    ``noise_sd(e)`` the noise deviation per cell of a measurement at cost
    ``e`` (the family's scale for it).  A marginal *pays* at share ``e`` when
    ``noise_sd(e) <= margin * released_total / cells``: a noisier one would
    add more noise to each cell than ``margin`` times what the cell holds on
    average (``margin = inf``: every marginal pays).  The marginals are
    ordered by ``noise_sd(e) * cells`` at their §8.10 shares (ties by their
    order); the plan is the largest prefix whose own fill of ``left`` makes
    every positive share pay (at least ``keep`` marginals), the rest get 0,
    so the shares still sum to exactly ``left``.  A function of released and
    public values only: never the true number of records.
    """
    def fill_of(chosen: Iterable[int]) -> dict[int, Fraction]:  # poured in the marginals' own order
        ordered = sorted(chosen)
        return dict(zip(ordered, fill([held[i] for i in ordered], left, precision_power=precision_power)))

    def pays(i: int, share: Fraction) -> bool:
        return share <= 0 or noise_sd(share) * cells[i] <= margin * released_total

    first = fill_of(range(len(held)))
    if margin == math.inf:
        return [first[i] for i in range(len(held))]
    order = sorted(first, key=lambda i: noise_sd(first[i]) * cells[i] if first[i] > 0 else math.inf)
    low, high = 0, len(order)  # the first ``low`` pay; no prefix longer than ``high`` does
    while low < high:
        k = (low + high + 1) // 2
        if all(pays(i, share) for i, share in fill_of(order[:k]).items()):
            low = k
        else:
            high = k - 1
    kept = fill_of(order[: max(low, min(keep, len(order)))])
    return [kept.get(i, Fraction(0)) for i in range(len(held))]


def sharpens_one_ways(released_total: float, one_way_sd: float, *, signal: float) -> bool:
    """Whether the covering step first measures the ordered columns' one-way marginals again (docs/privacy.md §13,
    "The numeric columns' one-way marginals again"): when their noise deviation per cell ``one_way_sd`` exceeds the
    released total over ``signal``, too loud for the tail rule (§8.7) to tell a thin tail from an empty one
    (``signal`` 0: never).  Read off released and public values only: the model's noisy total, never the true
    number of records."""
    return signal > 0 and one_way_sd * signal > released_total


def one_way_shares(left: Fraction, share: Fraction, columns: int) -> list[Fraction]:
    """The cost of each of ``columns`` one-way measurements measured again: ``share`` of ``left``, equally (§13)."""
    return [left * share / columns] * columns if columns else []


def covering_pays(marginals: int, planned_rounds: int, *, cover_share: Fraction, min_ratio: Fraction,
                  light_tailed: bool) -> bool:
    """Whether the covering step is worth its share under this noise (§8.10, step 0): public inputs only.

    Light-tailed (Gaussian) noise: always.  Heavy-tailed (discrete Laplace, pure DP): only when a covering
    measurement of each of the ``marginals`` maximal workload marginals would cost at least ``min_ratio`` times
    a first round, ``cover_share / marginals >= min_ratio (1 - cover_share) / planned_rounds``.  Under pure
    composition a measurement's noise grows linearly with the number of them, so a large workload (NLTCS's 560
    3-way marginals) gets covering measurements noisier than the rounds', which the final fit then follows.
    """
    if light_tailed:
        return True
    return cover_share * planned_rounds >= min_ratio * (1 - cover_share) * marginals


def uses_covering_step(d: int, candidates: Sequence[Marginal], options, *, oracle: bool, light_tailed: bool) -> bool:
    """Whether select-measure-estimate runs the covering step (§8.10): a marginal workload (no ``oracle``) without
    a spanning step (§8.9), a positive ``options.cover_share``, and :func:`covering_pays`.  ``candidates`` are the
    workload's marginals and their subsets; ``options`` a ``MeasureOptions``.  Public: a function of the domain's
    width, the workload, the options and the noise family."""
    if oracle or options.cover_share <= 0 or uses_spanning_step(d, candidates, options.spanning_from):
        return False
    return covering_pays(len(maximal_marginals(candidates)), options.rounds_per_attribute * d,
                         cover_share=options.cover_share, min_ratio=options.cover_min_ratio,
                         light_tailed=light_tailed)


def rounds_budget(budget: Fraction, cover_share: Fraction, covering: bool) -> Fraction:
    """What the adaptive rounds may spend: ``(1 - cover_share) budget`` when the covering step runs (§8.10)."""
    return budget * (1 - cover_share) if covering else budget
