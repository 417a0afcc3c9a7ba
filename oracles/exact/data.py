"""Data player of the ``exact`` backend: ``max_x sum_t w_t q_t(x) + sum_j rho_j [x_{a_j} == v_j]``.

The queries (conjunctions, or monotone conjunctions read as conjunctions
of literals ``x_a == v``) carry weights of either sign; the separator
weights ``rho`` are a unary reward ``u_a[v]`` per attribute value.
Depth-first branch and bound assigns the attributes that carry literals
one at a time, in a fixed order; attributes without literals take their
best unary value.

**Bound.**  At a node the attributes of depths ``< p`` are fixed.  A query
is *dead* if a fixed attribute contradicts it, *decided* (its weight is
already in the node's gain) if all its attributes are fixed, *undecided*
otherwise.  Charge every undecided live query to its last attribute ``b``
(in the branching order), which is still free, with coefficient ``w_t``
if ``b`` is its only free attribute and ``max(w_t, 0)`` otherwise.  For
any completion ``x``, a satisfied undecided query has ``x_b = lit_t(b)``,
so its contribution is at most its coefficient on the cell ``(b,
lit_t(b))``, and exactly ``w_t [x_b = lit_t(b)]`` when ``b`` is its only
free attribute.  Hence

    ``value(x) <= gain + sum_{free b} max_v (u_b[v] + sum_{t charged to (b, v)} coef_t)``,

a valid upper bound that is attained when the free attributes interact
through no query.  Children of a node are bounded all at once: queries
without a literal on the branching attribute contribute to every child's
table, those with one only to the child of their value.

**Order.**  Attributes are branched on by decreasing total ``|w_t|`` of
the queries that mention them (then increasing domain size, then index):
the attributes the objective depends on most are fixed first, so their
queries are decided -- and leave the relaxed part of the bound -- near the
root.  (Branching on small domains first, the earlier order, left most
queries undecided until deep in the tree: on ADULT game instances it
needed about 50 times more nodes.)

**Idle values.**  Call value ``v`` of the branching attribute (depth
``p``) *idle* at a node if no live query has the literal ``(p, v)``.
Fixing an idle value kills every live query with a literal at ``p`` and
decides none, so all idle values leave the same live queries and the same
free attributes: their subtrees hold the same completions, and the value
of each completion differs between two idle values ``v, v'`` exactly by
``u_p[v] - u_p[v']``.  The children are visited by decreasing bound, ties
by smaller value, and an idle child's bound is ``gain + u_p[v] + tail``;
so the first idle child in that order has the largest ``u_p[v]`` and its
subtree's best completion is at least that of any other idle child, with
equality only for a later child of equal ``u_p``.  The search explores
that first idle child only.  An exhaustive search returns the first
record of maximum value in visiting order, and a skipped idle subtree
never holds a record that comes earlier with that value, so the answer is
the same as with every child explored -- only faster.  (On ADULT, where
binned attributes have up to 100 values and the queries mention a few,
late-round instances went from up to millions of nodes to tens of
thousands.)

**Tie-breaking** depends only on the instance: the order above, children
explored by decreasing bound (then increasing value), and an incumbent that
changes only on strict improvement.

The search itself is compiled (:mod:`synthdp.oracles.exact.data_kernel`); this
module prepares the instance and enforces the limits between slices.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from synthdp.oracles.exact import data_kernel as kernel
from synthdp.oracles.exact.common import Budget, SearchOutcome, bin_sums
from synthdp.queries.base import QueryClass

log = logging.getLogger(__name__)


def literals_of(query_class: QueryClass, query) -> tuple[tuple[int, int], ...] | None:
    """The query as sorted literals ``(attribute, value)``; ``None`` if it is never true on a record."""
    if query_class.conjoins is None:
        raise TypeError(f"exact data search cannot read {type(query).__name__} queries")
    lits = query_class.literals(query)
    attrs = [a for a, _ in lits]
    return lits if len(set(attrs)) == len(attrs) else None


def _merge(query_class: QueryClass, queries: Sequence, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """Literal matrix ``(Q, n_attributes)`` (``-1``: none) and weights of the distinct queries.

    Equal queries are merged, never-true and zero-weight ones dropped; the
    always-true (empty) query's weight is returned as a constant.
    """
    merged: dict[tuple[tuple[int, int], ...], int] = {}
    for query, w in zip(queries, np.asarray(weights, dtype=np.int64)):
        lits = literals_of(query_class, query)
        if lits is not None:
            merged[lits] = merged.get(lits, 0) + int(w)
    constant = merged.pop((), 0)
    kept = [(lits, w) for lits, w in merged.items() if w != 0]
    lit = np.full((len(kept), len(query_class.domain)), -1, dtype=np.int64)
    for t, (lits, _) in enumerate(kept):
        for a, v in lits:
            lit[t, a] = v
    return lit, np.array([w for _, w in kept], dtype=np.int64), constant


@dataclass(frozen=True)
class DataProblem:
    """The queries of a data-player instance, preprocessed once for any number of ``rho`` vectors.

    Depth ``p`` branches on attribute ``order[p]``; the flat tables hold
    the values of depth ``p`` at ``block[p] : block[p + 1]``.  Per query
    ``t`` (after merging): ``val_at[t, p]`` its value at depth ``p`` (``-1``:
    none), ``weights[t]`` (int64), ``last[t]`` / ``second[t]`` the depths of
    its last and second-to-last literals (``-1``: none), ``cell[t]`` the flat
    table cell of its last literal.  ``free`` are the attributes of no query
    and ``constant`` the weight of the always-true queries.  One-hot cells:
    attribute ``a`` holds ``offsets[a] : offsets[a + 1]``; ``dual_cell[j]``
    is the cell of dual coordinate ``j`` and ``order_cells`` lists the cells
    in branching order.
    """

    sizes: tuple[int, ...]
    offsets: np.ndarray
    dual_cell: np.ndarray
    order_cells: np.ndarray
    order: np.ndarray
    free: np.ndarray
    val_at: np.ndarray
    weights: np.ndarray
    constant: int
    last: np.ndarray
    second: np.ndarray
    cell: np.ndarray
    block: np.ndarray

    @classmethod
    def build(cls, query_class: QueryClass, queries: Sequence, weights: np.ndarray) -> "DataProblem":
        """Prepare the (merged) queries and fix the branching order (module docstring)."""
        sizes = tuple(query_class.domain.sizes)
        lit, weights, constant = _merge(query_class, queries, weights)
        uses = (lit >= 0).sum(axis=0)
        heft = np.abs(weights) @ (lit >= 0) if len(lit) else np.zeros(len(sizes), dtype=np.int64)
        order = np.array(sorted(np.flatnonzero(uses), key=lambda a: (-heft[a], sizes[a], a)), dtype=np.int64)
        depth = np.full(len(sizes), -1, dtype=np.int64)
        depth[order] = np.arange(len(order))
        depths = np.sort(np.where(lit >= 0, depth[None, :], -1), axis=1)
        last = depths[:, -1]
        second = depths[:, -2] if len(sizes) > 1 else np.full(len(lit), -1, dtype=np.int64)
        block = np.concatenate([[0], np.cumsum([sizes[a] for a in order])]).astype(np.int64)
        cell = block[last] + lit[np.arange(len(lit)), order[last]] if len(lit) else np.zeros(0, dtype=np.int64)
        val_at = np.ascontiguousarray(lit[:, order])
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        dual = np.array(query_class.dual_separator(), dtype=np.int64).reshape(-1, 2)
        order_cells = np.concatenate([np.arange(offsets[a], offsets[a + 1]) for a in order] + [np.zeros(0, np.int64)])
        return cls(sizes, offsets, offsets[dual[:, 0]] + dual[:, 1], order_cells, order, np.flatnonzero(uses == 0),
                   val_at, weights, constant, last, second, cell.astype(np.int64), block)

    def unary(self, rho: np.ndarray) -> np.ndarray:
        """``u_a[v]``, the separator reward of each attribute value (int64), flat in one-hot order."""
        return bin_sums(self.dual_cell, np.asarray(rho, dtype=np.float64), int(self.offsets[-1])).astype(np.int64)


#: Nodes one compiled call expands before the limits are checked again.
_SLICE = 4096


def _search(problem: DataProblem, rho: np.ndarray, budget: Budget) -> SearchOutcome:
    """One branch-and-bound run (:mod:`synthdp.oracles.exact.data_kernel`) for one ``rho``.

    The compiled search runs in slices of ``_SLICE`` nodes; between slices
    the budget is charged, so a work limit stops it with its incumbent and a
    wall-clock limit raises :class:`synthdp.oracles.base.Deadline`.
    """
    p = problem
    unary = p.unary(rho)
    record = np.zeros(len(p.sizes), dtype=np.int64)
    start_gain = p.constant
    for a in p.free:
        block = unary[p.offsets[a] : p.offsets[a + 1]]
        record[a] = int(np.argmax(block))
        start_gain += int(block[record[a]])
    if not len(p.order):
        return SearchOutcome(record, start_gain, True, start_gain, 0, "no literals")
    sizes = np.array([p.sizes[a] for a in p.order], dtype=np.int64)
    state = kernel.SearchState.start(unary[p.order_cells], start_gain, len(p.weights), sizes)
    args = (sizes, p.block, p.weights, p.val_at, p.last, p.second, p.cell)
    kernel.open_root(*args, state.arrays())
    while True:
        before = int(state.scalars[kernel.NODES])
        left = _SLICE if budget.max_nodes is None else max(1, min(_SLICE, budget.max_nodes - budget.nodes))
        done = kernel.advance(left, *args, state.arrays())
        within = budget.spend(int(state.scalars[kernel.NODES]) - before)
        if done or not within:
            break
    record[p.order] = state.best
    best = int(state.scalars[kernel.BEST])
    bound = best if done else kernel.open_bound(state)
    return SearchOutcome(record, best, done, bound, budget.nodes, "branch-and-bound")


def maximize(problem: DataProblem, rho: np.ndarray, budget: Budget) -> SearchOutcome:
    """Exact maximiser of one data-player instance.

    Under a work limit the first dive to a leaf is always completed, so an
    unproven answer still carries a record.
    """
    outcome = _search(problem, rho, budget)
    log.debug("exact data search: %d nodes, value %s, proven %s", outcome.nodes, outcome.value, outcome.proven)
    return outcome
