"""Counts of many marginals at once (synthdp.methods.measure.marginal_counts) against one np.bincount each.

The scores of select-measure-estimate read these counts (docs/privacy.md §8.1);
any difference would change which candidate the exponential mechanism sees.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from synthdp.core.domain import Domain
from synthdp.methods.measure import marginal_counts as mc
from synthdp.methods.measure.marginal_counts import marginal_counts


def _bincounts(domain, codes, marginals):
    return [np.bincount(domain.flat_index(codes, r), minlength=domain.cells(r)) for r in marginals]


@pytest.mark.parametrize("seed", range(4))
def test_agrees_with_bincount(seed):
    """Mixed sizes, skewed values, widths 1 to 4 (some past the bit-set limit), any attribute order, repeats."""
    rng = np.random.default_rng(seed)
    d = int(rng.integers(3, 9))
    domain = Domain(tuple(f"a{i}" for i in range(d)), tuple(int(s) for s in rng.integers(2, 7, size=d)))
    n = int(rng.integers(1, 700))  # not a multiple of 64: the padding bits must not count
    codes = np.stack([np.minimum(rng.geometric(0.5, size=n) - 1, s - 1) for s in domain.sizes], axis=1)
    marginals = [c for k in range(1, 5) for c in itertools.combinations(range(d), k)]
    marginals += [tuple(reversed(r)) for r in marginals[:5]] + marginals[:3]
    assert any(domain.cells(r) > mc.MAX_BITSET_CELLS for r in marginals)
    got = marginal_counts(domain, codes, marginals)
    for r, a, b in zip(marginals, got, _bincounts(domain, codes, marginals)):
        assert a.dtype == b.dtype and np.array_equal(a, b), r


def test_binary_sample_of_many_words():
    """The shape the method meets: binary attributes, thousands of records, every 3-way marginal."""
    rng = np.random.default_rng(5)
    domain = Domain(tuple(f"a{i}" for i in range(7)), (2,) * 7)
    codes = (rng.random((5000, 7)) < rng.random(7)).astype(np.int64)
    marginals = list(itertools.combinations(range(7), 3))
    for a, b in zip(marginal_counts(domain, codes, marginals), _bincounts(domain, codes, marginals)):
        assert np.array_equal(a, b)


@pytest.mark.parametrize("max_cells", [1, 30, 200, 10_000])
def test_batches_agree_with_bincount(max_cells, monkeypatch):
    """Counted a batch at a time: every marginal once, in order, with the counts of one np.bincount; no batch
    but a single too-wide marginal holds more than ``max_cells`` cells."""
    rng = np.random.default_rng(7)
    domain = Domain(tuple(f"a{i}" for i in range(6)), (2, 3, 5, 4, 2, 6))
    codes = np.stack([rng.integers(0, s, size=500) for s in domain.sizes], axis=1)
    marginals = [c for k in range(1, 4) for c in itertools.combinations(range(6), k)]
    seen, batches = [], []
    real_counts = mc.marginal_counts

    def spy(domain_, codes_, batch):
        batches.append(list(batch))
        return real_counts(domain_, codes_, batch)

    monkeypatch.setattr(mc, "marginal_counts", spy)
    for r, counts in mc.marginal_counts_in_batches(domain, codes, marginals, max_cells=max_cells):
        seen.append(r)
        assert np.array_equal(counts, _bincounts(domain, codes, [r])[0]), r
    assert seen == marginals
    assert all(len(b) == 1 or sum(domain.cells(r) for r in b) <= max_cells for b in batches)
    assert (len(batches) == len(marginals)) == (max_cells == 1)
