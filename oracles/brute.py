"""Reference oracle: exhaustive enumeration, exact by construction.

The ground truth for every other backend's tests.  It enumerates the
(base) query class, or every valid record for the data player, and
evaluates the integer objective with the class's vectorised evaluation.

For the data player it is also the fastest exact backend on small record
universes (NLTCS has 2**16 records): the records and each query's values on
them are computed once and cached, so a round of ``N`` FTPL samples is one
integer matrix product and an argmax per sample.
"""

from __future__ import annotations

import itertools
import time

import numpy as np

from synthdp.oracles.base import OPTIMAL, DataInstance, Limits, Oracle, OracleResult, Raw
from synthdp.queries.base import ENUMERATION_LIMIT, QueryClass
from synthdp.queries.complement import base_class

#: Largest record universe the data player enumerates.
RECORD_LIMIT = ENUMERATION_LIMIT


def universe_size(query_class: QueryClass) -> int:
    """Number of valid records of the class's domain."""
    return int(np.prod(query_class.domain.sizes, dtype=object))


class BruteForceOracle(Oracle):
    """Exhaustive search; supports every class small enough to enumerate."""

    name = "brute"
    integer_limit = 2**62

    def __init__(self) -> None:
        self._records: dict = {}
        self._columns: dict = {}

    def supports(self, query_class: QueryClass) -> bool:
        return query_class.size() <= ENUMERATION_LIMIT or universe_size(query_class) <= RECORD_LIMIT

    def _minimize(self, query_class, codes, weights, separator_weights, limits: Limits) -> Raw:
        if query_class.size() > ENUMERATION_LIMIT:
            return Raw(None, None, "too large", False, message=f"{query_class.size()} queries is too many to enumerate")
        queries = query_class.enumerate()
        values = query_class.answer(queries, codes, weights).astype(object)
        values = values + query_class.signature(queries).astype(object) @ np.asarray(separator_weights, dtype=object)
        best = int(np.argmin(values))
        return Raw(queries[best], int(values[best]), "enumerated", True, len(queries))

    # ----- data player -----------------------------------------------------
    def _universe(self, query_class: QueryClass) -> tuple[np.ndarray, np.ndarray] | None:
        """All valid records and their dual-separator coordinates (cached per domain)."""
        domain = query_class.domain
        if universe_size(query_class) > RECORD_LIMIT:
            return None
        key = (domain, tuple(query_class.dual_separator()))
        if key not in self._records:
            records = np.array(list(itertools.product(*(range(s) for s in domain.sizes))), dtype=np.int64)
            coords = query_class.dual_separator()
            dual = np.zeros((len(records), len(coords)), dtype=np.int64)
            for j, (a, v) in enumerate(coords):
                dual[:, j] = records[:, a] == v
            self._records[key] = (records, dual)
        return self._records[key]

    def _rewards(self, query_class: QueryClass, queries: list, weights: np.ndarray, records: np.ndarray) -> np.ndarray:
        """``sum_t w_t q_t(x)`` for every record; each query's values are computed once and cached."""
        total = np.zeros(len(records), dtype=np.int64)
        missing = [q for q in queries if (query_class, q) not in self._columns]
        if missing:
            vals = query_class.evaluate(missing, query_class.features(records))
            for q, col in zip(missing, vals):
                self._columns[(query_class, q)] = col.astype(bool)
        for q, w in zip(queries, np.asarray(weights, dtype=np.int64)):
            total[self._columns[(query_class, q)]] += int(w)
        return total

    def _maximize(self, query_class, queries, weights, rho, limits: Limits) -> Raw:
        universe = self._universe(query_class)
        if universe is None:
            return Raw(None, None, "too large", False, message=f"{universe_size(query_class)} records is too many")
        records, dual = universe
        values = self._rewards(query_class, list(queries), weights, records) + dual @ np.asarray(rho, dtype=np.int64)
        best = int(np.argmax(values))
        return Raw(records[best], int(values[best]), "enumerated", True, len(records))

    def solve_data_many(self, query_class, queries, weights, rho_matrix, limits: Limits = Limits()) -> list[OracleResult]:
        """All ``N`` samples of a round at once: one ``records x samples`` integer score matrix."""
        start = time.perf_counter()
        base = base_class(query_class)
        universe = self._universe(base)
        rho_matrix = np.atleast_2d(np.asarray(rho_matrix, dtype=np.int64))
        if universe is None or not len(rho_matrix):
            return super().solve_data_many(query_class, queries, weights, rho_matrix, limits)
        records, dual = universe
        template = DataInstance.build(query_class, queries, weights, rho_matrix[0])
        base_queries, signed, const = template.base_form()
        scores = self._rewards(base, base_queries, signed, records)[:, None] + dual @ rho_matrix.T
        best = scores.argmax(axis=0)
        share = (time.perf_counter() - start) / len(rho_matrix)
        return [OracleResult(OPTIMAL, records[b], int(scores[b, j]) + const, int(scores[b, j]) + const, self.name,
                             "enumerated", share, len(records))
                for j, b in enumerate(best)]
