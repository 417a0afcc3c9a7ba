"""The batched model size (synthdp.methods.measure.model_size) against the junction tree's own count.

Select-measure-estimate filters its candidates by the size of the model that
would hold them (docs/privacy.md §8.4); the batched computation must give
exactly :func:`synthdp.methods.measure.estimators.model_cells`, or the candidate set
-- and so the release -- would change.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from synthdp.core.domain import Domain
from synthdp.methods.measure import model_size
from synthdp.methods.measure.estimators import junction_cliques, model_cells
from synthdp.methods.measure.model_size import model_cells_with


def _domain(sizes) -> Domain:
    return Domain(tuple(f"a{i}" for i in range(len(sizes))), tuple(int(s) for s in sizes))


def _random_cliques(rng: np.random.Generator, d: int) -> list[tuple[int, ...]]:
    out = []
    for _ in range(rng.integers(0, 2 * d)):
        width = int(rng.integers(1, min(d, 4) + 1))
        out.append(tuple(sorted(rng.choice(d, size=width, replace=False).tolist())))
    return out


def _candidates(d: int, width: int = 3) -> list[tuple[int, ...]]:
    return [c for k in range(1, min(d, width) + 1) for c in itertools.combinations(range(d), k)]


@pytest.mark.parametrize("seed", range(6))
def test_agrees_with_junction_tree_on_random_clique_sets(seed):
    """Random domains (mixed sizes, ties in cost), random clique sets, every candidate up to 3 attributes."""
    rng = np.random.default_rng(seed)
    checked = 0
    for _ in range(40):
        d = int(rng.integers(1, 9))
        sizes = [rng.integers(2, 4, size=d), rng.integers(2, 10, size=d), np.full(d, 2)][rng.integers(3)]
        domain = _domain(sizes)
        cliques = _random_cliques(rng, d)
        candidates = _candidates(d)
        assert model_cells_with(domain, cliques, candidates) == [model_cells(domain, cliques + [r]) for r in candidates]
        checked += len(candidates)
    assert checked > 500


def test_agrees_on_model_cliques():
    """As measure() calls it: the model's own junction-tree cliques (a chordal graph) plus one candidate."""
    rng = np.random.default_rng(7)
    for _ in range(30):
        d = int(rng.integers(4, 13))
        domain = _domain(rng.integers(2, 5, size=d))
        cliques = junction_cliques(domain, _random_cliques(rng, d))[0]
        candidates = _candidates(d)
        assert model_cells_with(domain, cliques, candidates) == [model_cells(domain, cliques + [r]) for r in candidates]


def test_trees_forests_and_empty_graphs():
    """The tree special case (no fill-in), a forest that is not a tree, no edges, and a single attribute."""
    path = [(0, 1), (1, 2), (2, 3)]
    for sizes, cliques, candidates in [
        ((5, 2, 7, 3), path, [(0,), (3,), (0, 3), (1, 2)]),          # trees with and without the candidate's edge
        ((4, 4, 2, 2), [(0, 1), (2, 3)], [(1,), (1, 2), (0, 3)]),    # a forest; joined into a path by (1, 2)
        ((20, 3, 3, 3, 20), path + [(3, 4)], [(0,), (2,), (1, 3)]),  # a tree whose greedy order would fill in
        ((3, 2, 2), [], [(0,), (1, 2), (0, 1, 2)]),                   # only the candidate
        ((6,), [(0,)], [(0,)]),
    ]:
        domain = _domain(sizes)
        assert model_cells_with(domain, cliques, candidates) == [model_cells(domain, cliques + [r]) for r in candidates]
    assert model_cells_with(_domain((2, 2)), [(0, 1)], []) == []


def test_more_attributes_than_one_mask_word():
    """Domains wider than one int64 word of bits (and of more cells than int64 holds) give the same numbers."""
    rng = np.random.default_rng(3)
    for d in (63, 70, 130):
        domain = _domain(rng.integers(2, 6, size=d))
        tree = [(int(rng.integers(0, j)), j) for j in range(1, d)]
        extra = [tuple(sorted(rng.choice(d, size=3, replace=False).tolist())) for _ in range(4)]
        candidates = [tuple(sorted(rng.choice(d, size=k, replace=False).tolist()))
                      for k in (1, 2, 2, 3) for _ in range(3)]
        for cliques in (tree, tree + extra, extra):
            assert model_cells_with(domain, cliques, candidates) == [model_cells(domain, cliques + [r])
                                                                     for r in candidates]


def test_sizes_saturate():
    """A model of 2**62 cells or more is reported as SATURATED (it is over any cap), never as a wrapped number."""
    domain = _domain([1000] * 8)
    below, above = [tuple(range(6))], [tuple(range(7))]
    assert model_cells_with(domain, below, [(0,), (5, 6)]) == [model_cells(domain, below + [r]) for r in [(0,), (5, 6)]]
    assert model_cells(domain, above + [(7,)]) > model_size.SATURATED
    assert model_cells_with(domain, above, [(7,), (6, 7)]) == [model_size.SATURATED] * 2
