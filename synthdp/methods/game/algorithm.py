"""The synthetic-data game (docs/privacy.md §4).

Each round the **data player** plays follow-the-perturbed-leader over
records (docs/privacy.md §4.3): ``N`` fresh samples, each the exact maximiser of the
past queries' rewards plus integer noise on the dual separator coordinates.
The **query player** then privately picks the query on which those ``N``
samples are most wrong (docs/privacy.md §4.1 step 2, or a baseline of §4.6).
The synthetic dataset is the union of the data player's plays; the queries
are post-processing of private selections, so the game's privacy is the
composition of its query-player rounds (Theorem 4.1).
"""

from __future__ import annotations

import logging
import math
import time
from collections import Counter
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Protocol

import numpy as np

from synthdp.oracles.base import Limits, Oracle, OracleResult
from synthdp.queries.base import QueryClass
from synthdp.core.data import AggregatedData
from synthdp.core.parameters import RESPONSES, check
from synthdp.core.progress import RoundProgress

log = logging.getLogger(__name__)


@dataclass
class OracleStats:
    """Calls, failures and time of one backend in one role."""

    calls: int = 0
    failures: int = 0
    total_time: float = 0.0
    max_time: float = 0.0

    def add(self, result: OracleResult) -> None:
        self.calls += 1
        self.failures += int(result.failed)
        self.total_time += result.wall_time
        self.max_time = max(self.max_time, result.wall_time)


@dataclass
class Selection:
    """A query player's answer for one round (``query`` is None when nothing was selected)."""

    query: object
    conditional: bool = False
    oracle_results: list[OracleResult] = field(default_factory=list)
    note: str = ""


class QueryPlayer(Protocol):
    """Private side of the game: one selection per round, spending its own budget."""

    name: str

    def select(self, real: AggregatedData, synthetic: AggregatedData, round_index: int) -> Selection: ...


def discrete_laplace_float(rng: np.random.Generator, scale: float, size: int) -> np.ndarray:
    """Integer noise with ``P(k) ~ exp(-|k| / scale)``: difference of two geometrics.

    Only for the data player's FTPL perturbation, which no privacy proof
    uses (docs/privacy.md §2.6, "Which randomness is privacy-critical").
    """
    p = -math.expm1(-1.0 / scale)
    return rng.geometric(p, size) - rng.geometric(p, size)


def penalty_noise(rng: np.random.Generator, scale: float, size: int) -> np.ndarray:
    """Non-positive integer noise ``-G`` with ``P(G = g) ~ exp(-g / scale)``, ``g >= 0`` (FEM's perturbation).

    Not privacy-critical (data player only), like :func:`discrete_laplace_float`.
    """
    p = -math.expm1(-1.0 / scale)
    return 1 - rng.geometric(p, size)


#: FTPL perturbations: the two-sided discrete Laplace of docs/privacy.md §4.3 or a one-sided penalty.
FTPL_NOISES = {"two-sided": discrete_laplace_float, "one-sided": penalty_noise}


class FTPLDataPlayer:
    """Follow-the-perturbed-leader over records (docs/privacy.md §4.3).

    ``maximise sum_{s<t} V q^s(x) + sum_j xi_j x_j`` with ``xi_j`` integer
    noise of scale ``b V`` on the dual separator coordinates.  Its oracle
    need not be certifiable; unproven answers are counted, not rejected.

    ``noise="two-sided"`` is the ``DLap`` perturbation of docs/privacy.md §4.3, for which
    Theorem 4.3 bounds the regret.  ``noise="one-sided"`` charges every
    coordinate a non-negative penalty instead (as FEM does): with two-sided
    noise a value must beat the *largest* noise among its attribute's other
    values, which grows like ``b V ln(size)``, so on large domains a query
    needs many selections before the samples follow it; with penalties the
    competitors' best is near 0 whatever the size.  On a binary attribute
    both make the difference between the two values symmetric, of similar
    spread.  No regret theorem is claimed for the one-sided noise.
    """

    def __init__(self, query_class: QueryClass, oracle: Oracle, *, resolution: int, scale: float,
                 rng: np.random.Generator, limits: Limits, stats: OracleStats, noise: str = "two-sided"):
        check("ftpl_noise", noise)
        self.query_class = query_class
        self.oracle = oracle
        self.resolution = resolution
        self.scale = scale
        self.rng = rng
        self.limits = limits
        self.stats = stats
        self.noise = FTPL_NOISES[noise]
        self.n_dual = len(query_class.dual_separator())

    def play(self, history: Counter, n: int) -> np.ndarray:
        """``n`` independent FTPL samples given the queries selected so far."""
        queries = list(history)
        weights = np.array([self.resolution * history[q] for q in queries], dtype=np.int64)
        rho = self.noise(self.rng, self.scale * self.resolution, n * self.n_dual).reshape(n, self.n_dual)
        rows = []
        for result in self.oracle.solve_data_many(self.query_class, queries, weights, rho, self.limits):
            self.stats.add(result)
            if result.solution is None:
                raise RuntimeError(f"data-player oracle {self.oracle.name} returned no record: {result.message}")
            rows.append(result.solution)
        return np.asarray(rows, dtype=np.int64)


@dataclass
class RoundLog:
    """What one round did (for the report)."""

    round: int
    query: object
    conditional: bool
    seconds: float
    note: str = ""


@dataclass
class GameResult:
    """Synthetic records (codes), per-round log and oracle statistics."""

    codes: np.ndarray
    rounds: list[RoundLog]
    data_stats: OracleStats
    query_stats: dict[str, OracleStats]
    seconds: float

    @property
    def conditional(self) -> bool:
        return any(r.conditional for r in self.rounds)



def play_game(real: AggregatedData, *, rounds: int, samples_per_round: int, query_player: QueryPlayer,
              data_player: FTPLDataPlayer, respond_to: str = "round", burn_in: int = 0,
              progress: bool = True) -> GameResult:
    """Run GAME(D) of docs/privacy.md §4.1 for ``rounds`` rounds; returns the union of the plays after ``burn_in``.

    Dropping the first ``burn_in`` rounds' plays from the output is
    post-processing (FEM does the same): privacy is unchanged, and the early
    plays, which answer only the first few queries, no longer dilute the
    release.  Theorem 4.4 covers only ``burn_in=0``.

    ``respond_to="round"`` is the game of docs/privacy.md §4.1: the query player
    answers this round's ``N`` samples.  ``respond_to="union"`` is the
    MWEM/FEM-style variant of docs/privacy.md §4.5: it answers the running union of
    all plays so far.  Privacy is the same (the round objective is Lemma
    2.0(b) with ``W`` = the size of what it answers, and the players take
    their sensitivity from that size); Theorem 4.4's accuracy proof covers
    only ``"round"``.
    """
    check("response", respond_to)
    if not 0 <= burn_in < rounds:
        raise ValueError(f"burn_in must be in [0, rounds), got {burn_in} for {rounds} rounds")

    start = time.perf_counter()
    history: Counter = Counter()
    plays: list[np.ndarray] = []
    logs: list[RoundLog] = []
    query_stats: dict[str, OracleStats] = {}
    # A bar on a terminal, a line every few seconds in logs; no times at all when the player's are private.
    bar = RoundProgress(rounds, enabled=progress, timings=not getattr(query_player, "timings_private", False))
    for t in range(1, rounds + 1):
        t0 = time.perf_counter()
        played = data_player.play(history, samples_per_round)
        plays.append(played)
        answered = np.concatenate(plays) if respond_to == "union" else played
        synthetic = AggregatedData.from_codes(real.domain, answered)
        selection = query_player.select(real, synthetic, t)
        for res in selection.oracle_results:
            query_stats.setdefault(res.backend, OracleStats()).add(res)
        if selection.query is not None:
            history[selection.query] += 1
        logs.append(RoundLog(t, selection.query, selection.conditional, time.perf_counter() - t0, selection.note))
        failures = sum(s.failures for s in query_stats.values())
        bar.update(t, oracle_s=f"{sum(s.total_time for s in query_stats.values()):.1f}", failures=failures)
    bar.close()
    log.info("game finished: %d rounds", rounds)  # no time: it tracks the data (report diagnostics only)
    return GameResult(np.concatenate(plays[burn_in:]), logs, data_player.stats, query_stats,
                      time.perf_counter() - start)


def ftpl_scale(rounds: int, theta: float) -> float:
    """FTPL scale ``b = theta sqrt(T)`` (docs/privacy.md §4.5 heuristic; theory ``b* = sqrt(2T(1+1/V))``)."""
    return theta * math.sqrt(rounds)


def a_priori_bound(*, m: int, d: int, log_q: float, epsilon0: Fraction, rounds: int, samples: int,
                   resolution: int, scale: float, selection_term: str = "rspm") -> dict:
    """Expected max-error bound of Theorem 4.4, as ``A / n + B`` (``n`` stays private).

    ``selection_term`` is ``"rspm"`` (Mode E, first term ``m / (n N sinh(lambda))``)
    or ``"exponential"`` (Theorem 4.5: ``2 (ln|Q_w| + 1) / (eps0 n)``).
    """
    eps0 = float(epsilon0)
    if selection_term == "rspm":
        lam = eps0 / (m * (2 * samples + 1))
        a = m / (samples * math.sinh(lam))
    else:
        a = 2 * (log_q + 1) / eps0
    lam_d = 1.0 / (scale * resolution)
    kappa = lam_d * (resolution + 1) * d
    regret = -math.expm1(-kappa) + d / (2 * resolution * rounds * math.sinh(lam_d))
    sampling = math.sqrt(log_q / (2 * samples))
    return {"A": a, "B": regret + sampling, "regret": regret, "sampling": sampling,
            "form": "E max_q |q(D) - q(D_syn)| <= A/n + B (Theorem 4.4; worst case, often vacuous)"}
