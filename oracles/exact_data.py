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

**Order.**  Attributes are branched on by increasing domain size (then
decreasing number of queries, then index): the branching stays narrow near
the root, and the large attributes, decided last, carry most of the
charged queries, whose buckets then separate them by value.

**Tie-breaking** depends only on the instance: the order above, children
explored by (bound, value), and an incumbent that changes only on strict
improvement.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from oracles.exact_common import Budget, SearchOutcome, bin_sums
from queries.base import QueryClass
from queries.conjunctions import Conjunction
from queries.monotone import MonotoneConjunction, MonotoneConjunctions

log = logging.getLogger(__name__)


def literals_of(query_class: QueryClass, query) -> tuple[tuple[int, int], ...] | None:
    """The query as sorted literals ``(attribute, value)``; ``None`` if it is never true on a record."""
    if isinstance(query, Conjunction):
        return query.literals
    if isinstance(query, MonotoneConjunction) and isinstance(query_class, MonotoneConjunctions):
        lits = tuple(query_class.columns[j] for j in query.features)
        attrs = [a for a, _ in lits]
        return lits if len(set(attrs)) == len(attrs) else None
    raise TypeError(f"exact data search cannot read {type(query).__name__} queries")


def _merge(query_class: QueryClass, queries: Sequence, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, float]:
    """Literal matrix ``(Q, n_attributes)`` (``-1``: none) and weights of the distinct queries.

    Equal queries are merged, never-true and zero-weight ones dropped; the
    always-true (empty) query's weight is returned as a constant.
    """
    merged: dict[tuple[tuple[int, int], ...], float] = {}
    for query, w in zip(queries, np.asarray(weights, dtype=np.float64)):
        lits = literals_of(query_class, query)
        if lits is not None:
            merged[lits] = merged.get(lits, 0.0) + float(w)
    constant = merged.pop((), 0.0)
    kept = [(lits, w) for lits, w in merged.items() if w != 0]
    lit = np.full((len(kept), len(query_class.domain)), -1, dtype=np.int64)
    for t, (lits, _) in enumerate(kept):
        for a, v in lits:
            lit[t, a] = v
    return lit, np.array([w for _, w in kept], dtype=np.float64), constant


@dataclass(frozen=True)
class DataProblem:
    """The queries of a data-player instance, preprocessed once for any number of ``rho`` vectors.

    Depth ``p`` branches on attribute ``order[p]``; the flat tables hold
    the values of depth ``p`` at ``block[p] : block[p + 1]``.  Per query
    ``t`` (after merging): ``lit_by_attr[a, t]`` its value on attribute
    ``a`` (``-1``: none), ``weights[t]`` and ``positive[t] = max(w_t, 0)``,
    ``last[t]`` / ``second[t]`` the depths of its last and second-to-last
    literals (``-1``: none), ``cell[t]`` the flat table cell of its last
    literal.  ``compatible[p][v, t]``: query ``t`` survives ``x_{order[p]} = v``.
    ``free`` are the attributes of no query and ``constant`` the weight of
    the always-true queries.  One-hot cells: attribute ``a`` holds
    ``offsets[a] : offsets[a + 1]``; ``dual_cell[j]`` is the cell of dual
    coordinate ``j`` and ``order_cells`` lists the cells in branching order.
    """

    sizes: tuple[int, ...]
    offsets: np.ndarray
    dual_cell: np.ndarray
    order_cells: np.ndarray
    order: np.ndarray
    free: np.ndarray
    lit_by_attr: np.ndarray
    weights: np.ndarray
    positive: np.ndarray
    constant: float
    last: np.ndarray
    second: np.ndarray
    cell: np.ndarray
    block: np.ndarray
    compatible: tuple[np.ndarray, ...]

    @classmethod
    def build(cls, query_class: QueryClass, queries: Sequence, weights: np.ndarray) -> "DataProblem":
        """Prepare the (merged) queries and fix the branching order (module docstring)."""
        sizes = tuple(query_class.domain.sizes)
        lit, weights, constant = _merge(query_class, queries, weights)
        uses = (lit >= 0).sum(axis=0)
        order = np.array(sorted(np.flatnonzero(uses), key=lambda a: (sizes[a], -uses[a], a)), dtype=np.int64)
        depth = np.full(len(sizes), -1, dtype=np.int64)
        depth[order] = np.arange(len(order))
        depths = np.sort(np.where(lit >= 0, depth[None, :], -1), axis=1)
        last = depths[:, -1]
        second = depths[:, -2] if len(sizes) > 1 else np.full(len(lit), -1, dtype=np.int64)
        block = np.concatenate([[0], np.cumsum([sizes[a] for a in order])]).astype(np.int64)
        cell = block[last] + lit[np.arange(len(lit)), order[last]] if len(lit) else np.zeros(0, dtype=np.int64)
        compatible = tuple((lit[None, :, a] < 0) | (lit[None, :, a] == np.arange(sizes[a])[:, None]) for a in order)
        offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        dual = np.array(query_class.dual_separator(), dtype=np.int64).reshape(-1, 2)
        order_cells = np.concatenate([np.arange(offsets[a], offsets[a + 1]) for a in order] + [np.zeros(0, np.int64)])
        return cls(sizes, offsets, offsets[dual[:, 0]] + dual[:, 1], order_cells, order, np.flatnonzero(uses == 0),
                   np.ascontiguousarray(lit.T), weights, np.maximum(weights, 0.0), constant, last, second, cell,
                   block, compatible)

    def unary(self, rho: np.ndarray) -> np.ndarray:
        """``u_a[v]``, the separator reward of each attribute value, flat in one-hot order."""
        return bin_sums(self.dual_cell, np.asarray(rho, dtype=np.float64), int(self.offsets[-1]))


class _DataSearch:
    """One branch-and-bound run of a :class:`DataProblem` for one ``rho`` (see the module docstring)."""

    def __init__(self, problem: DataProblem, rho: np.ndarray, budget: Budget):
        self.p, self.budget = problem, budget
        unary = problem.unary(rho)
        self.flat_unary = unary[problem.order_cells]
        self.record = np.zeros(len(problem.sizes), dtype=np.int64)
        free_gain = 0.0
        for a in problem.free:
            block = unary[problem.offsets[a] : problem.offsets[a + 1]]
            self.record[a] = int(np.argmax(block))
            free_gain += float(block[self.record[a]])
        self.start_gain = problem.constant + free_gain
        self.best_value, self.best_record = -math.inf, None

    def _offer(self, value: float, assigned: np.ndarray, depth: int, tail: np.ndarray | None = None) -> None:
        """A complete record: ``assigned`` values for depths ``< depth`` (``tail`` for the rest)."""
        if value > self.best_value:
            record = self.record.copy()
            order = self.p.order
            record[order[:depth]] = assigned[:depth]
            if tail is not None:
                record[order[depth:]] = tail
            self.best_value, self.best_record = value, record

    def _tail_argmax(self, table: np.ndarray, depth: int) -> np.ndarray:
        """First best value of every depth ``>= depth`` in a flat table starting at that depth."""
        starts = self.p.block[depth:-1] - self.p.block[depth]
        return np.array([int(np.argmax(table[s:e])) for s, e in zip(starts, np.append(starts[1:], table.size))],
                        dtype=np.int64)

    def _child_tails(self, table: np.ndarray, starts: np.ndarray, size: int, child_of: np.ndarray,
                     cells: np.ndarray, coef: np.ndarray) -> np.ndarray:
        """``sum of block maxima`` of ``table`` plus, for each value ``v``, the queries of ``child_of == v``."""
        tail = np.full(size, float(np.maximum.reduceat(table, starts).sum()))
        if child_of.size:
            touched = np.flatnonzero(np.bincount(child_of, minlength=size))
            row = np.zeros(size, dtype=np.int64)
            row[touched] = np.arange(touched.size)
            tables = np.tile(table, touched.size)
            tables += bin_sums(row[child_of] * table.size + cells, coef, tables.size)
            tail[touched] = np.maximum.reduceat(tables.reshape(touched.size, -1), starts, axis=1).sum(axis=1)
        return tail

    def _expand(self, depth: int, alive: np.ndarray, gain: float, assigned: np.ndarray, stack: list) -> None:
        """Bound every value of the attribute at ``depth``; offer exact children, push the others."""
        p = self.p
        lit_a, size = p.lit_by_attr[p.order[depth]], p.sizes[p.order[depth]]
        last = p.last[alive]
        decided = alive[last == depth]
        own = self.flat_unary[p.block[depth] : p.block[depth + 1]] + bin_sums(
            lit_a[decided], p.weights[decided], size)
        if depth + 1 == len(p.order):
            v = int(np.argmax(own))
            assigned[depth] = v
            self._offer(gain + float(own[v]), assigned, depth + 1)
            return
        rest = alive[last > depth]
        coef = np.where(p.second[rest] <= depth, p.weights[rest], p.positive[rest])
        offset = int(p.block[depth + 1])
        starts = p.block[depth + 1 : -1] - offset
        on_a = lit_a[rest] >= 0
        off_a = ~on_a
        table = self.flat_unary[offset:] + bin_sums(p.cell[rest[off_a]] - offset, coef[off_a],
                                                    self.flat_unary.size - offset)
        child_of = lit_a[rest[on_a]]
        bounds = gain + own + self._child_tails(table, starts, size, child_of, p.cell[rest[on_a]] - offset,
                                                coef[on_a])
        undecided = np.bincount(child_of, minlength=size) + int(off_a.sum())
        exact = np.where(undecided == 0, bounds, -math.inf)
        v = int(np.argmax(exact))
        if exact[v] > self.best_value:
            assigned[depth] = v
            self._offer(float(exact[v]), assigned, depth + 1, self._tail_argmax(table, depth + 1))
        for v in np.argsort(bounds, kind="stable"):
            if undecided[v] > 0 and bounds[v] > self.best_value:
                stack.append((float(bounds[v]), depth + 1, alive, gain + float(own[v]), assigned, int(v)))

    def run(self) -> SearchOutcome:
        p = self.p
        if not len(p.order):
            return SearchOutcome(self.record.copy(), self.start_gain, True, self.start_gain, 0, "no literals")
        stack = [(math.inf, 0, np.arange(len(p.weights)), self.start_gain, np.zeros(len(p.order), dtype=np.int64), 0)]
        while stack:
            bound, depth, alive, gain, parent, value = stack.pop()
            if bound <= self.best_value:
                continue
            assigned = parent
            if depth:
                assigned = parent.copy()
                assigned[depth - 1] = value
                alive = alive[p.compatible[depth - 1][value, alive]]
            if not self.budget.spend() and self.best_record is not None:
                open_bound = max([bound] + [entry[0] for entry in stack])
                return SearchOutcome(self.best_record, self.best_value, False, max(open_bound, self.best_value),
                                     self.budget.nodes, "branch-and-bound")
            self._expand(depth, alive, gain, assigned, stack)
        return SearchOutcome(self.best_record, self.best_value, True, self.best_value, self.budget.nodes,
                             "branch-and-bound")


def maximize(problem: DataProblem, rho: np.ndarray, budget: Budget) -> SearchOutcome:
    """Exact maximiser of one data-player instance.

    Under a work limit the first dive to a leaf is always completed, so an
    unproven answer still carries a record.
    """
    outcome = _DataSearch(problem, rho, budget).run()
    log.debug("exact data search: %d nodes, value %s, proven %s", outcome.nodes, outcome.value, outcome.proven)
    return outcome
