"""Parities of the compact binary features.

``q_S(x) = XOR_{j in S} x_j = (sum_{j in S} x_j) mod 2`` for a set ``S`` of
features with ``|S| <= max_width``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from synthdp.queries.base import Separator
from synthdp.queries.binary import FeatureSet, FeatureSetClass, linear_blocks


@dataclass(frozen=True, order=True)
class Parity(FeatureSet):
    """``XOR_{j in features} x_j``; ``features`` strictly increasing (empty: the constant 0)."""


class Parities(FeatureSetClass):
    """Parities of width ``0..max_width`` (width 0 is the constant 0, whose complement is TRUE)."""

    query_type = Parity
    kind = "parities"
    parity = True

    def evaluate(self, queries: Sequence[Parity], points: np.ndarray) -> np.ndarray:
        out = np.empty((len(queries), np.shape(points)[0]), dtype=np.uint8)
        for rows, prod in linear_blocks(self.incidence(queries), points):
            out[rows] = prod.astype(np.int64) & 1
        return out

    def separator(self) -> Separator:
        """The ``d`` unit points ``e_j``.

        ``q_S(e_j) = [j in S]``, so the signature of ``q_S`` is the indicator
        of ``S``.  *Proof that it separates.*  If ``S != S'``, some ``j`` lies
        in exactly one of them and ``e_j`` takes different values on the two
        queries.  Fewer points cannot do for the unbounded class (``2**d``
        queries, at most ``2**m`` signatures).
        """
        return Separator(self.n_features, np.eye(self.n_features, dtype=np.uint8), self.separator.__doc__ or "")

    def signature(self, queries: Sequence[Parity]) -> np.ndarray:
        """Closed form: ``sig_j(q_S) = [j in S]``."""
        return self.incidence(queries)

    def anchor(self) -> tuple[np.ndarray, int]:
        """Every parity is 0 on the all-zeros point."""
        return np.zeros(self.n_features, dtype=np.uint8), 0

    def describe(self, query: Parity) -> str:
        return self.join(query, "XOR", "FALSE")
