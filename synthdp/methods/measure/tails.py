"""Empty tails of numeric columns: ordered cells the released measurements say hold no record (docs/privacy.md §8.7).

Public bounds are generous, so a numeric column's cells reach far past its
real rows.  Those cells hold no record, but their noisy counts are noise,
and a fit that keeps counts non-negative follows the positive half of it:
a few records drawn in cells thousands of units wide then dominate every
variance of the release.  :func:`empty_tails` reads each numeric column's
cells off the released fine measurements and returns the ordered cells
at each end that read as empty (each cell, and the block they form, below
a public multiple of its noise standard deviation) and are either wider
than every cell between the two ends or where the readings drop below the
cell that stopped the run (with the option ``mass_sds``, only by a block whose
summed reading does not show mass); a cell of one value of the column's
precision is never cut.  The estimator gives them a structural zero
(:func:`synthdp.methods.measure.estimators.fit`).  Cells that each hold
fewer rows than the noise can show read as empty wherever they are, also
where the rows fill the range to its end: the drop, not the weak reading,
marks a tail.

Post-processing: the inputs are the released noisy counts, their noise
variances, the public domain (its cells, their widths and precision) and a
public constant; never a true count.
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


def _outer_run(readings: np.ndarray, sd: float, *, sds: float, kept: np.ndarray) -> int:
    """How many cells, from the first of ``readings`` on, read as empty: each below ``sds`` standard deviations
    and their running sum below ``sds`` standard deviations of a sum of as many cells, and none ``kept``; all of
    them when none stops the run."""
    total = 0.0
    for count, reading in enumerate(readings, 1):
        total += reading
        if kept[count - 1] or reading >= sds * sd or total >= sds * sd * math.sqrt(count):
            return count - 1
    return len(readings)


def _drop(readings: np.ndarray, run: int, sd: float, *, sds: float, mass_sds: float) -> int:
    """How many of the ``run`` first cells to cut: of the ``j`` outermost ones whose summed reading is below
    ``mass_sds`` standard deviations of a sum of ``j`` cells, those whose mean reading is furthest, in standard
    deviations of the difference, below the mean of the cells from them up to the one that stopped the run; none
    when even that difference is below ``sds`` deviations.  A tail is where the readings drop: past cells that
    hold real rows, not merely among cells that each hold fewer than the noise can show; and a block that shows
    mass is a tail thinning out, not one past the rows (docs/privacy.md §8.7)."""
    if run == 0:
        return 0
    sums = np.cumsum(readings[: run + 1])
    outer = np.arange(1, run + 1)  # j: the outer cells cut
    rest = run + 1 - outer  # the cells from them to the one that stopped the run
    gap = (sums[-1] - sums[:run]) / rest - sums[:run] / outer
    score = gap / (sd * np.sqrt(1 / rest + 1 / outer))
    score[sums[:run] >= mass_sds * sd * np.sqrt(outer)] = -np.inf
    best = int(np.argmax(score))
    return int(outer[best]) if score[best] >= sds else 0


def _cut(readings: np.ndarray, widths: np.ndarray, run: int, sd: float, *, sds: float, mass_sds: float,
         widest: float) -> int:
    """How many of the ``run`` first cells (those that read as empty, :func:`_outer_run`) are cut: the outer ones
    wider than ``widest`` (every cell between the two runs), which the bounds added past the rows, then those the
    readings drop to (:func:`_drop`)."""
    wide = 0
    while wide < run and widths[wide] > widest:
        wide += 1
    return wide + _drop(readings[wide:], run - wide, sd, sds=sds, mass_sds=mass_sds)


def empty_tails(domain: Domain, measurements: Sequence[NoisyMarginal], *, sds: float,
                mass_sds: float = math.inf) -> dict[int, np.ndarray]:
    """Per attribute with at least two ordered cells, a mask (over all its codes) of its empty tails.

    From each end of the ordered cells inward, the run of cells that read as
    empty (:func:`_outer_run`: each reading, :func:`cell_readings`, and the
    block they form below ``sds`` noise standard deviations, and none a cell
    of one value of the column's precision, ``domain.one_value``, which draws
    no record away from it).  When the two runs meet, nothing is cut.  Of each
    run, the outer cells wider than every cell between the runs (``domain.widths``:
    the wide cells generous bounds add past the rows) are cut, then the outer
    cells the readings drop to whose block reads below ``mass_sds`` deviations of its sum (:func:`_cut`; infinite:
    any block may be cut).  Attributes with nothing to cut
    are left out, as is every attribute when ``sds`` is 0 (the rule off).  The
    missing value and every code past the ordered cells are never cut.
    """
    masks = {}
    for attr, ordered in enumerate(domain.ordered or (0,) * len(domain)):
        found = cell_readings(domain, measurements, attr) if ordered >= 2 and sds > 0 else None
        if found is None:
            continue
        readings, sd = found[0][:ordered], math.sqrt(found[1])
        kept = np.zeros(ordered, dtype=bool)
        kept[list(domain.one_value[attr] if domain.one_value else ())] = True
        low = _outer_run(readings, sd, sds=sds, kept=kept)
        high = ordered - _outer_run(readings[::-1], sd, sds=sds, kept=kept[::-1])
        if low >= high:
            continue
        widths = np.asarray(domain.widths[attr] if domain.widths and domain.widths[attr] else [1.0] * ordered)
        widest = float(widths[low:high].max())
        low = _cut(readings, widths, low, sd, sds=sds, mass_sds=mass_sds, widest=widest)
        high = ordered - _cut(readings[::-1], widths[::-1], ordered - high, sd, sds=sds, mass_sds=mass_sds,
                              widest=widest)
        if low == 0 and high == ordered:
            continue
        mask = np.zeros(domain.sizes[attr], dtype=bool)
        mask[:low] = True
        mask[high:ordered] = True
        masks[attr] = mask
    return masks
