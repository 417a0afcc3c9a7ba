"""The junction tree of a set of attribute sets: the cliques of a graphical model (docs/privacy.md §8.7).

Built as private-pgm's library (``mbi`` 2.0's ``make_junction_tree``) builds
it, so that a model has the same cliques, linked the same way, as there:

1. the graph joins every two attributes that share a set; every attribute of
   the domain is a vertex;
2. a graph that is a tree (connected, with an edge) needs no fill-in: its
   cliques are its edges;
3. otherwise attributes are eliminated greedily: the one whose elimination
   clique (itself and its remaining neighbours) has the fewest cells goes
   first, the lowest index on ties, and its neighbours are joined (an
   attribute that no set mentions counts 1, not its size, as there: it is
   isolated, so when it goes changes nothing else); the cliques are the
   maximal elimination cliques (the maximal cliques of the triangulated
   graph);
4. the cliques, as sorted tuples, sorted, are linked by a maximum spanning
   forest of the graph joining every two that share an attribute, weighted by
   separator size: Kruskal, heaviest first, ties to the earlier pair.  A
   maximum-weight spanning tree of the clique graph of a chordal graph has the
   running-intersection property; cliques in different trees share no
   attribute.

The inputs are attribute sets and the public domain sizes: post-processing,
no privacy cost.  Cell counts are Python integers, so exact at any size.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Sequence

from synthdp.core.domain import Domain

Clique = tuple[int, ...]


@dataclass(frozen=True)
class Elimination:
    """A greedy elimination (step 3): the attributes in the order they go, and each one's neighbours left then."""

    order: list[int]
    later: list[frozenset[int]]


def _neighbours(d: int, cliques: Sequence[Clique]) -> list[set[int]]:
    """Each attribute's neighbours in the graph of ``cliques`` on ``0..d-1`` (step 1)."""
    out: list[set[int]] = [set() for _ in range(d)]
    for clique in cliques:
        for a in clique:
            out[a].update(b for b in clique if b != a)
    return out


def eliminate(sizes: Sequence[int], cliques: Sequence[Clique]) -> Elimination:
    """The greedy elimination of the attributes ``0..len(sizes)-1`` in the graph of ``cliques`` (step 3).

    Only the eliminated attribute's neighbours change cost, so only theirs are recomputed.
    """
    neighbours = _neighbours(len(sizes), cliques)
    mentioned = {a for clique in cliques for a in clique}

    def cost(a: int) -> int:
        return sizes[a] * math.prod(sizes[b] for b in neighbours[a]) if a in mentioned else 1

    costs = {a: cost(a) for a in range(len(sizes))}
    order, later = [], []
    while costs:
        best = min(costs, key=lambda a: (costs[a], a))
        del costs[best]
        joined = neighbours[best]
        order.append(best)
        later.append(frozenset(joined))
        for b in joined:
            neighbours[b].discard(best)
            neighbours[b].update(c for c in joined if c != b)
            costs[b] = cost(b)
    return Elimination(order, later)


def maximal_cliques(sizes: Sequence[int], cliques: Sequence[Clique]) -> list[Clique]:
    """The cliques of the model of ``cliques`` (steps 1 to 3), as sorted tuples, sorted.

    The elimination clique of an attribute is itself with its neighbours left when it goes.  One inside another
    equals the neighbours left by an attribute eliminated before it, and belongs to their earliest-eliminated one
    (Fulkerson and Gross 1965): one look per attribute.
    """
    neighbours = _neighbours(len(sizes), cliques)
    edges = sorted((a, b) for a in range(len(sizes)) for b in neighbours[a] if a < b)
    if edges and len(edges) == len(sizes) - 1 and _connected(neighbours):
        return edges
    steps = eliminate(sizes, cliques)
    position = {a: step for step, a in enumerate(steps.order)}
    maximal = [True] * len(steps.order)
    for rest in steps.later:
        if rest:
            first = position[min(rest, key=position.__getitem__)]
            if len(steps.later[first]) + 1 == len(rest):  # its clique holds rest and is no larger: it is rest
                maximal[first] = False
    return sorted(tuple(sorted(rest | {a})) for a, rest, keep in zip(steps.order, steps.later, maximal) if keep)


def _connected(neighbours: list[set[int]]) -> bool:
    """Whether the graph with these neighbour sets (at least one vertex) is connected."""
    seen, stack = {0}, [0]
    while stack:
        for b in neighbours[stack.pop()] - seen:
            seen.add(b)
            stack.append(b)
    return len(seen) == len(neighbours)


def spanning_forest(cliques: Sequence[Clique]) -> list[tuple[int, int]]:
    """The edges ``(i, j)``, ``i < j``, of a maximum spanning forest of ``cliques`` weighted by separator size
    (step 4): Kruskal over the pairs that share an attribute, heaviest first and, among equal weights, in the
    order ``(0, 1), (0, 2), ..., (1, 2), ...``."""
    weight = {}
    for i in range(len(cliques)):
        for j in range(i + 1, len(cliques)):
            shared = len(set(cliques[i]) & set(cliques[j]))
            if shared:
                weight[i, j] = shared
    root = list(range(len(cliques)))

    def find(i: int) -> int:
        while root[i] != i:
            root[i] = root[root[i]]
            i = root[i]
        return i

    edges = []
    for i, j in sorted(weight, key=lambda pair: -weight[pair]):  # a stable sort: ties keep the pair order
        ri, rj = find(i), find(j)
        if ri != rj:
            root[rj] = ri
            edges.append((i, j))
    return edges


def junction_cliques(domain: Domain, cliques: Sequence[Clique]) -> tuple[list[Clique], list[int | None]]:
    """Maximal cliques of a junction tree of ``cliques`` and each one's parent (None for the roots), in BFS order.

    One BFS per tree of the forest, from its first clique in sorted order, each clique's neighbours visited in
    sorted order: the order is a function of the forest alone.
    """
    nodes = maximal_cliques(domain.sizes, [tuple(sorted(c)) for c in cliques])
    adjacent: list[list[int]] = [[] for _ in nodes]
    for i, j in spanning_forest(nodes):
        adjacent[i].append(j)
        adjacent[j].append(i)
    order: list[Clique] = []
    parent: list[int | None] = []
    seen: set[int] = set()
    for root in range(len(nodes)):
        if root in seen:
            continue
        seen.add(root)
        queue = deque([(root, None)])
        while queue:
            node, up = queue.popleft()
            order.append(nodes[node])
            parent.append(up)
            for nb in sorted(adjacent[node]):  # the nodes are sorted, so by index is by clique
                if nb not in seen:
                    seen.add(nb)
                    queue.append((nb, len(order) - 1))
    return order, parent
