"""The covering step of select-measure-estimate, measured (docs/privacy.md §8.10, §8.11 step 5).

Which workload marginals it measures and at what share is
:mod:`synthdp.methods.measure.coverage` (public); here each is charged,
then measured once, finely or through its coarse twin, and served by the
reweighted sample (§8.7).  Which reading a marginal gets is read off the
model fitted to released measurements and the public scales:
post-processing.
"""

from __future__ import annotations

import logging
import math
from dataclasses import replace
from fractions import Fraction
from typing import Sequence

import numpy as np

from synthdp.core.progress import RoundProgress
from synthdp.methods.measure.coarse import group_sum
from synthdp.methods.measure.coverage import (cover_shares, effective_cells, holdings, one_way_shares, plan_cover,
                                              sharpens_one_ways)
from synthdp.methods.measure.estimators import GraphicalModel
from synthdp.methods.measure.marginal_counts import marginal_counts_in_batches
from synthdp.methods.measure.measurements import REWEIGHTED_SAMPLE, Marginal, released_attributes
from synthdp.methods.measure.reweight import marginal_group
from synthdp.methods.measure.state import (SCORE_BATCH_CELLS, Measured, Run, hold, noisy_marginal, refined, refines,
                                           refit)

log = logging.getLogger(__name__)


def cover(run: Run, measured: Measured, workload: Sequence[Marginal], progress: bool) -> int:
    """Step 4 (§8.10), after :func:`sharpen_one_ways`: what is left, water-filled over the workload marginals by the
    precision already paid for them (the noise family's ``precision_power``), less the ones whose noise would exceed
    the released total over their cells (:func:`~synthdp.methods.measure.coverage.plan_cover`, §13); each kept
    marginal measured once at the scale for its share (rounded safely, charged before its noise), finely or through
    its coarse twin (:func:`_cover_readings`, §8.11), and served by the reweighted sample (§8.7).
    Returns how many were skipped."""
    paid = [(m.attrs, m.cost) for m in measured.paid if m.fine]  # a coarse one or a level holds no workload marginal
    left, noise = run.left(), run.noise
    shares = cover_shares(workload, paid, left, precision_power=noise.precision_power)
    readings = _cover_readings(run, measured.model, [(r, noise.scale_for(share)) for r, share in shares])
    held = dict(holdings(workload, paid))
    planned = plan_cover([held[r] for r, _ in shares], [_effective_cells(run, measured, key) for key in readings],
                         _released_total(measured), left, precision_power=noise.precision_power,
                         margin=run.options.cover_skip_above,
                         noise_sd=lambda e: math.sqrt(noise.variance(noise.scale_for(e))))
    kept = [(r, share, key) for (r, _), share, key in zip(shares, planned, readings) if share > 0]
    log.info("the covering step: %d of %d workload marginals measured, %d skipped (their noise would exceed the "
             "released total over their cells, docs/privacy.md §13)", len(kept), len(shares), len(shares) - len(kept))
    expected = _expected_twins(run, measured.model, [key for _, _, key in kept if refines(run, key)])
    bar = RoundProgress(len(kept), enabled=progress, desc="the covering step", unit="marginal")
    for done, (r, share, key) in enumerate(kept, 1):
        if key in expected:
            found = refined(run, key, share, expected[key])
        else:
            m, y = run.measure(key, noise.scale_for(share), selection_epsilon=None, selected_by="cover")
            found = [(m, noisy_marginal(run, m, y))]
        for m, noisy in found:
            measured.readings.append(noisy)
            measured.groups.append(marginal_group(run.domain, noisy))
            measured.paid.append(replace(m, estimator=REWEIGHTED_SAMPLE))
        run.answers.forget(key)  # each workload marginal is measured once here: its true counts are not read again
        bar.update(done)
    bar.close()
    return len(shares) - len(kept)


def sharpen_one_ways(run: Run, measured: Measured) -> list[int]:
    """Step 4's start: measure the one-way marginal of every ordered column again, at ``one_way_share`` of what is
    left, when the first one-way readings' noise exceeds the released total over ``one_way_signal`` (docs/privacy.md
    §13, "The numeric columns' one-way marginals again"); the model holds them and is refitted.
    Returns the columns measured.

    The decision reads the model's noisy total, the first one-way measurements' public scale, what the filter has
    left and the public domain and options: post-processing of the transcript, never the true number of records.
    """
    options, noise = run.options, run.noise
    first = [m.scale for m in measured.paid if m.selected_by == "initial"]
    released = released_attributes(run.domain, options.released_columns)
    columns = [a for a, cells in enumerate(run.domain.ordered or ()) if cells >= 2 and a not in released]
    if not first or not columns or options.one_way_share <= 0 or not sharpens_one_ways(
            _released_total(measured), math.sqrt(noise.variance(first[0])), signal=options.one_way_signal):
        return []
    for a, share in zip(columns, one_way_shares(run.left(), options.one_way_share, len(columns))):
        hold(run, measured, *run.measure((a,), noise.scale_for(share), selection_epsilon=None, selected_by="cover"))
    refit(run, measured)
    log.info("the covering step: the one-way marginals of %d ordered columns measured again (their first readings' "
             "noise exceeds a %g-th of the released total, docs/privacy.md §13)", len(columns), options.one_way_signal)
    return columns


def _expected_twins(run: Run, model: GraphicalModel, twins: Sequence[Marginal]) -> dict[Marginal, np.ndarray]:
    """The fitted model's counts on the cells of each coarse twin to be refined (docs/privacy.md §11.1 step 0): from
    the clique that holds its attributes, else counted on one sample of the model drawn with the public generator
    and scaled to the model's total.  Post-processing of released measurements."""
    views, out = run.views, {}
    unheld = [t for t in twins if model.holder(views.base(t)) is None]
    for twin in twins:
        if twin not in unheld:
            out[twin] = views.read(twin, model.counts(views.base(twin)))
    if unheld:
        sample = model.sample(run.options.estimator.scoring_sample, run.generator)
        for twin in unheld:
            base = views.base(twin)
            shape = tuple(run.domain.sizes[a] for a in base)
            fine = np.bincount(np.ravel_multi_index(tuple(sample[:, a] for a in base), shape),
                               minlength=math.prod(shape))
            out[twin] = views.read(twin, fine * (model.total / len(sample)))
    return out


def _effective_cells(run: Run, measured: Measured, key: Marginal) -> float:
    """The cells the records of reading ``key`` effectively spread over (§13, :func:`effective_cells`): from the
    model's one-way counts (fitted to the noisy one-way marginals), each read through its groups when ``key`` does.
    Post-processing of released counts and the public views."""
    maps = run.views.groups(key) or (None,) * len(key)
    return effective_cells(group_sum(measured.model.counts((a,)), (m,)) for a, m in zip(run.views.base(key), maps))


def _released_total(measured: Measured) -> float:
    """The released total the covering step's plan reads (§13): the model's noisy total (§8.6), never ``n``."""
    return measured.model.total


def _cover_readings(run: Run, model: GraphicalModel, shares: Sequence[tuple[Marginal, Fraction]]) -> list[Marginal]:
    """How the covering step measures each workload marginal ``r`` at its ``scale`` (§8.11 step 5): through its
    coarse twin (:meth:`~synthdp.methods.measure.coarse.CoarseViews.cover_twin`: nested groups where a column has
    them, §8.11 step 1) when ``r`` is read through it only (more than ``max_fine_cells`` cells, step 2); else finely when the
    model puts at least ``cover_fine_mass`` of its total in cells of ``r`` whose count is at least the measurement's
    noise standard deviation (cells a fine measurement can correct), else through its coarse twin, when it has one.

    Read off the model (fitted to released measurements), one sample of it drawn with the public generator (for
    the marginals no clique holds, counted :data:`SCORE_BATCH_CELLS` cells at a time) and the public scales:
    post-processing; each measurement's cost is its share either way.  The rule is :func:`fine_mass_suffices`.
    """
    views, sd = run.views, {r: math.sqrt(run.noise.variance(scale)) for r, scale in shares}
    share = run.options.cover_fine_mass
    unheld_sets = [r for r, _ in shares
                   if views.coarse(r) is not None and views.read_finely(r) and model.holder(r) is None]
    fine: dict[Marginal, bool] = {}
    if unheld_sets:  # counted a batch at a time, each kept only for its decision
        sample = model.sample(run.options.estimator.scoring_sample, run.generator)
        for r, c in marginal_counts_in_batches(run.domain, sample, unheld_sets, max_cells=SCORE_BATCH_CELLS):
            fine[r] = fine_mass_suffices(c * (model.total / len(sample)), sd[r], share)
    readings = []
    for r, _ in shares:
        twin = views.cover_twin(r)
        if twin is not None and not views.read_finely(r):  # read through the twin only (§8.11 step 2)
            readings.append(twin)
        elif twin is not None:
            if r not in fine:
                fine[r] = fine_mass_suffices(model.counts(r), sd[r], share)
            readings.append(r if fine[r] else twin)
        else:
            readings.append(r)
    return readings


def fine_mass_suffices(counts: np.ndarray, sd: float, share: float) -> bool:
    """Whether the model's ``counts`` on a marginal put at least ``share`` of their mass in cells whose count is at
    least the noise deviation ``sd`` (the covering step's rule, docs/privacy.md §8.11 step 5), decided the same on
    every CPU.

    Tested as the mass *below* ``sd`` being at most ``1 - share`` of the counts' own total, each summed with
    :func:`math.fsum` (the correctly rounded sum, whatever the order or the SIMD width numpy's reductions use): at
    ``share = 1`` it is "no cell holds mass below ``sd``" (a zero, exactly), at ``share = 0`` always true, so the
    common exact tie (every cell at least ``sd``: the fine mass is the whole total) is never left to rounding, as it
    was when the fine mass was compared with the model's total (an ulp under it with AVX-512 kernels, an ulp over
    without).  Post-processing of the fitted model and the released scale: it reads no count of the data
    (docs/privacy.md §8.11, §11.1).
    """
    below = math.fsum(counts[counts < sd].tolist())
    return below <= (1 - share) * math.fsum(counts.tolist())
