"""Empty tails of numeric columns: ordered cells the released measurements say hold no record (docs/privacy.md §8.7).

Public bounds are generous, so a numeric column's cells reach far past its
real rows.  Those cells hold no record, but their noisy counts are noise,
and a fit that keeps counts non-negative follows the positive half of it:
a few records drawn in cells thousands of units wide then dominate every
variance of the release.  :func:`empty_tails` reads each numeric column's
cells off the released fine measurements and returns the ordered cells
at each end that read as empty (each cell, and the block they form, below
a public multiple of its noise standard deviation); the estimator gives
them a structural zero (:func:`synthdp.methods.measure.estimators.fit`).

Post-processing: the inputs are the released noisy counts, their noise
variances, the public domain and a public constant; never a true count.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from synthdp.core.domain import Domain
from synthdp.methods.measure.estimators import NoisyMarginal


def cell_readings(domain: Domain, measurements: Sequence[NoisyMarginal], attr: int) -> tuple[np.ndarray, float] | None:
    """The inverse-variance combination of the fine measurements containing ``attr``, each summed onto its cells.

    A measurement of noise variance ``s2`` per cell that sums ``m`` of its
    cells into each cell of ``attr`` reads that cell with variance
    ``m * s2``.  Returns the readings (one per code of ``attr``) and their
    common variance, or None when no fine measurement contains ``attr``
    (coarse ones, docs/privacy.md §8.11, and the levels of a refined reading, §11.1, do not read every cell).
    """
    weighted, precision = np.zeros(domain.sizes[attr]), 0.0
    for m in measurements:
        if m.groups is not None or m.labels is not None or attr not in m.attrs:
            continue
        shape = tuple(domain.sizes[a] for a in m.attrs)
        others = tuple(i for i, a in enumerate(m.attrs) if a != attr)
        inv_var = 1.0 / (m.sigma2 * (m.counts.size // domain.sizes[attr]))
        weighted += inv_var * m.counts.reshape(shape).sum(axis=others)
        precision += inv_var
    return None if precision == 0 else (weighted / precision, 1.0 / precision)


def _outer_run(readings: np.ndarray, sd: float, *, sds: float) -> int:
    """How many cells, from the first of ``readings`` on, read as empty: each below ``sds`` standard deviations
    and their running sum below ``sds`` standard deviations of a sum of as many cells; all of them when none
    stops the run."""
    total = 0.0
    for count, reading in enumerate(readings, 1):
        total += reading
        if reading >= sds * sd or total >= sds * sd * math.sqrt(count):
            return count - 1
    return len(readings)


def empty_tails(domain: Domain, measurements: Sequence[NoisyMarginal], *, sds: float) -> dict[int, np.ndarray]:
    """Per attribute with at least two ordered cells, a mask (over all its codes) of its empty tails.

    From each end of the ordered cells inward, a cell is cut while its
    reading (:func:`cell_readings`) is below ``sds`` times its noise
    standard deviation and the summed readings of the cells cut so far with
    it are below ``sds`` times the standard deviation of that sum: the
    run stops at the first cell, or block, with evidence of mass.  When the
    two runs would leave no ordered cell, nothing is cut.  Attributes with
    nothing to cut are left out, as is every attribute when ``sds`` is 0
    (the rule off).  The missing value and every code past the ordered
    cells are never cut.
    """
    masks = {}
    for attr, ordered in enumerate(domain.ordered or (0,) * len(domain)):
        found = cell_readings(domain, measurements, attr) if ordered >= 2 and sds > 0 else None
        if found is None:
            continue
        readings, sd = found[0][:ordered], math.sqrt(found[1])
        low = _outer_run(readings, sd, sds=sds)
        high = ordered - _outer_run(readings[::-1], sd, sds=sds)
        if low >= high or (low == 0 and high == ordered):
            continue
        mask = np.zeros(domain.sizes[attr], dtype=bool)
        mask[:low] = True
        mask[high:ordered] = True
        masks[attr] = mask
    return masks
