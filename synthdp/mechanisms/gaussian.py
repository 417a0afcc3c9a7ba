"""The exact discrete Gaussian and the Gaussian measurement of a count vector (docs/privacy.md §8.2 (M1)).

``N_Z(0, sigma2)`` is the law on the integers with ``P[Z = k]`` proportional to
``exp(-k**2 / (2 sigma2))``.  ``sigma2`` is its *scale* parameter, an exact
rational; the variance is somewhat smaller (0.215 at ``sigma2 = 1/4``).

Sampling follows Canonne-Kamath-Steinke 2020, Algorithm 3: with
``t = floor(sigma) + 1``, draw ``Y ~ DLap(1/t)`` (their ``Lap_Z(t)`` is a
scale ``t``) and keep it with probability ``exp(-(|Y| - sigma2/t)**2 / (2 sigma2))``;
repeat until kept.  Both steps use the exact integer samplers of
:mod:`synthdp.mechanisms.noise` (docs/privacy.md §2.6), so the output law
is exactly ``N_Z(0, sigma2)`` -- no float is involved.

*Why the rejection step is exact.*  ``P[Y = y]`` is proportional to
``exp(-|y|/t)``, and accepting with ``exp(-(|y| - sigma2/t)**2/(2 sigma2))``
leaves a kept ``y`` with weight proportional to
``exp(-|y|/t - (|y| - sigma2/t)**2/(2 sigma2)) = exp(-y**2/(2 sigma2)) exp(-sigma2/(2 t**2))``;
the second factor does not depend on ``y``.  With ``sigma2 = a/b`` the
acceptance exponent is the rational ``(|y| b t - a)**2 / (2 a b t**2)``.

A floating-point normal sampler carries no guarantee (docs/privacy.md §6);
it is never used here.
"""

from __future__ import annotations

import math
from fractions import Fraction
from numbers import Rational

import numpy as np

from synthdp.mechanisms.noise import bernoulli_exp, bernoulli_exp_array, discrete_laplace, discrete_laplace_array
from synthdp.mechanisms.randomness import ARRAY_BOUND, PrivateRandom

#: ``sigma2`` is rounded up to a multiple of ``2**-k`` with ``k`` chosen so that the array sampler's
#: acceptance denominators ``2 a b t**2`` stay below ``2**62`` (relative rounding at most ``2**-29 / sigma2``
#: for small ``sigma2``, ``1 / sigma2`` for ``sigma2 >= 2**15``).
_GRID_BITS = 29


def sigma2_up(value: float | Rational) -> Fraction:
    """``sigma2`` as an exact rational rounded **up** onto a grid the array sampler handles (docs/privacy.md §8.2).

    A larger scale is always safe: the cost charged is re-derived from the
    returned value.  Exact rationals already on the grid are returned unchanged.
    """
    if isinstance(value, bool) or not isinstance(value, (float, int, Rational)):
        raise TypeError(f"sigma2 must be a number, got {type(value).__name__}")
    exact = Fraction(value)
    if not exact > 0 or (isinstance(value, float) and not math.isfinite(value)):
        raise ValueError(f"sigma2 must be a positive finite number, got {value!r}")
    bits = math.ceil(exact).bit_length()
    denominator = 2 ** max(0, _GRID_BITS - 2 * bits)
    return Fraction(math.ceil(exact * denominator), denominator)


def _check_sigma2(sigma2: Fraction) -> tuple[int, int, int]:
    """``(a, b, t)`` with ``sigma2 = a/b`` and ``t = floor(sqrt(sigma2)) + 1``."""
    if isinstance(sigma2, bool) or not isinstance(sigma2, Rational):
        raise TypeError(f"sigma2 must be an exact rational (Fraction or int), got {type(sigma2).__name__}; "
                        "round a float up with sigma2_up")
    sigma2 = Fraction(sigma2)
    if sigma2 <= 0:
        raise ValueError(f"sigma2 must be positive, got {sigma2}")
    a, b = sigma2.numerator, sigma2.denominator
    return a, b, math.isqrt(a // b) + 1  # floor(sqrt(a/b)) = isqrt(floor(a/b))


def discrete_gaussian(sigma2: Fraction, rng: PrivateRandom) -> int:
    """One exact draw of ``N_Z(0, sigma2)`` (CKS Algorithm 3; scalar, any rational ``sigma2 > 0``)."""
    a, b, t = _check_sigma2(sigma2)
    while True:
        y = discrete_laplace(1, t, rng)
        if bernoulli_exp(Fraction((abs(y) * b * t - a) ** 2, 2 * a * b * t * t), rng) == 1:
            return y


def discrete_gaussian_array(size: int, sigma2: Fraction, rng: PrivateRandom) -> np.ndarray:
    """``size`` independent exact draws of ``N_Z(0, sigma2)`` as int64 (CKS Algorithm 3, lane-wise).

    Every lane runs the scalar algorithm on fresh uniforms: propose all open
    lanes at once with :func:`~synthdp.mechanisms.noise.discrete_laplace_array`,
    accept lane ``i`` with ``Bernoulli(exp(-gamma_i))``, and redraw the rejected
    lanes from scratch.  ``exp(-gamma_i)`` is drawn as the product of two
    independent coins, ``Bernoulli(exp(-floor(gamma_i)))`` and
    ``Bernoulli(exp(-frac(gamma_i)))``, whose probabilities multiply to
    ``exp(-gamma_i)``; the numerators are computed in exact Python integers.
    When the denominator ``2 a b t**2`` reaches ``2**62`` (a ``sigma2`` not
    on :func:`sigma2_up`'s grid) the scalar sampler runs per lane.
    """
    if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0:
        raise ValueError(f"size must be an integer >= 0, got {size!r}")
    a, b, t = _check_sigma2(sigma2)
    den = 2 * a * b * t * t
    if den >= ARRAY_BOUND or t >= ARRAY_BOUND:
        return np.array([discrete_gaussian(Fraction(a, b), rng) for _ in range(size)], dtype=np.int64)
    out = np.zeros(int(size), dtype=np.int64)
    todo = np.arange(int(size))
    while todo.size:
        y = discrete_laplace_array(todo.size, 1, t, rng)
        whole, frac = _acceptance_exponent(np.abs(y), a, b * t, den)
        kept = bernoulli_exp_array(whole, 1, rng) & bernoulli_exp_array(frac, den, rng)
        out[todo[kept]] = y[kept]
        todo = todo[~kept]
    return out


#: Below this bound a difference squares within int64 (``_INT64_SQRT ** 2 < 2**63``).
_INT64_SQRT = math.isqrt(2**63 - 1)


def _acceptance_exponent(magnitude: np.ndarray, a: int, bt: int, den: int) -> tuple[np.ndarray, np.ndarray]:
    """``gamma``'s integer part and numerator of its fractional part, ``divmod((|y| bt - a)**2, den)``, exactly.

    In int64 when every ``|y| bt - a`` squares within it (the common case for
    large ``sigma2``, whose grid denominator ``b`` is small); otherwise in
    exact Python integers.  The same numbers either way: only the speed differs.
    """
    top = int(magnitude.max(initial=0))
    if top * bt < _INT64_SQRT and a < _INT64_SQRT:
        diff = magnitude * bt - a  # |diff| < 2**31.5: no overflow in the product, the difference or its square
        return np.divmod(diff * diff, den)
    num = (magnitude.astype(object) * bt - a) ** 2  # exact Python integers
    return (num // den).astype(np.int64), (num % den).astype(np.int64)  # gamma is small; the remainder < den < 2**62


def discrete_gaussian_pmf(sigma2: Fraction, support: np.ndarray) -> np.ndarray:
    """The exact law's probabilities on ``support`` (normalised over ``|k| <= 60 sigma + 60``), for tests and docs."""
    sigma2 = float(sigma2)
    radius = int(60 * math.sqrt(sigma2)) + 60
    ks = np.arange(-radius, radius + 1, dtype=np.float64)
    norm = np.exp(-ks**2 / (2 * sigma2)).sum()
    return np.exp(-np.asarray(support, dtype=np.float64) ** 2 / (2 * sigma2)) / norm
