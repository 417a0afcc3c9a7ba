"""Selection over an explicit workload: exponential mechanism and report-noisy-max (docs/privacy.md §4.6).

Both take integer scores ``U`` (to be maximised) of an explicitly
enumerated, complement-closed workload -- the caller computes them from
marginal counts; in the game ``U(q) = N sum_x n_x(D) q(x) - n sum_x N_x q(x)``
and a complement scores ``-U(q)`` -- plus the score sensitivity
``max_{D ~ D'} max_q |U_D'(q) - U_D(q)|`` (``N`` for the game score under both
relations).  They return the index of the chosen score and record
``epsilon`` in the ledger before drawing anything.

Both are vectorised over the workload with the exact samplers of
:mod:`synthdp.mechanisms.noise` (docs/privacy.md §2.6): integer numpy arithmetic where every
intermediate provably fits int64, exact Python integers otherwise.
"""

from __future__ import annotations

import logging
from fractions import Fraction

import numpy as np

from synthdp.accounting.ledger import Ledger, as_epsilon, check_relation
from synthdp.core.errors import InputError
from synthdp.mechanisms import selection_kernel as kernel
from synthdp.mechanisms.noise import bernoulli_exp_unit, bernoulli_exp, discrete_laplace_array
from synthdp.mechanisms.randomness import ARRAY_BOUND, PrivateRandom

log = logging.getLogger(__name__)

#: Uniform 64-bit words handed to the compiled sampler at a time.
_WORDS = 2**16
_INT64_MAX = int(np.iinfo(np.int64).max)


def _prepare(scores: np.ndarray, epsilon: Fraction, sensitivity: int, relation: str,
             ledger: Ledger) -> tuple[np.ndarray, Fraction, int]:
    """Validated scores, epsilon as an exact rational, and the sensitivity for the ledger's neighbours.

    The scores come back as int64, or (only for uint64 input beyond the
    int64 range) as an object array of the exact Python integers.
    ``sensitivity`` is per row; neighbours differ by up to
    ``ledger.contribution_bound`` rows, so the mechanism uses ``k`` times it
    (docs/privacy.md §10.6, Lemma 10.62).
    """
    scores = np.asarray(scores)
    if scores.ndim != 1 or len(scores) == 0 or not np.issubdtype(scores.dtype, np.integer):
        raise InputError(f"scores must be a non-empty 1-d integer array, got shape {scores.shape}, "
                         f"dtype {scores.dtype}")
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, (int, np.integer)) or sensitivity < 1:
        raise InputError(f"score sensitivity must be a positive integer, got {sensitivity!r}")
    check_relation(relation)
    fits = np.can_cast(scores.dtype, np.int64) or int(scores.max()) <= _INT64_MAX
    return (scores.astype(np.int64 if fits else object, copy=False), as_epsilon(epsilon),
            int(sensitivity) * ledger.contribution_bound)


def _fits_int64(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether ``a + b`` provably fits int64 (both int64, ``max |a| + max |b| <= 2**63 - 1``)."""
    if a.dtype == object or b.dtype == object:
        return False
    return max(-int(a.min()), int(a.max())) + max(-int(b.min()), int(b.max())) <= _INT64_MAX


def exponential_mechanism(scores: np.ndarray, *, epsilon: Fraction, sensitivity: int, rng: PrivateRandom,
                          ledger: Ledger, relation: str, label: str = "", ahead: bool = False) -> int:
    """Sample index ``j`` with probability proportional to ``exp(eps U_j / (2 N))`` (Theorem 4.5).

    *Privacy.*  A neighbour moves each score by at most ``N`` (the
    sensitivity), so each numerator ``exp(eps U_j/(2N))`` moves by a factor of
    at most ``e^{eps/2}``, and so does the normaliser: the ratio is at most
    ``e^eps``.

    *Exact sampler* (docs/privacy.md §4.6).  Repeat: draw ``j`` uniformly; accept
    with probability ``exp(-gamma_j)``, ``gamma_j = eps (U* - U_j) / (2N)``
    (``U* = max U``), an exact ``Bernoulli(exp(-gamma_j))`` with a rational
    argument.  The accepted index has law proportional to
    ``exp(eps (U_j - U*)/(2N))``, which is the exponential mechanism; the
    expected number of proposals is at most the workload size.  That number
    is a timing side channel only.

    *Compiled.*  With ``eps = p/q``, ``gamma_j = p (U* - U_j) / (2Nq)``.  When
    ``p``, ``p (U* - min U)`` and ``2Nq`` are below ``2**62`` the sequential sampler
    runs compiled (:mod:`synthdp.mechanisms.selection_kernel`, same algorithm, exact
    integer arithmetic, uniform words from ``rng``); otherwise it runs in
    exact Python integers.
    """
    scores, epsilon, sensitivity = _prepare(scores, epsilon, sensitivity, relation, ledger)
    ledger.spend("exponential", epsilon, Fraction(0), relation, label, **({"ahead": True} if ahead else {}))
    p, scale = epsilon.numerator, 2 * sensitivity * epsilon.denominator
    top = scores.max()
    if scale < ARRAY_BOUND and p < ARRAY_BOUND and p * (int(top) - int(scores.min())) < ARRAY_BOUND:
        numerators = (top - scores).astype(np.int64) * p  # entries below 2**62: no overflow
        return _compiled_rejection(numerators, scale, rng)
    values, top = scores.tolist(), int(top)
    while True:
        j = rng.randbelow(len(values))
        if bernoulli_exp(Fraction(p * (top - values[j]), scale), rng) == 1:
            return j


def _compiled_rejection(numerators: np.ndarray, scale: int, rng: PrivateRandom) -> int:
    """Run :func:`synthdp.mechanisms.selection_kernel.run` to its first accepted proposal, refilling its words.

    An :data:`~synthdp.mechanisms.selection_kernel.OVERFLOW` hands the fractional coin in
    flight (its index ``k`` not yet drawn) to the exact Python loop, which
    continues it from the same ``k``.
    """
    state = np.zeros(5, dtype=np.int64)
    while True:
        out = kernel.run(numerators, scale, rng.random_words(_WORDS), state)
        state[kernel.POS] = 0
        if out >= 0:
            return int(out)
        if out == kernel.OVERFLOW:
            j = int(state[kernel.INDEX])
            if bernoulli_exp_unit(int(numerators[j]) % scale, scale, rng, int(state[kernel.K])) == 1:
                return j
            state[kernel.PHASE] = 0


def report_noisy_max(scores: np.ndarray, *, epsilon: Fraction, sensitivity: int, rng: PrivateRandom,
                     ledger: Ledger, relation: str, label: str = "") -> int:
    """``argmax_j (U_j + Z_j)`` with ``Z_j ~ DLap(eps / (2N + 1))`` i.i.d. (Theorem 4.6).

    *Privacy* (Lemma 2.1 with one coordinate).  If ``j`` wins for noise ``Z``
    on ``D``, it wins uniquely on ``D'`` for ``Z + (2N + 1) e_j``: against any
    ``k != j`` its margin moves by at most ``2N`` and gains ``2N + 1``.  The
    shift costs ``e^eps`` in the noise pmf (F1), whatever the tie-breaking.

    *Sampler* (docs/privacy.md §2.6, §4.6).  All noise is drawn at once by
    :func:`~synthdp.mechanisms.noise.discrete_laplace_array`; the noisy scores are
    summed in int64 when the extremes prove it cannot overflow, else in
    exact Python integers.  Ties go to the smallest index (``np.argmax``).
    """
    scores, epsilon, sensitivity = _prepare(scores, epsilon, sensitivity, relation, ledger)
    ledger.spend("report-noisy-max", epsilon, Fraction(0), relation, label)
    noise = discrete_laplace_array(len(scores), epsilon.numerator, epsilon.denominator * (2 * sensitivity + 1), rng)
    if _fits_int64(scores, noise):
        return int(np.argmax(scores + noise))
    return int(np.argmax(scores.astype(object) + noise.astype(object)))
