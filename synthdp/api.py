"""Public entry points: :func:`generate_synthetic` and the scikit-learn style :class:`Synthesizer`."""

from __future__ import annotations

import logging
import math
import warnings
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from synthdp.oracles import Limits, get_oracle
from synthdp.oracles.base import Oracle
from synthdp.queries.base import QueryClass
from synthdp.queries.complement import base_class
from synthdp.core.errors import InputError
from synthdp.methods.game import FTPL_NOISES, RESPONSES
from synthdp.report import Report

log = logging.getLogger(__name__)

QUERY_PLAYERS = ("auto", "rspm", "prsma", "prsma-exact", "exponential", "noisy-max")
#: The PRSMA query players: the full algorithm and its exact-oracle law (one oracle call per round).
PRSMA_PLAYERS = ("prsma", "prsma-exact")
RELATIONS = ("add-remove", "replace-one")
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
DEFAULT_THETA = 0.3
DEFAULT_RESOLUTION = 100
#: ``respond_to="auto"``: the union response once each round's budget is at least this (sharp
#: selections), else the round response; ``burn_in=None``: ``ROUND_BURN_IN`` for the round response
#: and none for the union response (which corrects the early plays itself).
UNION_FROM_EPSILON_PER_ROUND = 0.006
ROUND_BURN_IN = 0.25
DEFAULT_NOISE = "one-sided"
#: Record universes up to this size are enumerated by the data player.
SMALL_UNIVERSE = 2**17
#: Largest number of workload cells the exponential player scores each round.
MAX_SCORED_CELLS = 5_000_000


@dataclass
class SyntheticResult:
    """A private synthetic table and the report of how it was made."""

    data: pd.DataFrame
    report: Report

    def to_csv(self, path: str | Path) -> None:
        """Write the table to ``path`` atomically (temporary file, then rename)."""
        from synthdp.core.io import write_csv

        write_csv(self.data, path)


def _check_parameters(epsilon, delta, rounds, samples_per_round, query_player, relation, n_rows, time_limit,
                      respond_to, epsilon_per_round, burn_in, ftpl_noise) -> None:
    """Validate every parameter that does not need the data, before the data are touched."""
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float, Fraction)) or not math.isfinite(epsilon) or epsilon <= 0:
        raise InputError(f"epsilon must be a finite number > 0, got {epsilon!r}")
    if delta is not None and (not isinstance(delta, (int, float, Fraction)) or not 0 < delta < 1):
        raise InputError(f"delta must be in (0, 1) (and at most 1/n), or None for pure DP; got {delta!r}")
    if rounds is not None and (not isinstance(rounds, int) or rounds < 1):
        raise InputError(f"rounds must be a positive integer, got {rounds!r}")
    if epsilon_per_round is not None and rounds is not None:
        raise InputError("give rounds or epsilon_per_round, not both: each fixes the other through the budget")
    if epsilon_per_round is not None and (not isinstance(epsilon_per_round, (int, float, Fraction))
                                          or not 0 < epsilon_per_round <= epsilon):
        raise InputError(f"epsilon_per_round must be in (0, epsilon], got {epsilon_per_round!r}")
    if burn_in is not None and (isinstance(burn_in, bool) or not isinstance(burn_in, (int, float))
                                or not 0 <= burn_in < 1):
        raise InputError(f"burn_in must be a fraction in [0, 1) or None, got {burn_in!r}")
    if ftpl_noise not in FTPL_NOISES:
        raise InputError(f"ftpl_noise must be one of {list(FTPL_NOISES)}, got {ftpl_noise!r}")
    if samples_per_round is not None and (isinstance(samples_per_round, bool) or not isinstance(samples_per_round, int)
                                          or samples_per_round < 1):
        raise InputError(f"samples_per_round must be a positive integer or None, got {samples_per_round!r}")
    if query_player not in QUERY_PLAYERS:
        raise InputError(f"unknown query player {query_player!r}; choose one of {list(QUERY_PLAYERS)}")
    if relation not in RELATIONS:
        raise InputError(f"unknown neighbouring relation {relation!r}; choose one of {list(RELATIONS)}")
    if n_rows is not None and (not isinstance(n_rows, int) or n_rows < 1):
        raise InputError(f"n_rows must be a positive integer, got {n_rows!r}")
    if respond_to != "auto" and respond_to not in RESPONSES:
        raise InputError(f"respond_to must be 'auto' or one of {list(RESPONSES)}, got {respond_to!r}")
    if time_limit is not None and not (time_limit > 0):
        raise InputError(f"time_limit must be > 0 seconds, got {time_limit!r}")


def resolve_schema(df: pd.DataFrame, schema, collected: list[str], **options):
    """The given schema (object or file), or one built from ``df`` with the public ``options``.

    Warnings raised while building (e.g. categories read off the private
    data) are re-emitted and collected for the report.
    """
    from synthdp.core.schema import Schema

    if schema is not None:
        return schema if isinstance(schema, Schema) else Schema.load(schema)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        built = Schema.from_dataframe(df, **options)
    for w in caught:
        collected.append(str(w.message))
        warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
    return built


def default_epsilon_per_round(query_class: QueryClass) -> float:
    """The per-round budget floor that fixes the default number of rounds (docs/benchmarks.md).

    ``WIDE_EPSILON_PER_ROUND`` for classes of conjunctions of width at least
    ``WIDE_WIDTH``, else ``DEFAULT_EPSILON_PER_ROUND``.  It depends only on the
    (public) class.
    """
    width = getattr(base_class(query_class), "max_width", None)
    return WIDE_EPSILON_PER_ROUND if width is not None and width >= WIDE_WIDTH else DEFAULT_EPSILON_PER_ROUND


def _choose_oracle(name: str, query_class: QueryClass, role: str) -> Oracle:
    """``auto``: the native exact search where it applies, else CP-SAT.

    The data player on a small record universe (at most ``SMALL_UNIVERSE``
    records, e.g. NLTCS) enumerates it instead: exact and fastest there.
    """
    from synthdp.oracles.brute import universe_size

    base = base_class(query_class)
    if name == "auto" and role == "data player" and universe_size(base) <= SMALL_UNIVERSE:
        return get_oracle("brute")
    if name == "auto":
        exact = get_oracle("exact")
        return exact if exact.supports(base) else get_oracle("cpsat")
    oracle = get_oracle(name)
    if not oracle.supports(base):
        raise InputError(f"oracle {name!r} cannot encode the class {base.name} for the {role}; "
                         f"use --oracle auto or one of cpsat, cbc")
    return oracle


def _scored_cells(query_class: QueryClass) -> int | None:
    """Number of base queries an exponential player would score, or None if not enumerable."""
    from synthdp.methods.players import workload_size

    return workload_size(base_class(query_class))


def _choose_player(requested: str, query_class: QueryClass, epsilon0: Fraction, samples: int,
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


def _check_prsma_rounds(epsilon: Fraction, delta: Fraction, rounds: int, n: int, query_class: QueryClass,
                        samples: int) -> None:
    """Refuse, before anything runs, a round budget too small for PRSMA's pieces (``K > n``, docs/privacy.md §3.2).

    Under replace-one (the only relation PRSMA runs under) ``n`` is public.
    The message names the most rounds that fit, found by a data-independent scan.
    """
    from synthdp.mechanisms.accounting import prsma_per_round
    from synthdp.mechanisms.prsma import prsma_parameters

    m = query_class.separator().m

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


def game_length(epsilon: Fraction, delta: Fraction | None, query_class: QueryClass, *, rounds: int | None = None,
                epsilon_per_round: float | None = None, samples_per_round: int | None = None) -> tuple[int, int]:
    """The game's rounds ``T`` and samples per round ``N`` (:func:`generate_synthetic` documents the rule).

    Both are inputs of GAME (docs/privacy.md §4.1) and depend only on public parameters (the
    budget and the query class), so choosing them spends nothing; ``N`` stays within the
    recommended range (docs/privacy.md §4.5).
    """
    from synthdp.mechanisms.accounting import rounds_for
    from synthdp.mechanisms.noise import to_fraction_down

    capped = False
    if rounds is not None:
        T = rounds
    elif epsilon_per_round is not None:
        T = rounds_for(epsilon, delta or Fraction(0), to_fraction_down(epsilon_per_round))
    else:
        T = rounds_for(epsilon, delta or Fraction(0), to_fraction_down(default_epsilon_per_round(query_class)))
        capped, T = T > DEFAULT_MAX_ROUNDS, min(T, DEFAULT_MAX_ROUNDS)
    return T, samples_per_round or (CAPPED_SAMPLES if capped else DEFAULT_SAMPLES)


def generate_synthetic(
    df: pd.DataFrame,
    query_class: str | QueryClass = "marginals:3",
    *,
    epsilon: float,
    delta: float | None = None,
    rounds: int | None = None,
    epsilon_per_round: float | None = None,
    burn_in: float | None = None,
    query_player: str = "auto",
    oracle: str = "auto",
    samples_per_round: int | None = None,
    n_rows: int | None = None,
    schema: Any = None,
    random_state: int | None = None,
    progress: bool = True,
    time_limit: float | None = None,
    relation: str = "add-remove",
    categorical: list[str] | None = None,
    bounds: dict[str, tuple[float, float]] | None = None,
    bins: dict[str, int] | None = None,
    categories: dict[str, list] | None = None,
    nullable: list[str] | None = None,
    clip: bool = False,
    max_categories: int = 100,
    resolution: int = DEFAULT_RESOLUTION,
    ftpl_theta: float = DEFAULT_THETA,
    ftpl_noise: str = DEFAULT_NOISE,
    respond_to: str = "auto",
    numeric: str = "label",
    prsma_max_calls: int = 100_000,
    work_limit: float | None = None,
    data_work_limit: float | None = None,
    insist: bool = False,
) -> SyntheticResult:
    """Release a differentially private synthetic version of ``df``.

    Runs the synthetic-data game of docs/privacy.md (§4): ``rounds``
    rounds in which a private query player picks the query of
    ``query_class`` on which the current synthetic samples are most wrong and
    a follow-the-perturbed-leader data player answers with
    ``samples_per_round`` records (default ``DEFAULT_SAMPLES``, or
    ``CAPPED_SAMPLES`` when the round cap applies).  The total budget ``(epsilon, delta)`` is
    split over rounds by the accountant (zCDP or basic composition,
    whichever is tighter, docs/privacy.md §4.2); ``delta=None`` means pure DP with
    basic composition.

    Parameters mirror the CLI; see ``docs/privacy.md`` for the guarantees.
    The number of rounds is ``rounds`` if given; otherwise the most rounds
    whose per-round budget stays at least ``epsilon_per_round`` (default
    :func:`default_epsilon_per_round`, then capped at ``DEFAULT_MAX_ROUNDS``):
    a small budget buys few, sharp selections rather than many blurred ones.
    ``respond_to="round"`` is the game of §4.1 (the query player answers this
    round's samples); ``"union"`` makes it answer the running union of the
    plays (MWEM style, docs/privacy.md §4.5 variant): same privacy, no accuracy
    theorem; ``"auto"`` takes the union once each round's budget is at least
    ``UNION_FROM_EPSILON_PER_ROUND``.  ``burn_in`` is the fraction of first
    rounds whose plays are not released (post-processing, free): the early
    plays answer few queries; ``None`` means ``ROUND_BURN_IN`` for the round
    response and 0 for the union response.  ``ftpl_noise`` is the data
    player's perturbation (:class:`synthdp.methods.game.FTPLDataPlayer`).
    ``data_work_limit`` bounds each data-player call (in the backend's work
    unit; default :attr:`oracles.base.Oracle.default_data_work_limit`): past it
    the best record found is played and counted as unproven.
    ``time_limit`` (seconds per oracle call) switches RSPM to Mode N, whose
    privacy is *conditional on no solver failure*: for experiments only.
    Numeric columns come back as bin labels (``numeric="label"``) or as values
    drawn uniformly within their bin (``numeric="uniform"``).  A resample to
    ``n_rows`` is post-processing; the true size is never used.
    The output has ``(rounds - floor(burn_in * rounds)) * samples_per_round``
    rows unless ``n_rows`` asks for a resample of them.
    """
    import time

    from synthdp.queries.spec import parse_query_class
    from synthdp.mechanisms.accounting import Ledger, per_round_epsilon, prsma_per_round
    from synthdp.core.data import AggregatedData
    from synthdp.core.encoding import Encoder
    from synthdp.methods.game import FTPLDataPlayer, OracleStats, a_priori_bound, ftpl_scale, play_game
    from synthdp.mechanisms.noise import to_fraction_down
    from synthdp.methods.players import PRSMAPlayer, RSPMPlayer, WorkloadPlayer
    from synthdp.mechanisms.randomness import PrivateRandom

    start = time.perf_counter()
    _check_parameters(epsilon, delta, rounds, samples_per_round, query_player, relation, n_rows, time_limit,
                      respond_to, epsilon_per_round, burn_in, ftpl_noise)
    if not isinstance(df, pd.DataFrame):
        raise InputError(f"df must be a pandas DataFrame, got {type(df).__name__}")
    if df.empty:
        raise InputError("the input table is empty: nothing to synthesise")
    collected: list[str] = []
    schema = resolve_schema(df, schema, collected, categorical=categorical, bounds=bounds, bins=bins,
                             categories=categories, nullable=nullable, clip=clip, max_categories=max_categories)
    encoder = Encoder(schema)
    real: AggregatedData = encoder.to_aggregated(df)
    # Only under replace-one is n public (docs/privacy.md §1.3).  Under add/remove n is private (§4.1:
    # "it is never released"): neither the abort nor a message may depend on it.
    if relation == "replace-one" and delta is not None and delta > 1 / real.n:
        raise InputError(f"delta={delta} is larger than 1/n = {1 / real.n:.3g}; choose delta <= 1/n "
                         "(1/n^2 is customary)")
    qc = parse_query_class(query_class, schema.domain)
    if not qc.complement_closed:
        raise InputError(f"the game needs a complement-closed class; got {qc.name}")

    eps = to_fraction_down(float(epsilon))
    dlt = None if delta is None else Fraction(delta).limit_denominator(10**18)
    if dlt is not None and dlt > Fraction(delta):
        dlt = Fraction(math.floor(delta * 10**18), 10**18)
    T, N = game_length(eps, dlt, qc, rounds=rounds, epsilon_per_round=epsilon_per_round,
                       samples_per_round=samples_per_round)
    ledger = Ledger(eps, dlt or Fraction(0))
    rng = PrivateRandom(random_state)
    eps0 = per_round_epsilon(eps, dlt, T) if dlt is not None else eps / T
    if respond_to == "auto":
        respond_to = "union" if eps0 >= to_fraction_down(UNION_FROM_EPSILON_PER_ROUND) else "round"
    if burn_in is None:
        burn_in = ROUND_BURN_IN if respond_to == "round" else 0.0
    player_name, reason = _choose_player(query_player, qc, eps0, N, pure=dlt is None)

    mode = "-"
    query_oracle_name = "-"
    if player_name == "rspm" and dlt is None:
        raise InputError("query player 'rspm' needs delta > 0: its noise is capped to fit the solver's integer "
                         "range, which costs delta ~1e-30 per round (docs/privacy.md, Corollary 2.4); pass e.g. "
                         "delta=1e-9, or use an explicit workload with the exponential player for pure DP")
    if player_name == "rspm":
        q_oracle = _choose_oracle(oracle, qc, "query player")
        query_oracle_name = q_oracle.name
        mode = "N" if time_limit is not None else "E"
        player = RSPMPlayer(qc, q_oracle, eps0, rng, ledger, relation, mode,
                            Limits(time_limit=time_limit) if time_limit else None)
    elif player_name in PRSMA_PLAYERS:
        if dlt is None:
            raise InputError(f"query player {player_name!r} needs delta > 0 (PRSMA is (epsilon, delta)-DP)")
        if relation != "replace-one":
            raise InputError(f"query player {player_name!r} runs under replace-one neighbours (docs/privacy.md §3.1); "
                             "pass relation='replace-one'")
        q_oracle = _choose_oracle(oracle, qc, "query player")
        exact = player_name == "prsma-exact"
        query_oracle_name, mode = q_oracle.name, "P, exact-oracle law" if exact else "P"
        eps_star, delta_star = prsma_per_round(eps, dlt, T)
        _check_prsma_rounds(eps, dlt, T, real.n, qc, N)
        if time_limit is not None or (exact and work_limit is not None):
            raise InputError("PRSMA needs deterministic work limits, not wall-clock time limits (docs/privacy.md "
                             "§1.5, A-stateless), and its exact-oracle law needs no limit at all; pass work_limit "
                             "(prsma only) instead of time_limit")
        limits = None if exact else Limits(work_limit=work_limit or q_oracle.default_work_limit)
        player = PRSMAPlayer(qc, q_oracle, eps_star, delta_star, rng, ledger, limits, prsma_max_calls, insist,
                             exact_oracle=exact, name=player_name)
    else:
        player = WorkloadPlayer(qc, eps0, rng, ledger, relation, mechanism=player_name, name=player_name)

    d_oracle = _choose_oracle(oracle, qc, "data player")
    data_stats = OracleStats()
    b = ftpl_scale(T, ftpl_theta)
    nprng = rng.numpy_generator()
    data_player = FTPLDataPlayer(qc, d_oracle, resolution=resolution, scale=b, rng=nprng,
                                 limits=Limits(time_limit=time_limit,
                                               work_limit=data_work_limit or d_oracle.default_data_work_limit),
                                 stats=data_stats, noise=ftpl_noise)
    log.info("game: %d rounds x %d samples, player %s, eps0=%s", T, N, player_name, eps0)
    result = play_game(real, rounds=T, samples_per_round=N, query_player=player, data_player=data_player,
                       respond_to=respond_to, burn_in=math.floor(burn_in * T), progress=progress)

    codes = result.codes
    if n_rows is not None:
        codes = codes[nprng.integers(0, len(codes), n_rows)]
    data = encoder.decode(codes, numeric=numeric, rng=nprng)

    spent = ledger.total()
    log_q = math.log(base_class(qc).size() * 2)
    bound = a_priori_bound(m=qc.separator().m, d=len(qc.dual_separator()), log_q=log_q, epsilon0=eps0, rounds=T,
                           samples=N, resolution=resolution, scale=b,
                           selection_term="rspm" if player_name in ("rspm", *PRSMA_PLAYERS) else "exponential")
    if respond_to == "union":
        bound["form"] += "; NOT covered: the query player answered the running union (docs/privacy.md §4.5 variant)"
    if math.floor(burn_in * T):
        bound["form"] += "; NOT covered: the first rounds' plays were dropped (burn-in)"
    if ftpl_noise != "two-sided":
        bound["form"] += f"; NOT covered: {ftpl_noise} FTPL noise (Theorem 4.3 assumes two-sided)"
    if player_name in PRSMA_PLAYERS:
        bound = {"form": "PRSMA: Theorem 3.5's bound applies and is vacuous unless n >> m^4 Lambda K; not computed"}
    if random_state is not None:
        collected.append("seeded run (random_state given): the noise comes from a reproducible, non-cryptographic "
                         "stream; for experiments only, not for release (omit random_state to release)")
    stats = {f"data/{d_oracle.name}": vars(result.data_stats)}
    stats.update({f"query/{k}": vars(v) for k, v in result.query_stats.items()})
    report = Report(
        epsilon_budget=float(epsilon), delta_budget=float(delta or 0.0),
        epsilon_spent=float(spent.epsilon), delta_spent=float(spent.delta), composition=spent.method,
        relation=relation, query_class=qc.name, query_player=player_name, query_player_reason=reason,
        oracle=query_oracle_name, data_oracle=d_oracle.name, mode=mode, conditional=result.conditional,
        rounds=T, samples_per_round=N, resolution=resolution, ftpl_scale=b, respond_to=respond_to,
        burn_in_rounds=math.floor(burn_in * T), ftpl_noise=ftpl_noise, epsilon_per_round=str(ledger.events[0].epsilon) if ledger.events else "-",
        rows_written=len(data), seconds=time.perf_counter() - start, seeded=random_state is not None,
        ledger=[e.to_dict() for e in ledger.events], oracle_stats=stats,
        selected_queries=[qc.describe(r.query) if r.query is not None else f"(none: {r.note})" for r in result.rounds],
        accuracy_bound=bound, warnings=collected,
    )
    return SyntheticResult(data, report)


class Synthesizer:
    """scikit-learn style front end: ``Synthesizer(epsilon=1).fit(df).sample(1000)``.

    ``fit`` runs :func:`generate_synthetic` once (spending the budget);
    ``sample`` only resamples the released rows, which is post-processing
    and costs no privacy.
    """

    def __init__(self, query_class: str | QueryClass = "marginals:3", *, epsilon: float, delta: float | None = None,
                 random_state: int | None = None, **options: Any):
        self.query_class = query_class
        self.epsilon = epsilon
        self.delta = delta
        self.random_state = random_state
        self.options = options

    def fit(self, df: pd.DataFrame) -> "Synthesizer":
        self.result_ = generate_synthetic(df, self.query_class, epsilon=self.epsilon, delta=self.delta,
                                          random_state=self.random_state, **self.options)
        self.report_ = self.result_.report
        return self

    def sample(self, n: int | None = None, random_state: int | None = None) -> pd.DataFrame:
        """``n`` rows drawn with replacement from the released table (all of it when ``n`` is None)."""
        if not hasattr(self, "result_"):
            raise InputError("call fit(df) before sample()")
        data = self.result_.data
        if n is None:
            return data.copy()
        idx = np.random.default_rng(random_state).integers(0, len(data), n)
        return data.iloc[idx].reset_index(drop=True)
