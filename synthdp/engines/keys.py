"""One integer key per encoded row: the codes read as digits of a mixed-radix number.

With the public domain sizes as radices, a row's key orders rows the way
their code tuples sort, and distinct rows have distinct keys, so counting
distinct rows is counting distinct integers (one integer sort, cheap to split
and add up). Domains whose product of sizes does not fit in an int64 use several
words, each packing a run of consecutive attributes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from synthdp.core.data import AggregatedData, weighted_bincount
from synthdp.core.domain import Domain

__all__ = ["aggregate", "pack", "sum_by_key", "unpack", "word_spans"]

_WORD_LIMIT = 2**63  # keys stay below this, so int64 holds them


def word_spans(sizes: Sequence[int]) -> tuple[tuple[int, int], ...]:
    """Runs ``[start, stop)`` of consecutive attributes, each run's product of sizes below 2**63."""
    spans, start, product = [], 0, 1
    for j, size in enumerate(sizes):
        if product * size >= _WORD_LIMIT and j > start:
            spans.append((start, j))
            start, product = j, 1
        product *= size
    spans.append((start, len(sizes)))
    return tuple(spans)


def _multipliers(sizes: Sequence[int], start: int, stop: int) -> np.ndarray:
    """Place values of the digits ``start..stop-1`` of one word (the last attribute varies fastest)."""
    out = np.ones(stop - start, dtype=np.int64)
    for j in range(stop - 2, start - 1, -1):
        out[j - start] = out[j - start + 1] * sizes[j + 1]
    return out


def pack(codes: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    """The ``(n, words)`` int64 keys of an ``(n, len(sizes))`` code matrix.

    One integer matrix product per word; it is exact because every key is
    below 2**63.
    """
    spans = word_spans(sizes)
    words = np.empty((codes.shape[0], len(spans)), dtype=np.int64)
    for w, (start, stop) in enumerate(spans):
        words[:, w] = codes[:, start:stop] @ _multipliers(sizes, start, stop)
    return words


def unpack(words: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    """Inverse of :func:`pack`: the code matrix of the keys."""
    spans = word_spans(sizes)
    codes = np.empty((words.shape[0], len(sizes)), dtype=np.int64)
    for w, (start, stop) in enumerate(spans):
        key = words[:, w].copy()
        for j in range(stop - 1, start - 1, -1):
            key, codes[:, j] = np.divmod(key, sizes[j])
    return codes


def sum_by_key(keys: np.ndarray, counts: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
    """Distinct rows of ``keys`` with the number (or the exact sum of ``counts``) of each."""
    words = keys.shape[1]
    if keys.shape[0] == 0:
        return keys, np.zeros(0, dtype=np.int64)
    if words == 1:  # numpy's vectorised integer sort beats a hash table here
        if counts is None:
            distinct, number = np.unique(keys[:, 0], return_counts=True)
            return distinct.reshape(-1, 1), number.astype(np.int64)
        distinct, positions = np.unique(keys[:, 0], return_inverse=True)
        return distinct.reshape(-1, 1), weighted_bincount(positions.reshape(-1), counts, len(distinct))
    frame = pd.DataFrame(keys, columns=range(words), copy=False)
    frame["n"] = 1 if counts is None else counts
    summed = frame.groupby(list(range(words)), sort=False)["n"].sum()
    index = summed.index
    distinct = np.column_stack([index.get_level_values(w).to_numpy(dtype=np.int64) for w in range(words)])
    return distinct, summed.to_numpy(dtype=np.int64)


def aggregate(domain: Domain, codes: np.ndarray) -> AggregatedData:
    """The distinct rows of a code matrix with their counts, counted by key.

    Equal to :meth:`AggregatedData.from_codes` on the same codes, which sorts
    whole rows instead of one integer per row (several times slower).
    """
    codes = domain.check_codes(codes)
    keys, counts = sum_by_key(pack(codes, domain.sizes), None)
    return AggregatedData.from_codes(domain, unpack(keys, domain.sizes), counts)
