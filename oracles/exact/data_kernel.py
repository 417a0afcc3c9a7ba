"""Compiled branch and bound of the ``exact`` data player (the bound is proved in :mod:`synthdp.oracles.exact.data`).

The search is a depth-first loop over explicit per-depth frames, compiled
with numba.  Every piece of state lives in the arrays of
:class:`SearchState`, so one call of :func:`advance` expands at most
``max_nodes`` nodes and returns; the caller checks its wall-clock and work
limits between calls and resumes the same search.  Arithmetic is on int64
integers: exact because the backend admits only instances whose absolute
coefficients sum to less than ``2**53``.

Frame ``p`` (the attributes of depths ``< p`` fixed) holds:

* ``live[p]``: the queries consistent with the fixed attributes and not yet
  decided; a child's list is its parent's, filtered once when the child is
  entered, so a node's work grows with its live queries, not with all;
* ``own[p, v]``: the unary reward of value ``v`` plus the weights of the
  live queries whose last literal is ``(p, v)`` (decided by fixing ``p``);
* ``bound[p, v]``: gain + ``own[p, v]`` + the sum, over deeper depths, of
  the block maxima of the unary table with every undecided live query
  charged to its last literal's cell, with coefficient ``w`` if that is its
  only free attribute once ``p`` is fixed and ``max(w, 0)`` otherwise;
* the children to visit, by decreasing bound (ties: smaller value first).
  A child with no undecided query is exact and is offered at once instead;
  of the idle values (no live query has a literal on them) only the first
  in that order is a child (proof in :mod:`synthdp.oracles.exact.data`).

The incumbent changes only on strict improvement, so the answer depends
only on the instance.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

#: Slots of ``SearchState.scalars``.
DEPTH, NODES, HAS_BEST, BEST = range(4)


@dataclass
class SearchState:
    """The arrays of one resumable search (one ``rho``); see :func:`advance`."""

    scalars: np.ndarray
    unary: np.ndarray
    table: np.ndarray
    live: np.ndarray
    n_live: np.ndarray
    assigned: np.ndarray
    gain: np.ndarray
    own: np.ndarray
    bound: np.ndarray
    children: np.ndarray
    n_children: np.ndarray
    next_child: np.ndarray
    best: np.ndarray
    block_max: np.ndarray
    special: np.ndarray
    special_start: np.ndarray
    touched: np.ndarray
    settled: np.ndarray
    fill: np.ndarray

    @classmethod
    def start(cls, unary: np.ndarray, start_gain: int, n_queries: int, sizes: np.ndarray) -> "SearchState":
        """A search at its root: ``unary`` in depth-order cells, ``start_gain`` fixed outside the search."""
        depth, width = len(sizes), int(sizes.max())
        z = lambda *shape: np.zeros(shape, dtype=np.int64)  # noqa: E731
        state = cls(z(4), np.asarray(unary, dtype=np.int64), z(len(unary)), z(depth, max(n_queries, 1)), z(depth),
                    z(depth), z(depth + 1), z(depth, width), z(depth, width), z(depth, width), z(depth), z(depth),
                    z(depth), z(depth), z(max(n_queries, 1)), z(width + 1), np.zeros(depth, dtype=np.bool_),
                    z(width), z(width))
        state.live[0, :n_queries] = np.arange(n_queries)
        state.n_live[0] = n_queries
        state.gain[0] = start_gain
        return state

    def arrays(self) -> tuple:
        return (self.scalars, self.unary, self.table, self.live, self.n_live, self.assigned, self.gain, self.own,
                self.bound, self.children, self.n_children, self.next_child, self.best, self.block_max, self.special,
                self.special_start, self.touched, self.settled, self.fill)


@njit(cache=True, nogil=True)
def _offer(scalars, best, assigned, fixed, value, table, block):
    """Take a complete record if strictly better: ``assigned[:fixed]``, deeper depths by block argmax."""
    if scalars[HAS_BEST] == 1 and value <= scalars[BEST]:
        return
    scalars[HAS_BEST] = 1
    scalars[BEST] = value
    best[:fixed] = assigned[:fixed]
    for q in range(fixed, len(block) - 1):
        arg = block[q]
        for c in range(block[q] + 1, block[q + 1]):
            if table[c] > table[arg]:
                arg = c
        best[q] = arg - block[q]


@njit(cache=True, nogil=True)
def _block_max(table, lo, hi):
    m = table[lo]
    for c in range(lo + 1, hi):
        if table[c] > m:
            m = table[c]
    return m


@njit(cache=True, nogil=True)
def _coef(t, p, weights, second):
    """Charge of undecided query ``t`` below depth ``p``: exact if its last literal is its only free one."""
    return weights[t] if second[t] <= p else max(weights[t], 0)


@njit(cache=True, nogil=True)
def _open_frame(p, sizes, block, weights, val_at, last, second, cell, state):
    """Fill frame ``p``: ``own``, the children's bounds and visiting order; offer the exact children.

    ``live[p, :n_live[p]]`` are the queries still undecided at this node and
    consistent with the fixed attributes (in increasing index): a node reads
    only those, however many queries the instance has.
    """
    (scalars, unary, table, live, n_live, assigned, gain, own, bound, children, n_children,
     next_child, best, block_max, special, special_start, touched, settled, fill) = state
    depth, size, n = len(sizes), sizes[p], n_live[p]
    next_child[p] = 0
    n_children[p] = 0
    for v in range(size):
        own[p, v] = unary[block[p] + v]
        settled[v] = 0
    for i in range(n):
        t = live[p, i]
        if last[t] == p:
            own[p, val_at[t, p]] += weights[t]
            settled[val_at[t, p]] += 1
    if p == depth - 1:
        arg = 0
        for v in range(1, size):
            if own[p, v] > own[p, arg]:
                arg = v
        assigned[p] = arg
        _offer(scalars, best, assigned, depth, gain[p] + own[p, arg], table, block)
        return
    # Unary table of the deeper cells, with the undecided queries that have no literal at p charged.
    for c in range(block[p + 1], block[depth]):
        table[c] = unary[c]
    common = 0
    special_start[: size + 1] = 0
    for i in range(n):
        t = live[p, i]
        if last[t] > p:
            if val_at[t, p] < 0:
                table[cell[t]] += _coef(t, p, weights, second)
                common += 1
            else:
                special_start[val_at[t, p] + 1] += 1
    for v in range(size):
        special_start[v + 1] += special_start[v]
        fill[v] = special_start[v]
    for i in range(n):
        t = live[p, i]
        if last[t] > p and val_at[t, p] >= 0:
            special[fill[val_at[t, p]]] = t
            fill[val_at[t, p]] += 1
    tail = 0
    for q in range(p + 1, depth):
        block_max[q] = _block_max(table, block[q], block[q + 1])
        tail += block_max[q]
    best_exact = -1
    idle = -1
    for v in range(size):
        lo, hi = special_start[v], special_start[v + 1]
        extra = 0
        if hi > lo:
            # Child v also charges its own queries; only the blocks they touch change.
            for i in range(lo, hi):
                table[cell[special[i]]] += _coef(special[i], p, weights, second)
            for i in range(lo, hi):
                q = last[special[i]]
                if not touched[q]:
                    touched[q] = True
                    extra += _block_max(table, block[q], block[q + 1]) - block_max[q]
            for i in range(lo, hi):
                table[cell[special[i]]] -= _coef(special[i], p, weights, second)
                touched[last[special[i]]] = False
        bound[p, v] = gain[p] + own[p, v] + tail + extra
        if common + hi - lo == 0:
            if best_exact < 0 or bound[p, v] > bound[p, best_exact]:
                best_exact = v
        elif hi == lo and settled[v] == 0:
            # An idle value (no live query has a literal on it) kills every live query with a
            # literal at p and decides none: all idle values root the same subtree, offset by
            # their unary reward.  Only the first in visiting order can hold the answer.
            if idle < 0 or bound[p, v] > bound[p, idle]:
                idle = v
        else:
            children[p, n_children[p]] = v
            n_children[p] += 1
    if idle >= 0:
        children[p, n_children[p]] = idle
        n_children[p] += 1
    if best_exact >= 0:
        assigned[p] = best_exact
        _offer(scalars, best, assigned, p + 1, bound[p, best_exact], table, block)
    # Decreasing bound, ties by smaller value (insertion sort; domains are small).
    for i in range(1, n_children[p]):
        v = children[p, i]
        j = i - 1
        while j >= 0 and (bound[p, children[p, j]] < bound[p, v]
                          or (bound[p, children[p, j]] == bound[p, v] and children[p, j] > v)):
            children[p, j + 1] = children[p, j]
            j -= 1
        children[p, j + 1] = v


@njit(cache=True, nogil=True)
def open_root(sizes, block, weights, val_at, last, second, cell, state):
    """Open frame 0 of a fresh search (before the first :func:`advance`)."""
    _open_frame(0, sizes, block, weights, val_at, last, second, cell, state)


@njit(cache=True, nogil=True)
def advance(max_nodes, sizes, block, weights, val_at, last, second, cell, state):
    """Run the search for at most ``max_nodes`` more nodes (the first dive always reaches a leaf).

    Returns True when the search is exhausted (the incumbent is then the
    proven optimum) and False when it paused with work left; calling again
    resumes exactly where it stopped.
    """
    (scalars, unary, table, live, n_live, assigned, gain, own, bound, children, n_children,
     next_child, best, block_max, special, special_start, touched, settled, fill) = state
    run = 0
    while scalars[DEPTH] >= 0:
        p = scalars[DEPTH]
        if next_child[p] == n_children[p]:
            scalars[DEPTH] = p - 1
            continue
        v = children[p, next_child[p]]
        if scalars[HAS_BEST] == 1 and bound[p, v] <= scalars[BEST]:
            next_child[p] = n_children[p]  # the rest are no better
            continue
        if run >= max_nodes and scalars[HAS_BEST] == 1:
            return False
        next_child[p] += 1
        assigned[p] = v
        k = 0
        for i in range(n_live[p]):  # the child's live queries: undecided, and not contradicted by v
            t = live[p, i]
            if last[t] > p and (val_at[t, p] < 0 or val_at[t, p] == v):
                live[p + 1, k] = t
                k += 1
        n_live[p + 1] = k
        gain[p + 1] = gain[p] + own[p, v]
        scalars[NODES] += 1
        run += 1
        scalars[DEPTH] = p + 1
        _open_frame(p + 1, sizes, block, weights, val_at, last, second, cell, state)
    return True


def open_bound(state: SearchState) -> int:
    """The best bound still open in a paused search (at least the incumbent)."""
    s = state.scalars
    out = int(s[BEST])
    for p in range(int(s[DEPTH]) + 1):
        if state.next_child[p] < state.n_children[p]:
            out = max(out, int(state.bound[p, state.children[p, state.next_child[p]]]))
    return out
