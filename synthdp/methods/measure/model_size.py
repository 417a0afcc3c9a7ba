"""The size of the model that would hold a set of cliques plus one candidate, for many candidates at once.

Select-measure-estimate keeps only candidates whose addition keeps the
model within a public size cap (docs/privacy.md §8.1, §8.4), so every
round asks, for each of up to thousands of candidates ``r``, how many cells
the junction tree of ``cliques + [r]`` would have.
:func:`synthdp.methods.measure.estimators.model_cells` answers one such question by
building the junction tree; here the same number is computed for a whole
batch in compiled code, on bit masks, by the same triangulation:

* the graph joins every two attributes that share a clique (every
  attribute of the domain is a vertex);
* a graph that is a tree (connected, ``d - 1`` edges) needs no fill-in: its
  maximal cliques are its edges;
* otherwise attributes are eliminated greedily: at each step the
  remaining attribute with the fewest cells in its elimination clique (itself
  and its remaining neighbours) goes first, the lowest index on ties, and
  its neighbours are joined (the junction tree's greedy order scores an
  attribute that no clique mentions 1 instead of its size: such an attribute
  is isolated, and eliminating it early or late changes no other step);
  only the eliminated attribute's neighbours change cost, so only theirs
  are recomputed (``O(d**2)`` per candidate, not ``O(d**3)``);
* the model's cliques are the maximal elimination cliques, and its size is
  the sum of their cells.

Attribute sets are bit masks of :data:`BITS` attributes per int64 word, so
any number of attributes is handled.  Cell counts saturate at
:data:`SATURATED`: a model that large is over any cap, and the greedy
order is exact whenever the cheapest elimination clique is below it, so
every size below :data:`SATURATED` is exact.

This is post-processing of public values (attribute sets and the domain),
and it must agree exactly with :func:`~synthdp.methods.measure.estimators.model_cells`
(``tests/methods/measure/test_model_size.py`` checks it on random clique sets): the cap
decides which candidates the exponential mechanism sees.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np
from numba import njit

from synthdp.core.domain import Domain
from synthdp.mechanisms.selection_kernel import _bit_length
from synthdp.methods.measure.estimators import Clique

#: Attributes per int64 word of a bit mask (bit 63, the sign, is left unused).
BITS = 62
#: Cell counts saturate here (every product and sum stays in int64).
SATURATED = 2**62


def _masks(sets: Sequence[Sequence[int]], words: int) -> np.ndarray:
    """One row of ``words`` int64 words per attribute set: attribute ``a`` is bit ``a % BITS`` of word ``a // BITS``."""
    out = np.zeros((len(sets), words), dtype=np.int64)
    for i, attrs in enumerate(sets):
        for a in attrs:
            out[i, a // BITS] |= 1 << (a % BITS)
    return out


@njit(cache=True, nogil=True)
def _bit(mask, a):
    return (mask[a // 62] >> (a % 62)) & 1


@njit(cache=True, nogil=True)
def _cells(mask, sizes):
    """Product of ``sizes`` over the attributes in ``mask`` (saturating at 2**62)."""
    out = np.int64(1)
    for w in range(mask.shape[0]):
        m = mask[w]
        base = w * 62
        while m:
            low = m & -m
            a = base + _trailing(low)
            m ^= low
            s = sizes[a]
            out = np.int64(2**62) if out > np.int64(2**62) // s else out * s
    return out


@njit(cache=True, nogil=True)
def _trailing(low):
    """Index of the single bit set in ``low``."""
    return _bit_length(low) - 1


@njit(cache=True, nogil=True)
def _add(total, cells):
    return np.int64(2**62) if total > np.int64(2**62) - cells else total + cells


@njit(cache=True, nogil=True)
def _cost(adj, a, remaining, scratch, sizes):
    """Cells of ``a``'s elimination clique: itself and its remaining neighbours."""
    for w in range(adj.shape[1]):
        scratch[w] = adj[a, w] & remaining[w]
    scratch[a // 62] |= np.int64(1) << (a % 62)
    return _cells(scratch, sizes)


@njit(cache=True, nogil=True)
def _push(heap_cost, heap_node, size, c, a):
    """Push ``(c, a)`` on the binary min-heap (ordered by cost, then by attribute); returns the new size."""
    i = size
    heap_cost[i], heap_node[i] = c, a
    while i > 0:
        up = (i - 1) // 2
        if heap_cost[up] < heap_cost[i] or (heap_cost[up] == heap_cost[i] and heap_node[up] < heap_node[i]):
            break
        heap_cost[up], heap_cost[i] = heap_cost[i], heap_cost[up]
        heap_node[up], heap_node[i] = heap_node[i], heap_node[up]
        i = up
    return size + 1


@njit(cache=True, nogil=True)
def _pop(heap_cost, heap_node, size):
    """Remove the heap's top (read it before calling); returns the new size."""
    size -= 1
    heap_cost[0], heap_node[0] = heap_cost[size], heap_node[size]
    i = 0
    while True:
        low, left, right = i, 2 * i + 1, 2 * i + 2
        for k in (left, right):
            if k < size and (heap_cost[k] < heap_cost[low]
                             or (heap_cost[k] == heap_cost[low] and heap_node[k] < heap_node[low])):
                low = k
        if low == i:
            return size
        heap_cost[low], heap_cost[i] = heap_cost[i], heap_cost[low]
        heap_node[low], heap_node[i] = heap_node[i], heap_node[low]
        i = low


@njit(cache=True, nogil=True)
def _is_tree(adj, edges, scratch):
    """Whether the graph ``adj`` with ``edges`` edges is a tree (connected, ``d - 1`` edges)."""
    d, words = adj.shape
    if edges == 0 or edges != d - 1:
        return False
    seen = np.zeros(words, dtype=np.int64)
    frontier = np.zeros(words, dtype=np.int64)
    seen[0] = 1
    frontier[0] = 1
    grew = True
    while grew:
        grew = False
        scratch[:] = 0
        for a in range(d):
            if _bit(frontier, a):
                for w in range(words):
                    scratch[w] |= adj[a, w]
        for w in range(words):
            frontier[w] = scratch[w] & ~seen[w]
            if frontier[w]:
                grew = True
            seen[w] |= scratch[w]
    for a in range(d):
        if not _bit(seen, a):
            return False
    return True


@njit(cache=True, nogil=True)
def _one(adj, edges, cost, sizes, cliques, remaining, scratch, heap_cost, heap_node, order, position, width):
    """Cells of the triangulation of the graph ``adj`` with ``edges`` edges, given every attribute's elimination
    cost ``cost`` in the whole graph (``adj``, ``cost`` and the work arrays are overwritten)."""
    d, words = adj.shape
    if _is_tree(adj, edges, scratch):  # no fill-in: its edges are its cliques
        return _edge_cells(adj, sizes)
    remaining[:] = 0
    for a in range(d):
        remaining[a // 62] |= np.int64(1) << (a % 62)
    alive = np.ones(d, dtype=np.bool_)
    size = 0
    for a in range(d):
        size = _push(heap_cost, heap_node, size, cost[a], a)
    for step in range(d):
        while True:  # stale entries (an eliminated attribute, or a cost since changed) are skipped
            best, c = heap_node[0], heap_cost[0]
            size = _pop(heap_cost, heap_node, size)
            if alive[best] and c == cost[best]:
                break
        alive[best] = False
        remaining[best // 62] &= ~(np.int64(1) << (best % 62))
        for w in range(words):
            cliques[step, w] = adj[best, w] & remaining[w]
        for v in range(words):  # the neighbours are joined; only their costs change
            m = cliques[step, v]
            while m:
                low = m & -m
                m ^= low
                b = v * 62 + _trailing(low)
                for w in range(words):
                    adj[b, w] |= cliques[step, w]
                adj[b, b // 62] &= ~(np.int64(1) << (b % 62))
                new = _cost(adj, b, remaining, scratch, sizes)
                if new != cost[b]:
                    cost[b] = new
                    size = _push(heap_cost, heap_node, size, new, b)
        cliques[step, best // 62] |= np.int64(1) << (best % 62)
        order[step] = best
    return _maximal_cells(cliques, order, position, width, sizes)


@njit(cache=True, nogil=True)
def _edge_cells(adj, sizes):
    """Cells of a tree's cliques, its edges: the sum of ``sizes[a] * sizes[b]`` over its edges (saturating)."""
    d = adj.shape[0]
    total = np.int64(0)
    for a in range(d):
        for b in range(a + 1, d):
            if _bit(adj[a], b):
                total = _add(total, sizes[a] * sizes[b])
    return total


@njit(cache=True, nogil=True)
def _maximal_cells(cliques, order, position, width, sizes):
    """Cells of the maximal cliques among the elimination cliques ``cliques`` (row ``step``: the attribute
    eliminated at ``step``, ``order[step]``, with its later neighbours); ``position`` and ``width`` are work arrays.

    Fulkerson and Gross: an elimination clique is inside another only if it equals the neighbours of an attribute
    eliminated before it, whose earliest-eliminated neighbour it belongs to.
    """
    d, words = cliques.shape
    for step in range(d):
        position[order[step]] = step
        width[step] = _popcount(cliques[step])
    maximal = np.ones(d, dtype=np.bool_)
    for step in range(d):
        first = -1
        for v in range(words):
            m = cliques[step, v]
            while m:
                low = m & -m
                m ^= low
                b = v * 62 + _trailing(low)
                if b != order[step] and (first < 0 or position[b] < position[first]):
                    first = b
        if first >= 0 and width[position[first]] == width[step] - 1:
            maximal[position[first]] = False
    total = np.int64(0)
    for step in range(d):
        if maximal[step]:
            total = _add(total, _cells(cliques[step], sizes))
    return total


@njit(cache=True, nogil=True)
def _popcount(mask):
    out = 0
    for w in range(mask.shape[0]):
        m = mask[w]
        while m:
            m &= m - 1
            out += 1
    return out


@njit(cache=True, nogil=True)
def _batch(sizes, adj, candidates):
    """Cells of the triangulation of ``adj`` with each candidate's attributes joined (one answer per candidate).

    The graph's edges and elimination costs are counted once; per candidate
    only its own attributes' change.
    """
    d, words = adj.shape
    full = np.zeros(words, dtype=np.int64)
    for a in range(d):
        full[a // 62] |= np.int64(1) << (a % 62)
    scratch = np.empty(words, dtype=np.int64)
    base_cost = np.empty(d, dtype=np.int64)
    edges = 0
    for a in range(d):
        base_cost[a] = _cost(adj, a, full, scratch, sizes)
        for w in range(words):
            m = adj[a, w]
            while m:
                m &= m - 1
                edges += 1
    edges //= 2
    out = np.empty(candidates.shape[0], dtype=np.int64)
    work = np.empty_like(adj)
    cliques = np.empty_like(adj)
    remaining = np.empty(words, dtype=np.int64)
    cost = np.empty(d, dtype=np.int64)
    heap_cost = np.empty(d + d * d, dtype=np.int64)  # at most d entries plus one per cost change
    heap_node = np.empty(d + d * d, dtype=np.int64)
    order = np.empty(d, dtype=np.int64)
    position = np.empty(d, dtype=np.int64)
    width = np.empty(d, dtype=np.int64)
    for k in range(candidates.shape[0]):
        r = candidates[k]
        work[:, :] = adj
        cost[:] = base_cost
        added = 0
        for a in range(d):
            if _bit(r, a):
                for b in range(a + 1, d):
                    if _bit(r, b) and not _bit(adj[a], b):
                        added += 1
                for w in range(words):
                    work[a, w] |= r[w]
                work[a, a // 62] &= ~(np.int64(1) << (a % 62))
        for a in range(d):
            if _bit(r, a):
                cost[a] = _cost(work, a, full, scratch, sizes)
        out[k] = _one(work, edges + added, cost, sizes, cliques, remaining, scratch, heap_cost, heap_node, order,
                      position, width)
    return out


def model_cells_with(domain: Domain, cliques: Sequence[Clique], candidates: Sequence[Clique]) -> list[int]:
    """``[model_cells(domain, list(cliques) + [r]) for r in candidates]``, computed in one compiled pass.

    Sizes of :data:`SATURATED` cells or more come back as :data:`SATURATED`.
    """
    if not candidates:
        return []
    d = len(domain)
    words = -(-d // BITS)
    adj = np.zeros((d, words), dtype=np.int64)
    for c, m in zip(cliques, _masks(cliques, words)):
        for a in c:
            adj[a] |= m
            adj[a, a // BITS] &= ~(1 << (a % BITS))
    out = _batch(np.asarray(domain.sizes, dtype=np.int64), adj, _masks(candidates, words))
    return [int(v) for v in out]
