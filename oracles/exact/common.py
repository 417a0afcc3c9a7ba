"""Shared pieces of the ``exact`` backend: the search budget and exact float arithmetic.

Both players of the exact backend compute in float64.  That is exact as
long as every intermediate value is an integer of magnitude below 2**53:
all values the searches form are partial sums of the instance's integer
coefficients, so ``sum |coefficients| < 2**53`` (checked by
:func:`exact_in_float`) guarantees it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from synthdp.oracles.base import Deadline, Limits

#: Float64 sums of integers are exact while every partial sum stays below this.
EXACT_FLOAT = 2.0**53


def exact_in_float(*arrays: np.ndarray) -> bool:
    """Whether every partial sum of the given integer coefficients is exact in float64."""
    total = sum(float(np.abs(np.asarray(a, dtype=np.float64)).sum()) for a in arrays)
    return total < EXACT_FLOAT


def bin_sums(index: np.ndarray, weights: np.ndarray, size: int) -> np.ndarray:
    """``out[i] = sum(weights[index == i])`` as float64 (also for empty input), exact under the 2**53 rule."""
    return np.bincount(index, weights=weights, minlength=size).astype(np.float64, copy=False)


class Budget:
    """Node budget (deterministic, ``Limits.work_limit``) and deadline (``Limits.time_limit``) of one search.

    A search calls :meth:`spend` once per node (or table) it expands.  The
    work budget makes the search stop cleanly with an unproven incumbent;
    the wall-clock deadline raises :class:`synthdp.oracles.base.Deadline`.
    """

    def __init__(self, limits: Limits):
        self.max_nodes = None if limits.work_limit is None else int(limits.work_limit)
        self.deadline = None if limits.time_limit is None else time.perf_counter() + limits.time_limit
        self.nodes = 0

    def spend(self, nodes: int = 1) -> bool:
        """Count ``nodes``; ``False`` once the work budget is exhausted."""
        self.nodes += nodes
        if self.deadline is not None and time.perf_counter() > self.deadline:
            raise Deadline(f"exact search passed its time limit after {self.nodes} nodes")
        return self.max_nodes is None or self.nodes <= self.max_nodes


@dataclass
class SearchOutcome:
    """What one exhaustive search found.

    ``value`` is the best objective found (an exact integer held as float);
    when ``proven`` the search was exhausted, so ``value`` is also the
    proven bound.  ``bound`` is the best proven bound otherwise (or None).
    """

    solution: object
    value: float
    proven: bool
    bound: float | None
    nodes: int
    method: str
