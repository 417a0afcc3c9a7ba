"""Select-measure-estimate over marginal workloads (``method="measure"``; docs/privacy.md §8).

The algorithm (§8.1, in the manner of AIM, McKenna et al. 2022)::

    measure every 1-way marginal with discrete Gaussian noise (a public share of rho)
    repeat, while the filter admits a round (§8.4):
        p  <- estimate(all measurements)                        # post-processing (§8.7)
        r  <- EM over candidate marginals, score                # §8.2 (M2), eps**2/8
              w_r (||r(D) - r(p)||_1 - sqrt(2/pi) sigma cells_r)
        y  <- r(D) + N_Z(0, sigma2)^cells_r                      # §8.2 (M1), Delta2**2/(2 sigma2)
        if p barely moved on r: halve sigma, double eps          # decided from released values only
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
:mod:`synthdp.methods.reweight`.

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

import itertools
import logging
import math
from collections import Counter
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Sequence

import numpy as np

from synthdp.core.data import AggregatedData
from synthdp.core.domain import Domain
from synthdp.core.errors import InputError
from synthdp.core.keys import count_equal
from synthdp.core.progress import RoundProgress
from synthdp.accounting.ledger import ADD_REMOVE, check_relation
from synthdp.mechanisms.gaussian import discrete_gaussian_array, sigma2_up
from synthdp.mechanisms.laplace import laplace_measure
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.mechanisms.rspm import difference_sensitivity, rspm
from synthdp.mechanisms.selection import exponential_mechanism
from synthdp.accounting.zcdp import (
    ZcdpLedger, epsilon_for_exponential, epsilon_for_pure, exponential_rho, gaussian_rho, pure_rho,
)
from synthdp.methods import estimators
from synthdp.methods.estimators import EstimatorSettings, GraphicalModel, NoisyMarginal
from synthdp.methods.marginal_counts import marginal_counts
from synthdp.methods.model_size import model_cells_with
from synthdp.methods.noise_family import GaussianNoise, LaplaceNoise, NoiseFamily
from synthdp.methods.players import game_instance
from synthdp.methods.spanning import (
    adaptive_rounds, candidate_pool, pair_scores, spanning_pairs, unheld, uses_spanning_step,
)
from synthdp.methods.reweight import NoisyGroup, WeightedSample, fit_weights, marginal_group, query_group
from synthdp.oracles.base import Limits, Oracle
from synthdp.queries.base import QueryClass
from synthdp.queries.binary import FeatureSet, FeatureSetClass
from synthdp.queries.complement import Not, base_class
from synthdp.queries.conjunctions import Conjunction, Conjunctions
from synthdp.queries.disjunctions import Disjunction, Disjunctions
from synthdp.queries.halfspaces import Halfspace
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


@dataclass(frozen=True)
class MeasureOptions:
    """Public settings of the method (chosen on NLTCS and BR2000; docs/privacy.md §8.4, §8.7)."""

    #: Planned rounds per attribute: the first rounds get ``rho / (rounds_per_attribute * d)`` each.
    #: 8 was chosen among 8, 16, 32 on NLTCS (all 3-way) and BR2000 (64 random 3-way), eps 0.1 and 1.
    rounds_per_attribute: int = 8
    #: Share of each round's rho spent on selection (the rest measures).
    selection_share: Fraction = Fraction(1, 10)
    #: Public cap on the rounds after initialisation (None: ``rounds_per_attribute * d``).
    max_rounds: int | None = None
    #: Cells the fitted model may hold once the whole budget is spent (the cap grows linearly with it).
    max_model_cells: int = 1_000_000
    estimator: EstimatorSettings = field(default_factory=EstimatorSettings)
    #: Classes served through the oracle: the widest marginals the exponential mechanism enumerates.
    backbone_width: int = 3
    #: Classes served through the oracle: every ``oracle_every``-th round selects with RSPM (0: never).  Off by
    #: default: on NLTCS (eps 1) RSPM rounds every 12th round raised the certified error over all conjunctions
    #: from 0.0110 to 0.0120 -- at these budgets RSPM's noise (about 2m/eps counts per separator point)
    #: swamps the errors left after the backbone and the record rounds (docs/benchmarks.md).
    oracle_every: int = 0
    #: Share of an oracle or record round's rho spent on selecting (RSPM: eps**2/2; EM: eps**2/8); the rest measures.
    wide_share: Fraction = Fraction(1, 2)
    #: Records drawn from the estimate for RSPM's objective (its N: Delta = 2N, docs/privacy.md §8.1 (b)).
    oracle_samples: int = 1000
    #: An oracle-selected query is widened to the marginal on its attributes when that has at most these cells.
    widen_cells: int = 64
    #: Draws from the model whose distinct records are the reweighted estimator's support (docs/privacy.md §8.7),
    #: and its iterations per fit.
    support: int = 200_000
    support_iters: int = 100
    support_final_iters: int = 400
    #: Classes served through the oracle: every ``record_every``-th round the exponential mechanism picks one of
    #: the estimate's ``record_candidates`` most probable records and its count is measured (0: never), once
    #: the backbone has annealed ``record_after`` times.  On NLTCS (5 seeds, certified error over all
    #: conjunctions at eps 0.1/0.25/0.5/1): 0.056/0.030/0.019/0.011 with these settings, 0.056/0.033/0.019/0.012
    #: with records from the start, 0.060/0.030/0.024/0.018 without records; every 4th or 16th round was no better.
    record_every: int = 8
    record_candidates: int = 64
    record_after: int = 1
    #: Wide tables (docs/privacy.md §8.9): from this many attributes, and when 2-way marginals are candidates, a
    #: spanning step with ``spanning_share`` of rho comes first (1-way marginals, ``d - 1`` pairs picked by
    #: Kruskal's rule with the exponential mechanism, then measured), and the adaptive rounds are capped at
    #: ``ceil(rounds_per_sqrt_attribute * sqrt(d))``.  Chosen on generated tree-structured tables of 50 and 100
    #: columns (``synthdp bench width``); narrower tables (NLTCS, ADULT, ACS, BR2000) run as before.
    spanning_from: int = 32
    spanning_share: Fraction = Fraction(1, 2)
    rounds_per_sqrt_attribute: int = 4
    #: A round with more candidates scores this many of them, drawn uniformly with the public generator (§8.9).
    candidate_pool: int = 5000

    def __post_init__(self) -> None:
        if isinstance(self.rounds_per_attribute, bool) or not isinstance(self.rounds_per_attribute, int) \
                or self.rounds_per_attribute < 1:
            raise InputError(f"rounds_per_attribute must be a positive integer, got {self.rounds_per_attribute!r}")
        if not isinstance(self.selection_share, Fraction) or not 0 < self.selection_share < 1:
            raise InputError(f"selection_share must be a Fraction in (0, 1), got {self.selection_share!r}")
        if self.max_rounds is not None and (isinstance(self.max_rounds, bool) or not isinstance(self.max_rounds, int)
                                            or self.max_rounds < 1):
            raise InputError(f"max_rounds must be a positive integer or None, got {self.max_rounds!r}")
        for name in ("max_model_cells", "backbone_width", "oracle_samples", "widen_cells", "support", "support_iters",
                     "support_final_iters", "record_candidates", "spanning_from", "rounds_per_sqrt_attribute",
                     "candidate_pool"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise InputError(f"{name} must be a positive integer, got {value!r}")
        for name in ("wide_share", "spanning_share"):
            value = getattr(self, name)
            if not isinstance(value, Fraction) or not 0 < value < 1:
                raise InputError(f"{name} must be a Fraction in (0, 1), got {value!r}")
        for name in ("oracle_every", "record_every", "record_after"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InputError(f"{name} must be an integer >= 0 (0: never), got {value!r}")


#: Who chose a measurement: nobody (the initial 1-way marginals), the exponential mechanism over marginals or
#: over the estimate's most probable records (``record``), or RSPM.
SELECTORS = ("initial", "exponential", "record", "rspm")
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

    def __post_init__(self) -> None:
        if self.selected_by not in SELECTORS:
            raise InputError(f"selected_by must be one of {SELECTORS}, got {self.selected_by!r}")

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
        return {"marginal": list(self.names), "query": self.query, **noise, "selected_by": self.selected_by,
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
    if isinstance(qc, Workload):
        return list(qc.marginal_attrs)
    if type(qc) is Conjunctions:
        widths = range(max(qc.min_width, 1), qc.max_width + 1)
    elif (width := _attributes_read(qc)) is not None:
        widths = range(min(width, len(domain)), min(width, len(domain)) + 1)  # their subsets are candidates too
    else:
        raise InputError(f"{query_class.name} is not a marginal class: its queries may read every attribute")
    count = sum(math.comb(len(domain), k) for k in range(1, widths[-1] + 1))  # the candidates: all their subsets
    if count > marginal_limit(widths[-1]):
        raise InputError(f"{qc.name} would need {count} marginals (at most {marginal_limit(widths[-1])}); it is served "
                         "through "
                         "the oracle path")
    return [m for k in widths for m in itertools.combinations(range(len(domain)), k)]


def _attributes_read(qc: QueryClass) -> int | None:
    """At most how many attributes one query of ``qc`` reads (None: unbounded, e.g. halfspaces)."""
    if isinstance(qc, Disjunctions):
        qc = qc.base
    if type(qc) is Conjunctions:
        return qc.max_width
    if isinstance(qc, FeatureSetClass):
        return qc.max_width  # a feature is one (attribute, value) pair: width K reads at most K attributes
    return None


def backbone_marginals(domain: Domain, width: int) -> list[Marginal]:
    """Every marginal on ``width`` attributes (the workload of ``marginals:width``; its subsets are candidates too).

    Weighting the candidates by this workload, rather than by all marginals
    up to ``width``, was better on NLTCS at eps 0.1 and 0.25 (certified error
    over all conjunctions 0.052 vs 0.057 and 0.026 vs 0.033, 2 seeds).
    """
    return list(itertools.combinations(range(len(domain)), min(width, len(domain))))


def query_attributes(query_class: QueryClass, query) -> Marginal:
    """The attributes a query of ``query_class`` reads: a function of the query alone (the widening rule, §8.1 (b))."""
    if isinstance(query, Not):
        query = query.query
    if isinstance(query, Disjunction):
        query = query.inner
    if isinstance(query, Conjunction):
        return tuple(query.attrs)
    columns = getattr(base_class(query_class), "columns", None)
    if isinstance(query, FeatureSet) and columns is not None:
        return tuple(sorted({columns[j][0] for j in query.features}))
    if isinstance(query, Halfspace) and columns is not None:
        return tuple(sorted({columns[j][0] for j, w in enumerate(query.weights) if w}))
    raise InputError(f"cannot tell which attributes {query!r} of {query_class.name} reads")


class _TrueCounts(dict):
    """The data's exact counts on each marginal (flattened), counted the first time a marginal is asked for."""

    def __init__(self, data: AggregatedData):
        super().__init__()
        self.data = data

    def __missing__(self, r: Marginal) -> np.ndarray:
        self[r] = counts = self.data.marginal(r).reshape(-1)
        return counts


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
                 noise: NoiseFamily | None = None) -> tuple[Measurement, np.ndarray]:
    """Charge, then draw: ``y = g(D) + N_Z(0, sigma2)`` per cell (§8.2 (M1), sensitivity by relation §8.3).

    With ``noise`` a :class:`LaplaceNoise` (pure DP, docs/privacy.md §10.2)
    ``sigma2`` is the Laplace rate ``a`` and ``sensitivity_sq`` the l1-sensitivity
    ``Delta_1``: ``y = g(D) + DLap(a)`` per cell, charged ``a Delta_1`` to the pure ledger.
    """
    names = tuple(domain.names[a] for a in attrs)
    note = f"{'query' if query else 'marginal'} {attrs}"
    if isinstance(noise, LaplaceNoise):
        noisy = laplace_measure(answers, rate=sigma2, sensitivity=sensitivity_sq, rng=rng, ledger=ledger,
                                relation=relation, label=f"{note} rate={float(sigma2):.6g}")
        return Measurement(attrs, names, sigma2, sigma2 * sensitivity_sq, selection_epsilon, selected_by, query,
                           noise="laplace"), noisy
    rho = gaussian_rho(sensitivity_sq, sigma2)
    ledger.charge("gaussian", rho, relation, f"{note} sigma2={float(sigma2):.6g}")
    noisy = answers + discrete_gaussian_array(answers.size, sigma2, rng)
    return Measurement(attrs, names, sigma2, rho, selection_epsilon, selected_by, query), noisy


def _scores(candidates: list[Marginal], weights: dict[Marginal, int], answers: dict[Marginal, np.ndarray],
            model: GraphicalModel, sample: np.ndarray | None, noise_per_cell: float, domain: Domain,
            unheld_sets: set[Marginal]) -> np.ndarray:
    """Integer scores ``w_r (sum |r(D) - round(r(p))| - round(noise_per_cell cells_r))`` (§8.1 (b)).

    ``noise_per_cell`` is the expected absolute noise of one measured cell
    (AIM's ``sqrt(2/pi) sigma`` for the Gaussian, ``1/sinh a`` for the
    Laplace, §10.2).  ``r(p)`` is the model's count (its own total); attribute
    sets no model clique holds (``unheld_sets``) are counted on ``sample``
    (records drawn from the model, scaled to its total), all in one pass.
    Both are post-processing of the transcript.
    """
    wide = [r for r in candidates if r in unheld_sets]
    counted = dict(zip(wide, marginal_counts(domain, sample, wide))) if wide else {}
    out = np.empty(len(candidates), dtype=np.int64)
    for i, r in enumerate(candidates):
        fitted = model.counts(r) if r not in counted else counted[r] * (model.total / len(sample))
        l1 = int(np.abs(answers[r] - np.rint(fitted).astype(np.int64)).sum())
        out[i] = weights[r] * (l1 - round(noise_per_cell * answers[r].size))  # size: r's cells
    return out


def _fitted(model: GraphicalModel, sample: np.ndarray | None, r: Marginal,
            counts: np.ndarray | None = None) -> np.ndarray:
    """The model's counts on ``r``: exact when a clique holds ``r``, else from ``sample`` scaled to the model's total.

    ``counts``: ``r``'s counts on ``sample`` when already taken (else counted here).
    """
    if model.holder(r) is not None:
        return model.counts(r)
    if counts is None:
        counts = marginal_counts(model.domain, sample, [r])[0]
    return counts * (model.total / len(sample))


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
    check_relation(relation)
    unit = "epsilon" if pure else "rho"
    if not isinstance(budget, Fraction) or budget <= 0:
        raise InputError(f"budget must be a positive {unit} as a Fraction, got {budget!r}")
    if pure and oracle is not None:
        raise InputError("pure DP serves marginal classes only: RSPM's noise cap and the record rounds need zCDP "
                         "(docs/privacy.md §10.2); pass a delta")
    family = LaplaceNoise if pure else GaussianNoise
    noise: NoiseFamily = family(relation, ledger.contribution_bound)
    available = (ledger.epsilon_budget - noise.spent(ledger)) if pure else ledger.remaining
    if budget > available:
        raise InputError(f"budget {unit}={float(budget):.6g} exceeds what the ledger has left ({float(available):.6g})")
    if n_rows is not None and (isinstance(n_rows, bool) or not isinstance(n_rows, int) or n_rows < 1):
        raise InputError(f"n_rows must be a positive integer or None, got {n_rows!r}")
    domain = data.domain
    if oracle is None:
        weights = candidate_weights(workload_marginals(workload, domain))
    else:
        weights = candidate_weights(backbone_marginals(domain, options.backbone_width))
    answers = _TrueCounts(data)  # exact integers, counted when a round first scores them
    # A marginal's Delta2^2 (1 or 2 for one row, §8.3) or Delta_1 (1 or 2, §10.2), for a unit of k rows k^2 or k
    # times that (§10.6); the score's sensitivity is per row: the exponential mechanism multiplies it by k itself.
    sensitivity_sq = noise.sensitivity()
    score_sensitivity = max(weights.values()) * (1 if relation == ADD_REMOVE else 2)  # §8.3
    d = len(domain)
    planned = options.rounds_per_attribute * d
    spanning = uses_spanning_step(d, list(weights), options.spanning_from)  # §8.9: public (d and the candidates)
    t_max = options.max_rounds or (adaptive_rounds(d, options.rounds_per_sqrt_attribute) if spanning else planned)
    settings = options.estimator
    generator = rng.numpy_generator()  # post-processing only: scoring samples and the released records
    start = noise.spent(ledger)

    def _size_with(cliques: Sequence[Marginal], r: Marginal) -> int:
        """Cells of the model's junction tree with ``r`` added (the public size cap, §8.4)."""
        return model_cells_with(domain, cliques, [r])[0]

    def left() -> Fraction:
        return budget - (noise.spent(ledger) - start)

    def estimate(iters: int = options.support_iters) -> GraphicalModel | WeightedSample:
        """The model, or when some measurement is not local, its sample reweighted to the non-local ones.

        The local measurements enter through the model's fit of them (its
        counts on each measured marginal, at that measurement's scale), so the
        reweighting keeps the model's marginals and moves only as far as the
        non-local measurements ask; fitting the raw noisy marginals again
        would let the support's extra freedom absorb their noise.
        """
        if not groups:
            return model
        fitted = [NoisyMarginal(y.attrs, model.counts(y.attrs), y.sigma2) for y in noisy]
        everything = [marginal_group(domain, y) for y in fitted] + groups
        return fit_weights(model, everything, support=options.support, iters=iters, generator=generator)

    # 1. initialise with every 1-way marginal, each at the measurement share of one planned round (or, on a wide
    # table, at a third of the spanning step's share, §8.9)
    paid: list[Measurement] = []
    noisy: list[NoisyMarginal] = []
    groups: list[NoisyGroup] = []
    third = options.spanning_share * budget / 3
    if spanning:
        sigma2 = noise.scale_for(third / d)
    else:
        _, sigma2 = noise.split(budget / planned, options.selection_share)
    for a in range(d):
        m, y = _measure_one(data.marginal((a,)).reshape(-1), (a,), sigma2, sensitivity_sq, ledger=ledger,
                            relation=relation, rng=rng, domain=domain, selection_epsilon=None, selected_by="initial",
                            noise=noise)
        paid.append(m)
        noisy.append(NoisyMarginal((a,), y, noise.variance(sigma2)))
    model = estimators.fit(domain, noisy, settings.iters)
    if spanning:  # a spanning tree of pairs picked against the 1-way model, then measured (§8.9)
        pairs = [r for r in weights if len(r) == 2]
        sigma2, pick_epsilon = noise.scale_for(third / (d - 1)), noise.selection_epsilon(third / (d - 1))
        picked = spanning_pairs(pairs, pair_scores(pairs, answers, model, noise.mean_abs(sigma2)), d,
                                epsilon=pick_epsilon, sensitivity=1 if relation == ADD_REMOVE else 2, ledger=ledger,
                                relation=relation, rng=rng)
        for r in picked:
            m, y = _measure_one(answers[r], r, sigma2, sensitivity_sq, ledger=ledger, relation=relation, rng=rng,
                                domain=domain, selection_epsilon=pick_epsilon, noise=noise)
            paid.append(m)
            noisy.append(NoisyMarginal(r, y, noise.variance(sigma2)))
        model = estimators.fit(domain, noisy, settings.iters, warm_start=model)

    # 2. rounds
    round_rho = left() / t_max if spanning else budget / planned  # a round's cost, grown (fourfold zCDP, twofold
    epsilon, sigma2 = noise.split(round_rho, options.selection_share)  # pure) by each annealing step
    bar = RoundProgress(t_max, enabled=progress, desc="measure rounds")
    rounds = anneals = 0
    while True:
        rounds += 1
        remaining = left()
        kind = _round_kind(rounds, anneals, oracle, options)
        cost = noise.selection_cost(epsilon) + noise.measurement_cost(sigma2) if kind == "marginal" else round_rho
        last = remaining < 2 * cost or rounds >= t_max
        if kind != "marginal":  # selection's rho fixed before it runs, the measurement's after it, before its noise
            spend = remaining if last else round_rho
            share = dict(select_rho=options.wide_share * spend, measure_rho=(1 - options.wide_share) * spend,
                         options=options, ledger=ledger, relation=relation, rng=rng, generator=generator,
                         label=f"select round {rounds}")
            if kind == "record":
                found = _record_round(data, estimate(), **share)
            else:
                found = _oracle_round(data, estimate(), oracle, sensitivity_sq=sensitivity_sq, **share)
            if found is not None:
                m, y, group = found
                local = group is None and (model.holder(m.attrs) is not None
                                           or _size_with(model.cliques, m.attrs)
                                           <= options.max_model_cells * float(1 - left() / budget))
                if local:
                    noisy.append(NoisyMarginal(m.attrs, y, float(m.sigma2)))
                    model = estimators.fit(domain, noisy, settings.iters, warm_start=model)
                else:
                    groups.append(group or marginal_group(domain, NoisyMarginal(m.attrs, y, float(m.sigma2))))
                paid.append(m if local else replace(m, estimator=REWEIGHTED_SAMPLE))
            bar.update(rounds, rho=f"{float(1 - left() / budget):.0%}", marginal=kind)
            log.info("measure round %d: %s selected %s", rounds, kind,
                     "nothing" if found is None else found[0].query or found[0].names)
            if last:
                break
            continue
        if last:  # the filter: the final round takes exactly what is left (rounded down, §8.4)
            epsilon, sigma2 = noise.split(remaining, options.selection_share)
        cap = options.max_model_cells * float(1 - remaining / budget)
        pool = candidate_pool(list(weights), options.candidate_pool, generator)  # public draw (§8.9)
        wide = [r for r, free in zip(pool, unheld(model, pool)) if free]
        size = dict(zip(wide, model_cells_with(domain, model.cliques, wide)))  # one batch per round
        candidates = [r for r in pool if r not in size or size[r] <= cap]
        sample = model.sample(settings.scoring_sample, generator) if any(r in size for r in candidates) else None
        scores = _scores(candidates, weights, answers, model, sample, noise.mean_abs(sigma2), domain, set(size))
        pick = exponential_mechanism(scores, epsilon=epsilon, sensitivity=score_sensitivity, rng=rng, ledger=ledger,
                                     relation=relation, label=f"select round {rounds}")
        r = candidates[pick]
        before = _fitted(model, sample, r)
        m, y = _measure_one(answers[r], r, sigma2, sensitivity_sq, ledger=ledger, relation=relation, rng=rng,
                            domain=domain, selection_epsilon=epsilon, noise=noise)
        paid.append(m)
        noisy.append(NoisyMarginal(r, y, noise.variance(sigma2)))
        model = estimators.fit(domain, noisy, settings.iters, warm_start=model)
        change = float(np.abs(model.counts(r) - before).sum())
        bar.update(rounds, rho=f"{float(1 - left() / budget):.0%}", marginal=",".join(m.names), change=f"{change:.0f}")
        log.info("measure round %d: %s sigma2=%.6g eps=%.6g change=%.1f", rounds, m.names, float(sigma2),
                 float(epsilon), change)
        if last:
            break
        if change <= noise.mean_abs(sigma2) * domain.cells(r):
            epsilon, sigma2 = noise.anneal(epsilon, sigma2)  # anneal (§8.4, §10.2): released values only
            round_rho *= noise.growth
            anneals += 1
    bar.close(rounds)

    # 3. estimate and draw the records
    model = estimators.fit(domain, noisy, settings.final_iters, warm_start=model)
    final = estimate(options.support_final_iters)
    rows = n_rows if n_rows is not None else max(1, int(round(model.total)))
    records = final.sample(rows, generator)
    return MeasureRelease(records, paid, rounds, budget - left(), model.total)

