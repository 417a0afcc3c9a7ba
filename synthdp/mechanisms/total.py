"""A noisy total released before the domain steps, and PrivTree's threshold read from it (docs/privacy.md §13).

PrivTree's tree over ``n`` rows at budget ``eps_d`` stops where a node's count
falls below its depth times the decay (§10.3), so a small table at a small
budget gets a handful of cells a column. The domain steps run before any
measurement exists, so they may adapt to the signal only through a value
released for the purpose: ``T = c + DLap(eps_T / k)``, ``c`` the rows the domain
steps read and ``k`` the rows per privacy unit, charged ``eps_T`` ahead of the
method (:func:`release_total`). The trees' threshold is then a function of
``T`` and their public parameters alone (:func:`threshold_for_total`); every
cost stays what the plan fixed.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from fractions import Fraction

from synthdp.core.errors import InputError
from synthdp.mechanisms.noise import discrete_laplace
from synthdp.mechanisms.randomness import PrivateRandom

__all__ = ["MIN_DEPTH", "TOTAL_SHARE", "NoisyTotal", "natural_depth", "release_total", "threshold_for_total",
           "total_rate"]

log = logging.getLogger(__name__)

#: Public share of the method's epsilon that releases the noisy total (charged ahead, docs/privacy.md §13).
TOTAL_SHARE = Fraction(1, 50)
#: The depth a balanced tree of ``T`` rows should reach before the threshold stops lowering it (§13).
MIN_DEPTH = 3
#: Grid of the count's noise rate (rounded down onto it: more noise, never less).
RATE_DENOMINATOR = 10**12


@dataclass(frozen=True)
class NoisyTotal:
    """The released noisy total ``T``, what it cost (pure, ahead) and the noise rate it was drawn at."""

    value: int
    epsilon: Fraction
    rate: Fraction

    def to_dict(self) -> dict:
        return {"value": self.value, "epsilon": str(self.epsilon), "rate": str(self.rate)}


def total_rate(epsilon: Fraction, contribution_bound: int) -> Fraction:
    """The count's noise rate ``eps_T / Delta_1``, ``Delta_1 = k`` (one unit moves at most ``k`` rows), rounded down
    onto the grid of ``1e-12`` (docs/privacy.md §13)."""
    rate = Fraction(math.floor(Fraction(epsilon) / contribution_bound * RATE_DENOMINATOR), RATE_DENOMINATOR)
    if rate <= 0:
        raise InputError(f"the noisy total's budget epsilon={float(epsilon):.3g} is below the rate grid 1e-12 at "
                         f"{contribution_bound} rows per unit; raise epsilon or turn cells_from_total off")
    return rate


def release_total(rows: int, *, epsilon: Fraction, rng: PrivateRandom, ledger, relation: str) -> NoisyTotal:
    """Release ``T = rows + DLap(eps_T / k)``, charged ``eps_T`` on ``ledger`` ahead of the method (§13).

    ``rows``: the rows the domain steps read (the tallies' rows, after contribution bounding, §10.6), the one
    private input. ``k`` is ``ledger.contribution_bound``. The charge is recorded before the noise is drawn, from a
    child stream of ``rng``.
    """
    epsilon = Fraction(epsilon)
    rate = total_rate(epsilon, ledger.contribution_bound)
    ledger.spend("noisy-total", epsilon, Fraction(0), relation,
                 f"rows read by the domain steps, rate {rate} (docs/privacy.md §13)", ahead=True)
    total = NoisyTotal(int(rows) + discrete_laplace(rate.numerator, rate.denominator, rng.spawn()), epsilon, rate)
    log.info("released the noisy total %d at epsilon %s (docs/privacy.md §13)", total.value, epsilon)
    return total


def natural_depth(total: int, decay: int, max_depth: int) -> int:
    """The deepest ``h <= max_depth`` at which a balanced tree of ``total`` rows still splits at threshold 0:
    ``total / 2**h > h * decay`` (0 when ``total <= 0``).  Public: a function of released and public values."""
    depth = 0
    while depth < max_depth and total > 2 ** (depth + 1) * (depth + 1) * decay:
        depth += 1
    return depth


def threshold_for_total(total: int, decay: int, max_depth: int) -> int:
    """PrivTree's threshold from the noisy total (docs/privacy.md §13): ``-j * decay``, ``j = max(0, MIN_DEPTH -
    h_0)`` with ``h_0`` the :func:`natural_depth`, so a tree that ``T`` says would stop above :data:`MIN_DEPTH` has
    its schedule of counts shifted ``j`` levels down; 0 (the tree of §10.3) otherwise."""
    return -max(0, MIN_DEPTH - natural_depth(total, decay, max_depth)) * decay
