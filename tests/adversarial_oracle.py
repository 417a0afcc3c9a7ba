"""Fake oracles for privacy tests: adversarial failures and tie-breaking, and broken certificates.

*For tests and audits only.*  :class:`AdversarialOracle` is a legal
certifiable oracle in the sense of docs/privacy.md (§1.5): it
returns a certified minimiser or FAIL, and both its failures and its choice
among optima may be adversarial -- but, as assumption A-stateless requires,
they depend on the call's instance only (plus independent internal coins).
It is exact by enumeration, like :class:`~synthdp.oracles.brute.BruteForceOracle`.

:class:`CertificateStub` is *not* a legal oracle: it returns non-optimal
answers, invalid bounds, queries outside the class or unproven answers, to
test that certification (docs/privacy.md §2.7 R2-R3, :func:`synthdp.oracles.base.certify_query`)
turns every one of them into FAIL.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Sequence

import numpy as np

from synthdp.oracles.base import FAIL, NO_LIMITS, Limits, OracleResult, QueryInstance, Raw, certify_query
from synthdp.oracles.brute import BruteForceOracle

FailRule = Callable[[QueryInstance], float]
TieRule = Callable[[Sequence[Any]], Any]


def _objective_values(query_class, queries: list, codes, weights, separator_weights) -> np.ndarray:
    """Exact objectives ``sum_r w_r q(x_r) + sum_i eta_i sig_i(q)`` of ``queries`` (Python integers)."""
    values = query_class.answer(queries, codes, weights).astype(object)
    return values + query_class.signature(queries).astype(object) @ np.asarray(separator_weights, dtype=object)


def lexicographically_largest(optima: Sequence[Any]) -> Any:
    """Default adversarial tie-break: the optimum with the largest ``repr``."""
    return max(optima, key=repr)


def fails_on_record(code: Sequence[int]) -> FailRule:
    """FAIL (probability 1) on every instance that contains the record ``code`` with non-zero weight.

    A function of the instance only, hence A-stateless: the attack of
    docs/privacy.md §1.5 and Remark 3.4, aimed at one person.
    """
    target = np.asarray(code, dtype=np.int64)

    def rule(instance: QueryInstance) -> float:
        hits = np.all(instance.codes == target[None, :], axis=1) & (instance.weights != 0)
        return 1.0 if hits.any() else 0.0

    return rule


class AdversarialOracle(BruteForceOracle):
    """Exact, certifiable, stateless oracle that fails and breaks ties as told.

    ``fail(instance)`` is the probability of FAIL on that instance (default
    never); ``choose(optima)`` picks among all minimisers (default the
    lexicographically largest).  Coins come from a private numpy generator
    seeded by ``seed``: independent across calls, as A-stateless allows.
    """

    name = "adversarial"

    def __init__(self, *, fail: FailRule | None = None, choose: TieRule = lexicographically_largest,
                 seed: int = 0):
        self.fail = fail
        self.choose = choose
        self._coins = np.random.default_rng(seed)

    def solve_query(self, instance: QueryInstance, limits: Limits = NO_LIMITS) -> OracleResult:
        start = time.perf_counter()
        qc = instance.query_class
        if self.fail is not None and self._coins.random() < self.fail(instance):
            return OracleResult(FAIL, None, None, None, self.name, "adversarial fail", time.perf_counter() - start)
        queries = qc.enumerate()
        values = _objective_values(qc, queries, instance.codes, instance.weights, instance.separator_weights)
        best = min(values)
        optima = [q for q, v in zip(queries, values) if v == best]
        return certify_query(instance, Raw(self.choose(optima), int(best), "adversarial", True, len(queries)),
                             self.name, start)


class _Alien:
    """A "query" that belongs to no class."""

    def __repr__(self) -> str:
        return "<alien query>"


DEFECTS = ("suboptimal", "bound_above", "outside_class", "unproven")


class CertificateStub(BruteForceOracle):
    """A broken solver: every answer carries ``defect`` (one of :data:`DEFECTS`).

    * ``suboptimal``: the worst query, with the true (valid) lower bound;
    * ``bound_above``: the optimum with a "lower bound" above its objective;
    * ``outside_class``: an object that is not a query of the class (use a
      base class: ``Oracle._minimize_closed`` evaluates the answer before
      certification checks membership);
    * ``unproven``: the optimum, not marked proven.

    Certification must turn each into FAIL (docs/privacy.md §2.7 R2-R3).
    """

    name = "stub"

    def __init__(self, defect: str):
        if defect not in DEFECTS:
            raise ValueError(f"defect must be one of {DEFECTS}, got {defect!r}")
        self.defect = defect

    def _minimize(self, query_class, codes, weights, separator_weights, limits: Limits) -> Raw:
        raw = super()._minimize(query_class, codes, weights, separator_weights, limits)
        if self.defect == "suboptimal":
            queries = query_class.enumerate()
            values = _objective_values(query_class, queries, codes, weights, separator_weights)
            return Raw(queries[int(np.argmax(values))], raw.bound, "stub", True)
        if self.defect == "bound_above":
            return Raw(raw.solution, raw.bound + 1, "stub", True)
        if self.defect == "outside_class":
            return Raw(_Alien(), raw.bound, "stub", True)
        return Raw(raw.solution, raw.bound, "stub", False)
