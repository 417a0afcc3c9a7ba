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

**Tie-breaking** depends only on the instance: attributes are ordered by
(number of queries, index), children are explored by (bound, value) and
the incumbent changes only on strict improvement.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from oracles.exact_common import Budget, SearchOutcome
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


@dataclass(frozen=True)
class DataProblem:
    """The queries of a data-player instance, preprocessed once for any number of ``rho`` vectors.

    Depth ``p`` branches on attribute ``order[p]``; the flat tables hold
    the values of depth ``p`` at ``block[p] : block[p + 1]``.
    """

    sizes: tuple[int, ...]
    dual: tuple[tuple[int, int], ...]
    order: np.ndarray
    free: np.ndarray
    lit: np.ndarray
    weights: np.ndarray
    constant: float
    last: np.ndarray
    second: np.ndarray
    cell: np.ndarray
    block: np.ndarray
    compatible: tuple[np.ndarray, ...]

    @classmethod
    def build(cls, query_class: QueryClass, queries: Sequence, weights: np.ndarray) -> "DataProblem":
        """Merge equal queries, drop never-true ones and fix the branching order."""
        sizes = tuple(query_class.domain.sizes)
        merged: dict[tuple[tuple[int, int], ...], float] = {}
        for query, w in zip(queries, np.asarray(weights, dtype=np.float64)):
            lits = literals_of(query_class, query)
            if lits is not None:
                merged[lits] = merged.get(lits, 0.0) + float(w)
        constant = merged.pop((), 0.0)
        items = [(lits, w) for lits, w in merged.items() if w != 0]
        lit = np.full((len(items), len(sizes)), -1, dtype=np.int64)
        for t, (lits, _) in enumerate(items):
            for a, v in lits:
                lit[t, a] = v
        uses = (lit >= 0).sum(axis=0)
        order = np.array(sorted(np.flatnonzero(uses), key=lambda a: (-uses[a], a)), dtype=np.int64)
        depth = np.full(len(sizes), -1, dtype=np.int64)
        depth[order] = np.arange(len(order))
        depths = np.sort(np.where(lit >= 0, depth[None, :], -1), axis=1)
        last = depths[:, -1] if len(sizes) else np.zeros(0, dtype=np.int64)
        second = depths[:, -2] if len(sizes) > 1 else np.full(len(items), -1, dtype=np.int64)
        block = np.concatenate([[0], np.cumsum([sizes[a] for a in order])]).astype(np.int64)
        rows = np.arange(len(items))
        cell = block[last] + lit[rows, order[last]] if len(items) else np.zeros(0, dtype=np.int64)
        compatible = tuple((lit[None, :, a] < 0) | (lit[None, :, a] == np.arange(sizes[a])[:, None]) for a in order)
        return cls(sizes, tuple(query_class.dual_separator()), order, np.flatnonzero(uses == 0), lit,
                   np.array([w for _, w in items], dtype=np.float64), constant, last, second, cell, block,
                   compatible)

    def unary(self, rho: np.ndarray) -> list[np.ndarray]:
        """``u_a[v]``: the separator reward of each attribute value."""
        u = [np.zeros(s) for s in self.sizes]
        for (a, v), r in zip(self.dual, np.asarray(rho, dtype=np.float64)):
            u[a][v] += r
        return u


class _DataSearch:
    """One branch-and-bound run of a :class:`DataProblem` for one ``rho`` (see the module docstring)."""

    def __init__(self, problem: DataProblem, rho: np.ndarray, budget: Budget):
        self.p, self.budget = problem, budget
        unary = problem.unary(rho)
        self.flat_unary = np.concatenate([unary[a] for a in problem.order]) if len(problem.order) else np.zeros(0)
        self.record = np.zeros(len(problem.sizes), dtype=np.int64)
        free_gain = 0.0
        for a in problem.free:
            self.record[a] = int(np.argmax(unary[a]))
            free_gain += float(unary[a][self.record[a]])
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

    def _expand(self, depth: int, alive: np.ndarray, gain: float, assigned: np.ndarray, stack: list) -> None:
        p = self.p
        a, size = int(p.order[depth]), p.sizes[p.order[depth]]
        own = self.flat_unary[p.block[depth] : p.block[depth + 1]].copy()
        decided = alive[p.last[alive] == depth]
        own += np.bincount(p.lit[decided, a], weights=p.weights[decided], minlength=size)
        if depth + 1 == len(p.order):
            v = int(np.argmax(own))
            assigned[depth] = v
            self._offer(gain + float(own[v]), assigned, depth + 1)
            return
        rest = alive[p.last[alive] > depth]
        coef = np.where(p.second[rest] <= depth, p.weights[rest], np.maximum(p.weights[rest], 0.0))
        offset = int(p.block[depth + 1])
        starts = p.block[depth + 1 : -1] - offset
        on_a = p.lit[rest, a] >= 0
        table = self.flat_unary[offset:] + np.bincount(p.cell[rest[~on_a]] - offset, weights=coef[~on_a],
                                                       minlength=self.flat_unary.size - offset)
        tail = np.full(size, float(np.maximum.reduceat(table, starts).sum()))
        child_of = p.lit[rest[on_a], a]
        touched = np.unique(child_of)
        if touched.size:
            tables = np.repeat(table[None, :], touched.size, axis=0)
            np.add.at(tables, (np.searchsorted(touched, child_of), p.cell[rest[on_a]] - offset), coef[on_a])
            tail[touched] = np.maximum.reduceat(tables, starts, axis=1).sum(axis=1)
        bounds = gain + own + tail
        undecided = np.bincount(child_of, minlength=size) + int((~on_a).sum())
        exact = np.where(undecided == 0, bounds, -math.inf)
        v = int(np.argmax(exact))
        if exact[v] > self.best_value:
            assigned[depth] = v
            self._offer(float(exact[v]), assigned, depth + 1, self._tail_argmax(table, depth + 1))
        for v in np.argsort(bounds, kind="stable"):
            if undecided[v] > 0 and bounds[v] > self.best_value:
                child = assigned.copy()
                child[depth] = v
                stack.append((float(bounds[v]), depth + 1, alive, gain + float(own[v]), child))

    def run(self) -> SearchOutcome:
        p = self.p
        if not len(p.order):
            return SearchOutcome(self.record.copy(), self.start_gain, True, self.start_gain, 0, "no literals")
        stack = [(math.inf, 0, np.arange(len(p.weights)), self.start_gain, np.zeros(len(p.order), dtype=np.int64))]
        while stack:
            bound, depth, alive, gain, assigned = stack.pop()
            if bound <= self.best_value:
                continue
            if depth:
                alive = alive[p.compatible[depth - 1][assigned[depth - 1], alive]]
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
