"""A dataset held as its distinct encoded rows with integer counts.

This is the contingency table in sparse form. Every later step (query
answers, oracle objectives, the game) works on it, so duplicate rows are
aggregated once and all arithmetic on counts is exact integer arithmetic.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from synthdp.core.domain import Domain
from synthdp.core.errors import SchemaError

#: Float sums of integers are exact while every partial sum stays below this.
_EXACT_FLOAT = 2**53


def weighted_bincount(index: np.ndarray, weights: np.ndarray, size: int) -> np.ndarray:
    """Exact integer ``out[i] = sum(weights[index == i])``.

    Uses ``np.bincount`` (float64) when the total absolute weight is below
    2**53, where float addition of integers is exact, and integer
    ``np.add.at`` otherwise.
    """
    weights = np.asarray(weights)
    if weights.dtype == object or np.abs(weights).sum(dtype=np.float64) >= _EXACT_FLOAT:
        out = np.zeros(size, dtype=weights.dtype if weights.dtype == object else np.int64)
        np.add.at(out, index, weights)
        return out
    return np.rint(np.bincount(index, weights=weights, minlength=size)).astype(np.int64)


@dataclass(frozen=True)
class AggregatedData:
    """Distinct rows ``codes`` (sorted) with positive integer ``counts``."""

    domain: Domain
    codes: np.ndarray
    counts: np.ndarray

    @classmethod
    def from_codes(cls, domain: Domain, codes: np.ndarray, counts: np.ndarray | None = None) -> "AggregatedData":
        """Aggregate a code matrix (optionally with per-row counts) into distinct rows."""
        codes = domain.check_codes(codes)
        if counts is None:
            counts = np.ones(codes.shape[0], dtype=np.int64)
        counts = np.asarray(counts, dtype=np.int64)
        if counts.shape != (codes.shape[0],):
            raise SchemaError(f"counts must have shape ({codes.shape[0]},), got {counts.shape}")
        if (counts < 0).any():
            raise SchemaError(f"negative count in row {int(np.flatnonzero(counts < 0)[0])}")
        if codes.shape[0] == 0:
            return cls(domain, codes.reshape(0, len(domain)), counts)
        uniq, inverse = np.unique(codes, axis=0, return_inverse=True)
        agg = np.zeros(uniq.shape[0], dtype=np.int64)
        np.add.at(agg, inverse.reshape(-1), counts)
        keep = agg > 0
        return cls(domain, np.ascontiguousarray(uniq[keep]), agg[keep])

    @property
    def n(self) -> int:
        """Number of records (sum of counts)."""
        return int(self.counts.sum())

    def __len__(self) -> int:
        return self.codes.shape[0]

    def expand(self) -> np.ndarray:
        """All records, each distinct row repeated by its count."""
        return np.repeat(self.codes, self.counts, axis=0)

    def marginal(self, attrs: tuple[int, ...]) -> np.ndarray:
        """Integer count table on ``attrs`` (shape: their sizes)."""
        idx = self.domain.flat_index(self.codes, attrs)
        flat = weighted_bincount(idx, self.counts, self.domain.cells(attrs))
        return flat.reshape([self.domain.sizes[a] for a in attrs])

    def combine(self, other: "AggregatedData", self_weight: int = 1, other_weight: int = 1) -> tuple[np.ndarray, np.ndarray]:
        """Distinct rows of both datasets with integer weights ``self_weight*n_x + other_weight*m_x``.

        Used to build oracle objectives such as ``-N n_x(D) + n N_x(P)``;
        rows whose combined weight is zero are dropped.
        """
        codes = np.concatenate([self.codes, other.codes])
        weights = np.concatenate([self_weight * self.counts, other_weight * other.counts])
        if codes.shape[0] == 0:
            return codes, weights
        uniq, inverse = np.unique(codes, axis=0, return_inverse=True)
        agg = np.zeros(uniq.shape[0], dtype=np.int64)
        np.add.at(agg, inverse.reshape(-1), weights)
        keep = agg != 0
        return np.ascontiguousarray(uniq[keep]), agg[keep]
