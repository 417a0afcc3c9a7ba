"""The plan of a run: every tuned default and automatic choice, made from public inputs only.

:func:`make_plan` receives the configuration and the public schema, **never
the data**: that is what makes every choice in a :class:`Plan` free of
privacy cost (docs/privacy.md §4.1: the game's inputs ``T``, ``N``,
``epsilon_0`` and the players are fixed before the data are touched).  Each
choice carries its human-readable reason, and the plan goes into the
released report as it is.

The plan also replays the method's planned spends on a scratch ledger
(:func:`check_budget`), so a budget the run cannot keep is refused before the
method's first private step instead of at round 26 of 50.  Domains learned by
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

import logging
import math
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any

from synthdp.config import ORACLE_PARAMETERS, SynthesisConfig
from synthdp.core.errors import InputError
from synthdp.core.parameters import Relation
from synthdp.accounting.ledger import PRSMABudget, as_delta, as_epsilon, round_up
from synthdp.oracles import get_oracle
from synthdp.oracles.base import Limits, Oracle
from synthdp.queries.base import QueryClass
from synthdp.queries.complement import base_class

#: The PRSMA query players: the full algorithm and its exact-oracle law (one oracle call per round).
PRSMA_PLAYERS = ("prsma", "prsma-exact")
#: Game defaults, tuned on NLTCS and BR2000 only (docs/benchmarks.md); privacy does not depend on them.
#: Without ``rounds``, the game plays as many rounds as keep each round's budget at least
#: ``DEFAULT_EPSILON_PER_ROUND`` (at most ``DEFAULT_MAX_ROUNDS``, a running-time cap).
DEFAULT_EPSILON_PER_ROUND = 0.0025
#: ... except for workloads of conjunctions at least this wide (5-way marginals), whose error sits in
#: few of very many small cells: there each selection must be sharper (tuned on BR2000 5-way).
WIDE_WIDTH = 5
WIDE_EPSILON_PER_ROUND = 0.01
DEFAULT_MAX_ROUNDS = 300
DEFAULT_SAMPLES = 50
#: ``samples_per_round=None`` when the cap cuts the rounds: each selection is then sharper than the
#: floor, and the plays' sampling error (about ``1/sqrt(N)`` per cell) is what blurs the query
#: player's view, so the running time the cap saves goes to samples (tuned on NLTCS and BR2000).
CAPPED_SAMPLES = 100
#: ``respond_to="auto"``: the union response once each round's budget is at least this (sharp
#: selections), else the round response; ``burn_in=None``: ``ROUND_BURN_IN`` for the round response
#: and none for the union response (which corrects the early plays itself).
UNION_FROM_EPSILON_PER_ROUND = 0.006
ROUND_BURN_IN = 0.25
#: Record universes up to this size are enumerated by the data player.
SMALL_UNIVERSE = 2**17
#: Largest number of workload cells the exponential player scores each round.
MAX_SCORED_CELLS = 5_000_000

#: What each mode means, for the report.
MODE_MEANINGS = {
    "E": "exact: every query-oracle answer is a certified optimum; a solver FAIL abandons the release",
    "N": "time-limited: privacy conditional on no solver failure (experiments only, do not publish)",
    "P": "PRSMA: solver failures are hidden by the mechanism",
    "P, exact-oracle law": "PRSMA's output law under an oracle that never fails (one call per round)",
    "-": "no query oracle: the player scores every query of the explicit workload",
}


@dataclass(frozen=True)
class Choice:
    """One planned value and why it was chosen (or that the caller gave it)."""

    value: Any
    reason: str

    def to_dict(self) -> dict[str, Any]:
        value = self.value.name if isinstance(self.value, Oracle) else self.value
        plain = isinstance(value, (int, float, str, bool, type(None))) or (
            isinstance(value, list) and all(isinstance(v, str) for v in value))
        return {"value": value if plain else str(value), "reason": self.reason}


@dataclass(frozen=True)
class GamePlan:
    """The synthetic-data game's inputs (docs/privacy.md §4.1), all public."""

    rounds: Choice
    samples_per_round: Choice
    epsilon0: Fraction
    player: Choice
    mode: Choice
    query_oracle: Choice
    data_oracle: Choice
    response: Choice
    burn_in_rounds: Choice
    ftpl_scale: float
    prsma_budget: PRSMABudget | None = None


@dataclass(frozen=True)
class MeasurePlan:
    """Select-measure-estimate's inputs (docs/privacy.md §8.1), all public.

    ``rho`` is the zCDP budget the method's filter keeps to (§8.4): the
    largest ``rho`` whose conversion (§8.5) fits the method's ``(epsilon,
    delta)``, which is what the run's ledger is charged.
    """

    rho: Choice
    marginals: Choice
    options: Any
    #: Classes too large to enumerate: the RSPM selection (a ``measure.OracleSelection``), its mode and the
    #: probability reserved for its clips (docs/privacy.md §8.4); None for marginal classes.
    oracle: Choice | None = None
    mode: Choice | None = None
    clip_budget: Fraction = Fraction(0)
    #: Pure DP (docs/privacy.md §10.2): ``rho`` then holds the method's ``epsilon`` (Laplace measurements, the
    #: run's own ledger as the filter); reported as ``epsilon``.
    pure: bool = False
    #: The run's size before any private step: rounds, candidates per round, model cells, memory
    #: (a ``footprint.Footprint``).
    footprint: Choice | None = None


@dataclass(frozen=True)
class Plan:
    """A run's settings, built by :func:`make_plan` from public inputs only (it never sees the data).

    ``epsilon``/``delta`` are the method's budget as exact rationals (``delta``
    None: pure DP): the user's budget less what learning the domains spent
    ahead (``domains``, docs/privacy.md §9); ``method`` says which algorithm
    runs and why; ``game`` holds the game's choices when the method is the game.
    """

    config: SynthesisConfig
    query_class: QueryClass
    epsilon: Fraction
    delta: Fraction | None
    relation: Relation
    method: Choice
    game: GamePlan | None = None
    measure: MeasurePlan | None = None
    domains: Choice | None = None
    #: ``max_rows_per_unit="auto"``: the ``k`` chosen privately and what it cost (docs/privacy.md §10.6).
    unit: Choice | None = None
    discretised: Choice | None = None
    bounds: Choice | None = None
    #: What select-measure-estimate's filter spent before the method (Gaussian partition selection, docs/privacy.md
    #: §10.5; PrivTree, §10.3), and the delta the selection reserved out of the conversion (§8.5).
    filter_rho: Fraction = Fraction(0)
    filter_delta: Fraction = Fraction(0)

    def choices(self) -> dict[str, dict[str, Any]]:
        """Every choice with its reason, as plain data for the report."""
        out = {"method": self.method.to_dict()}
        if self.domains is not None:
            out["domains"] = self.domains.to_dict()
        if self.unit is not None:
            out["max_rows_per_unit"] = self.unit.to_dict()
        if self.discretised is not None:
            out["discretised"] = self.discretised.to_dict()
        if self.bounds is not None:
            out["bounds"] = self.bounds.to_dict()
        if self.measure is not None:
            out["epsilon" if self.measure.pure else "rho"] = self.measure.rho.to_dict()
            out["marginals"] = self.measure.marginals.to_dict()
            if self.measure.footprint is not None:
                out["footprint"] = {"value": self.measure.footprint.value.to_dict(),
                                    "reason": self.measure.footprint.reason}
            if self.measure.oracle is not None:
                out["query_oracle"] = {"value": self.measure.oracle.value.oracle.name,
                                       "reason": self.measure.oracle.reason}
                out["mode"] = self.measure.mode.to_dict()
        if self.game is not None:
            for name in ("rounds", "samples_per_round", "player", "mode", "query_oracle", "data_oracle",
                         "response", "burn_in_rounds"):
                out[name] = getattr(self.game, name).to_dict()
        out["rows"] = self.rows().to_dict()
        return out

    def rows(self) -> Choice:
        """How many records the output has, and why: never the input's size (private under add/remove)."""
        if self.config.n_rows is not None:
            return Choice(self.config.n_rows, "n_rows given by the caller: a resample of the released records")
        if self.game is not None:
            T, N, burn = self.game.rounds.value, self.game.samples_per_round.value, self.game.burn_in_rounds.value
            return Choice((T - burn) * N, f"the released plays of the game, ({T} - {burn}) rounds x {N} samples, not "
                                          "the input's size; pass n_rows for another size")
        return Choice("noisy total", "as many records as the fitted model's noisy total count (released, paid "
                                     "for); pass n_rows for another size")


def budget(config: SynthesisConfig) -> tuple[Fraction, Fraction | None]:
    """The user's ``(epsilon, delta)`` as exact rationals: the one place they are converted (docs/privacy.md §2.6).

    ``delta`` None or 0 is pure DP, returned as None (docs/privacy.md §10.2).
    """
    delta = None if config.delta is None else as_delta(config.delta, "delta")
    return as_epsilon(config.epsilon, "epsilon"), delta or None


def default_epsilon_per_round(query_class: QueryClass) -> float:
    """The per-round budget floor that fixes the default number of rounds (docs/benchmarks.md).

    ``WIDE_EPSILON_PER_ROUND`` for classes of conjunctions of width at least
    ``WIDE_WIDTH``, else ``DEFAULT_EPSILON_PER_ROUND``.  It depends only on the
    (public) class.
    """
    width = getattr(base_class(query_class), "max_width", None)
    return WIDE_EPSILON_PER_ROUND if width is not None and width >= WIDE_WIDTH else DEFAULT_EPSILON_PER_ROUND


def game_length(epsilon: Fraction, delta: Fraction | None, query_class: QueryClass, *, rounds: int | None = None,
                epsilon_per_round: float | None = None, samples_per_round: int | None = None) -> tuple[int, int]:
    """The game's rounds ``T`` and samples per round ``N`` (:func:`synthdp.generate_synthetic` documents the rule).

    Both are inputs of GAME (docs/privacy.md §4.1) and depend only on public parameters (the
    budget and the query class), so choosing them spends nothing; ``N`` stays within the
    recommended range of docs/privacy.md §4.5.
    """
    T, N, _, _ = _game_length(epsilon, delta, query_class, rounds, epsilon_per_round, samples_per_round)
    return T, N


def _game_length(epsilon, delta, query_class, rounds, epsilon_per_round, samples_per_round):
    """``(T, N)`` and the reasons for both."""
    from synthdp.accounting.ledger import rounds_for

    capped = False
    if rounds is not None:
        T, why_t = rounds, "given by the caller"
    elif epsilon_per_round is not None:
        T = rounds_for(epsilon, delta or Fraction(0), as_epsilon(epsilon_per_round, "epsilon_per_round"))
        why_t = f"the most rounds whose per-round budget stays at least epsilon_per_round={epsilon_per_round}"
    else:
        floor = default_epsilon_per_round(query_class)
        T = rounds_for(epsilon, delta or Fraction(0), as_epsilon(floor, "epsilon_per_round"))
        capped, T = T > DEFAULT_MAX_ROUNDS, min(T, DEFAULT_MAX_ROUNDS)
        why_t = (f"the most rounds whose per-round budget stays at least the tuned floor {floor}"
                 + (f", capped at {DEFAULT_MAX_ROUNDS} (running time)" if capped else ""))
    if samples_per_round is not None:
        N, why_n = samples_per_round, "given by the caller"
    elif capped:
        N, why_n = CAPPED_SAMPLES, "the round cap applies: the time it saves goes to samples (tuned)"
    else:
        N, why_n = DEFAULT_SAMPLES, "tuned default"
    return T, N, why_t, why_n


def _scored_cells(query_class: QueryClass) -> int | None:
    """Number of base queries an exponential player would score, or None if not enumerable."""
    from synthdp.methods.players import workload_size

    return workload_size(base_class(query_class))


def choose_player(requested: str, query_class: QueryClass, epsilon0: Fraction, samples: int,
                  pure: bool) -> tuple[str, str]:
    """Resolve ``auto`` by comparing the selection-error bounds of docs/privacy.md.

    RSPM (Corollary 2.8 with W = N): ``m^2 (2 + 1/N) / (eps0 n)``; exponential
    mechanism (Theorem 4.5): ``2 (ln|Q_w| + 1) / (eps0 n)``.  Both are
    data-independent, so the choice costs no privacy.
    """
    cells = _scored_cells(query_class)
    if requested == "auto" and pure and cells is not None and cells <= MAX_SCORED_CELLS:
        return "exponential", "pure DP requested (delta=None): RSPM's noise cap needs delta > 0"
    if requested == "auto" and pure:  # no player the budget allows can run: say so before anything is spent
        size = "cannot be enumerated" if cells is None else f"has {cells:,} cells"
        raise InputError(f"pure DP (no delta) allows only the exponential and noisy-max query players, which score "
                         f"an explicit workload of at most {MAX_SCORED_CELLS:,} cells, and {query_class.name} "
                         f"{size}: pass a delta (e.g. --delta 1e-9) so that auto can choose RSPM, or ask for a "
                         "smaller workload (workload:FILE.json, marginals of lower width)")
    if requested != "auto":
        if requested in ("exponential", "noisy-max") and (cells is None or cells > MAX_SCORED_CELLS):
            raise InputError(f"query player {requested!r} needs an explicit workload of at most "
                             f"{MAX_SCORED_CELLS} queries; {query_class.name} is not one. Use rspm.")
        return requested, "chosen by the caller"
    m = query_class.separator().m
    rspm_term = m * m * (2 + 1 / samples) / float(epsilon0)
    if cells is None or cells > MAX_SCORED_CELLS:
        return "rspm", f"class not enumerable; RSPM selection bound {rspm_term:.3g}/n"
    em_term = 2 * (math.log(2 * cells) + 1) / float(epsilon0)
    if em_term <= rspm_term:
        return "exponential", (f"exponential-mechanism selection bound {em_term:.3g}/n is below "
                               f"RSPM's {rspm_term:.3g}/n for this class")
    return "rspm", f"RSPM selection bound {rspm_term:.3g}/n is below the exponential mechanism's {em_term:.3g}/n"


def choose_oracle(name: str, query_class: QueryClass, role: str) -> tuple[Oracle, str]:
    """``auto``: the native exact search where it applies, else CP-SAT; with the reason.

    The data player on a small record universe (at most ``SMALL_UNIVERSE``
    records, e.g. NLTCS) enumerates it instead: exact and fastest there.
    Only the public domain is read.
    """
    from synthdp.oracles.brute import universe_size

    base = base_class(query_class)
    if name == "auto" and role == "data player" and universe_size(base) <= SMALL_UNIVERSE:
        return get_oracle("brute"), f"record universe of at most {SMALL_UNIVERSE} records: enumerated"
    if name == "auto":
        exact = get_oracle("exact")
        if exact.supports(base):
            return exact, "the native exact search supports this class"
        return get_oracle("cpsat"), "the native exact search does not support this class: CP-SAT"
    oracle = get_oracle(name)
    if not oracle.supports(base):
        raise InputError(f"oracle {name!r} cannot encode the class {base.name} for the {role}; "
                         f"use --oracle auto or one of cpsat, cbc")
    return oracle, "chosen by the caller"


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
    method's own choices come from its planner in :data:`PLANNERS`, which also
    checks its budget up front.
    """
    from synthdp.queries.spec import parse_query_class

    epsilon, delta = budget(config)
    domains = None
    filter_rho = filter_delta = Fraction(0)
    if learned is not None:
        epsilon, delta = epsilon - learned.epsilon, None if delta is None else delta - learned.delta
        filter_rho, filter_delta = learned.rho, learned.filter_delta
    if learned is not None and learned.columns and learned.rho:
        domains = Choice([c.column for c in learned.columns],
                         f"no public categories: learned jointly by Gaussian partition selection (docs/privacy.md "
                         f"§10.5) with threshold {learned.columns[0].threshold} rows, rho = {float(learned.rho):.4g} "
                         f"of the zCDP filter and delta = {float(learned.filter_delta):.3g}")
    elif learned is not None and learned.columns:
        domains = Choice([c.column for c in learned.columns],
                         f"no public categories: learned by partition selection (docs/privacy.md §9) with threshold "
                         f"{learned.columns[0].threshold} rows at (epsilon, delta) = ({float(learned.epsilon):.4g}, "
                         f"{float(learned.delta):.3g}), the rest of the budget goes to the method")
    unit = None
    if chosen_bound is not None:
        epsilon -= chosen_bound.epsilon
        unit = Choice(chosen_bound.k, f"chosen privately (docs/privacy.md §10.6): the exponential mechanism over "
                      f"1..{chosen_bound.max_rows} near the {float(chosen_bound.quantile):g} quantile of rows per unit, "
                      f"at epsilon {float(chosen_bound.epsilon):.4g}")
    ranges = None
    if bounded is not None and bounded.columns:
        epsilon -= bounded.epsilon
        filter_rho += bounded.rho
        ranges = Choice(list(bounded.columns),
                        f"no public bounds (learn_bounds): learned on a public log-2 grid (docs/privacy.md §10.4), "
                        f"threshold {bounded.threshold} rows, values outside clipped to them, "
                        + (f"rho = {float(bounded.rho):.4g} of the zCDP filter" if bounded.rho
                           else f"epsilon = {float(bounded.epsilon):.4g} ahead of the method"))
    cells = None
    if discretised is not None and discretised.columns:
        epsilon -= discretised.epsilon
        filter_rho += discretised.rho
        cells = Choice([c.column for c in discretised.columns],
                       f"bounded numeric columns without public bins or cut points: cells learned by PrivTree "
                       f"(docs/privacy.md §10.3), each tree run at epsilon "
                       f"{float(discretised.columns[0].parameters.epsilon):.4g} (eps_d over the rows per privacy "
                       "unit, §10.6), " + (f"rho = {float(discretised.rho):.4g} of the zCDP filter" if discretised.rho else
                                   f"epsilon = {float(discretised.epsilon):.4g} ahead of the method"))
    qc = parse_query_class(config.query_class, schema.domain)
    method = choose_method(config, qc, delta)
    plan = Plan(config, qc, epsilon, delta, Relation(config.relation), method, domains=domains, discretised=cells,
                unit=unit, bounds=ranges, filter_rho=filter_rho, filter_delta=filter_delta)
    return PLANNERS[method.value](plan)


def discretisation_budget(plan: Plan, columns: int, *, share: Fraction | None = None) -> Fraction:
    """PrivTree's per-column ``eps_d`` (docs/privacy.md §10.3): in select-measure-estimate's filter, or pure ahead.

    ``share`` replaces PrivTree's share (private bounds use their own, §10.4).

    From the plan made on the schema before discretisation (public inputs
    only): select-measure-estimate gives the trees ``DISCRETISE_SHARE`` of its
    ``rho``; the game (or pure DP) that share of its ``epsilon``, ahead.
    """
    from synthdp.mechanisms.privtree import DISCRETISE_SHARE, column_budget

    share = DISCRETISE_SHARE if share is None else share
    if plan.measure is not None and not plan.measure.pure:
        return column_budget(columns=columns, relation=plan.relation, rho=plan.measure.rho.value, share=share)
    return column_budget(columns=columns, relation=plan.relation, epsilon=plan.epsilon, share=share)


def choose_method(config: SynthesisConfig, query_class: QueryClass, delta: Fraction | None) -> Choice:
    """``auto``: select-measure-estimate where it can run, else the game; from public inputs only.

    On every marginal benchmark (ADULT 3- and 5-way, NLTCS, ACS; docs/benchmarks.md)
    the measurement method's error is a fraction of the game's, so ``auto`` takes it
    whenever it serves the class, the budget has a ``delta`` (zCDP needs one) and no
    game-only parameter was given.
    """
    from synthdp.methods.measure import MAX_MARGINALS, MeasureOptions, backbone_marginals, workload_marginals

    requested, game_settings = config.method, config.game_settings()
    if requested not in PLANNERS and requested != "auto":
        raise InputError(f"method {requested!r} is not available; choose one of {['auto', *PLANNERS]}")
    try:
        workload_marginals(query_class, query_class.domain)
        marginal_class = True
    except InputError:
        marginal_class = False
    if not marginal_class:  # select-measure-estimate reads these for its RSPM rounds (docs/privacy.md §8.1 (b))
        game_settings = [name for name in game_settings if name not in ORACLE_PARAMETERS]
    if requested == "measure" and game_settings:
        raise InputError(f"{game_settings} are settings of the game, which method='measure' does not read; "
                         "drop them or pass method='game'")
    if requested != "auto":
        return Choice(requested, "chosen by the caller")
    if game_settings:
        return Choice("game", f"game settings given ({', '.join(game_settings)}), so auto chose the game over "
                              "select-measure-estimate, which does not read them; drop them for the default method")
    if delta is None and not marginal_class:
        return Choice("game", "pure DP: select-measure-estimate serves only marginal classes under pure "
                              "DP (docs/privacy.md §10.2)")
    if delta is None:
        return pure_method(config, query_class)
    if not marginal_class:
        backbone = len(backbone_marginals(query_class.domain, MeasureOptions().backbone_width))
        if backbone > MAX_MARGINALS:  # the wide path (docs/privacy.md §8.9) is not measured on these classes yet
            return Choice("game", f"{query_class.name} is not a marginal class and its {backbone} backbone marginals "
                                  f"exceed {MAX_MARGINALS}: the game (oracle selection) serves it")
        return Choice("measure", f"{query_class.name} with a delta: select-measure-estimate over a backbone of small "
                                 "marginals and the estimate's most probable records; its certified error over all "
                                 "conjunctions is a small fraction of the game's (docs/benchmarks.md)")
    return Choice("measure", "a marginal class with a delta: select-measure-estimate (docs/privacy.md §8) is "
                             "several times more accurate than the game on every marginal benchmark")


def pure_bounds(config: SynthesisConfig, query_class: QueryClass) -> tuple[float, float, float]:
    """``(A_measure, A_game, B_game)``: the data-independent max-error bounds ``A/n + B`` of docs/privacy.md §10.2.

    ``A_measure = k Delta_1 (ln(2C) + 1) / epsilon + 1`` is the expected largest
    discrete Laplace draw when the class's ``k`` marginals (``C`` cells) are
    measured once each at ``epsilon / k``; ``A_game, B_game`` are Theorem
    4.4's terms for the game the plan would run (exponential player).  Public
    inputs only.
    """
    from synthdp.methods.game import a_priori_bound, ftpl_scale
    from synthdp.methods.measure import workload_marginals

    epsilon, _ = budget(config)
    domain = query_class.domain
    marginals = workload_marginals(query_class, domain)
    cells = sum(domain.cells(m) for m in marginals)
    l1 = 1 if config.relation == Relation.ADD_REMOVE else 2
    a_measure = len(marginals) * l1 * (math.log(2 * cells) + 1) / float(epsilon) + 1
    T, N, _, _ = _game_length(epsilon, None, query_class, config.rounds, config.epsilon_per_round,
                              config.samples_per_round)
    size = _scored_cells(query_class) or cells
    game = a_priori_bound(m=query_class.separator().m, d=len(query_class.dual_separator()),
                          log_q=math.log(2 * size), epsilon0=epsilon / T, rounds=T, samples=N,
                          resolution=config.resolution, scale=ftpl_scale(T, config.ftpl_theta),
                          selection_term="exponential")
    return a_measure, game["A"], game["B"]


def pure_method(config: SynthesisConfig, query_class: QueryClass) -> Choice:
    """``auto`` under pure DP for a marginal class: the method whose data-independent bound is better (§10.2).

    Select-measure-estimate is chosen when its bound ``A_m / n`` is at most the
    game's ``A_g / n + B_g`` at every ``n`` where it says anything (``n >= A_m``,
    below which it exceeds 1): that is ``1 - A_g / A_m <= B_g``.  Both bounds
    come from the public budget, domain and class, so the choice costs nothing.
    """
    a_m, a_g, b_g = pure_bounds(config, query_class)
    numbers = (f"measuring the workload once: E max error <= {a_m:.4g}/n; the game: <= {a_g:.4g}/n + {b_g:.3g} "
               "(docs/privacy.md §10.2, Theorem 4.4)")
    if 1 - a_g / a_m <= b_g:
        return Choice("measure", f"pure DP, marginal class: select-measure-estimate with Laplace measurements, whose "
                                 f"bound is the smaller wherever it is below 1 ({numbers})")
    return Choice("game", f"pure DP: the game's bound is the smaller for some n where both say something ({numbers})")


def plan_game(plan: Plan) -> Plan:
    """The game's choices (:class:`GamePlan`) added to ``plan``; its planned spends checked (:func:`check_budget`)."""
    if not plan.query_class.complement_closed:
        raise InputError(f"the game needs a complement-closed class; got {plan.query_class.name}")
    plan = replace(plan, game=_plan_game(plan.config, plan.query_class, plan.epsilon, plan.delta, plan.relation))
    check_budget(plan)
    return plan


def _plan_game(config: SynthesisConfig, qc: QueryClass, epsilon: Fraction, delta: Fraction | None,
               relation: Relation) -> GamePlan:
    from synthdp.accounting.ledger import per_round_epsilon, prsma_per_round
    from synthdp.methods.game import ftpl_scale

    T, N, why_t, why_n = _game_length(epsilon, delta, qc, config.rounds, config.epsilon_per_round,
                                      config.samples_per_round)
    eps0 = per_round_epsilon(epsilon, delta, T) if delta is not None else epsilon / T
    if config.respond_to == "auto":
        union = eps0 >= as_epsilon(UNION_FROM_EPSILON_PER_ROUND)
        response = Choice("union" if union else "round",
                          f"per-round budget {float(eps0):.4g} is {'at least' if union else 'below'} "
                          f"{UNION_FROM_EPSILON_PER_ROUND}")
    else:
        response = Choice(config.respond_to, "chosen by the caller")
    if config.burn_in is None:
        fraction = ROUND_BURN_IN if response.value == "round" else 0.0
        why_b = (f"{ROUND_BURN_IN} of the rounds under the round response" if fraction
                 else "none under the union response")
    else:
        fraction, why_b = config.burn_in, f"burn_in={config.burn_in} given by the caller"
    burn = Choice(math.floor(fraction * T), why_b)
    name, why_p = choose_player(config.query_player, qc, eps0, N, pure=delta is None)

    no_oracle = Choice("-", "no query oracle: the player scores every query of the explicit workload")
    query_oracle, mode, prsma_budget = no_oracle, Choice("-", MODE_MEANINGS["-"]), None
    if name == "rspm":
        if delta is None:
            raise InputError("query player 'rspm' needs delta > 0: its noise is capped to fit the solver's integer "
                             "range, which costs delta ~1e-30 per round (docs/privacy.md Corollary 2.4); pass e.g. "
                             "delta=1e-9, or use an explicit workload with the exponential player for pure DP")
        query_oracle = Choice(*choose_oracle(config.oracle, qc, "query player"))
        letter = "N" if config.time_limit is not None else "E"
        mode = Choice(letter, MODE_MEANINGS[letter])
    elif name in PRSMA_PLAYERS:
        if delta is None:
            raise InputError(f"query player {name!r} needs delta > 0 (PRSMA is (epsilon, delta)-DP)")
        if relation != Relation.REPLACE_ONE:
            raise InputError(f"query player {name!r} runs under replace-one neighbours (docs/privacy.md §3.1); "
                             "pass relation='replace-one'")
        exact = name == "prsma-exact"
        if config.time_limit is not None or (exact and config.work_limit is not None):
            raise InputError("PRSMA needs deterministic work limits, not wall-clock time limits (docs/privacy.md "
                             "§1.5, A-stateless), and its exact-oracle law needs no limit at all; pass work_limit "
                             "(prsma only) instead of time_limit")
        query_oracle = Choice(*choose_oracle(config.oracle, qc, "query player"))
        letter = "P, exact-oracle law" if exact else "P"
        mode = Choice(letter, MODE_MEANINGS[letter])
        prsma_budget = prsma_per_round(epsilon, delta, T)
    data_oracle = Choice(*choose_oracle(config.oracle, qc, "data player"))
    return GamePlan(Choice(T, why_t), Choice(N, why_n), eps0, Choice(name, why_p), mode, query_oracle, data_oracle,
                    response, burn, ftpl_scale(T, config.ftpl_theta), prsma_budget)


def planned_spends(plan: Plan) -> list[tuple[str, Fraction, Fraction, Fraction]]:
    """The ``(mechanism, epsilon, delta, clip)`` each round will record, computed from the plan alone.

    Mirrors what the query players spend: the workload players ``epsilon_0``
    (pure); RSPM ``epsilon_0`` with its representability clip, whose size
    follows the sensitivity ``2W`` of the round objective (``W = N``, or the
    union's ``t N`` in round ``t``); PRSMA its ``(eps*, delta*)``.
    """
    from synthdp.accounting.ledger import round_up
    from synthdp.mechanisms.rspm import (clip_probability, default_noise_cap, difference_sensitivity,
                                         rspm_noise_rate, solver_integer_limit)

    game = plan.game
    T, N, name = game.rounds.value, game.samples_per_round.value, game.player.value
    if name in PRSMA_PLAYERS:
        return [("prsma", game.prsma_budget.epsilon, game.prsma_budget.delta, Fraction(0))] * T
    if name != "rspm":
        return [(name if name == "exponential" else "report-noisy-max", game.epsilon0, Fraction(0), Fraction(0))] * T
    m = plan.query_class.separator().m
    limit = solver_integer_limit(game.query_oracle.value)
    spends = []
    for t in range(1, T + 1):
        W = N * t if game.response.value == "union" else N
        rows = difference_sensitivity(W, plan.relation, "game") * plan.config.contribution_bound  # §10.6
        lam = rspm_noise_rate(game.epsilon0, m, rows)
        cap = default_noise_cap(game.epsilon0, lam, m)
        if m * cap >= limit:
            raise InputError(f"round {t} of {T}: RSPM's noise cap B={cap} on m={m} coordinates does not fit the "
                             f"exact integer range {limit} of {game.query_oracle.value.name!r} (docs/privacy.md "
                             "§2.7 R1); raise epsilon, use fewer rounds or respond_to='round'")
        spends.append(("rspm", game.epsilon0, Fraction(0), round_up(clip_probability(lam, m, cap))))
    return spends


def check_budget(plan: Plan) -> None:
    """Replay the planned spends on a scratch ledger; refuse the run up front if any would be refused.

    The run's own ledger still checks every real spend; this only moves the
    refusal before the first private step.
    """
    from synthdp.core.errors import PrivacyError
    from synthdp.accounting.ledger import Ledger

    scratch = Ledger(plan.epsilon, plan.delta or Fraction(0))
    spends = planned_spends(plan)
    quiet = logging.getLogger("synthdp.accounting.ledger")
    level = quiet.level
    quiet.setLevel(logging.WARNING)  # the scratch spends are not spends: keep them out of the log
    try:
        for t, (mechanism, eps, dlt, clip) in enumerate(spends, start=1):
            try:
                scratch.spend(mechanism, eps, dlt, plan.relation, f"round {t}", clip=clip)
            except PrivacyError as exc:
                raise InputError(f"the planned run does not fit the budget: round {t} of {len(spends)} would be "
                                 f"refused ({exc}). Nothing was run; raise delta or epsilon, or use fewer "
                                 "rounds") from None
    finally:
        quiet.setLevel(level)


def plan_measure(plan: Plan) -> Plan:
    """Select-measure-estimate's choices (:class:`MeasurePlan`): its zCDP budget and what it selects from.

    A marginal class is served by the exponential mechanism over its
    marginals.  Any other class is served by the exponential mechanism over
    a backbone of small marginals plus RSPM over the whole class every
    ``oracle_every``-th round (docs/privacy.md §8.1 (b)); the probability of
    the RSPM clips is then reserved out of ``delta`` first, ``(1 + e^eps)``
    times the clip budget (Theorem 8.1), and only the rest is converted to
    ``rho``.  Refuses pure DP, naming the method that serves it.
    """
    from synthdp.mechanisms.rspm import CLIP_BOUND
    from synthdp.accounting.zcdp import rho_for_dp
    from synthdp.methods.measure import (MeasureOptions, OracleSelection, backbone_marginals, candidate_weights,
                                         workload_marginals)

    options, domain = MeasureOptions(), plan.query_class.domain
    if plan.delta is None:
        try:
            marginals = workload_marginals(plan.query_class, domain)
        except InputError:
            raise InputError(f"method 'measure' under pure DP (no delta) serves marginal classes only, and "
                             f"{plan.query_class.name} is not one: its RSPM and record rounds need zCDP "
                             "(docs/privacy.md §10.2); pass a delta (e.g. 1e-9) or use method='game'") from None
        why = ("pure DP: the whole epsilon, spent through the run's own ledger, which refuses any step "
               "past it before its noise is drawn (Laplace measurements, docs/privacy.md §10.2, Theorem 10.2)")
        return replace(plan, measure=MeasurePlan(
            Choice(plan.epsilon, why), Choice(len(marginals), f"the marginals whose cells make up "
                                              f"{plan.query_class.name}; candidates are them and their subsets"),
            options, pure=True, footprint=measure_footprint(plan, candidate_weights(marginals), options, False)))
    try:
        workload = workload_marginals(plan.query_class, domain)
        marginals = Choice(len(workload),
                           f"the marginals whose cells make up {plan.query_class.name}; candidates are them and "
                           "their subsets")
        oracle = mode = None
        clip_budget = reserve = Fraction(0)
    except InputError:
        if not plan.query_class.complement_closed:
            raise InputError(f"method 'measure' selects from {plan.query_class.name} with RSPM, which needs the "
                             "class closed under complement; drop closed=False") from None
        rspm_rounds = (f"RSPM over the whole class every {options.oracle_every}th round" if options.oracle_every
                       else "no RSPM rounds (they did not pay for themselves on the tuning set, docs/benchmarks.md)")
        workload = backbone_marginals(domain, options.backbone_width)
        marginals = Choice(len(workload),
                           f"{plan.query_class.name} is not a marginal class: the exponential mechanism scores "
                           f"the {options.backbone_width}-way marginals and their subsets, and every "
                           f"{options.record_every}th round the estimate's {options.record_candidates} most probable "
                           f"records; {rspm_rounds}")
        found, why = choose_oracle(plan.config.oracle, plan.query_class, "query player")
        letter = "N" if plan.config.time_limit is not None and options.oracle_every else "E"
        oracle = Choice(OracleSelection(plan.query_class, found, letter, None if letter == "E" else
                                        Limits(time_limit=plan.config.time_limit)), why)
        mode = (Choice(letter, MODE_MEANINGS[letter]) if options.oracle_every
                else Choice("-", "no RSPM rounds: no query oracle runs (time_limit, if given, is not used)"))
        rounds = options.max_rounds or options.rounds_per_attribute * len(domain)
        calls = rounds // options.oracle_every if options.oracle_every else 0
        clip_budget = calls * CLIP_BOUND
        reserve = round_up((1 + math.exp(float(plan.epsilon))) * float(clip_budget))
        if reserve >= plan.delta:
            raise InputError(f"delta={float(plan.delta):.3g} is too small for {calls} RSPM calls, whose clips need "
                             f"{float(reserve):.3g} of it (docs/privacy.md §8.4); raise delta")
    weights = candidate_weights(workload)
    check_sizes(domain, weights)
    rho = rho_for_dp(plan.epsilon, plan.delta - reserve - plan.filter_delta) - plan.filter_rho
    why_rho = ("the largest rho whose conversion (docs/privacy.md §8.5, CKS20 Corollary 13) fits the method's "
               "(epsilon, delta)" + (f" less {float(reserve):.3g} of delta for the RSPM clips" if reserve else "")
               + (f" less {float(plan.filter_delta):.3g} for partition selection (§10.5)" if plan.filter_delta else "")
               + ", rounded down" + (f", less the {float(plan.filter_rho):.4g} spent in the same filter before the "
                                     "method (§10.3, §10.5)" if plan.filter_rho else ""))
    return replace(plan, measure=MeasurePlan(Choice(rho, why_rho), marginals, options, oracle, mode, clip_budget,
                                             footprint=measure_footprint(plan, weights, options, oracle is not None)))


def measure_footprint(plan: Plan, weights, options, oracle: bool) -> Choice:
    """The measure run's size (rounds, candidates per round, model cells, memory) from public inputs; refuses a run
    past the machine's memory before any private step (``synthdp.methods.footprint``)."""
    from synthdp.methods.footprint import check_fits, footprint, machine_memory

    size = footprint(plan.query_class.domain, list(weights), options, n_rows=plan.config.n_rows, oracle=oracle)
    check_fits(size, machine_memory())
    return Choice(size, f"{size.summary()}; from the domain, the options and n_rows only"
                  + ("" if plan.config.n_rows else f", plus {size.bytes_per_output_row} bytes per output record"))


#: Cells select-measure-estimate may count up front over its candidate marginals (int64 each: 2 GB).
MAX_COUNTED_CELLS = 250_000_000


def check_sizes(domain, candidates) -> None:
    """Refuse, before any private step, candidate marginals whose counts would not fit in memory (public sizes only).

    Select-measure-estimate counts every candidate marginal once
    (``MAX_COUNTED_CELLS`` int64 cells at most); the message names the largest
    marginal and the attribute that makes it large, and what to change.
    """
    cells = {r: math.prod(domain.sizes[a] for a in r) for r in candidates}
    total = sum(cells.values())
    if total <= MAX_COUNTED_CELLS:
        return
    largest = max(cells, key=cells.get)
    widest = max(largest, key=lambda a: domain.sizes[a])
    name = domain.names[widest]
    raise InputError(
        f"select-measure-estimate would count {total:,} cells ({total * 8 / 2**30:.1f} GiB) over its candidate "
        f"marginals, more than {MAX_COUNTED_CELLS:,}; the largest, on {[domain.names[a] for a in largest]}, has "
        f"{cells[largest]:,} cells, and column {name!r} has {domain.sizes[widest]:,} values. Nothing was released: "
        f"give "
        f"{name!r} fewer bins (e.g. bins={{{name!r}: 100}}, CLI --bins {name}=100), leave its bins out so that "
        "PrivTree chooses its cells (docs/privacy.md §10.3), or use a smaller query class (e.g. marginals:2)")


#: The methods a plan can choose, by name: each adds its own choices to the plan and checks its budget.
PLANNERS = {"game": plan_game, "measure": plan_measure}
