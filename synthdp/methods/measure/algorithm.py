"""Select-measure-estimate over marginal workloads (``method="measure"``; docs/privacy.md §8).

The algorithm (§8.1, in the manner of AIM, McKenna et al. 2022)::

    measure every 1-way marginal with discrete Gaussian noise (a public share of rho)
    repeat, while the filter admits a round (§8.4):
        p  <- estimate(all measurements)                        # post-processing (§8.7)
        r  <- EM over candidate marginals, score                # §8.2 (M2), eps**2/8
              w_r (||r(D) - r(p)||_1 - sqrt(2/pi) sigma cells_r)
        y  <- r(D) + N_Z(0, sigma2)^cells_r                      # §8.2 (M1), Delta2**2/(2 sigma2)
        if p barely moved on r: halve sigma, double eps          # decided from released values only
    for r in workload marginals below the water level L:         # §8.10: the rounds ran on (1 - cover_share) rho
        y  <- r(D) + N_Z(0, sigma2)^cells_r                      # sigma2: from L and the precision r already holds
    records <- sample(estimate(all measurements))                # n_rows, or the model's own total

A class whose queries may read every attribute (conjunctions of any
width, halfspaces) drives the same loop with more families (§8.1): the
exponential mechanism scores an enumerated backbone (the
``backbone_width``-way marginals and their subsets); every
``record_every``-th round it picks instead one of the estimate's most
probable records, whose count is measured alone (this reaches the wide
conjunctions no backbone model holds); and every ``oracle_every``-th
round (off by default: at eps <= 1 its noise swamps what is left to find)
RSPM (§2) selects over the whole class against ``N`` records drawn from
the current estimate (Delta = 2N, charged eps**2/2 plus its clip), the
query widened by a fixed rule of the query alone to the marginal on its
attributes when that has at most ``widen_cells`` cells.  Measurements the
model's cliques cannot hold are served by the reweighted sample of
:mod:`synthdp.methods.measure.reweight`.

Candidates are the workload's marginals and all their non-empty subsets
whose addition keeps the model within a public size cap, grown with the
share of the budget spent.  Scores are integers: the model's counts are
rounded to integers (post-processing) and the data's counts are exact, so
the score of a candidate moves by at most ``w_r`` under add/remove and
``2 w_r`` under replace-one (§8.3); the sampler's sensitivity is the
largest weight times that factor.  Every step is charged to the ledger
before its noise is drawn, the last round takes exactly what is left, and
a public cap bounds the rounds.  The true number of records is never read:
the model's total comes from the noisy counts (§8.6).
"""

from __future__ import annotations

import functools
import itertools
import logging
import math
import statistics
from collections import Counter
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Callable, Sequence

import numpy as np

from synthdp.core.data import AggregatedData, weighted_bincount
from synthdp.core.domain import Domain
from synthdp.core.machine import return_freed_memory
from synthdp.core.errors import InputError
from synthdp.core.keys import count_equal
from synthdp.core.progress import Phases, RoundProgress
from synthdp.accounting.ledger import ADD_REMOVE, check_relation
from synthdp.mechanisms.gaussian import discrete_gaussian_array, sigma2_up
from synthdp.mechanisms.laplace import laplace_measure
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.mechanisms.rspm import difference_sensitivity, rspm
from synthdp.mechanisms.selection import exponential_mechanism
from synthdp.accounting.zcdp import (
    ZcdpLedger, epsilon_for_exponential, epsilon_for_pure, exponential_rho, gaussian_rho, pure_rho,
)
from synthdp.methods.measure import estimators
from synthdp.methods.measure.coarse import CoarseViews, coarse_index, group_sum
from synthdp.methods.measure.copula import (COPULA_EXPLAINED, Copula, copula_matrix, correlations, pair_tables,
                                            redraw_numbers, strong_columns)
from synthdp.methods.measure.coverage import (cover_shares, effective_cells, holdings, plan_cover, rounds_budget,
                                             uses_covering_step)
from synthdp.methods.measure.estimators import GraphicalModel, NoisyMarginal
from synthdp.methods.measure.linked_pairs import pair_candidates, redraw_pairs
from synthdp.methods.measure.marginal_counts import marginal_counts, marginal_counts_in_batches
from synthdp.methods.measure.model_size import model_cells_with
from synthdp.methods.measure.noise_family import GaussianNoise, LaplaceNoise, NoiseFamily
from synthdp.methods.game.players import game_instance
from synthdp.methods.measure.tails import empty_tails
from synthdp.methods.measure.refine import depth, level_shares, refined_reading
from synthdp.methods.measure.settings import MeasureOptions
from synthdp.methods.measure.spanning import (
    adaptive_rounds, candidate_pool, pair_scores, spanning_pairs, unheld, uses_spanning_step,
)
from synthdp.methods.measure.reweight import (
    CAPPED_GROWTH, NoisyGroup, WeightedSample, fit_weights, marginal_group, query_group,
)
from synthdp.oracles.base import Limits, Oracle
from synthdp.queries.base import QueryClass
from synthdp.queries.complement import base_class
from synthdp.queries.spec import parse_query_class
from synthdp.queries.workload import Workload

log = logging.getLogger(__name__)

Marginal = tuple[int, ...]

#: Most marginals (with their subsets) a conjunction class may expand to (an unbounded class on many attributes is
#: refused) ...
MAX_MARGINALS = 20_000
#: ... unless its marginals read at most ``LOW_ORDER`` attributes: those are served up to this many (wide tables,
#: docs/privacy.md §8.9: their true counts are taken when a round first scores them, and a round scores at most
#: ``candidate_pool`` of them).
LOW_ORDER, MAX_LOW_ORDER_MARGINALS = 3, 200_000


def marginal_limit(width: int) -> int:
    """Most marginals (with their subsets) the method enumerates when the widest reads ``width`` attributes."""
    return MAX_LOW_ORDER_MARGINALS if width <= LOW_ORDER else MAX_MARGINALS


#: Who chose a measurement: nobody (the initial 1-way marginals), the exponential mechanism over marginals or
#: over the estimate's most probable records (``record``), RSPM, or the covering step (``cover``: a workload
#: marginal no measurement of the rounds contains, docs/privacy.md §8.10).
SELECTORS = ("initial", "exponential", "record", "rspm", "cover")

#: Cells of the sample counts held at once while a round scores its candidates (§8.1) or the covering step chooses
#: fine or coarse readings (§8.11): 16 MB of counts (a wider marginal is counted alone).
SCORE_BATCH_CELLS = 2**21
#: Which estimator serves a measurement.
GRAPHICAL_MODEL, REWEIGHTED_SAMPLE = "graphical model", "reweighted sample"


@dataclass(frozen=True)
class Measurement:
    """One paid measurement: what was measured, its noise scale, its cost, what chose it, what estimator serves it.

    ``query`` is the measured query in words when one query was measured
    alone (an oracle selection too wide to widen); None for a marginal.
    ``noise`` is ``"gaussian"`` (zCDP: ``sigma2`` is the scale, ``rho`` the
    cost) or ``"laplace"`` (pure DP, docs/privacy.md §10.2: the scale is the
    rate ``a`` and the cost an ``epsilon``; :attr:`sigma2` and :attr:`rho`
    do not exist then).
    """

    attrs: Marginal
    names: tuple[str, ...]
    scale: Fraction
    cost: Fraction
    selection_epsilon: Fraction | None = None  # None for the initial 1-way marginals
    selected_by: str = "exponential"
    query: str | None = None
    estimator: str = GRAPHICAL_MODEL
    noise: str = "gaussian"
    #: A coarse measurement (docs/privacy.md §8.11): per attribute, how many groups it is read through (None: its
    #: cells); None for a fine measurement.
    groups: tuple[int | None, ...] | None = None
    #: A level of a refined reading (docs/privacy.md §11.1): 0 the twin, then 1, 2, ... below it; and how many cells
    #: it measured.  None for any other measurement.
    level: int | None = None
    cells: int | None = None

    def __post_init__(self) -> None:
        if self.selected_by not in SELECTORS:
            raise InputError(f"selected_by must be one of {SELECTORS}, got {self.selected_by!r}")

    @property
    def fine(self) -> bool:
        """Whether it read every fine cell of its marginal one by one (not through groups, not a level of a refined
        reading): only then does it hold the marginal (docs/privacy.md §8.10)."""
        return self.groups is None and self.level is None

    @property
    def sigma2(self) -> Fraction:
        """The discrete Gaussian's scale (zCDP measurements only)."""
        if self.noise != "gaussian":
            raise AttributeError("a Laplace measurement has a rate (scale), not a sigma2")
        return self.scale

    @property
    def rho(self) -> Fraction:
        """The measurement's zCDP cost (zCDP measurements only)."""
        if self.noise != "gaussian":
            raise AttributeError("a Laplace measurement costs an epsilon (cost), not a rho")
        return self.cost

    @property
    def selection_rho(self) -> Fraction:
        if self.selection_epsilon is None:
            return Fraction(0)
        return pure_rho(self.selection_epsilon) if self.selected_by == "rspm" else exponential_rho(self.selection_epsilon)

    def to_dict(self) -> dict:
        if self.noise == "gaussian":
            noise = {"sigma2": str(self.scale), "rho": str(self.cost)}
        else:
            noise = {"laplace_rate": str(self.scale), "epsilon": str(self.cost)}
        coarse = {} if self.groups is None else \
            {"groups": {name: k for name, k in zip(self.names, self.groups) if k is not None}}
        level = {} if self.level is None else {"level": self.level, "cells": self.cells}
        return {"marginal": list(self.names), "query": self.query, **noise, **coarse, **level,
                "selected_by": self.selected_by,
                "selection_epsilon": None if self.selection_epsilon is None else str(self.selection_epsilon),
                "estimator": self.estimator}


@dataclass(frozen=True)
class OracleSelection:
    """RSPM over a class too large to enumerate (docs/privacy.md §8.1 (b), second bullet; §2).

    ``query_class`` must be closed under complement (the objective of §4.1
    finds queries the estimate under-counts; their complements, the ones
    it over-counts).  ``mode``/``limits`` as in :func:`synthdp.mechanisms.rspm.rspm`.
    """

    query_class: QueryClass
    oracle: Oracle
    mode: str = "E"
    limits: Limits | None = None

    def __post_init__(self) -> None:
        if not self.query_class.complement_closed:
            raise InputError(f"oracle selection needs a complement-closed class, got {self.query_class.name}")


@dataclass
class MeasureRelease:
    """The synthetic records (integer codes in the domain's coding) and what was paid for."""

    records: np.ndarray
    measurements: list[Measurement]
    rounds: int
    rho_spent: Fraction
    model_total: float
    #: The estimate the records were drawn from: the graphical model or its reweighted sample (§8.7, §10.9).
    estimate: GraphicalModel | WeightedSample
    #: The covering step's marginals skipped because their noise would exceed the released total over their cells
    #: (§13): a function of released values.
    cover_skipped: int = 0


# --------------------------------------------------------------------------
# which classes the method serves
# --------------------------------------------------------------------------
def workload_marginals(query_class: str | QueryClass | Sequence[Sequence[int]], domain: Domain) -> list[Marginal]:
    """The marginals (sorted attribute-index tuples) whose cells determine every query of ``query_class``.

    Serves explicit workloads (``workload:FILE`` or a list of attribute-index
    tuples), ``marginals:K``, ``marginals:<=K``, and every class whose
    queries read at most ``K`` attributes (bounded conjunctions, and
    parities, monotone conjunctions and disjunctions of width ``K``: each
    query is a function of the marginal on the attributes it reads), with
    or without complements, given as a spec string or a class; any other
    class raises :class:`InputError` (it is served through the oracle path).
    """
    if isinstance(query_class, str):
        query_class = parse_query_class(query_class, domain, closed=False)
    if not isinstance(query_class, QueryClass):
        return list(Workload(domain, query_class).marginal_attrs)
    qc = base_class(query_class)
    if qc.listed_cells:
        return list(qc.marginal_attrs)
    widths = qc.marginal_widths()  # their subsets are candidates too
    if widths is None:
        raise InputError(f"{query_class.name} is not a marginal class: its queries may read every attribute")
    count = sum(math.comb(len(domain), k) for k in range(1, widths[-1] + 1))  # the candidates: all their subsets
    if count > marginal_limit(widths[-1]):
        raise InputError(f"{qc.name} would need {count} marginals (at most {marginal_limit(widths[-1])}); it is served "
                         "through "
                         "the oracle path")
    return [m for k in widths for m in itertools.combinations(range(len(domain)), k)]


def backbone_marginals(domain: Domain, width: int) -> list[Marginal]:
    """Every marginal on ``width`` attributes (the workload of ``marginals:width``; its subsets are candidates too).

    Weighting the candidates by this workload, rather than by all marginals
    up to ``width``, was better on NLTCS at eps 0.1 and 0.25 (certified error
    over all conjunctions 0.052 vs 0.057 and 0.026 vs 0.033, 2 seeds).
    """
    return list(itertools.combinations(range(len(domain)), min(width, len(domain))))


def query_attributes(query_class: QueryClass, query) -> Marginal:
    """The attributes a query of ``query_class`` reads: a function of the query alone (the widening rule, §8.1 (b))."""
    return query_class.attributes_of(query)


class _TrueCounts(dict):
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


def candidate_weights(marginals: Sequence[Marginal]) -> dict[Marginal, int]:
    """Every non-empty subset of a workload marginal, weighted by ``sum_m |r & m|`` over the workload (AIM's weights)."""
    closure = sorted({s for m in marginals for k in range(1, len(m) + 1) for s in itertools.combinations(m, k)},
                     key=lambda s: (len(s), s))
    holding = Counter(a for m in marginals for a in set(m))  # sum_m |r & m| = sum over a in r of #{m : a in m}
    return {r: sum(holding[a] for a in set(r)) for r in closure}


# --------------------------------------------------------------------------
# the private steps
# --------------------------------------------------------------------------
def _measure_one(answers: np.ndarray, attrs: Marginal, sigma2: Fraction, sensitivity_sq: int, *, ledger,
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


def _scores(candidates: list[Marginal], weights: dict[Marginal, int], answers: dict[Marginal, np.ndarray],
            model: GraphicalModel, sample: np.ndarray | None, noise_per_cell: float, views: CoarseViews,
            unheld_sets: set[Marginal]) -> np.ndarray:
    """Integer scores ``w_r (sum |r(D) - round(r(p))| - round(noise_per_cell cells_r))`` (§8.1 (b)).

    ``noise_per_cell`` is the expected absolute noise of one measured cell
    (AIM's ``sqrt(2/pi) sigma`` for the Gaussian, ``1/sinh a`` for the
    Laplace, §10.2).  ``r(p)`` is the model's count (its own total); attribute
    sets no model clique holds (``unheld_sets``) are counted on ``sample``
    (records drawn from the model, scaled to its total), a batch of
    :data:`SCORE_BATCH_CELLS` cells at a time; a coarse candidate reads both
    through its groups (§8.11).
    Both are post-processing of the transcript.
    """
    out = np.empty(len(candidates), dtype=np.int64)

    def score(r: Marginal, fine: np.ndarray) -> int:
        l1 = int(np.abs(answers[r] - np.rint(views.read(r, fine)).astype(np.int64)).sum())
        return weights[r] * (l1 - round(noise_per_cell * answers[r].size))  # size: r's cells

    by_base: dict[Marginal, list[int]] = {}  # a twin shares its base's counts
    for i, r in enumerate(candidates):
        if r in unheld_sets:
            by_base.setdefault(views.base(r), []).append(i)
        else:
            out[i] = score(r, model.counts(views.base(r)))
    if by_base:  # counted a batch at a time, each base's counts dropped once its candidates are scored
        batches = marginal_counts_in_batches(views.domain, sample, list(by_base), max_cells=SCORE_BATCH_CELLS)
        for base, counts in batches:
            fine = counts * (model.total / len(sample))
            for i in by_base[base]:
                out[i] = score(candidates[i], fine)
    return out


def _fitted(model: GraphicalModel, sample: np.ndarray | None, r: Marginal, views: CoarseViews) -> np.ndarray:
    """The model's counts on candidate ``r`` as it reads them: exact when a clique holds its attributes, else from
    ``sample`` scaled to the model's total."""
    base = views.base(r)
    if model.holder(base) is not None:
        return views.read(r, model.counts(base))
    return views.read(r, marginal_counts(model.domain, sample, [base])[0] * (model.total / len(sample)))


def _round_kind(rounds: int, anneals: int, oracle: OracleSelection | None, options: MeasureOptions) -> str:
    """Which family selects in round ``rounds``, from the round and the annealing steps so far (both public).

    Record rounds start once the backbone has annealed ``record_after``
    times (its measurements at the first noise level no longer move the
    model); records come first when both kinds fall due.
    """
    if (oracle is not None and options.record_every and anneals >= options.record_after
            and rounds % options.record_every == 0):
        return "record"
    if oracle is not None and options.oracle_every and rounds % options.oracle_every == 0:
        return "oracle"
    return "marginal"


def _oracle_round(data: AggregatedData, estimate: GraphicalModel | WeightedSample, oracle: OracleSelection, *,
                  select_rho: Fraction, measure_rho: Fraction, sensitivity_sq: int, options: MeasureOptions,
                  ledger: ZcdpLedger, relation: str, rng: PrivateRandom, generator: np.random.Generator,
                  label: str) -> tuple[Measurement, np.ndarray, NoisyGroup | None] | None:
    """RSPM over the whole class, then a Gaussian measurement of its answer, widened by a fixed rule (§8.1 (b)).

    RSPM gets the largest ``eps`` with ``eps**2/2`` within ``select_rho``
    (§8.2 (M3)).  The objective is §4.1's against
    ``N`` records drawn from the estimate with the public generator
    (``Delta = 2N`` under both relations, the true ``n`` allowed there).  The
    query is widened to the marginal on its attributes when that has at
    most ``widen_cells`` cells (sensitivity of a marginal), else measured
    alone (sensitivity 1); ``measure_rho`` pays for the measurement either
    way.  Returns the measurement, its noisy answers and, for a query
    measured alone, its group; None when RSPM returns no query (Mode N
    after a FAIL, or a clipped draw): its budget is spent, nothing is measured.
    """
    domain = data.domain
    epsilon = epsilon_for_pure(select_rho)
    synthetic = AggregatedData.from_codes(domain, estimate.sample(options.oracle_samples, generator))
    result = rspm(game_instance(oracle.query_class, data, synthetic), epsilon=epsilon,
                  sensitivity=difference_sensitivity(synthetic.n, relation, "game"), oracle=oracle.oracle, rng=rng,
                  ledger=ledger, mode=oracle.mode, limits=oracle.limits, relation=relation, label=label)
    if result.query is None:
        return None
    query = result.query
    attrs = query_attributes(oracle.query_class, query)
    if attrs and domain.cells(attrs) <= options.widen_cells:
        answers, sens, words = data.marginal(attrs).reshape(-1), sensitivity_sq, None
    else:
        answers = oracle.query_class.answer([query], data.codes, data.counts)
        sens, words = ledger.contribution_bound**2, oracle.query_class.describe(query)  # one count: k (§10.6)
    m, y = _measure_one(answers, attrs, sigma2_up(Fraction(sens) / (2 * measure_rho)), sens, ledger=ledger,
                        relation=relation, rng=rng, domain=domain, selection_epsilon=epsilon, selected_by="rspm",
                        query=words)
    group = None if words is None else query_group(oracle.query_class, query, float(y[0]), float(m.sigma2), words)
    return m, y, group


def record_counts(data: AggregatedData, points: np.ndarray) -> np.ndarray:
    """The exact number of records of ``data`` equal to each row of ``points`` (whole-row keys, §10.1)."""
    return count_equal(data.codes, data.counts, np.asarray(points, dtype=np.int64), data.domain.sizes)


def record_scores(true: np.ndarray, fitted: np.ndarray, sigma2: Fraction) -> np.ndarray:
    """Integer scores ``|q(D) - round(q(p))| - round(sqrt(2/pi) sigma)``: each moves by at most 1 per neighbour (§8.3)."""
    return np.abs(true - np.rint(fitted).astype(np.int64)) - round(math.sqrt(2 / math.pi * float(sigma2)))


def _record_round(data: AggregatedData, estimate: GraphicalModel | WeightedSample, *, select_rho: Fraction,
                  measure_rho: Fraction, options: MeasureOptions, ledger: ZcdpLedger, relation: str,
                  rng: PrivateRandom, generator: np.random.Generator,
                  label: str) -> tuple[Measurement, np.ndarray, NoisyGroup]:
    """The exponential mechanism over the estimate's most probable records, then the chosen record's count alone.

    The candidates are the ``record_candidates`` records drawn most often in
    a sample of the estimate (public given the transcript), each as the
    conjunction fixing every attribute.  The exponential mechanism gets
    the largest ``eps`` with ``eps**2/8`` within ``select_rho`` (§8.2 (M2)); the score
    ``|q(D) - round(q(p))| - round(sqrt(2/pi) sigma)`` of one counting query
    moves by at most 1 under both relations (§8.3), and so does the
    measured count (``Delta2 = 1``); ``k`` times that for units of ``k`` rows
    (the exponential mechanism reads ``k`` off the ledger, the measurement here, §10.6).
    """
    domain = data.domain
    every = tuple(range(len(domain)))
    sample = estimate.sample(options.estimator.scoring_sample, generator)
    records, drawn = np.unique(sample, axis=0, return_counts=True)
    top = np.argsort(-drawn, kind="stable")[: options.record_candidates]
    points, fitted = records[top], drawn[top] * (estimate.total / len(sample))
    true = record_counts(data, points)
    count_sq = ledger.contribution_bound**2  # Delta2^2 of one count for k-row neighbours (§10.6)
    sigma2 = sigma2_up(Fraction(count_sq, 2) / measure_rho)
    scores = record_scores(true, fitted, sigma2)
    epsilon = epsilon_for_exponential(select_rho)
    pick = exponential_mechanism(scores, epsilon=epsilon, sensitivity=1, rng=rng, ledger=ledger, relation=relation,
                                 label=label)
    point = points[pick]
    words = " AND ".join(f"{domain.names[a]}={v}" for a, v in enumerate(point))
    m, y = _measure_one(true[pick : pick + 1], every, sigma2, count_sq, ledger=ledger, relation=relation, rng=rng,
                        domain=domain, selection_epsilon=epsilon, selected_by="record", query=words)
    group = NoisyGroup(words, lambda codes: np.where((codes == point).all(axis=1), 0, -1), 1, y.astype(float),
                       float(sigma2))
    return m, y, group


# --------------------------------------------------------------------------
# the state the steps share
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class _Run:
    """What every step reads: the data and its exact counts, the weighted candidates, the settings, the ledger.

    ``start`` is what the noise family's ledger had spent before the run, so :meth:`left` is what this run may
    still spend (the filter, §8.4).  ``generator`` serves post-processing only: scoring samples and the records.
    """

    data: AggregatedData
    answers: _TrueCounts  # exact integers, counted when a round first scores them
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
        return max(self.weights.values()) * _count_change(self.relation)

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
        return _measure_one(self.answers[r], self.views.base(r), scale, self.noise.sensitivity(), ledger=self.ledger,
                            relation=self.relation, rng=self.rng, domain=self.domain, noise=self.noise,
                            groups=self.views.group_counts(r), **provenance)


@dataclass
class _Measured:
    """What the run has paid for so far and the graphical model fitted to it (§8.7).

    ``noisy``: the measurements the model holds; ``groups``: those only the reweighted sample serves.
    """

    model: GraphicalModel | None = None
    paid: list[Measurement] = field(default_factory=list)
    noisy: list[NoisyMarginal] = field(default_factory=list)
    groups: list[NoisyGroup] = field(default_factory=list)
    #: The marginal measurements among ``groups``, as read (for the support's copula, §8.12).
    readings: list[NoisyMarginal] = field(default_factory=list)


@dataclass(frozen=True)
class _RoundBudget:
    """What the next round spends (§8.4): a marginal round selects at ``epsilon`` and measures at ``scale``, a
    record or oracle round spends ``round_rho``; each annealing step grows both ``noise.growth``-fold."""

    round_rho: Fraction
    epsilon: Fraction
    scale: Fraction
    anneals: int = 0


def _count_change(relation: str) -> int:
    """How far one row moves an integer count score: 1 under add/remove, 2 under replace-one (§8.3)."""
    return 1 if relation == ADD_REMOVE else 2


def _planned_rounds(run: _Run) -> int:
    """The planned rounds, ``rounds_per_attribute * d``: the first rounds get ``budget`` over this many (§8.1)."""
    return run.options.rounds_per_attribute * len(run.domain)


def _round_cap(run: _Run, spanning: bool) -> int:
    """The public cap on the rounds: ``max_rounds``, else ``ceil(c sqrt(d))`` after a spanning step (§8.9), else
    the planned rounds."""
    if run.options.max_rounds:
        return run.options.max_rounds
    return adaptive_rounds(len(run.domain), run.options.rounds_per_sqrt_attribute) if spanning \
        else _planned_rounds(run)


def _spanning_third(run: _Run) -> Fraction:
    """A third of the spanning step's share: for the 1-way marginals, the picks, the pairs' measurements (§8.9)."""
    return run.options.spanning_share * run.budget / 3


def _first_budget(run: _Run, spanning: bool, t_max: int) -> _RoundBudget:
    """The first round's cost: ``budget`` over the planned rounds, or after a spanning step what is left over the
    round cap (§8.9); ``selection_share`` of it selects, the rest measures."""
    round_rho = run.left() / t_max if spanning else run.budget / _planned_rounds(run)
    return _RoundBudget(round_rho, *run.noise.split(round_rho, run.options.selection_share))


def _last_budget(run: _Run, remaining: Fraction) -> _RoundBudget:
    """The filter's last round: exactly what is left, split as any round (rounded down, §8.4)."""
    return _RoundBudget(remaining, *run.noise.split(remaining, run.options.selection_share))


def _annealed(noise: NoiseFamily, spend: _RoundBudget) -> _RoundBudget:
    """Halve the noise's standard deviation and double ``epsilon`` (§8.4; §10.2: the Laplace rate, twofold)."""
    epsilon, scale = noise.anneal(spend.epsilon, spend.scale)
    return _RoundBudget(spend.round_rho * noise.growth, epsilon, scale, spend.anneals + 1)


def _round_cost(noise: NoiseFamily, spend: _RoundBudget, kind: str) -> Fraction:
    """What a round of ``kind`` costs at ``spend``: the filter admits it while twice this is left (§8.4)."""
    if kind == "marginal":
        return noise.selection_cost(spend.epsilon) + noise.measurement_cost(spend.scale)
    return spend.round_rho


# --------------------------------------------------------------------------
# estimate (post-processing, §8.7)
# --------------------------------------------------------------------------
def _refit(run: _Run, measured: _Measured, iters: int | None = None) -> None:
    """Fit the graphical model to the measurements it holds, warm-started from the last fit."""
    settings = run.options.estimator
    measured.model = estimators.fit(run.domain, measured.noisy, iters or settings.iters, warm_start=measured.model,
                                    excluded=empty_tails(run.domain, measured.noisy, sds=settings.tail_sds))


def _hold(run: _Run, measured: _Measured, m: Measurement, y: np.ndarray) -> None:
    """Add a paid marginal measurement to what the model holds (refit separately)."""
    measured.paid.append(m)
    measured.noisy.append(_noisy(run, m, y))


def _noisy(run: _Run, m: Measurement, y: np.ndarray) -> NoisyMarginal:
    """A paid marginal measurement as the estimators read it: its variance, and its groups when coarse (§8.11)."""
    groups = None if m.groups is None else run.views.attr_maps(m.attrs)
    return NoisyMarginal(m.attrs, y, run.noise.variance(m.scale), groups)


def _estimate(run: _Run, measured: _Measured, iters: int, support: int, growth: float = CAPPED_GROWTH,
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
    copula = _copula(run, maps, tables)
    redraw = _support_redraw(run, model, copula, maps, tables)
    bar = RoundProgress(iters, enabled=progress, desc="the reweighted sample's fit", unit="step")
    sample = fit_weights(model, everything, support=support, iters=iters, generator=run.generator, growth=growth,
                         redraw=redraw, on_step=bar.update)
    bar.close()
    return sample if copula is None else replace(sample, copula=copula)


def _released_pairs(run: _Run, measured: _Measured
                    ) -> tuple[dict[int, np.ndarray], dict[tuple[int, int], tuple[np.ndarray, float]]]:
    """The group maps of the numeric columns read through groups, and the released tables of their pairs
    (:func:`~synthdp.methods.measure.copula.pair_tables`, §8.12 step 1), which the copula and the pairs it leaves out
    both read; none when the option says the model draws them or fewer than two columns have groups."""
    maps = {a: m for a, m in enumerate(run.views.maps) if m is not None}
    if run.options.numeric_support != "copula" or len(maps) < 2:
        return maps, {}
    return maps, pair_tables(measured.noisy + measured.readings, list(maps), maps, run.domain)


def _copula(run: _Run, maps: dict[int, np.ndarray], tables: dict[tuple[int, int], tuple[np.ndarray, float]]
            ) -> Copula | None:
    """The numeric columns that move together and their copula (§8.12): those with a correlation of at least
    ``copula_from`` with another, read off the released tables of their pairs (:func:`_released_pairs`), which a
    copula fits; None when there are no tables or fewer than two columns qualify.  The reweighted sample's support
    draws them again from the copula given one of them, and decoding places their values inside their cells by it.
    Post-processing: released counts, the public domain and options."""
    views = list(maps)
    if not tables:
        return None
    corr, explained, error = correlations(tables, views)
    strong = strong_columns(corr, explained, error, correlation=run.options.copula_from, share=COPULA_EXPLAINED)
    log.debug("the support's copula: correlations %s, explained %s, errors %s, columns %s",
              np.round(corr, 3).tolist(), np.round(explained, 3).tolist(), np.round(error, 3).tolist(),
              [views[i] for i in strong])
    if len(strong) < 2:
        return None
    return Copula(tuple(views[i] for i in strong), copula_matrix(corr[np.ix_(strong, strong)]))


def _support_redraw(run: _Run, model: GraphicalModel, copula: Copula | None, maps: dict[int, np.ndarray],
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


def _cover_fit(run: _Run, measured: _Measured) -> tuple[int, float]:
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


# --------------------------------------------------------------------------
# the steps of §8.1
# --------------------------------------------------------------------------
def _initialise(run: _Run, spanning: bool) -> _Measured:
    """Step 2: every 1-way marginal at the measurement share of one planned round (or, on a wide table, at a
    third of the spanning share over ``d``, §8.9), and the model of them."""
    d = len(run.domain)
    if spanning:
        scale = run.noise.scale_for(_spanning_third(run) / d)
    else:
        _, scale = run.noise.split(run.budget / _planned_rounds(run), run.options.selection_share)
    measured = _Measured()
    for a in range(d):
        _hold(run, measured, *run.measure((a,), scale, selection_epsilon=None, selected_by="initial"))
    _refit(run, measured)
    return measured


def _spanning_step(run: _Run, measured: _Measured) -> None:
    """§8.9 step 1: ``d - 1`` pairs picked by Kruskal's rule against the 1-way model, then measured."""
    d = len(run.domain)
    share = _spanning_third(run) / (d - 1)
    scale, epsilon = run.noise.scale_for(share), run.noise.selection_epsilon(share)
    pairs = [r for r in run.weights if len(r) == 2 and run.views.groups(r) is None]
    scores = pair_scores(pairs, run.answers, measured.model, run.noise.mean_abs(scale))
    picked = spanning_pairs(pairs, scores, d, epsilon=epsilon, sensitivity=_count_change(run.relation),
                            ledger=run.ledger, relation=run.relation, rng=run.rng)
    for r in picked:
        _hold(run, measured, *run.measure(r, scale, selection_epsilon=epsilon))
    _refit(run, measured)


def _select(run: _Run, model: GraphicalModel, spend: _RoundBudget, label: str) -> tuple[Marginal, np.ndarray]:
    """Step 3 (b): the exponential mechanism over the candidates within the public size cap (§8.1, §8.4).

    A round with more candidates than ``candidate_pool`` scores a public uniform draw of them (§8.9); those no
    clique holds are counted on one sample of the model.  Returns the pick and the model's counts on it.
    """
    domain, options = run.domain, run.options
    cap = options.max_model_cells * run.spent_share()
    views = run.views
    pool = candidate_pool(list(run.weights), options.candidate_pool, run.generator)
    base = {r: views.base(r) for r in pool}  # the attributes each reads: what a clique must hold
    bases = list(dict.fromkeys(base.values()))  # a coarse twin reads its fine candidate's attributes
    free = [b for b, is_free in zip(bases, unheld(model, bases)) if is_free]
    cells = dict(zip(free, model_cells_with(domain, model.cliques, free)))  # one batch a round
    size = {r: cells[base[r]] for r in pool if base[r] in cells}
    coarse_cap = cap * options.coarse_model_share  # a coarse twin grows the model by its fine cells (§8.11)
    candidates = [r for r in pool if r not in size or size[r] <= (cap if views.groups(r) is None else coarse_cap)]
    sample = model.sample(options.estimator.scoring_sample, run.generator) \
        if any(r in size for r in candidates) else None
    scores = _scores(candidates, run.weights, run.answers, model, sample, run.noise.mean_abs(spend.scale), views,
                     set(size))
    pick = exponential_mechanism(scores, epsilon=spend.epsilon, sensitivity=run.score_sensitivity, rng=run.rng,
                                 ledger=run.ledger, relation=run.relation, label=label)
    r = candidates[pick]
    return r, _fitted(model, sample, r, views)


def _marginal_round(run: _Run, measured: _Measured, spend: _RoundBudget, t: int, bar: RoundProgress) -> bool:
    """Step 3 (b)-(d): select a marginal, measure it, refit; True when the refit barely moved on it (anneal).

    The annealing test reads released values only: the model before and after the new measurement (§8.4).
    """
    r, before = _select(run, measured.model, spend, f"select round {t}")
    if run.options.refine_rounds and _refines(run, r):
        found = _refined(run, r, run.noise.measurement_cost(spend.scale), selection_epsilon=spend.epsilon,
                         selected_by="exponential")
        for m, noisy in found:
            measured.paid.append(m)
            measured.noisy.append(noisy)
        m = found[0][0]
    else:
        m, y = run.measure(r, spend.scale, selection_epsilon=spend.epsilon)
        _hold(run, measured, m, y)
    _refit(run, measured)
    change = float(np.abs(run.views.read(r, measured.model.counts(m.attrs)) - before).sum())
    bar.update(t, share=run.spent_share(), marginal=",".join(m.names), change=f"{change:.0f}")
    log.info("measure round %d: %s sigma2=%.6g eps=%.6g change=%.1f", t, m.names, float(spend.scale),
             float(spend.epsilon), change)
    return change <= run.noise.mean_abs(spend.scale) * run.views.cells(r)


def _wide_round(run: _Run, measured: _Measured, kind: str, oracle: OracleSelection | None, spend: Fraction, t: int,
                bar: RoundProgress) -> None:
    """A record or an oracle round (§8.1, classes beyond marginals) within ``spend``: ``wide_share`` of it selects
    (fixed before it runs), the rest measures; the measurement goes to the model when a clique can hold it
    within the size cap, else to the reweighted sample (§8.7)."""
    share = dict(select_rho=run.options.wide_share * spend, measure_rho=(1 - run.options.wide_share) * spend,
                 options=run.options, ledger=run.ledger, relation=run.relation, rng=run.rng,
                 generator=run.generator, label=f"select round {t}")
    estimate = _estimate(run, measured, run.options.support_iters, run.options.support)
    if kind == "record":
        found = _record_round(run.data, estimate, **share)
    else:
        found = _oracle_round(run.data, estimate, oracle, sensitivity_sq=run.noise.sensitivity(), **share)
    if found is not None:
        _serve(run, measured, *found)
    bar.update(t, share=run.spent_share(), marginal=kind)
    log.info("measure round %d: %s selected %s", t, kind,
             "nothing" if found is None else found[0].query or found[0].names)


def _serve(run: _Run, measured: _Measured, m: Measurement, y: np.ndarray, group: NoisyGroup | None) -> None:
    """Hand a record or oracle measurement to the model when a clique holds it or fits under the size cap (a
    widened marginal), else to the reweighted sample (one query, or a marginal past the cap, §8.1)."""
    model, cap = measured.model, run.options.max_model_cells * run.spent_share()
    local = group is None and (model.holder(m.attrs) is not None
                               or model_cells_with(run.domain, model.cliques, [m.attrs])[0] <= cap)
    if local:
        measured.noisy.append(NoisyMarginal(m.attrs, y, float(m.sigma2)))
        _refit(run, measured)
    elif group is not None:
        measured.groups.append(group)
    else:
        measured.readings.append(NoisyMarginal(m.attrs, y, float(m.sigma2)))
        measured.groups.append(marginal_group(run.domain, measured.readings[-1]))
    measured.paid.append(m if local else replace(m, estimator=REWEIGHTED_SAMPLE))


def _cover(run: _Run, measured: _Measured, workload: Sequence[Marginal], progress: bool) -> int:
    """Step 4 (§8.10): what is left, water-filled over the workload marginals by the precision already paid for
    them (the noise family's ``precision_power``), less the ones whose noise would exceed the released total over
    their cells (:func:`plan_cover`, §13); each kept marginal measured once at the scale for its share (rounded
    safely, charged before its noise), finely or through its coarse twin (:func:`_cover_readings`, §8.11), and
    served by the reweighted sample (§8.7).  Returns how many were skipped."""
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
    bar = RoundProgress(len(kept), enabled=progress, desc="the covering step", unit="marginal")
    for done, (r, share, key) in enumerate(kept, 1):
        if _refines(run, key):
            found = _refined(run, key, share)
        else:
            m, y = run.measure(key, noise.scale_for(share), selection_epsilon=None, selected_by="cover")
            found = [(m, _noisy(run, m, y))]
        for m, noisy in found:
            measured.readings.append(noisy)
            measured.groups.append(marginal_group(run.domain, noisy))
            measured.paid.append(replace(m, estimator=REWEIGHTED_SAMPLE))
        run.answers.forget(key)  # each workload marginal is measured once here: its true counts are not read again
        bar.update(done)
    bar.close()
    return len(shares) - len(kept)


def _effective_cells(run: _Run, measured: _Measured, key: Marginal) -> float:
    """The cells the records of reading ``key`` effectively spread over (§13, :func:`effective_cells`): from the
    model's one-way counts (fitted to the noisy one-way marginals), each read through its groups when ``key`` does.
    Post-processing of released counts and the public views."""
    maps = run.views.groups(key) or (None,) * len(key)
    return effective_cells(group_sum(measured.model.counts((a,)), (m,)) for a, m in zip(run.views.base(key), maps))


def _released_total(measured: _Measured) -> float:
    """The released total the covering step's plan reads (§13): the model's noisy total (§8.6), never ``n``."""
    return measured.model.total


def _refines(run: _Run, r: Marginal) -> bool:
    """Whether candidate ``r`` is measured as a refined reading (docs/privacy.md §11.1): a coarse twin, under zCDP
    (light-tailed noise), with a split rule, whose fine marginal may be read cell by cell (the levels read its fine
    counts; §8.11 step 2).  Public: the candidate, the domain, the noise family, the options."""
    views = run.views
    return (views.groups(r) is not None and run.noise.light_tailed and run.options.refine_split != "none"
            and views.read_finely(views.base(r)))


def _refined(run: _Run, twin: Marginal, share: Fraction, selection_epsilon: Fraction | None = None,
             selected_by: str = "cover") -> list[tuple[Measurement, NoisyMarginal]]:
    """The coarse ``twin`` measured at ``share`` as a refined reading (docs/privacy.md §11.1): the twin, then each
    level below from the released counts of the last, each level's scale fixed from a public part of ``share`` and
    charged before its noise (:func:`_measure_one`); a level the filter cannot pay is not measured."""
    attrs, maps, options = run.views.base(twin), run.views.groups(twin), run.options
    shape = tuple(run.domain.sizes[a] for a in attrs)
    shares = level_shares(share, options.refine_coarse_share, depth(shape, maps, options.refine_split))

    def measure(answers: np.ndarray, scale: Fraction, level: int) -> tuple[Measurement, np.ndarray] | None:
        if run.noise.measurement_cost(scale) > run.left():
            return None
        groups = run.views.group_counts(twin) if level == 0 else None
        return _measure_one(answers, attrs, scale, run.noise.sensitivity(), ledger=run.ledger, relation=run.relation,
                            rng=run.rng, domain=run.domain, selection_epsilon=selection_epsilon if level == 0 else None,
                            selected_by=selected_by, noise=run.noise, groups=groups, level=level)

    levels = refined_reading(run.answers[attrs], shape, maps, shares, scale_for=run.noise.scale_for, measure=measure,
                             threshold=options.refine_threshold, split=options.refine_split)
    return [(m, NoisyMarginal(attrs, y, run.noise.variance(m.scale), groups=maps) if m.level == 0 else
             NoisyMarginal(attrs, y, run.noise.variance(m.scale), labels=level.labels)) for m, y, level in levels]


def _cover_readings(run: _Run, model: GraphicalModel, shares: Sequence[tuple[Marginal, Fraction]]) -> list[Marginal]:
    """How the covering step measures each workload marginal ``r`` at its ``scale`` (§8.11 step 5): through its
    coarse twin when ``r`` is read through it only (more than ``max_fine_cells`` cells, step 2); else finely when the
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
        twin = views.coarse(r)
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


def _rounds(run: _Run, measured: _Measured, oracle: OracleSelection | None, spanning: bool, progress: bool) -> int:
    """Step 3, while the filter admits a round; the last takes exactly what is left of ``run.budget`` (§8.4).

    Returns the number of rounds run.
    """
    t_max, noise, options = _round_cap(run, spanning), run.noise, run.options
    schedule, t = _first_budget(run, spanning, t_max), 0
    bar = RoundProgress(t_max, enabled=progress, desc="measure rounds", until_spent=True)
    while True:
        t += 1
        kind, remaining = _round_kind(t, schedule.anneals, oracle, options), run.left()
        last = remaining < 2 * _round_cost(noise, schedule, kind) or t >= t_max
        spend = _last_budget(run, remaining) if last else schedule
        cheapest = min(_round_cost(noise, schedule, "marginal"), schedule.round_rho)  # annealing only raises it
        bar.limit(0 if last else min(t_max - t, math.floor((remaining - _round_cost(noise, spend, kind)) / cheapest)))
        if kind == "marginal":
            settled = _marginal_round(run, measured, spend, t, bar)
        else:
            _wide_round(run, measured, kind, oracle, spend.round_rho, t, bar)
        if last:
            break
        if kind == "marginal" and settled:
            schedule = _annealed(noise, schedule)
    bar.close(t)
    return t


def _release(run: _Run, measured: _Measured, n_rows: int | None, rounds: int, covered: bool,
             phases: Phases) -> MeasureRelease:
    """Step 5: refit with more iterations, then draw ``n_rows`` records, or the model's own total (§8.6); after a
    covering step the reweighted sample has the covering settings (``covered``).  The true counts are dropped
    first: nothing from here on reads the data."""
    run.answers.clear()
    with phases(f"the final fit ({run.options.estimator.final_iters} steps)"):
        _refit(run, measured, run.options.estimator.final_iters)
    return_freed_memory()
    options = run.options
    support, (iters, growth) = (options.cover_support, _cover_fit(run, measured)) if covered \
        else (options.support, (options.support_final_iters, CAPPED_GROWTH))
    with (phases(f"the reweighted sample ({len(measured.groups)} measurements, {iters} steps)") if measured.groups
          else nullcontext()):
        final = _estimate(run, measured, iters, support, growth, progress=phases.enabled)
    rows = n_rows if n_rows is not None else max(1, int(round(measured.model.total)))
    with phases(f"drawing {rows} records"):
        records = final.sample(rows, run.generator)
    return MeasureRelease(records, measured.paid, rounds, run.budget - run.left(), measured.model.total, final)


def _noise_family(budget: Fraction, *, relation: str, ledger, n_rows: int | None, oracle: OracleSelection | None,
                  pure: bool) -> NoiseFamily:
    """The run's noise family, once the public inputs are checked against each other and the ledger (§10.2)."""
    check_relation(relation)
    unit = "epsilon" if pure else "rho"
    if not isinstance(budget, Fraction) or budget <= 0:
        raise InputError(f"budget must be a positive {unit} as a Fraction, got {budget!r}")
    if pure and oracle is not None:
        raise InputError("pure DP serves marginal classes only: RSPM's noise cap and the record rounds need zCDP "
                         "(docs/privacy.md §10.2); pass a delta")
    noise: NoiseFamily = (LaplaceNoise if pure else GaussianNoise)(relation, ledger.contribution_bound)
    available = (ledger.epsilon_budget - noise.spent(ledger)) if pure else ledger.remaining
    if budget > available:
        raise InputError(f"budget {unit}={float(budget):.6g} exceeds what the ledger has left ({float(available):.6g})")
    if n_rows is not None and (isinstance(n_rows, bool) or not isinstance(n_rows, int) or n_rows < 1):
        raise InputError(f"n_rows must be a positive integer or None, got {n_rows!r}")
    return noise


def measure(data: AggregatedData, workload: str | QueryClass | Sequence[Sequence[int]], *, budget: Fraction,
            relation: str, ledger, rng: PrivateRandom, n_rows: int | None = None,
            options: MeasureOptions = MeasureOptions(), progress: bool = True,
            oracle: OracleSelection | None = None, pure: bool = False) -> MeasureRelease:
    """Run select-measure-estimate within ``budget`` (rho, zCDP) and draw synthetic records (docs/privacy.md §8).

    ``ledger`` receives every charge before its noise is drawn and refuses
    any that would exceed its own budget; ``budget`` is what this run may
    spend of it.  ``pure=True``: pure DP (docs/privacy.md §10.2): ``budget``
    is an ``epsilon``, ``ledger`` the run's pure
    :class:`~synthdp.accounting.ledger.Ledger` (the filter of Theorem
    10.2), the measurements discrete Laplace and the exponential mechanism
    charged its ``eps``; marginal classes only (no ``oracle``).  The output has ``n_rows`` records, or as many as the
    model's own (noisy) total -- never the true number of records.
    ``oracle``: a class beyond marginals (``workload`` is then not read).
    The exponential mechanism scores the backbone of
    ``options.backbone_width``-way marginals; every ``options.record_every``-th
    round it picks instead among the estimate's most probable records, and
    every ``options.oracle_every``-th round (off by default) RSPM selects
    over ``oracle.query_class`` (docs/privacy.md §8.1).
    """
    noise = _noise_family(budget, relation=relation, ledger=ledger, n_rows=n_rows, oracle=oracle, pure=pure)
    marginals = workload_marginals(workload, data.domain) if oracle is None \
        else backbone_marginals(data.domain, options.backbone_width)
    weights = candidate_weights(marginals)
    views = CoarseViews.for_options(data.domain, options)  # §8.11: public
    spanning = uses_spanning_step(len(data.domain), list(weights), options.spanning_from)  # §8.9: public
    covering = uses_covering_step(len(data.domain), list(weights), options, oracle=oracle is not None,
                                  light_tailed=noise.light_tailed)  # §8.10: public
    candidates = views.fine_candidates(weights) | views.candidates(weights)
    run = _Run(data, _TrueCounts(data, views), candidates, views, options, noise, budget, ledger, relation, rng,
               rng.numpy_generator(), noise.spent(ledger))
    # steps 2-3 spend this; under pure DP without the covering step a larger public share of each round selects
    share = options.selection_share if covering or noise.light_tailed else options.uncovered_pure_selection_share
    rounds = replace(run, budget=rounds_budget(budget, options.cover_share, covering),
                     options=replace(options, selection_share=share))
    phases = Phases(enabled=progress)
    with phases(f"measuring the {len(data.domain)} one-way marginals"):
        measured = _initialise(rounds, spanning)
    if spanning:
        with phases("the spanning step"):
            _spanning_step(rounds, measured)
    t = _rounds(rounds, measured, oracle, spanning, progress)
    return_freed_memory()  # between the steps: the peak, not the values (docs/benchmarks.md, 300k rows)
    skipped = 0
    if covering:
        with phases(f"the covering step over {len(marginals)} workload marginals"):
            skipped = _cover(run, measured, marginals, progress)
        return_freed_memory()
    return replace(_release(run, measured, n_rows, t, covering, phases), cover_skipped=skipped)
