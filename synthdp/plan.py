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
(:func:`synthdp.counting.build`): ``delta <= 1/n`` and PRSMA's ``K <= n``.  Both
apply only under replace-one, where ``n`` is public (docs/privacy.md §1.3);
under add/remove ``n`` is private, so nothing may depend on it and neither is
checked.  They are checks (refuse or go on), not choices: no parameter of the
run depends on ``n``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from synthdp.accounting.ledger import as_delta, as_epsilon
from synthdp.config import SynthesisConfig
from synthdp.core.encoding import bound_text
from synthdp.core.errors import InputError
from synthdp.core.parameters import Relation
from synthdp.core.tallies import Tallies
from synthdp.mechanisms import partition
from synthdp.mechanisms.bounds import BOUNDS_SHARE
from synthdp.mechanisms.point_masses import POINT_MASS_DELTA_SHARE, most_point_masses, point_mass_selection
from synthdp.mechanisms.privtree import CELL_CAPS, column_budget
from synthdp.mechanisms.total import TOTAL_SHARE
from synthdp.mechanisms.units import AUTO_CANDIDATES, AUTO_EPSILON_SHARE, AUTO_QUANTILE, ChosenBound, candidates_text
from synthdp.methods.base import Choice, Method, MethodInputs
from synthdp.methods.registry import choose_method, get_method, given_options
from synthdp.queries.base import QueryClass
from synthdp.queries.spec import capped_width, parse_query_class


@dataclass(frozen=True)
class Plan:
    """A run's settings, built by :func:`make_plan` from public inputs only (it never sees the data).

    ``inputs`` are the method's public inputs: its query class and its budget
    as exact rationals (``epsilon``, ``delta``; ``delta`` None: pure DP), the
    user's budget less what the domain stage may spend (``stage``, a
    :class:`DomainBudget`, docs/privacy.md §9, §10.3-10.5); ``spec`` is the query
    class as asked for (width capped); ``method`` is the method that runs (from
    :mod:`synthdp.methods.registry`), ``method_reason`` why, and ``method_plan``
    its own plan (e.g. a ``GamePlan`` or ``MeasurePlan``), which it runs and
    reports.
    """

    config: SynthesisConfig
    inputs: MethodInputs
    spec: str
    stage: DomainBudget
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
    #: ``cells_from_total``: the noisy total released before the domain steps and what it set (docs/privacy.md §13).
    total: Choice | None = None

    @property
    def query_class(self) -> QueryClass:
        """The class the method serves, on the domain it runs on."""
        return self.inputs.query_class

    @property
    def epsilon(self) -> Fraction:
        """The method's epsilon: the user's less what the steps ahead of it may spend."""
        return self.inputs.epsilon

    @property
    def delta(self) -> Fraction | None:
        """The method's delta (None: pure DP)."""
        return self.inputs.delta

    @property
    def relation(self) -> Relation:
        """The neighbouring relation (docs/privacy.md §1.3)."""
        return self.inputs.relation

    def with_domain(self, domain) -> "Plan":
        """This plan on the domain the domain stage learned (a :class:`synthdp.domains.DomainStage`): the method
        planned again on it with the same budgets, and what each part released and cost.  Public: the stage's
        results are released.  Refuses (an internal error) a stage that spent other than this plan fixed."""
        planned = self.stage
        ahead = domain.total.epsilon if domain.total is not None else Fraction(0)
        spent = (ahead + domain.learned.epsilon + domain.bounded.epsilon + domain.discretised.epsilon,
                 domain.learned.delta,
                 domain.learned.rho + domain.bounded.rho + domain.discretised.rho, domain.learned.filter_delta)
        if spent != (planned.epsilon, planned.delta, planned.rho, planned.filter_delta):
            raise RuntimeError(f"the domain stage spent (epsilon, delta, rho, filter delta) = {spent}, not the "
                               f"planned {(planned.epsilon, planned.delta, planned.rho, planned.filter_delta)}")
        qc = parse_query_class(self.spec, domain.schema.domain)
        inputs = replace(self.inputs, query_class=qc)
        return replace(self, inputs=inputs, method_plan=self.method.plan(inputs),
                       domains=domains_choice(domain.learned), bounds=bounds_choice(domain.bounded),
                       discretised=cells_choice(domain.discretised),
                       total=total_choice(domain.total, domain.discretised))

    def choices(self) -> dict[str, dict[str, Any]]:
        """Every choice with its reason, as plain data for the report."""
        out = {"method": {"value": self.method.name, "reason": self.method_reason}}
        for name, choice in (("queries", self.queries), ("domains", self.domains), ("max_rows_per_unit", self.unit),
                             ("discretised", self.discretised), ("bounds", self.bounds),
                             ("noisy_total", self.total)):
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


def check_method(config: SynthesisConfig) -> None:
    """Refuse a method the registry does not hold (the one list of methods), before anything is read."""
    if config.method != "auto":
        get_method(config.method)


@dataclass(frozen=True)
class DomainBudget:
    """What the domain stage may spend, each part fixed by :func:`make_plan` before it runs (public inputs only).

    ``in_filter``: the stage spends inside the method's zCDP filter (docs/privacy.md §8.4), else pure spends
    ahead of the method.  Per step: ``categories`` (pure, §9: each column's cost, :func:`planned_learning`) or
    ``selection`` (in the filter, §10.5); ``point_masses`` (§11.2); ``bounds_epsilon`` and ``cells_epsilon``, each
    column's ``eps_b`` (§10.4) and ``eps_d`` (§10.3); ``max_cells``, the most cells a tree may release;
    ``total_epsilon``, the noisy total's ``eps_T`` (§13, ``cells_from_total``; None: no total).  The totals
    (``epsilon`` and ``delta`` ahead, ``rho`` and ``filter_delta`` in the filter) are what the method's budget
    leaves out; :meth:`Plan.with_domain` checks that the stage spent exactly them.
    """

    in_filter: bool
    categories: Any = None
    selection: Any = None
    point_masses: Any = None
    bounds_epsilon: Fraction | None = None
    cells_epsilon: Fraction | None = None
    max_cells: int | None = None
    total_epsilon: Fraction | None = None
    epsilon: Fraction = Fraction(0)
    delta: Fraction = Fraction(0)
    rho: Fraction = Fraction(0)
    filter_delta: Fraction = Fraction(0)


@dataclass(frozen=True)
class ViewInputs:
    """What a linked run fixes, from public inputs, for one of its views (docs/privacy.md §12): its zCDP filter's
    ``rho`` (a share of one conversion; None: the run converts its own budget) and the columns whose marginals
    alone another view releases (:class:`~synthdp.methods.base.MethodInputs`)."""

    filter_budget: Fraction | None = None
    released_columns: tuple[str, ...] = ()


def make_plan(config: SynthesisConfig, schema, *, chosen_bound=None, view: ViewInputs = ViewInputs()) -> Plan:
    """Every choice of the run from ``config`` and the public ``schema`` alone (no data: no privacy cost); once.

    ``chosen_bound`` (a :class:`synthdp.mechanisms.units.ChosenBound`) is the
    privately chosen ``k`` of a privacy unit and its cost, released (docs/privacy.md §10.6).  The parts of the
    domain ``schema`` leaves open (categories, bounds, cells) are planned on placeholders
    (:func:`synthdp.mechanisms.partition.placeholder_schema`, each column to discretise at the plan's most
    cells): the method is chosen and every budget fixed here, the domain stage's too (:class:`DomainBudget`),
    so that the method's budget is public before the first private step.  Refuses, before any private step, what
    cannot run: an unknown or unencodable class, a player the budget does not allow, a budget the planned spends
    would exceed.  The method comes from :func:`synthdp.methods.registry.choose_method`; its own choices from its
    :meth:`~synthdp.methods.base.Method.plan`, which also checks its budget up front; once the domain is
    learned, :meth:`Plan.with_domain` plans the method again on it, with the same budgets.  ``view``: what a linked
    run fixed for this view (:class:`ViewInputs`, docs/privacy.md §12).
    """
    whole, delta = budget(config)
    epsilon = whole - (chosen_bound.epsilon if chosen_bound is not None else 0)
    require_delta_for_bounds(schema, delta)
    spec, capped = capped_width(config.query_class, len(schema.domain))
    placeholder = partition.placeholder_schema(schema) if schema.to_learn else schema
    inputs = MethodInputs(parse_query_class(spec, placeholder.domain), epsilon, delta, Relation(config.relation),
                          config.contribution_bound, config.to_dict(), whole,
                          given=given_options(config.to_dict(), config.defaults()), filter_budget=view.filter_budget,
                          released_columns=view.released_columns)
    method, why = choose_method(config.method, inputs)
    stage = DomainBudget(False)
    if any(Tallies.columns(schema)):
        cap = None
        if schema.to_discretise:
            cap = cell_cap(method, inputs, placeholder, spec)
            inputs = replace(inputs, query_class=parse_query_class(spec, placeholder.with_placeholder_cells(cap)
                                                                   .domain))
        stage = domain_budget(config, schema, method, inputs, cap)
    inputs = replace(inputs, epsilon=epsilon - stage.epsilon, delta=None if delta is None else delta - stage.delta,
                     filter_rho=stage.rho, filter_delta=stage.filter_delta)
    return Plan(config, inputs, spec, stage, method, why, method.plan(inputs),
                queries=None if capped is None else Choice(spec, capped), unit=unit_choice(chosen_bound))


def candidate_plans(config: SynthesisConfig, schema) -> dict[int, Plan]:
    """``max_rows_per_unit="auto"``: the plan of every ``k`` of :data:`~synthdp.mechanisms.units.AUTO_CANDIDATES`
    as if it were given (the choice's epsilon set aside), by ``k``, for the ``k`` whose plan passes: the candidates
    the private choice ranges over (docs/privacy.md §10.6, "Refusals before the choice of k").

    Public inputs only, like :func:`make_plan` (the configuration and the public ``schema``): the candidates are a
    function of them, so the exponential mechanism may range over them, and every refusal of the plan comes before
    the choice's charge.  Refuses with the smallest ``k``'s refusal when no plan passes (an unknown query class is
    refused at every ``k``).  Each plan's ``max_rows_per_unit`` choice names the whole public range; only the plan
    made again at the chosen ``k`` is reported.
    """
    epsilon = budget(config)[0] * AUTO_EPSILON_SHARE
    plans, refusals = {}, []
    for k in AUTO_CANDIDATES:
        try:
            plans[k] = make_plan(replace(config, max_rows_per_unit=k), schema,
                                 chosen_bound=ChosenBound(k, epsilon, AUTO_CANDIDATES, AUTO_QUANTILE))
        except InputError as refusal:
            refusals.append(refusal)
    if not plans:
        raise refusals[0]
    return plans


def require_delta_for_bounds(schema, delta) -> None:
    """Refuse columns without public bounds under pure DP: learning bounds (§10.4) needs a delta.  Public inputs."""
    if schema.to_bound and not delta:
        raise InputError(f"columns {list(schema.to_bound)} have no public bounds, and learning them privately "
                         "(learn_bounds, docs/privacy.md §10.4) needs a delta, like every private domain here. Pass a "
                         f"delta (e.g. 1e-9), or give public bounds: bounds={{{schema.to_bound[0]!r}: (lo, hi)}} "
                         f"(CLI --bounds {schema.to_bound[0]}=LO:HI), e.g. legal or physical limits")


def cell_cap(method: Method, inputs: MethodInputs, placeholder, spec: str) -> int:
    """The most cells PrivTree may release per column (docs/privacy.md §10.3): the largest of
    :data:`~synthdp.mechanisms.privtree.CELL_CAPS` with which the method's plan, every column to discretise
    holding that many cells and every column to learn one label, passes its size checks; 1 when none does (no
    split: the method's plan then refuses on the schema as given).  Public sizes only, before any private step."""
    for cells in CELL_CAPS:
        try:
            method.plan(replace(inputs, query_class=parse_query_class(spec, placeholder.with_placeholder_cells(cells)
                                                                      .domain)))
        except InputError:
            continue
        return cells
    return 1


def domain_budget(config: SynthesisConfig, schema, method: Method, inputs: MethodInputs, cap: int | None
                  ) -> DomainBudget:
    """The domain stage's budgets (:class:`DomainBudget`) from public inputs: the shares of docs/privacy.md §9,
    §10.3-10.5 and §11.2 of the method's budget ``inputs`` (what is left after a privately chosen ``k``).
    With ``cells_from_total`` and columns to discretise, :data:`~synthdp.mechanisms.total.TOTAL_SHARE` of it
    releases the noisy total first (§13), a pure spend ahead, and the shares below are of what is left.

    A method with a zCDP filter (select-measure-estimate with a delta) gives the
    stage shares of the filter's ``rho``, derived once the delta the selections
    reserve is set aside (§10.5, §11.2); otherwise (pure DP, the game) the
    categories take their share of the whole budget (§9) and bounds and cells
    their shares of what is left, as pure spends ahead.
    """
    relation, k = config.relation, config.contribution_bound
    factor = 1 if Relation(relation) == Relation.ADD_REMOVE else 2
    bounded, cut = len(schema.to_bound), len(schema.to_discretise)
    delta = inputs.delta
    eps_t = inputs.epsilon * TOTAL_SHARE if config.cells_from_total and cut else None  # §13, ahead of the rest
    inputs = replace(inputs, epsilon=inputs.epsilon - (eps_t or 0))
    if method.zcdp_budget(method.plan(inputs)) is None:  # no zCDP filter: pure spends ahead (§9, §10.3, §10.4)
        whole, _ = budget(config)
        categories = partition.planned_learning(schema, epsilon=whole, delta=delta, relation=relation,
                                                contribution_bound=k)
        left = inputs.epsilon - categories.epsilon
        eps_b = column_budget(columns=bounded, relation=relation, epsilon=left, share=BOUNDS_SHARE) if bounded else None
        eps_d = column_budget(columns=cut, relation=relation, epsilon=left) if cut else None
        ahead = ((eps_t or Fraction(0)) + categories.epsilon
                 + factor * (bounded * (eps_b or Fraction(0)) + cut * (eps_d or Fraction(0))))
        return DomainBudget(False, categories=categories, bounds_epsilon=eps_b, cells_epsilon=eps_d, max_cells=cap,
                            total_epsilon=eps_t, epsilon=ahead, delta=categories.delta)
    reserved = delta * partition.DOMAIN_DELTA_SHARE if schema.to_learn else Fraction(0)
    point_delta = delta * POINT_MASS_DELTA_SHARE if config.point_masses and cut else Fraction(0)
    rho = method.zcdp_budget(method.plan(replace(inputs, filter_delta=reserved + point_delta)))
    selection = (partition.joint_selection(rho=rho, delta=reserved, columns=len(schema.to_learn), relation=relation,
                                           contribution_bound=k) if reserved else None)
    masses = (point_mass_selection(rho=rho, delta=delta, columns=cut, relation=relation, contribution_bound=k)
              if point_delta else None)
    eps_b = column_budget(columns=bounded, relation=relation, rho=rho, share=BOUNDS_SHARE) if bounded else None
    eps_d = column_budget(columns=cut, relation=relation, rho=rho) if cut else None
    spent = (sum((s.rho for s in (selection, masses) if s is not None), Fraction(0))
             + bounded * (factor * (eps_b or Fraction(0))) ** 2 / 2 + cut * (factor * (eps_d or Fraction(0))) ** 2 / 2)
    return DomainBudget(True, selection=selection, point_masses=masses, bounds_epsilon=eps_b, cells_epsilon=eps_d,
                        max_cells=cap, total_epsilon=eps_t, epsilon=eps_t or Fraction(0), rho=spent,
                        filter_delta=reserved + point_delta)


def domains_choice(learned) -> Choice | None:
    """The columns whose categories partition selection learned (docs/privacy.md §9, §10.5), and how."""
    if learned is None or not learned.columns:
        return None
    columns, threshold = [c.column for c in learned.columns], learned.columns[0].threshold
    if learned.rho:
        how = (f"learned jointly by Gaussian partition selection (docs/privacy.md §10.5) with threshold {threshold} "
               f"rows, rho = {float(learned.rho):.4g} of the zCDP filter and delta = {float(learned.filter_delta):.3g}")
    else:
        how = (f"learned by partition selection (docs/privacy.md §9) with threshold {threshold} rows at (epsilon, "
               f"delta) = ({float(learned.epsilon):.4g}, {float(learned.delta):.3g}), the rest of the budget goes to "
               "the method")
    outside = outside_text({c: learned.schema[c].other for c in columns})
    return Choice(columns, f"no public categories: {how}; {outside}")


def outside_text(others: dict[str, str | None]) -> str:
    """The public rule for the values of the learned columns that partition selection did not keep (docs/privacy.md
    §9), from each column's ``other`` label: it is the same for every table, so the release may state it (how many
    rows it touched is the owner's alone)."""
    labels = set(others.values())
    if labels == {None}:
        return ("values outside the learned categories come back missing (other='other', CLI --other other, gives "
                "them a public label instead)")
    if len(labels) == 1:
        return f"values outside the learned categories come back as the public label {labels.pop()!r}"
    return f"values outside the learned categories come back as each column's public label (None: missing): {others}"


def unit_choice(chosen_bound) -> Choice | None:
    """The privately chosen rows per privacy unit ``k`` and its cost (docs/privacy.md §10.6)."""
    if chosen_bound is None:
        return None
    candidates = candidates_text(chosen_bound.candidates)
    if chosen_bound.candidates != AUTO_CANDIDATES:
        candidates += f" (the k of {candidates_text(AUTO_CANDIDATES)} whose plan passes)"
    return Choice(chosen_bound.k, f"chosen privately (docs/privacy.md §10.6): the exponential mechanism over "
                  f"{candidates} near the {float(chosen_bound.quantile):g} quantile of rows per unit, "
                  f"at epsilon {float(chosen_bound.epsilon):.4g}")


def total_choice(total, discretised) -> Choice | None:
    """The noisy total released before the domain steps, its cost, and the threshold it set (docs/privacy.md §13)."""
    if total is None:
        return None
    thresholds = sorted({c.parameters.threshold for c in discretised.columns})
    return Choice(total.value, f"cells_from_total: a noisy count of the rows, DLap at rate {float(total.rate):.4g} "
                  f"(docs/privacy.md §13), epsilon = {float(total.epsilon):.4g} ahead of the method; PrivTree's "
                  f"threshold from it: {', '.join(map(str, thresholds))}")


def bounds_choice(bounded) -> Choice | None:
    """The numeric columns whose bounds were learned privately (docs/privacy.md §10.4), and at what cost."""
    if bounded is None or not bounded.columns:
        return None
    attrs = [bounded.schema[c] for c in bounded.columns]
    learned = ", ".join(f"{a.name!r} [{', '.join(bound_text(a, b) for b in a.bounds)}]" for a in attrs)
    return Choice(list(bounded.columns),
                  f"no public bounds (learn_bounds): {learned}, learned on a public log-2 grid (docs/privacy.md "
                  f"§10.4) from the ranges about {bounded.threshold} rows fall in (or {bounded.pair} in two "
                  f"neighbouring ones), widened over each next range about {bounded.walk} rows fall in and by one "
                  f"range more, values outside clipped to them, "
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
                  + _cell_cap_note(discretised.columns[0].max_cells)
                  + _point_mass_note(discretised.point_masses, discretised.columns[0].max_cells))


def _point_mass_note(masses, max_cells: int | None) -> str:
    """The point masses kept as cells of their own, what selecting them cost, and the most a column may keep under
    the cell cap when one column keeps that many (docs/privacy.md §11.2; released sizes only)."""
    if masses is None:
        return ""
    kept = {c: [f"{v:g}" for v in values] for c, values in masses.values.items() if values}
    most = most_point_masses(max_cells)
    full = most is not None and any(len(values) == most for values in masses.values.values())
    return (f"; point masses selected first (docs/privacy.md §11.2) with threshold {masses.selection.threshold} rows, "
            f"rho = {float(masses.rho):.4g} and delta = {float(masses.selection.delta):.3g}, kept: "
            + (", ".join(f"{c} {v}" for c, v in kept.items()) or "none")
            + (f" (at most {most} per column under the cap of {max_cells} cells, the largest noisy counts first)"
               if full else ""))


def _cell_cap_note(max_cells: int | None) -> str:
    """The public cap on each tree's cells, when it was below the largest one tried (docs/privacy.md §10.3)."""
    if max_cells is None or max_cells >= CELL_CAPS[0]:
        return ""
    return (f"; at most {max_cells} cells per column, the most with which the method's counts fit its size limits "
            "(decided on public sizes before any private step)")


def check_delta_against_public_n(config: SynthesisConfig, n: int) -> None:
    """Refuse ``delta > 1/n`` under replace-one, where ``n`` is public (docs/privacy.md §1.3); a no-op under
    add/remove, where ``n`` is private and no abort may depend on it."""
    if config.relation == Relation.REPLACE_ONE and config.delta is not None and Fraction(config.delta) > Fraction(1, n):
        raise InputError(f"delta={config.delta} is larger than 1/n = {1 / n:.3g}; choose delta <= 1/n "
                         "(1/n^2 is customary); checked under replace-one only, where n is public")
