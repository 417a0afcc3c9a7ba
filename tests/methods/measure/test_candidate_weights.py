"""Candidate weights of select-measure-estimate against ``w_r = sum_m |r & m|`` (docs/privacy.md §8.1).

The weights scale the exponential mechanism's scores and its sensitivity
(§8.3), so the counting shortcut in ``candidate_weights`` must give exactly
the brute-force sums, over exactly the closure of the workload.
"""

from __future__ import annotations

import itertools

import numpy as np

from synthdp.methods.measure.measurements import candidate_weights


def test_weights_and_closure_match_the_definition():
    rng = np.random.default_rng(3)
    for _ in range(200):
        d = int(rng.integers(1, 9))
        workload = [tuple(sorted(rng.choice(d, size=int(rng.integers(1, min(d, 4) + 1)), replace=False).tolist()))
                    for _ in range(int(rng.integers(1, 12)))]
        closure = {s for m in workload for k in range(1, len(m) + 1) for s in itertools.combinations(m, k)}
        weights = candidate_weights(workload)
        assert list(weights) == sorted(closure, key=lambda s: (len(s), s))
        assert weights == {r: sum(len(set(r) & set(m)) for m in workload) for r in closure}
