"""The brute-force data player's batched, cached path agrees with the native exact search."""

from __future__ import annotations

import numpy as np
import pytest

from synthdp.oracles import get_oracle
from synthdp.oracles.base import DataInstance
from synthdp.queries.complement import ComplementClosed
from synthdp.queries.conjunctions import Conjunctions
from synthdp.core.domain import Domain


@pytest.mark.parametrize("sizes", [(2, 2, 2, 2), (3, 2, 4), (5, 1, 3)])
def test_batched_brute_data_player_matches_exact(sizes):
    rng = np.random.default_rng(sum(sizes))
    qc = ComplementClosed(Conjunctions(Domain(tuple("abcd"[: len(sizes)]), sizes), max_width=2))
    queries_all = qc.enumerate()
    brute, exact = get_oracle("brute"), get_oracle("exact")
    for _ in range(30):  # the same oracle object across calls: its caches must not go stale
        picks = rng.choice(len(queries_all), rng.integers(0, 8), replace=False)
        queries = [queries_all[i] for i in picks]
        weights = rng.integers(-5, 6, len(queries))
        rho = rng.integers(-4, 5, (6, len(qc.dual_separator())))
        batched = brute.solve_data_many(qc, queries, weights, rho)
        for row, res in zip(rho, batched):
            inst = DataInstance.build(qc, queries, weights, row)
            ref = exact.solve_data(inst)
            assert res.proven and ref.proven
            assert res.objective == ref.objective == inst.objective(res.solution)
