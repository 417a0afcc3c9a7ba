"""Private domain discovery: thresholded discrete-Laplace partition selection (docs/privacy.md §9).

A category list read off the data is a release: a value held by one record
(an ID, a rare surname) would appear in the output and point at its record.
When a categorical column has no public categories, its domain is learned
with algorithm PS of docs/privacy.md §9:

* for every value ``v`` occurring in the column (count ``c_v >= 1``), draw
  ``Z_v ~ DLap(eps_p)`` independently with the exact sampler
  :func:`~synthdp.mechanisms.noise.discrete_laplace`;
* release ``v`` iff ``c_v + Z_v >= tau``, where ``tau = 1 + k`` and ``k`` is
  the least integer ``>= 1`` with ``t**k / (1 + t) <= delta_p``, ``t = e**-eps_p``;
* release only the set of values (the schema orders it by the labels
  alone), never counts or noise; every record whose value was not released
  is encoded as the column's missing value before any later step
  (:meth:`synthdp.core.schema.Schema.with_learned`).

Theorem 9.1: this is ``(eps_p, delta_p)``-DP per column under add/remove and
``(2 eps_p, 2 delta_p)``-DP under replace-one. Each column is charged to the
ledger as a spend composed by basic composition *ahead of* the generator's
own spends (an ``(eps, delta)`` event is never converted to zCDP).

``k`` involves ``e**-eps_p``, which is irrational; :func:`threshold` finds it
with rigorous rational bounds on the exponential (:func:`exp_bounds`), so
the real ``t**k / (1 + t)`` never exceeds ``delta_p`` (when a bound cannot
decide, the larger ``k``, the safer one, is taken).
"""

from __future__ import annotations

import functools
import logging
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from fractions import Fraction

import numpy as np
import pandas as pd

from synthdp.accounting.ledger import ADD_REMOVE, Ledger, as_delta, as_epsilon, check_relation
from synthdp.core.errors import InputError
from synthdp.core.owner import owner_warning
from synthdp.core.schema import Schema, label_order
from synthdp.core.tallies import Tallies, as_tallies
from synthdp.mechanisms.gaussian import discrete_gaussian_array, sigma2_up
from synthdp.mechanisms.noise import discrete_laplace
from synthdp.mechanisms.randomness import PrivateRandom

__all__ = [
    "EMPTIED_SHARE",
    "warn_rare_values",
    "DOMAIN_DELTA_SHARE",
    "DOMAIN_EPSILON_SHARE",
    "DomainLearning",
    "FEW_VALUES_SHARE",
    "check_threshold",
    "JOINT_RHO_SHARE",
    "JointSelection",
    "LearnedColumn",
    "domain_budget",
    "exp_bounds",
    "gaussian_tail",
    "joint_selection",
    "learn_domains_jointly",
    "learn_domains",
    "placeholder_schema",
    "select_categories",
    "tail_bounds",
    "threshold",
    "unit_threshold",
]

log = logging.getLogger(__name__)

#: Public share of the user's epsilon spent on learning domains, split evenly over the columns to learn.
DOMAIN_EPSILON_SHARE = Fraction(1, 10)
#: Public share of the user's delta spent on learning domains (``delta_p = delta / (4 J)`` under add/remove).
DOMAIN_DELTA_SHARE = Fraction(1, 4)
#: Bits kept by the rational bounds of :func:`exp_bounds` (relative error about ``2**-200``).
_PRECISION = 200
_TAYLOR_TERMS = 40


def _down(x: Fraction) -> Fraction:
    return Fraction(math.floor(x * 2**_PRECISION), 2**_PRECISION)


def _up(x: Fraction) -> Fraction:
    return Fraction(math.ceil(x * 2**_PRECISION), 2**_PRECISION)


def exp_bounds(x: Fraction) -> tuple[Fraction, Fraction]:
    """Rationals ``lo <= e**x <= hi`` for a rational ``x >= 0``, with relative gap about ``2**-190``.

    Halve ``x`` ``r`` times down to ``y <= 1/2``. For ``y`` the Taylor sum
    ``S`` of ``N`` terms is a lower bound (all terms are positive) and
    ``S + 2 y**N / N!`` an upper bound (the tail is at most its first term
    times ``1 / (1 - y/(N+1)) <= 2``). Squaring ``r`` times gives ``e**x``;
    every rounding goes down for ``lo`` and up for ``hi``.
    """
    x = Fraction(x)
    if x < 0:
        raise ValueError(f"exp_bounds needs x >= 0, got {x}")
    halvings = 0
    while x / 2**halvings > Fraction(1, 2):
        halvings += 1
    y = x / 2**halvings
    total, term = Fraction(0), Fraction(1)
    for i in range(_TAYLOR_TERMS):
        total += term
        term = term * y / (i + 1)
    lo, hi = _down(total), _up(total + 2 * term)
    for _ in range(halvings):
        lo, hi = _down(lo * lo), _up(hi * hi)
    return lo, hi


def tail_bounds(epsilon: Fraction, j: int) -> tuple[Fraction, Fraction]:
    """Rational bounds on ``P[Z >= j] = t**j / (1 + t) = 1 / (e**(j eps) + e**((j-1) eps))``, ``Z ~ DLap(eps)``, ``j >= 1``.

    docs/privacy.md §1.6 (F2).
    """
    if isinstance(j, bool) or not isinstance(j, int) or j < 1:
        raise ValueError(f"tail_bounds needs an integer j >= 1, got {j!r}")
    epsilon = Fraction(epsilon)
    lo_j, hi_j = exp_bounds(j * epsilon)
    lo_before, hi_before = exp_bounds((j - 1) * epsilon)
    return 1 / (hi_j + hi_before), 1 / (lo_j + lo_before)


def threshold(epsilon: Fraction, delta: Fraction) -> int:
    """``tau = 1 + k``, ``k`` the least integer ``>= 1`` with ``t**k / (1 + t) <= delta``, ``t = e**-epsilon``.

    The test uses the upper bound of :func:`tail_bounds`, so the true tail
    at ``k`` is at most ``delta`` whatever the rounding; ``k`` is the least
    integer that this certified test accepts (docs/privacy.md §9).
    """
    epsilon, delta = as_epsilon(epsilon, "epsilon_p"), as_delta(delta, "delta_p")
    if delta <= 0:
        raise InputError("partition selection needs delta_p > 0: a value held by one record must be released "
                         "with probability at most delta_p, which is never 0")

    def fits(k: int) -> bool:
        return tail_bounds(epsilon, k)[1] <= delta

    estimate = (math.log(1 / float(delta)) - math.log1p(math.exp(-float(epsilon)))) / float(epsilon)
    k = max(1, math.ceil(estimate) - 1) if math.isfinite(estimate) else 1
    while not fits(k):
        k += 1
    while k > 1 and fits(k - 1):
        k -= 1
    return 1 + k


def unit_threshold(epsilon: Fraction, delta: Fraction, k: int = 1) -> tuple[Fraction, int]:
    """The noise rate and threshold of PS for units of ``k`` rows.

    They are ``(eps_p / k, k - 1 + threshold(eps_p / k, delta_p / k))``.

    Theorem 10.63 (docs/privacy.md §10.6): with rate ``a = eps_p / k`` and
    ``tau = k + j``, ``j`` least with ``t**j / (1 + t) <= delta_p / k``, PS is
    ``(eps_p, delta_p)``-DP for neighbours of up to ``k`` rows; ``k = 1`` is §9.
    """
    rate = as_epsilon(epsilon, "epsilon_p") / k
    return rate, k - 1 + threshold(rate, as_delta(delta, "delta_p") / k)


def select_categories(counts: Mapping[str, int], *, epsilon: Fraction, delta: Fraction, rng: PrivateRandom,
                      ledger: Ledger, relation: str = ADD_REMOVE, column: str = "") -> tuple[str, ...]:
    """Algorithm PS (docs/privacy.md §9) on one column: the released values, in :func:`label_order`.

    ``counts`` maps each value's label to its count in the private data
    (values with count 0 are ignored). ``(epsilon, delta)`` are the
    mechanism's ``(eps_p, delta_p)``, for neighbours of up to
    ``ledger.contribution_bound`` rows (:func:`unit_threshold`, §10.6); the ledger is charged ``(eps_p, delta_p)``
    under add/remove and ``(2 eps_p, 2 delta_p)`` under replace-one
    (Theorem 9.1), before any noise is drawn. The noise of each value is
    drawn in label order from ``rng``; callers pass a stream of its own
    (:meth:`PrivateRandom.spawn`) so that nothing else depends on how many
    values the column holds.
    """
    epsilon, delta = as_epsilon(epsilon, "epsilon_p"), as_delta(delta, "delta_p")
    rate, tau = unit_threshold(epsilon, delta, ledger.contribution_bound)
    factor = 1 if check_relation(relation) == ADD_REMOVE else 2
    ledger.spend("partition-selection", factor * epsilon, factor * delta, relation,
                 f"column {column!r}, threshold {tau}".strip(), ahead=True)
    released = []
    for label in sorted(counts, key=label_order):
        count = counts[label]
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise InputError(f"count of value {label!r} must be a non-negative integer, got {count!r}")
        if count >= 1 and count + discrete_laplace(rate.numerator, rate.denominator, rng) >= tau:
            released.append(label)
    return tuple(released)


def domain_budget(epsilon: Fraction, delta: Fraction | None, columns: int,
                  relation: str = ADD_REMOVE) -> tuple[Fraction, Fraction]:
    """The per-column ``(eps_p, delta_p)`` of PS from the user's total budget (public; docs/privacy.md §9).

    The columns to learn share ``DOMAIN_EPSILON_SHARE`` of ``epsilon`` and
    ``DOMAIN_DELTA_SHARE`` of ``delta`` evenly: under add/remove
    ``eps_p = epsilon / (10 J)`` and ``delta_p = delta / (4 J)``; under
    replace-one, where each column costs ``(2 eps_p, 2 delta_p)``, both are
    halved so the charge is the same share. Pure DP (``delta`` None or 0)
    cannot learn a domain and is refused with the remedy.
    """
    if delta is None or delta == 0:
        head = ("learning a column's categories privately (partition selection, docs/privacy.md §9) needs delta > 0, "
                "and pure DP was requested")
        raise InputError(f"{head} (delta=None). Give the categories publicly (categories={{col: [...]}} or a "
                         "schema file) or pass a delta (e.g. delta=1e-9)",
                         cli=f"{head} (no --delta). Give the categories publicly (--schema FILE) or pass a delta "
                             "(e.g. --delta 1e-9)")
    if isinstance(columns, bool) or not isinstance(columns, int) or columns < 1:
        raise InputError(f"columns must be a positive integer, got {columns!r}")
    epsilon, delta = as_epsilon(epsilon), as_delta(delta)
    split = columns * (1 if check_relation(relation) == ADD_REMOVE else 2)
    return epsilon * DOMAIN_EPSILON_SHARE / split, delta * DOMAIN_DELTA_SHARE / split


@dataclass(frozen=True)
class LearnedColumn:
    """What learning one column's domain cost and gave (all of it releasable)."""

    column: str
    epsilon: Fraction
    delta: Fraction
    threshold: int
    released: int

    def to_dict(self) -> dict:
        return {"column": self.column, "epsilon": str(self.epsilon), "delta": str(self.delta),
                "threshold": self.threshold, "released": self.released}


@dataclass(frozen=True)
class DomainLearning:
    """The schema with learned domains, and per column what PS charged (docs/privacy.md §9)."""

    schema: Schema
    columns: tuple[LearnedColumn, ...]
    #: Learned jointly in the zCDP filter (docs/privacy.md §10.5): its charge there and the delta it reserved.
    rho: Fraction = Fraction(0)
    filter_delta: Fraction = Fraction(0)

    @property
    def epsilon(self) -> Fraction:
        """Total epsilon charged (basic composition over the columns)."""
        return sum((c.epsilon for c in self.columns), Fraction(0))

    @property
    def delta(self) -> Fraction:
        """Total delta charged."""
        return sum((c.delta for c in self.columns), Fraction(0))


#: The one label of a placeholder domain: a learned column planned before its categories are drawn.
PLACEHOLDER = "<to be learned>"


def placeholder_schema(schema: Schema) -> Schema:
    """``schema`` with every column to learn given the placeholder domain (:data:`PLACEHOLDER` and the missing
    value): what the run is planned on before partition selection draws anything (docs/privacy.md §10.1). The
    placeholder is text, whatever dtype the column will be written back with (it sizes the plan only)."""
    untyped = Schema(tuple(replace(a, dtype=None) if a.name in schema.to_learn else a for a in schema.attributes),
                     schema.missing_values)
    return untyped.with_learned({c: [PLACEHOLDER] for c in schema.to_learn})


def planned_learning(schema: Schema, *, epsilon: Fraction, delta: Fraction | None,
                     relation: str = ADD_REMOVE, contribution_bound: int = 1) -> DomainLearning:
    """What :func:`learn_domains` will charge, from public inputs only, before anything is drawn.

    The schema gives each column to learn a placeholder domain (one label and
    the missing value) and each column its exact cost, so the run can be
    planned -- and refused -- before the first private step
    (docs/privacy.md §10.1); only the learned domains' sizes are unknown yet.
    ``contribution_bound``: the rows of one privacy unit (its threshold, §10.6).
    """
    columns = schema.to_learn
    if not columns:
        return DomainLearning(schema, ())
    eps_p, delta_p = domain_budget(epsilon, delta, len(columns), relation)
    factor = 1 if relation == ADD_REMOVE else 2
    tau = unit_threshold(eps_p, delta_p, contribution_bound)[1]
    return DomainLearning(placeholder_schema(schema),
                          tuple(LearnedColumn(c, factor * eps_p, factor * delta_p, tau, 0) for c in columns))


def learn_domains(data: pd.DataFrame | Tallies, schema: Schema, *, epsilon: Fraction, delta: Fraction | None,
                  rng: PrivateRandom, ledger: Ledger, relation: str = ADD_REMOVE) -> DomainLearning:
    """Learn the domain of every column of ``schema.to_learn`` by PS, charging ``ledger`` (docs/privacy.md §9).

    ``data``: the table, or its tallies (:class:`~synthdp.core.tallies.Tallies`, §10.7).

    ``(epsilon, delta)`` is the user's total budget; the public share
    :func:`domain_budget` of it is spent here, one ledger spend per column,
    composed ahead of whatever the ledger records next. Each column draws its
    noise from its own child stream of ``rng``. Returns the schema with the
    released domains (:meth:`Schema.with_learned`: unreleased values become
    the missing value) and the cost per column.
    """
    planned = planned_learning(schema, epsilon=epsilon, delta=delta, relation=relation,
                               contribution_bound=ledger.contribution_bound)
    if not planned.columns:
        return planned
    columns = schema.to_learn
    eps_p, delta_p = domain_budget(epsilon, delta, len(columns), relation)
    labels = as_tallies(data, schema).labels
    released = {}
    for column in columns:
        released[column] = select_categories(labels[column], epsilon=eps_p, delta=delta_p, rng=rng.spawn(),
                                             ledger=ledger, relation=relation, column=column)
    log.info("learned the domains of %d column(s) by partition selection at (eps_p, delta_p)=(%s, %s), "
             "threshold %d", len(columns), eps_p, delta_p, planned.columns[0].threshold)
    return DomainLearning(schema.with_learned(released),
                          tuple(replace(c, released=len(released[c.column])) for c in planned.columns))



# --------------------------------------------------------------------------
# Gaussian partition selection of several columns at once (docs/privacy.md §10.5)
# --------------------------------------------------------------------------
#: Public share of the zCDP filter's rho spent on learning the text columns jointly.
JOINT_RHO_SHARE = Fraction(1, 10)
#: Relative safety margin on the floating-point evaluation of the discrete-Gaussian tail.
_TAIL_MARGIN = 1e-9


@functools.lru_cache(maxsize=256)
def _log_sum(s2: float, lo: int, hi: int) -> float:
    """``log sum_{z=lo..hi} exp(-z**2 / (2 s2))``, the exact sum of the rounded terms (those that underflow add
    nothing).  Cached: a threshold's search reads the same normaliser a dozen times."""
    z = np.arange(lo, hi + 1, dtype=np.float64)
    exponents = -z * z / (2 * s2)
    top = exponents.max()
    terms = np.exp(exponents - top)
    return top + math.log(math.fsum(terms[terms > 0]))


def gaussian_tail(sigma2: Fraction, k: int) -> float:
    """An upper bound on ``P[Z >= k]`` for ``Z ~ N_Z(0, sigma2)``, from the exact pmf (docs/privacy.md §10.5).

    Numerator and denominator are sums of ``exp(-z**2 / (2 sigma2))`` in log
    space (no underflow), the numerator taken far enough that the rest is
    below ``e**-1800`` of it and bounded by a geometric series, the
    denominator a partial sum (a lower bound); the ratio is enlarged by a
    relative ``1e-9`` for the floating-point rounding.
    """
    s2 = float(sigma2)
    sigma = math.sqrt(s2)
    span = int(60 * sigma) + 60
    start = max(k, 0)
    numerator = _log_sum(s2, start, start + span)
    if k < 0:
        numerator = np.logaddexp(numerator, _log_sum(s2, k, -1))
    last = start + span
    ratio = math.exp(-(2 * last + 1) / (2 * s2))
    numerator += math.log1p(math.exp(-(last * last) / (2 * s2) - numerator) * ratio / (1 - ratio))
    denominator = _log_sum(s2, -span, span)
    return min(1.0, math.exp(numerator - denominator) * (1 + _TAIL_MARGIN))


@dataclass(frozen=True)
class JointSelection:
    """Public parameters of Gaussian partition selection over ``columns`` text columns (docs/privacy.md §10.5).

    Every present (column, value) count gets ``N_Z(0, sigma2)`` noise and is
    kept iff ``count + Z >= threshold``. Cost: ``rho`` in the zCDP filter
    (``J / (2 sigma2)`` add/remove, ``J / sigma2`` replace-one) and ``delta``,
    the share reserved, which bounds ``k J P[k + Z >= threshold]`` for units of
    ``k = contribution_bound`` rows.
    """

    columns: int
    sigma2: Fraction
    rho: Fraction
    delta: Fraction
    contribution_bound: int = 1

    def _passes(self, tau: int) -> bool:
        """Whether ``tau`` is a safe threshold: ``k J P[Z >= tau - k] <= delta`` (one tail sum)."""
        k = self.contribution_bound
        return k * self.columns * gaussian_tail(self.sigma2, tau - k) <= float(self.delta)

    @functools.cached_property
    def threshold(self) -> int:
        """The least safe ``tau >= k + 1`` (:func:`least_passing`), found when first read: its search takes a
        dozen tail sums, long at a large ``k``, and the plans of every candidate ``k`` read few (docs/privacy.md
        §10.6)."""
        k, pairs = self.contribution_bound, self.contribution_bound * self.columns
        return least_passing(self._passes, low=k + 1,
                             guess=k + int(math.sqrt(2 * float(self.sigma2) * math.log(pairs / float(self.delta)))))

    def reaches(self, rows: int) -> bool:
        """Whether ``rows >= threshold``, by one tail sum instead of the threshold's search: the threshold is the
        least safe value, and a larger one is safe too (the tail falls as its threshold grows)."""
        return rows >= self.contribution_bound + 1 and self._passes(rows)

    def to_dict(self) -> dict:
        return {"columns": self.columns, "sigma2": str(self.sigma2), "rho": str(self.rho),
                "delta": str(self.delta), "threshold": self.threshold, "contribution_bound": self.contribution_bound}


def joint_selection(*, rho: Fraction, delta: Fraction, columns: int, relation: str = ADD_REMOVE,
                    contribution_bound: int = 1, share: Fraction = JOINT_RHO_SHARE) -> JointSelection:
    """The parameters for learning ``columns`` text columns jointly from a filter of ``rho`` (docs/privacy.md §10.5).

    ``share``: the public share of ``rho`` the selection takes (the point masses of numeric columns, §11.2, take
    their own).

    ``rho`` is the filter's total, ``delta`` the share of delta reserved for
    the selection: ``sigma2`` is rounded **up** from ``J / (2 rho share)``
    (``J / (rho share)`` under replace-one) and the charge re-derived from it;
    the threshold is the least ``tau`` with ``J P[Z >= tau - 1] <= delta``.
    Units of ``k = contribution_bound`` rows (docs/privacy.md §10.6): ``k**2``
    times the scale, and the least ``tau`` with ``k J P[Z >= tau - k] <= delta``.
    None of it depends on the data or on ``n``.
    """

    if isinstance(columns, bool) or not isinstance(columns, int) or columns < 1:
        raise InputError(f"columns must be a positive integer, got {columns!r}")
    delta = as_delta(delta, "delta_ps")
    if delta <= 0:
        raise InputError("Gaussian partition selection needs delta > 0 (docs/privacy.md §10.5)")
    factor = 1 if check_relation(relation) == ADD_REMOVE else 2
    target = Fraction(rho) * share
    k = contribution_bound
    sigma2 = sigma2_up(Fraction(factor * columns * k * k) / (2 * target))
    charge = Fraction(factor * columns * k * k) / (2 * sigma2)
    return JointSelection(columns, sigma2, charge, delta, k)


def least_passing(passes: Callable[[int], bool], *, low: int, guess: int) -> int:
    """The least integer ``t >= low`` with ``passes(t)``, for a test that, once passed, passes for every larger
    ``t`` (a tail bound falls as its threshold grows): doubling from ``guess``, then bisection, so a threshold far
    from its Gaussian guess (a privacy unit of many rows scales sigma by ``k``) costs a few dozen tail sums."""
    if passes(low):
        return low
    failing, step = low, max(guess - low, 1)
    passing = low + step
    while not passes(passing):
        failing, step = passing, 2 * step
        passing = low + step
    while passing - failing > 1:
        middle = (failing + passing) // 2
        failing, passing = (failing, middle) if passes(middle) else (middle, passing)
    return passing


def learn_domains_jointly(data: pd.DataFrame | Tallies, schema: Schema, *, selection: JointSelection,
                          rng: PrivateRandom, ledger, relation: str = ADD_REMOVE) -> DomainLearning:
    """Learn every column of ``schema.to_learn`` at once by Gaussian partition selection (docs/privacy.md §10.5).

    ``data``: the table, or its tallies (:class:`~synthdp.core.tallies.Tallies`, §10.7).

    ``ledger`` is the method's zCDP filter: ``selection.rho`` is charged
    before any noise (the ``delta`` was reserved when the filter's ``rho`` was
    derived). Each (column, value) pair present draws its own noise, columns
    in schema order and values in :func:`label_order`; only the kept sets are
    released, and :meth:`Schema.with_learned` maps the rest to missing.
    """

    columns = schema.to_learn
    if selection.contribution_bound != ledger.contribution_bound:
        raise InputError(f"the selection was planned for units of {selection.contribution_bound} rows, the ledger "
                         f"charges units of {ledger.contribution_bound}")
    if len(columns) != selection.columns:
        raise InputError(f"the selection was planned for {selection.columns} columns, the schema has "
                         f"{len(columns)} to learn")
    counts = as_tallies(data, schema).labels
    ledger.charge("gaussian-partition-selection", selection.rho, relation,
                  f"{len(columns)} columns, sigma2={selection.sigma2}, threshold {selection.threshold}, "
                  f"delta {float(selection.delta):.3g}")
    released, learned = {}, []
    for column in columns:
        labels = [label for label in sorted(counts[column], key=label_order) if counts[column][label] >= 1]
        noisy = np.array([counts[column][label] for label in labels], dtype=np.int64) + \
            discrete_gaussian_array(len(labels), selection.sigma2, rng.spawn())
        released[column] = tuple(label for label, value in zip(labels, noisy) if value >= selection.threshold)
        learned.append(LearnedColumn(column, Fraction(0), Fraction(0), selection.threshold, len(released[column])))
    log.info("learned the domains of %d column(s) jointly by Gaussian partition selection, threshold %d",
             len(columns), selection.threshold)
    return DomainLearning(schema.with_learned(released), tuple(learned), rho=selection.rho,
                          filter_delta=selection.delta)


#: A text column whose threshold exceeds this share of the rows can keep at most a few values: warn.
FEW_VALUES_SHARE = Fraction(1, 5)


def check_threshold(rows: int, tau: int, columns: tuple[str, ...], *, epsilon: float) -> None:
    """Refuse when no value of ``columns`` can reach the threshold ``tau``; warn when at most a few can.

    Runs before any private step, for the data owner only: ``rows`` is the
    private table's size, so the message and the decision to stop go to the
    owner (an error before anything is released is not a release,
    docs/privacy.md §10.5; the warning an :func:`~synthdp.core.owner.owner_warning`)
    and never into the release, which either does not happen or is the same
    as without the check.
    """
    if not columns:
        return
    remedy = (f"give their categories publicly (categories={{{columns[0]!r}: [...]}} or a schema file), which keeps "
              f"every value at no cost, or raise epsilon (now {epsilon:g}) or delta: the threshold falls roughly "
              "in proportion to 1/epsilon")
    if rows < tau:
        raise InputError(f"learning the categories of {list(columns)} privately needs a value to be held by about "
                         f"{tau} rows (the threshold of docs/privacy.md §9/§10.5) and the table has {rows} rows: "
                         f"nothing would be kept and these columns would come back empty; "
                         f"{remedy}")
    if rows * FEW_VALUES_SHARE < tau:
        owner_warning(f"the categories of {list(columns)} are learned privately with a threshold of {tau} rows, "
                      f"{tau / rows:.0%} of the {rows} rows: at most {rows // tau} value(s) per column can be kept, "
                      f"the rest become missing; {remedy}")


#: Warn the owner when more than this share of a column's present rows hold values below the threshold.
EMPTIED_SHARE = Fraction(1, 10)


def warn_rare_values(labels: dict[str, dict[str, int]], tau: int, columns: tuple[str, ...]) -> None:
    """Warn the owner, by column, when more than :data:`EMPTIED_SHARE` of the present rows of a column to learn hold
    values that fewer than ``tau`` rows hold (an ID column, a column of many rare values): those rows come back
    missing (docs/privacy.md §10.8).

    Before any private step, for the data owner only (:func:`~synthdp.core.owner.owner_warning`): it reads the
    exact counts, so it never goes into the release and no choice of the run depends on it.
    """
    for column in columns:
        counts = np.fromiter(labels[column].values(), dtype=np.int64)
        present = int(counts.sum())
        rare = int(counts[counts < tau].sum())
        if present and rare > EMPTIED_SHARE * present:
            distinct = "every value distinct, like an ID" if len(counts) == present else f"{len(counts)} values"
            owner_warning(f"column {column!r} will come back with {rare / present:.0%} of its present values "
                          f"missing: {rare} of its {present} present rows "
                          f"hold values that fewer than {tau} rows hold ({distinct}), and partition selection keeps "
                          f"a value only when about {tau} rows hold it; drop the column (from the DataFrame; CLI "
                          f"--drop {column}), give its categories publicly, or group its values into fewer, larger ones")
