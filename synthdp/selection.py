"""Selection over an explicit workload: exponential mechanism and report-noisy-max (privacy note, section 4.6).

Both take integer scores ``U`` (to be maximised) of an explicitly
enumerated, complement-closed workload -- the caller computes them from
marginal counts; in the game ``U(q) = N sum_x n_x(D) q(x) - n sum_x N_x q(x)``
and a complement scores ``-U(q)`` -- plus the score sensitivity
``max_{D ~ D'} max_q |U_D'(q) - U_D(q)|`` (``N`` for the game score under both
relations).  They return the index of the chosen score and record
``epsilon`` in the ledger before drawing anything.  Ties may be broken
arbitrarily; here, the first index.
"""

from __future__ import annotations

import logging
from fractions import Fraction

import numpy as np

from synthdp.accounting import Ledger, as_epsilon, check_relation
from synthdp.errors import InputError
from synthdp.noise import bernoulli_exp, discrete_laplace
from synthdp.randomness import PrivateRandom

log = logging.getLogger(__name__)


def _prepare(scores: np.ndarray, epsilon: Fraction, sensitivity: int, relation: str) -> tuple[list[int], Fraction]:
    """Validated scores as Python integers and epsilon as an exact rational."""
    scores = np.asarray(scores)
    if scores.ndim != 1 or len(scores) == 0 or not np.issubdtype(scores.dtype, np.integer):
        raise InputError(f"scores must be a non-empty 1-d integer array, got shape {scores.shape}, "
                         f"dtype {scores.dtype}")
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, (int, np.integer)) or sensitivity < 1:
        raise InputError(f"score sensitivity must be a positive integer, got {sensitivity!r}")
    check_relation(relation)
    return [int(u) for u in scores.tolist()], as_epsilon(epsilon)


def exponential_mechanism(scores: np.ndarray, *, epsilon: Fraction, sensitivity: int, rng: PrivateRandom,
                          ledger: Ledger, relation: str, label: str = "") -> int:
    """Sample index ``j`` with probability proportional to ``exp(eps U_j / (2 N))`` (Theorem 4.5).

    *Privacy.*  A neighbour moves each score by at most ``N`` (the
    sensitivity), so each numerator ``exp(eps U_j/(2N))`` moves by a factor of
    at most ``e^{eps/2}``, and so does the normaliser: the ratio is at most
    ``e^eps``.

    *Exact sampler.*  Repeat: draw ``j`` uniformly; accept with probability
    ``exp(-eps (U* - U_j) / (2N))`` (``U* = max U``), an exact
    :func:`~synthdp.noise.bernoulli_exp` with a rational argument.  The
    accepted index has law proportional to ``exp(eps (U_j - U*)/(2N))``,
    which is the exponential mechanism; the expected number of proposals is
    at most the workload size.  That number is a timing side channel only.
    """
    values, epsilon = _prepare(scores, epsilon, sensitivity, relation)
    ledger.spend("exponential", epsilon, Fraction(0), relation, label)
    top = max(values)
    scale = 2 * int(sensitivity) * epsilon.denominator
    while True:
        j = rng.randbelow(len(values))
        if bernoulli_exp(Fraction(epsilon.numerator * (top - values[j]), scale), rng) == 1:
            return j


def report_noisy_max(scores: np.ndarray, *, epsilon: Fraction, sensitivity: int, rng: PrivateRandom,
                     ledger: Ledger, relation: str, label: str = "") -> int:
    """``argmax_j (U_j + Z_j)`` with ``Z_j ~ DLap(eps / (2N + 1))`` i.i.d. (Theorem 4.6).

    *Privacy* (Lemma 2.1 with one coordinate).  If ``j`` wins for noise ``Z``
    on ``D``, it wins uniquely on ``D'`` for ``Z + (2N + 1) e_j``: against any
    ``k != j`` its margin moves by at most ``2N`` and gains ``2N + 1``.  The
    shift costs ``e^eps`` in the noise pmf (F1), whatever the tie-breaking.
    """
    values, epsilon = _prepare(scores, epsilon, sensitivity, relation)
    ledger.spend("report-noisy-max", epsilon, Fraction(0), relation, label)
    denominator = epsilon.denominator * (2 * int(sensitivity) + 1)
    noisy = [u + discrete_laplace(epsilon.numerator, denominator, rng) for u in values]
    return max(range(len(noisy)), key=noisy.__getitem__)
