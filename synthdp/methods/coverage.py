"""The covering step of select-measure-estimate: which workload marginals it measures (docs/privacy.md §8.10).

The adaptive rounds anneal and stop long before their cap, so most of a
workload's marginals are never measured and hold the largest errors.  The
covering step keeps a public share of the budget for them: the rounds run on
the rest, then every workload marginal that no paid measurement contains is
measured once, each at an equal share of what is left.  Everything here is a
function of the public workload and the released attribute sets; the
measurements themselves are made (and charged) by :mod:`synthdp.methods.measure`.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Iterable, Sequence

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


def uncovered(workload: Sequence[Marginal], measured: Iterable[Marginal]) -> list[Marginal]:
    """The maximal workload marginals no ``measured`` attribute set contains; all of them when none is left out.

    ``measured`` are the attribute sets of the paid measurements (released):
    the list is public given the transcript (§8.10, step 2).
    """
    maximal = maximal_marginals(workload)
    held = [frozenset(m) for m in measured]
    left_out = [m for m in maximal if not any(set(m) <= h for h in held)]
    return left_out or maximal


def rounds_budget(budget: Fraction, cover_share: Fraction, covering: bool) -> Fraction:
    """What the adaptive rounds may spend: ``(1 - cover_share) budget`` when the covering step runs (§8.10)."""
    return budget * (1 - cover_share) if covering else budget
