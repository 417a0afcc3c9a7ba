"""Shared parts of the query classes over the compact binary features.

Monotone conjunctions, parities and halfspaces are functions of the
``d`` compact binary features of :func:`synthdp.queries.base.binary_feature_columns`
(one feature per two-valued attribute, a one-hot block otherwise).  Each of
them is decided by an integer linear form ``c . x`` of the feature vector,
so evaluation is one matrix product per block of queries.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from math import comb
from typing import Iterator, Sequence

import numpy as np

from synthdp.queries.base import QueryClass, binary_feature_columns, binary_features
from synthdp.queries.conjunctions import is_int
from synthdp.core.domain import Domain
from synthdp.core.errors import InputError

#: Entries of one ``queries x points`` block of linear forms.
_BLOCK = 1 << 22


def linear_blocks(coeffs: np.ndarray, points: np.ndarray) -> Iterator[tuple[slice, np.ndarray]]:
    """Yield ``(rows, coeffs[rows] @ points.T)`` over blocks of query rows.

    The products are float64 sums of small integers, hence exact while
    ``sum_j |c_j| < 2**53``.
    """
    pts = np.asarray(points, dtype=np.float64).T
    step = max(1, _BLOCK // max(1, pts.shape[1]))
    for start in range(0, coeffs.shape[0], step):
        rows = slice(start, start + step)
        yield rows, coeffs[rows] @ pts


def bits(values: np.ndarray, width: int) -> np.ndarray:
    """Binary digits (least significant first) of non-negative integers: shape ``values.shape + (width,)``."""
    return ((np.asarray(values, dtype=np.int64)[..., None] >> np.arange(width)) & 1).astype(np.uint8)


class BinaryFeatureClass(QueryClass):
    """A query class whose points are the compact binary feature vectors."""

    def __init__(self, domain: Domain):
        super().__init__(domain)
        #: ``(attribute, value)`` of each feature: feature ``j`` is ``[x_a == v]``.
        self.columns = binary_feature_columns(domain)

    @property
    def n_features(self) -> int:
        return len(self.columns)

    def features(self, codes: np.ndarray) -> np.ndarray:
        return binary_features(self.domain, codes)

    def feature_literal(self, j: int) -> str:
        """Feature ``j`` in column terms, e.g. ``sex=Male``."""
        return self.domain.literal(*self.columns[j])

    def feature_attributes(self, features) -> tuple[int, ...]:
        """The attributes (sorted, once each) of the binary features ``features``."""
        return tuple(sorted({self.columns[j][0] for j in features}))


@dataclass(frozen=True, order=True)
class FeatureSet:
    """A query given by a strictly increasing tuple of feature indices."""

    features: tuple[int, ...]

    @property
    def width(self) -> int:
        return len(self.features)


class FeatureSetClass(BinaryFeatureClass):
    """Queries ``q_S`` for the feature sets ``S`` with ``0 <= |S| <= max_width``.

    The empty set is included (the constant query of the class);
    ``max_width=None`` means every width up to ``d``.
    """

    #: The query dataclass (a :class:`FeatureSet` subclass) and the spec name.
    query_type: type[FeatureSet] = FeatureSet
    kind: str = "featuresets"

    def __init__(self, domain: Domain, *, max_width: int | None = None):
        super().__init__(domain)
        d = self.n_features
        top = d if max_width is None else max_width
        if not (is_int(top) and 0 <= top <= d):
            raise InputError(f"{self.kind}: max_width must be an integer in 0..{d} (number of binary "
                             f"features); got {max_width!r}")
        self.max_width = int(top)
        self.name = self.kind if max_width is None else f"{self.kind}:{self.max_width}"

    @property
    def attributes_read(self) -> int:
        """A feature is one ``(attribute, value)`` pair: ``max_width`` features read at most that many attributes."""
        return self.max_width

    def attributes_of(self, query: FeatureSet) -> tuple[int, ...]:
        return self.feature_attributes(query.features)

    def incidence(self, queries: Sequence[FeatureSet]) -> np.ndarray:
        """``(len(queries), d)`` 0/1 matrix with row ``i`` the indicator of ``S_i``."""
        out = np.zeros((len(queries), self.n_features), dtype=np.uint8)
        rows = np.repeat(np.arange(len(queries)), [q.width for q in queries])
        out[rows, np.fromiter((j for q in queries for j in q.features), dtype=np.int64)] = 1
        return out

    def size(self) -> int:
        return sum(comb(self.n_features, w) for w in range(self.max_width + 1))

    def _enumerate(self):
        for width in range(self.max_width + 1):
            for feats in itertools.combinations(range(self.n_features), width):
                yield self.query_type(feats)

    def contains(self, query) -> bool:
        if not (isinstance(query, self.query_type) and isinstance(query.features, tuple)
                and all(map(is_int, query.features))):
            return False
        f = query.features
        return (len(f) <= self.max_width and all(a < b for a, b in zip(f, f[1:]))
                and all(0 <= j < self.n_features for j in f))

    def join(self, query: FeatureSet, operator: str, empty: str) -> str:
        """The features of ``query`` in column terms joined by ``operator``."""
        return f" {operator} ".join(map(self.feature_literal, query.features)) or empty
