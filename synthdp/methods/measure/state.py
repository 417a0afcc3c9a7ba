"""The state the steps of select-measure-estimate share, and how a candidate is measured (docs/privacy.md §8.1).

:class:`Run` is what every step reads: the data and its exact counts on the
candidates, the weighted candidates, the settings, the noise family and the
ledger; :class:`Measured` is what has been paid for and the graphical model
fitted to it (§8.7).  A measurement is charged, then drawn
(:func:`measure_one`, §8.2 (M1)): finely, through a coarse twin (§8.11) or
as a refined reading, level by level (§11.1).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from fractions import Fraction

import numpy as np

from synthdp.core.data import AggregatedData, weighted_bincount
from synthdp.core.domain import Domain
from synthdp.accounting.ledger import ADD_REMOVE
from synthdp.mechanisms.gaussian import discrete_gaussian_array
from synthdp.mechanisms.laplace import laplace_measure
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.accounting.zcdp import gaussian_rho
from synthdp.methods.measure import estimators
from synthdp.methods.measure.coarse import CoarseViews, coarse_index
from synthdp.methods.measure.estimators import GraphicalModel, NoisyMarginal
from synthdp.methods.measure.measurements import Marginal, Measurement
from synthdp.methods.measure.noise_family import LaplaceNoise, NoiseFamily
from synthdp.methods.measure.tails import empty_tails
from synthdp.methods.measure.refine import depth, level_shares, one_grouped, pays, refined_reading
from synthdp.methods.measure.settings import MeasureOptions
from synthdp.methods.measure.reweight import NoisyGroup


#: Cells of the sample counts held at once while a round scores its candidates (§8.1) or the covering step chooses
#: fine or coarse readings (§8.11): 16 MB of counts (a wider marginal is counted alone).
SCORE_BATCH_CELLS = 2**21


class TrueCounts(dict):
    """The data's exact counts on each candidate (flattened), counted the first time a candidate is asked for; a
    coarse candidate's are its fine marginal's summed over the groups, or, when the fine marginal is read through
    the twin only, counted from each row's groups without forming the fine ones (docs/privacy.md §8.11)."""

    def __init__(self, data: AggregatedData, views: CoarseViews):
        super().__init__()  # the rows column-major: each count reads a few columns of every row
        self.data, self.views = replace(data, codes=np.asfortranarray(data.codes)), views

    def __missing__(self, r: Marginal) -> np.ndarray:
        base, data = self.views.base(r), self.data
        if base == r:
            counts = _compact(data.marginal(r).reshape(-1))
        elif self.views.read_finely(base):
            counts = self.views.read(r, self[base])
        else:
            index = coarse_index(data.domain, data.codes, base, self.views.groups(r))
            counts = _compact(weighted_bincount(index, data.counts, self.views.cells(r)))
        self[r] = counts
        return counts

    def forget(self, r: Marginal) -> None:
        """Drop the counts of ``r`` and of the fine marginal it reads (the covering step's last use of them)."""
        self.pop(r, None)
        self.pop(self.views.base(r), None)


def _compact(counts: np.ndarray) -> np.ndarray:
    """``counts`` as 32-bit integers when they fit (the same values in half the memory; every use adds them to
    64-bit noise or floats), else as they are.  Held between rounds, never released."""
    return counts.astype(np.int32) if counts.size and counts.max() < 2**31 else counts


def measure_one(answers: np.ndarray, attrs: Marginal, sigma2: Fraction, sensitivity_sq: int, *, ledger,
                relation: str, rng: PrivateRandom, domain: Domain, selection_epsilon: Fraction | None,
                selected_by: str = "exponential", query: str | None = None,
                noise: NoiseFamily | None = None, groups: tuple[int | None, ...] | None = None,
                level: int | None = None) -> tuple[Measurement, np.ndarray]:
    """Charge, then draw: ``y = g(D) + N_Z(0, sigma2)`` per cell (§8.2 (M1), sensitivity by relation §8.3).

    With ``noise`` a :class:`LaplaceNoise` (pure DP, docs/privacy.md §10.2)
    ``sigma2`` is the Laplace rate ``a`` and ``sensitivity_sq`` the l1-sensitivity
    ``Delta_1``: ``y = g(D) + DLap(a)`` per cell, charged ``a Delta_1`` to the pure ledger.  ``groups``: ``answers``
    are a coarse marginal's on ``attrs`` (§8.11), whose sensitivity is a marginal's; ``level``: they are the cells of
    that level of a refined reading (§11.1), disjoint, so the sensitivity is again a marginal's.
    """
    names = tuple(domain.names[a] for a in attrs)
    note = f"{'query' if query else 'coarse marginal' if groups else 'marginal'} {attrs}"
    cells = None if level is None else answers.size
    if level is not None:
        note += f" level {level} ({cells} cells)"
    if isinstance(noise, LaplaceNoise):
        noisy = laplace_measure(answers, rate=sigma2, sensitivity=sensitivity_sq, rng=rng, ledger=ledger,
                                relation=relation, label=f"{note} rate={float(sigma2):.6g}")
        return Measurement(attrs, names, sigma2, sigma2 * sensitivity_sq, selection_epsilon, selected_by, query,
                           noise="laplace", groups=groups, level=level, cells=cells), noisy
    rho = gaussian_rho(sensitivity_sq, sigma2)
    ledger.charge("gaussian", rho, relation, f"{note} sigma2={float(sigma2):.6g}")
    noisy = answers + discrete_gaussian_array(answers.size, sigma2, rng)
    return Measurement(attrs, names, sigma2, rho, selection_epsilon, selected_by, query, groups=groups, level=level,
                       cells=cells), noisy


@dataclass(frozen=True)
class Run:
    """What every step reads: the data and its exact counts, the weighted candidates, the settings, the ledger.

    ``start`` is what the noise family's ledger had spent before the run, so :meth:`left` is what this run may
    still spend (the filter, §8.4).  ``generator`` serves post-processing only: scoring samples and the records.
    """

    data: AggregatedData
    answers: TrueCounts  # exact integers, counted when a round first scores them
    weights: dict[Marginal, int]  # fine and coarse candidates (§8.11)
    views: CoarseViews
    options: MeasureOptions
    noise: NoiseFamily
    budget: Fraction
    ledger: object
    relation: str
    rng: PrivateRandom
    generator: np.random.Generator
    start: Fraction

    @property
    def domain(self) -> Domain:
        return self.data.domain

    @property
    def score_sensitivity(self) -> int:
        """How far one row moves a candidate's score: the largest weight, twice under replace-one (§8.3).

        Per row: for units of ``k`` rows the exponential mechanism multiplies it by ``k`` itself (§10.6).
        """
        return max(self.weights.values()) * count_change(self.relation)

    def left(self) -> Fraction:
        """What this run may still spend of ``budget``."""
        return self.budget - (self.noise.spent(self.ledger) - self.start)

    def spent_share(self) -> float:
        """The share of ``budget`` spent so far: the public model-size cap grows with it (§8.4)."""
        return float(1 - self.left() / self.budget)

    def measure(self, r: Marginal, scale: Fraction, **provenance) -> tuple[Measurement, np.ndarray]:
        """Charge, then measure the candidate ``r`` with the run's noise family at ``scale`` (§8.2 (M1), §10.2).

        A marginal's (fine or coarse, §8.11) squared l2-sensitivity (1 or 2 for one row, §8.3), or its
        l1-sensitivity (§10.2); for a unit of ``k`` rows ``k**2`` or ``k`` times that (§10.6).
        """
        return measure_one(self.answers[r], self.views.base(r), scale, self.noise.sensitivity(), ledger=self.ledger,
                           relation=self.relation, rng=self.rng, domain=self.domain, noise=self.noise,
                           groups=self.views.group_counts(r), **provenance)


@dataclass
class Measured:
    """What the run has paid for so far and the graphical model fitted to it (§8.7).

    ``noisy``: the measurements the model holds; ``groups``: those only the reweighted sample serves.
    """

    model: GraphicalModel | None = None
    paid: list[Measurement] = field(default_factory=list)
    noisy: list[NoisyMarginal] = field(default_factory=list)
    groups: list[NoisyGroup] = field(default_factory=list)
    #: The marginal measurements among ``groups``, as read (for the support's copula, §8.12).
    readings: list[NoisyMarginal] = field(default_factory=list)


def count_change(relation: str) -> int:
    """How far one row moves an integer count score: 1 under add/remove, 2 under replace-one (§8.3)."""
    return 1 if relation == ADD_REMOVE else 2


def refit(run: Run, measured: Measured, iters: int | None = None) -> None:
    """Fit the graphical model to the measurements it holds, warm-started from the last fit."""
    settings = run.options.estimator
    measured.model = estimators.fit(run.domain, measured.noisy, iters or settings.iters, warm_start=measured.model,
                                    excluded=empty_tails(run.domain, measured.noisy, sds=settings.tail_sds,
                                                         mass_sds=settings.tail_mass_sds))


def hold(run: Run, measured: Measured, m: Measurement, y: np.ndarray) -> None:
    """Add a paid marginal measurement to what the model holds (refit separately)."""
    measured.paid.append(m)
    measured.noisy.append(noisy_marginal(run, m, y))


def noisy_marginal(run: Run, m: Measurement, y: np.ndarray) -> NoisyMarginal:
    """A paid marginal measurement as the estimators read it: its variance, and its groups when coarse (§8.11)."""
    groups = None if m.groups is None else run.views.attr_maps(m.attrs, m.groups)
    return NoisyMarginal(m.attrs, y, run.noise.variance(m.scale), groups)


def refines(run: Run, r: Marginal) -> bool:
    """Whether candidate ``r`` is measured as a refined reading (docs/privacy.md §11.1): a coarse twin, under zCDP
    (light-tailed noise), with a split rule, whose fine marginal may be read cell by cell (the levels read its fine
    counts; §8.11 step 2), and with ``refine_spread`` one that reads one column through groups and the others cell
    by cell (:func:`~synthdp.methods.measure.refine.one_grouped`).  Public: the candidate, the domain, the noise
    family, the options."""
    views, options = run.views, run.options
    maps = views.groups(r)
    return (maps is not None and run.noise.light_tailed and options.refine_split != "none"
            and views.read_finely(views.base(r)) and (options.refine_spread is None or one_grouped(maps)))


def refined(run: Run, twin: Marginal, share: Fraction, expected: np.ndarray, selection_epsilon: Fraction | None = None,
            selected_by: str = "cover") -> list[tuple[Measurement, NoisyMarginal]]:
    """The coarse ``twin`` measured at ``share`` as a refined reading (docs/privacy.md §11.1): the twin, then each
    level below from the released counts of the last, each level's scale fixed from a public part of ``share`` and
    charged before its noise (:func:`measure_one`); a level the filter cannot pay is not measured.  When the fitted
    model's counts on the twin's cells ``expected`` say a first level would find too little to split
    (:func:`~synthdp.methods.measure.refine.pays`, step 0), the twin is read in one measurement at the whole share;
    with ``refine_spread``, a released twin whose rows spread as widely as its column's reads the rest of the share
    as a second reading of the twin instead of levels (step 0).  The selection is reported with the first draw."""
    attrs, maps, options = run.views.base(twin), run.views.groups(twin), run.options
    shape = tuple(run.domain.sizes[a] for a in attrs)
    shares = level_shares(share, options.refine_coarse_share, depth(shape, maps, options.refine_split))
    if len(shares) > 1 and not pays(expected, run.noise.scale_for(shares[1]), options.refine_threshold,
                                    options.refine_mass):
        shares = [share]

    drawn: list[int] = []

    def measure(answers: np.ndarray, scale: Fraction, level: int) -> tuple[Measurement, np.ndarray] | None:
        if run.noise.measurement_cost(scale) > run.left():
            return None
        groups = run.views.group_counts(twin) if level == 0 else None
        first = not drawn
        drawn.append(level)
        return measure_one(answers, attrs, scale, run.noise.sensitivity(), ledger=run.ledger, relation=run.relation,
                           rng=run.rng, domain=run.domain, selection_epsilon=selection_epsilon if first else None,
                           selected_by=selected_by, noise=run.noise, groups=groups, level=level)

    levels = refined_reading(run.answers[attrs], shape, maps, shares, scale_for=run.noise.scale_for, measure=measure,
                             threshold=options.refine_threshold, split=options.refine_split,
                             spread_limit=options.refine_spread)
    return [(m, NoisyMarginal(attrs, y, run.noise.variance(m.scale), groups=maps) if m.level == 0 else
             NoisyMarginal(attrs, y, run.noise.variance(m.scale), labels=level.labels)) for m, y, level in levels]
