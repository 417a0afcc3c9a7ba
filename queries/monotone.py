"""Monotone conjunctions of the compact binary features.

``q_S(x) = AND_{j in S} x_j`` for a set ``S`` of features with
``|S| <= max_width``.  On an all-binary dataset (NLTCS, ACS) these are the
classic monotone conjunctions ``x_i = 1 AND x_j = 1 ...``; a non-binary
attribute contributes its one-hot indicators ``[x_a == v]``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from synthdp.queries.base import Separator
from synthdp.queries.binary import FeatureSet, FeatureSetClass, linear_blocks


@dataclass(frozen=True, order=True)
class MonotoneConjunction(FeatureSet):
    """``AND_{j in features} x_j``; ``features`` strictly increasing (empty: TRUE)."""


class MonotoneConjunctions(FeatureSetClass):
    """Monotone conjunctions of width ``0..max_width`` (width 0 is the constant TRUE).

    Width 0 is included because it costs nothing: the separator below tells
    it apart from every other query, and together with its complement it
    gives the game the constant queries.
    """

    query_type = MonotoneConjunction
    kind = "monotone"
    conjoins = "binary"

    def evaluate(self, queries: Sequence[MonotoneConjunction], points: np.ndarray) -> np.ndarray:
        """``q_S(x) = [sum_{j in S} x_j >= |S|]`` on 0/1 points."""
        inc = self.incidence(queries)
        widths = inc.sum(axis=1)
        out = np.empty((len(queries), np.shape(points)[0]), dtype=np.uint8)
        for rows, prod in linear_blocks(inc, points):
            out[rows] = prod >= widths[rows, None]
        return out

    def separator(self) -> Separator:
        """The ``d`` points ``1 - e_j`` (all ones except feature ``j``).

        ``q_S(1 - e_j) = 0`` if ``j in S`` and ``1`` otherwise, so the
        signature of ``q_S`` is the complement of the indicator of ``S``.
        *Proof that it separates.*  If ``S != S'``, some ``j`` lies in one
        set and not the other, and ``1 - e_j`` gives ``0`` on that query and
        ``1`` on the other.  Fewer points cannot do for the unbounded class:
        it has ``2**d`` queries and ``m`` points give at most ``2**m``
        signatures.
        """
        points = 1 - np.eye(self.n_features, dtype=np.uint8)
        return Separator(self.n_features, points, self.separator.__doc__ or "")

    def signature(self, queries: Sequence[MonotoneConjunction]) -> np.ndarray:
        """Closed form: ``sig_j(q_S) = [j not in S]``."""
        return 1 - self.incidence(queries)

    def anchor(self) -> tuple[np.ndarray, int]:
        """Every monotone conjunction is 1 on the all-ones point."""
        return np.ones(self.n_features, dtype=np.uint8), 1

    def literals(self, query: MonotoneConjunction) -> tuple[tuple[int, int], ...]:
        """The binary features' record literals; two of one attribute make a query that is never true."""
        return tuple(self.columns[j] for j in query.features)

    def describe(self, query: MonotoneConjunction) -> str:
        return self.join(query, "AND", "TRUE")
