"""Exact minimum of ``sum_r w_r q(x_r)`` over parities, from one Walsh-Hadamard transform.

For the binary feature vectors ``x`` in ``{0,1}^D`` and a feature set ``S``,
``q_S(x) = popcount(S & x) mod 2 = (1 - (-1)^{popcount(S & x)}) / 2``, so

    ``sum_x h_x q_S(x) = (W - H(S)) / 2``,  ``H(S) = sum_x h_x (-1)^{popcount(S & x)}``,

with ``h`` the weight histogram over the ``2^D`` feature vectors and
``W = sum_x h_x``.  ``H`` is the Walsh-Hadamard transform of ``h``:
``D`` butterfly passes over ``2^D`` integers, every parity of every width
at once (``D 2^D`` additions against ``2^D`` queries times rows for
enumeration).  The minimum over the sets of at most ``max_width``
features is then a masked argmin: exhaustive, hence proven.

Integers stay exact: every ``H(S)`` and every partial butterfly sum is a
signed sum of the weights, bounded by ``sum |w|``, held in int64.
"""

from __future__ import annotations

import numpy as np

from synthdp.oracles.exact.common import SearchOutcome
from synthdp.queries.base import QueryClass
from synthdp.queries.parities import Parities, Parity

#: Largest number of binary features transformed (``2^24`` int64 values: 128 MiB).
MAX_FEATURES = 24
#: ``sum |w|`` must stay below this for int64 sums (far above any table of counts).
_INT_LIMIT = 2**62


def supported(query_class: QueryClass) -> bool:
    """Parities over at most :data:`MAX_FEATURES` binary features."""
    return query_class.parity and query_class.n_features <= MAX_FEATURES


def _popcounts(bits: int) -> np.ndarray:
    """``popcount(S)`` for every ``S < 2^bits`` (uint8)."""
    out = np.zeros(1, dtype=np.uint8)
    for _ in range(bits):
        out = np.concatenate([out, out + 1])
    return out


def walsh_hadamard(h: np.ndarray) -> np.ndarray:
    """``H(S) = sum_x h_x (-1)^{popcount(S & x)}`` for an int64 vector of length ``2^D`` (a new array)."""
    out = np.array(h, dtype=np.int64)
    n = out.size
    step = 1
    while step < n:
        view = out.reshape(-1, 2, step)
        low, high = view[:, 0, :].copy(), view[:, 1, :]
        view[:, 0, :] += high
        view[:, 1, :] = low - high
        step *= 2
    return out


def minimize(query_class: Parities, codes: np.ndarray, weights: np.ndarray) -> SearchOutcome:
    """Exact ``min_S sum_r weights[r] q_S(codes[r])`` over the parities of the class (ties: smallest ``S``)."""
    if not supported(query_class):
        raise TypeError(f"the Walsh-Hadamard search handles parities of at most {MAX_FEATURES} features, "
                        f"not {query_class.name} with {query_class.n_features}")
    weights = np.asarray(weights, dtype=np.int64)
    if int(np.abs(weights).sum(dtype=object)) >= _INT_LIMIT:
        return SearchOutcome(None, float("inf"), False, None, 0, "refused: |weights| sum >= 2**62")
    d = query_class.n_features
    points = query_class.features(np.asarray(codes, dtype=np.int64)).astype(np.int64)
    index = points @ (np.int64(1) << np.arange(d, dtype=np.int64)) if d else np.zeros(len(points), dtype=np.int64)
    hist = np.zeros(1 << d, dtype=np.int64)
    np.add.at(hist, index, weights)
    values = int(weights.sum()) - walsh_hadamard(hist)  # twice the objective of every parity
    values[_popcounts(d) > query_class.max_width] = np.iinfo(np.int64).max
    best = int(np.argmin(values))
    value = int(values[best]) // 2
    query = Parity(tuple(j for j in range(d) if best >> j & 1))
    return SearchOutcome(query, value, True, value, 1, "walsh-hadamard")
