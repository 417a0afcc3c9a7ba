"""Integer halfspaces over the compact binary features.

``q(x) = [w . x >= theta]`` with integer weights ``w_j in {-B..B}`` and
threshold ``theta in [-B d, B d + 1]``.  Over 0/1 points ``w . x`` lies in
``[-B d, B d]``, so the two extreme thresholds give the constants TRUE and
FALSE, and the class is closed under complement:
``1 - [w . x >= theta] = [w . x <= theta - 1] = [-w . x >= 1 - theta]``,
and ``1 - theta`` stays in the threshold range.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from synthdp.queries.base import Separator
from synthdp.queries.binary import BinaryFeatureClass, bits, linear_blocks
from synthdp.queries.conjunctions import is_int
from synthdp.core.domain import Domain
from synthdp.core.errors import InputError


@dataclass(frozen=True, order=True)
class Halfspace:
    """``[sum_j weights[j] x_j >= threshold]``; one weight per binary feature."""

    weights: tuple[int, ...]
    threshold: int


class Halfspaces(BinaryFeatureClass):
    """All halfspaces with ``|w_j| <= weight_bound`` and ``theta`` in ``[theta_min, theta_max]``.

    The class is a set of *representations* ``(w, theta)``: distinct
    representations may be the same function (``[x >= 1]`` and
    ``[2 x >= 2]``), and both are feasible for a solver.
    """

    complement_closed = True
    linear_threshold = True

    def __init__(self, domain: Domain, *, weight_bound: int = 1):
        super().__init__(domain)
        if not (is_int(weight_bound) and weight_bound >= 1):
            raise InputError(f"halfspaces: weight_bound must be an integer >= 1, got {weight_bound!r}")
        d = self.n_features
        self.weight_bound = int(weight_bound)
        self.theta_min = -self.weight_bound * d
        self.theta_max = self.weight_bound * d + 1
        #: Bits per weight (digits of ``w_j + B``) and for the threshold (digits of ``theta - theta_min``).
        self.weight_bits = (2 * self.weight_bound).bit_length()
        self.threshold_bits = (self.theta_max - self.theta_min).bit_length()
        self.name = f"halfspaces:{self.weight_bound}"

    def _arrays(self, queries: Sequence[Halfspace]) -> tuple[np.ndarray, np.ndarray]:
        w = np.array([q.weights for q in queries], dtype=np.int64).reshape(len(queries), self.n_features)
        return w, np.array([q.threshold for q in queries], dtype=np.int64)

    def evaluate(self, queries: Sequence[Halfspace], points: np.ndarray) -> np.ndarray:
        w, theta = self._arrays(queries)
        out = np.empty((len(queries), np.shape(points)[0]), dtype=np.uint8)
        for rows, prod in linear_blocks(w.astype(np.float64), points):
            out[rows] = prod >= theta[rows, None]
        return out

    def separator(self) -> Separator:
        """A *generalised* separator: the binary digits of the representation.

        No set of points can separate this class as the solver sees it:
        ``(w, theta) = (e_1, 1)`` and ``(2 e_1, 2)`` (when ``B >= 2``) agree on
        every point of ``Z^d``, and for ``B = 1`` already ``(e_1, 0)`` and
        ``(e_1, -1)`` agree on every 0/1 point.  Requirement R0 concerns the
        solver's feasible set, so points would violate it.

        The coordinates are instead the ``bit_length(2B)`` binary digits of
        ``w_j + B`` for each feature ``j``, then the
        ``bit_length(theta_max - theta_min)`` digits of ``theta - theta_min``:
        ``m = d * bit_length(2B) + bit_length(2Bd + 1)``.  A solver encodes
        them as the bits of its integer variables.  *Proof.*  Each shifted
        value is an integer in ``[0, 2**bits)``, which its digits determine,
        so the signature determines ``(w, theta)``: distinct feasible
        representations have distinct 0/1 signatures.  Lemma 2.1 uses only
        that (and that coordinates are 0/1), so RSPM with these coordinates
        is private, its output being the representation.
        """
        m = self.n_features * self.weight_bits + self.threshold_bits
        return Separator(m, None, self.separator.__doc__ or "")

    def signature(self, queries: Sequence[Halfspace]) -> np.ndarray:
        w, theta = self._arrays(queries)
        return np.hstack([
            bits(w + self.weight_bound, self.weight_bits).reshape(len(queries), self.n_features * self.weight_bits),
            bits(theta - self.theta_min, self.threshold_bits),
        ])

    def size(self) -> int:
        return (2 * self.weight_bound + 1) ** self.n_features * (self.theta_max - self.theta_min + 1)

    def _enumerate(self):
        B = self.weight_bound
        for w in itertools.product(range(-B, B + 1), repeat=self.n_features):
            for theta in range(self.theta_min, self.theta_max + 1):
                yield Halfspace(w, theta)

    def contains(self, query) -> bool:
        return (
            isinstance(query, Halfspace)
            and isinstance(query.weights, tuple)
            and len(query.weights) == self.n_features
            and all(is_int(v) and abs(v) <= self.weight_bound for v in query.weights)
            and is_int(query.threshold)
            and self.theta_min <= query.threshold <= self.theta_max
        )

    def complement(self, query: Halfspace) -> Halfspace:
        """``1 - [w . x >= theta] = [-w . x >= 1 - theta]``."""
        return Halfspace(tuple(-v for v in query.weights), 1 - query.threshold)

    def attributes_of(self, query: Halfspace) -> tuple[int, ...]:
        """The attributes of the features with a non-zero weight."""
        return self.feature_attributes(j for j, w in enumerate(query.weights) if w)

    def describe(self, query: Halfspace) -> str:
        terms = []
        for j, v in enumerate(query.weights):
            if v:
                coef = "" if abs(v) == 1 else f"{abs(v)}*"
                sign = "-" if v < 0 else "+"
                terms.append(f"{sign} {coef}[{self.feature_literal(j)}]")
        lhs = " ".join(terms).removeprefix("+ ") or "0"
        return f"{lhs} >= {query.threshold}"
