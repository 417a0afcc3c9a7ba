"""What a private synthetic table promises about the population its input was drawn from.

The transfer theorem of adaptive data analysis, in the form of Jung, Ligett,
Neel, Roth, Sharifi-Malvajerdi and Shenfeld (2020), "A New Analysis of
Differential Privacy's Generalization Guarantees" (ITCS 2020): a mechanism
that answers adaptively chosen statistical (counting) queries, is
``(eps, delta)``-DP, and is ``(alpha, beta)``-*sample* accurate (every answer
within ``alpha`` of the query's value on the sample, except with probability
``beta``) is, for every ``c, d > 0``,

    (alpha + e^eps - 1 + c + 2 d,  beta / c + delta / d)-*distributionally* accurate,

i.e. every answer is that close to the query's value on the population,
except with that probability (docs/privacy.md §5, the population statement).

A released synthetic table is such a mechanism: any analyst's queries --
any number of them, chosen after looking at the table -- are answered by
evaluating them on the table, which is post-processing of an
``(eps, delta)``-DP release.  The statement holds under these assumptions:

* the input rows are ``n`` independent draws from one population (so the
  theorem's privacy is for neighbours that replace one row: an add/remove
  guarantee ``(eps, delta)`` is first converted to replace-one,
  ``(2 eps, (1 + e^eps) delta)``, by removing then adding);
* ``(alpha, beta)`` is a sample-accuracy bound for the queries asked (an
  a-priori bound, or the user's own figure) -- never an error measured on the
  private data, which is not public;
* the analyst sees the data only through the released table.

Only public quantities enter, so the statement costs no privacy.  The
``e^eps - 1`` term makes it vacuous (population error ``>= 1``) for
``eps >= ln 2`` and weak for any ``eps`` much above ``0.1``; :func:`population_statement`
says so plainly.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

from synthdp.core.errors import InputError

REPLACE_ONE = "replace-one"
ADD_REMOVE = "add-remove"
CITATION = ("Jung, Ligett, Neel, Roth, Sharifi-Malvajerdi, Shenfeld (2020), \"A New Analysis of Differential "
            "Privacy's Generalization Guarantees\", ITCS 2020")


@dataclass(frozen=True)
class PopulationStatement:
    """The population bound for counting queries answered from a released table, and its plain-text statement."""

    epsilon: float
    delta: float
    relation: str
    epsilon_replace_one: float
    delta_replace_one: float
    sample_error: float
    sample_failure: float
    failure: float
    c: float
    d: float
    population_error: float
    vacuous: bool
    text: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _number(value: Any, name: str, *, low: float, high: float, low_open: bool, high_open: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise InputError(f"{name} must be a finite number, got {value!r}")
    if value < low or value > high or (low_open and value == low) or (high_open and value == high):
        lo, hi = ("(" if low_open else "["), (")" if high_open else "]")
        raise InputError(f"{name} must lie in {lo}{low:g}, {high:g}{hi}, got {value!r}")
    return float(value)


def best_c_d(sample_failure: float, delta: float, failure: float) -> tuple[float, float, float]:
    """``(c, d, c + 2 d)`` minimising ``c + 2 d`` subject to ``beta / c + delta / d = failure``.

    Lagrange: ``c = sqrt(mu beta)``, ``d = sqrt(mu delta / 2)`` with
    ``sqrt(mu) = (sqrt(beta) + sqrt(2 delta)) / failure``, so
    ``c + 2 d = (sqrt(beta) + sqrt(2 delta))^2 / failure``.  A zero ``beta``
    (or ``delta``) gives ``c = 0`` (``d = 0``): the limit of arbitrarily small values.
    """
    root_mu = (math.sqrt(sample_failure) + math.sqrt(2 * delta)) / failure
    c, d = root_mu * math.sqrt(sample_failure), root_mu * math.sqrt(delta / 2)
    return c, d, (math.sqrt(sample_failure) + math.sqrt(2 * delta)) ** 2 / failure


def population_statement(epsilon: float, delta: float, *, sample_error: float, sample_failure: float,
                         failure: float, relation: str = ADD_REMOVE,
                         queries: str = "counting queries of the class the sample error holds for",
                         ) -> PopulationStatement:
    """The transfer theorem's population bound for a table released ``(epsilon, delta)``-DP under ``relation``.

    ``sample_error`` and ``sample_failure`` are the ``(alpha, beta)`` sample
    accuracy of the table for ``queries`` (public: an a-priori bound or the
    user's figure); ``failure`` is the target probability ``beta'`` that some
    answer misses its population value by more than the bound.  The ``c, d``
    that meet ``beta / c + delta / d = failure`` with the smallest bound are
    used (:func:`best_c_d`); a small ``failure`` costs a large bound.
    """
    eps = _number(epsilon, "epsilon", low=0, high=math.inf, low_open=True, high_open=True)
    dlt = _number(delta, "delta", low=0, high=1, low_open=False, high_open=True)
    alpha = _number(sample_error, "sample_error", low=0, high=1, low_open=False, high_open=False)
    beta = _number(sample_failure, "sample_failure", low=0, high=1, low_open=False, high_open=True)
    target = _number(failure, "failure", low=0, high=1, low_open=True, high_open=True)
    if relation == REPLACE_ONE:
        eps_r, dlt_r = eps, dlt
    elif relation == ADD_REMOVE:
        eps_r, dlt_r = 2 * eps, (1 + math.exp(eps)) * dlt
    else:
        raise InputError(f"relation must be {REPLACE_ONE!r} or {ADD_REMOVE!r}, got {relation!r}")
    c, d, slack = best_c_d(beta, dlt_r, target)
    bound = alpha + math.expm1(eps_r) + slack
    vacuous = bound >= 1
    conversion = ("" if relation == REPLACE_ONE else
                  f" (the {relation} guarantee ({eps:.4g}, {dlt:.3g}) read as replace-one ({eps_r:.4g}, {dlt_r:.3g}))")
    if vacuous:
        text = (f"Population statement: none. With privacy ({eps_r:.4g}, {dlt_r:.3g}){conversion} and sample error "
                f"{alpha:.4g} (failure probability {beta:.3g}), the transfer theorem [{CITATION}] bounds the "
                f"population error of {queries} answered from this table only by {bound:.3g} >= 1, which says "
                "nothing (the e^eps - 1 term alone is "
                f"{math.expm1(eps_r):.3g}); it becomes informative only for epsilon well below ln 2.")
    else:
        text = (f"Population statement: if the input rows are independent draws from a population, then with "
                f"probability at least {1 - target:.4g}, every one of any number of {queries} answered from this "
                f"table -- even queries chosen after looking at it -- is within {bound:.4g} of its value on the "
                f"population. This is the transfer theorem [{CITATION}] with privacy ({eps_r:.4g}, {dlt_r:.3g})"
                f"{conversion}, sample error {alpha:.4g} except with probability {beta:.3g} (a public figure, "
                f"not measured on the data), c={c:.3g}, d={d:.3g}.")
    return PopulationStatement(eps, dlt, relation, eps_r, dlt_r, alpha, beta, target, c, d, bound, vacuous, text)
