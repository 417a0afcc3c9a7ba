"""Exact row keys: each encoded row as a few int64 words of a mixed-radix number.

With the public domain sizes as radices, a row's key orders rows the way
their code tuples sort, and distinct rows have distinct keys.  One word holds
a run of consecutive attributes whose product of sizes is below 2**63; a
domain larger than that takes several words, so no key ever wraps.  This is
the one implementation of row identity: wherever rows are matched or
counted by key (the counting engines, the record rounds of ``measure``),
they are keyed here (docs/privacy.md §10.1).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from synthdp.core.errors import InternalError

__all__ = ["WORD_LIMIT", "check_index_range", "count_equal", "pack", "unpack", "word_spans"]

#: Every word stays below this, so int64 holds it exactly.
WORD_LIMIT = 2**63


def check_index_range(cells: int, what: str) -> None:
    """Raise :class:`InternalError` unless an int64 index over ``cells`` cells (a Python int) cannot wrap."""
    if int(cells) >= WORD_LIMIT:
        raise InternalError(f"{what} has {cells} cells, at least 2**63: an int64 index over it would wrap and merge "
                            "distinct cells; key whole rows with synthdp.core.keys.pack (a bug in the caller)")


def word_spans(sizes: Sequence[int]) -> tuple[tuple[int, int], ...]:
    """Runs ``[start, stop)`` of consecutive attributes, each run's product of sizes below 2**63."""
    spans, start, product = [], 0, 1
    for j, size in enumerate(sizes):
        if product * size >= WORD_LIMIT and j > start:
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


def count_equal(codes: np.ndarray, counts: np.ndarray, points: np.ndarray, sizes: Sequence[int]) -> np.ndarray:
    """For each row of ``points``, the exact sum of ``counts`` over the rows of ``codes`` equal to it (int64).

    Rows are compared by their whole keys (:func:`pack`), never by a
    truncated index, so two rows are matched only when every attribute agrees.
    """
    if points.shape[0] == 0 or codes.shape[0] == 0:
        return np.zeros(points.shape[0], dtype=np.int64)
    keys = np.concatenate([pack(codes, sizes), pack(points, sizes)])
    if keys.shape[1] == 1:  # one word: numpy's integer sort, not its slower row sort
        _, inverse = np.unique(keys[:, 0], return_inverse=True)
    else:
        _, inverse = np.unique(keys, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    table = np.zeros(int(inverse.max()) + 1, dtype=np.int64)
    np.add.at(table, inverse[: codes.shape[0]], np.asarray(counts, dtype=np.int64))
    return table[inverse[codes.shape[0] :]]
