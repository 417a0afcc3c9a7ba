"""Discrete RSPM: Report-Separator-Perturbed-Min with exact integer noise (docs/privacy.md §2).

Given an integer objective ``L_D(q)`` over a query class with separator
``e_1..e_m``, RSPM adds ``eta_i ~ DLap(lambda)`` to the weight of each
separator pseudo-point and returns a *certified* minimiser of
``F(q) = L_D(q) + sum_i eta_i q(e_i)``, with ``lambda = epsilon / (m c)`` and
shift constant ``c = Delta + 1`` (``Delta`` the difference sensitivity).

*Privacy* (Theorem 2.3).  Fix neighbours ``D ~ D'`` and a query ``q``.  If
``q`` is *a* minimiser for noise ``eta`` on ``D``, then after the shift
``g_q(eta)_i = eta_i + c (1 - 2 q(e_i))`` it is the *unique* minimiser on
``D'`` (Lemma 2.1): against any ``q' != q`` the data term moves by at most
``Delta`` while the shift gains ``c * H(q, q') >= c >= Delta + 1``, since the
separator makes ``H(q, q') >= 1``.  The shift moves each of the ``m``
coordinates by ``c``, so the noise density changes by at most
``e^{lambda m c} = e^epsilon`` (Lemma 2.2).  Hence
``P[RSPM(D) = q] <= e^epsilon P[RSPM(D') = q]`` **for every tie-breaking
rule**, even adversarial ones; ties have positive probability and the
strict integer gap handles them (Remark 2.6).  The ``+1`` is necessary
(Remark 2.5).

*Representability* (Corollary 2.4).  The solvers take machine integers, so
a noise vector with ``max |eta_i| > B`` is not sent to the solver: RSPM then
returns the fixed, data-independent output ``None``.  Coupling with the
uncapped run shows ``(epsilon, (1 + e^epsilon) delta_clip)``-DP with
``delta_clip <= 2 m exp(-lambda (B + 1))``; the default
``B = ceil((ln(2m) + 70 + epsilon) / lambda)`` (the corollary's rule plus
``m c``) makes ``(1 + e^epsilon) delta_clip <= 2 e^-70`` for every epsilon.  The
ledger records the clip probability and composes it exactly (see
:class:`~synthdp.accounting.ledger.Ledger`).  Independently, a noisy instance whose
coefficients leave the solver's exact integer range (docs/privacy.md §2.7 R1) is a
FAIL (docs/privacy.md §6 item 4).

*Modes* (docs/privacy.md §2.7, §3.7).  Mode **E** (default): no limits; the solver
answer is certified (R2-R3, in :mod:`synthdp.oracles.base`); a FAIL means the release
must be abandoned, so RSPM raises :class:`~synthdp.core.errors.PrivacyError` and
never substitutes an output (R4).  Mode **N**: time-limited; a FAIL returns
``query=None`` and the result is marked ``conditional`` ("privacy
conditional on no solver failure"); not for releases.  Mode **P** is PRSMA
(:mod:`synthdp.mechanisms.prsma`), which reuses :func:`perturbed_solve`.
"""

from __future__ import annotations

import dataclasses
import logging
import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np

from synthdp.oracles.base import FAIL, NO_LIMITS, Limits, Oracle, OracleResult, QueryInstance
from synthdp.accounting.ledger import ADD_REMOVE, REPLACE_ONE, Ledger, as_epsilon, check_relation, round_up
from synthdp.core.errors import InputError, PrivacyError
from synthdp.mechanisms.noise import discrete_laplace_vector
from synthdp.mechanisms.randomness import PrivateRandom

log = logging.getLogger(__name__)

OBJECTIVES = ("data", "game", "game_public_n")
MODES = ("E", "N")
#: The "+70" of the cap rule B >= (ln(2m) + 70) / lambda (Corollary 2.4).
_CAP_EXPONENT = 70
#: An upper bound on one call's clip probability under the default cap: ``2m exp(-lambda (B + 1)) <= e^-70``
#: (:func:`default_noise_cap`), rounded up; what a run reserves per planned call (docs/privacy.md §8.4).
CLIP_BOUND = round_up(math.exp(-_CAP_EXPONENT) * (1 + 2.0**-30))


def difference_sensitivity(W: int, relation: str, objective: str = "data") -> int:
    """Difference sensitivity ``Delta`` of the standard objectives (Lemma 2.0).

    * ``"data"``: ``sigma W sum_x n_x(D) q(x) + h(q)``, Lemma 2.0(a):
      ``2W`` (replace-one), ``W`` (add/remove).
    * ``"game"``: ``-W sum_x n_x(D) q(x) + n(D) sum_x N_x q(x) + h(q)`` with the
      true size ``n(D)`` and ``|P| = W``, Lemma 2.0(b): ``2W`` under both relations.
    * ``"game_public_n"``: the game objective with a public size, Lemma 2.0(c):
      as ``"data"``.
    """
    if isinstance(W, bool) or not isinstance(W, (int, np.integer)) or W < 1:
        raise InputError(f"the record weight W must be a positive integer, got {W!r}")
    if objective not in OBJECTIVES:
        raise InputError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
    relation = check_relation(relation)
    if objective == "game" or relation == REPLACE_ONE:
        return 2 * int(W)
    assert relation == ADD_REMOVE
    return int(W)


def rspm_noise_rate(epsilon: Fraction, m: int, sensitivity: int) -> Fraction:
    """``lambda = epsilon / (m c)`` with ``c = Delta + 1`` (docs/privacy.md §2.2 steps 1-2), exact."""
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, (int, np.integer)) or sensitivity < 0:
        raise InputError(f"sensitivity must be an integer >= 0, got {sensitivity!r}")
    if m < 1:
        raise InputError(f"the separator must have m >= 1 points, got m={m}")
    return as_epsilon(epsilon) / (m * (int(sensitivity) + 1))


def default_noise_cap(epsilon: Fraction, lam: Fraction, m: int) -> int:
    """``B = ceil((ln(2m) + 70 + epsilon) / lambda)``, within the rule ``B >= (ln(2m) + 70)/lambda``.

    The rule of Corollary 2.4 gives ``delta_clip <= e^-70``; the extra
    ``epsilon / lambda = m c`` also bounds the factor ``e^epsilon`` of the
    corollary's delta, ``(1 + e^epsilon) delta_clip <= 2 e^-70``, for every epsilon.
    """
    return math.ceil((math.log(2 * m) + _CAP_EXPONENT + float(epsilon)) * lam.denominator / lam.numerator)


def clip_probability(lam: Fraction, m: int, cap: int) -> float:
    """``P[max_i |eta_i| > B] <= m * 2 exp(-lambda (B + 1)) / (1 + exp(-lambda))`` (F2, union bound)."""
    lam_f = float(lam)
    return m * 2.0 * math.exp(-lam_f * (cap + 1)) / (1.0 + math.exp(-lam_f))


def solver_integer_limit(oracle: Oracle) -> int:
    """Exclusive bound on ``sum |coefficients|`` that ``oracle`` handles exactly (docs/privacy.md §2.7 R1).

    Each backend declares it (``Oracle.integer_limit``): ``2**62`` for CP-SAT
    and the other integer-exact backends, ``2**53`` for the native search's
    float64 tables, ``2**50`` (the default) for floating-point MIP solvers.
    """
    return oracle.integer_limit


def _within_range(weights: np.ndarray, noise_l1: int, limit: int) -> bool:
    """Whether ``sum |w_r| + sum |eta_i| < limit``; this bounds every coefficient and partial sum."""
    if len(weights) == 0:
        return noise_l1 < limit
    if int(np.abs(weights).max()) * len(weights) + noise_l1 < limit:
        return True
    return sum(abs(int(w)) for w in weights.tolist()) + noise_l1 < limit


def check_unperturbed(instance: QueryInstance) -> int:
    """The separator size ``m`` of an instance whose separator weights are still zero."""
    if np.any(np.asarray(instance.separator_weights) != 0):
        raise InputError("the instance's separator_weights must be zero on input: RSPM adds the noise itself "
                         "(docs/privacy.md §2.2 step 5)")
    return len(instance.separator_weights)


@dataclass(frozen=True)
class NoisySolve:
    """One perturbed, certified oracle call (docs/privacy.md §2.2 steps 3-6).

    ``oracle`` is None only when the noise was clipped (step 4).  The noise
    statistics are for diagnostics and accuracy checks (Theorem 2.7:
    ``L(q) - min L <= noise_l1``); they are correlated with the output and
    must never be published.
    """

    query: Any | None
    oracle: OracleResult | None
    noise_l1: int
    noise_max: int
    clipped: bool

    @property
    def failed(self) -> bool:
        """The oracle returned FAIL (including an out-of-range instance)."""
        return self.oracle is not None and self.oracle.failed


def perturbed_solve(instance: QueryInstance, lam: Fraction, oracle: Oracle, limits: Limits,
                    rng: PrivateRandom, *, noise_cap: int | None) -> NoisySolve:
    """Draw fresh ``DLap(lambda)`` separator noise and call the certified oracle once.

    Steps 3-6 of docs/privacy.md §2.2.  ``noise_cap=None`` disables step 4 (used by
    PRSMA, where an out-of-range instance is simply a FAIL, which a stateless
    certifiable oracle may return, docs/privacy.md §3.1).  Whatever the cap, an
    instance whose coefficients leave the solver's exact range is a FAIL
    (docs/privacy.md §2.7 R1, §6 item 4).
    """
    m = check_unperturbed(instance)
    eta = discrete_laplace_vector(m, lam.numerator, lam.denominator, rng)
    noise_l1 = sum(abs(e) for e in eta)
    noise_max = max((abs(e) for e in eta), default=0)
    if noise_cap is not None and noise_max > noise_cap:
        log.warning("RSPM noise exceeded the cap %d: returning the fixed output None (Corollary 2.4)", noise_cap)
        return NoisySolve(None, None, noise_l1, noise_max, True)
    limit = solver_integer_limit(oracle)
    if not _within_range(np.asarray(instance.weights), noise_l1, limit):
        result = OracleResult(FAIL, None, None, None, oracle.name, "integer range", 0.0,
                              message=f"coefficients exceed the exact integer range {limit} of {oracle.name} "
                                      "(docs/privacy.md §2.7 R1)")
        return NoisySolve(None, result, noise_l1, noise_max, False)
    noisy = dataclasses.replace(instance, separator_weights=np.array(eta, dtype=np.int64))
    result = oracle.solve_query(noisy, limits)
    return NoisySolve(result.solution if result.proven else None, result, noise_l1, noise_max, False)


@dataclass(frozen=True)
class RSPMResult:
    """Outcome of one RSPM release (docs/privacy.md §2).

    ``query`` is the certified minimiser, or None (Mode N after a FAIL, or
    the fixed output after a clipped noise draw).  ``delta`` is Corollary
    2.4's ``(1 + e^epsilon) * clip_probability``.  ``conditional`` marks Mode N:
    privacy conditional on no solver failure.  ``noise_l1``/``noise_max`` are
    diagnostics, never to be published.
    """

    query: Any | None
    oracle: OracleResult | None
    epsilon: Fraction
    lam: Fraction
    m: int
    c: int
    noise_cap: int
    clip_probability: Fraction
    delta: Fraction
    noise_l1: int
    noise_max: int
    clipped: bool
    mode: str
    conditional: bool
    relation: str
    label: str = ""


def rspm(instance: QueryInstance, *, epsilon: Fraction, sensitivity: int, oracle: Oracle, rng: PrivateRandom,
         ledger: Ledger, mode: str = "E", limits: Limits | None = None, relation: str = REPLACE_ONE,
         noise_cap: int | None = None, label: str = "") -> RSPMResult:
    """Discrete RSPM on ``instance`` (docs/privacy.md §2.2), Mode E or N; spends ``epsilon`` in ``ledger``.

    ``instance`` is the un-noised objective ``L_D`` (separator weights zero)
    and ``sensitivity`` its difference sensitivity ``Delta`` under
    ``relation`` for one row (see :func:`difference_sensitivity`); neighbours
    differ by up to ``ledger.contribution_bound = k`` rows, so the shift
    constant is ``c = k Delta + 1`` (docs/privacy.md §10.6, Lemma 10.62).  The result is
    ``epsilon``-DP for an exact oracle and any tie-breaking (Theorem 2.3),
    ``(epsilon, (1 + e^epsilon) delta_clip)``-DP with the cap (Corollary 2.4).

    Raises :class:`PrivacyError` if the ledger refuses the spend (nothing is
    drawn) and, in Mode E, if the oracle FAILs: the release must then be
    abandoned, never completed with another output (docs/privacy.md §2.7 R4).
    """
    epsilon = as_epsilon(epsilon)
    relation = check_relation(relation)
    if mode not in MODES:
        raise InputError(f"mode must be one of {MODES} (Mode P is synthdp.mechanisms.prsma), got {mode!r}")
    limits = NO_LIMITS if limits is None else limits
    if mode == "E" and (limits.time_limit is not None or limits.work_limit is not None):
        raise InputError("Mode E runs the solver without time or work limits (docs/privacy.md §2.7 R4); "
                         "use mode='N' for time-limited runs (privacy then conditional on no failure)")
    if mode == "E" and not oracle.certifiable:
        raise InputError(f"Mode E needs a certifiable oracle; {oracle.name!r} gives no optimality proof")
    m = check_unperturbed(instance)
    sensitivity = int(sensitivity) * ledger.contribution_bound
    lam = rspm_noise_rate(epsilon, m, sensitivity)
    cap = default_noise_cap(epsilon, lam, m) if noise_cap is None else int(noise_cap)
    if cap < 0:
        raise InputError(f"noise_cap must be >= 0, got {noise_cap!r}")
    limit = solver_integer_limit(oracle)
    if m * cap >= limit:
        raise InputError(f"the noise cap B={cap} on m={m} coordinates does not fit the exact integer range "
                         f"{limit} of {oracle.name!r} (docs/privacy.md §2.7 R1); raise epsilon or lower m")
    kappa = round_up(clip_probability(lam, m, cap))
    conditional = mode == "N"
    note = f"{label} mode {mode}".strip() + (": privacy conditional on no solver failure" if conditional else "")
    ledger.spend("rspm", epsilon, Fraction(0), relation, note, clip=kappa)
    draw = perturbed_solve(instance, lam, oracle, limits, rng, noise_cap=cap)
    if draw.failed:
        if mode == "E":
            # Not the solver's message: it may quote the noisy objective, a private value.
            raise PrivacyError(
                f"RSPM {label}: oracle {oracle.name!r} returned FAIL in Mode E ({draw.oracle.backend_status}); the "
                "release must be abandoned and not published (docs/privacy.md §2.7 R4)")
        log.warning("RSPM %s: oracle FAIL in Mode N; returning None (privacy conditional on no solver failure)",
                    label)
    return RSPMResult(draw.query, draw.oracle, epsilon, lam, m, sensitivity + 1, cap, kappa,
                      round_up((1 + math.exp(float(epsilon))) * float(kappa)), draw.noise_l1, draw.noise_max,
                      draw.clipped, mode, conditional, relation, label)
