"""Pure-DP measurement of counts with discrete Laplace noise, and its moments (docs/privacy.md §10.2).

A group of integer counts ``f(D)`` whose l1-sensitivity is ``Delta_1`` (1 for
one marginal under add/remove, 2 under replace-one, 1 for one count under
both) is released as ``f(D) + Z`` with ``Z_i ~ DLap(a)`` i.i.d. and rate
``a = epsilon / Delta_1``: ``epsilon``-DP (Lemma 10.1).  The step is recorded
in the run's ``(epsilon, delta)`` ledger with ``delta = 0`` before the noise
is drawn; that ledger refuses a step past its budget, which makes it the
pure-DP filter of Theorem 10.2.  The noise comes from the exact sampler of
docs/privacy.md §2.6.
"""

from __future__ import annotations

import math
from fractions import Fraction
from numbers import Rational

import numpy as np

from synthdp.core.errors import InputError
from synthdp.accounting.ledger import Ledger, check_relation
from synthdp.mechanisms.noise import discrete_laplace_array
from synthdp.mechanisms.randomness import PrivateRandom

#: Grid on which a split of the budget is rounded down (the rounded value is what is charged).
GRID = 10**12


def laplace_measure(answers: np.ndarray, *, rate: Fraction, sensitivity: int, rng: PrivateRandom, ledger: Ledger,
                    relation: str, label: str = "") -> np.ndarray:
    """``answers + DLap(rate)`` per cell, charged ``epsilon = rate * sensitivity`` first (docs/privacy.md §10.2, (P2)).

    ``answers`` are exact integer counts whose l1-sensitivity under
    ``relation`` is ``sensitivity`` (the caller's table, §10.2); the ledger
    records ``(rate * sensitivity, 0)`` or refuses, in which case nothing is drawn.
    """
    check_relation(relation)
    if isinstance(sensitivity, bool) or not isinstance(sensitivity, int) or sensitivity < 1:
        raise InputError(f"l1-sensitivity must be a positive integer, got {sensitivity!r}")
    if isinstance(rate, bool) or not isinstance(rate, Rational) or rate <= 0:
        raise InputError(f"the Laplace rate must be a positive exact rational, got {rate!r}")
    answers = np.asarray(answers)
    if not np.issubdtype(answers.dtype, np.integer):
        raise InputError(f"a Laplace measurement needs integer counts, got dtype {answers.dtype}")
    rate = Fraction(rate)
    ledger.spend("laplace", rate * sensitivity, Fraction(0), relation, label)
    return answers + discrete_laplace_array(answers.size, rate.numerator, rate.denominator, rng).reshape(answers.shape)


def laplace_variance(rate: Fraction) -> float:
    """``Var Z = 2 e^-a / (1 - e^-a)**2`` for ``Z ~ DLap(a)`` (docs/privacy.md §10.2); the fit weighs by 1/Var."""
    r = math.exp(-float(rate))
    return 2 * r / (-math.expm1(-float(rate))) ** 2


def laplace_mean_abs(rate: Fraction) -> float:
    """``E|Z| = 1 / sinh a`` for ``Z ~ DLap(a)`` (docs/privacy.md §1.6 (F3)): AIM's expected-noise offset per cell."""
    return 1.0 / math.sinh(float(rate))


def epsilon_down(value: Fraction, denominator: int = GRID) -> Fraction:
    """The largest multiple of ``1/denominator`` at most ``value`` (a budget split, rounded **down**, §10.2)."""
    value = Fraction(value)
    if value <= 0:
        raise InputError(f"a budget share must be positive, got {value}")
    return Fraction(math.floor(value * denominator), denominator)


def spent_epsilon(ledger: Ledger) -> Fraction:
    """What a pure ledger has recorded: the sum of its spends' ``epsilon`` (basic composition, Theorem 10.2)."""
    if ledger.delta_budget != 0 or any(e.delta or e.clip for e in ledger.events):
        raise InputError("a pure-DP filter needs a ledger with no delta budget and only pure spends")
    return sum((e.epsilon for e in ledger.events), Fraction(0))
