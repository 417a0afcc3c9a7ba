"""Reference oracle: exhaustive enumeration, exact by construction.

The ground truth for every other backend's tests.  It enumerates the
(base) query class, or every valid record for the data player, and
evaluates the integer objective with the class's vectorised evaluation.
"""

from __future__ import annotations

import itertools

import numpy as np

from oracles.base import Limits, Oracle, Raw
from queries.base import ENUMERATION_LIMIT, QueryClass


class BruteForceOracle(Oracle):
    """Exhaustive search; supports every class small enough to enumerate."""

    name = "brute"

    def supports(self, query_class: QueryClass) -> bool:
        return query_class.size() <= ENUMERATION_LIMIT

    def _minimize(self, query_class, codes, weights, separator_weights, limits: Limits) -> Raw:
        queries = query_class.enumerate()
        values = query_class.answer(queries, codes, weights).astype(object)
        values = values + query_class.signature(queries).astype(object) @ np.asarray(separator_weights, dtype=object)
        best = int(np.argmin(values))
        return Raw(queries[best], int(values[best]), "enumerated", True, len(queries))

    def _maximize(self, query_class, queries, weights, rho, limits: Limits) -> Raw:
        domain = query_class.domain
        total = int(np.prod(domain.sizes, dtype=object))
        if total > ENUMERATION_LIMIT:
            return Raw(None, None, "too large", False, message=f"{total} records is too many to enumerate")
        records = np.array(list(itertools.product(*(range(s) for s in domain.sizes))), dtype=np.int64)
        values = np.zeros(len(records), dtype=np.int64)
        if queries:
            values += np.asarray(weights, dtype=np.int64) @ query_class.evaluate(queries, query_class.features(records)).astype(np.int64)
        for j, (a, v) in enumerate(query_class.dual_separator()):
            values += int(rho[j]) * (records[:, a] == v)
        best = int(np.argmax(values))
        return Raw(records[best], int(values[best]), "enumerated", True, len(records))
