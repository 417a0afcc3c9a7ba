"""The two accountings select-measure-estimate runs under: zCDP with Gaussian noise, pure DP with Laplace noise.

:func:`synthdp.methods.measure.algorithm.measure` runs one loop (docs/privacy.md §8.1)
and asks a family what a round costs, how to split it between selecting and
measuring, what the estimator's weight and the scores' noise offset are,
and what the ledger has spent (the measurement itself is drawn by
``measure._measure_one`` with the family's sampler):

* :class:`GaussianNoise` (docs/privacy.md §8.2-§8.4): the budget is ``rho``;
  the exponential mechanism costs ``eps**2/8``, a measurement of scale
  ``sigma2`` costs ``Delta2**2/(2 sigma2)``; the ledger is the
  :class:`~synthdp.accounting.zcdp.ZcdpLedger` filter; annealing (halving the
  noise's scale) makes a round four times as dear.
* :class:`LaplaceNoise` (docs/privacy.md §10.2): the budget is ``epsilon``;
  the exponential mechanism costs ``eps``, a measurement of rate ``a`` costs
  ``a Delta_1``; the ledger is the run's own pure
  :class:`~synthdp.accounting.ledger.Ledger` (Theorem 10.2); annealing
  makes a round twice as dear.

A measurement's *scale* is the family's noise parameter: ``sigma2`` for the
Gaussian, the rate ``a`` for the Laplace (larger ``a``, less noise).  Both
are exact rationals rounded in the safe direction, and the charge is
computed from the rounded value.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

from synthdp.accounting.ledger import ADD_REMOVE, check_contribution_bound, check_relation
from synthdp.mechanisms.gaussian import sigma2_up
from synthdp.mechanisms.laplace import epsilon_down, laplace_mean_abs, laplace_variance, spent_epsilon
from synthdp.accounting.zcdp import epsilon_for_exponential, exponential_rho, gaussian_rho

@dataclass(frozen=True)
class GaussianNoise:
    """zCDP accounting with discrete Gaussian measurements (docs/privacy.md §8.2 (M1), (M2); §8.3; §8.4)."""

    relation: str
    #: Rows one privacy unit may hold (docs/privacy.md §10.6; 1: one row per person).
    rows: int = 1
    name = "gaussian"
    #: A round's cost grows this much when annealing halves the noise's standard deviation.
    growth = 4
    #: Precision (``1/sigma2``) grows as ``cost**precision_power``: a cost ``Delta2**2/(2 sigma2)`` is a precision
    #: (the covering step fills by it, docs/privacy.md §8.10).
    precision_power = 1
    #: Light tails: a least-squares fit is this noise's likelihood, so the covering step's fit may run to the
    #: optimum when the noise is small (docs/privacy.md §8.10, step 4).
    light_tailed = True

    def __post_init__(self) -> None:
        check_relation(self.relation)
        check_contribution_bound(self.rows)

    def sensitivity(self) -> int:
        """Squared l2-sensitivity of a marginal: 1 (add/remove) or 2 (replace-one) (§8.3), ``rows**2`` times that
        when one privacy unit holds up to ``rows`` rows (§10.6)."""
        return (1 if self.relation == ADD_REMOVE else 2) * self.rows**2

    def split(self, cost: Fraction, share: Fraction) -> tuple[Fraction, Fraction]:
        """``(eps, sigma2)``: at most ``share * cost`` selects, the rest measures (rounded safely)."""
        return self.selection_epsilon(share * cost), self.scale_for(cost * (1 - share))

    def selection_epsilon(self, cost: Fraction) -> Fraction:
        """The largest ``eps`` on the grid whose exponential mechanism costs at most ``cost`` (``eps**2/8``)."""
        return epsilon_for_exponential(cost)

    def scale_for(self, cost: Fraction) -> Fraction:
        """The smallest ``sigma2`` on the dyadic grid whose measurement costs at most ``cost``."""
        return sigma2_up(Fraction(self.sensitivity()) / (2 * cost))

    def selection_cost(self, epsilon: Fraction) -> Fraction:
        return exponential_rho(epsilon)

    def measurement_cost(self, scale: Fraction) -> Fraction:
        return gaussian_rho(self.sensitivity(), scale)

    def anneal(self, epsilon: Fraction, scale: Fraction) -> tuple[Fraction, Fraction]:
        """Double the selection's ``eps``, halve the noise's standard deviation (``sigma2 / 4``)."""
        return 2 * epsilon, sigma2_up(scale / 4)

    def variance(self, scale: Fraction) -> float:
        """The estimator's per-cell variance (its weight's inverse): ``sigma2``, as the fit has always used."""
        return float(scale)

    def mean_abs(self, scale: Fraction) -> float:
        """AIM's expected absolute noise per cell, ``sqrt(2/pi) sigma``."""
        return math.sqrt(2 / math.pi) * math.sqrt(float(scale))

    def spent(self, ledger) -> Fraction:
        return ledger.spent



@dataclass(frozen=True)
class LaplaceNoise:
    """Pure-DP accounting with discrete Laplace measurements (docs/privacy.md §10.2, Lemma 10.1, Theorem 10.2)."""

    relation: str
    #: Rows one privacy unit may hold (docs/privacy.md §10.6; 1: one row per person).
    rows: int = 1
    name = "laplace"
    growth = 2
    #: Precision (``1/Var Z``, about ``a**2/2``) grows as the square of the cost ``a Delta_1`` (docs/privacy.md §8.10).
    precision_power = 2
    #: Heavy (exponential) tails: a least-squares fit run to the optimum follows the largest draws, so the covering
    #: step's fit keeps its capped, regularising steps (docs/privacy.md §8.10, step 4).
    light_tailed = False

    def __post_init__(self) -> None:
        check_relation(self.relation)
        check_contribution_bound(self.rows)

    def sensitivity(self) -> int:
        """l1-sensitivity of a marginal: 1 (add/remove) or 2 (replace-one) (§10.2 (P2)), ``rows`` times that when
        one privacy unit holds up to ``rows`` rows (§10.6)."""
        return (1 if self.relation == ADD_REMOVE else 2) * self.rows

    def split(self, cost: Fraction, share: Fraction) -> tuple[Fraction, Fraction]:
        """``(eps_sel, rate)``: at most ``share * cost`` selects, the rest measures; both rounded down."""
        return self.selection_epsilon(share * cost), self.scale_for(cost * (1 - share))

    def selection_epsilon(self, cost: Fraction) -> Fraction:
        """The largest ``eps`` on the grid whose exponential mechanism costs at most ``cost`` (``eps``)."""
        return epsilon_down(cost)

    def scale_for(self, cost: Fraction) -> Fraction:
        """The largest rate on the grid whose measurement costs at most ``cost``: ``cost / Delta_1``, rounded down."""
        return epsilon_down(cost / self.sensitivity())

    def selection_cost(self, epsilon: Fraction) -> Fraction:
        return Fraction(epsilon)

    def measurement_cost(self, scale: Fraction) -> Fraction:
        return scale * self.sensitivity()

    def anneal(self, epsilon: Fraction, scale: Fraction) -> tuple[Fraction, Fraction]:
        """Double both: the noise's scale ``1/a`` halves."""
        return 2 * epsilon, 2 * scale

    def variance(self, scale: Fraction) -> float:
        return laplace_variance(scale)

    def mean_abs(self, scale: Fraction) -> float:
        return laplace_mean_abs(scale)

    def spent(self, ledger) -> Fraction:
        return spent_epsilon(ledger)



NoiseFamily = GaussianNoise | LaplaceNoise
