"""The synthetic-data game as a method (``method="game"``): its suitability, plan, run and report section.

The algorithm is :mod:`synthdp.methods.game.algorithm` (docs/privacy.md §4); this
module fixes its inputs ``T``, ``N``, ``epsilon_0`` and the players from
public inputs only (§4.1: they are fixed before the data are touched),
replays the rounds' planned spends on a scratch ledger so that a budget the
run cannot keep is refused before round 1 (:func:`check_budget`), runs the
game through the run's ledger and states what the report shows for it.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from fractions import Fraction

from synthdp.accounting.ledger import (Ledger, PRSMABudget, as_epsilon, per_round_epsilon, prsma_per_round,
                                       rounds_for, round_up)
from synthdp.core.errors import InputError, PrivacyError
from synthdp.core.parameters import Relation
from synthdp.mechanisms.prsma import prsma_parameters
from synthdp.mechanisms.rspm import (clip_probability, default_noise_cap, difference_sensitivity, rspm_noise_rate,
                                     solver_integer_limit)
from synthdp.methods.base import (Choice, ErrorBound, Method, MethodInputs, MethodOutput, Suitability,
                                  settings_of)
from synthdp.methods.game.algorithm import FTPLDataPlayer, OracleStats, a_priori_bound, ftpl_scale, play_game
from synthdp.methods.game.defaults import (CAPPED_SAMPLES, DEFAULT_EPSILON_PER_ROUND, DEFAULT_MAX_ROUNDS,
                                           DEFAULT_SAMPLES, ROUND_BURN_IN, UNION_FROM_EPSILON_PER_ROUND,
                                           WIDE_EPSILON_PER_ROUND, WIDE_WIDTH)
from synthdp.methods.oracle_choice import MODE_MEANINGS, choose_oracle
from synthdp.methods.game.settings import GameSettings
from synthdp.methods.game.players import PRSMAPlayer, RSPMPlayer, WorkloadPlayer, workload_size
from synthdp.oracles.base import Limits
from synthdp.queries.base import QueryClass
from synthdp.queries.complement import base_class

log = logging.getLogger(__name__)

#: The PRSMA query players: the full algorithm and its exact-oracle law (one oracle call per round).
PRSMA_PLAYERS = ("prsma", "prsma-exact")
#: Largest number of workload cells the exponential player scores each round.
MAX_SCORED_CELLS = 5_000_000


@dataclass(frozen=True)
class GamePlan:
    """The synthetic-data game's inputs (docs/privacy.md §4.1), all public."""

    inputs: MethodInputs
    settings: GameSettings
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
    (T, _), (N, _) = game_length_choices(epsilon, delta, query_class, rounds, epsilon_per_round, samples_per_round)
    return T, N


def game_length_choices(epsilon, delta, query_class, rounds, epsilon_per_round, samples_per_round):
    """``((T, why), (N, why))``: :func:`game_length` with the reasons for both."""
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
    return (T, why_t), (N, why_n)


def scored_cells(query_class: QueryClass) -> int | None:
    """Number of base queries an exponential player would score, or None if not enumerable."""
    return workload_size(base_class(query_class))


def choose_player(requested: str, query_class: QueryClass, epsilon0: Fraction, samples: int,
                  pure: bool) -> tuple[str, str]:
    """Resolve ``auto`` by comparing the selection-error bounds of docs/privacy.md.

    RSPM (Corollary 2.8 with W = N): ``m^2 (2 + 1/N) / (eps0 n)``; exponential
    mechanism (Theorem 4.5): ``2 (ln|Q_w| + 1) / (eps0 n)``.  Both are
    data-independent, so the choice costs no privacy.
    """
    cells = scored_cells(query_class)
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


def response_choices(settings: GameSettings, epsilon0: Fraction, rounds: int) -> tuple[Choice, Choice]:
    """The query player's response (round or union, docs/privacy.md §4.5 variant) and the burn-in rounds."""
    if settings.respond_to == "auto":
        union = epsilon0 >= as_epsilon(UNION_FROM_EPSILON_PER_ROUND)
        response = Choice("union" if union else "round",
                          f"per-round budget {float(epsilon0):.4g} is {'at least' if union else 'below'} "
                          f"{UNION_FROM_EPSILON_PER_ROUND}")
    else:
        response = Choice(settings.respond_to, "chosen by the caller")
    if settings.burn_in is None:
        fraction = ROUND_BURN_IN if response.value == "round" else 0.0
        why = (f"{ROUND_BURN_IN} of the rounds under the round response" if fraction
               else "none under the union response")
    else:
        fraction, why = settings.burn_in, f"burn_in={settings.burn_in} given by the caller"
    return response, Choice(math.floor(fraction * rounds), why)


def query_oracle_choices(name: str, inputs: MethodInputs, settings: GameSettings,
                         rounds: int) -> tuple[Choice, Choice, PRSMABudget | None]:
    """The query player's oracle, its mode (``MODE_MEANINGS``) and PRSMA's per-round budget; refuses what the
    budget or the relation does not allow (RSPM and PRSMA need a delta; PRSMA replace-one, §3.1)."""
    delta = inputs.delta
    if name == "rspm":
        if delta is None:
            raise InputError("query player 'rspm' needs delta > 0: its noise is capped to fit the solver's integer "
                             "range, which costs delta ~1e-30 per round (docs/privacy.md Corollary 2.4); pass e.g. "
                             "delta=1e-9, or use an explicit workload with the exponential player for pure DP")
        letter = "N" if settings.time_limit is not None else "E"
        oracle = Choice(*choose_oracle(settings.oracle, inputs.query_class, "query player"))
        return oracle, Choice(letter, MODE_MEANINGS[letter]), None
    if name not in PRSMA_PLAYERS:
        return (Choice("-", "no query oracle: the player scores every query of the explicit workload"),
                Choice("-", MODE_MEANINGS["-"]), None)
    if delta is None:
        raise InputError(f"query player {name!r} needs delta > 0 (PRSMA is (epsilon, delta)-DP)")
    if inputs.relation != Relation.REPLACE_ONE:
        raise InputError(f"query player {name!r} runs under replace-one neighbours (docs/privacy.md §3.1); "
                         "pass relation='replace-one'")
    exact = name == "prsma-exact"
    if settings.time_limit is not None or (exact and settings.work_limit is not None):
        raise InputError("PRSMA needs deterministic work limits, not wall-clock time limits (docs/privacy.md "
                         "§1.5, A-stateless), and its exact-oracle law needs no limit at all; pass work_limit "
                         "(prsma only) instead of time_limit")
    letter = "P, exact-oracle law" if exact else "P"
    oracle = Choice(*choose_oracle(settings.oracle, inputs.query_class, "query player"))
    return oracle, Choice(letter, MODE_MEANINGS[letter]), prsma_per_round(inputs.epsilon, delta, rounds)


def plan_game(inputs: MethodInputs, settings: GameSettings) -> GamePlan:
    """The game's choices from public inputs only; :meth:`GameMethod.plan` checks their budget."""
    qc, epsilon, delta = inputs.query_class, inputs.epsilon, inputs.delta
    (T, why_t), (N, why_n) = game_length_choices(epsilon, delta, qc, settings.rounds, settings.epsilon_per_round,
                                                 settings.samples_per_round)
    eps0 = per_round_epsilon(epsilon, delta, T) if delta is not None else epsilon / T
    response, burn = response_choices(settings, eps0, T)
    name, why_p = choose_player(settings.query_player, qc, eps0, N, pure=delta is None)
    query_oracle, mode, prsma_budget = query_oracle_choices(name, inputs, settings, T)
    data_oracle = Choice(*choose_oracle(settings.oracle, qc, "data player"))
    return GamePlan(inputs, settings, Choice(T, why_t), Choice(N, why_n), eps0, Choice(name, why_p), mode,
                    query_oracle, data_oracle, response, burn, ftpl_scale(T, settings.ftpl_theta), prsma_budget)


def planned_spends(plan: GamePlan) -> list[tuple[str, Fraction, Fraction, Fraction]]:
    """The ``(mechanism, epsilon, delta, clip)`` each round will record, computed from the plan alone.

    Mirrors what the query players spend: the workload players ``epsilon_0``
    (pure); RSPM ``epsilon_0`` with its representability clip, whose size
    follows the sensitivity ``2W`` of the round objective (``W = N``, or the
    union's ``t N`` in round ``t``); PRSMA its ``(eps*, delta*)``.
    """
    T, N, name = plan.rounds.value, plan.samples_per_round.value, plan.player.value
    if name in PRSMA_PLAYERS:
        return [("prsma", plan.prsma_budget.epsilon, plan.prsma_budget.delta, Fraction(0))] * T
    if name != "rspm":
        return [(name if name == "exponential" else "report-noisy-max", plan.epsilon0, Fraction(0), Fraction(0))] * T
    m = plan.inputs.query_class.separator().m
    limit = solver_integer_limit(plan.query_oracle.value)
    spends = []
    for t in range(1, T + 1):
        W = N * t if plan.response.value == "union" else N
        rows = difference_sensitivity(W, plan.inputs.relation, "game") * plan.inputs.contribution_bound  # §10.6
        lam = rspm_noise_rate(plan.epsilon0, m, rows)
        cap = default_noise_cap(plan.epsilon0, lam, m)
        if m * cap >= limit:
            raise InputError(f"round {t} of {T}: RSPM's noise cap B={cap} on m={m} coordinates does not fit the "
                             f"exact integer range {limit} of {plan.query_oracle.value.name!r} (docs/privacy.md "
                             "§2.7 R1); raise epsilon, use fewer rounds or respond_to='round'")
        spends.append(("rspm", plan.epsilon0, Fraction(0), round_up(clip_probability(lam, m, cap))))
    return spends


def check_budget(plan: GamePlan) -> None:
    """Replay the planned spends on a scratch ledger; refuse the run up front if any would be refused.

    The run's own ledger still checks every real spend; this only moves the
    refusal before the first private step.
    """
    inputs = plan.inputs
    scratch = Ledger(inputs.epsilon, inputs.delta or Fraction(0))
    spends = planned_spends(plan)
    quiet = logging.getLogger("synthdp.accounting.ledger")
    level = quiet.level
    quiet.setLevel(logging.WARNING)  # the scratch spends are not spends: keep them out of the log
    try:
        for t, (mechanism, eps, dlt, clip) in enumerate(spends, start=1):
            try:
                scratch.spend(mechanism, eps, dlt, inputs.relation, f"round {t}", clip=clip)
            except PrivacyError as exc:
                raise InputError(f"the planned run does not fit the budget: round {t} of {len(spends)} would be "
                                 f"refused ({exc}). Nothing was run; raise delta or epsilon, or use fewer "
                                 "rounds") from None
    finally:
        quiet.setLevel(level)


def check_prsma_rounds(plan: GamePlan, n: int) -> None:
    """Refuse a round budget too small for PRSMA's pieces (``K > n``, docs/privacy.md §3.2), before anything runs.

    Under replace-one (the only relation PRSMA runs under) ``n`` is public.
    The message names the most rounds that fit, found by a data-independent scan.
    """
    epsilon, delta, rounds = plan.inputs.epsilon, plan.inputs.delta, plan.rounds.value
    samples, m = plan.samples_per_round.value, plan.inputs.query_class.separator().m

    def fits(T: int) -> bool:
        budget = prsma_per_round(epsilon, delta, T)
        try:
            prsma_parameters(budget.epsilon, budget.delta, n, m, samples)
        except InputError:
            return False
        return True

    if fits(rounds):
        return
    most = next((T for T in range(rounds - 1, 0, -1) if fits(T)), 0)
    hint = f"pass rounds={most} or fewer" if most else "no number of rounds fits: raise epsilon or delta"
    raise InputError(f"PRSMA over {rounds} rounds at (epsilon, delta)=({float(epsilon):g}, {float(delta):.3g}) "
                     f"needs more than n={n} records per round (K > n, docs/privacy.md §3.2); {hint}")


def query_player(plan: GamePlan, ledger: Ledger, rng):
    """The plan's private query player, spending through ``ledger`` (docs/privacy.md §4.1 step 2)."""
    inputs, settings, name = plan.inputs, plan.settings, plan.player.value
    qc, oracle = inputs.query_class, plan.query_oracle.value
    if name == "rspm":
        return RSPMPlayer(qc, oracle, plan.epsilon0, rng, ledger, inputs.relation, plan.mode.value,
                          Limits(time_limit=settings.time_limit) if settings.time_limit else None)
    if name in PRSMA_PLAYERS:
        exact = name == "prsma-exact"
        limits = None if exact else Limits(work_limit=settings.work_limit or oracle.default_work_limit)
        return PRSMAPlayer(qc, oracle, plan.prsma_budget.epsilon, plan.prsma_budget.delta, rng, ledger, limits,
                           settings.prsma_max_calls, settings.insist, exact_oracle=exact, name=name)
    return WorkloadPlayer(qc, plan.epsilon0, rng, ledger, inputs.relation, mechanism=name, name=name)


def accuracy_bound(plan: GamePlan) -> dict:
    """Theorem 4.4's a-priori bound for the plan, with what it does NOT cover (public inputs only)."""
    qc, settings, name = plan.inputs.query_class, plan.settings, plan.player.value
    bound = a_priori_bound(m=qc.separator().m, d=len(qc.dual_separator()),
                           log_q=math.log(base_class(qc).size() * 2), epsilon0=plan.epsilon0,
                           rounds=plan.rounds.value, samples=plan.samples_per_round.value,
                           resolution=settings.resolution, scale=plan.ftpl_scale,
                           selection_term="rspm" if name in ("rspm", *PRSMA_PLAYERS) else "exponential")
    if plan.response.value == "union":
        bound["form"] += "; NOT covered: the query player answered the running union (docs/privacy.md §4.5 variant)"
    if plan.burn_in_rounds.value:
        bound["form"] += "; NOT covered: the first rounds' plays were dropped (burn-in)"
    if settings.ftpl_noise != "two-sided":
        bound["form"] += f"; NOT covered: {settings.ftpl_noise} FTPL noise (Theorem 4.3 assumes two-sided)"
    if plan.inputs.contribution_bound > 1:
        bound["form"] += (f"; NOT covered: units of up to {plan.inputs.contribution_bound} rows (every noise scale is "
                          "that many times larger, docs/privacy.md §10.6)")
    if name in PRSMA_PLAYERS:
        bound = {"form": "PRSMA: Theorem 3.5's bound applies and is vacuous unless n >> m^4 Lambda K; not computed"}
    return bound


def pure_bound(inputs: MethodInputs, settings: GameSettings, epsilon: Fraction) -> ErrorBound | None:
    """Theorem 4.4's terms ``A/n + B`` for the game the plan would run under pure DP (exponential player, §10.2);
    None when the class cannot be enumerated (no exponential player)."""
    qc = inputs.query_class
    size = scored_cells(qc)
    if size is None:
        return None
    (T, _), (N, _) = game_length_choices(epsilon, None, qc, settings.rounds, settings.epsilon_per_round,
                                         settings.samples_per_round)
    game = a_priori_bound(m=qc.separator().m, d=len(qc.dual_separator()), log_q=math.log(2 * size),
                          epsilon0=epsilon / T, rounds=T, samples=N, resolution=settings.resolution,
                          scale=ftpl_scale(T, settings.ftpl_theta), selection_term="exponential")
    return ErrorBound(game["A"], game["B"], f"the game: <= {game['A']:.4g}/n + {game['B']:.3g} (docs/privacy.md "
                                            "§10.2, Theorem 4.4)")


class GameMethod(Method):
    """The synthetic-data game (docs/privacy.md §4): any complement-closed class, pure DP too."""

    name = "game"
    title = "game"
    options = GameSettings.names()
    release_defaults = dict(query_player="-", query_player_reason="", oracle="-", data_oracle="-", mode="-",
                            rounds=None, samples_per_round=None, resolution=None, ftpl_scale=None, respond_to=None,
                            burn_in_rounds=None, ftpl_noise=None, epsilon_per_round="-", accuracy_bound={})

    def suitability(self, inputs: MethodInputs) -> Suitability:
        """Serves every class (the plan refuses one not closed under complement); under pure DP it states the
        bound ``auto`` compares (§10.2), at the run's whole epsilon so the choice is the same before and after
        the private steps that come first."""
        if not inputs.pure:
            return Suitability(True, "the synthetic-data game serves any complement-closed class")
        settings = settings_of(GameSettings, inputs.options)
        return Suitability(True, "pure DP", pure_bound(inputs, settings, inputs.budget_epsilon))

    def plan(self, inputs: MethodInputs) -> GamePlan:
        """The game's choices (:class:`GamePlan`); its planned spends checked (:func:`check_budget`)."""
        if not inputs.query_class.complement_closed:
            raise InputError(f"the game needs a complement-closed class; got {inputs.query_class.name}")
        plan = plan_game(inputs, settings_of(GameSettings, inputs.options))
        check_budget(plan)
        return plan

    def run(self, plan: GamePlan, real, ledger, rng, zcdp=None) -> MethodOutput:
        """The game with the plan's players, spending through ``ledger`` (never a zCDP filter)."""
        if zcdp is not None:
            raise InputError("the game spends through the (epsilon, delta) ledger, not a zCDP filter")
        inputs, settings, qc = plan.inputs, plan.settings, plan.inputs.query_class
        T, N, name = plan.rounds.value, plan.samples_per_round.value, plan.player.value
        player = query_player(plan, ledger, rng)  # before the data player's generator: the seeded streams' order
        d_oracle = plan.data_oracle.value
        nprng = rng.numpy_generator()
        data_player = FTPLDataPlayer(qc, d_oracle, resolution=settings.resolution, scale=plan.ftpl_scale, rng=nprng,
                                     limits=Limits(time_limit=settings.time_limit, work_limit=settings.data_work_limit
                                                   or d_oracle.default_data_work_limit),
                                     stats=OracleStats(), noise=settings.ftpl_noise)
        log.info("game: %d rounds x %d samples, player %s, eps0=%s", T, N, name, plan.epsilon0)
        result = play_game(real, rounds=T, samples_per_round=N, query_player=player, data_player=data_player,
                           respond_to=plan.response.value, burn_in=plan.burn_in_rounds.value,
                           progress=inputs.progress)
        stats = {f"data/{d_oracle.name}": vars(result.data_stats)}
        stats.update({f"query/{k}": vars(v) for k, v in result.query_stats.items()})
        query_oracle = plan.query_oracle.value
        release = dict(
            query_player=name, query_player_reason=plan.player.reason, data_oracle=d_oracle.name,
            oracle=query_oracle if isinstance(query_oracle, str) else query_oracle.name, mode=plan.mode.value,
            rounds=T, samples_per_round=N, resolution=settings.resolution, ftpl_scale=plan.ftpl_scale,
            respond_to=plan.response.value, burn_in_rounds=plan.burn_in_rounds.value, ftpl_noise=settings.ftpl_noise,
            epsilon_per_round=next((str(e.epsilon) for e in ledger.events if not e.ahead), "-"),
            accuracy_bound=accuracy_bound(plan))
        selected = [qc.describe(r.query) if r.query is not None else f"(none: {r.note})" for r in result.rounds]
        return MethodOutput(result.codes, ledger, nprng, result.conditional, selected, release,
                            dict(oracle_stats=stats, round_seconds=[r.seconds for r in result.rounds]), [])

    def choices(self, plan: GamePlan) -> dict[str, dict]:
        return {name: getattr(plan, name).to_dict() for name in (
            "rounds", "samples_per_round", "player", "mode", "query_oracle", "data_oracle", "response",
            "burn_in_rounds")}

    def rows(self, plan: GamePlan) -> Choice:
        T, N, burn = plan.rounds.value, plan.samples_per_round.value, plan.burn_in_rounds.value
        return Choice((T - burn) * N, f"the released plays of the game, ({T} - {burn}) rounds x {N} samples, not "
                                      "the input's size; pass n_rows for another size")

    def summary(self, release) -> str:
        r = release
        oracle = (f"query oracle {r.oracle}, mode {r.mode}" if r.oracle != "-"
                  else "no query oracle (the player scores every query of the workload)")
        return (f"game: {r.rounds} rounds x {r.samples_per_round} samples (first {r.burn_in_rounds} rounds not "
                f"released), query player {r.query_player} ({r.query_player_reason}), {oracle}, responds to "
                f"{r.respond_to}, data oracle {r.data_oracle}")

    def check_public_n(self, plan: GamePlan, n: int) -> None:
        """PRSMA's pieces must fit the public ``n`` (``K <= n``, docs/privacy.md §3.2)."""
        if plan.player.value in PRSMA_PLAYERS:
            check_prsma_rounds(plan, n)
