"""Exact minimum of ``sum_r w_r q(x_r)`` over a conjunction-like class, by branch and bound on row classes.

This is the search of the certified worst-case evaluator (``synthdp.evaluation.worst_case``):
its weights are differences of two tables' counts, so positive and negative
rows are mixed everywhere and the covered-negative-weight bound of
:mod:`synthdp.oracles.exact.query` stays weak (on ACS's 23 binary attributes
it needs 10^5 nodes per sense).  The bound here nets the weights of rows
that no deeper query can tell apart, which is exact for the deep nodes and
leaves about 10^3 nodes.  The objective has no separator term (the
evaluator's objective is the data term alone).

The class is seen through the item model of :mod:`synthdp.oracles.exact.query`
(items ``[x_a == v]`` sorted by group, at most one item per group).  The
search walks the set-enumeration tree: a node is a query ``P`` whose last
item lies in group ``g``; its children add one item of a group after ``g``.

**The bound.**  Let ``R`` be the rows ``P`` covers and ``c = P + i`` a child
(item ``i`` in group ``g``).  Every query in the subtree of ``c`` is
``P + i + J`` with ``J`` a set of items of groups after ``g``.  Whether it
covers a row ``r`` of ``R`` depends only on which item of each group
``h >= g`` the row satisfies (its *key* at ``g``): ``r`` must satisfy ``i``
and every item of ``J``.  Rows with equal keys are therefore covered
together by every query of the subtree, and its data term is
``sum_K [K covered] W_K >= sum_K min(W_K, 0)`` over the key classes ``K`` of
``R`` that satisfy ``i``, with ``W_K`` their summed weight.  Subtrees whose
bound is not below the incumbent are pruned; a search that ends has
examined every query explicitly or by a valid bound, so its incumbent is
the proven optimum.

All sums are float64 of integers whose absolute sum stays below 2**53
(checked by :func:`minimize`), hence exact.
"""

from __future__ import annotations

import logging
import math

import numpy as np

from synthdp.oracles.exact.common import Budget, SearchOutcome, exact_in_float
from synthdp.oracles.exact.query import ItemModel, item_model
from synthdp.queries.base import QueryClass

log = logging.getLogger(__name__)

#: A node sums its key classes with a dense bincount when ``rows x groups * _DENSE_RATIO`` exceeds the id range.
_DENSE_RATIO = 8


class _Keys:
    """Key classes of the rows at every group, as global ids.

    ``item_at[r, g]`` is the item of group ``g`` that row ``r`` satisfies
    (``n_items`` when none); ``gid[r, g]`` numbers the row's key at ``g``
    (its items at groups ``g, g+1, ...``), distinct across groups, and
    ``item_of[k]`` is the item at ``g`` of key ``k``.  ``first[g]`` is the
    smallest id of group ``g`` (``first[n_groups]`` the total).
    """

    def __init__(self, model: ItemModel, codes: np.ndarray):
        n_rows, n_groups, n_items = codes.shape[0], model.n_groups, model.n_items
        self.item_at = np.full((n_rows, n_groups), n_items, dtype=np.int64)
        for i in range(n_items):
            self.item_at[codes[:, model.attr[i]] == model.value[i], model.group[i]] = i
        self.gid = np.empty((n_rows, n_groups), dtype=np.int64)
        first = np.zeros(n_groups + 1, dtype=np.int64)
        suffix = np.zeros(n_rows, dtype=np.int64)
        item_of = [np.zeros(0, dtype=np.int64)] * n_groups
        for g in range(n_groups - 1, -1, -1):
            uniq, suffix = np.unique(suffix * (n_items + 1) + self.item_at[:, g], return_inverse=True)
            suffix = suffix.reshape(-1)
            self.gid[:, g] = suffix
            item_of[g] = uniq % (n_items + 1)
            first[g] = len(uniq)
        first = np.concatenate([[0], np.cumsum(first[:-1])])
        self.gid += first[None, :-1]
        self.first = first
        self.item_of = np.concatenate(item_of) if n_groups else np.zeros(0, dtype=np.int64)


class _Search:
    """Depth-first branch and bound with the row-class bound (module docstring)."""

    def __init__(self, model: ItemModel, codes: np.ndarray, weights: np.ndarray, budget: Budget):
        self.model, self.budget = model, budget
        self.codes, self.weights = codes, weights
        self.keys = _Keys(model, codes)
        self.best_value, self.best_items = math.inf, None

    def _offer(self, value: float, items: tuple[int, ...]) -> None:
        if value < self.best_value:
            self.best_value, self.best_items = value, items

    def _fill(self, path: tuple[int, ...], group: int, need: int) -> tuple[int, ...] | None:
        """``path`` plus one item of each of the ``need`` groups after ``group`` (None if too few remain)."""
        model = self.model
        if group + need >= model.n_groups:
            return None
        starts = np.searchsorted(model.group, np.arange(group + 1, group + 1 + need))
        return path + tuple(int(i) for i in starts)

    def _expand(self, rows: np.ndarray, group: int, width: int, path: tuple[int, ...], stack: list) -> None:
        """Offer the best child of the node and push the children whose bound beats the incumbent."""
        model, keys = self.model, self.keys
        n_items = model.n_items
        later = model.n_groups - group - 1
        if later <= 0 or width >= model.max_width:
            return
        ids = keys.gid[rows, group + 1 :].reshape(-1)
        w = np.repeat(self.weights[rows], later)
        low = int(keys.first[group + 1])
        span = int(keys.first[-1]) - low
        if ids.size * _DENSE_RATIO > span:
            sums = np.bincount(ids - low, weights=w, minlength=span)
            owner = keys.item_of[low:]
        else:
            uniq, inverse = np.unique(ids, return_inverse=True)
            sums = np.bincount(inverse.reshape(-1), weights=w, minlength=uniq.size)
            owner = keys.item_of[uniq]
        value = np.bincount(owner, weights=sums, minlength=n_items + 1)[:n_items]
        bound = np.bincount(owner, weights=np.minimum(sums, 0.0), minlength=n_items + 1)[:n_items]
        covered = np.zeros(n_items + 1, dtype=bool)
        covered[owner] = True
        start = int(np.searchsorted(model.group, group + 1))
        items = np.arange(start, n_items)
        value, bound, covered = value[start:], bound[start:], covered[start:n_items]
        if model.min_width <= width + 1:
            own = np.where(covered, value, 0.0)
            k = int(np.argmin(own))
            self._offer(float(own[k]), path + (int(items[k]),))
        elif self.best_value > 0:
            self._offer_empty(items[~covered], width, path)
        grows = (model.group[items] < model.n_groups - 1) & (width + 1 < model.max_width)
        keep = np.flatnonzero(covered & grows & (bound < self.best_value))
        for j in keep[np.argsort(-bound[keep], kind="stable")]:
            item = int(items[j])
            child_rows = rows[keys.item_at[rows, model.group[item]] == item]
            stack.append((float(bound[j]), child_rows, int(model.group[item]), width + 1, path + (item,)))

    def _offer_empty(self, items: np.ndarray, width: int, path: tuple[int, ...]) -> None:
        """Uncovered children below the minimum width: value 0 for the whole subtree, if it holds a query."""
        need = self.model.min_width - width - 1
        for item in items:
            query = self._fill(path + (int(item),), int(self.model.group[item]), need)
            if query is not None:
                self._offer(0.0, query)
                return

    def run(self) -> SearchOutcome:
        model = self.model
        if model.min_width == 0:
            self._offer(float(self.weights.sum()), ())
        stack: list = [(-math.inf, np.arange(self.codes.shape[0]), -1, 0, ())]
        while stack:
            bound, rows, group, width, path = stack.pop()
            if bound >= self.best_value:
                continue
            if not self.budget.spend():
                open_bound = min([bound] + [entry[0] for entry in stack] + [self.best_value])
                return SearchOutcome(self._query(), self.best_value, False, open_bound, self.budget.nodes,
                                     "row-class branch-and-bound")
            self._expand(rows, group, width, path, stack)
        return SearchOutcome(self._query(), self.best_value, True, self.best_value, self.budget.nodes,
                             "row-class branch-and-bound")

    def _query(self):
        return None if self.best_items is None else self.model.build(tuple(sorted(self.best_items)))


def supported(query_class: QueryClass) -> bool:
    """Whether the search handles the class: conjunctions of any width bounds and monotone conjunctions.

    A workload is not: it holds the cells of listed attribute sets only,
    while this search ranges over every set within the width bounds.
    """
    return query_class.conjoins is not None and not query_class.listed_cells


def minimize(query_class: QueryClass, codes: np.ndarray, weights: np.ndarray, budget: Budget) -> SearchOutcome:
    """Exact ``min_q sum_r weights[r] q(codes[r])`` over a conjunction or monotone-conjunction class.

    ``budget`` counts one node per expanded query; when it is spent the
    search stops with its incumbent and the smallest open bound (not
    proven).  Rows of weight zero are dropped first.  Weights whose
    absolute sum reaches 2**53 are refused (not proven, no bound).
    """
    model = item_model(query_class)
    if not supported(query_class) or model is None:
        raise TypeError(f"the row-class search does not support {query_class.name}")
    weights = np.asarray(weights, dtype=np.int64)
    if not exact_in_float(weights):
        return SearchOutcome(None, math.inf, False, None, 0, "refused: |weights| sum >= 2**53")
    keep = weights != 0
    codes = np.ascontiguousarray(np.asarray(codes, dtype=np.int64)[keep])
    outcome = _Search(model, codes, weights[keep].astype(np.float64), budget).run()
    log.debug("row-class search on %s: %d nodes, value %s, proven %s", query_class.name, outcome.nodes,
              outcome.value, outcome.proven)
    return outcome
