"""Wide tables: the spanning step, the public round schedule and the candidate pool (docs/privacy.md §8.9).

On a wide table, AIM-style rounds that add one marginal at a time need
about ``8 d`` rounds, each scoring every candidate against a refitted model.
Here, in the manner of MST (McKenna, Miklau and Sheldon 2021), a first step
picks a spanning tree of 2-way marginals with ``d - 1`` exponential
mechanisms (Kruskal's rule over the pairs joining two components), scored
once against the model of the 1-way marginals; the adaptive rounds that
follow are capped at ``ceil(c sqrt(d))``, and a round with more candidates
than a public pool size scores a fresh uniform draw of them.

Every choice here is a function of ``d``, the domain, the public options,
the transcript and the public generator; the private steps are the
exponential mechanism and the Gaussian measurements of §8.2, charged
before they run.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import Sequence

import numpy as np

from synthdp.mechanisms.randomness import PrivateRandom
from synthdp.mechanisms.selection import exponential_mechanism
from synthdp.methods.measure.estimators import GraphicalModel

Marginal = tuple[int, ...]


def uses_spanning_step(d: int, candidates: Sequence[Marginal], spanning_from: int) -> bool:
    """Whether the spanning step runs: at least ``spanning_from`` attributes and some 2-way candidate (§8.9)."""
    return d >= spanning_from and any(len(r) == 2 for r in candidates)


def adaptive_rounds(d: int, rounds_per_sqrt_attribute: int) -> int:
    """The public round cap after the spanning step: ``ceil(c sqrt(d))`` (§8.9)."""
    return max(1, math.ceil(rounds_per_sqrt_attribute * math.sqrt(d)))


def independent_counts(model: GraphicalModel, pair: Marginal) -> np.ndarray:
    """A model of 1-way cliques' counts on ``pair`` (flattened): the outer product of its two 1-way counts."""
    a, b = pair
    return np.outer(model.counts((a,)), model.counts((b,))).reshape(-1) / model.total


def pair_scores(pairs: Sequence[Marginal], answers: dict[Marginal, np.ndarray], model: GraphicalModel,
                noise_per_cell: float) -> np.ndarray:
    """Integer scores ``sum |r(D) - round(r(p))| - round(noise_per_cell cells_r)`` of each pair (weight 1, §8.9).

    ``noise_per_cell``: the expected absolute noise of one cell of the pairs' measurement (AIM's offset).
    """
    out = np.empty(len(pairs), dtype=np.int64)
    for i, r in enumerate(pairs):
        fitted = np.rint(independent_counts(model, r)).astype(np.int64)
        out[i] = int(np.abs(answers[r] - fitted).sum()) - round(noise_per_cell * answers[r].size)
    return out


def spanning_pairs(pairs: Sequence[Marginal], scores: np.ndarray, d: int, *, epsilon: Fraction, sensitivity: int,
                   ledger, relation: str, rng: PrivateRandom) -> list[Marginal]:
    """Pick up to ``d - 1`` pairs by Kruskal's rule, each with the exponential mechanism at ``epsilon`` (§8.9 step 1).

    Each pick runs over the pairs joining two different components of the
    pairs picked so far (a function of earlier outputs only); ``epsilon`` is
    the largest whose cost (``eps**2/8`` zCDP, or ``eps`` pure, §10.2) is at
    most the selection's third of the spanning share over ``d - 1``.
    ``ledger`` is charged every pick before it is drawn.
    """
    left = np.array([r[0] for r in pairs], dtype=np.int64)
    right = np.array([r[1] for r in pairs], dtype=np.int64)
    component = np.arange(d)
    picked: list[Marginal] = []
    for _ in range(d - 1):
        open_ = np.flatnonzero(component[left] != component[right])
        if open_.size == 0:  # the candidate pairs do not connect every attribute
            break
        j = open_[exponential_mechanism(scores[open_], epsilon=epsilon, sensitivity=sensitivity, rng=rng,
                                        ledger=ledger, relation=relation,
                                        label=f"spanning pick {len(picked) + 1}")]
        picked.append(pairs[j])
        component[component == component[right[j]]] = component[left[j]]
    return picked


def candidate_pool(candidates: list[Marginal], size: int, generator: np.random.Generator) -> list[Marginal]:
    """All candidates, or ``size`` of them drawn uniformly without replacement with the public generator (§8.9)."""
    if len(candidates) <= size:
        return candidates
    keep = np.sort(generator.choice(len(candidates), size=size, replace=False))
    return [candidates[i] for i in keep]


def unheld(model: GraphicalModel, candidates: Sequence[Marginal]) -> np.ndarray:
    """Which candidates no model clique holds (one boolean per candidate), for all at once.

    The same answer as ``model.holder(r) is None``: a membership table of
    attributes in cliques, ANDed over each candidate's attributes.
    """
    if not candidates:
        return np.zeros(0, dtype=bool)
    d, k = len(model.domain), len(model.cliques)
    member = np.zeros((d + 1, k), dtype=bool)
    for j, c in enumerate(model.cliques):
        member[list(c), j] = True
    member[d] = True  # padding: every clique "holds" no attribute
    width = max(len(r) for r in candidates)
    attrs = np.full((len(candidates), width), d, dtype=np.int64)
    for i, r in enumerate(candidates):
        attrs[i, : len(r)] = r
    held = np.ones((len(candidates), k), dtype=bool)
    for j in range(width):
        held &= member[attrs[:, j]]
    return ~held.any(axis=1)
