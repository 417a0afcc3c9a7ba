"""Exact integer samplers: Bernoulli, Bernoulli(exp(-gamma)) and the discrete Laplace law.

Privacy note, section 2.6, after Canonne-Kamath-Steinke 2020 ("The Discrete
Gaussian for Differential Privacy", Algorithms 1-2).  Every sampler uses
integer arithmetic and exact rationals only, and consumes nothing but
exact uniform integers from a :class:`~synthdp.randomness.PrivateRandom`;
so the sampled laws are *exactly* the ones the privacy proofs use.  Float
samplers (numpy's ``laplace``, ``geometric``, ...) have relative errors that
are unbounded in the tails and are never used for private noise.

The discrete Laplace law ``DLap(lambda)`` on the integers has
``P[eta = k] = tanh(lambda / 2) exp(-lambda |k|)`` (section 1.6).
"""

from __future__ import annotations

import math
from fractions import Fraction
from numbers import Rational

from synthdp.randomness import PrivateRandom

_ONE = Fraction(1)


def _check_int(value: int, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return value


def bernoulli(num: int, den: int, rng: PrivateRandom) -> int:
    """1 with probability exactly ``num / den`` (``0 <= num <= den``), else 0 (section 2.6)."""
    _check_int(den, "den", 1)
    if _check_int(num, "num", 0) > den:
        raise ValueError(f"bernoulli needs num <= den, got {num}/{den}")
    return 1 if rng.randbelow(den) < num else 0


def _bernoulli_exp_unit(gamma: Fraction, rng: PrivateRandom) -> int:
    """``Bernoulli(exp(-gamma))`` for ``0 <= gamma <= 1``.

    Draw ``Bernoulli(gamma / k)`` for ``k = 1, 2, ...`` until the first 0 and
    return 1 iff the exit index ``k`` is odd: ``P[k > j] = gamma**j / j!``,
    so ``P[k odd] = sum_j (-gamma)**j / j! = exp(-gamma)``.
    """
    k = 1
    while bernoulli(gamma.numerator, gamma.denominator * k, rng) == 1:
        k += 1
    return k % 2


def bernoulli_exp(gamma: Fraction, rng: PrivateRandom) -> int:
    """1 with probability exactly ``exp(-gamma)`` for a rational ``gamma >= 0`` (section 2.6).

    For ``gamma > 1`` it returns the product of ``floor(gamma)`` independent
    ``Bernoulli(exp(-1))`` and one ``Bernoulli(exp(-(gamma - floor(gamma))))``
    (stopping at the first 0), whose parameters multiply to ``exp(-gamma)``.
    """
    if not isinstance(gamma, Rational):
        raise TypeError(f"gamma must be an exact rational (Fraction or int), got {type(gamma).__name__}")
    gamma = Fraction(gamma)
    if gamma < 0:
        raise ValueError(f"bernoulli_exp needs gamma >= 0, got {gamma}")
    if gamma <= 1:
        return _bernoulli_exp_unit(gamma, rng)
    whole = math.floor(gamma)
    for _ in range(whole):
        if _bernoulli_exp_unit(_ONE, rng) == 0:
            return 0
    return _bernoulli_exp_unit(gamma - whole, rng)


def discrete_laplace(s: int, t: int, rng: PrivateRandom) -> int:
    """One draw of ``DLap(lambda)`` with ``lambda = s / t`` (section 2.6, CKS Algorithm 2).

    *Correctness* (section 2.6).  An accepted pair ``(U, V)`` has probability
    proportional to ``exp(-U/t) exp(-V) = exp(-(U + tV)/t)`` and
    ``x = U + tV`` with ``0 <= U < t`` is unique, so ``X`` is geometric with
    ratio ``exp(-1/t)``.  Then ``Y = X // s`` has
    ``P[Y = y] = sum_{x = ys}^{ys + s - 1} P[X = x]``, proportional to
    ``exp(-y s / t)``.  A fair sign, rejecting "-0", gives
    ``P[Z = z]`` proportional to ``exp(-|z| s / t)`` on all of the integers.

    For RSPM with ``epsilon = a/b`` call ``discrete_laplace(a, b*m*c, rng)``
    (``lambda = epsilon/(m c)``); for a count test ``DLap(a/b)`` call
    ``discrete_laplace(a, b, rng)``.
    """
    _check_int(s, "s", 1)
    _check_int(t, "t", 1)
    while True:
        u = rng.randbelow(t)
        if bernoulli_exp(Fraction(u, t), rng) == 0:
            continue
        v = 0
        while bernoulli_exp(_ONE, rng) == 1:
            v += 1
        y = (u + t * v) // s
        sign = bernoulli(1, 2, rng)
        if sign == 1 and y == 0:
            continue
        return (1 - 2 * sign) * y


def discrete_laplace_vector(m: int, s: int, t: int, rng: PrivateRandom) -> list[int]:
    """``m`` independent draws of ``DLap(s / t)`` as exact Python integers (section 2.6).

    Python integers rather than int64: a draw is unbounded, and callers that
    need a machine integer range must apply their own cap first (Corollary 2.4).
    """
    _check_int(m, "m", 0)
    return [discrete_laplace(s, t, rng) for _ in range(m)]


def to_fraction_down(x: float | Rational, denominator: int = 10**6) -> Fraction:
    """The largest multiple of ``1/denominator`` that is ``<= x``, exactly (section 2.6).

    Converts a user's float privacy parameter to an exact rational by
    rounding **down** (a smaller epsilon is always safe).  The float's exact
    binary value is used, so no rounding in the multiplication can push the
    result above ``x``.
    """
    _check_int(denominator, "denominator", 1)
    if isinstance(x, float) and not math.isfinite(x):
        raise ValueError(f"cannot convert {x!r} to a fraction")
    return Fraction(math.floor(Fraction(x) * denominator), denominator)
