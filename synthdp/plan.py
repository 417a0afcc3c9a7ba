"""The plan of a run: every tuned default and automatic choice, made from public inputs only.

:func:`make_plan` receives the configuration and the public schema, **never
the data**: that is what makes every choice in a :class:`Plan` free of
privacy cost (docs/privacy.md §4.1: the game's inputs ``T``, ``N``,
``epsilon_0`` and the players are fixed before the data are touched).  Each
choice carries its human-readable reason, and the plan goes into the
released report as it is.

The method comes from the registry (:mod:`synthdp.methods.registry`), and
its own plan checks its budget: the game replays its planned spends on a
scratch ledger (:func:`synthdp.methods.game.method.check_budget`), so a
budget the run cannot keep is refused before the method's first private
step instead of at round 26 of 50.  Domains learned by
partition selection (docs/privacy.md §9) are the one private step that comes
first: what they release and spend is public to the plan.

Two checks need the number of records ``n`` and run after the data are read
(:func:`synthdp.api.build`): ``delta <= 1/n`` and PRSMA's ``K <= n``.  Both
apply only under replace-one, where ``n`` is public (docs/privacy.md §1.3);
under add/remove ``n`` is private, so nothing may depend on it and neither is
checked.  They are checks (refuse or go on), not choices: no parameter of the
run depends on ``n``.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from synthdp.accounting.ledger import as_delta, as_epsilon
from synthdp.config import SynthesisConfig
from synthdp.core.errors import InputError
from synthdp.core.parameters import Relation
from synthdp.mechanisms.privtree import CELL_CAPS, DISCRETISE_SHARE, column_budget
from synthdp.methods.base import Choice, Method, MethodInputs
from synthdp.methods.registry import choose_method, given_options
from synthdp.queries.base import QueryClass
from synthdp.queries.spec import capped_width, parse_query_class


@dataclass(frozen=True)
class Plan:
    """A run's settings, built by :func:`make_plan` from public inputs only (it never sees the data).

    ``epsilon``/``delta`` are the method's budget as exact rationals (``delta``
    None: pure DP): the user's budget less what learning the domains spent
    ahead (``domains``, docs/privacy.md §9); ``method`` is the method that runs
    (from :mod:`synthdp.methods.registry`), ``method_reason`` why, and
    ``method_plan`` its own plan (e.g. a ``GamePlan`` or ``MeasurePlan``),
    which it runs and reports.
    """

    config: SynthesisConfig
    query_class: QueryClass
    epsilon: Fraction
    delta: Fraction | None
    relation: Relation
    method: Method
    method_reason: str
    method_plan: Any
    #: The query class, when it differs from the one asked for (a marginal width above the number of columns).
    queries: Choice | None = None
    domains: Choice | None = None
    #: ``max_rows_per_unit="auto"``: the ``k`` chosen privately and what it cost (docs/privacy.md §10.6).
    unit: Choice | None = None
    discretised: Choice | None = None
    bounds: Choice | None = None

    def choices(self) -> dict[str, dict[str, Any]]:
        """Every choice with its reason, as plain data for the report."""
        out = {"method": {"value": self.method.name, "reason": self.method_reason}}
        for name, choice in (("queries", self.queries), ("domains", self.domains), ("max_rows_per_unit", self.unit),
                             ("discretised", self.discretised), ("bounds", self.bounds)):
            if choice is not None:
                out[name] = choice.to_dict()
        out.update(self.method.choices(self.method_plan))
        out["rows"] = self.rows().to_dict()
        return out

    def rows(self) -> Choice:
        """How many records the output has, and why: never the input's size (private under add/remove)."""
        if self.config.n_rows is not None:
            return Choice(self.config.n_rows, "n_rows given by the caller: a resample of the released records")
        return self.method.rows(self.method_plan)


def budget(config: SynthesisConfig) -> tuple[Fraction, Fraction | None]:
    """The user's ``(epsilon, delta)`` as exact rationals: the one place they are converted (docs/privacy.md §2.6).

    ``delta`` None or 0 is pure DP, returned as None (docs/privacy.md §10.2).
    """
    delta = None if config.delta is None else as_delta(config.delta, "delta")
    return as_epsilon(config.epsilon, "epsilon"), delta or None


def make_plan(config: SynthesisConfig, schema, *, learned=None, chosen_bound=None, discretised=None,
              bounded=None) -> Plan:
    """Every choice of the run from ``config`` and the public ``schema`` alone (no data: no privacy cost).

    ``learned`` (a :class:`synthdp.mechanisms.partition.DomainLearning`) is
    what learning the domains released and spent: released, hence public; the
    method plans with the budget it left.  ``chosen_bound`` (a
    :class:`synthdp.mechanisms.units.ChosenBound`) is the privately chosen
    ``k`` of a privacy unit and its cost, likewise released (docs/privacy.md §10.6).  ``discretised`` (a
    :class:`synthdp.mechanisms.privtree.Discretisation`) is what PrivTree
    released and charged: pure spends ahead leave the method less epsilon,
    charges to the zCDP filter leave select-measure-estimate less rho.
    ``bounded`` (a :class:`synthdp.mechanisms.bounds.LearnedBounds`) is the
    same for private bounds (docs/privacy.md §10.4).  Refuses, before the method's first
    private step, what cannot run: an unknown or unencodable class, a player
    the budget does not allow, a budget the planned spends would exceed.  The
    method comes from :func:`synthdp.methods.registry.choose_method`; its own
    choices from its :meth:`~synthdp.methods.base.Method.plan`, which also
    checks its budget up front.
    """
    whole, delta = budget(config)
    epsilon, filter_rho, filter_delta = whole, Fraction(0), Fraction(0)
    if learned is not None:
        epsilon, delta = epsilon - learned.epsilon, None if delta is None else delta - learned.delta
        filter_rho, filter_delta = learned.rho, learned.filter_delta
    if chosen_bound is not None:
        epsilon -= chosen_bound.epsilon
    for ahead in (bounded, discretised):  # pure spends ahead of the method, or charges to the zCDP filter
        if ahead is not None and ahead.columns:
            epsilon, filter_rho = epsilon - ahead.epsilon, filter_rho + ahead.rho
    spec, capped = capped_width(config.query_class, len(schema.domain))
    qc = parse_query_class(spec, schema.domain)
    inputs = MethodInputs(qc, epsilon, delta, Relation(config.relation), config.contribution_bound,
                          config.to_dict(), whole, given=given_options(config.to_dict(), config.defaults()),
                          filter_rho=filter_rho,
                          filter_delta=filter_delta)
    method, why = choose_method(config.method, inputs)
    return Plan(config, qc, epsilon, delta, inputs.relation, method, why, method.plan(inputs),
                queries=None if capped is None else Choice(spec, capped), domains=domains_choice(learned), unit=unit_choice(chosen_bound), bounds=bounds_choice(bounded),
                discretised=cells_choice(discretised))


def domains_choice(learned) -> Choice | None:
    """The columns whose categories partition selection learned (docs/privacy.md §9, §10.5), and how."""
    if learned is None or not learned.columns:
        return None
    columns, threshold = [c.column for c in learned.columns], learned.columns[0].threshold
    if learned.rho:
        return Choice(columns, f"no public categories: learned jointly by Gaussian partition selection "
                               f"(docs/privacy.md §10.5) with threshold {threshold} rows, rho = "
                               f"{float(learned.rho):.4g} of the zCDP filter and delta = "
                               f"{float(learned.filter_delta):.3g}")
    return Choice(columns, f"no public categories: learned by partition selection (docs/privacy.md §9) with threshold "
                           f"{threshold} rows at (epsilon, delta) = ({float(learned.epsilon):.4g}, "
                           f"{float(learned.delta):.3g}), the rest of the budget goes to the method")


def unit_choice(chosen_bound) -> Choice | None:
    """The privately chosen rows per privacy unit ``k`` and its cost (docs/privacy.md §10.6)."""
    if chosen_bound is None:
        return None
    return Choice(chosen_bound.k, f"chosen privately (docs/privacy.md §10.6): the exponential mechanism over "
                  f"1..{chosen_bound.max_rows} near the {float(chosen_bound.quantile):g} quantile of rows per unit, "
                  f"at epsilon {float(chosen_bound.epsilon):.4g}")


def bounds_choice(bounded) -> Choice | None:
    """The numeric columns whose bounds were learned privately (docs/privacy.md §10.4), and at what cost."""
    if bounded is None or not bounded.columns:
        return None
    return Choice(list(bounded.columns),
                  f"no public bounds (learn_bounds): learned on a public log-2 grid (docs/privacy.md §10.4), "
                  f"threshold {bounded.threshold} rows, values outside clipped to them, "
                  + (f"rho = {float(bounded.rho):.4g} of the zCDP filter" if bounded.rho
                     else f"epsilon = {float(bounded.epsilon):.4g} ahead of the method"))


def cells_choice(discretised) -> Choice | None:
    """The numeric columns whose cells PrivTree learned (docs/privacy.md §10.3), and at what cost."""
    if discretised is None or not discretised.columns:
        return None
    return Choice([c.column for c in discretised.columns],
                  f"bounded numeric columns without public bins or cut points: cells learned by PrivTree "
                  f"(docs/privacy.md §10.3), each tree run at epsilon "
                  f"{float(discretised.columns[0].parameters.epsilon):.4g} (eps_d over the rows per privacy "
                  "unit, §10.6), " + (f"rho = {float(discretised.rho):.4g} of the zCDP filter" if discretised.rho
                                      else f"epsilon = {float(discretised.epsilon):.4g} ahead of the method")
                  + _cell_cap_note(discretised.columns[0].max_cells) + _point_mass_note(discretised.point_masses))


def _point_mass_note(masses) -> str:
    """The point masses kept as cells of their own, and what selecting them cost (docs/privacy.md §11.2)."""
    if masses is None:
        return ""
    kept = {c: [f"{v:g}" for v in values] for c, values in masses.values.items() if values}
    return (f"; point masses selected first (docs/privacy.md §11.2) with threshold {masses.selection.threshold} rows, "
            f"rho = {float(masses.rho):.4g} and delta = {float(masses.selection.delta):.3g}, kept: "
            + (", ".join(f"{c} {v}" for c, v in kept.items()) or "none"))


def _cell_cap_note(max_cells: int | None) -> str:
    """The public cap on each tree's cells, when it was below the largest one tried (docs/privacy.md §10.3)."""
    if max_cells is None or max_cells >= CELL_CAPS[0]:
        return ""
    return (f"; at most {max_cells} cells per column, the most with which the method's counts fit its size limits "
            "(decided on public sizes before any private step)")


def discretisation_budget(plan: Plan, columns: int, *, share: Fraction | None = None) -> Fraction:
    """PrivTree's per-column ``eps_d`` (docs/privacy.md §10.3): in the method's zCDP filter, or pure ahead.

    ``share`` replaces PrivTree's share (private bounds use their own, §10.4).

    From the plan made on the schema before discretisation (public inputs
    only): a method with a zCDP filter (select-measure-estimate) gives the
    trees ``DISCRETISE_SHARE`` of its ``rho``; the game (or pure DP) that
    share of its ``epsilon``, ahead.
    """
    share = DISCRETISE_SHARE if share is None else share
    rho = plan.method.zcdp_budget(plan.method_plan)
    if rho is not None:
        return column_budget(columns=columns, relation=plan.relation, rho=rho, share=share)
    return column_budget(columns=columns, relation=plan.relation, epsilon=plan.epsilon, share=share)


def check_delta_against_public_n(config: SynthesisConfig, n: int) -> None:
    """Refuse ``delta > 1/n`` under replace-one, where ``n`` is public (docs/privacy.md §1.3); a no-op under
    add/remove, where ``n`` is private and no abort may depend on it."""
    if config.relation == Relation.REPLACE_ONE and config.delta is not None and Fraction(config.delta) > Fraction(1, n):
        raise InputError(f"delta={config.delta} is larger than 1/n = {1 / n:.3g}; choose delta <= 1/n "
                         "(1/n^2 is customary); checked under replace-one only, where n is public")
