"""One integer key per encoded row: the codes read as digits of a mixed-radix number.

With the public domain sizes as radices, a row's key orders rows the way
their code tuples sort, and distinct rows have distinct keys, so counting
distinct rows is counting distinct integers (a hash count, cheap to split and
add up). Domains whose product of sizes does not fit in an int64 use several
words, each packing a run of consecutive attributes.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["pack", "unpack", "word_spans"]

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


def pack(codes: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    """The ``(n, words)`` int64 keys of an ``(n, len(sizes))`` code matrix."""
    spans = word_spans(sizes)
    words = np.zeros((codes.shape[0], len(spans)), dtype=np.int64)
    for w, (start, stop) in enumerate(spans):
        key = words[:, w]
        for j in range(start, stop):
            key *= sizes[j]
            key += codes[:, j]
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

