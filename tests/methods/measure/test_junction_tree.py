"""The junction tree (:mod:`synthdp.methods.measure.junction_tree`), checked by brute force on small random graphs.

Each model must hold every measured set in one clique, have exactly the
maximal cliques of its own (chordal) graph, and link them by a maximum-weight
spanning forest with the running-intersection property; the elimination must
follow the greedy rule of docs/privacy.md §8.7 step by step; and where
private-pgm's library is installed, the cliques and their links must be the
ones it builds.
"""

from __future__ import annotations

import itertools
import math
import warnings
from collections import deque

import numpy as np
import pytest

from synthdp.core.domain import Domain
from synthdp.methods.measure.junction_tree import eliminate, junction_cliques, maximal_cliques, spanning_forest


def _random_case(rng: np.random.Generator, d: int) -> tuple[Domain, list[tuple[int, ...]]]:
    """A domain of ``d`` attributes (sizes 1 to 5) and 0 to 2d random sets of 1 to 3 attributes."""
    sizes = tuple(int(s) for s in rng.integers(1, 6, d))
    sets = [tuple(sorted(rng.choice(d, size=int(rng.integers(1, min(d, 3) + 1)), replace=False).tolist()))
            for _ in range(int(rng.integers(0, 2 * d + 1)))]
    return Domain(tuple(f"a{i}" for i in range(d)), sizes), sets


def _cases(count: int, seed: int, dims=range(1, 8)):
    rng = np.random.default_rng(seed)
    for _ in range(count):
        yield _random_case(rng, int(rng.choice(list(dims))))


def _brute_maximal_cliques(d: int, edges: set[frozenset[int]]) -> set[tuple[int, ...]]:
    """The maximal cliques of a graph on ``0..d-1``, by trying every subset of vertices."""
    cliques = [set(s) for k in range(1, d + 1) for s in itertools.combinations(range(d), k)
               if all(frozenset(p) in edges for p in itertools.combinations(s, 2))]
    return {tuple(sorted(c)) for c in cliques if not any(c < other for other in cliques)}


def _edges_within(sets) -> set[frozenset[int]]:
    return {frozenset(p) for s in sets for p in itertools.combinations(s, 2)}


def test_every_set_is_held_the_links_are_a_forest_and_running_intersection_holds():
    for domain, sets in _cases(400, seed=1):
        cliques, parent = junction_cliques(domain, sets)
        d = len(domain)
        assert all(any(set(s) <= set(c) for c in cliques) for s in sets), (sets, cliques)
        assert {a for c in cliques for a in c} == set(range(d))  # every attribute has a clique
        assert parent[0] is None and all(p is None or p < i for i, p in enumerate(parent))  # a forest, parents first
        for a in range(d):  # the cliques holding a are one connected subtree: one fewer links among them
            holding = [i for i, c in enumerate(cliques) if a in c]
            links = [i for i in holding if parent[i] is not None and a in cliques[parent[i]]]
            assert len(links) == len(holding) - 1, (a, cliques, parent)


def test_the_cliques_are_the_maximal_cliques_of_a_triangulation_of_the_graph():
    for domain, sets in _cases(400, seed=2):
        cliques, _ = junction_cliques(domain, sets)
        d = len(domain)
        assert _edges_within(sets) <= _edges_within(cliques)  # the graph is inside the triangulation
        assert set(cliques) == _brute_maximal_cliques(d, _edges_within(cliques))
        assert len(set(cliques)) == len(cliques)


def _naive_order(sizes, sets) -> list[int]:
    """The greedy rule of docs/privacy.md §8.7, step by step from the sets themselves, every cost from scratch."""
    live, order, left = {tuple(s) for s in sets}, [], list(range(len(sizes)))
    while left:
        def cost(a):
            touched = set().union(*[set(c) for c in live if a in c])
            return math.prod(sizes[b] for b in touched)
        best = min(left, key=lambda a: (cost(a), a))
        touched = [c for c in live if best in c]
        live = (live - set(touched)) | {tuple(sorted(set().union(*map(set, touched)) - {best}))}
        order.append(best)
        left.remove(best)
    return order


def test_the_elimination_follows_the_greedy_rule():
    for domain, sets in _cases(400, seed=3):
        steps = eliminate(domain.sizes, sets)
        assert steps.order == _naive_order(domain.sizes, sets), (domain.sizes, sets)


def _triangulated_cells(sizes, sets, order) -> int:
    """Total cells of the maximal cliques of the graph of ``sets`` triangulated by eliminating in ``order``."""
    adjacent = {a: set() for a in range(len(sizes))}
    for s in sets:
        for a, b in itertools.combinations(s, 2):
            adjacent[a].add(b)
            adjacent[b].add(a)
    elimination = []
    for a in order:
        elimination.append({a} | adjacent[a])
        for b in adjacent[a]:
            adjacent[b] |= adjacent[a] - {b}
            adjacent[b].discard(a)
        del adjacent[a]
    maximal = [c for c in elimination if not any(c < other for other in elimination)]
    return sum(math.prod(sizes[a] for a in c) for c in maximal)


def test_the_model_is_within_twice_the_smallest_triangulation():
    """The greedy order is a heuristic; on small graphs its model stays within twice the best of all orders."""
    worst = 1.0
    for domain, sets in _cases(150, seed=4, dims=range(2, 7)):
        cliques, _ = junction_cliques(domain, sets)
        cells = sum(domain.cells(c) for c in cliques)
        best = min(_triangulated_cells(domain.sizes, sets, order)
                   for order in itertools.permutations(range(len(domain))))
        assert best <= cells <= 2 * best, (domain.sizes, sets, cells, best)
        worst = max(worst, cells / best)
    assert worst > 1  # the cases do reach graphs where the greedy order is not the best


def _spanning_trees(k: int):
    """Every spanning tree of the complete graph on ``0..k-1`` (k >= 2), as edge lists, from Pruefer sequences."""
    for code in itertools.product(range(k), repeat=k - 2):
        degree = [1] * k
        for v in code:
            degree[v] += 1
        edges = []
        for v in code:
            leaf = min(i for i in range(k) if degree[i] == 1)
            edges.append((leaf, v))
            degree[leaf] -= 1
            degree[v] -= 1
        edges.append(tuple(i for i in range(k) if degree[i] == 1))
        yield edges


def test_the_cliques_are_linked_by_a_maximum_weight_spanning_forest():
    """Its weight is the best of every spanning tree's (pairs sharing nothing weigh 0), and it links exactly the
    cliques that are connected through shared attributes."""
    checked = 0
    for domain, sets in _cases(300, seed=5):
        cliques = maximal_cliques(domain.sizes, sets)
        if not 2 <= len(cliques) <= 6:
            continue
        weight = lambda edges: sum(len(set(cliques[i]) & set(cliques[j])) for i, j in edges)  # noqa: E731
        forest = spanning_forest(cliques)
        assert all(i < j and set(cliques[i]) & set(cliques[j]) for i, j in forest)
        assert weight(forest) == max(weight(t) for t in _spanning_trees(len(cliques)))
        assert len(forest) == len(cliques) - _parts(cliques)
        checked += 1
    assert checked > 100


def _parts(cliques) -> int:
    """Connected parts of the graph joining every two cliques that share an attribute."""
    part = list(range(len(cliques)))
    for i, j in itertools.combinations(range(len(cliques)), 2):
        if set(cliques[i]) & set(cliques[j]) and part[i] != part[j]:
            old = part[j]
            part = [part[i] if p == old else p for p in part]
    return len(set(part))


def test_small_cases_by_hand():
    domain = Domain(("a", "b", "c", "d"), (2, 3, 4, 5))
    assert junction_cliques(domain, []) == ([(0,), (1,), (2,), (3,)], [None, None, None, None])
    # a tree needs no fill-in: its edges are the cliques
    assert junction_cliques(domain, [(0, 1), (1, 2), (1, 3)]) == ([(0, 1), (1, 2), (1, 3)], [None, 0, 0])
    assert junction_cliques(domain, [(0, 1), (2,)]) == ([(0, 1), (2,), (3,)], [None, None, None])
    # a 4-cycle needs one chord; b goes first (cells b*a*c = 24 against 30, 60 and 40), joining a and c
    cycle = [(0, 1), (1, 2), (2, 3), (0, 3)]
    assert eliminate(domain.sizes, cycle).order == [1, 0, 2, 3]
    assert junction_cliques(domain, cycle) == ([(0, 1, 2), (0, 2, 3)], [None, 0])
    assert junction_cliques(Domain((), ()), []) == ([], [])


def _mbi_junction_cliques(domain: Domain, sets):
    """The cliques and BFS parents the estimator took from private-pgm's library before it had its own tree."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mbi = pytest.importorskip("mbi")
        from mbi import junction_tree
    tree, _ = junction_tree.make_junction_tree(mbi.Domain(tuple(range(len(domain))), domain.sizes),
                                               [tuple(sorted(c)) for c in sets] or [(0,)])
    nodes = sorted(tuple(sorted(c)) for c in tree.nodes)
    order, parent, seen = [], [], set()
    for root in nodes:  # one BFS per tree of its forest
        if root in seen:
            continue
        queue = deque([(root, None)])
        seen.add(root)
        while queue:
            node, up = queue.popleft()
            order.append(node)
            parent.append(up)
            for nb in sorted(tuple(sorted(c)) for c in tree.neighbors(node)):
                if nb not in seen:
                    seen.add(nb)
                    queue.append((nb, len(order) - 1))
    return order, parent


def _random_trees(count: int, seed: int):
    """Domains whose measured pairs form a random spanning tree (no fill-in), with extra sets on some."""
    rng = np.random.default_rng(seed)
    for _ in range(count):
        d = int(rng.integers(2, 30))
        sizes = tuple(int(s) for s in rng.integers(1, 10, d))
        sets = [tuple(sorted((int(rng.integers(0, a)), a))) for a in range(1, d)]
        yield Domain(tuple(f"a{i}" for i in range(d)), sizes), sets + [(int(rng.integers(0, d)),)] * (d % 2)


def test_the_tree_is_private_pgms():
    """Where ``mbi`` is installed: the same cliques, linked the same way, as its ``make_junction_tree``."""
    cases = [*_cases(300, seed=6), *_cases(40, seed=7, dims=range(10, 40)), *_random_trees(60, seed=8)]
    for domain, sets in cases:
        assert junction_cliques(domain, sets) == _mbi_junction_cliques(domain, sets), (domain.sizes, sets)
