"""Pairs of numeric columns the Gaussian copula leaves out, drawn again from their released tables (§8.12 step 6).

The copula of :mod:`~synthdp.methods.measure.copula` draws columns whose
relation is monotone and strong.  A pair can be related in a way no copula
describes -- an arrival delay is the departure delay give or take the
flight: a sum with a point mass near zero, not a copula -- and still be held
by no model clique, when the rounds picked other pairs and the covering step
read this one inside triples.  The support drawn from the model then holds
the pair independent, and the reweighting, which only moves weight between
the records drawn, cannot put records on the diagonal.  Here:

1. :func:`departure` measures how far a pair's released table on its groups
   (:func:`~synthdp.methods.measure.copula.pair_tables`) is from the support
   draws' own table (:func:`group_table`), less the noise's expected part;
2. :func:`linked_pairs` takes the pairs that depart by at least a public share
   into a forest, strongest first;
3. :func:`redraw_pairs` draws each tree's columns again, outward from one
   column of it kept in each record, each group from the released table's row
   at its neighbour's group and its cell by the model's one-way counts.

A pair the draws already hold departs little and is left alone.  Everything
reads released counts, draws from the fitted model, the public groups and the
public generator: post-processing (docs/privacy.md §8.12).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from synthdp.core.domain import Domain

log = logging.getLogger(__name__)

#: A pair's released table, summed to the pair's ordered groups, and the noise variance of each of its cells.
PairTable = tuple[np.ndarray, float]


def departure(table: np.ndarray, variance: float, drawn: np.ndarray, held: np.ndarray | None = None) -> float:
    """How far released counts ``table`` on two columns' groups are from the ``drawn`` counts on the same groups
    scaled to the table's total: half their L1 distance, less the half L1 norm the noise is expected to add (cells of
    variance ``variance``), over the total (its negative cells read as 0); 0 for an empty table.  ``held``: the
    cells read (:func:`on_support`; None: all), the others left out of both tables and of the noise's part."""
    if held is not None:
        table, drawn = np.asarray(table)[held], np.asarray(drawn)[held]
    table = np.asarray(table, dtype=float)
    total = float(np.clip(table, 0.0, None).sum())
    if total <= 0:
        return 0.0
    drawn = np.asarray(drawn, dtype=float)
    expected = drawn * (total / drawn.sum()) if drawn.sum() > 0 else np.full(table.shape, total / table.size)
    noise = 0.5 * table.size * math.sqrt(2.0 * variance / math.pi)
    return max(0.0, 0.5 * float(np.abs(table - expected).sum()) - noise) / total


def on_support(table: np.ndarray, a: int, b: int, maps: dict[int, np.ndarray], one_way: dict[int, np.ndarray],
               domain: Domain) -> np.ndarray:
    """Which cells of a released ``table`` on ``a``'s groups by ``b``'s lie where the fitted model has mass: both
    groups hold some of their column's model counts (``one_way``, negative counts read as 0).  A group the model
    holds empty (every cell of it a structural zero, such as a tail the estimator cut as empty, §8.7) can hold no
    support record: its noisy readings say nothing about how the pair relates, and drawn from, they would put
    records in cells the model and the fit hold empty, spread alike over its cells."""
    held = []
    for c in (a, b):
        groups = maps[c][:domain.ordered[c]]
        mass = np.bincount(groups, weights=np.clip(np.asarray(one_way[c][:domain.ordered[c]], dtype=float), 0.0, None),
                           minlength=int(groups.max()) + 1)
        held.append(mass > 0)
    return held[0][:, None] & held[1][None, :] & np.ones(np.shape(table), dtype=bool)


def group_table(codes: np.ndarray, a: int, b: int, maps: dict[int, np.ndarray], domain: Domain) -> np.ndarray:
    """How many of ``codes`` fall in each pair of ``a``'s and ``b``'s ordered groups (a missing value not counted)."""
    present = (codes[:, a] < domain.ordered[a]) & (codes[:, b] < domain.ordered[b])
    shape = tuple(int(maps[c][:domain.ordered[c]].max()) + 1 for c in (a, b))
    flat = maps[a][codes[present, a]] * shape[1] + maps[b][codes[present, b]]
    return np.bincount(flat, minlength=shape[0] * shape[1]).reshape(shape).astype(float)


@dataclass(frozen=True)
class PairLinks:
    """A forest of pairs ``edges`` ``(a, b)`` drawn from their released tables, each with ``tables[k]``: its counts
    on ``a``'s groups by ``b``'s, negative counts read as 0."""

    edges: tuple[tuple[int, int], ...]
    tables: tuple[np.ndarray, ...]


def linked_pairs(tables: dict[tuple[int, int], PairTable], drawn: dict[tuple[int, int], np.ndarray], *,
                 departure_from: float, held: dict[tuple[int, int], np.ndarray] | None = None) -> PairLinks:
    """The forest of the pairs whose released table departs from the ``drawn`` table by at least
    ``departure_from`` (:func:`departure`, on the cells ``held`` says the model holds: :func:`on_support`; None:
    all), taken strongest first; a pair that would join two columns already joined is skipped (Kruskal's rule), so
    no column is drawn from two tables at once."""
    held = held or {}
    scored = sorted(((departure(t, v, drawn[pair], held=held.get(pair)), pair) for pair, (t, v) in tables.items()),
                    reverse=True)
    parent: dict[int, int] = {}

    def root(a: int) -> int:
        while parent.get(a, a) != a:
            a = parent[a]
        return a

    edges = []
    for score, (a, b) in scored:
        if score < departure_from:
            break
        if root(a) != root(b):
            parent[root(a)] = root(b)
            edges.append((a, b))
    log.debug("pairs drawn from their tables: %s (departures %s)", edges,
              [(pair, round(score, 3)) for score, pair in scored[:10]])
    return PairLinks(tuple(edges), tuple(np.clip(tables[e][0], 0.0, None) for e in edges))


def _groups_given(table: np.ndarray, given: np.ndarray, generator: np.random.Generator) -> np.ndarray:
    """For each entry of ``given`` (a row of ``table``), a column drawn with probabilities proportional to that row,
    or to the column sums when the row has no mass (uniform when the table has none)."""
    sums = table.sum(axis=0)
    fallback = sums if sums.sum() > 0 else np.ones(table.shape[1])
    rows = np.where(table.sum(axis=1, keepdims=True) > 0, table, fallback[None, :])
    cumulative = np.cumsum(rows, axis=1)
    cumulative /= cumulative[:, -1:]
    u = generator.random(len(given))
    return np.minimum((u[:, None] >= cumulative[given]).sum(axis=1), table.shape[1] - 1)


def _cells_in_groups(groups: np.ndarray, group_map: np.ndarray, one_way: np.ndarray,
                     generator: np.random.Generator) -> np.ndarray:
    """A cell inside each of ``groups`` (runs of consecutive ordered cells, ``group_map``), drawn by the one-way
    counts (negative counts read as 0; a group without mass: its cells alike)."""
    weights = np.clip(np.asarray(one_way, dtype=float), 0.0, None)
    ids = np.arange(int(group_map.max()) + 1)
    starts, ends = np.searchsorted(group_map, ids, side="left"), np.searchsorted(group_map, ids, side="right")
    weights = np.where(np.add.reduceat(weights, starts)[group_map] > 0, weights, 1.0)
    cumulative = np.concatenate([[0.0], np.cumsum(weights)])
    low, high = cumulative[starts[groups]], cumulative[ends[groups]]
    cells = np.searchsorted(cumulative, low + generator.random(len(groups)) * (high - low), side="right") - 1
    return np.clip(cells, starts[groups], ends[groups] - 1)


def _trees(links: PairLinks) -> list[tuple[list[int], dict[int, list[tuple[int, np.ndarray]]]]]:
    """Each tree of ``links``: its columns, and each column's neighbours with the table read from its side."""
    neighbours: dict[int, list[tuple[int, np.ndarray]]] = {}
    for (a, b), table in zip(links.edges, links.tables):
        neighbours.setdefault(a, []).append((b, table))
        neighbours.setdefault(b, []).append((a, table.T))
    trees, seen = [], set()
    for start in sorted(neighbours):
        if start in seen:
            continue
        columns, frontier = [start], [start]
        while frontier:
            for b, _ in neighbours[frontier.pop()]:
                if b not in columns:
                    columns.append(b)
                    frontier.append(b)
        seen.update(columns)
        trees.append((columns, neighbours))
    return trees


def redraw_pairs(codes: np.ndarray, *, tables: dict[tuple[int, int], PairTable], maps: dict[int, np.ndarray],
                 one_way: dict[int, np.ndarray], domain: Domain, departure_from: float,
                 generator: np.random.Generator) -> np.ndarray:
    """``codes`` with the pairs of :func:`linked_pairs` (against ``codes``' own tables) drawn again from their
    released ``tables``.

    For each tree, each record keeps its cell of one of the tree's columns,
    drawn uniformly (its *anchor*); outward from the anchor, each next
    column's group is drawn from the released table's row at its neighbour's
    group, and its cell inside the group by ``one_way`` (the model's counts).
    A record missing either value of a pair keeps both as drawn; every other
    attribute is kept.
    """
    held = {(a, b): on_support(t, a, b, maps, one_way, domain) for (a, b), (t, _) in tables.items()}
    drawn = {(a, b): group_table(codes, a, b, maps, domain) for a, b in tables}
    links = linked_pairs({pair: (np.where(held[pair], t, 0.0), v) for pair, (t, v) in tables.items()}, drawn,
                         departure_from=departure_from, held=held)
    if links.edges:
        log.info("the support draws %s from their released tables",
                 ", ".join(f"{domain.names[a]} and {domain.names[b]}" for a, b in links.edges))
    codes = codes.copy()
    for columns, neighbours in _trees(links):
        anchors = generator.integers(0, len(columns), len(codes))
        for i, anchor in enumerate(columns):
            rows, order, done = np.flatnonzero(anchors == i), [anchor], {anchor}
            while order:
                a = order.pop(0)
                for b, table in neighbours[a]:
                    if b in done:
                        continue
                    done.add(b)
                    order.append(b)
                    both = rows[(codes[rows, a] < domain.ordered[a]) & (codes[rows, b] < domain.ordered[b])]
                    groups = _groups_given(table, maps[a][codes[both, a]], generator)
                    codes[both, b] = _cells_in_groups(groups, maps[b][:domain.ordered[b]],
                                                      one_way[b][:domain.ordered[b]], generator)
    return codes


def pair_candidates(tables: dict[tuple[int, int], PairTable], copula_columns: Sequence[int]
                    ) -> dict[tuple[int, int], PairTable]:
    """The pairs :func:`redraw_pairs` may draw: those with no column the Gaussian copula draws."""
    return {pair: t for pair, t in tables.items() if not set(pair) & set(copula_columns)}
