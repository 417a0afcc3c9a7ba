"""The rounds of select-measure-estimate (docs/privacy.md §8.1 steps 2-3, §8.4).

Every 1-way marginal is measured first (on a wide table with the spanning
step of §8.9 after it); then, while the filter admits a round, one
selection and one measurement: the exponential mechanism over the candidate
marginals within the public size cap, or, for a class beyond marginals,
over the estimate's most probable records, or RSPM over the whole class
(§8.1 (b)).  A round's budget is fixed from public values before it runs
(annealing is decided from released values only), and the last round takes
exactly what is left.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np

from synthdp.core.data import AggregatedData
from synthdp.core.keys import count_equal
from synthdp.core.progress import RoundProgress
from synthdp.mechanisms.gaussian import sigma2_up
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.mechanisms.rspm import difference_sensitivity, rspm
from synthdp.mechanisms.selection import exponential_mechanism
from synthdp.accounting.zcdp import ZcdpLedger, epsilon_for_exponential, epsilon_for_pure
from synthdp.methods.measure.coarse import CoarseViews
from synthdp.methods.measure.estimators import GraphicalModel, NoisyMarginal
from synthdp.methods.measure.marginal_counts import marginal_counts, marginal_counts_in_batches
from synthdp.methods.measure.measurements import (REWEIGHTED_SAMPLE, Marginal, Measurement, OracleSelection,
                                                  query_attributes, released_attributes)
from synthdp.methods.measure.model_size import model_cells_with
from synthdp.methods.measure.noise_family import NoiseFamily
from synthdp.methods.game.players import game_instance
from synthdp.methods.measure.release import estimate_of
from synthdp.methods.measure.state import (SCORE_BATCH_CELLS, Measured, Run, count_change, hold, measure_one,
                                           refined, refines, refit)
from synthdp.methods.measure.settings import MeasureOptions
from synthdp.methods.measure.spanning import adaptive_rounds, candidate_pool, pair_scores, spanning_pairs, unheld
from synthdp.methods.measure.reweight import NoisyGroup, WeightedSample, marginal_group, query_group

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class _RoundBudget:
    """What the next round spends (§8.4): a marginal round selects at ``epsilon`` and measures at ``scale``, a
    record or oracle round spends ``round_rho``; each annealing step grows both ``noise.growth``-fold."""

    round_rho: Fraction
    epsilon: Fraction
    scale: Fraction
    anneals: int = 0


def _planned_rounds(run: Run) -> int:
    """The planned rounds, ``rounds_per_attribute * d``: the first rounds get ``budget`` over this many (§8.1)."""
    return run.options.rounds_per_attribute * len(run.domain)


def _round_cap(run: Run, spanning: bool) -> int:
    """The public cap on the rounds: ``max_rounds``, else ``ceil(c sqrt(d))`` after a spanning step (§8.9), else
    the planned rounds."""
    if run.options.max_rounds:
        return run.options.max_rounds
    return adaptive_rounds(len(run.domain), run.options.rounds_per_sqrt_attribute) if spanning \
        else _planned_rounds(run)


def _spanning_third(run: Run) -> Fraction:
    """A third of the spanning step's share: for the 1-way marginals, the picks, the pairs' measurements (§8.9)."""
    return run.options.spanning_share * run.budget / 3


def _first_budget(run: Run, spanning: bool, t_max: int) -> _RoundBudget:
    """The first round's cost: ``budget`` over the planned rounds, or after a spanning step what is left over the
    round cap (§8.9); ``selection_share`` of it selects, the rest measures."""
    round_rho = run.left() / t_max if spanning else run.budget / _planned_rounds(run)
    return _RoundBudget(round_rho, *run.noise.split(round_rho, run.options.selection_share))


def _last_budget(run: Run, remaining: Fraction) -> _RoundBudget:
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


def initialise(run: Run, spanning: bool) -> Measured:
    """Step 2: every 1-way marginal but those of ``released_columns`` (docs/privacy.md §12 step 2) at the
    measurement share of one planned round (or, on a wide table, at a third of the spanning share over ``d``,
    §8.9), and the model of them."""
    d = len(run.domain)
    if spanning:
        scale = run.noise.scale_for(_spanning_third(run) / d)
    else:
        _, scale = run.noise.split(run.budget / _planned_rounds(run), run.options.selection_share)
    measured = Measured()
    released = released_attributes(run.domain, run.options.released_columns)  # measured elsewhere (§12 step 2)
    for a in sorted(set(range(d)) - released):
        hold(run, measured, *run.measure((a,), scale, selection_epsilon=None, selected_by="initial"))
    refit(run, measured)
    return measured


def spanning_step(run: Run, measured: Measured) -> None:
    """§8.9 step 1: ``d - 1`` pairs picked by Kruskal's rule against the 1-way model, then measured."""
    d = len(run.domain)
    share = _spanning_third(run) / (d - 1)
    scale, epsilon = run.noise.scale_for(share), run.noise.selection_epsilon(share)
    pairs = [r for r in run.weights if len(r) == 2 and run.views.groups(r) is None]
    scores = pair_scores(pairs, run.answers, measured.model, run.noise.mean_abs(scale))
    picked = spanning_pairs(pairs, scores, d, epsilon=epsilon, sensitivity=count_change(run.relation),
                            ledger=run.ledger, relation=run.relation, rng=run.rng)
    for r in picked:
        hold(run, measured, *run.measure(r, scale, selection_epsilon=epsilon))
    refit(run, measured)


def run_rounds(run: Run, measured: Measured, oracle: OracleSelection | None, spanning: bool, progress: bool) -> int:
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


def _marginal_round(run: Run, measured: Measured, spend: _RoundBudget, t: int, bar: RoundProgress) -> bool:
    """Step 3 (b)-(d): select a marginal, measure it, refit; True when the refit barely moved on it (anneal).

    The annealing test reads released values only: the model before and after the new measurement (§8.4).
    """
    r, before = _select(run, measured.model, spend, f"select round {t}")
    if run.options.refine_rounds and refines(run, r):
        found = refined(run, r, run.noise.measurement_cost(spend.scale), before, selection_epsilon=spend.epsilon,
                        selected_by="exponential")
        for m, noisy in found:
            measured.paid.append(m)
            measured.noisy.append(noisy)
        m = found[0][0]
    else:
        m, y = run.measure(r, spend.scale, selection_epsilon=spend.epsilon)
        hold(run, measured, m, y)
    refit(run, measured)
    change = float(np.abs(run.views.read(r, measured.model.counts(m.attrs)) - before).sum())
    bar.update(t, share=run.spent_share(), marginal=",".join(m.names), change=f"{change:.0f}")
    log.info("measure round %d: %s sigma2=%.6g eps=%.6g change=%.1f", t, m.names, float(spend.scale),
             float(spend.epsilon), change)
    return change <= run.noise.mean_abs(spend.scale) * run.views.cells(r)


def _select(run: Run, model: GraphicalModel, spend: _RoundBudget, label: str) -> tuple[Marginal, np.ndarray]:
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


def _wide_round(run: Run, measured: Measured, kind: str, oracle: OracleSelection | None, spend: Fraction, t: int,
                bar: RoundProgress) -> None:
    """A record or an oracle round (§8.1, classes beyond marginals) within ``spend``: ``wide_share`` of it selects
    (fixed before it runs), the rest measures; the measurement goes to the model when a clique can hold it
    within the size cap, else to the reweighted sample (§8.7)."""
    share = dict(select_rho=run.options.wide_share * spend, measure_rho=(1 - run.options.wide_share) * spend,
                 options=run.options, ledger=run.ledger, relation=run.relation, rng=run.rng,
                 generator=run.generator, label=f"select round {t}")
    estimate = estimate_of(run, measured, run.options.support_iters, run.options.support)
    if kind == "record":
        found = _record_round(run.data, estimate, **share)
    else:
        found = _oracle_round(run.data, estimate, oracle, sensitivity_sq=run.noise.sensitivity(), **share)
    if found is not None:
        _serve(run, measured, *found)
    bar.update(t, share=run.spent_share(), marginal=kind)
    log.info("measure round %d: %s selected %s", t, kind,
             "nothing" if found is None else found[0].query or found[0].names)


def _serve(run: Run, measured: Measured, m: Measurement, y: np.ndarray, group: NoisyGroup | None) -> None:
    """Hand a record or oracle measurement to the model when a clique holds it or fits under the size cap (a
    widened marginal), else to the reweighted sample (one query, or a marginal past the cap, §8.1)."""
    model, cap = measured.model, run.options.max_model_cells * run.spent_share()
    local = group is None and (model.holder(m.attrs) is not None
                               or model_cells_with(run.domain, model.cliques, [m.attrs])[0] <= cap)
    if local:
        measured.noisy.append(NoisyMarginal(m.attrs, y, float(m.sigma2)))
        refit(run, measured)
    elif group is not None:
        measured.groups.append(group)
    else:
        measured.readings.append(NoisyMarginal(m.attrs, y, float(m.sigma2)))
        measured.groups.append(marginal_group(run.domain, measured.readings[-1]))
    measured.paid.append(m if local else replace(m, estimator=REWEIGHTED_SAMPLE))


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
    m, y = measure_one(answers, attrs, sigma2_up(Fraction(sens) / (2 * measure_rho)), sens, ledger=ledger,
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
    m, y = measure_one(true[pick : pick + 1], every, sigma2, count_sq, ledger=ledger, relation=relation, rng=rng,
                       domain=domain, selection_epsilon=epsilon, selected_by="record", query=words)
    group = NoisyGroup(words, lambda codes: np.where((codes == point).all(axis=1), 0, -1), 1, y.astype(float),
                       float(sigma2))
    return m, y, group
