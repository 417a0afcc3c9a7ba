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

The steps are modules of their own: :mod:`~synthdp.methods.measure.rounds`
(steps 2-3), :mod:`~synthdp.methods.measure.covering_step` (step 4) and
:mod:`~synthdp.methods.measure.release` (step 5), over the state of
:mod:`~synthdp.methods.measure.state` and the records of
:mod:`~synthdp.methods.measure.measurements`.
"""

from __future__ import annotations

from dataclasses import replace
from fractions import Fraction
from typing import Sequence

from synthdp.core.data import AggregatedData
from synthdp.core.errors import InputError
from synthdp.core.machine import return_freed_memory
from synthdp.core.progress import Phases
from synthdp.accounting.ledger import check_relation
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.methods.measure.coarse import CoarseViews
from synthdp.methods.measure.coverage import rounds_budget, uses_covering_step
from synthdp.methods.measure.covering_step import cover, sharpen_one_ways
from synthdp.methods.measure.measurements import (Marginal, MeasureRelease, OracleSelection, backbone_marginals,
                                                  beyond_released, candidate_weights, released_attributes,
                                                  workload_marginals)
from synthdp.methods.measure.noise_family import GaussianNoise, LaplaceNoise, NoiseFamily
from synthdp.methods.measure.release import release
from synthdp.methods.measure.rounds import initialise, run_rounds, spanning_step
from synthdp.methods.measure.state import Run, TrueCounts
from synthdp.methods.measure.settings import MeasureOptions
from synthdp.methods.measure.spanning import uses_spanning_step
from synthdp.queries.base import QueryClass


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


def _start(data: AggregatedData, marginals: list[Marginal], noise: NoiseFamily, options: MeasureOptions, *,
           budget: Fraction, ledger, relation: str, rng: PrivateRandom,
           oracle: OracleSelection | None) -> tuple[Run, bool, bool]:
    """The run over the weighted candidates of ``marginals``, fine and coarse (§8.11), and whether it takes the
    spanning step (§8.9) and the covering step (§8.10): all decided from public inputs.  A subset over
    ``options.released_columns`` alone is no candidate (docs/privacy.md §12 step 2)."""
    released = released_attributes(data.domain, options.released_columns)
    weights = {r: w for r, w in candidate_weights(marginals).items() if r in beyond_released([r], released)}
    views = CoarseViews.for_options(data.domain, options)  # §8.11: public
    spanning = uses_spanning_step(len(data.domain), list(weights), options.spanning_from)  # §8.9: public
    covering = uses_covering_step(len(data.domain), list(weights), options, oracle=oracle is not None,
                                  light_tailed=noise.light_tailed)  # §8.10: public
    candidates = views.fine_candidates(weights) | views.candidates(weights)
    run = Run(data, TrueCounts(data, views), candidates, views, options, noise, budget, ledger, relation, rng,
              rng.numpy_generator(), noise.spent(ledger))
    return run, spanning, covering


def _rounds_run(run: Run, covering: bool) -> Run:
    """The run steps 2-3 spend: its budget less the covering step's share (§8.10); under pure DP without the
    covering step a larger public share of each round selects."""
    options = run.options
    share = options.selection_share if covering or run.noise.light_tailed else options.uncovered_pure_selection_share
    return replace(run, budget=rounds_budget(run.budget, options.cover_share, covering),
                   options=replace(options, selection_share=share))


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
    marginals = beyond_released(workload_marginals(workload, data.domain) if oracle is None
                                else backbone_marginals(data.domain, options.backbone_width),
                                released_attributes(data.domain, options.released_columns))
    if not marginals:
        raise InputError(f"every marginal of the workload is over released_columns {list(options.released_columns)} "
                         "alone, which another release answers: give a workload with another column")
    run, spanning, covering = _start(data, marginals, noise, options, budget=budget, ledger=ledger,
                                     relation=relation, rng=rng, oracle=oracle)
    rounds, phases = _rounds_run(run, covering), Phases(enabled=progress)
    with phases(f"measuring the {len(data.domain)} one-way marginals"):
        measured = initialise(rounds, spanning)
    if spanning:
        with phases("the spanning step"):
            spanning_step(rounds, measured)
    t = run_rounds(rounds, measured, oracle, spanning, progress)
    return_freed_memory()  # between the steps: the peak, not the values (docs/benchmarks.md, 300k rows)
    skipped = 0
    if covering:
        with phases(f"the covering step over {len(marginals)} workload marginals"):
            sharpen_one_ways(run, measured)
            skipped = cover(run, measured, marginals, progress)
        return_freed_memory()
    return replace(release(run, measured, n_rows, t, covering, phases), cover_skipped=skipped)
