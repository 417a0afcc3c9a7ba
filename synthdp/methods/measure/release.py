"""The estimate of select-measure-estimate and its release (docs/privacy.md §8.6, §8.7, §8.12).

The estimate is the graphical model, or, when some measurement is not
local, its reweighted sample, whose support the released tables of the
numeric pairs may draw again (a copula of the columns that move together,
then the pairs it leaves out).  The release (step 5) refits with more
iterations and draws the records.  Post-processing throughout: released
counts and scales, the public domain, options and generator; the true
counts are dropped before the final fit.
"""

from __future__ import annotations

import functools
import math
import statistics
from contextlib import nullcontext
from dataclasses import replace
from typing import Callable

import numpy as np

from synthdp.core.domain import Domain
from synthdp.core.machine import return_freed_memory
from synthdp.core.progress import Phases, RoundProgress
from synthdp.methods.measure.copula import Copula, Margin, copula_of, one_way_margins, pair_tables, redraw_numbers
from synthdp.methods.measure.estimators import GraphicalModel
from synthdp.methods.measure.linked_pairs import pair_candidates, redraw_pairs
from synthdp.methods.measure.measurements import MeasureRelease
from synthdp.methods.measure.reweight import CAPPED_GROWTH, WeightedSample, fit_weights, marginal_group
from synthdp.methods.measure.state import Measured, Run, refit


def release(run: Run, measured: Measured, n_rows: int | None, rounds: int, covered: bool,
            phases: Phases) -> MeasureRelease:
    """Step 5: refit with more iterations, then draw ``n_rows`` records, or the model's own total (§8.6); after a
    covering step the reweighted sample has the covering settings (``covered``).  The true counts are dropped
    first: nothing from here on reads the data."""
    run.answers.clear()
    with phases(f"the final fit ({run.options.estimator.final_iters} steps)"):
        refit(run, measured, run.options.estimator.final_iters)
    return_freed_memory()
    options = run.options
    support, (iters, growth) = (options.cover_support, _cover_fit(run, measured)) if covered \
        else (options.support, (options.support_final_iters, CAPPED_GROWTH))
    with (phases(f"the reweighted sample ({len(measured.groups)} measurements, {iters} steps)") if measured.groups
          else nullcontext()):
        final = estimate_of(run, measured, iters, support, growth, progress=phases.enabled)
    rows = n_rows if n_rows is not None else max(1, int(round(measured.model.total)))
    with phases(f"drawing {rows} records"):
        records = final.sample(rows, run.generator)
    return MeasureRelease(records, measured.paid, rounds, run.budget - run.left(), measured.model.total, final)


def estimate_of(run: Run, measured: Measured, iters: int, support: int, growth: float = CAPPED_GROWTH,
                progress: bool = False) -> GraphicalModel | WeightedSample:
    """The model, or when some measurement is not local, its ``support`` draws reweighted to the non-local ones.

    The local measurements enter through the model's fit of them (its
    counts on each measured marginal, at that measurement's scale), so the
    reweighting keeps the model's marginals and moves only as far as the
    non-local measurements ask; fitting the raw noisy marginals again
    would let the support's extra freedom absorb their noise.
    """
    model = measured.model
    if not measured.groups:
        return model
    fitted = [replace(y, counts=model.counts_as(y)) for y in measured.noisy]
    everything = [marginal_group(run.domain, y) for y in fitted] + measured.groups
    maps, tables = _released_pairs(run, measured)
    copula = _copula(run, maps, tables, _sharpened_margins(measured, maps, run.domain))
    redraw = _support_redraw(run, model, copula, maps, tables)
    bar = RoundProgress(iters, enabled=progress, desc="the reweighted sample's fit", unit="step")
    sample = fit_weights(model, everything, support=support, iters=iters, generator=run.generator, growth=growth,
                         redraw=redraw, on_step=bar.update)
    bar.close()
    return sample if copula is None else replace(sample, copula=copula)


def _released_pairs(run: Run, measured: Measured
                    ) -> tuple[dict[int, np.ndarray], dict[tuple[int, int], tuple[np.ndarray, float]]]:
    """The groups the copula reads the numeric columns through (§8.11 step 1), and the released tables of their pairs
    (:func:`~synthdp.methods.measure.copula.pair_tables`, §8.12 step 1), which the copula and the pairs it leaves out
    both read; none when the option says the model draws them or fewer than two columns have groups."""
    maps = {a: m for a, m in enumerate(run.views.copula_maps) if m is not None}
    if run.options.numeric_support != "copula" or len(maps) < 2:
        return maps, {}
    return maps, pair_tables(measured.noisy + measured.readings, list(maps), maps, run.domain)


def _sharpened_margins(measured: Measured, maps: dict[int, np.ndarray], domain: Domain) -> dict[int, Margin]:
    """The one-way readings the copula's pair fits cut their margins at (§8.12 step 1): those of the columns whose
    one-way marginal the covering step measured again under a small released total (§13); every other column keeps
    the pair tables' own sums (with the one-way readings of every column read twice, by the rounds too, raw Adult's
    largest Pearson error read 0.397 instead of 0.370 on seed 0 and the generated sum table's 0.145 instead of
    0.096)."""
    again = {m.attrs[0] for m in measured.paid if m.selected_by == "cover" and len(m.attrs) == 1}
    return one_way_margins(measured.noisy, {c: m for c, m in maps.items() if c in again}, domain)


def _copula(run: Run, maps: dict[int, np.ndarray], tables: dict[tuple[int, int], tuple[np.ndarray, float]],
            margins: dict[int, Margin] | None = None) -> Copula | None:
    """The numeric columns that move together and their copula (§8.12): those with a correlation of at least
    ``copula_from`` with another, read off the released tables of their pairs (:func:`_released_pairs`), which a
    copula fits (a pair that bends never qualifies, and inside the copula it is read as unread); None when there
    are no tables or fewer than two columns qualify; each pair's table is cut at its margins averaged with the
    columns' released one-way ``margins``.  The reweighted sample's support
    draws them again from the copula given one of them, and decoding places their values inside their cells by it.
    Post-processing: released counts, the public domain and options."""
    return copula_of(tables, list(maps), correlation=run.options.copula_from, keep_from=run.options.copula_keep_from,
                     significance=run.options.related_significance,
                     related_share=run.options.related_explained,
                     null_draws=run.options.related_null_draws, margins=margins) if tables else None


def _support_redraw(run: Run, model: GraphicalModel, copula: Copula | None, maps: dict[int, np.ndarray],
                    tables: dict[tuple[int, int], tuple[np.ndarray, float]]
                    ) -> Callable[[np.ndarray], np.ndarray] | None:
    """How the reweighted sample's support is drawn again from released counts (§8.12): the columns of ``copula``
    from it (steps 2-3), then the pairs it leaves out whose released ``tables`` depart from those draws by at least
    ``pair_redraw_from`` (step 6); None when the support is the model's draws.  Post-processing: released counts
    and scales, the fitted ``model``, the public views, options and generator."""
    steps = []
    if copula is not None:
        steps.append(functools.partial(redraw_numbers, columns=list(copula.columns), corr=copula.correlation,
                                       one_way={a: model.counts((a,)) for a in copula.columns}, domain=run.domain,
                                       generator=run.generator))
    left = pair_candidates(tables, () if copula is None else copula.columns) if run.options.pair_redraw_from < 1 \
        else {}
    if left:
        steps.append(functools.partial(redraw_pairs, tables=left, maps=maps, domain=run.domain,
                                       one_way={a: model.counts((a,)) for pair in left for a in pair},
                                       departure_from=run.options.pair_redraw_from, generator=run.generator))
    if not steps:
        return None

    def redraw(codes: np.ndarray) -> np.ndarray:
        for step in steps:
            codes = step(codes)
        return codes
    return redraw


def _cover_fit(run: Run, measured: Measured) -> tuple[int, float]:
    """Trial steps and step growth of the final fit after a covering step (§8.10): toward the optimum (uncapped
    Barzilai-Borwein steps) when the noise is light-tailed (Gaussian) and the covering measurements' median noise
    standard deviation is at most ``cover_deep_below`` of the model's total (``cover_numeric_iters`` steps when
    some numeric column is read through groups, whose support records are nearly all distinct), else the capped
    rule's small steps, which regularise a fit to weak or heavy-tailed measurements.  Read off the noise family,
    released noise scales, the model's noisy total and the public views: post-processing."""
    options, total, noise = run.options, measured.model.total, [math.sqrt(g.sigma2) for g in measured.groups]
    spread = statistics.median(noise) / total if noise and total > 0 else math.inf
    if run.noise.light_tailed and spread <= options.cover_deep_below:
        return (options.cover_numeric_iters if run.views else options.cover_deep_iters), math.inf
    return options.cover_iters, CAPPED_GROWTH
