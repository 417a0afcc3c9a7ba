"""The domain stage: what the public inputs leave open of the domain, learned privately before the method runs.

One entry point, :func:`learn_domain`: from the public schema and
configuration and the engine's tallies (:func:`domain_tallies`, what the
steps read of the table, docs/privacy.md §10.7) it learns the text columns'
categories (partition selection, §9 and §10.5), the bounds of the numeric
columns in ``learn_bounds`` (§10.4), their point masses (§11.2) and their
cells (PrivTree, §10.3), and returns one :class:`DomainStage`: each result
with what it cost, and the zCDP filter when the stage opened it.  Every
refusal that needs no budget comes before the first private step.
"""

from __future__ import annotations

import functools
import logging
import sys
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Callable, Mapping

import numpy as np

from synthdp.config import SynthesisConfig
from synthdp.core.errors import InputError
from synthdp.core.progress import Phases
from synthdp.core.tallies import Tallies
from synthdp.engines.rows import Rows
from synthdp.mechanisms import partition
from synthdp.mechanisms.bounds import (LearnedBounds, check_rows, fullest_range, learn_bounds, range_threshold,
                                      warn_clipped, warn_spread)
from synthdp.mechanisms.point_masses import select_point_masses
from synthdp.mechanisms.privtree import Discretisation, discretise
from synthdp.mechanisms.total import NoisyTotal, release_total
from synthdp.mechanisms.units import bounded_rows, candidates_text
from synthdp.plan import DomainBudget, Plan, budget, check_delta_against_public_n

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DomainStage:
    """What the domain stage released and what each part cost (each carries its ``epsilon`` or ``rho``).

    ``learned``: the text columns' categories (docs/privacy.md §9, §10.5); ``bounded``: the learned bounds
    (§10.4); ``discretised``: the numeric columns' cells and point masses (§10.3, §11.2), whose schema is the
    domain the method runs on; ``zcdp``: the method's zCDP filter when the stage opened it (§8.4), else None;
    ``total``: the noisy total released first with ``cells_from_total`` (§13), else None.
    """

    learned: partition.DomainLearning
    bounded: LearnedBounds
    discretised: Discretisation
    zcdp: Any = None
    total: NoisyTotal | None = None

    @property
    def schema(self):
        """The public schema with every learned part filled in: the one the method runs on."""
        return self.discretised.schema


def domain_tallies(rows: Rows, schema, engine, config: SynthesisConfig) -> Callable[[], Tallies]:
    """What the private domain steps read of the table (docs/privacy.md §10.7), tallied by ``engine`` (in memory,
    or part by part on a Dask cluster, at most ``k`` rows per unit as the counting pass keeps) when a step first
    asks: after the refusals that need no data, so that none waits for a pass over the files, and before any
    private step.  Not a private step.  Where the rows are not held in memory the tallies' row count is the
    first sight of ``n``: replace-one's check runs there.
    """
    @functools.cache
    def take() -> Tallies:
        with Phases(enabled=config.progress)("tallying the columns whose domains are learned"):
            tallies = engine.tally(rows.source, schema, bounding=rows.bounding)
        if rows.n is None:  # held in memory, the driver checked it on the rows
            check_delta_against_public_n(config, tallies.rows)
        return tallies

    return take


def learn_domain(tallies: Callable[[], Tallies], schema, plan: Plan, ledger, rng) -> DomainStage:
    """The categories and numeric cells the public inputs leave open, learned privately; and the filter if opened.

    ``tallies``: what the steps read of the table, taken on the first call (:func:`domain_tallies`).  ``plan``
    fixed every step's budget before this runs (:class:`synthdp.plan.DomainBudget`, public inputs only).  Under
    select-measure-estimate the method's zCDP filter is opened first (its whole ``(epsilon, delta)`` charged to
    ``ledger``): the text columns are learned jointly by Gaussian partition selection (docs/privacy.md §10.5),
    then the point masses (§11.2) and the numeric cells by PrivTree (§10.3), each charged to the filter.  With
    ``cells_from_total`` a noisy total is released before all of them (§13), charged ahead, and sets the trees'
    threshold.
    Otherwise each text column is learned by discrete-Laplace partition selection (§9) and each numeric column
    by PrivTree, pure spends ahead of the method.  Columns in ``learn_bounds`` get their bounds first (§10.4).
    Before any private step the tallies are taken and checked, and a threshold that would keep nothing of a text
    column is refused, one that would keep almost nothing warned about, with the numbers
    (:func:`synthdp.mechanisms.partition.check_threshold`).  Returns the :class:`DomainStage`; its ``zcdp`` is
    None unless opened.
    """
    stage, config = plan.stage, plan.config
    if not any(Tallies.columns(schema)):
        return DomainStage(partition.DomainLearning(schema, ()), LearnedBounds(schema, (), Fraction(0), Fraction(0), 0),
                           Discretisation(schema, (), Fraction(0), Fraction(0)))
    data = tallies()  # values checked while tallying: the last refusals, still before any private step
    check_thresholds(data, schema, plan)
    epsilon, delta = budget(config)
    total = None
    if stage.total_epsilon is not None:  # docs/privacy.md §13: released first, a pure spend ahead of the rest
        total = release_total(data.rows, epsilon=stage.total_epsilon, rng=rng, ledger=ledger, relation=config.relation)
    zcdp = plan.method.open_filter(plan.method_plan, ledger) if stage.in_filter else None
    if stage.selection is not None:
        learned = partition.learn_domains_jointly(data, schema, selection=stage.selection, rng=rng, ledger=zcdp,
                                                  relation=config.relation)
    elif stage.in_filter:
        learned = partition.DomainLearning(schema, ())
    else:
        learned = partition.learn_domains(data, schema, epsilon=epsilon, delta=delta, rng=rng, ledger=ledger,
                                          relation=config.relation)
    if stage.point_masses is not None:  # the point masses' delta was reserved with the text columns' (§11.2)
        learned = replace(learned, filter_delta=learned.filter_delta + stage.point_masses.delta)
    bounded = LearnedBounds(learned.schema, (), Fraction(0), Fraction(0), 0)
    if schema.to_bound:
        bounded = learn_bounds(data, learned.schema, epsilon=stage.bounds_epsilon, rng=rng, ledger=zcdp or ledger,
                               relation=config.relation)
        warn_clipped(data, bounded, epsilon=config.epsilon)  # the owner's eyes only (§10.8)
    if not schema.to_discretise:
        return DomainStage(learned, bounded, Discretisation(bounded.schema, (), Fraction(0), Fraction(0)), zcdp, total)
    masses = None
    if stage.point_masses is not None:  # docs/privacy.md §11.2, in the filter, before the trees
        masses = select_point_masses(data, bounded.schema, selection=stage.point_masses, rng=rng, ledger=zcdp,
                                     relation=config.relation, max_cells=stage.max_cells)
    cut = discretise(data, bounded.schema, epsilon=stage.cells_epsilon, rng=rng, ledger=zcdp or ledger,
                     relation=config.relation, max_cells=stage.max_cells, point_masses=masses,
                     noisy_total=None if total is None else total.value)
    return DomainStage(learned, bounded, cut, zcdp, total)


def check_thresholds(data: Tallies, schema, plan: Plan) -> None:
    """Before any private step: refuse (or warn about) thresholds that would keep nothing of a column, with the
    numbers, and state the categories' threshold to the owner."""
    stage, config = plan.stage, plan.config
    if schema.to_bound:
        check_rows(fullest_ranges(data, schema.to_bound), bounds_threshold(plan), epsilon=config.epsilon)
        warn_spread(data, schema, schema.to_bound, epsilon=stage.bounds_epsilon / config.contribution_bound,
                    budget=config.epsilon)
    threshold = categories_threshold(stage)
    if threshold is not None:
        partition.check_threshold(data.rows, threshold, schema.to_learn, epsilon=config.epsilon)
        partition.warn_rare_values(data.labels, threshold, schema.to_learn)
        _state_threshold(config, schema.to_learn, threshold, "§10.5" if stage.in_filter else "§9")


def categories_threshold(stage: DomainBudget) -> int | None:
    """Partition selection's threshold ``tau`` (§9, §10.5): about how many rows a value needs to be kept; None when
    the stage learns no categories.  Public: a function of the budget alone."""
    if stage.selection is not None:
        return stage.selection.threshold
    if stage.categories is not None and stage.categories.columns:
        return stage.categories.columns[0].threshold
    return None


def bounds_threshold(plan: Plan) -> int:
    """Learned bounds' threshold (§10.4): the rows a range of the grid needs at the plan's ``k``.  Public."""
    return range_threshold(plan.stage.bounds_epsilon / plan.config.contribution_bound)


def fullest_ranges(data: Tallies, columns) -> dict[str, int]:
    """Each column's values in its fullest range of the grid (§10.4): what :func:`check_rows` compares with the
    threshold.  Private, for the owner's refusal only."""
    return {c: fullest_range(data.numbers[c].values, data.numbers[c].counts) for c in columns}


def reaches_categories_threshold(stage: DomainBudget, rows: int) -> bool:
    """Whether ``rows`` rows reach :func:`categories_threshold` (True when there is none): one tail sum for the
    joint selection where its threshold's search takes a dozen (:meth:`~synthdp.mechanisms.partition.
    JointSelection.reaches`)."""
    if stage.selection is not None:
        return stage.selection.reaches(rows)
    threshold = categories_threshold(stage)
    return threshold is None or rows >= threshold


def check_every_bound(data: Tallies, held: np.ndarray, schema, plans: Mapping[int, Plan]) -> None:
    """``max_rows_per_unit="auto"``, before ``k`` is chosen: the domain stage's size refusals at every candidate
    ``k`` (docs/privacy.md §10.6, "Refusals before the choice of k"; §10.8), so that none comes after the charge.

    ``data`` are the raw rows' tallies and ``held`` each unit's rows (:func:`~synthdp.mechanisms.units.
    rows_per_unit`); ``plans`` the plan of each candidate (:func:`synthdp.plan.candidate_plans`).  At ``k``
    bounding keeps exactly :func:`~synthdp.mechanisms.units.bounded_rows` rows whatever its key, and of a column
    to bound at most as many values in its fullest range of the grid as the raw rows put there: what the checks of
    :func:`learn_domain` will read at ``k``, or more.  Refuses with the first short ``k``'s own refusal and its
    numbers, plus a note.  Reads private counts, for the owner only: an error before anything is charged or
    released.
    """
    fullest = fullest_ranges(data, schema.to_bound)
    for k, plan in plans.items():
        rows = bounded_rows(held, k)
        bounds = bounds_threshold(plan) if schema.to_bound else None
        short = {c: kept for c, raw in fullest.items() if (kept := min(raw, rows)) < bounds}
        try:
            if not reaches_categories_threshold(plan.stage, rows):
                partition.check_threshold(rows, categories_threshold(plan.stage), schema.to_learn,
                                          epsilon=plan.config.epsilon)
            if short:
                check_rows(short, bounds, epsilon=plan.config.epsilon)
        except InputError as refusal:
            raise refusal.with_note(
                f"These are the counts at max_rows_per_unit={k}, the rows bounding keeps"
                + (" and the most values it can keep in a column's fullest range of the grid" if short else "")
                + f": max_rows_per_unit='auto' may draw any k in {candidates_text(tuple(plans))} and is refused, "
                "before anything is charged, unless the run fits at each (docs/privacy.md §10.6). A public "
                "max_rows_per_unit, from what a unit may hold by the design of the data, is checked at that k "
                "alone") from refusal


def _state_threshold(config: SynthesisConfig, columns, tau: int, section: str) -> None:
    """Say, before anything is spent, how many rows a value needs to be kept (public: from the budget alone)."""
    text = (f"learning the categories of {list(columns)} privately (docs/privacy.md {section}): a value is kept when "
            f"about {tau} rows hold it; give public categories to keep every value")
    log.info(text)
    if config.progress:
        print(f"synthdp: {text}", file=sys.stderr)
