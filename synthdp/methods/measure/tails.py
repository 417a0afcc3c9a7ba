"""Empty tails of numeric columns: ordered cells the released measurements say hold no record (docs/privacy.md §8.7).

Public bounds are generous, so a numeric column's cells reach far past its
real rows.  Those cells hold no record, but their noisy counts are noise,
and a fit that keeps counts non-negative follows the positive half of it:
a few records drawn in cells thousands of units wide then dominate every
variance of the release.  :func:`empty_tails` reads each numeric column's
cells off the released fine measurements and returns the ordered cells
below the first and above the last cell whose combined reading stands at
least ``sds`` noise standard deviations above zero; the estimator gives
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
    (coarse ones, docs/privacy.md §8.11, do not read single cells).
    """
    weighted, precision = np.zeros(domain.sizes[attr]), 0.0
    for m in measurements:
        if m.groups is not None or attr not in m.attrs:
            continue
        shape = tuple(domain.sizes[a] for a in m.attrs)
        others = tuple(i for i, a in enumerate(m.attrs) if a != attr)
        inv_var = 1.0 / (m.sigma2 * (m.counts.size // domain.sizes[attr]))
        weighted += inv_var * m.counts.reshape(shape).sum(axis=others)
        precision += inv_var
    return None if precision == 0 else (weighted / precision, 1.0 / precision)


def empty_tails(domain: Domain, measurements: Sequence[NoisyMarginal], *, sds: float) -> dict[int, np.ndarray]:
    """Per attribute with at least two ordered cells, a mask (over all its codes) of its empty tails.

    The kept range runs from the first to the last ordered cell whose
    reading (:func:`cell_readings`) is at least ``sds`` times its noise
    standard deviation; the ordered cells outside it are masked.  Attributes
    with nothing to mask (no cell passes, or the range reaches both ends)
    are left out, as is every attribute when ``sds`` is 0 (the rule off).
    The missing value and every code past the ordered cells are never masked.
    """
    masks = {}
    for attr, ordered in enumerate(domain.ordered or (0,) * len(domain)):
        found = cell_readings(domain, measurements, attr) if ordered >= 2 and sds > 0 else None
        if found is None:
            continue
        readings, variance = found
        passing = np.flatnonzero(readings[:ordered] >= sds * math.sqrt(variance))
        if passing.size == 0:
            continue
        mask = np.zeros(domain.sizes[attr], dtype=bool)
        mask[:passing[0]] = True
        mask[passing[-1] + 1:ordered] = True
        if mask.any():
            masks[attr] = mask
    return masks
