"""Privacy accounting: the ledger, composition, and per-round budgets.

docs/privacy.md §1.4, §1.8 (C2-C4), §4.2 and §4.7.

* :class:`Ledger` records every private spend and **refuses** (raises
  :class:`~synthdp.core.errors.PrivacyError`, before anything is drawn or
  released) any spend after which the best composed total would exceed the
  budget.  The code that spends records the spend: RSPM, PRSMA and the
  selection mechanisms call :meth:`Ledger.spend` themselves.
* :func:`per_round_epsilon` inverts basic composition and zCDP (docs/privacy.md §4.2);
  :func:`prsma_per_round` inverts basic and advanced composition (docs/privacy.md §4.7).

Exactness.  Every privacy parameter is a :class:`fractions.Fraction`.  Basic
composition is summed exactly.  The advanced and zCDP totals involve logs
and square roots; they are evaluated in floating point and rounded **up**
(:func:`round_up`) by a relative margin of ``2**-40``, far above the
relative error (a few units of ``2**-53``) of the handful of correctly
rounded operations involved.  Parameters derived for a mechanism are
rounded **down** (:func:`round_down`); counts are rounded up.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field
from fractions import Fraction
from numbers import Rational
from typing import Callable, NamedTuple

from synthdp.core.errors import InputError, PrivacyError
from synthdp.core.parameters import Relation, is_integer, is_real

log = logging.getLogger(__name__)

#: The neighbouring relations (the enum is defined once, in :mod:`synthdp.core.parameters`).
REPLACE_ONE = Relation.REPLACE_ONE
ADD_REMOVE = Relation.ADD_REMOVE
RELATIONS = tuple(Relation)
#: Grid of a float epsilon: rounded down to a multiple of ``1/EPSILON_DENOMINATOR`` (docs/privacy.md §2.6).
EPSILON_DENOMINATOR = 10**6

#: Relative safety margin for floating-point evaluation of composition bounds.
FLOAT_MARGIN = 2.0**-40
#: Extra relative slack left by the budget inversions, so that the ledger's own
#: upward rounding (FLOAT_MARGIN) of the same total can never exceed the budget.
_INVERSION_SLACK = 2.0**-32
#: Grid of derived privacy parameters (rounded down onto it).
PARAMETER_DENOMINATOR = 10**12


# --------------------------------------------------------------------------
# exact conversions and directed rounding
# --------------------------------------------------------------------------
#: The label of the private choice of the rows kept per unit in the ledger (docs/privacy.md §10.6).
UNIT_BOUND_LABEL = "rows per unit"


def to_fraction_down(x: float | Rational, denominator: int = 10**6) -> Fraction:
    """The largest multiple of ``1/denominator`` that is ``<= x``, exactly (docs/privacy.md §2.6).

    Converts a user's float privacy parameter to an exact rational by
    rounding **down** (a smaller epsilon is always safe).  The float's exact
    binary value is used, so no rounding in the multiplication can push the
    result above ``x``.
    """
    if not is_integer(denominator) or denominator < 1:
        raise ValueError(f"denominator must be a positive integer, got {denominator!r}")
    if isinstance(x, float) and not math.isfinite(x):
        raise ValueError(f"cannot convert {x!r} to a fraction")
    return Fraction(math.floor(Fraction(x) * denominator), denominator)


def check_contribution_bound(k: int) -> int:
    """The rows one neighbour may add or remove (``k >= 1``; docs/privacy.md §10.6), validated."""
    if not is_integer(k) or k < 1:
        raise InputError(f"contribution_bound (rows per privacy unit) must be a positive integer, got {k!r}")
    return int(k)


def check_relation(relation: str) -> Relation:
    """The neighbouring relation as a :class:`Relation`, validated (docs/privacy.md §1.3)."""
    try:
        return Relation(relation)
    except ValueError:
        raise InputError(f"relation must be one of {[r.value for r in Relation]}, got {relation!r}") from None


def as_epsilon(value: float | Rational, name: str = "epsilon") -> Fraction:
    """A positive epsilon as an exact rational, by :func:`to_rational_down` on the grid ``1/10**6``.

    A float epsilon below ``1e-6`` would become 0 and is refused (pass a
    :class:`~fractions.Fraction` for smaller ones).
    """
    eps = to_rational_down(value, name, EPSILON_DENOMINATOR)
    if eps <= 0:
        raise InputError(f"{name} must be > 0, got {value!r}" + (
            f" (a float {name} is rounded down to a multiple of 1e-6; pass a fractions.Fraction for smaller values)"
            if is_real(value) and value > 0 else ""))
    return eps


def as_delta(value: float | Rational, name: str = "delta") -> Fraction:
    """A delta in ``[0, 1)`` as an exact rational, by :func:`to_rational_down` with no grid.

    A float delta is kept at its exact binary value: it is never rounded
    (and so never becomes 0, however small), and never rises above the float.
    """
    dlt = to_rational_down(value, name, None)
    if not 0 <= dlt < 1:
        raise InputError(f"{name} must lie in [0, 1), got {value!r}")
    return dlt


def to_rational_down(value: float | Rational, name: str, denominator: int | None) -> Fraction:
    """The one rule turning a user's privacy parameter into an exact rational (docs/privacy.md §2.6).

    Integers and :class:`~fractions.Fraction` values are exact already.  A
    float (Python or numpy) is read at its exact binary value and rounded
    **down** onto the multiples of ``1/denominator`` (``None``: no rounding),
    so the rational never exceeds what the caller passed.  Epsilons use the
    grid ``1/10**6`` (small denominators keep the exact samplers' integers
    small); deltas use none.  Bools, NaN, infinities, negative values and
    non-numbers are refused with a message naming ``name``.
    """
    if not is_real(value):
        raise InputError(f"{name} must be a number (int, float, Fraction or a numpy scalar), got {value!r}")
    if not isinstance(value, Rational):
        value = float(value)
        if not math.isfinite(value):
            raise InputError(f"{name} must be finite, got {value!r}")
    exact = Fraction(value)
    if exact < 0:
        raise InputError(f"{name} must not be negative, got {value!r}")
    if denominator is None or isinstance(value, Rational):
        return exact
    return to_fraction_down(exact, denominator)


def round_up(x: float) -> Fraction:
    """An exact rational ``>= x`` for a float ``x >= 0`` computed with small relative error.

    The result is the float ``x (1 + 2**-40)`` as an exact (dyadic) Fraction:
    relative precision is kept even for tiny deltas such as ``1e-30``.
    """
    if not math.isfinite(x) or x < 0:
        raise ValueError(f"round_up needs a finite x >= 0, got {x!r}")
    return Fraction(x * (1 + FLOAT_MARGIN))


def round_down(x: float, denominator: int | None = PARAMETER_DENOMINATOR) -> Fraction:
    """An exact rational ``<= x`` for a float ``x >= 0`` computed with small relative error.

    The largest multiple of ``1/denominator`` below ``x (1 - 2**-40)`` (small
    denominators keep the samplers' integers small); ``denominator=None``
    gives that float itself as an exact dyadic Fraction (for tiny deltas).
    """
    if not math.isfinite(x) or x < 0:
        raise ValueError(f"round_down needs a finite x >= 0, got {x!r}")
    lowered = x * (1 - FLOAT_MARGIN)
    return Fraction(lowered) if denominator is None else to_fraction_down(lowered, denominator)


# --------------------------------------------------------------------------
# the composition theorems (docs/privacy.md §1.8 C2-C4, Proposition 4.2)
# --------------------------------------------------------------------------
def zcdp_to_dp(rho: float | Rational, delta: float | Rational) -> float:
    """``rho + 2 sqrt(rho ln(1/delta))``: rho-zCDP gives (this, delta)-DP (Proposition 4.2)."""
    iota = -math.log(delta)
    return float(rho) + 2.0 * math.sqrt(float(rho) * iota)


def advanced_composition(epsilon: float | Rational, k: int, delta_prime: float | Rational) -> float:
    """``sqrt(2k ln(1/delta')) eps + k eps (e^eps - 1)`` (C3, Dwork-Rothblum-Vadhan 2010)."""
    eps = float(epsilon)
    return math.sqrt(2.0 * k * -math.log(delta_prime)) * eps + k * eps * math.expm1(eps)


def zcdp_gamma(epsilon: float | Rational, delta: float | Rational) -> float:
    """``Gamma = sqrt(eps + iota) - sqrt(iota)`` in its stable form ``eps / (sqrt(eps + iota) + sqrt(iota))``.

    ``iota = ln(1/delta)``.  The zCDP route gives total ``(eps, delta)`` iff
    ``rho <= Gamma**2`` (docs/privacy.md §4.2).
    """
    iota = -math.log(delta)
    return float(epsilon) / (math.sqrt(float(epsilon) + iota) + math.sqrt(iota))


# --------------------------------------------------------------------------
# events and the ledger
# --------------------------------------------------------------------------
@dataclass(frozen=True)
class PrivacyEvent:
    """One recorded spend.

    The mechanism is ``(epsilon, delta)``-DP under ``relation`` given all
    earlier outputs, **except** on an event of probability at most ``clip``
    that depends on its noise only, never on the data (e.g. RSPM's
    representability cap, Corollary 2.4).  On its own it is then
    ``(epsilon, delta + (1 + e^epsilon) clip)``-DP (:attr:`clip_delta`); see
    :class:`Ledger` for how clips compose.
    """

    mechanism: str
    epsilon: Fraction
    delta: Fraction
    relation: str
    note: str = ""
    clip: Fraction = Fraction(0)
    #: Composed by basic composition ahead of every later spend (e.g. partition selection, docs/privacy.md §9).
    ahead: bool = False

    @property
    def clip_delta(self) -> Fraction | None:
        """Corollary 2.4's ``(1 + e^epsilon) clip``, rounded up; None if it is at least 1."""
        return _clip_cost(self.epsilon, self.clip)

    @property
    def pure(self) -> bool:
        """Pure apart from the data-independent clip event (eligible for zCDP)."""
        return self.delta == 0

    def to_dict(self, pure: bool = False) -> dict:
        """The event as plain data; ``pure=True`` (a pure-DP run) leaves out ``delta`` and ``clip``, both 0 there."""
        if pure and (self.delta or self.clip):
            raise ValueError(f"{self.mechanism} has delta={self.delta}, clip={self.clip}: not a pure spend")
        out = {"mechanism": self.mechanism, "epsilon": str(self.epsilon), "delta": str(self.delta),
               "clip": float(self.clip), "relation": self.relation, "note": self.note, "ahead": self.ahead}
        if pure:
            del out["delta"], out["clip"]
        return out


@dataclass(frozen=True)
class Spent:
    """A composed total: ``(epsilon, delta)``-DP by composition ``method`` (rounded up)."""

    epsilon: Fraction
    delta: Fraction
    method: str

    def __str__(self) -> str:
        return f"({float(self.epsilon):.6g}, {float(self.delta):.3g})-DP by {self.method} composition"


@dataclass(frozen=True)
class _Totals:
    """Running aggregates of a list of events: all that the composition routes need."""

    count: int = 0
    epsilon: Fraction = Fraction(0)
    delta: Fraction = Fraction(0)
    clip: Fraction = Fraction(0)
    clip_delta: Fraction | None = Fraction(0)
    rho: Fraction = Fraction(0)
    all_pure: bool = True
    common: tuple[Fraction, Fraction] | None = None

    def add(self, event: PrivacyEvent) -> "_Totals":
        pair = (event.epsilon, event.delta)
        own = event.clip_delta
        return _Totals(self.count + 1, self.epsilon + event.epsilon, self.delta + event.delta,
                       self.clip + event.clip,
                       None if self.clip_delta is None or own is None else self.clip_delta + own,
                       self.rho + event.epsilon**2 / 2, self.all_pure and event.pure,
                       pair if self.count == 0 or self.common == pair else None)


Route = Callable[[_Totals, Fraction], "tuple[Fraction, Fraction] | None"]


def _advanced(totals: _Totals, delta_prime: Fraction) -> tuple[Fraction, Fraction] | None:
    """Advanced composition (C3) of ``k`` events sharing one ``(eps, delta)``: ``(..., k delta + delta')``."""
    if delta_prime <= 0 or totals.common is None:
        return None
    return round_up(advanced_composition(totals.common[0], totals.count, delta_prime)), totals.delta + delta_prime


def _zcdp(totals: _Totals, delta_prime: Fraction) -> tuple[Fraction, Fraction] | None:
    """zCDP (C4): pure events are ``eps**2/2``-zCDP, rhos add, Proposition 4.2 converts."""
    if delta_prime <= 0 or not totals.all_pure:
        return None
    return round_up(zcdp_to_dp(totals.rho, delta_prime)), delta_prime


#: Routes with a free delta' (basic composition, C2, is exact and handled by the ledger itself).
_ROUTES: dict[str, Route] = {"advanced": _advanced, "zcdp": _zcdp}


@dataclass
class Ledger:
    """Budget ``(epsilon_budget, delta_budget)`` and the spends recorded against it (docs/privacy.md §4.2, §4.7).

    :meth:`total` takes, among basic composition (C2), advanced composition
    (C3; all events with one common ``(eps, delta)``) and zCDP (C4 and
    Proposition 4.2; all events pure), the route with the smallest epsilon
    whose delta fits the budget.  The advanced and zCDP routes spend the
    whole remaining delta as their free ``delta'``.  All routes hold
    simultaneously for a sequence of spends fixed in advance (as in the game,
    where ``T`` and ``epsilon_0`` are public), so reporting the best is valid;
    the basic route also holds when later parameters depend on earlier outputs.

    *Clip events.*  For basic composition each event counts as
    ``(eps_i, delta_i + (1 + e^eps_i) clip_i)``-DP (Corollary 2.4).  For the
    other routes, couple the real run with the run of the ideal (uncapped)
    mechanisms on the same randomness.  They differ only if some clip event
    occurs, which has probability at most ``kappa = sum(clip)`` on every
    dataset.  If the ideal composition is ``(eps, delta)``-DP, then
    ``P[M(D) in E] <= P[M_ideal(D) in E] + kappa
    <= e^eps (P[M(D') in E] + kappa) + delta + kappa``: the real one is
    ``(eps, delta + (1 + e^eps) kappa)``-DP (Corollary 2.4 for a whole run).

    *Spends ahead.*  A spend recorded with ``ahead=True`` (allowed only before
    every other spend) is an ``(eps, delta)``-DP mechanism that runs first;
    the later spends are composed among themselves by the best route within
    the budget left, and the two parts by basic composition (C2): an
    ``(eps, delta)`` spend is never converted to zCDP (docs/privacy.md §9).

    *Contribution bound.*  ``contribution_bound`` is the ``k`` of the
    relation the spends are under: neighbours differ by at most ``k`` rows
    (one privacy unit, docs/privacy.md §10.6; ``k = 1`` is one row).  Every
    mechanism that turns a per-row sensitivity into noise multiplies it by
    this ``k`` (Lemma 10.62), so each recorded ``(eps, delta)`` holds for
    ``k``-row neighbours.
    """

    epsilon_budget: Fraction
    delta_budget: Fraction = Fraction(0)
    contribution_bound: int = 1
    events: list[PrivacyEvent] = field(default_factory=list, init=False)

    def __post_init__(self) -> None:
        self.contribution_bound = check_contribution_bound(self.contribution_bound)
        self.epsilon_budget = as_epsilon(self.epsilon_budget, "epsilon_budget")
        self.delta_budget = as_delta(self.delta_budget, "delta_budget")
        self._totals = _Totals()
        self._ahead = (Fraction(0), Fraction(0))

    @property
    def relation(self) -> str | None:
        """The neighbouring relation of every recorded spend (None before the first)."""
        return self.events[0].relation if self.events else None

    def bound_contributions(self, k: int) -> None:
        """Fix the contribution bound ``k`` once it is chosen privately (docs/privacy.md §10.6).

        Allowed only while the bound is 1 and every recorded spend is that
        choice (its score's sensitivity is stated per unit): no spend yet read the bound.
        """
        if self.contribution_bound != 1 or any(UNIT_BOUND_LABEL not in e.note for e in self.events):
            raise PrivacyError("the contribution bound must be fixed before any spend that reads it")
        self.contribution_bound = check_contribution_bound(k)

    def spend(self, mechanism: str, epsilon: Fraction, delta: Fraction, relation: str, note: str = "",
              *, clip: float | Fraction = 0, ahead: bool = False) -> PrivacyEvent:
        """Record a spend, or refuse it with :class:`PrivacyError` if the total would exceed the budget.

        Call it *before* drawing any noise: a refused spend releases nothing.
        ``clip`` bounds the probability of a data-independent event on which
        the mechanism departs from an ``(epsilon, delta)``-DP ideal one.
        ``ahead`` composes the spend by basic composition ahead of all later
        ones (see the class docstring); it must precede every other spend.
        """
        event = PrivacyEvent(mechanism, as_epsilon(epsilon), as_delta(delta), check_relation(relation), note,
                             round_up(clip) if isinstance(clip, float) else Fraction(clip), bool(ahead))
        if self.relation is not None and event.relation != self.relation:
            raise PrivacyError(f"cannot compose a {event.relation} spend ({mechanism}) with earlier "
                               f"{self.relation} spends: all spends of a ledger must use one relation")
        if event.ahead and (self._totals.count or event.clip):
            raise PrivacyError(f"a spend composed ahead ({mechanism}) must come before every other spend and "
                               "have no clip event")
        totals = self._totals if event.ahead else self._totals.add(event)
        ahead = (self._ahead[0] + event.epsilon, self._ahead[1] + event.delta) if event.ahead else self._ahead
        best = self._best(totals, ahead)
        if best is None or best.epsilon > self.epsilon_budget:
            raise PrivacyError(
                f"privacy budget exceeded: spending ({float(event.epsilon):.6g}, {float(event.delta):.3g}) on "
                f"{mechanism} {note}".rstrip() + f" after {len(self.events)} spends ({self.total()}) would exceed "
                f"the budget ({float(self.epsilon_budget):.6g}, {float(self.delta_budget):.3g}); nothing was "
                "released" + (" (a mechanism with a representability cap needs delta > 0, Corollary 2.4)"
                              if self.delta_budget == 0 and event.clip > 0 else ""))
        self.events.append(event)
        self._totals, self._ahead = totals, ahead
        log.info("ledger: %s spent (%.6g, %.3g) [%s] %s; total %s", mechanism, float(event.epsilon), float(event.delta),
                 event.relation, note, best)
        return event

    def total(self) -> Spent:
        """The tightest valid composed total of the recorded spends (rounded up)."""
        if not self.events:
            return Spent(Fraction(0), Fraction(0), "none")
        best = self._best(self._totals, self._ahead)
        assert best is not None, "every recorded spend was checked to fit the budget"
        return best

    def _best(self, totals: _Totals, ahead: tuple[Fraction, Fraction]) -> Spent | None:
        """The spends ahead plus the best route for the rest within the budget they leave (None: nothing fits)."""
        if not totals.count:
            return Spent(ahead[0], ahead[1], "basic") if ahead[1] <= self.delta_budget else None
        epsilon_left, delta_left = self.epsilon_budget - ahead[0], self.delta_budget - ahead[1]
        feasible = [Spent(ahead[0] + s.epsilon, ahead[1] + s.delta,
                          s.method if ahead == (0, 0) else f"basic (ahead) + {s.method}")
                    for s in self._candidates(totals, epsilon_left, delta_left) if s.delta <= delta_left]
        return min(feasible, key=lambda s: (s.epsilon, s.delta)) if feasible else None

    def _candidates(self, totals: _Totals, epsilon_budget: Fraction, delta_budget: Fraction) -> list[Spent]:
        """Every route's total, with the clip correction ``(1 + e^eps) kappa`` added to delta.

        Basic composition (C2) is exact: ``(sum eps, sum delta)`` plus the
        events' own clip deltas.  The routes with a free ``delta'`` are only
        useful below ``ceiling = min(sum eps, budget)`` (else basic is at
        least as good, or the spend is refused), so their coupled clip term is
        reserved at ``ceiling`` and ``delta'`` is whatever delta budget is left.
        """
        out = []
        if totals.clip_delta is not None:
            out.append(Spent(totals.epsilon, totals.delta + totals.clip_delta, "basic"))
        ceiling = min(totals.epsilon, epsilon_budget)
        reserve = _clip_cost(ceiling, totals.clip)
        if reserve is None:
            return out
        for name, route in _ROUTES.items():
            pair = route(totals, delta_budget - totals.delta - reserve)
            if pair is not None and pair[0] <= ceiling:
                out.append(Spent(pair[0], pair[1] + reserve, name))
        return out


def _clip_cost(epsilon: Fraction, kappa: Fraction) -> Fraction | None:
    """``(1 + e^epsilon) kappa`` rounded up, or None when it is at least 1 (no guarantee left)."""
    if kappa == 0:
        return Fraction(0)
    log_cost = math.log(kappa.numerator) - math.log(kappa.denominator) + float(epsilon) + math.log1p(math.exp(-float(epsilon)))
    return round_up(math.exp(log_cost)) if log_cost < 0 else None


# --------------------------------------------------------------------------
# budget inversions
# --------------------------------------------------------------------------
def per_round_epsilon(epsilon: Fraction, delta: Fraction, T: int) -> Fraction:
    """Per-round pure budget for ``T`` rounds from a total ``(epsilon, delta)`` (docs/privacy.md §4.2).

    ``epsilon_0 = max(epsilon / T, Gamma sqrt(2 / T))``: the first is basic
    composition, the second zCDP with ``rho = T eps_0**2 / 2 = Gamma**2``,
    whose Proposition 4.2 conversion is exactly ``epsilon``.  The zCDP value
    is rounded **down** to a rational (with a relative slack of ``2**-32`` so
    that the ledger's rounded-up total stays within the budget); ``epsilon/T``
    is exact.  ``delta = 0`` gives ``epsilon / T``.
    """
    epsilon, delta = as_epsilon(epsilon), as_delta(delta)
    if isinstance(T, bool) or not isinstance(T, int) or T < 1:
        raise InputError(f"T must be a positive integer, got {T!r}")
    basic = epsilon / T
    if delta == 0:
        return basic
    zcdp = round_down(zcdp_gamma(epsilon, delta) * math.sqrt(2.0 / T) * (1 - _INVERSION_SLACK))
    return max(basic, zcdp)


#: Relative tolerance of :func:`rounds_for` on its per-round target.
ROUNDS_SLACK = Fraction(1, 10**4)


def rounds_for(epsilon: Fraction, delta: Fraction, epsilon0: Fraction, max_rounds: int = 100_000) -> int:
    """The most rounds ``T`` whose per-round budget (:func:`per_round_epsilon`) is still at least ``epsilon0``.

    This turns a target per-round strength into a number of rounds that
    spends the whole total budget (docs/privacy.md §4.2's inversion read the other
    way); at least 1 round, at most ``max_rounds``.  It depends only on
    public parameters.  ``epsilon0`` is a strength target, not a privacy
    quantity, so it is met up to a relative ``ROUNDS_SLACK``: a decimal
    budget that a float stores a hair low (``0.15`` is read as ``0.149999``)
    still gets its 15 rounds of ``0.01``.  The per-round budget actually
    spent is :func:`per_round_epsilon` of the result, within the total.
    """
    epsilon0 = as_epsilon(epsilon0, "epsilon0") * (1 - ROUNDS_SLACK)
    if per_round_epsilon(epsilon, delta, 1) < epsilon0:
        return 1
    lo, hi = 1, max_rounds  # per_round_epsilon decreases in T: bisect for the last T that reaches epsilon0
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if per_round_epsilon(epsilon, delta, mid) >= epsilon0:
            lo = mid
        else:
            hi = mid - 1
    return lo


class PRSMABudget(NamedTuple):
    """Per-round ``(epsilon*, delta*)`` for PRSMA rounds (docs/privacy.md §4.7)."""

    epsilon: Fraction
    delta: Fraction


def prsma_per_round(epsilon: Fraction, delta: Fraction, T: int) -> PRSMABudget:
    """Per-round ``(eps*, delta*)`` of ``T`` PRSMA rounds within a total ``(epsilon, delta)`` (docs/privacy.md §4.7).

    Advanced composition with ``delta' = delta/2`` and ``delta* = delta/(2T)``:
    the largest ``eps*`` with ``sqrt(2T ln(2/delta)) eps* + T eps* (e^eps* - 1)
    <= epsilon``, found by bisection (the left side increases).  Basic
    composition gives ``(epsilon/T, delta/T)``.  The larger ``eps*`` wins.
    """
    epsilon, delta = as_epsilon(epsilon), as_delta(delta)
    if delta == 0:
        raise InputError("PRSMA needs delta > 0 (it is (epsilon, delta)-DP, docs/privacy.md §3)")
    if isinstance(T, bool) or not isinstance(T, int) or T < 1:
        raise InputError(f"T must be a positive integer, got {T!r}")
    target = float(epsilon) * (1 - _INVERSION_SLACK)
    half = delta / 2
    low, high = 0.0, float(epsilon)
    for _ in range(200):
        mid = (low + high) / 2
        low, high = (mid, high) if advanced_composition(mid, T, half) <= target else (low, mid)
    advanced = round_down(low)
    if advanced > epsilon / T:
        log.info("prsma_per_round: advanced composition, eps*=%s delta*=%s", advanced, delta / (2 * T))
        return PRSMABudget(advanced, delta / (2 * T))
    log.info("prsma_per_round: basic composition, eps*=%s delta*=%s", epsilon / T, delta / T)
    return PRSMABudget(epsilon / T, delta / T)
