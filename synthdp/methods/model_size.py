"""The size of the model that would hold a set of cliques plus one candidate, for many candidates at once.

Select-measure-estimate keeps only candidates whose addition keeps the
model within a public size cap (docs/privacy.md §8.1, §8.4), so every
round asks, for each of up to thousands of candidates ``r``, how many cells
the junction tree of ``cliques + [r]`` would have.
:func:`synthdp.methods.estimators.model_cells` answers one such question by
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
* the model's cliques are the maximal elimination cliques, and its size is
  the sum of their cells.

This is post-processing of public values (attribute sets and the domain),
and it must agree exactly with :func:`~synthdp.methods.estimators.model_cells`
(``tests/test_model_size.py`` checks it on random clique sets): the cap
decides which candidates the exponential mechanism sees.  Domains with more
than :data:`MAX_ATTRIBUTES` attributes, or whose cell counts could leave the
int64 range, fall back to ``model_cells`` one candidate at a time.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np
from numba import njit

from synthdp.core.domain import Domain
from synthdp.methods.estimators import Clique, model_cells

#: Most attributes the compiled path handles (one bit each in an int64 mask).
MAX_ATTRIBUTES = 62
#: Largest number of cells of the whole domain the compiled path handles (every product stays in int64).
MAX_CELLS = 2**62


def _mask(attrs: Sequence[int]) -> int:
    out = 0
    for a in attrs:
        out |= 1 << a
    return out


@njit(cache=True, nogil=True)
def _cells(mask, sizes):
    """Product of ``sizes`` over the attributes in ``mask``."""
    out = 1
    for a in range(sizes.shape[0]):
        if (mask >> a) & 1:
            out *= sizes[a]
    return out


@njit(cache=True, nogil=True)
def _one(adj, sizes, cliques):
    """Cells of the triangulation of the graph ``adj`` (``adj`` and ``cliques`` are overwritten)."""
    d = sizes.shape[0]
    edges = 0
    for a in range(d):
        m = adj[a]
        while m:
            m &= m - 1
            edges += 1
    edges //= 2
    if edges > 0 and edges == d - 1:  # connected with d - 1 edges: a tree, no fill-in, its edges are its cliques
        seen = np.int64(1)
        frontier = np.int64(1)
        while frontier:
            grown = np.int64(0)
            for a in range(d):
                if (frontier >> a) & 1:
                    grown |= adj[a]
            frontier = grown & ~seen
            seen |= grown
        if seen == (np.int64(1) << d) - 1:
            total = 0
            for a in range(d):
                for b in range(a + 1, d):
                    if (adj[a] >> b) & 1:
                        total += sizes[a] * sizes[b]
            return total
    remaining = (np.int64(1) << d) - 1
    for step in range(d):
        best = -1
        best_cost = 0
        for a in range(d):
            if not (remaining >> a) & 1:
                continue
            cost = _cells(adj[a] & remaining | (np.int64(1) << a), sizes)
            if best < 0 or cost < best_cost:
                best, best_cost = a, cost
        near = adj[best] & remaining & ~(np.int64(1) << best)
        cliques[step] = near | (np.int64(1) << best)
        for b in range(d):
            if (near >> b) & 1:
                adj[b] |= near & ~(np.int64(1) << b)
        remaining &= ~(np.int64(1) << best)
    total = 0
    for i in range(d):  # elimination cliques are distinct (each lacks the attributes eliminated before it)
        maximal = True
        for j in range(d):
            if j != i and cliques[i] & ~cliques[j] == 0:
                maximal = False
                break
        if maximal:
            total += _cells(cliques[i], sizes)
    return total


@njit(cache=True, nogil=True)
def _batch(sizes, adj, candidates):
    """Cells of the triangulation of ``adj`` with each candidate's attributes joined (one answer per candidate)."""
    d = sizes.shape[0]
    out = np.empty(candidates.shape[0], dtype=np.int64)
    work = np.empty(d, dtype=np.int64)
    cliques = np.empty(d, dtype=np.int64)
    for k in range(candidates.shape[0]):
        r = candidates[k]
        for a in range(d):
            work[a] = adj[a] | (r & ~(np.int64(1) << a)) if (r >> a) & 1 else adj[a]
        out[k] = _one(work, sizes, cliques)
    return out


def model_cells_with(domain: Domain, cliques: Sequence[Clique], candidates: Sequence[Clique]) -> list[int]:
    """``[model_cells(domain, list(cliques) + [r]) for r in candidates]``, computed in one compiled pass."""
    d = len(domain)
    if d > MAX_ATTRIBUTES or math.prod(domain.sizes) >= MAX_CELLS:
        return [model_cells(domain, list(cliques) + [r]) for r in candidates]
    if not candidates:
        return []
    adj = [0] * d
    for c in cliques:
        m = _mask(c)
        for a in c:
            adj[a] |= m & ~(1 << a)
    out = _batch(np.asarray(domain.sizes, dtype=np.int64), np.asarray(adj, dtype=np.int64),
                 np.asarray([_mask(r) for r in candidates], dtype=np.int64))
    return [int(v) for v in out]
