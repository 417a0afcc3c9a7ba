"""The ``exact`` backend: native exhaustive search, certifiable by exhaustion.

* Query player (:mod:`synthdp.oracles.exact.query`): marginal-table enumeration for
  width-bounded conjunctions and workloads, branch and bound over literals
  for wide conjunctions and monotone conjunctions.
* Data player (:mod:`synthdp.oracles.exact.data`): branch and bound over attribute
  values, with :meth:`ExactSearchOracle.maximize_many` /
  :meth:`ExactSearchOracle.solve_data_many` for the ``N`` samples of a round.

A search that finishes has examined (explicitly or by a valid bound) every
candidate, so the optimum it found is also its proven bound.  Limits:
``work_limit`` counts search nodes (one per marginal table, resp. per
branch-and-bound node) and stops with an unproven answer; ``time_limit`` is
checked at every node and raises :class:`synthdp.oracles.base.Deadline`.
Everything is computed in float64 on integers, which requires the sum of
absolute coefficients to stay below 2**53; larger instances are refused
(not proven) rather than risk an inexact answer.
"""

from __future__ import annotations

import os
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from synthdp.oracles.base import FAIL, NO_LIMITS, OPTIMAL, DataInstance, Limits, Oracle, OracleResult, Raw
from synthdp.oracles.exact.common import Budget, SearchOutcome, exact_in_float
from synthdp.oracles.exact.data import DataProblem, maximize
from synthdp.oracles.exact.query import minimize, supported
from synthdp.queries.base import QueryClass
from synthdp.queries.complement import base_class

#: Threads that run a round's data-player searches side by side.
_WORKERS = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
_TOO_LARGE = "coefficients too large for exact float64 search (sum of |coefficients| >= 2**53)"


def _raw(outcome: SearchOutcome, sense: str) -> Raw:
    """A backend answer from a search outcome; the bound of a finished search is its optimum."""
    bound = None if outcome.bound is None else int(outcome.bound) if outcome.proven else outcome.bound
    status = f"{outcome.method}: {'optimal' if outcome.proven else 'work limit'}"
    message = "" if outcome.proven else f"work limit reached before the {sense} was proven"
    return Raw(outcome.solution, bound, status, outcome.proven, outcome.nodes, message)


class ExactSearchOracle(Oracle):
    """Native exact search for conjunction-like classes (conjunctions, workloads, monotone conjunctions)."""

    name = "exact"
    #: Its tables add integers in float64, exact below 2**53.
    integer_limit = 2**53
    #: PRSMA's deterministic budget in search nodes (one per table or branch).
    default_work_limit = 10**6
    #: Branch-and-bound nodes per data-player call in the game: typical calls need tens to
    #: thousands, a few late-round ones millions; past it the best record found is played.
    default_data_work_limit = 20_000
    certifiable = True

    def __init__(self, method: str | None = None):
        """``method``: force the query player's ``"tables"`` or ``"branch-and-bound"`` search."""
        if method not in (None, "tables", "branch-and-bound"):
            raise ValueError(f"unknown exact search method {method!r}")
        self.method = method

    def supports(self, query_class: QueryClass) -> bool:
        return supported(query_class)

    def _minimize(self, query_class, codes, weights, separator_weights, limits: Limits) -> Raw:
        if not exact_in_float(weights, separator_weights):
            return Raw(None, None, "too large", False, message=_TOO_LARGE)
        outcome = minimize(query_class, np.asarray(codes, dtype=np.int64), np.asarray(weights, dtype=np.int64),
                           separator_weights, Budget(limits), self.method)
        return _raw(outcome, "minimum")

    def _maximize(self, query_class, queries, weights, rho, limits: Limits) -> Raw:
        if not exact_in_float(weights, rho):
            return Raw(None, None, "too large", False, message=_TOO_LARGE)
        outcome = maximize(DataProblem.build(query_class, queries, weights), rho, Budget(limits))
        return _raw(outcome, "maximum")

    # ----- batched data player ---------------------------------------------
    def maximize_many(self, query_class: QueryClass, queries: list, weights: np.ndarray, rho_matrix: np.ndarray,
                      limits: Limits = NO_LIMITS) -> np.ndarray:
        """Maximising records ``(N, n_attributes)`` for the rows of ``rho_matrix`` (same queries and weights)."""
        results = self.solve_data_many(query_class, queries, weights, rho_matrix, limits)
        missing = [i for i, r in enumerate(results) if r.solution is None]
        if missing:
            raise RuntimeError(f"exact data search returned no record for sample {missing[0]}: "
                               f"{results[missing[0]].message}")
        return np.array([r.solution for r in results], dtype=np.int64).reshape(len(results), -1)

    def solve_data_many(self, query_class: QueryClass, queries: list, weights: np.ndarray, rho_matrix: np.ndarray,
                        limits: Limits = NO_LIMITS) -> list[OracleResult]:
        """One :class:`OracleResult` per row of ``rho_matrix``, as :meth:`solve_data` would give.

        The queries are prepared once; every objective is recomputed
        exactly from the returned records in one vectorised evaluation.
        Each result's ``wall_time`` includes its share of preparation and check.
        """
        start = time.perf_counter()
        rho_matrix = np.atleast_2d(np.asarray(rho_matrix, dtype=np.int64))
        base_cls = base_class(query_class)
        if not len(rho_matrix) or not self.supports(base_cls):
            return super().solve_data_many(query_class, queries, weights, rho_matrix, limits)
        template = DataInstance.build(query_class, queries, weights, rho_matrix[0])
        base, signed, const = template.base_form()
        if not exact_in_float(signed, np.abs(rho_matrix).max(axis=0)):
            return super().solve_data_many(query_class, queries, weights, rho_matrix, limits)
        problem = DataProblem.build(base_cls, base, signed)
        setup = (time.perf_counter() - start) / len(rho_matrix)

        def search(rho: np.ndarray) -> tuple[SearchOutcome, float]:
            tick = time.perf_counter()
            return maximize(problem, rho, Budget(limits)), time.perf_counter() - tick + setup

        # The compiled search releases the GIL: the samples run in parallel threads, each
        # on its own state, so the answers are those of the sequential loop.
        workers = min(len(rho_matrix), _WORKERS)
        if workers > 1:
            with ThreadPoolExecutor(workers) as pool:
                pairs = list(pool.map(search, rho_matrix))
        else:
            pairs = [search(rho) for rho in rho_matrix]
        outcomes, times = [o for o, _ in pairs], [t for _, t in pairs]
        tick = time.perf_counter()
        values = self._data_objectives(template, np.array([o.solution for o in outcomes], dtype=np.int64), rho_matrix)
        check = (time.perf_counter() - tick) / len(rho_matrix)
        return [self._data_result(o, int(v), const, t + check) for o, v, t in zip(outcomes, values, times)]

    @staticmethod
    def _data_objectives(template: DataInstance, records: np.ndarray, rho_matrix: np.ndarray) -> np.ndarray:
        """Exact objective of record ``i`` under ``rho_matrix[i]`` (integer arithmetic)."""
        qc = template.query_class
        values = np.zeros(len(records), dtype=np.int64)
        if template.queries:
            hits = qc.evaluate(list(template.queries), qc.features(records)).astype(np.int64)
            values += template.weights @ hits
        coords = np.array([records[:, a] == v for a, v in qc.dual_separator()], dtype=np.int64).reshape(-1, len(records))
        return values + (rho_matrix * coords.T).sum(axis=1)

    def _data_result(self, outcome: SearchOutcome, value: int, const: int, wall: float) -> OracleResult:
        """The report of one batched sample, with the acceptance rule of :meth:`Oracle.solve_data`."""
        raw = _raw(outcome, "maximum")
        bound = None if raw.bound is None else raw.bound + const
        proven = raw.proven and bound is not None and value >= bound
        return OracleResult(OPTIMAL if proven else FAIL, outcome.solution, value, bound, self.name,
                            raw.backend_status, wall, raw.nodes, raw.message)
