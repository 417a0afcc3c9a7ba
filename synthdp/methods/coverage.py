"""The covering step of select-measure-estimate: which workload marginals it measures (docs/privacy.md §8.10).

The adaptive rounds anneal and stop long before their cap, so most of a
workload's marginals are never measured and hold the largest errors.  The
covering step keeps a public share of the budget for them: the rounds run on
the rest, then what is left is water-filled over the workload's marginals:
the ones no measurement contains get equal shares, the ones a round measured
early and coarsely are measured again at the cost that brings them to the
same level, the ones measured finely are not paid for twice.  Everything
here is a function of the public workload and the released attribute sets
and costs; the measurements themselves are made (and charged) by
:mod:`synthdp.methods.measure`.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Iterable, Sequence

from synthdp.core.errors import InputError

Marginal = tuple[int, ...]


def maximal_marginals(workload: Sequence[Marginal]) -> list[Marginal]:
    """The workload's marginals that no other workload marginal contains, in order, each once.

    A query of a contained marginal is answered by the containing one, so
    only the maximal ones are worth measuring (``marginals:<=3`` covers with
    its 3-way marginals alone).
    """
    unique = [tuple(sorted(m)) for m in dict.fromkeys(tuple(sorted(m)) for m in workload)]
    sets = [frozenset(m) for m in unique]
    return [m for m, s in zip(unique, sets) if not any(s < other for other in sets)]


def water_level(held: Sequence[Fraction], left: Fraction) -> Fraction:
    """The level ``L`` with ``sum_h max(0, L - h) = left`` (``left > 0``): ``left`` poured over costs ``held``."""
    ordered, total = sorted(held), Fraction(0)
    for j, h in enumerate(ordered, 1):
        total += h
        level = (left + total) / j  # the j lowest filled to one level; the next must not lie below it
        if j == len(ordered) or level <= ordered[j]:
            return level
    raise InputError("the covering step needs at least one workload marginal")


def cover_shares(workload: Sequence[Marginal], paid: Iterable[tuple[Marginal, Fraction]],
                 left: Fraction) -> list[tuple[Marginal, Fraction]]:
    """What the covering step measures and at what cost: ``left`` water-filled over the workload (§8.10, steps 2-3).

    ``paid`` are the attribute sets and measurement costs of the paid
    measurements (released), ``left`` (positive) what the run has not spent.
    A maximal workload marginal *holds* the largest cost of a paid
    measurement containing it (0 if none).  Each marginal holding less than
    the level ``L`` of :func:`water_level` is measured once at cost
    ``L - held``, in the workload's order; the costs sum to ``left``.  Under
    Gaussian noise a cost is a precision (``Delta2**2 / (2 sigma2)``), so
    every workload marginal ends measured at least as precisely as ``L``
    buys: the marginals the rounds left out get equal shares, the ones they
    measured coarsely are topped up, the ones they measured finely cost
    nothing.  Public given the transcript.
    """
    maximal = maximal_marginals(workload)
    measured = [(frozenset(attrs), cost) for attrs, cost in paid]
    held = [max((cost for attrs, cost in measured if set(m) <= attrs), default=Fraction(0)) for m in maximal]
    level = water_level(held, left)
    return [(m, level - h) for m, h in zip(maximal, held) if h < level]


def rounds_budget(budget: Fraction, cover_share: Fraction, covering: bool) -> Fraction:
    """What the adaptive rounds may spend: ``(1 - cover_share) budget`` when the covering step runs (§8.10)."""
    return budget * (1 - cover_share) if covering else budget
