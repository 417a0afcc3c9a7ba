"""zCDP accounting for the measurement path: costs, the filter, and the conversions (docs/privacy.md §8.2-§8.5).

* Costs (§8.2).  A Gaussian measurement of sensitivity ``Delta2`` with the
  discrete Gaussian of scale ``sigma2`` is ``Delta2**2 / (2 sigma2)``-zCDP
  (M1); the exponential mechanism *as the project samples it*
  (``exp(eps u / (2 Delta_u))``, :func:`~synthdp.mechanisms.selection.exponential_mechanism`)
  is ``eps``-bounded-range and so ``eps**2 / 8``-zCDP (M2); any other pure
  ``eps``-DP step (RSPM, report-noisy-max) is ``eps**2 / 2``-zCDP (M3, C4).
* The filter (§8.4).  :class:`ZcdpLedger` adds the ``rho`` of each step,
  fixed before the step runs, and refuses (before anything is drawn) a step
  after which the sum would exceed the budget.  So whatever schedule a
  caller follows -- adaptive, adversarial, stopping early -- the sum of the
  recorded ``rho`` never exceeds the budget, which is what Theorem 8.1 needs.
* Conversions (§8.5).  :func:`rho_for_dp` gives the ``rho`` to spend for a
  target ``(epsilon, delta)``: the proved formula ``Gamma**2`` (§4.2), or the
  tighter bound of Canonne-Kamath-Steinke 2020 (Corollary 13) by bisection,
  rounded down.  :func:`dp_epsilon` and :func:`dp_delta` go back.

Every ``rho`` recorded is an exact :class:`fractions.Fraction`; the
conversions that need logs evaluate them in floating point with the
directed rounding of :mod:`synthdp.accounting.ledger`.
"""

from __future__ import annotations

import functools
import logging
import math
from dataclasses import dataclass, field
from fractions import Fraction
from numbers import Rational

import numpy as np

from synthdp.core.errors import InputError, PrivacyError
from synthdp.accounting.ledger import (
    as_delta, as_epsilon, check_contribution_bound, check_relation, round_down, round_up, zcdp_gamma, zcdp_to_dp,
)

log = logging.getLogger(__name__)

#: Pure-DP mechanisms that are ``eps``-bounded-range as sampled here, hence ``eps**2/8``-zCDP (§8.2 (M2)).
#: The exponential mechanism qualifies because its sampler's exponent is ``eps u / (2 Delta_u)``; a
#: sampler with ``exp(eps u / Delta_u)`` would be ``2 eps``-bounded-range and must not be listed.
BOUNDED_RANGE = frozenset({"exponential"})

#: Orders ``alpha`` on which CKS20 Corollary 13 is minimised: ``1 + 10**x`` for ``x`` from -4 to 7.
#: Any order gives a valid bound, so a finite grid is conservative.
_ORDERS = 1.0 + np.logspace(-4, 7, 40_001)


# --------------------------------------------------------------------------
# costs (§8.2)
# --------------------------------------------------------------------------
def gaussian_rho(sensitivity_sq: int, sigma2: Fraction) -> Fraction:
    """``Delta2**2 / (2 sigma2)``: the zCDP cost of a discrete Gaussian measurement (§8.2 (M1)).

    ``sensitivity_sq`` is the squared l2-sensitivity (1 for a marginal under
    add/remove, 2 under replace-one, §8.3), an integer so the cost is exact.
    """
    if isinstance(sensitivity_sq, bool) or not isinstance(sensitivity_sq, int) or sensitivity_sq < 1:
        raise InputError(f"squared sensitivity must be a positive integer, got {sensitivity_sq!r}")
    if not isinstance(sigma2, Rational) or sigma2 <= 0:
        raise InputError(f"sigma2 must be a positive exact rational, got {sigma2!r}")
    return Fraction(sensitivity_sq) / (2 * Fraction(sigma2))


def exponential_rho(epsilon: Fraction) -> Fraction:
    """``eps**2 / 8``: the exponential mechanism with exponent ``eps u / (2 Delta_u)`` (§8.2 (M2))."""
    return as_epsilon(epsilon) ** 2 / 8


def pure_rho(epsilon: Fraction) -> Fraction:
    """``eps**2 / 2``: any pure ``eps``-DP step, e.g. RSPM (§8.2 (M3), C4)."""
    return as_epsilon(epsilon) ** 2 / 2


def _epsilon_for(rho: Fraction, factor: int, denominator: int) -> Fraction:
    """The largest ``eps`` on a ``1/denominator`` grid with ``eps**2 / factor <= rho``: ``floor(sqrt(factor rho) den) / den``."""
    rho = Fraction(rho)
    if rho <= 0:
        raise InputError(f"rho must be positive, got {rho}")
    return Fraction(math.isqrt(math.floor(factor * rho * denominator**2)), denominator)


def epsilon_for_exponential(rho: Fraction, denominator: int = 10**12) -> Fraction:
    """The largest ``eps`` on a ``1/denominator`` grid with ``eps**2 / 8 <= rho`` (rounded **down**, §8.2 (M2))."""
    return _epsilon_for(rho, 8, denominator)


def epsilon_for_pure(rho: Fraction, denominator: int = 10**12) -> Fraction:
    """The largest ``eps`` on a ``1/denominator`` grid with ``eps**2 / 2 <= rho`` (rounded **down**, §8.2 (M3))."""
    return _epsilon_for(rho, 2, denominator)


# --------------------------------------------------------------------------
# the ledger = the filter (§8.4)
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class ZcdpEvent:
    """One recorded step: ``rho``-zCDP under ``relation`` given all earlier outputs."""

    mechanism: str
    rho: Fraction
    relation: str
    note: str = ""

    def to_dict(self) -> dict:
        return {"mechanism": self.mechanism, "rho": str(self.rho), "relation": self.relation, "note": self.note}


@dataclass
class ZcdpLedger:
    """A zCDP budget and the steps charged against it; it never lets the sum exceed the budget (§8.4).

    Steps charge themselves *before* drawing noise: :meth:`charge` for a
    known ``rho`` (Gaussian measurements), :meth:`spend` for pure ``eps``-DP
    steps (the same call the selection mechanisms make on the
    ``(epsilon, delta)`` :class:`~synthdp.accounting.ledger.Ledger`),
    converted with :data:`BOUNDED_RANGE`.  A refused step raises
    :class:`~synthdp.core.errors.PrivacyError` and nothing is recorded.

    ``clip_budget`` is the total probability the run allows for the clip
    events of capped RSPM calls (docs/privacy.md §8.4, Theorem 8.1): each
    call's clip probability ``kappa`` is added up and a call that would take
    the sum past ``clip_budget`` is refused, so on every realisation the
    capped run differs from its uncapped twin with probability at most
    ``clip_budget``; the caller reserves ``(1 + e^eps) clip_budget`` of its
    ``delta`` for that before converting the rest to ``rho`` (§8.5).
    """

    rho_budget: Fraction
    clip_budget: Fraction = Fraction(0)
    #: Rows one neighbour may add or remove (one privacy unit, docs/privacy.md §10.6); every sensitivity reads it.
    contribution_bound: int = 1
    events: list[ZcdpEvent] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        self.contribution_bound = check_contribution_bound(self.contribution_bound)
        if isinstance(self.rho_budget, bool) or not isinstance(self.rho_budget, Rational) or self.rho_budget <= 0:
            raise InputError(f"rho_budget must be a positive exact rational (Fraction), got {self.rho_budget!r}")
        if isinstance(self.clip_budget, bool) or not isinstance(self.clip_budget, Rational) or self.clip_budget < 0:
            raise InputError(f"clip_budget must be an exact rational >= 0 (Fraction), got {self.clip_budget!r}")
        self.rho_budget = Fraction(self.rho_budget)
        self.clip_budget = Fraction(self.clip_budget)
        self._spent = Fraction(0)
        self._clipped = Fraction(0)

    @property
    def spent(self) -> Fraction:
        return self._spent

    @property
    def remaining(self) -> Fraction:
        return self.rho_budget - self._spent

    @property
    def clip_spent(self) -> Fraction:
        """The summed clip probabilities of the capped steps so far (at most :attr:`clip_budget`)."""
        return self._clipped

    @property
    def relation(self) -> str | None:
        return self.events[0].relation if self.events else None

    def charge(self, mechanism: str, rho: Fraction, relation: str, note: str = "") -> ZcdpEvent:
        """Record a ``rho``-zCDP step, or refuse it if the total would exceed the budget."""
        check_relation(relation)
        if not isinstance(rho, Rational) or rho <= 0:
            raise InputError(f"rho must be a positive exact rational, got {rho!r}")
        if self.relation is not None and relation != self.relation:
            raise PrivacyError(f"cannot compose a {relation} step ({mechanism}) with earlier {self.relation} "
                               "steps: all steps of a ledger must use one relation")
        if self._spent + rho > self.rho_budget:
            raise PrivacyError(f"zCDP budget exceeded: charging rho={float(rho):.6g} to {mechanism} {note}".rstrip()
                               + f" after {float(self._spent):.6g} of {float(self.rho_budget):.6g} would exceed the "
                               "budget; nothing was released")
        event = ZcdpEvent(mechanism, Fraction(rho), relation, note)
        self.events.append(event)
        self._spent += event.rho
        log.info("zcdp ledger: %s charged rho=%.6g [%s] %s; spent %.6g of %.6g", mechanism, float(event.rho), relation,
                 note, float(self._spent), float(self.rho_budget))
        return event

    def spend(self, mechanism: str, epsilon: Fraction, delta: Fraction, relation: str, note: str = "",
              *, clip: float | Fraction = 0) -> ZcdpEvent:
        """Charge a pure ``epsilon``-DP step: ``eps**2/8`` if bounded-range (:data:`BOUNDED_RANGE`), else ``eps**2/2``.

        A step with ``delta > 0`` is not zCDP and is refused (compose it in
        ``(epsilon, delta)`` space first, §8.5).  A capped step (RSPM) is pure
        except on its data-independent clip event of probability ``clip``: it
        is charged ``eps**2/2`` and its clip counted against
        :attr:`clip_budget`, or refused if that would overflow (§8.4).
        """
        clip = round_up(clip) if isinstance(clip, float) else Fraction(clip)
        if Fraction(delta) != 0:
            raise PrivacyError(f"{mechanism} is not pure (delta={delta}); a zCDP ledger only takes pure or zCDP "
                               "steps (docs/privacy.md §8.5)")
        if clip and mechanism in BOUNDED_RANGE:
            raise PrivacyError(f"{mechanism} has no clip event; a clip of {clip} is a caller's error")
        if self._clipped + clip > self.clip_budget:
            raise PrivacyError(f"{mechanism} {note}: its clip probability {float(clip):.3g} would take the run's "
                               f"clips past the reserved {float(self.clip_budget):.3g} (docs/privacy.md §8.4); "
                               "nothing was released".replace(" :", ":"))
        rho = exponential_rho(epsilon) if mechanism in BOUNDED_RANGE else pure_rho(epsilon)
        event = self.charge(mechanism, rho, relation, f"eps={float(epsilon):.6g} {note}".strip())
        self._clipped += clip
        return event


# --------------------------------------------------------------------------
# conversions (§8.5)
# --------------------------------------------------------------------------
def _log_delta_cks(rho: float, epsilon: float, orders: np.ndarray = _ORDERS) -> float:
    """``min`` over ``orders`` of ``log`` of CKS20 Cor. 13's ``e^{(a-1)(a rho - eps)} / (a-1) (1 - 1/a)**a``."""
    a = orders
    am1 = a - 1.0
    values = am1 * (a * rho - epsilon) - np.log(am1) + a * np.log1p(-1.0 / a)
    return float(values.min())


def dp_delta(rho: float | Rational, epsilon: float | Rational) -> Fraction:
    """The ``delta`` of ``rho``-zCDP at ``epsilon`` by CKS20 Corollary 13 on a grid of orders, rounded up."""
    rho, epsilon = float(rho), float(epsilon)
    if rho <= 0 or epsilon <= 0:
        raise InputError(f"rho and epsilon must be positive, got {rho}, {epsilon}")
    return min(Fraction(1), round_up(math.exp(_log_delta_cks(rho, epsilon)) * (1 + 2.0**-30)))


def dp_epsilon(rho: float | Rational, delta: float | Rational, *, tight: bool = True) -> Fraction:
    """The ``epsilon`` of ``rho``-zCDP at ``delta`` (rounded up): CKS20 Cor. 13, or ``rho + 2 sqrt(rho ln(1/delta))``."""
    rho, delta = float(rho), as_delta(delta)
    if rho <= 0 or delta <= 0:
        raise InputError(f"rho and delta must be positive, got {rho}, {delta}")
    default = zcdp_to_dp(rho, delta)
    if not tight:
        return round_up(default)
    target = math.log(delta) - 2.0**-30  # conservative in log space
    low, high = 0.0, default
    for _ in range(100):
        mid = (low + high) / 2
        low, high = (low, mid) if _log_delta_cks(rho, mid) <= target else (mid, high)
    return round_up(high)


@functools.lru_cache(maxsize=1024)
def rho_for_dp(epsilon: float | Rational, delta: float | Rational, *, tight: bool = True) -> Fraction:
    """The largest ``rho`` (rounded **down**) whose ``rho``-zCDP gives ``(epsilon, delta)``-DP (§8.5).

    Cached (a pure function of its arguments): a run with ``max_rows_per_unit="auto"`` plans every candidate ``k``
    (docs/privacy.md §10.6), and each plan asks for the same few conversions.

    ``tight=False``: the proved formula ``rho = Gamma**2`` with
    ``Gamma = eps / (sqrt(eps + iota) + sqrt(iota))``, ``iota = ln(1/delta)``
    (§4.2).  ``tight=True``: bisection on ``rho`` for CKS20 Corollary 13's
    ``delta(rho, eps) <= delta``, the infimum evaluated on a fine grid of
    orders (conservative: any order is a valid bound); never below the
    default formula, which it contains as the special case of one order.
    """
    epsilon, delta = as_epsilon(epsilon), as_delta(delta)
    if delta == 0:
        raise InputError("the measurement path needs delta > 0 (zCDP gives (epsilon, delta)-DP only for delta > 0)")
    default = zcdp_gamma(epsilon, delta) ** 2
    if not tight:
        return round_down(default * (1 - 2.0**-32))
    target = math.log(delta) - 2.0**-30
    low, high = default * (1 - 2.0**-20), 4 * default + float(epsilon)
    if _log_delta_cks(low, float(epsilon)) > target:  # the grid misses the default's order: keep the proved one
        return round_down(default * (1 - 2.0**-32))
    for _ in range(200):
        mid = (low + high) / 2
        low, high = (mid, high) if _log_delta_cks(mid, float(epsilon)) <= target else (low, mid)
    return round_down(low)
