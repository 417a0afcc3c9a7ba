"""Counts of many marginals of one code matrix at once, by bit sets (the scoring sample of docs/privacy.md §8.1).

Each round of select-measure-estimate counts every candidate attribute set
that no model clique holds on a sample of records drawn from the model
(post-processing).  One ``np.bincount`` per candidate reads the whole
sample each time; here the sample is turned once into one bit set per
(attribute, value) -- bit ``i`` set when record ``i`` has that value -- and a
cell's count is the number of bits set in the AND of its values' bit sets.
That reads ``n / 64`` words per cell, so it pays for marginals of at most
:data:`MAX_BITSET_CELLS` cells; wider ones are counted with ``np.bincount``.
The counts are the same integers either way.
"""

from __future__ import annotations

import math
from typing import Iterator, Sequence

import numpy as np
from numba import njit

from synthdp.core.domain import Domain

#: Widest marginal (in cells) counted from the bit sets; wider ones use np.bincount.
MAX_BITSET_CELLS = 64

_M1, _M2, _M4, _H01 = (np.uint64(0x5555555555555555), np.uint64(0x3333333333333333), np.uint64(0x0F0F0F0F0F0F0F0F),
                       np.uint64(0x0101010101010101))
_ONE, _TWO, _FOUR, _TOP = np.uint64(1), np.uint64(2), np.uint64(4), np.uint64(56)


@njit(cache=True, nogil=True)
def _popcount(x):
    """Number of bits set in the uint64 ``x``."""
    x = x - ((x >> _ONE) & _M1)
    x = (x & _M2) + ((x >> _TWO) & _M2)
    x = (x + (x >> _FOUR)) & _M4
    return np.int64((x * _H01) >> _TOP)


@njit(cache=True, nogil=True)
def _count(bits, first, sizes, attrs, widths, starts, out):
    """Every cell's count of every attribute set, row-major, into ``out[starts[i]:]`` (an odometer over the cells).

    ``prefix[j]`` holds the AND of the bit sets of the first ``j`` attributes at
    the current values; only the levels below the digit that moved are redone.
    """
    words = bits.shape[1]
    prefix = np.empty((attrs.shape[1] + 1, words), dtype=np.uint64)
    prefix[0, :] = ~np.uint64(0)
    digits = np.zeros(attrs.shape[1], dtype=np.int64)
    for i in range(attrs.shape[0]):
        k = widths[i]
        digits[:k] = 0
        level, cell = 0, 0
        while level >= 0:
            for j in range(level, k - 1):
                row = first[attrs[i, j]] + digits[j]
                for w in range(words):
                    prefix[j + 1, w] = prefix[j, w] & bits[row, w]
            row = first[attrs[i, k - 1]] + digits[k - 1]
            c = 0
            for w in range(words):
                c += _popcount(prefix[k - 1, w] & bits[row, w])
            out[starts[i] + cell] = c
            cell += 1
            level = k - 1
            while level >= 0:
                digits[level] += 1
                if digits[level] < sizes[attrs[i, level]]:
                    break
                digits[level] = 0
                level -= 1


def marginal_counts(domain: Domain, codes: np.ndarray, marginals: Sequence[tuple[int, ...]]) -> list[np.ndarray]:
    """``[np.bincount(domain.flat_index(codes, r), minlength=domain.cells(r)) for r in marginals]``, in one pass.

    ``codes`` is an ``(n, d)`` matrix of valid codes; each ``r`` a non-empty
    attribute tuple (its order is the counts' row-major order).  The codes are
    read column by column, so they are laid out that way first (one copy):
    a column of a row-major sample is read with a stride of ``d`` values, and
    the scoring sample's thousands of wide marginals each read two or three.
    """
    codes = np.asfortranarray(codes)
    cells_of = {r: math.prod(domain.sizes[a] for a in r) for r in marginals}  # Domain.cells, without its overhead
    narrow = [r for r in cells_of if cells_of[r] <= MAX_BITSET_CELLS]
    counted: dict[tuple[int, ...], np.ndarray] = {}
    if narrow:
        used = sorted({a for r in narrow for a in r})
        first = np.zeros(len(domain), dtype=np.int64)
        rows = []
        for a in used:
            first[a] = len(rows)
            rows.extend(np.packbits(codes[:, a] == v, bitorder="little") for v in range(domain.sizes[a]))
        packed = np.zeros((len(rows), -(-codes.shape[0] // 64) * 8), dtype=np.uint8)  # zero padding: no count
        packed[:, : rows[0].size] = np.stack(rows)
        width = max(len(r) for r in narrow)
        attrs = np.zeros((len(narrow), width), dtype=np.int64)
        for i, r in enumerate(narrow):
            attrs[i, : len(r)] = r
        cells = np.array([cells_of[r] for r in narrow], dtype=np.int64)
        starts = np.concatenate([[0], np.cumsum(cells)[:-1]]).astype(np.int64)
        out = np.empty(int(cells.sum()), dtype=np.int64)
        _count(packed.view(np.uint64), first, np.asarray(domain.sizes, dtype=np.int64), attrs,
               np.array([len(r) for r in narrow], dtype=np.int64), starts, out)
        counted = {r: out[s : s + c] for r, s, c in zip(narrow, starts.tolist(), cells.tolist())}
    return [counted[r] if r in counted else np.bincount(domain.flat_index(codes, r), minlength=cells_of[r])
            for r in marginals]


def marginal_counts_in_batches(domain: Domain, codes: np.ndarray, marginals: Sequence[tuple[int, ...]], *,
                               max_cells: int) -> Iterator[tuple[tuple[int, ...], np.ndarray]]:
    """Each marginal with its counts as :func:`marginal_counts` gives them, counted a batch of at most
    ``max_cells`` cells at a time (a wider marginal alone), so that a caller reading each once and dropping it
    holds one batch's counts, not every marginal's: the covering step's 1,140 triples of a 300,000-row table held
    1.9 GB of counts at once."""
    codes = np.asfortranarray(codes)  # once for every batch
    batch: list[tuple[int, ...]] = []
    cells = 0
    for r in [*marginals, None]:
        width = 0 if r is None else math.prod(domain.sizes[a] for a in r)
        if batch and (r is None or cells + width > max_cells):
            yield from zip(batch, marginal_counts(domain, codes, batch))
            batch, cells = [], 0
        if r is not None:
            batch.append(r)
            cells += width
