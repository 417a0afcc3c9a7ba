"""Exact integer samplers: Bernoulli, Bernoulli(exp(-gamma)) and the discrete Laplace law.

docs/privacy.md §2.6, after Canonne-Kamath-Steinke 2020 ("The Discrete
Gaussian for Differential Privacy", Algorithms 1-2).  Every sampler uses
integer arithmetic and exact rationals only, and consumes nothing but
exact uniform integers from a :class:`~synthdp.mechanisms.randomness.PrivateRandom`;
so the sampled laws are *exactly* the ones the privacy proofs use.  Float
samplers (numpy's ``laplace``, ``geometric``, ...) have relative errors that
are unbounded in the tails and are never used for private noise.

The discrete Laplace law ``DLap(lambda)`` on the integers has
``P[eta = k] = tanh(lambda / 2) exp(-lambda |k|)`` (docs/privacy.md §1.6).

Each sampler has a vectorised twin (:func:`bernoulli_exp_array`,
:func:`discrete_laplace_array`) that runs the same algorithm lane-wise on
numpy integer arrays, drawing its uniforms with
:meth:`~synthdp.mechanisms.randomness.PrivateRandom.randbelow_array`: every lane is an
independent run of the scalar algorithm on fresh uniforms, so each lane
has exactly the scalar law and the lanes are independent.
"""

from __future__ import annotations

import math
from fractions import Fraction
from numbers import Rational

import numpy as np

from synthdp.mechanisms.randomness import ARRAY_BOUND, PrivateRandom

_INT64_MAX = int(np.iinfo(np.int64).max)


def _check_int(value: int, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return value


def bernoulli(num: int, den: int, rng: PrivateRandom) -> int:
    """1 with probability exactly ``num / den`` (``0 <= num <= den``), else 0 (docs/privacy.md §2.6)."""
    _check_int(den, "den", 1)
    if _check_int(num, "num", 0) > den:
        raise ValueError(f"bernoulli needs num <= den, got {num}/{den}")
    return 1 if rng.randbelow(den) < num else 0


def bernoulli_exp_unit(num: int, den: int, rng: PrivateRandom, k: int = 1) -> int:
    """``Bernoulli(exp(-gamma))`` for ``gamma = num / den`` in ``[0, 1]``.

    Draw ``Bernoulli(gamma / k)`` for ``k = 1, 2, ...`` until the first 0 and
    return 1 iff the exit index ``k`` is odd: ``P[k > j] = gamma**j / j!``,
    so ``P[k odd] = sum_j (-gamma)**j / j! = exp(-gamma)``.  Starting at a
    later ``k`` continues a run that has survived to ``k`` (the loop has no
    other state), as :func:`_bernoulli_exp_unit_array` does on overflow.
    """
    while rng.randbelow(den * k) < num:
        k += 1
    return k % 2


def bernoulli_exp(gamma: Fraction, rng: PrivateRandom) -> int:
    """1 with probability exactly ``exp(-gamma)`` for a rational ``gamma >= 0`` (docs/privacy.md §2.6).

    For ``gamma > 1`` it returns the product of ``floor(gamma)`` independent
    ``Bernoulli(exp(-1))`` and one ``Bernoulli(exp(-(gamma - floor(gamma))))``
    (stopping at the first 0), whose parameters multiply to ``exp(-gamma)``.
    """
    if not isinstance(gamma, Rational):
        raise TypeError(f"gamma must be an exact rational (Fraction or int), got {type(gamma).__name__}")
    gamma = Fraction(gamma)
    if gamma < 0:
        raise ValueError(f"bernoulli_exp needs gamma >= 0, got {gamma}")
    num, den = gamma.numerator, gamma.denominator
    if num <= den:
        return bernoulli_exp_unit(num, den, rng)
    whole, frac = divmod(num, den)
    for _ in range(whole):
        if bernoulli_exp_unit(1, 1, rng) == 0:
            return 0
    return bernoulli_exp_unit(frac, den, rng)


def _bernoulli_exp_unit_array(num: np.ndarray, den: int, rng: PrivateRandom, k: int = 1) -> np.ndarray:
    """Lane-wise :func:`bernoulli_exp_unit`: lane ``i`` is ``Bernoulli(exp(-num_i / den))``, ``num_i <= den``.

    All live lanes share the loop index ``k``, so round ``k`` is a single
    ``randbelow_array(den * k)`` compared with ``num`` (``Bernoulli(num_i / (den k))``
    per lane); a lane leaves at its first 0 with the parity of ``k``.  Should
    ``den * k`` reach ``2**62``, the surviving lanes finish with the scalar
    loop from the same ``k`` in exact Python integers.  As in the scalar
    loop, a start ``k > 1`` continues runs that have survived to ``k``.
    """
    out = np.zeros(num.size, dtype=bool)
    live = np.arange(num.size)  # live lanes and, aligned, their numerators
    while live.size:
        if den * k >= ARRAY_BOUND:
            out[live] = [bernoulli_exp_unit(a, den, rng, k) == 1 for a in num.tolist()]
            break
        going_on = rng.randbelow_array(den * k, live.size) < num
        if k % 2 == 1:
            out[live[~going_on]] = True
        live, num = live[going_on], num[going_on]
        k += 1
    return out


def _exp_one_runs(limit: np.ndarray, rng: PrivateRandom) -> np.ndarray:
    """Per lane, the number of ``Bernoulli(exp(-1))`` successes before the first failure, capped at ``limit``.

    Lane ``i`` runs i.i.d. trials until its first 0 or its ``limit_i``-th
    success; all live lanes run one trial per round.  Each trial starts the
    CKS loop at ``k = 2``: for ``gamma = 1`` the ``k = 1`` coin
    ``Bernoulli(1/1)`` is certain, so skipping it leaves the law unchanged.
    """
    runs = np.zeros(limit.size, dtype=np.int64)
    live = np.flatnonzero(limit > 0)  # live lanes and, aligned, their caps
    cap = limit[live]
    trials = 0
    while live.size:
        success = _bernoulli_exp_unit_array(np.ones(live.size, dtype=np.int64), 1, rng, k=2)
        trials += 1
        live, cap = live[success], cap[success]
        runs[live] = trials
        below_cap = cap > trials
        live, cap = live[below_cap], cap[below_cap]
    return runs


def bernoulli_exp_array(num: np.ndarray, den: int, rng: PrivateRandom) -> np.ndarray:
    """Independent ``Bernoulli(exp(-num_i / den))`` for an integer array ``num >= 0`` (docs/privacy.md §2.6, §4.6).

    Lane-wise :func:`bernoulli_exp` in integer arithmetic, for
    ``1 <= den < 2**62``: lane ``i`` runs ``floor(gamma_i)`` trials of
    ``Bernoulli(exp(-1))``, leaving at its first 0, and then one
    ``Bernoulli(exp(-(num_i mod den) / den))``.  Its result is the product
    of independent Bernoullis whose parameters multiply to ``exp(-gamma_i)``.
    Returns a boolean array of ``num``'s shape.
    """
    num = np.asarray(num)
    if not np.issubdtype(num.dtype, np.integer) or (num.size and (num.min() < 0 or num.max() > _INT64_MAX)):
        raise ValueError(f"bernoulli_exp_array needs non-negative int64 integers, got dtype {num.dtype}")
    if isinstance(den, bool) or not isinstance(den, (int, np.integer)) or not 1 <= den < ARRAY_BOUND:
        raise ValueError(f"bernoulli_exp_array needs an integer 1 <= den < 2**62, got {den!r}")
    whole, frac = np.divmod(num.astype(np.int64).ravel(), int(den))
    out = _exp_one_runs(whole, rng) == whole
    live = np.flatnonzero(out)
    out[live] = _bernoulli_exp_unit_array(frac[live], int(den), rng)
    return out.reshape(num.shape)


def discrete_laplace(s: int, t: int, rng: PrivateRandom) -> int:
    """One draw of ``DLap(lambda)`` with ``lambda = s / t`` (docs/privacy.md §2.6, CKS Algorithm 2).

    *Correctness* (docs/privacy.md §2.6).  An accepted pair ``(U, V)`` has probability
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
        if bernoulli_exp_unit(u, t, rng) == 0:
            continue
        v = 0
        while bernoulli_exp_unit(1, 1, rng) == 1:
            v += 1
        y = (u + t * v) // s
        sign = bernoulli(1, 2, rng)
        if sign == 1 and y == 0:
            continue
        return (1 - 2 * sign) * y


def _exact_array(values: list[int]) -> np.ndarray:
    """Python integers as int64 when they all fit, else as an object array of the same exact integers."""
    try:
        return np.array(values, dtype=np.int64)
    except OverflowError:
        return np.array(values, dtype=object)


def discrete_laplace_array(size: int, s: int, t: int, rng: PrivateRandom) -> np.ndarray:
    """``size`` independent draws of ``DLap(s / t)`` (docs/privacy.md §2.6, CKS Algorithm 2, vectorised).

    For ``s, t < 2**62`` every lane runs :func:`discrete_laplace` with
    numpy integers: draw ``U``, test ``Bernoulli(exp(-U/t))``, count the
    ``Bernoulli(exp(-1))`` successes ``V``, set ``Y = (U + tV) // s`` and
    a fair sign, rejecting "-0".  A lane rejected at either step is redrawn
    from scratch with fresh uniforms, exactly as the scalar loop restarts,
    so each lane has the law of :func:`discrete_laplace`, independently.
    Larger parameters use the scalar sampler.

    The draw is unbounded: the result is int64 when every draw fits, and
    otherwise an object array of the exact Python integers -- never a
    truncated or wrapped value.  (For ``t <= 2**40`` the object case needs
    some ``V >= 2**22``, which has probability below ``size * exp(-2**22)``.)
    """
    _check_int(size, "size", 0)
    _check_int(s, "s", 1)
    _check_int(t, "t", 1)
    if max(s, t) >= ARRAY_BOUND:
        return _exact_array([discrete_laplace(s, t, rng) for _ in range(size)])
    out = np.zeros(size, dtype=np.int64)
    todo = np.arange(size)
    while todo.size:
        u = rng.randbelow_array(t, todo.size)
        passed = _bernoulli_exp_unit_array(u, t, rng)
        lanes, u = todo[passed], u[passed]
        v = _exp_one_runs(np.full(lanes.size, _INT64_MAX), rng)  # a cap that would take 2**63 - 1 rounds
        if v.max(initial=0) <= (_INT64_MAX - (t - 1)) // t:  # U + tV fits int64
            y = (u + t * v) // s
        else:
            y = _exact_array([(a + t * b) // s for a, b in zip(u.tolist(), v.tolist())])
            out = out.astype(y.dtype)
        negative = rng.randbelow_array(2, lanes.size) == 1
        kept = ~(negative & (y == 0))
        out[lanes[kept]] = np.where(negative, -y, y)[kept]
        todo = np.concatenate([todo[~passed], lanes[~kept]])
    return out


def discrete_laplace_vector(m: int, s: int, t: int, rng: PrivateRandom) -> list[int]:
    """``m`` independent draws of ``DLap(s / t)`` as exact Python integers (docs/privacy.md §2.6).

    Python integers rather than int64: a draw is unbounded, and callers that
    need a machine integer range must apply their own cap first (Corollary 2.4).
    Drawn with :func:`discrete_laplace_array`.
    """
    _check_int(m, "m", 0)
    return discrete_laplace_array(m, s, t, rng).tolist()
