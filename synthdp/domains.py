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
from typing import Any, Callable

from synthdp.config import SynthesisConfig
from synthdp.core.errors import InputError
from synthdp.core.progress import Phases
from synthdp.core.tallies import Tallies
from synthdp.mechanisms import partition
from synthdp.mechanisms.bounds import BOUNDS_SHARE, LearnedBounds, check_rows, learn_bounds, range_threshold
from synthdp.mechanisms.point_masses import POINT_MASS_DELTA_SHARE, point_mass_selection, select_point_masses
from synthdp.mechanisms.privtree import CELL_CAPS, Discretisation, discretise
from synthdp.plan import Plan, budget, check_delta_against_public_n, discretisation_budget, make_plan

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class DomainStage:
    """What the domain stage released and what each part cost (each carries its ``epsilon`` or ``rho``).

    ``learned``: the text columns' categories (docs/privacy.md §9, §10.5); ``bounded``: the learned bounds
    (§10.4); ``discretised``: the numeric columns' cells and point masses (§10.3, §11.2), whose schema is the
    domain the method runs on; ``zcdp``: the method's zCDP filter when the stage opened it (§8.4), else None.
    """

    learned: partition.DomainLearning
    bounded: LearnedBounds
    discretised: Discretisation
    zcdp: Any = None

    @property
    def schema(self):
        """The public schema with every learned part filled in: the one the method runs on."""
        return self.discretised.schema


def domain_tallies(df, schema, engine, config: SynthesisConfig, bounding=None) -> Callable[[], Tallies]:
    """What the private domain steps read of the table (docs/privacy.md §10.7), tallied by ``engine`` (in memory,
    or part by part on a Dask cluster) when a step first asks: after the refusals that need no data, so that
    none waits for a pass over the files, and before any private step.  Not a private step.

    ``bounding``: the Dask engine keeps at most ``k`` rows per unit as it tallies (in memory ``df`` is bounded
    already, §10.6).  On Dask the tallies' row count is the first sight of ``n``: replace-one's check runs there.
    """
    @functools.cache
    def take() -> Tallies:
        with Phases(enabled=config.progress)("tallying the columns whose domains are learned"):
            tallies = engine.tally(df, schema, **({} if bounding is None else {"bounding": bounding}))
        if not engine.in_memory:  # in memory the driver checked it on the rows it holds
            check_delta_against_public_n(config, tallies.rows)
        return tallies

    return take


def learn_domain(tallies: Callable[[], Tallies], schema, config: SynthesisConfig, ledger, rng,
                 chosen=None) -> DomainStage:
    """The categories and numeric cells the public inputs leave open, learned privately; and the filter if opened.

    ``tallies``: what the steps read of the table, taken on the first call (:func:`domain_tallies`).
    From a plan made on the schema as given (public inputs only). Under
    select-measure-estimate the method's zCDP filter is opened first (its whole
    ``(epsilon, delta)`` charged to ``ledger``): the text columns are learned
    jointly by Gaussian partition selection (docs/privacy.md §10.5, a tenth of
    its ``rho`` and a quarter of ``delta``), then the numeric cells by PrivTree
    (§10.3, a tenth of its ``rho``). Otherwise each text column is learned by
    discrete-Laplace partition selection (§9) and each numeric column by
    PrivTree, pure spends ahead of the method. Columns in ``learn_bounds`` get
    their bounds first (§10.4, a twentieth of the budget; needs a delta).
    Before any private step a
    threshold that would keep nothing of a text column is refused, and one
    that would keep almost nothing is warned about, with the numbers
    (:func:`synthdp.mechanisms.partition.check_threshold`).
    Returns the :class:`DomainStage`; its ``zcdp`` is None unless opened.
    """
    epsilon, delta = budget(config)
    if not any(Tallies.columns(schema)):
        return DomainStage(partition.DomainLearning(schema, ()), LearnedBounds(schema, (), Fraction(0), Fraction(0), 0),
                           Discretisation(schema, (), Fraction(0), Fraction(0)))
    require_delta_for_bounds(schema, delta)
    cap = privtree_cap(config, schema, chosen) if schema.to_discretise else None  # before any private step

    def check_bounds(before: Plan, data: Tallies) -> None:  # before any private step: reads n, for the owner
        if schema.to_bound:
            epsilon_b = discretisation_budget(before, len(schema.to_bound), share=BOUNDS_SHARE)
            check_rows(data, schema.to_bound, range_threshold(epsilon_b / ledger.contribution_bound),
                       epsilon=config.epsilon)

    learned, before, zcdp = learn_categories(tallies, schema, config, ledger, rng, chosen, check=check_bounds)
    bounded = LearnedBounds(learned.schema, (), Fraction(0), Fraction(0), 0)
    if schema.to_bound:
        epsilon_b = discretisation_budget(before, len(schema.to_bound), share=BOUNDS_SHARE)
        bounded = learn_bounds(tallies(), learned.schema, epsilon=epsilon_b, rng=rng, ledger=zcdp or ledger,
                               relation=config.relation)
    if not schema.to_discretise:
        return DomainStage(learned, bounded, Discretisation(bounded.schema, (), Fraction(0), Fraction(0)), zcdp)
    epsilon_d = discretisation_budget(before, len(schema.to_discretise))
    masses = None
    if point_masses_planned(config, schema, before):  # docs/privacy.md §11.2, in the filter, before the trees
        selection = point_mass_selection(rho=before.method.zcdp_budget(before.method_plan), delta=delta,
                                         columns=len(schema.to_discretise), relation=config.relation,
                                         contribution_bound=ledger.contribution_bound)
        masses = select_point_masses(tallies(), bounded.schema, selection=selection, rng=rng, ledger=zcdp,
                                     relation=config.relation)
    cut = discretise(tallies(), bounded.schema, epsilon=epsilon_d, rng=rng, ledger=zcdp or ledger,
                     relation=config.relation, max_cells=cap, point_masses=masses)
    return DomainStage(learned, bounded, cut, zcdp)


def require_delta_for_bounds(schema, delta) -> None:
    """Refuse columns without public bounds under pure DP: learning bounds (§10.4) needs a delta.  Public inputs."""
    if schema.to_bound and not delta:
        raise InputError(f"columns {list(schema.to_bound)} have no public bounds, and learning them privately "
                         "(learn_bounds, docs/privacy.md §10.4) needs a delta, like every private domain here. Pass a "
                         f"delta (e.g. 1e-9), or give public bounds: bounds={{{schema.to_bound[0]!r}: (lo, hi)}} "
                         f"(CLI --bounds {schema.to_bound[0]}=LO:HI), e.g. legal or physical limits")


def point_masses_planned(config: SynthesisConfig, schema, plan) -> bool:
    """Whether the point masses of the columns to discretise are selected privately (docs/privacy.md §11.2): asked
    for (``point_masses``, the default) and a method with a zCDP filter (which has a delta).  Public inputs only."""
    return bool(config.point_masses and schema.to_discretise and plan.method.zcdp_budget(plan.method_plan) is not None)


def privtree_cap(config: SynthesisConfig, schema, chosen=None) -> int:
    """The most cells PrivTree may release per column (docs/privacy.md §10.3): the largest of
    :data:`~synthdp.mechanisms.privtree.CELL_CAPS` whose plan, with every column to discretise holding that many
    cells and every column to learn one label, passes the method's size checks; 1 when none does (no split: the
    plan of the schema as given, checked before any private step).  Public inputs only, before any private step."""
    placeholder = partition.placeholder_schema(schema)
    for cells in CELL_CAPS:
        try:
            make_plan(config, placeholder.with_placeholder_cells(cells), chosen_bound=chosen)
        except InputError:
            continue
        return cells
    return 1


def learn_categories(tallies: Callable[[], Tallies], schema, config: SynthesisConfig, ledger, rng, chosen=None,
                     check: Callable[[Plan, Tallies], None] | None = None):
    """``(learned, before, zcdp)``: the text columns' categories learned privately, the plan the later steps take
    their budgets from, and the method's zCDP filter if it has one (then opened here, charged to ``ledger``).

    ``check(before, tallies)`` runs once the tallies are taken, before any private step: the later steps' checks
    of the table's size (docs/privacy.md §10.8).

    A method with a zCDP filter (docs/privacy.md §8.4) learns them jointly by
    Gaussian partition selection inside it (§10.5); otherwise each column by
    discrete-Laplace partition selection (§9), pure spends ahead of the method.
    """
    epsilon, delta = budget(config)
    placeholder = partition.placeholder_schema(schema)
    before = make_plan(config, placeholder, chosen_bound=chosen)  # public: refusals before any private step
    if before.method.zcdp_budget(before.method_plan) is None:  # no zCDP filter (pure DP, the game: §10.2, §9)
        planned = partition.planned_learning(schema, epsilon=epsilon, delta=delta, relation=config.relation,
                                             contribution_bound=ledger.contribution_bound)
        before = make_plan(config, planned.schema, learned=planned, chosen_bound=chosen)
        data = tallies()  # values checked while tallying: the last refusals, still before any private step
        if check is not None:
            check(before, data)
        if planned.columns:
            partition.check_threshold(data.rows, planned.columns[0].threshold, schema.to_learn,
                                      epsilon=config.epsilon)
            partition.warn_rare_values(data.labels, planned.columns[0].threshold, schema.to_learn)
            _state_threshold(config, schema.to_learn, planned.columns[0].threshold, "§9")
        learned = partition.learn_domains(data, schema, epsilon=epsilon, delta=delta, rng=rng, ledger=ledger,
                                          relation=config.relation)
        return learned, before, None
    reserved = delta * partition.DOMAIN_DELTA_SHARE if schema.to_learn else Fraction(0)
    # the point masses' delta is reserved with the text columns' before the filter's rho is derived (§11.2)
    point_delta = delta * POINT_MASS_DELTA_SHARE if point_masses_planned(config, schema, before) else Fraction(0)
    selection = None
    if reserved or point_delta:
        before = make_plan(config, placeholder, chosen_bound=chosen,
                           learned=partition.DomainLearning(placeholder, (), filter_delta=reserved + point_delta))
    if reserved:
        selection = partition.joint_selection(rho=before.method.zcdp_budget(before.method_plan), delta=reserved,
                                              columns=len(schema.to_learn), relation=config.relation,
                                              contribution_bound=ledger.contribution_bound)
    data = tallies()  # values checked while tallying: the last refusals, still before any private step
    if check is not None:
        check(before, data)
    if selection is not None:
        partition.check_threshold(data.rows, selection.threshold, schema.to_learn, epsilon=config.epsilon)
        partition.warn_rare_values(data.labels, selection.threshold, schema.to_learn)
        _state_threshold(config, schema.to_learn, selection.threshold, "§10.5")
    zcdp = before.method.open_filter(before.method_plan, ledger)
    learned = (partition.learn_domains_jointly(data, schema, selection=selection, rng=rng, ledger=zcdp,
                                               relation=config.relation) if selection is not None
               else partition.DomainLearning(schema, ()))
    return replace(learned, filter_delta=learned.filter_delta + point_delta), before, zcdp


def _state_threshold(config: SynthesisConfig, columns, tau: int, section: str) -> None:
    """Say, before anything is spent, how many rows a value needs to be kept (public: from the budget alone)."""
    text = (f"learning the categories of {list(columns)} privately (docs/privacy.md {section}): a value is kept when "
            f"about {tau} rows hold it; give public categories to keep every value")
    log.info(text)
    if config.progress:
        print(f"synthdp: {text}", file=sys.stderr)
