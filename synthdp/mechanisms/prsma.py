"""PRSMA: Private Robust Subsampling Meta-Algorithm, Mode P (docs/privacy.md §3).

PRSMA makes RSPM private even when the certifiable oracle may FAIL, or pick
among optima, adversarially -- as a function of each call's instance only
(assumption A-stateless, docs/privacy.md §1.5) -- at the price of very many oracle
calls (docs/privacy.md §3.6).  Replace-one neighbours with a public ``n``;
:func:`prsma_add_remove` reduces add/remove to it (docs/privacy.md §3.8).

Algorithm (docs/privacy.md §3.2):

1. Cut a uniformly random permutation of the ``n`` records into ``K``
   pieces of public size ``s = floor(n/K)``; the rest is discarded.
2. On each piece run base RSPM ``R`` times, each with fresh noise and a
   fresh solver call, ``lambda_0 = eps_0 / (m (2W + 1))``, on the piece
   objective (which uses ``s`` where the full objective uses ``n``).  The
   piece's flag ``f_i`` is 1 if any run FAILs; a piece is abandoned at its
   first FAIL.
3. ``f = sum f_i`` and ``Z ~ DLap(eps/2)``; output ⊥ if ``f + Z >= tau`` or
   ``f = K``.
4. Otherwise output ``o_{I,1}``, the first run's answer of a uniformly
   chosen surviving piece ``I``.

Guarantee (Theorem 3.1): ``(eps*, delta*)``-DP for every stateless
certifiable oracle, with ``eps* = eps_L + ln(1 + (1 + e^psi/(1 - gamma))/L)``
and ``delta* = 2K|Q| e^{-psi^2/(2 s eps_0^2)} + e^{-eps_L t0} + K e^{-gamma R}
+ gamma e^psi / ((1 - gamma)(L + 1))``; parameters P1-P8 make
``eps* <= eps`` and ``delta* <= delta``.  *Proof sketch* (docs/privacy.md §3.4): couple
the two runs through the same permutation, so only the piece ``j*`` holding
the changed record differs.  A completed oracle (Lemma 3.2) turns every
strong piece's success law into a ``gamma``-perturbation of an exact-oracle
RSPM law; on a random partition these laws are ``e^psi``-close across pieces
except with probability ``delta_1`` (Lemma 3.3, a bounded-differences bound
for sampling without replacement).  Few survivors are caught by the noisy
count (``delta_3``); weak pieces survive ``R`` runs with probability
``<= e^{-gamma R}``; with at least ``L`` strong survivors the uniform choice
dilutes piece ``j*``'s influence to ``(1 + e^psi/(1-gamma))/L``, and the count
noise costs ``eps_L``.

*Implementation requirements* (A-stateless): every oracle call must be a
fresh solver in deterministic mode, with deterministic work limits only
(wall-clock limits depend on concurrent calls and are refused here) and no
warm start or hint from any other call.  An instance whose coefficients
leave the solver's exact range counts as a FAIL (docs/privacy.md §6 item 4).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, replace
from fractions import Fraction
from typing import Any, Callable

import numpy as np

from synthdp.oracles.base import NO_LIMITS, Limits, Oracle, OracleResult, QueryInstance
from synthdp.accounting.ledger import ADD_REMOVE, REPLACE_ONE, Ledger, as_delta, as_epsilon, round_down, round_up
from synthdp.core.data import AggregatedData
from synthdp.core.domain import Domain
from synthdp.core.errors import InputError, PrivacyError
from synthdp.mechanisms.noise import discrete_laplace
from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.mechanisms.rspm import perturbed_solve

log = logging.getLogger(__name__)

#: Default ceiling on the number of oracle calls of one PRSMA invocation.
DEFAULT_MAX_ORACLE_CALLS = 100_000

PieceInstance = Callable[[AggregatedData], QueryInstance]


def _positive_int(value: int, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise InputError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class PRSMAParameters:
    """All PRSMA parameters (docs/privacy.md §3.2) and the guarantee they give (Theorem 3.1).

    ``epsilon``/``delta`` is the guarantee the ledger records: the target
    ``(eps, delta)`` for :func:`prsma_parameters` (which asserts
    ``eps* <= eps``, ``delta* <= delta``), the rounded-up ``(eps*, delta*)``
    for :func:`prsma_general`.  ``Lambda = psi^2 / (2 s eps_0^2)`` is the
    exponent of ``delta_1`` (P7-P8 with the rounded-down ``eps_0``).
    """

    epsilon: Fraction
    delta: Fraction
    n: int
    m: int
    W: int
    psi: float
    log_q: float
    eps_count: Fraction
    L: int
    t0: int
    tau: int
    K: int
    s: int
    gamma: float
    R: int
    eps0: Fraction
    lambda0: Fraction
    Lambda: float
    eps_star: float
    delta_star: float

    @property
    def oracle_calls(self) -> int:
        """``K * R``: the number of oracle calls when no piece fails (docs/privacy.md §3.6)."""
        return self.K * self.R


def prsma_general(*, eps_count: Fraction, K: int, L: int, t0: int, gamma: float, R: int, psi: float,
                  eps0: Fraction, n: int, m: int, W: int, log_q: float | None = None) -> PRSMAParameters:
    """Theorem 3.1, general form: any ``K > L >= 1``, ``t0 >= 1``, ``gamma``, ``R``, ``psi``, ``eps0``.

    Threshold ``tau = K - L - t0``; ``eps_L = eps_count``.  Returns
    ``(eps*, delta*)`` with ``delta* = 2K|Q| e^{-psi^2/(2 s eps0^2)} +
    e^{-eps_L t0} + K e^{-gamma R} + gamma e^psi / ((1 - gamma)(L + 1))``.
    Meant for audits with small parameters; ``delta*`` may then be large.
    """
    eps_count, eps0 = as_epsilon(eps_count, "eps_count"), as_epsilon(eps0, "eps0")
    K, L, t0, R = (_positive_int(v, name) for v, name in ((K, "K"), (L, "L"), (t0, "t0"), (R, "R")))
    n, m, W = _positive_int(n, "n"), _positive_int(m, "m"), _positive_int(W, "W")
    if K <= L:
        raise InputError(f"PRSMA needs K > L, got K={K}, L={L}")
    if not 0 < gamma < 1 or not psi > 0:
        raise InputError(f"PRSMA needs 0 < gamma < 1 and psi > 0, got gamma={gamma}, psi={psi}")
    s = n // K
    if s < 1:
        raise InputError(f"PRSMA needs n >= K so that pieces are non-empty; got n={n}, K={K}")
    log_q = m * math.log(2) if log_q is None else float(log_q)
    exponent = psi**2 / (2 * s * float(eps0) ** 2)
    eps_star = float(eps_count) + math.log1p((1 + math.exp(psi) / (1 - gamma)) / L)
    delta_star = (math.exp(math.log(2 * K) + log_q - exponent) + math.exp(-float(eps_count) * t0)
                  + K * math.exp(-gamma * R) + gamma * math.exp(psi) / ((1 - gamma) * (L + 1)))
    return PRSMAParameters(
        epsilon=round_up(eps_star), delta=round_up(delta_star), n=n, m=m, W=W, psi=float(psi), log_q=log_q,
        eps_count=eps_count, L=L, t0=t0, tau=K - L - t0, K=K, s=s, gamma=float(gamma), R=R, eps0=eps0,
        lambda0=eps0 / (m * (2 * W + 1)), Lambda=exponent, eps_star=eps_star, delta_star=delta_star)


@dataclass(frozen=True)
class _Schedule:
    """The parameters P1-P6 that do not depend on ``n``."""

    L: int
    t0: int
    K: int
    gamma: float
    R: int


def _schedule(epsilon: Fraction, delta: Fraction, psi: float) -> _Schedule:
    """P2-P6 (docs/privacy.md §3.2), ceilings exactly as written (counts round up, docs/privacy.md §7.5).

    Float error in the arguments (relative ~1e-16) could move a ceiling only
    for arguments within that distance of an integer; the final check of
    ``eps* <= eps`` and ``delta* <= delta`` in :func:`prsma_parameters` guards it.
    """
    a_psi = 1 + 1.01 * math.exp(psi)
    L = math.ceil(a_psi / math.expm1(float(epsilon) / 2))
    t0 = math.ceil(2 * math.log(4 / delta) / float(epsilon))
    K = L + 2 * t0
    gamma = min(0.0099, float(delta) * (L + 1) / (4.04 * math.exp(psi)))
    R = math.ceil(math.log(4 * K / delta) / gamma)
    return _Schedule(L, t0, K, gamma, R)


def prsma_parameters(epsilon: Fraction, delta: Fraction, n: int, m: int, W: int, psi: float = 3,
                     log_q: float | None = None) -> PRSMAParameters:
    """P1-P8 of docs/privacy.md §3.2 for a target ``(epsilon, delta)``; ``log_q`` defaults to ``m ln 2``.

    ``eps_L = eps/2``; ``L = ceil(a_psi / (e^{eps/2} - 1))`` with
    ``a_psi = 1 + 1.01 e^psi``; ``t0 = ceil(2 ln(4/delta) / eps)``, ``tau = t0``;
    ``K = L + 2 t0``, ``s = floor(n/K)``; ``gamma = min(0.0099,
    delta (L + 1) / (4.04 e^psi))``; ``R = ceil(ln(4K/delta) / gamma)``;
    ``Lambda = ln(8K/delta) + ln|Q|``; ``eps_0 = psi / sqrt(2 s Lambda)``
    (rounded down).  Raises :class:`PrivacyError` unless Theorem 3.1's
    ``eps* <= eps`` and ``delta* <= delta``.
    """
    epsilon, delta = as_epsilon(epsilon), as_delta(delta)
    if delta == 0:
        raise InputError("PRSMA needs delta > 0 (docs/privacy.md §3)")
    if not psi > 0:
        raise InputError(f"psi must be positive, got {psi}")
    m = _positive_int(m, "m")
    plan = _schedule(epsilon, delta, psi)
    s = _positive_int(n, "n") // plan.K
    if s < 1:
        raise InputError(f"PRSMA with (epsilon, delta)=({epsilon}, {delta}) needs n >= K={plan.K} records, "
                         f"got n={n}")
    log_q = m * math.log(2) if log_q is None else float(log_q)
    big_lambda = math.log(8 * plan.K / delta) + log_q
    eps0 = round_down(psi / math.sqrt(2 * s * big_lambda))
    general = prsma_general(eps_count=epsilon / 2, K=plan.K, L=plan.L, t0=plan.t0, gamma=plan.gamma, R=plan.R,
                            psi=psi, eps0=eps0, n=n, m=m, W=W, log_q=log_q)
    if not (general.eps_star <= float(epsilon) and general.delta_star <= float(delta)):
        raise PrivacyError(f"PRSMA parameters violate Theorem 3.1: eps*={general.eps_star} > {epsilon} or "
                           f"delta*={general.delta_star} > {delta}")
    return replace(general, epsilon=epsilon, delta=delta)


@dataclass(frozen=True)
class PRSMAResult:
    """Outcome of one PRSMA run.  Only ``query`` is the private output.

    ``query`` is None for ⊥.  ``failures`` (the flags ``f_i``), ``f``,
    ``noisy_count`` (``f + Z``), ``survivors``, ``chosen`` and the oracle
    results are diagnostics: they are **not** differentially private and must
    never be published.
    """

    query: Any | None
    params: PRSMAParameters
    failures: tuple[bool, ...]
    f: int
    noisy_count: int
    survivors: tuple[int, ...]
    chosen: int | None
    oracle_results: tuple[OracleResult, ...]

    @property
    def bottom(self) -> bool:
        """Whether PRSMA output ⊥."""
        return self.query is None


def _check_calls(calls: int, max_oracle_calls: int, insist: bool, label: str) -> None:
    """Log the oracle-call count and refuse it above the ceiling unless ``insist``."""
    log.info("PRSMA %s: %d oracle calls planned (K * R)", label, calls)
    if calls > max_oracle_calls and not insist:
        raise InputError(f"PRSMA {label} needs {calls:,} oracle calls (K * R, docs/privacy.md §3.6), above the ceiling "
                         f"max_oracle_calls={max_oracle_calls:,}; pass insist=True to run it anyway")


def _check_limits(limits: Limits | None) -> Limits:
    """Deterministic work limits only (A-stateless, docs/privacy.md §1.5)."""
    if limits is not None and limits.time_limit is not None:
        raise InputError("PRSMA refuses wall-clock time limits: they break assumption A-stateless "
                         "(docs/privacy.md §1.5); use Limits(work_limit=...) (deterministic work) instead")
    return NO_LIMITS if limits is None else limits


def _piece(records: np.ndarray, perm: np.ndarray, i: int, piece_instance: PieceInstance, domain: Domain,
           params: PRSMAParameters) -> QueryInstance:
    """The base objective of piece ``i``: the records at positions ``perm[i s:(i + 1) s]`` (step 1)."""
    piece = AggregatedData.from_codes(domain, records[perm[i * params.s:(i + 1) * params.s]])
    instance = piece_instance(piece)
    if len(instance.separator_weights) != params.m:
        raise InputError(f"piece instance has m={len(instance.separator_weights)} separator points; "
                         f"the parameters assume m={params.m}")
    return instance


def _run(records: np.ndarray, piece_instance: PieceInstance, domain: Domain, params: PRSMAParameters,
         oracle: Oracle, limits: Limits, rng: PrivateRandom) -> PRSMAResult:
    """Steps 1-5 of docs/privacy.md §3.2 (no accounting; the callers spend)."""
    perm = rng.permutation(params.n)
    failures: list[bool] = []
    firsts: list[Any] = []
    results: list[OracleResult] = []
    for i in range(params.K):
        instance = _piece(records, perm, i, piece_instance, domain, params)
        failed, first = False, None
        for r in range(params.R):
            draw = perturbed_solve(instance, params.lambda0, oracle, limits, rng, noise_cap=None)
            results.append(draw.oracle)
            if draw.failed:
                failed = True
                break
            if r == 0:
                first = draw.query
        failures.append(failed)
        firsts.append(first)
    f = sum(failures)
    noisy = f + discrete_laplace(params.eps_count.numerator, params.eps_count.denominator, rng)
    survivors = tuple(i for i, failed in enumerate(failures) if not failed)
    chosen = None
    if noisy < params.tau and f < params.K:
        chosen = survivors[rng.choice(len(survivors))]
    # Not private: the exact failure count f must never be published (only f + Z is).
    log.debug("PRIVATE, do not publish: PRSMA %d/%d pieces failed, %s", f, params.K,
              "bottom" if chosen is None else f"piece {chosen}")
    return PRSMAResult(None if chosen is None else firsts[chosen], params, tuple(failures), f, noisy, survivors,
                       chosen, tuple(results))


def _run_exact_law(records: np.ndarray, piece_instance: PieceInstance, domain: Domain, params: PRSMAParameters,
                   oracle: Oracle, rng: PrivateRandom) -> PRSMAResult:
    """PRSMA's output law under an oracle that never fails, with one oracle call (Theorem 3.5).

    *Claim.* If no oracle call can FAIL, this returns ⊥ or a query with
    exactly the law of :func:`_run`.  *Proof.* In :func:`_run` every flag is
    then 0, so ``f = 0 < K``, every piece survives, and the output is ⊥ iff
    ``Z >= tau``; otherwise it is ``o_{I,1}`` for ``I`` uniform on ``[K]``,
    the first run on piece ``I``.  The other ``K R - 1`` runs draw noise
    independent of ``(pi, Z, I)`` and of that run's noise, and are never
    output, so summing them out leaves the joint law of ``(pi, Z, I,
    eta_{I,1})`` and the one solve it determines -- which is what is drawn
    here (in another order, which does not change a joint law of independent
    draws).  ∎

    (The oracle is stateless, A-stateless of docs/privacy.md §1.5, so that run's
    answer does not depend on the calls made before it.)

    Hence the privacy of Theorem 3.1 (which holds for every certifiable
    oracle, so for a never-failing one) carries over, and the accuracy is
    PRSMA's.  The guarantee is conditional on an oracle that cannot fail on
    *any* piece and noise, as in Mode E: checking the one call does not
    certify the law.  An unlimited exact oracle fails only on an instance
    whose coefficients leave its exact integer range (the noise is
    unbounded, so with a probability that is astronomically small at
    realistic sizes but not zero); the release then stops with
    :class:`PrivacyError`, as RSPM does in Mode E (an abort is a side channel
    outside the model, docs/privacy.md §6 item 5), and the law differs from PRSMA's
    by at most ``(K R + 1)`` times that probability in total variation.
    """
    perm = rng.permutation(params.n)
    survivors = tuple(range(params.K))
    noisy = discrete_laplace(params.eps_count.numerator, params.eps_count.denominator, rng)
    if noisy >= params.tau:
        return PRSMAResult(None, params, (False,) * params.K, 0, noisy, survivors, None, ())
    chosen = int(rng.choice(params.K))
    instance = _piece(records, perm, chosen, piece_instance, domain, params)
    draw = perturbed_solve(instance, params.lambda0, oracle, NO_LIMITS, rng, noise_cap=None)
    if draw.query is None:
        why = draw.oracle.message or draw.oracle.backend_status
        raise PrivacyError(f"PRSMA (exact-oracle law): the oracle failed ({why}), so the output would not have "
                           "PRSMA's law; the release stops. Use query_player='prsma' (robust to failures) or an "
                           "oracle that cannot fail")
    return PRSMAResult(draw.query, params, (False,) * params.K, 0, noisy, survivors, chosen, (draw.oracle,))


def prsma(records: np.ndarray, piece_instance: PieceInstance, *, domain: Domain, params: PRSMAParameters,
          oracle: Oracle, rng: PrivateRandom, ledger: Ledger, limits: Limits | None = None,
          max_oracle_calls: int = DEFAULT_MAX_ORACLE_CALLS, insist: bool = False, label: str = "",
          exact_oracle: bool = False) -> PRSMAResult:
    """Run PRSMA (docs/privacy.md §3.2) on ``records`` (an ``(n, A)`` code matrix; ``n`` public), replace-one.

    ``piece_instance(piece)`` builds the un-noised base objective of a piece
    (an :class:`AggregatedData` of ``s`` records; it must use ``s`` wherever
    the full objective uses ``n``, and have difference sensitivity ``<= 2W``).
    Spends ``(params.epsilon, params.delta)`` in ``ledger`` before drawing
    anything; refuses wall-clock limits and more than ``max_oracle_calls``
    planned calls unless ``insist``.

    ``exact_oracle=True`` draws from PRSMA's output law under an oracle that
    never fails with one unlimited oracle call instead of ``K R``
    (:func:`_run_exact_law`, Theorem 3.5): same privacy and accuracy when the
    oracle cannot fail, none of the robustness.  It measures what PRSMA's
    robustness costs in accuracy at budgets where running it is out of reach.
    """
    limits = _check_limits(limits)
    records = np.asarray(records)
    if records.ndim != 2:
        raise InputError(f"records must be an (n, attributes) code matrix, got shape {records.shape}")
    if records.shape[0] != params.n:
        raise InputError(f"PRSMA parameters are for n={params.n} records, got {records.shape[0]}")
    if exact_oracle and limits != NO_LIMITS:
        raise InputError("PRSMA's exact-oracle law needs an oracle that cannot fail: run it without limits")
    _check_calls(1 if exact_oracle else params.oracle_calls, max_oracle_calls, insist, label)
    ledger.spend("prsma", params.epsilon, params.delta, REPLACE_ONE,
                 f"{label} K={params.K} R={params.R} eps0={params.eps0}{' exact-oracle law' if exact_oracle else ''}"
                 .strip())
    if exact_oracle:
        return _run_exact_law(records, piece_instance, domain, params, oracle, rng)
    return _run(records, piece_instance, domain, params, oracle, limits, rng)


@dataclass(frozen=True)
class AddRemoveResult:
    """Outcome of :func:`prsma_add_remove`: the released size ``nu`` and the query (None for ⊥).

    ``prsma`` is the inner run's diagnostics (None when it did not run).
    """

    nu: int
    query: Any | None
    prsma: PRSMAResult | None


def prsma_add_remove(records: np.ndarray, piece_instance: PieceInstance, *, domain: Domain, epsilon: Fraction,
                     delta: Fraction, m: int, W: int, oracle: Oracle, rng: PrivateRandom, ledger: Ledger,
                     psi: float = 3, log_q: float | None = None, limits: Limits | None = None,
                     max_oracle_calls: int = DEFAULT_MAX_ORACLE_CALLS, insist: bool = False,
                     label: str = "") -> AddRemoveResult:
    """PRSMA under add/remove via a private size release (docs/privacy.md §3.8, Lemma 3.7).

    ``eps_n = eps/10``, ``delta_0 = delta/10``, ``Delta_0 = ceil(ln(1/delta_0)/eps_n)``.
    Release ``nu = n - Delta_0 + G`` with ``G ~ DLap(eps_n)``; if ``1 <= nu <= n``
    run PRSMA with ``(0.9 eps, 0.9 delta e^{-eps/10})`` (delta rounded down) on a
    uniform ``nu``-subset with ``n <- nu`` public, else output ⊥ (also when
    ``nu < K``, a function of the released ``nu``).  Lemma 3.7: the pair is
    ``(eps_n + eps_1, e^{eps_n} delta_1 + delta_0) <= (eps, delta)``-DP under
    add/remove, which the ledger records.
    """
    epsilon, delta = as_epsilon(epsilon), as_delta(delta)
    if delta == 0:
        raise InputError("PRSMA needs delta > 0 (docs/privacy.md §3)")
    limits = _check_limits(limits)
    records = np.asarray(records)
    eps_n, delta_0 = epsilon / 10, delta / 10
    eps_1 = epsilon - eps_n
    delta_1 = round_down(float(delta) * 0.9 * math.exp(-float(eps_n)), None)
    shift = math.ceil(math.log(1 / delta_0) / float(eps_n))
    plan = _schedule(eps_1, delta_1, psi)
    _check_calls(plan.K * plan.R, max_oracle_calls, insist, label)
    ledger.spend("prsma-add-remove", epsilon, delta, ADD_REMOVE, f"{label} K={plan.K} R={plan.R}".strip())
    n = records.shape[0]
    nu = n - shift + discrete_laplace(eps_n.numerator, eps_n.denominator, rng)
    if nu < plan.K or nu > n:
        log.info("PRSMA add/remove %s: released size %d outside [K, n]; output bottom", label, nu)
        return AddRemoveResult(nu, None, None)
    subset = records[rng.permutation(n)[:nu]]
    params = prsma_parameters(eps_1, delta_1, nu, m, W, psi, log_q)
    result = _run(subset, piece_instance, domain, params, oracle, limits, rng)
    return AddRemoveResult(nu, result.query, result)
