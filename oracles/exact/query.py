"""Query player of the ``exact`` backend: ``min_q sum_r w_r q(x_r) + sum_i eta_i sig_i(q)``.

Conjunction-like classes are handled as **sets of items**, each item a
literal ``[x_a == v]``: a one-hot conjunction takes at most one item per
attribute, a monotone conjunction any set of binary features (a feature is
the literal ``x_a == 1`` of a two-valued attribute or ``x_a == v`` of a
one-hot block).  For both, every separator coordinate depends on one item
group only (the literal on attribute ``a``, resp. feature ``j``), so the
separator term is **additive**:

    ``sum_i eta_i sig_i(q) = base + sum_{items i in q} delta_i``

with ``base`` the term of the empty query and ``delta_i`` the change made
by item ``i`` alone (both read off ``query_class.signature`` on probes).

Two exhaustive searches use this:

* :func:`table_search` (width-bounded conjunctions, workloads): for every
  attribute set, one weighted bincount of the mixed-radix cell index gives
  the exact data term of all its cells, the separator grid is added by
  broadcasting, and the minimum over all cells of all sets is taken.
* :func:`item_search` (wide conjunctions, monotone conjunctions): depth-first
  branch and bound over the set-enumeration tree of items, pruned with an
  optimistic bound (see :class:`_ItemSearch`).

Both prove optimality by exhausting the search: the bound they report is
the optimum found.  All arithmetic is float64 on integers whose partial
sums stay below 2**53 (checked by the caller), hence exact.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import math
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from synthdp.core.keys import check_index_range
from synthdp.oracles.exact.common import Budget, SearchOutcome, bin_sums
from synthdp.queries.base import QueryClass
from synthdp.queries.conjunctions import Conjunction
from synthdp.queries.monotone import MonotoneConjunction

log = logging.getLogger(__name__)

#: Tables with more cells than this are read sparsely (occupied cells + best empty cell).
DENSE_CELLS = 1 << 22
#: Table enumeration is used when ``sets * rows + cells`` stays below this; branch and bound otherwise.
TABLE_WORK = 2e8
#: ... and when there are at most this many attribute sets.
TABLE_SETS = 50_000
#: Largest ``children x groups`` matrix of the coverage bound of the branch and bound.
COVERAGE_BOUND_CELLS = 1 << 16


@dataclass(frozen=True)
class ItemModel:
    """A conjunction-like class as sets of items ``[x_attr == value]``.

    Items are sorted by attribute.  ``group[i]`` (non-decreasing) is the
    item's group: a query holds at most one item per group, and a set of
    items is a query iff that holds and ``min_width <= |set| <= max_width``.
    ``build`` turns a sorted item tuple into the class's query object.
    """

    attr: np.ndarray
    value: np.ndarray
    group: np.ndarray
    min_width: int
    max_width: int
    build: Callable[[tuple[int, ...]], object]

    @property
    def n_items(self) -> int:
        return len(self.attr)

    @property
    def n_groups(self) -> int:
        return int(self.group[-1]) + 1 if self.n_items else 0


def supported(query_class: QueryClass) -> bool:
    """Whether :func:`item_model` describes the class."""
    return query_class.conjoins is not None


def item_model(query_class: QueryClass) -> ItemModel | None:
    """The item model of a supported base class, or ``None``."""
    sizes = query_class.domain.sizes
    if query_class.conjoins == "one-hot":
        pairs = [(a, v) for a, s in enumerate(sizes) for v in range(s)]
        attr = np.array([a for a, _ in pairs], dtype=np.int64)

        def build(items: tuple[int, ...]) -> Conjunction:
            return Conjunction(tuple(pairs[i] for i in items))

        return ItemModel(attr, np.array([v for _, v in pairs], dtype=np.int64), attr,
                         query_class.min_width, query_class.max_width, build)
    if query_class.conjoins == "binary":
        cols = query_class.columns
        attr = np.array([a for a, _ in cols], dtype=np.int64)

        def build(items: tuple[int, ...]) -> MonotoneConjunction:
            return MonotoneConjunction(tuple(int(i) for i in items))

        return ItemModel(attr, np.array([v for _, v in cols], dtype=np.int64), np.arange(len(cols)),
                         0, query_class.max_width, build)
    return None


def separator_terms(query_class: QueryClass, model: ItemModel, eta: np.ndarray) -> tuple[float, np.ndarray]:
    """``base`` and ``delta`` of the additive separator term (module docstring).

    Exact for the supported classes: each coordinate of the conjunction
    separator reads only the literal on its attribute (``1`` without one,
    ``bit_b(v)`` with ``a = v``), and each coordinate of the monotone
    separator only whether its feature is in the set.  Probes outside the
    width bounds are fine: the signatures are closed forms.
    """
    probes = [model.build(())] + [model.build((i,)) for i in range(model.n_items)]
    sig = query_class.signature(probes).astype(np.float64) @ np.asarray(eta, dtype=np.float64)
    return float(sig[0]), sig[1:] - sig[0]


def attribute_sets(query_class: QueryClass) -> list[tuple[int, ...]] | None:
    """Attribute sets of a class that tables can enumerate (sorted); ``None`` if there are too many."""
    if query_class.listed_cells:
        return sorted(query_class.marginal_attrs)
    if query_class.conjoins != "one-hot":
        return None
    n_attrs = len(query_class.domain)
    widths = range(query_class.min_width, query_class.max_width + 1)
    if sum(math.comb(n_attrs, k) for k in widths) > TABLE_SETS:
        return None
    return sorted(itertools.chain.from_iterable(itertools.combinations(range(n_attrs), k) for k in widths))


def use_tables(query_class: QueryClass, sets: list[tuple[int, ...]] | None, n_rows: int) -> bool:
    """Whether table enumeration beats branch and bound (always for workloads)."""
    if sets is None:
        return False
    return query_class.listed_cells or len(sets) * n_rows + query_class.size() <= TABLE_WORK


# ----------------------------------------------------------------------------------------------
# Table enumeration
# ----------------------------------------------------------------------------------------------
class _PrefixChain:
    """Cell index of each row and separator grid of the current chain of attribute prefixes.

    For a prefix ``(a_1..a_k)``, ``index`` is the row-major cell of each row
    and ``grid`` (flat, row-major) the sum of ``delta[a_j][v_j]`` over the
    prefix's literals.  Consecutive sets that share a prefix reuse it.
    """

    def __init__(self, columns: np.ndarray, sizes: Sequence[int], deltas: list[np.ndarray]):
        """``columns[a]``: the codes of attribute ``a`` (contiguous)."""
        self.columns, self.sizes, self.deltas = columns, sizes, deltas
        self.chain: list[tuple[tuple[int, ...], np.ndarray, np.ndarray]] = [
            ((), np.zeros(columns.shape[1], dtype=np.int64), np.zeros(1))]

    def get(self, prefix: tuple[int, ...]) -> tuple[np.ndarray, np.ndarray]:
        """``(index, grid)`` of ``prefix``."""
        k = 0
        while k < len(prefix) and k + 1 < len(self.chain) and self.chain[k + 1][0] == prefix[: k + 1]:
            k += 1
        del self.chain[k + 1 :]
        for a in prefix[k:]:
            attrs, index, grid = self.chain[-1]
            self.chain.append((attrs + (a,), index * self.sizes[a] + self.columns[a],
                               (grid[:, None] + self.deltas[a][None, :]).reshape(-1)))
        return self.chain[-1][1], self.chain[-1][2]


def _dense_minimum(index: np.ndarray, weights: np.ndarray, grid: np.ndarray, last: np.ndarray) -> tuple[float, int]:
    """Minimum and first minimising flat cell of ``table + grid (x) last`` for one attribute set."""
    table = bin_sums(index, weights, grid.size * last.size)
    table = table.reshape(grid.size, last.size)
    table += grid[:, None]
    table += last[None, :]
    cell = int(np.argmin(table))
    return float(table.flat[cell]), cell


def _best_empty_cell(deltas: list[np.ndarray], radix: list[int], occupied: np.ndarray,
                     cutoff: float) -> tuple[float, int] | None:
    """Cheapest separator sum over cells *not* in ``occupied`` (sorted), if below ``cutoff``.

    Enumerates cells in increasing separator sum (the standard k-best
    enumeration of sums of sorted lists with a heap) and stops at the first
    unoccupied cell: at most ``len(occupied) + 1`` steps.  Empty cells have
    data term zero, so their value is the separator sum alone.
    """
    order = [np.argsort(d, kind="stable") for d in deltas]
    sorted_d = [d[o] for d, o in zip(deltas, order)]

    def entry(pos: tuple[int, ...]) -> tuple[float, tuple[int, ...]]:
        return float(sum(s[p] for s, p in zip(sorted_d, pos))), pos

    heap, seen = [entry((0,) * len(deltas))], {(0,) * len(deltas)}
    while heap:
        value, pos = heapq.heappop(heap)
        if value >= cutoff:
            return None
        cell = 0
        for o, p, r in zip(order, pos, radix):
            cell = cell * r + int(o[p])
        k = int(np.searchsorted(occupied, cell))
        if k == len(occupied) or occupied[k] != cell:
            return value, cell
        for j in range(len(pos)):
            nxt = pos[:j] + (pos[j] + 1,) + pos[j + 1 :]
            if pos[j] + 1 < len(deltas[j]) and nxt not in seen:
                seen.add(nxt)
                heapq.heappush(heap, entry(nxt))
    return None


def _sparse_minimum(index: np.ndarray, weights: np.ndarray, attrs: tuple[int, ...], sizes: Sequence[int],
                    deltas: list[np.ndarray]) -> tuple[float, int]:
    """As :func:`_dense_minimum` for a table too large to allocate.

    Occupied cells get their exact sums from ``np.unique``; the minimum
    over the empty cells is the cheapest unoccupied separator sum.
    """
    radix = [sizes[a] for a in attrs]
    occupied, inverse = np.unique(index, return_inverse=True)
    values = bin_sums(inverse.reshape(-1), weights, occupied.size)
    digits = np.unravel_index(occupied, radix)
    for a, d in zip(attrs, digits):
        values += deltas[a][d]
    best_value, best_cell = math.inf, -1
    if occupied.size:
        k = int(np.argmin(values))
        best_value, best_cell = float(values[k]), int(occupied[k])
    empty = _best_empty_cell([deltas[a] for a in attrs], radix, occupied, best_value)
    return empty if empty is not None else (best_value, best_cell)


def _pair_bounds(sets: list[tuple[int, ...]], columns: np.ndarray, weights: np.ndarray, deltas: list[np.ndarray],
                 sizes: Sequence[int]) -> np.ndarray:
    """Lower bound on the minimum over each set's cells, from its attribute pairs (``-inf`` below width 2).

    For a cell ``v`` of ``S`` and a pair ``{a, b}`` in ``S``, the rows of
    ``v`` are among those of the pair cell ``(v_a, v_b)``, so the data term
    is at least that pair cell's negative weight ``neg_ab``; the separator
    term is ``delta_a[v_a] + delta_b[v_b] + sum_{c in S - {a, b}} delta_c[v_c]``.
    Hence ``min_S >= L_ab + sum_c min delta_c`` with ``L_ab = min (neg_ab +
    delta_a (+) delta_b)``, for every pair; the bound is the best pair.
    """
    low = [float(d.min()) for d in deltas]
    negative = np.minimum(weights, 0.0)
    slack: dict[tuple[int, int], float] = {}
    for a, b in sorted({pair for s in sets for pair in itertools.combinations(s, 2)}):
        table = bin_sums(columns[a] * sizes[b] + columns[b], negative, sizes[a] * sizes[b])
        table = table.reshape(sizes[a], sizes[b]) + deltas[a][:, None]
        table += deltas[b][None, :]
        slack[a, b] = float(table.min()) - low[a] - low[b]
    return np.array([max(slack[p] for p in itertools.combinations(s, 2)) + sum(low[a] for a in s)
                     if len(s) >= 2 else -math.inf for s in sets])


def _set_minimum(attrs: tuple[int, ...], chain: _PrefixChain, weights: np.ndarray,
                 sizes: Sequence[int], deltas: list[np.ndarray]) -> tuple[float, int]:
    """Minimum of ``data + separator`` over the cells of one attribute set (without ``base``), and its cell."""
    if not attrs:
        return float(weights.sum()), 0
    cells = math.prod(sizes[a] for a in attrs)
    check_index_range(cells, f"the attribute set {attrs}")
    index, grid = chain.get(attrs[:-1])
    index = index * sizes[attrs[-1]] + chain.columns[attrs[-1]]
    if cells <= DENSE_CELLS:
        return _dense_minimum(index, weights, grid, deltas[attrs[-1]])
    return _sparse_minimum(index, weights, attrs, sizes, deltas)


def table_search(model: ItemModel, sets: list[tuple[int, ...]], codes: np.ndarray, weights: np.ndarray,
                 base: float, delta: np.ndarray, sizes: Sequence[int], budget: Budget) -> SearchOutcome:
    """Exact minimum over every cell of every attribute set in ``sets``.

    The value of cell ``v`` of set ``S`` is ``sum_r w_r [x_r,S = v] + base +
    sum_{a in S} delta[a][v_a]``: the first term is one bincount, the rest
    a broadcast sum.  Sets are visited in increasing order of their
    :func:`_pair_bounds`; once that bound reaches the incumbent, no later
    set can improve on it, which proves the incumbent optimal.  Ties go to
    the first set visited, then to the first cell in row-major order.  One
    budget node per table built.  (In the conjunction item model the item
    of literal ``(a, v)`` is ``offsets[a] + v``.)
    """
    offsets = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    deltas = [delta[offsets[a] : offsets[a + 1]] for a in range(len(sizes))]
    chain = _PrefixChain(np.ascontiguousarray(codes.T), sizes, deltas)
    bounds = base + _pair_bounds(sets, chain.columns, weights, deltas, sizes)
    best_value, best = math.inf, None
    for k in np.argsort(bounds, kind="stable"):
        if bounds[k] >= best_value:
            break
        if not budget.spend():
            return SearchOutcome(best, best_value, False, min(best_value, float(bounds[k])), budget.nodes, "tables")
        attrs = sets[k]
        value, cell = _set_minimum(attrs, chain, weights, sizes, deltas)
        if value + base < best_value:
            values = np.unravel_index(cell, [sizes[a] for a in attrs]) if attrs else ()
            best_value, best = value + base, model.build(tuple(int(offsets[a] + v) for a, v in zip(attrs, values)))
    return SearchOutcome(best, best_value, True, best_value, budget.nodes, "tables")


# ----------------------------------------------------------------------------------------------
# Branch and bound over items
# ----------------------------------------------------------------------------------------------
class _SuffixSeparator:
    """Best separator gain obtainable from the groups ``g >= start`` with a given number of items.

    With ``m_g = min_{i in g} delta_i`` (the best item of group ``g``), the
    cheapest way to add between ``need`` and ``room`` items from the groups
    ``>= start`` (at most one per group) is to take the ``t`` smallest
    ``m_g``, where ``t`` is the number of negative ones clipped to
    ``[need, room]``: the sorted prefix sums decrease while the terms are
    negative and increase after.  This is exact, not just a bound.
    """

    def __init__(self, model: ItemModel, delta: np.ndarray):
        n_groups = model.n_groups
        starts = np.searchsorted(model.group, np.arange(n_groups + 1))
        self.best_item = np.array([starts[g] + int(np.argmin(delta[starts[g] : starts[g + 1]]))
                                   for g in range(n_groups)], dtype=np.int64)
        gain = delta[self.best_item] if n_groups else np.zeros(0)
        self.n_groups = n_groups
        self.order: list[np.ndarray] = []
        self.cum = np.full((n_groups + 1, n_groups + 1), math.inf)
        self.n_negative = np.zeros(n_groups + 1, dtype=np.int64)
        for start in range(n_groups + 1):
            order = start + np.argsort(gain[start:], kind="stable")
            self.order.append(order)
            self.cum[start, : n_groups - start + 1] = np.concatenate([[0.0], np.cumsum(gain[order])])
            self.n_negative[start] = int((gain[order] < 0).sum())

    def count(self, start: np.ndarray, need: int, room: int) -> np.ndarray:
        """Optimal number of further items (``-1`` where ``need`` items are not available)."""
        avail = self.n_groups - start
        t = np.clip(self.n_negative[start], need, np.minimum(room, avail))
        return np.where(need <= avail, t, -1)

    def value(self, start: np.ndarray, count: np.ndarray) -> np.ndarray:
        """Gain of the ``count`` best groups from ``start`` (``inf`` where infeasible)."""
        return np.where(count >= 0, self.cum[start, np.maximum(count, 0)], math.inf)

    def items(self, start: int, count: int) -> tuple[int, ...]:
        return tuple(int(i) for i in self.best_item[self.order[start][:count]])


class _ItemSearch:
    """Depth-first branch and bound over the set-enumeration tree of items.

    A node is a query ``P`` (sorted items, last item ``i``); its children add
    one item of a later group.  For a node covering the rows ``R(P)``:

    * its value is ``base + sum_{j in P} delta_j + sum_{r in R(P)} w_r``;
    * every descendant ``P' superset P`` covers ``R(P') subset R(P)``, so its
      data term is at least ``sum_{r in R(P)} min(w_r, 0)``, and its added
      items come from the groups after ``i`` with a count the width bounds
      allow, so their separator gain is at least the exact optimum of
      :class:`_SuffixSeparator`.  The sum of the two bounds the subtree;
      :meth:`_coverage_bound` gives a second bound that couples separator
      gain and coverage, and the larger one is used.  Subtrees whose bound
      is not below the incumbent are pruned.
    * a node covering no row has data term zero in its whole subtree, so the
      bound is attained: its best descendant is built directly.

    Children are generated all at once per node: one bincount of the item
    slots of the covered rows gives every child's positive and negative
    covered weight.
    """

    def __init__(self, model: ItemModel, codes: np.ndarray, weights: np.ndarray, base: float, delta: np.ndarray,
                 sizes: Sequence[int], budget: Budget):
        self.model, self.base, self.delta, self.budget = model, base, delta, budget
        self.columns = np.ascontiguousarray(codes.T)
        slot_of = np.full((len(sizes), max(sizes)), model.n_items, dtype=np.int64)
        slot_of[model.attr, model.value] = np.arange(model.n_items)
        #: ``2 * item + [w_r < 0]`` for the item row ``r`` satisfies on each attribute (item ``n_items``: none),
        #: so that one bincount sums the positive and the negative covered weight of every item.
        self.slot = 2 * slot_of[np.arange(len(sizes))[None, :], codes] + (weights < 0)[:, None]
        self.weights = weights
        self.suffix = _SuffixSeparator(model, delta)
        self.best_value, self.best_items = math.inf, None

    def _offer(self, value: float, items: tuple[int, ...]) -> None:
        if value < self.best_value:
            self.best_value, self.best_items = value, tuple(sorted(items))

    def _covered(self, rows: np.ndarray, start: int) -> tuple[np.ndarray, np.ndarray]:
        """Positive and negative weight covered by each item ``>= start`` among ``rows``."""
        slots = self.slot[rows, int(self.model.attr[start]) :]
        sums = bin_sums(slots.reshape(-1), np.repeat(self.weights[rows], slots.shape[1]), 2 * self.model.n_items + 2)
        return sums[2 * start : -2 : 2], sums[2 * start + 1 : -2 : 2]

    def _coverage_bound(self, items: np.ndarray, neg: np.ndarray) -> np.ndarray:
        """For each child ``c = P + j``: a lower bound on ``data + added separator`` over its subtree.

        A descendant ``c + J`` covers only rows that ``P + j`` and every
        ``P + k`` (``k in J``) cover, so its data term is at least
        ``tau = max(neg_j, max_{k in J} neg_k)``; its added separator gain is
        at least the best gain of the groups after ``j`` using only items
        with ``neg_k <= tau``.  Minimising ``tau + gain`` over the sorted
        candidate values of ``tau`` gives the bound (width bounds relaxed).
        """
        groups = self.model.group[items] - self.model.group[items[0]]
        n_groups = int(groups[-1]) + 1
        if len(items) * (n_groups + 1) > COVERAGE_BOUND_CELLS:
            return np.full(len(items), -math.inf)
        order = np.argsort(neg, kind="stable")
        gains = np.zeros((len(items), n_groups + 1))
        gains[np.arange(len(items)), groups[order]] = np.minimum(self.delta[items[order]], 0.0)
        best = np.minimum.accumulate(gains, axis=0)
        after = np.cumsum(best[:, ::-1], axis=1)[:, ::-1]
        total = np.minimum.accumulate((neg[order][:, None] + after)[::-1], axis=0)[::-1]
        rank = np.empty(len(items), dtype=np.int64)
        rank[order] = np.arange(len(items))
        return total[rank, groups + 1]

    def _expand(self, rows: np.ndarray, start: int, width: int, fixed: float, path: tuple[int, ...],
                stack: list) -> None:
        """Offer every child of the node ``path`` and push the ones worth expanding."""
        model, suffix = self.model, self.suffix
        if width >= model.max_width or start >= model.n_items:
            return
        items = np.arange(start, model.n_items)
        pos, neg = self._covered(rows, start)
        nxt = model.group[items] + 1
        count = suffix.count(nxt, max(0, model.min_width - width - 1), model.max_width - width - 1)
        extra = suffix.value(nxt, count)
        child_fixed = self.base + fixed + self.delta[items]
        empty = (pos == 0) & (neg == 0)
        own = np.where(width + 1 >= model.min_width, child_fixed + pos + neg, math.inf)
        offers = np.where(empty, child_fixed + extra, own)
        k = int(np.argmin(offers))
        if offers[k] < self.best_value:
            i = int(items[k])
            tail = suffix.items(int(nxt[k]), int(count[k])) if empty[k] else ()
            self._offer(float(offers[k]), path + (i,) + tail)
        bound = np.maximum(child_fixed + neg + extra, child_fixed + self._coverage_bound(items, neg))
        can_grow = (count >= 0) & (nxt < model.n_groups) & (width + 1 < model.max_width)
        keep = np.flatnonzero(~empty & can_grow & (bound < self.best_value))
        for j in keep[np.argsort(-bound[keep], kind="stable")]:
            stack.append((float(bound[j]), rows, int(items[j]), width + 1, float(child_fixed[j] - self.base),
                          path + (int(items[j]),)))

    def run(self) -> SearchOutcome:
        model = self.model
        rows = np.arange(self.columns.shape[1])
        if model.min_width == 0:
            self._offer(self.base + float(self.weights.sum()), ())
        stack: list = []
        root_bound = self.base + float(np.minimum(self.weights, 0.0).sum()) + float(
            self.suffix.value(np.array([0]), self.suffix.count(np.array([0]), model.min_width, model.max_width))[0])
        node = (root_bound, None, -1, 0, 0.0, ())
        while True:
            bound, parent_rows, item, width, fixed, path = node
            if bound < self.best_value:
                if not self.budget.spend():
                    open_bound = min([bound] + [entry[0] for entry in stack])
                    return SearchOutcome(self._query(), self.best_value, False, min(open_bound, self.best_value),
                                         self.budget.nodes, "branch-and-bound")
                if item >= 0:
                    rows = parent_rows[self.columns[model.attr[item]][parent_rows] == model.value[item]]
                start = 0 if item < 0 else int(np.searchsorted(model.group, model.group[item] + 1))
                self._expand(rows, start, width, fixed, path, stack)
            if not stack:
                break
            node = stack.pop()
        return SearchOutcome(self._query(), self.best_value, True, self.best_value, self.budget.nodes,
                             "branch-and-bound")

    def _query(self):
        return None if self.best_items is None else self.model.build(self.best_items)


def item_search(model: ItemModel, codes: np.ndarray, weights: np.ndarray, base: float, delta: np.ndarray,
                sizes: Sequence[int], budget: Budget) -> SearchOutcome:
    """Exhaustive branch and bound (see :class:`_ItemSearch`)."""
    return _ItemSearch(model, codes, weights, base, delta, sizes, budget).run()


def minimize(query_class: QueryClass, codes: np.ndarray, weights: np.ndarray, eta: np.ndarray,
             budget: Budget, method: str | None = None) -> SearchOutcome:
    """Exact minimum of the query-player objective over a supported base class.

    ``method`` forces ``"tables"`` or ``"branch-and-bound"`` where the class
    allows it (workloads are always tables, since the branch and bound
    searches all widths, not listed sets); by default :func:`use_tables`
    decides.
    """
    model = item_model(query_class)
    if model is None:
        raise TypeError(f"exact search does not support {query_class.name}")
    keep = weights != 0
    codes = np.ascontiguousarray(codes[keep], dtype=np.int64)
    weights = weights[keep].astype(np.float64)
    base, delta = separator_terms(query_class, model, eta)
    sets = attribute_sets(query_class)
    if query_class.listed_cells or (method is None and use_tables(query_class, sets, codes.shape[0])):
        method = "tables"
    if method == "tables" and sets is not None:
        outcome = table_search(model, sets, codes, weights, base, delta, query_class.domain.sizes, budget)
    else:
        outcome = item_search(model, codes, weights, base, delta, query_class.domain.sizes, budget)
    log.debug("PRIVATE, do not publish: exact query search (%s) on %s: %d nodes, value %s, proven %s",
              outcome.method, query_class.name, outcome.nodes, outcome.value, outcome.proven)
    return outcome
